//! Organizations, their members, teams and invitations, each database session's active
//! organization, and API keys.
//!
//! Roles, teams and permissions are stored as one space-separated column each (their names
//! never contain spaces). The changes that could leave an organization without an owner
//! (`set_member_roles`, `remove_member`) first lock the organization's row (on SQLite, the
//! database), so concurrent ones are judged one after another; an invitation is accepted in
//! a transaction that holds its row. Lists are sorted here, by creation time then id,
//! bytewise whatever the database's collation.

use authcore::adapter::{
    AdapterError, ApiKey, ApiKeyOwner, Invitation, InvitationAcceptance, InvitationStatus, Member,
    MemberChange, OWNER_ROLE, Organization, Team,
};
use time::OffsetDateTime;

use super::{Reader, one, replace_user_rows, required_user_id};
use crate::db::{Arg, Col, Pool, Val};
use crate::error::{data_error, map_sqlx};

/// The columns of an organization row: id, slug, name, created.
const ORGANIZATION: [Col; 4] = [Col::Text, Col::Text, Col::Text, Col::Time];
/// The columns of a member row: organization, user, roles, teams, created.
const MEMBER: [Col; 5] = [Col::Text, Col::UserId, Col::Text, Col::Text, Col::Time];
/// The columns of a team row: id, organization, name, created.
const TEAM: [Col; 4] = [Col::Text, Col::Text, Col::Text, Col::Time];
/// The columns of an invitation row: id, organization, email, roles, teams, inviter, token
/// hash, created, expires, status, accepted by, closed.
const INVITATION: [Col; 12] = [
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::UserId,
    Col::Text,
    Col::Time,
    Col::Time,
    Col::Text,
    Col::UserId,
    Col::Time,
];
/// The columns of an API key row: id, hash, name, user, organization, permissions,
/// created, expires, last used, revoked.
const API_KEY: [Col; 10] = [
    Col::Text,
    Col::Text,
    Col::Text,
    Col::UserId,
    Col::Text,
    Col::Text,
    Col::Time,
    Col::Time,
    Col::Time,
    Col::Time,
];

/// The stored `status` of an invitation.
const PENDING: &str = "pending";
const ACCEPTED: &str = "accepted";
const REVOKED: &str = "revoked";

impl Reader {
    fn organization(&mut self) -> Result<Organization, AdapterError> {
        Ok(Organization {
            id: self.text()?,
            slug: self.text()?,
            name: self.text()?,
            created_at: self.time()?,
        })
    }

    fn member(&mut self) -> Result<Member, AdapterError> {
        Ok(Member {
            organization_id: self.text()?,
            user_id: self.text()?,
            roles: self.list()?,
            teams: self.list()?,
            created_at: self.time()?,
        })
    }

    fn team(&mut self) -> Result<Team, AdapterError> {
        Ok(Team {
            id: self.text()?,
            organization_id: self.text()?,
            name: self.text()?,
            created_at: self.time()?,
        })
    }

    fn invitation(&mut self) -> Result<Invitation, AdapterError> {
        let id = self.text()?;
        let organization_id = self.opt_text()?;
        let email = self.text()?;
        let roles = self.list()?;
        let teams = self.list()?;
        let inviter_id = self.opt_text()?;
        let token_hash = self.text()?;
        let created_at = self.time()?;
        let expires = self.time()?;
        let status = match (self.text()?.as_str(), self.opt_text()?, self.opt_time()?) {
            (PENDING, _, _) => InvitationStatus::Pending,
            (ACCEPTED, Some(user_id), Some(at)) => InvitationStatus::Accepted { user_id, at },
            (REVOKED, _, Some(at)) => InvitationStatus::Revoked { at },
            _ => return Err(self.mismatch()),
        };
        Ok(Invitation {
            id,
            organization_id,
            email,
            roles,
            teams,
            inviter_id,
            token_hash,
            created_at,
            expires,
            status,
        })
    }

