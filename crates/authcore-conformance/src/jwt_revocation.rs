//! [`JwtRevocationStore`](authcore::adapter::JwtRevocationStore): the JWT revocation list.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter>(adapter: &A) {
    jwt_revocation(adapter).await;
}

/// `revoke_jwt_sessions` stores one revocation per user (a later one replaces it) that
/// `get_jwt_revocation` reads back; other users have none; an authcore extension, skipped
/// when unsupported.
pub async fn jwt_revocation<A: Adapter>(adapter: &A) {
    const CHECK: &str = "jwt_revocation";
    let Some(store) = capability(
        adapter.capabilities().jwt_revocation,
        CHECK,
        "JwtRevocationStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "jwt-revocation").await;
    let other = new_user(adapter, CHECK, "jwt-revocation-other").await;
    none(
        CHECK,
        "get_jwt_revocation before any",
        store.get_jwt_revocation(&user.id).await,
    );
    let (first, second) = (instant(-60), instant(0));
    ok(
        CHECK,
        "revoke_jwt_sessions",
        store
            .revoke_jwt_sessions(&user.id, first, Some("sid-1"))
            .await,
    );
    ok(
        CHECK,
        "revoke_jwt_sessions again",
        store.revoke_jwt_sessions(&user.id, second, None).await,
    );
    let got = some(
        CHECK,
        "get_jwt_revocation",
        store.get_jwt_revocation(&user.id).await,
    );
    eq(
        CHECK,
        "the latest revocation",
        &got,
        &JwtRevocation {
            before: second,
            keep: None,
        },
    );
    ok(
        CHECK,
        "revoke_jwt_sessions keeping one",
        store
            .revoke_jwt_sessions(&user.id, first, Some("sid-2"))
            .await,
    );
    let got = some(
        CHECK,
        "get_jwt_revocation",
        store.get_jwt_revocation(&user.id).await,
    );
    eq(
        CHECK,
        "a revocation keeping a session",
        &got,
        &JwtRevocation {
            before: first,
            keep: Some("sid-2".to_owned()),
        },
    );
    none(
        CHECK,
        "another user's revocation",
        store.get_jwt_revocation(&other.id).await,
    );
}
