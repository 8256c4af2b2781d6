//! SMTP delivery for authcore's email (magic link) provider: the Rust counterpart of
//! Auth.js's `nodemailer` provider (`providers/nodemailer.ts`) and its default sign-in mail
//! (`lib/utils/email.ts`). The provider also mails authcore's security notices.
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

use authcore::providers::email::{EmailProvider, SecurityNotice, VerificationRequest};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
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
    /// The PEM text given as a root certificate holds no certificate.
    #[error("no PEM certificate found")]
    NoCertificate,
    /// A root certificate could not be read, or the TLS settings could not be built.
    #[error("invalid TLS settings")]
    Tls(#[source] lettre::transport::smtp::Error),
    /// The message could not be built.
    #[error("cannot build the email")]
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

/// How the connection to the relay is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TlsMode {
    /// Plain text (`smtp://…?tls=none`).
    None,
    /// STARTTLS when offered (`smtp://…`).
    Opportunistic,
    /// STARTTLS or fail (`smtp://…?tls=required`).
    Required,
    /// Implicit TLS (`smtps://…`).
    Wrapper,
}

/// An SMTP relay to send sign-in links through.
#[derive(Clone)]
pub struct SmtpSender {
    builder: AsyncSmtpTransportBuilder,
    timeout: Duration,
    /// `scheme://host:port` without credentials, for `Debug`.
    display: String,
    host: String,
    tls: TlsMode,
    /// Extra trusted roots (a private CA), besides the system's.
    roots: Vec<Certificate>,
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
        let mode = match (parsed.scheme(), tls.as_deref()) {
            ("smtps", _) => TlsMode::Wrapper,
            (_, None | Some("opportunistic")) => TlsMode::Opportunistic,
            (_, Some("none")) => TlsMode::None,
            (_, Some("required")) => TlsMode::Required,
            (_, Some(_)) => return Err(invalid("unknown tls value".into())),
        };
        if parsed.scheme() == "smtp" {
            let others: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| k != "tls")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            // lettre reads no `tls` as plain text; nodemailer's default is STARTTLS when offered.
            let lettre_tls = match mode {
                TlsMode::Opportunistic => Some("opportunistic"),
                TlsMode::Required => Some("required"),
                TlsMode::None | TlsMode::Wrapper => None,
            };
            let mut pairs = parsed.query_pairs_mut();
            pairs.clear().extend_pairs(others);
            if let Some(value) = lettre_tls {
                pairs.append_pair("tls", value);
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
            host,
            tls: mode,
            roots: Vec::new(),
        })
    }

    /// Also trusts the CA certificate(s) in `pem` (a private CA, or a test server's
    /// self-signed certificate), besides the system roots, for STARTTLS and `smtps://`.
    ///
    /// ```
    /// # use authcore_smtp::SmtpSender;
    /// let sender = SmtpSender::from_url("smtp://relay.internal:587?tls=required").unwrap();
    /// assert!(sender.with_root_certificate(b"not a certificate").is_err());
    /// ```
    pub fn with_root_certificate(mut self, pem: &[u8]) -> Result<Self, Error> {
        // lettre accepts a PEM file with no certificate in it; say so instead of trusting nothing.
        const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
        if !pem.windows(BEGIN.len()).any(|w| w == BEGIN) {
            return Err(Error::NoCertificate);
        }
        self.roots
            .push(Certificate::from_pem(pem).map_err(Error::Tls)?);
        let mut params = TlsParameters::builder(self.host.clone());
        for root in &self.roots {
            params = params.add_root_certificate(root.clone());
        }
        let params = params.build_rustls().map_err(Error::Tls)?;
        let tls = match self.tls {
            TlsMode::None => Tls::None,
            TlsMode::Opportunistic => Tls::Opportunistic(params),
            TlsMode::Required => Tls::Required(params),
            TlsMode::Wrapper => Tls::Wrapper(params),
        };
        self.builder = self.builder.tls(tls);
        Ok(self)
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
            host: "127.0.0.1".into(),
            tls: TlsMode::None,
            roots: Vec::new(),
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

    /// Sends the security notice `notice` (already rendered by authcore).
    pub async fn send_security_notice(&self, notice: &SecurityNotice) -> Result<(), Error> {
        self.send_message(security_notice_message(notice)?).await
    }
}

/// The Auth.js `email` provider (id `email`, name `Email`; `nodemailer` in Auth.js) sending
/// the default sign-in mail, in the config's theme, through `sender`; security notices go
/// through it too.
pub fn email_provider(sender: SmtpSender, from: &str) -> EmailProvider {
    let notices = sender.clone();
    EmailProvider::new(from)
        .with_name("Email")
        .send_verification_request(move |request: VerificationRequest| {
            let sender = sender.clone();
            async move {
                sender.send_sign_in_link(&request).await?;
                Ok(())
            }
        })
        .send_security_notice(move |notice: SecurityNotice| {
            let sender = notices.clone();
            async move {
                sender.send_security_notice(&notice).await?;
                Ok(())
            }
        })
}

/// The Auth.js `nodemailer` provider (id `nodemailer`, name `Nodemailer`): the same as
/// [`email_provider`] under that id, for configurations written for it.
pub fn nodemailer_provider(sender: SmtpSender, from: &str) -> EmailProvider {
    email_provider(sender, from)
        .with_id("nodemailer")
        .with_name("Nodemailer")
}

/// The Auth.js default sign-in message for `request`: subject `Sign in to <host>`, text and
/// HTML alternatives (rendered by [`authcore::providers::email::mail`]).
pub fn sign_in_message(request: &VerificationRequest) -> Result<Message, Error> {
    let mail = request.default_mail()?;
    message(
        &request.from,
        &request.identifier,
        mail.subject,
        mail.text,
        mail.html,
    )
}

/// The message of a security notice: its subject, text and HTML alternatives.
pub fn security_notice_message(notice: &SecurityNotice) -> Result<Message, Error> {
    message(
        &notice.from,
        &notice.to,
        notice.subject.clone(),
        notice.text.clone(),
        notice.html.clone(),
    )
}

fn message(
    from: &str,
    to: &str,
    subject: String,
    text: String,
    html: String,
) -> Result<Message, Error> {
    let mailbox = |field: &'static str, address: &str| {
        address
            .parse::<Mailbox>()
            .map_err(|source| Error::InvalidAddress { field, source })
    };
    Ok(Message::builder()
        .from(mailbox("from", from)?)
        .to(mailbox("to", to)?)
        .subject(subject)
        .multipart(MultiPart::alternative_plain_html(text, html))?)
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

/// The README's examples, compiled as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
