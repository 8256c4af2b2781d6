//! The organizations and API-key capabilities ([`OrganizationStore`], [`ApiKeyStore`]).
//!
//! Records are JSON as the types serialise them; members and teams live in a hash per
//! organization. Every change that has to be atomic (a slug or team name claimed, the
//! last owner kept, an invitation accepted once, the organization deleted with what
//! belongs to it) runs as one of the scripts in [`crate::scripts`]; the JSON they write is
//! made here, and a script that finds a record changed since it was read makes the call
//! start again, as [`RedisAdapter::update_record`] does.

use async_trait::async_trait;
use authcore::adapter::{
    AdapterError, ApiKey, ApiKeyOwner, ApiKeyStore, Invitation, InvitationAcceptance,
    InvitationStatus, Member, MemberChange, Organization, OrganizationStore, Team,
};
use redis::AsyncCommands;
use serde::de::DeserializeOwned;
use serde_json::Value;
use time::OffsetDateTime;

use super::{
    MAX_UPDATE_ATTEMPTS, contention, decode, decode_object, encode, from_object, merge_fields,
    to_object,
};
use crate::RedisAdapter;
use crate::error::{data_err, redis_err};
use crate::keys::{is_record_id, is_user_id};
use crate::scripts;

/// `list` sorted by creation time, then by id, as the traits list things.
fn by_creation<T>(mut list: Vec<T>, key: impl Fn(&T) -> (OffsetDateTime, String)) -> Vec<T> {
    list.sort_by_cached_key(key);
    list
}

/// The flag the member scripts take: '1' when `roles` hold the owner role, else '0'.
fn owner_flag(roles: &[String]) -> &'static str {
    if roles.iter().any(|r| r == authcore::adapter::OWNER_ROLE) {
        "1"
    } else {
        "0"
    }
}

fn no_user(op: &'static str) -> AdapterError {
    data_err(op, "no user with this id")
}

fn no_organization(op: &'static str) -> AdapterError {
    data_err(op, "no organization with this id")
}

/// What a script writing a new record answered: 1 written, 0 an id or a unique name in
/// use (`in_use` says which), -1 no such user, -2 no such organization.
fn written(op: &'static str, outcome: i64, in_use: &str) -> Result<(), AdapterError> {
    match outcome {
        1 => Ok(()),
        0 => Err(AdapterError::Conflict(in_use.into())),
        -1 => Err(no_user(op)),
        _ => Err(no_organization(op)),
    }
}

impl RedisAdapter {
    /// The JSON record at `key`, decoded, if it exists and `is_it` accepts it (it guards
    /// against a record stored under another name).
    async fn load_record<T: DeserializeOwned>(
        &self,
        op: &'static str,
        key: &str,
        is_it: impl FnOnce(&T) -> bool,
    ) -> Result<Option<T>, AdapterError> {
        let Some(raw) = self.get_raw(op, key).await? else {
            return Ok(None);
        };
        let record: T = decode(op, &raw)?;
        Ok(is_it(&record).then_some(record))
    }

    async fn load_organization(
        &self,
        op: &'static str,
        id: &str,
    ) -> Result<Option<Organization>, AdapterError> {
        if !is_record_id(id) {
            return Ok(None);
        }
        let key = self.keys.organization(id);
        self.load_record(op, &key, |o: &Organization| o.id == id)
            .await
    }

    async fn load_invitation(
        &self,
        op: &'static str,
        id: &str,
    ) -> Result<Option<Invitation>, AdapterError> {
        if !is_record_id(id) {
            return Ok(None);
        }
        let key = self.keys.invitation(id);
        self.load_record(op, &key, |i: &Invitation| i.id == id)
            .await
    }

    /// The values of the hash `key`, decoded, that `keep` accepts.
    async fn load_hash_values<T: DeserializeOwned>(
        &self,
        op: &'static str,
        key: &str,
        keep: impl Fn(&T) -> bool,
    ) -> Result<Vec<T>, AdapterError> {
        let mut conn = self.conn.clone();
        let raws: Vec<String> = conn.hvals(key).await.map_err(redis_err(op))?;
        let mut list = Vec::with_capacity(raws.len());
        for raw in raws {
            let value: T = decode(op, &raw)?;
            if keep(&value) {
                list.push(value);
            }
        }
        Ok(list)
    }

