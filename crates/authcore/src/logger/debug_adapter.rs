//! The debug channel around an adapter (Auth.js `adapterErrorHandler` in `lib/init.ts`):
//! every call is logged as `adapter_<method>` with its arguments before it runs. It lives
//! with the logger (above the adapter layer) so that adapters never depend on logging.
//!
//! Auth.js logs the arguments verbatim. authcore does not put secrets in logs, so session
//! tokens, verification tokens and an account's OAuth tokens are written as `[redacted]`;
//! ids, emails and provider names stay, as they are what a developer debugs with.
//!
//! It decorates each capability: of the wrapped adapter's [`Capabilities`], each one present
//! is handed out as the logging wrapper's instead (`Capabilities::wrapped_by`), so a
//! capability is logged exactly when the adapter has it.
//!
//! Installed by [`AuthConfigBuilder::build`](crate::AuthConfigBuilder::build) only when
//! the debug channel is on, so it costs nothing otherwise.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Logger;
use crate::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, ApiKey, ApiKeyOwner, ApiKeyStore,
    AppAccess, AppAccessStore, AuditLogStore, AuditQuery, AuditRecord, Capabilities, Invitation,
    InvitationAcceptance, JwtRevocation, JwtRevocationStore, LinkedAccountStore, Member,
    MemberChange, NewUser, OidcClientStore, Organization, OrganizationStore, PasskeyStore,
    PasswordStore, SessionActivity, SessionActivityStore, SessionSignInStore, StoredClient, Team,
    TwoFactor, TwoFactorStore, UpstreamSession, UpstreamSessionStore, UserBan, UserDirectoryStore,
    UserGroupsStore, UserPage, UserQuery, UserUpdate, VerificationToken,
};
use crate::types::{Account, Authenticator, iso_string as iso};

const REDACTED: &str = "[redacted]";

/// Logs each call, then delegates to the wrapped adapter (or its capability).
pub(crate) struct DebugAdapter {
    inner: Arc<dyn Adapter>,
    logger: Arc<dyn Logger>,
}

impl DebugAdapter {
    pub(crate) fn wrap(inner: Arc<dyn Adapter>, logger: Arc<dyn Logger>) -> Arc<dyn Adapter> {
        Arc::new(DebugAdapter { inner, logger })
    }

    fn log(&self, method: &str, args: Value) {
        let message = format!("adapter_{method}");
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

/// Writes the `impl` of one capability trait for `DebugAdapter`: each method logs its
/// Auth.js name and arguments, then calls the same method of the wrapped adapter's
/// capability, which `via` (its accessor on `dyn Adapter`) hands out.
macro_rules! logged {
    (
        impl $trait:ident via $via:path {
            $(
                fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty
                    => $js:literal, $log:expr;
            )*
        }
        $($extra:tt)*
    ) => {
        #[async_trait]
        impl $trait for DebugAdapter {
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    self.log($js, $log);
                    match $via(&*self.inner) {
                        Some(inner) => inner.$name($($arg),*).await,
                        None => Err(AdapterError::Unsupported(stringify!($trait))),
                    }
                }
            )*
            $($extra)*
        }
    };
}

/// The adapter as a type, so that `logged!` names its accessors as paths
/// (`DynAdapter::two_factor`).
type DynAdapter = dyn Adapter;

/// The adapter itself, as the "capability" of its own calls, for `logged!`.
fn whole(adapter: &dyn Adapter) -> Option<&dyn Adapter> {
    Some(adapter)
}

