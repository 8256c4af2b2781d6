//! The forward-auth gateway, driven in memory as a proxy would drive it: the original
//! request in nginx's or Caddy's headers, the user's cookies, and the decision with the
//! identity headers (the real proxies are in `gateway_proxies.rs`).
#![allow(clippy::unwrap_used)]

use crate::support::in_memory;

use authcore_gateway::{CADDY_PATH, FORWARD_AUTH_PATH, NGINX_ANSWER_PATH, NGINX_PATH};
use authcore_server::ServerConfig;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use in_memory::*;
use serde_json::Value;

const CONFIG: &str = r#"
[server]
database_url = "none"

[auth]
secret = "a gateway test secret, long and random enough"
url = "http://localhost:3000/auth"

[gateway]
cookie_domain = ".example.test"
allowed_redirect_hosts = ["*.example.test"]
default = "signed_in"
signing_keys = ["KEY"]

[[gateway.rules]]
name = "public assets"
path = "/public/"
policy = "bypass"

[[gateway.rules]]
name = "admins"
hosts = ["admin.example.test"]
allow_emails = ["root@example.test"]

[[gateway.rules]]
name = "team"
hosts = ["*.team.example.test"]
allow_domains = ["partner.example"]
"#;

/// The demo with the gateway of [`CONFIG`] and a fresh Ed25519 signing key.
async fn gateway_app(extra: &str) -> (Router, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "authcore-gateway-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key.pem");
    let status = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(status.success());
    let path = dir.join("authcore.toml");
    let text = CONFIG.replace("KEY", key.to_str().unwrap()) + extra;
    std::fs::write(&path, text).unwrap();
    let config = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap();
    (config.build().await.unwrap().router(), dir)
}

/// Which endpoint a sub-request goes to, with that proxy's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// nginx `auth_request` (`X-Original-URL`), answered by status only.
    Nginx,
    /// nginx's error page for that answer (`error_page 401 403`).
    NginxAnswer,
    /// Caddy `forward_auth` (`X-Forwarded-*`).
    Caddy,
}

