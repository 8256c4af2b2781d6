//! Sign in with Apple (`@auth/core/providers/apple`): OpenID Connect with a form-post
//! callback, `nonce` + `state` checks and `client_secret_post`.

use serde_json::Value;

use super::{string_field, style};
use crate::error::BoxError;
use crate::providers::{Checks, ClientAuthMethod, OAuthProvider};
use crate::types::{JsonObject, TokenSet, User};

/// Sign in with Apple, id `apple`.
///
/// * OpenID Connect, issuer `https://appleid.apple.com` (endpoints and keys discovered);
///   authorization params `scope=name email` and `response_mode=form_post` (Apple POSTs the
///   callback, so the state and nonce cookies are `SameSite=None`).
/// * Checks: `nonce` and `state` (no PKCE, as in Auth.js); token endpoint authentication
///   `client_secret_post`. The client secret is the JWT you sign with your Apple key.
/// * Profile: `{id: sub, name, email, image: null}` where `name` is
///   `user.name.firstName + " " + user.name.lastName` when the profile has Apple's `user`
///   object (sent as a form field on the first consent only, and added to the ID token
///   claims by the callback), else the email.
///
/// Auth.js also injects a dummy `userinfo_endpoint` into Apple's discovery document; authcore
/// does not need one for an OIDC provider that reads the ID token.
///
/// ```
/// use authcore::providers::catalog::apple;
///
/// let p = apple()
///     .client_id("com.example.web")
///     .client_secret("eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMyJ9...");
/// assert_eq!(p.id(), "apple");
/// ```
pub fn apple() -> OAuthProvider {
    OAuthProvider::oidc("apple", "Apple")
        .issuer("https://appleid.apple.com")
        .authorization_param("scope", "name email")
        .authorization_param("response_mode", "form_post")
        .checks(Checks {
            pkce: false,
            state: true,
            nonce: true,
        })
        .client_auth(ClientAuthMethod::ClientSecretPost)
        .profile(profile)
        .style(style("#000", Some("#fff")))
}

/// `firstName lastName` from Apple's `user` object (an object, or its JSON text).
///
/// Deviation: Auth.js throws when `user` has no `name` and prints `undefined` for a missing
/// part; here a missing part is left out and a missing name falls back to the email.
fn user_name(user: &Value) -> Option<String> {
    let parsed;
    let user = match user {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        other => other,
    };
    let name = user.get("name")?.as_object()?;
    let parts: Vec<String> = ["firstName", "lastName"]
        .iter()
        .filter_map(|k| string_field(name, k))
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn profile(p: &JsonObject, _tokens: &TokenSet) -> Result<User, BoxError> {
    let name = p
        .get("user")
        .and_then(user_name)
        .or_else(|| string_field(p, "email"));
    Ok(User {
        id: string_field(p, "sub"),
        name,
        email: string_field(p, "email"),
        image: None,
        ..User::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, param, tokens};
    use crate::types::ProviderType;

    /// Claims of an Apple ID token (shape from the Apple docs / `AppleProfile`).
    fn claims() -> Value {
        json!({
            "iss": "https://appleid.apple.com",
            "aud": "com.example.web",
            "exp": 1716460800,
            "iat": 1716374400,
            "sub": "001234.5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b.1234",
            "nonce": "kN8yYQ3bX0dZ7cU1vW2sR4tP6mL9oJ5hG",
            "nonce_supported": true,
            "at_hash": "5kV5t3oEJ0mHn7N0mNYmVw",
            "email": "x7k2m9q4p1@privaterelay.appleid.com",
            "email_verified": true,
            "is_private_email": "true",
            "auth_time": 1716374399,
            "real_user_status": 2
        })
    }

    #[test]
    fn authjs_defaults() {
        let p = apple();
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("apple", "Apple", ProviderType::Oidc)
        );
        assert_eq!(p.issuer.as_deref(), Some("https://appleid.apple.com"));
        assert_eq!(p.authorization.url, None, "discovered");
        assert_eq!(param(&p, "scope"), Some("name email"));
        assert_eq!(param(&p, "response_mode"), Some("form_post"));
        assert!(p.is_form_post());
        assert_eq!(
            p.checks,
            Checks {
                pkce: false,
                state: true,
                nonce: true
            }
        );
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretPost);
        assert!(p.id_token);
        assert_eq!(p.style.brand_color.as_deref(), Some("#000"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
    }

    #[test]
    fn profile_on_first_consent_has_the_user_name() {
        let p = apple();
        let mut c = claims();
        c["user"] = json!({
            "name": {"firstName": "Jane", "lastName": "Appleseed"},
            "email": "x7k2m9q4p1@privaterelay.appleid.com"
        });
        let user = p.map_profile(&object(c.clone()), &tokens("a")).unwrap();
        assert_eq!(
            user,
            User {
                id: Some("001234.5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b.1234".into()),
                name: Some("Jane Appleseed".into()),
                email: Some("x7k2m9q4p1@privaterelay.appleid.com".into()),
                image: None,
                ..User::default()
            }
        );
        // The raw form value (JSON text) works too.
        c["user"] = json!(r#"{"name":{"firstName":"Jane","lastName":"Appleseed"}}"#);
        assert_eq!(
            p.map_profile(&object(c), &tokens("a"))
                .unwrap()
                .name
                .as_deref(),
            Some("Jane Appleseed")
        );
    }

    #[test]
    fn profile_without_user_falls_back_to_the_email() {
        let p = apple();
        let user = p.map_profile(&object(claims()), &tokens("a")).unwrap();
        assert_eq!(
            user.name.as_deref(),
            Some("x7k2m9q4p1@privaterelay.appleid.com")
        );
        assert_eq!(
            user.id.as_deref(),
            Some("001234.5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b.1234")
        );
        assert_eq!(user.image, None);
        for odd in [
            json!({"email": "e"}),
            json!("not json"),
            json!({"name": {"firstName": "Jane"}}),
        ] {
            let mut c = claims();
            c["user"] = odd.clone();
            let name = p.map_profile(&object(c), &tokens("a")).unwrap().name;
            let expected = if odd.get("name").is_some() {
                "Jane"
            } else {
                "x7k2m9q4p1@privaterelay.appleid.com"
            };
            assert_eq!(name.as_deref(), Some(expected), "{odd}");
        }
    }
}
