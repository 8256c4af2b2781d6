//! The administrators' page (`<basePath>/admin`): signed out it sends to sign in and back;
//! for anyone but an administrator, and for an impersonated session, it is a 403 page with
//! nothing of the administrators' content; for an administrator it finds users page by
//! page, shows one with their ban, and each form (a CSRF-checked post) does what the JSON
//! routes do and redirects back; a change of a stale sign-in offers to sign in again; the
//! audit log reads newest first, filtered and paged. The account page of an impersonated
//! session (database or JWT) carries a banner whose button ends the impersonation. Nothing
//! from users or the request is echoed unescaped.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use authcore::adapter::{
    Adapter, MemoryAdapter, NewUser, TwoFactor, TwoFactorStore, UserBan, UserDirectoryStore,
};
use authcore::admin::Admins;
use authcore::audit::{AuditEvent, AuditLog};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Account, Auth, ProviderType, SessionStrategy, User};
use serde_json::Value;
use std::time::Duration;

struct App {
    auth: Auth,
    db: MemoryAdapter,
    /// The administrator, root@example.com.
    root: String,
    /// A user, ada@example.com, with a GitHub account.
    ada: String,
}

/// Root (an administrator, password `root`) and Ada (password `pw`), database sessions,
/// the audit log stored, organizations; `more` adjusts the configuration.
async fn app_with(
    more: impl FnOnce(authcore::AuthConfigBuilder) -> authcore::AuthConfigBuilder,
) -> App {
    let db = MemoryAdapter::new();
    let root = stored_user(&db, "root@example.com", true).await;
    let ada = db
        .create_user(NewUser {
            email: Some("ada@example.com".into()),
            name: Some("Ada Lovelace".into()),
            ..NewUser::default()
        })
        .await
        .unwrap()
        .id;
    let mut github = Account::new(ProviderType::Oauth, "github", "gh-1");
    github.user_id = Some(ada.clone());
    db.link_account(github).await.unwrap();
    let passwords = [
        ("root@example.com", "root", root.clone()),
        ("ada@example.com", "pw", ada.clone()),
    ];
    let credentials = CredentialsProvider::new()
        .field("email", CredentialField::new("Email"))
        .field("password", CredentialField::new("Password"))
        .authorize(move |c, _| {
            let get = |k: &str| {
                c.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let found = passwords
                .iter()
                .find(|(e, p, _)| *e == get("email") && *p == get("password"))
                .map(|(e, _, id)| User::with_id(id.clone()).email(*e));
            async move { Ok(found) }
        });
    let (auth, _) = auth_with(more(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(credentials)
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .organizations(authcore::organizations::Organizations::new())
            .audit_log(AuditLog::new().store(true))
            .admins(Admins::new().user(&root)),
    ));
    App {
        auth,
        db,
        root,
        ada,
    }
}

async fn default_app() -> App {
    app_with(|b| b).await
}

/// A browser's `Cookie` header after signing in with `email` and `password` by the form
/// (the session and the CSRF pair's cookie).
async fn sign_in(app: &App, email: &str, password: &str) -> String {
    let r = post_credentials(&app.auth, &[("email", email), ("password", password)]).await;
    let session = r
        .cookie(SESSION_COOKIE)
        .unwrap_or_else(|| panic!("{email} signs in: {r:?}"));
    let (csrf, _) = csrf_pair();
    format!("{SESSION_COOKIE}={session}; {csrf}")
}

async fn root(app: &App) -> String {
    sign_in(app, "root@example.com", "root").await
}

/// A change on the administrators' page.
async fn change(app: &App, cookie: &str, op: &str, fields: &[(&str, &str)]) -> TestResponse {
    post_op(&app.auth, cookie, "/auth/admin", op, fields).await
}

fn user_path(id: &str) -> String {
    format!("/auth/admin?user={}", urlencode(id))
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The path of a page's "next" link (its `&` unescaped).
fn next_link(html: &str) -> String {
    let href = html
        .split("rel=\"next\"")
        .next()
        .and_then(|h| h.rsplit("href=\"").next())
        .and_then(|h| h.split('"').next())
        .unwrap();
    href.replace("&#38;", "&")
        .trim_start_matches(ORIGIN)
        .to_owned()
}

/// What only the administrators' content shows.
const ADMIN_CONTENT: &[&str] = &[
    "Find users",
    "Create a user",
    "Audit log",
    "ada@example.com",
    "root@example.com",
    "name=\"op\" value=\"ban\"",
];

/// The cookie header of a response's session cookie, with the CSRF pair's cookie.
fn session_of_response(r: &TestResponse) -> String {
    let session = r.cookie(SESSION_COOKIE).expect("a session cookie");
    let (csrf, _) = csrf_pair();
    format!("{SESSION_COOKIE}={session}; {csrf}")
}

#[tokio::test]
async fn signed_out_visitors_are_sent_to_sign_in_and_back() {
    let app = default_app().await;
    let r = page_at(&app.auth, "", "/auth/admin?user=u1").await;
    assert_eq!(
        r.location(),
        Some(
            "https://authjs.test/auth/signin?callbackUrl=https%3A%2F%2Fauthjs.test%2Fauth%2Fadmin%3Fuser%3Du1"
        )
    );
    // A change without a session changes nothing.
    let (csrf, _) = csrf_pair();
    let r = change(&app, &csrf, "ban", &[("userId", &app.ada), ("reason", "x")]).await;
    assert!(r.location().unwrap().contains("/auth/signin"), "{r:?}");
    assert_eq!(app.auth.ban_of(&app.ada).await.unwrap(), None);
}

#[tokio::test]
async fn without_administrators_the_action_is_unknown() {
    let with = default_app().await;
    let without = app_with(|b| b.admins(Admins::new())).await;
    // An administrators' list that names nobody still is a configuration: the page exists.
    let r = page_at(&without.auth, &root(&without).await, "/auth/admin").await;
    assert_eq!(r.status, 403, "{}", r.text());
    let (auth, _) = auth_with(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(credentials())
            .adapter(MemoryAdapter::new())
            .credentials_database_sessions(true),
    );
    for method in ["GET", "POST"] {
        let request = |path: &str| {
            http::Request::builder()
                .method(method)
                .uri(url(path))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(empty())
                .unwrap()
        };
        let admin = send(&auth, request("/auth/admin")).await;
        // As an action no configuration has (second factors are off here).
        let unknown = send(&auth, request("/auth/two-factor")).await;
        assert_eq!(admin.status, unknown.status, "{method}");
        assert_eq!(
            admin.location().map(|l| l.replace("two-factor", "admin")),
            unknown.location().map(|l| l.replace("two-factor", "admin")),
            "{method}"
        );
        assert!(!admin.text().contains("Administration"), "{method}");
    }
    let r = page_at(&with.auth, &root(&with).await, "/auth/admin").await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn anyone_but_an_administrator_gets_a_403_page() {
    let app = default_app().await;
    let ada = sign_in(&app, "ada@example.com", "pw").await;
    for path in [
        "/auth/admin".to_owned(),
        user_path(&app.root),
        "/auth/admin?view=audit".to_owned(),
    ] {
        let r = page_at(&app.auth, &ada, &path).await;
        assert_eq!(r.status, 403, "{path}");
        assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
        let html = r.text();
        assert!(html.contains("This page is for administrators."), "{html}");
        for text in ADMIN_CONTENT {
            assert!(!html.contains(text), "{path}: {text} in {html}");
        }
    }
    // Nor may she change anything by posting the forms.
    let r = change(
        &app,
        &ada,
        "ban",
        &[("userId", &app.root), ("reason", "a coup")],
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(app.auth.ban_of(&app.root).await.unwrap(), None);
    let r = change(&app, &ada, "create", &[("email", "mallory@example.com")]).await;
    assert_eq!(r.status, 403);
    assert!(
        app.db
            .get_user_by_email("mallory@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn changes_need_the_csrf_token() {
    let app = default_app().await;
    let cookie = root(&app).await;
    let session_only = cookie.split("; ").next().unwrap().to_owned();
    for (cookie, token) in [
        (session_only.as_str(), "a".repeat(64)),
        (cookie.as_str(), "b".repeat(64)),
        (cookie.as_str(), String::new()),
    ] {
        let r = send(
            &app.auth,
            post("/auth/admin")
                .header("cookie", cookie)
                .body(form(&[
                    ("csrfToken", &token),
                    ("op", "ban"),
                    ("userId", &app.ada),
                    ("reason", "spam"),
                ]))
                .unwrap(),
        )
        .await;
        assert!(
            r.location().unwrap().contains("error=MissingCSRF"),
            "{:?}",
            r.location()
        );
    }
    assert_eq!(app.auth.ban_of(&app.ada).await.unwrap(), None);
}

#[tokio::test]
async fn the_search_finds_users_a_page_at_a_time() {
    let app = default_app().await;
    for i in 0..30 {
        stored_user(&app.db, &format!("user{i:02}@example.com"), false).await;
    }
    let cookie = root(&app).await;
    let r = page_at(&app.auth, &cookie, "/auth/admin").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    assert!(
        r.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    let html = r.text();
    assert!(html.contains("Signed in as root@example.com"), "{html}");
    assert_eq!(html.matches("/auth/admin?user=").count(), 25, "{html}");
    let next = next_link(&html);
    assert!(next.contains("after="), "{next}");
    let r = page_at(&app.auth, &cookie, &next).await;
    let rest = r.text();
    assert_eq!(rest.matches("/auth/admin?user=").count(), 7, "{rest}");
    assert!(!rest.contains("rel=\"next\""));

    // By text in the address or name, by provider.
    for (query, want, not) in [
        ("q=LOVELACE", "ada@example.com", "user01@example.com"),
        ("q=user07", "user07@example.com", "ada@example.com"),
        ("provider=github", "ada@example.com", "user01@example.com"),
    ] {
        let html = page_at(&app.auth, &cookie, &format!("/auth/admin?{query}"))
            .await
            .text();
        assert!(html.contains(want), "{query}: {html}");
        assert!(!html.contains(not), "{query}: {html}");
    }
    let html = page_at(&app.auth, &cookie, "/auth/admin?q=nobody-at-all")
        .await
        .text();
    assert!(html.contains("No user matches."), "{html}");
}

#[tokio::test]
async fn a_user_page_shows_the_user_and_their_ban() {
    let app = default_app().await;
    let cookie = root(&app).await;
    let html = page_at(&app.auth, &cookie, &user_path(&app.ada))
        .await
        .text();
    for text in [
        "ada@example.com",
        "Ada Lovelace",
        "github (oauth)",
        "Not banned.",
        "Sign in as this user",
        "End every session",
        "Delete user",
    ] {
        assert!(html.contains(text), "{text}: {html}");
    }
    assert!(!html.contains(">Banned<"), "{html}");
    let until = time::OffsetDateTime::now_utc() + time::Duration::days(3);
    app.db
        .set_user_ban(
            &app.ada,
            Some(&UserBan {
                reason: "Sent spam & worse".into(),
                at: time::OffsetDateTime::now_utc(),
                until: Some(until),
                by: Some(app.root.clone()),
            }),
        )
        .await
        .unwrap();
    let html = page_at(&app.auth, &cookie, &user_path(&app.ada))
        .await
        .text();
    for text in [
        ">Banned<",
        "Sent spam &#38; worse",
        " by root@example.com<",
        &format!("{} ", until.date()),
        "Lift the ban",
    ] {
        assert!(html.contains(text), "{text}: {html}");
    }
    // A banned user is not offered for impersonation.
    assert!(!html.contains("Sign in as this user"), "{html}");
    // No such user: the search, with why.
    let r = page_at(&app.auth, &cookie, "/auth/admin?user=nobody").await;
    assert_eq!(r.status, 404);
    assert!(r.text().contains("There is no such user"), "{}", r.text());
}

#[tokio::test]
async fn ban_and_lift_it() {
    let app = default_app().await;
    let ada = sign_in(&app, "ada@example.com", "pw").await;
    let cookie = root(&app).await;
    let tomorrow = (time::OffsetDateTime::now_utc() + time::Duration::days(1)).date();
    let r = change(
        &app,
        &cookie,
        "ban",
        &[
            ("userId", &app.ada),
            ("reason", "Abuse reports"),
            ("until", &tomorrow.to_string()),
        ],
    )
    .await;
    assert_eq!(
        r.location(),
        Some(format!("{ORIGIN}{}&notice=banned", user_path(&app.ada)).as_str())
    );
    let ban = app.auth.ban_of(&app.ada).await.unwrap().unwrap();
    assert_eq!(ban.reason, "Abuse reports");
    assert_eq!(ban.until, Some(tomorrow.midnight().assume_utc()));
    assert_eq!(ban.by.as_deref(), Some(app.root.as_str()));
    // Her session ended with it.
    assert_eq!(get_session(&app.auth, &ada).await.json(), Value::Null);
    let html = follow(&app.auth, &cookie, &r).await.text();
    assert!(html.contains("The user is banned"), "{html}");
    assert!(html.contains("Abuse reports"), "{html}");

    let r = change(&app, &cookie, "unban", &[("userId", &app.ada)]).await;
    assert!(r.location().unwrap().ends_with("&notice=unbanned"), "{r:?}");
    assert_eq!(app.auth.ban_of(&app.ada).await.unwrap(), None);
    let html = follow(&app.auth, &cookie, &r).await.text();
    assert!(html.contains("The ban was lifted."), "{html}");

    // A ban without a reason, or with an end that is not a date, is refused with why.
    for (reason, until, why) in [
        ("", "", "That value is not valid: a ban&#39;s reason"),
        (
            "x",
            "soon",
            "That value is not valid: a ban&#39;s end is a date",
        ),
        (
            "x",
            "2001-01-01",
            "That value is not valid: a ban&#39;s end is in the future",
        ),
    ] {
        let r = change(
            &app,
            &cookie,
            "ban",
            &[("userId", &app.ada), ("reason", reason), ("until", until)],
        )
        .await;
        assert_eq!(r.status, 200);
        let html = r.text();
        assert!(html.contains(why), "{why}: {html}");
        assert!(html.contains("Ada Lovelace"), "the user's page again");
        assert_eq!(app.auth.ban_of(&app.ada).await.unwrap(), None);
    }
}

#[tokio::test]
async fn end_sessions_reset_the_second_factor_create_and_delete() {
    let app = default_app().await;
    let ada = sign_in(&app, "ada@example.com", "pw").await;
    let cookie = root(&app).await;

    // Every session of Ada's ends.
    let html = page_at(&app.auth, &cookie, &user_path(&app.ada))
        .await
        .text();
    assert!(html.contains("Sessions"), "{html}");
    let r = change(&app, &cookie, "end-sessions", &[("userId", &app.ada)]).await;
    assert!(r.location().unwrap().ends_with("&notice=sessions-ended"));
    assert_eq!(get_session(&app.auth, &ada).await.json(), Value::Null);
    assert!(get_session(&app.auth, &cookie).await.json()["user"].is_object());

    // Her authenticator app goes.
    let store = &app.db;
    store
        .set_two_factor(TwoFactor {
            user_id: app.ada.clone(),
            totp_secret: "sealed".into(),
            totp_confirmed_at: Some(time::OffsetDateTime::now_utc()),
        })
        .await
        .unwrap();
    let html = page_at(&app.auth, &cookie, &user_path(&app.ada))
        .await
        .text();
    assert!(html.contains("Authenticator app on"), "{html}");
    let r = change(&app, &cookie, "reset-two-factor", &[("userId", &app.ada)]).await;
    assert!(r.location().unwrap().ends_with("&notice=two-factor-reset"));
    assert_eq!(store.get_two_factor(&app.ada).await.unwrap(), None);
    let html = follow(&app.auth, &cookie, &r).await.text();
    assert!(!html.contains("Reset the second factor"), "{html}");
    let r = change(&app, &cookie, "reset-two-factor", &[("userId", &app.ada)]).await;
    assert!(r.text().contains("The user has no authenticator app."));

    // A new user, then their page.
    let r = change(
        &app,
        &cookie,
        "create",
        &[("email", "New@Example.com"), ("name", "Newt")],
    )
    .await;
    let made = app
        .db
        .get_user_by_email("new@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.name.as_deref(), Some("Newt"));
    // Neither password accounts nor magic links here: the user's page, without a link.
    assert_eq!(r.status, 200, "{:?}", r.location());
    let html = r.text();
    assert!(
        html.contains("The user was created, without a set-up link"),
        "{html}"
    );
    assert!(
        html.contains("new@example.com") && !html.contains("setup-url"),
        "{html}"
    );
    let html = change(&app, &cookie, "setup-link", &[("userId", &made.id)])
        .await
        .text();
    assert!(html.contains("No set-up link can be made"), "{html}");
    for (email, why) in [
        ("new@example.com", "a user has this email address"),
        ("not an address", "That is not an email address."),
    ] {
        let html = change(&app, &cookie, "create", &[("email", email)])
            .await
            .text();
        assert!(html.contains(why), "{email}: {html}");
    }

    // Deletion needs the box ticked.
    let r = change(&app, &cookie, "delete", &[("userId", &made.id)]).await;
    assert!(r.text().contains("Tick the box"), "{}", r.text());
    assert!(app.db.get_user(&made.id).await.unwrap().is_some());
    let r = change(
        &app,
        &cookie,
        "delete",
        &[("userId", &made.id), ("confirm", "yes")],
    )
    .await;
    assert_eq!(
        r.location(),
        Some(format!("{ORIGIN}/auth/admin?notice=deleted").as_str())
    );
    assert!(app.db.get_user(&made.id).await.unwrap().is_none());
    assert!(
        follow(&app.auth, &cookie, &r)
            .await
            .text()
            .contains("The user was deleted.")
    );

    // An unknown change is said to be one.
    let html = change(&app, &cookie, "promote", &[("userId", &app.ada)])
        .await
        .text();
    assert!(html.contains("That change is not known."), "{html}");
}

#[tokio::test]
async fn own_account_and_other_administrators_are_refused() {
    // Administrators listed by their verified addresses.
    let app = app_with(|b| {
        b.admins(
            Admins::new()
                .user("root@example.com")
                .user("ops@example.com"),
        )
    })
    .await;
    let other = stored_user(&app.db, "ops@example.com", true).await;
    let cookie = root(&app).await;
    let html = page_at(&app.auth, &cookie, &user_path(&app.root))
        .await
        .text();
    assert!(html.contains("Your own account"), "{html}");
    assert!(!html.contains("name=\"op\" value=\"delete\""), "{html}");
    let html = change(
        &app,
        &cookie,
        "ban",
        &[("userId", &app.root), ("reason", "oops")],
    )
    .await
    .text();
    assert!(html.contains("That is your own account"), "{html}");

    let html = page_at(&app.auth, &cookie, &user_path(&other)).await.text();
    assert!(html.contains("Administrator"), "{html}");
    assert!(!html.contains("Sign in as this user"), "{html}");
    let r = change(&app, &cookie, "impersonate", &[("userId", &other)]).await;
    assert!(
        r.text()
            .contains("Administrators are neither impersonated nor given set-up links."),
        "{}",
        r.text()
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
}

#[tokio::test]
async fn a_stale_sign_in_is_asked_to_sign_in_again() {
    let app = default_app().await;
    let (session, _) = session_of(
        &app.auth,
        &app.db,
        &app.root,
        Duration::from_secs(3600),
        &["pwd"],
    )
    .await;
    let (csrf, _) = csrf_pair();
    let cookie = format!("{session}; {csrf}");
    // Reading needs no recent sign-in.
    assert_eq!(
        page_at(&app.auth, &cookie, &user_path(&app.ada))
            .await
            .status,
        200
    );
    let r = change(
        &app,
        &cookie,
        "ban",
        &[("userId", &app.ada), ("reason", "spam")],
    )
    .await;
    let html = r.text();
    assert!(
        html.contains("This change needs a recent sign-in"),
        "{html}"
    );
    let back = format!("{ORIGIN}{}", user_path(&app.ada));
    assert!(
        html.contains(&format!(
            "href=\"{ORIGIN}/auth/signin?callbackUrl={}\">Sign in again",
            urlencode(&back).replace("+", "%20")
        )),
        "{html}"
    );
    assert_eq!(app.auth.ban_of(&app.ada).await.unwrap(), None);
}

#[tokio::test]
async fn impersonation_shows_a_banner_and_ends_by_one_click() {
    for strategy in [SessionStrategy::Database, SessionStrategy::Jwt] {
        // JWT sessions with administrators keep a revocation list.
        let app = app_with(|b| b.session_strategy(strategy).jwt_revocation(true)).await;
        assert_eq!(app.auth.config().session_strategy(), strategy);
        let cookie = root(&app).await;
        let r = change(&app, &cookie, "impersonate", &[("userId", &app.ada)]).await;
        assert_eq!(
            r.location(),
            Some(format!("{ORIGIN}/auth/account").as_str())
        );
        let as_ada = session_of_response(&r);
        let session = get_session(&app.auth, &as_ada).await.json();
        assert_eq!(session["user"]["email"], "ada@example.com");

        // The account page says who is signed in as whom, until when.
        let html = follow(&app.auth, &as_ada, &r).await.text();
        assert!(
            html.contains(
                "You are signed in as <strong>ada@example.com</strong> by administrator \
                 <strong>root@example.com</strong>, until "
            ),
            "{html}"
        );
        assert!(html.contains("End impersonation"), "{html}");
        // Ada's own page, without an impersonation, has no banner.
        let ada = sign_in(&app, "ada@example.com", "pw").await;
        let own = page_at(&app.auth, &ada, "/auth/account").await.text();
        assert!(!own.contains("End impersonation"), "{own}");

        // The impersonation may not administer: a 403 page that offers to end it.
        let r = page_at(&app.auth, &as_ada, "/auth/admin").await;
        assert_eq!(r.status, 403);
        let html = r.text();
        assert!(html.contains("End impersonation"), "{html}");
        for text in ADMIN_CONTENT {
            assert!(!html.contains(text), "{text} in {html}");
        }
        let r = change(&app, &as_ada, "end-sessions", &[("userId", &app.root)]).await;
        assert_eq!(r.status, 403);
        // Nor make a sensitive change on the account page.
        let r = post_op(
            &app.auth,
            &as_ada,
            "/auth/account",
            "delete",
            &[("confirm", "yes")],
        )
        .await;
        let html = r.text();
        assert!(
            html.contains("Not while you are signed in as this user by an administrator."),
            "{html}"
        );
        assert!(!html.contains("Sign in again"), "{html}");
        assert!(app.db.get_user(&app.ada).await.unwrap().is_some());

        // One click ends it: signed out, and to sign in again, back to Ada's page.
        let r = post_op(
            &app.auth,
            &as_ada,
            "/auth/account",
            "impersonation-end",
            &[],
        )
        .await;
        let back = format!("{ORIGIN}{}", user_path(&app.ada));
        assert_eq!(
            r.location(),
            Some(format!("{ORIGIN}/auth/signin?callbackUrl={}", urlencode(&back)).as_str())
        );
        assert!(
            r.set_cookie_header(SESSION_COOKIE)
                .is_some_and(|c| c.contains("Max-Age=0") || c.contains("Expires=Thu, 01 Jan 1970")),
            "{:?}",
            r.set_cookies()
        );
        assert_eq!(get_session(&app.auth, &as_ada).await.json(), Value::Null);
        // Ada's own session lives on.
        assert!(get_session(&app.auth, &ada).await.json()["user"].is_object());
        // Both ends are in the audit log.
        let kinds: Vec<String> = app
            .auth
            .audit_records(&authcore::adapter::AuditQuery {
                kind: Some("admin".into()),
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(
            kinds,
            ["admin.impersonationEnded", "admin.impersonationStarted"]
        );
    }
}

#[tokio::test]
async fn names_and_queries_are_escaped() {
    let app = default_app().await;
    let evil = app
        .db
        .create_user(NewUser {
            name: Some("<script>alert(1)</script>".into()),
            ..NewUser::default()
        })
        .await
        .unwrap()
        .id;
    let cookie = root(&app).await;
    for path in [
        "/auth/admin".to_owned(),
        "/auth/admin?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E".to_owned(),
        user_path(&evil),
        "/auth/admin?view=audit&kind=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E".to_owned(),
        "/auth/admin?notice=%3Cscript%3E".to_owned(),
    ] {
        let html = page_at(&app.auth, &cookie, &path).await.text();
        assert!(!html.contains("<script>alert(1)"), "{path}: {html}");
        assert!(!html.contains("\"><script>"), "{path}: {html}");
    }
    let html = page_at(&app.auth, &cookie, &user_path(&evil)).await.text();
    assert!(
        html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{html}"
    );
}

#[tokio::test]
async fn the_audit_log_reads_newest_first_filtered_and_paged() {
    let app = default_app().await;
    let cookie = root(&app).await;
    change(
        &app,
        &cookie,
        "ban",
        &[("userId", &app.ada), ("reason", "spam")],
    )
    .await;
    change(&app, &cookie, "unban", &[("userId", &app.ada)]).await;
    let html = page_at(&app.auth, &cookie, "/auth/admin?view=audit&kind=admin")
        .await
        .text();
    let (banned, unbanned) = (
        html.find("admin.banned").unwrap(),
        html.find("admin.unbanned").unwrap(),
    );
    assert!(unbanned < banned, "newest first: {html}");
    assert!(html.contains(&format!("?user={}", app.ada)), "{html}");
    let html = page_at(
        &app.auth,
        &cookie,
        "/auth/admin?view=audit&kind=admin.banned",
    )
    .await
    .text();
    assert!(html.contains("admin.banned") && !html.contains("admin.unbanned"));
    let html = page_at(
        &app.auth,
        &cookie,
        &format!("/auth/admin?view=audit&user={}", app.root),
    )
    .await
    .text();
    assert!(html.contains("admin.banned"), "{html}");

    // Dates: the day given is included; another day has none of today's.
    let today = time::OffsetDateTime::now_utc().date();
    let html = page_at(
        &app.auth,
        &cookie,
        &format!("/auth/admin?view=audit&kind=admin&since={today}&until={today}"),
    )
    .await
    .text();
    assert!(html.contains("admin.banned"), "{html}");
    let html = page_at(
        &app.auth,
        &cookie,
        "/auth/admin?view=audit&kind=admin&until=2001-01-01",
    )
    .await
    .text();
    assert!(html.contains("No record matches."), "{html}");
    let r = page_at(&app.auth, &cookie, "/auth/admin?view=audit&since=yesterday").await;
    assert_eq!(r.status, 400);
    assert!(r.text().contains("a date is YYYY-MM-DD"), "{}", r.text());

    // Paged by cursor: 60 more records, 50 a page, then the rest.
    for i in 0..60 {
        app.auth
            .record_audit(AuditEvent::new("test.filler").with("i", i))
            .await;
    }
    let html = page_at(&app.auth, &cookie, "/auth/admin?view=audit&kind=test")
        .await
        .text();
    assert_eq!(html.matches("test.filler").count(), 50, "{html}");
    let next = next_link(&html);
    assert!(next.contains("cursor="), "{next}");
    let html = page_at(&app.auth, &cookie, &next).await.text();
    assert_eq!(html.matches("test.filler").count(), 10, "{html}");

    // Without a stored log the view is not offered.
    let quiet = app_with(|b| b.audit_log(AuditLog::new())).await;
    let cookie = root(&quiet).await;
    let html = page_at(&quiet.auth, &cookie, "/auth/admin").await.text();
    assert!(!html.contains("view=audit"), "{html}");
    let html = page_at(&quiet.auth, &cookie, "/auth/admin?view=audit")
        .await
        .text();
    assert!(html.contains("The audit log is not stored."), "{html}");
}

#[tokio::test]
async fn a_new_user_s_set_up_link_is_shown_once_on_the_answer_never_in_a_url() {
    let mailbox = Mailbox::default();
    let provider = mailbox.provider();
    let app = app_with(move |b| b.provider(provider)).await;
    let cookie = root(&app).await;
    let r = change(&app, &cookie, "create", &[("email", "zoe@example.com")]).await;
    assert_eq!(r.status, 200, "{:?}", r.location());
    assert!(r.location().is_none());
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    let link = mailbox.last(
        "zoe@example.com",
        authcore::providers::email::LinkPurpose::AccountSetup,
    );
    let html = r.text();
    assert!(
        html.contains("The user was created, with the set-up link below."),
        "{html}"
    );
    assert!(html.contains("It was mailed to the user"), "{html}");
    // The link, escaped as an attribute value.
    let shown = link.replace('&', "&#38;");
    assert!(html.contains(&format!("value=\"{shown}\"")), "{html}");
    // A new one from the user's page: another link, shown on the answer.
    let zoe = app
        .db
        .get_user_by_email("zoe@example.com")
        .await
        .unwrap()
        .unwrap();
    let page = page_at(&app.auth, &cookie, &user_path(&zoe.id))
        .await
        .text();
    assert!(
        page.contains("Make a set-up link") && !page.contains("setup-url"),
        "{page}"
    );
    let r = change(&app, &cookie, "setup-link", &[("userId", &zoe.id)]).await;
    assert_eq!(r.status, 200, "{:?}", r.location());
    let second = mailbox.last(
        "zoe@example.com",
        authcore::providers::email::LinkPurpose::AccountSetup,
    );
    assert_ne!(second, link);
    assert!(r.text().contains(&second.replace('&', "&#38;")));
    // Once she signs in by a way of her own (her address confirmed), a new link is
    // mailed to her only: the page shows none.
    app.db
        .update_user(authcore::adapter::UserUpdate {
            email_verified: Some(Some(time::OffsetDateTime::now_utc())),
            id: zoe.id.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let r = change(&app, &cookie, "setup-link", &[("userId", &zoe.id)]).await;
    assert_eq!(r.status, 200, "{:?}", r.location());
    let third = mailbox.last(
        "zoe@example.com",
        authcore::providers::email::LinkPurpose::AccountSetup,
    );
    assert_ne!(third, second);
    let html = r.text();
    assert!(html.contains("mailed to them only"), "{html}");
    assert!(
        !html.contains("setup-url") && !html.contains(&query_param(&third, "token")),
        "{html}"
    );
}
