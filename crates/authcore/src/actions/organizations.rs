//! Organizations for signed-in users (beyond Auth.js): making them, members and their
//! roles, teams, invitations, the active organization of a session, API keys, and who a
//! request acts as ([`Principal`]). Every check of a permission or a grant is here, over
//! the rules of [`crate::organizations`]; the store keeps only what needs atomicity (the
//! last owner, an invitation accepted once).
//!
//! A member's view never reaches beyond their organizations: another organization, its
//! members, invitations or keys answer `NotFound`, as if they did not exist.

use time::{Duration, OffsetDateTime};

use super::account::{AccountError, CurrentSession};
use super::sensitive::{Refused, SensitiveOperation, require_recent_sign_in};
use crate::adapter::{
    Adapter, AdapterError, AdapterUser, ApiKey, ApiKeyOwner, ApiKeyStore, Invitation,
    InvitationAcceptance, Member, MemberChange, Organization, OrganizationStore, Team,
};
use crate::config::{ConfigInner, OrganizationsConfig, SessionStrategy};
use crate::cookies::{RequestCookies, SessionCookieStore, SetCookie};
use crate::organizations::{
    self as rules, ApiKeySecret, KeyRefused, MEMBER_ROLE, OWNER_ROLE, OrganizationAccess,
    Principal, permissions as perm,
};
use crate::site::RequestUrl;

use crate::organizations::ORGANIZATION_CLAIM;

/// The longest organization or team name, in characters.
const MAX_DISPLAY_NAME: usize = 128;

/// A user's membership of an organization, with what it permits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Membership {
    /// The organization.
    pub organization: Organization,
    /// The member's roles.
    pub roles: Vec<String>,
    /// The ids of the member's teams.
    pub teams: Vec<String>,
    /// The permissions the roles give (wildcards as written).
    pub permissions: Vec<String>,
}

/// A member as another member sees them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct MemberInfo {
    /// The user's id.
    #[serde(rename = "userId")]
    pub user_id: String,
    /// The user's name.
    pub name: Option<String>,
    /// The user's address.
    pub email: Option<String>,
    /// Their roles.
    pub roles: Vec<String>,
    /// Their teams' ids.
    pub teams: Vec<String>,
    /// When they joined.
    #[serde(rename = "joinedAt", with = "time::serde::rfc3339")]
    pub joined_at: OffsetDateTime,
}

/// An invitation just made: the link that accepts it (mailed when an email provider
/// sends, else for the host to deliver).
#[derive(Clone)]
#[non_exhaustive]
pub struct SentInvitation {
    /// The invitation as stored.
    pub invitation: Invitation,
    /// The link that accepts it (holds its token: deliver it to the invited address only).
    pub link: String,
    /// Whether it was mailed.
    pub mailed: bool,
}

impl std::fmt::Debug for SentInvitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentInvitation")
            .field("invitation", &self.invitation.id)
            .field("link", &"[redacted]")
            .field("mailed", &self.mailed)
            .finish()
    }
}

/// An API key just made: the stored key and its text, to show once.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NewApiKey {
    /// The key as stored (no secret in it).
    pub key: ApiKey,
    /// The key's text: shown once, never stored.
    pub secret: ApiKeySecret,
}

/// The organizations settings, the adapter and its stores.
struct Orgs<'a> {
    config: &'a OrganizationsConfig,
    adapter: &'a dyn Adapter,
    store: &'a dyn OrganizationStore,
    keys: &'a dyn ApiKeyStore,
}

fn orgs(c: &ConfigInner) -> Result<Orgs<'_>, AccountError> {
    let config = c
        .organizations
        .as_ref()
        .ok_or(AccountError::OrganizationsOff)?;
    let adapter = c.adapter.as_deref().ok_or(AccountError::NoAdapter)?;
    let store = crate::adapter::capability(adapter.organizations(), "OrganizationStore")?;
    let keys = crate::adapter::capability(adapter.api_keys(), "ApiKeyStore")?;
    Ok(Orgs {
        config,
        adapter,
        store,
        keys,
    })
}

impl Orgs<'_> {
    /// `user_id`'s membership of the organization; `NotFound` when they are not a member
    /// (whether the organization exists stays unsaid).
    async fn member(&self, organization_id: &str, user_id: &str) -> Result<Member, AccountError> {
        self.store
            .get_member(organization_id, user_id)
            .await?
            .ok_or(AccountError::NotFound)
    }

    /// `user_id`'s membership, refused with `Forbidden` unless it holds `permission`.
    async fn member_with(
        &self,
        organization_id: &str,
        user_id: &str,
        permission: &str,
    ) -> Result<Member, AccountError> {
        let member = self.member(organization_id, user_id).await?;
        if self.config.roles.allows(&member.roles, permission) {
            Ok(member)
        } else {
            tracing::info!(
                user = %user_id,
                organization = %organization_id,
                permission,
                "refused: the member lacks the permission"
            );
            Err(AccountError::Forbidden)
        }
    }

    fn membership(&self, organization: Organization, member: &Member) -> Membership {
        Membership {
            permissions: self.config.roles.permissions_of(&member.roles),
            roles: member.roles.clone(),
            teams: member.teams.clone(),
            organization,
        }
    }

    async fn organization(&self, id: &str) -> Result<Organization, AccountError> {
        self.store
            .get_organization(id)
            .await?
            .ok_or(AccountError::NotFound)
    }

    /// Refuses roles that are not defined, or that `granter` may not give.
    fn check_grant(&self, granter: &Member, roles: &[String]) -> Result<(), AccountError> {
        if let Some(unknown) = roles.iter().find(|r| !self.config.roles.contains(r)) {
            return Err(AccountError::InvalidValue(format!("no role {unknown:?}")));
        }
        if self.config.roles.may_grant(&granter.roles, roles) {
            Ok(())
        } else {
            tracing::warn!(
                user = %granter.user_id,
                organization = %granter.organization_id,
                ?roles,
                "refused: a grant above the member's own roles"
            );
            Err(AccountError::Forbidden)
        }
    }
}

