//! Focused tests of the Redis adapter against a real Redis (see `common::START_HINT`).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;

use authcore::adapter::UpstreamSessionStore;
use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, NewUser, PasswordStore, UserGroupsStore, UserUpdate,
    VerificationToken,
};
use authcore::{Account, Authenticator, ProviderType};
use authcore_redis::{BackendErrorKind, RedisBackendError};
use common::{TestDb, with_db};
use redis::AsyncCommands as _;
use serde_json::json;
use time::{Duration, OffsetDateTime};
use tokio::sync::Barrier;

fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

fn new_user(email: &str) -> NewUser {
    NewUser {
        name: Some("Ada".into()),
        email: Some(email.into()),
        email_verified: None,
        image: None,
    }
}

fn account(user_id: &str, provider: &str, provider_account_id: &str) -> Account {
    let mut a = Account::new(ProviderType::Oauth, provider, provider_account_id);
    a.user_id = Some(user_id.into());
    a.access_token = Some("access".into());
    a.token_type = Some("bearer".into());
    a
}

fn session(user_id: &str, token: &str, expires: OffsetDateTime) -> AdapterSession {
    AdapterSession {
        session_token: token.into(),
        user_id: user_id.into(),
        expires,
    }
}

fn authenticator(user_id: &str, credential_id: &str) -> Authenticator {
    Authenticator {
        credential_id: credential_id.into(),
        user_id: Some(user_id.into()),
        provider_account_id: credential_id.into(),
        counter: 0,
        credential_backed_up: false,
        credential_public_key: "cHVibGljLWtleQ==".into(),
        transports: Some("usb,nfc".into()),
        credential_device_type: "singleDevice".into(),
        name: None,
    }
}

fn backend_kind(e: &AdapterError) -> BackendErrorKind {
    match e {
        AdapterError::Backend(source) => source
            .downcast_ref::<RedisBackendError>()
            .expect("a RedisBackendError")
            .kind(),
        other => panic!("expected a Backend error, got {other:?}"),
    }
}

/// Asserts `ms` is a TTL ending about `expected` from now (allowing for test latency).
fn assert_ttl_near(ms: i64, expected: Duration) {
    let expected = expected.whole_milliseconds() as i64;
    assert!(
        ms > expected - 30_000 && ms <= expected,
        "PTTL {ms} ms, expected about {expected} ms"
    );
}

