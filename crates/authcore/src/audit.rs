//! The audit log (beyond Auth.js): an append-only record of sign-ins and their failures,
//! lock-outs, changes to how users sign in, organization and role changes, API keys, the
//! OpenID Provider's grants and revocations, and every administrator's action.
//!
//! Each record carries the hash of the one before ([`chain_hash`]), so a record altered or
//! removed in the database breaks the chain where it was, and [`ChainCheck`] (the server's
//! `audit-check` command) reports it. Records are stored by the adapter's
//! [`AuditLogStore`] when [`AuditLog::store`] is on, and handed to each [`AuditSink`] (JSON
//! lines, webhooks) as they are made. No record carries a password, code, token or secret:
//! the events below are built from ids, names and addresses only.
//!
//! Retention ([`AuditLog::retention`]) deletes the oldest records and appends an
//! `audit.pruned` record naming the last one deleted and its hash, so that the check still
//! finds the chain anchored: records removed from the start without it are reported.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::adapter::{AdapterError, AuditLogStore, AuditQuery, AuditRecord, MAX_AUDIT_PAGE};

#[cfg(feature = "audit-sinks")]
mod sinks;
#[cfg(feature = "audit-sinks")]
pub use sinks::{
    JsonLinesSink, JsonLinesTarget, MIN_WEBHOOK_SECRET_LEN, QUEUE_CAPACITY, SIGNATURE_HEADER,
    SinkCounts, WebhookError, WebhookOptions, WebhookSink, record_json, verify_webhook_signature,
    webhook_signature,
};

/// The `prev_hash` of the first record: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The kind of the record that retention appends after deleting old records.
pub const PRUNED: &str = "audit.pruned";

/// The hash (hex SHA-256) of a record: of the hash before it and each of its fields, each
/// fed with its length first, so that no two different records hash alike.
pub fn chain_hash(
    prev_hash: &str,
    seq: u64,
    at: OffsetDateTime,
    kind: &str,
    actor: Option<&str>,
    target: Option<&str>,
    data: &str,
) -> String {
    let mut h = crate::crypto::Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    };
    field(prev_hash.as_bytes());
    field(&seq.to_be_bytes());
    field(&crate::types::unix_millis(at).to_be_bytes());
    field(kind.as_bytes());
    // An absent actor and an empty one differ.
    for part in [actor, target] {
        match part {
            Some(p) => {
                field(b"1");
                field(p.as_bytes());
            }
            None => field(b"0"),
        }
    }
    field(data.as_bytes());
    hex::encode(h.finish())
}

/// The hash `record` should carry, from its own fields.
pub fn expected_hash(record: &AuditRecord) -> String {
    chain_hash(
        &record.prev_hash,
        record.seq,
        record.at,
        &record.kind,
        record.actor.as_deref(),
        record.target.as_deref(),
        &record.data,
    )
}

/// Something that happened, before it is a record: what, who, to whom, and the details.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// What happened (`signIn`, `admin.ban` …).
    pub kind: String,
    /// Who did it (a user id).
    pub actor: Option<String>,
    /// Whom it was done to (a user id), when not the actor.
    pub target: Option<String>,
    /// The details (never a secret).
    pub data: Map<String, Value>,
}

impl AuditEvent {
    /// An event of `kind` with no actor, target or details yet.
    pub fn new(kind: impl Into<String>) -> Self {
        AuditEvent {
            kind: kind.into(),
            actor: None,
            target: None,
            data: Map::new(),
        }
    }

    /// This event, done by `actor` (a user id).
    pub fn actor(mut self, actor: impl Into<String>) -> Self {
        self.actor = Some(actor.into());
        self
    }

