//! Finding and banning users ([`UserDirectoryStore`]) and the audit log
//! ([`AuditLogStore`]).
//!
//! The directory reads the user index (`user-index`, a sorted set of the ids, all scored 0
//! so that Redis orders them by id) a batch at a time, or an organization's members when
//! the search names one, and filters here. Users written before the index existed are
//! added to it by the first search (a `SCAN` of the user keys). The audit log is one
//! sorted set of the records' JSON, scored by `seq`: a record is appended by a script
//! that refuses a `seq` already there.

use async_trait::async_trait;
use authcore::Account;
use authcore::adapter::{
    AdapterError, AdapterUser, AuditLogStore, AuditQuery, AuditRecord, MAX_AUDIT_PAGE,
    MAX_USER_PAGE, UserBan, UserDirectoryStore, UserPage, UserQuery,
};
use redis::AsyncCommands;

use super::{decode, encode};
use crate::RedisAdapter;
use crate::error::{data_err, redis_err};
use crate::keys::is_user_id;
use crate::scripts;

/// How many ids or records one read of an index takes.
const BATCH: usize = 200;

/// The largest `seq` a sorted set's score (a double) holds exactly: 2^53.
const MAX_SEQ: u64 = 1 << 53;

impl RedisAdapter {
    /// Adds the users written before the user index existed to it, once.
    async fn fill_user_index(&self, op: &'static str) -> Result<(), AdapterError> {
        let mut conn = self.conn.clone();
        let complete: bool = conn
            .exists(self.keys.user_index_complete())
            .await
            .map_err(redis_err(op))?;
        if complete {
            return Ok(());
        }
        let user_prefix = self.keys.user("");
        let mut ids = Vec::new();
        {
            let mut keys = conn
                .scan_match::<_, String>(self.keys.user_pattern())
                .await
                .map_err(redis_err(op))?;
            while let Some(key) = keys.next_item().await {
                let key = key.map_err(redis_err(op))?;
                // `user:<id>` only: the other keys under `user:` have a `:` after it.
                if let Some(id) = key.strip_prefix(&user_prefix).filter(|id| is_user_id(id)) {
                    ids.push(id.to_owned());
                }
            }
        }
        for chunk in ids.chunks(BATCH) {
            let members: Vec<(i64, &str)> = chunk.iter().map(|id| (0, id.as_str())).collect();
            let () = conn
                .zadd_multiple(self.keys.user_index(), &members)
                .await
                .map_err(redis_err(op))?;
        }
        // An id added for a user deleted meanwhile is skipped by the search.
        let () = conn
            .set(self.keys.user_index_complete(), 1)
            .await
            .map_err(redis_err(op))?;
        Ok(())
    }

    /// The next ids to look at after `after` (exclusive): from the user index, or from
    /// `members` (an organization's, sorted) when the search names an organization.
    async fn candidate_ids(
        &self,
        op: &'static str,
        members: Option<&[String]>,
        after: Option<&str>,
    ) -> Result<Vec<String>, AdapterError> {
        if let Some(members) = members {
            let start = after.map_or(0, |a| members.partition_point(|m| m.as_str() <= a));
            return Ok(members[start..].iter().take(BATCH).cloned().collect());
        }
        let min = after.map_or_else(|| "-".to_owned(), |a| format!("({a}"));
        let mut conn = self.conn.clone();
        redis::cmd("ZRANGEBYLEX")
            .arg(self.keys.user_index())
            .arg(min)
            .arg("+")
            .arg("LIMIT")
            .arg(0)
            .arg(BATCH)
            .query_async(&mut conn)
            .await
            .map_err(redis_err(op))
    }

