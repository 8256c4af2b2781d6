//! The relying parties authcore signs users in for: `[[oidc_provider.clients]]` as written
//! ([`ClientConfig`]), validated once at start-up into [`Clients`] (the error names the
//! client and what to fix). Pure data and checks.

use std::collections::{BTreeSet, HashMap};

use authcore::env::Env;
use authcore::oauth::id_token::Jwks;

use serde::Deserialize;
use serde_json::Value;
use subtle::ConstantTimeEq;

use crate::access::AllowedUsers;
use authcore::adapter::StoredClient;

/// The scopes authcore knows: `openid` (the subject), `profile` (`name`, `picture`),
/// `email` (`email`, `email_verified`), `groups` (`groups`), `organizations`
/// (`organizations`, when the handler has organizations on), `offline_access` (a refresh
/// token, OpenID Connect Core §11; for clients with the `refresh_token` grant).
pub const SCOPES: [&str; 6] = [
    "openid",
    "profile",
    "email",
    "groups",
    "organizations",
    "offline_access",
];

/// The grant types a client may be given (RFC 6749 §4.1, §6, §4.4; RFC 8628 §3.4).
pub const GRANT_TYPES: [&str; 4] = [
    "authorization_code",
    "refresh_token",
    "client_credentials",
    DEVICE_CODE_GRANT,
];

/// The `grant_type` of the device authorization grant (RFC 8628 §3.4).
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

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
    /// use PKCE. `AUTHCORE_OIDC_CLIENT_<ID>_SECRET` wins over it ([`secret_var`]).
    pub secret: Option<ClientSecret>,
    /// How the client authenticates at the token endpoint: `client_secret_basic` (the
    /// default with a secret), `client_secret_post`, `private_key_jwt` (a JWT signed with
    /// one of its [`jwks`](Self::jwks), RFC 7523 §2.2; the default with keys), or `none`
    /// (public clients).
    pub token_endpoint_auth_method: Option<String>,
    /// The client's public keys, a JWK Set as JSON (`{"keys": [...]}`), for
    /// `private_key_jwt`.
    pub jwks: Option<String>,
    /// The algorithm its ID tokens and logout tokens are signed with (`EdDSA`, `Ed25519`
    /// (an Ed25519 key's signatures under their fully specified name, RFC 9864), `ES256` or
    /// `RS256`; default: that of the first signing key). A signing key of that algorithm
    /// must be configured.
    pub id_token_signed_response_alg: Option<String>,
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
    /// Whether its authorization requests must be pushed first (RFC 9126 §6): a plain
    /// request to the authorization endpoint is refused, only a `request_uri` from
    /// [`PAR_PATH`](crate::PAR_PATH) is taken. Off by default (both are taken).
    #[serde(default)]
    pub require_pushed_authorization_requests: bool,
    /// Lifetime of its ID tokens in seconds (default: `[oidc_provider] id_token_ttl`).
    pub id_token_ttl: Option<i64>,
    /// Lifetime of its access tokens in seconds (default: `[oidc_provider]
    /// access_token_ttl`).
    pub access_token_ttl: Option<i64>,
    /// Lifetime of its refresh tokens in seconds, renewed at each use (default:
    /// `[oidc_provider] refresh_token_ttl`).
    pub refresh_token_ttl: Option<i64>,
    /// Users in one of these groups (those of the `groups` claim) may use it. With any of
    /// `allowed_groups`, `allowed_roles` and `allowed_organizations` set, a user matching
    /// none of their entries gets no code (`access_denied`) and no refreshed token.
    #[serde(default)]
    pub allowed_groups: Vec<String>,
    /// Members with one of these roles may use it: `role` (in any organization) or
    /// `slug:role` (in the organization of that slug). Role names are compared exactly,
    /// and `owner` is a role of its own (list it too where owners are meant).
    #[serde(default)]
    pub allowed_roles: Vec<String>,
    /// Members of these organizations (by slug), whatever their roles, may use it.
    #[serde(default)]
    pub allowed_organizations: Vec<String>,
    /// Whether its tokens must be bound to a key of its own (RFC 9449 §5.2): a token
    /// request without a DPoP proof is refused. Off by default: a client that sends a
    /// proof gets bound tokens anyway.
    #[serde(default)]
    pub dpop_bound_access_tokens: bool,
    /// What its access tokens are: `jwt` (the default: a signed JWT, RFC 9068, that an API
    /// can check with the provider's keys) or `opaque` (sealed under the auth secret: they
    /// say nothing to the client or an API, which asks the introspection endpoint, RFC
    /// 7662; no signature is made for them).
    pub access_token_format: Option<String>,
}

