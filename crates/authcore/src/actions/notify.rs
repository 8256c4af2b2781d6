//! Security notifications (beyond Auth.js): when how a user signs in changes — a second
//! factor or passkey added or removed, recovery codes renewed, a provider linked, the
//! account deleted — the `securityChange` event is told and, when an email provider sends
//! notices ([`EmailProvider::send_security_notice`]), the user's verified address is
//! mailed, so that a user whose session or password was stolen learns of what the thief
//! did.
//!
//! [`EmailProvider::send_security_notice`]: crate::providers::email::EmailProvider::send_security_notice

pub use crate::callbacks::SecurityChange;
use crate::config::ConfigInner;

/// Who hears of a change: the user, their verified address (read before the change, since
/// a deleted account has none after) and the site's origin for the account link.
pub(crate) struct Recipient {
    user_id: String,
    /// The verified address, looked up only when a notice can be mailed.
    #[cfg_attr(not(feature = "email"), allow(dead_code))]
    email: Option<String>,
    #[cfg_attr(not(feature = "email"), allow(dead_code))]
    account_url: Option<String>,
}

impl Recipient {
    /// Looks up `user_id`'s verified address (when some email provider sends notices); the
    /// account link is on `origin` (the request's), else on the configured `url`.
    pub(crate) async fn look_up(c: &ConfigInner, user_id: &str, origin: Option<&str>) -> Self {
        #[cfg(feature = "email")]
        let email = match (notice_sender(c), &c.adapter) {
            (Some(_), Some(adapter)) => match adapter.get_user(user_id).await {
                Ok(user) => user
                    .filter(|u| u.email_verified.is_some())
                    .and_then(|u| u.email),
                Err(e) => {
                    tracing::warn!(user = %user_id, error = %e, "security notice: cannot read the user");
                    None
                }
            },
            _ => None,
        };
        #[cfg(not(feature = "email"))]
        let email = None;
        Recipient {
            user_id: user_id.to_owned(),
            email,
            account_url: account_url(c, origin),
        }
    }

    /// Tells of `change`: the `securityChange` event (a failing handler is logged), a log
    /// line and the mail. Never fails the change itself.
    pub(crate) async fn notify(&self, c: &ConfigInner, change: SecurityChange) {
        let user_id = self.user_id.as_str();
        tracing::info!(user = %user_id, change = change.name(), "security change");
        crate::actions::audit::record(
            c,
            crate::audit::AuditEvent::new(format!("account.{}", change.name()))
                .target(user_id.to_owned()),
        )
        .await;
        let event = crate::callbacks::SecurityChangeEvent { user_id, change };
        if let Err(source) = c.events.security_change(event).await {
            c.logger.error(&crate::error::AuthError::EventError {
                event: "securityChange",
                source,
            });
        }
        #[cfg(feature = "email")]
        self.mail(c, change).await;
    }

    #[cfg(feature = "email")]
    async fn mail(&self, c: &ConfigInner, change: SecurityChange) {
        let (Some((provider, send)), Some(to)) = (notice_sender(c), &self.email) else {
            return;
        };
        let user_id = self.user_id.as_str();
        if self.account_url.is_none() {
            tracing::info!(user = %user_id, "security notice: no site URL known, mailed without a link");
        }
        let notice = match crate::providers::email::SecurityNotice::new(
            user_id,
            to.as_str(),
            provider.from_address(),
            change,
            self.account_url.clone(),
            &c.theme,
        ) {
            Ok(notice) => notice,
            Err(e) => {
                tracing::warn!(user = %user_id, error = %e, "security notice: cannot render the mail");
                return;
            }
        };
        if let Err(e) = send(notice).await {
            // A sender's error may name the recipient: the log shows it masked.
            let error = e
                .to_string()
                .replace(to.as_str(), &crate::email_address::masked(to));
            tracing::warn!(user = %user_id, change = change.name(), error = %error, "security notice could not be sent");
        }
    }
}

/// Tells of `change` to user `user_id` (see [`Recipient::notify`]); the account link is on
/// `origin`, the request's, when there is one.
pub(crate) async fn security_change(
    c: &ConfigInner,
    user_id: &str,
    origin: Option<&str>,
    change: SecurityChange,
) {
    Recipient::look_up(c, user_id, origin)
        .await
        .notify(c, change)
        .await;
}

/// The first email provider that sends security notices, with its sender.
#[cfg(feature = "email")]
fn notice_sender(
    c: &ConfigInner,
) -> Option<(
    &crate::providers::email::EmailProvider,
    &std::sync::Arc<crate::providers::email::NoticeFn>,
)> {
    c.providers.iter().find_map(|p| match p {
        crate::providers::Provider::Email(e) => e.send_notice.as_ref().map(|s| (&**e, s)),
        _ => None,
    })
}

/// `<origin><basePath>/account`: on the request's origin, else on the configured `url`.
fn account_url(c: &ConfigInner, origin: Option<&str>) -> Option<String> {
    c.url_on(origin, "/account")
}

#[cfg(test)]
mod tests {
    #[test]
    fn account_url_joins_origin_and_base_path() {
        let c = crate::AuthConfig::builder()
            .secret("secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
            .url("https://example.com/auth")
            .base_path("/auth")
            .sessions_only()
            .build()
            .unwrap();
        let c = &*c.inner;
        assert_eq!(
            super::account_url(c, Some("http://localhost:3000")).as_deref(),
            Some("http://localhost:3000/auth/account")
        );
        assert_eq!(
            super::account_url(c, None).as_deref(),
            Some("https://example.com/auth/account")
        );
    }
}
