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

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use askama::Template;
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
    /// The sign-in link is not an absolute URL with a host.
    #[error("invalid sign-in link")]
    InvalidLink,
    /// A sender or recipient address could not be parsed.
    #[error("invalid {field} address")]
    InvalidAddress {
        /// `from` or `to`.
        field: &'static str,
        /// The parse error.
        #[source]
        source: lettre::address::AddressError,
    },
    /// The HTML template failed to render.
    #[error("cannot render the sign-in email")]
    Template(#[from] askama::Error),
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

/// Colours of the default sign-in mail (Auth.js `theme.brandColor` / `theme.buttonText`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EmailTheme {
    /// Button background and border; default `#346df1`.
    pub brand_color: Option<String>,
    /// Button text colour; default `#fff`.
    pub button_text: Option<String>,
}

impl EmailTheme {
    /// Sets the brand colour.
    pub fn brand_color(mut self, color: impl Into<String>) -> Self {
        self.brand_color = Some(color.into());
        self
    }
    /// Sets the button text colour.
    pub fn button_text(mut self, color: impl Into<String>) -> Self {
        self.button_text = Some(color.into());
        self
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

    /// Sends the Auth.js default sign-in mail for `url` from `from` to `to`.
    pub async fn send_sign_in_link(
        &self,
        to: &str,
        from: &str,
        url: &str,
        theme: &EmailTheme,
    ) -> Result<(), Error> {
        self.send_message(sign_in_message(to, from, url, theme)?)
            .await
    }
}

/// The Auth.js `nodemailer` provider (id `email`, name `Email`) sending the default sign-in
/// mail through `sender`.
pub fn email_provider(sender: SmtpSender, from: &str) -> EmailProvider {
    email_provider_with_theme(sender, from, EmailTheme::default())
}

/// [`email_provider`] with custom colours.
pub fn email_provider_with_theme(
    sender: SmtpSender,
    from: &str,
    theme: EmailTheme,
) -> EmailProvider {
    EmailProvider::new(from)
        .with_name("Email")
        .send(move |request: VerificationRequest| {
            let sender = sender.clone();
            let theme = theme.clone();
            async move {
                sender
                    .send_sign_in_link(&request.identifier, &request.from, &request.url, &theme)
                    .await?;
                Ok(())
            }
        })
}

/// `new URL(url).host` (host plus non-default port), as in the subject `Sign in to <host>`.
pub fn link_host(url: &str) -> Result<String, Error> {
    let parsed = url::Url::parse(url).map_err(|_| Error::InvalidLink)?;
    let host = parsed.host_str().ok_or(Error::InvalidLink)?;
    Ok(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Auth.js default text body: `Sign in to <host>\n<url>\n\n`.
pub fn sign_in_text(url: &str, host: &str) -> String {
    format!("Sign in to {host}\n{url}\n\n")
}

#[derive(Template)]
#[template(path = "signin_email.html")]
struct SignInEmail<'a> {
    /// Already escaped for a double-quoted attribute (`&amp;`, `&quot;`, `&lt;`, `&gt;`).
    url: Cow<'a, str>,
    /// Already escaped as HTML text.
    host_labels: Vec<Cow<'a, str>>,
    color: Colors<'a>,
}

struct Colors<'a> {
    background: &'a str,
    text: &'a str,
    main_background: &'a str,
    button_background: &'a str,
    button_border: &'a str,
    button_text: &'a str,
}

/// Auth.js default HTML body: a "Sign in" button linking to `url` (HTML-escaped by the
/// `html-escape` crate: `&` → `&amp;`, `"` → `&quot;`, `<`/`>`), the host (escaped) with its
/// dots obfuscated as `&#8203;.`; the askama template marks only these pre-escaped values safe.
pub fn sign_in_html(url: &str, host: &str, theme: &EmailTheme) -> Result<String, Error> {
    let brand = theme.brand_color.as_deref().unwrap_or("#346df1");
    let template = SignInEmail {
        url: html_escape::encode_double_quoted_attribute(url),
        host_labels: host.split('.').map(html_escape::encode_text).collect(),
        color: Colors {
            background: "#f9f9f9",
            text: "#444",
            main_background: "#fff",
            button_background: brand,
            button_border: brand,
            button_text: theme.button_text.as_deref().unwrap_or("#fff"),
        },
    };
    Ok(format!("\n{}\n", template.render()?))
}

/// The Auth.js default sign-in message: subject `Sign in to <host>`, text and HTML
/// alternatives.
pub fn sign_in_message(
    to: &str,
    from: &str,
    url: &str,
    theme: &EmailTheme,
) -> Result<Message, Error> {
    let host = link_host(url)?;
    let from: Mailbox = from.parse().map_err(|source| Error::InvalidAddress {
        field: "from",
        source,
    })?;
    let to: Mailbox = to.parse().map_err(|source| Error::InvalidAddress {
        field: "to",
        source,
    })?;
    Ok(Message::builder()
        .from(from)
        .to(to)
        .subject(format!("Sign in to {host}"))
        .multipart(MultiPart::alternative_plain_html(
            sign_in_text(url, &host),
            sign_in_html(url, &host, theme)?,
        ))?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn html_escapes_the_link_and_obfuscates_the_host() {
        let html = sign_in_html(
            "https://authjs.test/cb?a=1&b=\"<x>\"",
            "authjs.test",
            &EmailTheme::default(),
        )
        .unwrap();
        assert!(html.contains("Sign in to <strong>authjs&#8203;.test</strong>"));
        assert!(
            html.contains("href=\"https://authjs.test/cb?a=1&amp;b=&quot;&lt;x&gt;&quot;\""),
            "{html}"
        );
        assert!(html.contains("bgcolor=\"#346df1\""));
        assert!(html.contains("color: #fff; text-decoration: none"));
        let themed = sign_in_html(
            "https://a.b/",
            "a.b",
            &EmailTheme::default()
                .brand_color("#123456")
                .button_text("#000"),
        )
        .unwrap();
        assert!(themed.contains("border: 1px solid #123456"));
        assert!(themed.contains("color: #000; text-decoration: none"));
    }

    #[test]
    fn text_and_host_follow_authjs() {
        assert_eq!(link_host("https://authjs.test/x").unwrap(), "authjs.test");
        assert_eq!(
            link_host("http://localhost:3000/x").unwrap(),
            "localhost:3000"
        );
        assert!(link_host("not a url").is_err());
        assert_eq!(
            sign_in_text("https://a.b/c", "a.b"),
            "Sign in to a.b\nhttps://a.b/c\n\n"
        );
    }

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