/// A client secret as configured: its `Debug` prints `[redacted]`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// The secret `value`.
    pub fn new(value: impl Into<String>) -> Self {
        ClientSecret(value.into())
    }

    /// The value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for ClientSecret {
    fn from(value: String) -> Self {
        ClientSecret(value)
    }
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How long tokens live, in seconds: the provider's defaults, or one client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// ID tokens.
    pub id_token: i64,
    /// Access tokens.
    pub access_token: i64,
    /// Refresh tokens (each use gives a new one, for as long again).
    pub refresh_token: i64,
}

impl Lifetimes {
    /// The longest of each (how long a revocation must be remembered).
    pub fn longest(self, other: Lifetimes) -> Lifetimes {
        Lifetimes {
            id_token: self.id_token.max(other.id_token),
            access_token: self.access_token.max(other.access_token),
            refresh_token: self.refresh_token.max(other.refresh_token),
        }
    }
}

/// Token lifetimes as written (`None`: the default), each checked against its bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LifetimeSettings {
    id_token: Option<i64>,
    access_token: Option<i64>,
    refresh_token: Option<i64>,
}

impl LifetimeSettings {
    /// The settings named `id_token_ttl`, `access_token_ttl`, `refresh_token_ttl`; the
    /// message names the one out of bounds.
    pub(crate) fn new(
        id_token: Option<i64>,
        access_token: Option<i64>,
        refresh_token: Option<i64>,
    ) -> Result<Self, String> {
        let bounded = |v: Option<i64>, name: &str, max: i64| match v {
            Some(t) if !(1..=max).contains(&t) => {
                Err(format!("{name} = {t}: between 1 and {max} seconds"))
            }
            v => Ok(v),
        };
        Ok(LifetimeSettings {
            id_token: bounded(id_token, "id_token_ttl", 86_400)?,
            access_token: bounded(access_token, "access_token_ttl", 86_400)?,
            refresh_token: bounded(refresh_token, "refresh_token_ttl", 365 * 86_400)?,
        })
    }

    /// These settings over `defaults`.
    pub(crate) fn over(self, defaults: Lifetimes) -> Lifetimes {
        Lifetimes {
            id_token: self.id_token.unwrap_or(defaults.id_token),
            access_token: self.access_token.unwrap_or(defaults.access_token),
            refresh_token: self.refresh_token.unwrap_or(defaults.refresh_token),
        }
    }
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
    /// The device authorization grant (RFC 8628): a device without a browser shows a
    /// code the user confirms elsewhere.
    DeviceCode,
}

impl GrantType {
    /// The grant type of a `grant_type` value.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "authorization_code" => Some(GrantType::AuthorizationCode),
            "refresh_token" => Some(GrantType::RefreshToken),
            "client_credentials" => Some(GrantType::ClientCredentials),
            DEVICE_CODE_GRANT => Some(GrantType::DeviceCode),
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
    /// A JWT signed with one of the client's keys (`client_assertion`, RFC 7523 §2.2).
    PrivateKeyJwt,
    /// A public client: `client_id` only, and PKCE.
    None,
}

impl AuthMethod {
    /// The registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
            AuthMethod::None => "none",
        }
    }
}

