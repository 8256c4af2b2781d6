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
//! [`DemoConfig::from_env`] reads the configuration and [`app`] builds the axum
//! [`Router`]; the `authcore-server` binary serves it. The provider configuration is
//! mirrored by a Node (Auth.js) server for load comparisons: keep both the same.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use askama::Template;
use authcore::adapter::{Adapter, NewUser};
use authcore::env::Env;
use authcore::providers::catalog::{self, CatalogError};
use authcore::providers::{
    AuthorizeError, CredentialField, CredentialsProvider, EmailProvider, OAuthProvider,
    WebAuthnProvider,
};
use authcore::types::{PagesOptions, Theme};
use authcore::{Auth, AuthConfig, ConfigError, User};
use authcore_axum::{AuthDispatch, AuthRouterExt, OptionalSession, RequireAuthLayer, Session};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use subtle::ConstantTimeEq;
use tower::util::Either;

mod account;
pub mod config_file;
pub mod gateway;
pub mod ops;
pub mod serve;
pub use config_file::{ConfigFile, ConfigFileError, SecretValue};

/// Listen address when `AUTHCORE_ADDR` is not set.
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
/// Display name of the generic OIDC provider when `AUTH_OIDC_NAME` is not set.
pub const DEFAULT_OIDC_NAME: &str = "OpenID Connect";
/// Demo password when `AUTHCORE_DEMO_PASSWORD` is not set.
pub const DEFAULT_DEMO_PASSWORD: &str = "authcore-demo";
/// The demo user's username.
pub const DEMO_USERNAME: &str = "demo";

/// Configuration of the demo server.
#[derive(Clone)]
pub struct DemoConfig {
    /// Where to listen (`AUTHCORE_ADDR`).
    pub addr: SocketAddr,
    /// The session secret. `None`: taken from `env` (`AUTH_SECRET`, `AUTH_SECRET_1..3`).
    pub secret: Option<String>,
    /// Whether `secret` was generated at start-up (sessions end with the process).
    pub secret_is_ephemeral: bool,
    /// The demo user's password (`AUTHCORE_DEMO_PASSWORD`).
    pub demo_password: String,
    /// Environment for authcore's defaults (`AUTH_URL`, `AUTH_TRUST_HOST`, `AUTH_SECRET`) and
    /// the optional OAuth providers (`AUTH_GITHUB_*`, `AUTH_GOOGLE_*`, `AUTH_OIDC_*`).
    pub env: Env,
    /// The database (`AUTHCORE_DATABASE_URL`, default [`DEFAULT_DATABASE_URL`]; `none` for
    /// no database): `sqlite://…`, `postgres://…` or `mysql://…`. With one, users and OAuth accounts are
    /// stored and sessions live in the database.
    pub database_url: Option<String>,
    /// How magic links are delivered (`SMTP_URL`; default: printed to the terminal).
    pub email: EmailDelivery,
    /// Sender of the magic-link mails (`AUTHCORE_EMAIL_FROM`, default [`DEFAULT_EMAIL_FROM`]).
    pub email_from: String,
    /// Theme of the built-in pages (`[theme]` of the config file).
    pub theme: Theme,
    /// Custom page paths (`[pages]` of the config file).
    pub pages: PagesOptions,
    /// The single sign-on gateway ([`gateway`]), when `[gateway]` or its variables ask
    /// for it.
    pub gateway: Option<Arc<gateway::Gateway>>,
    /// Where `/metrics` is served (`AUTHCORE_METRICS_ADDR`); none: no metrics are kept.
    pub metrics_addr: Option<SocketAddr>,
    /// How logs are written (`AUTHCORE_LOG_FORMAT`: `text` or `json`).
    pub log_format: ops::LogFormat,
    /// The request hosts to answer (`AUTHCORE_ALLOWED_HOSTS`, comma-separated: exact
    /// names, IP literals, `*.example.com`); see [`host_trust`].
    pub allowed_hosts: Option<Vec<String>>,
    /// Brute-force limits: [`RateLimits::recommended`](authcore::ratelimit::RateLimits::recommended)
    /// unless `AUTHCORE_RATE_LIMITS=off`; `[rate_limits]` of the config file adjusts each.
    pub rate_limits: authcore::ratelimit::RateLimits,
    /// Redis for the rate-limit counts, shared by every instance (`AUTHCORE_REDIS_URL`);
    /// none: counted in this process.
    pub redis_url: Option<String>,
    /// Proxies whose `X-Forwarded-For` names the client (`AUTHCORE_TRUSTED_PROXIES`:
    /// addresses or CIDR ranges, comma-separated).
    pub trusted_proxies: Vec<String>,
    /// Header read and request timeouts, connection cap (`AUTHCORE_HEADER_READ_TIMEOUT`,
    /// `AUTHCORE_REQUEST_TIMEOUT`, `AUTHCORE_MAX_CONNECTIONS`).
    pub limits: serve::ConnectionLimits,
    /// The database pool: its size (`AUTHCORE_DATABASE_MAX_CONNECTIONS`, default 10), the
    /// bound on each database operation (`AUTHCORE_DATABASE_TIMEOUT`, seconds, default 5)
    /// and whether session reads take their own connections on SQLite and PostgreSQL
    /// (`AUTHCORE_DATABASE_DIRECT_READS`, `on` or `off`, default `on`:
    /// [`authcore_sqlx::PoolSettings::direct_session_reads`]).
    pub database_pool: authcore_sqlx::PoolSettings,
    /// Threads that serve requests (`AUTHCORE_WORKERS`; default: the CPUs the process may
    /// run on). With 1 the server runs on a single-threaded runtime
    /// ([`serve::runtime`]).
    pub workers: usize,
}

