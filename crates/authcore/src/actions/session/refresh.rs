//! Access-token refresh on session reads (Auth.js's refresh-token recipe,
//! <https://authjs.dev/guides/refresh-token-rotation>), for OAuth providers configured with
//! [`OAuthProvider::refresh_access_token`](crate::providers::OAuthProvider::refresh_access_token).

use serde_json::Value;
use time::OffsetDateTime;

use super::REFRESH_TOKEN_ERROR;
use crate::config::ConfigInner;
use crate::error::{AuthError, BoxError};
use crate::providers::Provider;
use crate::providers::oauth::refresh::{self, RefreshFailure};

/// The provider of an account's tokens, when it refreshes them
/// ([`OAuthProvider::refresh_access_token`]) and the access token expiring at `expires_at`
/// is due, with the refresh token to use.
///
/// [`OAuthProvider::refresh_access_token`]: crate::providers::OAuthProvider::refresh_access_token
fn due_refresh<'c, 't>(
    config: &'c ConfigInner,
    provider: Option<&str>,
    refresh_token: Option<&'t str>,
    expires_at: Option<i64>,
) -> Option<(&'c crate::providers::OAuthProvider, &'t str)> {
    let Some(Provider::OAuth(p)) = provider.and_then(|id| config.provider(id)) else {
        return None;
    };
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let due = refresh::is_due(expires_at, now, p.refresh?.margin);
    due.then_some((&**p, refresh_token?))
}

/// [`refresh::refresh`] with the single-use store of the configuration; a failure is logged.
/// Callers box it: the token request's future is large and rarely due, and inlined it would
/// grow every session read's future.
async fn refresh_logged(
    config: &ConfigInner,
    p: &crate::providers::OAuthProvider,
    refresh_token: &str,
) -> refresh::RefreshResult {
    let store = config.single_use_store.clone();
    let result = refresh::refresh(p, store, refresh_token).await;
    if let Err(RefreshFailure::Failed(reason)) = &result {
        config.logger.error(&AuthError::RefreshTokenError {
            provider: p.id.clone(),
            reason: reason.to_string(),
        });
    }
    result
}

/// JWT strategy: refreshes the access token kept in the session token's claims when it is
/// due: new tokens go into the claims, a failure marks them with `error`, another instance
/// refreshing the same token leaves them as they are.
pub(super) async fn refresh_access_token(config: &ConfigInner, claims: &mut crate::jwt::JwtClaims) {
    // Without a provider that refreshes, no claim is looked at.
    if !config.refreshes_tokens {
        return;
    }
    let str_claim = |name| claims.get(name).and_then(Value::as_str);
    let expires_at = claims.get("expires_at").and_then(Value::as_i64);
    let Some((p, refresh_token)) = due_refresh(
        config,
        str_claim("provider"),
        str_claim("refresh_token"),
        expires_at,
    ) else {
        return;
    };
    let refresh_token = refresh_token.to_owned();
    match Box::pin(refresh_logged(config, p, &refresh_token)).await {
        Ok(t) => {
            refresh::put_tokens(
                claims,
                &p.id,
                t.access_token.as_deref(),
                t.expires_at,
                t.refresh_token.as_deref(),
            );
            claims.remove("error");
        }
        Err(RefreshFailure::ClaimedElsewhere) => {}
        Err(RefreshFailure::Failed(_)) => {
            claims.insert("error".into(), REFRESH_TOKEN_ERROR.into());
        }
    }
}

/// Database strategy: refreshes the due access tokens of the user's accounts and stores
/// them in the `accounts` rows; whether a refresh failed.
pub(super) async fn refresh_account_tokens(
    config: &ConfigInner,
    adapter: &dyn crate::adapter::Adapter,
    user_id: &str,
) -> Result<bool, BoxError> {
    let mut failed = false;
    let store = crate::adapter::capability(adapter.linked_accounts(), "LinkedAccountStore")?;
    for mut account in store.list_accounts_by_user_id(user_id).await? {
        let Some((p, refresh_token)) = due_refresh(
            config,
            Some(&account.provider),
            account.refresh_token.as_deref(),
            account.expires_at,
        ) else {
            continue;
        };
        match Box::pin(refresh_logged(config, p, refresh_token)).await {
            Ok(t) => {
                account.access_token = t.access_token;
                account.expires_at = t.expires_at;
                account.refresh_token = t.refresh_token;
                for (kept, new) in [
                    (&mut account.id_token, t.id_token),
                    (&mut account.scope, t.scope),
                    (&mut account.token_type, t.token_type),
                ] {
                    if new.is_some() {
                        *kept = new;
                    }
                }
                store.update_account(&account).await?;
            }
            Err(RefreshFailure::ClaimedElsewhere) => {}
            Err(RefreshFailure::Failed(_)) => failed = true,
        }
    }
    Ok(failed)
}