    /// This event, done to `target` (a user id).
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// This event with the detail `key` (a `null` value is left out).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        let value = value.into();
        if !value.is_null() {
            self.data.insert(key.to_owned(), value);
        }
        self
    }

    /// The record this event makes after `prev` (the last record, if any), at `at`.
    pub fn seal(&self, prev: Option<&AuditRecord>, at: OffsetDateTime) -> AuditRecord {
        // Stored to the millisecond: the hash is of what the store gives back.
        let at = at
            .replace_nanosecond(at.millisecond() as u32 * 1_000_000)
            .unwrap_or(at);
        let seq = prev.map_or(1, |p| p.seq.saturating_add(1));
        let prev_hash = prev.map_or(GENESIS, |p| p.hash.as_str()).to_owned();
        let data = Value::Object(self.data.clone()).to_string();
        let hash = chain_hash(
            &prev_hash,
            seq,
            at,
            &self.kind,
            self.actor.as_deref(),
            self.target.as_deref(),
            &data,
        );
        AuditRecord {
            seq,
            at,
            kind: self.kind.clone(),
            actor: self.actor.clone(),
            target: self.target.clone(),
            data,
            prev_hash,
            hash,
        }
    }
}

/// What the check found wrong with the chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "fault", rename_all = "camelCase")]
pub enum ChainFault {
    /// The record's fields do not give its hash: it was altered.
    Altered {
        /// The record.
        seq: u64,
    },
    /// The record does not follow the one before it: records between them were removed
    /// (or the record was altered to point elsewhere).
    Broken {
        /// The record before, as found.
        after: u64,
        /// The record found next.
        seq: u64,
    },
    /// The first record is not the log's first, and no `audit.pruned` record vouches for
    /// the records before it: they were removed.
    Unanchored {
        /// The first record found.
        seq: u64,
    },
}

impl std::fmt::Display for ChainFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainFault::Altered { seq } => write!(f, "record {seq} was altered"),
            ChainFault::Broken { after, seq } => write!(
                f,
                "record {seq} does not follow record {after}: records between them were removed or altered"
            ),
            ChainFault::Unanchored { seq } => write!(
                f,
                "the log starts at record {seq} and no retention record accounts for the records before it: they were removed"
            ),
        }
    }
}

/// The check of a chain, fed its records in ascending `seq` ([`ChainCheck::feed`]), over
/// plain data. The server's `audit-check` command runs it over the whole store
/// ([`check`]).
#[derive(Debug, Default)]
pub struct ChainCheck {
    first: Option<(u64, String)>,
    last: Option<(u64, String)>,
    pruned: Vec<(u64, String)>,
    checked: u64,
    faults: Vec<ChainFault>,
}

/// What [`ChainCheck`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChainReport {
    /// How many records were checked.
    pub checked: u64,
    /// The first record's `seq`, if any.
    pub first: Option<u64>,
    /// The last record's `seq`, if any.
    pub last: Option<u64>,
    /// The last record's hash: written down elsewhere, it also shows records removed
    /// from the end later.
    #[serde(rename = "lastHash")]
    pub last_hash: Option<String>,
    /// What is wrong; empty when the chain is whole.
    pub faults: Vec<ChainFault>,
}

impl ChainCheck {
    /// A check that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the next record.
    pub fn feed(&mut self, record: &AuditRecord) {
        self.checked += 1;
        if expected_hash(record) != record.hash {
            self.faults.push(ChainFault::Altered { seq: record.seq });
        }
        match &self.last {
            None => self.first = Some((record.seq, record.prev_hash.clone())),
            Some((seq, hash)) => {
                if record.seq != seq.saturating_add(1) || record.prev_hash != *hash {
                    self.faults.push(ChainFault::Broken {
                        after: *seq,
                        seq: record.seq,
                    });
                }
            }
        }
        if record.kind == PRUNED
            && let Ok(Value::Object(data)) = serde_json::from_str::<Value>(&record.data)
            && let (Some(through), Some(hash)) = (
                data.get("throughSeq").and_then(Value::as_u64),
                data.get("lastHash").and_then(Value::as_str),
            )
        {
            self.pruned.push((through, hash.to_owned()));
        }
        self.last = Some((record.seq, record.hash.clone()));
    }

