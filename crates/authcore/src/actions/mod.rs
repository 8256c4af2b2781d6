//! One module per action. Actions are protocol logic over a parsed request and the
//! per-request context; I/O happens only through callbacks, events and providers.

pub(crate) mod account;
pub(crate) mod account_page;
pub(crate) mod admin;
pub(crate) mod admin_clients;
pub(crate) mod admin_page;
pub(crate) mod audit;
#[cfg(feature = "oauth")]
pub(crate) mod backchannel_logout;
pub(crate) mod bans;
pub(crate) mod callback;
pub(crate) mod completion;
pub(crate) mod csrf;
pub(crate) mod current;
pub(crate) mod invitation;
pub(crate) mod limits;
#[cfg(feature = "email")]
pub(crate) mod mail_link;
pub(crate) mod notify;
pub(crate) mod organizations;
pub(crate) mod pages;
#[cfg(feature = "passwords")]
pub(crate) mod password;
pub(crate) mod providers;
pub(crate) mod sensitive;
pub(crate) mod session;
pub(crate) mod signin;
pub(crate) mod signout;
#[cfg(feature = "two-factor")]
pub(crate) mod two_factor;
#[cfg(feature = "webauthn")]
pub(crate) mod webauthn_options;

use http::Method;
use serde_json::Value;

use crate::callbacks::RedirectParams;
use crate::config::{ConfigInner, ResolvedCookies};
use crate::cookies::SetCookie;
use crate::error::{AuthError, BoxError};
use crate::providers::Provider;
use crate::request::{Action, RequestInternal};
use crate::response::RawResponse;
use crate::site::{RequestUrl, Site};

/// Per-request state computed by `init` (Auth.js `lib/init.ts`).
pub(crate) struct Ctx<'a> {
    pub config: &'a ConfigInner,
    pub req: &'a RequestInternal,
    pub cookies: &'a ResolvedCookies,
    pub provider: Option<&'a Provider>,
    pub csrf_token: String,
    pub csrf_verified: bool,
    pub callback_url: String,
    /// Cookies set by init (CSRF, callback URL), emitted before the action's.
    pub init_cookies: Vec<SetCookie>,
}

impl Ctx<'_> {
    /// Records a use of database session `token` (its stored form: see
    /// `ConfigInner::stored_session_token`; now, with the request's `User-Agent`)
    /// when the adapter keeps session activity (session management); a failure is logged
    /// and does not fail the request.
    pub(crate) async fn record_session_activity(
        &self,
        adapter: &dyn crate::adapter::Adapter,
        token: &str,
    ) {
        let user_agent = self
            .req
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok());
        record_session_activity(self.config, adapter, token, user_agent).await;
    }

    /// `<origin><basePath><suffix>`.
    pub(crate) fn auth_url(&self, suffix: &str) -> String {
        let o = self.req.origin();
        let b = &self.config.base_path;
        let mut s = String::with_capacity(o.len() + b.len() + suffix.len());
        s.push_str(o);
        s.push_str(b);
        s.push_str(suffix);
        s
    }

    pub(crate) fn log_error(&self, e: &AuthError) {
        self.config.logger.error(e);
    }

    /// Calls the `redirect` callback; an error becomes a configuration error.
    pub(crate) async fn redirect_callback(&self, url: &str) -> Result<String, AuthError> {
        self.config
            .callbacks
            .redirect(RedirectParams {
                url,
                base_url: self.req.origin(),
            })
            .await
            .map_err(|source| AuthError::CallbackError {
                callback: "redirect",
                source,
            })
    }

    /// Whether the request wants JSON answers: it sent JSON, or asks for JSON only.
    pub(crate) fn wants_json(&self) -> bool {
        let header = |name| {
            self.req
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_ascii_lowercase()
        };
        header(http::header::CONTENT_TYPE).starts_with("application/json")
            || header(http::header::ACCEPT).starts_with("application/json")
    }

    pub(crate) fn require_csrf(&self, action: &'static str) -> Result<(), AuthError> {
        if self.csrf_verified {
            Ok(())
        } else {
            Err(AuthError::MissingCsrf { action })
        }
    }

    /// Logs an event handler failure (`EventError`); events never fail a request.
    /// Records the event `make` builds in the audit log with the request's client address
    /// and `User-Agent` (at most 256 characters of it). Built only when the log is on: with
    /// it off, a sign-in pays nothing for its record.
    pub(crate) async fn audit(&self, make: impl FnOnce() -> crate::audit::AuditEvent) {
        if !self.config.auditor.is_on() {
            return;
        }
        let event = make();
        let user_agent = self
            .req
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(|ua| ua.chars().take(256).collect::<String>());
        let event = event
            .with("client", self.req.client.map(|ip| ip.to_string()))
            .with("userAgent", user_agent);
        // Boxed: every action that may audit would otherwise carry the record's future in
        // its own, through each of its moves, audit log on or off.
        Box::pin(crate::actions::audit::record(self.config, event)).await;
    }

    pub(crate) fn event_result(&self, event: &'static str, r: Result<(), BoxError>) {
        if let Err(source) = r {
            self.log_error(&AuthError::EventError { event, source });
        }
    }

    pub(crate) fn debug(&self, message: &str, metadata: impl FnOnce() -> Value) {
        if self.config.debug {
            self.config.logger.debug(message, &metadata());
        }
    }
}

