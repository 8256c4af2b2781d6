//! OAuth 2 / OpenID Connect protocol steps (RFC 6749, OpenID Connect Core), sans-I/O where
//! possible: each step builds an `http::Request` and processes an `http::Response`; the
//! [`HttpClient`] seam does the I/O (reqwest by default, replaceable per provider).

pub mod id_token;

use crate::http_client::HttpClient;

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use crate::error::BoxError;
use crate::types::{JsonObject, TokenSet};
use futures_util::future::{BoxFuture, Shared};

/// How long discovery documents and JWK Sets are cached.
pub const METADATA_TTL: Duration = Duration::from_secs(3600);
/// Minimum time between two JWKS refetches triggered by an unknown `kid`.
pub const JWKS_REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// Authorization server metadata (the parts authcore uses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `issuer`.
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: Option<String>,
    /// `token_endpoint`.
    pub token_endpoint: Option<String>,
    /// `userinfo_endpoint`.
    pub userinfo_endpoint: Option<String>,
    /// `jwks_uri`.
    pub jwks_uri: Option<String>,
    /// `id_token_signing_alg_values_supported`.
    pub id_token_signing_alg_values_supported: Option<Vec<String>>,
    /// `authorization_response_iss_parameter_supported`.
    pub authorization_response_iss_parameter_supported: bool,
    /// `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0 §2.1).
    pub end_session_endpoint: Option<String>,
}

/// Per-provider caches of discovery and JWKS, and the access-token refreshes in flight,
/// shared by clones of the provider.
pub struct ProviderCaches {
    metadata: RwLock<Option<(Arc<Metadata>, Instant)>>,
    jwks: RwLock<Option<(Arc<id_token::Jwks>, Instant)>>,
    pub(crate) refreshes: RefreshFlights,
}

impl Default for ProviderCaches {
    fn default() -> Self {
        ProviderCaches {
            metadata: RwLock::default(),
            jwks: RwLock::default(),
            refreshes: new_flights(),
        }
    }
}

impl std::fmt::Debug for ProviderCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderCaches")
    }
}

/// How long a refresh's outcome answers reads that still carry the refresh token it used
/// (and how long the claim on it lasts across instances).
pub(crate) const REFRESH_WINDOW: Duration = Duration::from_secs(60);

/// Why no new tokens came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefreshFailure {
    /// Another instance claimed this refresh token first: it refreshes.
    ClaimedElsewhere,
    /// The provider refused or could not be reached (the reason, without token values).
    Failed(Arc<str>),
}

/// The outcome shared by every read of one refresh token.
pub(crate) type RefreshResult = Result<TokenSet, RefreshFailure>;

/// The refreshes in flight or just done, by hash of the refresh token they used.
pub(crate) type RefreshFlights =
    moka::sync::Cache<String, Shared<BoxFuture<'static, RefreshResult>>>;

pub(crate) fn new_flights() -> RefreshFlights {
    moka::sync::Cache::builder()
        .max_capacity(100_000)
        .time_to_live(REFRESH_WINDOW)
        .build()
}

/// Why a provider step failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The provider could not be reached or answered garbage.
    #[error("{step} request to the provider failed: {reason}")]
    Http {
        /// Which step.
        step: &'static str,
        /// What happened (never contains tokens or secrets).
        reason: String,
    },
    /// A response did not have the expected shape.
    #[error("invalid {step} response: {reason}")]
    InvalidResponse {
        /// Which step.
        step: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The provider answered with an OAuth error (`error` in the token response).
    #[error("the provider returned an error: {error}")]
    Provider {
        /// The `error` code.
        error: String,
    },
    /// The ID token failed verification.
    #[error("ID token rejected: {0}")]
    IdToken(#[from] id_token::IdTokenError),
}

fn http_err(step: &'static str) -> impl Fn(BoxError) -> OAuthError {
    move |e| OAuthError::Http {
        step,
        reason: e.to_string(),
    }
}

fn json_object(step: &'static str, body: &[u8]) -> Result<JsonObject, OAuthError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(OAuthError::InvalidResponse {
            step,
            reason: "not a JSON object".into(),
        }),
        Err(_) => Err(OAuthError::InvalidResponse {
            step,
            reason: "not JSON".into(),
        }),
    }
}

