//! Access rules of the gateway: ordered rules matched on host and path prefix, the first
//! match decides; a default policy otherwise. Pure data and functions: the forward-auth
//! endpoint hands in the original request and the identity, and gets a [`Decision`].

pub use authcore::hosts::HostList;
use authcore::organizations::{check_permission, check_role_name, check_slug, covers};
use authcore::{SignInInfo, StepUp};
use serde::Deserialize;

/// What a rule (or the default) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Public: no session needed.
    Bypass,
    /// Any signed-in user.
    SignedIn,
    /// Signed-in users on the rule's allow-lists.
    Allow,
    /// Nobody.
    Deny,
}

/// One `[[gateway.rules]]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RuleConfig {
    /// A name for messages and logs.
    pub name: Option<String>,
    /// Hosts it applies to: exact (`app.example.com`) or one leading wildcard label
    /// (`*.example.com`, which does not match `example.com` itself); empty: every host.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Path prefix it applies to (`/admin/`); none: every path.
    pub path: Option<String>,
    /// The policy; with allow-lists and no policy, `allow`.
    pub policy: Option<Policy>,
    /// Allowed email addresses (compared case-insensitively).
    #[serde(default)]
    pub allow_emails: Vec<String>,
    /// Allowed email domains (`example.com`: the part after `@`, case-insensitive).
    #[serde(default)]
    pub allow_domains: Vec<String>,
    /// Allowed sign-in providers (`github`, `oidc` …).
    #[serde(default)]
    pub allow_providers: Vec<String>,
    /// Allowed groups or roles (from the provider's `groups` / `roles` claim).
    #[serde(default)]
    pub allow_groups: Vec<String>,
    /// The slug of an organization (`acme`): only its members pass. Alone it admits any
    /// member; with allow-lists, members who are also on one of them.
    pub organization: Option<String>,
    /// Roles in [`organization`](Self::organization) (`admin`, a role of the
    /// `[organizations.roles]`): a member with one of them passes. Needs `organization`.
    #[serde(default)]
    pub allow_roles: Vec<String>,
    /// Permissions in [`organization`](Self::organization) (`billing:read`): a member whose
    /// roles grant one of them passes (`billing:*` and `*` grant `billing:read`). Needs
    /// `organization`.
    #[serde(default)]
    pub allow_permissions: Vec<String>,
    /// How a request without a session is answered (default `auto`).
    pub unauthenticated: Option<Unauthenticated>,
    /// Factors the sign-in must have proven: `2` lets only users who passed a second factor
    /// (or a passkey with user verification) through; others sign in again, with theirs.
    /// Default 1. Needs second factors on (`[two_factor]`).
    pub factors: Option<u8>,
    /// The oldest sign-in let through, in seconds: an older one signs in again. Needs
    /// second factors on (`[two_factor]`), with which sessions record their sign-in time.
    pub max_age: Option<u64>,
}

/// How a request without a session is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unauthenticated {
    /// A redirect to the sign-in page for page navigations, `401` with a JSON body naming
    /// the sign-in URL for API calls (`Sec-Fetch-Mode` other than `navigate`, `Accept`
    /// without `text/html`, or `X-Requested-With`).
    #[default]
    Auto,
    /// Always the redirect to the sign-in page.
    Redirect,
    /// Always `401` with the JSON body.
    Unauthorized,
}

/// A rule that does not make sense, named by its position and name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[gateway.rules]] number {number}{name}: {problem}")]
#[non_exhaustive]
pub struct RuleError {
    /// 1-based position in the file.
    pub number: usize,
    /// ` ("<name>")` or empty.
    pub name: String,
    /// What is wrong.
    pub problem: String,
}

/// Who is asking, from the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// The user id.
    pub id: Option<String>,
    /// The email address.
    pub email: Option<String>,
    /// The display name.
    pub name: Option<String>,
    /// The provider the user signed in with.
    pub provider: Option<String>,
    /// Groups or roles.
    pub groups: Vec<String>,
    /// The organizations the user is a member of, where organizations are on.
    pub organizations: Vec<OrganizationIdentity>,
    /// How and when the user signed in (`amr`, `auth_time`), where the session records it.
    pub sign_in: Option<SignInInfo>,
}

