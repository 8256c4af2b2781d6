//! Organizations through the `Auth` API: making them, roles and the grant rule, the last
//! owner, invitations bound to their address, the active organization of JWT and database
//! sessions, API keys and who a request acts as — and, as an attacker inside or outside an
//! organization would try them, every way past those rules; each refusal leaves the
//! organization as it was.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::*;
use authcore::account::{AccountError, CurrentSession, InvitationSpec, KeyRefused};
use authcore::adapter::{Adapter, ApiKeyStore, MemoryAdapter, OrganizationStore};
use authcore::organizations::Organizations;
use authcore::providers::email::LinkPurpose;
use authcore::{Auth, SessionStrategy, SignUpPolicy};
use http::HeaderMap;

/// An app with organizations (a `billing` role), magic links into `mailbox`, and
/// `strategy`; Olive owns Acme, where Adam is an admin, Mia a member and Bill in billing;
/// Eve owns Evil.
struct App {
    auth: Auth,
    db: MemoryAdapter,
    mailbox: Mailbox,
    acme: String,
    evil: String,
    olive: String,
    adam: String,
    mia: String,
    bill: String,
    eve: String,
}

fn v(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

async fn app_with(strategy: SessionStrategy, policy: SignUpPolicy) -> App {
    let db = MemoryAdapter::new();
    let mailbox = Mailbox::default();
    let (auth, _) = auth_with(
        builder()
            .url(format!("{ORIGIN}/auth"))
            .provider(mailbox.provider())
            .adapter(db.clone())
            .session_strategy(strategy)
            .sign_up(policy)
            .organizations(
                Organizations::new()
                    .role("billing", ["billing:read", "billing:write"])
                    .role("member", ["project:read"]),
            ),
    );
    let mut ids = Vec::new();
    for name in ["olive", "adam", "mia", "bill", "eve"] {
        ids.push(stored_user(&db, &format!("{name}@example.com"), true).await);
    }
    let [olive, adam, mia, bill, eve] = <[String; 5]>::try_from(ids).unwrap();
    let acme = auth
        .create_organization_for(&olive, "Acme", None)
        .await
        .unwrap()
        .id;
    let evil = auth
        .create_organization_for(&eve, "Evil Corp", Some("evil"))
        .await
        .unwrap()
        .id;
    for (user, roles) in [(&adam, "admin"), (&mia, "member"), (&bill, "billing")] {
        let email = db.get_user(user).await.unwrap().unwrap().email.unwrap();
        let sent = auth
            .invite(
                Some(&olive),
                &InvitationSpec::to_organization(&acme, &email).roles([roles]),
                None,
            )
            .await
            .unwrap();
        let token = sent.link.split("token=").nth(1).unwrap().to_owned();
        auth.accept_invitation(user, &token).await.unwrap();
    }
    App {
        auth,
        db,
        mailbox,
        acme,
        evil,
        olive,
        adam,
        mia,
        bill,
        eve,
    }
}

async fn app() -> App {
    app_with(SessionStrategy::Jwt, SignUpPolicy::Open).await
}

impl App {
    fn store(&self) -> &dyn OrganizationStore {
        &self.db
    }

    async fn roles(&self, org: &str, user: &str) -> Option<Vec<String>> {
        self.store()
            .get_member(org, user)
            .await
            .unwrap()
            .map(|m| m.roles)
    }

    /// Every membership of both organizations, to compare before and after an attack.
    async fn members(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for org in [&self.acme, &self.evil] {
            for m in self.store().list_members(org).await.unwrap() {
                out.push((format!("{}:{}", org, m.user_id), m.roles));
            }
        }
        out
    }

    async fn me(&self, user: &str) -> CurrentSession {
        fresh_session(&self.auth, &self.db, user).await
    }
}

fn headers(cookie: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(http::header::COOKIE, cookie.parse().unwrap());
    h
}

fn bearer(key: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        http::header::AUTHORIZATION,
        format!("Bearer {key}").parse().unwrap(),
    );
    h
}

fn uri() -> http::Uri {
    url("/api/things").parse().unwrap()
}

#[tokio::test]
async fn members_have_the_roles_they_were_invited_with() {
    let a = app().await;
    for (user, want) in [
        (&a.olive, v(&["owner"])),
        (&a.adam, v(&["admin"])),
        (&a.mia, v(&["member"])),
        (&a.bill, v(&["billing"])),
    ] {
        assert_eq!(a.roles(&a.acme, user).await, Some(want));
    }
    let list = a.auth.organizations_of(&a.bill).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].organization.slug, "acme");
    assert!(list[0].permissions.contains(&"billing:write".to_owned()));
    let members = a.auth.members(&a.mia, &a.acme).await.unwrap();
    assert_eq!(members.len(), 4);
}

