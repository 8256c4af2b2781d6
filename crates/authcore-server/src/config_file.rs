//! The standalone server's configuration file (TOML), deserialized into typed values
//! ([`ConfigFile`]); [`ServerConfig::resolve`](crate::ServerConfig::resolve) puts the
//! environment on top. Each setting has an environment variable, and a variable that is set
//! wins over the file, so one file can serve several deployments and secrets can stay out
//! of it.
//!
//! ```toml
//! [server]
//! addr = "127.0.0.1:3000"                           # AUTHCORE_ADDR
//! database_url = "sqlite://authcore.db?mode=rwc"    # AUTHCORE_DATABASE_URL ("none": JWT only)
//! demo_password = "change me"                       # AUTHCORE_DEMO_PASSWORD
//! metrics_addr = "127.0.0.1:9464"                   # AUTHCORE_METRICS_ADDR (Prometheus)
//! log_format = "json"                               # AUTHCORE_LOG_FORMAT (text | json)
//! header_read_timeout = 10                          # AUTHCORE_HEADER_READ_TIMEOUT (seconds)
//! request_timeout = 30                              # AUTHCORE_REQUEST_TIMEOUT (seconds)
//! max_connections = 10000                           # AUTHCORE_MAX_CONNECTIONS
//! database_max_connections = 10                     # AUTHCORE_DATABASE_MAX_CONNECTIONS
//! database_timeout = 5                              # AUTHCORE_DATABASE_TIMEOUT (seconds)
//! database_direct_reads = true                      # AUTHCORE_DATABASE_DIRECT_READS (on | off)
//! workers = 2                                       # AUTHCORE_WORKERS (default: the CPUs)
//!
//! [auth]
//! secret = "…"                                      # AUTH_SECRET
//! url = "https://auth.example.com/auth"             # AUTH_URL
//! trust_host = true                                 # AUTH_TRUST_HOST
//! allowed_hosts = ["auth.example.com"]              # AUTHCORE_ALLOWED_HOSTS
//! recent_sign_in = 600                              # AUTHCORE_RECENT_SIGN_IN (seconds)
//! sign_up = "closed"                                # AUTHCORE_SIGN_UP: "open", "closed", "invite" or ["example.com"]
//!
//! [email]
//! smtp_url = "smtps://user:pass@smtp.example.com"   # SMTP_URL
//! from = "Example <no-reply@example.com>"           # AUTHCORE_EMAIL_FROM
//! sign_in = false                                   # AUTHCORE_EMAIL_SIGN_IN: magic links (on | off); mails go out either way
//!
//! [passkeys]
//! enabled = false                                   # AUTHCORE_PASSKEYS: on (default with a database) | off
//!
//! [providers.github]                                # AUTH_GITHUB_ID / AUTH_GITHUB_SECRET
//! id = "…"                                          # (any catalogue id, and `oidc`)
//! secret = "…"
//!
//! [providers.keycloak]                              # a preset's settings by key:
//! id = "…"                                          # issuer → AUTH_KEYCLOAK_ISSUER
//! secret = "…"
//! issuer = "https://kc.example.com/realms/main"
//!
//! [ldap]                                            # AUTHCORE_LDAP_URL …
//! url = "ldaps://ldap.example.com"                  # (docs/manual/ldap.md)
//! bind_dn = "cn=authcore,ou=services,dc=example,dc=com"
//! base_dn = "dc=example,dc=com"
//! [users_file]
//! path = "users.yml"                                # AUTHCORE_USERS_FILE (Authelia's format)
//!
//! [passwords]
//! enabled = true                                    # AUTHCORE_PASSWORDS: password accounts in the database
//! sign_up = true                                    # AUTHCORE_PASSWORD_SIGN_UP: the sign-up page (needs [auth] sign_up)
//! verify_email = true                               # AUTHCORE_PASSWORD_VERIFY_EMAIL: confirm the address first
//! min_length = 12                                   # AUTHCORE_PASSWORD_MIN_LENGTH
//!
//! [admin]                                           # docs/manual/operating.md
//! users = ["ops@example.com"]                       # AUTHCORE_ADMINS: administrators by id or verified address
//! organization = "ops"                              # AUTHCORE_ADMIN_ORGANIZATION: members with authcore:admin
//! impersonation_minutes = 30                        # AUTHCORE_ADMIN_IMPERSONATION_MINUTES
//!
//! [organizations]                                   # docs/manual/organizations-server.md
//! enabled = true                                    # AUTHCORE_ORGANIZATIONS: organizations, roles, invitations (on | off)
//! users_create = false                              # AUTHCORE_ORGANIZATIONS_USERS_CREATE: users make their own (on | off)
//! invitation_days = 7                               # AUTHCORE_ORGANIZATIONS_INVITATION_DAYS (1 to 365)
//! [organizations.roles]                             # roles of your own, or permissions added to admin / member
//! billing = ["billing:read", "billing:write"]
//!
//! [audit]                                           # docs/manual/audit-server.md
//! store = true                                      # AUTHCORE_AUDIT_STORE: keep the records in the database (on | off)
//! retention_days = 365                              # AUTHCORE_AUDIT_RETENTION_DAYS (none: kept for ever)
//! json_lines = "stdout"                             # AUTHCORE_AUDIT_JSON_LINES: "stdout" or a file's path
//! [[audit.webhooks]]                                # AUTHCORE_AUDIT_WEBHOOK_URL / AUTHCORE_AUDIT_WEBHOOK_SECRET: one more
//! url = "https://siem.example.com/hooks/authcore"
//! secret_env = "SIEM_WEBHOOK_SECRET"                # or secret = "…" (at least 32 bytes)
//!
//! [theme]
//! color_scheme = "dark"                             # auto | light | dark
//! brand_color = "#0b5ed7"
//! ```
//!
//! The complete list is `authcore.example.toml` at the root of the repository.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use authcore::env::{AuthJsSettings, Env};
use authcore::providers::catalog::{self, SettingValues};
use authcore::types::{PagesOptions, Theme};
use serde::Deserialize;

