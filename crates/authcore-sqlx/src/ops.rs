//! The adapter's operations, written once for every database: statements from
//! [`Queries`](crate::dialect::Queries), values as [`Arg`] / [`Val`].
//!
//! No statement relies on `RETURNING` (MySQL has none, MariaDB none for `UPDATE`): a write
//! is followed by a read where the caller needs the row, and the single-use deletes
//! (`use_verification_token`, `delete_session`) read the row, then delete it and return it
//! only if this call's `DELETE` removed it, so two concurrent uses still return it once.

use authcore::SignInInfo;
use authcore::adapter::{
    AdapterError, AdapterSession, AdapterUser, AppAccess, JwtRevocation, NewUser, SessionActivity,
    TwoFactor, UpstreamSession, UserUpdate, VerificationToken,
};
use authcore::types::{Account, Authenticator};
use std::time::{Duration, SystemTime};
use time::OffsetDateTime;

use crate::db::{
    APP_ACCESS, Arg, Col, LOCKS_USER_WITH_APP_ACCESS, Pool, SESSION_AND_USER, USER,
    USER_WITH_APP_ACCESS, Val,
};
use crate::dialect::Ids;
use crate::direct::{DirectReads, Param, Query, Read};
use crate::error::{data_error, map_sqlx};

mod admin;
mod oidc_clients;
mod organizations;
pub(crate) use admin::*;
pub(crate) use oidc_clients::*;
pub(crate) use organizations::*;

// ---------------------------------------------------------------------------------------
// Reading rows

const SESSION: [Col; 3] = [Col::Text, Col::UserId, Col::Time];
const ACCOUNT: [Col; 11] = [
    Col::UserId,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Int,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
    Col::Text,
];
const TOKEN: [Col; 3] = [Col::Text, Col::Time, Col::Text];
const AUTHENTICATOR: [Col; 9] = [
    Col::Text,
    Col::UserId,
    Col::Text,
    Col::Text,
    Col::Int,
    Col::Text,
    Col::Bool,
    Col::Text,
    Col::Text,
];

/// Takes a row's values in order, checking each against what the column must hold.
struct Reader {
    op: &'static str,
    values: std::vec::IntoIter<Val>,
}

impl Reader {
    fn new(op: &'static str, row: Vec<Val>) -> Self {
        Reader {
            op,
            values: row.into_iter(),
        }
    }

    fn next(&mut self) -> Val {
        self.values.next().unwrap_or(Val::Null)
    }

    /// Whether the next value is `NULL` (or there is none): a left join that found no row.
    fn next_is_null(&self) -> bool {
        matches!(self.values.as_slice().first(), None | Some(Val::Null))
    }

    fn mismatch(&self) -> AdapterError {
        data_error(self.op, "unexpected value stored")
    }

    fn opt_text(&mut self) -> Result<Option<String>, AdapterError> {
        match self.next() {
            Val::Null => Ok(None),
            Val::Text(s) => Ok(Some(s)),
            _ => Err(self.mismatch()),
        }
    }

    fn text(&mut self) -> Result<String, AdapterError> {
        self.opt_text()?.ok_or_else(|| self.mismatch())
    }

    fn opt_int(&mut self) -> Result<Option<i64>, AdapterError> {
        match self.next() {
            Val::Null => Ok(None),
            Val::Int(n) => Ok(Some(n)),
            _ => Err(self.mismatch()),
        }
    }

    fn int(&mut self) -> Result<i64, AdapterError> {
        self.opt_int()?.ok_or_else(|| self.mismatch())
    }

    fn bool(&mut self) -> Result<bool, AdapterError> {
        match self.next() {
            Val::Bool(b) => Ok(b),
            Val::Int(n) => Ok(n != 0),
            _ => Err(self.mismatch()),
        }
    }

    fn opt_time(&mut self) -> Result<Option<OffsetDateTime>, AdapterError> {
        match self.next() {
            Val::Null => Ok(None),
            Val::Time(t) => Ok(Some(t)),
            _ => Err(self.mismatch()),
        }
    }

    fn time(&mut self) -> Result<OffsetDateTime, AdapterError> {
        self.opt_time()?.ok_or_else(|| self.mismatch())
    }

    /// A list stored space-separated (`""`: none).
    fn list(&mut self) -> Result<Vec<String>, AdapterError> {
        Ok(self
            .text()?
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect())
    }

    fn user(&mut self) -> Result<AdapterUser, AdapterError> {
        Ok(AdapterUser {
            id: self.text()?,
            name: self.opt_text()?,
            email: self.opt_text()?,
            email_verified: self.opt_time()?,
            image: self.opt_text()?,
        })
    }

    fn session(&mut self) -> Result<AdapterSession, AdapterError> {
        Ok(AdapterSession {
            session_token: self.text()?,
            user_id: self.text()?,
            expires: self.time()?,
        })
    }

    fn account(&mut self) -> Result<Account, AdapterError> {
        let user_id = self.text()?;
        let kind = self.text()?;
        let mut a = Account::new(
            crate::parse_provider_type(self.op, &kind)?,
            self.text()?,
            self.text()?,
        );
        a.user_id = Some(user_id);
        a.access_token = self.opt_text()?;
        a.expires_at = self.opt_int()?;
        a.refresh_token = self.opt_text()?;
        a.id_token = self.opt_text()?;
        a.scope = self.opt_text()?;
        a.session_state = self.opt_text()?;
        a.token_type = self.opt_text()?;
        Ok(a)
    }

    fn token(&mut self) -> Result<VerificationToken, AdapterError> {
        Ok(VerificationToken {
            identifier: self.text()?,
            expires: self.time()?,
            token: self.text()?,
        })
    }

