use std::sync::Arc;

use authcore::passwords::{PasswordAccounts, PasswordHashing};
use authcore::providers::email::EmailProvider;
use authcore::ratelimit::RateLimits;
use authcore::{Auth, AuthConfig};
use authcore_axum::{AuthRouterExt, RequireAuthLayer, Session};
use axum::{Router, routing::get};

async fn me(session: Session) -> String {
    format!(
        "{} is user {}",
        session.user_email().unwrap_or("?"),
        session.user_id().unwrap_or_default()
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt::init();
    let db = authcore_sqlx::SqlxAdapter::connect("sqlite://app.db?mode=rwc").await?;
    db.migrate().await?;
    // Argon2id with OWASP's parameters; visitors may make their own account, which signs in
    // once its address is confirmed.
    let accounts =
        PasswordAccounts::new(Arc::new(db.clone()), PasswordHashing::owasp())?.allow_sign_up(true);
    // Development only: every mail (address confirmation, password reset …) is printed. In
    // production, send `request.default_mail()` (authcore-smtp, or an email service preset).
    let mailer = EmailProvider::new("App <no-reply@localhost>").send_verification_request(
        |request| async move {
            println!(
                "{:?} mail to {}: {}",
                request.purpose, request.identifier, request.url
            );
            Ok(())
        },
    );
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process())
            .trust_host(true)
            .adapter(db)
            .provider(mailer) // sends the links; also signs in by magic link
            .password_accounts(accounts) // the provider `password` and /auth/password/…
            // Off unless set: failed sign-ins and mails counted per address and per client.
            .rate_limits(RateLimits::recommended())
            .build()?,
    );
    let app = Router::new()
        .route("/me", get(me))
        .route_layer(RequireAuthLayer::new(auth.clone()))
        .auth_routes(auth.clone())
        .account_routes(auth.clone()) // POST /account/password, /account/email …
        .with_state(auth);
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    // The client's address, for the limits counted per client.
    let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, service).await?;
    Ok(())
}
