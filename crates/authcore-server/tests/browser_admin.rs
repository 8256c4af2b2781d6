//! The administrators' page in a real browser (headless Chromium via playwright-core,
//! `testsupport/browser/admin.mjs`), against a small host of the library (authcore's
//! router alone: credentials sign-in, database sessions in memory, the audit log stored,
//! root@example.com its administrator, ada@example.com a user).
//!
//! Root finds Ada by the search, bans her with a reason and lifts the ban, signs in as her
//! (the account page's banner says so, the administrators' page is refused meanwhile), ends
//! the impersonation by the banner's button and, signed in again, is back on her page; the
//! audit log has it all. The pages in light and dark: WCAG AA contrast, labelled inputs, no
//! overflow at 320 px, no CSP violation.
//!
//! Screenshots go to a temporary directory; with `AUTHCORE_UPDATE_SCREENSHOTS=1` they go
//! to `docs/screenshots/admin-*.png`.

use crate::support;

use std::time::Duration;

use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::admin::Admins;
use authcore::audit::AuditLog;
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_axum::AuthRouterExt;
use axum::Router;
use serde_json::{Value, json};
use support::browser::{self, text};

/// Root's password (the script signs in with it).
const ROOT_PASSWORD: &str = "root password, long enough";

/// Each page the script measures, with the names of its inputs.
const PAGES: &[(&str, &[&str])] = &[
    ("search", &["q", "email", "name"]),
    ("user", &["reason", "until", "confirm"]),
    ("banned", &["confirm"]),
    ("account-impersonated", &["confirm"]),
    ("refused", &[]),
    ("audit", &["kind", "user", "since", "until"]),
];

/// The host: root (an administrator by his verified address) and Ada, who signs in with
/// GitHub; root signs in with his password by the credentials form.
async fn host() -> (Auth, MemoryAdapter, String) {
    let db = MemoryAdapter::new();
    let root = db
        .create_user(NewUser {
            email: Some("root@example.com".into()),
            email_verified: Some(authcore::time::OffsetDateTime::now_utc()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    let ada = db
        .create_user(NewUser {
            name: Some("Ada Lovelace".into()),
            email: Some("ada@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    let root_id = root.id.clone();
    let credentials = CredentialsProvider::new()
        .field("email", CredentialField::new("Email").input_type("email"))
        .field(
            "password",
            CredentialField::new("Password").input_type("password"),
        )
        .authorize(move |c, _| {
            let ok = c.get("email").and_then(Value::as_str) == Some("root@example.com")
                && c.get("password").and_then(Value::as_str) == Some(ROOT_PASSWORD);
            let user = ok.then(|| User::with_id(root_id.clone()).email("root@example.com"));
            async move { Ok(user) }
        });
    let auth = Auth::new(
        AuthConfig::builder()
            .secret("an administrators' browser test secret, long enough")
            .trust_host(true)
            .provider(credentials)
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .audit_log(AuditLog::new().store(true))
            .admins(Admins::new().user("root@example.com"))
            .build()
            .unwrap(),
    );
    (auth, db, ada.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_ban_impersonate_and_end_it_in_a_browser() {
    let (_dir, shots) = browser::work_dir("admin");
    let (auth, db, ada) = host().await;
    let home = axum::routing::get(|| async { axum::response::Html("<h1>Home</h1>") });
    let base = browser::serve(Router::new().route("/", home).auth_routes(auth.clone())).await;
    let shots_arg = shots.display().to_string();
    let steps = browser::run("admin.mjs", &[&base, &shots_arg], Duration::from_secs(180)).await;
    let step = |name: &str| browser::step(&steps, name, "admin.mjs").clone();
    let ada_page = format!("{base}/auth/admin?user={ada}");

    let admin = step("admin");
    assert_eq!(admin["status"], 200, "{admin}");
    assert_eq!(admin["heading"], "Administration", "{admin}");
    let found = step("found");
    assert_eq!(found["found"], json!(["ada@example.com"]), "{found}");
    assert_eq!(
        found["url"],
        format!("{base}/auth/admin?q=ada&provider="),
        "{found}"
    );
    let user = step("user");
    assert_eq!(user["url"], ada_page, "{user}");
    assert_eq!(user["badge"], 0, "{user}");

    // Banned with the reason, her page says so; the ban lifted, it says that.
    let banned = step("banned");
    assert_eq!(
        banned["url"],
        format!("{ada_page}&notice=banned"),
        "{banned}"
    );
    assert_eq!(banned["badge"], 1, "{banned}");
    assert!(
        banned["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "Reason Spam in the forum"),
        "{banned}"
    );
    assert_eq!(banned["alerts"], json!([]), "{banned}");
    let unbanned = step("unbanned");
    assert_eq!(
        unbanned["notices"],
        json!(["The ban was lifted."]),
        "{unbanned}"
    );
    assert_eq!(unbanned["badge"], 0, "{unbanned}");
    assert_eq!(auth.ban_of(&ada).await.unwrap(), None);

    // Signed in as Ada: her account page, with the banner.
    let impersonating = step("impersonating");
    assert_eq!(
        impersonating["url"],
        format!("{base}/auth/account"),
        "{impersonating}"
    );
    assert_eq!(impersonating["user"], "ada@example.com", "{impersonating}");
    let banner = text(&impersonating, "banner");
    assert!(
        banner.starts_with(
            "You are signed in as ada@example.com by administrator root@example.com, until "
        ) && banner.ends_with(" UTC."),
        "{impersonating}"
    );
    let refused = step("admin-refused");
    assert_eq!(refused["status"], 403, "{refused}");
    assert_eq!(refused["finds"], 0, "{refused}");

    // Ended by one click: signed out, to sign in again and back to her page.
    let ended = step("ended");
    let back = form_urlencoded::Serializer::new(String::new())
        .append_pair("callbackUrl", &ada_page)
        .finish();
    assert_eq!(
        ended["url"],
        format!("{base}/auth/signin?{back}"),
        "{ended}"
    );
    assert_eq!(ended["session"], Value::Null, "{ended}");
    let again = step("root-again");
    assert_eq!(again["url"], ada_page, "{again}");
    assert_eq!(
        db.get_user(&ada).await.unwrap().unwrap().email.as_deref(),
        Some("ada@example.com")
    );

    // The audit log, newest first, has it all.
    let audit = step("audit");
    let kinds: Vec<&str> = audit["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|k| k.starts_with("admin."))
        .collect();
    assert_eq!(
        kinds,
        [
            "admin.impersonationEnded",
            "admin.impersonationStarted",
            "admin.unbanned",
            "admin.banned"
        ],
        "{audit}"
    );

    // Every page in light and dark: readable, labelled, no wider than 320 px.
    for (page, inputs) in PAGES {
        for scheme in ["light", "dark"] {
            let r = browser::checked_render(&steps, &shots, "admin", page, scheme);
            let names: Vec<&str> = r["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap())
                .collect();
            assert_eq!(&names, inputs, "{page} in {scheme}");
            for input in r["inputs"].as_array().unwrap() {
                assert!(
                    !text(input, "label").is_empty(),
                    "{page}: an input without a label: {input}"
                );
            }
        }
    }
    let csp = step("csp");
    assert_eq!(csp["violations"], json!([]), "{csp}");
    assert_eq!(csp["pageErrors"], json!([]), "{csp}");
}
