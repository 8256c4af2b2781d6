//! The second step of a sign-in (beyond Auth.js; the `two_factor` module says what it is
//! for): [`second_step`] stops a sign-in whose user must prove a second factor before a
//! session opens, and `GET` / `POST <basePath>/two-factor` finish it.
//!
//! Between the two, the sign-in waits in a sealed cookie (`authjs.two-factor`, a JWE under
//! the auth secret like the session token, valid for `step_max_age`): the user, account
//! and profile the first factor produced, the callback URL, how the first factor was
//! proven, a hash of the browser's CSRF token (another browser's cookie, or a copied state
//! without the CSRF cookie, is refused) and a nonce that the finished step marks as used
//! (a replayed state opens nothing).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub(crate) mod changes;
pub(crate) mod checks;

use checks::{confirm, pending_enrolment, verify_code};

use super::Ctx;
use super::completion::{
    FirstFactor, SignInAuth, SignedIn, complete_sign_in, known_amr, open_session,
};
use super::limits::Limit;
use crate::adapter::Adapter;
use crate::cookies::{SessionCookieStore, SetCookie};
use crate::error::AuthError;
use crate::response::RawResponse;
use crate::two_factor::{FirstEnrolment, SecondFactor, TwoFactorError, TwoFactorPolicy};
use crate::types::{Account, JsonObject, Profile, User};

/// A sign-in waiting for its second factor.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    user: User,
    account: Account,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<Profile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_new_user: Option<bool>,
    callback_url: String,
    /// The first factor's `amr` values and when it was proven.
    amr: Vec<String>,
    /// SHA-256 (hex) of the browser's CSRF token.
    browser: String,
    /// Marked as used when the step finishes.
    once: String,
    /// The user has no second factor and the policy requires one: enrol first.
    enrol: bool,
    /// The WebAuthn provider whose passkeys may prove the second factor instead of a code
    /// (the user has one), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    passkey: Option<String>,
}

impl Pending {
    fn user_id(&self) -> &str {
        self.user.id.as_deref().unwrap_or_default()
    }

    /// What binds the secret of an enrolment at this sign-in: the attempt itself.
    fn binding(&self) -> String {
        format!("sign-in-attempt:{}", self.once)
    }

    fn signed_in(&self) -> SignedIn<'_> {
        SignedIn {
            user: &self.user,
            account: &self.account,
            profile: self.profile.as_ref(),
            is_new_user: self.is_new_user,
        }
    }
}

/// The claim that carries the pending sign-in in the sealed state.
const CLAIM: &str = "pending";

fn browser_binding(csrf_token: &str) -> String {
    crate::crypto::sha256_hex(csrf_token.as_bytes())
}

fn refused(message: &'static str) -> AuthError {
    AuthError::TwoFactor { message }
}

fn check_error(e: TwoFactorError) -> AuthError {
    match e {
        TwoFactorError::Adapter(source) => AuthError::AdapterError { source },
        other => AuthError::CallbackError {
            callback: "two-factor",
            source: Box::new(other),
        },
    }
}

fn adapter<'a>(ctx: &'a Ctx<'_>) -> Result<&'a dyn Adapter, AuthError> {
    ctx.config
        .adapter
        .as_deref()
        .ok_or_else(|| refused("second factors need an adapter"))
}

/// Where the two-factor page is: the host's own (`pages.two_factor`) or the built-in one.
fn page_url(ctx: &Ctx<'_>) -> String {
    match &ctx.config.pages.two_factor {
        Some(page) => page.clone(),
        None => ctx.auth_url("/two-factor"),
    }
}

