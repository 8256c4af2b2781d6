//! The JWT revocation list (opt-in `jwt_revocation`): "sign out everywhere
//! (else)" for JWT sessions. Three browsers sign in; revoking all but the first ends the
//! other two at their next read (cookie cleared) and keeps the first; a sign-in after the
//! revocation is not affected; revoking everywhere ends the first too; a store that fails
//! answers `null` without clearing the cookie.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use authcore::adapter::{Adapter, JwtRevocationStore, MemoryAdapter};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, SessionStrategy, User};

fn app(db: &MemoryAdapter) -> Auth {
    app_on(db.clone())
}

fn app_on(db: impl Adapter) -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .authorize(|_, _| async { Ok(Some(User::with_id("ada-id").name("Ada"))) }),
            )
            .adapter(db)
            .session_strategy(SessionStrategy::Jwt)
            .jwt_revocation(true)
            .build()
            .unwrap(),
    )
}

/// Signs in; the session cookie header.
async fn sign_in(auth: &Auth) -> String {
    let (csrf, token) = csrf_pair();
    let r = send(
        auth,
        post("/auth/callback/credentials")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", token.as_str()), ("username", "ada")]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap())
}

/// `GET /auth/session` with `cookie`: the JSON and whether the cookie was cleared.
async fn read(auth: &Auth, cookie: &str) -> (serde_json::Value, bool) {
    let r = send(
        auth,
        get("/auth/session")
            .header("cookie", cookie)
            .body(empty())
            .unwrap(),
    )
    .await;
    let cleared = r
        .set_cookies()
        .iter()
        .any(|c| c.starts_with(SESSION_COOKIE) && c.contains("Max-Age=0"));
    (r.json(), cleared)
}

#[tokio::test]
async fn sign_out_everywhere_else_and_everywhere() {
    let db = MemoryAdapter::new();
    let auth = app(&db);
    let (laptop, phone, tablet) = (
        sign_in(&auth).await,
        sign_in(&auth).await,
        sign_in(&auth).await,
    );
    for c in [&laptop, &phone, &tablet] {
        assert_eq!(read(&auth, c).await.0["user"]["name"], "Ada");
    }
    let uri: http::Uri = url("/").parse().unwrap();
    let headers = |cookie: &str| {
        let mut h = http::HeaderMap::new();
        h.insert("cookie", cookie.parse().unwrap());
        h
    };
    let me = auth.current_session(&uri, &headers(&laptop)).await.unwrap();
    assert_eq!(me.user_id, "ada-id");
    let sid = me.session_id.expect("a sid claim");
    // Revocation covers sessions signed in strictly before it, in milliseconds: an
    // optimised build signs in and revokes within one.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(
        auth.revoke_other_sessions("ada-id", Some(&sid))
            .await
            .unwrap(),
        0
    );

    assert_eq!(
        read(&auth, &laptop).await.0["user"]["name"],
        "Ada",
        "the kept session"
    );
    for c in [&phone, &tablet] {
        let (session, cleared) = read(&auth, c).await;
        assert_eq!((session, cleared), (serde_json::Value::Null, true));
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let later = sign_in(&auth).await;
    assert_eq!(
        read(&auth, &later).await.0["user"]["name"],
        "Ada",
        "signed in afterwards"
    );

    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    auth.revoke_other_sessions("ada-id", None).await.unwrap();
    for c in [&laptop, &later] {
        assert_eq!(read(&auth, c).await.0, serde_json::Value::Null);
    }
    assert!(db.get_jwt_revocation("ada-id").await.unwrap().is_some());
}

#[tokio::test]
async fn without_the_adapter_methods_the_option_is_refused_at_start_up() {
    let err = AuthConfig::builder()
        .secret("jwt-revocation-secret-xxxxxxxxxx")
        .trust_host(true)
        .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
        .session_strategy(SessionStrategy::Jwt)
        .jwt_revocation(true)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, authcore::ConfigError::MissingAdapter),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_store_that_fails_answers_null_and_keeps_the_cookie() {
    // A revocation store that is down.
    let auth = app_on(LimitedAdapter::down("down").with_jwt_revocation());
    let cookie = sign_in(&auth).await;
    let (session, cleared) = read(&auth, &cookie).await;
    assert_eq!((session, cleared), (serde_json::Value::Null, false));
}