/// The user's membership of one organization, as the rules and the upstream see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrganizationIdentity {
    /// The organization's slug.
    pub slug: String,
    /// The member's roles in it.
    pub roles: Vec<String>,
    /// The permissions those roles grant (wildcards as written).
    pub permissions: Vec<String>,
}

impl OrganizationIdentity {
    /// The membership of `slug` with `roles` granting `permissions`.
    pub fn new(slug: String, roles: Vec<String>, permissions: Vec<String>) -> Self {
        OrganizationIdentity {
            slug,
            roles,
            permissions,
        }
    }
}

/// The answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let it through.
    Allow,
    /// Not signed in: sign in first.
    SignIn,
    /// Signed in, but not allowed here.
    Forbidden,
    /// Signed in and allowed, but the sign-in does not show what the rule asks (two
    /// factors, or a recent enough time): sign in again.
    StepUp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    hosts: HostList,
    path: Option<String>,
    policy: Policy,
    emails: Vec<String>,
    domains: Vec<String>,
    providers: Vec<String>,
    groups: Vec<String>,
    organization: Option<String>,
    roles: Vec<String>,
    permissions: Vec<String>,
    unauthenticated: Unauthenticated,
    step_up: StepUp,
}

impl Rule {
    fn applies(&self, host: &str, path: &str) -> bool {
        (self.hosts.is_empty() || self.hosts.matches(host))
            && self.path.as_deref().is_none_or(|p| path.starts_with(p))
    }

    /// Whether `who` passes the rule's allow-lists: a member of its organization, if it
    /// names one, and on one of its lists, if it has any.
    fn admits(&self, who: &Identity) -> bool {
        let membership = match &self.organization {
            // Slugs are unique: the first entry with the slug is the membership.
            Some(slug) => match who.organizations.iter().find(|o| &o.slug == slug) {
                Some(m) => Some(m),
                None => return false,
            },
            None => None,
        };
        if !self.has_lists() {
            return membership.is_some();
        }
        let email = who.email.as_deref().map(str::to_ascii_lowercase);
        let domain = email
            .as_deref()
            .and_then(|e| e.rsplit_once('@'))
            .map(|(_, d)| d.to_owned());
        email.as_ref().is_some_and(|e| self.emails.contains(e))
            || domain.as_ref().is_some_and(|d| self.domains.contains(d))
            || who
                .provider
                .as_ref()
                .is_some_and(|p| self.providers.contains(p))
            || who.groups.iter().any(|g| self.groups.contains(g))
            || membership.is_some_and(|m| {
                m.roles.iter().any(|r| self.roles.contains(r))
                    || m.permissions
                        .iter()
                        .any(|held| self.permissions.iter().any(|w| covers(held, w)))
            })
    }

    /// Whether the rule has an allow-list (besides its organization).
    fn has_lists(&self) -> bool {
        !(self.emails.is_empty()
            && self.domains.is_empty()
            && self.providers.is_empty()
            && self.groups.is_empty()
            && self.roles.is_empty()
            && self.permissions.is_empty())
    }
}

/// The validated rules and the default policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRules {
    rules: Vec<Rule>,
    default: Policy,
}

impl Default for AccessRules {
    /// No rules; every request needs a signed-in user.
    fn default() -> Self {
        AccessRules {
            rules: Vec::new(),
            default: Policy::SignedIn,
        }
    }
}

impl AccessRules {
    /// Validates the rules once, at start-up. The default may not be `allow` (it has no
    /// lists).
    pub fn new(configs: Vec<RuleConfig>, default: Policy) -> Result<Self, RuleError> {
        if default == Policy::Allow {
            return Err(RuleError {
                number: 0,
                name: " (the default policy)".into(),
                problem: "`allow` needs allow-lists; use a rule, or bypass / signed_in / deny"
                    .into(),
            });
        }
        let rules = configs
            .into_iter()
            .enumerate()
            .map(|(i, c)| Self::rule(i + 1, c))
            .collect::<Result<_, _>>()?;
        Ok(AccessRules { rules, default })
    }

