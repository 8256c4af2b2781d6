//! What a request's origin alone decides, worked out once per origin and shared by every
//! request to it: the parsed origin URL (so a request URL is its path joined to it, without
//! parsing and IDNA-mapping the host again), the origin string, the `GET /providers` body
//! and the built-in sign-in page (which depend on nothing else).
//!
//! The cache is keyed by the scheme and the host *as sent*; it holds at most
//! [`MAX_SITES`] entries and starts over when full, so hosts an attacker makes up (with
//! `trust_host`) cost them a cache miss each, never memory.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::Bytes;
use http::uri::{Authority, PathAndQuery, Scheme};

#[cfg(feature = "pages")]
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
    #[cfg(feature = "pages")]
    pub signin_page: OnceLock<Option<SplicedPage>>,
    /// Whether links may be built from this origin's host (the configuration's allow-list
    /// or `trust_host`), decided on first use: the cache belongs to one configuration, so
    /// the answer cannot change.
    pub host_trusted: OnceLock<bool>,
    /// The origin's scheme and authority as `http` parses them, parsed on first use
    /// (`None` when `http` refuses them): a request URL kept as sent becomes an
    /// [`http::Uri`] without parsing it again.
    uri_parts: OnceLock<Option<(Scheme, Authority)>>,
}

impl Site {
    fn new(base: url::Url) -> Self {
        let origin = origin_of(&base).into();
        Site {
            base,
            origin,
            providers_json: OnceLock::new(),
            #[cfg(feature = "pages")]
            signin_page: OnceLock::new(),
            host_trusted: OnceLock::new(),
            uri_parts: OnceLock::new(),
        }
    }

    fn uri_parts(&self) -> Option<&(Scheme, Authority)> {
        self.uri_parts
            .get_or_init(|| {
                let authority = &self.base[url::Position::BeforeHost..url::Position::AfterPort];
                Some((
                    Scheme::try_from(self.base.scheme()).ok()?,
                    Authority::try_from(authority).ok()?,
                ))
            })
            .as_ref()
    }

    /// The request URL for `path_and_query` (as the request line sent it) on this origin:
    /// what `Url::parse("<origin><path_and_query>")` gives. Kept as sent when the parser
    /// would leave it unchanged ([`is_kept_as_sent`]), so no `Url` is built for it;
    /// otherwise joined to the cached base (a path that starts with one `/`) or parsed whole.
    pub fn request_url(
        self: &Arc<Self>,
        path_and_query: PathAndQuery,
    ) -> Result<RequestUrl, url::ParseError> {
        let form = if is_kept_as_sent(path_and_query.as_str()) {
            UrlForm::AsSent(path_and_query)
        } else {
            UrlForm::Parsed(self.parse_url(path_and_query.as_str())?)
        };
        Ok(RequestUrl {
            site: Arc::clone(self),
            form,
        })
    }

    fn parse_url(&self, path_and_query: &str) -> Result<url::Url, url::ParseError> {
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

    /// `<origin>/`, parsed: the host, port and origin of every request to this site.
    pub fn base(&self) -> &url::Url {
        &self.base
    }
}

/// Whether the URL parser keeps `path_and_query` (starting with `/`) exactly as it is after
/// an http(s) origin: a path of bytes it neither escapes nor rewrites (no `\`, no segment
/// starting with `.` or `%`, which could be a dot segment) and a query of printable ASCII it
/// does not escape. Conservative: anything else is parsed, which gives the same URL.
fn is_kept_as_sent(path_and_query: &str) -> bool {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    let path = path.as_bytes();
    let query_kept =
        |b: u8| matches!(b, 0x21..=0x7e) && !matches!(b, b'"' | b'#' | b'<' | b'>' | b'\'');
    path.first() == Some(&b'/')
        && path.iter().all(|&b| PATH_KEPT[usize::from(b)])
        && !path
            .windows(2)
            .any(|w| w[0] == b'/' && matches!(w[1], b'.' | b'%'))
        && query.is_none_or(|q| q.bytes().all(query_kept))
}

/// Path bytes the URL parser leaves as they are (wherever a segment does not start with
/// them, for `.` and `%`): ASCII alphanumerics, `/` and `-._~!$&()*+,;=:@%`.
static PATH_KEPT: [bool; 256] = crate::byte_class::alphanumerics_and(b"/-._~!$&()*+,;=:@%");

/// A request's URL: its origin's [`Site`] and its path and query, as sent or parsed.
#[derive(Debug)]
pub(crate) struct RequestUrl {
    /// What the request's origin alone decides, shared with the other requests to it.
    pub site: Arc<Site>,
    form: UrlForm,
}

#[derive(Debug)]
enum UrlForm {
    /// The path and query as sent, which is what parsing would give.
    AsSent(PathAndQuery),
    /// The whole URL, parsed.
    Parsed(url::Url),
}

impl RequestUrl {
    /// The path, as `Url::path`.
    pub fn path(&self) -> &str {
        match &self.form {
            UrlForm::AsSent(pq) => pq.path(),
            UrlForm::Parsed(url) => url.path(),
        }
    }