    fn authenticator(&mut self) -> Result<Authenticator, AdapterError> {
        Ok(Authenticator {
            credential_id: self.text()?,
            user_id: Some(self.text()?),
            provider_account_id: self.text()?,
            credential_public_key: self.text()?,
            counter: crate::counter_from_db(self.op, self.int()?)?,
            credential_device_type: self.text()?,
            credential_backed_up: self.bool()?,
            transports: self.opt_text()?,
            name: self.opt_text()?,
        })
    }
}

/// Reads the optional row `row` of operation `op` with `read`.
fn one<T>(
    op: &'static str,
    row: Option<Vec<Val>>,
    read: impl FnOnce(&mut Reader) -> Result<T, AdapterError>,
) -> Result<Option<T>, AdapterError> {
    row.map(|row| read(&mut Reader::new(op, row))).transpose()
}

/// Now, in milliseconds since the Unix epoch (never 0).
pub(crate) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A new id for a table whose ids the adapter assigns.
fn new_id(ids: Ids) -> Option<String> {
    (ids == Ids::Uuid).then(|| uuid::Uuid::new_v4().to_string())
}

/// [`Pool::is_user_id`] for rows to write, where an id naming no row is an error.
/// The direct read path with its time bound, when the adapter has one.
pub(crate) type Direct<'a> = Option<(&'a DirectReads, Duration)>;

/// The direct read path `direct`, if any, with half of an operation's bound `timeout`, so
/// that the pool has the rest if it fails.
pub(crate) fn direct_within(
    direct: Option<&std::sync::Arc<DirectReads>>,
    timeout: Duration,
) -> Direct<'_> {
    direct.map(|d| (&**d, timeout / 2))
}

