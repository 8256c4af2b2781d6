//! The HTTP email service presets (Auth.js `providers/resend.ts`, `sendgrid.ts`,
//! `postmark.ts`, `mailgun.ts`, `loops.ts`, `forwardemail.ts`; sent by
//! `lib/actions/signin/send-token.ts`) send their request to a local HTTP server standing in
//! for the service (the real APIs cannot be reached from here); the link in what was sent
//! signs in.
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::env::Env;
use authcore::providers::email::EmailProvider;
use authcore::providers::email::services::{self, EmailService, ServiceTransport};
use authcore::{AuthConfig, ConfigError};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::Value;

/// One request the stand-in received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers[name].to_str().unwrap()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// A local HTTP server answering every POST with `status`, recording what it got.
struct StandIn {
    origin: String,
    received: Arc<Mutex<Vec<Received>>>,
}

async fn stand_in(status: StatusCode) -> StandIn {
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = received.clone();
    let app = axum::Router::new().fallback(axum::routing::post(
        move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(Received {
                    path: uri.path().to_owned(),
                    headers,
                    body,
                });
                (status, r#"{"message":"stand-in answer"}"#)
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    StandIn { origin, received }
}

fn auth_for(provider: EmailProvider, db: &MemoryAdapter) -> authcore::Auth {
    auth_with(builder().provider(provider).adapter(db.clone())).0
}

async fn request_link(auth: &authcore::Auth, id: &str) -> TestResponse {
    let (csrf, token) = csrf_pair();
    send(
        auth,
        post(&format!("/auth/signin/{id}"))
            .header("cookie", csrf)
            .body(form(&[
                ("csrfToken", &token),
                ("email", "User@Example.com"),
                ("callbackUrl", "/inbox"),
            ]))
            .unwrap(),
    )
    .await
}

async fn follow(auth: &authcore::Auth, url: &str) -> TestResponse {
    send(auth, http::Request::get(url).body(empty()).unwrap()).await
}

/// Requests a link through `service` and returns what the stand-in received; checks the
/// verify-request redirect and that the link in the message signs in exactly once.
async fn round_trip(
    service: EmailService,
    key: &str,
    link_of: fn(&Received) -> String,
) -> Received {
    let server = stand_in(StatusCode::OK).await;
    let db = MemoryAdapter::new();
    let id = service.id();
    let provider = service
        .provider_with(ServiceTransport::default().api_origin(&server.origin))
        .api_key(key);
    let auth = auth_for(provider, &db);
    let r = request_link(&auth, id).await;
    assert_eq!(
        r.location().unwrap(),
        format!("https://authjs.test/auth/verify-request?provider={id}&type=email")
    );
    let got = server.received.lock().unwrap().pop().unwrap();
    let link = link_of(&got);
    assert!(
        link.starts_with(&format!(
            "https://authjs.test/auth/callback/{id}?callbackUrl="
        )),
        "{link}"
    );
    let first = follow(&auth, &link).await;
    assert_eq!(first.location(), Some("https://authjs.test/inbox"));
    assert!(first.cookie(SESSION_COOKIE).is_some());
    let again = follow(&auth, &link).await;
    assert_eq!(
        again.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
    got
}

fn link_in_text(text: &str) -> String {
    text.lines().nth(1).unwrap().to_owned()
}

fn assert_default_mail(subject: &str, text: &str, html: &str) {
    assert_eq!(subject, "Sign in to authjs.test");
    assert!(text.starts_with("Sign in to authjs.test\nhttps://authjs.test/auth/callback/"));
    assert!(text.ends_with("\n\n"));
    assert!(html.contains("Sign in to <strong>authjs&#8203;.test</strong>"));
    assert!(html.contains(&link_in_text(text).replace('&', "&#38;")));
}

#[tokio::test]
async fn resend() {
    let got = round_trip(EmailService::Resend, "re_key", |r| {
        link_in_text(r.json()["text"].as_str().unwrap())
    })
    .await;
    assert_eq!(got.path, "/emails");
    assert_eq!(got.header("authorization"), "Bearer re_key");
    assert_eq!(got.header("content-type"), "application/json");
    let body = got.json();
    assert_eq!(body["from"], "Auth.js <no-reply@authjs.dev>");
    assert_eq!(body["to"], "user@example.com");
    assert_default_mail(
        body["subject"].as_str().unwrap(),
        body["text"].as_str().unwrap(),
        body["html"].as_str().unwrap(),
    );
}

#[tokio::test]
async fn sendgrid() {
    let got = round_trip(EmailService::SendGrid, "SG.key", |r| {
        link_in_text(r.json()["content"][0]["value"].as_str().unwrap())
    })
    .await;
    assert_eq!(got.path, "/v3/mail/send");
    assert_eq!(got.header("authorization"), "Bearer SG.key");
    let body = got.json();
    assert_eq!(
        body["personalizations"],
        serde_json::json!([{ "to": [{ "email": "user@example.com" }] }])
    );
    assert_eq!(body["from"]["email"], "Auth.js <no-reply@authjs.dev>");
    assert_eq!(body["content"][0]["type"], "text/plain");
    assert_eq!(body["content"][1]["type"], "text/html");
    assert_default_mail(
        body["subject"].as_str().unwrap(),
        body["content"][0]["value"].as_str().unwrap(),
        body["content"][1]["value"].as_str().unwrap(),
    );
}

#[tokio::test]
async fn postmark() {
    let got = round_trip(EmailService::Postmark, "pm-token", |r| {
        link_in_text(r.json()["TextBody"].as_str().unwrap())
    })
    .await;
    assert_eq!(got.path, "/email");
    assert_eq!(got.header("x-postmark-server-token"), "pm-token");
    assert_eq!(got.header("accept"), "application/json");
    assert!(got.headers.get("authorization").is_none());
    let body = got.json();
    assert_eq!(body["From"], "Auth.js <no-reply@authjs.dev>");
    assert_eq!(body["To"], "user@example.com");
    assert_eq!(body["MessageStream"], "outbound");
    assert_default_mail(
        body["Subject"].as_str().unwrap(),
        body["TextBody"].as_str().unwrap(),
        body["HtmlBody"].as_str().unwrap(),
    );
}

fn form_field(r: &Received, name: &str) -> String {
    form_urlencoded::parse(&r.body)
        .find(|(k, _)| k == name)
        .unwrap()
        .1
        .into_owned()
}

#[tokio::test]
async fn mailgun() {
    let got = round_trip(EmailService::Mailgun { eu: false }, "mg-key", |r| {
        link_in_text(&form_field(r, "text"))
    })
    .await;
    // The domain comes from the address in `from`, without Auth.js's stray `>`.
    assert_eq!(got.path, "/v3/authjs.dev/messages");
    // Basic base64("api:mg-key").
    assert_eq!(got.header("authorization"), "Basic YXBpOm1nLWtleQ==");
    assert_eq!(
        got.header("content-type"),
        "application/x-www-form-urlencoded"
    );
    assert_eq!(form_field(&got, "from"), "Auth.js <no-reply@authjs.dev>");
    assert_eq!(form_field(&got, "to"), "user@example.com");
    assert_default_mail(
        &form_field(&got, "subject"),
        &form_field(&got, "text"),
        &form_field(&got, "html"),
    );
}

#[tokio::test]
async fn loops() {
    let got = round_trip(
        EmailService::Loops {
            transactional_id: "tx_123".into(),
        },
        "loops-key",
        |r| {
            r.json()["dataVariables"]["url"]
                .as_str()
                .unwrap()
                .to_owned()
        },
    )
    .await;
    assert_eq!(got.path, "/api/v1/transactional");
    assert_eq!(got.header("authorization"), "Bearer loops-key");
    let body = got.json();
    assert_eq!(body["transactionalId"], "tx_123");
    assert_eq!(body["email"], "user@example.com");
}

#[tokio::test]
async fn forwardemail() {
    let got = round_trip(EmailService::ForwardEmail, "fe-key", |r| {
        link_in_text(r.json()["text"].as_str().unwrap())
    })
    .await;
    assert_eq!(got.path, "/v1/emails");
    // Basic base64("fe-key:").
    assert_eq!(got.header("authorization"), "Basic ZmUta2V5Og==");
    let body = got.json();
    assert_eq!(body["to"], "user@example.com");
    assert_default_mail(
        body["subject"].as_str().unwrap(),
        body["text"].as_str().unwrap(),
        body["html"].as_str().unwrap(),
    );
}

#[tokio::test]
async fn api_key_from_env_and_missing_key() {
    let server = stand_in(StatusCode::OK).await;
    let db = MemoryAdapter::new();
    let env = Env::from_pairs([("AUTH_RESEND_KEY", "re_from_env")]);
    let provider =
        EmailService::Resend.provider_with(ServiceTransport::default().api_origin(&server.origin));
    let (auth, _) = auth_with(
        builder()
            .provider(provider)
            .adapter(db.clone())
            .env_defaults(&env),
    );
    request_link(&auth, "resend").await;
    let got = server.received.lock().unwrap().pop().unwrap();
    assert_eq!(got.header("authorization"), "Bearer re_from_env");

    for preset in [
        services::resend(),
        services::sendgrid(),
        services::postmark(),
        services::mailgun(),
        services::loops("tx"),
        services::forwardemail(),
    ] {
        let id = preset.id().to_owned();
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .adapter(MemoryAdapter::new())
            .provider(preset)
            .build()
            .unwrap_err();
        assert_eq!(
            e,
            ConfigError::MissingApiKey {
                provider: id.clone()
            }
        );
        assert!(
            e.to_string()
                .contains(&format!("AUTH_{}_KEY", id.to_uppercase()))
        );
    }
}

#[tokio::test]
async fn service_error_is_configuration_and_leaves_no_usable_link() {
    let server = stand_in(StatusCode::UNPROCESSABLE_ENTITY).await;
    let db = MemoryAdapter::new();
    let provider = EmailService::Resend
        .provider_with(ServiceTransport::default().api_origin(&server.origin))
        .api_key("re_secret_key");
    let (auth, rec) = auth_with(builder().provider(provider).adapter(db.clone()));
    let r = request_link(&auth, "resend").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    let logged = rec.errors().join("\n");
    assert!(logged.contains("Resend error: HTTP 422"), "{logged}");
    assert!(!logged.contains("re_secret_key"), "{logged}");
    assert_eq!(db.verification_token_count(), 0);
    let got = server.received.lock().unwrap().pop().unwrap();
    let link = link_in_text(got.json()["text"].as_str().unwrap());
    assert_eq!(
        follow(&auth, &link).await.location(),
        Some("https://authjs.test/auth/error?error=Verification")
    );
}

#[tokio::test]
async fn unreachable_service_is_configuration() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let db = MemoryAdapter::new();
    let provider = EmailService::Postmark
        .provider_with(ServiceTransport::default().api_origin(format!("http://{closed}")))
        .api_key("k");
    let auth = auth_for(provider, &db);
    let r = request_link(&auth, "postmark").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert_eq!(db.verification_token_count(), 0);
}
