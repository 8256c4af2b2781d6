//! The directory's settings as written (TOML, environment), and their validation into what
//! the source runs with.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;

/// The user filter used when none is set: a person whose `uid` or `mail` is the username.
pub const DEFAULT_USER_FILTER: &str = "(&(|(uid={username})(mail={username}))(objectClass=person))";
/// The group filter used when none is set: a group that lists the user's DN as a `member`.
pub const DEFAULT_GROUP_FILTER: &str = "(member={dn})";
/// Connect and operation timeouts used when none is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Service connections kept for searches when no pool size is set.
pub const DEFAULT_POOL_SIZE: usize = 4;

/// The longest timeout accepted, in seconds.
const MAX_TIMEOUT_SECONDS: f64 = 300.0;
/// The largest pool accepted.
const MAX_POOL_SIZE: usize = 64;

/// How a directory is reached and searched: the `[ldap]` section of the server's
/// configuration, or built in code with [`LdapSettings::new`]. Every key but the four that
/// name the directory has a default; [`LdapSource::new`](crate::LdapSource::new) checks
/// them all and says what to fix.
///
/// ```
/// let mut settings = authcore_ldap::LdapSettings::new(
///     "ldaps://ldap.example.com",
///     "cn=authcore,ou=services,dc=example,dc=com",
///     "service password",
///     "ou=people,dc=example,dc=com",
/// );
/// settings.group_base_dn = Some("ou=groups,dc=example,dc=com".into());
/// assert!(!format!("{settings:?}").contains("service password"));
/// ```
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct LdapSettings {
    /// `ldap://host[:port]` or `ldaps://host[:port]`.
    pub url: String,
    /// Upgrade an `ldap://` connection with StartTLS before anything is sent.
    pub start_tls: bool,
    /// A PEM file of the CA certificates that sign the directory's certificate (a private
    /// CA); without it, the system's roots.
    pub ca_file: Option<PathBuf>,
    /// The service account that searches for users.
    pub bind_dn: String,
    /// The service account's password (never printed by `Debug`).
    pub bind_password: String,
    /// Where users are searched (subtree).
    pub base_dn: String,
    /// The filter that finds the user: `{username}` stands for the typed username, escaped
    /// ([RFC 4515](https://www.rfc-editor.org/rfc/rfc4515#section-3)) so that it can only
    /// ever be a value. Default [`DEFAULT_USER_FILTER`].
    pub user_filter: String,
    /// The attribute whose value is the user's id in authcore (the account they are linked
    /// by): `uid` (default), `sAMAccountName` on Active Directory.
    pub username_attribute: String,
    /// The user's email address (default `mail`).
    pub mail_attribute: String,
    /// The user's display name (default `displayName`; `cn` when the entry has none).
    pub display_name_attribute: String,
    /// The user's groups as DNs, kept by the directory (default `memberOf`): each group's
    /// name is the value of the first RDN of its DN. Used when `group_base_dn` is not set.
    pub member_of_attribute: String,
    /// With `group_base_dn`: the groups' name attribute (default `cn`).
    pub group_name_attribute: String,
    /// Search groups under this DN (subtree) with `group_filter` instead of reading
    /// `member_of_attribute`.
    pub group_base_dn: Option<String>,
    /// The filter that finds the user's groups: `{dn}` stands for the user's DN, escaped.
    /// Default [`DEFAULT_GROUP_FILTER`].
    pub group_filter: String,
    /// Seconds allowed to connect, TLS included (default 5).
    pub connect_timeout: f64,
    /// Seconds allowed for each operation (bind, search), and for a free pooled
    /// connection (default 5).
    pub operation_timeout: f64,
    /// Service connections kept for searches (default 4). User binds each take a
    /// connection of their own, closed after the bind, so a pooled connection always
    /// searches as the service account.
    pub pool_size: usize,
}

