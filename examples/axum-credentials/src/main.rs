//! The smallest authcore app: axum, a credentials provider, JWT sessions.
//!
//! ```sh
//! AUTH_SECRET=$(openssl rand -hex 32) cargo run -p example-axum-credentials
//! # http://localhost:3000/auth/signin — user "ada", password "lovelace"
//! ```

use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_axum::{AuthRouterExt, OptionalSession, RequireAuthLayer, Session};
use axum::{Router, routing::get};

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!(
            "Hello, {}! /private is yours.",
            s.user_name().unwrap_or("you")
        ),
        None => "Not signed in: visit /auth/signin".to_owned(),
    }
}

async fn private(session: Session) -> String {
    format!(
        "Only signed-in users see this, {}.",
        session.user_email().unwrap_or("you")
    )
}

fn credentials() -> CredentialsProvider {
    CredentialsProvider::new()
        .field("username", CredentialField::new("Username"))
        .field(
            "password",
            CredentialField::new("Password").input_type("password"),
        )
        .authorize(|credentials, _request| async move {
            let field = |name: &str| credentials.get(name).and_then(|v| v.as_str());
            // A real app checks a password hash (argon2) in its user store here.
            Ok(
                (field("username") == Some("ada") && field("password") == Some("lovelace"))
                    .then(|| User::with_id("1").name("Ada").email("ada@example.com")),
            )
        })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let auth = Auth::new(
        AuthConfig::builder()
            // AUTH_SECRET, and AUTH_URL or AUTH_TRUST_HOST, from the environment.
            .env_defaults(&authcore::env::Env::from_process())
            .trust_host(true) // local development: any Host header is believed
            .provider(credentials())
            .build()?,
    );
    let app = Router::new()
        .route(
            "/private",
            get(private).layer(RequireAuthLayer::new(auth.clone())),
        )
        .route("/", get(home))
        .auth_routes(auth.clone())
        .with_state(auth);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("http://localhost:3000/auth/signin (ada / lovelace)");
    axum::serve(listener, app).await?;
    Ok(())
}
