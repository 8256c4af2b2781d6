//! Administrators (beyond Auth.js): who they are ([`Admins`]), and what they may do to
//! other users — find them, end their sessions, ban them, reset a lost second factor,
//! delete them, sign in as them to help (impersonation). Every action is recorded in the
//! audit log ([`crate::audit`]) with the administrator, the user and what changed.
//!
//! An administrator is a user listed by id or verified email address
//! ([`Admins::user`]), or a member of the administrators' organization whose roles grant
//! [`ADMIN_PERMISSION`] ([`Admins::organization`]); an API key of that organization with
//! that permission acts as its maker. An administrator's action through a browser session
//! is a sensitive change: it needs a recent sign-in, with the second factor when the
//! administrator has one.
//!
//! The operations are `Auth` methods (`Auth::admin_actor`, `Auth::admin_ban` … in
//! [`crate::account`]) and JSON routes ([`crate::account::AdminRoute`]).

use std::time::Duration;

/// The permission that makes a member of the administrators' organization an
/// administrator (the built-in `owner` role holds every permission).
pub const ADMIN_PERMISSION: &str = "authcore:admin";

/// The longest an impersonation lasts by default.
pub const DEFAULT_IMPERSONATION: Duration = Duration::from_secs(30 * 60);

/// How long the set-up link of a user an administrator made works by default
/// ([`Admins::setup_link_lifetime`]).
pub const DEFAULT_SETUP_LINK_LIFETIME: Duration = Duration::from_secs(3 * 86_400);

/// The OpenID Provider's check of a client made at run time ([`Admins::client_check`]):
/// what is wrong with it, if the provider could not use it.
pub type ClientCheck =
    std::sync::Arc<dyn Fn(&crate::adapter::StoredClient) -> Result<(), String> + Send + Sync>;

/// The `amr` value of an impersonated session (an administrator signed in as the user).
pub const IMPERSONATION_AMR: &str = "imp";

/// How a database session token made for an impersonation starts: `imp-<end>-` with the
/// end's unix time, so the session read ends it without a lookup. A client that changes
/// the prefix changes the token, which then names no session.
pub(crate) const IMPERSONATION_TOKEN: &str = "imp-";

/// When the impersonation of database session `token` ends, if it is one.
pub(crate) fn impersonation_end(token: &str) -> Option<time::OffsetDateTime> {
    let rest = token.strip_prefix(IMPERSONATION_TOKEN)?;
    let (end, _) = rest.split_once('-')?;
    time::OffsetDateTime::from_unix_timestamp(end.parse().ok()?).ok()
}

/// When the impersonation a JWT session's claims carry ends (`act.exp`), if it is one.
pub(crate) fn impersonation_claim_end(
    claims: &serde_json::Map<String, serde_json::Value>,
) -> Option<time::OffsetDateTime> {
    let end = claims.get("act")?.get("exp")?.as_i64()?;
    time::OffsetDateTime::from_unix_timestamp(end).ok()
}

/// Who the administrators are (`AuthConfigBuilder::admins`).
#[derive(Clone)]
pub struct Admins {
    pub(crate) users: Vec<String>,
    pub(crate) organization: Option<String>,
    pub(crate) impersonation: Duration,
    pub(crate) setup_link_lifetime: Duration,
    pub(crate) configured_clients: Vec<String>,
    pub(crate) client_check: Option<ClientCheck>,
}

impl std::fmt::Debug for Admins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admins")
            .field("users", &self.users)
            .field("organization", &self.organization)
            .field("impersonation", &self.impersonation)
            .field("setup_link_lifetime", &self.setup_link_lifetime)
            .field("configured_clients", &self.configured_clients)
            .field("client_check", &self.client_check.is_some())
            .finish()
    }
}

impl Default for Admins {
    fn default() -> Self {
        Admins {
            users: Vec::new(),
            organization: None,
            impersonation: DEFAULT_IMPERSONATION,
            setup_link_lifetime: DEFAULT_SETUP_LINK_LIFETIME,
            configured_clients: Vec::new(),
            client_check: None,
        }
    }
}

