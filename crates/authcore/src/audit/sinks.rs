//! The audit log's sinks for other systems (the `audit-sinks` feature): JSON lines to
//! standard output or a file ([`JsonLinesSink`]), and signed webhooks ([`WebhookSink`]).
//!
//! Each sink owns a thread fed by a bounded queue: [`AuditSink::deliver`] only puts the
//! record in the queue (or, when it is full, drops the record and counts it), so a sign-in
//! never waits for a disk or a network. Threads rather than tasks, because authcore names
//! no async runtime; the webhook thread uses reqwest's blocking client.
//!
//! What a record looks like on the wire is [`record_json`]; how a webhook is signed is
//! [`webhook_signature`]. docs/manual/audit-server.md tells a receiver how to check it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit as _, Mac as _};
use serde_json::{Map, Value};

use super::AuditSink;
use crate::adapter::AuditRecord;

/// Records a sink's queue holds by default before it drops new ones.
pub const QUEUE_CAPACITY: usize = 10_000;

/// The header of a webhook's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256>`
/// ([`webhook_signature`]).
pub const SIGNATURE_HEADER: &str = "X-Authcore-Signature";

/// The shortest webhook secret taken, in bytes.
pub const MIN_WEBHOOK_SECRET_LEN: usize = 32;

/// A record as other systems get it: a JSON object of the record's fields (`seq`, `at`
/// in RFC 3339, `kind`, `actor`, `target`, `data`, `prevHash`, `hash`), with `data` as a
/// nested object. The JSON lines and the webhooks' bodies are this object.
pub fn record_json(record: &AuditRecord) -> Value {
    let mut out = Map::new();
    out.insert("seq".into(), record.seq.into());
    out.insert(
        "at".into(),
        record
            .at
            .format(&time::format_description::well_known::Rfc3339)
            .map_or(Value::Null, Value::String),
    );
    out.insert("kind".into(), record.kind.clone().into());
    out.insert("actor".into(), record.actor.clone().into());
    out.insert("target".into(), record.target.clone().into());
    // The stored text is an object's compact JSON; should a store give back anything
    // else, it goes out as the text it is.
    let data = serde_json::from_str::<Value>(&record.data)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::String(record.data.clone()));
    out.insert("data".into(), data);
    out.insert("prevHash".into(), record.prev_hash.clone().into());
    out.insert("hash".into(), record.hash.clone().into());
    Value::Object(out)
}

/// The value of [`SIGNATURE_HEADER`] for `body` sent at `timestamp` (Unix seconds):
/// `t=<timestamp>,v1=<hex of HMAC-SHA256(secret, "<timestamp>.<body>")>`.
pub fn webhook_signature(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    format!(
        "t={timestamp},v1={}",
        hex::encode(
            signature_mac(secret, timestamp, body)
                .finalize()
                .into_bytes()
        )
    )
}

/// Whether `header` (the value of [`SIGNATURE_HEADER`]) signs `body` with `secret`, at a
/// time no further than `tolerance` from `now` (Unix seconds), so that a recorded request
/// cannot be replayed later. The comparison takes the same time whatever the signature.
pub fn verify_webhook_signature(
    secret: &[u8],
    header: &str,
    body: &[u8],
    now: u64,
    tolerance: Duration,
) -> bool {
    let mut timestamp = None;
    let mut signature = None;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<u64>().ok(),
            Some(("v1", v)) => signature = hex::decode(v).ok(),
            _ => {}
        }
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return false;
    };
    timestamp.abs_diff(now) <= tolerance.as_secs()
        && signature_mac(secret, timestamp, body)
            .verify_slice(&signature)
            .is_ok()
}

/// HMAC-SHA256 of `"<timestamp>.<body>"` keyed with `secret`.
fn signature_mac(secret: &[u8], timestamp: u64, body: &[u8]) -> Hmac<sha2::Sha256> {
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// What a sink has done with its records so far ([`JsonLinesSink::counts`],
/// [`WebhookSink::counts`]); the dropped and failed ones are also the `metrics` feature's
/// [`AUDIT_SINK_DROPPED`](crate::telemetry::AUDIT_SINK_DROPPED).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SinkCounts {
    /// Records written (JSON lines) or taken by the receiver (webhooks: answered 2xx).
    pub delivered: u64,
    /// Records dropped because the queue was full.
    pub dropped: u64,
    /// Records given up on: a write failed, every attempt of a webhook failed, or its
    /// receiver refused the record (4xx).
    pub failed: u64,
}

