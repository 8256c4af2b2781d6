//! `handleLoginOrRegister` for OAuth / OIDC (Auth.js `lib/actions/callback/handle-login.ts`):
//! find or create the user, link the account, and open a database session when that is the
//! strategy.

use time::OffsetDateTime;

use crate::actions::Ctx;
use crate::actions::account::SensitiveOperation;
use crate::adapter::{Adapter, AdapterSession, AdapterUser, NewUser};
use crate::config::SessionStrategy;
use crate::cookies::SessionCookieStore;
use crate::error::AuthError;
use crate::types::{Account, Profile, User};

/// Outcome of a sign-in with an adapter.
pub(crate) struct Login {
    /// The stored user.
    pub user: User,
    /// Whether the user was created now.
    pub is_new_user: bool,
    /// The browser's current database session when the user was signed in already (it
    /// stays); `None`: `finish_sign_in` opens a new one after every other step.
    pub session: Option<AdapterSession>,
}

impl Login {
    /// Undoes a user created by this sign-in (with its accounts) after a later step
    /// failed, so that a refused sign-in leaves no row. Best effort: logged if it fails.
    pub(crate) async fn undo_new_user(&self, adapter: &dyn Adapter) {
        if self.is_new_user
            && let Some(id) = self.user.id.as_deref()
            && let Err(e) = adapter.delete_user(id).await
        {
            tracing::error!(error = %e, "could not remove the user of a refused sign-in");
        }
    }
}

/// The user of the current session, if any (errors mean "nobody").
pub(crate) async fn current_user(ctx: &Ctx<'_>, adapter: &dyn Adapter) -> Option<AdapterUser> {
    current_session(ctx, adapter).await.map(|(user, _)| user)
}

/// The user of the current session and, with the database strategy, its row (errors mean
/// "nobody").
async fn current_session(
    ctx: &Ctx<'_>,
    adapter: &dyn Adapter,
) -> Option<(AdapterUser, Option<AdapterSession>)> {
    let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
    let token = store.value()?;
    match ctx.config.session_strategy {
        SessionStrategy::Jwt => {
            let claims = ctx
                .config
                .decode_session(&token, &ctx.cookies.session_token.name)
                .ok()??;
            let sub = claims.get("sub")?.as_str()?.to_owned();
            Some((adapter.get_user(&sub).await.ok()??, None))
        }
        SessionStrategy::Database => adapter
            .get_session_and_user(&ctx.config.stored_session_token(&token))
            .await
            .ok()?
            .filter(|(s, _)| s.expires > OffsetDateTime::now_utc())
            // The cookie's token, not its stored form: the session's cookie is set again.
            .map(|(s, u)| {
                let s = AdapterSession {
                    session_token: token.into_owned(),
                    ..s
                };
                (u, Some(s))
            }),
    }
}

/// Linking rules of the account branches of Auth.js `handleLoginOrRegister`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AccountRules {
    /// OAuth / OIDC: `OAuthAccountNotLinked`, optional dangerous linking by email.
    OAuth {
        /// `allowDangerousEmailAccountLinking`.
        allow_email_linking: bool,
    },
    /// WebAuthn: `AccountNotLinked`, never linked by email.
    WebAuthn,
}

impl AccountRules {
    fn not_linked(self, message: &str) -> AuthError {
        let message = message.to_owned();
        match self {
            AccountRules::OAuth { .. } => AuthError::OAuthAccountNotLinked { message },
            AccountRules::WebAuthn => AuthError::AccountNotLinked { message },
        }
    }
}

