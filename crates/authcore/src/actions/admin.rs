//! Administrators' operations over the configuration (the `admin` module is their public
//! face: `Auth` methods and the JSON routes): who is an administrator, the ban that closes
//! every door, and the actions on another user, each recorded in the audit log.

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::account::{
    AccountError, AppInfo, CurrentSession, SensitiveOperation, SessionInfo, SignInMethods,
};
use super::organizations::Membership;
use super::sensitive::require_recent_sign_in;
use crate::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, UserBan, UserDirectoryStore, UserPage,
    UserQuery, capability,
};
use crate::admin::{ADMIN_PERMISSION, Admins};
use crate::audit::AuditEvent;
use crate::config::{ConfigInner, SessionStrategy};
use crate::cookies::{RequestCookies, SessionCookieStore, SetCookie};
use crate::organizations::Principal;
use crate::site::RequestUrl;

/// The administrators' settings, or `AdminOff`.
fn admins(c: &ConfigInner) -> Result<&Admins, AccountError> {
    c.admins.as_ref().ok_or(AccountError::AdminOff)
}

fn adapter(c: &ConfigInner) -> Result<&dyn Adapter, AccountError> {
    c.adapter.as_deref().ok_or(AccountError::NoAdapter)
}

fn directory(c: &ConfigInner) -> Result<&dyn UserDirectoryStore, AccountError> {
    Ok(capability(
        adapter(c)?.user_directory(),
        "UserDirectoryStore",
    )?)
}

/// Whether `user` is an administrator: listed by id or verified address, or a member of the
/// administrators' organization whose roles grant [`ADMIN_PERMISSION`].
pub(crate) async fn is_admin(c: &ConfigInner, user: &AdapterUser) -> Result<bool, AccountError> {
    let admins = admins(c)?;
    let verified = user
        .email
        .as_deref()
        .filter(|_| user.email_verified.is_some());
    if admins.lists(&user.id, verified) {
        return Ok(true);
    }
    let (Some(slug), Some(orgs), Some(store)) = (
        admins.organization.as_deref(),
        c.organizations.as_ref(),
        adapter(c)?.organizations(),
    ) else {
        return Ok(false);
    };
    let Some(org) = store.get_organization_by_slug(slug).await? else {
        return Ok(false);
    };
    Ok(store
        .get_member(&org.id, &user.id)
        .await?
        .is_some_and(|m| orgs.roles.allows(&m.roles, ADMIN_PERMISSION)))
}

/// Who acts as administrator: the user, and the session (`None` for an API key) whose
/// changes pass the sensitive-change rule.
#[derive(Debug, Clone)]
pub(crate) struct Actor {
    pub user_id: String,
    pub session: Option<CurrentSession>,
    pub api_key: Option<String>,
}

/// The administrator a request acts as: the API key `key` (what its `Authorization`
/// header gave) when it is one of the administrators' organization holding
/// [`ADMIN_PERMISSION`], else the signed-in `session` of an administrator who is not
/// impersonating someone. `SessionRequired` with neither, `Forbidden` for anyone else.
pub(crate) async fn actor(
    c: &ConfigInner,
    key: Option<Principal>,
    session: Option<CurrentSession>,
) -> Result<Actor, AccountError> {
    let admins = admins(c)?;
    if let Some(principal) = key {
        let in_admin_org = principal.organization.as_ref().is_some_and(|o| {
            Some(o.slug.as_str()) == admins.organization.as_deref()
                && principal.has_permission(ADMIN_PERMISSION)
        });
        let Some(key) = principal.api_key.filter(|_| in_admin_org) else {
            tracing::warn!(user = %principal.user_id, "administration refused: not an administrators' API key");
            return Err(AccountError::Forbidden);
        };
        return Ok(Actor {
            user_id: principal.user_id,
            session: None,
            api_key: Some(key),
        });
    }
    let Some(session) = session else {
        return Err(AccountError::SessionRequired);
    };
    if session.impersonator.is_some() {
        tracing::warn!(user = %session.user_id, "administration refused: the session is an impersonation");
        return Err(AccountError::Impersonating);
    }
    let user = adapter(c)?
        .get_user(&session.user_id)
        .await?
        .ok_or(AccountError::SessionRequired)?;
    if !is_admin(c, &user).await? {
        tracing::warn!(user = %session.user_id, "administration refused: not an administrator");
        return Err(AccountError::Forbidden);
    }
    Ok(Actor {
        user_id: user.id,
        session: Some(session),
        api_key: None,
    })
}

