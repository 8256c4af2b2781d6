//! [`SqlRateLimitStore`]: authcore's rate-limit counts, single-use values and revocation
//! marks in the database, shared by every instance that uses it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use authcore::BoxError;
use authcore::adapter::{AdapterError, DatabaseId};
use authcore::breaker::CircuitBreaker;
use authcore::ratelimit::{Counter, RateLimit, RateLimitStore};

use crate::SqlxAdapter;
use crate::db::{Arg, Col, LOCK, Pool, RATE_LIMIT, Val};
use crate::error::map_sqlx;
use crate::ops::now_ms;

/// A kept value's columns: the value and when it expires.
const VALUE: [Col; 2] = [Col::Text, Col::Int];

/// Rate-limit counts in the adapter's database (table `rate_limits`, `rateLimit` on MySQL,
/// made by [`SqlxAdapter::migrate`]): one row per key holding its
/// [`Counter`], stepped in a transaction that locks the row, so that concurrent requests on
/// any number of instances sharing the database are counted one by one. authcore also
/// keeps its single-use values (OAuth codes, refresh tokens, WebAuthn challenges) and
/// revocation marks in the store; in the database they outlive a restart, which a memory
/// store's do not.
///
/// Times are milliseconds since the Unix epoch on each instance's clock (instances should
/// keep their clocks in sync, as they must for tokens anyway). Expired rows are deleted
/// by the store itself, at most once a minute. Every call is bounded by the adapter's
/// timeout ([`SqlxAdapter::with_timeout`]) and passes the adapter's circuit breaker (see
/// *Outages* in the crate documentation). Made by [`SqlxAdapter::rate_limit_store`].
#[derive(Clone)]
pub struct SqlRateLimitStore {
    pool: Pool,
    /// The adapter's direct read path, for [`RateLimitStore::lockout_left`] (the single-use
    /// store's marks).
    direct: Option<Arc<crate::direct::DirectReads>>,
    timeout: Duration,
    /// The adapter's circuit breaker.
    breaker: CircuitBreaker,
    /// The adapter's database id.
    database: DatabaseId,
    /// When expired rows were last deleted (milliseconds since the epoch).
    last_sweep: Arc<AtomicU64>,
}

impl std::fmt::Debug for SqlRateLimitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlRateLimitStore")
            .field("dialect", &self.pool.dialect().tables.rate_limits)
            .finish_non_exhaustive()
    }
}

/// How often expired rows are deleted.
const SWEEP_EVERY_MS: u64 = 60_000;

