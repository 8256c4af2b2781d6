//! The second-factor checks the second step and the account API share: the user's
//! factors, TOTP enrolment and its confirmation, a code checked (a TOTP step used once, a
//! recovery code used up), the sealed secret opened, and the `two_factor` event.

use time::OffsetDateTime;

use crate::adapter::{Adapter, TwoFactor, TwoFactorStore, capability};
use crate::config::ConfigInner;
use crate::two_factor::{
    SecondFactor, TOTP_PENDING_SALT, TOTP_SECRET_SALT, TotpEnrolment, TwoFactorError,
    TwoFactorStatus, USED_STEP_TTL, recovery, totp, unix_now,
};

/// The adapter's second factors (its [`TwoFactorStore`]; the configuration checked that
/// it has them).
pub(crate) fn store(adapter: &dyn Adapter) -> Result<&dyn TwoFactorStore, TwoFactorError> {
    Ok(capability(adapter.two_factor(), "TwoFactorStore")?)
}

/// The user's second factors, as the adapter knows them.
pub(crate) async fn status(
    adapter: &dyn Adapter,
    user_id: &str,
) -> Result<TwoFactorStatus, TwoFactorError> {
    let factors = store(adapter)?;
    let totp = factors
        .get_two_factor(user_id)
        .await?
        .is_some_and(|t| t.totp_confirmed_at.is_some());
    let recovery_codes_left = factors.count_recovery_codes(user_id).await?;
    let passkeys = adapter.list_authenticators_by_user_id(user_id).await?.len();
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

/// SHA-256 of what an unconfirmed secret is bound to: the sign-in attempt (second step) or
/// the session (account routes) that started the enrolment.
fn binding_hash(binding: &str) -> [u8; 32] {
    crate::crypto::sha256(binding.as_bytes())
}

/// The unconfirmed secret of `stored` if `binding` started it: sealed under its own salt
/// with the binding's hash before the secret. An unconfirmed secret of another attempt or
/// session (or sealed otherwise) is `None`: it is never shown or confirmed here.
fn open_pending_secret(config: &ConfigInner, stored: &TwoFactor, binding: &str) -> Option<Vec<u8>> {
    let opened = config
        .codec
        .open_bytes(&stored.totp_secret, TOTP_PENDING_SALT)
        .ok()?;
    let (bound, secret) = opened.split_at_checked(32)?;
    crate::crypto::ct_eq(bound, &binding_hash(binding)).then(|| secret.to_vec())
}

/// The enrolment of the user's unconfirmed secret when `binding` (the sign-in attempt or
/// session asking) started it, else of a new one that replaces any other unconfirmed
/// secret (stored sealed and bound to `binding`): a secret someone else started is never
/// shown here. `label` names the account in the app.
pub(crate) async fn pending_enrolment(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    label: &str,
    binding: &str,
) -> Result<TotpEnrolment, TwoFactorError> {
    let stored = store(adapter)?.get_two_factor(user_id).await?;
    if stored
        .as_ref()
        .is_some_and(|t| t.totp_confirmed_at.is_some())
    {
        return Err(TwoFactorError::AlreadyEnrolled);
    }
    let secret = match stored.and_then(|t| open_pending_secret(config, &t, binding)) {
        Some(secret) => secret,
        None => {
            let secret = totp::new_secret().to_vec();
            let mut sealed = binding_hash(binding).to_vec();
            sealed.extend_from_slice(&secret);
            let sealed = config
                .codec
                .seal_bytes(sealed, TOTP_PENDING_SALT)
                .map_err(|e| TwoFactorError::Sealing(e.to_string()))?;
            store(adapter)?
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

/// Confirms the user's unconfirmed secret that `binding` started with a first valid code
/// (used up), stores it as the user's second factor and makes the recovery codes, answered
/// once. A secret another attempt or session started is [`TwoFactorError::NotEnrolled`].
pub(crate) async fn confirm(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    code: &str,
    binding: &str,
) -> Result<Vec<String>, TwoFactorError> {
    let stored = store(adapter)?
        .get_two_factor(user_id)
        .await?
        .ok_or(TwoFactorError::NotEnrolled)?;
    if stored.totp_confirmed_at.is_some() {
        return Err(TwoFactorError::AlreadyEnrolled);
    }
    let secret =
        open_pending_secret(config, &stored, binding).ok_or(TwoFactorError::NotEnrolled)?;
    let step = totp::check(&secret, code, unix_now()).ok_or(TwoFactorError::InvalidCode)?;
    if !first_use_of_step(config, user_id, step).await {
        return Err(TwoFactorError::InvalidCode);
    }
    let codes = store_confirmed(config, adapter, user_id, secret).await?;
    tracing::info!(user = %user_id, "two-factor: TOTP enrolled");
    emit(config, user_id, "totpEnrolled").await;
    Ok(codes)
}

/// Stores `secret` as the user's confirmed TOTP secret (sealed) with a fresh set of
/// recovery codes, answered once.
pub(crate) async fn store_confirmed(
    config: &ConfigInner,
    adapter: &dyn Adapter,
    user_id: &str,
    secret: Vec<u8>,
) -> Result<Vec<String>, TwoFactorError> {
    let sealed = config
        .codec
        .seal_bytes(secret, TOTP_SECRET_SALT)
        .map_err(|e| TwoFactorError::Sealing(e.to_string()))?;
    let (codes, hashes) = recovery::generate();
    store(adapter)?
        .replace_recovery_codes(user_id, &hashes)
        .await?;
    store(adapter)?
        .set_two_factor(TwoFactor {
            user_id: user_id.to_owned(),
            totp_secret: sealed,
            totp_confirmed_at: Some(OffsetDateTime::now_utc()),
        })
        .await?;
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
    let stored = store(adapter)?
        .get_two_factor(user_id)
        .await?
        .filter(|t| t.totp_confirmed_at.is_some())
        .ok_or(TwoFactorError::NotEnrolled)?;
    counted(config, user_id, async {
        match verify_code(config, adapter, &stored, proof).await? {
            Some(_) => Ok(()),
            None => Err(TwoFactorError::InvalidCode),
        }
    })
    .await
}

/// Runs `check` as one attempt of the user under the second step's per-user limit
/// (counted before it, so that parallel guesses count one by one; the count forgotten on
/// success).
pub(crate) async fn counted<T>(
    config: &ConfigInner,
    user_id: &str,
    check: impl Future<Output = Result<T, TwoFactorError>>,
) -> Result<T, TwoFactorError> {
    use crate::actions::limits::{self, Limit};
    limits::count(config, Limit::SecondFactorPerUser, user_id)
        .await
        .map_err(|retry_after| TwoFactorError::TooManyAttempts { retry_after })?;
    let result = check.await;
    if result.is_ok() {
        limits::reset(config, Limit::SecondFactorPerUser, user_id).await;
    }
    result
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
    store(adapter)?
        .replace_recovery_codes(user_id, &hashes)
        .await?;
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
    store(adapter)?.delete_two_factor(user_id).await?;
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
    config
        .single_use()
        .first_use("totp-step", &format!("{user_id}:{step}"), USED_STEP_TTL)
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
    if store(adapter)?
        .use_recovery_code(&stored.user_id, &hash)
        .await?
    {
        tracing::warn!(user = %stored.user_id, "two-factor: a recovery code was used");
        emit(config, &stored.user_id, "recoveryCodeUsed").await;
        return Ok(Some(SecondFactor::RecoveryCode));
    }
    Ok(None)
}
