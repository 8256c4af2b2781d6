//! authcore as the relying party of OpenID Connect Back-Channel Logout 1.0: an app on
//! authcore signs its user in with a real OpenID provider (`oidc-provider`, started on
//! loopback); when the user's session ends there (the provider's end-session page), the
//! logout token the provider posts (with the provider session's `sid`) signs the user out
//! of the app session that provider session signed in, and leaves the other browser's —
//! a database session deleted, a JWT session refused through the mark of its provider
//! session. Then the attacks, each posted straight to the app and each
//! checked to sign no one out: a token signed with another key, unsigned, for another
//! client, from another issuer, expired, issued in the future, without the logout event,
//! with a nonce (an ID token's shape), naming neither a user nor a session, not a JWT,
//! oversize, a valid token naming another user, or a session unknown here, or this
//! user's provider session with another user as `sub`; and a valid token replayed.

use std::path::PathBuf;
use std::time::Duration;

use authcore::providers::OAuthProvider;
use authcore::{Auth, AuthConfig, SessionStrategy};
use authcore_axum::AuthRouterExt as _;
use serde_json::{Value, json};

use crate::support::binary;
use crate::support::oidc_provider::{Callback, OidcProvider};

const SECRET: &str = "a back-channel logout test secret, long enough";
const EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// The app on authcore (on 127.0.0.1, as the provider posts to it), its provider, and the
/// database file's directory.
struct App {
    base: String,
    op: OidcProvider,
    dir: PathBuf,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The app with `strategy` (JWT sessions with the revocation list), signing in with the
/// provider's `client-basic`, which the provider tells of ended sessions.
async fn app(strategy: SessionStrategy) -> App {
    app_with(strategy, authcore::ratelimit::RateLimits::default()).await
}

/// [`app`] with `limits`.
async fn app_with(strategy: SessionStrategy, limits: authcore::ratelimit::RateLimits) -> App {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let op = OidcProvider::start_with(
        &[&format!("{base}/auth/callback/oidc")],
        &[(
            "OIDC_BACKCHANNEL_LOGOUT_URI",
            &format!("{base}/auth/backchannel-logout/oidc"),
        )],
    )
    .await;
    let dir = std::env::temp_dir().join(format!(
        "authcore-bcl-{}-{}",
        std::process::id(),
        listener.local_addr().unwrap().port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("app.db").display());
    let db = authcore_sqlx::SqlxAdapter::sqlite(&url).await.unwrap();
    db.migrate().await.unwrap();
    let provider = OAuthProvider::oidc("oidc", "Test OIDC")
        .issuer(op.issuer.clone())
        .client_id("client-basic")
        .client_secret("secret-basic");
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .url(format!("{base}/auth"))
            .provider(provider)
            .adapter(db)
            .session_strategy(strategy)
            .jwt_revocation(strategy == SessionStrategy::Jwt)
            .rate_limits(limits)
            .build()
            .unwrap(),
    );
    // With the peer's address, for the per-client limits.
    let router = axum::Router::new()
        .auth_routes(auth)
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, router).await });
    App { base, op, dir }
}

