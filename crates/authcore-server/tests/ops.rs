//! Operations of the standalone server: the probes, the Prometheus metrics (sign-ins by
//! provider and outcome, session reads, forward-auth decisions, requests and latency per
//! route), JSON logs, and a graceful shutdown on SIGTERM that lets a request in flight
//! finish.
#![allow(clippy::unwrap_used)]

use crate::support::binary;
use crate::support::in_memory;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::Duration;

use authcore::env::Env;
use authcore_gateway::NGINX_PATH;
use authcore_server::ServerConfig;
use authcore_server::ops::{self, Readiness};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use binary::ServerProcess;
use in_memory::*;

/// One sample of the Prometheus text format: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (k.to_owned(), v.trim_matches('"').to_owned())
                })
                .collect();
            (name.to_owned(), labels, value.parse().unwrap())
        })
        .collect()
}

/// A series name, labels it must have, and its expected value.
type Expected<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

/// The value of the series `name` with (at least) the labels `want`, summed.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|(n, labels, _)| {
            n == name
                && want
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| v)
        .sum()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("authcore-ops-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn forward_auth(app: &impl App, original: Option<&str>, jar: &mut CookieJar) -> u16 {
    let mut req =
        Request::get(format!("{ORIGIN}{NGINX_PATH}")).header(header::COOKIE, jar.header());
    if let Some(url) = original {
        req = req.header("x-original-url", url);
    }
    send(app, req.body(Body::empty()).unwrap(), jar)
        .await
        .status()
        .as_u16()
}

