//! `POST /callback/:webauthn` (Auth.js `verifyAuthenticate` / `verifyRegister` in
//! `lib/utils/webauthn-utils.ts`): verify a registration or an authentication, then sign in
//! (the WebAuthn branch of `handleLoginOrRegister`, `lib/actions/callback/handle-login.ts`).
//! No CSRF check, as in Auth.js, whose `lib/index.ts` checks it on callbacks of credentials
//! providers only: the challenge cookie binds the response to this browser.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use webauthn_rs_core::proto::{PublicKeyCredential, RegisterPublicKeyCredential};

use super::{SignedIn, login, run_sign_in_callback};
use crate::actions::Ctx;
use crate::actions::webauthn_options::{Ceremony, adapter, consume_challenge, sign_up_needs_proof};
use crate::adapter::Adapter;
use crate::callbacks::SignInParams;
use crate::error::AuthError;
use crate::providers::WebAuthnProvider;
use crate::response::RawResponse;
use crate::types::{Account, Authenticator, ProviderType, User};
use crate::webauthn;

fn invalid(message: impl Into<String>) -> AuthError {
    AuthError::InvalidRequest {
        message: message.into(),
    }
}

/// The `data` field: a JSON string (the built-in form) or an object (a JSON body).
fn response_data<T: serde::de::DeserializeOwned>(ctx: &Ctx<'_>) -> Option<T> {
    match ctx.req.body.as_ref()?.get("data")? {
        Value::String(s) => serde_json::from_str(s).ok(),
        v @ Value::Object(_) => serde_json::from_value(v.clone()).ok(),
        _ => None,
    }
}

/// Drops an assertion's `userHandle`. The authenticator is found by credential id, as in
/// Auth.js, so the handle is not needed; and `@simplewebauthn/browser` (Auth.js's client)
/// sends it decoded as UTF-8 text, which for a handle of random bytes is no base64url at all.
fn without_user_handle(mut data: Value) -> Value {
    if let Some(response) = data.get_mut("response").and_then(Value::as_object_mut) {
        response.remove("userHandle");
    }
    data
}

pub(crate) async fn callback(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
) -> Result<RawResponse, AuthError> {
    let db = adapter(ctx)?;
    match ctx.req.body_str("action") {
        Some("authenticate") => authenticate(ctx, p, db).await,
        Some("register") => register(ctx, p, db).await,
        _ => Err(invalid("Invalid action parameter")),
    }
}

async fn authenticate(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
    db: &dyn Adapter,
) -> Result<RawResponse, AuthError> {
    let asserted = verify_assertion(ctx, p, db).await?;
    sign_in(
        ctx,
        db,
        User::from(&asserted.user),
        asserted.account,
        None,
        asserted.clear,
        asserted.user_verified,
    )
    .await
}

/// A verified passkey assertion: the passkey's account and user, the cookie that clears the
/// used challenge, and whether the authenticator verified the user.
pub(crate) struct Asserted {
    pub account: Account,
    pub user: crate::adapter::AdapterUser,
    pub clear: crate::cookies::SetCookie,
    pub user_verified: bool,
}

/// Verifies the assertion in the request's `data` against the challenge cookie (used once)
/// and the stored authenticator, whose counter it updates: the sign-in with a passkey, and
/// the passkey second step ([`crate::actions::two_factor`]).
pub(crate) async fn verify_assertion(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
    db: &dyn Adapter,
) -> Result<Asserted, AuthError> {
    let response: PublicKeyCredential = response_data::<Value>(ctx)
        .map(without_user_handle)
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| invalid("Invalid WebAuthn Authentication response"))?;
    let credential_id = STANDARD.encode(&response.raw_id);
    let row = db.get_authenticator(&credential_id).await?.ok_or_else(|| {
        invalid(format!(
            "WebAuthn authenticator not found in database: {{\"credentialID\":\"{credential_id}\"}}"
        ))
    })?;
    let (challenge, clear) = consume_challenge(ctx, p, Ceremony::Authenticate).await?;
    let rp = webauthn::relying_party(p, ctx.req.url.site.base())
        .map_err(|e| e.into_auth_error(&p.id))?;
    let counter = webauthn::verify_authentication(
        p,
        &rp,
        &response,
        &challenge.state,
        &challenge.challenge,
        &row,
    )
    .map_err(|e| e.into_auth_error(&p.id))?;
    db.update_authenticator_counter(&row.credential_id, u64::from(counter))
        .await?
        .ok_or_else(|| invalid("WebAuthn authenticator vanished while its counter was updated"))?;
    let account = db
        .get_account(&row.provider_account_id, &p.id)
        .await?
        .ok_or_else(|| {
            invalid(format!(
                "WebAuthn account not found in database: {{\"credentialID\":\"{}\",\"providerAccountId\":\"{}\"}}",
                row.credential_id, row.provider_account_id
            ))
        })?;
    let user_id = account.user_id.clone().unwrap_or_default();
    let user = db
        .get_user(&user_id)
        .await?
        .ok_or_else(|| invalid(format!("WebAuthn user not found in database: {user_id}")))?;
    Ok(Asserted {
        account,
        user,
        clear,
        user_verified: p.require_user_verification,
    })
}

