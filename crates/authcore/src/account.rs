//! Account management for a signed-in user (beyond Auth.js, which leaves it to the app): the
//! ways a user signs in, unlinking one without removing the last, deleting a passkey, and
//! deleting the user. Linking another provider while signed in needs no API: a sign-in with
//! it while the session cookie is present links it (Auth.js's behaviour, §10.3).
//!
//! Every function takes the user id of the session (`session.user.id` from a session
//! callback, or the `sub` of the JWT): authorising the caller is the host's job.
//!
//! ```
//! # async fn demo(auth: authcore::Auth, user_id: &str) -> Result<(), authcore::account::AccountError> {
//! let methods = auth.sign_in_methods(user_id).await?;
//! if let Some(github) = methods.accounts.iter().find(|a| a.provider == "github") {
//!     // Refused with `LastSignInMethod` when it is the only way left.
//!     auth.unlink_account(user_id, &github.provider, &github.provider_account_id).await?;
//! }
//! # Ok(()) }
//! ```

use serde::Serialize;

use crate::adapter::{Adapter, AdapterError};
use crate::handler::Auth;
use crate::providers::Provider;
use crate::types::ProviderType;

/// A provider account linked to the user (an OAuth / OIDC or email account; passkeys are
/// listed as [`Passkey`]s). Tokens are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedAccount {
    /// The provider id (`github`).
    pub provider: String,
    /// The user's id at the provider.
    pub provider_account_id: String,
    /// `oauth`, `oidc` or `email`.
    #[serde(rename = "type")]
    pub kind: ProviderType,
}

/// A passkey (WebAuthn authenticator) of the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Passkey {
    /// The credential id (as stored: standard base64).
    #[serde(rename = "credentialID")]
    pub credential_id: String,
    /// `singleDevice` or `multiDevice`.
    pub credential_device_type: String,
    /// Whether the authenticator says the credential is backed up (synced).
    pub credential_backed_up: bool,
    /// Transports, comma-separated, as stored.
    pub transports: Option<String>,
}

/// The ways a user can sign in, as the adapter knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignInMethods {
    /// Linked provider accounts, ordered by provider and provider account id.
    pub accounts: Vec<LinkedAccount>,
    /// Passkeys, ordered by credential id.
    pub passkeys: Vec<Passkey>,
    /// The address magic links go to, when an email provider is configured and the user
    /// has one.
    pub email: Option<String>,
}

impl SignInMethods {
    /// How many independent ways to sign in these are: each OAuth / OIDC account, each
    /// passkey, and magic links (email accounts only record that they were used).
    pub fn count(&self) -> usize {
        let oauth = self
            .accounts
            .iter()
            .filter(|a| matches!(a.kind, ProviderType::Oauth | ProviderType::Oidc))
            .count();
        oauth + self.passkeys.len() + usize::from(self.email.is_some())
    }
}

/// Why an account-management call was refused.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The configuration has no adapter: there are no stored accounts to manage.
    #[error("account management needs an adapter")]
    NoAdapter,
    /// No such user, or the account or passkey is not the user's.
    #[error("no such account or passkey of this user")]
    NotFound,
    /// It is the user's last way to sign in.
    #[error("the last way to sign in cannot be removed")]
    LastSignInMethod,
    /// The adapter failed.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

impl Auth {
    /// Whether `csrf_token` (the `csrfToken` a form or JSON body of the host's own route
    /// sent, from `GET <basePath>/csrf`) matches the CSRF cookie of the request to `uri`
    /// with `headers`: the double-submit check of Auth.js's own POSTs (constant time), for
    /// the host's state-changing routes such as account management.
    pub async fn verify_csrf(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        csrf_token: &str,
    ) -> bool {
        let Ok(req) = self.session_request(uri, headers).await else {
            return false;
        };
        let c = &*self.config().inner;
        let cookie = req.cookies.get(&c.cookies(req.is_https).csrf_token.name);
        crate::csrf::check_or_create(cookie, &c.secret_string, true, Some(csrf_token)).verified
    }

