//! Races: one magic link opened by 50 concurrent requests signs in exactly
//! once, on PostgreSQL and MySQL/MariaDB (two handlers sharing the database, as two
//! instances would) and on SQLite; concurrent reads and updates of one database session keep its row whole;
//! the owners of an organization all stepping down at once leave one owner, and an
//! invitation accepted by several users at once makes one member, on every database; two
//! instances recording audit events at once keep one whole chain, and of two appends of
//! one `seq` one is stored, on every database.
#![cfg(all(feature = "postgres", feature = "sqlite", feature = "mysql"))]
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::{Arc, Mutex};

use authcore::adapter::{
    Adapter as _, AuditLogStore as _, Invitation, InvitationAcceptance, InvitationStatus, Member,
    MemberChange, NewUser, OWNER_ROLE, Organization, OrganizationStore as _,
};
use authcore::providers::email::{EmailProvider, VerificationRequest};
use authcore::{Auth, AuthConfig};
use authcore_sqlx::SqlxAdapter;
use bytes::Bytes;
use common::pg::with_pg_schema;
use http_body_util::Full;
use sqlx::postgres::PgPoolOptions;

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

fn instance(db: SqlxAdapter, outbox: &Outbox) -> Auth {
    let sent = outbox.clone();
    let email = EmailProvider::new("a@example.com").send_verification_request(move |r| {
        let sent = sent.clone();
        async move {
            sent.lock().unwrap().push(r);
            Ok(())
        }
    });
    Auth::new(
        AuthConfig::builder()
            .secret("races-test-secret-xxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(email)
            .adapter(db)
            .build()
            .unwrap(),
    )
}

/// Requests a link through `auth`, opens it 50 times at once through `instances` in
/// turn, and returns how many of those answers set a session cookie.
async fn open_link_concurrently(instances: &[Auth], outbox: &Outbox) -> usize {
    let csrf = "a".repeat(64);
    let cookie = format!(
        "authjs.csrf-token={}",
        authcore::csrf::csrf_cookie_value(&csrf, "races-test-secret-xxxxxxxxxxxxxx")
            .replace('|', "%7C")
    );
    let body = format!("csrfToken={csrf}&email=race%40example.com");
    let r = instances[0]
        .handle(
            http::Request::post("http://localhost/auth/signin/email")
                .header("content-type", "application/x-www-form-urlencoded")
                .header("cookie", &cookie)
                .body(Full::new(Bytes::from(body)))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status(), 302);
    let link = outbox.lock().unwrap().pop().unwrap().url;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let auth = instances[i % instances.len()].clone();
        let link = link.clone();
        tasks.push(tokio::spawn(async move {
            let r = auth
                .handle(
                    http::Request::get(link)
                        .body(Full::new(Bytes::new()))
                        .unwrap(),
                )
                .await;
            r.headers().get_all("set-cookie").iter().any(|c| {
                let c = c.to_str().unwrap();
                c.starts_with("authjs.session-token=") && !c.starts_with("authjs.session-token=;")
            })
        }));
    }
    let mut signed_in = 0;
    for t in tasks {
        signed_in += usize::from(t.await.unwrap());
    }
    signed_in
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_link_signs_in_once_on_postgres() {
    with_pg_schema(|options, _| async move {
        let mut instances = Vec::new();
        let outbox = Outbox::default();
        for _ in 0..2 {
            let pool = PgPoolOptions::new()
                .max_connections(10)
                .connect_with(options.clone())
                .await
                .unwrap();
            let db = SqlxAdapter::from_postgres_pool(pool);
            db.migrate().await.unwrap();
            instances.push(instance(db, &outbox));
        }
        assert_eq!(open_link_concurrently(&instances, &outbox).await, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_link_signs_in_once_on_mysql() {
    common::mysql::with_mysql_database(|options, _| async move {
        let mut instances = Vec::new();
        let outbox = Outbox::default();
        for _ in 0..2 {
            let pool = sqlx::mysql::MySqlPoolOptions::new()
                .max_connections(10)
                .connect_with(options.clone())
                .await
                .unwrap();
            let db = SqlxAdapter::from_mysql_pool(pool);
            db.migrate().await.unwrap();
            instances.push(instance(db, &outbox));
        }
        assert_eq!(open_link_concurrently(&instances, &outbox).await, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_link_signs_in_once_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("authcore-races-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = SqlxAdapter::sqlite(&dir.join("races.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let outbox = Outbox::default();
    let auth = instance(db, &outbox);
    assert_eq!(open_link_concurrently(&[auth], &outbox).await, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Concurrent reads and updates of one database session on two instances, each of which
/// writes the row on every request (`session_update_age` 0): every answer is the user's
/// session, and the row is whole afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_of_a_database_session_keep_the_row() {
    with_pg_schema(|options, _| async move {
        let outbox = Outbox::default();
        let mut instances = Vec::new();
        let mut db = None;
        for _ in 0..2 {
            let pool = PgPoolOptions::new()
                .max_connections(10)
                .connect_with(options.clone())
                .await
                .unwrap();
            let adapter = SqlxAdapter::from_postgres_pool(pool);
            adapter.migrate().await.unwrap();
            let sent = outbox.clone();
            let email = EmailProvider::new("a@example.com").send_verification_request(move |r| {
                let sent = sent.clone();
                async move {
                    sent.lock().unwrap().push(r);
                    Ok(())
                }
            });
            instances.push(Auth::new(
                AuthConfig::builder()
                    .secret("races-test-secret-xxxxxxxxxxxxxx")
                    .trust_host(true)
                    .provider(email)
                    .adapter(adapter.clone())
                    .session_update_age(std::time::Duration::ZERO)
                    .build()
                    .unwrap(),
            ));
            db = Some(adapter);
        }
        let db = db.unwrap();
        let csrf = "a".repeat(64);
        let csrf_cookie = format!(
            "authjs.csrf-token={}",
            authcore::csrf::csrf_cookie_value(&csrf, "races-test-secret-xxxxxxxxxxxxxx")
                .replace('|', "%7C")
        );
        let r = instances[0]
            .handle(
                http::Request::post("http://localhost/auth/signin/email")
                    .header("content-type", "application/x-www-form-urlencoded")
                    .header("cookie", &csrf_cookie)
                    .body(Full::new(Bytes::from(format!(
                        "csrfToken={csrf}&email=rows%40example.com"
                    ))))
                    .unwrap(),
            )
            .await;
        assert_eq!(r.status(), 302);
        let link = outbox.lock().unwrap().pop().unwrap().url;
        let r = instances[1]
            .handle(
                http::Request::get(link)
                    .body(Full::new(Bytes::new()))
                    .unwrap(),
            )
            .await;
        let token = r
            .headers()
            .get_all("set-cookie")
            .iter()
            .find_map(|c| {
                c.to_str()
                    .unwrap()
                    .strip_prefix("authjs.session-token=")
                    .map(|v| v.split(';').next().unwrap().to_owned())
            })
            .unwrap();
        let before = db
            .get_session_and_user(&token)
            .await
            .unwrap()
            .unwrap()
            .0
            .expires;
        let cookie = format!("authjs.session-token={token}; {csrf_cookie}");
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let auth = instances[i % 2].clone();
                let cookie = cookie.clone();
                let req = if i % 4 < 2 {
                    http::Request::get("http://localhost/auth/session")
                        .header("cookie", &cookie)
                        .body(Full::new(Bytes::new()))
                } else {
                    http::Request::post("http://localhost/auth/session")
                        .header("content-type", "application/json")
                        .header("cookie", &cookie)
                        .body(Full::new(Bytes::from(format!(
                            r#"{{"csrfToken":"{}","data":{{"n":{i}}}}}"#,
                            "a".repeat(64)
                        ))))
                }
                .unwrap();
                tokio::spawn(async move {
                    let r = auth.handle(req).await;
                    let body = http_body_util::BodyExt::collect(r.into_body())
                        .await
                        .unwrap()
                        .to_bytes();
                    serde_json::from_slice::<serde_json::Value>(&body).unwrap()
                })
            })
            .collect();
        for t in tasks {
            let session = t.await.unwrap();
            assert_eq!(session["user"]["email"], "rows@example.com", "{session}");
        }
        let (row, user) = db.get_session_and_user(&token).await.unwrap().unwrap();
        assert_eq!(user.email.as_deref(), Some("rows@example.com"));
        assert!(row.expires >= before, "{:?} < {before:?}", row.expires);
    })
    .await;
}

/// How many users contend in each round of the organization races.
const CONTENDERS: usize = 4;

/// Two adapters on one PostgreSQL schema, as two instances would be.
async fn pg_adapters(options: sqlx::postgres::PgConnectOptions) -> [SqlxAdapter; 2] {
    let mut adapters = Vec::new();
    for _ in 0..2 {
        let pool = PgPoolOptions::new()
            .max_connections(CONTENDERS as u32)
            .connect_with(options.clone())
            .await
            .unwrap();
        let db = SqlxAdapter::from_postgres_pool(pool);
        db.migrate().await.unwrap();
        adapters.push(db);
    }
    adapters.try_into().unwrap()
}

/// Two adapters on one MySQL / MariaDB database.
async fn mysql_adapters(options: sqlx::mysql::MySqlConnectOptions) -> [SqlxAdapter; 2] {
    let mut adapters = Vec::new();
    for _ in 0..2 {
        let pool = sqlx::mysql::MySqlPoolOptions::new()
            .max_connections(CONTENDERS as u32)
            .connect_with(options.clone())
            .await
            .unwrap();
        let db = SqlxAdapter::from_mysql_pool(pool);
        db.migrate().await.unwrap();
        adapters.push(db);
    }
    adapters.try_into().unwrap()
}

/// Two adapters on one SQLite file in `dir`.
async fn sqlite_adapters(dir: &common::TempDir) -> [SqlxAdapter; 2] {
    let path = dir.path().join("organizations.db").display().to_string();
    let first = SqlxAdapter::sqlite(&path).await.unwrap();
    first.migrate().await.unwrap();
    [first, SqlxAdapter::sqlite(&path).await.unwrap()]
}

/// Every round: an organization whose [`CONTENDERS`] members are all owners, each stepping
/// down at once through one of `adapters` in turn (removed, or in odd rounds left with
/// another role): one is refused as the last owner, the others are done, and one owner is
/// left. Then one invitation accepted by all of them at once: one acceptance, one member
/// more.
async fn organization_races(adapters: [SqlxAdapter; 2]) {
    let db = &adapters[0];
    let mut users = Vec::new();
    for i in 0..CONTENDERS {
        let email = format!("org-race-{i}-{}@example.com", uuid::Uuid::new_v4().simple());
        let user = db
            .create_user(NewUser {
                email: Some(email),
                ..NewUser::default()
            })
            .await
            .unwrap();
        users.push(user.id);
    }
    let now = time::OffsetDateTime::now_utc();
    for round in 0..10 {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let org = Organization {
            slug: format!("race-{id}"),
            name: "Race".into(),
            id,
            created_at: now,
        };
        let member = |user_id: &str| Member {
            organization_id: org.id.clone(),
            user_id: user_id.to_owned(),
            roles: vec![OWNER_ROLE.to_owned()],
            teams: Vec::new(),
            created_at: now,
        };
        db.create_organization(&org, &member(&users[0]))
            .await
            .unwrap();
        for user in &users[1..] {
            assert!(db.add_member(&member(user)).await.unwrap());
        }
        let tasks: Vec<_> = users
            .iter()
            .enumerate()
            .map(|(i, user)| {
                let (db, org, user) = (adapters[i % 2].clone(), org.id.clone(), user.clone());
                tokio::spawn(async move {
                    if round % 2 == 0 {
                        db.remove_member(&org, &user).await
                    } else {
                        db.set_member_roles(&org, &user, &["member".to_owned()])
                            .await
                    }
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(t.await.unwrap().unwrap());
        }
        let refused = outcomes
            .iter()
            .filter(|o| **o == MemberChange::LastOwner)
            .count();
        let owners = db
            .list_members(&org.id)
            .await
            .unwrap()
            .iter()
            .filter(|m| m.is_owner())
            .count();
        assert_eq!((refused, owners), (1, 1), "round {round}: {outcomes:?}");

        let invitation = Invitation {
            id: uuid::Uuid::new_v4().simple().to_string(),
            organization_id: Some(org.id.clone()),
            email: "race@example.com".into(),
            roles: vec!["member".into()],
            teams: Vec::new(),
            inviter_id: None,
            token_hash: uuid::Uuid::new_v4().simple().to_string(),
            created_at: now,
            expires: now + time::Duration::hours(1),
            status: InvitationStatus::Pending,
        };
        db.create_invitation(&invitation).await.unwrap();
        let members_before = db.list_members(&org.id).await.unwrap().len();
        let tasks: Vec<_> = users
            .iter()
            .enumerate()
            .map(|(i, user)| {
                let (db, id, user) = (adapters[i % 2].clone(), invitation.id.clone(), user.clone());
                tokio::spawn(async move { db.accept_invitation(&id, &user, now).await })
            })
            .collect();
        let mut accepted = 0;
        for t in tasks {
            let outcome = t.await.unwrap().unwrap();
            match outcome {
                InvitationAcceptance::Accepted { .. } => accepted += 1,
                InvitationAcceptance::Closed => {}
                other => panic!("round {round}: {other:?}"),
            }
        }
        let members = db.list_members(&org.id).await.unwrap().len();
        // The one owner left was a member already (keeping their roles) or another user
        // joined.
        assert_eq!(accepted, 1, "round {round}");
        assert!(
            members == members_before || members == members_before + 1,
            "round {round}: {members_before} then {members} members"
        );
    }
    for db in adapters {
        db.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organizations_keep_an_owner_and_invitations_are_accepted_once_on_postgres() {
    with_pg_schema(|options, _| async move {
        organization_races(pg_adapters(options).await).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organizations_keep_an_owner_and_invitations_are_accepted_once_on_mysql() {
    common::mysql::with_mysql_database(|options, _| async move {
        organization_races(mysql_adapters(options).await).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organizations_keep_an_owner_and_invitations_are_accepted_once_on_sqlite() {
    let dir = common::TempDir::new();
    organization_races(sqlite_adapters(&dir).await).await;
}

/// How many events each of the four recorders of the audit race records.
const AUDIT_EVENTS: usize = 10;

/// Two instances (one per adapter), each with two tasks recording audit events at once:
/// every event is stored once, in one chain that checks whole. Then rounds of two appends
/// of one `seq`, one through each adapter: one is stored, and it is the one read back.
async fn audit_races(adapters: [SqlxAdapter; 2]) {
    let instances: Vec<Auth> = adapters
        .iter()
        .map(|db| {
            let email =
                EmailProvider::new("a@example.com").send_verification_request(|_| async { Ok(()) });
            Auth::new(
                AuthConfig::builder()
                    .secret("races-test-secret-xxxxxxxxxxxxxx")
                    .trust_host(true)
                    .provider(email)
                    .adapter(db.clone())
                    .audit_log(authcore::audit::AuditLog::new().store(true))
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let auth = instances[i % 2].clone();
            tokio::spawn(async move {
                for n in 0..AUDIT_EVENTS {
                    let event = authcore::audit::AuditEvent::new("race.event")
                        .with("recorder", i)
                        .with("n", n);
                    auth.record_audit(event).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let report = authcore::audit::check(&adapters[1]).await.unwrap();
    assert_eq!(report.faults, Vec::new());
    assert_eq!(report.checked, 4 * AUDIT_EVENTS as u64);
    assert_eq!(
        (report.first, report.last),
        (Some(1), Some(4 * AUDIT_EVENTS as u64))
    );

    for round in 0..10 {
        let last = adapters[0].last_audit_record().await.unwrap();
        let [a, b] = ["a", "b"].map(|who| {
            authcore::audit::AuditEvent::new("race.same-seq")
                .actor(who)
                .seal(last.as_ref(), time::OffsetDateTime::now_utc())
        });
        let (first, second) = (adapters[0].clone(), adapters[1].clone());
        let (ra, rb) = (a.clone(), b.clone());
        let ta = tokio::spawn(async move { first.append_audit_record(&ra).await });
        let tb = tokio::spawn(async move { second.append_audit_record(&rb).await });
        let stored = [ta.await.unwrap().unwrap(), tb.await.unwrap().unwrap()];
        let back = adapters[1]
            .query_audit_records(&authcore::adapter::AuditQuery {
                cursor: Some(a.seq - 1),
                ascending: true,
                limit: 1,
                ..Default::default()
            })
            .await
            .unwrap();
        match stored {
            [true, false] => assert_eq!(back, vec![a], "round {round}"),
            [false, true] => assert_eq!(back, vec![b], "round {round}"),
            other => panic!("round {round}: appends answered {other:?}"),
        }
    }
    assert!(
        authcore::audit::check(&adapters[0])
            .await
            .unwrap()
            .faults
            .is_empty()
    );
    for db in adapters {
        db.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_appends_keep_one_chain_on_postgres() {
    with_pg_schema(|options, _| async move {
        audit_races(pg_adapters(options).await).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_appends_keep_one_chain_on_mysql() {
    common::mysql::with_mysql_database(|options, _| async move {
        audit_races(mysql_adapters(options).await).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_appends_keep_one_chain_on_sqlite() {
    let dir = common::TempDir::new();
    audit_races(sqlite_adapters(&dir).await).await;
}
