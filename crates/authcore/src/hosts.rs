//! Host allow-lists: exact host names (`app.example.com`), IP literals (`127.0.0.1`,
//! `[::1]`) and every subdomain of a domain (`*.example.com`, which does not match
//! `example.com` itself), each optionally with a port (`localhost:3000`) or `:*` for any
//! port. Compared lower-cased.
//!
//! Two readings of a pattern without a port:
//! - [`HostList::allows`] — trusting a request's host to build links from
//!   ([`AuthConfigBuilder::allowed_hosts`](crate::config::AuthConfigBuilder::allowed_hosts)):
//!   the scheme's default port only, so `Host: app.example.com:9999` gets no magic link to
//!   port 9999; write `:*` for any port.
//! - [`HostList::matches`] — classifying requests by host (`authcore-server`'s gateway
//!   rules and redirect allow-list): any port.
//!
//! ```
//! use authcore::hosts::HostList;
//!
//! let list = HostList::parse(["example.com", "*.example.com", "[::1]:*"]).unwrap();
//! assert!(list.allows("EXAMPLE.com", 443));
//! assert!(list.allows("example.com:443", 443));
//! assert!(!list.allows("example.com:8443", 443));
//! assert!(list.allows("a.b.example.com", 443));
//! assert!(list.allows("[::1]:3000", 80));
//! assert!(list.matches("example.com:8443"));
//! assert!(!list.matches("example.com.evil.org"));
//! assert!(HostList::parse(["https://example.com"]).is_err());
//! ```

/// One pattern: which hosts, and which ports.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPattern {
    host: HostName,
    port: PortRule,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostName {
    /// A host name or IP literal.
    Exact(String),
    /// `.example.com` for `*.example.com`.
    Subdomains(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    /// No port written: the scheme's default for [`HostList::allows`], any for
    /// [`HostList::matches`].
    Unwritten,
    /// `:*`.
    Any,
    /// `:3000`.
    Is(u16),
}

impl HostPattern {
    fn parse(p: &str) -> Result<Self, String> {
        let p = p.trim().to_ascii_lowercase();
        let invalid = || {
            format!(
                "host {p:?} is neither a host name (with an optional :port or :*), an IP address nor `*.` and a domain"
            )
        };
        let (host, port) = split_port(&p);
        let port = match port {
            None => PortRule::Unwritten,
            Some("*") => PortRule::Any,
            Some(n) => PortRule::Is(n.parse::<u16>().map_err(|_| invalid())?),
        };
        let host = if let Some(rest) = host.strip_prefix("*.") {
            if !is_domain(rest) {
                return Err(invalid());
            }
            HostName::Subdomains(format!(".{rest}"))
        } else if is_domain(host)
            || host
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok())
        {
            HostName::Exact(host.to_owned())
        } else {
            return Err(invalid());
        };
        Ok(HostPattern { host, port })
    }

    /// Whether the pattern covers `host` (lower case, no port) and `port` (as written in
    /// the request, if at all); `default_port` decides an unwritten pattern port (`None`:
    /// any).
    fn covers(&self, host: &str, port: Option<u16>, default_port: Option<u16>) -> bool {
        let host_ok = match &self.host {
            HostName::Exact(h) => h == host,
            HostName::Subdomains(suffix) => {
                host.len() > suffix.len() && host.ends_with(suffix.as_str())
            }
        };
        let port_ok = match (self.port, default_port) {
            (PortRule::Any, _) | (PortRule::Unwritten, None) => true,
            (PortRule::Unwritten, Some(default)) => port.is_none_or(|p| p == default),
            (PortRule::Is(n), _) => port == Some(n),
        };
        host_ok && port_ok
    }
}

/// DNS labels (letters, digits, `-`, `_`) separated by dots; IPv4 addresses are such too.
fn is_domain(h: &str) -> bool {
    !h.is_empty()
        && h.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// `host:port` → (`host`, `Some("port")`); an IPv6 literal keeps its brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let colon = match authority.rfind(']') {
        Some(end) => authority[end..].find(':').map(|i| end + i),
        None => authority.rfind(':'),
    };
    match colon {
        Some(i) => (&authority[..i], Some(&authority[i + 1..])),
        None => (authority, None),
    }
}

