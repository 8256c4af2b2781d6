//! Brute-force limits: failed credentials sign-ins per identifier and per
//! client (successes reset the identifier), magic-link mails per address and per client,
//! POSTs per client; the client address from the host's `ClientAddr`, through trusted
//! proxies only; the answers (redirect with `error=RateLimited`, 429 for JSON, both with
//! `Retry-After`) and the `rate_limited` event; a failing store fails open with a log line.
#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::providers::email::{EmailProvider, VerificationRequest};
use authcore::ratelimit::{RateLimit, RateLimitStore, RateLimits};
use authcore::request::ClientAddr;
use authcore::{Auth, BoxError};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

fn limits() -> RateLimits {
    RateLimits::default()
}

/// A credentials sign-in as `username` / `password` from `client` (through `xff`).
async fn sign_in(
    auth: &Auth,
    username: &str,
    password: &str,
    client: Option<&str>,
    xff: Option<&str>,
) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let mut b = post("/auth/callback/credentials").header("cookie", csrf);
    if let Some(xff) = xff {
        b = b.header("x-forwarded-for", xff);
    }
    let mut req = b
        .body(form(&[
            ("csrfToken", &token),
            ("username", username),
            ("password", password),
        ]))
        .unwrap();
    if let Some(ip) = client {
        req.extensions_mut()
            .insert(ClientAddr(ip.parse::<IpAddr>().unwrap()));
    }
    send(auth, req).await
}

fn error_of(r: &TestResponse) -> String {
    let location = r.location().unwrap_or_default();
    let url = url::Url::parse(location).unwrap();
    url.query_pairs()
        .find(|(k, _)| k == "error")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn failed_sign_ins_lock_the_identifier_and_a_success_resets_it() {
    let (auth, rec) = auth_with(builder().rate_limits(RateLimits {
        credentials_per_identifier: Some(RateLimit::new(3, MINUTE).lockout(2 * MINUTE)),
        ..limits()
    }));
    // Two failures, a success (resets), then three failures are still allowed.
    for _ in 0..2 {
        assert_eq!(
            error_of(&sign_in(&auth, "demo", "bad", None, None).await),
            "CredentialsSignin"
        );
    }
    assert!(
        sign_in(&auth, "demo", "pw", None, None)
            .await
            .cookie(SESSION_COOKIE)
            .is_some()
    );
    for _ in 0..3 {
        assert_eq!(
            error_of(&sign_in(&auth, "demo", "bad", None, None).await),
            "CredentialsSignin"
        );
    }
    // The fourth failure goes over: locked, and then even the right password is refused.
    let r = sign_in(&auth, "DEMO ", "bad", None, None).await;
    assert_eq!(error_of(&r), "RateLimited");
    assert_eq!(r.status, 302);
    assert_eq!(r.headers["retry-after"], "120");
    assert!(
        r.location()
            .unwrap()
            .starts_with("https://authjs.test/auth/signin?")
    );
    let r = sign_in(&auth, "demo", "pw", None, None).await;
    assert_eq!(error_of(&r), "RateLimited");
    assert!(r.cookie(SESSION_COOKIE).is_none());
    // Another identifier is not affected.
    assert_eq!(
        error_of(&sign_in(&auth, "someone", "bad", None, None).await),
        "CredentialsSignin"
    );
    assert!(rec.error_types().contains(&"RateLimited".to_owned()));
    // Each refusal is an event naming the limit and the identifier (for alerting).
    let seen: Vec<Value> = rec
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|(name, _)| name == "rateLimited")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for e in seen {
        assert_eq!(e["limit"], "credentials_per_identifier");
        assert_eq!(e["identifier"], "demo", "as counted: trimmed, lower case");
        assert_eq!(e["client"], Value::Null);
        assert!(matches!(e["retryAfter"].as_u64(), Some(119..=120)), "{e}");
    }
    for line in rec.errors() {
        assert!(
            !line.to_lowercase().contains("demo"),
            "the identifier is not logged: {line}"
        );
    }
    // The sign-in page explains it.
    let page = send(
        &auth,
        get("/auth/signin?error=RateLimited").body(empty()).unwrap(),
    )
    .await;
    assert!(page.text().contains("Too many attempts"), "{}", page.text());
}

