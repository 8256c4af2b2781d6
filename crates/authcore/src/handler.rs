//! The request handler: parse → assert → init → action → render, with the Auth.js error
//! wrapper (`Auth` in Auth.js `index.ts`) applied in one place.

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::actions::{self, pages};
use crate::config::{AuthConfig, ConfigInner};
use crate::cookies::{SetCookie, encode_uri_component};
use crate::error::{AuthError, BoxError, ErrorKind};
use crate::request::{Action, ParseError, RequestInternal, parse_request};
use crate::response::{RawBody, RawResponse, ResponseBody, render};

/// The authcore handler: give it an `http::Request`, get the `http::Response`.
///
/// ```
/// use authcore::{Auth, AuthConfig, providers::CredentialsProvider};
/// # tokio_test_block(async {
/// let auth = Auth::new(AuthConfig::builder()
///     .secret("a long random secret-xxxxxxxxxxx")
///     .trust_host(true)
///     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
///     .build()?);
/// let req = http::Request::get("http://localhost:3000/auth/providers")
///     .body(http_body_util::Empty::<bytes::Bytes>::new())?;
/// let res = auth.handle(req).await;
/// assert_eq!(res.status(), 200);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # });
/// # fn tokio_test_block<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Auth {
    config: AuthConfig,
}

/// Why [`Auth::handle_raw`] produced no response record.
pub type RawResult = Result<RawResponse, AuthError>;

/// A handle to an [`Auth`] that does not keep it alive ([`Auth::downgrade`]).
#[derive(Clone, Debug, Default)]
pub struct WeakAuth(std::sync::Weak<crate::config::ConfigInner>);

impl WeakAuth {
    /// The handler, while something else still holds it.
    pub fn upgrade(&self) -> Option<Auth> {
        self.0.upgrade().map(|inner| Auth {
            config: AuthConfig { inner },
        })
    }
}

impl Auth {
    /// A handler for a validated configuration.
    pub fn new(config: AuthConfig) -> Self {
        Auth { config }
    }

    /// The configuration.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// A handle to this handler that does not keep it alive: for what the handler's own
    /// configuration holds (its events, its callbacks) and needs the handler back, without
    /// a reference cycle that would keep both, and their database pools, for ever.
    pub fn downgrade(&self) -> WeakAuth {
        WeakAuth(std::sync::Arc::downgrade(&self.config.inner))
    }

    /// Marks `value` of `kind` as used in the single-use store that OAuth codes, refresh
    /// claims and passkey challenges use (this process's, or the one instances share through
    /// `rate_limit_store`); `false` when it was used already within `ttl`. Only a hash of
    /// the value is kept. A failing shared store lets the value through (and logs), as it
    /// does for authcore's own marks.
    pub async fn first_use(&self, kind: &str, value: &str, ttl: std::time::Duration) -> bool {
        crate::ratelimit::first_use(&*self.config.inner.single_use_store, kind, value, ttl).await
    }

