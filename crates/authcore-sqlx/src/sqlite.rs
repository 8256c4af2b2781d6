//! SQLite: `@auth/pg-adapter`'s tables with SQLite types. Ids are UUID v4 text, timestamps
//! ISO 8601 UTC text, booleans 0/1.

use std::sync::OnceLock;

use sqlx::sqlite::SqliteRow;
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
    queries: OnceLock::new(),
};

/// Formats like JavaScript's `Date.prototype.toISOString()`: fixed width, so text order is
/// time order.
fn ts_to_db(t: OffsetDateTime) -> String {
    authcore::types::iso_string(t)
}

/// Reads RFC 3339 (what we and the JavaScript adapters write) or SQLite's own
/// `YYYY-MM-DD HH:MM:SS[.SSS]` (UTC).
fn ts_from_db(s: &str) -> Option<OffsetDateTime> {
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

pub(crate) fn bind(query: Query<Sqlite>, arg: Arg) -> Query<Sqlite> {
    match arg {
        Arg::Text(v) => query.bind(v),
        Arg::UserId(v) => query.bind(v),
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
