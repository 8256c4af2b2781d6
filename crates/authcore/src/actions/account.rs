//! Account management's data and operations, over the configuration (the `account`
//! module is their public face: `Auth` methods, the JSON routes; the account page action
//! calls them too).

use serde::Serialize;

pub use super::current::CurrentSession;
pub(crate) use super::current::{current_session, session_id};
use super::notify::{Recipient, SecurityChange, security_change};
pub use super::sensitive::SensitiveOperation;
use super::sensitive::require_recent_sign_in;
use crate::adapter::{Adapter, AdapterError, capability};
use crate::config::ConfigInner;
use crate::providers::Provider;
use crate::types::ProviderType;

/// A provider account linked to the user (an OAuth / OIDC or email account; passkeys are
/// listed as [`Passkey`]s). Tokens are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedAccount {
    /// The provider id (`github`).
    pub provider: String,
    /// The user's id at the provider.
    pub provider_account_id: String,
    /// `oauth`, `oidc` or `email`.
    #[serde(rename = "type")]
    pub kind: ProviderType,
}

/// A passkey (WebAuthn authenticator) of the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Passkey {
    /// The credential id (as stored: standard base64).
    #[serde(rename = "credentialID")]
    pub credential_id: String,
    /// `singleDevice` or `multiDevice`.
    pub credential_device_type: String,
    /// Whether the authenticator says the credential is backed up (synced).
    pub credential_backed_up: bool,
    /// Transports, comma-separated, as stored.
    pub transports: Option<String>,
    /// The name the user gave it.
    pub name: Option<String>,
}

/// The ways a user can sign in, as the adapter knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignInMethods {
    /// Linked provider accounts, ordered by provider and provider account id.
    pub accounts: Vec<LinkedAccount>,
    /// Passkeys, ordered by credential id.
    pub passkeys: Vec<Passkey>,
    /// The address magic links go to, when an email provider with magic links is
    /// configured (not one that only mails:
    /// [`EmailProvider::magic_links`](crate::providers::email::EmailProvider::magic_links))
    /// and the user has one.
    pub email: Option<String>,
    /// Whether the user has a password of the config's password accounts.
    pub password: bool,
}

impl SignInMethods {
    /// How many independent ways to sign in these are: each OAuth / OIDC account, each
    /// passkey, magic links (email accounts only record that they were used), and a
    /// password of the password accounts. Passwords a host's own `authorize` checks live
    /// outside the adapter and are not counted.
    pub fn count(&self) -> usize {
        let oauth = self
            .accounts
            .iter()
            .filter(|a| matches!(a.kind, ProviderType::Oauth | ProviderType::Oidc))
            .count();
        oauth + self.passkeys.len() + usize::from(self.email.is_some()) + usize::from(self.password)
    }
}

/// A database session of the user, as session management shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// An id for the session that is not its token (hex of the token's SHA-256, cut):
    /// what [`Auth::revoke_session`](crate::Auth::revoke_session) takes.
    pub id: String,
    /// When it was created (ISO 8601), if recorded (not for sessions Auth.js created).
    pub created_at: Option<String>,
    /// Its last recorded use (at most every `session_update_age`).
    pub last_seen_at: Option<String>,
    /// The `User-Agent` of its last recorded use.
    pub user_agent: Option<String>,
    /// When it expires.
    pub expires: String,
    /// Whether it is the session of the request that asked.
    pub current: bool,
}

/// The longest passkey name [`Auth::rename_passkey`](crate::Auth::rename_passkey) accepts (in characters).
pub const MAX_PASSKEY_NAME_CHARS: usize = 64;

/// The `sessionsEnded` event, its error logged.
pub(crate) async fn sessions_ended(
    c: &ConfigInner,
    user_id: &str,
    session_ids: &[String],
    all: bool,
) {
    let event = crate::callbacks::SessionsEndedEvent {
        user_id,
        session_ids,
        all,
    };
    if let Err(source) = c.events.sessions_ended(event).await {
        c.logger.error(&crate::error::AuthError::EventError {
            event: "sessionsEnded",
            source,
        });
    }
}