impl Actor {
    /// The sensitive-change rule for a change through a browser session (an API key is
    /// its own proof).
    pub(crate) async fn may_change(&self, c: &ConfigInner) -> Result<(), AccountError> {
        match &self.session {
            Some(session) => {
                Ok(require_recent_sign_in(c, session, SensitiveOperation::Administer).await?)
            }
            None => Ok(()),
        }
    }

    /// The audit event of this actor's action `kind` on `target`.
    pub(crate) fn event(&self, kind: &str, target: &str) -> AuditEvent {
        AuditEvent::new(kind)
            .actor(self.user_id.clone())
            .target(target.to_owned())
            .with("apiKey", self.api_key.clone())
    }
}

/// The user `user_id`, or `NotFound`.
async fn user(c: &ConfigInner, user_id: &str) -> Result<AdapterUser, AccountError> {
    adapter(c)?
        .get_user(user_id)
        .await?
        .ok_or(AccountError::NotFound)
}

/// A change to another user: refused on the actor themselves (`OwnAccount`: their own
/// account page does that), the target read.
async fn target_of(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<AdapterUser, AccountError> {
    actor.may_change(c).await?;
    if user_id == actor.user_id {
        return Err(AccountError::OwnAccount);
    }
    user(c, user_id).await
}

/// Users matching `query`.
pub(crate) async fn search_users(
    c: &ConfigInner,
    actor: &Actor,
    query: &UserQuery,
) -> Result<UserPage, AccountError> {
    let _ = actor;
    /// The longest search text: an address or a name, not a document.
    const MAX_TEXT_CHARS: usize = 256;
    let too_long = |v: &Option<String>| {
        v.as_ref()
            .is_some_and(|t| t.chars().count() > MAX_TEXT_CHARS)
    };
    if too_long(&query.text)
        || too_long(&query.provider)
        || too_long(&query.organization_id)
        || too_long(&query.after)
    {
        return Err(AccountError::InvalidValue(format!(
            "a search value has at most {MAX_TEXT_CHARS} characters"
        )));
    }
    Ok(directory(c)?.search_users(query).await?)
}

/// The stored audit records matching `query`; `AuditOff` when the log is not stored.
pub(crate) async fn audit_records(
    c: &ConfigInner,
    actor: &Actor,
    query: &crate::adapter::AuditQuery,
) -> Result<Vec<crate::adapter::AuditRecord>, AccountError> {
    let _ = actor;
    let store = super::audit::store(c).ok_or(AccountError::AuditOff)?;
    Ok(store.query_audit_records(query).await?)
}

/// Everything an administrator sees of user `user_id`.
pub(crate) async fn user_detail(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<UserDetail, AccountError> {
    let _ = actor;
    let adapter = adapter(c)?;
    let user = user(c, user_id).await?;
    let ban = directory(c)?.get_user_ban(user_id).await?;
    let now = OffsetDateTime::now_utc();
    let sessions = match c.session_strategy {
        SessionStrategy::Database => super::account::sessions(c, user_id, None).await?,
        SessionStrategy::Jwt => Vec::new(),
    };
    let (totp, recovery_codes_left) = match adapter.two_factor() {
        Some(store) => (
            store
                .get_two_factor(user_id)
                .await?
                .is_some_and(|t| t.totp_confirmed_at.is_some()),
            store.count_recovery_codes(user_id).await?,
        ),
        None => (false, 0),
    };
    let organizations = match c.organizations {
        Some(_) => super::organizations::organizations_of(c, user_id).await?,
        None => Vec::new(),
    };
    let groups = match adapter.user_groups() {
        Some(store) => store.get_user_groups(user_id).await?,
        None => Vec::new(),
    };
    Ok(UserDetail {
        admin: is_admin(c, &user).await?,
        banned: ban.as_ref().is_some_and(|b| b.holds_at(now)),
        ban,
        methods: super::account::sign_in_methods(c, user_id).await?,
        sessions,
        totp,
        recovery_codes_left,
        organizations,
        apps: super::account::apps(c, user_id).await?,
        groups,
        user,
    })
}

/// Everything an administrator sees of a user ([`Auth::admin_user`](crate::Auth::admin_user)); no secret, no hash.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UserDetail {
    /// The user.
    pub user: AdapterUser,
    /// Whether the user is an administrator.
    pub admin: bool,
    /// The user's ban, holding or ended, if any.
    pub ban: Option<UserBan>,
    /// Whether the ban holds now.
    pub banned: bool,
    /// The ways the user signs in: linked accounts, passkeys, email.
    pub methods: SignInMethods,
    /// The database sessions (none with JWT sessions, which are not stored).
    pub sessions: Vec<SessionInfo>,
    /// Whether an authenticator app is set up.
    pub totp: bool,
    /// Unused recovery codes.
    pub recovery_codes_left: u64,
    /// The organizations the user is a member of.
    pub organizations: Vec<Membership>,
    /// The applications the user gave access to.
    pub apps: Vec<AppInfo>,
    /// The groups a user source gave the user.
    pub groups: Vec<String>,
}

/// Ends every session of the user: database sessions deleted, JWT sessions revoked; how
/// many database sessions ended.
pub(crate) async fn end_all_sessions(c: &ConfigInner, user_id: &str) -> Result<u64, AccountError> {
    super::account::revoke_other_sessions(c, user_id, None).await
}

/// Ends the user's sessions (`admin.sessionsEnded`).
pub(crate) async fn end_sessions(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<u64, AccountError> {
    target_of(c, actor, user_id).await?;
    let ended = end_all_sessions(c, user_id).await?;
    crate::actions::audit::record(
        c,
        actor
            .event("admin.sessionsEnded", user_id)
            .with("ended", ended),
    )
    .await;
    Ok(ended)
}

/// Bans the user until `until` (or until lifted) for `reason`: from now on they cannot
/// sign in anywhere, their sessions end, the applications' tokens for them are void, and
/// their API keys are refused (`admin.banned`).
pub(crate) async fn ban(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
    reason: &str,
    until: Option<OffsetDateTime>,
) -> Result<UserBan, AccountError> {
    let reason = reason.trim();
    if reason.is_empty() || reason.chars().count() > 500 || reason.chars().any(char::is_control) {
        return Err(AccountError::InvalidValue(
            "a ban's reason has 1 to 500 characters and no control characters".into(),
        ));
    }
    let now = OffsetDateTime::now_utc();
    if until.is_some_and(|u| u <= now) {
        return Err(AccountError::InvalidValue(
            "a ban's end is in the future".into(),
        ));
    }
    target_of(c, actor, user_id).await?;
    let store = directory(c)?;
    let before = store.get_user_ban(user_id).await?;
    let ban = UserBan {
        reason: reason.to_owned(),
        at: now,
        until,
        by: Some(actor.user_id.clone()),
    };
    // The ban first: a sign-in that passes after it finds it.
    if !store.set_user_ban(user_id, Some(&ban)).await? {
        return Err(AccountError::NotFound);
    }
    let ended = end_all_sessions(c, user_id).await?;
    let apps = revoke_all_app_access(c, user_id).await?;
    tracing::warn!(user = %user_id, by = %actor.user_id, until = ?until, "user banned");
    crate::actions::audit::record(
        c,
        actor
            .event("admin.banned", user_id)
            .with("before", ban_json(before.as_ref()))
            .with("after", ban_json(Some(&ban)))
            .with("sessionsEnded", ended)
            .with("appsRevoked", apps),
    )
    .await;
    Ok(ban)
}

/// Lifts the user's ban (`admin.unbanned`); `NotFound` when the user has none.
pub(crate) async fn unban(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<(), AccountError> {
    target_of(c, actor, user_id).await?;
    let store = directory(c)?;
    let Some(before) = store.get_user_ban(user_id).await? else {
        return Err(AccountError::NotFound);
    };
    store.set_user_ban(user_id, None).await?;
    tracing::warn!(user = %user_id, by = %actor.user_id, "user's ban lifted");
    crate::actions::audit::record(
        c,
        actor
            .event("admin.unbanned", user_id)
            .with("before", ban_json(Some(&before)))
            .with("after", Value::Null),
    )
    .await;
    Ok(())
}

fn ban_json(ban: Option<&UserBan>) -> Value {
    ban.map_or(Value::Null, |b| {
        json!({
            "reason": b.reason,
            "at": crate::types::iso_string(b.at),
            "until": b.until.map(crate::types::iso_string),
        })
    })
}

/// Revokes every application's access for the user: their tokens are void; how many.
async fn revoke_all_app_access(c: &ConfigInner, user_id: &str) -> Result<u64, AccountError> {
    let Some(store) = adapter(c)?.app_access() else {
        return Ok(0);
    };
    let now = OffsetDateTime::now_utc();
    let mut revoked = 0;
    for access in store.list_app_access(user_id).await? {
        if store
            .revoke_app_access(user_id, &access.client_id, now)
            .await?
        {
            revoked += 1;
            super::account::app_access_revoked(c, user_id, &access.client_id).await;
        }
    }
    Ok(revoked)
}

/// Removes the user's authenticator app and recovery codes, for one who lost them
/// (`admin.twoFactorReset`); the user hears of it as of their own change.
pub(crate) async fn reset_two_factor(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<(), AccountError> {
    target_of(c, actor, user_id).await?;
    let store = capability(adapter(c)?.two_factor(), "TwoFactorStore")?;
    let had = store.get_two_factor(user_id).await?;
    let Some(had) = had else {
        return Err(AccountError::NotEnrolled);
    };
    store.delete_two_factor(user_id).await?;
    crate::actions::audit::record(
        c,
        actor
            .event("admin.twoFactorReset", user_id)
            .with("before", json!({ "totp": had.totp_confirmed_at.is_some() }))
            .with("after", json!({ "totp": false })),
    )
    .await;
    super::notify::security_change(
        c,
        user_id,
        None,
        super::notify::SecurityChange::TotpDisabled,
    )
    .await;
    Ok(())
}

/// Deletes the user (`admin.userDeleted`), as their own deletion does: refused while they
/// are the last owner of an organization with other members.
pub(crate) async fn delete_user(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<(), AccountError> {
    let target = target_of(c, actor, user_id).await?;
    super::account::delete_user_unchecked(c, user_id, None).await?;
    crate::actions::audit::record(
        c,
        actor.event("admin.userDeleted", user_id).with(
            "before",
            json!({ "email": target.email, "name": target.name }),
        ),
    )
    .await;
    Ok(())
}

/// Makes a user with `email` (and `name`), as an administrator invites one
/// (`admin.userCreated`), with the link that sets up their account ([`setup_link`]);
/// `InvalidEmail` for an address that is not one, `InvalidValue` when a user has it.
pub(crate) async fn create_user(
    c: &ConfigInner,
    actor: &Actor,
    email: &str,
    name: Option<&str>,
) -> Result<(AdapterUser, Option<SetupLink>), AccountError> {
    actor.may_change(c).await?;
    let email =
        crate::email_address::normalize_email(email).map_err(|_| AccountError::InvalidEmail)?;
    let adapter = adapter(c)?;
    if adapter.get_user_by_email(&email).await?.is_some() {
        return Err(AccountError::InvalidValue(
            "a user has this email address".into(),
        ));
    }
    let name = name.map(str::trim).filter(|n| !n.is_empty());
    if name.is_some_and(|n| n.chars().count() > 200 || n.chars().any(char::is_control)) {
        return Err(AccountError::InvalidValue(
            "a name has at most 200 characters and no control characters".into(),
        ));
    }
    let user = adapter
        .create_user(crate::adapter::NewUser {
            email: Some(email),
            name: name.map(str::to_owned),
            ..Default::default()
        })
        .await?;
    crate::actions::audit::record(
        c,
        actor
            .event("admin.userCreated", &user.id)
            .with("after", json!({ "email": user.email, "name": user.name })),
    )
    .await;
    // The user exists now: a link that cannot be made is said in the answer (the
    // administrator makes one later), not a failure of the creation.
    let link = match new_setup_link(c, actor, &user, Handover::Shown).await {
        Ok(link) => Some(link),
        Err(e) => {
            tracing::warn!(user = %user.id, error = %e, "user created without a set-up link");
            None
        }
    };
    Ok((user, link))
}

/// How a set-up link sets up an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupMethod {
    /// It opens the form that sets the account's first password (password accounts).
    Password,
    /// It signs the user in once, as a magic link does; they add a passkey or a password
    /// on their account page.
    SignIn,
}

impl SetupMethod {
    /// The method's name in JSON answers (`password`, `signIn`).
    pub fn as_str(self) -> &'static str {
        match self {
            SetupMethod::Password => "password",
            SetupMethod::SignIn => "signIn",
        }
    }
}

/// The single-use link with which a user an administrator made sets up their account:
/// mailed to them when an email provider sends, and handed to the administrator too
/// while the user has no way of their own to sign in (for a user who has one, it is only
/// mailed: a link in the administrator's hands would take the account over). `Debug`
/// hides the URL, a credential until used.
#[derive(Clone, PartialEq, Eq)]
pub struct SetupLink {
    url: Option<String>,
    expires: OffsetDateTime,
    method: SetupMethod,
    mailed: bool,
}

impl std::fmt::Debug for SetupLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupLink")
            .field("url", &"[redacted]")
            .field("expires", &self.expires)
            .field("method", &self.method)
            .field("mailed", &self.mailed)
            .finish()
    }
}

impl SetupLink {
    /// The link (a credential: hand it to the user only); `None` when it was only mailed,
    /// as it is to a user who already signs in.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// When it stops working.
    pub fn expires(&self) -> OffsetDateTime {
        self.expires
    }

    /// How it sets up the account.
    pub fn method(&self) -> SetupMethod {
        self.method
    }

    /// Whether it was mailed to the user.
    pub fn mailed(&self) -> bool {
        self.mailed
    }

    /// The link as the administrators' answers show it.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "url": self.url,
            "expires": crate::types::iso_string(self.expires),
            "method": self.method.as_str(),
            "mailed": self.mailed,
        })
    }
}