    /// [`Auth::first_use`] that fails closed: an error when the store cannot say, for a
    /// caller that would rather refuse than let a replay through (an OpenID Provider's codes
    /// and refresh tokens).
    pub async fn first_use_checked(
        &self,
        kind: &str,
        value: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, crate::BoxError> {
        crate::ratelimit::first_use_checked(&*self.config.inner.single_use_store, kind, value, ttl)
            .await
    }

    /// Marks `value` of `kind` (a revoked token's id) for `ttl` in the same store as
    /// [`Auth::first_use`]; [`Auth::is_marked`] reads it. Only a hash of the value is kept.
    pub async fn mark(
        &self,
        kind: &str,
        value: &str,
        ttl: std::time::Duration,
    ) -> Result<(), crate::BoxError> {
        crate::ratelimit::mark(&*self.config.inner.single_use_store, kind, value, ttl).await
    }

    /// Whether `value` of `kind` is marked ([`Auth::mark`]); an error when the store cannot
    /// say (a shared store that is down: the caller decides, and should refuse).
    pub async fn is_marked(&self, kind: &str, value: &str) -> Result<bool, crate::BoxError> {
        crate::ratelimit::is_marked(&*self.config.inner.single_use_store, kind, value).await
    }

    /// Handles one request.
    pub async fn handle<B>(&self, req: http::Request<B>) -> http::Response<ResponseBody>
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let c = &*self.config.inner;
        let parsed = match parse_request(c, req).await {
            Ok(p) => p,
            Err(e) => return render(bad_request(c, e), false),
        };
        let return_redirect = parsed.return_redirect;
        match run(c, &parsed).await {
            Ok(r) => render(r, return_redirect),
            Err(Failure::Assertion(e)) => render(assertion_failure(c, &parsed, &e), false),
            Err(Failure::Action(e)) => {
                let r = error_response(c, &parsed, &e);
                let mut r = if return_redirect { url_json(r) } else { r };
                if let AuthError::RateLimited { retry_after, .. } = &e {
                    // JSON clients get 429 (the redirect keeps its 302); both say when.
                    if return_redirect {
                        r.status = Some(StatusCode::TOO_MANY_REQUESTS);
                    }
                    let seconds = retry_after.as_secs().max(1);
                    r.headers
                        .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
                }
                render(r, false)
            }
        }
    }

    /// Raw mode (Auth.js `raw`): returns the internal response record, and returns Auth.js
    /// errors instead of turning them into redirects (unless `X-Auth-Return-Redirect` is set).
    pub async fn handle_raw<B>(&self, req: http::Request<B>) -> RawResult
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let c = &*self.config.inner;
        let parsed = match parse_request(c, req).await {
            Ok(p) => p,
            Err(e) => return Ok(bad_request(c, e)),
        };
        match run(c, &parsed).await {
            Ok(r) => Ok(r),
            Err(Failure::Assertion(e)) => Ok(assertion_failure(c, &parsed, &e)),
            Err(Failure::Action(e)) if !parsed.return_redirect => {
                c.logger.error(&e);
                Err(e)
            }
            Err(Failure::Action(e)) => Ok(error_response(c, &parsed, &e)),
        }
    }
}

impl Auth {
    /// The current session for a request's headers, as `GET <basePath>/session` would return
    /// it (callbacks and events run), or `None` when signed out or on any failure (which is
    /// logged). See [`Auth::lookup_session`] for the refreshed cookie and the error.
    pub async fn session(&self, uri: &http::Uri, headers: &http::HeaderMap) -> Option<Value> {
        self.lookup_session(uri, headers).await.ok()?.session
    }

