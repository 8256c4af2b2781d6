//! Built-in provider presets, mirroring `@auth/core/providers/<name>` (Auth.js `providers/*.ts`).
//!
//! Each preset is a function returning an [`OAuthProvider`] with
//! the Auth.js defaults (id, name, type, issuer / endpoints, params, checks, client
//! authentication, profile mapping, button style). The client id and secret are left empty: set them with
//! [`client_id`](super::OAuthProvider::client_id) /
//! [`client_secret`](super::OAuthProvider::client_secret), or let
//! [`AuthConfigBuilder::env_defaults`](crate::AuthConfigBuilder::env_defaults) fill them
//! from `AUTH_<ID>_ID` / `AUTH_<ID>_SECRET` (`AUTH_GITHUB_ID`, `AUTH_MICROSOFT_ENTRA_ID_ID` …).
//! Anything else can be overridden with the builder methods afterwards.
//!
//! Every OAuth 2 and OpenID Connect provider id of `@auth/core` 0.41.3 is here (93 ids,
//! listed with their settings in `docs/providers.md`), each a function of this module named
//! after it ([`github()`], [`discord()`], [`apple()`] …, with options types for the brands
//! that take them); [`oidc()`] is a plain `type: "oidc"` provider.
//! The email ids map onto [`email::services`](crate::providers::email::services) (HTTP
//! services) and `authcore-smtp` (`nodemailer`, `email`), `passkey` onto
//! [`WebAuthnProvider::passkey`](crate::providers::WebAuthnProvider::passkey).
//!
//! By id, [`entry()`] / [`entries()`] build any preset from configuration alone
//! (`AUTH_<ID>_ID`, `AUTH_<ID>_SECRET` and the preset's [`Setting`]s such as
//! `AUTH_<ID>_ISSUER`), which is how the standalone server offers them.
//!
//! ```
//! use authcore::AuthConfig;
//! use authcore::env::Env;
//! use authcore::providers::catalog::{self, GitHubOptions};
//!
//! let env = Env::from_pairs([
//!     ("AUTH_SECRET", "a long random secret, 32 characters or more"),
//!     ("AUTH_GITHUB_ID", "Iv1.0123456789"),
//!     ("AUTH_GITHUB_SECRET", "github-secret"),
//! ]);
//! let config = AuthConfig::builder()
//!     // Client id and secret come from AUTH_GITHUB_ID / AUTH_GITHUB_SECRET.
//!     .provider(catalog::github(GitHubOptions::default()))
//!     .provider(
//!         catalog::google()
//!             .client_id("google-client-id")
//!             .client_secret("google-client-secret"),
//!     )
//!     .env_defaults(&env)
//!     .build()
//!     .unwrap();
//! # let _ = config;
//! ```

// The presets' modules are private: each preset (and its options) has one public path,
// `catalog::<preset>`.
mod apple;
mod auth0;
mod discord;
mod github;
mod gitlab;
mod google;
mod keycloak;
mod microsoft_entra_id;
mod oauth_brands;
mod oidc;
mod oidc_brands;
mod okta;

#[cfg(test)]
mod docs;
mod entries;
mod request;

pub use apple::apple;
pub use auth0::auth0;
pub use discord::discord;
pub use github::{GitHubOptions, github};
pub use gitlab::{GitLabOptions, gitlab};
pub use google::google;
pub use keycloak::keycloak;
pub use microsoft_entra_id::{MicrosoftEntraIdOptions, azure_ad, microsoft_entra_id};
pub use oauth_brands::*;
pub use oidc::oidc;
pub use oidc_brands::*;
pub use okta::okta;

use serde_json::Value;

use super::{OAuthProvider, ProviderStyle};
use crate::env::Env;
use crate::error::BoxError;
pub use crate::error::CatalogError;
use crate::types::{JsonObject, TokenSet, User};

