//! The standalone server's configuration file (TOML). Each setting has an environment
//! variable, and a variable that is set wins over the file, so one file can serve several
//! deployments and secrets can stay out of it.
//!
//! ```toml
//! [server]
//! addr = "127.0.0.1:3000"                           # AUTHCORE_ADDR
//! database_url = "sqlite://authcore.db?mode=rwc"    # AUTHCORE_DATABASE_URL ("none": JWT only)
//! demo_password = "change me"                       # AUTHCORE_DEMO_PASSWORD
//!
//! [auth]
//! secret = "…"                                      # AUTH_SECRET
//! url = "https://auth.example.com/auth"             # AUTH_URL
//! trust_host = true                                 # AUTH_TRUST_HOST
//!
//! [email]
//! smtp_url = "smtps://user:pass@smtp.example.com"   # SMTP_URL
//! from = "Example <no-reply@example.com>"           # AUTHCORE_EMAIL_FROM
//!
//! [providers.github]                                # AUTH_GITHUB_ID / AUTH_GITHUB_SECRET
//! id = "…"
//! secret = "…"
//!
//! [theme]
//! color_scheme = "dark"                             # auto | light | dark
//! brand_color = "#0b5ed7"
//! ```
//!
//! The complete list is `authcore.example.toml` at the root of the repository.

use std::path::Path;

use authcore::env::Env;
use authcore::types::{PagesOptions, Theme};
use serde::Deserialize;

/// A secret read from the file (secret, client secrets, SMTP URL with its password, demo
/// password): its `Debug` prints `[redacted]`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct SecretValue(String);

impl SecretValue {
    /// The value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The file's contents. Unknown keys are refused, so a typo is reported, not ignored.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
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
    /// `[providers.github]`, `[providers.google]`, `[providers.oidc]`.
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
}

/// `[server]`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerSection {
    /// Listen address (`AUTHCORE_ADDR`).
    pub addr: Option<String>,
    /// Database URL, or `none` (`AUTHCORE_DATABASE_URL`).
    pub database_url: Option<String>,
    /// The demo user's password (`AUTHCORE_DEMO_PASSWORD`).
    pub demo_password: Option<SecretValue>,
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
}

/// `[providers.*]`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProvidersSection {
    /// GitHub (`AUTH_GITHUB_ID`, `AUTH_GITHUB_SECRET`).
    pub github: Option<ClientSection>,
    /// Google (`AUTH_GOOGLE_ID`, `AUTH_GOOGLE_SECRET`).
    pub google: Option<ClientSection>,
    /// Any OpenID Connect issuer (`AUTH_OIDC_ISSUER`, `_ID`, `_SECRET`, `_NAME`).
    pub oidc: Option<OidcSection>,
}

/// An OAuth client.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientSection {
    /// Client id.
    pub id: String,
    /// Client secret.
    pub secret: SecretValue,
}

/// `[providers.oidc]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OidcSection {
    /// Issuer URL.
    pub issuer: String,
    /// Client id.
    pub id: String,
    /// Client secret.
    pub secret: SecretValue,
    /// Button name.
    pub name: Option<String>,
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

    /// The settings as the environment variables they stand for, under `process` (which
    /// wins where both set a variable).
    pub fn env_under(&self, process: Env) -> Env {
        fn secret(v: &Option<SecretValue>) -> Option<&str> {
            v.as_ref().map(SecretValue::expose)
        }
        let mut pairs: Vec<(&str, String)> = Vec::new();
        let mut put = |key: &'static str, value: Option<&str>| {
            if let Some(v) = value {
                pairs.push((key, v.to_owned()));
            }
        };
        put("AUTHCORE_ADDR", self.server.addr.as_deref());
        put("AUTHCORE_DATABASE_URL", self.server.database_url.as_deref());
        put("AUTHCORE_DEMO_PASSWORD", secret(&self.server.demo_password));
        put("AUTH_SECRET", secret(&self.auth.secret));
        put("AUTH_URL", self.auth.url.as_deref());
        put("SMTP_URL", secret(&self.email.smtp_url));
        put("AUTHCORE_EMAIL_FROM", self.email.from.as_deref());
        if let Some(g) = &self.providers.github {
            put("AUTH_GITHUB_ID", Some(&g.id));
            put("AUTH_GITHUB_SECRET", Some(g.secret.expose()));
        }
        if let Some(g) = &self.providers.google {
            put("AUTH_GOOGLE_ID", Some(&g.id));
            put("AUTH_GOOGLE_SECRET", Some(g.secret.expose()));
        }
        if let Some(o) = &self.providers.oidc {
            put("AUTH_OIDC_ISSUER", Some(&o.issuer));
            put("AUTH_OIDC_ID", Some(&o.id));
            put("AUTH_OIDC_SECRET", Some(o.secret.expose()));
            put("AUTH_OIDC_NAME", o.name.as_deref());
        }
        if let Some(trust) = self.auth.trust_host {
            pairs.push(("AUTH_TRUST_HOST", trust.to_string()));
        }
        Env::from_pairs(pairs).overlay(process)
    }
}
