//! The standalone server assembled from its configuration: [`ServerConfig::build`] opens
//! what the configuration names (the database, the Redis rate-limit store), builds the
//! [`Auth`] handler of the demo and the router around it, and returns them as a [`Server`].

use std::error::Error as StdError;
use std::sync::Arc;

use authcore::adapter::AdapterError;
use authcore::passwords::{PasswordAccounts, PasswordHashing};
use authcore::providers::{CredentialsProvider, WebAuthnProvider};
use authcore::{Auth, AuthConfig, ConfigError};
use authcore_axum::AuthDispatch;
use authcore_sqlx::SqlxAdapter;
use axum::Router;
use tower::util::Either;

use crate::demo::{self, request_log_enabled};
use crate::{
    HostTrust, ServerConfig, email_provider, host_trust, oauth_providers, ops, redact_url_password,
    router,
};

/// Why [`ServerConfig::build`] failed, with the setting to look at. The message carries the
/// causes (never a database password).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The database could not be opened or reached.
    #[error(
        "cannot open the database {url}: {} (check AUTHCORE_DATABASE_URL, or set it to `none` for JWT sessions only)",
        chain(.source)
    )]
    Database {
        /// The database URL, its password redacted.
        url: String,
        /// What the connection reported.
        #[source]
        source: authcore_sqlx::Error,
    },
    /// The database's migrations could not be applied.
    #[error(
        "cannot migrate the database {url}: {} (the schema must be authcore's; check AUTHCORE_DATABASE_URL)",
        chain(.source)
    )]
    Migration {
        /// The database URL, its password redacted.
        url: String,
        /// What the migration reported.
        #[source]
        source: authcore_sqlx::Error,
    },
    /// The demo user could not be read or created in the database.
    #[error("cannot create the demo user in the database {url}: {}", chain(.source))]
    DemoUser {
        /// The database URL, its password redacted.
        url: String,
        /// What the database reported.
        #[source]
        source: AdapterError,
    },
    /// An audit sink could not start: the JSON lines file cannot be opened, or a thread
    /// not started.
    #[error("{what}: {source}")]
    AuditSink {
        /// The sink and its setting.
        what: String,
        /// What the system reported.
        #[source]
        source: std::io::Error,
    },
    /// The Redis URL of the rate-limit store is not usable.
    #[error("AUTHCORE_REDIS_URL: {}", chain(.0))]
    Redis(#[source] AdapterError),
    /// The handler's configuration is invalid: a provider missing a setting, the secret,
    /// the pages … (the message names the variable).
    #[error(transparent)]
    Auth(#[from] ConfigError),
}

/// `error` and its causes, each after a colon, leaving out a cause whose text the previous
/// message already contains.
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut last = text.clone();
    let mut cause = error.source();
    while let Some(e) = cause {
        let message = e.to_string();
        if !last.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        last = message;
        cause = e.source();
    }
    text
}

/// What the server's listener calls ([`Server::into_service`]): the router behind an
/// [`AuthDispatch`], or the router alone.
pub type ServerService = Either<AuthDispatch<Router>, Router>;

/// The standalone server built by [`ServerConfig::build`]: its handler and its router.
#[derive(Debug, Clone)]
pub struct Server {
    auth: Auth,
    /// The database, when the configuration has one.
    database: Option<SqlxAdapter>,
    router: Router,
    /// Whether a layer of the router must see every request (HTTP metrics, the request log).
    layered: bool,
}

impl Server {
    /// The authcore handler (its configuration, the JWT codec …).
    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The database the handler keeps its users in, when the configuration has one.
    pub fn database(&self) -> Option<&SqlxAdapter> {
        self.database.as_ref()
    }