/// Default sender of the demo's magic-link mails.
pub const DEFAULT_EMAIL_FROM: &str = "authcore demo <no-reply@authcore.test>";

/// How the demo delivers magic links.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EmailDelivery {
    /// Printed to standard output (no mail is sent).
    Console,
    /// Sent through an SMTP relay.
    Smtp(Box<authcore_smtp::SmtpSender>),
}

/// The demo's default database: an SQLite file in the working directory, created and
/// migrated on first start.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://authcore-demo.db?mode=rwc";

impl std::fmt::Debug for DemoConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoConfig")
            .field("addr", &self.addr)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field("secret_is_ephemeral", &self.secret_is_ephemeral)
            .field("demo_password", &"[redacted]")
            .field(
                "database_url",
                &self.database_url.as_deref().map(redact_url_password),
            )
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

/// A database URL for display: a password in it (`postgres://user:pass@host/db`) is
/// replaced by `[redacted]`; anything that does not parse as a URL is shown as it is (a
/// file path has no password).
pub fn redact_url_password(url: &str) -> String {
    match authcore::url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("[redacted]"));
            u.into()
        }
        _ => url.to_owned(),
    }
}

/// Why the demo configuration could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum DemoConfigError {
    /// `AUTHCORE_ADDR` or `AUTHCORE_METRICS_ADDR` is not a socket address.
    InvalidAddr {
        /// The variable.
        var: &'static str,
        /// The value.
        value: String,
    },
    /// A setting has a value it cannot take (the message names it).
    InvalidSetting(String),
    /// No `AUTH_SECRET`, and the OS random generator failed.
    Random(getrandom::Error),
    /// `SMTP_URL` cannot be used.
    InvalidSmtpUrl(authcore_smtp::Error),
    /// The configuration file cannot be read or parsed.
    File(ConfigFileError),
    /// The gateway configuration cannot be used.
    Gateway(gateway::GatewayError),
}

impl std::fmt::Display for DemoConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DemoConfigError::InvalidAddr { var, value } => write!(
                f,
                "{var}={value:?} is not a socket address (like {DEFAULT_ADDR})"
            ),
            DemoConfigError::InvalidSetting(message) => f.write_str(message),
            DemoConfigError::InvalidSmtpUrl(e) => write!(f, "SMTP_URL: {e}"),
            DemoConfigError::File(e) => write!(f, "configuration file: {e}"),
            DemoConfigError::Gateway(e) => write!(f, "gateway: {e}"),
            DemoConfigError::Random(e) => {
                write!(
                    f,
                    "AUTH_SECRET is not set and no random secret could be made: {e}"
                )
            }
        }
    }
}

impl std::error::Error for DemoConfigError {}

