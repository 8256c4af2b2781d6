//! Shared pieces of the authcore fuzz targets: a fixed configuration, a tiny executor and
//! helpers that build `http` requests and read `http` responses.
//!
//! Everything here is deterministic: fixed secrets, a fixed clock where the API takes one,
//! no network (OAuth providers get an in-memory [`authcore::http_client::HttpClient`]).

use std::future::Future;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use authcore::bytes::Bytes;
use authcore::http;
use authcore::http_body_util::{BodyExt as _, Full};
use authcore::http_client::HttpClient;
use authcore::logger::{Logger, WarningCode};
use authcore::providers::{
    AuthorizeError, Checks, CredentialField, CredentialsProvider, OAuthProvider,
};
use authcore::{Auth, AuthConfig, AuthError, BoxError, User};

/// The secret of every fuzzed configuration.
pub const SECRET: &str = "fuzz-secret-0123456789abcdef0123456789abcdef";
/// "Now" for the APIs that take a clock (2027-01-15).
pub const NOW: i64 = 1_800_000_000;
/// The origin requests are sent to when a target fixes it.
pub const ORIGIN: &str = "http://localhost:3000";
/// The non-secure session cookie name.
pub const SESSION_COOKIE: &str = "authjs.session-token";
/// The non-secure CSRF cookie name.
pub const CSRF_COOKIE: &str = "authjs.csrf-token";
/// The non-secure callback-URL cookie name.
pub const CALLBACK_COOKIE: &str = "authjs.callback-url";
/// The CSRF token the helpers put in a valid double-submit cookie.
pub const CSRF_TOKEN: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// The text of a `Location` header, which must be ASCII: non-ASCII characters of a
/// callback URL are percent-encoded (fuzzing once found them sent as raw UTF-8 bytes,
/// `regressions/callback_url/`). [`location_texts`] also gives the Latin-1 reading.
pub fn location_text(v: &http::HeaderValue) -> String {
    match v.to_str() {
        Ok(s) => s.to_owned(),
        Err(_) => panic!(
            "Location header with raw non-ASCII bytes: {:?}",
            String::from_utf8_lossy(v.as_bytes())
        ),
    }
}

/// [`location_text`] and, when it differs, the Latin-1 reading of the same bytes.
pub fn location_texts(v: &http::HeaderValue) -> Vec<String> {
    let mut out = vec![location_text(v)];
    let latin1: String = v.as_bytes().iter().map(|&b| char::from(b)).collect();
    if latin1 != out[0] {
        out.push(latin1);
    }
    out
}

/// Polls `f` to completion with a no-op waker. authcore's handlers do no I/O here (the
/// fuzz HTTP client answers at once), so a future that stays pending is a bug.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("future still pending after 1000 polls with nothing to wait for");
}

/// A logger that formats everything (so `Display` / JSON paths run) and prints nothing.
#[derive(Debug, Default)]
pub struct SinkLogger;

impl Logger for SinkLogger {
    fn error(&self, error: &AuthError) {
        std::hint::black_box(error.to_string());
    }
    fn warn(&self, code: WarningCode) {
        std::hint::black_box(code);
    }
    fn debug_enabled(&self) -> bool {
        true
    }
    fn debug(&self, message: &str, metadata: &authcore::serde_json::Value) {
        std::hint::black_box((message, metadata.to_string()));
    }
}

/// An HTTP client that answers every request with `502` (no network in fuzzing).
#[derive(Debug, Default)]
pub struct OfflineClient;