/// Session cookies for a freshly encoded token, logging (in debug) when it has to be
/// chunked.
pub(crate) fn write_session_cookie(
    config: &ConfigInner,
    store: &crate::cookies::SessionCookieStore<'_>,
    token: &str,
    expires: time::OffsetDateTime,
) -> Vec<SetCookie> {
    if config.debug && token.len() > crate::cookies::CHUNK_SIZE {
        config.logger.debug(
            "CHUNKING_SESSION_COOKIE",
            &serde_json::json!({
                "message": "Session cookie exceeds allowed 4096 bytes.",
                "valueSize": token.len(),
                "chunks": token.len().div_ceil(crate::cookies::CHUNK_SIZE),
            }),
        );
    }
    store.write(token, expires)
}

/// Records a use of database session `token` (its stored form) now, with the client's
/// `User-Agent` (cut to [`MAX_USER_AGENT_CHARS`]), when the adapter keeps session activity;
/// a failure is logged and fails nothing.
pub(crate) async fn record_session_activity(
    config: &ConfigInner,
    adapter: &dyn crate::adapter::Adapter,
    token: &str,
    user_agent: Option<&str>,
) {
    let Some(store) = adapter.session_activity() else {
        return;
    };
    let user_agent = user_agent.map(|ua| truncate_chars(ua, MAX_USER_AGENT_CHARS));
    let now = time::OffsetDateTime::now_utc();
    if let Err(e) = store.record_session_activity(token, now, user_agent).await {
        config.logger.error(&AuthError::AdapterError { source: e });
    }
}

