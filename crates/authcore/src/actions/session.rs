//! The session read (Auth.js `lib/actions/session.ts`): one typed read of the session a
//! request's cookie carries, which `GET` / `POST /session` renders and a host's own reads
//! (extractors, guards, the gateway, an OpenID Provider) return.

use serde_json::Value;
use time::OffsetDateTime;

use super::Ctx;
use crate::callbacks::{JwtParams, JwtTrigger, SessionEvent, SessionParams};
use crate::config::{ConfigInner, ResolvedCookies};
use crate::cookies::{RequestCookies, SessionCookieStore, SetCookie};
use crate::error::{AuthError, BoxError};
use crate::response::{RawBody, RawResponse};
use crate::telemetry::{self, SessionReadOutcome};
use crate::types::{Session, SessionUser, SignInInfo, iso_string};

/// What a session read is given: the request's cookies and scheme, and what the `/session`
/// action and a host's own read ask differently.
pub(crate) struct ReadRequest<'a> {
    /// The request's cookies.
    pub cookies: &'a RequestCookies,
    /// Whether the request came over HTTPS (the `__Secure-` cookie names).
    pub https: bool,
    /// The client's `User-Agent`, kept with a database session's activity.
    pub user_agent: Option<&'a str>,
    /// `POST /session`: an update (trigger `update`), with the body's `data`.
    pub update: Option<Option<&'a Value>>,
    /// A JWT session cookie younger than this (seconds, by its `iat`) is left as it is when
    /// nothing changed the token ([`crate::ReadOptions::refresh_jwt_after`]).
    pub jwt_refresh_age: Option<u64>,
    /// Also read how the user signed in: a database session's record (kept with second
    /// factors on), a JWT session's claims.
    pub sign_in: bool,
    /// Also give the database session's id.
    pub session_id: bool,
}

/// What a session read found.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// What the `session` callback answered; `None` without a session.
    pub body: Option<Value>,
    /// The user's id: the JWT's `sub`, or the database session's user.
    pub user_id: Option<String>,
    /// How and when the user signed in, where the session records it.
    pub sign_in: Option<SignInInfo>,
    /// When the session ends, as the read left it.
    pub expires: Option<OffsetDateTime>,
    /// The database session's id, when [`ReadRequest::session_id`] asked for it.
    pub session_id: Option<String>,
    /// The session cookies to set: refreshed, or cleared.
    pub cookies: Vec<SetCookie>,
}

impl SessionState {
    /// No session, and the session cookies `cookies` (cleared ones, or none).
    fn none(cookies: Vec<SetCookie>) -> Self {
        SessionState {
            cookies,
            ..SessionState::default()
        }
    }
}

/// `GET` / `POST /session`: the session read, rendered as Auth.js answers it.
pub(crate) async fn session(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let is_update = ctx.req.is_post();
    if is_update {
        ctx.require_csrf("session")?;
    }
    let request = ReadRequest {
        cookies: &ctx.req.cookies,
        https: ctx.req.is_https(),
        user_agent: ctx
            .req
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
        update: is_update.then(|| ctx.req.body.as_ref().and_then(|b| b.get("data"))),
        jwt_refresh_age: None,
        sign_in: false,
        session_id: false,
    };
    let found = read(ctx.config, &request).await;
    let body = match found.body {
        Some(body) => body,
        // next-auth 4's session route starts from an empty body and answers it as it is when
        // there is no session (`next-auth/core/routes/session`): `{}` where v5 answers `null`.
        None if ctx.config.next_auth_v4 => Value::Object(Default::default()),
        None => Value::Null,
    };
    let response = RawResponse {
        body: Some(RawBody::Json(body)),
        cookies: found.cookies,
        ..Default::default()
    };
    Ok(if is_update {
        response
    } else {
        response.with_no_cache()
    })
}

/// The session of a request's cookie, counted by what the read found: with JWT sessions
/// the revocation check, the token refresh and the `jwt` callback; with database sessions
/// the expiry, the update every `updateAge` and the activity record; then the `session`
/// callback and event. A failure is logged and is no session.
pub(crate) async fn read(config: &ConfigInner, request: &ReadRequest<'_>) -> SessionState {
    let database = config.session_strategy == crate::config::SessionStrategy::Database
        && config.adapter.is_some();
    let reader = Reader {
        config,
        request,
        cookies: config.cookies(request.https),
    };
    let (state, outcome) = reader.read(database).await;
    telemetry::session_read(database, outcome);
    state
}