/// `GET url` with `Accept: application/json`, requiring 200 and a JSON object.
pub(crate) async fn get_json(
    client: &dyn HttpClient,
    step: &'static str,
    url: &str,
) -> Result<JsonObject, OAuthError> {
    let req = http::Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|e| http_err(step)(Box::new(e)))?;
    let resp = client.send(req).await.map_err(http_err(step))?;
    if resp.status() != http::StatusCode::OK {
        return Err(OAuthError::InvalidResponse {
            step,
            reason: format!("HTTP {}", resp.status().as_u16()),
        });
    }
    json_object(step, resp.body())
}

/// Placeholder in multi-tenant issuers (Microsoft Entra ID).
pub(crate) const TENANT_PLACEHOLDER: &str = "{tenantid}";

/// Normalises an issuer for comparison (`URL` serialisation without a trailing slash on
/// the root path).
fn normalise_issuer(s: &str) -> String {
    match url::Url::parse(s) {
        Ok(u) => u.as_str().trim_end_matches('/').to_owned(),
        Err(_) => s.trim_end_matches('/').to_owned(),
    }
}

/// OIDC discovery (`<issuer>/.well-known/openid-configuration`), cached for
/// [`METADATA_TTL`]; the document's issuer must match.
pub(crate) async fn discover(
    client: &dyn HttpClient,
    caches: &ProviderCaches,
    issuer: &str,
    well_known: Option<&str>,
    tenant_template: bool,
) -> Result<Arc<Metadata>, OAuthError> {
    if let Ok(guard) = caches.metadata.read()
        && let Some((m, at)) = guard.as_ref()
        && at.elapsed() < METADATA_TTL
    {
        return Ok(m.clone());
    }
    let url = match well_known {
        Some(u) => u.to_owned(),
        None => format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    };
    let doc = get_json(client, "discovery", &url).await?;
    let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    let found = s("issuer").unwrap_or_default();
    let templated = tenant_template && found.contains(TENANT_PLACEHOLDER);
    if !templated && normalise_issuer(&found) != normalise_issuer(issuer) {
        return Err(OAuthError::InvalidResponse {
            step: "discovery",
            reason: format!("issuer {found:?} does not match the configured {issuer:?}"),
        });
    }
    let meta = Arc::new(Metadata {
        issuer: found,
        authorization_endpoint: s("authorization_endpoint"),
        token_endpoint: s("token_endpoint"),
        userinfo_endpoint: s("userinfo_endpoint"),
        jwks_uri: s("jwks_uri"),
        end_session_endpoint: s("end_session_endpoint"),
        id_token_signing_alg_values_supported: doc
            .get("id_token_signing_alg_values_supported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            }),
        authorization_response_iss_parameter_supported: doc
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    });
    if let Ok(mut guard) = caches.metadata.write() {
        *guard = Some((meta.clone(), Instant::now()));
    }
    Ok(meta)
}

/// The provider's JWK Set, cached; `refresh` refetches (at most every
/// [`JWKS_REFETCH_INTERVAL`]) after an unknown `kid`.
pub(crate) async fn jwks(
    client: &dyn HttpClient,
    caches: &ProviderCaches,
    jwks_uri: &str,
    refresh: bool,
) -> Result<Arc<id_token::Jwks>, OAuthError> {
    if let Ok(guard) = caches.jwks.read()
        && let Some((k, at)) = guard.as_ref()
    {
        let fresh = at.elapsed() < METADATA_TTL;
        let may_refetch = at.elapsed() >= JWKS_REFETCH_INTERVAL;
        if fresh && !(refresh && may_refetch) {
            return Ok(k.clone());
        }
    }
    let req = http::Request::get(jwks_uri)
        .header(
            http::header::ACCEPT,
            "application/json, application/jwk-set+json",
        )
        .body(Bytes::new())
        .map_err(|e| http_err("jwks")(Box::new(e)))?;
    let resp = client.send(req).await.map_err(http_err("jwks"))?;
    if resp.status() != http::StatusCode::OK {
        return Err(OAuthError::InvalidResponse {
            step: "jwks",
            reason: format!("HTTP {}", resp.status().as_u16()),
        });
    }
    let set = Arc::new(id_token::Jwks::from_json(resp.body())?);
    if let Ok(mut guard) = caches.jwks.write() {
        *guard = Some((set.clone(), Instant::now()));
    }
    Ok(set)
}

/// Percent-encoding with space as `+` (`application/x-www-form-urlencoded`), as used for
/// `client_secret_basic` credentials.
pub(crate) fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
