//! Finding and banning users, and the audit log.
//!
//! A search is one statement whose conditions each hold when their value is `NULL` (not
//! given); its text is a `LIKE` pattern with `!` as the escape character, so that `%`, `_`
//! and `!` in it are plain characters, and so is `\` (with an `ESCAPE` clause no database
//! reads it as one). An
//! audit record is appended by a plain `INSERT`: `seq` is the table's key, so of concurrent
//! appends of one `seq` the database keeps one and refuses the others.

use authcore::adapter::{
    AdapterError, AdapterUser, AuditQuery, AuditRecord, MAX_AUDIT_PAGE, MAX_USER_PAGE, UserBan,
    UserPage, UserQuery,
};

use super::{Reader, one};
use crate::db::{Arg, Col, Pool, USER};
use crate::error::{data_error, map_sqlx};

/// The columns of a ban row: reason, created, expires, by.
const BAN: [Col; 4] = [Col::Text, Col::Time, Col::Time, Col::Text];
/// The columns of an audit record row: seq, at, kind, actor, target, data, prevHash, hash.
const AUDIT_RECORD: [Col; 8] = [
    Col::Int,
    Col::Time,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
];

impl Reader {
    fn audit_record(&mut self) -> Result<AuditRecord, AdapterError> {
        Ok(AuditRecord {
            seq: u64::try_from(self.int()?).map_err(|_| self.mismatch())?,
            at: self.time()?,
            kind: self.text()?,
            actor: self.opt_text()?,
            target: self.opt_text()?,
            data: self.text()?,
            prev_hash: self.text()?,
            hash: self.text()?,
        })
    }
}

/// A `LIKE` pattern that finds `text` anywhere, with `!` escaping the pattern characters
/// (`%`, `_`) and itself.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 8);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '!' | '%' | '_') {
            pattern.push('!');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `value` bound twice: for its `IS NULL` test and for its condition.
fn twice(value: Arg) -> [Arg; 2] {
    [value.clone(), value]
}

pub(crate) async fn search_users(pool: &Pool, query: &UserQuery) -> Result<UserPage, AdapterError> {
    const OP: &str = "search_users";
    let limit = query.limit.min(MAX_USER_PAGE);
    // An `after` that names no row here (on PostgreSQL, not an integer) has nothing after
    // it that the caller could have paged to.
    let after_ok = query.after.as_deref().is_none_or(|a| pool.is_user_id(a));
    if limit == 0 || !after_ok {
        return Ok(UserPage::default());
    }
    let pattern = Arg::Text(query.text.as_deref().map(like_pattern));
    let mut args = vec![pattern.clone(), pattern.clone(), pattern];
    args.extend(twice(Arg::Text(query.provider.clone())));
    args.extend(twice(Arg::Text(query.organization_id.clone())));
    args.extend(twice(Arg::OptUserId(query.after.clone())));
    // One more than asked: whether there is a next page.
    args.push(Arg::Int(Some(i64::from(limit) + 1)));
    let rows = pool
        .fetch_all(&pool.sql().search_users, args, &USER)
        .await
        .map_err(map_sqlx(OP))?;
    let mut users = rows
        .into_iter()
        .map(|row| Reader::new(OP, row).user())
        .collect::<Result<Vec<AdapterUser>, _>>()?;
    let more = users.len() > limit as usize;
    users.truncate(limit as usize);
    let next = more.then(|| users.last().map(|u| u.id.clone())).flatten();
    Ok(UserPage { users, next })
}

pub(crate) async fn set_user_ban(
    pool: &Pool,
    user_id: &str,
    ban: Option<&UserBan>,
) -> Result<bool, AdapterError> {
    const OP: &str = "set_user_ban";
    if !pool.is_user_id(user_id) {
        return Ok(false);
    }
    let user = || Arg::UserId(user_id.to_owned());
    let sql = pool.sql();
    // Under the user's lock: never for a user that does not exist (the MySQL table has no
    // foreign key to users), nor for one deleted meanwhile.
    let step = pool.locked_update(
        (&sql.lock_user, vec![user()]),
        (&sql.user_exists, vec![user()], &[Col::UserId]),
        |row| {
            if row.is_none() {
                return (Vec::new(), false);
            }
            let mut writes = vec![(sql.delete_user_ban.as_str(), vec![user()])];
            if let Some(ban) = ban {
                writes.push((
                    sql.insert_user_ban.as_str(),
                    vec![
                        user(),
                        Arg::text(ban.reason.as_str()),
                        Arg::Time(Some(ban.at)),
                        Arg::Time(ban.until),
                        Arg::Text(ban.by.clone()),
                    ],
                ));
            }
            (writes, true)
        },
    );
    step.await.map_err(map_sqlx(OP))
}

