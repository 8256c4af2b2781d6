//! `POST <basePath>/backchannel-logout/<provider>` (beyond Auth.js): OpenID Connect
//! Back-Channel Logout 1.0 as a relying party. An OIDC provider whose user signed out there
//! posts a logout token (`logout_token`, a form field) here; once it verifies (§2.6: the
//! provider's signature, `iss`, `aud`, `iat` / `exp`, the logout event, no `nonce`, taken
//! once by its `jti`), the user it names (`sub`, the account's provider account id) is
//! signed out of every session here: database sessions are deleted, JWT sessions refused
//! through the revocation list. The provider registers `<basePath>/backchannel-logout/<id>`
//! as the client's `backchannel_logout_uri`.
//!
//! Answers (§2.8): `200` with no body when the logout is done (or there was no such user);
//! `400` `{"error": "invalid_request", "error_description": …}` for a token that does not
//! verify, a replay, or a token naming only a `sid`; `501` when this configuration cannot
//! end the sessions (no adapter, or JWT sessions without the revocation list); `503` when a
//! store fails. Never cached; no cookie is read or set.

use std::time::Duration;

use http::StatusCode;
use serde_json::json;

use super::Ctx;
use super::callback::oauth::{ID_TOKEN_CLOCK_TOLERANCE, expected_signer, with_provider_keys};
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
        _ => "temporarily_unavailable",
    };
    let mut r = RawResponse::json(json!({"error": error, "error_description": description}))
        .with_no_cache();
    r.status = Some(status);
    r
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
    let Some(token) = ctx.req.body_str("logout_token").filter(|t| !t.is_empty()) else {
        return Ok(refused(StatusCode::BAD_REQUEST, "logout_token is missing"));
    };
    let logout = match verify(p, token).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(provider = %p.id, error = %e, "back-channel logout: logout token refused");
            return Ok(refused(
                StatusCode::BAD_REQUEST,
                "the logout token does not verify",
            ));
        }
    };
    // What this configuration cannot honour is refused before the token's `jti` is spent,
    // so that the same token can be taken once the configuration can.
    let Some(sub) = logout.sub.as_deref() else {
        // Sessions are not indexed by the provider's session id: a token naming only one
        // cannot be matched.
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "a logout token without sub is not supported",
        ));
    };
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
    let now = time::OffsetDateTime::now_utc();
    let keep = logout.exp - now.unix_timestamp() + REPLAY_MARGIN_SECS;
    let ttl = Duration::from_secs(keep.clamp(1, 86_400).unsigned_abs());
    let kind = format!("backchannel_logout:{}", p.id);
    let store = &*c.single_use_store;
    let first = match crate::ratelimit::first_use_checked(store, &kind, &logout.jti, ttl).await {
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
    let user = match adapter.get_user_by_account(&p.id, sub).await {
        Ok(Some(user)) => user,
        Ok(None) => {
            tracing::info!(provider = %p.id, "back-channel logout: no such user here");
            return Ok(RawResponse::default().with_no_cache());
        }
        Err(e) => return Ok(unavailable("the adapter", &e)),
    };
    match super::account::revoke_other_sessions(c, &user.id, None).await {
        Ok(_) => {
            tracing::info!(provider = %p.id, user = %user.id, "back-channel logout: the user is signed out");
            Ok(RawResponse::default().with_no_cache())
        }
        Err(e) => Ok(unavailable("ending the sessions", &e)),
    }
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