#[tokio::test]
async fn failures_per_client_count_across_identifiers_and_trust_only_configured_proxies() {
    let (auth, _) = auth_with(
        builder()
            .rate_limits(RateLimits {
                credentials_per_client: Some(RateLimit::new(2, MINUTE)),
                ..limits()
            })
            .trusted_proxies(["10.0.0.0/8"]),
    );
    let from = |ip| sign_in(&auth, "x", "bad", Some(ip), None);
    assert_eq!(error_of(&from("192.0.2.1").await), "CredentialsSignin");
    assert_eq!(
        error_of(&sign_in(&auth, "y", "bad", Some("192.0.2.1"), None).await),
        "CredentialsSignin"
    );
    assert_eq!(
        error_of(&sign_in(&auth, "z", "bad", Some("192.0.2.1"), None).await),
        "RateLimited"
    );
    // Another client is not; nor a request without a client address.
    assert_eq!(error_of(&from("192.0.2.2").await), "CredentialsSignin");
    for _ in 0..4 {
        assert_eq!(
            error_of(&sign_in(&auth, "x", "bad", None, None).await),
            "CredentialsSignin"
        );
    }
    // An untrusted peer's X-Forwarded-For is ignored: the peer is the client (locked).
    let r = sign_in(&auth, "x", "bad", Some("192.0.2.1"), Some("198.51.100.7")).await;
    assert_eq!(error_of(&r), "RateLimited");
    // Behind a trusted proxy, the last untrusted X-Forwarded-For entry is the client.
    for _ in 0..2 {
        let r = sign_in(
            &auth,
            "x",
            "bad",
            Some("10.0.0.5"),
            Some("192.0.2.1, 203.0.113.9, 10.1.1.1"),
        )
        .await;
        assert_eq!(
            error_of(&r),
            "CredentialsSignin",
            "203.0.113.9 is a new client"
        );
    }
    let r = sign_in(&auth, "x", "bad", Some("10.0.0.5"), Some("203.0.113.9")).await;
    assert_eq!(error_of(&r), "RateLimited");
    // The proxy's own other clients are separate.
    let r = sign_in(&auth, "x", "bad", Some("10.0.0.5"), Some("203.0.113.10")).await;
    assert_eq!(error_of(&r), "CredentialsSignin");
}

/// An attacker given an IPv6 `/64` has 2^64 addresses: each spelling of an address in it,
/// straight or through a trusted proxy's `X-Forwarded-For`, is one client, locked together;
/// the next `/64` is another client, and an IPv4-mapped address is its IPv4 client.
#[tokio::test]
async fn attack_rotating_addresses_within_an_ipv6_64_is_one_client() {
    let (auth, _) = auth_with(
        builder()
            .rate_limits(RateLimits {
                credentials_per_client: Some(RateLimit::new(3, MINUTE)),
                ..limits()
            })
            .trusted_proxies(["10.0.0.0/8"]),
    );
    for (peer, xff) in [
        ("2001:db8:1:2::1", None),
        ("2001:db8:1:2:ffff:ffff:ffff:fffe", None),
        ("10.0.0.5", Some("2001:DB8:0001:0002:0:0:0:9")),
    ] {
        let r = sign_in(&auth, "x", "bad", Some(peer), xff).await;
        assert_eq!(error_of(&r), "CredentialsSignin", "{peer} {xff:?}");
    }
    for (peer, xff) in [
        ("2001:db8:1:2:abcd:ef01:2345:6789", None),
        ("10.0.0.5", Some("2001:db8:1:2::7, 10.1.1.1")),
    ] {
        let r = sign_in(&auth, "x", "pw", Some(peer), xff).await;
        assert_eq!(error_of(&r), "RateLimited", "{peer} {xff:?}");
        assert!(r.cookie(SESSION_COOKIE).is_none());
    }
    // The neighbouring /64 is another client, and so is an IPv4 one.
    let r = sign_in(&auth, "x", "bad", Some("2001:db8:1:3::1"), None).await;
    assert_eq!(error_of(&r), "CredentialsSignin");
    for _ in 0..3 {
        let r = sign_in(&auth, "x", "bad", Some("::ffff:192.0.2.1"), None).await;
        assert_eq!(error_of(&r), "CredentialsSignin");
    }
    let r = sign_in(&auth, "x", "bad", Some("192.0.2.1"), None).await;
    assert_eq!(
        error_of(&r),
        "RateLimited",
        "the mapped address is its IPv4 client"
    );
}

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