    /// The server's application: the demo pages, authcore's routes and the account routes
    /// ([`router`](crate::router)), the gateway's routes when one is configured
    /// ([`Gateway::router`](authcore_gateway::Gateway::router)), the probes `/healthz` and `/readyz` ([`ops::probe_routes`],
    /// the latter reading the stores' circuit breakers and pinging the database), and, when [`ServerConfig::metrics_addr`] is set,
    /// request counts and latencies per route ([`ops::with_http_metrics`]; the `/metrics`
    /// listener itself is the binary's).
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// What the server's listener calls: the router behind an [`AuthDispatch`], which
    /// answers authcore's actions (`/auth/session`, `/auth/csrf` …) without the router's
    /// work per request and leaves every other request to the router; or the router alone
    /// when one of its layers must see every request (HTTP metrics, the request log at
    /// DEBUG).
    pub fn into_service(self) -> ServerService {
        if self.layered {
            Either::Right(self.router)
        } else {
            Either::Left(AuthDispatch::new(self.auth, self.router))
        }
    }
}

impl ServerConfig {
    /// Builds the server this configuration describes:
    ///
    /// * with a [`database_url`](Self::database_url), opens the database (created and
    ///   migrated if needed), makes sure the demo user exists in it (when it is on), and gives the handler
    ///   database sessions, the email provider (magic links unless
    ///   [`email_sign_in`](Self::email_sign_in) is off) and passkeys (unless
    ///   [`passkeys`](Self::passkeys) is off); without one, JWT sessions only;
    /// * with a [`redis_url`](Self::redis_url), counts the rate limits and keeps the
    ///   single-use values and revocation marks in Redis (connected lazily: the server
    ///   starts while Redis is down, and the limits fail open, logged, until it is back);
    ///   without one but with a database, counts in memory and keeps the single-use values
    ///   and marks in the database (`authcore_sqlx::SqlRateLimitStore`), so that instances
    ///   sharing it share them and they outlive a restart;
    /// * builds the [`Auth`] handler (a credentials provider per user source, or the demo's
    ///   when there is none ([`ServerConfig::demo_user_enabled`]), then the OAuth
    ///   providers of [`env`](Self::env), [`oauth_providers`]) and the router
    ///   ([`Server::router`]).
    pub async fn build(self) -> Result<Server, ServerError> {
        let gateway = self.gateway.clone();
        let oidc_provider = self.oidc_provider.clone();
        let http_metrics = self.metrics_addr.is_some();
        let demo_user = self.demo_user_enabled();
        let database = match &self.database_url {
            Some(url) => Some(open_database(url, self.database_pool, demo_user).await?),
            None => None,
        };
        let limits = rate_limit_store(self.redis_url.as_deref())?;
        let readiness = ops::Readiness::new(database.clone()).with_redis(limits.clone());
        let audit_log = audit_log(&self.audit, database.as_ref())?;
        let auth = demo_auth(self, database.clone(), limits, audit_log)?;
        let base_path = auth.config().base_path().to_owned();
        let app = router(auth.clone());
        let app = match gateway {
            Some(gateway) => app.merge(gateway.router(auth.clone())),
            None => app,
        };
        let app = match (oidc_provider, &database) {
            (Some(provider), Some(db)) => {
                app.merge(provider.router(auth.clone(), Arc::new(db.clone())))
            }
            _ => app,
        };
        let app = app.merge(ops::probe_routes(readiness));
        let app = if http_metrics {
            ops::with_http_metrics(app, &base_path)
        } else {
            app
        };
        Ok(Server {
            auth,
            database,
            router: app,
            layered: http_metrics || request_log_enabled(),
        })
    }
}

/// The database at `url`, created and migrated if needed, with the demo user in it when
/// `demo_user`.
async fn open_database(
    url: &str,
    pool: authcore_sqlx::PoolSettings,
    demo_user: bool,
) -> Result<SqlxAdapter, ServerError> {
    let shown = || redact_url_password(url);
    let db = SqlxAdapter::connect_with(url, pool)
        .await
        .map_err(|source| ServerError::Database {
            url: shown(),
            source,
        })?;
    db.migrate()
        .await
        .map_err(|source| ServerError::Migration {
            url: shown(),
            source,
        })?;
    if demo_user {
        demo::demo_user(&db)
            .await
            .map_err(|source| ServerError::DemoUser {
                url: shown(),
                source,
            })?;
    }
    Ok(db)
}