impl From<super::sensitive::Refused> for AccountError {
    fn from(r: super::sensitive::Refused) -> Self {
        match r {
            super::sensitive::Refused::NotRecent => AccountError::ReauthenticationRequired,
            super::sensitive::Refused::Adapter(e) => AccountError::Adapter(e),
        }
    }
}

/// Why an account-management call was refused.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The configuration has no adapter: there are no stored accounts to manage.
    #[error("account management needs an adapter")]
    NoAdapter,
    /// No such user, or the account or passkey is not the user's.
    #[error("no such account or passkey of this user")]
    NotFound,
    /// It is the user's last way to sign in.
    #[error("the last way to sign in cannot be removed")]
    LastSignInMethod,
    /// A passkey name that is longer than [`MAX_PASSKEY_NAME_CHARS`] or has control
    /// characters.
    #[error("a passkey name has at most 64 characters and no control characters")]
    InvalidName,
    /// Session management needs database sessions (JWT sessions are not stored).
    #[error("sessions are listed and revoked with database sessions only")]
    NoDatabaseSessions,
    /// Second factors are not configured
    /// ([`AuthConfigBuilder::two_factor`](crate::AuthConfigBuilder::two_factor)).
    #[error("second factors are not configured")]
    TwoFactorOff,
    /// TOTP enrolment was asked for while a confirmed secret is enrolled (disable it first).
    #[error("a TOTP authenticator is enrolled already")]
    AlreadyEnrolled,
    /// A TOTP confirmation, or a change that asks for a second factor, of a user with no
    /// (pending) TOTP secret.
    #[error("no TOTP authenticator is enrolled")]
    NotEnrolled,
    /// A TOTP or recovery code that is wrong, malformed, outside its time window or used
    /// already.
    #[error("the code is not valid")]
    InvalidCode,
    /// Too many wrong codes for this user: try again after `retry_after`.
    #[error("too many attempts; retry in {} s", retry_after.as_secs().max(1))]
    TooManyAttempts {
        /// When the user may try again.
        retry_after: std::time::Duration,
    },
    /// The change needs a recent sign-in, which for a user with a second factor proved it
    /// ([`SensitiveOperation`]): sign in again.
    #[error("this change needs a recent sign-in")]
    ReauthenticationRequired,
    /// A TOTP secret could not be sealed or opened (the auth secret that sealed it is no
    /// longer in the rotation list).
    #[error("second factor secret: {0}")]
    Sealing(String),
    /// Password accounts are not configured
    /// ([`AuthConfigBuilder::password_accounts`](crate::AuthConfigBuilder::password_accounts)),
    /// or no email provider mails their links.
    #[error("password accounts are not configured")]
    PasswordsOff,
    /// The current password given with a password change is wrong.
    #[error("the current password is wrong")]
    WrongPassword,
    /// The new password breaks the password policy.
    #[cfg(feature = "passwords")]
    #[error("{0}")]
    WeakPassword(crate::passwords::PolicyViolation),
    /// Not an email address, or the account's own.
    #[error("not an email address, or the account's own")]
    InvalidEmail,
    /// Organizations are not configured
    /// ([`AuthConfigBuilder::organizations`](crate::AuthConfigBuilder::organizations)).
    #[error("organizations are not configured")]
    OrganizationsOff,
    /// The member lacks the permission, or would grant more than they hold.
    #[error("not permitted")]
    Forbidden,
    /// The change would leave the organization without an owner.
    #[error("an organization keeps at least one owner")]
    LastOwner,
    /// Another organization has this slug.
    #[error("another organization has this slug")]
    SlugTaken,
    /// The OpenID Provider has a client with this id already.
    #[error("a client has this id")]
    ClientIdTaken,
    /// A value that is not valid (the message says which and why).
    #[error("{0}")]
    InvalidValue(String),
    /// The invitation is unknown, expired, revoked or used.
    #[error("the invitation is not valid (unknown, expired, revoked or used)")]
    InvalidInvitation,
    /// The invitation is for another address than the signed-in user's.
    #[error("the invitation is for another address")]
    WrongAddress,
    /// A mail could not be sent.
    #[error("the mail could not be sent")]
    MailFailed,
    /// Administrators are not configured
    /// ([`AuthConfigBuilder::admins`](crate::AuthConfigBuilder::admins)).
    #[error("administrators are not configured")]
    AdminOff,
    /// Nobody is signed in (and no API key came).
    #[error("a signed-in administrator is required")]
    SessionRequired,
    /// The session is an impersonation: it may not administer, nor make a sensitive
    /// change.
    #[error("not while impersonating a user")]
    Impersonating,
    /// The user is an administrator: administrators are not impersonated nor given set-up links.
    #[error("administrators are neither impersonated nor given set-up links")]
    TargetIsAdmin,
    /// The user already signs in, and the server does not mail: a set-up link for them is
    /// only ever mailed to them.
    #[error(
        "the user already signs in: their set-up link is only mailed, and this server does not mail"
    )]
    SetUpAlready,
    /// An administrator's action on their own account (their account page does that).
    #[error("not on the administrator's own account")]
    OwnAccount,
    /// The user is banned.
    #[error("the user is banned")]
    Banned,
    /// An API key that is not valid (unknown, revoked, expired, its maker gone).
    #[error("the API key is not valid")]
    InvalidApiKey,
    /// The audit log is not stored.
    #[error("the audit log is not stored")]
    AuditOff,
    /// The adapter failed.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

