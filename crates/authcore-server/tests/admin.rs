//! Administrators in the standalone server, with the configuration of
//! `docs/manual/operating.md` as written (the environment adds the test's database, secret,
//! URL, signing keys and the application's secret): users made by the operator's `add-user`
//! (run as the binary), an administrator who finds a user and bans them — after which no
//! door lets the user in: the gateway, the session, a new sign-in, the OpenID Provider's
//! refresh token and authorization endpoint — and lifts the ban; an impersonation the gateway
//! tells the application about, ended by a click; the audit trail of both; and every
//! administrators' route as an attacker would try it.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use authcore::account::AdminRoute;
use authcore::adapter::Adapter;
use authcore::env::Env;
use authcore_server::{ServerConfig, ServerService};
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::gateway::{Via, ask, header_of};
use crate::support::TestDir;
use crate::support::binary;
use crate::support::in_memory::{self, App, CookieJar, ORIGIN, send, sign_in_with, text};
use crate::support::sso;

const PASSWORD: &str = "a horse, a battery and a staple";
/// The application's secret (`AUTHCORE_OIDC_CLIENT_WIKI_SECRET`).
const WIKI_SECRET: &str = "wiki-secret-0123456789abcdef0123456789";
/// The application's registered redirect URI, as the chapter writes it.
const WIKI_CALLBACK: &str = "https://wiki.example.com/oauth/callback";
/// A page behind the gateway.
const WIKI_PAGE: &str = "https://wiki.example.com/pages/home";

/// The chapter's administrators, and users who are not.
const ROOT: &str = "root@example.com";
const LOU: &str = "lou@example.com";
const UMA: &str = "uma@example.com";
const BOB: &str = "bob@example.com";