/// The longest a client assertion may be valid (seconds): its `jti` is remembered until it
/// expires.
pub const MAX_ASSERTION_SECS: i64 = 600;

/// Clock difference allowed for an assertion's `iat` and `nbf` (seconds).
const ASSERTION_LEEWAY_SECS: i64 = 60;

/// The algorithms a client assertion may be signed with: asymmetric ones only.
pub const ASSERTION_ALGS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

/// The signing algorithms a client may ask its ID tokens in: `Ed25519` is the fully
/// specified name of the signatures of an Ed25519 key (RFC 9864 §2.2), `EdDSA` its older one.
pub const ID_TOKEN_ALGS: [&str; 4] = ["EdDSA", "Ed25519", "ES256", "RS256"];

/// What a client's secret is checked against.
#[derive(Clone)]
enum Secret {
    /// The configured secret itself.
    Plain(String),
    /// A stored client's: the SHA-256 of its secret
    /// ([`client_secret_matches`](authcore::adapter::client_secret_matches)).
    Stored(String),
}

/// A validated client.
#[derive(Clone)]
pub struct Client {
    id: String,
    name: String,
    secret: Option<Secret>,
    auth_method: AuthMethod,
    /// Its keys, for `private_key_jwt`.
    keys: Option<std::sync::Arc<Jwks>>,
    id_token_alg: Option<&'static str>,
    redirect_uris: Vec<String>,
    post_logout_redirect_uris: Vec<String>,
    scopes: BTreeSet<String>,
    grant_types: BTreeSet<GrantType>,
    backchannel_logout_uri: Option<String>,
    consent: bool,
    require_pushed: bool,
    lifetimes: LifetimeSettings,
    allowed: AllowedUsers,
    dpop_bound: bool,
    opaque_access_tokens: bool,
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

    /// Whether it is a public client (no secret, no keys: PKCE is required).
    pub fn is_public(&self) -> bool {
        self.auth_method == AuthMethod::None
    }

    /// Its keys, for `private_key_jwt`.
    #[cfg(test)]
    pub fn keys(&self) -> Option<&Jwks> {
        self.keys.as_deref()
    }

