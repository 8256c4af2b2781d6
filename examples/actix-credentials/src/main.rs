//! authcore in an actix-web app: a credentials form, JWT sessions, a guarded scope.
//!
//! ```sh
//! AUTH_SECRET=$(openssl rand -hex 32) cargo run -p example-actix-credentials
//! # http://localhost:3000/auth/signin — user "ada", password "lovelace"
//! ```

use actix_web::{App, HttpServer, web};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_actix::{OptionalSession, RequireAuth, Session, auth_routes};

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

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let credentials = CredentialsProvider::new()
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
        });
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process()) // AUTH_SECRET …
            .trust_host(true) // local development
            .provider(credentials)
            .build()?,
    );
    println!("http://localhost:3000/auth/signin (ada / lovelace)");
    HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(auth.clone()))
            .service(auth_routes(auth.clone()))
            .service(
                web::scope("/private")
                    .wrap(RequireAuth::new(auth.clone()))
                    .route("", web::get().to(private)),
            )
            .route("/", web::get().to(home))
    })
    .bind(("127.0.0.1", 3000))?
    .run()
    .await?;
    Ok(())
}
