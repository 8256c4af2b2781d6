//! Bans at the doors: the ban that holds on a user, and the refusal of a banned user's
//! sign-in (administrators make and lift bans: `actions/admin.rs`).

use time::OffsetDateTime;

use crate::adapter::{AdapterError, UserBan};
use crate::audit::AuditEvent;
use crate::config::ConfigInner;

/// The ban that holds on `user_id` now, when administrators are on (without them no user is
/// banned, and nothing is read).
pub(crate) async fn ban_of(
    c: &ConfigInner,
    user_id: &str,
) -> Result<Option<UserBan>, AdapterError> {
    let Some(store) = c
        .admins
        .as_ref()
        .and(c.adapter.as_deref())
        .and_then(|a| a.user_directory())
    else {
        return Ok(None);
    };
    let now = OffsetDateTime::now_utc();
    Ok(store
        .get_user_ban(user_id)
        .await?
        .filter(|ban| ban.holds_at(now)))
}

/// Refuses the sign-in of a banned user (`AccessDenied`, as a `signIn` callback's refusal;
/// logged and recorded as `signInRefused`). Checked where every sign-in ends, before any
/// session is made.
pub(crate) async fn refuse_banned(
    c: &ConfigInner,
    user_id: Option<&str>,
    provider: &str,
) -> Result<(), crate::error::AuthError> {
    let Some(user_id) = user_id else {
        return Ok(());
    };
    match ban_of(c, user_id).await {
        Ok(None) => Ok(()),
        Ok(Some(_)) => {
            tracing::warn!(user = %user_id, provider, "sign-in refused: the user is banned");
            // Boxed: every sign-in's future would otherwise carry the record's, which is
            // large, for a refusal that is rare.
            Box::pin(crate::actions::audit::record(
                c,
                AuditEvent::new("signInRefused")
                    .target(user_id.to_owned())
                    .with("provider", provider)
                    .with("reason", "banned"),
            ))
            .await;
            Err(crate::error::AuthError::AccessDenied { source: None })
        }
        Err(source) => Err(crate::error::AuthError::AdapterError { source }),
    }
}
