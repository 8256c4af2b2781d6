//! Harness of the browser tests: serves an authcore app on loopback and runs a
//! `testsupport/browser/*.mjs` script (headless Chromium through playwright-core) against
//! it, collecting the JSON lines it prints (`{"step": …}`, then `{"done": true}`, or
//! `{"error": …}`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use axum::Router;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// `testsupport/browser`, checked to have its npm packages.
pub fn script_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "run `npm ci --prefix testsupport/browser` first"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "{chromium} is missing: apt-get install chromium"
    );
    dir
}

/// Serves `app` on 127.0.0.1 and returns its base URL as `http://localhost:<port>`
/// (WebAuthn needs a secure context and a domain RP id: localhost is both).
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://localhost:{port}")
}

/// Runs `node <script> <args…>` in `testsupport/browser` and returns the step lines;
/// panics on `{"error"}`, on an early exit, or after `limit`.
pub async fn run(script: &str, args: &[&str], limit: Duration) -> Vec<Value> {
    run_in(&script_dir(), "node", script, args, limit).await
}

/// [`run`] with `program` (`node`, a Python) in `dir`.
pub async fn run_in(
    dir: &std::path::Path,
    program: &str,
    script: &str,
    args: &[&str],
    limit: Duration,
) -> Vec<Value> {
    let mut child = Command::new(program)
        .arg(script)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps = Vec::new();
    let read_all = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let v: Value = serde_json::from_str(&line).unwrap();
            if let Some(e) = v.get("error") {
                match e.as_str() {
                    Some(e) => panic!("{script} failed: {e}"),
                    None => panic!("{script} failed: {v}"),
                }
            }
            if v.get("done").is_some() {
                return true;
            }
            steps.push(v);
        }
        false
    };
    let done = tokio::time::timeout(limit, read_all)
        .await
        .unwrap_or_else(|_| panic!("{script} did not finish within {limit:?}"));
    assert!(done, "{script} stopped early: {steps:?}");
    let _ = child.wait().await;
    steps
}

/// The line of `steps` (from [`run`]) whose `"step"` is `name`; panics naming `context`
/// and listing the steps when there is none.
#[allow(dead_code)] // not every browser test reads its steps by name
pub fn step<'a>(steps: &'a [Value], name: &str, context: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("{context}: no step {name:?} in {steps:?}"))
}

/// Where a browser test's screenshots go: `docs/screenshots/` with
/// `AUTHCORE_UPDATE_SCREENSHOTS=1`, else `dir/screenshots`.
#[allow(dead_code)] // not every browser test takes screenshots
pub fn screenshot_dir(dir: &std::path::Path) -> PathBuf {
    if std::env::var_os("AUTHCORE_UPDATE_SCREENSHOTS").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots")
    } else {
        dir.join("screenshots")
    }
}

/// Asserts WCAG AA on a measure of `wcagContrast` (`testsupport/browser/lib.mjs`): 4.5:1
/// for text, 3:1 for input borders; `context` names the page.
#[allow(dead_code)] // not every browser test measures contrast
pub fn assert_wcag_aa(contrast: &Value, context: &str) {
    let text = contrast["worstText"]
        .as_f64()
        .unwrap_or_else(|| panic!("{context}: no text measured: {contrast}"));
    assert!(text >= 4.5, "{context}: text contrast {contrast}");
    if let Some(border) = contrast["worstBorder"].as_f64() {
        assert!(border >= 3.0, "{context}: input border contrast {contrast}");
    }
}
