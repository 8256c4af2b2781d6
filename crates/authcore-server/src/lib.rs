//! The authcore demo server: a credentials sign-in (`demo` / a configurable password), a
//! home page showing the session, and a page only signed-in users may see.
//!
//! OAuth providers are added when their credentials are in the environment (see
//! [`oauth_providers`]): any preset of authcore's catalogue by its Auth.js variables
//! (`AUTH_DISCORD_ID` / `AUTH_DISCORD_SECRET`, `AUTH_KEYCLOAK_ISSUER` …) and a generic OpenID
//! Connect provider with id `oidc` (`AUTH_OIDC_ISSUER`, `AUTH_OIDC_ID`, `AUTH_OIDC_SECRET`,
//! optional `AUTH_OIDC_NAME`).
//!
//! With a database (the default), passkeys (WebAuthn, id `passkey`) and email sign-in
//! (magic links) are offered too. Magic links go
//! out through the SMTP relay in `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…`), or,
//! when it is not set, are printed to the terminal by a console sender.
//!
//! [`ServerConfig::from_env`] (or [`ServerConfig::from_file`]) reads the configuration and
//! [`ServerConfig::build`] opens what it names and builds the [`Server`]: its handler and
//! its axum [`Router`], which the `authcore-server` binary serves. [`router`] serves an
//! [`Auth`] configured elsewhere with the demo's pages. The provider configuration is
//! mirrored by a Node (Auth.js) server for load comparisons: keep both the same.
#![forbid(unsafe_code)]

use askama::Template;
use authcore::Auth;
use authcore::env::Env;
use authcore::providers::catalog::{self, CatalogError};
use authcore::providers::{EmailProvider, OAuthProvider};
use authcore_axum::{AuthRouterExt, OptionalSession, RequireAuthLayer, Session};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

pub mod config;
pub mod config_file;
mod config_value;
pub mod ops;
pub mod serve;
mod server;
pub use config::{
    DEFAULT_ADDR, DEFAULT_DATABASE_URL, DEFAULT_DEMO_PASSWORD, DEFAULT_EMAIL_FROM, EmailDelivery,
    ServerConfig, ServerConfigError, redact_url_password,
};
pub use config_file::{ConfigFile, ConfigFileError, SecretValue};
pub use server::{Server, ServerError, ServerService};

/// Display name of the generic OIDC provider when `AUTH_OIDC_NAME` is not set.
pub const DEFAULT_OIDC_NAME: &str = "OpenID Connect";
/// The demo user's username.
pub const DEMO_USERNAME: &str = "demo";
/// The demo user's email.
pub const DEMO_EMAIL: &str = "demo@example.com";

/// Host names a server listening on loopback answers when nothing else is configured.
/// Any port: the server's own port and those of the apps behind the gateway.
pub const LOOPBACK_HOSTS: [&str; 4] = ["localhost:*", "*.localhost:*", "127.0.0.1:*", "[::1]:*"];

/// Which request hosts the server builds its links from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostTrust {
    /// Only these hosts (`AUTHCORE_ALLOWED_HOSTS`, or [`LOOPBACK_HOSTS`] on loopback).
    AllowList(Vec<String>),
    /// As `AUTH_URL` / `AUTH_TRUST_HOST` say; with neither (on a public address), no host
    /// is trusted and every request answers `UntrustedHost`.
    AsConfigured,
}

/// The server trusts no request host by default: `AUTHCORE_ALLOWED_HOSTS` when set (with
/// `AUTH_TRUST_HOST` it may come from `X-Forwarded-Host`); else `AUTH_URL` or an explicit
/// `AUTH_TRUST_HOST`; else, while it listens on loopback, the loopback names only.
pub fn host_trust(config: &ServerConfig) -> HostTrust {
    let set = |k: &str| config.env.get(k).is_some_and(|v| !v.trim().is_empty());
    if let Some(hosts) = &config.allowed_hosts {
        HostTrust::AllowList(hosts.clone())
    } else if set("AUTH_URL") || set("AUTH_TRUST_HOST") || !config.addr.ip().is_loopback() {
        HostTrust::AsConfigured
    } else {
        HostTrust::AllowList(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect())
    }
}

