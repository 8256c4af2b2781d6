use authcore::providers::catalog::{self, GitHubOptions};
use authcore::{Auth, AuthConfig};
use authcore_axum::{AuthRouterExt, RequireAuthLayer, Session};
use axum::{Router, routing::get};

async fn me(session: Session) -> String {
    // With an adapter the id is the `users` row's: the key for your own tables.
    format!(
        "{} is user {}",
        session.user_name().unwrap_or("you"),
        session.user_id().unwrap_or_default()
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt::init();
    // The file is created on first start; `migrate` creates or updates the tables.
    let db = authcore_sqlx::SqlxAdapter::connect("sqlite://app.db?mode=rwc").await?;
    db.migrate().await?;
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process()) // AUTH_GITHUB_ID / _SECRET too
            .trust_host(true)
            .adapter(db) // database sessions from now on
            .provider(catalog::github(GitHubOptions::default()))
            .build()?,
    );
    let app = Router::new()
        .route("/me", get(me))
        .route_layer(RequireAuthLayer::new(auth.clone()))
        .auth_routes(auth.clone())
        .account_routes(auth.clone()) // GET /account, POST /account/unlink … (JSON)
        .with_state(auth);
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    axum::serve(tokio::net::TcpListener::bind(addr).await?, app).await?;
    Ok(())
}