impl DemoConfig {
    /// A configuration with a fixed secret, the default address and password, and an empty
    /// environment (for tests).
    pub fn new(secret: impl Into<String>) -> Self {
        DemoConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            secret: Some(secret.into()),
            secret_is_ephemeral: false,
            demo_password: DEFAULT_DEMO_PASSWORD.to_owned(),
            env: Env::default(),
            database_url: None,
            email: EmailDelivery::Console,
            email_from: DEFAULT_EMAIL_FROM.to_owned(),
            theme: Theme::default(),
            pages: PagesOptions::default(),
            gateway: None,
            metrics_addr: None,
            log_format: ops::LogFormat::Text,
            allowed_hosts: None,
            limits: serve::ConnectionLimits::default(),
            database_pool: authcore_sqlx::PoolSettings::default(),
            workers: serve::default_workers(),
            rate_limits: authcore::ratelimit::RateLimits::recommended(),
            redis_url: None,
            trusted_proxies: Vec::new(),
        }
    }

    /// Reads the configuration file at `path` ([`config_file`]), with the variables set in
    /// `process` taking precedence over the file's values.
    pub fn from_file(path: &std::path::Path, process: Env) -> Result<Self, DemoConfigError> {
        let file = ConfigFile::load(path).map_err(DemoConfigError::File)?;
        let mut config = Self::from_env_and_gateway(file.env_under(process), file.gateway.clone())?;
        config.theme = file.theme.clone();
        if let Some(section) = &file.rate_limits {
            config.rate_limits = section.apply(config.rate_limits);
        }
        config.pages = file.pages.clone();
        Ok(config)
    }

    /// Reads `AUTHCORE_ADDR`, `AUTHCORE_DEMO_PASSWORD` and `AUTH_SECRET` from `env`; without
    /// a secret, makes a random one ([`secret_is_ephemeral`](Self::secret_is_ephemeral)).
    pub fn from_env(env: Env) -> Result<Self, DemoConfigError> {
        Self::from_env_and_gateway(env, None)
    }

    fn from_env_and_gateway(
        env: Env,
        section: Option<gateway::GatewaySection>,
    ) -> Result<Self, DemoConfigError> {
        let socket_addr = |var: &'static str| -> Result<Option<SocketAddr>, DemoConfigError> {
            match env.get(var).filter(|v| !v.trim().is_empty()) {
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| DemoConfigError::InvalidAddr {
                        var,
                        value: v.to_owned(),
                    }),
                None => Ok(None),
            }
        };
        let addr =
            socket_addr("AUTHCORE_ADDR")?.unwrap_or(SocketAddr::from(([127, 0, 0, 1], 3000)));
        let metrics_addr = socket_addr("AUTHCORE_METRICS_ADDR")?;
        let log_format = env
            .get("AUTHCORE_LOG_FORMAT")
            .unwrap_or_default()
            .parse()
            .map_err(DemoConfigError::InvalidSetting)?;
        let limits = serve::ConnectionLimits::from_vars(|k| env.get(k))
            .map_err(DemoConfigError::InvalidSetting)?;
        let demo_password = env
            .get("AUTHCORE_DEMO_PASSWORD")
            .filter(|v| !v.is_empty())
            .unwrap_or(DEFAULT_DEMO_PASSWORD)
            .to_owned();
        let has_secret = [
            "AUTH_SECRET",
            "AUTH_SECRET_1",
            "AUTH_SECRET_2",
            "AUTH_SECRET_3",
        ]
        .iter()
        .any(|k| env.get(k).is_some_and(|v| !v.is_empty()));
        let (secret, secret_is_ephemeral) = if has_secret {
            (None, false)
        } else {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(DemoConfigError::Random)?;
            (Some(hex::encode(bytes)), true)
        };
        let database_url = match env.get("AUTHCORE_DATABASE_URL").map(str::trim) {
            Some("" | "none") => None,
            Some(url) => Some(url.to_owned()),
            None => Some(DEFAULT_DATABASE_URL.to_owned()),
        };
        let email = match env.get("SMTP_URL").map(str::trim).filter(|v| !v.is_empty()) {
            Some(url) => EmailDelivery::Smtp(Box::new(
                authcore_smtp::SmtpSender::from_url(url)
                    .map_err(DemoConfigError::InvalidSmtpUrl)?,
            )),
            None => EmailDelivery::Console,
        };
        let email_from = env
            .get("AUTHCORE_EMAIL_FROM")
            .filter(|v| !v.trim().is_empty())
            .unwrap_or(DEFAULT_EMAIL_FROM)
            .to_owned();
        let gateway = if gateway::Gateway::is_configured(&env, section.as_ref()) {
            let g = gateway::Gateway::new(&env, section.unwrap_or_default())
                .map_err(DemoConfigError::Gateway)?;
            if g.needs_token_claims() && database_url.is_some() {
                return Err(DemoConfigError::Gateway(gateway::GatewayError::Invalid(
                    "rules on allow_providers or allow_groups need JWT sessions, which carry them: set AUTHCORE_DATABASE_URL=none (or [server] database_url = \"none\")".into(),
                )));
            }
            Some(Arc::new(g))
        } else {
            None
        };
        let allowed_hosts = gateway::env_list(&env, "AUTHCORE_ALLOWED_HOSTS");
        let rate_limits = match env.get("AUTHCORE_RATE_LIMITS").map(str::trim) {
            None | Some("" | "on" | "recommended") => {
                authcore::ratelimit::RateLimits::recommended()
            }
            Some("off") => authcore::ratelimit::RateLimits::default(),
            Some(other) => {
                return Err(DemoConfigError::InvalidSetting(format!(
                    "AUTHCORE_RATE_LIMITS={other:?} is not `recommended` or `off`"
                )));
            }
        };
        let trusted_proxies =
            gateway::env_list(&env, "AUTHCORE_TRUSTED_PROXIES").unwrap_or_default();
        let mut database_pool = authcore_sqlx::PoolSettings::default();
        if let Some(d) = serve::seconds_var(|k| env.get(k), "AUTHCORE_DATABASE_TIMEOUT")
            .map_err(DemoConfigError::InvalidSetting)?
        {
            database_pool = database_pool.timeout(d);
        }
        if let Some(n) = serve::count_var(|k| env.get(k), "AUTHCORE_DATABASE_MAX_CONNECTIONS")
            .map_err(DemoConfigError::InvalidSetting)?
        {
            database_pool = database_pool.max_connections(u32::try_from(n).unwrap_or(u32::MAX));
        }
        match env.get("AUTHCORE_DATABASE_DIRECT_READS") {
            None | Some("on") => {}
            Some("off") => database_pool = database_pool.direct_session_reads(false),
            Some(other) => {
                return Err(DemoConfigError::InvalidSetting(format!(
                    "AUTHCORE_DATABASE_DIRECT_READS={other:?} is not `on` or `off`"
                )));
            }
        }
        let workers = match serve::count_var(|k| env.get(k), "AUTHCORE_WORKERS")
            .map_err(DemoConfigError::InvalidSetting)?
        {
            Some(n) if n > serve::MAX_WORKERS => {
                return Err(DemoConfigError::InvalidSetting(format!(
                    "AUTHCORE_WORKERS={n} is more than {} threads",
                    serve::MAX_WORKERS
                )));
            }
            Some(n) => n,
            None => serve::default_workers(),
        };
        let redis_url = env
            .get("AUTHCORE_REDIS_URL")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned);
        Ok(DemoConfig {
            addr,
            secret,
            secret_is_ephemeral,
            demo_password,
            env,
            database_url,
            email,
            email_from,
            theme: Theme::default(),
            pages: PagesOptions::default(),
            gateway,
            metrics_addr,
            log_format,
            allowed_hosts,
            limits,
            database_pool,
            workers,
            rate_limits,
            redis_url,
            trusted_proxies,
        })
    }
}

