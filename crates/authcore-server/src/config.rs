//! The server's configuration ([`ServerConfig`]) from its two sources: the TOML file
//! ([`ConfigFile`], deserialized into typed values) and the environment, which wins where a
//! variable is set.
//!
//! Each setting is read from the environment in one place ([`ServerConfig::resolve`]) and
//! from the file by its field's deserializer; both go through the same value readers of
//! this module, so a value means the same from either source. A variable that is set wins
//! over the file even when it is blank, and a blank value stands for the default.
//!
//! The Auth.js variables (`AUTH_SECRET`, `AUTH_SECRET_1..3`, `AUTH_URL`, `AUTH_TRUST_HOST`,
//! the providers' `AUTH_<ID>_*`) are read by authcore itself, with Auth.js's rules (a set
//! `AUTH_URL` implies a trusted host, rotated secrets, each preset's variable names): the
//! file's `[auth] secret / url / trust_host` are handed to it typed
//! ([`AuthJsSettings`], under the environment's variables), and each `[providers.*]`
//! section as the preset's [`SettingValues`](authcore::providers::catalog::SettingValues)
//! under its `AUTH_<ID>_*` variables ([`crate::oauth_providers`]).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use authcore::SignUpPolicy;
use authcore::env::{AuthJsSettings, Env};
use authcore::ratelimit::RateLimits;
use authcore::two_factor::{FirstEnrolment, TwoFactorPolicy};
use authcore::types::{PagesOptions, Theme};

use crate::config_file::{
    AdminSection, AuditSection, ConfigFile, ConfigFileError, EmailSection, OrganizationsSection,
    ProvidersSection, RateLimitsSection, SecretValue, ServerSection, TwoFactorSection,
    UsersFileSection,
};
use crate::config_value as value;
use crate::users_file::{UsersFile, UsersFileError};
use crate::{ops, serve};
use authcore::passwords::UserSource;
use authcore_gateway as gateway;
use authcore_oidc_provider as oidc_provider;

/// Listen address when neither `AUTHCORE_ADDR` nor `[server] addr` is set.
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
/// Demo password when neither `AUTHCORE_DEMO_PASSWORD` nor `[server] demo_password` is set.
pub const DEFAULT_DEMO_PASSWORD: &str = "authcore-demo";
/// Default sender of the magic-link mails.
pub const DEFAULT_EMAIL_FROM: &str = "authcore demo <no-reply@authcore.test>";
/// The default database: an SQLite file in the working directory, created and migrated on
/// first start.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://authcore-demo.db?mode=rwc";

/// The configuration of the standalone server: read by [`ServerConfig::from_env`] or
/// [`ServerConfig::from_file`].
#[derive(Clone)]
pub struct ServerConfig {
    /// Where to listen (`AUTHCORE_ADDR`, `[server] addr`).
    pub addr: SocketAddr,
    /// The session secret. `None`: taken from `env` (`AUTH_SECRET`, `AUTH_SECRET_1..3`).
    pub secret: Option<String>,
    /// Whether `secret` was generated at start-up (sessions end with the process).
    pub secret_is_ephemeral: bool,
    /// The demo user's password (`AUTHCORE_DEMO_PASSWORD`, `[server] demo_password`); the
    /// demo user signs in only while no user source is configured
    /// ([`demo_user_enabled`](Self::demo_user_enabled)).
    pub demo_password: String,
    /// The users file (`AUTHCORE_USERS_FILE`, `[users_file] path`), read and checked.
    pub users_file: Option<UsersFile>,
    /// Password accounts kept in the database (`AUTHCORE_PASSWORDS`, `[passwords] enabled`;
    /// off by default): users sign in with their email address and password at
    /// `/auth/callback/password`, given by `authcore-server add-user`.
    pub passwords: bool,
    /// What password accounts' users may do themselves (`[passwords]`): sign up, and
    /// whether they confirm their address first; the policy's shortest password.
    pub password_options: PasswordOptions,
    /// The process environment. authcore reads the Auth.js variables from it (`AUTH_URL`,
    /// `AUTH_TRUST_HOST`, `AUTH_SECRET`, the providers' `AUTH_<ID>_*`), each over its
    /// setting in [`auth_js`](Self::auth_js) or [`providers`](Self::providers).
    pub env: Env,
    /// The file's `[auth] secret`, `url` and `trust_host`, under their variables in `env`.
    pub auth_js: AuthJsSettings,
    /// The file's `[providers.*]`, each under its `AUTH_<ID>_*` variables in `env`.
    pub providers: ProvidersSection,
    /// The database (`AUTHCORE_DATABASE_URL`, `[server] database_url`, default
    /// [`DEFAULT_DATABASE_URL`]; `none` for no database): `sqlite://…`, `postgres://…` or
    /// `mysql://…`. With one, users and OAuth accounts are stored and sessions live in the
    /// database.
    pub database_url: Option<String>,
    /// How magic links are delivered (`SMTP_URL`, `[email] smtp_url`; default: printed to
    /// the terminal).
    pub email: EmailDelivery,
    /// Sender of the magic-link mails (`AUTHCORE_EMAIL_FROM`, `[email] from`, default
    /// [`DEFAULT_EMAIL_FROM`]).
    pub email_from: String,
    /// Whether users sign in with magic links (`AUTHCORE_EMAIL_SIGN_IN`, `[email]
    /// sign_in`; on by default, with a database). Off, the email provider still mails
    /// password accounts' links and security notices
    /// ([`EmailProvider::magic_links`](authcore::providers::email::EmailProvider::magic_links)).
    pub email_sign_in: bool,
    /// Whether passkeys sign in, sign up and are registered (`AUTHCORE_PASSKEYS`,
    /// `[passkeys] enabled`; on by default, with a database).
    pub passkeys: bool,
    /// Theme of the built-in pages (`[theme]` of the config file).
    pub theme: Theme,
    /// Custom page paths (`[pages]` of the config file).
    pub pages: PagesOptions,
    /// The single sign-on gateway ([`gateway`]), when `[gateway]` or its variables ask
    /// for it.
    pub gateway: Option<Arc<gateway::Gateway>>,
    /// authcore as an OpenID Provider ([`authcore_oidc_provider`]), when `[oidc_provider]` asks
    /// for it.
    pub oidc_provider: Option<Arc<oidc_provider::OpenIdProvider>>,
    /// Where `/metrics` is served (`AUTHCORE_METRICS_ADDR`, `[server] metrics_addr`); none:
    /// no metrics are kept.
    pub metrics_addr: Option<SocketAddr>,
    /// How logs are written (`AUTHCORE_LOG_FORMAT`, `[server] log_format`: `text` or
    /// `json`).
    pub log_format: ops::LogFormat,
    /// The request hosts to answer (`AUTHCORE_ALLOWED_HOSTS`, comma-separated, or
    /// `[auth] allowed_hosts`: exact names, IP literals, `*.example.com`); see
    /// [`host_trust`](crate::host_trust).
    pub allowed_hosts: Option<Vec<String>>,
    /// Brute-force limits: [`RateLimits::recommended`] unless `AUTHCORE_RATE_LIMITS=off`;
    /// `[rate_limits]` of the config file adjusts each.
    pub rate_limits: RateLimits,
    /// Redis for the rate-limit counts and the single-use and revocation marks, shared by
    /// every instance (`AUTHCORE_REDIS_URL`, `[server] redis_url`); none: counts in this
    /// process, marks in the database when there is one.
    pub redis_url: Option<String>,
    /// Proxies whose `X-Forwarded-For` names the client (`AUTHCORE_TRUSTED_PROXIES`:
    /// addresses or CIDR ranges, comma-separated; `[auth] trusted_proxies`).
    pub trusted_proxies: Vec<String>,
    /// Header read and request timeouts, connection cap (`AUTHCORE_HEADER_READ_TIMEOUT`,
    /// `AUTHCORE_REQUEST_TIMEOUT`, `AUTHCORE_MAX_CONNECTIONS`, and their `[server]` keys).
    pub limits: serve::ConnectionLimits,
    /// The database pool: its size (`AUTHCORE_DATABASE_MAX_CONNECTIONS`, default 10), the
    /// bound on each database operation (`AUTHCORE_DATABASE_TIMEOUT`, seconds, default 5)
    /// and whether session reads take their own connections on SQLite and PostgreSQL
    /// (`AUTHCORE_DATABASE_DIRECT_READS`, `on` or `off`, default `on`:
    /// [`authcore_sqlx::PoolSettings::direct_session_reads`]); and their `[server]` keys.
    pub database_pool: authcore_sqlx::PoolSettings,
    /// Second factors (`AUTHCORE_TWO_FACTOR`: `optional`, `required` or `off`; `[two_factor]
    /// policy` and `issuer`): optional by default with a database, off without one (they are
    /// stored in it). Who may enrol a user's first one under `required`:
    /// `AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT`, `[two_factor] first_enrolment`.
    pub two_factor: Option<authcore::two_factor::TwoFactorOptions>,
    /// How recent a session's sign-in must be for a sensitive change
    /// (`AUTHCORE_RECENT_SIGN_IN`, `[auth] recent_sign_in`, seconds; none: authcore's
    /// default, 10 minutes): [`authcore::AuthConfigBuilder::recent_sign_in`].
    pub recent_sign_in: Option<std::time::Duration>,
    /// Who may become a user by signing in for the first time with a magic link, an OAuth
    /// provider or a passkey (`AUTHCORE_SIGN_UP`: `open`, `closed`, `invite` or
    /// comma-separated email domains; `[auth] sign_up`): [`SignUpPolicy::Closed`] unless
    /// set, so that only existing users (a user source's, or made by an operator) sign in;
    /// `invite` lets in the addresses with an open invitation, which needs
    /// [`organizations`](Self::organizations).
    pub sign_up: SignUpPolicy,
    /// Organizations with members, roles and invitations (`[organizations]`,
    /// `AUTHCORE_ORGANIZATIONS`; off unless enabled), kept in the database, their roles
    /// checked.
    pub organizations: Option<authcore::organizations::Organizations>,
    /// Administrators (`[admin]`, `AUTHCORE_ADMINS` and `AUTHCORE_ADMIN_*`; off unless some
    /// are named): users listed by id or verified address, or the members of an
    /// organization whose roles grant `authcore:admin`; they use the admin page and the
    /// `/admin/…` routes (docs/manual/operating.md).
    pub admins: Option<authcore::admin::Admins>,
    /// Threads that serve requests (`AUTHCORE_WORKERS`, `[server] workers`; default: the
    /// CPUs the process may run on). With 1 the server runs on a single-threaded runtime
    /// ([`serve::runtime`]).
    pub workers: usize,
    /// Directory users sign in with their directory password (`[ldap]`, or
    /// `AUTHCORE_LDAP_URL` and the other `AUTHCORE_LDAP_*` variables; docs/manual/ldap.md).
    pub ldap: Option<authcore_ldap::LdapSource>,
    /// The audit log: stored, kept how long, and sent where (`[audit]`,
    /// `AUTHCORE_AUDIT_*`; docs/manual/audit-server.md).
    pub audit: AuditSettings,
}