    /// What the check found.
    pub fn finish(mut self) -> ChainReport {
        if let Some((seq, prev_hash)) = &self.first {
            let anchored = (*seq == 1 && prev_hash == GENESIS)
                || self
                    .pruned
                    .iter()
                    .any(|(through, hash)| through.saturating_add(1) == *seq && hash == prev_hash);
            if !anchored {
                self.faults.insert(0, ChainFault::Unanchored { seq: *seq });
            }
        }
        ChainReport {
            checked: self.checked,
            first: self.first.map(|(seq, _)| seq),
            last: self.last.as_ref().map(|(seq, _)| *seq),
            last_hash: self.last.map(|(_, hash)| hash),
            faults: self.faults,
        }
    }
}

/// Checks the whole log in `store`, oldest first, a page at a time.
pub async fn check(store: &dyn AuditLogStore) -> Result<ChainReport, AdapterError> {
    let mut chain = ChainCheck::new();
    let mut cursor = None;
    loop {
        let page = store
            .query_audit_records(&AuditQuery {
                cursor,
                ascending: true,
                limit: MAX_AUDIT_PAGE,
                ..AuditQuery::default()
            })
            .await?;
        let Some(last) = page.last() else {
            break;
        };
        cursor = Some(last.seq);
        for record in &page {
            chain.feed(record);
        }
    }
    Ok(chain.finish())
}

/// Where records go besides the store, as they are made: JSON lines, webhooks, a SIEM.
/// [`AuditSink::deliver`] must not block (a sink queues the record and sends it on its
/// own task); a sign-in never waits for a sink.
pub trait AuditSink: Send + Sync + 'static {
    /// Takes one record.
    fn deliver(&self, record: &AuditRecord);
}

/// The audit log's configuration (`AuthConfigBuilder::audit_log`).
#[derive(Clone, Default)]
pub struct AuditLog {
    pub(crate) store: bool,
    pub(crate) retention: Option<Duration>,
    pub(crate) sinks: Vec<Arc<dyn AuditSink>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("store", &self.store)
            .field("retention", &self.retention)
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl AuditLog {
    /// An audit log that keeps nothing and sends nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the records in the adapter (it needs the [`AuditLogStore`] capability).
    pub fn store(mut self, on: bool) -> Self {
        self.store = on;
        self
    }

    /// Deletes stored records older than `age` ([`crate::Auth::prune_audit_log`]); kept
    /// for ever when unset.
    pub fn retention(mut self, age: Duration) -> Self {
        self.retention = Some(age);
        self
    }

    /// Also hands each record to `sink`.
    pub fn sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.sinks.push(sink);
        self
    }
}

/// How many times an append is tried again when another instance took its `seq`.
const APPEND_ATTEMPTS: usize = 16;

/// The configured audit log at work: appends to the store one record at a time in this
/// process (other instances are kept in one chain by the store refusing a taken `seq`),
/// then hands the record to the sinks.
pub(crate) struct Auditor {
    log: AuditLog,
    /// The last record made, for a log without a store (sinks still get a chain) and, when
    /// the store took it (`true`), the record the next append follows first; and the lock
    /// that keeps this process's appends in order.
    last: futures_util::lock::Mutex<Option<(AuditRecord, bool)>>,
}

impl Auditor {
    pub(crate) fn new(log: AuditLog) -> Self {
        Auditor {
            log,
            last: futures_util::lock::Mutex::new(None),
        }
    }

    /// Whether anything is recorded at all.
    pub(crate) fn is_on(&self) -> bool {
        self.log.store || !self.log.sinks.is_empty()
    }

    /// Whether records are stored.
    pub(crate) fn stores(&self) -> bool {
        self.log.store
    }

    /// The retention, if set.
    pub(crate) fn retention(&self) -> Option<Duration> {
        self.log.retention
    }

