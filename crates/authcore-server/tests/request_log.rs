//! The demo's request log, under a subscriber scoped to this test's thread. `tracing`
//! caches per call site whether anyone listens, and a call site first reached by another
//! test's thread at the same time may have cached "no one": the cache is rebuilt once the
//! subscriber is in place, before the router (which asks whether DEBUG is on) is built.
#![allow(clippy::unwrap_used)]

use crate::support::in_memory;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use in_memory::*;

/// With DEBUG logging on when the router is built, each request is logged with its method,
/// path and status; without it the logging middleware is not installed.
#[tokio::test]
async fn request_log_at_debug_level() {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    let app = demo().await;
    let mut jar = CookieJar::default();
    let req = Request::get(format!("{ORIGIN}/auth/providers"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, req, &mut jar).await.status(), StatusCode::OK);
    let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("request") && l.contains("/auth/providers"))
        .unwrap_or_else(|| panic!("no request line in {log}"));
    assert!(
        line.contains("status=200") && line.contains("method=GET"),
        "{line}"
    );
}
