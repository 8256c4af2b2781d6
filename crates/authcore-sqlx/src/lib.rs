//! SQLite, PostgreSQL and MySQL / MariaDB storage for [`authcore`]: an [`Adapter`] over
//! [`sqlx`] 0.9.
//!
//! ```no_run
//! # async fn demo() -> Result<(), authcore_sqlx::Error> {
//! use authcore_sqlx::SqlxAdapter;
//!
//! // Creates ./authcore.db if it is missing (WAL mode, foreign keys on).
//! let adapter = SqlxAdapter::sqlite("authcore.db").await?;
//! adapter.migrate().await?;
//!
//! let pg = SqlxAdapter::postgres("postgres://app@localhost/app").await?;
//! pg.migrate().await?;
//!
//! // Or by the URL's scheme: sqlite:, postgres://, mysql://, mariadb://.
//! let my = SqlxAdapter::connect("mysql://app@localhost/app").await?;
//! my.migrate().await?;
//! # Ok(()) }
//! ```
//!
//! Every statement is written once for the three databases; what differs between them
//! (placeholders, identifier quotes, table names, who assigns ids, column types) is data
//! of each dialect, and no statement needs `RETURNING`.
//!
//! # Schema
//!
//! On **MySQL / MariaDB** the tables are those of Auth.js's Drizzle adapter for MySQL
//! (`@auth/drizzle-adapter`'s default schema): `user`, `account`, `session`,
//! `verificationToken` and `authenticator`, the same column names as below, ids UUID v4
//! text. `migrate()` creates them with `utf8mb4_bin` (tokens and credential ids compare
//! byte for byte; MySQL's default collations ignore case), `DATETIME(3)` in UTC (Drizzle's
//! `TIMESTAMP` ends in 2038), `TEXT` for OAuth tokens and keys, `BIGINT` for `expires_at`
//! and `counter`; on tables Drizzle created it changes nothing, and they work as they are
//! (until 2038, when Drizzle's `INT` and `TIMESTAMP` columns overflow).
//!
//! On SQLite and PostgreSQL the tables are those of Auth.js's official SQL adapter **`@auth/pg-adapter`**, with the
//! same table and column names (quoted camelCase included): `users (id, name, email,
//! "emailVerified", image)`, `accounts (id, "userId", type, provider, "providerAccountId",
//! refresh_token, access_token, expires_at, id_token, scope, session_state, token_type)`,
//! `sessions (id, "userId", expires, "sessionToken")` and `verification_token (identifier,
//! expires, token)`; plus `authenticators ("credentialID", "userId", "providerAccountId",
//! "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp",
//! transports)` as in Auth.js's Prisma and Drizzle schemas. So a PostgreSQL database that
//! an Auth.js application uses through `@auth/pg-adapter` works unchanged, and both can
//! share it.
//!
//! On top of the pg-adapter layout, [`SqlxAdapter::migrate`] adds the constraints this
//! adapter relies on: unique `(provider, "providerAccountId")`, unique `email`, unique
//! `"sessionToken"`, unique `"credentialID"`, and `ON DELETE CASCADE` foreign keys from
//! `accounts`, `sessions` and `authenticators` to `users`. Every statement is
//! `IF NOT EXISTS`, so running it on an existing pg-adapter database only adds the
//! `authenticators` table and the unique indexes (it fails if existing rows already break
//! a uniqueness rule, e.g. two users with one email). `delete_user` deletes a user's
//! accounts, sessions and authenticators itself, so it does not depend on the cascades.
//!
//! | | PostgreSQL | SQLite | MySQL / MariaDB |
//! |---|---|---|---|
//! | ids | `SERIAL` (as pg-adapter), exposed as decimal strings (`"42"`) | UUID v4 text | UUID v4 text (users; accounts and sessions have none) |
//! | timestamps | `TIMESTAMPTZ` (microseconds) | ISO 8601 UTC text, `2025-01-31T12:00:00.000Z` (JavaScript's `toISOString()`, milliseconds) | `DATETIME(3)`, UTC |
//! | `expires_at`, `counter` | `BIGINT` | `INTEGER` | `BIGINT` |
//! | `"credentialBackedUp"` | `BOOLEAN` | `INTEGER` 0/1 | `BOOLEAN` |
//!
//! A PostgreSQL id that is not a decimal `INTEGER` cannot name a row: lookups with it
//! answer `None` (as pg-adapter's `getUser` does) and writes with it fail.
//!
//! Accounts store the columns above only: [`Account::extra`] fields and
//! [`Account::authorization_details`] are dropped, as pg-adapter drops them. Run the
//! conformance suite with `Options::account_extras(false)` accordingly.
//!
//! # Errors
//!
//! A unique-constraint violation (linking an account twice, a second user with the same
//! email, a duplicate credential id or session token) is [`AdapterError::Conflict`]; any
//! other database failure is [`AdapterError::Backend`], whose message names the operation
//! and the database error but never contains SQL or bound values. A connection that broke
//! (server restart, terminated backend) fails the call in progress; the pool then opens
//! a new connection, so later calls succeed once the database is back.
//!
//! # Outages
//!
//! Every operation of the adapter and of its [`SqlRateLimitStore`] passes one circuit
//! breaker ([`authcore::breaker`]), shared by the adapter's clones and the stores made from
//! it. Calls that find the database unreachable open it (a query error such as a
//! constraint violation does not): the
//! [`TIMEOUTS_TO_OPEN`](authcore::breaker::TIMEOUTS_TO_OPEN)th failure in a row that is a
//! timeout — the operation's, or no connection within [`PoolSettings::timeout`] (sqlx
//! retries a refused connection until then): one slow query under load, between answered
//! ones, is no outage —, and the
//! [`CONNECTION_FAILURES_TO_OPEN`](authcore::breaker::CONNECTION_FAILURES_TO_OPEN)th
//! connection failure in a row (a broken connection, the server shutting down), as the pool
//! replaces a single broken connection by itself. While it is open every call answers at
//! once with [`AdapterError::Backend`]
//! (`the database is unavailable …`) instead of waiting out the timeout, and a background
//! task pings the database on a connection of its own (opened with the pool's options,
//! bounded by the timeout: an overloaded pool, which also times out, does not hold the
//! breaker open), at once and then every
//! [`authcore::breaker::DEFAULT_PROBE_INTERVAL`] after a failure, until the database
//! answers, which closes the breaker (a probe task dropped with its runtime is replaced by
//! the next call's). [`SqlxAdapter::available`] says whether it is closed
//! (for readiness probes), and the gauge
//! [`authcore_store_available{store="database"}`](authcore::telemetry::STORE_AVAILABLE)
//! follows it.
//!
//! # Concurrency
//!
//! `use_verification_token` and `delete_session` return the row only to the call whose
//! `DELETE` removed it, so two concurrent uses of one token return it once; uniqueness
//! rules are enforced by the database, so two concurrent `link_account` of one account
//! give one `Ok` and one `Conflict`. `set_member_roles` and `remove_member` lock the
//! organization's row (on SQLite, the database) before they check that an owner is left,
//! so concurrent ones never leave an organization without one; `accept_invitation` holds
//! the invitation's row until it is marked accepted, so concurrent acceptances accept once.
//! An audit record's `seq` is the key of `audit_log` (`auditLog` on MySQL): of concurrent
//! appends of one `seq` the database stores one and the others answer `false`.
//!
//! # Administration
//!
//! Bans are kept in `bans` (`ban` on MySQL): the user, `reason`, `createdAt`, `expires`,
//! `bannedBy`. The audit log is `audit_log` (`auditLog` on MySQL): `seq` (its key), `at`
//! (a timestamp as in the table above, kept to the millisecond), `kind`, `actor`, `target`,
//! `data`, `prevHash`, `hash`, indexed by kind, actor, target and time. The sessions'
//! nullable column `impersonator` names the administrator who signed in as the session's
//! user. The directory's search is one statement: its text without regard to case (`LOWER`
//! on both sides of a `LIKE` whose pattern escapes `%`, `_` and `!`; SQLite lowers ASCII
//! letters only), its users ordered by id (numerically on PostgreSQL).
//!
//! # Rate limits and single-use marks
//!
//! [`SqlxAdapter::rate_limit_store`] keeps authcore's rate-limit counts, or only its
//! single-use values and revocation marks, in the same database (table `rate_limits`,
//! `rateLimit` on MySQL): instances sharing the database share them, and they outlive a
//! restart.
//!
//! ```no_run
//! # async fn demo() -> Result<(), authcore_sqlx::Error> {
//! let db = authcore_sqlx::SqlxAdapter::connect("postgres://app@localhost/app").await?;
//! db.migrate().await?;
//! let config = authcore::AuthConfig::builder()
//!     .single_use_store(db.rate_limit_store()) // or .rate_limit_store(…) for the counts too
//!     .adapter(db); // … providers, secret
//! # let _ = config;
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! `sqlite` (bundled libsqlite3), `postgres` and `mysql` (MySQL 8, MariaDB 10.5+), all on by
//! default.