/// The audit log's settings (`[audit]`): checked when read, the sinks started by
/// [`ServerConfig::build`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditSettings {
    /// Whether records are kept in the database (`AUTHCORE_AUDIT_STORE`, `[audit] store`);
    /// none: kept when there is a database that can keep them.
    pub store: Option<bool>,
    /// How long stored records are kept (`AUTHCORE_AUDIT_RETENTION_DAYS`, `[audit]
    /// retention_days`); none: for ever. The server prunes older ones hourly.
    pub retention: Option<std::time::Duration>,
    /// Where JSON lines go (`AUTHCORE_AUDIT_JSON_LINES`, `[audit] json_lines`: `stdout` or
    /// a file's path); none: nowhere.
    pub json_lines: Option<authcore::audit::JsonLinesTarget>,
    /// Signed webhooks (`[[audit.webhooks]]`, and `AUTHCORE_AUDIT_WEBHOOK_URL` with
    /// `AUTHCORE_AUDIT_WEBHOOK_SECRET`).
    pub webhooks: Vec<AuditWebhook>,
}

/// One audit webhook: where records are posted and the secret that signs them (its `Debug`
/// shows only the URL's origin: a webhook's path can be its credential).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditWebhook {
    /// Where records are posted.
    pub url: String,
    /// The signing secret.
    pub secret: SecretValue,
}

impl std::fmt::Debug for AuditWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let origin = authcore::url::Url::parse(&self.url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        f.debug_struct("AuditWebhook")
            .field("url", &origin)
            .field("secret", &self.secret)
            .finish()
    }
}

/// How magic links are delivered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EmailDelivery {
    /// Printed to standard output (no mail is sent).
    Console,
    /// Sent through an SMTP relay.
    Smtp(Box<authcore_smtp::SmtpSender>),
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("addr", &self.addr)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field("secret_is_ephemeral", &self.secret_is_ephemeral)
            .field("demo_password", &"[redacted]")
            .field("users_file", &self.users_file)
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

/// Why the server configuration could not be read (the message says what to fix).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerConfigError {
    /// A variable has a value it cannot take (the message names it).
    #[error("{0}")]
    InvalidSetting(String),
    /// No `AUTH_SECRET`, and the OS random generator failed.
    #[error("AUTH_SECRET is not set and no random secret could be made: {0}")]
    Random(getrandom::Error),
    /// `SMTP_URL` (or `[email] smtp_url`) cannot be used.
    #[error("SMTP_URL: {0}")]
    InvalidSmtpUrl(authcore_smtp::Error),
    /// The configuration file cannot be read or parsed.
    #[error("configuration file: {0}")]
    File(#[from] ConfigFileError),
    /// The gateway configuration cannot be used.
    #[error("gateway: {0}")]
    Gateway(#[from] gateway::GatewayError),
    /// The OpenID Provider section.
    #[error("OpenID Provider: {0}")]
    Provider(#[from] oidc_provider::ProviderError),
    /// The `[ldap]` section or its variables (the message names the key to fix).
    #[error("{0}")]
    Ldap(#[from] authcore_ldap::SettingsError),
    /// The users file cannot be read or holds a mistake (the message names the line).
    #[error("{0} (the file of AUTHCORE_USERS_FILE or [users_file] path)")]
    UsersFile(#[from] UsersFileError),
    /// The demo user would sign in with the published default password on an address
    /// other machines reach.
    #[error(
        "the demo user `demo` has the default password and the server listens on {addr}, which is not loopback: set AUTHCORE_DEMO_PASSWORD (or [server] demo_password), or configure a user source (AUTHCORE_USERS_FILE / [users_file]), which turns the demo user off"
    )]
    DefaultDemoPassword {
        /// The listen address.
        addr: SocketAddr,
    },
}

/// The environment as a source of settings.
struct Vars<'a>(&'a Env);

impl Vars<'_> {
    /// Variable `name` read by `parse` when it is set: `Some(None)` for a value that stands
    /// for the default, `None` when the variable is not set. An error names the variable.
    fn read<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<Option<T>, String>,
    ) -> Result<Option<Option<T>>, ServerConfigError> {
        match self.0.get(name) {
            Some(v) => parse(v).map(Some).map_err(|reason| {
                ServerConfigError::InvalidSetting(format!("{name}={v:?} {reason}"))
            }),
            None => Ok(None),
        }
    }

    /// Variable `name` as it is, when set.
    fn text(&self, name: &'static str) -> Option<Option<String>> {
        self.0.get(name).map(|v| Some(v.to_owned()))
    }
}

/// The setting's value: the variable's when it is set, else the file's.
fn layered<T>(var: Option<Option<T>>, file: Option<T>) -> Option<T> {
    var.unwrap_or(file)
}

