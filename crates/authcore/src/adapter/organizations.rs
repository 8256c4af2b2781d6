//! What the organizations capability stores: organizations, their members (with roles and
//! teams), teams, invitations, each database session's active organization
//! ([`OrganizationStore`]), and API keys ([`ApiKeyStore`]). The rules (who may grant
//! which role, what a key may do) live in `authcore::organizations`; a store keeps the
//! data as given, and keeps only the invariants that need atomicity: an organization
//! always has an owner, an invitation is accepted once.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::AdapterError;

/// The role every organization keeps at least one member with: a store refuses a change
/// that would leave an organization without one ([`MemberChange::LastOwner`]).
pub const OWNER_ROLE: &str = "owner";

/// An organization (a tenant, a company, a workspace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organization {
    /// Id assigned by the caller (a random UUID).
    pub id: String,
    /// Unique, URL-safe short name (lower case letters, digits and `-`).
    pub slug: String,
    /// Display name.
    pub name: String,
    /// When it was made.
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// A user's membership of an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// The organization.
    #[serde(rename = "organizationId")]
    pub organization_id: String,
    /// The user.
    #[serde(rename = "userId")]
    pub user_id: String,
    /// The member's roles, in the order given (names without spaces).
    pub roles: Vec<String>,
    /// The ids of the organization's teams the member is in, in the order given.
    pub teams: Vec<String>,
    /// When the user joined.
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl Member {
    /// Whether the member has the owner role.
    pub fn is_owner(&self) -> bool {
        self.roles.iter().any(|r| r == OWNER_ROLE)
    }
}

/// A team inside an organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Team {
    /// Id assigned by the caller (a random UUID).
    pub id: String,
    /// The organization.
    #[serde(rename = "organizationId")]
    pub organization_id: String,
    /// Display name, unique within the organization.
    pub name: String,
    /// When it was made.
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// Where an invitation stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum InvitationStatus {
    /// Not used yet (it may still have expired: see [`Invitation::expires`]).
    Pending,
    /// Accepted by `user_id` at `at`.
    Accepted {
        /// Who accepted it.
        #[serde(rename = "userId")]
        user_id: String,
        /// When.
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
    },
    /// Revoked at `at`.
    Revoked {
        /// When.
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
    },
}

/// An invitation by email: to an organization (with roles and teams), or, without one, to
/// sign up where sign-up is by invitation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invitation {
    /// Id assigned by the caller (a random UUID).
    pub id: String,
    /// The organization; `None` for an invitation to sign up only.
    #[serde(rename = "organizationId")]
    pub organization_id: Option<String>,
    /// The invited address, in lower case; only a user with this address accepts it.
    pub email: String,
    /// The roles the member gets.
    pub roles: Vec<String>,
    /// The teams the member joins.
    pub teams: Vec<String>,
    /// Who invited (`None`: an operator or the configuration).
    #[serde(rename = "inviterId")]
    pub inviter_id: Option<String>,
    /// The hash of the emailed token (the token itself is never stored).
    #[serde(rename = "tokenHash")]
    pub token_hash: String,
    /// When it was made.
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When it stops being accepted.
    #[serde(with = "time::serde::rfc3339")]
    pub expires: OffsetDateTime,
    /// Where it stands.
    #[serde(flatten)]
    pub status: InvitationStatus,
}

impl Invitation {
    /// Whether it can still be accepted at `now`: pending and not expired.
    pub fn is_open(&self, now: OffsetDateTime) -> bool {
        self.status == InvitationStatus::Pending && now < self.expires
    }
}

/// The outcome of a change to a membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Done.
    Done,
    /// The user is not a member of the organization: nothing changed.
    NotMember,
    /// The change would leave the organization without an owner: nothing changed.
    LastOwner,
}

/// The outcome of [`OrganizationStore::accept_invitation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvitationAcceptance {
    /// Accepted now; for an organization's invitation the user is a member with its roles
    /// and teams, or, when already a member, kept as they were (`already_member`).
    Accepted {
        /// The invitation as accepted.
        invitation: Box<Invitation>,
        /// Whether the user was a member before (their roles did not change).
        already_member: bool,
    },
    /// No invitation has this id.
    NotFound,
    /// Accepted or revoked before: nothing changed.
    Closed,
    /// Pending but expired: nothing changed.
    Expired,
}

