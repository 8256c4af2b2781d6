//! The HTTP email services Auth.js ships presets for: Resend, SendGrid, Postmark, Mailgun,
//! Loops and Forward Email (`@auth/core/providers/<name>`). Each preset sends the Auth.js
//! default mail ([`SignInMail`](super::mail::SignInMail)) through the service's API with the
//! key from [`EmailProvider::api_key`] or `AUTH_<ID>_KEY` (for example `AUTH_RESEND_KEY`);
//! building the config fails when the key is missing.
//!
//! ```
//! use authcore::AuthConfig;
//! use authcore::adapter::MemoryAdapter;
//! use authcore::providers::email::services;
//!
//! let config = AuthConfig::builder()
//!     .secret("a long random secret-xxxxxxxxxxx")
//!     .adapter(MemoryAdapter::new())
//!     .provider(services::resend().api_key("re_123").with_from("Me <me@example.com>"))
//!     .build()
//!     .unwrap();
//! # let _ = config;
//! ```
//!
//! | Preset | id | API | Auth |
//! |---|---|---|---|
//! | [`resend()`] | `resend` | `POST https://api.resend.com/emails` (JSON) | `Bearer` key |
//! | [`sendgrid()`] | `sendgrid` | `POST https://api.sendgrid.com/v3/mail/send` (JSON) | `Bearer` key |
//! | [`postmark()`] | `postmark` | `POST https://api.postmarkapp.com/email` (JSON) | `X-Postmark-Server-Token` |
//! | [`mailgun()`] | `mailgun` | `POST https://api.mailgun.net/v3/<domain>/messages` (form) | Basic `api:<key>` |
//! | [`loops()`] | `loops` | `POST https://app.loops.so/api/v1/transactional` (JSON) | `Bearer` key |
//! | [`forwardemail()`] | `forwardemail` | `POST https://api.forwardemail.net/v1/emails` (JSON) | Basic `<key>:` |
//!
//! Differences from Auth.js (fixes): Mailgun's domain is taken from the address inside
//! `from` (Auth.js keeps the closing `>` of `Name <a@b>`), its `from` is not wrapped a
//! second time when it already has a display name, and its body is form-urlencoded rather
//! than multipart (both are accepted by the API). A service's error answer is reported with
//! its status and at most 512 bytes of its body.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use serde_json::json;

use super::{EmailProvider, VerificationRequest};
use crate::error::BoxError;
use crate::http_client::{HttpClient, default_client};

/// Default sender of the presets (Auth.js).
pub const DEFAULT_FROM: &str = "Auth.js <no-reply@authjs.dev>";

/// Longest part of a service's error answer kept in the error message.
const MAX_ERROR_BODY: usize = 512;

/// One HTTP email service.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmailService {
    /// Resend.
    Resend,
    /// Twilio SendGrid.
    SendGrid,
    /// Postmark (message stream `outbound`).
    Postmark,
    /// Mailgun in the US or EU region.
    Mailgun {
        /// `true` for `api.eu.mailgun.net`.
        eu: bool,
    },
    /// Loops: sends the transactional mail `transactional_id` with the data variable `url`
    /// (the mail itself is designed in Loops, not rendered here).
    Loops {
        /// The Loops transactional email id.
        transactional_id: String,
    },
    /// Forward Email.
    ForwardEmail,
}

