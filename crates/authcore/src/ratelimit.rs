//! Brute-force protection: limits on failed credentials sign-ins (per identifier and per
//! client address), on magic-link mails (per address and per client) and on every `POST`
//! and `webauthn-options` request per client address.
//!
//! A limit allows `limit` events per `window` (GCRA, from `governor`); the event that goes
//! over it locks the key for `lockout`. Credentials count failures only, and a success
//! clears the identifier's count; the others count every attempt. A limited request gets
//! the Auth.js error redirect with `error=RateLimited` (the built-in sign-in page explains
//! it), or `429` with `Retry-After` when it asked for JSON (`X-Auth-Return-Redirect`); the
//! logger gets a `RateLimited` error naming the limit, never the key; the
//! [`Events::rate_limited`](crate::callbacks::Events::rate_limited) event gets the limit,
//! the identifier as counted and the client address (for alerting).
//!
//! Counts live in a [`RateLimitStore`]: [`MemoryRateLimitStore`] (one process; bounded
//! memory) or a shared one such as `authcore-redis`'s, for several instances.
//!
//! The client address is the [`ClientAddr`](crate::request::ClientAddr) the host puts in
//! the request's extensions (authcore-axum does so from axum's `ConnectInfo`), or, when
//! that peer is one of the configured
//! [`trusted_proxies`](crate::config::AuthConfigBuilder::trusted_proxies), the last address
//! of `X-Forwarded-For` that is not a trusted proxy. Without a client address, the
//! per-client limits do not apply.
//!
//! ```
//! use std::time::Duration;
//! use authcore::ratelimit::{RateLimit, RateLimits};
//!
//! let limits = RateLimits {
//!     credentials_per_identifier: Some(RateLimit::new(5, Duration::from_secs(900))),
//!     ..RateLimits::recommended()
//! };
//! assert_eq!(limits.credentials_per_identifier.unwrap().limit(), 5);
//! ```

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::box_error::BoxError;

/// `limit` events per `window`; going over locks the key for `lockout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    limit: NonZeroU32,
    window: Duration,
    lockout: Duration,
}

impl RateLimit {
    /// `limit` events per `window` (a limit of 0 counts as 1, a zero window as 1 s), locked
    /// for `window` after that.
    pub fn new(limit: u32, window: Duration) -> Self {
        let window = if window.is_zero() {
            Duration::from_secs(1)
        } else {
            window
        };
        RateLimit {
            limit: NonZeroU32::new(limit).unwrap_or(NonZeroU32::MIN),
            window,
            lockout: window,
        }
    }

    /// How long a key stays locked once over the limit.
    pub fn lockout(mut self, lockout: Duration) -> Self {
        self.lockout = lockout;
        self
    }

    /// Events allowed per window.
    pub fn limit(&self) -> u32 {
        self.limit.get()
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The lock-out after going over.
    pub fn lockout_duration(&self) -> Duration {
        self.lockout
    }
}

/// Which limits apply; `None` turns one off. [`Default`] is all off (as Auth.js);
/// [`RateLimits::recommended`] is what `authcore-server` uses.
/// Build it with struct update syntax over [`Default`] or [`RateLimits::recommended`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Failed credentials sign-ins per identifier (the `username` or `email` field).
    pub credentials_per_identifier: Option<RateLimit>,
    /// Failed credentials sign-ins per client address.
    pub credentials_per_client: Option<RateLimit>,
    /// Magic-link mails per email address.
    pub emails_per_address: Option<RateLimit>,
    /// Magic-link mails per client address.
    pub emails_per_client: Option<RateLimit>,
    /// `POST` and `webauthn-options` requests per client address.
    pub requests_per_client: Option<RateLimit>,
}

