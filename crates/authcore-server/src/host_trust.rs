//! Which request hosts the server builds its links from: an allow-list, or what `AUTH_URL`
//! and `AUTH_TRUST_HOST` say.

use crate::ServerConfig;

/// Host names a server listening on loopback answers when nothing else is configured.
/// Any port: the server's own port and those of the apps behind the gateway.
pub const LOOPBACK_HOSTS: [&str; 4] = ["localhost:*", "*.localhost:*", "127.0.0.1:*", "[::1]:*"];

/// Which request hosts the server builds its links from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostTrust {
    /// Only these hosts (`AUTHCORE_ALLOWED_HOSTS`, or [`LOOPBACK_HOSTS`] on loopback).
    AllowList(Vec<String>),
    /// As `AUTH_URL` / `AUTH_TRUST_HOST` say; with neither (on a public address), no host
    /// is trusted and every request answers `UntrustedHost`.
    AsConfigured,
}

/// The server trusts no request host by default: `AUTHCORE_ALLOWED_HOSTS` when set (with
/// `AUTH_TRUST_HOST` it may come from `X-Forwarded-Host`); else `AUTH_URL` or an explicit
/// `AUTH_TRUST_HOST`; else, while it listens on loopback, the loopback names only.
pub fn host_trust(config: &ServerConfig) -> HostTrust {
    let set = |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty());
    if let Some(hosts) = &config.allowed_hosts {
        HostTrust::AllowList(hosts.clone())
    } else if set(config.public_url())
        || set(config.trust_host_setting())
        || !config.addr.ip().is_loopback()
    {
        HostTrust::AsConfigured
    } else {
        HostTrust::AllowList(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect())
    }
}
