//! The [`Adapter`] implementation.

use async_trait::async_trait;
use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, AppAccess, AppAccessStore, Capabilities,
    JwtRevocation, JwtRevocationStore, LinkedAccountStore, NewUser, PasskeyStore, PasswordStore,
    SessionActivity, SessionActivityStore, SessionSignInStore, TwoFactor, TwoFactorStore,
    UpstreamSession, UpstreamSessionStore, UserGroupsStore, UserUpdate, VerificationToken,
};
use authcore::{Account, Authenticator, SignInInfo};
use redis::AsyncCommands;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::RedisAdapter;
use crate::error::{BackendErrorKind, RedisBackendError, data_err, redis_err};
use crate::keys::{is_user_id, names_index};
use crate::scripts;

mod admin;
mod oidc_clients;
mod organizations;

/// How often a read-modify-write update is retried when the record changes under it.
const MAX_UPDATE_ATTEMPTS: usize = 16;

/// Absolute expiry in Unix milliseconds for `PXAT`, which needs a positive number; a date at
/// or before the epoch becomes 1, i.e. already expired.
fn expiry_millis(expires: OffsetDateTime) -> i64 {
    let ms = expires.unix_timestamp_nanos() / 1_000_000;
    i64::try_from(ms).unwrap_or(i64::MAX).max(1)
}

fn decode<T: DeserializeOwned>(op: &'static str, raw: &str) -> Result<T, AdapterError> {
    serde_json::from_str(raw).map_err(|e| RedisBackendError::from_json(op, &e).into())
}

fn decode_object(op: &'static str, raw: &str) -> Result<Map<String, Value>, AdapterError> {
    match decode::<Value>(op, raw)? {
        Value::Object(map) => Ok(map),
        _ => Err(data_err(op, "stored record is not a JSON object")),
    }
}

fn from_object<T: DeserializeOwned>(
    op: &'static str,
    map: &Map<String, Value>,
) -> Result<T, AdapterError> {
    serde_json::from_value(Value::Object(map.clone()))
        .map_err(|e| RedisBackendError::from_json(op, &e).into())
}

fn encode<T: Serialize>(op: &'static str, value: &T) -> Result<String, AdapterError> {
    serde_json::to_string(value).map_err(|e| RedisBackendError::from_json(op, &e).into())
}

fn to_object<T: Serialize>(
    op: &'static str,
    value: &T,
) -> Result<Map<String, Value>, AdapterError> {
    match serde_json::to_value(value).map_err(|e| RedisBackendError::from_json(op, &e))? {
        Value::Object(map) => Ok(map),
        _ => Err(data_err(op, "record does not serialise to a JSON object")),
    }
}

/// Writes the fields of `updated` over `stored`, removing `fields` that `updated` omits
/// (cleared optional fields), and keeping any other stored field (e.g. extra profile
/// fields written by another Auth.js adapter).
fn merge_fields(stored: &mut Map<String, Value>, updated: Map<String, Value>, fields: &[&str]) {
    for field in fields {
        if !updated.contains_key(*field) {
            stored.remove(*field);
        }
    }
    stored.extend(updated);
}

/// One application's access as stored in the user's `user:app-access:<userId>` object.
fn access_json(a: &AppAccess) -> Value {
    serde_json::json!({
        "clientName": a.client_name,
        "scopes": a.scopes,
        "createdAt": authcore::types::iso_string(a.created_at),
        "updatedAt": authcore::types::iso_string(a.updated_at),
        "epoch": a.epoch,
    })
}

