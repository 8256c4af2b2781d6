//! Attacks on the sensitive changes of the real `authcore-server` binary on SQLite, sent as
//! raw HTTP requests (a cookie header of our own, no browser): a session whose sign-in is
//! too old (its recorded sign-in time aged in the database file) reaches none of them, a
//! password alone keeps no authenticator key under `policy = "required"`, and code guesses
//! on the account routes are limited. Each case checks that the protected thing was not
//! reached: the user, the linked account, the passkey and the app's access are still there,
//! and no challenge, key or code came back. `docs/security.md` ("Sensitive operations")
//! lists what these prove beside authcore's own tests.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use authcore::adapter::Adapter as _;
use authcore::types::{Account, Authenticator, ProviderType};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::binary::ServerProcess;
use crate::support::totp::{totp_code_at, unix_now};
use authcore::adapter::{AppAccessStore, TwoFactorStore};

const DEMO_EMAIL: &str = "demo@example.com";
const PASSWORD: &str = "a sensitive-changes test password";

/// The server on an SQLite file of its own (`AUTHCORE_DATABASE_URL`), with `config` as its
/// file; the directory is removed on drop.
struct Demo {
    _server: ServerProcess,
    base: String,
    url: String,
    dir: PathBuf,
}

impl Demo {
    fn start(config: &str) -> Demo {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "authcore-sensitive-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.join("demo.db").display());
        let mut server = ServerProcess::spawn(
            &[
                ("AUTHCORE_DATABASE_URL", url.as_str()),
                ("AUTHCORE_DEMO_PASSWORD", PASSWORD),
            ],
            Some(config),
        );
        let base = server.base_url();
        Demo {
            _server: server,
            base,
            url,
            dir,
        }
    }

    /// The server's database, as an adapter.
    async fn db(&self) -> authcore_sqlx::SqlxAdapter {
        authcore_sqlx::SqlxAdapter::sqlite(&self.url).await.unwrap()
    }

