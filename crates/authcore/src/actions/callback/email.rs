//! Email (magic link) sign-in: sending the link (POST /signin/:id, Auth.js
//! `lib/actions/signin/send-token.ts`) and verifying it (GET /callback/:id, Auth.js
//! `lib/actions/callback/index.ts`), with the email branch of `handleLoginOrRegister`
//! (`lib/actions/callback/handle-login.ts`).

use time::OffsetDateTime;

use super::{login, run_sign_in_callback};
use crate::actions::Ctx;
use crate::actions::completion::SignedIn;
use crate::actions::limits::Limit;
use crate::adapter::{Adapter, VerificationToken};
use crate::callbacks::SignInParams;
use crate::config::ConfigInner;
use crate::error::AuthError;
use crate::providers::email::EmailProvider;
use crate::random;
use crate::response::RawResponse;
use crate::types::{Account, ProviderType, User};

/// `provider.secret ?? config.secret` as a string.
fn secret<'a>(c: &'a ConfigInner, p: &'a EmailProvider) -> &'a str {
    p.secret.as_deref().unwrap_or(&c.secret_string)
}

/// The query of a magic link with `token` for `email` that returns to `callback_url`.
fn link_query(callback_url: &str, token: &str, email: &str) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("callbackUrl", callback_url)
        .append_pair("token", token)
        .append_pair("email", email)
        .finish()
}

/// Stores `token` of `p` for `email` (hashed with the secret), valid for the provider's
/// `maxAge`: its stored form and when it expires.
async fn store_token(
    c: &ConfigInner,
    db: &dyn Adapter,
    p: &EmailProvider,
    email: &str,
    token: &str,
) -> Result<(String, OffsetDateTime), crate::adapter::AdapterError> {
    let expires = OffsetDateTime::now_utc() + time::Duration::seconds(p.max_age as i64);
    let hashed = crate::crypto::hash_token(token, secret(c, p));
    db.create_verification_token(VerificationToken {
        identifier: email.to_owned(),
        token: hashed.clone(),
        expires,
    })
    .await?;
    Ok((hashed, expires))
}

/// A magic link an administrator hands over, for the stored user of `email`: it signs
/// them in once (as a mailed one does) and lands on `callback_url`. Its URL (a credential),
/// its token and when it expires; `None` without a site URL to put it on.
pub(crate) async fn handed_over_link(
    c: &ConfigInner,
    db: &dyn Adapter,
    p: &EmailProvider,
    email: &str,
    origin: Option<&str>,
    callback_url: &str,
) -> Result<Option<(String, String, OffsetDateTime)>, crate::adapter::AdapterError> {
    let token = p.new_token();
    if token.is_empty() {
        return Ok(None);
    }
    let query = link_query(callback_url, &token, email);
    let Some(url) = c.url_on(origin, &format!("/callback/{}?{query}", p.id)) else {
        return Ok(None);
    };
    let (_, expires) = store_token(c, db, p, email, &token).await?;
    Ok(Some((url, token, expires)))
}

fn config_error(provider: &str, message: String) -> AuthError {
    AuthError::CallbackRouteError {
        provider: provider.to_owned(),
        source: message.into(),
    }
}

fn adapter<'a>(ctx: &'a Ctx<'_>) -> Result<&'a dyn crate::adapter::Adapter, AuthError> {
    // Guaranteed by the config builder for email providers.
    ctx.config
        .adapter
        .as_deref()
        .ok_or_else(|| config_error("email", "email sign-in needs an adapter".into()))
}

/// POST /signin/:email — creates a token and sends the link (Auth.js `sendToken` in
/// `lib/actions/signin/send-token.ts`).
/// The user and account the `signIn` callback sees for `email`, when the link is asked for
/// and when it is followed: the stored user, or (Auth.js) one with a fresh id that
/// login-or-register creates only after the link is followed.
fn sign_in_subject(
    p: &EmailProvider,
    existing: Option<&crate::adapter::AdapterUser>,
    email: &str,
) -> (User, Account) {
    let user = match existing {
        Some(u) => User::from(u),
        None => User {
            id: Some(random::uuid_v4()),
            email: Some(email.to_owned()),
            ..User::default()
        },
    };
    let mut account = Account::new(ProviderType::Email, p.id.clone(), email.to_owned());
    account.user_id = user.id.clone();
    (user, account)
}

