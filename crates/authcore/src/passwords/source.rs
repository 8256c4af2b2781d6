//! User sources: where a username and password are checked (a users file, a directory, the
//! password accounts of the adapter), behind one trait the credentials sign-in calls.

use std::fmt;

use async_trait::async_trait;

use crate::box_error::BoxError;

/// A user as a [`UserSource`] knows them, after a right password.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SourceUser {
    /// The source's stable name for the user (a username, a directory's entry id): the
    /// provider account id the user is linked by, so a renamed display name or a changed
    /// address keeps the same user.
    pub id: String,
    /// Display name, if the source has one.
    pub name: Option<String>,
    /// Email address, if the source has one.
    pub email: Option<String>,
    /// The user's groups in the source (for the gateway's rules, its identity headers and
    /// the OpenID Provider's `groups` claim).
    pub groups: Vec<String>,
    /// The adapter's user, when the source is the adapter's own password accounts.
    pub(crate) adapter_user_id: Option<String>,
    /// A password account whose address is not confirmed yet, where confirmation is
    /// required: the right password does not sign it in.
    pub(crate) unverified: bool,
}

impl SourceUser {
    /// A user with just an id.
    pub fn new(id: impl Into<String>) -> Self {
        SourceUser {
            id: id.into(),
            ..Default::default()
        }
    }

    /// With a display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// With an email address.
    pub fn email(mut self, email: impl Into<String>) -> Self {
        self.email = Some(email.into());
        self
    }

    /// With groups.
    pub fn groups(mut self, groups: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }
}

/// Why a [`UserSource`] could not answer. A wrong password is no error: it is `Ok(None)`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The source could not be reached or did not answer in time (a directory down, a
    /// database timeout); the sign-in fails with `CallbackRouteError` and is not counted as
    /// a wrong password.
    #[error("the user source is unavailable: {0}")]
    Unavailable(#[source] BoxError),
    /// Too many passwords are being checked at once; the sign-in may be tried again.
    #[error("too many password checks at once")]
    Busy,
}

/// Where usernames and passwords are checked.
///
/// An implementation answers `Ok(None)` alike for an unknown user and a wrong password,
/// and spends the same work on both (a password hash verified for an unknown user too), so
/// that neither the answer nor its time tells whether a user exists.
#[async_trait]
pub trait UserSource: Send + Sync + fmt::Debug {
    /// The source's id: the provider id of the accounts it links users by (`users-file`,
    /// `ldap`, `password`). Ids have no `:`.
    fn id(&self) -> &str;

    /// Whether the source's addresses are its operator's word (a users file), so that a
    /// user it answers is linked to the stored user with the same address at the first
    /// sign-in. `false` (the default) where users may edit their own address (a directory's
    /// `mail`, often writable by its owner): a first sign-in whose address is another
    /// user's is then refused, as a wrong password is, instead of taking that account.
    fn vouches_for_addresses(&self) -> bool {
        false
    }

    /// Checks `username` and `password`: the user when both are right, `None` otherwise.
    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, SourceError>;
}
