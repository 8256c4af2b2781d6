//! The load-test ceiling: an axum server on the same runtime settings as the demo whose
//! every route answers a fixed 72-byte JSON body with no work at all. `bench/load.sh`
//! measures it beside authcore so the ratios can be read against what the HTTP stack and
//! the kernel cost on the machine at hand.
//!
//! `cargo run --release -p authcore-server --example ceiling` (listens on
//! `AUTHCORE_ADDR`, default `127.0.0.1:3002`).

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;

async fn fixed() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "private, no-cache, no-store"),
        ],
        r#"{"csrfToken":"0000000000000000000000000000000000000000000000000000000000"}"#,
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::var("AUTHCORE_ADDR").unwrap_or_else(|_| "127.0.0.1:3002".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("ceiling server listening on http://{addr}/");
    axum::serve(listener, Router::new().fallback(fixed)).await
}
