//! The demo application: a credentials sign-in (`demo` / a configurable password), a home
//! page showing the session, and a page only signed-in users may see, around authcore's
//! routes and the account routes.

use std::sync::Arc;

use askama::Template;
use authcore::adapter::{Adapter, AdapterError, AdapterUser, NewUser};
use authcore::providers::{AuthorizeError, CredentialsProvider};
use authcore::{Auth, User};
use authcore_axum::{AuthRouterExt, OptionalSession, RequireAuthLayer, Session};
use authcore_sqlx::SqlxAdapter;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use subtle::ConstantTimeEq;

/// The demo user's username.
pub const DEMO_USERNAME: &str = "demo";
/// The demo user's email.
pub const DEMO_EMAIL: &str = "demo@example.com";

/// The demo user's row, made if it is missing: at start-up, and at each password sign-in,
/// so that a demo user deleted from the account page comes back at the next sign-in
/// instead of breaking it. Two sign-ins racing to make it read the one that won.
pub(crate) async fn demo_user(db: &SqlxAdapter) -> Result<AdapterUser, AdapterError> {
    if let Some(u) = db.get_user_by_email(DEMO_EMAIL).await? {
        return Ok(u);
    }
    let created = db
        .create_user(NewUser {
            name: Some("Demo User".into()),
            email: Some(DEMO_EMAIL.into()),
            ..Default::default()
        })
        .await;
    match created {
        Ok(u) => Ok(u),
        Err(e) => db.get_user_by_email(DEMO_EMAIL).await?.ok_or(e),
    }
}

/// The demo's credentials provider: `demo` / `password`, the stored demo user with a
/// database (`users`), user id `1` without.
pub(crate) fn credentials(password: Arc<str>, users: Option<SqlxAdapter>) -> CredentialsProvider {
    CredentialsProvider::username_password().authorize(move |credentials, _request| {
        let expected = Arc::clone(&password);
        let users = users.clone();
        async move {
            let field = |k: &str| credentials.get(k).and_then(Value::as_str);
            let user_ok = field("username") == Some(DEMO_USERNAME);
            let password_ok = field("password")
                .is_some_and(|p| bool::from(p.as_bytes().ct_eq(expected.as_bytes())));
            if !(user_ok && password_ok) {
                return Ok(None);
            }
            let id = match &users {
                Some(db) => {
                    demo_user(db)
                        .await
                        .map_err(|e| AuthorizeError::Other(e.into()))?
                        .id
                }
                None => "1".to_owned(),
            };
            Ok(Some(User::with_id(id).name("Demo User").email(DEMO_EMAIL)))
        }
    })
}

/// The demo application around a handler built elsewhere: `/` (home), `/protected`
/// (signed-in users only), the account routes, and authcore under its base path (`/auth`
/// unless `AUTH_URL` says otherwise).
///
/// This is the way to serve the demo's pages with an [`Auth`] configured by hand. The
/// standalone server is [`ServerConfig::build`](crate::ServerConfig::build)'s [`Server`](crate::Server) instead: its router is this
/// one around the handler of its configuration, with the gateway's routes, the probes and
/// the HTTP metrics the configuration asks for.
pub fn router(auth: Auth) -> Router {
    let protected = Router::new()
        .route("/protected", get(protected_page))
        .route_layer(RequireAuthLayer::new(auth.clone()));
    let app = Router::new()
        .route("/", get(home_page))
        .merge(protected)
        .account_routes(auth.clone())
        .admin_routes(auth.clone())
        .auth_routes(auth.clone());
    // The request log is a DEBUG line; without it the middleware (a boxed future per
    // request) is not installed at all.
    let app = if request_log_enabled() {
        app.layer(middleware::from_fn(log_request))
    } else {
        app
    };
    app.with_state(auth)
}

/// Whether the request log (a DEBUG line per request, [`router`]'s layer) is on.
pub(crate) fn request_log_enabled() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

/// The signed-in user, as the pages show it.
struct UserView<'a> {
    name: &'a str,
    email: Option<&'a str>,
}

impl<'a> UserView<'a> {
    fn of(session: &'a Session) -> Self {
        UserView {
            name: session.user_name().unwrap_or("(no name)"),
            email: session.user_email(),
        }
    }
}

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage<'a> {
    base_path: &'a str,
    user: Option<UserView<'a>>,
}

#[derive(Template)]
#[template(path = "protected.html")]
struct ProtectedPage<'a> {
    base_path: &'a str,
    user: UserView<'a>,
    expires: Option<&'a str>,
}

async fn home_page(
    State(auth): State<Auth>,
    OptionalSession(session): OptionalSession,
) -> Response {
    html(&HomePage {
        base_path: auth.config().base_path(),
        user: session.as_ref().map(UserView::of),
    })
}

async fn protected_page(State(auth): State<Auth>, session: Session) -> Response {
    html(&ProtectedPage {
        base_path: auth.config().base_path(),
        user: UserView::of(&session),
        expires: session.expires(),
    })
}

/// Renders a page; it depends on the session, so no cache may keep it.
fn html(page: &impl Template) -> Response {
    match page.render() {
        Ok(body) => {
            let mut res = Html(body).into_response();
            res.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, no-store"),
            );
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "page rendering failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Logs each request at `debug` level (`RUST_LOG=authcore_server=debug`).
async fn log_request(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let start = std::time::Instant::now();
    let res = next.run(req).await;
    tracing::debug!(
        %method,
        path,
        status = res.status().as_u16(),
        elapsed_us = start.elapsed().as_micros(),
        "request"
    );
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn pages_escape_user_data() {
        let html = HomePage {
            base_path: "/auth",
            user: Some(UserView {
                name: "<script>alert(1)</script>",
                email: Some("a&b@example.com"),
            }),
        }
        .render()
        .unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&#60;script&#62;"), "{html}");
        assert!(html.contains("a&#38;b@example.com"), "{html}");
    }
}
