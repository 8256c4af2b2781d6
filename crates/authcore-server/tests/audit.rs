//! The audit log in the standalone server, with `docs/manual/audit-server.md` as written:
//! its `[audit]` settings read (bad ones refused with their key), its JSON lines and a
//! signed webhook on loopback fed by the built server, the chapter's verification code run
//! against a real signature, the background pruning past a retention, and `audit-check` on
//! a SQLite database finding an altered record.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use authcore::audit::{AuditEvent, JsonLinesTarget, verify_webhook_signature};
use authcore::env::Env;
use authcore_server::{ConfigFile, ServerConfig};
use axum::http::StatusCode;
use serde_json::Value;

use crate::support::{binary, webhook_receiver};

const HOOK_SECRET: &str = "a webhook secret of more than 32 bytes, for the tests";
const AUTH_SECRET: &str = "an audit test secret, long enough";

/// The fenced block after `<!-- audit-test: <name> -->` in the chapter.
fn documented(name: &str) -> String {
    crate::support::documented("manual/audit-server.md", &format!("audit-test: {name}"))
}

fn resolve(file: &str, vars: &[(&str, &str)]) -> Result<ServerConfig, String> {
    let parsed = ConfigFile::parse(file).map_err(|e| e.to_string())?;
    ServerConfig::resolve(parsed, Env::from_pairs(vars.iter().copied())).map_err(|e| e.to_string())
}

#[test]
fn the_chapters_settings_are_read() {
    let config = resolve(
        &documented("server"),
        &[
            ("AUTHCORE_SIEM_WEBHOOK_SECRET", HOOK_SECRET),
            ("AUTH_SECRET", AUTH_SECRET),
        ],
    )
    .unwrap();
    let audit = &config.audit;
    assert_eq!(audit.store, Some(true));
    assert_eq!(audit.retention, Some(Duration::from_secs(365 * 86_400)));
    assert_eq!(
        audit.json_lines,
        Some(JsonLinesTarget::File(
            "/var/log/authcore/audit.jsonl".into()
        ))
    );
    assert_eq!(audit.webhooks.len(), 1);
    assert_eq!(
        audit.webhooks[0].url,
        "https://siem.example.com/hooks/authcore"
    );
    assert_eq!(audit.webhooks[0].secret.expose(), HOOK_SECRET);
    // Debug shows neither the secret nor the webhook's path.
    let shown = format!("{config:?} {audit:?}");
    assert!(!shown.contains(HOOK_SECRET), "{shown}");
    assert!(!shown.contains("/hooks/authcore"), "{shown}");
}

