//! PostgreSQL: `@auth/pg-adapter`'s tables. Ids are `SERIAL` integers, exposed as decimal
//! strings; timestamps are `TIMESTAMPTZ`.

use std::sync::OnceLock;

use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row};
use time::OffsetDateTime;

use crate::db::{Arg, Col, Query, Val};
use crate::dialect::{Dialect, Ids, PG_ADAPTER_TABLES, serial_id};

pub(crate) static DIALECT: Dialect = Dialect {
    quote: '"',
    numbered_placeholders: true,
    tables: PG_ADAPTER_TABLES,
    user_ids: Ids::Serial,
    row_ids: Ids::Serial,
    upsert: "ON CONFLICT ({key}) DO UPDATE SET",
    for_update: " FOR UPDATE",
    char_length: "LENGTH",
    queries: OnceLock::new(),
};

pub(crate) fn bind(query: Query<Postgres>, arg: Arg) -> Query<Postgres> {
    match arg {
        Arg::Text(v) => query.bind(v),
        // Checked with `is_user_id` by the caller; NULL names no row.
        Arg::UserId(v) => query.bind(serial_id(&v)),
        Arg::OptUserId(v) => query.bind(v.as_deref().and_then(serial_id)),
        Arg::Int(v) => query.bind(v),
        Arg::Bool(v) => query.bind(v),
        Arg::Time(v) => query.bind(v),
    }
}

/// Reads a user id or a time (the columns [`crate::db`] leaves to the backend).
pub(crate) fn read_column(row: &PgRow, i: usize, col: Col) -> Result<Option<Val>, sqlx::Error> {
    Ok(if col == Col::UserId {
        row.try_get::<Option<i32>, _>(i)?
            .map(|id| Val::Text(id.to_string()))
    } else {
        row.try_get::<Option<OffsetDateTime>, _>(i)?.map(Val::Time)
    })
}