/// An account operation's failure as the actions' error.
pub(crate) fn account_failure(e: AccountError) -> crate::error::AuthError {
    match e {
        AccountError::Adapter(source) => crate::error::AuthError::AdapterError { source },
        other => crate::error::AuthError::CallbackError {
            callback: "account",
            source: Box::new(other),
        },
    }
}

/// The adapter, for session management (database sessions only).
fn session_store(c: &ConfigInner) -> Result<&dyn Adapter, AccountError> {
    let adapter = adapter(c)?;
    if c.session_strategy != crate::config::SessionStrategy::Database {
        return Err(AccountError::NoDatabaseSessions);
    }
    Ok(adapter)
}

/// The user's database sessions (created, last seen, user agent, expiry), the one with
/// id `current` marked.
pub(crate) async fn sessions(
    c: &ConfigInner,
    user_id: &str,
    current: Option<&str>,
) -> Result<Vec<SessionInfo>, AccountError> {
    let iso = crate::types::iso_string;
    let adapter = session_store(c)?;
    let list = capability(adapter.session_activity(), "SessionActivityStore")?
        .list_sessions_by_user_id(user_id)
        .await?;
    Ok(list
        .into_iter()
        .map(|a| {
            let id = session_id(&a.session.session_token);
            SessionInfo {
                current: current == Some(id.as_str()),
                id,
                created_at: a.created_at.map(iso),
                last_seen_at: a.last_seen_at.map(iso),
                user_agent: a.user_agent,
                expires: iso(a.session.expires),
            }
        })
        .collect())
}

/// Signs one of the user's sessions out (by [`SessionInfo::id`]).
pub(crate) async fn revoke_session(
    c: &ConfigInner,
    user_id: &str,
    id: &str,
) -> Result<(), AccountError> {
    let adapter = session_store(c)?;
    let token = capability(adapter.session_activity(), "SessionActivityStore")?
        .list_sessions_by_user_id(user_id)
        .await?
        .into_iter()
        .map(|a| a.session.session_token)
        .find(|t| session_id(t) == id)
        .ok_or(AccountError::NotFound)?;
    adapter.delete_session(&token).await?;
    sessions_ended(c, user_id, &[id.to_owned()], false).await;
    Ok(())
}

