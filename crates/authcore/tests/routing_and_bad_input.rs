//! Request parsing and routing (Auth.js `lib/utils/web.ts`, `toInternalRequest` and
//! `parseActionAndProviderId`; `lib/index.ts`, `AuthInternal`) and hostile input: every case
//! gets a clear status and never a panic.
#![allow(clippy::unwrap_used)]
use crate::common::*;
use http::Request;
use proptest::prelude::*;

#[tokio::test]
async fn unparsable_requests_are_400_bad_request() {
    let (auth, rec) = auth();
    for path in [
        "/auth",
        "/auth/",
        "/auth/nope",
        "/auth/session/extra",
        "/other",
        "/auth/signin/a/b",
    ] {
        let r = send(&auth, get(path).body(empty()).unwrap()).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.text(), "\"Bad request.\"");
        assert!(r.set_cookies().is_empty());
    }
    for m in ["PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"] {
        let r = send(
            &auth,
            Request::builder()
                .method(m)
                .uri(url("/auth/session"))
                .body(empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 400, "{m}");
    }
    assert!(rec.error_types().iter().all(|t| t == "InvalidRequest"));
}

#[tokio::test]
async fn trailing_slashes_and_undefined_provider() {
    let (auth, _) = auth();
    let r = send(&auth, get("/auth/session/").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    let r = send(&auth, get("/auth/signin/undefined").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200, "provider id 'undefined' counts as absent");
}

#[tokio::test]
async fn malformed_bodies() {
    let (auth, _) = auth();
    for (ct, body) in [
        ("application/json", "{not json"),
        ("application/json", "[1,2]"),
        ("application/json", "\"str\""),
    ] {
        let r = send(
            &auth,
            Request::post(url("/auth/signin"))
                .header("content-type", ct)
                .body(http_body_util::Full::new(body.into()))
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 400, "{body}");
        assert_eq!(r.text(), "\"Bad request.\"");
    }
    // Unknown content type: body ignored → CSRF missing.
    let r = send(
        &auth,
        Request::post(url("/auth/signin"))
            .header("content-type", "text/plain")
            .body(http_body_util::Full::new("csrfToken=x".into()))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    // Bad percent-encoding in a form body is decoded leniently, never a panic.
    let r = send(
        &auth,
        post("/auth/signin")
            .body(http_body_util::Full::new(
                "csrfToken=%ZZ&callbackUrl=%E2%82".into(),
            ))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
}

#[tokio::test]
async fn oversized_bodies_and_cookies() {
    let (auth, _) = auth_with(builder().max_body_bytes(1024).max_cookie_header_bytes(2048));
    let big = "a=".to_owned() + &"x".repeat(2000);
    let r = send(
        &auth,
        post("/auth/signin")
            .body(http_body_util::Full::new(big.clone().into()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.text(), "\"Payload too large.\"");
    let r = get_session(&auth, format!("c={}", "x".repeat(4000))).await;
    assert_eq!(r.status, 431);
}

#[tokio::test]
async fn malformed_cookies_are_ignored() {
    let (auth, _) = auth();
    for cookie in [
        "garbage",
        ";;;=;",
        "__Secure-authjs.session-token=%ZZ%",
        "__Host-authjs.csrf-token=|||",
        "__Secure-authjs.session-token.x=1; __Secure-authjs.session-token.99999999999999999999=2",
    ] {
        let r = get_session(&auth, cookie).await;
        assert_eq!(r.status, 200, "{cookie}");
    }
    let r = send(
        &auth,
        get("/auth/session")
            .header(
                "cookie",
                http::HeaderValue::from_bytes(b"a=\xff\xfe").unwrap(),
            )
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn hostile_host_headers() {
    let (auth, _) = auth();
    for host in ["evil.example/path", "a b", "user@evil", "[::1"] {
        let r = send(
            &auth,
            Request::get("/auth/session")
                .header("host", host)
                .body(empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.status, 400, "{host}");
    }
    let r = send(&auth, Request::get("/auth/session").body(empty()).unwrap()).await;
    assert_eq!(r.status, 400, "no host at all");
    let r = send(
        &auth,
        Request::get("/auth/providers")
            .header("host", "app.example:8080")
            .header("x-forwarded-proto", "https")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.json()["credentials"]["signinUrl"],
        "https://app.example:8080/auth/signin/credentials"
    );
    let r = send(
        &auth,
        Request::get("/auth/providers")
            .header("host", "internal:3000")
            .header("x-forwarded-host", "public.example, proxy")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.json()["credentials"]["signinUrl"],
        "http://public.example/auth/signin/credentials"
    );
}

#[tokio::test]
async fn fixed_url_ignores_forwarded_headers() {
    let (auth, _) = auth_with(builder().trust_host(false).url("https://app.example"));
    let r = send(
        &auth,
        Request::get("/auth/providers")
            .header("host", "evil.example")
            .header("x-forwarded-host", "evil.example")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.json()["credentials"]["signinUrl"],
        "https://app.example/auth/signin/credentials"
    );
}

#[tokio::test]
async fn raw_mode_returns_errors() {
    let (auth, _) = auth();
    let req = post("/auth/signin").body(form(&[])).unwrap();
    let err = auth.handle_raw(req).await.unwrap_err();
    assert_eq!(err.error_type(), "MissingCSRF");
    let ok = auth
        .handle_raw(get("/auth/csrf").body(empty()).unwrap())
        .await
        .unwrap();
    assert!(ok.body.is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
    #[test]
    fn arbitrary_requests_never_panic(path in "/auth(/[a-z\\-%0-9]{0,10}){0,3}", cookie in "[ -~]{0,200}", body in ".{0,200}", post_it in any::<bool>(), json in any::<bool>()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (auth, _) = auth();
            let ct = if json { "application/json" } else { "application/x-www-form-urlencoded" };
            let b = if post_it { Request::post(url(&path)) } else { Request::get(url(&path)) };
            let Ok(req) = b.header("content-type", ct).header("cookie", cookie.as_str()).body(http_body_util::Full::new(bytes::Bytes::from(body.clone()))) else { return };
            let r = send(&auth, req).await;
            assert!([200, 302, 400, 404, 500].contains(&r.status.as_u16()), "{}", r.status);
        });
    }
}

/// Hostile header values an attacker controls: `Host`, `X-Forwarded-Host`,
/// `X-Forwarded-Proto`, `Content-Type`, `X-Auth-Return-Redirect`, any method.
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,60}",
        Just(String::new()),
        Just("evil.example, good.example".to_owned()),
        Just("[::1]:99999".to_owned()),
        Just("a/b\\c@d?e#f".to_owned()),
        Just("https, http".to_owned()),
        Just("application/json; charset=utf-8".to_owned()),
        Just("multipart/form-data; boundary=x".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    /// Whatever the headers and method, the handler answers with a status from the known
    /// set, never panics, and never follows a hostile `callbackUrl`.
    #[test]
    fn arbitrary_headers_and_methods_never_panic(
        action in prop_oneof![
            Just("session"), Just("csrf"), Just("providers"), Just("signin"),
            Just("signin/credentials"), Just("callback/credentials"), Just("signout"),
            Just("error"), Just("verify-request"), Just("webauthn-options/x")
        ],
        method in prop_oneof![
            Just("GET"), Just("POST"), Just("PUT"), Just("DELETE"), Just("HEAD"),
            Just("OPTIONS"), Just("PATCH")
        ],
        host in header_value(),
        forwarded_host in proptest::option::of(header_value()),
        forwarded_proto in proptest::option::of(header_value()),
        content_type in proptest::option::of(header_value()),
        return_redirect in any::<bool>(),
        trust in any::<bool>(),
        body in ".{0,120}",
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (auth, _) = auth_with(builder().trust_host(trust));
            let mut b = Request::builder()
                .method(method)
                .uri(format!("/auth/{action}?callbackUrl=%2F%2Fevil.example"));
            for (name, value) in [
                ("host", Some(&host)),
                ("x-forwarded-host", forwarded_host.as_ref()),
                ("x-forwarded-proto", forwarded_proto.as_ref()),
                ("content-type", content_type.as_ref()),
            ] {
                if let Some(v) = value {
                    b = b.header(name, v.as_str());
                }
            }
            if return_redirect {
                b = b.header("x-auth-return-redirect", "1");
            }
            let Ok(req) = b.body(http_body_util::Full::new(bytes::Bytes::from(body.clone()))) else {
                return;
            };
            let r = send(&auth, req).await;
            assert!(
                [200, 302, 400, 404, 413, 431, 500].contains(&r.status.as_u16()),
                "{} {method} {action}", r.status
            );
            // A trusted forwarded host may legitimately name evil.example as the origin;
            // otherwise the hostile `callbackUrl` must never be followed.
            let headers_name_evil = [Some(&host), forwarded_host.as_ref()]
                .into_iter()
                .flatten()
                .any(|v| v.contains("evil"));
            if let Some(location) = r.location().filter(|_| !headers_name_evil) {
                assert!(
                    !location.contains("evil.example"),
                    "{method} {action} host={host:?} → {location}"
                );
            }
        });
    }
}
