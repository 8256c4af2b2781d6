//! [`RequireAuthLayer`]: keep anonymous users out of a group of routes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use authcore::organizations::Requirement;
use authcore::{Auth, StepUp};
use axum::extract::OriginalUri;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use tower_layer::Layer;
use tower_service::Service;

use crate::session::{SessionRequired, mark_signed_out, resolve_with_cookies};

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
/// With organizations on (`AuthConfigBuilder::organizations`), a request may also come with
/// an API key (`Authorization: Bearer ak_…`), which counts as signed in: it passes with the
/// [`Principal`] it acts as in its extensions (read it with [`CurrentPrincipal`]) and no
/// `Session` (the key decides, not a cookie sent beside it); a refused key gets `401`
/// `{"error":"InvalidApiKey"}` ([`KeyRefused::response`]). Keys never meet
/// [`two_factors`](RequireAuthLayer::two_factors) or [`max_age`](RequireAuthLayer::max_age),
/// which ask how a person signed in. [`permission`](RequireAuthLayer::permission) and
/// [`role`](RequireAuthLayer::role) ask more of the principal.
///
/// [`CurrentPrincipal`]: crate::CurrentPrincipal
/// [`Principal`]: authcore::account::Principal
/// [`KeyRefused::response`]: authcore::account::KeyRefused::response
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
    requirement: Arc<Requirement>,
}

impl RequireAuthLayer {
    /// Redirects anonymous users to the sign-in page.
    pub fn new(auth: Auth) -> Self {
        RequireAuthLayer {
            auth,
            denial: Denial::Redirect,
            step_up: StepUp::default(),
            requirement: Arc::default(),
        }
    }

    /// Answers anonymous requests with `401` `{"error":"SessionRequired"}` (for APIs).
    pub fn json(auth: Auth) -> Self {
        RequireAuthLayer {
            auth,
            denial: Denial::Json,
            step_up: StepUp::default(),
            requirement: Arc::default(),
        }
    }

    /// Also requires `permission` (`resource:action`) in the organization the request acts
    /// in: the API key's, or the session's active one ([`Principal::has_permission`]).
    /// Signed-in requests without it get `403`: `{"error":"Forbidden","permission":"…"}`
    /// for API clients (the [`json`](RequireAuthLayer::json) layer, or an `Accept` without
    /// `text/html`), else a short page ([`Unmet::response`]). Called again, both are
    /// required. A route whose path names an organization also compares it with the
    /// principal's. Without organizations configured no request holds one: every
    /// signed-in request gets `403`.
    ///
    /// ```
    /// use authcore_axum::{CurrentPrincipal, RequireAuthLayer};
    /// use axum::{Router, routing::post};
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    ///
    /// let billing: Router<authcore::Auth> = Router::new()
    ///     .route("/api/invoices", post(|CurrentPrincipal(who): CurrentPrincipal| async move {
    ///         format!("invoice made by {}", who.user_id)
    ///     }))
    ///     .route_layer(RequireAuthLayer::json(auth).permission("billing:write"));
    /// ```
    ///
    /// # Panics
    ///
    /// When `permission` is not of the form the roles use ([`Requirement::permission`]).
    ///
    /// [`Principal::has_permission`]: authcore::account::Principal::has_permission
    /// [`Unmet::response`]: authcore::organizations::Unmet::response
    pub fn permission(mut self, permission: impl Into<String>) -> Self {
        let requirement = Arc::unwrap_or_clone(self.requirement);
        self.requirement = Arc::new(requirement.permission(permission));
        self
    }

    /// Also requires `role` in the organization the request acts in
    /// ([`Principal::has_role`]; a key has those of its maker's roles whose permissions it
    /// holds all of). Answered as [`permission`](RequireAuthLayer::permission) is, with
    /// `"role"` in the JSON.
    ///
    /// # Panics
    ///
    /// When `role` is not a role name ([`Requirement::role`]).
    ///
    /// [`Principal::has_role`]: authcore::account::Principal::has_role
    pub fn role(mut self, role: impl Into<String>) -> Self {
        let requirement = Arc::unwrap_or_clone(self.requirement);
        self.requirement = Arc::new(requirement.role(role));
        self
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
            requirement: Arc::clone(&self.requirement),
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
    requirement: Arc<Requirement>,
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
        let requirement = Arc::clone(&self.requirement);
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            // Who the request acts as, where API keys and roles exist or the route asks.
            let wants_principal =
                auth.config().organizations().is_some() || !requirement.is_empty();
            let principal = if wants_principal {
                crate::service::client_addr_from_connect_info(&mut parts.extensions);
                match auth.principal_of_request(&parts).await {
                    Ok(p) => p,
                    Err(refused) => return Ok(refused.response().into_response()),
                }
            } else {
                None
            };
            let keyed = principal.as_ref().is_some_and(|p| p.api_key.is_some());
            let (session, set_cookie) = if keyed {
                // The key decides who this is: a cookie sent beside it is not the session.
                mark_signed_out(&mut parts.extensions);
                (None, Vec::new())
            } else {
                let Ok(found) =
                    resolve_with_cookies(&auth, &parts.uri, &parts.headers, &mut parts.extensions)
                        .await
                else {
                    // A configuration error, already logged by authcore.
                    return Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response());
                };
                found
            };
            let signed_in = match &session {
                _ if keyed => step_up.is_met(None),
                Some(s) => step_up.is_met_by(s),
                None => false,
            };
            let mut res = match (session, principal) {
                (_, Some(p)) if signed_in => match requirement.unmet(&p) {
                    None => {
                        parts.extensions.insert(p);
                        pass(&mut inner, parts, body).await?
                    }
                    Some(unmet) => {
                        let json = denial == Denial::Json || !accepts_html(&parts.headers);
                        unmet.response(json).into_response()
                    }
                },
                // Nothing beyond a session asked, and no principal looked for.
                (Some(_), None) if signed_in && !wants_principal => {
                    pass(&mut inner, parts, body).await?
                }
                (Some(s), _) if !signed_in && step_up.needs_two_factors() => {
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
                // Signed out, a sign-in that does not show what is asked, or a session the
                // principal's read no longer found.
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

/// Calls the guarded routes.
async fn pass<S, B>(inner: &mut S, parts: Parts, body: B) -> Result<Response, S::Error>
where
    S: Service<Request<B>>,
    S::Response: IntoResponse,
{
    Ok(inner
        .call(Request::from_parts(parts, body))
        .await?
        .into_response())
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
