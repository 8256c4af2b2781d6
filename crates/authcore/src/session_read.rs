//! A host's own session reads: [`Auth::read_session`] for a request to one of its routes
//! (extractors, guards, a gateway, an OpenID Provider), [`Auth::read_session_once`] for the
//! framework integrations, and Auth.js's `getToken` ([`Auth::get_token`]).

use crate::actions::session::{ReadRequest, SessionState};
use crate::cookies::SetCookie;
use crate::error::AuthError;
use crate::handler::Auth;
use crate::request::SessionSource;
use crate::session_json::SessionJson;

/// How [`Auth::read_session`] reads a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Re-issue a JWT session cookie only once it is at least this old (by the token's
    /// `iat`; at most half the session's `max_age` is used), unless a token refresh or the
    /// `jwt` callback changed the token: a younger cookie is left as it is and no
    /// `Set-Cookie` is returned for it. `None` (the default): re-issued on every read, as
    /// `GET <basePath>/session` does. Database sessions keep their own `update_age` rule.
    pub refresh_jwt_after: Option<std::time::Duration>,
    /// Also give the database session's id ([`SessionRead::session_id`]: one SHA-256 of
    /// the session token), for a host that names sessions (an OpenID Provider's `sid`).
    /// Off by default: most reads do not need it.
    pub session_id: bool,
}

impl ReadOptions {
    /// Sets [`ReadOptions::session_id`].
    pub fn with_session_id(mut self) -> Self {
        self.session_id = true;
        self
    }

    /// Sets [`ReadOptions::refresh_jwt_after`].
    pub fn refresh_jwt_after(mut self, age: std::time::Duration) -> Self {
        self.refresh_jwt_after = Some(age);
        self
    }
}

/// What [`Auth::read_session`] found.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SessionRead {
    /// The session (its JSON, its user's id, how the user signed in); `None` when signed
    /// out.
    pub session: Option<SessionJson>,
    /// When the session ends, as this read left it; `None` when signed out.
    pub expires: Option<time::OffsetDateTime>,
    /// The database session's id ([`SessionInfo::id`](crate::account::SessionInfo::id)) when
    /// [`ReadOptions::session_id`] asked for it; `None` with JWT sessions.
    pub session_id: Option<String>,
    /// `Set-Cookie` values refreshing or clearing the session cookie, which the host's
    /// answer should carry so that sessions keep rolling.
    pub set_cookie: Vec<http::HeaderValue>,
}

impl SessionRead {
    /// What a read found, as the host sees it: a session only where the `session` callback
    /// answered one that is not `null`.
    fn from_state(state: SessionState) -> Self {
        let set_cookie = state
            .cookies
            .iter()
            .filter_map(SetCookie::header_value)
            .collect();
        let Some(json) = state.body.filter(|v| !v.is_null()) else {
            return SessionRead {
                set_cookie,
                ..SessionRead::default()
            };
        };
        let mut session = SessionJson::from_json(json);
        if let Some(id) = state.user_id {
            session = session.with_user_id(id);
        }
        if let Some(sign_in) = state.sign_in {
            session = session.with_sign_in(sign_in);
        }
        SessionRead {
            session: Some(session),
            expires: state.expires,
            session_id: state.session_id,
            set_cookie,
        }
    }
}

/// Where a framework integration keeps what one request's session read found (its request
/// extensions), so that the guards and extractors of that request read the cookie once:
/// [`Auth::read_session_once`] reads through it.
pub trait SessionSlot {
    /// What an earlier read of this request found: `Some(Some(session))` signed in,
    /// `Some(None)` signed out, `None` not read yet.
    fn found(&self) -> Option<Option<SessionJson>>;
    /// Keeps what this read found.
    fn keep(&mut self, found: Option<SessionJson>);
}

/// Options of [`Auth::get_token`] and [`Auth::get_raw_token`] (Auth.js `getToken`'s
/// `secureCookie`, `cookieName` and `salt`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GetTokenOptions {
    /// Read the `__Secure-` session cookie (as on HTTPS).
    pub secure_cookie: bool,
    /// Read this cookie instead of the session cookie.
    pub cookie_name: Option<String>,
    /// The JWE key-derivation salt; defaults to the cookie name.
    pub salt: Option<String>,
}