pub(crate) async fn get_user_ban(
    pool: &Pool,
    user_id: &str,
) -> Result<Option<UserBan>, AdapterError> {
    const OP: &str = "get_user_ban";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let row = pool
        .fetch_optional(&pool.sql().get_user_ban, args, &BAN)
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, |r| {
        Ok(UserBan {
            reason: r.text()?,
            at: r.time()?,
            until: r.opt_time()?,
            by: r.opt_text()?,
        })
    })
}

pub(crate) async fn last_audit_record(pool: &Pool) -> Result<Option<AuditRecord>, AdapterError> {
    const OP: &str = "last_audit_record";
    let row = pool
        .fetch_optional(&pool.sql().last_audit_record, Vec::new(), &AUDIT_RECORD)
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, Reader::audit_record)
}

pub(crate) async fn append_audit_record(
    pool: &Pool,
    record: &AuditRecord,
) -> Result<bool, AdapterError> {
    const OP: &str = "append_audit_record";
    let seq = i64::try_from(record.seq).map_err(|_| data_error(OP, "seq out of range"))?;
    let args = vec![
        Arg::Int(Some(seq)),
        Arg::Time(Some(record.at)),
        Arg::text(record.kind.as_str()),
        Arg::Text(record.actor.clone()),
        Arg::Text(record.target.clone()),
        Arg::text(record.data.as_str()),
        Arg::text(record.prev_hash.as_str()),
        Arg::text(record.hash.as_str()),
    ];
    match pool.execute(&pool.sql().insert_audit_record, args).await {
        Ok(_) => Ok(true),
        // The seq is taken: another writer appended first.
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
        Err(e) => Err(map_sqlx(OP)(e)),
    }
}

pub(crate) async fn query_audit_records(
    pool: &Pool,
    query: &AuditQuery,
) -> Result<Vec<AuditRecord>, AdapterError> {
    const OP: &str = "query_audit_records";
    let limit = query.limit.min(MAX_AUDIT_PAGE);
    // A cursor past the column's range: nothing after it, everything before it.
    let cursor = match query.cursor.map(i64::try_from) {
        Some(Err(_)) if query.ascending => return Ok(Vec::new()),
        Some(Err(_)) | None => None,
        Some(Ok(seq)) => Some(seq),
    };
    if limit == 0 {
        return Ok(Vec::new());
    }
    let subkind = query.kind.as_deref().map(|k| format!("{k}."));
    let mut args = Vec::with_capacity(16);
    args.extend(twice(Arg::Text(query.kind.clone())));
    args.extend(twice(Arg::Text(subkind)));
    let user = Arg::Text(query.user.clone());
    args.extend([user.clone(), user.clone(), user]);
    args.extend(twice(Arg::Time(query.since)));
    args.extend(twice(Arg::Time(query.until)));
    args.extend(twice(Arg::Int(cursor)));
    args.push(Arg::Int(Some(i64::from(limit))));
    let sql = pool.sql();
    let statement = if query.ascending {
        &sql.query_audit_records
    } else {
        &sql.query_audit_records_desc
    };
    let rows = pool
        .fetch_all(statement, args, &AUDIT_RECORD)
        .await
        .map_err(map_sqlx(OP))?;
    rows.into_iter()
        .map(|row| Reader::new(OP, row).audit_record())
        .collect()
}

pub(crate) async fn prune_audit_records(pool: &Pool, through: u64) -> Result<u64, AdapterError> {
    let through = i64::try_from(through).unwrap_or(i64::MAX);
    pool.execute(
        &pool.sql().prune_audit_records,
        vec![Arg::Int(Some(through))],
    )
    .await
    .map_err(map_sqlx("prune_audit_records"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_pattern_characters() {
        for (text, pattern) in [
            ("ada", "%ada%"),
            ("100%", "%100!%%"),
            ("a_b", "%a!_b%"),
            ("hi!", "%hi!!%"),
            (r"back\slash", r"%back\slash%"),
            ("", "%%"),
        ] {
            assert_eq!(like_pattern(text), pattern, "{text:?}");
        }
    }
}
