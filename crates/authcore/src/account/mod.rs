//! Account management for a signed-in user (beyond Auth.js, which leaves it to the app): the
//! ways a user signs in, unlinking one without removing the last, deleting a passkey, and
//! deleting the user. Linking another provider while signed in needs no API: a sign-in with
//! it while the session cookie is present links it (Auth.js `handleLoginOrRegister` in
//! `lib/actions/callback/handle-login.ts`).
//!
//! The reads take the user id of the session (`session.user.id` from a session callback,
//! or the `sub` of the JWT): authorising the caller is the host's job. The sensitive
//! changes ([`SensitiveOperation`]) take the [`CurrentSession`] of the request instead
//! ([`Auth::current_session`]), and refuse it unless its sign-in is recent
//! ([`AccountError::ReauthenticationRequired`]). The same functions as JSON routes for the request's own user, CSRF-checked: [`AccountRoute`] and
//! [`Auth::handle_account`], mounted by the framework integrations.
//!
//! ```
//! # async fn demo(auth: authcore::Auth, req: http::Request<()>) -> Result<(), authcore::account::AccountError> {
//! let Some(me) = auth.current_session(req.uri(), req.headers()).await else {
//!     return Ok(()); // signed out
//! };
//! let methods = auth.sign_in_methods(&me.user_id).await?;
//! if let Some(github) = methods.accounts.iter().find(|a| a.provider == "github") {
//!     // Refused with `ReauthenticationRequired` unless `me` signed in recently, and with
//!     // `LastSignInMethod` when it is the only way left.
//!     auth.unlink_account(&me, &github.provider, &github.provider_account_id).await?;
//! }
//! # Ok(()) }
//! ```

mod admin;
mod admin_routes;
mod audit;
mod organizations;
pub(crate) mod routes;
#[cfg(feature = "two-factor")]
mod two_factor;

pub use admin::{
    AdminActor, ClientInfo, ClientSecretOnce, NewClient, SetupLink, SetupMethod, UserDetail,
};
pub use admin_routes::AdminRoute;
pub use audit::AuditError;
pub use organizations::{
    InvitationSpec, KeyRefused, MemberInfo, Membership, NewApiKey, OrganizationAccess, Principal,
    SentInvitation,
};
pub use routes::AccountRoute;

use crate::actions::account as ops;
pub use crate::actions::account::{
    AccountError, AppInfo, CurrentSession, LinkedAccount, MAX_PASSKEY_NAME_CHARS, Passkey,
    SensitiveOperation, SessionInfo, SignInMethods,
};
use crate::handler::Auth;

impl Auth {
    /// Whether `csrf_token` (the `csrfToken` a form or JSON body of the host's own route
    /// sent, from `GET <basePath>/csrf`) matches the CSRF cookie of the request to `uri`
    /// with `headers`: the double-submit check of Auth.js's own POSTs (constant time), for
    /// the host's state-changing routes such as account management.
    pub async fn verify_csrf(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        csrf_token: &str,
    ) -> bool {
        let Ok(source) = self.session_source(uri, headers) else {
            return false;
        };
        let c = &*self.config().inner;
        let cookie = source
            .cookies
            .get(&c.cookies(source.is_https()).csrf_token.name);
        crate::csrf::check_or_create(cookie, &c.secret_string, true, Some(csrf_token)).verified
    }

