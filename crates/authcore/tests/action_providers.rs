//! GET /auth/providers (Auth.js `lib/pages/index.ts`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
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
    // Unlike every other action, Auth.js's renderer answers it without init's cookies,
    // even on a client's first request (`providers` in `lib/pages/index.ts` returns no
    // `cookies`, so the callback-url cookie `lib/init.ts` queues is not sent).
    assert!(r.set_cookies().is_empty(), "{:?}", r.set_cookies());
    let r = send(
        &auth,
        get("/auth/providers?callbackUrl=%2Fdashboard")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.set_cookies().is_empty(), "{:?}", r.set_cookies());
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