    /// Records `event`: stored (when on) and handed to the sinks. A store failure is the
    /// error; the sinks then get nothing.
    pub(crate) async fn record(
        &self,
        store: Option<&dyn AuditLogStore>,
        event: &AuditEvent,
    ) -> Result<AuditRecord, AdapterError> {
        let mut last = self.last.lock().await;
        let record = match store.filter(|_| self.log.store) {
            Some(store) => {
                let appended = last.as_ref().filter(|(_, stored)| *stored);
                match append(store, event, appended.map(|(r, _)| r)).await {
                    Ok(record) => {
                        *last = Some((record.clone(), true));
                        record
                    }
                    Err(e) => {
                        // What the store holds last is unknown now: read again next time.
                        *last = None;
                        return Err(e);
                    }
                }
            }
            None => {
                let record = event.seal(last.as_ref().map(|(r, _)| r), OffsetDateTime::now_utc());
                *last = Some((record.clone(), false));
                record
            }
        };
        drop(last);
        for sink in &self.log.sinks {
            sink.deliver(&record);
        }
        Ok(record)
    }
}

/// Appends `event` after the store's last record, again after whichever record another
/// instance appended first.
///
/// `appended` is the record this process appended last: while no other instance writes,
/// it is the store's last, and the record goes in without reading the store first. When
/// another instance appended since, the store refuses its `seq` (taken) and the record
/// follows the store's last as read.
async fn append(
    store: &dyn AuditLogStore,
    event: &AuditEvent,
    appended: Option<&AuditRecord>,
) -> Result<AuditRecord, AdapterError> {
    if let Some(prev) = appended {
        let record = event.seal(Some(prev), OffsetDateTime::now_utc());
        if store.append_audit_record(&record).await? {
            return Ok(record);
        }
    }
    for _ in 0..APPEND_ATTEMPTS {
        let prev = store.last_audit_record().await?;
        let record = event.seal(prev.as_ref(), OffsetDateTime::now_utc());
        if store.append_audit_record(&record).await? {
            return Ok(record);
        }
    }
    Err(AdapterError::Conflict(
        "the audit log's next record was taken by other writers too many times".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> Vec<AuditRecord> {
        let at = time::macros::datetime!(2026-11-29 10:00:00.123456 UTC);
        let mut out: Vec<AuditRecord> = Vec::new();
        for i in 0..n {
            let event = AuditEvent::new("signIn")
                .actor(format!("u{i}"))
                .with("client", "192.0.2.1");
            out.push(event.seal(out.last(), at));
        }
        out
    }

    fn report(records: &[AuditRecord]) -> ChainReport {
        let mut check = ChainCheck::new();
        records.iter().for_each(|r| check.feed(r));
        check.finish()
    }

    #[test]
    fn a_whole_chain_checks() {
        let records = chain(5);
        assert_eq!(records[0].prev_hash, GENESIS);
        assert_eq!(records[0].at.nanosecond(), 123_000_000);
        let r = report(&records);
        assert_eq!((r.checked, r.first, r.last), (5, Some(1), Some(5)));
        assert!(r.faults.is_empty(), "{:?}", r.faults);
        assert_eq!(r.last_hash.as_deref(), Some(records[4].hash.as_str()));
        assert!(report(&[]).faults.is_empty());
    }

    #[test]
    fn tampering_is_found_where_it_was() {
        type Tamper = fn(&mut Vec<AuditRecord>);
        let cases: &[(&str, Tamper, &[ChainFault])] = &[
            (
                "a field altered",
                |r| r[2].data = r#"{"client":"10.0.0.1"}"#.into(),
                &[ChainFault::Altered { seq: 3 }],
            ),
            (
                "the actor removed",
                |r| r[1].actor = None,
                &[ChainFault::Altered { seq: 2 }],
            ),
            (
                "altered and its hash recomputed",
                |r| {
                    r[2].kind = "signOut".into();
                    r[2].hash = expected_hash(&r[2]);
                },
                &[ChainFault::Broken { after: 3, seq: 4 }],
            ),
            (
                "a record removed",
                |r| {
                    r.remove(2);
                },
                &[ChainFault::Broken { after: 2, seq: 4 }],
            ),
            (
                "the first records removed",
                |r| {
                    r.drain(..2);
                },
                &[ChainFault::Unanchored { seq: 3 }],
            ),
            (
                "two records swapped",
                |r| r.swap(1, 2),
                &[
                    ChainFault::Broken { after: 1, seq: 3 },
                    ChainFault::Broken { after: 3, seq: 2 },
                    ChainFault::Broken { after: 2, seq: 4 },
                ],
            ),
        ];
        for (what, tamper, faults) in cases {
            let mut records = chain(5);
            tamper(&mut records);
            assert_eq!(report(&records).faults, *faults, "{what}");
        }
    }

    #[test]
    fn a_pruned_start_is_anchored_by_its_record() {
        let mut records = chain(4);
        let pruned = AuditEvent::new(PRUNED)
            .with("throughSeq", 2)
            .with("lastHash", records[1].hash.clone());
        let record = pruned.seal(records.last(), OffsetDateTime::now_utc());
        records.push(record);
        records.drain(..2);
        assert!(report(&records).faults.is_empty());
        // A retention record that names another hash vouches for nothing.
        let mut forged = chain(4);
        let wrong = AuditEvent::new(PRUNED)
            .with("throughSeq", 2)
            .with("lastHash", GENESIS);
        let record = wrong.seal(forged.last(), OffsetDateTime::now_utc());
        forged.push(record);
        forged.drain(..2);
        assert_eq!(report(&forged).faults, [ChainFault::Unanchored { seq: 3 }]);
    }

    #[test]
    fn absent_and_empty_fields_hash_apart() {
        let at = OffsetDateTime::UNIX_EPOCH;
        let a = chain_hash(GENESIS, 1, at, "k", None, Some(""), "{}");
        let b = chain_hash(GENESIS, 1, at, "k", Some(""), None, "{}");
        let c = chain_hash(GENESIS, 1, at, "k", None, None, "{}");
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(b, c);
    }

    #[tokio::test]
    async fn instances_taking_turns_keep_one_chain() {
        // Each instance appends after the record it appended last first; the other's
        // append in between takes that seq, so each append but the first follows the
        // store's last as read.
        let store = crate::adapter::MemoryAdapter::new();
        let a = Auditor::new(AuditLog::new().store(true));
        let b = Auditor::new(AuditLog::new().store(true));
        for i in 0..6 {
            let (auditor, name) = if i % 3 == 0 { (&b, "b") } else { (&a, "a") };
            let record = auditor
                .record(Some(&store), &AuditEvent::new("signIn").actor(name))
                .await
                .unwrap();
            assert_eq!(record.seq, i + 1);
        }
        let records = store
            .query_audit_records(&AuditQuery {
                ascending: true,
                limit: MAX_AUDIT_PAGE,
                ..AuditQuery::default()
            })
            .await
            .unwrap();
        let actors: String = records.iter().filter_map(|r| r.actor.as_deref()).collect();
        assert_eq!(actors, "baabaa");
        let report = check(&store).await.unwrap();
        assert_eq!(report.checked, 6);
        assert!(report.faults.is_empty(), "{:?}", report.faults);
    }

    #[tokio::test]
    async fn concurrent_appends_keep_one_chain() {
        let store = crate::adapter::MemoryAdapter::new();
        let auditor = Arc::new(Auditor::new(AuditLog::new().store(true)));
        let mut tasks = Vec::new();
        for i in 0..20 {
            let (store, auditor) = (store.clone(), auditor.clone());
            tasks.push(tokio::spawn(async move {
                auditor
                    .record(
                        Some(&store),
                        &AuditEvent::new("signIn").actor(format!("u{i}")),
                    )
                    .await
            }));
        }
        for t in tasks {
            assert!(t.await.unwrap().is_ok());
        }
        // A second process appending meanwhile (its own lock) still lands in the chain.
        let other = Auditor::new(AuditLog::new().store(true));
        other
            .record(Some(&store), &AuditEvent::new("signOut"))
            .await
            .unwrap();
        let report = check(&store).await.unwrap();
        assert_eq!(report.checked, 21);
        assert!(report.faults.is_empty(), "{:?}", report.faults);
    }
}
