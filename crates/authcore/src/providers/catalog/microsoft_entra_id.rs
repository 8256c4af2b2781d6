//! Microsoft Entra ID, formerly Azure AD (`@auth/core/providers/microsoft-entra-id`):
//! OpenID Connect against a tenant of `login.microsoftonline.com`.

use super::{string_field, style};
use crate::env::Env;
use crate::error::BoxError;
use crate::providers::OAuthProvider;
use crate::types::{JsonObject, TokenSet, User};

/// The tenant used when none is given (multi-tenant and personal accounts).
const DEFAULT_TENANT: &str = "common";

/// Options of the [`microsoft_entra_id()`] preset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MicrosoftEntraIdOptions {
    /// Directory (tenant) id or domain; the issuer becomes
    /// `https://login.microsoftonline.com/<tenant>/v2.0`. `None`: `common`.
    pub tenant: Option<String>,
    /// A complete issuer URL (Auth.js `issuer`); wins over `tenant`.
    pub issuer: Option<String>,
}

impl MicrosoftEntraIdOptions {
    /// A single-tenant application of the directory `tenant`.
    pub fn tenant(tenant: impl Into<String>) -> Self {
        MicrosoftEntraIdOptions {
            tenant: Some(tenant.into()),
            issuer: None,
        }
    }

    /// The issuer from `AUTH_MICROSOFT_ENTRA_ID_ISSUER`, as the Auth.js preset reads it.
    ///
    /// [`env_defaults`](crate::AuthConfigBuilder::env_defaults) only fills an issuer that is
    /// not set, and this preset always sets one, so pass the variable through here.
    pub fn from_env(env: &Env) -> Self {
        MicrosoftEntraIdOptions {
            tenant: None,
            issuer: env
                .get("AUTH_MICROSOFT_ENTRA_ID_ISSUER")
                .filter(|v| !v.is_empty())
                .map(str::to_owned),
        }
    }
}

/// Microsoft Entra ID, id `microsoft-entra-id`.
///
/// * OpenID Connect, issuer `https://login.microsoftonline.com/<tenant>/v2.0` (default
///   tenant `common`), endpoints and keys discovered; authorization param
///   `scope=openid profile email User.Read`; checks: PKCE.
/// * Profile: `{id: sub, name, email, image: null}`. Auth.js additionally downloads the
///   Microsoft Graph profile photo (`profilePhotoSize`) into a `data:` URL; that needs an
///   HTTP request in the profile step, which authcore's synchronous profile mapping cannot
///   make, so `image` is always unset.
///
/// Multi-tenant issuers (`common`, `organizations`, `consumers`) publish
/// `https://login.microsoftonline.com/{tenantid}/v2.0` as their issuer and sign ID tokens
/// with the user's tenant; Auth.js rewrites the discovery document and re-discovers by the
/// token's `tid`. Until authcore's flow does the same, configure your directory's tenant id.
///
/// ```
/// use authcore::providers::catalog::{MicrosoftEntraIdOptions, microsoft_entra_id};
///
/// let p = microsoft_entra_id(MicrosoftEntraIdOptions::tenant(
///     "9188040d-6c67-4c5b-b112-36a304b66dad",
/// ))
/// .client_id("00000000-0000-0000-0000-000000000000")
/// .client_secret("secret");
/// assert_eq!(p.id(), "microsoft-entra-id");
/// ```
pub fn microsoft_entra_id(options: MicrosoftEntraIdOptions) -> OAuthProvider {
    let issuer = options.issuer.unwrap_or_else(|| {
        let tenant = options.tenant.as_deref().unwrap_or(DEFAULT_TENANT);
        format!("https://login.microsoftonline.com/{tenant}/v2.0")
    });
    OAuthProvider::oidc("microsoft-entra-id", "Microsoft Entra ID")
        .issuer(issuer)
        .authorization_param("scope", "openid profile email User.Read")
        .profile(profile)
        .tenant_templated_issuer(true)
        .style(style("#0072c6", Some("#fff")))
}