    /// Looks up the session for a request to another route (guards, extractors): runs
    /// `GET <basePath>/session` with the request's cookies and host headers, and returns the
    /// session JSON plus the `Set-Cookie` values that refresh (or clear) the session cookie,
    /// which a guard should add to its response so that sessions keep rolling.
    ///
    /// `uri` is the incoming request's URI (with the `Host` header it picks secure or plain
    /// cookie names). Errors are configuration problems (e.g. `UntrustedHost`), not "signed out".
    pub async fn lookup_session(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<SessionLookup, AuthError> {
        self.lookup_session_with(uri, headers, LookupOptions::default())
            .await
    }

    /// [`Auth::lookup_session`] with [`LookupOptions`]: e.g. a gateway that checks every
    /// request re-issues the JWT session cookie only now and then.
    ///
    /// ```
    /// # async fn demo(auth: authcore::Auth, uri: http::Uri, headers: http::HeaderMap) {
    /// use std::time::Duration;
    /// let options = authcore::LookupOptions::default().refresh_jwt_after(Duration::from_secs(3600));
    /// let lookup = auth.lookup_session_with(&uri, &headers, options).await;
    /// # }
    /// ```
    pub async fn lookup_session_with(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        options: LookupOptions,
    ) -> Result<SessionLookup, AuthError> {
        let c = &*self.config.inner;
        let mut parsed = self.session_request(uri, headers)?;
        parsed.lookup = Some(crate::request::Lookup {
            // At most half the session's lifetime, so an active session never runs out.
            jwt_refresh_age: options
                .refresh_jwt_after
                .map(|age| age.as_secs().min(c.session_max_age / 2)),
        });
        let resp = run(c, &parsed).await.map_err(|f| match f {
            Failure::Assertion(e) | Failure::Action(e) => {
                c.logger.error(&e);
                e
            }
        })?;
        let session_cookie = &*c.cookies(parsed.is_https()).session_token.name;
        let set_cookie = resp
            .cookies
            .iter()
            .filter(|k| k.name.starts_with(session_cookie))
            .filter_map(SetCookie::header_value)
            .collect();
        let session = match resp.body {
            Some(RawBody::JsonBytes(b)) => serde_json::from_slice(&b).ok(),
            Some(RawBody::Json(v)) => Some(v),
            _ => None,
        }
        .filter(|v: &Value| !v.is_null());
        let user_id = session.as_ref().and(resp.session_user_id);
        let sign_in = session.as_ref().and(resp.session_sign_in);
        // A database session's id (what the account page and `sessionsEnded` name it by).
        let session_id = session
            .as_ref()
            .filter(|_| options.session_id)
            .filter(|_| c.session_strategy == crate::config::SessionStrategy::Database)
            .and_then(|_| {
                let spec = &c.cookies(parsed.is_https()).session_token;
                crate::cookies::SessionCookieStore::new(spec, &parsed.cookies).value()
            })
            .map(|token| crate::actions::account::session_id(&c.stored_session_token(&token)));
        Ok(SessionLookup {
            session,
            user_id,
            sign_in,
            session_id,
            set_cookie,
        })
    }

    /// Decodes the session token of a request (Auth.js `getToken` in `jwt.ts`): from the
    /// (chunked) session cookie, else from `Authorization: Bearer <token>` (percent-decoded).
    /// `secure` picks the `__Secure-` cookie name. Any failure gives `None`.
    ///
    /// [`Auth::get_token_with`] takes Auth.js's other options (cookie name, salt).
    ///
    /// ```
    /// # use authcore::{Auth, AuthConfig, providers::CredentialsProvider};
    /// # let auth = Auth::new(AuthConfig::builder().secret("a long random secret-xxxxxxxxxxx").trust_host(true)
    /// #     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) })).build().unwrap());
    /// let claims = authcore::serde_json::json!({"sub": "1", "name": "Ada"});
    /// let token = auth.config().jwt()
    ///     .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
    ///     .unwrap();
    /// let mut headers = authcore::http::HeaderMap::new();
    /// headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    /// let decoded = auth.get_token(&headers, false).expect("a valid bearer token");
    /// assert_eq!(decoded["name"], "Ada");
    /// ```
    pub fn get_token(
        &self,
        headers: &http::HeaderMap,
        secure: bool,
    ) -> Option<crate::jwt::JwtClaims> {
        self.get_token_with(headers, &GetTokenOptions::new().secure_cookie(secure))
    }

    /// [`Auth::get_token`] with Auth.js's options: the cookie name (default: the session
    /// cookie's for `secure_cookie`) and the salt (default: the cookie name).
    pub fn get_token_with(
        &self,
        headers: &http::HeaderMap,
        options: &GetTokenOptions,
    ) -> Option<crate::jwt::JwtClaims> {
        let raw = self.get_raw_token_with(headers, options)?;
        let session = &self
            .config
            .inner
            .cookies(options.secure_cookie)
            .session_token;
        let salt = options
            .salt
            .as_deref()
            .or(options.cookie_name.as_deref())
            .unwrap_or(&session.name);
        self.config.inner.decode_session(&raw, salt).ok().flatten()
    }

    /// The undecoded session token of a request (`getToken({raw: true})`).
    pub fn get_raw_token(&self, headers: &http::HeaderMap, secure: bool) -> Option<String> {
        self.get_raw_token_with(headers, &GetTokenOptions::new().secure_cookie(secure))
    }

    /// [`Auth::get_raw_token`] with a cookie name other than the session cookie's.
    /// A Bearer value with malformed percent-encoding gives `None`, as in Auth.js.
    pub fn get_raw_token_with(
        &self,
        headers: &http::HeaderMap,
        options: &GetTokenOptions,
    ) -> Option<String> {
        // The session cookie prepared at build time, or the same options under another name.
        let session = &self
            .config
            .inner
            .cookies(options.secure_cookie)
            .session_token;
        let renamed;
        let spec = match &options.cookie_name {
            Some(name) => {
                renamed = crate::cookies::ResolvedCookie {
                    name: name.as_str().into(),
                    options: session.options.clone(),
                };
                &renamed
            }
            None => session,
        };
        let cookies = crate::cookies::RequestCookies::parse(
            headers
                .get_all(http::header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        let store = crate::cookies::SessionCookieStore::new(spec, &cookies);
        if let Some(v) = store.value() {
            return Some(v.into_owned());
        }
        let auth = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
        let token = auth.strip_prefix("Bearer ")?;
        crate::cookies::decode_uri_component(token)
    }
}

/// Options of [`Auth::get_token_with`] (Auth.js `getToken`'s `secureCookie`, `cookieName`
/// and `salt`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GetTokenOptions {
    /// Read the `__Secure-` session cookie (as on HTTPS).
    pub secure_cookie: bool,
    /// Read this cookie instead of the session cookie.
    pub cookie_name: Option<String>,
    /// The JWE key-derivation salt; defaults to the cookie name.
    pub salt: Option<String>,
}

impl GetTokenOptions {
    /// The defaults: the non-secure session cookie, salted with its name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the `__Secure-` cookie (`secureCookie`).
    pub fn secure_cookie(mut self, secure: bool) -> Self {
        self.secure_cookie = secure;
        self
    }

    /// Reads another cookie (`cookieName`); the salt follows unless set.
    pub fn cookie_name(mut self, name: impl Into<String>) -> Self {
        self.cookie_name = Some(name.into());
        self
    }

    /// Uses another salt (`salt`).
    pub fn salt(mut self, salt: impl Into<String>) -> Self {
        self.salt = Some(salt.into());
        self
    }
}

/// `<basePath>/session`, keeping the scheme and authority of an absolute `uri`.
impl Auth {
    /// `GET <basePath>/session` as a request to another route (`uri`, with `headers`)
    /// would send it: its cookies and host headers, parsed.
    pub(crate) fn session_request(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<RequestInternal, AuthError> {
        let c = &*self.config.inner;
        // Only what names the session and the site: the cookies and the host.
        let mut head = http::HeaderMap::new();
        for name in [
            http::header::COOKIE,
            http::header::HOST,
            crate::request::X_FORWARDED_HOST.clone(),
            crate::request::X_FORWARDED_PROTO.clone(),
        ] {
            for v in headers.get_all(&name) {
                head.append(name.clone(), v.clone());
            }
        }
        let invalid = |message: String| AuthError::InvalidRequest { message };
        let session_uri: http::Uri = session_uri(uri, &c.base_path)
            .parse()
            .map_err(|e: http::uri::InvalidUri| invalid(e.to_string()))?;
        let mut parsed = crate::request::parse_head(c, http::Method::GET, &session_uri, head, None)
            .map_err(AuthError::from)?;
        parsed.lookup = Some(crate::request::Lookup::default());
        Ok(parsed)
    }
}

fn session_uri(uri: &http::Uri, base_path: &str) -> String {
    match (uri.scheme_str(), uri.authority()) {
        (Some(s), Some(a)) => format!("{s}://{a}{base_path}/session"),
        _ => format!("{base_path}/session"),
    }
}

impl Auth {
    /// Where to send an anonymous user who asked for `target` (a path and query of the
    /// application): the sign-in page (`<basePath>/signin`, or the configured
    /// `pages.sign_in`) with `callbackUrl` set to `target`, so they come back after signing
    /// in. What the framework integrations' "require sign-in" middlewares redirect to.
    ///
    /// ```
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    /// assert_eq!(
    ///     auth.sign_in_location("/dashboard?tab=2"),
    ///     "/auth/signin?callbackUrl=%2Fdashboard%3Ftab%3D2"
    /// );
    /// ```
    pub fn sign_in_location(&self, target: &str) -> String {
        let config = self.config();
        let mut location = match &config.pages().sign_in {
            Some(page) => page.clone(),
            None => format!("{}/signin", config.base_path()),
        };
        location.push(if location.contains('?') { '&' } else { '?' });
        location.push_str("callbackUrl=");
        location.push_str(&crate::cookies::encode_uri_component(target));
        location
    }

    /// The account page (`<basePath>/account`), where signed-in users set up a second factor.
    ///
    /// ```
    /// # let auth = authcore::Auth::new(authcore::AuthConfig::builder().secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").trust_host(true)
    /// #     .provider(authcore::providers::CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    /// #     .build().unwrap());
    /// assert_eq!(auth.account_location(), "/auth/account");
    /// ```
    pub fn account_location(&self) -> String {
        format!(
            "{}/account",
            self.config().base_path().trim_end_matches('/')
        )
    }

    /// What the framework integrations' route guards answer when a route asks two factors
    /// of a signed-in user who has no second factor (signing in again cannot help): `403`
    /// with `{"error":"TwoFactorRequired","enrol":"<account page>"}` for API clients
    /// (`json`), else a page that says a second factor is required, with links to the
    /// account page ([`Auth::account_location`]) and to sign in again and come back to
    /// `target` (a path and query of the application).
    pub fn two_factor_required(&self, target: &str, json: bool) -> http::Response<String> {
        let account = self.account_location();
        let (content_type, body) = if json {
            let body = serde_json::json!({ "error": "TwoFactorRequired", "enrol": account });
            ("application/json", body.to_string())
        } else {
            let sign_in = self.sign_in_location(target);
            let page = two_factor_required_page(&account, &sign_in);
            let content_type = if cfg!(feature = "pages") {
                "text/html; charset=utf-8"
            } else {
                "text/plain; charset=utf-8"
            };
            (content_type, page)
        };
        let mut res = http::Response::new(body);
        *res.status_mut() = http::StatusCode::FORBIDDEN;
        let headers = res.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(content_type),
        );
        headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("private, no-cache, no-store"),
        );
        res
    }
}

/// The page of [`Auth::two_factor_required`], its links escaped by the template engine.
#[cfg(feature = "pages")]
fn two_factor_required_page(account: &str, sign_in: &str) -> String {
    use askama::Template as _;
    #[derive(askama::Template)]
    #[template(
        ext = "html",
        source = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Two-factor authentication needed</title></head><body>\n<h1>Two-factor authentication needed</h1>\n<p>This page asks for a second factor at sign-in, and your account has none yet.</p>\n<p>Set up an authenticator app or a passkey on your account page, then sign in again.</p>\n<p><a href=\"{{ account }}\">Set up a second factor</a></p>\n<p><a href=\"{{ sign_in }}\">Sign in again</a></p>\n</body></html>\n"
    )]
    struct Page<'a> {
        account: &'a str,
        sign_in: &'a str,
    }
    Page { account, sign_in }
        .render()
        .unwrap_or_else(|_| "Two-factor authentication needed.\n".to_owned())
}