#[tokio::test]
async fn magic_links_are_limited_per_address_and_per_client() {
    let outbox = Outbox::default();
    let sent = outbox.clone();
    let email = EmailProvider::new("a@example.com").send_verification_request(move |r| {
        let sent = sent.clone();
        async move {
            sent.lock().unwrap().push(r);
            Ok(())
        }
    });
    let (auth, _) = auth_with(
        builder()
            .provider(email)
            .adapter(MemoryAdapter::new())
            .rate_limits(RateLimits {
                emails_per_address: Some(RateLimit::new(2, MINUTE)),
                emails_per_client: Some(RateLimit::new(3, MINUTE)),
                ..limits()
            }),
    );
    let request = |address: &'static str, ip: &'static str| {
        let auth = auth.clone();
        async move {
            let (csrf, token) = csrf_pair();
            let mut req = post("/auth/signin/email")
                .header("cookie", csrf)
                .body(form(&[("csrfToken", &token), ("email", address)]))
                .unwrap();
            req.extensions_mut().insert(ClientAddr(ip.parse().unwrap()));
            send(&auth, req).await
        }
    };
    for _ in 0..2 {
        assert!(
            request("victim@example.com", "192.0.2.1")
                .await
                .location()
                .unwrap()
                .contains("verify-request")
        );
    }
    // The same address (any case) from another client: over the per-address limit.
    assert_eq!(
        error_of(&request("VICTIM@example.com", "192.0.2.9").await),
        "RateLimited"
    );
    assert_eq!(outbox.lock().unwrap().len(), 2, "no third mail");
    // One client, many addresses: its third mail passes, the fourth does not.
    assert!(
        request("other@example.com", "192.0.2.1")
            .await
            .location()
            .unwrap()
            .contains("verify-request")
    );
    assert_eq!(
        error_of(&request("third@example.com", "192.0.2.1").await),
        "RateLimited"
    );
    assert_eq!(outbox.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn posts_per_client_get_429_with_retry_after_for_json() {
    let (auth, _) = auth_with(builder().rate_limits(RateLimits {
        requests_per_client: Some(RateLimit::new(2, MINUTE)),
        ..limits()
    }));
    let sign_out = || {
        let auth = auth.clone();
        async move {
            let (csrf, token) = csrf_pair();
            let mut req = post("/auth/signout")
                .header("cookie", csrf)
                .header("x-auth-return-redirect", "1")
                .body(form(&[("csrfToken", &token)]))
                .unwrap();
            req.extensions_mut()
                .insert(ClientAddr("192.0.2.1".parse().unwrap()));
            send(&auth, req).await
        }
    };
    assert_eq!(sign_out().await.status, 200);
    assert_eq!(sign_out().await.status, 200);
    let r = sign_out().await;
    assert_eq!(r.status, 429);
    assert_eq!(r.headers["retry-after"], "60");
    assert!(
        r.json()["url"]
            .as_str()
            .unwrap()
            .contains("error=RateLimited")
    );
    // GETs (session reads) are not counted.
    let mut req = get("/auth/session").body(empty()).unwrap();
    req.extensions_mut()
        .insert(ClientAddr("192.0.2.1".parse().unwrap()));
    assert_eq!(send(&auth, req).await.status, 200);
}

#[tokio::test]
async fn account_route_changes_count_under_the_per_client_limit() {
    use authcore::account::AccountRoute;
    let (auth, _) = auth_with(builder().rate_limits(RateLimits {
        requests_per_client: Some(RateLimit::new(2, MINUTE)),
        ..limits()
    }));
    let change = |route: AccountRoute, ip: &str| {
        let auth = auth.clone();
        let ip = ip.parse().unwrap();
        async move {
            // Signed out: refused whatever else, but counted first.
            let mut req = post(route.path())
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(bytes::Bytes::from_static(
                    br#"{"csrfToken":"x"}"#,
                )))
                .unwrap();
            req.extensions_mut().insert(ClientAddr(ip));
            let r = auth.handle_account(route, req).await;
            (r.status().as_u16(), r.headers().get("retry-after").cloned())
        }
    };
    assert_eq!(change(AccountRoute::DeleteUser, "192.0.2.1").await.0, 401);
    // (A body without its `code`: 400, still counted.)
    assert_eq!(change(AccountRoute::ConfirmTotp, "192.0.2.1").await.0, 400);
    let (status, retry) = change(AccountRoute::Unlink, "192.0.2.1").await;
    assert_eq!(status, 429);
    assert_eq!(retry.unwrap(), "60");
    // Another client, and reads, are not held back.
    assert_eq!(change(AccountRoute::DeleteUser, "192.0.2.2").await.0, 401);
    let mut req = get(AccountRoute::Methods.path()).body(empty()).unwrap();
    req.extensions_mut()
        .insert(ClientAddr("192.0.2.1".parse().unwrap()));
    let r = auth.handle_account(AccountRoute::Methods, req).await;
    assert_eq!(r.status().as_u16(), 401);
}

/// A store that always fails.
#[derive(Debug)]
struct Down;

#[async_trait::async_trait]
impl RateLimitStore for Down {
    async fn lockout_left(&self, _: &str) -> Result<Option<Duration>, BoxError> {
        Err("connection refused".into())
    }
    async fn count(&self, _: &str, _: &RateLimit) -> Result<Option<Duration>, BoxError> {
        Err("connection refused".into())
    }
    async fn give_back(&self, _: &str) -> Result<(), BoxError> {
        Err("connection refused".into())
    }
    async fn reset(&self, _: &str) -> Result<(), BoxError> {
        Err("connection refused".into())
    }
}

#[tokio::test]
async fn a_failing_store_fails_open() {
    let (auth, _) = auth_with(
        builder()
            .rate_limits(RateLimits::recommended())
            .rate_limit_store(Down),
    );
    let r = sign_in(&auth, "demo", "pw", Some("192.0.2.1"), None).await;
    assert!(r.cookie(SESSION_COOKIE).is_some(), "sign-in still works");
    assert_eq!(
        error_of(&sign_in(&auth, "demo", "bad", Some("192.0.2.1"), None).await),
        "CredentialsSignin"
    );
}

#[test]
fn invalid_trusted_proxies_fail_the_build() {
    let err = builder()
        .trusted_proxies(["10.0.0.0/33"])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("10.0.0.0/33"), "{err}");
}