logged! {
    impl Adapter via whole {
        fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError>
            => "createUser", json!([{ "email": user.email, "name": user.name, "image": user.image }]);
        fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError>
            => "getUser", json!([id]);
        fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError>
            => "getUserByEmail", json!([email]);
        fn get_user_by_account(&self, provider: &str, provider_account_id: &str) -> Result<Option<AdapterUser>, AdapterError>
            => "getUserByAccount", json!([{ "provider": provider, "providerAccountId": provider_account_id }]);
        fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError>
            => "updateUser", json!([{ "id": update.id }]);
        fn delete_user(&self, id: &str) -> Result<(), AdapterError>
            => "deleteUser", json!([id]);
        fn link_account(&self, account: Account) -> Result<(), AdapterError>
            => "linkAccount", json!([account_args(&account)]);
        fn unlink_account(&self, provider: &str, provider_account_id: &str) -> Result<(), AdapterError>
            => "unlinkAccount", json!([{ "provider": provider, "providerAccountId": provider_account_id }]);
        fn create_session(&self, session: AdapterSession) -> Result<AdapterSession, AdapterError>
            => "createSession", json!([{
                "sessionToken": REDACTED,
                "userId": session.user_id,
                "expires": iso(session.expires),
            }]);
        fn get_session_and_user(&self, session_token: &str) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError>
            => "getSessionAndUser", json!([REDACTED]);
        fn update_session(&self, session_token: &str, expires: OffsetDateTime) -> Result<Option<AdapterSession>, AdapterError>
            => "updateSession", json!([{ "sessionToken": REDACTED, "expires": iso(expires) }]);
        fn delete_session(&self, session_token: &str) -> Result<Option<AdapterSession>, AdapterError>
            => "deleteSession", json!([REDACTED]);
        fn create_verification_token(&self, token: VerificationToken) -> Result<(), AdapterError>
            => "createVerificationToken", json!([{
                "identifier": token.identifier,
                "token": REDACTED,
                "expires": iso(token.expires),
            }]);
        fn use_verification_token(&self, identifier: &str, token: &str) -> Result<Option<VerificationToken>, AdapterError>
            => "useVerificationToken", json!([{ "identifier": identifier, "token": REDACTED }]);
        fn get_account(&self, provider_account_id: &str, provider: &str) -> Result<Option<Account>, AdapterError>
            => "getAccount", json!([provider_account_id, provider]);
        fn get_authenticator(&self, credential_id: &str) -> Result<Option<Authenticator>, AdapterError>
            => "getAuthenticator", json!([credential_id]);
        fn create_authenticator(&self, authenticator: Authenticator) -> Result<Authenticator, AdapterError>
            => "createAuthenticator", json!([{
                "credentialID": authenticator.credential_id,
                "userId": authenticator.user_id,
                "providerAccountId": authenticator.provider_account_id,
            }]);
        fn list_authenticators_by_user_id(&self, user_id: &str) -> Result<Vec<Authenticator>, AdapterError>
            => "listAuthenticatorsByUserId", json!([user_id]);
        fn update_authenticator_counter(&self, credential_id: &str, counter: u64) -> Result<Option<Authenticator>, AdapterError>
            => "updateAuthenticatorCounter", json!([credential_id, counter]);
    }

    fn capabilities(&self) -> Capabilities<'_> {
        self.inner.capabilities().wrapped_by(self)
    }
}

logged! {
    impl LinkedAccountStore via DynAdapter::linked_accounts {
        fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError>
            => "listAccountsByUserId", json!([user_id]);
        fn update_account(&self, account: &Account) -> Result<bool, AdapterError>
            => "updateAccount", json!([{ "provider": account.provider, "providerAccountId": account.provider_account_id }]);
    }
}

logged! {
    impl SessionActivityStore via DynAdapter::session_activity {
        fn list_sessions_by_user_id(&self, user_id: &str) -> Result<Vec<SessionActivity>, AdapterError>
            => "listSessionsByUserId", json!([user_id]);
        fn record_session_activity(&self, session_token: &str, at: OffsetDateTime, user_agent: Option<&str>) -> Result<(), AdapterError>
            => "recordSessionActivity", json!([REDACTED, iso(at)]);
        fn delete_sessions_by_user_id(&self, user_id: &str, keep: Option<&str>) -> Result<u64, AdapterError>
            => "deleteSessionsByUserId", json!([user_id]);
    }
}

logged! {
    impl SessionSignInStore via DynAdapter::session_sign_in {
        fn record_session_sign_in(&self, session_token: &str, sign_in: &crate::types::SignInInfo) -> Result<(), AdapterError>
            => "recordSessionSignIn", json!([REDACTED, sign_in.amr, sign_in.auth_time]);
        fn get_session_sign_in(&self, session_token: &str) -> Result<Option<crate::types::SignInInfo>, AdapterError>
            => "getSessionSignIn", json!([REDACTED]);
    }
}