/// Builds the authcore handler of the demo: a credentials provider accepting `demo` / the
/// demo password, then the OAuth providers configured in `config.env` ([`oauth_providers`]).
pub fn auth(config: DemoConfig) -> Result<Auth, ConfigError> {
    auth_with_database(config, None, None)
}

/// The shared rate-limit store of `AUTHCORE_REDIS_URL`, connected lazily (the server
/// starts while Redis is down; the limits then fail open, logged, until it is back).
fn rate_limit_store(
    config: &DemoConfig,
) -> Result<Option<authcore_redis::RedisRateLimitStore>, Box<dyn std::error::Error + Send + Sync>> {
    let Some(url) = &config.redis_url else {
        return Ok(None);
    };
    let options = authcore_redis::ConnectOptions::default()
        .connection_timeout(std::time::Duration::from_secs(2))
        .response_timeout(std::time::Duration::from_secs(2));
    let redis = authcore_redis::RedisAdapter::connect_lazy(url, options)
        .map_err(|e| format!("AUTHCORE_REDIS_URL: {e}"))?
        .with_prefix("authcore:");
    Ok(Some(redis.rate_limit_store()))
}

/// Opens the configured database ([`DemoConfig::database_url`]: created and migrated if
/// needed), makes sure the demo user exists in it, and builds the handler with database
/// sessions (credentials included). Without a database: [`auth`].
pub async fn auth_from_config(
    config: DemoConfig,
) -> Result<Auth, Box<dyn std::error::Error + Send + Sync>> {
    Ok(auth_and_database(config).await?.0)
}

