//! [`SessionSignInStore`](authcore::adapter::SessionSignInStore): how each database session
//! was signed in.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter>(adapter: &A) {
    session_sign_in(adapter).await;
}

/// `record_session_sign_in` records how the user of a session signed in (methods in order,
/// the time, and the administrator signed in as the user, if one was), `get_session_sign_in`
/// reads it back, a later record replaces the earlier;
/// nothing for a session without one or an unknown token; deleting the session (alone, or
/// with its user) deletes it. Authcore extensions, skipped when unsupported.
pub async fn session_sign_in<A: Adapter>(adapter: &A) {
    const CHECK: &str = "session_sign_in";
    let Some(store) = capability(
        adapter.capabilities().session_sign_in,
        CHECK,
        "SessionSignInStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "session-sign-in").await;
    let session = || AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(3600),
    };
    let [signed, bare, gone] = [session(), session(), session()];
    for s in [&signed, &bare, &gone] {
        ok(
            CHECK,
            "create_session",
            adapter.create_session(s.clone()).await,
        );
    }
    let at = instant(-30).unix_timestamp();
    let password = SignInInfo::new(vec!["pwd".into()], Some(at));
    let two = SignInInfo::new(
        vec!["pwd".into(), "otp".into(), "mfa".into()],
        Some(at + 20),
    );
    for (token, sign_in) in [
        (&signed.session_token, &password),
        (&signed.session_token, &two),
        (&gone.session_token, &password),
    ] {
        ok(
            CHECK,
            "record_session_sign_in",
            store.record_session_sign_in(token, sign_in).await,
        );
    }
    let read = some(
        CHECK,
        "get_session_sign_in after two records",
        store.get_session_sign_in(&signed.session_token).await,
    );
    eq(CHECK, "the last record, methods in order", &read, &two);
    // An administrator's sign-in as the user, then the user's own again.
    let impersonated = SignInInfo::new(vec!["pwd".into()], Some(at + 40))
        .with_impersonator(Some(format!("admin-{}", random_id())));
    for (what, sign_in) in [
        ("a sign-in by an impersonator", &impersonated),
        ("the user's own sign-in after it", &two),
    ] {
        ok(
            CHECK,
            "record_session_sign_in",
            store
                .record_session_sign_in(&signed.session_token, sign_in)
                .await,
        );
        let read = some(
            CHECK,
            "get_session_sign_in",
            store.get_session_sign_in(&signed.session_token).await,
        );
        eq(CHECK, what, &read, sign_in);
    }
    none(
        CHECK,
        "get_session_sign_in of a session without one",
        store.get_session_sign_in(&bare.session_token).await,
    );
    let unknown = random_id();
    ok(
        CHECK,
        "record_session_sign_in of an unknown token",
        store.record_session_sign_in(&unknown, &password).await,
    );
    none(
        CHECK,
        "get_session_sign_in of an unknown token",
        store.get_session_sign_in(&unknown).await,
    );
    ok(
        CHECK,
        "delete_session",
        adapter.delete_session(&gone.session_token).await,
    );
    none(
        CHECK,
        "get_session_sign_in of a deleted session",
        store.get_session_sign_in(&gone.session_token).await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&user.id).await);
    none(
        CHECK,
        "get_session_sign_in after delete_user",
        store.get_session_sign_in(&signed.session_token).await,
    );
}