/// Without the built-in pages, the same in plain words (the links are URL-encoded paths).
#[cfg(not(feature = "pages"))]
fn two_factor_required_page(account: &str, sign_in: &str) -> String {
    format!(
        "Two-factor authentication needed: set up a second factor at {account}, then sign in \
         again at {sign_in}.\n"
    )
}

/// How [`Auth::lookup_session_with`] looks a session up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LookupOptions {
    /// Re-issue a JWT session cookie only once it is at least this old (by the token's
    /// `iat`; at most half the session's `max_age` is used), unless a token refresh or the
    /// `jwt` callback changed the token: a younger cookie is left as it is and no
    /// `Set-Cookie` is returned for it. `None` (the default): re-issued on every lookup, as
    /// `GET <basePath>/session` does. Database sessions keep their own `update_age` rule.
    pub refresh_jwt_after: Option<std::time::Duration>,
    /// Also give the database session's id ([`SessionLookup::session_id`]: one SHA-256 of
    /// the session token), for a host that names sessions (an OpenID Provider's `sid`).
    /// Off by default: most lookups do not need it.
    pub session_id: bool,
}

impl LookupOptions {
    /// Sets [`LookupOptions::session_id`].
    pub fn with_session_id(mut self) -> Self {
        self.session_id = true;
        self
    }

