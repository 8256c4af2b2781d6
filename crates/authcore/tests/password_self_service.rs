//! Password accounts' self-service (`AuthConfigBuilder::password_accounts`): sign-up with
//! address confirmation, a forgotten password, changing the password and the address; and
//! the attacks on them (account enumeration by answer, replayed and borrowed links, a
//! missing CSRF token, stale sessions, a wrong current password), each asserting that no
//! session opened and nothing changed.
#![allow(clippy::unwrap_used)]
use std::sync::Arc;

use crate::common::*;
use authcore::adapter::{Adapter, MemoryAdapter, PasswordStore};
use authcore::passwords::{PasswordAccounts, PasswordHashing};
use authcore::providers::email::LinkPurpose;
use authcore::{Auth, AuthConfigBuilder, SessionStrategy, SignUpPolicy};

const GOOD: &str = "correct horse battery staple";
const OTHER_GOOD: &str = "violet umbrella under nine moons";

/// Cheap argon2id parameters: the flows, not the cost, are tested here.
fn accounts(db: &MemoryAdapter) -> PasswordAccounts {
    PasswordAccounts::new(
        Arc::new(db.clone()),
        PasswordHashing::argon2id(64, 1, 1).unwrap(),
    )
    .unwrap()
    .allow_sign_up(true)
}

fn config(db: &MemoryAdapter, mail: &Mailbox, accounts: PasswordAccounts) -> AuthConfigBuilder {
    authcore::AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .adapter(db.clone())
        .session_strategy(SessionStrategy::Database)
        .provider(mail.provider())
        .password_accounts(accounts)
}

fn setup() -> (Auth, MemoryAdapter, Mailbox) {
    let db = MemoryAdapter::new();
    let mail = Mailbox::default();
    let (auth, _) = auth_with(config(&db, &mail, accounts(&db)));
    (auth, db, mail)
}

/// The same as JSON.
async fn post_json(auth: &Auth, step: &str, body: serde_json::Value) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let mut body = body;
    body["csrfToken"] = token.into();
    send(
        auth,
        http::Request::post(url(&format!("/auth/password/{step}")))
            .header("content-type", "application/json")
            .header("cookie", csrf)
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_string(),
            )))
            .unwrap(),
    )
    .await
}

/// `GET` of a mailed link (absolute, on the test origin).
async fn follow(auth: &Auth, link: &str) -> TestResponse {
    assert!(link.starts_with(ORIGIN), "{link}");
    send(auth, http::Request::get(link).body(empty()).unwrap()).await
}

