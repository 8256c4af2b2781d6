use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_axum::{AuthRouterExt, OptionalSession, RequireAuthLayer, Session};
use axum::{Router, routing::get};

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!("Hello, {}", s.user_name().unwrap_or("stranger")),
        None => "Not signed in: visit /auth/signin".to_owned(),
    }
}

async fn dashboard(session: Session) -> String {
    // `user_id()`: the id `authorize` (or the adapter) gave, for your own queries.
    let id = session.user_id().unwrap_or_default();
    format!(
        "The dashboard of {} (user {id})",
        session.user_name().unwrap_or("you")
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // authcore logs through `tracing`: failed sign-ins (`CredentialsSignin`, `MissingCSRF` …)
    // are one line each, at warn or error. Without a subscriber they print nothing.
    tracing_subscriber::fmt::init();
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process()) // AUTH_SECRET, AUTH_URL …
            .trust_host(true) // development only: see deploying.md
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .authorize(|credentials, _request| async move {
                        // A stand-in check: "Password accounts" below keeps real passwords.
                        let name = credentials.get("username").and_then(|v| v.as_str());
                        Ok((name == Some("ada")).then(|| User::with_id("1").name("Ada")))
                    }),
            )
            // A configuration error says what to fix, also through `?` in `main`.
            .build()?,
    );
    let app = Router::new()
        // Signed out, `/dashboard` redirects to the sign-in page and back.
        .route("/dashboard", get(dashboard))
        .route_layer(RequireAuthLayer::new(auth.clone()))
        .route("/", get(home))
        .auth_routes(auth.clone())
        .with_state(auth);
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
