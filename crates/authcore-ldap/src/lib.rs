//! LDAP and Active Directory as a user source of authcore's password sign-in: an
//! [`LdapSource`] is a [`UserSource`](authcore::passwords::UserSource) that
//! [`CredentialsProvider::from_source`](authcore::providers::CredentialsProvider::from_source)
//! turns into a username and password form.
//!
//! A sign-in takes three steps: a service account searches the user under `base_dn` with
//! `user_filter`, the typed username escaped into it; exactly one entry must answer; then
//! that entry's DN is bound with the typed password on a connection of its own. The user
//! authcore records is the entry's `username_attribute` value (its account id), with the
//! entry's display name, address and groups (`memberOf` or a group search).
//!
//! ```no_run
//! # use std::sync::Arc;
//! use authcore::providers::CredentialsProvider;
//! use authcore_ldap::{LdapSettings, LdapSource};
//!
//! let mut settings = LdapSettings::new(
//!     "ldap://dc1.corp.example.com",
//!     "CN=authcore,OU=Service Accounts,DC=corp,DC=example,DC=com",
//!     "service password",
//!     "DC=corp,DC=example,DC=com",
//! );
//! // Active Directory.
//! settings.start_tls = true;
//! settings.user_filter =
//!     "(&(objectCategory=person)(objectClass=user)(sAMAccountName={username}))".into();
//! settings.username_attribute = "sAMAccountName".into();
//! let provider = CredentialsProvider::from_source(Arc::new(LdapSource::new(settings)?));
//! # Ok::<(), authcore_ldap::SettingsError>(())
//! ```
//!
//! The connections are TLS (`ldaps://` or StartTLS) through rustls, each wait bounded by the
//! connect or operation timeout; a directory that is down or slow makes the sign-in fail as
//! unavailable (`SourceError::Unavailable`), never hang. The manual's chapter
//! `docs/manual/ldap.md` has OpenLDAP and Active Directory examples.
#![forbid(unsafe_code)]

mod connection;
mod error;
mod settings;
mod source;

pub use error::DirectoryError;
pub use settings::{
    DEFAULT_GROUP_FILTER, DEFAULT_POOL_SIZE, DEFAULT_TIMEOUT, DEFAULT_USER_FILTER, LdapSettings,
    SettingsError,
};
pub use source::{LDAP_SOURCE_ID, LdapSource};
