//! [`OrganizationStore`] and
//! [`ApiKeyStore`](authcore::adapter::ApiKeyStore): organizations, members, teams,
//! invitations, the sessions' active organization and API keys, and the invariants kept
//! under concurrency (an organization always has an owner, an invitation is accepted once).

use authcore::adapter::{
    ApiKey, ApiKeyOwner, Invitation, InvitationAcceptance, InvitationStatus, Member, MemberChange,
    OWNER_ROLE, Organization, OrganizationStore, Team,
};

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    organizations(adapter).await;
    members(adapter).await;
    teams(adapter).await;
    invitations(adapter).await;
    session_organization(adapter).await;
    last_owner_race(adapter, options).await;
    invitation_race(adapter, options).await;
    api_keys(adapter).await;
}

/// An instant `secs` from the time this suite first asked, whole seconds (every backend
/// keeps them exactly); one base, so that two calls with the same `secs` agree.
fn whole(secs: i64) -> OffsetDateTime {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| OffsetDateTime::now_utc().unix_timestamp());
    OffsetDateTime::from_unix_timestamp(base + secs).unwrap_or_else(|e| fail("setup", e))
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn new_organization(tag: &str, secs: i64) -> Organization {
    let id = random_id();
    Organization {
        slug: format!("{tag}-{id}"),
        name: format!("{tag} Ltd. — “Ünïcode”"),
        id,
        created_at: whole(secs),
    }
}

fn member(organization: &Organization, user_id: &str, roles: &[&str], secs: i64) -> Member {
    Member {
        organization_id: organization.id.clone(),
        user_id: user_id.to_owned(),
        roles: strings(roles),
        teams: Vec::new(),
        created_at: whole(secs),
    }
}

/// An organization with `owner` as owner, stored.
async fn stored_organization<S: OrganizationStore + ?Sized>(
    store: &S,
    check: &str,
    tag: &str,
    owner: &str,
) -> Organization {
    let org = new_organization(tag, -100);
    ok(
        check,
        "create_organization",
        store
            .create_organization(&org, &member(&org, owner, &[OWNER_ROLE], -100))
            .await,
    );
    org
}

fn invitation(organization: Option<&Organization>, email: &str, expires_in: i64) -> Invitation {
    Invitation {
        id: random_id(),
        organization_id: organization.map(|o| o.id.clone()),
        email: email.to_owned(),
        roles: strings(&["member", "billing:viewer"]),
        teams: Vec::new(),
        inviter_id: None,
        token_hash: random_id(),
        created_at: whole(-10),
        expires: whole(expires_in),
        status: InvitationStatus::Pending,
    }
}

