//! `sessions_only()`: a configuration without providers that reads the sessions another app
//! issues (a Rust API beside a Next.js front end), and signs nobody in.

use authcore::{Auth, AuthConfig, ConfigError};

use crate::common::*;

/// The reader: the issuing app's secret, no providers.
fn reader() -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .sessions_only()
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn reads_the_sessions_another_app_issues() {
    let (issuer, _) = auth();
    let signed_in = post_credentials(&issuer, &[("username", "demo"), ("password", "pw")]).await;
    let token = signed_in.cookie(SESSION_COOKIE).expect("signed in");
    let cookie = format!("{SESSION_COOKIE}={token}");
    let reader = reader();

    let session = get_session(&reader, &cookie).await;
    assert_eq!(session.status, 200);
    assert_eq!(session.json()["user"]["email"], "demo@example.com");

    // What an API handler gets: the user id for its own queries.
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::COOKIE, cookie.parse().unwrap());
    let lookup = reader
        .read_session(
            &url("/api/me").parse().unwrap(),
            &headers,
            &Default::default(),
        )
        .await
        .unwrap();
    let session = lookup.session.unwrap();
    assert_eq!(session.user_id(), Some("1"));
    assert_eq!(session.user_email(), Some("demo@example.com"));

    // A forged or foreign token is no session.
    let forged = format!("{SESSION_COOKIE}={}x", &token[..token.len() - 1]);
    assert_eq!(get_session(&reader, forged).await.text(), "null");
}

#[tokio::test]
async fn signs_nobody_in() {
    let reader = reader();
    assert_eq!(
        send(&reader, get("/auth/providers").body(empty()).unwrap())
            .await
            .json(),
        serde_json::json!({})
    );
    let attempt = post_credentials(&reader, &[("username", "demo"), ("password", "pw")]).await;
    assert!(
        attempt.cookie(SESSION_COOKIE).is_none(),
        "{:?}",
        attempt.set_cookies()
    );
    assert!(attempt.status.is_redirection() || attempt.status.is_client_error());
}

#[test]
fn build_asks_for_providers_or_sessions_only() {
    let e = AuthConfig::builder().secret(SECRET).build().unwrap_err();
    assert_eq!(e, ConfigError::NoProviders);
    assert!(e.to_string().contains(".sessions_only()"), "{e}");
    let e = AuthConfig::builder()
        .secret(SECRET)
        .sessions_only()
        .provider(credentials())
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::ProvidersWithSessionsOnly);
}
