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
    Adapter, AdapterError, AdapterSession, AdapterUser, ApiKey, ApiKeyOwner, ApiKeyStore,
    AppAccess, AppAccessStore, AuditLogStore, AuditQuery, AuditRecord, Capabilities, Invitation,
    InvitationAcceptance, InvitationStatus, JwtRevocation, JwtRevocationStore, LinkedAccountStore,
    MAX_AUDIT_PAGE, MAX_USER_PAGE, Member, MemberChange, NewUser, OidcClientStore, Organization,
    OrganizationStore, PasskeyStore, PasswordStore, SessionActivity, SessionActivityStore,
    SessionSignInStore, StoredClient, Team, TwoFactor, TwoFactorStore, UpstreamSession,
    UpstreamSessionStore, UserBan, UserDirectoryStore, UserGroupsStore, UserPage, UserQuery,
    UserUpdate, VerificationToken,
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
    /// Organizations by id.
    organizations: HashMap<String, Organization>,
    /// Memberships by (organization id, user id).
    members: HashMap<(String, String), Member>,
    /// Teams by id.
    teams: HashMap<String, Team>,
    /// Invitations by id.
    invitations: HashMap<String, Invitation>,
    /// The active organization of database sessions, by session token.
    session_orgs: HashMap<String, String>,
    /// API keys by id.
    api_keys: HashMap<String, ApiKey>,
    /// Bans by user id.
    bans: HashMap<String, UserBan>,
    /// The audit log by `seq`.
    audit: std::collections::BTreeMap<u64, AuditRecord>,
    /// The OpenID Provider's stored clients by id.
    oidc_clients: std::collections::BTreeMap<String, StoredClient>,
}

impl Store {
    /// Deletes session `token` and what is recorded about it.
    fn delete_session(&mut self, token: &str) -> Option<AdapterSession> {
        self.activity.remove(token);
        self.sign_ins.remove(token);
        self.session_orgs.remove(token);
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
            session_orgs,
            ..
        } = &mut *s;
        activity.retain(|token, _| sessions.contains_key(token));
        sign_ins.retain(|token, _| sessions.contains_key(token));
        session_orgs.retain(|token, _| sessions.contains_key(token));
        s.members.retain(|(_, user), _| user != id);
        s.api_keys.retain(|_, k| k.user_id != id);
        s.bans.remove(id);
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
            .organizations(self)
            .api_keys(self)
            .user_directory(self)
            .audit_log(self)
            .oidc_clients(self)
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

impl Store {
    /// Whether the organization keeps an owner once `user_id`'s membership becomes
    /// `roles` (`None`: removed).
    fn keeps_owner(&self, organization_id: &str, user_id: &str, roles: Option<&[String]>) -> bool {
        let others = self
            .members
            .values()
            .any(|m| m.organization_id == organization_id && m.user_id != user_id && m.is_owner());
        others || roles.is_some_and(|r| r.iter().any(|r| r == super::OWNER_ROLE))
    }
}

/// `list` sorted by creation time, then by `id`.
fn by_creation<T>(mut list: Vec<T>, key: impl Fn(&T) -> (OffsetDateTime, String)) -> Vec<T> {
    list.sort_by_cached_key(key);
    list
}

#[async_trait]
impl OrganizationStore for MemoryAdapter {
    async fn create_organization(
        &self,
        organization: &Organization,
        owner: &Member,
    ) -> Result<(), AdapterError> {
        let mut s = self.lock();
        Self::require_user(&s, &owner.user_id)?;
        if s.organizations
            .values()
            .any(|o| o.slug == organization.slug)
        {
            return Err(AdapterError::Conflict(format!(
                "an organization has the slug {:?}",
                organization.slug
            )));
        }
        if s.organizations.contains_key(&organization.id) {
            return Err(AdapterError::Conflict(format!(
                "an organization has the id {:?}",
                organization.id
            )));
        }
        s.organizations
            .insert(organization.id.clone(), organization.clone());
        let member = Member {
            organization_id: organization.id.clone(),
            ..owner.clone()
        };
        s.members
            .insert((organization.id.clone(), member.user_id.clone()), member);
        Ok(())
    }

