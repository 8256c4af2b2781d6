//! The SQLite queries. Ids are UUID v4 text, timestamps ISO 8601 UTC text.

use authcore::adapter::{
    AdapterError, AdapterSession, AdapterUser, NewUser, UserUpdate, VerificationToken,
};
use authcore::types::{Account, Authenticator};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqlitePool};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

use crate::error::{data_error, map_sqlx};
use crate::{account_columns, authenticator_columns, session_columns, user_columns};

// ---------------------------------------------------------------------------------------
// Conversions

/// Formats like JavaScript's `Date.prototype.toISOString()`: fixed width, so text order is
/// time order.
fn ts_to_db(t: OffsetDateTime) -> String {
    authcore::types::iso_string(t)
}

/// Reads RFC 3339 (what we and the JavaScript adapters write) or SQLite's own
/// `YYYY-MM-DD HH:MM:SS[.SSS]` (UTC).
fn ts_from_db(op: &'static str, s: &str) -> Result<OffsetDateTime, AdapterError> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(t);
    }
    let sqlite_format = format_description!(
        "[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    time::PrimitiveDateTime::parse(s, sqlite_format)
        .map(|t| t.assume_utc())
        .map_err(|_| data_error(op, "unreadable timestamp stored"))
}

fn opt_ts_from_db(
    op: &'static str,
    s: Option<String>,
) -> Result<Option<OffsetDateTime>, AdapterError> {
    s.map(|s| ts_from_db(op, &s)).transpose()
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user_from_row(op: &'static str, row: &SqliteRow) -> Result<AdapterUser, AdapterError> {
    let get = |e| map_sqlx(op)(e);
    Ok(AdapterUser {
        id: row.try_get("u_id").map_err(get)?,
        name: row.try_get("u_name").map_err(get)?,
        email: row.try_get("u_email").map_err(get)?,
        email_verified: opt_ts_from_db(op, row.try_get("u_verified").map_err(get)?)?,
        image: row.try_get("u_image").map_err(get)?,
    })
}

fn session_from_row(op: &'static str, row: &SqliteRow) -> Result<AdapterSession, AdapterError> {
    let get = |e| map_sqlx(op)(e);
    let expires: String = row.try_get("expires").map_err(get)?;
    Ok(AdapterSession {
        session_token: row.try_get("sessionToken").map_err(get)?,
        user_id: row.try_get("userId").map_err(get)?,
        expires: ts_from_db(op, &expires)?,
    })
}

fn token_from_row(op: &'static str, row: &SqliteRow) -> Result<VerificationToken, AdapterError> {
    let get = |e| map_sqlx(op)(e);
    let expires: String = row.try_get("expires").map_err(get)?;
    Ok(VerificationToken {
        identifier: row.try_get("identifier").map_err(get)?,
        token: row.try_get("token").map_err(get)?,
        expires: ts_from_db(op, &expires)?,
    })
}

fn account_from_row(op: &'static str, row: &SqliteRow) -> Result<Account, AdapterError> {
    let get = |e| map_sqlx(op)(e);
    let kind: String = row.try_get("type").map_err(get)?;
    let mut a = Account::new(
        crate::parse_provider_type(op, &kind)?,
        row.try_get::<String, _>("provider").map_err(get)?,
        row.try_get::<String, _>("providerAccountId").map_err(get)?,
    );
    a.user_id = Some(row.try_get("userId").map_err(get)?);
    a.access_token = row.try_get("access_token").map_err(get)?;
    a.expires_at = row.try_get("expires_at").map_err(get)?;
    a.refresh_token = row.try_get("refresh_token").map_err(get)?;
    a.id_token = row.try_get("id_token").map_err(get)?;
    a.scope = row.try_get("scope").map_err(get)?;
    a.session_state = row.try_get("session_state").map_err(get)?;
    a.token_type = row.try_get("token_type").map_err(get)?;
    Ok(a)
}

fn authenticator_from_row(
    op: &'static str,
    row: &SqliteRow,
) -> Result<Authenticator, AdapterError> {
    let get = |e| map_sqlx(op)(e);
    Ok(Authenticator {
        credential_id: row.try_get("credentialID").map_err(get)?,
        user_id: Some(row.try_get("userId").map_err(get)?),
        provider_account_id: row.try_get("providerAccountId").map_err(get)?,
        counter: crate::counter_from_db(op, row.try_get("counter").map_err(get)?)?,
        credential_backed_up: row.try_get("credentialBackedUp").map_err(get)?,
        credential_public_key: row.try_get("credentialPublicKey").map_err(get)?,
        transports: row.try_get("transports").map_err(get)?,
        credential_device_type: row.try_get("credentialDeviceType").map_err(get)?,
    })
}

// ---------------------------------------------------------------------------------------
// Users

pub(crate) async fn create_user(
    pool: &SqlitePool,
    user: NewUser,
) -> Result<AdapterUser, AdapterError> {
    const OP: &str = "create_user";
    let row = sqlx::query(concat!(
        r#"INSERT INTO users (id, name, email, "emailVerified", image) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING "#,
        user_columns!()
    ))
    .bind(new_id())
    .bind(user.name)
    .bind(user.email)
    .bind(user.email_verified.map(ts_to_db))
    .bind(user.image)
    .fetch_one(pool)
    .await
    .map_err(map_sqlx(OP))?;
    user_from_row(OP, &row)
}

pub(crate) async fn get_user(
    pool: &SqlitePool,
    id: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "get_user";
    sqlx::query(concat!(
        "SELECT ",
        user_columns!(),
        " FROM users WHERE id = ?1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| user_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn get_user_by_email(
    pool: &SqlitePool,
    email: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "get_user_by_email";
    sqlx::query(concat!(
        "SELECT ",
        user_columns!(),
        " FROM users WHERE email = ?1"
    ))
    .bind(email)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| user_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn get_user_by_account(
    pool: &SqlitePool,
    provider: &str,
    provider_account_id: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "get_user_by_account";
    sqlx::query(concat!(
        "SELECT ",
        user_columns!(),
        r#" FROM users JOIN accounts ON users.id = accounts."userId" WHERE accounts.provider = ?1 AND accounts."providerAccountId" = ?2"#
    ))
    .bind(provider)
    .bind(provider_account_id)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| user_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn update_user(
    pool: &SqlitePool,
    up: UserUpdate,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "update_user";
    // One statement: `CASE WHEN <field given> THEN <new value> ELSE <column> END`.
    sqlx::query(concat!(
        "UPDATE users SET ",
        "name = CASE WHEN ?2 THEN ?3 ELSE name END, ",
        "email = CASE WHEN ?4 THEN ?5 ELSE email END, ",
        r#""emailVerified" = CASE WHEN ?6 THEN ?7 ELSE "emailVerified" END, "#,
        "image = CASE WHEN ?8 THEN ?9 ELSE image END ",
        "WHERE id = ?1 RETURNING ",
        user_columns!()
    ))
    .bind(&up.id)
    .bind(up.name.is_some())
    .bind(up.name.flatten())
    .bind(up.email.is_some())
    .bind(up.email.flatten())
    .bind(up.email_verified.is_some())
    .bind(up.email_verified.flatten().map(ts_to_db))
    .bind(up.image.is_some())
    .bind(up.image.flatten())
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| user_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn delete_user(pool: &SqlitePool, id: &str) -> Result<(), AdapterError> {
    const OP: &str = "delete_user";
    // Explicit deletes, not only the cascades: databases created by other tools may lack
    // the foreign keys.
    let mut tx = pool.begin().await.map_err(map_sqlx(OP))?;
    for sql in [
        r#"DELETE FROM authenticators WHERE "userId" = ?1"#,
        r#"DELETE FROM sessions WHERE "userId" = ?1"#,
        r#"DELETE FROM accounts WHERE "userId" = ?1"#,
        "DELETE FROM users WHERE id = ?1",
    ] {
        sqlx::query(sql)
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(map_sqlx(OP))?;
    }
    tx.commit().await.map_err(map_sqlx(OP))
}

// ---------------------------------------------------------------------------------------
// Accounts

pub(crate) async fn link_account(pool: &SqlitePool, a: Account) -> Result<(), AdapterError> {
    const OP: &str = "link_account";
    let user_id = crate::required_user_id(OP, &a.user_id)?;
    sqlx::query(concat!(
        "INSERT INTO accounts (id, ",
        account_columns!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    ))
    .bind(new_id())
    .bind(user_id)
    .bind(a.kind.as_str())
    .bind(&a.provider)
    .bind(&a.provider_account_id)
    .bind(&a.access_token)
    .bind(a.expires_at)
    .bind(&a.refresh_token)
    .bind(&a.id_token)
    .bind(&a.scope)
    .bind(&a.session_state)
    .bind(&a.token_type)
    .execute(pool)
    .await
    .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn unlink_account(
    pool: &SqlitePool,
    provider: &str,
    provider_account_id: &str,
) -> Result<(), AdapterError> {
    const OP: &str = "unlink_account";
    sqlx::query(r#"DELETE FROM accounts WHERE provider = ?1 AND "providerAccountId" = ?2"#)
        .bind(provider)
        .bind(provider_account_id)
        .execute(pool)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn get_account(
    pool: &SqlitePool,
    provider_account_id: &str,
    provider: &str,
) -> Result<Option<Account>, AdapterError> {
    const OP: &str = "get_account";
    sqlx::query(concat!(
        "SELECT ",
        account_columns!(),
        r#" FROM accounts WHERE provider = ?1 AND "providerAccountId" = ?2"#
    ))
    .bind(provider)
    .bind(provider_account_id)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| account_from_row(OP, &row))
    .transpose()
}

// ---------------------------------------------------------------------------------------
// Sessions

pub(crate) async fn create_session(
    pool: &SqlitePool,
    s: AdapterSession,
) -> Result<AdapterSession, AdapterError> {
    const OP: &str = "create_session";
    let row = sqlx::query(concat!(
        r#"INSERT INTO sessions (id, "sessionToken", "userId", expires) VALUES (?1, ?2, ?3, ?4) RETURNING "#,
        session_columns!()
    ))
    .bind(new_id())
    .bind(&s.session_token)
    .bind(&s.user_id)
    .bind(ts_to_db(s.expires))
    .fetch_one(pool)
    .await
    .map_err(map_sqlx(OP))?;
    session_from_row(OP, &row)
}

pub(crate) async fn get_session_and_user(
    pool: &SqlitePool,
    token: &str,
) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
    const OP: &str = "get_session_and_user";
    let Some(row) = sqlx::query(concat!(
        "SELECT ",
        session_columns!(),
        ", ",
        user_columns!(),
        r#" FROM sessions JOIN users ON users.id = sessions."userId" WHERE sessions."sessionToken" = ?1"#
    ))
    .bind(token)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    else {
        return Ok(None);
    };
    Ok(Some((
        session_from_row(OP, &row)?,
        user_from_row(OP, &row)?,
    )))
}

pub(crate) async fn update_session(
    pool: &SqlitePool,
    token: &str,
    expires: OffsetDateTime,
) -> Result<Option<AdapterSession>, AdapterError> {
    const OP: &str = "update_session";
    sqlx::query(concat!(
        r#"UPDATE sessions SET expires = ?2 WHERE "sessionToken" = ?1 RETURNING "#,
        session_columns!()
    ))
    .bind(token)
    .bind(ts_to_db(expires))
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| session_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn delete_session(
    pool: &SqlitePool,
    token: &str,
) -> Result<Option<AdapterSession>, AdapterError> {
    const OP: &str = "delete_session";
    sqlx::query(concat!(
        r#"DELETE FROM sessions WHERE "sessionToken" = ?1 RETURNING "#,
        session_columns!()
    ))
    .bind(token)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| session_from_row(OP, &row))
    .transpose()
}

// ---------------------------------------------------------------------------------------
// Verification tokens

pub(crate) async fn create_verification_token(
    pool: &SqlitePool,
    t: VerificationToken,
) -> Result<(), AdapterError> {
    const OP: &str = "create_verification_token";
    // Unused tokens are never deleted by Auth.js; drop those a day past their expiry so the
    // table stays bounded (WebAuthn challenges add one per options request).
    let stale_before = time::OffsetDateTime::now_utc() - crate::STALE_TOKEN_GRACE;
    sqlx::query("DELETE FROM verification_token WHERE expires < ?1")
        .bind(ts_to_db(stale_before))
        .execute(pool)
        .await
        .map_err(map_sqlx(OP))?;
    sqlx::query("INSERT INTO verification_token (identifier, expires, token) VALUES (?1, ?2, ?3)")
        .bind(&t.identifier)
        .bind(ts_to_db(t.expires))
        .bind(&t.token)
        .execute(pool)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn use_verification_token(
    pool: &SqlitePool,
    identifier: &str,
    token: &str,
) -> Result<Option<VerificationToken>, AdapterError> {
    const OP: &str = "use_verification_token";
    // One statement: two concurrent uses cannot both see the row.
    sqlx::query(
        "DELETE FROM verification_token WHERE identifier = ?1 AND token = ?2 RETURNING identifier, expires, token",
    )
    .bind(identifier)
    .bind(token)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| token_from_row(OP, &row))
    .transpose()
}

// ---------------------------------------------------------------------------------------
// Authenticators

pub(crate) async fn get_authenticator(
    pool: &SqlitePool,
    credential_id: &str,
) -> Result<Option<Authenticator>, AdapterError> {
    const OP: &str = "get_authenticator";
    sqlx::query(concat!(
        "SELECT ",
        authenticator_columns!(),
        r#" FROM authenticators WHERE "credentialID" = ?1"#
    ))
    .bind(credential_id)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| authenticator_from_row(OP, &row))
    .transpose()
}

pub(crate) async fn create_authenticator(
    pool: &SqlitePool,
    a: Authenticator,
) -> Result<Authenticator, AdapterError> {
    const OP: &str = "create_authenticator";
    let user_id = crate::required_user_id(OP, &a.user_id)?;
    let row = sqlx::query(concat!(
        "INSERT INTO authenticators (",
        authenticator_columns!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING ",
        authenticator_columns!()
    ))
    .bind(&a.credential_id)
    .bind(user_id)
    .bind(&a.provider_account_id)
    .bind(&a.credential_public_key)
    .bind(crate::counter_to_db(OP, a.counter)?)
    .bind(&a.credential_device_type)
    .bind(a.credential_backed_up)
    .bind(&a.transports)
    .fetch_one(pool)
    .await
    .map_err(map_sqlx(OP))?;
    authenticator_from_row(OP, &row)
}

pub(crate) async fn list_authenticators_by_user_id(
    pool: &SqlitePool,
    user_id: &str,
) -> Result<Vec<Authenticator>, AdapterError> {
    const OP: &str = "list_authenticators_by_user_id";
    // SQLite's default BINARY collation orders bytewise.
    sqlx::query(concat!(
        "SELECT ",
        authenticator_columns!(),
        r#" FROM authenticators WHERE "userId" = ?1 ORDER BY "credentialID""#
    ))
    .bind(user_id)
    .fetch_all(pool)
    .await
    .map_err(map_sqlx(OP))?
    .iter()
    .map(|row| authenticator_from_row(OP, row))
    .collect()
}

pub(crate) async fn update_authenticator_counter(
    pool: &SqlitePool,
    credential_id: &str,
    counter: u64,
) -> Result<Option<Authenticator>, AdapterError> {
    const OP: &str = "update_authenticator_counter";
    sqlx::query(concat!(
        r#"UPDATE authenticators SET counter = ?2 WHERE "credentialID" = ?1 RETURNING "#,
        authenticator_columns!()
    ))
    .bind(credential_id)
    .bind(crate::counter_to_db(OP, counter)?)
    .fetch_optional(pool)
    .await
    .map_err(map_sqlx(OP))?
    .map(|row| authenticator_from_row(OP, &row))
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_written_like_to_iso_string_and_read_back() {
        let t = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap()
            + time::Duration::nanoseconds(123_456_789);
        let s = ts_to_db(t);
        assert_eq!(s, "2023-11-14T22:13:20.123Z");
        let back = ts_from_db("t", &s).unwrap();
        assert_eq!(back.unix_timestamp(), 1_700_000_000);
        assert_eq!(back.millisecond(), 123);
        let local = t.to_offset(time::UtcOffset::from_hms(2, 0, 0).unwrap());
        assert_eq!(ts_to_db(local), s);
    }

    #[test]
    fn sqlite_datetime_text_is_read_as_utc() {
        let t = ts_from_db("t", "2023-11-14 22:13:20").unwrap();
        assert_eq!(t.unix_timestamp(), 1_700_000_000);
        let t = ts_from_db("t", "2023-11-14 22:13:20.5").unwrap();
        assert_eq!(t.millisecond(), 500);
        assert!(ts_from_db("t", "yesterday").is_err());
    }
}