    /// The algorithm its ID tokens are signed with, if it asked for one.
    pub fn id_token_alg(&self) -> Option<&'static str> {
        self.id_token_alg
    }

    /// How long its tokens live: its own settings over the provider's `defaults`.
    pub fn lifetimes(&self, defaults: Lifetimes) -> Lifetimes {
        self.lifetimes.over(defaults)
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

    /// Whether its authorization requests must be pushed (RFC 9126 §6).
    pub fn requires_pushed_requests(&self) -> bool {
        self.require_pushed
    }

    /// The client, its authorization requests to be pushed when `required` (the
    /// provider-wide setting over a stored client's).
    pub(crate) fn pushing_required(mut self, required: bool) -> Self {
        self.require_pushed |= required;
        self
    }

    /// The users who may use it.
    pub fn allowed_users(&self) -> &AllowedUsers {
        &self.allowed
    }

    /// Whether its token requests must carry a DPoP proof (`dpop_bound_access_tokens`).
    pub fn requires_dpop(&self) -> bool {
        self.dpop_bound
    }

    /// Whether its access tokens are opaque (`access_token_format = "opaque"`).
    pub fn opaque_access_tokens(&self) -> bool {
        self.opaque_access_tokens
    }

    /// Where it takes logout tokens, if anywhere.
    pub fn backchannel_logout_uri(&self) -> Option<&str> {
        self.backchannel_logout_uri.as_deref()
    }

    /// The `jti` and `exp` of `assertion`, a `private_key_jwt` client assertion (RFC 7523
    /// §3, OpenID Connect Core §9) when it holds: signed with one of the client's keys
    /// (never with a secret or `none`), `iss` and `sub` the client, `aud` the `issuer`
    /// alone, as a string (not the endpoint's URL: an assertion a client made for another
    /// provider that names this one's endpoint must not pass here, the "audience
    /// injection" of draft-ietf-oauth-rfc7523bis §4), unexpired at `now` and expiring
    /// within [`MAX_ASSERTION_SECS`], not issued or valid only in the future, with a `jti`
    /// (the caller makes sure it is used once). The error says what failed, for the log.
    pub fn verify_assertion(
        &self,
        assertion: &str,
        issuer: &str,
        now: i64,
    ) -> Result<(String, i64), &'static str> {
        use authcore::oauth::id_token::verify_signed_userinfo;
        let keys = self.keys.as_deref().ok_or("the client has no keys")?;
        let algs = ASSERTION_ALGS.map(str::to_owned);
        let claims = verify_signed_userinfo(assertion, keys, &self.id, issuer, &algs)
            .map_err(|_| "the signature or a claim does not verify")?;
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        if text("aud") != Some(issuer) {
            return Err("aud must be the issuer, as a string");
        }
        let number = |name: &str| claims.get(name).and_then(Value::as_i64);
        if text("iss") != Some(self.id.as_str()) || text("sub") != Some(self.id.as_str()) {
            return Err("iss and sub must be the client id");
        }
        let exp = number("exp").ok_or("no exp")?;
        if exp <= now {
            return Err("expired");
        }
        if exp > now + MAX_ASSERTION_SECS {
            return Err("exp is too far ahead");
        }
        let future = |name: &str| number(name).is_some_and(|t| t > now + ASSERTION_LEEWAY_SECS);
        if future("iat") || future("nbf") {
            return Err("issued or valid only in the future");
        }
        match text("jti") {
            Some(jti) if !jti.is_empty() && jti.len() <= 256 => Ok((jti.to_owned(), exp)),
            _ => Err("no jti (1 to 256 characters)"),
        }
    }

    /// Whether `secret` is its secret (compared in constant time); `false` for a public
    /// client.
    pub fn secret_matches(&self, secret: &str) -> bool {
        match &self.secret {
            Some(Secret::Plain(s)) => bool::from(s.as_bytes().ct_eq(secret.as_bytes())),
            Some(Secret::Stored(hash)) => authcore::adapter::client_secret_matches(hash, secret),
            None => false,
        }
    }

    /// A client made at run time by administrators, validated as a configured one is;
    /// its secret is checked against the stored SHA-256. What is wrong, if it cannot be
    /// used.
    pub fn from_stored(stored: &StoredClient) -> Result<Client, String> {
        let public = stored.token_endpoint_auth_method == "none";
        // The validation of a configured client, with a stand-in for the secret that is
        // replaced by the stored hash below.
        let config = ClientConfig {
            id: stored.client_id.clone(),
            name: Some(stored.name.clone()),
            secret: (!public).then(|| ClientSecret::new("-".repeat(MIN_SECRET_LEN))),
            token_endpoint_auth_method: Some(stored.token_endpoint_auth_method.clone()),
            redirect_uris: stored.redirect_uris.clone(),
            post_logout_redirect_uris: stored.post_logout_redirect_uris.clone(),
            grant_types: stored.grant_types.clone(),
            scopes: stored.scopes.clone(),
            dpop_bound_access_tokens: stored.dpop_bound_access_tokens,
            require_pushed_authorization_requests: stored.require_pushed_authorization_requests,
            access_token_format: stored.access_token_format.clone(),
            ..ClientConfig::default()
        };
        let mut client = Clients::client(&config)?;
        client.secret = match (public, &stored.secret_hash) {
            (true, _) => None,
            (false, Some(hash)) => Some(Secret::Stored(hash.clone())),
            (false, None) => return Err("a confidential client without a secret".into()),
        };
        Ok(client)
    }
}