/// Organizations: made with their owner, read by id and slug, renamed, a slug in use
/// refused on create and update, listed for a user, deleted with what belongs to them;
/// unknown ids answer nothing.
pub async fn organizations<A: Adapter>(adapter: &A) {
    const CHECK: &str = "organizations";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "org-owner").await;
    let org = new_organization("acme", -50);
    let owner = member(&org, &user.id, &[OWNER_ROLE, "billing"], -50);
    ok(
        CHECK,
        "create_organization",
        store.create_organization(&org, &owner).await,
    );
    eq(
        CHECK,
        "get_organization",
        &some(
            CHECK,
            "get_organization",
            store.get_organization(&org.id).await,
        ),
        &org,
    );
    eq(
        CHECK,
        "get_organization_by_slug",
        &some(
            CHECK,
            "get_organization_by_slug",
            store.get_organization_by_slug(&org.slug).await,
        ),
        &org,
    );
    eq(
        CHECK,
        "the owner's membership",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &user.id).await,
        ),
        &owner,
    );

    let mut same_slug = new_organization("acme", -40);
    same_slug.slug.clone_from(&org.slug);
    expect_conflict(
        CHECK,
        "create_organization with a slug in use",
        store
            .create_organization(
                &same_slug,
                &member(&same_slug, &user.id, &[OWNER_ROLE], -40),
            )
            .await,
    );
    none(
        CHECK,
        "the organization refused for its slug",
        store.get_organization(&same_slug.id).await,
    );

    let second = stored_organization(store, CHECK, "second", &user.id).await;
    let renamed = Organization {
        name: "Renamed".into(),
        slug: format!("renamed-{}", random_id()),
        ..org.clone()
    };
    eq(
        CHECK,
        "update_organization",
        &ok(
            CHECK,
            "update_organization",
            store.update_organization(&renamed).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "the renamed organization",
        &some(
            CHECK,
            "get_organization",
            store.get_organization(&org.id).await,
        ),
        &renamed,
    );
    none(
        CHECK,
        "the old slug",
        store.get_organization_by_slug(&org.slug).await,
    );
    expect_conflict(
        CHECK,
        "update_organization to another organization's slug",
        store
            .update_organization(&Organization {
                slug: second.slug.clone(),
                ..renamed.clone()
            })
            .await,
    );
    let listed = ok(
        CHECK,
        "list_organizations_of_user",
        store.list_organizations_of_user(&user.id).await,
    );
    let ids: Vec<&str> = listed.iter().map(|(o, _)| o.id.as_str()).collect();
    eq(
        CHECK,
        "the user's organizations, oldest first",
        &ids,
        &vec![second.id.as_str(), org.id.as_str()],
    );

    for id in unknown_ids() {
        none(
            CHECK,
            "an unknown organization",
            store.get_organization(&id).await,
        );
        eq(
            CHECK,
            "update_organization of an unknown id",
            &ok(
                CHECK,
                "update_organization",
                store
                    .update_organization(&Organization {
                        id: id.clone(),
                        slug: format!("unknown-{}", random_id()),
                        ..org.clone()
                    })
                    .await,
            ),
            &false,
        );
        eq(
            CHECK,
            "delete_organization of an unknown id",
            &ok(
                CHECK,
                "delete_organization",
                store.delete_organization(&id).await,
            ),
            &false,
        );
    }

    // Deleting takes its members, teams and invitations along.
    let team = Team {
        id: random_id(),
        organization_id: second.id.clone(),
        name: "ops".into(),
        created_at: whole(-5),
    };
    ok(CHECK, "create_team", store.create_team(&team).await);
    let inv = invitation(Some(&second), &unique_email("org-invitee"), 3600);
    ok(
        CHECK,
        "create_invitation",
        store.create_invitation(&inv).await,
    );
    eq(
        CHECK,
        "delete_organization",
        &ok(
            CHECK,
            "delete_organization",
            store.delete_organization(&second.id).await,
        ),
        &true,
    );
    none(
        CHECK,
        "the deleted organization",
        store.get_organization(&second.id).await,
    );
    none(
        CHECK,
        "a member of the deleted organization",
        store.get_member(&second.id, &user.id).await,
    );
    eq(
        CHECK,
        "the teams of the deleted organization",
        &ok(CHECK, "list_teams", store.list_teams(&second.id).await),
        &vec![],
    );
    none(
        CHECK,
        "an invitation to the deleted organization",
        store.get_invitation(&inv.id).await,
    );
    let left = ok(
        CHECK,
        "list_organizations_of_user",
        store.list_organizations_of_user(&user.id).await,
    );
    eq(
        CHECK,
        "the user's organizations after a deletion",
        &left.len(),
        &1,
    );

    // Deleting the user ends their memberships.
    ok(CHECK, "delete_user", adapter.delete_user(&user.id).await);
    none(
        CHECK,
        "the membership of a deleted user",
        store.get_member(&org.id, &user.id).await,
    );
}

