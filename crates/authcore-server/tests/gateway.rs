//! The forward-auth gateway, driven in memory as a proxy would drive it: the original
//! request in nginx's or Caddy's headers, the user's cookies, and the decision with the
//! identity headers (the real proxies are in `gateway_proxies.rs`).
#![allow(clippy::unwrap_used)]

#[path = "support/in_memory.rs"]
mod in_memory;

use authcore_server::gateway::{FORWARD_AUTH_PATH, SIGN_IN_URL_HEADER};
use authcore_server::{DemoConfig, app};
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
fn gateway_app(extra: &str) -> (Router, std::path::PathBuf) {
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
    let config = DemoConfig::from_file(&path, authcore::env::Env::default()).unwrap();
    (app(config).unwrap(), dir)
}

/// A forward-auth sub-request for `url` as nginx (`X-Original-URL`) or Caddy
/// (`X-Forwarded-*`) sends it, with the browser's cookies.
async fn ask(
    app: &Router,
    url: &str,
    nginx: bool,
    jar: &mut CookieJar,
) -> axum::response::Response {
    let mut req =
        Request::get(format!("{ORIGIN}{FORWARD_AUTH_PATH}")).header(header::COOKIE, jar.header());
    if nginx {
        req = req
            .header("x-original-url", url)
            .header("x-original-method", "GET");
    } else {
        let u = url::Url::parse(url).unwrap();
        let host = match u.port() {
            Some(p) => format!("{}:{p}", u.host_str().unwrap()),
            None => u.host_str().unwrap().to_owned(),
        };
        let uri = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        };
        req = req
            .header("x-forwarded-method", "GET")
            .header("x-forwarded-proto", u.scheme())
            .header("x-forwarded-host", host)
            .header("x-forwarded-uri", uri);
    }
    send(app, req.body(Body::empty()).unwrap(), jar).await
}

fn header_of<'a>(res: &'a axum::response::Response, name: &str) -> Option<&'a str> {
    res.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn forward_auth_decisions_and_identity() {
    let (app, dir) = gateway_app("");
    let mut jar = CookieJar::default();

    // Not signed in: nginx gets 401 and the sign-in URL, Caddy a redirect to it.
    let res = ask(&app, "https://app1.example.test/page?x=1", true, &mut jar).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header_of(&res, SIGN_IN_URL_HEADER),
        Some(
            "http://localhost:3000/auth/signin?callbackUrl=https%3A%2F%2Fapp1.example.test%2Fpage%3Fx%3D1"
        )
    );
    let res = ask(&app, "https://app1.example.test/page", false, &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(
        header_of(&res, "location"),
        Some(
            "http://localhost:3000/auth/signin?callbackUrl=https%3A%2F%2Fapp1.example.test%2Fpage"
        )
    );
    // A bypass path is public.
    let res = ask(
        &app,
        "https://app1.example.test/public/app.css",
        true,
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

    // Signed in: allowed with the identity, for both conventions.
    for nginx in [true, false] {
        let res = ask(&app, "https://app2.example.test/", nginx, &mut jar).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(
            header_of(&res, "x-auth-request-email"),
            Some("demo@example.com")
        );
        assert_eq!(header_of(&res, "x-auth-request-name"), Some("Demo User"));
        assert_eq!(header_of(&res, "x-auth-request-user"), Some("1"));
        assert_eq!(
            header_of(&res, "x-auth-request-provider"),
            Some("credentials")
        );
        assert_eq!(header_of(&res, "cache-control"), Some("no-store"));
        // A session signed in just now is not re-issued on every check (once per
        // `updateAge`: `LookupOptions::refresh_jwt_after`).
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
        assert_eq!(claims["sub"], "1");
    }

    // Rules: not on the admins' list → 403 page offering sign-out; not in the domain → 403.
    for host in ["admin.example.test", "wiki.team.example.test"] {
        let res = ask(&app, &format!("https://{host}/"), true, &mut jar).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{host}");
        let page = text(res).await;
        assert!(
            page.contains("demo@example.com")
                && page.contains("http://localhost:3000/auth/signout")
        );
    }
    let res = get(&app, "/forward-auth/forbidden", &mut jar).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    // A forged or stale cookie is no session.
    let mut forged = CookieJar::default();
    forged.0.insert(
        "authjs.session-token".into(),
        "eyJhbGciOiJkaXIi.forged".into(),
    );
    let res = ask(&app, "https://app1.example.test/", true, &mut forged).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    // No original request: a clear 400.
    let res = get(&app, FORWARD_AUTH_PATH, &mut jar).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(text(res).await.contains("X-Original-URL"));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn callback_urls_stay_on_allowed_hosts() {
    let (app, dir) = gateway_app("");
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
        let err = DemoConfig::from_file(&path, authcore::env::Env::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
    // Without AUTH_URL the gateway cannot build sign-in URLs.
    std::fs::write(&path, "[gateway]\n").unwrap();
    let err = DemoConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs AUTH_URL"), "{err}");
    // Group and provider rules need JWT sessions.
    std::fs::write(
        &path,
        "[auth]\nurl = \"http://localhost:3000/auth\"\n[gateway]\n[[gateway.rules]]\nallow_groups = [\"admins\"]\n",
    )
    .unwrap();
    let err = DemoConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("need JWT sessions"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
