//! The suite itself: the memory adapter passes it, the checks of capabilities an adapter
//! lacks are skipped, and a broken adapter fails it naming the check.
#![allow(clippy::unwrap_used)]

use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, AuditLogStore, AuditQuery, AuditRecord,
    Capabilities, MemoryAdapter, NewUser, PasswordStore, UserGroupsStore, UserUpdate,
    VerificationToken,
};
use authcore::types::{Account, Authenticator};
use authcore_conformance::Options;
use time::OffsetDateTime;

#[tokio::test]
async fn memory_adapter_passes_conformance() {
    authcore_conformance::run_all(MemoryAdapter::new()).await;
}

#[tokio::test]
async fn memory_adapter_prunes_its_audit_log() {
    authcore_conformance::admin::audit_prune(&MemoryAdapter::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_rate_limit_store_passes_the_conformance_suite() {
    authcore_conformance::rate_limit::run_all(&authcore::ratelimit::MemoryRateLimitStore::default())
        .await;
}

/// The memory adapter with none of its capabilities (only the calls of Auth.js's adapter);
/// with `reusable_tokens` its verification tokens can be used twice; with `racy_stores` it
/// has a `PasswordStore`, a `UserGroupsStore` and an `AuditLogStore` that read, then write
/// (not atomic).
#[derive(Clone, Default)]
struct CoreOnly {
    inner: MemoryAdapter,
    reusable_tokens: bool,
    racy_stores: bool,
}

#[async_trait::async_trait]
impl Adapter for CoreOnly {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        self.inner.create_user(user).await
    }
    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.get_user(id).await
    }
    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.get_user_by_email(email).await
    }
    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner
            .get_user_by_account(provider, provider_account_id)
            .await
    }
    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.update_user(update).await
    }
    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        self.inner.delete_user(id).await
    }
    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        self.inner.link_account(account).await
    }
    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        self.inner
            .unlink_account(provider, provider_account_id)
            .await
    }
    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        self.inner.create_session(session).await
    }
    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        self.inner.get_session_and_user(session_token).await
    }
    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.inner.update_session(session_token, expires).await
    }
    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.inner.delete_session(session_token).await
    }
    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        self.inner.create_verification_token(token).await
    }
    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        let t = self.inner.use_verification_token(identifier, token).await?;
        if self.reusable_tokens
            && let Some(t) = &t
        {
            self.inner.create_verification_token(t.clone()).await?;
        }
        Ok(t)
    }
    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        self.inner.get_account(provider_account_id, provider).await
    }
    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.inner.get_authenticator(credential_id).await
    }
    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        self.inner.create_authenticator(authenticator).await
    }
    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        self.inner.list_authenticators_by_user_id(user_id).await
    }
    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.inner
            .update_authenticator_counter(credential_id, counter)
            .await
    }
    fn capabilities(&self) -> Capabilities<'_> {
        if self.racy_stores {
            Capabilities::none()
                .passwords(self)
                .user_groups(self)
                .audit_log(self)
        } else {
            Capabilities::none()
        }
    }
}

/// The memory adapter's stores, each write in steps with yields to the other tasks between.
#[async_trait::async_trait]
impl PasswordStore for CoreOnly {
    async fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError> {
        self.inner.get_password_hash(user_id).await
    }
    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError> {
        self.inner.set_password_hash(user_id, hash).await
    }
    async fn replace_password_hash(
        &self,
        user_id: &str,
        current: &str,
        new: &str,
    ) -> Result<bool, AdapterError> {
        let stored = self.inner.get_password_hash(user_id).await?;
        tokio::task::yield_now().await;
        if stored.as_deref() != Some(current) {
            return Ok(false);
        }
        self.inner.set_password_hash(user_id, new).await?;
        Ok(true)
    }
    async fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError> {
        self.inner.delete_password_hash(user_id).await
    }
}

#[async_trait::async_trait]
impl UserGroupsStore for CoreOnly {
    async fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError> {
        // Cleared, then a group added at a time (a row each, outside a transaction).
        self.inner.set_user_groups(user_id, &[]).await?;
        for group in groups {
            tokio::task::yield_now().await;
            let mut list = self.inner.get_user_groups(user_id).await?;
            list.push(group.clone());
            self.inner.set_user_groups(user_id, &list).await?;
        }
        Ok(())
    }
    async fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError> {
        self.inner.get_user_groups(user_id).await
    }
}

/// An audit log that looks whether a `seq` is taken, then appends: two appends of one
/// `seq` at once may both answer that they stored it.
#[async_trait::async_trait]
impl AuditLogStore for CoreOnly {
    async fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError> {
        self.inner.last_audit_record().await
    }
    async fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError> {
        let taken = self
            .inner
            .query_audit_records(&AuditQuery {
                cursor: record.seq.checked_sub(1),
                ascending: true,
                limit: 1,
                ..AuditQuery::default()
            })
            .await?
            .first()
            .is_some_and(|r| r.seq == record.seq);
        tokio::task::yield_now().await;
        if taken {
            return Ok(false);
        }
        // The memory store refuses the second; a store that overwrites would not.
        self.inner.append_audit_record(record).await?;
        Ok(true)
    }
    async fn query_audit_records(
        &self,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AdapterError> {
        self.inner.query_audit_records(query).await
    }
    async fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError> {
        self.inner.prune_audit_records(through).await
    }
}

/// An adapter without capabilities passes: their checks are skipped, none calls it.
#[tokio::test]
async fn missing_capabilities_are_skipped() {
    authcore_conformance::run_all(CoreOnly::default()).await;
}

/// An adapter whose tokens can be used twice must fail the suite, naming the check.
#[tokio::test]
#[should_panic(expected = "adapter conformance check 'verification_tokens' failed")]
async fn a_reusable_token_fails() {
    authcore_conformance::run_all(CoreOnly {
        reusable_tokens: true,
        ..CoreOnly::default()
    })
    .await;
}

fn racy_stores() -> CoreOnly {
    CoreOnly {
        racy_stores: true,
        ..CoreOnly::default()
    }
}

/// A password store whose compare-and-set reads, then writes, passes the sequential checks
/// and fails the race.
#[tokio::test]
#[should_panic(expected = "adapter conformance check 'password_replace_race' failed")]
async fn a_racy_password_replacement_fails() {
    authcore_conformance::passwords::run(&racy_stores(), &Options::default()).await;
}

/// A groups store that replaces a list group by group passes the sequential checks and
/// fails the race.
#[tokio::test]
#[should_panic(expected = "adapter conformance check 'user_groups_race' failed")]
async fn a_racy_group_replacement_fails() {
    authcore_conformance::user_groups::run(&racy_stores(), &Options::default()).await;
}

/// An audit log whose append looks, then writes, passes the sequential checks and fails the
/// race.
#[tokio::test]
#[should_panic(expected = "adapter conformance check 'audit_append_race' failed")]
async fn a_racy_audit_append_fails() {
    authcore_conformance::admin::run(&racy_stores(), &Options::default()).await;
}
