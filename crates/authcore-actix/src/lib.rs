//! actix-web integration for `authcore`: [`auth_routes`] mounts the handler, [`Session`] and
//! [`OptionalSession`] extract the session, [`RequireAuth`] guards a scope. The same shape as
//! `authcore-axum`; see the crate README for a whole application.
//!
//! With organizations on (`AuthConfigBuilder::organizations`), [`RequireAuth::permission`]
//! and [`RequireAuth::role`] ask for a permission or role in the organization the request
//! acts in (`403` without it), API keys (`Authorization: Bearer ak_…`) count as signed in,
//! and [`CurrentPrincipal`] extracts who the request acts as:
//!
//! ```
//! use actix_web::{App, web};
//! use authcore_actix::{CurrentPrincipal, RequireAuth};
//! # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
//! #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
//! #     .build().unwrap());
//!
//! async fn pay(CurrentPrincipal(who): CurrentPrincipal) -> String {
//!     format!("{} paid", who.user_id)
//! }
//!
//! let app = App::new().app_data(web::Data::new(auth.clone())).service(
//!     web::scope("/api/billing")
//!         .wrap(RequireAuth::json(auth).permission("billing:write"))
//!         .route("/pay", web::post().to(pay)),
//! );
//! # let _ = app;
//! ```
//!
//! actix-web has its own HTTP types; requests and answers are converted at the edge (method,
//! URI, headers, body bytes, and the peer address for per-client rate limits), and authcore
//! does the rest.

#![forbid(unsafe_code)]

use std::future::{Ready, ready};
use std::rc::Rc;
use std::sync::Arc;

use actix_web::body::{BoxBody, EitherBody};
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse, Transform, forward_ready};
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError, Scope, web};
use authcore::account::{AccountRoute, AdminRoute, KeyRefused, Principal};
use authcore::bytes::Bytes;
use authcore::http_body_util::{BodyExt as _, Full};
use authcore::organizations::Requirement;
use authcore::request::ClientAddr;
use authcore::{Auth, SessionJson, SessionSlot};
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

/// Mounts `auth` on its base path (`/auth` by default): every request under it goes to
/// [`Auth::handle`]. Add it with [`App::service`](actix_web::App::service).
///
/// ```
/// use actix_web::{App, web};
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
/// let app = App::new()
///     .app_data(web::Data::new(auth.clone())) // for the extractors
///     .service(authcore_actix::auth_routes(auth));
/// # let _ = app;
/// ```
pub fn auth_routes(auth: Auth) -> Scope {
    let base = auth.config().base_path();
    // A base path `/` mounts at the root: every path no other service takes.
    let base = if base == "/" { "" } else { base }.to_owned();
    web::scope(&base)
        .app_data(web::Data::new(auth))
        .default_service(web::to(handle))
}

/// The route of [`auth_routes`]: the request handed to authcore, its answer returned.
async fn handle(req: HttpRequest, body: web::Bytes, auth: web::Data<Auth>) -> HttpResponse {
    let Some(mut request) = to_http(&req, Bytes::from(body.to_vec())) else {
        return HttpResponse::BadRequest().body("Bad request.");
    };
    if let Some(peer) = req.peer_addr() {
        request.extensions_mut().insert(ClientAddr(peer.ip()));
    }
    to_actix(auth.handle(request).await).await
}

/// authcore's answer as an actix response.
async fn to_actix(response: authcore::http::Response<authcore::ResponseBody>) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => match e {},
    };
    let mut out = HttpResponse::build(
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    );
    for (name, value) in &parts.headers {
        out.append_header((name.as_str(), value.as_bytes()));
    }
    out.body(bytes.to_vec())
}

/// One of authcore's guard answers (a short body) as an actix response.
fn guard_answer(response: authcore::http::Response<String>) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let mut out = HttpResponse::build(
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    );
    for (name, value) in &parts.headers {
        out.append_header((name.as_str(), value.as_bytes()));
    }
    out.body(body)
}

