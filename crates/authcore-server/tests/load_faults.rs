//! Load with faults: two server instances (authcore behind the server's own
//! listener, each on its loopback port with its own pool) share one store — PostgreSQL,
//! then Redis — through a TCP proxy that can fail. Users sign in by magic link on one
//! instance and open the link on the other; then session reads go to random instances,
//! and each answer must name the user whose cookie was sent. Then the store is stopped
//! (connections refused) and then silent (connections hang) for [`OUTAGE`] each while
//! traffic goes on: every request must end within the adapters' 5 s bound plus slack,
//! cleanly (a `null` session that keeps the cookie, or an error page), never with another
//! user's session; and once each instance's circuit breaker has opened (by the end of the
//! first timeout at the latest), every request started after that answers in under
//! [`AT_ONCE`] instead of waiting out the timeout. After the store is back, both instances
//! serve every session again without a restart.
//!
//! Size: `LOAD_SIGNINS` sign-ins and `LOAD_READS` reads per store (defaults 200 and 2,000,
//! the short form the test command runs); `bench/faults.sh` runs 10,000 and 100,000 in
//! release mode and prints the figures.

use crate::support::fault_proxy;
use crate::support::pg;
use pg::admin_sql;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use authcore::adapter::Adapter;
use authcore::providers::email::EmailProvider;
use authcore::{Auth, AuthConfig};
use authcore_axum::AuthRouterExt;
use authcore_server::serve::{ConnectionLimits, serve};
use fault_proxy::{FaultProxy, Mode};
use futures_util::StreamExt;
use futures_util::stream;

const SECRET: &str = "load-faults-secret-0123456789abcdef";
const SESSION: &str = "authjs.session-token";
/// The adapters' default bound on one operation, and the slack allowed on top of it.
const BOUND: Duration = Duration::from_secs(5);
const SLACK: Duration = Duration::from_millis(1500);
/// How long each outage lasts: long enough for the breakers to open (by `BOUND` after it
/// began) and for a stretch of requests after that.
const OUTAGE: Duration = Duration::from_secs(9);
/// The bound on a request started once the breakers are open (a behaviour check, not a
/// benchmark: far below `BOUND`).
const AT_ONCE: Duration = Duration::from_secs(1);

/// Magic links sent, by address.
type Outbox = Arc<Mutex<HashMap<String, String>>>;

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Serves an authcore instance on `adapter` on a free loopback port; its base URL.
async fn instance(adapter: impl Adapter, outbox: &Outbox) -> String {
    let sent = outbox.clone();
    let email = EmailProvider::new("load@authcore.test").send_verification_request(move |r| {
        let sent = sent.clone();
        async move {
            sent.lock().unwrap().insert(r.identifier, r.url);
            Ok(())
        }
    });
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(email)
            .adapter(adapter)
            .build()
            .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().auth_routes(auth);
    tokio::spawn(serve(
        listener,
        app,
        ConnectionLimits::default(),
        std::future::pending(),
    ));
    base
}

struct Cluster {
    bases: [String; 2],
    outbox: Outbox,
    client: reqwest::Client,
}

/// What one request gave.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Signed in / the session of the cookie's user.
    Ok,
    /// A clean refusal: a `null` session keeping the cookie, an error page, a 5xx.
    Refused,
    /// Anything else (another user's session, a cleared cookie, a transport error).
    Wrong(String),
}

