//! [`LdapSource`]: the sign-in against the directory (service search, user bind, groups).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use authcore::passwords::{MAX_PASSWORD_BYTES, SourceError, SourceUser, UserSource};
use ldap3::{Ldap, Scope, SearchEntry, SearchOptions, ldap_escape};

use crate::connection::{ServicePool, bounded, open};
use crate::error::DirectoryError;
use crate::settings::{Groups, LdapSettings, SettingsError, Validated};

/// The source's id: the provider id of the accounts its users are linked by.
pub const LDAP_SOURCE_ID: &str = "ldap";

/// The longest username sent to the directory; longer ones are refused before.
const MAX_USERNAME_BYTES: usize = 256;
/// The most groups read for one user.
const MAX_GROUPS: i32 = 1000;

/// LDAP result codes of a bind that was refused for this user (as opposed to a directory
/// that cannot answer): invalidCredentials, inappropriateAuthentication,
/// insufficientAccessRights, unwillingToPerform (a disabled account, an unauthenticated
/// bind), constraintViolation (an expired or locked password under a password policy).
const REFUSED_BIND: [u32; 5] = [49, 48, 50, 53, 19];
/// Search result code: more entries than the size limit.
const SIZE_LIMIT_EXCEEDED: u32 = 4;

/// An LDAP directory (OpenLDAP, Active Directory, 389 Directory Server …) as a
/// [`UserSource`]: the service account searches the user with the configured filter, the
/// user's own DN and password are checked by a bind on a connection of its own, and the
/// user's groups come from `memberOf` or a group search.
///
/// ```no_run
/// # use std::sync::Arc;
/// use authcore::providers::CredentialsProvider;
/// use authcore_ldap::{LdapSettings, LdapSource};
///
/// let settings = LdapSettings::new(
///     "ldaps://ldap.example.com",
///     "cn=authcore,ou=services,dc=example,dc=com",
///     "service password",
///     "ou=people,dc=example,dc=com",
/// );
/// let source = LdapSource::new(settings).expect("valid settings");
/// let provider = CredentialsProvider::from_source(Arc::new(source));
/// assert_eq!(provider.id(), "ldap");
/// ```
///
/// Cloning is cheap and shares the connection pool. The source needs a Tokio runtime to
/// answer.
#[derive(Clone)]
pub struct LdapSource {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Validated,
    pool: ServicePool,
    /// A DN under the base that names no entry: bound to for an unknown user, so that the
    /// answer takes the same steps for an unknown user as for a wrong password.
    absent_dn: String,
}

impl fmt::Debug for LdapSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner.settings;
        f.debug_struct("LdapSource")
            .field("url", &s.url)
            .field("start_tls", &s.start_tls)
            .field("bind_dn", &s.bind_dn)
            .field("base_dn", &s.base_dn)
            .field("groups", &s.groups)
            .finish_non_exhaustive()
    }
}

impl LdapSource {
    /// A source for `settings`, checked now (the message of an error says which key to fix
    /// and how). Nothing is connected until the first sign-in.
    pub fn new(settings: LdapSettings) -> Result<Self, SettingsError> {
        let settings = settings.validate()?;
        let absent_dn = format!("cn=authcore-absent-user,{}", settings.base_dn);
        Ok(LdapSource {
            inner: Arc::new(Inner {
                pool: ServicePool::new(settings.pool_size),
                settings,
                absent_dn,
            }),
        })
    }

    /// Connects and binds as the service account: a start-up check that the directory is
    /// reachable and the service account's credentials are right.
    pub async fn check_connection(&self) -> Result<(), DirectoryError> {
        let conn = self.inner.pool.get(&self.inner.settings).await?;
        conn.release();
        Ok(())
    }

