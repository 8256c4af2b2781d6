//! authcore as an OpenID Provider (OpenID Connect Core 1.0) for other applications: they
//! sign their users in through authcore — with whatever authcore signs users in with —
//! by the authorization code flow with PKCE.
//!
//! Configured by `[oidc_provider]` (signing keys and `[[oidc_provider.clients]]`), served
//! under `<origin>/oidc`, the issuer: discovery ([`DISCOVERY_PATH`]), the JWK Set
//! ([`JWKS_PATH`]), authorization ([`AUTHORIZE_PATH`]: a code for the signed-in user, or
//! the sign-in page first and back; a request pushed first at [`PAR_PATH`], RFC 9126, by
//! its `request_uri`), token ([`TOKEN_PATH`]: the code for an ID token, an
//! access token and, with `offline_access`, a refresh token rotated at each use; a service
//! client's own access token), userinfo ([`USERINFO_PATH`]), revocation, introspection,
//! device authorization (RFC 8628: [`DEVICE_AUTHORIZATION_PATH`], the user's page at
//! [`DEVICE_VERIFICATION_PATH`]), RP-initiated logout, and back-channel logout to the clients a session signed in to when
//! it ends ([`BackChannelLogout`]). Scopes give the user's claims, among them `groups` and,
//! when the handler has organizations on, `organizations` (each organization the user is a
//! member of, with their roles there); a client may admit only some users
//! (`allowed_groups`, `allowed_roles`, `allowed_organizations` of [`ClientConfig`]: the
//! others get `access_denied`, and no refreshed token once they left). The protocol checks
//! are pure functions over plain data (the modules `request`, `grant`, `clients`, `access`,
//! `login_marker`, `device`); one module per endpoint is their I/O: the session read, the sealed
//! codes, refresh tokens and `prompt=login` markers and their single-use marks, the
//! signatures, the user read and the logout tokens' delivery.
//!
//! What is kept between requests lives in the handler's single-use store (memory, the
//! database, or Redis, shared by several instances): used codes and refresh tokens, revoked
//! tokens and grants, which clients each session signed in to, and the pending device
//! authorizations (the request under its user code, the user's decision under its id: the
//! store's values, which every instance sharing it sees). The access each user
//! granted to each client (its scopes, which stand for the consent, and an epoch that a
//! revocation from the account page moves on, voiding every token of the client for the
//! user) lives in the adapter, with the users.
//!
//! Needs a database (the users and their ids) and second factors on (the default with a
//! database): sessions then record when and how their user signed in, for `auth_time`,
//! `amr`, `max_age` and `prompt=login`.
//!
//! A host validates the [`ProviderSection`] once into an [`OpenIdProvider`], configures its
//! [`Auth`] handler with the provider's [`BackChannelLogout`] events, and merges
//! [`OpenIdProvider::router`] beside authcore's routes:
//!
//! ```
//! use std::sync::Arc;
//! use authcore::Auth;
//! use authcore::adapter::Adapter;
//! use authcore::env::Env;
//! use authcore_oidc_provider::{OpenIdProvider, ProviderSection};
//!
//! // The issuer is AUTH_URL's origin and /oidc; the section names the signing keys and the
//! // clients, and a section without them is refused with what to fix.
//! let env = Env::from_pairs([("AUTH_URL", "https://auth.example.com/auth")]);
//! let err = OpenIdProvider::new(&env, ProviderSection::default()).unwrap_err();
//! assert!(err.to_string().contains("signing_keys"));
//!
//! /// The provider's routes for a handler `auth` that stores its users in `users`.
//! fn routes(provider: &Arc<OpenIdProvider>, auth: Auth, users: Arc<dyn Adapter>) -> axum::Router {
//!     provider.router(auth, users)
//! }
//! ```
#![forbid(unsafe_code)]

