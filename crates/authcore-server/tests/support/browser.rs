//! Harness of the browser tests: serves an authcore app on loopback and runs a
//! `testsupport/browser/*.mjs` script (headless Chromium through playwright-core) against
//! it, collecting the JSON lines it prints (`{"step": …}`, then `{"done": true}`, or
//! `{"error": …}`); and the mailbox through which a script reads what the SMTP test server
//! of `support::smtp` received.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::Command;

use super::smtp::SmtpServer;

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
    let (listener, base) = listen().await;
    serve_on(listener, app);
    base
}

/// A listener on 127.0.0.1 and its base URL as `http://localhost:<port>`, for an app whose
/// configuration needs its own URL before it is built ([`serve_on`] then serves it).
pub async fn listen() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, format!("http://localhost:{port}"))
}

/// Serves `app` on `listener` (from [`listen`]).
pub fn serve_on(listener: TcpListener, app: Router) {
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// The SMTP test server's messages: those no request has taken yet, and all of them.
pub struct Mailbox {
    smtp: SmtpServer,
    unread: Vec<Value>,
    /// Every message received so far.
    pub received: Vec<Value>,
}

/// A [`Mailbox`] shared with the route that serves it.
pub type SharedMailbox = Arc<tokio::sync::Mutex<Mailbox>>;

/// Serves the messages of `smtp` on 127.0.0.1 as `GET /next?to&contains`: the next message
/// to `to` whose subject or text holds `contains`, as its subject and the links of its text
/// (each wait for a message bounded by [`SmtpServer::next_message`]). Returns the mailbox
/// and its base URL.
pub async fn serve_mailbox(smtp: SmtpServer) -> (SharedMailbox, String) {
    let mailbox = Arc::new(tokio::sync::Mutex::new(Mailbox {
        smtp,
        unread: Vec::new(),
        received: Vec::new(),
    }));
    let app = Router::new()
        .route("/next", axum::routing::get(next_mail))
        .with_state(mailbox.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    serve_on(listener, app);
    (mailbox, url)
}

/// `GET /next?to&contains` of [`serve_mailbox`].
async fn next_mail(
    State(mailbox): State<SharedMailbox>,
    uri: axum::http::Uri,
) -> ([(&'static str, &'static str); 1], String) {
    let param = |name: &str| {
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let (to, contains) = (param("to"), param("contains"));
    let mut mailbox = mailbox.lock().await;
    let matches = |m: &Value| {
        m["envelope"]["to"][0] == to.as_str()
            && [&m["subject"], &m["text"]]
                .iter()
                .any(|v| v.as_str().unwrap_or_default().contains(contains.as_str()))
    };
    let message = loop {
        if let Some(i) = mailbox.unread.iter().position(matches) {
            break mailbox.unread.remove(i);
        }
        let m = mailbox.smtp.next_message().await;
        mailbox.received.push(m.clone());
        mailbox.unread.push(m);
    };
    let text = message["text"].as_str().unwrap_or_default();
    let links: Vec<&str> = text
        .split_whitespace()
        .filter(|w| w.starts_with("http"))
        .collect();
    (
        [("content-type", "application/json")],
        json!({ "subject": message["subject"], "links": links }).to_string(),
    )
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

/// The string at `key` of a step (empty when there is none).
#[allow(dead_code)] // not every browser test reads strings of its steps
pub fn text<'a>(step: &'a Value, key: &str) -> &'a str {
    step[key].as_str().unwrap_or_default()
}

/// A fresh directory of the test's own under the system's temporary one
/// (`authcore-browser-<name>-<pid>`), and where its screenshots go ([`screenshot_dir`]).
#[allow(dead_code)] // not every browser test takes screenshots
pub fn work_dir(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("authcore-browser-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let shots = screenshot_dir(&dir);
    (dir, shots)
}

/// The measure of `page` in `scheme` among the script's `render` steps (lib.mjs `measure`),
/// checked: the scheme's background, nothing wider than 320 px, WCAG AA
/// ([`assert_wcag_aa`]), and its screenshot `<prefix>-<page>-<scheme>.png` in `shots`.
#[allow(dead_code)] // not every browser test measures pages
pub fn checked_render<'a>(
    steps: &'a [Value],
    shots: &std::path::Path,
    prefix: &str,
    page: &str,
    scheme: &str,
) -> &'a Value {
    let r = steps
        .iter()
        .find(|r| r["step"] == "render" && r["page"] == page && r["scheme"] == scheme)
        .unwrap_or_else(|| panic!("{page} in {scheme} was not rendered"));
    let background = match scheme {
        "light" => "rgb(236, 236, 236)",
        _ => "rgb(22, 27, 34)",
    };
    assert_eq!(r["background"], background, "{page} in {scheme}");
    assert_eq!(r["overflow"], 0, "{page} overflows at 320 px in {scheme}");
    assert_wcag_aa(&r["contrast"], &format!("{page} in {scheme}"));
    let shot = shots.join(format!("{prefix}-{page}-{scheme}.png"));
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "{shot:?}");
    r
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
