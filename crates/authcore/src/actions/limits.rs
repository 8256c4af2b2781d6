//! The rate limits of [`crate::ratelimit`] applied to a request: keys, checks, counts.

use std::time::Duration;

use super::Ctx;
use crate::callbacks::RateLimitedEvent;
use crate::config::ConfigInner;
use crate::error::AuthError;
use crate::ratelimit::{RateLimit, RateLimitStore, RateLimits, subject_key};

/// One of the limits of [`RateLimits`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    CredentialsPerIdentifier,
    CredentialsPerClient,
    EmailsPerAddress,
    EmailsPerClient,
    RequestsPerClient,
    /// Failed second-step attempts per user ([`crate::two_factor`]); always on with second
    /// factors.
    #[cfg(feature = "two-factor")]
    SecondFactorPerUser,
    /// Failed second-step attempts per client.
    #[cfg(feature = "two-factor")]
    SecondFactorPerClient,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::CredentialsPerIdentifier => "credentials_per_identifier",
            Limit::CredentialsPerClient => "credentials_per_client",
            Limit::EmailsPerAddress => "emails_per_address",
            Limit::EmailsPerClient => "emails_per_client",
            Limit::RequestsPerClient => "requests_per_client",
            #[cfg(feature = "two-factor")]
            Limit::SecondFactorPerUser => "second_factor_per_user",
            #[cfg(feature = "two-factor")]
            Limit::SecondFactorPerClient => "second_factor_per_client",
        }
    }

    fn of(self, config: &ConfigInner) -> Option<RateLimit> {
        let limits: &RateLimits = &config.rate_limits;
        match self {
            Limit::CredentialsPerIdentifier => limits.credentials_per_identifier,
            Limit::CredentialsPerClient => limits.credentials_per_client,
            Limit::EmailsPerAddress => limits.emails_per_address,
            Limit::EmailsPerClient => limits.emails_per_client,
            Limit::RequestsPerClient => limits.requests_per_client,
            #[cfg(feature = "two-factor")]
            Limit::SecondFactorPerUser => config.two_factor.as_ref().map(|t| t.attempts_per_user),
            #[cfg(feature = "two-factor")]
            Limit::SecondFactorPerClient => {
                config.two_factor.as_ref().map(|t| t.attempts_per_client)
            }
        }
    }

    /// Where the limit counts: the rate-limit store; second factors, which are limited
    /// whether or not other limits are on, fall back to the single-use store (this
    /// process's, or the shared one).
    fn store(self, config: &ConfigInner) -> Option<&dyn RateLimitStore> {
        match (self, &config.rate_limit_store) {
            (_, Some(store)) => Some(&**store),
            #[cfg(feature = "two-factor")]
            (Limit::SecondFactorPerUser | Limit::SecondFactorPerClient, None) => {
                Some(&*config.single_use_store)
            }
            _ => None,
        }
    }

    /// Whether the subject is the client address (else an identifier from the request).
    fn per_client(self) -> bool {
        match self {
            Limit::CredentialsPerClient | Limit::EmailsPerClient | Limit::RequestsPerClient => true,
            #[cfg(feature = "two-factor")]
            Limit::SecondFactorPerClient => true,
            _ => false,
        }
    }
}

/// The store key for `limit` and `subject` (an identifier as counted, or a client
/// address), with its rule; `None` when the limit is off. The subject enters the key
/// hashed ([`subject_key`]), so no identifier can name another key.
fn key(config: &ConfigInner, limit: Limit, subject: &str) -> Option<(String, RateLimit)> {
    let rule = limit.of(config)?;
    Some((subject_key(&["limit", limit.name()], subject), rule))
}

/// Counts an attempt of `subject` (a user id, a
/// [`client_subject`](crate::ratelimit::client_subject)) under `limit` outside a request's
/// action (the account routes' code checks and their per-client limit):
/// `Err(retry_after)` when it is over. A failing store lets it through (and logs).
pub(crate) async fn count(
    config: &ConfigInner,
    limit: Limit,
    subject: &str,
) -> Result<(), Duration> {
    let (Some(store), Some((key, rule))) = (limit.store(config), key(config, limit, subject))
    else {
        return Ok(());
    };
    match store.count(&key, &rule).await {
        Ok(Some(left)) => {
            crate::telemetry::rate_limited(limit.name());
            Err(left)
        }
        Ok(None) => Ok(()),
        Err(e) => {
            tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
            Ok(())
        }
    }
}

/// Forgets `subject`'s count under `limit` (a success).
pub(crate) async fn reset(config: &ConfigInner, limit: Limit, subject: &str) {
    if let (Some(store), Some((key, _))) = (limit.store(config), key(config, limit, subject))
        && let Err(e) = store.reset(&key).await
    {
        tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
    }
}

