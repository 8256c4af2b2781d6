//! Shared helpers for the per-action integration tests: a config like Auth.js's test utils
//! (`secret: "secret"`, `trustHost: true`, base path `/auth`), requests to
//! `https://authjs.test`, and a service driven with `tower::ServiceExt::oneshot`.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use authcore::callbacks::{
    Events, RateLimitedEvent, SecurityChangeEvent, SessionEvent, SignInEvent, SignOutEvent,
    TwoFactorEvent,
};
use authcore::error::BoxError;
use authcore::logger::{Logger, WarningCode};
use authcore::providers::{AuthorizeError, CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfigBuilder, AuthError, User};
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tower::ServiceExt;

mod adapters;
pub use adapters::LimitedAdapter;

pub const ORIGIN: &str = "https://authjs.test";
pub const SESSION_COOKIE: &str = "__Secure-authjs.session-token";
pub const CSRF_COOKIE: &str = "__Host-authjs.csrf-token";
pub const CALLBACK_COOKIE: &str = "__Secure-authjs.callback-url";
pub const SECRET: &str = "secret-xxxxxxxxxxxxxxxxxxxxxxxxx";

/// Everything the logger and events saw.
#[derive(Default, Clone)]
pub struct Recorder {
    pub errors: Arc<Mutex<Vec<(String, String)>>>,
    pub warnings: Arc<Mutex<Vec<WarningCode>>>,
    pub events: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Recorder {
    /// Logged error messages with their source chains.
    pub fn errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap()
            .iter()
            .map(|(_, m)| m.clone())
            .collect()
    }
    pub fn error_types(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap()
            .iter()
            .map(|(t, _)| t.clone())
            .collect()
    }
    pub fn event_names(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }
    pub fn event(&self, name: &str) -> Option<Value> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

impl Logger for Recorder {
    fn error(&self, error: &AuthError) {
        self.errors
            .lock()
            .unwrap()
            .push((error.error_type().to_owned(), error_chain(error)));
    }
    fn warn(&self, code: WarningCode) {
        self.warnings.lock().unwrap().push(code);
    }
}

#[authcore::async_trait]
impl Events for Recorder {
    async fn sign_in(&self, m: SignInEvent<'_>) -> Result<(), BoxError> {
        self.events.lock().unwrap().push((
            "signIn".into(),
            serde_json::json!({"user": m.user, "account": m.account, "isNewUser": m.is_new_user}),
        ));
        Ok(())
    }
    async fn create_user(&self, user: &authcore::User) -> Result<(), BoxError> {
        self.events
            .lock()
            .unwrap()
            .push(("createUser".into(), serde_json::json!({ "user": user })));
        Ok(())
    }
    async fn update_user(&self, user: &authcore::User) -> Result<(), BoxError> {
        self.events
            .lock()
            .unwrap()
            .push(("updateUser".into(), serde_json::json!({ "user": user })));
        Ok(())
    }
    async fn sign_out(&self, m: SignOutEvent<'_>) -> Result<(), BoxError> {
        let v = match m {
            SignOutEvent::Token(t) => serde_json::json!({ "token": t }),
            SignOutEvent::Session(s) => serde_json::json!({ "session": s }),
            _ => Value::Null,
        };
        self.events.lock().unwrap().push(("signOut".into(), v));
        Ok(())
    }
    async fn session(&self, m: SessionEvent<'_>) -> Result<(), BoxError> {
        self.events.lock().unwrap().push((
            "session".into(),
            serde_json::json!({"session": m.session, "token": m.token}),
        ));
        Ok(())
    }
    async fn two_factor(&self, m: TwoFactorEvent<'_>) -> Result<(), BoxError> {
        self.events.lock().unwrap().push((
            "twoFactor".into(),
            serde_json::json!({"userId": m.user_id, "action": m.action}),
        ));
        Ok(())
    }
    async fn security_change(&self, m: SecurityChangeEvent<'_>) -> Result<(), BoxError> {
        self.events.lock().unwrap().push((
            "securityChange".into(),
            serde_json::json!({"userId": m.user_id, "change": m.change.name()}),
        ));
        Ok(())
    }
    async fn rate_limited(&self, m: RateLimitedEvent<'_>) -> Result<(), BoxError> {
        self.events.lock().unwrap().push((
            "rateLimited".into(),
            serde_json::json!({
                "limit": m.limit,
                "identifier": m.identifier,
                "client": m.client,
                "retryAfter": m.retry_after.as_secs(),
            }),
        ));
        Ok(())
    }
}

/// `username=demo&password=pw` signs in; `throw` raises a plain error; `custom` raises
/// `CredentialsSignin` with code `custom`.
pub fn credentials() -> CredentialsProvider {
    CredentialsProvider::new()
        .field("username", CredentialField::new("Username"))
        .field(
            "password",
            CredentialField::new("Password").input_type("password"),
        )
        .authorize(|c, _req| async move {
            let get = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
            match get("username").as_deref() {
                Some("throw") => Err(AuthorizeError::Other("database down".into())),
                Some("custom") => Err(AuthorizeError::credentials_signin("custom")),
                Some("demo") if get("password").as_deref() == Some("pw") => Ok(Some(
                    User::with_id("1")
                        .name("Demo User")
                        .email("demo@example.com")
                        .image("https://example.com/demo.png"),
                )),
                _ => Ok(None),
            }
        })
}

pub fn builder() -> AuthConfigBuilder {
    authcore::AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .provider(credentials())
}

pub fn auth_with(b: AuthConfigBuilder) -> (Auth, Recorder) {
    let rec = Recorder::default();
    let auth = Auth::new(b.logger(rec.clone()).events(rec.clone()).build().unwrap());
    (auth, rec)
}

pub fn auth() -> (Auth, Recorder) {
    auth_with(builder())
}

/// A parsed response.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl TestResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
    pub fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).unwrap()
    }
    pub fn location(&self) -> Option<&str> {
        self.headers.get("location").map(|v| v.to_str().unwrap())
    }
    pub fn set_cookies(&self) -> Vec<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    }
    /// The raw (still percent-encoded) value set for `name`, if any.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.set_cookies().iter().find_map(|c| {
            let (nv, _) = c.split_once(';').unwrap_or((c, ""));
            let (n, v) = nv.split_once('=')?;
            (n == name).then(|| v.to_owned())
        })
    }
    pub fn set_cookie_header(&self, name: &str) -> Option<String> {
        self.set_cookies()
            .into_iter()
            .find(|c| c.starts_with(&format!("{name}=")))
    }
}