use crate::config_value as value;
pub use crate::config_value::SecretValue;
use crate::ops::LogFormat;

/// The file's contents. Unknown keys are refused, so a typo is reported, not ignored.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConfigFile {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    /// `[auth]`.
    #[serde(default)]
    pub auth: AuthSection,
    /// `[email]`.
    #[serde(default)]
    pub email: EmailSection,
    /// `[providers.<id>]`: any catalogue preset by its Auth.js id, and `oidc`.
    #[serde(default)]
    pub providers: ProvidersSection,
    /// `[theme]` of the built-in pages (`color_scheme`, `brand_color`, `button_text`,
    /// `logo`: authcore's `Theme`, so a new theme option needs no edit here).
    #[serde(default)]
    pub theme: Theme,
    /// `[pages]`: custom page paths (`sign_in`, `sign_out`, `error`, `verify_request`,
    /// `new_user`: authcore's `PagesOptions`).
    #[serde(default)]
    pub pages: PagesOptions,
    /// `[gateway]`: the single sign-on gateway (rules, header names, keys …).
    pub gateway: Option<authcore_gateway::GatewaySection>,
    /// `[rate_limits]`: the brute-force limits, each adjustable.
    pub rate_limits: Option<RateLimitsSection>,
    /// `[two_factor]`: second factors (`policy`, `issuer`).
    #[serde(default)]
    pub two_factor: TwoFactorSection,
    /// `[oidc_provider]`: authcore as an OpenID Provider for other applications (signing
    /// keys, clients). Each `[[oidc_provider.clients]]` table is the provider crate's
    /// `ClientConfig`, keys as written, among them who may use the app: `allowed_groups`
    /// (groups of the `groups` claim), `allowed_roles` (`"role"` in any organization,
    /// `"slug:role"` in one) and `allowed_organizations` (slugs); with any set, a user
    /// matching none gets `access_denied` and no refreshed token.
    pub oidc_provider: Option<authcore_oidc_provider::ProviderSection>,
    /// `[ldap]`: directory users sign in with their directory password
    /// (docs/manual/ldap.md; the service account's password is redacted by `Debug`).
    pub ldap: Option<authcore_ldap::LdapSettings>,
    /// `[users_file]`: a users file (Authelia's format) whose users sign in with a password.
    pub users_file: Option<UsersFileSection>,
    /// `[passwords]`: password accounts kept in the database.
    pub passwords: Option<PasswordsSection>,
    /// `[passkeys]`: passkeys on (the default with a database) or off.
    pub passkeys: Option<PasskeysSection>,
    /// `[organizations]`: organizations with members, roles and invitations.
    pub organizations: Option<OrganizationsSection>,
    /// `[admin]`: administrators.
    pub admin: Option<AdminSection>,
    /// `[audit]`: the audit log: kept in the database, and sent as JSON lines and to
    /// webhooks.
    #[serde(default)]
    pub audit: AuditSection,
}

