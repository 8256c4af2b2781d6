//! The sign-in providers the configuration names besides the demo's credentials: email
//! (SMTP or the console) and the OAuth / OpenID Connect providers of the environment.

use authcore::env::Env;
use authcore::providers::OAuthProvider;
use authcore::providers::catalog::{self, CatalogError};
use authcore::providers::email::{EmailProvider, LinkPurpose};

use crate::EmailDelivery;
use crate::config_file::ProvidersSection;

/// Display name of the generic OIDC provider when `AUTH_OIDC_NAME` is not set.
pub const DEFAULT_OIDC_NAME: &str = "OpenID Connect";
/// The demo's email provider (id `email`): SMTP when configured, otherwise a console sender
/// that prints each magic link and security notice to standard output.
pub fn email_provider(delivery: &EmailDelivery, from: &str) -> EmailProvider {
    match delivery {
        EmailDelivery::Smtp(sender) => authcore_smtp::email_provider((**sender).clone(), from),
        EmailDelivery::Console => {
            EmailProvider::new(from)
                .send_verification_request(|request| async move {
                    // The demo's stand-in for a mailbox: the link is a credential, printed on purpose.
                    let what = match request.purpose {
                        LinkPurpose::SignIn => "magic link",
                        LinkPurpose::VerifyAddress => "address confirmation link",
                        LinkPurpose::ResetPassword => "password reset link",
                        LinkPurpose::ConfirmNewAddress => "new address confirmation link",
                        LinkPurpose::AccountExists => "notice (the address has an account)",
                        LinkPurpose::NoAccount => "notice (no account has the address)",
                        LinkPurpose::Invitation => "invitation link",
                        LinkPurpose::AccountSetup => "account set-up link",
                        _ => "link",
                    };
                    println!(
                        "{what} for {} (valid until {}):\n  {}",
                        request.identifier, request.expires, request.url
                    );
                    Ok(())
                })
                .send_security_notice(|notice| async move {
                    println!("security notice for {}: {}", notice.to, notice.subject);
                    Ok(())
                })
        }
    }
}

