//! SqlxAdapter on MySQL / MariaDB (`mysql://root@127.0.0.1:3306/test`, or
//! `AUTHCORE_TEST_MYSQL_URL`), each test in its own freshly created database: the shared
//! conformance suite, the URL constructors, byte-wise comparison of tokens, times past 2038,
//! a database created by Auth.js's Drizzle schema, killed connections and a
//! unique-constraint race.
//!
//! These tests need a running server and fail (they do not skip) without one; start
//! MariaDB with `start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd`.

#![cfg(feature = "mysql")]
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use authcore::adapter::{Adapter, AdapterError, AdapterSession, NewUser, VerificationToken};
use authcore::types::{Account, Authenticator, ProviderType};
use authcore_sqlx::SqlxAdapter;
use common::mysql::{admin_connection, mysql_url, with_mysql_database};
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use time::OffsetDateTime;

async fn pool_adapter(options: MySqlConnectOptions, max: u32) -> SqlxAdapter {
    let pool = MySqlPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .expect("connect to the test database");
    let adapter = SqlxAdapter::from_mysql_pool(pool);
    adapter.migrate().await.expect("migrate");
    adapter
}

/// The URL of the test server with `database` selected (`scheme` replacing `mysql`).
fn url_of(scheme: &str, database: &str) -> String {
    let url = mysql_url();
    let (server, _) = url.rsplit_once('/').unwrap();
    let rest = server.strip_prefix("mysql").unwrap();
    format!("{scheme}{rest}/{database}")
}