/// The access stored for `client_id` in the user's object.
fn access_from_json(
    op: &'static str,
    user_id: &str,
    client_id: &str,
    v: &Value,
) -> Result<AppAccess, AdapterError> {
    let bad = || data_err(op, "unreadable app access stored");
    let time = |field: &str| {
        v.get(field)
            .and_then(Value::as_str)
            .and_then(|t| {
                OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
            .ok_or_else(bad)
    };
    let scopes = v
        .get("scopes")
        .and_then(Value::as_array)
        .ok_or_else(bad)?
        .iter()
        .map(|s| s.as_str().map(str::to_owned).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AppAccess {
        user_id: user_id.to_owned(),
        client_id: client_id.to_owned(),
        client_name: v
            .get("clientName")
            .and_then(Value::as_str)
            .ok_or_else(bad)?
            .to_owned(),
        scopes,
        created_at: time("createdAt")?,
        updated_at: time("updatedAt")?,
        epoch: v.get("epoch").and_then(Value::as_i64).ok_or_else(bad)?,
    })
}

fn contention(op: &'static str) -> AdapterError {
    RedisBackendError::new(
        BackendErrorKind::Contention,
        op,
        "record kept changing during the update".into(),
    )
    .into()
}

impl RedisAdapter {
    async fn get_raw(&self, op: &'static str, key: &str) -> Result<Option<String>, AdapterError> {
        let mut conn = self.conn.clone();
        conn.get(key).await.map_err(redis_err(op))
    }

    async fn load_user(
        &self,
        op: &'static str,
        id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        if !is_user_id(id) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(op, &self.keys.user(id)).await? else {
            return Ok(None);
        };
        let user: AdapterUser = decode(op, &raw)?;
        Ok((user.id == id).then_some(user))
    }

    async fn load_account(
        &self,
        op: &'static str,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<Account>, AdapterError> {
        if names_index(provider) {
            return Ok(None);
        }
        let key = self.keys.account(provider, provider_account_id);
        let Some(raw) = self.get_raw(op, &key).await? else {
            return Ok(None);
        };
        let account: Account = decode(op, &raw)?;
        // Guards against key collisions through `:` inside the provider id.
        Ok(
            (account.provider == provider && account.provider_account_id == provider_account_id)
                .then_some(account),
        )
    }

    /// The records whose keys the set `index` holds (those that still exist).
    async fn load_indexed<T: DeserializeOwned>(
        &self,
        op: &'static str,
        index: &str,
    ) -> Result<Vec<T>, AdapterError> {
        let mut conn = self.conn.clone();
        let members: Vec<String> = conn.smembers(index).await.map_err(redis_err(op))?;
        if members.is_empty() {
            return Ok(Vec::new());
        }
        let raws: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&members)
            .query_async(&mut conn)
            .await
            .map_err(redis_err(op))?;
        raws.into_iter()
            .flatten()
            .map(|raw| decode(op, &raw))
            .collect()
    }

    async fn compare_and_set(
        &self,
        op: &'static str,
        key: &str,
        old: &str,
        new: &str,
        expire_at_ms: Option<i64>,
    ) -> Result<bool, AdapterError> {
        let mut conn = self.conn.clone();
        let expiry = expire_at_ms.map(|ms| ms.to_string()).unwrap_or_default();
        let done: i64 = scripts::COMPARE_AND_SET
            .key(key)
            .arg(old)
            .arg(new)
            .arg(expiry)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(op))?;
        Ok(done == 1)
    }

    /// Read-modify-write of the JSON record at `key`: `change` edits the stored object and
    /// says what to answer and the new expiry (ms since the epoch; `None` keeps none), or
    /// `None` when the record is not the one asked for. The write is a compare-and-set, so a
    /// concurrent writer makes it start again (at most [`MAX_UPDATE_ATTEMPTS`] times, then
    /// a contention error). `Ok(None)`: no such record, or `change` declined.
    async fn update_record<T>(
        &self,
        op: &'static str,
        key: &str,
        mut change: impl FnMut(
            &mut Map<String, Value>,
        ) -> Result<Option<(T, Option<i64>)>, AdapterError>,
    ) -> Result<Option<T>, AdapterError> {
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(raw) = self.get_raw(op, key).await? else {
                return Ok(None);
            };
            let mut stored = decode_object(op, &raw)?;
            let Some((answer, expiry)) = change(&mut stored)? else {
                return Ok(None);
            };
            let json = encode(op, &stored)?;
            if self.compare_and_set(op, key, &raw, &json, expiry).await? {
                return Ok(Some(answer));
            }
        }
        Err(contention(op))
    }

    /// Read-modify-write of the JSON object at `key`, made if missing: `change` edits the
    /// stored object (empty when there is none) and says what to answer and whether to write
    /// it. A compare-and-set as in [`Self::update_record`].
    async fn upsert_record<T>(
        &self,
        op: &'static str,
        key: &str,
        mut change: impl FnMut(&mut Map<String, Value>) -> Result<(T, bool), AdapterError>,
    ) -> Result<T, AdapterError> {
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let raw = self.get_raw(op, key).await?;
            let mut stored = match &raw {
                Some(raw) => decode_object(op, raw)?,
                None => Map::new(),
            };
            let (answer, write) = change(&mut stored)?;
            if !write {
                return Ok(answer);
            }
            let json = encode(op, &stored)?;
            let read = raw.as_deref().unwrap_or_default();
            if self.compare_and_set(op, key, read, &json, None).await? {
                return Ok(answer);
            }
        }
        Err(contention(op))
    }

    /// Runs [`scripts::CREATE_INDEXED`]; `false` when `nx` and the record exists.
    async fn create_indexed(
        &self,
        op: &'static str,
        key: &str,
        json: &str,
        index: Option<String>,
        nx: bool,
        expire_at_ms: Option<i64>,
    ) -> Result<bool, AdapterError> {
        let mut conn = self.conn.clone();
        let created: i64 = scripts::CREATE_INDEXED
            .key(key)
            .arg(json)
            .arg(index.unwrap_or_default())
            .arg(if nx { "NX" } else { "" })
            .arg(expire_at_ms.map(|ms| ms.to_string()).unwrap_or_default())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(op))?;
        Ok(created == 1)
    }

    /// Runs [`scripts::DELETE_INDEXED`]; the deleted JSON, if the record existed.
    /// `owner_hash_prefix`: the prefix of the owner's hash whose field `key` goes too.
    async fn delete_indexed(
        &self,
        op: &'static str,
        key: &str,
        index_prefix: String,
        owner_hash_prefix: Option<String>,
    ) -> Result<Option<String>, AdapterError> {
        let mut conn = self.conn.clone();
        let mut invocation = scripts::DELETE_INDEXED.key(key);
        invocation.arg(index_prefix);
        if let Some(prefix) = owner_hash_prefix {
            invocation.arg(prefix);
        }
        invocation
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(op))
    }

    /// Deletes session `key` with its entries in its user's session index and
    /// active-organization hash; the deleted JSON, if the session existed.
    async fn delete_session_record(
        &self,
        op: &'static str,
        key: &str,
    ) -> Result<Option<String>, AdapterError> {
        let prefix = self.keys.sessions_by_user_prefix();
        let active = self.keys.active_organizations("");
        self.delete_indexed(op, key, prefix, Some(active)).await
    }
}