    /// The id of the signed-in user of a request to `uri` with `headers` (what the account
    /// functions take): the database session's user, or the JWT's `sub`. `None` when
    /// signed out, expired, or on any failure.
    pub async fn session_user_id(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Option<String> {
        let req = self.session_request(uri, headers).await.ok()?;
        let c = &*self.config().inner;
        let spec = &c.cookies(req.is_https).session_token;
        let token = crate::cookies::SessionCookieStore::new(spec, &req.cookies).value()?;
        match &c.adapter {
            Some(adapter) if c.session_strategy == crate::config::SessionStrategy::Database => {
                let (session, user) = adapter.get_session_and_user(&token).await.ok()??;
                (session.expires > time::OffsetDateTime::now_utc()).then_some(user.id)
            }
            _ => {
                let claims = c.decode_session(&token, &spec.name).ok()??;
                claims.get("sub")?.as_str().map(str::to_owned)
            }
        }
    }

    fn adapter(&self) -> Result<&dyn Adapter, AccountError> {
        self.config()
            .inner
            .adapter
            .as_deref()
            .ok_or(AccountError::NoAdapter)
    }

    /// The ways user `user_id` can sign in: linked accounts, passkeys and magic links.
    pub async fn sign_in_methods(&self, user_id: &str) -> Result<SignInMethods, AccountError> {
        let adapter = self.adapter()?;
        let user = adapter
            .get_user(user_id)
            .await?
            .ok_or(AccountError::NotFound)?;
        let accounts = adapter
            .list_accounts_by_user_id(user_id)
            .await?
            .into_iter()
            .filter(|a| a.kind != ProviderType::Webauthn)
            .map(|a| LinkedAccount {
                provider: a.provider,
                provider_account_id: a.provider_account_id,
                kind: a.kind,
            })
            .collect();
        let passkeys =
            if adapter.supports(crate::adapter::AdapterMethod::ListAuthenticatorsByUserId) {
                adapter
                    .list_authenticators_by_user_id(user_id)
                    .await?
                    .into_iter()
                    .map(|a| Passkey {
                        credential_id: a.credential_id,
                        credential_device_type: a.credential_device_type,
                        credential_backed_up: a.credential_backed_up,
                        transports: a.transports,
                    })
                    .collect()
            } else {
                Vec::new()
            };
        let email_provider = self
            .config()
            .inner
            .providers
            .iter()
            .any(|p| matches!(p, Provider::Email(_)));
        Ok(SignInMethods {
            accounts,
            passkeys,
            email: user.email.filter(|_| email_provider),
        })
    }

    /// Unlinks one of the user's provider accounts; refused when it is the user's last way
    /// to sign in ([`SignInMethods::count`]).
    pub async fn unlink_account(
        &self,
        user_id: &str,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AccountError> {
        let methods = self.sign_in_methods(user_id).await?;
        let account = methods
            .accounts
            .iter()
            .find(|a| a.provider == provider && a.provider_account_id == provider_account_id)
            .ok_or(AccountError::NotFound)?;
        let counts = matches!(account.kind, ProviderType::Oauth | ProviderType::Oidc);
        if counts && methods.count() <= 1 {
            return Err(AccountError::LastSignInMethod);
        }
        self.adapter()?
            .unlink_account(provider, provider_account_id)
            .await?;
        Ok(())
    }

    /// Deletes one of the user's passkeys (the authenticator and the account the passkey
    /// provider linked for it); refused when it is the user's last way to sign in.
    pub async fn delete_passkey(
        &self,
        user_id: &str,
        credential_id: &str,
    ) -> Result<(), AccountError> {
        let methods = self.sign_in_methods(user_id).await?;
        if !methods
            .passkeys
            .iter()
            .any(|p| p.credential_id == credential_id)
        {
            return Err(AccountError::NotFound);
        }
        if methods.count() <= 1 {
            return Err(AccountError::LastSignInMethod);
        }
        let adapter = self.adapter()?;
        let authenticator = adapter.get_authenticator(credential_id).await?;
        adapter.delete_authenticator(credential_id).await?;
        if let Some(a) = authenticator {
            for p in &self.config().inner.providers {
                if let Provider::WebAuthn(w) = p {
                    adapter
                        .unlink_account(w.id(), &a.provider_account_id)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// Deletes the user with their accounts, sessions, passkeys and unused magic links
    /// (one transaction on the SQL adapters).
    pub async fn delete_user(&self, user_id: &str) -> Result<(), AccountError> {
        Ok(self.adapter()?.delete_user(user_id).await?)
    }
}