impl GetTokenOptions {
    /// The defaults: the non-secure session cookie, salted with its name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the `__Secure-` cookie (`secureCookie`).
    pub fn secure_cookie(mut self, secure: bool) -> Self {
        self.secure_cookie = secure;
        self
    }

    /// Reads another cookie (`cookieName`); the salt follows unless set.
    pub fn cookie_name(mut self, name: impl Into<String>) -> Self {
        self.cookie_name = Some(name.into());
        self
    }

    /// Uses another salt (`salt`).
    pub fn salt(mut self, salt: impl Into<String>) -> Self {
        self.salt = Some(salt.into());
        self
    }
}

impl Auth {
    /// Reads the session of a request to another route of the host (guards, extractors, a
    /// gateway): from the request's cookies, on the site its host headers name, as
    /// `GET <basePath>/session` reads it (the `jwt` and `session` callbacks and the `session`
    /// event run, a database session is updated), and returns the session with the
    /// `Set-Cookie` values that refresh (or clear) the session cookie, which the host should
    /// add to its response so that sessions keep rolling.
    ///
    /// `uri` is the incoming request's URI (with the `Host` header it picks secure or plain
    /// cookie names). Errors are configuration problems (e.g. `UntrustedHost`) or cookies
    /// that do not parse, not "signed out".
    ///
    /// ```
    /// # async fn demo(auth: authcore::Auth, uri: http::Uri, headers: http::HeaderMap) {
    /// use std::time::Duration;
    /// // A gateway that checks every request re-issues the JWT session cookie only now and then.
    /// let options = authcore::ReadOptions::default().refresh_jwt_after(Duration::from_secs(3600));
    /// if let Ok(read) = auth.read_session(&uri, &headers, &options).await
    ///     && let Some(session) = read.session
    /// {
    ///     println!("signed in as {:?}", session.user_id());
    /// }
    /// # }
    /// ```
    #[doc(alias = "auth")]
    pub async fn read_session(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        options: &ReadOptions,
    ) -> Result<SessionRead, AuthError> {
        let c = &*self.config().inner;
        let source = self.session_source(uri, headers)?;
        crate::actions::assert_session_source(c, &source).inspect_err(|e| c.logger.error(e))?;
        let request = ReadRequest {
            cookies: &source.cookies,
            https: source.is_https(),
            // The session keeps the `User-Agent` its own requests to the auth routes give.
            user_agent: None,
            update: None,
            // At most half the session's lifetime, so an active session never runs out.
            jwt_refresh_age: options
                .refresh_jwt_after
                .map(|age| age.as_secs().min(c.session_max_age / 2)),
            sign_in: true,
            session_id: options.session_id,
        };
        let state = crate::actions::session::read(c, &request).await;
        Ok(SessionRead::from_state(state))
    }

    /// The session of a request to `uri` with `headers`, read once per request: what `slot`
    /// kept from an earlier read, else [`Auth::read_session`] (its finding kept in `slot`),
    /// with the `Set-Cookie` values that refresh the session (none when the slot
    /// answered). The core of the framework integrations' `Session` extractors and guards;
    /// an error (a configuration error, logged) keeps nothing.
    pub async fn read_session_once(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        slot: &mut impl SessionSlot,
    ) -> Result<(Option<SessionJson>, Vec<http::HeaderValue>), AuthError> {
        if let Some(found) = slot.found() {
            return Ok((found, Vec::new()));
        }
        let read = self
            .read_session(uri, headers, &ReadOptions::default())
            .await?;
        slot.keep(read.session.clone());
        Ok((read.session, read.set_cookie))
    }