/// The row `query` reads with `params`: on `direct` (within its bound) when given, through
/// the pool (`sql` with `args`, read as `cols`) when that cannot answer.
pub(crate) async fn read_one_row(
    pool: &Pool,
    direct: Direct<'_>,
    op: &'static str,
    (query, params): (Query, &[Param<'_>]),
    (sql, args, cols): (&'static str, Vec<Arg>, &[Col]),
) -> Result<Option<Vec<Val>>, AdapterError> {
    let read = match direct {
        Some((direct, bound)) => direct.fetch_optional(query, params, bound).await,
        None => Read::UsePool,
    };
    match read {
        Read::Row(row) => Ok(row),
        Read::UsePool => pool
            .fetch_optional(sql, args, cols)
            .await
            .map_err(map_sqlx(op)),
    }
}

fn required_user_id(pool: &Pool, op: &'static str, id: Option<&str>) -> Result<Arg, AdapterError> {
    match id {
        Some(id) if pool.is_user_id(id) => Ok(Arg::UserId(id.to_owned())),
        Some(_) => Err(data_error(op, "user id is not an id of this database")),
        None => Err(data_error(op, "no user id given")),
    }
}

// ---------------------------------------------------------------------------------------
// Users

pub(crate) async fn create_user(pool: &Pool, user: NewUser) -> Result<AdapterUser, AdapterError> {
    const OP: &str = "create_user";
    let id = new_id(pool.dialect().user_ids);
    let mut args = Vec::with_capacity(5);
    args.extend(id.clone().map(Arg::UserId));
    args.extend([
        Arg::Text(user.name),
        Arg::Text(user.email),
        Arg::Time(user.email_verified),
        Arg::Text(user.image),
    ]);
    let sql = &pool.sql().insert_user;
    let id = match id {
        Some(id) => {
            pool.execute(sql, args).await.map_err(map_sqlx(OP))?;
            id
        }
        None => {
            let row = pool
                .fetch_optional(sql, args, &[Col::UserId])
                .await
                .map_err(map_sqlx(OP))?;
            one(OP, row, Reader::text)?.ok_or_else(|| data_error(OP, "no id returned"))?
        }
    };
    get_user(pool, None, &id)
        .await?
        .ok_or_else(|| data_error(OP, "the new user was not found"))
}

async fn fetch_user(
    pool: &Pool,
    op: &'static str,
    sql: &'static str,
    args: Vec<Arg>,
) -> Result<Option<AdapterUser>, AdapterError> {
    let row = pool
        .fetch_optional(sql, args, &USER)
        .await
        .map_err(map_sqlx(op))?;
    one(op, row, Reader::user)
}

pub(crate) async fn get_user(
    pool: &Pool,
    direct: Direct<'_>,
    id: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "get_user";
    if !pool.is_user_id(id) {
        return Ok(None);
    }
    let row = read_one_row(
        pool,
        direct,
        OP,
        (Query::User, &[Param::UserId(id)]),
        (
            &pool.sql().get_user,
            vec![Arg::UserId(id.to_owned())],
            &USER,
        ),
    )
    .await?;
    one(OP, row, Reader::user)
}

pub(crate) async fn get_user_by_email(
    pool: &Pool,
    email: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    let args = vec![Arg::text(email)];
    fetch_user(
        pool,
        "get_user_by_email",
        &pool.sql().get_user_by_email,
        args,
    )
    .await
}

pub(crate) async fn get_user_by_account(
    pool: &Pool,
    provider: &str,
    provider_account_id: &str,
) -> Result<Option<AdapterUser>, AdapterError> {
    let args = vec![Arg::text(provider), Arg::text(provider_account_id)];
    let sql = &pool.sql().get_user_by_account;
    fetch_user(pool, "get_user_by_account", sql, args).await
}

pub(crate) async fn update_user(
    pool: &Pool,
    up: UserUpdate,
) -> Result<Option<AdapterUser>, AdapterError> {
    const OP: &str = "update_user";
    if !pool.is_user_id(&up.id) {
        return Ok(None);
    }
    let args = vec![
        Arg::Bool(up.name.is_some()),
        Arg::Text(up.name.flatten()),
        Arg::Bool(up.email.is_some()),
        Arg::Text(up.email.flatten()),
        Arg::Bool(up.email_verified.is_some()),
        Arg::Time(up.email_verified.flatten()),
        Arg::Bool(up.image.is_some()),
        Arg::Text(up.image.flatten()),
        Arg::UserId(up.id.clone()),
    ];
    pool.execute(&pool.sql().update_user, args)
        .await
        .map_err(map_sqlx(OP))?;
    get_user(pool, None, &up.id).await
}

pub(crate) async fn delete_user(pool: &Pool, id: &str) -> Result<(), AdapterError> {
    if !pool.is_user_id(id) {
        return Ok(());
    }
    // Explicit deletes, not only the cascades: databases created by other tools may lack
    // the foreign keys. Unused magic links for the user's address go too. One transaction.
    let sql = pool.sql();
    let statements = [
        &sql.delete_user_authenticators,
        &sql.delete_user_sessions,
        &sql.delete_user_accounts,
        &sql.delete_user_tokens,
        &sql.delete_user_revocation,
        &sql.delete_user_two_factor,
        &sql.delete_user_recovery_codes,
        &sql.delete_user_app_access,
        &sql.delete_user_upstream_sessions,
        &sql.delete_user_password,
        &sql.delete_user_groups,
        &sql.delete_user_memberships,
        &sql.delete_user_api_keys,
        &sql.delete_user_ban,
        &sql.delete_user,
    ]
    .map(|s| (s.as_str(), vec![Arg::UserId(id.to_owned())]));
    pool.execute_all(statements.into())
        .await
        .map_err(map_sqlx("delete_user"))
}

// ---------------------------------------------------------------------------------------
// Accounts

pub(crate) async fn link_account(pool: &Pool, a: Account) -> Result<(), AdapterError> {
    const OP: &str = "link_account";
    let user_id = required_user_id(pool, OP, a.user_id.as_deref())?;
    let mut args = Vec::with_capacity(12);
    args.extend(new_id(pool.dialect().row_ids).map(Arg::text));
    args.extend([
        user_id,
        Arg::text(a.kind.as_str()),
        Arg::Text(Some(a.provider)),
        Arg::Text(Some(a.provider_account_id)),
        Arg::Text(a.access_token),
        Arg::Int(a.expires_at),
        Arg::Text(a.refresh_token),
        Arg::Text(a.id_token),
        Arg::Text(a.scope),
        Arg::Text(a.session_state),
        Arg::Text(a.token_type),
    ]);
    pool.execute(&pool.sql().link_account, args)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn unlink_account(
    pool: &Pool,
    provider: &str,
    provider_account_id: &str,
) -> Result<(), AdapterError> {
    let args = vec![Arg::text(provider), Arg::text(provider_account_id)];
    pool.execute(&pool.sql().unlink_account, args)
        .await
        .map_err(map_sqlx("unlink_account"))?;
    Ok(())
}

pub(crate) async fn get_account(
    pool: &Pool,
    provider_account_id: &str,
    provider: &str,
) -> Result<Option<Account>, AdapterError> {
    const OP: &str = "get_account";
    let args = vec![Arg::text(provider), Arg::text(provider_account_id)];
    let row = pool
        .fetch_optional(&pool.sql().get_account, args, &ACCOUNT)
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, Reader::account)
}

pub(crate) async fn list_accounts_by_user_id(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<Account>, AdapterError> {
    const OP: &str = "list_accounts_by_user_id";
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let rows = pool
        .fetch_all(&pool.sql().list_accounts, args, &ACCOUNT)
        .await
        .map_err(map_sqlx(OP))?;
    let mut list = rows
        .into_iter()
        .map(|row| Reader::new(OP, row).account())
        .collect::<Result<Vec<_>, _>>()?;
    list.sort_unstable_by(|a, b| {
        (&a.provider, &a.provider_account_id).cmp(&(&b.provider, &b.provider_account_id))
    });
    Ok(list)
}

pub(crate) async fn update_account(pool: &Pool, a: &Account) -> Result<bool, AdapterError> {
    const OP: &str = "update_account";
    let key = || {
        vec![
            Arg::text(a.provider.as_str()),
            Arg::text(a.provider_account_id.as_str()),
        ]
    };
    let mut args = vec![
        Arg::Text(a.access_token.clone()),
        Arg::Int(a.expires_at),
        Arg::Text(a.refresh_token.clone()),
        Arg::Text(a.id_token.clone()),
        Arg::Text(a.scope.clone()),
        Arg::Text(a.session_state.clone()),
        Arg::Text(a.token_type.clone()),
    ];
    args.extend(key());
    pool.execute(&pool.sql().update_account, args)
        .await
        .map_err(map_sqlx(OP))?;
    // Not the UPDATE's row count: MySQL counts only rows whose values changed.
    let row = pool
        .fetch_optional(&pool.sql().get_account, key(), &[Col::UserId])
        .await
        .map_err(map_sqlx(OP))?;
    Ok(row.is_some())
}

// ---------------------------------------------------------------------------------------
// Sessions

async fn get_session(
    pool: &Pool,
    op: &'static str,
    token: &str,
) -> Result<Option<AdapterSession>, AdapterError> {
    let row = pool
        .fetch_optional(&pool.sql().get_session, vec![Arg::text(token)], &SESSION)
        .await
        .map_err(map_sqlx(op))?;
    one(op, row, Reader::session)
}

pub(crate) async fn create_session(
    pool: &Pool,
    s: AdapterSession,
) -> Result<AdapterSession, AdapterError> {
    const OP: &str = "create_session";
    let user_id = required_user_id(pool, OP, Some(s.user_id.as_str()))?;
    let mut args = Vec::with_capacity(4);
    args.extend(new_id(pool.dialect().row_ids).map(Arg::text));
    args.extend([
        Arg::text(s.session_token.as_str()),
        user_id,
        Arg::Time(Some(s.expires)),
    ]);
    pool.execute(&pool.sql().insert_session, args)
        .await
        .map_err(map_sqlx(OP))?;
    // Read back: the stored expiry has the column's precision.
    get_session(pool, OP, &s.session_token)
        .await?
        .ok_or_else(|| data_error(OP, "the new session was not found"))
}

/// Read on `direct` (within its bound) when given, through the pool when that cannot answer.
pub(crate) async fn get_session_and_user(
    pool: &Pool,
    direct: Direct<'_>,
    token: &str,
) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
    const OP: &str = "get_session_and_user";
    let row = read_one_row(
        pool,
        direct,
        OP,
        (Query::SessionAndUser, &[Param::Text(token)]),
        (
            &pool.sql().get_session_and_user,
            vec![Arg::text(token)],
            &SESSION_AND_USER,
        ),
    )
    .await?;
    one(OP, row, |r| Ok((r.session()?, r.user()?)))
}

pub(crate) async fn update_session(
    pool: &Pool,
    token: &str,
    expires: OffsetDateTime,
) -> Result<Option<AdapterSession>, AdapterError> {
    const OP: &str = "update_session";
    let args = vec![Arg::Time(Some(expires)), Arg::text(token)];
    pool.execute(&pool.sql().update_session, args)
        .await
        .map_err(map_sqlx(OP))?;
    get_session(pool, OP, token).await
}

pub(crate) async fn delete_session(
    pool: &Pool,
    token: &str,
) -> Result<Option<AdapterSession>, AdapterError> {
    const OP: &str = "delete_session";
    let Some(session) = get_session(pool, OP, token).await? else {
        return Ok(None);
    };
    let deleted = pool
        .execute(&pool.sql().delete_session, vec![Arg::text(token)])
        .await
        .map_err(map_sqlx(OP))?;
    Ok((deleted > 0).then_some(session))
}

pub(crate) async fn list_sessions_by_user_id(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<SessionActivity>, AdapterError> {
    const OP: &str = "list_sessions_by_user_id";
    const COLUMNS: [Col; 6] = [
        Col::Text,
        Col::UserId,
        Col::Time,
        Col::Time,
        Col::Time,
        Col::Text,
    ];
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let rows = pool
        .fetch_all(&pool.sql().list_sessions, args, &COLUMNS)
        .await
        .map_err(map_sqlx(OP))?;
    let mut list = rows
        .into_iter()
        .map(|row| {
            let mut r = Reader::new(OP, row);
            Ok(SessionActivity {
                session: r.session()?,
                created_at: r.opt_time()?,
                last_seen_at: r.opt_time()?,
                user_agent: r.opt_text()?,
            })
        })
        .collect::<Result<Vec<_>, AdapterError>>()?;
    list.sort_unstable_by(|a, b| a.session.session_token.cmp(&b.session.session_token));
    Ok(list)
}

pub(crate) async fn record_session_activity(
    pool: &Pool,
    token: &str,
    at: OffsetDateTime,
    user_agent: Option<&str>,
) -> Result<(), AdapterError> {
    let args = vec![
        Arg::Time(Some(at)),
        Arg::Time(Some(at)),
        Arg::Text(user_agent.map(str::to_owned)),
        Arg::text(token),
    ];
    pool.execute(&pool.sql().record_session_activity, args)
        .await
        .map_err(map_sqlx("record_session_activity"))?;
    Ok(())
}

pub(crate) async fn record_session_sign_in(
    pool: &Pool,
    token: &str,
    sign_in: &SignInInfo,
) -> Result<(), AdapterError> {
    const OP: &str = "record_session_sign_in";
    let auth_time = sign_in
        .auth_time
        .map(|t| {
            OffsetDateTime::from_unix_timestamp(t)
                .map_err(|e| AdapterError::Backend(format!("{OP}: auth_time {t}: {e}").into()))
        })
        .transpose()?;
    let args = vec![
        Arg::text(sign_in.amr.join(" ")),
        Arg::Time(auth_time),
        Arg::Text(sign_in.impersonator.clone()),
        Arg::text(token),
    ];
    pool.execute(&pool.sql().record_session_sign_in, args)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn get_session_sign_in(
    pool: &Pool,
    token: &str,
) -> Result<Option<SignInInfo>, AdapterError> {
    const OP: &str = "get_session_sign_in";
    let row = pool
        .fetch_optional(
            &pool.sql().get_session_sign_in,
            vec![Arg::text(token)],
            &[Col::Text, Col::Time, Col::Text],
        )
        .await
        .map_err(map_sqlx(OP))?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut r = Reader::new(OP, row);
    // A session recorded without a sign-in (Auth.js's rows, second factors off) has none.
    let Some(amr) = r.opt_text()? else {
        return Ok(None);
    };
    let auth_time = r.opt_time()?.map(OffsetDateTime::unix_timestamp);
    Ok(Some(
        SignInInfo::new(
            amr.split_ascii_whitespace().map(str::to_owned).collect(),
            auth_time,
        )
        .with_impersonator(r.opt_text()?),
    ))
}

pub(crate) async fn delete_sessions_by_user_id(
    pool: &Pool,
    user_id: &str,
    keep: Option<&str>,
) -> Result<u64, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(0);
    }
    let args = vec![
        Arg::UserId(user_id.to_owned()),
        Arg::text(keep.unwrap_or("")),
    ];
    pool.execute(&pool.sql().delete_user_sessions_but, args)
        .await
        .map_err(map_sqlx("delete_sessions_by_user_id"))
}

pub(crate) async fn revoke_jwt_sessions(
    pool: &Pool,
    user_id: &str,
    before: OffsetDateTime,
    keep: Option<&str>,
) -> Result<(), AdapterError> {
    const OP: &str = "revoke_jwt_sessions";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    // Replaces the user's revocation: delete and insert in one transaction.
    let statements = vec![
        (sql.delete_user_revocation.as_str(), vec![user.clone()]),
        (
            sql.insert_revocation.as_str(),
            vec![
                user,
                Arg::Time(Some(before)),
                Arg::Text(keep.map(str::to_owned)),
            ],
        ),
    ];
    pool.execute_all(statements).await.map_err(map_sqlx(OP))
}

pub(crate) async fn get_jwt_revocation(
    pool: &Pool,
    user_id: &str,
) -> Result<Option<JwtRevocation>, AdapterError> {
    const OP: &str = "get_jwt_revocation";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let row = pool
        .fetch_optional(&pool.sql().get_revocation, args, &[Col::Time, Col::Text])
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, |r| {
        Ok(JwtRevocation {
            before: r.time()?,
            keep: r.opt_text()?,
        })
    })
}

// ---------------------------------------------------------------------------------------
// Second factors

pub(crate) async fn get_two_factor(
    pool: &Pool,
    user_id: &str,
) -> Result<Option<TwoFactor>, AdapterError> {
    const OP: &str = "get_two_factor";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let row = pool
        .fetch_optional(&pool.sql().get_two_factor, args, &[Col::Text, Col::Time])
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, |r| {
        Ok(TwoFactor {
            user_id: user_id.to_owned(),
            totp_secret: r.text()?,
            totp_confirmed_at: r.opt_time()?,
        })
    })
}

pub(crate) async fn set_two_factor(pool: &Pool, t: TwoFactor) -> Result<(), AdapterError> {
    const OP: &str = "set_two_factor";
    let user = required_user_id(pool, OP, Some(&t.user_id))?;
    let sql = pool.sql();
    // Replaces the user's record: delete and insert in one transaction.
    let statements = vec![
        (sql.delete_user_two_factor.as_str(), vec![user.clone()]),
        (
            sql.insert_two_factor.as_str(),
            vec![
                user,
                Arg::Text(Some(t.totp_secret)),
                Arg::Time(t.totp_confirmed_at),
            ],
        ),
    ];
    pool.execute_all(statements).await.map_err(map_sqlx(OP))
}

pub(crate) async fn delete_two_factor(pool: &Pool, user_id: &str) -> Result<(), AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(());
    }
    let sql = pool.sql();
    let statements = [&sql.delete_user_two_factor, &sql.delete_user_recovery_codes]
        .map(|s| (s.as_str(), vec![Arg::UserId(user_id.to_owned())]));
    pool.execute_all(statements.into())
        .await
        .map_err(map_sqlx("delete_two_factor"))
}