/// The running counts behind [`SinkCounts`].
#[derive(Debug, Default)]
struct Counts {
    delivered: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

/// The queue in front of a sink's thread.
struct Queue {
    sender: SyncSender<AuditRecord>,
    counts: Arc<Counts>,
    /// The sink's kind, for the metric's label.
    sink: &'static str,
}

impl Queue {
    /// A queue of `capacity` records and the thread, named `name`, that `work`s through it.
    fn start(
        name: &str,
        sink: &'static str,
        capacity: usize,
        work: impl FnOnce(Receiver<AuditRecord>, Arc<Counts>) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(capacity.max(1));
        let counts = Arc::new(Counts::default());
        let thread_counts = counts.clone();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || work(receiver, thread_counts))?;
        Ok(Queue {
            sender,
            counts,
            sink,
        })
    }

    fn counts(&self) -> SinkCounts {
        SinkCounts {
            delivered: self.counts.delivered.load(Ordering::Relaxed),
            dropped: self.counts.dropped.load(Ordering::Relaxed),
            failed: self.counts.failed.load(Ordering::Relaxed),
        }
    }

    fn put(&self, record: &AuditRecord) {
        match self.sender.try_send(record.clone()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
                crate::telemetry::audit_sink_dropped(self.sink, "queueFull");
            }
            // The thread ended (it panicked): nothing will deliver again.
            Err(TrySendError::Disconnected(_)) => self.counts.count_failed(self.sink),
        }
    }
}

impl Counts {
    fn count_failed(&self, sink: &'static str) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        crate::telemetry::audit_sink_dropped(sink, "failed");
    }
}

/// Where a [`JsonLinesSink`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonLinesTarget {
    /// Standard output.
    Stdout,
    /// A file, created if missing and appended to.
    File(PathBuf),
}

/// An [`AuditSink`] that writes each record as one line of JSON ([`record_json`]) to
/// standard output or appends it to a file, from a thread of its own fed by a bounded
/// queue. A full queue drops the record and counts it ([`JsonLinesSink::counts`]).
pub struct JsonLinesSink {
    queue: Queue,
}

impl std::fmt::Debug for JsonLinesSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonLinesSink").finish_non_exhaustive()
    }
}

impl JsonLinesSink {
    /// JSON lines to standard output.
    pub fn stdout() -> std::io::Result<Self> {
        Self::new(JsonLinesTarget::Stdout, QUEUE_CAPACITY)
    }

    /// JSON lines appended to the file at `path`.
    pub fn file(path: impl Into<PathBuf>) -> std::io::Result<Self> {
        Self::new(JsonLinesTarget::File(path.into()), QUEUE_CAPACITY)
    }

    /// JSON lines to `target`, with a queue of `capacity` records. The file is opened now,
    /// so that a path that cannot be written is an error at start.
    pub fn new(target: JsonLinesTarget, capacity: usize) -> std::io::Result<Self> {
        let out: Box<dyn Write + Send> = match target {
            JsonLinesTarget::Stdout => Box::new(std::io::stdout()),
            JsonLinesTarget::File(path) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ),
        };
        let queue = Queue::start(
            "authcore-audit-lines",
            "jsonLines",
            capacity,
            move |records, counts| write_lines(out, &records, &counts),
        )?;
        Ok(JsonLinesSink { queue })
    }

    /// What it has done with its records so far.
    pub fn counts(&self) -> SinkCounts {
        self.queue.counts()
    }
}

impl AuditSink for JsonLinesSink {
    fn deliver(&self, record: &AuditRecord) {
        self.queue.put(record);
    }
}

