//! Second factors (beyond Auth.js, which has none): TOTP codes from an authenticator app
//! (RFC 6238) and single-use recovery codes; the second step of a sign-in that asks for
//! one; what the session then says about how the user signed in
//! (`amr`, RFC 8176, and `auth_time`).
//!
//! Turned on with [`AuthConfigBuilder::two_factor`](crate::AuthConfigBuilder::two_factor);
//! needs an adapter that stores second factors (a [`TwoFactorStore`]).
//!
//! - **Enrolment** ([`Auth::start_totp_enrolment`](crate::Auth::start_totp_enrolment),
//!   [`Auth::confirm_totp`](crate::Auth::confirm_totp)): a fresh secret,
//!   shown as a QR code and as text, counts once a first valid code confirms it; the
//!   confirmation answers ten recovery codes, shown once. The secret is stored sealed (a JWE
//!   under the auth secret, so it follows secret rotation as session tokens do) and is
//!   never logged; recovery codes are stored as hashes.
//! - **The second step**: after the first factor (a password, a magic link, an OAuth or
//!   OIDC sign-in), a user with a second factor gets no session but a short-lived sealed
//!   state, bound to the user and to the browser's CSRF cookie, and the two-factor page
//!   (`<basePath>/two-factor`, or [`PagesOptions::two_factor`]); a valid TOTP code or
//!   recovery code there opens the session. Attempts are limited per user and per client
//!   ([`TwoFactorOptions`]); a TOTP code is accepted once (RFC 6238 §5.2).
//! - **Policy** ([`TwoFactorPolicy`]): optional (users who enrolled TOTP), or required (a
//!   user without it enrols on the two-factor page before the session opens). A passkey
//!   sign-in with user verification counts as both factors.
//!
//! [`TwoFactorStore`]: crate::adapter::TwoFactorStore
//! [`PagesOptions::two_factor`]: crate::types::PagesOptions::two_factor

pub(crate) mod recovery;
pub(crate) mod totp;

use std::time::Duration;

use time::OffsetDateTime;

pub use totp::TotpEnrolment;

use crate::adapter::AdapterError;
use crate::ratelimit::RateLimit;

/// Whether users must have a second factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TwoFactorPolicy {
    /// Users who enrolled a second factor are asked for it; others sign in with one.
    #[default]
    Optional,
    /// Every user is asked for a second factor; one who has none enrols on the two-factor
    /// page before the session opens.
    Required,
}

/// Second factors: the policy, the name authenticator apps show, and the limits of the
/// second step.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TwoFactorOptions {
    /// Optional (the default) or required.
    pub policy: TwoFactorPolicy,
    /// The issuer authenticator apps show beside the account (default: the site's host).
    pub issuer: Option<String>,
    /// How long the second step may take after the first factor (default 5 minutes).
    pub step_max_age: Duration,
    /// Failed second-step attempts per user (default 5 in 15 minutes, then locked 15
    /// minutes).
    pub attempts_per_user: RateLimit,
    /// Failed second-step attempts per client address (default 20 in 15 minutes).
    pub attempts_per_client: RateLimit,
    /// Who may enrol a user's first second factor when the policy requires one (default:
    /// whoever holds the first factor at that moment).
    pub first_enrolment: FirstEnrolment,
}

/// Who may enrol a user's first second factor at sign-in, when
/// [`TwoFactorPolicy::Required`] asks a user without one to enrol before the session opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FirstEnrolment {
    /// Whoever passed the first factor (a password, a magic link, a provider) at that
    /// moment: someone holding only a phished password can enrol an authenticator of their
    /// own before the user does.
    #[default]
    FirstFactor,
    /// Only a sign-in through a magic link to the user's verified address: a password alone
    /// never enrols. A user who signs in otherwise is asked to sign in with the link first.
    EmailLink,
    /// Only an operator ([`Auth::enrol_totp_for_user`](crate::Auth::enrol_totp_for_user)):
    /// a user without a second factor cannot finish a sign-in.
    Operator,
}

