//! The end of every sign-in, whatever proved the first factor (Auth.js
//! `lib/actions/callback/index.ts`): the factor's `amr`, the database session or the JWT
//! with the `jwt` callback, the `signIn` event and the redirect. The callbacks of
//! [`super::callback`] and the second step of [`super::two_factor`] end here.

use time::OffsetDateTime;

use super::Ctx;
use crate::adapter::{Adapter, AdapterSession};
use crate::callbacks::{JwtParams, JwtTrigger};
use crate::config::SessionStrategy;
use crate::cookies::{SessionCookieStore, SetCookie};
use crate::error::AuthError;
use crate::jwt::JwtClaims;
use crate::providers::Provider;
use crate::random;
use crate::response::RawResponse;
use crate::types::{Account, Profile, User};

/// Where a successful sign-in redirects: `pages.newUser` for new users (with the callback
/// URL), else the callback URL (Auth.js `lib/actions/callback/index.ts`).
pub(crate) fn success_redirect(ctx: &Ctx<'_>, is_new_user: bool, callback_url: &str) -> String {
    match (&ctx.config.pages.new_user, is_new_user) {
        (Some(page), true) => format!(
            "{page}{}callbackUrl={}",
            if page.contains('?') { '&' } else { '?' },
            crate::cookies::encode_uri_component(callback_url)
        ),
        _ => callback_url.to_owned(),
    }
}

/// The default token at sign-in (Auth.js `lib/actions/callback/index.ts`):
/// `{name, email, picture, sub}`.
pub(crate) fn default_token(user: &User) -> JwtClaims {
    // Room for these four, the sign-in's own claims and the encoder's `iat`, `exp` and
    // `jti`, so the map is not grown on the way.
    let mut t = JwtClaims::with_capacity(12);
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            t.insert(k.to_owned(), v.clone().into());
        }
    };
    put("name", &user.name);
    put("email", &user.email);
    put("picture", &user.image);
    put("sub", &user.id);
    t
}

/// Sign-in data passed to the `jwt` callback.
#[derive(Clone, Copy)]
pub(crate) struct SignedIn<'a> {
    pub user: &'a User,
    pub account: &'a Account,
    pub profile: Option<&'a Profile>,
    /// Whether login-or-register created the user; `None` for credentials, which have no
    /// such step (Auth.js then gives the `jwt` callback `false` and the `signIn` event
    /// nothing).
    pub is_new_user: Option<bool>,
}

/// JWT strategy: runs the `jwt` callback and returns the session cookies to set (Auth.js
/// `lib/actions/callback/index.ts`).
async fn jwt_session_cookies(
    ctx: &Ctx<'_>,
    signed_in: SignedIn<'_>,
    auth: &SignInAuth,
) -> Result<Vec<SetCookie>, AuthError> {
    let config = ctx.config;
    let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
    let trigger = if signed_in.is_new_user == Some(true) {
        JwtTrigger::SignUp
    } else {
        JwtTrigger::SignIn
    };
    let mut token = default_token(signed_in.user);
    // A provider that refreshes access tokens keeps the account's tokens in the JWT.
    let account = signed_in.account;
    if account.refresh_token.is_some()
        && config
            .provider(&account.provider)
            .is_some_and(Provider::refreshes_tokens)
    {
        #[cfg(feature = "oauth")]
        crate::providers::oauth::refresh::put_tokens(
            &mut token,
            &account.provider,
            account.access_token.as_deref(),
            account.expires_at,
            account.refresh_token.as_deref(),
        );
    }
    // How and when the user signed in (OIDC Core §2 `amr` / `auth_time`), for step-up
    // checks and the recent sign-in that sensitive changes need (beyond Auth.js, whose
    // tokens carry neither; it ignores them).
    token.insert(
        "amr".into(),
        auth.amr
            .iter()
            .map(|m| serde_json::Value::from(*m))
            .collect(),
    );
    token.insert("auth_time".into(), auth.auth_time.into());
    if config.jwt_revocation {
        // A session id and sign-in time that later reads keep (the revocation list).
        token.insert("sid".into(), crate::random::uuid_v4().into());
        token.insert(
            "sat".into(),
            crate::types::unix_millis(OffsetDateTime::now_utc()).into(),
        );
        // The upstream provider session that signed it in, whose back-channel logout
        // ends it.
        #[cfg(feature = "oauth")]
        if let Some((provider, sid)) = upstream_session(signed_in) {
            token.insert(
                super::session::UPSTREAM_CLAIM.into(),
                super::session::upstream_key(provider, &sid).into(),
            );
        }
    }
    let token = config
        .callbacks
        .jwt(JwtParams {
            token,
            user: Some(signed_in.user),
            account: Some(signed_in.account),
            profile: signed_in.profile,
            is_new_user: Some(signed_in.is_new_user.unwrap_or(false)),
            trigger: Some(trigger),
            session: None,
        })
        .await
        .map_err(|source| AuthError::CallbackError {
            callback: "jwt",
            source,
        })?;
    let Some(token) = token else {
        return Ok(store.clean());
    };
    let salt: &str = &ctx.cookies.session_token.name;
    let encoded =
        config
            .encode_session(&token, salt)
            .map_err(|source| AuthError::CallbackError {
                callback: "jwt",
                source,
            })?;
    let expires =
        OffsetDateTime::now_utc() + time::Duration::seconds(config.session_max_age as i64);
    Ok(super::write_session_cookie(
        ctx.config, &store, &encoded, expires,
    ))
}

