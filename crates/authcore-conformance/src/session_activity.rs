//! [`SessionActivityStore`](authcore::adapter::SessionActivityStore): a user's sessions with
//! their recorded use.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter>(adapter: &A) {
    session_activity(adapter).await;
}

/// `record_session_activity` records a session's first and last use and user agent,
/// `list_sessions_by_user_id` lists them (the user's only), `delete_sessions_by_user_id`
/// deletes the user's sessions but the one kept; authcore extensions, skipped when
/// unsupported.
pub async fn session_activity<A: Adapter>(adapter: &A) {
    const CHECK: &str = "session_activity";
    let Some(store) = capability(
        adapter.capabilities().session_activity,
        CHECK,
        "SessionActivityStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "session-activity").await;
    let other = new_user(adapter, CHECK, "session-activity-other").await;
    let session = |u: &AdapterUser| AdapterSession {
        session_token: random_id(),
        user_id: u.id.clone(),
        expires: instant(3600),
    };
    let mut mine = [session(&user), session(&user)];
    mine.sort_by(|a, b| a.session_token.cmp(&b.session_token));
    let theirs = session(&other);
    for s in mine.iter().chain([&theirs]) {
        ok(
            CHECK,
            "create_session",
            adapter.create_session(s.clone()).await,
        );
    }
    let (first, later) = (instant(-60), instant(0));
    let token = &mine[0].session_token;
    ok(
        CHECK,
        "record_session_activity",
        store
            .record_session_activity(token, first, Some("Agent/1"))
            .await,
    );
    ok(
        CHECK,
        "record_session_activity again",
        store.record_session_activity(token, later, None).await,
    );
    let listed = ok(
        CHECK,
        "list_sessions_by_user_id",
        store.list_sessions_by_user_id(&user.id).await,
    );
    let want = vec![
        SessionActivity {
            session: mine[0].clone(),
            created_at: Some(first),
            last_seen_at: Some(later),
            user_agent: Some("Agent/1".to_owned()),
        },
        SessionActivity {
            session: mine[1].clone(),
            created_at: None,
            last_seen_at: None,
            user_agent: None,
        },
    ];
    eq(
        CHECK,
        "the user's sessions with their activity",
        &listed,
        &want,
    );
    let deleted = ok(
        CHECK,
        "delete_sessions_by_user_id (keeping one)",
        store
            .delete_sessions_by_user_id(&user.id, Some(token))
            .await,
    );
    eq(CHECK, "sessions deleted but the one kept", &deleted, &1);
    some(
        CHECK,
        "the kept session",
        adapter.get_session_and_user(token).await,
    );
    none(
        CHECK,
        "a deleted session",
        adapter.get_session_and_user(&mine[1].session_token).await,
    );
    some(
        CHECK,
        "another user's session",
        adapter.get_session_and_user(&theirs.session_token).await,
    );
    let deleted = ok(
        CHECK,
        "delete_sessions_by_user_id (all)",
        store.delete_sessions_by_user_id(&user.id, None).await,
    );
    eq(CHECK, "the last session deleted", &deleted, &1);
    let listed = ok(
        CHECK,
        "list_sessions_by_user_id",
        store.list_sessions_by_user_id(&user.id).await,
    );
    eq(CHECK, "no sessions left", &listed, &Vec::new());
}