/// Registers the account-management JSON routes (`GET /account`, `POST /account/unlink`,
/// `GET /account/sessions` … — the table in [`authcore::account`]), answered by
/// [`Auth::handle_account`]: for the signed-in user of the request, every change
/// CSRF-checked. Add it with [`App::configure`](actix_web::App::configure).
///
/// ```
/// use actix_web::App;
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
/// let app = App::new()
///     .service(authcore_actix::auth_routes(auth.clone()))
///     .configure(authcore_actix::account_routes(auth));
/// # let _ = app;
/// ```
pub fn account_routes(auth: Auth) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        for route in AccountRoute::ALL {
            json_route(
                config,
                route.path(),
                auth.clone(),
                move |auth, request| async move { auth.handle_account(route, request).await },
            );
        }
    }
}

/// Registers the administrators' JSON routes (`GET /admin/users`, `POST /admin/users/ban`
/// … — the table of [`AdminRoute`]), answered by [`Auth::handle_admin`]: an
/// administrator's session cookie (and CSRF token for a change) or an administrators' API
/// key. Add it with [`App::configure`](actix_web::App::configure).
pub fn admin_routes(auth: Auth) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        for route in AdminRoute::ALL {
            json_route(
                config,
                route.path(),
                auth.clone(),
                move |auth, request| async move { auth.handle_admin(route, request).await },
            );
        }
    }
}

/// Registers `path` for every method (authcore answers a wrong one with its JSON 405),
/// answered by `handle` with the request as an `http` request.
fn json_route<F, Fut>(config: &mut web::ServiceConfig, path: &str, auth: Auth, handle: F)
where
    F: Fn(Auth, authcore::http::Request<Full<Bytes>>) -> Fut + Clone + 'static,
    Fut: std::future::Future<Output = authcore::http::Response<authcore::ResponseBody>> + 'static,
{
    config.service(web::resource(path).default_service(web::to(
        move |req: HttpRequest, body: web::Bytes| {
            let (auth, handle) = (auth.clone(), handle.clone());
            async move {
                let Some(request) = to_http(&req, Bytes::from(body.to_vec())) else {
                    return HttpResponse::BadRequest().body("Bad request.");
                };
                to_actix(handle(auth, request).await).await
            }
        },
    )));
}

/// The request as an `http` request for authcore (`None` for a method or URI `http` refuses).
fn to_http(req: &HttpRequest, body: Bytes) -> Option<authcore::http::Request<Full<Bytes>>> {
    let (uri, headers) = uri_and_headers(req)?;
    let mut request = authcore::http::Request::builder()
        .method(req.method().as_str())
        .uri(uri)
        .body(Full::new(body))
        .ok()?;
    *request.headers_mut() = headers;
    Some(request)
}

/// The URI and headers of `req` as `http` types. HTTP/1.0 clients and actix's test requests
/// may send no `Host`: the server's own name (`HttpServer::server_hostname`) stands in,
/// never the forwarded headers actix's connection info would read.
fn uri_and_headers(req: &HttpRequest) -> Option<(authcore::http::Uri, authcore::http::HeaderMap)> {
    let uri = req.uri().to_string().parse().ok()?;
    let mut headers = authcore::http::HeaderMap::with_capacity(req.headers().len() + 1);
    for (name, value) in req.headers() {
        if let (Ok(n), Ok(v)) = (
            authcore::http::HeaderName::from_bytes(name.as_str().as_bytes()),
            authcore::http::HeaderValue::from_bytes(value.as_bytes()),
        ) {
            headers.append(n, v);
        }
    }
    if !headers.contains_key(authcore::http::header::HOST)
        && let Ok(host) = authcore::http::HeaderValue::from_str(req.app_config().host())
    {
        headers.insert(authcore::http::header::HOST, host);
    }
    Some((uri, headers))
}

/// The session of a signed-in user ([`SessionJson`]'s accessors through `Deref`).
///
/// As an extractor it needs the [`Auth`] in the app data (`web::Data<Auth>`). It rejects
/// anonymous requests with [`SessionRequired`] (`401`). Behind [`RequireAuth`] it reads the
/// session the middleware already looked up. `Option<Session>` and [`OptionalSession`] never
/// reject.
#[derive(Clone, Debug, PartialEq)]
pub struct Session(SessionJson);

