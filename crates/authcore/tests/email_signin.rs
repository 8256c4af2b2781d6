//! Email (magic link) sign-in with an adapter (spec §7, §10.3 email branch).
#![allow(clippy::unwrap_used)]
mod common;
use std::sync::{Arc, Mutex};

use authcore::adapter::{Adapter, MemoryAdapter, NewUser, VerificationToken};
use authcore::providers::{EmailProvider, VerificationRequest};
use authcore::{AuthConfig, ConfigError};
use common::*;
use sha2::Digest;

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

fn email_provider(outbox: &Outbox) -> EmailProvider {
    let outbox = outbox.clone();
    EmailProvider::new("Auth <no-reply@example.com>").send(move |r| {
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
        .secret("s")
        .provider(email_provider(&outbox))
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::MissingAdapter);
    let e = AuthConfig::builder()
        .secret("s")
        .provider(EmailProvider::new("a@b.c"))
        .adapter(MemoryAdapter::new())
        .build()
        .unwrap_err();
    assert!(matches!(e, ConfigError::MissingEmailSender { .. }));
}
