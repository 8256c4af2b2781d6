//! The OpenID Connect (`type: "oidc"`) presets of Auth.js besides the ones with a module of
//! their own (Apple, Auth0, Google, Keycloak, Microsoft Entra ID, Okta): each function is
//! `@auth/core/providers/<id>` with the same issuer, parameters, checks, client
//! authentication and profile mapping. Endpoints and keys are discovered from the issuer
//! on first use, never at start-up.
//!
//! ```
//! use authcore::providers::catalog;
//!
//! let zitadel = catalog::zitadel("https://my-instance.zitadel.cloud");
//! let twitch = catalog::twitch().client_id("id").client_secret("secret");
//! # let _ = (zitadel, twitch);
//! ```

use serde_json::{Value, json};

use super::oauth_brands::pkce_and_state;
use super::{fields, style};
use crate::providers::{Checks, ClientAuthMethod, OAuthProvider};

/// An OpenID Connect preset with its issuer.
fn oidc(id: &str, name: &str, issuer: impl Into<String>) -> OAuthProvider {
    OAuthProvider::oidc(id, name).issuer(issuer)
}

/// Checks `["pkce", "state", "nonce"]`.
fn all_checks() -> Checks {
    Checks {
        pkce: true,
        state: true,
        nonce: true,
    }
}

/// Asgardeo, id `asgardeo`: your organisation's issuer
/// (`https://api.asgardeo.io/t/<org>/oauth2/token`).
pub fn asgardeo(issuer: impl Into<String>) -> OAuthProvider {
    oidc("asgardeo", "Asgardeo", issuer).style(style("#000", Some("#fff")))
}

/// authentik, id `authentik`: your application's issuer
/// (`https://authentik.example.com/application/o/<slug>/`).
pub fn authentik(issuer: impl Into<String>) -> OAuthProvider {
    oidc("authentik", "Authentik", issuer)
}

/// Azure AD B2C, id `azure-ad-b2c`: your user flow's issuer; profile `{sub, name ??
/// preferred_username, emails[0]}`.
pub fn azure_ad_b2c(issuer: impl Into<String>) -> OAuthProvider {
    oidc("azure-ad-b2c", "Azure AD B2C", issuer)
        .profile(fields("sub", "name | preferred_username", "emails.0", ""))
        .style(style("#0072c6", Some("#fff")))
}