#[async_trait]
impl Adapter for RedisAdapter {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        const OP: &str = "createUser";
        let user = AdapterUser {
            id: uuid::Uuid::new_v4().to_string(),
            name: user.name,
            email: user.email,
            email_verified: user.email_verified,
            image: user.image,
        };
        let json = encode(OP, &user)?;
        let email_key = user
            .email
            .as_deref()
            .map(|e| self.keys.email(e))
            .unwrap_or_default();
        let mut conn = self.conn.clone();
        let created: i64 = scripts::CREATE_USER
            .key(self.keys.user(&user.id))
            .arg(json)
            .arg(email_key)
            .arg(&user.id)
            .arg(self.keys.user_index())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        if created != 1 {
            return Err(AdapterError::Conflict(
                "a user with this email exists".into(),
            ));
        }
        Ok(user)
    }

    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.load_user("getUser", id).await
    }

    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        const OP: &str = "getUserByEmail";
        let Some(id) = self.get_raw(OP, &self.keys.email(email)).await? else {
            return Ok(None);
        };
        let user = self.load_user(OP, &id).await?;
        // An index left behind by another writer must not hand out a different user.
        Ok(user.filter(|u| u.email.as_deref() == Some(email)))
    }

    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        const OP: &str = "getUserByAccount";
        let account = self.load_account(OP, provider, provider_account_id).await?;
        match account.and_then(|a| a.user_id) {
            Some(user_id) => self.load_user(OP, &user_id).await,
            None => Ok(None),
        }
    }

    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        const OP: &str = "updateUser";
        if !is_user_id(&update.id) {
            return Ok(None);
        }
        let key = self.keys.user(&update.id);
        for _ in 0..MAX_UPDATE_ATTEMPTS {
            let Some(raw) = self.get_raw(OP, &key).await? else {
                return Ok(None);
            };
            let mut stored = decode_object(OP, &raw)?;
            let mut user: AdapterUser = from_object(OP, &stored)?;
            if user.id != update.id {
                return Ok(None);
            }
            let old_email = user.email.clone();
            if let Some(v) = update.name.clone() {
                user.name = v;
            }
            if let Some(v) = update.email.clone() {
                user.email = v;
            }
            if let Some(v) = update.email_verified {
                user.email_verified = v;
            }
            if let Some(v) = update.image.clone() {
                user.image = v;
            }
            merge_fields(
                &mut stored,
                to_object(OP, &user)?,
                &["name", "email", "emailVerified", "image"],
            );
            let json = encode(OP, &stored)?;
            let email_key =
                |e: &Option<String>| e.as_deref().map(|e| self.keys.email(e)).unwrap_or_default();
            let mut conn = self.conn.clone();
            let outcome: i64 = scripts::UPDATE_UNIQUE
                .key(&key)
                .arg(&raw)
                .arg(json)
                .arg(&user.id)
                .arg(email_key(&old_email))
                .arg(email_key(&user.email))
                .invoke_async(&mut conn)
                .await
                .map_err(redis_err(OP))?;
            match outcome {
                1 => return Ok(Some(user)),
                -1 => {
                    return Err(AdapterError::Conflict(
                        "a user with this email exists".into(),
                    ));
                }
                _ => continue,
            }
        }
        Err(contention(OP))
    }

    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        const OP: &str = "deleteUser";
        if !is_user_id(id) {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let _: i64 = scripts::DELETE_USER
            .key(self.keys.user(id))
            .arg(id)
            .arg(self.keys.email_prefix())
            .arg(self.keys.accounts_by_user(id))
            .arg(self.keys.sessions_by_user(id))
            .arg(self.keys.authenticators_by_user(id))
            .arg(self.keys.tokens_by_identifier_prefix())
            .arg(self.keys.organizations_by_user(id))
            .arg(self.keys.members(""))
            .arg(self.keys.owners(""))
            .arg(self.keys.api_keys_by_user(id))
            .arg(self.keys.api_keys_by_organization(""))
            .arg(self.keys.user_index())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        let () = conn
            .del(&[
                self.keys.jwt_revocation(id),
                self.keys.two_factor(id),
                self.keys.recovery_codes(id),
                self.keys.app_access(id),
                self.keys.password(id),
                self.keys.groups(id),
                self.keys.active_organizations(id),
                self.keys.ban(id),
            ])
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        const OP: &str = "linkAccount";
        if names_index(&account.provider) {
            return Err(data_err(OP, "provider id is reserved for index keys"));
        }
        let key = self
            .keys
            .account(&account.provider, &account.provider_account_id);
        let json = encode(OP, &account)?;
        let index = account
            .user_id
            .as_deref()
            .map(|u| self.keys.accounts_by_user(u));
        if self
            .create_indexed(OP, &key, &json, index, true, None)
            .await?
        {
            Ok(())
        } else {
            Err(AdapterError::Conflict("account already linked".into()))
        }
    }

    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        const OP: &str = "unlinkAccount";
        if names_index(provider) {
            return Ok(());
        }
        let key = self.keys.account(provider, provider_account_id);
        self.delete_indexed(OP, &key, self.keys.accounts_by_user_prefix(), None)
            .await?;
        Ok(())
    }

    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        const OP: &str = "createSession";
        if names_index(&session.session_token) {
            return Err(data_err(OP, "session token is reserved for index keys"));
        }
        let key = self.keys.session(&session.session_token);
        let json = encode(OP, &session)?;
        let index = Some(self.keys.sessions_by_user(&session.user_id));
        self.create_indexed(
            OP,
            &key,
            &json,
            index,
            false,
            Some(expiry_millis(session.expires)),
        )
        .await?;
        Ok(session)
    }

    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        const OP: &str = "getSessionAndUser";
        if names_index(session_token) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(OP, &self.keys.session(session_token)).await? else {
            return Ok(None);
        };
        let session: AdapterSession = decode(OP, &raw)?;
        if session.session_token != session_token {
            return Ok(None);
        }
        Ok(self
            .load_user(OP, &session.user_id)
            .await?
            .map(|user| (session, user)))
    }

    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        const OP: &str = "updateSession";
        if names_index(session_token) {
            return Ok(None);
        }
        let key = self.keys.session(session_token);
        self.update_record(OP, &key, |stored| {
            let mut session: AdapterSession = from_object(OP, stored)?;
            if session.session_token != session_token {
                return Ok(None);
            }
            session.expires = expires;
            merge_fields(stored, to_object(OP, &session)?, &[]);
            Ok(Some((session, Some(expiry_millis(expires)))))
        })
        .await
    }

    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        const OP: &str = "deleteSession";
        if names_index(session_token) {
            return Ok(None);
        }
        let key = self.keys.session(session_token);
        let deleted = self.delete_session_record(OP, &key).await?;
        match deleted {
            Some(raw) => Ok(Some(decode(OP, &raw)?)),
            None => Ok(None),
        }
    }

    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        const OP: &str = "createVerificationToken";
        let key = self
            .keys
            .verification_token(&token.identifier, &token.token);
        let json = encode(OP, &token)?;
        let index = self.keys.tokens_by_identifier(&token.identifier);
        let expires = expiry_millis(token.expires);
        let mut conn = self.conn.clone();
        // The token, and its key in the address's index (which `deleteUser` empties),
        // expiring with the newest token.
        let _: () = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(&key)
            .arg(json)
            .arg("PXAT")
            .arg(expires)
            .ignore()
            .cmd("SADD")
            .arg(&index)
            .arg(&key)
            .ignore()
            .cmd("PEXPIREAT")
            .arg(&index)
            .arg(expires)
            .ignore()
            .query_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        const OP: &str = "useVerificationToken";
        let key = self.keys.verification_token(identifier, token);
        let mut conn = self.conn.clone();
        // GETDEL: of two concurrent uses exactly one gets the record.
        let raw: Option<String> = conn.get_del(&key).await.map_err(redis_err(OP))?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let stored: VerificationToken = decode(OP, &raw)?;
        // Guards against key collisions through `:` inside the identifier.
        Ok((stored.identifier == identifier && stored.token == token).then_some(stored))
    }

    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        self.load_account("getAccount", provider, provider_account_id)
            .await
    }

    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        const OP: &str = "getAuthenticator";
        if names_index(credential_id) {
            return Ok(None);
        }
        let Some(raw) = self
            .get_raw(OP, &self.keys.authenticator(credential_id))
            .await?
        else {
            return Ok(None);
        };
        let authenticator: Authenticator = decode(OP, &raw)?;
        Ok((authenticator.credential_id == credential_id).then_some(authenticator))
    }

    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        const OP: &str = "createAuthenticator";
        if names_index(&authenticator.credential_id) {
            return Err(data_err(OP, "credential id is reserved for index keys"));
        }
        let key = self.keys.authenticator(&authenticator.credential_id);
        let json = encode(OP, &authenticator)?;
        let index = authenticator
            .user_id
            .as_deref()
            .map(|u| self.keys.authenticators_by_user(u));
        if self
            .create_indexed(OP, &key, &json, index, true, None)
            .await?
        {
            Ok(authenticator)
        } else {
            Err(AdapterError::Conflict("authenticator exists".into()))
        }
    }

    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        const OP: &str = "listAuthenticatorsByUserId";
        let index = self.keys.authenticators_by_user(user_id);
        let mut list: Vec<Authenticator> = self.load_indexed(OP, &index).await?;
        list.retain(|a| a.user_id.as_deref() == Some(user_id));
        list.sort_by(|a, b| a.credential_id.cmp(&b.credential_id));
        Ok(list)
    }

    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        const OP: &str = "updateAuthenticatorCounter";
        if names_index(credential_id) {
            return Ok(None);
        }
        let key = self.keys.authenticator(credential_id);
        self.update_record(OP, &key, |stored| {
            let mut authenticator: Authenticator = from_object(OP, stored)?;
            if authenticator.credential_id != credential_id {
                return Ok(None);
            }
            authenticator.counter = counter;
            stored.insert("counter".into(), Value::from(counter));
            Ok(Some((authenticator, None)))
        })
        .await
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities::none()
            .linked_accounts(self)
            .session_activity(self)
            .session_sign_in(self)
            .jwt_revocation(self)
            .passkeys(self)
            .two_factor(self)
            .app_access(self)
            .upstream_sessions(self)
            .passwords(self)
            .user_groups(self)
            .organizations(self)
            .api_keys(self)
            .user_directory(self)
            .audit_log(self)
            .oidc_clients(self)
    }
}

