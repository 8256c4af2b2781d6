//! authcore as an OpenID Provider (OpenID Connect Core 1.0) for other applications: they
//! sign their users in through authcore — with whatever authcore signs users in with —
//! by the authorization code flow with PKCE.
//!
//! Configured by `[oidc_provider]` (signing keys and `[[oidc_provider.clients]]`), served
//! under `<origin>/oidc`, the issuer: discovery ([`DISCOVERY_PATH`]), the JWK Set
//! ([`JWKS_PATH`]), authorization ([`AUTHORIZE_PATH`]: a code for the signed-in user, or
//! the sign-in page first and back), token ([`TOKEN_PATH`]: the code for an ID token, an
//! access token and, with `offline_access`, a refresh token rotated at each use; a service
//! client's own access token), userinfo ([`USERINFO_PATH`]), revocation, introspection,
//! RP-initiated logout, and back-channel logout to the clients a session signed in to when
//! it ends ([`BackChannelLogout`]). The protocol checks are pure functions over plain data
//! ([`request`], [`grant`], [`clients`], [`login_marker`]); this module is their I/O: the
//! session read, the sealed codes, refresh tokens and `prompt=login` markers and their
//! single-use marks, the signatures, the user read and the logout tokens' delivery.
//!
//! What is kept between requests lives in the handler's single-use store (memory, the
//! database, or Redis, shared by several instances): used codes and refresh tokens, revoked
//! tokens and grants, and which clients each session signed in to. The access each user
//! granted to each client (its scopes, which stand for the consent, and an epoch that a
//! revocation from the account page moves on, voiding every token of the client for the
//! user) lives in the adapter, with the users.
//!
//! Needs a database (the users and their ids) and second factors on (the default with a
//! database): sessions then record when and how their user signed in, for `auth_time`,
//! `amr`, `max_age` and `prompt=login`.

pub mod clients;
pub mod grant;
pub mod groups;
pub mod login_marker;
pub mod request;

use std::path::PathBuf;
use std::sync::Arc;

use askama::Template;
use authcore::Auth;
use authcore::ReadOptions;
use authcore::adapter::Adapter;
use authcore::env::Env;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::gateway::identity::{KeyError, SigningKeys};
use crate::gateway::time_now;
use clients::{
    AuthMethod, ClientConfig, ClientError, Clients, GrantType, LifetimeSettings, Lifetimes,
};
use grant::{
    AccessTokenClaims, CodeGrant, Grant, IdTokenClaims, LogoutTokenClaims, RefreshGrant, UserClaims,
};
use login_marker::{LoginMarker, SignIn};
use request::{AuthorizationRequest, Prompt, Refusal, ResponseMode};

/// The issuer's path under the server's origin.
pub const ISSUER_PATH: &str = "/oidc";
/// OpenID Provider metadata (OpenID Connect Discovery 1.0 §4).
pub const DISCOVERY_PATH: &str = "/oidc/.well-known/openid-configuration";
/// The authorization endpoint.
pub const AUTHORIZE_PATH: &str = "/oidc/authorize";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/oidc/token";
/// The userinfo endpoint.
pub const USERINFO_PATH: &str = "/oidc/userinfo";
/// The signing keys' public JWK Set.
pub const JWKS_PATH: &str = "/oidc/jwks";
/// Token revocation (RFC 7009).
pub const REVOCATION_PATH: &str = "/oidc/revoke";
/// Token introspection (RFC 7662).
pub const INTROSPECTION_PATH: &str = "/oidc/introspect";
/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
pub const LOGOUT_PATH: &str = "/oidc/logout";
/// Where authcore's sign-out page sends the browser back, on to the client.
pub const LOGGED_OUT_PATH: &str = "/oidc/logout/done";
/// Where the consent page's answer goes.
pub const CONSENT_PATH: &str = "/oidc/consent";

/// How long an authorization code may be redeemed (seconds).
pub const CODE_TTL_SECS: u64 = 60;
/// Lifetime of ID tokens when `id_token_ttl` is not set (seconds).
pub const DEFAULT_ID_TOKEN_TTL_SECS: i64 = 300;
/// Lifetime of access tokens when `access_token_ttl` is not set (seconds).
pub const DEFAULT_ACCESS_TOKEN_TTL_SECS: i64 = 600;
/// Lifetime of refresh tokens when `refresh_token_ttl` is not set (seconds): each use gives
/// a new one for as long again.
pub const DEFAULT_REFRESH_TOKEN_TTL_SECS: i64 = 30 * 86_400;
/// How long a logout token's delivery may take.
const LOGOUT_DELIVERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// The largest form the authorization and token endpoints read (bytes).
pub const MAX_FORM_BYTES: usize = 16 * 1024;

/// The salt of sealed authorization codes (a purpose of its own: no session token or check
/// cookie opens as a code).
const CODE_SALT: &str = "authcore.oidc-provider.code";
/// The salt of sealed refresh tokens.
const REFRESH_SALT: &str = "authcore.oidc-provider.refresh";
/// The salt of the consent page's ticket (the request it answers, for whom).
const CONSENT_SALT: &str = "authcore.oidc-provider.consent";
/// How long the consent page may stay open (seconds).
const CONSENT_TICKET_TTL_SECS: u64 = 600;
/// The salt of the sealed way back of a logout (its post-logout redirect URI and state).
const LOGOUT_SALT: &str = "authcore.oidc-provider.logout";
/// How long the sign-out page may take before the way back is void (seconds).
const LOGOUT_TTL_SECS: u64 = 600;
/// The query parameter the authorization endpoint adds to its own URL when it sends a
/// `prompt=login` request to sign in: a sealed [`LoginMarker`], bound to the request, to a
/// sign-in newer than the one present, and to one use.
const LOGIN_AFTER: &str = "authcore_login_after";
/// The salt of the sealed [`LOGIN_AFTER`] marker.
const LOGIN_AFTER_SALT: &str = "authcore.oidc-provider.login-after";
/// How long the sign-in asked for by `prompt=login` may take (seconds).
const LOGIN_AFTER_TTL_SECS: u64 = 3600;
/// The kind of the single-use marks of [`LOGIN_AFTER`] markers' nonces.
const USED_LOGIN_AFTER: &str = "oidc-provider-login-after";

/// The variable with the signing keys' paths, comma-separated (wins over `signing_keys`;
/// with it, the provider is on without an `[oidc_provider]` section).
pub const SIGNING_KEYS_VAR: &str = "AUTHCORE_OIDC_SIGNING_KEYS";

/// The `[oidc_provider]` section as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProviderSection {
    /// PKCS#8 PEM private keys (Ed25519, P-256 or RSA) that sign the tokens; the first
    /// signs, all are published at [`JWKS_PATH`] (rotation as for the gateway's keys).
    /// [`SIGNING_KEYS_VAR`] wins over it.
    #[serde(default)]
    pub signing_keys: Vec<PathBuf>,
    /// Lifetime of ID tokens in seconds (default 300).
    pub id_token_ttl: Option<i64>,
    /// Lifetime of access tokens in seconds (default 600).
    pub access_token_ttl: Option<i64>,
    /// Lifetime of refresh tokens in seconds (default 30 days), renewed at each use.
    pub refresh_token_ttl: Option<i64>,
    /// The relying parties ([`clients::CLIENTS_VAR`] adds more).
    #[serde(default)]
    pub clients: Vec<ClientConfig>,
    /// The groups the `groups` scope tells of, with their members ([`groups`]).
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
    issuer: String,
    keys: SigningKeys,
    clients: Clients,
    /// The lifetimes of clients that set none.
    lifetimes: Lifetimes,
    /// The longest of any client's: how long a revocation is remembered.
    longest: Lifetimes,
    /// `[oidc_provider.groups]`.
    groups: groups::Groups,
    /// What an access token must show (issuer, the userinfo audience, expiry), made once.
    access_validation: jsonwebtoken::Validation,
}

