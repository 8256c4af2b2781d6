//! Organizations, invitations and API keys through the JSON account routes and the
//! invitation link, driven with real requests on the memory adapter: each route's success,
//! and its refusals (signed out, without the CSRF token, a member without the permission,
//! another organization's ids — answered as ids that do not exist, the last owner); the
//! invitation from its mail to the membership; an API key's text shown once.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::*;
use authcore::account::{AccountRoute, InvitationSpec};
use authcore::adapter::{Adapter, ApiKeyStore, Member, MemoryAdapter, OrganizationStore};
use authcore::organizations::Organizations;
use authcore::providers::email::LinkPurpose;
use authcore::{Auth, AuthConfig, SessionStrategy};
use serde_json::{Value, json};

/// An app with organizations (and a `billing` role), magic links and `strategy`.
struct App {
    auth: Auth,
    db: MemoryAdapter,
    mail: Mailbox,
}

fn app(strategy: SessionStrategy) -> App {
    let db = MemoryAdapter::new();
    let mail = Mailbox::default();
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .adapter(db.clone())
            .session_strategy(strategy)
            .provider(mail.provider())
            .organizations(Organizations::new().role("billing", ["billing:read"]))
            .build()
            .unwrap(),
    );
    App { auth, db, mail }
}

/// The ids of one organization of the world: its members by role, a team, a pending
/// invitation and an API key of the owner's.
#[derive(Debug, Clone)]
struct OrgIds {
    id: String,
    owner: String,
    admin: String,
    member: String,
    /// A member with the `billing` role only (no `member:read`).
    billing: String,
    team: String,
    invitation: String,
    key: String,
}

/// Two organizations (`acme`, and `other` that Acme's members are no members of) and a
/// user with an invitation to Acme.
struct World {
    app: App,
    acme: OrgIds,
    other: OrgIds,
    /// `invitee@example.com` (address verified), invited to Acme as a member.
    invitee: String,
}

async fn organization(app: &App, slug: &str, name: &str, invited: &str) -> OrgIds {
    let (auth, db) = (&app.auth, &app.db);
    let mut users = Vec::new();
    for role in ["owner", "admin", "member", "billing"] {
        users.push(stored_user(db, &format!("{role}@{slug}.example"), true).await);
    }
    let [owner, admin, member, billing] = <[String; 4]>::try_from(users).unwrap();
    let id = auth
        .create_organization_for(&owner, name, Some(slug))
        .await
        .unwrap()
        .id;
    for (user, role) in [
        (&admin, "admin"),
        (&member, "member"),
        (&billing, "billing"),
    ] {
        let added = db
            .add_member(&Member {
                organization_id: id.clone(),
                user_id: user.clone(),
                roles: vec![role.to_owned()],
                teams: Vec::new(),
                created_at: time::OffsetDateTime::now_utc(),
            })
            .await
            .unwrap();
        assert!(added);
    }
    let team = auth.create_team(&owner, &id, "red").await.unwrap().id;
    let invitation = auth
        .invite(
            Some(&owner),
            &InvitationSpec::to_organization(&id, invited),
            Some(ORIGIN),
        )
        .await
        .unwrap()
        .invitation
        .id;
    let me = fresh_session(auth, db, &owner).await;
    let permissions = ["member:read".to_owned()];
    let key = auth
        .create_api_key(&me, Some(&id), "ci", &permissions, None)
        .await
        .unwrap()
        .key
        .id;
    OrgIds {
        id,
        owner,
        admin,
        member,
        billing,
        team,
        invitation,
        key,
    }
}

async fn world(strategy: SessionStrategy) -> World {
    let app = app(strategy);
    let acme = organization(&app, "acme", "Acme", "invitee@example.com").await;
    let other = organization(&app, "other", "Other", "elsewhere@example.com").await;
    let invitee = stored_user(&app.db, "invitee@example.com", true).await;
    World {
        app,
        acme,
        other,
        invitee,
    }
}

/// Who sends a request: a member of Acme by role, or the invitee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Owner,
    Admin,
    Member,
    Billing,
    Invitee,
}

/// Whose ids the request's placeholders (`$org`, `$member` …) stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Acme,
    /// An organization the sender is no member of.
    Other,
    /// Ids that do not exist.
    Missing,
}

impl World {
    fn user(&self, who: Who) -> &str {
        match who {
            Who::Owner => &self.acme.owner,
            Who::Admin => &self.acme.admin,
            Who::Member => &self.acme.member,
            Who::Billing => &self.acme.billing,
            Who::Invitee => &self.invitee,
        }
    }