#[authcore::async_trait]
impl HttpClient for OfflineClient {
    async fn send(
        &self,
        _request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, BoxError> {
        Ok(http::Response::builder().status(502).body(Bytes::new())?)
    }
}

/// The credentials provider of the fuzzed configurations: `ada` / `lovelace` signs in,
/// `refuse` gets a custom `CredentialsSignin` code, `boom` an internal error, anyone else
/// is refused.
pub fn credentials_provider() -> CredentialsProvider {
    CredentialsProvider::new()
        .field("username", CredentialField::new("Username"))
        .field(
            "password",
            CredentialField::new("Password").input_type("password"),
        )
        .authorize(|credentials, _request| async move {
            let field = |k: &str| {
                credentials
                    .get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            };
            match (field("username").as_deref(), field("password").as_deref()) {
                (Some("ada"), Some("lovelace")) => Ok(Some(
                    User::with_id("1")
                        .name("Ada Lovelace")
                        .email("ada@example.com"),
                )),
                (Some("refuse"), _) => Err(AuthorizeError::credentials_signin("refused")),
                (Some("boom"), _) => Err(AuthorizeError::Other("authorize failed".into())),
                _ => Ok(None),
            }
        })
}

/// An OIDC provider with every endpoint configured, all checks on, and no network: its
/// sign-in builds an authorization URL; its callback reads (fuzzed) check cookies, then
/// fails at the token request.
pub fn offline_oidc_provider() -> OAuthProvider {
    OAuthProvider::oidc("oidc", "Example OIDC")
        .issuer("https://issuer.example")
        .client_id("client-123")
        .client_secret("client-secret")
        .authorization_url("https://issuer.example/authorize")
        .token_url("https://issuer.example/token")
        .userinfo_url("https://issuer.example/userinfo")
        .jwks_uri("https://issuer.example/jwks")
        .checks(Checks {
            pkce: true,
            state: true,
            nonce: true,
        })
        .http_client(OfflineClient)
}

/// The shared request-handling configuration: JWT sessions, trust host, a credentials
/// provider and an offline OIDC provider, debug messages formatted.
pub fn request_auth() -> &'static Auth {
    static AUTH: OnceLock<Auth> = OnceLock::new();
    AUTH.get_or_init(|| {
        let config = AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .logger(SinkLogger)
            .provider(credentials_provider())
            .provider(offline_oidc_provider())
            .build()
            .expect("the fuzz configuration is valid");
        Auth::new(config)
    })
}

/// `token|hash` as Auth.js writes the CSRF cookie for [`CSRF_TOKEN`].
pub fn valid_csrf_cookie() -> String {
    authcore::csrf::csrf_cookie_value(CSRF_TOKEN, SECRET)
}

/// A session token for `claims` made with authcore's own encoder (non-secure cookie salt).
pub fn session_token(auth: &Auth, claims: &authcore::jwt::JwtClaims, now: i64) -> String {
    auth.config()
        .jwt()
        .encode_at(claims, SESSION_COOKIE, 3600, now)
        .expect("the OS RNG works")
}

/// Runs one request through `auth.handle` and returns the parts and the body bytes.
pub fn handle(auth: &Auth, req: http::Request<Full<Bytes>>) -> (http::response::Parts, Bytes) {
    block_on(async {
        let resp = auth.handle(req).await;
        let (parts, body) = resp.into_parts();
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        (parts, bytes)
    })
}

/// Splits `data` at the first `0xFF` byte (never valid UTF-8, so it cannot be part of a
/// string field); the second half is empty when there is none.
pub fn split_ff(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// An in-memory OAuth "server" for one fuzz input: answers by URL path.
#[derive(Debug, Clone, Default)]
pub struct ScriptedClient {
    /// `(status, body)` for `…/token`.
    pub token: (u16, Bytes),
    /// `(status, body)` for `…/userinfo`.
    pub userinfo: (u16, Bytes),
    /// `(status, body)` for `…/jwks`.
    pub jwks: (u16, Bytes),
    /// `(status, body)` for `…/.well-known/openid-configuration`.
    pub discovery: (u16, Bytes),
}

#[authcore::async_trait]
impl HttpClient for ScriptedClient {
    async fn send(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        let path = request.uri().path();
        let (status, body) = if path.ends_with("/token") {
            &self.token
        } else if path.ends_with("/userinfo") {
            &self.userinfo
        } else if path.ends_with("/jwks") {
            &self.jwks
        } else if path.ends_with("/.well-known/openid-configuration") {
            &self.discovery
        } else {
            return Err("unexpected request".into());
        };
        let status = http::StatusCode::from_u16(*status).unwrap_or(http::StatusCode::OK);
        Ok(http::Response::builder()
            .status(status)
            .body(body.clone())?)
    }
}

/// The fuzz targets' bodies, callable from the libFuzzer binaries and from the regression test.
pub mod targets {
    pub mod callback_url;
    pub mod config_toml;
    pub mod cookies;
    pub mod email_normalise;
    pub mod jwt_decode;
    pub mod oauth_responses;
    pub mod request;
}