/// Whether `url` is an http(s) URL, resolving a leading `/` against the request's origin
/// (Auth.js `isValidHttpUrl` in `lib/utils/assert.ts`). A URL on the origin itself (what the
/// callback-url cookie holds on every request of a browser that signed in from the site) is
/// one without being parsed: the default `redirect` callback's same-origin shortcut.
fn is_valid_http_url(url: &str, site: &Site) -> bool {
    if crate::callbacks::is_same_origin_fast(url, &site.origin) {
        return true;
    }
    let parsed = if url.starts_with('/') {
        site.base().join(url)
    } else {
        url::Url::parse(url)
    };
    parsed.is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// Whether links may be built from the request's host: a fixed URL, else the allow-list
/// when there is one, else `trust_host`. Decided once per origin (the URL's cached site).
fn host_is_trusted(config: &ConfigInner, url: &RequestUrl) -> bool {
    if config.url.is_some() {
        return true;
    }
    *url.site
        .host_trusted
        .get_or_init(|| match &config.allowed_hosts {
            // A pattern without a port is the scheme's default port only.
            Some(list) => list.allows(url.authority(), if url.is_https() { 443 } else { 80 }),
            None => config.trust_host,
        })
}

/// Per-request assertions (Auth.js `assertConfig` in `lib/utils/assert.ts`) that cannot be
/// checked at build time.
pub(crate) fn assert_request(config: &ConfigInner, req: &RequestInternal) -> Result<(), AuthError> {
    if !host_is_trusted(config, &req.url) {
        return Err(untrusted_host(&req.url));
    }
    // An empty value is no value, as Auth.js's truthiness checks have it.
    if let Some(cb) = req.query.get("callbackUrl").filter(|cb| !cb.is_empty())
        && !is_valid_http_url(cb, &req.url.site)
    {
        return Err(AuthError::InvalidCallbackUrl {
            received: cb.to_owned(),
        });
    }
    assert_callback_cookie(config, &req.url, &req.cookies)
}

/// The assertions of [`assert_request`] that a host's own session read of a request to
/// one of its routes is held to: a trusted host and a valid callback-URL cookie.
pub(crate) fn assert_session_source(
    config: &ConfigInner,
    source: &crate::request::SessionSource,
) -> Result<(), AuthError> {
    if !host_is_trusted(config, &source.url) {
        return Err(untrusted_host(&source.url));
    }
    assert_callback_cookie(config, &source.url, &source.cookies)
}

/// Without the query: it can carry a magic-link token or an OAuth code (Auth.js logs the
/// whole URL).
fn untrusted_host(url: &RequestUrl) -> AuthError {
    AuthError::UntrustedHost {
        url: url.without_query(),
    }
}

/// The callback-URL cookie, when set, must be an http(s) URL.
fn assert_callback_cookie(
    config: &ConfigInner,
    url: &RequestUrl,
    cookies: &crate::cookies::RequestCookies,
) -> Result<(), AuthError> {
    let names = config.cookies(url.is_https());
    if let Some(cb) = cookies
        .get(&names.callback_url.name)
        .filter(|cb| !cb.is_empty())
        && !is_valid_http_url(cb, &url.site)
    {
        return Err(AuthError::InvalidCallbackUrl {
            received: cb.to_owned(),
        });
    }
    Ok(())
}

/// Request initialisation: provider lookup, CSRF, callback URL (Auth.js `init` in
/// `lib/init.ts`).
pub(crate) async fn init<'a>(
    config: &'a ConfigInner,
    req: &'a RequestInternal,
) -> Result<Ctx<'a>, AuthError> {
    let cookies = config.cookies(req.is_https());
    let provider = match &req.provider_id {
        // The password action's segment is its step, not a provider.
        Some(_) if req.action == Action::Password => None,
        Some(id) => Some(config.provider(id).ok_or_else(|| {
            AuthError::ProviderNotFound {
                id: id.clone(),
                available: config
                    .sign_in_providers()
                    .map(Provider::id)
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        })?),
        None => None,
    };
    let mut init_cookies = Vec::new();
    // Auth.js answers `GET /providers` without the cookies init made (its renderer drops
    // them), so none is made: no CSRF token, no callback-URL cookie. Nor for logout tokens,
    // which a provider posts server to server.
    let sets_cookies = !matches!(req.action, Action::Providers | Action::BackchannelLogout);

    let (csrf_token, csrf_verified) = if config.dangerous.skip_csrf_check {
        (String::new(), true)
    } else if !sets_cookies {
        (String::new(), false)
    } else {
        let st = crate::csrf::check_or_create(
            req.cookies.get(&cookies.csrf_token.name),
            &config.secret_string,
            req.is_post(),
            req.body_str("csrfToken"),
        );
        if let Some(v) = st.new_cookie {
            init_cookies.push(cookies.csrf_token.set(v, None));
        }
        (st.token, st.verified)
    };

    let mut ctx = Ctx {
        config,
        req,
        cookies,
        provider,
        csrf_token,
        csrf_verified,
        callback_url: String::new(),
        init_cookies,
    };

    let cookie_value = req.cookies.get(&cookies.callback_url.name);
    let param = req
        .body_str("callbackUrl")
        .or_else(|| req.query.get("callbackUrl"))
        .filter(|s| !s.is_empty());
    let callback_url = match param.or(cookie_value.filter(|s| !s.is_empty())) {
        Some(url) => ctx.redirect_callback(url).await?,
        None => req.origin().to_owned(),
    };
    if sets_cookies && cookie_value != Some(callback_url.as_str()) {
        ctx.init_cookies
            .push(cookies.callback_url.set(callback_url.clone(), None));
    }
    ctx.callback_url = callback_url;
    Ok(ctx)
}