/// Every sign-in leaves a log line naming who and from where: a success the user, the
/// provider and the client address; a failure the identifier tried (not when it looks like
/// a password typed into the username field) and the client address. No password in either.
#[tokio::test]
async fn each_sign_in_is_logged_with_who_and_from_where() {
    let (_guard, lines) = TracingCapture::install();
    let (auth, _) = auth_with(builder());
    sign_in(&auth, "demo", "pw", Some("192.0.2.7"), None).await;
    sign_in(
        &auth,
        "mallory@example.com",
        "guess-one",
        Some("198.51.100.9"),
        None,
    )
    .await;
    sign_in(
        &auth,
        "my secret password",
        "guess-two",
        Some("198.51.100.9"),
        None,
    )
    .await;
    let logged = lines.lock().unwrap().join("\n");
    let line = |needle: &str| {
        logged
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} line in:\n{logged}"))
            .to_owned()
    };
    let ok = line("signed in");
    assert!(ok.contains("user=\"1\"") || ok.contains("user=1"), "{ok}");
    assert!(
        ok.contains("192.0.2.7") && ok.contains("credentials"),
        "{ok}"
    );
    let failed: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("sign-in failed"))
        .collect();
    assert_eq!(failed.len(), 2, "{logged}");
    assert!(failed[0].contains("mallory@example.com") && failed[0].contains("198.51.100.9"));
    assert!(failed[1].contains("not shown"), "{}", failed[1]);
    for secret in ["pw\"", "guess-one", "guess-two", "my secret password"] {
        assert!(!logged.contains(secret), "{secret} in:\n{logged}");
    }
}

/// A flood of refused attempts makes one `lockedOut` audit record per lock-out, and each
/// failed sign-in says who was tried and from where (never the password).
#[tokio::test]
async fn a_lock_out_is_one_audit_record_however_many_attempts_it_refuses() {
    use authcore::adapter::{AuditLogStore, AuditQuery};
    let db = MemoryAdapter::new();
    let (auth, _) = auth_with(
        builder()
            .adapter(db.clone())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .audit_log(authcore::audit::AuditLog::new().store(true))
            .rate_limits(RateLimits {
                credentials_per_identifier: Some(RateLimit::new(3, MINUTE).lockout(2 * MINUTE)),
                ..limits()
            }),
    );
    for _ in 0..20 {
        sign_in(&auth, "demo", "wrong horse", Some("192.0.2.7"), None).await;
    }
    let records = db
        .query_audit_records(&AuditQuery {
            ascending: true,
            limit: 1000,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "lockedOut").count(),
        1,
        "{kinds:?}"
    );
    let failed: Vec<_> = records
        .iter()
        .filter(|r| r.kind == "signInFailed")
        .collect();
    assert_eq!(failed.len(), 3, "{kinds:?}");
    let data: Value = serde_json::from_str(&failed[0].data).unwrap();
    assert_eq!(data["identifier"], "demo");
    assert_eq!(data["client"], "192.0.2.7");
    assert!(records.iter().all(|r| !r.data.contains("wrong horse")));
}
