//! The built-in pages (Auth.js `lib/pages/index.ts`, `signin.tsx`, `signout.tsx`,
//! `error.tsx`, `verify-request.tsx`): HTML snapshots (`insta`; the per-response CSP nonce
//! and the CSRF token are masked), security headers, escaping of hostile query parameters,
//! themes, and the custom page redirects.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::providers::catalog::{GitHubOptions, github};
use authcore::providers::{WebAuthnProvider, email::EmailProvider};
use authcore::types::{ColorScheme, PagesOptions, Theme};

/// Every provider kind, in this order: credentials, GitHub, email, passkey.
fn all_kinds() -> authcore::AuthConfigBuilder {
    builder()
        .provider(
            github(GitHubOptions::default())
                .client_id("id")
                .client_secret("secret"),
        )
        .provider(
            EmailProvider::new("a@example.com").send_verification_request(|_| async { Ok(()) }),
        )
        .provider(WebAuthnProvider::passkey())
        .adapter(MemoryAdapter::new())
}

async fn page(auth: &authcore::Auth, path: &str) -> TestResponse {
    send(auth, get(path).body(empty()).unwrap()).await
}

/// The nonce the response's CSP names.
fn csp_nonce(r: &TestResponse) -> String {
    let csp = r.headers["content-security-policy"].to_str().unwrap();
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|s| s.split('\'').next());
    nonce.unwrap().to_owned()
}

/// The page with its random parts masked, for snapshots.
fn masked(r: &TestResponse) -> String {
    let nonce = csp_nonce(r);
    // The shared stylesheet is the same in every page; the theme's and providers' parts
    // after it stay in the snapshot.
    let mut html = r
        .text()
        .replace(&nonce, "[nonce]")
        .replace(include_str!("../templates/style.css"), "[style.css]")
        .replace(include_str!("../templates/webauthn.js"), "[webauthn.js]");
    if let Some(start) = html.find("name=\"csrfToken\" value=\"") {
        let from = start + "name=\"csrfToken\" value=\"".len();
        let end = from + html[from..].find('"').unwrap();
        let token = html[from..end].to_owned();
        html = html.replace(&token, "[csrf]");
    }
    // One line per element keeps snapshot diffs readable.
    html.replace("><", ">\n<")
}

fn assert_security_headers(r: &TestResponse) {
    let csp = r.headers["content-security-policy"].to_str().unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'nonce-",
        "style-src 'nonce-",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(r.headers["x-frame-options"], "DENY");
    assert_eq!(r.headers["x-content-type-options"], "nosniff");
    assert_eq!(r.headers["content-type"], "text/html");
}

#[tokio::test]
async fn sign_in_page_snapshot() {
    let (auth, _) = auth_with(all_kinds());
    let r = page(&auth, "/auth/signin").await;
    assert_eq!(r.status, 200);
    assert_security_headers(&r);
    let html = r.text();
    // The inline style and script carry this response's nonce; nothing is loaded from elsewhere.
    let nonce = csp_nonce(&r);
    assert!(html.contains(&format!("<style nonce=\"{nonce}\">")));
    assert!(html.contains(&format!("<script nonce=\"{nonce}\"")));
    assert!(!html.contains("src=\"http"), "no external resources");
    insta::assert_snapshot!("signin", masked(&r));
}

#[tokio::test]
async fn nonce_changes_with_every_response() {
    let (auth, _) = auth_with(all_kinds());
    let a = page(&auth, "/auth/signin").await;
    let b = page(&auth, "/auth/signin").await;
    assert_ne!(
        a.headers["content-security-policy"],
        b.headers["content-security-policy"]
    );
}

#[tokio::test]
async fn sign_in_error_messages() {
    let (auth, _) = auth();
    for (error, message) in [
        ("OAuthSignin", "Try signing in with a different account."),
        (
            "OAuthCallbackError",
            "Try signing in with a different account.",
        ),
        (
            "OAuthCreateAccount",
            "Try signing in with a different account.",
        ),
        (
            "EmailCreateAccount",
            "Try signing in with a different account.",
        ),
        ("Callback", "Try signing in with a different account."),
        ("Signin", "Try signing in with a different account."),
        (
            "OAuthAccountNotLinked",
            "To confirm your identity, sign in with the same account you used originally.",
        ),
        ("EmailSignin", "The e-mail could not be sent."),
        (
            "CredentialsSignin",
            "Sign in failed. Check the details you provided are correct.",
        ),
        ("SessionRequired", "Please sign in to access this page."),
        ("Default", "Unable to sign in."),
        ("SomethingNew", "Unable to sign in."),
    ] {
        let html = page(&auth, &format!("/auth/signin?error={error}"))
            .await
            .text();
        assert!(
            html.contains(&format!(
                "<div class=\"error\" role=\"alert\"><p>{message}</p></div>"
            )),
            "{error}"
        );
    }
}