impl Default for LdapSettings {
    fn default() -> Self {
        LdapSettings {
            url: String::new(),
            start_tls: false,
            ca_file: None,
            bind_dn: String::new(),
            bind_password: String::new(),
            base_dn: String::new(),
            user_filter: DEFAULT_USER_FILTER.to_owned(),
            username_attribute: "uid".to_owned(),
            mail_attribute: "mail".to_owned(),
            display_name_attribute: "displayName".to_owned(),
            member_of_attribute: "memberOf".to_owned(),
            group_name_attribute: "cn".to_owned(),
            group_base_dn: None,
            group_filter: DEFAULT_GROUP_FILTER.to_owned(),
            connect_timeout: DEFAULT_TIMEOUT.as_secs_f64(),
            operation_timeout: DEFAULT_TIMEOUT.as_secs_f64(),
            pool_size: DEFAULT_POOL_SIZE,
        }
    }
}

impl fmt::Debug for LdapSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LdapSettings")
            .field("url", &self.url)
            .field("start_tls", &self.start_tls)
            .field("ca_file", &self.ca_file)
            .field("bind_dn", &self.bind_dn)
            .field("bind_password", &"[redacted]")
            .field("base_dn", &self.base_dn)
            .field("user_filter", &self.user_filter)
            .field("username_attribute", &self.username_attribute)
            .field("mail_attribute", &self.mail_attribute)
            .field("display_name_attribute", &self.display_name_attribute)
            .field("member_of_attribute", &self.member_of_attribute)
            .field("group_name_attribute", &self.group_name_attribute)
            .field("group_base_dn", &self.group_base_dn)
            .field("group_filter", &self.group_filter)
            .field("connect_timeout", &self.connect_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .field("pool_size", &self.pool_size)
            .finish()
    }
}

impl LdapSettings {
    /// Settings for the directory at `url`, searched under `base_dn` by the service account
    /// `bind_dn`; every other key at its default.
    pub fn new(
        url: impl Into<String>,
        bind_dn: impl Into<String>,
        bind_password: impl Into<String>,
        base_dn: impl Into<String>,
    ) -> Self {
        LdapSettings {
            url: url.into(),
            bind_dn: bind_dn.into(),
            bind_password: bind_password.into(),
            base_dn: base_dn.into(),
            ..LdapSettings::default()
        }
    }