/// A new set-up link for user `user_id` (`admin.setupLinkMade`): where the user sets their
/// first password, with password accounts, else a link that signs them in once, by the
/// first email provider with magic links. Single use; it expires after
/// [`Admins::setup_link_lifetime`](crate::admin::Admins::setup_link_lifetime) (the magic
/// link, after its provider's `maxAge`). `PasswordsOff` when there is neither.
///
/// For a user who already signs in ([`signs_in_already`]) the link is only mailed to
/// them, never shown to the administrator, who could otherwise set the user's password
/// and keep the account (impersonation is the administrator's way in, marked and
/// limited); `SetUpAlready` when the server does not mail, `MailFailed` when the mail
/// was not sent.
pub(crate) async fn setup_link(
    c: &ConfigInner,
    actor: &Actor,
    user_id: &str,
) -> Result<SetupLink, AccountError> {
    let target = target_of(c, actor, user_id).await?;
    // A set-up link sets the password or signs in: never for another administrator, as
    // no administrator is impersonated.
    if is_admin(c, &target).await? {
        return Err(AccountError::TargetIsAdmin);
    }
    let handover = if signs_in_already(c, &target).await? {
        if !can_mail(c) {
            return Err(AccountError::SetUpAlready);
        }
        Handover::MailedOnly
    } else {
        Handover::Shown
    };
    new_setup_link(c, actor, &target, handover).await
}

