//! Two-factor authentication in a real browser: the demo app on SQLite (second factors are
//! on by default with a database), driven by headless Chromium
//! (`testsupport/browser/two-factor.mjs`): set up from the account page, then a password
//! sign-in that stops at the two-factor page until a code from the app, a recovery code,
//! a recovery code reused (refused), and a passkey (a virtual authenticator) instead of a
//! code. At 320 px, under the pages' CSP.

use crate::support;

use std::time::Duration;

use authcore_server::ServerConfig;
use serde_json::Value;
use support::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enrol_on_the_account_page_then_sign_in_with_a_code_and_a_recovery_code() {
    let dir = std::env::temp_dir().join(format!("authcore-browser-2fa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    let env = authcore::env::Env::from_pairs([
        (
            "AUTH_SECRET",
            "a browser test secret, long and random enough",
        ),
        ("AUTHCORE_DEMO_PASSWORD", "browser-demo-password"),
    ]);
    let mut config = ServerConfig::from_env(env).unwrap();
    config.database_url = Some(format!("sqlite://{}?mode=rwc", file.display()));
    assert!(config.two_factor.is_some(), "on by default with a database");
    let app = config.build().await.unwrap().router();
    let base = browser::serve(app).await;
    let steps = browser::run(
        "two-factor.mjs",
        &[&base, "browser-demo-password"],
        Duration::from_secs(120),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "two-factor.mjs").clone();

    let first = step("first-sign-in");
    assert_eq!(first["email"], "demo@example.com", "{first}");
    let enrolled = step("enrolled");
    assert_eq!(enrolled["qr"], 1, "{enrolled}");
    assert_eq!(enrolled["secretLength"], 32, "{enrolled}");
    assert_eq!(enrolled["codes"], 10, "{enrolled}");
    assert_eq!(enrolled["fits"], true, "the account page at 320 px");
    let code = step("code");
    assert_eq!(code["atStep"], format!("{base}/auth/two-factor"), "{code}");
    assert_eq!(
        code["beforeCode"],
        Value::Null,
        "no session before the code"
    );
    assert_eq!(code["fits"], true, "the two-factor page at 320 px");
    assert_eq!(code["email"], "demo@example.com", "{code}");
    assert_eq!(step("recovery-code")["email"], "demo@example.com");
    let reused = step("recovery-code-reused");
    assert_eq!(reused["session"], Value::Null, "{reused}");
    assert!(
        reused["url"]
            .as_str()
            .unwrap()
            .contains("/auth/two-factor?error=TwoFactorError"),
        "{reused}"
    );
    assert_eq!(reused["alerts"], 1);
    let passkey = step("passkey");
    assert_eq!(
        passkey["atStep"],
        format!("{base}/auth/two-factor"),
        "{passkey}"
    );
    assert_eq!(passkey["offered"], 1, "{passkey}");
    assert_eq!(passkey["email"], "demo@example.com", "{passkey}");
    assert_eq!(step("csp")["violations"], serde_json::json!([]));
    // WCAG AA on every page of the flow, light and dark: 4.5:1 for text, 3:1 for borders.
    let measured: Vec<&Value> = steps.iter().filter(|s| s["step"] == "contrast").collect();
    assert_eq!(measured.len(), 10, "five pages, two schemes: {measured:?}");
    for m in measured {
        browser::assert_wcag_aa(m, &format!("{} in {}", m["page"], m["scheme"]));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