/// Before a session opens: `Ok(Some(response))` when the user must prove a second factor
/// first (the sealed state and a redirect to the two-factor page; `cookies`, such as the
/// cleared OAuth checks, go along), `Ok(None)` to go on.
pub(crate) async fn second_step(
    ctx: &Ctx<'_>,
    signed_in: SignedIn<'_>,
    first: FirstFactor,
    auth: &SignInAuth,
    cookies: &[SetCookie],
) -> Result<Option<RawResponse>, AuthError> {
    let Some(options) = &ctx.config.two_factor else {
        return Ok(None);
    };
    if first.is_two_factors() {
        return Ok(None);
    }
    let (Some(db), Some(user_id)) = (&ctx.config.adapter, signed_in.user.id.as_deref()) else {
        return Ok(None);
    };
    // A confirmed TOTP secret is what the second step asks for (passkeys are not yet offered
    // there, so a user with passkeys alone is not asked): one read, not the whole status.
    let totp = crate::adapter::capability(db.two_factor(), "TwoFactorStore")?
        .get_two_factor(user_id)
        .await?
        .is_some_and(|t| t.totp_confirmed_at.is_some());
    let enrol = match (totp, options.policy) {
        (true, _) => false,
        (false, TwoFactorPolicy::Required) => true,
        (false, TwoFactorPolicy::Optional) => return Ok(None),
    };
    if enrol {
        may_enrol(options.first_enrolment, first, user_id)?;
    }
    // Held for a code, the user may prove the second factor with a passkey instead (not
    // while enrolling: the policy asks for the authenticator app and its recovery codes).
    let passkey = if enrol {
        None
    } else {
        passkey_offer(ctx, &**db, user_id).await?
    };
    let pending = Pending {
        user: signed_in.user.clone(),
        account: signed_in.account.clone(),
        profile: signed_in.profile.cloned(),
        is_new_user: signed_in.is_new_user,
        callback_url: ctx.callback_url.clone(),
        amr: auth.amr_strings(),
        browser: browser_binding(&ctx.csrf_token),
        once: crate::random::hex_token::<16>(),
        enrol,
        passkey,
    };
    let mut claims = JsonObject::new();
    claims.insert(
        CLAIM.to_owned(),
        serde_json::to_value(&pending).map_err(|e| AuthError::CallbackError {
            callback: "two-factor",
            source: Box::new(e),
        })?,
    );
    let max_age = options.step_max_age.as_secs().max(1);
    let spec = &ctx.cookies.two_factor;
    let sealed = ctx
        .config
        .codec
        .encode(&claims, &spec.name, max_age)
        .map_err(|e| AuthError::CallbackError {
            callback: "two-factor",
            source: Box::new(e),
        })?;
    let expires = OffsetDateTime::now_utc() + time::Duration::seconds(max_age as i64);
    let mut resp = RawResponse::redirect(page_url(ctx));
    resp.cookies = cookies.to_vec();
    resp.cookies
        .extend(SessionCookieStore::new(spec, &ctx.req.cookies).write(&sealed, expires));
    tracing::info!(user = %user_id, enrol, "two-factor: second step asked for");
    Ok(Some(resp))
}

/// Whether a user without a second factor may enrol one at a sign-in with `first`: who may
/// is the configuration's choice ([`FirstEnrolment`]).
fn may_enrol(who: FirstEnrolment, first: FirstFactor, user_id: &str) -> Result<(), AuthError> {
    let refused = |message| {
        tracing::warn!(user = %user_id, ?who, "two-factor: first enrolment refused at this sign-in");
        Err(AuthError::TwoFactorEnrolment { message })
    };
    match (who, first) {
        (FirstEnrolment::FirstFactor, _) | (FirstEnrolment::EmailLink, FirstFactor::EmailLink) => {
            Ok(())
        }
        (FirstEnrolment::EmailLink, _) => {
            refused("the first second factor is enrolled after an email-link sign-in only")
        }
        (FirstEnrolment::Operator, _) => refused("an operator enrols the first second factor"),
    }
}

/// The WebAuthn provider whose passkeys the second step offers `user_id`: the first one
/// configured, when the user has a passkey (one adapter read, only with such a provider).
#[cfg(feature = "webauthn")]
async fn passkey_offer(
    ctx: &Ctx<'_>,
    db: &dyn Adapter,
    user_id: &str,
) -> Result<Option<String>, AuthError> {
    let Some(p) = webauthn_provider(ctx, None) else {
        return Ok(None);
    };
    Ok((!db.list_authenticators_by_user_id(user_id).await?.is_empty()).then(|| p.id.clone()))
}

/// The configured WebAuthn provider `id` (any, without one).
#[cfg(feature = "webauthn")]
fn webauthn_provider<'a>(
    ctx: &Ctx<'a>,
    id: Option<&str>,
) -> Option<&'a crate::providers::WebAuthnProvider> {
    ctx.config.providers.iter().find_map(|p| match p {
        crate::providers::Provider::WebAuthn(w) if id.is_none_or(|id| w.id == id) => Some(&**w),
        _ => None,
    })
}

