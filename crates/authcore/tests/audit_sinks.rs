//! The audit log's sinks with real parts on loopback: webhook receivers started here (signed
//! records in order, a retry after a 500, receivers that hang or always fail and must not
//! slow the caller), and JSON lines in a file.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use authcore::adapter::{AuditRecord, MemoryAdapter};
use authcore::audit::{
    AuditEvent, AuditLog, AuditSink, JsonLinesSink, WebhookOptions, WebhookSink, record_json,
    verify_webhook_signature,
};
use axum::http::StatusCode;
use serde_json::Value;

use crate::common::{SECRET, audit_trail, builder};
use crate::webhook_receiver::{self, Answer};

const HOOK_SECRET: &str = "whsec-test-0123456789abcdef0123456789abcdef";

fn fast_retries() -> WebhookOptions {
    WebhookOptions::default()
        .timeout(Duration::from_secs(5))
        .backoff(Duration::from_millis(50), Duration::from_millis(200))
}

/// An Auth whose audit log is stored in memory and handed to `sink`.
fn auth_with_sink(sink: Arc<dyn AuditSink>) -> authcore::Auth {
    authcore::Auth::new(
        builder()
            .adapter(MemoryAdapter::new())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .audit_log(AuditLog::new().store(true).sink(sink))
            .build()
            .unwrap(),
    )
}

/// Events as a sign-in and an administrator's action make them.
fn event(i: usize) -> AuditEvent {
    if i.is_multiple_of(2) {
        AuditEvent::new("signIn")
            .actor(format!("user-{i}"))
            .with("provider", "credentials")
            .with("client", "192.0.2.7")
    } else {
        AuditEvent::new("admin.ban")
            .actor("admin-1")
            .target(format!("user-{i}"))
            .with("reason", "spam")
    }
}

/// Waits (a bounded while) until `done` holds.
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

fn assert_no_secret(text: &str) {
    for secret in [HOOK_SECRET, SECRET] {
        assert!(!text.contains(secret), "a secret went out: {text}");
    }
}

#[tokio::test]
async fn webhook_records_arrive_signed_and_in_order() {
    let (url, received) = webhook_receiver::start(|_| StatusCode::OK, Duration::ZERO).await;
    let sink =
        Arc::new(WebhookSink::with_options(&url, HOOK_SECRET.as_bytes(), fast_retries()).unwrap());
    let auth = auth_with_sink(sink.clone());
    for i in 0..20 {
        auth.record_audit(event(i)).await;
    }
    until("20 deliveries", || received.lock().unwrap().len() == 20).await;
    let records = audit_trail(&auth).await;
    assert_eq!(records.len(), 20);
    let received = received.lock().unwrap().clone();
    for ((signature, body), record) in received.iter().zip(&records) {
        assert!(
            verify_webhook_signature(
                HOOK_SECRET.as_bytes(),
                signature,
                body,
                now(),
                Duration::from_secs(300)
            ),
            "{signature}"
        );
        assert!(!verify_webhook_signature(
            b"another-secret-of-at-least-32-bytes!",
            signature,
            body,
            now(),
            Duration::from_secs(300)
        ));
        let json: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(json, record_json(record), "in the order they were made");
        assert!(json["data"].is_object());
        assert_no_secret(std::str::from_utf8(body).unwrap());
        assert_no_secret(signature);
    }
    until("the count", || sink.counts().delivered == 20).await;
    assert_eq!((sink.counts().dropped, sink.counts().failed), (0, 0));
}