#[test]
fn bad_audit_settings_stop_the_start_with_their_key() {
    let hook = |url: &str, secret: &str| {
        format!("[[audit.webhooks]]\nurl = \"{url}\"\nsecret = \"{secret}\"\n")
    };
    let good_url = "https://siem.example.com/hook";
    // The file, the variables, what the refusal says.
    type Case<'a> = (String, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            hook("ftp://siem.example.com/hook", HOOK_SECRET),
            vec![],
            "[[audit.webhooks]] #1 url is not an http:// or https:// URL",
        ),
        (
            hook("siem.example.com/hook", HOOK_SECRET),
            vec![],
            "[[audit.webhooks]] #1 url",
        ),
        (
            hook(good_url, "short"),
            vec![],
            "[[audit.webhooks]] #1 secret is shorter than 32 bytes",
        ),
        (
            format!("{}{}", hook(good_url, HOOK_SECRET), hook(good_url, "short")),
            vec![],
            "[[audit.webhooks]] #2 secret is shorter",
        ),
        (
            format!("[[audit.webhooks]]\nurl = \"{good_url}\"\nsecret_env = \"HOOK_SECRET\"\n"),
            vec![("HOOK_SECRET", "short")],
            "HOOK_SECRET (the secret_env of [[audit.webhooks]] #1) is shorter",
        ),
        (
            format!("[[audit.webhooks]]\nurl = \"{good_url}\"\nsecret_env = \"HOOK_SECRET\"\n"),
            vec![],
            "secret_env names HOOK_SECRET, which is not set",
        ),
        (
            format!("[[audit.webhooks]]\nurl = \"{good_url}\"\n"),
            vec![],
            "[[audit.webhooks]] #1 has no secret",
        ),
        (
            String::new(),
            vec![
                ("AUTHCORE_AUDIT_WEBHOOK_URL", "javascript:alert(1)"),
                ("AUTHCORE_AUDIT_WEBHOOK_SECRET", HOOK_SECRET),
            ],
            "AUTHCORE_AUDIT_WEBHOOK_URL is not an http:// or https:// URL",
        ),
        (
            String::new(),
            vec![
                ("AUTHCORE_AUDIT_WEBHOOK_URL", good_url),
                ("AUTHCORE_AUDIT_WEBHOOK_SECRET", "short"),
            ],
            "AUTHCORE_AUDIT_WEBHOOK_SECRET is shorter than 32 bytes",
        ),
        (
            String::new(),
            vec![("AUTHCORE_AUDIT_WEBHOOK_URL", good_url)],
            "without AUTHCORE_AUDIT_WEBHOOK_SECRET",
        ),
        (
            "[audit]\nretention_days = 0\n".to_owned(),
            vec![],
            "from 1 to 36500",
        ),
        (
            String::new(),
            vec![("AUTHCORE_AUDIT_RETENTION_DAYS", "a year")],
            "AUTHCORE_AUDIT_RETENTION_DAYS",
        ),
        (
            String::new(),
            vec![("AUTHCORE_AUDIT_STORE", "yes")],
            "AUTHCORE_AUDIT_STORE",
        ),
        (
            "[server]\ndatabase_url = \"none\"\n[audit]\nstore = true\n".to_owned(),
            vec![],
            "the audit log ([audit] store, AUTHCORE_AUDIT_STORE) is kept in the database",
        ),
        (
            "[audit]\nstore = false\nretention_days = 30\n".to_owned(),
            vec![],
            "[audit] retention_days",
        ),
        ("[audit]\nbogus = 1\n".to_owned(), vec![], "bogus"),
    ];
    for (file, vars, says) in cases {
        let err = resolve(&file, &vars).unwrap_err();
        assert!(err.contains(says), "{file} {vars:?}: {err}");
        assert!(!err.contains(HOOK_SECRET), "{err}");
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The built server hands its records to the JSON lines file and the webhook of its
/// configuration; neither shows a secret; the chapter's Python check takes the signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_sends_its_records_to_a_file_and_a_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = webhook_receiver::start(|_| StatusCode::OK, Duration::ZERO).await;
    let lines = dir.path().join("audit.jsonl");
    let file = format!(
        "[server]\ndatabase_url = \"none\"\n[audit]\njson_lines = \"{}\"\n[[audit.webhooks]]\nurl = \"{url}\"\nsecret_env = \"HOOK_SECRET\"\n",
        lines.display()
    );
    let config = resolve(
        &file,
        &[("HOOK_SECRET", HOOK_SECRET), ("AUTH_SECRET", AUTH_SECRET)],
    )
    .unwrap();
    let server = config.build().await.unwrap();
    for i in 0..3 {
        server
            .auth()
            .record_audit(
                AuditEvent::new("admin.ban")
                    .actor("admin-1")
                    .target(format!("user-{i}"))
                    .with("client", "192.0.2.7"),
            )
            .await;
    }
    until("3 webhook posts", || received.lock().unwrap().len() == 3).await;
    let posts = received.lock().unwrap().clone();
    for (i, (signature, body)) in posts.iter().enumerate() {
        assert!(verify_webhook_signature(
            HOOK_SECRET.as_bytes(),
            signature,
            body,
            now(),
            Duration::from_secs(300)
        ));
        let json: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(json["seq"], i as u64 + 1);
        assert_eq!(json["target"], format!("user-{i}"));
        assert_eq!(json["data"]["client"], "192.0.2.7");
        let text = String::from_utf8_lossy(body);
        assert!(!text.contains(HOOK_SECRET) && !text.contains(AUTH_SECRET));
    }
    until("3 JSON lines", || {
        std::fs::read_to_string(&lines).is_ok_and(|t| t.lines().count() == 3)
    })
    .await;
    let text = std::fs::read_to_string(&lines).unwrap();
    assert!(!text.contains(HOOK_SECRET) && !text.contains(AUTH_SECRET));
    for (line, (_, body)) in text.lines().zip(&posts) {
        let line: Value = serde_json::from_str(line).unwrap();
        assert_eq!(line, serde_json::from_slice::<Value>(body).unwrap());
    }
    // The chapter's verification code, run as written, over the first post.
    let (signature, body) = &posts[0];
    let check = format!(
        "{}\nimport sys\nbody = sys.stdin.buffer.read()\nassert verify({:?}.encode(), {:?}, body)\nassert not verify(b'another secret', {:?}, body)\nassert not verify({:?}.encode(), {:?}, body + b' ')\nprint('verified')\n",
        documented("verify"),
        HOOK_SECRET,
        signature,
        signature,
        HOOK_SECRET,
        signature,
    );
    let mut python = std::process::Command::new("python3")
        .args(["-c", &check])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        python.stdin.take().unwrap().write_all(body).unwrap();
    }
    let out = python.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "verified");
}