impl ServerConfig {
    /// A configuration with a fixed secret, the default address and password, no database
    /// and an empty environment (for tests).
    pub fn new(secret: impl Into<String>) -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            secret: Some(secret.into()),
            secret_is_ephemeral: false,
            demo_password: DEFAULT_DEMO_PASSWORD.to_owned(),
            users_file: None,
            passwords: false,
            password_options: PasswordOptions::default(),
            env: Env::default(),
            auth_js: AuthJsSettings::default(),
            providers: ProvidersSection::default(),
            database_url: None,
            email: EmailDelivery::Console,
            email_from: DEFAULT_EMAIL_FROM.to_owned(),
            email_sign_in: true,
            passkeys: true,
            theme: Theme::default(),
            pages: PagesOptions::default(),
            gateway: None,
            oidc_provider: None,
            metrics_addr: None,
            log_format: ops::LogFormat::Text,
            allowed_hosts: None,
            limits: serve::ConnectionLimits::default(),
            database_pool: authcore_sqlx::PoolSettings::default(),
            workers: serve::default_workers(),
            rate_limits: RateLimits::recommended(),
            redis_url: None,
            trusted_proxies: Vec::new(),
            two_factor: None,
            recent_sign_in: None,
            sign_up: SignUpPolicy::Closed,
            organizations: None,
            admins: None,
            ldap: None,
            audit: AuditSettings::default(),
        }
    }

    /// Reads the configuration file at `path` ([`crate::config_file`]), with the variables
    /// set in `process` taking precedence over the file's values.
    pub fn from_file(path: &Path, process: Env) -> Result<Self, ServerConfigError> {
        Self::resolve(ConfigFile::load(path)?, process)
    }

    /// Reads the configuration from `env` alone; without a secret, makes a random one
    /// ([`secret_is_ephemeral`](Self::secret_is_ephemeral)).
    pub fn from_env(env: Env) -> Result<Self, ServerConfigError> {
        Self::resolve(ConfigFile::default(), env)
    }

    /// The configuration of a parsed file with the variables set in `process` on top. Each
    /// concern is read by a resolver of its own, in the order below (the first bad value
    /// found is the one reported).
    pub fn resolve(file: ConfigFile, process: Env) -> Result<Self, ServerConfigError> {
        let env = process;
        let vars = Vars(&env);
        let auth_js = file.auth.auth_js_settings();
        let server = file.server;
        let listener = Listener::resolve(&vars, &server)?;
        let database_pool = database_pool(&vars, &server)?;
        let workers = layered(
            vars.read("AUTHCORE_WORKERS", value::workers_text)?,
            server.workers,
        )
        .unwrap_or_else(serve::default_workers);
        let demo_password = layered(
            vars.text("AUTHCORE_DEMO_PASSWORD"),
            server.demo_password.map(|s| s.expose().to_owned()),
        )
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_DEMO_PASSWORD.to_owned());
        let users_file = users_file(&vars, file.users_file)?;
        let database_url = database_url(&vars, server.database_url);
        let passwords_file = file.passwords.unwrap_or_default();
        let passwords = layered(
            vars.read("AUTHCORE_PASSWORDS", value::on_off)?,
            passwords_file.enabled,
        )
        .unwrap_or(false);
        if passwords && database_url.is_none() {
            return Err(ServerConfigError::InvalidSetting(
                "password accounts ([passwords] enabled, AUTHCORE_PASSWORDS) are kept in the database: set AUTHCORE_DATABASE_URL (or [server] database_url)".into(),
            ));
        }
        let redis_url = value::non_blank(layered(
            vars.text("AUTHCORE_REDIS_URL"),
            server.redis_url.map(|s| s.expose().to_owned()),
        ));
        let email_sign_in = database_feature(
            vars.read("AUTHCORE_EMAIL_SIGN_IN", value::on_off)?,
            file.email.sign_in,
            database_url.is_some(),
            "email sign-in ([email] sign_in, AUTHCORE_EMAIL_SIGN_IN) keeps its links and users",
        )?;
        let passkeys = database_feature(
            vars.read("AUTHCORE_PASSKEYS", value::on_off)?,
            file.passkeys.unwrap_or_default().enabled,
            database_url.is_some(),
            "passkeys ([passkeys] enabled, AUTHCORE_PASSKEYS) are kept",
        )?;
        let (email, email_from) = email(&vars, file.email)?;
        let allowed_hosts = layered(
            vars.read("AUTHCORE_ALLOWED_HOSTS", value::comma_list)?,
            file.auth.allowed_hosts.and_then(value::list),
        );
        let trusted_proxies = layered(
            vars.read("AUTHCORE_TRUSTED_PROXIES", value::comma_list)?,
            file.auth.trusted_proxies.and_then(value::list),
        )
        .unwrap_or_default();
        let rate_limits = rate_limits(&env, file.rate_limits.as_ref())?;
        let (secret, secret_is_ephemeral) = ephemeral_secret(&env, &auth_js)?;
        let two_factor = two_factor(&vars, file.two_factor, database_url.is_some())?;
        if !email_sign_in
            && two_factor
                .as_ref()
                .is_some_and(|t| t.first_enrolment == FirstEnrolment::EmailLink)
        {
            return Err(ServerConfigError::InvalidSetting(
                "two-factor first_enrolment = \"email-link\" lets only a magic-link sign-in enrol a first second factor, but email sign-in is off ([email] sign_in, AUTHCORE_EMAIL_SIGN_IN)".into(),
            ));
        }
        let recent_sign_in = layered(
            vars.read("AUTHCORE_RECENT_SIGN_IN", value::seconds_text)?,
            file.auth.recent_sign_in,
        );
        let ldap = ldap(&vars, file.ldap)?;
        let organizations = organizations(&vars, file.organizations, database_url.is_some())?;
        let admins = admins(
            &vars,
            file.admin,
            database_url.is_some(),
            organizations.is_some(),
        )?;
        let sign_up = sign_up(&vars, file.auth.sign_up)?;
        if sign_up == SignUpPolicy::Invite && organizations.is_none() {
            return Err(ServerConfigError::InvalidSetting(
                "sign-up by invitation ([auth] sign_up = \"invite\", AUTHCORE_SIGN_UP=invite) lets in invited addresses, and invitations come with organizations: set [organizations] enabled = true (AUTHCORE_ORGANIZATIONS=on)".into(),
            ));
        }
        let password_options = password_options(&vars, &passwords_file, &sign_up)?;
        let audit = audit(&vars, file.audit)?;
        if audit.store == Some(true) && database_url.is_none() {
            return Err(ServerConfigError::InvalidSetting(
                "the audit log ([audit] store, AUTHCORE_AUDIT_STORE) is kept in the database: set AUTHCORE_DATABASE_URL (or [server] database_url)".into(),
            ));
        }
        if audit.retention.is_some() && (audit.store == Some(false) || database_url.is_none()) {
            return Err(ServerConfigError::InvalidSetting(
                "[audit] retention_days (AUTHCORE_AUDIT_RETENTION_DAYS) prunes the records kept in the database, but they are not kept: set [audit] store = true and AUTHCORE_DATABASE_URL".into(),
            ));
        }
        let sections_env = sections_env(&env, &auth_js);
        let gateway = gateway(
            &sections_env,
            file.gateway,
            two_factor.is_some(),
            database_url.is_some(),
            organizations.is_some(),
        )?;
        let oidc_provider = oidc_provider(
            &sections_env,
            file.oidc_provider,
            database_url.is_some() && two_factor.is_some(),
        )?;
        let config = ServerConfig {
            addr: listener.addr,
            secret,
            secret_is_ephemeral,
            demo_password,
            users_file,
            passwords,
            password_options,
            env,
            auth_js,
            providers: file.providers,
            database_url,
            email,
            email_from,
            email_sign_in,
            passkeys,
            theme: file.theme,
            pages: file.pages,
            gateway,
            oidc_provider,
            metrics_addr: listener.metrics_addr,
            log_format: listener.log_format,
            allowed_hosts,
            limits: listener.limits,
            database_pool,
            workers,
            rate_limits,
            redis_url,
            trusted_proxies,
            two_factor,
            recent_sign_in,
            sign_up,
            organizations,
            admins,
            ldap,
            audit,
        };
        config.check_demo_password()?;
        Ok(config)
    }

    /// The configured user sources, whose users sign in with a password: the users file
    /// and the directory (LDAP). The demo user is off while there is any.
    pub fn user_sources(&self) -> Vec<Arc<dyn UserSource>> {
        let mut sources: Vec<Arc<dyn UserSource>> = Vec::new();
        if let Some(file) = &self.users_file {
            sources.push(Arc::new(file.clone()));
        }
        if let Some(ldap) = &self.ldap {
            sources.push(Arc::new(ldap.clone()));
        }
        sources
    }

    /// Whether the demo user (`demo` / [`demo_password`](Self::demo_password)) signs in:
    /// only while no user source is configured.
    pub fn demo_user_enabled(&self) -> bool {
        self.user_sources().is_empty() && !self.passwords
    }

    /// Refuses the demo user with the published default password on an address that is
    /// not loopback: anyone who reaches the server could sign in.
    pub fn check_demo_password(&self) -> Result<(), ServerConfigError> {
        if self.demo_user_enabled()
            && self.demo_password == DEFAULT_DEMO_PASSWORD
            && !self.addr.ip().is_loopback()
        {
            return Err(ServerConfigError::DefaultDemoPassword { addr: self.addr });
        }
        Ok(())
    }

    /// The public URL of the auth routes: `AUTH_URL`, else `[auth] url`.
    pub fn public_url(&self) -> Option<&str> {
        self.env.get("AUTH_URL").or(self.auth_js.url.as_deref())
    }

    /// What says whether request hosts are trusted: `AUTH_TRUST_HOST` as set, else
    /// `[auth] trust_host` (`"true"` or `"false"`).
    pub fn trust_host_setting(&self) -> Option<&str> {
        self.env.get("AUTH_TRUST_HOST").or(self
            .auth_js
            .trust_host
            .map(|trust| if trust { "true" } else { "false" }))
    }
}

/// Where and how the server listens, and how it logs.
struct Listener {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    log_format: ops::LogFormat,
    limits: serve::ConnectionLimits,
}

impl Listener {
    /// `AUTHCORE_ADDR`, `AUTHCORE_METRICS_ADDR`, `AUTHCORE_LOG_FORMAT`, the timeouts and the
    /// connection cap, over their `[server]` keys.
    fn resolve(vars: &Vars<'_>, server: &ServerSection) -> Result<Self, ServerConfigError> {
        let addr = layered(vars.read("AUTHCORE_ADDR", value::socket_addr)?, server.addr)
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 3000)));
        let metrics_addr = layered(
            vars.read("AUTHCORE_METRICS_ADDR", value::socket_addr)?,
            server.metrics_addr,
        );
        let log_format = layered(
            vars.read("AUTHCORE_LOG_FORMAT", value::log_format)?,
            server.log_format,
        )
        .unwrap_or_default();
        let mut limits = serve::ConnectionLimits::default();
        if let Some(d) = layered(
            vars.read("AUTHCORE_HEADER_READ_TIMEOUT", value::seconds_text)?,
            server.header_read_timeout,
        ) {
            limits.header_read_timeout = d;
        }
        if let Some(d) = layered(
            vars.read("AUTHCORE_REQUEST_TIMEOUT", value::seconds_text)?,
            server.request_timeout,
        ) {
            limits.request_timeout = d;
        }
        if let Some(n) = layered(
            vars.read("AUTHCORE_MAX_CONNECTIONS", value::count_text)?,
            server.max_connections,
        ) {
            limits.max_connections = n;
        }
        Ok(Listener {
            addr,
            metrics_addr,
            log_format,
            limits,
        })
    }
}