/// Who gets a set-up link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handover {
    /// The administrator's answer shows it (and it is mailed when the server mails).
    Shown,
    /// It is mailed to the user only.
    MailedOnly,
}

/// Whether `user` has set up a way of their own to sign in: a password, an OAuth or
/// OpenID Connect account, a passkey, or an address confirmed (a magic link used).
async fn signs_in_already(c: &ConfigInner, user: &AdapterUser) -> Result<bool, AccountError> {
    if user.email_verified.is_some() {
        return Ok(true);
    }
    let methods = super::account::sign_in_methods(c, &user.id).await?;
    Ok(methods.password
        || !methods.passkeys.is_empty()
        || methods.accounts.iter().any(|a| {
            matches!(
                a.kind,
                crate::types::ProviderType::Oauth | crate::types::ProviderType::Oidc
            )
        }))
}

/// Whether an email provider sends the server's mails.
fn can_mail(c: &ConfigInner) -> bool {
    #[cfg(feature = "email")]
    return c.mailer().is_some();
    #[cfg(not(feature = "email"))]
    {
        let _ = c;
        false
    }
}

/// The link on the origin of the administrator's session (else the configured URL).
async fn new_setup_link(
    c: &ConfigInner,
    actor: &Actor,
    user: &AdapterUser,
    handover: Handover,
) -> Result<SetupLink, AccountError> {
    let origin = actor.session.as_ref().and_then(|s| s.origin.as_deref());
    let Some(email) = user.email.as_deref() else {
        return Err(AccountError::InvalidEmail);
    };
    // Using the link verifies the address: never for one the configuration lists as an
    // administrator's, verified yet or not (that would make an administrator whose
    // password another administrator chose).
    if admins(c)?.lists(&user.id, Some(email)) {
        return Err(AccountError::TargetIsAdmin);
    }
    let (method, (url, token, expires)) = match password_setup_link(c, user, origin).await? {
        Some(link) => (SetupMethod::Password, link),
        None => match sign_in_setup_link(c, email, origin).await? {
            Some(link) => (SetupMethod::SignIn, link),
            None => return Err(AccountError::PasswordsOff),
        },
    };
    let mailed = mail_setup_link(c, email, &url, token, expires).await;
    tracing::info!(user = %user.id, by = %actor.user_id, mailed, "set-up link made");
    crate::actions::audit::record(
        c,
        actor
            .event("admin.setupLinkMade", &user.id)
            .with("method", method.as_str())
            .with("mailed", mailed)
            .with("shown", handover == Handover::Shown)
            .with("expires", crate::types::iso_string(expires)),
    )
    .await;
    if handover == Handover::MailedOnly && !mailed {
        // Nobody holds the link: it expires unused.
        return Err(AccountError::MailFailed);
    }
    Ok(SetupLink {
        url: (handover == Handover::Shown).then_some(url),
        expires,
        method,
        mailed,
    })
}

