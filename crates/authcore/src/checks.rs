//! Sealed check cookies for `state`, PKCE and `nonce` (Auth.js
//! `lib/actions/callback/oauth/checks.ts`): the value and the provider id, encrypted as a JWE
//! with the cookie name as salt, valid for 15 minutes.

use std::sync::Arc;

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::cookies::{RequestCookies, ResolvedCookie, SameSite, SetCookie};
use crate::error::AuthError;
use crate::jwt::JwtCodec;
use crate::types::JsonObject;

/// Lifetime of check cookies and of the state / challenge JWEs.
pub(crate) const CHECK_MAX_AGE: u64 = 15 * 60;

/// What happens to a check cookie, for its debug message.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CheckVerb {
    Create,
    Parse,
    Use,
    Clear,
}

/// Which check a cookie carries; the name is used in Auth.js error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckKind {
    State,
    Pkce,
    Nonce,
}

impl CheckKind {
    /// The Auth.js debug message for `verb` on this cookie (`CREATE_PKCECODEVERIFIER` …),
    /// static so that nothing is built unless debug is on.
    pub(crate) fn debug_message(self, verb: CheckVerb) -> &'static str {
        use CheckVerb::{Clear, Create, Parse, Use};
        match (verb, self) {
            (Create, CheckKind::State) => "CREATE_STATE",
            (Create, CheckKind::Pkce) => "CREATE_PKCECODEVERIFIER",
            (Create, CheckKind::Nonce) => "CREATE_NONCE",
            (Parse, CheckKind::State) => "PARSE_STATE",
            (Parse, CheckKind::Pkce) => "PARSE_PKCECODEVERIFIER",
            (Parse, CheckKind::Nonce) => "PARSE_NONCE",
            (Use, CheckKind::State) => "USE_STATE",
            (Use, CheckKind::Pkce) => "USE_PKCECODEVERIFIER",
            (Use, CheckKind::Nonce) => "USE_NONCE",
            (Clear, CheckKind::State) => "CLEAR_STATE",
            (Clear, CheckKind::Pkce) => "CLEAR_PKCECODEVERIFIER",
            (Clear, CheckKind::Nonce) => "CLEAR_NONCE",
        }
    }

    fn key(self) -> &'static str {
        match self {
            CheckKind::State => "state",
            CheckKind::Pkce => "pkceCodeVerifier",
            CheckKind::Nonce => "nonce",
        }
    }
}

/// The cookie options for this request: `form_post` responses arrive by a cross-site POST,
/// so state and nonce cookies need `SameSite=None; Secure` then (pkce is unchanged).
pub(crate) fn cookie_for(
    cookie: &ResolvedCookie,
    kind: CheckKind,
    form_post: bool,
) -> ResolvedCookie {
    if form_post && kind != CheckKind::Pkce {
        let mut options = (*cookie.options).clone();
        options.same_site = SameSite::None;
        options.secure = true;
        ResolvedCookie {
            name: cookie.name.clone(),
            options: Arc::new(options),
        }
    } else {
        cookie.clone()
    }
}

/// Seals `claims` into `cookie`: a JWE with the cookie name as salt, valid for
/// [`CHECK_MAX_AGE`]. The one mechanism behind the OAuth check cookies and the WebAuthn
/// challenge cookie.
pub(crate) fn seal_claims(
    codec: &JwtCodec,
    cookie: &ResolvedCookie,
    claims: &JsonObject,
) -> Result<SetCookie, AuthError> {
    let token = codec
        .encode(claims, &cookie.name, CHECK_MAX_AGE)
        .map_err(|e| AuthError::InvalidCheck {
            message: format!("could not seal the {} cookie: {e}", cookie.name),
        })?;
    let expires = OffsetDateTime::now_utc() + time::Duration::seconds(CHECK_MAX_AGE as i64);
    Ok(cookie.set(token, Some(expires)))
}

/// The claims of the sealed `cookie` of a request; `None` when it is missing, does not
/// decode, or has expired.
pub(crate) fn open_claims(
    codec: &JwtCodec,
    cookie: &ResolvedCookie,
    cookies: &RequestCookies,
) -> Option<JsonObject> {
    let raw = cookies.get(&cookie.name)?;
    codec.decode(raw, &cookie.name).ok().flatten()
}

/// Creates the sealed cookie holding `value` for `provider`.
pub(crate) fn seal(
    codec: &JwtCodec,
    cookie: &ResolvedCookie,
    value: &str,
    provider: &str,
) -> Result<SetCookie, AuthError> {
    let mut claims = JsonObject::new();
    claims.insert("value".into(), json!(value));
    claims.insert("provider".into(), json!(provider));
    seal_claims(codec, cookie, &claims)
}

/// Reads and verifies the check cookie; returns its value and the cookie clearing it.
/// Missing, undecodable, empty or bound to another provider: `InvalidCheck`.
pub(crate) fn consume(
    codec: &JwtCodec,
    cookie: &ResolvedCookie,
    cookies: &RequestCookies,
    kind: CheckKind,
    provider: &str,
) -> Result<(String, SetCookie), AuthError> {
    let invalid = || AuthError::InvalidCheck {
        message: format!("{} value could not be parsed", kind.key()),
    };
    let claims = open_claims(codec, cookie, cookies).ok_or_else(invalid)?;
    let value = match claims.get("value") {
        Some(Value::String(v)) if !v.is_empty() => v.clone(),
        _ => return Err(invalid()),
    };
    if claims.get("provider").and_then(Value::as_str) != Some(provider) {
        return Err(invalid());
    }
    Ok((value, cookie.clear()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cookies::{CookieSet, encode_uri_component};

    #[test]
    fn cookies_are_bound_to_their_provider() {
        let codec = JwtCodec::new(&["secret"]).unwrap();
        let set = CookieSet::defaults(true);
        for (spec, kind) in [
            (&set.state, CheckKind::State),
            (&set.pkce_code_verifier, CheckKind::Pkce),
            (&set.nonce, CheckKind::Nonce),
        ] {
            let cookie = ResolvedCookie::new(spec);
            let sealed = seal(&codec, &cookie, "v-123", "github").unwrap();
            let header = format!("{}={}", sealed.name, encode_uri_component(&sealed.value));
            let jar = RequestCookies::parse([header.as_str()]);
            let (value, clear) = consume(&codec, &cookie, &jar, kind, "github").unwrap();
            assert_eq!(value, "v-123");
            assert_eq!(clear.max_age, Some(0));
            let err = consume(&codec, &cookie, &jar, kind, "google").unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("{} value could not be parsed", kind.key())
            );
            let empty = RequestCookies::default();
            assert!(consume(&codec, &cookie, &empty, kind, "github").is_err());
            // Sealed under another cookie name (salt): rejected.
            let other = ResolvedCookie::new(&set.session_token);
            let jar = RequestCookies::parse([format!(
                "{}={}",
                cookie.name,
                seal(&codec, &other, "v", "github").unwrap().value
            )
            .as_str()]);
            assert!(consume(&codec, &cookie, &jar, kind, "github").is_err());
        }
    }

    #[test]
    fn form_post_relaxes_same_site_for_state_and_nonce_only() {
        let set = CookieSet::defaults(false);
        let state = cookie_for(&ResolvedCookie::new(&set.state), CheckKind::State, true);
        assert_eq!(state.options.same_site, SameSite::None);
        assert!(state.options.secure);
        let pkce = cookie_for(
            &ResolvedCookie::new(&set.pkce_code_verifier),
            CheckKind::Pkce,
            true,
        );
        assert_eq!(pkce.options.same_site, SameSite::Lax);
    }
}
