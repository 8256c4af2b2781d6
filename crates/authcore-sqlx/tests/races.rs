//! Races (issue 17): one magic link opened by 50 concurrent requests signs in exactly
//! once, on PostgreSQL (two handlers sharing the database, as two instances would) and on
//! SQLite.
#![cfg(all(feature = "postgres", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use authcore::providers::{EmailProvider, VerificationRequest};
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
            .secret("races-test-secret")
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
        authcore::csrf::csrf_cookie_value(&csrf, "races-test-secret").replace('|', "%7C")
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