pub(crate) async fn send_link(ctx: &Ctx<'_>, p: &EmailProvider) -> Result<RawResponse, AuthError> {
    let db = adapter(ctx)?;
    let email = p
        .normalize(ctx.req.body_str("email").unwrap_or(""))
        .map_err(|e| config_error(&p.id, e.to_string()))?;
    // No mail bombing through authcore: sends are limited per address and per client.
    ctx.count_attempt(Limit::EmailsPerAddress, Some(&email))
        .await?;
    ctx.count_attempt(Limit::EmailsPerClient, None).await?;
    let existing = db.get_user_by_email(&email).await?;
    let verify_request = || {
        RawResponse::redirect(ctx.auth_url(&format!(
            "/verify-request?provider={}&type=email",
            crate::cookies::encode_uri_component(&p.id)
        )))
    };
    if existing.is_none()
        && !crate::actions::organizations::may_sign_up(ctx.config, Some(&email)).await?
    {
        // The same answer as for a known address: whether one is a user stays unsaid.
        tracing::info!(provider = %p.id, "sign-up refused: no magic link for an unknown address");
        return Ok(verify_request());
    }
    let (user, account) = sign_in_subject(p, existing.as_ref(), &email);
    if let Some(url) = run_sign_in_callback(
        ctx,
        SignInParams {
            user: &user,
            account: Some(&account),
            profile: None,
            email_verification_request: true,
            credentials: None,
        },
    )
    .await?
    {
        return Ok(RawResponse::redirect(url));
    }
    let token = p.new_token();
    if token.is_empty() {
        return Err(config_error(
            &p.id,
            "the token generator returned \"\"".into(),
        ));
    }
    let query = link_query(&ctx.callback_url, &token, &email);
    let url = ctx.auth_url(&format!("/callback/{}?{query}", p.id));
    let send = p
        .send
        .as_ref()
        .ok_or_else(|| config_error(&p.id, "no sender".into()))?;
    let (hashed, expires) = store_token(ctx.config, db, p, &email, &token).await?;
    // Unlike Auth.js (which sends and stores concurrently), the token is stored first and
    // withdrawn again when sending fails, so no usable link exists that was never mailed.
    let sent = send(p.link_request(
        &email,
        token,
        expires,
        url,
        &ctx.config.theme,
        crate::providers::email::LinkPurpose::SignIn,
    ))
    .await;
    if let Err(source) = sent {
        if let Err(e) = db.use_verification_token(&email, &hashed).await {
            tracing::error!(provider = %p.id, error = %e, "could not withdraw the unsent verification token");
        }
        return Err(AuthError::CallbackRouteError {
            provider: p.id.clone(),
            source,
        });
    }
    Ok(verify_request())
}

/// GET /callback/:email?token&email — verifies the link and signs in (Auth.js
/// `lib/actions/callback/index.ts`).
pub(crate) async fn callback(ctx: &Ctx<'_>, p: &EmailProvider) -> Result<RawResponse, AuthError> {
    let db = adapter(ctx)?;
    let q = &ctx.req.query;
    let token = q
        .get("token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| config_error(&p.id, "missing token".into()))?;
    // Deviation: the email is required to look the token up (adapters key by both).
    let email = q.get("email").unwrap_or_default();
    // Consumed before the expiry check: an expired link cannot be retried (as in Auth.js
    // `lib/actions/callback/index.ts`).
    let invite = db
        .use_verification_token(
            email,
            &crate::crypto::hash_token(token, secret(ctx.config, p)),
        )
        .await?;
    let now = OffsetDateTime::now_utc();
    let invite = match invite {
        Some(i) if i.expires >= now && i.identifier == email => i,
        other => {
            return Err(AuthError::Verification {
                has_invite: other.is_some(),
                expired: other.is_some_and(|i| i.expires < now),
            });
        }
    };
    let existing = db.get_user_by_email(&invite.identifier).await?;
    let (user, mut account) = sign_in_subject(p, existing.as_ref(), &invite.identifier);
    if let Some(url) = run_sign_in_callback(
        ctx,
        SignInParams {
            user: &user,
            account: Some(&account),
            profile: None,
            email_verification_request: false,
            credentials: None,
        },
    )
    .await?
    {
        return Ok(RawResponse::redirect(url));
    }
    let result = login::email_login(ctx, db, existing, &invite.identifier).await?;
    account.user_id = Some(result.user.id.clone().unwrap_or_default());
    super::finish_sign_in(
        ctx,
        SignedIn {
            user: &result.user,
            account: &account,
            profile: None,
            is_new_user: Some(result.is_new_user),
        },
        result.session.as_ref(),
        Vec::new(),
        crate::actions::completion::FirstFactor::EmailLink,
    )
    .await
}
