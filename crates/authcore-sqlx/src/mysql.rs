//! MySQL and MariaDB: the tables of Auth.js's Drizzle adapter for MySQL (`user`, `account`,
//! `session`, `verificationToken`, `authenticator`). Ids are UUID v4 text, timestamps
//! `DATETIME(3)` in UTC (sqlx sets the session time zone to `+00:00`), booleans `BOOLEAN`.

use std::sync::OnceLock;

use sqlx::mysql::MySqlRow;
use sqlx::{MySql, Row};
use time::OffsetDateTime;

use crate::db::{Arg, Col, Query, Val};
use crate::dialect::{Dialect, Ids, Tables};

pub(crate) static DIALECT: Dialect = Dialect {
    quote: '`',
    numbered_placeholders: false,
    tables: Tables {
        users: "user",
        accounts: "account",
        sessions: "session",
        verification_tokens: "verificationToken",
        authenticators: "authenticator",
        revocations: "sessionRevocation",
        two_factors: "twoFactor",
        recovery_codes: "recoveryCode",
        rate_limits: "rateLimit",
        app_access: "appAccess",
        upstream_sessions: "upstreamSession",
        passwords: "userPassword",
        user_groups: "userGroup",
        organizations: "organization",
        organization_members: "organizationMember",
        organization_teams: "organizationTeam",
        invitations: "organizationInvitation",
        api_keys: "apiKey",
        bans: "ban",
        audit_log: "auditLog",
        oidc_clients: "oidcClient",
    },
    user_ids: Ids::Uuid,
    row_ids: Ids::None,
    upsert: "ON DUPLICATE KEY UPDATE",
    for_update: " FOR UPDATE",
    char_length: "CHAR_LENGTH",
    queries: OnceLock::new(),
};

pub(crate) fn bind(query: Query<MySql>, arg: Arg) -> Query<MySql> {
    match arg {
        Arg::Text(v) => query.bind(v),
        Arg::UserId(v) => query.bind(v),
        Arg::OptUserId(v) => query.bind(v),
        Arg::Int(v) => query.bind(v),
        Arg::Bool(v) => query.bind(v),
        // As DATETIME: sqlx sends an `OffsetDateTime` as a TIMESTAMP, which MariaDB turns
        // into NULL past 2038.
        Arg::Time(v) => query.bind(v.map(|t| {
            let utc = t.to_offset(time::UtcOffset::UTC);
            time::PrimitiveDateTime::new(utc.date(), utc.time())
        })),
    }
}

/// Reads a user id or a time (the columns [`crate::db`] leaves to the backend).
pub(crate) fn read_column(row: &MySqlRow, i: usize, col: Col) -> Result<Option<Val>, sqlx::Error> {
    Ok(if col == Col::UserId {
        row.try_get::<Option<String>, _>(i)?.map(Val::Text)
    } else {
        row.try_get::<Option<OffsetDateTime>, _>(i)?.map(Val::Time)
    })
}
