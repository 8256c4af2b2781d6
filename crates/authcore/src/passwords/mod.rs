//! Password sign-in without an `authorize` of your own: password hashes
//! ([`PasswordHashing`]: argon2id, and the formats other systems export), user sources
//! ([`UserSource`]: the adapter's [`PasswordAccounts`], a users file, a directory) and the
//! credentials provider that signs their users in
//! ([`CredentialsProvider::from_source`](crate::providers::CredentialsProvider::from_source)).
//!
//! ```
//! # use std::sync::Arc;
//! use authcore::adapter::MemoryAdapter;
//! use authcore::passwords::{PasswordAccounts, PasswordHashing};
//! use authcore::providers::CredentialsProvider;
//!
//! let adapter = Arc::new(MemoryAdapter::new());
//! let accounts = PasswordAccounts::new(adapter.clone(), PasswordHashing::owasp()).unwrap();
//! let provider = CredentialsProvider::from_source(Arc::new(accounts));
//! assert_eq!(provider.id(), "password");
//! ```

mod accounts;
mod hash;
mod policy;
mod pool;
mod signin;
mod source;

pub use accounts::{PASSWORD_ACCOUNTS_ID, PasswordAccounts};
pub use hash::{
    HashError, HashKind, MAX_PASSWORD_BYTES, PasswordHashing, Verification, from_keycloak, parse,
};
pub use policy::{
    BreachCheck, BreachCheckError, PasswordContext, PasswordPolicy, PasswordPolicyBuilder,
    PolicyConfigError, PolicyViolation,
};
pub(crate) use signin::{EMAIL_NOT_VERIFIED, SignInError, authorize};
pub use source::{SourceError, SourceUser, UserSource};
