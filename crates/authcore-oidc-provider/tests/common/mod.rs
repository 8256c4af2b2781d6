//! What the provider's HTTP tests share: users who sign in with one password, and the
//! provider and authcore served together on loopback.
#![allow(clippy::unwrap_used, dead_code)]

use std::sync::Arc;

use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::providers::CredentialsProvider;
use authcore::{Auth, User};
use authcore_axum::AuthRouterExt as _;
use authcore_oidc_provider::OpenIdProvider;
use serde_json::Value;

/// Every test user's password.
pub const PASSWORD: &str = "the test password";

/// Credentials of `<name>@example.com` in `users`, with [`PASSWORD`].
pub fn password_sign_in(users: &MemoryAdapter) -> CredentialsProvider {
    let store = users.clone();
    CredentialsProvider::username_password().authorize(move |c, _| {
        let store = store.clone();
        async move {
            let field = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
            if field("password").as_deref() != Some(PASSWORD) {
                return Ok(None);
            }
            let email = format!("{}@example.com", field("username").unwrap_or_default());
            let user = store.get_user_by_email(&email).await.ok().flatten();
            Ok(user.map(|u| User::with_id(u.id).email(email)))
        }
    })
}

/// Serves authcore's routes of `auth` and the provider's on `listener`.
pub fn serve(
    listener: tokio::net::TcpListener,
    provider: &Arc<OpenIdProvider>,
    auth: &Auth,
    users: &MemoryAdapter,
) {
    let app = axum::Router::new()
        .auth_routes(auth.clone())
        .with_state(auth.clone())
        .merge(provider.router(auth.clone(), Arc::new(users.clone())));
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// A test key (`openssl genpkey -algorithm ed25519`), nothing signs with it elsewhere.
pub const ED25519: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDVxnv4w4wgPqJ158P31oPHcIhs3jJ0M3H9yYO2Z5T+g\n-----END PRIVATE KEY-----\n";

/// A fresh directory named after `name` with the signing key [`ED25519`] in it: the
/// directory and the key's path.
pub fn key_dir(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "authcore-op-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("oidc.pem");
    std::fs::write(&key, ED25519).unwrap();
    (dir, key)
}

/// A listener on a free loopback port, and the origin it answers at.
pub async fn loopback() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
    (listener, base)
}