#[tokio::test]
async fn other_pages_snapshots_and_statuses() {
    let (auth, _) = auth();
    let r = page(&auth, "/auth/signout").await;
    assert_security_headers(&r);
    insta::assert_snapshot!("signout", masked(&r));
    let r = page(&auth, "/auth/verify-request").await;
    assert_security_headers(&r);
    insta::assert_snapshot!("verify_request", masked(&r));
    for (error, status) in [
        ("Configuration", 500),
        ("AccessDenied", 403),
        ("Verification", 403),
        ("Default", 200),
    ] {
        let r = page(&auth, &format!("/auth/error?error={error}")).await;
        assert_eq!(r.status, status, "{error}");
        assert_security_headers(&r);
        insta::assert_snapshot!(format!("error_{error}"), masked(&r));
    }
}

#[tokio::test]
async fn hostile_query_parameters_are_escaped() {
    let (auth, _) = auth_with(all_kinds());
    let evil = "\"><script>alert(1)</script><img src=x onerror=alert(2)>";
    let q = authcore::cookies::encode_uri_component(evil);
    for path in [
        format!("/auth/signin?error={q}&email={q}"),
        format!(
            "/auth/signin?callbackUrl={}",
            authcore::cookies::encode_uri_component(&format!("https://authjs.test/{evil}"))
        ),
        format!("/auth/error?error={q}"),
        format!("/auth/verify-request?provider={q}&type={q}"),
        format!("/auth/signout?callbackUrl={q}"),
        // A valid same-origin callback URL carrying the payload reaches the sign-out page
        // itself (the one above is refused before any page renders).
        format!(
            "/auth/signout?callbackUrl={}",
            authcore::cookies::encode_uri_component(&format!("https://authjs.test/{evil}"))
        ),
    ] {
        let r = page(&auth, &path).await;
        let html = r.text();
        assert!(!html.contains("<script>alert"), "{path}: {html}");
        assert!(!html.contains("<img src=x"), "{path}");
        assert!(!html.contains("onerror=alert(2)>"), "{path}");
    }
    // The same-origin sign-out URL renders the page itself, so the loop above checked it.
    let signout = format!(
        "/auth/signout?callbackUrl={}",
        authcore::cookies::encode_uri_component(&format!("https://authjs.test/{evil}"))
    );
    let r = page(&auth, &signout).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<title>Sign Out</title>"), "{}", r.text());
    // The email value is kept, escaped, in the field.
    let html = page(&auth, &format!("/auth/signin?email={q}")).await.text();
    assert!(
        html.contains("value=\"&#34;&#62;&#60;script&#62;"),
        "{html}"
    );
}

