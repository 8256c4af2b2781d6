//! Hostile and malformed input is logged (Auth.js `index.ts`, `Auth`, and
//! `lib/utils/logger.ts`: errors are logged even when handled) with its Auth.js error type,
//! and no log line carries the secret, a session token or a magic-link token.
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::providers::email::{EmailProvider, VerificationRequest};
use authcore::{Auth, AuthConfig, AuthConfigBuilder};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::json;

/// A secret that is easy to spot in a log line.
const LOUD_SECRET: &str = "loud-secret-5f2b9c1e-must-never-be-logged";

fn loud_builder() -> AuthConfigBuilder {
    AuthConfig::builder()
        .secret(LOUD_SECRET)
        .trust_host(true)
        .provider(credentials())
}

fn loud_csrf() -> (String, String) {
    let token = "c".repeat(64);
    let value = authcore::csrf::csrf_cookie_value(&token, LOUD_SECRET);
    (
        format!("{CSRF_COOKIE}={}", value.replace('|', "%7C")),
        token,
    )
}

fn loud_session_token(auth: &Auth) -> String {
    let claims = json!({"sub": "1", "name": "Loud"});
    auth.config()
        .jwt()
        .encode(claims.as_object().unwrap(), SESSION_COOKIE, 3600)
        .unwrap()
}

/// Every logged error as `<type>: <message and causes>`.
fn log_lines(rec: &Recorder) -> Vec<String> {
    rec.errors
        .lock()
        .unwrap()
        .iter()
        .map(|(t, m)| format!("{t}: {m}"))
        .collect()
}

fn assert_no_leak(lines: &[String], forbidden: &[&str]) {
    for line in lines {
        for f in forbidden {
            assert!(!line.contains(f), "log line leaks {f:?}: {line}");
        }
    }
}

#[tokio::test]
async fn malformed_json_body_logs_invalid_request_without_the_body() {
    let (auth, rec) = auth_with(loud_builder());
    let r = send(
        &auth,
        Request::post(url("/auth/callback/credentials"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(
                br#"{"username":"demo","password":"hunter2-pw-in-body""#,
            )))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(rec.error_types(), ["InvalidRequest"]);
    let lines = log_lines(&rec);
    assert!(
        lines[0].starts_with("InvalidRequest: Invalid JSON body"),
        "{lines:?}"
    );
    assert_no_leak(&lines, &["hunter2-pw-in-body", LOUD_SECRET]);
}

#[tokio::test]
async fn oversized_body_logs_invalid_request_without_the_body() {
    let (auth, rec) = auth_with(loud_builder().max_body_bytes(1024));
    let big = format!("password=hunter2-pw-in-body&pad={}", "x".repeat(2000));
    // Declared too large …
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header("content-length", big.len().to_string())
            .body(Full::new(Bytes::from(big.clone())))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 413);
    // … and found too large while reading (no length header).
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .body(Full::new(Bytes::from(big)))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 413);
    assert_eq!(rec.error_types(), ["InvalidRequest", "InvalidRequest"]);
    let lines = log_lines(&rec);
    assert!(
        lines
            .iter()
            .all(|l| l == "InvalidRequest: Request body larger than 1024 bytes"),
        "{lines:?}"
    );
    assert_no_leak(&lines, &["hunter2-pw-in-body", LOUD_SECRET]);
}

#[tokio::test]
async fn oversized_cookie_header_logs_without_the_cookies() {
    let (auth, rec) = auth_with(loud_builder().max_cookie_header_bytes(128));
    let token = loud_session_token(&auth);
    let r = get_session(&auth, format!("{SESSION_COOKIE}={token}")).await;
    assert_eq!(r.status, 431);
    assert_eq!(rec.error_types(), ["InvalidRequest"]);
    let lines = log_lines(&rec);
    assert_eq!(
        lines,
        ["InvalidRequest: Cookie headers larger than 128 bytes"]
    );
    assert_no_leak(&lines, &[&token, LOUD_SECRET]);
}

#[tokio::test]
async fn malformed_cookies_log_without_their_values() {
    let (auth, rec) = auth_with(loud_builder());
    // A session cookie with a broken escape is kept raw and fails to decrypt.
    let raw = "%ZZ%E2%82-cookie-value-9d1";
    let r = get_session(&auth, format!("{SESSION_COOKIE}={raw}")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), serde_json::Value::Null);
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0"),
        "the broken cookie is cleared"
    );
    assert_eq!(rec.error_types(), ["JWTSessionError"]);

    // A CSRF cookie with bad percent-encoding does not verify: MissingCSRF, logged.
    let (_, token) = loud_csrf();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header(
                "cookie",
                format!("{CSRF_COOKIE}={token}%7%ZZ-csrf-hash-77a"),
            )
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert_eq!(rec.error_types(), ["JWTSessionError", "MissingCSRF"]);
    assert_no_leak(
        &log_lines(&rec),
        &["cookie-value-9d1", "csrf-hash-77a", &token, LOUD_SECRET],
    );
}

