//! The request a proxy asks about, read from the headers that proxy sets and overwrites on
//! its forward-auth sub-request, and from nothing else. Each proxy has its own endpoint and
//! so its own [`Convention`]: a client can send the other convention's headers (Caddy and
//! Traefik copy the client's headers onto the sub-request), and they are never read.
//!
//! - nginx `auth_request`: `X-Original-URL` and `X-Original-Method`, set in the guide's
//!   `location` block (`proxy_set_header` replaces what the client sent).
//! - Caddy `forward_auth`, Traefik `ForwardAuth`: `X-Forwarded-Method`, `-Proto`, `-Host`,
//!   `-Uri`, which both set on every sub-request (Caddy from the request it received,
//!   Traefik unless told to trust the client's).
//!
//! A header given twice, a list where one value is meant, a URL with credentials or an
//! ambiguous path ([`path`](super::path)) is refused, never guessed at.

use axum::http::uri::{Authority, PathAndQuery};
use axum::http::{HeaderMap, Uri};

use super::path::{PathRefusal, judged_path};

/// Which headers a forward-auth endpoint reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// nginx `auth_request`: `X-Original-URL` (+ `X-Original-Method`).
    Nginx,
    /// Caddy `forward_auth`, Traefik `ForwardAuth`: `X-Forwarded-Method`, `-Proto`,
    /// `-Host`, `-Uri`.
    Forwarded,
}

/// The original request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginalRequest {
    /// `GET`, `POST` … (upper case).
    pub method: String,
    /// `https` or `http`.
    pub scheme: String,
    /// Host, lower case, with a port when not the scheme's default.
    pub host: String,
    /// Host without port.
    pub hostname: String,
    /// The path the rules judge ([`judged_path`]).
    pub path: String,
    /// The full URL, as sent (the `callbackUrl` of a sign-in).
    pub url: String,
}

/// Why the original request could not be read: a proxy misconfiguration, or a request
/// the gateway refuses to judge. The answer is `400`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OriginalRequestError {
    /// A header the convention needs is not there.
    #[error("{header} is missing: the proxy must set it (docs/gateway.md has the configuration)")]
    Missing {
        /// The header.
        header: &'static str,
    },
    /// A header is there but unusable.
    #[error("{header} is not usable: {reason}")]
    Invalid {
        /// The header.
        header: &'static str,
        /// Why (never the value).
        reason: &'static str,
    },
    /// The path is refused.
    #[error("the path is refused: {0}")]
    Path(#[from] PathRefusal),
}

/// The one value of `name`; two or more are refused (which one a proxy overwrote is not
/// known).
fn single<'a>(
    h: &'a HeaderMap,
    name: &'static str,
) -> Result<Option<&'a str>, OriginalRequestError> {
    let mut values = h.get_all(name).iter();
    let Some(v) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(OriginalRequestError::Invalid {
            header: name,
            reason: "given more than once",
        });
    }
    v.to_str()
        .map(|s| Some(s.trim()))
        .map_err(|_| OriginalRequestError::Invalid {
            header: name,
            reason: "not visible ASCII",
        })
}

fn required<'a>(h: &'a HeaderMap, name: &'static str) -> Result<&'a str, OriginalRequestError> {
    single(h, name)?.ok_or(OriginalRequestError::Missing { header: name })
}

/// [`required`], and not a list (`a, b`: which entry a proxy chain appended is not known).
fn required_one<'a>(h: &'a HeaderMap, name: &'static str) -> Result<&'a str, OriginalRequestError> {
    let v = required(h, name)?;
    if v.contains(',') {
        return Err(OriginalRequestError::Invalid {
            header: name,
            reason: "a list where one value is meant",
        });
    }
    Ok(v)
}

/// Reads the original request from a forward-auth sub-request's headers, by `convention`
/// only.
pub fn original_request(
    h: &HeaderMap,
    convention: Convention,
) -> Result<OriginalRequest, OriginalRequestError> {
    let invalid = |header, reason| OriginalRequestError::Invalid { header, reason };
    match convention {
        Convention::Nginx => {
            const URL: &str = "x-original-url";
            const METHOD: &str = "x-original-method";
            let uri: Uri = required(h, URL)?
                .parse()
                .map_err(|_| invalid(URL, "not an absolute URL"))?;
            let (Some(scheme), Some(authority), Some(target)) =
                (uri.scheme_str(), uri.authority(), uri.path_and_query())
            else {
                return Err(invalid(URL, "not an absolute URL"));
            };
            let method = (single(h, METHOD)?.unwrap_or("GET"), METHOD);
            build((scheme, URL), (authority, URL), target, method)
        }
        Convention::Forwarded => {
            const HOST: &str = "x-forwarded-host";
            const METHOD: &str = "x-forwarded-method";
            const PROTO: &str = "x-forwarded-proto";
            let proto = required_one(h, PROTO)?;
            let authority: Authority = required_one(h, HOST)?
                .parse()
                .map_err(|_| invalid(HOST, "not a host"))?;
            let target: PathAndQuery = required(h, "x-forwarded-uri")?
                .parse()
                .map_err(|_| invalid("x-forwarded-uri", "not a path"))?;
            let method = (single(h, METHOD)?.unwrap_or("GET"), METHOD);
            build((proto, PROTO), (&authority, HOST), &target, method)
        }
    }
}