mod access;
mod authorize;
mod backchannel;
mod client_auth;
mod clients;
mod config;
mod consent;
mod device;
mod device_endpoint;
mod discovery;
mod dpop;
mod dpop_binding;
mod grant;
mod groups;
mod login_marker;
mod logout;
mod opaque;
mod par;
mod params;
mod request;
mod responses;
mod revocation;
mod single_use;
mod token;
mod userinfo;
mod verified;

use std::sync::Arc;

use authcore::Auth;
use authcore::adapter::Adapter;
use axum::extract::DefaultBodyLimit;

pub use backchannel::BackChannelLogout;
pub use clients::{
    CLIENTS_VAR, ClientConfig, ClientError, ClientSecret, MIN_SECRET_LEN, SCOPES,
    check_stored_client, secret_var,
};
pub use config::{
    CODE_TTL_SECS, DEFAULT_ACCESS_TOKEN_TTL_SECS, DEFAULT_ID_TOKEN_TTL_SECS,
    DEFAULT_REFRESH_TOKEN_TTL_SECS, OpenIdProvider, PUSHED_REQUEST_TTL_SECS, ProviderError,
    ProviderSection, SIGNING_KEYS_VAR,
};

/// The issuer's path under the server's origin.
pub const ISSUER_PATH: &str = "/oidc";

/// OpenID Provider metadata (OpenID Connect Discovery 1.0 §4).
pub const DISCOVERY_PATH: &str = "/oidc/.well-known/openid-configuration";

/// The authorization endpoint.
pub const AUTHORIZE_PATH: &str = "/oidc/authorize";

/// Pushed authorization requests (RFC 9126).
pub const PAR_PATH: &str = "/oidc/par";

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

/// The device authorization endpoint (RFC 8628 §3.1).
pub const DEVICE_AUTHORIZATION_PATH: &str = "/oidc/device";

/// The page where users enter a device's code and allow it (RFC 8628 §3.3: the
/// `verification_uri`).
pub const DEVICE_VERIFICATION_PATH: &str = "/oidc/device/verify";

/// The largest form the authorization and token endpoints read (bytes).
pub const MAX_FORM_BYTES: usize = 16 * 1024;

/// The state of the provider's routes.
#[derive(Clone)]
pub(crate) struct ProviderState {
    /// The authcore handler (session reads, the code's sealing and single-use mark).
    pub(crate) auth: Auth,
    /// The provider.
    pub(crate) provider: Arc<OpenIdProvider>,
    /// The users (the adapter the handler stores them in), with the access they granted to
    /// clients (its [`AppAccessStore`](authcore::adapter::AppAccessStore)).
    pub(crate) users: Arc<dyn Adapter>,
}

impl std::fmt::Debug for ProviderState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderState")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// The store of the clients made at run time could not be read (an error or a timeout):
/// the endpoints answer `503`, never that the client is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientsUnreadable;

impl ProviderState {
    /// The client `id`: a configured one first (a client made at run time never shadows
    /// it), else one that administrators made ([`OidcClientStore`](authcore::adapter::OidcClientStore):
    /// one read), unless it is disabled. `Ok(None)` for no such client, a disabled one or
    /// one that cannot be used; `Err` when the store cannot be read, so that no client is
    /// told its credentials are wrong during an outage.
    pub(crate) async fn client(
        &self,
        id: &str,
    ) -> Result<Option<Arc<clients::Client>>, ClientsUnreadable> {
        if let Some(client) = self.provider.clients.shared(id) {
            return Ok(Some(client));
        }
        // No store read for an id no client can have (every endpoint passes client input
        // here).
        if id.is_empty() || id.len() > request::MAX_PARAM_LEN {
            return Ok(None);
        }
        let Some(store) = self.users.oidc_clients() else {
            return Ok(None);
        };
        let stored = match tokio::time::timeout(STORE_WAIT, store.get_oidc_client(id)).await {
            Ok(Ok(Some(stored))) => stored,
            Ok(Ok(None)) => return Ok(None),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "oidc provider: stored client unreadable");
                return Err(ClientsUnreadable);
            }
            Err(_) => {
                tracing::error!("oidc provider: stored client read timed out");
                return Err(ClientsUnreadable);
            }
        };
        if stored.is_disabled() {
            tracing::info!(client = %id, "oidc provider: the client is disabled");
            return Ok(None);
        }
        match clients::Client::from_stored(&stored) {
            Ok(client) => Ok(Some(Arc::new(
                client.pushing_required(self.provider.require_pushed),
            ))),
            Err(problem) => {
                tracing::error!(client = %id, problem, "oidc provider: a stored client cannot be used");
                Ok(None)
            }
        }
    }
}

