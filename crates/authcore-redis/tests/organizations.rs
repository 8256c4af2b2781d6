//! Organizations and API keys in Redis: the key layout, what deleting an organization or a
//! user leaves behind, ids that would address index keys, and the writes that must be
//! atomic under concurrency (the conformance suite covers the behaviour).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;

use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, ApiKey, ApiKeyStore, Invitation, InvitationStatus,
    Member, NewUser, OWNER_ROLE, Organization, OrganizationStore, Team,
};
use common::{TestDb, with_db};
use serde_json::json;
use time::{Duration, OffsetDateTime};
use tokio::sync::Barrier;

/// Whole seconds, as every test here compares times read back.
fn at(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000 + secs).unwrap()
}

fn organization(id: &str, slug: &str) -> Organization {
    Organization {
        id: id.into(),
        slug: slug.into(),
        name: "Acme".into(),
        created_at: at(0),
    }
}

fn member(organization_id: &str, user_id: &str, roles: &[&str]) -> Member {
    Member {
        organization_id: organization_id.into(),
        user_id: user_id.into(),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        teams: Vec::new(),
        created_at: at(1),
    }
}

fn invitation(id: &str, organization_id: Option<&str>, email: &str) -> Invitation {
    Invitation {
        id: id.into(),
        organization_id: organization_id.map(str::to_owned),
        email: email.into(),
        roles: vec!["member".into()],
        teams: Vec::new(),
        inviter_id: None,
        token_hash: format!("hash-{id}"),
        created_at: at(2),
        expires: at(3600),
        status: InvitationStatus::Pending,
    }
}

fn api_key(id: &str, user_id: &str, organization_id: Option<&str>) -> ApiKey {
    ApiKey {
        id: id.into(),
        hash: format!("hash-{id}"),
        name: "ci".into(),
        user_id: user_id.into(),
        organization_id: organization_id.map(str::to_owned),
        permissions: vec!["project:read".into()],
        created_at: at(3),
        expires: None,
        last_used_at: None,
        revoked_at: None,
    }
}

