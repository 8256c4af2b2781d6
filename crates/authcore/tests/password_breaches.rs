//! The password policy's breach service (`BreachCheck`, Have I Been Pwned's k-anonymity
//! range API) against a local HTTP server standing in for it: a breached password is
//! refused and a clean one accepted; only the first five hex digits of the SHA-1 leave the
//! host, never the password or the rest of its hash; a service that is down, answers an
//! error or garbage, or never answers fails open (the password accepted, a warning logged
//! without the password), within the lookup's timeout.
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::TracingCapture;
use authcore::passwords::{BreachCheck, PasswordContext, PasswordPolicy, PolicyViolation};
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};

/// Known to the stand-in as breached. SHA-1 (Python's hashlib):
/// EBCBA3477F01C01BA9011F911D52BE01C652C755.
const BREACHED: &str = "velvet-kettle-2019!";
const BREACHED_SHA1: &str = "EBCBA3477F01C01BA9011F911D52BE01C652C755";
/// Under its prefix the stand-in lists its suffix only as padding (count 0). SHA-1:
/// B27F77BA74861D1F8A72C84D21F1F9585090F651.
const CLEAN: &str = "quiet-lantern-orchard-7";
const CLEAN_SHA1: &str = "B27F77BA74861D1F8A72C84D21F1F9585090F651";

/// One request the stand-in received, as text: method, path and query, headers, body.
type Received = Arc<Mutex<Vec<String>>>;

/// How the stand-in answers.
#[derive(Clone, Copy)]
enum Behaviour {
    /// The range API: the two prefixes above, with padding, else an empty range.
    Ranges,
    /// HTTP 503.
    Unavailable,
    /// 200 with a body that is no range.
    Garbage,
    /// Never answers.
    Hangs,
}

fn range_body(prefix: &str) -> String {
    let breached = format!("{}:42", &BREACHED_SHA1[5..]);
    let padding = format!("{}:0", &CLEAN_SHA1[5..]);
    let mut lines = vec![
        "0018A45C4D1DEF81644B54AB7F969B88D65:3".to_owned(),
        "00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2".to_owned(),
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0".to_owned(),
    ];
    if prefix == &BREACHED_SHA1[..5] {
        lines.insert(1, breached);
    }
    if prefix == &CLEAN_SHA1[..5] {
        lines.insert(1, padding);
    }
    lines.join("\r\n")
}

