//! Account management: the ways a user signs in, unlinking accounts and deleting
//! passkeys without removing the last way in, and deleting the user, on the memory adapter
//! (the adapter methods are in the conformance suite every adapter runs).
#![allow(clippy::unwrap_used)]

use crate::common::fresh_session;
use authcore::account::AccountError;
use authcore::adapter::SessionActivityStore;
use authcore::adapter::{Adapter, AdapterSession, MemoryAdapter, NewUser, VerificationToken};
use authcore::providers::{OAuthProvider, WebAuthnProvider, email::EmailProvider};
use authcore::types::{Account, Authenticator, ProviderType};
use authcore::{Auth, AuthConfig};

/// An app with GitHub and Google, and (with `email`) magic links, and passkeys.
fn app(db: &MemoryAdapter, email: bool) -> Auth {
    let oauth = |id: &str| {
        OAuthProvider::oauth(id, id)
            .authorization_url(format!("https://{id}.example/authorize"))
            .token_url(format!("https://{id}.example/token"))
            .userinfo_url(format!("https://{id}.example/userinfo"))
            .client_id("client")
            .client_secret("secret")
    };
    let mut config = AuthConfig::builder()
        .secret("account-management-secret-xxxxxx")
        .trust_host(true)
        .provider(oauth("github"))
        .provider(oauth("google"))
        .provider(WebAuthnProvider::new())
        .adapter(db.clone());
    if email {
        config = config.provider(
            EmailProvider::new("auth@example.com").send_verification_request(|_| async { Ok(()) }),
        );
    }
    Auth::new(config.build().unwrap())
}