    fn rule(number: usize, c: RuleConfig) -> Result<Rule, RuleError> {
        let error = |problem: String| RuleError {
            number,
            name: c
                .name
                .as_deref()
                .map(|n| format!(" ({n:?})"))
                .unwrap_or_default(),
            problem,
        };
        let lower = |v: &[String]| -> Vec<String> {
            v.iter().map(|s| s.trim().to_ascii_lowercase()).collect()
        };
        let has_lists = !(c.allow_emails.is_empty()
            && c.allow_domains.is_empty()
            && c.allow_providers.is_empty()
            && c.allow_groups.is_empty()
            && c.allow_roles.is_empty()
            && c.allow_permissions.is_empty()
            && c.organization.is_none());
        let policy = match (c.policy, has_lists) {
            (None | Some(Policy::Allow), true) => Policy::Allow,
            (Some(Policy::Allow), false) => {
                return Err(error(
                    "`allow` needs at least one allow_* list or an organization".into(),
                ));
            }
            (Some(p), true) => {
                return Err(error(format!(
                    "allow_* lists and organization only go with policy `allow`, not {p:?}"
                )));
            }
            (Some(p), false) => p,
            (None, false) => {
                return Err(error(
                    "give a policy (bypass, signed_in, allow, deny) or allow_* lists".into(),
                ));
            }
        };
        if let Some(p) = &c.path
            && super::path::judged_path(p).as_deref() != Ok(p.as_str())
        {
            return Err(error(format!(
                "path {p:?} must start with / and be written as the rules see paths: decoded, without dot segments, repeated slashes or backslashes ({})",
                super::path::judged_path(p)
                    .map_or_else(|e| e.to_string(), |j| format!("did you mean {j}?"))
            )));
        }
        let mut step_up = StepUp::default();
        match c.factors {
            None | Some(1) => {}
            Some(2) => step_up = step_up.two_factors(),
            Some(n) => return Err(error(format!("factors = {n}: 1 or 2"))),
        }
        match c.max_age {
            None => {}
            Some(0) => {
                return Err(error(
                    "max_age = 0: give the oldest sign-in let through, in seconds".into(),
                ));
            }
            Some(secs) => step_up = step_up.max_age(std::time::Duration::from_secs(secs)),
        }
        if step_up != StepUp::default() && matches!(policy, Policy::Bypass | Policy::Deny) {
            return Err(error(format!(
                "factors and max_age ask something of a sign-in: they do not go with policy {policy:?}"
            )));
        }
        if let Some(bad) = c.allow_emails.iter().find(|e| !e.contains('@')) {
            return Err(error(format!(
                "allow_emails entry {bad:?} is not an address"
            )));
        }
        if let Some(bad) = c
            .allow_domains
            .iter()
            .find(|d| d.contains('@') || d.is_empty())
        {
            return Err(error(format!(
                "allow_domains entry {bad:?} is not a domain (no @)"
            )));
        }
        for (key, list) in [
            ("allow_roles", &c.allow_roles),
            ("allow_permissions", &c.allow_permissions),
        ] {
            if !list.is_empty() && c.organization.is_none() {
                return Err(error(format!(
                    "{key} needs organization: the slug of the organization whose members it admits"
                )));
            }
        }
        if let Some(slug) = &c.organization {
            check_slug(slug).map_err(|e| error(format!("organization: {e}")))?;
        }
        for role in &c.allow_roles {
            check_role_name(role).map_err(|e| error(format!("allow_roles: {e}")))?;
        }
        for permission in &c.allow_permissions {
            check_permission(permission).map_err(|e| error(format!("allow_permissions: {e}")))?;
        }
        Ok(Rule {
            hosts: HostList::parse(&c.hosts).map_err(error)?,
            path: c.path.clone(),
            policy,
            emails: lower(&c.allow_emails),
            domains: lower(&c.allow_domains),
            providers: c.allow_providers.clone(),
            groups: c.allow_groups.clone(),
            organization: c.organization.clone(),
            roles: c.allow_roles.clone(),
            permissions: c.allow_permissions.clone(),
            unauthenticated: c.unauthenticated.unwrap_or_default(),
            step_up,
        })
    }