/// Members: added once, read, listed oldest first, roles replaced (never leaving the
/// organization without an owner), removed (never the last owner), unknown members answer
/// `NotMember`, a member for a user or organization that does not exist fails.
pub async fn members<A: Adapter>(adapter: &A) {
    const CHECK: &str = "members";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let owner = new_user(adapter, CHECK, "members-owner").await;
    let alice = new_user(adapter, CHECK, "members-alice").await;
    let bob = new_user(adapter, CHECK, "members-bob").await;
    let org = stored_organization(store, CHECK, "members", &owner.id).await;

    let a = member(&org, &alice.id, &["admin", "billing:writer"], -20);
    eq(
        CHECK,
        "add_member",
        &ok(CHECK, "add_member", store.add_member(&a).await),
        &true,
    );
    eq(
        CHECK,
        "add_member a second time",
        &ok(
            CHECK,
            "add_member",
            store
                .add_member(&member(&org, &alice.id, &[OWNER_ROLE], -10))
                .await,
        ),
        &false,
    );
    eq(
        CHECK,
        "the member after a second add",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &alice.id).await,
        ),
        &a,
    );
    ok(
        CHECK,
        "add_member",
        store.add_member(&member(&org, &bob.id, &[], -10)).await,
    );
    let listed: Vec<String> = ok(CHECK, "list_members", store.list_members(&org.id).await)
        .into_iter()
        .map(|m| m.user_id)
        .collect();
    eq(
        CHECK,
        "members, oldest first",
        &listed,
        &vec![owner.id.clone(), alice.id.clone(), bob.id.clone()],
    );

    let org_id = org.id.as_str();
    let set = |user: String, roles: Vec<String>| async move {
        ok(
            CHECK,
            "set_member_roles",
            store.set_member_roles(org_id, &user, &roles).await,
        )
    };
    eq(
        CHECK,
        "the only owner giving up the owner role",
        &set(owner.id.clone(), strings(&["admin"])).await,
        &MemberChange::LastOwner,
    );
    eq(
        CHECK,
        "the owner after a refused change",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &owner.id).await,
        )
        .roles,
        &strings(&[OWNER_ROLE]),
    );
    eq(
        CHECK,
        "removing the only owner",
        &ok(
            CHECK,
            "remove_member",
            store.remove_member(&org.id, &owner.id).await,
        ),
        &MemberChange::LastOwner,
    );
    eq(
        CHECK,
        "making a second owner",
        &set(alice.id.clone(), strings(&["admin", OWNER_ROLE])).await,
        &MemberChange::Done,
    );
    eq(
        CHECK,
        "the first owner stepping down once there is another",
        &set(owner.id.clone(), strings(&["member"])).await,
        &MemberChange::Done,
    );
    eq(
        CHECK,
        "roles as set",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &alice.id).await,
        )
        .roles,
        &strings(&["admin", OWNER_ROLE]),
    );
    eq(
        CHECK,
        "removing a member",
        &ok(
            CHECK,
            "remove_member",
            store.remove_member(&org.id, &bob.id).await,
        ),
        &MemberChange::Done,
    );
    none(
        CHECK,
        "a removed member",
        store.get_member(&org.id, &bob.id).await,
    );
    eq(
        CHECK,
        "roles of a non-member",
        &set(bob.id.clone(), strings(&["admin"])).await,
        &MemberChange::NotMember,
    );
    eq(
        CHECK,
        "removing a non-member",
        &ok(
            CHECK,
            "remove_member",
            store.remove_member(&org.id, &bob.id).await,
        ),
        &MemberChange::NotMember,
    );
    eq(
        CHECK,
        "removing the last owner",
        &ok(
            CHECK,
            "remove_member",
            store.remove_member(&org.id, &alice.id).await,
        ),
        &MemberChange::LastOwner,
    );

    for id in unknown_ids() {
        expect_error(
            CHECK,
            "add_member for a user that does not exist",
            store.add_member(&member(&org, &id, &[], 0)).await,
        );
        let ghost = Organization {
            id: id.clone(),
            ..org.clone()
        };
        expect_error(
            CHECK,
            "add_member to an organization that does not exist",
            store.add_member(&member(&ghost, &bob.id, &[], 0)).await,
        );
        eq(
            CHECK,
            "the members of an unknown organization",
            &ok(CHECK, "list_members", store.list_members(&id).await),
            &vec![],
        );
    }
}

