//! Administrators' operations as `Auth` methods (see [`crate::admin`] for who the
//! administrators are): finding users, ending their sessions, bans, second-factor resets,
//! deletion, impersonation and the audit trail.

use http::HeaderValue;
use time::OffsetDateTime;

use super::AccountError;
use crate::actions::admin as ops;
use crate::actions::admin_clients as clients;
pub use crate::actions::admin_clients::{ClientInfo, ClientSecretOnce, NewClient};
use crate::adapter::{AdapterUser, AuditQuery, AuditRecord, UserBan, UserPage, UserQuery};
use crate::handler::Auth;
pub use ops::{SetupLink, SetupMethod, UserDetail};

/// An administrator at work: who acts, checked once per request
/// ([`Auth::admin_actor`]), which every administrator's method takes.
#[derive(Debug, Clone)]
pub struct AdminActor(pub(crate) ops::Actor);

impl AdminActor {
    /// The administrator's user id (for an API key, its maker's).
    pub fn user_id(&self) -> &str {
        &self.0.user_id
    }

    /// The id of the API key the administrator acts with, if one.
    pub fn api_key(&self) -> Option<&str> {
        self.0.api_key.as_deref()
    }
}

impl Auth {
    /// The administrator a request acts as: an `Authorization: Bearer` API key of the
    /// administrators' organization holding [`ADMIN_PERMISSION`](crate::admin::ADMIN_PERMISSION) (refused keys count
    /// against the client as wrong passwords do), else the signed-in administrator of the
    /// session cookie, who must not be impersonating anyone. `SessionRequired` for nobody,
    /// `Forbidden` for anyone else, `AdminOff` when administrators are not configured.
    pub async fn admin_actor(
        &self,
        parts: &http::request::Parts,
    ) -> Result<AdminActor, AccountError> {
        let c = &*self.config().inner;
        if c.admins.is_none() {
            return Err(AccountError::AdminOff);
        }
        let key = if parts.headers.contains_key(http::header::AUTHORIZATION) {
            match self.principal_of_request(parts).await {
                Ok(Some(principal)) if principal.api_key.is_some() => Some(principal),
                Ok(_) => return Err(AccountError::SessionRequired),
                Err(crate::organizations::KeyRefused::RateLimited { retry_after }) => {
                    return Err(AccountError::TooManyAttempts { retry_after });
                }
                Err(_) => return Err(AccountError::InvalidApiKey),
            }
        } else {
            None
        };
        let session = match key {
            Some(_) => None,
            None => self.current_session(&parts.uri, &parts.headers).await,
        };
        ops::actor(c, key, session).await.map(AdminActor)
    }

    /// Whether the user with `user_id` is an administrator; `false` for no such user.
    pub async fn is_admin(&self, user_id: &str) -> Result<bool, AccountError> {
        let c = &*self.config().inner;
        let Some(adapter) = c.adapter.as_deref() else {
            return Err(AccountError::NoAdapter);
        };
        match adapter.get_user(user_id).await? {
            Some(user) => ops::is_admin(c, &user).await,
            None => Ok(false),
        }
    }

    /// The ban that holds on the user now, if any (none while administrators are off): for
    /// hosts and the OpenID Provider, which refuse a banned user's tokens.
    pub async fn ban_of(&self, user_id: &str) -> Result<Option<UserBan>, AccountError> {
        Ok(crate::actions::bans::ban_of(&self.config().inner, user_id).await?)
    }

    /// Users matching `query` (text in the email or name, a provider, an organization),
    /// a page at a time.
    pub async fn admin_search_users(
        &self,
        actor: &AdminActor,
        query: &UserQuery,
    ) -> Result<UserPage, AccountError> {
        ops::search_users(&self.config().inner, &actor.0, query).await
    }

    /// Everything an administrator sees of user `user_id`.
    pub async fn admin_user(
        &self,
        actor: &AdminActor,
        user_id: &str,
    ) -> Result<UserDetail, AccountError> {
        ops::user_detail(&self.config().inner, &actor.0, user_id).await
    }

    /// Makes a user with `email` (and `name`), with the single-use link that sets up
    /// their account ([`Auth::admin_setup_link`]): `None` when none could be made (no
    /// password accounts and no magic links, or no site URL), which the log says.
    pub async fn admin_create_user(
        &self,
        actor: &AdminActor,
        email: &str,
        name: Option<&str>,
    ) -> Result<(AdapterUser, Option<SetupLink>), AccountError> {
        ops::create_user(&self.config().inner, &actor.0, email, name).await
    }

    /// A new single-use link with which user `user_id` sets up their account: with
    /// password accounts, the form that sets their password (as a reset link, it ends
    /// their sessions); else a magic link that signs them in once. Mailed to them when an
    /// email provider sends, and returned either way; it expires after
    /// [`Admins::setup_link_lifetime`](crate::admin::Admins::setup_link_lifetime) (a magic
    /// link, after its provider's `maxAge`). `PasswordsOff` when there is neither way.
    pub async fn admin_setup_link(
        &self,
        actor: &AdminActor,
        user_id: &str,
    ) -> Result<SetupLink, AccountError> {
        ops::setup_link(&self.config().inner, &actor.0, user_id).await
    }