    async fn sign_in(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, DirectoryError> {
        let s = &self.inner.settings;
        // The input can only ever be a value in the filter: `*`, `(`, `)`, `\` and NUL are
        // escaped (RFC 4515).
        let filter = s.user_filter.replace("{username}", &ldap_escape(username));
        let mut attributes = vec![
            s.username_attribute.as_str(),
            s.mail_attribute.as_str(),
            s.display_name_attribute.as_str(),
            "cn",
        ];
        if let Groups::MemberOf { attribute } = &s.groups {
            attributes.push(attribute);
        }
        // Two at most: one is the user, more is a filter that is not specific enough.
        let (entries, rc) = self
            .search("user search", &s.base_dn, &filter, &attributes, 2)
            .await?;
        let found = match (rc, entries.len()) {
            (0, 1) => entries.into_iter().next(),
            (0 | SIZE_LIMIT_EXCEEDED, n) => {
                if n > 1 {
                    tracing::warn!(
                        "the LDAP user filter found more than one entry for a username; \
                         nobody is signed in (make user_filter match one entry)"
                    );
                }
                None
            }
            (rc, _) => {
                return Err(DirectoryError::Result {
                    step: "user search",
                    rc,
                });
            }
        };
        // An empty DN would make the bind anonymous.
        let Some(entry) = found.filter(|e| !e.dn.trim().is_empty()) else {
            // Whatever the directory answers to this bind, nobody is signed in.
            let _ = self.user_bind(&self.inner.absent_dn, password).await;
            return Ok(None);
        };
        if !self.user_bind(&entry.dn, password).await? {
            return Ok(None);
        }
        let Some(id) = first_value(&entry, &s.username_attribute) else {
            tracing::warn!(
                dn = %entry.dn,
                attribute = %s.username_attribute,
                "the directory entry has no value of username_attribute; not signed in"
            );
            return Ok(None);
        };
        let mut user = SourceUser::new(id);
        if let Some(name) =
            first_value(&entry, &s.display_name_attribute).or_else(|| first_value(&entry, "cn"))
        {
            user = user.name(name);
        }
        if let Some(email) = first_value(&entry, &s.mail_attribute) {
            user = user.email(email);
        }
        let mut groups = match &s.groups {
            Groups::MemberOf { attribute } => values(&entry, attribute)
                .filter_map(|dn| first_rdn_value(dn))
                .collect(),
            Groups::Search {
                base_dn,
                filter,
                name_attribute,
            } => {
                let filter = filter.replace("{dn}", &ldap_escape(entry.dn.as_str()));
                let (groups, rc) = self
                    .search(
                        "group search",
                        base_dn,
                        &filter,
                        &[name_attribute.as_str()],
                        MAX_GROUPS,
                    )
                    .await?;
                if rc != 0 && rc != SIZE_LIMIT_EXCEEDED {
                    return Err(DirectoryError::Result {
                        step: "group search",
                        rc,
                    });
                }
                groups
                    .iter()
                    .filter_map(|g| first_value(g, name_attribute))
                    .collect::<Vec<_>>()
            }
        };
        groups.sort();
        groups.dedup();
        Ok(Some(user.groups(groups)))
    }

    /// A search on a service connection; a pooled connection that fails (closed by the
    /// directory while idle) is replaced once by a new one.
    async fn search(
        &self,
        step: &'static str,
        base: &str,
        filter: &str,
        attributes: &[&str],
        size_limit: i32,
    ) -> Result<(Vec<SearchEntry>, u32), DirectoryError> {
        let settings = &self.inner.settings;
        let mut conn = self.inner.pool.get(settings).await?;
        let mut outcome = search_on(
            &mut conn.ldap,
            settings,
            step,
            base,
            filter,
            attributes,
            size_limit,
        )
        .await;
        if conn.reused && matches!(outcome, Err(DirectoryError::Operation { .. })) {
            conn = self.inner.pool.reopen(conn, settings).await?;
            outcome = search_on(
                &mut conn.ldap,
                settings,
                step,
                base,
                filter,
                attributes,
                size_limit,
            )
            .await;
        }
        if outcome.is_ok() {
            conn.release();
        }
        outcome
    }

    /// Binds as `dn` with `password` on a connection of its own, closed afterwards (a
    /// pooled connection never changes identity): whether the directory took the
    /// password.
    async fn user_bind(&self, dn: &str, password: &str) -> Result<bool, DirectoryError> {
        let settings = &self.inner.settings;
        let mut ldap = open(settings).await?;
        let timeout = settings.operation_timeout;
        let result = bounded(
            timeout,
            ldap.with_timeout(timeout).simple_bind(dn, password),
        )
        .await
        .map_err(|_| DirectoryError::Timeout("user bind"))?
        .map_err(|e| DirectoryError::operation("user bind", &e))?;
        let _ = bounded(timeout, ldap.unbind()).await;
        match result.rc {
            0 => Ok(true),
            rc if REFUSED_BIND.contains(&rc) => Ok(false),
            rc => Err(DirectoryError::Result {
                step: "user bind",
                rc,
            }),
        }
    }
}

async fn search_on(
    ldap: &mut Ldap,
    settings: &Validated,
    step: &'static str,
    base: &str,
    filter: &str,
    attributes: &[&str],
    size_limit: i32,
) -> Result<(Vec<SearchEntry>, u32), DirectoryError> {
    let timeout = settings.operation_timeout;
    let time_limit = i32::try_from(timeout.as_secs().max(1)).unwrap_or(i32::MAX);
    let result = bounded(
        timeout,
        ldap.with_search_options(
            SearchOptions::new()
                .sizelimit(size_limit)
                .timelimit(time_limit),
        )
        .with_timeout(timeout)
        .search(base, Scope::Subtree, filter, attributes),
    )
    .await
    .map_err(|_| DirectoryError::Timeout(step))?
    .map_err(|e| DirectoryError::operation(step, &e))?;
    let ldap3::SearchResult(entries, outcome) = result;
    let mut parsed = Vec::with_capacity(entries.len());
    for entry in entries {
        parsed.push(entry_of(step, entry)?);
    }
    Ok((parsed, outcome.rc))
}

/// The entry of a search answer. `SearchEntry::construct` panics on an entry that is not the
/// ASN.1 shape it expects; a directory's answer is input like any other, so a malformed
/// one is an operation error, not a crash of the request.
fn entry_of(step: &'static str, entry: ldap3::ResultEntry) -> Result<SearchEntry, DirectoryError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        SearchEntry::construct(entry)
    }))
    .map_err(|_| DirectoryError::Operation {
        step,
        reason: "the directory sent a malformed entry".to_owned(),
    })
}

