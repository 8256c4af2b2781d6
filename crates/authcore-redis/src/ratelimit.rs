//! [`RedisRateLimitStore`]: authcore's rate-limit counts in Redis, shared by every instance.

use std::time::Duration;

use async_trait::async_trait;
use authcore::BoxError;
use authcore::ratelimit::{RateLimit, RateLimitStore};

use crate::RedisAdapter;
use crate::conn::Conn;
use crate::scripts::{RATE_COUNT, RATE_GIVE_BACK};

/// Rate-limit counts in Redis: a fixed window per key (`INCR` + `PEXPIRE`) and a lock key
/// with the lock-out as its expiry, checked and updated by one Lua script so that
/// concurrent requests, on any number of instances, are counted one by one. Every key
/// expires by itself. Made by [`RedisAdapter::rate_limit_store`]; it shares the adapter's
/// connection and prefix. Counts and locks live in separate namespaces,
/// `<prefix>ratelimit:count:<key>` and `<prefix>ratelimit:lock:<key>`, so no key's count
/// can be another's lock (values, [`RateLimitStore::put_value`], are strings under
/// `<prefix>ratelimit:value:<key>`, expiring by `PX`) (authcore's keys carry their subject hashed besides). Its calls
/// pass the adapter's circuit breaker (see *Outages* in the crate documentation).
#[derive(Clone)]
pub struct RedisRateLimitStore {
    conn: Conn,
    prefix: String,
}

impl std::fmt::Debug for RedisRateLimitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimitStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisAdapter {
    /// A rate-limit store on this adapter's connection and key prefix.
    pub fn rate_limit_store(&self) -> RedisRateLimitStore {
        RedisRateLimitStore {
            conn: self.conn.clone(),
            prefix: format!("{}ratelimit:", self.prefix()),
        }
    }
}

/// A window or lock-out in milliseconds for `PEXPIRE` / `PX`: at least 1, at most a century
/// (Redis refuses expiries past its clock's range).
fn millis(d: Duration) -> u64 {
    const CENTURY_MS: u64 = 100 * 365 * 24 * 3600 * 1000;
    u64::try_from(d.as_millis())
        .unwrap_or(u64::MAX)
        .clamp(1, CENTURY_MS)
}

impl RedisRateLimitStore {
    /// Whether Redis is taken to answer ([`RedisAdapter::available`]).
    pub fn available(&self) -> bool {
        self.conn.available()
    }

    /// The key of `key`'s value ([`RateLimitStore::put_value`]).
    fn value_key(&self, key: &str) -> String {
        format!("{}value:{key}", self.prefix)
    }

    /// `SET` of `key`'s value for `ttl`; with `NX` only where none is (answering the
    /// value's `OK`, or nil when one was).
    fn set_value(&self, key: &str, value: &str, ttl: Duration, nx: bool) -> redis::Cmd {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.value_key(key)).arg(value);
        if nx {
            cmd.arg("NX");
        }
        cmd.arg("PX").arg(millis(ttl));
        cmd
    }

    /// The count key and the lock key of `key`.
    fn keys(&self, key: &str) -> (String, String) {
        (
            format!("{}count:{key}", self.prefix),
            format!("{}lock:{key}", self.prefix),
        )
    }
}

#[async_trait]
impl RateLimitStore for RedisRateLimitStore {
    async fn lockout_left(&self, key: &str) -> Result<Option<Duration>, BoxError> {
        let (_, lock) = self.keys(key);
        let left: i64 = redis::cmd("PTTL")
            .arg(&lock)
            .query_async(&mut self.conn.clone())
            .await?;
        Ok(u64::try_from(left)
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis))
    }

    /// One `EXISTS` over the lock keys (a lock key lives exactly as long as its lock).
    async fn any_locked(&self, keys: &[&str]) -> Result<bool, BoxError> {
        if keys.is_empty() {
            return Ok(false);
        }
        let mut exists = redis::cmd("EXISTS");
        for key in keys {
            exists.arg(self.keys(key).1);
        }
        let found: i64 = exists.query_async(&mut self.conn.clone()).await?;
        Ok(found > 0)
    }

    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError> {
        let (count, lock) = self.keys(key);
        let locked_ms: i64 = RATE_COUNT
            .key(&count)
            .key(&lock)
            .arg(limit.limit())
            .arg(millis(limit.window()))
            .arg(millis(limit.lockout_duration()))
            .invoke_async(&mut self.conn.clone())
            .await?;
        Ok(u64::try_from(locked_ms)
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis))
    }

    async fn give_back(&self, key: &str) -> Result<(), BoxError> {
        let (count, _) = self.keys(key);
        RATE_GIVE_BACK
            .key(&count)
            .invoke_async::<()>(&mut self.conn.clone())
            .await?;
        Ok(())
    }

    async fn put_value(&self, key: &str, value: &str, ttl: Duration) -> Result<(), BoxError> {
        self.set_value(key, value, ttl, false)
            .query_async::<()>(&mut self.conn.clone())
            .await?;
        Ok(())
    }

    async fn get_value(&self, key: &str) -> Result<Option<String>, BoxError> {
        Ok(redis::cmd("GET")
            .arg(self.value_key(key))
            .query_async(&mut self.conn.clone())
            .await?)
    }

    /// `SET … NX PX`: one command, so one of concurrent callers keeps its value.
    async fn put_value_if_absent(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        let kept: Option<String> = self
            .set_value(key, value, ttl, true)
            .query_async(&mut self.conn.clone())
            .await?;
        Ok(kept.is_some())
    }

    async fn reset(&self, key: &str) -> Result<(), BoxError> {
        let (count, lock) = self.keys(key);
        redis::cmd("DEL")
            .arg(&count)
            .arg(&lock)
            .query_async::<()>(&mut self.conn.clone())
            .await?;
        Ok(())
    }
}
