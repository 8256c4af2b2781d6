//! SqlxAdapter on SQLite: the shared conformance suite on a temporary file, constructor
//! behaviour, a lock-contention fault with recovery and a unique-constraint race.

#![cfg(feature = "sqlite")]

use crate::common;

use std::time::Duration;

use authcore::adapter::SessionActivityStore;
use authcore::adapter::{Adapter, AdapterError, AdapterSession, NewUser};
use authcore_conformance::core as conformance;
use authcore_sqlx::SqlxAdapter;
use common::TempDir;
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions};
use time::OffsetDateTime;

async fn fresh(dir: &TempDir) -> SqlxAdapter {
    let path = dir.path().join("authcore.db");
    let adapter = SqlxAdapter::sqlite(path.to_str().expect("utf-8 path"))
        .await
        .expect("open sqlite");
    adapter.migrate().await.expect("migrate");
    adapter
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_on_a_temporary_file() {
    let dir = TempDir::new();
    common::conformance_then_close(fresh(&dir).await).await;
}

/// Rows of the rate-limit store whose window and lock are over are deleted by the store
/// (at its first count, then at most once a minute); live rows stay.
#[tokio::test]
async fn the_rate_limit_store_deletes_expired_rows() {
    use authcore::ratelimit::{RateLimit, RateLimitStore};
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    let rows = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM rate_limits")
            .fetch_one(adapter.sqlite_pool().expect("a SQLite adapter"))
            .await
            .expect("count rows")
    };
    let first = adapter.rate_limit_store();
    let short = RateLimit::new(1, Duration::from_millis(50));
    let long = RateLimit::new(1, Duration::from_secs(3600));
    assert_eq!(first.count("short", &short).await.unwrap(), None);
    assert_eq!(first.count("long", &long).await.unwrap(), None);
    assert_eq!(rows().await, 2);
    tokio::time::sleep(Duration::from_millis(120)).await;
    // The first store swept a minute ago at most: it waits; a new one sweeps now.
    assert_eq!(first.count("other", &long).await.unwrap(), None);
    assert_eq!(rows().await, 3);
    let second = adapter.rate_limit_store();
    assert_eq!(second.lockout_left("long").await.unwrap(), None);
    assert_eq!(second.count("another", &long).await.unwrap(), None);
    assert_eq!(
        rows().await,
        3,
        "the expired row is deleted, the live ones stay"
    );
    assert!(second.count("long", &long).await.unwrap().is_some());
}

#[tokio::test]
async fn url_constructor_creates_the_file_in_wal_mode_and_migrate_is_idempotent() {
    let dir = TempDir::new();
    let path = dir.path().join("via-url.db");
    assert!(!path.exists());
    let url = format!("sqlite://{}", path.display());
    let adapter = SqlxAdapter::sqlite(&url).await.expect("open by URL");
    assert!(path.exists(), "the database file is created");
    adapter.migrate().await.expect("migrate");
    adapter.migrate().await.expect("second migrate is a no-op");
    let user = adapter
        .create_user(NewUser {
            email: Some("a@example.com".into()),
            ..NewUser::default()
        })
        .await
        .expect("create_user");
    uuid::Uuid::parse_str(&user.id).expect("SQLite user ids are UUIDs");
    // WAL with synchronous = NORMAL (1): no fsync per commit while holding the write lock.
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(adapter.sqlite_pool().expect("a SQLite adapter"))
        .await
        .expect("synchronous");
    assert_eq!(synchronous, 1);
    // The stale-token sweep of create_verification_token uses an index on expires.
    let index: Option<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'verification_token_expires'",
    )
    .fetch_optional(adapter.sqlite_pool().expect("a SQLite adapter"))
    .await
    .expect("sqlite_master");
    assert_eq!(index.as_deref(), Some("verification_token_expires"));
    adapter.close().await;

    let mut raw = SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&path))
        .await
        .expect("raw connection");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut raw)
        .await
        .expect("journal_mode");
    assert_eq!(mode, "wal");
    // Stored as JavaScript's toISOString() would, for interoperability.
    let verified: Option<String> = sqlx::query_scalar(r#"SELECT "emailVerified" FROM users"#)
        .fetch_one(&mut raw)
        .await
        .expect("select");
    assert_eq!(verified, None);
}