/// Organizations, members, teams and invitations, and each database session's active
/// organization (`AuthConfigBuilder::organizations`).
///
/// Lists are ordered by creation time, then id. Role, team and permission names never
/// contain spaces, so a backend may store a list as one space-separated column.
#[async_trait]
pub trait OrganizationStore: Send + Sync {
    /// Makes `organization` with `owner` as its first member (beyond Auth.js). A slug in
    /// use is a [`AdapterError::Conflict`] and makes nothing.
    async fn create_organization(
        &self,
        organization: &Organization,
        owner: &Member,
    ) -> Result<(), AdapterError>;
    /// An organization by id (beyond Auth.js).
    async fn get_organization(&self, id: &str) -> Result<Option<Organization>, AdapterError>;
    /// An organization by slug (beyond Auth.js).
    async fn get_organization_by_slug(
        &self,
        slug: &str,
    ) -> Result<Option<Organization>, AdapterError>;
    /// Sets the name and slug of the organization with `organization`'s id; `Ok(false)`
    /// when there is none. A slug in use by another organization is a
    /// [`AdapterError::Conflict`] (beyond Auth.js).
    async fn update_organization(&self, organization: &Organization) -> Result<bool, AdapterError>;
    /// Deletes an organization with its members, teams, invitations, API keys and the
    /// sessions' choice of it as active organization; whether it existed (beyond Auth.js).
    async fn delete_organization(&self, id: &str) -> Result<bool, AdapterError>;
    /// The organizations the user is a member of, each with the membership (beyond
    /// Auth.js).
    async fn list_organizations_of_user(
        &self,
        user_id: &str,
    ) -> Result<Vec<(Organization, Member)>, AdapterError>;
    /// The user's membership of the organization, if any (beyond Auth.js).
    async fn get_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<Member>, AdapterError>;
    /// The organization's members (beyond Auth.js).
    async fn list_members(&self, organization_id: &str) -> Result<Vec<Member>, AdapterError>;
    /// Adds a member; `Ok(false)` when the user is a member already (nothing changes). The
    /// organization and the user must exist (beyond Auth.js).
    async fn add_member(&self, member: &Member) -> Result<bool, AdapterError>;
    /// Replaces a member's roles. Atomic: of concurrent changes, none leaves the
    /// organization without an owner ([`MemberChange::LastOwner`]) (beyond Auth.js).
    async fn set_member_roles(
        &self,
        organization_id: &str,
        user_id: &str,
        roles: &[String],
    ) -> Result<MemberChange, AdapterError>;
    /// Replaces the teams a member is in (beyond Auth.js).
    async fn set_member_teams(
        &self,
        organization_id: &str,
        user_id: &str,
        teams: &[String],
    ) -> Result<MemberChange, AdapterError>;
    /// Removes a member (and their sessions' choice of the organization). Atomic: the last
    /// owner is never removed ([`MemberChange::LastOwner`]) (beyond Auth.js).
    async fn remove_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<MemberChange, AdapterError>;
    /// Makes a team. A name in use in the organization is a [`AdapterError::Conflict`]
    /// (beyond Auth.js).
    async fn create_team(&self, team: &Team) -> Result<(), AdapterError>;
    /// The organization's teams (beyond Auth.js).
    async fn list_teams(&self, organization_id: &str) -> Result<Vec<Team>, AdapterError>;
    /// Deletes a team of the organization and takes it out of its members' teams; whether
    /// it existed (beyond Auth.js).
    async fn delete_team(&self, organization_id: &str, team_id: &str)
    -> Result<bool, AdapterError>;
    /// Stores an invitation (beyond Auth.js).
    async fn create_invitation(&self, invitation: &Invitation) -> Result<(), AdapterError>;
    /// An invitation by id (beyond Auth.js).
    async fn get_invitation(&self, id: &str) -> Result<Option<Invitation>, AdapterError>;
    /// An invitation by the hash of its token (beyond Auth.js).
    async fn get_invitation_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<Invitation>, AdapterError>;
    /// The invitations to the organization, or with `None` the invitations to sign up
    /// only, in every status (beyond Auth.js).
    async fn list_invitations(
        &self,
        organization_id: Option<&str>,
    ) -> Result<Vec<Invitation>, AdapterError>;
    /// The pending invitations to `email` (lower case), expired or not (beyond Auth.js).
    async fn list_invitations_for_email(
        &self,
        email: &str,
    ) -> Result<Vec<Invitation>, AdapterError>;
    /// Accepts invitation `id` as `user_id` at `at` if it is pending and unexpired: marks it
    /// accepted and, for an organization's invitation, adds the user as a member with its
    /// roles and teams (a member already keeps their membership as it is). Atomic: of
    /// concurrent acceptances one succeeds. The caller checks the user's address (beyond
    /// Auth.js).
    async fn accept_invitation(
        &self,
        id: &str,
        user_id: &str,
        at: OffsetDateTime,
    ) -> Result<InvitationAcceptance, AdapterError>;
    /// Revokes a pending invitation at `at`; whether one was pending (beyond Auth.js).
    async fn revoke_invitation(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError>;
    /// Sets (or with `None` clears) the active organization of database session
    /// `session_token` (its stored form); whether the session exists (beyond Auth.js).
    async fn set_session_organization(
        &self,
        session_token: &str,
        organization_id: Option<&str>,
    ) -> Result<bool, AdapterError>;
    /// The active organization of database session `session_token`, if one is set
    /// (beyond Auth.js).
    async fn get_session_organization(
        &self,
        session_token: &str,
    ) -> Result<Option<String>, AdapterError>;
}

/// An API key: a secret a program sends as `Authorization: Bearer <key>` to act as its
/// user, or for its organization, within its permissions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    /// Id assigned by the caller: the key's visible part, shown in lists.
    pub id: String,
    /// The hash of the key's secret part (the key itself is never stored).
    pub hash: String,
    /// A name for people.
    pub name: String,
    /// The user who made it: the key acts as this user, never beyond what they hold.
    #[serde(rename = "userId")]
    pub user_id: String,
    /// The organization of an organization's key; `None` for a user's own key.
    #[serde(rename = "organizationId")]
    pub organization_id: Option<String>,
    /// The permissions it carries.
    pub permissions: Vec<String>,
    /// When it was made.
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When it stops working, if ever.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires: Option<OffsetDateTime>,
    /// When it was last used, as recorded.
    #[serde(rename = "lastUsedAt", with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    /// When it was revoked.
    #[serde(rename = "revokedAt", with = "time::serde::rfc3339::option")]
    pub revoked_at: Option<OffsetDateTime>,
}

/// Whose API keys to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyOwner<'a> {
    /// A user's own keys (not the organizations' keys they made).
    User(&'a str),
    /// An organization's keys.
    Organization(&'a str),
}

/// API keys (`AuthConfigBuilder::api_keys`).
#[async_trait]
pub trait ApiKeyStore: Send + Sync {
    /// Stores a key. The user must exist; their keys go when the user is deleted, an
    /// organization's keys when it is (beyond Auth.js).
    async fn create_api_key(&self, key: &ApiKey) -> Result<(), AdapterError>;
    /// A key by id, revoked or not (beyond Auth.js).
    async fn get_api_key(&self, id: &str) -> Result<Option<ApiKey>, AdapterError>;
    /// The keys of a user or an organization, revoked ones included (beyond Auth.js).
    async fn list_api_keys(&self, owner: ApiKeyOwner<'_>) -> Result<Vec<ApiKey>, AdapterError>;
    /// Revokes a key at `at`; whether it existed unrevoked (beyond Auth.js).
    async fn revoke_api_key(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError>;
    /// Records a use of the key at `at` (a later time only moves it forward; beyond
    /// Auth.js).
    async fn record_api_key_use(&self, id: &str, at: OffsetDateTime) -> Result<(), AdapterError>;
}
