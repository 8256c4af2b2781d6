//! Host trust: with an allow-list of hosts, links, redirects and mails are built
//! only from allowed origins, whatever `Host`, `X-Forwarded-Host` and `X-Forwarded-Proto`
//! a request forges: a magic link, an OAuth `redirect_uri` and a sign-in redirect are
//! checked for every case, with and without `trust_host`.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::MemoryAdapter;
use authcore::providers::catalog::{GitHubOptions, github};
use authcore::providers::email::{EmailProvider, VerificationRequest};
use authcore::{Auth, AuthConfig, ConfigError};

type Outbox = Arc<Mutex<Vec<VerificationRequest>>>;

const ALLOWED: [&str; 3] = ["app.example.com", "*.example.org", "dev.example.net:3000"];

fn auth(trust_host: bool) -> (Auth, Outbox) {
    let outbox = Outbox::default();
    let sent = outbox.clone();
    let email = EmailProvider::new("a@example.com").send_verification_request(move |r| {
        let sent = sent.clone();
        async move {
            sent.lock().unwrap().push(r);
            Ok(())
        }
    });
    let config = AuthConfig::builder()
        .secret(SECRET)
        .allowed_hosts(ALLOWED)
        .trust_host(trust_host)
        .provider(credentials())
        .provider(email)
        .provider(
            github(GitHubOptions::default())
                .client_id("id")
                .client_secret("secret"),
        )
        .adapter(MemoryAdapter::new())
        // JWT sessions: the credentials flow is one of the three checked.
        .session_strategy(authcore::SessionStrategy::Jwt)
        .build()
        .unwrap();
    (Auth::new(config), outbox)
}

/// A request as a server hands it over: origin-form URI, the headers of `case`.
fn request(
    path: &str,
    headers: &[(&str, &str)],
    body: &[(&str, &str)],
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    // The CSRF cookie under its https and its http name: the request's scheme picks one.
    let (csrf, token) = csrf_pair();
    let plain = csrf.replacen(CSRF_COOKIE, "authjs.csrf-token", 1);
    let mut b = http::Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", format!("{csrf}; {plain}"));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let mut pairs = vec![("csrfToken", token.as_str())];
    pairs.extend_from_slice(body);
    b.body(form(&pairs)).unwrap()
}

/// The origin of an absolute URL.
fn origin(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    u.origin().ascii_serialization()
}

