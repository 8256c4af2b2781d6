//! Opaque access tokens: for clients with `access_token_format = "opaque"`, the access
//! token's claims are sealed under the auth secret ([`ProviderState::seal`], a salt of their
//! own) rather than signed. The client and any API learn nothing from them and ask the
//! introspection endpoint (RFC 7662) what they are; userinfo, introspection and revocation
//! open them here. No signature is made for them, and a value sealed for another purpose (a
//! code, a refresh token, a session) does not open as one: each purpose has its own derived
//! key.

use std::sync::Arc;

use authcore_keys::unix_time;

use crate::grant::AccessTokenClaims;
use crate::single_use::ACCESS_TOKEN_SALT;
use crate::{ProviderState, USERINFO_PATH};

impl ProviderState {
    /// The claims of `token` when it is an access token of this provider, unexpired: a
    /// signed one (its signature checked) or an opaque one (opened, its issuer, audience and
    /// expiry checked as a signed one's are, with no leeway). Either kind is checked once;
    /// after that it is known by its text and only its expiry compared again (the claims
    /// then shared with that memory).
    pub(crate) fn access_token_claims(&self, token: &str) -> Option<Arc<AccessTokenClaims>> {
        let p = &self.provider;
        let now = unix_time();
        if let Some(claims) = p.verified.get(token, now) {
            return Some(claims);
        }
        // An opaque token is a `dir` JWE, `header..iv.ciphertext.tag`: its second segment
        // is empty, where a JWS's is its payload.
        let sealed = token
            .split_once('.')
            .is_some_and(|(_, rest)| rest.starts_with('.'));
        let claims = if sealed {
            let claims = self.unseal::<AccessTokenClaims>(token, ACCESS_TOKEN_SALT)?;
            let issued_here = claims.iss == p.issuer() && claims.aud == p.url(USERINFO_PATH);
            (issued_here && claims.exp >= now).then_some(claims)?
        } else {
            p.signed_access_token(token)?
        };
        let claims = Arc::new(claims);
        p.verified.insert(token, &claims);
        Some(claims)
    }
}
