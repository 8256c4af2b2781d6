//! The relying parties authcore signs users in for: `[[oidc_provider.clients]]` as written
//! ([`ClientConfig`]), validated once at start-up into [`Clients`] (the error names the
//! client and what to fix). Pure data and checks.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;
use subtle::ConstantTimeEq;

/// The scopes authcore knows: `openid` (the subject), `profile` (`name`, `picture`),
/// `email` (`email`, `email_verified`), `offline_access` (a refresh token, OpenID Connect
/// Core §11; for clients with the `refresh_token` grant).
pub const SCOPES: [&str; 4] = ["openid", "profile", "email", "offline_access"];

/// The grant types a client may be given (RFC 6749 §4.1, §6, §4.4).
pub const GRANT_TYPES: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];

/// The shortest client secret accepted (bytes): a secret is a password the client and
/// authcore share, and guessing it must stay out of reach.
pub const MIN_SECRET_LEN: usize = 32;

/// One `[[oidc_provider.clients]]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The `client_id`.
    pub id: String,
    /// The name shown to users (default: the id).
    pub name: Option<String>,
    /// The client secret; none for a public client (a browser or native app), which must
    /// use PKCE.
    pub secret: Option<String>,
    /// How the client authenticates at the token endpoint: `client_secret_basic` (the
    /// default with a secret), `client_secret_post`, or `none` (public clients).
    pub token_endpoint_auth_method: Option<String>,
    /// Where the client may be sent back: absolute URLs, compared exactly (OpenID Connect
    /// Core §3.1.2.1, RFC 9700 §2.1).
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// The scopes it may ask for (default: all of [`SCOPES`]).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Where the client may be sent after signing the user out (RP-Initiated Logout 1.0
    /// §3), compared exactly; the same rules as `redirect_uris`.
    #[serde(default)]
    pub post_logout_redirect_uris: Vec<String>,
    /// The grant types it may use (default `["authorization_code"]`): `refresh_token` (with
    /// the `offline_access` scope: refresh tokens, rotated at each use), and
    /// `client_credentials` (a service acting for itself; clients with a secret only).
    #[serde(default)]
    pub grant_types: Vec<String>,
    /// Where authcore posts a logout token when a user who signed in to this client signs
    /// out at authcore (OpenID Connect Back-Channel Logout 1.0 §2.2); the same rules as
    /// `redirect_uris`.
    pub backchannel_logout_uri: Option<String>,
    /// Whether users are asked before their first sign-in to it (a third-party app): the
    /// consent page names the client and what it will see, and the answer is remembered
    /// per user and scope. Off by default: the client is one of the operator's own apps.
    #[serde(default)]
    pub consent: bool,
}

/// A grant type (RFC 6749).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GrantType {
    /// The authorization code flow (§4.1).
    AuthorizationCode,
    /// Refresh tokens (§6).
    RefreshToken,
    /// The client's own access tokens (§4.4).
    ClientCredentials,
}

impl GrantType {
    /// The grant type of a `grant_type` value.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "authorization_code" => Some(GrantType::AuthorizationCode),
            "refresh_token" => Some(GrantType::RefreshToken),
            "client_credentials" => Some(GrantType::ClientCredentials),
            _ => None,
        }
    }
}

/// How a client authenticates at the token endpoint (RFC 6749 §2.3, OpenID Connect Core
/// §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` only, and PKCE.
    None,
}

impl AuthMethod {
    /// The registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::None => "none",
        }
    }
}

