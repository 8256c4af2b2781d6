//! Host allow-lists: exact host names (`app.example.com`, optionally with a port:
//! `localhost:3000`), IP literals (`127.0.0.1`, `[::1]`) and every subdomain of a domain
//! (`*.example.com`, which does not match `example.com` itself). Compared lower-cased.
//!
//! Used by [`AuthConfigBuilder::allowed_hosts`](crate::config::AuthConfigBuilder::allowed_hosts)
//! (which request hosts authcore builds its URLs from) and by hosts such as
//! `authcore-server`'s gateway (rules, redirect allow-list).
//!
//! ```
//! use authcore::hosts::HostList;
//!
//! let list = HostList::parse(["example.com", "*.example.com", "[::1]"]).unwrap();
//! assert!(list.matches("EXAMPLE.com:8443"));
//! assert!(list.matches("a.b.example.com"));
//! assert!(list.matches("[::1]:3000"));
//! assert!(!list.matches("example.com.evil.org"));
//! assert!(HostList::parse(["https://example.com"]).is_err());
//! ```

/// One pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// A host, with `:port` when the pattern names one.
    Exact(String),
    /// `.example.com` for `*.example.com`.
    Subdomains(String),
}

impl HostPattern {
    fn parse(p: &str) -> Result<Self, String> {
        let p = p.trim().to_ascii_lowercase();
        let invalid = || {
            format!(
                "host {p:?} is neither a host name (with an optional :port), an IP address nor `*.` and a domain"
            )
        };
        if let Some(rest) = p.strip_prefix("*.") {
            return if is_domain(rest) {
                Ok(HostPattern::Subdomains(format!(".{rest}")))
            } else {
                Err(invalid())
            };
        }
        let (host, port) = split_port(&p);
        let host_ok = is_domain(host)
            || host
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
        let port_ok = port.is_none_or(|port| port.parse::<u16>().is_ok());
        if host_ok && port_ok {
            Ok(HostPattern::Exact(p))
        } else {
            Err(invalid())
        }
    }

    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(h) => h == host,
            HostPattern::Subdomains(suffix) => {
                host.len() > suffix.len() && host.ends_with(suffix.as_str())
            }
        }
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

    /// Whether `authority` (`host` or `host:port`, any case) matches a pattern: with its
    /// port for patterns that name one, without it for the others.
    pub fn matches(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        let (bare, _) = split_port(&authority);
        self.0
            .iter()
            .any(|p| p.matches(&authority) || p.matches(bare))
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