/// Grants above one's own, and changes to someone above: refused, nothing changed.
#[tokio::test]
async fn nobody_grants_above_their_own_roles() {
    let a = app().await;
    let before = a.members().await;
    let mails = a.mailbox.count();
    for (actor, target, roles, want) in [
        (&a.mia, &a.mia, &["admin"][..], AccountError::Forbidden),
        (&a.mia, &a.mia, &["owner"], AccountError::Forbidden),
        (&a.bill, &a.bill, &["admin"], AccountError::Forbidden),
        (&a.adam, &a.adam, &["owner"], AccountError::Forbidden),
        (&a.adam, &a.mia, &["owner"], AccountError::Forbidden),
        (&a.adam, &a.olive, &["member"], AccountError::Forbidden),
        (&a.mia, &a.bill, &["member"], AccountError::Forbidden),
        (
            &a.adam,
            &a.mia,
            &["ghost"],
            AccountError::InvalidValue(String::new()),
        ),
        (&a.eve, &a.mia, &["admin"], AccountError::NotFound),
    ] {
        let got = a
            .auth
            .set_member_roles(actor, &a.acme, target, &v(roles))
            .await
            .unwrap_err();
        assert_eq!(
            std::mem::discriminant(&got),
            std::mem::discriminant(&want),
            "{actor} gives {target} {roles:?}: {got:?}"
        );
    }
    // Invitations follow the same rule.
    for (inviter, roles) in [(&a.adam, "owner"), (&a.mia, "member"), (&a.bill, "admin")] {
        let spec = InvitationSpec::to_organization(&a.acme, "new@example.com").roles([roles]);
        assert!(
            a.auth.invite(Some(inviter), &spec, None).await.is_err(),
            "{inviter} invites as {roles}"
        );
    }
    assert_eq!(a.members().await, before);
    assert_eq!(a.mailbox.count(), mails, "no refused invitation was mailed");
    // The rule lets through what it should (so the refusals above mean something).
    a.auth
        .set_member_roles(&a.adam, &a.acme, &a.mia, &v(&["billing", "member"]))
        .await
        .unwrap();
    a.auth
        .set_member_roles(&a.olive, &a.acme, &a.adam, &v(&["owner"]))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_organization_always_keeps_an_owner() {
    let a = app().await;
    assert!(matches!(
        a.auth.remove_member(&a.olive, &a.acme, &a.olive).await,
        Err(AccountError::LastOwner)
    ));
    assert!(matches!(
        a.auth
            .set_member_roles(&a.olive, &a.acme, &a.olive, &v(&["admin"]))
            .await,
        Err(AccountError::LastOwner)
    ));
    // An admin cannot remove the owner either (above them).
    assert!(matches!(
        a.auth.remove_member(&a.adam, &a.acme, &a.olive).await,
        Err(AccountError::Forbidden)
    ));
    assert_eq!(a.roles(&a.acme, &a.olive).await, Some(v(&["owner"])));
    // With a second owner the first may leave.
    a.auth
        .set_member_roles(&a.olive, &a.acme, &a.adam, &v(&["owner"]))
        .await
        .unwrap();
    a.auth
        .remove_member(&a.olive, &a.acme, &a.olive)
        .await
        .unwrap();
    assert_eq!(a.roles(&a.acme, &a.olive).await, None);
}

/// Another organization's members, invitations and keys by id answer as if they did not
/// exist.
#[tokio::test]
async fn another_organization_is_out_of_reach() {
    let a = app().await;
    let before = a.members().await;
    assert!(matches!(
        a.auth.members(&a.adam, &a.evil).await,
        Err(AccountError::NotFound)
    ));
    assert!(matches!(
        a.auth.invitations(Some(&a.adam), Some(&a.evil)).await,
        Err(AccountError::NotFound)
    ));
    assert!(matches!(
        a.auth.remove_member(&a.olive, &a.evil, &a.eve).await,
        Err(AccountError::NotFound)
    ));
    assert!(matches!(
        a.auth.api_keys(&a.olive, Some(&a.evil)).await,
        Err(AccountError::NotFound)
    ));
    let spec = InvitationSpec::to_organization(&a.evil, "friend@example.com");
    assert!(a.auth.invite(Some(&a.olive), &spec, None).await.is_err());
    // Eve's invitation cannot be revoked from Acme.
    let eves = a
        .auth
        .invite(Some(&a.eve), &spec, None)
        .await
        .unwrap()
        .invitation;
    assert!(matches!(
        a.auth.revoke_invitation(Some(&a.olive), &eves.id).await,
        Err(AccountError::NotFound)
    ));
    let eve_me = a.me(&a.eve).await;
    let eve_key = a
        .auth
        .create_api_key(&eve_me, Some(&a.evil), "ci", &v(&["billing:read"]), None)
        .await
        .unwrap();
    assert!(matches!(
        a.auth.revoke_api_key(&a.olive, &eve_key.key.id).await,
        Err(AccountError::NotFound)
    ));
    assert_eq!(a.members().await, before);
    assert!(
        a.db.get_api_key(&eve_key.key.id)
            .await
            .unwrap()
            .unwrap()
            .revoked_at
            .is_none()
    );
}

/// An invitation is accepted once, by its address, while open.
#[tokio::test]
async fn invitations_are_single_use_bound_and_expire() {
    let a = app().await;
    let new = stored_user(&a.db, "new@example.com", true).await;
    let other = stored_user(&a.db, "other@example.com", true).await;
    let spec = InvitationSpec::to_organization(&a.acme, "New@Example.com").roles(["billing"]);
    let sent = a.auth.invite(Some(&a.adam), &spec, None).await.unwrap();
    assert!(sent.mailed);
    let link = a.mailbox.last("new@example.com", LinkPurpose::Invitation);
    assert_eq!(link, sent.link);
    let token = link.split("token=").nth(1).unwrap().to_owned();
    assert!(
        !format!("{sent:?}").contains(&token),
        "Debug hides the link"
    );
    assert!(!format!("{:?}", sent.invitation).contains(&token));

    // Another address with the right link: refused, no membership.
    assert!(matches!(
        a.auth.accept_invitation(&other, &token).await,
        Err(AccountError::WrongAddress)
    ));
    assert_eq!(a.roles(&a.acme, &other).await, None);
    // A forged token.
    assert!(matches!(
        a.auth.accept_invitation(&new, &"0".repeat(64)).await,
        Err(AccountError::InvalidInvitation)
    ));
    assert!(matches!(
        a.auth.accept_invitation(&new, "").await,
        Err(AccountError::InvalidInvitation)
    ));
    // The invited address, once.
    a.auth.accept_invitation(&new, &token).await.unwrap();
    assert_eq!(a.roles(&a.acme, &new).await, Some(v(&["billing"])));
    assert!(matches!(
        a.auth.accept_invitation(&new, &token).await,
        Err(AccountError::InvalidInvitation)
    ));

    // Revoked before use.
    let later = stored_user(&a.db, "later@example.com", true).await;
    let sent = a
        .auth
        .invite(
            Some(&a.adam),
            &InvitationSpec::to_organization(&a.acme, "later@example.com"),
            None,
        )
        .await
        .unwrap();
    a.auth
        .revoke_invitation(Some(&a.adam), &sent.invitation.id)
        .await
        .unwrap();
    let token = sent.link.split("token=").nth(1).unwrap();
    assert!(matches!(
        a.auth.accept_invitation(&later, token).await,
        Err(AccountError::InvalidInvitation)
    ));
    // Expired: the store's invitation, moved into the past.
    let sent = a
        .auth
        .invite(
            Some(&a.adam),
            &InvitationSpec::to_organization(&a.acme, "later@example.com"),
            None,
        )
        .await
        .unwrap();
    let mut old = sent.invitation.clone();
    old.id = format!("{}-old", old.id);
    old.token_hash = format!("{}-old", old.token_hash);
    old.expires = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    a.store().create_invitation(&old).await.unwrap();
    assert!(matches!(
        a.auth.accept_invitation_by_id(&later, &old.id).await,
        Err(AccountError::InvalidInvitation)
    ));
    assert_eq!(a.roles(&a.acme, &later).await, None);
    // By id: only the invited, verified address; another's id looks like an unknown one.
    assert!(matches!(
        a.auth
            .accept_invitation_by_id(&other, &sent.invitation.id)
            .await,
        Err(AccountError::InvalidInvitation)
    ));
    let listed = a.auth.invitations_for_user(&later).await.unwrap();
    assert_eq!(listed.len(), 1);
    a.auth
        .accept_invitation_by_id(&later, &sent.invitation.id)
        .await
        .unwrap();
    assert_eq!(a.roles(&a.acme, &later).await, Some(v(&["member"])));
}

/// Two acceptances of one link at once: one member, one refusal.
#[tokio::test]
async fn an_invitation_accepted_twice_at_once_makes_one_member() {
    let a = app().await;
    let new = stored_user(&a.db, "twice@example.com", true).await;
    let sent = a
        .auth
        .invite(
            Some(&a.olive),
            &InvitationSpec::to_organization(&a.acme, "twice@example.com"),
            None,
        )
        .await
        .unwrap();
    let token = sent.link.split("token=").nth(1).unwrap().to_owned();
    let (x, y) = tokio::join!(
        a.auth.accept_invitation(&new, &token),
        a.auth.accept_invitation(&new, &token)
    );
    assert_eq!(
        [x.is_ok(), y.is_ok()].iter().filter(|ok| **ok).count(),
        1,
        "{x:?} {y:?}"
    );
}

async fn active_organization_follows_membership(strategy: SessionStrategy) {
    let a = app_with(strategy, SignUpPolicy::Open).await;
    let (cookie, _) = session_of(&a.auth, &a.db, &a.bill, Duration::ZERO, &["pwd"]).await;
    let h = headers(&cookie);
    assert_eq!(a.auth.active_organization(&uri(), &h).await.unwrap(), None);
    // Another organization cannot be made active.
    assert!(matches!(
        a.auth
            .set_active_organization(&uri(), &h, Some(&a.evil))
            .await,
        Err(AccountError::NotFound)
    ));
    let set = a
        .auth
        .set_active_organization(&uri(), &h, Some(&a.acme))
        .await
        .unwrap();
    let h = match strategy {
        SessionStrategy::Jwt => {
            assert_eq!(set.len(), 1, "a new session token");
            let value = set[0]
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned();
            headers(&value)
        }
        SessionStrategy::Database => {
            assert!(set.is_empty());
            h
        }
    };
    let active = a
        .auth
        .active_organization(&uri(), &h)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(active.organization.id, a.acme);
    let principal = a.auth.principal(&uri(), &h).await.unwrap().unwrap();
    assert!(principal.has_permission("billing:write"));
    assert!(!principal.has_permission("member:invite"));
    assert!(principal.has_role("billing"));
    // Removed from the organization: the session's choice no longer counts.
    a.auth
        .remove_member(&a.olive, &a.acme, &a.bill)
        .await
        .unwrap();
    assert_eq!(a.auth.active_organization(&uri(), &h).await.unwrap(), None);
    let principal = a.auth.principal(&uri(), &h).await.unwrap().unwrap();
    assert!(!principal.has_permission("billing:write"));
    assert_eq!(principal.organization, None);
}

#[tokio::test]
async fn the_active_organization_of_a_jwt_session_is_checked_on_every_read() {
    active_organization_follows_membership(SessionStrategy::Jwt).await;
}

#[tokio::test]
async fn the_active_organization_of_a_database_session_is_checked_on_every_read() {
    active_organization_follows_membership(SessionStrategy::Database).await;
}

/// A forged `org` claim needs the secret; with it (the host's own token), membership is
/// still checked.
#[tokio::test]
async fn a_jwt_claiming_an_organization_of_someone_else_gets_nothing() {
    let a = app().await;
    let cookie = session_cookie(
        &a.auth,
        serde_json::json!({ "sub": a.bill, "org": a.evil, "auth_time": unix_now() }),
    );
    let h = headers(&cookie);
    assert_eq!(a.auth.active_organization(&uri(), &h).await.unwrap(), None);
    let p = a.auth.principal(&uri(), &h).await.unwrap().unwrap();
    assert_eq!(p.organization, None);
    assert!(!p.has_permission("member:read"));
}

#[tokio::test]
async fn api_keys_never_hold_more_than_their_maker() {
    let a = app().await;
    let bill = a.me(&a.bill).await;
    // More than Bill holds, or a user's key with permissions: refused.
    for (org, perms) in [
        (Some(a.acme.as_str()), v(&["member:invite"])),
        (Some(a.acme.as_str()), v(&["*"])),
        (Some(a.acme.as_str()), v(&["billing:*"])),
        (Some(a.evil.as_str()), v(&["billing:read"])),
        (Some(a.acme.as_str()), v(&[])),
        (None, v(&["billing:read"])),
    ] {
        assert!(
            a.auth
                .create_api_key(&bill, org, "ci", &perms, None)
                .await
                .is_err(),
            "{org:?} {perms:?}"
        );
    }
    assert!(
        a.db.list_api_keys(authcore::adapter::ApiKeyOwner::Organization(&a.acme))
            .await
            .unwrap()
            .is_empty()
    );
    // A stale session may not make one.
    let (_, stale) = session_of(&a.auth, &a.db, &a.bill, Duration::from_secs(7200), &["pwd"]).await;
    assert!(matches!(
        a.auth
            .create_api_key(&stale, Some(&a.acme), "ci", &v(&["billing:read"]), None)
            .await,
        Err(AccountError::ReauthenticationRequired)
    ));

    let made = a
        .auth
        .create_api_key(&bill, Some(&a.acme), "ci", &v(&["billing:write"]), None)
        .await
        .unwrap();
    let key = made.secret.expose().to_owned();
    assert!(key.starts_with("ak_"));
    assert!(
        !format!("{made:?}").contains(&key[20..]),
        "Debug hides the key"
    );
    let stored = a.db.get_api_key(&made.key.id).await.unwrap().unwrap();
    assert!(!stored.hash.contains(&key[28..]));
    let p = a
        .auth
        .principal(&uri(), &bearer(&key))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.user_id, a.bill);
    assert_eq!(p.api_key.as_deref(), Some(made.key.id.as_str()));
    assert!(p.has_permission("billing:write"));
    assert!(!p.has_permission("billing:read"), "only what the key names");
    // Bill loses the billing role: the key holds nothing more.
    a.auth
        .set_member_roles(&a.olive, &a.acme, &a.bill, &v(&["member"]))
        .await
        .unwrap();
    let p = a
        .auth
        .principal(&uri(), &bearer(&key))
        .await
        .unwrap()
        .unwrap();
    assert!(!p.has_permission("billing:write"));
    // Bill leaves: the key is refused.
    a.auth
        .remove_member(&a.bill, &a.acme, &a.bill)
        .await
        .unwrap();
    assert_eq!(
        a.auth.principal(&uri(), &bearer(&key)).await.unwrap_err(),
        KeyRefused::MakerGone
    );
}