impl RateLimits {
    /// 5 failures per identifier in 15 min (then locked 15 min); 20 failures per client in
    /// 15 min; 3 mails per address and 10 per client per hour; 60 requests per client per
    /// minute.
    pub fn recommended() -> Self {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        RateLimits {
            credentials_per_identifier: Some(RateLimit::new(5, minutes(15))),
            credentials_per_client: Some(RateLimit::new(20, minutes(15))),
            emails_per_address: Some(RateLimit::new(3, minutes(60))),
            emails_per_client: Some(RateLimit::new(10, minutes(60))),
            requests_per_client: Some(RateLimit::new(60, minutes(1))),
        }
    }

    /// Whether any limit is on.
    pub fn any(&self) -> bool {
        self.credentials_per_identifier.is_some()
            || self.credentials_per_client.is_some()
            || self.emails_per_address.is_some()
            || self.emails_per_client.is_some()
            || self.requests_per_client.is_some()
    }
}

/// Marks `value` of `kind` as used in `store`; `false` when it was already used within
/// `ttl` (by this process or, with a shared store, by any instance). Only a hash of the
/// value is stored. A failing store lets the value through (and logs), as the limits do.
pub(crate) async fn first_use(
    store: &dyn RateLimitStore,
    kind: &str,
    value: &str,
    ttl: Duration,
) -> bool {
    use sha2::Digest as _;
    let key = format!(
        "authcore:used:{kind}:{}",
        hex::encode(sha2::Sha256::digest(value.as_bytes()))
    );
    match store
        .count(&key, &RateLimit::new(1, ttl).lockout(ttl))
        .await
    {
        Ok(over) => over.is_none(),
        Err(e) => {
            tracing::error!(error = %e, kind, "single-use store failed");
            true
        }
    }
}

/// Where counts are kept. Keys are opaque strings made by authcore (a limit's name and a
/// hash-free identifier or address); a store must be atomic per key.
#[async_trait]
pub trait RateLimitStore: Send + Sync + fmt::Debug + 'static {
    /// The time left if `key` is locked out.
    async fn locked(&self, key: &str) -> Result<Option<Duration>, BoxError>;
    /// Counts one event for `key` under `limit`; the time until it may try again when this
    /// one went over (the key is then locked for the lock-out).
    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError>;
    /// Forgets `key`'s count and lock (after a success).
    async fn reset(&self, key: &str) -> Result<(), BoxError>;
}

type Gcra = governor::DefaultDirectRateLimiter;

/// Counts in this process: a GCRA limiter per key (`governor`) and lock-out deadlines, in
/// two caches bounded by `max_keys` (`moka`): a flood of distinct keys evicts the least
/// useful entries instead of growing memory (an evicted count starts again from zero).
/// Idle keys expire after their window.
#[derive(Clone)]
pub struct MemoryRateLimitStore {
    counters: moka::sync::Cache<String, Arc<(Gcra, RateLimit)>>,
    locks: moka::sync::Cache<String, Instant>,
}

impl fmt::Debug for MemoryRateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryRateLimitStore")
            .field("keys", &self.counters.entry_count())
            .field("locked", &self.locks.entry_count())
            .finish()
    }
}

/// Default bound of [`MemoryRateLimitStore::new`].
pub const DEFAULT_MAX_KEYS: u64 = 100_000;

impl Default for MemoryRateLimitStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_KEYS)
    }
}

/// Expires a counter after its window without events, a lock at its deadline.
struct Expire;

impl moka::Expiry<String, Arc<(Gcra, RateLimit)>> for Expire {
    fn expire_after_create(
        &self,
        _: &String,
        value: &Arc<(Gcra, RateLimit)>,
        _: Instant,
    ) -> Option<Duration> {
        Some(value.1.window)
    }

    fn expire_after_read(
        &self,
        _: &String,
        value: &Arc<(Gcra, RateLimit)>,
        _: Instant,
        _: Option<Duration>,
        _: Instant,
    ) -> Option<Duration> {
        Some(value.1.window)
    }
}

