//! One rule for sensitive changes (a "sudo mode", as GitHub and Google ask for): a change
//! that would let whoever holds a session keep the account — a new passkey, an
//! authenticator, a linked provider — or that destroys something the user cannot get back
//! needs a recent sign-in, and for a user with a second factor a recent sign-in that proved
//! it. A stolen session cookie alone makes none of them.
//!
//! Every entry point of these changes — the account page, the JSON account routes, the
//! `Auth` methods, the WebAuthn registration of a signed-in user and the link of a provider
//! to a signed-in user — calls [`require_recent_sign_in`] through the operation's own
//! function, which takes the [`CurrentSession`] it checks.

use std::time::Duration;

use super::current::CurrentSession;
use crate::adapter::AdapterError;
use crate::config::ConfigInner;
use crate::error::AuthError;

/// A change that needs a recent sign-in ([`crate::AuthConfigBuilder::recent_sign_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SensitiveOperation {
    /// A passkey registered by a signed-in user.
    AddPasskey,
    /// A passkey deleted.
    RemovePasskey,
    /// TOTP enrolment started (a secret shown).
    StartTotp,
    /// TOTP enrolment confirmed (the second factor turned on).
    ConfirmTotp,
    /// TOTP removed (also asks for a current code).
    DisableTotp,
    /// A new set of recovery codes (also asks for a current code).
    RegenerateRecoveryCodes,
    /// A provider account linked to a signed-in user (a sign-in with it while signed in).
    LinkProvider,
    /// A provider account unlinked.
    UnlinkProvider,
    /// An application's access revoked (authcore as an OpenID Provider).
    RevokeAppAccess,
    /// The account deleted.
    DeleteAccount,
    /// The password changed (also asks for the current password, when there is one).
    ChangePassword,
    /// The email address changed (confirmed by a link to the new address).
    ChangeEmail,
    /// An API key made.
    CreateApiKey,
    /// An organization deleted.
    DeleteOrganization,
    /// An administrator's change to another user (a ban, a reset, an impersonation …).
    Administer,
}

impl SensitiveOperation {
    /// Every sensitive operation.
    pub const ALL: [SensitiveOperation; 15] = [
        SensitiveOperation::AddPasskey,
        SensitiveOperation::RemovePasskey,
        SensitiveOperation::StartTotp,
        SensitiveOperation::ConfirmTotp,
        SensitiveOperation::DisableTotp,
        SensitiveOperation::RegenerateRecoveryCodes,
        SensitiveOperation::LinkProvider,
        SensitiveOperation::UnlinkProvider,
        SensitiveOperation::RevokeAppAccess,
        SensitiveOperation::DeleteAccount,
        SensitiveOperation::ChangePassword,
        SensitiveOperation::ChangeEmail,
        SensitiveOperation::CreateApiKey,
        SensitiveOperation::DeleteOrganization,
        SensitiveOperation::Administer,
    ];

    /// Its name in log lines and events (`addPasskey` …).
    pub fn name(self) -> &'static str {
        match self {
            SensitiveOperation::AddPasskey => "addPasskey",
            SensitiveOperation::RemovePasskey => "removePasskey",
            SensitiveOperation::StartTotp => "startTotp",
            SensitiveOperation::ConfirmTotp => "confirmTotp",
            SensitiveOperation::DisableTotp => "disableTotp",
            SensitiveOperation::RegenerateRecoveryCodes => "regenerateRecoveryCodes",
            SensitiveOperation::LinkProvider => "linkProvider",
            SensitiveOperation::UnlinkProvider => "unlinkProvider",
            SensitiveOperation::RevokeAppAccess => "revokeAppAccess",
            SensitiveOperation::DeleteAccount => "deleteAccount",
            SensitiveOperation::ChangePassword => "changePassword",
            SensitiveOperation::ChangeEmail => "changeEmail",
            SensitiveOperation::CreateApiKey => "createApiKey",
            SensitiveOperation::DeleteOrganization => "deleteOrganization",
            SensitiveOperation::Administer => "administer",
        }
    }
}

/// Why a session does not meet the rule (for the log line; the answer is the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stale {
    /// The sign-in time is unknown (a session of Auth.js, of an older authcore).
    UnknownAge,
    /// The sign-in is older than the window, or dated in the future.
    TooOld,
    /// The user has a second factor and this sign-in did not prove it.
    NoSecondFactor,
}

/// The rule itself, over plain data: a sign-in at `auth_time` (seconds) is recent at `now`
/// within `window`, and proved a second factor when the user has one.
pub(crate) fn judge(
    session: &CurrentSession,
    has_second_factor: bool,
    window: Duration,
    now: i64,
) -> Result<(), Stale> {
    let window = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
    // A little clock skew between instances is tolerated; a sign-in from the future is not.
    const SKEW: i64 = 60;
    match session.auth_time {
        None => return Err(Stale::UnknownAge),
        Some(at) if at > now.saturating_add(SKEW) || now.saturating_sub(at) > window => {
            return Err(Stale::TooOld);
        }
        Some(_) => {}
    }
    if has_second_factor && !session.proved_second_factor() {
        return Err(Stale::NoSecondFactor);
    }
    Ok(())
}

