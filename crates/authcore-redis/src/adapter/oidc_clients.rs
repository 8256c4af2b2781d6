//! The OpenID Provider's clients made at run time ([`OidcClientStore`]): one hash,
//! `oidc-clients`, of each client's JSON by its id. A creation is an `HSETNX` (of two
//! creations of one id one is refused), an update a script that replaces an existing
//! field only.

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

    async fn update_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError> {
        const OP: &str = "updateOidcClient";
        let json = encode(OP, client)?;
        let mut conn = self.conn.clone();
        let updated: i64 = scripts::UPDATE_OIDC_CLIENT
            .key(self.keys.oidc_clients())
            .arg(&client.client_id)
            .arg(json)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(updated == 1)
    }
}