/// An Ed25519 key made by openssl at `path`.
fn ed25519_key(path: &Path) {
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// The chapter's site in `dir`: its users made by `add-user`, then the server built from
/// the chapter's file with the test's variables.
struct Site {
    /// The server's router.
    app: Router,
    /// What its listener serves (the router behind the dispatch of authcore's actions).
    service: ServerService,
    db: authcore_sqlx::SqlxAdapter,
}

impl Site {
    async fn new(dir: &Path) -> Site {
        let (identity, oidc) = (dir.join("identity.pem"), dir.join("oidc.pem"));
        ed25519_key(&identity);
        ed25519_key(&oidc);
        let config = dir.join("authcore.toml");
        std::fs::write(
            &config,
            crate::support::documented("manual/operating.md", "operating-test: server"),
        )
        .unwrap();
        let vars: Vec<(String, String)> = [
            (
                "AUTHCORE_DATABASE_URL",
                format!("sqlite://{}?mode=rwc", dir.join("authcore.db").display()),
            ),
            (
                "AUTH_SECRET",
                "an operating test secret, long enough".into(),
            ),
            ("AUTH_URL", format!("{ORIGIN}/auth")),
            (
                "AUTHCORE_GATEWAY_SIGNING_KEYS",
                identity.display().to_string(),
            ),
            ("AUTHCORE_OIDC_SIGNING_KEYS", oidc.display().to_string()),
            ("AUTHCORE_OIDC_CLIENT_WIKI_SECRET", WIKI_SECRET.into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let env: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let config_arg = config.display().to_string();
        for email in [ROOT, LOU, UMA, BOB] {
            let (ok, out) = binary::run(
                &["add-user", email, "--config", &config_arg],
                &env,
                PASSWORD,
            );
            assert!(ok, "{email}: {out}");
        }
        let server = ServerConfig::from_file(&config, Env::from_pairs(env.iter().copied()))
            .unwrap()
            .build()
            .await
            .unwrap();
        let app = server.router();
        let db = server.database().unwrap().clone();
        Site {
            app,
            service: server.into_service(),
            db,
        }
    }

    /// The id of the user with `email`.
    async fn id(&self, email: &str) -> String {
        self.db.get_user_by_email(email).await.unwrap().unwrap().id
    }

    /// A browser signed in as `email` with the password.
    async fn signed_in(&self, email: &str) -> CookieJar {
        let mut jar = CookieJar::default();
        let res = sign_in_with(&self.app, &mut jar, "password", email, PASSWORD).await;
        assert_eq!(res.status(), StatusCode::FOUND, "{email}");
        let to = header_of(&res, "location").unwrap();
        assert!(!to.contains("error="), "{email}: {to}");
        assert!(jar.has("authjs.session-token"), "{email}");
        jar
    }

    /// The email of the session of `jar`, if anyone is signed in.
    async fn who(&self, jar: &mut CookieJar) -> Option<String> {
        let res = in_memory::get(&self.app, "/auth/session", jar).await;
        assert_eq!(res.status(), StatusCode::OK);
        let session: Value = serde_json::from_str(&text(res).await).unwrap();
        session["user"]["email"].as_str().map(str::to_owned)
    }
}

/// A browser holding the cookies of the `Cookie` header `header` (a copy of another's).
fn jar_of(header: &str) -> CookieJar {
    let mut jar = CookieJar::default();
    for pair in header.split("; ") {
        let (k, v) = pair.split_once('=').unwrap();
        jar.0.insert(k.to_owned(), v.to_owned());
    }
    jar
}

/// `GET <path>` with the cookies of `jar`: the status and the JSON (`null` when none).
async fn get_json(app: &impl App, jar: &mut CookieJar, path: &str) -> (StatusCode, Value) {
    let res = in_memory::get(app, path, jar).await;
    let status = res.status();
    (
        status,
        serde_json::from_str(&text(res).await).unwrap_or(Value::Null),
    )
}

/// `POST <path>` with the JSON `fields` and the CSRF token of `jar`'s browser.
async fn post_json(
    app: &impl App,
    jar: &mut CookieJar,
    path: &str,
    mut fields: Value,
) -> (StatusCode, Value) {
    let (_, csrf) = get_json(app, jar, "/auth/csrf").await;
    fields["csrfToken"] = csrf["csrfToken"].clone();
    let req = Request::post(format!("{ORIGIN}{path}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::COOKIE, jar.header())
        .body(Body::from(fields.to_string()))
        .unwrap();
    let res = send(app, req, jar).await;
    let status = res.status();
    (
        status,
        serde_json::from_str(&text(res).await).unwrap_or(Value::Null),
    )
}

/// The wiki's authorization request in `jar`'s browser (PKCE-less: the wiki has a secret).
async fn authorize(app: &Router, jar: &mut CookieJar) -> axum::response::Response {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("client_id", "wiki"),
            ("redirect_uri", WIKI_CALLBACK),
            ("response_type", "code"),
            ("scope", "openid email offline_access"),
            ("state", "st"),
        ])
        .finish();
    in_memory::get(app, &format!("/oidc/authorize?{query}"), jar).await
}

/// The code the authorization endpoint sent the wiki, if it sent one.
fn code_of(res: &axum::response::Response) -> Option<String> {
    let to = url::Url::parse(header_of(res, "location")?).ok()?;
    if !to.as_str().starts_with(WIKI_CALLBACK) {
        return None;
    }
    to.query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
}

/// `POST /oidc/token` by the wiki (HTTP Basic) with `form`: the status and the JSON.
async fn token(app: &Router, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("wiki:{WIKI_SECRET}"));
    let req = Request::post(format!("{ORIGIN}/oidc/token"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::AUTHORIZATION, format!("Basic {basic}"))
        .body(Body::from(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish(),
        ))
        .unwrap();
    let res = send(app, req, &mut CookieJar::default()).await;
    let status = res.status();
    (
        status,
        serde_json::from_str(&text(res).await).unwrap_or(Value::Null),
    )
}

/// The wiki's refresh with `refresh_token`.
async fn refresh(app: &Router, refresh_token: &str) -> (StatusCode, Value) {
    token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ],
    )
    .await
}

/// `GET /oidc/userinfo` with the access token: its status.
async fn userinfo(app: &Router, access_token: &str) -> StatusCode {
    let req = Request::get(format!("{ORIGIN}/oidc/userinfo"))
        .header(header::AUTHORIZATION, format!("Bearer {access_token}"))
        .body(Body::empty())
        .unwrap();
    send(app, req, &mut CookieJar::default()).await.status()
}

/// The audit records of `user_id`, newest first, as an administrator reads them.
async fn audit_of(site: &Site, admin: &mut CookieJar, user_id: &str) -> Vec<Value> {
    let (status, records) =
        get_json(&site.app, admin, &format!("/admin/audit?userId={user_id}")).await;
    assert_eq!(status, StatusCode::OK, "{records}");
    records.as_array().unwrap().clone()
}

/// The kinds of `records`, oldest first, with their actors.
fn kinds(records: &[Value]) -> Vec<(String, Option<String>)> {
    records
        .iter()
        .rev()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["actor"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_bans_a_user_and_every_door_closes() {
    let dir = TestDir::new("admin-ban");
    let site = Site::new(&dir.0).await;
    let app = &site.app;
    let (root_id, uma_id) = (site.id(ROOT).await, site.id(UMA).await);

    // The administrator finds the user.
    let mut root = site.signed_in(ROOT).await;
    let (status, found) = get_json(app, &mut root, "/admin/users?q=uma").await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let users = found["users"].as_array().unwrap();
    assert_eq!(users.len(), 1, "{found}");
    assert_eq!(users[0]["email"], UMA);
    assert_eq!(users[0]["id"], uma_id.as_str());

    // The user, signed in: the gateway lets them through, and the wiki has a refresh token
    // that works.
    let mut uma = site.signed_in(UMA).await;
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut uma).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(header_of(&res, "x-auth-request-email"), Some(UMA));
    let code = code_of(&authorize(app, &mut uma).await).expect("a code for the wiki");
    let (status, tokens) = token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", WIKI_CALLBACK),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let (status, tokens) = refresh(app, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let access_token = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(userinfo(app, &access_token).await, StatusCode::OK);
    let stale = uma.header();

    // The administrator bans the user.
    let (status, ban) = post_json(
        app,
        &mut root,
        "/admin/users/ban",
        json!({"userId": uma_id, "reason": "spam"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ban}");
    assert_eq!(ban["reason"], "spam");
    let (status, detail) =
        get_json(app, &mut root, &format!("/admin/users/detail?id={uma_id}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["banned"], true, "{detail}");

    // Every door is closed. The session no longer passes the gateway, for either proxy, and
    // no identity reaches the wiki.
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut uma).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header_of(&res, "x-auth-request-email"), None);
    let res = ask(app, WIKI_PAGE, Via::Caddy, &mut uma).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(
        header_of(&res, "location")
            .unwrap()
            .starts_with(&format!("{ORIGIN}/auth/signin?")),
        "{:?}",
        header_of(&res, "location")
    );
    assert_eq!(header_of(&res, "x-auth-request-email"), None);
    // The cookie as it was before the ban (the jar may have dropped it) is nobody too.
    let mut replayed = jar_of(&stale);
    assert_eq!(site.who(&mut replayed).await, None);
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut replayed).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(site.who(&mut uma).await, None);
    // A new password sign-in is refused, and makes no session.
    let mut again = CookieJar::default();
    let res = sign_in_with(app, &mut again, "password", UMA, PASSWORD).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let to = header_of(&res, "location").unwrap();
    assert!(to.contains("error=AccessDenied"), "{to}");
    assert!(!again.has("authjs.session-token"));
    assert_eq!(site.who(&mut again).await, None);
    // The wiki's refresh token and access token are void.
    let (status, body) = refresh(app, &refresh_token).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant")),
        "{body}"
    );
    assert!(body.get("access_token").is_none(), "{body}");
    assert_eq!(userinfo(app, &access_token).await, StatusCode::UNAUTHORIZED);
    // The authorization endpoint sends the user's browsers to sign in, with no code.
    for jar in [&mut uma, &mut replayed, &mut again] {
        let res = authorize(app, jar).await;
        assert_eq!(code_of(&res), None);
        let to = header_of(&res, "location").unwrap_or_default();
        assert!(to.starts_with("/auth/signin?"), "{to}");
    }

    // Unbanned, the user signs in again and passes the gateway; what the ban ended stays
    // ended.
    let (status, body) = post_json(
        app,
        &mut root,
        "/admin/users/unban",
        json!({"userId": uma_id}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut uma = site.signed_in(UMA).await;
    assert_eq!(site.who(&mut uma).await.as_deref(), Some(UMA));
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut uma).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(header_of(&res, "x-auth-request-email"), Some(UMA));
    assert!(code_of(&authorize(app, &mut uma).await).is_some());
    let (status, _) = refresh(app, &refresh_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // The audit trail, by the administrator.
    let records = audit_of(&site, &mut root, &uma_id).await;
    let trail: Vec<(String, Option<String>)> = kinds(&records)
        .into_iter()
        .filter(|(k, _)| k.starts_with("admin.") || k == "signInRefused")
        .collect();
    let root = Some(root_id.clone());
    assert_eq!(
        trail,
        [
            ("admin.banned".to_owned(), root.clone()),
            ("signInRefused".to_owned(), None),
            ("admin.unbanned".to_owned(), root),
        ],
        "{records:?}"
    );
    let on_uma = |r: &&Value| r["kind"] == "signInRefused" || r["actor"] == root_id.as_str();
    for record in records.iter().filter(on_uma) {
        assert_eq!(record["target"], uma_id.as_str(), "{record}");
    }
    let refused = records
        .iter()
        .find(|r| r["kind"] == "signInRefused")
        .unwrap();
    let data: Value = serde_json::from_str(refused["data"].as_str().unwrap()).unwrap();
    assert_eq!(data["reason"], "banned", "{refused}");
    // The ban's record says what it closed: the session, and the wiki's grant.
    let banned = records
        .iter()
        .find(|r| r["kind"] == "admin.banned")
        .unwrap();
    let data: Value = serde_json::from_str(banned["data"].as_str().unwrap()).unwrap();
    assert_eq!(
        (
            &data["sessionsEnded"],
            &data["appsRevoked"],
            &data["after"]["reason"]
        ),
        (&json!(1), &json!(1), &json!("spam")),
        "{banned}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_signs_in_as_a_user_and_the_application_is_told() {
    let dir = TestDir::new("admin-impersonate");
    let site = Site::new(&dir.0).await;
    let app = &site.app;
    let (root_id, lou_id, uma_id) = (site.id(ROOT).await, site.id(LOU).await, site.id(UMA).await);
    let mut root = site.signed_in(ROOT).await;
    let mut uma = site.signed_in(UMA).await;

    // Neither another administrator nor oneself is signed in as; the administrator's
    // session stays theirs.
    for (user, status, error) in [
        (&lou_id, StatusCode::FORBIDDEN, "TargetIsAdmin"),
        (&root_id, StatusCode::CONFLICT, "OwnAccount"),
    ] {
        let (s, body) = post_json(
            app,
            &mut root,
            "/admin/users/impersonate",
            json!({"userId": user}),
        )
        .await;
        assert_eq!((s, body["error"].as_str()), (status, Some(error)), "{body}");
        assert_eq!(site.who(&mut root).await.as_deref(), Some(ROOT));
    }

    // Signed in as the user: the gateway admits the session as the user, and tells the
    // wiki who is at the keyboard, in the headers and the signed identity.
    let (status, body) = post_json(
        app,
        &mut root,
        "/admin/users/impersonate",
        json!({"userId": uma_id}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(site.who(&mut root).await.as_deref(), Some(UMA));
    for via in [Via::Nginx, Via::Caddy] {
        let res = ask(app, WIKI_PAGE, via, &mut root).await;
        assert_eq!(res.status(), StatusCode::OK, "{via:?}");
        assert_eq!(header_of(&res, "x-auth-request-email"), Some(UMA));
        assert_eq!(
            header_of(&res, "x-auth-request-user"),
            Some(uma_id.as_str())
        );
        assert_eq!(header_of(&res, "x-auth-request-amr"), Some("imp"));
        assert_eq!(
            header_of(&res, "x-auth-request-impersonator"),
            Some(root_id.as_str())
        );
        let claims = sso::claims(header_of(&res, "x-auth-request-jwt").unwrap());
        assert_eq!(claims["sub"], uma_id.as_str(), "{claims}");
        assert_eq!(claims["amr"], json!(["imp"]), "{claims}");
        assert_eq!(claims["act"], json!({"sub": root_id}), "{claims}");
    }
    // The account page says so at its top, with the button that ends it; the user's own
    // page does not.
    let res = in_memory::get(app, "/auth/account", &mut root).await;
    assert_eq!(res.status(), StatusCode::OK);
    let page = text(res).await;
    assert!(page.contains(r#"<aside class="impersonation""#), "{page}");
    assert!(
        page.contains(&format!(
            "You are signed in as <strong>{UMA}</strong> by administrator <strong>{ROOT}</strong>"
        )),
        "{page}"
    );
    assert!(page.contains(r#"value="impersonation-end""#), "{page}");
    let res = in_memory::get(app, "/auth/account", &mut uma).await;
    assert_eq!(res.status(), StatusCode::OK);
    let page = text(res).await;
    assert!(page.contains("Your account"), "{page}");
    assert!(!page.contains(r#"<aside class="impersonation""#), "{page}");
    assert!(!page.contains("by administrator"), "{page}");
    // The user's own session says nothing of an administrator.
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut uma).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(header_of(&res, "x-auth-request-amr"), Some("pwd"));
    assert_eq!(header_of(&res, "x-auth-request-impersonator"), Some(""));
    let claims = sso::claims(header_of(&res, "x-auth-request-jwt").unwrap());
    assert!(claims.get("act").is_none(), "{claims}");
    // The impersonation is no administrator, and the user's password stays theirs.
    let (status, body) = get_json(app, &mut root, "/admin/users?q=uma").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("Impersonating")),
        "{body}"
    );
    assert!(body.get("users").is_none());
    let (status, body) = post_json(
        app,
        &mut root,
        "/account/password",
        json!({"currentPassword": PASSWORD, "newPassword": "a fresh horse, a battery and a staple"}),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("ReauthenticationRequired")),
        "{body}"
    );
    let mut check = CookieJar::default();
    let res = sign_in_with(app, &mut check, "password", UMA, PASSWORD).await;
    assert!(!header_of(&res, "location").unwrap().contains("error="));

    // Ending it signs the session out, a copy of its cookie with it; the user's own
    // session goes on.
    let copy = root.header();
    let (status, body) = post_json(app, &mut root, "/admin/impersonation/end", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(site.who(&mut root).await, None);
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut root).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let mut replayed = jar_of(&copy);
    assert_eq!(site.who(&mut replayed).await, None);
    let res = ask(app, WIKI_PAGE, Via::Nginx, &mut replayed).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header_of(&res, "x-auth-request-email"), None);
    assert_eq!(site.who(&mut uma).await.as_deref(), Some(UMA));

    // The audit trail: the start and the end, by the administrator.
    let mut root = site.signed_in(ROOT).await;
    let records = audit_of(&site, &mut root, &uma_id).await;
    let trail: Vec<(String, Option<String>)> = kinds(&records)
        .into_iter()
        .filter(|(k, _)| k.starts_with("admin."))
        .collect();
    let root_actor = Some(root_id.clone());
    assert_eq!(
        trail,
        [
            ("admin.impersonationStarted".to_owned(), root_actor.clone()),
            ("admin.impersonationEnded".to_owned(), root_actor),
        ],
        "{records:?}"
    );
}

/// Identity headers a client may forge, in the spellings proxies and applications use.
const FORGED: [&str; 12] = [
    "X-Forwarded-User",
    "x-forwarded-user",
    "X-FORWARDED-USER",
    "X_Forwarded_User",
    "X-Auth-Request-User",
    "x_auth_request_user",
    "X-Auth-Request-Email",
    "Remote-User",
    "REMOTE_USER",
    "X-Remote-User",
    "X-Forwarded-Email",
    "X-Webauth-User",
];

/// Paths that a lenient router, proxy or normaliser could take for `/admin/users`.
const CONFUSED_PATHS: [&str; 18] = [
    "/admin/./users",
    "/admin/%2e/users",
    "/admin/%2E/users",
    "/admin/%252e/users",
    "//admin/users",
    "/admin//users",
    "/ADMIN/users",
    "/Admin/Users",
    "/admin/users%2F..",
    "/admin%2Fusers",
    "/admin%252Fusers",
    "/%61dmin/users",
    "/admin/users/",
    "/admin/users/.",
    "/admin/users;x=1",
    "/auth/../admin/users",
    "/auth/%2e%2e/admin/users",
    "/admin/users%00",
];

/// `method <path>` to what the server's listener serves, with `jar`'s cookies, `headers`
/// and `body`: the status and the body's text.
async fn raw(
    site: &Site,
    jar: &mut CookieJar,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, String) {
    let mut req = Request::builder()
        .method(method)
        .uri(format!("{ORIGIN}{path}"))
        .header(header::COOKIE, jar.header())
        .header(header::CONTENT_TYPE, "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = send(
        &site.service,
        req.body(Body::from(body.to_owned())).unwrap(),
        jar,
    )
    .await;
    let status = res.status();
    (status, text(res).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_the_admin_routes_as_anyone_but_an_administrator() {
    let dir = TestDir::new("admin-attack");
    let site = Site::new(&dir.0).await;
    let app = &site.app;
    let ids = [
        (ROOT, site.id(ROOT).await),
        (LOU, site.id(LOU).await),
        (UMA, site.id(UMA).await),
        (BOB, site.id(BOB).await),
    ];
    let bob_id = ids[3].1.clone();
    // Bob is signed in (a session an administrator could end); Uma is the attacker.
    let mut bob = site.signed_in(BOB).await;
    let mut uma = site.signed_in(UMA).await;
    let mut nobody = CookieJar::default();
    let uma_csrf = get_json(app, &mut uma, "/auth/csrf").await.1["csrfToken"].clone();
    let nobody_csrf = get_json(app, &mut nobody, "/auth/csrf").await.1["csrfToken"].clone();
    // What no answer may show: the other users' addresses and ids.
    let secrets: Vec<&str> = ids
        .iter()
        .filter(|(email, _)| *email != UMA)
        .flat_map(|(email, id)| [*email, id.as_str()])
        .collect();
    let request_of = |route: AdminRoute, csrf: &Value| -> (String, String) {
        match route.method().as_str() {
            "GET" => (
                format!("{}?q=example&id={bob_id}&userId={bob_id}", route.path()),
                String::new(),
            ),
            _ => (
                route.path().to_owned(),
                json!({
                    "csrfToken": csrf,
                    "userId": bob_id,
                    "reason": "an attack",
                    "email": "made@example.com",
                })
                .to_string(),
            ),
        }
    };

    let forged_as_root: Vec<Vec<(&str, &str)>> = FORGED
        .iter()
        .flat_map(|name| [vec![(*name, ROOT)], vec![(*name, ids[0].1.as_str())]])
        .chain([
            vec![("Authorization", "Bearer ak_made_up_0123456789abcdef")],
            vec![("Authorization", "Basic cm9vdEBleGFtcGxlLmNvbTphIGhvcnNl")],
            vec![
                ("X-Auth-Request-Groups", "admins"),
                ("X-Auth-Request-Organizations", "ops:owner"),
                ("X-Auth-Request-Impersonator", ids[0].1.as_str()),
            ],
            vec![
                ("X-Forwarded-For", "127.0.0.1"),
                ("X-Real-IP", "127.0.0.1"),
                ("X-Forwarded-Host", "localhost:3000"),
            ],
        ])
        .collect();
    let mut tried = 0;
    let mut check = |who: &str, case: &str, status: StatusCode, body: &str| {
        tried += 1;
        assert!(!status.is_success(), "{who}, {case}: {status} {body}");
        for secret in &secrets {
            assert!(!body.contains(secret), "{who}, {case}: {secret} in {body}");
        }
    };
    for route in AdminRoute::ALL {
        let method = route.method();
        for (who, jar, csrf) in [
            ("signed out", &mut nobody, &nobody_csrf),
            ("a user", &mut uma, &uma_csrf),
        ] {
            let (path, body) = request_of(route, csrf);
            let (status, answer) = raw(&site, jar, method.as_str(), &path, &[], &body).await;
            let want = match (who, route) {
                ("signed out", _) => StatusCode::UNAUTHORIZED,
                // A session that is no impersonation has none to end.
                (_, AdminRoute::EndImpersonation) => StatusCode::NOT_FOUND,
                _ => StatusCode::FORBIDDEN,
            };
            assert_eq!(status, want, "{who} {path}: {answer}");
            check(who, &path, status, &answer);
            for headers in &forged_as_root {
                let (status, answer) =
                    raw(&site, jar, method.as_str(), &path, headers, &body).await;
                check(who, &format!("{path} {headers:?}"), status, &answer);
            }
            // The other method, and a method override.
            let other = if method == "GET" { "POST" } else { "GET" };
            let (status, answer) = raw(&site, jar, other, &path, &[], &body).await;
            check(who, &format!("{other} {path}"), status, &answer);
            let (status, answer) = raw(
                &site,
                jar,
                "POST",
                &path,
                &[("X-HTTP-Method-Override", method.as_str())],
                &body,
            )
            .await;
            check(who, &format!("override {path}"), status, &answer);
        }
    }
    // Path confusion, for every client and every route's path.
    for route in AdminRoute::ALL {
        let tail = route.path().strip_prefix("/admin/users").unwrap_or("");
        for confused in CONFUSED_PATHS {
            let path = format!("{confused}{tail}");
            for (who, jar, csrf) in [
                ("signed out", &mut nobody, &nobody_csrf),
                ("a user", &mut uma, &uma_csrf),
            ] {
                let (_, body) = request_of(route, csrf);
                let query = "?q=example";
                for method in ["GET", "POST"] {
                    let (status, answer) =
                        raw(&site, jar, method, &format!("{path}{query}"), &[], &body).await;
                    check(who, &format!("{method} {path}"), status, &answer);
                }
            }
        }
    }
    // A proxy's path headers on an innocent path.
    for name in [
        "X-Original-URL",
        "X-Rewrite-URL",
        "X-Forwarded-Uri",
        "X-Forwarded-Prefix",
    ] {
        let (status, answer) = raw(
            &site,
            &mut uma,
            "GET",
            "/auth/session",
            &[(name, "/admin/users?q=example")],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        for secret in &secrets {
            assert!(!answer.contains(secret), "{name}: {answer}");
        }
    }
    assert!(tried > 500, "{tried}");

    // Nothing changed: no ban, no user made or deleted, no session ended, no impersonation.
    let adapter: &dyn Adapter = &site.db;
    let directory = adapter.user_directory().unwrap();
    for (email, id) in &ids {
        assert!(site.db.get_user(id).await.unwrap().is_some(), "{email}");
        assert_eq!(directory.get_user_ban(id).await.unwrap(), None, "{email}");
    }
    assert!(
        site.db
            .get_user_by_email("made@example.com")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(site.who(&mut bob).await.as_deref(), Some(BOB));
    assert_eq!(site.who(&mut uma).await.as_deref(), Some(UMA));
    let mut lou = site.signed_in(LOU).await;
    let (status, records) = get_json(app, &mut lou, "/admin/audit?kind=admin").await;
    assert_eq!((status, records), (StatusCode::OK, json!([])));
    let records = audit_of(&site, &mut lou, &bob_id).await;
    assert!(records.iter().all(|r| r["kind"] == "signIn"), "{records:?}");
}

/// Whether `email` signs in with `password` in a fresh browser.
async fn password_signs_in(app: &Router, email: &str, password: &str) -> bool {
    let mut jar = CookieJar::default();
    let res = sign_in_with(app, &mut jar, "password", email, password).await;
    let to = header_of(&res, "location").unwrap_or_default().to_owned();
    res.status() == StatusCode::FOUND && !to.contains("error=") && jar.has("authjs.session-token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_makes_a_user_who_sets_their_password_by_the_link_once() {
    let dir = TestDir::new("admin-setup-link");
    let site = Site::new(&dir.0).await;
    let app = &site.app;
    let new_password = "violet harbour lantern 47";
    let mut root = site.signed_in(ROOT).await;
    let (status, made) = post_json(
        app,
        &mut root,
        "/admin/users/create",
        json!({ "email": "Nina@Example.com", "name": "Nina" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{made}");
    assert_eq!(made["user"]["email"], "nina@example.com");
    let nina_id = made["user"]["id"].as_str().unwrap().to_owned();
    let link = made["setupLink"]["url"].as_str().unwrap().to_owned();
    assert_eq!(made["setupLink"]["method"], "password", "{made}");
    assert!(made["setupLink"]["mailed"].is_boolean(), "{made}");
    let path = link.strip_prefix(ORIGIN).unwrap().to_owned();
    assert!(path.starts_with("/auth/password/reset?token="), "{link}");
    assert!(!password_signs_in(app, "nina@example.com", new_password).await);

    // Nina opens the link and chooses her password: she signs in with it.
    let mut nina = CookieJar::default();
    let res = in_memory::get(app, &path, &mut nina).await;
    assert_eq!(res.status(), StatusCode::OK);
    let query: std::collections::HashMap<String, String> = url::Url::parse(&link)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let set = |password: &'static str| json!({ "token": query["token"], "user": query["user"], "password": password });
    let (status, answer) =
        post_json(app, &mut nina, "/auth/password/reset", set(new_password)).await;
    assert_eq!(
        (status, answer["status"].as_str()),
        (StatusCode::OK, Some("reset")),
        "{answer}"
    );
    assert!(password_signs_in(app, "nina@example.com", new_password).await);

    // Single use: a replay sets no other password.
    let (status, answer) = post_json(
        app,
        &mut CookieJar::default(),
        "/auth/password/reset",
        set("a replayed password of an attacker"),
    )
    .await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("Verification")),
        "{answer}"
    );
    assert!(
        !password_signs_in(
            app,
            "nina@example.com",
            "a replayed password of an attacker"
        )
        .await
    );
    assert!(password_signs_in(app, "nina@example.com", new_password).await);

    // The audit trail: made, its link made, then her sign-ins; never the link's token.
    let records = audit_of(&site, &mut root, &nina_id).await;
    let kinds = kinds(&records);
    let root_id = site.id(ROOT).await;
    assert!(
        kinds.starts_with(&[
            ("admin.userCreated".to_owned(), Some(root_id.clone())),
            ("admin.setupLinkMade".to_owned(), Some(root_id)),
        ]),
        "{kinds:?}"
    );
    assert!(
        !serde_json::to_string(&records)
            .unwrap()
            .contains(&query["token"])
    );

    // A user who is not an administrator makes no link for anyone.
    let mut uma = site.signed_in(UMA).await;
    let (status, answer) = post_json(
        app,
        &mut uma,
        "/admin/users/setup-link",
        json!({ "userId": nina_id }),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert!(answer.get("setupLink").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_the_provider_would_refuse_are_not_made() {
    let dir = TestDir::new("admin-client-rules");
    let site = Site::new(&dir.0).await;
    let app = &site.app;
    let mut root = site.signed_in(ROOT).await;
    let client = |id: &str, more: Value| {
        let mut c = json!({
            "clientId": id,
            "name": "An app",
            "redirectUris": ["https://app.example.com/cb"],
        });
        for (k, v) in more.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    // Each accepted by the administrators' own checks, refused by the provider's rules.
    let refused = [
        ("refresh-only", json!({ "grantTypes": ["refresh_token"] })),
        ("unknown-scope", json!({ "scopes": ["openid", "admin"] })),
        ("no-openid", json!({ "scopes": ["email"] })),
        (
            "offline-no-refresh",
            json!({ "scopes": ["openid", "offline_access"] }),
        ),
    ];
    for (id, more) in &refused {
        let (status, answer) = post_json(
            app,
            &mut root,
            "/admin/clients/create",
            client(id, more.clone()),
        )
        .await;
        assert_eq!(
            (status, answer["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("InvalidValue")),
            "{id}: {answer}"
        );
        assert!(answer.get("clientSecret").is_none(), "{id}");
    }
    let (status, answer) = post_json(
        app,
        &mut root,
        "/admin/clients/create",
        client(
            "fine",
            json!({ "grantTypes": ["authorization_code", "refresh_token"],
                    "scopes": ["openid", "email", "offline_access"],
                    "accessTokenFormat": "opaque" }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // A token format neither kind: refused by the administrators' own check.
    let (status, answer) = post_json(
        app,
        &mut root,
        "/admin/clients/create",
        client("paseto", json!({ "accessTokenFormat": "paseto" })),
    )
    .await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("InvalidValue")),
        "{answer}"
    );
    // The list: the one made, without its secret's hash.
    let (status, list) = get_json(app, &mut root, "/admin/clients").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let ids: Vec<_> = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["clientId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["fine"]);
    assert!(!list.to_string().contains("secretHash"), "{list}");
    assert_eq!(list["clients"][0]["hasSecret"], true);
    assert_eq!(list["clients"][0]["accessTokenFormat"], "opaque");
}
