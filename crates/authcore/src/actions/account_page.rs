//! The built-in account page (beyond Auth.js): `GET <basePath>/account` shows the signed-in
//! user's ways to sign in, passkeys, second factors, sessions and apps with access; `POST <basePath>/account`
//! (`csrfToken`, `op` and the change's fields, a form post) makes one change and shows the
//! page again. The changes are the account operations the JSON routes call
//! ([`super::account`], [`super::two_factor::checks`]); a signed-out visitor is sent to
//! sign in and back. Answers are never cached.

use super::Ctx;
use super::account::account_failure;
use super::account::{self as ops, AccountError, CurrentSession};
use super::pages::PageState;
use crate::cookies::{SessionCookieStore, encode_uri_component};
use crate::error::AuthError;
use crate::response::RawResponse;
use crate::types::ProviderType;

/// What the page shows above its sections after a change (fixed texts by key: nothing
/// from the request is echoed).
fn notice_text(key: &str) -> Option<&'static str> {
    Some(match key {
        "unlinked" => "The sign-in method was removed.",
        "passkey-renamed" => "The passkey was renamed.",
        "passkey-deleted" => "The passkey was deleted.",
        "totp-off" => "Two-factor authentication is off.",
        "session-revoked" => "That session was signed out.",
        "others-revoked" => "You are signed out everywhere else.",
        "app-revoked" => "The app's access was removed.",
        "password-changed" => "Your password was changed, and your other sessions signed out.",
        "email-sent" => {
            "A confirmation link is on its way to the new address: follow it to make the change."
        }
        "org-created" => "The organization was made: you are its owner.",
        "org-active" => "That organization is now the active one.",
        "org-left" => "You left the organization.",
        "invitation-accepted" => "You joined the organization.",
        "invited" => "The invitation was sent.",
        "member-removed" => "The member was removed.",
        "key-revoked" => "The API key was revoked.",
        _ => return None,
    })
}

/// The message of a change refused because the session is an impersonation.
const IMPERSONATING: &str = "Not while you are signed in as this user by an administrator.";

/// The message of a refused change.
fn error_text(e: &AccountError) -> &'static str {
    match e {
        AccountError::LastSignInMethod => "That is your last way to sign in: add another first.",
        AccountError::NotFound => "That is not one of yours.",
        AccountError::InvalidName => "A passkey name has at most 64 characters.",
        AccountError::InvalidCode => "That code did not work. Check it and try again.",
        AccountError::TooManyAttempts { .. } => {
            "Too many attempts. Please wait a few minutes before you try again."
        }
        AccountError::AlreadyEnrolled => "An authenticator app is set up already.",
        AccountError::NotEnrolled => "Set up an authenticator app first.",
        AccountError::ReauthenticationRequired => {
            "This change needs a recent sign-in: sign in again, then make it."
        }
        AccountError::NoDatabaseSessions => "Sessions are listed with database sessions only.",
        AccountError::WrongPassword => "That is not your current password.",
        #[cfg(feature = "passwords")]
        AccountError::WeakPassword(v) => weak_password_text(v),
        AccountError::InvalidEmail => "That is not an email address, or it is your account's own.",
        AccountError::Forbidden => "Your role does not allow that.",
        AccountError::LastOwner => {
            "An organization keeps an owner: make another member owner first."
        }
        AccountError::SlugTaken => "Another organization has that name: choose another.",
        AccountError::ClientIdTaken => "Another application has that id: choose another.",
        AccountError::InvalidValue(_) => {
            "That value is not valid: check the name, role or permissions."
        }
        AccountError::InvalidInvitation => "That invitation is no longer valid.",
        AccountError::WrongAddress => "That invitation is for another email address.",
        AccountError::Impersonating => IMPERSONATING,
        _ => "That did not work. Please try again later.",
    }
}

/// Why a new password was refused, in a sentence.
#[cfg(feature = "passwords")]
fn weak_password_text(v: &crate::passwords::PolicyViolation) -> &'static str {
    use crate::passwords::PolicyViolation as V;
    match v {
        V::TooShort { .. } => "That password is too short.",
        V::TooLong { .. } => "That password is too long.",
        V::Common => "That password is too common: choose a less guessable one.",
        V::ContainsIdentity => "That password contains your name or email address.",
        V::Repetitive => "That password is too predictable: avoid repeats and sequences.",
        V::InvalidCharacter => "That password contains a control character.",
        V::Breached => "That password appeared in a data breach: choose another.",
    }
}