/// Gives back an attempt of `subject` counted by [`count`] that turned out not to count.
pub(crate) async fn give_back(config: &ConfigInner, limit: Limit, subject: &str) {
    if let (Some(store), Some((key, _))) = (limit.store(config), key(config, limit, subject))
        && let Err(e) = store.give_back(&key).await
    {
        tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
    }
}

/// An identifier as it is counted: trimmed, lower case.
fn normalize_identifier(identifier: &str) -> String {
    identifier.trim().to_lowercase()
}

impl Ctx<'_> {
    /// Where `limit` counts, the store key for `identifier` (ignored for per-client limits)
    /// and the rule; `None` when the limit is off or has no subject. The subject is made
    /// (the client's [`client_subject`](crate::ratelimit::client_subject), the identifier
    /// normalised and hashed) only for a limit that is on: with limits off a request pays
    /// nothing here.
    fn counted(
        &self,
        limit: Limit,
        identifier: Option<&str>,
    ) -> Option<(&dyn RateLimitStore, String, RateLimit)> {
        let store = limit.store(self.config)?;
        limit.of(self.config)?;
        let subject = if limit.per_client() {
            crate::ratelimit::client_subject(self.req.client?)
        } else {
            normalize_identifier(identifier?)
        };
        let (key, rule) = key(self.config, limit, &subject)?;
        Some((store, key, rule))
    }

    /// The refusal: counted, told to the `rateLimited` event, and the error to answer with
    /// (the caller's error path logs it).
    async fn limited(
        &self,
        limit: Limit,
        identifier: Option<&str>,
        retry_after: Duration,
    ) -> AuthError {
        crate::telemetry::rate_limited(limit.name());
        let subject = identifier
            .filter(|_| !limit.per_client())
            .map(normalize_identifier);
        let event = RateLimitedEvent {
            limit: limit.name(),
            identifier: subject.as_deref(),
            client: self.req.client,
            retry_after,
        };
        let r = self.config.events.rate_limited(event).await;
        self.event_result("rateLimited", r);
        // One record per lock-out, not per refused request: a flood of refused attempts
        // costs the audit log nothing more.
        let locked = format!(
            "{}:{}",
            limit.name(),
            subject
                .clone()
                .or_else(|| self.req.client.map(crate::ratelimit::client_subject))
                .unwrap_or_default()
        );
        if self.config.auditor.is_on()
            && self
                .first_use(
                    "audit-locked-out",
                    &locked,
                    retry_after.max(Duration::from_secs(1)),
                )
                .await
        {
            self.audit(|| {
                crate::audit::AuditEvent::new("lockedOut")
                    .with("limit", limit.name())
                    .with("identifier", subject.clone())
                    .with("retryAfterSeconds", retry_after.as_secs())
            })
            .await;
        }
        AuthError::RateLimited {
            limit: limit.name(),
            retry_after,
        }
    }

    /// Reserves one attempt under `limit` before the work it guards (counted in one atomic
    /// step with the lock check); fails with `RateLimited` when the subject is locked or
    /// this attempt went over the limit. A failing store lets the attempt through (and
    /// logs): an outage must not stop every sign-in.
    pub(crate) async fn count_attempt(
        &self,
        limit: Limit,
        identifier: Option<&str>,
    ) -> Result<(), AuthError> {
        let Some((store, key, rule)) = self.counted(limit, identifier) else {
            return Ok(());
        };
        match store.count(&key, &rule).await {
            // Boxed: the refusal's future (its log line and audit record) is large and
            // rare; every request's future would otherwise carry its size.
            Ok(Some(left)) => Err(Box::pin(self.limited(limit, identifier, left)).await),
            Ok(None) => Ok(()),
            Err(e) => {
                tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
                Ok(())
            }
        }
    }

    /// Gives back an attempt reserved by [`Ctx::count_attempt`] that turned out not to
    /// count (a success against a failure limit, an error of the check itself).
    pub(crate) async fn give_back(&self, limit: Limit, identifier: Option<&str>) {
        if let Some((store, key, _)) = self.counted(limit, identifier)
            && let Err(e) = store.give_back(&key).await
        {
            tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
        }
    }

    /// Marks `value` of `kind` as used; `false` when it was already used within `ttl` (by
    /// this process or, with a shared store, by any instance). Only a hash of the value is
    /// stored. A failing store lets the value through (and logs), as the limits do.
    pub(crate) async fn first_use(&self, kind: &str, value: &str, ttl: Duration) -> bool {
        self.config.single_use().first_use(kind, value, ttl).await
    }

    /// Forgets the subject's count (a success).
    pub(crate) async fn reset_limit(&self, limit: Limit, identifier: Option<&str>) {
        if let Some((store, key, _)) = self.counted(limit, identifier)
            && let Err(e) = store.reset(&key).await
        {
            tracing::error!(error = %e, limit = limit.name(), "rate-limit store failed");
        }
    }
}