/// How the first factor of a sign-in was proven (RFC 8176 `amr` values, for second
/// factors and the session's `amr` claim).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstFactor {
    /// A credentials provider's `authorize` (`pwd`).
    Password,
    /// A magic link (`otp`: a one-time secret sent out of band).
    EmailLink,
    /// An OAuth / OIDC provider (no method of ours; the provider's own are its business),
    /// trusted or not for its own multi-factor authentication
    /// (`OAuthProvider::trust_upstream_mfa`).
    External {
        /// Whether the provider is trusted for it and its ID token says it was done.
        upstream_mfa: bool,
    },
    /// A passkey (`hwk`), with user verification (`user`: both factors at once).
    Passkey {
        /// Whether the authenticator verified the user (PIN, biometrics).
        user_verified: bool,
    },
}

impl FirstFactor {
    /// The `amr` values of this factor, `mfa` among them when it proves two factors by
    /// itself (a passkey with user verification: the device, and the PIN or biometric that
    /// unlocked it; a trusted provider's own MFA).
    pub(crate) fn amr(self) -> &'static [&'static str] {
        match self {
            FirstFactor::Password => &["pwd"],
            FirstFactor::EmailLink => &["otp"],
            FirstFactor::External {
                upstream_mfa: false,
            } => &[],
            FirstFactor::External { upstream_mfa: true } => &["mfa"],
            FirstFactor::Passkey {
                user_verified: true,
            } => &["hwk", "user", "mfa"],
            FirstFactor::Passkey {
                user_verified: false,
            } => &["hwk"],
        }
    }

    /// Whether it proves two factors by itself (see [`FirstFactor::amr`]).
    pub(crate) fn is_two_factors(self) -> bool {
        self.amr().contains(&"mfa")
    }
}

/// The RFC 8176 `amr` values a sign-in of authcore can record: a factor's
/// ([`FirstFactor::amr`], the second factors'), and `mfa`.
#[cfg(any(feature = "two-factor", test))]
const AMR_VALUES: [&str; 5] = ["pwd", "otp", "hwk", "user", "mfa"];

/// `value` as one of [`AMR_VALUES`], if it is one (a sealed second step's first factor).
#[cfg(any(feature = "two-factor", test))]
pub(crate) fn known_amr(value: &str) -> Option<&'static str> {
    AMR_VALUES.iter().copied().find(|m| *m == value)
}

/// How a session was signed in: the RFC 8176 methods and the time (seconds since the
/// epoch), written into JWT sessions as `amr` and `auth_time`. A first factor's methods
/// are a static list: a sign-in allocates none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignInAuth {
    pub amr: std::borrow::Cow<'static, [&'static str]>,
    pub auth_time: i64,
}

impl SignInAuth {
    /// The first factor, signed in now.
    pub(crate) fn first(factor: FirstFactor) -> Self {
        SignInAuth {
            amr: std::borrow::Cow::Borrowed(factor.amr()),
            auth_time: OffsetDateTime::now_utc().unix_timestamp(),
        }
    }

    /// The methods as owned strings (a stored sign-in's, an audit record's).
    pub(crate) fn amr_strings(&self) -> Vec<String> {
        self.amr.iter().map(|m| (*m).to_owned()).collect()
    }
}

/// A new database session for `user` (database strategy with an adapter; else none),
/// signed in as `auth` says.
pub(crate) async fn open_session(
    ctx: &Ctx<'_>,
    user: &User,
    auth: &SignInAuth,
) -> Result<Option<crate::adapter::AdapterSession>, AuthError> {
    match (&ctx.config.adapter, user.id.as_deref()) {
        (Some(adapter), Some(id)) => new_session(ctx, &**adapter, id, auth).await,
        _ => Ok(None),
    }
}

