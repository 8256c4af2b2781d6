//! Built-in provider presets, mirroring `@auth/core/providers/<name>` (spec §6.7).
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
//! | Preset | id | type | Auth.js |
//! |---|---|---|---|
//! | [`github()`] | `github` | oauth | `providers/github` (with GitHub Enterprise) |
//! | [`google()`] | `google` | oidc | `providers/google` |
//! | [`apple()`] | `apple` | oidc | `providers/apple` |
//! | [`gitlab()`] | `gitlab` | oauth | `providers/gitlab` (self-managed via `base_url`) |
//! | [`microsoft_entra_id()`] | `microsoft-entra-id` | oidc | `providers/microsoft-entra-id` |
//! | [`discord()`] | `discord` | oauth | `providers/discord` |
//! | [`auth0()`] | `auth0` | oidc | `providers/auth0` |
//! | [`keycloak()`] | `keycloak` | oidc | `providers/keycloak` |
//! | [`okta()`] | `okta` | oidc | `providers/okta` |
//! | [`oidc()`] | (yours) | oidc | a plain `type: "oidc"` provider |
//!
//! ```
//! use authcore::AuthConfig;
//! use authcore::env::Env;
//! use authcore::providers::catalog::{self, GitHubOptions};
//!
//! let env = Env::from_pairs([
//!     ("AUTH_SECRET", "a long random secret"),
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

pub mod apple;
pub mod auth0;
pub mod discord;
pub mod github;
pub mod gitlab;
pub mod google;
pub mod keycloak;
pub mod microsoft_entra_id;
pub mod oidc;
pub mod okta;

pub use apple::apple;
pub use auth0::auth0;
pub use discord::discord;
pub use github::{GitHubOptions, github};
pub use gitlab::{GitLabOptions, gitlab};
pub use google::google;
pub use keycloak::keycloak;
pub use microsoft_entra_id::{MicrosoftEntraIdOptions, microsoft_entra_id};
pub use oidc::oidc;
pub use okta::okta;

use serde_json::Value;

use super::{OAuthProvider, ProviderEnv, ProviderStyle};
pub use crate::error::CatalogError;
use crate::types::JsonObject;

/// One preset of the catalogue, by its Auth.js id: what a host needs to offer it from
/// configuration alone (`AUTH_<ID>_ID`, `_SECRET`, `_ISSUER`, or a config file).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CatalogEntry {
    /// The Auth.js provider id (`github`, `microsoft-entra-id` …).
    pub id: &'static str,
    /// The display name.
    pub name: &'static str,
    /// Whether an issuer must be configured (`AUTH_<ID>_ISSUER`).
    pub needs_issuer: bool,
    make: fn(Option<String>) -> OAuthProvider,
}

/// The catalogue, in the order a sign-in page lists its providers when all are enabled.
const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        id: "apple",
        name: "Apple",
        needs_issuer: false,
        make: |_| apple(),
    },
    CatalogEntry {
        id: "auth0",
        name: "Auth0",
        needs_issuer: true,
        make: |issuer| auth0(issuer.unwrap_or_default()),
    },
    CatalogEntry {
        id: "discord",
        name: "Discord",
        needs_issuer: false,
        make: |_| discord(),
    },
    CatalogEntry {
        id: "github",
        name: "GitHub",
        needs_issuer: false,
        make: |_| github(GitHubOptions::default()),
    },
    CatalogEntry {
        id: "gitlab",
        name: "GitLab",
        needs_issuer: false,
        make: |_| gitlab(GitLabOptions::default()),
    },
    CatalogEntry {
        id: "google",
        name: "Google",
        needs_issuer: false,
        make: |_| google(),
    },
    CatalogEntry {
        id: "keycloak",
        name: "Keycloak",
        needs_issuer: true,
        make: |issuer| keycloak(issuer.unwrap_or_default()),
    },
    CatalogEntry {
        id: "microsoft-entra-id",
        name: "Microsoft Entra ID",
        needs_issuer: false,
        make: |issuer| {
            microsoft_entra_id(MicrosoftEntraIdOptions {
                tenant: None,
                issuer,
            })
        },
    },
    CatalogEntry {
        id: "okta",
        name: "Okta",
        needs_issuer: true,
        make: |issuer| okta(issuer.unwrap_or_default()),
    },
];

