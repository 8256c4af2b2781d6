//! `GET` / `POST /session` with the JWT strategy (Auth.js `lib/actions/session.ts`).

use serde_json::Value;
use time::OffsetDateTime;

use super::Ctx;
use crate::callbacks::{JwtParams, JwtTrigger, SessionEvent, SessionParams};
use crate::cookies::SessionCookieStore;
use crate::error::{AuthError, BoxError};
use crate::response::{RawBody, RawResponse};
use crate::types::{Session, SessionUser};

use crate::telemetry::{self, SessionReadOutcome};
use crate::types::iso_string;

pub(crate) async fn session(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let is_update = ctx.req.is_post();
    if is_update {
        ctx.require_csrf("session")?;
    }
    let database = ctx.config.session_strategy == crate::config::SessionStrategy::Database
        && ctx.config.adapter.is_some();
    let (mut response, outcome) = read(ctx, database, is_update).await;
    telemetry::session_read(database, outcome);
    // next-auth 4's session route starts from an empty body and answers it as it is when
    // there is no session (`next-auth/core/routes/session`): `{}` where v5 answers `null`.
    if ctx.config.next_auth_v4 && matches!(response.body, Some(RawBody::Json(Value::Null))) {
        response.body = Some(RawBody::Json(Value::Object(Default::default())));
    }
    Ok(if is_update {
        response
    } else {
        response.with_no_cache()
    })
}

/// The session (or `null`) for the request's cookie, and what the read found.
async fn read(ctx: &Ctx<'_>, database: bool, is_update: bool) -> (RawResponse, SessionReadOutcome) {
    let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
    let Some(token) = store.value() else {
        return (RawResponse::json(Value::Null), SessionReadOutcome::None);
    };
    let result = match &ctx.config.adapter {
        Some(adapter) if database => {
            Box::pin(database_session(ctx, &**adapter, &store, &token, is_update))
                .await
                .map_err(|source| {
                    // Auth.js logs `SessionTokenError` and answers null.
                    ctx.log_error(&AuthError::SessionTokenError { source });
                    (RawResponse::json(Value::Null), SessionReadOutcome::Error)
                })
        }
        _ => refresh(ctx, &store, &token, is_update)
            .await
            .map_err(|source| {
                ctx.log_error(&AuthError::JwtSessionError { source });
                let mut r = RawResponse::json(Value::Null);
                r.cookies = store.clean();
                (r, SessionReadOutcome::Invalid)
            }),
    };
    match result {
        Ok(r) => {
            let outcome = if matches!(r.body, Some(RawBody::Json(Value::Null))) {
                SessionReadOutcome::Invalid
            } else {
                SessionReadOutcome::Active
            };
            (r, outcome)
        }
        Err(failed) => failed,
    }
}

/// Database strategy (Auth.js `lib/actions/session.ts`): look the session up, delete it when
/// expired, push its expiry back at most every `updateAge`, and re-set the cookie on every
/// call.
async fn database_session(
    ctx: &Ctx<'_>,
    adapter: &dyn crate::adapter::Adapter,
    store: &SessionCookieStore<'_>,
    token: &str,
    is_update: bool,
) -> Result<RawResponse, BoxError> {
    let config = ctx.config;
    let now = OffsetDateTime::now_utc();
    // The adapter sees the stored form; the cookie keeps the token.
    let stored = &*config.stored_session_token(token);
    let found = match adapter.get_session_and_user(stored).await? {
        Some((s, _)) if s.expires < now => {
            adapter.delete_session(stored).await?;
            None
        }
        other => other,
    };
    let Some((session, user)) = found else {
        let mut r = RawResponse::json(Value::Null);
        r.cookies = store.clean();
        return Ok(r);
    };
    let refresh_failed =
        config.refreshes_tokens && refresh_account_tokens(ctx, adapter, &user.id).await?;
    let max_age = time::Duration::seconds(config.session_max_age as i64);
    let update_age = time::Duration::seconds(config.session_update_age as i64);
    let new_expires = now + max_age;
    if session.expires - max_age + update_age <= now {
        adapter.update_session(stored, new_expires).await?;
        ctx.record_session_activity(adapter, stored).await;
    }
    let data = if is_update {
        ctx.req.body.as_ref().and_then(|b| b.get("data"))
    } else {
        None
    };
    let public_user = crate::types::User::from(&user);
    // The default body reports the session's expiry before this call's update, as in
    // Auth.js `lib/actions/session.ts`.
    // The user row's columns, an empty one as `null` (the JWT strategy leaves out what the
    // token lacks).
    let column = |v: &Option<String>| Some(v.clone().map_or(Value::Null, Value::String));
    let mut default_session = Session {
        user: Some(SessionUser {
            name: column(&user.name),
            email: column(&user.email),
            image: column(&user.image),
        }),
        expires: iso_string(session.expires),
        extra: Default::default(),
    };
    if refresh_failed {
        default_session
            .extra
            .insert("error".into(), REFRESH_TOKEN_ERROR.into());
    }
    let body = config
        .callbacks
        .session(SessionParams {
            session: default_session,
            token: None,
            user: Some(&public_user),
            new_session: data,
            trigger: is_update.then_some(JwtTrigger::Update),
        })
        .await?;
    let r = config
        .events
        .session(SessionEvent {
            session: &body,
            token: None,
        })
        .await;
    ctx.event_result("session", r);
    // How the user signed in, for a host's step-up checks (recorded with second factors
    // on); `GET /session` does not say it, so does not read it.
    let session_sign_in = if ctx.req.lookup.is_some() && records_sign_in(ctx) {
        crate::adapter::capability(adapter.session_sign_in(), "SessionSignInStore")?
            .get_session_sign_in(stored)
            .await?
    } else {
        None
    };
    Ok(RawResponse {
        body: Some(session_body(ctx, body)?),
        cookies: store.write(token, new_expires),
        session_user_id: Some(user.id),
        session_sign_in,
        ..Default::default()
    })
}