/// A stored link: its URL, its token and when it expires.
type StoredSetupLink = (String, String, OffsetDateTime);

/// No site URL to put a link on.
fn no_site_url() -> AccountError {
    AccountError::InvalidValue("there is no site URL to put the link on".into())
}

/// The link to the form that sets the first password, with password accounts.
#[cfg(feature = "passwords")]
async fn password_setup_link(
    c: &ConfigInner,
    user: &AdapterUser,
    origin: Option<&str>,
) -> Result<Option<StoredSetupLink>, AccountError> {
    use super::mail_link::MailFailure;
    use super::password::{LinkKind, store_link};
    if c.password_accounts.is_none() {
        return Ok(None);
    }
    match store_link(c, adapter(c)?, origin, LinkKind::Setup, &user.id, None).await {
        Ok(link) => Ok(Some((link.url, link.token, link.expires))),
        Err(MailFailure::Adapter(e)) => Err(e.into()),
        Err(_) => Err(no_site_url()),
    }
}

#[cfg(not(feature = "passwords"))]
async fn password_setup_link(
    _: &ConfigInner,
    _: &AdapterUser,
    _: Option<&str>,
) -> Result<Option<StoredSetupLink>, AccountError> {
    Ok(None)
}

/// A magic link of the first email provider with magic links, that signs the user in
/// once and lands on the account page (without built-in pages, the site's home).
#[cfg(feature = "email")]
async fn sign_in_setup_link(
    c: &ConfigInner,
    email: &str,
    origin: Option<&str>,
) -> Result<Option<StoredSetupLink>, AccountError> {
    let magic = c.providers.iter().find_map(|p| match p {
        crate::providers::Provider::Email(e) if e.magic_links => Some(&**e),
        _ => None,
    });
    let Some(p) = magic else {
        return Ok(None);
    };
    let next = if cfg!(feature = "pages") {
        c.url_on(origin, "/account")
    } else {
        origin
            .map(str::to_owned)
            .or_else(|| c.url.as_ref().map(crate::site::origin_of))
            .map(|o| format!("{o}/"))
    }
    .ok_or_else(no_site_url)?;
    super::callback::email::handed_over_link(c, adapter(c)?, p, email, origin, &next)
        .await?
        .map(Some)
        .ok_or_else(no_site_url)
}