/// The directory source: `[ldap]` with the `AUTHCORE_LDAP_*` variables over its keys (a
/// variable that is set wins); on when the section is there or `AUTHCORE_LDAP_URL` is set
/// and not blank. The settings are checked now, so a mistake stops the start.
fn ldap(
    vars: &Vars<'_>,
    file: Option<authcore_ldap::LdapSettings>,
) -> Result<Option<authcore_ldap::LdapSource>, ServerConfigError> {
    let url = value::non_blank(vars.text("AUTHCORE_LDAP_URL").flatten());
    if file.is_none() && url.is_none() {
        return Ok(None);
    }
    let mut settings = file.unwrap_or_default();
    let texts: [(&'static str, &mut String); 4] = [
        ("AUTHCORE_LDAP_URL", &mut settings.url),
        ("AUTHCORE_LDAP_BIND_DN", &mut settings.bind_dn),
        ("AUTHCORE_LDAP_BIND_PASSWORD", &mut settings.bind_password),
        ("AUTHCORE_LDAP_BASE_DN", &mut settings.base_dn),
    ];
    for (name, slot) in texts {
        if let Some(Some(v)) = vars.text(name) {
            *slot = v;
        }
    }
    if let Some(path) = vars.text("AUTHCORE_LDAP_CA_FILE") {
        settings.ca_file = value::non_blank(path).map(Into::into);
    }
    if let Some(Some(on)) = vars.read("AUTHCORE_LDAP_START_TLS", |v| match v {
        "true" | "on" => Ok(Some(true)),
        "false" | "off" => Ok(Some(false)),
        _ => Err("is not `true` or `false`".to_owned()),
    })? {
        settings.start_tls = on;
    }
    Ok(Some(authcore_ldap::LdapSource::new(settings)?))
}

/// The database pool: `AUTHCORE_DATABASE_TIMEOUT`, `AUTHCORE_DATABASE_MAX_CONNECTIONS`,
/// `AUTHCORE_DATABASE_DIRECT_READS`, over their `[server]` keys.
fn database_pool(
    vars: &Vars<'_>,
    server: &ServerSection,
) -> Result<authcore_sqlx::PoolSettings, ServerConfigError> {
    let mut pool = authcore_sqlx::PoolSettings::default();
    if let Some(d) = layered(
        vars.read("AUTHCORE_DATABASE_TIMEOUT", value::seconds_text)?,
        server.database_timeout,
    ) {
        pool = pool.timeout(d);
    }
    if let Some(n) = layered(
        vars.read("AUTHCORE_DATABASE_MAX_CONNECTIONS", value::count_text)?,
        server.database_max_connections,
    ) {
        pool = pool.max_connections(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(on) = layered(
        vars.read("AUTHCORE_DATABASE_DIRECT_READS", value::on_off)?,
        server.database_direct_reads,
    ) {
        pool = pool.direct_session_reads(on);
    }
    Ok(pool)
}

/// The users file of `AUTHCORE_USERS_FILE` over `[users_file] path` (blank: none), read and
/// checked now so that a mistake stops the start.
fn users_file(
    vars: &Vars<'_>,
    section: Option<UsersFileSection>,
) -> Result<Option<UsersFile>, ServerConfigError> {
    let path = layered(
        vars.text("AUTHCORE_USERS_FILE")
            .map(|v| v.map(|v| std::path::PathBuf::from(v.trim()))),
        section.and_then(|s| s.path),
    );
    match path.filter(|p| !p.as_os_str().is_empty()) {
        Some(path) => Ok(Some(UsersFile::load(path)?)),
        None => Ok(None),
    }
}

/// `AUTHCORE_DATABASE_URL` over `[server] database_url`: blank or `none` for no database,
/// unset for [`DEFAULT_DATABASE_URL`].
fn database_url(vars: &Vars<'_>, file: Option<String>) -> Option<String> {
    match layered(vars.text("AUTHCORE_DATABASE_URL"), file)
        .as_deref()
        .map(str::trim)
    {
        Some("" | "none") => None,
        Some(url) => Some(url.to_owned()),
        None => Some(DEFAULT_DATABASE_URL.to_owned()),
    }
}

/// A way to sign in that lives in the database (email sign-in, passkeys): the variable's
/// `on` or `off` over the file's key; on by default where there is a database, off where
/// there is none, and refused there when asked for (`what` says where it is kept).
fn database_feature(
    var: Option<Option<bool>>,
    file: Option<bool>,
    has_database: bool,
    what: &str,
) -> Result<bool, ServerConfigError> {
    match layered(var, file) {
        Some(true) if !has_database => Err(ServerConfigError::InvalidSetting(format!(
            "{what} in the database: set AUTHCORE_DATABASE_URL (or [server] database_url)"
        ))),
        Some(on) => Ok(on),
        None => Ok(has_database),
    }
}

/// How magic links are delivered (`SMTP_URL`) and from whom (`AUTHCORE_EMAIL_FROM`), over
/// `[email]`.
fn email(
    vars: &Vars<'_>,
    file: EmailSection,
) -> Result<(EmailDelivery, String), ServerConfigError> {
    let delivery = match value::non_blank(layered(
        vars.text("SMTP_URL"),
        file.smtp_url.map(|s| s.expose().to_owned()),
    )) {
        Some(url) => EmailDelivery::Smtp(Box::new(
            authcore_smtp::SmtpSender::from_url(&url).map_err(ServerConfigError::InvalidSmtpUrl)?,
        )),
        None => EmailDelivery::Console,
    };
    let from = layered(vars.text("AUTHCORE_EMAIL_FROM"), file.from)
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_EMAIL_FROM.to_owned());
    Ok((delivery, from))
}

/// `AUTHCORE_RATE_LIMITS` (`recommended` or `off`), adjusted by the file's `[rate_limits]`.
fn rate_limits(
    env: &Env,
    section: Option<&RateLimitsSection>,
) -> Result<RateLimits, ServerConfigError> {
    let limits = match env.get("AUTHCORE_RATE_LIMITS").map(str::trim) {
        None | Some("" | "on" | "recommended") => RateLimits::recommended(),
        Some("off") => RateLimits::default(),
        Some(other) => {
            return Err(ServerConfigError::InvalidSetting(format!(
                "AUTHCORE_RATE_LIMITS={other:?} is not `recommended` or `off`"
            )));
        }
    };
    Ok(match section {
        Some(section) => section.apply(limits),
        None => limits,
    })
}

/// A random secret when neither `AUTH_SECRET`, `AUTH_SECRET_1..3` nor `[auth] secret` gives
/// one (sessions then end with the process), with whether it was made.
fn ephemeral_secret(
    env: &Env,
    auth_js: &AuthJsSettings,
) -> Result<(Option<String>, bool), ServerConfigError> {
    let non_empty = |v: Option<&str>| v.is_some_and(|v| !v.is_empty());
    let has_secret = non_empty(env.get("AUTH_SECRET").or(auth_js.secret.as_deref()))
        || ["AUTH_SECRET_1", "AUTH_SECRET_2", "AUTH_SECRET_3"]
            .iter()
            .any(|k| non_empty(env.get(k)));
    if has_secret {
        return Ok((None, false));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(ServerConfigError::Random)?;
    Ok((Some(hex::encode(bytes)), true))
}

/// Second factors: the policy (`AUTHCORE_TWO_FACTOR`, `[two_factor] policy`; optional with
/// a database, off without one, where they cannot be stored), the issuer, and who enrols
/// a user's first one under `required` (`AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT`).
fn two_factor(
    vars: &Vars<'_>,
    section: TwoFactorSection,
    has_database: bool,
) -> Result<Option<authcore::two_factor::TwoFactorOptions>, ServerConfigError> {
    let invalid = ServerConfigError::InvalidSetting;
    let two_factor = match layered(vars.text("AUTHCORE_TWO_FACTOR"), section.policy)
        .as_deref()
        .map(str::trim)
    {
        Some("off") => None,
        None | Some("") if !has_database => None,
        None | Some("" | "optional") => Some(authcore::two_factor::TwoFactorOptions::default()),
        Some("required") => Some(authcore::two_factor::TwoFactorOptions::required()),
        Some(other) => {
            return Err(invalid(format!(
                "two-factor policy {other:?} is not `optional`, `required` or `off`"
            )));
        }
    };
    if two_factor.is_some() && !has_database {
        return Err(invalid(
            "second factors (AUTHCORE_TWO_FACTOR, [two_factor] policy) are stored in the database: set AUTHCORE_DATABASE_URL, or turn them off".to_owned(),
        ));
    }
    let two_factor = match (two_factor, value::non_blank(section.issuer)) {
        (Some(t), Some(issuer)) => Some(t.issuer(issuer)),
        (t, _) => t,
    };
    let first_enrolment = layered(
        vars.read(
            "AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT",
            value::first_enrolment,
        )?,
        section.first_enrolment,
    );
    match (two_factor, first_enrolment) {
        (t, None | Some(FirstEnrolment::FirstFactor)) => Ok(t),
        (Some(t), Some(who)) if t.policy == TwoFactorPolicy::Required => {
            Ok(Some(t.first_enrolment(who)))
        }
        (_, Some(_)) => Err(invalid(
            "two-factor first_enrolment (AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT, [two_factor] first_enrolment) says who enrols when every user must have a second factor: it needs policy = \"required\"".to_owned(),
        )),
    }
}

/// What password accounts' users may do themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PasswordOptions {
    /// The sign-up page (`AUTHCORE_PASSWORD_SIGN_UP`, `[passwords] sign_up`; off by
    /// default), within the sign-up policy.
    pub sign_up: bool,
    /// Whether a new account confirms its address before its first sign-in
    /// (`AUTHCORE_PASSWORD_VERIFY_EMAIL`, `[passwords] verify_email`; on by default).
    pub verify_email: bool,
    /// The policy new passwords meet, with the shortest length of
    /// `AUTHCORE_PASSWORD_MIN_LENGTH` / `[passwords] min_length` when set.
    pub policy: authcore::passwords::PasswordPolicy,
}

impl Default for PasswordOptions {
    fn default() -> Self {
        PasswordOptions {
            sign_up: false,
            verify_email: true,
            policy: authcore::passwords::PasswordPolicy::default(),
        }
    }
}

/// `[passwords]`'s self-service settings, each variable over the file; a sign-up page
/// under a closed sign-up policy is refused with what to set.
fn password_options(
    vars: &Vars<'_>,
    file: &crate::config_file::PasswordsSection,
    policy: &SignUpPolicy,
) -> Result<PasswordOptions, ServerConfigError> {
    let defaults = PasswordOptions::default();
    let options = PasswordOptions {
        sign_up: layered(
            vars.read("AUTHCORE_PASSWORD_SIGN_UP", value::on_off)?,
            file.sign_up,
        )
        .unwrap_or(defaults.sign_up),
        verify_email: layered(
            vars.read("AUTHCORE_PASSWORD_VERIFY_EMAIL", value::on_off)?,
            file.verify_email,
        )
        .unwrap_or(defaults.verify_email),
        policy: match layered(
            vars.read("AUTHCORE_PASSWORD_MIN_LENGTH", value::count_text)?,
            file.min_length,
        ) {
            None => defaults.policy,
            Some(min) => authcore::passwords::PasswordPolicy::builder()
                .min_length(min)
                .build()
                .map_err(|e| {
                    ServerConfigError::InvalidSetting(format!(
                        "[passwords] min_length (AUTHCORE_PASSWORD_MIN_LENGTH): {e}"
                    ))
                })?,
        },
    };
    if options.sign_up && *policy == SignUpPolicy::Closed {
        return Err(ServerConfigError::InvalidSetting(
            "[passwords] sign_up (AUTHCORE_PASSWORD_SIGN_UP) opens a sign-up page, but the sign-up policy is closed: set [auth] sign_up (AUTHCORE_SIGN_UP) to \"open\" or to the email domains that may sign up".into(),
        ));
    }
    Ok(options)
}

/// Organizations: on with `[organizations] enabled` (`AUTHCORE_ORGANIZATIONS`), where there
/// is a database to keep them; who makes them (`AUTHCORE_ORGANIZATIONS_USERS_CREATE`), how
/// long invitations last (`AUTHCORE_ORGANIZATIONS_INVITATION_DAYS`) and the roles of
/// `[organizations.roles]`, each checked now (also while off, so a mistake is found before
/// it is turned on) with its key named.
fn organizations(
    vars: &Vars<'_>,
    section: Option<OrganizationsSection>,
    has_database: bool,
) -> Result<Option<authcore::organizations::Organizations>, ServerConfigError> {
    use authcore::organizations::Organizations;
    let section = section.unwrap_or_default();
    let mut organizations = Organizations::new();
    for (name, permissions) in &section.roles {
        // One role at a time, so that the refusal names its key.
        Organizations::new()
            .role(name, permissions)
            .roles()
            .map_err(|e| {
                ServerConfigError::InvalidSetting(format!("[organizations.roles] {name}: {e}"))
            })?;
        organizations = organizations.role(name, permissions);
    }
    let users_create = layered(
        vars.read("AUTHCORE_ORGANIZATIONS_USERS_CREATE", value::on_off)?,
        section.users_create,
    );
    let invitation_ttl = layered(
        vars.read(
            "AUTHCORE_ORGANIZATIONS_INVITATION_DAYS",
            value::invitation_days_text,
        )?,
        section.invitation_days,
    );
    let on = layered(
        vars.read("AUTHCORE_ORGANIZATIONS", value::on_off)?,
        section.enabled,
    )
    .unwrap_or(false);
    if !on {
        return Ok(None);
    }
    if !has_database {
        return Err(ServerConfigError::InvalidSetting(
            "organizations ([organizations] enabled, AUTHCORE_ORGANIZATIONS) are kept in the database: set AUTHCORE_DATABASE_URL (or [server] database_url)".into(),
        ));
    }
    if let Some(allowed) = users_create {
        organizations = organizations.users_create(allowed);
    }
    if let Some(ttl) = invitation_ttl {
        organizations = organizations.invitation_ttl(ttl);
    }
    Ok(Some(organizations))
}

/// Administrators: the users of `AUTHCORE_ADMINS` (comma-separated ids or addresses) over
/// `[admin] users`, and the organization of `AUTHCORE_ADMIN_ORGANIZATION` over
/// `[admin] organization`; off when neither names anyone. They need the database (bans
/// and the user search are kept there), and an organization needs organizations on.
fn admins(
    vars: &Vars<'_>,
    section: Option<AdminSection>,
    has_database: bool,
    has_organizations: bool,
) -> Result<Option<authcore::admin::Admins>, ServerConfigError> {
    let section = section.unwrap_or_default();
    let users = layered(
        vars.read("AUTHCORE_ADMINS", value::comma_list)?,
        value::list(section.users),
    )
    .unwrap_or_default();
    let organization = layered(
        vars.read("AUTHCORE_ADMIN_ORGANIZATION", |v| {
            Ok(value::non_blank(Some(v.to_owned())))
        })?,
        value::non_blank(section.organization),
    );
    let impersonation = layered(
        vars.read(
            "AUTHCORE_ADMIN_IMPERSONATION_MINUTES",
            value::impersonation_minutes_text,
        )?,
        section.impersonation_minutes,
    );
    if users.is_empty() && organization.is_none() {
        return Ok(None);
    }
    if !has_database {
        return Err(ServerConfigError::InvalidSetting(
            "administrators ([admin], AUTHCORE_ADMINS) ban and find users in the database: set AUTHCORE_DATABASE_URL (or [server] database_url)".into(),
        ));
    }
    let mut admins = authcore::admin::Admins::new();
    for user in users {
        admins = admins.user(user);
    }
    if let Some(slug) = organization {
        if !has_organizations {
            return Err(ServerConfigError::InvalidSetting(
                "[admin] organization (AUTHCORE_ADMIN_ORGANIZATION) names an organization, and organizations are off: set [organizations] enabled = true (AUTHCORE_ORGANIZATIONS=on)".into(),
            ));
        }
        admins = admins.organization(slug);
    }
    if let Some(limit) = impersonation {
        admins = admins.impersonation(limit);
    }
    Ok(Some(admins))
}

/// The audit log's settings: `AUTHCORE_AUDIT_STORE`, `AUTHCORE_AUDIT_RETENTION_DAYS` and
/// `AUTHCORE_AUDIT_JSON_LINES` over `[audit]`'s keys; the webhooks of `[[audit.webhooks]]`
/// and one more of `AUTHCORE_AUDIT_WEBHOOK_URL` / `AUTHCORE_AUDIT_WEBHOOK_SECRET`, each URL
/// and secret checked now with its key named.
fn audit(vars: &Vars<'_>, section: AuditSection) -> Result<AuditSettings, ServerConfigError> {
    use authcore::audit::{JsonLinesTarget, MIN_WEBHOOK_SECRET_LEN, WebhookError, WebhookSink};
    let store = layered(
        vars.read("AUTHCORE_AUDIT_STORE", value::on_off)?,
        section.store,
    );
    let retention = layered(
        vars.read("AUTHCORE_AUDIT_RETENTION_DAYS", value::retention_days_text)?,
        section.retention_days,
    );
    let json_lines = value::non_blank(layered(
        vars.text("AUTHCORE_AUDIT_JSON_LINES"),
        section.json_lines,
    ))
    .map(|v| match v.as_str() {
        "stdout" => JsonLinesTarget::Stdout,
        path => JsonLinesTarget::File(path.into()),
    });
    // One check of both, its refusal naming the key of the value refused.
    let checked = |url: String, url_key: &str, secret: SecretValue, secret_key: &str| {
        WebhookSink::check(&url, secret.expose().as_bytes())
            .map(|()| AuditWebhook { url, secret })
            .map_err(|e| {
                ServerConfigError::InvalidSetting(match e {
                    WebhookError::ShortSecret => format!(
                        "{secret_key} is shorter than {MIN_WEBHOOK_SECRET_LEN} bytes (make one with `openssl rand -hex 32`)"
                    ),
                    _ => format!("{url_key} is not an http:// or https:// URL with a host"),
                })
            })
    };
    let mut webhooks = Vec::new();
    for (i, hook) in section.webhooks.into_iter().enumerate() {
        let n = i + 1;
        let (secret, secret_key) = match (hook.secret, hook.secret_env) {
            (Some(secret), None) => (secret, format!("[[audit.webhooks]] #{n} secret")),
            (None, Some(name)) => match vars.0.get(&name) {
                Some(v) => (
                    SecretValue::from(v.to_owned()),
                    format!("{name} (the secret_env of [[audit.webhooks]] #{n})"),
                ),
                None => {
                    return Err(ServerConfigError::InvalidSetting(format!(
                        "[[audit.webhooks]] #{n} secret_env names {name}, which is not set"
                    )));
                }
            },
            (Some(_), Some(_)) => {
                return Err(ServerConfigError::InvalidSetting(format!(
                    "[[audit.webhooks]] #{n}: give secret or secret_env, not both"
                )));
            }
            (None, None) => {
                return Err(ServerConfigError::InvalidSetting(format!(
                    "[[audit.webhooks]] #{n} has no secret: set secret, or secret_env to the variable that holds it"
                )));
            }
        };
        let url_key = format!("[[audit.webhooks]] #{n} url");
        webhooks.push(checked(
            hook.url.unwrap_or_default(),
            &url_key,
            secret,
            &secret_key,
        )?);
    }
    let env_url = value::non_blank(vars.text("AUTHCORE_AUDIT_WEBHOOK_URL").flatten());
    let env_secret = vars.text("AUTHCORE_AUDIT_WEBHOOK_SECRET").flatten();
    match (env_url, env_secret) {
        (Some(url), Some(secret)) => webhooks.push(checked(
            url,
            "AUTHCORE_AUDIT_WEBHOOK_URL",
            secret.into(),
            "AUTHCORE_AUDIT_WEBHOOK_SECRET",
        )?),
        (Some(_), None) => {
            return Err(ServerConfigError::InvalidSetting(
                "AUTHCORE_AUDIT_WEBHOOK_URL is set without AUTHCORE_AUDIT_WEBHOOK_SECRET, which signs its records".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(ServerConfigError::InvalidSetting(
                "AUTHCORE_AUDIT_WEBHOOK_SECRET is set without AUTHCORE_AUDIT_WEBHOOK_URL".into(),
            ));
        }
        (None, None) => {}
    }
    Ok(AuditSettings {
        store,
        retention,
        json_lines,
        webhooks,
    })
}

/// The sign-up policy: `AUTHCORE_SIGN_UP` over `[auth] sign_up`; closed unless set.
fn sign_up(
    vars: &Vars<'_>,
    file: Option<crate::config_file::SignUpSetting>,
) -> Result<SignUpPolicy, ServerConfigError> {
    use crate::config_file::SignUpSetting;
    let words = |v: &str| -> Result<Option<SignUpPolicy>, String> {
        match v.trim() {
            "" => Ok(None),
            "open" => Ok(Some(SignUpPolicy::Open)),
            "closed" => Ok(Some(SignUpPolicy::Closed)),
            "invite" => Ok(Some(SignUpPolicy::Invite)),
            domains => SignUpPolicy::domains(domains.split(',').filter(|d| !d.trim().is_empty()))
                .map(Some)
                .map_err(|e| {
                    format!("is not \"open\", \"closed\", \"invite\" or email domains: {e}")
                }),
        }
    };
    if let Some(var) = vars.read("AUTHCORE_SIGN_UP", words)? {
        return Ok(var.unwrap_or(SignUpPolicy::Closed));
    }
    let invalid = |e: String| ServerConfigError::InvalidSetting(format!("[auth] sign_up: {e}"));
    match file {
        None => Ok(SignUpPolicy::Closed),
        Some(SignUpSetting::Word(w)) => match w.as_str() {
            "open" => Ok(SignUpPolicy::Open),
            "closed" => Ok(SignUpPolicy::Closed),
            "invite" => Ok(SignUpPolicy::Invite),
            other => Err(invalid(format!(
                "{other:?} is not \"open\", \"closed\", \"invite\" or a list of email domains"
            ))),
        },
        Some(SignUpSetting::Domains(d)) => SignUpPolicy::domains(d).map_err(invalid),
    }
}

/// The environment the gateway and the OpenID Provider read their variables from, with
/// the public URL as `AUTH_URL` (the file's `[auth] url` where the variable is not set).
fn sections_env(env: &Env, auth_js: &AuthJsSettings) -> Env {
    let url = auth_js.url.iter().map(|u| ("AUTH_URL", u.as_str()));
    Env::from_pairs(url).overlay(env.clone())
}

/// The single sign-on gateway, when `[gateway]` or its variables ask for it.
fn gateway(
    env: &Env,
    section: Option<gateway::GatewaySection>,
    has_two_factor: bool,
    has_database: bool,
    has_organizations: bool,
) -> Result<Option<Arc<gateway::Gateway>>, ServerConfigError> {
    if !gateway::Gateway::is_configured(env, section.as_ref()) {
        return Ok(None);
    }
    let g = gateway::Gateway::new(env, section.unwrap_or_default())?;
    if g.uses_step_up() && !has_two_factor {
        return Err(gateway::GatewayError::Invalid(
            "rules with factors or max_age need second factors on ([two_factor] policy, with a database): only then do sessions record how and when their user signed in".into(),
        ).into());
    }
    if g.uses_organizations() && !has_organizations {
        return Err(gateway::GatewayError::Invalid(
            "rules on an organization need organizations on ([organizations] enabled = true, AUTHCORE_ORGANIZATIONS=on): only then are users members of any".into(),
        ).into());
    }
    if g.uses_providers() && has_database {
        return Err(gateway::GatewayError::Invalid(
            "rules on allow_providers need JWT sessions, which carry the provider: set AUTHCORE_DATABASE_URL=none (or [server] database_url = \"none\")".into(),
        ).into());
    }
    Ok(Some(Arc::new(
        g.on_decision(ops::count_forward_auth_decision),
    )))
}

/// authcore as an OpenID Provider: on with its section, or with its signing keys in the
/// environment; it needs a database with second factors on.
fn oidc_provider(
    env: &Env,
    section: Option<oidc_provider::ProviderSection>,
    has_database_and_two_factor: bool,
) -> Result<Option<Arc<oidc_provider::OpenIdProvider>>, ServerConfigError> {
    let section = section.or_else(|| {
        env.get(oidc_provider::SIGNING_KEYS_VAR)
            .filter(|v| !v.trim().is_empty())
            .map(|_| oidc_provider::ProviderSection::default())
    });
    let Some(section) = section else {
        return Ok(None);
    };
    if !has_database_and_two_factor {
        return Err(oidc_provider::ProviderError::Invalid(
            "needs a database (AUTHCORE_DATABASE_URL) and second factors on (the default with one): the users, and how and when they signed in".into(),
        )
        .into());
    }
    Ok(Some(Arc::new(oidc_provider::OpenIdProvider::new(
        env, section,
    )?)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    fn from(file: &str, vars: &[(&str, &str)]) -> Result<ServerConfig, ServerConfigError> {
        let file = ConfigFile::parse(file).map_err(|e| ConfigFileError::Parse {
            path: "test.toml".into(),
            source: e,
        })?;
        ServerConfig::resolve(file, Env::from_pairs(vars.iter().copied()))
    }

    #[test]
    fn limits_from_variables() {
        let l = from("", &[]).unwrap().limits;
        assert_eq!(l.header_read_timeout, serve::DEFAULT_HEADER_READ_TIMEOUT);
        assert!(l.max_connections >= 16 && l.max_connections <= 10_000);
        let l = from(
            "",
            &[
                ("AUTHCORE_HEADER_READ_TIMEOUT", "0.5"),
                ("AUTHCORE_REQUEST_TIMEOUT", "3"),
                ("AUTHCORE_MAX_CONNECTIONS", "64"),
            ],
        )
        .unwrap()
        .limits;
        assert_eq!(l.header_read_timeout, Duration::from_millis(500));
        assert_eq!(l.request_timeout, Duration::from_secs(3));
        assert_eq!(l.max_connections, 64);
        for (k, v) in [
            ("AUTHCORE_HEADER_READ_TIMEOUT", "ten"),
            ("AUTHCORE_REQUEST_TIMEOUT", "-1"),
            ("AUTHCORE_REQUEST_TIMEOUT", "NaN"),
            ("AUTHCORE_MAX_CONNECTIONS", "0"),
        ] {
            let err = from("", &[(k, v)]).unwrap_err().to_string();
            assert!(err.contains(k), "{err}");
        }
    }

    /// Every `[server]` key reaches its setting, and its variable wins over it.
    #[test]
    fn file_values_with_the_environment_on_top() {
        let file = r#"
[server]
addr = "127.0.0.1:4100"
metrics_addr = "127.0.0.1:9464"
log_format = "json"
header_read_timeout = 2
request_timeout = 3.5
max_connections = 50
database_url = "postgres://app@db/test"
database_max_connections = 4
database_timeout = 2.5
database_direct_reads = false
workers = 3
demo_password = "file-pw"
redis_url = "redis://127.0.0.1:6379/"
[auth]
allowed_hosts = ["auth.example.com", " *.example.org "]
trusted_proxies = ["10.0.0.0/8"]
[email]
from = "File <file@example.com>"
"#;
        let c = from(file, &[]).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:4100");
        assert_eq!(c.metrics_addr.unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(c.log_format, ops::LogFormat::Json);
        assert_eq!(c.limits.header_read_timeout, Duration::from_secs(2));
        assert_eq!(c.limits.request_timeout, Duration::from_millis(3500));
        assert_eq!(c.limits.max_connections, 50);
        assert_eq!(c.database_url.as_deref(), Some("postgres://app@db/test"));
        assert_eq!(c.database_pool.max_connections, 4);
        assert_eq!(c.database_pool.timeout, Duration::from_millis(2500));
        assert!(!c.database_pool.direct_session_reads);
        assert_eq!(c.workers, 3);
        assert_eq!(c.demo_password, "file-pw");
        assert_eq!(c.redis_url.as_deref(), Some("redis://127.0.0.1:6379/"));
        assert_eq!(
            c.allowed_hosts,
            Some(vec!["auth.example.com".into(), "*.example.org".into()])
        );
        assert_eq!(c.trusted_proxies, ["10.0.0.0/8"]);
        assert_eq!(c.email_from, "File <file@example.com>");

        let c = from(
            file,
            &[
                ("AUTHCORE_ADDR", "0.0.0.0:8080"),
                ("AUTHCORE_METRICS_ADDR", "127.0.0.1:9500"),
                ("AUTHCORE_LOG_FORMAT", "text"),
                ("AUTHCORE_HEADER_READ_TIMEOUT", "4"),
                ("AUTHCORE_REQUEST_TIMEOUT", "5"),
                ("AUTHCORE_MAX_CONNECTIONS", "60"),
                ("AUTHCORE_DATABASE_URL", "none"),
                ("AUTHCORE_DATABASE_MAX_CONNECTIONS", "8"),
                ("AUTHCORE_DATABASE_TIMEOUT", "1"),
                ("AUTHCORE_DATABASE_DIRECT_READS", "on"),
                ("AUTHCORE_WORKERS", "1"),
                ("AUTHCORE_DEMO_PASSWORD", "env-pw"),
                ("AUTHCORE_REDIS_URL", "redis://10.0.0.1/"),
                ("AUTHCORE_ALLOWED_HOSTS", "env.example.com"),
                ("AUTHCORE_TRUSTED_PROXIES", "192.168.0.0/16"),
                ("AUTHCORE_EMAIL_FROM", "Env <env@example.com>"),
            ],
        )
        .unwrap();
        assert_eq!(c.addr.to_string(), "0.0.0.0:8080");
        assert_eq!(c.metrics_addr.unwrap().to_string(), "127.0.0.1:9500");
        assert_eq!(c.log_format, ops::LogFormat::Text);
        assert_eq!(c.limits.header_read_timeout, Duration::from_secs(4));
        assert_eq!(c.limits.request_timeout, Duration::from_secs(5));
        assert_eq!(c.limits.max_connections, 60);
        assert_eq!(c.database_url, None);
        assert_eq!(c.database_pool.max_connections, 8);
        assert_eq!(c.database_pool.timeout, Duration::from_secs(1));
        assert!(c.database_pool.direct_session_reads);
        assert_eq!(c.workers, 1);
        assert_eq!(c.demo_password, "env-pw");
        assert_eq!(c.redis_url.as_deref(), Some("redis://10.0.0.1/"));
        assert_eq!(c.allowed_hosts, Some(vec!["env.example.com".into()]));
        assert_eq!(c.trusted_proxies, ["192.168.0.0/16"]);
        assert_eq!(c.email_from, "Env <env@example.com>");
    }

    /// A variable that is set wins even when blank, and a blank value means the default.
    #[test]
    fn a_blank_variable_stands_for_the_default() {
        let file = "[server]\naddr = \"127.0.0.1:4100\"\ndatabase_url = \"sqlite://file.db\"\ndemo_password = \"file-pw\"\n[auth]\nallowed_hosts = [\"auth.example.com\"]\n";
        let c = from(
            file,
            &[
                ("AUTHCORE_ADDR", " "),
                ("AUTHCORE_DATABASE_URL", ""),
                ("AUTHCORE_DEMO_PASSWORD", ""),
                ("AUTHCORE_ALLOWED_HOSTS", ""),
            ],
        )
        .unwrap();
        assert_eq!(c.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(c.database_url, None);
        assert_eq!(c.demo_password, DEFAULT_DEMO_PASSWORD);
        assert_eq!(c.allowed_hosts, None);
    }

    /// A bad value in the file is reported with its key and line, checked as its variable is.
    #[test]
    fn bad_file_values_name_the_key_and_line() {
        for (text, key, reason) in [
            ("addr = \"nope\"", "addr", "not a socket address"),
            (
                "metrics_addr = \"9464\"",
                "metrics_addr",
                "not a socket address",
            ),
            ("log_format = \"xml\"", "log_format", "`text` or `json`"),
            ("header_read_timeout = -1", "header_read_timeout", "seconds"),
            ("request_timeout = 100000", "request_timeout", "seconds"),
            ("database_timeout = nan", "database_timeout", "seconds"),
            ("max_connections = 0", "max_connections", "positive"),
            (
                "database_max_connections = 0",
                "database_max_connections",
                "positive",
            ),
            ("workers = 2000", "workers", "more than 1024"),
        ] {
            let err = from(&format!("[server]\n{text}\n"), &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains("line 2"), "{err}");
            assert!(err.contains(key), "{err}");
            assert!(err.contains(reason), "{err}");
        }
    }

    /// `[auth] recent_sign_in` and `AUTHCORE_RECENT_SIGN_IN`: seconds, as the other
    /// durations; unset leaves authcore's default.
    #[test]
    fn recent_sign_in_from_file_and_variable() {
        assert_eq!(from("", &[]).unwrap().recent_sign_in, None);
        let file = "[auth]\nrecent_sign_in = 300\n";
        assert_eq!(
            from(file, &[]).unwrap().recent_sign_in,
            Some(Duration::from_secs(300))
        );
        let c = from(file, &[("AUTHCORE_RECENT_SIGN_IN", "90.5")]).unwrap();
        assert_eq!(c.recent_sign_in, Some(Duration::from_millis(90_500)));
        let c = from(file, &[("AUTHCORE_RECENT_SIGN_IN", "")]).unwrap();
        assert_eq!(
            c.recent_sign_in, None,
            "a blank variable stands for the default"
        );

        let err = from("[auth]\nrecent_sign_in = 0\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("recent_sign_in") && err.contains("line 2"),
            "{err}"
        );
        assert!(err.contains("seconds"), "{err}");
        let err = from("[auth]\nrecent_sign_in = \"10m\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("recent_sign_in"), "{err}");
        for v in ["10m", "-1", "0", "100000"] {
            let err = from("", &[("AUTHCORE_RECENT_SIGN_IN", v)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("AUTHCORE_RECENT_SIGN_IN"), "{err}");
            assert!(err.contains("seconds"), "{err}");
        }
    }

    /// `[passwords]`'s self-service settings: defaults, the file, variables over it, and a
    /// sign-up page refused under a closed sign-up policy with what to set.
    #[test]
    fn password_self_service_from_file_and_variables() {
        let db = "[server]\ndatabase_url = \"sqlite://x.db\"\n";
        let c = from(&format!("{db}[passwords]\nenabled = true\n"), &[]).unwrap();
        assert!(!c.password_options.sign_up && c.password_options.verify_email);
        assert_eq!(c.password_options.policy.min_length(), 12);
        let file = format!(
            "{db}[auth]\nsign_up = \"open\"\n[passwords]\nenabled = true\nsign_up = true\nverify_email = false\nmin_length = 16\n"
        );
        let c = from(&file, &[]).unwrap();
        assert!(c.password_options.sign_up && !c.password_options.verify_email);
        assert_eq!(c.password_options.policy.min_length(), 16);
        let c = from(
            &file,
            &[
                ("AUTHCORE_PASSWORD_SIGN_UP", "off"),
                ("AUTHCORE_PASSWORD_VERIFY_EMAIL", "on"),
                ("AUTHCORE_PASSWORD_MIN_LENGTH", "14"),
            ],
        )
        .unwrap();
        assert!(!c.password_options.sign_up && c.password_options.verify_email);
        assert_eq!(c.password_options.policy.min_length(), 14);

        let err = from(
            &format!("{db}[passwords]\nenabled = true\nsign_up = true\n"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("AUTHCORE_SIGN_UP") && err.contains("open"),
            "{err}"
        );
        for bad in ["4", "ten"] {
            let err = from(db, &[("AUTHCORE_PASSWORD_MIN_LENGTH", bad)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("AUTHCORE_PASSWORD_MIN_LENGTH"), "{bad}: {err}");
        }
    }

    /// `[email] sign_in` and `[passkeys] enabled`, and their variables over them: on by
    /// default with a database, off without one and refused there when asked for; a bad
    /// value names its variable; an email-link first enrolment needs email sign-in.
    #[test]
    fn email_sign_in_and_passkeys_from_file_and_variables() {
        let db = "[server]\ndatabase_url = \"sqlite://x.db\"\n";
        let none = "[server]\ndatabase_url = \"none\"\n";
        let off = "[email]\nsign_in = false\n[passkeys]\nenabled = false\n";
        let on = [
            ("AUTHCORE_EMAIL_SIGN_IN", "on"),
            ("AUTHCORE_PASSKEYS", "on"),
        ];
        for (file, vars, expected) in [
            (db.to_owned(), &[][..], (true, true)),
            (none.to_owned(), &[][..], (false, false)),
            (format!("{db}{off}"), &[][..], (false, false)),
            (format!("{db}{off}"), &on[..], (true, true)),
            (
                format!("{db}[email]\nsign_in = false\n"),
                &[][..],
                (false, true),
            ),
            (
                db.to_owned(),
                &[("AUTHCORE_PASSKEYS", "off")][..],
                (true, false),
            ),
        ] {
            let c = from(&file, vars).unwrap();
            assert_eq!((c.email_sign_in, c.passkeys), expected, "{file} {vars:?}");
        }
        for (file, vars, named) in [
            (
                db.to_owned(),
                vec![("AUTHCORE_EMAIL_SIGN_IN", "no")],
                "AUTHCORE_EMAIL_SIGN_IN",
            ),
            (
                db.to_owned(),
                vec![("AUTHCORE_PASSKEYS", "true")],
                "AUTHCORE_PASSKEYS",
            ),
            (
                none.to_owned(),
                vec![("AUTHCORE_EMAIL_SIGN_IN", "on")],
                "AUTHCORE_DATABASE_URL",
            ),
            (
                format!("{none}[passkeys]\nenabled = true\n"),
                vec![],
                "AUTHCORE_DATABASE_URL",
            ),
            (
                format!("{db}[passkeys]\nenable = false\n"),
                vec![],
                "unknown field `enable`",
            ),
            (
                format!("{db}[email]\nsign_in = \"off\"\n"),
                vec![],
                "sign_in",
            ),
            (
                format!(
                    "{db}[email]\nsign_in = false\n[two_factor]\npolicy = \"required\"\nfirst_enrolment = \"email-link\"\n"
                ),
                vec![],
                "email sign-in is off",
            ),
        ] {
            let err = from(&file, &vars).unwrap_err().to_string();
            assert!(err.contains(named), "{file} {vars:?}: {err}");
        }
    }

    /// `[two_factor] first_enrolment` and `AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT`: the three
    /// choices, only where every user must enrol.
    #[test]
    fn first_enrolment_from_file_and_variable() {
        use authcore::two_factor::FirstEnrolment::{EmailLink, FirstFactor, Operator};
        let db = "[server]\ndatabase_url = \"sqlite://t.db\"\n";
        let who = |file: &str, vars: &[(&str, &str)]| {
            from(&format!("{db}{file}"), vars)
                .unwrap()
                .two_factor
                .unwrap()
                .first_enrolment
        };
        assert_eq!(who("", &[]), FirstFactor);
        for (text, expected) in [
            ("first-factor", FirstFactor),
            ("email-link", EmailLink),
            ("operator", Operator),
        ] {
            let file =
                format!("[two_factor]\npolicy = \"required\"\nfirst_enrolment = \"{text}\"\n");
            assert_eq!(who(&file, &[]), expected, "{text}");
            let vars = [
                ("AUTHCORE_TWO_FACTOR", "required"),
                ("AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT", text),
            ];
            assert_eq!(who("", &vars), expected, "{text}");
        }
        // The variable wins over the file.
        let file = "[two_factor]\npolicy = \"required\"\nfirst_enrolment = \"operator\"\n";
        let vars = [("AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT", "email-link")];
        assert_eq!(who(file, &vars), EmailLink);
        // The default is accepted with any policy; the others need `required`.
        let file = "[two_factor]\nfirst_enrolment = \"first-factor\"\n";
        assert_eq!(who(file, &[]), FirstFactor);
        let err = from(
            &format!("{db}[two_factor]\npolicy = \"optional\"\nfirst_enrolment = \"email-link\"\n"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("first_enrolment") && err.contains("required"),
            "{err}"
        );

        let err = from(
            &format!("{db}[two_factor]\npolicy = \"required\"\nfirst_enrolment = \"admin\"\n"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("first_enrolment") && err.contains("line 5"),
            "{err}"
        );
        assert!(
            err.contains("`first-factor`, `email-link` or `operator`"),
            "{err}"
        );
        let err = from(
            db,
            &[
                ("AUTHCORE_TWO_FACTOR", "required"),
                ("AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT", "email"),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT"), "{err}");
    }

    /// `[users_file] path` and `AUTHCORE_USERS_FILE` (which wins, and blank stands for no
    /// users file); with one the demo user is off, and without one the demo user's default
    /// password is refused off loopback.
    #[test]
    fn users_file_and_the_demo_user() {
        let dir =
            std::env::temp_dir().join(format!("authcore-config-users-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let hash = "$2b$04$b/LcjGM9OmyQFGwit63qlespAOcaiuwiMLDGW8bMk90qMLcChkMoW";
        let (a, b) = (dir.join("a.yml"), dir.join("b.yml"));
        std::fs::write(&a, format!("users:\n  one:\n    password: \"{hash}\"\n")).unwrap();
        std::fs::write(
            &b,
            format!("users:\n  one:\n    password: \"{hash}\"\n  two:\n    password: \"{hash}\"\n"),
        )
        .unwrap();
        let file = format!("[users_file]\npath = \"{}\"\n", a.display());
        let c = from(&file, &[]).unwrap();
        let users = c.users_file.as_ref().unwrap();
        assert_eq!((users.path(), users.len()), (a.as_path(), 1));
        assert!(!c.demo_user_enabled());
        assert_eq!(c.user_sources().len(), 1);
        let c = from(&file, &[("AUTHCORE_USERS_FILE", b.to_str().unwrap())]).unwrap();
        assert_eq!(c.users_file.as_ref().unwrap().len(), 2);
        let c = from(&file, &[("AUTHCORE_USERS_FILE", " ")]).unwrap();
        assert!(c.users_file.is_none() && c.demo_user_enabled());

        let err = from("[users_file]\npaht = \"x\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("paht") && err.contains("line 2"), "{err}");
        let missing = dir.join("missing.yml");
        let err = from("", &[("AUTHCORE_USERS_FILE", missing.to_str().unwrap())])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing.yml") && err.contains("AUTHCORE_USERS_FILE"),
            "{err}"
        );

        // The default demo password only on loopback; a password or a users file lifts it.
        for addr in ["0.0.0.0:3000", "[::]:3000", "192.0.2.1:3000"] {
            let err = from("", &[("AUTHCORE_ADDR", addr)]).unwrap_err();
            assert!(
                matches!(err, ServerConfigError::DefaultDemoPassword { .. }),
                "{addr}"
            );
            assert!(err.to_string().contains("AUTHCORE_DEMO_PASSWORD"), "{err}");
            from(
                "",
                &[
                    ("AUTHCORE_ADDR", addr),
                    ("AUTHCORE_DEMO_PASSWORD", "chosen"),
                ],
            )
            .unwrap();
            from(&file, &[("AUTHCORE_ADDR", addr)]).unwrap();
        }
        from("", &[("AUTHCORE_ADDR", "[::1]:3000")]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

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
    /// `[ldap]` and the `AUTHCORE_LDAP_*` variables over it build the directory source; a
    /// bad value names its key; the service password shows nowhere.
    #[test]
    fn ldap_from_the_file_and_the_environment() {
        assert!(from("", &[]).unwrap().ldap.is_none());
        assert!(
            from("", &[("AUTHCORE_LDAP_URL", " ")])
                .unwrap()
                .ldap
                .is_none()
        );
        let file = r#"
[ldap]
url = "ldap://127.0.0.1:3389"
bind_dn = "cn=authcore,dc=example,dc=org"
bind_password = "file-service-password"
base_dn = "dc=example,dc=org"
group_base_dn = "ou=groups,dc=example,dc=org"
"#;
        let parsed = ConfigFile::parse(file).unwrap();
        assert!(!format!("{parsed:?}").contains("file-service-password"));
        let source = from(file, &[]).unwrap().ldap.unwrap();
        let shown = format!("{source:?}");
        assert!(shown.contains("ldap://127.0.0.1:3389"), "{shown}");
        assert!(shown.contains("ou=groups"), "{shown}");
        assert!(!shown.contains("file-service-password"), "{shown}");

        let vars = [
            ("AUTHCORE_LDAP_URL", "ldap://127.0.0.1:4389"),
            ("AUTHCORE_LDAP_BIND_DN", "cn=other,dc=example,dc=org"),
            ("AUTHCORE_LDAP_BIND_PASSWORD", "env-service-password"),
            ("AUTHCORE_LDAP_BASE_DN", "ou=people,dc=example,dc=org"),
        ];
        for file in [file, ""] {
            let shown = format!("{:?}", from(file, &vars).unwrap().ldap.unwrap());
            assert!(
                shown.contains("4389") && shown.contains("cn=other"),
                "{shown}"
            );
            assert!(shown.contains("ou=people"), "{shown}");
            assert!(!shown.contains("service-password"), "{shown}");
        }

        for (file, vars, expected) in [
            // Turned on by the variable alone: the other keys are needed too.
            (
                "",
                &[("AUTHCORE_LDAP_URL", "ldap://h")][..],
                "ldap bind_dn is not set",
            ),
            (file, &[("AUTHCORE_LDAP_URL", "http://h")][..], "ldap url"),
            (
                file,
                &[("AUTHCORE_LDAP_START_TLS", "maybe")][..],
                "AUTHCORE_LDAP_START_TLS",
            ),
            (
                file,
                &[("AUTHCORE_LDAP_BIND_PASSWORD", "")][..],
                "ldap bind_password is empty",
            ),
        ] {
            let err = from(file, vars).expect_err("refused").to_string();
            assert!(err.contains(expected), "{err}");
        }
        let err = from("[ldap]\nurl = \"ldap://h\"\nbase = \"x\"\n", &[])
            .expect_err("refused")
            .to_string();
        assert!(err.contains("unknown field `base`"), "{err}");
    }
}