    /// The signed-in user of a request to `uri` with `headers` (whose id the account
    /// functions take): the database session's user, or the JWT's `sub`. `None` when
    /// signed out, expired, or on any failure.
    pub async fn current_session(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Option<CurrentSession> {
        let source = self.session_source(uri, headers).ok()?;
        ops::current_session(&self.config().inner, &source.url, &source.cookies).await
    }

    /// The signed-in user's access token at `provider`, refreshed first when it is due
    /// ([`OAuthProvider::refresh_access_token`]), with the `Set-Cookie` values the route's
    /// answer must carry (a JWT session that was refreshed has a new cookie): from the
    /// session token's claims with JWT sessions, from the `accounts` row with database
    /// sessions. `None` when signed out or without a token for that provider.
    ///
    /// [`OAuthProvider::refresh_access_token`]: crate::providers::OAuthProvider::refresh_access_token
    pub async fn access_token(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        provider: &str,
    ) -> Option<(String, Vec<http::HeaderValue>)> {
        let read = self
            .read_session(uri, headers, &crate::session_read::ReadOptions::default())
            .await
            .ok()?;
        read.session.as_ref()?;
        let c = &*self.config().inner;
        let token = match &c.adapter {
            Some(adapter) if c.session_strategy == crate::config::SessionStrategy::Database => {
                let me = self.current_session(uri, headers).await?;
                let accounts = adapter
                    .linked_accounts()?
                    .list_accounts_by_user_id(&me.user_id)
                    .await
                    .ok()?;
                accounts
                    .into_iter()
                    .find(|a| a.provider == provider)?
                    .access_token?
            }
            _ => {
                // The refreshed cookie if the read set one, else the request's.
                let source = self.session_source(uri, headers).ok()?;
                let spec = &c.cookies(source.is_https()).session_token;
                let set: Vec<&str> = read
                    .set_cookie
                    .iter()
                    .filter_map(|v| v.to_str().ok()?.split(';').next())
                    .collect();
                let refreshed = crate::cookies::RequestCookies::parse(set.iter().copied());
                let cookie = crate::cookies::SessionCookieStore::new(spec, &refreshed)
                    .value()
                    .or_else(|| {
                        crate::cookies::SessionCookieStore::new(spec, &source.cookies).value()
                    })?;
                let claims = c.decode_session(&cookie, &spec.name).ok()??;
                if claims.get("provider").and_then(|v| v.as_str()) != Some(provider) {
                    return None;
                }
                claims.get("access_token")?.as_str()?.to_owned()
            }
        };
        Some((token, read.set_cookie))
    }

    /// The user's database sessions (created, last seen, user agent, expiry), the one with
    /// id `current` marked.
    pub async fn sessions(
        &self,
        user_id: &str,
        current: Option<&str>,
    ) -> Result<Vec<SessionInfo>, AccountError> {
        ops::sessions(&self.config().inner, user_id, current).await
    }

    /// Signs one of the user's sessions out (by [`SessionInfo::id`]).
    pub async fn revoke_session(&self, user_id: &str, id: &str) -> Result<(), AccountError> {
        ops::revoke_session(&self.config().inner, user_id, id).await
    }

    /// Signs the user out everywhere but the session with id `keep` ("sign out everywhere
    /// else"; `None`: everywhere); how many database sessions ended. With JWT sessions and
    /// the revocation list ([`jwt_revocation`](crate::AuthConfigBuilder::jwt_revocation)),
    /// every JWT session signed in until now but `keep` (a [`CurrentSession::session_id`])
    /// is refused from its next read on; their number is unknown (0).
    pub async fn revoke_other_sessions(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AccountError> {
        ops::revoke_other_sessions(&self.config().inner, user_id, keep).await
    }

    /// The ways user `user_id` can sign in: linked accounts, passkeys and magic links.
    pub async fn sign_in_methods(&self, user_id: &str) -> Result<SignInMethods, AccountError> {
        ops::sign_in_methods(&self.config().inner, user_id).await
    }

    /// Unlinks one of the signed-in user's provider accounts; refused when it is the
    /// user's last way to sign in ([`SignInMethods::count`]), and unless `me` signed in
    /// recently ([`SensitiveOperation::UnlinkProvider`]).
    pub async fn unlink_account(
        &self,
        me: &CurrentSession,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AccountError> {
        ops::unlink_account(&self.config().inner, me, provider, provider_account_id).await
    }

    /// Deletes one of the signed-in user's passkeys (the authenticator and the account the
    /// passkey provider linked for it); refused when it is the user's last way to sign in,
    /// and unless `me` signed in recently ([`SensitiveOperation::RemovePasskey`]).
    pub async fn delete_passkey(
        &self,
        me: &CurrentSession,
        credential_id: &str,
    ) -> Result<(), AccountError> {
        ops::delete_passkey(&self.config().inner, me, credential_id).await
    }

    /// Names one of the user's passkeys (trimmed; an empty name clears it).
    pub async fn rename_passkey(
        &self,
        user_id: &str,
        credential_id: &str,
        name: &str,
    ) -> Result<(), AccountError> {
        ops::rename_passkey(&self.config().inner, user_id, credential_id, name).await
    }

    /// The applications the user gave access to through authcore as an OpenID Provider
    /// ("apps with access"), by client id; none when the adapter keeps no app access.
    pub async fn apps_with_access(&self, user_id: &str) -> Result<Vec<AppInfo>, AccountError> {
        ops::apps(&self.config().inner, user_id).await
    }

    /// Revokes the signed-in user's access for application `client_id`
    /// ([`AppInfo::client_id`]): the consent is forgotten and the tokens the application
    /// holds for the user are void from their next use (refresh, userinfo, introspection).
    /// [`AccountError::NotFound`] when the user has no access for it; refused unless `me`
    /// signed in recently ([`SensitiveOperation::RevokeAppAccess`]).
    pub async fn revoke_app_access(
        &self,
        me: &CurrentSession,
        client_id: &str,
    ) -> Result<(), AccountError> {
        ops::revoke_app(&self.config().inner, me, client_id).await
    }

    /// Changes the signed-in user's password ([`AuthConfigBuilder::password_accounts`]):
    /// `current` must be their password when they have one (a user without one sets a
    /// first), `new` must meet the policy; every other session of the user ends and the
    /// user is told ([`SecurityChange::PasswordChanged`]). Refused unless `me` signed in
    /// recently ([`SensitiveOperation::ChangePassword`]); wrong current passwords are
    /// counted per user under the sign-in limit `credentials_per_identifier`.
    ///
    /// [`AuthConfigBuilder::password_accounts`]: crate::AuthConfigBuilder::password_accounts
    /// [`SecurityChange::PasswordChanged`]: crate::callbacks::SecurityChange::PasswordChanged
    #[cfg(feature = "passwords")]
    pub async fn change_password(
        &self,
        me: &CurrentSession,
        current: &str,
        new: &str,
    ) -> Result<(), AccountError> {
        crate::actions::password::change_password(&self.config().inner, me, current, new).await
    }

    /// Starts a change of the signed-in user's email address: a link mailed to `new_email`
    /// makes it the account's, and the old address is then told
    /// ([`SecurityChange::EmailChanged`]). An address that is another account's is mailed a
    /// notice instead, with the same answer. Refused unless `me` signed in recently
    /// ([`SensitiveOperation::ChangeEmail`]).
    ///
    /// [`SecurityChange::EmailChanged`]: crate::callbacks::SecurityChange::EmailChanged
    #[cfg(feature = "passwords")]
    pub async fn change_email(
        &self,
        me: &CurrentSession,
        new_email: &str,
    ) -> Result<(), AccountError> {
        crate::actions::password::request_email_change(&self.config().inner, me, new_email).await
    }

    /// Deletes the signed-in user with their accounts, sessions, passkeys and unused magic
    /// links (one transaction on the SQL adapters); refused unless `me` signed in recently
    /// ([`SensitiveOperation::DeleteAccount`]).
    pub async fn delete_user(&self, me: &CurrentSession) -> Result<(), AccountError> {
        ops::delete_user(&self.config().inner, me).await
    }
}
