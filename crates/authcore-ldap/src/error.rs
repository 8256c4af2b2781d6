//! Why the directory could not answer. No variant carries a password, a filter or a
//! username: the messages reach logs.

/// Why the directory could not answer a sign-in (it reaches the caller as
/// `SourceError::Unavailable`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryError {
    /// The directory could not be reached (refused, unknown host, TLS failed).
    #[error("cannot connect to the directory: {0}")]
    Connect(String),
    /// A step took longer than its timeout.
    #[error("the directory did not answer in time ({0})")]
    Timeout(&'static str),
    /// An operation failed on the connection.
    #[error("{step} failed: {reason}")]
    Operation {
        /// `search`, `user bind` …
        step: &'static str,
        /// The client's message.
        reason: String,
    },
    /// The service account's bind was refused (result code `rc`): check `bind_dn` and
    /// `bind_password`.
    #[error(
        "the service account's bind was refused (LDAP result {rc}): check bind_dn and bind_password"
    )]
    ServiceBind {
        /// The LDAP result code.
        rc: u32,
    },
    /// The directory answered an operation with an error result.
    #[error("{step} answered LDAP result {rc}{}", hint(*rc))]
    Result {
        /// `search`, `group search`, `user bind`.
        step: &'static str,
        /// The LDAP result code.
        rc: u32,
    },
    /// The source is shutting down.
    #[error("the connection pool is closed")]
    Closed,
}

impl DirectoryError {
    pub(crate) fn connect(e: &ldap3::LdapError) -> Self {
        match e {
            ldap3::LdapError::Timeout { .. } => DirectoryError::Timeout("connect"),
            other => DirectoryError::Connect(other.to_string()),
        }
    }

    pub(crate) fn operation(step: &'static str, e: &ldap3::LdapError) -> Self {
        match e {
            ldap3::LdapError::Timeout { .. } => DirectoryError::Timeout(step),
            other => DirectoryError::Operation {
                step,
                reason: other.to_string(),
            },
        }
    }
}

fn hint(rc: u32) -> &'static str {
    match rc {
        32 => " (no such object: check base_dn / group_base_dn)",
        50 => " (insufficient access: the service account may not search there)",
        51 | 52 => " (the directory is busy or unavailable)",
        _ => "",
    }
}
