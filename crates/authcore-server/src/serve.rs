//! The server's HTTP/1.1 listener, with the connection hygiene `axum::serve` leaves out:
//!
//! * a **header read timeout** ([`ConnectionLimits::header_read_timeout`], default 10 s):
//!   a connection that has not sent a whole request head by then is closed. It also bounds
//!   idle keep-alive connections, whose wait for the next request head is timed the same
//!   way;
//! * a **request timeout** ([`ConnectionLimits::request_timeout`], default 30 s): a request
//!   whose answer takes longer gets `503` and a log line;
//! * a **cap on open connections** ([`ConnectionLimits::max_connections`]): at the cap the
//!   server stops accepting (new connections wait in the kernel's backlog) until one
//!   closes, so a flood of idle or half-sent connections cannot exhaust its file
//!   descriptors; the default is three quarters of the process's descriptor limit, at most
//!   10,000;
//! * **graceful shutdown**: when `shutdown` resolves, the listener closes at once, requests
//!   in flight finish (for at most the request timeout), idle connections close.
//!
//! A host that embeds authcore in its own server should set the same limits on it (hyper's
//! `http1::Builder::header_read_timeout` with a timer, a timeout layer, a connection cap).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::Service;

/// Connection limits of the listener (`[server]` of the config file, `AUTHCORE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Time allowed for a request head (`AUTHCORE_HEADER_READ_TIMEOUT`, seconds).
    pub header_read_timeout: Duration,
    /// Time allowed for an answer (`AUTHCORE_REQUEST_TIMEOUT`, seconds).
    pub request_timeout: Duration,
    /// Open connections at most (`AUTHCORE_MAX_CONNECTIONS`).
    pub max_connections: usize,
}

/// Default [`ConnectionLimits::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`ConnectionLimits::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// Three quarters of the soft `RLIMIT_NOFILE` (the rest is for the database, the mail
/// relay, the providers and the log), at most 10,000; 768 when the limit is unknown.
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    let usable = soft.saturating_mul(3) / 4;
    usize::try_from(usable.min(10_000)).unwrap_or(768).max(16)
}

impl ConnectionLimits {
    /// Reads the three settings from `get` (a variable lookup), each optional: seconds as
    /// a decimal number (`10`, `0.5`), a positive connection count.
    pub fn from_vars<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Self, String> {
        let mut limits = ConnectionLimits::default();
        if let Some(d) = seconds_var(&get, "AUTHCORE_HEADER_READ_TIMEOUT")? {
            limits.header_read_timeout = d;
        }
        if let Some(d) = seconds_var(&get, "AUTHCORE_REQUEST_TIMEOUT")? {
            limits.request_timeout = d;
        }
        if let Some(n) = count_var(&get, "AUTHCORE_MAX_CONNECTIONS")? {
            limits.max_connections = n;
        }
        Ok(limits)
    }
}

/// The most worker threads `AUTHCORE_WORKERS` may ask for (a typo such as `1000000` would
/// otherwise start that many threads).
pub const MAX_WORKERS: usize = 1024;

/// The default number of worker threads: the CPUs this process may run on (its affinity
/// mask, so `taskset -c 0` gives 1).
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WORKERS))
}

/// The runtime for `workers` threads: a single-threaded one for 1 (no work stealing, no
/// cross-thread wake-ups: the fastest on one core), else a multi-threaded one with that
/// many workers.
pub fn runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if workers <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
    }
}

/// Variable `key` from `get` as seconds (a decimal number: `10`, `0.5`; up to a day), if set.
pub(crate) fn seconds_var<'a>(
    get: impl Fn(&str) -> Option<&'a str>,
    key: &str,
) -> Result<Option<Duration>, String> {
    let Some(v) = get(key).map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .map(|s| Some(Duration::from_secs_f64(s)))
        .ok_or_else(|| format!("{key}={v:?} is not a number of seconds (like 10 or 0.5)"))
}

/// Variable `key` from `get` as a positive count, if set.
pub(crate) fn count_var<'a>(
    get: impl Fn(&str) -> Option<&'a str>,
    key: &str,
) -> Result<Option<usize>, String> {
    let Some(v) = get(key).map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    v.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .map(Some)
        .ok_or_else(|| format!("{key}={v:?} is not a positive number"))
}

/// Serves `app` (a [`Router`](axum::Router), or [`crate::server_service`]'s service) on
/// `listener` with `limits` until `shutdown` resolves, then drains (see the module docs).
/// Handlers can read the peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve<S>(
    listener: TcpListener,
    app: S,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let timeout = limits.request_timeout;
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
            req.extensions_mut()
                .insert(ConnectInfo::<std::net::SocketAddr>(peer));
            answer_within(timeout, app.clone(), req.map(axum::body::Body::new))
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // A client that goes away or times out is routine, not an error to report.
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection closed");
            }
            drop(permit);
        });
    }
    drop(listener);
    let open = limits.max_connections - permits.available_permits();
    tracing::info!(open, "listener closed; finishing open requests");
    let drain = limits.request_timeout + limits.header_read_timeout;
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            ?drain,
            "connections still open after the drain time; closing them"
        );
    }
}

/// `app`'s answer to `req`, or `503` when it takes longer than `limit`. Called straight from
/// the connection's service (no middleware layer: no boxed future per request).
async fn answer_within<S>(limit: Duration, mut app: S, req: Request) -> Result<Response, Infallible>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let uri = req.uri().clone();
    let answer = async move {
        std::future::poll_fn(|cx| app.poll_ready(cx)).await?;
        app.call(req).await
    };
    match tokio::time::timeout(limit, answer).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(path = uri.path(), ?limit, "request timed out");
            Ok((StatusCode::SERVICE_UNAVAILABLE, "request timed out\n").into_response())
        }
    }
}

/// Out of descriptors or memory: wait, then accept again (the cap should prevent it);
/// connection-level errors (the peer reset before the accept): go on at once.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accept failed; retrying in 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_variables() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
        };
        let l = ConnectionLimits::from_vars(vars(&[])).unwrap();
        assert_eq!(l.header_read_timeout, DEFAULT_HEADER_READ_TIMEOUT);
        assert!(l.max_connections >= 16 && l.max_connections <= 10_000);
        let l = ConnectionLimits::from_vars(vars(&[
            ("AUTHCORE_HEADER_READ_TIMEOUT", "0.5"),
            ("AUTHCORE_REQUEST_TIMEOUT", "3"),
            ("AUTHCORE_MAX_CONNECTIONS", "64"),
        ]))
        .unwrap();
        assert_eq!(l.header_read_timeout, Duration::from_millis(500));
        assert_eq!(l.request_timeout, Duration::from_secs(3));
        assert_eq!(l.max_connections, 64);
        for (k, v) in [
            ("AUTHCORE_HEADER_READ_TIMEOUT", "ten"),
            ("AUTHCORE_REQUEST_TIMEOUT", "-1"),
            ("AUTHCORE_REQUEST_TIMEOUT", "NaN"),
            ("AUTHCORE_MAX_CONNECTIONS", "0"),
        ] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(vec![(k, v)].into_boxed_slice());
            let err = ConnectionLimits::from_vars(vars(pairs)).unwrap_err();
            assert!(err.contains(k), "{err}");
        }
    }
}