/// What is wrong with a client made at run time, if the provider could not use it: the
/// check administrators' creations pass
/// ([`Admins::client_check`](authcore::admin::Admins::client_check)), so that a client
/// made is a client that works.
pub fn check_stored_client(stored: &StoredClient) -> Result<(), String> {
    Client::from_stored(stored).map(|_| ())
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
pub struct Clients(HashMap<String, std::sync::Arc<Client>>);

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
            clients.insert(client.id.clone(), std::sync::Arc::new(client));
        }
        Ok(Clients(clients))
    }

    fn client(c: &ClientConfig) -> Result<Client, String> {
        if c.id.is_empty() || c.id.len() > 128 || c.id.chars().any(|ch| ch.is_control()) {
            return Err("the id must be 1 to 128 printable characters".into());
        }
        let secret = c
            .secret
            .as_ref()
            .map(|s| s.expose().to_owned())
            .filter(|s| !s.is_empty());
        if let Some(s) = &secret
            && s.len() < MIN_SECRET_LEN
        {
            return Err(format!(
                "the secret is shorter than {MIN_SECRET_LEN} characters (make one with `openssl rand -hex 32`)"
            ));
        }
        let keys = match c.jwks.as_deref() {
            None => None,
            Some(json) => {
                let keys = Jwks::from_json(json.as_bytes())
                    .map_err(|e| format!("jwks: {e} (give a JWK Set: {{\"keys\": [...]}})"))?;
                if keys.is_empty() {
                    return Err(
                        "jwks has no usable public signature key (RSA, P-256, P-384 or Ed25519)"
                            .into(),
                    );
                }
                Some(std::sync::Arc::new(keys))
            }
        };
        let id_token_alg =
            match c.id_token_signed_response_alg.as_deref() {
                None => None,
                Some(alg) => Some(ID_TOKEN_ALGS.into_iter().find(|a| *a == alg).ok_or_else(
                    || {
                        format!(
                            "id_token_signed_response_alg {alg:?}: use one of {}",
                            ID_TOKEN_ALGS.join(", ")
                        )
                    },
                )?),
            };
        let auth_method = match (c.token_endpoint_auth_method.as_deref(), &secret, &keys) {
            (Some("private_key_jwt") | None, None, Some(_)) => AuthMethod::PrivateKeyJwt,
            (Some("private_key_jwt"), Some(_), _) => {
                return Err("a private_key_jwt client has keys (jwks), not a secret".into());
            }
            (Some("private_key_jwt"), None, None) => {
                return Err("private_key_jwt needs the client's public keys (jwks)".into());
            }
            (_, _, Some(_)) => {
                return Err("jwks are for token_endpoint_auth_method = \"private_key_jwt\"".into());
            }
            (None | Some("client_secret_basic"), Some(_), None) => AuthMethod::ClientSecretBasic,
            (Some("client_secret_post"), Some(_), None) => AuthMethod::ClientSecretPost,
            (None | Some("none"), None, None) => AuthMethod::None,
            (Some("none"), Some(_), None) => {
                return Err(
                    "token_endpoint_auth_method = \"none\" is for clients without a secret".into(),
                );
            }
            (Some("client_secret_basic" | "client_secret_post"), None, None) => {
                return Err("this token_endpoint_auth_method needs a secret".into());
            }
            (Some(other), _, None) => {
                return Err(format!(
                    "token_endpoint_auth_method {other:?}: use client_secret_basic, client_secret_post, private_key_jwt or none"
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
        let device = grant_types.contains(&GrantType::DeviceCode);
        if grant_types.contains(&GrantType::RefreshToken) && !code && !device {
            return Err(
                "the refresh_token grant needs authorization_code too (or the device_code grant)"
                    .into(),
            );
        }
        if grant_types.contains(&GrantType::ClientCredentials) && auth_method == AuthMethod::None {
            return Err("the client_credentials grant is for clients with a secret or keys".into());
        }
        if code && c.redirect_uris.is_empty() {
            return Err("give at least one redirect_uris entry".into());
        }
        /// Each of `uris`, with the field it is in, for the error.
        fn named<'a>(
            field: &'static str,
            uris: &'a [String],
        ) -> impl Iterator<Item = (&'static str, &'a String)> {
            uris.iter().map(move |u| (field, u))
        }
        for (field, uri) in named("redirect_uris", &c.redirect_uris)
            .chain(named(
                "post_logout_redirect_uris",
                &c.post_logout_redirect_uris,
            ))
            .chain(named(
                "backchannel_logout_uri",
                c.backchannel_logout_uri.as_slice(),
            ))
        {
            redirect_uri_problem(uri).map_or(Ok(()), |p| Err(format!("{field} {uri:?}: {p}")))?;
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
        if (code || device) && !scopes.contains("openid") {
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
            secret: secret.map(Secret::Plain),
            auth_method,
            keys,
            id_token_alg,
            redirect_uris: c.redirect_uris.clone(),
            post_logout_redirect_uris: c.post_logout_redirect_uris.clone(),
            scopes,
            grant_types,
            backchannel_logout_uri: c.backchannel_logout_uri.clone(),
            consent: c.consent,
            require_pushed: c.require_pushed_authorization_requests,
            lifetimes: LifetimeSettings::new(
                c.id_token_ttl,
                c.access_token_ttl,
                c.refresh_token_ttl,
            )?,
            allowed: AllowedUsers::new(
                &c.allowed_groups,
                &c.allowed_roles,
                &c.allowed_organizations,
            )?,
            dpop_bound: c.dpop_bound_access_tokens,
            opaque_access_tokens: match c.access_token_format.as_deref() {
                None | Some("jwt") => false,
                Some("opaque") => true,
                Some(other) => {
                    return Err(format!(
                        "access_token_format = {other:?}: it is \"jwt\" (the default) or \"opaque\""
                    ));
                }
            },
        })
    }

    /// The client `id`.
    pub fn get(&self, id: &str) -> Option<&Client> {
        self.0.get(id).map(|c| &**c)
    }

    /// The client `id`, shared.
    pub(crate) fn shared(&self, id: &str) -> Option<std::sync::Arc<Client>> {
        self.0.get(id).cloned()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every client.
    pub fn iter(&self) -> impl Iterator<Item = &Client> {
        self.0.values().map(|c| &**c)
    }
}

use authcore::adapter::redirect_uri_problem;

/// The variable with clients as JSON: an array of objects with the keys of a
/// `[[oidc_provider.clients]]` table, added to the file's.
pub const CLIENTS_VAR: &str = "AUTHCORE_OIDC_CLIENTS";

/// The variable that holds client `id`'s secret: `AUTHCORE_OIDC_CLIENT_<ID>_SECRET`, the id
/// in capitals with every character but letters and digits as `_` (`my-app` →
/// `AUTHCORE_OIDC_CLIENT_MY_APP_SECRET`).
pub fn secret_var(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("AUTHCORE_OIDC_CLIENT_{id}_SECRET")
}

/// Puts the environment on top of the file's clients, as for every other setting (a
/// variable that is set wins): the clients of [`CLIENTS_VAR`] are added, and each client's
/// [`secret_var`] sets its secret, so that secrets can stay out of the file. A variable
/// naming two clients (`a-b` and `a_b`) is refused. Errors never repeat a value.
pub fn apply_env(clients: &mut Vec<ClientConfig>, env: &Env) -> Result<(), String> {
    if let Some(json) = env.get(CLIENTS_VAR).filter(|v| !v.trim().is_empty()) {
        let more: Vec<ClientConfig> = serde_json::from_str(json).map_err(|e| {
            format!(
                "{CLIENTS_VAR}: not a JSON array of client objects with the keys of [[oidc_provider.clients]] ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            )
        })?;
        clients.extend(more);
    }
    let vars: Vec<String> = clients.iter().map(|c| secret_var(&c.id)).collect();
    for (i, var) in vars.iter().enumerate() {
        let Some(secret) = env.get(var) else {
            continue;
        };
        if vars.iter().filter(|v| *v == var).count() > 1 {
            return Err(format!(
                "{var} would set the secret of more than one client: give them ids that differ in letters or digits"
            ));
        }
        clients[i].secret = Some(secret.to_owned().into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A client secret never reaches a log line through `Debug`, alone or in its client.
    #[test]
    fn client_secrets_are_not_displayed() {
        let secret = "a-client-secret-that-must-stay-out-of-logs";
        assert_eq!(format!("{:?}", ClientSecret::new(secret)), "[redacted]");
        let client = ClientConfig {
            secret: Some(ClientSecret::new(secret)),
            ..config("app")
        };
        assert!(!format!("{client:?}").contains(secret));
    }

    /// RFC 8037 appendix A.2's public key.
    const JWKS: &str = r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

    fn config(id: &str) -> ClientConfig {
        ClientConfig {
            id: id.into(),
            secret: Some("s".repeat(MIN_SECRET_LEN).into()),
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
        let keyed = Clients::new(vec![ClientConfig {
            secret: None,
            jwks: Some(JWKS.into()),
            id_token_signed_response_alg: Some("RS256".into()),
            grant_types: vec!["authorization_code".into(), "client_credentials".into()],
            ..config("keyed")
        }])
        .unwrap();
        let keyed = keyed.get("keyed").unwrap();
        assert_eq!(keyed.auth_method(), AuthMethod::PrivateKeyJwt);
        assert!(!keyed.is_public());
        assert_eq!(keyed.keys().map(Jwks::len), Some(1));
        assert_eq!(keyed.id_token_alg(), Some("RS256"));
        assert!(!keyed.opaque_access_tokens(), "signed tokens by default");
        let opaque = ClientConfig {
            access_token_format: Some("opaque".into()),
            ..config("opaque")
        };
        let opaque = Clients::new(vec![opaque]).unwrap();
        assert!(opaque.get("opaque").unwrap().opaque_access_tokens());
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
                    secret: Some("short".to_owned().into()),
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
                    token_endpoint_auth_method: Some("tls_client_auth".into()),
                    ..config("x")
                },
                "use client_secret_basic, client_secret_post, private_key_jwt or none",
            ),
            (
                ClientConfig {
                    token_endpoint_auth_method: Some("private_key_jwt".into()),
                    ..config("x")
                },
                "has keys (jwks), not a secret",
            ),
            (
                ClientConfig {
                    secret: None,
                    token_endpoint_auth_method: Some("private_key_jwt".into()),
                    ..config("x")
                },
                "needs the client's public keys",
            ),
            (
                ClientConfig {
                    jwks: Some(JWKS.into()),
                    ..config("x")
                },
                "jwks are for token_endpoint_auth_method",
            ),
            (
                ClientConfig {
                    secret: None,
                    jwks: Some("{\"keys\": 1}".into()),
                    ..config("x")
                },
                "jwks: malformed",
            ),
            (
                ClientConfig {
                    secret: None,
                    jwks: Some(r#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#.into()),
                    ..config("x")
                },
                "no usable public signature key",
            ),
            (
                ClientConfig {
                    id_token_signed_response_alg: Some("HS256".into()),
                    ..config("x")
                },
                "id_token_signed_response_alg \"HS256\": use one of EdDSA, Ed25519, ES256, RS256",
            ),
            (
                ClientConfig {
                    access_token_format: Some("JWT".into()),
                    ..config("x")
                },
                "access_token_format = \"JWT\": it is \"jwt\" (the default) or \"opaque\"",
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
                "backchannel_logout_uri \"http://app.example.com/bcl\": http only on a loopback host",
            ),
            (
                ClientConfig {
                    backchannel_logout_uri: Some("https://app.example.com/bcl#f".into()),
                    ..config("x")
                },
                "backchannel_logout_uri \"https://app.example.com/bcl#f\": no fragment",
            ),
            (
                ClientConfig {
                    access_token_ttl: Some(0),
                    ..config("x")
                },
                "access_token_ttl = 0: between 1 and 86400 seconds",
            ),
            (
                ClientConfig {
                    refresh_token_ttl: Some(366 * 86_400),
                    ..config("x")
                },
                "refresh_token_ttl = 31622400: between 1 and 31536000 seconds",
            ),
            (
                ClientConfig {
                    id_token_ttl: Some(-5),
                    ..config("x")
                },
                "id_token_ttl = -5: between 1 and 86400 seconds",
            ),
            (
                ClientConfig {
                    allowed_roles: vec!["acme:Admin".into()],
                    ..config("x")
                },
                "allowed_roles \"acme:Admin\"",
            ),
            (
                ClientConfig {
                    allowed_organizations: vec!["Acme Inc".into()],
                    ..config("x")
                },
                "allowed_organizations \"Acme Inc\"",
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
    fn a_clients_lifetimes_stand_over_the_providers() {
        let defaults = Lifetimes {
            id_token: 300,
            access_token: 600,
            refresh_token: 86_400,
        };
        let clients = Clients::new(vec![
            config("plain"),
            ClientConfig {
                access_token_ttl: Some(60),
                refresh_token_ttl: Some(7 * 86_400),
                ..config("short")
            },
        ])
        .unwrap();
        let of = |id: &str| clients.get(id).unwrap().lifetimes(defaults);
        assert_eq!(of("plain"), defaults);
        let short = of("short");
        assert_eq!(
            (short.id_token, short.access_token, short.refresh_token),
            (300, 60, 7 * 86_400)
        );
        assert_eq!(
            defaults.longest(short),
            Lifetimes {
                refresh_token: 7 * 86_400,
                ..defaults
            }
        );
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

    #[test]
    fn the_environment_adds_clients_and_sets_secrets() {
        let secret = "e".repeat(MIN_SECRET_LEN);
        let env = Env::from_pairs([
            (
                CLIENTS_VAR,
                r#"[{"id": "from-env", "redirect_uris": ["https://env.example.com/cb"]}]"#
                    .to_owned(),
            ),
            ("AUTHCORE_OIDC_CLIENT_MY_APP_SECRET", secret.clone()),
            ("AUTHCORE_OIDC_CLIENT_FROM_ENV_SECRET", secret.clone()),
        ]);
        let mut configs = vec![ClientConfig {
            secret: Some("in the file, replaced".to_owned().into()),
            ..config("my-app")
        }];
        apply_env(&mut configs, &env).unwrap();
        let clients = Clients::new(configs).unwrap();
        for id in ["my-app", "from-env"] {
            let c = clients.get(id).unwrap();
            assert!(c.secret_matches(&secret), "{id}");
            assert_eq!(c.auth_method(), AuthMethod::ClientSecretBasic);
        }
        assert_eq!(secret_var("a.b-C9"), "AUTHCORE_OIDC_CLIENT_A_B_C9_SECRET");

        // Two clients one variable would name; JSON that is not clients, without echoing it.
        let mut two = vec![config("a-b"), config("a_b")];
        let env = Env::from_pairs([("AUTHCORE_OIDC_CLIENT_A_B_SECRET", secret.clone())]);
        assert!(
            apply_env(&mut two, &env)
                .unwrap_err()
                .contains("more than one client")
        );
        let mut none = Vec::new();
        for bad in [
            r#"{"id": "sekrit-value"}"#,
            r#"[{"id": "x", "secret": ["sekrit-value"]}]"#,
            r#"[{"id": "x", "sekrit-value": 1}]"#,
            "[{\"id\": \"sekrit-value",
        ] {
            let env = Env::from_pairs([(CLIENTS_VAR, bad)]);
            let err = apply_env(&mut none, &env).unwrap_err();
            assert!(err.starts_with(CLIENTS_VAR), "{err}");
            assert!(!err.contains("sekrit"), "{err}");
        }
    }
}
