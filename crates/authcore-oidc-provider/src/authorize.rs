//! The authorization endpoint ([`AUTHORIZE_PATH`](crate::AUTHORIZE_PATH)): the checks of
//! the request, the session read, `prompt`, `max_age` and consent, and the sealed code sent
//! back to the client (by query or `form_post`).

use std::sync::Arc;

use askama::Template;
use authcore::ReadOptions;
use authcore::adapter::{AdapterError, AdapterUser, AppAccess, AppAccessStore};
use authcore_keys::unix_time;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::clients::Client;
use crate::config::{CODE_TTL_SECS, OpenIdProvider};
use crate::consent::ConsentTicket;
use crate::grant::{CodeGrant, Grant};
use crate::login_marker::{LoginMarker, SignIn};
use crate::par::{self, PushedRequest, REQUEST_URI_PREFIX};
use crate::params::request_params;
use crate::request::{self, AuthorizationRequest, Prompt, Refusal, RequestRefused, ResponseMode};
use crate::responses::{clients_unavailable, no_store, redirect, shown_error, unavailable};
use crate::single_use::{
    CODE_SALT, LOGIN_AFTER, LOGIN_AFTER_SALT, LOGIN_AFTER_TTL_SECS, PAR_SALT, USED_LOGIN_AFTER,
    USED_REQUEST_URI,
};
use crate::token::random_token;
use crate::{AUTHORIZE_PATH, ProviderState};

