//! Brute-force protection: limits on failed credentials sign-ins (per identifier and per
//! client address), on magic-link mails (per address and per client) and on every `POST`
//! and `webauthn-options` request per client address.
//!
//! A limit allows `limit` events per `window` (a fixed window from the key's first event);
//! the event that goes over it locks the key for `lockout`. Every attempt is counted
//! before the work it guards, so parallel attempts cannot pass together; for credentials a
//! success clears the identifier's count and gives the client's attempt back (the limits
//! are on failures), and an `authorize` that errors gives both back. The others count
//! every attempt. A limited request gets
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
//! per-client limits do not apply. An IPv6 client is counted by its `/64` network
//! ([`client_subject`]): one host or one customer is given a whole `/64`, so each of its
//! addresses is the same client.
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
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::adapter::DatabaseId;
use crate::box_error::BoxError;

mod single_use;

pub use single_use::SingleUseStore;

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
    /// `POST` and `webauthn-options` requests per client address (of back-channel logout
    /// tokens, only those refused).
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

/// The subject per-client limits count a client address under: an IPv4 address itself,
/// an IPv6 address's `/64` network (`2001:db8:1:2::/64`). A site is given at least a
/// `/64` (RFC 6177 §3), and a host picks the rest of its address itself (RFC 4941, RFC
/// 8981), so counting whole addresses would give one client 2^64 fresh ones. IPv4-mapped
/// IPv6 addresses count as their IPv4 address.
pub fn client_subject(address: std::net::IpAddr) -> String {
    match address.to_canonical() {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => {
            let network = std::net::Ipv6Addr::from_bits(v6.to_bits() & !u128::from(u64::MAX));
            format!("{network}/64")
        }
    }
}

/// The store key of `subject` under the namespace whose parts are `namespace`:
/// `<part>:<part>:…:<hex SHA-256 of subject>`. Subjects (identifiers typed by a client,
/// addresses, single-use values) enter keys only hashed, so no subject can name another
/// key: `demo:lock` is just another hash.
pub(crate) fn subject_key(namespace: &[&str], subject: &str) -> String {
    let len: usize = namespace.iter().map(|part| part.len() + 1).sum();
    let mut key = String::with_capacity(len + 64);
    for part in namespace {
        key.push_str(part);
        key.push(':');
    }
    crate::random::push_hex(&mut key, &crate::crypto::sha256(subject.as_bytes()));
    key
}

/// Where counts are kept: a fixed window per key and a lock-out. Keys are made by authcore
/// (a namespace and a hash, see [`RateLimitStore::count`]); a store must make each call
/// atomic per key, so that concurrent requests, on one instance or many, are counted one
/// by one.
///
/// An attempt is counted *before* the work it guards (a password check, a mail), so a
/// burst of parallel attempts gets at most the limit's worth through, however long that
/// work takes; an attempt that turns out not to count (a successful sign-in against the
/// per-client failure limit) is given back.
#[async_trait]
pub trait RateLimitStore: Send + Sync + fmt::Debug + 'static {
    /// Counts one event for `key` under `limit`, in one atomic step with the lock check:
    /// `None` when the event is allowed (and counted); the time until the key may try
    /// again when it is locked (the event is not counted) or when this event went over the
    /// limit (the key is then locked for the lock-out and its count starts again).
    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError>;
    /// Takes back one counted event of `key` (never below zero; a lock stays).
    async fn give_back(&self, key: &str) -> Result<(), BoxError>;
    /// Forgets `key`'s count and lock (after a success).
    async fn reset(&self, key: &str) -> Result<(), BoxError>;
    /// The time left if `key` is locked out; `None` when it is not (read only: for tests,
    /// operators, and the [`SingleUseStore`]'s marks, which are lock-outs).
    async fn lockout_left(&self, key: &str) -> Result<Option<Duration>, BoxError>;
    /// Whether any of `keys` is locked now ([`RateLimitStore::lockout_left`] of each): what
    /// an OpenID Provider asks of a token's two revocation marks on every request, so a
    /// shared store should answer it in one round trip. By default, one
    /// [`RateLimitStore::lockout_left`] after another.
    async fn any_locked(&self, keys: &[&str]) -> Result<bool, BoxError> {
        for key in keys {
            if self.lockout_left(key).await?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }
    /// The database this store keeps its rows in, when an adapter's stores may keep theirs
    /// in it too ([`DatabaseId`]): lets the [`SingleUseStore`] read its marks in the same
    /// statement as the adapter's rows. `None` by default. `Some` promises that every key
    /// is kept as given, in that database's own rate-limit rows as its adapter reads them
    /// ([`AppAccessStore::get_user_with_app_access_unless_locked`](crate::adapter::AppAccessStore::get_user_with_app_access_unless_locked)):
    /// a wrapper that changes keys (a prefix, another table) must answer `None`, or
    /// revocation marks would be looked for where they are not.
    fn database(&self) -> Option<DatabaseId> {
        None
    }
    /// Keeps `value` under `key` for `ttl`, replacing what was there (the
    /// [`SingleUseStore`]'s short-lived values: an OpenID Provider's pending device
    /// authorizations). A store that keeps no values answers an error, as by default.
    async fn put_value(&self, key: &str, value: &str, ttl: Duration) -> Result<(), BoxError> {
        let _ = (key, value, ttl);
        Err(NO_VALUES.into())
    }
    /// The unexpired value under `key` ([`RateLimitStore::put_value`]); an error from a
    /// store that keeps no values, as by default.
    async fn get_value(&self, key: &str) -> Result<Option<String>, BoxError> {
        let _ = key;
        Err(NO_VALUES.into())
    }
    /// Keeps `value` under `key` for `ttl` only when `key` holds no unexpired value:
    /// `true` when it was kept. Of concurrent calls for one key, on one instance or many,
    /// one keeps its value (what a new device authorization's user code needs). By
    /// default [`RateLimitStore::get_value`] then [`RateLimitStore::put_value`], which is
    /// not atomic: a store shared by instances answers it in one step.
    async fn put_value_if_absent(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        if self.get_value(key).await?.is_some() {
            return Ok(false);
        }
        self.put_value(key, value, ttl).await?;
        Ok(true)
    }
}

