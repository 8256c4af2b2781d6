//! The [`Session`] and [`OptionalSession`] extractors and the [`SessionRequired`] rejection.

use authcore::{Auth, SessionJson, SessionSlot};
use axum::extract::{FromRef, FromRequestParts, OptionalFromRequestParts};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, Uri};
use serde_json::Value;
use std::convert::Infallible;

/// The extractor of a signed-in user's session: the [`SessionJson`] the request's session
/// read found (the JSON object `GET <basePath>/session` returns, `{"user": {"name", "email",
/// "image"}, "expires"}` by default plus whatever the `session` callback adds, with the
/// user's id and sign-in), which it derefs to. Cheap to clone.
///
/// As an extractor it needs the [`Auth`] from the router state (`Auth: FromRef<S>`): use
/// `.with_state(auth)`, or a state struct with `#[derive(Clone, FromRef)]` and an
/// `auth: Auth` field. It rejects anonymous requests with [`SessionRequired`] (`401`). Behind
/// a [`RequireAuthLayer`](crate::RequireAuthLayer) it reads the session the layer already
/// looked up, from the request extensions (so `Extension<Session>` works there too).
/// `Option<Session>` and [`OptionalSession`] never reject.
///
/// ```
/// use authcore::Auth;
/// use authcore_axum::{AuthRouterExt, Session};
/// use axum::{Router, extract::FromRef, routing::get};
///
/// #[derive(Clone, FromRef)]
/// struct AppState {
///     auth: Auth,
/// }
///
/// async fn me(session: Session) -> String {
///     format!("hello {}", session.user_name().unwrap_or("you"))
/// }
///
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
/// let app: Router = Router::new()
///     .route("/me", get(me))
///     .auth_routes(auth.clone())
///     .with_state(AppState { auth });
/// ```
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

/// Marks a request whose session was looked up and found absent, so a second extractor
/// on the same request does not decode the cookie again.
#[derive(Clone, Copy, Debug)]
struct SignedOut;

/// Marks the request as having no session, whatever its cookie: for requests an API key
/// authenticated, whose `Session` extractor must not find the cookie's user.
pub(crate) fn mark_signed_out(extensions: &mut http::Extensions) {
    extensions.remove::<Session>();
    extensions.insert(SignedOut);
}

/// The request's extensions as the place authcore keeps what its session read found: a
/// [`Session`] (which `Extension<Session>` then reads) or the [`SignedOut`] mark.
struct Slot<'a>(&'a mut http::Extensions);

impl SessionSlot for Slot<'_> {
    fn found(&self) -> Option<Option<SessionJson>> {
        if let Some(s) = self.0.get::<Session>() {
            return Some(Some(s.0.clone()));
        }
        self.0.get::<SignedOut>().map(|_| None)
    }

    fn keep(&mut self, found: Option<SessionJson>) {
        match found {
            Some(json) => self.0.insert(Session(json)).map(drop),
            None => self.0.insert(SignedOut).map(drop),
        };
    }
}

/// The request's session, read once per request ([`Auth::read_session_once`]), with the
/// `Set-Cookie` values that refresh it. A configuration error (already logged by authcore)
/// is returned as `Err`.
pub(crate) async fn resolve_with_cookies(
    auth: &Auth,
    uri: &Uri,
    headers: &HeaderMap,
    extensions: &mut http::Extensions,
) -> Result<(Option<Session>, Vec<http::HeaderValue>), authcore::AuthError> {
    let (found, set_cookie) = auth
        .read_session_once(uri, headers, &mut Slot(extensions))
        .await?;
    Ok((found.map(Session), set_cookie))
}

/// [`resolve_with_cookies`] for extractors, which cannot set cookies: errors count as
/// signed out.
pub(crate) async fn resolve(
    auth: &Auth,
    uri: &Uri,
    headers: &HeaderMap,
    extensions: &mut http::Extensions,
) -> Option<Session> {
    resolve_with_cookies(auth, uri, headers, extensions)
        .await
        .ok()
        .and_then(|(s, _)| s)
}

impl<S> FromRequestParts<S> for Session
where
    Auth: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = SessionRequired;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let auth = Auth::from_ref(state);
        resolve(&auth, &parts.uri, &parts.headers, &mut parts.extensions)
            .await
            .ok_or(SessionRequired)
    }
}

impl<S> OptionalFromRequestParts<S> for Session
where
    Auth: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> Result<Option<Self>, Self::Rejection> {
        let auth = Auth::from_ref(state);
        Ok(resolve(&auth, &parts.uri, &parts.headers, &mut parts.extensions).await)
    }
}

/// The session if the user is signed in, `None` otherwise; never rejects. Same as
/// extracting `Option<Session>`.
///
/// ```
/// use authcore_axum::OptionalSession;
///
/// async fn home(OptionalSession(session): OptionalSession) -> String {
///     match session.as_ref().and_then(|s| s.user_name()) {
///         Some(name) => format!("signed in as {name}"),
///         None => "not signed in".to_owned(),
///     }
/// }
/// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
/// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
/// #     .build().unwrap());
/// let app: axum::Router = axum::Router::new()
///     .route("/", axum::routing::get(home))
///     .with_state(auth);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptionalSession(pub Option<Session>);

impl<S> FromRequestParts<S> for OptionalSession
where
    Auth: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let auth = Auth::from_ref(state);
        Ok(OptionalSession(
            resolve(&auth, &parts.uri, &parts.headers, &mut parts.extensions).await,
        ))
    }
}

/// Rejection of the [`Session`] extractor (and answer of
/// [`RequireAuthLayer::json`](crate::RequireAuthLayer::json)) for anonymous requests:
/// `401 Unauthorized` with the JSON body `{"error":"SessionRequired"}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionRequired;

impl std::fmt::Display for SessionRequired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a signed-in session is required")
    }
}

impl std::error::Error for SessionRequired {}

impl IntoResponse for SessionRequired {
    fn into_response(self) -> Response {
        let mut res = (StatusCode::UNAUTHORIZED, r#"{"error":"SessionRequired"}"#).into_response();
        res.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res
    }
}