/// A display name, trimmed: 1 to 128 characters, no control characters.
fn display_name(name: &str) -> Result<String, AccountError> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_DISPLAY_NAME
        || name.chars().any(char::is_control)
    {
        return Err(AccountError::InvalidValue(format!(
            "a name has 1 to {MAX_DISPLAY_NAME} characters and no control characters"
        )));
    }
    Ok(name.to_owned())
}

fn conflict_as(e: AdapterError, as_: AccountError) -> AccountError {
    match e {
        AdapterError::Conflict(_) => as_,
        e => e.into(),
    }
}

/// Roles as given, or `member` when none; duplicates dropped, order kept.
fn roles_or_member(roles: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in roles {
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    if out.is_empty() {
        out.push(MEMBER_ROLE.to_owned());
    }
    out
}

/// Makes an organization with `owner_id` as its owner. `by_user`: a user asked (refused
/// unless users may make organizations); else the host did.
pub(crate) async fn create_organization(
    c: &ConfigInner,
    owner_id: &str,
    name: &str,
    slug: Option<&str>,
    by_user: bool,
) -> Result<Organization, AccountError> {
    let o = orgs(c)?;
    if by_user && !o.config.settings.users_may_create() {
        return Err(AccountError::Forbidden);
    }
    let name = display_name(name)?;
    let slug = match slug.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => s.to_owned(),
        None => rules::slug_from_name(&name),
    };
    rules::check_slug(&slug).map_err(AccountError::InvalidValue)?;
    if o.adapter.get_user(owner_id).await?.is_none() {
        return Err(AccountError::NotFound);
    }
    let now = OffsetDateTime::now_utc();
    let organization = Organization {
        id: crate::random::uuid_v4(),
        slug,
        name,
        created_at: now,
    };
    let owner = Member {
        organization_id: organization.id.clone(),
        user_id: owner_id.to_owned(),
        roles: vec![OWNER_ROLE.to_owned()],
        teams: Vec::new(),
        created_at: now,
    };
    o.store
        .create_organization(&organization, &owner)
        .await
        .map_err(|e| conflict_as(e, AccountError::SlugTaken))?;
    tracing::info!(organization = %organization.id, owner = %owner_id, "organization made");
    crate::actions::audit::record(
        c,
        crate::audit::AuditEvent::new("organization.created")
            .actor(owner_id.to_owned())
            .with("organization", organization.id.clone())
            .with("slug", organization.slug.clone()),
    )
    .await;
    Ok(organization)
}

/// The organizations `user_id` is a member of.
pub(crate) async fn organizations_of(
    c: &ConfigInner,
    user_id: &str,
) -> Result<Vec<Membership>, AccountError> {
    let o = orgs(c)?;
    Ok(o.store
        .list_organizations_of_user(user_id)
        .await?
        .into_iter()
        .map(|(org, member)| o.membership(org, &member))
        .collect())
}

/// `user_id`'s membership of an organization (`NotFound` when not a member).
pub(crate) async fn membership(
    c: &ConfigInner,
    user_id: &str,
    organization_id: &str,
) -> Result<Membership, AccountError> {
    let o = orgs(c)?;
    let member = o.member(organization_id, user_id).await?;
    let org = o.organization(organization_id).await?;
    Ok(o.membership(org, &member))
}

/// Renames an organization (and changes its slug when given): `organization:update`.
pub(crate) async fn update_organization(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    name: Option<&str>,
    slug: Option<&str>,
) -> Result<Organization, AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::ORGANIZATION_UPDATE)
        .await?;
    let mut org = o.organization(organization_id).await?;
    if let Some(name) = name {
        org.name = display_name(name)?;
    }
    if let Some(slug) = slug {
        rules::check_slug(slug).map_err(AccountError::InvalidValue)?;
        slug.clone_into(&mut org.slug);
    }
    o.store
        .update_organization(&org)
        .await
        .map_err(|e| conflict_as(e, AccountError::SlugTaken))?;
    Ok(org)
}

/// Deletes an organization with its members, teams, invitations and keys:
/// `organization:delete` and a recent sign-in.
pub(crate) async fn delete_organization(
    c: &ConfigInner,
    me: &CurrentSession,
    organization_id: &str,
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, &me.user_id, perm::ORGANIZATION_DELETE)
        .await?;
    recent(c, me, SensitiveOperation::DeleteOrganization).await?;
    o.store.delete_organization(organization_id).await?;
    tracing::info!(organization = %organization_id, user = %me.user_id, "organization deleted");
    crate::actions::audit::record(
        c,
        crate::audit::AuditEvent::new("organization.deleted")
            .actor(me.user_id.clone())
            .with("organization", organization_id),
    )
    .await;
    Ok(())
}

/// The sensitive-change rule, as account management answers it.
async fn recent(
    c: &ConfigInner,
    me: &CurrentSession,
    operation: SensitiveOperation,
) -> Result<(), AccountError> {
    match require_recent_sign_in(c, me, operation).await {
        Ok(()) => Ok(()),
        Err(Refused::NotRecent) => Err(AccountError::ReauthenticationRequired),
        Err(Refused::Adapter(e)) => Err(e.into()),
    }
}