    /// Sets [`LookupOptions::refresh_jwt_after`].
    pub fn refresh_jwt_after(mut self, age: std::time::Duration) -> Self {
        self.refresh_jwt_after = Some(age);
        self
    }
}

/// Result of [`Auth::lookup_session`].
#[derive(Debug, Clone, Default)]
pub struct SessionLookup {
    /// The session JSON, `None` when signed out.
    pub session: Option<Value>,
    /// The signed-in user's id (JWT `sub` or the database session's user), with a session.
    pub user_id: Option<String>,
    /// How and when the user signed in, where the session records it (with second factors
    /// on).
    pub sign_in: Option<crate::SignInInfo>,
    /// The database session's id ([`SessionInfo::id`](crate::account::SessionInfo::id)) when
    /// [`LookupOptions::session_id`] asked for it; `None` with JWT sessions.
    pub session_id: Option<String>,
    /// `Set-Cookie` values refreshing or clearing the session cookie.
    pub set_cookie: Vec<http::HeaderValue>,
}

impl SessionLookup {
    /// The session with its user id, as the framework integrations hand it to handlers;
    /// `None` when signed out.
    pub fn session_json(&self) -> Option<crate::SessionJson> {
        let json = self.session.clone()?;
        let mut session = crate::SessionJson::from_json(json);
        if let Some(id) = &self.user_id {
            session = session.with_user_id(id.as_str());
        }
        if let Some(sign_in) = &self.sign_in {
            session = session.with_sign_in(sign_in.clone());
        }
        Some(session)
    }
}

