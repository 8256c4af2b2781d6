//! One session across a real Auth.js app and an authcore app, in headless
//! Chromium: `@auth/express` (pinned in `testsupport/authjs-express`) and authcore behind
//! axum on two ports of localhost, the same secret and the default cookies, JWT sessions.
//! Signing in on either signs in on both, a session update on either shows on both, and
//! signing out on either ends both — each checked by what each application sees. Then the
//! same with database sessions: `@auth/pg-adapter` and `authcore-sqlx` on one PostgreSQL
//! schema (created by authcore's migrations, used unchanged by Auth.js), magic links
//! requested on one app and opened on either. Sign-in at the real OpenID provider
//! (`oidc-provider`) through either app gives the session to both too, and the sign-in and
//! sign-out forms of Auth.js's own pages work when posted to authcore.

use crate::support;
use pg::{admin_sql, postgres_url};

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use authcore::callbacks::{Callbacks, JwtParams, JwtTrigger};
use authcore::jwt::JwtClaims;
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, BoxError, User};
use authcore_axum::{AuthRouterExt, OptionalSession};
use axum::routing::get;
use serde_json::{Value, json};
use support::{browser, oidc_provider, pg};
use tokio::io::{AsyncBufReadExt, BufReader};

const SECRET: &str = "shared-session-secret-7f3a9c2e5b1d8f4a6c0e";

/// The `jwt` callback of the Express app: a session update may set the name.
struct TakesNameUpdates;

#[authcore::async_trait]
impl Callbacks for TakesNameUpdates {
    async fn jwt(&self, mut p: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        if p.trigger == Some(JwtTrigger::Update)
            && let Some(name) = p
                .session
                .and_then(|s| s.get("name"))
                .and_then(Value::as_str)
        {
            p.token.insert("name".into(), json!(name));
        }
        Ok(Some(p.token))
    }
}

/// The authcore app: the same users as the Express app (any lower-case name); with
/// `next_auth_v4`, in next-auth 4's dialect.
fn authcore_app(oidc_issuer: Option<&str>, next_auth_v4: bool) -> axum::Router {
    let mut config = AuthConfig::builder().secret(SECRET).trust_host(true);
    if next_auth_v4 {
        config = config.next_auth_v4();
    }
    if let Some(issuer) = oidc_issuer {
        let (id, secret) = oidc_provider::clients::BASIC;
        config = config.provider(
            authcore::providers::catalog::oidc("oidc", "OIDC", issuer)
                .client_id(id)
                .client_secret(secret),
        );
    }
    let auth = Auth::new(
        config
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .authorize(|c, _| async move {
                        let name = c.get("username").and_then(Value::as_str).unwrap_or("");
                        Ok(
                            (!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase()))
                                .then(|| {
                                    User::with_id(format!("u-{name}"))
                                        .name(name)
                                        .email(format!("{name}@example.com"))
                                }),
                        )
                    }),
            )
            .callbacks(TakesNameUpdates)
            .build()
            .unwrap(),
    );
    axum::Router::new()
        .route("/", get(|| async { "authcore app" }))
        .route(
            "/whoami",
            get(|OptionalSession(s): OptionalSession| async move {
                let json = s.map_or(Value::Null, |s| s.into_json());
                ([("content-type", "application/json")], json.to_string())
            }),
        )
        .auth_routes(auth.clone())
        .with_state(auth)
}

/// Starts the Express app with `env` (see `testsupport/authjs-express/app.mjs`) on `port`
/// (0: any); its base URL and the process (killed on drop).
async fn start_authjs(port: u16, env: &[(&str, &str)]) -> (String, tokio::process::Child) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/authjs-express");
    assert!(
        dir.join("node_modules/@auth/express").is_dir(),
        "run `npm ci --prefix testsupport/authjs-express` first"
    );
    let mut child = tokio::process::Command::new("node")
        .arg("app.mjs")
        .env("AUTH_SECRET", SECRET)
        .env("PORT", port.to_string())
        .envs(env.iter().copied())
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the Express app did not start within 20 s")
        .unwrap()
        .unwrap();
    let port = serde_json::from_str::<Value>(&line).unwrap()["listening"]
        .as_u64()
        .unwrap();
    (format!("http://localhost:{port}"), child)
}

