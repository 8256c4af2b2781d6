//! `GET /webauthn-options/:provider` (Auth.js `lib/actions/webauthn-options.ts`): decide
//! between registration and authentication, and answer the ceremony options with a sealed
//! challenge cookie.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::StatusCode;
use serde_json::{Value, json};
use webauthn_rs_core::proto::PublicKeyCredential;

use super::Ctx;
use crate::actions::callback::login::current_user;
use crate::adapter::{Adapter, AdapterUser};
use crate::checks::{CHECK_MAX_AGE, open_claims, seal_claims};
use crate::error::AuthError;
use crate::providers::{Provider, WebAuthnProvider};
use crate::response::RawResponse;
use crate::types::Account;
use crate::webauthn::{self, CeremonyError, RegisterUser};

/// Which ceremony to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ceremony {
    Register,
    Authenticate,
}

impl Ceremony {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Ceremony::Register => "register",
            Ceremony::Authenticate => "authenticate",
        }
    }
}

/// Who the options are for (Auth.js `getUserInfo` or the signed-in user).
struct UserInfo {
    user: Option<AdapterUser>,
    /// An email with no stored user yet (registration of a new user).
    new_email: Option<String>,
    exists: bool,
}

/// Auth.js `inferWebAuthnOptions` (`lib/utils/webauthn-utils.ts`).
fn decide(requested: Option<&str>, logged_in: bool, info: &UserInfo) -> Option<Ceremony> {
    let has_user = info.user.is_some() || info.new_email.is_some();
    match requested {
        Some("authenticate") => Some(Ceremony::Authenticate),
        Some("register") => (has_user && logged_in == info.exists).then_some(Ceremony::Register),
        _ if logged_in => None,
        _ if has_user && info.exists => Some(Ceremony::Authenticate),
        _ if has_user => Some(Ceremony::Register),
        _ => Some(Ceremony::Authenticate),
    }
}

/// Whether a passkey registered without a session (which creates the account of the email
/// it names) needs the address proven first: when another way in proves the address — an
/// email provider's magic link, an OAuth provider that links accounts by email, or a
/// password accounts' reset link — the owner's later sign-in would otherwise land in an
/// account someone else prepared, with that someone's passkey on it. Auth.js allows it;
/// here only behind `DangerousOptions::passkey_sign_up_without_email_proof`. Where nothing
/// can prove an address, the email is just the name of a passkey account and sign-up stays
/// open.
pub(crate) fn sign_up_needs_proof(config: &crate::config::ConfigInner) -> bool {
    #[cfg(feature = "passwords")]
    let password_resets = config.password_accounts.is_some() && config.mailer().is_some();
    #[cfg(not(feature = "passwords"))]
    let password_resets = false;
    !config.dangerous.passkey_sign_up_without_email_proof
        && (password_resets || config.providers.iter().any(Provider::proves_email))
}

/// The answer to a passkey sign-up that needs the address proven first (the same for
/// every address, known or not).
fn proof_required() -> RawResponse {
    let mut r = RawResponse::json(json!({
        "error": "EmailProofRequired",
        "message": "Sign in with your email address first, then add a passkey.",
    }));
    r.status = Some(StatusCode::FORBIDDEN);
    r
}

pub(crate) fn provider<'a>(ctx: &Ctx<'a>) -> Result<&'a WebAuthnProvider, AuthError> {
    match ctx.provider {
        Some(Provider::WebAuthn(p)) => Ok(p),
        _ => Err(AuthError::invalid_provider(
            "Invalid provider: webauthn-options needs a WebAuthn provider",
        )),
    }
}

pub(crate) fn adapter<'a>(ctx: &Ctx<'a>) -> Result<&'a dyn Adapter, AuthError> {
    ctx.config
        .adapter
        .as_deref()
        .ok_or_else(|| AuthError::invalid_provider("WebAuthn requires an adapter"))
}

