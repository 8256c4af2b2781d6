//! The request handler: parse → assert → init → action → render, with the Auth.js error
//! wrapper (`Auth` in Auth.js `index.ts`) applied in one place.

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::actions::{self, pages};
use crate::config::{AuthConfig, ConfigInner};
use crate::cookies::encode_uri_component;
use crate::error::{AuthError, BoxError, ErrorKind};
use crate::request::{Action, ParseError, RequestInternal, parse_request};
use crate::response::{GUARD_PAGE_TYPE, guard_answer};
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
    /// The address of the client that sent a request (`parts`): the peer the host put in
    /// its extensions ([`ClientAddr`](crate::request::ClientAddr)), or behind the
    /// configured trusted proxies the right-most `X-Forwarded-For` entry that is not one;
    /// `None` without a peer. What the per-client rate limits count by.
    pub fn client_address(&self, parts: &http::request::Parts) -> Option<std::net::IpAddr> {
        crate::request::client_addr(&self.config().inner, parts)
    }

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
            (
                GUARD_PAGE_TYPE,
                two_factor_required_page(&account, &sign_in),
            )
        };
        guard_answer(StatusCode::FORBIDDEN, content_type, body)
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
