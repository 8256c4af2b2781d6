//! A plain axum app with authcore's routes, the gateway's forward-auth endpoints
//! (`authcore-gateway`) and authcore as an OpenID Provider (`authcore-oidc-provider`) for
//! one client, on SQLite: sign in with a magic link (printed on the terminal), then let
//! nginx, Caddy or Traefik ask `/forward-auth/…` about each request to an app behind them,
//! or sign in to an OpenID Connect client through `/oidc`.
//!
//! ```sh
//! openssl genpkey -algorithm ed25519 -out oidc.pem
//! export AUTH_SECRET=$(openssl rand -hex 32) AUTH_URL=http://127.0.0.1:3000/auth
//! export OIDC_SIGNING_KEY=oidc.pem OIDC_CLIENT_SECRET=$(openssl rand -hex 32)
//! export OIDC_REDIRECT_URI=http://127.0.0.1:4000/callback
//! cargo run -p example-axum-provider-gateway
//! ```

use example_axum_provider_gateway::{app, provider_section};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = authcore::env::Env::from_process();
    let var = std::env::var;
    let section = provider_section(
        &var("OIDC_SIGNING_KEY")?,
        &var("OIDC_CLIENT_SECRET")?,
        &var("OIDC_REDIRECT_URI")?,
    );
    let app = app(&env, section).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!(
        "discovery: http://127.0.0.1:3000{}",
        authcore_oidc_provider::DISCOVERY_PATH
    );
    println!(
        "forward auth (nginx): http://127.0.0.1:3000{}",
        authcore_gateway::NGINX_PATH
    );
    axum::serve(listener, app).await?;
    Ok(())
}
