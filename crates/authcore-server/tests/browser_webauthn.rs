//! Passkeys in a real browser: the demo app served on loopback, driven by headless
//! Chromium with a CDP virtual authenticator (`testsupport/browser/webauthn.mjs`, run with
//! Node and playwright-core). Needs `/usr/bin/chromium` and
//! `npm ci --prefix testsupport/browser` (both done by `scripts/test-all.sh`).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use authcore::adapter::Adapter;
use authcore_server::{DemoConfig, auth_from_config, router};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passkey_register_add_sign_in_conditional_ui_and_unknown_credential() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/browser");
    assert!(
        root.join("node_modules/playwright-core").is_dir(),
        "run `npm ci --prefix testsupport/browser` first"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "{chromium} is missing: apt-get install chromium"
    );

    let dir = std::env::temp_dir().join(format!("authcore-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let mut config = DemoConfig::new("a browser test secret, long and random enough");
    config.database_url = Some(url.clone());
    let app = router(auth_from_config(config).await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });

    // WebAuthn needs a secure context and a domain RP id: http://localhost is both.
    let base = format!("http://localhost:{port}");
    let mut child = Command::new("node")
        .arg("webauthn.mjs")
        .arg(&base)
        .current_dir(&root)
        .env("CHROMIUM", &chromium)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps = std::collections::HashMap::new();
    let read_all = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let v: Value = serde_json::from_str(&line).unwrap();
            if let Some(e) = v.get("error") {
                panic!("browser script failed: {}", e.as_str().unwrap_or_default());
            }
            if v.get("done").is_some() {
                break;
            }
            steps.insert(v["step"].as_str().unwrap().to_owned(), v);
        }
    };
    tokio::time::timeout(Duration::from_secs(120), read_all)
        .await
        .expect("browser test did not finish within 120 s");
    let _ = child.wait().await;

    let register = &steps["register"];
    assert_eq!(register["email"], "browser@example.com");
    assert_eq!(register["credentials"], 1);
    let added = &steps["add-while-signed-in"];
    assert_eq!(added["email"], "browser@example.com");
    assert_eq!(
        added["credentials"], 1,
        "a second passkey, on the second device"
    );
    let authenticate = &steps["authenticate"];
    assert_eq!(authenticate["email"], "browser@example.com");
    assert!(
        authenticate["signCount"].as_u64() > register["signCount"].as_u64(),
        "{steps:?}"
    );
    let conditional = &steps["conditional"];
    assert_eq!(conditional["email"], "browser@example.com");
    let unknown = &steps["unknown"];
    assert!(
        unknown["url"]
            .as_str()
            .unwrap()
            .contains("error=Configuration"),
        "{unknown}"
    );
    assert_eq!(unknown["session"], Value::Null);

    // The server's row: Auth.js format, counter as the authenticator last reported it.
    let db = authcore_sqlx::SqlxAdapter::sqlite(&url).await.unwrap();
    let user = db
        .get_user_by_email("browser@example.com")
        .await
        .unwrap()
        .unwrap();
    let mut rows = db.list_authenticators_by_user_id(&user.id).await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    rows.sort_by_key(|r| std::cmp::Reverse(r.counter));
    assert_eq!(
        rows[0].counter,
        conditional["signCount"].as_u64().unwrap(),
        "{rows:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