/// Why a service did not take the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The provider has no API key.
    #[error("{service}: missing API key")]
    MissingApiKey {
        /// Service name.
        service: &'static str,
    },
    /// No HTTP client: authcore is built without its `reqwest` feature and the preset was
    /// given none ([`ServiceTransport::http_client`]).
    #[error(
        "{service}: no HTTP client: enable authcore's `reqwest` feature or give one with ServiceTransport::http_client"
    )]
    NoHttpClient {
        /// Service name.
        service: &'static str,
    },
    /// Mailgun needs a sender address with a domain.
    #[error("Mailgun: malformed domain in `from`")]
    MailgunDomain,
    /// The mail could not be rendered.
    #[error(transparent)]
    Mail(#[from] super::mail::MailError),
    /// The request could not be built.
    #[error("{service}: {source}")]
    Request {
        /// Service name.
        service: &'static str,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// The service answered with an error status.
    #[error("{service} error: HTTP {status}: {body}")]
    Rejected {
        /// Service name.
        service: &'static str,
        /// HTTP status.
        status: u16,
        /// Start of the answer body.
        body: String,
    },
}

impl EmailService {
    /// The Auth.js provider id.
    pub fn id(&self) -> &'static str {
        match self {
            EmailService::Resend => "resend",
            EmailService::SendGrid => "sendgrid",
            EmailService::Postmark => "postmark",
            EmailService::Mailgun { .. } => "mailgun",
            EmailService::Loops { .. } => "loops",
            EmailService::ForwardEmail => "forwardemail",
        }
    }

    /// The Auth.js provider name.
    pub fn name(&self) -> &'static str {
        match self {
            EmailService::Resend => "Resend",
            EmailService::SendGrid => "SendGrid",
            EmailService::Postmark => "Postmark",
            EmailService::Mailgun { .. } => "Mailgun",
            EmailService::Loops { .. } => "Loops",
            EmailService::ForwardEmail => "Forward Email",
        }
    }

    /// The API origin (`https://api.resend.com` …).
    pub fn api_origin(&self) -> &'static str {
        match self {
            EmailService::Resend => "https://api.resend.com",
            EmailService::SendGrid => "https://api.sendgrid.com",
            EmailService::Postmark => "https://api.postmarkapp.com",
            EmailService::Mailgun { eu: false } => "https://api.mailgun.net",
            EmailService::Mailgun { eu: true } => "https://api.eu.mailgun.net",
            EmailService::Loops { .. } => "https://app.loops.so",
            EmailService::ForwardEmail => "https://api.forwardemail.net",
        }
    }

    /// The HTTP request that sends `request`'s link, against `api_origin` (normally
    /// [`EmailService::api_origin`]). Pure: no I/O.
    pub fn http_request(
        &self,
        request: &VerificationRequest,
        api_origin: &str,
    ) -> Result<http::Request<Bytes>, ServiceError> {
        let service = self.name();
        let key = request
            .api_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .ok_or(ServiceError::MissingApiKey { service })?;
        let origin = api_origin.trim_end_matches('/');
        let to = request.identifier.as_str();
        let from = request.from.as_str();
        let bearer = format!("Bearer {key}");
        let (path, auth_header, content_type, body): (String, (&str, String), &str, Vec<u8>) =
            match self {
                EmailService::Loops { transactional_id } => (
                    "/api/v1/transactional".into(),
                    ("authorization", bearer),
                    "application/json",
                    json_body(&json!({
                        "transactionalId": transactional_id,
                        "email": to,
                        "dataVariables": { "url": request.url },
                    })),
                ),
                EmailService::Resend => {
                    let mail = request.default_mail()?;
                    (
                        "/emails".into(),
                        ("authorization", bearer),
                        "application/json",
                        plain_json_mail(from, to, &mail),
                    )
                }
                EmailService::ForwardEmail => {
                    let mail = request.default_mail()?;
                    (
                        "/v1/emails".into(),
                        (
                            "authorization",
                            format!("Basic {}", STANDARD.encode(format!("{key}:"))),
                        ),
                        "application/json",
                        plain_json_mail(from, to, &mail),
                    )
                }
                EmailService::SendGrid => {
                    let mail = request.default_mail()?;
                    (
                        "/v3/mail/send".into(),
                        ("authorization", bearer),
                        "application/json",
                        json_body(&json!({
                            "personalizations": [{ "to": [{ "email": to }] }],
                            "from": { "email": from },
                            "subject": mail.subject,
                            "content": [
                                { "type": "text/plain", "value": mail.text },
                                { "type": "text/html", "value": mail.html },
                            ],
                        })),
                    )
                }
                EmailService::Postmark => {
                    let mail = request.default_mail()?;
                    (
                        "/email".into(),
                        ("x-postmark-server-token", key.to_owned()),
                        "application/json",
                        json_body(&json!({
                            "From": from, "To": to, "Subject": mail.subject,
                            "TextBody": mail.text, "HtmlBody": mail.html,
                            "MessageStream": "outbound",
                        })),
                    )
                }
                EmailService::Mailgun { .. } => {
                    let mail = request.default_mail()?;
                    let domain = mailgun_domain(from).ok_or(ServiceError::MailgunDomain)?;
                    let sender = if from.contains('<') {
                        from.to_owned()
                    } else {
                        format!("{} <{from}>", request.provider_name)
                    };
                    let form = url::form_urlencoded::Serializer::new(String::new())
                        .append_pair("from", &sender)
                        .append_pair("to", to)
                        .append_pair("subject", &mail.subject)
                        .append_pair("html", &mail.html)
                        .append_pair("text", &mail.text)
                        .finish();
                    (
                        format!("/v3/{domain}/messages"),
                        (
                            "authorization",
                            format!("Basic {}", STANDARD.encode(format!("api:{key}"))),
                        ),
                        "application/x-www-form-urlencoded",
                        form.into_bytes(),
                    )
                }
            };
        let mut builder = http::Request::post(format!("{origin}{path}"))
            .header(auth_header.0, auth_header.1)
            .header(http::header::CONTENT_TYPE, content_type);
        if matches!(self, EmailService::Postmark) {
            builder = builder.header(http::header::ACCEPT, "application/json");
        }
        builder
            .body(Bytes::from(body))
            .map_err(|e| ServiceError::Request {
                service,
                source: e.into(),
            })
    }

    /// The preset: id, name and default `from` of Auth.js, sending through the service.
    pub fn provider(self) -> EmailProvider {
        self.provider_with(ServiceTransport::default())
    }

    /// The preset with another API origin or HTTP client (proxies, tests).
    pub fn provider_with(self, transport: ServiceTransport) -> EmailProvider {
        let service = Arc::new(self);
        let mut provider = EmailProvider::new(DEFAULT_FROM)
            .with_id(service.id())
            .with_name(service.name())
            .send_verification_request(move |request: VerificationRequest| {
                let service = Arc::clone(&service);
                let transport = transport.clone();
                async move { service.deliver(&request, &transport).await }
            });
        provider.requires_api_key = true;
        provider
    }

    async fn deliver(
        &self,
        request: &VerificationRequest,
        transport: &ServiceTransport,
    ) -> Result<(), BoxError> {
        let origin = transport.api_origin.as_deref().unwrap_or(self.api_origin());
        let http_request = self.http_request(request, origin)?;
        let client =
            transport
                .http
                .clone()
                .or_else(default_client)
                .ok_or(ServiceError::NoHttpClient {
                    service: self.name(),
                })?;
        let response = client
            .send(http_request)
            .await
            .map_err(|source| ServiceError::Request {
                service: self.name(),
                source,
            })?;
        if response.status().is_success() {
            return Ok(());
        }
        let body = response.body();
        let mut end = body.len().min(MAX_ERROR_BODY);
        let text = loop {
            match std::str::from_utf8(&body[..end]) {
                Ok(t) => break t,
                Err(e) => end = e.valid_up_to(),
            }
        };
        Err(ServiceError::Rejected {
            service: self.name(),
            status: response.status().as_u16(),
            body: text.to_owned(),
        }
        .into())
    }
}

