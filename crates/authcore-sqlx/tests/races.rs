//! Races: one magic link opened by 50 concurrent requests signs in exactly
//! once, on PostgreSQL and MySQL/MariaDB (two handlers sharing the database, as two
//! instances would) and on SQLite; concurrent reads and updates of one database session keep its row whole.
#![cfg(all(feature = "postgres", feature = "sqlite", feature = "mysql"))]
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::{Arc, Mutex};

use authcore::adapter::Adapter as _;
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