/// The demo's email provider (id `email`): SMTP when configured, otherwise a console sender
/// that prints each magic link and security notice to standard output.
pub fn email_provider(delivery: &EmailDelivery, from: &str) -> EmailProvider {
    match delivery {
        EmailDelivery::Smtp(sender) => authcore_smtp::email_provider((**sender).clone(), from),
        EmailDelivery::Console => {
            EmailProvider::new(from)
                .send_verification_request(|request| async move {
                    // The demo's stand-in for a mailbox: the link is a credential, printed on purpose.
                    println!(
                        "magic link for {} (valid until {}):\n  {}",
                        request.identifier, request.expires, request.url
                    );
                    Ok(())
                })
                .send_security_notice(|notice| async move {
                    println!("security notice for {}: {}", notice.to, notice.subject);
                    Ok(())
                })
        }
    }
}

/// The OAuth providers configured in `env`, in this order:
///
/// * every preset of the catalogue ([`catalog::entries()`], the 93 OAuth / OIDC ids of
///   Auth.js) with any of its `AUTH_<ID>_ID`, `AUTH_<ID>_SECRET` or settings
///   (`AUTH_<ID>_ISSUER`, `AUTH_NETSUITE_ACCOUNT_ID` …) set to a non-empty value (id
///   upper-cased, `-` → `_`); it needs the id, the secret and its required settings;
/// * a generic OpenID Connect provider ([`catalog::oidc()`]), id `oidc`, with
///   `AUTH_OIDC_ISSUER`, `AUTH_OIDC_ID` and `AUTH_OIDC_SECRET`; its name is `AUTH_OIDC_NAME`
///   or [`DEFAULT_OIDC_NAME`].
///
/// A preset with some of its settings but not all is an error naming the missing variable
/// (the server then does not start). Register `<origin><base path>/callback/<id>` (by
/// default `http://127.0.0.1:3000/auth/callback/github` …) as their redirect URI.
pub fn oauth_providers(env: &Env) -> Result<Vec<OAuthProvider>, CatalogError> {
    let var = |k: &str| env.get(k).filter(|v| !v.trim().is_empty());
    let mut providers = Vec::new();
    for entry in catalog::entries() {
        if entry.is_configured(env) {
            providers.push(entry.build(env)?);
        }
    }
    if let (Some(issuer), Some(id), Some(secret)) = (
        var("AUTH_OIDC_ISSUER"),
        var("AUTH_OIDC_ID"),
        var("AUTH_OIDC_SECRET"),
    ) {
        let name = var("AUTH_OIDC_NAME").unwrap_or(DEFAULT_OIDC_NAME);
        providers.push(
            catalog::oidc("oidc", name, issuer)
                .client_id(id)
                .client_secret(secret),
        );
    }
    Ok(providers)
}

/// The demo application around a handler built elsewhere: `/` (home), `/protected`
/// (signed-in users only), the account routes, and authcore under its base path (`/auth`
/// unless `AUTH_URL` says otherwise).
///
/// This is the way to serve the demo's pages with an [`Auth`] configured by hand. The
/// standalone server is [`ServerConfig::build`]'s [`Server`] instead: its router is this
/// one around the handler of its configuration, with the gateway's routes, the probes and
/// the HTTP metrics the configuration asks for.
pub fn router(auth: Auth) -> Router {
    let protected = Router::new()
        .route("/protected", get(protected_page))
        .route_layer(RequireAuthLayer::new(auth.clone()));
    let app = Router::new()
        .route("/", get(home_page))
        .merge(protected)
        .account_routes(auth.clone())
        .auth_routes(auth.clone());
    // The request log is a DEBUG line; without it the middleware (a boxed future per
    // request) is not installed at all.
    let app = if request_log_enabled() {
        app.layer(middleware::from_fn(log_request))
    } else {
        app
    };
    app.with_state(auth)
}

/// Whether the request log (a DEBUG line per request, [`router`]'s layer) is on.
pub(crate) fn request_log_enabled() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

/// The signed-in user, as the pages show it.
struct UserView<'a> {
    name: &'a str,
    email: Option<&'a str>,
}

impl<'a> UserView<'a> {
    fn of(session: &'a Session) -> Self {
        UserView {
            name: session.user_name().unwrap_or("(no name)"),
            email: session.user_email(),
        }
    }
}

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage<'a> {
    base_path: &'a str,
    user: Option<UserView<'a>>,
}

#[derive(Template)]
#[template(path = "protected.html")]
struct ProtectedPage<'a> {
    base_path: &'a str,
    user: UserView<'a>,
    expires: Option<&'a str>,
}