/// The session cookie (the database session `db_session`, or a JWT), the `signIn` event,
/// and the redirect (`newUser` page or `callback_url`).
pub(crate) async fn complete_sign_in(
    ctx: &Ctx<'_>,
    signed_in: SignedIn<'_>,
    db_session: Option<&crate::adapter::AdapterSession>,
    mut cookies: Vec<SetCookie>,
    auth: &SignInAuth,
    callback_url: &str,
) -> Result<RawResponse, AuthError> {
    let mut session_cookies = match db_session {
        Some(session) => database_session_cookies(ctx, session),
        None => jwt_session_cookies(ctx, signed_in, auth).await?,
    };
    #[cfg(feature = "oauth")]
    remember_upstream_session(ctx, signed_in, db_session).await;
    tracing::info!(
        user = signed_in.user.id.as_deref().unwrap_or_default(),
        provider = %signed_in.account.provider,
        amr = ?auth.amr,
        client = ?ctx.req.client,
        "signed in"
    );
    if let Some(user_id) = &signed_in.user.id {
        ctx.audit(|| {
            crate::audit::AuditEvent::new("signIn")
                .actor(user_id.clone())
                .with("provider", signed_in.account.provider.clone())
                .with("amr", auth.amr_strings())
        })
        .await;
    }
    let r = ctx
        .config
        .events
        .sign_in(crate::callbacks::SignInEvent {
            user: signed_in.user,
            account: Some(signed_in.account),
            profile: signed_in.profile,
            is_new_user: signed_in.is_new_user,
        })
        .await;
    ctx.event_result("signIn", r);
    let mut resp = RawResponse::redirect(success_redirect(
        ctx,
        signed_in.is_new_user == Some(true),
        callback_url,
    ));
    // Most sign-ins add no cookie of their own: no second vector then.
    resp.cookies = if cookies.is_empty() {
        session_cookies
    } else {
        cookies.append(&mut session_cookies);
        cookies
    };
    Ok(resp)
}

/// The longest a session index record is kept, in multiples of the session's `maxAge`:
/// sessions are extended while in use, so the record outlives the session's first expiry.
#[cfg(feature = "oauth")]
const UPSTREAM_RECORD_MAX_AGES: i64 = 2;

/// The upstream OpenID provider session that signed this sign-in in: the provider's id
/// and the `sid` of the ID token it gave (verified by the callback), if any.
#[cfg(feature = "oauth")]
fn upstream_session(signed_in: SignedIn<'_>) -> Option<(&str, String)> {
    /// The longest `sid` kept (they are opaque strings; providers' are short).
    const MAX_SID_LEN: usize = 255;
    let account = signed_in.account;
    if account.kind != crate::types::ProviderType::Oidc {
        return None;
    }
    let claims = crate::oauth::id_token::unverified_claims(account.id_token.as_deref()?).ok()?;
    let sid = claims.get("sid")?.as_str()?;
    (!sid.is_empty() && sid.len() <= MAX_SID_LEN)
        .then(|| (account.provider.as_str(), sid.to_owned()))
}

/// Remembers which upstream provider session signed the database session `db_session`
/// in, so that the provider's back-channel logout token naming that `sid` ends it (OpenID
/// Connect Back-Channel Logout 1.0 §2.7; JWT sessions carry it in a claim instead).
/// Nothing is recorded without a `sid` or an adapter that keeps the records; a failure is
/// logged and the sign-in goes on.
#[cfg(feature = "oauth")]
async fn remember_upstream_session(
    ctx: &Ctx<'_>,
    signed_in: SignedIn<'_>,
    db_session: Option<&AdapterSession>,
) {
    let config = ctx.config;
    let (Some(adapter), Some(user_id), Some(session)) = (
        config.adapter.as_deref(),
        signed_in.user.id.as_deref(),
        db_session,
    ) else {
        return;
    };
    let Some(store) = adapter.upstream_sessions() else {
        return;
    };
    let Some((provider, sid)) = upstream_session(signed_in) else {
        return;
    };
    let record = crate::adapter::UpstreamSession {
        provider: provider.to_owned(),
        sid,
        user_id: user_id.to_owned(),
        session_token: Some(
            config
                .stored_session_token(&session.session_token)
                .into_owned(),
        ),
        expires: upstream_record_expiry(config),
    };
    if let Err(e) = store.record_upstream_session(&record).await {
        ctx.log_error(&AuthError::AdapterError { source: e });
    }
}

/// How long an upstream session is remembered, by a record or a mark: twice the session's
/// `maxAge` from now (sessions are extended while in use), never past the clock's end.
#[cfg(feature = "oauth")]
pub(crate) fn upstream_record_expiry(config: &crate::config::ConfigInner) -> OffsetDateTime {
    OffsetDateTime::now_utc()
        .checked_add(time::Duration::seconds(
            i64::try_from(config.session_max_age)
                .unwrap_or(i64::MAX)
                .saturating_mul(UPSTREAM_RECORD_MAX_AGES),
        ))
        .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
}

