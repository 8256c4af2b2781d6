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
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
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

/// The most worker threads `AUTHCORE_WORKERS` may ask for (a typo such as `1000000` would
/// otherwise start that many threads).
pub const MAX_WORKERS: usize = 1024;

/// The default number of worker threads: the CPUs this process may run on (its affinity
/// mask, so `taskset -c 0` gives 1).
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WORKERS))
}

/// A worker's runtime: single-threaded (no work stealing, no cross-thread wake-ups). The
/// server's main thread runs one, and [`serve_workers`] one per further worker thread.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Serves `app` (a [`Router`](axum::Router), or [`crate::Server::into_service`]) on
/// `listener` with `limits` until `shutdown` resolves, then drains (see the module docs).
/// Every connection is served on the runtime this is called on; [`serve_workers`] spreads
/// them over threads of their own. Handlers can read the peer address as
/// `ConnectInfo<SocketAddr>`.
pub async fn serve<S: ListenerService>(
    listener: TcpListener,
    app: S,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    serve_workers(listener, app, limits, 1, shutdown).await;
}

/// What [`serve`] and [`serve_workers`] serve: a cloneable service answering every request
/// (an axum [`Router`](axum::Router), [`crate::ServerService`]), sent to worker threads.
pub trait ListenerService:
    Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S> ListenerService for S where
    S: Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
        + Clone
        + Send
        + 'static
{
}

/// [`serve`] on `workers` threads, each running a single-threaded runtime of its own:
/// the calling task accepts, and hands each connection to the worker with the fewest open
/// connections (itself included), which serves it to the end. No work stealing and no
/// wake-ups across threads per request, which a multi-threaded runtime costs on every
/// request; the connection cap, the limits and the drain are those of [`serve`], over all
/// workers. With `workers` ≤ 1 the calling task's runtime serves alone ([`serve`]). When
/// `shutdown` resolves, every worker drains and its thread ends before this returns.
///
/// Each extra worker's runtime lives as long as its thread: a task a request spawns there
/// (a database connection's driver, say) keeps running while the worker serves, and other
/// workers may use what it drives meanwhile.
pub async fn serve_workers<S: ListenerService>(
    listener: TcpListener,
    app: S,
    limits: ConnectionLimits,
    workers: usize,
    shutdown: impl Future<Output = ()>,
) {
    let local = Connections::new(app, limits);
    let mut extra = Vec::with_capacity(workers.saturating_sub(1));
    for index in 1..workers {
        match Worker::start(index, &local) {
            Ok(worker) => extra.push(worker),
            Err(e) => {
                tracing::error!(error = %e, index, "cannot start a worker thread; serving with fewer")
            }
        }
    }
    // The next in turn among the least loaded (index 0: the calling task's runtime).
    let runtimes = extra.len() + 1;
    let mut next = 0;
    accept_loop(
        &listener,
        &local.permits,
        shutdown,
        |stream, peer, permit| {
            let counts = std::iter::once(local.open())
                .chain(extra.iter().map(|w| w.open.load(Ordering::Relaxed)));
            let least = counts
                .enumerate()
                .min_by_key(|&(i, open)| (open, (i + runtimes - next) % runtimes));
            next = (next + 1) % runtimes;
            match least {
                Some((i, _)) if i > 0 => extra[i - 1].hand_over(stream, peer, permit, &local),
                _ => local.spawn(stream, peer, permit),
            }
        },
    )
    .await;
    drop(listener);
    let done: Vec<_> = extra.into_iter().map(Worker::stop).collect();
    local.drain().await;
    for stopped in done {
        // A worker that panicked has already been logged by the panic hook.
        let _ = stopped.await;
    }
}

/// Accepts until `shutdown` resolves, holding a permit of `permits` per open connection
/// (at the cap, accepting waits); each connection goes to `dispatch`.
async fn accept_loop(
    listener: &TcpListener,
    permits: &Arc<Semaphore>,
    shutdown: impl Future<Output = ()>,
    mut dispatch: impl FnMut(tokio::net::TcpStream, SocketAddr, OwnedSemaphorePermit),
) {
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(permits).acquire_owned() => match permit {
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
        dispatch(stream, peer, permit);
    }
}