/// `GET` / `POST /oidc/authorize`.
pub(crate) async fn authorize(
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
    // A pushed request's parameters replace the query's (RFC 9126 §4).
    let pushed = match s.pushed_request(&client_params).await {
        Ok(p) => p,
        Err(answer) => return no_store(*answer),
    };
    let request_params = pushed.as_ref().map_or(&client_params, |p| &p.params);
    let (request, client) = match s
        .authorization_request(request_params, pushed.is_some())
        .await
    {
        Ok(r) => r,
        Err(RequestRefused::Unavailable) => return no_store(clients_unavailable()),
        Err(RequestRefused::Refusal(Refusal::Shown(message))) => {
            tracing::warn!(%message, "oidc provider: authorization request refused");
            return shown_error(&message);
        }
        Err(RequestRefused::Refusal(Refusal::Redirected {
            redirect_uri,
            response_mode,
            error,
            description,
            state,
        })) => {
            tracing::info!(error, %description, "oidc provider: authorization request refused");
            let mut p = vec![
                ("error", error.to_owned()),
                ("error_description", description),
            ];
            p.extend(state.map(|st| ("state", st)));
            return s.provider.answer(&redirect_uri, response_mode, p);
        }
    };
    let lookup = match s.read_session(&uri, &headers).await {
        Ok(l) => l,
        Err(answer) => return *answer,
    };
    let now = unix_time();
    let session = lookup.session.as_ref();
    let signed_in = session.and_then(authcore::SessionJson::sign_in);
    let auth_time = signed_in.and_then(|i| i.auth_time);
    let amr = signed_in.map(|i| i.amr.clone()).unwrap_or_default();
    let user = session
        .and_then(authcore::SessionJson::user_id)
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
            match sign_in_redirect(&s, &request, &client_params, pushed.as_ref(), now, sign_in) {
                Some(response) => response,
                None => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
        (false, Some(sub)) => match s.admitted(&request, &client, &sub).await {
            Err(answer) => answer,
            Ok(()) => match s.consent_to_ask(&request, &client, &sub).await {
                Ok(false) => {
                    s.issue_code(&request, &client, &sub, auth_time, amr, lookup.session_id)
                        .await
                }
                Ok(true) if request.prompt == Prompt::None => s.provider.refuse(
                    &request,
                    "consent_required",
                    "the user has not allowed this client, and prompt=none",
                ),
                Ok(true) => s.consent_page(
                    &request,
                    &client,
                    ConsentTicket {
                        sub,
                        sid: lookup.session_id,
                        params: request_params.clone(),
                    },
                    session.map(authcore::SessionJson::json),
                ),
                Err(answer) => *answer,
            },
        },
        (false, None) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}

/// The way to the sign-in page and back to this same request, marked for `prompt=login`
/// (a sealed [`LoginMarker`] of this request and the sign-in it found) when asked;
/// `None` when no marker can be made. The way back of a `pushed` request is a new
/// `request_uri` of it (the one used is spent), good for as long as a sign-in may take
/// and no later than the request's deadline ([`PushedRequest::way_back`]).
fn sign_in_redirect(
    s: &ProviderState,
    request: &AuthorizationRequest,
    client_params: &[(String, String)],
    pushed: Option<&PushedRequest>,
    now: i64,
    sign_in: SignIn,
) -> Option<Response> {
    let way_back = match pushed {
        None => client_params.to_vec(),
        Some(p) => {
            let (again, ttl) = p.way_back(random_token()?, now);
            let sealed = s.seal(&again, PAR_SALT, ttl)?;
            vec![
                ("client_id".to_owned(), again.client_id),
                (
                    "request_uri".to_owned(),
                    format!("{REQUEST_URI_PREFIX}{sealed}"),
                ),
            ]
        }
    };
    let mut back = url::form_urlencoded::Serializer::new(String::new());
    back.extend_pairs(&way_back);
    if request.prompt == Prompt::Login {
        let nonce = random_token()?;
        let marker = LoginMarker::new(now, &request.client_id, &way_back, sign_in, nonce);
        let sealed = s.seal(&marker, LOGIN_AFTER_SALT, LOGIN_AFTER_TTL_SECS)?;
        back.append_pair(LOGIN_AFTER, &sealed);
    }
    let target = format!("{AUTHORIZE_PATH}?{}", back.finish());
    let mut location = s.auth.sign_in_location(&target);
    if let Some(hint) = &request.login_hint {
        // The sign-in page offers it in the email field (Auth.js's `email`).
        location.push_str("&email=");
        location.push_str(&authcore::cookies::encode_uri_component(hint));
    }
    Some(redirect(&location))
}

impl ProviderState {
    /// `value` sealed with `salt` for `ttl` seconds (a JWE under the auth secret, opened by
    /// [`ProviderState::unseal`] on any instance); `None`, and an error line, when it
    /// cannot be. `A256GCM`: only authcore opens these, so they need not be Auth.js's
    /// `A256CBC-HS512`, which costs several times as much.
    pub(crate) fn seal<T: serde::Serialize>(
        &self,
        value: &T,
        salt: &str,
        ttl: u64,
    ) -> Option<String> {
        self.auth
            .config()
            .jwt()
            .encode_serializable(value, salt, ttl, authcore::jose::Enc::A256Gcm)
            .map_err(|e| tracing::error!(error = %e, salt, "oidc provider: cannot seal"))
            .ok()
    }

    /// The pushed request that an authorization request's `params` name by its
    /// `request_uri` (RFC 9126 §4), spent (each `request_uri` once, on every instance);
    /// `None` when they name none. The error page (never a redirect) for one that is
    /// malformed, not sealed here, expired, pushed by another client or used already; `503`
    /// when the single-use store cannot say.
    pub(crate) async fn pushed_request(
        &self,
        params: &[(String, String)],
    ) -> Result<Option<PushedRequest>, Box<Response>> {
        let (client_id, sealed) = match par::reference(params) {
            Ok(None) => return Ok(None),
            Ok(Some(r)) => r,
            Err(why) => return Err(Box::new(shown_error(why))),
        };
        let Some(pushed) = self.unseal::<PushedRequest>(sealed, PAR_SALT) else {
            tracing::warn!(client = ?client_id, "oidc provider: an unknown or expired request_uri");
            return Err(Box::new(shown_error(
                "the request_uri is not one this provider gave, or it expired",
            )));
        };
        if pushed.expired(unix_time()) {
            tracing::warn!(client = ?client_id, "oidc provider: a request_uri past its request's deadline");
            return Err(Box::new(shown_error(
                "the request_uri expired: start again from the application",
            )));
        }
        // Checked before the mark: another client cannot spend it.
        if pushed.client_id != client_id {
            tracing::warn!(client = ?client_id, pushed_by = %pushed.client_id, "oidc provider: a request_uri used by another client");
            return Err(Box::new(shown_error(
                "the request_uri was pushed by another client",
            )));
        }
        let ttl = std::time::Duration::from_secs(LOGIN_AFTER_TTL_SECS + 60);
        if !self.first_use(USED_REQUEST_URI, &pushed.jti, ttl).await? {
            tracing::warn!(client = ?client_id, "oidc provider: a request_uri used again");
            return Err(Box::new(shown_error("the request_uri was used already")));
        }
        Ok(Some(pushed))
    }

    /// The authorization request in `params`, validated for the provider's clients
    /// ([`ProviderState::request_for`]); `pushed`: the parameters are a pushed request's,
    /// or were checked as such before (a client that requires pushed requests gets no
    /// other). The client is read once ([`ProviderState::client`]).
    pub(crate) async fn authorization_request(
        &self,
        params: &[(String, String)],
        pushed: bool,
    ) -> Result<(AuthorizationRequest, Arc<Client>), RequestRefused> {
        let client = match request::client_id(params) {
            Some(id) if !id.is_empty() && id.len() <= request::MAX_PARAM_LEN => self
                .client(id)
                .await
                .map_err(|_| RequestRefused::Unavailable)?,
            _ => None,
        };
        Ok(self.request_for(params, client, pushed)?)
    }

    /// The authorization request in `params` for `client` (the client its `client_id`
    /// names, if any); the `organizations` scope is left out (RFC 6749 §3.3) when the
    /// handler has no organizations.
    pub(crate) fn request_for(
        &self,
        params: &[(String, String)],
        client: Option<Arc<Client>>,
        pushed: bool,
    ) -> Result<(AuthorizationRequest, Arc<Client>), Refusal> {
        let mut request = request::validate_for(params, client.as_deref(), pushed)?;
        let Some(client) = client else {
            return Err(Refusal::Shown("there is no such client here".into()));
        };
        if !self.organizations_on() {
            request.scopes.retain(|s| s != "organizations");
        }
        Ok((request, client))
    }

    /// `Ok` when user `sub` is among the allowed users of the client of `request`; the
    /// answer otherwise: `access_denied` back to the client (its redirect URI is registered:
    /// RFC 6749 §4.1.2.1, as when a user denies consent), or `503` when the user's groups
    /// or organizations cannot be read.
    pub(crate) async fn admitted(
        &self,
        request: &AuthorizationRequest,
        client: &Client,
        sub: &str,
    ) -> Result<(), Response> {
        if !client.allowed_users().restricts() {
            return Ok(());
        }
        let admitted = match self.users.get_user(sub).await {
            Ok(Some(user)) => self.admits(client, &user).await,
            // A user gone since the session was read is nobody's.
            Ok(None) => Ok(false),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: user read failed");
                return Err(StatusCode::SERVICE_UNAVAILABLE.into_response());
            }
        };
        match admitted {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.provider.refuse(
                request,
                "access_denied",
                "the user is not among this client's allowed users",
            )),
            Err(answer) => Err(*answer),
        }
    }

    /// The session of a request to the authorization endpoint or the consent form, with
    /// its database session id (what the sign-in and consent are bound to); `503` when it
    /// cannot be read.
    pub(crate) async fn read_session(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<authcore::SessionRead, Box<Response>> {
        self.auth
            .read_session(uri, headers, &ReadOptions::default().with_session_id())
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: session lookup failed");
                Box::new(StatusCode::SERVICE_UNAVAILABLE.into_response())
            })
    }

    /// The code of `request` for `sub`, sent to the client; the user's access for the client
    /// is recorded (or renewed) first, and the code carries its epoch.
    pub(crate) async fn issue_code(
        &self,
        request: &AuthorizationRequest,
        client: &Client,
        sub: &str,
        auth_time: Option<i64>,
        amr: Vec<String>,
        sid: Option<String>,
    ) -> Response {
        let access = match self.record_grant(client, sub, &request.scopes, None).await {
            Ok(a) => a,
            Err(answer) => return answer,
        };
        let Some(jti) = random_token() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let grant = CodeGrant::new(request, sub, auth_time, amr, sid, access.epoch, jti);
        let Some(code) = self.seal(&grant, CODE_SALT, CODE_TTL_SECS) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        tracing::info!(client = %request.client_id, user = %sub, "oidc provider: code issued");
        let mut p = vec![("code", code)];
        p.extend(request.state.clone().map(|st| ("state", st)));
        self.provider
            .answer(&request.redirect_uri, request.response_mode, p)
    }

    /// Records (or renews) user `sub`'s access for `client` with `scopes`, and audits it
    /// (`oidc.granted`, with the grant type when not the code's): the access, whose epoch
    /// the grant carries; `503` when it cannot be recorded.
    pub(crate) async fn record_grant(
        &self,
        client: &Client,
        sub: &str,
        scopes: &[String],
        grant_type: Option<&'static str>,
    ) -> Result<authcore::adapter::AppAccess, Response> {
        let now = time::OffsetDateTime::now_utc();
        let granted = match self.app_access_store() {
            Ok(store) => {
                store
                    .grant_app_access(sub, client.id(), client.name(), scopes, now)
                    .await
            }
            Err(e) => Err(e),
        };
        let access = granted.map_err(|e| {
            tracing::error!(error = %e, "oidc provider: cannot record the user's access for a client");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        })?;
        let mut event = authcore::audit::AuditEvent::new("oidc.granted")
            .actor(sub.to_owned())
            .with("clientId", client.id())
            .with("scopes", scopes.to_vec());
        if let Some(grant_type) = grant_type {
            event = event.with("grantType", grant_type);
        }
        self.auth.record_audit(event).await;
        Ok(access)
    }

    /// The adapter's app access ([`authcore::adapter::AppAccessStore`]); an adapter without it answers
    /// as a failing one does.
    fn app_access_store(&self) -> Result<&dyn AppAccessStore, AdapterError> {
        self.users
            .app_access()
            .ok_or(AdapterError::Unsupported("AppAccessStore"))
    }

    /// The user's access for `client`, as the adapter keeps it; the `503` answer when it
    /// cannot be read (refused rather than served on a guess).
    pub(crate) async fn app_access(
        &self,
        sub: &str,
        client: &str,
    ) -> Result<Option<authcore::adapter::AppAccess>, Box<Response>> {
        let access = match self.app_access_store() {
            Ok(store) => store.get_app_access(sub, client).await,
            Err(e) => Err(e),
        };
        access.map_err(|e| {
            tracing::error!(error = %e, "oidc provider: the users' app access is unreadable");
            unavailable("the app access cannot be read")
        })
    }

    /// The user `sub` (`None` when gone) with their access for `client`, in one read where
    /// the adapter makes it; the `503` answer when they cannot be read.
    pub(crate) async fn user_with_app_access(
        &self,
        sub: &str,
        client: &str,
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, Box<Response>> {
        self.users
            .get_user_with_app_access(sub, client)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: the user or their app access is unreadable");
                unavailable("the user store failed")
            })
    }

    /// Whether `sub`'s access for `client` still stands in `epoch`, the one a grant or token
    /// was made in (the user has not revoked it from the account page since; no access
    /// recorded is epoch 0).
    pub(crate) async fn epoch_stands(
        &self,
        sub: &str,
        client: &str,
        epoch: i64,
    ) -> Result<bool, Box<Response>> {
        let access = self.app_access(sub, client).await?;
        Ok(stands_in(access.as_ref(), epoch))
    }

    /// [`Self::epoch_stands`] for `grant`.
    pub(crate) async fn grant_stands(&self, grant: &Grant) -> Result<bool, Box<Response>> {
        self.epoch_stands(&grant.sub, &grant.client_id, grant.epoch)
            .await
    }
}

/// Whether a grant or token made in `epoch` stands under the user's `access` for its client
/// (none recorded is epoch 0).
pub(crate) fn stands_in(access: Option<&AppAccess>, epoch: i64) -> bool {
    access.map_or(0, |a| a.epoch) == epoch
}

#[derive(Template)]
#[template(path = "oidc_form_post.html")]
pub(crate) struct FormPost<'a> {
    pub(crate) action: &'a str,
    pub(crate) fields: &'a [(&'a str, String)],
    pub(crate) nonce: &'a str,
}

impl OpenIdProvider {
    /// An error of `request` sent back to its client.
    pub(crate) fn refuse(
        &self,
        request: &AuthorizationRequest,
        error: &str,
        description: &str,
    ) -> Response {
        let mut p = vec![
            ("error", error.to_owned()),
            ("error_description", description.to_owned()),
        ];
        p.extend(request.state.clone().map(|st| ("state", st)));
        self.answer(&request.redirect_uri, request.response_mode, p)
    }

    /// The answer to the client at its registered `redirect_uri`, with `iss` (RFC 9207).
    pub(crate) fn answer(
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