/// The OAuth providers configured in `env` or in the file's `[providers.*]` (`file`, each
/// key under its variable: a variable that is set wins), in this order:
///
/// * every preset of the catalogue ([`catalog::entries()`], the 93 OAuth / OIDC ids of
///   Auth.js) with any of its `AUTH_<ID>_ID`, `AUTH_<ID>_SECRET` or settings
///   (`AUTH_<ID>_ISSUER`, `AUTH_NETSUITE_ACCOUNT_ID` …) set to a non-empty value (id
///   upper-cased, `-` → `_`); it needs the id, the secret and its required settings;
/// * a generic OpenID Connect provider ([`catalog::oidc()`]), id `oidc`, with
///   `AUTH_OIDC_ISSUER`, `AUTH_OIDC_ID` and `AUTH_OIDC_SECRET`; its name is `AUTH_OIDC_NAME`
///   or [`DEFAULT_OIDC_NAME`].
///
/// A preset with some of its settings but not all is an error naming the missing variable
/// (the server then does not start). Register `<origin><base path>/callback/<id>` (by
/// default `http://127.0.0.1:3000/auth/callback/github` …) as their redirect URI.
pub fn oauth_providers(
    env: &Env,
    file: &ProvidersSection,
) -> Result<Vec<OAuthProvider>, CatalogError> {
    let mut providers = Vec::new();
    for entry in catalog::entries() {
        let values = file.values_under(entry.id, entry.keys(), |k| entry.env_var(k), env);
        if entry.is_given(&values) {
            providers.push(entry.build_from(&values)?);
        }
    }
    let oidc = file.values_under(
        "oidc",
        ["issuer", "id", "secret", "name"],
        |k| format!("AUTH_OIDC_{}", k.to_ascii_uppercase()),
        env,
    );
    let var = |k: &str| oidc.get(k).filter(|v| !v.trim().is_empty());
    if let (Some(issuer), Some(id), Some(secret)) = (var("issuer"), var("id"), var("secret")) {
        let name = var("name").unwrap_or(DEFAULT_OIDC_NAME);
        providers.push(
            catalog::oidc("oidc", name, issuer)
                .client_id(id)
                .client_secret(secret),
        );
    }
    Ok(providers)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ServerConfig;

    #[test]
    fn oauth_providers_from_env() {
        assert!(
            oauth_providers(&Env::default(), &ProvidersSection::default())
                .unwrap()
                .is_empty()
        );
        let providers = oauth_providers(
            &Env::from_pairs([
                ("AUTH_GITHUB_ID", "gh-id"),
                ("AUTH_GITHUB_SECRET", "gh-secret"),
                ("AUTH_GOOGLE_ID", "g-id"),
                ("AUTH_GOOGLE_SECRET", "g-secret"),
                ("AUTH_OIDC_ISSUER", "https://sso.example.com"),
                ("AUTH_OIDC_ID", "o-id"),
                ("AUTH_OIDC_SECRET", "o-secret"),
            ]),
            &ProvidersSection::default(),
        )
        .unwrap();
        let ids: Vec<&str> = providers.iter().map(OAuthProvider::id).collect();
        assert_eq!(ids, ["github", "google", "oidc"]);
        let expected = [
            ("gh-id", "gh-secret"),
            ("g-id", "g-secret"),
            ("o-id", "o-secret"),
        ];
        for (p, (client_id, secret)) in providers.iter().zip(expected) {
            let debug = format!("{p:?}");
            assert!(debug.contains(client_id), "{debug}");
            assert!(
                debug.contains("[redacted]") && !debug.contains(secret),
                "{debug}"
            );
        }
        assert!(format!("{:?}", providers[2]).contains("https://sso.example.com"));
    }

    /// Any catalogue preset by its Auth.js variables, as a user moving from Auth.js sets them.
    #[tokio::test]
    async fn catalogue_providers_from_env() {
        let providers = oauth_providers(
            &Env::from_pairs([
                ("AUTH_DISCORD_ID", "d-id"),
                ("AUTH_DISCORD_SECRET", "d-secret"),
                ("AUTH_KEYCLOAK_ID", "k-id"),
                ("AUTH_KEYCLOAK_SECRET", "k-secret"),
                ("AUTH_KEYCLOAK_ISSUER", "https://kc.example/realms/main"),
                ("AUTH_MICROSOFT_ENTRA_ID_ID", "m-id"),
                ("AUTH_MICROSOFT_ENTRA_ID_SECRET", "m-secret"),
            ]),
            &ProvidersSection::default(),
        )
        .unwrap();
        let ids: Vec<&str> = providers.iter().map(OAuthProvider::id).collect();
        assert_eq!(ids, ["discord", "keycloak", "microsoft-entra-id"]);
        // Some settings but not all: an error naming what is missing, without the secret.
        for (pairs, missing) in [
            (
                vec![("AUTH_OKTA_ID", "o"), ("AUTH_OKTA_SECRET", "top-secret")],
                "AUTH_OKTA_ISSUER",
            ),
            (
                vec![("AUTH_DISCORD_SECRET", "top-secret")],
                "AUTH_DISCORD_ID",
            ),
        ] {
            let err = oauth_providers(&Env::from_pairs(pairs), &ProvidersSection::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains(missing), "{err}");
            assert!(!err.contains("top-secret"), "{err}");
        }
        // ... and the whole configuration fails to build with it.
        let mut config = ServerConfig::new("a secret long enough for the demo");
        config.env = Env::from_pairs([("AUTH_AUTH0_ID", "a"), ("AUTH_AUTH0_SECRET", "b")]);
        let err = config.build().await.unwrap_err().to_string();
        assert!(err.contains("AUTH_AUTH0_ISSUER"), "{err}");
    }
}
