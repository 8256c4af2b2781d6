//! Google (`@auth/core/providers/google`): OpenID Connect, everything discovered.

use super::style;
use crate::providers::OAuthProvider;

/// Google, id `google`: OpenID Connect with issuer `https://accounts.google.com`; endpoints
/// and keys come from discovery, the profile is the default mapping of the ID token
/// (`sub`, `name`, `email`, `picture`), checks: PKCE.
///
/// Client id and secret: `AUTH_GOOGLE_ID` / `AUTH_GOOGLE_SECRET` via env defaults, or the
/// builder. To always get a refresh token, add `prompt=consent` and `access_type=offline`:
///
/// ```
/// use authcore::providers::catalog::google;
///
/// let p = google()
///     .client_id("1234.apps.googleusercontent.com")
///     .client_secret("secret")
///     .authorization_param("prompt", "consent")
///     .authorization_param("access_type", "offline");
/// assert_eq!(p.id(), "google");
/// ```
pub fn google() -> OAuthProvider {
    OAuthProvider::oidc("google", "Google")
        .issuer("https://accounts.google.com")
        .style(style("#1a73e8", None))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::{ProviderType, User};

    #[test]
    fn discovered_oidc_defaults() {
        let p = google();
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("google", "Google", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some("https://accounts.google.com"));
        for e in [&p.authorization, &p.token, &p.userinfo] {
            assert_eq!(e.url, None, "discovered");
        }
        assert!(
            p.authorization.params.is_empty(),
            "default scope openid profile email"
        );
        assert_eq!(p.jwks_uri, None);
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token && p.profile.is_none() && p.userinfo_request.is_none());
        assert_eq!(p.style.brand_color.as_deref(), Some("#1a73e8"));
        assert_eq!(p.style.text, None);
    }

    #[test]
    fn profile_from_id_token_claims() {
        // ID token claims as documented by Google.
        let claims = object(json!({
            "iss": "https://accounts.google.com",
            "azp": "1234987819200.apps.googleusercontent.com",
            "aud": "1234987819200.apps.googleusercontent.com",
            "sub": "10769150350006150715113082367",
            "at_hash": "HK6E_P6Dh8Y93mRNtsDB1Q",
            "hd": "example.com",
            "email": "jsmith@example.com",
            "email_verified": true,
            "iat": 1353601026,
            "exp": 1353604926,
            "nonce": "0394852-3190485-2490358",
            "name": "John Smith",
            "picture": "https://lh3.googleusercontent.com/a/ACg8ocJ=s96-c",
            "given_name": "John",
            "family_name": "Smith",
            "locale": "en"
        }));
        let user = google().map_profile(&claims, &tokens("ya29.a0")).unwrap();
        assert_eq!(
            user,
            User {
                id: Some("10769150350006150715113082367".into()),
                name: Some("John Smith".into()),
                email: Some("jsmith@example.com".into()),
                image: Some("https://lh3.googleusercontent.com/a/ACg8ocJ=s96-c".into()),
                ..User::default()
            }
        );
    }
}
