//! The database session read (`get_session_and_user`, what every request with a database
//! session costs) and the JWT revocation list's read (`get_jwt_revocation`, what it adds to
//! a JWT session read) on SQLite, PostgreSQL and MySQL/MariaDB, one
//! round trip each, measured from the caller: `cargo bench -p authcore-sqlx --bench
//! session_read`. A database that is not running is skipped with a line saying so.
#![allow(clippy::unwrap_used, missing_docs)]

use authcore::adapter::JwtRevocationStore;
use authcore::adapter::{Adapter, AdapterSession, NewUser};
use authcore_sqlx::SqlxAdapter;
use criterion::{Criterion, criterion_group, criterion_main};

/// A user with one session in `adapter` (and a JWT revocation); the session token and the
/// user id.
async fn one_session(adapter: &SqlxAdapter) -> (String, String) {
    adapter.migrate().await.unwrap();
    let user = adapter
        .create_user(NewUser {
            name: Some("Bench".into()),
            email: Some(format!("bench-{}@example.com", uuid::Uuid::new_v4())),
            ..NewUser::default()
        })
        .await
        .unwrap();
    let token = uuid::Uuid::new_v4().to_string();
    adapter
        .create_session(AdapterSession {
            session_token: token.clone(),
            user_id: user.id.clone(),
            expires: time::OffsetDateTime::now_utc() + time::Duration::days(1),
        })
        .await
        .unwrap();
    adapter
        .revoke_jwt_sessions(&user.id, time::OffsetDateTime::now_utc(), None)
        .await
        .unwrap();
    (token, user.id)
}

fn bench(c: &mut Criterion, name: &str, rt: &tokio::runtime::Runtime, adapter: SqlxAdapter) {
    let (token, user_id) = rt.block_on(one_session(&adapter));
    c.bench_function(&format!("get_session_and_user/{name}"), |b| {
        b.iter(|| {
            let found = rt.block_on(adapter.get_session_and_user(&token)).unwrap();
            assert!(found.is_some());
        })
    });
    // What the JWT revocation list adds to a JWT session read.
    c.bench_function(&format!("get_jwt_revocation/{name}"), |b| {
        b.iter(|| {
            let found = rt.block_on(adapter.get_jwt_revocation(&user_id)).unwrap();
            assert!(found.is_some());
        })
    });
    rt.block_on(adapter.close());
}

fn session_read(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("authcore-bench-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = rt
        .block_on(SqlxAdapter::sqlite(dir.join("bench.db").to_str().unwrap()))
        .unwrap();
    bench(c, "sqlite", &rt, sqlite);
    let _ = std::fs::remove_dir_all(&dir);

    let pg_url = std::env::var("AUTHCORE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    // Its own schema (kept between runs; the rows are few).
    let pg_url = format!("{pg_url}?options=-c%20search_path%3Dauthcore_bench");
    match rt.block_on(SqlxAdapter::postgres(&pg_url)) {
        Ok(pg) => {
            let pool = pg.postgres_pool().unwrap();
            rt.block_on(sqlx::query("CREATE SCHEMA IF NOT EXISTS authcore_bench").execute(pool))
                .unwrap();
            bench(c, "postgres", &rt, pg)
        }
        Err(e) => eprintln!("PostgreSQL skipped: {e}"),
    }

    #[cfg(feature = "mysql")]
    {
        let url = std::env::var("AUTHCORE_TEST_MYSQL_URL")
            .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned());
        match rt.block_on(SqlxAdapter::mysql(&url)) {
            Ok(my) => {
                // Its own database (kept between runs; the rows are few).
                let pool = my.mysql_pool().unwrap().clone();
                rt.block_on(
                    sqlx::query("CREATE DATABASE IF NOT EXISTS authcore_bench").execute(&pool),
                )
                .unwrap();
                rt.block_on(my.close());
                let (server, _) = url.rsplit_once('/').unwrap();
                let my = rt
                    .block_on(SqlxAdapter::mysql(&format!("{server}/authcore_bench")))
                    .unwrap();
                bench(c, "mysql", &rt, my);
            }
            Err(e) => eprintln!("MySQL skipped: {e}"),
        }
    }
}

criterion_group!(benches, session_read);
criterion_main!(benches);
