//! SqlxAdapter on PostgreSQL (`postgres://postgres@127.0.0.1:5432/test`, or
//! `AUTHCORE_TEST_POSTGRES_URL`), each test in its own freshly created schema: the shared
//! conformance suite, compatibility with a database created by Auth.js's
//! `@auth/pg-adapter` schema, terminated connections and a unique-constraint race.
//!
//! These tests need a running server and fail (they do not skip) without one; start it with
//! `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`.

#![cfg(feature = "postgres")]

use crate::common;

use std::time::Duration;

use authcore::adapter::{Adapter, AdapterError, NewUser};
use authcore_conformance::{self as conformance, Options};
use authcore_sqlx::SqlxAdapter;
use common::pg::{admin_connection, postgres_url, with_pg_schema};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

async fn pool_adapter(options: PgConnectOptions, max: u32) -> SqlxAdapter {
    let pool = PgPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .expect("connect to the test schema");
    let adapter = SqlxAdapter::from_postgres_pool(pool);
    adapter.migrate().await.expect("migrate");
    adapter
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_in_a_fresh_schema() {
    with_pg_schema(|options, _| async move {
        common::conformance_then_close(pool_adapter(options, 5).await).await;
    })
    .await;
}

/// The URL constructor (`options=-c search_path=…` selects the schema) and SERIAL ids.
#[tokio::test]
async fn url_constructor_and_serial_ids() {
    with_pg_schema(|_, schema| async move {
        let adapter = SqlxAdapter::postgres(&schema_url(&schema))
            .await
            .expect("connect by URL");
        adapter.migrate().await.expect("migrate");
        adapter.migrate().await.expect("second migrate is a no-op");
        let a = adapter
            .create_user(NewUser {
                email: Some("a@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let b = adapter
            .create_user(NewUser {
                email: Some("b@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let (a_id, b_id): (i32, i32) = (a.id.parse().unwrap(), b.id.parse().unwrap());
        assert_eq!(b_id, a_id + 1, "SERIAL ids as decimal strings");
        // Ids that cannot be SERIAL values name no row, as in pg-adapter.
        assert_eq!(adapter.get_user("not-a-number").await.unwrap(), None);
        assert_eq!(adapter.get_user(&format!("0{a_id}")).await.unwrap(), None);
        let err = adapter
            .create_session(authcore::adapter::AdapterSession {
                session_token: "t".into(),
                user_id: "abc".into(),
                expires: time::OffsetDateTime::now_utc(),
            })
            .await
            .expect_err("not an id");
        assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
        adapter.close().await;
    })
    .await;
}

/// The tables exactly as `@auth/pg-adapter` documents them (no constraints, no
/// authenticators): `migrate()` adds what is missing, and the adapter passes the suite on
/// them, so an existing Auth.js database can be shared.
#[tokio::test]
async fn works_on_a_database_created_for_auth_js_pg_adapter() {
    with_pg_schema(|options, _| async move {
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::raw_sql(PG_ADAPTER_SCHEMA).execute(&pool).await.unwrap();
        // A row written by Auth.js (pg-adapter's own INSERT) is read back.
        let id: i32 = sqlx::query_scalar(
            r#"INSERT INTO users (name, email, "emailVerified", image) VALUES ('Ada', 'ada@example.com', now(), NULL) RETURNING id"#,
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        let adapter = SqlxAdapter::from_postgres_pool(pool.clone());
        adapter.migrate().await.expect("migrate on pg-adapter tables");
        let ada = adapter.get_user(&id.to_string()).await.unwrap().unwrap();
        assert_eq!(ada.email.as_deref(), Some("ada@example.com"));
        assert!(ada.email_verified.is_some());
        conformance::run_all_with(adapter.clone(), Options::default().account_extras(false))
            .await;
        adapter.close().await;
    })
    .await;
}

/// The pool's connection is terminated by the server (`pg_terminate_backend`): the call
/// fails with a Backend error without panicking, and the next call succeeds on a new
/// connection.
#[tokio::test]
async fn terminated_connection_gives_backend_error_then_recovers() {
    with_pg_schema(|options, schema| async move {
        let app = format!("authcore-fault-{schema}");
        // One connection, not pinged before use: the fault reaches the adapter call.
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.application_name(&app))
            .await
            .unwrap();
        let adapter = SqlxAdapter::from_postgres_pool(pool);
        adapter.migrate().await.unwrap();
        let user = adapter
            .create_user(NewUser {
                email: Some("fault@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();

        terminate_backends(&app).await;
        let err = adapter
            .get_user(&user.id)
            .await
            .expect_err("the pooled connection is gone");
        assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
        assert!(err.to_string().contains("get_user"), "{err}");

        let again = adapter
            .get_user(&user.id)
            .await
            .expect("a new connection serves the next call");
        assert_eq!(again.map(|u| u.id), Some(user.id));
        adapter.close().await;
    })
    .await;
}

/// With sqlx's default pool (connections pinged before use) a terminated connection is
/// replaced before the call: no error at all.
#[tokio::test]
async fn terminated_connection_is_replaced_by_a_default_pool() {
    with_pg_schema(|options, schema| async move {
        let app = format!("authcore-default-{schema}");
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect_with(options.application_name(&app))
            .await
            .unwrap();
        let adapter = SqlxAdapter::from_postgres_pool(pool);
        adapter.migrate().await.unwrap();
        let user = adapter
            .create_user(NewUser {
                email: Some("default@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        terminate_backends(&app).await;
        let got = adapter
            .get_user(&user.id)
            .await
            .expect("transparent recovery");
        assert_eq!(got.map(|u| u.id), Some(user.id));
        adapter.close().await;
    })
    .await;
}

/// Two concurrent link_account of one account, on two connections: one Ok, one Conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_link_account_gives_one_conflict() {
    with_pg_schema(|options, _| async move {
        let adapter = pool_adapter(options, 4).await;
        common::concurrent_link_account_gives_one_conflict(&adapter).await;
        adapter.close().await;
    })
    .await;
}

/// The URL of the test server with `search_path` set to `schema`.
fn schema_url(schema: &str) -> String {
    let base = postgres_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options=-c%20search_path%3D{schema}")
}

/// The conformance suite through the URL constructor, whose session reads take their own
/// `tokio-postgres` connections (`PoolSettings::direct_session_reads`): every write is seen
/// by the next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_with_direct_session_reads() {
    with_pg_schema(|_, schema| async move {
        let adapter = SqlxAdapter::postgres(&schema_url(&schema))
            .await
            .expect("connect by URL");
        adapter.migrate().await.expect("migrate");
        common::conformance_then_close(adapter).await;
    })
    .await;
}

/// The session read on its own connection answers while the pool's only connection is
/// taken; with direct reads off, the read waits for the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_session_reads_answer_while_the_pool_is_taken() {
    use authcore_sqlx::PoolSettings;
    with_pg_schema(|_, schema| async move {
        let settings = PoolSettings::default()
            .max_connections(1)
            .timeout(Duration::from_millis(500));
        let url = schema_url(&schema);
        let direct = SqlxAdapter::postgres_with(&url, settings)
            .await
            .expect("connect");
        direct.migrate().await.expect("migrate");
        let pooled = SqlxAdapter::postgres_with(&url, settings.direct_session_reads(false))
            .await
            .expect("connect");
        common::session_reads_answer_while_the_pool_is_taken(&direct, &pooled, async |adapter| {
            adapter
                .postgres_pool()
                .expect("PostgreSQL")
                .acquire()
                .await
                .expect("the pool's connection")
        })
        .await;
        direct.close().await;
        pooled.close().await;
    })
    .await;
}

/// Kills every server backend whose application_name is `app` and waits until they are
/// gone.
async fn terminate_backends(app: &str) {
    let mut admin = admin_connection().await;
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(app)
    .fetch_all(&mut admin)
    .await
    .expect("pg_terminate_backend");
    assert!(
        !killed.is_empty() && killed.iter().all(|k| *k),
        "terminated {killed:?}"
    );
    for _ in 0..100 {
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
                .bind(app)
                .fetch_one(&mut admin)
                .await
                .expect("count backends");
        if left == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("backends of {app} still running after pg_terminate_backend");
}

/// The schema from `@auth/pg-adapter`'s documentation, verbatim.
const PG_ADAPTER_SCHEMA: &str = r#"
CREATE TABLE verification_token
(
  identifier TEXT NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  token TEXT NOT NULL,

  PRIMARY KEY (identifier, token)
);

CREATE TABLE accounts
(
  id SERIAL,
  "userId" INTEGER NOT NULL,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  "providerAccountId" VARCHAR(255) NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  id_token TEXT,
  scope TEXT,
  session_state TEXT,
  token_type TEXT,

  PRIMARY KEY (id)
);

CREATE TABLE sessions
(
  id SERIAL,
  "userId" INTEGER NOT NULL,
  expires TIMESTAMPTZ NOT NULL,
  "sessionToken" VARCHAR(255) NOT NULL,

  PRIMARY KEY (id)
);

CREATE TABLE users
(
  id SERIAL,
  name VARCHAR(255),
  email VARCHAR(255),
  "emailVerified" TIMESTAMPTZ,
  image TEXT,

  PRIMARY KEY (id)
);
"#;
