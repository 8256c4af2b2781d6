//! authcore as a single sign-on gateway in front of applications that do not know
//! about authentication: nginx (`auth_request`), Caddy (`forward_auth`) and Traefik
//! (`ForwardAuth`) ask their own endpoint ([`NGINX_PATH`], [`CADDY_PATH`], [`TRAEFIK_PATH`])
//! about each request; each endpoint reads only the headers its proxy sets, the path is
//! judged in one unambiguous form, authcore reads the session, evaluates the access rules
//! ([`RuleConfig`]), and answers allow (2xx with identity headers and, optionally, a signed
//! identity JWT), sign in first (a redirect to the sign-in page, or 401 for API calls),
//! forbidden (403), or refused (400 / 431 for what it will not judge). `docs/gateway.md`
//! has the proxy configurations. Where the [`Auth`] handler has organizations on, each
//! check reads the user's memberships from its store, for the rules on an organization
//! (`organization`, `allow_roles`, `allow_permissions`) and for the identity passed on.
//!
//! Configured by a [`GatewaySection`] (the `[gateway]` section of authcore-server's
//! configuration file: rules, header names) and the variables `AUTHCORE_COOKIE_DOMAIN`,
//! `AUTHCORE_ALLOWED_REDIRECT_HOSTS`, `AUTHCORE_GATEWAY_DEFAULT` and
//! `AUTHCORE_GATEWAY_SIGNING_KEYS`, which win over it. A host builds the [`Gateway`] before
//! its [`Auth`] handler (whose sessions must carry what the rules read: see
//! [`Gateway::callbacks`]), then merges [`Gateway::router`] beside authcore's routes:
//!
//! ```
//! use std::sync::Arc;
//! use authcore::{Auth, AuthConfig};
//! use authcore::env::Env;
//! use authcore_gateway::{Gateway, GatewaySection};
//!
//! let env = Env::from_pairs([("AUTH_URL", "https://auth.example.com/auth")]);
//! let gateway = Arc::new(
//!     Gateway::new(&env, GatewaySection::default())?
//!         .on_decision(|decision| println!("forward auth: {decision}")),
//! );
//! let config = AuthConfig::builder()
//!     .secret("a secret of at least 32 characters, random")
//!     .callbacks(gateway.callbacks(None))
//!     // Here sessions signed in elsewhere; a host adds its sign-in providers instead.
//!     .sessions_only()
//!     .env_defaults(&env)
//!     .build()?;
//! let app: axum::Router = gateway.router(Auth::new(config));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod identity;
mod original;
mod path;
mod rules;

pub use identity::HeaderNames;
pub use rules::{Policy, RuleConfig, RuleError, Unauthenticated};

use std::path::PathBuf;
use std::sync::Arc;

use askama::Template;
use authcore::adapter::Adapter;
use authcore::callbacks::{Callbacks, JwtParams, RedirectParams, SessionParams, default_redirect};
use authcore::env::Env;
use authcore::jwt::JwtClaims;
use authcore::{Auth, AuthError, BoxError, ReadOptions};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use authcore_keys::{KeyError, SigningKeys, unix_time};
use identity::{IdentitySigner, identity_of};
use original::{Convention, OriginalRequest, original_request};
use rules::{AccessRules, Decision, HostList, Identity, OrganizationIdentity};

/// The endpoint that read whichever convention's headers a request carried; it now only
/// answers a configuration error naming the per-proxy endpoints.
pub const FORWARD_AUTH_PATH: &str = "/forward-auth";
/// nginx `auth_request`: answers by status only (200, 401, 403), as `auth_request` needs.
pub const NGINX_PATH: &str = "/forward-auth/nginx";
/// nginx `error_page 401 403`: the whole answer for a request [`NGINX_PATH`] did not let
/// through (the redirect to sign in or 401 JSON, the 403 page, or 400 / 431).
pub const NGINX_ANSWER_PATH: &str = "/forward-auth/nginx/answer";
/// Caddy `forward_auth`.
pub const CADDY_PATH: &str = "/forward-auth/caddy";
/// Traefik `ForwardAuth`.
pub const TRAEFIK_PATH: &str = "/forward-auth/traefik";
/// The signing keys' public JWK Set.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// Lifetime of the signed identity JWT when `jwt_ttl` is not set.
pub const DEFAULT_JWT_TTL_SECS: i64 = 60;