impl OpenIdProvider {
    /// Validates the section once, at start-up; the issuer is `AUTH_URL`'s origin and
    /// [`ISSUER_PATH`].
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
            issuer,
            keys,
            clients,
            lifetimes,
            longest,
            groups,
        })
    }

    /// How long `client`'s tokens live.
    fn lifetimes_of(&self, client: &clients::Client) -> Lifetimes {
        client.lifetimes(self.lifetimes)
    }

    /// The issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    fn url(&self, path: &str) -> String {
        let origin = self
            .issuer
            .strip_suffix(ISSUER_PATH)
            .unwrap_or(&self.issuer);
        format!("{origin}{path}")
    }

    /// The provider metadata (OpenID Connect Discovery 1.0 §3).
    pub fn metadata(&self) -> Value {
        let auth_methods = [
            AuthMethod::ClientSecretBasic.as_str(),
            AuthMethod::ClientSecretPost.as_str(),
            AuthMethod::PrivateKeyJwt.as_str(),
            AuthMethod::None.as_str(),
        ];
        json!({
            "issuer": self.issuer,
            "authorization_endpoint": self.url(AUTHORIZE_PATH),
            "token_endpoint": self.url(TOKEN_PATH),
            "userinfo_endpoint": self.url(USERINFO_PATH),
            "jwks_uri": self.url(JWKS_PATH),
            "end_session_endpoint": self.url(LOGOUT_PATH),
            "revocation_endpoint": self.url(REVOCATION_PATH),
            "introspection_endpoint": self.url(INTROSPECTION_PATH),
            "revocation_endpoint_auth_methods_supported": auth_methods,
            "introspection_endpoint_auth_methods_supported": auth_methods,
            "scopes_supported": clients::SCOPES,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": clients::GRANT_TYPES,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": self.keys.algorithms(),
            "token_endpoint_auth_methods_supported": auth_methods,
            "token_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "revocation_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "introspection_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "sid", "name", "picture", "email", "email_verified", "groups"],
            "acr_values_supported": grant::ACR_VALUES,
            "backchannel_logout_supported": true,
            "backchannel_logout_session_supported": true,
            "prompt_values_supported": ["none", "login", "consent"],
            "authorization_response_iss_parameter_supported": true,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
        })
    }
}

/// The state of the provider's routes.
#[derive(Clone)]
pub struct ProviderState {
    /// The authcore handler (session reads, the code's sealing and single-use mark).
    pub auth: Auth,
    /// The provider.
    pub provider: Arc<OpenIdProvider>,
    /// The users (the adapter the handler stores them in), with the access they granted to
    /// clients ([`AdapterMethod::APP_ACCESS`](authcore::adapter::AdapterMethod::APP_ACCESS)).
    pub users: Arc<dyn Adapter>,
}

impl std::fmt::Debug for ProviderState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderState")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// The provider's routes.
pub fn routes(state: ProviderState) -> axum::Router {
    use axum::routing::{get, post};
    axum::Router::new()
        .route(DISCOVERY_PATH, get(discovery))
        .route(JWKS_PATH, get(jwks))
        .route(AUTHORIZE_PATH, get(authorize).post(authorize))
        .route(TOKEN_PATH, post(token))
        .route(USERINFO_PATH, get(userinfo).post(userinfo))
        .route(LOGOUT_PATH, get(logout).post(logout))
        .route(REVOCATION_PATH, post(revoke))
        .route(INTROSPECTION_PATH, post(introspect))
        .route(LOGGED_OUT_PATH, get(logged_out))
        .route(CONSENT_PATH, post(consent))
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .with_state(state)
}

/// `value` as an `application/json` answer.
fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn no_store(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `GET /oidc/.well-known/openid-configuration`.
async fn discovery(State(s): State<ProviderState>) -> Response {
    let mut r = json_response(StatusCode::OK, &s.provider.metadata());
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=300"),
    );
    r
}

/// `GET /oidc/jwks`.
async fn jwks(State(s): State<ProviderState>) -> Response {
    (
        [
            (header::CACHE_CONTROL, "max-age=300"),
            (header::CONTENT_TYPE, "application/jwk-set+json"),
        ],
        s.provider.keys.jwks().to_string(),
    )
        .into_response()
}