/// The members of an organization: `member:read`.
pub(crate) async fn members(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
) -> Result<Vec<MemberInfo>, AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::MEMBER_READ)
        .await?;
    let mut out = Vec::new();
    for m in o.store.list_members(organization_id).await? {
        let user = o.adapter.get_user(&m.user_id).await?;
        let (name, email) = user.map(|u| (u.name, u.email)).unwrap_or_default();
        out.push(MemberInfo {
            user_id: m.user_id,
            name,
            email,
            roles: m.roles,
            teams: m.teams,
            joined_at: m.created_at,
        });
    }
    Ok(out)
}

/// Replaces a member's roles: `member:update`, and the actor may grant both the roles the
/// member has and the new ones (so nobody changes someone above them, or grants above
/// their own). The last owner keeps the owner role (`LastOwner`).
pub(crate) async fn set_member_roles(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    user_id: &str,
    roles: &[String],
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    let granter = o
        .member_with(organization_id, actor, perm::MEMBER_UPDATE)
        .await?;
    let roles = roles_or_member(roles);
    o.check_grant(&granter, &roles)?;
    let target = o.member(organization_id, user_id).await?;
    o.check_grant(&granter, &target.roles)?;
    match o
        .store
        .set_member_roles(organization_id, user_id, &roles)
        .await?
    {
        MemberChange::Done => {
            tracing::info!(organization = %organization_id, by = %actor, user = %user_id, ?roles, "member roles changed");
            crate::actions::audit::record(
                c,
                crate::audit::AuditEvent::new("organization.rolesChanged")
                    .actor(actor.to_owned())
                    .target(user_id.to_owned())
                    .with("organization", organization_id)
                    .with("before", target.roles.clone())
                    .with("after", roles.clone()),
            )
            .await;
            Ok(())
        }
        MemberChange::NotMember => Err(AccountError::NotFound),
        MemberChange::LastOwner => Err(AccountError::LastOwner),
    }
}

/// Removes a member: `member:remove` over a member the actor may grant the roles of; a
/// member removing themselves leaves, which needs no permission. The last owner stays.
pub(crate) async fn remove_member(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    user_id: &str,
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    if actor != user_id {
        let remover = o
            .member_with(organization_id, actor, perm::MEMBER_REMOVE)
            .await?;
        let target = o.member(organization_id, user_id).await?;
        o.check_grant(&remover, &target.roles)?;
    }
    match o.store.remove_member(organization_id, user_id).await? {
        MemberChange::Done => {
            tracing::info!(organization = %organization_id, by = %actor, user = %user_id, "member removed");
            crate::actions::audit::record(
                c,
                crate::audit::AuditEvent::new("organization.memberRemoved")
                    .actor(actor.to_owned())
                    .target(user_id.to_owned())
                    .with("organization", organization_id),
            )
            .await;
            Ok(())
        }
        MemberChange::NotMember => Err(AccountError::NotFound),
        MemberChange::LastOwner => Err(AccountError::LastOwner),
    }
}

/// The organization's teams: `member:read`.
pub(crate) async fn teams(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
) -> Result<Vec<Team>, AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::MEMBER_READ)
        .await?;
    Ok(o.store.list_teams(organization_id).await?)
}

/// Makes a team: `team:manage`.
pub(crate) async fn create_team(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    name: &str,
) -> Result<Team, AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::TEAM_MANAGE)
        .await?;
    let team = Team {
        id: crate::random::uuid_v4(),
        organization_id: organization_id.to_owned(),
        name: display_name(name)?,
        created_at: OffsetDateTime::now_utc(),
    };
    o.store
        .create_team(&team)
        .await
        .map_err(|e| conflict_as(e, AccountError::InvalidValue("a team has this name".into())))?;
    Ok(team)
}

/// Deletes a team: `team:manage`.
pub(crate) async fn delete_team(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    team_id: &str,
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::TEAM_MANAGE)
        .await?;
    if o.store.delete_team(organization_id, team_id).await? {
        Ok(())
    } else {
        Err(AccountError::NotFound)
    }
}

/// Puts a member in `teams` (each a team of the organization): `team:manage`.
pub(crate) async fn set_member_teams(
    c: &ConfigInner,
    actor: &str,
    organization_id: &str,
    user_id: &str,
    teams: &[String],
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    o.member_with(organization_id, actor, perm::TEAM_MANAGE)
        .await?;
    check_teams(&o, organization_id, teams).await?;
    match o
        .store
        .set_member_teams(organization_id, user_id, teams)
        .await?
    {
        MemberChange::Done => Ok(()),
        _ => Err(AccountError::NotFound),
    }
}

/// Refuses a team id that is not one of the organization's.
async fn check_teams(
    o: &Orgs<'_>,
    organization_id: &str,
    teams: &[String],
) -> Result<(), AccountError> {
    if teams.is_empty() {
        return Ok(());
    }
    let known = o.store.list_teams(organization_id).await?;
    match teams.iter().find(|t| !known.iter().any(|k| k.id == **t)) {
        Some(t) => Err(AccountError::InvalidValue(format!("no team {t:?}"))),
        None => Ok(()),
    }
}

/// `now` plus `lifetime`, if that is a date (`None` past the calendar's end: a lifetime a
/// client asked for is never trusted to fit).
fn after(now: OffsetDateTime, lifetime: std::time::Duration) -> Option<OffsetDateTime> {
    now.checked_add(Duration::try_from(lifetime).ok()?)
}

/// The stored form of an invitation's token.
fn invitation_hash(c: &ConfigInner, token: &str) -> String {
    crate::crypto::hash_token(&format!("authcore-invitation:{token}"), &c.secret_string)
}

/// What an invitation invites to.
pub(crate) struct InvitationRequest<'a> {
    /// The organization; `None` for an invitation to sign up (made by the host only).
    pub organization_id: Option<&'a str>,
    /// The address.
    pub email: &'a str,
    /// The roles (default `member`).
    pub roles: &'a [String],
    /// The teams.
    pub teams: &'a [String],
}

