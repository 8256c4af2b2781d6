//! Mailing a link of some purpose (a password reset, an invitation …) through the first
//! email provider with a sender: the message of [`SignInMail::for_purpose`].
//!
//! [`SignInMail::for_purpose`]: crate::providers::email::SignInMail::for_purpose

use time::OffsetDateTime;

use crate::adapter::AdapterError;
use crate::config::ConfigInner;
use crate::providers::email::LinkPurpose;

/// Why a mail could not be sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MailFailure {
    #[error("no email provider to mail the link")]
    NoMailer,
    #[error("no site URL to build the link on")]
    NoUrl,
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    #[error("the link could not be mailed: {0}")]
    Send(crate::error::BoxError),
}

/// Mails `to` a link of `purpose` to `url` (`token` for the sender's request; empty for a
/// notice's link).
pub(crate) async fn mail(
    c: &ConfigInner,
    to: &str,
    url: String,
    purpose: LinkPurpose,
    token: String,
    expires: OffsetDateTime,
) -> Result<(), MailFailure> {
    let p = c.mailer().ok_or(MailFailure::NoMailer)?;
    let send = p.send.as_ref().ok_or(MailFailure::NoMailer)?;
    let request = p.link_request(to, token, expires, url, &c.theme, purpose);
    send(request).await.map_err(|e| {
        // A sender's error may name the recipient: the log shows it masked.
        let message = e.to_string().replace(to, &crate::email_address::masked(to));
        MailFailure::Send(message.into())
    })
}