#[async_trait]
impl LinkedAccountStore for RedisAdapter {
    async fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError> {
        const OP: &str = "listAccountsByUserId";
        let index = self.keys.accounts_by_user(user_id);
        let mut list: Vec<Account> = self.load_indexed(OP, &index).await?;
        list.retain(|a| a.user_id.as_deref() == Some(user_id));
        list.sort_by(|a, b| {
            (&a.provider, &a.provider_account_id).cmp(&(&b.provider, &b.provider_account_id))
        });
        Ok(list)
    }

    async fn update_account(&self, account: &Account) -> Result<bool, AdapterError> {
        const OP: &str = "updateAccount";
        if names_index(&account.provider) {
            return Ok(false);
        }
        let key = self
            .keys
            .account(&account.provider, &account.provider_account_id);
        // The token fields only, as they are named in the stored JSON.
        let tokens =
            serde_json::to_value(account).map_err(|_| data_err(OP, "account not serialisable"))?;
        self.update_record(OP, &key, |stored| {
            let current: Account = from_object(OP, stored)?;
            if current.provider != account.provider
                || current.provider_account_id != account.provider_account_id
            {
                return Ok(None);
            }
            for name in [
                "access_token",
                "expires_at",
                "refresh_token",
                "id_token",
                "scope",
                "session_state",
                "token_type",
            ] {
                match tokens.get(name) {
                    Some(v) if !v.is_null() => stored.insert(name.into(), v.clone()),
                    _ => stored.remove(name),
                };
            }
            Ok(Some(((), None)))
        })
        .await
        .map(|done| done.is_some())
    }
}