impl moka::Expiry<String, Instant> for Expire {
    fn expire_after_create(&self, _: &String, until: &Instant, now: Instant) -> Option<Duration> {
        Some(until.saturating_duration_since(now))
    }
}

impl MemoryRateLimitStore {
    /// A store holding at most `max_keys` counters (and as many locks).
    pub fn new(max_keys: u64) -> Self {
        MemoryRateLimitStore {
            counters: moka::sync::Cache::builder()
                .max_capacity(max_keys)
                .expire_after(Expire)
                .build(),
            locks: moka::sync::Cache::builder()
                .max_capacity(max_keys)
                .expire_after(Expire)
                .build(),
        }
    }

    /// Counters held now (after pending evictions), for tests and metrics.
    pub fn len(&self) -> u64 {
        self.counters.run_pending_tasks();
        self.counters.entry_count()
    }

    /// Whether no counter is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn gcra(limit: &RateLimit) -> Gcra {
    let period = limit.window / limit.limit.get();
    let quota = governor::Quota::with_period(period.max(Duration::from_nanos(1)))
        .unwrap_or_else(|| governor::Quota::per_second(NonZeroU32::MIN))
        .allow_burst(limit.limit);
    governor::RateLimiter::direct(quota)
}

#[async_trait]
impl RateLimitStore for MemoryRateLimitStore {
    async fn locked(&self, key: &str) -> Result<Option<Duration>, BoxError> {
        let now = Instant::now();
        Ok(self
            .locks
            .get(key)
            .map(|until| until.saturating_duration_since(now))
            .filter(|left| !left.is_zero()))
    }

    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError> {
        let entry = self
            .counters
            .get_with_by_ref(key, || Arc::new((gcra(limit), *limit)));
        if entry.0.check().is_ok() {
            return Ok(None);
        }
        self.locks
            .insert(key.to_owned(), Instant::now() + limit.lockout);
        Ok(Some(limit.lockout))
    }

    async fn reset(&self, key: &str) -> Result<(), BoxError> {
        self.counters.invalidate(key);
        self.locks.invalidate(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal executor: the memory store never waits.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn over_the_limit_locks_and_reset_clears() {
        let store = MemoryRateLimitStore::default();
        let limit = RateLimit::new(3, Duration::from_secs(60)).lockout(Duration::from_secs(120));
        for _ in 0..3 {
            assert_eq!(block_on(store.count("k", &limit)).unwrap(), None);
        }
        assert_eq!(block_on(store.locked("k")).unwrap(), None);
        let retry = block_on(store.count("k", &limit)).unwrap().unwrap();
        assert_eq!(retry, Duration::from_secs(120));
        let left = block_on(store.locked("k")).unwrap().unwrap();
        assert!(left > Duration::from_secs(119) && left <= Duration::from_secs(120));
        // Other keys are not affected.
        assert_eq!(block_on(store.locked("other")).unwrap(), None);
        block_on(store.reset("k")).unwrap();
        assert_eq!(block_on(store.locked("k")).unwrap(), None);
        assert_eq!(block_on(store.count("k", &limit)).unwrap(), None);
    }

    #[test]
    fn a_flood_of_distinct_keys_stays_within_the_bound() {
        let store = MemoryRateLimitStore::new(1_000);
        let limit = RateLimit::new(1, Duration::from_secs(3600));
        for i in 0..50_000 {
            let key = format!("client:{i}");
            let _ = block_on(store.count(&key, &limit)).unwrap();
            let _ = block_on(store.count(&key, &limit)).unwrap();
        }
        store.locks.run_pending_tasks();
        assert!(store.len() <= 1_000, "{} counters", store.len());
        assert!(store.locks.entry_count() <= 1_000);
    }

    #[test]
    fn recommended_limits_are_all_on() {
        let r = RateLimits::recommended();
        assert!(r.any());
        assert!(!RateLimits::default().any());
        assert_eq!(r.credentials_per_identifier.map(|l| l.limit()), Some(5));
    }
}
