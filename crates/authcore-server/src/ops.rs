//! Operations: liveness and readiness probes, Prometheus metrics and the log format.
//!
//! * `GET /healthz` ([`HEALTHZ_PATH`]): 200 while the process serves requests.
//! * `GET /readyz` ([`READYZ_PATH`]): 503 at once, naming the store, while the circuit
//!   breaker of the database or of Redis is open (an earlier call found it unreachable and
//!   a background probe has not reached it since: [`authcore::breaker`]); else 200 when the
//!   database answers a `SELECT 1` within [`READY_TIMEOUT`] (always, without a database),
//!   else 503. The reason is logged, never the database URL.
//! * `GET /metrics` ([`METRICS_PATH`]) on its own listener (`AUTHCORE_METRICS_ADDR`), in
//!   the Prometheus text format: authcore's counters ([`authcore::telemetry`]: sign-ins
//!   by provider and outcome, session reads) and whether each store is available
//!   ([`authcore::telemetry::STORE_AVAILABLE`]), the gateway's decisions
//!   ([`FORWARD_AUTH_DECISIONS`]) and, per route, [`HTTP_REQUESTS`] and the latency
//!   histogram [`HTTP_DURATION`].
//! * Logs as text or as one JSON object per line ([`LogFormat`], `AUTHCORE_LOG_FORMAT`).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use authcore::request::Action;
use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Liveness probe.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Readiness probe.
pub const READYZ_PATH: &str = "/readyz";
/// The Prometheus scrape path on the metrics listener.
pub const METRICS_PATH: &str = "/metrics";
/// How long `/readyz` waits for the database.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Requests by `route`, `method` and `status` (counter).
pub const HTTP_REQUESTS: &str = "authcore_http_requests_total";
/// Request latency by `route` (histogram, seconds).
pub const HTTP_DURATION: &str = "authcore_http_request_duration_seconds";
/// Forward-auth answers by `decision` (`allow`, `sign_in`, `forbidden`, `bad_request`,
/// `error`).
pub const FORWARD_AUTH_DECISIONS: &str = "authcore_forward_auth_decisions_total";

/// Counts one forward-auth decision in [`FORWARD_AUTH_DECISIONS`]: the gateway's
/// [`on_decision`](authcore_gateway::Gateway::on_decision) hook.
pub fn count_forward_auth_decision(decision: &'static str) {
    metrics::counter!(FORWARD_AUTH_DECISIONS, "decision" => decision).increment(1);
}

/// Buckets of [`HTTP_DURATION`], in seconds: 250 µs to 5 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// What `/readyz` checks.
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    database: Option<authcore_sqlx::SqlxAdapter>,
    redis: Option<authcore_redis::RedisRateLimitStore>,
}

impl Readiness {
    /// Ready when `database` answers (or always, with none).
    pub fn new(database: Option<authcore_sqlx::SqlxAdapter>) -> Self {
        Readiness {
            database,
            redis: None,
        }
    }

    /// Not ready either while the circuit breaker of `redis` (the rate-limit and
    /// single-use store) is open.
    pub fn with_redis(mut self, redis: Option<authcore_redis::RedisRateLimitStore>) -> Self {
        self.redis = redis;
        self
    }

    /// `Ok` when ready, else why not (for the log and the 503 body): a store whose circuit
    /// breaker is open answers at once, without a query.
    pub async fn check(&self) -> Result<(), &'static str> {
        if self.database.as_ref().is_some_and(|db| !db.available()) {
            return Err("database unavailable (circuit breaker open)");
        }
        if self.redis.as_ref().is_some_and(|redis| !redis.available()) {
            return Err("redis unavailable (circuit breaker open)");
        }
        let Some(db) = &self.database else {
            return Ok(());
        };
        match tokio::time::timeout(READY_TIMEOUT, db.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "readiness: the database does not answer");
                Err("database unreachable")
            }
            Err(_) => {
                tracing::warn!(timeout = ?READY_TIMEOUT, "readiness: the database did not answer in time");
                Err("database did not answer in time")
            }
        }
    }
}