/// What a [`RateLimitStore`] without values answers to their calls.
const NO_VALUES: &str = "this rate-limit store keeps no values";

/// One key's count under the fixed-window rule every store follows: a window starts at the
/// key's first event, the event over the limit locks the key for the lock-out and starts
/// the count again. Times are milliseconds on a clock the store picks (the memory store's
/// own, the Unix epoch for a database); `0` is "never", so [`Counter::default`] is a key
/// with no events. A store keeps one per key and steps it atomically with
/// [`Counter::count`], so that every store counts alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counter {
    /// Events counted in the current window.
    pub count: u32,
    /// When the current window ends.
    pub window_ends: u64,
    /// When the lock-out ends (`0`: not locked).
    pub locked_until: u64,
}

/// `d` in milliseconds, capped at a century (a configured window or lock-out of
/// `Duration::MAX` must not overflow the clock).
fn capped_millis(d: Duration) -> u64 {
    const CENTURY_MS: u64 = 100 * 365 * 24 * 3600 * 1000;
    u64::try_from(d.as_millis())
        .unwrap_or(u64::MAX)
        .min(CENTURY_MS)
}

impl Counter {
    /// One event under `limit` at `now`: the new state, and the time until the key may try
    /// again when the event is refused (the key was locked, and the event is not counted)
    /// or went over the limit (the key is now locked).
    pub fn count(self, limit: &RateLimit, now: u64) -> (Counter, Option<Duration>) {
        if let Some(left) = self.locked_at(now) {
            return (self, Some(left));
        }
        let ends = now.saturating_add(capped_millis(limit.window));
        let mut next = if self.window_ends > now {
            Counter {
                locked_until: 0,
                ..self
            }
        } else {
            Counter {
                count: 0,
                window_ends: ends,
                locked_until: 0,
            }
        };
        next.count = next.count.saturating_add(1);
        if next.count > limit.limit.get() {
            let locked = Counter {
                count: 0,
                window_ends: ends,
                locked_until: now.saturating_add(capped_millis(limit.lockout)),
            };
            return (locked, Some(limit.lockout));
        }
        (next, None)
    }

    /// One counted event taken back (never below zero; a lock stays).
    pub fn give_back(self) -> Counter {
        Counter {
            count: self.count.saturating_sub(1),
            ..self
        }
    }

    /// The time left if the key is locked at `now`.
    pub fn locked_at(&self, now: u64) -> Option<Duration> {
        Some(Duration::from_millis(self.locked_until.saturating_sub(now))).filter(|d| !d.is_zero())
    }

    /// When the state is of no more use: the later of the window's end and the lock's.
    pub fn expires(&self) -> u64 {
        self.window_ends.max(self.locked_until)
    }
}