/// Everything in one test, on a recorder of this test's thread (the tests of other modules
/// sign in at the same time in this process).
#[tokio::test]
async fn probes_and_metrics_of_sign_ins_sessions_gateway_and_routes() {
    let dir = temp_dir("metrics");
    let db = format!("sqlite://{}/ops.db?mode=rwc", dir.display());
    let config = ServerConfig::from_env(Env::from_pairs([
        ("AUTH_SECRET", "an ops test secret, long and random enough"),
        ("AUTHCORE_DATABASE_URL", db.as_str()),
        ("AUTHCORE_METRICS_ADDR", "127.0.0.1:0"),
        ("AUTH_URL", "http://localhost:3000/auth"),
        ("AUTHCORE_GATEWAY_DEFAULT", "signed_in"),
    ]))
    .unwrap();
    let recorder = ops::prometheus_recorder().unwrap();
    let handle = recorder.handle();
    let _recorder = metrics::set_default_local_recorder(&recorder);
    // With metrics on, the listener's service is the router with its metrics layer alone.
    let app = config.build().await.unwrap().into_service();
    assert!(matches!(app, tower::util::Either::Right(_)));
    let mut jar = CookieJar::default();

    // Probes.
    let res = get(&app, ops::HEALTHZ_PATH, &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()[header::CACHE_CONTROL], "no-store");
    assert_eq!(text(res).await, "ok\n");
    let res = get(&app, ops::READYZ_PATH, &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(text(res).await, "ready\n");

    // Session reads: none, then a sign-in that fails and one that works, then active and
    // a forged cookie.
    get(&app, "/auth/session", &mut jar).await;
    let res = sign_in(&app, &mut jar, "demo", "wrong password").await;
    let location = res.headers()[header::LOCATION].to_str().unwrap().to_owned();
    assert!(location.contains("error=CredentialsSignin"), "{location}");
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(jar.has("authjs.session-token"));
    let res = get(&app, "/auth/session", &mut jar).await;
    assert!(text(res).await.contains("demo@example.com"));

    // Forward auth: allowed with the session, sign-in without, refused (403 to nginx's
    // auth_request, whose error page says 400) without the headers.
    assert_eq!(
        forward_auth(&app, Some("http://app.test/x"), &mut jar).await,
        200
    );
    assert_eq!(forward_auth(&app, None, &mut jar).await, 403);
    let mut forged = CookieJar::default();
    forged
        .0
        .insert("authjs.session-token".into(), "not-a-session".into());
    assert_eq!(
        forward_auth(&app, Some("http://app.test/x"), &mut forged).await,
        401
    );
    let mut nobody = CookieJar::default();
    assert_eq!(
        forward_auth(&app, Some("http://app.test/x"), &mut nobody).await,
        401
    );
    // A path no action has: one label for all of them; a provider that does not exist is
    // no sign-in.
    get(&app, "/auth/random-8f3a", &mut nobody).await;
    get(&app, "/auth/callback/no-such-provider", &mut nobody).await;

    // The JWT strategy: a session, and a cookie that does not decrypt.
    // Without metrics, authcore's actions are answered before the router.
    let jwt_app = ServerConfig::from_env(Env::from_pairs([
        ("AUTH_SECRET", "an ops test secret, long and random enough"),
        ("AUTHCORE_DATABASE_URL", "none"),
    ]))
    .unwrap()
    .build()
    .await
    .unwrap()
    .into_service();
    assert!(matches!(jwt_app, tower::util::Either::Left(_)));
    let mut jwt_jar = CookieJar::default();
    sign_in(&jwt_app, &mut jwt_jar, "demo", "authcore-demo").await;
    get(&jwt_app, "/auth/session", &mut jwt_jar).await;
    let mut forged = CookieJar::default();
    forged
        .0
        .insert("authjs.session-token".into(), "not-a-jwe".into());
    get(&jwt_app, "/auth/session", &mut forged).await;

    let res = ops::metrics_router(handle.clone())
        .oneshot_get(ops::METRICS_PATH)
        .await;
    let exposition = text(res).await;
    let s = samples(&exposition);
    let sign_ins = authcore::telemetry::SIGN_INS;
    let reads = authcore::telemetry::SESSION_READS;
    let cases: &[Expected] = &[
        (
            sign_ins,
            &[("provider", "credentials"), ("outcome", "success")],
            2.0,
        ),
        (
            sign_ins,
            &[
                ("provider", "credentials"),
                ("outcome", "CredentialsSignin"),
            ],
            1.0,
        ),
        // The API read, and forward auth's for the cookie-less request.
        (reads, &[("strategy", "database"), ("outcome", "none")], 2.0),
        // The API read and forward auth's.
        (
            reads,
            &[("strategy", "database"), ("outcome", "active")],
            2.0,
        ),
        (
            reads,
            &[("strategy", "database"), ("outcome", "invalid")],
            1.0,
        ),
        (ops::FORWARD_AUTH_DECISIONS, &[("decision", "allow")], 1.0),
        (ops::FORWARD_AUTH_DECISIONS, &[("decision", "sign_in")], 2.0),
        (
            ops::FORWARD_AUTH_DECISIONS,
            &[("decision", "bad_request")],
            1.0,
        ),
        (
            ops::HTTP_REQUESTS,
            &[("route", "/healthz"), ("status", "200")],
            1.0,
        ),
        (
            ops::HTTP_REQUESTS,
            &[
                ("route", "/auth/callback"),
                ("method", "POST"),
                ("status", "302"),
            ],
            2.0,
        ),
        (ops::HTTP_REQUESTS, &[("route", "/auth/{*rest}")], 1.0),
        (
            ops::HTTP_REQUESTS,
            &[("route", "/forward-auth/nginx"), ("status", "401")],
            2.0,
        ),
        (
            "authcore_http_request_duration_seconds_count",
            &[("route", "/auth/session")],
            2.0,
        ),
    ];
    for (name, labels, want) in cases {
        assert_eq!(
            value(&s, name, labels),
            *want,
            "{name} {labels:?}\n{exposition}"
        );
    }
    assert!(
        exposition.contains(
            r#"authcore_http_request_duration_seconds_bucket{route="/auth/csrf",le="0.005"}"#
        ),
        "latency is a histogram with buckets:\n{exposition}"
    );
    assert!(!exposition.contains("8f3a") && !exposition.contains("no-such-provider"));
    assert_eq!(value(&s, sign_ins, &[]), 3.0, "{exposition}");
    assert!(!exposition.contains("an ops test secret"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn readiness_fails_with_503_when_the_database_is_gone() {
    let dir = temp_dir("ready");
    let db = authcore_sqlx::SqlxAdapter::sqlite(&dir.join("r.db").display().to_string())
        .await
        .unwrap();
    let readiness = Readiness::new(Some(db.clone()));
    assert_eq!(readiness.check().await, Ok(()));
    db.close().await;
    assert_eq!(readiness.check().await, Err("database unreachable"));
    let res = ops::probe_routes(readiness)
        .oneshot_get(ops::READYZ_PATH)
        .await;
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(text(res).await, "not ready: database unreachable\n");
    // Alive all the same.
    let res = ops::probe_routes(Readiness::new(Some(db)))
        .oneshot_get(ops::HEALTHZ_PATH)
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let _ = std::fs::remove_dir_all(&dir);
}

trait OneshotGet {
    async fn oneshot_get(self, path: &str) -> axum::response::Response;
}

impl OneshotGet for axum::Router {
    async fn oneshot_get(self, path: &str) -> axum::response::Response {
        use tower::ServiceExt;
        self.oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap()
    }
}

/// An OpenID issuer that answers its discovery document only after `delay`, and says on
/// `started` when a request has come in.
fn slow_issuer(delay: Duration) -> (String, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let (started, rx) = std::sync::mpsc::channel();
    let document = serde_json::json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    })
    .to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = started.send(());
            std::thread::sleep(delay);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{document}",
                document.len()
            );
        }
    });
    (issuer, rx)
}

