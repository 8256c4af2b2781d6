//! The internal response record and its conversion to `http::Response` (Auth.js `toResponse`
//! in `lib/utils/web.ts`, and the `X-Auth-Return-Redirect` handling of `Auth` in `index.ts`).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use http_body_util::Full;
use serde_json::Value;

use crate::cookies::SetCookie;

/// Body type of responses produced by authcore.
pub type ResponseBody = Full<Bytes>;

/// Body of a [`RawResponse`].
#[derive(Debug, Clone, PartialEq)]
pub enum RawBody {
    /// JSON (`Content-Type: application/json`).
    Json(Value),
    /// Already-serialised JSON.
    JsonBytes(Bytes),
    /// HTML page (`Content-Type: text/html`).
    Html(String),
}

/// The response record `{status, headers, body, redirect, cookies}` before it becomes an
/// `http::Response` (Auth.js `ResponseInternal`); returned as-is by [`Auth::handle_raw`](crate::Auth::handle_raw).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RawResponse {
    /// Status (200 unless set; 302 when `redirect` is set).
    pub status: Option<StatusCode>,
    /// Extra headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Option<RawBody>,
    /// `Location` of a redirect.
    pub redirect: Option<String>,
    /// Cookies to set, in order.
    pub cookies: Vec<SetCookie>,
}

/// Auth.js's `ResponseInternal` as JSON: `{"status", "headers", "body", "redirect",
/// "cookies"}`, absent fields left out. Headers map each name to its value, or to a list
/// when repeated; a non-UTF-8 header value is left out.
impl serde::Serialize for RawResponse {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;

        let mut map = serializer.serialize_map(None)?;
        if let Some(status) = self.status {
            map.serialize_entry("status", &status.as_u16())?;
        }
        if !self.headers.is_empty() {
            let mut headers = serde_json::Map::new();
            for name in self.headers.keys() {
                let values: Vec<Value> = self
                    .headers
                    .get_all(name)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .map(|v| Value::String(v.to_owned()))
                    .collect();
                let value = match <[Value; 1]>::try_from(values) {
                    Ok([one]) => one,
                    Err(many) => Value::Array(many),
                };
                headers.insert(name.as_str().to_owned(), value);
            }
            map.serialize_entry("headers", &headers)?;
        }
        match &self.body {
            Some(RawBody::Json(v)) => map.serialize_entry("body", v)?,
            Some(RawBody::JsonBytes(b)) => {
                let v: Value = serde_json::from_slice(b).unwrap_or(Value::Null);
                map.serialize_entry("body", &v)?;
            }
            Some(RawBody::Html(h)) => map.serialize_entry("body", h)?,
            None => {}
        }
        if let Some(r) = &self.redirect {
            map.serialize_entry("redirect", r)?;
        }
        if !self.cookies.is_empty() {
            map.serialize_entry("cookies", &self.cookies)?;
        }
        map.end()
    }
}

impl RawResponse {
    pub(crate) fn json(value: Value) -> Self {
        RawResponse {
            body: Some(RawBody::Json(value)),
            ..Default::default()
        }
    }

    pub(crate) fn redirect(location: String) -> Self {
        RawResponse {
            redirect: Some(location),
            ..Default::default()
        }
    }

    pub(crate) fn html(status: StatusCode, html: String) -> Self {
        RawResponse {
            status: Some(status),
            body: Some(RawBody::Html(html)),
            ..Default::default()
        }
    }

    pub(crate) fn with_no_cache(mut self) -> Self {
        self.headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache, no-store"),
        );
        self.headers
            .insert(header::EXPIRES, HeaderValue::from_static("0"));
        self.headers
            .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        self
    }
}

fn json_bytes(v: &Value) -> Bytes {
    if v.is_null() {
        // The signed-out session, on every request without a session.
        return Bytes::from_static(b"null");
    }
    // Serialising a `Value` cannot fail.
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// Bytes a `Location` URI never carries raw: controls, space and everything non-ASCII.
const LOCATION_ESCAPES: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b' ');

/// A `Location` value: URLs produced by authcore are already encoded; anything else a URI
/// cannot carry (non-ASCII characters of a callback URL, spaces, controls) is
/// percent-encoded as UTF-8, which is how browsers read it, rather than sent as raw bytes
/// that clients decode differently.
fn location_value(s: &str) -> HeaderValue {
    let enc: std::borrow::Cow<'_, str> =
        percent_encoding::utf8_percent_encode(s, LOCATION_ESCAPES).into();
    HeaderValue::from_str(&enc).unwrap_or_else(|_| HeaderValue::from_static("/"))
}

