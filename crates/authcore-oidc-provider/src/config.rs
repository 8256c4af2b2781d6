//! The provider's configuration: the `[oidc_provider]` section as written
//! ([`ProviderSection`]), validated once at start-up into the [`OpenIdProvider`].

use std::path::PathBuf;

use authcore::env::Env;
use authcore_keys::{KeyError, SigningKeys};
use serde::Deserialize;

use crate::clients::{self, ClientConfig, ClientError, Clients, LifetimeSettings, Lifetimes};
use crate::grant::AccessTokenClaims;
use crate::groups;
use crate::{ISSUER_PATH, USERINFO_PATH};

/// How long an authorization code may be redeemed (seconds).
pub const CODE_TTL_SECS: u64 = 60;

/// How long a pushed authorization request's `request_uri` may be used (seconds; RFC 9126
/// §2.2: short, the time for the client to send the browser on).
pub const PUSHED_REQUEST_TTL_SECS: u64 = 90;

/// Lifetime of ID tokens when `id_token_ttl` is not set (seconds).
pub const DEFAULT_ID_TOKEN_TTL_SECS: i64 = 300;

/// Lifetime of access tokens when `access_token_ttl` is not set (seconds).
pub const DEFAULT_ACCESS_TOKEN_TTL_SECS: i64 = 600;

/// Lifetime of refresh tokens when `refresh_token_ttl` is not set (seconds): each use gives
/// a new one for as long again.
pub const DEFAULT_REFRESH_TOKEN_TTL_SECS: i64 = 30 * 86_400;

/// The variable with the signing keys' paths, comma-separated (wins over `signing_keys`;
/// with it, the provider is on without an `[oidc_provider]` section).
pub const SIGNING_KEYS_VAR: &str = "AUTHCORE_OIDC_SIGNING_KEYS";

/// The `[oidc_provider]` section as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProviderSection {
    /// PKCS#8 PEM private keys (Ed25519, P-256 or RSA) that sign the tokens; the first
    /// signs, all are published at [`JWKS_PATH`](crate::JWKS_PATH) (rotation as for the gateway's keys).
    /// [`SIGNING_KEYS_VAR`] wins over it.
    #[serde(default)]
    pub signing_keys: Vec<PathBuf>,
    /// Lifetime of ID tokens in seconds (default 300).
    pub id_token_ttl: Option<i64>,
    /// Lifetime of access tokens in seconds (default 600).
    pub access_token_ttl: Option<i64>,
    /// Lifetime of refresh tokens in seconds (default 30 days), renewed at each use.
    pub refresh_token_ttl: Option<i64>,
    /// The relying parties ([`CLIENTS_VAR`](crate::CLIENTS_VAR) adds more).
    #[serde(default)]
    pub clients: Vec<ClientConfig>,
    /// Whether every client's authorization requests must be pushed first (RFC 9126 §6;
    /// default off: each client's own `require_pushed_authorization_requests`).
    #[serde(default)]
    pub require_pushed_authorization_requests: bool,
    /// The groups the `groups` scope tells of, with their members (by linked account, or by a verified address).
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, Vec<String>>,
}

/// Why the provider's configuration cannot be used (the message says what to fix).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// A client.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The signing keys.
    #[error("[oidc_provider] {0}")]
    Key(#[from] KeyError),
    /// Anything else.
    #[error("[oidc_provider] {0}")]
    Invalid(String),
}

/// The validated provider.
#[derive(Debug)]
pub struct OpenIdProvider {
    pub(crate) issuer: String,
    pub(crate) keys: SigningKeys,
    pub(crate) clients: Clients,
    /// The lifetimes of clients that set none.
    pub(crate) lifetimes: Lifetimes,
    /// The longest of any client's: how long a revocation is remembered.
    pub(crate) longest: Lifetimes,
    /// `[oidc_provider.groups]`.
    pub(crate) groups: groups::Groups,
    /// Every client's authorization requests must be pushed (RFC 9126 §6).
    pub(crate) require_pushed: bool,
    /// A client wants its ID tokens signed as `Ed25519` (RFC 9864): the JWK Set leaves the
    /// Ed25519 keys' `alg` out, as they sign under both names.
    pub(crate) ed25519_named: bool,
    /// What an access token must show (issuer, the userinfo audience, expiry), made once.
    pub(crate) access_validation: jsonwebtoken::Validation,
    /// The access tokens whose signature was checked, or that were opened, lately.
    pub(crate) verified: crate::verified::VerifiedTokens,
}