/// The binary: JSON log lines, the metrics listener, and SIGTERM while a sign-in waits on
/// a slow issuer: the listener closes at once, the sign-in still gets its redirect, then
/// the process exits with success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_request_in_flight_finish_with_json_logs_and_metrics() {
    let (issuer, started) = slow_issuer(Duration::from_millis(1500));
    let mut server = ServerProcess::spawn(
        &[
            ("AUTH_OIDC_ISSUER", issuer.as_str()),
            ("AUTH_OIDC_ID", "ops-client"),
            ("AUTH_OIDC_SECRET", "ops-client-secret-value"),
            ("AUTHCORE_METRICS_ADDR", "127.0.0.1:0"),
            ("AUTHCORE_LOG_FORMAT", "json"),
            ("RUST_LOG", "info"),
        ],
        None,
    );
    let limit = Duration::from_secs(20);
    let address = |line: &str| {
        line.split("http://")
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_owned()
    };
    let listening = server
        .wait_for_line(|l| l.contains("listening on http://"), limit)
        .unwrap();
    let addr = address(&listening);
    let metrics_line = server
        .wait_for_line(|l| l.contains("metrics: http://"), limit)
        .unwrap();
    let metrics_addr = address(&metrics_line);

    let client = binary::browser();
    let base = format!("http://{addr}");
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let token = binary::csrf_token(&client, &base).await;
    let exposition = client
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        exposition.contains(
            r#"authcore_http_requests_total{route="/healthz",method="GET",status="200"} 1"#
        ),
        "{exposition}"
    );
    let in_flight = tokio::spawn({
        let client = client.clone();
        let url = format!("{base}/auth/signin/oidc");
        async move {
            client
                .post(url)
                .form(&[("csrfToken", token.as_str()), ("callbackUrl", "/")])
                .send()
                .await
        }
    });
    // The sign-in is waiting on the issuer: now the service manager stops the server.
    tokio::task::spawn_blocking(move || started.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the sign-in reached the issuer");
    server.terminate();
    server
        .wait_for_line(|l| l.contains("shutdown signal received"), limit)
        .unwrap();
    let refused = reqwest::Client::new()
        .get(format!("{base}/healthz"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    assert!(refused.is_err(), "no new requests once shutting down");
    let res = in_flight
        .await
        .unwrap()
        .expect("the request in flight is answered");
    assert_eq!(res.status(), 302);
    let location = res.headers()[header::LOCATION].to_str().unwrap();
    assert!(
        location.starts_with(&format!("{issuer}/authorize?")),
        "{location}"
    );
    let status = server.wait_for_exit(limit);
    assert!(status.success(), "{status}\n{}", server.output);

    // Logs: every line from tracing is a JSON object; none holds a secret.
    let logs: Vec<serde_json::Value> = server
        .output
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let messages: Vec<&str> = logs
        .iter()
        .filter_map(|l| l["fields"]["message"].as_str())
        .collect();
    for wanted in [
        "listening",
        "shutdown signal received, finishing open requests",
        "shut down",
    ] {
        assert!(messages.contains(&wanted), "{wanted:?} in {messages:?}");
    }
    assert!(
        logs.iter()
            .all(|l| l["level"].is_string() && l["timestamp"].is_string())
    );
    for secret in ["ops-client-secret-value", "a cli test secret"] {
        assert!(!server.output.contains(secret), "secret in the output");
    }
}

/// A request whose answer takes longer than `AUTHCORE_REQUEST_TIMEOUT` gets 503 at that
/// time (here a sign-in whose provider does not answer), with a log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_slower_than_the_request_timeout_get_503() {
    let (issuer, _started) = slow_issuer(Duration::from_secs(5));
    let mut server = ServerProcess::spawn(
        &[
            ("AUTH_OIDC_ISSUER", issuer.as_str()),
            ("AUTH_OIDC_ID", "ops-client"),
            ("AUTH_OIDC_SECRET", "ops-client-secret-value"),
            ("AUTHCORE_REQUEST_TIMEOUT", "0.5"),
        ],
        None,
    );
    let base = server.base_url();
    let client = binary::browser();
    let token = binary::csrf_token(&client, &base).await;
    let start = std::time::Instant::now();
    let res = client
        .post(format!("{base}/auth/signin/oidc"))
        .form(&[("csrfToken", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    server
        .wait_for_line(|l| l.contains("request timed out"), Duration::from_secs(10))
        .unwrap();
}

/// The binary takes the client address from the connection: past `requests_per_client`
/// POSTs from one address, the next gets `RateLimited`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_limits_posts_per_client_address() {
    let mut server = ServerProcess::spawn(
        &[],
        Some("[rate_limits]\nrequests_per_client = { limit = 3, window = 60 }\n"),
    );
    let base = server.base_url();
    let client = binary::browser();
    let token = binary::csrf_token(&client, &base).await;
    let mut errors = Vec::new();
    for _ in 0..4 {
        let res = client
            .post(format!("{base}/auth/signout"))
            .form(&[("csrfToken", token.as_str())])
            .send()
            .await
            .unwrap();
        errors.push(
            res.headers()[header::LOCATION]
                .to_str()
                .unwrap()
                .contains("error=RateLimited"),
        );
    }
    assert_eq!(errors, [false, false, false, true]);
}
