//! Password accounts' self-service end to end, over HTTP against the server built in this
//! process, with its mail received by a real SMTP server: a visitor signs up, confirms the
//! address by the mailed link, signs in, passes the gateway and gets the OpenID Provider's
//! ID token for the address; a forgotten password is reset by mail and the old session
//! ends; a sign-up with a known address answers as a new one and mails the owner; with
//! sign-up closed there is no sign-up page. The site is a password-only one: email sign-in
//! and passkeys are off, and the mails go out all the same.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::support::smtp::SmtpServer;
use crate::support::sso::{self, Sections, SsoServer, header};

const PASSWORD: &str = "correct horse battery staple";
const NEW_PASSWORD: &str = "violet umbrella under nine moons";
/// Self-service sign-up open to everyone; no magic links and no passkeys.
const OPEN: [(&str, &str); 4] = [
    ("AUTHCORE_PASSWORD_SIGN_UP", "on"),
    ("AUTHCORE_SIGN_UP", "open"),
    ("AUTHCORE_EMAIL_SIGN_IN", "off"),
    ("AUTHCORE_PASSKEYS", "off"),
];

/// Password accounts with their mail sent through `mail`.
fn passwords_through(mail: &SmtpServer) -> String {
    format!(
        "[passwords]\nenabled = true\n\n[email]\nsmtp_url = \"smtp://127.0.0.1:{}\"\n",
        mail.port
    )
}

/// An SMTP server, and the password-only site of [`OPEN`] that mails through it.
async fn open_site() -> (SmtpServer, SsoServer) {
    let mail = SmtpServer::start().await;
    let more = passwords_through(&mail);
    let server = SsoServer::start(
        Sections {
            auth: "",
            more: &more,
        },
        &OPEN,
    )
    .await;
    (mail, server)
}

async fn text(r: reqwest::Response) -> String {
    r.text().await.unwrap()
}

/// The next mail the SMTP server received: it must be to `to` with a subject beginning
/// with `subject`.
pub(crate) async fn next_mail(mail: &mut SmtpServer, to: &str, subject: &str) -> Value {
    let message = mail.next_message().await;
    assert_eq!(message["envelope"]["to"][0], to, "{message}");
    assert!(
        message["subject"].as_str().unwrap().starts_with(subject),
        "{message}"
    );
    message
}