#[async_trait]
impl UserSource for LdapSource {
    fn id(&self) -> &str {
        LDAP_SOURCE_ID
    }

    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, SourceError> {
        // An empty password is an unauthenticated bind, which a directory answers with
        // success (RFC 4513 §5.1.2): it never reaches the directory.
        if password.is_empty()
            || password.len() > MAX_PASSWORD_BYTES
            || password.contains('\0')
            || username.trim().is_empty()
            || username.len() > MAX_USERNAME_BYTES
            || username.contains('\0')
        {
            return Ok(None);
        }
        match self.sign_in(username, password).await {
            Ok(user) => Ok(user),
            Err(e) => {
                tracing::warn!(error = %e, "the LDAP directory could not check a sign-in");
                Err(SourceError::Unavailable(Box::new(e)))
            }
        }
    }
}

/// The values of `attribute` (named in any case, as directories answer).
fn values<'a>(entry: &'a SearchEntry, attribute: &'a str) -> impl Iterator<Item = &'a String> {
    entry
        .attrs
        .iter()
        .filter(move |(name, _)| name.eq_ignore_ascii_case(attribute))
        .flat_map(|(_, values)| values.iter())
}

/// The first non-blank value of `attribute`.
fn first_value(entry: &SearchEntry, attribute: &str) -> Option<String> {
    values(entry, attribute)
        .map(|v| v.trim())
        .find(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The value of a DN's first RDN, unescaped (RFC 4514): `cn=R\2cD,ou=groups,dc=example` →
/// `R,D`. A multi-valued RDN gives its first value.
fn first_rdn_value(dn: &str) -> Option<String> {
    let (_, rest) = dn.split_once('=')?;
    let bytes = rest.as_bytes();
    let mut value = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => {
                let hex = |at: usize| bytes.get(at).and_then(|c| (*c as char).to_digit(16));
                match (hex(i + 1), hex(i + 2)) {
                    (Some(high), Some(low)) => {
                        value.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
                        i += 3;
                    }
                    _ => {
                        value.extend(bytes.get(i + 1));
                        i += 2;
                    }
                }
            }
            b',' | b'+' => break,
            _ => {
                value.push(b);
                i += 1;
            }
        }
    }
    let value = String::from_utf8(value).ok()?;
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {

    /// Entries not of the shape a search answer has: an operation error, never a panic.
    #[test]
    fn malformed_entries_are_errors() {
        use ldap3::asn1::{PL, StructureTag, TagClass};
        let tag = |id, payload| StructureTag {
            class: TagClass::Application,
            id,
            payload,
        };
        for entry in [
            tag(7, PL::C(Vec::new())),
            tag(4, PL::P(b"not constructed".to_vec())),
            tag(4, PL::C(Vec::new())),
            tag(4, PL::C(vec![tag(4, PL::P(vec![0xff, 0xfe]))])),
        ] {
            let err = entry_of("search", ldap3::ResultEntry::new(entry)).unwrap_err();
            assert!(err.to_string().contains("malformed"), "{err}");
        }
    }
    use super::*;

    #[test]
    fn group_names_are_the_first_rdn_value() {
        for (dn, name) in [
            ("cn=admins,ou=groups,dc=example,dc=org", Some("admins")),
            (
                "CN=Domain Admins,CN=Users,DC=corp,DC=example",
                Some("Domain Admins"),
            ),
            (r"cn=R\2cD,ou=groups", Some("R,D")),
            (r"cn=a\,b\+c,ou=g", Some("a,b+c")),
            ("cn=x+ou=y,dc=z", Some("x")),
            (r"cn=caf\c3\a9,dc=z", Some("café")),
            ("cn=,dc=z", None),
            ("no equals sign", None),
            (r"cn=trailing\", Some("trailing")),
            (r"cn=\ff,dc=z", None),
        ] {
            assert_eq!(first_rdn_value(dn).as_deref(), name, "{dn}");
        }
    }
}