#[tokio::test]
async fn tampered_session_token_logs_jwt_session_error_without_the_token() {
    let (auth, rec) = auth_with(loud_builder());
    let token = loud_session_token(&auth);
    // Flip one character of the ciphertext segment (the fourth of five).
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    assert_eq!(parts.len(), 5);
    let first = parts[3].remove(0);
    parts[3].insert(0, if first == 'A' { 'B' } else { 'A' });
    let tampered = parts.join(".");
    assert_ne!(tampered, token);
    let r = get_session(&auth, format!("{SESSION_COOKIE}={tampered}")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), serde_json::Value::Null);
    assert_eq!(rec.error_types(), ["JWTSessionError"]);
    // A token for another secret too.
    let other = authcore::jwt::JwtCodec::new(&["another-secret"])
        .unwrap()
        .encode(
            json!({"sub": "2"}).as_object().unwrap(),
            SESSION_COOKIE,
            3600,
        )
        .unwrap();
    let r = get_session(&auth, format!("{SESSION_COOKIE}={other}")).await;
    assert_eq!(r.json(), serde_json::Value::Null);
    assert_eq!(rec.error_types(), ["JWTSessionError", "JWTSessionError"]);
    let lines = log_lines(&rec);
    // No token, nor any of its segments.
    let mut forbidden: Vec<&str> = vec![LOUD_SECRET, "another-secret", &tampered, &other];
    forbidden.extend(token.split('.').filter(|s| s.len() > 8));
    forbidden.extend(other.split('.').filter(|s| s.len() > 8));
    assert_no_leak(&lines, &forbidden);
}

