//! Organizations, roles and permissions, invitations and API keys (beyond Auth.js, which
//! knows who a user is, not what they may do).
//!
//! An organization has members; each member has roles; a role is a set of permissions
//! (`resource:action` strings such as `project:read`, with `resource:*` and `*` as
//! wildcards). Three roles are built in:
//!
//! | role | permissions |
//! |---|---|
//! | `owner` | `*`: everything, deleting the organization included; an organization always keeps one |
//! | `admin` | `organization:update`, `member:*`, `team:*`, `api_key:*`, and every permission of the host's roles |
//! | `member` | `member:read`, and what the host adds to it |
//!
//! The host adds roles (or permissions to `admin` and `member`) with
//! [`Organizations::role`]. One rule decides every grant: a member may give a role (to a
//! member, an invitation or an API key) only if its permissions are all among their own,
//! and only an owner makes an owner. So a member never grants more than they hold.
//!
//! ```
//! use authcore::organizations::Organizations;
//!
//! let orgs = Organizations::new()
//!     .role("billing", ["billing:read", "billing:write"])
//!     .role("member", ["project:read"]);
//! let roles = orgs.roles().unwrap();
//! assert!(roles.allows(&["billing".into()], "billing:write"));
//! assert!(roles.allows(&["admin".into()], "billing:write"));
//! assert!(!roles.allows(&["member".into()], "billing:write"));
//! assert!(roles.may_grant(&["admin".into()], &["billing".into()]));
//! assert!(!roles.may_grant(&["admin".into()], &["owner".into()]));
//! ```
//!
//! Turned on with `AuthConfigBuilder::organizations`; stored through the adapter's
//! `OrganizationStore` and `ApiKeyStore` capabilities. Who a request acts as is
//! `Auth::principal`; the framework integrations' route guards ask a [`Requirement`] of it.

pub(crate) mod api_key;
mod guard;
mod principal;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub use crate::adapter::OWNER_ROLE;
pub use api_key::{API_KEY_PREFIX, ApiKeySecret};
pub(crate) use api_key::{hash_secret, parse_key};
pub use guard::{Requirement, Unmet};
pub use principal::{KeyRefused, OrganizationAccess, Principal};

/// The claim of a JWT session that holds its active organization's id.
pub(crate) const ORGANIZATION_CLAIM: &str = "org";

/// The built-in role of administrators.
pub const ADMIN_ROLE: &str = "admin";
/// The built-in role every member has unless given another.
pub const MEMBER_ROLE: &str = "member";

/// The permissions authcore itself checks.
pub mod permissions {
    /// Rename the organization, change its slug.
    pub const ORGANIZATION_UPDATE: &str = "organization:update";
    /// Delete the organization (owners only, by default).
    pub const ORGANIZATION_DELETE: &str = "organization:delete";
    /// See the members and the invitations.
    pub const MEMBER_READ: &str = "member:read";
    /// Invite by email, revoke invitations.
    pub const MEMBER_INVITE: &str = "member:invite";
    /// Change members' roles and teams.
    pub const MEMBER_UPDATE: &str = "member:update";
    /// Remove members.
    pub const MEMBER_REMOVE: &str = "member:remove";
    /// Make and delete teams.
    pub const TEAM_MANAGE: &str = "team:manage";
    /// Make, list and revoke the organization's API keys.
    pub const API_KEY_MANAGE: &str = "api_key:manage";
}

/// The longest role, permission or slug authcore accepts.
const MAX_NAME: usize = 64;

/// The organizations feature's settings (`AuthConfigBuilder::organizations`): the host's
/// roles, who may make organizations, how long invitations last.
#[derive(Debug, Clone)]
pub struct Organizations {
    roles: Vec<(String, Vec<String>)>,
    users_create: bool,
    invitation_ttl: Duration,
    api_key_max_ttl: Option<Duration>,
}

impl Default for Organizations {
    fn default() -> Self {
        Organizations {
            roles: Vec::new(),
            users_create: true,
            invitation_ttl: Duration::from_secs(7 * 24 * 3600),
            api_key_max_ttl: None,
        }
    }
}

impl Organizations {
    /// The built-in roles only; users may make organizations; invitations last 7 days.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defines role `name` with `permissions`, or, for `admin` and `member`, adds them to
    /// the built-in role (`owner` always has every permission). Checked by
    /// `AuthConfigBuilder::build`: names of lower case letters, digits, `_`, `-`, `.`
    /// (a permission `resource:action`, the action possibly `*`).
    pub fn role<I, S>(mut self, name: impl Into<String>, permissions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles.push((
            name.into(),
            permissions.into_iter().map(Into::into).collect(),
        ));
        self
    }

    /// Whether any signed-in user may make an organization (and become its owner); default
    /// `true`. Without it organizations are made by the host (`Auth::create_organization_for`).
    pub fn users_create(mut self, allowed: bool) -> Self {
        self.users_create = allowed;
        self
    }