    /// `$name` of `target`'s organization; `$self` is the sender.
    fn placeholder(&self, name: &str, target: Target, who: Who) -> String {
        let missing = OrgIds {
            id: "00000000-0000-4000-8000-000000000000".into(),
            owner: "no-such-user".into(),
            admin: "no-such-user".into(),
            member: "no-such-user".into(),
            billing: "no-such-user".into(),
            team: "00000000-0000-4000-8000-000000000001".into(),
            invitation: "00000000-0000-4000-8000-000000000002".into(),
            key: "0123456789abcdef01234567".into(),
        };
        let ids = match target {
            Target::Acme => &self.acme,
            Target::Other => &self.other,
            Target::Missing => &missing,
        };
        match name {
            "org" => ids.id.clone(),
            "owner" => ids.owner.clone(),
            "admin" => ids.admin.clone(),
            "member" => ids.member.clone(),
            "billing" => ids.billing.clone(),
            "team" => ids.team.clone(),
            "invitation" => ids.invitation.clone(),
            "key" => ids.key.clone(),
            "self" => self.user(who).to_owned(),
            other => panic!("no placeholder ${other}"),
        }
    }

    /// `v` with every `"$name"` string replaced.
    fn fill(&self, v: &Value, target: Target, who: Who) -> Value {
        match v {
            Value::String(s) => match s.strip_prefix('$') {
                Some(name) => Value::String(self.placeholder(name, target, who)),
                None => v.clone(),
            },
            Value::Array(a) => a.iter().map(|x| self.fill(x, target, who)).collect(),
            Value::Object(o) => o
                .iter()
                .map(|(k, x)| (k.clone(), self.fill(x, target, who)))
                .collect(),
            _ => v.clone(),
        }
    }

    /// A session cookie of `who`, signed in just now.
    async fn cookie(&self, who: Who) -> String {
        let user = self.user(who);
        session_of(&self.app.auth, &self.app.db, user, Duration::ZERO, &["pwd"])
            .await
            .0
    }
}

/// How a change carries its CSRF token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Csrf {
    Valid,
    Wrong,
}