    /// Ends every session of the user; how many database sessions ended.
    pub async fn admin_end_sessions(
        &self,
        actor: &AdminActor,
        user_id: &str,
    ) -> Result<u64, AccountError> {
        ops::end_sessions(&self.config().inner, &actor.0, user_id).await
    }

    /// Bans the user for `reason` until `until` (or until lifted): they cannot sign in
    /// anywhere, their sessions end, applications' tokens for them are void and their API
    /// keys are refused.
    pub async fn admin_ban(
        &self,
        actor: &AdminActor,
        user_id: &str,
        reason: &str,
        until: Option<OffsetDateTime>,
    ) -> Result<UserBan, AccountError> {
        ops::ban(&self.config().inner, &actor.0, user_id, reason, until).await
    }

    /// The OpenID Provider's clients made at run time, ordered by id, without their
    /// secrets (which are not stored) or their hashes.
    pub async fn admin_clients(&self, actor: &AdminActor) -> Result<Vec<ClientInfo>, AccountError> {
        clients::list(&self.config().inner, &actor.0).await
    }

    /// Makes a client of the OpenID Provider: its secret (for a confidential client)
    /// comes back here once and is stored only as its SHA-256. `ClientIdTaken` for the id
    /// of a configured or stored client, `InvalidValue` for a value that is not valid or a
    /// client the OpenID Provider's check refuses
    /// ([`Admins::client_check`](crate::admin::Admins::client_check)).
    pub async fn admin_create_client(
        &self,
        actor: &AdminActor,
        new: &NewClient,
    ) -> Result<(ClientInfo, Option<ClientSecretOnce>), AccountError> {
        clients::create(&self.config().inner, &actor.0, new).await
    }

    /// Replaces the client's secret: the old one stops working at once; the new one
    /// comes back here once. A change made to the client meanwhile (its disabling) is
    /// kept: the store's update is conditional.
    pub async fn admin_rotate_client_secret(
        &self,
        actor: &AdminActor,
        client_id: &str,
    ) -> Result<ClientSecretOnce, AccountError> {
        clients::rotate_secret(&self.config().inner, &actor.0, client_id).await
    }

    /// Disables (`disable`) or enables the client: a disabled client's requests and
    /// tokens are refused by the provider.
    pub async fn admin_set_client_disabled(
        &self,
        actor: &AdminActor,
        client_id: &str,
        disable: bool,
    ) -> Result<ClientInfo, AccountError> {
        clients::set_disabled(&self.config().inner, &actor.0, client_id, disable).await
    }

    /// Lifts the user's ban.
    pub async fn admin_unban(&self, actor: &AdminActor, user_id: &str) -> Result<(), AccountError> {
        ops::unban(&self.config().inner, &actor.0, user_id).await
    }

    /// Removes the user's authenticator app and recovery codes (a user who lost them).
    pub async fn admin_reset_two_factor(
        &self,
        actor: &AdminActor,
        user_id: &str,
    ) -> Result<(), AccountError> {
        ops::reset_two_factor(&self.config().inner, &actor.0, user_id).await
    }

    /// Deletes the user, as their own deletion does.
    pub async fn admin_delete_user(
        &self,
        actor: &AdminActor,
        user_id: &str,
    ) -> Result<(), AccountError> {
        ops::delete_user(&self.config().inner, &actor.0, user_id).await
    }

    /// Signs the administrator of the request to `uri` with `headers` in as user `user_id`
    /// to help them: the `Set-Cookie` values of a session of the user that ends after
    /// [`Admins::impersonation`](crate::admin::Admins::impersonation) at most, marked as an impersonation (it may make no
    /// sensitive change, and its pages say so). Never of another administrator.
    pub async fn admin_impersonate(
        &self,
        actor: &AdminActor,
        uri: &http::Uri,
        headers: &http::HeaderMap,
        user_id: &str,
    ) -> Result<Vec<HeaderValue>, AccountError> {
        let source = self
            .session_source(uri, headers)
            .map_err(|_| AccountError::SessionRequired)?;
        let c = &*self.config().inner;
        let cookies = ops::impersonate(c, &actor.0, &source.url, &source.cookies, user_id).await?;
        Ok(header_values(cookies))
    }

    /// Ends the impersonation that the session of the request to `uri` with `headers` is:
    /// the `Set-Cookie` values that sign it out. `NotFound` when it is none.
    pub async fn end_impersonation(
        &self,
        uri: &http::Uri,
        headers: &http::HeaderMap,
    ) -> Result<Vec<HeaderValue>, AccountError> {
        let source = self
            .session_source(uri, headers)
            .map_err(|_| AccountError::SessionRequired)?;
        let me = self
            .current_session(uri, headers)
            .await
            .ok_or(AccountError::SessionRequired)?;
        let c = &*self.config().inner;
        let cookies = ops::end_impersonation(c, &me, &source.url, &source.cookies).await?;
        Ok(header_values(cookies))
    }

    /// The audit records matching `query`, for an administrator.
    pub async fn admin_audit(
        &self,
        actor: &AdminActor,
        query: &AuditQuery,
    ) -> Result<Vec<AuditRecord>, AccountError> {
        ops::audit_records(&self.config().inner, &actor.0, query).await
    }
}

/// The `Set-Cookie` values of `cookies`.
fn header_values(cookies: Vec<crate::cookies::SetCookie>) -> Vec<HeaderValue> {
    cookies
        .iter()
        .filter_map(crate::cookies::SetCookie::header_value)
        .collect()
}
