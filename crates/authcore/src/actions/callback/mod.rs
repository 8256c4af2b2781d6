//! `GET` / `POST /callback/:provider` (Auth.js `lib/actions/callback/index.ts`): one module
//! per provider type.

pub(crate) mod credentials;
#[cfg(feature = "email")]
pub(crate) mod email;
pub(crate) mod login;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;
#[cfg(feature = "webauthn")]
pub(crate) mod webauthn;

use super::Ctx;
use super::completion::{FirstFactor, SignInAuth, SignedIn, complete_sign_in, open_session};
use crate::callbacks::{SignInOutcome, SignInParams};
use crate::cookies::SetCookie;
use crate::error::AuthError;
use crate::providers::Provider;
use crate::response::RawResponse;

pub(crate) async fn callback(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    // The outcome is matched, not kept: a result held across the failure's await would
    // add a response's size to the future of every sign-in.
    match callback_for_provider(ctx).await {
        Ok(response) => {
            crate::telemetry::sign_in(ctx.provider.map(Provider::id), None);
            Ok(response)
        }
        // Boxed: rare, and its record's future is not small.
        Err(e) => Err(Box::pin(failed(ctx, e)).await),
    }
}

/// A callback that failed: counted, recorded in the audit log (a refused password is
/// recorded where the identifier is known), its details logged in debug mode.
async fn failed(ctx: &Ctx<'_>, e: AuthError) -> AuthError {
    crate::telemetry::sign_in(ctx.provider.map(Provider::id), Some(e.error_type()));
    if !matches!(ctx.provider, Some(Provider::Credentials(_))) {
        ctx.audit(|| {
            crate::audit::AuditEvent::new("signInFailed")
                .with("provider", ctx.provider.map(|p| p.id().to_owned()))
                .with("error", e.error_type())
        })
        .await;
    }
    ctx.debug("callback route error details", || {
        serde_json::json!({
            "method": ctx.req.method.as_str(),
            "providerId": ctx.req.provider_id,
            "error": e.to_string(),
        })
    });
    e
}

async fn callback_for_provider(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let provider = ctx
        .provider
        .ok_or_else(|| AuthError::invalid_provider("Callback route called without provider"))?;
    match provider {
        Provider::Credentials(p) => {
            if !ctx.req.is_post() {
                return Err(AuthError::invalid_provider(format!(
                    "Callback for provider type ({}) is not supported",
                    provider.kind()
                )));
            }
            ctx.require_csrf("callback")?;
            credentials::callback(ctx, p).await
        }
        // GET, or POST for `response_mode=form_post`; no CSRF check: Auth.js (`lib/index.ts`)
        // checks it on callbacks of credentials providers only.
        // Boxed, like the other non-credentials callbacks: see `actions::dispatch`.
        #[cfg(feature = "oauth")]
        Provider::OAuth(p) => Box::pin(oauth::callback(ctx, p)).await,
        // Any method; no CSRF check (as above).
        #[cfg(feature = "email")]
        Provider::Email(p) => Box::pin(email::callback(ctx, p)).await,
        // POST only; no CSRF check (as above).
        #[cfg(feature = "webauthn")]
        Provider::WebAuthn(p) => {
            if !ctx.req.is_post() {
                return Err(AuthError::invalid_provider(format!(
                    "Callback for provider type ({}) is not supported",
                    provider.kind()
                )));
            }
            Box::pin(webauthn::callback(ctx, p)).await
        }
    }
}

/// Runs the `signIn` callback (Auth.js `handleAuthorized` in `lib/actions/callback/index.ts`).
/// `Ok(Some(url))` aborts the sign-in with a redirect.
pub(crate) async fn run_sign_in_callback(
    ctx: &Ctx<'_>,
    params: SignInParams<'_>,
) -> Result<Option<String>, AuthError> {
    match ctx.config.callbacks.sign_in(params).await {
        Ok(SignInOutcome::Allow) => Ok(None),
        Ok(SignInOutcome::Deny) => Err(AuthError::AccessDenied { source: None }),
        Ok(SignInOutcome::Redirect(url)) => Ok(Some(ctx.redirect_callback(&url).await?)),
        Err(e) => match e.downcast::<AuthError>() {
            Ok(auth) => Err(*auth),
            Err(source) => Err(AuthError::AccessDenied {
                source: Some(source),
            }),
        },
    }
}

/// The end of every sign-in (Auth.js `lib/actions/callback/index.ts`). `current` is the
/// browser's database session when the user was signed in already (it stays); otherwise,
/// unless a second factor is asked for first ([`crate::two_factor`]), a new database
/// session opens here, after every other step, so that a refused step leaves none. Then
/// [`complete_sign_in`](super::completion::complete_sign_in).
pub(crate) async fn finish_sign_in(
    ctx: &Ctx<'_>,
    signed_in: SignedIn<'_>,
    current: Option<&crate::adapter::AdapterSession>,
    cookies: Vec<SetCookie>,
    first: FirstFactor,
) -> Result<RawResponse, AuthError> {
    crate::actions::bans::refuse_banned(
        ctx.config,
        signed_in.user.id.as_deref(),
        &signed_in.account.provider,
    )
    .await?;
    let auth = SignInAuth::first(first);
    // With second factors on, a sign-in in a browser signed in already (an OAuth or passkey
    // sign-in keeps the current database session otherwise, as Auth.js does) is a fresh one,
    // a step-up: it passes the second step and opens a session of its own that records it.
    #[cfg(feature = "two-factor")]
    let current = current.filter(|_| ctx.config.two_factor.is_none());
    if current.is_none() {
        #[cfg(feature = "two-factor")]
        if let Some(step) =
            crate::actions::two_factor::second_step(ctx, signed_in, first, &auth, &cookies).await?
        {
            return Ok(step);
        }
    }
    let opened = match current {
        // The session stays, as in Auth.js, but this sign-in is its newest: a sign-in again
        // before a sensitive change counts.
        Some(session) => {
            if let Some(adapter) = &ctx.config.adapter {
                let stored = ctx.config.stored_session_token(&session.session_token);
                crate::actions::completion::record_sign_in(ctx, &**adapter, &stored, &auth).await;
            }
            None
        }
        None => open_session(ctx, signed_in.user, &auth).await?,
    };
    complete_sign_in(
        ctx,
        signed_in,
        current.or(opened.as_ref()),
        cookies,
        &auth,
        &ctx.callback_url,
    )
    .await
}
