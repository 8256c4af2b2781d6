//! The built-in pages in a real browser (headless Chromium via playwright-core,
//! `testsupport/browser/pages.mjs`) against the demo app: light and dark rendering with
//! screenshots, 320 px width, the page's own script under its CSP, credentials sign-in by a
//! click, sign-out by the button, and query-parameter injection that never runs.
//!
//! Screenshots go to a temporary directory; with `AUTHCORE_UPDATE_SCREENSHOTS=1` they
//! replace `docs/screenshots/` (shown in the README).
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use authcore_server::{DemoConfig, auth_from_config, router};
use serde_json::Value;
use support::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_render_sign_in_and_out_and_resist_injection() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("authcore-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shots = if std::env::var_os("AUTHCORE_UPDATE_SCREENSHOTS").is_some() {
        workspace.join("docs/screenshots")
    } else {
        dir.join("screenshots")
    };
    let file = dir.join("demo.db");
    let env = authcore::env::Env::from_pairs([
        (
            "AUTH_SECRET",
            "a browser test secret, long and random enough",
        ),
        ("AUTH_GITHUB_ID", "Iv1.0123456789abcdef"),
        ("AUTH_GITHUB_SECRET", "github-secret"),
        ("AUTH_GOOGLE_ID", "google-id"),
        ("AUTH_GOOGLE_SECRET", "google-secret"),
    ]);
    let mut config = DemoConfig::from_env(env).unwrap();
    config.database_url = Some(format!("sqlite://{}?mode=rwc", file.display()));
    let app = router(auth_from_config(config).await.unwrap());
    let base = browser::serve(app).await;
    let shots_arg = shots.display().to_string();
    let results = browser::run("pages.mjs", &[&base, &shots_arg], Duration::from_secs(180)).await;

    let step = |name: &'static str| results.iter().filter(move |v| v["step"] == name);
    let mut backgrounds = HashMap::new();
    for r in step("render") {
        let (page, scheme) = (r["page"].as_str().unwrap(), r["scheme"].as_str().unwrap());
        assert_eq!(r["overflow"], 0, "{page} overflows at 320 px in {scheme}");
        // WCAG AA: 4.5:1 for text, 3:1 for input borders.
        let contrast = &r["contrast"];
        assert!(
            contrast["worstText"].as_f64().unwrap() >= 4.5,
            "{page} in {scheme}: {contrast}"
        );
        if let Some(border) = contrast["worstBorder"].as_f64() {
            assert!(border >= 3.0, "{page} in {scheme}: {contrast}");
        }
        backgrounds.insert(
            (page.to_owned(), scheme.to_owned()),
            r["background"].clone(),
        );
        let shot = shots.join(format!("{page}-{scheme}.png"));
        assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "{shot:?}");
    }
    assert_eq!(backgrounds.len(), 8, "{results:?}");
    for page in ["signin", "signout", "error", "verify-request"] {
        assert_eq!(
            backgrounds[&(page.into(), "light".into())],
            "rgb(236, 236, 236)"
        );
        assert_eq!(
            backgrounds[&(page.into(), "dark".into())],
            "rgb(22, 27, 34)"
        );
    }
    let csp: Vec<_> = step("csp").collect();
    assert!(!csp.is_empty(), "the CSP step ran");
    for r in csp {
        assert_eq!(r["violations"], serde_json::json!([]), "{r}");
    }
    assert_eq!(step("credentials").next().unwrap()["name"], "Demo User");
    assert_eq!(step("signout").next().unwrap()["session"], Value::Null);
    let xss = step("xss").next().unwrap();
    assert_eq!(xss["checked"], 20);
    assert_eq!(xss["ran"], 0, "injected script ran");
    assert_eq!(xss["dialogs"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
