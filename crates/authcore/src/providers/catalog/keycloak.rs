//! Keycloak (`@auth/core/providers/keycloak`): OpenID Connect against a Keycloak realm.

use super::style;
use crate::providers::OAuthProvider;

/// Keycloak, id `keycloak`: OpenID Connect with everything discovered from `issuer` (the
/// realm URL, like `https://keycloak.example.com/realms/my-realm`); default profile mapping
/// (`name ?? nickname ?? preferred_username`), checks: PKCE.
///
/// Client id and secret: `AUTH_KEYCLOAK_ID` / `AUTH_KEYCLOAK_SECRET` via env defaults, or
/// the builder.
///
/// ```
/// use authcore::providers::catalog::keycloak;
///
/// let p = keycloak("https://keycloak.example.com/realms/my-realm")
///     .client_id("my-app")
///     .client_secret("secret");
/// assert_eq!(p.id(), "keycloak");
/// ```
pub fn keycloak(issuer: impl Into<String>) -> OAuthProvider {
    OAuthProvider::oidc("keycloak", "Keycloak")
        .issuer(issuer)
        .style(style("#428bca", None))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::{ProviderType, User};

    const REALM: &str = "https://keycloak.example.com/realms/my-realm";

    #[test]
    fn authjs_defaults() {
        let p = keycloak(REALM);
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("keycloak", "Keycloak", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some(REALM));
        assert_eq!(
            (&p.authorization.url, &p.token.url, &p.userinfo.url),
            (&None, &None, &None)
        );
        assert!(p.authorization.params.is_empty());
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token && p.profile.is_none());
        assert_eq!(p.style.brand_color.as_deref(), Some("#428bca"));
        assert_eq!(p.style.text, None);
    }

    #[test]
    fn default_profile_of_keycloak_claims() {
        // A Keycloak ID token without `name` (no first/last name set in the realm).
        let claims = object(json!({
            "exp": 1714593600,
            "iat": 1714593300,
            "auth_time": 1714593299,
            "jti": "6b1f5c1e-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
            "iss": REALM,
            "aud": "my-app",
            "sub": "f1c2d3e4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
            "typ": "ID",
            "azp": "my-app",
            "nonce": "n-0S6",
            "session_state": "0a1b2c3d",
            "at_hash": "x8vMa0dQ",
            "acr": "1",
            "sid": "0a1b2c3d",
            "email_verified": true,
            "preferred_username": "jdoe",
            "email": "jdoe@example.com"
        }));
        let user = keycloak(REALM).map_profile(&claims, &tokens("a")).unwrap();
        assert_eq!(
            user,
            User {
                id: Some("f1c2d3e4-a5b6-4c7d-8e9f-0a1b2c3d4e5f".into()),
                name: Some("jdoe".into()),
                email: Some("jdoe@example.com".into()),
                image: None,
                ..User::default()
            }
        );
    }
}
