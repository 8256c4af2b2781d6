//! `POST <basePath>/backchannel-logout/<provider>` (beyond Auth.js): OpenID Connect
//! Back-Channel Logout 1.0 as a relying party. An OIDC provider whose user signed out there
//! posts a logout token (`logout_token`, a form field) here; once it verifies (§2.6: the
//! provider's signature, `iss`, `aud`, `iat` / `exp`, the logout event, no `nonce`, taken
//! once by its `jti`), the sessions it names end (§2.7):
//!
//! - with a `sid`, the sessions that provider session signed in here, and no other: a
//!   database session by the record its sign-in made (the ID token's `sid` with the
//!   session), deleted; a JWT session by the claim its sign-in wrote, the provider session
//!   marked ended in the single-use store so that the session is refused at its next read;
//! - with a `sub` alone, every session of the user it names (the account's provider
//!   account id).
//!
//! The provider registers `<basePath>/backchannel-logout/<id>` as the client's
//! `backchannel_logout_uri`.
//!
//! Answers (§2.8): `200` with no body when the logout is done (or there was nothing to
//! end); `400` `{"error": "invalid_request", "error_description": …}` for a token that
//! does not verify or a replay (only these count against the client address's
//! `requests_per_client`, and `429` answers once it is over); `501` when this configuration cannot end the sessions (no
//! adapter, an adapter without the session records a `sid` needs, or JWT sessions without
//! the revocation list); `503` when a store fails. Never cached; no cookie is read or set.

use std::time::Duration;

use http::StatusCode;
use serde_json::json;

use super::Ctx;
use super::callback::oauth::{ID_TOKEN_CLOCK_TOLERANCE, expected_signer, with_provider_keys};
use super::limits::Limit;
use crate::config::SessionStrategy;
use crate::error::AuthError;
use crate::oauth::id_token::{self, IdTokenChecks, LogoutToken};
use crate::providers::oauth::flow;
use crate::providers::{OAuthProvider, Provider};
use crate::response::RawResponse;
use crate::types::ProviderType;

/// How long a logout token's `jti` is remembered beyond its expiry, so that a replay
/// within the clock tolerance is still refused.
const REPLAY_MARGIN_SECS: i64 = 2 * ID_TOKEN_CLOCK_TOLERANCE;

/// A refusal, as §2.8 answers it (JSON, never cached).
fn refused(status: StatusCode, description: &str) -> RawResponse {
    let error = match status {
        StatusCode::BAD_REQUEST => "invalid_request",
        StatusCode::NOT_IMPLEMENTED => "not_implemented",
        StatusCode::TOO_MANY_REQUESTS => "slow_down",
        _ => "temporarily_unavailable",
    };
    let mut r = RawResponse::json(json!({"error": error, "error_description": description}))
        .with_no_cache();
    r.status = Some(status);
    r
}

/// A request refused (`400`), counted against the client address's request limit: `429`
/// with `Retry-After` once it is over.
async fn counted_refusal(ctx: &Ctx<'_>, description: &str) -> RawResponse {
    match ctx.count_attempt(Limit::RequestsPerClient, None).await {
        Err(AuthError::RateLimited { retry_after, .. }) => {
            let mut r = refused(
                StatusCode::TOO_MANY_REQUESTS,
                "too many refused logout tokens",
            );
            r.headers.insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from(retry_after.as_secs().max(1)),
            );
            r
        }
        _ => refused(StatusCode::BAD_REQUEST, description),
    }
}

/// A store that failed: logged, answered `503` (the provider may try again).
fn unavailable(what: &str, e: &dyn std::fmt::Display) -> RawResponse {
    tracing::error!(error = %e, "back-channel logout: {what} failed");
    refused(StatusCode::SERVICE_UNAVAILABLE, "try again later")
}

