//! `POST /callback/:webauthn` (Auth.js `verifyAuthenticate` / `verifyRegister` in
//! `lib/utils/webauthn-utils.ts`): verify a registration or an authentication, then sign in
//! (the WebAuthn branch of `handleLoginOrRegister`, `lib/actions/callback/handle-login.ts`).
//! No CSRF check, as in Auth.js, whose `lib/index.ts` checks it on callbacks of credentials
//! providers only: the challenge cookie binds the response to this browser.

use webauthn_rs_core::proto::RegisterPublicKeyCredential;

use super::{login, run_sign_in_callback};
use crate::actions::Ctx;
use crate::actions::completion::SignedIn;
use crate::actions::webauthn_options::{
    Ceremony, adapter, consume_challenge, invalid, response_data, sign_up_needs_proof,
    verify_assertion,
};
use crate::adapter::Adapter;
use crate::callbacks::SignInParams;
use crate::error::AuthError;
use crate::providers::WebAuthnProvider;
use crate::response::RawResponse;
use crate::types::{Account, Authenticator, ProviderType, User};
use crate::webauthn;

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
    // A passkey for a signed-in user's account: that user's session, signed in recently
    // (checked when the options were made, and again now).
    if let Some(id) = &user.id {
        crate::actions::sensitive::require_for_action(
            ctx,
            id,
            crate::actions::account::SensitiveOperation::AddPasskey,
        )
        .await?;
    }
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
        if !result.is_new_user
            && let Some(id) = &result.user.id
        {
            crate::actions::notify::security_change(
                ctx.config,
                id,
                Some(ctx.req.origin()),
                crate::actions::notify::SecurityChange::PasskeyAdded,
            )
            .await;
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
        crate::actions::completion::FirstFactor::Passkey { user_verified },
    )
    .await
}