    /// How long an invitation can be accepted (default 7 days; at least a minute).
    pub fn invitation_ttl(mut self, ttl: Duration) -> Self {
        self.invitation_ttl = ttl.max(Duration::from_secs(60));
        self
    }

    /// The longest life an API key may be given; by default keys may also never expire.
    pub fn api_key_max_ttl(mut self, ttl: Duration) -> Self {
        self.api_key_max_ttl = Some(ttl);
        self
    }

    /// Whether users may make organizations.
    pub fn users_may_create(&self) -> bool {
        self.users_create
    }

    /// How long an invitation lasts.
    pub fn invitation_lifetime(&self) -> Duration {
        self.invitation_ttl
    }

    /// The longest life of an API key, if limited.
    pub fn api_key_max_lifetime(&self) -> Option<Duration> {
        self.api_key_max_ttl
    }

    /// The roles, checked: the built-in ones with the host's. The message says which name
    /// is wrong.
    pub fn roles(&self) -> Result<Roles, String> {
        let mut host: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (name, permissions) in &self.roles {
            check_role_name(name)?;
            if name == OWNER_ROLE {
                return Err(format!(
                    "role \"{OWNER_ROLE}\" has every permission already; define another role"
                ));
            }
            let set = host.entry(name.clone()).or_default();
            for p in permissions {
                check_permission(p).map_err(|e| format!("role {name:?}: {e}"))?;
                set.insert(p.clone());
            }
        }
        let everything_of_hosts: BTreeSet<String> = host.values().flatten().cloned().collect();
        let mut admin: BTreeSet<String> = [
            permissions::ORGANIZATION_UPDATE,
            "member:*",
            "team:*",
            "api_key:*",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        admin.extend(everything_of_hosts);
        admin.extend(host.remove(ADMIN_ROLE).unwrap_or_default());
        let mut member: BTreeSet<String> = [permissions::MEMBER_READ.to_owned()].into();
        member.extend(host.remove(MEMBER_ROLE).unwrap_or_default());
        let mut map = host;
        map.insert(OWNER_ROLE.to_owned(), ["*".to_owned()].into());
        map.insert(ADMIN_ROLE.to_owned(), admin);
        map.insert(MEMBER_ROLE.to_owned(), member);
        Ok(Roles { map })
    }
}

/// The roles of a configuration and what each permits (built by [`Organizations::roles`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roles {
    map: BTreeMap<String, BTreeSet<String>>,
}

impl Roles {
    /// Whether `role` is defined.
    pub fn contains(&self, role: &str) -> bool {
        self.map.contains_key(role)
    }

    /// The names of the roles, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The permissions of a member with `roles` (unknown roles give none), as written in
    /// the roles (wildcards kept), sorted.
    pub fn permissions_of(&self, roles: &[String]) -> Vec<String> {
        let set: BTreeSet<&String> = roles
            .iter()
            .filter_map(|r| self.map.get(r))
            .flatten()
            .collect();
        set.into_iter().cloned().collect()
    }

    /// Whether a member with `roles` holds `permission`.
    pub fn allows(&self, roles: &[String], permission: &str) -> bool {
        roles
            .iter()
            .filter_map(|r| self.map.get(r))
            .any(|set| set.iter().any(|held| covers(held, permission)))
    }

    /// Whether a member with `granter` roles may give `target` roles (to a member or an
    /// invitation): every target role is defined, its permissions are all among the
    /// granter's, and only an owner makes an owner.
    pub fn may_grant(&self, granter: &[String], target: &[String]) -> bool {
        if target.iter().any(|r| !self.contains(r)) {
            return false;
        }
        if target.iter().any(|r| r == OWNER_ROLE) && !granter.iter().any(|r| r == OWNER_ROLE) {
            return false;
        }
        let held = self.permissions_of(granter);
        self.permissions_of(target)
            .iter()
            .all(|p| held.iter().any(|h| covers(h, p)))
    }
}

/// Whether a held permission (`*`, `resource:*`, or exact) covers `wanted` (which may
/// itself be a wildcard: `resource:*` is covered by `resource:*` and `*` only).
pub fn covers(held: &str, wanted: &str) -> bool {
    if held == "*" || held == wanted {
        return true;
    }
    match (held.split_once(':'), wanted.split_once(':')) {
        (Some((resource, "*")), Some((wanted_resource, _))) => resource == wanted_resource,
        _ => false,
    }
}

/// Whether `headers` carry an API key as `Authorization: Bearer ak_…` (the scheme in any
/// case): a request that must be judged by its key, never by a cookie beside it.
pub fn has_api_key(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| api_key::bearer_key(v).is_some())
}

/// Whether every permission of `wanted` is covered by one of `held`.
pub fn all_covered(held: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| held.iter().any(|h| covers(h, w)))
}

/// The characters of role names, slugs and each part of a permission.
fn name_chars(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME
        && s.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.')
        })
}

/// Checks a role name: lower case letters, digits, `_`, `-`, `.`, 1 to 64 of them.
pub fn check_role_name(name: &str) -> Result<(), String> {
    if name_chars(name) {
        Ok(())
    } else {
        Err(format!(
            "role name {name:?} must be 1 to {MAX_NAME} lower case letters, digits, '_', '-' or '.'"
        ))
    }
}

