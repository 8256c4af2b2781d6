//! Failure behaviour: an unreachable Redis and a connection lost mid-flight give
//! `AdapterError::Backend` in bounded time (no panic, no hang), and the adapter recovers
//! when Redis is back.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use authcore::adapter::{Adapter, AdapterError, ApiKeyStore, NewUser, OrganizationStore};
use authcore_redis::{BackendErrorKind, ConnectOptions, RedisAdapter, RedisBackendError};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::AbortHandle;

/// Every call in these tests must settle well within this.
const BOUND: Duration = Duration::from_secs(15);

fn options() -> ConnectOptions {
    ConnectOptions::default()
        .connection_timeout(Duration::from_secs(1))
        .response_timeout(Duration::from_secs(2))
        .reconnect_attempts(2)
        .max_reconnect_delay(Duration::from_millis(200))
}

/// A loopback port nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

fn assert_backend(result: Result<impl std::fmt::Debug, AdapterError>) -> BackendErrorKind {
    match result {
        Err(AdapterError::Backend(source)) => {
            let e = source
                .downcast_ref::<RedisBackendError>()
                .expect("a RedisBackendError");
            assert!(!e.to_string().contains("redis://"), "{e}");
            e.kind()
        }
        other => panic!("expected a Backend error, got {other:?}"),
    }
}

#[tokio::test]
async fn connect_to_a_closed_port_fails_fast() {
    let url = format!("redis://127.0.0.1:{}/", closed_port().await);
    let started = Instant::now();
    let result = tokio::time::timeout(BOUND, RedisAdapter::connect_with(&url, options()))
        .await
        .expect("connect must give up in bounded time");
    assert_eq!(assert_backend(result), BackendErrorKind::Connection);
    assert!(started.elapsed() < BOUND);
}

#[tokio::test]
async fn invalid_url_is_a_config_error_without_the_url() {
    let result = RedisAdapter::connect("http://user:hunter2@example.invalid/").await;
    assert_eq!(assert_backend(result), BackendErrorKind::Config);
    let err = RedisAdapter::connect("not a url :: hunter2")
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn connect_lazy_outside_a_runtime_is_an_error() {
    let result = RedisAdapter::connect_lazy("redis://127.0.0.1:6379/", options());
    assert_eq!(assert_backend(result), BackendErrorKind::Config);
}

#[tokio::test]
async fn calls_against_an_unreachable_redis_return_backend_errors() {
    let url = format!("redis://127.0.0.1:{}/", closed_port().await);
    let adapter = RedisAdapter::connect_lazy(&url, options()).unwrap();
    for _ in 0..2 {
        let started = Instant::now();
        let calls = async {
            assert_backend(adapter.get_user("x").await);
            assert_backend(adapter.create_user(NewUser::default()).await);
            assert_backend(adapter.get_session_and_user("t").await);
            assert_backend(adapter.use_verification_token("a@b.c", "t").await);
            assert_backend(adapter.delete_user("x").await);
            assert_backend(adapter.list_authenticators_by_user_id("x").await);
            assert_backend(adapter.remove_member("o", "x").await);
            assert_backend(adapter.get_api_key("k").await);
        };
        tokio::time::timeout(BOUND, calls)
            .await
            .expect("calls must fail in bounded time");
        assert!(started.elapsed() < BOUND);
    }
}

/// A TCP forwarder to Redis that can cut every connection and refuse new ones.
struct Proxy {
    port: u16,
    down: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let down = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (down2, links2) = (down.clone(), links.clone());
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if down2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                links2.lock().await.push(link.abort_handle());
            }
        })
        .abort_handle();
        Proxy {
            port,
            down,
            links,
            accept,
        }
    }

    async fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        for link in self.links.lock().await.drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        if let Ok(mut links) = self.links.try_lock() {
            for link in links.drain(..) {
                link.abort();
            }
        }
    }
}

fn redis_host_port() -> String {
    let url = common::redis_url();
    let rest = url.trim_start_matches("redis://");
    let host_port = rest.split('/').next().unwrap_or("127.0.0.1:6379");
    let host_port = host_port.rsplit('@').next().unwrap_or(host_port);
    if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:6379")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_connection_gives_backend_errors_then_recovers() {
    // Fails with the how-to-start message when Redis is down.
    let db = common::test_db().await;
    let proxy = Proxy::start(redis_host_port()).await;
    let url = format!("redis://127.0.0.1:{}/", proxy.port);
    let adapter = RedisAdapter::connect_with(&url, options())
        .await
        .unwrap()
        .with_prefix(&db.prefix);
    let user = adapter
        .create_user(NewUser {
            email: Some("fault@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();

    proxy.cut().await;
    let started = Instant::now();
    let mut failures = 0;
    for _ in 0..3 {
        let result = tokio::time::timeout(BOUND, adapter.get_user(&user.id))
            .await
            .expect("a call on a lost connection must settle in bounded time");
        if result.is_err() {
            assert_eq!(assert_backend(result), BackendErrorKind::Connection);
            failures += 1;
        }
    }
    assert_eq!(failures, 3, "every call while Redis is cut off fails");
    assert!(started.elapsed() < BOUND * 3);

    proxy.restore();
    let deadline = Instant::now() + BOUND;
    let recovered = loop {
        match adapter.get_user(&user.id).await {
            Ok(found) => break found,
            Err(AdapterError::Backend(_)) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("adapter did not reconnect: {e}"),
        }
    };
    assert_eq!(recovered, Some(user));
    drop(proxy);
    db.wipe().await;
}