#[tokio::test]
async fn key_layout_and_field_names_follow_upstream() {
    with_db(|db| async move {
        let a = &db.adapter;
        let user = a.create_user(new_user("ada@example.com")).await.unwrap();
        let id = user.id.clone();
        a.link_account(account(&id, "github", "42")).await.unwrap();
        a.create_session(session(&id, "tok-1", now() + Duration::hours(1)))
            .await
            .unwrap();
        a.create_verification_token(VerificationToken {
            identifier: "ada@example.com".into(),
            token: "hashed".into(),
            expires: now() + Duration::hours(1),
        })
        .await
        .unwrap();
        a.create_authenticator(authenticator(&id, "Y3JlZA=="))
            .await
            .unwrap();
        a.set_password_hash(&id, "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")
            .await
            .unwrap();
        let groups = ["staff".to_owned(), "Ünïcødé ops".to_owned()];
        a.set_user_groups(&id, &groups).await.unwrap();

        let mut expected = vec![
            format!("user:{id}"),
            format!("user:password:{id}"),
            format!("user:groups:{id}"),
            "user:email:ada@example.com".to_owned(),
            "user:account:github:42".to_owned(),
            format!("user:account:by-user-id:{id}"),
            "user:session:tok-1".to_owned(),
            format!("user:session:by-user-id:{id}"),
            "user:token:ada@example.com:hashed".to_owned(),
            "user:token-index:ada@example.com".to_owned(),
            "user:authenticator:Y3JlZA==".to_owned(),
            format!("user:authenticator:by-user-id:{id}"),
            "user-index".to_owned(),
        ];
        expected.sort();
        assert_eq!(db.keys().await, expected);

        assert_eq!(db.get("user:email:ada@example.com").await, Some(id.clone()));
        let u = db.get_json(&format!("user:{id}")).await;
        assert_eq!(u["id"], json!(id));
        assert_eq!(u["email"], json!("ada@example.com"));
        assert_eq!(u["emailVerified"], json!(null));
        let acc = db.get_json("user:account:github:42").await;
        assert_eq!(acc["userId"], json!(id));
        assert_eq!(acc["type"], json!("oauth"));
        assert_eq!(acc["providerAccountId"], json!("42"));
        assert_eq!(acc["access_token"], json!("access"));
        let s = db.get_json("user:session:tok-1").await;
        assert_eq!(s["sessionToken"], json!("tok-1"));
        assert_eq!(s["userId"], json!(id));
        assert!(s["expires"].is_string());
        let t = db.get_json("user:token:ada@example.com:hashed").await;
        assert_eq!(t["identifier"], json!("ada@example.com"));
        assert_eq!(
            db.get(&format!("user:password:{id}")).await.as_deref(),
            Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")
        );
        assert_eq!(
            db.get_json(&format!("user:groups:{id}")).await,
            json!(["staff", "Ünïcødé ops"])
        );
        let au = db.get_json("user:authenticator:Y3JlZA==").await;
        assert_eq!(au["credentialID"], json!("Y3JlZA=="));
        assert_eq!(au["credentialPublicKey"], json!("cHVibGljLWtleQ=="));

        assert_eq!(
            db.members(&format!("user:account:by-user-id:{id}")).await,
            vec!["user:account:github:42"]
        );
        assert_eq!(
            db.members(&format!("user:session:by-user-id:{id}")).await,
            vec!["user:session:tok-1"]
        );
        assert_eq!(
            db.members(&format!("user:authenticator:by-user-id:{id}"))
                .await,
            vec!["user:authenticator:Y3JlZA=="]
        );
        // Users and accounts do not expire.
        assert_eq!(db.pttl(&format!("user:{id}")).await, -1);
        assert_eq!(db.pttl("user:account:github:42").await, -1);
    })
    .await;
}

#[tokio::test]
async fn session_ttl_follows_expires() {
    with_db(|db| async move {
        let a = &db.adapter;
        let user = a.create_user(new_user("s@example.com")).await.unwrap();
        let created = a
            .create_session(session(&user.id, "sess", now() + Duration::hours(1)))
            .await
            .unwrap();
        assert_ttl_near(db.pttl("user:session:sess").await, Duration::hours(1));

        let (got, got_user) = a.get_session_and_user("sess").await.unwrap().unwrap();
        assert_eq!(got, created);
        assert_eq!(got_user, user);

        let later = now() + Duration::days(30);
        let updated = a.update_session("sess", later).await.unwrap().unwrap();
        assert_eq!(updated.expires, later);
        assert_ttl_near(db.pttl("user:session:sess").await, Duration::days(30));
        assert_eq!(
            a.get_session_and_user("sess").await.unwrap().unwrap().0,
            updated
        );
        assert_eq!(a.update_session("missing", later).await.unwrap(), None);

        // A session that expires in 300 ms is gone once Redis expires it.
        a.create_session(session(
            &user.id,
            "short",
            now() + Duration::milliseconds(300),
        ))
        .await
        .unwrap();
        assert!(a.get_session_and_user("short").await.unwrap().is_some());
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        assert_eq!(a.get_session_and_user("short").await.unwrap(), None);
        assert_eq!(db.pttl("user:session:short").await, -2);

        // One already expired is never stored.
        a.create_session(session(&user.id, "past", now() - Duration::hours(1)))
            .await
            .unwrap();
        assert_eq!(a.get_session_and_user("past").await.unwrap(), None);

        // Dead index members are pruned when the next session is created.
        a.create_session(session(&user.id, "next", now() + Duration::hours(1)))
            .await
            .unwrap();
        assert_eq!(
            db.members(&format!("user:session:by-user-id:{}", user.id))
                .await,
            vec!["user:session:next", "user:session:sess"]
        );

        let deleted = a.delete_session("sess").await.unwrap().unwrap();
        assert_eq!(deleted, updated);
        assert_eq!(a.delete_session("sess").await.unwrap(), None);
        assert_eq!(a.get_session_and_user("sess").await.unwrap(), None);
        assert_eq!(
            db.members(&format!("user:session:by-user-id:{}", user.id))
                .await,
            vec!["user:session:next"]
        );
    })
    .await;
}

