//! Refresh-token rotation against the real OpenID provider (`oidc-provider`,
//! `client-refresh`: refresh tokens rotated on every use, access tokens living one second),
//! with the JWT strategy and the database strategy: the access token kept in the session
//! token (or the `accounts` row) is refreshed by the session read, concurrent reads refresh
//! once, a read still carrying the old refresh token gets the same new tokens, and a
//! refused refresh leaves the session valid with `error: "RefreshTokenError"`.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::oauth_flow::*;
use crate::oidc_provider::{OidcProvider, clients};
use authcore::providers::OAuthProvider;
use authcore::{Auth, AuthConfig};
use serde_json::Value;

const SECRET: &str = "oauth-refresh-secret-xxxxxxxxxxx";
const TOKEN_COOKIE: &str = "authjs.session-token";

/// An app whose `oidc` provider refreshes tokens an hour before they expire: with access
/// tokens of one second, every session read is due. JWT sessions.
fn app(op: &OidcProvider, errors: &ErrorLog) -> Auth {
    app_with(op, errors, None)
}

/// [`app`] with database sessions in `adapter`, when given.
fn app_with(
    op: &OidcProvider,
    errors: &ErrorLog,
    adapter: Option<authcore::adapter::MemoryAdapter>,
) -> Auth {
    let (id, secret) = clients::REFRESH;
    let provider = OAuthProvider::oidc("oidc", "Test OIDC")
        .issuer(op.issuer.clone())
        .client_id(id)
        .client_secret(secret)
        .refresh_access_token(Duration::from_secs(3600));
    let mut config = AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .provider(provider)
        .logger(errors.clone());
    if let Some(adapter) = adapter {
        config = config.adapter(adapter);
    }
    Auth::new(config.build().unwrap())
}

/// The OpenID provider with access tokens of one second (and `extra` environment).
async fn short_lived_tokens(extra: &[(&str, &str)]) -> OidcProvider {
    let mut env = vec![("OIDC_ACCESS_TOKEN_TTL", "1")];
    env.extend_from_slice(extra);
    OidcProvider::start_with(crate::oidc_provider::DEFAULT_REDIRECT_URIS, &env).await
}

/// Signs in through the provider; the browser's jar.
async fn signed_in(auth: &Auth, op: &OidcProvider) -> Jar {
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(auth, op, "oidc", &mut jar).await, &jar);
    jar
}

/// Error codes the app logged.
#[derive(Clone, Default)]
struct ErrorLog(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl authcore::logger::Logger for ErrorLog {
    fn error(&self, e: &authcore::AuthError) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{}: {e}", e.error_type()));
    }
}

/// The claims of the session token in `jar`.
fn claims(auth: &Auth, jar: &Jar) -> Value {
    let token = &jar.0[TOKEN_COOKIE];
    Value::Object(
        auth.config()
            .jwt()
            .decode(token, TOKEN_COOKIE)
            .unwrap()
            .unwrap(),
    )
}