/// Without the `webauthn` feature no passkey is offered.
#[cfg(not(feature = "webauthn"))]
async fn passkey_offer(_: &Ctx<'_>, _: &dyn Adapter, _: &str) -> Result<Option<String>, AuthError> {
    Ok(None)
}

/// The pending sign-in of this request: sealed by this server, not expired, and made in
/// this browser.
fn open_pending(ctx: &Ctx<'_>) -> Result<Pending, AuthError> {
    let spec = &ctx.cookies.two_factor;
    let sealed = SessionCookieStore::new(spec, &ctx.req.cookies)
        .value()
        .ok_or_else(|| refused("no second step is pending (or it expired)"))?;
    let mut claims = ctx
        .config
        .codec
        .decode(&sealed, &spec.name)
        .ok()
        .flatten()
        .ok_or_else(|| refused("the second step expired or was not made here"))?;
    let pending: Pending = claims
        .remove(CLAIM)
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| refused("the second step expired or was not made here"))?;
    if pending.browser != browser_binding(&ctx.csrf_token) || pending.user_id().is_empty() {
        return Err(refused("the second step was made in another browser"));
    }
    Ok(pending)
}

/// The passkey second factor of `pending`: an assertion, verified and its challenge used
/// (the cookie clearing it comes back), of a passkey of the pending user, with the
/// provider the step offered.
async fn passkey_of(
    ctx: &Ctx<'_>,
    db: &dyn Adapter,
    pending: &Pending,
) -> Result<(SecondFactor, SetCookie), AuthError> {
    #[cfg(feature = "webauthn")]
    {
        let p = webauthn_provider(ctx, pending.passkey.as_deref())
            .filter(|_| pending.passkey.is_some())
            .ok_or_else(|| refused("no passkey was offered for this second step"))?;
        let asserted = super::webauthn_options::verify_assertion(ctx, p, db).await?;
        if asserted.user.id != pending.user_id() {
            return Err(refused("the passkey belongs to another user"));
        }
        Ok((
            SecondFactor::Passkey {
                user_verified: asserted.user_verified,
            },
            asserted.clear,
        ))
    }
    #[cfg(not(feature = "webauthn"))]
    {
        let _ = (ctx, db, pending);
        Err(refused("no passkey was offered for this second step"))
    }
}

/// The clearing cookies of the state.
fn clear_state(ctx: &Ctx<'_>) -> Vec<SetCookie> {
    SessionCookieStore::new(&ctx.cookies.two_factor, &ctx.req.cookies).clean()
}

/// `GET <basePath>/two-factor`: the page for the pending sign-in (enrolment when the user
/// must enrol), or the host's page.
pub(crate) async fn page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    if let Some(page) = &ctx.config.pages.two_factor {
        let mut url = page.clone();
        if let Some(e) = ctx.req.query.get("error") {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str("error=");
            url.push_str(&crate::cookies::encode_uri_component(e));
        }
        return Ok(RawResponse::redirect(url));
    }
    let pending = open_pending(ctx)?;
    let enrolment = if pending.enrol {
        let user_id = pending.user_id();
        let label = pending.user.email.as_deref().unwrap_or(user_id);
        Some(
            pending_enrolment(
                ctx.config,
                adapter(ctx)?,
                user_id,
                label,
                &pending.binding(),
            )
            .await
            .map_err(check_error)?,
        )
    } else {
        None
    };
    super::pages::render_two_factor_page(
        ctx,
        enrolment.as_ref(),
        pending.passkey.as_deref(),
        ctx.req.query.get("error"),
    )
}