    /// The stored JSON of a member, if the user is one.
    async fn member_raw(
        &self,
        op: &'static str,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<String>, AdapterError> {
        let mut conn = self.conn.clone();
        conn.hget(self.keys.members(organization_id), user_id)
            .await
            .map_err(redis_err(op))
    }

    /// Replaces the member's `field` (`roles` or `teams`) with `values` by
    /// [`scripts::SET_MEMBER`]; `owner` is the flag it takes ('' when the roles stay).
    async fn set_member_field(
        &self,
        op: &'static str,
        organization_id: &str,
        user_id: &str,
        field: &str,
        values: &[String],
        owner: &str,
    ) -> Result<MemberChange, AdapterError> {
        if !is_record_id(organization_id) {
            return Ok(MemberChange::NotMember);
        }
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(raw) = self.member_raw(op, organization_id, user_id).await? else {
                return Ok(MemberChange::NotMember);
            };
            let mut stored = decode_object(op, &raw)?;
            stored.insert(field.into(), Value::from(values.to_vec()));
            let json = encode(op, &stored)?;
            let mut conn = self.conn.clone();
            let outcome: i64 = scripts::SET_MEMBER
                .key(self.keys.members(organization_id))
                .key(self.keys.owners(organization_id))
                .arg(user_id)
                .arg(&raw)
                .arg(json)
                .arg(owner)
                .invoke_async(&mut conn)
                .await
                .map_err(redis_err(op))?;
            match outcome {
                1 => return Ok(MemberChange::Done),
                0 => return Ok(MemberChange::NotMember),
                -2 => return Ok(MemberChange::LastOwner),
                _ => continue,
            }
        }
        Err(contention(op))
    }
}

#[async_trait]
impl OrganizationStore for RedisAdapter {
    async fn create_organization(
        &self,
        organization: &Organization,
        owner: &Member,
    ) -> Result<(), AdapterError> {
        const OP: &str = "createOrganization";
        if !is_record_id(&organization.id) {
            return Err(data_err(OP, "not an organization id of this adapter"));
        }
        if !is_user_id(&owner.user_id) {
            return Err(no_user(OP));
        }
        let id = &organization.id;
        let member = Member {
            organization_id: id.clone(),
            ..owner.clone()
        };
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::CREATE_ORGANIZATION
            .key(self.keys.organization(id))
            .key(self.keys.organization_slug(&organization.slug))
            .key(self.keys.user(&member.user_id))
            .key(self.keys.members(id))
            .key(self.keys.owners(id))
            .key(self.keys.organizations_by_user(&member.user_id))
            .arg(encode(OP, organization)?)
            .arg(id)
            .arg(&member.user_id)
            .arg(encode(OP, &member)?)
            .arg(owner_flag(&member.roles))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        written(OP, outcome, "an organization has this slug or id")
    }

    async fn get_organization(&self, id: &str) -> Result<Option<Organization>, AdapterError> {
        self.load_organization("getOrganization", id).await
    }

    async fn get_organization_by_slug(
        &self,
        slug: &str,
    ) -> Result<Option<Organization>, AdapterError> {
        const OP: &str = "getOrganizationBySlug";
        let Some(id) = self.get_raw(OP, &self.keys.organization_slug(slug)).await? else {
            return Ok(None);
        };
        let organization = self.load_organization(OP, &id).await?;
        // An index left behind must not hand out another organization.
        Ok(organization.filter(|o| o.slug == slug))
    }

