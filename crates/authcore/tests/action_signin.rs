//! GET /auth/signin (page; Auth.js `lib/pages/index.ts`, `lib/pages/signin.tsx`) and
//! POST /auth/signin[/:provider] (Auth.js `lib/actions/signin/index.ts`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::PagesOptions;

#[tokio::test]
async fn page_lists_credentials_form_with_csrf_token() {
    let (auth, _) = auth();
    let r = send(&auth, get("/auth/signin").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/html");
    let html = r.text();
    assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\">"));
    assert!(html.contains("<title>Sign In</title>"));
    assert!(html.contains(r#"action="https://authjs.test/auth/callback/credentials""#));
    assert!(
        html.contains(
            r#"name="username" id="input-username-for-credentials-provider" type="text""#
        )
    );
    assert!(html.contains(r#"type="password""#));
    assert!(html.contains("Sign in with Credentials"));
    let cookie = r.cookie(CSRF_COOKIE).unwrap();
    let token = cookie.split("%7C").next().unwrap();
    assert!(html.contains(&format!(r#"name="csrfToken" value="{token}""#)));
}

#[tokio::test]
async fn page_shows_error_messages_escaped() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        get("/auth/signin?error=CredentialsSignin")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert!(
        r.text()
            .contains("Sign in failed. Check the details you provided are correct.")
    );
    let r = send(
        &auth,
        get("/auth/signin?error=%3Cscript%3E")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert!(r.text().contains("Unable to sign in."));
    assert!(!r.text().contains("<script>"));
}

#[tokio::test]
async fn get_with_provider_is_unsupported() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        get("/auth/signin/credentials").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

#[tokio::test]
async fn custom_sign_in_page_gets_callback_url_and_error() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_in: Some("/login".into()),
        ..Default::default()
    }));
    let r = send(
        &auth,
        get("/auth/signin?callbackUrl=%2Fdash&error=Oops")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.location(),
        Some("/login?callbackUrl=https%3A%2F%2Fauthjs.test%2Fdash&error=Oops")
    );
}

#[tokio::test]
async fn post_requires_csrf() {
    let (auth, rec) = auth();
    let r = send(
        &auth,
        post("/auth/signin/credentials")
            .body(form(&[("csrfToken", "nope")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert_eq!(rec.error_types(), ["MissingCSRF"]);
}

#[tokio::test]
async fn post_for_credentials_redirects_to_builtin_page() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_in: Some("/login".into()),
        ..Default::default()
    }));
    let (csrf, token) = csrf_pair();
    for path in ["/auth/signin/credentials", "/auth/signin"] {
        let r = send(
            &auth,
            post(path)
                .header("cookie", &csrf)
                .body(form(&[("csrfToken", &token)]))
                .unwrap(),
        )
        .await;
        assert_eq!(
            r.location(),
            Some("https://authjs.test/auth/signin"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn unknown_provider_is_configuration_error() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signin/nope")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert_eq!(
        rec.errors.lock().unwrap()[0].1,
        r#"Provider with id "nope" not found. Available providers: [credentials]."#
    );
}

#[tokio::test]
async fn x_auth_return_redirect_gives_json() {
    let (auth, _) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signin")
            .header("cookie", &csrf)
            .header("x-auth-return-redirect", "1")
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        serde_json::json!({"url": "https://authjs.test/auth/signin"})
    );
    assert_eq!(r.location(), Some("https://authjs.test/auth/signin"));
    assert!(r.cookie(CALLBACK_COOKIE).is_some());
    // On error: JSON with the error URL and no cookies.
    let r = send(
        &auth,
        post("/auth/signin")
            .header("x-auth-return-redirect", "1")
            .body(form(&[]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        serde_json::json!({"url": "https://authjs.test/auth/signin?error=MissingCSRF"})
    );
    assert!(r.set_cookies().is_empty());
    assert_eq!(r.location(), None, "Auth.js sends Location only on success");
}

#[tokio::test]
async fn failed_credentials_sign_in_with_return_redirect_has_no_location() {
    let (auth, _) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header("cookie", &csrf)
            .header("x-auth-return-redirect", "1")
            .body(form(&[
                ("csrfToken", &token),
                ("username", "nobody"),
                ("password", "wrong"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        serde_json::json!({
            "url": "https://authjs.test/auth/signin?error=CredentialsSignin&code=credentials"
        })
    );
    assert_eq!(r.location(), None);
    assert!(r.set_cookies().is_empty());
}
