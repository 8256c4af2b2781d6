//! The built-in pages in a real browser (headless Chromium via playwright-core,
//! `testsupport/browser/pages.mjs`) against the demo app: light and dark rendering with
//! screenshots, 320 px width, the page's own script under its CSP, credentials sign-in by a
//! click, sign-out by the button, and query-parameter injection that never runs.
//!
//! A second test renders the sign-in page with 20 OAuth providers of the catalogue (brand
//! icons and monograms, `testsupport/browser/signin-providers.mjs`) at 320 px in light and
//! dark.
//!
//! Screenshots go to a temporary directory; with `AUTHCORE_UPDATE_SCREENSHOTS=1` they
//! replace `docs/screenshots/` (shown in the README).

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use authcore::providers::catalog;
use authcore::{Auth, AuthConfig};
use authcore_server::{ServerConfig, router};
use serde_json::Value;
use support::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_render_sign_in_and_out_and_resist_injection() {
    let dir = std::env::temp_dir().join(format!("authcore-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shots = browser::screenshot_dir(&dir);
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
    let mut config = ServerConfig::from_env(env).unwrap();
    config.database_url = Some(format!("sqlite://{}?mode=rwc", file.display()));
    let app = config.build().await.unwrap().router();
    let base = browser::serve(app).await;
    let shots_arg = shots.display().to_string();
    let results = browser::run("pages.mjs", &[&base, &shots_arg], Duration::from_secs(180)).await;

    let step = |name: &'static str| results.iter().filter(move |v| v["step"] == name);
    let mut backgrounds = HashMap::new();
    for r in step("render") {
        let (page, scheme) = (r["page"].as_str().unwrap(), r["scheme"].as_str().unwrap());
        assert_eq!(r["overflow"], 0, "{page} overflows at 320 px in {scheme}");
        browser::assert_wcag_aa(&r["contrast"], &format!("{page} in {scheme}"));
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

/// The first 20 OAuth presets of the catalogue that build from a dummy client id, secret
/// and settings (an issuer URL where one is asked for), in catalogue order.
fn twenty_catalogue_providers() -> Vec<authcore::providers::OAuthProvider> {
    catalog::entries()
        .iter()
        .filter_map(|entry| {
            let mut vars = vec![
                (entry.env_var("id"), "dummy-client-id".to_owned()),
                (entry.env_var("secret"), "dummy-client-secret".to_owned()),
            ];
            for setting in entry.settings {
                let value = if setting.key.contains("issuer") || setting.key.contains("url") {
                    "https://issuer.example.com".to_owned()
                } else {
                    "example".to_owned()
                };
                vars.push((entry.env_var(setting.key), value));
            }
            entry.build(&authcore::env::Env::from_pairs(vars)).ok()
        })
        .take(20)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_page_with_twenty_providers_fits_320px_in_light_and_dark() {
    let dir = std::env::temp_dir().join(format!("authcore-providers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shots = browser::screenshot_dir(&dir);
    let providers = twenty_catalogue_providers();
    assert_eq!(providers.len(), 20, "the catalogue builds 20 presets");
    let ids: Vec<String> = providers.iter().map(|p| p.id().to_owned()).collect();
    let mut config = AuthConfig::builder()
        .secret("a browser test secret, long and random enough")
        .trust_host(true);
    for p in providers {
        config = config.provider(p);
    }
    let base = browser::serve(router(Auth::new(config.build().unwrap()))).await;
    let shots_arg = shots.display().to_string();
    let results = browser::run(
        "signin-providers.mjs",
        &[&base, &shots_arg],
        Duration::from_secs(180),
    )
    .await;

    let mut schemes = Vec::new();
    for r in results.iter().filter(|v| v["step"] == "providers") {
        let scheme = r["scheme"].as_str().unwrap();
        schemes.push(scheme.to_owned());
        let layout = &r["layout"];
        assert!(
            layout["scrollWidth"].as_f64().unwrap() <= 320.0,
            "overflow at 320 px in {scheme}: {layout}"
        );
        assert!(
            layout["bodyScrollWidth"].as_f64().unwrap() <= 320.0,
            "{scheme}: {layout}"
        );
        assert_eq!(r["violations"], serde_json::json!([]), "{scheme}: {r}");
        assert!(
            r["worstLabel"].as_f64().unwrap() >= 4.5,
            "label contrast in {scheme}: {r}"
        );
        let buttons = r["buttons"].as_array().unwrap();
        let seen: Vec<&str> = buttons.iter().map(|b| b["id"].as_str().unwrap()).collect();
        assert_eq!(seen, ids, "{scheme}: one button per provider, in order");
        let mut icons = 0;
        for b in buttons {
            let id = b["id"].as_str().unwrap();
            assert_eq!(b["visible"], true, "{id} in {scheme}: {b}");
            assert!(b["left"].as_f64().unwrap() >= 0.0, "{id} in {scheme}: {b}");
            assert!(
                b["right"].as_f64().unwrap() <= 320.0,
                "{id} in {scheme}: {b}"
            );
            assert!(
                b["height"].as_f64().unwrap() >= 44.0,
                "{id} in {scheme}: {b}"
            );
            assert_eq!(b["labelFits"], true, "{id} in {scheme}: {b}");
            assert_eq!(
                b["markSize"],
                serde_json::json!([28, 28]),
                "{id} in {scheme}: {b}"
            );
            match b["mark"].as_str().unwrap() {
                "icon" => {
                    icons += 1;
                    assert_eq!(b["iconPaths"], 1, "{id}: {b}");
                    assert_eq!(b["iconSize"], serde_json::json!([16, 16]), "{id}: {b}");
                    // Drawn in the preset's button text colour.
                    assert_eq!(b["iconFill"], b["markColor"], "{id}: {b}");
                }
                "monogram" => {}
                other => panic!("{id} in {scheme}: {other}"),
            }
        }
        assert!(
            icons >= 5,
            "{scheme}: brand icons drawn ({icons}): {buttons:?}"
        );
        assert!(icons < 20, "{scheme}: some presets keep the monogram");
        let shot = shots.join(format!("signin-providers-{scheme}.png"));
        assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "{shot:?}");
    }
    assert_eq!(schemes, ["light", "dark"], "{results:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