/// Invites an address: by `inviter` (a member with `member:invite`, who may grant the
/// roles), or by the host (`None`). The link goes on `origin` (else the configured URL)
/// and is mailed when an email provider sends.
pub(crate) async fn invite(
    c: &ConfigInner,
    inviter: Option<&str>,
    request: InvitationRequest<'_>,
    origin: Option<&str>,
) -> Result<SentInvitation, AccountError> {
    let o = orgs(c)?;
    let email = crate::email_address::normalize_email(request.email)
        .map_err(|_| AccountError::InvalidEmail)?
        .to_lowercase();
    let roles = match request.organization_id {
        Some(org) => {
            let roles = roles_or_member(request.roles);
            match inviter {
                Some(inviter) => {
                    let granter = o.member_with(org, inviter, perm::MEMBER_INVITE).await?;
                    o.check_grant(&granter, &roles)?;
                }
                None => {
                    o.organization(org).await?;
                    if let Some(r) = roles.iter().find(|r| !o.config.roles.contains(r)) {
                        return Err(AccountError::InvalidValue(format!("no role {r:?}")));
                    }
                }
            }
            check_teams(&o, org, request.teams).await?;
            roles
        }
        None if inviter.is_some() => return Err(AccountError::Forbidden),
        None => Vec::new(),
    };
    let token = crate::random::hex_token::<32>();
    let now = OffsetDateTime::now_utc();
    let expires = after(now, o.config.settings.invitation_lifetime()).ok_or_else(|| {
        AccountError::InvalidValue("the invitations' lifetime is too long".into())
    })?;
    let invitation = Invitation {
        id: crate::random::uuid_v4(),
        organization_id: request.organization_id.map(str::to_owned),
        email: email.clone(),
        roles,
        teams: if request.organization_id.is_some() {
            request.teams.to_vec()
        } else {
            Vec::new()
        },
        inviter_id: inviter.map(str::to_owned),
        token_hash: invitation_hash(c, &token),
        created_at: now,
        expires,
        status: crate::adapter::InvitationStatus::Pending,
    };
    let link = c
        .url_on(origin, &format!("/invitation?token={token}"))
        .ok_or(AccountError::InvalidValue(
            "no site URL to put the invitation link on".into(),
        ))?;
    o.store.create_invitation(&invitation).await?;
    let mailed = mail_invitation(c, &email, &link, token, invitation.expires).await;
    if let Err(e) = &mailed {
        tracing::error!(error = %e, invitation = %invitation.id, "the invitation could not be mailed: it is revoked");
        o.store.revoke_invitation(&invitation.id, now).await.ok();
        return Err(AccountError::MailFailed);
    }
    tracing::info!(
        invitation = %invitation.id,
        organization = ?invitation.organization_id,
        by = ?inviter,
        to = %crate::email_address::masked(&email),
        "invitation made"
    );
    let mut event = crate::audit::AuditEvent::new("organization.invited")
        .with("invitation", invitation.id.clone())
        .with("organization", invitation.organization_id.clone())
        .with("roles", invitation.roles.clone())
        .with("email", crate::email_address::masked(&email));
    if let Some(inviter) = inviter {
        event = event.actor(inviter.to_owned());
    }
    crate::actions::audit::record(c, event).await;
    Ok(SentInvitation {
        invitation,
        link,
        mailed: matches!(mailed, Ok(true)),
    })
}

/// Mails an invitation when an email provider sends: whether it did.
#[cfg(feature = "email")]
async fn mail_invitation(
    c: &ConfigInner,
    to: &str,
    link: &str,
    token: String,
    expires: OffsetDateTime,
) -> Result<bool, super::mail_link::MailFailure> {
    if c.mailer().is_none() {
        return Ok(false);
    }
    super::mail_link::mail(
        c,
        to,
        link.to_owned(),
        crate::providers::email::LinkPurpose::Invitation,
        token,
        expires,
    )
    .await
    .map(|()| true)
}

#[cfg(not(feature = "email"))]
async fn mail_invitation(
    _: &ConfigInner,
    _: &str,
    _: &str,
    _: String,
    _: OffsetDateTime,
) -> Result<bool, std::convert::Infallible> {
    Ok(false)
}

/// The invitations to an organization (`member:read`), or with `None` the invitations to
/// sign up (host only: `actor` `None`).
pub(crate) async fn invitations(
    c: &ConfigInner,
    actor: Option<&str>,
    organization_id: Option<&str>,
) -> Result<Vec<Invitation>, AccountError> {
    let o = orgs(c)?;
    match (actor, organization_id) {
        (Some(actor), Some(org)) => {
            o.member_with(org, actor, perm::MEMBER_READ).await?;
        }
        (Some(_), None) => return Err(AccountError::Forbidden),
        (None, _) => {}
    }
    Ok(o.store.list_invitations(organization_id).await?)
}