enum Failure {
    Assertion(AuthError),
    Action(AuthError),
}

async fn run(c: &ConfigInner, req: &RequestInternal) -> Result<RawResponse, Failure> {
    actions::assert_request(c, req).map_err(Failure::Assertion)?;
    let ctx = actions::init(c, req).await.map_err(Failure::Action)?;
    let mut resp = actions::dispatch(&ctx).await.map_err(Failure::Action)?;
    if !ctx.init_cookies.is_empty() {
        let mut cookies = ctx.init_cookies;
        cookies.append(&mut resp.cookies);
        resp.cookies = cookies;
    }
    Ok(resp)
}

/// 400 `"Bad request."` for what does not parse; 413 / 431 for what is too large.
fn bad_request(c: &ConfigInner, e: ParseError) -> RawResponse {
    let e = AuthError::from(e);
    c.logger.error(&e);
    if c.debug {
        c.logger
            .debug("request", &json!({ "error": e.to_string() }));
    }
    let (status, body) = match e {
        AuthError::RequestTooLarge { status, .. } if status == StatusCode::PAYLOAD_TOO_LARGE => {
            (status, "Payload too large.")
        }
        AuthError::RequestTooLarge { status, .. } => (status, "Request header fields too large."),
        _ => (StatusCode::BAD_REQUEST, "Bad request."),
    };
    RawResponse {
        status: Some(status),
        body: Some(RawBody::Json(Value::String(body.to_owned()))),
        ..Default::default()
    }
}

