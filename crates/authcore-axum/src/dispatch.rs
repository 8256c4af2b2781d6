//! [`AuthDispatch`]: authcore's actions answered before the router.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use authcore::request::is_auth_action;
use authcore::{Auth, BoxError};
use axum::body::HttpBody;
use axum::response::Response;
use http::Request;
use tower_service::Service;

use crate::AuthService;

/// A service in front of an application (usually an axum [`Router`](axum::Router)) that
/// hands requests for authcore's actions — `<basePath>/<action>[/…]`, `action` one of the
/// nine Auth.js actions — straight to [`Auth::handle`] through [`AuthService`], and every
/// other request to the application.
///
/// The answers are those of the router with [`auth_routes`](crate::AuthRouterExt::auth_routes)
/// mounted, without the router's work per request (route matching, the path parameters and
/// original URI it stores in the request's extensions, one more boxed future), which costs
/// about as much as answering `GET /providers` itself. The application should mount
/// authcore with `auth_routes` as well: paths under the base path that name no action
/// (`/auth`, `/auth/unknown`) are left to it. A route of the application's own that
/// matches an action path is never reached through this service.
///
/// Layers added to the router (with `Router::layer`) do not see the requests answered
/// here: wrap the `AuthDispatch` itself in layers that must see every request.
///
/// ```
/// use authcore_axum::{AuthDispatch, AuthRouterExt};
/// use axum::{Router, routing::get};
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
///
/// let app: Router = Router::new()
///     .route("/", get(|| async { "home" }))
///     .auth_routes(auth.clone());
/// let service = AuthDispatch::new(auth, app);
/// # async fn serve(service: AuthDispatch<Router>) -> std::io::Result<()> {
/// use axum::extract::Request;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// axum::serve(listener, axum::ServiceExt::<Request>::into_make_service(service)).await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct AuthDispatch<S> {
    auth: AuthService,
    inner: S,
}

impl<S> AuthDispatch<S> {
    /// `auth`'s actions in front of `inner`.
    pub fn new(auth: Auth, inner: S) -> Self {
        AuthDispatch {
            auth: AuthService::new(auth),
            inner,
        }
    }

    /// Whether a request for `path` goes to authcore.
    fn takes(&self, path: &str) -> bool {
        is_action_path(path, self.auth.auth().config().base_path())
    }
}

/// `<base>/<action>` or `<base>/<action>/…`. A first look only, made for every request the
/// service sees (the application's too), so it allocates nothing, unlike
/// `authcore::request::parse_action_and_provider_id`, whose stricter rules (repeated
/// slashes, provider segments) authcore applies to whatever reaches it either way.
fn is_action_path(path: &str, base: &str) -> bool {
    path.strip_prefix(base)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split('/').next())
        .is_some_and(is_auth_action)
}

type BoxResponseFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S, B> Service<Request<B>> for AuthDispatch<S>
where
    S: Service<Request<B>, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // `AuthService` is always ready; the application decides.
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if self.takes(req.uri().path()) {
            self.auth.call(req)
        } else {
            Box::pin(self.inner.call(req))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_action_path;

    #[test]
    fn action_paths_under_the_base_path() {
        for (path, base, want) in [
            ("/auth/session", "/auth", true),
            ("/auth/callback/github", "/auth", true),
            ("/auth/session/", "/auth", true),
            ("/auth/webauthn-options/passkey", "/auth", true),
            ("/api/auth/csrf", "/api/auth", true),
            ("/csrf", "", true),
            ("/signin/github", "", true),
            ("/auth", "/auth", false),
            ("/auth/", "/auth", false),
            ("/auth/unknown", "/auth", false),
            ("/auth//session", "/auth", false),
            ("/authsession", "/auth", false),
            ("/auth-x/session", "/auth", false),
            ("/other/session", "/auth", false),
            ("/", "", false),
            ("/dashboard", "", false),
            // authcore's account page: at the root base path it is `/account`.
            ("/account", "", true),
            ("/auth/%73ession", "/auth", false),
        ] {
            assert_eq!(is_action_path(path, base), want, "{path} under {base:?}");
        }
    }
}
