//! PostgreSQL reads on `tokio-postgres` clients of their own, the statement prepared once
//! per connection; concurrent reads on one client are pipelined.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use time::OffsetDateTime;
use tokio::sync::Mutex;
use tokio_postgres::config::SslMode;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use super::{Param, RETRY_AFTER, Read};
use crate::db::{Col, Val};

/// The `application_name` of the direct connections (unless the URL sets one): they are
/// told apart from the pool's in `pg_stat_activity`.
pub(crate) const APPLICATION_NAME: &str = "authcore-session-reads";

/// A few statements read on a few clients, taken in turn.
pub(crate) struct PgReads {
    config: Config,
    /// Each statement and the columns it reads, by the index the reads name it with.
    statements: Vec<(&'static str, &'static [Col])>,
    slots: Box<[Mutex<Slot>]>,
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    reader: Option<Arc<Reader>>,
    /// After a connection failed (or while one is being opened): no new one before this.
    retry_at: Option<Instant>,
}

/// A connection with the statements prepared on it (by index).
struct Reader {
    client: Client,
    statements: Vec<Statement>,
    _connection: AbortOnDrop,
}

/// The task driving a connection's socket, stopped with the last handle to its client
/// (it would otherwise wait on a server that stopped answering for as long as TCP does).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl PgReads {
    /// Reads with `statements` on at most `connections` connections made from `config`,
    /// opened when first needed.
    pub fn new(
        config: Config,
        statements: Vec<(&'static str, &'static [Col])>,
        connections: usize,
    ) -> Self {
        PgReads {
            config,
            statements,
            slots: (0..connections.max(1)).map(|_| Mutex::default()).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// The first row of statement `statement` with `params`, within `bound`.
    pub async fn fetch_optional(
        &self,
        statement: usize,
        params: &[Param<'_>],
        bound: Duration,
    ) -> Read {
        let Some(&(_, cols)) = self.statements.get(statement) else {
            return Read::UsePool;
        };
        // User ids are the `INTEGER`s of serial ids here; one that is none names no row.
        let mut ids = Vec::with_capacity(params.len());
        for p in params {
            if let Param::UserId(id) = p {
                match crate::dialect::serial_id(id) {
                    Some(n) => ids.push(n),
                    None => return Read::Row(None),
                }
            }
        }
        let mut ids = ids.iter();
        let values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .filter_map(|p| match p {
                Param::Text(s) => Some(s as &(dyn tokio_postgres::types::ToSql + Sync)),
                Param::UserId(_) => ids
                    .next()
                    .map(|n| n as &(dyn tokio_postgres::types::ToSql + Sync)),
            })
            .collect();
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        match tokio::time::timeout(bound, self.fetch_on(slot, statement, cols, &values)).await {
            Ok(read) => read,
            Err(_) => {
                tracing::warn!(
                    ?bound,
                    "PostgreSQL direct read timed out; reading through the pool"
                );
                // Busy means another read is opening a connection on it: leave that be.
                if let Ok(mut slot) = slot.try_lock() {
                    slot.reader = None;
                    slot.retry_at = Some(Instant::now() + RETRY_AFTER);
                }
                Read::UsePool
            }
        }
    }

    /// Closes every connection (reads in progress finish on their client first).
    pub async fn close(&self) {
        for slot in &self.slots {
            slot.lock().await.reader = None;
        }
    }

    async fn fetch_on(
        &self,
        slot: &Mutex<Slot>,
        statement: usize,
        cols: &[Col],
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Read {
        let Some(reader) = self.reader(slot).await else {
            return Read::UsePool;
        };
        let Some(prepared) = reader.statements.get(statement) else {
            return Read::UsePool;
        };
        let read = reader
            .client
            .query_opt(prepared, params)
            .await
            .and_then(|row| row.map(|row| read_row(&row, cols)).transpose());
        match read {
            Ok(row) => Read::Row(row),
            // The connection broke, or the statement no longer fits the table (a migration
            // since it was prepared): a new connection prepares it again, after a pause that
            // also keeps a lasting fault to one log line a second.
            Err(e) => {
                tracing::warn!(error = %describe(&e), "PostgreSQL direct read failed; reading through the pool");
                let mut slot = slot.lock().await;
                if slot
                    .reader
                    .as_ref()
                    .is_some_and(|r| Arc::ptr_eq(r, &reader))
                {
                    slot.reader = None;
                    slot.retry_at = Some(Instant::now() + RETRY_AFTER);
                }
                Read::UsePool
            }
        }
    }

    /// The slot's open connection, opened now if it has none (one read opens it while the
    /// others wait for the lock, so a burst of reads opens one connection, not one each).
    async fn reader(&self, slot: &Mutex<Slot>) -> Option<Arc<Reader>> {
        let mut slot = slot.lock().await;
        if let Some(reader) = &slot.reader {
            if !reader.client.is_closed() {
                return Some(Arc::clone(reader));
            }
            slot.reader = None;
        }
        if slot.retry_at.is_some_and(|at| Instant::now() < at) {
            return None;
        }
        // Set before trying: an attempt cut short by the caller's timeout counts as failed.
        slot.retry_at = Some(Instant::now() + RETRY_AFTER);
        match Reader::connect(&self.config, &self.statements).await {
            Ok(reader) => {
                let reader = Arc::new(reader);
                slot.reader = Some(Arc::clone(&reader));
                slot.retry_at = None;
                Some(reader)
            }
            Err(e) => {
                tracing::warn!(error = %describe(&e), "PostgreSQL direct reads: cannot connect; reading through the pool");
                None
            }
        }
    }
}

impl Reader {
    async fn connect(
        config: &Config,
        statements: &[(&'static str, &'static [Col])],
    ) -> Result<Reader, tokio_postgres::Error> {
        let (client, connection) = config.connect(NoTls).await?;
        let connection = AbortOnDrop(tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %describe(&e), "PostgreSQL session-read connection closed");
            }
        }));
        let mut prepared = Vec::with_capacity(statements.len());
        for (sql, _) in statements {
            prepared.push(client.prepare(sql).await?);
        }
        Ok(Reader {
            client,
            statements: prepared,
            _connection: connection,
        })
    }
}