#![forbid(unsafe_code)]

#[cfg(not(any(feature = "sqlite", feature = "postgres", feature = "mysql")))]
compile_error!("authcore-sqlx needs at least one of the features `sqlite`, `postgres` and `mysql`");

mod db;
mod dialect;
mod direct;
mod error;
#[cfg(feature = "mysql")]
mod mysql;
mod ops;
#[cfg(feature = "postgres")]
mod postgres;
mod ratelimit;
#[cfg(feature = "sqlite")]
mod sqlite;

use db::Pool;
use direct::DirectReads;

use async_trait::async_trait;
use authcore::SignInInfo;
use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, ApiKey, ApiKeyOwner, ApiKeyStore,
    AppAccess, AppAccessStore, AuditLogStore, AuditQuery, AuditRecord, Capabilities, DatabaseId,
    Invitation, InvitationAcceptance, JwtRevocation, JwtRevocationStore, LinkedAccountStore,
    Member, MemberChange, NewUser, OidcClientStore, Organization, OrganizationStore, PasskeyStore,
    PasswordStore, SessionActivity, SessionActivityStore, SessionSignInStore, StoredClient, Team,
    TwoFactor, TwoFactorStore, UpstreamSession, UpstreamSessionStore, UserBan, UserDirectoryStore,
    UserGroupsStore, UserPage, UserQuery, UserUpdate, VerificationToken,
};
use authcore::breaker::CircuitBreaker;
use authcore::types::{Account, Authenticator, ProviderType};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

