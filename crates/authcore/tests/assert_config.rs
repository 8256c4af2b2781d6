//! Per-request assertions (Auth.js `lib/utils/assert.ts`, `assertConfig`, including the cases
//! Auth.js's own tests check) and build-time validation.
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::cookies::{CookieOverride, CookiesOverrides};
use authcore::{AuthConfig, ConfigError, PagesOptions};

const MESSAGE: &str = r#"{"message":"There was a problem with the server configuration. Check the server logs for more information."}"#;

#[tokio::test]
async fn untrusted_host_is_500() {
    let (auth, rec) = auth_with(builder().trust_host(false));
    let r = send(&auth, get("/auth/session").body(empty()).unwrap()).await;
    assert_eq!(r.status, 500);
    assert_eq!(r.text(), MESSAGE);
    assert_eq!(
        rec.errors.lock().unwrap()[0],
        (
            "UntrustedHost".to_owned(),
            "Host must be trusted. URL was: https://authjs.test/auth/session".to_owned()
        )
    );
    // The logged URL drops the query, which may carry a magic-link token or an OAuth code.
    let r = send(
        &auth,
        get("/auth/callback/email?token=magic-link-secret&email=a%40b.example")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 500);
    let logged = rec.errors.lock().unwrap()[1].1.clone();
    assert_eq!(
        logged,
        "Host must be trusted. URL was: https://authjs.test/auth/callback/email"
    );
    // HTML actions render the Configuration error page instead.
    let r = send(&auth, get("/auth/signin").body(empty()).unwrap()).await;
    assert_eq!(r.status, 500);
    assert!(r.text().contains("Server error"));
}

#[tokio::test]
async fn invalid_callback_urls_in_query_and_cookies() {
    let (auth, rec) = auth();
    for bad in ["non-relative", "a", "javascript:alert(1)"] {
        rec.errors.lock().unwrap().clear();
        let enc = form_urlencoded::byte_serialize(bad.as_bytes()).collect::<String>();
        let r = send(
            &auth,
            get(&format!("/auth/session?callbackUrl={enc}"))
                .body(empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 500);
        assert_eq!(r.text(), MESSAGE);
        assert_eq!(
            rec.errors.lock().unwrap()[0].1,
            format!("Invalid callback URL. Received: {bad}")
        );
        let r = get_session(&auth, format!("{CALLBACK_COOKIE}={enc}")).await;
        assert_eq!(r.status, 500);
    }
    let (auth, _) = auth_with(builder().cookies(CookiesOverrides {
        callback_url: CookieOverride {
            name: Some("my-cb".into()),
            ..Default::default()
        },
        ..Default::default()
    }));
    let r = get_session(&auth, "my-cb=a").await;
    assert_eq!(r.status, 500);
    let r = send(
        &auth,
        get("/auth/session?callbackUrl=%2Fok")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn configuration_error_with_custom_error_page_redirects_unless_looping() {
    // A fixed URL makes the host trusted even with trust_host(false): no Configuration error.
    let (auth, rec) = auth_with(
        builder()
            .trust_host(false)
            .url("https://authjs.test")
            .pages(PagesOptions {
                error: Some("/err".into()),
                ..Default::default()
            }),
    );
    let r = send(&auth, get("/auth/signin").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert!(r.text().contains("<title>Sign In</title>"));
    assert!(rec.errors().is_empty(), "{:?}", rec.errors());
    // An untrusted host on an HTML action redirects to the custom error page …
    let (auth, rec) = auth_with(builder().trust_host(false).pages(PagesOptions {
        error: Some("/err".into()),
        ..Default::default()
    }));
    for path in ["/auth/signin", "/auth/signout", "/auth/verify-request"] {
        let r = send(&auth, get(path).body(empty()).unwrap()).await;
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(
            r.location(),
            Some("https://authjs.test/err?error=Configuration"),
            "{path}"
        );
        assert!(r.set_cookies().is_empty(), "{path}");
    }
    assert_eq!(rec.error_types(), ["UntrustedHost"; 3]);
    // … but JSON actions and POSTs still answer 500 JSON.
    let r = send(&auth, get("/auth/session").body(empty()).unwrap()).await;
    assert_eq!(r.status, 500);
    assert_eq!(r.text(), MESSAGE);
    let r = send(&auth, post("/auth/signout").body(form(&[])).unwrap()).await;
    assert_eq!(r.status, 500);
    assert_eq!(r.text(), MESSAGE);
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        error: Some("/err".into()),
        ..Default::default()
    }));
    let r = send(
        &auth,
        get("/auth/signin?callbackUrl=a").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/err?error=Configuration")
    );
    let (auth, rec) = auth_with(builder().trust_host(false).pages(PagesOptions {
        error: Some("/err".into()),
        ..Default::default()
    }));
    let r = send(
        &auth,
        get("/auth/error?callbackUrl=%2Ferr").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(r.status, 500, "loop: render the built-in page");
    assert!(
        rec.errors
            .lock()
            .unwrap()
            .iter()
            .any(|(_, m)| m.contains("ErrorPageLoop"))
    );
}

#[test]
fn build_time_checks() {
    let e = AuthConfig::builder()
        .trust_host(true)
        .provider(credentials())
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::MissingSecret);
    assert!(e.to_string().contains("AUTH_SECRET"));
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(authcore::providers::CredentialsProvider::new())
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::MissingAuthorize { .. }));
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(credentials())
        .session_strategy(authcore::SessionStrategy::Database)
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::UnsupportedStrategy);
}

/// `build()?` in `main`, `.unwrap()` and `.expect()` print `Debug`: it is the message that
/// says what to fix, not the variant's name.
#[test]
fn config_errors_debug_as_their_message() {
    let e = AuthConfig::builder()
        .provider(credentials())
        .build()
        .unwrap_err();
    assert_eq!(format!("{e:?}"), e.to_string());
    assert!(format!("{e:?}").contains("openssl rand"), "{e:?}");
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(credentials())
        .session_strategy(authcore::SessionStrategy::Database)
        .build()
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("credentials_database_sessions"),
        "{e:?}"
    );
}
