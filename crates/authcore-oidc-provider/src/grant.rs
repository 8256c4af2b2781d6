//! The authorization code and what it is exchanged for (RFC 6749 §4.1.3–4.1.4, RFC 7636
//! §4.6, OpenID Connect Core §3.1.3): the code's contents, the token request checked
//! against them, the refresh token's contents (RFC 6749 §6, rotated as RFC 9700 §4.14.2
//! says), and the claims of the ID token, the access token (RFC 9068) and the logout token
//! (OpenID Connect Back-Channel Logout 1.0 §2.4). Pure: sealing, signing and the single-use
//! marks are the endpoints' (`mod.rs`).
//!
//! A code starts a *grant*, named by the code's `jti`: the access tokens and the refresh
//! tokens it leads to carry that name, so revoking the grant (a replayed code, a reused
//! refresh token, a revoked refresh token) revokes all of them at once.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

use super::request::AuthorizationRequest;
use crate::dpop::Confirmation;

/// Who granted what to which client, and how they had signed in: what a code and the
/// refresh tokens after it stand for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The client (RFC 6749 §6: only it may use the grant's tokens).
    pub client_id: String,
    /// The user (the adapter's user id).
    pub sub: String,
    /// The scopes granted (every refresh token of the grant has them all, §6).
    pub scopes: Vec<String>,
    /// When the user signed in (seconds since 1970), where the session records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
    /// How the user signed in (RFC 8176), where the session records it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
    /// The authcore session the user signed in with (`sid`, OpenID Connect Back-Channel
    /// Logout 1.0 §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// The epoch of the user's access for the client when it was granted
    /// ([`authcore::adapter::AppAccess::epoch`]): once the user revokes the access, the
    /// epoch moves on and the grant is void.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub epoch: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// What an authorization code stands for, sealed into the code itself (a JWE under the auth
/// secret, with a salt of its own): nothing is stored until it is redeemed, and then only its
/// `jti`, marked as used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeGrant {
    /// The grant.
    #[serde(flatten)]
    pub grant: Grant,
    /// The redirect URI it was sent to (the token request must name the same).
    pub redirect_uri: String,
    /// The `nonce` of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The PKCE S256 challenge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge: Option<String>,
    /// The thumbprint of the DPoP key the code is bound to (`dpop_jkt`, RFC 9449 §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// Marked as used at the first redemption; the name of the grant it starts.
    pub jti: String,
}

impl CodeGrant {
    /// The grant of `request` to user `sub`.
    pub fn new(
        request: &AuthorizationRequest,
        sub: &str,
        auth_time: Option<i64>,
        amr: Vec<String>,
        sid: Option<String>,
        epoch: i64,
        jti: String,
    ) -> Self {
        CodeGrant {
            grant: Grant {
                client_id: request.client_id.clone(),
                sub: sub.to_owned(),
                scopes: request.scopes.clone(),
                auth_time,
                amr,
                sid,
                epoch,
            },
            redirect_uri: request.redirect_uri.clone(),
            nonce: request.nonce.clone(),
            code_challenge: request.code_challenge.clone(),
            dpop_jkt: request.dpop_jkt.clone(),
            jti,
        }
    }