/// The JSON lines thread: each line written whole (so that lines of other writers to the
/// same output do not cut into it), flushed whenever the queue is empty, and counted as
/// written once flushed; it ends when the sink is dropped and the queue is drained.
fn write_lines(out: Box<dyn Write + Send>, records: &Receiver<AuditRecord>, counts: &Counts) {
    let mut out = std::io::BufWriter::new(out);
    while let Ok(first) = records.recv() {
        let mut written = 0;
        let mut next = Some(first);
        while let Some(record) = next {
            if write_line(&mut out, &record) {
                written += 1;
            } else {
                counts.count_failed("jsonLines");
            }
            next = records.try_recv().ok();
        }
        match out.flush() {
            Ok(()) => {
                counts.delivered.fetch_add(written, Ordering::Relaxed);
            }
            Err(e) => {
                for _ in 0..written {
                    counts.count_failed("jsonLines");
                }
                tracing::error!(target: "authcore", error = %e, "[auth][error] the audit log's JSON lines could not be written");
            }
        }
    }
}

/// Writes one record's line; whether it was taken.
fn write_line(out: &mut impl Write, record: &AuditRecord) -> bool {
    let mut line = record_json(record).to_string();
    line.push('\n');
    match out.write_all(line.as_bytes()) {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(
                target: "authcore",
                seq = record.seq,
                error = %e,
                "[auth][error] an audit record could not be written as a JSON line"
            );
            false
        }
    }
}

/// How a [`WebhookSink`] sends: the timeout of each request, how many attempts a record
/// gets, the back-off between them, and the queue's size.
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    timeout: Duration,
    attempts: u32,
    first_retry: Duration,
    max_retry: Duration,
    capacity: usize,
}

impl Default for WebhookOptions {
    /// A 10 s timeout, 6 attempts, back-off from 1 s doubling up to 60 s, a queue of
    /// [`QUEUE_CAPACITY`] records.
    fn default() -> Self {
        WebhookOptions {
            timeout: Duration::from_secs(10),
            attempts: 6,
            first_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(60),
            capacity: QUEUE_CAPACITY,
        }
    }
}

impl WebhookOptions {
    /// The timeout of each request (connecting included).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times a record is sent at most (at least 1).
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The wait before the first retry, doubled before each next one up to `max`.
    pub fn backoff(mut self, first: Duration, max: Duration) -> Self {
        self.first_retry = first;
        self.max_retry = max.max(first);
        self
    }

    /// How many records wait for their turn at most; more are dropped and counted.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }
}

/// Why a webhook cannot be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The URL does not parse, or is not `http` or `https` with a host.
    #[error("the webhook URL is not an http:// or https:// URL with a host")]
    Url,
    /// The secret is shorter than [`MIN_WEBHOOK_SECRET_LEN`] bytes.
    #[error("the webhook secret is shorter than {MIN_WEBHOOK_SECRET_LEN} bytes")]
    ShortSecret,
    /// The delivery thread could not start.
    #[error("the webhook's delivery thread could not start: {0}")]
    Thread(#[from] std::io::Error),
}

/// An [`AuditSink`] that POSTs each record as JSON ([`record_json`]) to a URL, signed
/// with HMAC-SHA256 in [`SIGNATURE_HEADER`] ([`webhook_signature`]). One thread per
/// webhook sends the records in order; a network error, a timeout, a 429 or a 5xx answer is
/// tried again after a back-off that doubles, up to the attempts of [`WebhookOptions`], and
/// then counted as failed ([`WebhookSink::counts`]), as is any other answer that is not
/// 2xx. A full queue drops the record and counts it.
///
/// A record can arrive twice (an answer lost after it was taken): its `hash` tells them
/// apart.
pub struct WebhookSink {
    queue: Queue,
}

impl std::fmt::Debug for WebhookSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSink").finish_non_exhaustive()
    }
}

impl WebhookSink {
    /// A webhook to `url` signed with `secret`, with the default [`WebhookOptions`].
    pub fn new(url: &str, secret: &[u8]) -> Result<Self, WebhookError> {
        Self::with_options(url, secret, WebhookOptions::default())
    }

    /// A webhook to `url` signed with `secret` (at least [`MIN_WEBHOOK_SECRET_LEN`]
    /// bytes), sending as `options` say.
    pub fn with_options(
        url: &str,
        secret: &[u8],
        options: WebhookOptions,
    ) -> Result<Self, WebhookError> {
        let url = checked(url, secret)?;
        let hook = Webhook {
            // Only the origin is logged: a webhook's path or query can be its credential.
            origin: url.origin().ascii_serialization(),
            url,
            secret: secret.to_vec(),
            options,
        };
        let queue = Queue::start(
            "authcore-audit-webhook",
            "webhook",
            hook.options.capacity,
            move |records, counts| hook.run(&records, &counts),
        )?;
        Ok(WebhookSink { queue })
    }