pub use authcore::adapter::STALE_TOKEN_GRACE;

pub use error::Error;
pub use ratelimit::SqlRateLimitStore;

/// An [`Adapter`] storing users, accounts, sessions, verification tokens and authenticators
/// in SQLite or PostgreSQL. Cheap to clone: clones share the connection pool.
#[derive(Clone)]
pub struct SqlxAdapter {
    pool: Pool,
    /// The session read's own path ([`PoolSettings::direct_session_reads`]).
    direct: Option<Arc<DirectReads>>,
    /// The longest one adapter operation may take ([`PoolSettings::timeout`]).
    timeout: Duration,
    /// The database's circuit breaker, shared with the rate-limit store made from this
    /// adapter ([`SqlxAdapter::available`]).
    breaker: CircuitBreaker,
    /// The database's id, shared with the rate-limit store made from this adapter: a read
    /// may join the rows of both.
    database: DatabaseId,
}

/// How long a query waits for a pooled connection before failing, and the default bound
/// on a whole adapter operation ([`PoolSettings::timeout`]).
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The pool size and time bound of [`SqlxAdapter::postgres_with`] and
/// [`SqlxAdapter::sqlite_with`].
///
/// ```
/// use std::time::Duration;
/// let settings = authcore_sqlx::PoolSettings::default()
///     .max_connections(20)
///     .timeout(Duration::from_secs(2));
/// assert_eq!(settings.max_connections, 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolSettings {
    /// The most connections the pool opens (default 10, sqlx's default).
    pub max_connections: u32,
    /// The longest one adapter operation may take, waiting for a connection included
    /// (default [`DEFAULT_ACQUIRE_TIMEOUT`], 5 s). With the database down or silent, a
    /// request fails within it (Auth.js `Configuration`) instead of hanging: a query on a
    /// connection whose server stopped answering would otherwise wait for TCP to give up.
    pub timeout: Duration,
    /// Whether the hottest reads take a path of their own on SQLite and PostgreSQL (default
    /// `true`; MySQL reads always go through the pool): the session read
    /// (`get_session_and_user`, made by every request that carries a database session),
    /// `get_user` and `get_app_access` (an OpenID Provider's userinfo), and the
    /// [`SqlRateLimitStore`]'s `locked` (revocation marks):
    ///
    /// - **SQLite**: on the calling thread, on connections of its own to the same file
    ///   that only read (`query_only`; one per CPU at most), instead of a trip to a pooled
    ///   connection's worker thread. A read of cached pages takes microseconds; one that
    ///   has to read the disk blocks the async worker thread for that long. A locked
    ///   database is left to the pool, which waits for it. Not used for in-memory
    ///   databases, nor for URLs with `vfs` or `immutable`.
    /// - **PostgreSQL**: on `tokio-postgres` connections of its own (one per CPU, at most 4,
    ///   named `authcore-session-reads` in `pg_stat_activity` unless the URL sets an
    ///   `application_name`), the statements prepared once per connection and concurrent
    ///   reads pipelined on it; sqlx pings a connection each time it goes back to the
    ///   pool. Not used when the URL requires TLS. The password is taken from the URL or
    ///   `PGPASSWORD` (not `~/.pgpass`).
    ///
    /// Either is set up only if a connection of its own opens when the adapter is built
    /// (where it cannot — a password only in `~/.pgpass`, say — a warning is logged and
    /// every read stays on the pool).
    ///
    /// The results are the pool's: whenever this path cannot answer (all its connections
    /// busy, the database unreachable, any error), the read goes through the pool, and a
    /// failed connection is reopened at most once a second. Only the URL constructors
    /// ([`SqlxAdapter::sqlite_with`], [`SqlxAdapter::postgres_with`],
    /// [`SqlxAdapter::connect_with`]) set it up; pools handed in read through the pool.
    /// It exists because the session read is on every request with a database session, and
    /// through the pool each one pays a checkout and a ping (`docs/architecture.md`,
    /// *Hot path*; the gain is in `docs/performance.md`).
    pub direct_session_reads: bool,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_connections: 10,
            timeout: DEFAULT_ACQUIRE_TIMEOUT,
            direct_session_reads: true,
        }
    }
}

impl PoolSettings {
    /// Sets [`PoolSettings::max_connections`] (at least 1).
    pub fn max_connections(mut self, max: u32) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Sets [`PoolSettings::timeout`] (at least 1 ms).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Sets [`PoolSettings::direct_session_reads`].
    pub fn direct_session_reads(mut self, on: bool) -> Self {
        self.direct_session_reads = on;
        self
    }
}

impl std::fmt::Debug for SqlxAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the pool's Debug: its connect options include the password.
        let kind = match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => "sqlite",
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => "postgres",
            #[cfg(feature = "mysql")]
            Pool::MySql(_) => "mysql",
        };
        f.debug_struct("SqlxAdapter")
            .field("backend", &kind)
            .finish()
    }
}

