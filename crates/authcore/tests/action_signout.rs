//! GET (page) and POST /auth/signout (spec §2.7).
#![allow(clippy::unwrap_used)]
mod common;
use authcore::PagesOptions;
use common::*;
use serde_json::json;

#[tokio::test]
async fn page_posts_to_current_url_with_csrf() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        http::Request::get("http://localhost:3000/auth/signout")
            .body(empty())
            .unwrap(),
    )
    .await;
    let html = r.text();
    assert!(html.contains("<title>Sign Out</title>"));
    assert!(html.contains(r#"action="http://localhost:3000/auth/signout""#));
    assert!(html.contains("Are you sure you want to sign out?"));
    assert!(html.contains(r#"name="csrfToken" value=""#));
}

#[tokio::test]
async fn custom_sign_out_page_redirects() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_out: Some("/bye".into()),
        ..Default::default()
    }));
    let r = send(&auth, get("/auth/signout").body(empty()).unwrap()).await;
    assert_eq!(r.location(), Some("/bye"));
}

#[tokio::test]
async fn post_clears_every_chunk_fires_event_and_redirects() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let session = session_cookie(&auth, json!({"name": "A", "sub": "1"}));
    let value = session.split_once('=').unwrap().1;
    let cookie = format!("{SESSION_COOKIE}.0={value}; {SESSION_COOKIE}.1=; {csrf}");
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", &cookie)
            .body(form(&[("csrfToken", &token), ("callbackUrl", "/bye")]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test/bye"));
    let cleared = r.set_cookie_header(&format!("{SESSION_COOKIE}.0")).unwrap();
    assert!(cleared.contains("Max-Age=0"));
    assert_eq!(rec.event("signOut").unwrap()["token"]["name"], "A");
}

#[tokio::test]
async fn post_without_session_just_redirects() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test"));
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(rec.event_names().is_empty());
}

#[tokio::test]
async fn post_with_bad_token_logs_and_still_clears() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}=garbage; {csrf}"))
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(rec.error_types(), ["SignOutError"]);
}

#[tokio::test]
async fn post_requires_csrf() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", session_cookie(&auth, json!({"sub": "1"})))
            .body(form(&[]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(r.set_cookies().is_empty());
}
