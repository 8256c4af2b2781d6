//! The internal response record and its conversion to `http::Response` (spec §1.4, §1.5).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use http_body_util::Full;
use serde_json::Value;

use crate::cookies::SetCookie;

/// Body type of responses produced by authcore.
pub type ResponseBody = Full<Bytes>;

/// Body of a [`ResponseInternal`].
#[derive(Debug, Clone, PartialEq)]
pub enum InternalBody {
    /// JSON (`Content-Type: application/json`).
    Json(Value),
    /// Already-serialised JSON.
    JsonBytes(Bytes),
    /// HTML page (`Content-Type: text/html`).
    Html(String),
}

/// The internal response record `{status, headers, body, redirect, cookies}` (Auth.js
/// `ResponseInternal`); returned as-is by [`Auth::handle_raw`](crate::Auth::handle_raw).
#[derive(Debug, Clone, Default)]
pub struct ResponseInternal {
    /// Status (200 unless set; 302 when `redirect` is set).
    pub status: Option<StatusCode>,
    /// Extra headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Option<InternalBody>,
    /// `Location` of a redirect.
    pub redirect: Option<String>,
    /// Cookies to set, in order.
    pub cookies: Vec<SetCookie>,
}

impl ResponseInternal {
    pub(crate) fn json(value: Value) -> Self {
        ResponseInternal {
            body: Some(InternalBody::Json(value)),
            ..Default::default()
        }
    }

    pub(crate) fn redirect(location: String) -> Self {
        ResponseInternal {
            redirect: Some(location),
            ..Default::default()
        }
    }

    pub(crate) fn html(status: StatusCode, html: String) -> Self {
        ResponseInternal {
            status: Some(status),
            body: Some(InternalBody::Html(html)),
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
    // Serialising a `Value` cannot fail.
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// A `Location` value: URLs produced by authcore are already encoded; anything a header
/// cannot carry is percent-encoded rather than dropped.
fn location_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| {
        let enc = percent_encoding::utf8_percent_encode(s, percent_encoding::CONTROLS).to_string();
        HeaderValue::from_str(&enc).unwrap_or_else(|_| HeaderValue::from_static("/"))
    })
}

/// Renders the record as an HTTP response. With `return_redirect`, a redirect becomes
/// `200 {"url": <location>}` keeping the other headers and cookies.
pub(crate) fn render(r: ResponseInternal, return_redirect: bool) -> http::Response<ResponseBody> {
    let mut headers = r.headers;
    for c in &r.cookies {
        if let Ok(v) = HeaderValue::from_str(&c.to_header_value()) {
            headers.append(header::SET_COOKIE, v);
        }
    }
    let mut status = r.status.unwrap_or(StatusCode::OK);
    let mut body = r.body;
    if let Some(loc) = &r.redirect {
        headers.insert(header::LOCATION, location_value(loc));
        if return_redirect {
            body = Some(InternalBody::Json(serde_json::json!({ "url": loc })));
            status = StatusCode::OK;
        } else {
            status = StatusCode::FOUND;
        }
    }
    let bytes = match body {
        None => Bytes::new(),
        Some(InternalBody::Json(v)) => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            json_bytes(&v)
        }
        Some(InternalBody::JsonBytes(b)) => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            b
        }
        Some(InternalBody::Html(s)) => {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            Bytes::from(s)
        }
    };
    let mut resp = http::Response::new(Full::new(bytes));
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}
