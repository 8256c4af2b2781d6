//! What a request's origin alone decides, worked out once per origin and shared by every
//! request to it: the parsed origin URL (so a request URL is its path joined to it, without
//! parsing and IDNA-mapping the host again), the origin string, the `GET /providers` body
//! and the built-in sign-in page (which depend on nothing else).
//!
//! The cache is keyed by the scheme and the host *as sent*; it holds at most
//! [`MAX_SITES`] entries and starts over when full, so hosts an attacker makes up (with
//! `trust_host`) cost them a cache miss each, never memory.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::Bytes;

use crate::spliced::SplicedPage;

/// Entries kept at most (origins in use are a handful: the public host, localhost …).
pub(crate) const MAX_SITES: usize = 64;

/// One origin's shared, derived values.
#[derive(Debug)]
pub(crate) struct Site {
    /// `<origin>/`, the base every request path is joined to.
    base: url::Url,
    /// `scheme://host[:port]` as Auth.js serialises `url.origin`.
    pub origin: Arc<str>,
    /// The `GET /providers` JSON, rendered on first use.
    pub providers_json: OnceLock<Bytes>,
    /// The built-in sign-in page without a message, cut where a request's values go;
    /// rendered on first use (`None`: the page cannot be cut, see [`SplicedPage::parse`]).
    pub signin_page: OnceLock<Option<SplicedPage>>,
}

impl Site {
    fn new(base: url::Url) -> Self {
        let origin = origin_of(&base).into();
        Site {
            base,
            origin,
            providers_json: OnceLock::new(),
            signin_page: OnceLock::new(),
        }
    }

    /// The request URL for `path_and_query` (as the request line sent it) on this origin:
    /// what `Url::parse("<origin><path_and_query>")` gives, joined to the cached base when
    /// that is the same thing (a path that starts with one `/`); parsed whole otherwise.
    pub fn url(&self, path_and_query: &str) -> Result<url::Url, url::ParseError> {
        let b = path_and_query.as_bytes();
        // `//x` and `/\x` would be scheme-relative references to another host for `join`,
        // but are paths in the whole URL.
        if b.first() == Some(&b'/') && !matches!(b.get(1), Some(b'/' | b'\\')) {
            return self.base.join(path_and_query);
        }
        let mut s = String::with_capacity(self.origin.len() + path_and_query.len());
        s.push_str(&self.origin);
        s.push_str(path_and_query);
        url::Url::parse(&s)
    }
}

/// `url.origin().ascii_serialization()`, cut from the URL's own serialisation for http(s)
/// URLs: the scheme, host and (non-default) port are already written there, so the host is
/// not formatted again (an IPv4 host goes through `Display` in `url`'s version).
pub(crate) fn origin_of(url: &url::Url) -> String {
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return url.origin().ascii_serialization();
    }
    let scheme = &url[..url::Position::AfterScheme];
    let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let mut origin = String::with_capacity(scheme.len() + 3 + authority.len());
    origin.push_str(scheme);
    origin.push_str("://");
    origin.push_str(authority);
    origin
}

/// The per-origin cache (one per configuration).
#[derive(Debug, Default)]
pub(crate) struct Sites {
    /// `[http, https]`, by the host as sent.
    by_host: [RwLock<HashMap<Box<str>, Arc<Site>>>; 2],
}

impl Sites {
    /// The site for `https` (else `http`) and `host` (a bare authority, checked by the
    /// caller), parsed on first use.
    pub fn get(&self, https: bool, host: &str) -> Result<Arc<Site>, url::ParseError> {
        let map = &self.by_host[usize::from(https)];
        // A poisoned lock only means another request panicked mid-insert: the map is
        // still a valid map, so go on with it.
        if let Some(site) = map
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(host)
        {
            return Ok(Arc::clone(site));
        }
        let scheme = if https { "https" } else { "http" };
        let base = url::Url::parse(&format!("{scheme}://{host}/"))?;
        let site = Arc::new(Site::new(base));
        let mut map = map
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() >= MAX_SITES {
            map.clear();
        }
        map.insert(host.into(), Arc::clone(&site));
        Ok(site)
    }

    /// The site of a fixed URL (the configured `url`): its scheme and authority.
    pub fn of_url(&self, url: &url::Url) -> Result<Arc<Site>, url::ParseError> {
        let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
        self.get(url.scheme() == "https", authority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn origin_of_matches_the_url_crate() {
        for u in [
            "http://127.0.0.1:3000/auth/session",
            "https://authjs.test/auth",
            "https://user:pw@Example.COM:443/x?y#z",
            "http://[::1]:8080/",
            "http://xn--bcher-kva.example/",
            "https://bücher.example:8443/a",
            "http://10.0.0.1:80/",
        ] {
            let url = url::Url::parse(u).unwrap();
            assert_eq!(origin_of(&url), url.origin().ascii_serialization(), "{u}");
        }
    }

    #[test]
    fn same_url_as_a_whole_parse() {
        let sites = Sites::default();
        for host in [
            "example.com",
            "EXAMPLE.com:80",
            "127.0.0.1:3000",
            "[::1]:8443",
            "bücher.de",
        ] {
            for https in [false, true] {
                let site = sites.get(https, host).unwrap();
                let scheme = if https { "https" } else { "http" };
                for pq in [
                    "/",
                    "/auth/session",
                    "/auth/signin?callbackUrl=%2Fa%3Fb&x=1",
                    "//evil.example/auth/session",
                    "/\\evil.example/x",
                    "/auth/../auth/./csrf",
                    "/a b/%zz?q=<>\"",
                    "?q",
                    "",
                ] {
                    let whole = url::Url::parse(&format!("{scheme}://{host}{pq}"));
                    assert_eq!(site.url(pq).ok(), whole.ok(), "{scheme}://{host} + {pq:?}");
                }
            }
        }
    }

    #[test]
    fn entries_are_shared_and_bounded() {
        let sites = Sites::default();
        let a = sites.get(false, "a.example").unwrap();
        assert!(Arc::ptr_eq(&a, &sites.get(false, "a.example").unwrap()));
        assert!(!Arc::ptr_eq(&a, &sites.get(true, "a.example").unwrap()));
        assert_eq!(&*a.origin, "http://a.example");
        for i in 0..MAX_SITES * 2 {
            sites.get(false, &format!("h{i}.example")).unwrap();
        }
        assert!(sites.by_host[0].read().unwrap().len() <= MAX_SITES);
        assert!(sites.get(false, "bad host").is_err());
    }

    proptest! {
        #[test]
        fn join_matches_parse(pq in "/[a-zA-Z0-9/\\\\.%?#&=:@ _-]{0,24}") {
            let site = Sites::default().get(false, "h.example:8080").unwrap();
            let whole = url::Url::parse(&format!("http://h.example:8080{pq}"));
            prop_assert_eq!(site.url(&pq).ok(), whole.ok());
        }
    }
}