logged! {
    impl JwtRevocationStore via DynAdapter::jwt_revocation {
        fn revoke_jwt_sessions(&self, user_id: &str, before: OffsetDateTime, keep: Option<&str>) -> Result<(), AdapterError>
            => "revokeJwtSessions", json!([user_id, iso(before), keep]);
        fn get_jwt_revocation(&self, user_id: &str) -> Result<Option<JwtRevocation>, AdapterError>
            => "getJwtRevocation", json!([user_id]);
    }
}

logged! {
    impl PasskeyStore via DynAdapter::passkeys {
        fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError>
            => "deleteAuthenticator", json!([credential_id]);
        fn rename_authenticator(&self, credential_id: &str, name: Option<&str>) -> Result<bool, AdapterError>
            => "renameAuthenticator", json!([credential_id, name]);
    }
}

logged! {
    impl TwoFactorStore via DynAdapter::two_factor {
        fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError>
            => "getTwoFactor", json!([user_id]);
        fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError>
            => "setTwoFactor", json!([{ "userId": two_factor.user_id, "totpSecret": REDACTED }]);
        fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError>
            => "deleteTwoFactor", json!([user_id]);
        fn replace_recovery_codes(&self, user_id: &str, code_hashes: &[String]) -> Result<(), AdapterError>
            => "replaceRecoveryCodes", json!([user_id, code_hashes.len()]);
        fn use_recovery_code(&self, user_id: &str, code_hash: &str) -> Result<bool, AdapterError>
            => "useRecoveryCode", json!([user_id, REDACTED]);
        fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError>
            => "countRecoveryCodes", json!([user_id]);
    }
}

logged! {
    impl AppAccessStore via DynAdapter::app_access {
        fn grant_app_access(&self, user_id: &str, client_id: &str, client_name: &str, scopes: &[String], at: OffsetDateTime) -> Result<AppAccess, AdapterError>
            => "grantAppAccess", json!([user_id, client_id, scopes, iso(at)]);
        fn get_app_access(&self, user_id: &str, client_id: &str) -> Result<Option<AppAccess>, AdapterError>
            => "getAppAccess", json!([user_id, client_id]);
        fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError>
            => "listAppAccess", json!([user_id]);
        fn revoke_app_access(&self, user_id: &str, client_id: &str, at: OffsetDateTime) -> Result<bool, AdapterError>
            => "revokeAppAccess", json!([user_id, client_id, iso(at)]);
    }
}

logged! {
    impl UpstreamSessionStore via DynAdapter::upstream_sessions {
        fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError>
            => "recordUpstreamSession", json!([
                session.provider,
                REDACTED,
                session.user_id,
                session.session_token.as_ref().map(|_| REDACTED),
                iso(session.expires)
            ]);
        fn take_upstream_sessions(&self, provider: &str, sid: &str, now: OffsetDateTime) -> Result<Vec<UpstreamSession>, AdapterError>
            => "takeUpstreamSessions", json!([provider, REDACTED, iso(now)]);
    }
}

logged! {
    impl PasswordStore via DynAdapter::passwords {
        fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError>
            => "getPasswordHash", json!([user_id]);
        fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError>
            => "setPasswordHash", json!([user_id, REDACTED]);
        fn replace_password_hash(&self, user_id: &str, current: &str, new: &str) -> Result<bool, AdapterError>
            => "replacePasswordHash", json!([user_id, REDACTED, REDACTED]);
        fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError>
            => "deletePasswordHash", json!([user_id]);
    }
}

logged! {
    impl UserGroupsStore via DynAdapter::user_groups {
        fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError>
            => "setUserGroups", json!([user_id, groups]);
        fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError>
            => "getUserGroups", json!([user_id]);
    }
}