async fn register(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
    db: &dyn Adapter,
) -> Result<RawResponse, AuthError> {
    let response: RegisterPublicKeyCredential =
        response_data(ctx).ok_or_else(|| invalid("Invalid WebAuthn Registration response"))?;
    let (challenge, clear) = consume_challenge(ctx, p, Ceremony::Register).await?;
    let user = challenge
        .register_data
        .ok_or_else(|| invalid("Missing user registration data in WebAuthn challenge cookie"))?;
    // A challenge for a new account made before the configuration required proof of the
    // address is refused as its options would be now.
    if user.id.is_none() && sign_up_needs_proof(ctx.config) {
        return Err(AuthError::AccessDenied {
            source: Some("passkey sign-up needs the email address proven first".into()),
        });
    }
    let rp = webauthn::relying_party(p, ctx.req.url.site.base())
        .map_err(|e| e.into_auth_error(&p.id))?;
    // Auth.js `transportsToString`: the browser's list, comma-joined.
    let transports = response.response.transports.as_ref().map(|list| {
        list.iter()
            .filter_map(|t| serde_json::to_value(t).ok()?.as_str().map(str::to_owned))
            .filter(|t| t != "unknown")
            .collect::<Vec<_>>()
            .join(",")
    });
    let authenticator = webauthn::verify_registration(
        p,
        &rp,
        &response,
        &challenge.state,
        &challenge.challenge,
        transports,
    )
    .map_err(|e| e.into_auth_error(&p.id))?;
    // A credential id that is registered already (to anyone) is refused before anything
    // is written: no user, account or session row for a registration that cannot finish.
    if db
        .get_authenticator(&authenticator.credential_id)
        .await?
        .is_some()
    {
        return Err(AuthError::AccountNotLinked {
            message: "This passkey is registered already".into(),
        });
    }
    let mut account = Account::new(
        ProviderType::Webauthn,
        p.id.clone(),
        authenticator.provider_account_id.clone(),
    );
    account.user_id = user.id.clone();
    let profile_user = User {
        id: user.id.clone(),
        email: Some(user.email.clone()),
        name: user.name.clone(),
        ..User::default()
    };
    let user_verified = p.require_user_verification;
    sign_in(
        ctx,
        db,
        profile_user,
        account,
        Some(authenticator),
        clear,
        user_verified,
    )
    .await
}

/// signIn callback, the WebAuthn branch of Auth.js `handleLoginOrRegister`, the new
/// authenticator, session, redirect.
async fn sign_in(
    ctx: &Ctx<'_>,
    db: &dyn Adapter,
    user: User,
    mut account: Account,
    new_authenticator: Option<Authenticator>,
    clear_challenge: crate::cookies::SetCookie,
    // Whether the ceremony required user verification (then the passkey proves two
    // factors).
    user_verified: bool,
) -> Result<RawResponse, AuthError> {
    // Auth.js ignores a redirect returned here (`lib/actions/callback/index.ts`); `false`
    // still refuses.
    run_sign_in_callback(
        ctx,
        SignInParams {
            user: &user,
            account: Some(&account),
            profile: None,
            email_verification_request: false,
            credentials: None,
        },
    )
    .await?;
    let result = login::account_login(
        ctx,
        db,
        &user,
        &mut account,
        None,
        login::AccountRules::WebAuthn,
    )
    .await?;
    if let Some(mut authenticator) = new_authenticator {
        authenticator.user_id = result.user.id.clone();
        if let Err(e) = db.create_authenticator(authenticator).await {
            // Lost a race for the credential id: remove what this sign-in wrote.
            if result.is_new_user {
                result.undo_new_user(db).await;
            } else if let Err(e) = db
                .unlink_account(&account.provider, &account.provider_account_id)
                .await
            {
                tracing::error!(error = %e, "could not remove the account of a refused passkey");
            }
            return Err(e.into());
        }
    }
    // `finish_sign_in` opens the session last, so that every refused step above leaves
    // none.
    super::finish_sign_in(
        ctx,
        SignedIn {
            user: &result.user,
            account: &account,
            profile: None,
            is_new_user: Some(result.is_new_user),
        },
        result.session.as_ref(),
        vec![clear_challenge],
        super::FirstFactor::Passkey { user_verified },
    )
    .await
}