/// A forward-auth sub-request for `url` as the proxy sends it, with the browser's cookies
/// and `extra` client headers (a browser navigation's `Accept` unless `extra` has one).
pub(crate) fn sub_request(
    url: &str,
    via: Via,
    jar: &CookieJar,
    extra: &[(&str, &str)],
) -> Request<Body> {
    let path = match via {
        Via::Nginx => NGINX_PATH,
        Via::NginxAnswer => NGINX_ANSWER_PATH,
        Via::Caddy => CADDY_PATH,
    };
    let mut req = Request::get(format!("{ORIGIN}{path}")).header(header::COOKIE, jar.header());
    if !extra.iter().any(|(k, _)| k.eq_ignore_ascii_case("accept")) {
        req = req.header(header::ACCEPT, "text/html,application/xhtml+xml");
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    if via == Via::Caddy {
        let (scheme, rest) = url.split_once("://").unwrap();
        let (host, uri) = rest.split_at(rest.find('/').unwrap());
        req.header("x-forwarded-method", "GET")
            .header("x-forwarded-proto", scheme)
            .header("x-forwarded-host", host)
            .header("x-forwarded-uri", uri)
    } else {
        req.header("x-original-url", url)
            .header("x-original-method", "GET")
    }
    .body(Body::empty())
    .unwrap()
}

pub(crate) async fn ask(
    app: &Router,
    url: &str,
    via: Via,
    jar: &mut CookieJar,
) -> axum::response::Response {
    let req = sub_request(url, via, jar, &[]);
    send(app, req, jar).await
}

pub(crate) fn header_of<'a>(res: &'a axum::response::Response, name: &str) -> Option<&'a str> {
    res.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn forward_auth_decisions_and_identity() {
    let (app, dir) = gateway_app("").await;
    let mut jar = CookieJar::default();

    // Not signed in: nginx's auth_request gets 401, its error page and Caddy a redirect to
    // the sign-in page.
    let res = ask(
        &app,
        "https://app1.example.test/page?x=1",
        Via::Nginx,
        &mut jar,
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header_of(&res, "location"), None);
    for via in [Via::NginxAnswer, Via::Caddy] {
        let res = ask(&app, "https://app1.example.test/page?x=1", via, &mut jar).await;
        assert_eq!(res.status(), StatusCode::FOUND, "{via:?}");
        assert_eq!(
            header_of(&res, "location"),
            Some(
                "http://localhost:3000/auth/signin?callbackUrl=https%3A%2F%2Fapp1.example.test%2Fpage%3Fx%3D1"
            ),
            "{via:?}"
        );
    }
    // A bypass path is public.
    let res = ask(
        &app,
        "https://app1.example.test/public/app.css",
        Via::Nginx,
        &mut jar,
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    // Every identity header, empty: a proxy copying them replaces what a client sent.
    assert_eq!(header_of(&res, "x-auth-request-email"), Some(""));
    assert_eq!(header_of(&res, "x-auth-request-jwt"), Some(""));

    // Sign in (the demo user, demo@example.com); the session cookie is for every subdomain.
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let session_cookie = res
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|c| c.starts_with("authjs.session-token="))
        .unwrap()
        .to_owned();
    assert!(
        session_cookie.contains("Domain=.example.test"),
        "{session_cookie}"
    );

    // Signed in: allowed with the identity, for both conventions. Without a database the
    // user id is `<provider>:<providerAccountId>`.
    for via in [Via::Nginx, Via::Caddy] {
        let res = ask(&app, "https://app2.example.test/", via, &mut jar).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(
            header_of(&res, "x-auth-request-email"),
            Some("demo@example.com")
        );
        assert_eq!(header_of(&res, "x-auth-request-name"), Some("Demo User"));
        assert_eq!(
            header_of(&res, "x-auth-request-user"),
            Some("credentials:1")
        );
        assert_eq!(
            header_of(&res, "x-auth-request-provider"),
            Some("credentials")
        );
        assert_eq!(header_of(&res, "cache-control"), Some("no-store"));
        // A session signed in just now is not re-issued on every check (once per
        // `updateAge`: `ReadOptions::refresh_jwt_after`).
        assert!(res.headers().get(header::SET_COOKIE).is_none());
        // The signed identity verifies with the published keys, for this upstream.
        let jwt = header_of(&res, "x-auth-request-jwt").unwrap().to_owned();
        let jwks = text(get(&app, "/.well-known/jwks.json", &mut jar).await).await;
        let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_str(&jwks).unwrap();
        let kid = jsonwebtoken::decode_header(&jwt).unwrap().kid.unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
        validation.set_audience(&["https://app2.example.test"]);
        validation.set_issuer(&["http://localhost:3000/auth"]);
        let claims = jsonwebtoken::decode::<Value>(
            &jwt,
            &jsonwebtoken::DecodingKey::from_jwk(jwks.find(&kid).unwrap()).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["email"], "demo@example.com");
        assert_eq!(claims["sub"], "credentials:1");
    }
    // The same subject at the next sign-in.
    let mut again = CookieJar::default();
    sign_in(&app, &mut again, "demo", "authcore-demo").await;
    let res = ask(&app, "https://app2.example.test/", Via::Caddy, &mut again).await;
    assert_eq!(
        header_of(&res, "x-auth-request-user"),
        Some("credentials:1")
    );

    // Rules: not on the admins' list → 403 page offering sign-out; not in the domain → 403.
    for host in ["admin.example.test", "wiki.team.example.test"] {
        let url = format!("https://{host}/");
        let res = ask(&app, &url, Via::Nginx, &mut jar).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{host}");
        for via in [Via::NginxAnswer, Via::Caddy] {
            let res = ask(&app, &url, via, &mut jar).await;
            assert_eq!(res.status(), StatusCode::FORBIDDEN, "{host}");
            let page = text(res).await;
            assert!(
                page.contains("demo@example.com")
                    && page.contains("http://localhost:3000/auth/signout")
            );
        }
    }

    // A forged or stale cookie is no session.
    let mut forged = CookieJar::default();
    forged.0.insert(
        "authjs.session-token".into(),
        "eyJhbGciOiJkaXIi.forged".into(),
    );
    let res = ask(&app, "https://app1.example.test/", Via::Nginx, &mut forged).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    // No original request: a clear 400 naming the header the proxy must set.
    let res = get(&app, CADDY_PATH, &mut jar).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(text(res).await.contains("x-forwarded-proto is missing"));
    // The retired endpoint says where to go, whatever it is sent.
    let req = sub_request("https://app1.example.test/public/x", Via::Nginx, &jar, &[]);
    let req = {
        let (mut parts, body) = req.into_parts();
        parts.uri = format!("{ORIGIN}{FORWARD_AUTH_PATH}").parse().unwrap();
        Request::from_parts(parts, body)
    };
    let res = send(&app, req, &mut jar).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body = text(res).await;
    assert!(
        body.contains("/forward-auth/nginx") && body.contains("/forward-auth/caddy"),
        "{body}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// API calls get 401 with the sign-in URL in JSON, page navigations the redirect; a rule
/// can force either.
#[tokio::test]
async fn api_calls_get_401_and_rules_can_force_the_answer() {
    let (app, dir) = gateway_app(
        "[[gateway.rules]]\nhosts = [\"api.example.test\"]\npolicy = \"signed_in\"\nunauthenticated = \"unauthorized\"\n\
         [[gateway.rules]]\nhosts = [\"old.example.test\"]\npolicy = \"signed_in\"\nunauthenticated = \"redirect\"\n",
    ).await;
    let mut jar = CookieJar::default();
    let navigation: &[(&str, &str)] = &[("sec-fetch-mode", "navigate"), ("accept", "text/html")];
    let fetch: &[(&str, &str)] = &[("sec-fetch-mode", "cors"), ("accept", "*/*")];
    for (host, headers, want) in [
        ("app1", navigation, 302),
        ("app1", &[][..], 302),
        ("app1", fetch, 401),
        ("app1", &[("accept", "application/json")][..], 401),
        ("app1", &[("accept", "*/*")][..], 401),
        ("app1", &[("x-requested-with", "XMLHttpRequest")][..], 401),
        (
            "app1",
            &[("sec-fetch-mode", "no-cors"), ("accept", "text/html")][..],
            401,
        ),
        ("app1", &[("accept", "TEXT/HTML;q=0.9")][..], 302),
        ("api", navigation, 401),
        ("old", fetch, 302),
    ] {
        let url = format!("https://{host}.example.test/x?y=1");
        for via in [Via::NginxAnswer, Via::Caddy] {
            let res = send(&app, sub_request(&url, via, &jar, headers), &mut jar).await;
            assert_eq!(res.status().as_u16(), want, "{host} {headers:?} {via:?}");
            let sign_in = format!(
                "http://localhost:3000/auth/signin?callbackUrl={}",
                form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>()
            );
            if want == 401 {
                assert_eq!(header_of(&res, "content-type"), Some("application/json"));
                let body: Value = serde_json::from_str(&text(res).await).unwrap();
                assert_eq!(
                    body,
                    serde_json::json!({"error": "SessionRequired", "url": sign_in})
                );
            } else {
                assert_eq!(header_of(&res, "location"), Some(sign_in.as_str()));
            }
        }
        // nginx's auth_request only learns "sign in first".
        let res = send(&app, sub_request(&url, Via::Nginx, &jar, headers), &mut jar).await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The attacks on the endpoints themselves, without a proxy in front: each is refused or
/// judged by the proxy's own headers, never let through to a protected path.
#[tokio::test]
async fn client_steering_and_bad_input_are_refused() {
    let (app, dir) = gateway_app("").await;
    let mut jar = CookieJar::default();
    let protected = "https://app1.example.test/secret";
    // A client's X-Original-URL on Caddy's endpoint (Caddy passes it on) is not read.
    let steer: &[(&str, &str)] = &[
        ("x-original-url", "https://app1.example.test/public/x"),
        ("X-Original-Url", "https://app1.example.test/public/x"),
        ("x-original-method", "GET"),
        ("x-http-method-override", "GET"),
    ];
    let res = send(
        &app,
        sub_request(protected, Via::Caddy, &jar, steer),
        &mut jar,
    )
    .await;
    assert_eq!(res.status(), StatusCode::FOUND);
    // …and a client's X-Forwarded-* on nginx's endpoint are not either.
    let steer: &[(&str, &str)] = &[
        ("x-forwarded-host", "app1.example.test"),
        ("x-forwarded-uri", "/public/x"),
        ("x-forwarded-proto", "https"),
    ];
    let res = send(
        &app,
        sub_request(protected, Via::Nginx, &jar, steer),
        &mut jar,
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // Two values of a header the endpoint reads: refused, not guessed.
    let twice: &[(&str, &str)] = &[("x-forwarded-uri", "/public/x")];
    let res = send(
        &app,
        sub_request(protected, Via::Caddy, &jar, twice),
        &mut jar,
    )
    .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);

    // Path confusion: refused (400; 403 to nginx's auth_request, whose error page says 400).
    for path in [
        "/public/..%2fsecret",
        "/public/%2E%2E%2Fsecret",
        "/public//../secret",
        "/public/..;/secret",
        "/public/%252e%252e/secret",
        "/public/%2e%2e%5csecret",
        "/public/%00/../secret",
        "/public/..%c0%af",
    ] {
        let url = format!("https://app1.example.test{path}");
        let res = send(&app, sub_request(&url, Via::Caddy, &jar, &[]), &mut jar).await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
        let res = send(&app, sub_request(&url, Via::Nginx, &jar, &[]), &mut jar).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path}");
        let res = send(
            &app,
            sub_request(&url, Via::NginxAnswer, &jar, &[]),
            &mut jar,
        )
        .await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
    }

    // An oversize Cookie header: 431, not 500.
    let mut big = CookieJar::default();
    big.0.insert("filler".into(), "x".repeat(70 * 1024));
    for (via, want) in [
        (Via::Caddy, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
        (Via::Nginx, StatusCode::FORBIDDEN),
        (
            Via::NginxAnswer,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        ),
    ] {
        let res = send(&app, sub_request(protected, via, &big, &[]), &mut big).await;
        assert_eq!(res.status(), want, "{via:?}");
    }
    // A long URL (16 KiB, a Grafana Explore link) gets its sign-in redirect.
    let long = format!("{protected}?left={}", "%7B%22q%22%3A1%7D".repeat(1000));
    let res = send(&app, sub_request(&long, Via::Caddy, &jar, &[]), &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(header_of(&res, "location").unwrap().len() > 16_000);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn callback_urls_stay_on_allowed_hosts() {
    let (app, dir) = gateway_app("").await;
    for (callback, want) in [
        (
            "https://app1.example.test/after",
            "https://app1.example.test/after",
        ),
        (
            "https://deep.team.example.test/x",
            "https://deep.team.example.test/x",
        ),
        ("https://evil.example.com/steal", "http://localhost:3000"),
        ("https://example.test.evil.com/", "http://localhost:3000"),
        (
            "https://user:pw@app1.example.test/",
            "http://localhost:3000",
        ),
        ("/local", "http://localhost:3000/local"),
    ] {
        let mut jar = CookieJar::default();
        let res = get(&app, "/auth/csrf", &mut jar).await;
        let csrf: Value = serde_json::from_str(&text(res).await).unwrap();
        let body = format!(
            "csrfToken={}&username=demo&password=authcore-demo&callbackUrl={}",
            encode(csrf["csrfToken"].as_str().unwrap()),
            encode(callback)
        );
        let req = Request::post(format!("{ORIGIN}/auth/callback/credentials"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, jar.header())
            .body(Body::from(body))
            .unwrap();
        let res = send(&app, req, &mut jar).await;
        assert_eq!(header_of(&res, "location"), Some(want), "{callback}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn bad_gateway_configurations_are_refused_with_the_rule_named() {
    let dir = std::env::temp_dir().join(format!("authcore-gateway-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("authcore.toml");
    let base = "[server]\ndatabase_url = \"none\"\n[auth]\nurl = \"http://localhost:3000/auth\"\n";
    for (text, want) in [
        (
            "[gateway]\n[[gateway.rules]]\nname = \"oops\"\nhosts = [\"a.example\"]\n",
            "[[gateway.rules]] number 1 (\"oops\"): give a policy",
        ),
        (
            "[gateway]\n[[gateway.rules]]\npolicy = \"allow\"\n",
            "[[gateway.rules]] number 1: `allow` needs at least one allow_* list",
        ),
        (
            "[gateway]\ncookie_domain = \"com\"\n",
            "cookie_domain \"com\" is not a domain",
        ),
        (
            "[gateway]\nsigning_keys = [\"/nonexistent/key.pem\"]\n",
            "signing key /nonexistent/key.pem",
        ),
        (
            "[gateway]\n[gateway.headers]\nemail = \"bad header\"\n",
            "[gateway.headers] email",
        ),
        ("[gateway]\nbogus = 1\n", "bogus"),
    ] {
        std::fs::write(&path, format!("{base}{text}")).unwrap();
        let err = ServerConfig::from_file(&path, authcore::env::Env::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
    // Without AUTH_URL the gateway cannot build sign-in URLs.
    std::fs::write(&path, "[gateway]\n").unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs AUTH_URL"), "{err}");
    // Provider rules need JWT sessions (groups are kept with the stored user).
    std::fs::write(
        &path,
        "[auth]\nurl = \"http://localhost:3000/auth\"\n[gateway]\n[[gateway.rules]]\nallow_providers = [\"github\"]\n",
    )
    .unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("need JWT sessions"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// With a database, the user id is the stored user's, the same at every sign-in.
#[tokio::test]
async fn with_a_database_the_user_id_is_the_stored_users() {
    let (_, dir) = gateway_app("").await;
    let db = dir.join("gateway.db");
    let _ = std::fs::remove_file(&db);
    let text = std::fs::read_to_string(dir.join("authcore.toml"))
        .unwrap()
        .replace(
            "database_url = \"none\"",
            &format!("database_url = \"sqlite://{}?mode=rwc\"", db.display()),
        );
    let path = dir.join("authcore-db.toml");
    std::fs::write(&path, text).unwrap();
    let config = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap();
    let app = config.build().await.unwrap().router();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let mut jar = CookieJar::default();
        assert_eq!(
            sign_in(&app, &mut jar, "demo", "authcore-demo")
                .await
                .status(),
            StatusCode::FOUND
        );
        let res = ask(&app, "https://app2.example.test/", Via::Caddy, &mut jar).await;
        assert_eq!(res.status(), StatusCode::OK);
        ids.push(header_of(&res, "x-auth-request-user").unwrap().to_owned());
    }
    assert_eq!(ids[0], ids[1]);
    assert!(!ids[0].is_empty() && !ids[0].contains(':'), "{ids:?}");
    let _ = std::fs::remove_dir_all(dir);
}
