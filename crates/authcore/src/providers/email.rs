//! Email (magic link) providers (spec §7): the sign-in link is sent by a pluggable sender
//! (Auth.js `sendVerificationRequest`).
//!
//! ```
//! use authcore::providers::EmailProvider;
//! let email = EmailProvider::new("Auth <no-reply@example.com>").send(|request| async move {
//!     // deliver `request.url` to `request.identifier` (SMTP, an HTTP API …)
//!     let _ = request;
//!     Ok(())
//! });
//! assert_eq!(email.id(), "email");
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use time::OffsetDateTime;
use unicode_normalization::UnicodeNormalization;

use crate::error::BoxError;

/// What the sender receives: where to send which link.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerificationRequest {
    /// The (normalised) email address.
    pub identifier: String,
    /// The plain token (only its hash is stored).
    pub token: String,
    /// When the link expires.
    pub expires: OffsetDateTime,
    /// The sign-in link.
    pub url: String,
    /// The provider id.
    pub provider: String,
    /// The sender address.
    pub from: String,
}

type SendFuture = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;
type SendFn = dyn Fn(VerificationRequest) -> SendFuture + Send + Sync;

/// An email provider.
#[derive(Clone)]
pub struct EmailProvider {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) max_age: u64,
    pub(crate) send: Option<Arc<SendFn>>,
}

impl std::fmt::Debug for EmailProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailProvider")
            .field("id", &self.id)
            .field("from", &self.from)
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

impl EmailProvider {
    /// Id `email`, name `Email`, links valid for 24 h.
    pub fn new(from: impl Into<String>) -> Self {
        EmailProvider {
            id: "email".into(),
            name: "Email".into(),
            from: from.into(),
            max_age: 24 * 60 * 60,
            send: None,
        }
    }
    /// Provider id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }
    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// How long links stay valid.
    pub fn max_age(mut self, max_age: std::time::Duration) -> Self {
        self.max_age = max_age.as_secs();
        self
    }
    /// The sender (Auth.js `sendVerificationRequest`); required.
    pub fn send<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(VerificationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.send = Some(Arc::new(move |r| Box::pin(f(r))));
        self
    }
}

/// Why an email address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidEmail {
    /// No address given.
    #[error("Missing email from request body.")]
    Missing,
    /// Not `local@domain`.
    #[error("Invalid email address format.")]
    Format,
}

/// Auth.js default normaliser (spec §7.1): NFKC, lower case, trimmed; exactly one `@` with
/// non-empty parts and no `"`; the domain is cut at the first `,`.
///
/// ```
/// use authcore::providers::email::normalize_email;
/// assert_eq!(normalize_email(" Foo@Example.com ").unwrap(), "foo@example.com");
/// assert_eq!(normalize_email("foo@example.com,evil.com").unwrap(), "foo@example.com");
/// assert!(normalize_email("foo@evil.com@example.com").is_err());
/// ```
pub fn normalize_email(input: &str) -> Result<String, InvalidEmail> {
    if input.is_empty() {
        return Err(InvalidEmail::Missing);
    }
    let s: String = input.nfkc().collect::<String>().to_lowercase();
    let s = s.trim();
    if s.contains('"') {
        return Err(InvalidEmail::Format);
    }
    let parts: Vec<&str> = s.split('@').collect();
    let [local, domain] = parts.as_slice() else {
        return Err(InvalidEmail::Format);
    };
    let domain = domain.split(',').next().unwrap_or_default();
    if local.is_empty() || domain.is_empty() {
        return Err(InvalidEmail::Format);
    }
    Ok(format!("{local}@{domain}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normaliser_cases_from_authjs() {
        assert_eq!(
            normalize_email("Foo@Example.com").unwrap(),
            "foo@example.com"
        );
        assert_eq!(
            normalize_email("  foo@example.com  ").unwrap(),
            "foo@example.com"
        );
        assert_eq!(
            normalize_email("foo@example.com,evil.com").unwrap(),
            "foo@example.com"
        );
        assert_eq!(normalize_email(""), Err(InvalidEmail::Missing));
        for bad in [
            "\"foo@evil.com\"@example.com",
            "foo@evil.com@example.com",
            "foo\u{FF20}evil.com@example.com",
            "foo\u{FE6B}evil.com@example.com",
            "nodomain@",
            "@nolocal",
            "plain",
        ] {
            assert_eq!(normalize_email(bad), Err(InvalidEmail::Format), "{bad}");
        }
    }
}
