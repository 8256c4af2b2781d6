//! One session shared with an Auth.js app: run a real `@auth/express` app and this authcore
//! app on two ports of localhost with the same secret, sign in on either, and both see the
//! user (JWT sessions: the same encrypted cookie, `authjs.session-token`).
//!
//! ```sh
//! export AUTH_SECRET=$(openssl rand -hex 32)
//! npm ci --prefix testsupport/authjs-express
//! PORT=3001 node testsupport/authjs-express/app.mjs &   # http://localhost:3001/auth/signin
//! cargo run -p example-shared-session-authjs            # http://localhost:3000/
//! ```
//!
//! Both apps let any lower-case user name sign in as `<name>@example.com`, and take a
//! session update of the name (`POST /auth/session` with `{csrfToken, data: {name}}`), so an
//! update on one shows on the other. `crates/authcore-server/tests/browser_shared_session.rs`
//! runs all of this in headless Chromium, and the same with database sessions.

use authcore::callbacks::{Callbacks, JwtParams, JwtTrigger};
use authcore::jwt::JwtClaims;
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, BoxError, User};
use authcore_axum::{AuthRouterExt, OptionalSession};
use axum::{Router, routing::get};

/// The `jwt` callback of the Auth.js app: a session update may set the name.
struct TakesNameUpdates;

#[authcore::async_trait]
impl Callbacks for TakesNameUpdates {
    async fn jwt(&self, mut p: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        if p.trigger == Some(JwtTrigger::Update)
            && let Some(name) = p.session.and_then(|s| s.get("name")).cloned()
        {
            p.token.insert("name".into(), name);
        }
        Ok(Some(p.token))
    }
}

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!(
            "authcore sees {} <{}>",
            s.user_name().unwrap_or("?"),
            s.user_email().unwrap_or("?")
        ),
        None => "Not signed in here or at the Auth.js app".to_owned(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let users = CredentialsProvider::new()
        .field("username", CredentialField::new("Username"))
        .authorize(|credentials, _request| async move {
            let name = credentials
                .get("username")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            Ok(
                (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase())).then(|| {
                    User::with_id(format!("u-{name}"))
                        .name(name)
                        .email(format!("{name}@example.com"))
                }),
            )
        });
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process()) // the same AUTH_SECRET
            .trust_host(true)
            .provider(users)
            .callbacks(TakesNameUpdates)
            .build()?,
    );
    let app = Router::new()
        .route("/", get(home))
        .auth_routes(auth.clone())
        .with_state(auth);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    axum::serve(listener, app).await?;
    Ok(())
}
