//! Password accounts' self-service in a real browser (headless Chromium via playwright-core,
//! `testsupport/browser/passwords.mjs`): authcore-server in process with password accounts,
//! their sign-up page and open sign-up, on SQLite, mailing over SMTP to the test server of
//! `support::smtp`. The script signs up (a weak password refused, then a good one), follows
//! the mailed confirmation link, signs in with the sign-in page's password form, changes the
//! password on the account page, signs out, asks for a reset link and sets a new password
//! with it; then only the new password signs in. Every page in light and dark: WCAG AA
//! contrast, labelled inputs with their autocomplete tokens, no overflow at 320 px, no CSP
//! violation.
//!
//! The script gets its mails from the mailbox of `support::browser` on loopback
//! (`GET /next?to=…&contains=…`), which waits at the SMTP server for the next message to
//! that address whose subject or text holds the string.
//!
//! Screenshots go to a temporary directory; with `AUTHCORE_UPDATE_SCREENSHOTS=1` they
//! replace `docs/screenshots/password-*.png`.

use crate::support;

use std::time::Duration;

use authcore_server::ServerConfig;
use serde_json::{Value, json};
use support::browser::{self, text};
use support::smtp::SmtpServer;

/// Each page the script renders, with the autocomplete token of each of its inputs by name
/// (the sign-in page's forms: password, magic link, passkey; the account page's password
/// form names its user for password managers in a hidden input).
const PAGES: &[(&str, &[(&str, &str)])] = &[
    (
        "signin",
        &[
            ("username", "username"),
            ("password", "current-password"),
            ("email", "email"),
            ("email", "username webauthn"),
        ],
    ),
    (
        "signup",
        &[
            ("name", "name"),
            ("email", "email"),
            ("password", "new-password"),
        ],
    ),
    (
        "signup-error",
        &[
            ("name", "name"),
            ("email", "email"),
            ("password", "new-password"),
        ],
    ),
    ("check-email", &[]),
    ("address-confirmed", &[]),
    (
        "account",
        &[
            ("username", "username"),
            ("currentPassword", "current-password"),
            ("newPassword", "new-password"),
            ("email", "email"),
            ("confirm", ""),
        ],
    ),
    (
        "account-changed",
        &[
            ("username", "username"),
            ("currentPassword", "current-password"),
            ("newPassword", "new-password"),
            ("email", "email"),
            ("confirm", ""),
        ],
    ),
    ("forgot", &[("email", "username")]),
    ("reset", &[("password", "new-password")]),
    ("reset-error", &[("password", "new-password")]),
    ("password-changed", &[]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_up_confirm_sign_in_change_and_reset_a_password_in_a_browser() {
    let (dir, shots) = browser::work_dir("pw");
    let smtp = SmtpServer::start().await;
    let smtp_url = format!("smtp://127.0.0.1:{}", smtp.port);
    let database_url = format!("sqlite://{}?mode=rwc", dir.join("accounts.db").display());
    let env = authcore::env::Env::from_pairs([
        (
            "AUTH_SECRET",
            "a browser test secret, long and random enough",
        ),
        ("AUTHCORE_DATABASE_URL", database_url.as_str()),
        ("AUTHCORE_PASSWORDS", "on"),
        ("AUTHCORE_PASSWORD_SIGN_UP", "on"),
        ("AUTHCORE_SIGN_UP", "open"),
        ("SMTP_URL", smtp_url.as_str()),
    ]);
    let config = ServerConfig::from_env(env).unwrap();
    let base = browser::serve(config.build().await.unwrap().router()).await;
    let (mailbox, mailbox_url) = browser::serve_mailbox(smtp).await;

    let shots_arg = shots.display().to_string();
    let steps = browser::run(
        "passwords.mjs",
        &[&base, &mailbox_url, &shots_arg],
        Duration::from_secs(240),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "passwords.mjs").clone();

    // The sign-in page links to both pages.
    let links = step("signin-links");
    for (text, path) in [
        ("Forgot your password?", "/auth/password/forgot"),
        ("Create an account", "/auth/password/signup"),
    ] {
        assert!(
            links["links"]
                .as_array()
                .unwrap()
                .contains(&json!({ "text": text, "href": format!("{base}{path}") })),
            "{links}"
        );
    }

    // Every page: WCAG AA (4.5:1 text, 3:1 input borders) in both schemes, no overflow at
    // 320 px, every input labelled and with its autocomplete token.
    let renders: Vec<&Value> = steps.iter().filter(|s| s["step"] == "render").collect();
    assert_eq!(renders.len(), PAGES.len() * 2, "{renders:?}");
    for (page, inputs) in PAGES {
        for scheme in ["light", "dark"] {
            let r = browser::checked_render(&steps, &shots, "password", page, scheme);
            let seen: Vec<(&str, &str)> = r["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    if i["hidden"] == true {
                        // Tells password managers whose password changes.
                        assert_eq!(i["value"], "ada@example.com", "{page}: {i}");
                    } else {
                        assert!(!i["label"].as_str().unwrap().is_empty(), "{page}: {i}");
                    }
                    (
                        i["name"].as_str().unwrap(),
                        i["autocomplete"].as_str().unwrap_or_default(),
                    )
                })
                .collect();
            assert_eq!(seen, *inputs, "{page}: {r}");
        }
    }
    // The password form asks for the address a password account signs in with.
    let signin = renders.iter().find(|r| r["page"] == "signin").unwrap();
    let username = &signin["inputs"][0];
    assert_eq!(
        (&username["label"], &username["type"]),
        (&json!("Email"), &json!("email")),
        "{username}"
    );
    // A new password's input says what the policy asks.
    let signup = renders.iter().find(|r| r["page"] == "signup").unwrap();
    let hint = &signup["inputs"][2]["describedBy"];
    assert!(
        hint.as_str().unwrap().contains("At least 12 characters"),
        "{hint}"
    );

    // Sign-up: a weak password refused on the form, a good one mailed a confirmation link.
    let page = step("signup-page");
    assert_eq!(page["url"], format!("{base}/auth/password/signup"));
    assert_eq!(page["heading"], "Create an account");
    let weak = step("signup-weak");
    assert_eq!(weak["status"], 400, "{weak}");
    assert_eq!(weak["heading"], "Create an account", "{weak}");
    assert_eq!(weak["form"], 1, "the form again: {weak}");
    let alert = weak["alerts"][0].as_str().unwrap();
    assert!(alert.contains("too common"), "{weak}");
    assert!(!alert.contains("Password1234"), "never echoed: {weak}");
    let sent = step("signup-sent");
    assert_eq!(sent["status"], 200, "{sent}");
    assert_eq!(sent["heading"], "Check your email", "{sent}");
    assert_eq!(
        sent["session"],
        Value::Null,
        "no session before the address is confirmed"
    );
    let confirmed = step("confirmed");
    assert!(
        text(&confirmed, "link").starts_with(&format!("{base}/auth/password/verify?token=")),
        "{confirmed}"
    );
    assert_eq!(confirmed["heading"], "Address confirmed", "{confirmed}");

    // Sign-in by the password form.
    let signed_in = step("signed-in");
    assert_eq!(signed_in["email"], "ada@example.com", "{signed_in}");
    assert_eq!(signed_in["cookie"], true, "{signed_in}");
    assert_eq!(signed_in["alerts"], json!([]), "{signed_in}");

    // The account page: a wrong current password refused, then the change.
    let wrong = step("change-wrong-current");
    assert_eq!(
        wrong["alerts"],
        json!(["That is not your current password."]),
        "{wrong}"
    );
    let changed = step("changed");
    assert_eq!(changed["alerts"], json!([]), "{changed}");
    assert_eq!(
        changed["notices"],
        json!(["Your password was changed, and your other sessions signed out."]),
        "{changed}"
    );
    assert_eq!(
        changed["email"], "ada@example.com",
        "this session stays: {changed}"
    );
    let notice = step("changed-notice");
    assert!(
        text(&notice, "subject").contains("your password was changed"),
        "{notice}"
    );

    let out = step("signed-out");
    assert_eq!(out["session"], Value::Null, "{out}");
    assert_eq!(out["cookie"], false, "{out}");

    // The forgotten password: the link's form refuses a weak password and keeps the link
    // usable; a good one is set.
    let forgot = step("forgot-page");
    assert_eq!(forgot["url"], format!("{base}/auth/password/forgot"));
    assert_eq!(forgot["heading"], "Forgot your password?");
    assert_eq!(step("forgot-sent")["heading"], "Check your email");
    let reset_page = step("reset-page");
    assert!(
        text(&reset_page, "link").starts_with(&format!("{base}/auth/password/reset?token=")),
        "{reset_page}"
    );
    assert_eq!(reset_page["heading"], "Choose a new password");
    let weak = step("reset-weak");
    assert_eq!(weak["status"], 400, "{weak}");
    assert_eq!(weak["form"], 1, "{weak}");
    assert!(
        weak["alerts"][0].as_str().unwrap().contains("too common"),
        "{weak}"
    );
    let reset = step("reset");
    assert_eq!(reset["status"], 200, "{reset}");
    assert_eq!(reset["heading"], "Password changed", "{reset}");
    assert!(text(&step("reset-notice"), "subject").contains("your password was changed"));

    // Only the new password signs in.
    let old = step("old-password");
    assert_eq!(old["email"], Value::Null, "{old}");
    assert_eq!(old["cookie"], false, "{old}");
    assert!(
        text(&old, "url").starts_with(&format!("{base}/auth/signin?error=CredentialsSignin")),
        "{old}"
    );
    assert_eq!(old["alerts"].as_array().unwrap().len(), 1, "{old}");
    let new = step("new-password");
    assert_eq!(new["email"], "ada@example.com", "{new}");
    assert_eq!(new["cookie"], true, "{new}");

    let csp = step("csp");
    assert_eq!(csp["violations"], json!([]), "{csp}");
    assert_eq!(csp["pageErrors"], json!([]), "{csp}");

    // Every mail went to the account's address, and none holds a password.
    let mailbox = mailbox.lock().await;
    assert!(mailbox.received.len() >= 4, "{:?}", mailbox.received);
    for m in &mailbox.received {
        assert_eq!(m["envelope"]["to"], json!(["ada@example.com"]), "{m}");
        for password in [
            "Password1234",
            "correct horse battery staple",
            "violet umbrella under nine moons",
            "seven quiet otters rowing north",
        ] {
            assert!(!m.to_string().contains(password), "{m}");
        }
    }
    drop(mailbox);
    let _ = std::fs::remove_dir_all(&dir);
}