/// A validated client.
#[derive(Clone, PartialEq, Eq)]
pub struct Client {
    id: String,
    name: String,
    secret: Option<String>,
    auth_method: AuthMethod,
    redirect_uris: Vec<String>,
    post_logout_redirect_uris: Vec<String>,
    scopes: BTreeSet<String>,
    grant_types: BTreeSet<GrantType>,
    backchannel_logout_uri: Option<String>,
    consent: bool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("auth_method", &self.auth_method)
            .field("redirect_uris", &self.redirect_uris)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The `client_id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The name shown to users.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How it authenticates at the token endpoint.
    pub fn auth_method(&self) -> AuthMethod {
        self.auth_method
    }

    /// Whether it is a public client (no secret: PKCE is required).
    pub fn is_public(&self) -> bool {
        self.secret.is_none()
    }

    /// Whether `uri` is one of its redirect URIs, compared as strings, exactly: no
    /// normalisation, prefix, case folding or port defaulting (RFC 9700 §4.1.3).
    pub fn has_redirect_uri(&self, uri: &str) -> bool {
        self.redirect_uris.iter().any(|r| r == uri)
    }

    /// Whether `uri` is one of its post-logout redirect URIs, compared exactly.
    pub fn has_post_logout_redirect_uri(&self, uri: &str) -> bool {
        self.post_logout_redirect_uris.iter().any(|r| r == uri)
    }

    /// Whether it may ask for `scope`.
    pub fn allows_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// Whether it may use `grant`.
    pub fn allows_grant(&self, grant: GrantType) -> bool {
        self.grant_types.contains(&grant)
    }

    /// Whether users are asked before they sign in to it.
    pub fn asks_consent(&self) -> bool {
        self.consent
    }

    /// Where it takes logout tokens, if anywhere.
    pub fn backchannel_logout_uri(&self) -> Option<&str> {
        self.backchannel_logout_uri.as_deref()
    }

    /// Whether `secret` is its secret (compared in constant time); `false` for a public
    /// client.
    pub fn secret_matches(&self, secret: &str) -> bool {
        self.secret
            .as_deref()
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(secret.as_bytes())))
    }
}

/// A client that cannot be used, named by its position and id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[oidc_provider.clients]] number {number} ({id:?}): {problem}")]
#[non_exhaustive]
pub struct ClientError {
    /// 1-based position in the file.
    pub number: usize,
    /// The client id as written.
    pub id: String,
    /// What is wrong.
    pub problem: String,
}

/// The validated clients, by id.
#[derive(Debug, Clone, Default)]
pub struct Clients(HashMap<String, Client>);

impl Clients {
    /// Validates the clients once, at start-up.
    pub fn new(configs: Vec<ClientConfig>) -> Result<Self, ClientError> {
        let mut clients = HashMap::new();
        for (i, c) in configs.into_iter().enumerate() {
            let error = |problem: String| ClientError {
                number: i + 1,
                id: c.id.clone(),
                problem,
            };
            let client = Self::client(&c).map_err(error)?;
            if clients.contains_key(&client.id) {
                return Err(error("another client has this id".into()));
            }
            clients.insert(client.id.clone(), client);
        }
        Ok(Clients(clients))
    }

    fn client(c: &ClientConfig) -> Result<Client, String> {
        if c.id.is_empty() || c.id.len() > 128 || c.id.chars().any(|ch| ch.is_control()) {
            return Err("the id must be 1 to 128 printable characters".into());
        }
        let secret = c.secret.clone().filter(|s| !s.is_empty());
        if let Some(s) = &secret
            && s.len() < MIN_SECRET_LEN
        {
            return Err(format!(
                "the secret is shorter than {MIN_SECRET_LEN} characters (make one with `openssl rand -hex 32`)"
            ));
        }
        let auth_method = match (c.token_endpoint_auth_method.as_deref(), &secret) {
            (None | Some("client_secret_basic"), Some(_)) => AuthMethod::ClientSecretBasic,
            (Some("client_secret_post"), Some(_)) => AuthMethod::ClientSecretPost,
            (None | Some("none"), None) => AuthMethod::None,
            (Some("none"), Some(_)) => {
                return Err(
                    "token_endpoint_auth_method = \"none\" is for clients without a secret".into(),
                );
            }
            (Some("client_secret_basic" | "client_secret_post"), None) => {
                return Err("this token_endpoint_auth_method needs a secret".into());
            }
            (Some(other), _) => {
                return Err(format!(
                    "token_endpoint_auth_method {other:?}: use client_secret_basic, client_secret_post or none"
                ));
            }
        };
        let mut grant_types = BTreeSet::new();
        for name in &c.grant_types {
            let grant = GrantType::parse(name).ok_or_else(|| {
                format!(
                    "grant type {name:?} is not one of {}",
                    GRANT_TYPES.join(", ")
                )
            })?;
            grant_types.insert(grant);
        }
        if grant_types.is_empty() {
            grant_types.insert(GrantType::AuthorizationCode);
        }
        let code = grant_types.contains(&GrantType::AuthorizationCode);
        if grant_types.contains(&GrantType::RefreshToken) && !code {
            return Err("the refresh_token grant needs authorization_code too".into());
        }
        if grant_types.contains(&GrantType::ClientCredentials) && secret.is_none() {
            return Err("the client_credentials grant is for clients with a secret".into());
        }
        if code && c.redirect_uris.is_empty() {
            return Err("give at least one redirect_uris entry".into());
        }
        for uri in c
            .redirect_uris
            .iter()
            .chain(&c.post_logout_redirect_uris)
            .chain(&c.backchannel_logout_uri)
        {
            redirect_uri_problem(uri)
                .map_or(Ok(()), |p| Err(format!("redirect URI {uri:?}: {p}")))?;
        }
        let refresh = grant_types.contains(&GrantType::RefreshToken);
        let scopes: BTreeSet<String> = if c.scopes.is_empty() {
            SCOPES
                .iter()
                .filter(|s| refresh || **s != "offline_access")
                .map(|s| (*s).to_owned())
                .collect()
        } else {
            c.scopes.iter().cloned().collect()
        };
        if let Some(unknown) = scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
            return Err(format!(
                "scope {unknown:?} is not one of {}",
                SCOPES.join(", ")
            ));
        }
        if code && !scopes.contains("openid") {
            return Err("the scopes must include openid".into());
        }
        if scopes.contains("offline_access") && !refresh {
            return Err(
                "the offline_access scope needs the refresh_token grant (grant_types = [\"authorization_code\", \"refresh_token\"])".into(),
            );
        }
        Ok(Client {
            id: c.id.clone(),
            name: c.name.clone().unwrap_or_else(|| c.id.clone()),
            secret,
            auth_method,
            redirect_uris: c.redirect_uris.clone(),
            post_logout_redirect_uris: c.post_logout_redirect_uris.clone(),
            scopes,
            grant_types,
            backchannel_logout_uri: c.backchannel_logout_uri.clone(),
            consent: c.consent,
        })
    }

    /// The client `id`.
    pub fn get(&self, id: &str) -> Option<&Client> {
        self.0.get(id)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every client.
    pub fn iter(&self) -> impl Iterator<Item = &Client> {
        self.0.values()
    }
}

/// What is wrong with a redirect URI to register, if anything: it must be an absolute
/// `https` URL, or `http` on a loopback host (RFC 8252 §7.3), without a fragment
/// (RFC 6749 §3.1.2) or user information.
fn redirect_uri_problem(uri: &str) -> Option<&'static str> {
    let Ok(u) = url::Url::parse(uri) else {
        return Some("not an absolute URL");
    };
    if u.fragment().is_some() {
        return Some("a redirect URI has no fragment");
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Some("a redirect URI has no user information");
    }
    let loopback = matches!(
        u.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    match u.scheme() {
        "https" => None,
        "http" if loopback => None,
        "http" => Some("http only on a loopback host (localhost, 127.0.0.1, [::1]); use https"),
        _ => Some("use an https URL"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(id: &str) -> ClientConfig {
        ClientConfig {
            id: id.into(),
            secret: Some("s".repeat(MIN_SECRET_LEN)),
            redirect_uris: vec!["https://app.example.com/callback".into()],
            ..ClientConfig::default()
        }
    }

    #[test]
    fn clients_are_validated_with_the_client_named() {
        let ok = Clients::new(vec![
            config("app"),
            ClientConfig {
                secret: None,
                redirect_uris: vec!["http://127.0.0.1:8080/cb".into()],
                ..config("spa")
            },
        ])
        .unwrap();
        assert_eq!(
            ok.get("app").unwrap().auth_method(),
            AuthMethod::ClientSecretBasic
        );
        assert!(ok.get("spa").unwrap().is_public());
        for (c, problem) in [
            (
                ClientConfig {
                    id: String::new(),
                    ..config("x")
                },
                "the id must be",
            ),
            (
                ClientConfig {
                    secret: Some("short".into()),
                    ..config("x")
                },
                "shorter than 32",
            ),
            (
                ClientConfig {
                    redirect_uris: vec![],
                    ..config("x")
                },
                "at least one",
            ),
            (
                ClientConfig {
                    redirect_uris: vec!["/callback".into()],
                    ..config("x")
                },
                "not an absolute URL",
            ),
            (
                ClientConfig {
                    redirect_uris: vec!["http://app.example.com/cb".into()],
                    ..config("x")
                },
                "http only on a loopback host",
            ),
            (
                ClientConfig {
                    redirect_uris: vec!["https://app.example.com/cb#x".into()],
                    ..config("x")
                },
                "no fragment",
            ),
            (
                ClientConfig {
                    redirect_uris: vec!["https://u:p@app.example.com/cb".into()],
                    ..config("x")
                },
                "no user information",
            ),
            (
                ClientConfig {
                    redirect_uris: vec!["javascript:alert(1)".into()],
                    ..config("x")
                },
                "use an https URL",
            ),
            (
                ClientConfig {
                    scopes: vec!["openid".into(), "admin".into()],
                    ..config("x")
                },
                "\"admin\"",
            ),
            (
                ClientConfig {
                    scopes: vec!["email".into()],
                    ..config("x")
                },
                "must include openid",
            ),
            (
                ClientConfig {
                    token_endpoint_auth_method: Some("none".into()),
                    ..config("x")
                },
                "for clients without a secret",
            ),
            (
                ClientConfig {
                    token_endpoint_auth_method: Some("private_key_jwt".into()),
                    ..config("x")
                },
                "use client_secret_basic",
            ),
            (
                ClientConfig {
                    grant_types: vec!["password".into()],
                    ..config("x")
                },
                "grant type \"password\"",
            ),
            (
                ClientConfig {
                    grant_types: vec!["refresh_token".into()],
                    ..config("x")
                },
                "needs authorization_code too",
            ),
            (
                ClientConfig {
                    secret: None,
                    grant_types: vec!["client_credentials".into()],
                    ..config("x")
                },
                "for clients with a secret",
            ),
            (
                ClientConfig {
                    scopes: vec!["openid".into(), "offline_access".into()],
                    ..config("x")
                },
                "needs the refresh_token grant",
            ),
            (
                ClientConfig {
                    backchannel_logout_uri: Some("http://app.example.com/bcl".into()),
                    ..config("x")
                },
                "http only on a loopback host",
            ),
            (
                ClientConfig {
                    backchannel_logout_uri: Some("https://app.example.com/bcl#f".into()),
                    ..config("x")
                },
                "no fragment",
            ),
        ] {
            let err = Clients::new(vec![config("first"), c])
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("[[oidc_provider.clients]] number 2"),
                "{err}"
            );
            assert!(err.contains(problem), "{err}");
        }
        let err = Clients::new(vec![config("a"), config("a")]).unwrap_err();
        assert!(err.to_string().contains("another client has this id"));
    }

    #[test]
    fn grant_types_and_their_scopes() {
        let clients = Clients::new(vec![
            config("code"),
            ClientConfig {
                grant_types: vec!["authorization_code".into(), "refresh_token".into()],
                ..config("offline")
            },
            ClientConfig {
                grant_types: vec!["client_credentials".into()],
                redirect_uris: vec![],
                ..config("service")
            },
        ])
        .unwrap();
        let code = clients.get("code").unwrap();
        assert!(code.allows_grant(GrantType::AuthorizationCode));
        assert!(!code.allows_grant(GrantType::RefreshToken));
        assert!(!code.allows_grant(GrantType::ClientCredentials));
        // offline_access only by default where refresh tokens may be issued.
        assert!(!code.allows_scope("offline_access"));
        let offline = clients.get("offline").unwrap();
        assert!(offline.allows_grant(GrantType::RefreshToken));
        assert!(offline.allows_scope("offline_access"));
        let service = clients.get("service").unwrap();
        assert!(service.allows_grant(GrantType::ClientCredentials));
        assert!(!service.allows_grant(GrantType::AuthorizationCode));
    }

    #[test]
    fn redirect_uris_and_secrets_compare_exactly() {
        let clients = Clients::new(vec![config("app")]).unwrap();
        let app = clients.get("app").unwrap();
        assert!(app.has_redirect_uri("https://app.example.com/callback"));
        for near in [
            "https://app.example.com/callback/",
            "https://app.example.com/callback?x=1",
            "https://APP.example.com/callback",
            "https://app.example.com:443/callback",
            "https://app.example.com/Callback",
            "https://app.example.com/callback#",
            "https://app.example.com/callback.evil.com",
            "https://app.example.com.evil.com/callback",
            "https://user@app.example.com/callback",
            "https://app.example.com/%63allback",
        ] {
            assert!(!app.has_redirect_uri(near), "{near}");
        }
        assert!(app.secret_matches(&"s".repeat(MIN_SECRET_LEN)));
        assert!(!app.secret_matches(&"s".repeat(MIN_SECRET_LEN - 1)));
        assert!(!app.secret_matches(""));
    }
}
