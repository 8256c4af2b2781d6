//! Organizations, members, invitations and API keys for the signed-in user, and who a
//! request acts as (see [`crate::organizations`] for the roles and the grant rule).

use http::HeaderValue;

use super::{AccountError, CurrentSession};
use crate::actions::organizations as ops;
pub use crate::actions::organizations::{MemberInfo, Membership, NewApiKey, SentInvitation};
use crate::adapter::{ApiKey, Invitation, Organization, Team};
use crate::handler::Auth;
pub use crate::organizations::{KeyRefused, OrganizationAccess, Principal};

/// An invitation to make with [`Auth::invite`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InvitationSpec {
    /// The organization; `None` for an invitation to sign up only (the host's: members
    /// invite to their organizations).
    pub organization_id: Option<String>,
    /// The invited address.
    pub email: String,
    /// The roles the member gets (default `member`).
    pub roles: Vec<String>,
    /// The teams (ids) the member joins.
    pub teams: Vec<String>,
}

impl InvitationSpec {
    /// An invitation of `email` to `organization_id` as a `member`.
    pub fn to_organization(organization_id: impl Into<String>, email: impl Into<String>) -> Self {
        InvitationSpec {
            organization_id: Some(organization_id.into()),
            email: email.into(),
            ..Self::default()
        }
    }

    /// An invitation of `email` to sign up (where sign-up is by invitation).
    pub fn to_sign_up(email: impl Into<String>) -> Self {
        InvitationSpec {
            email: email.into(),
            ..Self::default()
        }
    }

