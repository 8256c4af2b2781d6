//! Environment defaults (Auth.js `setEnvDefaults`) and `createActionURL` (`lib/utils/env.ts`).
//!
//! ```
//! use authcore::env::Env;
//! use authcore::{AuthConfig, providers::CredentialsProvider};
//! let env = Env::from_pairs([("AUTH_SECRET", "a long random secret, 32 characters or more"), ("AUTH_URL", "https://example.com/api/auth")]);
//! let config = AuthConfig::builder()
//!     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
//!     .env_defaults(&env)
//!     .build()
//!     .unwrap();
//! assert_eq!(config.base_path(), "/api/auth");
//! ```

use std::collections::HashMap;

use http::HeaderMap;

use crate::logger::WarningCode;

/// A snapshot of environment variables. Its `Debug` output lists the names only: the
/// values include secrets (`AUTH_SECRET`, client secrets, API keys).
#[derive(Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.vars.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("Env").field("names", &names).finish()
    }
}

impl Env {
    /// The process environment (variables that are valid UTF-8).
    pub fn from_process() -> Self {
        Env {
            vars: std::env::vars().collect(),
        }
    }

    /// An environment from pairs (tests, config files).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// These variables with those of `over` on top (a config file's values under the
    /// process environment, say).
    ///
    /// ```
    /// use authcore::env::Env;
    /// let file = Env::from_pairs([("AUTH_URL", "https://file.example"), ("AUTH_SECRET", "s")]);
    /// let env = file.overlay(Env::from_pairs([("AUTH_URL", "https://env.example")]));
    /// assert_eq!(env.get("AUTH_URL"), Some("https://env.example"));
    /// assert_eq!(env.get("AUTH_SECRET"), Some("s"));
    /// ```
    pub fn overlay(mut self, over: Env) -> Env {
        self.vars.extend(over.vars);
        self
    }

    /// A variable.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str)
    }

    /// `AUTH_<ID>_ID`, `_SECRET`, `_ISSUER`, `_KEY` for a provider id (upper-cased, `-` → `_`).
    pub fn provider_env(&self, provider_id: &str) -> ProviderEnv {
        let id: String = provider_id
            .chars()
            .map(|c| {
                if c == '-' {
                    '_'
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        let get = |suffix: &str| self.get(&format!("AUTH_{id}_{suffix}")).map(str::to_owned);
        ProviderEnv {
            client_id: get("ID"),
            client_secret: get("SECRET"),
            issuer: get("ISSUER"),
            api_key: get("KEY"),
        }
    }
}

/// Values read from `AUTH_<ID>_ID`, `_SECRET`, `_ISSUER`, `_KEY` for one provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderEnv {
    /// `AUTH_<ID>_ID`.
    pub client_id: Option<String>,
    /// `AUTH_<ID>_SECRET`.
    pub client_secret: Option<String>,
    /// `AUTH_<ID>_ISSUER`.
    pub issuer: Option<String>,
    /// `AUTH_<ID>_KEY`.
    pub api_key: Option<String>,
}

/// Whether an env value turns a flag on. Deviation from Auth.js (docs/architecture.md,
/// deviations: `AUTH_TRUST_HOST` / `VERCEL` / `CF_PAGES`): `"false"`, `"0"`, `"no"`, `"off"`
/// and `""` mean off, instead of any defined value meaning on.
fn is_truthy(v: &str) -> bool {
    !matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false" | "no" | "off"
    )
}