/// `/healthz` and `/readyz`.
pub fn probe_routes(readiness: Readiness) -> Router {
    Router::new()
        .route(
            HEALTHZ_PATH,
            get(|| async { no_store(StatusCode::OK, "ok\n") }),
        )
        .route(READYZ_PATH, get(readyz))
        .with_state(readiness)
}

async fn readyz(State(readiness): State<Readiness>) -> Response {
    match readiness.check().await {
        Ok(()) => no_store(StatusCode::OK, "ready\n"),
        Err(why) => no_store(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

fn no_store(status: StatusCode, body: impl Into<String>) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        body.into(),
    )
        .into_response()
}

/// The server's Prometheus recorder (its latency buckets set), not installed: its
/// [`handle`](PrometheusRecorder::handle) renders what it kept. [`install_prometheus`]
/// makes it the process's; a test may make it its thread's instead
/// (`metrics::set_default_local_recorder`).
pub fn prometheus_recorder() -> Result<PrometheusRecorder, String> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), LATENCY_BUCKETS)
        .map(PrometheusBuilder::build_recorder)
        .map_err(|e| format!("cannot build the metrics recorder: {e}"))
}

/// Installs the process-wide Prometheus recorder ([`prometheus_recorder`]; on the first
/// call, later calls return the same handle), so that every `metrics` record from here on
/// is kept.
pub fn install_prometheus() -> Result<PrometheusHandle, String> {
    static HANDLE: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = prometheus_recorder()?;
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder)
                .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
            Ok(handle)
        })
        .clone()
}

/// Runs the recorder's upkeep (draining histogram samples between scrapes) every 5 s, for
/// as long as the runtime lives.
pub fn spawn_upkeep(handle: PrometheusHandle) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            handle.run_upkeep();
        }
    });
}

/// How often the server prunes the audit log ([`spawn_audit_pruning`]).
pub const AUDIT_PRUNE_INTERVAL: Duration = Duration::from_secs(3600);

/// Prunes `auth`'s audit log ([`authcore::Auth::prune_audit_log`]) now and then every
/// [`AUDIT_PRUNE_INTERVAL`], for as long as the handler and the runtime live; a failure is
/// logged and tried again at the next turn.
pub fn spawn_audit_pruning(auth: &authcore::Auth) {
    let auth = auth.downgrade();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(AUDIT_PRUNE_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(auth) = auth.upgrade() else {
                return;
            };
            match auth.prune_audit_log().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(records = n, "audit log pruned past its retention"),
                Err(e) => tracing::error!(error = %e, "the audit log could not be pruned"),
            }
        }
    });
}

/// `GET /metrics`: the Prometheus text exposition.
pub fn metrics_router(handle: PrometheusHandle) -> Router {
    Router::new().route(
        METRICS_PATH,
        get(move || {
            let handle = handle.clone();
            async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("text/plain; version=0.0.4"),
                    )],
                    handle.render(),
                )
            }
        }),
    )
}

/// Counts and times every request `app` routes (a route layer: it sees the matched route;
/// requests no route matches are not recorded). `base_path` is authcore's, whose actions
/// get a label each.
pub fn with_http_metrics(app: Router, base_path: &str) -> Router {
    let base: Arc<str> = base_path.into();
    app.route_layer(middleware::from_fn(move |req: Request, next: Next| {
        record_http(req, next, Arc::clone(&base))
    }))
}

async fn record_http(req: Request, next: Next, base: Arc<str>) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| route_label(m.as_str(), req.uri().path(), &base).into_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = method_label(req.method());
    let start = Instant::now();
    let response = next.run(req).await;
    metrics::histogram!(HTTP_DURATION, "route" => route.clone()).record(start.elapsed());
    metrics::counter!(
        HTTP_REQUESTS,
        "route" => route,
        "method" => method,
        "status" => response.status().as_str().to_owned()
    )
    .increment(1);
    response
}