/// `route` with session `cookie`: a `GET` with `fields` as its query, a `POST` with them as
/// its JSON body (and the CSRF token); `raw` replaces the body.
async fn call(
    auth: &Auth,
    route: AccountRoute,
    method: http::Method,
    cookie: &str,
    fields: &Value,
    csrf: Csrf,
    raw: Option<&str>,
) -> TestResponse {
    let (csrf_cookie, token) = csrf_pair();
    let mut uri = url(route.path());
    let body = if method == http::Method::GET {
        let query: Vec<(String, String)> = fields
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                )
            })
            .collect();
        if !query.is_empty() {
            uri.push('?');
            uri.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query)
                    .finish(),
            );
        }
        String::new()
    } else {
        let mut body = fields.clone();
        body["csrfToken"] = json!(match csrf {
            Csrf::Valid => token,
            Csrf::Wrong => "b".repeat(64),
        });
        raw.map_or_else(|| body.to_string(), str::to_owned)
    };
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("cookie", format!("{cookie}; {csrf_cookie}"))
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let r = auth.handle_account(route, req).await;
    let (parts, body) = r.into_parts();
    let body = http_body_util::BodyExt::collect(body)
        .await
        .unwrap()
        .to_bytes();
    TestResponse {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// `route` as `who` of Acme with `fields` for `target`.
async fn ask(
    w: &World,
    route: AccountRoute,
    who: Who,
    target: Target,
    fields: &Value,
) -> TestResponse {
    let cookie = w.cookie(who).await;
    let fields = w.fill(fields, target, who);
    call(
        &w.app.auth,
        route,
        route.method(),
        &cookie,
        &fields,
        Csrf::Valid,
        None,
    )
    .await
}

/// One request and what it must answer: the status, and for a success the values at
/// these JSON pointers (placeholders filled), for a refusal the error.
struct Case {
    route: AccountRoute,
    who: Who,
    fields: Value,
    status: u16,
    error: Option<&'static str>,
    expect: Vec<(&'static str, Value)>,
}

fn ok(route: AccountRoute, who: Who, fields: Value, expect: &[(&'static str, Value)]) -> Case {
    Case {
        route,
        who,
        fields,
        status: 200,
        error: None,
        expect: expect.to_vec(),
    }
}

fn refused(route: AccountRoute, who: Who, fields: Value, status: u16, error: &'static str) -> Case {
    Case {
        route,
        who,
        fields,
        status,
        error: Some(error),
        expect: Vec::new(),
    }
}

fn cases() -> Vec<Case> {
    use AccountRoute as R;
    use Who::*;
    let org = |extra: Value| {
        let mut v = json!({ "organizationId": "$org" });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    vec![
        ok(
            R::Organizations,
            Owner,
            json!({}),
            &[
                ("/organizations/0/organization/id", json!("$org")),
                ("/organizations/0/organization/slug", json!("acme")),
                ("/organizations/0/organization/name", json!("Acme")),
                ("/organizations/0/roles", json!(["owner"])),
                ("/organizations/0/teams", json!([])),
                ("/organizations/0/permissions", json!(["*"])),
                ("/active", Value::Null),
                ("/invitations", json!([])),
            ],
        ),
        ok(
            R::Organizations,
            Invitee,
            json!({}),
            &[
                ("/organizations", json!([])),
                ("/invitations/0/id", json!("$invitation")),
                (
                    "/invitations/0/organization",
                    json!({ "id": "$org", "name": "Acme" }),
                ),
                ("/invitations/0/roles", json!(["member"])),
            ],
        ),
        ok(
            R::CreateOrganization,
            Member,
            json!({ "name": "New Co" }),
            &[("/slug", json!("new-co")), ("/name", json!("New Co"))],
        ),
        refused(
            R::CreateOrganization,
            Member,
            json!({ "name": "Dup", "slug": "other" }),
            409,
            "SlugTaken",
        ),
        refused(
            R::CreateOrganization,
            Member,
            json!({ "name": "" }),
            400,
            "InvalidValue",
        ),
        refused(
            R::CreateOrganization,
            Member,
            json!({}),
            400,
            "InvalidRequest",
        ),
        ok(
            R::SetActiveOrganization,
            Member,
            org(json!({})),
            &[("/active", json!("$org"))],
        ),
        ok(
            R::SetActiveOrganization,
            Member,
            json!({ "organizationId": null }),
            &[("/active", Value::Null)],
        ),
        ok(
            R::Members,
            Member,
            org(json!({})),
            &[
                ("/members/0/userId", json!("$owner")),
                ("/members/0/roles", json!(["owner"])),
                ("/members/2/userId", json!("$member")),
                ("/teams/0/name", json!("red")),
                ("/invitations/0/id", json!("$invitation")),
                ("/invitations/0/email", json!("invitee@example.com")),
                ("/invitations/0/status", json!("pending")),
            ],
        ),
        refused(R::Members, Billing, org(json!({})), 403, "Forbidden"),
        refused(R::Members, Member, json!({}), 400, "InvalidRequest"),
        ok(
            R::UpdateOrganization,
            Admin,
            org(json!({ "name": "Acme Two" })),
            &[("/name", json!("Acme Two")), ("/slug", json!("acme"))],
        ),
        refused(
            R::UpdateOrganization,
            Member,
            org(json!({ "name": "Mine" })),
            403,
            "Forbidden",
        ),
        refused(
            R::UpdateOrganization,
            Admin,
            org(json!({ "slug": "other" })),
            409,
            "SlugTaken",
        ),
        ok(
            R::DeleteOrganization,
            Owner,
            org(json!({})),
            &[("", json!({}))],
        ),
        refused(
            R::DeleteOrganization,
            Admin,
            org(json!({})),
            403,
            "Forbidden",
        ),
        ok(
            R::Invite,
            Admin,
            org(json!({ "email": "New@Example.com", "roles": ["billing"], "teams": ["$team"] })),
            &[
                ("/email", json!("new@example.com")),
                ("/roles", json!(["billing"])),
                ("/teams", json!(["$team"])),
                ("/status", json!("pending")),
                ("/mailed", json!(true)),
            ],
        ),
        refused(
            R::Invite,
            Member,
            org(json!({ "email": "new@example.com" })),
            403,
            "Forbidden",
        ),
        refused(
            R::Invite,
            Admin,
            org(json!({ "email": "new@example.com", "roles": ["owner"] })),
            403,
            "Forbidden",
        ),
        refused(
            R::Invite,
            Admin,
            org(json!({ "email": "not an address" })),
            400,
            "InvalidEmail",
        ),
        ok(
            R::RevokeInvitation,
            Admin,
            json!({ "invitationId": "$invitation" }),
            &[("", json!({}))],
        ),
        refused(
            R::RevokeInvitation,
            Member,
            json!({ "invitationId": "$invitation" }),
            403,
            "Forbidden",
        ),
        ok(
            R::AcceptInvitation,
            Invitee,
            json!({ "invitationId": "$invitation" }),
            &[
                ("/organization/id", json!("$org")),
                ("/roles", json!(["member"])),
            ],
        ),
        // Another address's invitation is as unknown as one that does not exist.
        refused(
            R::AcceptInvitation,
            Member,
            json!({ "invitationId": "$invitation" }),
            400,
            "InvalidInvitation",
        ),
        ok(
            R::SetMemberRoles,
            Admin,
            org(json!({ "userId": "$member", "roles": ["billing"] })),
            &[("", json!({}))],
        ),
        refused(
            R::SetMemberRoles,
            Member,
            org(json!({ "userId": "$billing", "roles": ["member"] })),
            403,
            "Forbidden",
        ),
        refused(
            R::SetMemberRoles,
            Admin,
            org(json!({ "userId": "$member", "roles": ["owner"] })),
            403,
            "Forbidden",
        ),
        refused(
            R::SetMemberRoles,
            Owner,
            org(json!({ "userId": "$owner", "roles": ["admin"] })),
            409,
            "LastOwner",
        ),
        ok(
            R::RemoveMember,
            Admin,
            org(json!({ "userId": "$member" })),
            &[("", json!({}))],
        ),
        ok(
            R::RemoveMember,
            Member,
            org(json!({ "userId": "$self" })),
            &[("", json!({}))],
        ),
        refused(
            R::RemoveMember,
            Member,
            org(json!({ "userId": "$billing" })),
            403,
            "Forbidden",
        ),
        refused(
            R::RemoveMember,
            Admin,
            org(json!({ "userId": "$owner" })),
            403,
            "Forbidden",
        ),
        refused(
            R::RemoveMember,
            Owner,
            org(json!({ "userId": "$self" })),
            409,
            "LastOwner",
        ),
        ok(
            R::SetMemberTeams,
            Admin,
            org(json!({ "userId": "$member", "teams": ["$team"] })),
            &[("", json!({}))],
        ),
        refused(
            R::SetMemberTeams,
            Member,
            org(json!({ "userId": "$member", "teams": ["$team"] })),
            403,
            "Forbidden",
        ),
        ok(
            R::CreateTeam,
            Admin,
            org(json!({ "name": "blue" })),
            &[("/name", json!("blue")), ("/organizationId", json!("$org"))],
        ),
        refused(
            R::CreateTeam,
            Member,
            org(json!({ "name": "blue" })),
            403,
            "Forbidden",
        ),
        ok(
            R::DeleteTeam,
            Admin,
            org(json!({ "teamId": "$team" })),
            &[("", json!({}))],
        ),
        refused(
            R::DeleteTeam,
            Member,
            org(json!({ "teamId": "$team" })),
            403,
            "Forbidden",
        ),
        ok(
            R::ApiKeys,
            Owner,
            org(json!({})),
            &[
                ("/0/id", json!("$key")),
                ("/0/name", json!("ci")),
                ("/0/userId", json!("$owner")),
                ("/0/organizationId", json!("$org")),
                ("/0/permissions", json!(["member:read"])),
                ("/0/expires", Value::Null),
                ("/0/revokedAt", Value::Null),
            ],
        ),
        // A member without `api_key:manage` sees the keys they made: none.
        ok(R::ApiKeys, Member, org(json!({})), &[("", json!([]))]),
        // Without an organization, the user's own keys.
        ok(R::ApiKeys, Owner, json!({}), &[("", json!([]))]),
        ok(
            R::CreateApiKey,
            Admin,
            org(json!({ "name": "deploy", "permissions": ["member:read"], "expiresInDays": 30 })),
            &[
                ("/name", json!("deploy")),
                ("/organizationId", json!("$org")),
                ("/permissions", json!(["member:read"])),
                ("/userId", json!("$admin")),
            ],
        ),
        refused(
            R::CreateApiKey,
            Member,
            org(json!({ "name": "x", "permissions": ["member:invite"] })),
            403,
            "Forbidden",
        ),
        refused(
            R::CreateApiKey,
            Member,
            json!({ "name": "x", "expiresInDays": 0 }),
            400,
            "InvalidValue",
        ),
        ok(
            R::RevokeApiKey,
            Owner,
            json!({ "id": "$key" }),
            &[("", json!({}))],
        ),
        // Without `api_key:manage`, another member's key is not found.
        refused(
            R::RevokeApiKey,
            Member,
            json!({ "id": "$key" }),
            404,
            "NotFound",
        ),
    ]
}

#[tokio::test]
async fn every_route_answers_its_members_and_refuses_what_they_may_not_do() {
    for strategy in [SessionStrategy::Database, SessionStrategy::Jwt] {
        for case in cases() {
            let w = world(strategy).await;
            let r = ask(&w, case.route, case.who, Target::Acme, &case.fields).await;
            let context = format!(
                "{strategy:?} {:?} as {:?} {}",
                case.route, case.who, case.fields
            );
            assert_eq!(r.status, case.status, "{context}: {}", r.text());
            assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
            let v = r.json();
            if let Some(error) = case.error {
                assert_eq!(v["error"], error, "{context}: {v}");
            }
            for (pointer, want) in &case.expect {
                let want = w.fill(want, Target::Acme, case.who);
                assert_eq!(
                    v.pointer(pointer),
                    Some(&want),
                    "{context}: {pointer} of {v}"
                );
            }
            // Nothing secret is ever in an answer.
            let text = r.text();
            for secret in ["tokenHash", "\"hash\"", "token="] {
                assert!(!text.contains(secret), "{context}: {text}");
            }
        }
    }
}

/// What a refused request must leave of an organization as it was.
async fn snapshot(w: &World, ids: &OrgIds) -> Value {
    let db = &w.app.db;
    let org = db.get_organization(&ids.id).await.unwrap();
    let members = db.list_members(&ids.id).await.unwrap();
    let teams = db.list_teams(&ids.id).await.unwrap();
    let invitations = db.list_invitations(Some(&ids.id)).await.unwrap();
    let key = db.get_api_key(&ids.key).await.unwrap();
    json!({
        "organization": org,
        "members": members,
        "teams": teams,
        "invitations": invitations,
        "key": key,
    })
}

#[tokio::test]
async fn another_organizations_ids_answer_as_ids_that_do_not_exist() {
    use AccountRoute as R;
    let org = json!({ "organizationId": "$org" });
    let with = |extra: Value| {
        let mut v = org.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    // The owner of Acme, who holds every permission there, names the other organization.
    for (route, fields, status, error) in [
        (R::SetActiveOrganization, org.clone(), 404, "NotFound"),
        (R::Members, org.clone(), 404, "NotFound"),
        (
            R::UpdateOrganization,
            with(json!({ "name": "Mine" })),
            404,
            "NotFound",
        ),
        (R::DeleteOrganization, org.clone(), 404, "NotFound"),
        (
            R::Invite,
            with(json!({ "email": "new@example.com" })),
            404,
            "NotFound",
        ),
        (
            R::RevokeInvitation,
            json!({ "invitationId": "$invitation" }),
            404,
            "NotFound",
        ),
        (
            R::AcceptInvitation,
            json!({ "invitationId": "$invitation" }),
            400,
            "InvalidInvitation",
        ),
        (
            R::SetMemberRoles,
            with(json!({ "userId": "$member", "roles": ["member"] })),
            404,
            "NotFound",
        ),
        (
            R::RemoveMember,
            with(json!({ "userId": "$member" })),
            404,
            "NotFound",
        ),
        (
            R::RemoveMember,
            with(json!({ "userId": "$self" })),
            404,
            "NotFound",
        ),
        (
            R::SetMemberTeams,
            with(json!({ "userId": "$member", "teams": [] })),
            404,
            "NotFound",
        ),
        (
            R::CreateTeam,
            with(json!({ "name": "blue" })),
            404,
            "NotFound",
        ),
        (
            R::DeleteTeam,
            with(json!({ "teamId": "$team" })),
            404,
            "NotFound",
        ),
        (R::ApiKeys, org.clone(), 404, "NotFound"),
        (
            R::CreateApiKey,
            with(json!({ "name": "x", "permissions": ["member:read"] })),
            404,
            "NotFound",
        ),
        (R::RevokeApiKey, json!({ "id": "$key" }), 404, "NotFound"),
    ] {
        let w = world(SessionStrategy::Database).await;
        let before = snapshot(&w, &w.other).await;
        let theirs = ask(&w, route, Who::Owner, Target::Other, &fields).await;
        let missing = ask(&w, route, Who::Owner, Target::Missing, &fields).await;
        let context = format!("{route:?} {fields}");
        assert_eq!(theirs.status, status, "{context}: {}", theirs.text());
        assert_eq!(theirs.json(), json!({ "error": error }), "{context}");
        assert_eq!(
            (theirs.status, theirs.text()),
            (missing.status, missing.text()),
            "{context}: another organization's ids answer as missing ones"
        );
        assert_eq!(snapshot(&w, &w.other).await, before, "{context}: changed");
    }
}

/// A valid request to each route, for the checks every route makes before its own.
fn any_request(route: AccountRoute) -> Value {
    use AccountRoute as R;
    match route {
        R::Organizations => json!({}),
        R::CreateOrganization => json!({ "name": "New" }),
        R::SetActiveOrganization | R::Members | R::DeleteOrganization => {
            json!({ "organizationId": "$org" })
        }
        R::UpdateOrganization => json!({ "organizationId": "$org", "name": "New" }),
        R::Invite => json!({ "organizationId": "$org", "email": "new@example.com" }),
        R::RevokeInvitation | R::AcceptInvitation => json!({ "invitationId": "$invitation" }),
        R::SetMemberRoles => {
            json!({ "organizationId": "$org", "userId": "$member", "roles": ["member"] })
        }
        R::RemoveMember => json!({ "organizationId": "$org", "userId": "$member" }),
        R::SetMemberTeams => json!({ "organizationId": "$org", "userId": "$member", "teams": [] }),
        R::CreateTeam => json!({ "organizationId": "$org", "name": "blue" }),
        R::DeleteTeam => json!({ "organizationId": "$org", "teamId": "$team" }),
        R::ApiKeys => json!({ "organizationId": "$org" }),
        R::CreateApiKey => json!({ "name": "x" }),
        R::RevokeApiKey => json!({ "id": "$key" }),
        other => panic!("{other:?} is not an organization route"),
    }
}

/// The routes of organizations and API keys.
fn organization_routes() -> impl Iterator<Item = AccountRoute> {
    AccountRoute::ALL.into_iter().filter(|r| {
        let path = r.path();
        path.starts_with("/account/organizations") || path.starts_with("/account/api-keys")
    })
}

#[tokio::test]
async fn every_route_refuses_the_signed_out_a_missing_csrf_token_and_bad_bodies() {
    let w = world(SessionStrategy::Database).await;
    let auth = &w.app.auth;
    let owner = w.cookie(Who::Owner).await;
    let before = snapshot(&w, &w.acme).await;
    let oversized = format!("{{\"name\":\"{}\"}}", "x".repeat(100 * 1024));
    assert_eq!(organization_routes().count(), 17);
    for route in organization_routes() {
        let fields = w.fill(&any_request(route), Target::Acme, Who::Owner);
        let post = route.method() == http::Method::POST;
        let mut refusals = vec![
            (
                "signed out",
                "",
                route.method(),
                Csrf::Valid,
                None,
                401,
                "SessionRequired",
            ),
            (
                "another method",
                owner.as_str(),
                if post {
                    http::Method::GET
                } else {
                    http::Method::POST
                },
                Csrf::Valid,
                None,
                405,
                "MethodNotAllowed",
            ),
        ];
        if post {
            refusals.extend([
                (
                    "a wrong CSRF token",
                    owner.as_str(),
                    http::Method::POST,
                    Csrf::Wrong,
                    None,
                    403,
                    "MissingCSRF",
                ),
                (
                    "bad JSON",
                    owner.as_str(),
                    http::Method::POST,
                    Csrf::Valid,
                    Some("{"),
                    400,
                    "InvalidRequest",
                ),
                (
                    "a body over the limit",
                    owner.as_str(),
                    http::Method::POST,
                    Csrf::Valid,
                    Some(oversized.as_str()),
                    413,
                    "BodyTooLarge",
                ),
            ]);
        }
        for (what, cookie, method, csrf, raw, status, error) in refusals {
            let r = call(auth, route, method, cookie, &fields, csrf, raw).await;
            assert_eq!(
                (r.status.as_u16(), r.json()),
                (status, json!({ "error": error })),
                "{route:?}: {what}"
            );
        }
    }
    assert_eq!(
        snapshot(&w, &w.acme).await,
        before,
        "a refusal changed something"
    );
}

#[tokio::test]
async fn the_active_organization_is_the_sessions_and_checked_on_every_read() {
    for strategy in [SessionStrategy::Database, SessionStrategy::Jwt] {
        let w = world(strategy).await;
        let auth = &w.app.auth;
        let cookie = w.cookie(Who::Member).await;
        let set = json!({ "organizationId": w.acme.id });
        let r = call(
            auth,
            AccountRoute::SetActiveOrganization,
            http::Method::POST,
            &cookie,
            &set,
            Csrf::Valid,
            None,
        )
        .await;
        assert_eq!(r.json(), json!({ "active": w.acme.id }), "{strategy:?}");
        // A JWT carries it: the answer sets the new session cookie; a database session
        // keeps it in the store.
        let cookie = match r.cookie(SESSION_COOKIE) {
            Some(jwt) => {
                assert_eq!(strategy, SessionStrategy::Jwt);
                format!("{SESSION_COOKIE}={jwt}")
            }
            None => {
                assert_eq!(strategy, SessionStrategy::Database);
                cookie
            }
        };
        let list = |cookie: String| async move {
            call(
                auth,
                AccountRoute::Organizations,
                http::Method::GET,
                &cookie,
                &json!({}),
                Csrf::Valid,
                None,
            )
            .await
            .json()
        };
        assert_eq!(
            list(cookie.clone()).await["active"],
            json!(w.acme.id),
            "{strategy:?}"
        );
        // Removed from the organization, the member has no active organization any more.
        auth.remove_member(&w.acme.owner, &w.acme.id, &w.acme.member)
            .await
            .unwrap();
        assert_eq!(list(cookie).await["active"], Value::Null, "{strategy:?}");
    }
}

#[tokio::test]
async fn an_api_keys_text_is_shown_once_and_never_listed() {
    let w = world(SessionStrategy::Database).await;
    let auth = &w.app.auth;
    let cookie = w.cookie(Who::Admin).await;
    let fields =
        json!({ "name": "deploy", "organizationId": w.acme.id, "permissions": ["member:read"] });
    let r = call(
        auth,
        AccountRoute::CreateApiKey,
        http::Method::POST,
        &cookie,
        &fields,
        Csrf::Valid,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("no-store")
    );
    let made = r.json();
    let id = made["id"].as_str().unwrap();
    let text = made["key"].as_str().unwrap();
    assert_eq!(made["prefix"], format!("ak_{id}"));
    assert!(text.starts_with(&format!("ak_{id}_")), "{text}");
    let stored = w.app.db.get_api_key(id).await.unwrap().unwrap();

    // The key works, as the admin within its permissions.
    let mut headers = http::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {text}").parse().unwrap());
    let principal = auth
        .principal(&url("/api").parse().unwrap(), &headers)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(principal.user_id, w.acme.admin);
    assert!(principal.has_permission("member:read"));
    assert!(!principal.has_permission("member:invite"));

    // Listed (by its maker, by the owner), it never shows its text or hash.
    for (who, query) in [
        (Who::Admin, json!({ "organizationId": w.acme.id })),
        (Who::Owner, json!({ "organizationId": w.acme.id })),
    ] {
        let cookie = w.cookie(who).await;
        let r = call(
            auth,
            AccountRoute::ApiKeys,
            http::Method::GET,
            &cookie,
            &query,
            Csrf::Valid,
            None,
        )
        .await;
        let listed = r.text();
        assert!(listed.contains(id), "{who:?}: {listed}");
        assert!(!listed.contains(text), "{who:?}: {listed}");
        assert!(!listed.contains(&stored.hash), "{who:?}: {listed}");
        assert!(!listed.contains("\"key\""), "{who:?}: {listed}");
    }

    // Revoked, it is listed as such and no longer works.
    let r = call(
        auth,
        AccountRoute::RevokeApiKey,
        http::Method::POST,
        &cookie,
        &json!({ "id": id }),
        Csrf::Valid,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = call(
        auth,
        AccountRoute::ApiKeys,
        http::Method::GET,
        &cookie,
        &json!({ "organizationId": w.acme.id }),
        Csrf::Valid,
        None,
    )
    .await;
    let listed = r.json();
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id)
        .unwrap();
    assert!(entry["revokedAt"].is_string(), "{entry}");
    assert!(
        auth.principal(&url("/api").parse().unwrap(), &headers)
            .await
            .is_err()
    );
}

/// `GET` (or with `form`, `POST`) of `<basePath>/invitation…` with `cookie`; `json` asks
/// for JSON.
async fn open_invitation(
    auth: &Auth,
    link: &str,
    cookie: &str,
    form_fields: Option<&[(&str, &str)]>,
    json: bool,
) -> TestResponse {
    let (csrf_cookie, csrf) = csrf_pair();
    let cookie = format!("{cookie}; {csrf_cookie}");
    let req = match form_fields {
        None => {
            let mut req = http::Request::get(link).header("cookie", cookie);
            if json {
                req = req.header("accept", "application/json");
            }
            req.body(empty()).unwrap()
        }
        Some(fields) => {
            let mut pairs = vec![("csrfToken", csrf.as_str())];
            pairs.extend_from_slice(fields);
            let req = http::Request::post(url("/auth/invitation")).header("cookie", cookie);
            if json {
                let body: serde_json::Map<String, Value> = pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), json!(v)))
                    .collect();
                req.header("content-type", "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from(
                        Value::Object(body).to_string(),
                    )))
                    .unwrap()
            } else {
                req.header("content-type", "application/x-www-form-urlencoded")
                    .body(form(&pairs))
                    .unwrap()
            }
        }
    };
    send(auth, req).await
}

/// Signs `email` in with a magic link that comes back to `callback`: the session cookie.
async fn sign_in_by_mail(app: &App, email: &str, callback: &str) -> String {
    let (csrf, token) = csrf_pair();
    let r = send(
        &app.auth,
        post("/auth/signin/email")
            .header("cookie", csrf)
            .body(form(&[
                ("csrfToken", &token),
                ("email", email),
                ("callbackUrl", callback),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302, "{}", r.text());
    let link = app.mail.last(email, LinkPurpose::SignIn);
    let r = send(&app.auth, http::Request::get(&link).body(empty()).unwrap()).await;
    assert_eq!(r.location(), Some(callback), "back to the invitation");
    format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap())
}

#[tokio::test]
async fn an_invitation_goes_from_its_mail_to_a_membership_once_and_for_its_address_only() {
    for strategy in [SessionStrategy::Database, SessionStrategy::Jwt] {
        let (_guard, lines) = TracingCapture::install();
        let w = world(strategy).await;
        let (auth, db) = (&w.app.auth, &w.app.db);
        let context = format!("{strategy:?}");

        // The admin invites a new address as billing: the link goes by mail only.
        let admin = w.cookie(Who::Admin).await;
        let fields = json!({ "organizationId": w.acme.id, "email": "new@example.com", "roles": ["billing"] });
        let r = call(
            auth,
            AccountRoute::Invite,
            http::Method::POST,
            &admin,
            &fields,
            Csrf::Valid,
            None,
        )
        .await;
        assert_eq!(r.status, 200, "{context}: {}", r.text());
        let link = w.app.mail.last("new@example.com", LinkPurpose::Invitation);
        let token = query_param(&link, "token");
        let first_token = token.clone();
        assert!(link.starts_with(&url("/auth/invitation?token=")), "{link}");
        assert!(
            !r.text().contains(&token),
            "{context}: the answer holds the token"
        );

        // Signed out: to sign in, and back to the link.
        let r = open_invitation(auth, &link, "", None, false).await;
        let location = r.location().unwrap();
        assert!(
            location.starts_with(&url("/auth/signin?callbackUrl=")),
            "{location}"
        );
        assert_eq!(query_param(location, "callbackUrl"), link, "{context}");
        let r = open_invitation(auth, &link, "", None, true).await;
        assert_eq!(
            (r.status.as_u16(), r.json()),
            (401, json!({ "error": "SessionRequired" }))
        );

        // Signed in (a new user, by a magic link) with the invited address: the offer.
        let cookie = sign_in_by_mail(&w.app, "new@example.com", &link).await;
        let new_user = db
            .get_user_by_email("new@example.com")
            .await
            .unwrap()
            .unwrap()
            .id;
        let r = open_invitation(auth, &link, &cookie, None, false).await;
        assert_eq!(r.status, 200, "{context}: {}", r.text());
        let html = r.text();
        assert!(
            html.contains("Join Acme") && html.contains("as billing."),
            "{html}"
        );
        assert!(
            html.contains(&format!("action=\"{}\"", url("/auth/invitation"))),
            "{html}"
        );
        // The token only in the form that posts it back.
        assert_eq!(html.matches(&token).count(), 1, "{html}");
        assert!(
            html.contains(&format!("name=\"token\" value=\"{token}\"")),
            "{html}"
        );
        assert!(
            r.headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("nonce-")
        );
        let r = open_invitation(auth, &link, &cookie, None, true).await;
        assert_eq!(
            r.json()["organization"],
            json!({ "id": w.acme.id, "name": "Acme" })
        );
        assert_eq!(r.json()["roles"], json!(["billing"]));

        // Without the CSRF token nothing happens.
        let (_, csrf) = csrf_pair();
        let r = send(
            auth,
            post("/auth/invitation")
                .header("cookie", &cookie)
                .body(form(&[("csrfToken", &csrf), ("token", &token)]))
                .unwrap(),
        )
        .await;
        assert_eq!(
            r.location(),
            Some(url("/auth/signin?error=MissingCSRF").as_str()),
            "{context}"
        );
        assert!(
            db.get_member(&w.acme.id, &new_user)
                .await
                .unwrap()
                .is_none()
        );

        // Accepted: a member with the invited role, Acme the session's active organization.
        let r = open_invitation(auth, &link, &cookie, Some(&[("token", &token)]), false).await;
        assert_eq!(
            r.location(),
            Some(url("/auth/account").as_str()),
            "{context}"
        );
        let member = db.get_member(&w.acme.id, &new_user).await.unwrap().unwrap();
        assert_eq!(member.roles, ["billing"], "{context}");
        let cookie = match r.cookie(SESSION_COOKIE) {
            Some(jwt) => format!("{SESSION_COOKIE}={jwt}"),
            None => cookie,
        };
        let listed = call(
            auth,
            AccountRoute::Organizations,
            http::Method::GET,
            &cookie,
            &json!({}),
            Csrf::Valid,
            None,
        )
        .await;
        assert_eq!(listed.json()["active"], json!(w.acme.id), "{context}");

        // Once only: the page says so, JSON too.
        let r = open_invitation(auth, &link, &cookie, Some(&[("token", &token)]), false).await;
        assert_eq!(r.status, 400, "{context}");
        assert!(r.text().contains("This invitation is not valid"));
        assert!(!r.text().contains(&token));
        let r = open_invitation(auth, &link, &cookie, Some(&[("token", &token)]), true).await;
        assert_eq!(
            (r.status.as_u16(), r.json()),
            (400, json!({ "error": "InvalidInvitation" }))
        );
        let r = open_invitation(auth, &link, &cookie, None, false).await;
        assert_eq!(r.status, 400, "{context}: the used link's page");

        // Another signed-in address: refused, and no membership.
        let fields = json!({ "organizationId": w.acme.id, "email": "second@example.com" });
        let r = call(
            auth,
            AccountRoute::Invite,
            http::Method::POST,
            &admin,
            &fields,
            Csrf::Valid,
            None,
        )
        .await;
        assert_eq!(r.status, 200);
        let link = w
            .app
            .mail
            .last("second@example.com", LinkPurpose::Invitation);
        let token = query_param(&link, "token");
        let outsider = session_of(auth, db, &w.other.owner, Duration::ZERO, &["pwd"])
            .await
            .0;
        let r = open_invitation(auth, &link, &outsider, None, false).await;
        assert_eq!(r.status, 403, "{context}");
        assert!(r.text().contains("This invitation is for someone else"));
        assert!(!r.text().contains("Acme") && !r.text().contains(&token));
        let r = open_invitation(auth, &link, &outsider, Some(&[("token", &token)]), false).await;
        assert_eq!(r.status, 403, "{context}");
        let r = open_invitation(auth, &link, &outsider, Some(&[("token", &token)]), true).await;
        assert_eq!(
            (r.status.as_u16(), r.json()),
            (403, json!({ "error": "WrongAddress" }))
        );
        assert!(
            db.get_member(&w.acme.id, &w.other.owner)
                .await
                .unwrap()
                .is_none()
        );
        // The invitation is still there for its address.
        let open = db
            .list_invitations_for_email("second@example.com")
            .await
            .unwrap();
        assert_eq!(open.len(), 1);

        // A link cut short, or made up.
        for bad in ["", "abc", &"f".repeat(64)] {
            let r = open_invitation(
                auth,
                &url(&format!("/auth/invitation?token={bad}")),
                &outsider,
                None,
                false,
            )
            .await;
            assert_eq!(r.status, 400, "{context}: {bad:?}");
        }

        // No token of the two links reached a log line.
        let lines = lines.lock().unwrap();
        for token in [first_token, token] {
            assert!(
                lines.iter().all(|l| !l.contains(&token)),
                "{context}: {lines:#?}"
            );
        }
    }
}