/// The audit log of `settings`: stored when asked, or by default when `database` can keep
/// it; its JSON lines and webhooks started.
fn audit_log(
    settings: &crate::config::AuditSettings,
    database: Option<&SqlxAdapter>,
) -> Result<authcore::audit::AuditLog, ServerError> {
    use authcore::adapter::Adapter;
    use authcore::audit::{AuditLog, JsonLinesSink, JsonLinesTarget, WebhookError, WebhookSink};
    let can_store = database.is_some_and(|db| (db as &dyn Adapter).audit_log().is_some());
    let mut log = AuditLog::new().store(settings.store.unwrap_or(can_store));
    if let Some(retention) = settings.retention {
        log = log.retention(retention);
    }
    if let Some(target) = &settings.json_lines {
        let what = match target {
            JsonLinesTarget::File(path) => format!(
                "cannot open the audit log's JSON lines file {} ([audit] json_lines, AUTHCORE_AUDIT_JSON_LINES)",
                path.display()
            ),
            _ => "cannot start the audit log's JSON lines".to_owned(),
        };
        let sink = JsonLinesSink::new(target.clone(), authcore::audit::QUEUE_CAPACITY)
            .map_err(|source| ServerError::AuditSink { what, source })?;
        log = log.sink(Arc::new(sink));
    }
    for hook in &settings.webhooks {
        let sink = WebhookSink::new(&hook.url, hook.secret.expose().as_bytes()).map_err(|e| {
            let source = match e {
                WebhookError::Thread(e) => e,
                // Checked when the configuration was read.
                other => std::io::Error::other(other.to_string()),
            };
            ServerError::AuditSink {
                what: "cannot start an audit webhook".to_owned(),
                source,
            }
        })?;
        log = log.sink(Arc::new(sink));
    }
    Ok(log)
}

/// The shared rate-limit store at the Redis `url`, connected lazily.
fn rate_limit_store(
    url: Option<&str>,
) -> Result<Option<authcore_redis::RedisRateLimitStore>, ServerError> {
    let Some(url) = url else {
        return Ok(None);
    };
    let options = authcore_redis::ConnectOptions::default()
        .connection_timeout(std::time::Duration::from_secs(2))
        .response_timeout(std::time::Duration::from_secs(2));
    let redis = authcore_redis::RedisAdapter::connect_lazy(url, options)
        .map_err(ServerError::Redis)?
        .with_prefix("authcore:");
    Ok(Some(redis.rate_limit_store()))
}

