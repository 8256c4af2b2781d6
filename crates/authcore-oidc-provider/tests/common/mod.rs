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

/// A browser in which `<user>@example.com` signed in at `base` with [`PASSWORD`], and its
/// cookies as a `Cookie` header (for a relying party's "browser" in another process).
pub async fn signed_in_browser(base: &str, user: &str) -> (reqwest::Client, String) {
    use reqwest::cookie::CookieStore as _;
    let jar = Arc::new(reqwest::cookie::Jar::default());
    let browser = reqwest::Client::builder()
        .cookie_provider(Arc::clone(&jar))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .unwrap();
    let csrf: Value = browser
        .get(format!("{base}/auth/csrf"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = browser
        .post(format!("{base}/auth/callback/credentials"))
        .form(&[
            ("csrfToken", csrf["csrfToken"].as_str().unwrap()),
            ("username", user),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "{user} signs in");
    let cookie = jar.cookies(&base.parse().unwrap()).unwrap();
    (browser, cookie.to_str().unwrap().to_owned())
}

/// The claims of a JWS, unverified (the provider's own token, as the test received it).
pub fn payload(jws: &str) -> Value {
    use base64::Engine as _;
    let part = jws.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The user `<name>@example.com` (verified, named `name`) in `users`: its id.
pub async fn add_user(users: &MemoryAdapter, name: &str) -> String {
    let user = users
        .create_user(authcore::adapter::NewUser {
            name: Some(name.into()),
            email: Some(format!("{name}@example.com")),
            email_verified: Some(time::OffsetDateTime::now_utc()),
            image: None,
        })
        .await
        .unwrap();
    user.id
}

/// A handler on `env` as the provider needs it: the users in `users` signing in with
/// [`PASSWORD`], database sessions, second factors on (`auth_time`, `amr`).
pub fn handler(env: &authcore::env::Env, users: &MemoryAdapter) -> authcore::AuthConfigBuilder {
    authcore::AuthConfig::builder()
        .env_defaults(env)
        .provider(password_sign_in(users))
        .adapter(users.clone())
        .credentials_database_sessions(true)
        .two_factor(authcore::two_factor::TwoFactorOptions::default())
}
