//! Who may use a client: its `allowed_groups`, `allowed_roles` and `allowed_organizations`
//! ([`AllowedUsers`]), validated at start-up and matched against a user's groups and
//! organization memberships. Pure: the endpoints read the groups and memberships.
//!
//! ```toml
//! allowed_groups = ["admins"]               # a group of the `groups` claim
//! allowed_roles = ["auditor", "acme:admin"] # a role in any organization; in acme only
//! allowed_organizations = ["globex"]        # any member of globex
//! ```
//!
//! With none of them set everyone may use the client; with any set, a user matching no entry
//! of any of them is refused. Names are compared exactly: role names and slugs are lower case
//! (authcore refuses others when they are made), so an entry written otherwise could never
//! match and is refused at start-up instead.

use std::collections::BTreeSet;

use authcore::organizations::{check_role_name, check_slug};

/// A role an `allowed_roles` entry asks for: in any organization, or in the one of a slug.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RoleRule {
    /// The organization's slug (`slug:role`), or none (`role`).
    organization: Option<String>,
    /// The role's name.
    role: String,
}

/// A user's membership as the rules read it: the organization's slug and the member's roles.
#[derive(Debug, Clone, Copy)]
pub struct MemberOf<'a> {
    /// The organization's slug.
    pub slug: &'a str,
    /// The member's roles there.
    pub roles: &'a [String],
}

/// The users a client admits (all of them when no rule is set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedUsers {
    groups: BTreeSet<String>,
    roles: BTreeSet<RoleRule>,
    organizations: BTreeSet<String>,
}

impl AllowedUsers {
    /// The rules as written; the message names the entry to fix.
    pub fn new(
        groups: &[String],
        roles: &[String],
        organizations: &[String],
    ) -> Result<Self, String> {
        let mut allowed = AllowedUsers::default();
        for group in groups {
            if group.is_empty() || group.len() > 128 || group.chars().any(char::is_control) {
                return Err(format!(
                    "allowed_groups: {group:?} must be 1 to 128 printable characters"
                ));
            }
            allowed.groups.insert(group.clone());
        }
        for entry in roles {
            let rule = match entry.split_once(':') {
                Some((slug, role)) => {
                    check_slug(slug).map_err(|e| format!("allowed_roles {entry:?}: {e}"))?;
                    RoleRule {
                        organization: Some(slug.to_owned()),
                        role: role.to_owned(),
                    }
                }
                None => RoleRule {
                    organization: None,
                    role: entry.clone(),
                },
            };
            check_role_name(&rule.role).map_err(|e| {
                format!("allowed_roles {entry:?} (\"role\" or \"organization-slug:role\"): {e}")
            })?;
            allowed.roles.insert(rule);
        }
        for slug in organizations {
            check_slug(slug).map_err(|e| format!("allowed_organizations {slug:?}: {e}"))?;
            allowed.organizations.insert(slug.clone());
        }
        Ok(allowed)
    }

    /// Whether any rule is set (then only the users some rule admits may use the client).
    pub fn restricts(&self) -> bool {
        !(self.groups.is_empty() && self.roles.is_empty() && self.organizations.is_empty())
    }