/// The standalone server's application: the demo pages and authcore ([`router`]), the
/// gateway's routes when one is configured ([`gateway::routes`]), the probes `/healthz`
/// and `/readyz` ([`ops::probe_routes`], the latter pinging the database), and, when
/// [`DemoConfig::metrics_addr`] is set, request counts and latencies per route
/// ([`ops::with_http_metrics`]; the `/metrics` listener itself is the binary's).
pub async fn server_app(
    config: DemoConfig,
) -> Result<Router, Box<dyn std::error::Error + Send + Sync>> {
    Ok(app_and_auth(config).await?.0)
}

/// What the server's listener calls: [`server_app`] behind an [`AuthDispatch`], which
/// answers authcore's actions (`/auth/session`, `/auth/csrf` …) without the router's
/// work per request and leaves every other request to the router; or the router alone
/// when one of its layers must see every request (HTTP metrics, the request log at DEBUG).
pub async fn server_service(
    config: DemoConfig,
) -> Result<ServerService, Box<dyn std::error::Error + Send + Sync>> {
    let (app, auth, layered) = app_and_auth(config).await?;
    Ok(if layered {
        Either::Right(app)
    } else {
        Either::Left(AuthDispatch::new(auth, app))
    })
}

/// [`server_service`]'s service.
pub type ServerService = Either<AuthDispatch<Router>, Router>;

/// The server's router, its handler, and whether a layer of the router must see every
/// request.
async fn app_and_auth(
    config: DemoConfig,
) -> Result<(Router, Auth, bool), Box<dyn std::error::Error + Send + Sync>> {
    let gateway = config.gateway.clone();
    let http_metrics = config.metrics_addr.is_some();
    let (auth, database) = auth_and_database(config).await?;
    let base_path = auth.config().base_path().to_owned();
    let app = router_with_gateway(auth.clone(), gateway)
        .merge(ops::probe_routes(ops::Readiness::new(database)));
    let app = if http_metrics {
        ops::with_http_metrics(app, &base_path)
    } else {
        app
    };
    Ok((app, auth, http_metrics || request_log_enabled()))
}

/// [`auth_from_config`], and the database it opened (for readiness checks).
async fn auth_and_database(
    config: DemoConfig,
) -> Result<(Auth, Option<authcore_sqlx::SqlxAdapter>), Box<dyn std::error::Error + Send + Sync>> {
    let Some(url) = config.database_url.clone() else {
        let limits = rate_limit_store(&config)?;
        return Ok((auth_with_database(config, None, limits)?, None));
    };
    let db = authcore_sqlx::SqlxAdapter::connect_with(&url, config.database_pool).await?;
    db.migrate().await?;
    demo_user(&db).await?;
    let limits = rate_limit_store(&config)?;
    let auth = auth_with_database(config, Some(db.clone()), limits)?;
    Ok((auth, Some(db)))
}