/// The `[gateway]` section as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GatewaySection {
    /// `Domain` of the session cookie (`.example.com`: every subdomain shares the sign-in).
    pub cookie_domain: Option<String>,
    /// Hosts a `callbackUrl` may point to besides the server's own (`app.example.com`,
    /// `*.example.com`).
    #[serde(default)]
    pub allowed_redirect_hosts: Vec<String>,
    /// The policy where no rule matches (default `signed_in`).
    pub default: Option<Policy>,
    /// The profile claim with the user's groups or roles (default: `groups`, else `roles`).
    pub groups_claim: Option<String>,
    /// PKCS#8 PEM private keys (Ed25519 or P-256) for the signed identity JWT; the first
    /// signs, all are published at [`JWKS_PATH`].
    #[serde(default)]
    pub signing_keys: Vec<PathBuf>,
    /// Lifetime of the signed identity JWT in seconds (default 60).
    pub jwt_ttl: Option<i64>,
    /// Identity header names.
    #[serde(default)]
    pub headers: HeaderNames,
    /// The access rules, first match wins.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

/// Why the gateway configuration cannot be used (the message says what to fix).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// A rule.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The signing keys.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// Anything else.
    #[error("[gateway] {0}")]
    Invalid(String),
}

/// The validated gateway.
#[derive(Debug)]
pub struct Gateway {
    rules: AccessRules,
    headers: HeaderNames,
    keys: Option<IdentitySigner>,
    jwt_ttl: i64,
    redirect_hosts: HostList,
    cookie_domain: Option<String>,
    groups_claim: Option<String>,
    /// `<AUTH_URL>` (origin and base path), for sign-in URLs and the JWT issuer.
    auth_url: String,
    /// Told each forward-auth decision (the host's metrics).
    on_decision: Option<DecisionHook>,
}

/// A host's function told the label of each forward-auth decision.
#[derive(Clone)]
struct DecisionHook(Arc<dyn Fn(&'static str) + Send + Sync>);

impl std::fmt::Debug for DecisionHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecisionHook")
    }
}