    async fn update_organization(&self, organization: &Organization) -> Result<bool, AdapterError> {
        const OP: &str = "updateOrganization";
        let id = &organization.id;
        if !is_record_id(id) {
            return Ok(false);
        }
        let key = self.keys.organization(id);
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(raw) = self.get_raw(OP, &key).await? else {
                return Ok(false);
            };
            let mut stored = decode_object(OP, &raw)?;
            let current: Organization = from_object(OP, &stored)?;
            if current.id != *id {
                return Ok(false);
            }
            stored.insert("name".into(), Value::from(organization.name.as_str()));
            stored.insert("slug".into(), Value::from(organization.slug.as_str()));
            let mut conn = self.conn.clone();
            let outcome: i64 = scripts::UPDATE_UNIQUE
                .key(&key)
                .arg(&raw)
                .arg(encode(OP, &stored)?)
                .arg(id)
                .arg(self.keys.organization_slug(&current.slug))
                .arg(self.keys.organization_slug(&organization.slug))
                .invoke_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            match outcome {
                1 => return Ok(true),
                -1 => {
                    return Err(AdapterError::Conflict(
                        "an organization has this slug".into(),
                    ));
                }
                _ => continue,
            }
        }
        Err(contention(OP))
    }

    async fn delete_organization(&self, id: &str) -> Result<bool, AdapterError> {
        const OP: &str = "deleteOrganization";
        if !is_record_id(id) {
            return Ok(false);
        }
        let mut conn = self.conn.clone();
        let deleted: i64 = scripts::DELETE_ORGANIZATION
            .key(self.keys.organization(id))
            .key(self.keys.members(id))
            .key(self.keys.owners(id))
            .key(self.keys.teams(id))
            .key(self.keys.team_names(id))
            .key(self.keys.invitations_of(Some(id)))
            .key(self.keys.api_keys_by_organization(id))
            .arg(id)
            .arg(self.keys.organization_slug(""))
            .arg(self.keys.organizations_by_user(""))
            .arg(self.keys.active_organizations(""))
            .arg(self.keys.invitation_token(""))
            .arg(self.keys.invitations_by_email(""))
            .arg(self.keys.api_keys_by_user(""))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(deleted == 1)
    }

    async fn list_organizations_of_user(
        &self,
        user_id: &str,
    ) -> Result<Vec<(Organization, Member)>, AdapterError> {
        const OP: &str = "listOrganizationsOfUser";
        if !is_user_id(user_id) {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        let ids: Vec<String> = conn
            .smembers(self.keys.organizations_by_user(user_id))
            .await
            .map_err(redis_err(OP))?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // Each organization with the membership, read in one transaction.
        let mut pipe = redis::pipe();
        pipe.atomic();
        for id in &ids {
            pipe.get(self.keys.organization(id))
                .hget(self.keys.members(id), user_id);
        }
        let raws: Vec<Option<String>> = pipe.query_async(&mut conn).await.map_err(redis_err(OP))?;
        let mut list = Vec::with_capacity(ids.len());
        for (id, pair) in ids.iter().zip(raws.chunks(2)) {
            let [Some(organization), Some(member)] = pair else {
                continue;
            };
            let organization: Organization = decode(OP, organization)?;
            let member: Member = decode(OP, member)?;
            if organization.id == *id && member.user_id == user_id && member.organization_id == *id
            {
                list.push((organization, member));
            }
        }
        Ok(by_creation(list, |(o, _)| (o.created_at, o.id.clone())))
    }

    async fn get_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<Member>, AdapterError> {
        const OP: &str = "getMember";
        if !is_record_id(organization_id) {
            return Ok(None);
        }
        let Some(raw) = self.member_raw(OP, organization_id, user_id).await? else {
            return Ok(None);
        };
        let member: Member = decode(OP, &raw)?;
        Ok(
            (member.organization_id == organization_id && member.user_id == user_id)
                .then_some(member),
        )
    }

    async fn list_members(&self, organization_id: &str) -> Result<Vec<Member>, AdapterError> {
        const OP: &str = "listMembers";
        if !is_record_id(organization_id) {
            return Ok(Vec::new());
        }
        let key = self.keys.members(organization_id);
        let list = self
            .load_hash_values(OP, &key, |m: &Member| m.organization_id == organization_id)
            .await?;
        Ok(by_creation(list, |m| (m.created_at, m.user_id.clone())))
    }

    async fn add_member(&self, member: &Member) -> Result<bool, AdapterError> {
        const OP: &str = "addMember";
        let (org_id, user_id) = (&member.organization_id, &member.user_id);
        if !is_user_id(user_id) {
            return Err(no_user(OP));
        }
        if !is_record_id(org_id) {
            return Err(no_organization(OP));
        }
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::ADD_MEMBER
            .key(self.keys.user(user_id))
            .key(self.keys.organization(org_id))
            .key(self.keys.members(org_id))
            .key(self.keys.owners(org_id))
            .key(self.keys.organizations_by_user(user_id))
            .arg(org_id)
            .arg(user_id)
            .arg(encode(OP, member)?)
            .arg(owner_flag(&member.roles))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        if outcome == 0 {
            return Ok(false);
        }
        written(OP, outcome, "").map(|()| true)
    }

    async fn set_member_roles(
        &self,
        organization_id: &str,
        user_id: &str,
        roles: &[String],
    ) -> Result<MemberChange, AdapterError> {
        let owner = owner_flag(roles);
        self.set_member_field(
            "setMemberRoles",
            organization_id,
            user_id,
            "roles",
            roles,
            owner,
        )
        .await
    }

    async fn set_member_teams(
        &self,
        organization_id: &str,
        user_id: &str,
        teams: &[String],
    ) -> Result<MemberChange, AdapterError> {
        self.set_member_field(
            "setMemberTeams",
            organization_id,
            user_id,
            "teams",
            teams,
            "",
        )
        .await
    }

    async fn remove_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<MemberChange, AdapterError> {
        const OP: &str = "removeMember";
        if !is_record_id(organization_id) || !is_user_id(user_id) {
            return Ok(MemberChange::NotMember);
        }
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::REMOVE_MEMBER
            .key(self.keys.members(organization_id))
            .key(self.keys.owners(organization_id))
            .key(self.keys.organizations_by_user(user_id))
            .key(self.keys.active_organizations(user_id))
            .arg(user_id)
            .arg(organization_id)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(match outcome {
            1 => MemberChange::Done,
            0 => MemberChange::NotMember,
            _ => MemberChange::LastOwner,
        })
    }

    async fn create_team(&self, team: &Team) -> Result<(), AdapterError> {
        const OP: &str = "createTeam";
        let org_id = &team.organization_id;
        if !is_record_id(org_id) {
            return Err(no_organization(OP));
        }
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::CREATE_TEAM
            .key(self.keys.organization(org_id))
            .key(self.keys.teams(org_id))
            .key(self.keys.team_names(org_id))
            .arg(&team.id)
            .arg(&team.name)
            .arg(encode(OP, team)?)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        written(
            OP,
            outcome,
            "the organization has a team with this name or id",
        )
    }

    async fn list_teams(&self, organization_id: &str) -> Result<Vec<Team>, AdapterError> {
        const OP: &str = "listTeams";
        if !is_record_id(organization_id) {
            return Ok(Vec::new());
        }
        let key = self.keys.teams(organization_id);
        let list = self
            .load_hash_values(OP, &key, |t: &Team| t.organization_id == organization_id)
            .await?;
        Ok(by_creation(list, |t| (t.created_at, t.id.clone())))
    }

    async fn delete_team(
        &self,
        organization_id: &str,
        team_id: &str,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "deleteTeam";
        if !is_record_id(organization_id) {
            return Ok(false);
        }
        let teams = self.keys.teams(organization_id);
        let members = self.keys.members(organization_id);
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let mut conn = self.conn.clone();
            let Some(raw): Option<String> =
                conn.hget(&teams, team_id).await.map_err(redis_err(OP))?
            else {
                return Ok(false);
            };
            let team: Team = decode(OP, &raw)?;
            // The members in the team, each with the JSON read and the JSON without it.
            let all: Vec<(String, String)> = conn.hgetall(&members).await.map_err(redis_err(OP))?;
            let mut changes = Vec::new();
            for (user_id, raw) in all {
                let mut stored = decode_object(OP, &raw)?;
                let member: Member = from_object(OP, &stored)?;
                if member.teams.iter().any(|t| t == team_id) {
                    let teams: Vec<String> =
                        member.teams.into_iter().filter(|t| t != team_id).collect();
                    stored.insert("teams".into(), Value::from(teams));
                    let json = encode(OP, &stored)?;
                    changes.push((user_id, raw, json));
                }
            }
            let mut invocation = scripts::DELETE_TEAM.key(&teams);
            invocation
                .key(self.keys.team_names(organization_id))
                .key(&members)
                .arg(team_id)
                .arg(&team.name);
            for (user_id, read, json) in &changes {
                invocation.arg(user_id).arg(read).arg(json);
            }
            let outcome: i64 = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            match outcome {
                1 => return Ok(true),
                0 => return Ok(false),
                _ => continue,
            }
        }
        Err(contention(OP))
    }

    async fn create_invitation(&self, invitation: &Invitation) -> Result<(), AdapterError> {
        const OP: &str = "createInvitation";
        if !is_record_id(&invitation.id) {
            return Err(data_err(OP, "not an invitation id of this adapter"));
        }
        let organization = match invitation.organization_id.as_deref() {
            Some(id) if !is_record_id(id) => return Err(no_organization(OP)),
            Some(id) => self.keys.organization(id),
            None => String::new(),
        };
        let by_email = if invitation.status == InvitationStatus::Pending {
            self.keys.invitations_by_email(&invitation.email)
        } else {
            String::new()
        };
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::CREATE_INVITATION
            .key(self.keys.invitation(&invitation.id))
            .key(self.keys.invitation_token(&invitation.token_hash))
            .key(
                self.keys
                    .invitations_of(invitation.organization_id.as_deref()),
            )
            .arg(encode(OP, invitation)?)
            .arg(&invitation.id)
            .arg(organization)
            .arg(by_email)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        written(OP, outcome, "an invitation has this id or token")
    }

    async fn get_invitation(&self, id: &str) -> Result<Option<Invitation>, AdapterError> {
        self.load_invitation("getInvitation", id).await
    }

    async fn get_invitation_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<Invitation>, AdapterError> {
        const OP: &str = "getInvitationByToken";
        let key = self.keys.invitation_token(token_hash);
        let Some(id) = self.get_raw(OP, &key).await? else {
            return Ok(None);
        };
        let invitation = self.load_invitation(OP, &id).await?;
        Ok(invitation.filter(|i| i.token_hash == token_hash))
    }

    async fn list_invitations(
        &self,
        organization_id: Option<&str>,
    ) -> Result<Vec<Invitation>, AdapterError> {
        const OP: &str = "listInvitations";
        if organization_id.is_some_and(|id| !is_record_id(id)) {
            return Ok(Vec::new());
        }
        let index = self.keys.invitations_of(organization_id);
        let mut list: Vec<Invitation> = self.load_indexed(OP, &index).await?;
        list.retain(|i| i.organization_id.as_deref() == organization_id);
        Ok(by_creation(list, |i| (i.created_at, i.id.clone())))
    }

    async fn list_invitations_for_email(
        &self,
        email: &str,
    ) -> Result<Vec<Invitation>, AdapterError> {
        const OP: &str = "listInvitationsForEmail";
        let index = self.keys.invitations_by_email(email);
        let mut list: Vec<Invitation> = self.load_indexed(OP, &index).await?;
        list.retain(|i| i.email == email && i.status == InvitationStatus::Pending);
        Ok(by_creation(list, |i| (i.created_at, i.id.clone())))
    }

    async fn accept_invitation(
        &self,
        id: &str,
        user_id: &str,
        at: OffsetDateTime,
    ) -> Result<InvitationAcceptance, AdapterError> {
        const OP: &str = "acceptInvitation";
        if !is_record_id(id) {
            return Ok(InvitationAcceptance::NotFound);
        }
        let key = self.keys.invitation(id);
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(raw) = self.get_raw(OP, &key).await? else {
                return Ok(InvitationAcceptance::NotFound);
            };
            let mut stored = decode_object(OP, &raw)?;
            let invitation: Invitation = from_object(OP, &stored)?;
            if invitation.id != id {
                return Ok(InvitationAcceptance::NotFound);
            }
            if invitation.status != InvitationStatus::Pending {
                return Ok(InvitationAcceptance::Closed);
            }
            if at >= invitation.expires {
                return Ok(InvitationAcceptance::Expired);
            }
            if !is_user_id(user_id) {
                return Err(no_user(OP));
            }
            let accepted = Invitation {
                status: InvitationStatus::Accepted {
                    user_id: user_id.to_owned(),
                    at,
                },
                ..invitation
            };
            merge_fields(&mut stored, to_object(OP, &accepted)?, &["userId", "at"]);
            let mut invocation = scripts::ACCEPT_INVITATION.key(&key);
            invocation
                .key(self.keys.user(user_id))
                .arg(&raw)
                .arg(encode(OP, &stored)?)
                .arg(self.keys.invitations_by_email(&accepted.email))
                .arg(user_id);
            if let Some(org_id) = &accepted.organization_id {
                if !is_record_id(org_id) {
                    return Err(no_organization(OP));
                }
                let member = Member {
                    organization_id: org_id.clone(),
                    user_id: user_id.to_owned(),
                    roles: accepted.roles.clone(),
                    teams: accepted.teams.clone(),
                    created_at: at,
                };
                invocation
                    .arg(org_id)
                    .arg(self.keys.organization(org_id))
                    .arg(self.keys.members(org_id))
                    .arg(self.keys.owners(org_id))
                    .arg(self.keys.organizations_by_user(user_id))
                    .arg(encode(OP, &member)?)
                    .arg(owner_flag(&member.roles));
            }
            let mut conn = self.conn.clone();
            let outcome: i64 = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            let already_member = match outcome {
                1 => false,
                2 => true,
                -1 => return Err(no_user(OP)),
                -2 => return Err(no_organization(OP)),
                _ => continue,
            };
            return Ok(InvitationAcceptance::Accepted {
                invitation: Box::new(accepted),
                already_member,
            });
        }
        Err(contention(OP))
    }

    async fn revoke_invitation(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        const OP: &str = "revokeInvitation";
        if !is_record_id(id) {
            return Ok(false);
        }
        let key = self.keys.invitation(id);
        let revoked = self
            .update_record(OP, &key, |stored| {
                let invitation: Invitation = from_object(OP, stored)?;
                if invitation.id != id || invitation.status != InvitationStatus::Pending {
                    return Ok(None);
                }
                let revoked = Invitation {
                    status: InvitationStatus::Revoked { at },
                    ..invitation
                };
                merge_fields(stored, to_object(OP, &revoked)?, &["userId", "at"]);
                Ok(Some((revoked.email, None)))
            })
            .await?;
        let Some(email) = revoked else {
            return Ok(false);
        };
        // The address's index lists pending invitations; readers filter by status too, so
        // this may come after the revocation.
        let mut conn = self.conn.clone();
        let _: i64 = conn
            .srem(self.keys.invitations_by_email(&email), &key)
            .await
            .map_err(redis_err(OP))?;
        Ok(true)
    }

    async fn set_session_organization(
        &self,
        session_token: &str,
        organization_id: Option<&str>,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "setSessionOrganization";
        if crate::keys::names_index(session_token) {
            return Ok(false);
        }
        let mut conn = self.conn.clone();
        let done: i64 = scripts::SET_SESSION_ORGANIZATION
            .key(self.keys.session(session_token))
            .arg(session_token)
            .arg(self.keys.active_organizations(""))
            .arg(organization_id.unwrap_or_default())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(done == 1)
    }

    async fn get_session_organization(
        &self,
        session_token: &str,
    ) -> Result<Option<String>, AdapterError> {
        const OP: &str = "getSessionOrganization";
        if crate::keys::names_index(session_token) {
            return Ok(None);
        }
        let mut conn = self.conn.clone();
        scripts::GET_SESSION_ORGANIZATION
            .key(self.keys.session(session_token))
            .arg(session_token)
            .arg(self.keys.active_organizations(""))
            .arg(self.keys.organization(""))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))
    }
}

