//! Runs the gateway's forward-auth check in a loop, in memory, for instruction-level
//! profiling: `valgrind --tool=callgrind target/release/examples/forward_auth_loop <key.pem> 2000`
//! (an Ed25519 PKCS#8 key, e.g. `openssl genpkey -algorithm ed25519 -out key.pem`). Each
//! request is nginx's sub-request (`X-Original-URL`) with a valid JWT session cookie: the
//! session read, the rules, the identity headers and the identity JWT.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use authcore_server::ServerConfig;
use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode, header};
use tower::ServiceExt as _;

fn main() {
    let mut args = std::env::args().skip(1);
    let key = args
        .next()
        .expect("usage: forward_auth_loop <ed25519 key.pem> [requests]");
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let dir = std::env::temp_dir().join(format!("authcore-fa-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("authcore.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[server]
database_url = "none"

[auth]
secret = "a forward-auth loop secret, long and random enough"
url = "http://auth.example.test/auth"

[gateway]
cookie_domain = ".example.test"
allowed_redirect_hosts = ["*.example.test"]
default = "signed_in"
signing_keys = ["{key}"]
"#
        ),
    )
    .unwrap();
    let config = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap();
    let gateway = config.gateway.clone().expect("the [gateway] section");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let auth = rt.block_on(config.build()).unwrap().auth().clone();
    // A user with groups, as an OIDC sign-in leaves them in the token.
    let user = serde_json::json!({
        "sub": "1", "name": "Demo User", "email": "demo@example.com", "groups": ["staff"],
    });
    let jwt = auth.config().jwt();
    let token = jwt.encode(user.as_object().unwrap(), "authjs.session-token", 3600);
    let router = gateway.router(auth);
    let cookie = HeaderValue::try_from(format!("authjs.session-token={}", token.unwrap())).unwrap();
    for _ in 0..n {
        let request = Request::get("http://auth.example.test/forward-auth/nginx")
            .header(header::HOST, "auth.example.test")
            .header(header::COOKIE, cookie.clone())
            .header("x-original-url", "http://app.example.test/dashboard?tab=1")
            .header("x-original-method", "GET")
            .body(Body::empty())
            .unwrap();
        let response = rt.block_on(router.clone().oneshot(request)).unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    std::fs::remove_dir_all(&dir).ok();
}