/// A comma-separated list variable (blank entries dropped); `None` when unset or blank.
pub(crate) fn env_list(env: &Env, key: &str) -> Option<Vec<String>> {
    env.get(key).filter(|v| !v.trim().is_empty()).map(|v| {
        v.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

impl Gateway {
    /// Whether `env` or `section` asks for the gateway.
    pub fn is_configured(env: &Env, section: Option<&GatewaySection>) -> bool {
        section.is_some()
            || [
                "AUTHCORE_COOKIE_DOMAIN",
                "AUTHCORE_ALLOWED_REDIRECT_HOSTS",
                "AUTHCORE_GATEWAY_DEFAULT",
                "AUTHCORE_GATEWAY_SIGNING_KEYS",
            ]
            .iter()
            .any(|k| env.get(k).is_some_and(|v| !v.trim().is_empty()))
    }

    /// Validates the section with the variables of `env` on top, once, at start-up.
    pub fn new(env: &Env, section: GatewaySection) -> Result<Self, GatewayError> {
        let invalid = |m: String| GatewayError::Invalid(m);
        let auth_url = env
            .get("AUTH_URL")
            .map(|u| u.trim().trim_end_matches('/').to_owned())
            .filter(|u| url::Url::parse(u).is_ok_and(|u| u.has_host()))
            .ok_or_else(|| {
                invalid(
                    "needs AUTH_URL (or [auth] url): the public URL of the auth routes, like https://auth.example.com/auth"
                        .into(),
                )
            })?;
        let default = match env.get("AUTHCORE_GATEWAY_DEFAULT").map(str::trim) {
            Some("bypass") => Policy::Bypass,
            Some("signed_in") => Policy::SignedIn,
            Some("deny") => Policy::Deny,
            Some(other) if !other.is_empty() => {
                return Err(invalid(format!(
                    "AUTHCORE_GATEWAY_DEFAULT={other:?}: use bypass, signed_in or deny"
                )));
            }
            _ => section.default.unwrap_or(Policy::SignedIn),
        };
        let rules = AccessRules::new(section.rules, default)?;
        section.headers.validate().map_err(invalid)?;
        let redirect_hosts = env_list(env, "AUTHCORE_ALLOWED_REDIRECT_HOSTS")
            .unwrap_or(section.allowed_redirect_hosts);
        let redirect_hosts = HostList::parse(&redirect_hosts)
            .map_err(|e| invalid(format!("allowed_redirect_hosts: {e}")))?;
        let cookie_domain = env
            .get("AUTHCORE_COOKIE_DOMAIN")
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .or(section.cookie_domain);
        if let Some(d) = &cookie_domain {
            let bare = d.trim_start_matches('.');
            if bare.is_empty()
                || !bare.contains('.')
                || HostList::parse(&[bare.to_owned()]).is_err()
            {
                return Err(invalid(format!(
                    "cookie_domain {d:?} is not a domain like .example.com"
                )));
            }
        }
        let key_paths = env_list(env, "AUTHCORE_GATEWAY_SIGNING_KEYS")
            .map(|v| v.into_iter().map(PathBuf::from).collect())
            .unwrap_or(section.signing_keys);
        let keys = if key_paths.is_empty() {
            None
        } else {
            Some(IdentitySigner::new(SigningKeys::load(&key_paths)?))
        };
        let jwt_ttl = section.jwt_ttl.unwrap_or(DEFAULT_JWT_TTL_SECS);
        if !(1..=3600).contains(&jwt_ttl) {
            return Err(invalid(format!(
                "jwt_ttl = {jwt_ttl}: between 1 and 3600 seconds"
            )));
        }
        Ok(Gateway {
            rules,
            headers: section.headers,
            keys,
            jwt_ttl,
            redirect_hosts,
            cookie_domain,
            groups_claim: section.groups_claim,
            auth_url,
            on_decision: None,
        })
    }

    /// Calls `hook` with the label of each forward-auth decision (`allow`, `sign_in`,
    /// `step_up`, `forbidden`, `bad_request`, `error`), for a host's metrics. nginx's second request for the page
    /// of a 401 or 403 ([`NGINX_ANSWER_PATH`]) is not a decision of its own.
    #[must_use]
    pub fn on_decision(mut self, hook: impl Fn(&'static str) + Send + Sync + 'static) -> Self {
        self.on_decision = Some(DecisionHook(Arc::new(hook)));
        self
    }

    /// Tells the host's hook, if any, of one decision.
    fn count_decision(&self, decision: &'static str) {
        if let Some(hook) = &self.on_decision {
            (hook.0)(decision);
        }
    }

    /// The session cookie's `Domain`, if any.
    pub fn cookie_domain(&self) -> Option<&str> {
        self.cookie_domain.as_deref()
    }

    /// Whether a rule looks at the provider a user signed in with (carried by JWT sessions
    /// only).
    pub fn uses_providers(&self) -> bool {
        self.rules.uses_providers()
    }

    /// Whether a rule looks at groups (carried by JWT sessions, or kept by an adapter with
    /// a [`UserGroupsStore`](authcore::adapter::UserGroupsStore)).
    pub fn uses_groups(&self) -> bool {
        self.rules.uses_groups()
    }

    /// Whether a rule asks for two factors or a recent sign-in (which sessions record with
    /// second factors on).
    pub fn uses_step_up(&self) -> bool {
        self.rules.uses_step_up()
    }

    /// Whether a rule names an organization (which needs organizations on in the [`Auth`]
    /// handler: where they are off, nobody is a member and such a rule admits no one).
    pub fn uses_organizations(&self) -> bool {
        self.rules.uses_organizations()
    }

    /// The callbacks that put the user id, provider and groups into the session and keep
    /// redirects to the allow-listed hosts. Without a database (`adapter` none) the user id
    /// is `<provider>:<providerAccountId>`, the same at every sign-in, instead of the random
    /// id Auth.js gives a user it does not store. With database sessions, and a rule on groups,
    /// the groups are the ones the adapter keeps for the user ([`UserGroupsStore`]: a user
    /// source's, set at each sign-in), read with each session; without such a rule no
    /// session read pays for that read, and the identity headers carry no groups.
    ///
    /// [`UserGroupsStore`]: authcore::adapter::UserGroupsStore
    pub fn callbacks(self: &Arc<Self>, adapter: Option<Arc<dyn Adapter>>) -> GatewayCallbacks {
        GatewayCallbacks {
            gateway: Arc::clone(self),
            adapter,
        }
    }

    fn sign_in_url(&self, callback: &str) -> String {
        let q: String = form_urlencoded_byte_serialize(callback);
        format!("{}/signin?callbackUrl={q}", self.auth_url)
    }
}

fn form_urlencoded_byte_serialize(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The gateway's [`Callbacks`].
#[derive(Clone)]
pub struct GatewayCallbacks {
    gateway: Arc<Gateway>,
    adapter: Option<Arc<dyn Adapter>>,
}

impl std::fmt::Debug for GatewayCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayCallbacks")
            .field("gateway", &self.gateway)
            .field("adapter", &self.adapter.is_some())
            .finish()
    }
}

/// The stable subject of a user without a database: `<provider>:<providerAccountId>`
/// (provider ids have no `:`, so the pair is recoverable and two providers never collide).
fn stable_subject(provider: &str, provider_account_id: &str) -> String {
    format!("{provider}:{provider_account_id}")
}

/// Groups from a profile claim: an array of strings, or one string of names separated by
/// spaces or commas.
fn groups_from(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(s)) => s
            .split([' ', ','])
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

#[authcore::async_trait]
impl Callbacks for GatewayCallbacks {
    async fn redirect(&self, params: RedirectParams<'_>) -> Result<String, BoxError> {
        if let Ok(u) = url::Url::parse(params.url)
            && matches!(u.scheme(), "https" | "http")
            && u.username().is_empty()
            && u.password().is_none()
            && u.host_str()
                .is_some_and(|h| self.gateway.redirect_hosts.matches(h))
        {
            return Ok(u.into());
        }
        Ok(default_redirect(params.url, params.base_url))
    }

    async fn jwt(&self, mut params: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        if let Some(account) = params.account {
            if self.adapter.is_none() {
                // Auth.js gives a user without an adapter a random id at every sign-in; an
                // application behind the gateway needs to recognise a returning user.
                params.token.insert(
                    "sub".into(),
                    Value::from(stable_subject(
                        &account.provider,
                        &account.provider_account_id,
                    )),
                );
            }
            params
                .token
                .insert("provider".into(), Value::from(account.provider.clone()));
            // A user source's groups come with its user (credentials sign-in).
            let from_user = params
                .profile
                .is_none()
                .then(|| params.user.map(|u| groups_from(u.extra.get("groups"))))
                .flatten();
            let groups = params.profile.map(|p| {
                let claim = |k: &str| p.extra.get(k);
                match &self.gateway.groups_claim {
                    Some(name) => groups_from(claim(name)),
                    None => {
                        let g = groups_from(claim("groups"));
                        if g.is_empty() {
                            groups_from(claim("roles"))
                        } else {
                            g
                        }
                    }
                }
            });
            params.token.insert(
                "groups".into(),
                Value::from(groups.or(from_user).unwrap_or_default()),
            );
        }
        Ok(Some(params.token))
    }

    async fn session(&self, params: SessionParams<'_>) -> Result<Value, BoxError> {
        let mut session = serde_json::to_value(params.session)?;
        if let Some(user) = session.get_mut("user").and_then(Value::as_object_mut) {
            let id = params
                .token
                .and_then(|t| t.get("sub").cloned())
                .or_else(|| params.user.and_then(|u| u.id.clone()).map(Value::from));
            if let Some(id) = id {
                user.insert("id".into(), id);
            }
            if let Some(token) = params.token {
                for key in ["provider", "groups"] {
                    if let Some(v) = token.get(key) {
                        user.insert(key.into(), v.clone());
                    }
                }
            } else if let (true, Some(store), Some(id)) = (
                // A read per session read: only for rules that need it.
                self.gateway.uses_groups(),
                self.adapter.as_deref().and_then(|a| a.user_groups()),
                params.user.and_then(|u| u.id.as_deref()),
            ) {
                user.insert(
                    "groups".into(),
                    Value::from(store.get_user_groups(id).await?),
                );
            }
        }
        Ok(session)
    }
}

#[derive(Template)]
#[template(path = "forbidden.html")]
struct ForbiddenPage<'a> {
    sign_out_url: &'a str,
    who: Option<&'a str>,
    /// For a rule that asks two factors of a user without a second factor: the account
    /// page to set one up, and the sign-in that comes back here.
    enrol: Option<(String, String)>,
}

/// The 403 page: who is signed in, and a way to sign out; for `step_up` (a rule asking two
/// factors of a user without a second factor), where to set one up and sign in again.
fn forbidden_page(
    gateway: &Gateway,
    who: Option<&Identity>,
    step_up: Option<&OriginalRequest>,
) -> Response {
    let sign_out_url = format!("{}/signout", gateway.auth_url);
    let page = ForbiddenPage {
        sign_out_url: &sign_out_url,
        who: who.and_then(|w| w.email.as_deref().or(w.name.as_deref())),
        enrol: step_up.map(|original| {
            (
                format!("{}/account", gateway.auth_url),
                gateway.sign_in_url(&original.url),
            )
        }),
    };
    match page.render() {
        Ok(body) => (StatusCode::FORBIDDEN, Html(body)).into_response(),
        Err(_) => StatusCode::FORBIDDEN.into_response(),
    }
}

/// The state of the gateway routes.
#[derive(Clone, Debug)]
struct GatewayState {
    /// The authcore handler (session reads).
    auth: Auth,
    /// The gateway.
    gateway: Arc<Gateway>,
}

/// What the gateway says about one request.
#[derive(Debug)]
enum Verdict {
    /// Let it through, with this identity (none on a public path without a session).
    Allow(OriginalRequest, Option<Identity>),
    /// Nobody is signed in.
    SignIn(OriginalRequest),
    /// Signed in, but the sign-in does not show what the rule asks: sign in again, or,
    /// when two factors are asked of a user without a second factor, set one up first.
    StepUp {
        /// The request.
        original: OriginalRequest,
        /// Who.
        who: Option<Identity>,
        /// Whether the user has no second factor to sign in with.
        needs_enrolment: bool,
    },
    /// Signed in, but not allowed here.
    Forbidden(Option<Identity>),
    /// Not judged: the request is unusable (400) or too large (431).
    Refused(StatusCode, String),
    /// The session could not be read (the database failed).
    Failed,
}

impl Verdict {
    /// The label a host's [`Gateway::on_decision`] is told.
    fn label(&self) -> &'static str {
        match self {
            Verdict::Allow(..) => "allow",
            Verdict::SignIn(_) => "sign_in",
            Verdict::StepUp { .. } => "step_up",
            Verdict::Forbidden(_) => "forbidden",
            Verdict::Refused(..) => "bad_request",
            Verdict::Failed => "error",
        }
    }
}

/// Judges the request a forward-auth sub-request asks about, reading the headers of
/// `convention` only; the session cookies a refresh re-issued come with it.
async fn judge(
    state: &GatewayState,
    convention: Convention,
    parts: &axum::http::request::Parts,
) -> (Verdict, Vec<HeaderValue>) {
    let (uri, headers) = (&parts.uri, &parts.headers);
    let original = match original_request(headers, convention) {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, ?convention, "forward-auth: request refused");
            return (
                Verdict::Refused(StatusCode::BAD_REQUEST, e.to_string()),
                Vec::new(),
            );
        }
    };
    // A program's API key decides alone: a cookie beside it is not read.
    if state.auth.config().organizations().is_some()
        && authcore::organizations::has_api_key(headers)
    {
        return (judge_key(state, original, parts).await, Vec::new());
    }
    // The session cookie is re-issued once per `updateAge`, not on every check: each
    // re-issue is a JWE encrypt and a `Set-Cookie` on the answer (docs/gateway.md).
    let options =
        ReadOptions::default().refresh_jwt_after(state.auth.config().session_update_age());
    let lookup = match state.auth.read_session(uri, headers, &options).await {
        Ok(l) => l,
        // Only the request's cookies are parsed here: too many of them, or garbage.
        Err(e @ (AuthError::InvalidRequest { .. } | AuthError::RequestTooLarge { .. })) => {
            let status = match e {
                AuthError::RequestTooLarge { status, .. } => status,
                _ => StatusCode::BAD_REQUEST,
            };
            tracing::warn!(error = %e, %status, "forward-auth: request refused");
            return (Verdict::Refused(status, e.to_string()), Vec::new());
        }
        Err(e) => {
            tracing::error!(error = %e, "forward-auth: session lookup failed");
            return (Verdict::Failed, Vec::new());
        }
    };
    let mut who = lookup
        .session
        .as_ref()
        .map(|s| identity_of(s.json(), s.sign_in()));
    if let Some(who) = &mut who
        && let Err(e) = add_organizations(&state.auth, who).await
    {
        tracing::error!(error = %e, "forward-auth: organizations unreadable");
        return (Verdict::Failed, Vec::new());
    }
    let decision = state
        .gateway
        .rules
        .decide(&original.hostname, &original.path, who.as_ref());
    tracing::debug!(
        method = %original.method,
        host = %original.host,
        path = %original.path,
        ?decision,
        "forward-auth"
    );
    let verdict = match decision {
        Decision::Allow => Verdict::Allow(original, who),
        Decision::SignIn => Verdict::SignIn(original),
        Decision::Forbidden => Verdict::Forbidden(who),
        Decision::StepUp => {
            let needs_enrolment = if state
                .gateway
                .rules
                .needs_two_factors(&original.hostname, &original.path)
            {
                match has_second_factor(&state.auth, who.as_ref()).await {
                    Ok(has) => !has,
                    Err(e) => {
                        tracing::error!(error = %e, "forward-auth: second factors unreadable");
                        return (Verdict::Failed, Vec::new());
                    }
                }
            } else {
                false
            };
            Verdict::StepUp {
                original,
                who,
                needs_enrolment,
            }
        }
    };
    (verdict, lookup.set_cookie)
}

