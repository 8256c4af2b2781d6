//! GET /auth/providers (spec §2.1).
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn lists_providers_with_urls_in_config_order() {
    let (auth, _) =
        auth_with(builder().provider(credentials().with_id("second").with_name("Second")));
    let r = send(&auth, get("/auth/providers").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(
        r.text(),
        json!({
            "credentials": {"id": "credentials", "name": "Credentials", "type": "credentials",
                "signinUrl": "https://authjs.test/auth/signin/credentials",
                "callbackUrl": "https://authjs.test/auth/callback/credentials"},
            "second": {"id": "second", "name": "Second", "type": "credentials",
                "signinUrl": "https://authjs.test/auth/signin/second",
                "callbackUrl": "https://authjs.test/auth/callback/second"}
        })
        .to_string()
    );
    // First request of a client: CSRF and callback-url cookies are set (spec §2, §16.11).
    assert!(r.cookie(CSRF_COOKIE).is_some());
    assert_eq!(
        r.cookie(CALLBACK_COOKIE).as_deref(),
        Some("https%3A%2F%2Fauthjs.test")
    );
}

#[tokio::test]
async fn post_is_unknown_action() {
    let (auth, rec) = auth();
    let r = send(&auth, post("/auth/providers").body(empty()).unwrap()).await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.set_cookies().is_empty(), "error redirects drop cookies");
    assert_eq!(rec.error_types(), ["UnknownAction"]);
}

#[tokio::test]
async fn custom_base_path() {
    let (auth, _) = auth_with(builder().base_path("/api/auth"));
    let r = send(&auth, get("/api/auth/providers").body(empty()).unwrap()).await;
    assert_eq!(
        r.json()["credentials"]["signinUrl"],
        "https://authjs.test/api/auth/signin/credentials"
    );
    let r = send(&auth, get("/auth/providers").body(empty()).unwrap()).await;
    assert_eq!(r.status, 400);
}