/// The signed-in user of the request, or the redirect to sign in and come back here.
async fn signed_in(ctx: &Ctx<'_>) -> Result<CurrentSession, RawResponse> {
    match ops::current_session(ctx.config, &ctx.req.url, &ctx.req.cookies).await {
        Some(me) => Ok(me),
        None => {
            let back = ctx.auth_url("/account");
            Err(RawResponse::redirect(format!(
                "{}?callbackUrl={}",
                ctx.auth_url("/signin"),
                encode_uri_component(&back)
            )))
        }
    }
}

/// `GET <basePath>/account`.
pub(crate) async fn page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let me = match signed_in(ctx).await {
        Ok(me) => me,
        Err(redirect) => return Ok(redirect),
    };
    let q = &ctx.req.query;
    let state = PageState {
        notice: q.get("notice").and_then(notice_text),
        ..PageState::default()
    };
    render(ctx, &me, state).await
}

/// The page for `me`, with what `state` adds.
async fn render(
    ctx: &Ctx<'_>,
    me: &CurrentSession,
    state: PageState,
) -> Result<RawResponse, AuthError> {
    let c = ctx.config;
    let methods = ops::sign_in_methods(c, &me.user_id)
        .await
        .map_err(account_failure)?;
    let who = ops::display_name(c, &me.user_id).await;
    // Link another: the OAuth / OIDC providers without an account of the user.
    let link: Vec<super::pages::LinkView> = c
        .providers
        .iter()
        .filter(|p| matches!(p.kind(), ProviderType::Oauth | ProviderType::Oidc))
        .filter(|p| !methods.accounts.iter().any(|a| a.provider == p.id()))
        .map(|p| super::pages::LinkView {
            action: ctx.auth_url(&format!("/signin/{}", p.id())),
            name: p.name().to_owned(),
        })
        .collect();
    let show_passkeys = c
        .providers
        .iter()
        .any(|p| p.kind() == ProviderType::Webauthn);
    let sessions = match ops::sessions(c, &me.user_id, me.session_id.as_deref()).await {
        Ok(list) => Some(list),
        Err(AccountError::NoDatabaseSessions) => None,
        Err(e) => return Err(account_failure(e)),
    };
    let apps = ops::apps(c, &me.user_id).await.map_err(account_failure)?;
    #[cfg(feature = "two-factor")]
    let two_factor = match (&c.two_factor, &c.adapter) {
        (Some(_), Some(adapter)) => Some(
            super::two_factor::checks::status(&**adapter, &me.user_id)
                .await
                .map_err(|e| account_failure(e.into()))?,
        ),
        _ => None,
    };
    let can_unlink = methods.count() > 1;
    #[cfg(feature = "passwords")]
    let password = c
        .password_accounts
        .as_ref()
        .map(|a| super::pages::PasswordView {
            has: methods.password,
            min_length: a.min_length(),
        });
    #[cfg(not(feature = "passwords"))]
    let password = None;
    let address = match &c.adapter {
        Some(adapter) if password.is_some() => adapter
            .get_user(&me.user_id)
            .await
            .ok()
            .flatten()
            .and_then(|u| u.email),
        _ => None,
    };
    let organizations = match &c.organizations {
        Some(_) => Some(organizations_view(c, me, ctx).await?),
        None => None,
    };
    let impersonation = match &me.impersonator {
        Some(admin) => Some(super::pages::ImpersonationView {
            user: who.clone(),
            admin: ops::display_name(c, admin).await,
            until: me
                .impersonation_end
                .map_or_else(|| "its end".to_owned(), super::admin_page::when),
        }),
        None => None,
    };
    let view = super::pages::AccountView {
        who,
        action: ctx.auth_url("/account"),
        csrf_token: &ctx.csrf_token,
        accounts: &methods.accounts,
        email: methods.email.as_deref(),
        passkeys: &methods.passkeys,
        show_passkeys,
        can_unlink,
        link,
        sessions,
        apps,
        #[cfg(feature = "two-factor")]
        two_factor,
        password,
        address: address.as_deref(),
        organizations,
        impersonation,
        state,
    };
    super::pages::render_account_page(ctx, &view)
}