    /// Whether the token request's DPoP key (`jkt`, the thumbprint of its proof's key)
    /// may redeem this code: any or none for a code bound to no key, that key for a code
    /// bound to one (RFC 9449 §10); the `error_description` when not (`invalid_grant`).
    pub fn check_key(&self, jkt: Option<&str>) -> Result<(), &'static str> {
        match (&self.dpop_jkt, jkt) {
            (None, _) => Ok(()),
            (Some(bound), Some(jkt)) if bound == jkt => Ok(()),
            (Some(_), Some(_)) => Err("the code is bound to another DPoP key (dpop_jkt)"),
            (Some(_), None) => {
                Err("the code is bound to a DPoP key (dpop_jkt): send a proof of it")
            }
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
        if self.grant.client_id != client_id {
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

/// What a refresh token stands for, sealed into the token itself (as a code is). Each use
/// spends it and gives the next of the same grant; a spent one used again revokes the grant
/// (reuse detection, RFC 9700 §4.14.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshGrant {
    /// What was granted.
    #[serde(flatten)]
    pub grant: Grant,
    /// The grant's name: the code's `jti`.
    pub grant_id: String,
    /// This token's id, marked as used at its use.
    pub jti: String,
    /// The thumbprint of the key it is bound to (a public client's, RFC 9449 §5): used
    /// only with a DPoP proof of that key, and so are the tokens after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
}

impl RefreshGrant {
    /// The first refresh token of `grant`, named `grant_id` (the code's or the device
    /// authorization's id, which its revocation marks).
    pub fn first(grant: &Grant, grant_id: &str, jti: String) -> Self {
        RefreshGrant {
            grant: grant.clone(),
            grant_id: grant_id.to_owned(),
            jti,
            jkt: None,
        }
    }

    /// This token, bound to the key of thumbprint `jkt` (if any).
    pub fn bound_to(self, jkt: Option<String>) -> Self {
        RefreshGrant { jkt, ..self }
    }

    /// Whether it may be used with a proof of the key of thumbprint `presented` (or with
    /// none): any way when it is not bound, only with its key when it is.
    pub fn takes_key(&self, presented: Option<&str>) -> bool {
        self.jkt.as_deref().is_none_or(|jkt| presented == Some(jkt))
    }

    /// The token that replaces this one.
    pub fn next(&self, jti: String) -> Self {
        RefreshGrant {
            jti,
            ..self.clone()
        }
    }

    /// The scopes of an access token asked for with this token: those of `scope` (all of
    /// them, RFC 6749 §6) or, when absent, the grant's; `None` when `scope` asks for one
    /// the grant does not have (`invalid_scope`).
    pub fn narrow(&self, scope: Option<&str>) -> Option<Vec<String>> {
        let granted = &self.grant.scopes;
        let Some(scope) = scope else {
            return Some(granted.clone());
        };
        let mut asked: Vec<String> = Vec::new();
        for s in scope.split(' ').filter(|s| !s.is_empty()) {
            if !granted.iter().any(|g| g == s) {
                return None;
            }
            if !asked.iter().any(|a| a == s) {
                asked.push(s.to_owned());
            }
        }
        Some(asked)
    }
}

/// A PKCE code verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
fn is_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The user's claims a scope gives (OpenID Connect Core §5.4): `profile` → `name`,
/// `picture`; `email` → `email`, `email_verified`; `groups` → `groups` (set by the caller,
/// from `[oidc_provider.groups]` and the user's groups in its user source);
/// `organizations` → `organizations` (set by the caller, from the user's memberships).
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
    /// `groups` (groups): the configured groups the user is a member of, and the groups
    /// its user source (a users file, a directory) gave at the last sign-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// `organizations` (organizations): the organizations the user is a member of, with
    /// their roles there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organizations: Option<Vec<OrganizationClaim>>,
}

/// One organization of the `organizations` claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrganizationClaim {
    /// The organization's id (stable).
    pub id: String,
    /// Its slug (unique, but its admins may change it).
    pub slug: String,
    /// Its display name.
    pub name: String,
    /// The user's roles there.
    pub roles: Vec<String>,
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

/// The `acr` values this provider asserts ([`acr_of`]).
pub const ACR_VALUES: [&str; 1] = [PHISHING_RESISTANT];

/// Phishing-resistant authentication (OpenID Connect Extended Authentication Profile ACR
/// Values 1.0 §2: `phr`).
const PHISHING_RESISTANT: &str = "phr";

/// The `acr` of a sign-in with methods `amr` (OpenID Connect Core §2): `phr` when a
/// passkey (`hwk`) was among them — WebAuthn binds the signature to the origin, so a
/// phishing site cannot relay it; none otherwise, as a password or a one-time code can be
/// phished.
pub fn acr_of(amr: &[String]) -> Option<&'static str> {
    amr.iter().any(|m| m == "hwk").then_some(PHISHING_RESISTANT)
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
    /// The authentication context class, when known ([`acr_of`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acr: Option<&'static str>,
    /// The authcore session (Back-Channel Logout 1.0 §2.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sid: Option<&'a str>,
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
    /// The grant it belongs to (revoked with it); none for a client's own token
    /// (`client_credentials`), which stands for no user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// The grant's [`Grant::epoch`] (void with it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub epoch: i64,
    /// The key it is bound to (RFC 9449 §6.1): presented only with a DPoP proof of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
}

/// The event a logout token carries (Back-Channel Logout 1.0 §2.4).
pub const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// A logout token's claims (Back-Channel Logout 1.0 §2.4): `sub` and `sid` of the session
/// that ended, for one client; no `nonce`.
#[derive(Debug, Clone, Serialize)]
pub struct LogoutTokenClaims<'a> {
    /// The issuer.
    pub iss: &'a str,
    /// The client.
    pub aud: &'a str,
    /// Issued at.
    pub iat: i64,
    /// Expiry (the client must not take it much later, §2.6).
    pub exp: i64,
    /// Its id (the client takes each once).
    pub jti: &'a str,
    /// The user.
    pub sub: &'a str,
    /// The session, when one session ended (absent: all of the user's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sid: Option<&'a str>,
    /// `{"http://schemas.openid.net/event/backchannel-logout": {}}`.
    pub events: serde_json::Value,
}

