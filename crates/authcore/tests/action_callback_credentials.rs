//! POST /auth/callback/:credentials (Auth.js `providers/credentials.ts` and the credentials
//! branch of `lib/actions/callback/index.ts`, including the cases Auth.js's own tests check).
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::callbacks::{Callbacks, JwtParams, SignInOutcome, SignInParams};
use authcore::jwt::JwtClaims;
use authcore::{BoxError, DangerousOptions, PagesOptions};

/// next-auth 4's `json=true` body field means nothing to Auth.js v5 (only with
/// `next_auth_v4()` does it ask for `{url}` JSON): still a redirect.
#[tokio::test]
async fn a_json_field_in_the_body_is_no_return_redirect() {
    let (auth, _) = auth();
    let r = post_credentials(
        &auth,
        &[("username", "demo"), ("password", "pw"), ("json", "true")],
    )
    .await;
    assert_eq!(r.status, 302);
}

#[tokio::test]
async fn success_sets_session_cookie_and_redirects_to_callback_url() {
    let (auth, rec) = auth();
    let r = post_credentials(
        &auth,
        &[
            ("username", "demo"),
            ("password", "pw"),
            ("callbackUrl", "/dashboard"),
        ],
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("https://authjs.test/dashboard"));
    let token = r.cookie(SESSION_COOKIE).unwrap();
    let claims = auth
        .config()
        .jwt()
        .decode(&token, SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["sub"], "1");
    assert_eq!(claims["name"], "Demo User");
    assert_eq!(claims["email"], "demo@example.com");
    assert_eq!(claims["picture"], "https://example.com/demo.png");
    assert_eq!(
        rec.event("signIn").unwrap()["account"],
        serde_json::json!({"type": "credentials", "provider": "credentials", "providerAccountId": "1"})
    );
    // Cookie order: init cookies (callback-url) before the session cookie.
    let names: Vec<String> = r
        .set_cookies()
        .iter()
        .map(|c| c.split('=').next().unwrap().to_owned())
        .collect();
    assert_eq!(names, [CALLBACK_COOKIE, SESSION_COOKIE]);
}

#[tokio::test]
async fn null_user_redirects_with_credentials_code() {
    let (auth, rec) = auth();
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "wrong")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=CredentialsSignin&code=credentials")
    );
    assert!(r.set_cookies().is_empty());
    assert_eq!(rec.error_types(), ["CredentialsSignin"]);
}