/// Azure Active Directory, id `azure-ad`: Auth.js's deprecated name of
/// [`microsoft_entra_id()`], kept so configurations written for it keep working (its
/// routes are `/callback/azure-ad`, its variables `AUTH_AZURE_AD_*`). Use
/// `microsoft-entra-id` for new configurations.
pub fn azure_ad(options: MicrosoftEntraIdOptions) -> OAuthProvider {
    microsoft_entra_id(options)
        .with_id("azure-ad")
        .with_name("Azure Active Directory")
}

/// `{id: sub, name, email, image: null}` (without the Graph photo).
fn profile(p: &JsonObject, _tokens: &TokenSet) -> Result<User, BoxError> {
    Ok(User {
        id: string_field(p, "sub"),
        name: string_field(p, "name"),
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
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::ProviderType;

    const TENANT: &str = "9188040d-6c67-4c5b-b112-36a304b66dad";

    #[test]
    fn authjs_defaults() {
        let p = microsoft_entra_id(MicrosoftEntraIdOptions::default());
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            (
                "microsoft-entra-id",
                "Microsoft Entra ID",
                ProviderType::Oidc
            )
        );
        assert_eq!(
            p.issuer.as_deref(),
            Some("https://login.microsoftonline.com/common/v2.0")
        );
        assert_eq!(p.authorization.url, None, "discovered");
        assert_eq!(param(&p, "scope"), Some("openid profile email User.Read"));
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert!(p.id_token);
        assert_eq!(p.style.brand_color.as_deref(), Some("#0072c6"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
    }

    #[test]
    fn tenant_and_issuer() {
        let p = microsoft_entra_id(MicrosoftEntraIdOptions::tenant(TENANT));
        assert_eq!(
            p.issuer.as_deref(),
            Some("https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0")
        );
        let issuer = "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0";
        let p = microsoft_entra_id(MicrosoftEntraIdOptions {
            tenant: Some(TENANT.into()),
            issuer: Some(issuer.into()),
        });
        assert_eq!(p.issuer.as_deref(), Some(issuer));
        let env = Env::from_pairs([("AUTH_MICROSOFT_ENTRA_ID_ISSUER", issuer)]);
        let p = microsoft_entra_id(MicrosoftEntraIdOptions::from_env(&env));
        assert_eq!(p.issuer.as_deref(), Some(issuer));
        let p = microsoft_entra_id(MicrosoftEntraIdOptions::from_env(&Env::default()));
        assert_eq!(
            p.issuer.as_deref(),
            Some("https://login.microsoftonline.com/common/v2.0")
        );
    }

    #[test]
    fn profile_mapping() {
        // v2.0 ID token claims (Microsoft identity platform docs).
        let claims = object(json!({
            "aud": "6cb04018-a3f5-46a7-b995-940c78f5aef3",
            "iss": "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
            "iat": 1536361411,
            "nbf": 1536361411,
            "exp": 1536365311,
            "name": "Abe Lincoln",
            "email": "AbeLi@microsoft.com",
            "nonce": "123523",
            "oid": "00000000-0000-0000-66f3-3332eca7ea81",
            "preferred_username": "AbeLi@microsoft.com",
            "rh": "I",
            "sub": "HKZpfaHyWadeOouYlitjrI-KffTm222X5rrV3xDqfKQ",
            "tid": TENANT,
            "uti": "fqiBqXLPj0eQa82S-IYFAA",
            "ver": "2.0"
        }));
        let user = microsoft_entra_id(MicrosoftEntraIdOptions::default())
            .map_profile(&claims, &tokens("eyJ0eXAi"))
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("HKZpfaHyWadeOouYlitjrI-KffTm222X5rrV3xDqfKQ".into()),
                name: Some("Abe Lincoln".into()),
                email: Some("AbeLi@microsoft.com".into()),
                image: None,
                ..User::default()
            }
        );
    }
}