/// The organizations section: the user's memberships (with the members where they may
/// remove some), their open invitations and their API keys.
async fn organizations_view(
    c: &crate::config::ConfigInner,
    me: &CurrentSession,
    ctx: &Ctx<'_>,
) -> Result<super::pages::OrganizationsView, AuthError> {
    let user_id = me.user_id.as_str();
    use super::organizations as orgs;
    use super::pages::{InvitationRow, KeyRow, MemberRow, MembershipRow};
    use crate::organizations::{all_covered, permissions as perm};
    let holds = |held: &[String], p: &str| all_covered(held, &[p.to_owned()]);
    let active = orgs::active_organization_id_of(c, me, &ctx.req.url, &ctx.req.cookies).await;
    let mut memberships = Vec::new();
    let mut names = std::collections::HashMap::new();
    for m in orgs::organizations_of(c, user_id)
        .await
        .map_err(account_failure)?
    {
        names.insert(m.organization.id.clone(), m.organization.name.clone());
        // The list needs `member:read` as well (a role of the host's may remove unseen).
        let members = if holds(&m.permissions, perm::MEMBER_REMOVE)
            && holds(&m.permissions, perm::MEMBER_READ)
        {
            let list = orgs::members(c, user_id, &m.organization.id)
                .await
                .map_err(account_failure)?;
            Some(
                list.into_iter()
                    .filter(|p| p.user_id != user_id)
                    .map(|p| MemberRow {
                        label: p.email.or(p.name).unwrap_or_else(|| p.user_id.clone()),
                        roles: p.roles.join(", "),
                        user_id: p.user_id,
                    })
                    .collect(),
            )
        } else {
            None
        };
        memberships.push(MembershipRow {
            active: active.as_deref() == Some(m.organization.id.as_str()),
            can_invite: holds(&m.permissions, perm::MEMBER_INVITE),
            roles: m.roles.join(", "),
            id: m.organization.id,
            name: m.organization.name,
            members,
        });
    }
    let invitations = orgs::invitations_for_user_with_organizations(c, user_id)
        .await
        .map_err(account_failure)?
        .into_iter()
        .map(|(i, organization)| InvitationRow {
            id: i.id,
            organization: organization.name,
            roles: i.roles.join(", "),
        })
        .collect();
    let mut keys = Vec::new();
    let mut scopes: Vec<Option<String>> = vec![None];
    scopes.extend(memberships.iter().map(|m| Some(m.id.clone())));
    for scope in scopes {
        for k in orgs::api_keys(c, user_id, scope.as_deref())
            .await
            .map_err(account_failure)?
        {
            let now = time::OffsetDateTime::now_utc();
            let state = if k.revoked_at.is_some() {
                "revoked".to_owned()
            } else if k.expires.is_some_and(|e| e <= now) {
                "expired".to_owned()
            } else {
                match k.last_used_at {
                    Some(t) => format!("last used {}", t.date()),
                    None => "never used".to_owned(),
                }
            };
            keys.push(KeyRow {
                scope: match &k.organization_id {
                    Some(id) => names.get(id).cloned().unwrap_or_default(),
                    None => "you".to_owned(),
                },
                permissions: if k.permissions.is_empty() {
                    "signs in as you".to_owned()
                } else {
                    k.permissions.join(" ")
                },
                id: k.id,
                name: k.name,
                state,
            });
        }
    }
    let can_create = c
        .organizations
        .as_ref()
        .is_some_and(|o| o.settings.users_may_create());
    Ok(super::pages::OrganizationsView {
        memberships,
        invitations,
        keys,
        can_create,
        key_form: crate::random::b64url_token::<16>(),
    })
}

/// The single-use kind of the key form's id, and how long a used id is remembered.
const KEY_FORM: &str = "account-key-form";
const KEY_FORM_TTL: std::time::Duration = std::time::Duration::from_secs(7 * 86_400);

