//! An in-memory [`Adapter`] for examples and tests. Data lives as long as the value (clones
//! share it); nothing is persisted.
//!
//! ```
//! use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
//! # tokio_block(async {
//! let db = MemoryAdapter::new();
//! let user = db.create_user(NewUser { email: Some("a@b.c".into()), ..Default::default() }).await?;
//! assert_eq!(db.get_user_by_email("a@b.c").await?.map(|u| u.id), Some(user.id));
//! # Ok::<_, authcore::adapter::AdapterError>(())
//! # });
//! # fn tokio_block<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{
    Adapter, AdapterError, AdapterSession, AdapterUser, AppAccess, AppAccessStore, Capabilities,
    JwtRevocation, JwtRevocationStore, LinkedAccountStore, NewUser, PasskeyStore, PasswordStore,
    SessionActivity, SessionActivityStore, SessionSignInStore, TwoFactor, TwoFactorStore,
    UpstreamSession, UpstreamSessionStore, UserGroupsStore, UserUpdate, VerificationToken,
};
use crate::types::SignInInfo;
use crate::types::{Account, Authenticator};

#[derive(Default)]
struct Store {
    users: HashMap<String, AdapterUser>,
    /// Keyed by (provider, provider_account_id).
    accounts: HashMap<(String, String), Account>,
    sessions: HashMap<String, AdapterSession>,
    /// JWT revocations by user id.
    revocations: HashMap<String, JwtRevocation>,
    /// Recorded use of sessions: created, last seen, user agent.
    activity: HashMap<String, (OffsetDateTime, OffsetDateTime, Option<String>)>,
    /// How the users of sessions signed in.
    sign_ins: HashMap<String, SignInInfo>,
    /// Keyed by (identifier, token).
    tokens: HashMap<(String, String), VerificationToken>,
    authenticators: HashMap<String, Authenticator>,
    /// TOTP second factors by user id.
    two_factors: HashMap<String, TwoFactor>,
    /// Hashes of unused recovery codes by user id.
    recovery_codes: HashMap<String, Vec<String>>,
    /// Access granted to applications, by (user id, client id).
    app_access: HashMap<(String, String), AppAccess>,
    /// Sessions signed in by upstream provider sessions, by (provider, sid).
    upstream: HashMap<(String, String), Vec<UpstreamSession>>,
    /// Password hashes by user id.
    passwords: HashMap<String, String>,
    /// Groups from user sources by user id.
    groups: HashMap<String, Vec<String>>,
}

impl Store {
    /// Deletes session `token` and what is recorded about it.
    fn delete_session(&mut self, token: &str) -> Option<AdapterSession> {
        self.activity.remove(token);
        self.sign_ins.remove(token);
        self.sessions.remove(token)
    }
}

/// An in-memory adapter; cheap to clone, clones share the data.
#[derive(Clone, Default)]
pub struct MemoryAdapter {
    store: Arc<Mutex<Store>>,
}

impl std::fmt::Debug for MemoryAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemoryAdapter")
    }
}