#[cfg(feature = "sqlite")]
impl SqlxAdapter {
    /// Opens (creating it if missing) a SQLite database and its connection pool.
    ///
    /// `url_or_path` is a `sqlite:` URL (`sqlite://authcore.db`, `sqlite::memory:`, with
    /// sqlx's query parameters) or a plain file path. The file is created if missing, the
    /// journal is switched to WAL and foreign keys are enforced.
    ///
    /// Commits use `synchronous = NORMAL`, SQLite's recommended setting for WAL: the
    /// database stays consistent through any crash, but the last commits before a power
    /// loss (not a process crash) may roll back, which for this store means a user signs
    /// in again. With the default `FULL`, every commit waits for an fsync while holding the
    /// write lock, and concurrent sign-ins queue behind it, so a busy server's sign-ins
    /// slow down and their tail latency grows (`docs/performance.md`). For `FULL`, build
    /// the pool yourself and use [`SqlxAdapter::from_sqlite_pool`].
    pub async fn sqlite(url_or_path: &str) -> Result<Self, Error> {
        Self::sqlite_with(url_or_path, PoolSettings::default()).await
    }

    /// [`SqlxAdapter::sqlite`] with a pool size and time bound.
    pub async fn sqlite_with(url_or_path: &str, settings: PoolSettings) -> Result<Self, Error> {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
        use std::str::FromStr;

        let options = if url_or_path.starts_with("sqlite:") {
            SqliteConnectOptions::from_str(url_or_path).map_err(Error::InvalidUrl)?
        } else {
            SqliteConnectOptions::new().filename(url_or_path)
        };
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .synchronous(SqliteSynchronous::Normal);
        let direct_path = settings
            .direct_session_reads
            .then(|| sqlite::direct_read_path(url_or_path, &options))
            .flatten();
        let pool = pool_options(&settings)
            .connect_with(options)
            .await
            .map_err(Error::Connect)?;
        let mut adapter = Self::from_sqlite_pool(pool).with_timeout(settings.timeout);
        adapter.direct = direct_path
            .and_then(|path| DirectReads::sqlite(path, settings.max_connections))
            .map(Arc::new);
        Ok(adapter)
    }

    /// Uses an existing SQLite pool. Its connections should enforce foreign keys (sqlx's
    /// default) and, for concurrent writers, use WAL and a busy timeout.
    pub fn from_sqlite_pool(pool: sqlx::SqlitePool) -> Self {
        SqlxAdapter {
            pool: Pool::Sqlite(pool),
            direct: None,
            timeout: DEFAULT_ACQUIRE_TIMEOUT,
            breaker: database_breaker(),
            database: DatabaseId::unique(),
        }
    }
}

/// The circuit breaker of a new adapter's database (label `database`).
fn database_breaker() -> CircuitBreaker {
    CircuitBreaker::new("database")
}