/// The organization changes of the page (`op` `org-…`, `member-…`, `invitation-…`,
/// `key-…`).
async fn organization_change(
    ctx: &Ctx<'_>,
    me: &CurrentSession,
    op: &str,
) -> Result<Next, AccountError> {
    use super::organizations as orgs;
    let c = ctx.config;
    let field = |name: &str| ctx.req.body_str(name).unwrap_or_default();
    let user = me.user_id.as_str();
    Ok(match op {
        "org-create" => {
            orgs::create_organization(c, user, field("name"), None, true).await?;
            Next::Notice("org-created")
        }
        "org-active" => {
            let cookies = orgs::set_active_organization(
                c,
                me,
                &ctx.req.url,
                &ctx.req.cookies,
                Some(field("organizationId")),
            )
            .await?;
            let mut r =
                RawResponse::redirect(format!("{}?notice=org-active", ctx.auth_url("/account")));
            r.cookies = cookies;
            Next::Answer(r)
        }
        "org-leave" => {
            orgs::remove_member(c, user, field("organizationId"), user).await?;
            Next::Notice("org-left")
        }
        "member-remove" => {
            orgs::remove_member(c, user, field("organizationId"), field("userId")).await?;
            Next::Notice("member-removed")
        }
        "org-invite" => {
            let roles = [field("role").trim().to_owned()];
            let request = orgs::InvitationRequest {
                organization_id: Some(field("organizationId")),
                email: field("email"),
                roles: if roles[0].is_empty() { &[] } else { &roles },
                teams: &[],
            };
            orgs::invite(c, Some(user), request, Some(ctx.req.origin())).await?;
            Next::Notice("invited")
        }
        "invitation-accept" => {
            orgs::accept_invitation(c, user, orgs::InvitationRef::Id(field("invitationId")))
                .await?;
            Next::Notice("invitation-accepted")
        }
        "key-create" => {
            // A reload of the page that showed a key posts its form again: each form makes
            // one key, so that a reload neither makes another nor shows a secret again.
            let form = field("formId");
            if !form.is_empty() && !ctx.first_use(KEY_FORM, form, KEY_FORM_TTL).await {
                return Ok(Next::Page(PageState {
                    error: Some(
                        "This form made its key already, and a key is shown only once. If \
                         you did not copy it, revoke it and make another.",
                    ),
                    ..PageState::default()
                }));
            }
            let permissions: Vec<String> = field("permissions")
                .split([' ', ','])
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            let organization = Some(field("organizationId")).filter(|o| !o.is_empty());
            // Where keys have a longest life, the page's keys get it; else they never expire.
            let lifetime = c
                .organizations
                .as_ref()
                .and_then(|o| o.settings.api_key_max_lifetime());
            let made =
                orgs::create_api_key(c, me, organization, field("name"), &permissions, lifetime)
                    .await?;
            Next::Page(PageState {
                new_key: Some(made.secret.expose().to_owned()),
                ..PageState::default()
            })
        }
        "key-revoke" => {
            orgs::revoke_api_key(c, user, field("id")).await?;
            Next::Notice("key-revoked")
        }
        _ => Next::Page(PageState {
            error: Some("That change is not known."),
            ..PageState::default()
        }),
    })
}