#[tokio::test]
async fn links_redirects_and_mails_use_only_allowed_origins() {
    // trust_host, headers, the origin every link must have (None: UntrustedHost / refused).
    type Case<'a> = (bool, &'a [(&'a str, &'a str)], Option<&'a str>);
    let cases: &[Case] = &[
        (
            false,
            &[("host", "app.example.com")],
            Some("http://app.example.com"),
        ),
        // A pattern without a port is the scheme's default port only.
        (false, &[("host", "APP.example.com:8443")], None),
        (false, &[("host", "app.example.com:9999")], None),
        (
            false,
            &[("host", "app.example.com:80")],
            Some("http://app.example.com"),
        ),
        (false, &[("host", "app.example.com:443")], None),
        (
            true,
            &[
                ("host", "internal:8080"),
                ("x-forwarded-host", "a.example.org:8443"),
                ("x-forwarded-proto", "https"),
            ],
            None,
        ),
        (
            false,
            &[("host", "dev.example.net:3000")],
            Some("http://dev.example.net:3000"),
        ),
        (false, &[("host", "dev.example.net")], None),
        (false, &[("host", "evil.example")], None),
        (false, &[("host", "app.example.com.evil.org")], None),
        (false, &[("host", "example.org")], None),
        (false, &[("host", "app.example.com@evil.example")], None),
        (false, &[("host", "evil.example/app.example.com")], None),
        // Without trust_host the forwarded headers are not read at all.
        (
            false,
            &[
                ("host", "app.example.com"),
                ("x-forwarded-host", "evil.example"),
                ("x-forwarded-proto", "https"),
            ],
            Some("http://app.example.com"),
        ),
        (
            false,
            &[
                ("host", "evil.example"),
                ("x-forwarded-host", "app.example.com"),
            ],
            None,
        ),
        // With it, the forwarded host must be on the list too.
        (
            true,
            &[
                ("host", "app.example.com"),
                ("x-forwarded-host", "evil.example"),
            ],
            None,
        ),
        (
            true,
            &[
                ("host", "internal:8080"),
                ("x-forwarded-host", "a.example.org"),
                ("x-forwarded-proto", "https"),
            ],
            Some("https://a.example.org"),
        ),
        (
            true,
            &[
                ("host", "app.example.com"),
                ("x-forwarded-host", "evil.example, app.example.com"),
            ],
            None,
        ),
        (
            true,
            &[
                ("host", "app.example.com"),
                ("x-forwarded-proto", "javascript"),
            ],
            None,
        ),
        (true, &[("host", "evil.example")], None),
    ];
    for (trust_host, headers, want) in cases {
        let context = format!("trust_host {trust_host}, {headers:?}");
        let (auth, outbox) = auth(*trust_host);

        let email = send(
            &auth,
            request(
                "/auth/signin/email",
                headers,
                &[("email", "victim@example.net")],
            ),
        )
        .await;
        let oauth = send(&auth, request("/auth/signin/github", headers, &[])).await;
        let credentials = send(
            &auth,
            request(
                "/auth/callback/credentials",
                headers,
                &[
                    ("username", "demo"),
                    ("password", "pw"),
                    ("callbackUrl", "/after"),
                ],
            ),
        )
        .await;
        let mails = outbox.lock().unwrap().clone();
        match want {
            Some(want) => {
                assert_eq!(
                    mails.len(),
                    1,
                    "{context}: {} {:?} {}",
                    email.status,
                    email.location(),
                    email.text()
                );
                assert_eq!(origin(&mails[0].url), *want, "magic link, {context}");
                assert_eq!(origin(email.location().unwrap()), *want, "{context}");
                let authorize = url::Url::parse(oauth.location().unwrap()).unwrap();
                let redirect_uri = authorize
                    .query_pairs()
                    .find(|(k, _)| k == "redirect_uri")
                    .unwrap()
                    .1
                    .into_owned();
                assert_eq!(
                    redirect_uri,
                    format!("{want}/auth/callback/github"),
                    "{context}"
                );
                assert_eq!(
                    credentials.location(),
                    Some(format!("{want}/after").as_str()),
                    "{context}"
                );
            }
            None => {
                assert!(mails.is_empty(), "no mail for a forged host, {context}");
                for r in [&email, &oauth, &credentials] {
                    assert!(
                        r.status.as_u16() >= 400,
                        "{context}: {} {:?}",
                        r.status,
                        r.location()
                    );
                    assert!(r.location().is_none(), "{context}");
                    assert!(!r.text().contains("evil"), "{context}");
                }
            }
        }
    }
}

/// The decision is kept per origin: one configuration answering allowed and forged hosts
/// in turn, each more than once (and spelt in another case), decides each the same way
/// every time.
#[tokio::test]
async fn trust_is_decided_per_origin_and_stays_so() {
    let (auth, _outbox) = auth(false);
    let hosts = [
        ("app.example.com", true),
        ("evil.example", false),
        ("APP.example.com", true),
        ("app.example.com.evil.org", false),
        ("localhost:3001", false),
    ];
    for round in 0..3 {
        for (host, trusted) in hosts {
            let r = send(
                &auth,
                request("/auth/signin/github", &[("host", host)], &[]),
            )
            .await;
            let context = format!("round {round}, host {host}");
            if trusted {
                let location = r
                    .location()
                    .unwrap_or_else(|| panic!("{context}: {}", r.text()));
                assert!(
                    location.contains("redirect_uri=http%3A%2F%2Fapp.example.com%2F"),
                    "{context}: {location}"
                );
            } else {
                assert!(r.status.as_u16() >= 400, "{context}: {}", r.status);
                assert!(r.location().is_none(), "{context}");
            }
        }
    }
}

#[test]
fn invalid_patterns_fail_the_build_with_the_pattern_named() {
    for bad in ["https://app.example.com", "*", "app.example.com/path"] {
        let err = AuthConfig::builder()
            .secret(SECRET)
            .allowed_hosts([bad])
            .provider(credentials())
            .build()
            .unwrap_err();
        assert!(
            matches!(err, ConfigError::InvalidAllowedHost { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(bad), "{err}");
    }
}
