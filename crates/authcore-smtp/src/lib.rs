//! SMTP delivery for authcore's email (magic link) provider: the Rust counterpart of
//! Auth.js's `nodemailer` provider and its default sign-in mail (spec §7).
//!
//! ```
//! use authcore_smtp::{SmtpSender, email_provider};
//! let sender = SmtpSender::from_url("smtps://user:secret@smtp.example.com").unwrap();
//! let provider = email_provider(sender, "Auth.js <no-reply@authjs.dev>");
//! assert_eq!(provider.id(), "email");
//! ```
//!
//! The transport opens one SMTP connection per message (no pool), so a [`SmtpSender`] can be
//! built and dropped anywhere; sending needs a Tokio runtime.
#![forbid(unsafe_code)]

use std::fmt;
use std::time::Duration;

use authcore::providers::{EmailProvider, VerificationRequest};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::{AsyncSmtpTransport, AsyncSmtpTransportBuilder};
use lettre::{AsyncTransport, Message, Tokio1Executor};

/// Default timeout for connecting and for each SMTP command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What can go wrong. No variant carries the SMTP URL or its credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The SMTP URL could not be used (bad syntax, unknown scheme or `tls` value).
    #[error("invalid SMTP URL: {reason}")]
    InvalidSmtpUrl {
        /// Why (never contains the URL itself).
        reason: String,
    },
    /// The sign-in mail could not be rendered (e.g. the link is not an absolute URL).
    #[error(transparent)]
    Mail(#[from] authcore::providers::email::mail::MailError),
    /// A sender or recipient address could not be parsed.
    #[error("invalid {field} address")]
    InvalidAddress {
        /// `from` or `to`.
        field: &'static str,
        /// The parse error.
        #[source]
        source: lettre::address::AddressError,
    },
    /// The message could not be built.
    #[error("cannot build the sign-in email")]
    Message(#[from] lettre::error::Error),
    /// The SMTP exchange failed: connection, timeout, or the server rejected the message
    /// or its recipient (Auth.js: `Email (<to>) could not be sent`).
    #[error("Email ({recipient}) could not be sent")]
    Send {
        /// The recipient address.
        recipient: String,
        /// The SMTP error.
        #[source]
        source: lettre::transport::smtp::Error,
    },
    /// The SMTP exchange did not finish within the sender's timeout.
    #[error("Email ({recipient}) could not be sent: timed out")]
    Timeout {
        /// The recipient address.
        recipient: String,
    },
}

impl Error {
    /// Whether the server refused permanently (5xx), e.g. an unknown recipient.
    pub fn is_permanent(&self) -> bool {
        matches!(self, Error::Send { source, .. } if source.is_permanent())
    }
}

/// An SMTP relay to send sign-in links through.
#[derive(Clone)]
pub struct SmtpSender {
    builder: AsyncSmtpTransportBuilder,
    timeout: Duration,
    /// `scheme://host:port` without credentials, for `Debug`.
    display: String,
}

impl fmt::Debug for SmtpSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSender")
            .field("server", &self.display)
            .finish_non_exhaustive()
    }
}

