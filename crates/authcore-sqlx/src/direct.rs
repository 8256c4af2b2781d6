//! The hottest reads on a path of their own.
//!
//! `get_session_and_user` runs on every request that carries a database session, and the
//! OpenID Provider's userinfo reads a user, the user's access for the client and two
//! revocation marks per request; through sqlx each read costs a pool checkout, a ping when
//! the connection goes back (sqlx has no switch for it: transact-rs/sqlx#1743) and, on
//! SQLite, two hops to the connection's worker thread. The reads of [`Query`] run instead:
//!
//! - on **SQLite**, on the calling thread, on a connection of its own that only reads
//!   (`query_only`; [`SqliteReads`]): one of a few, taken with `try_lock`, with cached
//!   prepared statements. A read of pages in SQLite's or the OS's cache takes
//!   microseconds; the thread blocks for it as it would for any other short computation.
//! - on **PostgreSQL**, on a `tokio-postgres` client with the statements prepared once
//!   ([`PgReads`]): concurrent reads share a connection and are pipelined on it.
//!
//! Either is an accelerator only: whenever it cannot answer (every connection busy, the
//! database busy or unreachable, any error), the read goes through the pool as before,
//! so results and errors are those of the pool path. A broken connection is dropped and
//! reopened at the next read, at most once a [`RETRY_AFTER`].

// A MySQL-only build reads through the pool alone.
#![cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "postgres")]
use postgres::PgReads;
#[cfg(feature = "postgres")]
pub(crate) use postgres::client_config as postgres_client_config;
#[cfg(feature = "sqlite")]
use sqlite::SqliteReads;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::db::{Col, Val};
use crate::dialect::Queries;

/// A read the direct path serves, with its parameters in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Query {
    /// `get_session_and_user`: the stored session token.
    SessionAndUser,
    /// `get_user`: the user id.
    User,
    /// `get_app_access`: the user id, the client id.
    AppAccess,
    /// `get_user_with_app_access`: the client id, the user id.
    UserWithAppAccess,
    /// `get_user_with_app_access_and_locks`: two rate-limit keys, the client id, the user
    /// id.
    UserWithAppAccessAndLocks,
    /// A rate-limit row (`get_rate_limit_unlocked`, which revocation marks are read by):
    /// the key.
    RateLimit,
    /// The later lock of two rate-limit rows (`get_later_rate_limit_lock`, which a token's
    /// two revocation marks are read by): the two keys.
    LaterRateLimitLock,
}

impl Query {
    /// Every read, in the order of [`Query::index`].
    const ALL: [Query; 7] = [
        Query::SessionAndUser,
        Query::User,
        Query::AppAccess,
        Query::UserWithAppAccess,
        Query::UserWithAppAccessAndLocks,
        Query::RateLimit,
        Query::LaterRateLimitLock,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// Its statement among `queries`, and the columns it reads (those of the pool's read).
    fn statement(self, queries: &'static Queries) -> (&'static str, &'static [Col]) {
        match self {
            Query::SessionAndUser => (&queries.get_session_and_user, &crate::db::SESSION_AND_USER),
            Query::User => (&queries.get_user, &crate::db::USER),
            Query::AppAccess => (&queries.get_app_access, &crate::db::APP_ACCESS),
            Query::UserWithAppAccess => (
                &queries.get_user_with_app_access,
                &crate::db::USER_WITH_APP_ACCESS,
            ),
            Query::UserWithAppAccessAndLocks => (
                &queries.get_user_with_app_access_and_locks,
                &crate::db::LOCKS_USER_WITH_APP_ACCESS,
            ),
            Query::RateLimit => (&queries.get_rate_limit_unlocked, &crate::db::RATE_LIMIT),
            Query::LaterRateLimitLock => (&queries.get_later_rate_limit_lock, &crate::db::LOCK),
        }
    }

    /// Every statement of `queries` this path reads with, by [`Query::index`].
    fn statements(queries: &'static Queries) -> Vec<(&'static str, &'static [Col])> {
        Query::ALL.iter().map(|q| q.statement(queries)).collect()
    }
}

/// A parameter of a direct read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param<'a> {
    /// Text.
    Text(&'a str),
    /// A user id (an `INTEGER` on PostgreSQL's serial ids; checked by the caller).
    UserId(&'a str),
}

impl<'a> Param<'a> {
    fn as_str(self) -> &'a str {
        match self {
            Param::Text(s) | Param::UserId(s) => s,
        }
    }
}

/// How long a connection that failed (to open or to answer) is left alone; meanwhile its
/// reads go through the pool.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(1);

/// What a direct read found.
#[derive(Debug, PartialEq)]
pub(crate) enum Read {
    /// The row (`None`: no row matched), read as the columns said.
    Row(Option<Vec<Val>>),
    /// No answer here: read through the pool.
    UsePool,
}

/// The direct read path of the database in use.
pub(crate) struct DirectReads {
    backend: Backend,
    /// Set by [`DirectReads::close`]: connections closed, reads left to the (closed) pool.
    closed: AtomicBool,
}

// One per adapter, behind an `Arc`: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteReads),
    #[cfg(feature = "postgres")]
    Postgres(PgReads),
    /// A MySQL-only build has no direct reads, and no value of this type.
    #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
    #[allow(dead_code)]
    None(std::convert::Infallible),
}

