//! Email (magic link) sign-in with an adapter (Auth.js `lib/actions/signin/send-token.ts`,
//! and the email branch of `lib/actions/callback/handle-login.ts`).
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::{Adapter, MemoryAdapter, NewUser, VerificationToken};
use authcore::providers::email::{EmailProvider, VerificationRequest};
use authcore::{AuthConfig, ConfigError};
use sha2::Digest;

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

fn email_provider(outbox: &Outbox) -> EmailProvider {
    let outbox = outbox.clone();
    EmailProvider::new("Auth <no-reply@example.com>").send_verification_request(move |r| {
        let outbox = outbox.clone();
        async move {
            outbox.lock().unwrap().push(r);
            Ok(())
        }
    })
}

fn setup() -> (authcore::Auth, Recorder, MemoryAdapter, Outbox) {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let (auth, rec) = auth_with(
        builder()
            .provider(email_provider(&outbox))
            .adapter(db.clone()),
    );
    (auth, rec, db, outbox)
}

async fn request_link(auth: &authcore::Auth, email: &str) -> TestResponse {
    let (csrf, token) = csrf_pair();
    send(
        auth,
        post("/auth/signin/email")
            .header("cookie", csrf)
            .body(form(&[
                ("csrfToken", &token),
                ("email", email),
                ("callbackUrl", "/inbox"),
            ]))
            .unwrap(),
    )
    .await
}