#[tokio::test]
async fn custom_code_and_plain_errors() {
    let (auth, _) = auth_with(builder().dangerous(DangerousOptions {
        skip_csrf_check: true,
        ..Default::default()
    }));
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .body(form(&[("username", "custom")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=CredentialsSignin&code=custom")
    );
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .body(form(&[("username", "throw")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    let r = send(
        &auth,
        post("/auth/callback/credentials").body(form(&[])).unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=CredentialsSignin&code=credentials")
    );
}

#[tokio::test]
async fn custom_sign_in_page_receives_errors() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_in: Some("/login".into()),
        error: Some("/custom/error".into()),
        ..Default::default()
    }));
    let r = post_credentials(&auth, &[("username", "nobody")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/login?error=CredentialsSignin&code=credentials")
    );
    let r = send(
        &auth,
        get("/auth/callback/credentials").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/custom/error?error=Configuration")
    );
}

#[tokio::test]
async fn csrf_is_required() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .body(form(&[("username", "demo"), ("password", "pw")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
}

#[tokio::test]
async fn json_body_works_too() {
    let (auth, _) = auth();
    let (csrf, token) = csrf_pair();
    let body =
        serde_json::json!({"csrfToken": token, "username": "demo", "password": "pw"}).to_string();
    let r = send(
        &auth,
        http::Request::post(url("/auth/callback/credentials"))
            .header("content-type", "application/json")
            .header("cookie", csrf)
            .body(http_body_util::Full::new(body.into()))
            .unwrap(),
    )
    .await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
}

#[tokio::test]
async fn callback_without_provider_and_unknown_provider() {
    let (auth, rec) = auth();
    let r = send(&auth, get("/auth/callback").body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert_eq!(rec.error_types(), ["InvalidProvider"]);
    let r = send(
        &auth,
        get("/auth/callback/invalid-provider")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

#[derive(Clone, Default)]
struct Gate {
    seen: Arc<Mutex<Vec<String>>>,
    outcome: Option<SignInOutcome>,
    fail: bool,
}

#[authcore::async_trait]
impl Callbacks for Gate {
    async fn sign_in(&self, p: SignInParams<'_>) -> Result<SignInOutcome, BoxError> {
        let creds = p.credentials.unwrap();
        self.seen
            .lock()
            .unwrap()
            .push(creds["username"].as_str().unwrap().to_owned());
        assert!(
            creds.contains_key("csrfToken"),
            "authorize/signIn get the whole body"
        );
        if self.fail {
            return Err("boom".into());
        }
        Ok(self.outcome.clone().unwrap_or(SignInOutcome::Allow))
    }
    async fn jwt(&self, mut p: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        assert_eq!(p.trigger, Some(authcore::callbacks::JwtTrigger::SignIn));
        assert_eq!(p.is_new_user, Some(false));
        assert_eq!(p.account.unwrap().provider_account_id, "1");
        p.token.insert("role".into(), "admin".into());
        Ok(Some(p.token))
    }
}

#[tokio::test]
async fn sign_in_callback_decisions() {
    let (auth, _) = auth_with(builder().callbacks(Gate {
        outcome: Some(SignInOutcome::Deny),
        ..Default::default()
    }));
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=AccessDenied")
    );

    let (auth, _) = auth_with(builder().callbacks(Gate {
        fail: true,
        ..Default::default()
    }));
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=AccessDenied")
    );

    for (target, expected) in [
        ("/wrong", "https://authjs.test/wrong"),
        ("https://evil.example/x", "https://authjs.test"),
    ] {
        let (auth, _) = auth_with(builder().callbacks(Gate {
            outcome: Some(SignInOutcome::Redirect(target.into())),
            ..Default::default()
        }));
        let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
        assert_eq!(r.location(), Some(expected));
        assert!(r.cookie(SESSION_COOKIE).is_none());
    }

    let gate = Gate::default();
    let (auth, _) = auth_with(builder().callbacks(gate.clone()));
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    let claims = auth
        .config()
        .jwt()
        .decode(&r.cookie(SESSION_COOKIE).unwrap(), SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["role"], "admin");
    assert_eq!(*gate.seen.lock().unwrap(), ["demo"]);
}

#[tokio::test]
async fn hostile_callback_urls_never_leave_the_origin() {
    let (auth, _) = auth();
    for hostile in [
        "//evil.example",
        "https:evil.example",
        "https://evil.example",
        "javascript:alert(1)",
        "/\\evil.example",
        "\\\\evil.example",
    ] {
        let r = post_credentials(
            &auth,
            &[
                ("username", "demo"),
                ("password", "pw"),
                ("callbackUrl", hostile),
            ],
        )
        .await;
        let loc = r.location().unwrap();
        let u = url::Url::parse(loc).unwrap();
        assert_eq!(
            u.origin().ascii_serialization(),
            "https://authjs.test",
            "{hostile} -> {loc}"
        );
    }
}

/// `?` works in `authorize` on adapter calls (and boxed errors): the error is a
/// `Configuration` answer, logged with its cause.
#[tokio::test]
async fn question_mark_on_an_adapter_error_in_authorize() {
    use authcore::adapter::{Adapter, AdapterError, MemoryAdapter};
    use authcore::providers::{CredentialField, CredentialsProvider};
    let db = MemoryAdapter::new();
    let provider = CredentialsProvider::new()
        .field("username", CredentialField::new("Username"))
        .authorize(move |_, _| {
            let db = db.clone();
            async move {
                // A lookup that fails, as a database outage would.
                let found = db.get_user_by_email("ada@example.com").await?;
                let _: Option<()> = Err(AdapterError::Conflict("store down".into()))?;
                Ok(found.map(|u| authcore::User::with_id(u.id)))
            }
        });
    let (auth, rec) = auth_with(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(provider),
    );
    let r = post_credentials(&auth, &[("username", "ada")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(
        rec.errors().iter().any(|m| m.contains("store down")),
        "{:?}",
        rec.errors()
    );
}