/// One session read: what it is given, and the cookie names of its scheme.
struct Reader<'a> {
    config: &'a ConfigInner,
    request: &'a ReadRequest<'a>,
    cookies: &'a ResolvedCookies,
}

impl Reader<'_> {
    /// The session (or none) for the request's cookie, and what the read found.
    async fn read(&self, database: bool) -> (SessionState, SessionReadOutcome) {
        let store = SessionCookieStore::new(&self.cookies.session_token, self.request.cookies);
        let Some(token) = store.value() else {
            return (SessionState::default(), SessionReadOutcome::None);
        };
        let result = match &self.config.adapter {
            Some(adapter) if database => {
                Box::pin(self.database_session(&**adapter, &store, &token))
                    .await
                    .map_err(|source| {
                        // Auth.js logs `SessionTokenError` and answers null.
                        self.log_error(&AuthError::SessionTokenError { source });
                        (SessionState::default(), SessionReadOutcome::Error)
                    })
            }
            _ => self.jwt_session(&store, &token).await.map_err(|source| {
                self.log_error(&AuthError::JwtSessionError { source });
                (
                    SessionState::none(store.clean()),
                    SessionReadOutcome::Invalid,
                )
            }),
        };
        match result {
            Ok(state) => {
                let outcome = if state.body.is_some() {
                    SessionReadOutcome::Active
                } else {
                    SessionReadOutcome::Invalid
                };
                (state, outcome)
            }
            Err(failed) => failed,
        }
    }

    fn log_error(&self, e: &AuthError) {
        self.config.logger.error(e);
    }

    /// The `session` event, whose failure is logged (`EventError`): events never fail a read.
    async fn session_event(&self, session: &Value, token: Option<&crate::jwt::JwtClaims>) {
        let r = self
            .config
            .events
            .session(SessionEvent { session, token })
            .await;
        if let Err(source) = r {
            self.log_error(&AuthError::EventError {
                event: "session",
                source,
            });
        }
    }

    /// Database strategy (Auth.js `lib/actions/session.ts`): look the session up, delete it
    /// when expired, push its expiry back at most every `updateAge`, and re-set the cookie on
    /// every call.
    async fn database_session(
        &self,
        adapter: &dyn crate::adapter::Adapter,
        store: &SessionCookieStore<'_>,
        token: &str,
    ) -> Result<SessionState, BoxError> {
        let config = self.config;
        let now = OffsetDateTime::now_utc();
        // The adapter sees the stored form; the cookie keeps the token.
        let stored = &*config.stored_session_token(token);
        // An impersonation ends at the time its token names, never pushed back.
        let impersonation_end = crate::admin::impersonation_end(token);
        let found = match adapter.get_session_and_user(stored).await? {
            Some((s, _)) if s.expires < now || impersonation_end.is_some_and(|end| end <= now) => {
                adapter.delete_session(stored).await?;
                None
            }
            other => other,
        };
        let Some((session, user)) = found else {
            return Ok(SessionState::none(store.clean()));
        };
        let refresh_failed =
            config.refreshes_tokens && refresh_account_tokens(config, adapter, &user.id).await?;
        let max_age = time::Duration::seconds(config.session_max_age as i64);
        let update_age = time::Duration::seconds(config.session_update_age as i64);
        let new_expires = impersonation_end.unwrap_or(now + max_age);
        let mut expires = session.expires;
        if impersonation_end.is_none() && session.expires - max_age + update_age <= now {
            adapter.update_session(stored, new_expires).await?;
            super::record_session_activity(config, adapter, stored, self.request.user_agent).await;
            expires = new_expires;
        }
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
                new_session: self.request.update.flatten(),
                trigger: self.request.update.map(|_| JwtTrigger::Update),
            })
            .await?;
        self.session_event(&body, None).await;
        // How the user signed in, for a host's step-up checks (recorded with second factors
        // on, and for every impersonation, which a host tells its application of);
        // `GET /session` does not say it, so does not read it.
        let sign_in = if !self.request.sign_in {
            None
        } else if records_sign_in(config) {
            crate::adapter::capability(adapter.session_sign_in(), "SessionSignInStore")?
                .get_session_sign_in(stored)
                .await?
        } else if let (Some(_), Some(records)) = (impersonation_end, adapter.session_sign_in()) {
            records.get_session_sign_in(stored).await?
        } else {
            None
        };
        Ok(SessionState {
            body: Some(body),
            user_id: Some(user.id),
            sign_in,
            expires: Some(expires),
            session_id: self
                .request
                .session_id
                .then(|| crate::crypto::session_id(stored)),
            cookies: store.write(token, new_expires),
        })
    }

    /// JWT strategy: decode the token, check its revocation, refresh its access token when
    /// due, run the `jwt` callback, and re-issue the cookie (unless the read may leave a
    /// young one as it is).
    async fn jwt_session(
        &self,
        store: &SessionCookieStore<'_>,
        token: &str,
    ) -> Result<SessionState, BoxError> {
        let config = self.config;
        let salt: &str = &self.cookies.session_token.name;
        let mut claims = config
            .decode_session(token, salt)?
            .ok_or("the session token is empty")?;
        // An impersonation ends at the time its actor claim names, never pushed back.
        let impersonation_end = crate::admin::impersonation_claim_end(&claims);
        if impersonation_end.is_some() && impersonation_over(config, &claims).await {
            return Ok(SessionState::none(store.clean()));
        }
        if config.jwt_revocation {
            match revoked(config, &claims).await {
                Ok(false) => {}
                Ok(true) => return Ok(SessionState::none(store.clean())),
                // The store is down: no session now, but the cookie stays for when it is back.
                Err(source) => {
                    self.log_error(&AuthError::SessionTokenError { source });
                    return Ok(SessionState::default());
                }
            }
        }
        // A read that may leave a young cookie as it is keeps the token as read, to see
        // whether the refresh or the callback below changes it.
        let young = match self.request.update {
            Some(_) => None,
            None => young_token(self.request.jwt_refresh_age, &claims),
        };
        refresh_access_token(config, &mut claims).await;
        let token = config
            .callbacks
            .jwt(JwtParams {
                token: claims,
                user: None,
                account: None,
                profile: None,
                is_new_user: None,
                trigger: self.request.update.map(|_| JwtTrigger::Update),
                session: self.request.update.flatten(),
            })
            .await?;
        let Some(token) = token else {
            return Ok(SessionState::none(store.clean()));
        };
        let keep = young
            .filter(|(read, _)| *read == token)
            .map(|(_, expires)| expires);
        let expires = keep.unwrap_or_else(|| {
            OffsetDateTime::now_utc() + time::Duration::seconds(config.session_max_age as i64)
        });
        let expires = impersonation_end.map_or(expires, |end| end.min(expires));
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
            super::write_session_cookie(config, store, &new_token, expires)
        };
        self.session_event(&body, Some(&token)).await;
        Ok(SessionState {
            user_id: token.get("sub").and_then(Value::as_str).map(str::to_owned),
            // Read only when asked (as for database sessions): `GET /session` does not say it.
            sign_in: self
                .request
                .sign_in
                .then(|| SignInInfo::from_claims(&token))
                .flatten(),
            body: Some(body),
            expires: Some(expires),
            session_id: None,
            cookies,
        })
    }
}

