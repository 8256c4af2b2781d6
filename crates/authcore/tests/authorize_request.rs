//! The `request` argument of the credentials `authorize(credentials, request)` (Auth.js
//! `providers/credentials.ts`; built in `lib/actions/callback/index.ts`): a request to the
//! current URL with the original method and headers and the parsed body as JSON.
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::User;
use authcore::providers::{AuthorizeRequest, CredentialsProvider};
use authcore::types::JsonObject;
use bytes::Bytes;
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<(JsonObject, AuthorizeRequest)>>>;

/// A provider that records what `authorize` received and signs in user `7`.
fn recording_provider(seen: &Seen) -> CredentialsProvider {
    let seen = seen.clone();
    CredentialsProvider::new().authorize(move |credentials, request| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push((credentials, request));
            Ok(Some(User::with_id("7").name("Seven")))
        }
    })
}

fn setup() -> (authcore::Auth, Seen) {
    let seen = Seen::default();
    let b = authcore::AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .provider(recording_provider(&seen));
    let (auth, _) = auth_with(b);
    (auth, seen)
}

fn body_json(req: &AuthorizeRequest) -> Value {
    serde_json::from_slice::<Value>(req.body()).unwrap()
}

#[tokio::test]
async fn form_post_reaches_authorize_with_url_method_headers_and_json_body() {
    let (auth, seen) = setup();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/callback/credentials?from=query&x=1")
            .header("cookie", &csrf)
            .header("user-agent", "authcore-test/1.0")
            .header("x-forwarded-for", "203.0.113.7")
            .header("x-custom", "a")
            .header("accept-language", "de-CH")
            .body(form(&[
                ("csrfToken", &token),
                ("username", "ada"),
                ("password", "p@ss word&="),
                ("callbackUrl", "/after"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test/after"));

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let (credentials, req) = &seen[0];
    assert_eq!(req.method(), http::Method::POST);
    assert_eq!(
        req.uri().to_string(),
        "https://authjs.test/auth/callback/credentials?from=query&x=1"
    );
    let h = req.headers();
    assert_eq!(h["user-agent"], "authcore-test/1.0");
    assert_eq!(h["x-forwarded-for"], "203.0.113.7");
    assert_eq!(h["x-custom"], "a");
    assert_eq!(h["accept-language"], "de-CH");
    assert_eq!(h["cookie"], csrf.as_str(), "original cookie header kept");
    // The body is re-serialised as JSON (deliberate: the content type follows the body).
    assert_eq!(h["content-type"], "application/json");
    let expected = json!({
        "csrfToken": token,
        "username": "ada",
        "password": "p@ss word&=",
        "callbackUrl": "/after",
    });
    assert_eq!(body_json(req), expected);
    // `credentials` is the same parsed body.
    assert_eq!(Value::Object(credentials.clone()), expected);
}

#[tokio::test]
async fn json_post_and_forwarded_host_reach_authorize() {
    let (auth, seen) = setup();
    let (csrf, token) = csrf_pair();
    let body = json!({
        "csrfToken": token,
        "username": "grace",
        "nested": {"otp": [1, 2, 3]},
        "remember": true,
    });
    let r = send(
        &auth,
        http::Request::post("http://internal:8080/auth/callback/credentials")
            .header("content-type", "application/json; charset=utf-8")
            .header("x-forwarded-host", "public.example")
            .header("x-forwarded-proto", "https")
            .header("cookie", &csrf)
            .header("authorization", "Bearer not-a-session")
            .body(http_body_util::Full::new(Bytes::from(body.to_string())))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://public.example"));

    let seen = seen.lock().unwrap();
    let (credentials, req) = &seen[0];
    // The URL is the one authcore derived for the request (trusted forwarded headers).
    assert_eq!(
        req.uri().to_string(),
        "https://public.example/auth/callback/credentials"
    );
    assert_eq!(req.method(), http::Method::POST);
    assert_eq!(req.headers()["authorization"], "Bearer not-a-session");
    assert_eq!(req.headers()["x-forwarded-host"], "public.example");
    assert_eq!(req.headers()["content-type"], "application/json");
    // JSON types survive: nested objects, numbers, booleans.
    assert_eq!(body_json(req), body);
    assert_eq!(credentials["nested"]["otp"], json!([1, 2, 3]));
    assert_eq!(credentials["remember"], true);
}

#[tokio::test]
async fn authorize_is_not_called_without_a_valid_csrf_token() {
    let (auth, seen) = setup();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .body(form(&[("csrfToken", "forged"), ("username", "ada")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(seen.lock().unwrap().is_empty());
}
