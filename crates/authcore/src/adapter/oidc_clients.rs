//! The OpenID Provider's clients made at run time by administrators
//! ([`OidcClientStore`]), beside those of the configuration. A store keeps each client as
//! given; the rules (valid redirect URIs, ids the configuration has, the secret shown once)
//! live in the administrators' operations, and the provider reads the clients.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::AdapterError;

/// A client of the OpenID Provider made at run time. Its secret is never stored: only its
/// SHA-256 ([`StoredClient::secret_matches`]).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredClient {
    /// The `client_id` (1 to 128 printable characters).
    pub client_id: String,
    /// The name shown to users.
    pub name: String,
    /// Where codes may be sent, compared exactly.
    pub redirect_uris: Vec<String>,
    /// Where RP-initiated logout may send the browser back.
    pub post_logout_redirect_uris: Vec<String>,
    /// The grant types it may use (`authorization_code`, `refresh_token`,
    /// `client_credentials`).
    pub grant_types: Vec<String>,
    /// The scopes it may ask for.
    pub scopes: Vec<String>,
    /// How it authenticates at the token endpoint: `client_secret_basic`,
    /// `client_secret_post`, or `none` (a public client, without a secret).
    pub token_endpoint_auth_method: String,
    /// The SHA-256 of its secret (lowercase hex, [`client_secret_hash`]); `None` for a
    /// public client. Stores keep it; the administrators' answers leave it out.
    #[serde(default)]
    pub secret_hash: Option<String>,
    /// Whether its access tokens must be DPoP-bound (RFC 9449 §5.2): a token request
    /// without a proof is refused.
    #[serde(default)]
    pub dpop_bound_access_tokens: bool,
    /// Whether its authorization requests must be pushed first (RFC 9126 §6).
    #[serde(default)]
    pub require_pushed_authorization_requests: bool,
    /// What its access tokens are: `None` or `"jwt"` for signed JWTs, `"opaque"` for
    /// sealed ones that only introspection reads (a configured client's
    /// `access_token_format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token_format: Option<String>,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When its secret was last replaced, if ever.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub secret_rotated_at: Option<OffsetDateTime>,
    /// When it was disabled (its requests and tokens are refused), if it is.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub disabled_at: Option<OffsetDateTime>,
}

impl std::fmt::Debug for StoredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredClient")
            .field("client_id", &self.client_id)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("disabled_at", &self.disabled_at)
            .finish_non_exhaustive()
    }
}

impl StoredClient {
    /// What its access tokens are: `"jwt"` (also when none is stored) or `"opaque"`.
    pub fn access_token_format(&self) -> &str {
        self.access_token_format.as_deref().unwrap_or("jwt")
    }

    /// Whether `secret` is this client's secret: its SHA-256 compared with the stored one
    /// in constant time; `false` for a public client.
    pub fn secret_matches(&self, secret: &str) -> bool {
        self.secret_hash
            .as_deref()
            .is_some_and(|hash| client_secret_matches(hash, secret))
    }

    /// Whether it is disabled.
    pub fn is_disabled(&self) -> bool {
        self.disabled_at.is_some()
    }
}

/// The stored form of a client secret: its SHA-256 in lowercase hex (a secret of 32
/// random bytes needs no slow hash).
pub fn client_secret_hash(secret: &str) -> String {
    crate::crypto::sha256_hex(secret.as_bytes())
}

/// Whether `secret` is the secret whose stored form is `hash` ([`client_secret_hash`]),
/// compared in constant time.
pub fn client_secret_matches(hash: &str, secret: &str) -> bool {
    crate::crypto::ct_eq(client_secret_hash(secret).as_bytes(), hash.as_bytes())
}

/// The OpenID Provider's clients made at run time.
#[async_trait]
pub trait OidcClientStore: Send + Sync {
    /// Stores a new client; `Ok(false)`, storing nothing, when a client with its id
    /// exists (beyond Auth.js).
    async fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError>;
    /// The client with this id (beyond Auth.js).
    async fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError>;
    /// Every client, ordered by id (beyond Auth.js).
    async fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError>;
    /// Replaces the stored client `before` by `after` (its id `before`'s, `created_at`
    /// included) in one step, only while the stored one is still `before`: `Ok(false)`
    /// when there is none or it changed since it was read, so that of two changes made
    /// from one read neither undoes the other (the caller reads again and retries)
    /// (beyond Auth.js).
    async fn update_oidc_client(
        &self,
        before: &StoredClient,
        after: &StoredClient,
    ) -> Result<bool, AdapterError>;
}

/// What is wrong with a redirect URI to register, if anything: it must be an absolute
/// `https` URL, or `http` on a loopback host (RFC 8252 §7.3), without a fragment
/// (RFC 6749 §3.1.2) or user information.
pub fn redirect_uri_problem(uri: &str) -> Option<&'static str> {
    let Ok(u) = url::Url::parse(uri) else {
        return Some("not an absolute URL");
    };
    if u.fragment().is_some() {
        return Some("no fragment allowed");
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Some("no user information allowed");
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