/// `[admin]`: who the administrators are — `users` (ids or verified email addresses, as
/// `AUTHCORE_ADMINS`), and `organization` (the slug of an organization whose members with
/// the `authcore:admin` permission are administrators: its owners; as
/// `AUTHCORE_ADMIN_ORGANIZATION`) — and `impersonation_minutes`, the longest an
/// impersonation lasts (as `AUTHCORE_ADMIN_IMPERSONATION_MINUTES`; default 30, at most
/// 480). Off without the section.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AdminSection {
    /// Administrators by id or verified email address.
    #[serde(default)]
    pub users: Vec<String>,
    /// The administrators' organization, by slug.
    pub organization: Option<String>,
    /// The longest an impersonation lasts.
    #[serde(default, deserialize_with = "value::de_impersonation_minutes")]
    pub impersonation_minutes: Option<Duration>,
}

/// `[audit]`: whether the audit log is kept in the database (`store`, on by default with a
/// database), how long (`retention_days`), and where else its records go as they are made:
/// JSON lines (`json_lines = "stdout"` or a file's path) and `[[audit.webhooks]]`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuditSection {
    /// Whether records are kept in the database (as `AUTHCORE_AUDIT_STORE`).
    pub store: Option<bool>,
    /// Days a stored record is kept (as `AUTHCORE_AUDIT_RETENTION_DAYS`; none: for ever).
    #[serde(default, deserialize_with = "value::de_retention_days")]
    pub retention_days: Option<Duration>,
    /// `"stdout"` or the path of a file the records are appended to, one JSON object a line
    /// (as `AUTHCORE_AUDIT_JSON_LINES`).
    pub json_lines: Option<String>,
    /// Webhooks each record is posted to, signed.
    #[serde(default)]
    pub webhooks: Vec<WebhookSection>,
}

/// `[[audit.webhooks]]`: a URL each audit record is posted to, signed with HMAC-SHA256 by
/// `secret`, or by the value of the variable `secret_env` names.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WebhookSection {
    /// Where records are posted (`http://` or `https://`).
    pub url: Option<String>,
    /// The signing secret (at least 32 bytes).
    pub secret: Option<SecretValue>,
    /// The name of the environment variable holding the signing secret instead.
    pub secret_env: Option<String>,
}

/// `[organizations]`: `enabled = true` (`AUTHCORE_ORGANIZATIONS=on`) turns on organizations
/// with members, roles and permissions, and invitations by mail, kept in the database;
/// `[organizations.roles]` defines roles (`billing = ["billing:read", "billing:write"]`)
/// or adds permissions to the built-in `admin` and `member`. Off without the section.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OrganizationsSection {
    /// Whether organizations are on (as `AUTHCORE_ORGANIZATIONS`).
    pub enabled: Option<bool>,
    /// Whether any signed-in user may make an organization (as
    /// `AUTHCORE_ORGANIZATIONS_USERS_CREATE`; on by default); off, an operator makes them
    /// (`authcore-server create-organization`).
    pub users_create: Option<bool>,
    /// How long an invitation can be accepted, in days (as
    /// `AUTHCORE_ORGANIZATIONS_INVITATION_DAYS`; default 7, at most 365).
    #[serde(default, deserialize_with = "value::de_invitation_days")]
    pub invitation_days: Option<Duration>,
    /// Role name → its permissions (`resource:action`, `resource:*` or `*`).
    #[serde(default)]
    pub roles: BTreeMap<String, Vec<String>>,
}

/// `[passwords]`: `enabled = true` (`AUTHCORE_PASSWORDS=on`) lets users sign in with their
/// email address and a password kept (as an argon2id hash) in the database, at
/// `/auth/callback/password`; an operator gives a user one with `authcore-server add-user`.
/// It needs a database, and turns the demo user off.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PasswordsSection {
    /// Whether password accounts sign in (as `AUTHCORE_PASSWORDS`).
    pub enabled: Option<bool>,
    /// Whether visitors may make their own account at `/auth/password/signup` (as
    /// `AUTHCORE_PASSWORD_SIGN_UP`; off by default), within `[auth] sign_up`.
    pub sign_up: Option<bool>,
    /// Whether a new account confirms its address by a mailed link before its first
    /// sign-in (as `AUTHCORE_PASSWORD_VERIFY_EMAIL`; on by default).
    pub verify_email: Option<bool>,
    /// The shortest new password, in characters (as `AUTHCORE_PASSWORD_MIN_LENGTH`;
    /// default 12, at least 8).
    #[serde(default, deserialize_with = "value::de_count")]
    pub min_length: Option<usize>,
}