/// A list of host patterns; empty matches nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostList(Vec<HostPattern>);

impl HostList {
    /// Parses patterns; the error names the bad one.
    pub fn parse<I, S>(patterns: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        patterns
            .into_iter()
            .map(|p| HostPattern::parse(p.as_ref()))
            .collect::<Result<_, _>>()
            .map(HostList)
    }

    /// Whether `authority` (`host` or `host:port`, any case) may be trusted, for a scheme
    /// whose default port is `default_port`: a pattern that names a port needs that port,
    /// `:*` takes any, and a pattern without one takes the default port only (written or
    /// not). An authority with a port that is no number is refused.
    pub fn allows(&self, authority: &str, default_port: u16) -> bool {
        self.check(authority, Some(default_port))
    }

    /// Whether `authority` (`host` or `host:port`, any case) matches a pattern: with its
    /// port for patterns that name one, any port for the others.
    pub fn matches(&self, authority: &str) -> bool {
        self.check(authority, None)
    }

    fn check(&self, authority: &str, default_port: Option<u16>) -> bool {
        let authority = authority.to_ascii_lowercase();
        let (host, port) = split_port(&authority);
        let port = match port.map(str::parse::<u16>) {
            None => None,
            Some(Ok(p)) => Some(p),
            Some(Err(_)) => return false,
        };
        self.0.iter().any(|p| p.covers(host, port, default_port))
    }

    /// Whether the list has no pattern.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists() {
        let list = HostList::parse([
            "example.com",
            "*.example.com",
            "localhost:3000",
            "127.0.0.1",
            "[::1]",
        ])
        .unwrap();
        for (host, want) in [
            ("example.com", true),
            ("EXAMPLE.com:8443", true),
            ("a.example.com", true),
            ("a.b.example.com", true),
            ("evil-example.com", false),
            ("example.com.evil.org", false),
            ("localhost:3000", true),
            ("localhost:3001", false),
            ("localhost", false),
            ("127.0.0.1:9", true),
            ("127.0.0.2", false),
            ("[::1]", true),
            ("[::1]:3000", true),
            ("[::2]", false),
            ("", false),
        ] {
            assert_eq!(list.matches(host), want, "{host}");
        }
    }

    /// Trusting a host: a pattern without a port is the scheme's default port only.
    #[test]
    fn allowed_hosts_without_a_port_mean_the_default_port() {
        let list = HostList::parse([
            "auth.example.com",
            "*.example.org",
            "localhost:3000",
            "127.0.0.1:*",
            "*.localhost:*",
        ])
        .unwrap();
        for (host, default, want) in [
            ("auth.example.com", 443, true),
            ("auth.example.com:443", 443, true),
            ("AUTH.example.com:443", 443, true),
            ("auth.example.com:9999", 443, false),
            ("auth.example.com:80", 443, false),
            ("auth.example.com:80", 80, true),
            ("auth.example.com:0443", 443, true),
            ("auth.example.com:", 443, false),
            ("auth.example.com:x", 443, false),
            ("a.example.org", 443, true),
            ("a.example.org:8443", 443, false),
            ("localhost:3000", 80, true),
            ("localhost", 80, false),
            ("localhost:3001", 80, false),
            ("127.0.0.1:9", 80, true),
            ("127.0.0.1", 80, true),
            ("app.localhost:4000", 80, true),
            ("localhost.evil.com", 80, false),
        ] {
            assert_eq!(list.allows(host, default), want, "{host} ({default})");
        }
    }

    #[test]
    fn bad_patterns_are_named() {
        for bad in [
            "",
            "*.",
            "*",
            "http://example.com",
            "example.com/path",
            "a..b",
            "host:port",
            "host:70000",
            "[not-an-ip]",
            "*.*.example.com",
            "user@example.com",
        ] {
            let err = HostList::parse([bad]).unwrap_err();
            assert!(
                err.contains(&format!("{:?}", bad.trim().to_ascii_lowercase())),
                "{err}"
            );
        }
    }
}
