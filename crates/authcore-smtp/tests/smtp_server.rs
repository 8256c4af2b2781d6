//! Sends the sign-in mail to a real SMTP server (nodemailer's `smtp-server`, started from
//! `testsupport/smtp/server.mjs`) and checks what it received.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use authcore::adapter::MemoryAdapter;
use authcore::providers::email::VerificationRequest;
use authcore::{Auth, AuthConfig};
use authcore_smtp::{SmtpSender, email_provider};
use bytes::Bytes;
use http_body_util::Full;
use tokio::time::timeout;

#[path = "support/smtp.rs"]
mod smtp;
use smtp::SmtpServer;

const FROM: &str = "Auth.js <no-reply@authjs.dev>";

async fn request_link(auth: &Auth, email: &str) -> http::Response<authcore::ResponseBody> {
    let token = "a".repeat(64);
    let cookie = authcore::csrf::csrf_cookie_value(&token, "secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
        .replace('|', "%7C");
    let body = format!(
        "csrfToken={token}&email={}&callbackUrl=%2Finbox",
        email.replace('@', "%40")
    );
    let req = http::Request::post("https://authjs.test/auth/signin/email")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", format!("__Host-authjs.csrf-token={cookie}"))
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    auth.handle(req).await
}

fn auth_with(sender: SmtpSender) -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret("secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(email_provider(sender, FROM))
            .adapter(MemoryAdapter::new())
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn sign_in_mail_is_delivered_through_the_email_provider() {
    let mut server = SmtpServer::start().await;
    let auth = auth_with(server.sender());
    let resp = request_link(&auth, "User@Example.com").await;
    assert_eq!(resp.status(), 302);
    assert_eq!(
        resp.headers()["location"],
        "https://authjs.test/auth/verify-request?provider=email&type=email"
    );

    let mail = server.next_message().await;
    assert_eq!(mail["envelope"]["from"], "no-reply@authjs.dev");
    assert_eq!(
        mail["envelope"]["to"],
        serde_json::json!(["user@example.com"])
    );
    assert_eq!(mail["from"], "\"Auth.js\" <no-reply@authjs.dev>");
    assert_eq!(mail["to"], "user@example.com");
    assert_eq!(mail["subject"], "Sign in to authjs.test");
    assert!(
        mail["contentType"]
            .as_str()
            .unwrap()
            .starts_with("multipart/alternative"),
        "{mail}"
    );

    let text = mail["text"].as_str().unwrap();
    let prefix = "Sign in to authjs.test\nhttps://authjs.test/auth/callback/email?callbackUrl=";
    assert!(text.starts_with(prefix), "{text}");
    let url = text.lines().nth(1).unwrap();
    assert!(
        url.contains("&token=") && url.ends_with("&email=user%40example.com"),
        "{url}"
    );

    let html = mail["html"].as_str().unwrap();
    let escaped = url.replace('&', "&#38;");
    assert!(html.contains(&format!("<a href=\"{escaped}\"")), "{html}");
    assert!(
        html.contains("Sign in to <strong>authjs&#8203;.test</strong>"),
        "{html}"
    );
    assert!(html.contains("bgcolor=\"#346df1\""), "{html}");

    // The link for another address fails; the real one signs in once.
    let forged = url.replace("email=user%40example.com", "email=other%40example.com");
    assert_eq!(open_link(&auth, &forged).await.1, VERIFICATION);
    let (cookies, location) = open_link(&auth, url).await;
    assert_eq!(location, "https://authjs.test/inbox");
    assert!(
        cookies.contains("__Secure-authjs.session-token="),
        "{cookies}"
    );
    assert_eq!(open_link(&auth, url).await.1, VERIFICATION);
}

const VERIFICATION: &str = "https://authjs.test/auth/error?error=Verification";

/// Opens a sign-in link; returns the `set-cookie` headers joined and the redirect target.
async fn open_link(auth: &Auth, url: &str) -> (String, String) {
    let req = http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = auth.handle(req).await;
    assert_eq!(resp.status(), 302);
    let cookies = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("; ");
    (
        cookies,
        resp.headers()["location"].to_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn expired_link_fails() {
    let mut server = SmtpServer::start().await;
    let auth = Auth::new(
        AuthConfig::builder()
            .secret("secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(email_provider(server.sender(), FROM).max_age(Duration::ZERO))
            .adapter(MemoryAdapter::new())
            .build()
            .unwrap(),
    );
    assert_eq!(request_link(&auth, "user@example.com").await.status(), 302);
    let mail = server.next_message().await;
    let url = mail["text"]
        .as_str()
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_owned();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(open_link(&auth, &url).await.1, VERIFICATION);
}

#[tokio::test]
async fn rejected_recipient_is_an_error() {
    let server = SmtpServer::start().await;
    let err = server
        .sender()
        .send_sign_in_link(&VerificationRequest::new(
            "nobody@reject.example",
            "https://authjs.test/auth/callback/email?token=t&email=nobody%40reject.example",
            FROM,
        ))
        .await
        .unwrap_err();
    assert!(err.is_permanent(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "Email (nobody@reject.example) could not be sent"
    );

    // Through the provider, Auth.js turns the sending error into `error=Configuration`.
    let auth = auth_with(server.sender());
    let resp = request_link(&auth, "nobody@reject.example").await;
    assert_eq!(resp.status(), 302);
    let location = resp.headers()["location"].to_str().unwrap();
    assert!(location.contains("error=Configuration"), "{location}");
}

#[tokio::test]
async fn unreachable_server_fails_in_bounded_time() {
    // A port nobody listens on: connection refused.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let sender = SmtpSender::plain_localhost(closed).with_timeout(Duration::from_secs(2));
    let result = timeout(
        Duration::from_secs(10),
        sender.send_sign_in_link(&VerificationRequest::new(
            "a@b.example",
            "https://authjs.test/x",
            FROM,
        )),
    )
    .await
    .expect("send did not finish within 10 s");
    assert!(
        matches!(result, Err(authcore_smtp::Error::Send { .. })),
        "{result:?}"
    );

    // A server that accepts the connection but never greets: the timeout applies.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let _hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            held.push(sock);
        }
    });
    let sender = SmtpSender::plain_localhost(port).with_timeout(Duration::from_millis(500));
    let started = std::time::Instant::now();
    let result = timeout(
        Duration::from_secs(10),
        sender.send_sign_in_link(&VerificationRequest::new(
            "a@b.example",
            "https://authjs.test/x",
            FROM,
        )),
    )
    .await
    .expect("send did not finish within 10 s");
    assert!(
        matches!(result, Err(authcore_smtp::Error::Timeout { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The test CA that signed testsupport/smtp/tls/server.pem (for 127.0.0.1).
fn test_ca() -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/smtp/tls/ca.pem"),
    )
    .unwrap()
}

fn tls_sender(url: &str) -> SmtpSender {
    SmtpSender::from_url(url)
        .unwrap()
        .with_timeout(Duration::from_secs(10))
        .with_root_certificate(&test_ca())
        .unwrap()
}

async fn send_to(sender: &SmtpSender) -> Result<(), authcore_smtp::Error> {
    sender
        .send_sign_in_link(&VerificationRequest::new(
            "user@example.com",
            "https://authjs.test/auth/callback/email?token=t&email=user%40example.com",
            FROM,
        ))
        .await
}

#[tokio::test]
async fn starttls_with_authentication() {
    let mut server =
        SmtpServer::start_with(&[("SMTP_TLS", "starttls"), ("SMTP_AUTH", "mailer:s3cret")]).await;
    let port = server.port;
    let sender = tls_sender(&format!(
        "smtp://mailer:s3cret@127.0.0.1:{port}?tls=required"
    ));
    // Through the whole sign-in flow: the link arrives over TLS from the authenticated user.
    let auth = auth_with(sender);
    assert_eq!(request_link(&auth, "user@example.com").await.status(), 302);
    let mail = server.next_message().await;
    assert_eq!(mail["secure"], true);
    assert_eq!(mail["user"], "mailer");
    assert_eq!(mail["envelope"]["to"][0], "user@example.com");

    // The default (STARTTLS when offered) upgrades too.
    send_to(&tls_sender(&format!(
        "smtp://mailer:s3cret@127.0.0.1:{port}"
    )))
    .await
    .unwrap();
    assert_eq!(server.next_message().await["secure"], true);

    // A wrong password is refused, and the error names neither it nor the URL.
    let err = send_to(&tls_sender(&format!(
        "smtp://mailer:wrong-pw@127.0.0.1:{port}?tls=required"
    )))
    .await
    .unwrap_err();
    assert!(err.is_permanent(), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("wrong-pw"));

    // A certificate from an unknown CA is refused before any credential is sent.
    let untrusted = SmtpSender::from_url(&format!(
        "smtp://mailer:s3cret@127.0.0.1:{port}?tls=required"
    ))
    .unwrap()
    .with_timeout(Duration::from_secs(10));
    let err = send_to(&untrusted).await.unwrap_err();
    assert!(
        format!("{:?}", std::error::Error::source(&err)).contains("UnknownIssuer"),
        "{err:?}"
    );
}

#[tokio::test]
async fn implicit_tls_with_authentication() {
    let mut server =
        SmtpServer::start_with(&[("SMTP_TLS", "implicit"), ("SMTP_AUTH", "mailer:s3cret")]).await;
    let sender = tls_sender(&format!("smtps://mailer:s3cret@127.0.0.1:{}", server.port));
    send_to(&sender).await.unwrap();
    let mail = server.next_message().await;
    assert_eq!(mail["secure"], true);
    assert_eq!(mail["user"], "mailer");
}

#[tokio::test]
async fn required_tls_is_not_downgraded() {
    // The plain server offers no STARTTLS: `tls=required` fails instead of sending in clear.
    let server = SmtpServer::start().await;
    let sender = tls_sender(&format!(
        "smtp://mailer:s3cret@127.0.0.1:{}?tls=required",
        server.port
    ));
    assert!(send_to(&sender).await.is_err());
}

/// Signs `email` in through its magic link (which verifies the address) and reads the
/// session back as the account functions take it.
async fn signed_in(
    auth: &Auth,
    server: &mut SmtpServer,
    email: &str,
) -> authcore::account::CurrentSession {
    assert_eq!(request_link(auth, email).await.status(), 302);
    let mail = server.next_message().await;
    let link = mail["text"]
        .as_str()
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_owned();
    let (cookies, _) = open_link(auth, &link).await;
    let session = cookies
        .split("; ")
        .find(|c| c.starts_with("__Secure-authjs.session-token="))
        .unwrap();
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::COOKIE, session.parse().unwrap());
    let uri = "https://authjs.test/auth/session".parse().unwrap();
    auth.current_session(&uri, &headers).await.unwrap()
}

#[tokio::test]
async fn security_notices_are_mailed_to_the_verified_address() {
    let mut server = SmtpServer::start().await;
    let auth = Auth::new(
        AuthConfig::builder()
            .secret("secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(email_provider(server.sender(), FROM))
            .adapter(MemoryAdapter::new())
            .two_factor(authcore::two_factor::TwoFactorOptions::default())
            .build()
            .unwrap(),
    );

    // The account deleted, from a request's session: the link is on the request's origin.
    let me = signed_in(&auth, &mut server, "leaving@example.com").await;
    auth.delete_user(&me).await.unwrap();
    let mail = server.next_message().await;
    assert_eq!(mail["to"], "leaving@example.com");
    assert_eq!(mail["from"], "\"Auth.js\" <no-reply@authjs.dev>");
    assert_eq!(mail["subject"], "Security alert: your account was deleted");
    let text = mail["text"].as_str().unwrap();
    assert!(text.starts_with("Your account was deleted.\n"), "{text}");
    assert!(
        text.contains("\nhttps://authjs.test/auth/account\n"),
        "{text}"
    );
    let html = mail["html"].as_str().unwrap();
    assert!(
        html.contains("href=\"https://authjs.test/auth/account\""),
        "{html}"
    );

    // An operator's TOTP enrolment has no request, and no URL is configured: no link.
    let me = signed_in(&auth, &mut server, "user@example.com").await;
    auth.enrol_totp_for_user(&me.user_id).await.unwrap();
    let mail = server.next_message().await;
    assert_eq!(mail["to"], "user@example.com");
    assert_eq!(
        mail["subject"],
        "Security alert: an authenticator app was set up for your account"
    );
    assert!(!mail["text"].as_str().unwrap().contains("http"), "{mail}");
}