/// Connects with `config` and closes the connection again: whether this path can reach
/// the server at all (the error as [`describe`] gives it).
pub(super) async fn try_connect(config: &Config) -> Result<(), String> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| describe(&e))?;
    // Without a client, the connection says goodbye to the server and ends.
    drop(client);
    connection.await.map_err(|e| describe(&e))
}

/// For the log: a server error by its SQLSTATE code and its message without quoted values
/// (as `crate::error` reports sqlx's; never the `DETAIL`); others as they are (I/O,
/// protocol and decoding errors hold no values).
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "database error {}: {}",
            db.code().code(),
            crate::error::without_values(db.message())
        ),
        None => e.to_string(),
    }
}

/// Reads `row` as `cols` say, as `crate::postgres::read_column` and `crate::db` do for sqlx
/// rows.
fn read_row(row: &Row, cols: &[Col]) -> Result<Vec<Val>, tokio_postgres::Error> {
    let mut values = Vec::with_capacity(cols.len());
    for (i, &col) in cols.iter().enumerate() {
        let value = match col {
            Col::Text => row.try_get::<_, Option<String>>(i)?.map(Val::Text),
            Col::Int => row.try_get::<_, Option<i64>>(i)?.map(Val::Int),
            Col::Bool => row.try_get::<_, Option<bool>>(i)?.map(Val::Bool),
            Col::UserId => row
                .try_get::<_, Option<i32>>(i)?
                .map(|id| Val::Text(id.to_string())),
            Col::Time => row.try_get::<_, Option<OffsetDateTime>>(i)?.map(Val::Time),
        };
        values.push(value.unwrap_or(Val::Null));
    }
    Ok(values)
}