/// The pairs of a form or query (invalid UTF-8 replaced, as the URL standard does).
fn pairs(bytes: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

/// The parameters of a request to an endpoint that takes both: a `POST`'s form, else the
/// query.
fn request_params(method: &Method, uri: &Uri, body: &[u8]) -> Vec<(String, String)> {
    if method == Method::POST {
        pairs(body)
    } else {
        pairs(uri.query().unwrap_or_default().as_bytes())
    }
}

/// Whether a name comes more than once (RFC 6749 §3.1: a repeated parameter is not picked
/// from).
fn has_repeats(params: &[(String, String)]) -> bool {
    let mut seen = std::collections::HashSet::new();
    params.iter().any(|(k, _)| !seen.insert(k.as_str()))
}

/// A request's parameters, each name at most once.
struct Params(Vec<(String, String)>);

impl Params {
    /// The parameters, or `None` when a name comes more than once.
    fn unique(pairs: Vec<(String, String)>) -> Option<Self> {
        (!has_repeats(&pairs)).then_some(Params(pairs))
    }

    /// The value of `name`.
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET` / `POST /oidc/authorize`.
async fn authorize(
    State(s): State<ProviderState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let params = request_params(&method, &uri, &body);
    // Our own marker is not the client's parameter.
    let marker: Option<LoginMarker> = params
        .iter()
        .find(|(k, _)| k == LOGIN_AFTER)
        .and_then(|(_, v)| s.unseal(v, LOGIN_AFTER_SALT));
    let client_params: Vec<(String, String)> = params
        .into_iter()
        .filter(|(k, _)| k != LOGIN_AFTER)
        .collect();
    let request = match request::validate(&client_params, &s.provider.clients) {
        Ok(r) => r,
        Err(Refusal::Shown(message)) => {
            tracing::warn!(%message, "oidc provider: authorization request refused");
            return shown_error(&message);
        }
        Err(Refusal::Redirected {
            redirect_uri,
            response_mode,
            error,
            description,
            state,
        }) => {
            tracing::info!(error, %description, "oidc provider: authorization request refused");
            let mut p = vec![
                ("error", error.to_owned()),
                ("error_description", description),
            ];
            p.extend(state.map(|st| ("state", st)));
            return s.provider.answer(&redirect_uri, response_mode, p);
        }
    };
    let lookup = match s
        .auth
        .read_session(&uri, &headers, &ReadOptions::default().with_session_id())
        .await
    {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "oidc provider: session lookup failed");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    let now = time_now();
    let auth_time = lookup
        .session
        .as_ref()
        .and_then(|s| s.sign_in())
        .and_then(|i| i.auth_time);
    let user = lookup
        .session
        .as_ref()
        .and_then(|s| s.user_id())
        .map(str::to_owned);
    let sign_in = SignIn {
        session_id: lookup.session_id.clone().filter(|_| user.is_some()),
        auth_time: auth_time.filter(|_| user.is_some()),
    };
    let signed_in_after = |t: i64| auth_time.is_some_and(|a| a >= t);
    let mut sign_in_again = user.is_none()
        || request
            .max_age
            .is_some_and(|m| !signed_in_after(now - i64::try_from(m).unwrap_or(i64::MAX)));
    if !sign_in_again && request.prompt == Prompt::Login {
        // Only the marker of this request, after a new sign-in, once.
        sign_in_again =
            match marker.filter(|m| m.admits(&request.client_id, &client_params, &sign_in)) {
                None => true,
                Some(m) => {
                    let ttl = std::time::Duration::from_secs(LOGIN_AFTER_TTL_SECS + 60);
                    match s.first_use(USED_LOGIN_AFTER, m.nonce(), ttl).await {
                        Ok(first) => !first,
                        Err(_) => return no_store(StatusCode::SERVICE_UNAVAILABLE.into_response()),
                    }
                }
            };
        if sign_in_again {
            tracing::info!(client = %request.client_id, "oidc provider: prompt=login without a new sign-in for this request: signing in again");
        }
    }
    let mut response = match (sign_in_again, user) {
        (true, _) if request.prompt == Prompt::None => s.provider.refuse(
            &request,
            "login_required",
            "no session, or not recent enough, and prompt=none",
        ),
        (true, _) => {
            // Back here after signing in: the same request, marked for prompt=login.
            let mut back = url::form_urlencoded::Serializer::new(String::new());
            back.extend_pairs(&client_params);
            if request.prompt == Prompt::Login {
                let Some(nonce) = random_token() else {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                };
                let marker =
                    LoginMarker::new(now, &request.client_id, &client_params, sign_in, nonce);
                let sealed = match serde_json::to_value(&marker) {
                    Ok(Value::Object(claims)) => s.auth.config().jwt().encode(
                        &claims,
                        LOGIN_AFTER_SALT,
                        LOGIN_AFTER_TTL_SECS,
                    ),
                    _ => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                };
                match sealed {
                    Ok(sealed) => {
                        back.append_pair(LOGIN_AFTER, &sealed);
                    }
                    Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                }
            }
            let target = format!("{AUTHORIZE_PATH}?{}", back.finish());
            let mut location = s.auth.sign_in_location(&target);
            if let Some(hint) = &request.login_hint {
                // The sign-in page offers it in the email field (Auth.js's `email`).
                location.push_str("&email=");
                location.push_str(&authcore::cookies::encode_uri_component(hint));
            }
            redirect(&location)
        }
        (false, Some(sub)) => {
            let amr = lookup
                .session
                .as_ref()
                .and_then(|s| s.sign_in())
                .map(|i| i.amr.clone())
                .unwrap_or_default();
            match s.consent_to_ask(&request, &sub).await {
                Ok(false) => {
                    s.issue_code(&request, &sub, auth_time, amr, lookup.session_id)
                        .await
                }
                Ok(true) if request.prompt == Prompt::None => s.provider.refuse(
                    &request,
                    "consent_required",
                    "the user has not allowed this client, and prompt=none",
                ),
                Ok(true) => s.consent_page(
                    &request,
                    ConsentTicket {
                        sub,
                        sid: lookup.session_id,
                        params: client_params,
                    },
                    lookup.session.as_ref().map(authcore::SessionJson::json),
                ),
                Err(answer) => *answer,
            }
        }
        (false, None) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}

fn redirect(location: &str) -> Response {
    match HeaderValue::try_from(location) {
        Ok(v) => (StatusCode::FOUND, [(header::LOCATION, v)]).into_response(),
        Err(_) => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// The error page of a request that cannot be sent back to its client (an authorization or
/// logout request naming a client or redirect URI not registered here).
fn shown_error(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("This request cannot be answered: {message}.\n"),
    )
        .into_response()
}

impl ProviderState {
    /// The code of `request` for `sub`, sent to the client; the user's access for the client
    /// is recorded (or renewed) first, and the code carries its epoch.
    async fn issue_code(
        &self,
        request: &AuthorizationRequest,
        sub: &str,
        auth_time: Option<i64>,
        amr: Vec<String>,
        sid: Option<String>,
    ) -> Response {
        let Some(client) = self.provider.clients.get(&request.client_id) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let now = time::OffsetDateTime::now_utc();
        let access = match self
            .users
            .grant_app_access(sub, client.id(), client.name(), &request.scopes, now)
            .await
        {
            Ok(a) => a,
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: cannot record the user's access for a client");
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
        };
        let Some(jti) = random_token() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let grant = CodeGrant::new(request, sub, auth_time, amr, sid, access.epoch, jti);
        let claims = match serde_json::to_value(&grant) {
            Ok(Value::Object(m)) => m,
            _ => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
        let code = match self
            .auth
            .config()
            .jwt()
            .encode(&claims, CODE_SALT, CODE_TTL_SECS)
        {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: cannot seal a code");
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
        };
        tracing::info!(client = %request.client_id, user = %sub, "oidc provider: code issued");
        let mut p = vec![("code", code)];
        p.extend(request.state.clone().map(|st| ("state", st)));
        self.provider
            .answer(&request.redirect_uri, request.response_mode, p)
    }

    /// The user's access for `client`, as the adapter keeps it; the `503` answer when it
    /// cannot be read (refused rather than served on a guess).
    async fn app_access(
        &self,
        sub: &str,
        client: &str,
    ) -> Result<Option<authcore::adapter::AppAccess>, Box<Response>> {
        self.users.get_app_access(sub, client).await.map_err(|e| {
            tracing::error!(error = %e, "oidc provider: the users' app access is unreadable");
            unavailable("the app access cannot be read")
        })
    }

    /// Whether `sub`'s access for `client` still stands in `epoch`, the one a grant or token
    /// was made in (the user has not revoked it from the account page since; no access
    /// recorded is epoch 0).
    async fn epoch_stands(
        &self,
        sub: &str,
        client: &str,
        epoch: i64,
    ) -> Result<bool, Box<Response>> {
        let access = self.app_access(sub, client).await?;
        Ok(access.map_or(0, |a| a.epoch) == epoch)
    }

    /// [`Self::epoch_stands`] for `grant`.
    async fn grant_stands(&self, grant: &Grant) -> Result<bool, Box<Response>> {
        self.epoch_stands(&grant.sub, &grant.client_id, grant.epoch)
            .await
    }
}

#[derive(Template)]
#[template(path = "oidc_form_post.html")]
struct FormPost<'a> {
    action: &'a str,
    fields: &'a [(&'a str, String)],
    nonce: &'a str,
}

impl OpenIdProvider {
    /// An error of `request` sent back to its client.
    fn refuse(&self, request: &AuthorizationRequest, error: &str, description: &str) -> Response {
        let mut p = vec![
            ("error", error.to_owned()),
            ("error_description", description.to_owned()),
        ];
        p.extend(request.state.clone().map(|st| ("state", st)));
        self.answer(&request.redirect_uri, request.response_mode, p)
    }

    /// The answer to the client at its registered `redirect_uri`, with `iss` (RFC 9207).
    fn answer(
        &self,
        redirect_uri: &str,
        mode: ResponseMode,
        mut params: Vec<(&str, String)>,
    ) -> Response {
        params.push(("iss", self.issuer.clone()));
        match mode {
            ResponseMode::Query => {
                let Ok(mut url) = url::Url::parse(redirect_uri) else {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                };
                url.query_pairs_mut()
                    .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())));
                no_store(redirect(url.as_str()))
            }
            ResponseMode::FormPost => {
                let Some(nonce) = random_token() else {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                };
                let page = FormPost {
                    action: redirect_uri,
                    fields: &params,
                    nonce: &nonce,
                };
                let Ok(body) = page.render() else {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                };
                let origin = url::Url::parse(redirect_uri)
                    .map(|u| u.origin().ascii_serialization())
                    .unwrap_or_default();
                let csp = format!(
                    "default-src 'none'; script-src 'nonce-{nonce}'; form-action {origin}; frame-ancestors 'none'; base-uri 'none'"
                );
                let mut r = axum::response::Html(body).into_response();
                if let Ok(v) = HeaderValue::try_from(csp) {
                    r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
                }
                no_store(r)
            }
        }
    }
}

/// 128 random bits, base64url (a code's `jti`, an access token's, a page's script nonce);
/// `None` when the system has no randomness to give.
fn random_token() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A token endpoint error (RFC 6749 §5.2).
fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    tracing::info!(error, description, "oidc provider: token request refused");
    let mut r = json_response(
        status,
        &json!({"error": error, "error_description": description}),
    );
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"oidc\""),
        );
    }
    no_store(r)
}

/// The client id and secret of an `Authorization: Basic` header (RFC 6749 §2.3.1: each
/// form-urlencoded before base64).
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, ()> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    let value = value.to_str().map_err(|_| ())?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| ())?;
    let text = String::from_utf8(decoded).map_err(|_| ())?;
    let (id, secret) = text.split_once(':').ok_or(())?;
    let unescape = |s: &str| -> Result<String, ()> {
        let plus = s.replace('+', " ");
        percent_encoding::percent_decode_str(&plus)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| ())
    };
    Ok(Some((unescape(id)?, unescape(secret)?)))
}

/// A form posted by an authenticated client: the token, revocation and introspection
/// endpoints' common first step.
struct ClientForm<'a> {
    client: &'a clients::Client,
    params: Params,
    /// The `jti` and `exp` of a verified `private_key_jwt` assertion, to be used once.
    assertion: Option<(String, i64)>,
}

/// The media type of a JWT client assertion (RFC 7523 §2.2).
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The kind of the single-use marks of client assertions (by client and `jti`).
const USED_ASSERTION: &str = "oidc-provider-client-assertion";

/// [`client_form`], with a client assertion's `jti` used once (RFC 7523 §3 item 7): a
/// replayed assertion is refused, and so is any while the single-use store cannot answer.
async fn authenticated_client<'a>(
    s: &'a ProviderState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<ClientForm<'a>, Box<Response>> {
    let form = client_form(&s.provider, headers, body)?;
    if let Some((jti, exp)) = &form.assertion {
        let ttl = secs(exp.saturating_sub(time_now()).max(0) + 60);
        let key = client_key(jti, form.client.id());
        if !s.first_use(USED_ASSERTION, &key, ttl).await? {
            tracing::warn!(client = %form.client.id(), "oidc provider: a client assertion was replayed");
            return Err(Box::new(token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication failed",
            )));
        }
    }
    Ok(form)
}

impl ClientForm<'_> {
    fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name)
    }
}

/// The form of a client request and the client it authenticates (RFC 6749 §2.3: one
/// method, the client's own); the error answer otherwise.
fn client_form<'a>(
    provider: &'a OpenIdProvider,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<ClientForm<'a>, Box<Response>> {
    use StatusCode as S;
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
    if !form {
        return Err(Box::new(token_error(
            S::BAD_REQUEST,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        )));
    }
    let Some(params) = Params::unique(pairs(body)) else {
        return Err(Box::new(token_error(
            S::BAD_REQUEST,
            "invalid_request",
            "a parameter is given more than once",
        )));
    };
    let param = |name: &str| params.get(name);
    let basic = basic_credentials(headers).map_err(|()| {
        Box::new(token_error(
            S::UNAUTHORIZED,
            "invalid_client",
            "the Authorization header is not HTTP Basic client credentials",
        ))
    })?;
    let assertion = match (param("client_assertion_type"), param("client_assertion")) {
        (None, None) => None,
        (Some(JWT_BEARER), Some(a)) => Some(a.to_owned()),
        _ => {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "a client assertion needs client_assertion_type urn:ietf:params:oauth:client-assertion-type:jwt-bearer and client_assertion",
            )));
        }
    };
    if let Some(assertion) = assertion {
        if basic.is_some() || param("client_secret").is_some() {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            )));
        }
        return assertion_form(provider, params, &assertion);
    }
    let (client_id, presented, method) = match (&basic, param("client_secret")) {
        (Some(_), Some(_)) => {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            )));
        }
        (Some((id, secret)), None) => {
            if param("client_id").is_some_and(|c| c != id) {
                return Err(Box::new(token_error(
                    S::BAD_REQUEST,
                    "invalid_request",
                    "client_id differs from the Authorization header's",
                )));
            }
            (
                id.as_str(),
                Some(secret.as_str()),
                AuthMethod::ClientSecretBasic,
            )
        }
        (None, Some(secret)) => match param("client_id") {
            Some(id) => (id, Some(secret), AuthMethod::ClientSecretPost),
            None => {
                return Err(Box::new(token_error(
                    S::UNAUTHORIZED,
                    "invalid_client",
                    "client_secret without client_id",
                )));
            }
        },
        (None, None) => match param("client_id") {
            Some(id) => (id, None, AuthMethod::None),
            None => {
                return Err(Box::new(token_error(
                    S::UNAUTHORIZED,
                    "invalid_client",
                    "no client authentication",
                )));
            }
        },
    };
    let Some(client) = provider.clients.get(client_id) else {
        return Err(Box::new(token_error(
            S::UNAUTHORIZED,
            "invalid_client",
            "unknown client",
        )));
    };
    let authenticated = client.auth_method() == method
        && match presented {
            Some(secret) => client.secret_matches(secret),
            None => client.is_public(),
        };
    if !authenticated {
        return Err(client_authentication_failed());
    }
    Ok(ClientForm {
        client,
        params,
        assertion: None,
    })
}

fn client_authentication_failed() -> Box<Response> {
    Box::new(token_error(
        StatusCode::UNAUTHORIZED,
        "invalid_client",
        "client authentication failed",
    ))
}

/// The form of a client authenticating with a `private_key_jwt` assertion: the client is
/// the assertion's `sub` (and `client_id`, when given, must name it), whose keys must have
/// signed it; the assertion's `aud` is the issuer.
fn assertion_form<'a>(
    provider: &'a OpenIdProvider,
    params: Params,
    assertion: &str,
) -> Result<ClientForm<'a>, Box<Response>> {
    let named = authcore::oauth::id_token::unverified_claims(assertion)
        .ok()
        .and_then(|c| c.get("sub").and_then(Value::as_str).map(str::to_owned));
    let client_id = match (params.get("client_id"), named.as_deref()) {
        (Some(id), Some(sub)) if id == sub => id,
        (None, Some(sub)) => sub,
        _ => return Err(client_authentication_failed()),
    };
    let Some(client) = provider
        .clients
        .get(client_id)
        .filter(|c| c.auth_method() == AuthMethod::PrivateKeyJwt)
    else {
        return Err(client_authentication_failed());
    };
    match client.verify_assertion(assertion, &provider.issuer, time_now()) {
        Ok(used) => Ok(ClientForm {
            client,
            params,
            assertion: Some(used),
        }),
        Err(why) => {
            tracing::warn!(client = %client.id(), why, "oidc provider: a client assertion was refused");
            Err(client_authentication_failed())
        }
    }
}

/// The kind of the marks that revoke one access token (by its `jti`).
const REVOKED: &str = "oidc-provider-revoked";
/// The kind of the marks that revoke a grant (by the code's `jti`): its access tokens and
/// refresh tokens.
const REVOKED_GRANT: &str = "oidc-provider-revoked-grant";
/// The kind of the single-use marks of codes.
const USED_CODE: &str = "oidc-provider-code";
/// The kind of the single-use marks of refresh tokens.
const USED_REFRESH: &str = "oidc-provider-refresh";
/// The kind of the marks that say a session (`sid`) signed in to a client.
const SIGNED_IN_SESSION: &str = "oidc-provider-session-client";
/// The kind of the marks that say a user signed in to a client.
const SIGNED_IN_USER: &str = "oidc-provider-user-client";

/// The key of a session's or a user's mark for `client`.
fn client_key(who: &str, client: &str) -> String {
    format!("{who}\n{client}")
}

fn secs(t: i64) -> std::time::Duration {
    std::time::Duration::from_secs(t.unsigned_abs())
}

/// `POST /oidc/token`.
async fn token(State(s): State<ProviderState>, headers: HeaderMap, body: Bytes) -> Response {
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    let Some(grant_type) = form.param("grant_type").and_then(GrantType::parse) else {
        return token_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "authorization_code, refresh_token or client_credentials",
        );
    };
    if !form.client.allows_grant(grant_type) {
        return token_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "the client may not use this grant type (its grant_types)",
        );
    }
    let answer = match grant_type {
        GrantType::AuthorizationCode => s.code_grant(&form).await,
        GrantType::RefreshToken => s.refresh_grant(&form).await,
        GrantType::ClientCredentials => s.client_credentials(&form),
    };
    let mut r = answer.unwrap_or_else(|refused| *refused);
    r.headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    no_store(r)
}

type Answer = Result<Response, Box<Response>>;

fn refused(status: StatusCode, error: &str, description: &str) -> Box<Response> {
    Box::new(token_error(status, error, description))
}

fn invalid_grant(description: &str) -> Box<Response> {
    refused(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

fn unavailable(what: &str) -> Box<Response> {
    refused(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        what,
    )
}

/// What the tokens of a user grant say.
struct UserTokens<'a> {
    user: &'a authcore::adapter::AdapterUser,
    /// The user's claims the scopes give.
    claims: &'a UserClaims,
    grant: &'a Grant,
    /// The grant's name.
    grant_id: &'a str,
    /// The access token's scopes (the grant's, or fewer).
    scopes: &'a [String],
    nonce: Option<&'a str>,
    /// The refresh token to seal and hand out with them.
    refresh: Option<RefreshGrant>,
}

impl ProviderState {
    /// The `authorization_code` grant: the sealed code, its checks and its single use.
    async fn code_grant(&self, form: &ClientForm<'_>) -> Answer {
        let client = form.client;
        let Some(code) = form.param("code") else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "code is missing",
            ));
        };
        let grant: CodeGrant = self
            .unseal(code, CODE_SALT)
            .ok_or_else(|| invalid_grant("the code is invalid or expired"))?;
        grant
            .check_redemption(
                client.id(),
                form.param("redirect_uri"),
                form.param("code_verifier"),
            )
            .map_err(invalid_grant)?;
        let window = std::time::Duration::from_secs(CODE_TTL_SECS + 60);
        if !self.first_use(USED_CODE, &grant.jti, window).await? {
            // A replayed code: what its first use gave is revoked too (RFC 9700 §4.5.3.1).
            self.revoke_grant(&grant.jti).await;
            return Err(invalid_grant("the code was used already"));
        }
        if !self.grant_stands(&grant.grant).await? {
            return Err(invalid_grant("the user revoked this client's access"));
        }
        let user = self.user(&grant.grant.sub).await?;
        let claims = self.user_claims(&user, &grant.grant.scopes).await?;
        if client.backchannel_logout_uri().is_some() {
            self.remember_sign_in(client.id(), &grant.grant).await;
        }
        let offline = client.allows_grant(GrantType::RefreshToken)
            && grant.grant.scopes.iter().any(|s| s == "offline_access");
        let refresh = match offline {
            true => Some(RefreshGrant::first(
                &grant,
                random_token().ok_or_else(no_randomness)?,
            )),
            false => None,
        };
        self.user_tokens(
            client,
            UserTokens {
                user: &user,
                claims: &claims,
                grant: &grant.grant,
                grant_id: &grant.jti,
                scopes: &grant.grant.scopes,
                nonce: grant.nonce.as_deref(),
                refresh,
            },
        )
    }

    /// The `refresh_token` grant (RFC 6749 §6): the sealed refresh token is spent and
    /// replaced; one used twice revokes its grant (RFC 9700 §4.14.2), whoever used it first.
    async fn refresh_grant(&self, form: &ClientForm<'_>) -> Answer {
        let client = form.client;
        let Some(token) = form.param("refresh_token") else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "refresh_token is missing",
            ));
        };
        let refresh: RefreshGrant = self
            .unseal(token, REFRESH_SALT)
            .ok_or_else(|| invalid_grant("the refresh token is invalid or expired"))?;
        if refresh.grant.client_id != client.id() {
            return Err(invalid_grant(
                "the refresh token was issued to another client",
            ));
        }
        let Some(scopes) = refresh.narrow(form.param("scope")) else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                "a scope the grant does not have",
            ));
        };
        match self
            .auth
            .config()
            .single_use()
            .is_marked(REVOKED_GRANT, &refresh.grant_id)
            .await
        {
            Ok(false) => {}
            Ok(true) => return Err(invalid_grant("the grant was revoked")),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: revocations unreadable");
                return Err(unavailable("the revocations cannot be read"));
            }
        }
        let ttl = secs(self.provider.lifetimes_of(client).refresh_token);
        if !self.first_use(USED_REFRESH, &refresh.jti, ttl).await? {
            tracing::warn!(client = %client.id(), user = %refresh.grant.sub, "oidc provider: a refresh token was used twice; its grant is revoked");
            self.revoke_grant(&refresh.grant_id).await;
            return Err(invalid_grant(
                "the refresh token was used already; its grant is revoked",
            ));
        }
        if !self.grant_stands(&refresh.grant).await? {
            return Err(invalid_grant("the user revoked this client's access"));
        }
        let user = self.user(&refresh.grant.sub).await?;
        let claims = self.user_claims(&user, &scopes).await?;
        let next = refresh.next(random_token().ok_or_else(no_randomness)?);
        self.user_tokens(
            client,
            UserTokens {
                user: &user,
                claims: &claims,
                grant: &refresh.grant,
                grant_id: &refresh.grant_id,
                scopes: &scopes,
                nonce: None,
                refresh: Some(next),
            },
        )
    }

    /// The `client_credentials` grant (RFC 6749 §4.4): an access token of the client for
    /// itself, with no user, no scope and no refresh token (§4.4.3).
    fn client_credentials(&self, form: &ClientForm<'_>) -> Answer {
        if form.param("scope").is_some_and(|s| !s.trim().is_empty()) {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                "a client's own token has no scope",
            ));
        }
        let p = &self.provider;
        let ttl = p.lifetimes_of(form.client).access_token;
        let now = time_now();
        let access = AccessTokenClaims {
            iss: p.issuer.clone(),
            aud: p.url(USERINFO_PATH),
            sub: form.client.id().to_owned(),
            client_id: form.client.id().to_owned(),
            scope: String::new(),
            iat: now,
            exp: now + ttl,
            jti: random_token().ok_or_else(no_randomness)?,
            grant: None,
            epoch: 0,
        };
        let access_token = p
            .keys
            .sign_claims(Some("at+jwt"), &access)
            .map_err(|_| no_signature())?;
        tracing::info!(client = %form.client.id(), "oidc provider: client token issued");
        Ok(json_response(
            StatusCode::OK,
            &json!({
                "access_token": access_token,
                "token_type": "Bearer",
                "expires_in": ttl,
            }),
        ))
    }

    /// The access token, ID token (with `openid`) and refresh token of a user grant.
    fn user_tokens(&self, client: &clients::Client, t: UserTokens<'_>) -> Answer {
        let p = &self.provider;
        let ttl = p.lifetimes_of(client);
        let now = time_now();
        let scope = t.scopes.join(" ");
        let access = AccessTokenClaims {
            iss: p.issuer.clone(),
            aud: p.url(USERINFO_PATH),
            sub: t.user.id.clone(),
            client_id: client.id().to_owned(),
            scope: scope.clone(),
            iat: now,
            exp: now + ttl.access_token,
            jti: random_token().ok_or_else(no_randomness)?,
            grant: Some(t.grant_id.to_owned()),
            epoch: t.grant.epoch,
        };
        let access_token = p
            .keys
            .sign_claims(Some("at+jwt"), &access)
            .map_err(|_| no_signature())?;
        let mut body = json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": ttl.access_token,
            "scope": scope,
        });
        if t.scopes.iter().any(|s| s == "openid") {
            let id = IdTokenClaims {
                iss: &p.issuer,
                aud: client.id(),
                user: t.claims,
                iat: now,
                exp: now + ttl.id_token,
                nonce: t.nonce,
                auth_time: t.grant.auth_time,
                amr: &t.grant.amr,
                acr: grant::acr_of(&t.grant.amr),
                sid: t.grant.sid.as_deref(),
            };
            body["id_token"] = p
                .keys
                .sign_claims_as(client.id_token_alg(), None, &id)
                .map_err(|_| no_signature())?
                .into();
        }
        if let Some(refresh) = &t.refresh {
            let claims = match serde_json::to_value(refresh) {
                Ok(Value::Object(m)) => m,
                _ => return Err(no_signature()),
            };
            let sealed = self
                .auth
                .config()
                .jwt()
                .encode(&claims, REFRESH_SALT, ttl.refresh_token.unsigned_abs())
                .map_err(|_| no_signature())?;
            body["refresh_token"] = sealed.into();
        }
        tracing::info!(client = %client.id(), user = %t.user.id, refresh = t.refresh.is_some(), "oidc provider: tokens issued");
        Ok(json_response(StatusCode::OK, &body))
    }

    /// Whether `value` is used for the first time; refused (`temporarily_unavailable`) when
    /// the single-use store cannot say: a replay must not pass while a shared store is down.
    async fn first_use(
        &self,
        kind: &str,
        value: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, Box<Response>> {
        self.auth
            .config()
            .single_use()
            .first_use_checked(kind, value, ttl)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
                unavailable("the single-use store failed")
            })
    }

    /// The contents of a token this provider sealed with `salt`, unexpired.
    fn unseal<T: serde::de::DeserializeOwned>(&self, token: &str, salt: &str) -> Option<T> {
        let claims = self
            .auth
            .config()
            .jwt()
            .decode(token, salt)
            .ok()
            .flatten()?;
        serde_json::from_value(Value::Object(claims)).ok()
    }

    /// The user of a grant.
    async fn user(&self, id: &str) -> Result<authcore::adapter::AdapterUser, Box<Response>> {
        match self.users.get_user(id).await {
            Ok(Some(u)) => Ok(u),
            Ok(None) => Err(invalid_grant("the user is gone")),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: user read failed");
                Err(unavailable("the user store failed"))
            }
        }
    }

    /// The claims of `user` that `scopes` give, with the user's groups for `groups`.
    async fn user_claims(
        &self,
        user: &authcore::adapter::AdapterUser,
        scopes: &[String],
    ) -> Result<UserClaims, Box<Response>> {
        let mut claims = UserClaims::of(user, scopes);
        let groups = &self.provider.groups;
        if groups.is_empty() || !scopes.iter().any(|s| s == "groups") {
            return Ok(claims);
        }
        let accounts = if groups.names_accounts() {
            let linked = self.users.list_accounts_by_user_id(&user.id).await;
            linked
                .map_err(|e| {
                    tracing::error!(error = %e, "oidc provider: the user's accounts are unreadable");
                    unavailable("the user store failed")
                })?
                .into_iter()
                .map(|a| (a.provider, a.provider_account_id))
                .collect()
        } else {
            Vec::new()
        };
        claims.groups = Some(groups.of(user, &accounts));
        Ok(claims)
    }

    /// Revokes grant `grant`: its access tokens and refresh tokens stop working.
    async fn revoke_grant(&self, grant: &str) {
        let p = &self.provider;
        let ttl = secs(p.longest.refresh_token.max(p.longest.access_token));
        if let Err(e) = self
            .auth
            .config()
            .single_use()
            .mark(REVOKED_GRANT, grant, ttl)
            .await
        {
            tracing::error!(error = %e, "oidc provider: cannot revoke a grant");
        }
    }

    /// Remembers that the user (in the session) of `grant` signed in to `client`, for
    /// back-channel logout.
    async fn remember_sign_in(&self, client: &str, grant: &Grant) {
        // As long as the session may live (it is extended while in use).
        let ttl = self.auth.config().session_max_age();
        let marks = [
            Some((SIGNED_IN_USER, client_key(&grant.sub, client))),
            grant
                .sid
                .as_deref()
                .map(|sid| (SIGNED_IN_SESSION, client_key(sid, client))),
        ];
        for (kind, key) in marks.into_iter().flatten() {
            if let Err(e) = self.auth.config().single_use().mark(kind, &key, ttl).await {
                tracing::error!(error = %e, "oidc provider: cannot remember a client's sign-in for its logout");
            }
        }
    }
}

fn no_randomness() -> Box<Response> {
    tracing::error!("oidc provider: no randomness");
    Box::new(StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn no_signature() -> Box<Response> {
    tracing::error!("oidc provider: cannot sign or seal a token");
    Box::new(StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A userinfo error (RFC 6750 §3).
fn bearer_error(error: &str) -> Response {
    let mut r = StatusCode::UNAUTHORIZED.into_response();
    if let Ok(v) = HeaderValue::try_from(format!("Bearer error=\"{error}\"")) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    no_store(r)
}

/// `GET` / `POST /oidc/userinfo` with `Authorization: Bearer <access token>`.
async fn userinfo(State(s): State<ProviderState>, headers: HeaderMap) -> Response {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let token = match (values.next(), values.next()) {
        (Some(v), None) => v
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim().to_owned()),
        _ => None,
    };
    let Some(token) = token else {
        return bearer_error("invalid_request");
    };
    // A client's own token (client_credentials) stands for no user.
    let claims = match s.active_access_token(&token).await {
        Ok(Some(c)) if c.grant.is_some() => c,
        Ok(_) => return bearer_error("invalid_token"),
        Err(answer) => return *answer,
    };
    let user = match s.users.get_user(&claims.sub).await {
        Ok(Some(u)) => u,
        Ok(None) => return bearer_error("invalid_token"),
        Err(e) => {
            tracing::error!(error = %e, "oidc provider: user read failed");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    let scopes: Vec<String> = claims.scope.split(' ').map(str::to_owned).collect();
    let user_claims = match s.user_claims(&user, &scopes).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    match serde_json::to_value(user_claims) {
        Ok(claims) => no_store(json_response(StatusCode::OK, &claims)),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// `GET` / `POST /oidc/logout` (RP-Initiated Logout 1.0 §2): the client asks authcore to
/// sign the user out. The user confirms on authcore's sign-out page (a CSRF-checked form:
/// no page of another site can sign the user out), then goes to the client's registered
/// `post_logout_redirect_uri` with `state`, or stays at authcore. A redirect URI that is not
/// exactly registered, an `id_token_hint` not signed here or for another client, is refused
/// on a page of authcore's, never redirected to.
async fn logout(State(s): State<ProviderState>, method: Method, uri: Uri, body: Bytes) -> Response {
    let Some(params) = Params::unique(request_params(&method, &uri, &body)) else {
        return shown_error("a parameter is given more than once");
    };
    let param = |name: &str| params.get(name);
    let p = &s.provider;
    // The client the hint was issued to (expired hints are fine: §2 "need not be concerned
    // with whether the ID Token is expired"); it must be ours and agree with client_id.
    let hinted = match param("id_token_hint") {
        None => None,
        Some(hint) => {
            let mut validation = p.keys.validation();
            validation.set_issuer(&[&p.issuer]);
            validation.validate_exp = false;
            validation.validate_aud = false;
            validation.set_required_spec_claims(&["iss", "aud", "sub"]);
            match p.keys.verify::<Value>(hint, "JWT", &validation) {
                Some(claims) => claims.get("aud").and_then(Value::as_str).map(str::to_owned),
                None => return shown_error("the id_token_hint was not issued here"),
            }
        }
    };
    let client_id = match (hinted.as_deref(), param("client_id")) {
        (Some(a), Some(b)) if a != b => {
            return shown_error("client_id is not the id_token_hint's audience");
        }
        (a, b) => a.or(b),
    };
    let back = match param("post_logout_redirect_uri") {
        None => None,
        Some(target) => {
            let registered = client_id
                .and_then(|id| p.clients.get(id))
                .is_some_and(|c| c.has_post_logout_redirect_uri(target));
            if !registered {
                return shown_error(
                    "the post_logout_redirect_uri is not one registered for the client (give id_token_hint or client_id; they are compared exactly)",
                );
            }
            let mut way = serde_json::Map::new();
            way.insert("uri".into(), target.into());
            if let Some(state) = param("state") {
                way.insert("state".into(), state.into());
            }
            match s
                .auth
                .config()
                .jwt()
                .encode(&way, LOGOUT_SALT, LOGOUT_TTL_SECS)
            {
                Ok(sealed) => Some(sealed),
                Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
    };
    let after = match back {
        Some(sealed) => format!(
            "{LOGGED_OUT_PATH}?d={}",
            url::form_urlencoded::byte_serialize(sealed.as_bytes()).collect::<String>()
        ),
        None => "/".to_owned(),
    };
    no_store(redirect(&sign_out_location(&s.auth, &after)))
}

/// authcore's sign-out page, with `callbackUrl` set to `target`.
fn sign_out_location(auth: &Auth, target: &str) -> String {
    let config = auth.config();
    let mut location = config
        .pages()
        .sign_out
        .clone()
        .unwrap_or_else(|| format!("{}/signout", config.base_path()));
    location.push(if location.contains('?') { '&' } else { '?' });
    location.push_str("callbackUrl=");
    location.extend(url::form_urlencoded::byte_serialize(target.as_bytes()));
    location
}

/// `GET /oidc/logout/done?d=…`: after the sign-out, on to the client's post-logout redirect
/// URI (sealed by [`logout`]: nothing else is redirected to from here).
async fn logged_out(State(s): State<ProviderState>, uri: Uri) -> Response {
    let params = pairs(uri.query().unwrap_or_default().as_bytes());
    let way = params
        .iter()
        .find(|(k, _)| k == "d")
        .and_then(|(_, v)| s.auth.config().jwt().decode(v, LOGOUT_SALT).ok().flatten());
    let Some(target) = way
        .as_ref()
        .and_then(|w| w.get("uri"))
        .and_then(Value::as_str)
        .and_then(|u| url::Url::parse(u).ok())
    else {
        return shown_error("this way back from the sign-out is unknown or expired");
    };
    let mut target = target;
    if let Some(state) = way
        .as_ref()
        .and_then(|w| w.get("state"))
        .and_then(Value::as_str)
    {
        target.query_pairs_mut().append_pair("state", state);
    }
    no_store(redirect(target.as_str()))
}

impl ProviderState {
    /// The claims of `token` when it is an access token of this provider, unexpired and not
    /// revoked; the `503` answer when the revocation marks cannot be read (refused rather
    /// than served on a guess).
    async fn active_access_token(
        &self,
        token: &str,
    ) -> Result<Option<AccessTokenClaims>, Box<Response>> {
        let p = &self.provider;
        let Some(claims) =
            p.keys
                .verify::<AccessTokenClaims>(token, "at+jwt", &p.access_validation)
        else {
            return Ok(None);
        };
        let revoked = match &claims.grant {
            Some(grant) => {
                self.auth
                    .config()
                    .single_use()
                    .is_marked(REVOKED_GRANT, grant)
                    .await
            }
            None => Ok(false),
        };
        let revoked = match revoked {
            Ok(false) => {
                self.auth
                    .config()
                    .single_use()
                    .is_marked(REVOKED, &claims.jti)
                    .await
            }
            other => other,
        };
        match revoked {
            Ok(false) if claims.grant.is_some() => {
                // A user's token: void once the user revoked the client's access.
                let stands = self
                    .epoch_stands(&claims.sub, &claims.client_id, claims.epoch)
                    .await?;
                Ok(stands.then_some(claims))
            }
            Ok(false) => Ok(Some(claims)),
            Ok(true) => Ok(None),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: revocations unreadable");
                Err(Box::new(StatusCode::SERVICE_UNAVAILABLE.into_response()))
            }
        }
    }
}

/// The access token named by `token` in a client's form (revocation, introspection): its
/// claims when it is active and the asking client's own (`None` for anyone else's: a client
/// learns nothing of other clients' tokens).
async fn own_token(
    s: &ProviderState,
    form: &ClientForm<'_>,
) -> Result<Option<AccessTokenClaims>, Box<Response>> {
    let Some(token) = form.param("token") else {
        return Err(Box::new(token_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token is missing",
        )));
    };
    Ok(s.active_access_token(token)
        .await?
        .filter(|c| c.client_id == form.client.id()))
}

/// `POST /oidc/revoke` (RFC 7009): a client revokes one of its access tokens, or one of its
/// refresh tokens and with it the whole grant (§2.1: the grant's access tokens too). The
/// answer is `200` whatever the token was (§2.2: nothing is learnt about other tokens); the
/// client must authenticate as at the token endpoint.
async fn revoke(State(s): State<ProviderState>, headers: HeaderMap, body: Bytes) -> Response {
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    if let Some(refresh) = form
        .param("token")
        .and_then(|t| s.unseal::<RefreshGrant>(t, REFRESH_SALT))
        .filter(|r| r.grant.client_id == form.client.id())
    {
        s.revoke_grant(&refresh.grant_id).await;
        tracing::info!(client = %refresh.grant.client_id, user = %refresh.grant.sub, "oidc provider: grant revoked");
        return no_store(StatusCode::OK.into_response());
    }
    let claims = match own_token(&s, &form).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    if let Some(claims) = claims {
        let left = claims.exp.saturating_sub(time_now()).max(1).unsigned_abs();
        if let Err(e) = s
            .auth
            .config()
            .single_use()
            .mark(REVOKED, &claims.jti, std::time::Duration::from_secs(left))
            .await
        {
            tracing::error!(error = %e, "oidc provider: cannot revoke a token");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        tracing::info!(client = %claims.client_id, user = %claims.sub, "oidc provider: token revoked");
    }
    no_store(StatusCode::OK.into_response())
}

/// `POST /oidc/introspect` (RFC 7662): what an access token of the asking client is, or
/// `{"active": false}` (for another client's token too).
async fn introspect(State(s): State<ProviderState>, headers: HeaderMap, body: Bytes) -> Response {
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    let claims = match own_token(&s, &form).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    let body = match claims {
        Some(c) => json!({
            "active": true,
            "scope": c.scope,
            "client_id": c.client_id,
            "sub": c.sub,
            "token_type": "Bearer",
            "exp": c.exp,
            "iat": c.iat,
            "iss": c.iss,
            "aud": c.aud,
            "jti": c.jti,
        }),
        None => json!({"active": false}),
    };
    no_store(json_response(StatusCode::OK, &body))
}

/// The consent page's ticket: the authorization request it answers and for whom (sealed
/// into the page, a JWE under the auth secret with a salt of its own, ten minutes). Only
/// the same user in the same session can answer with it: it is the page's CSRF token too.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
struct ConsentTicket {
    sub: String,
    sid: Option<String>,
    params: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "oidc_consent.html")]
struct ConsentPage<'a> {
    client: &'a str,
    who: Option<&'a str>,
    scopes: Vec<&'static str>,
    action: &'a str,
    ticket: &'a str,
    destination: &'a str,
}

/// What a scope lets the client see, as the consent page says it.
fn scope_description(scope: &str) -> &'static str {
    match scope {
        "openid" => "who you are here (an identifier for your account)",
        "profile" => "your name and picture",
        "email" => "your email address",
        "offline_access" => "your account while you are away (it stays signed in)",
        _ => "something this provider does not describe",
    }
}

impl ProviderState {
    /// Whether the user must be asked before `request` is answered: the client asks for
    /// consent, and the user's access for it does not cover each scope (or
    /// `prompt=consent`).
    async fn consent_to_ask(
        &self,
        request: &AuthorizationRequest,
        sub: &str,
    ) -> Result<bool, Box<Response>> {
        let asks = self
            .provider
            .clients
            .get(&request.client_id)
            .is_some_and(clients::Client::asks_consent);
        if !asks {
            return Ok(false);
        }
        if request.prompt_consent {
            return Ok(true);
        }
        let access = self.app_access(sub, &request.client_id).await?;
        Ok(!access.is_some_and(|a| a.covers(&request.scopes)))
    }

    /// The consent page for `request` (framing refused, nothing cached).
    fn consent_page(
        &self,
        request: &AuthorizationRequest,
        ticket: ConsentTicket,
        session: Option<&Value>,
    ) -> Response {
        let Some(client) = self.provider.clients.get(&request.client_id) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let claims = match serde_json::to_value(&ticket) {
            Ok(Value::Object(m)) => m,
            _ => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
        let Ok(sealed) =
            self.auth
                .config()
                .jwt()
                .encode(&claims, CONSENT_SALT, CONSENT_TICKET_TTL_SECS)
        else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let destination = url::Url::parse(&request.redirect_uri)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        let who = session
            .and_then(|s| s.get("user"))
            .and_then(|u| u.get("email").or_else(|| u.get("name")))
            .and_then(Value::as_str);
        let page = ConsentPage {
            client: client.name(),
            who,
            scopes: request
                .scopes
                .iter()
                .map(|s| scope_description(s))
                .collect(),
            action: CONSENT_PATH,
            ticket: &sealed,
            destination: &destination,
        };
        let Ok(body) = page.render() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        // The answer is a redirect to the client: form-action allows its origin.
        let csp = format!(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' {destination}; frame-ancestors 'none'; base-uri 'none'"
        );
        let mut r = axum::response::Html(body).into_response();
        if let Ok(v) = HeaderValue::try_from(csp) {
            r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
        }
        r.headers_mut()
            .insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        no_store(r)
    }
}

/// `POST /oidc/consent`: the consent page's answer (`ticket`, `decision=allow|deny`), from
/// the user and session the page was made for; on `allow` the consent is remembered and the
/// client gets its code, on `deny` `access_denied`.
async fn consent(
    State(s): State<ProviderState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(params) = Params::unique(pairs(&body)) else {
        return shown_error("a parameter is given more than once");
    };
    let param = |name: &str| params.get(name);
    let Some(ticket) = param("ticket").and_then(|t| s.unseal::<ConsentTicket>(t, CONSENT_SALT))
    else {
        return shown_error("this consent form is not one of ours, or it expired");
    };
    let lookup = match s
        .auth
        .read_session(&uri, &headers, &ReadOptions::default().with_session_id())
        .await
    {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "oidc provider: session lookup failed");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    // The page's own user, in the session it was shown in: another site cannot answer it.
    let same = lookup.session.is_some()
        && lookup.session.as_ref().and_then(|s| s.user_id()) == Some(ticket.sub.as_str())
        && lookup.session_id == ticket.sid;
    if !same {
        tracing::warn!("oidc provider: a consent answer from another session refused");
        return shown_error("this consent form was made for another session");
    }
    let request = match request::validate(&ticket.params, &s.provider.clients) {
        Ok(r) => r,
        Err(_) => return shown_error("the request this form answers is no longer valid"),
    };
    let mut response = match param("decision") {
        Some("allow") => {
            // Remembered as the user's access for the client, which issuing the code records.
            tracing::info!(client = %request.client_id, user = %ticket.sub, "oidc provider: consent given");
            let auth_time = lookup
                .session
                .as_ref()
                .and_then(|s| s.sign_in())
                .and_then(|i| i.auth_time);
            let amr = lookup
                .session
                .as_ref()
                .and_then(|s| s.sign_in())
                .map(|i| i.amr.clone())
                .unwrap_or_default();
            s.issue_code(&request, &ticket.sub, auth_time, amr, ticket.sid)
                .await
        }
        Some("deny") => s.provider.refuse(
            &request,
            "access_denied",
            "the user did not allow this client",
        ),
        _ => return shown_error("the answer is allow or deny"),
    };
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}

/// Back-channel logout to the clients (OpenID Connect Back-Channel Logout 1.0): the
/// handler's [`Events`](authcore::callbacks::Events), told when sessions end before their
/// time (a sign-out, a session ended from the account page, "sign out everywhere", the
/// user's deletion). Each client with a `backchannel_logout_uri` that the session (or, when
/// all of the user's sessions ended, the user) signed in to is posted a logout token (§2.5)
/// in the background, within five seconds; a client that fails to take it is
/// logged, not retried.
#[derive(Debug, Clone)]
pub struct BackChannelLogout {
    provider: Arc<OpenIdProvider>,
    /// The handler these events are configured into, held weakly: it holds them.
    auth: Arc<std::sync::OnceLock<authcore::WeakAuth>>,
}

impl BackChannelLogout {
    /// The events of `provider`; [`attach`](Self::attach) gives them the handler once it is
    /// built (they read its single-use store).
    pub fn new(provider: Arc<OpenIdProvider>) -> Self {
        BackChannelLogout {
            provider,
            auth: Arc::default(),
        }
    }

    /// Gives the events the handler they were configured into (kept weakly: the handler
    /// holds the events, and both go when the server does).
    pub fn attach(&self, auth: &Auth) {
        let _ = self.auth.set(auth.downgrade());
    }

    /// The clients to tell, each with the session id to name (none: all the user's).
    async fn recipients<'a>(
        &'a self,
        auth: &Auth,
        user: &str,
        sessions: &'a [String],
        all: bool,
    ) -> Result<Vec<(&'a clients::Client, Option<&'a str>)>, authcore::BoxError> {
        let mut out = Vec::new();
        for client in self.provider.clients.iter() {
            if client.backchannel_logout_uri().is_none() {
                continue;
            }
            if all {
                if auth
                    .config()
                    .single_use()
                    .is_marked(SIGNED_IN_USER, &client_key(user, client.id()))
                    .await?
                {
                    out.push((client, None));
                }
                continue;
            }
            for sid in sessions {
                if auth
                    .config()
                    .single_use()
                    .is_marked(SIGNED_IN_SESSION, &client_key(sid, client.id()))
                    .await?
                {
                    out.push((client, Some(sid.as_str())));
                }
            }
        }
        Ok(out)
    }

    /// Posts a logout token for `user`'s session `sid` (none: all of them) to `client`'s
    /// `backchannel_logout_uri`, in the background.
    fn post_logout_token(
        &self,
        client: &clients::Client,
        user: &str,
        sid: Option<&str>,
    ) -> Result<(), authcore::BoxError> {
        let Some(uri) = client.backchannel_logout_uri() else {
            return Ok(());
        };
        let p = &self.provider;
        let jti = random_token().ok_or("no randomness")?;
        let claims = LogoutTokenClaims::new(&p.issuer, client.id(), user, sid, &jti, time_now());
        let token = p
            .keys
            .sign_claims_as(client.id_token_alg(), Some("logout+jwt"), &claims)
            .map_err(|e| e.to_string())?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("logout_token", &token)
            .finish();
        let request = authcore::http::Request::post(uri)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Bytes::from(body))?;
        let client_id = client.id().to_owned();
        tokio::spawn(async move {
            let http = authcore::http_client::ReqwestClient::shared();
            match tokio::time::timeout(LOGOUT_DELIVERY_TIMEOUT, http.send(request)).await {
                Ok(Ok(r)) if r.status().is_success() => {
                    tracing::info!(client = %client_id, "oidc provider: back-channel logout delivered");
                }
                Ok(Ok(r)) => {
                    tracing::warn!(client = %client_id, status = r.status().as_u16(), "oidc provider: back-channel logout refused by the client");
                }
                Ok(Err(e)) => {
                    tracing::warn!(client = %client_id, error = %e, "oidc provider: back-channel logout not delivered");
                }
                Err(_) => {
                    tracing::warn!(client = %client_id, "oidc provider: back-channel logout timed out");
                }
            }
        });
        Ok(())
    }
}

#[authcore::async_trait]
impl authcore::callbacks::Events for BackChannelLogout {
    async fn sessions_ended(
        &self,
        message: authcore::callbacks::SessionsEndedEvent<'_>,
    ) -> Result<(), authcore::BoxError> {
        let Some(auth) = self.auth.get().and_then(authcore::WeakAuth::upgrade) else {
            return Ok(());
        };
        let recipients = self
            .recipients(&auth, message.user_id, message.session_ids, message.all)
            .await?;
        for (client, sid) in recipients {
            self.post_logout_token(client, message.user_id, sid)?;
        }
        Ok(())
    }

    /// The client whose access the user revoked ends the user's sessions with it (all of
    /// them: the logout token names the user, no session).
    async fn app_access_revoked(
        &self,
        message: authcore::callbacks::AppAccessRevokedEvent<'_>,
    ) -> Result<(), authcore::BoxError> {
        match self.provider.clients.get(message.client_id) {
            Some(client) => self.post_logout_token(client, message.user_id, None),
            None => Ok(()),
        }
    }
}
