//! Request parsing (Auth.js `toInternalRequest` in `lib/utils/web.ts`): `http::Request` → the
//! internal request record.

use std::fmt;

use bytes::Bytes;
use http::uri::PathAndQuery;
use http::{HeaderMap, HeaderName, Method};
use http_body_util::{BodyExt, Limited};
use serde_json::Value;

use crate::config::ConfigInner;
use crate::cookies::RequestCookies;
use crate::error::{AuthError, BoxError};
use crate::site::RequestUrl;
use crate::types::JsonObject;

/// The nine Auth.js actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `providers`.
    Providers,
    /// `session`.
    Session,
    /// `csrf`.
    Csrf,
    /// `signin`.
    Signin,
    /// `signout`.
    Signout,
    /// `callback`.
    Callback,
    /// `verify-request`.
    VerifyRequest,
    /// `error`.
    Error,
    /// `webauthn-options`.
    WebauthnOptions,
    /// `two-factor`: the second step of a sign-in (beyond Auth.js; with second factors on).
    TwoFactor,
    /// `account`: the account page (beyond Auth.js; with an adapter).
    Account,
    /// `backchannel-logout`: logout tokens from an OpenID Connect provider (beyond Auth.js;
    /// OpenID Connect Back-Channel Logout 1.0).
    BackchannelLogout,
    /// `password`: password accounts' sign-up, forgotten password and address
    /// confirmation (beyond Auth.js; with password accounts).
    Password,
    /// `invitation`: the mailed link of an invitation to an organization (beyond Auth.js;
    /// with organizations).
    Invitation,
    /// `admin`: the administrators' page (beyond Auth.js; with administrators).
    Admin,
}

impl Action {
    /// Parses an action name.
    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "providers" => Action::Providers,
            "session" => Action::Session,
            "csrf" => Action::Csrf,
            "signin" => Action::Signin,
            "signout" => Action::Signout,
            "callback" => Action::Callback,
            "verify-request" => Action::VerifyRequest,
            "error" => Action::Error,
            "webauthn-options" => Action::WebauthnOptions,
            "two-factor" => Action::TwoFactor,
            "account" => Action::Account,
            "backchannel-logout" => Action::BackchannelLogout,
            "password" => Action::Password,
            "invitation" => Action::Invitation,
            "admin" => Action::Admin,
            _ => return None,
        })
    }

    /// The action name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Providers => "providers",
            Action::Session => "session",
            Action::Csrf => "csrf",
            Action::Signin => "signin",
            Action::Signout => "signout",
            Action::Callback => "callback",
            Action::VerifyRequest => "verify-request",
            Action::Error => "error",
            Action::WebauthnOptions => "webauthn-options",
            Action::TwoFactor => "two-factor",
            Action::Account => "account",
            Action::BackchannelLogout => "backchannel-logout",
            Action::Password => "password",
            Action::Invitation => "invitation",
            Action::Admin => "admin",
        }
    }

    fn takes_provider(self) -> bool {
        matches!(
            self,
            Action::Signin
                | Action::Callback
                | Action::WebauthnOptions
                | Action::BackchannelLogout
                | Action::Password
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `s` is one of the action names: Auth.js's nine (`isAuthAction`), `two-factor`,
/// `account`, `backchannel-logout`, `password`, `invitation` and `admin`.
pub fn is_auth_action(s: &str) -> bool {
    Action::parse(s).is_some()
}

/// Why a request could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Only GET and POST are handled.
    #[error("Cannot handle method {0}")]
    Method(Method),
    /// The path is not `<basePath>/<action>[/<providerId>]`.
    #[error("Cannot parse action at {0}")]
    Path(String),
    /// No usable host to build the request URL.
    #[error("Cannot build the request URL: {0}")]
    Url(String),
    /// The JSON body is not a JSON object.
    #[error("Invalid JSON body: {0}")]
    Json(String),
    /// The body exceeds the configured limit.
    #[error("Request body larger than {0} bytes")]
    BodyTooLarge(usize),
    /// The `Cookie` headers exceed the configured limit.
    #[error("Cookie headers larger than {0} bytes")]
    CookiesTooLarge(usize),
    /// The body could not be read.
    #[error("Cannot read the request body: {0}")]
    Body(String),
}

impl From<ParseError> for AuthError {
    /// What does not parse is an `InvalidRequest`; what is too large says its status.
    fn from(e: ParseError) -> Self {
        let status = match e {
            ParseError::BodyTooLarge(_) => http::StatusCode::PAYLOAD_TOO_LARGE,
            ParseError::CookiesTooLarge(_) => http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            _ => {
                return AuthError::InvalidRequest {
                    message: e.to_string(),
                };
            }
        };
        AuthError::RequestTooLarge {
            message: e.to_string(),
            status,
        }
    }
}

/// Parses `<basePath>/<action>[/<providerId>]` (Auth.js `parseActionAndProviderId` in
/// `lib/utils/web.ts`).
///
/// `base_path` is the configured base path ("" for the root). Trailing and repeated slashes
/// are tolerated; a provider id `undefined` counts as absent.
pub fn parse_action_and_provider_id<'p>(
    path: &'p str,
    base_path: &str,
) -> Result<(Action, Option<&'p str>), ParseError> {
    let err = || ParseError::Path(path.to_owned());
    let rest = path.strip_prefix(base_path).ok_or_else(err)?;
    if rest.is_empty() {
        return Err(err());
    }
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    let mut segments = rest.split('/').filter(|s| !s.is_empty());
    let action = segments.next().and_then(Action::parse).ok_or_else(err)?;
    let provider = segments.next();
    if segments.next().is_some() || (provider.is_some() && !action.takes_provider()) {
        return Err(err());
    }
    Ok((action, provider.filter(|p| *p != "undefined")))
}

