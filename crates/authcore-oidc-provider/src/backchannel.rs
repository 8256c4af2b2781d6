//! Back-channel logout (OpenID Connect Back-Channel Logout 1.0): the logout tokens posted
//! to the clients a session signed in to when it ends.

use std::sync::Arc;

use authcore::Auth;
use authcore_keys::unix_time;
use axum::body::Bytes;
use axum::http::header;

use crate::clients::{self};
use crate::config::OpenIdProvider;
use crate::grant::LogoutTokenClaims;
use crate::single_use::{SIGNED_IN_SESSION, SIGNED_IN_USER, client_key};
use crate::token::random_token;

/// How long a logout token's delivery may take.
pub(crate) const LOGOUT_DELIVERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Back-channel logout to the clients (OpenID Connect Back-Channel Logout 1.0): the
/// handler's [`Events`](authcore::callbacks::Events), told when sessions end before their
/// time (a sign-out, a session ended from the account page, "sign out everywhere", the
/// user's deletion). Each client with a `backchannel_logout_uri` that the session (or, when
/// all of the user's sessions ended, the user) signed in to is posted a logout token (§2.5)
/// in the background, within five seconds; a client that fails to take it is
/// logged, not retried.
#[derive(Debug, Clone)]
pub struct BackChannelLogout {
    pub(crate) provider: Arc<OpenIdProvider>,
    /// The handler these events are configured into, held weakly: it holds them.
    pub(crate) auth: Arc<std::sync::OnceLock<authcore::WeakAuth>>,
}

impl BackChannelLogout {
    /// The events of `provider`; [`attach`](Self::attach) gives them the handler once it is
    /// built (they read its single-use store).
    pub fn new(provider: Arc<OpenIdProvider>) -> Self {
        BackChannelLogout {
            provider,
            auth: Arc::default(),
        }
    }

    /// Gives the events the handler they were configured into (kept weakly: the handler
    /// holds the events, and both go when the server does).
    pub fn attach(&self, auth: &Auth) {
        let _ = self.auth.set(auth.downgrade());
    }

    /// The clients to tell, each with the session id to name (none: all the user's).
    pub(crate) async fn recipients<'a>(
        &'a self,
        auth: &Auth,
        user: &str,
        sessions: &'a [String],
        all: bool,
    ) -> Result<Vec<(&'a clients::Client, Option<&'a str>)>, authcore::BoxError> {
        let mut out = Vec::new();
        for client in self.provider.clients.iter() {
            if client.backchannel_logout_uri().is_none() {
                continue;
            }
            if all {
                if auth
                    .config()
                    .single_use()
                    .is_marked(SIGNED_IN_USER, &client_key(user, client.id()))
                    .await?
                {
                    out.push((client, None));
                }
                continue;
            }
            for sid in sessions {
                if auth
                    .config()
                    .single_use()
                    .is_marked(SIGNED_IN_SESSION, &client_key(sid, client.id()))
                    .await?
                {
                    out.push((client, Some(sid.as_str())));
                }
            }
        }
        Ok(out)
    }

    /// Posts a logout token for `user`'s session `sid` (none: all of them) to `client`'s
    /// `backchannel_logout_uri`, in the background.
    pub(crate) fn post_logout_token(
        &self,
        client: &clients::Client,
        user: &str,
        sid: Option<&str>,
    ) -> Result<(), authcore::BoxError> {
        let Some(uri) = client.backchannel_logout_uri() else {
            return Ok(());
        };
        let p = &self.provider;
        let jti = random_token().ok_or("no randomness")?;
        let claims = LogoutTokenClaims::new(&p.issuer, client.id(), user, sid, &jti, unix_time());
        let token = p
            .keys
            .sign_claims_as(client.id_token_alg(), Some("logout+jwt"), &claims)
            .map_err(|e| e.to_string())?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("logout_token", &token)
            .finish();
        let request = authcore::http::Request::post(uri)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Bytes::from(body))?;
        let client_id = client.id().to_owned();
        tokio::spawn(async move {
            let http = authcore::http_client::ReqwestClient::shared();
            match tokio::time::timeout(LOGOUT_DELIVERY_TIMEOUT, http.send(request)).await {
                Ok(Ok(r)) if r.status().is_success() => {
                    tracing::info!(client = %client_id, "oidc provider: back-channel logout delivered");
                }
                Ok(Ok(r)) => {
                    tracing::warn!(client = %client_id, status = r.status().as_u16(), "oidc provider: back-channel logout refused by the client");
                }
                Ok(Err(e)) => {
                    tracing::warn!(client = %client_id, error = %e, "oidc provider: back-channel logout not delivered");
                }
                Err(_) => {
                    tracing::warn!(client = %client_id, "oidc provider: back-channel logout timed out");
                }
            }
        });
        Ok(())
    }
}

#[authcore::async_trait]
impl authcore::callbacks::Events for BackChannelLogout {
    async fn sessions_ended(
        &self,
        message: authcore::callbacks::SessionsEndedEvent<'_>,
    ) -> Result<(), authcore::BoxError> {
        let Some(auth) = self.auth.get().and_then(authcore::WeakAuth::upgrade) else {
            return Ok(());
        };
        let recipients = self
            .recipients(&auth, message.user_id, message.session_ids, message.all)
            .await?;
        for (client, sid) in recipients {
            self.post_logout_token(client, message.user_id, sid)?;
        }
        Ok(())
    }

    /// The client whose access the user revoked ends the user's sessions with it (all of
    /// them: the logout token names the user, no session).
    async fn app_access_revoked(
        &self,
        message: authcore::callbacks::AppAccessRevokedEvent<'_>,
    ) -> Result<(), authcore::BoxError> {
        match self.provider.clients.get(message.client_id) {
            Some(client) => self.post_logout_token(client, message.user_id, None),
            None => Ok(()),
        }
    }
}