/// Signs the user out everywhere but the session with id `keep` ("sign out everywhere
/// else"; `None`: everywhere); how many database sessions ended. With JWT sessions and
/// the revocation list ([`jwt_revocation`](crate::AuthConfigBuilder::jwt_revocation)),
/// every JWT session signed in until now but `keep` (a [`CurrentSession::session_id`])
/// is refused from its next read on; their number is unknown (0).
pub(crate) async fn revoke_other_sessions(
    c: &ConfigInner,
    user_id: &str,
    keep: Option<&str>,
) -> Result<u64, AccountError> {
    if c.jwt_revocation {
        let now = time::OffsetDateTime::now_utc();
        capability(adapter(c)?.jwt_revocation(), "JwtRevocationStore")?
            .revoke_jwt_sessions(user_id, now, keep)
            .await?;
        sessions_ended(c, user_id, &[], true).await;
        return Ok(0);
    }
    let store = capability(session_store(c)?.session_activity(), "SessionActivityStore")?;
    let tokens: Vec<String> = store
        .list_sessions_by_user_id(user_id)
        .await?
        .into_iter()
        .map(|a| a.session.session_token)
        .collect();
    let keep_token = keep.and_then(|id| tokens.iter().find(|t| session_id(t) == id));
    let ended = store
        .delete_sessions_by_user_id(user_id, keep_token.map(String::as_str))
        .await?;
    let ids: Vec<String> = tokens
        .iter()
        .filter(|t| Some(*t) != keep_token)
        .map(|t| session_id(t))
        .collect();
    sessions_ended(c, user_id, &ids, false).await;
    Ok(ended)
}

/// An application the user gave access to (one that signs in through authcore as an
/// OpenID Provider), as "apps with access" shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    /// Its OpenID Connect `client_id`: what
    /// [`Auth::revoke_app_access`](crate::Auth::revoke_app_access) takes.
    pub client_id: String,
    /// Its name.
    pub name: String,
    /// The scopes allowed (`openid`, `profile`, `email`, `offline_access` …).
    pub scopes: Vec<String>,
    /// When access was first granted (ISO 8601).
    pub granted_at: String,
    /// When access was last granted: the user's last sign-in to it (ISO 8601).
    pub last_granted_at: String,
}

/// The applications user `user_id` gave access to and has not revoked; none when the
/// adapter keeps no app access.
pub(crate) async fn apps(c: &ConfigInner, user_id: &str) -> Result<Vec<AppInfo>, AccountError> {
    let Some(store) = adapter(c)?.app_access() else {
        return Ok(Vec::new());
    };
    Ok(store
        .list_app_access(user_id)
        .await?
        .into_iter()
        .map(|a| AppInfo {
            client_id: a.client_id,
            name: a.client_name,
            scopes: a.scopes,
            granted_at: crate::types::iso_string(a.created_at),
            last_granted_at: crate::types::iso_string(a.updated_at),
        })
        .collect())
}

/// Revokes the user's access for application `client_id`: the consent is forgotten and
/// every token the application holds for the user (access, ID and refresh tokens) is void.
pub(crate) async fn revoke_app(
    c: &ConfigInner,
    me: &CurrentSession,
    client_id: &str,
) -> Result<(), AccountError> {
    require_recent_sign_in(c, me, SensitiveOperation::RevokeAppAccess).await?;
    let user_id = me.user_id.as_str();
    let Some(store) = adapter(c)?.app_access() else {
        return Err(AccountError::NotFound);
    };
    let now = time::OffsetDateTime::now_utc();
    if !store.revoke_app_access(user_id, client_id, now).await? {
        return Err(AccountError::NotFound);
    }
    app_access_revoked(c, user_id, client_id).await;
    crate::actions::audit::record(
        c,
        crate::audit::AuditEvent::new("oidc.accessRevoked")
            .actor(user_id.to_owned())
            .with("clientId", client_id),
    )
    .await;
    Ok(())
}

