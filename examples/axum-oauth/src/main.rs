//! Sign in with GitHub and with any OpenID Connect provider.
//!
//! ```sh
//! export AUTH_SECRET=$(openssl rand -hex 32)
//! export AUTH_GITHUB_ID=… AUTH_GITHUB_SECRET=…          # callback: http://localhost:3000/auth/callback/github
//! export AUTH_OIDC_ISSUER=https://login.example.com AUTH_OIDC_ID=… AUTH_OIDC_SECRET=…   # optional
//! cargo run -p example-axum-oauth
//! ```

use authcore::providers::catalog::{self, GitHubOptions};
use authcore::{Auth, AuthConfig};
use authcore_axum::{AuthRouterExt, OptionalSession};
use axum::{Router, routing::get};

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!(
            "Hello, {} <{}>",
            s.user_name().unwrap_or("?"),
            s.user_email().unwrap_or("no email")
        ),
        None => "Not signed in: visit /auth/signin".to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = authcore::env::Env::from_process();
    let mut config = AuthConfig::builder()
        .env_defaults(&env) // AUTH_SECRET, AUTH_URL, AUTH_GITHUB_ID / _SECRET …
        .trust_host(true)
        .provider(catalog::github(GitHubOptions::default()));
    if let Some(issuer) = env.get("AUTH_OIDC_ISSUER") {
        // Client id and secret from AUTH_OIDC_ID / AUTH_OIDC_SECRET.
        config = config.provider(catalog::oidc("oidc", "Company SSO", issuer));
    }
    let auth = Auth::new(config.build()?);
    let app = Router::new()
        .route("/", get(home))
        .auth_routes(auth.clone())
        .with_state(auth);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("http://localhost:3000/auth/signin");
    axum::serve(listener, app).await?;
    Ok(())
}