    fn api_key(&mut self) -> Result<ApiKey, AdapterError> {
        Ok(ApiKey {
            id: self.text()?,
            hash: self.text()?,
            name: self.text()?,
            user_id: self.text()?,
            organization_id: self.opt_text()?,
            permissions: self.list()?,
            created_at: self.time()?,
            expires: self.opt_time()?,
            last_used_at: self.opt_time()?,
            revoked_at: self.opt_time()?,
        })
    }
}

/// A list as stored: space-separated.
fn joined(list: &[String]) -> Arg {
    Arg::text(list.join(" "))
}

/// A user id that may be absent, where one that is given must name a row.
fn optional_user_id(pool: &Pool, op: &'static str, id: Option<&str>) -> Result<Arg, AdapterError> {
    match id {
        Some(id) => required_user_id(pool, op, Some(id)),
        None => Ok(Arg::OptUserId(None)),
    }
}

/// The rows of `sql` with `args`, read as `cols` by `read` and sorted by `key` (creation
/// time, then id).
async fn fetch_sorted<T>(
    pool: &Pool,
    op: &'static str,
    (sql, args, cols): (&'static str, Vec<Arg>, &[Col]),
    read: impl Fn(&mut Reader) -> Result<T, AdapterError>,
    key: impl Fn(&T) -> (OffsetDateTime, String),
) -> Result<Vec<T>, AdapterError> {
    let rows = pool
        .fetch_all(sql, args, cols)
        .await
        .map_err(map_sqlx(op))?;
    let mut list = rows
        .into_iter()
        .map(|row| read(&mut Reader::new(op, row)))
        .collect::<Result<Vec<_>, _>>()?;
    list.sort_by_cached_key(key);
    Ok(list)
}

/// The row of `sql` with `args`, read as `cols` by `read`.
async fn fetch_one<T>(
    pool: &Pool,
    op: &'static str,
    (sql, args, cols): (&'static str, Vec<Arg>, &[Col]),
    read: impl FnOnce(&mut Reader) -> Result<T, AdapterError>,
) -> Result<Option<T>, AdapterError> {
    let row = pool
        .fetch_optional(sql, args, cols)
        .await
        .map_err(map_sqlx(op))?;
    one(op, row, read)
}

/// Runs `sql` with `args`; whether it changed (on MySQL: matched) a row.
async fn changed(
    pool: &Pool,
    op: &'static str,
    sql: &'static str,
    args: Vec<Arg>,
) -> Result<bool, AdapterError> {
    let rows = pool.execute(sql, args).await.map_err(map_sqlx(op))?;
    Ok(rows > 0)
}

// ---------------------------------------------------------------------------------------
// Organizations

/// The values of `insert_member` for `member` of `organization_id`.
fn member_args(organization_id: &str, user: Arg, member: &Member) -> Vec<Arg> {
    vec![
        Arg::text(organization_id),
        user,
        joined(&member.roles),
        joined(&member.teams),
        Arg::Time(Some(member.created_at)),
    ]
}

pub(crate) async fn create_organization(
    pool: &Pool,
    organization: &Organization,
    owner: &Member,
) -> Result<(), AdapterError> {
    const OP: &str = "create_organization";
    let user = required_user_id(pool, OP, Some(&owner.user_id))?;
    let sql = pool.sql();
    // With its first member, in the transaction that holds the owner's row: a slug in use
    // makes nothing.
    let writes = vec![
        (
            sql.insert_organization.as_str(),
            vec![
                Arg::text(organization.id.as_str()),
                Arg::text(organization.slug.as_str()),
                Arg::text(organization.name.as_str()),
                Arg::Time(Some(organization.created_at)),
            ],
        ),
        (
            sql.insert_member.as_str(),
            member_args(&organization.id, user.clone(), owner),
        ),
    ];
    replace_user_rows(pool, OP, user, writes).await
}

pub(crate) async fn get_organization(
    pool: &Pool,
    id: &str,
) -> Result<Option<Organization>, AdapterError> {
    let query = (
        pool.sql().get_organization.as_str(),
        vec![Arg::text(id)],
        &ORGANIZATION[..],
    );
    fetch_one(pool, "get_organization", query, Reader::organization).await
}

pub(crate) async fn get_organization_by_slug(
    pool: &Pool,
    slug: &str,
) -> Result<Option<Organization>, AdapterError> {
    let query = (
        pool.sql().get_organization_by_slug.as_str(),
        vec![Arg::text(slug)],
        &ORGANIZATION[..],
    );
    fetch_one(
        pool,
        "get_organization_by_slug",
        query,
        Reader::organization,
    )
    .await
}

pub(crate) async fn update_organization(
    pool: &Pool,
    organization: &Organization,
) -> Result<bool, AdapterError> {
    let args = vec![
        Arg::text(organization.slug.as_str()),
        Arg::text(organization.name.as_str()),
        Arg::text(organization.id.as_str()),
    ];
    let sql = &pool.sql().update_organization;
    changed(pool, "update_organization", sql, args).await
}

pub(crate) async fn delete_organization(pool: &Pool, id: &str) -> Result<bool, AdapterError> {
    const OP: &str = "delete_organization";
    let sql = pool.sql();
    let key = || vec![Arg::text(id)];
    // Explicit deletes, not only the cascades, as `delete_user` does; the sessions' choice
    // of it is cleared. Under the organization's lock: no member change runs meanwhile.
    let step = pool.locked_update(
        (&sql.lock_organization, key()),
        (&sql.get_organization, key(), &ORGANIZATION),
        |row| match row {
            None => (Vec::new(), false),
            Some(_) => {
                let writes = [
                    &sql.clear_sessions_organization,
                    &sql.delete_organization_api_keys,
                    &sql.delete_organization_invitations,
                    &sql.delete_organization_teams,
                    &sql.delete_organization_members,
                    &sql.delete_organization,
                ]
                .map(|s| (s.as_str(), key()));
                (writes.into(), true)
            }
        },
    );
    step.await.map_err(map_sqlx(OP))
}

pub(crate) async fn list_organizations_of_user(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<(Organization, Member)>, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let cols = [&ORGANIZATION[..], &MEMBER[..]].concat();
    let query = (
        pool.sql().list_organizations_of_user.as_str(),
        vec![Arg::UserId(user_id.to_owned())],
        &cols[..],
    );
    fetch_sorted(
        pool,
        "list_organizations_of_user",
        query,
        |r| Ok((r.organization()?, r.member()?)),
        |(o, _)| (o.created_at, o.id.clone()),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Members

pub(crate) async fn get_member(
    pool: &Pool,
    organization_id: &str,
    user_id: &str,
) -> Result<Option<Member>, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let query = (
        pool.sql().get_member.as_str(),
        vec![Arg::text(organization_id), Arg::UserId(user_id.to_owned())],
        &MEMBER[..],
    );
    fetch_one(pool, "get_member", query, Reader::member).await
}

pub(crate) async fn list_members(
    pool: &Pool,
    organization_id: &str,
) -> Result<Vec<Member>, AdapterError> {
    let query = (
        pool.sql().list_members.as_str(),
        vec![Arg::text(organization_id)],
        &MEMBER[..],
    );
    let key = |m: &Member| (m.created_at, m.user_id.clone());
    fetch_sorted(pool, "list_members", query, Reader::member, key).await
}

pub(crate) async fn add_member(pool: &Pool, member: &Member) -> Result<bool, AdapterError> {
    const OP: &str = "add_member";
    let user = required_user_id(pool, OP, Some(&member.user_id))?;
    let sql = pool.sql();
    let organization = || Arg::text(member.organization_id.as_str());
    // Under the user's lock, as the other rows of a user are written: never for a user
    // that does not exist (the MySQL tables have no foreign key to users), and one of
    // concurrent adds of one user makes the membership.
    let step = pool.locked_updates(
        (&sql.lock_user, vec![user.clone()]),
        vec![
            (&sql.user_exists, vec![user.clone()], &[Col::UserId]),
            (&sql.get_organization, vec![organization()], &ORGANIZATION),
            (&sql.get_member, vec![organization(), user.clone()], &MEMBER),
        ],
        |found| {
            let present: Vec<bool> = found.iter().map(|rows| !rows.is_empty()).collect();
            match present.as_slice() {
                [false, ..] => (Vec::new(), Err(data_error(OP, "no user with this id"))),
                [_, false, _] => (
                    Vec::new(),
                    Err(data_error(OP, "no organization with this id")),
                ),
                [_, _, true] => (Vec::new(), Ok(false)),
                _ => {
                    let args = member_args(&member.organization_id, user.clone(), member);
                    (vec![(sql.insert_member.as_str(), args)], Ok(true))
                }
            }
        },
    );
    step.await.map_err(map_sqlx(OP))?
}

/// Whether a change of `user_id`'s membership may be made, from the locked rows (user id,
/// roles) of the user's membership and of the members that may be owners: not when the
/// user is no member, nor when no owner would be left (`stays_owner`: whether the user
/// holds the owner role after the change).
fn judge_change(
    op: &'static str,
    user_id: &str,
    rows: Vec<Vec<Val>>,
    stays_owner: bool,
) -> Result<MemberChange, AdapterError> {
    let (mut member, mut other_owner) = (false, false);
    for row in rows {
        let mut r = Reader::new(op, row);
        let id = r.text()?;
        let owner = r.list()?.iter().any(|role| role == OWNER_ROLE);
        if id == user_id {
            member = true;
        } else {
            other_owner |= owner;
        }
    }
    Ok(if !member {
        MemberChange::NotMember
    } else if !(other_owner || stays_owner) {
        MemberChange::LastOwner
    } else {
        MemberChange::Done
    })
}

/// Makes `writes`, a change of `user_id`'s membership of `organization_id` after which
/// they hold the owner role if `stays_owner`, unless the user is no member or the change
/// would leave the organization without an owner. One transaction that first locks the
/// organization's row: concurrent changes are judged one after another, each on what the
/// previous ones left.
async fn change_member(
    pool: &Pool,
    op: &'static str,
    (organization_id, user_id): (&str, &str),
    stays_owner: bool,
    writes: Vec<(&'static str, Vec<Arg>)>,
) -> Result<MemberChange, AdapterError> {
    let sql = pool.sql();
    let args = vec![
        Arg::text(organization_id),
        Arg::UserId(user_id.to_owned()),
        Arg::text(format!("%{OWNER_ROLE}%")),
    ];
    let step = pool.locked_updates(
        (&sql.lock_organization, vec![Arg::text(organization_id)]),
        vec![(
            &sql.get_member_and_owners_locked,
            args,
            &[Col::UserId, Col::Text],
        )],
        |found| {
            let change = judge_change(op, user_id, found.concat(), stays_owner);
            match change {
                Ok(MemberChange::Done) => (writes, change),
                _ => (Vec::new(), change),
            }
        },
    );
    step.await.map_err(map_sqlx(op))?
}

pub(crate) async fn set_member_roles(
    pool: &Pool,
    organization_id: &str,
    user_id: &str,
    roles: &[String],
) -> Result<MemberChange, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(MemberChange::NotMember);
    }
    let args = vec![
        joined(roles),
        Arg::text(organization_id),
        Arg::UserId(user_id.to_owned()),
    ];
    let writes = vec![(pool.sql().set_member_roles.as_str(), args)];
    let stays_owner = roles.iter().any(|r| r == OWNER_ROLE);
    let key = (organization_id, user_id);
    change_member(pool, "set_member_roles", key, stays_owner, writes).await
}

pub(crate) async fn set_member_teams(
    pool: &Pool,
    organization_id: &str,
    user_id: &str,
    teams: &[String],
) -> Result<MemberChange, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(MemberChange::NotMember);
    }
    let args = vec![
        joined(teams),
        Arg::text(organization_id),
        Arg::UserId(user_id.to_owned()),
    ];
    let sql = &pool.sql().set_member_teams;
    Ok(if changed(pool, "set_member_teams", sql, args).await? {
        MemberChange::Done
    } else {
        MemberChange::NotMember
    })
}