async fn open_link(auth: &authcore::Auth, url: &str) -> TestResponse {
    let (csrf, _) = csrf_pair();
    send(
        auth,
        http::Request::get(url)
            .header("cookie", csrf)
            .body(empty())
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn link_signs_in_a_new_user_once() {
    let (auth, rec, db, outbox) = setup();
    let r = request_link(&auth, " Ada@Example.com ").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/verify-request?provider=email&type=email")
    );
    let sent = outbox.lock().unwrap()[0].clone();
    assert_eq!(sent.identifier, "ada@example.com");
    assert_eq!(sent.from, "Auth <no-reply@example.com>");
    assert_eq!(sent.token.len(), 64);
    assert!(sent.url.starts_with("https://authjs.test/auth/callback/email?callbackUrl=https%3A%2F%2Fauthjs.test%2Finbox&token="));
    // Only the hash is stored.
    assert!(
        db.use_verification_token("ada@example.com", &sent.token)
            .await
            .unwrap()
            .is_none()
    );

    let r = open_link(&auth, &sent.url).await;
    assert_eq!(r.location(), Some("https://authjs.test/inbox"));
    let session = r.cookie(SESSION_COOKIE).unwrap();
    assert_eq!(session.len(), 36, "database session");
    let user = db
        .get_user_by_email("ada@example.com")
        .await
        .unwrap()
        .unwrap();
    assert!(user.email_verified.is_some());
    assert_eq!(
        db.get_session_and_user(&session)
            .await
            .unwrap()
            .unwrap()
            .1
            .id,
        user.id
    );
    assert!(rec.event_names().contains(&"signIn".to_owned()));
    assert!(
        db.get_user_by_account("email", "ada@example.com")
            .await
            .unwrap()
            .is_none(),
        "email sign-in never links an account"
    );

    // The same link again: Verification (403 page).
    let r = open_link(&auth, &sent.url).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    let page = send(
        &auth,
        get("/auth/error?error=Verification").body(empty()).unwrap(),
    )
    .await;
    assert_eq!(page.status, 403);
}

#[tokio::test]
async fn existing_user_is_verified_not_recreated() {
    let (auth, _, db, outbox) = setup();
    let existing = db
        .create_user(NewUser {
            email: Some("bo@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    request_link(&auth, "bo@example.com").await;
    let url = outbox.lock().unwrap()[0].url.clone();
    let r = open_link(&auth, &url).await;
    assert_eq!(r.status, 302);
    let user = db
        .get_user_by_email("bo@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.id, existing.id);
    assert!(user.email_verified.is_some());
}

#[tokio::test]
async fn expired_mismatched_and_forged_links_are_refused() {
    let (auth, _, db, _) = setup();
    let hash = |t: &str| hex::encode(sha2::Sha256::digest(format!("{t}{SECRET}")));
    db.create_verification_token(VerificationToken {
        identifier: "cy@example.com".into(),
        token: hash("old"),
        expires: time::OffsetDateTime::now_utc() - time::Duration::minutes(1),
    })
    .await
    .unwrap();
    let r = open_link(
        &auth,
        &url("/auth/callback/email?token=old&email=cy%40example.com"),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    db.create_verification_token(VerificationToken {
        identifier: "cy@example.com".into(),
        token: hash("fresh"),
        expires: time::OffsetDateTime::now_utc() + time::Duration::minutes(10),
    })
    .await
    .unwrap();
    let r = open_link(
        &auth,
        &url("/auth/callback/email?token=fresh&email=evil%40example.com"),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    let r = open_link(
        &auth,
        &url("/auth/callback/email?token=forged&email=cy%40example.com"),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    let r = open_link(&auth, &url("/auth/callback/email?email=cy%40example.com")).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
}

#[tokio::test]
async fn invalid_addresses_and_csrf() {
    let (auth, _, _, outbox) = setup();
    for bad in ["", "foo@evil.com@example.com", "\"x\"@example.com"] {
        let r = request_link(&auth, bad).await;
        assert_eq!(
            r.location(),
            Some("https://authjs.test/auth/error?error=Configuration"),
            "{bad}"
        );
    }
    let r = send(
        &auth,
        post("/auth/signin/email")
            .body(form(&[("email", "a@b.c")]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(outbox.lock().unwrap().is_empty());
    let page = send(
        &auth,
        get("/auth/signin?email=pre%40fill.ed")
            .body(empty())
            .unwrap(),
    )
    .await;
    let html = page.text();
    assert!(
        html.contains(r#"action="https://authjs.test/auth/signin/email""#)
            && html.contains(r#"type="email""#)
    );
    assert!(html.contains(r#"value="pre@fill.ed""#));
}

#[test]
fn configuration_checks() {
    let outbox = Outbox::default();
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(email_provider(&outbox))
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::MissingAdapter);
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(EmailProvider::new("a@b.c"))
        .adapter(MemoryAdapter::new())
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::MissingEmailSender { .. }));
}

#[tokio::test]
async fn hostile_addresses_send_nothing_and_store_nothing() {
    let (auth, rec, db, outbox) = setup();
    let long = format!("{}@example.com", "a".repeat(300));
    let huge = "b".repeat(10_000);
    let mut refused = 0;
    for bad in [
        "victim@example.com\r\nBcc: everyone@example.com",
        "victim@example.com\nX-Injected: 1",
        "vic tim@example.com",
        "<victim@example.com>",
        "victim\u{FF20}evil.com@example.com",
        long.as_str(),
        huge.as_str(),
        "   ",
    ] {
        let r = request_link(&auth, bad).await;
        assert_eq!(
            r.location(),
            Some("https://authjs.test/auth/error?error=Configuration"),
            "{:?}",
            &bad[..bad.len().min(60)]
        );
        refused += 1;
    }
    assert!(outbox.lock().unwrap().is_empty());
    assert_eq!(db.verification_token_count(), 0);
    // Each refusal is logged, without the address.
    let logged = rec.errors();
    assert!(!logged.is_empty());
    assert!(logged.len() >= refused, "one line per refusal: {logged:?}");
    assert!(logged.iter().all(|l| !l.contains("victim")), "{logged:?}");
}

#[tokio::test]
async fn hostile_callback_url_in_the_link_is_not_followed() {
    let (auth, _, _, outbox) = setup();
    request_link(&auth, "user@example.com").await;
    let sent = outbox.lock().unwrap().pop().unwrap();
    // Swap the callbackUrl for another origin: the sign-in still happens, but the redirect
    // stays on the app.
    let url = url::Url::parse(&sent.url).unwrap();
    let mut tampered = url.clone();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == "callbackUrl" {
                "https://evil.example/steal".to_owned()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    tampered.query_pairs_mut().clear().extend_pairs(pairs);
    let r = open_link(&auth, tampered.as_str()).await;
    assert_eq!(r.location(), Some("https://authjs.test"));
    assert!(r.cookie(SESSION_COOKIE).is_some());
}

#[tokio::test]
async fn failed_sending_leaves_no_usable_link() {
    let db = MemoryAdapter::new();
    let attempted = Outbox::default();
    let seen = attempted.clone();
    let failing = EmailProvider::new("a@example.com").send_verification_request(move |r| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(r);
            Err("relay down".into())
        }
    });
    let (auth, rec) = auth_with(builder().provider(failing).adapter(db.clone()));
    let r = request_link(&auth, "user@example.com").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(rec.errors().iter().any(|l| l.contains("relay down")));
    assert_eq!(db.verification_token_count(), 0);
    let link = attempted.lock().unwrap().pop().unwrap().url;
    let r = open_link(&auth, &link).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
}

#[tokio::test]
async fn custom_normaliser_token_generator_secret_and_theme() {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let theme = authcore::types::Theme {
        brand_color: "#ff0000".into(),
        ..Default::default()
    };
    let provider = email_provider(&outbox)
        .with_id("magic")
        .normalize_identifier(|input| {
            let email = authcore::providers::email::normalize_email(input)?;
            if email.ends_with("@corp.example") {
                Ok(email)
            } else {
                Err(authcore::providers::email::InvalidEmail::Format)
            }
        })
        .generate_verification_token(|| "fixed-token-for-test".to_owned())
        .secret("provider-secret");
    let (auth, _) = auth_with(
        builder()
            .provider(provider)
            .adapter(db.clone())
            .theme(theme.clone()),
    );
    let (csrf, token) = csrf_pair();
    let ask = |email: &'static str| {
        post("/auth/signin/magic")
            .header("cookie", csrf.clone())
            .body(form(&[("csrfToken", &token), ("email", email)]))
            .unwrap()
    };
    let r = send(&auth, ask("someone@gmail.example")).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    let r = send(&auth, ask("Boss@Corp.example")).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/verify-request?provider=magic&type=email")
    );
    let sent = outbox.lock().unwrap().pop().unwrap();
    assert_eq!(sent.identifier, "boss@corp.example");
    assert_eq!(sent.token, "fixed-token-for-test");
    assert_eq!(sent.provider, "magic");
    assert_eq!(sent.theme, theme);
    assert!(sent.default_mail().unwrap().html.contains("#ff0000"));
    // Stored as sha256(token + provider secret).
    let hashed = hex::encode(sha2::Sha256::digest(
        "fixed-token-for-testprovider-secret".as_bytes(),
    ));
    let stored = db
        .use_verification_token("boss@corp.example", &hashed)
        .await
        .unwrap();
    assert!(stored.is_some());
}

/// The `signIn` callback of the first step (Auth.js `lib/actions/signin/send-token.ts`,
/// `sendToken`).
struct EmailGate(Result<authcore::callbacks::SignInOutcome, &'static str>);

#[authcore::async_trait]
impl authcore::callbacks::Callbacks for EmailGate {
    async fn sign_in(
        &self,
        p: authcore::callbacks::SignInParams<'_>,
    ) -> Result<authcore::callbacks::SignInOutcome, authcore::BoxError> {
        assert!(p.email_verification_request);
        let account = p.account.unwrap();
        assert_eq!(account.provider_account_id, "user@example.com");
        assert_eq!(account.provider, "email");
        assert_eq!(p.user.email.as_deref(), Some("user@example.com"));
        self.0.clone().map_err(Into::into)
    }
}

#[tokio::test]
async fn sign_in_callback_decides_before_anything_is_sent() {
    use authcore::callbacks::SignInOutcome;
    for (decision, location) in [
        (
            Ok(SignInOutcome::Deny),
            "https://authjs.test/auth/error?error=AccessDenied",
        ),
        (
            Err("boom"),
            "https://authjs.test/auth/error?error=AccessDenied",
        ),
        (
            Ok(SignInOutcome::Redirect("/wrong".into())),
            "https://authjs.test/wrong",
        ),
        (
            // The redirect callback keeps the user on the app.
            Ok(SignInOutcome::Redirect("http://b/wrong".into())),
            "https://authjs.test",
        ),
    ] {
        let db = MemoryAdapter::new();
        let outbox = Outbox::default();
        let (auth, _) = auth_with(
            builder()
                .provider(email_provider(&outbox))
                .adapter(db.clone())
                .callbacks(EmailGate(decision)),
        );
        let r = request_link(&auth, "User@Example.com").await;
        assert_eq!(r.location(), Some(location));
        assert!(outbox.lock().unwrap().is_empty());
        assert_eq!(db.verification_token_count(), 0);
    }
}

#[tokio::test]
async fn jwt_strategy_new_user_page_and_events() {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let (auth, rec) = auth_with(
        builder()
            .provider(email_provider(&outbox))
            .adapter(db.clone())
            .session_strategy(authcore::config::SessionStrategy::Jwt)
            .pages(authcore::types::PagesOptions {
                new_user: Some("/welcome".into()),
                ..Default::default()
            }),
    );
    request_link(&auth, "new@example.com").await;
    let url = outbox.lock().unwrap().pop().unwrap().url;
    let r = open_link(&auth, &url).await;
    // First sign-in: the newUser page, carrying the callback URL.
    assert_eq!(
        r.location(),
        Some("/welcome?callbackUrl=https%3A%2F%2Fauthjs.test%2Finbox")
    );
    let cookie = r.cookie(SESSION_COOKIE).unwrap();
    assert!(cookie.len() > 100, "a JWT session cookie: {cookie}");
    let session = get_session(&auth, format!("{SESSION_COOKIE}={cookie}"))
        .await
        .json();
    assert_eq!(session["user"]["email"], "new@example.com");
    let events = rec.event_names();
    assert!(events.contains(&"createUser".to_owned()), "{events:?}");
    assert!(events.contains(&"signIn".to_owned()), "{events:?}");
    assert!(rec.event("signIn").unwrap()["isNewUser"] == true);

    // A second link for the same address: an existing user, straight to the callback URL.
    request_link(&auth, "new@example.com").await;
    let url = outbox.lock().unwrap().pop().unwrap().url;
    let r = open_link(&auth, &url).await;
    assert_eq!(r.location(), Some("https://authjs.test/inbox"));
}
