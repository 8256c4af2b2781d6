//! The second-factor checks the second step and the account API share: the user's
//! factors, TOTP enrolment and its confirmation, a code checked (a TOTP step used once, a
//! recovery code used up), the sealed secret opened, and the `two_factor` event.

use time::OffsetDateTime;

use crate::adapter::{Adapter, AdapterMethod, TwoFactor};
use crate::config::ConfigInner;
use crate::two_factor::{
    SecondFactor, TOTP_SECRET_SALT, TotpEnrolment, TwoFactorError, TwoFactorStatus, USED_STEP_TTL,
    recovery, totp, unix_now,
};

/// The user's second factors, as the adapter knows them.
pub(crate) async fn status(
    adapter: &dyn Adapter,
    user_id: &str,
) -> Result<TwoFactorStatus, TwoFactorError> {
    let totp = adapter
        .get_two_factor(user_id)
        .await?
        .is_some_and(|t| t.totp_confirmed_at.is_some());
    let recovery_codes_left = adapter.count_recovery_codes(user_id).await?;
    let passkeys = if adapter.supports(AdapterMethod::ListAuthenticatorsByUserId) {
        adapter.list_authenticators_by_user_id(user_id).await?.len()
    } else {
        0
    };
    Ok(TwoFactorStatus {
        totp,
        recovery_codes_left,
        passkeys,
    })
}

/// Tells the `two_factor` event; a failing handler is logged (`EventError`).
pub(crate) async fn emit(config: &ConfigInner, user_id: &str, action: &'static str) {
    let event = crate::callbacks::TwoFactorEvent { user_id, action };
    if let Err(source) = config.events.two_factor(event).await {
        config.logger.error(&crate::error::AuthError::EventError {
            event: "twoFactor",
            source,
        });
    }
}

/// The enrolment of the user's unconfirmed secret, stored at an earlier visit, or of a
/// new one (stored sealed); `label` names the account in the app.
pub(crate) async fn pending_enrolment(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    label: &str,
) -> Result<TotpEnrolment, TwoFactorError> {
    let secret = match adapter.get_two_factor(user_id).await? {
        Some(t) if t.totp_confirmed_at.is_some() => return Err(TwoFactorError::AlreadyEnrolled),
        Some(t) => open_totp_secret(config, &t.totp_secret)?,
        None => {
            let secret = totp::new_secret().to_vec();
            let sealed = config
                .codec
                .seal_bytes(secret.clone(), TOTP_SECRET_SALT)
                .map_err(|e| TwoFactorError::Sealing(e.to_string()))?;
            adapter
                .set_two_factor(TwoFactor {
                    user_id: user_id.to_owned(),
                    totp_secret: sealed,
                    totp_confirmed_at: None,
                })
                .await?;
            secret
        }
    };
    totp::enrolment(&secret, &config.two_factor_issuer(), label)
        .map_err(|e| TwoFactorError::Sealing(e.to_string()))
}

/// Confirms the user's unconfirmed secret with a first valid code (used up) and makes the
/// recovery codes, answered once.
pub(crate) async fn confirm(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    code: &str,
) -> Result<Vec<String>, TwoFactorError> {
    let mut stored = adapter
        .get_two_factor(user_id)
        .await?
        .ok_or(TwoFactorError::NotEnrolled)?;
    if stored.totp_confirmed_at.is_some() {
        return Err(TwoFactorError::AlreadyEnrolled);
    }
    let secret = open_totp_secret(config, &stored.totp_secret)?;
    let step = totp::check(&secret, code, unix_now()).ok_or(TwoFactorError::InvalidCode)?;
    if !first_use_of_step(config, user_id, step).await {
        return Err(TwoFactorError::InvalidCode);
    }
    stored.totp_confirmed_at = Some(OffsetDateTime::now_utc());
    let (codes, hashes) = recovery::generate();
    adapter.replace_recovery_codes(user_id, &hashes).await?;
    adapter.set_two_factor(stored).await?;
    tracing::info!(user = %user_id, "two-factor: TOTP enrolled");
    emit(config, user_id, "totpEnrolled").await;
    Ok(codes)
}

