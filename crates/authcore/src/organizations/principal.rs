//! Who a request acts as ([`Principal`]), and why an API key was refused ([`KeyRefused`]):
//! plain data, which `Auth::principal` fills in and the guards check.

/// Who a request acts as: a signed-in user (in their active organization), or an API key
/// (a user's, or an organization's within its permissions).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Principal {
    /// The user (for an organization's key, the member who made it).
    pub user_id: String,
    /// The organization the request acts in, with what it may do there.
    pub organization: Option<OrganizationAccess>,
    /// The id of the API key the request came with, if it came with one.
    pub api_key: Option<String>,
}

impl Principal {
    /// Whether the request may do `permission` in its organization.
    pub fn has_permission(&self, permission: &str) -> bool {
        self.organization
            .as_ref()
            .is_some_and(|o| o.permissions.iter().any(|p| super::covers(p, permission)))
    }

    /// Whether the member has `role` in the organization (a key has those of its maker's
    /// roles whose permissions it holds all of).
    pub fn has_role(&self, role: &str) -> bool {
        self.organization
            .as_ref()
            .is_some_and(|o| o.roles.iter().any(|r| r == role))
    }
}

/// What a request may do in its organization.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrganizationAccess {
    /// The organization's id.
    pub id: String,
    /// Its slug.
    pub slug: String,
    /// The member's roles (for a key, those of its maker's roles whose permissions the key
    /// holds all of).
    pub roles: Vec<String>,
    /// The permissions the request holds there: the roles', or for a key those of its own
    /// that its maker still holds.
    pub permissions: Vec<String>,
}

/// Why an `Authorization: Bearer` API key was refused (logged; answered `401`, or `429`
/// for [`KeyRefused::RateLimited`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRefused {
    /// Not a key of this form, or no such key, or the secret part is wrong.
    #[error("not a valid API key")]
    Invalid,
    /// Revoked.
    #[error("the API key is revoked")]
    Revoked,
    /// Expired.
    #[error("the API key has expired")]
    Expired,
    /// Its maker is no longer a member, or no longer a user.
    #[error("the API key's maker has left")]
    MakerGone,
    /// Its maker is banned.
    #[error("the API key's maker is banned")]
    Banned,
    /// The store could not be read.
    #[error("the API keys could not be read")]
    Unavailable,
    /// Too many refused keys from this client (the sign-in limit `credentials_per_client`):
    /// not checked, try again after `retry_after`.
    #[error("too many refused API keys from this client")]
    RateLimited {
        /// When the client may try again.
        retry_after: std::time::Duration,
    },
}