#[async_trait]
impl ApiKeyStore for RedisAdapter {
    async fn create_api_key(&self, key: &ApiKey) -> Result<(), AdapterError> {
        const OP: &str = "createApiKey";
        if !is_record_id(&key.id) {
            return Err(data_err(OP, "not an API key id of this adapter"));
        }
        if !is_user_id(&key.user_id) {
            return Err(no_user(OP));
        }
        let (organization, by_organization) = match key.organization_id.as_deref() {
            Some(id) if !is_record_id(id) => return Err(no_organization(OP)),
            Some(id) => (
                self.keys.organization(id),
                self.keys.api_keys_by_organization(id),
            ),
            None => (String::new(), String::new()),
        };
        let mut conn = self.conn.clone();
        let outcome: i64 = scripts::CREATE_API_KEY
            .key(self.keys.api_key(&key.id))
            .key(self.keys.user(&key.user_id))
            .key(self.keys.api_keys_by_user(&key.user_id))
            .arg(encode(OP, key)?)
            .arg(organization)
            .arg(by_organization)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        written(OP, outcome, "an API key has this id")
    }

    async fn get_api_key(&self, id: &str) -> Result<Option<ApiKey>, AdapterError> {
        const OP: &str = "getApiKey";
        if !is_record_id(id) {
            return Ok(None);
        }
        self.load_record(OP, &self.keys.api_key(id), |k: &ApiKey| k.id == id)
            .await
    }

