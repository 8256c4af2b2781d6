//! The debug channel around an adapter (Auth.js `adapterErrorHandler` in `lib/init.ts`):
//! every call is logged as `adapter_<method>` with its arguments before it runs. It lives
//! with the logger (above the adapter layer) so that adapters never depend on logging.
//!
//! Auth.js logs the arguments verbatim. authcore does not put secrets in logs, so session
//! tokens, verification tokens and an account's OAuth tokens are written as `[redacted]`;
//! ids, emails and provider names stay, as they are what a developer debugs with.
//!
//! Installed by [`AuthConfigBuilder::build`](crate::AuthConfigBuilder::build) only when
//! the debug channel is on, so it costs nothing otherwise.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Logger;
use crate::adapter::{
    Adapter, AdapterError, AdapterMethod, AdapterSession, AdapterUser, AppAccess, JwtRevocation,
    NewUser, SessionActivity, TwoFactor, UpstreamSession, UserUpdate, VerificationToken,
};
use crate::types::{Account, Authenticator, iso_string as iso};

const REDACTED: &str = "[redacted]";

/// Logs each call, then delegates to the wrapped adapter.
pub(crate) struct DebugAdapter {
    inner: Arc<dyn Adapter>,
    logger: Arc<dyn Logger>,
}

impl DebugAdapter {
    pub(crate) fn wrap(inner: Arc<dyn Adapter>, logger: Arc<dyn Logger>) -> Arc<dyn Adapter> {
        Arc::new(DebugAdapter { inner, logger })
    }

    fn log(&self, method: AdapterMethod, args: Value) {
        let message = format!("adapter_{}", method.name());
        self.logger.debug(&message, &json!({ "args": args }));
    }
}

/// An account as Auth.js would log it, with its OAuth tokens redacted.
fn account_args(a: &Account) -> Value {
    let redact = |t: &Option<String>| t.as_ref().map(|_| REDACTED);
    json!({
        "userId": a.user_id,
        "type": a.kind,
        "provider": a.provider,
        "providerAccountId": a.provider_account_id,
        "access_token": redact(&a.access_token),
        "refresh_token": redact(&a.refresh_token),
        "id_token": redact(&a.id_token),
        "expires_at": a.expires_at,
        "scope": a.scope,
        "token_type": a.token_type,
    })
}