pub(crate) async fn webauthn_options(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let p = provider(ctx)?;
    let db = adapter(ctx)?;
    let requested = ctx.req.query.get("action");
    if !matches!(requested, None | Some("register" | "authenticate")) {
        return Ok(bad_request("Invalid action"));
    }
    let current = current_user(ctx, db).await;
    let logged_in = current.is_some();
    let needs_proof = !logged_in && sign_up_needs_proof(ctx.config);
    if needs_proof && requested == Some("register") {
        tracing::debug!(provider = %p.id, "passkey sign-up refused: email not proven");
        return Ok(proof_required());
    }
    let info = match current {
        Some(u) => UserInfo {
            user: Some(u),
            new_email: None,
            exists: true,
        },
        None => match ctx.req.query.get("email").filter(|e| !e.trim().is_empty()) {
            // Normalised as the email provider and OAuth profiles are (Auth.js uses the raw
            // value, so `Ada@x` would become a second account beside `ada@x`).
            Some(raw) => {
                let Ok(email) = crate::email_address::normalize_email(raw) else {
                    return Ok(bad_request("Invalid email"));
                };
                match db.get_user_by_email(&email).await? {
                    Some(u) => UserInfo {
                        user: Some(u),
                        new_email: None,
                        exists: true,
                    },
                    None => UserInfo {
                        user: None,
                        new_email: Some(email),
                        exists: false,
                    },
                }
            }
            None => UserInfo {
                user: None,
                new_email: None,
                exists: false,
            },
        },
    };
    let ceremony = match decide(requested, logged_in, &info) {
        // An unknown address without a session would register: where sign-up needs the
        // address proven, it gets an authentication like everyone else instead (the
        // browser then offers the passkeys it has, and the built-in page the email link).
        Some(Ceremony::Register) if needs_proof => Ceremony::Authenticate,
        Some(c) => c,
        None => return Ok(bad_request("Invalid request")),
    };
    // A passkey added to a signed-in user's account is a sensitive change: only from a
    // recent sign-in (the registration's callback checks it again).
    if ceremony == Ceremony::Register
        && let Some(user) = info.user.as_ref().filter(|_| logged_in)
    {
        match crate::actions::sensitive::require_for_action(
            ctx,
            &user.id,
            crate::actions::account::SensitiveOperation::AddPasskey,
        )
        .await
        {
            Ok(()) => {}
            Err(AuthError::ReauthenticationRequired { .. }) => return Ok(reauthenticate(ctx)),
            Err(e) => return Err(e),
        }
    }
    let rp = webauthn::relying_party(p, ctx.req.url.site.base())
        .map_err(|e| e.into_auth_error(&p.id))?;
    let user_id = info.user.as_ref().map(|u| u.id.clone());
    // `None` without a stored user: Auth.js then leaves `allowCredentials` out; so does
    // `hide_accounts` for every address when nobody is signed in.
    let known = match &user_id {
        Some(_) if p.hide_accounts && !logged_in => None,
        Some(id) => Some(db.list_authenticators_by_user_id(id).await?),
        None => None,
    };
    let setup_error = |e: CeremonyError| e.into_auth_error(&p.id);
    let (options, state, register_data) = match ceremony {
        Ceremony::Authenticate => {
            let (options, state) =
                webauthn::authentication_options(p, &rp, known.as_deref()).map_err(setup_error)?;
            (options, serde_json::to_value(state), None)
        }
        Ceremony::Register => {
            let email = info
                .user
                .as_ref()
                .and_then(|u| u.email.clone())
                .or(info.new_email)
                .ok_or_else(|| AuthError::InvalidRequest {
                    message: "WebAuthn registration needs the user's email".into(),
                })?;
            let user = RegisterUser {
                id: user_id,
                email,
                name: info.user.as_ref().and_then(|u| u.name.clone()),
            };
            let handle = crate::random::bytes::<32>();
            let (options, state) = webauthn::registration_options(
                p,
                &rp,
                &user,
                &handle,
                known.as_deref().unwrap_or_default(),
            )
            .map_err(setup_error)?;
            (options, serde_json::to_value(state), Some(user))
        }
    };
    let state = state.map_err(|e| setup_error(CeremonyError::Setup(e.to_string())))?;
    let challenge = seal_challenge(ctx, p, ceremony, &options, state, register_data)?;
    let mut r = RawResponse::json(json!({ "action": ceremony.as_str(), "options": options }));
    r.cookies.push(challenge);
    Ok(r)
}

/// The answer to a passkey registration from a session that is not recent: `401` with
/// `ReauthenticationRequired` and where to sign in again and come back.
fn reauthenticate(ctx: &Ctx<'_>) -> RawResponse {
    let url = format!(
        "{}?callbackUrl={}",
        ctx.auth_url("/signin"),
        crate::cookies::encode_uri_component(&ctx.callback_url)
    );
    let mut r = RawResponse::json(json!({
        "error": "ReauthenticationRequired",
        "message": "Adding a passkey needs a recent sign-in: sign in again first.",
        "url": url,
    }));
    r.status = Some(StatusCode::UNAUTHORIZED);
    r
}

fn bad_request(error: &str) -> RawResponse {
    let mut r = RawResponse::json(json!({ "error": error }));
    r.status = Some(StatusCode::BAD_REQUEST);
    r
}

/// The challenge cookie: the ceremony state (challenge, policy) and the registering user,
/// bound to the provider and the ceremony, sealed like the OAuth check cookies, 15 minutes.
/// Beyond Auth.js, the cookie carries a random nonce that verification marks as used in the
/// configuration's single-use store (as OAuth codes are), so a captured cookie and response
/// cannot be replayed — which a signature counter alone does not prevent for the many
/// passkeys whose counter stays 0.
fn seal_challenge(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
    ceremony: Ceremony,
    options: &Value,
    state: Value,
    register_data: Option<RegisterUser>,
) -> Result<crate::cookies::SetCookie, AuthError> {
    let cookie = &ctx.cookies.webauthn_challenge;
    let mut claims = json!({
        "provider": p.id,
        "action": ceremony.as_str(),
        "challenge": options["challenge"],
        "state": state,
    });
    claims["nonce"] = json!(crate::random::b64url_token::<16>());
    if let Some(user) = register_data {
        claims["registerData"] = json!(user);
    }
    let claims = claims.as_object().cloned().unwrap_or_default();
    seal_claims(&ctx.config.codec, cookie, &claims)
}