    /// Moves the recorded sign-in of every session of `user_id` an hour back (the window
    /// is 10 minutes): the sessions stay valid, their sign-in is no longer recent.
    async fn age_sign_in(&self, user_id: &str) {
        let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
        let aged = sqlx::query(
            r#"UPDATE sessions SET "authTime" = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')
               WHERE "userId" = ? AND "authTime" IS NOT NULL"#,
        )
        .bind(user_id)
        .execute(&pool)
        .await
        .unwrap()
        .rows_affected();
        assert!(aged >= 1, "no recorded sign-in to age");
        pool.close().await;
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One browser: its cookies sent as a `Cookie` header, updated from every answer's
/// `Set-Cookie`; redirects not followed.
struct Browser {
    http: reqwest::Client,
    base: String,
    cookies: BTreeMap<String, String>,
}

/// An answer read whole.
struct Answer {
    status: StatusCode,
    location: String,
    /// Names of the cookies it set (with a value).
    set: Vec<String>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

impl Browser {
    fn new(demo: &Demo) -> Browser {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(std::time::Duration::from_secs(15))
                .build()
                .unwrap(),
            base: demo.base.clone(),
            cookies: BTreeMap::new(),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.cookies.contains_key(name)
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Answer {
        let header = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let res = req.header("cookie", header).send().await.unwrap();
        let mut set = Vec::new();
        for v in res.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let mut attrs = v.split(';').map(str::trim);
            let (name, value) = attrs.next().unwrap().split_once('=').unwrap();
            let expired = attrs.any(|a| a.eq_ignore_ascii_case("max-age=0"));
            if expired || value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
                set.push(name.to_owned());
            }
        }
        let status = res.status();
        let location = res
            .headers()
            .get("location")
            .map(|l| l.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = res.text().await.unwrap();
        Answer {
            status,
            location,
            set,
            body,
        }
    }

    async fn get(&mut self, path: &str) -> Answer {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    async fn post_form(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let req = self.http.post(format!("{}{path}", self.base)).form(form);
        self.send(req).await
    }

    async fn post_json(&mut self, path: &str, body: Value) -> Answer {
        let req = self.http.post(format!("{}{path}", self.base)).json(&body);
        self.send(req).await
    }

    /// `GET /auth/csrf`: the token (its cookie kept).
    async fn csrf(&mut self) -> String {
        let json = self.get("/auth/csrf").await.json();
        json["csrfToken"].as_str().unwrap().to_owned()
    }

    /// A password sign-in of the demo user: the answer (a redirect).
    async fn sign_in(&mut self) -> Answer {
        let csrf = self.csrf().await;
        self.post_form(
            "/auth/callback/credentials",
            &[
                ("csrfToken", csrf.as_str()),
                ("username", "demo"),
                ("password", PASSWORD),
                ("callbackUrl", "/protected"),
            ],
        )
        .await
    }
}

/// The authenticator key a page shows (the two-factor page, the account page), if any.
fn shown_key(html: &str) -> Option<String> {
    html.split(r#"id="totp-secret" type="text" readonly value=""#)
        .nth(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
}

/// A sign-in that opened a session.
fn assert_signed_in(answer: &Answer, browser: &Browser) {
    assert_eq!(answer.status, StatusCode::FOUND);
    assert!(!answer.location.contains("error="), "{}", answer.location);
    assert!(browser.has("authjs.session-token"));
}

/// How a case's refusal reads.
enum Refused {
    /// A JSON `401 {"error": "ReauthenticationRequired"}`.
    Json,
    /// The account page with the recent-sign-in message and its "Sign in again" link.
    Page,
}

/// A demo user signed in, with a linked GitHub account, a passkey and an application's
/// access; then their sign-in is aged: not one sensitive change is reached, on the JSON
/// routes, the account page or the passkey registration, and nothing is changed or handed
/// out. A fresh sign-in in the same browser then reaches them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_session_reaches_no_sensitive_change() {
    let demo = Demo::start("");
    let mut browser = Browser::new(&demo);
    let signed_in = browser.sign_in().await;
    assert_signed_in(&signed_in, &browser);
    let db = demo.db().await;
    let user = db.get_user_by_email(DEMO_EMAIL).await.unwrap().unwrap();

    let mut github = Account::new(ProviderType::Oauth, "github", "gh-stale");
    github.user_id = Some(user.id.clone());
    db.link_account(github).await.unwrap();
    db.create_authenticator(Authenticator {
        credential_id: "cred-stale".into(),
        user_id: Some(user.id.clone()),
        provider_account_id: "cred-stale".into(),
        credential_public_key: "pk".into(),
        counter: 0,
        credential_device_type: "multiDevice".into(),
        credential_backed_up: true,
        transports: None,
        name: None,
    })
    .await
    .unwrap();
    db.grant_app_access(
        &user.id,
        "app-stale",
        "An app",
        &["openid".to_owned()],
        time::OffsetDateTime::now_utc(),
    )
    .await
    .unwrap();

    // While the sign-in is recent, a passkey registration starts (a challenge is set).
    let register = "/auth/webauthn-options/passkey?action=register";
    let fresh = browser.get(register).await;
    assert_eq!(fresh.status, StatusCode::OK, "{}", fresh.body);
    assert!(fresh.set.contains(&"authjs.challenge".to_owned()));
    browser.cookies.remove("authjs.challenge");

    demo.age_sign_in(&user.id).await;
    let csrf = browser.csrf().await;
    // The session itself is still valid: only its sign-in is old.
    let session = browser.get("/auth/session").await.json();
    assert_eq!(session["user"]["email"], DEMO_EMAIL, "{session}");

    let json_change = |route: &'static str, body: Value| (route, body);
    let cases = [
        json_change("/account/delete", json!({"csrfToken": csrf})),
        json_change(
            "/account/unlink",
            json!({"csrfToken": csrf, "provider": "github", "providerAccountId": "gh-stale"}),
        ),
        json_change(
            "/account/passkeys/delete",
            json!({"csrfToken": csrf, "credentialID": "cred-stale"}),
        ),
        json_change(
            "/account/apps/revoke",
            json!({"csrfToken": csrf, "clientId": "app-stale"}),
        ),
        json_change("/account/two-factor/totp", json!({"csrfToken": csrf})),
    ];
    for (route, body) in cases {
        let answer = browser.post_json(route, body).await;
        check_refused(&answer, Refused::Json, route);
    }
    // The page's forms: every field any op reads, so each op finds what it needs.
    for op in [
        "delete",
        "unlink",
        "passkey-delete",
        "app-revoke",
        "totp-start",
    ] {
        let form = [
            ("csrfToken", csrf.as_str()),
            ("op", op),
            ("confirm", "yes"),
            ("provider", "github"),
            ("providerAccountId", "gh-stale"),
            ("credentialID", "cred-stale"),
            ("clientId", "app-stale"),
        ];
        let answer = browser.post_form("/auth/account", &form).await;
        check_refused(&answer, Refused::Page, op);
    }
    let answer = browser.get(register).await;
    check_refused(&answer, Refused::Json, register);
    assert!(!browser.has("authjs.challenge"));

    // Nothing was reached: the user, their account, passkey and app's access are there.
    assert!(db.get_user(&user.id).await.unwrap().is_some());
    assert!(
        db.get_account("gh-stale", "github")
            .await
            .unwrap()
            .is_some()
    );
    assert!(db.get_authenticator("cred-stale").await.unwrap().is_some());
    let apps = db.list_app_access(&user.id).await.unwrap();
    assert_eq!(apps.len(), 1, "{apps:?}");
    assert!(
        db.get_two_factor(&user.id).await.unwrap().is_none(),
        "no TOTP secret was started"
    );
    assert!(browser.has("authjs.session-token"), "still signed in");

    // The user signs in again (same browser, same user): the changes are open again.
    let again = browser.sign_in().await;
    assert_signed_in(&again, &browser);
    let same = db.get_user_by_email(DEMO_EMAIL).await.unwrap().unwrap();
    assert_eq!(same.id, user.id, "the same user, never deleted");
    let csrf = browser.csrf().await;
    let answer = browser
        .post_json(
            "/account/apps/revoke",
            json!({"csrfToken": csrf, "clientId": "app-stale"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    drop(demo);
}

/// `answer` is the refusal of a stale session, and hands out nothing.
fn check_refused(answer: &Answer, how: Refused, case: &str) {
    match how {
        Refused::Json => {
            assert_eq!(
                answer.status,
                StatusCode::UNAUTHORIZED,
                "{case}: {}",
                answer.body
            );
            let refusal = answer.json();
            assert_eq!(refusal["error"], "ReauthenticationRequired", "{case}");
            // At most a message and where to sign in again: no options, no challenge.
            let keys: Vec<&String> = refusal.as_object().unwrap().keys().collect();
            assert!(
                keys.iter()
                    .all(|k| ["error", "message", "url"].contains(&k.as_str())),
                "{case}: {refusal}"
            );
        }
        Refused::Page => {
            assert_eq!(answer.status, StatusCode::OK, "{case}");
            assert!(
                answer.body.contains("This change needs a recent sign-in"),
                "{case}: {}",
                answer.body
            );
            assert!(answer.body.contains("Sign in again"), "{case}");
            assert!(shown_key(&answer.body).is_none(), "{case}: a key was shown");
        }
    }
    assert!(
        !answer.set.iter().any(|c| c == "authjs.challenge"),
        "{case}: a WebAuthn challenge was set"
    );
    assert!(
        !answer.set.iter().any(|c| c == "authjs.session-token"),
        "{case}: the session changed"
    );
}

/// `policy = "required"`: an attacker with the password alone (browser A) is shown a key on
/// the two-factor page, but it is bound to that sign-in attempt; the real user signing in
/// (browser B) gets a different key, and a valid code of A's key then opens nothing. B's
/// own key turns the second factor on, and A's next sign-in is asked for a code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_alone_keeps_no_enrolment_key() {
    let demo = Demo::start("[two_factor]\npolicy = \"required\"\n");
    let (mut attacker, mut user) = (Browser::new(&demo), Browser::new(&demo));
    let step = format!("{}/auth/two-factor", demo.base);

    let first = attacker.sign_in().await;
    assert_eq!(first.location, step);
    assert!(!attacker.has("authjs.session-token"));
    let key_a = shown_key(&attacker.get("/auth/two-factor").await.body).unwrap();

    let first = user.sign_in().await;
    assert_eq!(first.location, step);
    let key_b = shown_key(&user.get("/auth/two-factor").await.body).unwrap();
    assert_ne!(key_a, key_b, "each sign-in attempt gets a key of its own");

    let csrf = attacker.csrf().await;
    let code = totp_code_at(&key_a, unix_now());
    let answer = attacker
        .post_form(
            "/auth/two-factor",
            &[("csrfToken", csrf.as_str()), ("code", code.as_str())],
        )
        .await;
    assert!(
        answer.location.contains("error=TwoFactorError"),
        "{}",
        answer.location
    );
    assert!(!attacker.has("authjs.session-token"), "no session for A");
    let db = demo.db().await;
    let id = db.get_user_by_email(DEMO_EMAIL).await.unwrap().unwrap().id;
    let stored = db.get_two_factor(&id).await.unwrap().unwrap();
    assert!(
        stored.totp_confirmed_at.is_none(),
        "A's key was not enrolled"
    );

    // The user's own key enrols; from then on a password alone is asked for a code.
    let csrf = user.csrf().await;
    let code = totp_code_at(&key_b, unix_now());
    let answer = user
        .post_form(
            "/auth/two-factor",
            &[("csrfToken", csrf.as_str()), ("code", code.as_str())],
        )
        .await;
    assert!(!answer.location.contains("error="), "{}", answer.location);
    assert!(user.has("authjs.session-token"));
    let stored = db.get_two_factor(&id).await.unwrap().unwrap();
    assert!(stored.totp_confirmed_at.is_some());
    let again = attacker.sign_in().await;
    assert_eq!(again.location, step);
    let page = attacker.get("/auth/two-factor").await.body;
    assert!(shown_key(&page).is_none(), "no key for a user who enrolled");
    assert!(!attacker.has("authjs.session-token"));
    drop(demo);
}

/// `first_enrolment = "email-link"`: a password sign-in of a user without a second factor
/// is refused (`TwoFactorEnrolment`): no session, no sealed sign-in, no key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_link_enrolment_refuses_a_password_sign_in() {
    let demo =
        Demo::start("[two_factor]\npolicy = \"required\"\nfirst_enrolment = \"email-link\"\n");
    let mut attacker = Browser::new(&demo);
    let answer = attacker.sign_in().await;
    assert!(
        answer.location.contains("error=TwoFactorEnrolment"),
        "{}",
        answer.location
    );
    assert!(!attacker.has("authjs.session-token"));
    assert!(!attacker.has("authjs.two-factor"));
    let page = attacker.get("/auth/two-factor").await;
    assert!(shown_key(&page.body).is_none(), "{}", page.body);
    let db = demo.db().await;
    let id = db.get_user_by_email(DEMO_EMAIL).await.unwrap().unwrap().id;
    assert!(db.get_two_factor(&id).await.unwrap().is_none());
    drop(demo);
}

/// A six-digit code no step of `secret` around now gives (the check accepts a step of
/// skew either way).
fn wrong_code(secret: &str) -> String {
    let now = unix_now();
    let near: Vec<String> = (0..=4)
        .map(|i| totp_code_at(secret, now + i * 30 - 60))
        .collect();
    (0..)
        .map(|n| format!("{n:06}"))
        .find(|c| !near.contains(c))
        .unwrap()
}

/// `POST /account/two-factor/totp/confirm`: a stale session is refused before its code is
/// looked at (its guesses do not count against the user); a fresh one has 5 wrong codes,
/// then `429 TooManyAttempts`, even for the right code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn totp_confirm_guesses_are_limited_and_a_stale_session_checks_no_code() {
    let demo = Demo::start("");
    let db = demo.db().await;
    let mut browser = Browser::new(&demo);
    assert_signed_in(&browser.sign_in().await, &browser);
    let id = db.get_user_by_email(DEMO_EMAIL).await.unwrap().unwrap().id;
    let csrf = browser.csrf().await;
    let started = browser
        .post_json("/account/two-factor/totp", json!({"csrfToken": csrf}))
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    let secret = started.json()["secret"].as_str().unwrap().to_owned();
    let confirm = "/account/two-factor/totp/confirm";

    demo.age_sign_in(&id).await;
    let right = totp_code_at(&secret, unix_now());
    let mut codes = vec![wrong_code(&secret); 7];
    codes.push(right);
    for code in codes {
        let answer = browser
            .post_json(confirm, json!({"csrfToken": csrf, "code": code}))
            .await;
        check_refused(&answer, Refused::Json, "stale confirm");
    }
    let stored = db.get_two_factor(&id).await.unwrap().unwrap();
    assert!(stored.totp_confirmed_at.is_none());

    // Signed in again: a new session starts its own secret, and its guesses count.
    assert_signed_in(&browser.sign_in().await, &browser);
    let csrf = browser.csrf().await;
    let started = browser
        .post_json("/account/two-factor/totp", json!({"csrfToken": csrf}))
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    let secret = started.json()["secret"].as_str().unwrap().to_owned();
    let mut seen = Vec::new();
    for _ in 0..6 {
        let answer = browser
            .post_json(
                confirm,
                json!({"csrfToken": csrf, "code": wrong_code(&secret)}),
            )
            .await;
        seen.push((answer.status, answer.json()["error"].clone()));
    }
    let invalid = (StatusCode::BAD_REQUEST, json!("InvalidCode"));
    let locked = (StatusCode::TOO_MANY_REQUESTS, json!("TooManyAttempts"));
    assert_eq!(
        seen,
        [
            invalid.clone(),
            invalid.clone(),
            invalid.clone(),
            invalid.clone(),
            invalid,
            locked.clone()
        ]
    );
    // Locked: even the right code is not checked.
    let right = totp_code_at(&secret, unix_now());
    let answer = browser
        .post_json(confirm, json!({"csrfToken": csrf, "code": right}))
        .await;
    assert_eq!((answer.status, answer.json()["error"].clone()), locked);
    assert!(answer.json().get("recoveryCodes").is_none());
    let stored = db.get_two_factor(&id).await.unwrap().unwrap();
    assert!(stored.totp_confirmed_at.is_none());
    drop(demo);
}