/// Whether sessions record how their user signed in (with second factors on).
fn records_sign_in(ctx: &Ctx<'_>) -> bool {
    #[cfg(feature = "two-factor")]
    return ctx.config.two_factor.is_some();
    #[cfg(not(feature = "two-factor"))]
    {
        let _ = ctx;
        false
    }
}

async fn refresh(
    ctx: &Ctx<'_>,
    store: &SessionCookieStore<'_>,
    token: &str,
    is_update: bool,
) -> Result<RawResponse, BoxError> {
    let config = ctx.config;
    let salt: &str = &ctx.cookies.session_token.name;
    let mut claims = config
        .decode_session(token, salt)?
        .ok_or("the session token is empty")?;
    if config.jwt_revocation {
        match revoked(config, &claims).await {
            Ok(false) => {}
            Ok(true) => {
                let mut r = RawResponse::json(Value::Null);
                r.cookies = store.clean();
                return Ok(r);
            }
            // The store is down: no session now, but the cookie stays for when it is back.
            Err(source) => {
                ctx.log_error(&AuthError::SessionTokenError { source });
                return Ok(RawResponse::json(Value::Null));
            }
        }
    }
    // A lookup that may leave a young cookie as it is keeps the token as read, to see
    // whether the refresh or the callback below changes it.
    let young = if is_update {
        None
    } else {
        young_token(ctx.req.lookup.and_then(|l| l.jwt_refresh_age), &claims)
    };
    refresh_access_token(ctx, &mut claims).await;
    let data = if is_update {
        ctx.req.body.as_ref().and_then(|b| b.get("data"))
    } else {
        None
    };
    let token = config
        .callbacks
        .jwt(JwtParams {
            token: claims,
            user: None,
            account: None,
            profile: None,
            is_new_user: None,
            trigger: is_update.then_some(JwtTrigger::Update),
            session: data,
        })
        .await?;
    let Some(token) = token else {
        let mut r = RawResponse::json(Value::Null);
        r.cookies = store.clean();
        return Ok(r);
    };
    let keep = young
        .filter(|(read, _)| *read == token)
        .map(|(_, expires)| expires);
    let expires = keep.unwrap_or_else(|| {
        OffsetDateTime::now_utc() + time::Duration::seconds(config.session_max_age as i64)
    });
    let mut session = Session {
        user: Some(SessionUser {
            name: token.get("name").cloned(),
            email: token.get("email").cloned(),
            image: token.get("picture").cloned(),
        }),
        expires: iso_string(expires),
        extra: Default::default(),
    };
    // As the session callback of Auth.js's refresh-token recipe does.
    if token.get("error").and_then(Value::as_str) == Some(REFRESH_TOKEN_ERROR) {
        session
            .extra
            .insert("error".into(), REFRESH_TOKEN_ERROR.into());
    }
    let body = config
        .callbacks
        .session(SessionParams {
            session,
            token: Some(&token),
            user: None,
            new_session: None,
            trigger: None,
        })
        .await?;
    let cookies = if keep.is_some() {
        Vec::new()
    } else {
        let new_token = config.encode_session(&token, salt)?;
        ctx.write_session_cookie(store, &new_token, expires)
    };
    let r = config
        .events
        .session(SessionEvent {
            session: &body,
            token: Some(&token),
        })
        .await;
    ctx.event_result("session", r);
    Ok(RawResponse {
        body: Some(session_body(ctx, body)?),
        cookies,
        session_user_id: token.get("sub").and_then(Value::as_str).map(str::to_owned),
        session_sign_in: crate::types::SignInInfo::from_claims(&token),
        ..Default::default()
    })
}