pub(crate) async fn replace_recovery_codes(
    pool: &Pool,
    user_id: &str,
    code_hashes: &[String],
) -> Result<(), AdapterError> {
    const OP: &str = "replace_recovery_codes";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    // The old set goes in the transaction that stores the new one.
    let statements = std::iter::once((sql.delete_user_recovery_codes.as_str(), vec![user.clone()]))
        .chain(code_hashes.iter().map(|hash| {
            (
                sql.insert_recovery_code.as_str(),
                vec![user.clone(), Arg::text(hash.as_str())],
            )
        }))
        .collect();
    pool.execute_all(statements).await.map_err(map_sqlx(OP))
}

pub(crate) async fn use_recovery_code(
    pool: &Pool,
    user_id: &str,
    code_hash: &str,
) -> Result<bool, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(false);
    }
    // Only the use whose DELETE removed the row succeeds: concurrent uses succeed once.
    let args = vec![Arg::UserId(user_id.to_owned()), Arg::text(code_hash)];
    let deleted = pool
        .execute(&pool.sql().use_recovery_code, args)
        .await
        .map_err(map_sqlx("use_recovery_code"))?;
    Ok(deleted > 0)
}

pub(crate) async fn count_recovery_codes(pool: &Pool, user_id: &str) -> Result<u64, AdapterError> {
    const OP: &str = "count_recovery_codes";
    if !pool.is_user_id(user_id) {
        return Ok(0);
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let row = pool
        .fetch_optional(&pool.sql().count_recovery_codes, args, &[Col::Int])
        .await
        .map_err(map_sqlx(OP))?;
    let count = one(OP, row, Reader::int)?.unwrap_or(0);
    Ok(u64::try_from(count).unwrap_or(0))
}

// ---------------------------------------------------------------------------------------
// Passwords and groups

/// Replaces a user's rows in one transaction that first locks the user's row: `writes`
/// run only if the user exists, so a row is never written for a user that does not (the
/// MySQL tables have no foreign keys) nor for one deleted meanwhile.
async fn replace_user_rows(
    pool: &Pool,
    op: &'static str,
    user: Arg,
    writes: Vec<(&'static str, Vec<Arg>)>,
) -> Result<(), AdapterError> {
    let sql = pool.sql();
    let step = pool.locked_update(
        (&sql.lock_user, vec![user.clone()]),
        (&sql.user_exists, vec![user], &[Col::UserId]),
        |row| match row {
            Some(_) => (writes, Ok(())),
            None => (Vec::new(), Err(data_error(op, "no user with this id"))),
        },
    );
    step.await.map_err(map_sqlx(op))?
}

pub(crate) async fn get_password_hash(
    pool: &Pool,
    user_id: &str,
) -> Result<Option<String>, AdapterError> {
    const OP: &str = "get_password_hash";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let row = pool
        .fetch_optional(&pool.sql().get_password, args, &[Col::Text])
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, Reader::text)
}

pub(crate) async fn set_password_hash(
    pool: &Pool,
    user_id: &str,
    hash: &str,
) -> Result<(), AdapterError> {
    const OP: &str = "set_password_hash";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    let writes = vec![
        (sql.delete_user_password.as_str(), vec![user.clone()]),
        (
            sql.insert_password.as_str(),
            vec![
                user.clone(),
                Arg::text(hash),
                Arg::Time(Some(OffsetDateTime::now_utc())),
            ],
        ),
    ];
    replace_user_rows(pool, OP, user, writes).await
}

pub(crate) async fn replace_password_hash(
    pool: &Pool,
    user_id: &str,
    current: &str,
    new: &str,
) -> Result<bool, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(false);
    }
    // One conditional UPDATE: only the call that still found `current` changes the row (on
    // MySQL too, where sqlx counts the rows matched).
    let args = vec![
        Arg::text(new),
        Arg::Time(Some(OffsetDateTime::now_utc())),
        Arg::UserId(user_id.to_owned()),
        Arg::text(current),
        Arg::text(current),
    ];
    let changed = pool
        .execute(&pool.sql().replace_password, args)
        .await
        .map_err(map_sqlx("replace_password_hash"))?;
    Ok(changed > 0)
}