/// OAuth / OIDC and WebAuthn branches of Auth.js `handleLoginOrRegister`. `account.user_id`
/// is filled on return. A new session is not opened here: `finish_sign_in` opens it after
/// the caller's own last write.
pub(crate) async fn account_login(
    ctx: &Ctx<'_>,
    adapter: &dyn Adapter,
    profile_user: &User,
    account: &mut Account,
    profile: Option<&Profile>,
    rules: AccountRules,
) -> Result<Login, AuthError> {
    let allow_email_linking = matches!(
        rules,
        AccountRules::OAuth {
            allow_email_linking: true
        }
    );
    let not_linked = |message: &str| rules.not_linked(message);
    let events = &ctx.config.events;
    // Signed in already: the current session stays, and Auth.js sets its cookie again.
    let (current, current_session) = current_session(ctx, adapter).await.unzip();
    let current_session = current_session.flatten();
    let by_account = adapter
        .get_user_by_account(&account.provider, &account.provider_account_id)
        .await?;
    if let Some(owner) = by_account {
        return match current {
            Some(c) if c.id == owner.id => {
                account.user_id = Some(owner.id.clone());
                Ok(Login {
                    user: User::from(&owner),
                    is_new_user: false,
                    session: current_session,
                })
            }
            Some(_) => Err(not_linked(
                "The account is already associated with another user",
            )),
            None => {
                account.user_id = Some(owner.id.clone());
                Ok(Login {
                    user: User::from(&owner),
                    is_new_user: false,
                    session: None,
                })
            }
        };
    }

    // A new account: link it to the signed-in user (a sensitive change: the session must be
    // recent), or to a new (or email-matched) user.
    if let Some(c) = current {
        let operation = match rules {
            AccountRules::OAuth { .. } => SensitiveOperation::LinkProvider,
            AccountRules::WebAuthn => SensitiveOperation::AddPasskey,
        };
        crate::actions::sensitive::require_for_action(ctx, &c.id, operation).await?;
        account.user_id = Some(c.id.clone());
        adapter.link_account(account.clone()).await?;
        let user = User::from(&c);
        ctx.event_result(
            "linkAccount",
            events.link_account(&user, account, profile).await,
        );
        // A passkey's notice follows once its authenticator is stored.
        if operation == SensitiveOperation::LinkProvider {
            crate::actions::notify::security_change(
                ctx.config,
                &c.id,
                Some(ctx.req.origin()),
                crate::actions::notify::SecurityChange::ProviderLinked,
            )
            .await;
        }
        return Ok(Login {
            user,
            is_new_user: false,
            session: current_session,
        });
    }
    let by_email = match &profile_user.email {
        Some(e) => adapter.get_user_by_email(e).await?,
        None => None,
    };
    let may_sign_up = by_email.is_some()
        || crate::actions::organizations::may_sign_up(ctx.config, profile_user.email.as_deref())
            .await?;
    let (user, is_new_user) = match by_email {
        Some(existing) if allow_email_linking => (existing, false),
        Some(_) => {
            return Err(not_linked(
                "Another account already exists with the same e-mail address",
            ));
        }
        None if !may_sign_up => {
            tracing::info!(provider = %account.provider, "sign-up refused by the sign-up policy");
            return Err(AuthError::AccessDenied { source: None });
        }
        None => (
            adapter
                .create_user(NewUser {
                    name: profile_user.name.clone(),
                    email: profile_user.email.clone(),
                    email_verified: None,
                    image: profile_user.image.clone(),
                })
                .await?,
            true,
        ),
    };
    if is_new_user {
        crate::actions::organizations::after_sign_up(ctx.config, &user).await;
    }
    let public = User::from(&user);
    // Auth.js fires createUser even for the dangerous email link
    // (`lib/actions/callback/handle-login.ts`).
    ctx.event_result("createUser", events.create_user(&public).await);
    account.user_id = Some(user.id.clone());
    let login = Login {
        user: public,
        is_new_user,
        session: None,
    };
    if let Err(e) = adapter.link_account(account.clone()).await {
        login.undo_new_user(adapter).await;
        return Err(e.into());
    }
    ctx.event_result(
        "linkAccount",
        events.link_account(&login.user, account, profile).await,
    );
    Ok(login)
}

/// Email branch of Auth.js `handleLoginOrRegister`: verify the existing user (ending another
/// user's database session in this browser) or create one; never links an account.
pub(crate) async fn email_login(
    ctx: &Ctx<'_>,
    adapter: &dyn Adapter,
    existing: Option<AdapterUser>,
    email: &str,
) -> Result<Login, AuthError> {
    let events = &ctx.config.events;
    let now = OffsetDateTime::now_utc();
    let may_sign_up = existing.is_some()
        || crate::actions::organizations::may_sign_up(ctx.config, Some(email)).await?;
    let (user, is_new_user) = match existing {
        Some(u) => {
            if ctx.config.session_strategy == SessionStrategy::Database {
                let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
                if let Some(token) = store.value()
                    && let Some(current) = current_user(ctx, adapter).await
                    && current.id != u.id
                {
                    adapter
                        .delete_session(&ctx.config.stored_session_token(&token))
                        .await?;
                }
            }
            let updated = adapter
                .update_user(crate::adapter::UserUpdate {
                    id: u.id.clone(),
                    email_verified: Some(Some(now)),
                    ..Default::default()
                })
                .await?
                .unwrap_or(u);
            let public = User::from(&updated);
            ctx.event_result("updateUser", events.update_user(&public).await);
            (updated, false)
        }
        None if !may_sign_up => {
            tracing::info!("sign-up refused by the sign-up policy");
            return Err(AuthError::AccessDenied { source: None });
        }
        None => {
            let created = adapter
                .create_user(NewUser {
                    email: Some(email.to_owned()),
                    email_verified: Some(now),
                    ..Default::default()
                })
                .await?;
            crate::actions::organizations::after_sign_up(ctx.config, &created).await;
            ctx.event_result(
                "createUser",
                events.create_user(&User::from(&created)).await,
            );
            (created, true)
        }
    };
    Ok(Login {
        user: User::from(&user),
        is_new_user,
        session: None,
    })
}