/// Teams: made (a name in use in the organization refused, the same name in another
/// allowed), listed, set on members, deleted (and taken out of the members' teams).
pub async fn teams<A: Adapter>(adapter: &A) {
    const CHECK: &str = "teams";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let owner = new_user(adapter, CHECK, "teams-owner").await;
    let org = stored_organization(store, CHECK, "teams", &owner.id).await;
    let other = stored_organization(store, CHECK, "teams-other", &owner.id).await;
    let team = |org: &Organization, name: &str, secs: i64| Team {
        id: random_id(),
        organization_id: org.id.clone(),
        name: name.to_owned(),
        created_at: whole(secs),
    };
    let (ops, dev) = (team(&org, "ops", -20), team(&org, "dev", -10));
    ok(CHECK, "create_team", store.create_team(&ops).await);
    ok(CHECK, "create_team", store.create_team(&dev).await);
    expect_conflict(
        CHECK,
        "create_team with a name in use",
        store.create_team(&team(&org, "ops", 0)).await,
    );
    ok(
        CHECK,
        "create_team with the name of another organization's team",
        store.create_team(&team(&other, "ops", 0)).await,
    );
    eq(
        CHECK,
        "list_teams, oldest first",
        &ok(CHECK, "list_teams", store.list_teams(&org.id).await),
        &vec![ops.clone(), dev.clone()],
    );
    eq(
        CHECK,
        "set_member_teams",
        &ok(
            CHECK,
            "set_member_teams",
            store
                .set_member_teams(&org.id, &owner.id, &[dev.id.clone(), ops.id.clone()])
                .await,
        ),
        &MemberChange::Done,
    );
    eq(
        CHECK,
        "the member's teams as set",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &owner.id).await,
        )
        .teams,
        &vec![dev.id.clone(), ops.id.clone()],
    );
    eq(
        CHECK,
        "delete_team of another organization",
        &ok(
            CHECK,
            "delete_team",
            store.delete_team(&other.id, &ops.id).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "delete_team",
        &ok(
            CHECK,
            "delete_team",
            store.delete_team(&org.id, &ops.id).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "the member's teams after a deletion",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &owner.id).await,
        )
        .teams,
        &vec![dev.id.clone()],
    );
    eq(
        CHECK,
        "list_teams after a deletion",
        &ok(CHECK, "list_teams", store.list_teams(&org.id).await),
        &vec![dev],
    );
    let stranger = new_user(adapter, CHECK, "teams-stranger").await;
    eq(
        CHECK,
        "set_member_teams of a non-member",
        &ok(
            CHECK,
            "set_member_teams",
            store.set_member_teams(&org.id, &stranger.id, &[]).await,
        ),
        &MemberChange::NotMember,
    );
}

