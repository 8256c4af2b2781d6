//! Password accounts kept by the adapter ([`PasswordStore`]): users sign in with their
//! email address and a password hashed with [`PasswordHashing`].

use std::sync::Arc;

use async_trait::async_trait;

use super::hash::{PasswordHashing, Verification};
use super::policy::{BreachCheck, PasswordContext, PasswordPolicy, PolicyViolation};
use super::pool;
use super::source::{SourceError, SourceUser, UserSource};
use crate::adapter::{Adapter, AdapterError, PasswordStore};
use crate::email_address::normalize_email;
use crate::error::ConfigError;

/// The provider id of password accounts.
pub const PASSWORD_ACCOUNTS_ID: &str = "password";

/// The [`UserSource`] of the adapter's password accounts: the username is the user's email
/// address, the password is checked against the user's stored hash, and a hash of another
/// format or of older parameters is replaced by a new argon2id hash after a right password
/// (only if it was not changed meanwhile: [`PasswordStore::replace_password_hash`]).
///
/// Given to [`AuthConfigBuilder::password_accounts`](crate::AuthConfigBuilder::password_accounts),
/// they also get their self-service routes and pages: sign-up (only when
/// [`allow_sign_up`](Self::allow_sign_up), and then as the config's
/// [`SignUpPolicy`](crate::SignUpPolicy) lets in), the confirmation of a new account's
/// address, a forgotten password, and, on the account page, changing the password and the
/// address.
#[derive(Clone)]
pub struct PasswordAccounts {
    adapter: Arc<dyn Adapter>,
    hashing: Arc<PasswordHashing>,
    policy: Arc<PasswordPolicy>,
    breaches: Option<Arc<BreachCheck>>,
    sign_up: bool,
    verify_email: bool,
}

impl std::fmt::Debug for PasswordAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordAccounts")
            .field("hashing", &self.hashing)
            .finish_non_exhaustive()
    }
}

impl PasswordAccounts {
    /// The password accounts of `adapter`, which must have a [`PasswordStore`]
    /// ([`ConfigError::MissingAdapterMethods`] names its methods when it has none).
    pub fn new(adapter: Arc<dyn Adapter>, hashing: PasswordHashing) -> Result<Self, ConfigError> {
        if adapter.passwords().is_none() {
            return Err(ConfigError::MissingAdapterMethods {
                methods: "PasswordStore (getPasswordHash, setPasswordHash, replacePasswordHash, deletePasswordHash)".to_owned(),
            });
        }
        Ok(PasswordAccounts {
            adapter,
            hashing: Arc::new(hashing),
            policy: Arc::new(PasswordPolicy::default()),
            breaches: None,
            sign_up: false,
            verify_email: true,
        })
    }

