//! Second factors: TOTP enrolment and the second step of a password sign-in (the session
//! opens only after a valid code; `amr` / `auth_time` in the JWT), recovery codes, the
//! required policy's enrolment at sign-in, the account routes; and the attacks: guessing
//! (locked per user), a code or recovery code replayed, the second-step state replayed,
//! from another browser, tampered or expired, the session read with only the first factor,
//! CSRF on every change, changes without a fresh factor.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::*;
use authcore::account::AccountRoute;
use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::adapter::{SessionActivityStore, TwoFactorStore};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::ratelimit::RateLimit;
use authcore::two_factor::TwoFactorOptions;
use authcore::{Auth, SessionStrategy, User};
use serde_json::{Value, json};

const STATE_COOKIE: &str = "__Secure-authjs.two-factor";

/// A store with user `ada@example.com`, and an app whose password `pw` signs her in.
struct App {
    auth: Auth,
    db: MemoryAdapter,
    user_id: String,
    rec: Recorder,
}

async fn app(options: TwoFactorOptions) -> App {
    app_with(options, |b| b.session_strategy(SessionStrategy::Jwt)).await
}

async fn app_with(
    options: TwoFactorOptions,
    more: impl FnOnce(authcore::AuthConfigBuilder) -> authcore::AuthConfigBuilder,
) -> App {
    let db = MemoryAdapter::new();
    let user = db
        .create_user(NewUser {
            email: Some("ada@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    let id = user.id.clone();
    let password = CredentialsProvider::new()
        .field("password", CredentialField::new("Password"))
        .authorize(move |c, _| {
            let id = id.clone();
            async move {
                Ok((c.get("password").and_then(Value::as_str) == Some("pw"))
                    .then(|| User::with_id(id).email("ada@example.com")))
            }
        });
    let (auth, rec) = auth_with(more(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(password)
            .adapter(db.clone())
            .two_factor(options),
    ));
    App {
        auth,
        db,
        user_id: user.id,
        rec,
    }
}

/// Enrols TOTP for the stored user of `email` through the API; the user and the secret.
async fn enrol_by_email(
    auth: &Auth,
    db: &MemoryAdapter,
    email: &str,
) -> (authcore::adapter::AdapterUser, String) {
    let user = db.get_user_by_email(email).await.unwrap().unwrap();
    let me = fresh_session(auth, db, &user.id).await;
    let e = auth.start_totp_enrolment(&me).await.unwrap();
    // The code of the previous step: the current one stays free for the sign-in.
    auth.confirm_totp(&me, &totp_code_at(&e.secret, unix_now() - 30))
        .await
        .unwrap();
    (user, e.secret)
}

/// Enrols TOTP for the app's user through the API; the secret and the recovery codes.
async fn enrol(app: &App) -> (String, Vec<String>) {
    let me = fresh_session(&app.auth, &app.db, &app.user_id).await;
    let e = app.auth.start_totp_enrolment(&me).await.unwrap();
    // The code of the previous step: the current one stays free for the sign-in.
    let codes = app
        .auth
        .confirm_totp(&me, &totp_code_at(&e.secret, unix_now() - 30))
        .await
        .unwrap();
    (e.secret, codes)
}

/// A session of the app's user that signed in just now with both factors.
async fn mfa_session(app: &App) -> authcore::account::CurrentSession {
    session_of(
        &app.auth,
        &app.db,
        &app.user_id,
        Duration::ZERO,
        &["pwd", "otp", "mfa"],
    )
    .await
    .1
}

/// The browser's cookies: the CSRF pair's cookie and what responses set.
struct Browser {
    csrf_cookie: String,
    csrf_token: String,
    jar: Vec<(String, String)>,
}

impl Browser {
    /// A browser with a CSRF cookie of its own.
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let csrf_token = format!("{n:064x}");
        let value = authcore::csrf::csrf_cookie_value(&csrf_token, SECRET);
        Browser {
            csrf_cookie: format!("{CSRF_COOKIE}={}", value.replace('|', "%7C")),
            csrf_token,
            jar: Vec::new(),
        }
    }

    fn cookie_header(&self) -> String {
        let mut parts = vec![self.csrf_cookie.clone()];
        parts.extend(self.jar.iter().map(|(n, v)| format!("{n}={v}")));
        parts.join("; ")
    }

    fn absorb(&mut self, r: &TestResponse) {
        for c in r.set_cookies() {
            let (nv, attrs) = c.split_once(';').unwrap_or((&c, ""));
            let (n, v) = nv.split_once('=').unwrap();
            self.jar.retain(|(name, _)| name != n);
            if !attrs.contains("Max-Age=0") && !v.is_empty() {
                self.jar.push((n.to_owned(), v.to_owned()));
            }
        }
    }

    fn has(&self, name: &str) -> bool {
        self.jar.iter().any(|(n, _)| n == name)
    }

    async fn post(&mut self, auth: &Auth, path: &str, fields: &[(&str, &str)]) -> TestResponse {
        let mut pairs = vec![("csrfToken", self.csrf_token.as_str())];
        pairs.extend_from_slice(fields);
        let r = send(
            auth,
            post(path)
                .header("cookie", self.cookie_header())
                .body(form(&pairs))
                .unwrap(),
        )
        .await;
        self.absorb(&r);
        r
    }

    async fn get(&mut self, auth: &Auth, path: &str) -> TestResponse {
        let r = send(
            auth,
            get(path)
                .header("cookie", self.cookie_header())
                .body(empty())
                .unwrap(),
        )
        .await;
        self.absorb(&r);
        r
    }

    async fn password(&mut self, auth: &Auth, pw: &str) -> TestResponse {
        self.post(auth, "/auth/callback/credentials", &[("password", pw)])
            .await
    }

    async fn code(&mut self, auth: &Auth, code: &str) -> TestResponse {
        self.post(auth, "/auth/two-factor", &[("code", code)]).await
    }

    async fn session(&mut self, auth: &Auth) -> Value {
        self.get(auth, "/auth/session").await.json()
    }
}

/// The claims of JWT session token `token`.
fn session_claims(app: &App, token: &str) -> serde_json::Map<String, Value> {
    app.auth
        .config()
        .jwt()
        .decode(token, SESSION_COOKIE)
        .unwrap()
        .unwrap()
}

fn assert_second_step(r: &TestResponse, b: &Browser) {
    assert_eq!(r.status, 302, "{}", r.text());
    assert_eq!(r.location(), Some("https://authjs.test/auth/two-factor"));
    assert!(r.cookie(SESSION_COOKIE).is_none(), "{:?}", r.set_cookies());
    assert!(b.has(STATE_COOKIE));
    assert!(!b.has(SESSION_COOKIE));
}

/// A browser that signed in with the password and waits at the second step.
async fn at_second_step(app: &App) -> Browser {
    let mut b = Browser::new();
    assert_second_step(&b.password(&app.auth, "pw").await, &b);
    b
}

fn assert_no_session(r: &TestResponse, b: &Browser) {
    assert!(
        r.cookie(SESSION_COOKIE).is_none_or(|v| v.is_empty()),
        "{:?}",
        r.set_cookies()
    );
    assert!(!b.has(SESSION_COOKIE));
}

fn error_param(r: &TestResponse) -> Option<String> {
    let url = url::Url::parse(r.location()?).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == "error")
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn a_password_sign_in_waits_for_the_code() {
    let app = app(TwoFactorOptions::default()).await;
    // Without a second factor (optional policy), the password alone signs in.
    let mut b = Browser::new();
    let r = b.password(&app.auth, "pw").await;
    assert!(r.cookie(SESSION_COOKIE).is_some());

    let (secret, recovery) = enrol(&app).await;
    assert_eq!(recovery.len(), 10);
    let mut b = Browser::new();
    let r = b.password(&app.auth, "pw").await;
    assert_second_step(&r, &b);
    // The first factor alone is no session.
    assert_eq!(b.session(&app.auth).await, Value::Null);
    // The page asks for the code, with the page headers.
    let page = b.get(&app.auth, "/auth/two-factor").await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains(r#"name="code""#), "{html}");
    assert!(html.contains("autocomplete=\"one-time-code\""));
    assert!(!html.contains(&secret), "the secret is not shown again");
    assert!(
        page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    // A wrong code: back to the page, no session.
    let r = b.code(&app.auth, "000000").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/two-factor?error=TwoFactorError")
    );
    assert_no_session(&r, &b);
    assert!(app.rec.error_types().contains(&"TwoFactorError".to_owned()));
    // The right code: the session, with how the user signed in.
    let code = totp_code_at(&secret, unix_now());
    let r = b.code(&app.auth, &code).await;
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("https://authjs.test"));
    assert!(!b.has(STATE_COOKIE), "the state is cleared");
    let token = r.cookie(SESSION_COOKIE).unwrap();
    let claims = session_claims(&app, &token);
    assert_eq!(claims["amr"], json!(["pwd", "otp", "mfa"]));
    let auth_time = claims["auth_time"].as_i64().unwrap();
    assert!((auth_time - i64::try_from(unix_now()).unwrap()).abs() <= 5);
    let session = b.session(&app.auth).await;
    assert_eq!(session["user"]["email"], "ada@example.com");
    // The `/session` JSON keeps Auth.js's shape.
    assert!(session.get("amr").is_none());

    // The same code again (a second sign-in in its window): refused.
    let mut b2 = Browser::new();
    assert_second_step(&b2.password(&app.auth, "pw").await, &b2);
    let r = b2.code(&app.auth, &code).await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    assert_no_session(&r, &b2);
    // No secret or code reaches a log line.
    for line in app.rec.errors() {
        assert!(!line.contains(&secret) && !line.contains(&code), "{line}");
    }
}

#[tokio::test]
async fn recovery_codes_work_once_and_are_an_event() {
    let app = app(TwoFactorOptions::default()).await;
    let (_, recovery) = enrol(&app).await;
    let mut b = at_second_step(&app).await;
    // Typed as a user might: lower case, spaces for dashes.
    let typed = recovery[3].to_lowercase().replace('-', " ");
    let r = b.code(&app.auth, &typed).await;
    assert!(r.cookie(SESSION_COOKIE).is_some(), "{:?}", r.location());
    let actions: Vec<Value> = app
        .rec
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|(n, _)| n == "twoFactor")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(
        actions,
        [
            json!({ "userId": app.user_id, "action": "totpEnrolled" }),
            json!({ "userId": app.user_id, "action": "recoveryCodeUsed" }),
        ]
    );
    assert_eq!(
        app.auth
            .two_factor_status(&app.user_id)
            .await
            .unwrap()
            .recovery_codes_left,
        9
    );
    // Used: refused the second time.
    let mut b = at_second_step(&app).await;
    let r = b.code(&app.auth, &recovery[3]).await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    assert_no_session(&r, &b);
    // Regenerating voids the old set (and needs a current code).
    let me = mfa_session(&app).await;
    assert!(matches!(
        app.auth.regenerate_recovery_codes(&me, "123").await,
        Err(authcore::account::AccountError::InvalidCode)
    ));
    let fresh = app
        .auth
        .regenerate_recovery_codes(&me, &recovery[0])
        .await
        .unwrap();
    let mut b = at_second_step(&app).await;
    let r = b.code(&app.auth, &recovery[1]).await;
    assert_no_session(&r, &b);
    let r = b.code(&app.auth, &fresh[1]).await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
}

#[tokio::test]
async fn guessing_locks_the_user_whatever_the_browser() {
    let minute = Duration::from_secs(60);
    let app = app(TwoFactorOptions::default().attempts(
        RateLimit::new(3, minute).lockout(10 * minute),
        RateLimit::new(100, minute),
    ))
    .await;
    let (secret, _) = enrol(&app).await;
    for i in 0..3 {
        // A new browser (and first factor) each time: the count is the user's.
        let mut b = Browser::new();
        assert_second_step(&b.password(&app.auth, "pw").await, &b);
        let r = b.code(&app.auth, &format!("{:06}", 111_111 + i)).await;
        assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    }
    let mut b = at_second_step(&app).await;
    // Over the limit: even the right code is refused, on the sign-in page.
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert_eq!(
        error_param(&r).as_deref(),
        Some("RateLimited"),
        "{:?}",
        r.location()
    );
    assert!(r.headers.contains_key("retry-after"));
    assert_no_session(&r, &b);
    // The account routes' fresh-factor checks count against the same lock.
    let me = mfa_session(&app).await;
    assert!(matches!(
        app.auth
            .disable_totp(&me, &totp_code_at(&secret, unix_now()))
            .await,
        Err(authcore::account::AccountError::TooManyAttempts { .. })
    ));
}

#[tokio::test]
async fn the_state_is_bound_to_its_browser_and_used_once() {
    let app = app(TwoFactorOptions::default()).await;
    let (secret, _) = enrol(&app).await;
    let mut b = at_second_step(&app).await;
    let state = b
        .jar
        .iter()
        .find(|(n, _)| n == STATE_COOKIE)
        .unwrap()
        .1
        .clone();

    // Another browser (its own CSRF cookie) with the copied state: refused.
    let mut thief = Browser::new();
    thief.jar.push((STATE_COOKIE.into(), state.clone()));
    let r = thief
        .code(&app.auth, &totp_code_at(&secret, unix_now()))
        .await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    assert!(
        r.location().unwrap().contains("/auth/signin"),
        "{:?}",
        r.location()
    );
    assert_no_session(&r, &thief);
    // A tampered state: refused.
    let mut forged = Browser::new();
    forged.csrf_cookie = b.csrf_cookie.clone();
    forged.csrf_token = b.csrf_token.clone();
    let mut bytes = state.clone().into_bytes();
    let at = bytes.len() / 2;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    forged
        .jar
        .push((STATE_COOKIE.into(), String::from_utf8(bytes).unwrap()));
    let r = forged
        .code(&app.auth, &totp_code_at(&secret, unix_now() + 30))
        .await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    assert_no_session(&r, &forged);
    // No state at all (calling the action directly): refused.
    let mut bare = Browser::new();
    let r = bare
        .code(&app.auth, &totp_code_at(&secret, unix_now()))
        .await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    // Without the CSRF token: refused before anything.
    let r = send(
        &app.auth,
        post("/auth/two-factor")
            .header("cookie", b.cookie_header())
            .body(form(&[("code", &totp_code_at(&secret, unix_now()))]))
            .unwrap(),
    )
    .await;
    assert_eq!(error_param(&r).as_deref(), Some("MissingCSRF"));

    // The owner passes once …
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert!(r.cookie(SESSION_COOKIE).is_some(), "{:?}", r.location());
    // … and the same state, replayed with another valid code, opens nothing.
    let mut replay = Browser::new();
    replay.csrf_cookie = b.csrf_cookie.clone();
    replay.csrf_token = b.csrf_token.clone();
    replay.jar.push((STATE_COOKIE.into(), state));
    let r = replay
        .code(&app.auth, &totp_code_at(&secret, unix_now() + 30))
        .await;
    assert_eq!(
        error_param(&r).as_deref(),
        Some("TwoFactorError"),
        "{:?}",
        r.location()
    );
    assert_no_session(&r, &replay);
}

#[tokio::test]
async fn an_expired_state_opens_nothing() {
    let app = app(TwoFactorOptions::default().step_max_age(Duration::from_secs(1))).await;
    let (secret, _) = enrol(&app).await;
    let mut b = at_second_step(&app).await;
    // The state as this server sealed it, but expired (sealed with a clock in the past:
    // the decoder allows 15 s of clock skew, which a test should not wait out).
    let (_, v) = b
        .jar
        .iter()
        .find(|(n, _)| n == STATE_COOKIE)
        .unwrap()
        .clone();
    let jwt = app.auth.config().jwt();
    let claims = jwt.decode(&v, STATE_COOKIE).unwrap().unwrap();
    let old = i64::try_from(unix_now()).unwrap() - 600;
    let expired = jwt.encode_at(&claims, STATE_COOKIE, 300, old).unwrap();
    b.jar.retain(|(n, _)| n != STATE_COOKIE);
    b.jar.push((STATE_COOKIE.to_owned(), expired));
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorError"));
    assert_no_session(&r, &b);
}

#[tokio::test]
async fn required_policy_enrols_at_sign_in() {
    let app = app(TwoFactorOptions::required().issuer("Example")).await;
    let mut b = at_second_step(&app).await;
    let page = b.get(&app.auth, "/auth/two-factor").await;
    let html = page.text();
    assert!(html.contains("<svg"), "a QR code");
    assert!(html.contains("Set up two-factor authentication"));
    let secret = totp_secret_in_page(&html);
    // The page again shows the same pending secret (a reload does not replace it).
    assert!(
        b.get(&app.auth, "/auth/two-factor")
            .await
            .text()
            .contains(&secret)
    );
    // Not enrolled yet: no session from a wrong code.
    let r = b.code(&app.auth, "123456").await;
    assert_no_session(&r, &b);
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert_eq!(r.status, 200, "{:?}", r.location());
    let html = r.text();
    assert_eq!(html.matches("<li><code>").count(), 10, "{html}");
    assert!(html.contains(r#"href="https://authjs.test""#));
    assert!(r.cookie(SESSION_COOKIE).is_some());
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    let status = app.auth.two_factor_status(&app.user_id).await.unwrap();
    assert!(status.totp);
    assert_eq!(status.recovery_codes_left, 10);
    // An enrolment at sign-in is a security change the user hears of.
    assert_eq!(
        app.rec.event("securityChange"),
        Some(json!({ "userId": app.user_id, "change": "totpEnrolled" }))
    );
}

#[tokio::test]
async fn database_sessions_open_only_after_the_second_step() {
    let app = app_with(TwoFactorOptions::default(), |b| {
        b.session_strategy(SessionStrategy::Database)
            .credentials_database_sessions(true)
    })
    .await;
    let (secret, _) = enrol(&app).await;
    // Without the session the enrolment was made from.
    app.db
        .delete_sessions_by_user_id(&app.user_id, None)
        .await
        .unwrap();
    let mut b = at_second_step(&app).await;
    assert!(
        app.db
            .list_sessions_by_user_id(&app.user_id)
            .await
            .unwrap()
            .is_empty(),
        "no session row before the second factor"
    );
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert_eq!(r.cookie(SESSION_COOKIE).unwrap().len(), 36);
    let sessions = || async {
        app.db
            .list_sessions_by_user_id(&app.user_id)
            .await
            .unwrap()
            .len()
    };
    assert_eq!(sessions().await, 1);

    // The session records how its user signed in, for a host's step-up checks; the
    // `/session` JSON keeps Auth.js's shape.
    let first = looked_up(&app, &b).await.unwrap();
    assert_eq!(first.amr, ["pwd", "otp", "mfa"]);
    assert!(
        first
            .auth_time
            .is_some_and(|t| (t - unix_now() as i64).abs() < 60)
    );
    assert!(
        authcore::StepUp::default()
            .two_factors()
            .is_met(Some(&first))
    );
    let json = b.session(&app.auth).await;
    assert_eq!(json["user"]["email"], "ada@example.com");
    assert!(
        json.get("amr").is_none() && json.get("auth_time").is_none(),
        "{json}"
    );

    // A step-up in the same browser is a fresh sign-in: the second step again, then a
    // session of its own that replaces the earlier one.
    let earlier = b.cookie_header();
    let r = b.password(&app.auth, "pw").await;
    assert_eq!(r.location(), Some("https://authjs.test/auth/two-factor"));
    let r = b
        .code(&app.auth, &totp_code_at(&secret, unix_now() + 30))
        .await;
    assert_eq!(r.status, 302, "{}", r.text());
    assert_eq!(sessions().await, 1, "the earlier session is gone");
    let stepped_up = looked_up(&app, &b).await.unwrap();
    assert_eq!(stepped_up.amr, ["pwd", "otp", "mfa"]);
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", earlier.parse().unwrap());
    let old = app
        .auth
        .read_session(
            &"https://authjs.test/".parse().unwrap(),
            &headers,
            &Default::default(),
        )
        .await
        .unwrap();
    assert!(old.session.is_none(), "{old:?}");
}

/// What a host's session read says for browser `b`.
async fn looked_up(app: &App, b: &Browser) -> Option<authcore::SignInInfo> {
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", b.cookie_header().parse().unwrap());
    let read = app
        .auth
        .read_session(
            &"https://authjs.test/".parse().unwrap(),
            &headers,
            &Default::default(),
        )
        .await
        .unwrap();
    read.session?.sign_in().cloned()
}

/// Sends an account route request with the browser's cookies.
async fn account(app: &App, b: &Browser, route: AccountRoute, body: Value) -> (u16, Value) {
    account_from(app, b, route, body, None).await
}

/// An account route request from client address `client`, when given.
async fn account_from(
    app: &App,
    b: &Browser,
    route: AccountRoute,
    body: Value,
    client: Option<std::net::IpAddr>,
) -> (u16, Value) {
    let mut req = http::Request::builder()
        .method(route.method())
        .uri(url(route.path()))
        .header("cookie", b.cookie_header())
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    if let Some(ip) = client {
        req.extensions_mut().insert(authcore::ClientAddr(ip));
    }
    let r = app.auth.handle_account(route, req).await;
    let status = r.status().as_u16();
    let body = http_body_util::BodyExt::collect(r.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// The status and error code of an account route's refusal.
async fn refusal(app: &App, b: &Browser, route: AccountRoute, body: Value) -> (u16, String) {
    let (status, v) = account(app, b, route, body).await;
    (status, v["error"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn account_routes_enrol_and_disable_with_a_fresh_factor() {
    use AccountRoute::*;
    let app = app(TwoFactorOptions::default()).await;
    let mut b = Browser::new();
    assert!(
        b.password(&app.auth, "pw")
            .await
            .cookie(SESSION_COOKIE)
            .is_some()
    );
    let csrf = b.csrf_token.clone();
    let (s, v) = account(&app, &b, TwoFactor, Value::Null).await;
    assert_eq!((s, &v["totp"]), (200, &json!(false)));
    // Every change needs the CSRF token.
    for route in [StartTotp, ConfirmTotp, RegenerateRecoveryCodes, DisableTotp] {
        let body = json!({ "code": "123456" });
        assert_eq!(
            refusal(&app, &b, route, body).await,
            (403, "MissingCSRF".into()),
            "{route:?}"
        );
    }
    let (s, v) = account(&app, &b, StartTotp, json!({ "csrfToken": csrf })).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["qrSvg"].as_str().unwrap().starts_with("<svg"));
    let secret = v["secret"].as_str().unwrap().to_owned();
    let wrong = json!({ "csrfToken": csrf, "code": "000000" });
    assert_eq!(
        refusal(&app, &b, ConfirmTotp, wrong.clone()).await,
        (400, "InvalidCode".into())
    );
    let first = json!({ "csrfToken": csrf, "code": totp_code_at(&secret, unix_now() - 30) });
    let (s, v) = account(&app, &b, ConfirmTotp, first).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["recoveryCodes"].as_array().unwrap().len(), 10);
    // Enrolled, the session that only proved the password changes nothing more, even with a
    // current code: the user has a second factor, and this sign-in did not prove it.
    let start = json!({ "csrfToken": csrf });
    let current = json!({ "csrfToken": csrf, "code": totp_code_at(&secret, unix_now()) });
    for (route, body) in [(StartTotp, &start), (DisableTotp, &current)] {
        assert_eq!(
            refusal(&app, &b, route, body.clone()).await,
            (401, "ReauthenticationRequired".into()),
            "{route:?}"
        );
    }
    assert!(app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
    // Signed in again with both factors: starting again is refused; disabling asks for a
    // current code.
    let mut b = at_second_step(&app).await;
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert!(r.cookie(SESSION_COOKIE).is_some(), "{:?}", r.location());
    let csrf = b.csrf_token.clone();
    let start = json!({ "csrfToken": csrf });
    let wrong = json!({ "csrfToken": csrf, "code": "000000" });
    assert_eq!(
        refusal(&app, &b, StartTotp, start).await,
        (409, "AlreadyEnrolled".into())
    );
    assert_eq!(
        refusal(&app, &b, DisableTotp, wrong).await,
        (400, "InvalidCode".into())
    );
    assert!(app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
    let current = json!({ "csrfToken": csrf, "code": totp_code_at(&secret, unix_now() + 30) });
    let (s, v) = account(&app, &b, DisableTotp, current).await;
    assert_eq!((s, &v["totp"]), (200, &json!(false)), "{v}");
    // Signed out: 401.
    let (s, _) = account(&app, &Browser::new(), TwoFactor, Value::Null).await;
    assert_eq!(s, 401);
}

#[tokio::test]
async fn enrolment_needs_a_recent_sign_in() {
    let app = app(TwoFactorOptions::default()).await;
    let b = Browser::new();
    // A session signed in an hour ago (as a stolen cookie might be).
    let old = i64::try_from(unix_now()).unwrap() - 3600;
    let cookie = session_cookie(
        &app.auth,
        json!({ "sub": app.user_id, "email": "ada@example.com", "auth_time": old }),
    );
    let mut stale = Browser::new();
    stale.csrf_cookie = b.csrf_cookie.clone();
    stale.csrf_token = b.csrf_token.clone();
    let (name, value) = cookie.split_once('=').unwrap();
    stale.jar.push((name.to_owned(), value.to_owned()));
    let (s, v) = account(
        &app,
        &stale,
        AccountRoute::StartTotp,
        json!({ "csrfToken": stale.csrf_token }),
    )
    .await;
    assert_eq!(
        (s, v["error"].as_str()),
        (401, Some("ReauthenticationRequired"))
    );
    assert!(app.db.get_two_factor(&app.user_id).await.unwrap().is_none());
}

#[tokio::test]
async fn without_second_factors_the_action_does_not_exist() {
    let (auth, _) = auth();
    let r = send(&auth, get("/auth/two-factor").body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    // A configuration with second factors and no adapter is refused at build time.
    let e = authcore::AuthConfig::builder()
        .secret(SECRET)
        .provider(credentials())
        .two_factor(TwoFactorOptions::default())
        .build()
        .unwrap_err();
    assert_eq!(e, authcore::ConfigError::TwoFactorMissingAdapter);
}

#[tokio::test]
async fn a_magic_link_waits_for_the_code_too() {
    let outbox = Outbox::default();
    let provider = outbox_provider(&outbox);
    let app = app_with(TwoFactorOptions::default(), move |b| {
        b.session_strategy(SessionStrategy::Jwt).provider(provider)
    })
    .await;
    let (secret, _) = enrol(&app).await;
    let link = magic_link_url(&app.auth, &outbox, "ada@example.com").await;
    let mut b = Browser::new();
    let r = send(
        &app.auth,
        http::Request::get(&link)
            .header("cookie", b.cookie_header())
            .body(empty())
            .unwrap(),
    )
    .await;
    b.absorb(&r);
    assert_second_step(&r, &b);
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    let token = r.cookie(SESSION_COOKIE).unwrap();
    let claims = session_claims(&app, &token);
    assert_eq!(claims["amr"], json!(["otp", "mfa"]));
}

/// OpenID Connect against the real `oidc-provider`, database sessions: the user's second
/// sign-in, after enrolment, waits for the code; no session row until then.
#[tokio::test]
async fn an_oidc_sign_in_waits_for_the_code_too() {
    use crate::oauth_flow::{Jar, assert_signed_in, sign_in};
    use crate::oidc_provider::OidcProvider;
    let op = OidcProvider::start().await;
    let db = MemoryAdapter::new();
    let auth = oidc_app(&op, &db, |p| p);
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_signed_in(&r, &jar);
    let (user, secret) = enrol_by_email(&auth, &db, "user-1@example.com").await;
    let sessions_before = db.list_sessions_by_user_id(&user.id).await.unwrap().len();

    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/auth/two-factor")
    );
    assert!(!jar.0.contains_key("authjs.session-token"), "{jar:?}");
    assert!(jar.0.contains_key("authjs.two-factor"));
    assert_eq!(
        db.list_sessions_by_user_id(&user.id).await.unwrap().len(),
        sessions_before
    );
    let csrf = jar.0["authjs.csrf-token"].clone();
    let token = csrf.split("%7C").next().unwrap().to_owned();
    let r = crate::oauth_flow::send(
        &auth,
        http::Request::post("http://localhost:3000/auth/two-factor")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", jar.header())
            .body(form(&[
                ("csrfToken", &token),
                ("code", &totp_code_at(&secret, unix_now())),
            ]))
            .unwrap(),
    )
    .await;
    jar.absorb(&r);
    assert_signed_in(&r, &jar);
    assert!(!jar.0.contains_key("authjs.two-factor"));
    assert_eq!(
        db.list_sessions_by_user_id(&user.id).await.unwrap().len(),
        sessions_before + 1
    );
}

/// A user with a passkey and no TOTP is not held at a second step that could not be passed
/// (passkeys are not offered there).
#[tokio::test]
async fn passkeys_alone_do_not_hold_a_password_sign_in() {
    let app = app(TwoFactorOptions::default()).await;
    app.db
        .create_authenticator(authcore::Authenticator {
            credential_id: "Y3JlZA==".into(),
            user_id: Some(app.user_id.clone()),
            provider_account_id: "pa-1".into(),
            counter: 0,
            credential_backed_up: false,
            credential_public_key: "pQ==".into(),
            transports: None,
            credential_device_type: "singleDevice".into(),
            name: None,
        })
        .await
        .unwrap();
    let status = app.auth.two_factor_status(&app.user_id).await.unwrap();
    assert_eq!((status.totp, status.passkeys), (false, 1));
    let mut b = Browser::new();
    assert!(
        b.password(&app.auth, "pw")
            .await
            .cookie(SESSION_COOKIE)
            .is_some()
    );
}

/// A user held for a code may prove the second factor with one of their passkeys instead:
/// the page offers it, an assertion of the user's passkey opens the session (`hwk` and
/// `mfa` in its `amr`). Another user's passkey, or the same assertion posted again, opens
/// nothing.
#[tokio::test]
async fn a_passkey_passes_the_second_step() {
    use crate::soft_authenticator::SoftAuthenticator;
    const ORIGIN: &str = "https://authjs.test";
    let app = app_with(TwoFactorOptions::default(), |b| {
        b.session_strategy(SessionStrategy::Jwt)
            .provider(authcore::providers::WebAuthnProvider::passkey())
    })
    .await;
    // Ada adds a passkey while signed in (before her authenticator app: nothing holds her).
    let mut ada_key = SoftAuthenticator::new();
    let mut b = Browser::new();
    assert!(
        b.password(&app.auth, "pw")
            .await
            .cookie(SESSION_COOKIE)
            .is_some()
    );
    let options = b
        .get(&app.auth, "/auth/webauthn-options/passkey?action=register")
        .await
        .json();
    let data = ada_key.register(&options["options"], ORIGIN);
    let r = b
        .post(
            &app.auth,
            "/auth/callback/passkey",
            &[("action", "register"), ("data", &data.to_string())],
        )
        .await;
    assert_eq!(r.status, 302, "{}", r.text());
    // Bob signs up with a passkey of his own.
    let mut bob_key = SoftAuthenticator::new();
    let mut bob = Browser::new();
    let options = bob
        .get(
            &app.auth,
            "/auth/webauthn-options/passkey?email=bob%40example.com",
        )
        .await
        .json();
    assert_eq!(options["action"], "register");
    let data = bob_key.register(&options["options"], ORIGIN);
    bob.post(
        &app.auth,
        "/auth/callback/passkey",
        &[("action", "register"), ("data", &data.to_string())],
    )
    .await;
    let (secret, _) = enrol(&app).await;
    let status = app.auth.two_factor_status(&app.user_id).await.unwrap();
    assert_eq!((status.totp, status.passkeys), (true, 1));

    // The page offers the passkey beside the code.
    let mut b = at_second_step(&app).await;
    let page = b.get(&app.auth, "/auth/two-factor").await.text();
    assert!(
        page.contains("data-webauthn-provider=\"passkey\" data-webauthn-action=\"authenticate\"")
            && page.contains("Use a passkey")
            && page.contains("<script nonce="),
        "{page}"
    );
    let assertion = async |b: &mut Browser, key: &mut SoftAuthenticator| {
        let options = b
            .get(
                &app.auth,
                "/auth/webauthn-options/passkey?action=authenticate",
            )
            .await
            .json();
        key.authenticate(&options["options"], ORIGIN)
    };
    let post_assertion = async |b: &mut Browser, data: &Value| {
        b.post(
            &app.auth,
            "/auth/two-factor",
            &[("action", "authenticate"), ("data", &data.to_string())],
        )
        .await
    };
    // Bob's passkey is no second factor of Ada's.
    let data = assertion(&mut b, &mut bob_key).await;
    let r = post_assertion(&mut b, &data).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/two-factor?error=TwoFactorError")
    );
    assert_no_session(&r, &b);
    // Hers is; the same assertion again opens nothing.
    let data = assertion(&mut b, &mut ada_key).await;
    let replay = b.cookie_header();
    let r = post_assertion(&mut b, &data).await;
    assert_eq!(r.status, 302, "{}", r.text());
    let token = r.cookie(SESSION_COOKIE).unwrap();
    let claims = session_claims(&app, &token);
    let amr: Vec<&str> = claims["amr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(amr, ["pwd", "hwk", "user", "mfa"]);
    let r = send(
        &app.auth,
        post("/auth/two-factor")
            .header("cookie", &replay)
            .body(form(&[
                ("csrfToken", &b.csrf_token),
                ("action", "authenticate"),
                ("data", &data.to_string()),
            ]))
            .unwrap(),
    )
    .await;
    assert!(
        r.cookie(SESSION_COOKIE).is_none_or(|v| v.is_empty()),
        "{:?}",
        r.set_cookies()
    );
    // The code still works for a later sign-in: the passkey took nothing from it.
    let mut later = at_second_step(&app).await;
    let r = later
        .code(&app.auth, &totp_code_at(&secret, unix_now()))
        .await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
}

/// A provider trusted for its own MFA (`trust_upstream_mfa`): an ID token with `mfa` in its
/// `amr` signs in without a second step here, and the session says two factors; the same
/// provider's sign-in without it, or an untrusted provider's with it, asks for the code.
#[tokio::test]
async fn a_trusted_providers_own_mfa_counts_as_two_factors() {
    use crate::oauth_flow::{Jar, assert_signed_in, sign_in};
    use crate::oidc_provider::OidcProvider;
    let op = OidcProvider::start().await;
    let db = MemoryAdapter::new();
    let app = |trust: bool, account: &'static str| {
        oidc_app(&op, &db, |p| {
            p.authorization(move |url| format!("{url}&login_hint={account}"))
                .trust_upstream_mfa(trust)
        })
    };
    // Both users enrol a second factor here (their first sign-in has none to ask for).
    for account in ["mfa-1", "user-2"] {
        let auth = app(false, account);
        let mut jar = Jar::default();
        assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
        enrol_by_email(&auth, &db, &format!("{account}@example.com")).await;
    }
    for (trust, account, second_step) in [
        (true, "mfa-1", false),
        (false, "mfa-1", true),
        (true, "user-2", true),
    ] {
        let auth = app(trust, account);
        let mut jar = Jar::default();
        let r = sign_in(&auth, &op, "oidc", &mut jar).await;
        let case = format!("trusted {trust}, {account}");
        if second_step {
            assert_eq!(
                r.location.as_deref(),
                Some("http://localhost:3000/auth/two-factor"),
                "{case}"
            );
            assert!(!jar.0.contains_key("authjs.session-token"), "{case}");
            continue;
        }
        assert_signed_in(&r, &jar);
        let mut headers = http::HeaderMap::new();
        headers.insert("cookie", jar.header().parse().unwrap());
        let lookup = auth
            .read_session(
                &"http://localhost:3000/".parse().unwrap(),
                &headers,
                &Default::default(),
            )
            .await
            .unwrap();
        let sign_in = lookup.session.unwrap().sign_in().cloned().unwrap();
        assert_eq!(sign_in.amr, ["mfa"], "{case}");
        assert!(sign_in.is_two_factor(), "{case}");
    }
}

/// An app signing in with the test OpenID provider (`customize` adds to the provider), users
/// in `db`, second factors on.
fn oidc_app(
    op: &crate::oidc_provider::OidcProvider,
    db: &MemoryAdapter,
    customize: impl FnOnce(authcore::providers::OAuthProvider) -> authcore::providers::OAuthProvider,
) -> Auth {
    let provider = authcore::providers::OAuthProvider::oidc("oidc", "Test OIDC")
        .issuer(op.issuer.clone())
        .client_id("client-basic")
        .client_secret("secret-basic");
    Auth::new(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(customize(provider))
            .adapter(db.clone())
            .two_factor(TwoFactorOptions::default())
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn an_enrolment_secret_cannot_be_planted() {
    // Someone with only the password reaches the required enrolment and reads its key.
    let app = app(TwoFactorOptions::required()).await;
    let mut attacker = at_second_step(&app).await;
    let planted = totp_secret_in_page(&attacker.get(&app.auth, "/auth/two-factor").await.text());
    // The user's own sign-in is shown a key of its own, not the one the attacker read.
    let mut user = at_second_step(&app).await;
    let html = user.get(&app.auth, "/auth/two-factor").await.text();
    let own = totp_secret_in_page(&html);
    assert_ne!(own, planted);
    assert!(!html.contains(&planted));
    // The attacker's key confirms nothing, from the attacker's step or the user's.
    for b in [&mut attacker, &mut user] {
        let r = b.code(&app.auth, &totp_code_at(&planted, unix_now())).await;
        assert_no_session(&r, b);
    }
    assert!(!app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
    // The user enrols with their own key; the attacker's key never opens a session.
    let r = user.code(&app.auth, &totp_code_at(&own, unix_now())).await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
    let mut later = at_second_step(&app).await;
    let r = later
        .code(&app.auth, &totp_code_at(&planted, unix_now() + 30))
        .await;
    assert_no_session(&r, &later);
    // An account-route enrolment is bound to its session the same way.
    let app = self::app(TwoFactorOptions::default()).await;
    // Two sessions of the same user, signed in a second apart.
    let a = fresh_session(&app.auth, &app.db, &app.user_id).await;
    let (_, b) = session_of(
        &app.auth,
        &app.db,
        &app.user_id,
        Duration::from_secs(1),
        &["pwd"],
    )
    .await;
    let planted = app.auth.start_totp_enrolment(&a).await.unwrap().secret;
    let own = app.auth.start_totp_enrolment(&b).await.unwrap().secret;
    assert_ne!(own, planted);
    assert!(matches!(
        app.auth
            .confirm_totp(&a, &totp_code_at(&planted, unix_now()))
            .await,
        Err(authcore::account::AccountError::NotEnrolled)
    ));
    app.auth
        .confirm_totp(&b, &totp_code_at(&own, unix_now()))
        .await
        .unwrap();
}

#[tokio::test]
async fn first_enrolment_after_an_email_link_or_by_an_operator() {
    use authcore::two_factor::FirstEnrolment;
    // Email link: a password alone never reaches an enrolment; the magic link does.
    let outbox = Outbox::default();
    let provider = outbox_provider(&outbox);
    let app = app_with(
        TwoFactorOptions::required().first_enrolment(FirstEnrolment::EmailLink),
        move |b| b.session_strategy(SessionStrategy::Jwt).provider(provider),
    )
    .await;
    let mut b = Browser::new();
    let r = b.password(&app.auth, "pw").await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorEnrolment"));
    assert_no_session(&r, &b);
    assert!(!b.has(STATE_COOKIE));
    assert!(app.db.get_two_factor(&app.user_id).await.unwrap().is_none());
    let link = magic_link_url(&app.auth, &outbox, "ada@example.com").await;
    let mut b = Browser::new();
    let r = send(
        &app.auth,
        http::Request::get(&link)
            .header("cookie", b.cookie_header())
            .body(empty())
            .unwrap(),
    )
    .await;
    b.absorb(&r);
    assert_second_step(&r, &b);
    let secret = totp_secret_in_page(&b.get(&app.auth, "/auth/two-factor").await.text());
    let r = b.code(&app.auth, &totp_code_at(&secret, unix_now())).await;
    assert!(r.cookie(SESSION_COOKIE).is_some());

    // Operator: nobody enrols at sign-in; once an operator enrolled the user, the code works.
    let app =
        self::app(TwoFactorOptions::required().first_enrolment(FirstEnrolment::Operator)).await;
    let mut b = Browser::new();
    let r = b.password(&app.auth, "pw").await;
    assert_eq!(error_param(&r).as_deref(), Some("TwoFactorEnrolment"));
    assert_no_session(&r, &b);
    let (enrolment, codes) = app.auth.enrol_totp_for_user(&app.user_id).await.unwrap();
    assert_eq!(codes.len(), 10);
    let mut b = at_second_step(&app).await;
    let r = b
        .code(&app.auth, &totp_code_at(&enrolment.secret, unix_now()))
        .await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
}

#[tokio::test]
async fn confirmation_guesses_are_limited_per_user_and_per_client() {
    use AccountRoute::*;
    let minute = Duration::from_secs(60);
    let app = app(TwoFactorOptions::default().attempts(
        RateLimit::new(3, minute).lockout(10 * minute),
        RateLimit::new(100, minute),
    ))
    .await;
    let mut b = Browser::new();
    b.password(&app.auth, "pw").await;
    let csrf = b.csrf_token.clone();
    let (s, v) = account(&app, &b, StartTotp, json!({ "csrfToken": csrf })).await;
    assert_eq!(s, 200, "{v}");
    let secret = v["secret"].as_str().unwrap().to_owned();
    let wrong = json!({ "csrfToken": csrf, "code": "000000" });
    for _ in 0..3 {
        assert_eq!(
            refusal(&app, &b, ConfirmTotp, wrong.clone()).await,
            (400, "InvalidCode".into())
        );
    }
    // Over the limit: even the right code is refused.
    let right = json!({ "csrfToken": csrf, "code": totp_code_at(&secret, unix_now()) });
    assert_eq!(
        refusal(&app, &b, ConfirmTotp, right).await,
        (429, "TooManyAttempts".into())
    );
    assert!(!app.auth.two_factor_status(&app.user_id).await.unwrap().totp);

    // Per client: one address guessing for several users' sessions is stopped at its own
    // limit, whatever the per-user count.
    let app = self::app(TwoFactorOptions::default().attempts(
        RateLimit::new(100, minute),
        RateLimit::new(2, minute).lockout(10 * minute),
    ))
    .await;
    let ip: std::net::IpAddr = "192.0.2.7".parse().unwrap();
    let mut b = Browser::new();
    b.password(&app.auth, "pw").await;
    let csrf = b.csrf_token.clone();
    let (s, _) = account(&app, &b, StartTotp, json!({ "csrfToken": csrf })).await;
    assert_eq!(s, 200);
    let wrong = json!({ "csrfToken": csrf, "code": "000000" });
    for _ in 0..2 {
        let (s, _) = account_from(&app, &b, ConfirmTotp, wrong.clone(), Some(ip)).await;
        assert_eq!(s, 400);
    }
    let (s, v) = account_from(&app, &b, ConfirmTotp, wrong.clone(), Some(ip)).await;
    assert_eq!((s, v["error"].as_str()), (429, Some("TooManyAttempts")));
    // Another address is not held back by it.
    let other: std::net::IpAddr = "192.0.2.8".parse().unwrap();
    let (s, _) = account_from(&app, &b, ConfirmTotp, wrong, Some(other)).await;
    assert_eq!(s, 400);
}
