//! Second factors of a signed-in user ([`crate::two_factor`]): their state, TOTP enrolment
//! and its confirmation, new recovery codes, TOTP disabled. Like the other sensitive
//! changes these take the [`CurrentSession`] of the request; the account routes call them
//! for the request's own user.

use super::{AccountError, CurrentSession};
use crate::actions::two_factor::{changes, checks};
use crate::handler::Auth;
use crate::two_factor::{TotpEnrolment, TwoFactorError, TwoFactorStatus};

impl From<TwoFactorError> for AccountError {
    fn from(e: TwoFactorError) -> Self {
        match e {
            TwoFactorError::AlreadyEnrolled => AccountError::AlreadyEnrolled,
            TwoFactorError::NotEnrolled => AccountError::NotEnrolled,
            TwoFactorError::InvalidCode => AccountError::InvalidCode,
            TwoFactorError::TooManyAttempts { retry_after } => {
                AccountError::TooManyAttempts { retry_after }
            }
            TwoFactorError::Sealing(message) => AccountError::Sealing(message),
            TwoFactorError::Adapter(e) => AccountError::Adapter(e),
        }
    }
}

impl Auth {
    /// For a route guard that asks two factors of `session`, which did not prove them:
    /// whether its user has no second factor to prove them with (signing in again cannot
    /// help, so the guard answers [`Auth::two_factor_required`] rather than sending the
    /// browser round the sign-in page). `path` is the route, for the log line. `Err` when
    /// the second factors cannot be read (logged): answer `503`.
    pub async fn lacks_second_factor(
        &self,
        session: &crate::SessionJson,
        path: &str,
    ) -> Result<bool, AccountError> {
        if session.sign_in().is_some_and(|s| s.is_two_factor()) {
            // Two factors were proven; what is missing is a recent enough sign-in.
            return Ok(false);
        }
        let Some(user_id) = session.user_id() else {
            tracing::warn!(path, "two factors required of a session without a user id");
            return Ok(true);
        };
        match self.two_factor_status(user_id).await {
            Ok(status) if status.totp || status.passkeys > 0 => Ok(false),
            Ok(_) => {
                tracing::info!(
                    user_id,
                    path,
                    "two factors required of a user without a second factor: answered 403 with the account page to set one up"
                );
                Ok(true)
            }
            Err(AccountError::TwoFactorOff) => {
                tracing::warn!(
                    user_id,
                    path,
                    "a route guard asks for two factors with second factors off (AuthConfigBuilder::two_factor): no session can prove them"
                );
                Ok(true)
            }
            Err(e) => {
                tracing::error!(user_id, path, error = %e, "second factors unreadable");
                Err(e)
            }
        }
    }

    /// The user's second factors.
    pub async fn two_factor_status(&self, user_id: &str) -> Result<TwoFactorStatus, AccountError> {
        let adapter = changes::store(&self.config().inner)?;
        Ok(checks::status(adapter, user_id).await?)
    }

    /// Starts TOTP enrolment for the signed-in user: a secret, stored sealed, unconfirmed
    /// and bound to this session (the one this session started earlier, or a fresh one that
    /// replaces any other unconfirmed secret), and what the user's app needs (QR code,
    /// secret, URI). Refused while a confirmed secret is enrolled
    /// ([`AccountError::AlreadyEnrolled`]: disable it first), and unless `me` signed in
    /// recently ([`SensitiveOperation::StartTotp`](super::SensitiveOperation::StartTotp)).
    pub async fn start_totp_enrolment(
        &self,
        me: &CurrentSession,
    ) -> Result<TotpEnrolment, AccountError> {
        changes::start(&self.config().inner, me).await
    }

    /// Confirms the TOTP secret this session started ([`Auth::start_totp_enrolment`]) with a
    /// first valid code and answers a fresh set of ten recovery codes (show them once: only
    /// their hashes are kept). A wrong code: [`AccountError::InvalidCode`], counted against
    /// the user's second-step attempts; refused unless `me` signed in recently
    /// ([`SensitiveOperation::ConfirmTotp`](super::SensitiveOperation::ConfirmTotp)).
    pub async fn confirm_totp(
        &self,
        me: &CurrentSession,
        code: &str,
    ) -> Result<Vec<String>, AccountError> {
        changes::confirm(&self.config().inner, me, code).await
    }

    /// A fresh set of recovery codes, voiding the old one; asks for a current second factor
    /// (`proof`: a TOTP code or an unused recovery code) and a recent sign-in of `me`
    /// ([`SensitiveOperation::RegenerateRecoveryCodes`](super::SensitiveOperation::RegenerateRecoveryCodes)).
    pub async fn regenerate_recovery_codes(
        &self,
        me: &CurrentSession,
        proof: &str,
    ) -> Result<Vec<String>, AccountError> {
        changes::regenerate(&self.config().inner, me, proof).await
    }

    /// Removes the user's TOTP secret and recovery codes; asks for a current second factor
    /// (`proof`: a TOTP code or an unused recovery code) and a recent sign-in of `me`
    /// ([`SensitiveOperation::DisableTotp`](super::SensitiveOperation::DisableTotp)). Passkeys stay.
    pub async fn disable_totp(&self, me: &CurrentSession, proof: &str) -> Result<(), AccountError> {
        changes::disable(&self.config().inner, me, proof).await
    }

    /// Enrols a TOTP secret for user `user_id` as an operator does (the first enrolment of
    /// [`FirstEnrolment::Operator`]): confirmed at once, replacing any earlier one, with a
    /// fresh set of recovery codes. Hand the enrolment (QR code, secret) and the codes to
    /// the user out of band. No session is asked for: authorising the operator is the
    /// host's job.
    ///
    /// [`FirstEnrolment::Operator`]: crate::two_factor::FirstEnrolment::Operator
    pub async fn enrol_totp_for_user(
        &self,
        user_id: &str,
    ) -> Result<(TotpEnrolment, Vec<String>), AccountError> {
        let config = &*self.config().inner;
        let adapter = changes::store(config)?;
        let label = changes::label(adapter, user_id).await?;
        let secret = crate::two_factor::totp::new_secret().to_vec();
        let enrolment =
            crate::two_factor::totp::enrolment(&secret, &config.two_factor_issuer(), &label)
                .map_err(|e| AccountError::Sealing(e.to_string()))?;
        let codes = checks::store_confirmed(config, adapter, user_id, secret).await?;
        tracing::info!(user = %user_id, "two-factor: TOTP enrolled by an operator");
        checks::emit(config, user_id, "totpEnrolled").await;
        crate::actions::notify::security_change(
            config,
            user_id,
            None,
            crate::actions::notify::SecurityChange::TotpEnrolled,
        )
        .await;
        Ok((enrolment, codes))
    }
}