impl Session {
    /// A session from the JSON `GET <basePath>/session` returned.
    pub fn from_json(json: Value) -> Self {
        Session(SessionJson::from_json(json))
    }

    /// The whole session JSON, owned.
    pub fn into_json(self) -> Value {
        self.0.into_json()
    }
}

/// The accessors (`user_name`, `user_email`, `expires`, `json` …) of [`SessionJson`].
impl std::ops::Deref for Session {
    type Target = SessionJson;

    fn deref(&self) -> &SessionJson {
        &self.0
    }
}

/// Marks a request whose session was looked up and found absent.
#[derive(Clone, Copy, Debug)]
struct SignedOut;

/// The request's extensions as the place authcore keeps what its session read found (each
/// access borrows them only for that moment).
struct Slot<'a>(&'a HttpRequest);

impl SessionSlot for Slot<'_> {
    fn found(&self) -> Option<Option<SessionJson>> {
        let extensions = self.0.extensions();
        if let Some(s) = extensions.get::<Session>() {
            return Some(Some(s.0.clone()));
        }
        extensions.get::<SignedOut>().map(|_| None)
    }

    fn keep(&mut self, found: Option<SessionJson>) {
        let mut extensions = self.0.extensions_mut();
        match found {
            Some(json) => extensions.insert(Session(json)).map(drop),
            None => extensions.insert(SignedOut).map(drop),
        };
    }
}

/// The session of `req`, read once per request ([`Auth::read_session_once`]), with the
/// `Set-Cookie` values refreshing it. A configuration error (logged by authcore) is `Err`.
async fn resolve(
    auth: &Auth,
    req: &HttpRequest,
) -> Result<(Option<Session>, Vec<HeaderValue>), authcore::AuthError> {
    let mut slot = Slot(req);
    // Read before copying the request's head into `http` types: behind `RequireAuth` the
    // session is already there.
    if let Some(found) = slot.found() {
        return Ok((found.map(Session), Vec::new()));
    }
    let (uri, headers) =
        uri_and_headers(req).ok_or_else(|| authcore::AuthError::InvalidRequest {
            message: "unparsable URI".to_owned(),
        })?;
    let (found, set_cookie) = auth.read_session_once(&uri, &headers, &mut slot).await?;
    let set_cookie = set_cookie
        .iter()
        .filter_map(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
        .collect();
    Ok((found.map(Session), set_cookie))
}

/// The handler from the app data, for the extractors.
fn app_auth(req: &HttpRequest) -> Option<Auth> {
    req.app_data::<web::Data<Auth>>()
        .map(|d| d.get_ref().clone())
}

impl FromRequest for Session {
    type Error = SessionRequired;
    type Future = LocalBoxFuture<'static, Result<Session, SessionRequired>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let auth = app_auth(&req).ok_or(SessionRequired)?;
            match resolve(&auth, &req).await {
                Ok((Some(session), _)) => Ok(session),
                _ => Err(SessionRequired),
            }
        })
    }
}

/// The session if the user is signed in, `None` otherwise; never rejects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptionalSession(pub Option<Session>);

impl FromRequest for OptionalSession {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<OptionalSession, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let Some(auth) = app_auth(&req) else {
                return Ok(OptionalSession(None));
            };
            Ok(OptionalSession(
                resolve(&auth, &req).await.ok().and_then(|(s, _)| s),
            ))
        })
    }
}

/// The [`Session`] extractor's rejection for anonymous requests: `401 Unauthorized` with
/// `{"error":"SessionRequired"}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionRequired;

impl std::fmt::Display for SessionRequired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a signed-in session is required")
    }
}

impl ResponseError for SessionRequired {
    fn status_code(&self) -> StatusCode {
        StatusCode::UNAUTHORIZED
    }

