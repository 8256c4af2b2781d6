//! The server's account-management JSON endpoints on the demo app with its
//! SQLite database: the signed-in user's methods, unlinking an account and deleting the
//! user behind CSRF, and the refusals (signed out, no or a wrong CSRF token, another
//! user's account, the last way in, a body that is not JSON).
#![allow(clippy::unwrap_used)]

use crate::support::in_memory;

use authcore::adapter::Adapter as _;
use authcore::adapter::AppAccessStore;
use authcore::types::{Account, ProviderType};
use authcore_server::ServerConfig;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use in_memory::*;
use serde_json::{Value, json};

/// The demo on a fresh SQLite file, its database, and the file's directory (removed on drop).
async fn demo() -> (Router, authcore_sqlx::SqlxAdapter, TempDir) {
    let dir = TempDir(std::env::temp_dir().join(format!(
        "authcore-account-routes-{}-{}",
        std::process::id(),
        unique_in_process()
    )));
    // A directory a crashed earlier run of a process with this id may have left.
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.0.join("demo.db").display());
    let mut config = ServerConfig::new("an account-routes test secret, long enough");
    config.database_url = Some(url.clone());
    let app = config.build().await.unwrap().router();
    let db = authcore_sqlx::SqlxAdapter::sqlite(&url).await.unwrap();
    (app, db, dir)
}

/// A number no other `demo()` of this process has used: the tests run concurrently, and two
/// clock readings can be equal (two tests then shared one database: a flaky session count).
fn unique_in_process() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn csrf(app: &Router, jar: &mut CookieJar) -> String {
    let json: Value = serde_json::from_str(&text(get(app, "/auth/csrf", jar).await).await).unwrap();
    json["csrfToken"].as_str().unwrap().to_owned()
}

