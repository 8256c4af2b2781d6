//! Refresh-token rotation: keeping a signed-in account's access token fresh with the
//! provider's token endpoint (`grant_type=refresh_token`), which Auth.js leaves to a recipe.
//!
//! One refresh per refresh token: concurrent session reads in one process share one token
//! request (a shared future per refresh token, kept a minute so that requests still
//! carrying the old token get the same answer), and instances sharing a single-use store
//! (Redis) claim the refresh token there first, so a rotating refresh token is never sent
//! twice. A read that loses the claim to another instance keeps the tokens it has.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;

use super::flow::{self, Grant};
use crate::http_client::HttpClient;
use crate::oauth::OAuthError;
pub(crate) use crate::oauth::{REFRESH_WINDOW, RefreshFailure, RefreshResult};
use crate::providers::OAuthProvider;
use crate::ratelimit::RateLimitStore;
use crate::types::TokenSet;

/// How [`OAuthProvider::refresh_access_token`] refreshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RefreshSettings {
    /// Refresh this long before `expires_at`.
    pub margin: Duration,
}

/// Puts an account's tokens into session-token claims, under the names of Auth.js's
/// refresh-token recipe (`access_token`, `expires_at`, `refresh_token`) and the provider's
/// id (`provider`); a missing value removes its claim.
pub(crate) fn put_tokens(
    claims: &mut crate::jwt::JwtClaims,
    provider: &str,
    access_token: Option<&str>,
    expires_at: Option<i64>,
    refresh_token: Option<&str>,
) {
    use serde_json::Value;
    claims.insert("provider".into(), provider.into());
    for (name, value) in [
        ("access_token", access_token.map(Value::from)),
        ("expires_at", expires_at.map(Value::from)),
        ("refresh_token", refresh_token.map(Value::from)),
    ] {
        match value {
            Some(v) => claims.insert(name.into(), v),
            None => claims.remove(name),
        };
    }
}

/// Whether an access token expiring at `expires_at` (seconds) needs refreshing at `now`.
pub(crate) fn is_due(expires_at: Option<i64>, now: i64, margin: Duration) -> bool {
    let margin = i64::try_from(margin.as_secs()).unwrap_or(i64::MAX);
    expires_at.is_some_and(|at| at.saturating_sub(margin) <= now)
}

/// The hex SHA-256 of a refresh token: the key of its flight and claim (the token itself
/// is never stored).
fn token_hash(refresh_token: &str) -> String {
    crate::crypto::sha256_hex(refresh_token.as_bytes())
}

/// New tokens for `refresh_token` of provider `p`, sharing the token request with every
/// concurrent caller of this process and claiming it in `claims` (the single-use store)
/// against other instances. A refresh response without a refresh token keeps the old one
/// (the provider does not rotate).
pub(crate) async fn refresh(
    p: &OAuthProvider,
    claims: Arc<dyn RateLimitStore>,
    refresh_token: &str,
) -> RefreshResult {
    let key = token_hash(refresh_token);
    let flight = p.caches.refreshes.get_with(key.clone(), || {
        let p = p.clone();
        let refresh_token = refresh_token.to_owned();
        async move {
            if !crate::ratelimit::SingleUseStore::new(&*claims)
                .first_use("oauth_refresh", &key, REFRESH_WINDOW)
                .await
            {
                return Err(RefreshFailure::ClaimedElsewhere);
            }
            let mut tokens = request(&p, &refresh_token)
                .await
                .map_err(|e| RefreshFailure::Failed(e.to_string().into()))?;
            if tokens.refresh_token.is_none() {
                tokens.refresh_token = Some(refresh_token);
            }
            Ok(tokens)
        }
        .boxed()
        .shared()
    });
    flight.await
}

/// One refresh-token grant at the provider's token endpoint.
async fn request(p: &OAuthProvider, refresh_token: &str) -> Result<TokenSet, OAuthError> {
    let client: Arc<dyn HttpClient> = p.client();
    let endpoints = flow::resolve_endpoints(p, &*client).await?;
    let token_endpoint = endpoints
        .token
        .as_deref()
        .ok_or_else(|| OAuthError::InvalidResponse {
            step: "discovery",
            reason: "no token_endpoint".into(),
        })?;
    let req = flow::token_request(
        p,
        endpoints.issuer.as_deref(),
        token_endpoint,
        Grant::Refresh { refresh_token },
    )?;
    let resp = client.send(req).await.map_err(|e| OAuthError::Http {
        step: "token",
        reason: e.to_string(),
    })?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    flow::process_token_response(p, resp.status().as_u16(), resp.body(), now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_within_the_margin_and_never_without_an_expiry() {
        let minute = Duration::from_secs(60);
        assert!(is_due(Some(1_000), 1_000, Duration::ZERO));
        assert!(is_due(Some(1_059), 1_000, minute));
        assert!(!is_due(Some(1_061), 1_000, minute));
        assert!(!is_due(None, 1_000, minute));
        assert!(is_due(Some(i64::MIN), 0, Duration::MAX));
    }
}