/// `audit-check` on the server's SQLite database: a whole log passes; a record edited in the
/// database is named and the command exits with 1; no database is status 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_check_names_an_altered_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("audit.db");
    let database_url = format!("sqlite://{}?mode=rwc", db.display());
    let config_path = dir.path().join("authcore.toml");
    std::fs::write(&config_path, "[audit]\nstore = true\n").unwrap();
    let vars = [
        ("AUTHCORE_DATABASE_URL", database_url.as_str()),
        ("AUTH_SECRET", AUTH_SECRET),
    ];
    let server = ServerConfig::from_file(&config_path, Env::from_pairs(vars.iter().copied()))
        .unwrap()
        .build()
        .await
        .unwrap();
    for i in 0..3 {
        server
            .auth()
            .record_audit(AuditEvent::new("signIn").actor(format!("user-{i}")))
            .await;
    }
    drop(server);
    let config = config_path.display().to_string();
    let (code, out) = binary::run_for_code(&["audit-check", "--config", &config], &vars, "");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("records checked: 3"), "{out}");
    assert!(out.contains("the chain is whole"), "{out}");

    let pool = sqlx::SqlitePool::connect(&database_url).await.unwrap();
    sqlx::query("UPDATE audit_log SET data = ? WHERE seq = 2")
        .bind(r#"{"client":"10.0.0.1"}"#)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let (code, out) = binary::run_for_code(&["audit-check", "--config", &config], &vars, "");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("record 2 was altered"), "{out}");

    let (code, out) = binary::run_for_code(
        &["audit-check", "--config", &config],
        &[
            ("AUTHCORE_DATABASE_URL", "none"),
            ("AUTH_SECRET", AUTH_SECRET),
        ],
        "",
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("AUTHCORE_DATABASE_URL"), "{out}");
}

/// The server's background pruning: with a retention, records older than it go at once
/// (then hourly), an `audit.pruned` record takes their place, and the chain still checks.
#[tokio::test]
async fn the_server_prunes_past_the_retention() {
    use authcore::adapter::{AuditLogStore, AuditQuery, MemoryAdapter};
    use authcore::audit::{AuditLog, PRUNED};

    let store = MemoryAdapter::new();
    let old = authcore::time::OffsetDateTime::now_utc() - authcore::time::Duration::days(40);
    let mut last = None;
    for i in 0..3 {
        let record = AuditEvent::new("signIn")
            .actor(format!("user-{i}"))
            .seal(last.as_ref(), old);
        assert!(store.append_audit_record(&record).await.unwrap());
        last = Some(record);
    }
    let auth = authcore::Auth::new(
        authcore::AuthConfig::builder()
            .secret(AUTH_SECRET)
            .trust_host(true)
            .adapter(store)
            .sessions_only()
            .audit_log(
                AuditLog::new()
                    .store(true)
                    .retention(Duration::from_secs(30 * 86_400)),
            )
            .build()
            .unwrap(),
    );
    authcore_server::ops::spawn_audit_pruning(&auth);
    let all = AuditQuery {
        ascending: true,
        limit: 100,
        ..AuditQuery::default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let records = loop {
        let records = auth.audit_records(&all).await.unwrap();
        if records.len() == 1 {
            break records;
        }
        assert!(Instant::now() < deadline, "not pruned: {records:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!((records[0].seq, records[0].kind.as_str()), (4, PRUNED));
    let report = auth.check_audit_log().await.unwrap();
    assert!(report.faults.is_empty(), "{:?}", report.faults);
}
