//! The error table of `docs/manual/troubleshooting.md` against what the handler answers:
//! for each code, a request that produces it; the code is logged, the answer is described
//! in the words the table uses ("sign-in page", "error page", `Configuration`, `null`
//! session, a status) and the row's "Shown as" cell must contain that description; no
//! failure sets a session cookie. Codes that need a peer (an OAuth provider's error, a
//! profile it sends) are listed in `NEED_A_PEER` with the test that produces them.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::callbacks::{Callbacks, SignInOutcome, SignInParams};
use authcore::providers::catalog::{GitHubOptions, github};
use authcore::ratelimit::{RateLimit, RateLimits};
use authcore::request::ClientAddr;
use authcore::{Auth, AuthConfigBuilder, BoxError};

/// Codes produced only with a peer or a stored user and session, and the test module that
/// produces each.
const NEED_A_PEER: &[(&str, &str)] = &[
    ("TwoFactorEnrolment", "two_factor"),
    ("ReauthenticationRequired", "sensitive_changes"),
    ("OAuthCallbackError", "oauth_oidc_provider"),
    ("OAuthAccountNotLinked", "oauth_adapter_linking"),
    ("AccountNotLinked", "oauth_adapter_linking"),
    ("WebAuthnVerificationError", "webauthn"),
    ("OAuthProfileParseError", "oauth_oidc_provider"),
    ("RefreshTokenError", "oauth_refresh"),
    ("EventError", "callbacks_events"),
];

struct Deny;

#[authcore::async_trait]
impl Callbacks for Deny {
    async fn sign_in(&self, _: SignInParams<'_>) -> Result<SignInOutcome, BoxError> {
        Ok(SignInOutcome::Deny)
    }
}

/// The row cells of the error table, by code.
fn table() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/manual/troubleshooting.md");
    let doc = std::fs::read_to_string(path).unwrap();
    doc.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            (
                cells[0].trim().trim_matches('`').to_owned(),
                cells[1].trim().to_owned(),
            )
        })
        .collect()
}

/// The answer in the table's words.
fn describe(r: &TestResponse, code: &str) -> String {
    if let Some(location) = r.location() {
        let url = url::Url::parse(location).unwrap();
        let error = url
            .query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        return match (url.path(), error.as_str()) {
            ("/auth/signin", e) if e == code => "sign-in page".to_owned(),
            ("/auth/error", "Configuration") if code != "Configuration" => {
                "`Configuration`".to_owned()
            }
            ("/auth/error", e) if e == code => "error page".to_owned(),
            (_, "") if url.path() != "/auth/signin" => "the usual redirect".to_owned(),
            ("/auth/signin", "") => "the sign-in page, without an `error`".to_owned(),
            _ => format!("a redirect to {location}"),
        };
    }
    match (r.status.as_u16(), r.text().as_str()) {
        (200, "null") => "`null` session".to_owned(),
        (200, body) if body.contains(&format!("\"error\":\"{code}\"")) => {
            format!("the session, with `\"error\": \"{code}\"`")
        }
        (429, _) if r.headers.contains_key("retry-after") => "`429` with `Retry-After`".to_owned(),
        (status, _) => format!("`{status}`"),
    }
}

fn ask(b: http::request::Builder) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    b.body(empty()).unwrap()
}

fn with_client(
    mut req: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    req.extensions_mut()
        .insert(ClientAddr("192.0.2.1".parse().unwrap()));
    req
}

/// A credentials sign-in request (valid CSRF) as `username` / `password`.
fn credentials_post(
    username: &str,
    password: &str,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let (csrf, token) = csrf_pair();
    post("/auth/callback/credentials")
        .header("cookie", csrf)
        .body(form(&[
            ("csrfToken", &token),
            ("username", username),
            ("password", password),
        ]))
        .unwrap()
}

/// A CSRF-checked JSON sign-out (`X-Auth-Return-Redirect`).
fn json_sign_out() -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let (csrf, token) = csrf_pair();
    with_client(
        post("/auth/signout")
            .header("cookie", csrf)
            .header("x-auth-return-redirect", "1")
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
}