impl App {
    /// A browser signed in to the app through the provider (a session at both).
    async fn signed_in_browser(&self) -> reqwest::Client {
        let browser = OidcProvider::browser();
        let csrf = binary::csrf_token(&browser, &self.base).await;
        let r = browser
            .post(format!("{}/auth/signin/oidc", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrfToken={csrf}"))
            .send()
            .await
            .unwrap();
        let to_op = r.headers()["location"].to_str().unwrap().to_owned();
        let callback = format!("{}/auth/callback/oidc", self.base);
        let Callback::Query(back) = self.op.authorize_in(&browser, &to_op, &callback).await else {
            panic!("a query callback expected");
        };
        let r = browser.get(back).send().await.unwrap();
        assert_eq!(r.status(), 302);
        assert!(self.user(&browser).await.is_some(), "signed in");
        browser
    }

    /// Waits (at most 5 s) until `browser` is signed out of the app: the provider posts the
    /// logout token before it answers, the app may still be finishing its answer.
    async fn signed_out(&self, browser: &reqwest::Client, strategy: SessionStrategy) {
        for _ in 0..50 {
            if self.user(browser).await.is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{strategy:?}: still signed in\n{}", self.op.stderr_log());
    }

    /// The provider session ids the app recorded with its sessions.
    async fn recorded_sids(&self) -> Vec<String> {
        use sqlx::Row as _;
        let url = format!("sqlite://{}", self.dir.join("app.db").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let rows = sqlx::query("SELECT sid FROM upstream_sessions")
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows.iter().map(|r| r.get::<String, _>(0)).collect()
    }

    /// The email of `browser`'s session at the app, if signed in.
    async fn user(&self, browser: &reqwest::Client) -> Option<String> {
        let session = binary::get_json(browser, &format!("{}/auth/session", self.base)).await;
        session["user"]["email"].as_str().map(str::to_owned)
    }

    /// Posts `token` as a logout token to the app, as a provider would: the status and body.
    async fn post_logout(&self, token: &str) -> (u16, Value) {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("logout_token", token)
            .finish();
        let r = reqwest::Client::new()
            .post(format!("{}/auth/backchannel-logout/oidc", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        // Server to server: no cookie is read or set, whatever the answer.
        assert!(
            r.headers().get("set-cookie").is_none(),
            "HTTP {status} set a cookie"
        );
        assert_eq!(r.headers()["cache-control"], "private, no-cache, no-store");
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// A logout token's claims for the app's client, `user-1`, with `changes` (a `null`
    /// removes a claim).
    fn claims(&self, changes: Value) -> Value {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let mut claims = json!({
            "iss": self.op.issuer,
            "aud": "client-basic",
            "iat": now,
            "exp": now + 120,
            "jti": format!("jti-{now}-{}", rand_suffix()),
            "sub": "user-1",
            "sid": "an-op-session",
            "events": { EVENT: {} },
        });
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(k);
            } else {
                claims[k] = v.clone();
            }
        }
        claims
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The provider's own end-session page signs the user out of the app session that
/// provider session signed in, on both strategies: that one alone (another browser's
/// session, from another provider session, stays until its own logout). A sign-in after
/// it works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_providers_logout_signs_the_user_out_of_the_app() {
    for strategy in [SessionStrategy::Database, SessionStrategy::Jwt] {
        let app = app(strategy).await;
        let first = app.signed_in_browser().await;
        let second = app.signed_in_browser().await;
        app.op.end_session(&first).await;
        app.signed_out(&first, strategy).await;
        assert!(
            app.user(&second).await.is_some(),
            "{strategy:?}: the other session ended"
        );
        app.op.end_session(&second).await;
        app.signed_out(&second, strategy).await;
        let again = app.signed_in_browser().await;
        assert_eq!(
            app.user(&again).await.as_deref(),
            Some("user-1@example.com")
        );
    }
}

/// Logout tokens that do not hold sign no one out; a valid one does, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_or_replayed_logout_tokens_sign_no_one_out() {
    let app = app(SessionStrategy::Database).await;
    let browser = app.signed_in_browser().await;
    let op = &app.op;
    let unsigned = {
        use base64::Engine as _;
        let b64 =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.",
            b64(&json!({"alg": "none", "typ": "logout+jwt"})),
            b64(&app.claims(json!({})))
        )
    };
    let now = app.claims(json!({}))["iat"].as_i64().unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("another key", op.sign(&app.claims(json!({})), true).await),
        ("unsigned", unsigned),
        (
            "another client",
            op.sign(&app.claims(json!({"aud": "client-post"})), false)
                .await,
        ),
        (
            "another issuer",
            op.sign(&app.claims(json!({"iss": "https://evil.example"})), false)
                .await,
        ),
        (
            "expired",
            op.sign(
                &app.claims(json!({"iat": now - 7200, "exp": now - 3600})),
                false,
            )
            .await,
        ),
        (
            "issued in the future",
            op.sign(&app.claims(json!({"iat": now + 3600})), false)
                .await,
        ),
        (
            "no logout event",
            op.sign(&app.claims(json!({"events": null})), false).await,
        ),
        (
            "another event",
            op.sign(
                &app.claims(json!({"events": {"https://example.com/e": {}}})),
                false,
            )
            .await,
        ),
        (
            "a nonce (an ID token)",
            op.sign(&app.claims(json!({"nonce": "n", "events": null})), false)
                .await,
        ),
        (
            "neither sub nor sid",
            op.sign(&app.claims(json!({"sub": null, "sid": null})), false)
                .await,
        ),
        (
            "no jti",
            op.sign(&app.claims(json!({"jti": null})), false).await,
        ),
        ("not a JWT", "not-a-token".to_owned()),
        ("empty", String::new()),
        ("oversize", "a".repeat(40_000)),
    ];
    for (what, token) in &cases {
        let (status, body) = app.post_logout(token).await;
        assert!(
            status == 400 || status == 413,
            "{what}: HTTP {status} {body}"
        );
        assert_eq!(
            app.user(&browser).await.as_deref(),
            Some("user-1@example.com"),
            "{what}: signed out"
        );
    }
    // No logout token at all, and a GET.
    let r = reqwest::Client::new()
        .post(format!("{}/auth/backchannel-logout/oidc", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = reqwest::Client::new()
        .get(format!("{}/auth/backchannel-logout/oidc", app.base))
        .send()
        .await
        .unwrap();
    assert_ne!(r.status(), 200);

    // Valid tokens that name no session of this user: answered, nobody signed out.
    let [sid] = app.recorded_sids().await.try_into().unwrap();
    for (what, changes) in [
        ("another user", json!({"sub": "user-2", "sid": null})),
        ("a provider session unknown here", json!({"sub": null})),
        (
            "this user's provider session, another user as sub",
            json!({"sub": "user-2", "sid": sid}),
        ),
    ] {
        let token = op.sign(&app.claims(changes), false).await;
        let (status, body) = app.post_logout(&token).await;
        assert_eq!(status, 200, "{what}: {body}");
        assert!(app.user(&browser).await.is_some(), "{what}: signed out");
    }

    // A valid token for the user: signed out; the same token again is refused.
    let valid = op.sign(&app.claims(json!({"sid": null})), false).await;
    let (status, body) = app.post_logout(&valid).await;
    assert_eq!(status, 200, "{body}");
    assert!(app.user(&browser).await.is_none(), "signed out");
    let (status, body) = app.post_logout(&valid).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );
}

/// A provider that signs many users out at once is not held back by the request limit per
/// client address: only logout tokens that do not verify count against it, and once it
/// is over they get `429` with `Retry-After` — while valid tokens still go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_refused_logout_tokens_count_against_the_request_limit() {
    let limits = authcore::ratelimit::RateLimits {
        requests_per_client: Some(authcore::ratelimit::RateLimit::new(
            3,
            Duration::from_secs(60),
        )),
        ..Default::default()
    };
    let app = app_with(SessionStrategy::Database, limits).await;
    let valid = async || {
        let token = app
            .op
            .sign(&app.claims(json!({"sub": "user-2", "sid": null})), false)
            .await;
        app.post_logout(&token).await.0
    };
    for _ in 0..5 {
        assert_eq!(valid().await, 200);
    }
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for _ in 0..5 {
            v.push(app.post_logout("not-a-token").await.0);
        }
        v
    };
    assert_eq!(statuses, [400, 400, 400, 429, 429]);
    assert_eq!(valid().await, 200, "a valid token over the limit");
}