/// Invitations: stored and read by id and token hash, listed per organization (or the
/// sign-up ones) and per address (pending only), accepted once (making the member with the
/// invitation's roles and teams, or keeping an existing member as they were), refused when
/// expired, revoked or used, revoked only while pending.
pub async fn invitations<A: Adapter>(adapter: &A) {
    const CHECK: &str = "invitations";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let owner = new_user(adapter, CHECK, "inv-owner").await;
    let org = stored_organization(store, CHECK, "inv", &owner.id).await;
    let team = Team {
        id: random_id(),
        organization_id: org.id.clone(),
        name: "support".into(),
        created_at: whole(-5),
    };
    ok(CHECK, "create_team", store.create_team(&team).await);
    let invitee = new_user(adapter, CHECK, "inv-invitee").await;
    let email = invitee.email.clone().unwrap_or_default();

    let mut to_org = invitation(Some(&org), &email, 3600);
    to_org.teams = vec![team.id.clone()];
    to_org.inviter_id = Some(owner.id.clone());
    let sign_up = invitation(None, &email, 3600);
    let mut expired = invitation(Some(&org), &email, -1);
    expired.created_at = whole(-20);
    let revoked = invitation(Some(&org), &email, 3600);
    for i in [&expired, &to_org, &sign_up, &revoked] {
        ok(CHECK, "create_invitation", store.create_invitation(i).await);
    }
    expect_conflict(
        CHECK,
        "create_invitation with an id in use",
        store.create_invitation(&to_org).await,
    );
    eq(
        CHECK,
        "get_invitation",
        &some(
            CHECK,
            "get_invitation",
            store.get_invitation(&to_org.id).await,
        ),
        &to_org,
    );
    eq(
        CHECK,
        "get_invitation_by_token",
        &some(
            CHECK,
            "get_invitation_by_token",
            store.get_invitation_by_token(&to_org.token_hash).await,
        ),
        &to_org,
    );
    none(
        CHECK,
        "an unknown token",
        store.get_invitation_by_token(&random_id()).await,
    );
    let ids = |list: Vec<Invitation>| list.into_iter().map(|i| i.id).collect::<Vec<_>>();
    let org_list = ids(ok(
        CHECK,
        "list_invitations",
        store.list_invitations(Some(&org.id)).await,
    ));
    eq(
        CHECK,
        "the organization's invitations, oldest first",
        &org_list.len(),
        &3,
    );
    eq(
        CHECK,
        "the oldest invitation first",
        &org_list.first(),
        &Some(&expired.id),
    );
    let sign_ups = ids(ok(
        CHECK,
        "list_invitations",
        store.list_invitations(None).await,
    ));
    if !sign_ups.contains(&sign_up.id) || sign_ups.iter().any(|i| org_list.contains(i)) {
        fail(
            CHECK,
            format_args!("list_invitations(None) answered {sign_ups:?}: not the sign-up ones"),
        );
    }

    eq(
        CHECK,
        "revoke_invitation",
        &ok(
            CHECK,
            "revoke_invitation",
            store.revoke_invitation(&revoked.id, whole(0)).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "revoking twice",
        &ok(
            CHECK,
            "revoke_invitation",
            store.revoke_invitation(&revoked.id, whole(0)).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "the revoked invitation's status",
        &some(
            CHECK,
            "get_invitation",
            store.get_invitation(&revoked.id).await,
        )
        .status,
        &InvitationStatus::Revoked { at: whole(0) },
    );
    let mut pending = ids(ok(
        CHECK,
        "list_invitations_for_email",
        store.list_invitations_for_email(&email).await,
    ));
    pending.sort();
    let mut want = vec![expired.id.clone(), to_org.id.clone(), sign_up.id.clone()];
    want.sort();
    eq(
        CHECK,
        "the pending invitations of an address",
        &pending,
        &want,
    );

    let accept = |id: String, user: String| async move {
        ok(
            CHECK,
            "accept_invitation",
            store.accept_invitation(&id, &user, whole(0)).await,
        )
    };
    eq(
        CHECK,
        "accepting an expired invitation",
        &accept(expired.id.clone(), invitee.id.clone()).await,
        &InvitationAcceptance::Expired,
    );
    eq(
        CHECK,
        "accepting a revoked invitation",
        &accept(revoked.id.clone(), invitee.id.clone()).await,
        &InvitationAcceptance::Closed,
    );
    eq(
        CHECK,
        "accepting an unknown invitation",
        &accept(random_id(), invitee.id.clone()).await,
        &InvitationAcceptance::NotFound,
    );
    none(
        CHECK,
        "a membership after refused acceptances",
        store.get_member(&org.id, &invitee.id).await,
    );
    let accepted = InvitationStatus::Accepted {
        user_id: invitee.id.clone(),
        at: whole(0),
    };
    eq(
        CHECK,
        "accepting an organization's invitation",
        &accept(to_org.id.clone(), invitee.id.clone()).await,
        &InvitationAcceptance::Accepted {
            invitation: Box::new(Invitation {
                status: accepted.clone(),
                ..to_org.clone()
            }),
            already_member: false,
        },
    );
    let joined = some(
        CHECK,
        "get_member",
        store.get_member(&org.id, &invitee.id).await,
    );
    eq(
        CHECK,
        "the invited member's roles",
        &joined.roles,
        &to_org.roles,
    );
    eq(
        CHECK,
        "the invited member's teams",
        &joined.teams,
        &to_org.teams,
    );
    eq(
        CHECK,
        "accepting twice",
        &accept(to_org.id.clone(), invitee.id.clone()).await,
        &InvitationAcceptance::Closed,
    );
    eq(
        CHECK,
        "revoking an accepted invitation",
        &ok(
            CHECK,
            "revoke_invitation",
            store.revoke_invitation(&to_org.id, whole(0)).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "the accepted invitation's status",
        &some(
            CHECK,
            "get_invitation",
            store.get_invitation(&to_org.id).await,
        )
        .status,
        &accepted,
    );
    eq(
        CHECK,
        "accepting a sign-up invitation",
        &matches!(
            accept(sign_up.id.clone(), invitee.id.clone()).await,
            InvitationAcceptance::Accepted {
                already_member: false,
                ..
            }
        ),
        &true,
    );

    // A member accepting another invitation keeps their roles.
    let again = invitation(Some(&org), &email, 3600);
    ok(
        CHECK,
        "create_invitation",
        store.create_invitation(&again).await,
    );
    eq(
        CHECK,
        "a member accepting another invitation",
        &matches!(
            accept(again.id.clone(), invitee.id.clone()).await,
            InvitationAcceptance::Accepted {
                already_member: true,
                ..
            }
        ),
        &true,
    );
    eq(
        CHECK,
        "the member's roles after accepting another invitation",
        &some(
            CHECK,
            "get_member",
            store.get_member(&org.id, &invitee.id).await,
        )
        .roles,
        &to_org.roles,
    );
    eq(
        CHECK,
        "pending invitations after acceptance",
        &ids(ok(
            CHECK,
            "list_invitations_for_email",
            store.list_invitations_for_email(&email).await,
        )),
        &vec![expired.id.clone()],
    );
}

/// The active organization of database sessions: none at first, set and cleared, only for
/// a session that exists; gone with the session, with the membership, with the
/// organization.
pub async fn session_organization<A: Adapter>(adapter: &A) {
    const CHECK: &str = "session_organization";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let owner = new_user(adapter, CHECK, "session-org-owner").await;
    let user = new_user(adapter, CHECK, "session-org-user").await;
    let org = stored_organization(store, CHECK, "session-org", &owner.id).await;
    ok(
        CHECK,
        "add_member",
        store
            .add_member(&member(&org, &user.id, &["member"], 0))
            .await,
    );
    let session = || AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(3600),
    };
    let (first, second) = (session(), session());
    for s in [&first, &second] {
        ok(
            CHECK,
            "create_session",
            adapter.create_session(s.clone()).await,
        );
    }
    let get = |token: String| async move {
        ok(
            CHECK,
            "get_session_organization",
            store.get_session_organization(&token).await,
        )
    };
    eq(
        CHECK,
        "before any",
        &get(first.session_token.clone()).await,
        &None,
    );
    let set = |token: String, org: Option<String>| async move {
        ok(
            CHECK,
            "set_session_organization",
            store.set_session_organization(&token, org.as_deref()).await,
        )
    };
    eq(
        CHECK,
        "set_session_organization",
        &set(first.session_token.clone(), Some(org.id.clone())).await,
        &true,
    );
    eq(
        CHECK,
        "the active organization",
        &get(first.session_token.clone()).await,
        &Some(org.id.clone()),
    );
    eq(
        CHECK,
        "another session's",
        &get(second.session_token.clone()).await,
        &None,
    );
    eq(
        CHECK,
        "clearing it",
        &set(first.session_token.clone(), None).await,
        &true,
    );
    eq(
        CHECK,
        "after clearing",
        &get(first.session_token.clone()).await,
        &None,
    );
    eq(
        CHECK,
        "set_session_organization of an unknown session",
        &set(random_id(), Some(org.id.clone())).await,
        &false,
    );

    set(first.session_token.clone(), Some(org.id.clone())).await;
    set(second.session_token.clone(), Some(org.id.clone())).await;
    ok(
        CHECK,
        "delete_session",
        adapter.delete_session(&second.session_token).await,
    );
    eq(
        CHECK,
        "a deleted session's",
        &get(second.session_token.clone()).await,
        &None,
    );
    ok(
        CHECK,
        "remove_member",
        store.remove_member(&org.id, &user.id).await,
    );
    eq(
        CHECK,
        "after the user left the organization",
        &get(first.session_token.clone()).await,
        &None,
    );
}

/// Concurrent changes by two owners each removing the other, or stepping down: the
/// organization keeps an owner every time.
pub async fn last_owner_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "last_owner_race";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let a = new_user(adapter, CHECK, "race-owner-a").await;
    let b = new_user(adapter, CHECK, "race-owner-b").await;
    for round in 0..options.race_rounds.max(1) {
        let org = stored_organization(store, CHECK, "race", &a.id).await;
        ok(
            CHECK,
            "add_member",
            store
                .add_member(&member(&org, &b.id, &[OWNER_ROLE], 0))
                .await,
        );
        let (x, y) = (adapter.clone(), adapter.clone());
        let (Some(sx), Some(sy)) = (
            x.capabilities().organizations,
            y.capabilities().organizations,
        ) else {
            fail(CHECK, "a clone of the adapter has no OrganizationStore");
        };
        let member_role = strings(&["member"]);
        let (rx, ry) = if round % 2 == 0 {
            futures_util::future::join(
                sx.remove_member(&org.id, &a.id),
                sy.remove_member(&org.id, &b.id),
            )
            .await
        } else {
            futures_util::future::join(
                sx.set_member_roles(&org.id, &a.id, &member_role),
                sy.set_member_roles(&org.id, &b.id, &member_role),
            )
            .await
        };
        let outcomes = [
            ok(CHECK, "the first change", rx),
            ok(CHECK, "the second", ry),
        ];
        let owners = ok(CHECK, "list_members", store.list_members(&org.id).await)
            .into_iter()
            .filter(Member::is_owner)
            .count();
        if owners != 1 || !outcomes.contains(&MemberChange::LastOwner) {
            fail(
                CHECK,
                format_args!(
                    "round {round}: two owners stepping down at once answered {outcomes:?} and left {owners} owners"
                ),
            );
        }
    }
}

/// Concurrent acceptances of one invitation: one is accepted.
pub async fn invitation_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "invitation_race";
    let Some(store) = capability(
        adapter.capabilities().organizations,
        CHECK,
        "OrganizationStore",
    ) else {
        return;
    };
    let owner = new_user(adapter, CHECK, "inv-race-owner").await;
    let a = new_user(adapter, CHECK, "inv-race-a").await;
    let b = new_user(adapter, CHECK, "inv-race-b").await;
    let org = stored_organization(store, CHECK, "inv-race", &owner.id).await;
    for round in 0..options.race_rounds.max(1) {
        let inv = invitation(Some(&org), "race@conformance.example", 3600);
        ok(
            CHECK,
            "create_invitation",
            store.create_invitation(&inv).await,
        );
        let (x, y) = (adapter.clone(), adapter.clone());
        let (Some(sx), Some(sy)) = (
            x.capabilities().organizations,
            y.capabilities().organizations,
        ) else {
            fail(CHECK, "a clone of the adapter has no OrganizationStore");
        };
        let (rx, ry) = futures_util::future::join(
            sx.accept_invitation(&inv.id, &a.id, whole(0)),
            sy.accept_invitation(&inv.id, &b.id, whole(0)),
        )
        .await;
        let outcomes = [ok(CHECK, "the first", rx), ok(CHECK, "the second", ry)];
        let accepted = outcomes
            .iter()
            .filter(|o| matches!(o, InvitationAcceptance::Accepted { .. }))
            .count();
        let members = ok(CHECK, "list_members", store.list_members(&org.id).await).len();
        if accepted != 1 || members != 2 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: two acceptances of one invitation answered {outcomes:?} ({members} members)"
                ),
            );
        }
        // The next round needs both users outside again.
        for u in [&a, &b] {
            store.remove_member(&org.id, &u.id).await.ok();
        }
        if ok(CHECK, "list_members", store.list_members(&org.id).await).len() != 1 {
            fail(CHECK, "the members accepted could not be removed");
        }
    }
}