/// The records of one upstream provider session are one list, which lives as long as the
/// longest-lived of them: a shorter-lived record added later does not cut it short.
#[tokio::test]
async fn upstream_session_records_expire_with_the_last_of_them() {
    with_db(|db| async move {
        let a = &db.adapter;
        let user = a.create_user(new_user("u@example.com")).await.unwrap();
        let record = |token: &str, expires| authcore::adapter::UpstreamSession {
            provider: "oidc".into(),
            sid: "op-session".into(),
            user_id: user.id.clone(),
            session_token: Some(token.into()),
            expires,
        };
        let key = "upstream-session:oidc:op-session";
        for (token, lives, ttl) in [
            ("a", Duration::hours(2), Duration::hours(2)),
            ("b", Duration::hours(1), Duration::hours(2)),
            ("c", Duration::hours(3), Duration::hours(3)),
        ] {
            a.record_upstream_session(&record(token, now() + lives))
                .await
                .unwrap();
            assert_ttl_near(db.pttl(key).await, ttl);
        }
        let taken = a
            .take_upstream_sessions("oidc", "op-session", now())
            .await
            .unwrap();
        let tokens: Vec<_> = taken
            .iter()
            .filter_map(|r| r.session_token.as_deref())
            .collect();
        assert_eq!(tokens, ["a", "b", "c"]);
        assert_eq!(db.pttl(key).await, -2, "taken: gone");
    })
    .await;
}