/// Counts in this process, with the same fixed-window rule as the Redis store: a window
/// starts at a key's first event, the event over the limit locks the key for the lock-out.
/// Entries live in a cache bounded by `max_keys` (`moka`, whose per-key compute makes
/// each step atomic): a flood of distinct keys evicts the least useful entries instead of
/// growing memory (an evicted count starts again from zero). Entries expire at the end of
/// their window or lock.
#[derive(Clone)]
pub struct MemoryRateLimitStore {
    windows: moka::sync::Cache<String, Counter>,
    /// The values ([`RateLimitStore::put_value`]) with when they expire on the counters'
    /// clock, bounded as the counts are.
    values: moka::sync::Cache<String, (String, u64)>,
    /// The zero of the counters' clock.
    epoch: Instant,
}

impl fmt::Debug for MemoryRateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryRateLimitStore")
            .field("keys", &self.windows.entry_count())
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

/// Expires an entry when its window and lock are over (the counters' times are
/// milliseconds since `epoch`).
struct Expire {
    epoch: Instant,
}

impl Expire {
    fn left(&self, c: &Counter, now: Instant) -> Duration {
        let at = self.epoch + Duration::from_millis(c.expires());
        at.saturating_duration_since(now)
    }
}

impl moka::Expiry<String, Counter> for Expire {
    fn expire_after_create(&self, _: &String, c: &Counter, now: Instant) -> Option<Duration> {
        Some(self.left(c, now))
    }

    fn expire_after_update(
        &self,
        _: &String,
        c: &Counter,
        now: Instant,
        _: Option<Duration>,
    ) -> Option<Duration> {
        Some(self.left(c, now))
    }
}

/// Expires a value at its end (milliseconds since `epoch`).
struct ExpireValue {
    epoch: Instant,
}

impl moka::Expiry<String, (String, u64)> for ExpireValue {
    fn expire_after_create(&self, _: &String, v: &(String, u64), now: Instant) -> Option<Duration> {
        let at = self.epoch + Duration::from_millis(v.1);
        Some(at.saturating_duration_since(now))
    }

    fn expire_after_update(
        &self,
        key: &String,
        v: &(String, u64),
        now: Instant,
        _: Option<Duration>,
    ) -> Option<Duration> {
        self.expire_after_create(key, v, now)
    }
}

impl MemoryRateLimitStore {
    /// A store holding at most `max_keys` keys (and as many values).
    pub fn new(max_keys: u64) -> Self {
        let epoch = Instant::now();
        MemoryRateLimitStore {
            windows: moka::sync::Cache::builder()
                .max_capacity(max_keys)
                .expire_after(Expire { epoch })
                .build(),
            values: moka::sync::Cache::builder()
                .max_capacity(max_keys)
                .expire_after(ExpireValue { epoch })
                .build(),
            epoch,
        }
    }

    /// Now on the counters' clock; never `0` ("never"), so that a store made this
    /// millisecond counts as every other.
    fn now(&self) -> u64 {
        capped_millis(self.epoch.elapsed()).saturating_add(1)
    }