    /// The settings checked: what [`LdapSource`](crate::LdapSource) runs with.
    pub(crate) fn validate(&self) -> Result<Validated, SettingsError> {
        let invalid = |key: &'static str, reason: String| SettingsError::Invalid { key, reason };
        let url = self.url.trim();
        let (tls, host) = parse_url(url).map_err(|reason| invalid("url", reason))?;
        if self.start_tls && tls {
            return Err(invalid(
                "start_tls",
                "is for ldap:// URLs; an ldaps:// connection is TLS from the start: remove \
                 start_tls or use ldap://"
                    .into(),
            ));
        }
        let uses_tls = tls || self.start_tls;
        if self.ca_file.is_some() && !uses_tls {
            return Err(invalid(
                "ca_file",
                "is only read for TLS: use an ldaps:// URL or set start_tls = true".into(),
            ));
        }
        required("bind_dn", &self.bind_dn, "the service account's DN")?;
        if self.bind_password.is_empty() {
            // An empty password is an unauthenticated bind, which directories accept as
            // anonymous: the searches would silently run without the service account.
            return Err(invalid(
                "bind_password",
                "is empty: set the service account's password (AUTHCORE_LDAP_BIND_PASSWORD)".into(),
            ));
        }
        required("base_dn", &self.base_dn, "where users are searched")?;
        check_filter("user_filter", &self.user_filter, "{username}")?;
        for (key, value) in [
            ("username_attribute", &self.username_attribute),
            ("mail_attribute", &self.mail_attribute),
            ("display_name_attribute", &self.display_name_attribute),
            ("member_of_attribute", &self.member_of_attribute),
            ("group_name_attribute", &self.group_name_attribute),
        ] {
            check_attribute(key, value)?;
        }
        let groups = match &self.group_base_dn {
            Some(base) => {
                required("group_base_dn", base, "where groups are searched")?;
                check_filter("group_filter", &self.group_filter, "{dn}")?;
                Groups::Search {
                    base_dn: base.trim().to_owned(),
                    filter: self.group_filter.trim().to_owned(),
                    name_attribute: self.group_name_attribute.clone(),
                }
            }
            None => Groups::MemberOf {
                attribute: self.member_of_attribute.clone(),
            },
        };
        let connect_timeout = seconds("connect_timeout", self.connect_timeout)?;
        let operation_timeout = seconds("operation_timeout", self.operation_timeout)?;
        if self.pool_size == 0 || self.pool_size > MAX_POOL_SIZE {
            return Err(invalid(
                "pool_size",
                format!(
                    "is {}: keep between 1 and {MAX_POOL_SIZE} service connections",
                    self.pool_size
                ),
            ));
        }
        let tls_config = if uses_tls {
            Some(tls_config(self.ca_file.as_deref())?)
        } else {
            if !is_loopback(&host) {
                tracing::warn!(
                    url,
                    "the directory is reached without TLS: passwords cross the network in \
                     the clear (use ldaps:// or start_tls = true)"
                );
            }
            None
        };
        Ok(Validated {
            url: url.to_owned(),
            start_tls: self.start_tls,
            tls_config,
            bind_dn: self.bind_dn.trim().to_owned(),
            bind_password: self.bind_password.clone(),
            base_dn: self.base_dn.trim().to_owned(),
            user_filter: self.user_filter.trim().to_owned(),
            username_attribute: self.username_attribute.clone(),
            mail_attribute: self.mail_attribute.clone(),
            display_name_attribute: self.display_name_attribute.clone(),
            groups,
            connect_timeout,
            operation_timeout,
            pool_size: self.pool_size,
        })
    }
}

/// Why settings cannot be used; the message names the key and what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A key has a value that cannot work.
    #[error("ldap {key} {reason}")]
    Invalid {
        /// The key (`url`, `base_dn` …).
        key: &'static str,
        /// What is wrong and what to do.
        reason: String,
    },
    /// `ca_file` cannot be read or holds no certificate.
    #[error("ldap ca_file {path}: {reason}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Where the groups of a user come from.
#[derive(Debug, Clone)]
pub(crate) enum Groups {
    /// The DNs in the user's `attribute`; a group's name is its DN's first RDN value.
    MemberOf { attribute: String },
    /// A search under `base_dn` with `filter` (`{dn}`: the user's DN), naming each group
    /// by its `name_attribute`.
    Search {
        base_dn: String,
        filter: String,
        name_attribute: String,
    },
}

/// Checked settings.
#[derive(Clone)]
pub(crate) struct Validated {
    pub(crate) url: String,
    pub(crate) start_tls: bool,
    pub(crate) tls_config: Option<Arc<ClientConfig>>,
    pub(crate) bind_dn: String,
    pub(crate) bind_password: String,
    pub(crate) base_dn: String,
    pub(crate) user_filter: String,
    pub(crate) username_attribute: String,
    pub(crate) mail_attribute: String,
    pub(crate) display_name_attribute: String,
    pub(crate) groups: Groups,
    pub(crate) connect_timeout: Duration,
    pub(crate) operation_timeout: Duration,
    pub(crate) pool_size: usize,
}

