//! Whole-request handling: an arbitrary HTTP/1.1 request (method, target, headers, cookies,
//! body) through `Auth::handle`, with the credentials-provider JWT configuration of
//! `authcore_fuzz::request_auth` (credentials provider + an offline OIDC provider,
//! `trust_host`, debug messages on).
//!
//! Input: one flag byte, then the request as text: `METHOD TARGET HTTP/1.1`, header lines,
//! an empty line, the body (`\r\n` or `\n`). A target without scheme gets
//! `http://localhost:3000` unless a `Host` header is sent. The flags let the harness add
//! what a browser that went through the previous steps would send, so the fuzzer gets past
//! the checks that need a secret:
//! - bit 0: a valid CSRF double-submit cookie, and `csrfToken` in a form or JSON body;
//! - bit 1: valid credentials (`username=ada`, `password=lovelace`) in the body;
//! - bit 2: a session cookie made by authcore's encoder (`name: Ada Lovelace`);
//! - bit 3: that session cookie cut into three chunks `<name>.0..2`, sent out of order;
//! - bit 4: an `X-Auth-Return-Redirect: 1` header.
//!
//! Properties: no panic; a redirect has a `Location`; a JSON answer parses; every
//! `Set-Cookie` has a non-empty name; a `GET …/session` carrying the harness's session
//! cookie (whole or chunked) and no other cookie gets that session back.

use crate::{CSRF_COOKIE, CSRF_TOKEN, ORIGIN, handle, request_auth, valid_csrf_cookie};
use authcore::bytes::Bytes;
use authcore::http;
use authcore::http_body_util::Full;
use authcore::serde_json::{self, Value, json};
use std::sync::OnceLock;

/// Session tokens for the plain and the `__Secure-` cookie name, valid for ten years (the
/// handler decodes with the real clock).
fn session_tokens() -> &'static (String, String) {
    static T: OnceLock<(String, String)> = OnceLock::new();
    T.get_or_init(|| {
        let claims = json!({"name": "Ada Lovelace", "email": "ada@example.com", "sub": "1"});
        let claims = claims.as_object().cloned().unwrap_or_default();
        let jwt = request_auth().config().jwt();
        let ttl = 10 * 365 * 24 * 3600;
        (
            jwt.encode(&claims, "authjs.session-token", ttl)
                .expect("RNG works"),
            jwt.encode(&claims, "__Secure-authjs.session-token", ttl)
                .expect("RNG works"),
        )
    })
}

struct Parsed<'a> {
    method: &'a str,
    target: &'a str,
    headers: Vec<(&'a str, &'a str)>,
    body: &'a [u8],
}

/// Parses `METHOD TARGET VERSION`, `Name: value` lines, an empty line and the body.
fn parse(data: &[u8]) -> Option<Parsed<'_>> {
    let (head, body) = match data.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (&data[..i], &data[i + 4..]),
        None => match data.windows(2).position(|w| w == b"\n\n") {
            Some(i) => (&data[..i], &data[i + 2..]),
            None => (data, &[][..]),
        },
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut first = lines.next()?.splitn(3, ' ');
    let method = first.next()?;
    let target = first.next()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n, v.trim()))
        .collect();
    Some(Parsed {
        method,
        target,
        headers,
        body,
    })
}

/// One fuzz input (the `fuzz_targets/request.rs` target and the regression test).
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some(p) = parse(rest) else {
        return;
    };
    let has_host = p
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("host"));
    let uri = if p.target.starts_with('/') && !has_host {
        format!("{ORIGIN}{}", p.target)
    } else {
        p.target.to_owned()
    };
    let Ok(uri) = uri.parse::<http::Uri>() else {
        return;
    };
    let secure = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
    let mut builder = http::Request::builder().method(p.method).uri(uri);
    let mut content_type = "";
    let mut fuzzed_cookies = false;
    for &(name, value) in &p.headers {
        if name.eq_ignore_ascii_case("content-type") {
            content_type = value;
        }
        if name.eq_ignore_ascii_case("cookie") {
            fuzzed_cookies = true;
        }
        builder = builder.header(name, value);
    }

    // Harness additions.
    let mut cookies: Vec<String> = Vec::new();
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if flags & 1 != 0 {
        let name = if secure {
            format!("__Host-{CSRF_COOKIE}")
        } else {
            CSRF_COOKIE.to_owned()
        };
        cookies.push(format!("{name}={}", valid_csrf_cookie()));
        fields.push(("csrfToken", CSRF_TOKEN));
    }
    if flags & 2 != 0 {
        fields.push(("username", "ada"));
        fields.push(("password", "lovelace"));
    }
    let with_session = flags & 4 != 0;
    if with_session {
        let (plain, sec) = session_tokens();
        let (name, token) = if secure {
            ("__Secure-authjs.session-token", sec.as_str())
        } else {
            ("authjs.session-token", plain.as_str())
        };
        if flags & 8 != 0 {
            let third = token.len() / 3;
            let (a, rest) = token.split_at(third);
            let (b, c) = rest.split_at(third);
            cookies.push(format!("{name}.2={c}; {name}.0={a}; {name}.1={b}"));
        } else {
            cookies.push(format!("{name}={token}"));
        }
    }
    if !cookies.is_empty() {
        builder = builder.header(http::header::COOKIE, cookies.join("; "));
    }
    if flags & 16 != 0 {
        builder = builder.header("x-auth-return-redirect", "1");
    }
    let mut body = p.body.to_vec();
    if !fields.is_empty() {
        if content_type.contains("application/json") {
            if let Ok(Value::Object(mut m)) = serde_json::from_slice::<Value>(&body) {
                for (k, v) in &fields {
                    m.insert((*k).to_owned(), (*v).into());
                }
                body = serde_json::to_vec(&m).expect("JSON");
            }
        } else {
            let mut s = form_urlencoded::Serializer::new(String::new());
            s.extend_pairs(&fields);
            if !body.is_empty() {
                body.push(b'&');
            }
            body.extend_from_slice(s.finish().as_bytes());
        }
    }
    let Ok(req) = builder.body(Full::new(Bytes::from(body))) else {
        return;
    };
    let is_session_get = req.method() == http::Method::GET
        && req.uri().path() == "/auth/session"
        && req.uri().scheme_str().is_some()
        && !fuzzed_cookies
        && !p.headers.iter().any(|(n, _)| {
            ["host", "x-forwarded-host", "x-forwarded-proto"]
                .iter()
                .any(|h| n.eq_ignore_ascii_case(h))
        });

    let (parts, body) = handle(request_auth(), req);

    if parts.status.is_redirection() {
        assert!(
            parts.headers.contains_key(http::header::LOCATION),
            "redirect without Location"
        );
    }
    let is_json = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        serde_json::from_slice::<Value>(&body).expect("a JSON answer parses");
    }
    for v in parts.headers.get_all(http::header::SET_COOKIE) {
        let s = v.to_str().expect("Set-Cookie is visible ASCII");
        let (name, _) = s.split_once('=').expect("Set-Cookie has name=value");
        assert!(
            !name.is_empty() && !name.contains(';'),
            "bad Set-Cookie {s:?}"
        );
    }
    if with_session && is_session_get && parts.status == http::StatusCode::OK {
        let session: Value = serde_json::from_slice(&body).expect("session JSON");
        assert_eq!(
            session["user"]["name"], "Ada Lovelace",
            "session lost: {session}"
        );
    }
}