pub(crate) async fn remove_member(
    pool: &Pool,
    organization_id: &str,
    user_id: &str,
) -> Result<MemberChange, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(MemberChange::NotMember);
    }
    let sql = pool.sql();
    let user = || Arg::UserId(user_id.to_owned());
    let writes = vec![
        (
            sql.delete_member.as_str(),
            vec![Arg::text(organization_id), user()],
        ),
        (
            sql.clear_member_sessions_organization.as_str(),
            vec![user(), Arg::text(organization_id)],
        ),
    ];
    let key = (organization_id, user_id);
    change_member(pool, "remove_member", key, false, writes).await
}

// ---------------------------------------------------------------------------------------
// Teams

pub(crate) async fn create_team(pool: &Pool, team: &Team) -> Result<(), AdapterError> {
    let args = vec![
        Arg::text(team.id.as_str()),
        Arg::text(team.organization_id.as_str()),
        Arg::text(team.name.as_str()),
        Arg::Time(Some(team.created_at)),
    ];
    pool.execute(&pool.sql().insert_team, args)
        .await
        .map_err(map_sqlx("create_team"))?;
    Ok(())
}

pub(crate) async fn list_teams(
    pool: &Pool,
    organization_id: &str,
) -> Result<Vec<Team>, AdapterError> {
    let query = (
        pool.sql().list_teams.as_str(),
        vec![Arg::text(organization_id)],
        &TEAM[..],
    );
    let key = |t: &Team| (t.created_at, t.id.clone());
    fetch_sorted(pool, "list_teams", query, Reader::team, key).await
}