    /// Checks `url` and `secret` as [`WebhookSink::new`] does, without starting anything
    /// (for a configuration read before the sinks start).
    pub fn check(url: &str, secret: &[u8]) -> Result<(), WebhookError> {
        checked(url, secret).map(drop)
    }

    /// What it has done with its records so far.
    pub fn counts(&self) -> SinkCounts {
        self.queue.counts()
    }
}

impl AuditSink for WebhookSink {
    fn deliver(&self, record: &AuditRecord) {
        self.queue.put(record);
    }
}

/// `url` if it is `http` or `https` with a host, and `secret` long enough.
fn checked(url: &str, secret: &[u8]) -> Result<url::Url, WebhookError> {
    let url = url::Url::parse(url).map_err(|_| WebhookError::Url)?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(WebhookError::Url);
    }
    if secret.len() < MIN_WEBHOOK_SECRET_LEN {
        return Err(WebhookError::ShortSecret);
    }
    Ok(url)
}

/// A webhook's settings, owned by its thread.
struct Webhook {
    url: url::Url,
    origin: String,
    /// Never printed: `Webhook` has no `Debug`.
    secret: Vec<u8>,
    options: WebhookOptions,
}

/// What one attempt came to.
enum Attempt {
    Delivered,
    /// Worth another attempt (a network error, a timeout, 429, 5xx).
    Retry(String),
    /// Refused for good (another status).
    Refused(u16),
}

