//! GET /auth/verify-request (Auth.js `lib/pages/index.ts` and `lib/pages/verify-request.tsx`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::PagesOptions;

#[tokio::test]
async fn builtin_page() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        get("/auth/verify-request?provider=email&type=email")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    let html = r.text();
    assert!(html.contains("<title>Verify Request</title>"));
    assert!(html.contains("Check your email"));
    assert!(html.contains("A sign in link has been sent to your email address."));
    assert!(html.contains(r#"<a class="site" href="https://authjs.test">authjs.test</a>"#));
}

#[tokio::test]
async fn custom_page_keeps_the_query() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        verify_request: Some("/check".into()),
        ..Default::default()
    }));
    let r = send(
        &auth,
        get("/auth/verify-request?provider=email&type=email")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("/check?provider=email&type=email"));
}

#[tokio::test]
async fn post_is_unknown_action() {
    let (auth, _) = auth();
    let r = send(&auth, post("/auth/verify-request").body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}