/// A local HTTP server behaving as `behaviour`, recording what it got; its range URL.
async fn stand_in(behaviour: Behaviour) -> (String, Received) {
    let received: Received = Arc::default();
    let log = received.clone();
    let app = axum::Router::new().fallback(
        move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let log = log.clone();
            async move {
                log.lock()
                    .unwrap()
                    .push(format!("{method} {uri} {headers:?} {body:?}"));
                let prefix = uri.path().trim_start_matches("/range/").to_owned();
                match behaviour {
                    Behaviour::Ranges => (StatusCode::OK, range_body(&prefix)),
                    Behaviour::Unavailable => {
                        (StatusCode::SERVICE_UNAVAILABLE, "try later".to_owned())
                    }
                    Behaviour::Garbage => (StatusCode::OK, "<html>hello</html>".to_owned()),
                    Behaviour::Hangs => std::future::pending().await,
                }
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/range/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// Asserts that nothing received holds the password, its full hash or the hash's suffix.
fn assert_nothing_leaked(received: &[String], password: &str, sha1: &str) {
    for request in received {
        let lower = request.to_lowercase();
        for secret in [password, sha1, &sha1[5..]] {
            assert!(
                !lower.contains(&secret.to_lowercase()),
                "{secret} leaked in {request}"
            );
        }
    }
}

#[tokio::test]
async fn a_breached_password_is_refused_and_only_its_prefix_leaves() {
    let (url, received) = stand_in(Behaviour::Ranges).await;
    let breaches = BreachCheck::new(&url).unwrap();
    let policy = PasswordPolicy::default();
    let answer = policy
        .check_with_breaches(BREACHED, &PasswordContext::new(), Some(&breaches))
        .await;
    assert_eq!(answer, Err(PolicyViolation::Breached));
    assert_eq!(answer.unwrap_err().code(), "breached");
    assert_eq!(breaches.times_seen(BREACHED).await.unwrap(), 42);

    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2);
    for request in &received {
        // Exactly five upper-case hex digits, the padding asked for, no body.
        let path = format!("GET /range/{} ", &BREACHED_SHA1[..5]);
        assert!(request.starts_with(&path), "{request}");
        assert!(request.contains(r#""add-padding": "true""#), "{request}");
        assert!(request.ends_with(" b\"\""), "{request}");
    }
    assert_nothing_leaked(&received, BREACHED, BREACHED_SHA1);
}

#[tokio::test]
async fn a_clean_password_is_accepted_and_padding_is_no_breach() {
    let (url, received) = stand_in(Behaviour::Ranges).await;
    let breaches = BreachCheck::new(&url).unwrap();
    let answer = PasswordPolicy::default()
        .check_with_breaches(CLEAN, &PasswordContext::new(), Some(&breaches))
        .await;
    assert_eq!(answer, Ok(()));
    assert_eq!(breaches.times_seen(CLEAN).await.unwrap(), 0);
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2);
    assert!(received[0].starts_with(&format!("GET /range/{} ", &CLEAN_SHA1[..5])));
    assert_nothing_leaked(&received, CLEAN, CLEAN_SHA1);
}

#[tokio::test]
async fn a_password_the_offline_check_refuses_is_never_sent() {
    let (url, received) = stand_in(Behaviour::Ranges).await;
    let breaches = BreachCheck::new(&url).unwrap();
    let policy = PasswordPolicy::default();
    let alice = PasswordContext::new().username("alice");
    for (password, code) in [
        ("Password1234", "common"),
        ("aaaaaaaaaaaa", "repetitive"),
        ("short", "too_short"),
        ("alice-in-wonderland", "contains_identity"),
    ] {
        let answer = policy
            .check_with_breaches(password, &alice, Some(&breaches))
            .await;
        assert_eq!(answer.unwrap_err().code(), code, "{password}");
    }
    assert!(received.lock().unwrap().is_empty());
    // Without a service, the offline check alone.
    assert_eq!(
        policy.check_with_breaches(BREACHED, &alice, None).await,
        Ok(())
    );
}

/// A service that is down, fails, answers garbage or never answers does not block the
/// password (fail open), answers within the timeout, and logs a warning without the
/// password or its hash.
#[tokio::test]
async fn a_failing_service_fails_open_with_a_warning_within_the_timeout() {
    // A port nothing listens on: the connection is refused at once.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/range/", listener.local_addr().unwrap());
        drop(listener);
        url
    };
    let timeout = Duration::from_millis(300);
    let cases = [
        ("down", None, "the request failed"),
        ("503", Some(Behaviour::Unavailable), "HTTP 503"),
        ("garbage", Some(Behaviour::Garbage), "unreadable answer"),
        ("hangs", Some(Behaviour::Hangs), "no answer within 300ms"),
    ];
    for (name, behaviour, reason) in cases {
        let (url, received) = match behaviour {
            Some(b) => stand_in(b).await,
            None => (closed.clone(), Received::default()),
        };
        let breaches = BreachCheck::new(&url).unwrap().timeout(timeout);
        let (_guard, lines) = TracingCapture::install();
        let started = Instant::now();
        let answer = PasswordPolicy::default()
            .check_with_breaches(BREACHED, &PasswordContext::new(), Some(&breaches))
            .await;
        let took = started.elapsed();
        assert_eq!(answer, Ok(()), "{name}");
        assert!(took < timeout + Duration::from_secs(2), "{name}: {took:?}");
        if name == "hangs" {
            assert!(took >= timeout, "{name}: {took:?}");
        }
        let lines = lines.lock().unwrap().clone();
        let warning = lines
            .iter()
            .find(|l| l.starts_with("WARN") && l.contains("breach check failed"))
            .unwrap_or_else(|| panic!("{name}: no warning in {lines:?}"));
        assert!(warning.contains(reason), "{name}: {warning}");
        assert_nothing_leaked(&lines, BREACHED, BREACHED_SHA1);
        assert_nothing_leaked(&received.lock().unwrap(), BREACHED, BREACHED_SHA1);
    }
}