/// `[users_file]`: `path`, the users file (`AUTHCORE_USERS_FILE`), relative to the working
/// directory. With it, its users sign in at `/auth/callback/users-file` and the demo user is
/// off.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct UsersFileSection {
    /// The file's path (as `AUTHCORE_USERS_FILE`).
    pub path: Option<std::path::PathBuf>,
}

/// `[two_factor]`: `policy = "optional"` (the default with a database: users who enrolled
/// are asked), `"required"` (every user enrols at sign-in) or `"off"`; `issuer`, the name
/// authenticator apps show (default: the host of `AUTH_URL`); `first_enrolment`, who may
/// enrol a user's first second factor under `required` (`"first-factor"`, `"email-link"`
/// or `"operator"`).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TwoFactorSection {
    /// `optional`, `required` or `off` (as `AUTHCORE_TWO_FACTOR`).
    pub policy: Option<String>,
    /// The issuer shown in authenticator apps.
    pub issuer: Option<String>,
    /// `first-factor`, `email-link` or `operator` (as
    /// `AUTHCORE_TWO_FACTOR_FIRST_ENROLMENT`).
    #[serde(default, deserialize_with = "value::de_first_enrolment")]
    pub first_enrolment: Option<authcore::two_factor::FirstEnrolment>,
}

/// `[rate_limits]`: `enabled = false` turns them all off (as `AUTHCORE_RATE_LIMITS=off`);
/// each limit (`credentials_per_identifier`, `credentials_per_client`,
/// `emails_per_address`, `emails_per_client`, `requests_per_client`) takes
/// `{ limit = 5, window = 900, lockout = 900 }` (seconds; lock-out defaults to the window)
/// or `false` to turn that one off; unnamed ones keep the recommended values.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RateLimitsSection {
    /// All limits on (default) or off.
    pub enabled: Option<bool>,
    /// Failed credentials sign-ins per identifier.
    pub credentials_per_identifier: Option<LimitSetting>,
    /// Failed credentials sign-ins per client address.
    pub credentials_per_client: Option<LimitSetting>,
    /// Magic-link mails per address.
    pub emails_per_address: Option<LimitSetting>,
    /// Magic-link mails per client address.
    pub emails_per_client: Option<LimitSetting>,
    /// `POST` and `webauthn-options` requests per client address.
    pub requests_per_client: Option<LimitSetting>,
}

/// One limit of `[rate_limits]`: a table, or `false` for off.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum LimitSetting {
    /// `false`: off (`true` keeps the recommended value).
    Switch(bool),
    /// `{ limit, window, lockout }`.
    Limit {
        /// Events per window.
        limit: u32,
        /// Seconds.
        window: f64,
        /// Seconds locked after going over (default: the window).
        lockout: Option<f64>,
    },
}

impl RateLimitsSection {
    /// `base` with this section's changes.
    pub fn apply(&self, base: authcore::ratelimit::RateLimits) -> authcore::ratelimit::RateLimits {
        use authcore::ratelimit::{RateLimit, RateLimits};
        if self.enabled == Some(false) {
            return RateLimits::default();
        }
        let mut limits = if base.any() {
            base
        } else {
            RateLimits::recommended()
        };
        let seconds = |s: f64| std::time::Duration::from_secs_f64(s.clamp(0.001, 31_536_000.0));
        let set = |slot: &mut Option<RateLimit>, setting: &Option<LimitSetting>| match setting {
            None | Some(LimitSetting::Switch(true)) => {}
            Some(LimitSetting::Switch(false)) => *slot = None,
            Some(LimitSetting::Limit {
                limit,
                window,
                lockout,
            }) => {
                let rule = RateLimit::new(*limit, seconds(*window));
                *slot = Some(match lockout {
                    Some(l) => rule.lockout(seconds(*l)),
                    None => rule,
                });
            }
        };
        set(
            &mut limits.credentials_per_identifier,
            &self.credentials_per_identifier,
        );
        set(
            &mut limits.credentials_per_client,
            &self.credentials_per_client,
        );
        set(&mut limits.emails_per_address, &self.emails_per_address);
        set(&mut limits.emails_per_client, &self.emails_per_client);
        set(&mut limits.requests_per_client, &self.requests_per_client);
        limits
    }
}

