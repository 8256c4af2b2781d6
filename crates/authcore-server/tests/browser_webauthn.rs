//! Passkeys in a real browser: the demo app served on loopback, driven by headless
//! Chromium with a CDP virtual authenticator (`testsupport/browser/webauthn.mjs`, run with
//! Node and playwright-core). Needs `/usr/bin/chromium` and
//! `npm ci --prefix testsupport/browser` (both done by `scripts/test-all.sh`).

use crate::support;

use std::time::Duration;

use authcore::adapter::Adapter;
use authcore_server::ServerConfig;
use serde_json::Value;
use support::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passkey_register_add_sign_in_conditional_ui_and_unknown_credential() {
    let dir = std::env::temp_dir().join(format!("authcore-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.db");
    let _ = std::fs::remove_file(&file);
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let mut config = ServerConfig::new("a browser test secret, long and random enough");
    config.database_url = Some(url.clone());
    let app = config.build().await.unwrap().router();
    let base = browser::serve(app).await;
    // The state a magic-link sign-in leaves: a user with a proven address and a database
    // session (a passkey alone cannot create the account of an address the email provider
    // could prove later).
    let db = authcore_sqlx::SqlxAdapter::sqlite(&url).await.unwrap();
    let now = time::OffsetDateTime::now_utc();
    let user = db
        .create_user(authcore::adapter::NewUser {
            email: Some("browser@example.com".into()),
            email_verified: Some(now),
            ..Default::default()
        })
        .await
        .unwrap();
    let token = format!("browser-session-{}", std::process::id());
    db.create_session(authcore::adapter::AdapterSession {
        session_token: token.clone(),
        user_id: user.id.clone(),
        expires: now + time::Duration::hours(1),
    })
    .await
    .unwrap();
    let steps: std::collections::HashMap<String, Value> =
        browser::run("webauthn.mjs", &[&base, &token], Duration::from_secs(120))
            .await
            .into_iter()
            .map(|v| (v["step"].as_str().unwrap().to_owned(), v))
            .collect();

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
    // Auth.js's browser client signs in too, though its userHandle is UTF-8 text of the
    // handle's random bytes (no base64url).
    let client = &steps["simplewebauthn-browser"];
    assert_eq!(client["status"], 200, "{client}");
    assert_eq!(client["body"]["url"], format!("{base}/"), "{client}");
    assert_eq!(client["email"], "browser@example.com", "{client}");
    assert!(client["userHandle"].is_string(), "{client}");
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
        client["signCount"].as_u64().unwrap(),
        "{rows:?}"
    );
    // Offered EdDSA first (as Auth.js), Chromium's authenticator makes Ed25519 keys: the
    // whole flow above ran on them (COSE map(4): kty OKP, alg -8, crv Ed25519).
    // ("pAEBAycgBi" is the base64 of a4 01 01 03 27 20 06.)
    for row in &rows {
        assert!(
            row.credential_public_key.starts_with("pAEBAycgBi"),
            "{row:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