async fn user(db: &TestDb, email: &str) -> String {
    let user = NewUser {
        email: Some(email.into()),
        ..Default::default()
    };
    db.adapter.create_user(user).await.unwrap().id
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

#[tokio::test]
async fn key_layout_and_what_deletions_leave() {
    with_db(|db| async move {
        let a = &db.adapter;
        let owner = user(&db, "owner@example.com").await;
        let ada = user(&db, "ada@example.com").await;
        a.create_organization(
            &organization("o1", "acme"),
            &member("o1", &owner, &[OWNER_ROLE]),
        )
        .await
        .unwrap();
        let team = Team {
            id: "t1".into(),
            organization_id: "o1".into(),
            name: "ops".into(),
            created_at: at(1),
        };
        a.create_team(&team).await.unwrap();
        a.add_member(&member("o1", &ada, &["member"]))
            .await
            .unwrap();
        a.set_member_teams("o1", &ada, &["t1".into()])
            .await
            .unwrap();
        a.create_invitation(&invitation("i1", Some("o1"), "bob@example.com"))
            .await
            .unwrap();
        a.create_invitation(&invitation("i2", None, "bob@example.com"))
            .await
            .unwrap();
        a.create_session(AdapterSession {
            session_token: "s1".into(),
            user_id: ada.clone(),
            expires: OffsetDateTime::now_utc() + Duration::hours(1),
        })
        .await
        .unwrap();
        assert!(a.set_session_organization("s1", Some("o1")).await.unwrap());
        a.create_api_key(&api_key("k1", &ada, None)).await.unwrap();
        a.create_api_key(&api_key("k2", &ada, Some("o1")))
            .await
            .unwrap();

        let user_keys =
            |id: &str, email: &str| vec![format!("user:{id}"), format!("user:email:{email}")];
        let mut sign_up_keys = vec![
            "invitation:i2".to_owned(),
            "invitation:token:hash-i2".to_owned(),
            "invitation:sign-up:index".to_owned(),
            "invitation:by-email:bob@example.com".to_owned(),
        ];
        let mut ada_keys = user_keys(&ada, "ada@example.com");
        ada_keys.extend([
            "user:session:s1".to_owned(),
            format!("user:session:by-user-id:{ada}"),
            "api-key:k1".to_owned(),
            format!("api-key:by-user-id:{ada}"),
        ]);
        let mut expected = user_keys(&owner, "owner@example.com");
        expected.push("user-index".to_owned());
        expected.extend(ada_keys.clone());
        expected.extend(sign_up_keys.clone());
        expected.extend([
            "org:o1".to_owned(),
            "org:slug:acme".to_owned(),
            "org:members:o1".to_owned(),
            "org:owners:o1".to_owned(),
            format!("org:by-user-id:{owner}"),
            format!("org:by-user-id:{ada}"),
            "org:teams:o1".to_owned(),
            "org:team-names:o1".to_owned(),
            format!("org:active:by-user-id:{ada}"),
            "invitation:i1".to_owned(),
            "invitation:token:hash-i1".to_owned(),
            "invitation:by-org-id:o1".to_owned(),
            "api-key:k2".to_owned(),
            "api-key:by-org-id:o1".to_owned(),
        ]);
        assert_eq!(db.keys().await, sorted(expected));

        let org = db.get_json("org:o1").await;
        assert_eq!(org["slug"], json!("acme"));
        assert_eq!(org["createdAt"], json!("2027-01-15T08:00:00Z"));
        assert_eq!(db.get("org:slug:acme").await.as_deref(), Some("o1"));
        let mut raw = db.raw.clone();
        let stored: String = redis::cmd("HGET")
            .arg(db.key("org:members:o1"))
            .arg(&ada)
            .query_async(&mut raw)
            .await
            .unwrap();
        let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
        assert_eq!(stored["organizationId"], json!("o1"));
        assert_eq!(stored["roles"], json!(["member"]));
        assert_eq!(stored["teams"], json!(["t1"]));
        assert_eq!(db.members("org:owners:o1").await, vec![owner.clone()]);
        assert_eq!(
            db.members(&format!("org:by-user-id:{ada}")).await,
            vec!["o1"]
        );
        assert_eq!(
            db.members("invitation:by-org-id:o1").await,
            vec!["invitation:i1"]
        );
        assert_eq!(
            db.get_json("invitation:i1").await["status"],
            json!("pending")
        );
        assert_eq!(
            db.members(&format!("api-key:by-user-id:{ada}")).await,
            vec!["api-key:k1", "api-key:k2"]
        );
        let active: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(db.key(&format!("org:active:by-user-id:{ada}")))
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(active, vec![(db.key("user:session:s1"), "o1".to_owned())]);

        // The organization goes with everything of it: the owner keeps only their user.
        assert!(a.delete_organization("o1").await.unwrap());
        let mut expected = user_keys(&owner, "owner@example.com");
        expected.push("user-index".to_owned());
        expected.extend(ada_keys);
        expected.extend(sign_up_keys.clone());
        assert_eq!(db.keys().await, sorted(expected));
        assert_eq!(a.get_session_organization("s1").await.unwrap(), None);

        // A user goes with their keys and memberships.
        a.create_organization(
            &organization("o2", "acme"),
            &member("o2", &owner, &[OWNER_ROLE]),
        )
        .await
        .unwrap();
        a.add_member(&member("o2", &ada, &[OWNER_ROLE]))
            .await
            .unwrap();
        a.create_api_key(&api_key("k3", &ada, Some("o2")))
            .await
            .unwrap();
        assert!(a.set_session_organization("s1", Some("o2")).await.unwrap());
        a.delete_user(&ada).await.unwrap();
        let mut expected = user_keys(&owner, "owner@example.com");
        expected.push("user-index".to_owned());
        expected.append(&mut sign_up_keys);
        expected.extend([
            "org:o2".to_owned(),
            "org:slug:acme".to_owned(),
            "org:members:o2".to_owned(),
            "org:owners:o2".to_owned(),
            format!("org:by-user-id:{owner}"),
        ]);
        assert_eq!(db.keys().await, sorted(expected));
        assert_eq!(db.members("org:owners:o2").await, vec![owner]);
    })
    .await;
}

#[tokio::test]
async fn ids_that_would_address_index_keys_are_refused() {
    with_db(|db| async move {
        let a = &db.adapter;
        let owner = user(&db, "owner@example.com").await;
        for id in ["slug:acme", "", "by-org-id:x"] {
            let created = a
                .create_organization(&organization(id, "odd"), &member(id, &owner, &[OWNER_ROLE]))
                .await;
            assert!(
                matches!(created, Err(AdapterError::Backend(_))),
                "{created:?}"
            );
            assert_eq!(a.get_organization(id).await.unwrap(), None);
            let invited = a
                .create_invitation(&invitation(id, None, "x@example.com"))
                .await;
            assert!(
                matches!(invited, Err(AdapterError::Backend(_))),
                "{invited:?}"
            );
            let key = a.create_api_key(&api_key(id, &owner, None)).await;
            assert!(matches!(key, Err(AdapterError::Backend(_))), "{key:?}");
            assert_eq!(a.get_api_key(id).await.unwrap(), None);
        }
        // Only the owner's user remains (with the user index).
        assert_eq!(db.keys().await.len(), 3);
    })
    .await;
}

#[tokio::test]
async fn expired_sessions_leave_the_active_organizations() {
    with_db(|db| async move {
        let a = &db.adapter;
        let owner = user(&db, "owner@example.com").await;
        a.create_organization(
            &organization("o1", "acme"),
            &member("o1", &owner, &[OWNER_ROLE]),
        )
        .await
        .unwrap();
        let now = OffsetDateTime::now_utc();
        for (token, expires) in [
            ("short", now + Duration::milliseconds(300)),
            ("long", now + Duration::hours(1)),
        ] {
            a.create_session(AdapterSession {
                session_token: token.into(),
                user_id: owner.clone(),
                expires,
            })
            .await
            .unwrap();
            assert!(a.set_session_organization(token, Some("o1")).await.unwrap());
        }
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        assert_eq!(a.get_session_organization("short").await.unwrap(), None);
        assert!(
            !a.set_session_organization("short", Some("o1"))
                .await
                .unwrap()
        );
        // The next choice drops the entries of sessions that are gone.
        assert!(a.set_session_organization("long", None).await.unwrap());
        assert!(
            a.set_session_organization("long", Some("o1"))
                .await
                .unwrap()
        );
        let mut raw = db.raw.clone();
        let sessions: Vec<String> = redis::cmd("HKEYS")
            .arg(db.key(&format!("org:active:by-user-id:{owner}")))
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(sessions, vec![db.key("user:session:long")]);
        assert_eq!(
            a.get_session_organization("long").await.unwrap().as_deref(),
            Some("o1")
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_keep_slugs_unique_and_last_use_forward() {
    with_db(|db| async move {
        const RACERS: i64 = 8;
        let owner = user(&db, "owner@example.com").await;
        db.adapter
            .create_api_key(&api_key("k1", &owner, None))
            .await
            .unwrap();
        let barrier = Arc::new(Barrier::new(2 * RACERS as usize));
        let mut creates = Vec::new();
        let mut uses = Vec::new();
        for n in 0..RACERS {
            let (adapter, start, owner) = (db.adapter.clone(), barrier.clone(), owner.clone());
            creates.push(tokio::spawn(async move {
                start.wait().await;
                let id = format!("o{n}");
                adapter
                    .create_organization(
                        &organization(&id, "same"),
                        &member(&id, &owner, &[OWNER_ROLE]),
                    )
                    .await
            }));
            let (adapter, start) = (db.adapter.clone(), barrier.clone());
            uses.push(tokio::spawn(async move {
                start.wait().await;
                adapter.record_api_key_use("k1", at(n)).await
            }));
        }
        let mut created = 0;
        for t in creates {
            match t.await.unwrap() {
                Ok(()) => created += 1,
                Err(AdapterError::Conflict(_)) => {}
                Err(e) => panic!("unexpected {e:?}"),
            }
        }
        assert_eq!(created, 1);
        for t in uses {
            t.await.unwrap().unwrap();
        }
        let key = db.adapter.get_api_key("k1").await.unwrap().unwrap();
        assert_eq!(key.last_used_at, Some(at(RACERS - 1)));
        let organizations = db.adapter.list_organizations_of_user(&owner).await.unwrap();
        assert_eq!(organizations.len(), 1);
    })
    .await;
}