    async fn list_api_keys(&self, owner: ApiKeyOwner<'_>) -> Result<Vec<ApiKey>, AdapterError> {
        const OP: &str = "listApiKeys";
        let index = match owner {
            ApiKeyOwner::User(id) if is_user_id(id) => self.keys.api_keys_by_user(id),
            ApiKeyOwner::Organization(id) if is_record_id(id) => {
                self.keys.api_keys_by_organization(id)
            }
            _ => return Ok(Vec::new()),
        };
        let mut list: Vec<ApiKey> = self.load_indexed(OP, &index).await?;
        list.retain(|k| match owner {
            ApiKeyOwner::User(user) => k.user_id == user && k.organization_id.is_none(),
            ApiKeyOwner::Organization(org) => k.organization_id.as_deref() == Some(org),
        });
        Ok(by_creation(list, |k| (k.created_at, k.id.clone())))
    }

    async fn revoke_api_key(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        self.change_api_key("revokeApiKey", id, |key| {
            key.revoked_at.is_none().then_some(ApiKey {
                revoked_at: Some(at),
                ..key
            })
        })
        .await
    }

    async fn record_api_key_use(&self, id: &str, at: OffsetDateTime) -> Result<(), AdapterError> {
        // A compare-and-set: a use recorded meanwhile is read again, so the time only
        // moves forward.
        self.change_api_key("recordApiKeyUse", id, |key| {
            key.last_used_at.is_none_or(|t| t < at).then_some(ApiKey {
                last_used_at: Some(at),
                ..key
            })
        })
        .await
        .map(|_| ())
    }
}

impl RedisAdapter {
    /// Read-modify-write of API key `id` ([`Self::update_record`]): `change` answers the
    /// key as it becomes, or `None` to leave it. Whether it changed.
    async fn change_api_key(
        &self,
        op: &'static str,
        id: &str,
        change: impl Fn(ApiKey) -> Option<ApiKey>,
    ) -> Result<bool, AdapterError> {
        if !is_record_id(id) {
            return Ok(false);
        }
        let key = self.keys.api_key(id);
        self.update_record(op, &key, |stored| {
            let current: ApiKey = from_object(op, stored)?;
            if current.id != id {
                return Ok(None);
            }
            let Some(changed) = change(current) else {
                return Ok(None);
            };
            merge_fields(stored, to_object(op, &changed)?, &[]);
            Ok(Some(((), None)))
        })
        .await
        .map(|done| done.is_some())
    }
}
