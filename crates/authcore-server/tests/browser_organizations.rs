//! Organizations in a real browser (headless Chromium via playwright-core,
//! `testsupport/browser/organizations.mjs`): authcore-server in process on SQLite with
//! password accounts and their sign-up page, sign-up by invitation only, organizations with
//! a `billing` role, mail over SMTP to the test server of `support::smtp`, and gateway rules
//! on organization `acme` in front of an application on another port (a small proxy here
//! asks the gateway's Caddy endpoint, as Caddy's `forward_auth` does, and the application
//! answers with the identity headers it was given).
//!
//! Ada, owner of Acme, invites Bea as `billing` from the account page; Bea, who has no
//! account, follows the mailed link, signs up, confirms her address, comes back to the
//! invitation and accepts it; then the gateway admits her by her role's permission and
//! refuses her where admins are, the used link is no longer valid for her and refused to
//! another address, and an address invited to nothing cannot sign up with it. Ada makes an
//! API key for Acme on the account page, shown once (a reload makes no other), which then
//! acts in Acme with its permission. The new pages in light and dark: WCAG AA contrast,
//! labelled inputs, no overflow at 320 px, no CSP violation.
//!
//! Screenshots go to a temporary directory; with `AUTHCORE_UPDATE_SCREENSHOTS=1` they go
//! to `docs/screenshots/organizations-*.png`.

use crate::support;

use std::time::Duration;

use authcore::adapter::{Adapter, InvitationStatus, NewUser};
use authcore_server::ServerConfig;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use support::browser::{self, text};
use support::smtp::SmtpServer;
use tower::ServiceExt;

/// Ada's password (the script signs in with it).
const ADA_PASSWORD: &str = "correct horse battery staple";

/// The server's configuration: `{db}`, `{auth}` and `{smtp}` are filled in.
const CONFIG: &str = r#"
[server]
database_url = "{db}"

[auth]
url = "{auth}/auth"
secret = "an organizations browser test secret, long enough"
sign_up = "invite"

[email]
smtp_url = "{smtp}"

[passwords]
enabled = true
sign_up = true

[organizations]
enabled = true

[organizations.roles]
billing = ["billing:read"]

[gateway]

[[gateway.rules]]
name = "acme administration"
path = "/admin/"
organization = "acme"
allow_roles = ["admin"]

[[gateway.rules]]
name = "acme invoices"
path = "/billing/"
organization = "acme"
allow_permissions = ["billing:read"]
"#;

/// What the application behind the gateway is told, by the identity headers' short names.
const TOLD: &[(&str, &str)] = &[
    ("email", "x-auth-request-email"),
    ("organizations", "x-auth-request-organizations"),
];

/// The proxy in front of the application: it asks authcore's router (`auth`, served at
/// `origin`) at the Caddy endpoint about each request, with the client's cookies and
/// `Accept`, and passes authcore's answer on unless it is a `200`; then the application
/// answers with what the identity headers told it, as JSON.
async fn proxied(State((auth, origin)): State<(Router, String)>, request: Request) -> Response {
    let client = request.headers();
    let host = client
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let uri = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let mut ask = axum::http::Request::get(format!("{origin}{}", authcore_gateway::CADDY_PATH))
        .header("x-forwarded-method", "GET")
        .header("x-forwarded-proto", "http")
        .header("x-forwarded-host", host)
        .header("x-forwarded-uri", uri);
    for name in [header::COOKIE, header::ACCEPT] {
        if let Some(v) = client.get(&name) {
            ask = ask.header(name, v);
        }
    }
    let answer = auth
        .oneshot(ask.body(Body::empty()).unwrap())
        .await
        .unwrap();
    if answer.status() != StatusCode::OK {
        return answer;
    }
    let told: serde_json::Map<String, Value> = TOLD
        .iter()
        .map(|(key, name)| (key.to_string(), json!(header_text(answer.headers(), name))))
        .collect();
    (
        [(header::CONTENT_TYPE, "application/json")],
        Value::Object(told).to_string(),
    )
        .into_response()
}