/// Whether the URL is `ldaps://`, and its host; or what is wrong with it.
fn parse_url(url: &str) -> Result<(bool, String), String> {
    const EXAMPLE: &str = "ldaps://ldap.example.com or ldap://ldap.example.com:389";
    if url.is_empty() {
        return Err(format!(
            "is not set: the directory's address, as {EXAMPLE} (AUTHCORE_LDAP_URL)"
        ));
    }
    let (tls, rest) = if let Some(rest) = url.strip_prefix("ldaps://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("ldap://") {
        (false, rest)
    } else {
        return Err(format!(
            "{url:?} is not an LDAP URL: write it as {EXAMPLE} (ldapi:// is not supported)"
        ));
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() {
        return Err(format!("{url:?} has no host: write it as {EXAMPLE}"));
    }
    if authority.contains(['/', '?', '#', '@']) {
        return Err(format!(
            "{url:?} has more than a host and port: put the search base in base_dn and the \
             service account in bind_dn, and write the URL as {EXAMPLE}"
        ));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, _)) if !host.ends_with(']') && host.contains(':') => (authority, None),
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    if host.is_empty() {
        return Err(format!("{url:?} has no host: write it as {EXAMPLE}"));
    }
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Err(format!(
            "{url:?} has the port {port:?}: give a number 1–65535"
        ));
    }
    Ok((tls, host.to_owned()))
}

fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn required(key: &'static str, value: &str, what: &str) -> Result<(), SettingsError> {
    if value.trim().is_empty() {
        return Err(SettingsError::Invalid {
            key,
            reason: format!("is not set: give {what}"),
        });
    }
    Ok(())
}

/// `filter` must use `placeholder` and parse as an LDAP filter once it is filled in.
fn check_filter(key: &'static str, filter: &str, placeholder: &str) -> Result<(), SettingsError> {
    let invalid = |reason: String| SettingsError::Invalid { key, reason };
    if !filter.contains(placeholder) {
        return Err(invalid(format!(
            "{filter:?} does not use {placeholder}: without it every sign-in would find the \
             same entries"
        )));
    }
    if ldap3::parse_filter(filter.trim().replace(placeholder, "x")).is_err() {
        return Err(invalid(format!(
            "{filter:?} is not an LDAP filter (RFC 4515): check its parentheses, as in \
             {DEFAULT_USER_FILTER}"
        )));
    }
    Ok(())
}

/// An attribute description: a name (letters, digits, `-`) or an OID.
fn check_attribute(key: &'static str, value: &str) -> Result<(), SettingsError> {
    let name = value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && value.starts_with(|c: char| c.is_ascii_alphabetic());
    let oid = value.chars().all(|c| c.is_ascii_digit() || c == '.')
        && value.starts_with(|c: char| c.is_ascii_digit());
    if !(name || oid) {
        return Err(SettingsError::Invalid {
            key,
            reason: format!("{value:?} is not an attribute name (as mail or sAMAccountName)"),
        });
    }
    Ok(())
}

fn seconds(key: &'static str, value: f64) -> Result<Duration, SettingsError> {
    if !value.is_finite() || value <= 0.0 || value > MAX_TIMEOUT_SECONDS {
        return Err(SettingsError::Invalid {
            key,
            reason: format!("is {value}: give seconds above 0 and at most {MAX_TIMEOUT_SECONDS}"),
        });
    }
    Ok(Duration::from_secs_f64(value))
}

