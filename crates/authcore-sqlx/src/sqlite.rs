//! SQLite: `@auth/pg-adapter`'s tables with SQLite types. Ids are UUID v4 text, timestamps
//! ISO 8601 UTC text, booleans 0/1.

use std::sync::OnceLock;

use std::path::PathBuf;

use sqlx::sqlite::{SqliteConnectOptions, SqliteRow};
use sqlx::{Row, Sqlite};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

use crate::db::{Arg, Col, Query, Val};
use crate::dialect::{Dialect, Ids, PG_ADAPTER_TABLES};

pub(crate) static DIALECT: Dialect = Dialect {
    quote: '"',
    numbered_placeholders: false,
    tables: PG_ADAPTER_TABLES,
    user_ids: Ids::Uuid,
    row_ids: Ids::Uuid,
    upsert: "ON CONFLICT ({key}) DO UPDATE SET",
    for_update: "",
    char_length: "LENGTH",
    queries: OnceLock::new(),
};

/// Formats like JavaScript's `Date.prototype.toISOString()`: fixed width, so text order is
/// time order.
fn ts_to_db(t: OffsetDateTime) -> String {
    authcore::types::iso_string(t)
}

/// Reads RFC 3339 (what we and the JavaScript adapters write) or SQLite's own
/// `YYYY-MM-DD HH:MM:SS[.SSS]` (UTC).
pub(crate) fn ts_from_db(s: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t);
    }
    let sqlite_format = format_description!(
        "[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    time::PrimitiveDateTime::parse(s, sqlite_format)
        .ok()
        .map(|t| t.assume_utc())
}

/// The database file the session reads of `crate::direct` open for `url_or_path` (as
/// [`crate::SqlxAdapter::sqlite_with`] takes it, parsed into `options`), or `None` where a
/// plain open of that file would not see the pool's database: in memory, or through
/// options it would not follow (another VFS, `immutable`).
pub(crate) fn direct_read_path(
    url_or_path: &str,
    options: &SqliteConnectOptions,
) -> Option<PathBuf> {
    // The query as sqlx reads it (`sqlite:` URLs only; a plain path has none).
    let query = url_or_path
        .strip_prefix("sqlite:")
        .and_then(|rest| rest.split_once('?'))
        .map(|(_, query)| query);
    let plain_file = query.is_none_or(|query| {
        url::form_urlencoded::parse(query.as_bytes()).all(|(key, value)| match &*key {
            "mode" => value != "memory",
            "vfs" | "immutable" => false,
            _ => true,
        })
    });
    let path = options.get_filename();
    // sqlx names an in-memory database `file:sqlx-in-memory-<n>`; SQLite reads
    // `:memory:` as one.
    let in_memory = path
        .to_str()
        .is_some_and(|name| name == ":memory:" || name.starts_with("file:"));
    (plain_file && !in_memory).then(|| path.to_owned())
}

pub(crate) fn bind(query: Query<Sqlite>, arg: Arg) -> Query<Sqlite> {
    match arg {
        Arg::Text(v) => query.bind(v),
        Arg::UserId(v) => query.bind(v),
        Arg::OptUserId(v) => query.bind(v),
        Arg::Int(v) => query.bind(v),
        Arg::Bool(v) => query.bind(v),
        Arg::Time(v) => query.bind(v.map(ts_to_db)),
    }
}

/// Reads a user id or a time (the columns [`crate::db`] leaves to the backend).
pub(crate) fn read_column(row: &SqliteRow, i: usize, col: Col) -> Result<Option<Val>, sqlx::Error> {
    Ok(if col == Col::UserId {
        row.try_get::<Option<String>, _>(i)?.map(Val::Text)
    } else {
        match row.try_get::<Option<String>, _>(i)? {
            None => None,
            Some(s) => Some(Val::Time(ts_from_db(&s).ok_or_else(|| {
                sqlx::Error::ColumnDecode {
                    index: i.to_string(),
                    source: "unreadable timestamp stored".into(),
                }
            })?)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn direct_reads_open_plain_files_only() {
        for (url_or_path, expected) in [
            ("sqlite://a.db", Some("a.db")),
            ("sqlite:///tmp/a.db?mode=rwc", Some("/tmp/a.db")),
            ("sqlite://a.db?mode=ro&cache=private", Some("a.db")),
            ("a.db", Some("a.db")),
            ("/var/lib/authcore/a.db", Some("/var/lib/authcore/a.db")),
            ("sqlite::memory:", None),
            ("sqlite://?mode=memory", None),
            ("sqlite://a.db?mode=memory", None),
            ("sqlite://a.db?vfs=unix-dotfile", None),
            ("sqlite://a.db?immutable=true", None),
            (":memory:", None),
        ] {
            let options = if url_or_path.starts_with("sqlite:") {
                SqliteConnectOptions::from_str(url_or_path).expect("a valid URL")
            } else {
                SqliteConnectOptions::new().filename(url_or_path)
            };
            assert_eq!(
                direct_read_path(url_or_path, &options),
                expected.map(PathBuf::from),
                "{url_or_path}"
            );
        }
    }
}