/// Routes to the action (Auth.js `AuthInternal` in `lib/index.ts`).
///
/// Every action whose future holds an await on a store or a callback is boxed (and, inside
/// the session action, the database read): their futures (HTTP clients, adapters, the
/// sign-in's completion, the JWT session read) are one to several kilobytes, and inlined
/// they would make every request's future — the sign-in page's included — as large as the
/// largest of them, to be allocated by the server and copied whole at each move
/// (`HOT_LOOP_FUTURE_SIZE=1 hot_loop` prints the size). Each such action pays one
/// allocation for its own future; what stays inline (the count of an attempt, the pages,
/// `/csrf`, `/providers`) is small.
pub(crate) async fn dispatch(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let req = ctx.req;
    // A provider's back-channel logout tokens come from its few addresses, many at once
    // when it signs many users out: only those that do not verify count (there).
    if (req.is_post() && req.action != Action::BackchannelLogout)
        || req.action == Action::WebauthnOptions
    {
        ctx.count_attempt(limits::Limit::RequestsPerClient, None)
            .await?;
    }
    let cannot = || AuthError::unknown_action(format!("Cannot handle action: {}", req.action));
    match (&req.method, req.action) {
        (&Method::GET, Action::Providers) => Ok(providers::providers(ctx)),
        (&Method::GET, Action::Csrf) => Ok(csrf::csrf(ctx)),
        (&Method::GET | &Method::POST, Action::Session) => Box::pin(session::session(ctx)).await,
        (&Method::GET, Action::Signin) => pages::signin_page(ctx),
        (&Method::POST, Action::Signin) => Box::pin(signin::signin(ctx)).await,
        (&Method::GET, Action::Signout) => pages::signout_page(ctx),
        (&Method::POST, Action::Signout) => Box::pin(signout::signout(ctx)).await,
        (&Method::GET | &Method::POST, Action::Callback) => Box::pin(callback::callback(ctx)).await,
        (&Method::GET, Action::Error) => pages::error_page(ctx),
        (&Method::GET, Action::VerifyRequest) => pages::verify_request_page(ctx),
        #[cfg(feature = "webauthn")]
        (&Method::GET, Action::WebauthnOptions) => {
            Box::pin(webauthn_options::webauthn_options(ctx)).await
        }
        #[cfg(feature = "oauth")]
        (&Method::POST, Action::BackchannelLogout) => {
            Box::pin(backchannel_logout::backchannel_logout(ctx)).await
        }
        (&Method::GET, Action::Account) if ctx.config.adapter.is_some() => {
            Box::pin(account_page::page(ctx)).await
        }
        (&Method::POST, Action::Account) if ctx.config.adapter.is_some() => {
            Box::pin(account_page::change(ctx)).await
        }
        (&Method::GET, Action::Admin) if ctx.config.admins.is_some() => {
            Box::pin(admin_page::page(ctx)).await
        }
        (&Method::POST, Action::Admin) if ctx.config.admins.is_some() => {
            Box::pin(admin_page::change(ctx)).await
        }
        #[cfg(feature = "passwords")]
        (&Method::GET | &Method::POST, Action::Password) => Box::pin(password::password(ctx)).await,
        (&Method::GET | &Method::POST, Action::Invitation)
            if ctx.config.organizations.is_some() =>
        {
            Box::pin(invitation::invitation(ctx)).await
        }
        #[cfg(feature = "two-factor")]
        (&Method::GET, Action::TwoFactor) if ctx.config.two_factor.is_some() => {
            Box::pin(two_factor::page(ctx)).await
        }
        #[cfg(feature = "two-factor")]
        (&Method::POST, Action::TwoFactor) if ctx.config.two_factor.is_some() => {
            Box::pin(two_factor::verify(ctx)).await
        }
        _ => Err(cannot()),
    }
}