/// BankID Norge, id `bankid-no`: issuer `https://auth.bankid.no/auth/realms/prod`,
/// `ui_locales=no`, `login_hint=BIS`, `client_secret_post`, checks PKCE, state and nonce;
/// the profile comes from the userinfo, which BankID signs (`RS256`, verified with its
/// keys): `{sub, name, email}`.
pub fn bankid_no() -> OAuthProvider {
    oidc(
        "bankid-no",
        "BankID Norge",
        "https://auth.bankid.no/auth/realms/prod",
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .userinfo_signed_response_alg("RS256")
    .id_token(false)
    .authorization_param("ui_locales", "no")
    .authorization_param("login_hint", "BIS")
    .checks(all_checks())
    .profile(fields("sub", "name", "email", ""))
    .style(style("#39134c", Some("#fff")))
}

/// Battle.net, id `battlenet`: your region's issuer (`https://oauth.battle.net`,
/// `https://www.battlenet.com.cn/oauth` …); profile `{sub, battle_tag}`.
pub fn battlenet(issuer: impl Into<String>) -> OAuthProvider {
    oidc("battlenet", "Battle.net", issuer)
        .profile(fields("sub", "battle_tag", "", ""))
        .style(style("#148eff", Some("#fff")))
}

/// Beyond Identity, id `beyondidentity`: your tenant's issuer; profile `{sub, name,
/// email}`.
pub fn beyondidentity(issuer: impl Into<String>) -> OAuthProvider {
    oidc("beyondidentity", "Beyond Identity", issuer)
        .profile(fields("sub", "name", "email", ""))
        .style(style("#5077c5", Some("#fff")))
}

/// Amazon Cognito, id `cognito`: your user pool's issuer
/// (`https://cognito-idp.<region>.amazonaws.com/<pool id>`).
pub fn cognito(issuer: impl Into<String>) -> OAuthProvider {
    oidc("cognito", "Cognito", issuer).style(style("#C17B9E", None))
}

/// Descope, id `descope`: issuer `https://api.descope.com/<project id>` (the project id is
/// the client id), checks PKCE and state.
pub fn descope(project_id: &str) -> OAuthProvider {
    oidc(
        "descope",
        "Descope",
        format!("https://api.descope.com/{project_id}"),
    )
    .checks(pkce_and_state())
    .style(style("#1C1C23", Some("#ffffff")))
}

/// Duende IdentityServer 6, id `duende-identity-server6`: your server's issuer.
pub fn duende_identity_server6(issuer: impl Into<String>) -> OAuthProvider {
    oidc("duende-identity-server6", "DuendeIdentityServer6", issuer)
}

/// Frontegg, id `frontegg`: your workspace (`issuer`) with Frontegg's endpoints
/// (`/oauth/authorize`, `/oauth/token`, `/identity/resources/users/v2/me`) and its
/// discovery document at `/oauth/.well-known/openid-configuration` (for the keys).
pub fn frontegg(issuer: &str) -> OAuthProvider {
    let b = issuer.trim_end_matches('/');
    oidc("frontegg", "Frontegg", b)
        .authorization_url(format!("{b}/oauth/authorize"))
        .token_url(format!("{b}/oauth/token"))
        .userinfo_url(format!("{b}/identity/resources/users/v2/me"))
        .well_known(format!("{b}/oauth/.well-known/openid-configuration"))
}

/// FusionAuth, id `fusionauth`: your server (`issuer`), optionally one tenant
/// (`tenantId` in discovery and authorization), `scope=openid offline_access email
/// profile`, token `/oauth2/token`, userinfo `/oauth2/userinfo`, checks PKCE and state;
/// profile `{sub, name ?? preferred_username ?? given + middle + family name, email,
/// picture}`.
pub fn fusionauth(issuer: &str, tenant_id: Option<&str>) -> OAuthProvider {
    let b = issuer.trim_end_matches('/');
    let mut p = oidc("fusionauth", "FusionAuth", b)
        .authorization_param("scope", "openid offline_access email profile")
        .token_url(format!("{b}/oauth2/token"))
        .userinfo_url(format!("{b}/oauth2/userinfo"))
        .checks(pkce_and_state())
        .profile(fields(
            "sub",
            "name | preferred_username | given_name + middle_name + family_name",
            "email",
            "picture",
        ));
    if let Some(tenant) = tenant_id {
        let q: String = url::form_urlencoded::byte_serialize(tenant.as_bytes()).collect();
        p = p
            .well_known(format!("{b}/.well-known/openid-configuration?tenantId={q}"))
            .authorization_param("tenantId", tenant);
    }
    p
}

/// Hugging Face, id `huggingface`: issuer `https://huggingface.co`, checks state and
/// PKCE.
pub fn huggingface() -> OAuthProvider {
    oidc("huggingface", "Hugging Face", "https://huggingface.co")
        .checks(pkce_and_state())
        .style(style("#FFD21E", Some("#000")))
}

/// IdentityServer4, id `identity-server4`: your server's issuer.
pub fn identity_server4(issuer: impl Into<String>) -> OAuthProvider {
    oidc("identity-server4", "IdentityServer4", issuer)
}

/// Kinde, id `kinde`: your business's issuer (`https://<business>.kinde.com`), checks
/// state and PKCE.
pub fn kinde(issuer: impl Into<String>) -> OAuthProvider {
    oidc("kinde", "Kinde", issuer)
        .checks(pkce_and_state())
        .style(style("#fff", Some("#0F0F0F")))
}

/// LINE, id `line`: issuer `https://access.line.me`, ID tokens signed `HS256` with the
/// channel secret, checks state.
pub fn line() -> OAuthProvider {
    oidc("line", "LINE", "https://access.line.me")
        .id_token_signed_response_alg("HS256")
        .checks(super::oauth_brands::state_only())
        .style(style("#00C300", Some("#fff")))
}

/// LinkedIn, id `linkedin`: issuer `https://www.linkedin.com/oauth`,
/// `client_secret_post`, checks state.
pub fn linkedin() -> OAuthProvider {
    oidc("linkedin", "LinkedIn", "https://www.linkedin.com/oauth")
        .client_auth(ClientAuthMethod::ClientSecretPost)
        .checks(super::oauth_brands::state_only())
        .style(style("#069", Some("#fff")))
}

/// Logto, id `logto`: your tenant's issuer (`https://<tenant>.logto.app/oidc`),
/// `scope=offline_access openid email profile`; profile `{sub, name ?? username, email,
/// picture}`.
pub fn logto(issuer: impl Into<String>) -> OAuthProvider {
    oidc("logto", "Logto", issuer)
        .authorization_param("scope", "offline_access openid email profile")
        .profile(fields("sub", "name | username", "email", "picture"))
}

/// OneLogin, id `onelogin`: your subdomain's issuer
/// (`https://<subdomain>.onelogin.com/oidc/2`).
pub fn onelogin(issuer: impl Into<String>) -> OAuthProvider {
    oidc("onelogin", "OneLogin", issuer)
}

/// Ory Hydra, Auth.js module `ory-hydra`, provider id `hydra` (as in Auth.js: routes
/// `/callback/hydra`, variables `AUTH_HYDRA_*`): your Hydra's issuer.
pub fn ory_hydra(issuer: impl Into<String>) -> OAuthProvider {
    oidc("hydra", "Hydra", issuer).style(style("#fff", Some("#0F172A")))
}

/// Passage by 1Password, id `passage`: your app's issuer
/// (`https://auth.passage.id/v1/apps/<app id>`), `client_secret_basic`.
pub fn passage(issuer: impl Into<String>) -> OAuthProvider {
    oidc("passage", "Passage", issuer)
        .client_auth(ClientAuthMethod::ClientSecretBasic)
        .style(style("#3d53f6", None))
}

/// Ping Identity, id `ping-id`: your environment's issuer
/// (`https://auth.pingone.com/<environment id>/as`).
pub fn ping_id(issuer: impl Into<String>) -> OAuthProvider {
    oidc("ping-id", "Ping Identity", issuer)
}

/// Roblox, id `roblox`: issuer `https://apis.roblox.com/oauth/`, `scope=openid profile`,
/// checks PKCE and state.
pub fn roblox() -> OAuthProvider {
    oidc("roblox", "Roblox", "https://apis.roblox.com/oauth/")
        .authorization_param("scope", "openid profile")
        .checks(pkce_and_state())
        .style(style("#5865F2", Some("#fff")))
}

/// Salesforce, id `salesforce`: issuer `https://login.salesforce.com`, the profile from
/// userinfo, checks PKCE, state and nonce.
pub fn salesforce() -> OAuthProvider {
    oidc("salesforce", "Salesforce", "https://login.salesforce.com")
        .id_token(false)
        .checks(all_checks())
        .style(style("#00a1e0", None))
}

/// SimpleLogin, id `simplelogin`: issuer `https://app.simplelogin.io`; profile `{sub,
/// name, email, avatar_url}`.
pub fn simplelogin() -> OAuthProvider {
    oidc("simplelogin", "SimpleLogin", "https://app.simplelogin.io")
        .profile(fields("sub", "name", "email", "avatar_url"))
        .style(style("#e3156a", None))
}

/// Slack, id `slack`: issuer `https://slack.com` (Sign in with Slack), checks nonce.
pub fn slack() -> OAuthProvider {
    oidc("slack", "Slack", "https://slack.com")
        .checks(Checks {
            pkce: false,
            state: false,
            nonce: true,
        })
        .style(style("#611f69", None))
}

/// Twitch, id `twitch`: issuer `https://id.twitch.tv/oauth2`, `client_secret_post`,
/// `scope=openid user:read:email`, `claims` asking for email, picture and
/// preferred_username in the ID token; the token response's `scope` array becomes a
/// string and an error's `message` its `error_description`, as Auth.js conforms them.
pub fn twitch() -> OAuthProvider {
    let claims = json!({"id_token": {"email": null, "picture": null, "preferred_username": null}});
    oidc("twitch", "Twitch", "https://id.twitch.tv/oauth2")
        .client_auth(ClientAuthMethod::ClientSecretPost)
        .authorization_param("scope", "openid user:read:email")
        .authorization_param("claims", claims.to_string())
        .conform(conform_twitch)
        .style(style("#65459B", Some("#fff")))
}

/// Twitch's token answers: `scope` is an array (joined with spaces) and errors are
/// `{status, message}` (made `{error: "invalid_request", error_description}`).
fn conform_twitch(status: u16, mut body: Value) -> (u16, Value) {
    let Value::Object(m) = &mut body else {
        return (status, body);
    };
    if (200..300).contains(&status) {
        match m.get("scope") {
            Some(Value::Array(scopes)) => {
                let joined: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
                let joined = joined.join(" ");
                m.insert("scope".to_owned(), Value::from(joined));
            }
            Some(Value::String(_)) | None => {}
            Some(_) => {
                m.remove("scope");
            }
        }
    } else if !m.get("error").is_some_and(Value::is_string) {
        let description = m.get("message").cloned().unwrap_or(Value::Null);
        body = json!({"error": "invalid_request", "error_description": description});
    }
    (status, body)
}

/// United Effects, id `united-effects`: your authority's issuer, `scope=openid email
/// profile`, `resource=<issuer>`.
pub fn united_effects(issuer: &str) -> OAuthProvider {
    oidc("united-effects", "United Effects", issuer)
        .authorization_param("scope", "openid email profile")
        .authorization_param("resource", issuer)
}

/// Vipps MobilePay, id `vipps`: issuer
/// `https://api.vipps.no/access-management-1.0/access/`, `scope=openid name email`, the
/// profile from userinfo, checks PKCE, state and nonce.
pub fn vipps() -> OAuthProvider {
    oidc(
        "vipps",
        "Vipps",
        "https://api.vipps.no/access-management-1.0/access/",
    )
    .authorization_param("scope", "openid name email")
    .id_token(false)
    .checks(all_checks())
    .style(style("#f05c18", None))
}

/// ZITADEL, id `zitadel`: your instance's issuer.
pub fn zitadel(issuer: impl Into<String>) -> OAuthProvider {
    oidc("zitadel", "ZITADEL", issuer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twitch_token_answers_are_conformed() {
        let (_, ok) = conform_twitch(
            200,
            json!({"access_token": "a", "scope": ["openid", "user:read:email"]}),
        );
        assert_eq!(ok["scope"], "openid user:read:email");
        let (_, odd) = conform_twitch(200, json!({"access_token": "a", "scope": 1}));
        assert!(odd.get("scope").is_none());
        let (status, err) = conform_twitch(
            400,
            json!({"status": 400, "message": "Invalid authorization code"}),
        );
        assert_eq!(status, 400);
        assert_eq!(
            err,
            json!({"error": "invalid_request", "error_description": "Invalid authorization code"})
        );
        let (_, kept) = conform_twitch(400, json!({"error": "invalid_grant"}));
        assert_eq!(kept, json!({"error": "invalid_grant"}));
    }
}
