//! callbackUrl / redirect resolution: `authcore::callbacks::default_redirect` directly, and
//! `callbackUrl` values (query, form body, callback-URL cookie) through `Auth::handle` on the
//! actions that redirect to them.
//!
//! Property (open redirects): whatever the value, every place authcore sends the browser —
//! the `Location` header, the `url` of an `X-Auth-Return-Redirect` JSON answer, and the
//! callback-URL cookie it sets — resolves (WHATWG URL parsing, as a browser does) to the
//! request's own origin `http://localhost:3000`; the only exception is the OIDC sign-in,
//! whose `Location` is the identity provider's authorization endpoint. `default_redirect`
//! returns either the base URL or a URL of the base URL's origin.
//!
//! Input: `[scenario] [flags] [base] callbackUrl…` (see `input`).

use crate::{
    CALLBACK_COOKIE, CSRF_COOKIE, CSRF_TOKEN, ORIGIN, handle, location_texts, request_auth,
    valid_csrf_cookie,
};
use authcore::bytes::Bytes;
use authcore::callbacks::default_redirect;
use authcore::http;
use authcore::http_body_util::Full;
use authcore::serde_json::Value;
use authcore::url::Url;

const BASES: &[&str] = &[
    "http://localhost:3000",
    "https://app.example",
    "https://app.example:8443",
    "http://[::1]:3000",
    "http://127.0.0.1",
    "https://xn--bcher-kva.example",
];

#[derive(Debug)]
enum Scenario {
    /// `GET /auth/signin` (the sign-in page).
    SigninPage,
    /// `POST /auth/callback/credentials` with valid credentials.
    CredentialsCallback,
    /// `POST /auth/signin/credentials` with valid credentials (a redirect to the callback).
    CredentialsSignin,
    /// `POST /auth/signout`.
    Signout,
    /// `GET /auth/signout` (the sign-out page).
    SignoutPage,
    /// `GET /auth/session`.
    Session,
    /// `POST /auth/signin/oidc` (redirects to the identity provider).
    OidcSignin,
    /// `GET /auth/error?error=<the value too>`.
    Error,
}

#[derive(Debug)]
struct Input {
    url: String,
    base: u8,
    scenario: Scenario,
    in_query: bool,
    in_body: bool,
    in_cookie: bool,
    return_redirect: bool,
    csrf: bool,
}

/// `[scenario] [flags] [base] url…`: flags bit 0 query, 1 body, 2 cookie, 3
/// `X-Auth-Return-Redirect`, 4 a valid CSRF pair.
fn input(data: &[u8]) -> Option<Input> {
    let [scenario, flags, base, url @ ..] = data else {
        return None;
    };
    let scenario = match scenario % 8 {
        0 => Scenario::SigninPage,
        1 => Scenario::CredentialsCallback,
        2 => Scenario::CredentialsSignin,
        3 => Scenario::Signout,
        4 => Scenario::SignoutPage,
        5 => Scenario::Session,
        6 => Scenario::OidcSignin,
        _ => Scenario::Error,
    };
    Some(Input {
        url: String::from_utf8_lossy(url).into_owned(),
        base: *base,
        scenario,
        in_query: flags & 1 != 0,
        in_body: flags & 2 != 0,
        in_cookie: flags & 4 != 0,
        return_redirect: flags & 8 != 0,
        csrf: flags & 16 != 0,
    })
}

fn origin_of(s: &str, base: &Url) -> Option<String> {
    base.join(s).ok().map(|u| u.origin().ascii_serialization())
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// One fuzz input (the `fuzz_targets/callback_url.rs` target and the regression test).
pub fn run(data: &[u8]) {
    let Some(input) = input(data) else {
        return;
    };
    // 1. The default redirect callback.
    let base = BASES[usize::from(input.base) % BASES.len()];
    let out = default_redirect(&input.url, base);
    if out != base {
        let u = Url::parse(&out)
            .unwrap_or_else(|e| panic!("{out:?} from {:?} does not parse: {e}", input.url));
        assert_eq!(
            u.origin().ascii_serialization(),
            base,
            "{:?} escaped to {out:?}",
            input.url
        );
    }

    // 2. Through the handler.
    let auth = request_auth();
    let (method, path) = match &input.scenario {
        Scenario::SigninPage => ("GET", "/auth/signin".to_owned()),
        Scenario::CredentialsCallback => ("POST", "/auth/callback/credentials".to_owned()),
        Scenario::CredentialsSignin => ("POST", "/auth/signin/credentials".to_owned()),
        Scenario::Signout => ("POST", "/auth/signout".to_owned()),
        Scenario::SignoutPage => ("GET", "/auth/signout".to_owned()),
        Scenario::Session => ("GET", "/auth/session".to_owned()),
        Scenario::OidcSignin => ("POST", "/auth/signin/oidc".to_owned()),
        Scenario::Error => ("GET", format!("/auth/error?error={}", enc(&input.url))),
    };
    let mut uri = format!("{ORIGIN}{path}");
    if input.in_query {
        uri.push(if uri.contains('?') { '&' } else { '?' });
        uri.push_str("callbackUrl=");
        uri.push_str(&enc(&input.url));
    }
    let mut builder = http::Request::builder().method(method).uri(uri);
    let mut cookies = Vec::new();
    if input.csrf {
        cookies.push(format!("{CSRF_COOKIE}={}", valid_csrf_cookie()));
    }
    if input.in_cookie {
        cookies.push(format!(
            "{CALLBACK_COOKIE}={}",
            authcore::cookies::encode_uri_component(&input.url)
        ));
    }
    if !cookies.is_empty() {
        builder = builder.header(http::header::COOKIE, cookies.join("; "));
    }
    if input.return_redirect {
        builder = builder.header("x-auth-return-redirect", "1");
    }
    let mut body = String::new();
    if method == "POST" {
        builder = builder.header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        );
        body.push_str(&format!(
            "csrfToken={CSRF_TOKEN}&username=ada&password=lovelace"
        ));
        if input.in_body {
            body.push_str("&callbackUrl=");
            body.push_str(&enc(&input.url));
        }
    }
    let Ok(req) = builder.body(Full::new(Bytes::from(body))) else {
        return;
    };
    let (parts, body) = handle(auth, req);

    let origin = Url::parse(ORIGIN).expect("valid origin");
    let external_ok = matches!(input.scenario, Scenario::OidcSignin);
    let check = |what: &str, target: &str| {
        let got = origin_of(target, &origin);
        if external_ok && got.as_deref() == Some("https://issuer.example") {
            return;
        }
        assert_eq!(
            got.as_deref(),
            Some(ORIGIN),
            "{what} {target:?} for callbackUrl {:?} ({:?})",
            input.url,
            input.scenario
        );
    };
    if let Some(loc) = parts.headers.get(http::header::LOCATION) {
        for text in location_texts(loc) {
            check("Location", &text);
        }
    }
    if input.return_redirect
        && let Ok(Value::Object(m)) = authcore::serde_json::from_slice::<Value>(&body)
        && let Some(Value::String(url)) = m.get("url")
    {
        check("JSON url", url);
    }
    for v in parts.headers.get_all(http::header::SET_COOKIE) {
        let s = v.to_str().expect("Set-Cookie is ASCII");
        if let Some(value) = s
            .split(';')
            .next()
            .and_then(|nv| nv.strip_prefix(CALLBACK_COOKIE))
            .and_then(|rest| rest.strip_prefix('='))
        {
            let decoded = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
            if !decoded.is_empty() {
                check("callback-url cookie", &decoded);
            }
        }
    }
}