/// A pooled connection idle at least this long is pinged before it is used.
pub const PING_IF_IDLE_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// Pool options of the three backends: size and acquire bound from `settings`, and a ping
/// before use only for a connection idle [`PING_IF_IDLE_FOR`] or longer (one that may
/// have gone stale). sqlx's default pings on every acquire, which adds a round trip to
/// every query of a busy server (`docs/architecture.md`, *Hot path*; the gain is in
/// `docs/performance.md`).
fn pool_options<DB: sqlx::Database>(settings: &PoolSettings) -> sqlx::pool::PoolOptions<DB> {
    use sqlx::Connection as _;
    sqlx::pool::PoolOptions::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(settings.timeout)
        .test_before_acquire(false)
        .before_acquire(|conn: &mut DB::Connection, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_IF_IDLE_FOR {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

#[cfg(feature = "postgres")]
impl SqlxAdapter {
    /// Connects to PostgreSQL (`postgres://user:password@host:port/database?…`) with the
    /// default [`PoolSettings`]: 10 connections, and every adapter operation bounded by
    /// [`DEFAULT_ACQUIRE_TIMEOUT`] (5 s; sqlx waits 30 s for a connection and has no bound
    /// on a query), so that with the database down or silent a request fails fast (Auth.js
    /// `Configuration`) instead of hanging. For other settings, see
    /// [`SqlxAdapter::postgres_with`] or build the pool yourself
    /// ([`SqlxAdapter::from_postgres_pool`]).
    pub async fn postgres(url: &str) -> Result<Self, Error> {
        Self::postgres_with(url, PoolSettings::default()).await
    }

    /// [`SqlxAdapter::postgres`] with a pool size and time bound.
    pub async fn postgres_with(url: &str, settings: PoolSettings) -> Result<Self, Error> {
        use sqlx::postgres::PgConnectOptions;
        use std::str::FromStr;

        let options = PgConnectOptions::from_str(url).map_err(Error::InvalidUrl)?;
        let direct_config = settings
            .direct_session_reads
            .then(|| direct::postgres_client_config(url, &options, settings.timeout))
            .flatten();
        let pool = pool_options(&settings)
            .connect_with(options)
            .await
            .map_err(Error::Connect)?;
        let mut adapter = Self::from_postgres_pool(pool).with_timeout(settings.timeout);
        if let Some(config) = direct_config {
            adapter.direct =
                DirectReads::postgres(config, settings.max_connections, settings.timeout)
                    .await
                    .map(Arc::new);
        }
        Ok(adapter)
    }

    /// Uses an existing PostgreSQL pool.
    pub fn from_postgres_pool(pool: sqlx::PgPool) -> Self {
        SqlxAdapter {
            pool: Pool::Postgres(pool),
            direct: None,
            timeout: DEFAULT_ACQUIRE_TIMEOUT,
            breaker: database_breaker(),
            database: DatabaseId::unique(),
        }
    }
}

#[cfg(feature = "sqlite")]
impl From<sqlx::SqlitePool> for SqlxAdapter {
    fn from(pool: sqlx::SqlitePool) -> Self {
        Self::from_sqlite_pool(pool)
    }
}

#[cfg(feature = "postgres")]
impl From<sqlx::PgPool> for SqlxAdapter {
    fn from(pool: sqlx::PgPool) -> Self {
        Self::from_postgres_pool(pool)
    }
}

#[cfg(feature = "mysql")]
impl SqlxAdapter {
    /// Connects to MySQL or MariaDB (`mysql://user:password@host:port/database?…`) with the
    /// default [`PoolSettings`] (see [`SqlxAdapter::postgres`]).
    pub async fn mysql(url: &str) -> Result<Self, Error> {
        Self::mysql_with(url, PoolSettings::default()).await
    }

    /// [`SqlxAdapter::mysql`] with a pool size and time bound.
    pub async fn mysql_with(url: &str, settings: PoolSettings) -> Result<Self, Error> {
        use sqlx::mysql::MySqlConnectOptions;
        use std::str::FromStr;

        let options = MySqlConnectOptions::from_str(url).map_err(Error::InvalidUrl)?;
        let pool = pool_options(&settings)
            .connect_with(options)
            .await
            .map_err(Error::Connect)?;
        Ok(Self::from_mysql_pool(pool).with_timeout(settings.timeout))
    }

    /// Uses an existing MySQL / MariaDB pool. Its connections must use the time zone
    /// `+00:00` (sqlx's default), as the adapter stores UTC in `DATETIME` columns.
    pub fn from_mysql_pool(pool: sqlx::MySqlPool) -> Self {
        SqlxAdapter {
            pool: Pool::MySql(pool),
            direct: None,
            timeout: DEFAULT_ACQUIRE_TIMEOUT,
            breaker: database_breaker(),
            database: DatabaseId::unique(),
        }
    }

    /// The MySQL / MariaDB pool behind this adapter, for the host's own queries; `None` on
    /// another database.
    pub fn mysql_pool(&self) -> Option<&sqlx::MySqlPool> {
        match &self.pool {
            Pool::MySql(pool) => Some(pool),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

#[cfg(feature = "mysql")]
impl From<sqlx::MySqlPool> for SqlxAdapter {
    fn from(pool: sqlx::MySqlPool) -> Self {
        Self::from_mysql_pool(pool)
    }
}

impl SqlxAdapter {
    /// Connects to the database `url` names: `postgres://` / `postgresql://`,
    /// `mysql://` / `mariadb://`, or `sqlite:` (a URL or, without a scheme, a file path),
    /// as far as the enabled features allow.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), authcore_sqlx::Error> {
    /// let db = authcore_sqlx::SqlxAdapter::connect("sqlite://authcore.db").await?;
    /// db.migrate().await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, Error> {
        Self::connect_with(url, PoolSettings::default()).await
    }

    /// [`SqlxAdapter::connect`] with a pool size and time bound.
    pub async fn connect_with(url: &str, settings: PoolSettings) -> Result<Self, Error> {
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            #[cfg(feature = "postgres")]
            Some("postgres" | "postgresql") => Self::postgres_with(url, settings).await,
            #[cfg(feature = "mysql")]
            Some("mysql") => Self::mysql_with(url, settings).await,
            #[cfg(feature = "mysql")]
            Some("mariadb") => {
                Self::mysql_with(&format!("mysql{}", &url["mariadb".len()..]), settings).await
            }
            #[cfg(feature = "sqlite")]
            _ if scheme.is_none() || url.starts_with("sqlite:") => {
                Self::sqlite_with(url, settings).await
            }
            _ => Err(Error::UnsupportedUrl(scheme.unwrap_or_default())),
        }
    }

    /// Creates the tables and indexes if they do not exist (embedded migrations from
    /// `migrations/sqlite`, `migrations/postgres` or `migrations/mysql`, recorded in
    /// `_sqlx_migrations`).
    pub async fn migrate(&self) -> Result<(), Error> {
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => sqlx::migrate!("migrations/sqlite").run(pool).await,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => sqlx::migrate!("migrations/postgres").run(pool).await,
            #[cfg(feature = "mysql")]
            Pool::MySql(pool) => sqlx::migrate!("migrations/mysql").run(pool).await,
        }
        .map_err(Error::Migrate)
    }

    /// The SQLite pool behind this adapter, for the host's own queries; `None` on another
    /// database.
    #[cfg(feature = "sqlite")]
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        match &self.pool {
            Pool::Sqlite(pool) => Some(pool),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The PostgreSQL pool behind this adapter, for the host's own queries; `None` on
    /// another database.
    #[cfg(feature = "postgres")]
    pub fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        match &self.pool {
            Pool::Postgres(pool) => Some(pool),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Checks that the database answers (`SELECT 1` on a pooled connection), for readiness
    /// probes. It waits at most the pool's acquire timeout (30 s by default): wrap it in a
    /// shorter timeout of your own where a probe needs one.
    pub async fn ping(&self) -> Result<(), Error> {
        self.pool
            .execute("SELECT 1", Vec::new())
            .await
            .map(drop)
            .map_err(Error::Connect)
    }

    /// Closes the pool: waits for connections in use to be returned, then closes them all
    /// (and those of [`PoolSettings::direct_session_reads`]).
    pub async fn close(&self) {
        if let Some(direct) = &self.direct {
            direct.close().await;
        }
        db::with_backend!(&self.pool, pool, _backend => pool.close().await)
    }
}

/// Runs operation `ops::$f` on the pool, bounded by the adapter's timeout.
macro_rules! dispatch {
    ($self:ident, $f:ident($($arg:expr),*)) => {
        $self
            .bounded(stringify!($f), ops::$f(&$self.pool, $($arg),*))
            .await
    };
}

impl SqlxAdapter {
    /// The direct read path, if any, within its share of the operations' bound.
    fn direct(&self) -> ops::Direct<'_> {
        ops::direct_within(self.direct.as_ref(), self.timeout)
    }

    /// Bounds every adapter operation by `timeout` (the constructors set
    /// [`PoolSettings::timeout`]; pools handed in get [`DEFAULT_ACQUIRE_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    async fn bounded<T>(
        &self,
        op: &'static str,
        operation: impl std::future::Future<Output = Result<T, AdapterError>>,
    ) -> Result<T, AdapterError> {
        self.pool
            .guarded(&self.breaker, self.timeout, op, operation)
            .await
    }

    /// Whether the database is taken to answer: `false` while the circuit breaker is open
    /// (see *Outages* in the crate documentation), for readiness probes. Answers at once.
    pub fn available(&self) -> bool {
        self.breaker.admits()
    }
}

#[async_trait]
impl Adapter for SqlxAdapter {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        dispatch!(self, create_user(user))
    }

    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        dispatch!(self, get_user(self.direct(), id))
    }

    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        dispatch!(self, get_user_by_email(email))
    }

    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        dispatch!(self, get_user_by_account(provider, provider_account_id))
    }

    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        dispatch!(self, update_user(update))
    }

    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        dispatch!(self, delete_user(id))
    }

    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        dispatch!(self, link_account(account))
    }

    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        dispatch!(self, unlink_account(provider, provider_account_id))
    }

    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        dispatch!(self, create_session(session))
    }

    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        dispatch!(self, get_session_and_user(self.direct(), session_token))
    }

    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        dispatch!(self, update_session(session_token, expires))
    }

    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        dispatch!(self, delete_session(session_token))
    }

    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        dispatch!(self, create_verification_token(token))
    }

    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        dispatch!(self, use_verification_token(identifier, token))
    }

    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        dispatch!(self, get_account(provider_account_id, provider))
    }

    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        dispatch!(self, get_authenticator(credential_id))
    }

    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        dispatch!(self, create_authenticator(authenticator))
    }

    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        dispatch!(self, list_authenticators_by_user_id(user_id))
    }

    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        dispatch!(self, update_authenticator_counter(credential_id, counter))
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities::none()
            .linked_accounts(self)
            .session_activity(self)
            .session_sign_in(self)
            .jwt_revocation(self)
            .passkeys(self)
            .two_factor(self)
            .app_access(self)
            .upstream_sessions(self)
            .passwords(self)
            .user_groups(self)
            .organizations(self)
            .api_keys(self)
            .user_directory(self)
            .audit_log(self)
            .oidc_clients(self)
    }
}

