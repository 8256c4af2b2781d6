//! An email provider with magic links off (`EmailProvider::magic_links(false)`): it still
//! mails password accounts' links and security notices, but it is no way to sign in — not
//! listed, not on the sign-in page, not among a user's sign-in methods, and its sign-in and
//! callback routes answer as for an unknown provider, sending no link and opening no
//! session.
#![allow(clippy::unwrap_used)]
use std::sync::Arc;

use crate::common::*;
use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::callbacks::SecurityChange;
use authcore::passwords::{PasswordAccounts, PasswordHashing};
use authcore::providers::email::LinkPurpose;
use authcore::{Auth, ConfigError, SessionStrategy};

const GOOD: &str = "correct horse battery staple";
const NEW_GOOD: &str = "violet umbrella under nine moons";

/// A site on `db` with password accounts (sign-up open) and an email provider whose magic
/// links are on or off.
fn site(db: &MemoryAdapter, magic_links: bool) -> (Auth, Recorder, Mailbox) {
    let mail = Mailbox::default();
    let provider = mail.provider().magic_links(magic_links);
    let accounts = PasswordAccounts::new(
        Arc::new(db.clone()),
        PasswordHashing::argon2id(64, 1, 1).unwrap(),
    )
    .unwrap()
    .allow_sign_up(true);
    let (auth, rec) = auth_with(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Database)
            .sign_up(authcore::SignUpPolicy::Open)
            .provider(provider)
            .password_accounts(accounts),
    );
    (auth, rec, mail)
}

async fn get_page(auth: &Auth, link: &str) -> TestResponse {
    send(auth, http::Request::get(link).body(empty()).unwrap()).await
}

fn opened_session(r: &TestResponse) -> bool {
    r.cookie(SESSION_COOKIE).is_some()
}

const CONFIGURATION_ERROR: &str = "https://authjs.test/auth/error?error=Configuration";