/// After a change: back to the page with a notice, the page itself (what it must show
/// once), or another answer (the account deleted).
enum Next {
    Notice(&'static str),
    Page(PageState),
    Answer(RawResponse),
}

/// `POST <basePath>/account`: one change, then the page (a redirect to it for the changes
/// whose result needs no secret shown; the page itself for TOTP enrolment and recovery
/// codes, which appear once).
pub(crate) async fn change(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    ctx.require_csrf("account")?;
    let me = match signed_in(ctx).await {
        Ok(me) => me,
        Err(redirect) => return Ok(redirect),
    };
    let c = ctx.config;
    let field = |name: &str| ctx.req.body_str(name).unwrap_or_default();
    let user = me.user_id.as_str();
    let outcome: Result<Next, AccountError> = async {
        Ok(match field("op") {
            super::admin_page::END_IMPERSONATION => {
                Next::Answer(super::admin_page::end_impersonation(ctx, &me).await?)
            }
            "unlink" => {
                ops::unlink_account(c, &me, field("provider"), field("providerAccountId")).await?;
                Next::Notice("unlinked")
            }
            "passkey-rename" => {
                ops::rename_passkey(c, user, field("credentialID"), field("name")).await?;
                Next::Notice("passkey-renamed")
            }
            "passkey-delete" => {
                ops::delete_passkey(c, &me, field("credentialID")).await?;
                Next::Notice("passkey-deleted")
            }
            "session-revoke" => {
                ops::revoke_session(c, user, field("id")).await?;
                Next::Notice("session-revoked")
            }
            "sessions-revoke-others" => {
                ops::revoke_other_sessions(c, user, me.session_id.as_deref()).await?;
                Next::Notice("others-revoked")
            }
            "app-revoke" => {
                ops::revoke_app(c, &me, field("clientId")).await?;
                Next::Notice("app-revoked")
            }
            #[cfg(feature = "passwords")]
            "password" => {
                super::password::change_password(
                    c,
                    &me,
                    field("currentPassword"),
                    field("newPassword"),
                )
                .await?;
                Next::Notice("password-changed")
            }
            #[cfg(feature = "passwords")]
            "email" => {
                super::password::request_email_change(c, &me, field("email")).await?;
                Next::Notice("email-sent")
            }
            "delete" if field("confirm") != "yes" => Next::Page(PageState {
                error: Some("Tick the box to confirm that the account goes."),
                ..PageState::default()
            }),
            "delete" => Next::Answer(delete(ctx, &me).await?),
            op if c.organizations.is_some()
                && ["org-", "member-", "invitation-", "key-"]
                    .iter()
                    .any(|p| op.starts_with(p)) =>
            {
                organization_change(ctx, &me, op).await?
            }
            #[cfg(feature = "two-factor")]
            op @ ("totp-start" | "totp-confirm" | "recovery-codes" | "totp-disable") => {
                two_factor_change(ctx, &me, op, field("code")).await?
            }
            _ => Next::Page(PageState {
                error: Some("That change is not known."),
                ..PageState::default()
            }),
        })
    }
    .await;
    match outcome {
        Ok(Next::Notice(key)) => Ok(RawResponse::redirect(format!(
            "{}?notice={key}",
            ctx.auth_url("/account")
        ))),
        Ok(Next::Page(state)) => render(ctx, &me, state).await,
        Ok(Next::Answer(r)) => Ok(r),
        Err(e @ AccountError::Adapter(_)) => Err(account_failure(e)),
        Err(e) => {
            tracing::warn!(user = %user, error = %e, "account page: change refused");
            // An impersonation makes no sensitive change, whatever its sign-in.
            let impersonating = me.impersonator.is_some();
            // A way to sign in again (with the second factor) and come back here.
            let reauthenticate = (matches!(e, AccountError::ReauthenticationRequired)
                && !impersonating)
                .then(|| {
                    format!(
                        "{}?callbackUrl={}",
                        ctx.auth_url("/signin"),
                        encode_uri_component(&ctx.auth_url("/account"))
                    )
                });
            let state = PageState {
                error: Some(match e {
                    AccountError::ReauthenticationRequired if impersonating => IMPERSONATING,
                    e => error_text(&e),
                }),
                reauthenticate,
                ..PageState::default()
            };
            render(ctx, &me, state).await
        }
    }
}

/// Deletes the account of a recent sign-in, clears the session cookie and goes to the
/// site's home.
async fn delete(ctx: &Ctx<'_>, me: &CurrentSession) -> Result<RawResponse, AccountError> {
    ops::delete_user(ctx.config, me).await?;
    tracing::info!(user = %me.user_id, "account deleted from the account page");
    let mut r = RawResponse::redirect(ctx.req.origin().to_owned());
    r.cookies = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies).clean();
    Ok(r)
}

/// A second-factor change and what the page shows after it: each is a sensitive operation
/// (checked by the operation itself), each code counted against the client's second-step
/// attempts as well as the user's.
#[cfg(feature = "two-factor")]
async fn two_factor_change(
    ctx: &Ctx<'_>,
    me: &CurrentSession,
    op: &str,
    code: &str,
) -> Result<Next, AccountError> {
    use super::limits::Limit;
    use super::two_factor::changes;
    let c = ctx.config;
    if op == "totp-start" {
        return Ok(Next::Page(PageState {
            enrolment: Some(changes::start(c, me).await?),
            ..PageState::default()
        }));
    }
    ctx.count_attempt(Limit::SecondFactorPerClient, None)
        .await
        .map_err(|e| match e {
            AuthError::RateLimited { retry_after, .. } => {
                AccountError::TooManyAttempts { retry_after }
            }
            _ => AccountError::TooManyAttempts {
                retry_after: std::time::Duration::from_secs(60),
            },
        })?;
    let next = match op {
        "totp-confirm" => changes::confirm(c, me, code).await.map(|codes| {
            Next::Page(PageState {
                recovery_codes: Some(codes),
                ..PageState::default()
            })
        }),
        "recovery-codes" => changes::regenerate(c, me, code).await.map(|codes| {
            Next::Page(PageState {
                recovery_codes: Some(codes),
                ..PageState::default()
            })
        }),
        _ => changes::disable(c, me, code)
            .await
            .map(|()| Next::Notice("totp-off")),
    };
    // A success, or a refusal before any code was checked, is no guess.
    if matches!(next, Ok(_) | Err(AccountError::ReauthenticationRequired)) {
        ctx.give_back(Limit::SecondFactorPerClient, None).await;
    }
    next
}