/// A free loopback port (for apps whose redirect URIs must be registered first).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_across_authjs_and_authcore_in_a_browser() {
    // The real OpenID provider, with both apps' callbacks registered.
    let authcore_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authcore_port = authcore_listener.local_addr().unwrap().port();
    let authjs_port = free_port();
    let idp = oidc_provider::OidcProvider::start_with_redirect_uris(&[
        &format!("http://localhost:{authjs_port}/auth/callback/oidc"),
        &format!("http://localhost:{authcore_port}/auth/callback/oidc"),
    ])
    .await;
    let (client_id, client_secret) = oidc_provider::clients::BASIC;
    let (authjs, _express) = start_authjs(
        authjs_port,
        &[
            ("OIDC_ISSUER", &idp.issuer),
            ("OIDC_ID", client_id),
            ("OIDC_SECRET", client_secret),
        ],
    )
    .await;
    let app = authcore_app(Some(&idp.issuer), false);
    tokio::spawn(async move { axum::serve(authcore_listener, app).await });
    let authcore = format!("http://localhost:{authcore_port}");
    let steps = browser::run(
        "shared-session.mjs",
        &[&authjs, &authcore],
        Duration::from_secs(120),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "shared session");
    let user = |s: &Value, app: &str| s[app]["user"].clone();

    let s = step("signed in on Auth.js");
    for app in ["authjs", "authcore"] {
        assert_eq!(user(s, app)["email"], "ada@example.com", "{app}: {s}");
    }
    let s = step("updated on authcore");
    assert_eq!(s["result"]["status"], 200, "{s}");
    for app in ["authjs", "authcore"] {
        assert_eq!(user(s, app)["name"], "Ada L", "{app}: {s}");
    }
    let s = step("updated on Auth.js");
    for app in ["authjs", "authcore"] {
        assert_eq!(user(s, app)["name"], "Ada K", "{app}: {s}");
    }
    let s = step("signed out on authcore");
    for app in ["authjs", "authcore"] {
        assert_eq!(s[app], Value::Null, "{app}: {s}");
    }
    let s = step("signed in on authcore");
    for app in ["authjs", "authcore"] {
        assert_eq!(user(s, app)["email"], "grace@example.com", "{app}: {s}");
    }
    let s = step("signed out on Auth.js");
    for app in ["authjs", "authcore"] {
        assert_eq!(s[app], Value::Null, "{app}: {s}");
    }
    // Auth.js's own forms work against authcore unchanged.
    let s = step("Auth.js's sign-in form posted to authcore");
    for app in ["authjs", "authcore"] {
        assert_eq!(user(s, app)["email"], "lin@example.com", "{app}: {s}");
    }
    let s = step("Auth.js's sign-out form posted to authcore");
    for app in ["authjs", "authcore"] {
        assert_eq!(s[app], Value::Null, "{app}: {s}");
    }
    // At the real OpenID provider, from either app.
    for name in [
        "signed in at the OpenID provider through Auth.js",
        "signed in at the OpenID provider through authcore",
    ] {
        let s = step(name);
        for app in ["authjs", "authcore"] {
            assert_eq!(
                user(s, app)["email"],
                "user-1@example.com",
                "{name}, {app}: {s}"
            );
        }
    }
    drop(idp);
}