impl Default for TwoFactorOptions {
    fn default() -> Self {
        let quarter = Duration::from_secs(15 * 60);
        TwoFactorOptions {
            policy: TwoFactorPolicy::Optional,
            issuer: None,
            step_max_age: Duration::from_secs(5 * 60),
            attempts_per_user: RateLimit::new(5, quarter),
            attempts_per_client: RateLimit::new(20, quarter),
            first_enrolment: FirstEnrolment::FirstFactor,
        }
    }
}

impl TwoFactorOptions {
    /// Second factors required of every user.
    pub fn required() -> Self {
        TwoFactorOptions {
            policy: TwoFactorPolicy::Required,
            ..TwoFactorOptions::default()
        }
    }

    /// Sets [`TwoFactorOptions::issuer`].
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets [`TwoFactorOptions::step_max_age`].
    pub fn step_max_age(mut self, max_age: Duration) -> Self {
        self.step_max_age = max_age;
        self
    }

    /// Sets [`TwoFactorOptions::first_enrolment`].
    pub fn first_enrolment(mut self, who: FirstEnrolment) -> Self {
        self.first_enrolment = who;
        self
    }

    /// Sets [`TwoFactorOptions::attempts_per_user`] and
    /// [`TwoFactorOptions::attempts_per_client`].
    pub fn attempts(mut self, per_user: RateLimit, per_client: RateLimit) -> Self {
        self.attempts_per_user = per_user;
        self.attempts_per_client = per_client;
        self
    }
}

/// A user's second factors, for the account page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TwoFactorStatus {
    /// Whether a confirmed TOTP secret is enrolled.
    pub totp: bool,
    /// Unused recovery codes.
    pub recovery_codes_left: u64,
    /// Registered passkeys (a passkey sign-in with user verification proves both factors).
    pub passkeys: usize,
}

/// The HKDF salt of sealed TOTP secrets (a purpose of its own: no session token, check
/// cookie or state decrypts as a secret, nor the other way round).
pub(crate) const TOTP_SECRET_SALT: &str = "authcore.two-factor.totp-secret";

/// The HKDF salt of unconfirmed TOTP secrets, sealed with what their enrolment is bound
/// to: neither kind opens as the other.
pub(crate) const TOTP_PENDING_SALT: &str = "authcore.two-factor.totp-pending";

/// How long a used TOTP step stays refused: past the end of the tolerance window.
pub(crate) const USED_STEP_TTL: Duration = Duration::from_secs(3 * totp::STEP_SECS + 30);

/// Seconds since the UNIX epoch.
pub(crate) fn unix_now() -> u64 {
    u64::try_from(OffsetDateTime::now_utc().unix_timestamp()).unwrap_or(0)
}

/// What a second factor was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecondFactor {
    /// A TOTP code.
    Totp,
    /// A recovery code.
    RecoveryCode,
    /// A passkey of the user's.
    Passkey {
        /// Whether the authenticator verified the user (PIN, biometrics).
        user_verified: bool,
    },
}

impl SecondFactor {
    /// Its RFC 8176 `amr` values (a code is a one-time password; a passkey a hardware key,
    /// with `user` when the authenticator verified the user).
    pub(crate) fn amr(self) -> &'static [&'static str] {
        match self {
            SecondFactor::Totp | SecondFactor::RecoveryCode => &["otp"],
            SecondFactor::Passkey {
                user_verified: true,
            } => &["hwk", "user"],
            SecondFactor::Passkey {
                user_verified: false,
            } => &["hwk"],
        }
    }
}

/// Why a second-factor check or change was refused (the account API answers these as
/// [`AccountError`](crate::account::AccountError)s).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TwoFactorError {
    #[error("a TOTP authenticator is enrolled already")]
    AlreadyEnrolled,
    #[error("no TOTP authenticator is enrolled")]
    NotEnrolled,
    #[error("the code is not valid")]
    InvalidCode,
    #[error("too many attempts")]
    TooManyAttempts { retry_after: Duration },
    #[error("second factor secret: {0}")]
    Sealing(String),
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}