/// Why the rule refused a change (account management answers it as
/// `AccountError::ReauthenticationRequired`, or the adapter's error).
#[derive(Debug)]
pub(crate) enum Refused {
    /// The session's sign-in is not recent, or did not prove the user's second factor.
    NotRecent,
    /// The user's second factors could not be read.
    Adapter(AdapterError),
}

/// Whether the user has a second factor the rule asks for: a confirmed TOTP secret (with
/// second factors configured).
async fn has_second_factor(c: &ConfigInner, user_id: &str) -> Result<bool, AdapterError> {
    #[cfg(feature = "two-factor")]
    if c.two_factor.is_some()
        && let Some(adapter) = c.adapter.as_deref()
    {
        return Ok(
            crate::adapter::capability(adapter.two_factor(), "TwoFactorStore")?
                .get_two_factor(user_id)
                .await?
                .is_some_and(|t| t.totp_confirmed_at.is_some()),
        );
    }
    let _ = (c, user_id);
    Ok(false)
}

/// Refuses `operation` for `session` unless its sign-in is recent and, for a user with a
/// second factor, proved it ([`Refused::NotRecent`], logged).
pub(crate) async fn require_recent_sign_in(
    c: &ConfigInner,
    session: &CurrentSession,
    operation: SensitiveOperation,
) -> Result<(), Refused> {
    if let Some(admin) = &session.impersonator {
        tracing::warn!(
            user = %session.user_id,
            impersonator = %admin,
            operation = operation.name(),
            "sensitive change refused: the session is an impersonation"
        );
        return Err(Refused::NotRecent);
    }
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let second = has_second_factor(c, &session.user_id)
        .await
        .map_err(Refused::Adapter)?;
    judge(session, second, c.recent_sign_in, now).map_err(|why| {
        tracing::warn!(
            user = %session.user_id,
            operation = operation.name(),
            reason = ?why,
            "sensitive change refused: the session needs a recent sign-in"
        );
        Refused::NotRecent
    })
}

/// The rule for a change an action makes for the signed-in user `user_id` of its request
/// (a passkey registered, a provider linked while signed in): the request's session must
/// be that user's and recent. Refused as [`AuthError::ReauthenticationRequired`], whose
/// sign-in page asks the user to sign in again.
pub(crate) async fn require_for_action(
    ctx: &super::Ctx<'_>,
    user_id: &str,
    operation: SensitiveOperation,
) -> Result<(), AuthError> {
    let refused = AuthError::ReauthenticationRequired {
        operation: operation.name(),
    };
    let Some(me) =
        super::current::current_session(ctx.config, &ctx.req.url, &ctx.req.cookies).await
    else {
        return Err(refused);
    };
    if me.user_id != user_id {
        return Err(refused);
    }
    match require_recent_sign_in(ctx.config, &me, operation).await {
        Ok(()) => Ok(()),
        Err(Refused::Adapter(source)) => Err(AuthError::AdapterError { source }),
        Err(Refused::NotRecent) => Err(refused),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(auth_time: Option<i64>, amr: &[&str]) -> CurrentSession {
        CurrentSession {
            user_id: "u".into(),
            session_id: None,
            auth_time,
            amr: amr.iter().map(|m| (*m).to_owned()).collect(),
            origin: None,
            organization: None,
            impersonator: None,
            impersonation_end: None,
        }
    }

    #[test]
    fn the_rule_over_its_cases() {
        let window = Duration::from_secs(600);
        let now = 1_000_000;
        type Case = (
            Option<i64>,
            &'static [&'static str],
            bool,
            Result<(), Stale>,
        );
        let cases: &[Case] = &[
            (Some(now - 10), &["pwd"], false, Ok(())),
            (Some(now - 600), &["pwd"], false, Ok(())),
            (Some(now - 601), &["pwd"], false, Err(Stale::TooOld)),
            (
                Some(now - 7200),
                &["pwd", "otp", "mfa"],
                true,
                Err(Stale::TooOld),
            ),
            (Some(now + 3600), &["pwd"], false, Err(Stale::TooOld)),
            (Some(now + 30), &["pwd"], false, Ok(())),
            (None, &["pwd"], false, Err(Stale::UnknownAge)),
            (Some(now - 10), &["pwd"], true, Err(Stale::NoSecondFactor)),
            (Some(now - 10), &["hwk", "user", "mfa"], true, Ok(())),
            (Some(i64::MIN), &[], false, Err(Stale::TooOld)),
            (Some(i64::MAX), &[], false, Err(Stale::TooOld)),
        ];
        for (at, amr, second, want) in cases {
            assert_eq!(
                judge(&session(*at, amr), *second, window, now),
                *want,
                "auth_time {at:?}, amr {amr:?}, second factor {second}"
            );
        }
    }

    #[test]
    fn every_operation_has_its_own_name() {
        let mut names: Vec<_> = SensitiveOperation::ALL.iter().map(|o| o.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SensitiveOperation::ALL.len());
    }
}