#[tokio::test]
async fn hostile_host_with_untrusted_hosts_is_logged() {
    let (auth, rec) = auth_with(loud_builder().trust_host(false));
    let r = send(
        &auth,
        Request::get("/auth/session")
            .header("host", "evil.example")
            .header("x-forwarded-host", "evil2.example")
            .header(
                "cookie",
                format!("{SESSION_COOKIE}=session-value-0f3e; {CSRF_COOKIE}=csrf-value-88c"),
            )
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(rec.error_types(), ["UntrustedHost"]);
    // Without trust, X-Forwarded-Host is ignored: the URL is built from Host.
    assert_eq!(
        log_lines(&rec),
        ["UntrustedHost: Host must be trusted. URL was: http://evil.example/auth/session"]
    );
    // A host that is not a bare authority is refused while parsing.
    let r = send(
        &auth,
        Request::get("/auth/session")
            .header("host", "evil.example/@x")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(rec.error_types(), ["UntrustedHost", "InvalidRequest"]);
    assert_no_leak(
        &log_lines(&rec),
        &["session-value-0f3e", "csrf-value-88c", LOUD_SECRET],
    );
}

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

fn email_builder(outbox: &Outbox) -> AuthConfigBuilder {
    let outbox = outbox.clone();
    loud_builder().adapter(MemoryAdapter::new()).provider(
        EmailProvider::new("Auth <no-reply@example.com>").send_verification_request(move |r| {
            let outbox = outbox.clone();
            async move {
                outbox.lock().unwrap().push(r);
                Ok(())
            }
        }),
    )
}

async fn magic_link(auth: &Auth, outbox: &Outbox) -> VerificationRequest {
    let (csrf, token) = loud_csrf();
    let r = send(
        auth,
        post("/auth/signin/email")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", &token), ("email", "ada@example.com")]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    outbox.lock().unwrap().pop().unwrap()
}

#[tokio::test]
async fn refused_magic_links_are_logged_without_the_token() {
    let outbox = Outbox::default();
    let (auth, rec) = auth_with(email_builder(&outbox));
    let link = magic_link(&auth, &outbox).await;
    let r = send(&auth, Request::get(&link.url).body(empty()).unwrap()).await;
    assert_eq!(r.status, 302);
    assert!(r.cookie(SESSION_COOKIE).is_some());
    // Re-used link, and a tampered one.
    let r = send(&auth, Request::get(&link.url).body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    let forged = link.url.replace(&link.token, &"f".repeat(64));
    let r = send(&auth, Request::get(&forged).body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    assert_eq!(rec.error_types(), ["Verification", "Verification"]);
    assert_no_leak(
        &log_lines(&rec),
        &[&link.token, &"f".repeat(64), LOUD_SECRET],
    );
}

#[tokio::test]
async fn untrusted_host_does_not_log_the_magic_link_token() {
    let (auth, rec) = auth_with(loud_builder().trust_host(false));
    let token = "7f3a9e0c".repeat(8);
    let r = send(
        &auth,
        get(&format!(
            "/auth/callback/email?callbackUrl=%2F&token={token}&email=ada%40example.com"
        ))
        .body(empty())
        .unwrap(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(rec.error_types(), ["UntrustedHost"]);
    assert_no_leak(&log_lines(&rec), &[&token]);
}

/// The default logger on `tracing`, with debug on: error lines say `[auth][error] <type>`
/// (client-safe ones at WARN) and no line carries a secret or token.
#[tokio::test]
async fn default_tracing_logger_lines_carry_type_and_no_secret() {
    let (_guard, lines) = TracingCapture::install();
    let auth = Auth::new(loud_builder().debug(true).build().unwrap());
    let token = loud_session_token(&auth);
    let tampered = format!("{}x", &token[..token.len() - 1]);
    let (csrf, csrf_token) = loud_csrf();

    // Malformed JSON.
    send(
        &auth,
        Request::post(url("/auth/callback/credentials"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"csrfToken":"{csrf_token}","password":"hunter2-pw-in-body""#
            ))))
            .unwrap(),
    )
    .await;
    // Tampered session token.
    get_session(&auth, format!("{SESSION_COOKIE}={tampered}")).await;
    // Wrong password (client-safe error, logged as a warning).
    send(
        &auth,
        post("/auth/callback/credentials")
            .header("cookie", &csrf)
            .body(form(&[
                ("csrfToken", &csrf_token),
                ("username", "demo"),
                ("password", "hunter2-wrong"),
            ]))
            .unwrap(),
    )
    .await;
    // Sign-out with a valid session.
    send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}={token}; {csrf}"))
            .body(form(&[("csrfToken", &csrf_token)]))
            .unwrap(),
    )
    .await;

    let lines = lines.lock().unwrap().clone();
    let has = |level: &str, prefix: &str| {
        lines
            .iter()
            .any(|l| l.starts_with(level) && l.contains(prefix))
    };
    assert!(
        has("ERROR", "[auth][error] InvalidRequest: Invalid JSON body"),
        "{lines:#?}"
    );
    assert!(has("ERROR", "[auth][error] JWTSessionError"), "{lines:#?}");
    // The pointer to the error's section in the troubleshooting page, once per line.
    assert!(
        has(
            "ERROR",
            "Read more at docs/manual/troubleshooting.md#invalidrequest"
        ),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .all(|l| l.matches("troubleshooting.md#").count() <= 1),
        "{lines:#?}"
    );
    assert!(
        lines.iter().all(|l| !l.contains("errors.authjs.dev")),
        "{lines:#?}"
    );
    assert!(has("WARN", "[auth][error] CredentialsSignin"), "{lines:#?}");
    assert!(has("DEBUG", "[auth][debug]: request"), "{lines:#?}");
    let mut forbidden = vec![
        LOUD_SECRET,
        token.as_str(),
        tampered.as_str(),
        csrf_token.as_str(),
        "hunter2",
    ];
    forbidden.extend(token.split('.').filter(|s| s.len() > 8));
    assert_no_leak(&lines, &forbidden);
}

/// Records error, warning and debug lines alike.
#[derive(Clone, Default)]
struct FullLog(Arc<Mutex<Vec<String>>>);

impl authcore::logger::Logger for FullLog {
    fn error(&self, error: &authcore::AuthError) {
        self.0
            .lock()
            .unwrap()
            .push(format!("error {}: {error}", error.error_type()));
    }
    fn warn(&self, code: authcore::logger::WarningCode) {
        self.0
            .lock()
            .unwrap()
            .push(format!("warn {}", code.as_str()));
    }
    fn debug(&self, message: &str, metadata: &serde_json::Value) {
        self.0
            .lock()
            .unwrap()
            .push(format!("debug {message} {metadata}"));
    }
}

/// A whole magic-link sign-in with database sessions, session read and sign-out: the debug
/// channel (adapter calls, check cookies) names no token.
#[tokio::test]
async fn debug_channel_of_a_database_sign_in_names_no_token() {
    let outbox = Outbox::default();
    let log = FullLog::default();
    let auth = Auth::new(
        email_builder(&outbox)
            .logger(log.clone())
            .debug(true)
            .build()
            .unwrap(),
    );
    let link = magic_link(&auth, &outbox).await;
    let r = send(&auth, Request::get(&link.url).body(empty()).unwrap()).await;
    let session = r.cookie(SESSION_COOKIE).unwrap();
    let r = get_session(&auth, format!("{SESSION_COOKIE}={session}")).await;
    assert_eq!(r.json()["user"]["email"], "ada@example.com");
    let (csrf, token) = loud_csrf();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}={session}; {csrf}"))
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);

    let lines = log.0.lock().unwrap().clone();
    assert!(
        lines.iter().any(|l| l.starts_with("debug adapter_")),
        "{lines:#?}"
    );
    assert_no_leak(&lines, &[&link.token, &session, &token, LOUD_SECRET]);
}