pub(crate) async fn backchannel_logout(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let Some(Provider::OAuth(p)) = ctx.provider else {
        return Err(AuthError::invalid_provider(
            "Back-channel logout is for OpenID Connect providers",
        ));
    };
    if p.kind != ProviderType::Oidc {
        return Err(AuthError::invalid_provider(
            "Back-channel logout is for OpenID Connect providers",
        ));
    }
    // Only tokens that do not verify count against the client's request limit
    // (`requests_per_client`): a provider signing many users out is not held back.
    let Some(token) = ctx.req.body_str("logout_token").filter(|t| !t.is_empty()) else {
        return Ok(counted_refusal(ctx, "logout_token is missing").await);
    };
    let logout = match verify(p, token).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(provider = %p.id, error = %e, "back-channel logout: logout token refused");
            return Ok(counted_refusal(ctx, "the logout token does not verify").await);
        }
    };
    // What this configuration cannot honour is refused before the token's `jti` is spent,
    // so that the same token can be taken once the configuration can.
    let c = ctx.config;
    let Some(adapter) = c.adapter.as_deref() else {
        return Ok(refused(
            StatusCode::NOT_IMPLEMENTED,
            "signing users out needs an adapter",
        ));
    };
    if c.session_strategy == SessionStrategy::Jwt && !c.jwt_revocation {
        return Ok(refused(
            StatusCode::NOT_IMPLEMENTED,
            "JWT sessions are ended through the revocation list (jwt_revocation)",
        ));
    }
    // A `sid` ends JWT sessions by a mark they carry, database sessions by their records.
    let by_sid = logout.sid.is_some()
        && (c.session_strategy == SessionStrategy::Jwt || adapter.upstream_sessions().is_some());
    if !by_sid && logout.sub.is_none() {
        return Ok(refused(
            StatusCode::NOT_IMPLEMENTED,
            "the adapter keeps no record of the provider's sessions (take_upstream_sessions)",
        ));
    }
    let now = time::OffsetDateTime::now_utc();
    let keep = logout.exp - now.unix_timestamp() + REPLAY_MARGIN_SECS;
    let ttl = Duration::from_secs(keep.clamp(1, 86_400).unsigned_abs());
    let kind = format!("backchannel_logout:{}", p.id);
    let first = match c
        .single_use()
        .first_use_checked(&kind, &logout.jti, ttl)
        .await
    {
        Ok(first) => first,
        Err(e) => return Ok(unavailable("the single-use store", &e)),
    };
    if !first {
        tracing::warn!(provider = %p.id, "back-channel logout: a logout token replayed");
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "the logout token was used already",
        ));
    }
    // The user `sub` names, if any (then a `sid`'s sessions must be theirs).
    let named = match logout.sub.as_deref() {
        None => None,
        Some(sub) => match adapter.get_user_by_account(&p.id, sub).await {
            Ok(Some(user)) => Some(user.id),
            Ok(None) => {
                tracing::info!(provider = %p.id, "back-channel logout: no such user here");
                return Ok(RawResponse::default().with_no_cache());
            }
            Err(e) => return Ok(unavailable("the adapter", &e)),
        },
    };
    let ended = match (logout.sid.as_deref(), named.as_deref()) {
        (Some(sid), named) if by_sid => end_upstream_session(c, adapter, &p.id, sid, named).await,
        (_, Some(user)) => super::account::revoke_other_sessions(c, user, None)
            .await
            .map(|_| ())
            .map_err(Into::into),
        (_, None) => Ok(()),
    };
    match ended {
        Ok(()) => {
            tracing::info!(provider = %p.id, by_sid, "back-channel logout: sessions ended");
            Ok(RawResponse::default().with_no_cache())
        }
        Err(e) => Ok(unavailable("ending the sessions", &e)),
    }
}

/// Ends the sessions the session `sid` of provider `provider` signed in: JWT sessions by
/// marking it ended (they carry it, and are refused at their next read), database
/// sessions by their records — those of `named` alone, when the token named a user.
async fn end_upstream_session(
    c: &crate::config::ConfigInner,
    adapter: &dyn crate::adapter::Adapter,
    provider: &str,
    sid: &str,
    named: Option<&str>,
) -> Result<(), crate::error::BoxError> {
    use super::session::{UPSTREAM_ENDED, upstream_key};
    let now = time::OffsetDateTime::now_utc();
    if c.session_strategy == SessionStrategy::Jwt {
        let ttl = (super::completion::upstream_record_expiry(c) - now).unsigned_abs();
        let key = upstream_key(provider, sid);
        return c.single_use().mark(UPSTREAM_ENDED, &key, ttl).await;
    }
    let records = crate::adapter::capability(adapter.upstream_sessions(), "UpstreamSessionStore")?
        .take_upstream_sessions(provider, sid, now)
        .await?;
    for record in records {
        if named.is_some_and(|user| user != record.user_id) {
            tracing::warn!(
                provider,
                "back-channel logout: a sid of another user than sub; left alone"
            );
            continue;
        }
        if let Some(token) = &record.session_token {
            adapter.delete_session(token).await?;
            let id = crate::crypto::session_id(token);
            super::account::sessions_ended(c, &record.user_id, &[id], false).await;
        }
    }
    Ok(())
}

/// The logout token verified with the provider's keys, for this client.
async fn verify(p: &OAuthProvider, token: &str) -> Result<LogoutToken, crate::oauth::OAuthError> {
    let client = p.client();
    let endpoints = flow::resolve_endpoints(p, &*client).await?;
    let (issuer, algs) = expected_signer(p, &endpoints, token)?;
    let checks = IdTokenChecks {
        issuer: &issuer,
        client_id: &p.client_id,
        expected_nonce: None,
        allowed_algs: &algs,
        now: time::OffsetDateTime::now_utc().unix_timestamp(),
        clock_tolerance: ID_TOKEN_CLOCK_TOLERANCE,
    };
    with_provider_keys(p, &*client, &endpoints, |set| {
        id_token::verify_logout_token(token, set, &checks)
    })
    .await
}
