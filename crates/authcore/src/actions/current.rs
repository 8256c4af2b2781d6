//! The signed-in user of a request, as account management and the sensitive-change rule
//! read it: the database session's user and recorded sign-in, or the JWT's claims.

use crate::adapter::{Adapter, AdapterError};
use crate::config::ConfigInner;
use crate::cookies::RequestCookies;
use crate::site::RequestUrl;

/// The signed-in user of a request, for account and session management: what
/// [`Auth::current_session`](crate::Auth::current_session) reads from the session cookie,
/// and what the sensitive changes take as proof of a recent sign-in (a host cannot make one
/// up: it comes from a request's session only).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CurrentSession {
    /// The user's id.
    pub user_id: String,
    /// The database session's [`SessionInfo::id`](crate::account::SessionInfo::id), or
    /// with JWT sessions the `sid` the revocation list gives them (`None` without it).
    pub session_id: Option<String>,
    /// When the user signed in (seconds since the epoch): the JWT's `auth_time`, or the
    /// database session's recorded sign-in (else its creation); `None` when unknown.
    pub auth_time: Option<i64>,
    /// How the user signed in (RFC 8176 `amr` values: `pwd`, `otp`, `hwk`, `user`, `mfa`
    /// when a second factor was proven); empty when unknown.
    pub amr: Vec<String>,
    /// The origin of the request it was read from: where security notices link to.
    pub(crate) origin: Option<String>,
    /// With JWT sessions, the token's active organization claim (read with the rest of the
    /// token, so that it is not decoded twice); unchecked: see
    /// `actions::organizations::active_membership`.
    pub(crate) organization: Option<String>,
    /// The administrator (a user id) signed in as the user, when the session is an
    /// impersonation: it may make no sensitive change nor administer.
    pub impersonator: Option<String>,
    /// When the impersonation ends (with [`CurrentSession::impersonator`]): the time its
    /// database token or its JWT's actor claim names.
    pub(crate) impersonation_end: Option<time::OffsetDateTime>,
}

impl CurrentSession {
    /// Whether the sign-in proved a second factor (`mfa` among [`CurrentSession::amr`]).
    pub fn proved_second_factor(&self) -> bool {
        self.amr.iter().any(|m| m == "mfa")
    }

    /// What binds a pending TOTP enrolment to this session: its id, else its sign-in.
    pub(crate) fn binding(&self) -> String {
        match (&self.session_id, self.auth_time) {
            (Some(id), _) => format!("session:{id}"),
            (None, at) => format!("sign-in:{}:{}", self.user_id, at.unwrap_or_default()),
        }
    }
}

pub(crate) use crate::crypto::session_id;

/// The signed-in user of a request to `url` with `cookies`: the database session's user,
/// or the JWT's `sub`. `None` when signed out, expired, or on any failure. Unlike the
/// session read ([`super::session::read`]) it runs no callback and sets no cookie: it only
/// says who is signed in.
pub(crate) async fn current_session(
    c: &ConfigInner,
    url: &RequestUrl,
    cookies: &RequestCookies,
) -> Option<CurrentSession> {
    let spec = &c.cookies(url.is_https()).session_token;
    let token = crate::cookies::SessionCookieStore::new(spec, cookies).value()?;
    match &c.adapter {
        Some(adapter) if c.session_strategy == crate::config::SessionStrategy::Database => {
            let stored = c.stored_session_token(&token);
            let (session, user) = adapter.get_session_and_user(&stored).await.ok()??;
            let now = time::OffsetDateTime::now_utc();
            let impersonation_end = crate::admin::impersonation_end(&token);
            if session.expires <= now || impersonation_end.is_some_and(|end| end <= now) {
                return None;
            }
            let id = session_id(&stored);
            let recorded = match adapter.session_sign_in() {
                Some(store) => store.get_session_sign_in(&stored).await,
                None => Ok(None),
            };
            let (auth_time, amr, impersonator) = match recorded {
                Ok(Some(info)) => (info.auth_time, info.amr, info.impersonator),
                Ok(None) | Err(AdapterError::Unsupported(_)) => (
                    created_at(&**adapter, &user.id, &stored).await?,
                    Vec::new(),
                    None,
                ),
                Err(_) => return None,
            };
            // An impersonation is known by its token even when its record is lost: it is
            // never taken for the user's own sign-in.
            if impersonator.is_none() && impersonation_end.is_some() {
                return None;
            }
            Some(CurrentSession {
                user_id: user.id,
                session_id: Some(id),
                auth_time,
                amr,
                origin: Some(url.site.origin.to_string()),
                organization: None,
                impersonation_end: impersonation_end.filter(|_| impersonator.is_some()),
                impersonator,
            })
        }
        _ => {
            let claims = c.decode_session(&token, &spec.name).ok()??;
            let impersonation_end = crate::admin::impersonation_claim_end(&claims);
            if impersonation_end.is_some() && super::session::impersonation_over(c, &claims).await {
                return None;
            }
            // A revoked (or, the store failing, unverifiable) JWT is no session.
            if c.jwt_revocation
                && !matches!(
                    crate::actions::session::revoked(c, &claims).await,
                    Ok(false)
                )
            {
                return None;
            }
            Some(CurrentSession {
                user_id: claims.get("sub")?.as_str()?.to_owned(),
                session_id: claims
                    .get("sid")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned),
                auth_time: claims.get("auth_time").and_then(serde_json::Value::as_i64),
                amr: claims
                    .get("amr")
                    .and_then(serde_json::Value::as_array)
                    .map(|list| {
                        list.iter()
                            .filter_map(|m| m.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                origin: Some(url.site.origin.to_string()),
                organization: claims
                    .get(crate::organizations::ORGANIZATION_CLAIM)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned),
                impersonator: impersonation_end
                    .and_then(|_| claims.get("act")?.get("sub")?.as_str().map(str::to_owned)),
                impersonation_end,
            })
        }
    }
}

/// The creation of database session `stored` of the user, where the adapter records it
/// (session activity): the sign-in time of sessions whose sign-in was not recorded.
/// `None` (the outer) when the adapter failed.
async fn created_at(adapter: &dyn Adapter, user_id: &str, stored: &str) -> Option<Option<i64>> {
    let Some(store) = adapter.session_activity() else {
        return Some(None);
    };
    let list = store.list_sessions_by_user_id(user_id).await.ok()?;
    Some(
        list.into_iter()
            .find(|a| a.session.session_token == *stored)
            .and_then(|a| a.created_at)
            .map(time::OffsetDateTime::unix_timestamp),
    )
}