/// The client settings of the pool's connections, or `None` where this path cannot follow
/// them (TLS required: `tokio-postgres` is built without it, like sqlx here).
///
/// The password comes from `url` (sqlx's options do not hand it out) or `PGPASSWORD`, as
/// sqlx takes it; a password only in `~/.pgpass` is not read, so such a connection fails
/// to authenticate and the reads stay on the pool.
pub(crate) fn client_config(
    url: &str,
    options: &sqlx::postgres::PgConnectOptions,
    connect_timeout: Duration,
) -> Option<Config> {
    use sqlx::postgres::PgSslMode;

    if !matches!(
        options.get_ssl_mode(),
        PgSslMode::Disable | PgSslMode::Allow | PgSslMode::Prefer
    ) {
        return None;
    }
    let mut config = Config::new();
    match options.get_socket() {
        #[cfg(unix)]
        Some(dir) => {
            config.host_path(dir);
        }
        #[cfg(not(unix))]
        Some(_) => return None,
        None => {
            config.host(options.get_host());
        }
    }
    config
        .port(options.get_port())
        .user(options.get_username())
        .ssl_mode(SslMode::Disable)
        .connect_timeout(connect_timeout)
        .application_name(options.get_application_name().unwrap_or(APPLICATION_NAME));
    if let Some(database) = options.get_database() {
        config.dbname(database);
    }
    if let Some(server_options) = options.get_options() {
        config.options(server_options);
    }
    let password = url::Url::parse(url)
        .ok()
        .and_then(|url| {
            url.password().map(|p| {
                percent_encoding::percent_decode_str(p)
                    .decode_utf8_lossy()
                    .into_owned()
            })
        })
        .or_else(|| std::env::var("PGPASSWORD").ok());
    if let Some(password) = password {
        config.password(password);
    }
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::postgres::PgConnectOptions;
    use std::str::FromStr;

    fn config_of(url: &str) -> Option<Config> {
        let options = PgConnectOptions::from_str(url).expect("a valid URL");
        client_config(url, &options, Duration::from_secs(3))
    }

    #[test]
    fn client_config_follows_the_pool_options() {
        use tokio_postgres::config::Host;
        let tcp = |h: &str| Host::Tcp(h.into());
        for (url, host, port, user, db, app) in [
            (
                "postgres://app:p%40ss@db.example:6432/auth?application_name=web",
                tcp("db.example"),
                6432,
                "app",
                "auth",
                "web",
            ),
            (
                "postgres://postgres@127.0.0.1/test",
                tcp("127.0.0.1"),
                5432,
                "postgres",
                "test",
                APPLICATION_NAME,
            ),
            (
                "postgresql://u@localhost/db?host=/var/run/postgresql",
                Host::Unix("/var/run/postgresql".into()),
                5432,
                "u",
                "db",
                APPLICATION_NAME,
            ),
        ] {
            let config = config_of(url).expect(url);
            assert_eq!(config.get_hosts(), [host], "{url}");
            assert_eq!(config.get_ports(), [port], "{url}");
            assert_eq!(config.get_user(), Some(user), "{url}");
            assert_eq!(config.get_dbname(), Some(db), "{url}");
            assert_eq!(config.get_application_name(), Some(app), "{url}");
            assert_eq!(config.get_ssl_mode(), SslMode::Disable, "{url}");
        }
        let with_password = config_of("postgres://app:p%40ss@db.example/auth").expect("config");
        assert_eq!(with_password.get_password(), Some(&b"p@ss"[..]));
        let with_options =
            config_of("postgres://u@h/db?options=-c%20search_path%3Ds1").expect("config");
        assert_eq!(with_options.get_options(), Some("-c search_path=s1"));
        // No TLS here: a URL that requires it keeps every read on the pool.
        for mode in ["require", "verify-ca", "verify-full"] {
            assert!(
                config_of(&format!("postgres://u@h/db?sslmode={mode}")).is_none(),
                "{mode}"
            );
        }
    }

    const SQL: &str =
        "SELECT $1::text, 42::bigint, true, NULL::timestamptz, 7::int4 WHERE $1 <> 'none'";
    /// Two parameters, the second a user id (an `INTEGER`).
    const SQL_WITH_ID: &str =
        "SELECT $1::text, 42::bigint, true, NULL::timestamptz, $2::int4 WHERE $1 <> 'none'";
    const COLS: &[Col] = &[Col::Text, Col::Int, Col::Bool, Col::Time, Col::UserId];

    fn statements() -> Vec<(&'static str, &'static [Col])> {
        vec![(SQL, COLS), (SQL_WITH_ID, COLS)]
    }

    #[tokio::test]
    async fn an_unreachable_server_is_left_to_the_pool() {
        let mut config = Config::new();
        config
            .host("127.0.0.1")
            .port(1)
            .user("nobody")
            .connect_timeout(Duration::from_secs(2));
        let reads = PgReads::new(config, statements(), 1);
        assert_eq!(
            reads
                .fetch_optional(0, &[Param::Text("a")], Duration::from_secs(3))
                .await,
            Read::UsePool
        );
        let slot = reads.slots[0].lock().await;
        assert!(slot.reader.is_none() && slot.retry_at.is_some());
    }

    /// On the test server: rows as the columns say; after the server terminates the
    /// connection, reads go to the pool, then a new connection answers them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_on_a_live_server_and_reconnect_after_termination() {
        use sqlx::Connection as _;
        let url = std::env::var("AUTHCORE_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let app = format!("authcore-direct-unit-{}", std::process::id());
        let options = PgConnectOptions::from_str(&url)
            .expect("a valid URL")
            .application_name(&app);
        let config = client_config(&url, &options, Duration::from_secs(5)).expect("config");
        let reads = PgReads::new(config, statements(), 1);
        let bound = Duration::from_secs(5);
        let read = async |k: &str| reads.fetch_optional(0, &[Param::Text(k)], bound).await;
        let a = Read::Row(Some(vec![
            Val::Text("a".into()),
            Val::Int(42),
            Val::Bool(true),
            Val::Null,
            Val::Text("7".into()),
        ]));
        assert_eq!(read("a").await, a);
        assert_eq!(read("none").await, Read::Row(None));
        // A user id goes as the `INTEGER` it is; one that is none names no row.
        let with_id = |id| [Param::Text("a"), Param::UserId(id)];
        assert_eq!(reads.fetch_optional(1, &with_id("7"), bound).await, a);
        assert_eq!(
            reads.fetch_optional(1, &with_id("07"), bound).await,
            Read::Row(None)
        );
        assert_eq!(
            reads.fetch_optional(2, &[Param::Text("a")], bound).await,
            Read::UsePool
        );

        let mut admin = sqlx::PgConnection::connect_with(&options.application_name("admin"))
            .await
            .expect("PostgreSQL at AUTHCORE_TEST_POSTGRES_URL (see tests/postgres.rs)");
        let killed: Vec<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&app)
        .fetch_all(&mut admin)
        .await
        .expect("pg_terminate_backend");
        assert_eq!(killed, [true]);
        // At most a second of pool reads (RETRY_AFTER), then a new connection.
        let mut answers = Vec::new();
        for _ in 0..40 {
            let got = read("a").await;
            let done = got == a;
            answers.push(got);
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(answers.last(), Some(&a), "{answers:?}");
        assert!(
            answers.iter().all(|r| *r == a || *r == Read::UsePool),
            "{answers:?}"
        );
        let _ = admin.close().await;
    }
}