async fn home_page(
    State(auth): State<Auth>,
    OptionalSession(session): OptionalSession,
) -> Response {
    html(&HomePage {
        base_path: auth.config().base_path(),
        user: session.as_ref().map(UserView::of),
    })
}

async fn protected_page(State(auth): State<Auth>, session: Session) -> Response {
    html(&ProtectedPage {
        base_path: auth.config().base_path(),
        user: UserView::of(&session),
        expires: session.expires(),
    })
}

/// Renders a page; it depends on the session, so no cache may keep it.
fn html(page: &impl Template) -> Response {
    match page.render() {
        Ok(body) => {
            let mut res = Html(body).into_response();
            res.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, no-store"),
            );
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "page rendering failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Logs each request at `debug` level (`RUST_LOG=authcore_server=debug`).
async fn log_request(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let start = std::time::Instant::now();
    let res = next.run(req).await;
    tracing::debug!(
        %method,
        path,
        status = res.status().as_u16(),
        elapsed_us = start.elapsed().as_micros(),
        "request"
    );
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn database_passwords_are_not_displayed() {
        let shown = redact_url_password("postgres://app:s3cr3t-pw@127.0.0.1:5432/test");
        assert_eq!(shown, "postgres://app:%5Bredacted%5D@127.0.0.1:5432/test");
        assert!(!shown.contains("s3cr3t-pw"));
        assert_eq!(
            redact_url_password(DEFAULT_DATABASE_URL),
            DEFAULT_DATABASE_URL
        );
        assert_eq!(redact_url_password("demo.db"), "demo.db");
        let mut config = ServerConfig::new("a demo test secret, long and random enough");
        config.database_url = Some("postgres://app:s3cr3t-pw@db/test".into());
        assert!(!format!("{config:?}").contains("s3cr3t-pw"));
    }

    #[test]
    fn pages_escape_user_data() {
        let html = HomePage {
            base_path: "/auth",
            user: Some(UserView {
                name: "<script>alert(1)</script>",
                email: Some("a&b@example.com"),
            }),
        }
        .render()
        .unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&#60;script&#62;"), "{html}");
        assert!(html.contains("a&#38;b@example.com"), "{html}");
    }

    #[tokio::test]
    async fn config_from_env() {
        let c = ServerConfig::from_env(Env::default()).unwrap();
        assert_eq!(c.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(c.demo_password, DEFAULT_DEMO_PASSWORD);
        assert!(c.secret_is_ephemeral);
        assert_eq!(c.secret.as_ref().map(String::len), Some(64));
        assert!(!format!("{c:?}").contains(c.secret.as_deref().unwrap()));

        let mut c = ServerConfig::from_env(Env::from_pairs([
            ("AUTHCORE_ADDR", "0.0.0.0:8080"),
            ("AUTHCORE_DEMO_PASSWORD", "hunter2"),
            ("AUTH_SECRET", "s3cret-xxxxxxxxxxxxxxxxxxxxxxxxx"),
        ]))
        .unwrap();
        assert_eq!(c.addr.to_string(), "0.0.0.0:8080");
        assert_eq!(c.demo_password, "hunter2");
        assert!(!c.secret_is_ephemeral && c.secret.is_none());
        c.database_url = None;
        assert!(c.build().await.is_ok());

        let e = ServerConfig::from_env(Env::from_pairs([("AUTHCORE_ADDR", "nope")])).unwrap_err();
        assert!(e.to_string().contains("AUTHCORE_ADDR"));
    }

    #[test]
    fn database_pool_from_env() {
        let c = ServerConfig::from_env(Env::default()).unwrap();
        assert_eq!(c.database_pool, authcore_sqlx::PoolSettings::default());
        assert_eq!(c.database_pool.timeout, std::time::Duration::from_secs(5));
        let c = ServerConfig::from_env(Env::from_pairs([
            ("AUTHCORE_DATABASE_MAX_CONNECTIONS", "32"),
            ("AUTHCORE_DATABASE_TIMEOUT", "1.5"),
            ("AUTHCORE_DATABASE_DIRECT_READS", "off"),
        ]))
        .unwrap();
        assert_eq!(c.database_pool.max_connections, 32);
        assert!(!c.database_pool.direct_session_reads);
        let on =
            ServerConfig::from_env(Env::from_pairs([("AUTHCORE_DATABASE_DIRECT_READS", "on")]))
                .unwrap();
        assert!(on.database_pool.direct_session_reads);
        let w = ServerConfig::from_env(Env::from_pairs([("AUTHCORE_WORKERS", "3")])).unwrap();
        assert_eq!(w.workers, 3);
        assert_eq!(
            c.database_pool.timeout,
            std::time::Duration::from_millis(1500)
        );
        for (key, bad) in [
            ("AUTHCORE_DATABASE_MAX_CONNECTIONS", "0"),
            ("AUTHCORE_DATABASE_MAX_CONNECTIONS", "many"),
            ("AUTHCORE_DATABASE_TIMEOUT", "-1"),
            ("AUTHCORE_DATABASE_TIMEOUT", "soon"),
            ("AUTHCORE_DATABASE_DIRECT_READS", "yes"),
            ("AUTHCORE_WORKERS", "0"),
            ("AUTHCORE_WORKERS", "1000000"),
        ] {
            let e = ServerConfig::from_env(Env::from_pairs([(key, bad)])).unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
    }

    #[test]
    fn oauth_providers_from_env() {
        assert!(oauth_providers(&Env::default()).unwrap().is_empty());
        let providers = oauth_providers(&Env::from_pairs([
            ("AUTH_GITHUB_ID", "gh-id"),
            ("AUTH_GITHUB_SECRET", "gh-secret"),
            ("AUTH_GOOGLE_ID", "g-id"),
            ("AUTH_GOOGLE_SECRET", "g-secret"),
            ("AUTH_OIDC_ISSUER", "https://sso.example.com"),
            ("AUTH_OIDC_ID", "o-id"),
            ("AUTH_OIDC_SECRET", "o-secret"),
        ]))
        .unwrap();
        let ids: Vec<&str> = providers.iter().map(OAuthProvider::id).collect();
        assert_eq!(ids, ["github", "google", "oidc"]);
        let expected = [
            ("gh-id", "gh-secret"),
            ("g-id", "g-secret"),
            ("o-id", "o-secret"),
        ];
        for (p, (client_id, secret)) in providers.iter().zip(expected) {
            let debug = format!("{p:?}");
            assert!(debug.contains(client_id), "{debug}");
            assert!(
                debug.contains("[redacted]") && !debug.contains(secret),
                "{debug}"
            );
        }
        assert!(format!("{:?}", providers[2]).contains("https://sso.example.com"));
    }

    /// Any catalogue preset by its Auth.js variables, as a user moving from Auth.js sets them.
    #[tokio::test]
    async fn catalogue_providers_from_env() {
        let providers = oauth_providers(&Env::from_pairs([
            ("AUTH_DISCORD_ID", "d-id"),
            ("AUTH_DISCORD_SECRET", "d-secret"),
            ("AUTH_KEYCLOAK_ID", "k-id"),
            ("AUTH_KEYCLOAK_SECRET", "k-secret"),
            ("AUTH_KEYCLOAK_ISSUER", "https://kc.example/realms/main"),
            ("AUTH_MICROSOFT_ENTRA_ID_ID", "m-id"),
            ("AUTH_MICROSOFT_ENTRA_ID_SECRET", "m-secret"),
        ]))
        .unwrap();
        let ids: Vec<&str> = providers.iter().map(OAuthProvider::id).collect();
        assert_eq!(ids, ["discord", "keycloak", "microsoft-entra-id"]);
        // Some settings but not all: an error naming what is missing, without the secret.
        for (pairs, missing) in [
            (
                vec![("AUTH_OKTA_ID", "o"), ("AUTH_OKTA_SECRET", "top-secret")],
                "AUTH_OKTA_ISSUER",
            ),
            (
                vec![("AUTH_DISCORD_SECRET", "top-secret")],
                "AUTH_DISCORD_ID",
            ),
        ] {
            let err = oauth_providers(&Env::from_pairs(pairs))
                .unwrap_err()
                .to_string();
            assert!(err.contains(missing), "{err}");
            assert!(!err.contains("top-secret"), "{err}");
        }
        // ... and the whole configuration fails to build with it.
        let mut config = ServerConfig::new("a secret long enough for the demo");
        config.env = Env::from_pairs([("AUTH_AUTH0_ID", "a"), ("AUTH_AUTH0_SECRET", "b")]);
        let err = config.build().await.unwrap_err().to_string();
        assert!(err.contains("AUTH_AUTH0_ISSUER"), "{err}");
    }
}