/// One preset of the catalogue, by its Auth.js id: what a host needs to offer it from
/// configuration alone (`AUTH_<ID>_ID`, `_SECRET`, and the preset's [`Setting`]s, or a
/// config file).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CatalogEntry {
    /// The Auth.js id (`github`, `microsoft-entra-id` …): the name of its module under
    /// `@auth/core/providers/`.
    pub id: &'static str,
    /// The display name.
    pub name: &'static str,
    /// The id of the provider it builds (routes, accounts, env names): the same as `id`
    /// except for `ory-hydra`, whose Auth.js provider id is `hydra`.
    pub provider_id: &'static str,
    /// The settings besides client id and secret, by key (`issuer`, `account_id` …).
    pub settings: &'static [Setting],
    /// Where Auth.js deprecates the id: the id to use instead.
    pub deprecated_for: Option<&'static str>,
    /// Where authcore knowingly differs from the Auth.js preset, and why (empty: nowhere).
    pub deviations: &'static str,
    make: fn(&Settings<'_>) -> Result<OAuthProvider, CatalogError>,
}

/// A setting of a preset besides client id and secret, read from `AUTH_<ID>_<KEY>`
/// (`AUTH_NETSUITE_ACCOUNT_ID`) or the key of a `[providers.<id>]` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Setting {
    /// The key, lower snake case (`issuer`, `account_id`).
    pub key: &'static str,
    /// Whether the preset cannot work without it.
    pub required: bool,
    /// What it is, for messages and docs (`the realm URL, e.g. …`).
    pub what: &'static str,
}

/// The values of one preset's settings by key (`id`, `secret`, `issuer`, `account_id` …),
/// from whatever source a host reads them: the environment
/// ([`CatalogEntry::values_from_env`]), a configuration file, code. Its `Debug` lists the
/// keys only: the values include client secrets.
///
/// ```
/// use authcore::providers::catalog::{self, SettingValues};
/// let values = SettingValues::default()
///     .with("id", "client-id")
///     .with("secret", "client-secret")
///     .with("issuer", "https://example.okta.com");
/// let p = catalog::entry("okta").unwrap().build_from(&values).unwrap();
/// assert_eq!(p.id(), "okta");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SettingValues {
    values: std::collections::BTreeMap<String, String>,
}

impl SettingValues {
    /// These values with `key` set to `value` (replacing an earlier one).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.insert(key.into(), value.into());
        self
    }

    /// The value of `key` as given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}

impl std::fmt::Debug for SettingValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingValues")
            .field("keys", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The settings of one preset as given (empty values count as missing).
#[derive(Debug)]
pub struct Settings<'a> {
    entry: &'a CatalogEntry,
    values: &'a SettingValues,
}

impl Settings<'_> {
    /// The value of a setting of this preset, trimmed; `None` when unset or empty.
    pub fn get(&self, key: &str) -> Option<String> {
        self.values
            .get(key)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    }

    /// A required setting, or the error naming its variable.
    pub fn require(&self, key: &str) -> Result<String, CatalogError> {
        self.get(key).ok_or_else(|| self.missing(key))
    }

    fn missing(&self, key: &str) -> CatalogError {
        let what = self
            .entry
            .settings
            .iter()
            .find(|s| s.key == key)
            .map_or("a setting", |s| s.what);
        CatalogError::MissingSetting {
            id: self.entry.id,
            var: self.entry.env_var(key),
            what,
        }
    }

    /// An error for a setting whose value the preset cannot use.
    pub fn invalid(&self, key: &str, reason: &'static str) -> CatalogError {
        CatalogError::InvalidSetting {
            id: self.entry.id,
            var: self.entry.env_var(key),
            reason,
        }
    }
}

/// An email or passkey provider id of Auth.js, and the authcore preset that is it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtherPreset {
    /// The Auth.js id.
    pub id: &'static str,
    /// The display name.
    pub name: &'static str,
    /// The provider type.
    pub kind: crate::types::ProviderType,
    /// The Rust preset, by path.
    pub preset: &'static str,
}