/// What the challenge cookie held: the challenge sent, the ceremony state and, for
/// registrations, the user.
pub(crate) struct Challenge<S> {
    pub challenge: Vec<u8>,
    pub state: S,
    pub register_data: Option<RegisterUser>,
}

/// Reads the challenge cookie for `p` and `ceremony`; returns it and the cookie clearing it.
///
/// Error codes follow Auth.js where it has the case, and treat the rest as the refused
/// response it is:
/// - missing, undecodable or expired cookie: `InvalidCheck` (Configuration), as Auth.js;
/// - a registration with an authentication ceremony's cookie: Auth.js's "Missing user
///   registration data" (Configuration);
/// - an authentication with a registration ceremony's cookie, or with another provider's:
///   `WebAuthnVerificationError` (Auth.js fails the challenge or type check there);
/// - a challenge already used (single use, beyond Auth.js): `WebAuthnVerificationError`.
pub(crate) async fn consume_challenge<S: serde::de::DeserializeOwned>(
    ctx: &Ctx<'_>,
    p: &WebAuthnProvider,
    ceremony: Ceremony,
) -> Result<(Challenge<S>, crate::cookies::SetCookie), AuthError> {
    let cookie = &ctx.cookies.webauthn_challenge;
    let invalid = || AuthError::InvalidCheck {
        message: "Challenge cookie missing or invalid".into(),
    };
    let mut claims =
        open_claims(&ctx.config.codec, cookie, &ctx.req.cookies).ok_or_else(invalid)?;
    let refused = |reason: &str| AuthError::WebAuthnVerificationError {
        reason: reason.to_owned(),
    };
    if claims.get("action").and_then(Value::as_str) != Some(ceremony.as_str()) {
        return Err(match ceremony {
            Ceremony::Register => AuthError::InvalidRequest {
                message: "Missing user registration data in WebAuthn challenge cookie".into(),
            },
            Ceremony::Authenticate => refused("WebAuthn challenge made for a registration"),
        });
    }
    if claims.get("provider").and_then(Value::as_str) != Some(p.id.as_str()) {
        return Err(refused("WebAuthn challenge made for another provider"));
    }
    let nonce = claims
        .get("nonce")
        .and_then(Value::as_str)
        .ok_or_else(invalid)?;
    let window = std::time::Duration::from_secs(CHECK_MAX_AGE);
    if !ctx.first_use("webauthn_challenge", nonce, window).await {
        return Err(refused("WebAuthn challenge already used"));
    }
    let state = claims
        .remove("state")
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(invalid)?;
    let challenge = claims
        .get("challenge")
        .and_then(Value::as_str)
        .and_then(|c| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
        })
        .ok_or_else(invalid)?;
    let register_data = match claims.remove("registerData") {
        Some(v) => Some(serde_json::from_value(v).map_err(|_| invalid())?),
        None => None,
    };
    Ok((
        Challenge {
            challenge,
            state,
            register_data,
        },
        cookie.clear(),
    ))
}

pub(crate) fn invalid(message: impl Into<String>) -> AuthError {
    AuthError::InvalidRequest {
        message: message.into(),
    }
}

/// The `data` field: a JSON string (the built-in form) or an object (a JSON body).
pub(crate) fn response_data<T: serde::de::DeserializeOwned>(ctx: &Ctx<'_>) -> Option<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn info(user: bool, new_email: bool, exists: bool) -> UserInfo {
        UserInfo {
            user: user.then(|| AdapterUser {
                id: "1".into(),
                name: None,
                email: Some("a@b.c".into()),
                email_verified: None,
                image: None,
            }),
            new_email: new_email.then(|| "a@b.c".to_owned()),
            exists,
        }
    }

    /// The 12 cases of Auth.js's tests of `inferWebAuthnOptions` (`lib/utils/webauthn-utils.ts`).
    #[test]
    fn decision_table() {
        use Ceremony::*;
        let existing = info(true, false, true);
        let new = info(false, true, false);
        let nobody = info(false, false, false);
        let cases = [
            (Some("authenticate"), false, &existing, Some(Authenticate)),
            (Some("authenticate"), true, &existing, Some(Authenticate)),
            (Some("authenticate"), false, &nobody, Some(Authenticate)),
            (Some("register"), true, &existing, Some(Register)),
            (Some("register"), false, &new, Some(Register)),
            (Some("register"), false, &existing, None),
            (Some("register"), false, &nobody, None),
            (None, true, &existing, None),
            (None, false, &existing, Some(Authenticate)),
            (None, false, &new, Some(Register)),
            (None, false, &nobody, Some(Authenticate)),
            (Some("register"), true, &new, None),
        ];
        for (requested, logged_in, info, expected) in cases {
            assert_eq!(
                decide(requested, logged_in, info),
                expected,
                "{requested:?} logged_in={logged_in}"
            );
        }
    }
}