#[tokio::test]
async fn verification_token_ttl_and_single_use() {
    with_db(|db| async move {
        let a = &db.adapter;
        let token = VerificationToken {
            identifier: "v@example.com".into(),
            token: "h1".into(),
            expires: now() + Duration::minutes(10),
        };
        a.create_verification_token(token.clone()).await.unwrap();
        assert_ttl_near(
            db.pttl("user:token:v@example.com:h1").await,
            Duration::minutes(10),
        );
        // A second token for the same identifier does not replace the first.
        let second = VerificationToken {
            token: "h2".into(),
            ..token.clone()
        };
        a.create_verification_token(second.clone()).await.unwrap();

        assert_eq!(
            a.use_verification_token("v@example.com", "nope")
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            a.use_verification_token("other@example.com", "h1")
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            a.use_verification_token("v@example.com", "h1")
                .await
                .unwrap(),
            Some(token)
        );
        assert_eq!(
            a.use_verification_token("v@example.com", "h1")
                .await
                .unwrap(),
            None
        );
        assert_eq!(db.pttl("user:token:v@example.com:h1").await, -2);
        assert_eq!(
            a.use_verification_token("v@example.com", "h2")
                .await
                .unwrap(),
            Some(second)
        );

        // An expired token is gone.
        a.create_verification_token(VerificationToken {
            identifier: "v@example.com".into(),
            token: "old".into(),
            expires: now() - Duration::seconds(1),
        })
        .await
        .unwrap();
        assert_eq!(
            a.use_verification_token("v@example.com", "old")
                .await
                .unwrap(),
            None
        );
        assert!(db.keys().await.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_use_verification_token_returns_it_once() {
    with_db(|db| async move {
        const ROUNDS: usize = 25;
        const RACERS: usize = 4;
        for round in 0..ROUNDS {
            let token = format!("race-{round}");
            db.adapter
                .create_verification_token(VerificationToken {
                    identifier: "race@example.com".into(),
                    token: token.clone(),
                    expires: now() + Duration::minutes(5),
                })
                .await
                .unwrap();
            let barrier = Arc::new(Barrier::new(RACERS));
            let mut tasks = Vec::new();
            for _ in 0..RACERS {
                let adapter = db.adapter.clone();
                let barrier = barrier.clone();
                let token = token.clone();
                tasks.push(tokio::spawn(async move {
                    barrier.wait().await;
                    adapter
                        .use_verification_token("race@example.com", &token)
                        .await
                        .unwrap()
                }));
            }
            let mut winners = 0;
            for t in tasks {
                if t.await.unwrap().is_some() {
                    winners += 1;
                }
            }
            assert_eq!(winners, 1, "round {round}: {winners} callers got the token");
        }
    })
    .await;
}

#[tokio::test]
async fn link_account_twice_is_a_conflict() {
    with_db(|db| async move {
        let a = &db.adapter;
        let u1 = a.create_user(new_user("l1@example.com")).await.unwrap();
        let u2 = a.create_user(new_user("l2@example.com")).await.unwrap();
        let acc = account(&u1.id, "github", "7");
        a.link_account(acc.clone()).await.unwrap();
        let again = a.link_account(account(&u2.id, "github", "7")).await;
        assert!(matches!(again, Err(AdapterError::Conflict(_))), "{again:?}");
        // The first link is untouched.
        assert_eq!(a.get_account("7", "github").await.unwrap(), Some(acc));
        assert_eq!(
            a.get_user_by_account("github", "7")
                .await
                .unwrap()
                .map(|u| u.id),
            Some(u1.id.clone())
        );
        assert!(
            db.members(&format!("user:account:by-user-id:{}", u2.id))
                .await
                .is_empty()
        );
        assert_eq!(a.get_account("7", "gitlab").await.unwrap(), None);
        assert_eq!(a.get_user_by_account("github", "8").await.unwrap(), None);

        a.unlink_account("github", "7").await.unwrap();
        assert_eq!(a.get_account("7", "github").await.unwrap(), None);
        assert!(
            db.members(&format!("user:account:by-user-id:{}", u1.id))
                .await
                .is_empty()
        );
        a.unlink_account("github", "7").await.unwrap();
        // Free again.
        a.link_account(account(&u2.id, "github", "7"))
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_links_and_creates_have_one_winner() {
    with_db(|db| async move {
        const RACERS: usize = 6;
        let owner = db
            .adapter
            .create_user(new_user("owner@example.com"))
            .await
            .unwrap();
        let barrier = Arc::new(Barrier::new(RACERS));
        let mut links = Vec::new();
        let mut creates = Vec::new();
        for _ in 0..RACERS {
            let (adapter, barrier, owner) = (db.adapter.clone(), barrier.clone(), owner.id.clone());
            links.push(tokio::spawn(async move {
                barrier.wait().await;
                adapter.link_account(account(&owner, "google", "g1")).await
            }));
            let adapter = db.adapter.clone();
            creates.push(tokio::spawn(async move {
                adapter.create_user(new_user("same@example.com")).await
            }));
        }
        let mut ok_links = 0;
        for t in links {
            match t.await.unwrap() {
                Ok(()) => ok_links += 1,
                Err(AdapterError::Conflict(_)) => {}
                Err(e) => panic!("unexpected {e:?}"),
            }
        }
        let mut ok_creates = 0;
        for t in creates {
            match t.await.unwrap() {
                Ok(_) => ok_creates += 1,
                Err(AdapterError::Conflict(_)) => {}
                Err(e) => panic!("unexpected {e:?}"),
            }
        }
        assert_eq!((ok_links, ok_creates), (1, 1));
        // Exactly one user record besides the owner.
        let users = db
            .keys()
            .await
            .into_iter()
            .filter(|k| k.starts_with("user:") && k.matches(':').count() == 1)
            .count();
        assert_eq!(users, 2);
    })
    .await;
}

#[tokio::test]
async fn users_email_index_and_updates() {
    with_db(|db| async move {
        let a = &db.adapter;
        let verified = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        let user = a
            .create_user(NewUser {
                name: Some("Ada".into()),
                email: Some("ada@example.com".into()),
                email_verified: Some(verified),
                image: Some("https://img.example/a.png".into()),
            })
            .await
            .unwrap();
        assert!(uuid::Uuid::parse_str(&user.id).is_ok());
        assert_eq!(a.get_user(&user.id).await.unwrap(), Some(user.clone()));
        assert_eq!(
            a.get_user_by_email("ada@example.com").await.unwrap(),
            Some(user.clone())
        );
        assert_eq!(a.get_user_by_email("ADA@example.com").await.unwrap(), None);
        assert_eq!(a.get_user("no-such-id").await.unwrap(), None);
        let dup = a.create_user(new_user("ada@example.com")).await;
        assert!(matches!(dup, Err(AdapterError::Conflict(_))), "{dup:?}");
        let other = a.create_user(new_user("bob@example.com")).await.unwrap();
        // Users without email are fine, and many of them.
        let anon1 = a.create_user(NewUser::default()).await.unwrap();
        let anon2 = a.create_user(NewUser::default()).await.unwrap();
        assert_ne!(anon1.id, anon2.id);

        // An extra field written by another Auth.js adapter survives updates.
        let mut stored = db.get_json(&format!("user:{}", user.id)).await;
        stored["role"] = json!("admin");
        db.set_raw(&format!("user:{}", user.id), &stored.to_string())
            .await;

        let updated = a
            .update_user(UserUpdate {
                id: user.id.clone(),
                name: Some(None),
                email: Some(Some("ada@new.example".into())),
                email_verified: Some(None),
                image: None,
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(updated.name, None);
        assert_eq!(updated.email.as_deref(), Some("ada@new.example"));
        assert_eq!(updated.email_verified, None);
        assert_eq!(updated.image, user.image);
        assert_eq!(a.get_user(&user.id).await.unwrap(), Some(updated.clone()));
        assert_eq!(a.get_user_by_email("ada@example.com").await.unwrap(), None);
        assert_eq!(db.get("user:email:ada@example.com").await, None);
        assert_eq!(
            a.get_user_by_email("ada@new.example").await.unwrap(),
            Some(updated.clone())
        );
        let stored = db.get_json(&format!("user:{}", user.id)).await;
        assert_eq!(stored["role"], json!("admin"));
        assert!(stored.get("name").is_none());

        // Taking another user's email is a conflict and changes nothing.
        let taken = a
            .update_user(UserUpdate {
                id: user.id.clone(),
                email: Some(Some("bob@example.com".into())),
                ..Default::default()
            })
            .await;
        assert!(matches!(taken, Err(AdapterError::Conflict(_))), "{taken:?}");
        assert_eq!(a.get_user(&user.id).await.unwrap(), Some(updated.clone()));
        assert_eq!(
            a.get_user_by_email("bob@example.com").await.unwrap(),
            Some(other)
        );

        // Clearing the email frees it.
        a.update_user(UserUpdate {
            id: user.id.clone(),
            email: Some(None),
            email_verified: Some(Some(verified)),
            ..Default::default()
        })
        .await
        .unwrap();
        assert_eq!(db.get("user:email:ada@new.example").await, None);
        a.create_user(new_user("ada@new.example")).await.unwrap();

        assert_eq!(
            a.update_user(UserUpdate {
                id: "missing".into(),
                ..Default::default()
            })
            .await
            .unwrap(),
            None
        );
    })
    .await;
}

#[tokio::test]
async fn delete_user_cascades_and_spares_others() {
    with_db(|db| async move {
        let a = &db.adapter;
        let gone = a.create_user(new_user("gone@example.com")).await.unwrap();
        let kept = a.create_user(new_user("kept@example.com")).await.unwrap();
        for (user, tag) in [(&gone, "g"), (&kept, "k")] {
            for n in 1..=2 {
                a.link_account(account(&user.id, "github", &format!("{tag}{n}")))
                    .await
                    .unwrap();
                a.create_session(session(
                    &user.id,
                    &format!("{tag}-sess-{n}"),
                    now() + Duration::hours(1),
                ))
                .await
                .unwrap();
                a.create_authenticator(authenticator(&user.id, &format!("{tag}{n}cred==")))
                    .await
                    .unwrap();
            }
            a.set_password_hash(&user.id, tag).await.unwrap();
            a.set_user_groups(&user.id, &[tag.to_owned()])
                .await
                .unwrap();
        }
        let before = db.keys().await;

        a.delete_user(&gone.id).await.unwrap();

        assert_eq!(a.get_user(&gone.id).await.unwrap(), None);
        assert_eq!(a.get_user_by_email("gone@example.com").await.unwrap(), None);
        assert_eq!(a.get_account("g1", "github").await.unwrap(), None);
        assert_eq!(a.get_user_by_account("github", "g2").await.unwrap(), None);
        assert_eq!(a.get_session_and_user("g-sess-1").await.unwrap(), None);
        assert_eq!(a.get_authenticator("g1cred==").await.unwrap(), None);
        assert!(
            a.list_authenticators_by_user_id(&gone.id)
                .await
                .unwrap()
                .is_empty()
        );
        // Exactly the other user's keys remain.
        let k = &kept.id;
        let mut expected = vec![
            format!("user:{k}"),
            "user:email:kept@example.com".to_owned(),
            "user:account:github:k1".to_owned(),
            "user:account:github:k2".to_owned(),
            format!("user:account:by-user-id:{k}"),
            "user:session:k-sess-1".to_owned(),
            "user:session:k-sess-2".to_owned(),
            format!("user:session:by-user-id:{k}"),
            "user:authenticator:k1cred==".to_owned(),
            "user:authenticator:k2cred==".to_owned(),
            format!("user:authenticator:by-user-id:{k}"),
            format!("user:password:{k}"),
            format!("user:groups:{k}"),
        ];
        expected.sort();
        // Each user's keys, and the user index.
        assert_eq!(before.len(), 2 * expected.len() + 1);
        expected.push("user-index".to_owned());
        expected.sort();
        assert_eq!(db.keys().await, expected);
        let index: Vec<String> = db
            .raw
            .clone()
            .zrange(db.key("user-index"), 0, -1)
            .await
            .unwrap();
        assert_eq!(index, vec![kept.id.clone()], "the user left the index");
        assert!(a.get_session_and_user("k-sess-2").await.unwrap().is_some());
        assert_eq!(
            a.list_authenticators_by_user_id(&kept.id)
                .await
                .unwrap()
                .len(),
            2
        );

        // The email and account are free again; deleting twice is fine.
        a.delete_user(&gone.id).await.unwrap();
        a.delete_user("never-existed").await.unwrap();
        let again = a.create_user(new_user("gone@example.com")).await.unwrap();
        a.link_account(account(&again.id, "github", "g1"))
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn authenticators() {
    with_db(|db| async move {
        let a = &db.adapter;
        let user = a.create_user(new_user("w@example.com")).await.unwrap();
        let b = authenticator(&user.id, "QkJC");
        let c = authenticator(&user.id, "QUFB");
        assert_eq!(a.create_authenticator(b.clone()).await.unwrap(), b);
        assert_eq!(a.create_authenticator(c.clone()).await.unwrap(), c);
        let dup = a.create_authenticator(b.clone()).await;
        assert!(matches!(dup, Err(AdapterError::Conflict(_))), "{dup:?}");
        assert_eq!(a.get_authenticator("QkJC").await.unwrap(), Some(b.clone()));
        assert_eq!(a.get_authenticator("Q0ND").await.unwrap(), None);
        assert_eq!(
            a.list_authenticators_by_user_id(&user.id).await.unwrap(),
            vec![c.clone(), b.clone()]
        );
        assert!(
            a.list_authenticators_by_user_id("nobody")
                .await
                .unwrap()
                .is_empty()
        );

        let bumped = a
            .update_authenticator_counter("QkJC", 9)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(bumped.counter, 9);
        assert_eq!(a.get_authenticator("QkJC").await.unwrap(), Some(bumped));
        assert_eq!(
            a.update_authenticator_counter("Q0ND", 1).await.unwrap(),
            None
        );
        // Large counters survive the JSON round trip.
        let big = a
            .update_authenticator_counter("QUFB", u64::from(u32::MAX) + 5)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(a.get_authenticator("QUFB").await.unwrap(), Some(big));
    })
    .await;
}

#[tokio::test]
async fn account_round_trip_keeps_every_field() {
    with_db(|db| async move {
        let a = &db.adapter;
        let user = a.create_user(new_user("r@example.com")).await.unwrap();
        let mut acc = Account::new(ProviderType::Oidc, "keycloak", "sub-1");
        acc.user_id = Some(user.id.clone());
        acc.access_token = Some("at".into());
        acc.expires_at = Some(1_900_000_000);
        acc.id_token = Some("idt".into());
        acc.refresh_token = Some("rt".into());
        acc.scope = Some("openid email".into());
        acc.token_type = Some("bearer".into());
        acc.session_state = Some("ss".into());
        acc.authorization_details = Some(vec![json!({"type": "x"})]);
        acc.extra.insert("refresh_expires_in".into(), json!(1800));
        a.link_account(acc.clone()).await.unwrap();
        assert_eq!(a.get_account("sub-1", "keycloak").await.unwrap(), Some(acc));
    })
    .await;
}

#[tokio::test]
async fn odd_stored_data_is_a_backend_error_without_values() {
    with_db(|db| async move {
        let a = &db.adapter;
        let id = uuid::Uuid::new_v4().to_string();
        db.set_raw(&format!("user:{id}"), "secret-not-json").await;
        let e = a.get_user(&id).await.unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Data);
        assert!(!e.to_string().contains("secret"), "{e}");
        assert!(!format!("{e:?}").contains("secret"), "{e:?}");
        let e = a
            .update_user(UserUpdate {
                id: id.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Data);

        // Valid JSON of the wrong shape.
        db.set_raw("user:session:weird", r#"{"sessionToken":"secret-value"}"#)
            .await;
        let e = a.get_session_and_user("weird").await.unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Data);
        assert!(!e.to_string().contains("secret"), "{e}");
        db.set_raw("user:authenticator:QQ==", "[1,2]").await;
        let e = a.update_authenticator_counter("QQ==", 1).await.unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Data);
        db.set_raw("user:token:t@example.com:x", "{").await;
        let e = a
            .use_verification_token("t@example.com", "x")
            .await
            .unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Data);

        // A key of the wrong Redis type.
        let _: () =
            redis::AsyncCommands::sadd(&mut db.raw.clone(), db.key("user:session:set"), "x")
                .await
                .unwrap();
        let e = a.get_session_and_user("set").await.unwrap_err();
        assert_eq!(backend_kind(&e), BackendErrorKind::Server);
        assert!(e.to_string().contains("WRONGTYPE"), "{e}");

        // Index and email keys are not readable through other namespaces.
        let user = a.create_user(new_user("n@example.com")).await.unwrap();
        a.create_session(session(&user.id, "s1", now() + Duration::hours(1)))
            .await
            .unwrap();
        assert_eq!(a.get_user("email:n@example.com").await.unwrap(), None);
        assert_eq!(
            a.get_session_and_user(&format!("by-user-id:{}", user.id))
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            a.delete_session(&format!("by-user-id:{}", user.id))
                .await
                .unwrap(),
            None
        );
        assert_eq!(a.get_account(&user.id, "by-user-id").await.unwrap(), None);
        assert_eq!(
            a.get_authenticator(&format!("by-user-id:{}", user.id))
                .await
                .unwrap(),
            None
        );
        assert!(a.get_session_and_user("s1").await.unwrap().is_some());
        // A `:` moved between identifier and token names the same key, but not the record.
        a.create_verification_token(VerificationToken {
            identifier: "a@x.test:p".into(),
            token: "t".into(),
            expires: now() + Duration::hours(1),
        })
        .await
        .unwrap();
        assert_eq!(
            a.use_verification_token("a@x.test", "p:t").await.unwrap(),
            None
        );
    })
    .await;
}

#[tokio::test]
async fn prefixes_isolate_data() {
    let db1: TestDb = common::test_db().await;
    let db2: TestDb = common::test_db().await;
    let u = db1
        .adapter
        .create_user(new_user("iso@example.com"))
        .await
        .unwrap();
    let other = db2.adapter.get_user_by_email("iso@example.com").await;
    let own = db1.adapter.get_user(&u.id).await;
    db1.wipe().await;
    db2.wipe().await;
    assert_eq!(other.unwrap(), None);
    assert_eq!(own.unwrap(), Some(u));
    assert!(db1.keys().await.is_empty());
    assert_eq!(db1.adapter.prefix(), db1.prefix);
    let debug = format!("{:?}", db1.adapter);
    assert!(
        debug.contains(&db1.prefix) && !debug.contains("redis://"),
        "{debug}"
    );
}

/// Users written before the user index existed (no `user-index`) are found by the
/// directory's search: the first search adds them to the index, once.
#[tokio::test]
async fn the_first_search_indexes_users_written_before_the_index() {
    use authcore::adapter::{UserDirectoryStore, UserQuery};
    with_db(|db| async move {
        let a = &db.adapter;
        let mut ids = Vec::new();
        for email in ["old-1@example.com", "old-2@example.com"] {
            let user = a
                .create_user(NewUser {
                    email: Some(email.into()),
                    ..NewUser::default()
                })
                .await
                .unwrap();
            ids.push(user.id);
        }
        // As an older version left them: no index.
        let _: i64 = db.raw.clone().del(db.key("user-index")).await.unwrap();
        let query = UserQuery {
            text: Some("old-".into()),
            limit: 10,
            ..UserQuery::default()
        };
        let page = a.search_users(&query).await.unwrap();
        let mut found: Vec<String> = page.users.into_iter().map(|u| u.id).collect();
        found.sort();
        ids.sort();
        assert_eq!(found, ids);
        assert_eq!(db.get("user-index:complete").await.as_deref(), Some("1"));
        // A user deleted after the index was filled is not found.
        a.delete_user(&ids[0]).await.unwrap();
        let page = a.search_users(&query).await.unwrap();
        assert_eq!(page.users.len(), 1);
    })
    .await;
}

/// Two instances on two connections to one keyspace, each with two tasks recording audit
/// events at once: every event is stored once, in one chain that checks whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_recording_audit_events_keep_one_chain() {
    use authcore::audit::{AuditEvent, AuditLog};
    use authcore::providers::email::EmailProvider;
    with_db(|db| async move {
        let second = authcore_redis::RedisAdapter::connect_with(
            &common::redis_url(),
            common::fast_options(),
        )
        .await
        .unwrap()
        .with_prefix(&db.prefix);
        let instances: Vec<authcore::Auth> = [db.adapter.clone(), second]
            .into_iter()
            .map(|adapter| {
                let email = EmailProvider::new("a@example.com")
                    .send_verification_request(|_| async { Ok(()) });
                authcore::Auth::new(
                    authcore::AuthConfig::builder()
                        .secret("a redis audit race secret, long enough")
                        .trust_host(true)
                        .provider(email)
                        .adapter(adapter)
                        .audit_log(AuditLog::new().store(true))
                        .build()
                        .unwrap(),
                )
            })
            .collect();
        let tasks: Vec<_> = (0..4)
            .map(|i| {
                let auth = instances[i % 2].clone();
                tokio::spawn(async move {
                    for n in 0..10 {
                        auth.record_audit(
                            AuditEvent::new("race.event").with("task", i).with("n", n),
                        )
                        .await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let report = authcore::audit::check(&db.adapter).await.unwrap();
        assert_eq!(report.faults, Vec::new());
        assert_eq!(
            (report.checked, report.first, report.last),
            (40, Some(1), Some(40))
        );
    })
    .await;
}
