//! Single-use values and marks ([`SingleUseStore`]): what OAuth codes, refresh claims,
//! TOTP steps, passkey challenges, logout tokens and an OpenID Provider's codes, refresh
//! tokens and revocations are checked against.

use std::time::Duration;

use super::{RateLimit, RateLimitStore, subject_key};
use crate::adapter::{AdapterError, AdapterUser, AppAccess, AppAccessStore};
use crate::box_error::BoxError;

/// The single-use store of a configuration
/// ([`AuthConfig::single_use`](crate::AuthConfig::single_use)): values that may be
/// used once within a time ([`first_use`](SingleUseStore::first_use)), and marks that say
/// something was revoked ([`mark`](SingleUseStore::mark)). It lives in a
/// [`RateLimitStore`]: this process's, or the one instances share
/// ([`single_use_store`](crate::AuthConfigBuilder::single_use_store), else the
/// `rate_limit_store`), whose atomic count makes each use and each mark. Only a hash of a
/// value is kept.
#[derive(Clone, Copy, Debug)]
pub struct SingleUseStore<'a> {
    store: &'a dyn RateLimitStore,
}

impl<'a> SingleUseStore<'a> {
    /// The single-use values and marks kept in `store`.
    pub fn new(store: &'a dyn RateLimitStore) -> Self {
        SingleUseStore { store }
    }

    /// Marks `value` of `kind` as used; `false` when it was used already within `ttl` (by
    /// this process or, with a shared store, by any instance). A failing store lets the
    /// value through (and logs), as the rate limits do.
    pub async fn first_use(&self, kind: &str, value: &str, ttl: Duration) -> bool {
        match self.first_use_checked(kind, value, ttl).await {
            Ok(first) => first,
            Err(e) => {
                tracing::error!(error = %e, kind, "single-use store failed");
                true
            }
        }
    }

    /// [`first_use`](SingleUseStore::first_use) that fails closed: an error when the store
    /// cannot say, for a caller that would rather refuse than let a replay through (an
    /// OpenID Provider's codes and refresh tokens).
    pub async fn first_use_checked(
        &self,
        kind: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        let key = subject_key(&["used", kind], value);
        let over = self
            .store
            .count(&key, &RateLimit::new(1, ttl).lockout(ttl))
            .await?;
        Ok(over.is_none())
    }

    /// Marks `value` of `kind` (a revoked token's id) for `ttl`;
    /// [`is_marked`](SingleUseStore::is_marked) reads it. A mark is a lock-out: the second
    /// event over a limit of one locks the key.
    pub async fn mark(&self, kind: &str, value: &str, ttl: Duration) -> Result<(), BoxError> {
        let key = mark_key(kind, value);
        let limit = RateLimit::new(1, ttl).lockout(ttl);
        self.store.count(&key, &limit).await?;
        self.store.count(&key, &limit).await?;
        Ok(())
    }

    /// Whether `value` of `kind` is marked ([`mark`](SingleUseStore::mark)); an error when
    /// the store cannot say (a shared store that is down: the caller decides, and should
    /// refuse).
    pub async fn is_marked(&self, kind: &str, value: &str) -> Result<bool, BoxError> {
        let key = mark_key(kind, value);
        Ok(self.store.lockout_left(&key).await?.is_some())
    }

    /// Whether any of `marks` (each a kind and a value) is marked
    /// ([`is_marked`](SingleUseStore::is_marked) of each, read together where the store can);
    /// an error when the store cannot say.
    pub async fn any_marked(&self, marks: &[(&str, &str)]) -> Result<bool, BoxError> {
        let keys: Vec<String> = marks
            .iter()
            .map(|(kind, value)| mark_key(kind, value))
            .collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.store.any_locked(&keys).await
    }

    /// The user `user_id` with their access for `client_id`, unless either of `marks` is
    /// marked: `None` when one is, or when there is no such user (for a user's access token,
    /// both mean it stands no longer). One read where `access` keeps its rows in the
    /// database this store keeps its marks in
    /// ([`AppAccessStore::get_user_with_app_access_unless_locked`]);
    /// [`AdapterError::Unsupported`] where it does not, for the caller to read the marks
    /// ([`any_marked`](SingleUseStore::any_marked)) and then the user.
    pub async fn user_with_app_access_unless_marked(
        &self,
        access: &dyn AppAccessStore,
        user_id: &str,
        client_id: &str,
        marks: [(&str, &str); 2],
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
        let Some(database) = self.store.database() else {
            return Err(AdapterError::Unsupported("RateLimitStore::database"));
        };
        let [first, second] = marks.map(|(kind, value)| mark_key(kind, value));
        access
            .get_user_with_app_access_unless_locked(user_id, client_id, database, [&first, &second])
            .await
    }

    /// Counts one attempt of `kind` by `subject` under `limit` (guessing guarded as the
    /// rate limits guard sign-ins): `None` when it is allowed, the time until the next may
    /// be made when it is not; an error when the store cannot say.
    pub async fn attempt(
        &self,
        kind: &str,
        subject: &str,
        limit: &RateLimit,
    ) -> Result<Option<Duration>, BoxError> {
        let key = subject_key(&["attempt", kind], subject);
        self.store.count(&key, limit).await
    }

    /// Gives back an attempt counted by [`attempt`](SingleUseStore::attempt) that turned
    /// out to be no guess (a code that was right); an error when the store cannot say.
    pub async fn give_back_attempt(&self, kind: &str, subject: &str) -> Result<(), BoxError> {
        let key = subject_key(&["attempt", kind], subject);
        self.store.give_back(&key).await
    }

    /// Keeps `value` for `ttl` under `id` of `kind`, replacing what was there (state that
    /// instances sharing the store must all see: an OpenID Provider's pending device
    /// authorizations). Only a hash of `id` is kept; `value` is kept as given. An error
    /// when the store cannot keep it (or keeps no values).
    pub async fn put(
        &self,
        kind: &str,
        id: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<(), BoxError> {
        let key = value_key(kind, id);
        self.store.put_value(&key, value, ttl).await
    }

    /// [`put`](SingleUseStore::put), only when `id` of `kind` holds no unexpired value:
    /// `true` when `value` was kept; of concurrent calls for one `id`, one keeps its
    /// value. An error when the store cannot say.
    pub async fn put_new(
        &self,
        kind: &str,
        id: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, BoxError> {
        let key = value_key(kind, id);
        self.store.put_value_if_absent(&key, value, ttl).await
    }

    /// The unexpired value under `id` of `kind` ([`put`](SingleUseStore::put)); an error
    /// when the store cannot say.
    pub async fn get(&self, kind: &str, id: &str) -> Result<Option<String>, BoxError> {
        let key = value_key(kind, id);
        self.store.get_value(&key).await
    }
}

/// The store key of the value kept under `id` of `kind` (only a hash of `id`).
fn value_key(kind: &str, id: &str) -> String {
    subject_key(&["value", kind], id)
}

/// The store key of the mark of `value` of `kind`.
fn mark_key(kind: &str, value: &str) -> String {
    subject_key(&["mark", kind], value)
}