#[async_trait]
impl LinkedAccountStore for SqlxAdapter {
    async fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError> {
        dispatch!(self, list_accounts_by_user_id(user_id))
    }

    async fn update_account(&self, account: &Account) -> Result<bool, AdapterError> {
        dispatch!(self, update_account(account))
    }
}

#[async_trait]
impl SessionActivityStore for SqlxAdapter {
    async fn list_sessions_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<SessionActivity>, AdapterError> {
        dispatch!(self, list_sessions_by_user_id(user_id))
    }

    async fn record_session_activity(
        &self,
        session_token: &str,
        at: OffsetDateTime,
        user_agent: Option<&str>,
    ) -> Result<(), AdapterError> {
        dispatch!(self, record_session_activity(session_token, at, user_agent))
    }

    async fn delete_sessions_by_user_id(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AdapterError> {
        dispatch!(self, delete_sessions_by_user_id(user_id, keep))
    }
}

#[async_trait]
impl SessionSignInStore for SqlxAdapter {
    async fn record_session_sign_in(
        &self,
        session_token: &str,
        sign_in: &SignInInfo,
    ) -> Result<(), AdapterError> {
        dispatch!(self, record_session_sign_in(session_token, sign_in))
    }

    async fn get_session_sign_in(
        &self,
        session_token: &str,
    ) -> Result<Option<SignInInfo>, AdapterError> {
        dispatch!(self, get_session_sign_in(session_token))
    }
}

#[async_trait]
impl JwtRevocationStore for SqlxAdapter {
    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError> {
        dispatch!(self, revoke_jwt_sessions(user_id, before, keep))
    }

    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError> {
        dispatch!(self, get_jwt_revocation(user_id))
    }
}

#[async_trait]
impl PasskeyStore for SqlxAdapter {
    async fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError> {
        dispatch!(self, delete_authenticator(credential_id))
    }