/// The route label: the matched route, with authcore's catch-all under `base` narrowed to
/// the action (`/auth/callback`), so the label set stays bounded whatever the path.
fn route_label<'a>(matched: &'a str, path: &str, base: &str) -> Cow<'a, str> {
    let catch_all = matched
        .strip_prefix(base)
        .is_some_and(|rest| rest == "/{*rest}");
    if !catch_all {
        return Cow::Borrowed(matched);
    }
    let action = path
        .strip_prefix(base)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split('/').next())
        .and_then(Action::parse);
    match action {
        Some(action) => Cow::Owned(format!("{base}/{}", action.as_str())),
        None => Cow::Borrowed(matched),
    }
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

/// How log lines are written (`AUTHCORE_LOG_FORMAT`, `[server] log_format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogFormat {
    /// Human-readable lines (the default).
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields`, `target`), for log
    /// collectors.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!(
                "AUTHCORE_LOG_FORMAT / log_format: {other:?} is not `text` or `json`"
            )),
        }
    }
}

/// Keeps the log writer's thread: dropping it writes what is still queued.
#[derive(Debug)]
#[must_use = "dropping it at once stops the log writer; hold it until the process ends"]
pub struct LogGuard {
    _writer: tracing_appender::non_blocking::WorkerGuard,
}

/// Installs the global `tracing` subscriber: `RUST_LOG` filters (default `info`), lines go
/// to standard error in `format`.
///
/// A request never waits for the write: lines are queued for a writer thread of their own
/// (`tracing-appender`'s non-blocking writer), which writes each batch it finds queued with
/// one system call. Nothing is dropped: with its queue full, a logging thread waits, as it
/// would for standard error itself. Hold the returned guard until the process ends; its
/// drop writes what is still queued.
pub fn init_logging(format: LogFormat) -> LogGuard {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;

    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("authcore-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
    }
    LogGuard { _writer: guard }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_are_bounded() {
        let cases = [
            ("/", "/", "/"),
            ("/forward-auth", "/forward-auth", "/forward-auth"),
            ("/auth/{*rest}", "/auth/callback/github", "/auth/callback"),
            ("/auth/{*rest}", "/auth/session", "/auth/session"),
            (
                "/auth/{*rest}",
                "/auth/webauthn-options/passkey",
                "/auth/webauthn-options",
            ),
            ("/auth/{*rest}", "/auth/../../etc/passwd", "/auth/{*rest}"),
            ("/auth/{*rest}", "/auth/random-8f3a", "/auth/{*rest}"),
            ("/api/auth/{*rest}", "/api/auth/csrf", "/api/auth/csrf"),
            ("/auth/", "/auth/", "/auth/"),
        ];
        for (matched, path, want) in cases {
            let base = matched.split("/{*rest}").next().unwrap_or_default();
            let base = if matched.ends_with("{*rest}") {
                base
            } else {
                "/auth"
            };
            assert_eq!(route_label(matched, path, base), want, "{matched} {path}");
        }
    }

    #[test]
    fn log_formats_parse_and_refuse_others() {
        assert_eq!("json".parse(), Ok(LogFormat::Json));
        assert_eq!(" JSON ".parse(), Ok(LogFormat::Json));
        assert_eq!("text".parse(), Ok(LogFormat::Text));
        assert_eq!("".parse(), Ok(LogFormat::Text));
        let err = "logfmt".parse::<LogFormat>().unwrap_err();
        assert!(err.contains("logfmt") && err.contains("json"), "{err}");
    }

    #[test]
    fn methods_outside_the_standard_ones_share_a_label() {
        assert_eq!(method_label(&Method::POST), "POST");
        let odd = Method::from_bytes(b"BREW").unwrap_or(Method::GET);
        assert_eq!(method_label(&odd), "other");
    }
}