impl<'a> LogoutTokenClaims<'a> {
    /// The claims of a logout token to `client` for `sub`'s session `sid` (or all of them).
    pub fn new(
        iss: &'a str,
        client: &'a str,
        sub: &'a str,
        sid: Option<&'a str>,
        jti: &'a str,
        now: i64,
    ) -> Self {
        LogoutTokenClaims {
            iss,
            aud: client,
            iat: now,
            exp: now + 120,
            jti,
            sub,
            sid,
            events: serde_json::json!({ BACKCHANNEL_LOGOUT_EVENT: {} }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_passkey_sign_in_is_phishing_resistant_and_nothing_else_is() {
        let amr = |m: &[&str]| m.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        for (methods, acr) in [
            (amr(&["hwk", "user", "mfa"]), Some("phr")),
            (amr(&["pwd", "hwk", "mfa"]), Some("phr")),
            (amr(&["hwk"]), Some("phr")),
            (amr(&["pwd", "otp", "mfa"]), None),
            (amr(&["otp"]), None),
            (amr(&["pwd"]), None),
            (amr(&[]), None),
        ] {
            assert_eq!(acr_of(&methods), acr, "{methods:?}");
        }
    }

    /// RFC 7636 appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn grant(challenge: Option<&str>) -> CodeGrant {
        CodeGrant {
            grant: Grant {
                client_id: "app".into(),
                sub: "u1".into(),
                scopes: vec!["openid".into()],
                auth_time: None,
                amr: Vec::new(),
                sid: None,
                epoch: 0,
            },
            redirect_uri: "https://app.example.com/cb".into(),
            nonce: None,
            code_challenge: challenge.map(str::to_owned),
            dpop_jkt: None,
            jti: "j".into(),
        }
    }

    #[test]
    fn refresh_tokens_keep_the_grant_and_narrow_only() {
        let mut code = grant(None);
        code.grant.scopes = vec!["openid".into(), "email".into(), "offline_access".into()];
        let first = RefreshGrant::first(&code.grant, &code.jti, "r1".into());
        assert_eq!(first.grant_id, "j");
        let next = first.next("r2".into());
        assert_eq!((next.grant_id.as_str(), next.jti.as_str()), ("j", "r2"));
        assert_eq!(next.grant, code.grant);
        assert_eq!(first.narrow(None).unwrap(), code.grant.scopes);
        assert_eq!(
            first.narrow(Some("openid  email openid")).unwrap(),
            ["openid", "email"]
        );
        assert_eq!(first.narrow(Some("")).unwrap(), Vec::<String>::new());
        assert!(first.narrow(Some("openid profile")).is_none());
    }

    /// RFC 9449 §5: a bound refresh token is used with its key only, and so is the next.
    #[test]
    fn a_bound_refresh_token_takes_its_key_only() {
        let unbound = RefreshGrant::first(&grant(None).grant, "c1", "r1".into());
        assert!(unbound.takes_key(None) && unbound.takes_key(Some("k1")));
        let bound = unbound.bound_to(Some("k1".into()));
        let next = bound.next("r2".into());
        for token in [&bound, &next] {
            assert!(token.takes_key(Some("k1")));
            assert!(!token.takes_key(Some("k2")));
            assert!(!token.takes_key(None));
        }
        let sealed = serde_json::to_value(&next).unwrap();
        assert_eq!(sealed["jkt"], "k1");
        let back: RefreshGrant = serde_json::from_value(sealed).unwrap();
        assert_eq!(back, next);
    }

    #[test]
    fn logout_tokens_carry_the_event_and_no_nonce() {
        let claims = LogoutTokenClaims::new("https://op/oidc", "app", "u1", Some("s1"), "j", 100);
        let v = serde_json::to_value(&claims).unwrap();
        assert_eq!(v["events"][BACKCHANNEL_LOGOUT_EVENT], serde_json::json!({}));
        assert_eq!(
            (v["iat"].as_i64(), v["exp"].as_i64()),
            (Some(100), Some(220))
        );
        assert!(v.get("nonce").is_none());
        let all = LogoutTokenClaims::new("https://op/oidc", "app", "u1", None, "j", 100);
        assert!(serde_json::to_value(&all).unwrap().get("sid").is_none());
    }

    #[test]
    fn a_code_bound_to_a_key_takes_only_that_key() {
        let unbound = grant(None);
        let mut bound = grant(None);
        bound.dpop_jkt = Some("key-a".into());
        for (code, jkt, ok) in [
            (&unbound, None, true),
            (&unbound, Some("key-a"), true),
            (&bound, Some("key-a"), true),
            (&bound, Some("key-b"), false),
            (&bound, None, false),
        ] {
            assert_eq!(
                code.check_key(jkt).is_ok(),
                ok,
                "{:?} {jkt:?}",
                code.dpop_jkt
            );
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