impl Webhook {
    /// The delivery thread: one record at a time, in order; it ends when the sink is
    /// dropped and the queue is drained.
    fn run(self, records: &Receiver<AuditRecord>, counts: &Counts) {
        let client = match reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.options.timeout)
            .connect_timeout(self.options.timeout)
            .user_agent(concat!("authcore/", env!("CARGO_PKG_VERSION")))
            .build()
        {
            Ok(client) => client,
            Err(e) => {
                tracing::error!(target: "authcore", webhook = %self.origin, error = %e, "[auth][error] the audit webhook's HTTP client could not be made; its records are dropped");
                while records.recv().is_ok() {
                    counts.count_failed("webhook");
                }
                return;
            }
        };
        while let Ok(record) = records.recv() {
            let body = record_json(&record).to_string();
            if self.send(&client, record.seq, &body) {
                counts.delivered.fetch_add(1, Ordering::Relaxed);
            } else {
                counts.count_failed("webhook");
            }
        }
    }

    /// Sends one record, again after each back-off while it is worth it; whether it was
    /// taken.
    fn send(&self, client: &reqwest::blocking::Client, seq: u64, body: &str) -> bool {
        let mut wait = self.options.first_retry;
        for attempt in 1..=self.options.attempts {
            let why = match self.attempt(client, body) {
                Attempt::Delivered => return true,
                Attempt::Refused(status) => {
                    tracing::error!(target: "authcore", webhook = %self.origin, seq, status, "[auth][error] the audit webhook refused a record");
                    return false;
                }
                Attempt::Retry(why) => why,
            };
            if attempt == self.options.attempts {
                tracing::error!(target: "authcore", webhook = %self.origin, seq, attempts = attempt, error = %why, "[auth][error] the audit webhook did not take a record; it is dropped");
                return false;
            }
            tracing::warn!(target: "authcore", webhook = %self.origin, seq, attempt, error = %why, "[auth][warn] the audit webhook did not take a record; trying again");
            std::thread::sleep(wait);
            wait = wait.saturating_mul(2).min(self.options.max_retry);
        }
        false
    }

    fn attempt(&self, client: &reqwest::blocking::Client, body: &str) -> Attempt {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let signature = webhook_signature(&self.secret, now, body.as_bytes());
        let sent = client
            .post(self.url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(SIGNATURE_HEADER, signature)
            .body(body.to_owned())
            .send();
        match sent {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Attempt::Delivered
                } else if status.is_server_error()
                    || status == reqwest::StatusCode::TOO_MANY_REQUESTS
                {
                    Attempt::Retry(format!("answered {}", status.as_u16()))
                } else {
                    Attempt::Refused(status.as_u16())
                }
            }
            // Without the URL: its path or query can be the webhook's credential.
            Err(e) => Attempt::Retry(e.without_url().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"whsec-0123456789abcdef0123456789abcdef";

    #[test]
    fn the_signature_is_hmac_sha256_of_the_timestamp_and_body() {
        // Computed apart: python3 -c 'import hmac,hashlib; print(hmac.new(b"whsec-0123456789abcdef0123456789abcdef", b"1700000000.{\"seq\":1}", hashlib.sha256).hexdigest())'
        assert_eq!(
            webhook_signature(SECRET, 1_700_000_000, br#"{"seq":1}"#),
            "t=1700000000,v1=9caa3695a14c7f237a49160ff10aecafdf5b2e07d7ea969f31d74de75e867f24"
        );
    }

    #[test]
    fn verification_refuses_what_was_not_signed_now_with_the_secret() {
        let body = br#"{"seq":1}"#;
        let header = webhook_signature(SECRET, 1_700_000_000, body);
        let tolerance = Duration::from_secs(300);
        let other_secret = b"whsec-another-secret-of-32-bytes-or-more".as_slice();
        // What, the secret, the header, the body, the time, whether it verifies.
        type Case<'a> = (&'a str, &'a [u8], &'a str, &'a [u8], u64, bool);
        let cases: &[Case] = &[
            ("as signed", SECRET, &header, body, 1_700_000_000, true),
            (
                "within the tolerance",
                SECRET,
                &header,
                body,
                1_700_000_300,
                true,
            ),
            (
                "past the tolerance",
                SECRET,
                &header,
                body,
                1_700_000_301,
                false,
            ),
            (
                "ahead of the clock",
                SECRET,
                &header,
                body,
                1_699_999_000,
                false,
            ),
            (
                "another secret",
                other_secret,
                &header,
                body,
                1_700_000_000,
                false,
            ),
            (
                "another body",
                SECRET,
                &header,
                br#"{"seq":2}"#,
                1_700_000_000,
                false,
            ),
            ("no timestamp", SECRET, "v1=00", body, 1_700_000_000, false),
            (
                "no signature",
                SECRET,
                "t=1700000000",
                body,
                1_700_000_000,
                false,
            ),
            (
                "not hex",
                SECRET,
                "t=1700000000,v1=zz",
                body,
                1_700_000_000,
                false,
            ),
            ("empty", SECRET, "", body, 1_700_000_000, false),
        ];
        for (what, secret, header, body, now, ok) in cases {
            assert_eq!(
                verify_webhook_signature(secret, header, body, *now, tolerance),
                *ok,
                "{what}"
            );
        }
    }

    #[test]
    fn webhook_settings_are_checked() {
        let cases: &[(&str, &[u8], Option<&str>)] = &[
            ("https://siem.example.com/hook", SECRET, None),
            ("http://127.0.0.1:9000/", SECRET, None),
            ("ftp://siem.example.com/hook", SECRET, Some("URL")),
            ("file:///etc/passwd", SECRET, Some("URL")),
            ("siem.example.com/hook", SECRET, Some("URL")),
            ("", SECRET, Some("URL")),
            ("https://siem.example.com/hook", b"short", Some("shorter")),
            ("https://siem.example.com/hook", b"", Some("shorter")),
        ];
        for (url, secret, refused) in cases {
            match (WebhookSink::check(url, secret), refused) {
                (Ok(()), None) => {}
                (Err(e), Some(word)) => assert!(e.to_string().contains(word), "{url}: {e}"),
                (got, want) => panic!("{url}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn a_record_goes_out_with_its_data_as_an_object() {
        let record = crate::audit::AuditEvent::new("signIn")
            .actor("u1")
            .with("client", "192.0.2.1")
            .seal(None, time::macros::datetime!(2026-11-29 10:00:00.5 UTC));
        let json = record_json(&record);
        assert_eq!(
            json,
            serde_json::json!({
                "seq": 1,
                "at": "2026-11-29T10:00:00.5Z",
                "kind": "signIn",
                "actor": "u1",
                "target": null,
                "data": {"client": "192.0.2.1"},
                "prevHash": crate::audit::GENESIS,
                "hash": record.hash,
            })
        );
        // The data's text as hashed is the nested object written compactly.
        assert_eq!(json["data"].to_string(), record.data);
    }
}