/// API keys: stored and read back, listed by user (not the organization's keys they made)
/// and by organization, revoked once, use recorded forward only; a key for a user or
/// organization that does not exist fails; the user's keys go with the user, an
/// organization's with the organization.
pub async fn api_keys<A: Adapter>(adapter: &A) {
    const CHECK: &str = "api_keys";
    let Some(keys) = capability(adapter.capabilities().api_keys, CHECK, "ApiKeyStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "api-keys").await;
    let key = |organization_id: Option<String>, secs: i64| ApiKey {
        id: random_id(),
        hash: random_id(),
        name: "deploy — “ci”".into(),
        user_id: user.id.clone(),
        organization_id,
        permissions: strings(&["project:read", "billing:*"]),
        created_at: whole(secs),
        expires: Some(whole(86_400)),
        last_used_at: None,
        revoked_at: None,
    };
    let own = key(None, -20);
    let bare = ApiKey {
        expires: None,
        permissions: Vec::new(),
        ..key(None, -10)
    };
    ok(CHECK, "create_api_key", keys.create_api_key(&own).await);
    ok(CHECK, "create_api_key", keys.create_api_key(&bare).await);
    expect_conflict(
        CHECK,
        "create_api_key with an id in use",
        keys.create_api_key(&own).await,
    );
    eq(
        CHECK,
        "get_api_key",
        &some(CHECK, "get_api_key", keys.get_api_key(&own.id).await),
        &own,
    );
    eq(
        CHECK,
        "a key without expiry or permissions",
        &some(CHECK, "get_api_key", keys.get_api_key(&bare.id).await),
        &bare,
    );
    let org_key = if let Some(orgs) = adapter.capabilities().organizations {
        let org = stored_organization(orgs, CHECK, "api-keys", &user.id).await;
        let k = key(Some(org.id.clone()), -5);
        ok(CHECK, "create_api_key", keys.create_api_key(&k).await);
        eq(
            CHECK,
            "the organization's keys",
            &ok(
                CHECK,
                "list_api_keys",
                keys.list_api_keys(ApiKeyOwner::Organization(&org.id)).await,
            ),
            &vec![k.clone()],
        );
        for id in unknown_ids() {
            expect_error(
                CHECK,
                "create_api_key for an organization that does not exist",
                keys.create_api_key(&key(Some(id), 0)).await,
            );
        }
        Some((org, k))
    } else {
        None
    };
    eq(
        CHECK,
        "the user's own keys, oldest first",
        &ok(
            CHECK,
            "list_api_keys",
            keys.list_api_keys(ApiKeyOwner::User(&user.id)).await,
        ),
        &vec![own.clone(), bare.clone()],
    );

    keys.record_api_key_use(&own.id, whole(-3)).await.ok();
    ok(
        CHECK,
        "record_api_key_use",
        keys.record_api_key_use(&own.id, whole(-1)).await,
    );
    ok(
        CHECK,
        "record_api_key_use with an earlier time",
        keys.record_api_key_use(&own.id, whole(-2)).await,
    );
    eq(
        CHECK,
        "the last use",
        &some(CHECK, "get_api_key", keys.get_api_key(&own.id).await).last_used_at,
        &Some(whole(-1)),
    );
    ok(
        CHECK,
        "record_api_key_use of an unknown key",
        keys.record_api_key_use(&random_id(), whole(0)).await,
    );
    eq(
        CHECK,
        "revoke_api_key",
        &ok(
            CHECK,
            "revoke_api_key",
            keys.revoke_api_key(&own.id, whole(0)).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "revoking twice",
        &ok(
            CHECK,
            "revoke_api_key",
            keys.revoke_api_key(&own.id, whole(5)).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "the revocation time",
        &some(CHECK, "get_api_key", keys.get_api_key(&own.id).await).revoked_at,
        &Some(whole(0)),
    );
    eq(
        CHECK,
        "revoking an unknown key",
        &ok(
            CHECK,
            "revoke_api_key",
            keys.revoke_api_key(&random_id(), whole(0)).await,
        ),
        &false,
    );
    for id in unknown_ids() {
        expect_error(
            CHECK,
            "create_api_key for a user that does not exist",
            keys.create_api_key(&ApiKey {
                user_id: id,
                ..key(None, 0)
            })
            .await,
        );
    }

    if let (Some((org, k)), Some(orgs)) = (org_key, adapter.capabilities().organizations) {
        ok(
            CHECK,
            "delete_organization",
            orgs.delete_organization(&org.id).await,
        );
        none(
            CHECK,
            "a deleted organization's key",
            keys.get_api_key(&k.id).await,
        );
    }
    ok(CHECK, "delete_user", adapter.delete_user(&user.id).await);
    none(
        CHECK,
        "a deleted user's key",
        keys.get_api_key(&bare.id).await,
    );
}
