//! [`RequireAuthLayer`]: keep anonymous users out of a group of routes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use authcore::{Auth, StepUp};
use axum::extract::OriginalUri;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use tower_layer::Layer;
use tower_service::Service;

use crate::session::{SessionRequired, resolve_with_cookies};

/// What the layer answers to anonymous requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Denial {
    /// `302` to the sign-in page.
    Redirect,
    /// `401` JSON.
    Json,
}

/// A tower [`Layer`] that lets only signed-in users through.
///
/// Anonymous requests get `302 Found` to the sign-in page (`<basePath>/signin`, or the
/// custom `pages.sign_in`) with `callbackUrl` set to the path and query they asked for, so
/// the user comes back after signing in; with [`RequireAuthLayer::json`] they get
/// `401` `{"error":"SessionRequired"}` instead, for APIs. Signed-in requests pass through
/// with the [`Session`](crate::Session) in their extensions, where the `Session` extractor
/// (or `Extension<Session>`) finds it without decoding the cookie again.
///
/// Add it with [`Router::route_layer`](axum::Router::route_layer), so that paths no route
/// matches still answer `404` rather than a redirect.
///
/// ```
/// use authcore_axum::{AuthRouterExt, RequireAuthLayer, Session};
/// use axum::{Router, routing::get};
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
///
/// let pages = Router::new()
///     .route("/dashboard", get(|s: Session| async move { format!("{:?}", s.user_name()) }))
///     .route_layer(RequireAuthLayer::new(auth.clone()));
/// let api = Router::new()
///     .route("/api/me", get(|s: Session| async move { axum::Json(s.into_json()) }))
///     .route_layer(RequireAuthLayer::json(auth.clone()));
/// let app: Router = Router::new()
///     .merge(pages)
///     .merge(api)
///     .auth_routes(auth.clone())
///     .with_state(auth);
/// ```
#[derive(Clone, Debug)]
pub struct RequireAuthLayer {
    auth: Auth,
    denial: Denial,
    step_up: StepUp,
}

impl RequireAuthLayer {
    /// Redirects anonymous users to the sign-in page.
    pub fn new(auth: Auth) -> Self {
        RequireAuthLayer {
            auth,
            denial: Denial::Redirect,
            step_up: StepUp::default(),
        }
    }

    /// Answers anonymous requests with `401` `{"error":"SessionRequired"}` (for APIs).
    pub fn json(auth: Auth) -> Self {
        RequireAuthLayer {
            auth,
            denial: Denial::Json,
            step_up: StepUp::default(),
        }
    }

    /// Also requires that the user proved two factors at sign-in (`mfa` in the session's
    /// `amr`, [`authcore::two_factor`]). A user with a second factor whose session did not
    /// prove it is sent to sign in again (and back), where it is asked for. A user with no
    /// second factor (or with second factors off, where none can be proven) gets `403`:
    /// a page saying a second factor is required, with a link to the account page
    /// (`<basePath>/account`) to set one up, or, for API clients (the [`json`] layer, or an
    /// `Accept` without `text/html`), `{"error":"TwoFactorRequired","enrol":"<basePath>/account"}`.
    ///
    /// [`json`]: RequireAuthLayer::json
    pub fn two_factors(mut self) -> Self {
        self.step_up = self.step_up.two_factors();
        self
    }

    /// Also requires a sign-in of at most `max_age` ago (the session's `auth_time`); an
    /// older one is sent to sign in again (and back). Needs second factors on, with which
    /// sessions record the time.
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.step_up = self.step_up.max_age(max_age);
        self
    }
}

impl<S> Layer<S> for RequireAuthLayer {
    type Service = RequireAuth<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequireAuth {
            inner,
            auth: self.auth.clone(),
            denial: self.denial,
            step_up: self.step_up,
        }
    }
}

/// The service [`RequireAuthLayer`] wraps routes in.
#[derive(Clone, Debug)]
pub struct RequireAuth<S> {
    inner: S,
    auth: Auth,
    denial: Denial,
    step_up: StepUp,
}

impl<S, B> Service<Request<B>> for RequireAuth<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // Call the clone that `poll_ready` readied; keep a fresh one for the next call.
        let fresh = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, fresh);
        let auth = self.auth.clone();
        let denial = self.denial;
        let step_up = self.step_up;
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            let Ok((session, set_cookie)) =
                resolve_with_cookies(&auth, &parts.uri, &parts.headers, &mut parts.extensions)
                    .await
            else {
                // A configuration error, already logged by authcore.
                return Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response());
            };
            let mut res = match session {
                Some(s) if step_up.is_met_by(&s) => inner
                    .call(Request::from_parts(parts, body))
                    .await?
                    .into_response(),
                Some(s) if step_up.needs_two_factors() => {
                    match auth
                        .lacks_second_factor(&s, parts.uri.path())
                        .await
                        .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)
                    {
                        Ok(false) => sign_in_again(&auth, denial, &parts),
                        Ok(true) => {
                            let json = denial == Denial::Json || !accepts_html(&parts.headers);
                            two_factor_required(&auth, &parts, json)
                        }
                        Err(status) => status.into_response(),
                    }
                }
                _ => sign_in_again(&auth, denial, &parts),
            };
            // Keep the session rolling (or clear a dead cookie), as `GET /session` does.
            for v in set_cookie {
                res.headers_mut().append(http::header::SET_COOKIE, v);
            }
            Ok(res)
        })
    }
}

/// The answer to a request without a session that shows what is asked: `401` JSON, or a
/// redirect to the sign-in page and back.
fn sign_in_again(auth: &Auth, denial: Denial, parts: &Parts) -> Response {
    match denial {
        Denial::Json => SessionRequired.into_response(),
        Denial::Redirect => redirect_to_sign_in(auth, parts),
    }
}

/// The path and query the request asked for (before any `nest`).
fn target(parts: &Parts) -> &str {
    let uri = parts
        .extensions
        .get::<OriginalUri>()
        .map_or(&parts.uri, |o| &o.0);
    uri.path_and_query().map_or("/", |pq| pq.as_str())
}

/// Whether the client takes a page: no `Accept`, or one naming `text/html`.
fn accepts_html(headers: &HeaderMap) -> bool {
    headers.get(http::header::ACCEPT).is_none_or(|a| {
        a.to_str()
            .is_ok_and(|a| a.to_ascii_lowercase().contains("text/html"))
    })
}

/// `403` for a user who has no second factor ([`Auth::two_factor_required`]).
fn two_factor_required(auth: &Auth, parts: &Parts, json: bool) -> Response {
    auth.two_factor_required(target(parts), json)
        .into_response()
}

/// `302` to `<sign-in page>?callbackUrl=<path and query of the request>`.
fn redirect_to_sign_in(auth: &Auth, parts: &Parts) -> Response {
    match HeaderValue::try_from(auth.sign_in_location(target(parts))) {
        Ok(value) => (StatusCode::FOUND, [(http::header::LOCATION, value)]).into_response(),
        // Not reachable: the page comes from a validated config and the rest is encoded.
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
