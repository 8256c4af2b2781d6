//! The debug channel (Auth.js `lib/utils/logger.ts`, `setLogger`; the warning comes from
//! `lib/utils/assert.ts`): `debug(true)` warns `debug-enabled` once per process; a host
//! logger that asks for them (`debug_enabled`) receives debug messages without the flag; the
//! messages Auth.js sends (`adapter_<method>`, `CREATE_<COOKIE>`, `request` …) arrive, and
//! none carries a secret.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::logger::{Logger, WarningCode};
use authcore::providers::OAuthProvider;
use authcore::{AuthConfig, AuthError, SessionStrategy};
use http::Request;
use serde_json::Value;

#[derive(Default, Clone)]
struct DebugLines {
    debug: Arc<Mutex<Vec<(String, Value)>>>,
    warnings: Arc<Mutex<Vec<WarningCode>>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Logger for DebugLines {
    fn error(&self, error: &AuthError) {
        self.errors.lock().unwrap().push(error.to_string());
    }
    fn warn(&self, code: WarningCode) {
        self.warnings.lock().unwrap().push(code);
    }
    fn debug_enabled(&self) -> bool {
        true
    }
    fn debug(&self, message: &str, metadata: &Value) {
        self.debug
            .lock()
            .unwrap()
            .push((message.to_owned(), metadata.clone()));
    }
}

impl DebugLines {
    fn messages(&self) -> Vec<String> {
        self.debug
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _)| m.clone())
            .collect()
    }
    fn everything(&self) -> String {
        serde_json::to_string(&*self.debug.lock().unwrap()).unwrap()
            + &self.errors.lock().unwrap().join("\n")
    }
}

fn github_like() -> OAuthProvider {
    OAuthProvider::oauth("github", "GitHub")
        .issuer("https://github.com/login/oauth")
        .authorization_url("https://github.com/login/oauth/authorize")
        .token_url("https://github.com/login/oauth/access_token")
        .userinfo_url("https://api.github.com/user")
        .client_id("id")
        .client_secret("client-secret-value")
}

/// Run alone in a process of its own by the test below (the warning is per process, and
/// other tests of this binary turn `debug` on too).
#[test]
#[ignore = "run in a process of its own by debug_enabled_is_warned_once_per_process"]
fn debug_enabled_warning_in_a_fresh_process() {
    let first = DebugLines::default();
    let second = DebugLines::default();
    for logger in [&first, &second] {
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .debug(true)
            .logger(logger.clone())
            .provider(credentials())
            .build()
            .unwrap();
    }
    let count = |l: &DebugLines| {
        l.warnings
            .lock()
            .unwrap()
            .iter()
            .filter(|w| **w == WarningCode::DebugEnabled)
            .count()
    };
    assert_eq!(count(&first) + count(&second), 1);
    assert_eq!(count(&first), 1, "the first configuration warns");
}

#[test]
fn debug_enabled_is_warned_once_per_process() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "debug_logging::debug_enabled_warning_in_a_fresh_process",
            "--ignored",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[tokio::test]
async fn a_host_logger_gets_debug_messages_without_the_flag() {
    let lines = DebugLines::default();
    let auth = authcore::Auth::new(builder().logger(lines.clone()).build().unwrap());
    // An unknown action: logged as an error plus the `request` debug message.
    let r = send(&auth, get("/auth/nope").body(empty()).unwrap()).await;
    assert_eq!(r.status, 400);
    assert!(
        lines.messages().contains(&"request".to_owned()),
        "{:?}",
        lines.messages()
    );
}

#[tokio::test]
async fn adapter_calls_are_logged_with_tokens_redacted() {
    let lines = DebugLines::default();
    let adapter = MemoryAdapter::new();
    let user = authcore::adapter::Adapter::create_user(
        &adapter,
        authcore::adapter::NewUser {
            email: Some("ada@example.com".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    authcore::adapter::Adapter::create_session(
        &adapter,
        authcore::adapter::AdapterSession {
            session_token: "db-session-token-value".into(),
            user_id: user.id.clone(),
            expires,
        },
    )
    .await
    .unwrap();
    let auth = authcore::Auth::new(
        builder()
            .logger(lines.clone())
            .adapter(adapter)
            .session_strategy(SessionStrategy::Database)
            .provider(github_like())
            .build()
            .unwrap(),
    );
    let r = get_session(&auth, format!("{SESSION_COOKIE}=db-session-token-value")).await;
    assert_eq!(r.json()["user"]["email"], "ada@example.com");
    let messages = lines.messages();
    assert!(
        messages.contains(&"adapter_getSessionAndUser".to_owned()),
        "{messages:?}"
    );
    assert!(!lines.everything().contains("db-session-token-value"));
}

#[tokio::test]
async fn oauth_check_cookies_are_logged_by_name_not_value() {
    let lines = DebugLines::default();
    let auth = authcore::Auth::new(
        builder()
            .logger(lines.clone())
            .provider(github_like().checks(authcore::providers::Checks {
                pkce: true,
                state: true,
                nonce: true,
            }))
            .build()
            .unwrap(),
    );
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        Request::post(url("/auth/signin/github"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    let messages = lines.messages();
    for m in [
        "CREATE_STATE",
        "CREATE_PKCECODEVERIFIER",
        "CREATE_NONCE",
        "authorization url is ready",
    ] {
        assert!(messages.contains(&m.to_owned()), "{m} in {messages:?}");
    }
    let debug = lines.debug.lock().unwrap().clone();
    let pkce = debug
        .iter()
        .find(|(m, _)| m == "CREATE_PKCECODEVERIFIER")
        .unwrap();
    assert_eq!(pkce.1["name"], "__Secure-authjs.pkce.code_verifier");
    // The sealed values themselves never reach the log.
    let all = lines.everything();
    for cookie in r.set_cookies() {
        let value = cookie.split(';').next().unwrap().split_once('=').unwrap().1;
        if value.len() > 20 {
            assert!(!all.contains(value), "cookie value logged: {cookie}");
        }
    }
    assert!(!all.contains("client-secret-value"));
    // The callback reads the cookies back: PARSE_ / USE_ / CLEAR_ for state. The callback
    // then fails at the token request (no network here), which is logged as a route error.
    let state_cookie = r.set_cookie_header("__Secure-authjs.state").unwrap();
    let state_value = state_cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned();
    let location = url::Url::parse(r.location().unwrap()).unwrap();
    let state = location
        .query_pairs()
        .find(|(k, _)| k == "state")
        .unwrap()
        .1
        .into_owned();
    lines.debug.lock().unwrap().clear();
    let r = send(
        &auth,
        get(&format!(
            "/auth/callback/github?state={state}&error=access_denied"
        ))
        .header("cookie", format!("__Secure-authjs.state={state_value}"))
        .body(empty())
        .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    let messages = lines.messages();
    for m in [
        "PARSE_STATE",
        "USE_STATE",
        "CLEAR_STATE",
        "OAuthCallbackError",
    ] {
        assert!(messages.contains(&m.to_owned()), "{m} in {messages:?}");
    }
}