#[tokio::test]
async fn bad_revoked_and_expired_keys_are_refused_never_passed_to_the_cookie() {
    let a = app().await;
    let olive = a.me(&a.olive).await;
    let made = a
        .auth
        .create_api_key(&olive, Some(&a.acme), "ci", &v(&["billing:read"]), None)
        .await
        .unwrap();
    let key = made.secret.expose().to_owned();
    let (cookie, _) = session_of(&a.auth, &a.db, &a.olive, Duration::ZERO, &["pwd"]).await;
    let mut wrong = key.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == 'A' { 'B' } else { 'A' });
    for (text, want) in [
        (wrong.as_str(), KeyRefused::Invalid),
        (
            "ak_0123456789abcdef01234567_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            KeyRefused::Invalid,
        ),
        ("ak_nonsense", KeyRefused::Invalid),
    ] {
        let mut h = bearer(text);
        h.insert(http::header::COOKIE, cookie.parse().unwrap());
        assert_eq!(
            a.auth.principal(&uri(), &h).await.unwrap_err(),
            want,
            "{text}"
        );
    }
    // Two keys in two headers: refused.
    let mut h = bearer(&key);
    h.append(
        http::header::AUTHORIZATION,
        format!("Bearer {key}").parse().unwrap(),
    );
    assert!(a.auth.principal(&uri(), &h).await.is_err());
    // Revoked.
    a.auth.revoke_api_key(&a.olive, &made.key.id).await.unwrap();
    assert_eq!(
        a.auth.principal(&uri(), &bearer(&key)).await.unwrap_err(),
        KeyRefused::Revoked
    );
    // Expired: a key whose time ran out.
    let short = a
        .auth
        .create_api_key(
            &olive,
            Some(&a.acme),
            "short",
            &v(&["billing:read"]),
            Some(Duration::from_secs(1)),
        )
        .await
        .unwrap();
    let mut k = a.db.get_api_key(&short.key.id).await.unwrap().unwrap();
    k.id = "0123456789abcdef0123abcd".into();
    k.expires = Some(time::OffsetDateTime::now_utc() - time::Duration::seconds(5));
    a.db.create_api_key(&k).await.unwrap();
    let secret = short
        .secret
        .expose()
        .split_once('_')
        .unwrap()
        .1
        .split_once('_')
        .unwrap()
        .1;
    assert_eq!(
        a.auth
            .principal(&uri(), &bearer(&format!("ak_{}_{secret}", k.id)))
            .await
            .unwrap_err(),
        KeyRefused::Expired
    );
}