    /// With these roles.
    pub fn roles<I: IntoIterator<Item = S>, S: Into<String>>(mut self, roles: I) -> Self {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// In these teams.
    pub fn teams<I: IntoIterator<Item = S>, S: Into<String>>(mut self, teams: I) -> Self {
        self.teams = teams.into_iter().map(Into::into).collect();
        self
    }
}

fn to_header_values(cookies: Vec<crate::cookies::SetCookie>) -> Vec<HeaderValue> {
    cookies
        .iter()
        .filter_map(crate::cookies::SetCookie::header_value)
        .collect()
}

impl Auth {
    /// Who a request to `uri` with `headers` acts as: the API key of its
    /// `Authorization: Bearer ak_…` header (a bad key is refused, never passed over for
    /// the cookie), else the signed-in user in their active organization. `Ok(None)`:
    /// signed out. Refused keys are not counted here, as the client's address is unknown:
    /// a host that has the request's parts calls [`Auth::principal_of_request`].
    pub async fn principal(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<Option<Principal>, KeyRefused> {
        let Ok(source) = self.session_source(uri, headers) else {
            return Ok(None);
        };
        ops::principal(
            &self.config().inner,
            &source.url,
            &source.cookies,
            headers,
            None,
        )
        .await
    }

    /// [`Auth::principal`] of a request's `parts`, whose refused API keys count against
    /// its client (its address through the trusted proxies, from the
    /// [`ClientAddr`](crate::request::ClientAddr) extension the integrations set) under the
    /// sign-in limit `credentials_per_client`, when rate limits are on
    /// ([`KeyRefused::RateLimited`] once over). The guards of the framework integrations
    /// are built on it.
    pub async fn principal_of_request(
        &self,
        parts: &http::request::Parts,
    ) -> Result<Option<Principal>, KeyRefused> {
        let Ok(source) = self.session_source(&parts.uri, &parts.headers) else {
            return Ok(None);
        };
        let c = &*self.config().inner;
        let client = crate::request::client_addr(c, parts).map(crate::ratelimit::client_subject);
        ops::principal(
            c,
            &source.url,
            &source.cookies,
            &parts.headers,
            client.as_deref(),
        )
        .await
    }

    /// Makes an organization for the signed-in user `me`, who becomes its owner; refused
    /// (`Forbidden`) when users may not make organizations. The slug is made from the
    /// name when not given; one in use answers `SlugTaken`.
    pub async fn create_organization(
        &self,
        me: &CurrentSession,
        name: &str,
        slug: Option<&str>,
    ) -> Result<Organization, AccountError> {
        ops::create_organization(&self.config().inner, &me.user_id, name, slug, true).await
    }

    /// Makes an organization owned by user `owner_id`, as the host (whatever
    /// [`Organizations::users_create`](crate::organizations::Organizations::users_create) says).
    pub async fn create_organization_for(
        &self,
        owner_id: &str,
        name: &str,
        slug: Option<&str>,
    ) -> Result<Organization, AccountError> {
        ops::create_organization(&self.config().inner, owner_id, name, slug, false).await
    }

    /// The organizations user `user_id` is a member of, with their roles and permissions.
    pub async fn organizations_of(&self, user_id: &str) -> Result<Vec<Membership>, AccountError> {
        ops::organizations_of(&self.config().inner, user_id).await
    }

    /// User `user_id`'s membership of an organization (`NotFound` when not a member).
    pub async fn membership(
        &self,
        user_id: &str,
        organization_id: &str,
    ) -> Result<Membership, AccountError> {
        ops::membership(&self.config().inner, user_id, organization_id).await
    }

    /// Renames an organization or changes its slug, as member `actor`
    /// (`organization:update`).
    pub async fn update_organization(
        &self,
        actor: &str,
        organization_id: &str,
        name: Option<&str>,
        slug: Option<&str>,
    ) -> Result<Organization, AccountError> {
        ops::update_organization(&self.config().inner, actor, organization_id, name, slug).await
    }

    /// Deletes an organization with everything in it, as `me` (`organization:delete` and
    /// a recent sign-in, [`SensitiveOperation::DeleteOrganization`]).
    ///
    /// [`SensitiveOperation::DeleteOrganization`]: super::SensitiveOperation::DeleteOrganization
    pub async fn delete_organization(
        &self,
        me: &CurrentSession,
        organization_id: &str,
    ) -> Result<(), AccountError> {
        ops::delete_organization(&self.config().inner, me, organization_id).await
    }

    /// The members of an organization, as member `actor` (`member:read`).
    pub async fn members(
        &self,
        actor: &str,
        organization_id: &str,
    ) -> Result<Vec<MemberInfo>, AccountError> {
        ops::members(&self.config().inner, actor, organization_id).await
    }

    /// Replaces a member's roles, as member `actor` (`member:update`; `actor` may grant
    /// both the member's roles and the new ones). The last owner keeps the owner role.
    pub async fn set_member_roles(
        &self,
        actor: &str,
        organization_id: &str,
        user_id: &str,
        roles: &[String],
    ) -> Result<(), AccountError> {
        ops::set_member_roles(&self.config().inner, actor, organization_id, user_id, roles).await
    }

    /// Removes a member, as member `actor` (`member:remove` over a member whose roles
    /// `actor` may grant); `actor == user_id` leaves. The last owner stays.
    pub async fn remove_member(
        &self,
        actor: &str,
        organization_id: &str,
        user_id: &str,
    ) -> Result<(), AccountError> {
        ops::remove_member(&self.config().inner, actor, organization_id, user_id).await
    }

    /// The organization's teams, as member `actor` (`member:read`).
    pub async fn teams(
        &self,
        actor: &str,
        organization_id: &str,
    ) -> Result<Vec<Team>, AccountError> {
        ops::teams(&self.config().inner, actor, organization_id).await
    }

    /// Makes a team, as member `actor` (`team:manage`).
    pub async fn create_team(
        &self,
        actor: &str,
        organization_id: &str,
        name: &str,
    ) -> Result<Team, AccountError> {
        ops::create_team(&self.config().inner, actor, organization_id, name).await
    }

    /// Deletes a team, as member `actor` (`team:manage`).
    pub async fn delete_team(
        &self,
        actor: &str,
        organization_id: &str,
        team_id: &str,
    ) -> Result<(), AccountError> {
        ops::delete_team(&self.config().inner, actor, organization_id, team_id).await
    }

    /// Puts a member in teams, as member `actor` (`team:manage`).
    pub async fn set_member_teams(
        &self,
        actor: &str,
        organization_id: &str,
        user_id: &str,
        teams: &[String],
    ) -> Result<(), AccountError> {
        ops::set_member_teams(&self.config().inner, actor, organization_id, user_id, teams).await
    }

    /// Invites an address, as member `inviter` (`member:invite`, and roles they may grant)
    /// or, with `None`, as the host (invitations to sign up are the host's). The link is
    /// on `origin` (else the configured URL) and is mailed when an email provider sends;
    /// it accepts the invitation for a user signed in with the invited address.
    pub async fn invite(
        &self,
        inviter: Option<&str>,
        spec: &InvitationSpec,
        origin: Option<&str>,
    ) -> Result<SentInvitation, AccountError> {
        let request = ops::InvitationRequest {
            organization_id: spec.organization_id.as_deref(),
            email: &spec.email,
            roles: &spec.roles,
            teams: &spec.teams,
        };
        ops::invite(&self.config().inner, inviter, request, origin).await
    }

    /// The invitations of an organization, as member `actor` (`member:read`), or with
    /// `None` for both, the invitations to sign up (the host's view).
    pub async fn invitations(
        &self,
        actor: Option<&str>,
        organization_id: Option<&str>,
    ) -> Result<Vec<Invitation>, AccountError> {
        ops::invitations(&self.config().inner, actor, organization_id).await
    }

    /// The open invitations to organizations for user `user_id`'s verified address.
    pub async fn invitations_for_user(
        &self,
        user_id: &str,
    ) -> Result<Vec<Invitation>, AccountError> {
        ops::invitations_for_user(&self.config().inner, user_id).await
    }

    /// Revokes a pending invitation, as member `actor` (`member:invite`) or the host.
    pub async fn revoke_invitation(
        &self,
        actor: Option<&str>,
        invitation_id: &str,
    ) -> Result<(), AccountError> {
        ops::revoke_invitation(&self.config().inner, actor, invitation_id).await
    }

    /// Accepts the invitation whose link carried `token`, as the signed-in user `user_id`,
    /// whose address must be the invited one (`WrongAddress`). Used, expired, revoked and
    /// unknown invitations answer `InvalidInvitation`.
    pub async fn accept_invitation(
        &self,
        user_id: &str,
        token: &str,
    ) -> Result<Invitation, AccountError> {
        ops::accept_invitation(
            &self.config().inner,
            user_id,
            ops::InvitationRef::Token(token),
        )
        .await
    }

    /// Accepts invitation `invitation_id` (one of [`Auth::invitations_for_user`]) as user
    /// `user_id`, whose verified address must be the invited one: another address's
    /// invitation answers `InvalidInvitation`, as one that does not exist.
    pub async fn accept_invitation_by_id(
        &self,
        user_id: &str,
        invitation_id: &str,
    ) -> Result<Invitation, AccountError> {
        ops::accept_invitation(
            &self.config().inner,
            user_id,
            ops::InvitationRef::Id(invitation_id),
        )
        .await
    }

    /// The signed-in user's membership of their session's active organization, checked
    /// against the store on every call (`None`: none chosen, or no longer a member).
    pub async fn active_organization(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<Option<Membership>, AccountError> {
        let Ok(source) = self.session_source(uri, headers) else {
            return Ok(None);
        };
        let Some(me) = self.current_session(uri, headers).await else {
            return Ok(None);
        };
        ops::active_membership(&self.config().inner, &me, &source.url, &source.cookies).await
    }

    /// Makes `organization_id` (one of the user's; `None` clears it) the active
    /// organization of the request's session; answers the `Set-Cookie` values the answer
    /// must carry (a new session token with JWT sessions; none with database sessions).
    pub async fn set_active_organization(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        organization_id: Option<&str>,
    ) -> Result<Vec<HeaderValue>, AccountError> {
        let source = self
            .session_source(uri, headers)
            .map_err(|_| AccountError::NotFound)?;
        let me = self
            .current_session(uri, headers)
            .await
            .ok_or(AccountError::NotFound)?;
        let cookies = ops::set_active_organization(
            &self.config().inner,
            &me,
            &source.url,
            &source.cookies,
            organization_id,
        )
        .await?;
        Ok(to_header_values(cookies))
    }

    /// Makes an API key for `me` (a sensitive change, [`SensitiveOperation::CreateApiKey`]):
    /// for an organization, with permissions `me` holds there; or, with `None`, the user's
    /// own key, which signs in as the user and carries no permissions. Its text is in the
    /// answer once.
    ///
    /// [`SensitiveOperation::CreateApiKey`]: super::SensitiveOperation::CreateApiKey
    pub async fn create_api_key(
        &self,
        me: &CurrentSession,
        organization_id: Option<&str>,
        name: &str,
        permissions: &[String],
        lifetime: Option<std::time::Duration>,
    ) -> Result<NewApiKey, AccountError> {
        ops::create_api_key(
            &self.config().inner,
            me,
            organization_id,
            name,
            permissions,
            lifetime,
        )
        .await
    }

    /// The user's own keys, or an organization's (all of them with `api_key:manage`, else
    /// those the user made).
    pub async fn api_keys(
        &self,
        user_id: &str,
        organization_id: Option<&str>,
    ) -> Result<Vec<ApiKey>, AccountError> {
        ops::api_keys(&self.config().inner, user_id, organization_id).await
    }

    /// Revokes a key the user made, or (with `api_key:manage`) one of their
    /// organization's.
    pub async fn revoke_api_key(&self, user_id: &str, key_id: &str) -> Result<(), AccountError> {
        ops::revoke_api_key(&self.config().inner, user_id, key_id).await
    }
}
