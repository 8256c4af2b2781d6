use authcore::adapter::{Adapter, NewUser};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
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
    let users = db.clone();
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(&authcore::env::Env::from_process())
            .trust_host(true)
            .adapter(db)
            .credentials_database_sessions(true)
            .provider(
                CredentialsProvider::new()
                    .field("email", CredentialField::new("Email").input_type("email"))
                    .field(
                        "password",
                        CredentialField::new("Password").input_type("password"),
                    )
                    .authorize(move |credentials, _request| {
                        let users = users.clone();
                        async move {
                            let field = |k: &str| {
                                credentials
                                    .get(k)
                                    .and_then(|v| v.as_str())
                                    .unwrap_or_default()
                                    .to_owned()
                            };
                            let (email, password) = (field("email"), field("password"));
                            // Your password check goes here (an argon2 hash in your own table);
                            // this example takes one shared password from the environment.
                            if password.is_empty()
                                || std::env::var("APP_PASSWORD").ok() != Some(password)
                            {
                                return Ok(None);
                            }
                            // The adapter's user, found or created (`?` works on adapter calls).
                            let user = match users.get_user_by_email(&email).await? {
                                Some(user) => user,
                                None => {
                                    users
                                        .create_user(NewUser {
                                            email: Some(email.clone()),
                                            ..NewUser::default()
                                        })
                                        .await?
                                }
                            };
                            Ok(Some(User::with_id(user.id).email(email)))
                        }
                    }),
            )
            .build()?,
    );
    let app = Router::new()
        .route("/me", get(me))
        .route_layer(RequireAuthLayer::new(auth.clone()))
        .auth_routes(auth.clone())
        .with_state(auth);
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    axum::serve(tokio::net::TcpListener::bind(addr).await?, app).await?;
    Ok(())
}