/// Checks `proof`, a TOTP code or a recovery code (used up), of an enrolled user, counted
/// with the second step's attempts (a stolen session cannot guess codes through the
/// account API).
async fn verify_fresh_factor(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    proof: &str,
) -> Result<(), TwoFactorError> {
    let stored = adapter
        .get_two_factor(user_id)
        .await?
        .filter(|t| t.totp_confirmed_at.is_some())
        .ok_or(TwoFactorError::NotEnrolled)?;
    super::super::limits::count_user_attempt(config, user_id)
        .await
        .map_err(|retry_after| TwoFactorError::TooManyAttempts { retry_after })?;
    match verify_code(config, adapter, &stored, proof).await? {
        Some(_) => {
            super::super::limits::reset_user_attempts(config, user_id).await;
            Ok(())
        }
        None => Err(TwoFactorError::InvalidCode),
    }
}

/// A fresh set of recovery codes, voiding the old one, after a current code (`proof`).
pub(crate) async fn regenerate(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    proof: &str,
) -> Result<Vec<String>, TwoFactorError> {
    verify_fresh_factor(config, adapter, user_id, proof).await?;
    let (codes, hashes) = recovery::generate();
    adapter.replace_recovery_codes(user_id, &hashes).await?;
    tracing::info!(user = %user_id, "two-factor: recovery codes regenerated");
    emit(config, user_id, "recoveryCodesRegenerated").await;
    Ok(codes)
}

/// Removes the user's TOTP secret and recovery codes after a current code (`proof`).
pub(crate) async fn disable(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    proof: &str,
) -> Result<(), TwoFactorError> {
    verify_fresh_factor(config, adapter, user_id, proof).await?;
    adapter.delete_two_factor(user_id).await?;
    tracing::info!(user = %user_id, "two-factor: TOTP disabled");
    emit(config, user_id, "totpDisabled").await;
    Ok(())
}

/// The sealed TOTP secret opened (any secret of the rotation list).
pub(crate) fn open_totp_secret(
    config: &ConfigInner,
    sealed: &str,
) -> Result<Vec<u8>, TwoFactorError> {
    config
        .codec
        .open_bytes(sealed, TOTP_SECRET_SALT)
        .map_err(|_| {
            TwoFactorError::Sealing("the TOTP secret does not open with the auth secret".into())
        })
}

/// Marks TOTP step `step` of the user as used; `false` when it was used before.
async fn first_use_of_step(config: &ConfigInner, user_id: &str, step: u64) -> bool {
    crate::ratelimit::first_use(
        &*config.single_use_store,
        "totp-step",
        &format!("{user_id}:{step}"),
        USED_STEP_TTL,
    )
    .await
}

/// Verifies `code` against the user's confirmed TOTP secret (once per step) or, failing
/// that, as one of the user's recovery codes (used up: an event and a log line).
/// `Ok(None)`: neither.
pub(crate) async fn verify_code(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    stored: &TwoFactor,
    code: &str,
) -> Result<Option<SecondFactor>, TwoFactorError> {
    let secret = open_totp_secret(config, &stored.totp_secret)?;
    if let Some(step) = totp::check(&secret, code, unix_now()) {
        return Ok(first_use_of_step(config, &stored.user_id, step)
            .await
            .then_some(SecondFactor::Totp));
    }
    let Some(hash) = recovery::hash_input(code) else {
        return Ok(None);
    };
    if adapter.use_recovery_code(&stored.user_id, &hash).await? {
        tracing::warn!(user = %stored.user_id, "two-factor: a recovery code was used");
        emit(config, &stored.user_id, "recoveryCodeUsed").await;
        return Ok(Some(SecondFactor::RecoveryCode));
    }
    Ok(None)
}