/// The demo user's row, made if it is missing: at start-up, and at each password sign-in,
/// so that a demo user deleted from the account page comes back at the next sign-in
/// instead of breaking it. Two sign-ins racing to make it read the one that won.
async fn demo_user(
    db: &authcore_sqlx::SqlxAdapter,
) -> Result<authcore::adapter::AdapterUser, authcore::adapter::AdapterError> {
    if let Some(u) = db.get_user_by_email(DEMO_EMAIL).await? {
        return Ok(u);
    }
    let created = db
        .create_user(NewUser {
            name: Some("Demo User".into()),
            email: Some(DEMO_EMAIL.into()),
            ..Default::default()
        })
        .await;
    match created {
        Ok(u) => Ok(u),
        Err(e) => db.get_user_by_email(DEMO_EMAIL).await?.ok_or(e),
    }
}

/// The demo user's email.
pub const DEMO_EMAIL: &str = "demo@example.com";

fn auth_with_database(
    config: DemoConfig,
    database: Option<authcore_sqlx::SqlxAdapter>,
    rate_limit_store: Option<authcore_redis::RedisRateLimitStore>,
) -> Result<Auth, ConfigError> {
    let trust = host_trust(&config);
    let users = database.clone();
    let password: Arc<str> = config.demo_password.into();
    let provider = CredentialsProvider::new()
        .field(
            "username",
            CredentialField::new("Username").attribute("autocomplete", "username"),
        )
        .field(
            "password",
            CredentialField::new("Password")
                .input_type("password")
                .attribute("autocomplete", "current-password"),
        )
        .authorize(move |credentials, _request| {
            let expected = Arc::clone(&password);
            let users = users.clone();
            async move {
                let field = |k: &str| credentials.get(k).and_then(Value::as_str);
                let user_ok = field("username") == Some(DEMO_USERNAME);
                let password_ok = field("password")
                    .is_some_and(|p| bool::from(p.as_bytes().ct_eq(expected.as_bytes())));
                if !(user_ok && password_ok) {
                    return Ok(None);
                }
                let id = match &users {
                    Some(db) => {
                        demo_user(db)
                            .await
                            .map_err(|e| AuthorizeError::Other(e.into()))?
                            .id
                    }
                    None => "1".to_owned(),
                };
                Ok(Some(User::with_id(id).name("Demo User").email(DEMO_EMAIL)))
            }
        });
    let mut builder = AuthConfig::builder()
        .provider(provider)
        .theme(config.theme.clone())
        .pages(config.pages.clone());
    let with_adapter = database.is_some();
    if let Some(db) = database {
        // Users and OAuth accounts are stored; credentials sign-ins get database sessions too.
        builder = builder
            .adapter(db)
            .credentials_database_sessions(true)
            .provider(email_provider(&config.email, &config.email_from))
            // Passkeys: register with an email (or while signed in), then sign in with
            // the passkey alone, also from the email field's autofill.
            .provider(WebAuthnProvider::passkey());
    }
    for p in oauth_providers(&config.env)? {
        builder = builder.provider(p);
    }
    if let Some(g) = &config.gateway {
        builder = builder.callbacks(g.callbacks(with_adapter));
        if let Some(domain) = g.cookie_domain() {
            // The session is shared with every subdomain the proxies protect.
            builder = builder.cookies(authcore::cookies::CookiesOverrides {
                session_token: authcore::cookies::CookieOverride {
                    domain: Some(Some(domain.to_owned())),
                    ..Default::default()
                },
                ..Default::default()
            });
        }
    }
    if let HostTrust::AllowList(hosts) = trust {
        builder = builder.allowed_hosts(hosts);
    }
    builder = builder
        .rate_limits(config.rate_limits)
        .trusted_proxies(config.trusted_proxies.clone());
    if let Some(store) = rate_limit_store {
        builder = builder.rate_limit_store(store);
    }
    if let Some(secret) = config.secret {
        builder = builder.secret(secret);
    }
    Ok(Auth::new(builder.env_defaults(&config.env).build()?))
}

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
pub fn host_trust(config: &DemoConfig) -> HostTrust {
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
/// that prints each magic link to standard output.
pub fn email_provider(delivery: &EmailDelivery, from: &str) -> EmailProvider {
    match delivery {
        EmailDelivery::Smtp(sender) => authcore_smtp::email_provider((**sender).clone(), from),
        EmailDelivery::Console => {
            EmailProvider::new(from).send_verification_request(|request| async move {
                // The demo's stand-in for a mailbox: the link is a credential, printed on purpose.
                println!(
                    "magic link for {} (valid until {}):\n  {}",
                    request.identifier, request.expires, request.url
                );
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

/// The demo application: `/` (home), `/protected` (signed-in users only) and authcore
/// under its base path (`/auth` unless `AUTH_URL` says otherwise).
pub fn app(config: DemoConfig) -> Result<Router, ConfigError> {
    let gateway = config.gateway.clone();
    Ok(router_with_gateway(auth(config)?, gateway))
}

/// The demo application around an existing handler, with the gateway's routes
/// ([`gateway::routes`]) when one is configured.
pub fn router_with_gateway(auth: Auth, gateway: Option<Arc<gateway::Gateway>>) -> Router {
    let app = router(auth.clone());
    match gateway {
        Some(gateway) => app.merge(gateway::routes(gateway::GatewayState { auth, gateway })),
        None => app,
    }
}

/// The demo application around an existing handler.
pub fn router(auth: Auth) -> Router {
    let protected = Router::new()
        .route("/protected", get(protected_page))
        .route_layer(RequireAuthLayer::new(auth.clone()));
    let app = Router::new()
        .route("/", get(home_page))
        .merge(protected)
        .merge(account::routes())
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
fn request_log_enabled() -> bool {
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
        let mut config = DemoConfig::new("a demo test secret, long and random enough");
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

    #[test]
    fn config_from_env() {
        let c = DemoConfig::from_env(Env::default()).unwrap();
        assert_eq!(c.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(c.demo_password, DEFAULT_DEMO_PASSWORD);
        assert!(c.secret_is_ephemeral);
        assert_eq!(c.secret.as_ref().map(String::len), Some(64));
        assert!(!format!("{c:?}").contains(c.secret.as_deref().unwrap()));

        let c = DemoConfig::from_env(Env::from_pairs([
            ("AUTHCORE_ADDR", "0.0.0.0:8080"),
            ("AUTHCORE_DEMO_PASSWORD", "hunter2"),
            ("AUTH_SECRET", "s3cret"),
        ]))
        .unwrap();
        assert_eq!(c.addr.to_string(), "0.0.0.0:8080");
        assert_eq!(c.demo_password, "hunter2");
        assert!(!c.secret_is_ephemeral && c.secret.is_none());
        assert!(app(c).is_ok());

        let e = DemoConfig::from_env(Env::from_pairs([("AUTHCORE_ADDR", "nope")])).unwrap_err();
        assert!(e.to_string().contains("AUTHCORE_ADDR"));
    }

    #[test]
    fn database_pool_from_env() {
        let c = DemoConfig::from_env(Env::default()).unwrap();
        assert_eq!(c.database_pool, authcore_sqlx::PoolSettings::default());
        assert_eq!(c.database_pool.timeout, std::time::Duration::from_secs(5));
        let c = DemoConfig::from_env(Env::from_pairs([
            ("AUTHCORE_DATABASE_MAX_CONNECTIONS", "32"),
            ("AUTHCORE_DATABASE_TIMEOUT", "1.5"),
            ("AUTHCORE_DATABASE_DIRECT_READS", "off"),
        ]))
        .unwrap();
        assert_eq!(c.database_pool.max_connections, 32);
        assert!(!c.database_pool.direct_session_reads);
        let on = DemoConfig::from_env(Env::from_pairs([("AUTHCORE_DATABASE_DIRECT_READS", "on")]))
            .unwrap();
        assert!(on.database_pool.direct_session_reads);
        let w = DemoConfig::from_env(Env::from_pairs([("AUTHCORE_WORKERS", "3")])).unwrap();
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
            let e = DemoConfig::from_env(Env::from_pairs([(key, bad)])).unwrap_err();
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
    #[test]
    fn catalogue_providers_from_env() {
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
        let mut config = DemoConfig::new("a secret long enough for the demo");
        config.env = Env::from_pairs([("AUTH_AUTH0_ID", "a"), ("AUTH_AUTH0_SECRET", "b")]);
        let err = auth(config).unwrap_err().to_string();
        assert!(err.contains("AUTH_AUTH0_ISSUER"), "{err}");
    }
}