#[tokio::test]
async fn timestamps_are_stored_as_iso_strings() {
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    let user = adapter
        .create_user(NewUser {
            email: Some("t@example.com".into()),
            email_verified: Some(OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    adapter.close().await;
    let mut raw = SqliteConnection::connect_with(
        &SqliteConnectOptions::new().filename(dir.path().join("authcore.db")),
    )
    .await
    .unwrap();
    let stored: String = sqlx::query_scalar(r#"SELECT "emailVerified" FROM users WHERE id = ?"#)
        .bind(&user.id)
        .fetch_one(&mut raw)
        .await
        .unwrap();
    assert_eq!(stored, "2023-11-14T22:13:20.000Z");
}

#[tokio::test]
async fn foreign_keys_are_enforced() {
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    let err = adapter
        .create_session(AdapterSession {
            session_token: "tok".into(),
            user_id: uuid::Uuid::new_v4().to_string(),
            expires: OffsetDateTime::now_utc(),
        })
        .await
        .expect_err("a session of an unknown user is refused");
    assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
    assert!(err.to_string().contains("create_session"), "{err}");
}

/// Another process holds the write lock longer than the busy timeout: the call fails with
/// a Backend error (no panic), and succeeds once the lock is released.
#[tokio::test]
async fn locked_database_gives_backend_error_then_recovers() {
    let dir = TempDir::new();
    let path = dir.path().join("authcore.db");
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_millis(200));
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options.clone())
        .await
        .unwrap();
    let adapter = SqlxAdapter::from_sqlite_pool(pool);
    adapter.migrate().await.unwrap();
    let user = adapter
        .create_user(NewUser {
            email: Some("lock@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();

    let mut locker = SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut locker)
        .await
        .unwrap();

    let err = adapter
        .create_user(NewUser {
            email: Some("blocked@example.com".into()),
            ..NewUser::default()
        })
        .await
        .expect_err("the write cannot get the lock");
    assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("create_user"), "{msg}");
    assert!(
        !msg.contains("blocked@example.com"),
        "no values in messages: {msg}"
    );
    assert!(!msg.contains("INSERT"), "no SQL in messages: {msg}");
    // Reads still work in WAL mode.
    assert!(adapter.get_user(&user.id).await.unwrap().is_some());

    sqlx::raw_sql("COMMIT").execute(&mut locker).await.unwrap();
    let created = adapter
        .create_user(NewUser {
            email: Some("blocked@example.com".into()),
            ..NewUser::default()
        })
        .await
        .expect("the write succeeds once the lock is released");
    assert!(adapter.get_user(&created.id).await.unwrap().is_some());
}

/// A database opened read-only (`mode=ro`): writes fail with Backend, reads work.
#[tokio::test]
async fn read_only_database_gives_backend_error() {
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    let user = adapter
        .create_user(NewUser {
            email: Some("ro@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    adapter.close().await;

    let url = format!(
        "sqlite://{}?mode=ro",
        dir.path().join("authcore.db").display()
    );
    let ro = SqlxAdapter::sqlite(&url).await.expect("open read-only");
    assert!(ro.get_user(&user.id).await.unwrap().is_some());
    let err = ro
        .create_user(NewUser {
            email: Some("ro2@example.com".into()),
            ..NewUser::default()
        })
        .await
        .expect_err("read-only");
    assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
}

/// Two concurrent link_account of one account: one Ok, one Conflict, one row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_link_account_gives_one_conflict() {
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    common::concurrent_link_account_gives_one_conflict(&adapter).await;
    adapter.close().await;
}

#[tokio::test]
async fn in_memory_database_works() {
    let adapter = SqlxAdapter::sqlite("sqlite::memory:")
        .await
        .expect("memory");
    adapter.migrate().await.unwrap();
    conformance::users(&adapter).await;
    conformance::sessions(&adapter).await;
}

#[tokio::test]
async fn missing_directory_is_a_connect_error() {
    let err = SqlxAdapter::sqlite("sqlite://nonexistent-dir-authcore/x/y.db")
        .await
        .expect_err("missing directory");
    assert!(matches!(err, authcore_sqlx::Error::Connect(_)), "{err:?}");
}

#[tokio::test]
async fn ping_answers_while_open_and_fails_once_closed() {
    let dir = TempDir::new();
    let adapter = fresh(&dir).await;
    adapter.ping().await.expect("an open database answers");
    adapter.close().await;
    assert!(adapter.ping().await.is_err(), "a closed pool does not");
}

/// The session read on the calling thread (`PoolSettings::direct_session_reads`) answers
/// while the pool's only connection is taken; with it off, the read waits for the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_session_reads_answer_while_the_pool_is_taken() {
    use authcore_sqlx::PoolSettings;
    let dir = TempDir::new();
    let path = dir.path().join("authcore.db");
    let settings = PoolSettings::default()
        .max_connections(1)
        .timeout(Duration::from_millis(300));
    let open = |direct| {
        SqlxAdapter::sqlite_with(
            path.to_str().expect("utf-8 path"),
            settings.direct_session_reads(direct),
        )
    };
    let direct = open(true).await.expect("open");
    direct.migrate().await.expect("migrate");
    let pooled = open(false).await.expect("open");
    common::session_reads_answer_while_the_pool_is_taken(&direct, &pooled, async |adapter| {
        adapter
            .sqlite_pool()
            .expect("SQLite")
            .acquire()
            .await
            .expect("the pool's connection")
    })
    .await;
    // In memory, there is no file for a second connection: reads go through the pool.
    let memory = SqlxAdapter::sqlite_with("sqlite::memory:", settings)
        .await
        .expect("memory");
    memory.migrate().await.expect("migrate");
    conformance::sessions(&memory).await;
}

/// A credentials sign-in with database sessions whose `authorize` returns an id SQLite does
/// not know is refused before the session row (and its foreign key) is written: the
/// Configuration error page, a `CallbackRouteError` log line that says to return the
/// adapter's user id, never the store's `FOREIGN KEY constraint failed`. The stored user's
/// id signs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_database_sessions_need_the_adapters_user_id() {
    use authcore::providers::CredentialsProvider;
    use authcore::{Auth, AuthConfig, User};
    use http_body_util::{BodyExt, Full};

    const SECRET: &str = "sqlite-credentials-test-secret-xxxx";
    let dir = TempDir::new();
    let db = fresh(&dir).await;
    let user = db
        .create_user(NewUser {
            email: Some("dana@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    let stored_id = user.id.clone();
    // `authorize` returns the stored user's id for "dana", a made-up one for "ghost".
    let provider = CredentialsProvider::new().authorize(move |c, _| {
        let stored_id = stored_id.clone();
        async move {
            Ok(match c.get("username").and_then(|v| v.as_str()) {
                Some("dana") => Some(User::with_id(stored_id)),
                Some("ghost") => Some(User::with_id("ghost-1")),
                _ => None,
            })
        }
    });
    let logged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    struct Lines(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
    impl authcore::logger::Logger for Lines {
        fn error(&self, error: &authcore::AuthError) {
            let mut line = format!("{}: {error}", error.error_type());
            let mut source = std::error::Error::source(error);
            while let Some(e) = source {
                line.push_str(&format!(" / {e}"));
                source = e.source();
            }
            self.0.lock().unwrap().push(line);
        }
    }
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(provider)
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .logger(Lines(logged.clone()))
            .build()
            .unwrap(),
    );
    let csrf = authcore::csrf::csrf_cookie_value(&"c".repeat(64), SECRET).replace('|', "%7C");
    let sign_in = |username: &str| {
        let body = format!("csrfToken={}&username={username}", "c".repeat(64));
        http::Request::post("http://localhost:3000/auth/callback/credentials")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", format!("authjs.csrf-token={csrf}"))
            .body(Full::new(bytes::Bytes::from(body)))
            .unwrap()
    };
    let session_cookie = |r: &http::Response<_>| {
        r.headers()
            .get_all("set-cookie")
            .iter()
            .any(|v| v.to_str().unwrap().starts_with("authjs.session-token="))
    };

    let r = auth.handle(sign_in("ghost")).await;
    assert_eq!(r.status(), 302);
    assert_eq!(
        r.headers()["location"],
        "http://localhost:3000/auth/error?error=Configuration"
    );
    assert!(!session_cookie(&r));
    let lines = logged.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("CallbackRouteError: "), "{lines:?}");
    assert!(
        lines[0].contains("authorize must return the adapter's user id"),
        "{lines:?}"
    );
    assert!(!lines[0].contains("FOREIGN KEY"), "{lines:?}");

    let r = auth.handle(sign_in("dana")).await;
    assert_eq!(r.status(), 302);
    assert!(session_cookie(&r));
    let _ = r.into_body().collect().await;
    assert_eq!(
        db.list_sessions_by_user_id(&user.id).await.unwrap().len(),
        1
    );
    db.close().await;
}
