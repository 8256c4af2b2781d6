//! The OpenID Provider's clients made at run time ([`OidcClientStore`]): one hash,
//! `oidc-clients`, of each client's JSON by its id. A creation is an `HSETNX` (of two
//! creations of one id one is refused), an update a script that replaces the field only
//! while it holds what was read.

use async_trait::async_trait;
use authcore::adapter::{AdapterError, OidcClientStore, StoredClient};
use redis::AsyncCommands;

use super::{decode, encode};
use crate::RedisAdapter;
use crate::error::redis_err;
use crate::scripts;

#[async_trait]
impl OidcClientStore for RedisAdapter {
    async fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError> {
        const OP: &str = "createOidcClient";
        let json = encode(OP, client)?;
        let mut conn = self.conn.clone();
        conn.hset_nx(self.keys.oidc_clients(), &client.client_id, json)
            .await
            .map_err(redis_err(OP))
    }

    async fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError> {
        const OP: &str = "getOidcClient";
        let mut conn = self.conn.clone();
        let raw: Option<String> = conn
            .hget(self.keys.oidc_clients(), client_id)
            .await
            .map_err(redis_err(OP))?;
        raw.map(|raw| decode(OP, &raw)).transpose()
    }

    async fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError> {
        const OP: &str = "listOidcClients";
        let mut conn = self.conn.clone();
        let raws: Vec<String> = conn
            .hvals(self.keys.oidc_clients())
            .await
            .map_err(redis_err(OP))?;
        let mut clients = raws
            .iter()
            .map(|raw| decode::<StoredClient>(OP, raw))
            .collect::<Result<Vec<_>, _>>()?;
        clients.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        Ok(clients)
    }

    async fn update_oidc_client(
        &self,
        before: &StoredClient,
        after: &StoredClient,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "updateOidcClient";
        let id = before.client_id.as_str();
        let mut conn = self.conn.clone();
        let raw: Option<String> = conn
            .hget(self.keys.oidc_clients(), id)
            .await
            .map_err(redis_err(OP))?;
        // The field as read is the script's condition: a change made since is kept.
        let Some(raw) = raw else {
            return Ok(false);
        };
        if decode::<StoredClient>(OP, &raw)? != *before {
            return Ok(false);
        }
        let after = StoredClient {
            client_id: id.to_owned(),
            ..after.clone()
        };
        let json = encode(OP, &after)?;
        let updated: i64 = scripts::UPDATE_OIDC_CLIENT
            .key(self.keys.oidc_clients())
            .arg(id)
            .arg(json)
            .arg(raw)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(updated == 1)
    }
}