    /// The policy new passwords must meet (sign-up, reset, change; default
    /// [`PasswordPolicy::default`]). Passwords set before are not checked again.
    pub fn policy(mut self, policy: PasswordPolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// Also asks a breach service about new passwords ([`BreachCheck`]; off by default).
    pub fn breach_check(mut self, check: BreachCheck) -> Self {
        self.breaches = Some(Arc::new(check));
        self
    }

    /// Lets visitors make their own account with the sign-up page and route (off by
    /// default), within the config's [`SignUpPolicy`](crate::SignUpPolicy).
    pub fn allow_sign_up(mut self, allow: bool) -> Self {
        self.sign_up = allow;
        self
    }

    /// Whether a new account must confirm its address by a link before its first sign-in
    /// (default `true`; then an email provider must be configured to mail the link). Off,
    /// an account signs in at once, and the sign-up answer tells whether an address had an
    /// account already.
    pub fn require_verified_email(mut self, require: bool) -> Self {
        self.verify_email = require;
        self
    }

    /// The shortest password the policy takes (for the forms' `minlength`).
    pub(crate) fn min_length(&self) -> usize {
        self.policy.min_length()
    }

    /// Whether visitors may make their own account.
    pub fn sign_up_allowed(&self) -> bool {
        self.sign_up
    }

    /// Whether new accounts confirm their address before their first sign-in.
    pub fn verifies_email(&self) -> bool {
        self.verify_email
    }

    /// Checks `password` against the policy (and the breach service, when set) for the
    /// user with `email` and `name`.
    pub async fn check_password(
        &self,
        password: &str,
        email: Option<&str>,
        name: Option<&str>,
    ) -> Result<(), PolicyViolation> {
        let mut context = PasswordContext::new();
        if let Some(email) = email {
            context = context.email(email);
        }
        if let Some(name) = name {
            context = context.username(name);
        }
        self.policy
            .check_with_breaches(password, &context, self.breaches.as_deref())
            .await
    }

    /// A new hash of `password`, made off the async threads.
    pub(crate) async fn hash(&self, password: &str) -> Result<String, SourceError> {
        let hashing = Arc::clone(&self.hashing);
        let password = password.to_owned();
        pool::run(move || hashing.hash(&password))
            .await?
            .map_err(|e| SourceError::Unavailable(e.into()))
    }

    /// Whether `password` is `user_id`'s current password (`None`: the user has none),
    /// with the same work when the user has none.
    pub(crate) async fn verify_current(
        &self,
        user_id: &str,
        password: &str,
    ) -> Result<Option<bool>, SourceError> {
        let stored = self
            .store()?
            .get_password_hash(user_id)
            .await
            .map_err(unavailable)?;
        let hashing = Arc::clone(&self.hashing);
        let pw = password.to_owned();
        match stored {
            None => {
                pool::run(move || hashing.verify_unknown(&pw)).await?;
                Ok(None)
            }
            Some(hash) => {
                let v = pool::run(move || hashing.verify(&hash, &pw)).await?;
                Ok(Some(matches!(v, Ok(Verification::Match { .. }))))
            }
        }
    }

    /// The same work as a check of a password that does not match (for answers that must
    /// not tell a known user from an unknown one by their time).
    pub(crate) async fn spend_hash_work(&self, password: &str) -> Result<(), SourceError> {
        let hashing = Arc::clone(&self.hashing);
        let pw = password.to_owned();
        pool::run(move || hashing.verify_unknown(&pw)).await?;
        Ok(())
    }

    /// Stores `hash` as `user_id`'s password.
    pub(crate) async fn store_hash(&self, user_id: &str, hash: &str) -> Result<(), SourceError> {
        self.store()?
            .set_password_hash(user_id, hash)
            .await
            .map_err(unavailable)
    }

    fn store(&self) -> Result<&dyn PasswordStore, SourceError> {
        crate::adapter::capability(self.adapter.passwords(), "PasswordStore").map_err(unavailable)
    }

    /// Sets `user_id`'s password (hashed off the async threads; not checked against the
    /// policy: for operators and imports).
    pub async fn set_password(&self, user_id: &str, password: &str) -> Result<(), SourceError> {
        let hash = self.hash(password).await?;
        self.store_hash(user_id, &hash).await
    }
}

fn unavailable(e: AdapterError) -> SourceError {
    SourceError::Unavailable(e.into())
}

#[async_trait]
impl UserSource for PasswordAccounts {
    fn id(&self) -> &str {
        PASSWORD_ACCOUNTS_ID
    }

    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, SourceError> {
        let user = match normalize_email(username) {
            Ok(email) => self
                .adapter
                .get_user_by_email(&email)
                .await
                .map_err(unavailable)?,
            Err(_) => None,
        };
        let stored = match &user {
            Some(u) => self
                .store()?
                .get_password_hash(&u.id)
                .await
                .map_err(unavailable)?,
            None => None,
        };
        let (Some(user), Some(stored)) = (user, stored) else {
            // The same work as a wrong password of a known user.
            let hashing = Arc::clone(&self.hashing);
            let password = password.to_owned();
            pool::run(move || hashing.verify_unknown(&password)).await?;
            return Ok(None);
        };
        let hashing = Arc::clone(&self.hashing);
        let (pw, hash) = (password.to_owned(), stored.clone());
        let verified = pool::run(move || {
            let v = hashing.verify(&hash, &pw);
            let rehash = matches!(v, Ok(Verification::Match { rehash: true }))
                .then(|| hashing.hash(&pw).ok())
                .flatten();
            (v, rehash)
        })
        .await?;
        match verified {
            (Ok(Verification::Match { .. }), rehash) => {
                if let Some(new) = rehash {
                    // A failed rehash leaves the old hash, which still verifies.
                    if let Err(e) = self
                        .store()?
                        .replace_password_hash(&user.id, &stored, &new)
                        .await
                    {
                        tracing::warn!(error = %e, "cannot store the rehashed password");
                    }
                }
                let mut found = SourceUser::new(user.id.clone());
                found.unverified = self.verify_email && user.email_verified.is_none();
                found.name = user.name;
                found.email = user.email;
                found.adapter_user_id = Some(user.id);
                Ok(Some(found))
            }
            (Ok(Verification::Mismatch), _) => Ok(None),
            (Err(e), _) => {
                tracing::error!(error = %e, "a stored password hash is unreadable");
                Ok(None)
            }
        }
    }
}
