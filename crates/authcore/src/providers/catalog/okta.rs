//! Okta (`@auth/core/providers/okta`): OpenID Connect against an Okta org or authorization
//! server, with PKCE and `state`.

use super::style;
use crate::providers::{Checks, OAuthProvider};

/// Okta, id `okta`: OpenID Connect with everything discovered from `issuer` (like
/// `https://dev-123456.okta.com` or `https://dev-123456.okta.com/oauth2/default`); default
/// profile mapping; checks: PKCE and `state` (as in Auth.js).
///
/// Client id and secret: `AUTH_OKTA_ID` / `AUTH_OKTA_SECRET` via env defaults, or the
/// builder.
///
/// ```
/// use authcore::providers::catalog::okta;
///
/// let p = okta("https://dev-123456.okta.com/oauth2/default")
///     .client_id("0oa1b2c3d4")
///     .client_secret("secret");
/// assert_eq!(p.id(), "okta");
/// ```
pub fn okta(issuer: impl Into<String>) -> OAuthProvider {
    OAuthProvider::oidc("okta", "Okta")
        .issuer(issuer)
        .checks(Checks {
            pkce: true,
            state: true,
            nonce: false,
        })
        .style(style("#000", Some("#fff")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::ClientAuthMethod;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::types::{ProviderType, User};

    const ISSUER: &str = "https://dev-123456.okta.com/oauth2/default";

    #[test]
    fn authjs_defaults() {
        let p = okta(ISSUER);
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("okta", "Okta", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some(ISSUER));
        assert_eq!(
            (&p.authorization.url, &p.token.url, &p.userinfo.url),
            (&None, &None, &None)
        );
        assert!(p.authorization.params.is_empty());
        assert_eq!(
            p.checks,
            Checks {
                pkce: true,
                state: true,
                nonce: false
            }
        );
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token && p.profile.is_none());
        assert_eq!(p.style.brand_color.as_deref(), Some("#000"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
    }

    #[test]
    fn default_profile_of_okta_claims() {
        let claims = object(json!({
            "sub": "00uid4BxXw6I6TV4m0g3",
            "name": "John Doe",
            "email": "john.doe@example.com",
            "ver": 1,
            "iss": ISSUER,
            "aud": "0oa1b2c3d4",
            "iat": 1714593300,
            "exp": 1714596900,
            "jti": "ID.4eAWJOCMB3SX8XewDfVR",
            "amr": ["pwd"],
            "idp": "00ok1u7AsAkrwdZL3z0g3",
            "nonce": "n-0S6",
            "preferred_username": "john.doe@example.com",
            "auth_time": 1714593299,
            "at_hash": "preview_at_hash"
        }));
        let user = okta(ISSUER).map_profile(&claims, &tokens("a")).unwrap();
        assert_eq!(
            user,
            User {
                id: Some("00uid4BxXw6I6TV4m0g3".into()),
                name: Some("John Doe".into()),
                email: Some("john.doe@example.com".into()),
                image: None,
                ..User::default()
            }
        );
    }
}