logged! {
    impl OrganizationStore via DynAdapter::organizations {
        fn create_organization(&self, organization: &Organization, owner: &Member) -> Result<(), AdapterError>
            => "createOrganization", json!([organization.id, organization.slug, owner.user_id]);
        fn get_organization(&self, id: &str) -> Result<Option<Organization>, AdapterError>
            => "getOrganization", json!([id]);
        fn get_organization_by_slug(&self, slug: &str) -> Result<Option<Organization>, AdapterError>
            => "getOrganizationBySlug", json!([slug]);
        fn update_organization(&self, organization: &Organization) -> Result<bool, AdapterError>
            => "updateOrganization", json!([organization.id, organization.slug]);
        fn delete_organization(&self, id: &str) -> Result<bool, AdapterError>
            => "deleteOrganization", json!([id]);
        fn list_organizations_of_user(&self, user_id: &str) -> Result<Vec<(Organization, Member)>, AdapterError>
            => "listOrganizationsOfUser", json!([user_id]);
        fn get_member(&self, organization_id: &str, user_id: &str) -> Result<Option<Member>, AdapterError>
            => "getMember", json!([organization_id, user_id]);
        fn list_members(&self, organization_id: &str) -> Result<Vec<Member>, AdapterError>
            => "listMembers", json!([organization_id]);
        fn add_member(&self, member: &Member) -> Result<bool, AdapterError>
            => "addMember", json!([member.organization_id, member.user_id, member.roles]);
        fn set_member_roles(&self, organization_id: &str, user_id: &str, roles: &[String]) -> Result<MemberChange, AdapterError>
            => "setMemberRoles", json!([organization_id, user_id, roles]);
        fn set_member_teams(&self, organization_id: &str, user_id: &str, teams: &[String]) -> Result<MemberChange, AdapterError>
            => "setMemberTeams", json!([organization_id, user_id, teams]);
        fn remove_member(&self, organization_id: &str, user_id: &str) -> Result<MemberChange, AdapterError>
            => "removeMember", json!([organization_id, user_id]);
        fn create_team(&self, team: &Team) -> Result<(), AdapterError>
            => "createTeam", json!([team.organization_id, team.id, team.name]);
        fn list_teams(&self, organization_id: &str) -> Result<Vec<Team>, AdapterError>
            => "listTeams", json!([organization_id]);
        fn delete_team(&self, organization_id: &str, team_id: &str) -> Result<bool, AdapterError>
            => "deleteTeam", json!([organization_id, team_id]);
        fn create_invitation(&self, invitation: &Invitation) -> Result<(), AdapterError>
            => "createInvitation", json!([invitation.id, invitation.organization_id, invitation.email, REDACTED]);
        fn get_invitation(&self, id: &str) -> Result<Option<Invitation>, AdapterError>
            => "getInvitation", json!([id]);
        fn get_invitation_by_token(&self, token_hash: &str) -> Result<Option<Invitation>, AdapterError>
            => "getInvitationByToken", json!([REDACTED]);
        fn list_invitations(&self, organization_id: Option<&str>) -> Result<Vec<Invitation>, AdapterError>
            => "listInvitations", json!([organization_id]);
        fn list_invitations_for_email(&self, email: &str) -> Result<Vec<Invitation>, AdapterError>
            => "listInvitationsForEmail", json!([email]);
        fn accept_invitation(&self, id: &str, user_id: &str, at: OffsetDateTime) -> Result<InvitationAcceptance, AdapterError>
            => "acceptInvitation", json!([id, user_id, iso(at)]);
        fn revoke_invitation(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError>
            => "revokeInvitation", json!([id, iso(at)]);
        fn set_session_organization(&self, session_token: &str, organization_id: Option<&str>) -> Result<bool, AdapterError>
            => "setSessionOrganization", json!([REDACTED, organization_id]);
        fn get_session_organization(&self, session_token: &str) -> Result<Option<String>, AdapterError>
            => "getSessionOrganization", json!([REDACTED]);
    }
}

logged! {
    impl ApiKeyStore via DynAdapter::api_keys {
        fn create_api_key(&self, key: &ApiKey) -> Result<(), AdapterError>
            => "createApiKey", json!([key.id, key.user_id, key.organization_id, key.permissions, REDACTED]);
        fn get_api_key(&self, id: &str) -> Result<Option<ApiKey>, AdapterError>
            => "getApiKey", json!([id]);
        fn list_api_keys(&self, owner: ApiKeyOwner<'_>) -> Result<Vec<ApiKey>, AdapterError>
            => "listApiKeys", json!([format!("{owner:?}")]);
        fn revoke_api_key(&self, id: &str, at: OffsetDateTime) -> Result<bool, AdapterError>
            => "revokeApiKey", json!([id, iso(at)]);
        fn record_api_key_use(&self, id: &str, at: OffsetDateTime) -> Result<(), AdapterError>
            => "recordApiKeyUse", json!([id, iso(at)]);
    }
}

logged! {
    impl UserDirectoryStore via DynAdapter::user_directory {
        fn search_users(&self, query: &UserQuery) -> Result<UserPage, AdapterError>
            => "searchUsers", json!([{
                "text": query.text,
                "provider": query.provider,
                "organizationId": query.organization_id,
                "after": query.after,
                "limit": query.limit,
            }]);
        fn set_user_ban(&self, user_id: &str, ban: Option<&UserBan>) -> Result<bool, AdapterError>
            => "setUserBan", json!([user_id, ban.map(|b| json!({
                "until": b.until.map(iso),
                "by": b.by,
            }))]);
        fn get_user_ban(&self, user_id: &str) -> Result<Option<UserBan>, AdapterError>
            => "getUserBan", json!([user_id]);
    }
}

logged! {
    impl AuditLogStore via DynAdapter::audit_log {
        fn last_audit_record(&self) -> Result<Option<AuditRecord>, AdapterError>
            => "lastAuditRecord", json!([]);
        fn append_audit_record(&self, record: &AuditRecord) -> Result<bool, AdapterError>
            => "appendAuditRecord", json!([{ "seq": record.seq, "kind": record.kind }]);
        fn query_audit_records(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AdapterError>
            => "queryAuditRecords", json!([{
                "kind": query.kind,
                "user": query.user,
                "cursor": query.cursor,
                "ascending": query.ascending,
                "limit": query.limit,
            }]);
        fn prune_audit_records(&self, through: u64) -> Result<u64, AdapterError>
            => "pruneAuditRecords", json!([through]);
    }
}

logged! {
    impl OidcClientStore via DynAdapter::oidc_clients {
        fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError>
            => "createOidcClient", json!([client.client_id, REDACTED]);
        fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError>
            => "getOidcClient", json!([client_id]);
        fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError>
            => "listOidcClients", json!([]);
        fn update_oidc_client(&self, before: &StoredClient, after: &StoredClient) -> Result<bool, AdapterError>
            => "updateOidcClient", json!([before.client_id, REDACTED, REDACTED]);
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

    /// The wrapper has a capability exactly when the wrapped adapter has it, and its calls
    /// reach the wrapped adapter's capability under the capability's method names.
    #[tokio::test]
    async fn decorates_each_capability_of_the_wrapped_adapter() {
        let lines = Arc::new(Lines::default());
        let adapter = DebugAdapter::wrap(Arc::new(MemoryAdapter::new()), Arc::new(lines.clone()));
        assert!(adapter.linked_accounts().is_some());
        assert!(adapter.session_activity().is_some());
        assert!(adapter.session_sign_in().is_some());
        assert!(adapter.jwt_revocation().is_some());
        assert!(adapter.passkeys().is_some());
        assert!(adapter.app_access().is_some());
        assert!(adapter.upstream_sessions().is_some());
        let two_factor = adapter.two_factor().unwrap();
        two_factor
            .replace_recovery_codes("u1", &["hash-1".to_owned()])
            .await
            .unwrap();
        assert_eq!(two_factor.count_recovery_codes("u1").await.unwrap(), 1);
        assert!(two_factor.use_recovery_code("u1", "hash-1").await.unwrap());
        let lines = lines.0.lock().unwrap();
        let names: Vec<&str> = lines.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "adapter_replaceRecoveryCodes",
                "adapter_countRecoveryCodes",
                "adapter_useRecoveryCode"
            ]
        );
        let all = serde_json::to_string(&*lines).unwrap();
        assert!(!all.contains("hash-1"), "{all}");
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