/// `[server]`. Values are checked as they are read (the error names the key and line).
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerSection {
    /// Listen address (`AUTHCORE_ADDR`).
    #[serde(default, deserialize_with = "value::de_socket_addr")]
    pub addr: Option<SocketAddr>,
    /// Database URL, or `none` (`AUTHCORE_DATABASE_URL`).
    pub database_url: Option<String>,
    /// The demo user's password (`AUTHCORE_DEMO_PASSWORD`).
    pub demo_password: Option<SecretValue>,
    /// Where Prometheus metrics are served (`AUTHCORE_METRICS_ADDR`); none: not kept.
    #[serde(default, deserialize_with = "value::de_socket_addr")]
    pub metrics_addr: Option<SocketAddr>,
    /// `text` or `json` (`AUTHCORE_LOG_FORMAT`).
    #[serde(default, deserialize_with = "value::de_log_format")]
    pub log_format: Option<LogFormat>,
    /// Seconds allowed for a request head (`AUTHCORE_HEADER_READ_TIMEOUT`).
    #[serde(default, deserialize_with = "value::de_seconds")]
    pub header_read_timeout: Option<Duration>,
    /// Seconds allowed for an answer (`AUTHCORE_REQUEST_TIMEOUT`).
    #[serde(default, deserialize_with = "value::de_seconds")]
    pub request_timeout: Option<Duration>,
    /// Open connections at most (`AUTHCORE_MAX_CONNECTIONS`).
    #[serde(default, deserialize_with = "value::de_count")]
    pub max_connections: Option<usize>,
    /// Database pool size (`AUTHCORE_DATABASE_MAX_CONNECTIONS`).
    #[serde(default, deserialize_with = "value::de_count")]
    pub database_max_connections: Option<usize>,
    /// Seconds allowed for one database operation (`AUTHCORE_DATABASE_TIMEOUT`).
    #[serde(default, deserialize_with = "value::de_seconds")]
    pub database_timeout: Option<Duration>,
    /// Session reads on connections of their own (`AUTHCORE_DATABASE_DIRECT_READS`).
    pub database_direct_reads: Option<bool>,
    /// Threads serving requests (`AUTHCORE_WORKERS`).
    #[serde(default, deserialize_with = "value::de_workers")]
    pub workers: Option<usize>,
    /// Redis for the rate-limit counts of every instance (`AUTHCORE_REDIS_URL`; may hold a
    /// password).
    pub redis_url: Option<SecretValue>,
}

/// `[auth]`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuthSection {
    /// The secret (`AUTH_SECRET`).
    pub secret: Option<SecretValue>,
    /// The public URL of the auth routes (`AUTH_URL`).
    pub url: Option<String>,
    /// Trust `Host` / `X-Forwarded-*` (`AUTH_TRUST_HOST`).
    pub trust_host: Option<bool>,
    /// The request hosts to answer (`AUTHCORE_ALLOWED_HOSTS`).
    pub allowed_hosts: Option<Vec<String>>,
    /// Proxies whose `X-Forwarded-For` names the client (`AUTHCORE_TRUSTED_PROXIES`).
    pub trusted_proxies: Option<Vec<String>>,
    /// Seconds since the sign-in within which sensitive changes are allowed
    /// (`AUTHCORE_RECENT_SIGN_IN`).
    #[serde(default, deserialize_with = "value::de_seconds")]
    pub recent_sign_in: Option<Duration>,
    /// Who may become a user by signing in (`AUTHCORE_SIGN_UP`): `"open"`, `"closed"`,
    /// `"invite"` (invited addresses only), or a list of email domains.
    pub sign_up: Option<SignUpSetting>,
}

/// `[auth] sign_up`: `"open"`, `"closed"`, `"invite"` or `["example.com", …]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SignUpSetting {
    /// `"open"`, `"closed"` or `"invite"`.
    Word(String),
    /// Email domains whose addresses may sign up.
    Domains(Vec<String>),
}

impl AuthSection {
    /// `secret`, `url` and `trust_host`: what authcore reads from `AUTH_SECRET`, `AUTH_URL`
    /// and `AUTH_TRUST_HOST` where those are not set.
    pub fn auth_js_settings(&self) -> AuthJsSettings {
        AuthJsSettings {
            secret: self.secret.as_ref().map(|s| s.expose().to_owned()),
            url: self.url.clone(),
            trust_host: self.trust_host,
        }
    }
}

