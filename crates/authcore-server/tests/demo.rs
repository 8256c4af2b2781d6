//! The demo app, driven in memory.
#![allow(clippy::unwrap_used)]

use crate::support;
use crate::support::in_memory;
use crate::support::mysql;
use crate::support::pg;

use authcore_server::ServerConfig;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use in_memory::*;
use serde_json::Value;

#[tokio::test]
async fn home_page_anonymous() {
    let app = demo().await;
    let mut jar = CookieJar::default();
    let res = get(&app, "/", &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(res.headers()[header::CACHE_CONTROL], "private, no-store");
    let html = text(res).await;
    assert!(html.contains("You are not signed in."), "{html}");
    for link in [
        "href=\"/auth/signin\"",
        "href=\"/auth/signout\"",
        "href=\"/protected\"",
    ] {
        assert!(html.contains(link), "{link} in {html}");
    }
}

#[tokio::test]
async fn protected_page_redirects_anonymous_users() {
    let app = demo().await;
    let mut jar = CookieJar::default();
    let res = get(&app, "/protected", &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(
        res.headers()[header::LOCATION],
        "/auth/signin?callbackUrl=%2Fprotected"
    );
    // The sign-in page it points to lists the demo form.
    let res = get(&app, "/auth/signin?callbackUrl=%2Fprotected", &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let html = text(res).await;
    assert!(html.contains("Username") && html.contains("Password"));
}

#[tokio::test]
async fn demo_sign_in_succeeds() {
    let app = demo().await;
    let mut jar = CookieJar::default();
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(
        res.headers()[header::LOCATION],
        "http://localhost:3000/protected"
    );
    assert!(jar.has("authjs.session-token"), "{jar:?}");

    let res = get(&app, "/", &mut jar).await;
    let html = text(res).await;
    assert!(
        html.contains("Signed in as <strong>Demo User</strong>"),
        "{html}"
    );
    assert!(html.contains("demo@example.com"), "{html}");

    let res = get(&app, "/protected", &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let html = text(res).await;
    assert!(
        html.contains("Protected page") && html.contains("Demo User"),
        "{html}"
    );

    let res = get(&app, "/auth/session", &mut jar).await;
    let json: Value = serde_json::from_str(&text(res).await).unwrap();
    assert_eq!(json["user"]["name"], "Demo User");
    assert_eq!(json["user"]["email"], "demo@example.com");
}

#[tokio::test]
async fn demo_sign_in_refuses_wrong_credentials() {
    let app = demo().await;
    for (user, password) in [("demo", "wrong"), ("demo", ""), ("other", "authcore-demo")] {
        let mut jar = CookieJar::default();
        let res = sign_in(&app, &mut jar, user, password).await;
        assert_eq!(res.status(), StatusCode::FOUND);
        assert_eq!(
            res.headers()[header::LOCATION],
            "http://localhost:3000/auth/signin?error=CredentialsSignin&code=credentials",
            "{user}/{password}"
        );
        assert!(!jar.has("authjs.session-token"));
        let html = text(get(&app, "/", &mut jar).await).await;
        assert!(html.contains("You are not signed in."));
    }
}

#[tokio::test]
async fn custom_password_and_base_path_from_env() {
    let mut config = ServerConfig::from_env(authcore::env::Env::from_pairs([
        ("AUTH_SECRET", "env secret-xxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_URL", "http://localhost:3000/api/auth"),
        ("AUTHCORE_DEMO_PASSWORD", "hunter2"),
    ]))
    .unwrap();
    config.secret_is_ephemeral = false;
    // No database file in the working directory: this test is about the routes.
    config.database_url = None;
    let app = config.build().await.unwrap().router();
    let mut jar = CookieJar::default();
    let res = get(&app, "/protected", &mut jar).await;
    assert_eq!(
        res.headers()[header::LOCATION],
        "/api/auth/signin?callbackUrl=%2Fprotected"
    );
    let html = text(get(&app, "/", &mut jar).await).await;
    assert!(html.contains("href=\"/api/auth/signin\""), "{html}");
    let res = get(&app, "/api/auth/providers", &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
}

/// The demo with the OAuth providers of `vars` (plus a fixed secret).
async fn demo_with_env(vars: &[(&str, &str)]) -> Router {
    let mut pairs = vec![("AUTH_SECRET", "a demo test secret, long and random enough")];
    pairs.extend_from_slice(vars);
    let mut config = ServerConfig::from_env(authcore::env::Env::from_pairs(pairs)).unwrap();
    config.database_url = None;
    config.build().await.unwrap().router()
}

async fn providers_json(app: &Router) -> Value {
    let res = get(app, "/auth/providers", &mut CookieJar::default()).await;
    assert_eq!(res.status(), StatusCode::OK);
    serde_json::from_str(&text(res).await).unwrap()
}

#[tokio::test]
async fn oauth_providers_from_env_are_listed() {
    let app = demo_with_env(&[
        ("AUTH_GITHUB_ID", "Iv1.0123456789abcdef"),
        ("AUTH_GITHUB_SECRET", "github-secret"),
        ("AUTH_GOOGLE_ID", "1234.apps.googleusercontent.com"),
        ("AUTH_GOOGLE_SECRET", "google-secret"),
        ("AUTH_OIDC_ISSUER", "https://sso.example.com/realms/main"),
        ("AUTH_OIDC_ID", "authcore-demo"),
        ("AUTH_OIDC_SECRET", "oidc-secret"),
        ("AUTH_OIDC_NAME", "Example SSO"),
    ])
    .await;
    let json = providers_json(&app).await;
    let ids: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["credentials", "github", "google", "oidc"]);
    for (id, name, kind) in [
        ("credentials", "Credentials", "credentials"),
        ("github", "GitHub", "oauth"),
        ("google", "Google", "oidc"),
        ("oidc", "Example SSO", "oidc"),
    ] {
        let p = &json[id];
        assert_eq!(p["id"], id);
        assert_eq!(p["name"], name);
        assert_eq!(p["type"], kind);
        assert_eq!(
            p["signinUrl"],
            format!("http://localhost:3000/auth/signin/{id}")
        );
        assert_eq!(
            p["callbackUrl"],
            format!("http://localhost:3000/auth/callback/{id}")
        );
    }
    // No secret or client id leaks into the listing.
    let listing = json.to_string();
    for secret in [
        "github-secret",
        "google-secret",
        "oidc-secret",
        "Iv1.0123456789abcdef",
    ] {
        assert!(!listing.contains(secret), "{listing}");
    }
    // The built-in sign-in page offers them next to the demo form.
    let html = text(get(&app, "/auth/signin", &mut CookieJar::default()).await).await;
    for label in [
        "Sign in with GitHub",
        "Sign in with Google",
        "Sign in with Example SSO",
        "Username",
    ] {
        assert!(html.contains(label), "{label} in {html}");
    }
}

#[tokio::test]
async fn oauth_providers_need_all_their_settings() {
    // A catalogue preset with some settings but not all: the server does not start, and
    // says which variable is missing (never the secret).
    for (vars, missing) in [
        (
            vec![("AUTH_GITHUB_ID", "Iv1.0123456789abcdef")],
            "AUTH_GITHUB_SECRET",
        ),
        (
            vec![
                ("AUTH_GOOGLE_ID", "1234.apps.googleusercontent.com"),
                ("AUTH_GOOGLE_SECRET", ""),
            ],
            "AUTH_GOOGLE_SECRET",
        ),
        (
            vec![
                ("AUTH_KEYCLOAK_ID", "kc"),
                ("AUTH_KEYCLOAK_SECRET", "kc-secret-value"),
            ],
            "AUTH_KEYCLOAK_ISSUER",
        ),
    ] {
        let mut pairs = vec![("AUTH_SECRET", "a demo test secret, long and random enough")];
        pairs.extend_from_slice(&vars);
        let mut config = ServerConfig::from_env(authcore::env::Env::from_pairs(pairs)).unwrap();
        config.database_url = None;
        let err = config.build().await.unwrap_err().to_string();
        assert!(err.contains(missing), "{err}");
        assert!(!err.contains("kc-secret-value"), "{err}");
    }

    // Nothing set: the credentials provider alone.
    let json = providers_json(&demo_with_env(&[]).await).await;
    let ids: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["credentials"]);

    // Empty settings add nothing, nor does the generic OIDC provider without its issuer;
    // its name has a default.
    let json = providers_json(
        &demo_with_env(&[
            ("AUTH_GITHUB_ID", ""),
            ("AUTH_GOOGLE_ID", " "),
            ("AUTH_GOOGLE_SECRET", ""),
            ("AUTH_OIDC_ID", "authcore-demo"),
            ("AUTH_OIDC_SECRET", "oidc-secret"),
        ])
        .await,
    )
    .await;
    let ids: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["credentials"]);
    let json = providers_json(
        &demo_with_env(&[
            ("AUTH_OIDC_ISSUER", "https://sso.example.com"),
            ("AUTH_OIDC_ID", "authcore-demo"),
            ("AUTH_OIDC_SECRET", "oidc-secret"),
        ])
        .await,
    )
    .await;
    assert_eq!(json["oidc"]["name"], "OpenID Connect");
    assert_eq!(json["oidc"]["type"], "oidc");
}

#[tokio::test]
async fn github_sign_in_redirects_to_github() {
    // GitHub needs no discovery, so the redirect is built without any network access.
    let app = demo_with_env(&[
        ("AUTH_GITHUB_ID", "Iv1.0123456789abcdef"),
        ("AUTH_GITHUB_SECRET", "github-secret"),
    ])
    .await;
    let mut jar = CookieJar::default();
    let res = get(&app, "/auth/csrf", &mut jar).await;
    let json: Value = serde_json::from_str(&text(res).await).unwrap();
    let csrf = json["csrfToken"].as_str().unwrap().to_owned();
    let req = Request::post(format!("{ORIGIN}/auth/signin/github"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header())
        .body(Body::from(format!(
            "csrfToken={}&callbackUrl={}",
            encode(&csrf),
            encode("/protected")
        )))
        .unwrap();
    let res = send(&app, req, &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let location = res.headers()[header::LOCATION].to_str().unwrap();
    assert!(
        location.starts_with("https://github.com/login/oauth/authorize?"),
        "{location}"
    );
    for part in [
        "response_type=code",
        "client_id=Iv1.0123456789abcdef",
        "redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fauth%2Fcallback%2Fgithub",
        "scope=read%3Auser+user%3Aemail",
        "code_challenge_method=S256",
    ] {
        assert!(location.contains(part), "{part} in {location}");
    }
    assert!(!location.contains("github-secret"));
    assert!(jar.has("authjs.pkce.code_verifier"), "{jar:?}");
}

#[tokio::test]
async fn sqlite_database_sessions_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("authcore-demo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    database_sessions_survive_a_restart(&format!("sqlite://{}?mode=rwc", file.display())).await;
    assert!(file.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_database_sessions_survive_a_restart() {
    let schema = format!("authcore_demo_{}", std::process::id());
    pg::admin_sql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .await;
    let base = pg::postgres_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    database_sessions_survive_a_restart(&format!("{base}{sep}options=-c%20search_path%3D{schema}"))
        .await;
    pg::admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}

#[tokio::test]
async fn mysql_database_sessions_survive_a_restart() {
    let name = format!("authcore_demo_{}", std::process::id());
    mysql::mysql_admin_sql(&format!(
        "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"
    ))
    .await;
    database_sessions_survive_a_restart(&mysql::mysql_database_url(&name)).await;
    mysql::mysql_admin_sql(&format!("DROP DATABASE {name}")).await;
}

/// The demo on the database at `url` (`AUTHCORE_DATABASE_URL`): creates and migrates it,
/// signs in with a database session that a second instance (a restart) sees, and signs
/// out on the second, which ends the session on the first.
async fn database_sessions_survive_a_restart(url: &str) {
    let config = || {
        let mut c = ServerConfig::new("a demo test secret, long and random enough");
        c.database_url = Some(url.to_owned());
        c
    };
    // First start: creates and migrates the database, seeds the demo user.
    let app = config().build().await.unwrap().router();
    let mut jar = CookieJar::default();
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let token = jar.0.get("authjs.session-token").unwrap().clone();
    assert_eq!(
        token.len(),
        36,
        "a database session token, not a JWE: {token}"
    );

    // A second instance on the same file (a restart) sees the session.
    let app2 = config().build().await.unwrap().router();
    let res = get(&app2, "/auth/session", &mut jar).await;
    let json: Value = serde_json::from_str(&text(res).await).unwrap();
    assert_eq!(json["user"]["name"], "Demo User");
    let res = get(&app2, "/protected", &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);

    // Sign-out deletes the row: the first instance no longer sees it either.
    let csrf_res = get(&app2, "/auth/csrf", &mut jar).await;
    let csrf: Value = serde_json::from_str(&text(csrf_res).await).unwrap();
    let body = format!("csrfToken={}", csrf["csrfToken"].as_str().unwrap());
    let req = Request::post(format!("{ORIGIN}/auth/signout"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header())
        .body(Body::from(body))
        .unwrap();
    let res = send(&app2, req, &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let mut old_jar = CookieJar::default();
    old_jar.0.insert("authjs.session-token".into(), token);
    let res = get(&app, "/auth/session", &mut old_jar).await;
    assert_eq!(text(res).await, "null");
}

#[tokio::test]
async fn email_sign_in_is_offered_with_a_database() {
    let dir = std::env::temp_dir().join(format!("authcore-demo-email-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    let mut config = ServerConfig::new("a demo test secret, long and random enough");
    config.database_url = Some(format!("sqlite://{}?mode=rwc", file.display()));
    let app = config.build().await.unwrap().router();
    let providers = providers_json(&app).await;
    assert_eq!(providers["email"]["type"], "email");
    // The console sender: asking for a link goes to the verify-request page.
    let mut jar = CookieJar::default();
    let csrf: Value =
        serde_json::from_str(&text(get(&app, "/auth/csrf", &mut jar).await).await).unwrap();
    let body = format!(
        "csrfToken={}&email={}",
        csrf["csrfToken"].as_str().unwrap(),
        encode("someone@example.com")
    );
    let req = Request::post(format!("{ORIGIN}/auth/signin/email"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header())
        .body(Body::from(body))
        .unwrap();
    let res = send(&app, req, &mut jar).await;
    assert_eq!(
        res.headers()[header::LOCATION],
        format!("{ORIGIN}/auth/verify-request?provider=email&type=email")
    );
    let _ = std::fs::remove_dir_all(&dir);

    // Without a database there is nowhere to keep tokens: no email provider.
    let providers = providers_json(&demo().await).await;
    assert!(providers.get("email").is_none(), "{providers}");
}

#[test]
fn smtp_url_from_env() {
    let env = |url: &str| {
        authcore::env::Env::from_pairs([
            ("AUTH_SECRET", "s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
            ("SMTP_URL", url),
        ])
    };
    let config = ServerConfig::from_env(env("smtp://user:pw@127.0.0.1:2525")).unwrap();
    assert!(matches!(
        config.email,
        authcore_server::EmailDelivery::Smtp(_)
    ));
    // The password never shows in the debug output printed at start-up.
    assert!(!format!("{config:?}").contains("pw@"), "{config:?}");
    let err = ServerConfig::from_env(env("ftp://nope")).unwrap_err();
    assert!(err.to_string().starts_with("SMTP_URL"), "{err}");
}

#[tokio::test]
async fn config_file_with_environment_on_top() {
    use authcore_server::ConfigFile;
    // The example file in the repository is valid.
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../authcore.example.toml");
    let parsed = ConfigFile::load(&example).unwrap();
    assert_eq!(parsed.server.addr, Some("127.0.0.1:3000".parse().unwrap()));

    let dir = std::env::temp_dir().join(format!("authcore-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("authcore.toml");
    std::fs::write(
        &path,
        r##"
[server]
addr = "127.0.0.1:4100"
database_url = "none"
demo_password = "from-the-file"
database_max_connections = 4
database_timeout = 2.5
database_direct_reads = false

[auth]
secret = "a file secret, long and random enough"
trust_host = true

[providers.github]
id = "Iv1.file"
secret = "file-secret"

[providers.microsoft-entra-id]
id = "entra-file"
secret = "entra-secret"
issuer = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"

[theme]
color_scheme = "dark"
brand_color = "#123456"

[pages]
error = "/oops"
"##,
    )
    .unwrap();
    // The environment wins over the file.
    let env = authcore::env::Env::from_pairs([("AUTHCORE_DEMO_PASSWORD", "from-the-env")]);
    let config = ServerConfig::from_file(&path, env).unwrap();
    assert_eq!(config.addr.to_string(), "127.0.0.1:4100");
    assert_eq!(config.database_url, None);
    assert_eq!(config.database_pool.max_connections, 4);
    assert_eq!(
        config.database_pool.timeout,
        std::time::Duration::from_millis(2500)
    );
    assert!(!config.database_pool.direct_session_reads);
    assert_eq!(config.demo_password, "from-the-env");
    assert!(!config.secret_is_ephemeral);
    let app = config.build().await.unwrap().router();
    let providers = providers_json(&app).await;
    assert_eq!(providers["github"]["name"], "GitHub");
    assert_eq!(
        providers["microsoft-entra-id"]["name"],
        "Microsoft Entra ID"
    );
    let page = text(get(&app, "/auth/signin", &mut CookieJar::default()).await).await;
    assert!(page.contains("__next-auth-theme-dark"));
    assert!(page.contains("--brand-color:#123456"));
    let res = get(
        &app,
        "/auth/error?error=Configuration",
        &mut CookieJar::default(),
    )
    .await;
    assert_eq!(res.headers()[header::LOCATION], "/oops?error=Configuration");
    // The file's password is overridden; the env's signs in.
    let mut jar = CookieJar::default();
    let res = sign_in(&app, &mut jar, "demo", "from-the-env").await;
    assert!(
        !res.headers()[header::LOCATION]
            .to_str()
            .unwrap()
            .contains("error")
    );

    // An unknown provider id is refused with the known ones; a preset without its issuer
    // stops the start with the variable named, and the secret is not printed.
    std::fs::write(
        &path,
        "[providers.myspace]\nid = \"x\"\nsecret = \"top-secret\"\n",
    )
    .unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("myspace") && err.contains("discord") && err.contains("oidc"),
        "{err}"
    );
    assert!(!err.contains("top-secret"), "{err}");
    std::fs::write(
        &path,
        "[auth]\nsecret = \"s3cret-s3cret\"\n[providers.okta]\nid = \"x\"\nsecret = \"top-secret\"\n",
    )
    .unwrap();
    let mut config = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap();
    config.database_url = None;
    let err = config.build().await.unwrap_err().to_string();
    assert!(err.contains("AUTH_OKTA_ISSUER"), "{err}");
    assert!(!err.contains("top-secret"), "{err}");

    // `name` belongs to the generic OIDC provider only.
    std::fs::write(
        &path,
        "[providers.github]\nid = \"x\"\nsecret = \"s\"\nname = \"My GitHub\"\n",
    )
    .unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("`name` is only for [providers.oidc]"), "{err}");

    // Typos and bad values are reported with the key.
    std::fs::write(&path, "[server]\nadress = \"x\"\n").unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap_err();
    assert!(err.to_string().contains("adress"), "{err}");
    std::fs::write(&path, "[theme]\ncolor_scheme = \"purple\"\n").unwrap();
    let err = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap_err();
    assert!(err.to_string().contains("purple"), "{err}");
    // [theme] and [pages] are authcore's own types, as strict as the file's other tables.
    for (typo, key) in [
        ("[theme]\nbrand_colour = \"#000\"\n", "brand_colour"),
        ("[pages]\nsignin = \"/login\"\n", "signin"),
    ] {
        std::fs::write(&path, typo).unwrap();
        let err = ServerConfig::from_file(&path, authcore::env::Env::default()).unwrap_err();
        assert!(err.to_string().contains(key), "{err}");
    }
    let err = ServerConfig::from_file(&dir.join("missing.toml"), authcore::env::Env::default())
        .unwrap_err();
    assert!(err.to_string().contains("cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_file_debug_hides_secrets() {
    let file = authcore_server::ConfigFile::parse(
        r#"
[server]
demo_password = "pw-in-file"
[auth]
secret = "secret-in-file"
[email]
smtp_url = "smtps://user:smtp-pass@smtp.example.com"
[providers.github]
id = "gh-id"
secret = "gh-secret"
[providers.oidc]
issuer = "https://idp.example.com"
id = "oidc-id"
secret = "oidc-secret"
[oidc_provider]
[[oidc_provider.clients]]
id = "rp"
secret = "op-client-secret"
"#,
    )
    .unwrap();
    let text = format!("{file:?}");
    for secret in [
        "pw-in-file",
        "secret-in-file",
        "smtp-pass",
        "gh-secret",
        "oidc-secret",
        "op-client-secret",
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(
        text.contains("gh-id"),
        "non-secret values stay visible: {text}"
    );
    // The values themselves are intact.
    assert_eq!(
        file.auth.auth_js_settings().secret.as_deref(),
        Some("secret-in-file")
    );
    assert_eq!(
        file.providers.0["github"].values().get("secret"),
        Some("gh-secret")
    );
    assert_eq!(
        file.email
            .smtp_url
            .as_ref()
            .map(authcore_server::SecretValue::expose),
        Some("smtps://user:smtp-pass@smtp.example.com")
    );
}

/// The server trusts no request host by default: only the loopback names while it listens
/// on loopback; `AUTHCORE_ALLOWED_HOSTS`, `AUTH_TRUST_HOST` or `AUTH_URL` say otherwise.
#[tokio::test]
async fn request_hosts_are_trusted_only_as_configured() {
    // Environment, Host header, trusted.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, bool);
    let cases: &[Case] = &[
        (&[], "localhost:3000", true),
        (&[], "127.0.0.1:3000", true),
        (&[], "[::1]:3000", true),
        (&[], "app.localhost", true),
        (&[], "evil.example", false),
        (&[], "localhost.evil.example", false),
        (
            &[
                ("AUTHCORE_ADDR", "0.0.0.0:3000"),
                ("AUTHCORE_DEMO_PASSWORD", "not the default"),
            ],
            "localhost:3000",
            false,
        ),
        (
            &[("AUTHCORE_ALLOWED_HOSTS", "auth.example.com, *.example.org")],
            "auth.example.com",
            true,
        ),
        (
            &[("AUTHCORE_ALLOWED_HOSTS", "auth.example.com")],
            "a.example.org",
            false,
        ),
        (
            &[("AUTHCORE_ALLOWED_HOSTS", "auth.example.com")],
            "localhost:3000",
            false,
        ),
        (&[("AUTH_TRUST_HOST", "true")], "evil.example", true),
        (
            &[("AUTH_URL", "https://auth.example.com/auth")],
            "evil.example",
            true,
        ),
    ];
    for (env, host, trusted) in cases {
        let mut pairs = vec![
            ("AUTH_SECRET", "a demo test secret, long and random enough"),
            ("AUTHCORE_DATABASE_URL", "none"),
        ];
        pairs.extend_from_slice(env);
        let config = ServerConfig::from_env(authcore::env::Env::from_pairs(pairs)).unwrap();
        let app = config.build().await.unwrap().router();
        let req = Request::get("/auth/csrf")
            .header(header::HOST, *host)
            .body(Body::empty())
            .unwrap();
        let res = send(&app, req, &mut CookieJar::default()).await;
        let want = if *trusted { 200 } else { 500 };
        assert_eq!(res.status().as_u16(), want, "{env:?} Host: {host}");
    }
}

/// The server locks a user out after 5 wrong passwords by default (then even the right one
/// is refused for 15 minutes); `AUTHCORE_RATE_LIMITS=off` and `[rate_limits]` change that.
#[tokio::test]
async fn wrong_passwords_lock_the_demo_user_by_default() {
    let app = demo().await;
    let mut jar = CookieJar::default();
    let error = |res: &axum::response::Response| {
        let location = res.headers()[header::LOCATION].to_str().unwrap().to_owned();
        location
            .split("error=")
            .nth(1)
            .map(|e| e.split('&').next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    for _ in 0..5 {
        let res = sign_in(&app, &mut jar, "demo", "wrong").await;
        assert_eq!(error(&res), "CredentialsSignin");
    }
    let res = sign_in(&app, &mut jar, "demo", "wrong").await;
    assert_eq!(error(&res), "RateLimited");
    assert_eq!(res.headers()[header::RETRY_AFTER], "900");
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(error(&res), "RateLimited");

    let off = ServerConfig::from_env(authcore::env::Env::from_pairs([
        ("AUTH_SECRET", "a demo test secret, long and random enough"),
        ("AUTHCORE_DATABASE_URL", "none"),
        ("AUTHCORE_RATE_LIMITS", "off"),
    ]))
    .unwrap();
    assert!(!off.rate_limits.any());
    let err = ServerConfig::from_env(authcore::env::Env::from_pairs([(
        "AUTHCORE_RATE_LIMITS",
        "sometimes",
    )]))
    .unwrap_err();
    assert!(err.to_string().contains("AUTHCORE_RATE_LIMITS"), "{err}");

    let file = authcore_server::ConfigFile::parse(
        r#"
[rate_limits]
credentials_per_identifier = { limit = 2, window = 60, lockout = 600 }
requests_per_client = false
"#,
    )
    .unwrap();
    let limits = file
        .rate_limits
        .unwrap()
        .apply(authcore::ratelimit::RateLimits::recommended());
    let per_id = limits.credentials_per_identifier.unwrap();
    assert_eq!(
        (
            per_id.limit(),
            per_id.window().as_secs(),
            per_id.lockout_duration().as_secs()
        ),
        (2, 60, 600)
    );
    assert!(limits.requests_per_client.is_none());
    assert!(
        limits.emails_per_address.is_some(),
        "the others stay recommended"
    );
    assert!(
        authcore_server::ConfigFile::parse("[rate_limits]\nsignins = 3\n").is_err(),
        "unknown limits are refused"
    );
}

/// The demo on SQLite with second factors: the account page sets up an authenticator app
/// (its QR code and key, then a first code, then recovery codes shown once); the next
/// password sign-in stops at the two-factor page until a code is given.
#[tokio::test]
async fn two_factor_from_the_account_page_then_at_sign_in() {
    let dir = std::env::temp_dir().join(format!("authcore-demo-2fa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    let mut config = ServerConfig::new("a demo test secret, long and random enough");
    config.database_url = Some(format!("sqlite://{}?mode=rwc", file.display()));
    config.two_factor = Some(authcore::two_factor::TwoFactorOptions::default());
    let app = config.build().await.unwrap().router();
    let (now, code_at) = (support::totp::unix_now, support::totp::totp_code_at);
    let post_form = |path: &str, body: String, jar: &CookieJar| {
        Request::post(format!("{ORIGIN}{path}"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::COOKIE, jar.header())
            .body(Body::from(body))
            .unwrap()
    };
    let csrf_of = async |app: &Router, jar: &mut CookieJar| -> String {
        let json: Value =
            serde_json::from_str(&text(get(app, "/auth/csrf", jar).await).await).unwrap();
        json["csrfToken"].as_str().unwrap().to_owned()
    };

    let mut jar = CookieJar::default();
    sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    // The home page links to the account page, which offers the set-up.
    assert!(
        text(get(&app, "/", &mut jar).await)
            .await
            .contains("href=\"/auth/account\"")
    );
    let html = text(get(&app, "/auth/account", &mut jar).await).await;
    assert!(html.contains("Set up an authenticator app"), "{html}");
    let csrf = csrf_of(&app, &mut jar).await;
    let res = send(
        &app,
        post_form(
            "/auth/account",
            format!("csrfToken={csrf}&op=totp-start"),
            &jar,
        ),
        &mut jar,
    )
    .await;
    let html = text(res).await;
    let secret = html
        .split(r#"id="totp-secret" type="text" readonly value=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let body = format!(
        "csrfToken={csrf}&op=totp-confirm&code={}",
        code_at(&secret, now() - 30)
    );
    let html = text(send(&app, post_form("/auth/account", body, &jar), &mut jar).await).await;
    assert_eq!(html.matches("<li><code>").count(), 10, "{html}");

    // Signed out, the password alone no longer opens a session.
    let body = format!("csrfToken={csrf}");
    send(&app, post_form("/auth/signout", body, &jar), &mut jar).await;
    assert!(!jar.has("authjs.session-token"));
    let res = sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    assert_eq!(
        res.headers()[header::LOCATION],
        format!("{ORIGIN}/auth/two-factor")
    );
    assert!(!jar.has("authjs.session-token"));
    assert_eq!(
        get(&app, "/protected", &mut jar).await.status(),
        StatusCode::FOUND
    );
    let page = text(get(&app, "/auth/two-factor", &mut jar).await).await;
    assert!(page.contains("Two-factor authentication"), "{page}");
    let csrf = csrf_of(&app, &mut jar).await;
    let body = format!("csrfToken={csrf}&code={}", code_at(&secret, now()));
    let res = send(&app, post_form("/auth/two-factor", body, &jar), &mut jar).await;
    assert_eq!(
        res.headers()[header::LOCATION],
        format!("{ORIGIN}/protected")
    );
    assert!(jar.has("authjs.session-token"));
    assert_eq!(
        get(&app, "/protected", &mut jar).await.status(),
        StatusCode::OK
    );
    let _ = std::fs::remove_dir_all(&dir);
}