    async fn rename_authenticator(
        &self,
        credential_id: &str,
        name: Option<&str>,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, rename_authenticator(credential_id, name))
    }
}

#[async_trait]
impl TwoFactorStore for SqlxAdapter {
    async fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError> {
        dispatch!(self, get_two_factor(user_id))
    }

    async fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError> {
        dispatch!(self, set_two_factor(two_factor))
    }

    async fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError> {
        dispatch!(self, delete_two_factor(user_id))
    }

    async fn replace_recovery_codes(
        &self,
        user_id: &str,
        code_hashes: &[String],
    ) -> Result<(), AdapterError> {
        dispatch!(self, replace_recovery_codes(user_id, code_hashes))
    }

    async fn use_recovery_code(
        &self,
        user_id: &str,
        code_hash: &str,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, use_recovery_code(user_id, code_hash))
    }

    async fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError> {
        dispatch!(self, count_recovery_codes(user_id))
    }
}

#[async_trait]
impl AppAccessStore for SqlxAdapter {
    async fn grant_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> Result<AppAccess, AdapterError> {
        dispatch!(
            self,
            grant_app_access(user_id, client_id, client_name, scopes, at)
        )
    }

    async fn get_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<AppAccess>, AdapterError> {
        dispatch!(self, get_app_access(self.direct(), user_id, client_id))
    }

    async fn get_user_with_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
        dispatch!(
            self,
            get_user_with_app_access(self.direct(), user_id, client_id, None)
        )
    }

    async fn get_user_with_app_access_unless_locked(
        &self,
        user_id: &str,
        client_id: &str,
        database: DatabaseId,
        keys: [&str; 2],
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
        if database != self.database {
            return Err(AdapterError::Unsupported(
                "AppAccessStore::get_user_with_app_access_unless_locked: another database",
            ));
        }
        dispatch!(
            self,
            get_user_with_app_access(self.direct(), user_id, client_id, Some(keys))
        )
    }

    async fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError> {
        dispatch!(self, list_app_access(user_id))
    }

    async fn revoke_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        at: OffsetDateTime,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, revoke_app_access(user_id, client_id, at))
    }
}

#[async_trait]
impl UpstreamSessionStore for SqlxAdapter {
    async fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError> {
        dispatch!(self, record_upstream_session(session))
    }

    async fn take_upstream_sessions(
        &self,
        provider: &str,
        sid: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<UpstreamSession>, AdapterError> {
        dispatch!(self, take_upstream_sessions(provider, sid, now))
    }
}

#[async_trait]
impl PasswordStore for SqlxAdapter {
    async fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError> {
        dispatch!(self, get_password_hash(user_id))
    }

    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError> {
        dispatch!(self, set_password_hash(user_id, hash))
    }

    async fn replace_password_hash(
        &self,
        user_id: &str,
        current: &str,
        new: &str,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, replace_password_hash(user_id, current, new))
    }

    async fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError> {
        dispatch!(self, delete_password_hash(user_id))
    }
}

#[async_trait]
impl UserGroupsStore for SqlxAdapter {
    async fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError> {
        dispatch!(self, set_user_groups(user_id, groups))
    }

    async fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError> {
        dispatch!(self, get_user_groups(user_id))
    }
}

#[async_trait]
impl OrganizationStore for SqlxAdapter {
    async fn create_organization(
        &self,
        organization: &Organization,
        owner: &Member,
    ) -> Result<(), AdapterError> {
        dispatch!(self, create_organization(organization, owner))
    }

    async fn get_organization(&self, id: &str) -> Result<Option<Organization>, AdapterError> {
        dispatch!(self, get_organization(id))
    }

    async fn get_organization_by_slug(
        &self,
        slug: &str,
    ) -> Result<Option<Organization>, AdapterError> {
        dispatch!(self, get_organization_by_slug(slug))
    }

    async fn update_organization(&self, organization: &Organization) -> Result<bool, AdapterError> {
        dispatch!(self, update_organization(organization))
    }

    async fn delete_organization(&self, id: &str) -> Result<bool, AdapterError> {
        dispatch!(self, delete_organization(id))
    }

    async fn list_organizations_of_user(
        &self,
        user_id: &str,
    ) -> Result<Vec<(Organization, Member)>, AdapterError> {
        dispatch!(self, list_organizations_of_user(user_id))
    }

    async fn get_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<Member>, AdapterError> {
        dispatch!(self, get_member(organization_id, user_id))
    }

    async fn list_members(&self, organization_id: &str) -> Result<Vec<Member>, AdapterError> {
        dispatch!(self, list_members(organization_id))
    }

    async fn add_member(&self, member: &Member) -> Result<bool, AdapterError> {
        dispatch!(self, add_member(member))
    }

    async fn set_member_roles(
        &self,
        organization_id: &str,
        user_id: &str,
        roles: &[String],
    ) -> Result<MemberChange, AdapterError> {
        dispatch!(self, set_member_roles(organization_id, user_id, roles))
    }

    async fn set_member_teams(
        &self,
        organization_id: &str,
        user_id: &str,
        teams: &[String],
    ) -> Result<MemberChange, AdapterError> {
        dispatch!(self, set_member_teams(organization_id, user_id, teams))
    }

    async fn remove_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<MemberChange, AdapterError> {
        dispatch!(self, remove_member(organization_id, user_id))
    }