/// The session's body: for a host's lookup the value as it is, instead of bytes it would
/// parse back; for a response, the serialised JSON.
fn session_body(ctx: &Ctx<'_>, body: Value) -> Result<RawBody, serde_json::Error> {
    Ok(if ctx.req.lookup.is_some() {
        RawBody::Json(body)
    } else {
        RawBody::JsonBytes(serde_json::to_vec(&body)?.into())
    })
}

/// The token as read and its expiry, when a lookup may leave its cookie as it is
/// ([`crate::LookupOptions::refresh_jwt_after`]): issued (`iat`) less than `refresh_age`
/// seconds ago, with an `exp`.
fn young_token(
    refresh_age: Option<u64>,
    claims: &crate::jwt::JwtClaims,
) -> Option<(crate::jwt::JwtClaims, OffsetDateTime)> {
    let refresh_age = i64::try_from(refresh_age?).ok()?;
    let issued = claims.get("iat")?.as_i64()?;
    let expires = OffsetDateTime::from_unix_timestamp(claims.get("exp")?.as_i64()?).ok()?;
    let age = OffsetDateTime::now_utc()
        .unix_timestamp()
        .checked_sub(issued)?;
    ((0..refresh_age).contains(&age)).then(|| (claims.clone(), expires))
}

/// The JWT claim naming the upstream provider session that signed the session in
/// ([`upstream_key`]), written when the revocation list is on.
pub(crate) const UPSTREAM_CLAIM: &str = "ups";

/// The mark (in the single-use store) of an upstream provider session that its provider
/// logged out: JWT sessions carrying its [`UPSTREAM_CLAIM`] are refused.
pub(crate) const UPSTREAM_ENDED: &str = "upstream-session-ended";

/// The key of the session `sid` of provider `provider` (a hash: the same length whatever
/// the provider's `sid`, and the `sid` itself not in the cookie).
#[cfg(feature = "oauth")]
pub(crate) fn upstream_key(provider: &str, sid: &str) -> String {
    let mut hash = crate::crypto::Sha256::new();
    hash.update(provider.as_bytes());
    hash.update(&[0]);
    hash.update(sid.as_bytes());
    hex::encode(&hash.finish()[..16])
}

/// Whether the JWT session `claims` is revoked: signed in (`sat`, ms) before the user's
/// revocation and not the session it kept (`sid`), or signed in by an upstream provider
/// session its provider has logged out since ([`UPSTREAM_CLAIM`]). A token without `sat`
/// counts as signed in at time 0. A store failure is an error, not a pass.
pub(crate) async fn revoked(
    config: &crate::config::ConfigInner,
    claims: &crate::jwt::JwtClaims,
) -> Result<bool, BoxError> {
    if let Some(upstream) = claims.get(UPSTREAM_CLAIM).and_then(Value::as_str)
        && crate::ratelimit::is_marked(&*config.single_use_store, UPSTREAM_ENDED, upstream).await?
    {
        return Ok(true);
    }
    let (Some(adapter), Some(user_id)) =
        (&config.adapter, claims.get("sub").and_then(Value::as_str))
    else {
        return Ok(false);
    };
    let revocations = crate::adapter::capability(adapter.jwt_revocation(), "JwtRevocationStore")?;
    let Some(revocation) = revocations.get_jwt_revocation(user_id).await? else {
        return Ok(false);
    };
    let signed_in_at = claims.get("sat").and_then(Value::as_i64).unwrap_or(0);
    let kept = revocation.keep.is_some()
        && revocation.keep.as_deref() == claims.get("sid").and_then(Value::as_str);
    let before = crate::types::unix_millis(revocation.before);
    Ok(signed_in_at < before && !kept)
}

/// The session's `error` when its access token could not be refreshed (the value of
/// Auth.js's refresh-token recipe).
pub(crate) const REFRESH_TOKEN_ERROR: &str = "RefreshTokenError";

#[cfg(feature = "oauth")]
mod refresh;
#[cfg(feature = "oauth")]
use refresh::{refresh_access_token, refresh_account_tokens};

/// Without OAuth providers no access token is refreshed.
#[cfg(not(feature = "oauth"))]
async fn refresh_access_token(_: &Ctx<'_>, _: &mut crate::jwt::JwtClaims) {}

/// Without OAuth providers no access token is refreshed.
#[cfg(not(feature = "oauth"))]
async fn refresh_account_tokens(
    _: &Ctx<'_>,
    _: &dyn crate::adapter::Adapter,
    _: &str,
) -> Result<bool, BoxError> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_string_matches_javascript() {
        let t = time::macros::datetime!(2026-01-02 03:04:05.678 UTC);
        assert_eq!(super::iso_string(t), "2026-01-02T03:04:05.678Z");
        let t = time::macros::datetime!(0987-11-30 23:59:09.005 +02:00);
        assert_eq!(super::iso_string(t), "0987-11-30T21:59:09.005Z");
        let t = time::macros::datetime!(2026-12-31 00:00:00 UTC);
        assert_eq!(super::iso_string(t), "2026-12-31T00:00:00.000Z");
    }
}
