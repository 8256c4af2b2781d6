//! A generic OpenID Connect provider (a plain `type: "oidc"` provider in Auth.js).

use crate::providers::OAuthProvider;

/// Any OpenID Connect provider: everything discovered from
/// `<issuer>/.well-known/openid-configuration`, the default profile mapping of the ID token
/// (`id = sub`, `name = name ?? nickname ?? preferred_username`, `email`,
/// `image = picture`), `scope=openid profile email`, checks: PKCE.
///
/// With env defaults, the client id and secret come from `AUTH_<ID>_ID` / `AUTH_<ID>_SECRET`
/// (`id` upper-cased, `-` → `_`).
///
/// ```
/// use authcore::providers::catalog::oidc;
///
/// let p = oidc("corp-sso", "Corp SSO", "https://sso.corp.example")
///     .client_id("my-app")
///     .client_secret("secret");
/// assert_eq!(p.id(), "corp-sso");
/// ```
pub fn oidc(id: &str, name: &str, issuer: impl Into<String>) -> OAuthProvider {
    OAuthProvider::oidc(id, name).issuer(issuer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::providers::{Checks, ClientAuthMethod, ProviderStyle};
    use crate::types::{ProviderType, User};

    #[test]
    fn plain_oidc_defaults() {
        let p = oidc("oidc", "OpenID Connect", "https://idp.example/realms/main");
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("oidc", "OpenID Connect", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some("https://idp.example/realms/main"));
        assert_eq!(
            (&p.authorization.url, &p.token.url, &p.userinfo.url),
            (&None, &None, &None)
        );
        assert!(p.authorization.params.is_empty());
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token && p.profile.is_none() && p.userinfo_request.is_none());
        assert_eq!(p.style, ProviderStyle::default());
    }

    #[test]
    fn default_profile_mapping() {
        let claims = object(json!({
            "iss": "https://idp.example/realms/main",
            "sub": "248289761001",
            "aud": "my-app",
            "exp": 1311281970,
            "iat": 1311280970,
            "nickname": "jdoe",
            "email": "janedoe@example.com",
            "picture": "https://idp.example/janedoe/me.jpg"
        }));
        let user = oidc("oidc", "OIDC", "https://idp.example/realms/main")
            .map_profile(&claims, &tokens("a"))
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("248289761001".into()),
                name: Some("jdoe".into()),
                email: Some("janedoe@example.com".into()),
                image: Some("https://idp.example/janedoe/me.jpg".into()),
                ..User::default()
            }
        );
    }
}