/// Checks a permission: `*`, or `resource:action` whose parts are lower case letters,
/// digits, `_`, `-`, `.`, and whose action may be `*`.
pub fn check_permission(permission: &str) -> Result<(), String> {
    let valid = permission == "*"
        || permission
            .split_once(':')
            .is_some_and(|(resource, action)| {
                name_chars(resource) && (action == "*" || name_chars(action))
            });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "permission {permission:?} must be \"resource:action\" (lower case letters, digits, '_', '-', '.'; the action may be '*'), or \"*\""
        ))
    }
}

/// Checks an organization's slug: 1 to 64 lower case letters, digits and `-`, not starting
/// or ending with `-`.
pub fn check_slug(slug: &str) -> Result<(), String> {
    let valid = !slug.is_empty()
        && slug.len() <= MAX_NAME
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "slug {slug:?} must be 1 to {MAX_NAME} lower case letters, digits or '-', not at either end"
        ))
    }
}

/// A slug made from a display name: lower case ASCII letters and digits, other runs as `-`
/// (empty when the name has none).
pub fn slug_from_name(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= MAX_NAME {
            break;
        }
    }
    slug.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn roles() -> Roles {
        Organizations::new()
            .role("billing", ["billing:read", "billing:write"])
            .role("viewer", ["project:read"])
            .role("member", ["project:read"])
            .role("auditor", ["audit:*"])
            .roles()
            .unwrap()
    }

    #[test]
    fn wildcards_cover_what_they_name() {
        for (held, wanted, covered) in [
            ("*", "billing:write", true),
            ("*", "*", true),
            ("billing:*", "billing:write", true),
            ("billing:*", "billing:*", true),
            ("billing:*", "*", false),
            ("billing:*", "billingx:write", false),
            ("billing:write", "billing:*", false),
            ("billing:write", "billing:write", true),
            ("billing:write", "billing:read", false),
            ("billing:read", "billing:read:x", false),
        ] {
            assert_eq!(covers(held, wanted), covered, "{held} covers {wanted}");
        }
    }

    #[test]
    fn built_in_and_host_roles_permit() {
        let r = roles();
        for (who, permission, allowed) in [
            (&["owner"][..], "organization:delete", true),
            (&["owner"], "anything:at-all", true),
            (&["admin"], "organization:delete", false),
            (&["admin"], "organization:update", true),
            (&["admin"], "member:invite", true),
            (&["admin"], "billing:write", true),
            (&["admin"], "audit:export", true),
            (&["member"], "member:read", true),
            (&["member"], "project:read", true),
            (&["member"], "member:invite", false),
            (&["billing"], "billing:write", true),
            (&["billing"], "member:read", false),
            (&["billing", "member"], "member:read", true),
            (&["ghost"], "member:read", false),
            (&[], "member:read", false),
        ] {
            assert_eq!(
                r.allows(&v(who), permission),
                allowed,
                "{who:?} {permission}"
            );
        }
    }

    #[test]
    fn nobody_grants_above_their_own() {
        let r = roles();
        for (granter, target, allowed) in [
            (&["owner"][..], &["owner"][..], true),
            (&["owner"], &["admin"], true),
            (&["admin"], &["owner"], false),
            (&["admin"], &["admin"], true),
            (&["admin"], &["billing", "member"], true),
            (&["admin"], &["ghost"], false),
            (&["member"], &["admin"], false),
            (&["member"], &["member"], true),
            (&["member"], &["viewer"], true),
            (&["member"], &["billing"], false),
            (&["billing"], &["member"], false),
            (&["billing"], &["billing"], true),
            (&["member"], &[], true),
        ] {
            assert_eq!(
                r.may_grant(&v(granter), &v(target)),
                allowed,
                "{granter:?} grants {target:?}"
            );
        }
    }

    #[test]
    fn bad_names_are_refused_with_the_name() {
        for (orgs, needle) in [
            (Organizations::new().role("Billing", ["a:b"]), "Billing"),
            (Organizations::new().role("owner", ["a:b"]), "owner"),
            (Organizations::new().role("x", ["billing"]), "billing"),
            (Organizations::new().role("x", ["a b:c"]), "a b:c"),
            (Organizations::new().role("x", ["a:*x"]), "a:*x"),
            (Organizations::new().role("", ["a:b"]), "\"\""),
        ] {
            let err = orgs.roles().unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn slugs() {
        for good in ["acme", "acme-1", "a"] {
            check_slug(good).unwrap();
        }
        for bad in [
            "",
            "-acme",
            "acme-",
            "Acme",
            "ac me",
            "a_b",
            &"a".repeat(65),
        ] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert_eq!(slug_from_name("Acme Corp., Ltd."), "acme-corp-ltd");
        assert_eq!(slug_from_name("  Ünïcode  "), "n-code");
        assert_eq!(slug_from_name("日本"), "");
    }
}