    fn error_response(&self) -> HttpResponse<BoxBody> {
        HttpResponse::Unauthorized()
            .content_type("application/json")
            .body(r#"{"error":"SessionRequired"}"#)
    }
}

/// Who `req` acts as ([`Auth::principal_of_request`], its refused keys counted against
/// its peer); a URI `http` refuses is signed out.
async fn principal_of(auth: &Auth, req: &HttpRequest) -> Result<Option<Principal>, KeyRefused> {
    let Some((uri, headers)) = uri_and_headers(req) else {
        return Ok(None);
    };
    let mut request = authcore::http::Request::new(());
    *request.uri_mut() = uri;
    *request.headers_mut() = headers;
    if let Some(peer) = req.peer_addr() {
        request.extensions_mut().insert(ClientAddr(peer.ip()));
    }
    let (parts, ()) = request.into_parts();
    auth.principal_of_request(&parts).await
}

/// Marks `req` as having no session, whatever its cookie: for requests an API key
/// authenticated, whose `Session` extractor must not find the cookie's user.
fn mark_signed_out(req: &HttpRequest) {
    let mut extensions = req.extensions_mut();
    extensions.remove::<Session>();
    extensions.insert(SignedOut);
}

/// The extractor of who a request acts as: the [`Principal`] of its API key
/// (`Authorization: Bearer ak_…`) or of its signed-in user in their active organization
/// ([`Auth::principal`]).
///
/// Behind [`RequireAuth`] it reads the principal the middleware found; elsewhere it asks
/// [`Auth::principal`], with the [`Auth`] from the app data (`web::Data<Auth>`). It rejects
/// with [`PrincipalRejection`]: `401` when signed out or for a refused key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentPrincipal(pub Principal);

impl FromRequest for CurrentPrincipal {
    type Error = PrincipalRejection;
    type Future = LocalBoxFuture<'static, Result<CurrentPrincipal, PrincipalRejection>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let found = req.extensions().get::<Principal>().cloned();
            if let Some(principal) = found {
                return Ok(CurrentPrincipal(principal));
            }
            let auth = app_auth(&req).ok_or(PrincipalRejection::SignedOut)?;
            match principal_of(&auth, &req).await {
                Ok(Some(principal)) => {
                    req.extensions_mut().insert(principal.clone());
                    Ok(CurrentPrincipal(principal))
                }
                Ok(None) => Err(PrincipalRejection::SignedOut),
                Err(refused) => Err(PrincipalRejection::KeyRefused(refused)),
            }
        })
    }
}

/// Rejection of the [`CurrentPrincipal`] extractor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrincipalRejection {
    /// Neither a session nor an API key: `401` `{"error":"SessionRequired"}`.
    SignedOut,
    /// The API key was refused: `401` `{"error":"InvalidApiKey"}`, or `503` when the keys
    /// could not be read ([`KeyRefused::response`]).
    KeyRefused(KeyRefused),
}

impl std::fmt::Display for PrincipalRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrincipalRejection::SignedOut => SessionRequired.fmt(f),
            PrincipalRejection::KeyRefused(refused) => refused.fmt(f),
        }
    }
}

impl ResponseError for PrincipalRejection {
    fn status_code(&self) -> StatusCode {
        match self {
            PrincipalRejection::SignedOut => StatusCode::UNAUTHORIZED,
            PrincipalRejection::KeyRefused(refused) => {
                StatusCode::from_u16(refused.response().status().as_u16())
                    .unwrap_or(StatusCode::UNAUTHORIZED)
            }
        }
    }

    fn error_response(&self) -> HttpResponse<BoxBody> {
        match self {
            PrincipalRejection::SignedOut => SessionRequired.error_response(),
            PrincipalRejection::KeyRefused(refused) => guard_answer(refused.response()),
        }
    }
}