/// `email` signs up with [`PASSWORD`] and follows the mailed confirmation link.
async fn signed_up(server: &SsoServer, mail: &mut SmtpServer, email: &str, name: &str) {
    let browser = server.browser();
    let r = browser
        .post_form(
            "/auth/password/signup",
            &[("email", email), ("password", PASSWORD), ("name", name)],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Check your email"));
    let message = next_mail(mail, email, "Confirm your email address for").await;
    let link = sso::link_in(&message, "/auth/password/verify");
    let r = browser.get(&link).await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Address confirmed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_account_signs_up_by_mail_and_reaches_the_gateway_and_the_app() {
    let (mut mail, server) = open_site().await;
    let browser = server.browser();

    // Passwords are the only way in.
    let providers = crate::support::binary::get_json(
        &browser.client,
        &format!("{}/auth/providers", server.base),
    )
    .await;
    let ids: Vec<&str> = providers
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["password"], "{providers}");
    let page = text(browser.get("/auth/signin").await).await;
    assert!(page.contains("/auth/password/signup"), "{page}");

    let form = browser.get("/auth/password/signup").await;
    assert_eq!(form.status(), 200);
    assert!(text(form).await.contains("autocomplete=\"new-password\""));
    let r = browser
        .post_form(
            "/auth/password/signup",
            &[
                ("email", "Ada@Example.com"),
                ("password", PASSWORD),
                ("name", "Ada"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Check your email"));
    // Not yet confirmed: no session.
    assert!(
        !browser
            .sign_in("password", "ada@example.com", PASSWORD)
            .await
    );

    let message = next_mail(
        &mut mail,
        "ada@example.com",
        "Confirm your email address for",
    )
    .await;
    let link = sso::link_in(&message, "/auth/password/verify");
    assert!(link.starts_with(&server.base), "{link}");
    let r = browser.get(&link).await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Address confirmed"));

    let app = "https://app.example.test/page";
    assert_eq!(browser.through_gateway(app).await.status(), 401);
    assert!(
        browser
            .sign_in("password", "ada@example.com", PASSWORD)
            .await
    );
    assert_eq!(browser.session().await["user"]["email"], "ada@example.com");
    let r = browser.through_gateway(app).await;
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-auth-request-email"), Some("ada@example.com"));
    assert_eq!(header(&r, "x-auth-request-name"), Some("Ada"));

    let tokens = browser.app_tokens("openid email profile").await;
    let claims = sso::claims(tokens["id_token"].as_str().unwrap());
    assert_eq!(claims["aud"], sso::APP, "{claims}");
    assert_eq!(claims["email"], "ada@example.com", "{claims}");
    assert_eq!(claims["email_verified"], true, "{claims}");
    assert_eq!(claims["name"], "Ada", "{claims}");
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]), "{claims}");
    let info = server
        .userinfo(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(info["sub"], claims["sub"], "{info}");
    assert_eq!(info["email"], "ada@example.com", "{info}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_password_is_reset_by_mail_and_the_old_session_ends() {
    let (mut mail, server) = open_site().await;
    signed_up(&server, &mut mail, "ada@example.com", "Ada").await;
    let old = server.browser();
    assert!(old.sign_in("password", "ada@example.com", PASSWORD).await);
    let app = "https://app.example.test/";
    assert_eq!(old.through_gateway(app).await.status(), 200);

    let browser = server.browser();
    let r = browser
        .post_form("/auth/password/forgot", &[("email", "ada@example.com")])
        .await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Check your email"));
    let message = next_mail(&mut mail, "ada@example.com", "Reset your password for").await;
    let link = sso::link_in(&message, "/auth/password/reset");
    let form = browser.get(&link).await;
    assert_eq!(form.status(), 200);
    assert!(text(form).await.contains("autocomplete=\"new-password\""));
    let link = url::Url::parse(&link).unwrap();
    let param = |name: &str| {
        link.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap()
    };
    let (token, user) = (param("token"), param("user"));
    let r = browser
        .post_form(
            "/auth/password/reset",
            &[
                ("token", &token),
                ("user", &user),
                ("password", NEW_PASSWORD),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(text(r).await.contains("Password changed"));
    next_mail(&mut mail, "ada@example.com", "Security alert").await;

    // The session of before is gone, at the server and at the gateway.
    assert_eq!(old.session().await, Value::Null);
    assert_eq!(old.through_gateway(app).await.status(), 401);
    assert!(!old.sign_in("password", "ada@example.com", PASSWORD).await);
    assert!(
        old.sign_in("password", "ada@example.com", NEW_PASSWORD)
            .await
    );
    assert_eq!(old.through_gateway(app).await.status(), 200);
    // The link was for one use.
    let again = browser
        .post_form(
            "/auth/password/reset",
            &[("token", &token), ("user", &user), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(again.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_up_with_a_known_address_answers_as_a_new_one_and_mails_the_owner() {
    let (mut mail, server) = open_site().await;
    signed_up(&server, &mut mail, "ada@example.com", "Ada").await;

    let mut answers = Vec::new();
    for email in ["ada@example.com", "bob@example.com"] {
        let r = server
            .browser()
            .post_form(
                "/auth/password/signup",
                &[("email", email), ("password", NEW_PASSWORD)],
            )
            .await;
        answers.push((r.status(), text(r).await));
    }
    for (status, page) in &answers {
        assert_eq!(*status, 200);
        assert!(
            page.contains("Check your email")
                && page.contains("If the address can be used, a link is on its way to it."),
            "{page}"
        );
    }
    let message = next_mail(
        &mut mail,
        "ada@example.com",
        "You already have an account at",
    )
    .await;
    sso::link_in(&message, "/auth/signin");
    next_mail(
        &mut mail,
        "bob@example.com",
        "Confirm your email address for",
    )
    .await;
    // The account is as it was.
    let browser = server.browser();
    assert!(
        !browser
            .sign_in("password", "ada@example.com", NEW_PASSWORD)
            .await
    );
    assert!(
        browser
            .sign_in("password", "ada@example.com", PASSWORD)
            .await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_sign_up_closed_there_is_no_sign_up_page() {
    let mut mail = SmtpServer::start().await;
    let more = passwords_through(&mail);
    let closed = Sections {
        auth: "sign_up = \"closed\"",
        more: &more,
    };
    // A sign-up page under a closed policy is refused at start, naming what to set.
    let err = SsoServer::try_start(closed, &[("AUTHCORE_PASSWORD_SIGN_UP", "on")])
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("AUTHCORE_SIGN_UP"), "{err}");

    let server = SsoServer::start(closed, &[]).await;
    let browser = server.browser();
    let page = browser.get("/auth/password/signup").await;
    assert_ne!(page.status(), 200);
    assert!(!text(page).await.contains("new-password"));
    let signin = text(browser.get("/auth/signin").await).await;
    assert!(signin.contains("/auth/password/forgot"), "{signin}");
    assert!(!signin.contains("/auth/password/signup"), "{signin}");
    let r = browser
        .post_form(
            "/auth/password/signup",
            &[("email", "eve@example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_ne!(r.status(), 200);
    // No account was made and nothing was mailed: the next mail to the address is the
    // answer to a reset for an address without an account.
    browser
        .post_form("/auth/password/forgot", &[("email", "eve@example.com")])
        .await;
    let message = next_mail(&mut mail, "eve@example.com", "Password reset asked for at").await;
    sso::link_in(&message, "/auth/signin");
    assert!(
        !browser
            .sign_in("password", "eve@example.com", PASSWORD)
            .await
    );
}