/// The page's text between tags, for comparing two answers (the CSRF token and CSP nonce
/// differ per answer).
fn visible(r: &TestResponse) -> String {
    let html = r.text();
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

async fn sign_in(auth: &Auth, email: &str, password: &str) -> TestResponse {
    post_credentials_to(
        auth,
        "password",
        &[("username", email), ("password", password)],
    )
    .await
}

fn signed_in(r: &TestResponse) -> bool {
    r.status == 302 && r.cookie(SESSION_COOKIE).is_some()
}

/// Signs `email` up and confirms the address: the user's id.
async fn signed_up(auth: &Auth, db: &MemoryAdapter, mail: &Mailbox, email: &str) -> String {
    let r = post_password_step(auth, "signup", &[("email", email), ("password", GOOD)]).await;
    assert_eq!(r.status, 200, "{:?}", r.location());
    let link = mail.last(email, LinkPurpose::VerifyAddress);
    assert_eq!(follow(auth, &link).await.status, 200);
    db.get_user_by_email(email).await.unwrap().unwrap().id
}

#[tokio::test]
async fn sign_up_confirms_the_address_before_the_first_sign_in() {
    let (auth, db, mail) = setup();
    let page = send(&auth, get("/auth/password/signup").body(empty()).unwrap()).await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains("autocomplete=\"new-password\"") && html.contains("minlength=\"12\""));
    // The password's hint, styled by the form pages' own rule (the sign-in page has none).
    assert!(html.contains("<p class=\"hint\" id=\"hint-password\">") && html.contains(".hint{"));
    assert!(
        page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("nonce-")
    );

    let r = post_password_step(
        &auth,
        "signup",
        &[
            ("email", "Ada@Example.com"),
            ("password", GOOD),
            ("name", "Ada"),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(visible(&r).contains("Check your email"));
    let user = db
        .get_user_by_email("ada@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.name.as_deref(), Some("Ada"));
    assert!(user.email_verified.is_none());

    // The right password, before the address is confirmed: no session, and a code that says why.
    let early = sign_in(&auth, "ada@example.com", GOOD).await;
    assert!(!signed_in(&early));
    assert!(
        early
            .location()
            .unwrap()
            .contains("code=email_not_verified"),
        "{:?}",
        early.location()
    );

    let link = mail.last("ada@example.com", LinkPurpose::VerifyAddress);
    let done = follow(&auth, &link).await;
    assert_eq!(done.status, 200);
    assert!(visible(&done).contains("Address confirmed"));
    assert!(
        db.get_user(&user.id)
            .await
            .unwrap()
            .unwrap()
            .email_verified
            .is_some()
    );
    assert!(signed_in(&sign_in(&auth, "ada@example.com", GOOD).await));

    // The link is single use.
    let again = follow(&auth, &link).await;
    assert_eq!(again.status, 400);
    assert!(visible(&again).contains("This link is not valid"));
}

#[tokio::test]
async fn sign_up_with_a_known_address_answers_as_a_new_one_and_changes_nothing() {
    let (auth, db, mail) = setup();
    let known = signed_up(&auth, &db, &mail, "known@example.com").await;
    let known_hash = db.get_password_hash(&known).await.unwrap();

    let fresh = post_password_step(
        &auth,
        "signup",
        &[("email", "fresh@example.com"), ("password", GOOD)],
    )
    .await;
    let again = post_password_step(
        &auth,
        "signup",
        &[("email", "known@example.com"), ("password", OTHER_GOOD)],
    )
    .await;
    assert_eq!(fresh.status, again.status);
    assert_eq!(visible(&fresh), visible(&again));
    let json_fresh = post_json(
        &auth,
        "signup",
        serde_json::json!({"email": "fresh2@example.com", "password": GOOD}),
    )
    .await;
    let json_known = post_json(
        &auth,
        "signup",
        serde_json::json!({"email": "known@example.com", "password": GOOD}),
    )
    .await;
    assert_eq!(json_fresh.json(), json_known.json());
    assert_eq!(json_fresh.json(), serde_json::json!({"status": "sent"}));

    // The owner hears of it; the account and its password are as they were.
    mail.last("known@example.com", LinkPurpose::AccountExists);
    assert_eq!(db.get_password_hash(&known).await.unwrap(), known_hash);
    assert!(!signed_in(
        &sign_in(&auth, "known@example.com", OTHER_GOOD).await
    ));
    assert!(signed_in(&sign_in(&auth, "known@example.com", GOOD).await));
}

#[tokio::test]
async fn refused_sign_ups_make_no_user() {
    let db = MemoryAdapter::new();
    let mail = Mailbox::default();
    let (auth, _) = auth_with(
        config(&db, &mail, accounts(&db)).sign_up(SignUpPolicy::domains(["example.com"]).unwrap()),
    );
    for (fields, status, error) in [
        (
            vec![("email", "eve@evil.test"), ("password", GOOD)],
            403,
            "SignUpClosed",
        ),
        (
            vec![("email", "eve@example.com"), ("password", "short")],
            400,
            "PasswordPolicy",
        ),
        (
            vec![("email", "eve@example.com"), ("password", "password1234")],
            400,
            "PasswordPolicy",
        ),
        (
            vec![
                ("email", "eve@example.com"),
                ("password", "eve@example.com!!"),
            ],
            400,
            "PasswordPolicy",
        ),
        (
            vec![("email", "not an address"), ("password", GOOD)],
            400,
            "InvalidRequest",
        ),
        (
            vec![
                ("email", "eve@example.com"),
                ("password", "a\u{0}bcdefghijklmnop"),
            ],
            400,
            "PasswordPolicy",
        ),
    ] {
        let body: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).into()))
            .collect();
        let r = post_json(&auth, "signup", body.into()).await;
        assert_eq!(r.status, status, "{fields:?}: {}", r.text());
        assert_eq!(r.json()["error"], error, "{fields:?}");
        let form = post_password_step(&auth, "signup", &fields).await;
        assert_eq!(form.status, status, "{fields:?}");
        assert!(form.text().contains("role=\"alert\""), "{fields:?}");
    }
    let weak = post_json(
        &auth,
        "signup",
        serde_json::json!({"email": "eve@example.com", "password": "short"}),
    )
    .await;
    assert_eq!(weak.json()["code"], "too_short");
    assert!(
        db.get_user_by_email("eve@example.com")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        db.get_user_by_email("eve@evil.test")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(mail.count(), 0);

    // Without the CSRF token: refused before anything is read.
    let r = send(
        &auth,
        post("/auth/password/signup")
            .body(form(&[("email", "eve@example.com"), ("password", GOOD)]))
            .unwrap(),
    )
    .await;
    assert_ne!(r.status, 200);
    assert!(
        db.get_user_by_email("eve@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn sign_up_is_off_unless_allowed() {
    let db = MemoryAdapter::new();
    let mail = Mailbox::default();
    let plain = PasswordAccounts::new(
        Arc::new(db.clone()),
        PasswordHashing::argon2id(64, 1, 1).unwrap(),
    )
    .unwrap();
    let (auth, _) = auth_with(config(&db, &mail, plain));
    let page = send(&auth, get("/auth/password/signup").body(empty()).unwrap()).await;
    assert_ne!(page.status, 200);
    let r = post_password_step(
        &auth,
        "signup",
        &[("email", "eve@example.com"), ("password", GOOD)],
    )
    .await;
    assert_ne!(r.status, 200);
    assert!(
        db.get_user_by_email("eve@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let signin = send(&auth, get("/auth/signin").body(empty()).unwrap())
        .await
        .text();
    assert!(signin.contains("/auth/password/forgot") && !signin.contains("/auth/password/signup"));
}

#[tokio::test]
async fn a_forgotten_password_is_reset_once_and_every_session_ends() {
    let (auth, db, mail) = setup();
    let user = signed_up(&auth, &db, &mail, "ada@example.com").await;
    let session = sign_in(&auth, "ada@example.com", GOOD)
        .await
        .cookie(SESSION_COOKIE)
        .unwrap();
    assert!(db.get_session_and_user(&session).await.unwrap().is_some());

    let known = post_password_step(&auth, "forgot", &[("email", "ada@example.com")]).await;
    let unknown = post_password_step(&auth, "forgot", &[("email", "nobody@example.com")]).await;
    assert_eq!(known.status, 200);
    assert_eq!(visible(&known), visible(&unknown));
    mail.last("nobody@example.com", LinkPurpose::NoAccount);
    let link = mail.last("ada@example.com", LinkPurpose::ResetPassword);
    assert!(
        link.starts_with(&format!("{ORIGIN}/auth/password/reset?")),
        "{link}"
    );

    let form = follow(&auth, &link).await;
    assert_eq!(form.status, 200);
    assert!(form.text().contains("autocomplete=\"new-password\""));
    let (token, uid) = (query_param(&link, "token"), query_param(&link, "user"));
    assert_eq!(uid, user);

    // A refused password leaves the link usable; another user's id makes it void.
    let weak = post_password_step(
        &auth,
        "reset",
        &[("token", &token), ("user", &uid), ("password", "short")],
    )
    .await;
    assert_eq!(weak.status, 400);
    let other = signed_up(&auth, &db, &mail, "bob@example.com").await;
    let borrowed = post_password_step(
        &auth,
        "reset",
        &[
            ("token", &token),
            ("user", &other),
            ("password", OTHER_GOOD),
        ],
    )
    .await;
    assert_eq!(borrowed.status, 400);
    assert!(
        signed_in(&sign_in(&auth, "bob@example.com", GOOD).await),
        "bob's password is unchanged"
    );

    let done = post_password_step(
        &auth,
        "reset",
        &[("token", &token), ("user", &uid), ("password", OTHER_GOOD)],
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(visible(&done).contains("Password changed"));
    assert!(
        db.get_session_and_user(&session).await.unwrap().is_none(),
        "the old session ended"
    );
    assert!(!signed_in(&sign_in(&auth, "ada@example.com", GOOD).await));
    assert!(signed_in(
        &sign_in(&auth, "ada@example.com", OTHER_GOOD).await
    ));
    let notices = mail.notices.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n.to == "ada@example.com"
        && n.change == authcore::callbacks::SecurityChange::PasswordChanged));

    // Replayed: refused, and the password stays.
    let replay = post_password_step(
        &auth,
        "reset",
        &[("token", &token), ("user", &uid), ("password", GOOD)],
    )
    .await;
    assert_eq!(replay.status, 400);
    assert!(signed_in(
        &sign_in(&auth, "ada@example.com", OTHER_GOOD).await
    ));
}

#[tokio::test]
async fn reset_links_are_built_only_on_a_trusted_host() {
    let db = MemoryAdapter::new();
    let mail = Mailbox::default();
    let (auth, _) = auth_with(
        config(&db, &mail, accounts(&db))
            .trust_host(false)
            .url("https://authjs.test/auth"),
    );
    signed_up(&auth, &db, &mail, "ada@example.com").await;
    let (csrf, token) = csrf_pair();
    for host in ["evil.test", "authjs.test.evil.test"] {
        let _ = send(
            &auth,
            http::Request::post(format!("https://{host}/auth/password/forgot"))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("host", host)
                .header("x-forwarded-host", host)
                .header("cookie", &csrf)
                .body(form(&[("csrfToken", &token), ("email", "ada@example.com")]))
                .unwrap(),
        )
        .await;
    }
    for m in mail.links.lock().unwrap().iter() {
        assert!(m.url.starts_with("https://authjs.test/"), "{}", m.url);
    }
}

#[tokio::test]
async fn changing_the_password_needs_the_current_one_and_a_recent_sign_in() {
    let (auth, db, mail) = setup();
    let user = signed_up(&auth, &db, &mail, "ada@example.com").await;
    let other_session = sign_in(&auth, "ada@example.com", GOOD)
        .await
        .cookie(SESSION_COOKIE)
        .unwrap();

    let stale = session_of(
        &auth,
        &db,
        &user,
        std::time::Duration::from_secs(3 * 3600),
        &["pwd"],
    )
    .await
    .1;
    assert!(matches!(
        auth.change_password(&stale, GOOD, OTHER_GOOD).await,
        Err(authcore::account::AccountError::ReauthenticationRequired)
    ));
    let me = fresh_session(&auth, &db, &user).await;
    assert!(matches!(
        auth.change_password(&me, "wrong password!!", OTHER_GOOD)
            .await,
        Err(authcore::account::AccountError::WrongPassword)
    ));
    assert!(matches!(
        auth.change_password(&me, GOOD, "password1234").await,
        Err(authcore::account::AccountError::WeakPassword(_))
    ));
    assert!(
        signed_in(&sign_in(&auth, "ada@example.com", GOOD).await),
        "nothing changed yet"
    );

    auth.change_password(&me, GOOD, OTHER_GOOD).await.unwrap();
    assert!(signed_in(
        &sign_in(&auth, "ada@example.com", OTHER_GOOD).await
    ));
    assert!(
        db.get_session_and_user(&other_session)
            .await
            .unwrap()
            .is_none(),
        "other sessions end"
    );
    let methods = auth.sign_in_methods(&user).await.unwrap();
    assert!(methods.password);
    // The account page names the password among the ways to sign in, and can change it.
    let (cookie, _) = session_of(&auth, &db, &user, std::time::Duration::ZERO, &["pwd"]).await;
    let page = send(
        &auth,
        get("/auth/account")
            .header("cookie", cookie)
            .body(empty())
            .unwrap(),
    )
    .await
    .text();
    assert!(page.contains("<li><span>Password</span></li>"), "{page}");
    assert!(page.contains("name=\"currentPassword\""));
}

#[tokio::test]
async fn changing_the_address_is_confirmed_by_the_new_one_and_told_to_the_old() {
    let (auth, db, mail) = setup();
    let user = signed_up(&auth, &db, &mail, "ada@example.com").await;
    signed_up(&auth, &db, &mail, "bob@example.com").await;
    let me = fresh_session(&auth, &db, &user).await;

    // Another account's address: the same answer, a notice to that address, no change.
    auth.change_email(&me, "bob@example.com").await.unwrap();
    mail.last("bob@example.com", LinkPurpose::AccountExists);

    auth.change_email(&me, "Ada.New@Example.com").await.unwrap();
    let link = mail.last("ada.new@example.com", LinkPurpose::ConfirmNewAddress);
    assert_eq!(
        db.get_user(&user).await.unwrap().unwrap().email.as_deref(),
        Some("ada@example.com")
    );

    // The link with another address in it is void.
    let forged = link.replace("ada.new%40example.com", "eve%40evil.test");
    assert_eq!(follow(&auth, &forged).await.status, 400);

    let done = follow(&auth, &link).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert_eq!(
        db.get_user(&user).await.unwrap().unwrap().email.as_deref(),
        Some("ada.new@example.com")
    );
    assert!(signed_in(
        &sign_in(&auth, "ada.new@example.com", GOOD).await
    ));
    assert!(!signed_in(&sign_in(&auth, "ada@example.com", GOOD).await));
    let notices = mail.notices.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n.to == "ada@example.com"
        && n.change == authcore::callbacks::SecurityChange::EmailChanged));
    assert_eq!(follow(&auth, &link).await.status, 400, "single use");
}

#[tokio::test]
async fn password_accounts_that_confirm_addresses_need_a_mailer() {
    let db = MemoryAdapter::new();
    let err = authcore::AuthConfig::builder()
        .secret(SECRET)
        .adapter(db.clone())
        .password_accounts(accounts(&db))
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("require_verified_email(false)"),
        "{err}"
    );
    // Without confirmation, a sign-up signs in at once.
    let (auth, _) = auth_with(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Database)
            .password_accounts(accounts(&db).require_verified_email(false)),
    );
    let r = post_json(
        &auth,
        "signup",
        serde_json::json!({"email": "ada@example.com", "password": GOOD}),
    )
    .await;
    assert_eq!(r.json(), serde_json::json!({"status": "created"}));
    assert!(signed_in(&sign_in(&auth, "ada@example.com", GOOD).await));
    // Without confirmation an answer cannot hide a known address: it says so, and changes
    // nothing.
    let again = post_json(
        &auth,
        "signup",
        serde_json::json!({"email": "ada@example.com", "password": OTHER_GOOD}),
    )
    .await;
    assert_eq!(again.status, 409);
    assert_eq!(again.json()["error"], "AccountExists");
    assert!(signed_in(&sign_in(&auth, "ada@example.com", GOOD).await));
    let forgot = send(&auth, get("/auth/password/forgot").body(empty()).unwrap()).await;
    assert_ne!(forgot.status, 200, "no mailer: no forgotten-password page");
}