/// Middleware letting only signed-in users through a scope: anonymous requests get `302` to
/// the sign-in page with `callbackUrl` set to what they asked for ([`Auth::sign_in_location`]),
/// or `401` JSON with [`RequireAuth::json`]. Signed-in requests pass with the [`Session`] in
/// their extensions, and the answer carries the refreshed session cookie.
///
/// With organizations on (`AuthConfigBuilder::organizations`), a request may also come with
/// an API key (`Authorization: Bearer ak_…`), which counts as signed in: it passes with the
/// [`Principal`] it acts as in its extensions (read it with [`CurrentPrincipal`]) and no
/// [`Session`] (the key decides, not a cookie sent beside it); a refused key gets `401`
/// `{"error":"InvalidApiKey"}` ([`KeyRefused::response`]). Keys never meet
/// [`two_factors`](RequireAuth::two_factors) or [`max_age`](RequireAuth::max_age), which ask
/// how a person signed in. [`permission`](RequireAuth::permission) and
/// [`role`](RequireAuth::role) ask more of the principal.
#[derive(Clone, Debug)]
pub struct RequireAuth {
    auth: Auth,
    json: bool,
    step_up: authcore::StepUp,
    requirement: Arc<Requirement>,
}

impl RequireAuth {
    /// Redirects anonymous users to the sign-in page.
    pub fn new(auth: Auth) -> Self {
        RequireAuth {
            auth,
            json: false,
            step_up: authcore::StepUp::default(),
            requirement: Arc::default(),
        }
    }

    /// Answers anonymous requests with `401` `{"error":"SessionRequired"}` (for APIs).
    pub fn json(auth: Auth) -> Self {
        RequireAuth {
            auth,
            json: true,
            step_up: authcore::StepUp::default(),
            requirement: Arc::default(),
        }
    }

    /// Also requires `permission` (`resource:action`) in the organization the request acts
    /// in: the API key's, or the session's active one ([`Principal::has_permission`]).
    /// Signed-in requests without it get `403`: `{"error":"Forbidden","permission":"…"}`
    /// for API clients (the [`json`](RequireAuth::json) guard, or an `Accept` without
    /// `text/html`), else a short page ([`Unmet::response`]). Called again, both are
    /// required. A route whose path names an organization also compares it with the
    /// principal's. Without organizations configured no request holds one: every
    /// signed-in request gets `403`.
    ///
    /// # Panics
    ///
    /// When `permission` is not of the form the roles use ([`Requirement::permission`]).
    ///
    /// [`Unmet::response`]: authcore::organizations::Unmet::response
    pub fn permission(mut self, permission: impl Into<String>) -> Self {
        let requirement = Arc::unwrap_or_clone(self.requirement);
        self.requirement = Arc::new(requirement.permission(permission));
        self
    }

    /// Also requires `role` in the organization the request acts in
    /// ([`Principal::has_role`]; a key has those of its maker's roles whose permissions it
    /// holds all of). Answered as [`permission`](RequireAuth::permission) is, with `"role"`
    /// in the JSON.
    ///
    /// # Panics
    ///
    /// When `role` is not a role name ([`Requirement::role`]).
    pub fn role(mut self, role: impl Into<String>) -> Self {
        let requirement = Arc::unwrap_or_clone(self.requirement);
        self.requirement = Arc::new(requirement.role(role));
        self
    }

    /// Also requires two factors proven at sign-in ([`authcore::StepUp::two_factors`]). A
    /// user with a second factor whose session did not prove it is sent to sign in again
    /// (and back), where it is asked for. A user with no second factor (or with second
    /// factors off, where none can be proven) gets `403`
    /// ([`Auth::two_factor_required`]): a page linking to the account page to set one up,
    /// or, for API clients (the [`json`](RequireAuth::json) guard, or an `Accept` without
    /// `text/html`), `{"error":"TwoFactorRequired","enrol":"<basePath>/account"}`.
    pub fn two_factors(mut self) -> Self {
        self.step_up = self.step_up.two_factors();
        self
    }

    /// Also requires a sign-in of at most `max_age` ago ([`authcore::StepUp::max_age`]).
    pub fn max_age(mut self, max_age: std::time::Duration) -> Self {
        self.step_up = self.step_up.max_age(max_age);
        self
    }
}

impl<S, B> Transform<S, ServiceRequest> for RequireAuth
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Transform = RequireAuthMiddleware<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(RequireAuthMiddleware {
            service: Rc::new(service),
            auth: self.auth.clone(),
            json: self.json,
            step_up: self.step_up,
            requirement: Arc::clone(&self.requirement),
        }))
    }
}

