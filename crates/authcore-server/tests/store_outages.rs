//! The stores' circuit breakers: with the database (behind a TCP proxy that stops
//! forwarding) or Redis (a private `redis-server`, stopped and started again) gone, the
//! first calls that find it unreachable open the breaker; from then on session reads and
//! adapter calls answer at once (the answer of a failed store, as before), `/readyz` says
//! 503 naming the store and the gauge `authcore_store_available` is 0; once the store is
//! back the background probe closes the breaker, `/readyz` says 200 and reads succeed.
//! The shared PostgreSQL and Redis of the other tests are never stopped.

use crate::support::fault_proxy::Mode;
use crate::support::pg::{admin_sql, schema_behind_fault_proxy};

use std::time::{Duration, Instant};

use authcore::adapter::{Adapter, AdapterError, AdapterSession, NewUser};
use authcore::{Auth, AuthConfig};
use authcore_axum::AuthRouterExt;
use authcore_server::ops::{self, Readiness};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

const SECRET: &str = "store-outages-secret-0123456789abcdef";
/// The adapters' bound on one operation (the default of both).
const TIMEOUT: Duration = Duration::from_secs(5);
/// What "at once" means here: far below [`TIMEOUT`] (a behaviour check, not a benchmark).
const AT_ONCE: Duration = Duration::from_secs(1);
/// How long the probe may take to notice that the store is back.
const RECOVERY: Duration = Duration::from_secs(15);

/// `GET path` on `app` with `cookie`: status, body and how long it took.
async fn get(app: &axum::Router, path: &str, cookie: &str) -> (StatusCode, String, Duration) {
    let started = Instant::now();
    let req = Request::get(format!("http://localhost:3000{path}"))
        .header(header::COOKIE, cookie)
        .body(Body::empty())
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        String::from_utf8_lossy(&body).into_owned(),
        started.elapsed(),
    )
}

/// The session route on `adapter` (database sessions) and the probes of `readiness`.
fn app(adapter: impl Adapter, readiness: Readiness) -> axum::Router {
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .sessions_only()
            .adapter(adapter)
            .build()
            .unwrap(),
    );
    axum::Router::new()
        .auth_routes(auth)
        .merge(ops::probe_routes(readiness))
}

/// A user and a database session of theirs on `adapter`: the session cookie.
async fn session(adapter: &impl Adapter, email: &str) -> String {
    let user = adapter
        .create_user(NewUser {
            email: Some(email.to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    let token = format!("outage-{}-{email}", std::process::id());
    adapter
        .create_session(AdapterSession {
            session_token: token.clone(),
            user_id: user.id,
            expires: authcore::time::OffsetDateTime::now_utc() + authcore::time::Duration::hours(1),
        })
        .await
        .unwrap();
    format!("authjs.session-token={token}")
}

/// The gauge `authcore_store_available{store}` in `handle`'s exposition.
fn store_available(handle: &metrics_exporter_prometheus::PrometheusHandle, store: &str) -> String {
    let series = format!(
        "{}{{store=\"{store}\"}} ",
        authcore::telemetry::STORE_AVAILABLE
    );
    handle
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(&series).map(str::to_owned))
        .unwrap_or_else(|| format!("no {series}"))
}

/// Reads sessions until the breaker opens (two timeouts in a row open it, so a read may wait
/// that long; broken connections open it at the third in a row), then checks that reads and
/// `/readyz` answer at once, as a failed store answers.
async fn check_open(app: &axum::Router, cookie: &str, store: &str, available: impl Fn() -> bool) {
    let mut failed = 0;
    while available() {
        assert!(
            failed < 10,
            "{store}: {failed} failed reads and the breaker is closed"
        );
        let (status, body, took) = get(app, "/auth/session", cookie).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::OK, "null"),
            "{store}: a failed read answers a null session"
        );
        assert!(
            took <= TIMEOUT + Duration::from_secs(2),
            "{store}: {took:?}"
        );
        failed += 1;
    }
    for _ in 0..5 {
        let (status, body, took) = get(app, "/auth/session", cookie).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "null"), "{store}");
        assert!(
            took < AT_ONCE,
            "{store}: a read took {took:?} with the breaker open"
        );
    }
    let (status, body, took) = get(app, ops::READYZ_PATH, "").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{store}");
    assert_eq!(
        body,
        format!("not ready: {store} unavailable (circuit breaker open)\n")
    );
    assert!(took < AT_ONCE, "{store}: readyz took {took:?}");
}