    /// The decision for a request to `host` (without port, any case) and `path`, by
    /// `who` (`None`: not signed in). The first rule whose host and path match decides.
    pub fn decide(&self, host: &str, path: &str, who: Option<&Identity>) -> Decision {
        let rule = self.rule_for(host, path);
        let policy = rule.map_or(self.default, |r| r.policy);
        let admitted = match (policy, who) {
            (Policy::Bypass, _) => return Decision::Allow,
            (_, None) => return Decision::SignIn,
            (Policy::SignedIn, Some(who)) => who,
            (Policy::Deny, Some(_)) => return Decision::Forbidden,
            (Policy::Allow, Some(who)) => {
                if !rule.is_some_and(|r| r.admits(who)) {
                    return Decision::Forbidden;
                }
                who
            }
        };
        match rule {
            Some(r) if !r.step_up.is_met(admitted.sign_in.as_ref()) => Decision::StepUp,
            _ => Decision::Allow,
        }
    }

    /// Whether the rule deciding for `host` and `path` asks for two factors.
    pub fn needs_two_factors(&self, host: &str, path: &str) -> bool {
        self.rule_for(host, path)
            .is_some_and(|r| r.step_up.needs_two_factors())
    }

    /// Whether a rule asks for two factors or a recent sign-in (which need second factors
    /// on: sessions record their sign-in only then).
    pub fn uses_step_up(&self) -> bool {
        self.rules.iter().any(|r| r.step_up != StepUp::default())
    }

    /// How a request to `host` and `path` without a session is answered (the deciding
    /// rule's `unauthenticated`; `auto` without one).
    pub fn unauthenticated(&self, host: &str, path: &str) -> Unauthenticated {
        self.rule_for(host, path)
            .map_or(Unauthenticated::Auto, |r| r.unauthenticated)
    }

    fn rule_for(&self, host: &str, path: &str) -> Option<&Rule> {
        let host = host.to_ascii_lowercase();
        self.rules.iter().find(|r| r.applies(&host, path))
    }

    /// Whether a rule looks at the provider a user signed in with.
    pub fn uses_providers(&self) -> bool {
        self.rules.iter().any(|r| !r.providers.is_empty())
    }

    /// Whether a rule looks at groups.
    pub fn uses_groups(&self) -> bool {
        self.rules.iter().any(|r| !r.groups.is_empty())
    }

