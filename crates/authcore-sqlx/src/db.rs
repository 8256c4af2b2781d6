//! The pool of whichever database is in use, and the five ways [`crate::ops`] and the
//! rate-limit store talk to it (fetch one row, fetch all, execute, execute several in a
//! transaction, take a lock then read and write in a transaction), with values passed as
//! [`Arg`] and read back as [`Val`] so that the operations are written once. Each
//! backend module (`sqlite`, `postgres`, `mysql`) supplies its dialect and how it binds an
//! [`Arg`] and reads a [`Col`]. [`Pool::guarded`] is the gate every operation of the
//! adapter and of the rate-limit store passes: the time bound and the circuit breaker.

use std::future::Future;
use std::time::Duration;

use authcore::adapter::AdapterError;
use authcore::breaker::{CircuitBreaker, Prober};
use time::OffsetDateTime;

use crate::dialect::{Dialect, Queries};
use crate::error;

/// A value bound to a statement.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(bool),
    Time(Option<OffsetDateTime>),
    /// A user id, as the adapter's callers know it (on PostgreSQL the decimal form of the
    /// `SERIAL` integer; check it with [`Pool::is_user_id`] first).
    UserId(String),
    /// A user id or `NULL`, in a column of user ids (checked as [`Arg::UserId`]).
    OptUserId(Option<String>),
}

impl Arg {
    pub fn text(s: impl Into<String>) -> Self {
        Arg::Text(Some(s.into()))
    }
}

/// How to read one column of a result row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Col {
    Text,
    Int,
    Bool,
    Time,
    /// A user id: read as text whatever the column's type.
    UserId,
}

/// The columns of the session-and-user read (session token, user id, expiry; the user's id,
/// name, email, email verified, image): one shape for the pool's query and the direct reads.
pub(crate) const SESSION_AND_USER: [Col; 8] = [
    Col::Text,
    Col::UserId,
    Col::Time,
    Col::UserId,
    Col::Text,
    Col::Text,
    Col::Time,
    Col::Text,
];

/// The columns of a user row (id, name, email, email verified, image).
pub(crate) const USER: [Col; 5] = [Col::UserId, Col::Text, Col::Text, Col::Time, Col::Text];

/// The columns of an access row after its client id: name, scopes, created, updated, epoch.
pub(crate) const APP_ACCESS: [Col; 5] = [Col::Text, Col::Text, Col::Time, Col::Time, Col::Int];

/// The columns of a user with their access for a client ([`USER`], then [`APP_ACCESS`]).
pub(crate) const USER_WITH_APP_ACCESS: [Col; 10] = [
    Col::UserId,
    Col::Text,
    Col::Text,
    Col::Time,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Time,
    Col::Time,
    Col::Int,
];

/// Two lock ends, then [`USER_WITH_APP_ACCESS`].
pub(crate) const LOCKS_USER_WITH_APP_ACCESS: [Col; 12] = {
    let mut cols = [Col::Int; 12];
    let mut i = 0;
    while i < USER_WITH_APP_ACCESS.len() {
        cols[i + 2] = USER_WITH_APP_ACCESS[i];
        i += 1;
    }
    cols
};

/// The columns of a rate-limit row: count, window end, locked until.
pub(crate) const RATE_LIMIT: [Col; 3] = [Col::Int, Col::Int, Col::Int];

/// The one column of a lock's end.
pub(crate) const LOCK: [Col; 1] = [Col::Int];

/// One column of a result row, read as its [`Col`] says; SQL `NULL` is [`Val::Null`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Text(String),
    Int(i64),
    Bool(bool),
    Time(OffsetDateTime),
}

/// `sql` with `args` bound by the backend's `bind`.
fn statement<DB: sqlx::Database>(sql: &'static str, args: Vec<Arg>, bind: Binder<DB>) -> Query<DB> {
    args.into_iter().fold(sqlx::query(sql), bind)
}

/// A statement of database `DB`.
pub(crate) type Query<DB> = sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>;

/// How a backend binds one [`Arg`].
type Binder<DB> = fn(Query<DB>, Arg) -> Query<DB>;