#[cfg(not(feature = "email"))]
async fn sign_in_setup_link(
    _: &ConfigInner,
    _: &str,
    _: Option<&str>,
) -> Result<Option<StoredSetupLink>, AccountError> {
    Ok(None)
}

/// Mails a set-up link when an email provider sends: whether it went. A failure is logged
/// and the link stays usable, as the administrator hands it over too.
#[cfg(feature = "email")]
async fn mail_setup_link(
    c: &ConfigInner,
    to: &str,
    url: &str,
    token: String,
    expires: OffsetDateTime,
) -> bool {
    if c.mailer().is_none() {
        return false;
    }
    let sent = super::mail_link::mail(
        c,
        to,
        url.to_owned(),
        crate::providers::email::LinkPurpose::AccountSetup,
        token,
        expires,
    )
    .await;
    match sent {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(error = %e, "the set-up link could not be mailed: the administrator hands it over");
            false
        }
    }
}

#[cfg(not(feature = "email"))]
async fn mail_setup_link(_: &ConfigInner, _: &str, _: &str, _: String, _: OffsetDateTime) -> bool {
    false
}

/// Starts an impersonation of `user_id` by the administrator `actor` (through a browser
/// session only): a session of the user, marked with the administrator (`act`,
/// `amr: ["imp"]`), that ends after the configured time at most and may make no
/// sensitive change; the cookies that carry it replace the administrator's. Never of
/// another administrator, nor of a banned user (`admin.impersonationStarted`).
pub(crate) async fn impersonate(
    c: &ConfigInner,
    actor: &Actor,
    url: &RequestUrl,
    cookies: &RequestCookies,
    user_id: &str,
) -> Result<Vec<SetCookie>, AccountError> {
    if actor.session.is_none() {
        // A key has no browser to hand the session to.
        return Err(AccountError::Forbidden);
    }
    let target = target_of(c, actor, user_id).await?;
    if is_admin(c, &target).await? {
        tracing::warn!(user = %user_id, by = %actor.user_id, "impersonation refused: the user is an administrator");
        return Err(AccountError::TargetIsAdmin);
    }
    if super::bans::ban_of(c, user_id).await?.is_some() {
        return Err(AccountError::Banned);
    }
    let limit = admins(c)?.impersonation;
    let now = OffsetDateTime::now_utc();
    let end = now
        .checked_add(time::Duration::try_from(limit).unwrap_or(time::Duration::HOUR))
        .ok_or_else(|| AccountError::InvalidValue("the impersonation's time is too long".into()))?;
    let spec = &c.cookies(url.is_https()).session_token;
    let store = SessionCookieStore::new(spec, cookies);
    let sign_in = crate::SignInInfo::new(
        vec![crate::admin::IMPERSONATION_AMR.to_owned()],
        Some(now.unix_timestamp()),
    )
    .with_impersonator(Some(actor.user_id.clone()));
    let set = if c.session_strategy == SessionStrategy::Database {
        let adapter = adapter(c)?;
        let token = format!(
            "{}{}-{}",
            crate::admin::IMPERSONATION_TOKEN,
            end.unix_timestamp(),
            crate::random::uuid_v4()
        );
        let stored = c.stored_session_token(&token).into_owned();
        adapter
            .create_session(AdapterSession {
                session_token: stored.clone(),
                user_id: user_id.to_owned(),
                expires: end,
            })
            .await?;
        if let Some(records) = adapter.session_sign_in() {
            records.record_session_sign_in(&stored, &sign_in).await?;
        }
        store.write(&token, end)
    } else {
        let mut claims = super::completion::default_token(&crate::types::User::from(&target));
        claims.insert("amr".into(), json!([crate::admin::IMPERSONATION_AMR]));
        claims.insert("auth_time".into(), now.unix_timestamp().into());
        claims.insert(
            "act".into(),
            json!({ "sub": actor.user_id, "exp": end.unix_timestamp() }),
        );
        // The session id ends it before its time; the sign-in time keeps it under the
        // user's revocations.
        claims.insert("sid".into(), crate::random::uuid_v4().into());
        claims.insert("sat".into(), crate::types::unix_millis(now).into());
        let encoded = c
            .encode_session(&claims, &spec.name)
            .map_err(|e| AccountError::Adapter(AdapterError::Backend(e)))?;
        super::write_session_cookie(c, &store, &encoded, end)
    };
    tracing::warn!(user = %user_id, by = %actor.user_id, until = %crate::types::iso_string(end), "impersonation started");
    crate::actions::audit::record(
        c,
        actor
            .event("admin.impersonationStarted", user_id)
            .with("until", crate::types::iso_string(end)),
    )
    .await;
    Ok(set)
}