pub(crate) async fn delete_password_hash(pool: &Pool, user_id: &str) -> Result<(), AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(());
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    pool.execute(&pool.sql().delete_user_password, args)
        .await
        .map_err(map_sqlx("delete_password_hash"))?;
    Ok(())
}

pub(crate) async fn set_user_groups(
    pool: &Pool,
    user_id: &str,
    groups: &[String],
) -> Result<(), AdapterError> {
    const OP: &str = "set_user_groups";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    let mut writes = Vec::with_capacity(groups.len() + 1);
    writes.push((sql.delete_user_groups.as_str(), vec![user.clone()]));
    for (position, name) in groups.iter().enumerate() {
        let position = i64::try_from(position).map_err(|_| data_error(OP, "too many groups"))?;
        writes.push((
            sql.insert_user_group.as_str(),
            vec![
                user.clone(),
                Arg::Int(Some(position)),
                Arg::text(name.as_str()),
            ],
        ));
    }
    replace_user_rows(pool, OP, user, writes).await
}

pub(crate) async fn get_user_groups(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<String>, AdapterError> {
    const OP: &str = "get_user_groups";
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let rows = pool
        .fetch_all(&pool.sql().get_user_groups, args, &[Col::Text])
        .await
        .map_err(map_sqlx(OP))?;
    rows.into_iter()
        .map(|row| Reader::new(OP, row).text())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Access granted to applications

impl Reader {
    /// An access row's columns from the client name on.
    fn app_access(&mut self, user_id: &str, client_id: String) -> Result<AppAccess, AdapterError> {
        Ok(AppAccess {
            user_id: user_id.to_owned(),
            client_id,
            client_name: self.text()?,
            scopes: self.list()?,
            created_at: self.time()?,
            updated_at: self.time()?,
            epoch: self.int()?,
        })
    }
}

pub(crate) async fn grant_app_access(
    pool: &Pool,
    user_id: &str,
    client_id: &str,
    client_name: &str,
    scopes: &[String],
    at: OffsetDateTime,
) -> Result<AppAccess, AdapterError> {
    const OP: &str = "grant_app_access";
    let user = required_user_id(pool, OP, Some(user_id))?;
    let sql = pool.sql();
    let key = || vec![user.clone(), Arg::text(client_id)];
    let mut lock = key();
    lock.extend([
        Arg::text(client_name),
        Arg::text(""),
        Arg::Time(Some(at)),
        Arg::Time(Some(at)),
    ]);
    // The row is made if missing and locked: the scopes read and the scopes written are one
    // step, so concurrent grants lose none.
    let step = pool.locked_update(
        (&sql.lock_app_access, lock),
        (&sql.get_app_access_locked, key(), &APP_ACCESS),
        |row| {
            let previous = match row {
                Some(row) => Reader::new(OP, row).app_access(user_id, client_id.to_owned()),
                None => Err(data_error(OP, "the locked row was not found")),
            };
            let access = previous
                .map(|p| AppAccess::granted(Some(p), user_id, client_id, client_name, scopes, at));
            let writes = match &access {
                Ok(a) => {
                    let mut args = vec![
                        Arg::text(a.client_name.as_str()),
                        Arg::text(a.scopes.join(" ")),
                        Arg::Time(Some(a.created_at)),
                        Arg::Time(Some(a.updated_at)),
                    ];
                    args.extend(key());
                    vec![(sql.set_app_access.as_str(), args)]
                }
                Err(_) => Vec::new(),
            };
            (writes, access)
        },
    );
    step.await.map_err(map_sqlx(OP))?
}

pub(crate) async fn get_app_access(
    pool: &Pool,
    direct: Direct<'_>,
    user_id: &str,
    client_id: &str,
) -> Result<Option<AppAccess>, AdapterError> {
    const OP: &str = "get_app_access";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let row = read_one_row(
        pool,
        direct,
        OP,
        (
            Query::AppAccess,
            &[Param::UserId(user_id), Param::Text(client_id)],
        ),
        (
            &pool.sql().get_app_access,
            vec![Arg::UserId(user_id.to_owned()), Arg::text(client_id)],
            &APP_ACCESS,
        ),
    )
    .await?;
    one(OP, row, |r| r.app_access(user_id, client_id.to_owned()))
}

/// The user `user_id` with their access for `client_id` (`get_user_with_app_access`); with
/// `locks`, in the same read, the lock ends of two rate-limit keys
/// (`get_user_with_app_access_and_locks`). `None` when there is no such user, or either
/// key is locked now.
pub(crate) async fn get_user_with_app_access(
    pool: &Pool,
    direct: Direct<'_>,
    user_id: &str,
    client_id: &str,
    locks: Option<[&str; 2]>,
) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
    const OP: &str = "get_user_with_app_access";
    if !pool.is_user_id(user_id) {
        return Ok(None);
    }
    let sql = pool.sql();
    let (query, statement, cols): (_, &'static str, &[Col]) = match locks {
        None => (
            Query::UserWithAppAccess,
            &sql.get_user_with_app_access,
            &USER_WITH_APP_ACCESS,
        ),
        Some(_) => (
            Query::UserWithAppAccessAndLocks,
            &sql.get_user_with_app_access_and_locks,
            &LOCKS_USER_WITH_APP_ACCESS,
        ),
    };
    let keys = locks.iter().flatten().map(|key| Param::Text(key));
    let params: Vec<Param<'_>> = keys
        .chain([Param::Text(client_id), Param::UserId(user_id)])
        .collect();
    let args = params.iter().map(|p| match *p {
        Param::Text(text) => Arg::text(text),
        Param::UserId(id) => Arg::UserId(id.to_owned()),
    });
    let row = read_one_row(
        pool,
        direct,
        OP,
        (query, &params),
        (statement, args.collect(), cols),
    )
    .await?;
    let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    let read = one(OP, row, |r| {
        if locks.is_some() && r.int()?.max(r.int()?) > now {
            return Ok(None);
        }
        let user = r.user()?;
        let access = match r.next_is_null() {
            true => None,
            false => Some(r.app_access(user_id, client_id.to_owned())?),
        };
        Ok(Some((user, access)))
    })?;
    Ok(read.flatten())
}

pub(crate) async fn list_app_access(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<AppAccess>, AdapterError> {
    const OP: &str = "list_app_access";
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let args = vec![Arg::UserId(user_id.to_owned()), Arg::text("")];
    let cols = [&[Col::Text][..], &APP_ACCESS[..]].concat();
    let rows = pool
        .fetch_all(&pool.sql().list_app_access, args, &cols)
        .await
        .map_err(map_sqlx(OP))?;
    let mut list = rows
        .into_iter()
        .map(|row| {
            let mut r = Reader::new(OP, row);
            let client_id = r.text()?;
            r.app_access(user_id, client_id)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Bytewise order whatever the database's collation.
    list.sort_unstable_by(|a, b| a.client_id.cmp(&b.client_id));
    Ok(list)
}

pub(crate) async fn revoke_app_access(
    pool: &Pool,
    user_id: &str,
    client_id: &str,
    at: OffsetDateTime,
) -> Result<bool, AdapterError> {
    if !pool.is_user_id(user_id) {
        return Ok(false);
    }
    // Only unrevoked access is changed: of concurrent revocations one changes the row.
    let args = vec![
        Arg::text(""),
        Arg::Time(Some(at)),
        Arg::UserId(user_id.to_owned()),
        Arg::text(client_id),
        Arg::text(""),
    ];
    let changed = pool
        .execute(&pool.sql().revoke_app_access, args)
        .await
        .map_err(map_sqlx("revoke_app_access"))?;
    Ok(changed > 0)
}

// ---------------------------------------------------------------------------------------
// Sessions signed in by upstream provider sessions

/// The columns of an upstream session row: id, user, session token, expiry.
const UPSTREAM_SESSION: [Col; 4] = [Col::Text, Col::UserId, Col::Text, Col::Time];

pub(crate) async fn record_upstream_session(
    pool: &Pool,
    session: &UpstreamSession,
) -> Result<(), AdapterError> {
    const OP: &str = "record_upstream_session";
    let user = required_user_id(pool, OP, Some(&session.user_id))?;
    let sql = pool.sql();
    // Records of sessions that expired go: the table stays as large as the live sessions.
    let now = OffsetDateTime::now_utc();
    let args = vec![
        Arg::text(uuid::Uuid::new_v4().simple().to_string()),
        Arg::text(session.provider.as_str()),
        Arg::text(session.sid.as_str()),
        user,
        Arg::Text(session.session_token.clone()),
        Arg::Time(Some(session.expires)),
    ];
    pool.execute_all(vec![
        (
            sql.delete_expired_upstream_sessions.as_str(),
            vec![Arg::Time(Some(now))],
        ),
        (sql.insert_upstream_session.as_str(), args),
    ])
    .await
    .map_err(map_sqlx(OP))
}

pub(crate) async fn take_upstream_sessions(
    pool: &Pool,
    provider: &str,
    sid: &str,
    now: OffsetDateTime,
) -> Result<Vec<UpstreamSession>, AdapterError> {
    const OP: &str = "take_upstream_sessions";
    let sql = pool.sql();
    let rows = pool
        .fetch_all(
            &sql.list_upstream_sessions,
            vec![Arg::text(provider), Arg::text(sid)],
            &UPSTREAM_SESSION,
        )
        .await
        .map_err(map_sqlx(OP))?;
    let mut taken = Vec::new();
    for row in rows {
        let mut r = Reader::new(OP, row);
        let id = r.text()?;
        let record = UpstreamSession {
            provider: provider.to_owned(),
            sid: sid.to_owned(),
            user_id: r.text()?,
            session_token: r.opt_text()?,
            expires: r.time()?,
        };
        // Only the take whose DELETE removed the row gets it: concurrent takes share out
        // the rows, each to one.
        let deleted = pool
            .execute(&sql.delete_upstream_session, vec![Arg::text(id)])
            .await
            .map_err(map_sqlx(OP))?;
        if deleted > 0 && record.expires > now {
            taken.push(record);
        }
    }
    Ok(taken)
}

// ---------------------------------------------------------------------------------------
// Verification tokens

pub(crate) async fn create_verification_token(
    pool: &Pool,
    t: VerificationToken,
) -> Result<(), AdapterError> {
    const OP: &str = "create_verification_token";
    // Unused tokens are never deleted by Auth.js; drop those a day past their expiry so the
    // table stays bounded (WebAuthn challenges add one per options request).
    let stale_before = OffsetDateTime::now_utc() - crate::STALE_TOKEN_GRACE;
    let sql = pool.sql();
    pool.execute(
        &sql.delete_stale_tokens,
        vec![Arg::Time(Some(stale_before))],
    )
    .await
    .map_err(map_sqlx(OP))?;
    let args = vec![
        Arg::Text(Some(t.identifier)),
        Arg::Time(Some(t.expires)),
        Arg::Text(Some(t.token)),
    ];
    pool.execute(&sql.insert_token, args)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(())
}

pub(crate) async fn use_verification_token(
    pool: &Pool,
    identifier: &str,
    token: &str,
) -> Result<Option<VerificationToken>, AdapterError> {
    const OP: &str = "use_verification_token";
    let key = || vec![Arg::text(identifier), Arg::text(token)];
    let sql = pool.sql();
    let row = pool
        .fetch_optional(&sql.get_token, key(), &TOKEN)
        .await
        .map_err(map_sqlx(OP))?;
    let Some(found) = one(OP, row, Reader::token)? else {
        return Ok(None);
    };
    // Only the use whose DELETE removed the row gets it: concurrent uses return it once.
    let deleted = pool
        .execute(&sql.delete_token, key())
        .await
        .map_err(map_sqlx(OP))?;
    Ok((deleted > 0).then_some(found))
}

// ---------------------------------------------------------------------------------------
// Authenticators

pub(crate) async fn get_authenticator(
    pool: &Pool,
    credential_id: &str,
) -> Result<Option<Authenticator>, AdapterError> {
    const OP: &str = "get_authenticator";
    let args = vec![Arg::text(credential_id)];
    let row = pool
        .fetch_optional(&pool.sql().get_authenticator, args, &AUTHENTICATOR)
        .await
        .map_err(map_sqlx(OP))?;
    one(OP, row, Reader::authenticator)
}

pub(crate) async fn create_authenticator(
    pool: &Pool,
    a: Authenticator,
) -> Result<Authenticator, AdapterError> {
    const OP: &str = "create_authenticator";
    let user_id = required_user_id(pool, OP, a.user_id.as_deref())?;
    let args = vec![
        Arg::text(a.credential_id.as_str()),
        user_id,
        Arg::Text(Some(a.provider_account_id)),
        Arg::Text(Some(a.credential_public_key)),
        Arg::Int(Some(crate::counter_to_db(OP, a.counter)?)),
        Arg::Text(Some(a.credential_device_type)),
        Arg::Bool(a.credential_backed_up),
        Arg::Text(a.transports),
        Arg::Text(a.name),
    ];
    pool.execute(&pool.sql().insert_authenticator, args)
        .await
        .map_err(map_sqlx(OP))?;
    get_authenticator(pool, &a.credential_id)
        .await?
        .ok_or_else(|| data_error(OP, "the new authenticator was not found"))
}

pub(crate) async fn list_authenticators_by_user_id(
    pool: &Pool,
    user_id: &str,
) -> Result<Vec<Authenticator>, AdapterError> {
    const OP: &str = "list_authenticators_by_user_id";
    if !pool.is_user_id(user_id) {
        return Ok(Vec::new());
    }
    let args = vec![Arg::UserId(user_id.to_owned())];
    let rows = pool
        .fetch_all(&pool.sql().list_authenticators, args, &AUTHENTICATOR)
        .await
        .map_err(map_sqlx(OP))?;
    let mut list = rows
        .into_iter()
        .map(|row| Reader::new(OP, row).authenticator())
        .collect::<Result<Vec<_>, _>>()?;
    // Bytewise order whatever the database's collation (base64 mixes cases).
    list.sort_unstable_by(|a, b| a.credential_id.cmp(&b.credential_id));
    Ok(list)
}

pub(crate) async fn delete_authenticator(
    pool: &Pool,
    credential_id: &str,
) -> Result<bool, AdapterError> {
    let deleted = pool
        .execute(
            &pool.sql().delete_authenticator,
            vec![Arg::text(credential_id)],
        )
        .await
        .map_err(map_sqlx("delete_authenticator"))?;
    Ok(deleted > 0)
}

pub(crate) async fn rename_authenticator(
    pool: &Pool,
    credential_id: &str,
    name: Option<&str>,
) -> Result<bool, AdapterError> {
    const OP: &str = "rename_authenticator";
    let args = vec![Arg::Text(name.map(str::to_owned)), Arg::text(credential_id)];
    pool.execute(&pool.sql().rename_authenticator, args)
        .await
        .map_err(map_sqlx(OP))?;
    // Not the UPDATE's row count: MySQL counts only rows whose values changed.
    Ok(get_authenticator(pool, credential_id).await?.is_some())
}

pub(crate) async fn update_authenticator_counter(
    pool: &Pool,
    credential_id: &str,
    counter: u64,
) -> Result<Option<Authenticator>, AdapterError> {
    const OP: &str = "update_authenticator_counter";
    let args = vec![
        Arg::Int(Some(crate::counter_to_db(OP, counter)?)),
        Arg::text(credential_id),
    ];
    pool.execute(&pool.sql().update_authenticator_counter, args)
        .await
        .map_err(map_sqlx(OP))?;
    get_authenticator(pool, credential_id).await
}
