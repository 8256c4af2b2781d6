//! Cookie overrides end to end (Auth.js `lib/utils/cookie.ts`, `defaultCookies`, and
//! `lib/vendored/cookie.ts`, `serialize`): custom names (the session JWT salt follows the
//! name, as in Auth.js `lib/actions/session.ts`, which uses the cookie name as salt), custom
//! options in `Set-Cookie`, and forced secure cookies.
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::cookies::{CookieOverride, CookiesOverrides, Priority, SameSite};
use serde_json::json;

/// `name=<valid CSRF cookie value>` and the token to echo in the body.
fn csrf_named(name: &str) -> (String, String) {
    let token = "b".repeat(64);
    let value = authcore::csrf::csrf_cookie_value(&token, SECRET);
    (format!("{name}={}", value.replace('|', "%7C")), token)
}

async fn sign_in_with_csrf_cookie(
    auth: &authcore::Auth,
    base: &str,
    csrf_cookie_name: &str,
) -> TestResponse {
    let (cookie, token) = csrf_named(csrf_cookie_name);
    send(
        auth,
        http::Request::post(format!("{base}/auth/callback/credentials"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", cookie)
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await
}

/// `Set-Cookie` attributes after the name/value pair, with the `Expires` date dropped.
fn attributes(set_cookie: &str) -> Vec<String> {
    set_cookie
        .split("; ")
        .skip(1)
        .map(|a| {
            if a.starts_with("Expires=") {
                "Expires".to_owned()
            } else {
                a.to_owned()
            }
        })
        .collect()
}

fn session_named(name: &str) -> CookiesOverrides {
    CookiesOverrides {
        session_token: CookieOverride {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn custom_session_cookie_name_is_used_and_is_the_jwt_salt() {
    let (auth, rec) = auth_with(builder().cookies(session_named("my-session")));
    assert_eq!(auth.config().cookies(true).session_token.name, "my-session");
    assert_eq!(
        auth.config().cookies(false).session_token.name,
        "my-session"
    );

    let r = sign_in_with_csrf_cookie(&auth, ORIGIN, CSRF_COOKIE).await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert!(r.cookie(SESSION_COOKIE).is_none(), "default name not used");
    let token = r.cookie("my-session").unwrap();
    let codec = auth.config().jwt();
    let claims = codec.decode(&token, "my-session").unwrap().unwrap();
    assert_eq!(claims["sub"], "1");
    assert!(
        codec.decode(&token, SESSION_COOKIE).is_err(),
        "the salt is the cookie name, not the default name"
    );

    // A token encoded under the custom name is a session …
    let claims = json!({"name": "Custom", "sub": "1"});
    let good = codec
        .encode(claims.as_object().unwrap(), "my-session", 3600)
        .unwrap();
    let r = get_session(&auth, format!("my-session={good}")).await;
    assert_eq!(r.json()["user"]["name"], "Custom");
    assert!(r.cookie("my-session").is_some(), "session cookie refreshed");
    assert!(rec.errors().is_empty(), "{:?}", rec.errors());

    // … one encoded with the default salt is not, even under the custom name.
    let default_salted = codec
        .encode(claims.as_object().unwrap(), SESSION_COOKIE, 3600)
        .unwrap();
    let r = get_session(&auth, format!("my-session={default_salted}")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), serde_json::Value::Null);
    assert!(
        r.set_cookie_header("my-session")
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(rec.error_types(), ["JWTSessionError"]);

    // A valid token under the default name is not looked at.
    rec.errors.lock().unwrap().clear();
    let r = get_session(&auth, format!("{SESSION_COOKIE}={default_salted}")).await;
    assert_eq!(r.json(), serde_json::Value::Null);
    assert!(rec.errors().is_empty());

    // Sign-out clears the custom cookie.
    let (csrf, csrf_token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("my-session={good}; {csrf}"))
            .body(form(&[("csrfToken", &csrf_token)]))
            .unwrap(),
    )
    .await;
    assert!(
        r.set_cookie_header("my-session")
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(rec.event("signOut").unwrap()["token"]["name"], "Custom");
}

#[tokio::test]
async fn custom_csrf_cookie_name_is_set_and_checked() {
    let (auth, _) = auth_with(builder().cookies(CookiesOverrides {
        csrf_token: CookieOverride {
            name: Some("my-csrf".into()),
            ..Default::default()
        },
        ..Default::default()
    }));
    let r = send(&auth, get("/auth/csrf").body(empty()).unwrap()).await;
    assert!(r.cookie(CSRF_COOKIE).is_none());
    let value = decoded_cookie(&r, "my-csrf").unwrap();
    let (token, _hash) = value.split_once('|').unwrap();
    assert_eq!(r.json()["csrfToken"], token);

    // The custom cookie verifies a POST …
    let r = sign_in_with_csrf_cookie(&auth, ORIGIN, "my-csrf").await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert!(r.cookie(SESSION_COOKIE).is_some());
    // … a valid cookie under the default name does not.
    let r = sign_in_with_csrf_cookie(&auth, ORIGIN, CSRF_COOKIE).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
}

#[tokio::test]
async fn custom_cookie_options_appear_in_set_cookie() {
    let (auth, _) = auth_with(builder().cookies(CookiesOverrides {
        session_token: CookieOverride {
            domain: Some(Some("authjs.test".into())),
            same_site: Some(SameSite::Strict),
            path: Some("/app".into()),
            max_age: Some(Some(600)),
            ..Default::default()
        },
        callback_url: CookieOverride {
            http_only: Some(false),
            max_age: Some(Some(60)),
            ..Default::default()
        },
        csrf_token: CookieOverride {
            same_site: Some(SameSite::None),
            partitioned: Some(true),
            priority: Some(Some(Priority::High)),
            ..Default::default()
        },
        ..Default::default()
    }));
    let r = sign_in_with_csrf_cookie(&auth, ORIGIN, CSRF_COOKIE).await;
    let session = r.set_cookie_header(SESSION_COOKIE).unwrap();
    // Attribute order of the npm `cookie` package (Auth.js `lib/vendored/cookie.ts`,
    // `serialize`).
    assert_eq!(
        attributes(&session),
        [
            "Max-Age=600",
            "Domain=authjs.test",
            "Path=/app",
            "Expires",
            "HttpOnly",
            "Secure",
            "SameSite=Strict"
        ]
    );
    let callback = r.set_cookie_header(CALLBACK_COOKIE).unwrap();
    assert_eq!(
        attributes(&callback),
        ["Max-Age=60", "Path=/", "Secure", "SameSite=Lax"]
    );

    let r = send(&auth, get("/auth/csrf").body(empty()).unwrap()).await;
    let csrf = r.set_cookie_header(CSRF_COOKIE).unwrap();
    assert_eq!(
        attributes(&csrf),
        [
            "Path=/",
            "HttpOnly",
            "Secure",
            "Partitioned",
            "Priority=High",
            "SameSite=None"
        ]
    );

    // Clearing keeps domain and path, or the browser would not delete the cookie.
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header(
                "cookie",
                format!("{}; {csrf}", session_cookie(&auth, json!({"sub": "1"}))),
            )
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    let cleared = r.set_cookie_header(SESSION_COOKIE).unwrap();
    assert_eq!(
        cleared,
        "__Secure-authjs.session-token=; Max-Age=0; Domain=authjs.test; Path=/app; HttpOnly; Secure; SameSite=Strict"
    );
}

#[tokio::test]
async fn use_secure_cookies_forces_prefixes_and_secure_over_http() {
    const HTTP: &str = "http://localhost:3000";
    // Default over plain HTTP: no prefixes, no `Secure`.
    let (auth, _) = auth();
    let r = send(
        &auth,
        http::Request::get(format!("{HTTP}/auth/csrf"))
            .body(empty())
            .unwrap(),
    )
    .await;
    let csrf = r.set_cookie_header("authjs.csrf-token").unwrap();
    assert!(!csrf.contains("Secure"), "{csrf}");
    assert!(r.set_cookie_header(CSRF_COOKIE).is_none());

    let (auth, _) = auth_with(builder().use_secure_cookies(true));
    let secure = auth.config().cookies(false);
    assert_eq!(secure.session_token.name, SESSION_COOKIE);
    assert_eq!(secure.csrf_token.name, CSRF_COOKIE);
    assert_eq!(
        secure.pkce_code_verifier.name,
        "__Secure-authjs.pkce.code_verifier"
    );
    let r = send(
        &auth,
        http::Request::get(format!("{HTTP}/auth/csrf"))
            .body(empty())
            .unwrap(),
    )
    .await;
    assert!(r.set_cookie_header("authjs.csrf-token").is_none());
    assert_eq!(
        attributes(&r.set_cookie_header(CSRF_COOKIE).unwrap()),
        ["Path=/", "HttpOnly", "Secure", "SameSite=Lax"]
    );
    assert_eq!(
        r.set_cookie_header(CALLBACK_COOKIE).unwrap(),
        "__Secure-authjs.callback-url=http%3A%2F%2Flocalhost%3A3000; Path=/; HttpOnly; Secure; SameSite=Lax"
    );
    // The session cookie too, salted with its prefixed name.
    let r = sign_in_with_csrf_cookie(&auth, HTTP, CSRF_COOKIE).await;
    assert_eq!(r.location(), Some(HTTP));
    let session = r.set_cookie_header(SESSION_COOKIE).unwrap();
    assert!(session.contains("; Secure"), "{session}");
    let token = r.cookie(SESSION_COOKIE).unwrap();
    assert!(
        auth.config()
            .jwt()
            .decode(&token, SESSION_COOKIE)
            .unwrap()
            .is_some()
    );

    // And `false` drops them over HTTPS.
    let (auth, _) = auth_with(builder().use_secure_cookies(false));
    let r = send(&auth, get("/auth/csrf").body(empty()).unwrap()).await;
    assert!(r.set_cookie_header(CSRF_COOKIE).is_none());
    let csrf = r.set_cookie_header("authjs.csrf-token").unwrap();
    assert!(!csrf.contains("Secure"), "{csrf}");
    let callback = r.set_cookie_header("authjs.callback-url").unwrap();
    assert!(!callback.contains("Secure"), "{callback}");
}