/// `POST <path>` with a JSON body; the status and the JSON answer.
async fn post(app: &Router, jar: &mut CookieJar, path: &str, body: &str) -> (StatusCode, Value) {
    let req = Request::post(format!("{ORIGIN}{path}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::COOKIE, jar.header())
        .body(Body::from(body.to_owned()))
        .unwrap();
    let res = send(app, req, jar).await;
    assert_private(&res);
    let status = res.status();
    (
        status,
        serde_json::from_str(&text(res).await).unwrap_or(Value::Null),
    )
}

/// Every account answer is about one user: never cached.
fn assert_private(res: &axum::response::Response) {
    assert_eq!(
        res.headers()[header::CACHE_CONTROL],
        "private, no-cache, no-store"
    );
}

async fn methods(app: &Router, jar: &mut CookieJar) -> (StatusCode, Value) {
    let res = get(app, "/account", jar).await;
    assert_private(&res);
    let status = res.status();
    (
        status,
        serde_json::from_str(&text(res).await).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn the_signed_in_user_manages_their_accounts_behind_csrf() {
    let (app, db, _dir) = demo().await;
    let mut jar = CookieJar::default();
    assert_eq!(methods(&app, &mut jar).await.0, StatusCode::UNAUTHORIZED);
    sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    let demo = db
        .get_user_by_email("demo@example.com")
        .await
        .unwrap()
        .unwrap();
    let mut github = Account::new(ProviderType::Oauth, "github", "gh-1");
    github.user_id = Some(demo.id.clone());
    github.access_token = Some("gho_secret".into());
    db.link_account(github).await.unwrap();

    let (status, listed) = methods(&app, &mut jar).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(
        listed,
        json!({
            "accounts": [{"provider": "github", "providerAccountId": "gh-1", "type": "oauth"}],
            "passkeys": [],
            "email": "demo@example.com",
            "password": false,
        })
    );

    let token = csrf(&app, &mut jar).await;
    let unlink = |csrf: &str, id: &str| {
        json!({"csrfToken": csrf, "provider": "github", "providerAccountId": id}).to_string()
    };
    for (body, status, error) in [
        (unlink("", "gh-1"), StatusCode::FORBIDDEN, "MissingCSRF"),
        (
            unlink(&"0".repeat(64), "gh-1"),
            StatusCode::FORBIDDEN,
            "MissingCSRF",
        ),
        (unlink(&token, "gh-2"), StatusCode::NOT_FOUND, "NotFound"),
        (
            "not json".to_owned(),
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
        ),
    ] {
        let (got, answer) = post(&app, &mut jar, "/account/unlink", &body).await;
        assert_eq!(
            (got, answer["error"].as_str()),
            (status, Some(error)),
            "{body}"
        );
    }
    assert!(db.get_account("gh-1", "github").await.unwrap().is_some());

    // A passkey, named by its owner.
    db.create_authenticator(authcore::types::Authenticator {
        credential_id: "cred-1".into(),
        user_id: Some(demo.id.clone()),
        provider_account_id: "cred-1".into(),
        credential_public_key: "pk".into(),
        counter: 0,
        credential_device_type: "multiDevice".into(),
        credential_backed_up: true,
        transports: None,
        name: None,
    })
    .await
    .unwrap();
    let rename = |name: &str| {
        json!({"csrfToken": token, "credentialID": "cred-1", "name": name}).to_string()
    };
    let (status, named) = post(
        &app,
        &mut jar,
        "/account/passkeys/rename",
        &rename("Laptop"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{named}");
    assert_eq!(named["passkeys"][0]["name"], "Laptop");
    let (status, answer) = post(
        &app,
        &mut jar,
        "/account/passkeys/rename",
        &rename(&"x".repeat(65)),
    )
    .await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("InvalidName"))
    );

    // Magic links remain: the GitHub account may go.
    let (status, left) = post(&app, &mut jar, "/account/unlink", &unlink(&token, "gh-1")).await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left["accounts"], json!([]));
    assert!(db.get_account("gh-1", "github").await.unwrap().is_none());

    let body = json!({"csrfToken": token}).to_string();
    let (status, _) = post(&app, &mut jar, "/account/delete", &body).await;
    assert_eq!(status, StatusCode::OK);
    assert!(db.get_user(&demo.id).await.unwrap().is_none());
    assert_eq!(
        methods(&app, &mut jar).await.0,
        StatusCode::UNAUTHORIZED,
        "signed out"
    );
    // The deleted demo user comes back, as a new row, at the next password sign-in.
    sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    let (status, listed) = methods(&app, &mut jar).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let again = db
        .get_user_by_email("demo@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_ne!(again.id, demo.id);
}

#[tokio::test]
async fn the_signed_in_user_lists_and_revokes_their_sessions() {
    let (app, _db, _dir) = demo().await;
    let (mut laptop, mut phone, mut tablet) = (
        CookieJar::default(),
        CookieJar::default(),
        CookieJar::default(),
    );
    for jar in [&mut laptop, &mut phone, &mut tablet] {
        sign_in(&app, jar, "demo", "authcore-demo").await;
    }
    let res = get(&app, "/account/sessions", &mut laptop).await;
    assert_private(&res);
    assert_eq!(res.status(), StatusCode::OK);
    let list: Value = serde_json::from_str(&text(res).await).unwrap();
    let list = list.as_array().unwrap().clone();
    assert_eq!(list.len(), 3, "{list:?}");
    let current: Vec<&Value> = list.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1, "{list:?}");
    for s in &list {
        assert_eq!(s["userAgent"], "authcore-test-browser/1.0", "{s}");
        assert!(
            s["createdAt"].is_string() && s["lastSeenAt"].is_string(),
            "{s}"
        );
        assert_eq!(s["id"].as_str().unwrap().len(), 32, "{s}");
        let token = &laptop.0["authjs.session-token"];
        assert!(
            !s.to_string().contains(token.as_str()),
            "no token in the list: {s}"
        );
    }
    let other = list.iter().find(|s| s["current"] == false).unwrap()["id"].clone();

    let token = csrf(&app, &mut laptop).await;
    let revoke = |id: &Value| json!({"csrfToken": token, "id": id}).to_string();
    let (status, answer) = post(
        &app,
        &mut laptop,
        "/account/sessions/revoke",
        &revoke(&json!("f".repeat(32))),
    )
    .await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("NotFound"))
    );
    let (status, left) = post(
        &app,
        &mut laptop,
        "/account/sessions/revoke",
        &revoke(&other),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left.as_array().unwrap().len(), 2, "{left}");

    // Sign out everywhere else: the phone and the tablet are signed out, the laptop is not.
    let body = json!({"csrfToken": token}).to_string();
    let (status, left) = post(&app, &mut laptop, "/account/sessions/revoke-others", &body).await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    assert_eq!(left[0]["current"], true);
    for jar in [&mut phone, &mut tablet] {
        assert_eq!(methods(&app, jar).await.0, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(methods(&app, &mut laptop).await.0, StatusCode::OK);
}

/// "Apps with access": the applications the user signed in to through authcore as an OpenID
/// Provider, listed by client id; revoking one behind CSRF clears its scopes and moves its
/// epoch on. Refused, with nothing revoked: signed out, no or a wrong CSRF token, an app
/// the user never allowed, another user's app, a body that is not JSON.
#[tokio::test]
async fn the_signed_in_user_lists_and_revokes_apps_with_access() {
    let (app, db, _dir) = demo().await;
    let mut jar = CookieJar::default();
    let apps = async |jar: &mut CookieJar| {
        let res = get(&app, "/account/apps", jar).await;
        assert_private(&res);
        let status = res.status();
        (
            status,
            serde_json::from_str::<Value>(&text(res).await).unwrap_or(Value::Null),
        )
    };
    assert_eq!(apps(&mut jar).await.0, StatusCode::UNAUTHORIZED);
    sign_in(&app, &mut jar, "demo", "authcore-demo").await;
    let demo = db
        .get_user_by_email("demo@example.com")
        .await
        .unwrap()
        .unwrap();
    let other = db
        .create_user(authcore::adapter::NewUser {
            email: Some("other@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let now = time::OffsetDateTime::now_utc();
    let scopes = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    for (user, client, name) in [
        (&demo.id, "wiki", "The Wiki"),
        (&demo.id, "git", "Git Forge"),
        (&other.id, "chat", "Chat"),
    ] {
        db.grant_app_access(user, client, name, &scopes(&["openid", "email"]), now)
            .await
            .unwrap();
    }

    let (status, listed) = apps(&mut jar).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["clientId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["git", "wiki"], "{listed}");
    assert_eq!(listed[1]["name"], "The Wiki");
    assert_eq!(listed[1]["scopes"], json!(["email", "openid"]));
    assert!(listed[1]["grantedAt"].is_string(), "{listed}");

    let token = csrf(&app, &mut jar).await;
    let revoke =
        |csrf: &str, client: &str| json!({"csrfToken": csrf, "clientId": client}).to_string();
    for (body, status, error) in [
        (revoke("", "wiki"), StatusCode::FORBIDDEN, "MissingCSRF"),
        (
            revoke(&"0".repeat(64), "wiki"),
            StatusCode::FORBIDDEN,
            "MissingCSRF",
        ),
        (
            revoke(&token, "never-allowed"),
            StatusCode::NOT_FOUND,
            "NotFound",
        ),
        (revoke(&token, "chat"), StatusCode::NOT_FOUND, "NotFound"),
        (
            json!({"csrfToken": token}).to_string(),
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
        ),
        (
            "not json".to_owned(),
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
        ),
    ] {
        let (got, answer) = post(&app, &mut jar, "/account/apps/revoke", &body).await;
        assert_eq!(
            (got, answer["error"].as_str()),
            (status, Some(error)),
            "{body}"
        );
    }
    let mut nobody = CookieJar::default();
    let (got, _) = post(
        &app,
        &mut nobody,
        "/account/apps/revoke",
        &revoke(&token, "wiki"),
    )
    .await;
    assert_eq!(got, StatusCode::UNAUTHORIZED);
    for (user, client) in [(&demo.id, "wiki"), (&demo.id, "git"), (&other.id, "chat")] {
        let access = db.get_app_access(user, client).await.unwrap().unwrap();
        assert_eq!(
            (access.epoch, access.scopes.len()),
            (0, 2),
            "{client}: nothing revoked"
        );
    }

    let (status, left) = post(
        &app,
        &mut jar,
        "/account/apps/revoke",
        &revoke(&token, "wiki"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    assert_eq!(left[0]["clientId"], "git");
    let wiki = db.get_app_access(&demo.id, "wiki").await.unwrap().unwrap();
    assert_eq!((wiki.epoch, wiki.scopes.len()), (1, 0));
    // Revoked already: nothing more to revoke.
    let (status, _) = post(
        &app,
        &mut jar,
        "/account/apps/revoke",
        &revoke(&token, "wiki"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        db.get_app_access(&demo.id, "wiki")
            .await
            .unwrap()
            .unwrap()
            .epoch,
        1
    );
}
