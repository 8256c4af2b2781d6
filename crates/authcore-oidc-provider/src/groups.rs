//! `[oidc_provider.groups]`: the groups the `groups` scope tells clients of, each with its
//! members, written in the configuration (authcore keeps no directory of its own):
//!
//! ```toml
//! [oidc_provider.groups]
//! admins = ["github:583231", "ada@example.com"]   # a linked account, a verified address
//! staff = ["@example.com"]                         # every verified address of the domain
//! ```
//!
//! A member is named by an account linked to the user (`<provider id>:<provider account
//! id>`, as the provider gives it: it cannot be taken over), or by an email address or a
//! domain (`@example.com`) that only a *verified* address matches (signed in by magic link:
//! an OAuth provider's address is not verified here, Auth.js keeps `emailVerified` empty
//! for it, so anyone who could make an account with the address at some provider would
//! otherwise join the group).

use std::collections::BTreeMap;

use authcore::adapter::AdapterUser;

/// One member rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    /// A linked account: provider id and provider account id.
    Account { provider: String, id: String },
    /// A verified address (normalised).
    Address(String),
    /// Every verified address of a domain (lower case, without `@`).
    Domain(String),
}

/// The configured groups, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups(Vec<(String, Vec<Member>)>);

impl Groups {
    /// The groups of the `[oidc_provider.groups]` table; the message names the group and
    /// member to fix.
    pub fn new(table: BTreeMap<String, Vec<String>>) -> Result<Self, String> {
        let mut groups = Vec::with_capacity(table.len());
        for (name, members) in table {
            if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
                return Err(format!(
                    "groups: the group name {name:?} must be 1 to 128 printable characters"
                ));
            }
            let mut rules = Vec::with_capacity(members.len());
            for m in members {
                rules.push(member(&m).ok_or_else(|| {
                    format!(
                        "groups.{name}: {m:?} is none of \"<provider>:<account id>\", \"user@example.com\", \"@example.com\""
                    )
                })?);
            }
            groups.push((name, rules));
        }
        Ok(Groups(groups))
    }

    /// Whether no group is configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether some member is named by a linked account (then the user's accounts are
    /// read).
    pub fn names_accounts(&self) -> bool {
        self.0
            .iter()
            .flat_map(|(_, m)| m)
            .any(|m| matches!(m, Member::Account { .. }))
    }

    /// The groups of `user`, whose linked accounts are `accounts` (provider id, provider
    /// account id), in name order.
    pub fn of(&self, user: &AdapterUser, accounts: &[(String, String)]) -> Vec<String> {
        let verified = user
            .email
            .as_deref()
            .filter(|_| user.email_verified.is_some())
            .and_then(|e| authcore::providers::email::normalize_email(e).ok());
        let matches = |m: &Member| match m {
            Member::Account { provider, id } => {
                accounts.iter().any(|(p, a)| p == provider && a == id)
            }
            Member::Address(address) => verified.as_deref() == Some(address.as_str()),
            Member::Domain(domain) => verified
                .as_deref()
                .and_then(|v| v.rsplit_once('@'))
                .is_some_and(|(_, d)| d == domain),
        };
        self.0
            .iter()
            .filter(|(_, members)| members.iter().any(matches))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// The rule `text` writes, if it is one.
fn member(text: &str) -> Option<Member> {
    if let Some(domain) = text.strip_prefix('@') {
        // A domain as an address would have it.
        let address = authcore::providers::email::normalize_email(&format!("x@{domain}")).ok()?;
        let (_, domain) = address.rsplit_once('@')?;
        return Some(Member::Domain(domain.to_owned()));
    }
    if text.contains('@') {
        return authcore::providers::email::normalize_email(text)
            .ok()
            .map(Member::Address);
    }
    let (provider, id) = text.split_once(':')?;
    let printable = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
    (printable(provider) && printable(id)).then(|| Member::Account {
        provider: provider.to_owned(),
        id: id.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn user(email: &str, verified: bool) -> AdapterUser {
        AdapterUser {
            id: "u1".into(),
            name: None,
            email: Some(email.into()),
            email_verified: verified.then(time::OffsetDateTime::now_utc),
            image: None,
        }
    }

    fn groups() -> Groups {
        Groups::new(BTreeMap::from([
            (
                "admins".to_owned(),
                vec!["github:42".to_owned(), "Ada@Example.com".to_owned()],
            ),
            ("staff".to_owned(), vec!["@Example.COM".to_owned()]),
            ("nobody".to_owned(), vec![]),
        ]))
        .unwrap()
    }

    #[test]
    fn members_are_linked_accounts_or_verified_addresses() {
        let g = groups();
        let github = [("github".to_owned(), "42".to_owned())];
        for (who, accounts, want) in [
            (
                user("ada@example.com", true),
                &[][..],
                vec!["admins", "staff"],
            ),
            // An address nobody verified here joins nothing, whoever typed it.
            (user("ada@example.com", false), &[][..], vec![]),
            (user("bob@example.com", true), &[][..], vec!["staff"]),
            (user("bob@sub.example.com", true), &[][..], vec![]),
            (user("ada@example.com.evil", true), &[][..], vec![]),
            (user("eve@evil.example", false), &github[..], vec!["admins"]),
            (
                user("eve@evil.example", false),
                &[("github".to_owned(), "420".to_owned())][..],
                vec![],
            ),
            (
                user("eve@evil.example", false),
                &[("gitlab".to_owned(), "42".to_owned())][..],
                vec![],
            ),
        ] {
            assert_eq!(g.of(&who, accounts), want, "{who:?} {accounts:?}");
        }
        assert!(g.names_accounts());
    }

    #[test]
    fn a_member_that_is_no_rule_is_refused_with_its_group_named() {
        for (name, member, problem) in [
            ("admins", "ada", "groups.admins: \"ada\" is none of"),
            ("admins", "github:", "groups.admins"),
            ("admins", "@", "groups.admins"),
            ("admins", "a@b@c", "groups.admins"),
            ("", "github:1", "the group name \"\" must be"),
        ] {
            let err = Groups::new(BTreeMap::from([(name.to_owned(), vec![member.to_owned()])]))
                .unwrap_err();
            assert!(err.contains(problem), "{err}");
        }
        assert!(Groups::new(BTreeMap::new()).unwrap().is_empty());
    }
}