impl Admins {
    /// No administrator yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the user with this id, or with this verified email address (compared without
    /// regard to case), an administrator.
    pub fn user(mut self, id_or_email: impl Into<String>) -> Self {
        self.users.push(id_or_email.into());
        self
    }

    /// Makes the members of the organization with this slug whose roles grant
    /// [`ADMIN_PERMISSION`] administrators (organizations must be on).
    pub fn organization(mut self, slug: impl Into<String>) -> Self {
        self.organization = Some(slug.into());
        self
    }

    /// How long an impersonation lasts at most ([`DEFAULT_IMPERSONATION`] by default).
    pub fn impersonation(mut self, max: Duration) -> Self {
        self.impersonation = max;
        self
    }

    /// How long the link that sets up the account of a user an administrator made works
    /// ([`DEFAULT_SETUP_LINK_LIFETIME`] by default): it is single use, and a new one can be
    /// made.
    pub fn setup_link_lifetime(mut self, lifetime: Duration) -> Self {
        self.setup_link_lifetime = lifetime;
        self
    }

    /// The OpenID Provider's own check of a client made at run time (the host passes the
    /// provider's, `authcore_oidc_provider::check_stored_client`): administrators make no
    /// client that the provider would refuse to use.
    pub fn client_check<F>(mut self, check: F) -> Self
    where
        F: Fn(&crate::adapter::StoredClient) -> Result<(), String> + Send + Sync + 'static,
    {
        self.client_check = Some(std::sync::Arc::new(check));
        self
    }

    /// Reserves the ids of the OpenID Provider's configured clients: administrators make
    /// no client at run time with one of them (the host lists its configuration's ids).
    pub fn configured_clients<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.configured_clients
            .extend(ids.into_iter().map(Into::into));
        self
    }

    /// The listed users (ids and email addresses).
    pub fn users(&self) -> &[String] {
        &self.users
    }

    /// The administrators' organization, if one is set.
    pub fn organization_slug(&self) -> Option<&str> {
        self.organization.as_deref()
    }

    /// How long an impersonation lasts at most.
    pub fn impersonation_limit(&self) -> Duration {
        self.impersonation
    }

    /// How long a set-up link works.
    pub fn setup_link_limit(&self) -> Duration {
        self.setup_link_lifetime
    }

    /// Whether a user with `id` and the verified address `email` is a listed
    /// administrator.
    pub(crate) fn lists(&self, id: &str, verified_email: Option<&str>) -> bool {
        self.users.iter().any(|u| {
            u == id || verified_email.is_some_and(|e| !e.is_empty() && u.eq_ignore_ascii_case(e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    #[test]
    fn an_impersonation_token_says_its_end() {
        let cases = [
            ("imp-1700000000-3f2a", Some(1_700_000_000)),
            ("imp-1700000000-", Some(1_700_000_000)),
            ("imp-x-3f2a", None),
            ("imp-1700000000", None),
            ("3f2a-imp-1700000000-", None),
            ("", None),
            ("imp-99999999999999999999-a", None),
        ];
        for (token, want) in cases {
            assert_eq!(
                impersonation_end(token).map(OffsetDateTime::unix_timestamp),
                want,
                "{token}"
            );
        }
    }

    #[test]
    fn listed_by_id_or_verified_address() {
        let admins = Admins::new().user("u1").user("Ops@Example.com");
        let cases = [
            ("u1", None, true),
            ("u2", Some("ops@example.com"), true),
            ("u2", Some("OPS@EXAMPLE.COM"), true),
            ("u2", Some("other@example.com"), false),
            ("u2", None, false),
            ("u2", Some(""), false),
            ("ops@example.com", None, false),
        ];
        for (id, email, want) in cases {
            assert_eq!(admins.lists(id, email), want, "{id} {email:?}");
        }
    }
}