/// A failed per-request assertion (Auth.js `assertConfig`, answered by `Auth` in `index.ts`):
/// 500 JSON, or the error page for GETs of the HTML actions.
fn assertion_failure(c: &ConfigInner, req: &RequestInternal, e: &AuthError) -> RawResponse {
    c.logger.error(e);
    let html_action = matches!(
        req.action,
        Action::Signin | Action::Signout | Action::Error | Action::VerifyRequest
    );
    if !html_action || req.method != Method::GET {
        return RawResponse {
            status: Some(StatusCode::INTERNAL_SERVER_ERROR),
            body: Some(RawBody::Json(json!({
                "message": "There was a problem with the server configuration. Check the server logs for more information."
            }))),
            ..Default::default()
        };
    }
    if let Some(page) = &c.pages.error {
        let looping = req
            .query
            .get("callbackUrl")
            .is_some_and(|cb| cb.starts_with(page.as_str()));
        if !looping {
            return RawResponse::redirect(page_url(req.origin(), page, "error=Configuration"));
        }
        c.logger.error(&AuthError::InvalidRequest {
            message: format!(
                "ErrorPageLoop: The error page {page} should not require authentication"
            ),
        });
    }
    let signin = format!("{}{}/signin", req.origin(), c.base_path);
    pages::error_page_response(&c.theme, req.origin(), signin, "Configuration").unwrap_or_else(
        |_| RawResponse {
            status: Some(StatusCode::INTERNAL_SERVER_ERROR),
            ..Default::default()
        },
    )
}

/// `<origin><page>?<query>`; an absolute page URL is used as-is and a page that already has
/// a query gets `&` (docs/architecture.md, deviations: Error redirects to a custom page with
/// `?` or an absolute URL).
fn page_url(origin: &str, page: &str, query: &str) -> String {
    let sep = if page.contains('?') { '&' } else { '?' };
    if page.starts_with('/') {
        format!("{origin}{page}{sep}{query}")
    } else {
        format!("{page}{sep}{query}")
    }
}

/// The `X-Auth-Return-Redirect` form of an error: Auth.js answers `Response.json({url})`,
/// without the `Location` header its successful answers keep (`Auth` in `index.ts`).
fn url_json(r: RawResponse) -> RawResponse {
    match r.redirect {
        Some(url) => RawResponse::json(json!({ "url": url })),
        None => r,
    }
}

/// The Auth.js error wrapper (the `catch` of `Auth` in `index.ts`).
fn error_response(c: &ConfigInner, req: &RequestInternal, e: &AuthError) -> RawResponse {
    c.logger.error(e);
    if req.method == Method::POST && req.action == Action::Session {
        return RawResponse {
            status: Some(StatusCode::BAD_REQUEST),
            body: Some(RawBody::JsonBytes(Bytes::from_static(b"null"))),
            ..Default::default()
        };
    }
    let mut query = format!("error={}", encode_uri_component(e.client_type()));
    if let Some(code) = e.code() {
        query.push_str("&code=");
        query.push_str(&encode_uri_component(code));
    }
    let (custom, builtin) = match e.kind() {
        ErrorKind::SignIn => (&c.pages.sign_in, "/signin"),
        ErrorKind::Error => (&c.pages.error, "/error"),
    };
    let url = match custom {
        Some(page) => page_url(req.origin(), page, &query),
        None => format!("{}{}{}?{}", req.origin(), c.base_path, builtin, query),
    };
    // A fresh response: cookies produced so far are dropped, as by Auth.js `Auth` (`index.ts`).
    RawResponse::redirect(url)
}