/// Every preset of the catalogue.
pub fn entries() -> &'static [CatalogEntry] {
    CATALOG
}

/// The preset with this Auth.js id.
pub fn entry(id: &str) -> Result<&'static CatalogEntry, CatalogError> {
    CATALOG
        .iter()
        .find(|e| e.id == id)
        .ok_or_else(|| CatalogError::UnknownId {
            id: id.to_owned(),
            known: CATALOG.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
        })
}

impl CatalogEntry {
    /// `AUTH_<ID>` (upper-cased, `-` → `_`): the prefix of its variables.
    pub fn env_prefix(&self) -> String {
        format!("AUTH_{}", self.id.to_ascii_uppercase().replace('-', "_"))
    }

    /// The preset with the client id, secret and (where it takes one) issuer of `env`
    /// (read by [`Env::provider_env`](crate::env::Env::provider_env)). A missing id or
    /// secret, or a missing issuer where one is needed, is an error naming the variable.
    ///
    /// ```
    /// use authcore::env::Env;
    /// use authcore::providers::catalog;
    ///
    /// let env = Env::from_pairs([("AUTH_DISCORD_ID", "id"), ("AUTH_DISCORD_SECRET", "s")]);
    /// let discord = catalog::entry("discord").unwrap();
    /// let p = discord.build(&env.provider_env(discord.id)).unwrap();
    /// assert_eq!(p.id(), "discord");
    /// ```
    pub fn build(&self, env: &ProviderEnv) -> Result<OAuthProvider, CatalogError> {
        let set = |v: &Option<String>| v.clone().filter(|v| !v.trim().is_empty());
        let (Some(id), Some(secret)) = (set(&env.client_id), set(&env.client_secret)) else {
            return Err(CatalogError::MissingClient {
                id: self.id,
                prefix: self.env_prefix(),
            });
        };
        let issuer = set(&env.issuer);
        if self.needs_issuer && issuer.is_none() {
            return Err(CatalogError::MissingIssuer {
                id: self.id,
                prefix: self.env_prefix(),
            });
        }
        Ok((self.make)(issuer).client_id(id).client_secret(secret))
    }
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

    fn env(pairs: &[(&str, &str)]) -> ProviderEnv {
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        };
        ProviderEnv {
            client_id: get("id"),
            client_secret: get("secret"),
            issuer: get("issuer"),
            api_key: None,
        }
    }

    #[test]
    fn every_entry_builds_its_preset() {
        for e in entries() {
            let p = e
                .build(&env(&[
                    ("id", "client"),
                    ("secret", "s"),
                    ("issuer", "https://idp.example/realm"),
                ]))
                .unwrap();
            assert_eq!((p.id.as_str(), p.name.as_str()), (e.id, e.name));
            assert_eq!(
                (p.client_id.as_str(), p.client_secret.as_deref()),
                ("client", Some("s"))
            );
            if e.needs_issuer {
                assert_eq!(p.issuer.as_deref(), Some("https://idp.example/realm"));
            }
        }
    }

    #[test]
    fn missing_settings_name_the_variable() {
        let keycloak = entry("keycloak").unwrap();
        let err = keycloak
            .build(&env(&[("id", "c"), ("secret", "s")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "provider \"keycloak\" needs its issuer: set AUTH_KEYCLOAK_ISSUER (e.g. the tenant or realm URL)"
        );
        let entra = entry("microsoft-entra-id").unwrap();
        assert_eq!(entra.env_prefix(), "AUTH_MICROSOFT_ENTRA_ID");
        let err = entra
            .build(&env(&[("id", "c"), ("secret", " ")]))
            .unwrap_err();
        assert!(
            err.to_string().contains("AUTH_MICROSOFT_ENTRA_ID_SECRET"),
            "{err}"
        );
        // Entra ID takes an issuer when given, else the `common` tenant.
        let p = entra.build(&env(&[("id", "c"), ("secret", "s")])).unwrap();
        assert_eq!(
            p.issuer.as_deref(),
            Some("https://login.microsoftonline.com/common/v2.0")
        );
        let err = entry("nope").unwrap_err().to_string();
        assert!(
            err.contains("\"nope\"") && err.contains("discord, github"),
            "{err}"
        );
    }
}
