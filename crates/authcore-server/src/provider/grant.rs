//! The authorization code and what it is exchanged for (RFC 6749 §4.1.3–4.1.4, RFC 7636
//! §4.6, OpenID Connect Core §3.1.3): the code's contents, the token request checked
//! against them, and the claims of the ID token and the access token (RFC 9068). Pure:
//! sealing, signing and the single-use mark are the endpoints' (`mod.rs`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

use super::request::AuthorizationRequest;

/// What an authorization code stands for, sealed into the code itself (a JWE under the auth
/// secret, with a salt of its own): nothing is stored until it is redeemed, and then only its
/// `jti`, marked as used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeGrant {
    /// The client it was issued to.
    pub client_id: String,
    /// The redirect URI it was sent to (the token request must name the same).
    pub redirect_uri: String,
    /// The user (the adapter's user id).
    pub sub: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The `nonce` of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The PKCE S256 challenge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge: Option<String>,
    /// When the user signed in (seconds since 1970), where the session records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
    /// How the user signed in (RFC 8176), where the session records it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
    /// Marked as used at the first redemption.
    pub jti: String,
}

impl CodeGrant {
    /// The grant of `request` to user `sub`.
    pub fn new(
        request: &AuthorizationRequest,
        sub: &str,
        auth_time: Option<i64>,
        amr: Vec<String>,
        jti: String,
    ) -> Self {
        CodeGrant {
            client_id: request.client_id.clone(),
            redirect_uri: request.redirect_uri.clone(),
            sub: sub.to_owned(),
            scopes: request.scopes.clone(),
            nonce: request.nonce.clone(),
            code_challenge: request.code_challenge.clone(),
            auth_time,
            amr,
            jti,
        }
    }

    /// Whether this grant may be redeemed by `client_id` with `redirect_uri` and the PKCE
    /// `verifier`; the `error_description` when not (all are `invalid_grant`).
    pub fn check_redemption(
        &self,
        client_id: &str,
        redirect_uri: Option<&str>,
        verifier: Option<&str>,
    ) -> Result<(), &'static str> {
        if self.client_id != client_id {
            return Err("the code was issued to another client");
        }
        if redirect_uri != Some(self.redirect_uri.as_str()) {
            return Err("redirect_uri differs from the authorization request's");
        }
        match (&self.code_challenge, verifier) {
            (Some(challenge), Some(verifier)) => {
                if !is_verifier(verifier) {
                    return Err("code_verifier is not 43 to 128 unreserved characters");
                }
                let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                if bool::from(computed.as_bytes().ct_eq(challenge.as_bytes())) {
                    Ok(())
                } else {
                    Err("code_verifier does not match the code_challenge")
                }
            }
            (Some(_), None) => Err("code_verifier is missing"),
            // A verifier for a code issued without a challenge: a PKCE downgrade (RFC 9700
            // §2.1.1), refused.
            (None, Some(_)) => Err("the authorization request had no code_challenge"),
            (None, None) => Ok(()),
        }
    }
}

/// A PKCE code verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
fn is_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The user's claims a scope gives (OpenID Connect Core §5.4): `profile` → `name`,
/// `picture`; `email` → `email`, `email_verified`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UserClaims {
    /// The subject.
    pub sub: String,
    /// `name` (profile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `picture` (profile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<String>,
    /// `email` (email).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// `email_verified` (email).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
}

impl UserClaims {
    /// The claims of `user` that `scopes` give.
    pub fn of(user: &authcore::adapter::AdapterUser, scopes: &[String]) -> Self {
        let has = |s: &str| scopes.iter().any(|g| g == s);
        let mut c = UserClaims {
            sub: user.id.clone(),
            ..UserClaims::default()
        };
        if has("profile") {
            c.name.clone_from(&user.name);
            c.picture.clone_from(&user.image);
        }
        if has("email") && user.email.is_some() {
            c.email.clone_from(&user.email);
            c.email_verified = Some(user.email_verified.is_some());
        }
        c
    }
}

/// The ID token's claims (OpenID Connect Core §2).
#[derive(Debug, Clone, Serialize)]
pub struct IdTokenClaims<'a> {
    /// The issuer.
    pub iss: &'a str,
    /// The client.
    pub aud: &'a str,
    /// The user and the claims the scopes give.
    #[serde(flatten)]
    pub user: &'a UserClaims,
    /// Issued at.
    pub iat: i64,
    /// Expiry.
    pub exp: i64,
    /// The request's nonce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<&'a str>,
    /// When the user signed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
    /// How (RFC 8176).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub amr: &'a [String],
}

/// The access token's claims (RFC 9068 §2.2): for authcore's own userinfo endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccessTokenClaims {
    /// The issuer.
    pub iss: String,
    /// Its audience: the issuer's userinfo endpoint.
    pub aud: String,
    /// The user.
    pub sub: String,
    /// The client.
    pub client_id: String,
    /// The scopes, space-separated.
    pub scope: String,
    /// Issued at.
    pub iat: i64,
    /// Expiry.
    pub exp: i64,
    /// Its id.
    pub jti: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// RFC 7636 appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn grant(challenge: Option<&str>) -> CodeGrant {
        CodeGrant {
            client_id: "app".into(),
            redirect_uri: "https://app.example.com/cb".into(),
            sub: "u1".into(),
            scopes: vec!["openid".into()],
            nonce: None,
            code_challenge: challenge.map(str::to_owned),
            auth_time: None,
            amr: Vec::new(),
            jti: "j".into(),
        }
    }

    #[test]
    fn redemption_checks_client_redirect_and_pkce() {
        let cb = Some("https://app.example.com/cb");
        assert_eq!(
            grant(Some(CHALLENGE)).check_redemption("app", cb, Some(VERIFIER)),
            Ok(())
        );
        assert_eq!(grant(None).check_redemption("app", cb, None), Ok(()));
        for (g, client, uri, verifier) in [
            (grant(Some(CHALLENGE)), "other", cb, Some(VERIFIER)),
            (
                grant(Some(CHALLENGE)),
                "app",
                Some("https://app.example.com/cb/"),
                Some(VERIFIER),
            ),
            (grant(Some(CHALLENGE)), "app", None, Some(VERIFIER)),
            (grant(Some(CHALLENGE)), "app", cb, None),
            (
                grant(Some(CHALLENGE)),
                "app",
                cb,
                Some("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl"),
            ),
            (grant(Some(CHALLENGE)), "app", cb, Some(CHALLENGE)),
            (grant(Some(CHALLENGE)), "app", cb, Some("short")),
            (grant(None), "app", cb, Some(VERIFIER)),
        ] {
            assert!(
                g.check_redemption(client, uri, verifier).is_err(),
                "{client} {uri:?} {verifier:?}"
            );
        }
    }
}