/// The email and passkey ids of `@auth/core` 0.41.3: HTTP email services, SMTP
/// (`authcore-smtp`, for Auth.js's Nodemailer-based `email` and `nodemailer`), passkeys.
pub const OTHER_PRESETS: &[OtherPreset] = {
    use crate::types::ProviderType::{Email, Webauthn};
    const fn other(
        id: &'static str,
        name: &'static str,
        kind: crate::types::ProviderType,
        preset: &'static str,
    ) -> OtherPreset {
        OtherPreset {
            id,
            name,
            kind,
            preset,
        }
    }
    &[
        other("email", "Email", Email, "authcore_smtp::email_provider"),
        other(
            "forwardemail",
            "Forward Email",
            Email,
            "authcore::providers::email::services::forwardemail",
        ),
        other(
            "loops",
            "Loops",
            Email,
            "authcore::providers::email::services::loops",
        ),
        other(
            "mailgun",
            "Mailgun",
            Email,
            "authcore::providers::email::services::mailgun",
        ),
        other(
            "nodemailer",
            "Nodemailer",
            Email,
            "authcore_smtp::nodemailer_provider",
        ),
        other(
            "passkey",
            "Passkey",
            Webauthn,
            "authcore::providers::WebAuthnProvider::passkey",
        ),
        other(
            "postmark",
            "Postmark",
            Email,
            "authcore::providers::email::services::postmark",
        ),
        other(
            "resend",
            "Resend",
            Email,
            "authcore::providers::email::services::resend",
        ),
        other(
            "sendgrid",
            "SendGrid",
            Email,
            "authcore::providers::email::services::sendgrid",
        ),
    ]
};

/// Every preset of the catalogue, by id.
pub fn entries() -> &'static [CatalogEntry] {
    entries::CATALOG
}

/// The preset with this Auth.js id.
pub fn entry(id: &str) -> Result<&'static CatalogEntry, CatalogError> {
    entries::CATALOG
        .iter()
        .find(|e| e.id == id)
        .ok_or_else(|| CatalogError::UnknownId {
            id: id.to_owned(),
            known: entries::CATALOG
                .iter()
                .map(|e| e.id)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl CatalogEntry {
    /// `AUTH_<PROVIDER ID>` (upper-cased, `-` → `_`): the prefix of its variables, as
    /// Auth.js derives them from the provider id.
    pub fn env_prefix(&self) -> String {
        format!(
            "AUTH_{}",
            self.provider_id.to_ascii_uppercase().replace('-', "_")
        )
    }

    /// The variable of a setting key: `id` → `AUTH_<ID>_ID`, `account_id` →
    /// `AUTH_<ID>_ACCOUNT_ID`.
    pub fn env_var(&self, key: &str) -> String {
        format!("{}_{}", self.env_prefix(), key.to_ascii_uppercase())
    }

    /// The keys of this preset's settings: `id`, `secret`, then its [`Setting`]s.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> {
        ["id", "secret"]
            .into_iter()
            .chain(self.settings.iter().map(|s| s.key))
    }

    /// The values `env` sets for this preset's settings ([`env_var`](Self::env_var) of
    /// each key).
    pub fn values_from_env(&self, env: &Env) -> SettingValues {
        self.keys()
            .filter_map(|k| env.get(&self.env_var(k)).map(|v| (k, v)))
            .fold(SettingValues::default(), |values, (k, v)| values.with(k, v))
    }

    /// Whether `env` sets any of this preset's variables (client id, secret or a setting):
    /// the host means to offer it.
    pub fn is_configured(&self, env: &Env) -> bool {
        self.is_given(&self.values_from_env(env))
    }

    /// Whether `values` has any of this preset's settings, not blank.
    pub fn is_given(&self, values: &SettingValues) -> bool {
        self.keys()
            .any(|k| values.get(k).is_some_and(|v| !v.trim().is_empty()))
    }

    /// The preset with the client id, secret and settings of `env`
    /// (`AUTH_<ID>_ID`, `AUTH_<ID>_SECRET`, `AUTH_<ID>_<SETTING>`). A missing id or
    /// secret, or a missing required setting, is an error naming the variable.
    ///
    /// ```
    /// use authcore::env::Env;
    /// use authcore::providers::catalog;
    ///
    /// let env = Env::from_pairs([("AUTH_DISCORD_ID", "id"), ("AUTH_DISCORD_SECRET", "s")]);
    /// let p = catalog::entry("discord").unwrap().build(&env).unwrap();
    /// assert_eq!(p.id(), "discord");
    ///
    /// let env = Env::from_pairs([("AUTH_NETSUITE_ID", "id"), ("AUTH_NETSUITE_SECRET", "s")]);
    /// let err = catalog::entry("netsuite").unwrap().build(&env).unwrap_err();
    /// assert!(err.to_string().contains("AUTH_NETSUITE_ACCOUNT_ID"));
    /// ```
    pub fn build(&self, env: &Env) -> Result<OAuthProvider, CatalogError> {
        self.build_from(&self.values_from_env(env))
    }

    /// The preset with the client id, secret and settings of `values`, as
    /// [`build`](Self::build) reads them from the environment; an error names the
    /// setting's variable.
    pub fn build_from(&self, values: &SettingValues) -> Result<OAuthProvider, CatalogError> {
        let settings = Settings {
            entry: self,
            values,
        };
        let (Some(id), Some(secret)) = (settings.get("id"), settings.get("secret")) else {
            return Err(CatalogError::MissingClient {
                id: self.id,
                prefix: self.env_prefix(),
            });
        };
        for s in self.settings.iter().filter(|s| s.required) {
            settings.require(s.key)?;
        }
        Ok((self.make)(&settings)?.client_id(id).client_secret(secret))
    }
}

/// A profile mapping from JSON paths, one spec per [`User`] field (see [`field`]); a
/// profile without the id is refused, rather than giving the account a random id.
pub(crate) fn fields(
    id: &'static str,
    name: &'static str,
    email: &'static str,
    image: &'static str,
) -> impl Fn(&JsonObject, &TokenSet) -> Result<User, BoxError> + Send + Sync + 'static {
    move |profile, _| {
        Ok(User {
            id: Some(field(profile, id).ok_or_else(|| format!("the profile has no {id:?}"))?),
            name: field(profile, name),
            email: field(profile, email),
            image: field(profile, image),
            ..User::default()
        })
    }
}