/// Revokes a pending invitation of an organization: `member:invite` (host: `actor`
/// `None`).
pub(crate) async fn revoke_invitation(
    c: &ConfigInner,
    actor: Option<&str>,
    invitation_id: &str,
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    let invitation = o
        .store
        .get_invitation(invitation_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    if let Some(actor) = actor {
        let org = invitation
            .organization_id
            .as_deref()
            .ok_or(AccountError::NotFound)?;
        o.member_with(org, actor, perm::MEMBER_INVITE).await?;
    }
    if o.store
        .revoke_invitation(invitation_id, OffsetDateTime::now_utc())
        .await?
    {
        let mut event = crate::audit::AuditEvent::new("organization.invitationRevoked")
            .with("invitation", invitation_id)
            .with("organization", invitation.organization_id.clone());
        if let Some(actor) = actor {
            event = event.actor(actor.to_owned());
        }
        crate::actions::audit::record(c, event).await;
        Ok(())
    } else {
        Err(AccountError::InvalidInvitation)
    }
}

/// The open invitations to `user_id`'s verified address.
pub(crate) async fn invitations_for_user(
    c: &ConfigInner,
    user_id: &str,
) -> Result<Vec<Invitation>, AccountError> {
    let o = orgs(c)?;
    let Some(email) = verified_email(o.adapter, user_id).await? else {
        return Ok(Vec::new());
    };
    let now = OffsetDateTime::now_utc();
    Ok(o.store
        .list_invitations_for_email(&email)
        .await?
        .into_iter()
        .filter(|i| i.is_open(now) && i.organization_id.is_some())
        .collect())
}

async fn verified_email(
    adapter: &dyn Adapter,
    user_id: &str,
) -> Result<Option<String>, AccountError> {
    Ok(adapter
        .get_user(user_id)
        .await?
        .filter(|u| u.email_verified.is_some())
        .and_then(|u| u.email)
        .map(|e| e.to_lowercase()))
}

/// How an invitation to accept is named: by the token of its link, or by id (then the
/// user's address must be verified, as the link's token is not there to prove it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum InvitationRef<'a> {
    /// The token of the emailed link.
    Token(&'a str),
    /// The id, for an invitation listed to its addressee.
    Id(&'a str),
}

/// The invitation `which` names, for `user_id`, whose address must be the invited one
/// (by the link's token any other is refused with `WrongAddress`; by id, as an unknown
/// one, with `InvalidInvitation`).
/// Whether it is still open is the caller's to check.
async fn addressed_invitation(
    c: &ConfigInner,
    o: &Orgs<'_>,
    user_id: &str,
    which: InvitationRef<'_>,
) -> Result<Invitation, AccountError> {
    let found = match which {
        InvitationRef::Token(token) => {
            if token.is_empty() || token.len() > 128 {
                return Err(AccountError::InvalidInvitation);
            }
            o.store
                .get_invitation_by_token(&invitation_hash(c, token))
                .await?
        }
        InvitationRef::Id(id) => o.store.get_invitation(id).await?,
    };
    let invitation = found.ok_or(AccountError::InvalidInvitation)?;
    let user = o
        .adapter
        .get_user(user_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    let proven = matches!(which, InvitationRef::Token(_)) || user.email_verified.is_some();
    let same = user
        .email
        .as_deref()
        .is_some_and(|e| e.to_lowercase() == invitation.email);
    if !same || !proven {
        tracing::warn!(
            user = %user_id,
            invitation = %invitation.id,
            "invitation refused: it is for another address"
        );
        // By id, another address's invitation is as unknown as one that does not exist;
        // the link's holder learns that the link is for another address.
        return Err(match which {
            InvitationRef::Token(_) => AccountError::WrongAddress,
            InvitationRef::Id(_) => AccountError::InvalidInvitation,
        });
    }
    Ok(invitation)
}

/// Accepts an invitation as `user_id`, whose address must be the invited one (any other
/// is refused, see [`addressed_invitation`], and nothing changes). Accepted, expired,
/// revoked and unknown invitations answer alike (`InvalidInvitation`).
pub(crate) async fn accept_invitation(
    c: &ConfigInner,
    user_id: &str,
    which: InvitationRef<'_>,
) -> Result<Invitation, AccountError> {
    let o = orgs(c)?;
    let invitation = addressed_invitation(c, &o, user_id, which).await?;
    match o
        .store
        .accept_invitation(&invitation.id, user_id, OffsetDateTime::now_utc())
        .await?
    {
        InvitationAcceptance::Accepted { invitation, .. } => {
            tracing::info!(user = %user_id, invitation = %invitation.id, organization = ?invitation.organization_id, "invitation accepted");
            crate::actions::audit::record(
                c,
                crate::audit::AuditEvent::new("organization.invitationAccepted")
                    .actor(user_id.to_owned())
                    .with("invitation", invitation.id.clone())
                    .with("organization", invitation.organization_id.clone())
                    .with("roles", invitation.roles.clone()),
            )
            .await;
            Ok(*invitation)
        }
        InvitationAcceptance::NotFound
        | InvitationAcceptance::Closed
        | InvitationAcceptance::Expired => Err(AccountError::InvalidInvitation),
    }
}

/// The invitation whose link carried `token`, checked as [`accept_invitation`] checks it
/// (the address of `user_id`; closed ones answer `InvalidInvitation`) and not accepted,
/// with its organization: what the link's page offers. `None`: an invitation to sign up,
/// which the user has done (nothing is left to accept).
pub(crate) async fn linked_invitation(
    c: &ConfigInner,
    user_id: &str,
    token: &str,
) -> Result<Option<(Invitation, Organization)>, AccountError> {
    let o = orgs(c)?;
    let invitation = addressed_invitation(c, &o, user_id, InvitationRef::Token(token)).await?;
    let Some(id) = invitation.organization_id.as_deref() else {
        return Ok(None);
    };
    if !invitation.is_open(OffsetDateTime::now_utc()) {
        return Err(AccountError::InvalidInvitation);
    }
    match o.store.get_organization(id).await? {
        Some(org) => Ok(Some((invitation, org))),
        None => Err(AccountError::InvalidInvitation),
    }
}

/// The open invitations to organizations for `user_id`'s verified address, each with its
/// organization (one deleted meanwhile is left out).
pub(crate) async fn invitations_for_user_with_organizations(
    c: &ConfigInner,
    user_id: &str,
) -> Result<Vec<(Invitation, Organization)>, AccountError> {
    let o = orgs(c)?;
    let mut out = Vec::new();
    for invitation in invitations_for_user(c, user_id).await? {
        let Some(id) = invitation.organization_id.as_deref() else {
            continue;
        };
        if let Some(org) = o.store.get_organization(id).await? {
            out.push((invitation, org));
        }
    }
    Ok(out)
}

/// Whether `email` may become a user under the sign-up policy: with
/// [`SignUpPolicy::Invite`](crate::SignUpPolicy::Invite), when it has an open invitation.
pub(crate) async fn may_sign_up(
    c: &ConfigInner,
    email: Option<&str>,
) -> Result<bool, AdapterError> {
    if c.sign_up != crate::sign_up::SignUpPolicy::Invite {
        return Ok(c.sign_up.allows(email));
    }
    let (Some(email), Some(store)) = (email, c.adapter.as_deref().and_then(|a| a.organizations()))
    else {
        return Ok(false);
    };
    let now = OffsetDateTime::now_utc();
    Ok(store
        .list_invitations_for_email(&email.to_lowercase())
        .await?
        .iter()
        .any(|i| i.is_open(now)))
}

/// After a new user was made: their open invitations to sign up are used (an invitation
/// to an organization waits for its link).
pub(crate) async fn after_sign_up(c: &ConfigInner, user: &AdapterUser) {
    let (Some(email), Some(store)) = (
        user.email.as_deref(),
        c.adapter.as_deref().and_then(|a| a.organizations()),
    ) else {
        return;
    };
    let now = OffsetDateTime::now_utc();
    let open = match store
        .list_invitations_for_email(&email.to_lowercase())
        .await
    {
        Ok(list) => list,
        Err(e) => {
            tracing::warn!(error = %e, "the invitations to sign up could not be read");
            return;
        }
    };
    for i in open
        .iter()
        .filter(|i| i.organization_id.is_none() && i.is_open(now))
    {
        if let Err(e) = store.accept_invitation(&i.id, &user.id, now).await {
            tracing::warn!(error = %e, invitation = %i.id, "an invitation to sign up could not be closed");
        }
    }
}

/// The id of the active organization of the request's session: the JWT's claim, or the
/// database session's record (unchecked: see [`active_membership`]).
async fn active_organization_id(
    c: &ConfigInner,
    me: &CurrentSession,
    url: &RequestUrl,
    cookies: &RequestCookies,
    store: &dyn OrganizationStore,
) -> Option<String> {
    if c.session_strategy != SessionStrategy::Database {
        // Decoded with the rest of the token by `current_session`.
        return me.organization.clone();
    }
    let spec = &c.cookies(url.is_https()).session_token;
    let token = SessionCookieStore::new(spec, cookies).value()?;
    store
        .get_session_organization(&c.stored_session_token(&token))
        .await
        .ok()?
}

/// The id of the request's session's active organization, as recorded (unchecked: for
/// marking it in a list of the user's own memberships).
pub(crate) async fn active_organization_id_of(
    c: &ConfigInner,
    me: &CurrentSession,
    url: &RequestUrl,
    cookies: &RequestCookies,
) -> Option<String> {
    let store = c.adapter.as_deref()?.organizations()?;
    active_organization_id(c, me, url, cookies, store).await
}

/// The signed-in user's membership of their session's active organization; `None` when
/// none is set, or the user is no longer a member of it (checked on every read).
pub(crate) async fn active_membership(
    c: &ConfigInner,
    me: &CurrentSession,
    url: &RequestUrl,
    cookies: &RequestCookies,
) -> Result<Option<Membership>, AccountError> {
    let o = orgs(c)?;
    let Some(id) = active_organization_id(c, me, url, cookies, o.store).await else {
        return Ok(None);
    };
    let Some(member) = o.store.get_member(&id, &me.user_id).await? else {
        return Ok(None);
    };
    let Some(org) = o.store.get_organization(&id).await? else {
        return Ok(None);
    };
    Ok(Some(o.membership(org, &member)))
}

/// Makes `organization_id` (one the user is a member of; `None` clears it) the active
/// organization of the request's session: the cookies to set with JWT sessions (a new
/// token with the claim), none with database sessions (recorded in the store).
pub(crate) async fn set_active_organization(
    c: &ConfigInner,
    me: &CurrentSession,
    url: &RequestUrl,
    cookies: &RequestCookies,
    organization_id: Option<&str>,
) -> Result<Vec<SetCookie>, AccountError> {
    let o = orgs(c)?;
    if let Some(id) = organization_id {
        o.member(id, &me.user_id).await?;
    }
    let spec = &c.cookies(url.is_https()).session_token;
    let session = SessionCookieStore::new(spec, cookies);
    let token = session.value().ok_or(AccountError::NotFound)?;
    if c.session_strategy == SessionStrategy::Database {
        let stored = c.stored_session_token(&token);
        return if o
            .store
            .set_session_organization(&stored, organization_id)
            .await?
        {
            Ok(Vec::new())
        } else {
            Err(AccountError::NotFound)
        };
    }
    let mut claims = c
        .decode_session(&token, &spec.name)
        .ok()
        .flatten()
        .ok_or(AccountError::NotFound)?;
    match organization_id {
        Some(id) => claims.insert(ORGANIZATION_CLAIM.to_owned(), id.into()),
        None => claims.remove(ORGANIZATION_CLAIM),
    };
    let encoded = c
        .encode_session(&claims, &spec.name)
        .map_err(|e| AccountError::Adapter(AdapterError::Backend(e)))?;
    let expires = OffsetDateTime::now_utc() + Duration::seconds(c.jwt_max_age as i64);
    Ok(session.write(&encoded, expires))
}

/// Makes an API key for `me` (a sensitive change): an organization's key, with
/// permissions the maker holds there (at least one), or, with no organization, the
/// user's own key, which signs in as the user and carries no permissions.
pub(crate) async fn create_api_key(
    c: &ConfigInner,
    me: &CurrentSession,
    organization_id: Option<&str>,
    name: &str,
    permissions: &[String],
    lifetime: Option<std::time::Duration>,
) -> Result<NewApiKey, AccountError> {
    let o = orgs(c)?;
    let name = display_name(name)?;
    for p in permissions {
        rules::check_permission(p).map_err(AccountError::InvalidValue)?;
    }
    match organization_id {
        Some(org) => {
            let member = o.member(org, &me.user_id).await?;
            let held = o.config.roles.permissions_of(&member.roles);
            if permissions.is_empty() {
                return Err(AccountError::InvalidValue(
                    "an organization's key needs at least one permission".into(),
                ));
            }
            if !rules::all_covered(&held, permissions) {
                tracing::warn!(user = %me.user_id, organization = %org, ?permissions, "refused: a key with permissions its maker lacks");
                return Err(AccountError::Forbidden);
            }
        }
        None if !permissions.is_empty() => {
            return Err(AccountError::InvalidValue(
                "a user's own key has no organization, so no permissions: make an organization's key"
                    .into(),
            ));
        }
        None => {}
    }
    if let Some(max) = o.config.settings.api_key_max_lifetime()
        && lifetime.is_none_or(|l| l > max)
    {
        return Err(AccountError::InvalidValue(format!(
            "an API key lives at most {} days here",
            max.as_secs() / 86_400
        )));
    }
    recent(c, me, SensitiveOperation::CreateApiKey).await?;
    let now = OffsetDateTime::now_utc();
    let expires = match lifetime {
        Some(l) => Some(
            after(now, l)
                .ok_or_else(|| AccountError::InvalidValue("the lifetime is too long".into()))?,
        ),
        None => None,
    };
    let (id, secret, hash) = rules::api_key::new_key();
    let key = ApiKey {
        id,
        hash,
        name,
        user_id: me.user_id.clone(),
        organization_id: organization_id.map(str::to_owned),
        permissions: permissions.to_vec(),
        created_at: now,
        expires,
        last_used_at: None,
        revoked_at: None,
    };
    o.keys.create_api_key(&key).await?;
    tracing::info!(key = %key.id, user = %me.user_id, organization = ?key.organization_id, "API key made");
    crate::actions::audit::record(
        c,
        crate::audit::AuditEvent::new("apiKey.created")
            .actor(me.user_id.clone())
            .with("key", key.id.clone())
            .with("organization", key.organization_id.clone())
            .with("permissions", key.permissions.clone()),
    )
    .await;
    Ok(NewApiKey { key, secret })
}

/// The user's own keys, or an organization's: all of them with `api_key:manage`, else the
/// ones the user made.
pub(crate) async fn api_keys(
    c: &ConfigInner,
    user_id: &str,
    organization_id: Option<&str>,
) -> Result<Vec<ApiKey>, AccountError> {
    let o = orgs(c)?;
    match organization_id {
        None => Ok(o.keys.list_api_keys(ApiKeyOwner::User(user_id)).await?),
        Some(org) => {
            let member = o.member(org, user_id).await?;
            let all = o.config.roles.allows(&member.roles, perm::API_KEY_MANAGE);
            Ok(o.keys
                .list_api_keys(ApiKeyOwner::Organization(org))
                .await?
                .into_iter()
                .filter(|k| all || k.user_id == user_id)
                .collect())
        }
    }
}

/// Revokes a key: the user's own, one they made, or (with `api_key:manage`) any of their
/// organization's.
pub(crate) async fn revoke_api_key(
    c: &ConfigInner,
    user_id: &str,
    key_id: &str,
) -> Result<(), AccountError> {
    let o = orgs(c)?;
    let key = o
        .keys
        .get_api_key(key_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    if key.user_id != user_id {
        let org = key
            .organization_id
            .as_deref()
            .ok_or(AccountError::NotFound)?;
        o.member_with(org, user_id, perm::API_KEY_MANAGE)
            .await
            .map_err(|_| AccountError::NotFound)?;
    }
    o.keys
        .revoke_api_key(key_id, OffsetDateTime::now_utc())
        .await?;
    tracing::info!(key = %key_id, by = %user_id, "API key revoked");
    crate::actions::audit::record(
        c,
        crate::audit::AuditEvent::new("apiKey.revoked")
            .actor(user_id.to_owned())
            .with("key", key_id),
    )
    .await;
    Ok(())
}

/// How often a key's last use is written (a key used constantly is not a write per
/// request).
const USE_RECORD_EVERY: Duration = Duration::minutes(1);

/// Who an API key acts as: checked against the store (revoked, expired, the maker still a
/// user and, for an organization's key, a member), its permissions cut to what the maker
/// holds now.
pub(crate) async fn verify_api_key(c: &ConfigInner, text: &str) -> Result<Principal, KeyRefused> {
    let o = orgs(c).map_err(|_| KeyRefused::Invalid)?;
    let (id, secret) = rules::parse_key(text).ok_or(KeyRefused::Invalid)?;
    let key = o
        .keys
        .get_api_key(id)
        .await
        .map_err(|_| KeyRefused::Unavailable)?
        .ok_or(KeyRefused::Invalid)?;
    if !crate::crypto::ct_eq(rules::hash_secret(secret).as_bytes(), key.hash.as_bytes()) {
        return Err(KeyRefused::Invalid);
    }
    let now = OffsetDateTime::now_utc();
    if key.revoked_at.is_some() {
        return Err(KeyRefused::Revoked);
    }
    if key.expires.is_some_and(|e| e <= now) {
        return Err(KeyRefused::Expired);
    }
    let unavailable = |_| KeyRefused::Unavailable;
    if o.adapter
        .get_user(&key.user_id)
        .await
        .map_err(unavailable)?
        .is_none()
    {
        return Err(KeyRefused::MakerGone);
    }
    if super::bans::ban_of(c, &key.user_id)
        .await
        .map_err(unavailable)?
        .is_some()
    {
        return Err(KeyRefused::Banned);
    }
    let organization = match &key.organization_id {
        None => None,
        Some(org) => {
            let member = o
                .store
                .get_member(org, &key.user_id)
                .await
                .map_err(unavailable)?
                .ok_or(KeyRefused::MakerGone)?;
            let organization = o
                .store
                .get_organization(org)
                .await
                .map_err(unavailable)?
                .ok_or(KeyRefused::MakerGone)?;
            let held = o.config.roles.permissions_of(&member.roles);
            let permissions = intersect(&held, &key.permissions);
            // A role stands for its permissions: a key narrower than its maker's role does
            // not pass a guard that asks for the role.
            let roles = member
                .roles
                .into_iter()
                .filter(|r| {
                    let of_role = o.config.roles.permissions_of(std::slice::from_ref(r));
                    rules::all_covered(&permissions, &of_role)
                })
                .collect();
            Some(OrganizationAccess {
                id: organization.id,
                slug: organization.slug,
                permissions,
                roles,
            })
        }
    };
    if key.last_used_at.is_none_or(|t| now - t >= USE_RECORD_EVERY)
        && let Err(e) = o.keys.record_api_key_use(&key.id, now).await
    {
        tracing::warn!(key = %key.id, error = %e, "an API key's use could not be recorded");
    }
    Ok(Principal {
        user_id: key.user_id,
        organization,
        api_key: Some(key.id),
    })
}

/// The permissions both sets cover: those of each covered by the other (with the three
/// levels of wildcard, of two patterns covering one permission one covers the other, so
/// this is exact).
fn intersect(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = a
        .iter()
        .filter(|p| b.iter().any(|q| rules::covers(q, p)))
        .chain(b.iter().filter(|q| a.iter().any(|p| rules::covers(p, q))))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

/// [`verify_api_key`] as an attempt of `client` under the sign-in limit
/// `credentials_per_client` (when limits are on): a refused key counts, as a wrong password
/// does, so keys cannot be guessed faster than passwords; a client over the limit is not
/// checked at all.
async fn counted_key(
    c: &ConfigInner,
    key: &str,
    client: Option<&str>,
) -> Result<Principal, KeyRefused> {
    use super::limits::{self, Limit};
    if let Some(client) = client
        && let Err(retry_after) = limits::count(c, Limit::CredentialsPerClient, client).await
    {
        tracing::warn!(
            client,
            "API key refused: too many refused keys from this client"
        );
        return Err(KeyRefused::RateLimited { retry_after });
    }
    let verified = verify_api_key(c, key).await;
    if let Err(e) = &verified {
        tracing::info!(reason = %e, "API key refused");
    }
    // A right key, or a store that could not answer, is no guess.
    if matches!(verified, Ok(_) | Err(KeyRefused::Unavailable))
        && let Some(client) = client
    {
        limits::give_back(c, Limit::CredentialsPerClient, client).await;
    }
    verified
}

/// Who the request acts as: an `Authorization: Bearer ak_…` key when one is sent (a bad
/// key is refused, never ignored for the cookie), else the signed-in user in their active
/// organization. `Ok(None)`: signed out.
pub(crate) async fn principal(
    c: &ConfigInner,
    url: &RequestUrl,
    cookies: &RequestCookies,
    headers: &http::HeaderMap,
    client: Option<&str>,
) -> Result<Option<Principal>, KeyRefused> {
    let authorization = headers.get_all(http::header::AUTHORIZATION);
    let mut keys = authorization
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(rules::api_key::bearer_key);
    if let Some(key) = keys.next() {
        // `Authorization` is not a list (RFC 9110 §11.6.2): beside a key, a second one
        // makes the request ambiguous, whichever a proxy would have read.
        if authorization.iter().nth(1).is_some() {
            tracing::info!("API key refused: more than one Authorization header");
            return Err(KeyRefused::Invalid);
        }
        return counted_key(c, key, client).await.map(Some);
    }
    let Some(me) = super::current::current_session(c, url, cookies).await else {
        return Ok(None);
    };
    let organization = match c.organizations {
        Some(_) => match active_membership(c, &me, url, cookies).await {
            Ok(m) => m.map(|m| OrganizationAccess {
                id: m.organization.id,
                slug: m.organization.slug,
                roles: m.roles,
                permissions: m.permissions,
            }),
            Err(_) => return Err(KeyRefused::Unavailable),
        },
        None => None,
    };
    Ok(Some(Principal {
        user_id: me.user_id,
        organization,
        api_key: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_key_keeps_what_its_maker_holds() {
        for (held, key, want) in [
            (&["*"][..], &["billing:read"][..], &["billing:read"][..]),
            (&["billing:read"], &["billing:*"], &["billing:read"]),
            (
                &["billing:*"],
                &["billing:read", "project:read"],
                &["billing:read"],
            ),
            (&["member:read"], &["billing:read"], &[]),
            (
                &["billing:*", "project:read"],
                &["*"],
                &["billing:*", "project:read"],
            ),
        ] {
            assert_eq!(intersect(&v(held), &v(key)), v(want), "{held:?} ∩ {key:?}");
        }
    }
}