/// Puts the organizations `who` is a member of into the identity, read from the store
/// (one read, bounded by the adapter's timeout); nothing where organizations are off.
/// The verdict on a request that carries an API key: its principal's identity (the key's
/// maker, in the key's organization with what the key may do there) through the rules; a
/// refused key is nobody. A key cannot sign in again, so a rule asking for a fresher or
/// second-factor sign-in refuses it.
async fn judge_key(
    state: &GatewayState,
    original: OriginalRequest,
    parts: &axum::http::request::Parts,
) -> Verdict {
    let who = match state.auth.principal_of_request(parts).await {
        Ok(Some(p)) if p.api_key.is_some() => Some(key_identity(p)),
        Ok(_) => None,
        Err(authcore::organizations::KeyRefused::Unavailable) => return Verdict::Failed,
        Err(e) => {
            tracing::info!(reason = %e, "forward-auth: API key refused");
            None
        }
    };
    match state
        .gateway
        .rules
        .decide(&original.hostname, &original.path, who.as_ref())
    {
        Decision::Allow => Verdict::Allow(original, who),
        Decision::SignIn => Verdict::SignIn(original),
        Decision::Forbidden | Decision::StepUp => Verdict::Forbidden(who),
    }
}

/// The identity of an API key's principal: its maker's id, in the key's organization only,
/// with the roles and permissions the key holds there (no address or name: rules on those
/// admit people, not programs).
fn key_identity(principal: authcore::organizations::Principal) -> Identity {
    Identity {
        id: Some(principal.user_id),
        provider: Some("api-key".to_owned()),
        organizations: principal
            .organization
            .into_iter()
            .map(|o| OrganizationIdentity::new(o.slug, o.roles, o.permissions))
            .collect(),
        ..Identity::default()
    }
}