/// A user's own key signs in as the user and carries no organization's permissions.
#[tokio::test]
async fn a_users_own_key_signs_in_without_permissions() {
    let a = app().await;
    let mia = a.me(&a.mia).await;
    let made = a
        .auth
        .create_api_key(&mia, None, "laptop", &[], None)
        .await
        .unwrap();
    let p = a
        .auth
        .principal(&uri(), &bearer(made.secret.expose()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.user_id, a.mia);
    assert_eq!(p.organization, None);
    assert!(!p.has_permission("member:read"));
    assert_eq!(a.auth.api_keys(&a.mia, None).await.unwrap().len(), 1);
    // Deleting the user removes their keys.
    a.db.delete_user(&a.mia).await.unwrap();
    assert!(
        a.auth
            .principal(&uri(), &bearer(made.secret.expose()))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn deleting_an_organization_needs_its_permission_and_a_recent_sign_in() {
    let a = app().await;
    let adam = a.me(&a.adam).await;
    assert!(matches!(
        a.auth.delete_organization(&adam, &a.acme).await,
        Err(AccountError::Forbidden)
    ));
    let (_, stale) = session_of(
        &a.auth,
        &a.db,
        &a.olive,
        Duration::from_secs(7200),
        &["pwd"],
    )
    .await;
    assert!(matches!(
        a.auth.delete_organization(&stale, &a.acme).await,
        Err(AccountError::ReauthenticationRequired)
    ));
    assert!(a.store().get_organization(&a.acme).await.unwrap().is_some());
    let olive = a.me(&a.olive).await;
    a.auth.delete_organization(&olive, &a.acme).await.unwrap();
    assert!(a.store().get_organization(&a.acme).await.unwrap().is_none());
    assert!(a.auth.organizations_of(&a.mia).await.unwrap().is_empty());
}

#[tokio::test]
async fn slugs_are_unique_and_checked() {
    let a = app().await;
    let mia = a.me(&a.mia).await;
    assert!(matches!(
        a.auth.create_organization(&mia, "Acme", None).await,
        Err(AccountError::SlugTaken)
    ));
    for (name, slug) in [
        ("", None),
        ("x", Some("Bad Slug")),
        ("日本", None),
        ("a\u{7}b", None),
    ] {
        assert!(
            matches!(
                a.auth.create_organization(&mia, name, slug).await,
                Err(AccountError::InvalidValue(_))
            ),
            "{name:?} {slug:?}"
        );
    }
    let org = a
        .auth
        .create_organization(&mia, "Mia's Lab", None)
        .await
        .unwrap();
    assert_eq!(org.slug, "mia-s-lab");
    assert_eq!(a.roles(&org.id, &a.mia).await, Some(v(&["owner"])));
}

/// Sign-up by invitation: an invited address becomes a user through a magic link, its
/// invitation to sign up is used; an address without one gets no mail and no user.
#[tokio::test]
async fn invited_addresses_sign_up_and_others_do_not() {
    let a = app_with(SessionStrategy::Jwt, SignUpPolicy::Invite).await;
    let sent = a
        .auth
        .invite(None, &InvitationSpec::to_sign_up("guest@example.com"), None)
        .await
        .unwrap();
    assert!(sent.mailed);
    // Members invite to organizations only, never to sign up.
    assert!(matches!(
        a.auth
            .invite(
                Some(&a.olive),
                &InvitationSpec::to_sign_up("x@example.com"),
                None
            )
            .await,
        Err(AccountError::Forbidden)
    ));
    let before = a.mailbox.count();
    let stranger = ask_for_magic_link(&a.auth, "stranger@evil.test").await;
    assert_eq!(
        a.mailbox.count(),
        before,
        "no mail to an address without an invitation"
    );
    let guest = ask_for_magic_link(&a.auth, "guest@example.com").await;
    assert_eq!(stranger.location(), guest.location(), "the same answer");
    let link = a.mailbox.last("guest@example.com", LinkPurpose::SignIn);
    let r = send(&a.auth, get(&link[ORIGIN.len()..]).body(empty()).unwrap()).await;
    assert_eq!(r.status, 302, "{}", r.text());
    let user =
        a.db.get_user_by_email("guest@example.com")
            .await
            .unwrap()
            .unwrap();
    let inv = a
        .store()
        .get_invitation(&sent.invitation.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        inv.status,
        authcore::adapter::InvitationStatus::Accepted {
            user_id: user.id.clone(),
            at: match inv.status {
                authcore::adapter::InvitationStatus::Accepted { at, .. } => at,
                _ => unreachable!(),
            }
        }
    );
    assert!(
        a.db.get_user_by_email("stranger@evil.test")
            .await
            .unwrap()
            .is_none()
    );
    // An invitation to an organization lets its address sign up too.
    a.auth
        .invite(
            Some(&a.olive),
            &InvitationSpec::to_organization(&a.acme, "colleague@example.com"),
            None,
        )
        .await
        .unwrap();
    let before = a.mailbox.count();
    ask_for_magic_link(&a.auth, "colleague@example.com").await;
    assert_eq!(a.mailbox.count(), before + 1);
}

#[tokio::test]
async fn invite_policy_needs_an_adapter_with_invitations() {
    let err = authcore::AuthConfig::builder()
        .secret(SECRET)
        .sign_up(SignUpPolicy::Invite)
        .provider(credentials())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("OrganizationStore"), "{err}");
    let err = authcore::AuthConfig::builder()
        .secret(SECRET)
        .adapter(MemoryAdapter::new())
        .provider(credentials())
        .organizations(Organizations::new().role("Bad Name", ["a:b"]))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("Bad Name"), "{err}");
}

#[tokio::test]
async fn teams_hold_members_of_their_organization() {
    let a = app().await;
    let team = a.auth.create_team(&a.adam, &a.acme, "Ops").await.unwrap();
    assert!(matches!(
        a.auth.create_team(&a.mia, &a.acme, "Dev").await,
        Err(AccountError::Forbidden)
    ));
    a.auth
        .set_member_teams(&a.adam, &a.acme, &a.mia, std::slice::from_ref(&team.id))
        .await
        .unwrap();
    assert!(matches!(
        a.auth
            .set_member_teams(&a.adam, &a.acme, &a.mia, &v(&["not-a-team"]))
            .await,
        Err(AccountError::InvalidValue(_))
    ));
    assert_eq!(
        a.auth.membership(&a.mia, &a.acme).await.unwrap().teams,
        vec![team.id.clone()]
    );
    a.auth
        .delete_team(&a.adam, &a.acme, &team.id)
        .await
        .unwrap();
    assert!(
        a.auth
            .membership(&a.mia, &a.acme)
            .await
            .unwrap()
            .teams
            .is_empty()
    );
}

/// A form post of the account page as the holder of `cookie`.
async fn account_post(a: &App, cookie: &str, fields: &[(&str, &str)]) -> TestResponse {
    let (csrf_cookie, csrf) = csrf_pair();
    let mut pairs = vec![("csrfToken", csrf.as_str())];
    pairs.extend_from_slice(fields);
    send(
        &a.auth,
        post("/auth/account")
            .header("cookie", format!("{cookie}; {csrf_cookie}"))
            .body(form(&pairs))
            .unwrap(),
    )
    .await
}

async fn account_page(a: &App, cookie: &str) -> String {
    let r = send(
        &a.auth,
        get("/auth/account")
            .header("cookie", cookie)
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    r.text()
}

/// The account page lists organizations, members for those who may remove them,
/// invitations and keys; its changes follow the same rules as the API.
#[tokio::test]
async fn the_account_page_manages_organizations_within_the_rules() {
    let a = app().await;
    let (adam, _) = session_of(&a.auth, &a.db, &a.adam, Duration::ZERO, &["pwd"]).await;
    let (mia, _) = session_of(&a.auth, &a.db, &a.mia, Duration::ZERO, &["pwd"]).await;
    let html = account_page(&a, &adam).await;
    assert!(html.contains("Acme") && html.contains("admin"), "{html}");
    assert!(
        html.contains("mia@example.com"),
        "an admin sees the members"
    );
    assert!(html.contains("Invite by email"));
    let html = account_page(&a, &mia).await;
    assert!(
        !html.contains("bill@example.com"),
        "a member does not see the member list"
    );
    assert!(!html.contains("Invite by email"));

    // Mia cannot remove Bill; the page says so and Bill stays.
    let r = account_post(
        &a,
        &mia,
        &[
            ("op", "member-remove"),
            ("organizationId", &a.acme),
            ("userId", &a.bill),
        ],
    )
    .await;
    assert!(
        r.text().contains("Your role does not allow that."),
        "{}",
        r.text()
    );
    assert!(a.roles(&a.acme, &a.bill).await.is_some());
    // Nor make an organization active that is not hers.
    let r = account_post(
        &a,
        &mia,
        &[("op", "org-active"), ("organizationId", &a.evil)],
    )
    .await;
    assert!(
        r.text().contains("That is not one of yours."),
        "{}",
        r.text()
    );

    // A key, shown once, then listed by its id only.
    let r = account_post(
        &a,
        &adam,
        &[
            ("op", "key-create"),
            ("name", "deploy"),
            ("organizationId", &a.acme),
            ("permissions", "member:read"),
        ],
    )
    .await;
    let html = r.text();
    let key = html
        .split("<code>")
        .find_map(|s| {
            s.strip_prefix("ak_")
                .map(|k| format!("ak_{}", &k[..k.find('<').unwrap()]))
        })
        .unwrap();
    assert!(
        a.auth
            .principal(&uri(), &bearer(&key))
            .await
            .unwrap()
            .is_some()
    );
    let html = account_page(&a, &adam).await;
    assert!(html.contains("deploy"));
    assert!(
        !html.contains(key[3..].split_once('_').unwrap().1),
        "the secret is not shown again"
    );
    // Each rendering's key form makes one key: posted again (a reload of the page that
    // showed the key), it makes none and shows no secret.
    let form_id_of = |html: &str| {
        let rest = html.split(r#"name="formId" value=""#).nth(1).unwrap();
        rest[..rest.find('"').unwrap()].to_owned()
    };
    let form_id = form_id_of(&html);
    let fields = [
        ("op", "key-create"),
        ("formId", form_id.as_str()),
        ("name", "ci"),
        ("organizationId", a.acme.as_str()),
        ("permissions", "member:read"),
    ];
    let keys = || async { a.auth.api_keys(&a.adam, Some(&a.acme)).await.unwrap().len() };
    let before = keys().await;
    let first = account_post(&a, &adam, &fields).await.text();
    assert!(first.contains("Your new API key"), "{first}");
    let again = account_post(&a, &adam, &fields).await.text();
    assert!(again.contains("This form made its key already"), "{again}");
    assert!(!again.contains("Your new API key"), "{again}");
    assert_eq!(keys().await, before + 1);
    assert_ne!(
        form_id_of(&account_page(&a, &adam).await),
        form_id,
        "each rendering has a form of its own"
    );

    // Making Acme active sets a new session cookie (JWT) that the principal reads.
    let r = account_post(
        &a,
        &adam,
        &[("op", "org-active"), ("organizationId", &a.acme)],
    )
    .await;
    assert_eq!(r.status, 302);
    let cookie = format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap());
    let p = a
        .auth
        .principal(&uri(), &headers(&cookie))
        .await
        .unwrap()
        .unwrap();
    assert!(p.has_role("admin"));

    // An invitation made on the page is mailed, and accepted on the invitee's page.
    let new = stored_user(&a.db, "newbie@example.com", true).await;
    let r = account_post(
        &a,
        &adam,
        &[
            ("op", "org-invite"),
            ("organizationId", &a.acme),
            ("email", "newbie@example.com"),
            ("role", "billing"),
        ],
    )
    .await;
    assert_eq!(r.status, 302, "{}", r.text());
    let (newbie, _) = session_of(&a.auth, &a.db, &new, Duration::ZERO, &["pwd"]).await;
    let html = account_page(&a, &newbie).await;
    assert!(
        html.contains("You are invited to Acme as billing"),
        "{html}"
    );
    let id = a.auth.invitations_for_user(&new).await.unwrap()[0]
        .id
        .clone();
    let r = account_post(
        &a,
        &newbie,
        &[("op", "invitation-accept"), ("invitationId", &id)],
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(a.roles(&a.acme, &new).await, Some(v(&["billing"])));
}

/// Refused keys count against their client under `credentials_per_client`, as wrong
/// passwords do: past the limit the client's keys are not even checked (a right one
/// included), while another client's are; a right key does not use up the count.
#[tokio::test]
async fn guessing_keys_is_limited_per_client() {
    use authcore::ratelimit::{RateLimit, RateLimits};
    use authcore::request::ClientAddr;
    let db = MemoryAdapter::new();
    let (auth, _) = auth_with(
        builder()
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Jwt)
            .organizations(Organizations::new())
            .rate_limits(RateLimits {
                credentials_per_client: Some(RateLimit::new(3, Duration::from_secs(60))),
                ..RateLimits::default()
            }),
    );
    let olive = stored_user(&db, "olive@example.com", true).await;
    let acme = auth
        .create_organization_for(&olive, "Acme", None)
        .await
        .unwrap();
    let me = fresh_session(&auth, &db, &olive).await;
    let key = auth
        .create_api_key(&me, Some(&acme.id), "ci", &v(&["member:read"]), None)
        .await
        .unwrap();
    let key = key.secret.expose().to_owned();
    let ask = |text: String, ip: &'static str| {
        let auth = auth.clone();
        async move {
            let mut request = http::Request::new(());
            *request.uri_mut() = uri();
            *request.headers_mut() = bearer(&text);
            request
                .extensions_mut()
                .insert(ClientAddr(ip.parse().unwrap()));
            let (parts, ()) = request.into_parts();
            auth.principal_of_request(&parts).await
        }
    };
    let guess = "ak_0123456789abcdef01234567_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    // A right key, many times: nothing counted.
    for _ in 0..5 {
        assert!(ask(key.clone(), "192.0.2.1").await.unwrap().is_some());
    }
    for _ in 0..3 {
        assert_eq!(
            ask(guess.into(), "192.0.2.1").await.unwrap_err(),
            KeyRefused::Invalid
        );
    }
    assert!(matches!(
        ask(key.clone(), "192.0.2.1").await,
        Err(KeyRefused::RateLimited { .. })
    ));
    assert!(ask(key.clone(), "192.0.2.2").await.unwrap().is_some());
    let answer = KeyRefused::RateLimited {
        retry_after: Duration::from_secs(42),
    }
    .response();
    assert_eq!(answer.status(), 429);
    assert_eq!(answer.headers()["retry-after"], "42");
}

/// Neither an API key nor an invitation's token reaches a log line, in any of their uses
/// and refusals, with the debug channel (which logs every adapter call) on.
#[tokio::test]
async fn keys_and_invitation_tokens_never_reach_a_log_line() {
    let (_guard, lines) = TracingCapture::install();
    let db = MemoryAdapter::new();
    let mailbox = Mailbox::default();
    let (auth, recorder) = auth_with(
        builder()
            .url(format!("{ORIGIN}/auth"))
            .debug(true)
            .provider(mailbox.provider())
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Jwt)
            .organizations(Organizations::new()),
    );
    let olive = stored_user(&db, "olive@example.com", true).await;
    let other = stored_user(&db, "other@example.com", true).await;
    let acme = auth
        .create_organization_for(&olive, "Acme", None)
        .await
        .unwrap();
    let me = fresh_session(&auth, &db, &olive).await;
    let made = auth
        .create_api_key(&me, Some(&acme.id), "ci", &v(&["member:read"]), None)
        .await
        .unwrap();
    let key = made.secret.expose().to_owned();
    let secret = key[3..].split_once('_').unwrap().1.to_owned();
    auth.principal(&uri(), &bearer(&key)).await.unwrap();
    let wrong = format!(
        "{}{}",
        &key[..key.len() - 1],
        if key.ends_with('A') { 'B' } else { 'A' }
    );
    auth.principal(&uri(), &bearer(&wrong)).await.unwrap_err();
    auth.revoke_api_key(&olive, &made.key.id).await.unwrap();
    auth.principal(&uri(), &bearer(&key)).await.unwrap_err();
    let sent = auth
        .invite(
            Some(&olive),
            &InvitationSpec::to_organization(&acme.id, "new@example.com"),
            None,
        )
        .await
        .unwrap();
    let token = sent.link.split("token=").nth(1).unwrap().to_owned();
    auth.accept_invitation(&other, &token).await.unwrap_err();
    let logged = lines.lock().unwrap().join("\n");
    let recorded = format!("{:?}", recorder.errors());
    assert!(
        logged.contains("API key refused") || logged.contains("API key"),
        "{logged}"
    );
    for needle in [secret.as_str(), &secret[..20], token.as_str(), &token[..20]] {
        assert!(!logged.contains(needle), "a secret in the log: {logged}");
        assert!(!recorded.contains(needle));
    }
}