/// The longest `User-Agent` kept with a session (in characters).
const MAX_USER_AGENT_CHARS: usize = 512;

/// `s` cut to at most `max` characters.
fn truncate_chars(s: &str, max: usize) -> &str {
    s.char_indices().nth(max).map_or(s, |(i, _)| &s[..i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The check before the origin shortcut: parse the origin, join or parse the URL.
    fn parsed_is_http(url: &str, origin: &str) -> bool {
        let parsed = if url.starts_with('/') {
            url::Url::parse(origin).and_then(|o| o.join(url))
        } else {
            url::Url::parse(url)
        };
        parsed.is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
    }

    fn site(https: bool, host: &str) -> std::sync::Arc<Site> {
        crate::site::Sites::default().get(https, host).unwrap()
    }

    #[test]
    fn callback_urls_are_judged_as_the_whole_parse_judges_them() {
        let site = site(false, "127.0.0.1:3000");
        for (url, want) in [
            ("http://127.0.0.1:3000", true),
            ("http://127.0.0.1:3000/", true),
            ("http://127.0.0.1:3000/after?x=1#y", true),
            ("http://127.0.0.1:3000?x", true),
            ("http://127.0.0.1:3000#x", true),
            ("http://127.0.0.1:3000/a b\t%zz\\..", true),
            ("http://127.0.0.1:3000@evil.example/", true),
            ("http://127.0.0.1:30001/", true),
            ("http://127.0.0.1:3000:1/", false),
            ("http://127.0.0.1:300000/", false),
            ("https://app.example/x", true),
            ("/dashboard", true),
            ("//evil.example/x", true),
            ("//[", false),
            ("/\t/[", false),
            ("javascript:alert(1)", false),
            ("ftp://127.0.0.1:3000/", false),
            ("http://[/", false),
            ("", false),
            ("relative", false),
        ] {
            assert_eq!(is_valid_http_url(url, &site), want, "{url:?}");
            assert_eq!(parsed_is_http(url, &site.origin), want, "{url:?}");
        }
    }

    proptest! {
        #[test]
        fn the_origin_shortcut_agrees_with_the_parse(
            (https, host) in prop_oneof![
                Just((false, "127.0.0.1:3000")),
                Just((true, "[::1]:8443")),
                Just((true, "APP.example.com")),
                Just((false, "b\u{fc}cher.example")),
            ],
            rest in "[/?#@:.a-z0-9%\\\\ \t\u{e9}\\[\\]]{0,12}",
        ) {
            let site = site(https, host);
            let url = format!("{}{rest}", site.origin);
            if crate::callbacks::is_same_origin_fast(&url, &site.origin) {
                let parsed = url::Url::parse(&url).unwrap();
                prop_assert_eq!(parsed.origin().ascii_serialization(), site.origin.to_string());
            }
            prop_assert_eq!(is_valid_http_url(&url, &site), parsed_is_http(&url, &site.origin));
        }
    }
}