    /// Keys held now (after pending evictions), for tests and metrics.
    pub fn len(&self) -> u64 {
        self.windows.run_pending_tasks();
        self.windows.entry_count()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl RateLimitStore for MemoryRateLimitStore {
    async fn count(&self, key: &str, limit: &RateLimit) -> Result<Option<Duration>, BoxError> {
        let now = self.now();
        let mut refused = None;
        self.windows.entry_by_ref(key).and_compute_with(|entry| {
            let current = entry.map(|e| e.into_value()).unwrap_or_default();
            let (next, r) = current.count(limit, now);
            refused = r;
            moka::ops::compute::Op::Put(next)
        });
        Ok(refused)
    }

    async fn give_back(&self, key: &str) -> Result<(), BoxError> {
        self.windows.entry_by_ref(key).and_compute_with(|entry| {
            match entry.map(|e| e.into_value()) {
                Some(c) if c.count > 0 => moka::ops::compute::Op::Put(c.give_back()),
                _ => moka::ops::compute::Op::Nop,
            }
        });
        Ok(())
    }

    async fn reset(&self, key: &str) -> Result<(), BoxError> {
        self.windows.invalidate(key);
        Ok(())
    }

    async fn lockout_left(&self, key: &str) -> Result<Option<Duration>, BoxError> {
        Ok(self.windows.get(key).and_then(|c| c.locked_at(self.now())))
    }

    async fn put_value(&self, key: &str, value: &str, ttl: Duration) -> Result<(), BoxError> {
        let ends = self.now().saturating_add(capped_millis(ttl));
        self.values.insert(key.to_owned(), (value.to_owned(), ends));
        Ok(())
    }

    async fn get_value(&self, key: &str) -> Result<Option<String>, BoxError> {
        let now = self.now();
        Ok(self
            .values
            .get(key)
            .filter(|(_, ends)| *ends > now)
            .map(|(v, _)| v))
    }

    /// One step of the cache's per-key compute.
    async fn put_value_if_absent(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        use moka::ops::compute::{CompResult, Op};
        let now = self.now();
        let ends = now.saturating_add(capped_millis(ttl));
        let result = self
            .values
            .entry_by_ref(key)
            .and_compute_with(|held| match held {
                Some(entry) if entry.value().1 > now => Op::Nop,
                _ => Op::Put((value.to_owned(), ends)),
            });
        Ok(matches!(
            result,
            CompResult::Inserted(_) | CompResult::ReplacedWith(_)
        ))
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
    fn a_flood_of_distinct_keys_stays_within_the_bound() {
        let store = MemoryRateLimitStore::new(1_000);
        let limit = RateLimit::new(1, Duration::from_secs(3600));
        for i in 0..50_000 {
            let key = format!("client:{i}");
            let _ = block_on(store.count(&key, &limit)).unwrap();
            let _ = block_on(store.count(&key, &limit)).unwrap();
        }
        assert!(store.len() <= 1_000, "{} keys", store.len());
    }

    #[test]
    fn parallel_threads_get_exactly_the_limit_through() {
        let store = MemoryRateLimitStore::default();
        let limit = RateLimit::new(5, Duration::from_secs(60));
        let allowed = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| {
                    for _ in 0..25 {
                        if block_on(store.count("k", &limit)).unwrap().is_none() {
                            allowed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(allowed.into_inner(), 5);
    }

    #[test]
    fn a_window_starts_again_after_it_ends() {
        let limit = RateLimit::new(1, Duration::from_secs(10));
        let s = |secs: u64| 1_000 + secs * 1_000;
        let (c, r) = Counter::default().count(&limit, s(0));
        assert_eq!((c.count, r), (1, None));
        let (c2, r) = c.count(&limit, s(11));
        assert_eq!((c2.count, r), (1, None));
        let (locked, r) = c2.count(&limit, s(12));
        assert_eq!(r, Some(Duration::from_secs(10)));
        let (same, r) = locked.count(&limit, s(21));
        assert_eq!((same, r), (locked, Some(Duration::from_secs(1))));
        let (after, r) = locked.count(&limit, s(23));
        assert_eq!((after.count, r), (1, None));
        assert_eq!(after.give_back().give_back().count, 0);
        assert_eq!(locked.expires(), s(22));
    }

    #[test]
    fn huge_windows_and_lockouts_do_not_overflow() {
        let store = MemoryRateLimitStore::default();
        let limit = RateLimit::new(1, Duration::MAX).lockout(Duration::MAX);
        assert_eq!(block_on(store.count("k", &limit)).unwrap(), None);
        assert!(block_on(store.count("k", &limit)).unwrap().is_some());
        assert!(block_on(store.lockout_left("k")).unwrap().is_some());
    }

    #[test]
    fn subjects_enter_keys_hashed() {
        let a = subject_key(&["limit", "x"], "demo");
        let b = subject_key(&["limit", "x"], "demo:lock");
        assert_ne!(a, b);
        assert!(a.starts_with("limit:x:") && a.len() == "limit:x:".len() + 64);
        assert!(!b.contains("lock"));
        // The keys stores already hold stay the keys: the parts joined by `:`, then the
        // hash (SHA-256 of "abc").
        assert_eq!(
            subject_key(&["mark", "revoked"], "abc"),
            "mark:revoked:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn clients_are_counted_by_ipv4_address_and_ipv6_64() {
        let subject = |ip: &str| client_subject(ip.parse().unwrap());
        for (ip, counted) in [
            ("192.0.2.1", "192.0.2.1"),
            ("::ffff:192.0.2.1", "192.0.2.1"),
            ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
            ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
            (
                "2001:0DB8:0001:0002:abcd:ef01:2345:6789",
                "2001:db8:1:2::/64",
            ),
            ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
            ("::1", "::/64"),
            ("fe80::1", "fe80::/64"),
        ] {
            assert_eq!(subject(ip), counted, "{ip}");
        }
    }

    #[test]
    fn recommended_limits_are_all_on() {
        let r = RateLimits::recommended();
        assert!(r.any());
        assert!(!RateLimits::default().any());
        assert_eq!(r.credentials_per_identifier.map(|l| l.limit()), Some(5));
    }
}
