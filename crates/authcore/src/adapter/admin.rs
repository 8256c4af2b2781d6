//! What an operator's view needs of storage beyond Auth.js: finding users and banning them
//! ([`UserDirectoryStore`]), and the append-only audit log ([`AuditLogStore`]). The rules
//! (who is an administrator, what a ban closes, how the log's records chain) live in
//! `authcore::admin` and `authcore::audit`; a store keeps the data as given.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{AdapterError, AdapterUser};

/// The most users one [`UserDirectoryStore::search_users`] call answers, whatever its
/// [`UserQuery::limit`].
pub const MAX_USER_PAGE: u32 = 200;

/// The most records one [`AuditLogStore::query_audit_records`] call answers, whatever its
/// [`AuditQuery::limit`].
pub const MAX_AUDIT_PAGE: u32 = 1000;

/// A ban of a user: while it holds, the user cannot sign in anywhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserBan {
    /// Why, as the administrator wrote it (shown to administrators, never to the user).
    pub reason: String,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// When it ends by itself; `None` for a ban until lifted.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub until: Option<OffsetDateTime>,
    /// The administrator who made it (a user id), if one did.
    #[serde(default)]
    pub by: Option<String>,
}

impl UserBan {
    /// Whether the ban holds at `now`: made, and not ended by its `until`.
    pub fn holds_at(&self, now: OffsetDateTime) -> bool {
        self.until.is_none_or(|until| now < until)
    }
}

/// Which users [`UserDirectoryStore::search_users`] answers: every condition given must
/// hold; users come ordered by id, from after [`UserQuery::after`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserQuery {
    /// Text found, without regard to case, in the user's email address or name (a plain
    /// substring: no pattern characters).
    pub text: Option<String>,
    /// Users with an account of this provider (its id).
    pub provider: Option<String>,
    /// Members of this organization (its id).
    pub organization_id: Option<String>,
    /// The page's start: users whose id sorts after this (the last id of the page before).
    pub after: Option<String>,
    /// How many at most (at most [`MAX_USER_PAGE`]; 0 answers none).
    pub limit: u32,
}

/// A page of users and where the next starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserPage {
    /// The users, ordered by id.
    pub users: Vec<AdapterUser>,
    /// The [`UserQuery::after`] of the next page; `None` when this page is the last.
    pub next: Option<String>,
}

/// Finding users and banning them, for administrators.
#[async_trait]
pub trait UserDirectoryStore: Send + Sync {
    /// The users matching `query`, ordered by id (beyond Auth.js).
    async fn search_users(&self, query: &UserQuery) -> Result<UserPage, AdapterError>;
    /// Sets (or with `None` lifts) the user's ban, replacing any earlier one; whether the
    /// user exists (beyond Auth.js). The ban goes when the user is deleted.
    async fn set_user_ban(
        &self,
        user_id: &str,
        ban: Option<&UserBan>,
    ) -> Result<bool, AdapterError>;
    /// The user's ban as last set, holding or ended (beyond Auth.js).
    async fn get_user_ban(&self, user_id: &str) -> Result<Option<UserBan>, AdapterError>;
}

/// One record of the audit log, as stored: what happened, and the hash that chains it to
/// the record before ([`crate::audit`] computes and checks the chain; a store keeps every
/// field exactly as given, `at` to the millisecond).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Its place in the log: 1 for the first record, one more for each next.
    pub seq: u64,
    /// When it happened (to the millisecond).
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// What happened (`signIn`, `signInFailed`, `admin.ban` …: see `authcore::audit`).
    pub kind: String,
    /// Who did it (a user id), when someone did.
    #[serde(default)]
    pub actor: Option<String>,
    /// Whom it was done to (a user id), when not the actor.
    #[serde(default)]
    pub target: Option<String>,
    /// The details, as a JSON object's text (method, client address, user agent, what was
    /// before and after): never a secret.
    pub data: String,
    /// The hash of the record before (hex), or 64 zeros for the first record.
    #[serde(rename = "prevHash")]
    pub prev_hash: String,
    /// This record's hash (hex): of `prev_hash` and the fields above.
    pub hash: String,
}

/// Which audit records [`AuditLogStore::query_audit_records`] answers: every condition
/// given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Records whose kind is this or starts with it and a `.` (`admin` matches
    /// `admin.ban`).
    pub kind: Option<String>,
    /// Records whose actor or target is this user.
    pub user: Option<String>,
    /// Records at or after this time.
    pub since: Option<OffsetDateTime>,
    /// Records before this time.
    pub until: Option<OffsetDateTime>,
    /// Records after this `seq` (in ascending order) or before it (descending): the
    /// page's start.
    pub cursor: Option<u64>,
    /// Oldest first (`true`, for the chain's check) or newest first.
    pub ascending: bool,
    /// How many at most (at most [`MAX_AUDIT_PAGE`]; 0 answers none).
    pub limit: u32,
}

impl AuditQuery {
    /// Whether `record` meets the conditions other than the cursor and the limit (for
    /// stores that filter in memory).
    pub fn matches(&self, record: &AuditRecord) -> bool {
        let kind = self.kind.as_deref().is_none_or(|k| {
            record.kind == k
                || record
                    .kind
                    .strip_prefix(k)
                    .is_some_and(|rest| rest.starts_with('.'))
        });
        let user = self.user.as_deref().is_none_or(|u| {
            record.actor.as_deref() == Some(u) || record.target.as_deref() == Some(u)
        });
        kind && user
            && self.since.is_none_or(|t| record.at >= t)
            && self.until.is_none_or(|t| record.at < t)
    }
}

/// The append-only audit log. The store assigns nothing: [`crate::audit`] reads the last
/// record, chains the next to it and appends it with the next `seq`, which a store refuses
/// when taken (another instance appended first), so that concurrent appends keep one chain.
#[async_trait]
pub trait AuditLogStore: Send + Sync {
    /// The record with the highest `seq`, if any (beyond Auth.js).
    async fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError>;
    /// Appends `record`; `false` (and nothing stored) when its `seq` is taken (beyond
    /// Auth.js). Atomic: of concurrent appends with one `seq`, one is stored.
    async fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError>;
    /// The records matching `query`, by `seq` in its order (beyond Auth.js).
    async fn query_audit_records(
        &self,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AdapterError>;
    /// Deletes the records with a `seq` up to `through` (retention); how many went
    /// (beyond Auth.js).
    async fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError>;
}