/// A new database session for `user_id` (database strategy; else none), signed in as
/// `auth` says.
pub(crate) async fn new_session(
    ctx: &Ctx<'_>,
    adapter: &dyn Adapter,
    user_id: &str,
    auth: &SignInAuth,
) -> Result<Option<AdapterSession>, AuthError> {
    if ctx.config.session_strategy != SessionStrategy::Database {
        return Ok(None);
    }
    let expires =
        OffsetDateTime::now_utc() + time::Duration::seconds(ctx.config.session_max_age as i64);
    // The cookie gets the token; the database its stored form.
    let token = random::uuid_v4();
    let stored = ctx.config.stored_session_token(&token).into_owned();
    let mut session = adapter
        .create_session(AdapterSession {
            session_token: stored,
            user_id: user_id.to_owned(),
            expires,
        })
        .await?;
    ctx.record_session_activity(adapter, &session.session_token)
        .await;
    // How the user signed in, for step-up checks and sensitive changes (the JWT strategy
    // keeps it in claims).
    record_sign_in(ctx, adapter, &session.session_token, auth).await;
    #[cfg(feature = "two-factor")]
    if ctx.config.two_factor.is_some() {
        // A step-up replaces the browser's earlier session, whose cookie this one's
        // overwrites.
        let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
        if let Some(earlier) = store.value()
            && let Err(e) = adapter
                .delete_session(&ctx.config.stored_session_token(&earlier))
                .await
        {
            ctx.log_error(&AuthError::AdapterError { source: e });
        }
    }
    #[cfg(not(feature = "two-factor"))]
    let _ = auth;
    session.session_token = token;
    Ok(Some(session))
}

/// Records how the user of database session `stored` (its stored form) signed in. Not
/// recorded (an adapter without it, a failure: logged), the session's age is its
/// creation's and it shows no second factor; the sign-in goes on.
pub(crate) async fn record_sign_in(
    ctx: &Ctx<'_>,
    adapter: &dyn crate::adapter::Adapter,
    stored: &str,
    auth: &SignInAuth,
) {
    let sign_in = crate::SignInInfo::new(auth.amr_strings(), Some(auth.auth_time));
    let Some(store) = adapter.session_sign_in() else {
        return;
    };
    match store.record_session_sign_in(stored, &sign_in).await {
        Ok(()) => {}
        Err(e) => ctx.log_error(&AuthError::AdapterError { source: e }),
    }
}

/// The cookie carrying a database session token.
pub(crate) fn database_session_cookies(ctx: &Ctx<'_>, session: &AdapterSession) -> Vec<SetCookie> {
    let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
    store.write(&session.session_token, session.expires)
}

#[cfg(test)]
mod tests {
    use super::{AMR_VALUES, FirstFactor, SignInAuth, known_amr};

    #[test]
    fn first_factors_amr_and_whether_they_are_two() {
        let cases: [(FirstFactor, &[&str], bool); 6] = [
            (FirstFactor::Password, &["pwd"], false),
            (FirstFactor::EmailLink, &["otp"], false),
            (
                FirstFactor::External {
                    upstream_mfa: false,
                },
                &[],
                false,
            ),
            (FirstFactor::External { upstream_mfa: true }, &["mfa"], true),
            (
                FirstFactor::Passkey {
                    user_verified: false,
                },
                &["hwk"],
                false,
            ),
            (
                FirstFactor::Passkey {
                    user_verified: true,
                },
                &["hwk", "user", "mfa"],
                true,
            ),
        ];
        for (factor, amr, two) in cases {
            assert_eq!(factor.amr(), amr, "{factor:?}");
            assert_eq!(factor.is_two_factors(), two, "{factor:?}");
            assert_eq!(&*SignInAuth::first(factor).amr, amr, "{factor:?}");
            for m in amr {
                assert_eq!(known_amr(m), Some(*m), "{factor:?}: {m}");
            }
        }
    }

    #[test]
    fn known_amr_values_are_the_factors_and_nothing_else() {
        #[cfg(feature = "two-factor")]
        for factor in [
            crate::two_factor::SecondFactor::Totp,
            crate::two_factor::SecondFactor::RecoveryCode,
            crate::two_factor::SecondFactor::Passkey {
                user_verified: false,
            },
            crate::two_factor::SecondFactor::Passkey {
                user_verified: true,
            },
        ] {
            for m in factor.amr() {
                assert_eq!(known_amr(m), Some(*m), "{factor:?}: {m}");
            }
        }
        for m in AMR_VALUES {
            assert_eq!(known_amr(m), Some(m));
        }
        for other in ["", "PWD", "pwd ", "imp", "sms", "mfa\0"] {
            assert_eq!(known_amr(other), None, "{other:?}");
        }
    }
}
