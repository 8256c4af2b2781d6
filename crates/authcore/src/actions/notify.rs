//! Security notifications (beyond Auth.js): when how a user signs in changes — a second
//! factor or passkey added or removed, recovery codes renewed, a provider linked, the
//! account deleted — the `securityChange` event is told, so that a user whose session or
//! password was stolen learns of what the thief did.

pub use crate::callbacks::SecurityChange;
use crate::config::ConfigInner;

/// Tells of `change` to user `user_id`: the `securityChange` event (a failing handler is
/// logged) and a log line. Never fails the change itself.
pub(crate) async fn security_change(c: &ConfigInner, user_id: &str, change: SecurityChange) {
    tracing::info!(user = %user_id, change = change.name(), "security change");
    let event = crate::callbacks::SecurityChangeEvent { user_id, change };
    if let Err(source) = c.events.security_change(event).await {
        c.logger.error(&crate::error::AuthError::EventError {
            event: "securityChange",
            source,
        });
    }
}
