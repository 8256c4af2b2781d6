//! The example's app answers discovery and a forward-auth decision, in memory.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt as _;

/// A key made with `openssl genpkey -algorithm ed25519` (a test key, nothing signs with it
/// elsewhere).
const ED25519: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDVxnv4w4wgPqJ158P31oPHcIhs3jJ0M3H9yYO2Z5T+g\n-----END PRIVATE KEY-----\n";

#[tokio::test]
async fn discovery_and_a_forward_auth_decision() {
    let dir = std::env::temp_dir().join(format!("authcore-example-pg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("oidc.pem");
    std::fs::write(&key, ED25519).unwrap();
    let env = authcore::env::Env::from_pairs([
        (
            "AUTH_SECRET",
            "an example test secret, long and random enough",
        ),
        ("AUTH_URL", "http://127.0.0.1:3000/auth"),
    ]);
    let section = example_axum_provider_gateway::provider_section(
        key.to_str().unwrap(),
        "a-client-secret-0123456789abcdef0123",
        "http://127.0.0.1:4000/callback",
    );
    let app = example_axum_provider_gateway::app(&env, section)
        .await
        .unwrap();

    let discovery = app
        .clone()
        .oneshot(
            Request::get(authcore_oidc_provider::DISCOVERY_PATH)
                .header("host", "127.0.0.1:3000")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(discovery.status(), StatusCode::OK);
    let body = axum::body::to_bytes(discovery.into_body(), 1 << 20)
        .await
        .unwrap();
    let metadata: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(metadata["issuer"], "http://127.0.0.1:3000/oidc");

    // Nobody is signed in: nginx is told to send the browser to sign in (401).
    let decision = app
        .oneshot(
            Request::get(authcore_gateway::NGINX_PATH)
                .header("host", "127.0.0.1:3000")
                .header("x-original-url", "http://app.localhost/dashboard")
                .header("x-original-method", "GET")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(decision.status(), StatusCode::UNAUTHORIZED);
    std::fs::remove_dir_all(dir).ok();
}