/// The text of header `name` (empty when there is none).
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// The inputs of the account page of an organization's owner: the password and address
/// forms, the invitation form (address and role), a new organization, a new key, deletion.
const OWNER_ACCOUNT: &[&str] = &[
    "username",
    "currentPassword",
    "newPassword",
    "email",
    "email",
    "role",
    "name",
    "name",
    "permissions",
    "confirm",
];

/// Each page the script measures, with the names of its inputs.
const PAGES: &[(&str, &[&str])] = &[
    ("account-owner", OWNER_ACCOUNT),
    ("invitation", &[]),
    (
        "account-member",
        &[
            "username",
            "currentPassword",
            "newPassword",
            "email",
            "name",
            "name",
            "permissions",
            "confirm",
        ],
    ),
    ("invitation-used", &[]),
    ("account-new-key", OWNER_ACCOUNT),
    ("signup-refused", &["name", "email", "password"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invite_sign_up_accept_and_an_api_key_in_a_browser() {
    let (dir, shots) = browser::work_dir("orgs");
    let smtp = SmtpServer::start().await;
    let (listener, base) = browser::listen().await;
    let config = CONFIG
        .replace(
            "{db}",
            &format!("sqlite://{}?mode=rwc", dir.join("orgs.db").display()),
        )
        .replace("{auth}", &base)
        .replace("{smtp}", &format!("smtp://127.0.0.1:{}", smtp.port));
    let config_path = dir.join("authcore.toml");
    std::fs::write(&config_path, config).unwrap();
    let server = ServerConfig::from_file(&config_path, authcore::env::Env::default())
        .unwrap()
        .build()
        .await
        .unwrap();
    let router = server.router();
    browser::serve_on(listener, router.clone());
    let (app_listener, app) = browser::listen().await;
    browser::serve_on(
        app_listener,
        Router::new()
            .fallback(proxied)
            .with_state((router, base.clone())),
    );
    let (mailbox, mailbox_url) = browser::serve_mailbox(smtp).await;

    // Ada has a password account and owns Acme.
    let db = server.database().unwrap();
    let ada = db
        .create_user(NewUser {
            name: Some("Ada".into()),
            email: Some("ada@example.com".into()),
            email_verified: Some(authcore::time::OffsetDateTime::now_utc()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    authcore_server::password_accounts(db)
        .unwrap()
        .set_password(&ada.id, ADA_PASSWORD)
        .await
        .unwrap();
    let acme = server
        .create_organization("Acme", "ada@example.com", Some("acme"))
        .await
        .unwrap();

    let shots_arg = shots.display().to_string();
    let steps = browser::run(
        "organizations.mjs",
        &[&base, &app, &mailbox_url, &shots_arg],
        Duration::from_secs(240),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "organizations.mjs").clone();
    let steps_named = |name: &str| -> Vec<Value> {
        steps
            .iter()
            .filter(|s| s["step"] == name)
            .cloned()
            .collect()
    };

    // Ada signs in and sees Acme, hers.
    let signed_in = step("ada-signed-in");
    assert_eq!(signed_in["url"], format!("{base}/"), "{signed_in}");
    let account = step("ada-account");
    assert_eq!(account["memberships"], json!(["Acme\nowner"]), "{account}");
    assert_eq!(account["members"], json!([]), "{account}");

    // The invitation from the account page, mailed with its link.
    let invited = step("invited");
    assert_eq!(
        invited["url"],
        format!("{base}/auth/account?notice=invited"),
        "{invited}"
    );
    assert_eq!(
        invited["notices"],
        json!(["The invitation was sent."]),
        "{invited}"
    );
    assert_eq!(invited["alerts"], json!([]), "{invited}");
    let mail = step("invitation-mail");
    let link = text(&mail, "link");
    assert!(
        link.starts_with(&format!("{base}/auth/invitation?token=")),
        "{mail}"
    );

    // Bea: signed out, the application and the link send her to sign in.
    let signed_out = step("bea-application-signed-out");
    assert!(
        text(&signed_out, "url").starts_with(&format!("{base}/auth/signin?callbackUrl=")),
        "{signed_out}"
    );
    let sent = step("bea-sent-to-sign-in");
    let back = form_urlencoded::Serializer::new(String::new())
        .append_pair("callbackUrl", link)
        .finish();
    assert_eq!(sent["url"], format!("{base}/auth/signin?{back}"), "{sent}");
    // The invitation lets her sign up: the address is to be confirmed.
    let signed_up = step("bea-signed-up");
    assert_eq!(
        signed_up["signUpPage"],
        format!("{base}/auth/password/signup")
    );
    assert_eq!(signed_up["status"], 200, "{signed_up}");
    assert_eq!(signed_up["heading"], "Check your email", "{signed_up}");
    assert_eq!(
        step("bea-confirmed")["heading"],
        "Address confirmed",
        "{steps:?}"
    );
    // Signed in, she is back on the invitation.
    let offer = step("bea-signed-in");
    assert_eq!(offer["url"], link, "{offer}");
    assert_eq!(offer["heading"], "Join Acme", "{offer}");
    assert_eq!(
        offer["lines"][0], "You are invited to join Acme as billing.",
        "{offer}"
    );

    // Accepted: the account page, Acme as billing and active.
    let accepted = step("accepted");
    assert_eq!(accepted["status"], 200, "{accepted}");
    assert_eq!(
        accepted["url"],
        format!("{base}/auth/account"),
        "{accepted}"
    );
    assert_eq!(
        accepted["memberships"],
        json!(["Acme\nbilling · active"]),
        "{accepted}"
    );
    let bea = db
        .get_user_by_email("bea@example.com")
        .await
        .unwrap()
        .unwrap();
    let bea_in = server.auth().organizations_of(&bea.id).await.unwrap();
    assert_eq!(bea_in.len(), 1, "{bea_in:?}");
    assert_eq!(bea_in[0].organization.id, acme.id);
    assert_eq!(bea_in[0].roles, ["billing"]);
    let invitations = server
        .auth()
        .invitations(Some(&ada.id), Some(&acme.id))
        .await
        .unwrap();
    assert_eq!(invitations.len(), 1, "{invitations:?}");
    assert_eq!(invitations[0].email, "bea@example.com");
    assert!(
        matches!(&invitations[0].status, InvitationStatus::Accepted { user_id, .. } if *user_id == bea.id),
        "{invitations:?}"
    );

    // The gateway: billing:read is hers, the admins' path is not; Ada, an owner, is no
    // admin either.
    for (who, path, status, organizations) in [
        ("bea", "/billing/invoices", 200, "acme:billing"),
        ("bea", "/admin/", 403, ""),
        ("ada", "/billing/invoices", 200, "acme:owner"),
        ("ada", "/admin/", 403, ""),
    ] {
        let seen = steps_named(&format!("{who}-application"));
        let seen = seen
            .iter()
            .find(|s| s["path"] == path)
            .unwrap_or_else(|| panic!("{who} {path}: {steps:?}"));
        assert_eq!(seen["status"], status, "{who} {path}: {seen}");
        if status == 200 {
            assert_eq!(
                seen["told"],
                json!({ "email": format!("{who}@example.com"), "organizations": organizations }),
                "{who} {path}: {seen}"
            );
        }
    }

    // The link once more: used. Another address's holder is refused.
    let again = step("bea-link-again");
    assert_eq!(again["status"], 400, "{again}");
    assert_eq!(again["heading"], "This invitation is not valid", "{again}");
    let other = step("ada-opens-bea-link");
    assert_eq!(other["status"], 403, "{other}");
    assert_eq!(
        other["heading"], "This invitation is for someone else",
        "{other}"
    );

    // Ada, an owner, sees Bea among Acme's members.
    let later = step("ada-account-later");
    assert_eq!(
        later["members"],
        json!(["Acme: bea@example.com (billing)"]),
        "{later}"
    );

    // The API key: shown once, on the page that made it.
    let made = step("key-made");
    assert_eq!(made["status"], 200, "{made}");
    assert_eq!(made["organizationId"], acme.id.as_str(), "{made}");
    let key = text(&made, "shown").to_owned();
    assert!(key.starts_with("ak_"), "{made}");
    // A reload posts the form again: it makes no other key and shows none; the page then
    // lists the one key by its id.
    for later in ["key-after-reload", "key-after-done"] {
        let s = step(later);
        assert_eq!(s["shown"], Value::Null, "{later}: {s}");
        assert!(!s.to_string().contains(&key), "{later}: {s}");
        assert_eq!(s["listed"].as_array().unwrap().len(), 1, "{later}: {s}");
        let listed = s["listed"][0].as_str().unwrap();
        assert!(listed.starts_with("invoices export ak_"), "{later}: {s}");
        assert!(
            listed.ends_with("Acme · member:read · never used"),
            "{later}: {s}"
        );
    }
    let reloaded = step("key-after-reload");
    let alert = reloaded["alerts"][0].as_str().unwrap_or_default();
    assert!(
        alert.starts_with("This form made its key already"),
        "{reloaded}"
    );
    assert_eq!(step("key-after-done")["alerts"], json!([]));
    // The account routes serve sessions, not keys; what the key acts as, authcore tells.
    let route = step("key-on-members-route");
    assert_eq!(route["status"], 401, "{route}");
    let mut headers = HeaderMap::new();
    headers.insert(
        header::AUTHORIZATION,
        format!("Bearer {key}").parse().unwrap(),
    );
    let uri: axum::http::Uri = format!("{base}/api/members").parse().unwrap();
    let principal = server
        .auth()
        .principal(&uri, &headers)
        .await
        .unwrap()
        .expect("the key is a principal");
    assert_eq!(principal.user_id, ada.id);
    let organization = principal.organization.as_ref().unwrap();
    assert_eq!(organization.id, acme.id);
    assert_eq!(organization.permissions, ["member:read"]);
    assert!(principal.has_permission("member:read"));
    assert!(!principal.has_permission("member:invite"));
    assert!(principal.api_key.is_some());

    // Cy, invited to nothing, is sent to sign in by Bea's link and cannot sign up.
    let cy = step("cy-sent-to-sign-in");
    assert!(
        text(&cy, "url").starts_with(&format!("{base}/auth/signin?callbackUrl=")),
        "{cy}"
    );
    let refused = step("cy-signed-up");
    assert_eq!(refused["status"], 403, "{refused}");
    assert_eq!(refused["form"], 1, "the form again: {refused}");
    assert_eq!(
        refused["alerts"],
        json!(["Sign-up is not open for this address."]),
        "{refused}"
    );
    assert!(
        db.get_user_by_email("cy@example.com")
            .await
            .unwrap()
            .is_none()
    );

    // The pages: WCAG AA in both schemes, no overflow at 320 px, every input labelled.
    let renders: Vec<&Value> = steps.iter().filter(|s| s["step"] == "render").collect();
    assert_eq!(renders.len(), PAGES.len() * 2, "{renders:?}");
    for (page, inputs) in PAGES {
        for scheme in ["light", "dark"] {
            let r = browser::checked_render(&steps, &shots, "organizations", page, scheme);
            let names: Vec<&str> = r["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    if i["hidden"] != true {
                        assert!(!i["label"].as_str().unwrap().is_empty(), "{page}: {i}");
                    }
                    i["name"].as_str().unwrap()
                })
                .collect();
            assert_eq!(names, *inputs, "{page}: {r}");
        }
    }

    let csp = step("csp");
    for who in ["ada", "bea", "cy"] {
        assert_eq!(csp[who]["violations"], json!([]), "{who}: {csp}");
        assert_eq!(csp[who]["pageErrors"], json!([]), "{who}: {csp}");
    }

    // The invitation went to Bea, and no mail holds a password or the key.
    let mailbox = mailbox.lock().await;
    for m in &mailbox.received {
        for secret in [
            ADA_PASSWORD,
            "violet umbrella under nine moons",
            key.as_str(),
        ] {
            assert!(!m.to_string().contains(secret), "{m}");
        }
    }
    drop(mailbox);
    let _ = std::fs::remove_dir_all(&dir);
}
