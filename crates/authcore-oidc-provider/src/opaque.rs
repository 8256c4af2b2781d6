//! Opaque access tokens: for clients with `access_token_format = "opaque"`, the access
//! token's claims are sealed under the auth secret (authcore's JWE, a salt of their own)
//! rather than signed. The client and any API learn nothing from them and ask the
//! introspection endpoint (RFC 7662) what they are; userinfo, introspection and revocation
//! open them here. No signature is made for them, the signing keys never see them, and a
//! value sealed for another purpose (a code, a refresh token, a session) does not open as
//! one: each purpose has its own derived key.

use authcore_keys::unix_time;
use serde_json::Value;

use crate::grant::AccessTokenClaims;
use crate::single_use::ACCESS_TOKEN_SALT;
use crate::{ProviderState, USERINFO_PATH};

impl ProviderState {
    /// `access` sealed as an opaque token valid for `ttl` seconds from `access.iat`.
    /// The seal writes its own `iat`, `exp` and `jti` (a random UUID, the id revocation
    /// marks name); `None` when it cannot be sealed.
    pub(crate) fn seal_access_token(&self, access: &AccessTokenClaims, ttl: i64) -> Option<String> {
        let Ok(Value::Object(claims)) = serde_json::to_value(access) else {
            return None;
        };
        self.auth
            .config()
            .jwt()
            .encode_at(
                &claims,
                ACCESS_TOKEN_SALT,
                u64::try_from(ttl).ok()?,
                access.iat,
            )
            .ok()
    }

    /// The claims of `token` when it is an access token of this provider, unexpired: a
    /// signed one (its signature checked) or an opaque one (opened, its issuer, audience and
    /// expiry checked as a signed one's are, with no leeway); either kind is checked once
    /// and found among those checked lately after that.
    pub(crate) fn access_token_claims(&self, token: &str) -> Option<AccessTokenClaims> {
        // An opaque token is a `dir` JWE, `header..iv.ciphertext.tag`: its second segment
        // is empty, where a JWS's is its payload.
        let sealed = token
            .split_once('.')
            .is_some_and(|(_, rest)| rest.starts_with('.'));
        if !sealed {
            return self.provider.verified_access_token(token);
        }
        let now = unix_time();
        let verified = &self.provider.verified;
        if let Some(claims) = verified.get(token, now) {
            return Some(claims);
        }
        let claims = self
            .auth
            .config()
            .jwt()
            .decode(token, ACCESS_TOKEN_SALT)
            .ok()??;
        let claims: AccessTokenClaims = serde_json::from_value(Value::Object(claims)).ok()?;
        let issued_here =
            claims.iss == self.provider.issuer() && claims.aud == self.provider.url(USERINFO_PATH);
        if !issued_here || claims.exp < now {
            return None;
        }
        verified.insert(token, &claims);
        Some(claims)
    }
}