/// Where a service preset sends its requests.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ServiceTransport {
    /// Replaces the service's API origin (e.g. `http://127.0.0.1:8025`).
    pub api_origin: Option<String>,
    /// Replaces the shared reqwest client (required without the `reqwest` feature).
    pub http: Option<Arc<dyn HttpClient>>,
}

impl ServiceTransport {
    /// Sends to `origin` instead of the service's own API origin.
    pub fn api_origin(mut self, origin: impl Into<String>) -> Self {
        self.api_origin = Some(origin.into());
        self
    }
    /// Uses `client` for the requests.
    pub fn http_client(mut self, client: Arc<dyn HttpClient>) -> Self {
        self.http = Some(client);
        self
    }
}

impl std::fmt::Debug for ServiceTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceTransport")
            .field("api_origin", &self.api_origin)
            .finish_non_exhaustive()
    }
}

/// The `{from, to, subject, html, text}` body Resend and Forward Email share.
fn plain_json_mail(from: &str, to: &str, mail: &super::mail::SignInMail) -> Vec<u8> {
    json_body(&json!({
        "from": from, "to": to, "subject": mail.subject,
        "html": mail.html, "text": mail.text,
    }))
}

fn json_body(value: &serde_json::Value) -> Vec<u8> {
    // Serialising a `Value` cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

/// The domain of the address in `from` (`Name <a@example.com>` → `example.com`).
fn mailgun_domain(from: &str) -> Option<&str> {
    let address = match (from.rfind('<'), from.rfind('>')) {
        (Some(open), Some(close)) if open < close => &from[open + 1..close],
        _ => from,
    };
    let domain = address.rsplit_once('@')?.1.trim();
    (!domain.is_empty() && !domain.contains(['/', '?', '#', ' '])).then_some(domain)
}

/// Resend (`AUTH_RESEND_KEY`).
pub fn resend() -> EmailProvider {
    EmailService::Resend.provider()
}
/// SendGrid (`AUTH_SENDGRID_KEY`).
pub fn sendgrid() -> EmailProvider {
    EmailService::SendGrid.provider()
}
/// Postmark (`AUTH_POSTMARK_KEY`).
pub fn postmark() -> EmailProvider {
    EmailService::Postmark.provider()
}
/// Mailgun, US region (`AUTH_MAILGUN_KEY`); [`EmailService::Mailgun`] with `eu: true` for
/// the EU region.
pub fn mailgun() -> EmailProvider {
    EmailService::Mailgun { eu: false }.provider()
}
/// Loops with the transactional mail `transactional_id` (`AUTH_LOOPS_KEY`).
pub fn loops(transactional_id: impl Into<String>) -> EmailProvider {
    EmailService::Loops {
        transactional_id: transactional_id.into(),
    }
    .provider()
}
/// Forward Email (`AUTH_FORWARDEMAIL_KEY`).
pub fn forwardemail() -> EmailProvider {
    EmailService::ForwardEmail.provider()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Theme;

    fn request(key: Option<&str>) -> VerificationRequest {
        VerificationRequest {
            identifier: "user@example.com".into(),
            token: "t".into(),
            expires: time::OffsetDateTime::UNIX_EPOCH,
            url: "https://app.test/auth/callback/x?token=t&email=user%40example.com".into(),
            provider: "x".into(),
            provider_name: "Mailgun".into(),
            from: DEFAULT_FROM.into(),
            api_key: key.map(str::to_owned),
            theme: Theme::default(),
            purpose: super::super::LinkPurpose::SignIn,
        }
    }

    #[test]
    fn mailgun_domain_and_sender() {
        assert_eq!(mailgun_domain(DEFAULT_FROM), Some("authjs.dev"));
        assert_eq!(mailgun_domain("me@mg.example.com"), Some("mg.example.com"));
        assert_eq!(mailgun_domain("nobody"), None);
        assert_eq!(mailgun_domain("x@"), None);
        let mut r = request(Some("k"));
        r.from = "me@mg.example.com".into();
        let req = EmailService::Mailgun { eu: true }
            .http_request(&r, "https://api.eu.mailgun.net")
            .unwrap();
        assert_eq!(
            req.uri(),
            "https://api.eu.mailgun.net/v3/mg.example.com/messages"
        );
        let form: Vec<(String, String)> = url::form_urlencoded::parse(req.body())
            .into_owned()
            .collect();
        assert_eq!(
            form[0],
            ("from".into(), "Mailgun <me@mg.example.com>".into())
        );
    }

    #[test]
    fn missing_key_is_refused_before_any_request() {
        for service in [
            EmailService::Resend,
            EmailService::SendGrid,
            EmailService::Postmark,
            EmailService::Mailgun { eu: false },
            EmailService::Loops {
                transactional_id: "tx".into(),
            },
            EmailService::ForwardEmail,
        ] {
            for key in [None, Some("")] {
                assert!(matches!(
                    service.http_request(&request(key), service.api_origin()),
                    Err(ServiceError::MissingApiKey { .. })
                ));
            }
        }
    }

    #[test]
    fn debug_hides_the_key_and_token() {
        let r = request(Some("re_secret_key"));
        let text = format!("{r:?}");
        assert!(
            !text.contains("re_secret_key") && !text.contains("token: "),
            "{text}"
        );
    }
}