impl OpenIdProvider {
    /// Validates the section once, at start-up; the issuer is `AUTH_URL`'s origin and
    /// [`ISSUER_PATH`](crate::ISSUER_PATH).
    pub fn new(env: &Env, mut section: ProviderSection) -> Result<Self, ProviderError> {
        let invalid = |m: &str| ProviderError::Invalid(m.to_owned());
        let origin = env
            .get("AUTH_URL")
            .and_then(|u| url::Url::parse(u.trim()).ok())
            .filter(|u| u.has_host())
            .map(|u| u.origin().ascii_serialization())
            .ok_or_else(|| {
                invalid("needs AUTH_URL (or [auth] url): the issuer is its origin and /oidc")
            })?;
        if let Some(paths) = env.get(SIGNING_KEYS_VAR).filter(|v| !v.trim().is_empty()) {
            section.signing_keys = paths.split(',').map(|p| PathBuf::from(p.trim())).collect();
        }
        clients::apply_env(&mut section.clients, env).map_err(ProviderError::Invalid)?;
        if section.signing_keys.is_empty() {
            return Err(invalid(
                "signing_keys: give a PKCS#8 PEM key (`openssl genpkey -algorithm ed25519 -out oidc.pem`)",
            ));
        }
        let keys = SigningKeys::load(&section.signing_keys)?;
        let require_pushed = section.require_pushed_authorization_requests;
        for c in &mut section.clients {
            c.require_pushed_authorization_requests |= require_pushed;
        }
        let clients = Clients::new(section.clients)?;
        let algs = keys.algorithms();
        if let Some((client, alg)) = clients
            .iter()
            .filter_map(|c| c.id_token_alg().map(|alg| (c.id(), alg)))
            .find(|(_, alg)| !algs.contains(alg))
        {
            return Err(ProviderError::Invalid(format!(
                "client {client:?} wants {alg} ID tokens (id_token_signed_response_alg): add a signing key of that kind to signing_keys (RS256: `openssl genpkey -algorithm rsa -out oidc-rsa.pem`)"
            )));
        }
        let ed25519_named = clients
            .iter()
            .any(|c| c.id_token_alg() == Some(authcore_keys::ED25519));
        if clients.is_empty() {
            return Err(invalid(
                "no [[oidc_provider.clients]]: add the applications that sign in here",
            ));
        }
        let lifetimes = LifetimeSettings::new(
            section.id_token_ttl,
            section.access_token_ttl,
            section.refresh_token_ttl,
        )
        .map_err(ProviderError::Invalid)?
        .over(Lifetimes {
            id_token: DEFAULT_ID_TOKEN_TTL_SECS,
            access_token: DEFAULT_ACCESS_TOKEN_TTL_SECS,
            refresh_token: DEFAULT_REFRESH_TOKEN_TTL_SECS,
        });
        let longest = clients
            .iter()
            .fold(lifetimes, |l, c| l.longest(c.lifetimes(lifetimes)));
        let groups = groups::Groups::new(std::mem::take(&mut section.groups))
            .map_err(ProviderError::Invalid)?;
        let issuer = format!("{origin}{ISSUER_PATH}");
        let mut access_validation = keys.validation();
        access_validation.set_issuer(&[&issuer]);
        access_validation.set_audience(&[format!("{origin}{USERINFO_PATH}")]);
        access_validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        access_validation.leeway = 0;
        Ok(OpenIdProvider {
            access_validation,
            verified: crate::verified::VerifiedTokens::default(),
            issuer,
            keys,
            clients,
            lifetimes,
            longest,
            groups,
            require_pushed,
            ed25519_named,
        })
    }

    /// The claims of `token` when it is an access token one of the keys signed, for this
    /// issuer's userinfo audience, unexpired (revocations are the caller's to check).
    pub(crate) fn signed_access_token(&self, token: &str) -> Option<AccessTokenClaims> {
        self.keys
            .verify::<AccessTokenClaims>(token, "at+jwt", &self.access_validation)
    }

    /// How long `client`'s tokens live.
    pub(crate) fn lifetimes_of(&self, client: &clients::Client) -> Lifetimes {
        client.lifetimes(self.lifetimes)
    }

    /// The ids of the configured clients (for
    /// [`Admins::configured_clients`](authcore::admin::Admins::configured_clients): a client
    /// made at run time may not take one).
    pub fn client_ids(&self) -> impl Iterator<Item = &str> {
        self.clients.iter().map(|c| c.id())
    }

    /// The issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub(crate) fn url(&self, path: &str) -> String {
        let origin = self
            .issuer
            .strip_suffix(ISSUER_PATH)
            .unwrap_or(&self.issuer);
        format!("{origin}{path}")
    }
}