#[async_trait]
impl Adapter for DebugAdapter {
    fn supports(&self, method: AdapterMethod) -> bool {
        self.inner.supports(method)
    }

    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        self.log(
            AdapterMethod::CreateUser,
            json!([{ "email": user.email, "name": user.name, "image": user.image }]),
        );
        self.inner.create_user(user).await
    }

    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.log(AdapterMethod::GetUser, json!([id]));
        self.inner.get_user(id).await
    }

    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.log(AdapterMethod::GetUserByEmail, json!([email]));
        self.inner.get_user_by_email(email).await
    }

    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        self.log(
            AdapterMethod::GetUserByAccount,
            json!([{ "provider": provider, "providerAccountId": provider_account_id }]),
        );
        self.inner
            .get_user_by_account(provider, provider_account_id)
            .await
    }

    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        self.log(AdapterMethod::UpdateUser, json!([{ "id": update.id }]));
        self.inner.update_user(update).await
    }

    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        self.log(AdapterMethod::DeleteUser, json!([id]));
        self.inner.delete_user(id).await
    }

    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        self.log(AdapterMethod::LinkAccount, json!([account_args(&account)]));
        self.inner.link_account(account).await
    }

    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::UnlinkAccount,
            json!([{ "provider": provider, "providerAccountId": provider_account_id }]),
        );
        self.inner
            .unlink_account(provider, provider_account_id)
            .await
    }

    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        self.log(
            AdapterMethod::CreateSession,
            json!([{
                "sessionToken": REDACTED,
                "userId": session.user_id,
                "expires": iso(session.expires),
            }]),
        );
        self.inner.create_session(session).await
    }

    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        self.log(AdapterMethod::GetSessionAndUser, json!([REDACTED]));
        self.inner.get_session_and_user(session_token).await
    }

    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.log(
            AdapterMethod::UpdateSession,
            json!([{ "sessionToken": REDACTED, "expires": iso(expires) }]),
        );
        self.inner.update_session(session_token, expires).await
    }

    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.log(AdapterMethod::DeleteSession, json!([REDACTED]));
        self.inner.delete_session(session_token).await
    }

    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::CreateVerificationToken,
            json!([{
                "identifier": token.identifier,
                "token": REDACTED,
                "expires": iso(token.expires),
            }]),
        );
        self.inner.create_verification_token(token).await
    }

    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        self.log(
            AdapterMethod::UseVerificationToken,
            json!([{ "identifier": identifier, "token": REDACTED }]),
        );
        self.inner.use_verification_token(identifier, token).await
    }

    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        self.log(
            AdapterMethod::GetAccount,
            json!([provider_account_id, provider]),
        );
        self.inner.get_account(provider_account_id, provider).await
    }

    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.log(AdapterMethod::GetAuthenticator, json!([credential_id]));
        self.inner.get_authenticator(credential_id).await
    }

    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        self.log(
            AdapterMethod::CreateAuthenticator,
            json!([{
                "credentialID": authenticator.credential_id,
                "userId": authenticator.user_id,
                "providerAccountId": authenticator.provider_account_id,
            }]),
        );
        self.inner.create_authenticator(authenticator).await
    }

    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        self.log(AdapterMethod::ListAuthenticatorsByUserId, json!([user_id]));
        self.inner.list_authenticators_by_user_id(user_id).await
    }

    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.log(
            AdapterMethod::UpdateAuthenticatorCounter,
            json!([credential_id, counter]),
        );
        self.inner
            .update_authenticator_counter(credential_id, counter)
            .await
    }

    // authcore's extensions: logged by name with their non-secret arguments.

    async fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError> {
        self.log(AdapterMethod::ListAccountsByUserId, json!([user_id]));
        self.inner.list_accounts_by_user_id(user_id).await
    }

    async fn update_account(&self, account: &Account) -> Result<bool, AdapterError> {
        self.log(
            AdapterMethod::UpdateAccount,
            json!([{ "provider": account.provider, "providerAccountId": account.provider_account_id }]),
        );
        self.inner.update_account(account).await
    }

    async fn list_sessions_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<SessionActivity>, AdapterError> {
        self.log(AdapterMethod::ListSessionsByUserId, json!([user_id]));
        self.inner.list_sessions_by_user_id(user_id).await
    }

    async fn record_session_activity(
        &self,
        session_token: &str,
        at: OffsetDateTime,
        user_agent: Option<&str>,
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::RecordSessionActivity,
            json!([REDACTED, iso(at)]),
        );
        self.inner
            .record_session_activity(session_token, at, user_agent)
            .await
    }

    async fn record_session_sign_in(
        &self,
        session_token: &str,
        sign_in: &crate::types::SignInInfo,
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::RecordSessionSignIn,
            json!([REDACTED, sign_in.amr, sign_in.auth_time]),
        );
        self.inner
            .record_session_sign_in(session_token, sign_in)
            .await
    }

    async fn get_session_sign_in(
        &self,
        session_token: &str,
    ) -> Result<Option<crate::types::SignInInfo>, AdapterError> {
        self.log(AdapterMethod::GetSessionSignIn, json!([REDACTED]));
        self.inner.get_session_sign_in(session_token).await
    }

    async fn grant_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> Result<AppAccess, AdapterError> {
        self.log(
            AdapterMethod::GrantAppAccess,
            json!([user_id, client_id, scopes, iso(at)]),
        );
        self.inner
            .grant_app_access(user_id, client_id, client_name, scopes, at)
            .await
    }

    async fn get_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<AppAccess>, AdapterError> {
        self.log(AdapterMethod::GetAppAccess, json!([user_id, client_id]));
        self.inner.get_app_access(user_id, client_id).await
    }

    async fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError> {
        self.log(AdapterMethod::ListAppAccess, json!([user_id]));
        self.inner.list_app_access(user_id).await
    }

    async fn revoke_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        at: OffsetDateTime,
    ) -> Result<bool, AdapterError> {
        self.log(
            AdapterMethod::RevokeAppAccess,
            json!([user_id, client_id, iso(at)]),
        );
        self.inner.revoke_app_access(user_id, client_id, at).await
    }

    async fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::RecordUpstreamSession,
            json!([
                session.provider,
                REDACTED,
                session.user_id,
                session.session_token.as_ref().map(|_| REDACTED),
                iso(session.expires)
            ]),
        );
        self.inner.record_upstream_session(session).await
    }

    async fn take_upstream_sessions(
        &self,
        provider: &str,
        sid: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<UpstreamSession>, AdapterError> {
        self.log(
            AdapterMethod::TakeUpstreamSessions,
            json!([provider, REDACTED, iso(now)]),
        );
        self.inner.take_upstream_sessions(provider, sid, now).await
    }

    async fn delete_sessions_by_user_id(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AdapterError> {
        self.log(AdapterMethod::DeleteSessionsByUserId, json!([user_id]));
        self.inner.delete_sessions_by_user_id(user_id, keep).await
    }

    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::RevokeJwtSessions,
            json!([user_id, iso(before), keep]),
        );
        self.inner.revoke_jwt_sessions(user_id, before, keep).await
    }

    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError> {
        self.log(AdapterMethod::GetJwtRevocation, json!([user_id]));
        self.inner.get_jwt_revocation(user_id).await
    }

    async fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError> {
        self.log(AdapterMethod::DeleteAuthenticator, json!([credential_id]));
        self.inner.delete_authenticator(credential_id).await
    }

    async fn rename_authenticator(
        &self,
        credential_id: &str,
        name: Option<&str>,
    ) -> Result<bool, AdapterError> {
        self.log(
            AdapterMethod::RenameAuthenticator,
            json!([credential_id, name]),
        );
        self.inner.rename_authenticator(credential_id, name).await
    }

    async fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError> {
        self.log(AdapterMethod::GetTwoFactor, json!([user_id]));
        self.inner.get_two_factor(user_id).await
    }

    async fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::SetTwoFactor,
            json!([{ "userId": two_factor.user_id, "totpSecret": REDACTED }]),
        );
        self.inner.set_two_factor(two_factor).await
    }

    async fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError> {
        self.log(AdapterMethod::DeleteTwoFactor, json!([user_id]));
        self.inner.delete_two_factor(user_id).await
    }

    async fn replace_recovery_codes(
        &self,
        user_id: &str,
        code_hashes: &[String],
    ) -> Result<(), AdapterError> {
        self.log(
            AdapterMethod::ReplaceRecoveryCodes,
            json!([user_id, code_hashes.len()]),
        );
        self.inner
            .replace_recovery_codes(user_id, code_hashes)
            .await
    }

    async fn use_recovery_code(
        &self,
        user_id: &str,
        code_hash: &str,
    ) -> Result<bool, AdapterError> {
        self.log(AdapterMethod::UseRecoveryCode, json!([user_id, REDACTED]));
        self.inner.use_recovery_code(user_id, code_hash).await
    }

    async fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError> {
        self.log(AdapterMethod::CountRecoveryCodes, json!([user_id]));
        self.inner.count_recovery_codes(user_id).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;
    use crate::adapter::MemoryAdapter;

    #[derive(Default)]
    struct Lines(Mutex<Vec<(String, Value)>>);
    impl Logger for Arc<Lines> {
        fn debug(&self, message: &str, metadata: &Value) {
            self.0
                .lock()
                .unwrap()
                .push((message.to_owned(), metadata.clone()));
        }
    }

    /// Every method reaches the wrapped adapter (none is left to the trait's `Unsupported`
    /// default while `supports` says yes).
    #[tokio::test]
    async fn passes_every_method_through() {
        let adapter = DebugAdapter {
            inner: Arc::new(MemoryAdapter::new()),
            logger: Arc::new(Arc::new(Lines::default())),
        };
        crate::adapter::conformance::supports_agrees_with_methods(&adapter).await;
    }

    #[tokio::test]
    async fn logs_each_call_by_name_and_redacts_tokens() {
        let lines = Arc::new(Lines::default());
        let adapter = DebugAdapter::wrap(Arc::new(MemoryAdapter::new()), Arc::new(lines.clone()));
        let user = adapter
            .create_user(NewUser {
                email: Some("ada@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let expires = OffsetDateTime::now_utc() + time::Duration::hours(1);
        adapter
            .create_session(AdapterSession {
                session_token: "session-secret-value".into(),
                user_id: user.id.clone(),
                expires,
            })
            .await
            .unwrap();
        let found = adapter
            .get_session_and_user("session-secret-value")
            .await
            .unwrap();
        assert_eq!(
            found.unwrap().1.id,
            user.id,
            "calls still reach the adapter"
        );
        adapter
            .create_verification_token(VerificationToken {
                identifier: "ada@example.com".into(),
                token: "hashed-token-value".into(),
                expires,
            })
            .await
            .unwrap();

        let lines = lines.0.lock().unwrap();
        let names: Vec<&str> = lines.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "adapter_createUser",
                "adapter_createSession",
                "adapter_getSessionAndUser",
                "adapter_createVerificationToken"
            ]
        );
        assert_eq!(lines[0].1["args"][0]["email"], "ada@example.com");
        assert_eq!(lines[1].1["args"][0]["userId"], user.id.as_str());
        let all = serde_json::to_string(&*lines).unwrap();
        assert!(!all.contains("session-secret-value"), "{all}");
        assert!(!all.contains("hashed-token-value"), "{all}");
    }
}
