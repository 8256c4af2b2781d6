//! Second factors of a signed-in user ([`crate::two_factor`]): their state, TOTP enrolment
//! and its confirmation, new recovery codes, TOTP disabled. Like the other account
//! functions these take the user id of the session; the account routes call them for the
//! request's own user.

use std::time::Duration;

use super::{AccountError, CurrentSession};
use crate::actions::two_factor::checks;
use crate::adapter::Adapter;
use crate::config::ConfigInner;
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
    fn two_factor_store(&self) -> Result<(&ConfigInner, &dyn Adapter), AccountError> {
        let c = &*self.config().inner;
        if c.two_factor.is_none() {
            return Err(AccountError::TwoFactorOff);
        }
        let adapter = c.adapter.as_deref().ok_or(AccountError::NoAdapter)?;
        Ok((c, adapter))
    }

    /// Refuses a change (TOTP enrolment) to a session whose sign-in is older than
    /// [`TwoFactorOptions::fresh_sign_in`](crate::two_factor::TwoFactorOptions::fresh_sign_in),
    /// or of unknown age: with a stolen session alone, nobody can enrol an authenticator of
    /// their own.
    pub async fn require_fresh_sign_in(
        &self,
        session: &CurrentSession,
    ) -> Result<(), AccountError> {
        let (config, _) = self.two_factor_store()?;
        let fresh = config
            .two_factor
            .as_ref()
            .map_or(Duration::ZERO, |t| t.fresh_sign_in);
        crate::actions::account::require_fresh(session, fresh)
    }

    /// The user's second factors.
    pub async fn two_factor_status(&self, user_id: &str) -> Result<TwoFactorStatus, AccountError> {
        let (_, adapter) = self.two_factor_store()?;
        Ok(checks::status(adapter, user_id).await?)
    }

    /// Starts TOTP enrolment: a secret, stored sealed and unconfirmed (the one of an
    /// unfinished enrolment, or a fresh one), and what the user's app needs (QR code,
    /// secret, URI). Refused while a confirmed secret is enrolled
    /// ([`AccountError::AlreadyEnrolled`]: disable it first).
    pub async fn start_totp_enrolment(&self, user_id: &str) -> Result<TotpEnrolment, AccountError> {
        let (config, adapter) = self.two_factor_store()?;
        let user = adapter
            .get_user(user_id)
            .await?
            .ok_or(AccountError::NotFound)?;
        let label = user.email.as_deref().unwrap_or(user_id);
        Ok(checks::pending_enrolment(config, adapter, user_id, label).await?)
    }

    /// Confirms the TOTP secret of [`Auth::start_totp_enrolment`] with a first valid code
    /// and answers a fresh set of ten recovery codes (show them once: only their hashes are
    /// kept). A wrong code: [`AccountError::InvalidCode`].
    pub async fn confirm_totp(
        &self,
        user_id: &str,
        code: &str,
    ) -> Result<Vec<String>, AccountError> {
        let (config, adapter) = self.two_factor_store()?;
        Ok(checks::confirm(config, adapter, user_id, code).await?)
    }

    /// A fresh set of recovery codes, voiding the old one; asks for a current second factor
    /// (`proof`: a TOTP code or an unused recovery code).
    pub async fn regenerate_recovery_codes(
        &self,
        user_id: &str,
        proof: &str,
    ) -> Result<Vec<String>, AccountError> {
        let (config, adapter) = self.two_factor_store()?;
        Ok(checks::regenerate(config, adapter, user_id, proof).await?)
    }

    /// Removes the user's TOTP secret and recovery codes; asks for a current second factor
    /// (`proof`: a TOTP code or an unused recovery code). Passkeys stay.
    pub async fn disable_totp(&self, user_id: &str, proof: &str) -> Result<(), AccountError> {
        let (config, adapter) = self.two_factor_store()?;
        Ok(checks::disable(config, adapter, user_id, proof).await?)
    }
}
