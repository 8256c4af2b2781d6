//! A signed-in user's changes to their second factors, each a sensitive operation
//! ([`SensitiveOperation`]): TOTP enrolment (bound to the session that started it) and its
//! confirmation, new recovery codes and TOTP removed (both also asking for a current code).
//! The `Auth` methods and the account page call these; every code they check counts
//! against the user's second-step attempts.

use super::checks;
use crate::actions::account::{AccountError, CurrentSession, SensitiveOperation};
use crate::actions::notify::SecurityChange;
use crate::actions::sensitive::require_recent_sign_in;
use crate::adapter::Adapter;
use crate::config::ConfigInner;
use crate::two_factor::TotpEnrolment;

/// The configuration's second factors and adapter, or why there are none.
pub(crate) fn store(c: &ConfigInner) -> Result<&dyn Adapter, AccountError> {
    if c.two_factor.is_none() {
        return Err(AccountError::TwoFactorOff);
    }
    c.adapter.as_deref().ok_or(AccountError::NoAdapter)
}

/// How an authenticator app names the user's account: the email, else the id.
pub(crate) async fn label(adapter: &dyn Adapter, user_id: &str) -> Result<String, AccountError> {
    let user = adapter
        .get_user(user_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    Ok(user.email.unwrap_or_else(|| user_id.to_owned()))
}

/// Starts TOTP enrolment for `me` (the secret this session started, or a new one).
pub(crate) async fn start(
    c: &ConfigInner,
    me: &CurrentSession,
) -> Result<TotpEnrolment, AccountError> {
    let adapter = store(c)?;
    require_recent_sign_in(c, me, SensitiveOperation::StartTotp).await?;
    let label = label(adapter, &me.user_id).await?;
    Ok(checks::pending_enrolment(c, adapter, &me.user_id, &label, &me.binding()).await?)
}

/// Confirms the secret this session started with a first code: the recovery codes.
pub(crate) async fn confirm(
    c: &ConfigInner,
    me: &CurrentSession,
    code: &str,
) -> Result<Vec<String>, AccountError> {
    let adapter = store(c)?;
    require_recent_sign_in(c, me, SensitiveOperation::ConfirmTotp).await?;
    let user = me.user_id.as_str();
    let binding = me.binding();
    let check = checks::confirm(c, adapter, user, code, &binding);
    let codes = checks::counted(c, user, check).await?;
    notify(c, me, SecurityChange::TotpEnrolled).await;
    Ok(codes)
}

/// A new set of recovery codes after a current code.
pub(crate) async fn regenerate(
    c: &ConfigInner,
    me: &CurrentSession,
    proof: &str,
) -> Result<Vec<String>, AccountError> {
    let adapter = store(c)?;
    require_recent_sign_in(c, me, SensitiveOperation::RegenerateRecoveryCodes).await?;
    let codes = checks::regenerate(c, adapter, &me.user_id, proof).await?;
    notify(c, me, SecurityChange::RecoveryCodesRenewed).await;
    Ok(codes)
}

/// TOTP and the recovery codes removed after a current code.
pub(crate) async fn disable(
    c: &ConfigInner,
    me: &CurrentSession,
    proof: &str,
) -> Result<(), AccountError> {
    let adapter = store(c)?;
    require_recent_sign_in(c, me, SensitiveOperation::DisableTotp).await?;
    checks::disable(c, adapter, &me.user_id, proof).await?;
    notify(c, me, SecurityChange::TotpDisabled).await;
    Ok(())
}

/// Tells of `change` to `me`'s user, the account link on the session's origin.
async fn notify(c: &ConfigInner, me: &CurrentSession, change: SecurityChange) {
    crate::actions::notify::security_change(c, &me.user_id, me.origin.as_deref(), change).await;
}
