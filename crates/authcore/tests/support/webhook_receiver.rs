//! A webhook receiver on loopback for the audit sinks' tests (authcore's and the server's):
//! it records the signature header and the body of each POST and answers as told.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;

/// What a receiver got: the signature header and the body of each POST, in order.
pub type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

/// How a receiver answers its `n`th request (0 first).
pub type Answer = fn(usize) -> StatusCode;

/// A receiver answering each POST with the status `answer` gives, after `delay`; its URL
/// and what it got.
pub async fn start(answer: Answer, delay: Duration) -> (String, Received) {
    let received: Received = Arc::default();
    let log = received.clone();
    let app = axum::Router::new().fallback(axum::routing::post(
        move |headers: HeaderMap, body: Bytes| {
            let log = log.clone();
            async move {
                let n = {
                    let mut log = log.lock().unwrap();
                    let signature = headers
                        .get(authcore::audit::SIGNATURE_HEADER)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    log.push((signature, body));
                    log.len() - 1
                };
                tokio::time::sleep(delay).await;
                answer(n)
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/audit", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}