/// `GET /auth/session` with `jar`'s cookies; the JSON and the jar after the answer.
async fn read(auth: &Auth, jar: &Jar) -> (Value, Jar) {
    let r = send(
        auth,
        http::Request::get(format!("{APP}/auth/session"))
            .header("cookie", jar.header())
            .body(Default::default())
            .unwrap(),
    )
    .await;
    let mut after = jar.clone();
    after.absorb(&r);
    (serde_json::from_slice(&r.body).unwrap(), after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_reads_refresh_the_access_token_once_and_rotate_the_refresh_token() {
    let op = short_lived_tokens(&[]).await;
    let errors = ErrorLog::default();
    let auth = app(&op, &errors);
    let jar = signed_in(&auth, &op).await;
    let signed_in = claims(&auth, &jar);
    for claim in ["access_token", "refresh_token", "expires_at"] {
        assert!(
            signed_in[claim].is_string() || signed_in[claim].is_i64(),
            "{claim}: {signed_in}"
        );
    }
    assert_eq!(signed_in["provider"], "oidc");
    assert_eq!(op.refresh_count().await, 0);

    // A read refreshes: a new access token and, rotated, a new refresh token.
    let (session, after) = read(&auth, &jar).await;
    assert_eq!(session["user"]["email"], "user-1@example.com");
    assert!(session.get("error").is_none(), "{session}");
    let refreshed = claims(&auth, &after);
    assert_ne!(refreshed["access_token"], signed_in["access_token"]);
    assert_ne!(refreshed["refresh_token"], signed_in["refresh_token"]);
    assert_eq!(op.refresh_count().await, 1);

    // The old cookie again (a request sent before the browser had the new one): the same
    // new tokens, no second use of the rotated refresh token.
    let (_, again) = read(&auth, &jar).await;
    assert_eq!(
        claims(&auth, &again)["access_token"],
        refreshed["access_token"]
    );
    assert_eq!(op.refresh_count().await, 1);

    // Ten concurrent reads with the new cookie: one token request, one answer for all.
    let reads: Vec<_> = (0..10)
        .map(|_| {
            let (auth, jar) = (auth.clone(), after.clone());
            tokio::spawn(async move { read(&auth, &jar).await })
        })
        .collect(); // all started before any is awaited
    let mut access_tokens = std::collections::BTreeSet::new();
    for r in reads {
        let (session, jar) = r.await.unwrap();
        assert_eq!(session["user"]["email"], "user-1@example.com", "{session}");
        assert!(session.get("error").is_none(), "{session}");
        access_tokens.insert(claims(&auth, &jar)["access_token"].to_string());
    }
    assert_eq!(access_tokens.len(), 1, "{access_tokens:?}");
    assert_eq!(op.refresh_count().await, 2);

    // The helper for routes: the fresh access token, refreshed when due, with the cookie
    // that keeps the new tokens.
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", after.header().parse().unwrap());
    let uri: http::Uri = format!("{APP}/api").parse().unwrap();
    let (token, set_cookie) = auth.access_token(&uri, &headers, "oidc").await.unwrap();
    // The cookie's refresh token was just used by the reads above: their new tokens, no
    // third token request.
    assert_eq!(op.refresh_count().await, 2);
    assert!(!set_cookie.is_empty());
    assert_eq!(
        Some(Value::from(token).to_string()),
        access_tokens.into_iter().next()
    );
    assert!(auth.access_token(&uri, &headers, "github").await.is_none());
    assert_eq!(errors.0.lock().unwrap().len(), 0, "{:?}", errors.0);
}

#[tokio::test]
async fn a_refused_refresh_keeps_the_session_with_refresh_token_error() {
    let op = short_lived_tokens(&[]).await;
    let errors = ErrorLog::default();
    let auth = app(&op, &errors);
    let jar = signed_in(&auth, &op).await;
    let before = claims(&auth, &jar);
    op.set_mode("refresh-error").await;

    let (session, after) = read(&auth, &jar).await;
    assert_eq!(session["user"]["email"], "user-1@example.com", "{session}");
    assert_eq!(session["error"], "RefreshTokenError", "{session}");
    let kept = claims(&auth, &after);
    assert_eq!(kept["error"], "RefreshTokenError");
    assert_eq!(
        kept["access_token"], before["access_token"],
        "the old tokens are kept"
    );
    assert_eq!(kept["refresh_token"], before["refresh_token"]);
    let logged = errors.0.lock().unwrap().clone();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].starts_with("RefreshTokenError"), "{logged:?}");
    assert!(logged[0].contains("invalid_grant"), "{logged:?}");
    assert!(
        !logged[0].contains(before["refresh_token"].as_str().unwrap()),
        "no token in the log: {logged:?}"
    );
}

/// The database strategy: the `accounts` row is refreshed (once for concurrent reads), and
/// a refused refresh gives the session `error: "RefreshTokenError"`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_sessions_refresh_the_accounts_row() {
    use authcore::adapter::Adapter as _;
    // Token responses take half a second in `slow-token` mode: the concurrent reads all
    // find the row before the refresh stores new tokens (which, always due in this app,
    // a later read would refresh again).
    let op = short_lived_tokens(&[("OIDC_SLOW_TOKEN_MS", "500")]).await;
    let errors = ErrorLog::default();
    let db = authcore::adapter::MemoryAdapter::new();
    let auth = app_with(&op, &errors, Some(db.clone()));
    let jar = signed_in(&auth, &op).await;
    let account = || async {
        db.get_account("user-1", "oidc")
            .await
            .unwrap()
            .expect("the linked account")
    };
    let signed_in = account().await;
    assert!(signed_in.refresh_token.is_some(), "{signed_in:?}");

    op.set_mode("slow-token").await;
    let reads: Vec<_> = (0..10)
        .map(|_| {
            let (auth, jar) = (auth.clone(), jar.clone());
            tokio::spawn(async move { read(&auth, &jar).await })
        })
        .collect(); // all started before any is awaited
    for r in reads {
        let (session, _) = r.await.unwrap();
        assert_eq!(session["user"]["email"], "user-1@example.com", "{session}");
        assert!(session.get("error").is_none(), "{session}");
    }
    assert_eq!(op.refresh_count().await, 1);
    let refreshed = account().await;
    assert_ne!(refreshed.access_token, signed_in.access_token);
    assert_ne!(refreshed.refresh_token, signed_in.refresh_token);
    assert!(refreshed.expires_at >= signed_in.expires_at);

    op.set_mode("refresh-error").await;
    let (session, _) = read(&auth, &jar).await;
    assert_eq!(session["user"]["email"], "user-1@example.com", "{session}");
    assert_eq!(session["error"], "RefreshTokenError", "{session}");
    assert_eq!(account().await, refreshed, "the stored tokens are kept");
    assert_eq!(errors.0.lock().unwrap().len(), 1, "{:?}", errors.0);

    // The helper for routes reads the row's token (the kept one: refreshing fails now).
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", jar.header().parse().unwrap());
    let uri: http::Uri = format!("{APP}/api").parse().unwrap();
    let (token, _) = auth.access_token(&uri, &headers, "oidc").await.unwrap();
    assert_eq!(
        Some(token),
        account().await.access_token,
        "the row's (fresh) token"
    );
}