impl SqlxAdapter {
    /// A rate-limit store in this adapter's database, on its pool.
    pub fn rate_limit_store(&self) -> SqlRateLimitStore {
        SqlRateLimitStore {
            pool: self.pool.clone(),
            direct: self.direct.clone(),
            timeout: self.timeout,
            breaker: self.breaker.clone(),
            database: self.database,
            last_sweep: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// The arguments of `put_rate_limit_value`: `value` under `key` until `ttl` from `now`.
fn value_args(key: &str, value: &str, now: u64, ttl: Duration) -> Vec<Arg> {
    let expires = now.saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    vec![
        Arg::text(key),
        int(expires),
        Arg::text(value),
        int(expires),
        Arg::text(value),
    ]
}

/// A stored millisecond time as an SQL `BIGINT` (times past `i64::MAX` are capped).
fn int(ms: u64) -> Arg {
    Arg::Int(Some(i64::try_from(ms).unwrap_or(i64::MAX)))
}

/// The counter of a row read as `count, windowEnds, lockedUntil`.
fn counter(row: Option<Vec<Val>>) -> Counter {
    let ms = |v: Option<&Val>| match v {
        Some(Val::Int(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    let Some(row) = row else {
        return Counter::default();
    };
    Counter {
        count: u32::try_from(ms(row.first())).unwrap_or(u32::MAX),
        window_ends: ms(row.get(1)),
        locked_until: ms(row.get(2)),
    }
}

impl SqlRateLimitStore {
    /// Runs `operation` (operation `op`) as the adapter's operations run
    /// ([`Pool::guarded`]: the adapter's time bound and circuit breaker).
    async fn bounded<T>(
        &self,
        op: &'static str,
        operation: impl std::future::Future<Output = Result<T, AdapterError>>,
    ) -> Result<T, BoxError> {
        self.pool
            .guarded(&self.breaker, self.timeout, op, operation)
            .await
            .map_err(Into::into)
    }

    /// [`SqlRateLimitStore::bounded`] for a statement on the pool.
    async fn bounded_sql<T>(
        &self,
        op: &'static str,
        statement: impl std::future::Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, BoxError> {
        self.bounded(op, async { statement.await.map_err(map_sqlx(op)) })
            .await
    }

    /// Whether the database is taken to answer ([`SqlxAdapter::available`]).
    pub fn available(&self) -> bool {
        self.breaker.admits()
    }

    /// Deletes expired rows, at most once per [`SWEEP_EVERY_MS`] across this store's
    /// clones; a failure is logged and tried again at the next sweep.
    async fn sweep(&self, now: u64) {
        let last = self.last_sweep.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SWEEP_EVERY_MS
            || self
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let sql = &self.pool.sql().delete_expired_rate_limits;
        if let Err(e) = self
            .bounded_sql("rate_limit_sweep", self.pool.execute(sql, vec![int(now)]))
            .await
        {
            tracing::warn!(error = %e, "rate-limit store: expired rows not deleted");
        }
    }
}

#[async_trait]
impl RateLimitStore for SqlRateLimitStore {
    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError> {
        let now = now_ms();
        self.sweep(now).await;
        let sql = self.pool.sql();
        let id = || Arg::text(key);
        let limit = *limit;
        let step = self.pool.locked_update(
            (&sql.lock_rate_limit, vec![id()]),
            (&sql.get_rate_limit, vec![id()], &RATE_LIMIT),
            |row| {
                let current = counter(row);
                let (next, refused) = current.count(&limit, now);
                let writes = if next == current {
                    Vec::new()
                } else {
                    let args = vec![
                        Arg::Int(Some(i64::from(next.count))),
                        int(next.window_ends),
                        int(next.locked_until),
                        int(next.expires()),
                        id(),
                    ];
                    vec![(sql.set_rate_limit.as_str(), args)]
                };
                (writes, refused)
            },
        );
        self.bounded_sql("rate_limit_count", step).await
    }

    async fn give_back(&self, key: &str) -> Result<(), BoxError> {
        let sql = &self.pool.sql().give_back_rate_limit;
        self.bounded_sql(
            "rate_limit_give_back",
            self.pool.execute(sql, vec![Arg::text(key)]),
        )
        .await
        .map(drop)
    }

    async fn reset(&self, key: &str) -> Result<(), BoxError> {
        let sql = &self.pool.sql().delete_rate_limit;
        self.bounded_sql(
            "rate_limit_reset",
            self.pool.execute(sql, vec![Arg::text(key)]),
        )
        .await
        .map(drop)
    }

    async fn put_value(&self, key: &str, value: &str, ttl: Duration) -> Result<(), BoxError> {
        let now = now_ms();
        self.sweep(now).await;
        let sql = &self.pool.sql().put_rate_limit_value;
        let args = value_args(key, value, now, ttl);
        self.bounded_sql("rate_limit_put_value", self.pool.execute(sql, args))
            .await
            .map(drop)
    }

    /// The key's row locked (`Pool::locked_update`), read,
    /// and written only when it holds no unexpired value.
    async fn put_value_if_absent(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        let now = now_ms();
        self.sweep(now).await;
        let sql = self.pool.sql();
        let id = || Arg::text(key);
        let step = self.pool.locked_update(
            (&sql.lock_rate_limit, vec![id()]),
            (&sql.get_rate_limit_value_locked, vec![id()], &VALUE),
            |row| {
                // A value held until after now (as the column stores times) stays.
                let now_stored = i64::try_from(now).unwrap_or(i64::MAX);
                if let Some([Val::Text(_), Val::Int(ends)]) = row.as_deref()
                    && *ends > now_stored
                {
                    return (Vec::new(), false);
                }
                let args = value_args(key, value, now, ttl);
                (vec![(sql.put_rate_limit_value.as_str(), args)], true)
            },
        );
        self.bounded_sql("rate_limit_put_value_if_absent", step)
            .await
    }

    async fn get_value(&self, key: &str) -> Result<Option<String>, BoxError> {
        let sql = &self.pool.sql().get_rate_limit_value;
        let row = self
            .bounded_sql(
                "rate_limit_get_value",
                self.pool.fetch_optional(sql, vec![Arg::text(key)], &VALUE),
            )
            .await?;
        let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
        Ok(match row.as_deref() {
            Some([Val::Text(value), Val::Int(expires)]) if *expires > now => Some(value.clone()),
            _ => None,
        })
    }

    async fn lockout_left(&self, key: &str) -> Result<Option<Duration>, BoxError> {
        use crate::direct::{Param, Query};
        let direct = crate::ops::direct_within(self.direct.as_ref(), self.timeout);
        let params = [Param::Text(key)];
        let read = crate::ops::read_one_row(
            &self.pool,
            direct,
            "rate_limit_locked",
            (Query::RateLimit, &params),
            (
                &self.pool.sql().get_rate_limit_unlocked,
                vec![Arg::text(key)],
                &RATE_LIMIT,
            ),
        );
        let row = self.bounded("rate_limit_locked", read).await?;
        Ok(counter(row).locked_at(now_ms()))
    }

    fn database(&self) -> Option<DatabaseId> {
        Some(self.database)
    }

    /// Two keys a read (`get_later_rate_limit_lock`: the later of their locks' ends).
    async fn any_locked(&self, keys: &[&str]) -> Result<bool, BoxError> {
        use crate::direct::{Param, Query};
        for pair in keys.chunks(2) {
            let (first, second) = match pair {
                [first, second] => (*first, *second),
                [only] => (*only, *only),
                _ => continue,
            };
            let direct = crate::ops::direct_within(self.direct.as_ref(), self.timeout);
            let params = [Param::Text(first), Param::Text(second)];
            let read = crate::ops::read_one_row(
                &self.pool,
                direct,
                "rate_limit_any_locked",
                (Query::LaterRateLimitLock, &params),
                (
                    &self.pool.sql().get_later_rate_limit_lock,
                    vec![Arg::text(first), Arg::text(second)],
                    &LOCK,
                ),
            );
            let row = self.bounded("rate_limit_any_locked", read).await?;
            let locked_until = match row.as_deref() {
                Some([Val::Int(ms)]) => u64::try_from(*ms).unwrap_or(0),
                _ => 0,
            };
            if locked_until > now_ms() {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
