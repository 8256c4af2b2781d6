//! GET /auth/error (Auth.js `lib/pages/index.ts` and `lib/pages/error.tsx`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::PagesOptions;

#[tokio::test]
async fn status_codes_and_headings() {
    let (auth, _) = auth();
    for (q, status, text) in [
        ("Configuration", 500, "Server error"),
        ("AccessDenied", 403, "Access Denied"),
        ("Verification", 403, "The sign in link is no longer valid."),
        ("Whatever", 200, "<h1>Error</h1>"),
    ] {
        let r = send(
            &auth,
            get(&format!("/auth/error?error={q}"))
                .body(empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, status, "{q}");
        let html = r.text();
        assert!(html.contains(text), "{q}: {html}");
        assert!(html.contains("<title>Error</title>"));
    }
    let r = send(
        &auth,
        get("/auth/error?error=AccessDenied&x=1")
            .body(empty())
            .unwrap(),
    )
    .await;
    // Deviation from Auth.js: the sign-in link is `<origin><basePath>/signin`.
    assert!(
        r.text()
            .contains(r#"href="https://authjs.test/auth/signin""#)
    );
    let r = send(&auth, get("/auth/error").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert!(r.text().contains(r#"href="https://authjs.test""#));
}

#[tokio::test]
async fn custom_error_page_redirect() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        error: Some("/oops".into()),
        ..Default::default()
    }));
    let r = send(
        &auth,
        get("/auth/error?error=AccessDenied").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("/oops?error=AccessDenied"));
    let r = send(&auth, get("/auth/error").body(empty()).unwrap()).await;
    assert_eq!(r.location(), Some("/oops?error=undefined"));
    let r = send(&auth, get("/auth/error?error=a%26b").body(empty()).unwrap()).await;
    assert_eq!(r.location(), Some("/oops?error=a%26b"));
}

#[tokio::test]
async fn post_is_unknown_action() {
    let (auth, _) = auth();
    let r = send(&auth, post("/auth/error").body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}