impl Cluster {
    /// Signs `email` in: the link is requested on instance `i` and opened on the other.
    async fn sign_in(&self, i: usize, email: &str) -> (Outcome, Option<String>) {
        let token = "d".repeat(64);
        let csrf = authcore::csrf::csrf_cookie_value(&token, SECRET).replace('|', "%7C");
        let r = match self
            .client
            .post(format!("{}/auth/signin/email", self.bases[i % 2]))
            .header("cookie", format!("authjs.csrf-token={csrf}"))
            .form(&[("csrfToken", token.as_str()), ("email", email)])
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => return (Outcome::Wrong(format!("sign-in request: {e}")), None),
        };
        let location = location_of(&r);
        if !location.contains("/auth/verify-request") {
            return (refused_or_wrong(r.status(), &location), None);
        }
        let Some(link) = self.outbox.lock().unwrap().remove(email) else {
            return (Outcome::Wrong("no link sent".into()), None);
        };
        // The link names the instance it was requested on; open it on the other one.
        let link = link.replacen(&self.bases[i % 2], &self.bases[(i + 1) % 2], 1);
        let r = match self.client.get(link).send().await {
            Ok(r) => r,
            Err(e) => return (Outcome::Wrong(format!("link: {e}")), None),
        };
        match session_cookie(&r) {
            Some(c) if !c.is_empty() => (Outcome::Ok, Some(c)),
            _ => (refused_or_wrong(r.status(), &location_of(&r)), None),
        }
    }

    /// Reads the session of `cookie` (`email`'s) on instance `i`.
    async fn read(&self, i: usize, email: &str, cookie: &str) -> Outcome {
        let r = match self
            .client
            .get(format!("{}/auth/session", self.bases[i % 2]))
            .header("cookie", format!("{SESSION}={cookie}"))
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => return Outcome::Wrong(format!("session request: {e}")),
        };
        if session_cookie(&r).is_some_and(|c| c.is_empty()) {
            return Outcome::Wrong("the session cookie was cleared".into());
        }
        let status = r.status();
        if status.is_server_error() {
            return Outcome::Refused;
        }
        let body: serde_json::Value = r.json().await.unwrap_or_default();
        match body["user"]["email"].as_str() {
            Some(e) if e == email => Outcome::Ok,
            Some(other) => Outcome::Wrong(format!("{email} got {other}'s session")),
            None if body.is_null() => Outcome::Refused,
            None => Outcome::Wrong(format!("{status}: {body}")),
        }
    }
}

