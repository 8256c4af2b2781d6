//! The app of `main.rs`, built here so that its test can drive it in memory.

use std::sync::Arc;

use authcore::env::Env;
use authcore::providers::email::EmailProvider;
use authcore::two_factor::TwoFactorOptions;
use authcore::{Auth, AuthConfig};
use authcore_axum::AuthRouterExt;
use authcore_gateway::{Gateway, GatewaySection};
use authcore_oidc_provider::{
    BackChannelLogout, ClientConfig, ClientSecret, OpenIdProvider, ProviderSection,
};
use authcore_sqlx::SqlxAdapter;

/// The provider's configuration: its signing key (a PKCS#8 PEM file) and one client.
pub fn provider_section(signing_key: &str, secret: &str, redirect_uri: &str) -> ProviderSection {
    let mut client = ClientConfig::default();
    client.id = "example-app".into();
    client.secret = Some(ClientSecret::new(secret));
    client.redirect_uris = vec![redirect_uri.to_owned()];
    let mut section = ProviderSection::default();
    section.signing_keys = vec![signing_key.into()];
    section.clients = vec![client];
    section
}

/// authcore's routes (magic links printed on the terminal, users in an in-memory SQLite
/// database), the gateway's forward-auth routes with its default rule (signed-in users),
/// and the OpenID Provider, in one axum router. `env` needs `AUTH_SECRET` and `AUTH_URL`.
pub async fn app(
    env: &Env,
    section: ProviderSection,
) -> Result<axum::Router, Box<dyn std::error::Error>> {
    // Both are validated once, before the handler: the gateway's callbacks put into the
    // session what its rules read, and the provider's events tell its clients of sign-outs.
    let gateway = Arc::new(Gateway::new(env, GatewaySection::default())?);
    let provider = Arc::new(OpenIdProvider::new(env, section)?);
    let back_channel = BackChannelLogout::new(Arc::clone(&provider));

    let db = SqlxAdapter::sqlite("sqlite::memory:").await?;
    db.migrate().await?;
    let email = EmailProvider::new("App <no-reply@example.com>").send_verification_request(
        |request| async move {
            println!("magic link for {}: {}", request.identifier, request.url);
            Ok(())
        },
    );
    let auth = Auth::new(
        AuthConfig::builder()
            .env_defaults(env)
            .provider(email)
            .adapter(db.clone())
            // The provider's `auth_time`, `amr` and `max_age` come from the sign-in records
            // that sessions keep with second factors on.
            .two_factor(TwoFactorOptions::default())
            .callbacks(gateway.callbacks(Some(Arc::new(db.clone()))))
            .events(back_channel.clone())
            .build()?,
    );
    back_channel.attach(&auth);

    Ok(axum::Router::new()
        .auth_routes(auth.clone())
        .with_state(auth.clone())
        .merge(gateway.router(auth.clone()))
        .merge(provider.router(auth, Arc::new(db))))
}
