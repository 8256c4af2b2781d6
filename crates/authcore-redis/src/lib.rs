//! # authcore-redis
//!
//! A Redis [`Adapter`](authcore::adapter::Adapter) for `authcore`: users, accounts,
//! database sessions, verification (magic link) tokens and WebAuthn authenticators, with
//! the key layout of Auth.js's `@auth/upstash-redis-adapter`.
//!
//! ```no_run
//! use authcore::adapter::{Adapter, NewUser};
//! use authcore_redis::RedisAdapter;
//!
//! # async fn demo() -> Result<(), authcore::adapter::AdapterError> {
//! let adapter = RedisAdapter::connect("redis://127.0.0.1:6379/")
//!     .await?
//!     .with_prefix("myapp:");
//! let user = adapter
//!     .create_user(NewUser { email: Some("ada@example.com".into()), ..Default::default() })
//!     .await?;
//! assert!(adapter.get_user(&user.id).await?.is_some());
//! # Ok(())
//! # }
//! ```
//!
//! The adapter holds a [`redis` `ConnectionManager`][cm]: one multiplexed connection,
//! re-established after a failure (a call that fails meanwhile returns
//! [`AdapterError::Backend`]). Clones share it.
//! A single Redis server (or a primary with replicas) is supported, not Redis Cluster: the
//! multi-key operations run as Lua scripts that touch keys they read from index sets.
//! Redis 6.2 or newer is needed (`GETDEL`, `SET … PXAT`).
//!
//! [cm]: https://docs.rs/redis/latest/redis/aio/struct.ConnectionManager.html
//!
//! ## Key layout
//!
//! Every key starts with the configurable prefix ([`RedisAdapter::with_prefix`], upstream's
//! `baseKeyPrefix`, default empty). Records are JSON with the Auth.js field names
//! (`emailVerified`, `providerAccountId`, `sessionToken`, `credentialID` …); dates are RFC
//! 3339 strings.
//!
//! | Key | Type | Value | Expiry |
//! |---|---|---|---|
//! | `user:<id>` | string | user JSON (`id`, `name`, `email`, `emailVerified`, `image`) | none |
//! | `user:email:<email>` | string | the user id (email uniqueness, claimed with `SET NX`) | none |
//! | `user:account:<provider>:<providerAccountId>` | string | account JSON (`userId`, `type`, `provider`, `providerAccountId`, tokens …), claimed with `SET NX` | none |
//! | `user:account:by-user-id:<userId>` | set | keys of the user's accounts | none |
//! | `user:session:<sessionToken>` | string | session JSON (`sessionToken`, `userId`, `expires`) | at `expires` |
//! | `user:session:by-user-id:<userId>` | set | keys of the user's sessions (dead members pruned on the next `createSession`) | none |
//! | `user:token:<identifier>:<token>` | string | verification token JSON (`identifier`, `token`, `expires`) | at `expires` |
//! | `user:token-index:<identifier>` | set | keys of the identifier's tokens (`deleteUser` deletes them) | at the newest token's `expires` |
//! | `user:jwt-revocation:<userId>` | string | the user's JWT revocation (`before`, `keep`) | none |
//! | `user:two-factor:<userId>` | string | the user's TOTP second factor (`totpSecret` sealed, `totpConfirmedAt`) | none |
//! | `user:recovery-codes:<userId>` | set | SHA-256 of the user's unused recovery codes | none |
//! | `user:password:<userId>` | string | the user's password hash (a PHC string), replaced by compare-and-set on rehash | none |
//! | `user:groups:<userId>` | string | the user's groups from a user source, a JSON array in the order given | none |
//! | `user:app-access:<userId>` | string | access granted to applications: an object by client id of (`clientName`, `scopes`, `createdAt`, `updatedAt`, `epoch`), changed by compare-and-set | none |
//! | `user:authenticator:<credentialID>` | string | authenticator JSON (`credentialID`, `userId`, `providerAccountId`, `counter` …), claimed with `SET NX` | none |
//! | `user:authenticator:by-user-id:<userId>` | set | keys of the user's authenticators | none |
//! | `org:<id>` | string | organization JSON (`id`, `slug`, `name`, `createdAt`) | none |
//! | `org:slug:<slug>` | string | the organization id (slug uniqueness, claimed with `SET NX`, moved by compare-and-set on update) | none |
//! | `org:members:<organizationId>` | hash | user id → member JSON (`organizationId`, `userId`, `roles`, `teams`, `createdAt`) | none |
//! | `org:owners:<organizationId>` | set | user ids of the members with the `owner` role (read in the scripts that keep an owner) | none |
//! | `org:by-user-id:<userId>` | set | ids of the organizations the user is a member of | none |
//! | `org:teams:<organizationId>` | hash | team id → team JSON (`id`, `organizationId`, `name`, `createdAt`) | none |
//! | `org:team-names:<organizationId>` | hash | team name → team id (name uniqueness in the organization) | none |
//! | `org:active:by-user-id:<userId>` | hash | key of a session of the user → the session's active organization id (entries of sessions that are gone dropped on the user's next choice) | none |
//! | `invitation:<id>` | string | invitation JSON (`organizationId`, `email`, `roles`, `teams`, `inviterId`, `tokenHash`, `createdAt`, `expires`, `status`, and `userId`, `at` once accepted or revoked) | none |
//! | `invitation:token:<tokenHash>` | string | the invitation id (claimed with `SET NX`) | none |
//! | `invitation:by-org-id:<organizationId>` | set | keys of the organization's invitations | none |
//! | `invitation:sign-up:index` | set | keys of the invitations to sign up only | none |
//! | `invitation:by-email:<email>` | set | keys of the address's pending invitations | none |
//! | `api-key:<id>` | string | API key JSON (`id`, `hash`, `name`, `userId`, `organizationId`, `permissions`, `createdAt`, `expires`, `lastUsedAt`, `revokedAt`) | none |
//! | `api-key:by-user-id:<userId>` | set | keys of the API keys the user made (their own and their organizations') | none |
//! | `api-key:by-org-id:<organizationId>` | set | keys of the organization's API keys | none |
//! | `user:ban:<userId>` | string | the user's ban JSON (`reason`, `at`, `until`, `by`) | none |
//! | `user-index` | sorted set | every user id, score 0 (ordered by id), read by the directory's search; users written before it existed are added by the first search (`user-index:complete` then set) | none |
//! | `audit-log` | sorted set | the audit records as JSON (`seq`, `at`, `kind`, `actor`, `target`, `data`, `prevHash`, `hash`), each scored by its `seq` (at most 2^53); an append whose `seq` is there is refused in the same script | none |
//!
//! Sessions and verification tokens are written with `SET … PXAT <expires>` (the
//! millisecond form of `EXPIREAT`), so Redis deletes them itself at their expiry; a session
//! or token whose `expires` has passed is therefore never returned.
//!
//! Organizations, their members, teams and invitations, and API keys are beyond Auth.js
//! (its adapters have none). The writes that must be atomic run as one script each:
//! creating an organization with its slug and first member, changing or removing a member
//! (the owners set is read in the same script, so of concurrent changes none leaves the
//! organization without an owner), accepting an invitation (once, with the new member),
//! deleting a team (out of its members' teams), an organization (with its members, teams,
//! invitations, API keys and the sessions' choice of it) or a user (with their
//! memberships, API keys, ban and place in the user index). The directory's search reads
//! the user index a batch at a time and filters the users in the adapter (text, provider,
//! organization); the audit log's query reads records a batch at a time by `seq` and
//! filters them the same way. Ids of organizations, invitations and API keys are the
//! caller's (UUIDs); one containing `:` is refused when storing and unknown when reading,
//! as user ids are. A member, organization or API key written for a user or organization
//! that does not exist fails with [`AdapterError::Backend`] (class `Data`), as a password
//! written for a missing user does.
//!
//! ### Differences from the upstream adapter
//!
//! * The `…:by-user-id:<userId>` indexes are **sets** (upstream stores one key in a string,
//!   so a user's second account or session replaced the first). Data written by the
//!   upstream adapter must be migrated before this adapter manages the same users.
//! * Verification tokens are keyed by identifier *and* token (upstream: identifier only, so
//!   a second sign-in email invalidated the first link).
//! * `deleteUser` also removes authenticators, and everything runs atomically.
//! * Key parts are not escaped, as upstream. Because user ids are UUIDs, an id containing
//!   `:` is treated as unknown; session tokens, provider ids and credential ids that would
//!   address an index key (`by-user-id…`) are treated as unknown; and records read back are
//!   checked against the names asked for, so a collision (only possible with `:` inside a
//!   provider id or identifier) can never return another user's record.
//!
//! ## Errors
//!
//! Redis failures, timeouts and stored records that do not decode become
//! [`AdapterError::Backend`] carrying a
//! [`RedisBackendError`]; its message names the operation and the failure class, never a
//! key, value or the URL. A second `linkAccount` or `createAuthenticator` for the same id,
//! a `createUser`/`updateUser` with an email another user has, an organization's slug in
//! use, a team name in use in the organization, and an organization, team, invitation
//! (or invitation token) or API key id in use are [`AdapterError::Conflict`].
//!
//! ## Outages
//!
//! Every Redis command of the adapter and of its [`RedisRateLimitStore`] passes one circuit
//! breaker ([`authcore::breaker`]), shared by the adapter's clones and the store made from
//! it. Commands that find Redis unreachable open it (a server error such as `WRONGTYPE`
//! does not): the [`TIMEOUTS_TO_OPEN`](authcore::breaker::TIMEOUTS_TO_OPEN)th failure in a
//! row that is a timeout, and the
//! [`CONNECTION_FAILURES_TO_OPEN`](authcore::breaker::CONNECTION_FAILURES_TO_OPEN)th I/O
//! error or dropped or refused connection in a row. While it is
//! open every call answers at once with [`AdapterError::Backend`] (class
//! [`BackendErrorKind::Connection`], `Redis unavailable …`) instead of waiting for the
//! connection's retries and timeouts, and a background task sends `PING` (bounded by the
//! connection and response timeouts), at once and then every
//! [`authcore::breaker::DEFAULT_PROBE_INTERVAL`] after a failure, until Redis answers,
//! which closes the breaker (a probe task dropped with its runtime is replaced by the next
//! command's). [`RedisAdapter::available`] says whether it is closed (for
//! readiness probes), and the gauge
//! [`authcore_store_available{store="redis"}`](authcore::telemetry::STORE_AVAILABLE)
//! follows it.
#![forbid(unsafe_code)]