/// `POST <basePath>/two-factor` (`csrfToken`, `code`): a TOTP code, or a recovery code;
/// for a user who must enrol, the first code of the new secret; or (`action=authenticate`,
/// `data`) an assertion of one of the user's passkeys, as the sign-in page's passkey form
/// posts it. Success opens the session
/// (after enrolment, on a page that shows the recovery codes once); a wrong code goes back
/// to the page with `error=TwoFactorError`, counted against the user and the client.
pub(crate) async fn verify(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    ctx.require_csrf("two-factor")?;
    let pending = open_pending(ctx)?;
    let db = adapter(ctx)?;
    let user_id = pending.user_id().to_owned();
    // Reserved before the check, as credentials attempts are: parallel guesses are counted
    // one by one.
    ctx.count_attempt(Limit::SecondFactorPerClient, None)
        .await?;
    if let Err(e) = ctx
        .count_attempt(Limit::SecondFactorPerUser, Some(&user_id))
        .await
    {
        ctx.give_back(Limit::SecondFactorPerClient, None).await;
        return Err(e);
    }
    let code = ctx.req.body_str("code").unwrap_or_default();
    let mut cleared = clear_state(ctx);
    let proven = if ctx.req.body_str("action") == Some("authenticate") {
        match passkey_of(ctx, db, &pending).await {
            Ok((factor, clear)) => {
                cleared.push(clear);
                Some((factor, None))
            }
            Err(e) => {
                ctx.log_error(&e);
                None
            }
        }
    } else if pending.enrol {
        match confirm(ctx.config, db, &user_id, code, &pending.binding()).await {
            Ok(codes) => Some((SecondFactor::Totp, Some(codes))),
            Err(TwoFactorError::InvalidCode | TwoFactorError::NotEnrolled) => None,
            Err(e) => return Err(check_error(e)),
        }
    } else {
        match crate::adapter::capability(db.two_factor(), "TwoFactorStore")?
            .get_two_factor(&user_id)
            .await?
        {
            Some(stored) if stored.totp_confirmed_at.is_some() => {
                verify_code(ctx.config, db, &stored, code)
                    .await
                    .map_err(check_error)?
                    .map(|factor| (factor, None))
            }
            // Passkeys only (or the TOTP secret was removed meanwhile): no code to check.
            _ => None,
        }
    };
    let Some((factor, recovery_codes)) = proven else {
        let e = refused("wrong, reused or expired code");
        ctx.log_error(&e);
        let mut url = page_url(ctx);
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str("error=TwoFactorError");
        return Ok(RawResponse::redirect(url));
    };
    ctx.reset_limit(Limit::SecondFactorPerUser, Some(&user_id))
        .await;
    ctx.give_back(Limit::SecondFactorPerClient, None).await;
    // The state opens one session: a copy replayed after this is refused.
    let ttl = ctx
        .config
        .two_factor
        .as_ref()
        .map_or(std::time::Duration::from_secs(300), |t| t.step_max_age);
    if !ctx.first_use("two-factor-state", &pending.once, ttl).await {
        return Err(refused("the second step was used already"));
    }
    // The state is sealed by this server, so its values are known ones.
    let mut amr: Vec<&'static str> = pending.amr.iter().filter_map(|m| known_amr(m)).collect();
    for m in factor.amr().iter().chain(&["mfa"]) {
        if !amr.contains(m) {
            amr.push(m);
        }
    }
    let auth = SignInAuth {
        amr: amr.into(),
        auth_time: OffsetDateTime::now_utc().unix_timestamp(),
    };
    let signed_in = pending.signed_in();
    // A ban made while the user was at the second step holds.
    crate::actions::bans::refuse_banned(
        ctx.config,
        signed_in.user.id.as_deref(),
        &signed_in.account.provider,
    )
    .await?;
    let opened = open_session(ctx, signed_in.user, &auth).await?;
    let resp = complete_sign_in(
        ctx,
        signed_in,
        opened.as_ref(),
        cleared,
        &auth,
        &pending.callback_url,
    )
    .await?;
    tracing::info!(user = %user_id, ?factor, "two-factor: second step passed");
    match recovery_codes {
        // Enrolled now: the user hears of it (whoever held the first factor may have been
        // the one who enrolled), and the recovery codes are shown once, on a page that
        // carries the session cookies and links on to where the sign-in was going.
        Some(codes) => {
            crate::actions::notify::security_change(
                ctx.config,
                &user_id,
                Some(ctx.req.origin()),
                crate::actions::notify::SecurityChange::TotpEnrolled,
            )
            .await;
            super::pages::render_recovery_codes_page(ctx, &codes, resp)
        }
        None => Ok(resp),
    }
}