/// For `code`: the configuration and the requests that produce it (the last one's answer is
/// checked; earlier ones set the stage).
fn scenarios(
    code: &str,
) -> Vec<(
    AuthConfigBuilder,
    Vec<http::Request<http_body_util::Full<bytes::Bytes>>>,
)> {
    let minute = Duration::from_secs(60);
    let oauth = || {
        builder().provider(
            github(GitHubOptions::default())
                .client_id("id")
                .client_secret("secret"),
        )
    };
    let down = || {
        builder()
            .adapter(LimitedAdapter::down("connection refused"))
            .credentials_database_sessions(true)
    };
    match code {
        "AccessDenied" => vec![(
            builder().callbacks(Deny),
            vec![credentials_post("demo", "pw")],
        )],
        "CredentialsSignin" => vec![(builder(), vec![credentials_post("demo", "wrong")])],
        "MissingCSRF" => vec![(
            builder(),
            vec![
                post("/auth/callback/credentials")
                    .body(form(&[("username", "demo"), ("password", "pw")]))
                    .unwrap(),
            ],
        )],
        "Verification" => {
            let outbox = Outbox::default();
            vec![(
                builder()
                    .provider(outbox_provider(&outbox))
                    .adapter(MemoryAdapter::new())
                    .session_strategy(authcore::SessionStrategy::Jwt),
                vec![ask(get(&format!(
                    "/auth/callback/email?token={}&email=a%40example.com",
                    "f".repeat(64)
                )))],
            )]
        }
        "RateLimited" => vec![
            (
                builder().rate_limits(RateLimits {
                    credentials_per_identifier: Some(RateLimit::new(1, minute)),
                    ..RateLimits::default()
                }),
                vec![
                    credentials_post("demo", "wrong"),
                    credentials_post("demo", "wrong"),
                ],
            ),
            (
                builder().rate_limits(RateLimits {
                    requests_per_client: Some(RateLimit::new(1, minute)),
                    ..RateLimits::default()
                }),
                vec![json_sign_out(), json_sign_out()],
            ),
        ],
        "UntrustedHost" => vec![
            (builder().trust_host(false), vec![ask(get("/auth/signin"))]),
            (builder().trust_host(false), vec![ask(get("/auth/session"))]),
        ],
        "InvalidCallbackUrl" => vec![(
            builder(),
            vec![ask(get("/auth/signin?callbackUrl=javascript%3Aalert(1)"))],
        )],
        "InvalidCheck" => vec![(
            oauth(),
            vec![ask(get("/auth/callback/github?code=c&state=s"))],
        )],
        "InvalidProvider" => vec![(builder(), vec![ask(get("/auth/callback"))])],
        "Error" => {
            let (csrf, token) = csrf_pair();
            vec![(
                builder(),
                vec![
                    post("/auth/signin/nope")
                        .header("cookie", csrf)
                        .body(form(&[("csrfToken", &token)]))
                        .unwrap(),
                ],
            )]
        }
        "UnknownAction" => vec![(oauth(), vec![ask(get("/auth/signin/github"))])],
        "InvalidRequest" => vec![
            (builder(), vec![ask(get("/auth/nope"))]),
            (
                builder(),
                vec![
                    http::Request::post(url("/auth/callback/credentials"))
                        .header("content-type", "application/json")
                        .body(http_body_util::Full::new(bytes::Bytes::from_static(
                            b"{\"a\"",
                        )))
                        .unwrap(),
                ],
            ),
            (
                builder().max_body_bytes(64),
                vec![
                    post("/auth/callback/credentials")
                        .body(form(&[("username", &"x".repeat(100))]))
                        .unwrap(),
                ],
            ),
            (
                builder().max_cookie_header_bytes(64),
                vec![ask(
                    get("/auth/session").header("cookie", format!("a={}", "x".repeat(100)))
                )],
            ),
        ],
        "JWTSessionError" => vec![(
            builder(),
            vec![ask(
                get("/auth/session").header("cookie", format!("{SESSION_COOKIE}=garbage"))
            )],
        )],
        "SessionTokenError" => vec![(
            down(),
            vec![ask(
                get("/auth/session").header("cookie", format!("{SESSION_COOKIE}=tok"))
            )],
        )],
        "SignOutError" => {
            let (csrf, token) = csrf_pair();
            vec![(
                down(),
                vec![
                    post("/auth/signout")
                        .header("cookie", format!("{SESSION_COOKIE}=tok; {csrf}"))
                        .body(form(&[("csrfToken", &token)]))
                        .unwrap(),
                ],
            )]
        }
        "CallbackRouteError" => vec![(builder(), vec![credentials_post("throw", "x")])],
        "AdapterError" => vec![(down(), vec![credentials_post("demo", "pw")])],
        "TwoFactorError" => {
            let (csrf, token) = csrf_pair();
            vec![(
                builder()
                    .adapter(MemoryAdapter::new())
                    .session_strategy(authcore::SessionStrategy::Jwt)
                    .two_factor(authcore::two_factor::TwoFactorOptions::default()),
                vec![
                    post("/auth/two-factor")
                        .header("cookie", csrf)
                        .body(form(&[("csrfToken", &token), ("code", "123456")]))
                        .unwrap(),
                ],
            )]
        }
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn every_row_says_what_the_client_gets() {
    let rows = table();
    assert!(rows.len() >= 25, "{rows:?}");
    for (code, shown_as) in &rows {
        if code == "Configuration" {
            continue; // the fallback the other rows lead to
        }
        let cases = scenarios(code);
        if cases.is_empty() {
            assert!(
                NEED_A_PEER.iter().any(|(c, _)| c == code),
                "no request here produces `{code}`: add one, or name the test that does"
            );
            continue;
        }
        for (config, requests) in cases {
            let (auth, rec): (Auth, _) = auth_with(config);
            let mut last = None;
            for req in requests {
                last = Some(send(&auth, req).await);
            }
            let r = last.unwrap();
            let said = describe(&r, code);
            assert!(
                shown_as.contains(&said),
                "`{code}`: the client got {said} ({} {:?}); the table says {shown_as:?}",
                r.status,
                r.location()
            );
            assert!(
                rec.error_types().iter().any(|t| t == code),
                "`{code}` was not logged: {:?}",
                rec.error_types()
            );
            assert!(
                r.cookie(SESSION_COOKIE).is_none_or(|v| v.is_empty())
                    || r.set_cookie_header(SESSION_COOKIE)
                        .is_some_and(|c| c.contains("Max-Age=0")),
                "`{code}` set a session: {:?}",
                r.set_cookies()
            );
        }
    }
    for (code, module) in NEED_A_PEER {
        assert!(
            rows.iter().any(|(c, _)| c == code),
            "`{code}` is not in the table"
        );
        let source = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/{module}.rs")),
        )
        .unwrap();
        assert!(
            source.contains(code),
            "tests/{module}.rs does not produce `{code}`"
        );
    }
}
