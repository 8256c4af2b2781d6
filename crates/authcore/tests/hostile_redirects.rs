//! Hostile `callbackUrl`s from the query string, the callback-url cookie and the sign-out
//! body never send the browser off the origin: the default `redirect` callback (Auth.js
//! `lib/init.ts`, `defaultCallbacks`) joins relative URLs to the origin and replaces other
//! origins with the origin, and query or cookie values that are not http(s) are refused
//! before any action (Auth.js `lib/utils/assert.ts`, `assertConfig`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::{Auth, PagesOptions};
use serde_json::json;

/// The audit's list, plus a few parser edge cases.
const HOSTILE: &[&str] = &[
    "//evil.example",
    "https:evil.example",
    "/\\evil.example",
    "javascript:alert(1)",
    "https://evil.example",
    "https://evil.example/auth/callback?x=https://authjs.test",
    "\\\\evil.example",
    "https://authjs.test@evil.example/",
    "https://authjs.test.evil.example/",
    "http://authjs.test/",
    " //evil.example",
    "//evil.example/%2e%2e",
    "data:text/html,<script>alert(1)</script>",
];

/// Clearly foreign origins: the default callback answers the origin itself.
const FOREIGN: &[&str] = &[
    "https:evil.example",
    "https://evil.example",
    "https://authjs.test@evil.example/",
    "https://authjs.test.evil.example/",
    "http://authjs.test/",
    "javascript:alert(1)",
];

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// No redirect, JSON `url` or callback-url cookie of `r` leaves the origin.
fn assert_stays(r: &TestResponse, context: &str) {
    assert!(
        [200, 302, 500].contains(&r.status.as_u16()),
        "{context}: {}",
        r.status
    );
    if let Some(loc) = r.location() {
        assert_on_origin(loc, context);
    }
    if let Some(cb) = decoded_cookie(r, CALLBACK_COOKIE) {
        assert_on_origin(&cb, &format!("{context} (callback-url cookie)"));
    }
    if r.headers
        .get("content-type")
        .is_some_and(|v| v == "application/json")
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&r.body)
        && let Some(u) = v.get("url").and_then(|u| u.as_str())
    {
        assert_on_origin(u, &format!("{context} (json url)"));
    }
}

#[tokio::test]
async fn query_callback_url_on_the_sign_in_page() {
    let (auth, _) = auth();
    let (custom, _) = auth_with(builder().pages(PagesOptions {
        sign_in: Some("/login".into()),
        ..Default::default()
    }));
    for hostile in HOSTILE {
        let path = format!("/auth/signin?callbackUrl={}", enc(hostile));
        let r = send(&auth, get(&path).body(empty()).unwrap()).await;
        assert_stays(&r, &format!("built-in page, {hostile:?}"));
        assert!(r.location().is_none(), "{hostile:?}: page or error page");

        // A custom sign-in page gets the resolved URL in its own callbackUrl param.
        let r = send(&custom, get(&path).body(empty()).unwrap()).await;
        assert_stays(&r, &format!("custom page, {hostile:?}"));
        let Some(location) = r.location() else {
            // Refused up front (not http(s)): the built-in Configuration error page.
            assert_eq!(r.status, 500, "{hostile:?}");
            assert!(r.text().contains("Server error"), "{hostile:?}");
            continue;
        };
        let loc = url::Url::parse(ORIGIN).unwrap().join(location).unwrap();
        assert_eq!(loc.path(), "/login", "{hostile:?}");
        let cb = loc
            .query_pairs()
            .find(|(k, _)| k == "callbackUrl")
            .unwrap()
            .1
            .into_owned();
        assert_on_origin(&cb, &format!("custom page param, {hostile:?}"));
        if FOREIGN.contains(hostile) {
            assert_eq!(cb, ORIGIN, "{hostile:?}");
        }
    }
}

async fn sign_in_with_cookie(auth: &Auth, callback_cookie: &str) -> TestResponse {
    let (csrf, token) = csrf_pair();
    send(
        auth,
        post("/auth/callback/credentials")
            .header(
                "cookie",
                format!("{csrf}; {CALLBACK_COOKIE}={}", enc(callback_cookie)),
            )
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn callback_url_cookie_after_sign_in() {
    let (auth, _) = auth();
    for hostile in HOSTILE {
        let r = sign_in_with_cookie(&auth, hostile).await;
        assert_stays(&r, &format!("cookie {hostile:?}"));
        if r.status == 302 {
            assert!(r.cookie(SESSION_COOKIE).is_some(), "{hostile:?}");
            if FOREIGN.contains(hostile) {
                assert_eq!(r.location(), Some(ORIGIN), "{hostile:?}");
            }
        } else {
            // Not an http(s) URL: refused before the action (500, no session).
            assert_eq!(r.status, 500, "{hostile:?}");
            assert!(r.cookie(SESSION_COOKIE).is_none(), "{hostile:?}");
        }
    }
}

#[tokio::test]
async fn sign_out_body_callback_url() {
    let (auth, _) = auth();
    let session = session_cookie(&auth, json!({"sub": "1"}));
    for hostile in HOSTILE {
        for with_session in [true, false] {
            for json_form in [false, true] {
                let (csrf, token) = csrf_pair();
                let cookie = if with_session {
                    format!("{session}; {csrf}")
                } else {
                    csrf
                };
                let mut req = post("/auth/signout").header("cookie", cookie);
                if json_form {
                    req = req.header("x-auth-return-redirect", "1");
                }
                let r = send(
                    &auth,
                    req.body(form(&[("csrfToken", &token), ("callbackUrl", hostile)]))
                        .unwrap(),
                )
                .await;
                let context = format!("{hostile:?} session={with_session} json={json_form}");
                assert_stays(&r, &context);
                // The body is not pre-validated: every value ends in a same-origin redirect.
                let target = if json_form {
                    assert_eq!(r.status, 200, "{context}");
                    r.json()["url"].as_str().unwrap().to_owned()
                } else {
                    assert_eq!(r.status, 302, "{context}");
                    r.location().unwrap().to_owned()
                };
                assert!(target.starts_with(ORIGIN), "{context}: {target}");
                if FOREIGN.contains(hostile) {
                    assert_eq!(target, ORIGIN, "{context}");
                }
                if with_session {
                    assert!(
                        r.set_cookie_header(SESSION_COOKIE)
                            .unwrap()
                            .contains("Max-Age=0"),
                        "{context}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn query_and_cookie_on_sign_out_and_session_routes() {
    let (auth, _) = auth();
    for hostile in HOSTILE {
        // Query on the sign-out page and the session endpoint.
        for path in ["/auth/signout", "/auth/session", "/auth/providers"] {
            let r = send(
                &auth,
                get(&format!("{path}?callbackUrl={}", enc(hostile)))
                    .body(empty())
                    .unwrap(),
            )
            .await;
            assert_stays(&r, &format!("{path} query {hostile:?}"));
        }
        // Cookie on a sign-out POST.
        let (csrf, token) = csrf_pair();
        let r = send(
            &auth,
            post("/auth/signout")
                .header(
                    "cookie",
                    format!("{csrf}; {CALLBACK_COOKIE}={}", enc(hostile)),
                )
                .body(form(&[("csrfToken", &token)]))
                .unwrap(),
        )
        .await;
        assert_stays(&r, &format!("signout cookie {hostile:?}"));
    }
}