/// An account whose user is an organization's last owner is not deleted while others are
/// in it; an organization its user is alone in goes with the account.
#[tokio::test]
async fn the_last_owner_cannot_delete_their_account_and_leave_members_behind() {
    let a = app().await;
    let solo = a
        .auth
        .create_organization_for(&a.olive, "Olive Solo", None)
        .await
        .unwrap();
    let olive = a.me(&a.olive).await;
    assert!(matches!(
        a.auth.delete_user(&olive).await,
        Err(AccountError::LastOwner)
    ));
    assert!(a.db.get_user(&a.olive).await.unwrap().is_some());
    a.auth
        .set_member_roles(&a.olive, &a.acme, &a.adam, &v(&["owner"]))
        .await
        .unwrap();
    a.auth.delete_user(&olive).await.unwrap();
    assert!(a.db.get_user(&a.olive).await.unwrap().is_none());
    assert!(
        a.store()
            .get_organization(&solo.id)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(a.roles(&a.acme, &a.adam).await, Some(v(&["owner"])));
}

/// A lifetime past the calendar's end (a client's `expiresInDays: 4000000`) is refused as
/// a value, never a panic, and makes no key.
#[tokio::test]
async fn an_api_key_lifetime_past_the_calendar_is_refused() {
    let a = app().await;
    let me = a.me(&a.olive).await;
    for days in [4_000_000_u64, u64::from(u32::MAX)] {
        let lifetime = Some(Duration::from_secs(days * 86_400));
        assert!(matches!(
            a.auth
                .create_api_key(&me, Some(&a.acme), "ci", &v(&["member:read"]), lifetime)
                .await,
            Err(AccountError::InvalidValue(_))
        ));
    }
    assert!(
        a.auth
            .api_keys(&a.olive, Some(&a.acme))
            .await
            .unwrap()
            .is_empty()
    );
}