#[async_trait]
impl SessionActivityStore for RedisAdapter {
    async fn list_sessions_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<SessionActivity>, AdapterError> {
        const OP: &str = "listSessionsByUserId";
        let index = self.keys.sessions_by_user(user_id);
        let records: Vec<Map<String, Value>> = self.load_indexed(OP, &index).await?;
        let time_field = |rec: &Map<String, Value>, name: &str| {
            rec.get(name).and_then(Value::as_str).and_then(|t| {
                OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
        };
        let mut list = Vec::with_capacity(records.len());
        for rec in records {
            let session: AdapterSession = from_object(OP, &rec)?;
            if session.user_id != user_id {
                continue;
            }
            list.push(SessionActivity {
                created_at: time_field(&rec, "createdAt"),
                last_seen_at: time_field(&rec, "lastSeenAt"),
                user_agent: rec
                    .get("userAgent")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                session,
            });
        }
        list.sort_by(|a, b| a.session.session_token.cmp(&b.session.session_token));
        Ok(list)
    }

    async fn record_session_activity(
        &self,
        session_token: &str,
        at: OffsetDateTime,
        user_agent: Option<&str>,
    ) -> Result<(), AdapterError> {
        const OP: &str = "recordSessionActivity";
        if names_index(session_token) {
            return Ok(());
        }
        let key = self.keys.session(session_token);
        let at = authcore::types::iso_string(at);
        self.update_record(OP, &key, |stored| {
            let session: AdapterSession = from_object(OP, stored)?;
            if session.session_token != session_token {
                return Ok(None);
            }
            stored
                .entry("createdAt")
                .or_insert_with(|| Value::from(at.clone()));
            stored.insert("lastSeenAt".into(), Value::from(at.clone()));
            if let Some(ua) = user_agent {
                stored.insert("userAgent".into(), Value::from(ua));
            }
            Ok(Some(((), Some(expiry_millis(session.expires)))))
        })
        .await
        .map(|_| ())
    }

    async fn delete_sessions_by_user_id(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AdapterError> {
        const OP: &str = "deleteSessionsByUserId";
        let mut deleted = 0;
        for activity in self.list_sessions_by_user_id(user_id).await? {
            let token = &activity.session.session_token;
            if Some(token.as_str()) == keep {
                continue;
            }
            let key = self.keys.session(token);
            if self.delete_session_record(OP, &key).await?.is_some() {
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

#[async_trait]
impl SessionSignInStore for RedisAdapter {
    async fn record_session_sign_in(
        &self,
        session_token: &str,
        sign_in: &SignInInfo,
    ) -> Result<(), AdapterError> {
        const OP: &str = "recordSessionSignIn";
        if names_index(session_token) {
            return Ok(());
        }
        let key = self.keys.session(session_token);
        self.update_record(OP, &key, |stored| {
            let session: AdapterSession = from_object(OP, stored)?;
            if session.session_token != session_token {
                return Ok(None);
            }
            stored.insert("amr".into(), Value::from(sign_in.amr.clone()));
            stored.insert("authTime".into(), Value::from(sign_in.auth_time));
            match &sign_in.impersonator {
                Some(admin) => stored.insert("impersonator".into(), Value::from(admin.as_str())),
                None => stored.remove("impersonator"),
            };
            Ok(Some(((), Some(expiry_millis(session.expires)))))
        })
        .await
        .map(|_| ())
    }

    async fn get_session_sign_in(
        &self,
        session_token: &str,
    ) -> Result<Option<SignInInfo>, AdapterError> {
        const OP: &str = "getSessionSignIn";
        if names_index(session_token) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(OP, &self.keys.session(session_token)).await? else {
            return Ok(None);
        };
        let stored = decode_object(OP, &raw)?;
        if stored.get("sessionToken").and_then(Value::as_str) != Some(session_token) {
            return Ok(None);
        }
        let Some(amr) = stored.get("amr").and_then(Value::as_array) else {
            return Ok(None);
        };
        let impersonator = stored
            .get("impersonator")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Some(
            SignInInfo::new(
                amr.iter()
                    .filter_map(|m| m.as_str().map(str::to_owned))
                    .collect(),
                stored.get("authTime").and_then(Value::as_i64),
            )
            .with_impersonator(impersonator),
        ))
    }
}

#[async_trait]
impl JwtRevocationStore for RedisAdapter {
    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError> {
        const OP: &str = "revokeJwtSessions";
        if !is_user_id(user_id) {
            return Err(data_err(OP, "not a user id of this adapter"));
        }
        let json = serde_json::json!({
            "before": authcore::types::iso_string(before),
            "keep": keep,
        })
        .to_string();
        let mut conn = self.conn.clone();
        let () = conn
            .set(self.keys.jwt_revocation(user_id), json)
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError> {
        const OP: &str = "getJwtRevocation";
        if !is_user_id(user_id) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(OP, &self.keys.jwt_revocation(user_id)).await? else {
            return Ok(None);
        };
        let stored = decode_object(OP, &raw)?;
        let before = stored
            .get("before")
            .and_then(Value::as_str)
            .and_then(|t| {
                OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
            .ok_or_else(|| data_err(OP, "unreadable revocation stored"))?;
        let keep = stored
            .get("keep")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Some(JwtRevocation { before, keep }))
    }
}

#[async_trait]
impl PasskeyStore for RedisAdapter {
    async fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError> {
        const OP: &str = "deleteAuthenticator";
        if names_index(credential_id) {
            return Ok(false);
        }
        let key = self.keys.authenticator(credential_id);
        let prefix = self.keys.authenticators_by_user("");
        Ok(self.delete_indexed(OP, &key, prefix, None).await?.is_some())
    }

    async fn rename_authenticator(
        &self,
        credential_id: &str,
        name: Option<&str>,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "renameAuthenticator";
        if names_index(credential_id) {
            return Ok(false);
        }
        let key = self.keys.authenticator(credential_id);
        self.update_record(OP, &key, |stored| {
            let authenticator: Authenticator = from_object(OP, stored)?;
            if authenticator.credential_id != credential_id {
                return Ok(None);
            }
            match name {
                Some(n) => stored.insert("name".into(), Value::from(n)),
                None => stored.remove("name"),
            };
            Ok(Some(((), None)))
        })
        .await
        .map(|done| done.is_some())
    }
}

#[async_trait]
impl TwoFactorStore for RedisAdapter {
    async fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError> {
        const OP: &str = "getTwoFactor";
        if !is_user_id(user_id) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(OP, &self.keys.two_factor(user_id)).await? else {
            return Ok(None);
        };
        let stored = decode_object(OP, &raw)?;
        let totp_secret = stored
            .get("totpSecret")
            .and_then(Value::as_str)
            .ok_or_else(|| data_err(OP, "unreadable second factor stored"))?
            .to_owned();
        let totp_confirmed_at = match stored.get("totpConfirmedAt").and_then(Value::as_str) {
            Some(t) => Some(
                OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                    .map_err(|_| data_err(OP, "unreadable second factor stored"))?,
            ),
            None => None,
        };
        Ok(Some(TwoFactor {
            user_id: user_id.to_owned(),
            totp_secret,
            totp_confirmed_at,
        }))
    }

    async fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError> {
        const OP: &str = "setTwoFactor";
        if !is_user_id(&two_factor.user_id) {
            return Err(data_err(OP, "not a user id of this adapter"));
        }
        let json = serde_json::json!({
            "totpSecret": two_factor.totp_secret,
            "totpConfirmedAt": two_factor.totp_confirmed_at.map(authcore::types::iso_string),
        })
        .to_string();
        let mut conn = self.conn.clone();
        let () = conn
            .set(self.keys.two_factor(&two_factor.user_id), json)
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError> {
        const OP: &str = "deleteTwoFactor";
        if !is_user_id(user_id) {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let () = conn
            .del(&[
                self.keys.two_factor(user_id),
                self.keys.recovery_codes(user_id),
            ])
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn replace_recovery_codes(
        &self,
        user_id: &str,
        code_hashes: &[String],
    ) -> Result<(), AdapterError> {
        const OP: &str = "replaceRecoveryCodes";
        if !is_user_id(user_id) {
            return Err(data_err(OP, "not a user id of this adapter"));
        }
        let key = self.keys.recovery_codes(user_id);
        // The old set goes in the transaction that stores the new one.
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore();
        if !code_hashes.is_empty() {
            pipe.sadd(&key, code_hashes).ignore();
        }
        let mut conn = self.conn.clone();
        let () = pipe.query_async(&mut conn).await.map_err(redis_err(OP))?;
        Ok(())
    }

    async fn use_recovery_code(
        &self,
        user_id: &str,
        code_hash: &str,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "useRecoveryCode";
        if !is_user_id(user_id) {
            return Ok(false);
        }
        // SREM answers 1 to the one use that removed the code.
        let mut conn = self.conn.clone();
        let removed: i64 = conn
            .srem(self.keys.recovery_codes(user_id), code_hash)
            .await
            .map_err(redis_err(OP))?;
        Ok(removed == 1)
    }

    async fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError> {
        const OP: &str = "countRecoveryCodes";
        if !is_user_id(user_id) {
            return Ok(0);
        }
        let mut conn = self.conn.clone();
        conn.scard(self.keys.recovery_codes(user_id))
            .await
            .map_err(redis_err(OP))
    }
}

impl RedisAdapter {
    /// Runs [`scripts::SET_FOR_USER`]: writes `value` at `key` (deletes it when `None`) if
    /// user `user_id` exists, else fails.
    async fn set_for_user(
        &self,
        op: &'static str,
        user_id: &str,
        key: String,
        value: Option<String>,
    ) -> Result<(), AdapterError> {
        if !is_user_id(user_id) {
            return Err(data_err(op, "not a user id of this adapter"));
        }
        if self.set_if_user(op, user_id, key, value).await? {
            Ok(())
        } else {
            Err(data_err(op, "no user with this id"))
        }
    }

    /// Runs [`scripts::SET_FOR_USER`]: writes `value` at `key` (deletes it when `None`) if
    /// user `user_id` exists; whether the user does.
    async fn set_if_user(
        &self,
        op: &'static str,
        user_id: &str,
        key: String,
        value: Option<String>,
    ) -> Result<bool, AdapterError> {
        let delete = if value.is_none() { "DEL" } else { "" };
        let mut conn = self.conn.clone();
        let done: i64 = scripts::SET_FOR_USER
            .key(self.keys.user(user_id))
            .key(key)
            .arg(value.unwrap_or_default())
            .arg(delete)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(op))?;
        Ok(done == 1)
    }
}

#[async_trait]
impl PasswordStore for RedisAdapter {
    async fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError> {
        const OP: &str = "getPasswordHash";
        if !is_user_id(user_id) {
            return Ok(None);
        }
        self.get_raw(OP, &self.keys.password(user_id)).await
    }

    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError> {
        let key = self.keys.password(user_id);
        self.set_for_user("setPasswordHash", user_id, key, Some(hash.to_owned()))
            .await
    }

    async fn replace_password_hash(
        &self,
        user_id: &str,
        current: &str,
        new: &str,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "replacePasswordHash";
        if !is_user_id(user_id) {
            return Ok(false);
        }
        // Compare and set in one script: of concurrent replacements from one hash, one wins.
        let mut conn = self.conn.clone();
        let done: i64 = scripts::REPLACE_IF_EQUAL
            .key(self.keys.password(user_id))
            .arg(current)
            .arg(new)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(done == 1)
    }

    async fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError> {
        const OP: &str = "deletePasswordHash";
        if !is_user_id(user_id) {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let () = conn
            .del(self.keys.password(user_id))
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }
}

#[async_trait]
impl UserGroupsStore for RedisAdapter {
    async fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError> {
        const OP: &str = "setUserGroups";
        // One string, so a reader sees the old list or the new one; none is no key.
        let json = if groups.is_empty() {
            None
        } else {
            Some(encode(OP, &groups)?)
        };
        self.set_for_user(OP, user_id, self.keys.groups(user_id), json)
            .await
    }

    async fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError> {
        const OP: &str = "getUserGroups";
        if !is_user_id(user_id) {
            return Ok(Vec::new());
        }
        match self.get_raw(OP, &self.keys.groups(user_id)).await? {
            Some(raw) => decode(OP, &raw),
            None => Ok(Vec::new()),
        }
    }
}

#[async_trait]
impl AppAccessStore for RedisAdapter {
    async fn grant_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> Result<AppAccess, AdapterError> {
        const OP: &str = "grantAppAccess";
        if !is_user_id(user_id) {
            return Err(data_err(OP, "not a user id of this adapter"));
        }
        let key = self.keys.app_access(user_id);
        let grant = self.upsert_record(OP, &key, |stored| {
            let previous = stored
                .get(client_id)
                .map(|v| access_from_json(OP, user_id, client_id, v))
                .transpose()?;
            let access = AppAccess::granted(previous, user_id, client_id, client_name, scopes, at);
            stored.insert(client_id.to_owned(), access_json(&access));
            Ok((access, true))
        });
        grant.await
    }

    async fn get_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<AppAccess>, AdapterError> {
        const OP: &str = "getAppAccess";
        if !is_user_id(user_id) {
            return Ok(None);
        }
        let Some(raw) = self.get_raw(OP, &self.keys.app_access(user_id)).await? else {
            return Ok(None);
        };
        decode_object(OP, &raw)?
            .get(client_id)
            .map(|v| access_from_json(OP, user_id, client_id, v))
            .transpose()
    }

    async fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError> {
        const OP: &str = "listAppAccess";
        if !is_user_id(user_id) {
            return Ok(Vec::new());
        }
        let Some(raw) = self.get_raw(OP, &self.keys.app_access(user_id)).await? else {
            return Ok(Vec::new());
        };
        let mut list = Vec::new();
        for (client_id, v) in decode_object(OP, &raw)? {
            let access = access_from_json(OP, user_id, &client_id, &v)?;
            if !access.scopes.is_empty() {
                list.push(access);
            }
        }
        list.sort_unstable_by(|a, b| a.client_id.cmp(&b.client_id));
        Ok(list)
    }

    async fn revoke_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        at: OffsetDateTime,
    ) -> Result<bool, AdapterError> {
        const OP: &str = "revokeAppAccess";
        if !is_user_id(user_id) {
            return Ok(false);
        }
        let key = self.keys.app_access(user_id);
        let revoke = self.upsert_record(OP, &key, |stored| {
            let Some(v) = stored.get(client_id) else {
                return Ok((false, false));
            };
            let Some(revoked) = access_from_json(OP, user_id, client_id, v)?.revoked(at) else {
                return Ok((false, false));
            };
            stored.insert(client_id.to_owned(), access_json(&revoked));
            Ok((true, true))
        });
        revoke.await
    }
}

#[async_trait]
impl UpstreamSessionStore for RedisAdapter {
    async fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError> {
        const OP: &str = "recordUpstreamSession";
        if !is_user_id(&session.user_id) {
            return Err(data_err(OP, "not a user id of this adapter"));
        }
        let key = self.keys.upstream_sessions(&session.provider, &session.sid);
        let json = encode(
            OP,
            &serde_json::json!({
                "userId": session.user_id,
                "sessionToken": session.session_token,
                "expires": expiry_millis(session.expires),
            }),
        )?;
        let expires = expiry_millis(session.expires);
        let mut conn = self.conn.clone();
        let _: i64 = scripts::PUSH_EXPIRING
            .key(&key)
            .arg(json)
            .arg(expires)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        Ok(())
    }

    async fn take_upstream_sessions(
        &self,
        provider: &str,
        sid: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<UpstreamSession>, AdapterError> {
        const OP: &str = "takeUpstreamSessions";
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Stored {
            user_id: String,
            session_token: Option<String>,
            expires: i64,
        }
        let key = self.keys.upstream_sessions(provider, sid);
        let mut conn = self.conn.clone();
        // Read and deleted in one transaction: of concurrent takes, one gets the list.
        let (raw,): (Vec<String>,) = redis::pipe()
            .atomic()
            .lrange(&key, 0, -1)
            .del(&key)
            .ignore()
            .query_async(&mut conn)
            .await
            .map_err(redis_err(OP))?;
        let mut taken = Vec::new();
        for r in raw {
            let stored: Stored = decode(OP, &r)?;
            let expires =
                OffsetDateTime::from_unix_timestamp_nanos(i128::from(stored.expires) * 1_000_000)
                    .map_err(|_| data_err(OP, "expiry out of range"))?;
            if expires > now {
                taken.push(UpstreamSession {
                    provider: provider.to_owned(),
                    sid: sid.to_owned(),
                    user_id: stored.user_id,
                    session_token: stored.session_token,
                    expires,
                });
            }
        }
        Ok(taken)
    }
}