/// A user field from a profile by spec: alternatives separated by ` | `, the first that
/// gives a value wins (JavaScript `??`); an alternative is one or more paths joined by
/// ` + `, whose present values are joined with a space (the `${first} ${last}` of a
/// preset, without Auth.js's `"undefined"` for a missing part); a path is keys and array
/// indexes separated by dots (`data.user.open_id`, `images.0.url`). Strings count when
/// non-empty, numbers are stringified, anything else is no value. `""` is always `None`.
pub(crate) fn field(profile: &JsonObject, spec: &str) -> Option<String> {
    if spec.is_empty() {
        return None;
    }
    spec.split(" | ").find_map(|alternative| {
        let parts: Vec<String> = alternative
            .split(" + ")
            .filter_map(|path| path_value(profile, path).and_then(as_string))
            .filter(|s| !s.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    })
}

/// The value at a dotted path (`a.b.0.c`).
pub(crate) fn path_value<'a>(profile: &'a JsonObject, path: &str) -> Option<&'a Value> {
    let mut keys = path.split('.');
    let mut v = profile.get(keys.next()?)?;
    for k in keys {
        v = match v {
            Value::Object(m) => m.get(k)?,
            Value::Array(a) => a.get(k.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A profile value as Auth.js would put it into the user: strings as they are, numbers
/// stringified (`String(id)`), `null` / missing / anything else → `None`.
fn string_field(profile: &JsonObject, key: &str) -> Option<String> {
    as_string(profile.get(key)?)
}

fn as_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// JavaScript truthiness of an optional JSON value (`!value` is `false`).
fn is_truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// The button style of an Auth.js preset: `bg` / `brandColor` (the sign-in page uses
/// `brandColor ?? bg`) and `text`.
fn style(brand_color: &str, text: Option<&str>) -> ProviderStyle {
    ProviderStyle {
        logo: None,
        brand_color: Some(brand_color.to_owned()),
        text: text.map(str::to_owned),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers shared by the preset fixture tests.

    use serde_json::Value;

    use crate::providers::OAuthProvider;
    use crate::types::{JsonObject, TokenSet};

    /// A JSON object fixture.
    pub(crate) fn object(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            other => panic!("fixture is not an object: {other}"),
        }
    }

    /// An authorization parameter of the provider.
    pub(crate) fn param<'a>(p: &'a OAuthProvider, name: &str) -> Option<&'a str> {
        p.authorization
            .params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A token set with just an access token.
    pub(crate) fn tokens(access_token: &str) -> TokenSet {
        TokenSet {
            access_token: Some(access_token.to_owned()),
            token_type: Some("bearer".to_owned()),
            ..TokenSet::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn javascript_truthiness() {
        for (v, t) in [
            (json!(null), false),
            (json!(""), false),
            (json!(0), false),
            (json!(false), false),
            (json!("a"), true),
            (json!(1), true),
            (json!([]), true),
            (json!({}), true),
        ] {
            assert_eq!(is_truthy(Some(&v)), t, "{v}");
        }
        assert!(!is_truthy(None));
    }

    #[test]
    fn string_fields_follow_javascript_string_conversion() {
        let p = test_support::object(json!({"id": 42, "s": "x", "n": null, "b": true}));
        assert_eq!(string_field(&p, "id").as_deref(), Some("42"));
        assert_eq!(string_field(&p, "s").as_deref(), Some("x"));
        assert_eq!(string_field(&p, "n"), None);
        assert_eq!(string_field(&p, "b"), None);
        assert_eq!(string_field(&p, "missing"), None);
    }

    #[test]
    fn every_preset_has_its_authjs_identity() {
        use crate::types::ProviderType::{Oauth, Oidc};
        let all = [
            (github(GitHubOptions::default()), "github", "GitHub", Oauth),
            (google(), "google", "Google", Oidc),
            (apple(), "apple", "Apple", Oidc),
            (gitlab(GitLabOptions::default()), "gitlab", "GitLab", Oauth),
            (
                microsoft_entra_id(MicrosoftEntraIdOptions::default()),
                "microsoft-entra-id",
                "Microsoft Entra ID",
                Oidc,
            ),
            (discord(), "discord", "Discord", Oauth),
            (auth0("https://t.eu.auth0.com"), "auth0", "Auth0", Oidc),
            (
                keycloak("https://kc/realms/r"),
                "keycloak",
                "Keycloak",
                Oidc,
            ),
            (okta("https://o.okta.com"), "okta", "Okta", Oidc),
            (
                oidc("corp", "Corp SSO", "https://sso.corp"),
                "corp",
                "Corp SSO",
                Oidc,
            ),
        ];
        for (p, id, name, kind) in all {
            assert_eq!((p.id.as_str(), p.name.as_str(), p.kind), (id, name, kind));
            assert!(p.client_id.is_empty() && p.client_secret.is_none(), "{id}");
            // Everything is either configured or discoverable.
            assert_eq!(p.missing_endpoint(), None, "{id}");
        }
    }
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    /// The variables of `entry` for `(key, value)` settings.
    fn env(entry: &CatalogEntry, pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (entry.env_var(k), *v)))
    }

    /// Every setting of `entry`, made up (URLs where a URL is expected).
    fn all_settings(entry: &CatalogEntry) -> Env {
        let mut pairs = vec![("id", "client"), ("secret", "s")];
        for s in entry.settings {
            pairs.push(match s.key {
                "platform_type" => ("platform_type", "WebsiteApp"),
                "account_id" => ("account_id", "1234567"),
                "tenant_id" => ("tenant_id", "t-1"),
                "scope" | "api_version" | "connection" | "api_key" => (s.key, "value"),
                key => (key, "https://idp.example/realm"),
            });
        }
        env(entry, &pairs)
    }

    #[test]
    fn every_entry_builds_its_preset() {
        for e in entries() {
            let p = e.build(&all_settings(e)).unwrap();
            assert_eq!((p.id.as_str(), p.name.as_str()), (e.provider_id, e.name));
            assert_eq!(
                (p.client_id.as_str(), p.client_secret.as_deref()),
                ("client", Some("s"))
            );
            assert_eq!(p.missing_endpoint(), None, "{}", e.id);
            assert!(e.is_configured(&all_settings(e)));
            assert!(!e.is_configured(&Env::from_pairs([(e.env_var("id"), " ")])));
            if e.settings.iter().any(|s| s.key == "issuer" && s.required) {
                // The issuer, or (OAuth 2 presets) the base of the endpoints.
                let used = p.issuer.as_deref().or(p.authorization.url.as_deref());
                assert!(
                    used.is_some_and(|i| i.starts_with("https://idp.example/realm")),
                    "{}: {used:?}",
                    e.id,
                );
            }
            // Every required setting is needed, and named when missing.
            for s in e.settings.iter().filter(|s| s.required) {
                let mut without = all_settings(e);
                without = without.overlay(Env::from_pairs([(e.env_var(s.key), "")]));
                let err = e.build(&without).unwrap_err().to_string();
                assert!(err.contains(&e.env_var(s.key)), "{}: {err}", e.id);
            }
        }
    }

    #[test]
    fn ids_are_unique_and_sorted() {
        let ids: Vec<&str> = entries().iter().map(|e| e.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn missing_settings_name_the_variable() {
        let keycloak = entry("keycloak").unwrap();
        let err = keycloak
            .build(&env(keycloak, &[("id", "c"), ("secret", "s")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "provider \"keycloak\" needs its issuer (the realm URL, e.g. https://kc.example.com/realms/main): set AUTH_KEYCLOAK_ISSUER"
        );
        let entra = entry("microsoft-entra-id").unwrap();
        assert_eq!(entra.env_prefix(), "AUTH_MICROSOFT_ENTRA_ID");
        let err = entra
            .build(&env(entra, &[("id", "c"), ("secret", " ")]))
            .unwrap_err();
        assert!(
            err.to_string().contains("AUTH_MICROSOFT_ENTRA_ID_SECRET"),
            "{err}"
        );
        // Entra ID takes an issuer when given, else the `common` tenant.
        let p = entra
            .build(&env(entra, &[("id", "c"), ("secret", "s")]))
            .unwrap();
        assert_eq!(
            p.issuer.as_deref(),
            Some("https://login.microsoftonline.com/common/v2.0")
        );
        // Ory Hydra's variables follow its provider id, as in Auth.js.
        assert_eq!(
            entry("ory-hydra").unwrap().env_var("issuer"),
            "AUTH_HYDRA_ISSUER"
        );
        let wechat = entry("wechat").unwrap();
        let err = wechat
            .build(&env(
                wechat,
                &[("id", "c"), ("secret", "s"), ("platform_type", "Mini")],
            ))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "provider \"wechat\": AUTH_WECHAT_PLATFORM_TYPE must be OfficialAccount or WebsiteApp"
        );
        let descope = entry("descope").unwrap();
        let p = descope
            .build(&env(descope, &[("id", "P2abc"), ("secret", "s")]))
            .unwrap();
        assert_eq!(p.issuer.as_deref(), Some("https://api.descope.com/P2abc"));
        let err = entry("nope").unwrap_err().to_string();
        assert!(
            err.contains("\"nope\"") && err.contains("discord, dribbble"),
            "{err}"
        );
    }

    #[test]
    fn profile_fields_follow_their_specs() {
        let p = test_support::object(serde_json::json!({
            "data": {"id": 7, "user": {"first": "Ada", "last": ""}},
            "images": [{"url": "u0"}],
            "empty": "",
        }));
        for (spec, want) in [
            ("data.id", Some("7")),
            ("images.0.url", Some("u0")),
            ("images.1.url", None),
            ("empty | data.user.first", Some("Ada")),
            ("data.user.first + data.user.last", Some("Ada")),
            ("data.user.none + data.user.last", None),
            ("missing | images.0.url", Some("u0")),
            ("", None),
        ] {
            assert_eq!(field(&p, spec).as_deref(), want, "{spec}");
        }
        let user =
            fields("data.id", "data.user.first", "", "images.0.url")(&p, &TokenSet::default())
                .unwrap();
        assert_eq!(user.id.as_deref(), Some("7"));
        assert_eq!(user.email, None);
        let err = fields("nope", "", "", "")(&p, &TokenSet::default()).unwrap_err();
        assert_eq!(err.to_string(), "the profile has no \"nope\"");
    }
}
