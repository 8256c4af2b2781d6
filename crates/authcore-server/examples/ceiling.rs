//! The load-test ceiling: an axum server on the same runtime settings as the demo whose
//! every route answers a fixed 72-byte JSON body with no work at all. `bench/load.sh`
//! measures it beside authcore so the ratios can be read against what the HTTP stack and
//! the kernel cost on the machine at hand. `GET /page` answers a fixed HTML body as long as
//! the demo's sign-in page (`CEILING_PAGE_BYTES`, default 5,404): what sending a page of
//! that size costs without rendering it.
//!
//! `cargo run --release -p authcore-server --example ceiling` (listens on
//! `AUTHCORE_ADDR`, default `127.0.0.1:3002`).

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

async fn fixed() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "private, no-cache, no-store"),
        ],
        r#"{"csrfToken":"0000000000000000000000000000000000000000000000000000000000"}"#,
    )
}

/// A fixed HTML body of `len` bytes: `<!DOCTYPE html>`, filler, and the marker the load
/// script checks (`action="ceiling"`).
fn page_body(len: usize) -> String {
    const HEAD: &str = "<!DOCTYPE html><form action=\"ceiling\"></form><p>";
    const TAIL: &str = "</p>";
    let filler = len.saturating_sub(HEAD.len() + TAIL.len());
    format!("{HEAD}{}{TAIL}", "x".repeat(filler))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::var("AUTHCORE_ADDR").unwrap_or_else(|_| "127.0.0.1:3002".into());
    let page_bytes = std::env::var("CEILING_PAGE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_404);
    let page: &'static str = page_body(page_bytes).leak();
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("ceiling server listening on http://{addr}/");
    let app = Router::new()
        .route(
            "/page",
            get(move || async move { ([(header::CONTENT_TYPE, "text/html")], page) }),
        )
        .fallback(fixed);
    axum::serve(listener, app).await
}