/// The writes that take `team_id` out of the teams of the members in `rows` (user id,
/// teams) of `organization_id`.
fn leave_team(
    pool: &Pool,
    op: &'static str,
    organization_id: &str,
    team_id: &str,
    rows: Vec<Vec<Val>>,
) -> Result<Vec<(&'static str, Vec<Arg>)>, AdapterError> {
    let mut writes = Vec::new();
    for row in rows {
        let mut r = Reader::new(op, row);
        let user_id = r.text()?;
        let teams = r.list()?;
        if teams.iter().any(|t| t == team_id) {
            let left: Vec<String> = teams.into_iter().filter(|t| t != team_id).collect();
            writes.push((
                pool.sql().set_member_teams.as_str(),
                vec![
                    joined(&left),
                    Arg::text(organization_id),
                    Arg::UserId(user_id),
                ],
            ));
        }
    }
    Ok(writes)
}

pub(crate) async fn delete_team(
    pool: &Pool,
    organization_id: &str,
    team_id: &str,
) -> Result<bool, AdapterError> {
    const OP: &str = "delete_team";
    let sql = pool.sql();
    let key = || vec![Arg::text(team_id), Arg::text(organization_id)];
    // The members' teams are read and rewritten under the organization's lock, their rows
    // locked too: a concurrent change of a member's teams is not lost.
    let step = pool.locked_updates(
        (&sql.lock_organization, vec![Arg::text(organization_id)]),
        vec![
            (&sql.get_team, key(), &TEAM),
            (
                &sql.list_members_in_teams_locked,
                vec![Arg::text(organization_id), Arg::text("")],
                &[Col::UserId, Col::Text],
            ),
        ],
        |found| {
            let mut found = found.into_iter();
            if found.next().is_none_or(|team| team.is_empty()) {
                return (Vec::new(), Ok(false));
            }
            let members = found.next().unwrap_or_default();
            match leave_team(pool, OP, organization_id, team_id, members) {
                Ok(mut writes) => {
                    writes.insert(0, (sql.delete_team.as_str(), key()));
                    (writes, Ok(true))
                }
                Err(e) => (Vec::new(), Err(e)),
            }
        },
    );
    step.await.map_err(map_sqlx(OP))?
}