mod adapter;
mod conn;
mod error;
mod keys;
mod ratelimit;
mod scripts;

use std::fmt;
use std::time::Duration;

use authcore::adapter::AdapterError;
use conn::Conn;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use error::{BackendErrorKind, RedisBackendError};
pub use ratelimit::RedisRateLimitStore;

use error::RedisBackendError as BackendError;
use keys::Keys;

/// Connection settings for [`RedisAdapter::connect_with`].
///
/// ```
/// use std::time::Duration;
/// let options = authcore_redis::ConnectOptions::default()
///     .connection_timeout(Duration::from_secs(2))
///     .response_timeout(Duration::from_secs(3))
///     .reconnect_attempts(4);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    connection_timeout: Duration,
    response_timeout: Duration,
    reconnect_attempts: usize,
    max_reconnect_delay: Duration,
}

impl Default for ConnectOptions {
    /// 5 s to connect, 5 s for a reply, 3 reconnection attempts at most 1 s apart.
    fn default() -> Self {
        ConnectOptions {
            connection_timeout: Duration::from_secs(5),
            response_timeout: Duration::from_secs(5),
            reconnect_attempts: 3,
            max_reconnect_delay: Duration::from_secs(1),
        }
    }
}

impl ConnectOptions {
    /// How long one connection attempt may take.
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// How long a call waits for Redis to answer before it fails.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// How many times a lost connection is retried (with exponential back-off) before the
    /// waiting calls fail; the next call starts over.
    pub fn reconnect_attempts(mut self, attempts: usize) -> Self {
        self.reconnect_attempts = attempts;
        self
    }