/// Ends the impersonation the request's session is (`admin.impersonationEnded`): the
/// session is signed out; `NotFound` when it is none.
pub(crate) async fn end_impersonation(
    c: &ConfigInner,
    me: &CurrentSession,
    url: &RequestUrl,
    cookies: &RequestCookies,
) -> Result<Vec<SetCookie>, AccountError> {
    let Some(admin) = &me.impersonator else {
        return Err(AccountError::NotFound);
    };
    let spec = &c.cookies(url.is_https()).session_token;
    let store = SessionCookieStore::new(spec, cookies);
    if c.session_strategy == SessionStrategy::Database {
        if let Some(token) = store.value() {
            adapter(c)?
                .delete_session(&c.stored_session_token(&token))
                .await?;
        }
    } else if let Some(sid) = &me.session_id {
        // A copy of the token is refused too, until its end.
        let ttl = admins(c)?.impersonation;
        c.single_use()
            .mark(super::session::IMPERSONATION_ENDED, sid, ttl)
            .await
            .map_err(|e| AccountError::Adapter(AdapterError::Backend(e)))?;
    }
    tracing::warn!(user = %me.user_id, by = %admin, "impersonation ended");
    crate::actions::audit::record(
        c,
        AuditEvent::new("admin.impersonationEnded")
            .actor(admin.clone())
            .target(me.user_id.clone()),
    )
    .await;
    Ok(store.clean())
}
