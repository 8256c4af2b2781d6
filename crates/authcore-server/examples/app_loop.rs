//! Runs one request of the demo server in a loop, in memory, through the service the
//! server's connections call (`Server::into_service`: `AuthDispatch` in front of the router), for
//! instruction-level profiling beside authcore's own `hot_loop` (`Auth::handle` alone):
//! `valgrind --tool=callgrind target/release/examples/app_loop providers 2000`.
//! Requests: `session` (valid JWT), `session_none`, `csrf`, `providers`, `signin_page`,
//! anything else: the credentials sign-in (which must succeed). Each request carries the
//! peer address as the server's listener gives it (`ConnectInfo`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;

use authcore_server::ServerConfig;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::ServiceExt;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "session".into());
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let secret = "app-loop-secret-app-loop-secret-app-loop";
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // As `bench/load.sh` runs the server: no rate limits (one client signs in again and again).
    let mut config = ServerConfig::new(secret);
    config.rate_limits = authcore::ratelimit::RateLimits::default();
    let server = rt.block_on(config.build()).unwrap();
    let (method, path, cookie, form) = request(&which, secret, server.auth());
    let app = server.into_service();
    let peer = SocketAddr::from(([127, 0, 0, 1], 40_000));
    let mut total = 0usize;
    for _ in 0..n {
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "127.0.0.1:3000");
        if let Some(cookie) = &cookie {
            req = req.header("cookie", cookie.as_str());
        }
        let body = match &form {
            Some(form) => {
                req = req.header("content-type", "application/x-www-form-urlencoded");
                Body::from(form.clone())
            }
            None => Body::empty(),
        };
        let mut req = req.body(body).unwrap();
        req.extensions_mut().insert(ConnectInfo(peer));
        let r = rt.block_on(app.clone().oneshot(req)).unwrap();
        assert!(r.status().as_u16() < 400, "{}", r.status());
        let location = r.headers().get("location").map(|l| l.to_str().unwrap());
        assert!(
            !location.is_some_and(|l| l.contains("error=")),
            "{location:?}"
        );
        total += r.headers().len();
        let b = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
        total += b.len();
    }
    println!("{total}");
}

/// The method, path, cookie and form body of the request `which`.
fn request(
    which: &str,
    secret: &str,
    auth: &authcore::Auth,
) -> (&'static str, &'static str, Option<String>, Option<Bytes>) {
    match which {
        "session" => {
            let user =
                serde_json::json!({"sub": "1", "name": "Demo User", "email": "demo@example.com"});
            let jwt = auth.config().jwt();
            let token = jwt.encode(user.as_object().unwrap(), "authjs.session-token", 3600);
            let cookie = format!("authjs.session-token={}", token.unwrap());
            ("GET", "/auth/session", Some(cookie), None)
        }
        "session_none" => ("GET", "/auth/session", None, None),
        "csrf" => ("GET", "/auth/csrf", None, None),
        "providers" => ("GET", "/auth/providers", None, None),
        "signin_page" => ("GET", "/auth/signin", None, None),
        _ => {
            let token = "c".repeat(64);
            let value = authcore::csrf::csrf_cookie_value(&token, secret);
            let cookie = format!(
                "authjs.csrf-token={}",
                authcore::cookies::encode_uri_component(&value)
            );
            let form = format!(
                "csrfToken={token}&username={}&password={}",
                authcore_server::DEMO_USERNAME,
                authcore_server::DEFAULT_DEMO_PASSWORD
            );
            let path = "/auth/callback/credentials";
            ("POST", path, Some(cookie), Some(Bytes::from(form)))
        }
    }
}