/// One runtime's connections: what serving them needs (the app and HTTP settings, the cap
/// shared by all workers), their count and their drain.
struct Connections<S> {
    app: S,
    http: hyper::server::conn::http1::Builder,
    limits: ConnectionLimits,
    permits: Arc<Semaphore>,
    graceful: graceful::GracefulShutdown,
    open: Arc<AtomicUsize>,
}

impl<S: ListenerService> Connections<S> {
    /// The first runtime's connections.
    fn new(app: S, limits: ConnectionLimits) -> Self {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .keep_alive(true);
        Connections {
            app,
            http,
            limits,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            graceful: graceful::GracefulShutdown::new(),
            open: Arc::default(),
        }
    }

    /// Another runtime's connections: the same app, settings and cap; a count and a drain
    /// of its own.
    fn for_worker(&self) -> Self {
        Connections {
            app: self.app.clone(),
            http: self.http.clone(),
            limits: self.limits,
            permits: Arc::clone(&self.permits),
            graceful: graceful::GracefulShutdown::new(),
            open: Arc::default(),
        }
    }

    fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Serves `stream` on the current runtime until it closes.
    fn spawn(&self, stream: tokio::net::TcpStream, peer: SocketAddr, permit: OwnedSemaphorePermit) {
        self.open.fetch_add(1, Ordering::Relaxed);
        self.spawn_counted(stream, peer, permit);
    }

    /// [`Connections::spawn`] for a connection already counted in `open`.
    fn spawn_counted(
        &self,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        permit: OwnedSemaphorePermit,
    ) {
        let timeout = self.limits.request_timeout;
        let app = self.app.clone();
        let service = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            answer_within(timeout, app.clone(), req.map(axum::body::Body::new))
        });
        let connection = self
            .graceful
            .watch(self.http.serve_connection(TokioIo::new(stream), service));
        let open = Arc::clone(&self.open);
        tokio::spawn(async move {
            // A client that goes away or times out is routine, not an error to report.
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection closed");
            }
            open.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
        });
    }

    /// After the listener closed: lets requests in flight finish (for at most the request
    /// timeout and the header read timeout), closes idle connections.
    async fn drain(self) {
        tracing::info!(
            open = self.open(),
            "listener closed; finishing open requests"
        );
        let drain = self.limits.request_timeout + self.limits.header_read_timeout;
        if tokio::time::timeout(drain, self.graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                ?drain,
                "connections still open after the drain time; closing them"
            );
        }
    }
}

/// A connection accepted on one runtime, for another: the socket leaves the accepting
/// runtime's reactor and joins the worker's.
type Handover = (std::net::TcpStream, SocketAddr, OwnedSemaphorePermit);

/// A thread with a single-threaded runtime serving the connections handed to it.
struct Worker {
    open: Arc<AtomicUsize>,
    sender: tokio::sync::mpsc::UnboundedSender<Handover>,
    stopped: tokio::sync::oneshot::Receiver<()>,
}

impl Worker {
    fn start<S: ListenerService>(index: usize, first: &Connections<S>) -> std::io::Result<Self> {
        let own = first.for_worker();
        let open = Arc::clone(&own.open);
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Handover>();
        let (done, stopped) = tokio::sync::oneshot::channel();
        let runtime = runtime()?;
        std::thread::Builder::new()
            .name(format!("authcore-worker-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some((stream, peer, permit)) = receiver.recv().await {
                        match tokio::net::TcpStream::from_std(stream) {
                            Ok(stream) => own.spawn_counted(stream, peer, permit),
                            Err(e) => {
                                own.open.fetch_sub(1, Ordering::Relaxed);
                                tracing::warn!(error = %e, %peer, "cannot serve a connection on a worker");
                            }
                        }
                    }
                    own.drain().await;
                });
                let _ = done.send(());
            })?;
        Ok(Worker {
            open,
            sender,
            stopped,
        })
    }

    /// Gives the worker `stream` (counted in its `open` at once); serves it on `fallback`
    /// (the accepting runtime) when the worker is gone.
    fn hand_over<S: ListenerService>(
        &self,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        permit: OwnedSemaphorePermit,
        fallback: &Connections<S>,
    ) {
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, %peer, "cannot hand a connection to a worker");
                return;
            }
        };
        // Counted here, so the next choice sees it before the worker runs.
        self.open.fetch_add(1, Ordering::Relaxed);
        if let Err(tokio::sync::mpsc::error::SendError((stream, peer, permit))) =
            self.sender.send((stream, peer, permit))
        {
            self.open.fetch_sub(1, Ordering::Relaxed);
            match tokio::net::TcpStream::from_std(stream) {
                Ok(stream) => fallback.spawn(stream, peer, permit),
                Err(e) => tracing::warn!(error = %e, %peer, "cannot serve a connection"),
            }
        }
    }

    /// Closes the worker's queue: it drains and its thread ends; the receiver resolves then.
    fn stop(self) -> tokio::sync::oneshot::Receiver<()> {
        drop(self.sender);
        self.stopped
    }
}