    /// Whether the rules read the user's groups.
    pub fn reads_groups(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Whether the rules read the user's organizations.
    pub fn reads_organizations(&self) -> bool {
        !(self.roles.is_empty() && self.organizations.is_empty())
    }

    /// The roles the rules name, for a start-up check against the defined ones.
    pub fn role_names(&self) -> impl Iterator<Item = &str> {
        self.roles.iter().map(|r| r.role.as_str())
    }

    /// Whether a user with `groups` and memberships `member_of` may use the client.
    pub fn admits(&self, groups: &[String], member_of: &[MemberOf<'_>]) -> bool {
        if !self.restricts() {
            return true;
        }
        let in_group = groups.iter().any(|g| self.groups.contains(g));
        let in_organization = member_of.iter().any(|m| {
            self.organizations.contains(m.slug)
                || m.roles.iter().any(|role| {
                    self.roles.iter().any(|rule| {
                        rule.role == *role
                            && rule.organization.as_deref().is_none_or(|s| s == m.slug)
                    })
                })
        });
        in_group || in_organization
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_user_is_admitted_by_any_rule_and_names_compare_exactly() {
        let rules = AllowedUsers::new(
            &strings(&["admins"]),
            &strings(&["auditor", "acme:admin"]),
            &strings(&["globex"]),
        )
        .unwrap();
        let admin = strings(&["admin"]);
        let member = strings(&["member"]);
        let auditor = strings(&["auditor"]);
        let shouting = strings(&["ADMIN"]);
        let no_groups: &[String] = &[];
        for (groups, member_of, admitted) in [
            (no_groups, vec![], false),
            (&strings(&["admins"])[..], vec![], true),
            (&strings(&["Admins", "admins2"])[..], vec![], false),
            (
                no_groups,
                vec![MemberOf {
                    slug: "acme",
                    roles: &admin,
                }],
                true,
            ),
            (
                no_groups,
                vec![MemberOf {
                    slug: "acme",
                    roles: &member,
                }],
                false,
            ),
            // Another organization's admin, a slug that only starts alike.
            (
                no_groups,
                vec![MemberOf {
                    slug: "initech",
                    roles: &admin,
                }],
                false,
            ),
            (
                no_groups,
                vec![MemberOf {
                    slug: "acme-evil",
                    roles: &admin,
                }],
                false,
            ),
            // A role stored in another case (authcore makes none: never folded here).
            (
                no_groups,
                vec![MemberOf {
                    slug: "acme",
                    roles: &shouting,
                }],
                false,
            ),
            (
                no_groups,
                vec![MemberOf {
                    slug: "ACME",
                    roles: &admin,
                }],
                false,
            ),
            // A role in any organization; any member of an allowed organization.
            (
                no_groups,
                vec![MemberOf {
                    slug: "initech",
                    roles: &auditor,
                }],
                true,
            ),
            (
                no_groups,
                vec![MemberOf {
                    slug: "globex",
                    roles: &member,
                }],
                true,
            ),
            (
                no_groups,
                vec![
                    MemberOf {
                        slug: "initech",
                        roles: &member,
                    },
                    MemberOf {
                        slug: "acme",
                        roles: &admin,
                    },
                ],
                true,
            ),
        ] {
            assert_eq!(
                rules.admits(groups, &member_of),
                admitted,
                "{groups:?} {member_of:?}"
            );
        }
        let open = AllowedUsers::new(&[], &[], &[]).unwrap();
        assert!(!open.restricts());
        assert!(open.admits(&[], &[]));
        assert!(rules.reads_groups() && rules.reads_organizations());
        let mut names: Vec<&str> = rules.role_names().collect();
        names.sort_unstable();
        assert_eq!(names, ["admin", "auditor"]);
    }

    #[test]
    fn entries_that_could_never_match_are_refused_with_the_entry_named() {
        for (groups, roles, organizations, problem) in [
            (vec![""], vec![], vec![], "allowed_groups: \"\""),
            (vec![], vec!["Admin"], vec![], "allowed_roles \"Admin\""),
            (
                vec![],
                vec!["ACME:admin"],
                vec![],
                "allowed_roles \"ACME:admin\"",
            ),
            (vec![], vec!["acme:"], vec![], "allowed_roles \"acme:\""),
            (vec![], vec![":admin"], vec![], "allowed_roles \":admin\""),
            (
                vec![],
                vec!["acme:admin:x"],
                vec![],
                "allowed_roles \"acme:admin:x\"",
            ),
            (
                vec![],
                vec![],
                vec!["Acme"],
                "allowed_organizations \"Acme\"",
            ),
            (vec![], vec![], vec![""], "allowed_organizations \"\""),
        ] {
            let err = AllowedUsers::new(
                &strings(&groups),
                &strings(&roles),
                &strings(&organizations),
            )
            .unwrap_err();
            assert!(err.contains(problem), "{err}");
        }
    }
}