impl MemoryAdapter {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many verification tokens are stored (used or expired ones are removed by
    /// `use_verification_token`).
    pub fn verification_token_count(&self) -> usize {
        self.lock().tokens.len()
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock cannot leave the maps half-updated in a way that
        // matters for a test store; keep serving.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl Adapter for MemoryAdapter {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        let mut s = self.lock();
        if let Some(email) = &user.email
            && s.users.values().any(|u| u.email.as_ref() == Some(email))
        {
            return Err(AdapterError::Conflict(
                "a user with this email exists".into(),
            ));
        }
        let u = AdapterUser {
            id: crate::random::uuid_v4(),
            name: user.name,
            email: user.email,
            email_verified: user.email_verified,
            image: user.image,
        };
        s.users.insert(u.id.clone(), u.clone());
        Ok(u)
    }

    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        Ok(self.lock().users.get(id).cloned())
    }

    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        Ok(self
            .lock()
            .users
            .values()
            .find(|u| u.email.as_deref() == Some(email))
            .cloned())
    }

    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        let s = self.lock();
        let key = (provider.to_owned(), provider_account_id.to_owned());
        Ok(s.accounts
            .get(&key)
            .and_then(|a| a.user_id.as_ref())
            .and_then(|id| s.users.get(id))
            .cloned())
    }

    async fn update_user(&self, up: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        let mut s = self.lock();
        let Some(u) = s.users.get_mut(&up.id) else {
            return Ok(None);
        };
        if let Some(v) = up.name {
            u.name = v;
        }
        if let Some(v) = up.email {
            u.email = v;
        }
        if let Some(v) = up.email_verified {
            u.email_verified = v;
        }
        if let Some(v) = up.image {
            u.image = v;
        }
        Ok(Some(u.clone()))
    }

    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        let mut s = self.lock();
        s.revocations.remove(id);
        s.passwords.remove(id);
        s.groups.remove(id);
        s.two_factors.remove(id);
        s.recovery_codes.remove(id);
        s.app_access.retain(|(user, _), _| user != id);
        for records in s.upstream.values_mut() {
            records.retain(|r| r.user_id != id);
        }
        if let Some(email) = s.users.remove(id).and_then(|u| u.email) {
            s.tokens.retain(|(identifier, _), _| *identifier != email);
        }
        s.accounts.retain(|_, a| a.user_id.as_deref() != Some(id));
        s.sessions.retain(|_, x| x.user_id != id);
        let Store {
            sessions,
            activity,
            sign_ins,
            ..
        } = &mut *s;
        activity.retain(|token, _| sessions.contains_key(token));
        sign_ins.retain(|token, _| sessions.contains_key(token));
        s.authenticators
            .retain(|_, a| a.user_id.as_deref() != Some(id));
        Ok(())
    }

    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        let mut s = self.lock();
        let key = (
            account.provider.clone(),
            account.provider_account_id.clone(),
        );
        if s.accounts.contains_key(&key) {
            return Err(AdapterError::Conflict("account already linked".into()));
        }
        s.accounts.insert(key, account);
        Ok(())
    }

    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        self.lock()
            .accounts
            .remove(&(provider.to_owned(), provider_account_id.to_owned()));
        Ok(())
    }

    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        let mut s = self.lock();
        // As the SQL stores' foreign key: a session belongs to a stored user.
        if !s.users.contains_key(&session.user_id) {
            return Err(AdapterError::Backend(
                "create_session: no user with this id".into(),
            ));
        }
        s.sessions
            .insert(session.session_token.clone(), session.clone());
        Ok(session)
    }

    async fn get_session_and_user(
        &self,
        token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        let s = self.lock();
        Ok(s.sessions
            .get(token)
            .and_then(|x| s.users.get(&x.user_id).map(|u| (x.clone(), u.clone()))))
    }

    async fn update_session(
        &self,
        token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        Ok(self.lock().sessions.get_mut(token).map(|x| {
            x.expires = expires;
            x.clone()
        }))
    }

    async fn delete_session(&self, token: &str) -> Result<Option<AdapterSession>, AdapterError> {
        Ok(self.lock().delete_session(token))
    }

    async fn create_verification_token(&self, t: VerificationToken) -> Result<(), AdapterError> {
        let mut store = self.lock();
        // Unused tokens a day past their expiry are dropped, so the map stays bounded.
        let stale_before = time::OffsetDateTime::now_utc() - super::STALE_TOKEN_GRACE;
        store.tokens.retain(|_, v| v.expires >= stale_before);
        store
            .tokens
            .insert((t.identifier.clone(), t.token.clone()), t);
        Ok(())
    }

    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        Ok(self
            .lock()
            .tokens
            .remove(&(identifier.to_owned(), token.to_owned())))
    }

    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        Ok(self
            .lock()
            .accounts
            .get(&(provider.to_owned(), provider_account_id.to_owned()))
            .cloned())
    }

    async fn get_authenticator(&self, id: &str) -> Result<Option<Authenticator>, AdapterError> {
        Ok(self.lock().authenticators.get(id).cloned())
    }

    async fn create_authenticator(&self, a: Authenticator) -> Result<Authenticator, AdapterError> {
        let mut s = self.lock();
        if s.authenticators.contains_key(&a.credential_id) {
            return Err(AdapterError::Conflict("authenticator exists".into()));
        }
        s.authenticators.insert(a.credential_id.clone(), a.clone());
        Ok(a)
    }

    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        let mut v: Vec<Authenticator> = self
            .lock()
            .authenticators
            .values()
            .filter(|a| a.user_id.as_deref() == Some(user_id))
            .cloned()
            .collect();
        v.sort_by(|a, b| a.credential_id.cmp(&b.credential_id));
        Ok(v)
    }

    async fn update_authenticator_counter(
        &self,
        id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        Ok(self.lock().authenticators.get_mut(id).map(|a| {
            a.counter = counter;
            a.clone()
        }))
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
    }
}