/// `app`'s answer to `req`, or `503` when it takes longer than `limit`. Called straight from
/// the connection's service (no middleware layer: no boxed future per request). The timer
/// starts when the answer first has to wait: one answered at its first poll (a JWT session
/// read, a cached page) reads no clock and makes no timer entry; the wait before that first
/// poll is the CPU time of the request itself, microseconds.
async fn answer_within<S>(limit: Duration, mut app: S, req: Request) -> Result<Response, Infallible>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let path = req.uri().path_and_query().cloned();
    let mut answer = std::pin::pin!(async move {
        std::future::poll_fn(|cx| app.poll_ready(cx)).await?;
        app.call(req).await
    });
    let mut timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(response) = answer.as_mut().poll(cx) {
            return Poll::Ready(response);
        }
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        timer.as_mut().poll(cx).map(|()| {
            let path = path.as_ref().map_or("/", |p| p.path());
            tracing::warn!(path, ?limit, "request timed out");
            Ok((StatusCode::SERVICE_UNAVAILABLE, "request timed out\n").into_response())
        })
    })
    .await
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

    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

    /// `GET path` on a kept-alive connection: the body of the `200` answer.
    async fn get(conn: &mut BufReader<tokio::net::TcpStream>, path: &str) -> String {
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        conn.get_mut().write_all(request.as_bytes()).await.unwrap();
        let mut status = String::new();
        conn.read_line(&mut status).await.unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status:?}");
        let mut length = 0;
        loop {
            let mut line = String::new();
            conn.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        conn.read_exact(&mut body).await.unwrap();
        String::from_utf8(body).unwrap()
    }

    /// Three workers: connections are spread evenly over the three threads (the accepting
    /// runtime's and two of their own), each served to its end by one thread; on shutdown
    /// every worker lets its request in flight finish, and every thread ends.
    #[tokio::test]
    async fn workers_share_connections_and_drain_on_shutdown() {
        let app = axum::Router::new()
            .route(
                "/thread",
                axum::routing::get(|| async {
                    std::thread::current().name().unwrap_or("").to_owned()
                }),
            )
            .route(
                "/slow",
                axum::routing::get(|| async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    "done"
                }),
            );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let limits = ConnectionLimits {
            request_timeout: Duration::from_secs(5),
            ..ConnectionLimits::default()
        };
        let server = tokio::spawn(serve_workers(listener, app, limits, 3, async {
            let _ = stopped.await;
        }));

        let mut connections = Vec::new();
        let mut threads = std::collections::BTreeMap::<String, usize>::new();
        for _ in 0..6 {
            let mut conn = BufReader::new(tokio::net::TcpStream::connect(addr).await.unwrap());
            let first = get(&mut conn, "/thread").await;
            for _ in 0..3 {
                assert_eq!(
                    get(&mut conn, "/thread").await,
                    first,
                    "one thread per connection"
                );
            }
            *threads.entry(first).or_default() += 1;
            connections.push(conn);
        }
        let me = std::thread::current().name().unwrap_or("").to_owned();
        let want: std::collections::BTreeMap<String, usize> = [
            (me, 2),
            ("authcore-worker-1".to_owned(), 2),
            ("authcore-worker-2".to_owned(), 2),
        ]
        .into();
        assert_eq!(threads, want);

        // A slow request in flight on every connection, then the shutdown.
        for conn in &mut connections {
            conn.get_mut()
                .write_all(b"GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        stop.send(()).unwrap();
        for conn in &mut connections {
            let mut answer = String::new();
            tokio::time::timeout(Duration::from_secs(5), conn.read_to_string(&mut answer))
                .await
                .expect("closed after the answer")
                .unwrap();
            assert!(
                answer.starts_with("HTTP/1.1 200") && answer.ends_with("done"),
                "{answer:?}"
            );
        }
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("every worker ended")
            .unwrap();
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "listener closed"
        );
    }
}