// ---------------------------------------------------------------------------------------
// Invitations

/// The `status`, `acceptedBy` and `closedAt` columns of `status`.
fn status_columns(
    status: &InvitationStatus,
) -> (&'static str, Option<&str>, Option<OffsetDateTime>) {
    match status {
        InvitationStatus::Pending => (PENDING, None, None),
        InvitationStatus::Accepted { user_id, at } => (ACCEPTED, Some(user_id.as_str()), Some(*at)),
        InvitationStatus::Revoked { at } => (REVOKED, None, Some(*at)),
    }
}

pub(crate) async fn create_invitation(
    pool: &Pool,
    invitation: &Invitation,
) -> Result<(), AdapterError> {
    const OP: &str = "create_invitation";
    let (status, accepted_by, closed_at) = status_columns(&invitation.status);
    let args = vec![
        Arg::text(invitation.id.as_str()),
        Arg::Text(invitation.organization_id.clone()),
        Arg::text(invitation.email.as_str()),
        joined(&invitation.roles),
        joined(&invitation.teams),
        optional_user_id(pool, OP, invitation.inviter_id.as_deref())?,
        Arg::text(invitation.token_hash.as_str()),
        Arg::Time(Some(invitation.created_at)),
        Arg::Time(Some(invitation.expires)),
        Arg::text(status),
        optional_user_id(pool, OP, accepted_by)?,
        Arg::Time(closed_at),
    ];
    pool.execute(&pool.sql().insert_invitation, args)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn get_invitation(
    pool: &Pool,
    id: &str,
) -> Result<Option<Invitation>, AdapterError> {
    let query = (
        pool.sql().get_invitation.as_str(),
        vec![Arg::text(id)],
        &INVITATION[..],
    );
    fetch_one(pool, "get_invitation", query, Reader::invitation).await
}

pub(crate) async fn get_invitation_by_token(
    pool: &Pool,
    token_hash: &str,
) -> Result<Option<Invitation>, AdapterError> {
    let query = (
        pool.sql().get_invitation_by_token.as_str(),
        vec![Arg::text(token_hash)],
        &INVITATION[..],
    );
    fetch_one(pool, "get_invitation_by_token", query, Reader::invitation).await
}

/// The invitations `sql` reads with `args`, oldest first.
async fn list_invitations_with(
    pool: &Pool,
    op: &'static str,
    sql: &'static str,
    args: Vec<Arg>,
) -> Result<Vec<Invitation>, AdapterError> {
    let key = |i: &Invitation| (i.created_at, i.id.clone());
    fetch_sorted(pool, op, (sql, args, &INVITATION), Reader::invitation, key).await
}

pub(crate) async fn list_invitations(
    pool: &Pool,
    organization_id: Option<&str>,
) -> Result<Vec<Invitation>, AdapterError> {
    let sql = pool.sql();
    let (statement, args) = match organization_id {
        Some(id) => (&sql.list_invitations, vec![Arg::text(id)]),
        None => (&sql.list_sign_up_invitations, Vec::new()),
    };
    list_invitations_with(pool, "list_invitations", statement, args).await
}

pub(crate) async fn list_invitations_for_email(
    pool: &Pool,
    email: &str,
) -> Result<Vec<Invitation>, AdapterError> {
    let sql = &pool.sql().list_invitations_for_email;
    let args = vec![Arg::text(email), Arg::text(PENDING)];
    list_invitations_with(pool, "list_invitations_for_email", sql, args).await
}

/// What accepting invitation `row` (none: not found) as `user_id` at `at` comes to, with
/// whether the user exists and is a member of its organization already; when accepted,
/// also whether the membership is to be made.
fn judge_acceptance(
    op: &'static str,
    row: Option<Vec<Val>>,
    (user_exists, already_member): (bool, bool),
    user_id: &str,
    at: OffsetDateTime,
) -> Result<(InvitationAcceptance, bool), AdapterError> {
    let Some(invitation) = one(op, row, Reader::invitation)? else {
        return Ok((InvitationAcceptance::NotFound, false));
    };
    if invitation.status != InvitationStatus::Pending {
        return Ok((InvitationAcceptance::Closed, false));
    }
    if at >= invitation.expires {
        return Ok((InvitationAcceptance::Expired, false));
    }
    if !user_exists {
        return Err(data_error(op, "no user with this id"));
    }
    let joins = invitation.organization_id.is_some() && !already_member;
    let invitation = Invitation {
        status: InvitationStatus::Accepted {
            user_id: user_id.to_owned(),
            at,
        },
        ..invitation
    };
    let accepted = InvitationAcceptance::Accepted {
        invitation: Box::new(invitation),
        already_member,
    };
    Ok((accepted, joins))
}

pub(crate) async fn accept_invitation(
    pool: &Pool,
    id: &str,
    user_id: &str,
    at: OffsetDateTime,
) -> Result<InvitationAcceptance, AdapterError> {
    const OP: &str = "accept_invitation";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    // One transaction: the user's row locked (as for their other rows), the invitation's
    // read and held until it is marked accepted (only while still pending) and the
    // membership made, so of concurrent acceptances one succeeds.
    let step = pool.locked_updates(
        (&sql.lock_user, vec![user.clone()]),
        vec![
            (&sql.get_invitation_locked, vec![Arg::text(id)], &INVITATION),
            (&sql.user_exists, vec![user.clone()], &[Col::UserId]),
            (
                &sql.get_invitation_member,
                vec![user.clone(), Arg::text(id)],
                &[Col::UserId],
            ),
        ],
        |found| {
            let mut found = found.into_iter();
            let row = found.next().and_then(|rows| rows.into_iter().next());
            let mut present = found.map(|rows| !rows.is_empty());
            let user_exists = present.next().unwrap_or(false);
            let already_member = present.next().unwrap_or(false);
            let judged = judge_acceptance(OP, row, (user_exists, already_member), user_id, at);
            let mut writes = Vec::new();
            if let Ok((InvitationAcceptance::Accepted { invitation, .. }, joins)) = &judged {
                writes.push((
                    sql.close_invitation.as_str(),
                    vec![
                        Arg::text(ACCEPTED),
                        user.clone(),
                        Arg::Time(Some(at)),
                        Arg::text(id),
                        Arg::text(PENDING),
                    ],
                ));
                if let (Some(organization_id), true) = (&invitation.organization_id, joins) {
                    let member = Member {
                        organization_id: organization_id.clone(),
                        user_id: user_id.to_owned(),
                        roles: invitation.roles.clone(),
                        teams: invitation.teams.clone(),
                        created_at: at,
                    };
                    let args = member_args(organization_id, user.clone(), &member);
                    writes.push((sql.insert_member.as_str(), args));
                }
            }
            (writes, judged.map(|(acceptance, _)| acceptance))
        },
    );
    step.await.map_err(map_sqlx(OP))?
}

pub(crate) async fn revoke_invitation(
    pool: &Pool,
    id: &str,
    at: OffsetDateTime,
) -> Result<bool, AdapterError> {
    let args = vec![
        Arg::text(REVOKED),
        Arg::OptUserId(None),
        Arg::Time(Some(at)),
        Arg::text(id),
        Arg::text(PENDING),
    ];
    let sql = &pool.sql().close_invitation;
    changed(pool, "revoke_invitation", sql, args).await
}

// ---------------------------------------------------------------------------------------
// The sessions' active organization

pub(crate) async fn set_session_organization(
    pool: &Pool,
    session_token: &str,
    organization_id: Option<&str>,
) -> Result<bool, AdapterError> {
    let args = vec![
        Arg::Text(organization_id.map(str::to_owned)),
        Arg::text(session_token),
    ];
    let sql = &pool.sql().set_session_organization;
    changed(pool, "set_session_organization", sql, args).await
}

pub(crate) async fn get_session_organization(
    pool: &Pool,
    session_token: &str,
) -> Result<Option<String>, AdapterError> {
    let query = (
        pool.sql().get_session_organization.as_str(),
        vec![Arg::text(session_token)],
        &[Col::Text][..],
    );
    let found = fetch_one(pool, "get_session_organization", query, Reader::opt_text).await?;
    Ok(found.flatten())
}

// ---------------------------------------------------------------------------------------
// API keys

pub(crate) async fn create_api_key(pool: &Pool, key: &ApiKey) -> Result<(), AdapterError> {
    const OP: &str = "create_api_key";
    let user = required_user_id(pool, OP, Some(&key.user_id))?;
    let args = vec![
        Arg::text(key.id.as_str()),
        Arg::text(key.hash.as_str()),
        Arg::text(key.name.as_str()),
        user.clone(),
        Arg::Text(key.organization_id.clone()),
        joined(&key.permissions),
        Arg::Time(Some(key.created_at)),
        Arg::Time(key.expires),
        Arg::Time(key.last_used_at),
        Arg::Time(key.revoked_at),
    ];
    let writes = vec![(pool.sql().insert_api_key.as_str(), args)];
    replace_user_rows(pool, OP, user, writes).await
}

pub(crate) async fn get_api_key(pool: &Pool, id: &str) -> Result<Option<ApiKey>, AdapterError> {
    let query = (
        pool.sql().get_api_key.as_str(),
        vec![Arg::text(id)],
        &API_KEY[..],
    );
    fetch_one(pool, "get_api_key", query, Reader::api_key).await
}

pub(crate) async fn list_api_keys(
    pool: &Pool,
    owner: ApiKeyOwner<'_>,
) -> Result<Vec<ApiKey>, AdapterError> {
    let sql = pool.sql();
    let (statement, args) = match owner {
        ApiKeyOwner::User(user_id) if !pool.is_user_id(user_id) => return Ok(Vec::new()),
        ApiKeyOwner::User(user_id) => (
            &sql.list_user_api_keys,
            vec![Arg::UserId(user_id.to_owned())],
        ),
        ApiKeyOwner::Organization(id) => (&sql.list_organization_api_keys, vec![Arg::text(id)]),
    };
    let key = |k: &ApiKey| (k.created_at, k.id.clone());
    let query = (statement.as_str(), args, &API_KEY[..]);
    fetch_sorted(pool, "list_api_keys", query, Reader::api_key, key).await
}

pub(crate) async fn revoke_api_key(
    pool: &Pool,
    id: &str,
    at: OffsetDateTime,
) -> Result<bool, AdapterError> {
    let args = vec![Arg::Time(Some(at)), Arg::text(id)];
    changed(pool, "revoke_api_key", &pool.sql().revoke_api_key, args).await
}

pub(crate) async fn record_api_key_use(
    pool: &Pool,
    id: &str,
    at: OffsetDateTime,
) -> Result<(), AdapterError> {
    // One conditional UPDATE: a use recorded late never moves the time back.
    let args = vec![Arg::Time(Some(at)), Arg::text(id), Arg::Time(Some(at))];
    let sql = &pool.sql().record_api_key_use;
    changed(pool, "record_api_key_use", sql, args).await?;
    Ok(())
}