/// Renders the record as an HTTP response. With `return_redirect`, a redirect becomes
/// `200 {"url": <location>}` keeping the other headers and cookies.
pub(crate) fn render(r: RawResponse, return_redirect: bool) -> http::Response<ResponseBody> {
    let mut headers = r.headers;
    for v in r.cookies.iter().filter_map(SetCookie::header_value) {
        headers.append(header::SET_COOKIE, v);
    }
    let mut status = r.status.unwrap_or(StatusCode::OK);
    let mut body = r.body;
    if let Some(loc) = &r.redirect {
        headers.insert(header::LOCATION, location_value(loc));
        if return_redirect {
            body = Some(RawBody::Json(serde_json::json!({ "url": loc })));
            status = StatusCode::OK;
        } else {
            status = StatusCode::FOUND;
        }
    }
    let bytes = match body {
        None => Bytes::new(),
        Some(RawBody::Json(v)) => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            json_bytes(&v)
        }
        Some(RawBody::JsonBytes(b)) => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            b
        }
        Some(RawBody::Html(s)) => {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            Bytes::from(s)
        }
    };
    let mut resp = http::Response::new(Full::new(bytes));
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}

/// The type of the route guards' pages: HTML with the built-in pages, else plain words.
pub(crate) const GUARD_PAGE_TYPE: &str = if cfg!(feature = "pages") {
    "text/html; charset=utf-8"
} else {
    "text/plain; charset=utf-8"
};

/// An answer of the route guards: `status` with `body` of `content_type`, never cached
/// (it depends on who asks).
pub(crate) fn guard_answer(
    status: StatusCode,
    content_type: &'static str,
    body: String,
) -> http::Response<String> {
    let mut res = http::Response::new(body);
    *res.status_mut() = status;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::cookies::{CookieOptions, CookieSet, CookieSpec, Priority, SameSite};

    #[test]
    fn location_is_ascii_with_non_ascii_percent_encoded_as_utf8() {
        // Found by fuzzing (fuzz/regressions/callback_url): raw UTF-8 in `Location`.
        for (url, want) in [
            ("https://a.test/p?q=1%20&r#f", "https://a.test/p?q=1%20&r#f"),
            (
                "http://localhost:3000/caf\u{e9}",
                "http://localhost:3000/caf%C3%A9",
            ),
            ("/a b\tc", "/a%20b%09c"),
            ("/\u{ff}0/", "/%C3%BF0/"),
        ] {
            let v = location_value(url);
            assert_eq!(v.to_str().unwrap(), want);
        }
    }

    #[test]
    fn response_record_serialises_with_authjs_names() {
        let set = CookieSet::defaults(true);
        let cookie = crate::cookies::ResolvedCookie::new(&set.session_token);
        let expires = time::macros::datetime!(2030-01-02 03:04:05 UTC);
        let mut r = RawResponse::redirect("https://authjs.test/".into()).with_no_cache();
        r.cookies = vec![cookie.set("v".into(), Some(expires)), cookie.clear()];
        r.status = Some(StatusCode::FOUND);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["status"], 302);
        assert_eq!(v["redirect"], "https://authjs.test/");
        assert_eq!(v["headers"]["cache-control"], "private, no-cache, no-store");
        assert_eq!(
            v["cookies"][0],
            json!({
                "name": "__Secure-authjs.session-token",
                "value": "v",
                "options": {
                    "httpOnly": true, "sameSite": "lax", "path": "/", "secure": true,
                    "expires": "2030-01-02T03:04:05Z"
                }
            })
        );
        assert_eq!(v["cookies"][1]["options"]["maxAge"], 0);
        assert!(v.get("body").is_none());
        let html = serde_json::to_value(RawResponse::html(StatusCode::OK, "<p>".into()));
        assert_eq!(html.unwrap(), json!({"status": 200, "body": "<p>"}));
    }

    #[test]
    fn cookie_options_round_trip_with_authjs_names_and_defaults() {
        let o: CookieOptions =
            serde_json::from_value(json!({"sameSite": "none", "secure": true, "maxAge": 60,
                "domain": "example.com", "priority": "high", "partitioned": true}))
            .unwrap();
        assert_eq!(o.same_site, SameSite::None);
        assert!(o.http_only, "unset fields keep Auth.js defaults");
        assert_eq!(o.path, "/");
        assert_eq!(o.priority, Some(Priority::High));
        let back = serde_json::to_value(&o).unwrap();
        assert_eq!(back["maxAge"], 60);
        assert_eq!(back["httpOnly"], true);
        let spec: CookieSpec = serde_json::from_value(json!({"name": "s", "options": {}})).unwrap();
        assert_eq!(spec.options, CookieOptions::default());
        let set = serde_json::to_value(CookieSet::defaults(false)).unwrap();
        assert_eq!(set["csrfToken"]["name"], "authjs.csrf-token");
        assert_eq!(set["pkceCodeVerifier"]["options"]["maxAge"], 900);
        assert_eq!(
            serde_json::to_value(crate::logger::WarningCode::DebugEnabled).unwrap(),
            "debug-enabled"
        );
    }
}