/// The same site with magic links on and off: where the provider shows, what its sign-in
/// route does, and whether a user's sign-in methods count it.
#[tokio::test]
async fn magic_links_off_is_no_way_to_sign_in() {
    for magic_links in [true, false] {
        let db = MemoryAdapter::new();
        let (auth, rec, mail) = site(&db, magic_links);
        let case = format!("magic_links({magic_links})");

        let listed = send(&auth, get("/auth/providers").body(empty()).unwrap())
            .await
            .json();
        assert_eq!(
            listed.get("email").is_some(),
            magic_links,
            "{case}: {listed}"
        );
        assert!(listed.get("password").is_some(), "{case}: {listed}");

        let page = send(&auth, get("/auth/signin").body(empty()).unwrap()).await;
        assert_eq!(page.status, 200, "{case}");
        assert_eq!(
            page.text().contains("/auth/signin/email"),
            magic_links,
            "{case}"
        );

        let r = ask_for_magic_link(&auth, "ada@example.com").await;
        let sent = mail.links.lock().unwrap().len();
        if magic_links {
            assert_eq!(
                r.location(),
                Some("https://authjs.test/auth/verify-request?provider=email&type=email"),
                "{case}"
            );
            assert_eq!(sent, 1, "{case}");
        } else {
            assert_eq!(r.location(), Some(CONFIGURATION_ERROR), "{case}");
            assert_eq!(sent, 0, "{case}: no link is sent");
            assert_eq!(
                rec.errors.lock().unwrap()[0].1,
                r#"Provider with id "email" not found. Available providers: [password]."#,
                "{case}"
            );
        }

        let user = db
            .create_user(NewUser {
                email: Some("bob@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let methods = auth.sign_in_methods(&user.id).await.unwrap();
        assert_eq!(
            methods.email.as_deref(),
            magic_links.then_some("bob@example.com"),
            "{case}"
        );
        assert_eq!(methods.count(), usize::from(magic_links), "{case}");
    }
}

/// A link mailed while magic links were on is refused at the callback once they are off:
/// no user is made and no session opens; the link itself is left as it was.
#[tokio::test]
async fn the_callback_of_a_provider_without_magic_links_opens_no_session() {
    let db = MemoryAdapter::new();
    let (on, _, mail) = site(&db, true);
    let (off, off_rec, _) = site(&db, false);
    ask_for_magic_link(&on, "ada@example.com").await;
    let link = mail.last("ada@example.com", LinkPurpose::SignIn);

    for method in ["GET", "POST"] {
        let (csrf, _) = csrf_pair();
        let r = send(
            &off,
            http::Request::builder()
                .method(method)
                .uri(&link)
                .header("cookie", csrf)
                .body(empty())
                .unwrap(),
        )
        .await;
        assert_eq!(r.location(), Some(CONFIGURATION_ERROR), "{method}");
        assert!(!opened_session(&r), "{method}");
    }
    assert!(
        off_rec.errors.lock().unwrap()[0]
            .1
            .contains(r#"Provider with id "email" not found"#)
    );
    assert!(
        db.get_user_by_email("ada@example.com")
            .await
            .unwrap()
            .is_none()
    );

    // The refusal came before the token was looked at: the same link still works where
    // magic links are on.
    let (csrf, _) = csrf_pair();
    let r = send(
        &on,
        http::Request::get(&link)
            .header("cookie", csrf)
            .body(empty())
            .unwrap(),
    )
    .await;
    assert!(opened_session(&r), "{:?}", r.location());
}

/// Password accounts' mails go out through a provider without magic links: the sign-up's
/// confirmation, the reset link and the notice of the changed password.
#[tokio::test]
async fn password_accounts_mail_through_a_provider_without_magic_links() {
    let db = MemoryAdapter::new();
    let (auth, _, mail) = site(&db, false);

    let r = post_password_step(
        &auth,
        "signup",
        &[("email", "ada@example.com"), ("password", GOOD)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let confirm = mail.last("ada@example.com", LinkPurpose::VerifyAddress);
    assert_eq!(get_page(&auth, &confirm).await.status, 200);
    assert!(opened_session(
        &post_credentials_to(
            &auth,
            "password",
            &[("username", "ada@example.com"), ("password", GOOD)]
        )
        .await
    ));

    let r = post_password_step(&auth, "forgot", &[("email", "ada@example.com")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let reset = mail.last("ada@example.com", LinkPurpose::ResetPassword);
    let params: std::collections::HashMap<String, String> = url::Url::parse(&reset)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    let r = post_password_step(
        &auth,
        "reset",
        &[
            ("token", &params["token"]),
            ("user", &params["user"]),
            ("password", NEW_GOOD),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(opened_session(
        &post_credentials_to(
            &auth,
            "password",
            &[("username", "ada@example.com"), ("password", NEW_GOOD)]
        )
        .await
    ));
    assert!(
        mail.notices
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.to == "ada@example.com" && n.change == SecurityChange::PasswordChanged)
    );
    // None of it was a sign-in link.
    assert!(
        mail.links
            .lock()
            .unwrap()
            .iter()
            .all(|m| m.purpose != LinkPurpose::SignIn)
    );
}

/// A provider without magic links signs no one in: alone, the configuration has no
/// provider; beside credentials, the configuration is checked as credentials-only.
#[tokio::test]
async fn a_provider_without_magic_links_is_not_a_provider_on_its_own() {
    let mail = Outbox::default();
    let alone = authcore::AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .adapter(MemoryAdapter::new())
        .provider(outbox_provider(&mail).magic_links(false))
        .build()
        .unwrap_err();
    assert!(matches!(alone, ConfigError::NoProviders), "{alone}");
    assert!(alone.to_string().contains("magic_links(false)"), "{alone}");
    // Beside credentials alone, the configuration is a credentials-only one.
    let with_credentials = || {
        builder()
            .adapter(MemoryAdapter::new())
            .provider(outbox_provider(&mail).magic_links(false))
    };
    let err = with_credentials().build().unwrap_err();
    assert!(matches!(err, ConfigError::UnsupportedStrategy), "{err}");
    with_credentials()
        .session_strategy(SessionStrategy::Jwt)
        .build()
        .unwrap();
}

/// A passkey registered without a session needs its address proven first where something
/// proves addresses: magic links, or password accounts' reset links (which a provider
/// without magic links still mails). Where nothing does, the registration is offered.
#[tokio::test]
async fn passkey_sign_up_needs_proof_where_an_address_can_be_proven() {
    for (magic_links, password_accounts, needs_proof) in [
        (true, false, true),
        (false, true, true),
        (false, false, false),
    ] {
        let db = MemoryAdapter::new();
        let mut b = builder()
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .sign_up(authcore::SignUpPolicy::Open)
            .provider(outbox_provider(&Outbox::default()).magic_links(magic_links))
            .provider(authcore::providers::WebAuthnProvider::passkey());
        if password_accounts {
            b = b.password_accounts(
                PasswordAccounts::new(
                    Arc::new(db.clone()),
                    PasswordHashing::argon2id(64, 1, 1).unwrap(),
                )
                .unwrap(),
            );
        }
        let (auth, _) = auth_with(b);
        let r = send(
            &auth,
            get("/auth/webauthn-options/passkey?action=register&email=carol@example.com")
                .body(empty())
                .unwrap(),
        )
        .await;
        let case = format!("magic_links {magic_links}, password accounts {password_accounts}");
        if needs_proof {
            assert_eq!(r.status, 403, "{case}: {}", r.text());
            assert_eq!(r.json()["error"], "EmailProofRequired", "{case}");
        } else {
            assert_eq!(r.status, 200, "{case}: {}", r.text());
            assert_eq!(r.json()["action"], "register", "{case}");
        }
    }
}