/// The server's handler: a credentials provider per user source (the users file …), or,
/// when there is none, the demo's, accepting `demo` / the demo password (the stored demo
/// user with a database, user id `1` without); then, with a database, the email provider
/// (a way to sign in unless [`ServerConfig::email_sign_in`] is off) and passkeys (unless
/// [`ServerConfig::passkeys`] is off), then the OAuth providers configured in `config.env`
/// and `config.providers`.
fn demo_auth(
    config: ServerConfig,
    database: Option<SqlxAdapter>,
    rate_limit_store: Option<authcore_redis::RedisRateLimitStore>,
    audit_log: authcore::audit::AuditLog,
) -> Result<Auth, ConfigError> {
    let trust = host_trust(&config);
    let mut builder = AuthConfig::builder()
        .theme(config.theme.clone())
        .pages(config.pages.clone())
        .sign_up(config.sign_up.clone());
    let sources = config.user_sources();
    if config.demo_user_enabled() {
        builder = builder.provider(demo::credentials(
            config.demo_password.clone().into(),
            database.clone(),
        ));
    }
    for source in sources {
        let provider = CredentialsProvider::from_source(Arc::clone(&source));
        builder = builder.provider(match source.id() {
            crate::USERS_FILE_ID => provider.with_name("Password"),
            _ => provider,
        });
    }
    let callbacks_adapter = database
        .clone()
        .map(|db| Arc::new(db) as Arc<dyn authcore::adapter::Adapter>);
    let database_marks = database.as_ref().map(SqlxAdapter::rate_limit_store);
    if let (true, Some(db)) = (config.passwords, &database) {
        let options = &config.password_options;
        let accounts = password_accounts(db)?
            .allow_sign_up(options.sign_up)
            .require_verified_email(options.verify_email)
            .policy(options.policy.clone());
        builder = builder.password_accounts(accounts);
    }
    if let Some(db) = database {
        // Users and OAuth accounts are stored; credentials sign-ins get database sessions too.
        // The email provider mails password accounts' links and security notices even where
        // its magic links are off.
        builder = builder
            .adapter(db)
            .credentials_database_sessions(true)
            .provider(
                email_provider(&config.email, &config.email_from).magic_links(config.email_sign_in),
            );
        if config.passkeys {
            // Passkeys: register with an email (or while signed in), then sign in with
            // the passkey alone, also from the email field's autofill.
            builder = builder.provider(WebAuthnProvider::passkey());
        }
        if let Some(two_factor) = config.two_factor.clone() {
            builder = builder.two_factor(two_factor);
        }
        if let Some(organizations) = config.organizations.clone() {
            builder = builder.organizations(organizations);
        }
        if let Some(admins) = config.admins.clone() {
            // A client made at run time never takes a configured client's id.
            let configured = config.oidc_provider.iter().flat_map(|p| p.client_ids());
            // … and is one the provider uses, by the provider's own rules.
            builder = builder.admins(
                admins
                    .configured_clients(configured)
                    .client_check(authcore_oidc_provider::check_stored_client),
            );
        }
    }
    for p in oauth_providers(&config.env, &config.providers)? {
        builder = builder.provider(p);
    }
    if let Some(g) = &config.gateway {
        builder = builder.callbacks(g.callbacks(callbacks_adapter));
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
    if let Some(window) = config.recent_sign_in {
        builder = builder.recent_sign_in(window);
    }
    builder = builder
        .rate_limits(config.rate_limits)
        .trusted_proxies(config.trusted_proxies.clone())
        .audit_log(audit_log);
    match (rate_limit_store, database_marks) {
        (Some(store), _) => builder = builder.rate_limit_store(store),
        (None, Some(marks)) => builder = builder.single_use_store(marks),
        (None, None) => {}
    }
    if let Some(secret) = config.secret {
        builder = builder.secret(secret);
    }
    // The OpenID Provider's clients hear of sessions that end (back-channel logout).
    let back_channel = config
        .oidc_provider
        .clone()
        .map(authcore_oidc_provider::BackChannelLogout::new);
    if let Some(events) = &back_channel {
        builder = builder.events(events.clone());
    }
    let auth = Auth::new(
        builder
            .auth_js_settings(config.auth_js)
            .env_defaults(&config.env)
            .build()?,
    );
    if let Some(events) = back_channel {
        events.attach(&auth);
    }
    Ok(auth)
}

/// The password accounts of database `db`, hashed with OWASP's argon2id parameters.
pub fn password_accounts(db: &SqlxAdapter) -> Result<PasswordAccounts, ConfigError> {
    PasswordAccounts::new(Arc::new(db.clone()), PasswordHashing::owasp())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn causes_are_shown_once() {
        let inner = AdapterError::Conflict("taken".into());
        assert_eq!(chain(&inner), "conflict: taken");
        let err = ServerError::DemoUser {
            url: "sqlite://demo.db".into(),
            source: inner,
        };
        assert_eq!(
            err.to_string(),
            "cannot create the demo user in the database sqlite://demo.db: conflict: taken"
        );
    }
    /// `[ldap]` adds the directory's credentials provider (id `ldap`) beside the others.
    #[tokio::test]
    async fn the_directory_source_is_a_provider() {
        let mut config = ServerConfig::new("a test secret that is long enough, really");
        config.ldap = Some(
            authcore_ldap::LdapSource::new(authcore_ldap::LdapSettings::new(
                "ldap://127.0.0.1:3389",
                "cn=authcore,dc=example,dc=org",
                "service password",
                "dc=example,dc=org",
            ))
            .unwrap(),
        );
        let server = config.build().await.unwrap();
        let ids: Vec<&str> = server
            .auth()
            .config()
            .providers()
            .iter()
            .map(|p| p.id())
            .collect();
        assert!(ids.contains(&"ldap"), "{ids:?}");
    }
}
