//! [`UpstreamSessionStore`](authcore::adapter::UpstreamSessionStore): the sessions each
//! upstream provider session signed in.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    upstream_sessions(adapter).await;
    upstream_session_race(adapter, options).await;
}

/// `record_upstream_session` / `take_upstream_sessions`: a take answers the unexpired
/// records of one provider session (database and JWT sessions, of that provider and `sid`
/// only, expiry to the second) and removes them; a second take finds nothing.
pub async fn upstream_sessions<A: Adapter>(adapter: &A) {
    const CHECK: &str = "upstream_sessions";
    let Some(store) = capability(
        adapter.capabilities().upstream_sessions,
        CHECK,
        "UpstreamSessionStore",
    ) else {
        return;
    };
    let (u, v) = (
        new_user(adapter, CHECK, "upstream-u").await,
        new_user(adapter, CHECK, "upstream-v").await,
    );
    let (sid, other_sid) = (random_id(), random_id());
    let record = |provider: &str, sid: &str, user: &AdapterUser, token: Option<&str>, secs| {
        UpstreamSession {
            provider: provider.to_owned(),
            sid: sid.to_owned(),
            user_id: user.id.clone(),
            session_token: token.map(str::to_owned),
            expires: instant(secs),
        }
    };
    let database = record("oidc", &sid, &u, Some(&random_id()), 3600);
    let jwt = record("oidc", &sid, &u, None, 7200);
    for r in [
        &database,
        &jwt,
        &record("oidc", &sid, &u, Some(&random_id()), -5),
        &record("oidc", &other_sid, &u, Some(&random_id()), 3600),
        &record("other", &sid, &v, Some(&random_id()), 3600),
    ] {
        ok(
            CHECK,
            "record_upstream_session",
            store.record_upstream_session(r).await,
        );
    }
    let now = OffsetDateTime::now_utc();
    let mut taken = ok(
        CHECK,
        "take_upstream_sessions",
        store.take_upstream_sessions("oidc", &sid, now).await,
    );
    taken.sort_by_key(|r| r.session_token.is_none());
    if taken.len() != 2 {
        fail(
            CHECK,
            format_args!(
                "took {} records of the sid, expected the 2 unexpired: {taken:?}",
                taken.len()
            ),
        );
    }
    for (got, want) in taken.iter().zip([&database, &jwt]) {
        if (&got.provider, &got.sid, &got.user_id, &got.session_token)
            != (
                &want.provider,
                &want.sid,
                &want.user_id,
                &want.session_token,
            )
        {
            fail(CHECK, format_args!("took {got:?}, expected {want:?}"));
        }
        same_second(CHECK, "expires", got.expires, want.expires);
    }
    let again = ok(
        CHECK,
        "take_upstream_sessions again",
        store.take_upstream_sessions("oidc", &sid, now).await,
    );
    if !again.is_empty() {
        fail(CHECK, format_args!("a second take found {again:?}"));
    }
    for (provider, sid, user) in [("oidc", &other_sid, &u), ("other", &sid, &v)] {
        let left = ok(
            CHECK,
            "take_upstream_sessions",
            store.take_upstream_sessions(provider, sid, now).await,
        );
        if left.len() != 1 || left[0].user_id != user.id {
            fail(
                CHECK,
                format_args!("another provider session's records were touched: {left:?}"),
            );
        }
    }
    let none = ok(
        CHECK,
        "take_upstream_sessions of an unknown sid",
        store
            .take_upstream_sessions("oidc", &random_id(), now)
            .await,
    );
    if !none.is_empty() {
        fail(CHECK, format_args!("an unknown sid gave {none:?}"));
    }
}

/// Concurrent takes of one provider session's records: each record goes to one take.
pub async fn upstream_session_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "upstream_session_race";
    let Some(store) = capability(
        adapter.capabilities().upstream_sessions,
        CHECK,
        "UpstreamSessionStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "upstream-race").await;
    for round in 0..options.race_rounds.max(1) {
        let sid = random_id();
        for _ in 0..3 {
            let r = UpstreamSession {
                provider: "oidc".into(),
                sid: sid.clone(),
                user_id: user.id.clone(),
                session_token: Some(random_id()),
                expires: instant(3600),
            };
            ok(
                CHECK,
                "record_upstream_session",
                store.record_upstream_session(&r).await,
            );
        }
        let (a, b) = (adapter.clone(), adapter.clone());
        let (Some(x), Some(y)) = (
            a.capabilities().upstream_sessions,
            b.capabilities().upstream_sessions,
        ) else {
            fail(CHECK, "a clone of the adapter has no UpstreamSessionStore");
        };
        let now = OffsetDateTime::now_utc();
        let (rx, ry) = futures_util::future::join(
            x.take_upstream_sessions("oidc", &sid, now),
            y.take_upstream_sessions("oidc", &sid, now),
        )
        .await;
        let mut tokens: Vec<Option<String>> = ok(CHECK, "take", rx)
            .into_iter()
            .chain(ok(CHECK, "take", ry))
            .map(|r| r.session_token)
            .collect();
        let all = tokens.len();
        tokens.sort();
        tokens.dedup();
        if all != 3 || tokens.len() != 3 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent takes shared out {tokens:?}, expected 3 records once each"
                ),
            );
        }
    }
}