/// What the environment says about the options Auth.js `setEnvDefaults` fills
/// (`lib/utils/env.ts`), as plain values for the config builder, which applies them to the
/// options left unset. (No `Debug`: it holds secrets.)
pub(crate) struct EnvDefaults {
    /// `AUTH_URL` as given.
    pub auth_url: Option<String>,
    /// `AUTH_SECRET_3` … `AUTH_SECRET_1`, `AUTH_SECRET`: the rotation order, newest first;
    /// each with the name of its variable.
    pub secrets: Vec<(&'static str, String)>,
    /// `AUTH_REDIRECT_PROXY_URL`.
    pub redirect_proxy_url: Option<String>,
    /// From the first of `AUTH_URL`, `AUTH_TRUST_HOST`, `VERCEL`, `CF_PAGES` that is set,
    /// else `NODE_ENV` other than `production`.
    pub trust_host: Option<bool>,
}

/// The Auth.js options that `AUTH_SECRET`, `AUTH_URL` and `AUTH_TRUST_HOST` set, as typed
/// values from a source other than the environment (a configuration file, say). Given to
/// [`AuthConfigBuilder::auth_js_settings`](crate::AuthConfigBuilder::auth_js_settings),
/// each counts where its variable is not set, with the variable's rules (a URL implies a
/// trusted host, the secret is the last of a rotation). Its `Debug` hides the secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthJsSettings {
    /// The secret, as `AUTH_SECRET`.
    pub secret: Option<String>,
    /// The public URL of the auth routes, as `AUTH_URL`.
    pub url: Option<String>,
    /// Whether request hosts are trusted, as `AUTH_TRUST_HOST`.
    pub trust_host: Option<bool>,
}

impl std::fmt::Debug for AuthJsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthJsSettings")
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field("url", &self.url)
            .field("trust_host", &self.trust_host)
            .finish()
    }
}

impl Env {
    /// The `setEnvDefaults` values of this snapshot, over `settings` where their variables
    /// are not set (a variable that is set wins even when blank).
    pub(crate) fn defaults(&self, settings: &AuthJsSettings) -> EnvDefaults {
        let auth_url = self.get("AUTH_URL").or(settings.url.as_deref());
        let mut secrets: Vec<(&'static str, String)> = self
            .get("AUTH_SECRET")
            .or(settings.secret.as_deref())
            .map(|s| ("AUTH_SECRET", s.to_owned()))
            .into_iter()
            .collect();
        for name in ["AUTH_SECRET_1", "AUTH_SECRET_2", "AUTH_SECRET_3"] {
            if let Some(s) = self.get(name) {
                secrets.insert(0, (name, s.to_owned()));
            }
        }
        let trust_host = match (auth_url, self.get("AUTH_TRUST_HOST")) {
            (Some(v), _) | (None, Some(v)) => Some(is_truthy(v)),
            (None, None) => settings.trust_host.or_else(|| {
                ["VERCEL", "CF_PAGES"]
                    .iter()
                    .find_map(|k| self.get(k))
                    .map(is_truthy)
                    .or_else(|| self.get("NODE_ENV").map(|v| v != "production"))
            }),
        };
        EnvDefaults {
            auth_url: auth_url.map(str::to_owned),
            secrets,
            redirect_proxy_url: self.get("AUTH_REDIRECT_PROXY_URL").map(str::to_owned),
            trust_host,
        }
    }
}

/// Builds the URL of an action (Auth.js `createActionURL`), for framework integrations.
///
/// Returns the URL and any warning to log.
pub fn create_action_url(
    action: &str,
    protocol: Option<&str>,
    headers: &HeaderMap,
    env: &Env,
    base_path: Option<&str>,
) -> Result<(url::Url, Option<WarningCode>), url::ParseError> {
    let mut warning = None;
    let env_url = env.get("AUTH_URL").or_else(|| env.get("NEXTAUTH_URL"));
    let base = if let Some(env_url) = env_url {
        let mut u = url::Url::parse(env_url)?;
        if let Some(bp) = base_path
            && bp != "/"
            && u.path() != "/"
        {
            if u.path() != bp {
                warning = Some(WarningCode::EnvUrlBasepathMismatch);
            }
            u.set_path("/");
        }
        u.to_string()
    } else {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let host = header("x-forwarded-host")
            .or_else(|| header("host"))
            .unwrap_or("");
        let proto = header("x-forwarded-proto").or(protocol).unwrap_or("https");
        let colon = if proto.ends_with(':') { "" } else { ":" };
        format!("{proto}{colon}//{host}")
    };
    let base = base.strip_suffix('/').unwrap_or(&base);
    let s = match base_path {
        Some(bp) => {
            let bp = bp.trim_matches('/');
            if bp.is_empty() {
                format!("{base}/{action}")
            } else {
                format!("{base}/{bp}/{action}")
            }
        }
        None => format!("{base}/{action}"),
    };
    Ok((url::Url::parse(&s)?, warning))
}

#[cfg(test)]
mod tests {
    /// The file's secret never reaches a log line through `Debug`.
    #[test]
    fn auth_js_settings_hide_the_secret() {
        let settings = super::AuthJsSettings {
            secret: Some("a-file-secret-that-must-stay-out-of-logs".into()),
            url: Some("https://auth.example.com".into()),
            trust_host: Some(true),
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("a-file-secret"), "{shown}");
        assert!(
            shown.contains("[redacted]") && shown.contains("auth.example.com"),
            "{shown}"
        );
    }