/// Waits for `/readyz` to say 200, then for `cookie`'s session to be read again.
async fn check_back(app: &axum::Router, cookie: &str, email: &str, store: &str) {
    let started = Instant::now();
    while get(app, ops::READYZ_PATH, "").await.0 != StatusCode::OK {
        assert!(
            started.elapsed() < RECOVERY,
            "{store}: the breaker stays open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body, _) = get(app, "/auth/session", cookie).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(email), "{store}: {body}");
}

/// PostgreSQL behind a proxy that refuses (a stopped server) and then goes silent (a hung
/// one, which only the timeout ends): the breaker opens after the first failures of each, reads
/// answer at once meanwhile, and it closes when the proxy forwards again. On a thread of
/// its own (current-thread runtime) so the gauge is read from this test's recorder.
#[tokio::test]
async fn a_database_outage_answers_at_once_and_recovers() {
    let recorder = ops::prometheus_recorder().unwrap();
    let handle = recorder.handle();
    let _recorder = metrics::set_default_local_recorder(&recorder);

    let schema = format!("authcore_outage_{}", std::process::id());
    let (proxy, target) = schema_behind_fault_proxy(&schema).await;
    let db = authcore_sqlx::SqlxAdapter::postgres(&target).await.unwrap();
    db.migrate().await.unwrap();
    let email = "outage@db.test";
    let cookie = session(&db, email).await;
    let app = app(db.clone(), Readiness::new(Some(db.clone())));
    assert_eq!(get(&app, ops::READYZ_PATH, "").await.0, StatusCode::OK);
    check_back(&app, &cookie, email, "database").await;
    assert_eq!(store_available(&handle, "database"), "1");

    for mode in [Mode::Refuse, Mode::Silent] {
        proxy.set(mode);
        check_open(&app, &cookie, "database", || db.available()).await;
        assert_eq!(store_available(&handle, "database"), "0", "{mode:?}");
        let started = Instant::now();
        match db.get_user("1").await {
            Err(AdapterError::Backend(e)) => {
                assert!(e.to_string().contains("unavailable"), "{e}")
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        assert!(started.elapsed() < AT_ONCE);
        proxy.set(Mode::Up);
        check_back(&app, &cookie, email, "database").await;
        assert!(db.available());
        assert_eq!(store_available(&handle, "database"), "1", "{mode:?}");
    }

    // A query error (here a foreign key: no such user) is no outage: the breaker stays
    // closed.
    let orphan = authcore::Account {
        user_id: Some("999999".into()),
        ..authcore::Account::new(authcore::ProviderType::Oauth, "github", "orphan")
    };
    assert!(matches!(
        db.link_account(orphan).await,
        Err(AdapterError::Backend(_))
    ));
    assert!(db.available());
    db.close().await;
    admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}

/// A private `redis-server` on a free loopback port, stopped when dropped.
struct PrivateRedis {
    port: u16,
    dir: std::path::PathBuf,
    child: Option<std::process::Child>,
}

impl PrivateRedis {
    /// Starts one on a free port (in a temporary directory, without persistence).
    async fn start() -> PrivateRedis {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let dir = std::env::temp_dir().join(format!("authcore-outage-redis-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = PrivateRedis {
            port,
            dir,
            child: None,
        };
        redis.resume().await;
        redis
    }

    /// Starts the server (again) on its port and waits until it answers.
    async fn resume(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server on the PATH");
        self.child = Some(child);
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .is_err()
        {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the server (its data is lost: it keeps none).
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Redis stopped: the breaker opens after the first failures, reads answer at once, `/readyz`
/// names Redis; started again, the probe closes it and reads succeed.
#[tokio::test]
async fn a_redis_outage_answers_at_once_and_recovers() {
    let recorder = ops::prometheus_recorder().unwrap();
    let handle = recorder.handle();
    let _recorder = metrics::set_default_local_recorder(&recorder);

    let mut server = PrivateRedis::start().await;
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let redis = authcore_redis::RedisAdapter::connect_lazy(&url, Default::default()).unwrap();
    let readiness = Readiness::new(None).with_redis(Some(redis.rate_limit_store()));
    let app = app(redis.clone(), readiness);
    let email = "outage@redis.test";

    let cookie = session(&redis, email).await;
    check_back(&app, &cookie, email, "redis").await;
    assert_eq!(store_available(&handle, "redis"), "1");

    server.stop();
    check_open(&app, &cookie, "redis", || redis.available()).await;
    assert_eq!(store_available(&handle, "redis"), "0");
    let started = Instant::now();
    match redis.get_user("1").await {
        Err(AdapterError::Backend(e)) => assert!(e.to_string().contains("unavailable"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < AT_ONCE);

    // Back empty (it keeps no data): the same user and session again.
    server.resume().await;
    let started = Instant::now();
    while !redis.available() {
        assert!(started.elapsed() < RECOVERY, "the breaker stays open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cookie = session(&redis, email).await;
    check_back(&app, &cookie, email, "redis").await;
    assert_eq!(store_available(&handle, "redis"), "1");
}