/// Whether sessions record how their user signed in (with second factors on).
fn records_sign_in(config: &ConfigInner) -> bool {
    #[cfg(feature = "two-factor")]
    return config.two_factor.is_some();
    #[cfg(not(feature = "two-factor"))]
    {
        let _ = config;
        false
    }
}

/// The token as read and its expiry, when a read may leave its cookie as it is
/// ([`crate::ReadOptions::refresh_jwt_after`]): issued (`iat`) less than `refresh_age`
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
        && config
            .single_use()
            .is_marked(UPSTREAM_ENDED, upstream)
            .await?
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

/// The mark (in the single-use store) of an impersonation's JWT session, by its `sid`,
/// that was ended before its time: the token is refused from then on.
pub(crate) const IMPERSONATION_ENDED: &str = "impersonation-ended";

/// Whether the JWT session `claims` is an impersonation that is over: past its end, or
/// ended by a click (a store failure counts as over: an impersonation is not worth the
/// doubt).
pub(crate) async fn impersonation_over(c: &ConfigInner, claims: &crate::jwt::JwtClaims) -> bool {
    let Some(end) = crate::admin::impersonation_claim_end(claims) else {
        return false;
    };
    if end <= OffsetDateTime::now_utc() {
        return true;
    }
    match claims.get("sid").and_then(Value::as_str) {
        Some(sid) => !matches!(
            c.single_use().is_marked(IMPERSONATION_ENDED, sid).await,
            Ok(false)
        ),
        None => true,
    }
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
async fn refresh_access_token(_: &ConfigInner, _: &mut crate::jwt::JwtClaims) {}

/// Without OAuth providers no access token is refreshed.
#[cfg(not(feature = "oauth"))]
async fn refresh_account_tokens(
    _: &ConfigInner,
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
