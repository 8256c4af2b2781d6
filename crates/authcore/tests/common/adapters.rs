//! Adapters for tests of what authcore does with an adapter that lacks a capability, or
//! whose database is down.

use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, Capabilities, JwtRevocation,
    JwtRevocationStore, MemoryAdapter, NewUser, UserUpdate, VerificationToken,
};
use authcore::types::{Account, Authenticator};
use time::OffsetDateTime;

/// The memory adapter with only the calls of Auth.js's adapter (and the capabilities a
/// test adds), or a database that is down: every call fails.
#[derive(Clone, Default)]
pub struct LimitedAdapter {
    inner: MemoryAdapter,
    down: Option<&'static str>,
    jwt_revocation: bool,
    user_directory: bool,
}

impl LimitedAdapter {
    /// The calls of Auth.js's adapter, no capability.
    pub fn core_only() -> Self {
        LimitedAdapter::default()
    }

    /// A database that is down: every call fails with `message`.
    pub fn down(message: &'static str) -> Self {
        LimitedAdapter {
            down: Some(message),
            ..LimitedAdapter::default()
        }
    }

    /// With the JWT revocation list ([`JwtRevocationStore`]).
    pub fn with_jwt_revocation(mut self) -> Self {
        self.jwt_revocation = true;
        self
    }

    /// With the memory adapter's user directory (`UserDirectoryStore`).
    pub fn with_user_directory(mut self) -> Self {
        self.user_directory = true;
        self
    }

    fn up(&self) -> Result<(), AdapterError> {
        match self.down {
            Some(message) => Err(AdapterError::Backend(message.into())),
            None => Ok(()),
        }
    }
}

#[authcore::async_trait]
impl Adapter for LimitedAdapter {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        self.up()?;
        self.inner.create_user(user).await
    }
    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.up()?;
        self.inner.get_user(id).await
    }
    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.up()?;
        self.inner.get_user_by_email(email).await
    }
    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        self.up()?;
        self.inner
            .get_user_by_account(provider, provider_account_id)
            .await
    }
    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        self.up()?;
        self.inner.update_user(update).await
    }
    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        self.up()?;
        self.inner.delete_user(id).await
    }
    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        self.up()?;
        self.inner.link_account(account).await
    }
    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        self.up()?;
        self.inner
            .unlink_account(provider, provider_account_id)
            .await
    }
    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        self.up()?;
        self.inner.create_session(session).await
    }
    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        self.up()?;
        self.inner.get_session_and_user(session_token).await
    }
    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.up()?;
        self.inner.update_session(session_token, expires).await
    }
    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.up()?;
        self.inner.delete_session(session_token).await
    }
    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        self.up()?;
        self.inner.create_verification_token(token).await
    }
    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        self.up()?;
        self.inner.use_verification_token(identifier, token).await
    }
    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        self.up()?;
        self.inner.get_account(provider_account_id, provider).await
    }
    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.up()?;
        self.inner.get_authenticator(credential_id).await
    }
    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        self.up()?;
        self.inner.create_authenticator(authenticator).await
    }
    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        self.up()?;
        self.inner.list_authenticators_by_user_id(user_id).await
    }
    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.up()?;
        self.inner
            .update_authenticator_counter(credential_id, counter)
            .await
    }

    fn capabilities(&self) -> Capabilities<'_> {
        let mut capabilities = Capabilities::none();
        if self.jwt_revocation {
            capabilities = capabilities.jwt_revocation(self);
        }
        if self.user_directory {
            capabilities = capabilities.user_directory(&self.inner);
        }
        capabilities
    }
}

#[authcore::async_trait]
impl JwtRevocationStore for LimitedAdapter {
    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError> {
        self.up()?;
        self.inner.revoke_jwt_sessions(user_id, before, keep).await
    }
    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError> {
        self.up()?;
        self.inner.get_jwt_revocation(user_id).await
    }
}