/// The service [`RequireAuth`] wraps a scope in.
pub struct RequireAuthMiddleware<S> {
    service: Rc<S>,
    auth: Auth,
    json: bool,
    step_up: authcore::StepUp,
    requirement: Arc<Requirement>,
}

impl<S, B> Service<ServiceRequest> for RequireAuthMiddleware<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let service = Rc::clone(&self.service);
        let auth = self.auth.clone();
        let json = self.json;
        let step_up = self.step_up;
        let requirement = Arc::clone(&self.requirement);
        Box::pin(async move {
            // Who the request acts as, where API keys and roles exist or the scope asks.
            let wants_principal =
                auth.config().organizations().is_some() || !requirement.is_empty();
            let principal = if wants_principal {
                match principal_of(&auth, req.request()).await {
                    Ok(p) => p,
                    Err(refused) => {
                        let res = guard_answer(refused.response());
                        return Ok(req.into_response(res).map_into_right_body());
                    }
                }
            } else {
                None
            };
            let keyed = principal.as_ref().is_some_and(|p| p.api_key.is_some());
            let (session, set_cookie) = if keyed {
                // The key decides who this is: a cookie sent beside it is not the session.
                mark_signed_out(req.request());
                (None, Vec::new())
            } else {
                match resolve(&auth, req.request()).await {
                    Ok(found) => found,
                    Err(_) => {
                        // A configuration error, already logged by authcore.
                        let res = HttpResponse::InternalServerError().finish();
                        return Ok(req.into_response(res).map_into_right_body());
                    }
                }
            };
            let target = req
                .uri()
                .path_and_query()
                .map_or("/", |pq| pq.as_str())
                .to_owned();
            let signed_in = match &session {
                _ if keyed => step_up.is_met(None),
                Some(s) => step_up.is_met_by(s),
                None => false,
            };
            let api_client = json || !accepts_html(req.request());
            let refusal = match (&session, &principal) {
                (_, Some(p)) if signed_in => requirement
                    .unmet(p)
                    .map(|unmet| guard_answer(unmet.response(api_client))),
                // Nothing beyond a session asked, and no principal looked for.
                (Some(_), None) if signed_in && !wants_principal => None,
                (Some(s), _) if !signed_in && step_up.needs_two_factors() => {
                    Some(match auth.lacks_second_factor(s, req.path()).await {
                        Ok(false) => sign_in_again(&auth, json, &target),
                        Ok(true) => guard_answer(auth.two_factor_required(&target, api_client)),
                        Err(_) => HttpResponse::new(StatusCode::SERVICE_UNAVAILABLE),
                    })
                }
                // Signed out, a sign-in that does not show what is asked, or a session the
                // principal's read no longer found.
                _ => Some(sign_in_again(&auth, json, &target)),
            };
            let mut res = match refusal {
                None => {
                    if let Some(p) = principal {
                        req.extensions_mut().insert(p);
                    }
                    service.call(req).await?.map_into_left_body()
                }
                Some(res) => req.into_response(res).map_into_right_body(),
            };
            // Keep the session rolling (or clear a dead cookie), as `GET /session` does.
            for v in set_cookie {
                res.headers_mut()
                    .append(HeaderName::from_static("set-cookie"), v);
            }
            Ok(res)
        })
    }
}

/// The answer to a request without a session that shows what is asked: `401` JSON, or a
/// redirect to the sign-in page and back to `target`.
fn sign_in_again(auth: &Auth, json: bool, target: &str) -> HttpResponse {
    if json {
        SessionRequired.error_response()
    } else {
        HttpResponse::Found()
            .insert_header(("location", auth.sign_in_location(target)))
            .finish()
    }
}

/// Whether the client takes a page: no `Accept`, or one naming `text/html`.
fn accepts_html(req: &HttpRequest) -> bool {
    req.headers().get("accept").is_none_or(|a| {
        a.to_str()
            .is_ok_and(|a| a.to_ascii_lowercase().contains("text/html"))
    })
}

/// The README's example, compiled as a doctest so that it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
