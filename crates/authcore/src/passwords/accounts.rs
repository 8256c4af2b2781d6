//! Password accounts kept by the adapter ([`PasswordStore`]): users sign in with their
//! email address and a password hashed with [`PasswordHashing`].

use std::sync::Arc;

use async_trait::async_trait;

use super::hash::{PasswordHashing, Verification};
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
#[derive(Clone)]
pub struct PasswordAccounts {
    adapter: Arc<dyn Adapter>,
    hashing: Arc<PasswordHashing>,
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
        })
    }

    fn store(&self) -> Result<&dyn PasswordStore, SourceError> {
        crate::adapter::capability(self.adapter.passwords(), "PasswordStore").map_err(unavailable)
    }

    /// Sets `user_id`'s password (hashed off the async threads).
    pub async fn set_password(&self, user_id: &str, password: &str) -> Result<(), SourceError> {
        let hashing = Arc::clone(&self.hashing);
        let password = password.to_owned();
        let hash = pool::run(move || hashing.hash(&password))
            .await?
            .map_err(|e| SourceError::Unavailable(e.into()))?;
        self.store()?
            .set_password_hash(user_id, &hash)
            .await
            .map_err(unavailable)
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
