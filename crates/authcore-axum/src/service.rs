//! [`AuthService`]: the authcore handler as a tower `Service`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::net::SocketAddr;

use authcore::request::ClientAddr;
use authcore::{Auth, BoxError};
use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, OriginalUri};
use axum::response::Response;
use http::Request;
use tower_service::Service;

/// The authcore handler as a tower [`Service`]: every request is handed to
/// [`Auth::handle`] and its response returned as an axum [`Response`]. It never fails.
///
/// authcore reads the action from the full request path (`/auth/session`,
/// `/api/auth/callback/credentials` …), so the service must see the path the client sent.
/// When the request carries axum's [`OriginalUri`] (a router nested with `nest` or
/// `nest_service` strips its prefix from the URI but keeps the original there), that URI is
/// used. Most applications mount it with
/// [`AuthRouterExt::auth_routes`](crate::AuthRouterExt::auth_routes) instead of by hand.
///
/// ```
/// use authcore_axum::AuthService;
/// use axum::Router;
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
///
/// // What `auth_routes` does for the default base path `/auth`:
/// let app: Router = Router::new().route_service("/auth/{*rest}", AuthService::new(auth));
/// ```
#[derive(Clone, Debug)]
pub struct AuthService {
    auth: Auth,
}

impl AuthService {
    /// Wraps a handler.
    pub fn new(auth: Auth) -> Self {
        AuthService { auth }
    }

    /// The wrapped handler.
    pub fn auth(&self) -> &Auth {
        &self.auth
    }
}

impl From<Auth> for AuthService {
    fn from(auth: Auth) -> Self {
        AuthService::new(auth)
    }
}

impl<B> Service<Request<B>> for AuthService
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send + 'static>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        if let Some(OriginalUri(uri)) = req.extensions_mut().remove::<OriginalUri>() {
            *req.uri_mut() = uri;
        }
        client_addr_from_connect_info(req.extensions_mut());
        let auth = self.auth.clone();
        Box::pin(async move { Ok(auth.handle(req).await.map(Body::new)) })
    }
}

/// The peer address for per-client rate limits, from axum's `ConnectInfo`
/// (`into_make_service_with_connect_info::<SocketAddr>()`), unless the host set one.
pub(crate) fn client_addr_from_connect_info(extensions: &mut http::Extensions) {
    if extensions.get::<ClientAddr>().is_none()
        && let Some(ConnectInfo(peer)) = extensions.get::<ConnectInfo<SocketAddr>>()
    {
        let ip = peer.ip();
        extensions.insert(ClientAddr(ip));
    }
}
