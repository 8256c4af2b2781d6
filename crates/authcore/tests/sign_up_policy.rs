//! Who may become a user by signing in (`AuthConfigBuilder::sign_up`): magic links and an
//! OAuth provider (the real OpenID provider) under a closed policy and a domain list, and a
//! link sent under an open policy opened after it closed.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::oauth_flow::{Jar, sign_in};
use crate::oidc_provider::OidcProvider;
use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::providers::OAuthProvider;
use authcore::{Auth, SignUpPolicy};

fn email_auth(db: &MemoryAdapter, outbox: &Outbox, policy: SignUpPolicy) -> Auth {
    auth_with(
        builder()
            .provider(outbox_provider(outbox))
            .adapter(db.clone())
            .sign_up(policy),
    )
    .0
}

const VERIFY_REQUEST: &str = "https://authjs.test/auth/verify-request?provider=email&type=email";

/// Known addresses get their link; unknown ones get the same answer and no mail.
#[tokio::test]
async fn closed_sends_links_to_known_addresses_only_and_answers_alike() {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    stored_user(&db, "member@example.com", true).await;
    let auth = email_auth(&db, &outbox, SignUpPolicy::Closed);
    let known = ask_for_magic_link(&auth, "member@example.com").await;
    assert_eq!(known.location(), Some(VERIFY_REQUEST));
    assert_eq!(outbox.lock().unwrap().len(), 1);
    let stranger = ask_for_magic_link(&auth, "stranger@evil.test").await;
    assert_eq!(stranger.status, known.status);
    assert_eq!(stranger.location(), known.location());
    assert_eq!(stranger.set_cookies().len(), known.set_cookies().len());
    assert_eq!(outbox.lock().unwrap().len(), 1, "no mail to the stranger");
    assert!(
        db.get_user_by_email("stranger@evil.test")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_domain_list_lets_its_addresses_sign_up() {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let policy = SignUpPolicy::domains(["example.com"]).unwrap();
    let auth = email_auth(&db, &outbox, policy);
    for (email, mailed) in [
        ("new@example.com", true),
        ("new@sub.example.com", false),
        ("example.com@evil.test", false),
    ] {
        let before = outbox.lock().unwrap().len();
        assert_eq!(
            ask_for_magic_link(&auth, email).await.location(),
            Some(VERIFY_REQUEST)
        );
        assert_eq!(
            outbox.lock().unwrap().len() - before,
            usize::from(mailed),
            "{email}"
        );
    }
    let url = outbox.lock().unwrap().pop().unwrap().url;
    let r = send(&auth, http::Request::get(&url).body(empty()).unwrap()).await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
    assert!(
        db.get_user_by_email("new@example.com")
            .await
            .unwrap()
            .is_some()
    );
}

/// A link mailed while sign-ups were open makes no user once they are closed.
#[tokio::test]
async fn a_link_from_before_the_policy_closed_makes_no_user() {
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let open = email_auth(&db, &outbox, SignUpPolicy::Open);
    let url = magic_link_url(&open, &outbox, "late@example.com").await;
    let closed = email_auth(&db, &outbox, SignUpPolicy::Closed);
    let r = send(&closed, http::Request::get(&url).body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=AccessDenied")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(
        db.get_user_by_email("late@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

fn oauth_auth(op: &OidcProvider, db: &MemoryAdapter, policy: SignUpPolicy) -> Auth {
    Auth::new(
        authcore::AuthConfig::builder()
            .secret("sign-up-secret-xxxxxxxxxxxxxxxxxx")
            .trust_host(true)
            .adapter(db.clone())
            .sign_up(policy)
            .provider(
                OAuthProvider::oidc("oidc", "oidc")
                    .issuer(op.issuer.clone())
                    .client_id("client-basic")
                    .client_secret("secret-basic"),
            )
            .build()
            .unwrap(),
    )
}

/// A provider account that is no user yet is refused under a closed policy and a domain
/// list it is not on; an existing user still signs in.
#[tokio::test]
async fn oauth_sign_ups_follow_the_policy() {
    let op = OidcProvider::start().await;
    for (policy, signs_up) in [
        (SignUpPolicy::Closed, false),
        (SignUpPolicy::domains(["elsewhere.example"]).unwrap(), false),
        (SignUpPolicy::domains(["example.com"]).unwrap(), true),
    ] {
        let db = MemoryAdapter::new();
        let auth = oauth_auth(&op, &db, policy.clone());
        let mut jar = Jar::default();
        let r = sign_in(&auth, &op, "oidc", &mut jar).await;
        let user = db.get_user_by_account("oidc", "user-1").await.unwrap();
        assert_eq!(user.is_some(), signs_up, "{policy:?}");
        if !signs_up {
            assert_eq!(
                r.location.as_deref(),
                Some("http://localhost:3000/auth/error?error=AccessDenied"),
                "{policy:?}"
            );
            assert!(!jar.0.contains_key("authjs.session-token"), "{policy:?}");
            assert!(
                db.get_user_by_email("user-1@example.com")
                    .await
                    .unwrap()
                    .is_none()
            );
        }
    }
    // A returning user is no sign-up: it signs in under a closed policy.
    let db = MemoryAdapter::new();
    sign_in(
        &oauth_auth(&op, &db, SignUpPolicy::Open),
        &op,
        "oidc",
        &mut Jar::default(),
    )
    .await;
    let auth = oauth_auth(&op, &db, SignUpPolicy::Closed);
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert!(
        jar.0.contains_key("authjs.session-token"),
        "{:?}",
        r.location
    );
}
