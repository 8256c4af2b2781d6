//! Who may get an account by signing in: the sign-up policy every method that makes users
//! follows (a magic link, an OAuth / OpenID Connect provider, a passkey registration).
//! Users that a user source vouches for (a users file, a directory) and users made by the
//! host are not sign-ups: the policy never refuses them.

/// Who may become a user by signing in for the first time
/// ([`AuthConfigBuilder::sign_up`](crate::AuthConfigBuilder::sign_up)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignUpPolicy {
    /// Anyone: every new address or provider account becomes a user (Auth.js's behaviour,
    /// the default of the library).
    #[default]
    Open,
    /// Nobody: only users that exist already sign in (made by the host, a user source, or
    /// an operator). A magic link is sent to known addresses only, and the answer is the
    /// same for unknown ones.
    Closed,
    /// Addresses of these domains (exact, lower case, without `@`): a provider account
    /// without an address is refused.
    Domains(Vec<String>),
    /// Invited addresses only: an address with an open invitation (to an organization, or
    /// to sign up, made by a member or an operator) becomes a user; the invitation to sign
    /// up is then used. Needs an adapter with organizations (`OrganizationStore`).
    Invite,
}

impl SignUpPolicy {
    /// Addresses of `domains` only; the message names a domain that is not one.
    pub fn domains<I, S>(domains: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for d in domains {
            let d = d
                .as_ref()
                .trim()
                .trim_start_matches('@')
                .to_ascii_lowercase();
            let valid = !d.is_empty()
                && d.len() <= 253
                && d.contains('.')
                && d.split('.').all(|l| {
                    !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                });
            if !valid {
                return Err(format!("sign-up domain {d:?} is not a domain name"));
            }
            list.push(d);
        }
        if list.is_empty() {
            return Err("a sign-up policy of domains needs at least one domain".to_owned());
        }
        Ok(SignUpPolicy::Domains(list))
    }

    /// Whether a new user with address `email` (normalised, if any) may be made, as far as
    /// the policy alone says: [`SignUpPolicy::Invite`] answers `false` here, as the
    /// invitations are in the adapter (the sign-in flows look them up).
    pub fn allows(&self, email: Option<&str>) -> bool {
        match self {
            SignUpPolicy::Open => true,
            SignUpPolicy::Closed | SignUpPolicy::Invite => false,
            SignUpPolicy::Domains(domains) => email
                .and_then(|e| e.rsplit_once('@'))
                .is_some_and(|(_, domain)| domains.iter().any(|d| d.eq_ignore_ascii_case(domain))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn who_may_sign_up() {
        let domains = SignUpPolicy::domains(["example.com", "@Corp.Example"]).unwrap();
        for (policy, email, allowed) in [
            (&SignUpPolicy::Open, Some("x@evil.test"), true),
            (&SignUpPolicy::Open, None, true),
            (&SignUpPolicy::Closed, Some("x@example.com"), false),
            (&domains, Some("ada@example.com"), true),
            (&domains, Some("ada@corp.example"), true),
            (&domains, Some("ada@EXAMPLE.com"), true),
            (&domains, Some("ada@sub.example.com"), false),
            (&domains, Some("ada@example.com.evil.test"), false),
            (&domains, Some("example.com@evil.test"), false),
            (&domains, Some("ada"), false),
            (&domains, None, false),
        ] {
            assert_eq!(policy.allows(email), allowed, "{policy:?} {email:?}");
        }
    }

    #[test]
    fn bad_domains_are_named() {
        for bad in ["", "localhost", "exa mple.com", "a..b", "*.example.com"] {
            let err = SignUpPolicy::domains([bad]).unwrap_err();
            assert!(err.contains("domain"), "{bad}: {err}");
        }
        assert!(SignUpPolicy::domains(Vec::<String>::new()).is_err());
    }
}