    /// Whether a rule looks at organizations.
    pub fn uses_organizations(&self) -> bool {
        self.rules.iter().any(|r| r.organization.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rules as a configuration file writes them, first match deciding.
    #[test]
    fn rules_from_a_file() {
        #[derive(serde::Deserialize)]
        struct File {
            rules: Vec<RuleConfig>,
        }

        let file: File = toml::from_str(
            r#"
            [[rules]]
            name = "public"
            path = "/public/"
            policy = "bypass"

            [[rules]]
            hosts = ["admin.example.com"]
            allow_domains = ["example.com"]
        "#,
        )
        .unwrap();
        let rules = AccessRules::new(file.rules, Policy::SignedIn).unwrap();
        let ada = Identity {
            email: Some("ada@example.com".into()),
            ..Identity::default()
        };
        assert_eq!(
            rules.decide("app.example.com", "/public/logo.png", None),
            Decision::Allow
        );
        assert_eq!(
            rules.decide("admin.example.com", "/", Some(&ada)),
            Decision::Allow
        );
        assert_eq!(rules.decide("app.example.com", "/", None), Decision::SignIn);
    }

    fn rule(name: &str) -> RuleConfig {
        RuleConfig {
            name: Some(name.into()),
            ..RuleConfig::default()
        }
    }

    fn who(email: &str, provider: &str, groups: &[&str]) -> Identity {
        Identity {
            id: Some("u1".into()),
            email: Some(email.into()),
            name: None,
            provider: Some(provider.into()),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            organizations: Vec::new(),
            sign_in: None,
        }
    }

    fn rules() -> AccessRules {
        AccessRules::new(
            vec![
                RuleConfig {
                    path: Some("/public/".into()),
                    policy: Some(Policy::Bypass),
                    ..rule("public")
                },
                RuleConfig {
                    hosts: vec!["admin.example.com".into()],
                    allow_emails: vec!["Root@Example.com".into()],
                    allow_groups: vec!["admins".into()],
                    ..rule("admin")
                },
                RuleConfig {
                    hosts: vec!["*.corp.example.com".into()],
                    allow_domains: vec!["example.com".into()],
                    allow_providers: vec!["oidc".into()],
                    ..rule("corp")
                },
                RuleConfig {
                    hosts: vec!["closed.example.com".into()],
                    policy: Some(Policy::Deny),
                    ..rule("closed")
                },
            ],
            Policy::SignedIn,
        )
        .unwrap()
    }

    #[test]
    fn first_match_wins() {
        use Decision::{Allow, Forbidden, SignIn};
        let r = rules();
        let ada = who("ada@example.com", "github", &[]);
        let root = who("root@example.com", "github", &[]);
        let admin = who("eve@elsewhere.org", "github", &["admins"]);
        let partner = who("bob@partner.org", "oidc", &[]);
        let stranger = who("eve@elsewhere.org", "github", &["users"]);
        for (host, path, identity, want) in [
            // Bypass before everything, even on the admin host, without a session.
            ("admin.example.com", "/public/x.css", None, Allow),
            ("app.example.com", "/public/", None, Allow),
            ("app.example.com", "/publicity", None, SignIn),
            // Default: signed in.
            ("app.example.com", "/", None, SignIn),
            ("app.example.com", "/", Some(&stranger), Allow),
            // Allow-lists: email (any case), groups.
            ("admin.example.com", "/", Some(&root), Allow),
            ("ADMIN.example.com", "/", Some(&admin), Allow),
            ("admin.example.com", "/", Some(&ada), Forbidden),
            ("admin.example.com", "/", None, SignIn),
            // Wildcard hosts: subdomains only; domain or provider.
            ("wiki.corp.example.com", "/", Some(&ada), Allow),
            ("wiki.corp.example.com", "/", Some(&partner), Allow),
            ("wiki.corp.example.com", "/", Some(&stranger), Forbidden),
            ("corp.example.com", "/", Some(&stranger), Allow),
            ("closed.example.com", "/", Some(&root), Forbidden),
            ("closed.example.com", "/", None, SignIn),
        ] {
            assert_eq!(
                r.decide(host, path, identity),
                want,
                "{host}{path} {identity:?}"
            );
        }
        assert!(r.uses_providers() || r.uses_groups());
    }

    #[test]
    fn step_up_rules_ask_for_two_factors_or_a_recent_sign_in() {
        use Decision::{Allow, Forbidden, SignIn, StepUp};
        let r = AccessRules::new(
            vec![
                RuleConfig {
                    path: Some("/admin/".into()),
                    allow_domains: vec!["example.com".into()],
                    factors: Some(2),
                    ..rule("admin")
                },
                RuleConfig {
                    path: Some("/billing/".into()),
                    policy: Some(Policy::SignedIn),
                    max_age: Some(300),
                    ..rule("billing")
                },
                RuleConfig {
                    path: Some("/both/".into()),
                    policy: Some(Policy::SignedIn),
                    factors: Some(2),
                    max_age: Some(300),
                    ..rule("both")
                },
                RuleConfig {
                    path: Some("/one/".into()),
                    policy: Some(Policy::SignedIn),
                    factors: Some(1),
                    ..rule("one")
                },
            ],
            Policy::SignedIn,
        )
        .unwrap();
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let signed = |email: &str, amr: &[&str], age: Option<i64>| Identity {
            sign_in: Some(SignInInfo::new(
                amr.iter().map(|m| (*m).to_owned()).collect(),
                age.map(|a| now - a),
            )),
            ..who(email, "credentials", &[])
        };
        let unrecorded = who("ada@example.com", "credentials", &[]);
        let password = signed("ada@example.com", &["pwd"], Some(10));
        let two = signed("ada@example.com", &["pwd", "otp", "mfa"], Some(10));
        let old_two = signed("ada@example.com", &["pwd", "otp", "mfa"], Some(3600));
        let no_time = signed("ada@example.com", &["pwd", "otp", "mfa"], None);
        let passkey = signed("ada@example.com", &["hwk", "user", "mfa"], Some(10));
        let outsider = signed("eve@elsewhere.org", &["pwd", "otp", "mfa"], Some(10));
        for (path, identity, want) in [
            ("/admin/", None, SignIn),
            ("/admin/", Some(&unrecorded), StepUp),
            ("/admin/", Some(&password), StepUp),
            ("/admin/", Some(&two), Allow),
            ("/admin/", Some(&old_two), Allow),
            ("/admin/", Some(&passkey), Allow),
            // The allow-list first: an outsider with two factors is still refused.
            ("/admin/", Some(&outsider), Forbidden),
            ("/billing/", Some(&password), Allow),
            ("/billing/", Some(&old_two), StepUp),
            ("/billing/", Some(&no_time), StepUp),
            ("/billing/", Some(&unrecorded), StepUp),
            ("/both/", Some(&password), StepUp),
            ("/both/", Some(&old_two), StepUp),
            ("/both/", Some(&two), Allow),
            ("/one/", Some(&unrecorded), Allow),
            ("/elsewhere", Some(&unrecorded), Allow),
        ] {
            assert_eq!(r.decide("h", path, identity), want, "{path} {identity:?}");
        }
        assert!(r.uses_step_up());
        assert!(r.needs_two_factors("h", "/admin/x"));
        assert!(r.needs_two_factors("h", "/both/"));
        assert!(!r.needs_two_factors("h", "/billing/"));
        assert!(!rules().uses_step_up());
    }

    /// A member of `slug` with `roles` granting `permissions`.
    fn member(slug: &str, roles: &[&str], permissions: &[&str]) -> OrganizationIdentity {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        OrganizationIdentity::new(slug.into(), owned(roles), owned(permissions))
    }

    /// `who(email)` with these memberships.
    fn in_organizations(email: &str, organizations: Vec<OrganizationIdentity>) -> Identity {
        Identity {
            organizations,
            ..who(email, "credentials", &[])
        }
    }

    /// Rules on organizations: membership first, then roles or permissions in that
    /// organization only; names compared exactly, as the library writes them.
    #[test]
    fn organization_rules_admit_members_by_role_and_permission() {
        use Decision::{Allow, Forbidden, SignIn};
        #[derive(serde::Deserialize)]
        struct File {
            rules: Vec<RuleConfig>,
        }
        let file: File = toml::from_str(
            r#"
            [[rules]]
            path = "/admin/"
            organization = "acme"
            allow_roles = ["admin"]

            [[rules]]
            path = "/billing/"
            organization = "acme"
            allow_permissions = ["billing:write"]

            [[rules]]
            path = "/staff/"
            organization = "acme"
            allow_domains = ["acme.example"]

            [[rules]]
            path = "/either/"
            organization = "acme"
            allow_emails = ["boss@elsewhere.example"]
            allow_roles = ["auditor"]

            [[rules]]
            path = "/app/"
            policy = "allow"
            organization = "acme"

            [[rules]]
            path = "/any/"
            organization = "acme"
            allow_roles = []
            allow_permissions = []
        "#,
        )
        .unwrap();
        let r = AccessRules::new(file.rules, Policy::SignedIn).unwrap();
        assert!(r.uses_organizations() && !r.uses_groups());

        let admin = in_organizations(
            "a@acme.example",
            vec![member("acme", &["admin"], &["member:*", "billing:write"])],
        );
        let owner = in_organizations("o@x.example", vec![member("acme", &["owner"], &["*"])]);
        let plain = in_organizations(
            "m@x.example",
            vec![member("acme", &["member"], &["member:read"])],
        );
        let staff = in_organizations(
            "s@acme.example",
            vec![member("acme", &["member"], &["member:read"])],
        );
        let billing = in_organizations(
            "b@x.example",
            vec![member("acme", &["billing"], &["billing:*"])],
        );
        let auditor = in_organizations(
            "u@x.example",
            vec![member("acme", &["auditor"], &["audit:read"])],
        );
        // The attacks: another organization's admin, a look-alike slug, a role spelled in
        // another case, a role name where a permission is asked, an empty membership.
        let other_admin =
            in_organizations("e@acme.example", vec![member("beta", &["admin"], &["*"])]);
        let shouting = in_organizations("e@x.example", vec![member("ACME", &["admin"], &["*"])]);
        let prefixed = in_organizations(
            "e@x.example",
            vec![
                member("acme-corp", &["admin"], &["*"]),
                member("acm", &["admin"], &["*"]),
            ],
        );
        let capital_role = in_organizations(
            "e@x.example",
            vec![member("acme", &["Admin"], &["Billing:write"])],
        );
        let role_as_permission = in_organizations(
            "e@x.example",
            vec![member("acme", &["member"], &["admin", "billing"])],
        );
        let no_roles = in_organizations("e@x.example", vec![member("acme", &[], &[])]);
        let boss = in_organizations("boss@elsewhere.example", vec![]);
        let boss_member = in_organizations(
            "boss@elsewhere.example",
            vec![member("acme", &["member"], &[])],
        );
        let both = in_organizations(
            "e@x.example",
            vec![
                member("beta", &["admin"], &["*"]),
                member("acme", &["member"], &[]),
            ],
        );
        let outsider = in_organizations("e@x.example", vec![]);
        for (path, identity, want) in [
            ("/admin/", None, SignIn),
            ("/admin/", Some(&admin), Allow),
            ("/admin/", Some(&owner), Forbidden),
            ("/admin/", Some(&plain), Forbidden),
            ("/admin/", Some(&other_admin), Forbidden),
            ("/admin/", Some(&shouting), Forbidden),
            ("/admin/", Some(&prefixed), Forbidden),
            ("/admin/", Some(&capital_role), Forbidden),
            ("/admin/", Some(&no_roles), Forbidden),
            ("/admin/", Some(&both), Forbidden),
            ("/billing/", Some(&admin), Allow),
            ("/billing/", Some(&owner), Allow),
            ("/billing/", Some(&billing), Allow),
            ("/billing/", Some(&plain), Forbidden),
            ("/billing/", Some(&capital_role), Forbidden),
            ("/billing/", Some(&role_as_permission), Forbidden),
            ("/billing/", Some(&other_admin), Forbidden),
            // With other lists the organization narrows them: a member on a list.
            ("/staff/", Some(&staff), Allow),
            ("/staff/", Some(&admin), Allow),
            ("/staff/", Some(&plain), Forbidden),
            ("/staff/", Some(&other_admin), Forbidden),
            ("/either/", Some(&boss), Forbidden),
            ("/either/", Some(&boss_member), Allow),
            ("/either/", Some(&auditor), Allow),
            ("/either/", Some(&admin), Forbidden),
            // The organization alone: any member, whatever their roles.
            ("/app/", None, SignIn),
            ("/app/", Some(&plain), Allow),
            ("/app/", Some(&no_roles), Allow),
            ("/app/", Some(&both), Allow),
            ("/app/", Some(&other_admin), Forbidden),
            ("/app/", Some(&shouting), Forbidden),
            ("/app/", Some(&prefixed), Forbidden),
            ("/app/", Some(&outsider), Forbidden),
            ("/any/", Some(&plain), Allow),
            ("/any/", Some(&outsider), Forbidden),
            ("/elsewhere", Some(&outsider), Allow),
        ] {
            assert_eq!(r.decide("h", path, identity), want, "{path} {identity:?}");
        }
    }

    #[test]
    fn default_policies() {
        let any = who("a@b.c", "github", &[]);
        for (default, anonymous, signed_in) in [
            (Policy::Bypass, Decision::Allow, Decision::Allow),
            (Policy::SignedIn, Decision::SignIn, Decision::Allow),
            (Policy::Deny, Decision::SignIn, Decision::Forbidden),
        ] {
            let r = AccessRules::new(vec![], default).unwrap();
            assert_eq!(r.decide("h", "/", None), anonymous);
            assert_eq!(r.decide("h", "/", Some(&any)), signed_in);
        }
        assert!(AccessRules::new(vec![], Policy::Allow).is_err());
    }

    #[test]
    fn bad_rules_are_named() {
        for (config, problem) in [
            (rule("a"), "give a policy"),
            (
                RuleConfig {
                    policy: Some(Policy::Allow),
                    ..rule("a")
                },
                "needs at least one allow_* list",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    allow_emails: vec!["a@b.c".into()],
                    ..rule("a")
                },
                "only go with policy `allow`",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    hosts: vec!["exa mple.com".into()],
                    ..rule("a")
                },
                "neither a host name",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    hosts: vec!["*.".into()],
                    ..rule("a")
                },
                "neither a host name",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    path: Some("admin".into()),
                    ..rule("a")
                },
                "must start with /",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    path: Some("/public//x".into()),
                    ..rule("a")
                },
                "did you mean /public/x?",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    path: Some("/public/../x".into()),
                    ..rule("a")
                },
                "dot segment",
            ),
            (
                RuleConfig {
                    allow_emails: vec!["example.com".into()],
                    ..rule("a")
                },
                "not an address",
            ),
            (
                RuleConfig {
                    allow_domains: vec!["@example.com".into()],
                    ..rule("a")
                },
                "not a domain",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::SignedIn),
                    factors: Some(3),
                    ..rule("a")
                },
                "factors = 3: 1 or 2",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::SignedIn),
                    max_age: Some(0),
                    ..rule("a")
                },
                "max_age = 0",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Bypass),
                    factors: Some(2),
                    ..rule("a")
                },
                "do not go with policy Bypass",
            ),
            (
                RuleConfig {
                    policy: Some(Policy::Deny),
                    max_age: Some(60),
                    ..rule("a")
                },
                "do not go with policy Deny",
            ),
            (
                RuleConfig {
                    allow_roles: vec!["admin".into()],
                    ..rule("a")
                },
                "allow_roles needs organization",
            ),
            (
                RuleConfig {
                    allow_permissions: vec!["billing:read".into()],
                    ..rule("a")
                },
                "allow_permissions needs organization",
            ),
            (
                RuleConfig {
                    organization: Some("ACME".into()),
                    ..rule("a")
                },
                "organization: slug \"ACME\"",
            ),
            (
                RuleConfig {
                    organization: Some(String::new()),
                    ..rule("a")
                },
                "organization: slug \"\"",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    allow_roles: vec!["Admin".into()],
                    ..rule("a")
                },
                "allow_roles: role name \"Admin\"",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    allow_roles: vec!["billing:read".into()],
                    ..rule("a")
                },
                "allow_roles: role name \"billing:read\"",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    allow_permissions: vec!["admin".into()],
                    ..rule("a")
                },
                "allow_permissions: permission \"admin\"",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    allow_permissions: vec!["Billing:Read".into()],
                    ..rule("a")
                },
                "allow_permissions: permission \"Billing:Read\"",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    policy: Some(Policy::SignedIn),
                    ..rule("a")
                },
                "organization only go with policy `allow`, not SignedIn",
            ),
            (
                RuleConfig {
                    organization: Some("acme".into()),
                    policy: Some(Policy::Bypass),
                    ..rule("a")
                },
                "only go with policy `allow`, not Bypass",
            ),
        ] {
            let ok = RuleConfig {
                policy: Some(Policy::SignedIn),
                ..RuleConfig::default()
            };
            let err = AccessRules::new(vec![ok, config], Policy::SignedIn).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("[[gateway.rules]] number 2 (\"a\"): "),
                "{text}"
            );
            assert!(text.contains(problem), "{text}");
        }
    }
}
