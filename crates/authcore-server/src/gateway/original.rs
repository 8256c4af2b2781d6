//! The request a proxy asks about, from the headers it sends with a forward-auth
//! sub-request: nginx `auth_request` (`X-Original-URL`, `X-Original-Method`), Caddy
//! `forward_auth` and Traefik `ForwardAuth` (`X-Forwarded-Method`, `-Proto`, `-Host`,
//! `-Uri`).

use axum::http::HeaderMap;

/// Which convention the proxy used: it decides how "sign in first" is answered (nginx's
/// `auth_request` only understands 2xx / 401 / 403; Caddy and Traefik pass a redirect on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyStyle {
    /// `X-Original-URL`.
    Nginx,
    /// `X-Forwarded-Host` + `X-Forwarded-Uri`.
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
    /// Path (percent-encoded as sent).
    pub path: String,
    /// The full URL.
    pub url: String,
    /// The convention of the headers.
    pub style: ProxyStyle,
}

/// Why the original request could not be read (a proxy misconfiguration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OriginalRequestError {
    /// Neither convention's headers are there.
    #[error(
        "no original request: the proxy must send X-Original-URL (nginx) or X-Forwarded-Host and X-Forwarded-Uri (Caddy, Traefik)"
    )]
    Missing,
    /// A header is there but unusable.
    #[error("{header} is not usable: {reason}")]
    Invalid {
        /// The header.
        header: &'static str,
        /// Why (never the whole value).
        reason: &'static str,
    },
}

fn header<'a>(
    h: &'a HeaderMap,
    name: &'static str,
) -> Result<Option<&'a str>, OriginalRequestError> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()))
            .map_err(|_| OriginalRequestError::Invalid {
                header: name,
                reason: "not visible ASCII",
            }),
    }
}

/// Reads the original request from a forward-auth sub-request's headers.
pub fn original_request(h: &HeaderMap) -> Result<OriginalRequest, OriginalRequestError> {
    if let Some(raw) = header(h, "x-original-url")? {
        let method = header(h, "x-original-method")?.unwrap_or("GET");
        return from_url(raw, method, ProxyStyle::Nginx, "X-Original-URL");
    }
    let (Some(host), Some(uri)) = (
        header(h, "x-forwarded-host")?,
        header(h, "x-forwarded-uri")?,
    ) else {
        return Err(OriginalRequestError::Missing);
    };
    let proto = header(h, "x-forwarded-proto")?.unwrap_or("https");
    let method = header(h, "x-forwarded-method")?.unwrap_or("GET");
    // A list (several proxies): the first is the client-facing one.
    let first = |v: &str| v.split(',').next().unwrap_or_default().trim().to_owned();
    if !uri.starts_with('/') {
        return Err(OriginalRequestError::Invalid {
            header: "X-Forwarded-Uri",
            reason: "must start with /",
        });
    }
    let url = format!("{}://{}{uri}", first(proto), first(host));
    from_url(&url, method, ProxyStyle::Forwarded, "X-Forwarded-Host")
}

fn from_url(
    raw: &str,
    method: &str,
    style: ProxyStyle,
    name: &'static str,
) -> Result<OriginalRequest, OriginalRequestError> {
    let invalid = |reason| OriginalRequestError::Invalid {
        header: name,
        reason,
    };
    let url = url::Url::parse(raw).map_err(|_| invalid("not an absolute URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("not http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("carries credentials"));
    }
    let hostname = url
        .host_str()
        .ok_or_else(|| invalid("has no host"))?
        .to_ascii_lowercase();
    let host = match url.port() {
        Some(port) => format!("{hostname}:{port}"),
        None => hostname.clone(),
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(OriginalRequestError::Invalid {
            header: "X-Original-Method / X-Forwarded-Method",
            reason: "not a method",
        });
    }
    Ok(OriginalRequest {
        method: method.to_ascii_uppercase(),
        scheme: url.scheme().to_owned(),
        host,
        hostname,
        path: url.path().to_owned(),
        url: url.to_string(),
        style,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn nginx_and_forwarded_conventions() {
        let r = original_request(&headers(&[
            ("x-original-url", "https://App.example.com/a/b?c=d"),
            ("x-original-method", "post"),
        ]))
        .unwrap();
        assert_eq!(
            (r.method.as_str(), r.host.as_str(), r.path.as_str(), r.style),
            ("POST", "app.example.com", "/a/b", ProxyStyle::Nginx)
        );
        assert_eq!(r.url, "https://app.example.com/a/b?c=d");
        let r = original_request(&headers(&[
            ("x-forwarded-method", "GET"),
            ("x-forwarded-proto", "http"),
            ("x-forwarded-host", "wiki.example.com:8080, inner"),
            ("x-forwarded-uri", "/page?x=1"),
        ]))
        .unwrap();
        assert_eq!(
            (
                r.host.as_str(),
                r.hostname.as_str(),
                r.url.as_str(),
                r.style
            ),
            (
                "wiki.example.com:8080",
                "wiki.example.com",
                "http://wiki.example.com:8080/page?x=1",
                ProxyStyle::Forwarded
            )
        );
    }

    #[test]
    fn unusable_headers_are_errors() {
        for (pairs, want) in [
            (vec![], "no original request"),
            (
                vec![("x-forwarded-host", "a.example.com")],
                "no original request",
            ),
            (
                vec![("x-original-url", "/relative")],
                "X-Original-URL is not usable",
            ),
            (vec![("x-original-url", "ftp://a/b")], "not http or https"),
            (
                vec![("x-original-url", "https://u:p@a/b")],
                "carries credentials",
            ),
            (
                vec![
                    ("x-original-url", "https://a/b"),
                    ("x-original-method", "G T"),
                ],
                "not a method",
            ),
            (
                vec![("x-forwarded-host", "a"), ("x-forwarded-uri", "b")],
                "must start with /",
            ),
            (
                vec![("x-forwarded-host", "a b"), ("x-forwarded-uri", "/")],
                "not an absolute URL",
            ),
        ] {
            let err = original_request(&headers(&pairs)).unwrap_err().to_string();
            assert!(err.contains(want), "{pairs:?}: {err}");
        }
    }
}