/// The original request from its parts, each with the header it was read from (for the
/// error).
fn build(
    (scheme, scheme_header): (&str, &'static str),
    (authority, header): (&Authority, &'static str),
    target: &PathAndQuery,
    (method, method_header): (&str, &'static str),
) -> Result<OriginalRequest, OriginalRequestError> {
    let invalid = |reason| OriginalRequestError::Invalid { header, reason };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => {
            return Err(OriginalRequestError::Invalid {
                header: scheme_header,
                reason: "not http or https",
            });
        }
    };
    if authority.as_str().contains('@') {
        return Err(invalid("carries credentials"));
    }
    let hostname = authority.host().to_ascii_lowercase();
    if hostname.is_empty() {
        return Err(invalid("has no host"));
    }
    let host = match authority.port_u16() {
        Some(port) if port != default_port => format!("{hostname}:{port}"),
        _ => hostname.clone(),
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(OriginalRequestError::Invalid {
            header: method_header,
            reason: "not a method",
        });
    }
    let path = judged_path(target.path())?;
    Ok(OriginalRequest {
        method: method.to_ascii_uppercase(),
        url: format!("{scheme}://{host}{target}"),
        scheme,
        host,
        hostname,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    const FORWARDED: [(&str, &str); 4] = [
        ("x-forwarded-method", "GET"),
        ("x-forwarded-proto", "http"),
        ("x-forwarded-host", "wiki.example.com:8080"),
        ("x-forwarded-uri", "/page?x=1"),
    ];

    #[test]
    fn each_convention_reads_its_own_headers() {
        let r = original_request(
            &headers(&[
                ("x-original-url", "https://App.example.com:443/a/b?c=d"),
                ("x-original-method", "post"),
            ]),
            Convention::Nginx,
        )
        .unwrap();
        assert_eq!(
            (r.method.as_str(), r.host.as_str(), r.path.as_str()),
            ("POST", "app.example.com", "/a/b")
        );
        assert_eq!(r.url, "https://app.example.com/a/b?c=d");
        let r = original_request(&headers(&FORWARDED), Convention::Forwarded).unwrap();
        assert_eq!(
            (r.host.as_str(), r.hostname.as_str(), r.url.as_str()),
            (
                "wiki.example.com:8080",
                "wiki.example.com",
                "http://wiki.example.com:8080/page?x=1",
            )
        );
    }

    /// The other convention's headers, sent by a client, change nothing.
    #[test]
    fn the_other_conventions_headers_are_not_read() {
        let mut with_forged: Vec<(&'static str, &str)> = FORWARDED.to_vec();
        with_forged.push(("x-original-url", "http://wiki.example.com:8080/public/x"));
        let r = original_request(&headers(&with_forged), Convention::Forwarded).unwrap();
        assert_eq!(r.path, "/page");
        let err = original_request(&headers(&FORWARDED), Convention::Nginx).unwrap_err();
        assert_eq!(
            err,
            OriginalRequestError::Missing {
                header: "x-original-url"
            }
        );
        let r = original_request(
            &headers(&[
                ("x-original-url", "https://a.example.com/secret"),
                ("x-forwarded-host", "b.example.com"),
                ("x-forwarded-uri", "/public/x"),
            ]),
            Convention::Nginx,
        )
        .unwrap();
        assert_eq!(
            (r.hostname.as_str(), r.path.as_str()),
            ("a.example.com", "/secret")
        );
    }

    #[test]
    fn unusable_headers_are_errors() {
        let nginx = |url: &'static str| vec![("x-original-url", url)];
        let forwarded = |replace: (&'static str, &'static str)| {
            FORWARDED
                .iter()
                .map(|&(k, v)| if k == replace.0 { replace } else { (k, v) })
                .collect::<Vec<_>>()
        };
        let mut twice = nginx("https://a/b");
        twice.push(("x-original-url", "https://a/public/"));
        let mut host_twice = forwarded(("x-forwarded-host", "a"));
        host_twice.push(("x-forwarded-host", "b"));
        for (convention, pairs, want) in [
            (Convention::Nginx, vec![], "x-original-url is missing"),
            (Convention::Nginx, nginx("/relative"), "not an absolute URL"),
            (Convention::Nginx, nginx("ftp://a/b"), "not http or https"),
            (
                Convention::Nginx,
                nginx("https://u:p@a/b"),
                "carries credentials",
            ),
            (
                Convention::Nginx,
                nginx("https://a/public/..%2fsecret"),
                "dot segment",
            ),
            (Convention::Nginx, nginx("https://a/public/%252e"), "twice"),
            (Convention::Nginx, twice, "given more than once"),
            (
                Convention::Nginx,
                vec![
                    ("x-original-url", "https://a/b"),
                    ("x-original-method", "G T"),
                ],
                "not a method",
            ),
            (
                Convention::Forwarded,
                vec![],
                "x-forwarded-proto is missing",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-uri", "b")),
                "not a path",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-uri", "*")),
                "does not start with /",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-host", "a b")),
                "not a host",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-host", "a, b")),
                "a list",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-proto", "https, http")),
                "a list",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-proto", "gopher")),
                "not http or https",
            ),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-host", "u@a")),
                "credentials",
            ),
            (Convention::Forwarded, host_twice, "given more than once"),
            (
                Convention::Forwarded,
                forwarded(("x-forwarded-uri", "/public/..;/secret")),
                "dot segment",
            ),
        ] {
            let err = original_request(&headers(&pairs), convention)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{pairs:?}: {err}");
        }
    }
}