async fn add_organizations(
    auth: &Auth,
    who: &mut Identity,
) -> Result<(), authcore::account::AccountError> {
    let Some(id) = who.id.as_deref() else {
        return Ok(());
    };
    match auth.organizations_of(id).await {
        Ok(memberships) => {
            who.organizations = memberships
                .into_iter()
                .map(|m| OrganizationIdentity::new(m.organization.slug, m.roles, m.permissions))
                .collect();
            Ok(())
        }
        Err(authcore::account::AccountError::OrganizationsOff) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether `who` has a second factor to sign in with (a confirmed TOTP secret, or a
/// passkey, which proves two factors with user verification).
async fn has_second_factor(
    auth: &Auth,
    who: Option<&Identity>,
) -> Result<bool, authcore::account::AccountError> {
    let Some(id) = who.and_then(|w| w.id.as_deref()) else {
        return Ok(false);
    };
    let status = auth.two_factor_status(id).await?;
    Ok(status.totp || status.passkeys > 0)
}

/// Whether the client is a page navigation (answered with a redirect to the sign-in page)
/// rather than an API call (answered 401): not when `Sec-Fetch-Mode` is there and not
/// `navigate`, `X-Requested-With` is there, or `Accept` is there without `text/html`.
/// These are the client's own headers: it can only choose the form of its own answer.
fn is_page_navigation(h: &HeaderMap) -> bool {
    let value = |name| h.get(name).map(|v| v.to_str().unwrap_or_default());
    let mode_ok = value("sec-fetch-mode").is_none_or(|m| m.eq_ignore_ascii_case("navigate"));
    let accept_ok = value("accept").is_none_or(|a| a.to_ascii_lowercase().contains("text/html"));
    mode_ok && accept_ok && !h.contains_key("x-requested-with")
}

/// How a verdict is told to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// nginx `auth_request`: 200, 401 or 403 and nothing else (any other status is an
    /// error there); a refusal is a 403 whose page ([`NGINX_ANSWER_PATH`]) says why.
    StatusOnly,
    /// Caddy, Traefik and nginx's error page: the proxy passes the whole answer on.
    Whole,
}

fn respond(gateway: &Gateway, verdict: Verdict, answer: Answer, request: &HeaderMap) -> Response {
    match (verdict, answer) {
        (Verdict::Allow(original, who), _) => {
            let mut r = StatusCode::OK.into_response();
            for (name, value) in gateway.headers.headers_for(who.as_ref()) {
                r.headers_mut().insert(name, value);
            }
            let jwt = match (&gateway.keys, &who) {
                (Some(keys), Some(who)) => {
                    let origin = format!("{}://{}", original.scheme, original.host);
                    match keys.sign(
                        who,
                        &gateway.auth_url,
                        &origin,
                        unix_time(),
                        gateway.jwt_ttl,
                    ) {
                        Ok(jwt) => HeaderValue::try_from(jwt).ok(),
                        Err(e) => {
                            tracing::error!(error = %e, "forward-auth: cannot sign the identity");
                            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                        }
                    }
                }
                _ => None,
            };
            if let Ok(name) = header::HeaderName::try_from(gateway.headers.jwt.as_str()) {
                r.headers_mut()
                    .insert(name, jwt.unwrap_or_else(|| HeaderValue::from_static("")));
            }
            r
        }
        (Verdict::SignIn(_) | Verdict::StepUp { .. }, Answer::StatusOnly) => {
            StatusCode::UNAUTHORIZED.into_response()
        }
        (
            Verdict::StepUp {
                original,
                who,
                needs_enrolment: true,
            },
            Answer::Whole,
        ) => forbidden_page(gateway, who.as_ref(), Some(&original)),
        (Verdict::SignIn(original), Answer::Whole) => {
            sign_in_first(gateway, &original, "SessionRequired", request)
        }
        (Verdict::StepUp { original, .. }, Answer::Whole) => {
            sign_in_first(gateway, &original, "StepUpRequired", request)
        }
        (Verdict::Forbidden(_) | Verdict::Refused(..), Answer::StatusOnly) => {
            StatusCode::FORBIDDEN.into_response()
        }
        (Verdict::Forbidden(who), Answer::Whole) => forbidden_page(gateway, who.as_ref(), None),
        (Verdict::Refused(status, reason), Answer::Whole) => {
            (status, format!("{reason}\n")).into_response()
        }
        (Verdict::Failed, _) => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

/// Sign in (again) and come back to `original`: a redirect to the sign-in page for a page
/// navigation, `401` with JSON naming `error` and the sign-in URL for an API call (as the
/// deciding rule's `unauthenticated` says).
fn sign_in_first(
    gateway: &Gateway,
    original: &OriginalRequest,
    error: &str,
    request: &HeaderMap,
) -> Response {
    let target = gateway.sign_in_url(&original.url);
    let page = match gateway
        .rules
        .unauthenticated(&original.hostname, &original.path)
    {
        Unauthenticated::Auto => is_page_navigation(request),
        Unauthenticated::Redirect => true,
        Unauthenticated::Unauthorized => false,
    };
    if page {
        match HeaderValue::try_from(target) {
            Ok(v) => (StatusCode::FOUND, [(header::LOCATION, v)]).into_response(),
            Err(_) => StatusCode::BAD_REQUEST.into_response(),
        }
    } else {
        let body = serde_json::json!({ "error": error, "url": target });
        (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

/// One forward-auth endpoint: judge by `convention`, answer as `answer`. The decision is
/// counted in the metrics, nginx's second look for its error page is not.
async fn forward_auth(
    state: GatewayState,
    convention: Convention,
    answer: Answer,
    mut parts: axum::http::request::Parts,
) -> Response {
    // The peer for the per-client count of refused API keys (through the trusted proxies).
    if parts
        .extensions
        .get::<authcore::request::ClientAddr>()
        .is_none()
        && let Some(axum::extract::ConnectInfo(peer)) = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .copied()
    {
        parts
            .extensions
            .insert(authcore::request::ClientAddr(peer.ip()));
    }
    let (verdict, set_cookie) = judge(&state, convention, &parts).await;
    let second_look = convention == Convention::Nginx && answer == Answer::Whole;
    if !second_look {
        state.gateway.count_decision(verdict.label());
    }
    let mut response = respond(&state.gateway, verdict, answer, &parts.headers);
    // A refreshed session cookie goes back through the proxy.
    for c in set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// [`NGINX_PATH`]: the decision for nginx's `auth_request`.
async fn nginx(State(state): State<GatewayState>, req: axum::extract::Request) -> Response {
    forward_auth(
        state,
        Convention::Nginx,
        Answer::StatusOnly,
        req.into_parts().0,
    )
    .await
}

/// [`NGINX_ANSWER_PATH`]: what nginx shows for a 401 or 403 of [`NGINX_PATH`].
async fn nginx_answer(State(state): State<GatewayState>, req: axum::extract::Request) -> Response {
    forward_auth(state, Convention::Nginx, Answer::Whole, req.into_parts().0).await
}

/// [`CADDY_PATH`] and [`TRAEFIK_PATH`]: the decision for Caddy's `forward_auth` and
/// Traefik's `ForwardAuth`.
async fn forwarded(State(state): State<GatewayState>, req: axum::extract::Request) -> Response {
    forward_auth(
        state,
        Convention::Forwarded,
        Answer::Whole,
        req.into_parts().0,
    )
    .await
}

/// [`FORWARD_AUTH_PATH`]: a configuration error. It read whichever convention's headers a
/// request carried, and Caddy and Traefik pass the client's headers on.
async fn retired(State(state): State<GatewayState>) -> Response {
    tracing::warn!(
        "a proxy asked /forward-auth, which is retired: point nginx at {NGINX_PATH}, Caddy at {CADDY_PATH}, Traefik at {TRAEFIK_PATH} (docs/gateway.md)"
    );
    state.gateway.count_decision("bad_request");
    (
        StatusCode::BAD_REQUEST,
        format!(
            "configuration error: {FORWARD_AUTH_PATH} is retired; nginx asks {NGINX_PATH}, Caddy {CADDY_PATH}, Traefik {TRAEFIK_PATH} (docs/gateway.md)\n"
        ),
    )
        .into_response()
}

/// `GET /.well-known/jwks.json`: the public keys of the signed identity.
async fn jwks(State(state): State<GatewayState>) -> Response {
    match &state.gateway.keys {
        Some(keys) => (
            [
                (header::CACHE_CONTROL, "max-age=300"),
                (header::CONTENT_TYPE, "application/jwk-set+json"),
            ],
            keys.keys().jwks().to_string(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl Gateway {
    /// The gateway's routes, to merge into the host's router beside `auth`'s routes: the
    /// forward-auth endpoints of each proxy and the signing keys' JWK Set. `auth` is the
    /// handler configured with [`Gateway::callbacks`], which reads the sessions.
    pub fn router(self: &Arc<Self>, auth: Auth) -> axum::Router {
        use axum::routing::{any, get};
        let state = GatewayState {
            auth,
            gateway: Arc::clone(self),
        };
        axum::Router::new()
            .route(FORWARD_AUTH_PATH, any(retired))
            .route(NGINX_PATH, any(nginx))
            .route(NGINX_ANSWER_PATH, any(nginx_answer))
            .route(CADDY_PATH, any(forwarded))
            .route(TRAEFIK_PATH, any(forwarded))
            .route(JWKS_PATH, get(jwks))
            .with_state(state)
    }
}