    async fn create_team(&self, team: &Team) -> Result<(), AdapterError> {
        dispatch!(self, create_team(team))
    }

    async fn list_teams(&self, organization_id: &str) -> Result<Vec<Team>, AdapterError> {
        dispatch!(self, list_teams(organization_id))
    }

    async fn delete_team(
        &self,
        organization_id: &str,
        team_id: &str,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, delete_team(organization_id, team_id))
    }

    async fn create_invitation(&self, invitation: &Invitation) -> Result<(), AdapterError> {
        dispatch!(self, create_invitation(invitation))
    }

    async fn get_invitation(&self, id: &str) -> Result<Option<Invitation>, AdapterError> {
        dispatch!(self, get_invitation(id))
    }

    async fn get_invitation_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<Invitation>, AdapterError> {
        dispatch!(self, get_invitation_by_token(token_hash))
    }

    async fn list_invitations(
        &self,
        organization_id: Option<&str>,
    ) -> Result<Vec<Invitation>, AdapterError> {
        dispatch!(self, list_invitations(organization_id))
    }

    async fn list_invitations_for_email(
        &self,
        email: &str,
    ) -> Result<Vec<Invitation>, AdapterError> {
        dispatch!(self, list_invitations_for_email(email))
    }

    async fn accept_invitation(
        &self,
        id: &str,
        user_id: &str,
        at: OffsetDateTime,
    ) -> Result<InvitationAcceptance, AdapterError> {
        dispatch!(self, accept_invitation(id, user_id, at))
    }

    async fn revoke_invitation(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        dispatch!(self, revoke_invitation(id, at))
    }

    async fn set_session_organization(
        &self,
        session_token: &str,
        organization_id: Option<&str>,
    ) -> Result<bool, AdapterError> {
        dispatch!(
            self,
            set_session_organization(session_token, organization_id)
        )
    }

    async fn get_session_organization(
        &self,
        session_token: &str,
    ) -> Result<Option<String>, AdapterError> {
        dispatch!(self, get_session_organization(session_token))
    }
}

#[async_trait]
impl ApiKeyStore for SqlxAdapter {
    async fn create_api_key(&self, key: &ApiKey) -> Result<(), AdapterError> {
        dispatch!(self, create_api_key(key))
    }

    async fn get_api_key(&self, id: &str) -> Result<Option<ApiKey>, AdapterError> {
        dispatch!(self, get_api_key(id))
    }

    async fn list_api_keys(&self, owner: ApiKeyOwner<'_>) -> Result<Vec<ApiKey>, AdapterError> {
        dispatch!(self, list_api_keys(owner))
    }

    async fn revoke_api_key(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        dispatch!(self, revoke_api_key(id, at))
    }

    async fn record_api_key_use(&self, id: &str, at: OffsetDateTime) -> Result<(), AdapterError> {
        dispatch!(self, record_api_key_use(id, at))
    }
}

#[async_trait]
impl UserDirectoryStore for SqlxAdapter {
    async fn search_users(&self, query: &UserQuery) -> Result<UserPage, AdapterError> {
        dispatch!(self, search_users(query))
    }

    async fn set_user_ban(
        &self,
        user_id: &str,
        ban: Option<&UserBan>,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, set_user_ban(user_id, ban))
    }

    async fn get_user_ban(&self, user_id: &str) -> Result<Option<UserBan>, AdapterError> {
        dispatch!(self, get_user_ban(user_id))
    }
}

#[async_trait]
impl AuditLogStore for SqlxAdapter {
    async fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError> {
        dispatch!(self, last_audit_record())
    }

    async fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError> {
        dispatch!(self, append_audit_record(record))
    }

    async fn query_audit_records(
        &self,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AdapterError> {
        dispatch!(self, query_audit_records(query))
    }

    async fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError> {
        dispatch!(self, prune_audit_records(through))
    }
}

#[async_trait]
impl OidcClientStore for SqlxAdapter {
    async fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError> {
        dispatch!(self, create_oidc_client(client))
    }

    async fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError> {
        dispatch!(self, get_oidc_client(client_id))
    }

    async fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError> {
        dispatch!(self, list_oidc_clients())
    }

    async fn update_oidc_client(
        &self,
        before: &StoredClient,
        after: &StoredClient,
    ) -> Result<bool, AdapterError> {
        dispatch!(self, update_oidc_client(before, after))
    }
}

// ---------------------------------------------------------------------------------------
// Shared by both backends.

/// The `type` column of an account.
fn parse_provider_type(op: &'static str, s: &str) -> Result<ProviderType, AdapterError> {
    serde_json::from_value(serde_json::Value::String(s.to_owned()))
        .map_err(|_| error::data_error(op, "unknown account type stored"))
}

/// A WebAuthn counter as stored (signed 64-bit column).
fn counter_to_db(op: &'static str, counter: u64) -> Result<i64, AdapterError> {
    i64::try_from(counter).map_err(|_| error::data_error(op, "authenticator counter out of range"))
}

fn counter_from_db(op: &'static str, counter: i64) -> Result<u64, AdapterError> {
    u64::try_from(counter)
        .map_err(|_| error::data_error(op, "negative authenticator counter stored"))
}

/// The README's examples, compiled as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