    use super::*;

    #[test]
    fn provider_env_names() {
        let env = Env::from_pairs([
            ("AUTH_AUTH0_ID", "id"),
            ("AUTH_AUTH0_SECRET", "sec"),
            ("AUTH_AUTH0_ISSUER", "https://x"),
            ("AUTH_AZURE_AD_ID", "az"),
            ("AUTH_RESEND_KEY", "key"),
        ]);
        let p = env.provider_env("auth0");
        assert_eq!(p.client_id.as_deref(), Some("id"));
        assert_eq!(p.client_secret.as_deref(), Some("sec"));
        assert_eq!(p.issuer.as_deref(), Some("https://x"));
        assert_eq!(
            env.provider_env("azure-ad").client_id.as_deref(),
            Some("az")
        );
        assert_eq!(env.provider_env("resend").api_key.as_deref(), Some("key"));
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, http::HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn create_action_url_table() {
        let none = Env::default();
        let cases: Vec<(
            &str,
            Option<&str>,
            HeaderMap,
            Env,
            Option<&str>,
            &str,
            Option<WarningCode>,
        )> = vec![
            (
                "callback",
                None,
                headers(&[("host", "example.com")]),
                Env::default(),
                Some("/basepath"),
                "https://example.com/basepath/callback",
                None,
            ),
            (
                "session",
                Some("http"),
                headers(&[("host", "example.com")]),
                Env::default(),
                Some("/auth"),
                "http://example.com/auth/session",
                None,
            ),
            (
                "session",
                Some("http:"),
                headers(&[("host", "example.com")]),
                Env::default(),
                Some("/auth"),
                "http://example.com/auth/session",
                None,
            ),
            (
                "session",
                None,
                headers(&[("host", "example.com"), ("x-forwarded-host", "fwd.example")]),
                Env::default(),
                Some("/auth"),
                "https://fwd.example/auth/session",
                None,
            ),
            (
                "session",
                Some("https"),
                headers(&[("host", "example.com"), ("x-forwarded-proto", "http")]),
                Env::default(),
                Some("/auth"),
                "http://example.com/auth/session",
                None,
            ),
            (
                "signin",
                None,
                headers(&[]),
                Env::from_pairs([("AUTH_URL", "http://localhost:3000/my-app/api/auth")]),
                Some("/my-app/api/auth"),
                "http://localhost:3000/my-app/api/auth/signin",
                None,
            ),
            (
                "signin",
                None,
                headers(&[]),
                Env::from_pairs([("AUTH_URL", "http://localhost:3000/my-app/api/auth")]),
                None,
                "http://localhost:3000/my-app/api/auth/signin",
                None,
            ),
            (
                "signin",
                None,
                headers(&[]),
                Env::from_pairs([("AUTH_URL", "https://sub.domain.env.com/my-app/api/auth/")]),
                Some("/my-app/api/auth"),
                "https://sub.domain.env.com/my-app/api/auth/signin",
                Some(WarningCode::EnvUrlBasepathMismatch),
            ),
            (
                "signout",
                None,
                headers(&[]),
                Env::from_pairs([("AUTH_URL", "https://sub.domain.env.com/my-app")]),
                Some("/api/auth"),
                "https://sub.domain.env.com/api/auth/signout",
                Some(WarningCode::EnvUrlBasepathMismatch),
            ),
        ];
        let _ = none;
        for (action, proto, h, env, bp, expected, warn) in cases {
            let (u, w) = create_action_url(action, proto, &h, &env, bp).unwrap();
            assert_eq!(u.as_str(), expected);
            assert_eq!(w, warn, "{expected}");
        }
    }
}