    async fn get_organization(&self, id: &str) -> Result<Option<Organization>, AdapterError> {
        Ok(self.lock().organizations.get(id).cloned())
    }

    async fn get_organization_by_slug(
        &self,
        slug: &str,
    ) -> Result<Option<Organization>, AdapterError> {
        Ok(self
            .lock()
            .organizations
            .values()
            .find(|o| o.slug == slug)
            .cloned())
    }

    async fn update_organization(&self, organization: &Organization) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if s.organizations
            .values()
            .any(|o| o.slug == organization.slug && o.id != organization.id)
        {
            return Err(AdapterError::Conflict(format!(
                "an organization has the slug {:?}",
                organization.slug
            )));
        }
        let Some(o) = s.organizations.get_mut(&organization.id) else {
            return Ok(false);
        };
        o.name.clone_from(&organization.name);
        o.slug.clone_from(&organization.slug);
        Ok(true)
    }

    async fn delete_organization(&self, id: &str) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if s.organizations.remove(id).is_none() {
            return Ok(false);
        }
        s.members.retain(|(org, _), _| org != id);
        s.teams.retain(|_, t| t.organization_id != id);
        s.invitations
            .retain(|_, i| i.organization_id.as_deref() != Some(id));
        s.session_orgs.retain(|_, org| org != id);
        s.api_keys
            .retain(|_, k| k.organization_id.as_deref() != Some(id));
        Ok(true)
    }

    async fn list_organizations_of_user(
        &self,
        user_id: &str,
    ) -> Result<Vec<(Organization, Member)>, AdapterError> {
        let s = self.lock();
        let list = s
            .members
            .values()
            .filter(|m| m.user_id == user_id)
            .filter_map(|m| {
                let o = s.organizations.get(&m.organization_id)?;
                Some((o.clone(), m.clone()))
            })
            .collect();
        Ok(by_creation(list, |(o, _)| (o.created_at, o.id.clone())))
    }

    async fn get_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<Member>, AdapterError> {
        Ok(self
            .lock()
            .members
            .get(&(organization_id.to_owned(), user_id.to_owned()))
            .cloned())
    }

    async fn list_members(&self, organization_id: &str) -> Result<Vec<Member>, AdapterError> {
        let list = self
            .lock()
            .members
            .values()
            .filter(|m| m.organization_id == organization_id)
            .cloned()
            .collect();
        Ok(by_creation(list, |m| (m.created_at, m.user_id.clone())))
    }

    async fn add_member(&self, member: &Member) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        Self::require_user(&s, &member.user_id)?;
        if !s.organizations.contains_key(&member.organization_id) {
            return Err(AdapterError::Conflict(format!(
                "no organization {:?}",
                member.organization_id
            )));
        }
        let key = (member.organization_id.clone(), member.user_id.clone());
        if s.members.contains_key(&key) {
            return Ok(false);
        }
        s.members.insert(key, member.clone());
        Ok(true)
    }

    async fn set_member_roles(
        &self,
        organization_id: &str,
        user_id: &str,
        roles: &[String],
    ) -> Result<MemberChange, AdapterError> {
        let mut s = self.lock();
        let key = (organization_id.to_owned(), user_id.to_owned());
        if !s.members.contains_key(&key) {
            return Ok(MemberChange::NotMember);
        }
        if !s.keeps_owner(organization_id, user_id, Some(roles)) {
            return Ok(MemberChange::LastOwner);
        }
        if let Some(m) = s.members.get_mut(&key) {
            m.roles = roles.to_vec();
        }
        Ok(MemberChange::Done)
    }

    async fn set_member_teams(
        &self,
        organization_id: &str,
        user_id: &str,
        teams: &[String],
    ) -> Result<MemberChange, AdapterError> {
        let mut s = self.lock();
        match s
            .members
            .get_mut(&(organization_id.to_owned(), user_id.to_owned()))
        {
            Some(m) => {
                m.teams = teams.to_vec();
                Ok(MemberChange::Done)
            }
            None => Ok(MemberChange::NotMember),
        }
    }

    async fn remove_member(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<MemberChange, AdapterError> {
        let mut s = self.lock();
        let key = (organization_id.to_owned(), user_id.to_owned());
        if !s.members.contains_key(&key) {
            return Ok(MemberChange::NotMember);
        }
        if !s.keeps_owner(organization_id, user_id, None) {
            return Ok(MemberChange::LastOwner);
        }
        s.members.remove(&key);
        let Store {
            sessions,
            session_orgs,
            ..
        } = &mut *s;
        session_orgs.retain(|token, org| {
            org != organization_id || sessions.get(token).is_none_or(|x| x.user_id != user_id)
        });
        Ok(MemberChange::Done)
    }

    async fn create_team(&self, team: &Team) -> Result<(), AdapterError> {
        let mut s = self.lock();
        if !s.organizations.contains_key(&team.organization_id) {
            return Err(AdapterError::Conflict(format!(
                "no organization {:?}",
                team.organization_id
            )));
        }
        if s.teams.values().any(|t| {
            t.id == team.id || (t.organization_id == team.organization_id && t.name == team.name)
        }) {
            return Err(AdapterError::Conflict(format!(
                "the organization has a team {:?}",
                team.name
            )));
        }
        s.teams.insert(team.id.clone(), team.clone());
        Ok(())
    }

    async fn list_teams(&self, organization_id: &str) -> Result<Vec<Team>, AdapterError> {
        let list = self
            .lock()
            .teams
            .values()
            .filter(|t| t.organization_id == organization_id)
            .cloned()
            .collect();
        Ok(by_creation(list, |t| (t.created_at, t.id.clone())))
    }

    async fn delete_team(
        &self,
        organization_id: &str,
        team_id: &str,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if s.teams
            .get(team_id)
            .is_none_or(|t| t.organization_id != organization_id)
        {
            return Ok(false);
        }
        s.teams.remove(team_id);
        for m in s.members.values_mut() {
            if m.organization_id == organization_id {
                m.teams.retain(|t| t != team_id);
            }
        }
        Ok(true)
    }

    async fn create_invitation(&self, invitation: &Invitation) -> Result<(), AdapterError> {
        let mut s = self.lock();
        if let Some(org) = &invitation.organization_id
            && !s.organizations.contains_key(org)
        {
            return Err(AdapterError::Conflict(format!("no organization {org:?}")));
        }
        if s.invitations.contains_key(&invitation.id) {
            return Err(AdapterError::Conflict(format!(
                "an invitation has the id {:?}",
                invitation.id
            )));
        }
        s.invitations
            .insert(invitation.id.clone(), invitation.clone());
        Ok(())
    }

    async fn get_invitation(&self, id: &str) -> Result<Option<Invitation>, AdapterError> {
        Ok(self.lock().invitations.get(id).cloned())
    }

    async fn get_invitation_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<Invitation>, AdapterError> {
        Ok(self
            .lock()
            .invitations
            .values()
            .find(|i| i.token_hash == token_hash)
            .cloned())
    }

    async fn list_invitations(
        &self,
        organization_id: Option<&str>,
    ) -> Result<Vec<Invitation>, AdapterError> {
        let list = self
            .lock()
            .invitations
            .values()
            .filter(|i| i.organization_id.as_deref() == organization_id)
            .cloned()
            .collect();
        Ok(by_creation(list, |i| (i.created_at, i.id.clone())))
    }

    async fn list_invitations_for_email(
        &self,
        email: &str,
    ) -> Result<Vec<Invitation>, AdapterError> {
        let list = self
            .lock()
            .invitations
            .values()
            .filter(|i| i.email == email && i.status == InvitationStatus::Pending)
            .cloned()
            .collect();
        Ok(by_creation(list, |i| (i.created_at, i.id.clone())))
    }

    async fn accept_invitation(
        &self,
        id: &str,
        user_id: &str,
        at: OffsetDateTime,
    ) -> Result<InvitationAcceptance, AdapterError> {
        let mut s = self.lock();
        let Some(invitation) = s.invitations.get(id).cloned() else {
            return Ok(InvitationAcceptance::NotFound);
        };
        if invitation.status != InvitationStatus::Pending {
            return Ok(InvitationAcceptance::Closed);
        }
        if at >= invitation.expires {
            return Ok(InvitationAcceptance::Expired);
        }
        Self::require_user(&s, user_id)?;
        let mut already_member = false;
        if let Some(org) = &invitation.organization_id {
            let key = (org.clone(), user_id.to_owned());
            already_member = s.members.contains_key(&key);
            if !already_member {
                s.members.insert(
                    key,
                    Member {
                        organization_id: org.clone(),
                        user_id: user_id.to_owned(),
                        roles: invitation.roles.clone(),
                        teams: invitation.teams.clone(),
                        created_at: at,
                    },
                );
            }
        }
        let status = InvitationStatus::Accepted {
            user_id: user_id.to_owned(),
            at,
        };
        let invitation = Invitation {
            status: status.clone(),
            ..invitation
        };
        s.invitations.insert(id.to_owned(), invitation.clone());
        Ok(InvitationAcceptance::Accepted {
            invitation: Box::new(invitation),
            already_member,
        })
    }

    async fn revoke_invitation(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        match self.lock().invitations.get_mut(id) {
            Some(i) if i.status == InvitationStatus::Pending => {
                i.status = InvitationStatus::Revoked { at };
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn set_session_organization(
        &self,
        session_token: &str,
        organization_id: Option<&str>,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if !s.sessions.contains_key(session_token) {
            return Ok(false);
        }
        match organization_id {
            Some(org) => s
                .session_orgs
                .insert(session_token.to_owned(), org.to_owned()),
            None => s.session_orgs.remove(session_token),
        };
        Ok(true)
    }

    async fn get_session_organization(
        &self,
        session_token: &str,
    ) -> Result<Option<String>, AdapterError> {
        Ok(self.lock().session_orgs.get(session_token).cloned())
    }
}

#[async_trait]
impl ApiKeyStore for MemoryAdapter {
    async fn create_api_key(&self, key: &ApiKey) -> Result<(), AdapterError> {
        let mut s = self.lock();
        Self::require_user(&s, &key.user_id)?;
        if let Some(org) = &key.organization_id
            && !s.organizations.contains_key(org)
        {
            return Err(AdapterError::Conflict(format!("no organization {org:?}")));
        }
        if s.api_keys.contains_key(&key.id) {
            return Err(AdapterError::Conflict(format!(
                "an API key has the id {:?}",
                key.id
            )));
        }
        s.api_keys.insert(key.id.clone(), key.clone());
        Ok(())
    }

    async fn get_api_key(&self, id: &str) -> Result<Option<ApiKey>, AdapterError> {
        Ok(self.lock().api_keys.get(id).cloned())
    }

    async fn list_api_keys(&self, owner: ApiKeyOwner<'_>) -> Result<Vec<ApiKey>, AdapterError> {
        let list = self
            .lock()
            .api_keys
            .values()
            .filter(|k| match owner {
                ApiKeyOwner::User(user) => k.user_id == user && k.organization_id.is_none(),
                ApiKeyOwner::Organization(org) => k.organization_id.as_deref() == Some(org),
            })
            .cloned()
            .collect();
        Ok(by_creation(list, |k| (k.created_at, k.id.clone())))
    }

    async fn revoke_api_key(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError> {
        match self.lock().api_keys.get_mut(id) {
            Some(k) if k.revoked_at.is_none() => {
                k.revoked_at = Some(at);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn record_api_key_use(&self, id: &str, at: OffsetDateTime) -> Result<(), AdapterError> {
        if let Some(k) = self.lock().api_keys.get_mut(id)
            && k.last_used_at.is_none_or(|t| t < at)
        {
            k.last_used_at = Some(at);
        }
        Ok(())
    }
}

#[async_trait]
impl UserDirectoryStore for MemoryAdapter {
    async fn search_users(&self, query: &UserQuery) -> Result<UserPage, AdapterError> {
        let s = self.lock();
        let text = query.text.as_deref().map(str::to_lowercase);
        let contains = |field: &Option<String>, text: &str| {
            field
                .as_deref()
                .is_some_and(|f| f.to_lowercase().contains(text))
        };
        let mut users: Vec<&AdapterUser> = s
            .users
            .values()
            .filter(|u| {
                query
                    .after
                    .as_deref()
                    .is_none_or(|after| u.id.as_str() > after)
            })
            .filter(|u| {
                text.as_deref()
                    .is_none_or(|t| contains(&u.email, t) || contains(&u.name, t))
            })
            .filter(|u| {
                query.provider.as_deref().is_none_or(|p| {
                    s.accounts
                        .values()
                        .any(|a| a.provider == p && a.user_id.as_deref() == Some(&u.id))
                })
            })
            .filter(|u| {
                query
                    .organization_id
                    .as_deref()
                    .is_none_or(|o| s.members.contains_key(&(o.to_owned(), u.id.clone())))
            })
            .collect();
        users.sort_by(|a, b| a.id.cmp(&b.id));
        let limit = query.limit.min(MAX_USER_PAGE) as usize;
        let more = users.len() > limit;
        users.truncate(limit);
        let users: Vec<AdapterUser> = users.into_iter().cloned().collect();
        let next = more.then(|| users.last().map(|u| u.id.clone())).flatten();
        Ok(UserPage { users, next })
    }

    async fn set_user_ban(
        &self,
        user_id: &str,
        ban: Option<&UserBan>,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if !s.users.contains_key(user_id) {
            return Ok(false);
        }
        match ban {
            Some(ban) => s.bans.insert(user_id.to_owned(), ban.clone()),
            None => s.bans.remove(user_id),
        };
        Ok(true)
    }

    async fn get_user_ban(&self, user_id: &str) -> Result<Option<UserBan>, AdapterError> {
        Ok(self.lock().bans.get(user_id).cloned())
    }
}

#[async_trait]
impl AuditLogStore for MemoryAdapter {
    async fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError> {
        Ok(self.lock().audit.last_key_value().map(|(_, r)| r.clone()))
    }

    async fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if s.audit.contains_key(&record.seq) {
            return Ok(false);
        }
        s.audit.insert(record.seq, record.clone());
        Ok(true)
    }

    async fn query_audit_records(
        &self,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AdapterError> {
        let s = self.lock();
        let limit = query.limit.min(MAX_AUDIT_PAGE) as usize;
        let matching = |r: &&AuditRecord| query.matches(r);
        Ok(if query.ascending {
            let start = query.cursor.map_or(0, |c| c.saturating_add(1));
            s.audit
                .range(start..)
                .map(|(_, r)| r)
                .filter(matching)
                .take(limit)
                .cloned()
                .collect()
        } else {
            let end = query.cursor.unwrap_or(u64::MAX);
            s.audit
                .range(..end)
                .rev()
                .map(|(_, r)| r)
                .filter(matching)
                .take(limit)
                .cloned()
                .collect()
        })
    }

    async fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError> {
        let mut s = self.lock();
        let kept = s.audit.split_off(&through.saturating_add(1));
        let removed = s.audit.len() as u64;
        s.audit = kept;
        Ok(removed)
    }
}

#[async_trait]
impl OidcClientStore for MemoryAdapter {
    async fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        if s.oidc_clients.contains_key(&client.client_id) {
            return Ok(false);
        }
        s.oidc_clients
            .insert(client.client_id.clone(), client.clone());
        Ok(true)
    }

    async fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError> {
        Ok(self.lock().oidc_clients.get(client_id).cloned())
    }

    async fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError> {
        Ok(self.lock().oidc_clients.values().cloned().collect())
    }

    async fn update_oidc_client(
        &self,
        before: &StoredClient,
        after: &StoredClient,
    ) -> Result<bool, AdapterError> {
        let mut s = self.lock();
        match s.oidc_clients.get_mut(&before.client_id) {
            Some(stored) if stored == before => {
                *stored = StoredClient {
                    client_id: before.client_id.clone(),
                    ..after.clone()
                };
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