/// A user with the given accounts (`provider` names; `passkey:<id>` makes a passkey) and a
/// session.
async fn user(db: &MemoryAdapter, email: &str, methods: &[&str]) -> String {
    let u = db
        .create_user(NewUser {
            email: Some(email.into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    for m in methods {
        let mut account = match m.strip_prefix("passkey:") {
            Some(id) => {
                db.create_authenticator(Authenticator {
                    credential_id: id.into(),
                    user_id: Some(u.id.clone()),
                    provider_account_id: id.into(),
                    credential_public_key: "pk".into(),
                    counter: 0,
                    credential_device_type: "multiDevice".into(),
                    credential_backed_up: true,
                    transports: Some("internal".into()),
                    name: None,
                })
                .await
                .unwrap();
                Account::new(ProviderType::Webauthn, "webauthn", id)
            }
            None => Account::new(ProviderType::Oauth, *m, format!("{m}-{email}")),
        };
        account.user_id = Some(u.id.clone());
        account.access_token = Some("secret-access-token".into());
        db.link_account(account).await.unwrap();
    }
    db.create_session(AdapterSession {
        session_token: format!("session-{email}"),
        user_id: u.id.clone(),
        expires: time::OffsetDateTime::now_utc() + time::Duration::days(1),
    })
    .await
    .unwrap();
    u.id
}

#[tokio::test]
async fn sign_in_methods_list_accounts_passkeys_and_magic_links_without_tokens() {
    let db = MemoryAdapter::new();
    let ada = user(
        &db,
        "ada@example.com",
        &["google", "github", "passkey:cred-1"],
    )
    .await;
    let methods = app(&db, true).sign_in_methods(&ada).await.unwrap();
    let providers: Vec<&str> = methods
        .accounts
        .iter()
        .map(|a| a.provider.as_str())
        .collect();
    assert_eq!(providers, ["github", "google"]);
    assert_eq!(methods.passkeys.len(), 1);
    assert_eq!(methods.passkeys[0].credential_id, "cred-1");
    assert_eq!(methods.email.as_deref(), Some("ada@example.com"));
    assert_eq!(methods.count(), 4);
    let json = serde_json::to_string(&methods).unwrap();
    assert!(!json.contains("secret-access-token"), "{json}");
    assert!(
        json.contains(r#""providerAccountId":"github-ada@example.com""#),
        "{json}"
    );
    // Without an email provider, the address is no way in.
    let methods = app(&db, false).sign_in_methods(&ada).await.unwrap();
    assert_eq!((methods.count(), methods.email), (3, None));
}

#[tokio::test]
async fn the_last_way_to_sign_in_stays() {
    let db = MemoryAdapter::new();
    let auth = app(&db, false);
    let ada = user(
        &db,
        "ada@example.com",
        &["github", "google", "passkey:cred-1"],
    )
    .await;
    let me = fresh_session(&auth, &db, &ada).await;
    auth.unlink_account(&me, "github", "github-ada@example.com")
        .await
        .unwrap();
    auth.delete_passkey(&me, "cred-1").await.unwrap();
    assert!(db.get_authenticator("cred-1").await.unwrap().is_none());
    assert!(
        db.get_account("cred-1", "webauthn")
            .await
            .unwrap()
            .is_none()
    );
    let last = auth
        .unlink_account(&me, "google", "google-ada@example.com")
        .await;
    assert!(
        matches!(last, Err(AccountError::LastSignInMethod)),
        "{last:?}"
    );
    assert!(
        db.get_account("google-ada@example.com", "google")
            .await
            .unwrap()
            .is_some()
    );

    // A passkey alone is kept too; with magic links beside it, it may go.
    let bob = user(&db, "bob@example.com", &["passkey:cred-2"]).await;
    let bob_me = fresh_session(&auth, &db, &bob).await;
    let last = auth.delete_passkey(&bob_me, "cred-2").await;
    assert!(
        matches!(last, Err(AccountError::LastSignInMethod)),
        "{last:?}"
    );
    app(&db, true)
        .delete_passkey(&bob_me, "cred-2")
        .await
        .unwrap();
}

#[tokio::test]
async fn passkeys_are_named_by_their_owner() {
    let db = MemoryAdapter::new();
    let auth = app(&db, true);
    let ada = user(&db, "ada@example.com", &["passkey:cred-1"]).await;
    let bob = user(&db, "bob@example.com", &["passkey:cred-2"]).await;
    auth.rename_passkey(&ada, "cred-1", "  Work laptop ")
        .await
        .unwrap();
    let methods = auth.sign_in_methods(&ada).await.unwrap();
    assert_eq!(methods.passkeys[0].name.as_deref(), Some("Work laptop"));
    for (user, id, name) in [(&ada, "cred-2", "mine now"), (&bob, "cred-1", "mine now")] {
        let r = auth.rename_passkey(user, id, name).await;
        assert!(matches!(r, Err(AccountError::NotFound)), "{r:?}");
    }
    for bad in ["x".repeat(65), "tab\there".to_owned()] {
        let r = auth.rename_passkey(&ada, "cred-1", &bad).await;
        assert!(matches!(r, Err(AccountError::InvalidName)), "{r:?}");
    }
    auth.rename_passkey(&ada, "cred-1", " ").await.unwrap();
    assert_eq!(
        auth.sign_in_methods(&ada).await.unwrap().passkeys[0].name,
        None
    );
}

#[tokio::test]
async fn another_users_account_or_passkey_is_not_found() {
    let db = MemoryAdapter::new();
    let auth = app(&db, true);
    let ada = user(&db, "ada@example.com", &["github", "google"]).await;
    let _bob = user(&db, "bob@example.com", &["github", "passkey:bob-key"]).await;
    let me = fresh_session(&auth, &db, &ada).await;
    for result in [
        auth.unlink_account(&me, "github", "github-bob@example.com")
            .await,
        auth.delete_passkey(&me, "bob-key").await,
    ] {
        assert!(matches!(result, Err(AccountError::NotFound)), "{result:?}");
    }
    assert!(
        db.get_account("github-bob@example.com", "github")
            .await
            .unwrap()
            .is_some()
    );
    assert!(db.get_authenticator("bob-key").await.unwrap().is_some());
}

#[tokio::test]
async fn deleting_a_user_removes_everything_of_theirs() {
    let db = MemoryAdapter::new();
    let auth = app(&db, true);
    let ada = user(&db, "ada@example.com", &["github", "passkey:cred-1"]).await;
    let bob = user(&db, "bob@example.com", &["github"]).await;
    for identifier in ["ada@example.com", "bob@example.com"] {
        db.create_verification_token(VerificationToken {
            identifier: identifier.into(),
            token: "hashed".into(),
            expires: time::OffsetDateTime::now_utc() + time::Duration::hours(1),
        })
        .await
        .unwrap();
    }
    auth.delete_user(&fresh_session(&auth, &db, &ada).await)
        .await
        .unwrap();
    assert!(db.get_user(&ada).await.unwrap().is_none());
    assert!(
        db.get_account("github-ada@example.com", "github")
            .await
            .unwrap()
            .is_none()
    );
    assert!(db.get_authenticator("cred-1").await.unwrap().is_none());
    assert!(
        db.get_session_and_user("session-ada@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let link = db
        .use_verification_token("ada@example.com", "hashed")
        .await
        .unwrap();
    assert!(link.is_none());
    // Bob keeps everything.
    assert!(auth.sign_in_methods(&bob).await.unwrap().count() == 2);
    assert!(
        db.get_session_and_user("session-bob@example.com")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        db.use_verification_token("bob@example.com", "hashed")
            .await
            .unwrap()
            .is_some()
    );
    let none = app_without_adapter().sign_in_methods(&bob).await;
    assert!(matches!(none, Err(AccountError::NoAdapter)), "{none:?}");
}

fn app_without_adapter() -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret("account-management-secret-xxxxxx")
            .trust_host(true)
            .provider(
                OAuthProvider::oidc("oidc", "OIDC")
                    .issuer("https://idp.example")
                    .client_id("client"),
            )
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn sessions_are_listed_and_revoked_one_or_all_others() {
    let db = MemoryAdapter::new();
    let auth = app(&db, true);
    let ada = user(&db, "ada@example.com", &["github"]).await;
    let bob = user(&db, "bob@example.com", &["github"]).await;
    for (token, ua) in [("ada-2", "Phone/1"), ("ada-3", "Tablet/1")] {
        db.create_session(AdapterSession {
            session_token: token.into(),
            user_id: ada.clone(),
            expires: time::OffsetDateTime::now_utc() + time::Duration::days(1),
        })
        .await
        .unwrap();
        db.record_session_activity(token, time::OffsetDateTime::now_utc(), Some(ua))
            .await
            .unwrap();
    }
    let all = auth.sessions(&ada, None).await.unwrap();
    assert_eq!(all.len(), 3);
    let current = all
        .iter()
        .find(|s| s.user_agent.as_deref() == Some("Phone/1"))
        .unwrap();
    let listed = auth.sessions(&ada, Some(&current.id)).await.unwrap();
    assert_eq!(listed.iter().filter(|s| s.current).count(), 1);
    assert!(
        listed.iter().all(|s| !s.id.contains("ada-")),
        "ids are not tokens"
    );

    // Another user's session is not found; one of Ada's is revoked.
    let bobs = auth.sessions(&bob, None).await.unwrap();
    let wrong = auth.revoke_session(&ada, &bobs[0].id).await;
    assert!(matches!(wrong, Err(AccountError::NotFound)), "{wrong:?}");
    let tablet = listed
        .iter()
        .find(|s| s.user_agent.as_deref() == Some("Tablet/1"))
        .unwrap();
    auth.revoke_session(&ada, &tablet.id).await.unwrap();
    assert!(db.get_session_and_user("ada-3").await.unwrap().is_none());

    // Everywhere else: only the current one stays; Bob keeps his.
    assert_eq!(
        auth.revoke_other_sessions(&ada, Some(&current.id))
            .await
            .unwrap(),
        1
    );
    let left = auth.sessions(&ada, Some(&current.id)).await.unwrap();
    assert_eq!(left.len(), 1);
    assert!(left[0].current);
    assert_eq!(auth.sessions(&bob, None).await.unwrap().len(), 1);

    // With JWT sessions there is nothing stored to list.
    let jwt = Auth::new(
        AuthConfig::builder()
            .secret("account-management-secret-xxxxxx")
            .trust_host(true)
            .provider(
                EmailProvider::new("auth@example.com")
                    .send_verification_request(|_| async { Ok(()) }),
            )
            .adapter(db.clone())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .build()
            .unwrap(),
    );
    let none = jwt.sessions(&ada, None).await;
    assert!(
        matches!(none, Err(AccountError::NoDatabaseSessions)),
        "{none:?}"
    );
}