    /// The longest pause between two reconnection attempts.
    pub fn max_reconnect_delay(mut self, delay: Duration) -> Self {
        self.max_reconnect_delay = delay;
        self
    }

    /// The bound on one background probe of the circuit breaker: a connection attempt and
    /// a reply.
    fn probe_timeout(&self) -> Duration {
        self.connection_timeout
            .saturating_add(self.response_timeout)
    }

    fn manager_config(&self) -> ConnectionManagerConfig {
        ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.connection_timeout))
            .set_response_timeout(Some(self.response_timeout))
            .set_number_of_retries(self.reconnect_attempts)
            .set_max_delay(self.max_reconnect_delay)
    }
}

/// The Redis adapter. Cheap to clone; clones share the connection and the prefix.
#[derive(Clone)]
pub struct RedisAdapter {
    conn: Conn,
    keys: Keys,
}

impl fmt::Debug for RedisAdapter {
    // The URL may carry a password; only the prefix is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisAdapter")
            .field("prefix", &self.keys.prefix())
            .finish_non_exhaustive()
    }
}

impl RedisAdapter {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]`, or
    /// `redis+unix:///path`) with the default [`ConnectOptions`], failing if Redis cannot
    /// be reached now. Must be called inside a Tokio runtime.
    pub async fn connect(url: &str) -> Result<Self, AdapterError> {
        Self::connect_with(url, ConnectOptions::default()).await
    }

    /// [`connect`](Self::connect) with explicit settings.
    pub async fn connect_with(url: &str, options: ConnectOptions) -> Result<Self, AdapterError> {
        let client = open_client(url)?;
        let conn = ConnectionManager::new_with_config(client, options.manager_config())
            .await
            .map_err(|e| BackendError::from_redis("connect", &e))?;
        Ok(RedisAdapter {
            conn: Conn::new(conn, options.probe_timeout()),
            keys: Keys::default(),
        })
    }

    /// Like [`connect_with`](Self::connect_with) but without connecting now: the first call
    /// connects, and fails with [`AdapterError::Backend`] while Redis is unreachable. Lets a
    /// service start before its Redis. Must be called inside a Tokio runtime (else an
    /// error is returned).
    pub fn connect_lazy(url: &str, options: ConnectOptions) -> Result<Self, AdapterError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(BackendError::new(
                BackendErrorKind::Config,
                "connect",
                "no Tokio runtime is running".into(),
            )
            .into());
        }
        let client = open_client(url)?;
        let conn = ConnectionManager::new_lazy_with_config(client, options.manager_config())
            .map_err(|e| BackendError::from_redis("connect", &e))?;
        Ok(RedisAdapter {
            conn: Conn::new(conn, options.probe_timeout()),
            keys: Keys::default(),
        })
    }

    /// Puts every key under `prefix` (upstream's `baseKeyPrefix`), e.g. `"myapp:"`.
    pub fn with_prefix(mut self, prefix: impl AsRef<str>) -> Self {
        self.keys = Keys::new(prefix.as_ref());
        self
    }

    /// The key prefix in use (empty by default).
    pub fn prefix(&self) -> &str {
        self.keys.prefix()
    }

    /// Whether Redis is taken to answer: `false` while the circuit breaker is open (see
    /// *Outages* in the crate documentation), for readiness probes. Answers at once.
    pub fn available(&self) -> bool {
        self.conn.available()
    }
}

fn open_client(url: &str) -> Result<redis::Client, AdapterError> {
    redis::Client::open(url).map_err(|e| {
        // The parse error may quote the URL, which may hold a password.
        BackendError::new(
            BackendErrorKind::Config,
            "connect",
            format!("invalid Redis URL ({})", e.category()),
        )
        .into()
    })
}

/// The README's examples, compiled as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
