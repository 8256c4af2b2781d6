//! Attempt accounting under attack, over real TCP, with the counts in memory and in Redis:
//! bursts of credentials sign-ins sent whole but their last byte, then every last byte at
//! once, against an `authorize` that takes 50 ms (as a password hash or a database lookup
//! would). However the requests interleave, `authorize` runs at most the limit's worth of
//! times and no more than that many answers are anything but `RateLimited`. Identifiers
//! built to collide with the limiter's own keys (`demo:lock`) count for themselves only.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use authcore::adapter::MemoryAdapter;
use authcore::providers::{CredentialsProvider, email::EmailProvider};
use authcore::ratelimit::{RateLimit, RateLimits};
use authcore::{Auth, AuthConfig, SessionStrategy, User};
use authcore_axum::AuthRouterExt;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PASSWORD: &str = "correct horse";
const WINDOW: Duration = Duration::from_secs(900);

/// Where the counts live.
#[derive(Clone, Copy, Debug)]
enum Store {
    Memory,
    Redis,
}

/// A served handler, the number of `authorize` calls it has made and of magic-link mails
/// it has sent.
struct Target {
    addr: SocketAddr,
    authorize_calls: Arc<AtomicUsize>,
    mails: Arc<AtomicUsize>,
}

async fn start(store: Store, limits: RateLimits) -> Target {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let provider = CredentialsProvider::new().authorize(move |credentials, _| {
        let counted = Arc::clone(&counted);
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            let field = |k: &str| {
                credentials
                    .get(k)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            Ok((field("password").as_deref() == Some(PASSWORD))
                .then(|| User::with_id(field("username").unwrap_or_default())))
        }
    });
    let mails = Arc::new(AtomicUsize::new(0));
    let sent = Arc::clone(&mails);
    let email = EmailProvider::new("auth@example.com").send_verification_request(move |_| {
        sent.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    });
    let mut builder = AuthConfig::builder()
        .secret("attempt-accounting-secret-0123456789")
        .trust_host(true)
        .provider(provider)
        .provider(email)
        .adapter(MemoryAdapter::new())
        .session_strategy(SessionStrategy::Jwt)
        .rate_limits(limits);
    if let Store::Redis = store {
        let url = std::env::var("AUTHCORE_TEST_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
        // A prefix of this run only, so runs and other tests do not share counts.
        let prefix = format!("attempts-{}-{}:", std::process::id(), nanos());
        let redis = authcore_redis::RedisAdapter::connect(&url)
            .await
            .unwrap()
            .with_prefix(prefix);
        builder = builder.rate_limit_store(redis.rate_limit_store());
    }
    let auth = Auth::new(builder.build().unwrap());
    let app = axum::Router::new().auth_routes(auth);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    Target {
        addr,
        authorize_calls: calls,
        mails,
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// One whole HTTP exchange on a fresh connection; the raw response.
async fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    out
}

/// A CSRF cookie and its token (the double-submit pair stays valid for every request).
async fn csrf(addr: SocketAddr) -> (String, String) {
    let raw = exchange(
        addr,
        b"GET /auth/csrf HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    let (head, body) = split(&raw);
    let cookie = head
        .headers
        .iter()
        .find(|(k, _)| k == "set-cookie")
        .map(|(_, v)| v.split(';').next().unwrap().to_owned())
        .unwrap();
    let token = serde_json::from_slice::<Value>(body).unwrap()["csrfToken"]
        .as_str()
        .unwrap()
        .to_owned();
    (cookie, token)
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

fn split(raw: &[u8]) -> (Head, &[u8]) {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(len) = res.parse(raw).unwrap() else {
        panic!("incomplete response: {}", String::from_utf8_lossy(raw));
    };
    let head = Head {
        status: res.code.unwrap(),
        headers: res
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_ascii_lowercase(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
    };
    (head, &raw[len..])
}

/// What a sign-in answer was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    SignedIn,
    WrongPassword,
    RateLimited,
}

fn outcome(raw: &[u8]) -> Outcome {
    let (head, _) = split(raw);
    assert_eq!(head.status, 302, "{}", String::from_utf8_lossy(raw));
    let header = |name: &str| {
        head.headers
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
    };
    let location = header("location").concat();
    if location.contains("error=RateLimited") {
        Outcome::RateLimited
    } else if location.contains("error=CredentialsSignin") {
        Outcome::WrongPassword
    } else if header("set-cookie")
        .iter()
        .any(|c| c.starts_with("authjs.session-token="))
    {
        Outcome::SignedIn
    } else {
        panic!("unexpected answer: {}", String::from_utf8_lossy(raw))
    }
}

/// A form `POST` to `path` with the CSRF pair and `fields`.
fn form_request(csrf: &(String, String), path: &str, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = form_urlencoded::Serializer::new(String::new());
    body.append_pair("csrfToken", &csrf.1);
    for (k, v) in fields {
        body.append_pair(k, v);
    }
    let body = body.finish();
    format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Cookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\n\r\n{body}",
        csrf.0,
        body.len()
    )
    .into_bytes()
}

fn sign_in_request(csrf: &(String, String), username: &str, password: &str) -> Vec<u8> {
    form_request(
        csrf,
        "/auth/callback/credentials",
        &[("username", username), ("password", password)],
    )
}

/// Sends every request but its last byte on a connection of its own, then all last bytes
/// at once; the outcomes in request order.
async fn burst(addr: SocketAddr, requests: Vec<Vec<u8>>) -> Vec<Outcome> {
    let mut held = Vec::new();
    for request in &requests {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(&request[..request.len() - 1])
            .await
            .unwrap();
        held.push(stream);
    }
    let tasks: Vec<_> = held
        .into_iter()
        .zip(requests)
        .map(|(mut stream, request)| {
            tokio::spawn(async move {
                stream
                    .write_all(&request[request.len() - 1..])
                    .await
                    .unwrap();
                let mut out = Vec::new();
                tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut out))
                    .await
                    .unwrap()
                    .unwrap();
                out
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(outcome(&t.await.unwrap()));
    }
    outcomes
}

fn tally(outcomes: &[Outcome], which: Outcome) -> usize {
    outcomes.iter().filter(|o| **o == which).count()
}

fn per_identifier(limit: u32) -> RateLimits {
    RateLimits {
        credentials_per_identifier: Some(RateLimit::new(limit, WINDOW)),
        ..RateLimits::default()
    }
}

async fn a_burst_on_one_identifier_checks_at_most_the_limit(store: Store) {
    let target = start(store, per_identifier(5)).await;
    let pair = csrf(target.addr).await;
    // 100 wrong guesses and the right password last.
    let mut requests: Vec<_> = (0..100)
        .map(|i| sign_in_request(&pair, "demo", &format!("guess-{i}")))
        .collect();
    requests.push(sign_in_request(&pair, "demo", PASSWORD));
    let outcomes = burst(target.addr, requests).await;
    let calls = target.authorize_calls.load(Ordering::SeqCst);
    // The first five reservations always pass: not one more reaches `authorize`.
    assert_eq!(calls, 5, "{store:?}: authorize ran {calls} times");
    let checked = outcomes.len() - tally(&outcomes, Outcome::RateLimited);
    assert_eq!(checked, calls, "{store:?}: {outcomes:?}");
    // The right password is one of 101 guesses: it signs in only if it was among the
    // five checked, never by winning a race past the lock.
    assert!(tally(&outcomes, Outcome::SignedIn) <= 1);
    if tally(&outcomes, Outcome::SignedIn) == 0 {
        // Locked now: the right password is refused without being checked.
        let after = exchange(target.addr, &sign_in_request(&pair, "demo", PASSWORD)).await;
        assert_eq!(outcome(&after), Outcome::RateLimited);
        assert_eq!(target.authorize_calls.load(Ordering::SeqCst), calls);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_back_burst_on_one_identifier_checks_at_most_the_limit_in_memory() {
    a_burst_on_one_identifier_checks_at_most_the_limit(Store::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_back_burst_on_one_identifier_checks_at_most_the_limit_in_redis() {
    a_burst_on_one_identifier_checks_at_most_the_limit(Store::Redis).await;
}

async fn a_burst_from_one_client_checks_at_most_its_limit(store: Store) {
    let target = start(
        store,
        RateLimits {
            credentials_per_client: Some(RateLimit::new(20, WINDOW)),
            ..per_identifier(5)
        },
    )
    .await;
    let pair = csrf(target.addr).await;
    // 200 wrong guesses spread over 40 identifiers, all from 127.0.0.1.
    let requests = (0..200)
        .map(|i| sign_in_request(&pair, &format!("user{}", i % 40), "wrong"))
        .collect();
    let outcomes = burst(target.addr, requests).await;
    let calls = target.authorize_calls.load(Ordering::SeqCst);
    // Five per name would all pass; the client's limit stops the burst at 20.
    assert_eq!(calls, 20, "{store:?}: authorize ran {calls} times");
    assert_eq!(tally(&outcomes, Outcome::WrongPassword), calls);
    assert_eq!(tally(&outcomes, Outcome::SignedIn), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_back_burst_from_one_client_checks_at_most_its_limit_in_memory() {
    a_burst_from_one_client_checks_at_most_its_limit(Store::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_back_burst_from_one_client_checks_at_most_its_limit_in_redis() {
    a_burst_from_one_client_checks_at_most_its_limit(Store::Redis).await;
}

/// Identifiers spelled like the limiter's own key parts count for themselves only: they
/// neither lock `demo` out nor lift `demo`'s lock.
async fn identifiers_cannot_steer_other_keys(store: Store) {
    let target = start(store, per_identifier(2)).await;
    let pair = csrf(target.addr).await;
    let send = |user: &'static str, password: &'static str| {
        let request = sign_in_request(&pair, user, password);
        async move { outcome(&exchange(target.addr, &request).await) }
    };
    // Three failures as `demo:lock` lock that name, not `demo`.
    for expected in [
        Outcome::WrongPassword,
        Outcome::WrongPassword,
        Outcome::RateLimited,
    ] {
        assert_eq!(send("demo:lock", "wrong").await, expected, "{store:?}");
    }
    assert_eq!(send("demo", PASSWORD).await, Outcome::SignedIn, "{store:?}");
    // Lock `demo`; failures as names around its key do not lift the lock.
    for _ in 0..3 {
        send("demo", "wrong").await;
    }
    for steer in [
        "demo:lock",
        "demo:count",
        ":lock",
        "lock:demo",
        "count:demo",
        "demo\n",
    ] {
        for _ in 0..3 {
            send(steer, "wrong").await;
        }
    }
    assert_eq!(
        send("demo", PASSWORD).await,
        Outcome::RateLimited,
        "{store:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identifiers_cannot_steer_other_keys_in_memory() {
    identifiers_cannot_steer_other_keys(Store::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identifiers_cannot_steer_other_keys_in_redis() {
    identifiers_cannot_steer_other_keys(Store::Redis).await;
}

/// Mails to an address spelled around the victim's key (`victim@example.com:lock`) count
/// for that string only: they do not reset the victim's mail count.
async fn mail_names_cannot_reset_another_address(store: Store) {
    let target = start(
        store,
        RateLimits {
            emails_per_address: Some(RateLimit::new(3, WINDOW)),
            ..RateLimits::default()
        },
    )
    .await;
    let pair = csrf(target.addr).await;
    let send = |email: &'static str| {
        let request = form_request(&pair, "/auth/signin/email", &[("email", email)]);
        async move {
            let raw = exchange(target.addr, &request).await;
            let (head, _) = split(&raw);
            head.headers
                .iter()
                .any(|(k, v)| k == "location" && v.contains("error=RateLimited"))
        }
    };
    for _ in 0..3 {
        assert!(!send("victim@example.com").await, "{store:?}");
    }
    assert!(send("victim@example.com").await, "{store:?}: limited");
    for steer in ["victim@example.com:lock", "victim@example.com:count"] {
        for _ in 0..3 {
            send(steer).await;
        }
    }
    assert!(send("victim@example.com").await, "{store:?}: still limited");
    // 3 to the victim, 3 to each steering name: no fourth mail to the victim.
    assert_eq!(target.mails.load(Ordering::SeqCst), 9, "{store:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_names_cannot_reset_another_address_in_memory() {
    mail_names_cannot_reset_another_address(Store::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_names_cannot_reset_another_address_in_redis() {
    mail_names_cannot_reset_another_address(Store::Redis).await;
}
