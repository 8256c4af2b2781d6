//! What an operator does from the command line with organizations on: invite an address
//! (to sign up, or to an organization) and make an organization for an existing user. The
//! `authcore-server invite` and `create-organization` commands call these on the [`Server`]
//! their configuration builds, so they act as the host (no member's permission is asked).

use authcore::account::{AccountError, InvitationSpec, SentInvitation};
use authcore::adapter::{Adapter, AdapterError, AdapterUser, Organization};

use crate::Server;

/// Why an operator command was refused (the message says what to do).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// The configuration has no database to keep organizations in.
    #[error(
        "there is no database to keep organizations in: set AUTHCORE_DATABASE_URL (or [server] database_url)"
    )]
    NoDatabase,
    /// Organizations are off.
    #[error(
        "organizations are off: set [organizations] enabled = true (AUTHCORE_ORGANIZATIONS=on)"
    )]
    OrganizationsOff,
    /// No organization has the slug.
    #[error("no organization has the slug {0:?}")]
    NoSuchOrganization(String),
    /// No user has the address.
    #[error(
        "no user has the address {0}: the owner signs in once first, or is made with `authcore-server add-user`"
    )]
    NoSuchUser(String),
    /// Roles were given for an invitation to sign up, which carries none.
    #[error("--role needs --organization: an invitation to sign up carries no roles")]
    RolesWithoutOrganization,
    /// authcore refused (a bad name or slug, a slug in use, an unknown role, a mail that
    /// failed …).
    #[error(transparent)]
    Refused(AccountError),
    /// The database failed.
    #[error("the database: {0}")]
    Database(#[from] AdapterError),
}

impl From<AccountError> for OperatorError {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::OrganizationsOff => OperatorError::OrganizationsOff,
            AccountError::NoAdapter => OperatorError::NoDatabase,
            other => OperatorError::Refused(other),
        }
    }
}

impl Server {
    /// Invites `email` as the host: to sign up where `organization` is `None` (where sign-up
    /// is by invitation), else to the organization with that slug, with `roles` (default
    /// `member`). The invitation is mailed when the configuration mails; its link is in
    /// the answer either way.
    pub async fn invite(
        &self,
        email: &str,
        organization: Option<&str>,
        roles: &[String],
    ) -> Result<SentInvitation, OperatorError> {
        let spec = match organization {
            Some(slug) => InvitationSpec::to_organization(self.organization(slug).await?.id, email)
                .roles(roles.iter().cloned()),
            None if !roles.is_empty() => return Err(OperatorError::RolesWithoutOrganization),
            None => InvitationSpec::to_sign_up(email),
        };
        Ok(self.auth().invite(None, &spec, None).await?)
    }

    /// Makes the organization `name` (its slug `slug`, or one made from the name) owned by
    /// the user of `owner_email`, as the host (whether users may make their own or not).
    pub async fn create_organization(
        &self,
        name: &str,
        owner_email: &str,
        slug: Option<&str>,
    ) -> Result<Organization, OperatorError> {
        let owner = self.user_of(owner_email).await?;
        Ok(self
            .auth()
            .create_organization_for(&owner.id, name, slug)
            .await?)
    }

    /// The organization with `slug`.
    async fn organization(&self, slug: &str) -> Result<Organization, OperatorError> {
        let db: &dyn Adapter = self.database().ok_or(OperatorError::NoDatabase)?;
        let store = db.organizations().ok_or(OperatorError::OrganizationsOff)?;
        store
            .get_organization_by_slug(slug)
            .await?
            .ok_or_else(|| OperatorError::NoSuchOrganization(slug.to_owned()))
    }

    /// The user of `email` (compared as authcore stores addresses).
    async fn user_of(&self, email: &str) -> Result<AdapterUser, OperatorError> {
        let db = self.database().ok_or(OperatorError::NoDatabase)?;
        let normalized = authcore::providers::email::normalize_email(email)
            .map_err(|_| OperatorError::Refused(AccountError::InvalidEmail))?;
        db.get_user_by_email(&normalized)
            .await?
            .ok_or_else(|| OperatorError::NoSuchUser(normalized))
    }
}