fn location_of(r: &reqwest::Response) -> String {
    r.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

fn refused_or_wrong(status: reqwest::StatusCode, location: &str) -> Outcome {
    if status.is_server_error() || location.contains("/auth/error?error=") {
        Outcome::Refused
    } else {
        Outcome::Wrong(format!("{status} to {location:?}"))
    }
}

/// The value set for the session cookie, if the response sets it (`""`: cleared).
fn session_cookie(r: &reqwest::Response) -> Option<String> {
    r.headers().get_all("set-cookie").iter().find_map(|v| {
        let v = v.to_str().ok()?;
        let rest = v.strip_prefix(SESSION)?.strip_prefix('=')?;
        Some(rest.split(';').next().unwrap_or_default().to_owned())
    })
}

/// Reads `(instance, user)` pairs 32 at a time; what was not the user's own session.
async fn bad_reads(
    cluster: &Cluster,
    users: &[(String, String)],
    reads: impl Iterator<Item = (usize, usize)>,
) -> Vec<String> {
    stream::iter(reads)
        .map(|(i, u)| async move {
            let (email, cookie) = &users[u];
            match cluster.read(i, email, cookie).await {
                Outcome::Ok => None,
                other => Some(format!("{email} on instance {}: {other:?}", i % 2)),
            }
        })
        .buffer_unordered(32)
        .filter_map(|w| async move { w })
        .collect()
        .await
}

/// Steady load, two outages, recovery; prints the figures and checks every property.
async fn run(name: &str, proxy: &FaultProxy, cluster: &Cluster) {
    let (signins, reads) = (count("LOAD_SIGNINS", 200), count("LOAD_READS", 2_000));
    let run_id = std::process::id();

    // 1. Sign-ins, 16 at a time, alternating instances.
    let started = Instant::now();
    let users: Vec<(String, String)> = stream::iter(0..signins)
        .map(|i| async move {
            let email = format!("u{i}-{run_id}@{name}.load.test");
            let (outcome, cookie) = cluster.sign_in(i, &email).await;
            assert_eq!(outcome, Outcome::Ok, "sign-in {i}");
            (email, cookie.unwrap())
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let signin_secs = started.elapsed().as_secs_f64();

    // 2. Session reads, 32 at a time, users and instances spread.
    let started = Instant::now();
    let users = &users;
    let wrong = bad_reads(
        cluster,
        users,
        (0..reads).map(|k| (k, (k * 7919) % users.len())),
    )
    .await;
    let read_secs = started.elapsed().as_secs_f64();
    assert!(
        wrong.is_empty(),
        "{name}: {} bad reads: {wrong:?}",
        wrong.len()
    );

    // 3. Outages: refused, then silent, each for `OUTAGE` under traffic.
    let mut figures = Vec::new();
    for mode in [Mode::Refuse, Mode::Silent] {
        proxy.set(mode);
        let began = Instant::now();
        let until = began + OUTAGE;
        let results: Vec<(Duration, Duration, Outcome)> = stream::iter(0..)
            .take_while(|_| std::future::ready(Instant::now() < until))
            .map(|k: usize| async move {
                let t = Instant::now();
                let started = t - began;
                let outcome = if k % 8 == 7 {
                    cluster
                        .sign_in(k, &format!("outage{k}-{run_id}@{name}.load.test"))
                        .await
                        .0
                } else {
                    let (email, cookie) = &users[k % users.len()];
                    cluster.read(k, email, cookie).await
                };
                (started, t.elapsed(), outcome)
            })
            .buffer_unordered(16)
            .collect()
            .await;
        proxy.set(Mode::Up);
        let slowest = results.iter().map(|(_, d, _)| *d).max().unwrap_or_default();
        let refused = results
            .iter()
            .filter(|(_, _, o)| *o == Outcome::Refused)
            .count();
        // Requests started once every breaker must be open (the first timeout, plus slack).
        let open = results
            .iter()
            .filter(|(started, _, _)| *started >= BOUND + SLACK)
            .map(|(_, d, _)| *d);
        let answered_open = open.clone().count();
        let slowest_open = open.max().unwrap_or_default();
        for (started, d, o) in &results {
            assert!(!matches!(o, Outcome::Wrong(_)), "{name} {mode:?}: {o:?}");
            assert!(*d <= BOUND + SLACK, "{name} {mode:?}: a request took {d:?}");
            assert!(
                *started < BOUND + SLACK || *d < AT_ONCE,
                "{name} {mode:?}: a request started {started:?} into the outage took {d:?}"
            );
        }
        assert!(
            answered_open > 0,
            "{name} {mode:?}: no request after the breakers opened"
        );
        // Back without a restart: every user's session on both instances.
        let started = Instant::now();
        loop {
            let (email, cookie) = &users[0];
            if cluster.read(0, email, cookie).await == Outcome::Ok
                && cluster.read(1, email, cookie).await == Outcome::Ok
            {
                break;
            }
            assert!(
                started.elapsed() < BOUND * 3,
                "{name}: no recovery after {mode:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let recovery = started.elapsed();
        let lost = bad_reads(cluster, users, (0..users.len()).map(|k| (k, k))).await;
        assert!(lost.is_empty(), "{name}: after {mode:?}: {lost:?}");
        figures.push(format!(
            "{mode:?}: {} requests, {refused} refused cleanly, slowest {:.2} s ({answered_open} once the breakers were open: slowest {:.3} s), back in {:.2} s",
            results.len(),
            slowest.as_secs_f64(),
            slowest_open.as_secs_f64(),
            recovery.as_secs_f64()
        ));
    }
    println!(
        "load_faults {name}: {signins} sign-ins in {signin_secs:.1} s ({:.0}/s), {reads} reads in {read_secs:.1} s ({:.0}/s), 0 errors, 0 lost, 0 crossed; {}",
        signins as f64 / signin_secs,
        reads as f64 / read_secs,
        figures.join("; ")
    );
}

fn cluster(bases: [String; 2], outbox: Outbox) -> Cluster {
    Cluster {
        bases,
        outbox,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_two_instances_through_an_outage() {
    let schema = format!("authcore_load_{}", std::process::id());
    let (proxy, target) = pg::schema_behind_fault_proxy(&schema).await;
    let outbox = Outbox::default();
    let mut bases = Vec::new();
    for _ in 0..2 {
        let db = authcore_sqlx::SqlxAdapter::postgres(&target).await.unwrap();
        db.migrate().await.unwrap();
        bases.push(instance(db, &outbox).await);
    }
    let c = cluster([bases[0].clone(), bases[1].clone()], outbox);
    run("postgres", &proxy, &c).await;
    admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_two_instances_through_an_outage() {
    let proxy = FaultProxy::start("127.0.0.1:6379".parse::<SocketAddr>().unwrap()).await;
    let url = format!("redis://{}/", proxy.addr);
    let prefix = format!("authcore-load-{}:", std::process::id());
    let outbox = Outbox::default();
    let mut bases = Vec::new();
    for _ in 0..2 {
        let db = authcore_redis::RedisAdapter::connect_lazy(&url, Default::default())
            .unwrap()
            .with_prefix(&prefix);
        bases.push(instance(db, &outbox).await);
    }
    let c = cluster([bases[0].clone(), bases[1].clone()], outbox);
    run("redis", &proxy, &c).await;
    // The run's keys (users never expire): removed with redis-cli.
    let _ = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "redis-cli -h 127.0.0.1 -p 6379 --scan --pattern '{prefix}*' | xargs -r -n 500 redis-cli -h 127.0.0.1 -p 6379 del >/dev/null"
        ))
        .status();
}