#[tokio::test]
async fn a_record_answered_500_is_sent_again() {
    let answer = |n| match n {
        0 => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::OK,
    };
    let (url, received) = webhook_receiver::start(answer, Duration::ZERO).await;
    let sink =
        Arc::new(WebhookSink::with_options(&url, HOOK_SECRET.as_bytes(), fast_retries()).unwrap());
    let auth = auth_with_sink(sink.clone());
    auth.record_audit(event(0)).await;
    auth.record_audit(event(1)).await;
    until("the deliveries", || sink.counts().delivered == 2).await;
    let received = received.lock().unwrap().clone();
    let seqs: Vec<u64> = received
        .iter()
        .map(|(_, body)| {
            serde_json::from_slice::<Value>(body).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    // The first record twice (refused, then taken), and only then the second.
    assert_eq!(seqs, [1, 1, 2]);
    assert_eq!((sink.counts().dropped, sink.counts().failed), (0, 0));
}

#[tokio::test]
async fn a_receiver_that_refuses_for_good_is_not_retried() {
    let (url, received) =
        webhook_receiver::start(|_| StatusCode::BAD_REQUEST, Duration::ZERO).await;
    let sink =
        Arc::new(WebhookSink::with_options(&url, HOOK_SECRET.as_bytes(), fast_retries()).unwrap());
    let auth = auth_with_sink(sink.clone());
    auth.record_audit(event(0)).await;
    until("the failure", || sink.counts().failed == 1).await;
    assert_eq!(received.lock().unwrap().len(), 1);
    assert_eq!(sink.counts().delivered, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_or_failing_receiver_does_not_hold_up_the_caller() {
    const CAPACITY: usize = 4;
    const EVENTS: usize = 50;
    let cases: [(&str, Answer, Duration); 2] = [
        (
            "hangs for 30 s",
            |_| StatusCode::OK,
            Duration::from_secs(30),
        ),
        (
            "always answers 500",
            |_| StatusCode::INTERNAL_SERVER_ERROR,
            Duration::ZERO,
        ),
    ];
    for (what, answer, delay) in cases {
        let (url, received) = webhook_receiver::start(answer, delay).await;
        let options = WebhookOptions::default()
            .timeout(Duration::from_secs(30))
            .attempts(3)
            .backoff(Duration::from_secs(1), Duration::from_secs(1))
            .capacity(CAPACITY);
        let sink =
            Arc::new(WebhookSink::with_options(&url, HOOK_SECRET.as_bytes(), options).unwrap());
        let auth = auth_with_sink(sink.clone());
        let started = Instant::now();
        for i in 0..EVENTS {
            let call = Instant::now();
            auth.record_audit(event(i)).await;
            assert!(
                call.elapsed() < Duration::from_secs(1),
                "{what}: record_audit took {:?}",
                call.elapsed()
            );
        }
        assert!(started.elapsed() < Duration::from_secs(1), "{what}");
        // At most one record in flight and CAPACITY waiting: the rest were dropped.
        assert!(
            sink.counts().dropped >= (EVENTS - CAPACITY - 1) as u64,
            "{what}: {} dropped",
            sink.counts().dropped
        );
        assert_eq!(sink.counts().delivered, 0, "{what}");
        // The receiver got the first record (and no more yet: it is still at it).
        until("the first attempt", || !received.lock().unwrap().is_empty()).await;
        assert_eq!(audit_trail(&auth).await.len(), EVENTS, "{what}: all stored");
    }
}

#[tokio::test]
async fn json_lines_in_a_file_parse_back_to_the_records() {
    let path = std::env::temp_dir().join(format!(
        "authcore-audit-{}-{}.jsonl",
        std::process::id(),
        now()
    ));
    let sink = Arc::new(JsonLinesSink::file(&path).unwrap());
    let auth = auth_with_sink(sink.clone());
    for i in 0..10 {
        auth.record_audit(event(i)).await;
    }
    until("10 lines", || sink.counts().delivered == 10).await;
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_no_secret(&text);
    let records = audit_trail(&auth).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), records.len());
    for (line, record) in lines.iter().zip(&records) {
        let json: Value = serde_json::from_str(line).unwrap();
        assert_eq!(json, record_json(record));
        // What a reader rebuilds from the line hashes as the record did.
        let rebuilt = AuditRecord {
            seq: json["seq"].as_u64().unwrap(),
            at: authcore::time::OffsetDateTime::parse(
                json["at"].as_str().unwrap(),
                &authcore::time::format_description::well_known::Rfc3339,
            )
            .unwrap(),
            kind: json["kind"].as_str().unwrap().to_owned(),
            actor: json["actor"].as_str().map(str::to_owned),
            target: json["target"].as_str().map(str::to_owned),
            data: json["data"].to_string(),
            prev_hash: json["prevHash"].as_str().unwrap().to_owned(),
            hash: json["hash"].as_str().unwrap().to_owned(),
        };
        assert_eq!(authcore::audit::expected_hash(&rebuilt), record.hash);
    }
    assert_eq!((sink.counts().dropped, sink.counts().failed), (0, 0));
}

#[test]
fn a_file_that_cannot_be_written_is_an_error_at_start() {
    let dir = std::env::temp_dir()
        .join("authcore-no-such-dir-for-audit")
        .join("x.jsonl");
    assert!(JsonLinesSink::file(dir).is_err());
}