/// The Auth.js browser client, `next-auth/react` from npm (5 and 4, bundled by the script),
/// driven unchanged in Chromium against authcore: `useSession` follows sign-in, session
/// updates and sign-out (in a second tab too, through the client's own broadcasts);
/// `signIn`/`signOut` work with and without redirects; wrong credentials come back as
/// Auth.js's `CredentialsSignin`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_auth_react_drives_authcore_in_a_browser() {
    for (version, next_auth_v4, base_path) in [("v5", false, "/auth"), ("v4", true, "/api/auth")] {
        let base = browser::serve(authcore_app(None, next_auth_v4)).await;
        let steps = browser::run(
            "next-auth-react.mjs",
            &[&base, base_path, version],
            Duration::from_secs(120),
        )
        .await;
        let step = |name: &str| browser::step(&steps, name, version);
        let email = |v: &Value| v["user"]["email"].clone();
        let s = step("no session");
        assert_eq!(s["session"], Value::Null, "{version}: {s}");
        let s = step("providers and csrf");
        assert_eq!(
            s["providers"]["credentials"]["type"], "credentials",
            "{version}: {s}"
        );
        assert_eq!(
            s["providers"]["credentials"]["callbackUrl"],
            format!("{base}{base_path}/callback/credentials"),
            "{version}: {s}"
        );
        assert_eq!(
            s["csrfToken"].as_str().map(str::len),
            Some(64),
            "{version}: {s}"
        );
        let s = step("wrong credentials");
        // As from Auth.js: `{url}` of the sign-in page with `error`, answered with 200.
        assert_eq!(s["result"]["error"], "CredentialsSignin", "{version}: {s}");
        assert_eq!(s["result"]["url"], Value::Null, "{version}: {s}");
        assert_eq!(s["session"], Value::Null, "{version}: {s}");
        let s = step("signed in");
        assert_eq!(s["result"]["ok"], true, "{version}: {s}");
        assert_eq!(s["result"]["error"], Value::Null, "{version}: {s}");
        assert_eq!(email(&s["session"]), "ada@example.com", "{version}: {s}");
        assert!(s["session"]["expires"].is_string(), "{version}: {s}");
        let s = step("second tab");
        assert_eq!(email(&s["session"]), "ada@example.com", "{version}: {s}");
        let s = step("updated");
        for key in ["result", "session", "other", "getSession"] {
            assert_eq!(s[key]["user"]["name"], "Ada L", "{version}, {key}: {s}");
            assert_eq!(email(&s[key]), "ada@example.com", "{version}, {key}: {s}");
        }
        let s = step("signed out");
        assert_eq!(
            s["result"]["url"],
            format!("{base}/react-client"),
            "{version}: {s}"
        );
        for key in ["session", "other", "getSession"] {
            assert_eq!(s[key], Value::Null, "{version}, {key}: {s}");
        }
        let s = step("signed in with a redirect");
        assert_eq!(
            s["url"],
            format!("{base}/react-client?back=1"),
            "{version}: {s}"
        );
        assert_eq!(email(&s["session"]), "grace@example.com", "{version}: {s}");
        let s = step("signed out with a redirect");
        assert_eq!(
            s["url"],
            format!("{base}/react-client?out=1"),
            "{version}: {s}"
        );
        assert_eq!(s["session"], Value::Null, "{version}: {s}");
        assert_eq!(step("page errors")["errors"], json!([]), "{version}");
    }
}

/// The authcore app on `db` with database sessions and magic links (kept, served at
/// `GET /test/link?email=…`).
fn authcore_db_app(db: authcore_sqlx::SqlxAdapter) -> axum::Router {
    type Links = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>;
    let links = Links::default();
    let sent = links.clone();
    let email = authcore::providers::email::EmailProvider::new("auth@example.com")
        .send_verification_request(move |r| {
            let sent = sent.clone();
            async move {
                sent.lock().unwrap().insert(r.identifier, r.url);
                Ok(())
            }
        });
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(email)
            .adapter(db)
            .build()
            .unwrap(),
    );
    let whoami = |OptionalSession(s): OptionalSession| async move {
        let json = s.map_or(Value::Null, |s| s.into_json());
        ([("content-type", "application/json")], json.to_string())
    };
    axum::Router::new()
        .route("/", get(|| async { "authcore app" }))
        .route("/whoami", get(whoami))
        .route(
            "/test/link",
            get(move |uri: axum::http::Uri| {
                let links = links.clone();
                async move {
                    let email = form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                        .find(|(k, _)| k == "email")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    let url = links.lock().unwrap().get(&email).cloned();
                    (
                        [("content-type", "application/json")],
                        json!({ "url": url }).to_string(),
                    )
                }
            }),
        )
        .auth_routes(auth.clone())
        .with_state(auth)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_database_session_across_authjs_and_authcore_in_a_browser() {
    let schema = format!("authcore_shared_{}", std::process::id());
    admin_sql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .await;
    let mut url = url::Url::parse(&postgres_url()).unwrap();
    url.query_pairs_mut()
        .append_pair("options", &format!("-c search_path={schema}"));
    let db = authcore_sqlx::SqlxAdapter::postgres(url.as_str())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let (authjs, _express) = start_authjs(
        0,
        &[
            ("DATABASE_URL", &postgres_url()),
            ("DATABASE_SCHEMA", &schema),
        ],
    )
    .await;
    let authcore = browser::serve(authcore_db_app(db)).await;
    let steps = browser::run(
        "shared-session-db.mjs",
        &[&authjs, &authcore],
        Duration::from_secs(120),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "shared session");
    for (name, email) in [
        ("signed in on Auth.js", Some("ada@example.com")),
        ("signed out on authcore", None),
        ("signed in on authcore", Some("grace@example.com")),
        ("signed out on Auth.js", None),
        ("Auth.js link opened on authcore", Some("lin@example.com")),
    ] {
        let s = step(name);
        for app in ["authjs", "authcore"] {
            match email {
                Some(e) => assert_eq!(s[app]["user"]["email"], e, "{name}, {app}: {s}"),
                None => assert_eq!(s[app], Value::Null, "{name}, {app}: {s}"),
            }
        }
    }
    admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}