/// The TLS client configuration: the CAs of `ca_file`, else the system's roots; with the
/// aws-lc-rs provider named here, not the process default.
fn tls_config(ca_file: Option<&Path>) -> Result<Arc<ClientConfig>, SettingsError> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let ca_error = |reason: String| SettingsError::CaFile {
                path: path.to_owned(),
                reason,
            };
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| ca_error(format!("cannot be read: {e}")))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ca_error(format!("is not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(ca_error(
                    "holds no certificate: give the PEM file of the CA that signed the \
                     directory's certificate"
                        .into(),
                ));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| ca_error(format!("holds a certificate that is not a CA: {e}")))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                // A system certificate rustls cannot use is left out, as browsers do.
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err(SettingsError::Invalid {
                    key: "ca_file",
                    reason: "is not set and the system has no CA certificates: give the PEM \
                             file of the CA that signed the directory's certificate"
                        .into(),
                });
            }
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| SettingsError::Invalid {
            key: "url",
            reason: format!("cannot set up TLS: {e}"),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> LdapSettings {
        LdapSettings::new(
            "ldap://127.0.0.1:3389",
            "cn=service,dc=example,dc=org",
            "secret",
            "dc=example,dc=org",
        )
    }

    #[test]
    fn defaults_validate() {
        let v = valid().validate().expect("valid");
        assert_eq!(v.operation_timeout, DEFAULT_TIMEOUT);
        assert!(matches!(v.groups, Groups::MemberOf { .. }));
    }

    #[test]
    fn bad_settings_name_the_key_to_fix() {
        type Change = fn(&mut LdapSettings);
        let cases: &[(Change, &str)] = &[
            (|s| s.url = String::new(), "ldap url is not set"),
            (|s| s.url = "http://x".into(), "not an LDAP URL"),
            (|s| s.url = "ldapi:///run/slapd".into(), "not an LDAP URL"),
            (|s| s.url = "ldap://".into(), "has no host"),
            (|s| s.url = "ldap://h:0".into(), "port"),
            (|s| s.url = "ldap://h:99999".into(), "port"),
            (|s| s.url = "ldap://h/dc=x".into(), "base_dn"),
            (|s| s.url = "ldap://u:p@h".into(), "more than a host"),
            (
                |s| {
                    s.url = "ldaps://h".into();
                    s.start_tls = true;
                },
                "ldap start_tls",
            ),
            (
                |s| s.ca_file = Some("/x.pem".into()),
                "ldap ca_file is only read",
            ),
            (|s| s.bind_dn = " ".into(), "ldap bind_dn is not set"),
            (
                |s| s.bind_password = String::new(),
                "ldap bind_password is empty",
            ),
            (|s| s.base_dn = String::new(), "ldap base_dn is not set"),
            (
                |s| s.user_filter = "(uid=alice)".into(),
                "does not use {username}",
            ),
            (
                |s| s.user_filter = "(uid={username}".into(),
                "is not an LDAP filter",
            ),
            (
                |s| s.mail_attribute = "mail)(x".into(),
                "ldap mail_attribute",
            ),
            (
                |s| s.username_attribute = String::new(),
                "ldap username_attribute",
            ),
            (
                |s| s.group_base_dn = Some(String::new()),
                "ldap group_base_dn is not set",
            ),
            (
                |s| {
                    s.group_base_dn = Some("ou=groups".into());
                    s.group_filter = "(member=x)".into();
                },
                "does not use {dn}",
            ),
            (|s| s.connect_timeout = 0.0, "ldap connect_timeout is 0"),
            (|s| s.operation_timeout = f64::NAN, "ldap operation_timeout"),
            (|s| s.operation_timeout = 1e9, "at most 300"),
            (|s| s.pool_size = 0, "ldap pool_size is 0"),
            (|s| s.pool_size = 1000, "between 1 and 64"),
        ];
        for (change, expected) in cases {
            let mut settings = valid();
            change(&mut settings);
            let err = settings.validate().err().expect("refused");
            let message = err.to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            assert!(!message.contains("secret"), "{message}");
        }
    }

    #[test]
    fn urls_that_work() {
        for url in [
            "ldap://localhost",
            "ldap://localhost:389/",
            "ldaps://[::1]:636",
            "ldaps://dc1.corp.example.com",
            "ldap://[::1]",
        ] {
            assert!(parse_url(url).is_ok(), "{url}");
        }
        assert!(is_loopback("[::1]") && is_loopback("127.0.0.2") && !is_loopback("ldap.example"));
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = std::env::temp_dir().join(format!("authcore-ldap-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("empty.pem");
        std::fs::write(&path, "not a certificate\n").expect("write");
        let mut settings = valid();
        settings.url = "ldaps://localhost".into();
        settings.ca_file = Some(path.clone());
        let message = settings.validate().err().expect("refused").to_string();
        assert!(message.contains("holds no certificate"), "{message}");
        settings.ca_file = Some(dir.join("missing.pem"));
        let message = settings.validate().err().expect("refused").to_string();
        assert!(message.contains("cannot be read"), "{message}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