/// The OAuth form's hidden `callbackUrl` holds the query's value as given, as Auth.js's page
/// does (the POST validates and resolves it again); without one, the resolved URL.
#[tokio::test]
async fn oauth_form_keeps_the_query_callback_url_as_given() {
    let (auth, _) = auth_with(all_kinds());
    let cases = [
        ("/auth/signin?callbackUrl=%2Fdashboard", Some("/dashboard")),
        (
            "/auth/signin?callbackUrl=https%3A%2F%2Fauthjs.test%2Fa%3Fb%3D1",
            Some("https://authjs.test/a?b=1"),
        ),
        ("/auth/signin", Some("https://authjs.test")),
        ("/auth/signin?callbackUrl=", None),
    ];
    for (path, expected) in cases {
        let r = page(&auth, path).await;
        // An empty callbackUrl is no callbackUrl (Auth.js), not an invalid one.
        assert_eq!(r.status, 200, "{path}");
        let html = r.text();
        let input = html
            .split("<input type=\"hidden\" name=\"callbackUrl\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next());
        assert_eq!(input, expected, "{path}");
    }
}

#[tokio::test]
async fn themes() {
    for (scheme, class) in [
        (ColorScheme::Auto, "__next-auth-theme-auto"),
        (ColorScheme::Dark, "__next-auth-theme-dark"),
        (ColorScheme::Light, "__next-auth-theme-light"),
    ] {
        let (auth, _) = auth_with(builder().theme(Theme {
            color_scheme: scheme,
            brand_color: "#123456".into(),
            button_text: "#fefefe".into(),
            logo: "https://example.com/logo.svg".into(),
        }));
        for path in [
            "/auth/signin",
            "/auth/signout",
            "/auth/error",
            "/auth/verify-request",
        ] {
            let html = page(&auth, path).await.text();
            assert!(
                html.contains(&format!("<body class=\"{class}\">")),
                "{path}"
            );
            assert!(html.contains(":root{--brand-color:#123456}"), "{path}");
            assert!(
                html.contains(":root{--button-text-color:#fefefe}"),
                "{path}"
            );
            assert!(
                html.contains(
                    "<img src=\"https://example.com/logo.svg\" alt=\"Logo\" class=\"logo\"/>"
                ),
                "{path}"
            );
        }
    }
    // Colours that are not plain colour tokens never reach the stylesheet.
    let (auth, _) = auth_with(builder().theme(Theme {
        brand_color: "red}body{display:none".into(),
        ..Theme::default()
    }));
    let html = page(&auth, "/auth/signin").await.text();
    assert!(!html.contains("body{display:none"));
    assert!(!html.contains("--brand-color:red"));
}

#[tokio::test]
async fn custom_pages_redirect_with_encoded_parameters() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_in: Some("/login?from=app".into()),
        sign_out: Some("/bye".into()),
        error: Some("/oops".into()),
        verify_request: Some("/check-mail".into()),
        new_user: None,
        two_factor: None,
    }));
    let r = page(
        &auth,
        "/auth/signin?callbackUrl=%2Fdash%3Fa%3D1%26b%3D2&error=a%26b%3Dc",
    )
    .await;
    assert_eq!(
        r.location(),
        Some(
            "/login?from=app&callbackUrl=https%3A%2F%2Fauthjs.test%2Fdash%3Fa%3D1%26b%3D2&error=a%26b%3Dc"
        )
    );
    assert_eq!(page(&auth, "/auth/signout").await.location(), Some("/bye"));
    assert_eq!(
        page(&auth, "/auth/error?error=a%26b%3Dc").await.location(),
        Some("/oops?error=a%26b%3Dc")
    );
    assert_eq!(
        page(&auth, "/auth/verify-request?provider=email&type=email")
            .await
            .location(),
        Some("/check-mail?provider=email&type=email")
    );
}

/// The sign-in page is rendered once per origin and completed per request (its nonce, CSRF
/// token and callback URL spliced in): what each request gets is the page rendered whole
/// for it, on its own origin.
#[tokio::test]
async fn spliced_sign_in_page_is_the_page_rendered_whole() {
    let (auth, _) = auth_with(all_kinds());
    let on = |origin: &str, query: &str| {
        http::Request::get(format!("{origin}/auth/signin{query}"))
            .body(empty())
            .unwrap()
    };
    for origin in ["http://authjs.test", "https://other.test:8443"] {
        for query in ["", "?callbackUrl=%2Fdashboard%3Fa%3D1%26b%3D%22x%22"] {
            // `email=` (empty) renders the same markup but is never spliced.
            let whole_query = if query.is_empty() {
                "?email=".to_owned()
            } else {
                format!("{query}&email=")
            };
            let whole = send(&auth, on(origin, &whole_query)).await;
            for _ in 0..2 {
                let spliced = send(&auth, on(origin, query)).await;
                assert_security_headers(&spliced);
                assert_eq!(masked(&spliced), masked(&whole), "{origin}{query}");
                // Its own token (the one its cookie holds) and nonce (the one its CSP names).
                let html = spliced.text();
                let name = if origin.starts_with("https:") {
                    "__Host-authjs.csrf-token"
                } else {
                    "authjs.csrf-token"
                };
                let cookie = decoded_cookie(&spliced, name).unwrap();
                let token = cookie.split('|').next().unwrap();
                assert!(html.contains(&format!("name=\"csrfToken\" value=\"{token}\"")));
                let nonce = csp_nonce(&spliced);
                assert!(html.contains(&format!("<style nonce=\"{nonce}\">")));
                assert!(
                    html.contains(&format!("action=\"{origin}/auth/callback/credentials\"")),
                    "{html}"
                );
            }
        }
    }
}
