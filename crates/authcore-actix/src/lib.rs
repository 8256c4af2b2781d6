//! actix-web integration for `authcore`: [`auth_routes`] mounts the handler, [`Session`] and
//! [`OptionalSession`] extract the session, [`RequireAuth`] guards a scope. The same shape as
//! `authcore-axum`; see the crate README for a whole application.
//!
//! actix-web has its own HTTP types; requests and answers are converted at the edge (method,
//! URI, headers, body bytes, and the peer address for per-client rate limits), and authcore
//! does the rest.

#![forbid(unsafe_code)]

use std::future::{Ready, ready};
use std::rc::Rc;

use actix_web::body::{BoxBody, EitherBody};
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse, Transform, forward_ready};
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError, Scope, web};
use authcore::account::AccountRoute;
use authcore::bytes::Bytes;
use authcore::http_body_util::{BodyExt as _, Full};
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
            let auth = auth.clone();
            // Every method reaches authcore, which answers a wrong one with its JSON 405.
            config.service(web::resource(route.path()).default_service(web::to(
                move |req: HttpRequest, body: web::Bytes| {
                    let auth = auth.clone();
                    async move {
                        let Some(request) = to_http(&req, Bytes::from(body.to_vec())) else {
                            return HttpResponse::BadRequest().body("Bad request.");
                        };
                        to_actix(auth.handle_account(route, request).await).await
                    }
                },
            )));
        }
    }
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

/// Middleware letting only signed-in users through a scope: anonymous requests get `302` to
/// the sign-in page with `callbackUrl` set to what they asked for ([`Auth::sign_in_location`]),
/// or `401` JSON with [`RequireAuth::json`]. Signed-in requests pass with the [`Session`] in
/// their extensions, and the answer carries the refreshed session cookie.
#[derive(Clone, Debug)]
pub struct RequireAuth {
    auth: Auth,
    json: bool,
    step_up: authcore::StepUp,
}

impl RequireAuth {
    /// Redirects anonymous users to the sign-in page.
    pub fn new(auth: Auth) -> Self {
        RequireAuth {
            auth,
            json: false,
            step_up: authcore::StepUp::default(),
        }
    }

    /// Answers anonymous requests with `401` `{"error":"SessionRequired"}` (for APIs).
    pub fn json(auth: Auth) -> Self {
        RequireAuth {
            auth,
            json: true,
            step_up: authcore::StepUp::default(),
        }
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
        }))
    }
}

/// The service [`RequireAuth`] wraps a scope in.
pub struct RequireAuthMiddleware<S> {
    service: Rc<S>,
    auth: Auth,
    json: bool,
    step_up: authcore::StepUp,
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
        Box::pin(async move {
            let (session, set_cookie) = match resolve(&auth, req.request()).await {
                Ok(found) => found,
                Err(_) => {
                    // A configuration error, already logged by authcore.
                    let res = HttpResponse::InternalServerError().finish();
                    return Ok(req.into_response(res).map_into_right_body());
                }
            };
            let target = req
                .uri()
                .path_and_query()
                .map_or("/", |pq| pq.as_str())
                .to_owned();
            let missing = match &session {
                Some(s) if step_up.is_met_by(s) => None,
                Some(s) if step_up.needs_two_factors() => Some(
                    auth.lacks_second_factor(s, req.path())
                        .await
                        .map_err(|_| StatusCode::SERVICE_UNAVAILABLE),
                ),
                _ => Some(Ok(false)),
            };
            let mut res = match missing {
                None => service.call(req).await?.map_into_left_body(),
                Some(Ok(true)) => {
                    let json = json || !accepts_html(req.request());
                    let res =
                        to_actix(auth.two_factor_required(&target, json).map(Into::into)).await;
                    req.into_response(res).map_into_right_body()
                }
                Some(Err(status)) => req
                    .into_response(HttpResponse::new(status))
                    .map_into_right_body(),
                Some(Ok(false)) if json => {
                    let res = SessionRequired.error_response();
                    req.into_response(res).map_into_right_body()
                }
                Some(Ok(false)) => {
                    let res = HttpResponse::Found()
                        .insert_header(("location", auth.sign_in_location(&target)))
                        .finish();
                    req.into_response(res).map_into_right_body()
                }
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