impl SmtpSender {
    /// From a nodemailer-style URL: `smtp://user:pass@host:port` (STARTTLS when the server
    /// offers it, like nodemailer's `secure: false`; default port 587), `smtp://…?tls=required`
    /// (STARTTLS or fail), `smtp://…?tls=none` (plain text; default port 25) or
    /// `smtps://user:pass@host:port` (implicit TLS; default port 465). User and password are
    /// percent-decoded.
    pub fn from_url(smtp_url: &str) -> Result<Self, Error> {
        let invalid = |reason: String| Error::InvalidSmtpUrl { reason };
        let mut parsed = url::Url::parse(smtp_url).map_err(|e| invalid(e.to_string()))?;
        let host = parsed
            .host_str()
            .ok_or_else(|| invalid("missing host".into()))?
            .to_owned();
        let tls = parsed
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        if parsed.scheme() == "smtp" {
            let others: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| k != "tls")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let mode = match tls.as_deref() {
                None => Some("opportunistic"),
                Some("none") => None,
                Some(other) => Some(other),
            };
            let mut pairs = parsed.query_pairs_mut();
            pairs.clear().extend_pairs(others);
            if let Some(mode) = mode {
                pairs.append_pair("tls", mode);
            }
            drop(pairs);
            if parsed.query() == Some("") {
                parsed.set_query(None);
            }
        }
        let display = match parsed.port() {
            Some(port) => format!("{}://{host}:{port}", parsed.scheme()),
            None => format!("{}://{host}", parsed.scheme()),
        };
        let builder = AsyncSmtpTransport::<Tokio1Executor>::from_url(parsed.as_str())
            .map_err(|e| invalid(e.to_string()))?
            .timeout(Some(DEFAULT_TIMEOUT));
        Ok(SmtpSender {
            builder,
            timeout: DEFAULT_TIMEOUT,
            display,
        })
    }

    /// Plain-text SMTP without authentication to `127.0.0.1:port`: for tests and local
    /// relays only.
    pub fn plain_localhost(port: u16) -> Self {
        SmtpSender {
            builder: AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
                .port(port)
                .timeout(Some(DEFAULT_TIMEOUT)),
            timeout: DEFAULT_TIMEOUT,
            display: format!("smtp://127.0.0.1:{port}"),
        }
    }

    /// Timeout for connecting, for each SMTP command, and for the whole exchange of one
    /// message (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.builder = self.builder.timeout(Some(timeout));
        self.timeout = timeout;
        self
    }

    /// Sends `message` to the recipients of its envelope.
    pub async fn send_message(&self, message: Message) -> Result<(), Error> {
        let recipient = message
            .envelope()
            .to()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let transport: AsyncSmtpTransport<Tokio1Executor> = self.builder.clone().build();
        match tokio::time::timeout(self.timeout, transport.send(message)).await {
            Ok(Ok(_response)) => Ok(()),
            Ok(Err(source)) => Err(Error::Send { recipient, source }),
            Err(_elapsed) => Err(Error::Timeout { recipient }),
        }
    }

    /// Sends the Auth.js default sign-in mail for `request` (its link, recipient, sender
    /// and theme).
    pub async fn send_sign_in_link(&self, request: &VerificationRequest) -> Result<(), Error> {
        self.send_message(sign_in_message(request)?).await
    }
}

/// The Auth.js `email` provider (id `email`, name `Email`; `nodemailer` in Auth.js) sending
/// the default sign-in mail, in the config's theme, through `sender`.
pub fn email_provider(sender: SmtpSender, from: &str) -> EmailProvider {
    EmailProvider::new(from)
        .with_name("Email")
        .send_verification_request(move |request: VerificationRequest| {
            let sender = sender.clone();
            async move {
                sender.send_sign_in_link(&request).await?;
                Ok(())
            }
        })
}

/// The Auth.js default sign-in message for `request`: subject `Sign in to <host>`, text and
/// HTML alternatives (rendered by [`authcore::providers::email::mail`]).
pub fn sign_in_message(request: &VerificationRequest) -> Result<Message, Error> {
    let mail = request.default_mail()?;
    let mailbox = |field: &'static str, address: &str| {
        address
            .parse::<Mailbox>()
            .map_err(|source| Error::InvalidAddress { field, source })
    };
    Ok(Message::builder()
        .from(mailbox("from", &request.from)?)
        .to(mailbox("to", &request.identifier)?)
        .subject(mail.subject)
        .multipart(MultiPart::alternative_plain_html(mail.text, mail.html))?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn smtp_urls() {
        for ok in [
            "smtp://user:pass@smtp.example.com:587",
            "smtp://smtp.example.com?tls=none",
            "smtp://smtp.example.com?tls=required",
            "smtps://user:p%40ss@smtp.example.com",
        ] {
            SmtpSender::from_url(ok).unwrap();
        }
        let s = SmtpSender::from_url("smtps://user:hunter2@smtp.example.com:465").unwrap();
        let dbg = format!("{s:?}");
        assert!(dbg.contains("smtps://smtp.example.com:465") && !dbg.contains("hunter2"));
        for bad in [
            "http://user:hunter2@smtp.example.com",
            "smtp://user:hunter2@smtp.example.com?tls=bogus",
            "smtp://user:hunter2@",
            "hunter2",
        ] {
            let e = SmtpSender::from_url(bad).unwrap_err();
            let text = format!("{e} {e:?}");
            assert!(!text.contains("hunter2"), "{text}");
        }
    }
}