    /// The site and cookies of a request to `uri` with `headers`: what the host's own
    /// session reads start from.
    pub(crate) fn session_source(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<SessionSource, AuthError> {
        crate::request::session_source(&self.config().inner, uri, headers).map_err(AuthError::from)
    }

    /// Decodes the session token of a request (Auth.js `getToken` in `jwt.ts`): from the
    /// (chunked) session cookie, else from `Authorization: Bearer <token>` (percent-decoded),
    /// with Auth.js's options: `secureCookie` picks the `__Secure-` cookie name, the cookie
    /// name defaults to the session cookie's and the salt to the cookie name. Any failure
    /// gives `None`.
    ///
    /// ```
    /// # use authcore::{Auth, AuthConfig, GetTokenOptions, providers::CredentialsProvider};
    /// # let auth = Auth::new(AuthConfig::builder().secret("a long random secret-xxxxxxxxxxx").trust_host(true)
    /// #     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) })).build().unwrap());
    /// let claims = authcore::serde_json::json!({"sub": "1", "name": "Ada"});
    /// let token = auth.config().jwt()
    ///     .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
    ///     .unwrap();
    /// let mut headers = authcore::http::HeaderMap::new();
    /// headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    /// let decoded = auth.get_token(&headers, &GetTokenOptions::new()).expect("a valid bearer token");
    /// assert_eq!(decoded["name"], "Ada");
    /// ```
    #[doc(alias = "getToken")]
    pub fn get_token(
        &self,
        headers: &http::HeaderMap,
        options: &GetTokenOptions,
    ) -> Option<crate::jwt::JwtClaims> {
        let raw = self.get_raw_token(headers, options)?;
        let c = &*self.config().inner;
        let session = &c.cookies(options.secure_cookie).session_token;
        let salt = options
            .salt
            .as_deref()
            .or(options.cookie_name.as_deref())
            .unwrap_or(&session.name);
        c.decode_session(&raw, salt).ok().flatten()
    }

    /// The undecoded session token of a request (`getToken({raw: true})`), read as
    /// [`Auth::get_token`] reads it. A Bearer value with malformed percent-encoding gives
    /// `None`, as in Auth.js.
    pub fn get_raw_token(
        &self,
        headers: &http::HeaderMap,
        options: &GetTokenOptions,
    ) -> Option<String> {
        // The session cookie prepared at build time, or the same options under another name.
        let session = &self
            .config()
            .inner
            .cookies(options.secure_cookie)
            .session_token;
        let renamed;
        let spec = match &options.cookie_name {
            Some(name) => {
                renamed = crate::cookies::ResolvedCookie {
                    name: name.as_str().into(),
                    options: session.options.clone(),
                };
                &renamed
            }
            None => session,
        };
        let cookies = crate::cookies::RequestCookies::parse(
            headers
                .get_all(http::header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        let store = crate::cookies::SessionCookieStore::new(spec, &cookies);
        if let Some(v) = store.value() {
            return Some(v.into_owned());
        }
        let auth = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
        let token = auth.strip_prefix("Bearer ")?;
        crate::cookies::decode_uri_component(token)
    }
}

#[cfg(test)]
mod slot_tests {
    use super::SessionSlot;
    use crate::session_json::SessionJson;

    /// A slot that counts what it was asked to keep.
    #[derive(Default)]
    struct Counting {
        kept: Option<Option<SessionJson>>,
        keeps: usize,
    }

    impl SessionSlot for Counting {
        fn found(&self) -> Option<Option<SessionJson>> {
            self.kept.clone()
        }
        fn keep(&mut self, found: Option<SessionJson>) {
            self.keeps += 1;
            self.kept = Some(found);
        }
    }

    /// The first read looks the session up and keeps its finding; the next read of the
    /// same request answers from the slot, without a read or cookies.
    #[tokio::test]
    async fn a_request_reads_its_session_once() {
        let auth = crate::Auth::new(
            crate::AuthConfig::builder()
                .secret("a secret of at least thirty-two characters")
                .trust_host(true)
                .provider(
                    crate::providers::CredentialsProvider::new()
                        .authorize(|_, _| async { Ok(None) }),
                )
                .build()
                .expect("valid configuration"),
        );
        let uri: http::Uri = "http://localhost:3000/me".parse().expect("uri");
        let headers = http::HeaderMap::new();
        let mut slot = Counting::default();
        let (found, _) = auth
            .read_session_once(&uri, &headers, &mut slot)
            .await
            .expect("read");
        assert_eq!((found, slot.keeps), (None, 1));
        let signed_in = SessionJson::from_json(serde_json::json!({"user": {"name": "Ada"}}));
        slot.kept = Some(Some(signed_in.clone()));
        let (found, cookies) = auth
            .read_session_once(&uri, &headers, &mut slot)
            .await
            .expect("read");
        assert_eq!((found, cookies.len(), slot.keeps), (Some(signed_in), 0, 1));
    }
}