    /// Whether user `user_id` has an account of `provider`.
    async fn has_account_of(
        &self,
        op: &'static str,
        user_id: &str,
        provider: &str,
    ) -> Result<bool, AdapterError> {
        let prefix = self.keys.account(provider, "");
        let mut conn = self.conn.clone();
        let keys: Vec<String> = conn
            .smembers(self.keys.accounts_by_user(user_id))
            .await
            .map_err(redis_err(op))?;
        let keys: Vec<String> = keys
            .into_iter()
            .filter(|k| k.starts_with(&prefix))
            .collect();
        if keys.is_empty() {
            return Ok(false);
        }
        let raws: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&keys)
            .query_async(&mut conn)
            .await
            .map_err(redis_err(op))?;
        // The account itself says its provider: a `:` in another provider's id could
        // give its keys this prefix.
        for raw in raws.into_iter().flatten() {
            let account: Account = decode(op, &raw)?;
            if account.provider == provider && account.user_id.as_deref() == Some(user_id) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `user` meets the text and provider conditions of `query`.
    async fn user_matches(
        &self,
        op: &'static str,
        user: &AdapterUser,
        text: Option<&str>,
        query: &UserQuery,
    ) -> Result<bool, AdapterError> {
        let contains = |field: &Option<String>, text: &str| {
            field
                .as_deref()
                .is_some_and(|f| f.to_lowercase().contains(text))
        };
        if text.is_some_and(|t| !contains(&user.email, t) && !contains(&user.name, t)) {
            return Ok(false);
        }
        match query.provider.as_deref() {
            Some(provider) => self.has_account_of(op, &user.id, provider).await,
            None => Ok(true),
        }
    }
}

#[async_trait]
impl UserDirectoryStore for RedisAdapter {
    async fn search_users(&self, query: &UserQuery) -> Result<UserPage, AdapterError> {
        const OP: &str = "searchUsers";
        let limit = query.limit.min(MAX_USER_PAGE) as usize;
        if limit == 0 {
            return Ok(UserPage::default());
        }
        self.fill_user_index(OP).await?;
        let members = match query.organization_id.as_deref() {
            Some(org) => {
                let mut conn = self.conn.clone();
                let mut ids: Vec<String> = conn
                    .hkeys(self.keys.members(org))
                    .await
                    .map_err(redis_err(OP))?;
                ids.retain(|id| is_user_id(id));
                ids.sort_unstable();
                Some(ids)
            }
            None => None,
        };
        let text = query.text.as_deref().map(str::to_lowercase);
        let mut found: Vec<AdapterUser> = Vec::new();
        let mut after = query.after.clone();
        // One more than asked: whether there is a next page.
        while found.len() <= limit {
            let ids = self
                .candidate_ids(OP, members.as_deref(), after.as_deref())
                .await?;
            let Some(last) = ids.last() else { break };
            after = Some(last.clone());
            let keys: Vec<String> = ids.iter().map(|id| self.keys.user(id)).collect();
            let mut conn = self.conn.clone();
            let raws: Vec<Option<String>> = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            for (id, raw) in ids.iter().zip(raws) {
                // Gone users (deleted after the index was read) are skipped.
                let Some(raw) = raw else { continue };
                let user: AdapterUser = decode(OP, &raw)?;
                if user.id == *id && self.user_matches(OP, &user, text.as_deref(), query).await? {
                    found.push(user);
                    if found.len() > limit {
                        break;
                    }
                }
            }
        }
        let more = found.len() > limit;
        found.truncate(limit);
        let next = more.then(|| found.last().map(|u| u.id.clone())).flatten();
        Ok(UserPage { users: found, next })
    }

    async fn set_user_ban(
        &self,
        user_id: &str,
        ban: Option<&UserBan>,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "setUserBan";
        if !is_user_id(user_id) {
            return Ok(false);
        }
        let json = ban.map(|b| encode(OP, b)).transpose()?;
        self.set_if_user(OP, user_id, self.keys.ban(user_id), json)
            .await
    }

    async fn get_user_ban(&self, user_id: &str) -> Result<Option<UserBan>, AdapterError> {
        const OP: &str = "getUserBan";
        if !is_user_id(user_id) {
            return Ok(None);
        }
        self.get_raw(OP, &self.keys.ban(user_id))
            .await?
            .map(|raw| decode(OP, &raw))
            .transpose()
    }
}

#[async_trait]
impl AuditLogStore for RedisAdapter {
    async fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError> {
        const OP: &str = "lastAuditRecord";
        let mut conn = self.conn.clone();
        let last: Vec<String> = conn
            .zrevrange(self.keys.audit_log(), 0, 0)
            .await
            .map_err(redis_err(OP))?;
        last.first().map(|raw| decode(OP, raw)).transpose()
    }

    async fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError> {
        const OP: &str = "appendAuditRecord";
        if record.seq > MAX_SEQ {
            return Err(data_err(OP, "seq out of range"));
        }
        let json = encode(OP, record)?;
        let mut conn = self.conn.clone();
        let appended: i64 = scripts::APPEND_AUDIT_RECORD
            .key(self.keys.audit_log())
            .arg(record.seq)
            .arg(json)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(appended == 1)
    }

    async fn query_audit_records(
        &self,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AdapterError> {
        const OP: &str = "queryAuditRecords";
        let limit = query.limit.min(MAX_AUDIT_PAGE) as usize;
        let mut found = Vec::new();
        let mut cursor = query.cursor;
        let mut conn = self.conn.clone();
        while found.len() < limit {
            // Exclusive bounds: after (ascending) or before (descending) the cursor.
            let (from, to, command) = match (query.ascending, cursor) {
                (true, Some(c)) => (format!("({c}"), "+inf".to_owned(), "ZRANGEBYSCORE"),
                (true, None) => ("-inf".to_owned(), "+inf".to_owned(), "ZRANGEBYSCORE"),
                (false, Some(c)) => (format!("({c}"), "-inf".to_owned(), "ZREVRANGEBYSCORE"),
                (false, None) => ("+inf".to_owned(), "-inf".to_owned(), "ZREVRANGEBYSCORE"),
            };
            let raws: Vec<String> = redis::cmd(command)
                .arg(self.keys.audit_log())
                .arg(from)
                .arg(to)
                .arg("LIMIT")
                .arg(0)
                .arg(BATCH)
                .query_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            let batch = raws.len();
            for raw in raws {
                let record: AuditRecord = decode(OP, &raw)?;
                cursor = Some(record.seq);
                if query.matches(&record) && found.len() < limit {
                    found.push(record);
                }
            }
            if batch < BATCH {
                break;
            }
        }
        Ok(found)
    }

    async fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError> {
        const OP: &str = "pruneAuditRecords";
        let mut conn = self.conn.clone();
        conn.zrembyscore(self.keys.audit_log(), "-inf", through)
            .await
            .map_err(redis_err(OP))
    }
}
