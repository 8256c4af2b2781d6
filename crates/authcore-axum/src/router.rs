//! [`AuthRouterExt`]: mount authcore on an axum [`Router`] with one call.

use authcore::Auth;
use axum::Router;

use crate::AuthService;

/// Adds the authcore routes to an axum [`Router`].
pub trait AuthRouterExt {
    /// Routes `<basePath>/{*rest}` (every action under the configured base path, and
    /// nothing else) to an [`AuthService`], leaving the path intact for authcore.
    ///
    /// Works for the default base path `/auth` and custom ones (`/api/auth`, from
    /// `AuthConfigBuilder::base_path` or `AUTH_URL`). With base path `/` (empty) the route
    /// is `/{*rest}`, which catches every path no other route matches.
    ///
    /// # Panics
    ///
    /// Like [`Router::route_service`], if the router already has a route on that path.
    ///
    /// ```
    /// use authcore_axum::AuthRouterExt;
    /// use axum::{Router, routing::get};
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    ///
    /// let app: Router = Router::new()
    ///     .route("/", get(|| async { "home" }))
    ///     .auth_routes(auth); // GET /auth/session, POST /auth/callback/credentials, …
    /// ```
    #[must_use]
    fn auth_routes(self, auth: Auth) -> Self;
}

impl<S> AuthRouterExt for Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    fn auth_routes(self, auth: Auth) -> Self {
        let path = route_path(auth.config().base_path());
        self.route_service(&path, AuthService::new(auth))
    }
}

/// `<basePath>/{*rest}`, with braces in the base path escaped for axum's route syntax.
fn route_path(base_path: &str) -> String {
    let mut path = String::with_capacity(base_path.len() + 9);
    for c in base_path.chars() {
        match c {
            '{' => path.push_str("{{"),
            '}' => path.push_str("}}"),
            c => path.push(c),
        }
    }
    path.push_str("/{*rest}");
    path
}

#[cfg(test)]
mod tests {
    use super::route_path;

    #[test]
    fn route_paths() {
        assert_eq!(route_path("/auth"), "/auth/{*rest}");
        assert_eq!(route_path("/api/auth"), "/api/auth/{*rest}");
        assert_eq!(route_path(""), "/{*rest}");
        assert_eq!(route_path("/a{b}"), "/a{{b}}/{*rest}");
    }
}
