//! [`AuthRouterExt`]: mount authcore on an axum [`Router`] with one call.

use authcore::Auth;
use authcore::account::{AccountRoute, AdminRoute};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::routing::any;

use crate::AuthService;

/// Adds the authcore routes to an axum [`Router`].
pub trait AuthRouterExt {
    /// Routes `<basePath>/{*rest}` (every action under the configured base path, and
    /// nothing else) to an [`AuthService`], leaving the path intact for authcore. The bare
    /// base path and `<basePath>/` are routed too, so they get authcore's answer to an
    /// unknown action (400 `"Bad request."`, as Auth.js) instead of the router's 404.
    ///
    /// Works for the default base path `/auth` and custom ones (`/api/auth`, from
    /// `AuthConfigBuilder::base_path` or `AUTH_URL`). With base path `/` (empty) the route
    /// is `/{*rest}`, which catches every path no other route matches (`/` stays free for
    /// the application).
    ///
    /// # Panics
    ///
    /// Like [`Router::route_service`], if the router already has a route on that path.
    ///
    /// ```
    /// use authcore_axum::AuthRouterExt;
    /// use axum::{Router, routing::get};
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    ///
    /// let app: Router = Router::new()
    ///     .route("/", get(|| async { "home" }))
    ///     .auth_routes(auth); // GET /auth/session, POST /auth/callback/credentials, …
    /// ```
    #[must_use]
    fn auth_routes(self, auth: Auth) -> Self;

    /// Routes the account-management JSON routes (`GET /account`, `POST /account/unlink`,
    /// `GET /account/sessions` … — the table in [`authcore::account`]) to
    /// [`Auth::handle_account`]: for the signed-in user of the request, every change
    /// CSRF-checked.
    ///
    /// # Panics
    ///
    /// Like [`Router::route`], if the router already has a route on one of those paths.
    ///
    /// ```
    /// use authcore_axum::AuthRouterExt;
    /// use axum::Router;
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    ///
    /// let app: Router = Router::new()
    ///     .auth_routes(auth.clone())
    ///     .account_routes(auth); // GET /account, POST /account/sessions/revoke-others, …
    /// ```
    #[must_use]
    fn account_routes(self, auth: Auth) -> Self;

    /// Mounts the administrators' JSON routes at the root (`/admin/users`,
    /// `/admin/users/ban`, …: the table of `authcore::account::AdminRoute`'s module), each
    /// answered by [`Auth::handle_admin`]: an administrator's session cookie (and CSRF token
    /// for a change) or an administrators' API key.
    #[must_use]
    fn admin_routes(self, auth: Auth) -> Self;
}

impl<S> AuthRouterExt for Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    fn auth_routes(self, auth: Auth) -> Self {
        let base = escape(auth.config().base_path());
        let service = AuthService::new(auth);
        let router = self.route_service(&format!("{base}/{{*rest}}"), service.clone());
        if base.is_empty() {
            return router;
        }
        router
            .route_service(&format!("{base}/"), service.clone())
            .route_service(&base, service)
    }

    fn account_routes(mut self, auth: Auth) -> Self {
        for route in AccountRoute::ALL {
            let auth = auth.clone();
            // Every method reaches authcore, which answers a wrong one with its JSON 405.
            self = self.route(
                route.path(),
                any(move |request: Request| async move {
                    auth.handle_account(route, request).await.map(Body::new)
                }),
            );
        }
        self
    }

    fn admin_routes(mut self, auth: Auth) -> Self {
        for route in AdminRoute::ALL {
            let auth = auth.clone();
            // Every method reaches authcore, which answers a wrong one with its JSON 405.
            self = self.route(
                route.path(),
                any(move |request: Request| async move {
                    auth.handle_admin(route, request).await.map(Body::new)
                }),
            );
        }
        self
    }
}

/// A path with braces escaped for axum's route syntax.
fn escape(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len() + 2);
    for c in path.chars() {
        match c {
            '{' => escaped.push_str("{{"),
            '}' => escaped.push_str("}}"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn braces_are_escaped_for_axum() {
        assert_eq!(escape("/auth"), "/auth");
        assert_eq!(escape(""), "");
        assert_eq!(escape("/a{b}"), "/a{{b}}");
    }
}