/// Query parameters; for repeated names the last value wins.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    fn parse(q: Option<&str>) -> Self {
        Query {
            pairs: q
                .map(|q| {
                    url::form_urlencoded::parse(q.as_bytes())
                        .into_owned()
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The last value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// All pairs in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

/// A parsed request.
#[derive(Debug)]
pub(crate) struct RequestInternal {
    pub action: Action,
    pub provider_id: Option<String>,
    pub method: Method,
    /// The full request URL, with its origin's cached values.
    pub url: RequestUrl,
    pub query: Query,
    pub body: Option<JsonObject>,
    pub cookies: RequestCookies,
    pub headers: HeaderMap,
    /// `X-Auth-Return-Redirect` was sent (or, with `next_auth_v4()`, v4's `json=true`).
    pub return_redirect: bool,
    /// The client's address ([`ClientAddr`], through trusted proxies), if the host gave one.
    pub client: Option<std::net::IpAddr>,
}

/// What a host's own session read takes from a request to one of its routes: the site it
/// was sent to (origin, scheme: secure or plain cookie names) and its cookies. Nothing else
/// of the request is read, and no action runs for it.
#[derive(Debug)]
pub(crate) struct SessionSource {
    /// The request URL, with its origin's cached values.
    pub url: RequestUrl,
    pub cookies: RequestCookies,
}

impl SessionSource {
    /// Whether the request URL is `https`.
    pub(crate) fn is_https(&self) -> bool {
        self.url.is_https()
    }
}

/// The site and cookies of a request to `uri` with `headers` (one of the host's routes),
/// checked as [`parse_head`] checks them.
pub(crate) fn session_source(
    config: &ConfigInner,
    uri: &http::Uri,
    headers: &HeaderMap,
) -> Result<SessionSource, ParseError> {
    Ok(SessionSource {
        url: request_url(config, uri, headers)?,
        cookies: parse_cookies(config, headers)?,
    })
}

/// The request's cookies, refused when the `Cookie` headers are over the configured size.
fn parse_cookies(config: &ConfigInner, headers: &HeaderMap) -> Result<RequestCookies, ParseError> {
    // One lookup; its values are walked twice (sizes first, so an oversize header is never
    // parsed).
    let values = headers.get_all(http::header::COOKIE);
    let cookie_bytes: usize = values.iter().map(http::HeaderValue::len).sum();
    if cookie_bytes > config.max_cookie_header_bytes {
        return Err(ParseError::CookiesTooLarge(config.max_cookie_header_bytes));
    }
    Ok(RequestCookies::parse(
        values.iter().filter_map(|v| v.to_str().ok()),
    ))
}

/// The address of the peer that sent a request: hosts put it in the request's extensions
/// (`request.extensions_mut().insert(ClientAddr(peer.ip()))`; authcore-axum does it from
/// axum's `ConnectInfo`) so that per-client rate limits apply. When it is one of the
/// configured trusted proxies, the client is the last `X-Forwarded-For` address that is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub std::net::IpAddr);

/// The client address: the peer, or behind trusted proxies the right-most
/// `X-Forwarded-For` entry that is not one (an unparsable entry stops the walk there).
pub(crate) fn client_addr(
    config: &ConfigInner,
    parts: &http::request::Parts,
) -> Option<std::net::IpAddr> {
    let peer = parts.extensions.get::<ClientAddr>()?.0.to_canonical();
    let trusted = |ip: &std::net::IpAddr| config.trusted_proxies.iter().any(|n| n.contains(ip));
    if !trusted(&peer) {
        return Some(peer);
    }
    let mut client = peer;
    let values: Vec<&str> = parts
        .headers
        .get_all(&X_FORWARDED_FOR)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    for entry in values.iter().rev().flat_map(|v| v.rsplit(',')) {
        match entry.trim().parse::<std::net::IpAddr>() {
            Ok(ip) => {
                client = ip.to_canonical();
                if !trusted(&client) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    Some(client)
}

impl RequestInternal {
    /// `scheme://host[:port]`, as Auth.js serialises `url.origin`.
    pub(crate) fn origin(&self) -> &str {
        &self.url.site.origin
    }

    /// Whether the request URL is `https`.
    pub(crate) fn is_https(&self) -> bool {
        self.url.is_https()
    }

    pub(crate) fn is_post(&self) -> bool {
        self.method == Method::POST
    }

    /// A string field of the body.
    pub(crate) fn body_str(&self, name: &str) -> Option<&str> {
        self.body.as_ref()?.get(name)?.as_str()
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

// Header names made once: a lookup by `&str` parses the name at every request.
pub(crate) static X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
pub(crate) static X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
static X_AUTH_RETURN_REDIRECT: HeaderName = HeaderName::from_static("x-auth-return-redirect");

/// Builds the request URL: the fixed `url` when configured; otherwise, with `trust_host`,
/// `X-Forwarded-Host` / `X-Forwarded-Proto`, then `Host`, the URI authority and scheme.
/// Returns it with its origin's cached [`Site`](crate::site::Site).
fn request_url(
    config: &ConfigInner,
    uri: &http::Uri,
    headers: &HeaderMap,
) -> Result<RequestUrl, ParseError> {
    let path_and_query = uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    let to_err = |e: url::ParseError| ParseError::Url(e.to_string());
    if let Some(fixed) = &config.url {
        // The fixed URL's path is replaced by the request's, as `URL(path, fixed)` does.
        let site = config.sites.of_url(fixed).map_err(to_err)?;
        return site.request_url(path_and_query).map_err(to_err);
    }
    let forwarded = |name: &HeaderName| {
        if config.trust_host {
            header_str(headers, name)
                .and_then(|v| v.split(',').next())
                .map(str::trim)
                .filter(|v| !v.is_empty())
        } else {
            None
        }
    };
    let host = forwarded(&X_FORWARDED_HOST)
        .or_else(|| header_str(headers, &http::header::HOST))
        .or_else(|| uri.authority().map(|a| a.as_str()))
        .ok_or_else(|| ParseError::Url("no Host header".to_owned()))?;
    let proto = forwarded(&X_FORWARDED_PROTO)
        .map(|p| p.trim_end_matches(':'))
        .or_else(|| uri.scheme_str())
        .unwrap_or("http");
    if !matches!(proto, "http" | "https") {
        return Err(ParseError::Url(format!("unsupported protocol {proto:?}")));
    }
    // The host must be a bare authority; anything else would change the URL's meaning.
    if host.is_empty()
        || host
            .bytes()
            .any(|b| matches!(b, b'/' | b'\\' | b'?' | b'#' | b'@') || b.is_ascii_whitespace())
    {
        return Err(ParseError::Url("invalid Host header".to_owned()));
    }
    let site = config.sites.get(proto == "https", host).map_err(to_err)?;
    site.request_url(path_and_query).map_err(to_err)
}

/// Parses an `http::Request` (Auth.js `toInternalRequest` in `lib/utils/web.ts`), reading the
/// body of POSTs up to the limit.
pub(crate) async fn parse_request<B>(
    config: &ConfigInner,
    req: http::Request<B>,
) -> Result<RequestInternal, ParseError>
where
    B: http_body::Body + Send,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let client = client_addr(config, &parts);
    let mut req = parse_head(config, parts.method, &parts.uri, parts.headers, client)?;
    if req.method == Method::POST {
        req.body = read_body(config, &req.headers, body).await?;
        req.return_redirect |= config.next_auth_v4
            && req
                .body
                .as_ref()
                .and_then(|b| b.get("json"))
                .is_some_and(|v| v == "true" || v == &Value::Bool(true));
    }
    Ok(req)
}

/// The request record of a request's head (method, URI, headers; the body is read by
/// [`parse_request`]).
pub(crate) fn parse_head(
    config: &ConfigInner,
    method: Method,
    uri: &http::Uri,
    headers: http::HeaderMap,
    client: Option<std::net::IpAddr>,
) -> Result<RequestInternal, ParseError> {
    if method != Method::GET && method != Method::POST {
        return Err(ParseError::Method(method));
    }
    let url = request_url(config, uri, &headers)?;
    let (action, provider_id) = parse_action_and_provider_id(url.path(), &config.base_path)?;
    let provider_id = provider_id.map(str::to_owned);

    let cookies = parse_cookies(config, &headers)?;
    let query = Query::parse(url.query());
    let return_redirect = headers.contains_key(&X_AUTH_RETURN_REDIRECT);
    Ok(RequestInternal {
        action,
        provider_id,
        method,
        url,
        query,
        body: None,
        cookies,
        headers,
        return_redirect,
        client,
    })
}

async fn read_body<B>(
    config: &ConfigInner,
    headers: &HeaderMap,
    body: B,
) -> Result<Option<JsonObject>, ParseError>
where
    B: http_body::Body + Send,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let content_type = header_str(headers, &http::header::CONTENT_TYPE).unwrap_or("");
    let is_json = content_type.contains("application/json");
    let is_form = content_type.contains("application/x-www-form-urlencoded");
    if !is_json && !is_form {
        return Ok(None);
    }
    let limit = config.max_body_bytes;
    if let Some(len) =
        header_str(headers, &http::header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok())
        && len > limit as u64
    {
        return Err(ParseError::BodyTooLarge(limit));
    }
    let bytes: Bytes = match Limited::new(body, limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            return Err(if e.is::<http_body_util::LengthLimitError>() {
                ParseError::BodyTooLarge(limit)
            } else {
                ParseError::Body(e.to_string())
            });
        }
    };
    if bytes.is_empty() {
        return Ok(None);
    }
    if is_json {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            Ok(_) => Err(ParseError::Json("expected a JSON object".to_owned())),
            Err(e) => Err(ParseError::Json(e.to_string())),
        }
    } else {
        let mut m = JsonObject::new();
        for (k, v) in url::form_urlencoded::parse(&bytes) {
            m.insert(k.into_owned(), Value::String(v.into_owned()));
        }
        Ok(Some(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn url_parsing_table_from_authjs() {
        for bad in [
            "/auuth/signin",
            "/api/auth/signin",
            "/auth/auth/signin/github",
            "/auth",
            "/auth/",
            "/auth/signinn",
            "/auth/signin/github/github",
            "/auth/session/x",
            "/auth/signin/auth/signin/github",
        ] {
            assert!(parse_action_and_provider_id(bad, "/auth").is_err(), "{bad}");
        }
        for bad in [
            "/api/auth/signinn",
            "/api/auth/signinn/github",
            "/api/auth/signin/github/github",
            "/api/auth/signin/api/auth/signin/github",
        ] {
            assert!(
                parse_action_and_provider_id(bad, "/api/auth").is_err(),
                "{bad}"
            );
        }
        fn ok<'p>(p: &'p str, b: &str) -> (Action, Option<&'p str>) {
            parse_action_and_provider_id(p, b).unwrap()
        }
        assert_eq!(
            ok("/api/auth/signin/github", "/api/auth"),
            (Action::Signin, Some("github"))
        );
        assert_eq!(
            ok("/api/auth/signin/github/", "/api/auth"),
            (Action::Signin, Some("github"))
        );
        for p in [
            "/auth/signin/auth0",
            "/auth/signin/auth0/",
            "/auth/signin/auth0///",
        ] {
            assert_eq!(ok(p, "/auth"), (Action::Signin, Some("auth0")));
        }
        assert_eq!(
            ok("/auth/signin/undefined", "/auth"),
            (Action::Signin, None)
        );
        assert_eq!(ok("/auth/session", "/auth"), (Action::Session, None));
        assert_eq!(ok("/authsignin", "/auth"), (Action::Signin, None));
        assert_eq!(
            ok("/webauthn-options/passkey", ""),
            (Action::WebauthnOptions, Some("passkey"))
        );
        for a in [
            "providers",
            "session",
            "csrf",
            "signin",
            "signout",
            "callback",
            "verify-request",
            "error",
            "webauthn-options",
            "two-factor",
            "account",
            "backchannel-logout",
            "password",
            "invitation",
            "admin",
        ] {
            assert!(is_auth_action(a));
            assert_eq!(Action::parse(a).unwrap().as_str(), a);
        }
        assert!(!is_auth_action("signup"));
    }

    #[test]
    fn query_last_value_wins() {
        let q = Query::parse(Some("a=1&b=2&a=3&c=%ZZ"));
        assert_eq!(q.get("a"), Some("3"));
        assert_eq!(q.get("c"), Some("%ZZ"));
    }

    proptest! {
        #[test]
        fn path_parser_never_panics(path in "(/[a-z\\-]{0,12}){0,5}/?", base in "(/[a-z]{1,6}){0,2}") {
            let _ = parse_action_and_provider_id(&path, &base);
        }

        #[test]
        fn path_parser_arbitrary_input(path in ".{0,64}") {
            if let Ok((_, Some(p))) = parse_action_and_provider_id(&path, "/auth") {
                prop_assert!(!p.is_empty() && !p.contains('/'));
            }
        }
    }
}