pub async fn send(auth: &Auth, req: Request<Full<Bytes>>) -> TestResponse {
    let auth = auth.clone();
    let svc = tower::service_fn(move |req: Request<Full<Bytes>>| {
        let auth = auth.clone();
        async move { Ok::<_, std::convert::Infallible>(auth.handle(req).await) }
    });
    let resp: Response<_> = svc.oneshot(req).await.unwrap();
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    TestResponse {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// `GET <path>` with this `Cookie` header (a page of a signed-in browser).
pub async fn page_at(auth: &Auth, cookie: &str, path: &str) -> TestResponse {
    send(
        auth,
        get(path).header("cookie", cookie).body(empty()).unwrap(),
    )
    .await
}

/// The page a form post redirected to, with this `Cookie` header.
pub async fn follow(auth: &Auth, cookie: &str, r: &TestResponse) -> TestResponse {
    let location = r
        .location()
        .unwrap_or_else(|| panic!("a redirect: {} {}", r.status, r.text()));
    page_at(auth, cookie, location.trim_start_matches(ORIGIN)).await
}

/// A page's form post to `path`: `op` and `fields`, with the CSRF pair's token.
pub async fn post_op(
    auth: &Auth,
    cookie: &str,
    path: &str,
    op: &str,
    fields: &[(&str, &str)],
) -> TestResponse {
    let (_, token) = csrf_pair();
    let mut pairs = vec![("csrfToken", token.as_str()), ("op", op)];
    pairs.extend_from_slice(fields);
    send(
        auth,
        post(path)
            .header("cookie", cookie)
            .body(form(&pairs))
            .unwrap(),
    )
    .await
}

/// `GET /auth/session` with this `Cookie` header.
pub async fn get_session(auth: &Auth, cookie: impl AsRef<str>) -> TestResponse {
    send(
        auth,
        get("/auth/session")
            .header("cookie", cookie.as_ref())
            .body(empty())
            .unwrap(),
    )
    .await
}

/// Query parameter `name` of URL `link`.
pub fn query_param(link: &str, name: &str) -> String {
    url::Url::parse(link)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap()
}

pub fn url(path: &str) -> String {
    format!("{ORIGIN}{path}")
}

pub fn get(path: &str) -> http::request::Builder {
    Request::get(url(path))
}

pub fn post(path: &str) -> http::request::Builder {
    Request::post(url(path)).header("content-type", "application/x-www-form-urlencoded")
}

pub fn empty() -> Full<Bytes> {
    Full::new(Bytes::new())
}

pub fn form(pairs: &[(&str, &str)]) -> Full<Bytes> {
    let s = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    Full::new(Bytes::from(s))
}

/// A valid CSRF cookie header value and its token.
pub fn csrf_pair() -> (String, String) {
    let token = "a".repeat(64);
    let cookie = authcore::csrf::csrf_cookie_value(&token, SECRET);
    (
        format!("{CSRF_COOKIE}={}", cookie.replace('|', "%7C")),
        token,
    )
}

/// A session cookie header for `claims`.
pub fn session_cookie(auth: &Auth, claims: Value) -> String {
    let token = auth
        .config()
        .jwt()
        .encode(claims.as_object().unwrap(), SESSION_COOKIE, 3600)
        .unwrap();
    format!("{SESSION_COOKIE}={token}")
}

pub fn assert_no_cache(r: &TestResponse) {
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    assert_eq!(r.headers["expires"], "0");
    assert_eq!(r.headers["pragma"], "no-cache");
}

/// Collects what the default `tracing` logger ([`authcore::logger::TracingLogger`]) writes,
/// one line per event (`message` plus the other fields), for the current thread only.
///
/// Use from a current-thread runtime (`#[tokio::test]`): `let (_guard, lines) =
/// TracingCapture::install();`, then read `lines.lock()`.
#[derive(Clone, Default)]
pub struct TracingCapture {
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl TracingCapture {
    /// Installs a capture as this thread's default subscriber until the guard drops.
    pub fn install() -> (tracing::subscriber::DefaultGuard, Arc<Mutex<Vec<String>>>) {
        // With a single registered dispatcher, tracing computes a callsite's interest from
        // the default of whichever thread hits it first (often "none" in a parallel test):
        // a second, permanent dispatcher makes it ask every registered one instead.
        static SECOND: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
        SECOND.get_or_init(|| tracing::Dispatch::new(TracingCapture::default()));
        let capture = TracingCapture::default();
        let lines = capture.lines.clone();
        (tracing::subscriber::set_default(capture), lines)
    }
}

struct LineVisitor(String);

impl tracing::field::Visit for LineVisitor {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        } else {
            self.0.push_str(&format!("{}={value:?}", field.name()));
        }
    }
}

impl tracing::Subscriber for TracingCapture {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        // Never cache "always": other test threads have no subscriber.
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut v = LineVisitor(event.metadata().level().to_string());
        event.record(&mut v);
        self.lines.lock().unwrap().push(v.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Asserts that `location` (absolute or relative) resolves to a URL on [`ORIGIN`].
pub fn assert_on_origin(location: &str, context: &str) {
    let resolved = url::Url::parse(ORIGIN).unwrap().join(location).unwrap();
    assert_eq!(
        resolved.origin().ascii_serialization(),
        ORIGIN,
        "{context}: {location:?} leaves the origin"
    );
}

/// The percent-decoded value of a `Set-Cookie` for `name`.
pub fn decoded_cookie(r: &TestResponse, name: &str) -> Option<String> {
    r.cookie(name).map(|v| {
        percent_encoding::percent_decode_str(&v)
            .decode_utf8()
            .unwrap()
            .into_owned()
    })
}

/// The magic-link mails an [`outbox_provider`] has "sent".
pub type Outbox = Arc<Mutex<Vec<authcore::providers::email::VerificationRequest>>>;

/// An email provider that keeps its mails in `outbox`.
pub fn outbox_provider(outbox: &Outbox) -> authcore::providers::email::EmailProvider {
    let outbox = outbox.clone();
    authcore::providers::email::EmailProvider::new("Auth <no-reply@example.com>")
        .send_verification_request(move |r| {
            let outbox = outbox.clone();
            async move {
                outbox.lock().unwrap().push(r);
                Ok(())
            }
        })
}

/// `POST /auth/signin/email` for `email` with a valid CSRF pair.
pub async fn ask_for_magic_link(auth: &Auth, email: &str) -> TestResponse {
    let (csrf, token) = csrf_pair();
    send(
        auth,
        post("/auth/signin/email")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", &token), ("email", email)]))
            .unwrap(),
    )
    .await
}

/// Asks for a magic link to `email` and returns the link's URL from `outbox`.
pub async fn magic_link_url(auth: &Auth, outbox: &Outbox, email: &str) -> String {
    let r = ask_for_magic_link(auth, email).await;
    assert_eq!(r.status, 302, "{}", r.text());
    outbox.lock().unwrap().pop().unwrap().url
}

/// Mails and notices a [`Mailbox::provider`] "sent".
#[derive(Clone, Default)]
pub struct Mailbox {
    pub links: Outbox,
    pub notices: Arc<Mutex<Vec<authcore::providers::email::SecurityNotice>>>,
}

impl Mailbox {
    /// An email provider that keeps its links and notices here.
    pub fn provider(&self) -> authcore::providers::email::EmailProvider {
        let notices = self.notices.clone();
        outbox_provider(&self.links).send_security_notice(move |n| {
            let notices = notices.clone();
            async move {
                notices.lock().unwrap().push(n);
                Ok(())
            }
        })
    }

    /// The last link mailed to `to`, which must be for `purpose`.
    pub fn last(&self, to: &str, purpose: authcore::providers::email::LinkPurpose) -> String {
        let links = self.links.lock().unwrap();
        let mail = links
            .iter()
            .rev()
            .find(|m| m.identifier == to)
            .unwrap_or_else(|| panic!("no mail to {to}"));
        assert_eq!(mail.purpose, purpose, "the mail to {to}");
        mail.url.clone()
    }

    pub fn count(&self) -> usize {
        self.links.lock().unwrap().len()
    }
}

/// A form post to `<basePath>/password/<step>` with a valid CSRF pair.
pub async fn post_password_step(auth: &Auth, step: &str, fields: &[(&str, &str)]) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let mut pairs = vec![("csrfToken", token.as_str())];
    pairs.extend_from_slice(fields);
    send(
        auth,
        post(&format!("/auth/password/{step}"))
            .header("cookie", csrf)
            .body(form(&pairs))
            .unwrap(),
    )
    .await
}

/// `POST /auth/signout` with session cookie value `token` and a valid CSRF pair.
pub async fn sign_out_session(auth: &Auth, token: &str) -> TestResponse {
    let (csrf, csrf_token) = csrf_pair();
    send(
        auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}={token}; {csrf}"))
            .body(form(&[("csrfToken", &csrf_token)]))
            .unwrap(),
    )
    .await
}

/// `POST /auth/callback/credentials` with a valid CSRF pair and `fields`.
pub async fn post_credentials(auth: &Auth, fields: &[(&str, &str)]) -> TestResponse {
    post_credentials_to(auth, "credentials", fields).await
}

/// `POST /auth/callback/<provider>` with a valid CSRF pair and `fields`.
pub async fn post_credentials_to(
    auth: &Auth,
    provider: &str,
    fields: &[(&str, &str)],
) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let mut pairs = vec![("csrfToken", token.as_str())];
    pairs.extend_from_slice(fields);
    send(
        auth,
        post(&format!("/auth/callback/{provider}"))
            .header("cookie", csrf)
            .body(form(&pairs))
            .unwrap(),
    )
    .await
}

