//! The OpenID Provider's clients made at run time: one row per client, its id the key (so
//! that of two creations of one id the database keeps one) and the client as JSON, kept as
//! given.

use authcore::adapter::{AdapterError, StoredClient};

use crate::db::{Arg, Col, Pool, Val};
use crate::error::{data_error, map_sqlx};

/// The client of a row's `data`.
fn parse(op: &'static str, data: &str) -> Result<StoredClient, AdapterError> {
    serde_json::from_str(data).map_err(|_| data_error(op, "a stored client that does not parse"))
}

fn data(op: &'static str, client: &StoredClient) -> Result<String, AdapterError> {
    serde_json::to_string(client).map_err(|_| data_error(op, "a client that does not serialize"))
}

/// The `data` column of each row.
fn texts(op: &'static str, rows: Vec<Vec<Val>>) -> Result<Vec<StoredClient>, AdapterError> {
    rows.into_iter()
        .map(|row| {
            let mut r = super::Reader::new(op, row);
            parse(op, &r.text()?)
        })
        .collect()
}

pub(crate) async fn create_oidc_client(
    pool: &Pool,
    client: &StoredClient,
) -> Result<bool, AdapterError> {
    const OP: &str = "create_oidc_client";
    let args = vec![
        Arg::text(client.client_id.as_str()),
        Arg::text(data(OP, client)?),
    ];
    match pool.execute(&pool.sql().insert_oidc_client, args).await {
        Ok(_) => Ok(true),
        // The id is taken.
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
        Err(e) => Err(map_sqlx(OP)(e)),
    }
}

pub(crate) async fn get_oidc_client(
    pool: &Pool,
    client_id: &str,
) -> Result<Option<StoredClient>, AdapterError> {
    const OP: &str = "get_oidc_client";
    stored_data(pool, OP, client_id)
        .await?
        .map(|raw| parse(OP, &raw))
        .transpose()
}

/// The `data` of the client `client_id`'s row, as stored.
async fn stored_data(
    pool: &Pool,
    op: &'static str,
    client_id: &str,
) -> Result<Option<String>, AdapterError> {
    let row = pool
        .fetch_optional(
            &pool.sql().get_oidc_client,
            vec![Arg::text(client_id)],
            &[Col::Text],
        )
        .await
        .map_err(map_sqlx(op))?;
    match row {
        Some(row) => Ok(Some(super::Reader::new(op, row).text()?)),
        None => Ok(None),
    }
}

pub(crate) async fn list_oidc_clients(pool: &Pool) -> Result<Vec<StoredClient>, AdapterError> {
    const OP: &str = "list_oidc_clients";
    let rows = pool
        .fetch_all(&pool.sql().list_oidc_clients, Vec::new(), &[Col::Text])
        .await
        .map_err(map_sqlx(OP))?;
    let mut clients = texts(OP, rows)?;
    // By id as bytes, whatever the database's collation.
    clients.sort_by(|a, b| a.client_id.cmp(&b.client_id));
    Ok(clients)
}

/// Replaces `before` by `after` while the row holds `before`: the row's data as read is
/// the update's condition, so a change made since (by another administrator) is not
/// overwritten.
pub(crate) async fn update_oidc_client(
    pool: &Pool,
    before: &StoredClient,
    after: &StoredClient,
) -> Result<bool, AdapterError> {
    const OP: &str = "update_oidc_client";
    let id = before.client_id.as_str();
    let Some(raw) = stored_data(pool, OP, id).await? else {
        return Ok(false);
    };
    if parse(OP, &raw)? != *before {
        return Ok(false);
    }
    let after = StoredClient {
        client_id: id.to_owned(),
        ..after.clone()
    };
    let new = data(OP, &after)?;
    if new == raw {
        // Nothing to change (and MySQL would count no changed row).
        return Ok(true);
    }
    let args = vec![Arg::text(new), Arg::text(id), Arg::text(raw)];
    let changed = pool
        .execute(&pool.sql().update_oidc_client, args)
        .await
        .map_err(map_sqlx(OP))?;
    Ok(changed > 0)
}
