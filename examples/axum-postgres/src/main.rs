//! Database sessions on PostgreSQL: users, accounts and sessions in Auth.js's
//! `@auth/pg-adapter` tables (so an Auth.js app can share them), magic-link sign-in with the
//! link printed on the terminal instead of mailed.
//!
//! ```sh
//! export AUTH_SECRET=$(openssl rand -hex 32)
//! export DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
//! cargo run -p example-axum-postgres
//! ```

use authcore::providers::email::EmailProvider;
use authcore::{Auth, AuthConfig};
use authcore_axum::{AuthRouterExt, OptionalSession};
use authcore_sqlx::{PoolSettings, SqlxAdapter};
use axum::{Router, routing::get};

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!(
            "Signed in as {} until {}",
            s.user_email().unwrap_or("?"),
            s.expires().unwrap_or("?")
        ),
        None => "Not signed in: visit /auth/signin".to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")?;
    let db = SqlxAdapter::postgres_with(&url, PoolSettings::default().max_connections(10)).await?;
    db.migrate().await?;
    // In production: authcore_smtp::email_provider(SmtpSender::from_url(…)?, "…").
    let email = EmailProvider::new("App <no-reply@example.com>").send_verification_request(
        |request| async move {
            println!("magic link for {}: {}", request.identifier, request.url);
            Ok(())
        },
    );
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process())
            .trust_host(true)
            .provider(email)
            .adapter(db) // database sessions: revocable, one row each
            .build()?,
    );
    let app = Router::new()
        .route("/", get(home))
        .auth_routes(auth.clone())
        .with_state(auth);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("http://localhost:3000/auth/signin");
    axum::serve(listener, app).await?;
    Ok(())
}