pub use crate::totp::{totp_code_at, unix_now};

/// The TOTP key a two-factor or account page shows as text.
pub fn totp_secret_in_page(html: &str) -> String {
    html.split(r#"id="totp-secret" type="text" readonly value=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

/// A session of `user_id` whose sign-in was `age` ago with the methods `amr` (`mfa` for a
/// proven second factor): its cookie header and what `Auth::current_session` reads from
/// it. A JWT, or with database sessions a stored session whose recorded sign-in is aged.
pub async fn session_of(
    auth: &Auth,
    db: &dyn authcore::adapter::Adapter,
    user_id: &str,
    age: std::time::Duration,
    amr: &[&str],
) -> (String, authcore::account::CurrentSession) {
    let auth_time = time::OffsetDateTime::now_utc().unix_timestamp() - age.as_secs() as i64;
    let cookie = if auth.config().session_strategy() == authcore::SessionStrategy::Database {
        let token = format!("session-{user_id}-{auth_time}-{}", amr.join("-"));
        db.create_session(authcore::adapter::AdapterSession {
            session_token: token.clone(),
            user_id: user_id.to_owned(),
            expires: time::OffsetDateTime::now_utc() + time::Duration::hours(1),
        })
        .await
        .unwrap();
        let amr = amr.iter().map(|m| (*m).to_owned()).collect();
        db.session_sign_in()
            .unwrap()
            .record_session_sign_in(&token, &authcore::SignInInfo::new(amr, Some(auth_time)))
            .await
            .unwrap();
        format!("{SESSION_COOKIE}={token}")
    } else {
        session_cookie(
            auth,
            serde_json::json!({ "sub": user_id, "auth_time": auth_time, "amr": amr }),
        )
    };
    let mut headers = HeaderMap::new();
    headers.insert(http::header::COOKIE, cookie.parse().unwrap());
    let me = auth
        .current_session(&url("/auth/session").parse().unwrap(), &headers)
        .await
        .expect("the session reads back");
    (cookie, me)
}

/// A session of `user_id` that signed in with a password just now.
pub async fn fresh_session(
    auth: &Auth,
    db: &dyn authcore::adapter::Adapter,
    user_id: &str,
) -> authcore::account::CurrentSession {
    session_of(auth, db, user_id, std::time::Duration::ZERO, &["pwd"])
        .await
        .1
}

/// Stores user `email` (address verified when `verified`): its id.
pub async fn stored_user(
    db: &dyn authcore::adapter::Adapter,
    email: &str,
    verified: bool,
) -> String {
    db.create_user(authcore::adapter::NewUser {
        email: Some(email.into()),
        email_verified: verified.then(time::OffsetDateTime::now_utc),
        ..authcore::adapter::NewUser::default()
    })
    .await
    .unwrap()
    .id
}

/// Gives user `user_id` the passkey `credential_id` of WebAuthn provider `provider`: its
/// authenticator and the account the provider links for it.
pub async fn add_passkey(
    db: &dyn authcore::adapter::Adapter,
    user_id: &str,
    provider: &str,
    credential_id: &str,
) {
    db.create_authenticator(authcore::types::Authenticator {
        credential_id: credential_id.into(),
        user_id: Some(user_id.to_owned()),
        provider_account_id: credential_id.into(),
        credential_public_key: "pk".into(),
        counter: 0,
        credential_device_type: "multiDevice".into(),
        credential_backed_up: true,
        transports: None,
        name: None,
    })
    .await
    .unwrap();
    let mut account = authcore::types::Account::new(
        authcore::types::ProviderType::Webauthn,
        provider,
        credential_id,
    );
    account.user_id = Some(user_id.to_owned());
    db.link_account(account).await.unwrap();
}

/// Every record of `auth`'s stored audit log, oldest first.
pub async fn audit_trail(auth: &Auth) -> Vec<authcore::adapter::AuditRecord> {
    auth.audit_records(&authcore::adapter::AuditQuery {
        ascending: true,
        limit: 1000,
        ..authcore::adapter::AuditQuery::default()
    })
    .await
    .unwrap()
}