    /// The query without `?`, as `Url::query`.
    pub fn query(&self) -> Option<&str> {
        match &self.form {
            UrlForm::AsSent(pq) => pq.query(),
            UrlForm::Parsed(url) => url.query(),
        }
    }

    /// Whether the origin is `https`.
    pub fn is_https(&self) -> bool {
        self.site.base.scheme() == "https"
    }

    /// The host and non-default port, as `url.host` serialises them.
    pub fn authority(&self) -> &str {
        &self.site.base[url::Position::BeforeHost..url::Position::AfterPort]
    }

    /// The whole URL, serialised as `Url::as_str`.
    pub fn to_str(&self) -> Cow<'_, str> {
        match &self.form {
            UrlForm::AsSent(pq) => {
                let mut s = String::with_capacity(self.site.origin.len() + pq.as_str().len());
                s.push_str(&self.site.origin);
                s.push_str(pq.as_str());
                Cow::Owned(s)
            }
            UrlForm::Parsed(url) => Cow::Borrowed(url.as_str()),
        }
    }

    /// The whole URL as an [`http::Uri`]: what parsing [`RequestUrl::to_str`] gives
    /// (`None` when `http` refuses it), built from the origin's parts for a URL kept as
    /// sent.
    pub fn to_uri(&self) -> Option<http::Uri> {
        if let (UrlForm::AsSent(pq), Some((scheme, authority))) =
            (&self.form, self.site.uri_parts())
        {
            let mut parts = http::uri::Parts::default();
            parts.scheme = Some(scheme.clone());
            parts.authority = Some(authority.clone());
            parts.path_and_query = Some(pq.clone());
            return http::Uri::from_parts(parts).ok();
        }
        self.to_str().parse().ok()
    }

    /// The URL without its query and fragment.
    pub fn without_query(&self) -> String {
        match &self.form {
            UrlForm::AsSent(pq) => format!("{}{}", self.site.origin, pq.path()),
            UrlForm::Parsed(url) => url[..url::Position::AfterPath].to_owned(),
        }
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

    /// `site`'s request URL for `pq` against `Url::parse` of the whole URL: the same path,
    /// query and serialisation, or both refused (`pq` as `http` accepts a request target;
    /// what it refuses never reaches authcore). Returns whether `pq` was kept as sent.
    fn assert_same_as_whole_parse(site: &Arc<Site>, pq: &str) -> Option<bool> {
        let sent = PathAndQuery::try_from(pq).ok()?;
        let whole = url::Url::parse(&format!("{}{}", site.origin, sent.as_str()));
        let ours = site.request_url(sent);
        let (whole, ours) = match (whole, ours) {
            (Ok(w), Ok(o)) => (w, o),
            (w, o) => {
                assert_eq!(w.is_ok(), o.is_ok(), "{} + {pq:?}", site.origin);
                return None;
            }
        };
        let ctx = format!("{} + {pq:?}", site.origin);
        assert_eq!(ours.path(), whole.path(), "{ctx}");
        assert_eq!(ours.query(), whole.query(), "{ctx}");
        assert_eq!(ours.to_str(), whole.as_str(), "{ctx}");
        assert_eq!(
            ours.without_query(),
            &whole[..url::Position::AfterPath],
            "{ctx}"
        );
        assert_eq!(ours.is_https(), whole.scheme() == "https", "{ctx}");
        assert_eq!(
            ours.to_uri(),
            whole.as_str().parse::<http::Uri>().ok(),
            "{ctx}"
        );
        assert_eq!(
            ours.authority(),
            &whole[url::Position::BeforeHost..url::Position::AfterPort],
            "{ctx}"
        );
        Some(matches!(ours.form, UrlForm::AsSent(_)))
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
                for (pq, kept) in [
                    ("/", true),
                    ("/auth/session", true),
                    ("/auth/callback/credentials", true),
                    ("/auth/signin?callbackUrl=%2Fa%3Fb&x=1", true),
                    ("/auth/a.b/c%41?", true),
                    ("//evil.example/auth/session", true),
                    ("/\\evil.example/x", false),
                    ("/auth/../auth/./csrf", false),
                    ("/auth/%2e%2E/csrf", false),
                    ("/auth/.%2e/csrf", false),
                    ("/a/.", false),
                    ("/a{b}/%zz?q=<>\"", false),
                    ("/a?q='x'", false),
                    ("/a?q=\u{e9}", false),
                    ("?q", false),
                    ("", false),
                ] {
                    // Only targets `http` refuses are skipped, and none meant to be kept.
                    match assert_same_as_whole_parse(&site, pq) {
                        Some(as_sent) => assert_eq!(as_sent, kept, "{https} {host} {pq:?}"),
                        None => assert!(!kept, "{https} {host} {pq:?} was not checked"),
                    }
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
        fn request_urls_match_a_whole_parse(
            pq in "/?[a-zA-Z0-9/\\\\.%?#&=:@ _'\"<>{}|^`~!$()*+,;\u{e9}-]{0,24}"
        ) {
            let site = Sites::default().get(false, "h.example:8080").unwrap();
            assert_same_as_whole_parse(&site, &pq);
        }
    }
}