/// The `appAccessRevoked` event, its error logged.
pub(crate) async fn app_access_revoked(c: &ConfigInner, user_id: &str, client_id: &str) {
    let event = crate::callbacks::AppAccessRevokedEvent { user_id, client_id };
    if let Err(source) = c.events.app_access_revoked(event).await {
        c.logger.error(&crate::error::AuthError::EventError {
            event: "appAccessRevoked",
            source,
        });
    }
}

fn adapter(c: &ConfigInner) -> Result<&dyn Adapter, AccountError> {
    c.adapter.as_deref().ok_or(AccountError::NoAdapter)
}

/// The ways user `user_id` can sign in: linked accounts, passkeys and magic links.
pub(crate) async fn sign_in_methods(
    c: &ConfigInner,
    user_id: &str,
) -> Result<SignInMethods, AccountError> {
    let adapter = adapter(c)?;
    let user = adapter
        .get_user(user_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    let accounts = capability(adapter.linked_accounts(), "LinkedAccountStore")?
        .list_accounts_by_user_id(user_id)
        .await?
        .into_iter()
        .filter(|a| a.kind != ProviderType::Webauthn)
        .map(|a| LinkedAccount {
            provider: a.provider,
            provider_account_id: a.provider_account_id,
            kind: a.kind,
        })
        .collect();
    let passkeys = adapter
        .list_authenticators_by_user_id(user_id)
        .await?
        .into_iter()
        .map(|a| Passkey {
            credential_id: a.credential_id,
            credential_device_type: a.credential_device_type,
            credential_backed_up: a.credential_backed_up,
            transports: a.transports,
            name: a.name,
        })
        .collect();
    let email_provider = c
        .sign_in_providers()
        .any(|p| p.kind() == crate::types::ProviderType::Email);
    #[cfg(feature = "passwords")]
    let password = match (&c.password_accounts, adapter.passwords()) {
        (Some(_), Some(store)) => store.get_password_hash(user_id).await?.is_some(),
        _ => false,
    };
    #[cfg(not(feature = "passwords"))]
    let password = false;
    Ok(SignInMethods {
        accounts,
        passkeys,
        email: user.email.filter(|_| email_provider),
        password,
    })
}

/// Unlinks one of the user's provider accounts; refused when it is the user's last way
/// to sign in ([`SignInMethods::count`]).
pub(crate) async fn unlink_account(
    c: &ConfigInner,
    me: &CurrentSession,
    provider: &str,
    provider_account_id: &str,
) -> Result<(), AccountError> {
    require_recent_sign_in(c, me, SensitiveOperation::UnlinkProvider).await?;
    let user_id = me.user_id.as_str();
    let methods = sign_in_methods(c, user_id).await?;
    let account = methods
        .accounts
        .iter()
        .find(|a| a.provider == provider && a.provider_account_id == provider_account_id)
        .ok_or(AccountError::NotFound)?;
    let counts = matches!(account.kind, ProviderType::Oauth | ProviderType::Oidc);
    if counts && methods.count() <= 1 {
        return Err(AccountError::LastSignInMethod);
    }
    adapter(c)?
        .unlink_account(provider, provider_account_id)
        .await?;
    Ok(())
}

/// Deletes one of the user's passkeys (the authenticator and the account the passkey
/// provider linked for it); refused when it is the user's last way to sign in.
pub(crate) async fn delete_passkey(
    c: &ConfigInner,
    me: &CurrentSession,
    credential_id: &str,
) -> Result<(), AccountError> {
    require_recent_sign_in(c, me, SensitiveOperation::RemovePasskey).await?;
    let user_id = me.user_id.as_str();
    let methods = sign_in_methods(c, user_id).await?;
    if !methods
        .passkeys
        .iter()
        .any(|p| p.credential_id == credential_id)
    {
        return Err(AccountError::NotFound);
    }
    if methods.count() <= 1 {
        return Err(AccountError::LastSignInMethod);
    }
    let adapter = adapter(c)?;
    let authenticator = adapter.get_authenticator(credential_id).await?;
    capability(adapter.passkeys(), "PasskeyStore")?
        .delete_authenticator(credential_id)
        .await?;
    #[cfg(feature = "webauthn")]
    if let Some(a) = authenticator {
        for p in &c.providers {
            if let Provider::WebAuthn(w) = p {
                adapter
                    .unlink_account(w.id(), &a.provider_account_id)
                    .await?;
            }
        }
    }
    security_change(
        c,
        user_id,
        me.origin.as_deref(),
        SecurityChange::PasskeyRemoved,
    )
    .await;
    Ok(())
}

/// Names one of the user's passkeys (trimmed; an empty name clears it).
pub(crate) async fn rename_passkey(
    c: &ConfigInner,
    user_id: &str,
    credential_id: &str,
    name: &str,
) -> Result<(), AccountError> {
    let name = name.trim();
    if name.chars().count() > MAX_PASSKEY_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(AccountError::InvalidName);
    }
    let adapter = adapter(c)?;
    let owned = adapter
        .get_authenticator(credential_id)
        .await?
        .is_some_and(|a| a.user_id.as_deref() == Some(user_id));
    if !owned {
        return Err(AccountError::NotFound);
    }
    let name = (!name.is_empty()).then_some(name);
    capability(adapter.passkeys(), "PasskeyStore")?
        .rename_authenticator(credential_id, name)
        .await?;
    Ok(())
}