/// The longest wait for a stored client's read.
const STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl OpenIdProvider {
    /// Logs, for each client, the `allowed_roles` and `allowed_organizations` that `auth`
    /// makes no user match: organizations off, or a role it does not define. Such a rule
    /// admits no one (nothing is opened by it), but it was surely meant otherwise.
    fn warn_of_rules_that_admit_no_one(&self, auth: &authcore::AuthConfig) {
        let roles = auth.organization_roles();
        for client in self.clients.iter() {
            let rules = client.allowed_users();
            match roles {
                None if rules.reads_organizations() => tracing::warn!(
                    client = %client.id(),
                    "oidc provider: allowed_roles or allowed_organizations, but organizations are off: they admit no one"
                ),
                None => {}
                Some(roles) => {
                    for role in rules.role_names().filter(|r| !roles.contains(r)) {
                        tracing::warn!(client = %client.id(), role, "oidc provider: allowed_roles names a role the organizations do not define: it admits no one");
                    }
                }
            }
        }
    }

    /// The provider's routes, under [`ISSUER_PATH`], to merge into the host's router
    /// beside `auth`'s routes: `auth` reads the sessions and seals and marks the codes and
    /// tokens, `users` is the adapter `auth` stores its users in (with the access they
    /// granted to clients).
    pub fn router(self: &Arc<Self>, auth: Auth, users: Arc<dyn Adapter>) -> axum::Router {
        use axum::routing::{get, post};
        self.warn_of_rules_that_admit_no_one(auth.config());
        let state = ProviderState {
            auth,
            provider: Arc::clone(self),
            users,
        };
        axum::Router::new()
            .route(DISCOVERY_PATH, get(discovery::discovery))
            .route(JWKS_PATH, get(discovery::jwks))
            .route(
                AUTHORIZE_PATH,
                get(authorize::authorize).post(authorize::authorize),
            )
            .route(TOKEN_PATH, post(token::token))
            .route(PAR_PATH, post(par::push))
            .route(
                USERINFO_PATH,
                get(userinfo::userinfo).post(userinfo::userinfo),
            )
            .route(LOGOUT_PATH, get(logout::logout).post(logout::logout))
            .route(REVOCATION_PATH, post(revocation::revoke))
            .route(INTROSPECTION_PATH, post(revocation::introspect))
            .route(LOGGED_OUT_PATH, get(logout::logged_out))
            .route(CONSENT_PATH, post(consent::consent))
            .route(
                DEVICE_AUTHORIZATION_PATH,
                post(device_endpoint::device_authorization),
            )
            .route(
                DEVICE_VERIFICATION_PATH,
                get(device_endpoint::verify).post(device_endpoint::decide),
            )
            .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
            .layer(axum::middleware::map_request(client_addr_from_connect_info))
            .with_state(state)
    }
}

/// The peer address from axum's `ConnectInfo`, as authcore's handler reads it
/// ([`authcore::ClientAddr`], unless the host set one): the per-address limits here (the
/// device page's lookups, device authorizations started) need it as the handler's do.
async fn client_addr_from_connect_info(mut req: axum::extract::Request) -> axum::extract::Request {
    use axum::extract::ConnectInfo;
    if req.extensions().get::<authcore::ClientAddr>().is_none()
        && let Some(ConnectInfo(peer)) = req
            .extensions()
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .copied()
    {
        req.extensions_mut().insert(authcore::ClientAddr(peer.ip()));
    }
    req
}
