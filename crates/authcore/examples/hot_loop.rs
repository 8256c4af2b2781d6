//! Runs one hot path in a loop, in memory, for instruction-level profiling:
//! `valgrind --tool=callgrind target/release/examples/hot_loop session 20000`.
//! Requests: `session` (valid JWT), `session_none`, `csrf`, `providers`, `signin_page`,
//! anything else: the credentials sign-in.
#![allow(missing_docs, clippy::unwrap_used)]

use authcore::http_body_util::{BodyExt, Full};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use bytes::Bytes;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "session".into());
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let secret = "bench-secret-bench-secret-bench-secret";
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(secret)
            .trust_host(true)
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .field("password", CredentialField::new("Password"))
                    .authorize(|c, _| async move {
                        let ok = c.get("username").and_then(|v| v.as_str()) == Some("demo");
                        Ok(ok.then(|| {
                            User::with_id("1")
                                .name("Demo User")
                                .email("demo@example.com")
                        }))
                    }),
            )
            .build()
            .unwrap(),
    );
    let claims = serde_json::json!({"name": "Demo User", "email": "demo@example.com", "sub": "1"});
    let token = auth
        .config()
        .jwt()
        .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
        .unwrap();
    let csrf_token = "a".repeat(64);
    let csrf = authcore::csrf::csrf_cookie_value(&csrf_token, secret);
    let csrf = authcore::cookies::encode_uri_component(&csrf);
    // Everything that is not the request itself is built once, outside the loop.
    let session_cookie = format!("authjs.session-token={token}");
    let csrf_cookie = format!("authjs.csrf-token={csrf}");
    let credentials = Bytes::from(format!(
        "csrfToken={csrf_token}&username=demo&password=authcore-demo"
    ));
    let print_future_size = std::env::var_os("HOT_LOOP_FUTURE_SIZE").is_some();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut total = 0usize;
    for _ in 0..n {
        let req = match which.as_str() {
            "session" => get("/auth/session", Some(&session_cookie)),
            "session_none" => get("/auth/session", None),
            "csrf" => get("/auth/csrf", None),
            "providers" => get("/auth/providers", None),
            "signin_page" => get("/auth/signin", None),
            _ => http::Request::post("/auth/callback/credentials")
                .header("host", "127.0.0.1:3000")
                .header("cookie", csrf_cookie.as_str())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Full::new(credentials.clone()))
                .unwrap(),
        };
        let fut = auth.handle(req);
        if print_future_size {
            eprintln!("Auth::handle future: {} bytes", std::mem::size_of_val(&fut));
            return;
        }
        let r = rt.block_on(fut);
        assert!(r.status().as_u16() < 400);
        total += r.headers().len();
        let b = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
        total += b.len();
    }
    println!("{total}");
}

/// `GET <path>` to the demo's host, with `cookie` when given.
fn get(path: &str, cookie: Option<&str>) -> http::Request<Full<Bytes>> {
    let mut req = http::Request::get(path).header("host", "127.0.0.1:3000");
    if let Some(cookie) = cookie {
        req = req.header("cookie", cookie);
    }
    req.body(Full::new(Bytes::new())).unwrap()
}