/// Deletes the user with their accounts, sessions, passkeys and unused magic links
/// (one transaction on the SQL adapters).
pub(crate) async fn delete_user(c: &ConfigInner, me: &CurrentSession) -> Result<(), AccountError> {
    require_recent_sign_in(c, me, SensitiveOperation::DeleteAccount).await?;
    delete_user_unchecked(c, &me.user_id, me.origin.as_deref()).await
}

/// Deletes user `user_id` once the caller's rule allowed it (their own recent sign-in, or
/// an administrator's): refused while they are an organization's last owner; their
/// sessions end and they are told, with the account link on `origin`.
pub(crate) async fn delete_user_unchecked(
    c: &ConfigInner,
    user_id: &str,
    origin: Option<&str>,
) -> Result<(), AccountError> {
    let adapter = adapter(c)?;
    // An organization keeps an owner: its last owner hands it on (or deletes it) first.
    before_user_deletion(adapter, user_id).await?;
    // The address is gone with the user: read it first.
    let recipient = Recipient::look_up(c, user_id, origin).await;
    adapter.delete_user(user_id).await?;
    sessions_ended(c, user_id, &[], true).await;
    recipient.notify(c, SecurityChange::AccountDeleted).await;
    Ok(())
}

/// Before a user deletes their account: refused (`LastOwner`) while they are the last owner
/// of an organization with other members; an organization they are alone in goes with them.
async fn before_user_deletion(adapter: &dyn Adapter, user_id: &str) -> Result<(), AccountError> {
    let Some(store) = adapter.organizations() else {
        return Ok(());
    };
    let mut alone_in = Vec::new();
    for (organization, member) in store.list_organizations_of_user(user_id).await? {
        if !member.is_owner() {
            continue;
        }
        let members = store.list_members(&organization.id).await?;
        if members.len() == 1 {
            alone_in.push(organization.id);
        } else if !members.iter().any(|m| m.user_id != user_id && m.is_owner()) {
            tracing::info!(user = %user_id, organization = %organization.id, "account deletion refused: the user is the organization's last owner");
            return Err(AccountError::LastOwner);
        }
    }
    for id in alone_in {
        store.delete_organization(&id).await?;
    }
    Ok(())
}

/// How the account page names the user: the email, else the name, else the id.
pub(crate) async fn display_name(c: &ConfigInner, user_id: &str) -> String {
    let user = match &c.adapter {
        Some(adapter) => adapter.get_user(user_id).await.ok().flatten(),
        None => None,
    };
    user.and_then(|u| u.email.or(u.name))
        .unwrap_or_else(|| user_id.to_owned())
}
