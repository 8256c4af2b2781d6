//! Auth0 (`@auth/core/providers/auth0`): OpenID Connect against your Auth0 tenant.

use super::style;
use crate::providers::OAuthProvider;

/// Auth0, id `auth0`: OpenID Connect with everything discovered from `issuer` (your tenant,
/// like `https://dev-abc123.us.auth0.com`); default profile mapping, checks: PKCE.
///
/// Client id and secret: `AUTH_AUTH0_ID` / `AUTH_AUTH0_SECRET` via env defaults, or the
/// builder.
///
/// ```
/// use authcore::providers::catalog::auth0;
///
/// let p = auth0("https://dev-abc123.us.auth0.com")
///     .client_id("client-id")
///     .client_secret("secret");
/// assert_eq!(p.id(), "auth0");
/// ```
pub fn auth0(issuer: impl Into<String>) -> OAuthProvider {
    OAuthProvider::oidc("auth0", "Auth0")
        .issuer(issuer)
        .style(style("#EB5424", Some("#fff")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::{ProviderType, User};

    #[test]
    fn authjs_defaults() {
        let p = auth0("https://dev-abc123.us.auth0.com");
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("auth0", "Auth0", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some("https://dev-abc123.us.auth0.com"));
        assert_eq!(
            (&p.authorization.url, &p.token.url, &p.userinfo.url),
            (&None, &None, &None)
        );
        assert!(p.authorization.params.is_empty());
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token && p.profile.is_none());
        assert_eq!(p.style.brand_color.as_deref(), Some("#EB5424"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
    }

    #[test]
    fn default_profile_of_auth0_claims() {
        let claims = object(json!({
            "given_name": "Jane",
            "family_name": "Doe",
            "nickname": "jane.doe",
            "name": "Jane Doe",
            "picture": "https://s.gravatar.com/avatar/abc?s=480&r=pg&d=https%3A%2F%2Fcdn.auth0.com%2Favatars%2Fjd.png",
            "updated_at": "2024-05-01T10:00:00.000Z",
            "email": "jane.doe@example.com",
            "email_verified": true,
            "iss": "https://dev-abc123.us.auth0.com/",
            "aud": "client-id",
            "iat": 1714557600,
            "exp": 1714593600,
            "sub": "auth0|6630b1b2c3d4e5f6a7b8c9d0",
            "sid": "Qm3x9",
            "nonce": "n-0S6_WzA2Mj"
        }));
        let user = auth0("https://dev-abc123.us.auth0.com")
            .map_profile(&claims, &tokens("a"))
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("auth0|6630b1b2c3d4e5f6a7b8c9d0".into()),
                name: Some("Jane Doe".into()),
                email: Some("jane.doe@example.com".into()),
                image: Some("https://s.gravatar.com/avatar/abc?s=480&r=pg&d=https%3A%2F%2Fcdn.auth0.com%2Favatars%2Fjd.png".into()),
                ..User::default()
            }
        );
    }
}