impl MemoryAdapter {
    /// Refuses a write for a user that does not exist, as a foreign key would.
    fn require_user(s: &Store, user_id: &str) -> Result<(), AdapterError> {
        if s.users.contains_key(user_id) {
            Ok(())
        } else {
            Err(AdapterError::Conflict(format!("no user {user_id:?}")))
        }
    }
}

#[async_trait]
impl PasswordStore for MemoryAdapter {
    async fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError> {
        Ok(self.lock().passwords.get(user_id).cloned())
    }

    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError> {
        let mut s = self.lock();
        Self::require_user(&s, user_id)?;
        s.passwords.insert(user_id.to_owned(), hash.to_owned());
        Ok(())
    }

    async fn replace_password_hash(
        &self,
        user_id: &str,
        current: &str,
        new: &str,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        match s.passwords.get_mut(user_id) {
            Some(hash) if hash == current => {
                new.clone_into(hash);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError> {
        self.lock().passwords.remove(user_id);
        Ok(())
    }
}

#[async_trait]
impl UserGroupsStore for MemoryAdapter {
    async fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError> {
        let mut s = self.lock();
        Self::require_user(&s, user_id)?;
        s.groups.insert(user_id.to_owned(), groups.to_vec());
        Ok(())
    }

    async fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError> {
        Ok(self.lock().groups.get(user_id).cloned().unwrap_or_default())
    }
}

#[async_trait]
impl LinkedAccountStore for MemoryAdapter {
    async fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError> {
        let mut list: Vec<Account> = self
            .lock()
            .accounts
            .values()
            .filter(|a| a.user_id.as_deref() == Some(user_id))
            .cloned()
            .collect();
        list.sort_by(|a, b| {
            (&a.provider, &a.provider_account_id).cmp(&(&b.provider, &b.provider_account_id))
        });
        Ok(list)
    }

    async fn update_account(&self, account: &Account) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        let key = (
            account.provider.clone(),
            account.provider_account_id.clone(),
        );
        let Some(stored) = s.accounts.get_mut(&key) else {
            return Ok(false);
        };
        stored.access_token.clone_from(&account.access_token);
        stored.expires_at = account.expires_at;
        stored.refresh_token.clone_from(&account.refresh_token);
        stored.id_token.clone_from(&account.id_token);
        stored.scope.clone_from(&account.scope);
        stored.session_state.clone_from(&account.session_state);
        stored.token_type.clone_from(&account.token_type);
        Ok(true)
    }
}

#[async_trait]
impl SessionActivityStore for MemoryAdapter {
    async fn list_sessions_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<SessionActivity>, AdapterError> {
        let s = self.lock();
        let mut list: Vec<SessionActivity> = s
            .sessions
            .values()
            .filter(|x| x.user_id == user_id)
            .map(|x| {
                let activity = s.activity.get(&x.session_token);
                SessionActivity {
                    session: x.clone(),
                    created_at: activity.map(|a| a.0),
                    last_seen_at: activity.map(|a| a.1),
                    user_agent: activity.and_then(|a| a.2.clone()),
                }
            })
            .collect();
        list.sort_by(|a, b| a.session.session_token.cmp(&b.session.session_token));
        Ok(list)
    }

    async fn record_session_activity(
        &self,
        session_token: &str,
        at: OffsetDateTime,
        user_agent: Option<&str>,
    ) -> Result<(), AdapterError> {
        let mut s = self.lock();
        if !s.sessions.contains_key(session_token) {
            return Ok(());
        }
        let entry = s
            .activity
            .entry(session_token.to_owned())
            .or_insert((at, at, None));
        entry.1 = at;
        if let Some(ua) = user_agent {
            entry.2 = Some(ua.to_owned());
        }
        Ok(())
    }

    async fn delete_sessions_by_user_id(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AdapterError> {
        let mut s = self.lock();
        let gone: Vec<String> = s
            .sessions
            .iter()
            .filter(|(token, x)| x.user_id == user_id && Some(token.as_str()) != keep)
            .map(|(token, _)| token.clone())
            .collect();
        for token in &gone {
            s.delete_session(token);
        }
        Ok(gone.len() as u64)
    }
}

#[async_trait]
impl SessionSignInStore for MemoryAdapter {
    async fn record_session_sign_in(
        &self,
        session_token: &str,
        sign_in: &SignInInfo,
    ) -> Result<(), AdapterError> {
        let mut s = self.lock();
        if s.sessions.contains_key(session_token) {
            s.sign_ins.insert(session_token.to_owned(), sign_in.clone());
        }
        Ok(())
    }

    async fn get_session_sign_in(
        &self,
        session_token: &str,
    ) -> Result<Option<SignInInfo>, AdapterError> {
        Ok(self.lock().sign_ins.get(session_token).cloned())
    }
}

#[async_trait]
impl JwtRevocationStore for MemoryAdapter {
    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError> {
        let revocation = JwtRevocation {
            before,
            keep: keep.map(str::to_owned),
        };
        self.lock()
            .revocations
            .insert(user_id.to_owned(), revocation);
        Ok(())
    }

    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError> {
        Ok(self.lock().revocations.get(user_id).cloned())
    }
}

#[async_trait]
impl PasskeyStore for MemoryAdapter {
    async fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError> {
        Ok(self.lock().authenticators.remove(credential_id).is_some())
    }

    async fn rename_authenticator(
        &self,
        credential_id: &str,
        name: Option<&str>,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        let Some(a) = s.authenticators.get_mut(credential_id) else {
            return Ok(false);
        };
        a.name = name.map(str::to_owned);
        Ok(true)
    }
}

#[async_trait]
impl TwoFactorStore for MemoryAdapter {
    async fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError> {
        Ok(self.lock().two_factors.get(user_id).cloned())
    }

    async fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError> {
        self.lock()
            .two_factors
            .insert(two_factor.user_id.clone(), two_factor);
        Ok(())
    }

    async fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError> {
        let mut s = self.lock();
        s.two_factors.remove(user_id);
        s.recovery_codes.remove(user_id);
        Ok(())
    }

    async fn replace_recovery_codes(
        &self,
        user_id: &str,
        code_hashes: &[String],
    ) -> Result<(), AdapterError> {
        self.lock()
            .recovery_codes
            .insert(user_id.to_owned(), code_hashes.to_vec());
        Ok(())
    }

    async fn use_recovery_code(
        &self,
        user_id: &str,
        code_hash: &str,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        let Some(codes) = s.recovery_codes.get_mut(user_id) else {
            return Ok(false);
        };
        let before = codes.len();
        codes.retain(|c| c != code_hash);
        Ok(codes.len() < before)
    }

    async fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError> {
        Ok(self
            .lock()
            .recovery_codes
            .get(user_id)
            .map_or(0, |c| c.len() as u64))
    }
}

#[async_trait]
impl AppAccessStore for MemoryAdapter {
    async fn grant_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> Result<AppAccess, AdapterError> {
        let mut s = self.lock();
        let key = (user_id.to_owned(), client_id.to_owned());
        let previous = s.app_access.remove(&key);
        let access = AppAccess::granted(previous, user_id, client_id, client_name, scopes, at);
        s.app_access.insert(key, access.clone());
        Ok(access)
    }

    async fn get_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<AppAccess>, AdapterError> {
        let key = (user_id.to_owned(), client_id.to_owned());
        Ok(self.lock().app_access.get(&key).cloned())
    }

    async fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError> {
        let mut v: Vec<AppAccess> = self
            .lock()
            .app_access
            .values()
            .filter(|a| a.user_id == user_id && !a.scopes.is_empty())
            .cloned()
            .collect();
        v.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        Ok(v)
    }

    async fn revoke_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        at: OffsetDateTime,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        let key = (user_id.to_owned(), client_id.to_owned());
        let Some(revoked) = s.app_access.get(&key).and_then(|a| a.revoked(at)) else {
            return Ok(false);
        };
        s.app_access.insert(key, revoked);
        Ok(true)
    }
}

#[async_trait]
impl UpstreamSessionStore for MemoryAdapter {
    async fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError> {
        let now = OffsetDateTime::now_utc();
        let mut s = self.lock();
        s.upstream.retain(|_, records| {
            records.retain(|r| r.expires > now);
            !records.is_empty()
        });
        s.upstream
            .entry((session.provider.clone(), session.sid.clone()))
            .or_default()
            .push(session.clone());
        Ok(())
    }

    async fn take_upstream_sessions(
        &self,
        provider: &str,
        sid: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<UpstreamSession>, AdapterError> {
        let key = (provider.to_owned(), sid.to_owned());
        let mut records = self.lock().upstream.remove(&key).unwrap_or_default();
        records.retain(|r| r.expires > now);
        Ok(records)
    }
}