/// Reads `row` as `cols` say: text, integers and booleans here, user ids and times (whose
/// column types differ between databases) with the backend's `read_column`.
fn read_row<'r, R>(
    row: &'r R,
    cols: &[Col],
    read_column: fn(&'r R, usize, Col) -> Result<Option<Val>, sqlx::Error>,
) -> Result<Vec<Val>, sqlx::Error>
where
    R: sqlx::Row,
    usize: sqlx::ColumnIndex<R>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    bool: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let mut values = Vec::with_capacity(cols.len());
    for (i, &col) in cols.iter().enumerate() {
        let value = match col {
            Col::Text => row.try_get::<Option<String>, _>(i)?.map(Val::Text),
            Col::Int => row.try_get::<Option<i64>, _>(i)?.map(Val::Int),
            Col::Bool => row.try_get::<Option<bool>, _>(i)?.map(Val::Bool),
            Col::UserId | Col::Time => read_column(row, i, col)?,
        };
        values.push(value.unwrap_or(Val::Null));
    }
    Ok(values)
}

/// The connection pool of the database in use.
#[derive(Clone)]
pub(crate) enum Pool {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
    #[cfg(feature = "mysql")]
    MySql(sqlx::MySqlPool),
}

/// Runs `$body` with `$pool` bound to the pool in use and `$backend` to its module.
macro_rules! with_backend {
    ($self:expr, $pool:ident, $backend:ident => $body:expr) => {
        match $self {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite($pool) => {
                #[allow(unused_imports)]
                use crate::sqlite as $backend;
                $body
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres($pool) => {
                #[allow(unused_imports)]
                use crate::postgres as $backend;
                $body
            }
            #[cfg(feature = "mysql")]
            Pool::MySql($pool) => {
                #[allow(unused_imports)]
                use crate::mysql as $backend;
                $body
            }
        }
    };
}
pub(crate) use with_backend;

impl Pool {
    /// The dialect of the database in use.
    pub fn dialect(&self) -> &'static Dialect {
        with_backend!(self, _pool, backend => &backend::DIALECT)
    }

    /// Every statement, rendered for the database in use.
    pub fn sql(&self) -> &'static Queries {
        self.dialect().queries()
    }

    /// Whether `id` can name a user row here (on PostgreSQL: the canonical decimal form of
    /// an `INTEGER`); other ids name no row.
    pub fn is_user_id(&self, id: &str) -> bool {
        self.dialect().is_user_id(id)
    }

    /// Runs `operation` (operation `op` on this pool) through `breaker` and within
    /// `timeout`: while the breaker is open it answers [`error::unavailable`] at once; a
    /// timeout or a failure that says the database is unreachable ([`error::outage_of`])
    /// trips it, any other answer tells it the database answered, and the call that opens
    /// it starts the background probe ([`Pool::probe_until_closed`]), as does a refused
    /// call when no probe runs.
    pub async fn guarded<T>(
        &self,
        breaker: &CircuitBreaker,
        timeout: Duration,
        op: &'static str,
        operation: impl Future<Output = Result<T, AdapterError>>,
    ) -> Result<T, AdapterError> {
        if !breaker.admits() {
            // No probe loop runs (the last one's runtime shut down): this call's starts one.
            if let Some(prober) = breaker.prober() {
                tokio::spawn(self.clone().probe_until_closed(prober, timeout));
            }
            return Err(error::unavailable(op));
        }
        let result = tokio::time::timeout(timeout, operation)
            .await
            .unwrap_or_else(|_| Err(error::timed_out(op, timeout)));
        match result
            .as_ref()
            .err()
            .and_then(|e| Some((error::outage_of(e)?, e)))
        {
            Some((outage, e)) => {
                if let Some(prober) = breaker.trip(outage, e) {
                    tokio::spawn(self.clone().probe_until_closed(prober, timeout));
                }
            }
            None => breaker.succeeded(),
        }
        result
    }

    /// Probes the database ([`Pool::answers`], each probe bounded by `timeout`) until it
    /// answers, which closes the breaker of `prober`.
    async fn probe_until_closed(self, prober: Prober, timeout: Duration) {
        let probe = || async {
            // A closed pool is the host's doing, not an outage: the breaker closes and
            // calls fail as on a closed pool.
            self.is_closed()
                || matches!(
                    tokio::time::timeout(timeout, self.answers()).await,
                    Ok(Ok(()))
                )
        };
        prober.probe_until_closed(probe, tokio::time::sleep).await;
    }

    /// Whether the database answers a ping on a connection of its own, opened with the
    /// pool's options and closed after: a probe that neither waits for a pool whose
    /// connections are all busy (an overload, which a timeout also reports) nor takes one
    /// from the callers.
    async fn answers(&self) -> Result<(), sqlx::Error> {
        use sqlx::{ConnectOptions as _, Connection as _};
        with_backend!(self, pool, _backend => {
            let mut conn = pool.connect_options().connect().await?;
            let answer = conn.ping().await;
            let _ = conn.close().await;
            answer
        })
    }

    /// Whether the pool was closed.
    fn is_closed(&self) -> bool {
        with_backend!(self, pool, _backend => pool.is_closed())
    }

    /// The first row of `sql` with `args`, read as `cols` say.
    pub async fn fetch_optional(
        &self,
        sql: &'static str,
        args: Vec<Arg>,
        cols: &[Col],
    ) -> Result<Option<Vec<Val>>, sqlx::Error> {
        // Boxed, as are the other statements: sqlx's futures are kilobytes, and a caller's
        // future that held one inline would be copied whole at each move, even on the paths
        // that never reach the pool.
        Box::pin(async move {
            with_backend!(self, pool, backend => {
                statement(sql, args, backend::bind)
                    .fetch_optional(pool)
                    .await?
                    .map(|row| read_row(&row, cols, backend::read_column))
                    .transpose()
            })
        })
        .await
    }

    /// Every row of `sql` with `args`.
    pub async fn fetch_all(
        &self,
        sql: &'static str,
        args: Vec<Arg>,
        cols: &[Col],
    ) -> Result<Vec<Vec<Val>>, sqlx::Error> {
        Box::pin(async move {
            with_backend!(self, pool, backend => {
                statement(sql, args, backend::bind)
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(|row| read_row(row, cols, backend::read_column))
                    .collect()
            })
        })
        .await
    }

    /// Runs `sql` with `args`; the number of rows it changed (for a `DELETE`, the rows
    /// deleted; an `UPDATE` on MySQL counts only rows whose values changed).
    pub async fn execute(&self, sql: &'static str, args: Vec<Arg>) -> Result<u64, sqlx::Error> {
        Box::pin(async move {
            with_backend!(self, pool, backend => {
                Ok(statement(sql, args, backend::bind).execute(pool).await?.rows_affected())
            })
        })
        .await
    }

    /// Runs the statements in one transaction: all or none.
    pub async fn execute_all(
        &self,
        statements: Vec<(&'static str, Vec<Arg>)>,
    ) -> Result<(), sqlx::Error> {
        Box::pin(async move {
            with_backend!(self, pool, backend => {
                let mut tx = pool.begin().await?;
                for (sql, args) in statements {
                    statement(sql, args, backend::bind).execute(&mut *tx).await?;
                }
                tx.commit().await
            })
        })
        .await
    }

    /// In one transaction: runs `lock` (which makes a row if missing and locks it), reads
    /// the row with `read`, then runs the statements `decide` makes of what it read; answers
    /// `decide`'s value. Concurrent calls on one row are serialized by the lock (on SQLite
    /// by the writing transaction's database lock), so the read and the writes are one
    /// atomic step.
    pub async fn locked_update<R>(
        &self,
        lock: (&'static str, Vec<Arg>),
        read: (&'static str, Vec<Arg>, &[Col]),
        decide: impl FnOnce(Option<Vec<Val>>) -> (Vec<(&'static str, Vec<Arg>)>, R),
    ) -> Result<R, sqlx::Error> {
        self.locked_updates(lock, vec![read], |found| {
            decide(found.into_iter().flatten().next())
        })
        .await
    }

    /// [`Pool::locked_update`] with several reads, each answering every row it finds:
    /// `decide` gets the rows of each read of `reads`, in order.
    pub async fn locked_updates<R>(
        &self,
        lock: (&'static str, Vec<Arg>),
        reads: Vec<(&'static str, Vec<Arg>, &[Col])>,
        decide: impl FnOnce(Vec<Vec<Vec<Val>>>) -> (Vec<(&'static str, Vec<Arg>)>, R),
    ) -> Result<R, sqlx::Error> {
        Box::pin(async move {
            with_backend!(self, pool, backend => {
                let mut tx = pool.begin().await?;
                statement(lock.0, lock.1, backend::bind).execute(&mut *tx).await?;
                let mut found = Vec::with_capacity(reads.len());
                for (sql, args, cols) in reads {
                    let rows = statement(sql, args, backend::bind).fetch_all(&mut *tx).await?;
                    found.push(
                        rows.iter()
                            .map(|row| read_row(row, cols, backend::read_column))
                            .collect::<Result<Vec<_>, _>>()?,
                    );
                }
                let (writes, answer) = decide(found);
                for (sql, args) in writes {
                    statement(sql, args, backend::bind).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(answer)
            })
        })
        .await
    }
}