fn user(email: &str) -> NewUser {
    NewUser {
        email: Some(email.into()),
        ..NewUser::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_in_a_fresh_database() {
    with_mysql_database(|options, _| async move {
        common::conformance_then_close(pool_adapter(options, 5).await).await;
    })
    .await;
}

/// `connect` with `mysql://` and `mariadb://` URLs, an idempotent `migrate`, UUID ids.
#[tokio::test]
async fn url_constructors_and_uuid_ids() {
    with_mysql_database(|_, name| async move {
        for scheme in ["mysql", "mariadb"] {
            let adapter = SqlxAdapter::connect(&url_of(scheme, &name))
                .await
                .unwrap_or_else(|e| panic!("connect by {scheme}:// URL: {e}"));
            adapter.migrate().await.expect("migrate");
            adapter.migrate().await.expect("second migrate is a no-op");
            let u = adapter
                .create_user(user(&format!("{scheme}@example.com")))
                .await
                .unwrap();
            assert!(uuid::Uuid::parse_str(&u.id).is_ok(), "{}", u.id);
            assert!(format!("{adapter:?}").contains("mysql"));
            adapter.close().await;
        }
        let err = SqlxAdapter::connect("mssql://sa@localhost/db")
            .await
            .expect_err("no such driver");
        assert!(err.to_string().contains("mssql"), "{err}");
    })
    .await;
}

/// MySQL's default collations ignore case; the tables use `utf8mb4_bin`, so a token, a
/// session token or a credential id matches only itself.
#[tokio::test]
async fn tokens_and_ids_compare_byte_for_byte() {
    with_mysql_database(|options, _| async move {
        let adapter = pool_adapter(options, 2).await;
        let expires = OffsetDateTime::now_utc() + time::Duration::hours(1);
        adapter
            .create_verification_token(VerificationToken {
                identifier: "case@example.com".into(),
                token: "AbCdEf".into(),
                expires,
            })
            .await
            .unwrap();
        let used = adapter
            .use_verification_token("case@example.com", "abcdef")
            .await
            .unwrap();
        assert_eq!(used, None, "another case is another token");
        let u = adapter.create_user(user("case@example.com")).await.unwrap();
        adapter
            .create_session(AdapterSession {
                session_token: "Session-Token".into(),
                user_id: u.id.clone(),
                expires,
            })
            .await
            .unwrap();
        assert!(
            adapter
                .get_session_and_user("session-token")
                .await
                .unwrap()
                .is_none()
        );
        for id in ["cred-ID", "cred-id"] {
            adapter
                .create_authenticator(Authenticator {
                    credential_id: id.into(),
                    user_id: Some(u.id.clone()),
                    provider_account_id: id.into(),
                    credential_public_key: "pk".into(),
                    counter: 0,
                    credential_device_type: "singleDevice".into(),
                    credential_backed_up: false,
                    transports: None,
                    name: None,
                })
                .await
                .unwrap_or_else(|e| panic!("{id} is a credential of its own: {e}"));
        }
        let ids: Vec<String> = adapter
            .list_authenticators_by_user_id(&u.id)
            .await
            .unwrap()
            .into_iter()
            .map(|a| a.credential_id)
            .collect();
        assert_eq!(ids, ["cred-ID", "cred-id"], "byte-wise order");
        adapter.close().await;
    })
    .await;
}

/// `DATETIME(3)` in UTC: milliseconds kept, times past 2038 (where MySQL's `TIMESTAMP`
/// ends) stored.
#[tokio::test]
async fn times_keep_milliseconds_and_pass_2038() {
    with_mysql_database(|options, _| async move {
        let adapter = pool_adapter(options, 2).await;
        let u = adapter.create_user(user("time@example.com")).await.unwrap();
        let expires = time::macros::datetime!(2100-01-02 03:04:05.678 UTC);
        let s = adapter
            .create_session(AdapterSession {
                session_token: "far".into(),
                user_id: u.id,
                expires,
            })
            .await
            .unwrap();
        assert_eq!(s.expires, expires);
        let (read, _) = adapter.get_session_and_user("far").await.unwrap().unwrap();
        assert_eq!(read.expires, expires);
        adapter.close().await;
    })
    .await;
}

/// The tables as Auth.js's Drizzle adapter defines them for MySQL (`defineTables()`'s
/// defaults, as drizzle-kit writes them): `migrate()` leaves them as they are, a user row
/// written the way the Drizzle adapter writes it is read back, and a whole sign-in's worth
/// of operations works on them, so a database of an Auth.js app can be shared. (Not the
/// conformance suite: it stores an `expires_at` past 2^31 on purpose, which Drizzle's
/// `INT` column cannot hold; authcore's own tables use `BIGINT`.)
#[tokio::test]
async fn works_on_a_database_created_by_auth_js_drizzle_schema() {
    with_mysql_database(|options, _| async move {
        let pool = MySqlPoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::raw_sql(DRIZZLE_MYSQL_SCHEMA)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::raw_sql(
            "INSERT INTO `user` (id, name, email, `emailVerified`, image) \
             VALUES ('0b5c3e0e-2a40-4d53-8a5c-1b2f0e6c7d8e', 'Ada', 'ada@example.com', now(3), NULL)",
        )
        .execute(&pool)
        .await
        .unwrap();
        let adapter = SqlxAdapter::from_mysql_pool(pool);
        adapter.migrate().await.expect("migrate on Drizzle's tables");
        let ada = adapter
            .get_user_by_email("ada@example.com")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ada.id, "0b5c3e0e-2a40-4d53-8a5c-1b2f0e6c7d8e");
        assert!(ada.email_verified.is_some());

        let now = OffsetDateTime::now_utc().replace_millisecond(0).unwrap();
        let mut account = Account::new(ProviderType::Oidc, "oidc", "sub-1");
        account.user_id = Some(ada.id.clone());
        account.access_token = Some("at".into());
        account.expires_at = Some(now.unix_timestamp() + 3600);
        adapter.link_account(account.clone()).await.unwrap();
        let by_account = adapter.get_user_by_account("oidc", "sub-1").await.unwrap();
        assert_eq!(by_account.map(|u| u.id), Some(ada.id.clone()));
        assert_eq!(
            adapter.get_account("sub-1", "oidc").await.unwrap(),
            Some(account)
        );
        let expires = now + time::Duration::days(30);
        adapter
            .create_session(AdapterSession {
                session_token: "drizzle-session".into(),
                user_id: ada.id.clone(),
                expires,
            })
            .await
            .unwrap();
        let (session, u) = adapter
            .get_session_and_user("drizzle-session")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((session.expires, u.id.as_str()), (expires, ada.id.as_str()));
        let later = expires + time::Duration::days(1);
        let updated = adapter
            .update_session("drizzle-session", later)
            .await
            .unwrap();
        assert_eq!(updated.map(|s| s.expires), Some(later));
        adapter
            .create_verification_token(VerificationToken {
                identifier: "ada@example.com".into(),
                token: "hashed".into(),
                expires,
            })
            .await
            .unwrap();
        let used = adapter
            .use_verification_token("ada@example.com", "hashed")
            .await
            .unwrap();
        assert_eq!(used.map(|t| t.expires), Some(expires));
        adapter
            .create_authenticator(Authenticator {
                credential_id: "cred".into(),
                user_id: Some(ada.id.clone()),
                provider_account_id: "cred".into(),
                credential_public_key: "pk".into(),
                counter: 1,
                credential_device_type: "multiDevice".into(),
                credential_backed_up: true,
                transports: Some("internal".into()),
                name: None,
            })
            .await
            .unwrap();
        let counted = adapter.update_authenticator_counter("cred", 2).await.unwrap();
        assert_eq!(counted.map(|a| a.counter), Some(2));
        adapter.delete_user(&ada.id).await.unwrap();
        assert!(adapter.get_session_and_user("drizzle-session").await.unwrap().is_none());
        assert!(adapter.get_authenticator("cred").await.unwrap().is_none());
        adapter.close().await;
    })
    .await;
}

/// The pool's connection is killed by the server (`KILL`): the call fails with a Backend
/// error naming the operation, without panicking, and the next call succeeds on a new
/// connection.
#[tokio::test]
async fn killed_connection_gives_backend_error_then_recovers() {
    with_mysql_database(|options, _| async move {
        // One connection, not pinged before use: the fault reaches the adapter call.
        let pool = MySqlPoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .unwrap();
        let adapter = SqlxAdapter::from_mysql_pool(pool.clone());
        adapter.migrate().await.unwrap();
        let u = adapter.create_user(user("kill@example.com")).await.unwrap();
        let id: u64 = sqlx::query_scalar("SELECT CONNECTION_ID()")
            .fetch_one(&pool)
            .await
            .unwrap();
        let mut admin = admin_connection().await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("KILL CONNECTION {id}")))
            .execute(&mut admin)
            .await
            .unwrap();
        // `KILL` returns before the thread is gone: wait (bounded) until the server no
        // longer lists it, so the next call meets a closed connection however busy the
        // machine is.
        for _ in 0..100 {
            let listed: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?",
            )
            .bind(id)
            .fetch_one(&mut admin)
            .await
            .unwrap();
            if listed == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // The call meets the closed connection and fails as a backend error naming the
        // operation, unless the pool saw the close first (the server's EOF reached the
        // idle socket) and opened a new connection, which then serves it.
        match adapter.get_user(&u.id).await {
            Ok(found) => assert_eq!(found.map(|x| x.id), Some(u.id.clone())),
            Err(err) => {
                assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
                assert!(err.to_string().contains("get_user"), "{err}");
            }
        }
        let again = adapter
            .get_user(&u.id)
            .await
            .expect("a new connection serves the next call");
        assert_eq!(again.map(|x| x.id), Some(u.id));
        adapter.close().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_link_account_gives_one_conflict() {
    with_mysql_database(|options, _| async move {
        let adapter = pool_adapter(options, 4).await;
        common::concurrent_link_account_gives_one_conflict(&adapter).await;
        adapter.close().await;
    })
    .await;
}

/// `@auth/drizzle-adapter`'s MySQL tables (`defineTables()` defaults) as drizzle-kit
/// creates them.
const DRIZZLE_MYSQL_SCHEMA: &str = r#"
CREATE TABLE `user` (
  `id` varchar(255) NOT NULL,
  `name` varchar(255),
  `email` varchar(255),
  `emailVerified` timestamp(3),
  `image` varchar(255),
  CONSTRAINT `user_id` PRIMARY KEY(`id`),
  CONSTRAINT `user_email_unique` UNIQUE(`email`)
);
CREATE TABLE `account` (
  `userId` varchar(255) NOT NULL,
  `type` varchar(255) NOT NULL,
  `provider` varchar(255) NOT NULL,
  `providerAccountId` varchar(255) NOT NULL,
  `refresh_token` varchar(255),
  `access_token` varchar(255),
  `expires_at` int,
  `token_type` varchar(255),
  `scope` varchar(255),
  `id_token` varchar(2048),
  `session_state` varchar(255),
  CONSTRAINT `account_provider_providerAccountId_pk` PRIMARY KEY(`provider`,`providerAccountId`)
);
CREATE TABLE `session` (
  `sessionToken` varchar(255) NOT NULL,
  `userId` varchar(255) NOT NULL,
  `expires` timestamp NOT NULL,
  CONSTRAINT `session_sessionToken` PRIMARY KEY(`sessionToken`)
);
CREATE TABLE `verificationToken` (
  `identifier` varchar(255) NOT NULL,
  `token` varchar(255) NOT NULL,
  `expires` timestamp NOT NULL,
  CONSTRAINT `verificationToken_identifier_token_pk` PRIMARY KEY(`identifier`,`token`)
);
CREATE TABLE `authenticator` (
  `credentialID` varchar(255) NOT NULL,
  `userId` varchar(255) NOT NULL,
  `providerAccountId` varchar(255) NOT NULL,
  `credentialPublicKey` varchar(255) NOT NULL,
  `counter` int NOT NULL,
  `credentialDeviceType` varchar(255) NOT NULL,
  `credentialBackedUp` boolean NOT NULL,
  `transports` varchar(255),
  CONSTRAINT `authenticator_userId_credentialID_pk` PRIMARY KEY(`userId`,`credentialID`),
  CONSTRAINT `authenticator_credentialID_unique` UNIQUE(`credentialID`)
);
ALTER TABLE `account` ADD CONSTRAINT `account_userId_user_id_fk` FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON DELETE cascade ON UPDATE no action;
ALTER TABLE `authenticator` ADD CONSTRAINT `authenticator_userId_user_id_fk` FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON DELETE cascade ON UPDATE no action;
ALTER TABLE `session` ADD CONSTRAINT `session_userId_user_id_fk` FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON DELETE cascade ON UPDATE no action;
"#;