impl DirectReads {
    /// Session reads from the SQLite database file at `path`, or `None` (logged) when no
    /// connection to it opens now: then every read stays on the pool.
    #[cfg(feature = "sqlite")]
    pub fn sqlite(path: std::path::PathBuf, max_connections: u32) -> Option<Self> {
        if let Err(e) = sqlite::open(&path) {
            tracing::warn!(error = %e, "SQLite session reads stay on the pool: cannot open the file apart from it");
            return None;
        }
        Some(DirectReads::new(Backend::Sqlite(SqliteReads::new(
            path,
            Query::statements(crate::sqlite::DIALECT.queries()),
            connection_count(max_connections, usize::MAX),
        ))))
    }

    /// Session reads from the PostgreSQL server `config` names, or `None` (logged) when it
    /// cannot connect now where the pool just did (a password only in `~/.pgpass`, say):
    /// then every read stays on the pool, instead of failing over to it once a second.
    #[cfg(feature = "postgres")]
    pub async fn postgres(
        config: tokio_postgres::Config,
        max_connections: u32,
        bound: Duration,
    ) -> Option<Self> {
        match tokio::time::timeout(bound, postgres::try_connect(&config)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "PostgreSQL session reads stay on the pool: cannot connect apart from it");
                return None;
            }
            Err(_) => {
                tracing::warn!(
                    ?bound,
                    "PostgreSQL session reads stay on the pool: connecting apart from it timed out"
                );
                return None;
            }
        }
        Some(DirectReads::new(Backend::Postgres(PgReads::new(
            config,
            Query::statements(crate::postgres::DIALECT.queries()),
            connection_count(max_connections, MAX_POSTGRES_CONNECTIONS),
        ))))
    }

    fn new(backend: Backend) -> Self {
        DirectReads {
            backend,
            closed: AtomicBool::new(false),
        }
    }

    /// The row `query` reads with `params`, taking at most `bound` (SQLite reads do not
    /// wait: they answer or leave it to the pool at once).
    #[cfg_attr(
        not(feature = "postgres"),
        allow(unused_variables, clippy::unused_async)
    )]
    pub async fn fetch_optional(
        &self,
        query: Query,
        params: &[Param<'_>],
        bound: Duration,
    ) -> Read {
        if self.closed.load(Ordering::Relaxed) {
            return Read::UsePool;
        }
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(reads) => reads.fetch_optional(query.index(), params),
            #[cfg(feature = "postgres")]
            // Boxed: the connection's future would otherwise size every read's, SQLite's too.
            Backend::Postgres(reads) => {
                Box::pin(reads.fetch_optional(query.index(), params, bound)).await
            }
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::None(never) => match *never {},
        }
    }

    /// Closes the connections for good; later reads go to the pool.
    pub async fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(reads) => reads.close(),
            #[cfg(feature = "postgres")]
            Backend::Postgres(reads) => reads.close().await,
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::None(never) => match *never {},
        }
    }
}

/// The most PostgreSQL connections the direct path opens: reads are pipelined, so a few
/// carry the load of many threads, and each costs a server process.
#[cfg(feature = "postgres")]
const MAX_POSTGRES_CONNECTIONS: usize = 4;

/// The number of direct connections: one per thread that may read at once (the async
/// runtime's workers), at most `max_connections` (the pool's size) and `cap`.
fn connection_count(max_connections: u32, cap: usize) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = usize::try_from(max_connections)
        .unwrap_or(usize::MAX)
        .min(cap);
    threads.clamp(1, max.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "sqlite")]
    #[test]
    fn no_sqlite_reads_without_a_file_to_open() {
        let missing = std::env::temp_dir().join(format!(
            "authcore-direct-{}-absent/none.db",
            std::process::id()
        ));
        assert!(DirectReads::sqlite(missing, 10).is_none());
    }

    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn no_postgres_reads_without_a_server_to_reach() {
        let mut config = tokio_postgres::Config::new();
        config.host("127.0.0.1").port(1).user("nobody");
        let reads = DirectReads::postgres(config, 10, Duration::from_secs(3)).await;
        assert!(reads.is_none());
    }

    #[test]
    fn one_connection_per_thread_within_the_pool_size_and_the_cap() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(connection_count(1, usize::MAX), 1);
        assert_eq!(connection_count(0, usize::MAX), 1);
        assert_eq!(connection_count(u32::MAX, usize::MAX), threads);
        assert_eq!(connection_count(u32::MAX, 1), 1);
        #[cfg(feature = "postgres")]
        assert_eq!(
            connection_count(10, MAX_POSTGRES_CONNECTIONS),
            threads.min(MAX_POSTGRES_CONNECTIONS)
        );
    }
}