/// `[email]`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EmailSection {
    /// SMTP relay (`SMTP_URL`, may hold a password); without it magic links are printed.
    pub smtp_url: Option<SecretValue>,
    /// Sender address (`AUTHCORE_EMAIL_FROM`).
    pub from: Option<String>,
    /// Whether users sign in with a magic link (`AUTHCORE_EMAIL_SIGN_IN`; on by default):
    /// with `false` the mails of password accounts and the security notices still go out,
    /// but the email provider is no way to sign in.
    pub sign_in: Option<bool>,
}

/// `[passkeys]`: `enabled = false` (`AUTHCORE_PASSKEYS=off`) leaves passkeys out: no
/// passkey sign-in, sign-up or registration. On by default with a database, where they are
/// stored.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PasskeysSection {
    /// Whether passkeys sign in (as `AUTHCORE_PASSKEYS`).
    pub enabled: Option<bool>,
}

/// `[providers.<id>]`: any preset of authcore's catalogue by its Auth.js id
/// (`[providers.discord]`, `[providers.microsoft-entra-id]` …), and `[providers.oidc]` for
/// any OpenID Connect issuer. Every section has the same keys; an unknown id is refused with
/// the list of known ones.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvidersSection(pub BTreeMap<String, ProviderSection>);

impl<'de> Deserialize<'de> for ProvidersSection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let sections = BTreeMap::<String, ProviderSection>::deserialize(d)?;
        for (id, section) in &sections {
            let allowed: Vec<&str> = if id == "oidc" {
                vec!["issuer", "name"]
            } else if let Ok(entry) = catalog::entry(id) {
                entry.settings.iter().map(|s| s.key).collect()
            } else {
                let mut known: Vec<&str> = catalog::entries().iter().map(|e| e.id).collect();
                known.push("oidc");
                return Err(serde::de::Error::custom(format!(
                    "unknown provider [providers.{id}]; known: {}",
                    known.join(", ")
                )));
            };
            if let Some(key) = section
                .settings
                .keys()
                .find(|k| !allowed.contains(&k.as_str()))
            {
                let hint = if key == "name" {
                    " (`name` is only for [providers.oidc]; the presets carry their brand's)"
                        .to_owned()
                } else if allowed.is_empty() {
                    "; it takes only `id` and `secret`".to_owned()
                } else {
                    format!("; it takes `id`, `secret`, `{}`", allowed.join("`, `"))
                };
                return Err(serde::de::Error::custom(format!(
                    "[providers.{id}]: unknown key `{key}`{hint}"
                )));
            }
        }
        Ok(ProvidersSection(sections))
    }
}

impl ProvidersSection {
    /// The values of section `id` for `keys`, each under its variable `var(key)` in `env`:
    /// a variable that is set wins, even when blank.
    pub fn values_under<'k>(
        &self,
        id: &str,
        keys: impl IntoIterator<Item = &'k str>,
        var: impl Fn(&str) -> String,
        env: &Env,
    ) -> SettingValues {
        let file = self
            .0
            .get(id)
            .map(ProviderSection::values)
            .unwrap_or_default();
        keys.into_iter()
            .filter_map(|k| env.get(&var(k)).or(file.get(k)).map(|v| (k, v.to_owned())))
            .fold(SettingValues::default(), |values, (k, v)| values.with(k, v))
    }
}

/// One `[providers.<id>]` section: the provider's client id and secret (under
/// `AUTH_<ID>_ID`, `_SECRET`) and the preset's settings by key (`issuer` under
/// `AUTH_<ID>_ISSUER`, `account_id` under `AUTH_<ID>_ACCOUNT_ID` …; for `oidc`, `issuer`
/// and `name`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ProviderSection {
    /// Client id.
    pub id: String,
    /// Client secret.
    pub secret: SecretValue,
    /// The other keys: the preset's settings (checked against the catalogue; an API key
    /// may be among them, so `Debug` redacts them all).
    #[serde(flatten)]
    pub settings: BTreeMap<String, SecretValue>,
}

impl ProviderSection {
    /// The section as the values of its preset's settings by key (`id`, `secret`, …).
    pub fn values(&self) -> SettingValues {
        self.settings.iter().fold(
            SettingValues::default()
                .with("id", self.id.as_str())
                .with("secret", self.secret.expose()),
            |values, (key, value)| values.with(key.as_str(), value.expose()),
        )
    }
}

/// Why the file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigFileError {
    /// It could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not valid TOML of this shape (the message names the key and line).
    #[error("{path}: {source}")]
    Parse {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: toml::de::Error,
    },
}

impl ConfigFile {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|source| ConfigFileError::Parse {
            path: path.display().to_string(),
            source,
        })
    }

    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }
}
