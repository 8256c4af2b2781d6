//! Connection hygiene of the binary: under a descriptor limit of 1,024, waves of
//! thousands of connections that send half a request head and stop are closed after the
//! header read timeout, a normal request keeps being served meanwhile, idle keep-alive
//! connections are closed too, and the server never runs out of descriptors.

use crate::support::binary;

use std::time::{Duration, Instant};

use binary::ServerProcess;
use futures_util::future::join_all;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

// Each wave stays within what the server holds (768 connections at a 1,024 descriptor
// limit) plus its listen backlog (1,024): beyond that the kernel completes handshakes it
// never queues, and such connections never reach the server at all.
const WAVES: usize = 12;
const PER_WAVE: usize = 1_700;

/// Opens a connection and sends half a request head; `None` if it could not connect in 3 s
/// (the server's backlog is full: it is at its connection cap).
async fn half_sent(addr: &str) -> Option<TcpStream> {
    let mut stream = tokio::time::timeout(Duration::from_secs(3), TcpStream::connect(addr))
        .await
        .ok()?
        .ok()?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .await
        .ok()?;
    Some(stream)
}

/// Whether the server closed `stream` within `limit` (EOF or reset, with no answer other
/// than an error status).
async fn closed_by_server(mut stream: TcpStream, limit: Duration) -> bool {
    let mut buf = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut buf)).await {
        Ok(Ok(_)) => !buf.starts_with(b"HTTP/1.1 200"),
        Ok(Err(_)) => true,
        Err(_) => false,
    }
}

async fn healthz(client: &reqwest::Client, base: &str) -> Duration {
    let start = Instant::now();
    let res = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_and_idle_connections_are_dropped_while_requests_are_served() {
    let mut server = ServerProcess::spawn_wrapped(
        &["prlimit", "--nofile=1024:1024", "--"],
        &[
            ("AUTHCORE_HEADER_READ_TIMEOUT", "0.5"),
            ("RUST_LOG", "info"),
        ],
        None,
    );
    let base = server.base_url();
    let addr = base.trim_start_matches("http://").to_owned();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();

    // An idle keep-alive connection is closed after the same timeout.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 12];
    idle.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut rest = [0u8; 1024];
    let _ = idle.read(&mut rest).await.unwrap();
    assert!(
        closed_by_server(idle, Duration::from_secs(5)).await,
        "idle keep-alive closed"
    );

    let mut total = 0;
    let mut slowest = Duration::ZERO;
    for wave in 0..WAVES {
        let opened: Vec<TcpStream> = join_all((0..PER_WAVE).map(|_| half_sent(&addr)))
            .await
            .into_iter()
            .flatten()
            .collect();
        total += opened.len();
        // Served meanwhile (at most after the timeouts free connection slots).
        slowest = slowest.max(healthz(&client, &base).await);
        let closed = join_all(
            opened
                .into_iter()
                .map(|s| closed_by_server(s, Duration::from_secs(15))),
        )
        .await;
        let kept = closed.iter().filter(|c| !**c).count();
        assert_eq!(
            kept, 0,
            "wave {wave}: {kept} half-sent connections still open"
        );
    }
    assert!(total >= 20_000, "only {total} connections were made");
    slowest = slowest.max(healthz(&client, &base).await);
    assert!(
        slowest < Duration::from_secs(10),
        "a normal request took {slowest:?}"
    );

    server.terminate();
    assert!(server.wait_for_exit(Duration::from_secs(20)).success());
    for bad in ["Too many open files", "accept failed"] {
        assert!(!server.output.contains(bad), "{bad}:\n{}", server.output);
    }
    eprintln!(
        "{total} half-sent connections in {WAVES} waves dropped; slowest normal request {slowest:?}"
    );
}
