//! A fresh PostgreSQL schema per test.

use std::future::Future;
use std::str::FromStr;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};

/// The server the PostgreSQL tests use.
pub fn postgres_url() -> String {
    std::env::var("AUTHCORE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

const START_HINT: &str = "start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start \
     (or point AUTHCORE_TEST_POSTGRES_URL at a server with trust auth)";

/// A connection to the test database, creating the database if the server lacks it.
/// Panics with instructions when the server is not running.
pub async fn admin_connection() -> PgConnection {
    let url = postgres_url();
    let options = PgConnectOptions::from_str(&url).expect("valid AUTHCORE_TEST_POSTGRES_URL");
    match PgConnection::connect_with(&options).await {
        Ok(c) => c,
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("3D000") => {
            // "database does not exist": create it from the maintenance database.
            let db = options.get_database().unwrap_or("test").to_owned();
            let mut maint = PgConnection::connect_with(&options.clone().database("postgres"))
                .await
                .unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}; {START_HINT}"));
            let create = format!("CREATE DATABASE \"{}\"", db.replace('"', "\"\""));
            if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(create))
                .execute(&mut maint)
                .await
            {
                // A parallel test may have created it first.
                if !e.to_string().contains("already exists") {
                    panic!("could not create database {db}: {e}");
                }
            }
            PgConnection::connect_with(&options)
                .await
                .unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"))
        }
        Err(e) => panic!("PostgreSQL is not reachable at {url}: {e}\n{START_HINT}"),
    }
}

/// Runs `test` with connect options whose `search_path` is a schema created for it alone,
/// and drops the schema afterwards, also when the test panics.
pub async fn with_pg_schema<F, Fut>(test: F)
where
    F: FnOnce(PgConnectOptions, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut admin = admin_connection().await;
    let now = super::now_secs();
    drop_stale_schemas(&mut admin, now).await;
    let schema = super::test_store_name(now);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut admin)
        .await
        .expect("create test schema");
    let options = PgConnectOptions::from_str(&postgres_url())
        .expect("valid URL")
        .options([("search_path", schema.as_str())]);

    let result = tokio::spawn(test(options, schema.clone())).await;

    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&mut admin)
        .await
        .expect("drop test schema");
    let _ = admin.close().await;
    super::resume_panic(result);
}

/// Schemas left behind by test processes that were killed (older than an hour).
async fn drop_stale_schemas(admin: &mut PgConnection, now: u64) {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'authcore\\_test\\_%'",
    )
    .fetch_all(&mut *admin)
    .await
    .unwrap_or_default();
    for name in names {
        if super::is_stale_test_store(&name, now) {
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE"
            )))
            .execute(&mut *admin)
            .await;
        }
    }
}
