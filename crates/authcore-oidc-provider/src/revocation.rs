//! Token revocation (RFC 7009, [`REVOCATION_PATH`](crate::REVOCATION_PATH)) and introspection
//! (RFC 7662, [`INTROSPECTION_PATH`](crate::INTROSPECTION_PATH)).

use std::sync::Arc;

use authcore::adapter::{AdapterError, AdapterUser, AppAccess};
use authcore_keys::unix_time;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::ProviderState;
use crate::client_auth::{ClientForm, authenticated_client};
use crate::dpop;
use crate::grant::{AccessTokenClaims, RefreshGrant};
use crate::responses::{json_response, no_store, token_error, unavailable};
use crate::single_use::{REFRESH_SALT, REVOKED, REVOKED_GRANT};

/// An access token that stands: its claims, and for a user's token the user, read with
/// their access to the client.
pub(crate) struct ActiveToken {
    /// The token's claims (shared with the memory of checked tokens).
    pub(crate) claims: Arc<AccessTokenClaims>,
    /// The user of a user's token; `None` for a client's own (`client_credentials`).
    pub(crate) user: Option<AdapterUser>,
}

impl ProviderState {
    /// `token` when it is an access token of this provider, unexpired and not revoked, and
    /// for a user's token, of a user who still exists, has not revoked the client's access
    /// and is still among its allowed users; the `503` answer when the revocation marks or
    /// the user cannot be read (refused rather than served on a guess).
    pub(crate) async fn active_access_token(
        &self,
        token: &str,
    ) -> Result<Option<ActiveToken>, Box<Response>> {
        let Some(claims) = self.access_token_claims(token) else {
            return Ok(None);
        };
        self.still_active(claims).await
    }

    /// [`active_access_token`](Self::active_access_token) for a token whose signature
    /// and expiry were checked: its claims.
    pub(crate) async fn still_active(
        &self,
        claims: Arc<AccessTokenClaims>,
    ) -> Result<Option<ActiveToken>, Box<Response>> {
        let Some(grant) = claims.grant.as_deref() else {
            // A client's own token: its own mark alone.
            return match self.marked(&[(REVOKED, &claims.jti)]).await? {
                true => Ok(None),
                false => Ok(Some(ActiveToken { claims, user: None })),
            };
        };
        // A user's token: void once revoked (itself or its grant), once the user is gone or
        // revoked the client's access.
        let marks = [(REVOKED, claims.jti.as_str()), (REVOKED_GRANT, grant)];
        let Some((user, access)) = self.unmarked_user(&claims, marks).await? else {
            return Ok(None);
        };
        let stands = crate::authorize::stands_in(access.as_ref(), claims.epoch);
        // And void once the user is no longer among the client's allowed users (removed
        // from the organization, the role or the group), for userinfo and introspection
        // alike, at once rather than at the token's expiry.
        let active = stands && self.still_admitted(&claims, &user).await?;
        Ok(active.then_some(ActiveToken {
            claims,
            user: Some(user),
        }))
    }

    /// Whether any of `marks` is set; the `503` answer when the store cannot say.
    async fn marked(&self, marks: &[(&str, &str)]) -> Result<bool, Box<Response>> {
        self.auth
            .config()
            .single_use()
            .any_marked(marks)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: revocations unreadable");
                unavailable("the revocations cannot be read")
            })
    }

    /// The user of a user's token (`claims`) with their access to its client, unless either
    /// of its two revocation `marks` is set (`None` then, as when the user is gone): in one
    /// read where the marks are kept in the users' database, else the marks, then the user
    /// with their access.
    async fn unmarked_user(
        &self,
        claims: &AccessTokenClaims,
        marks: [(&str, &str); 2],
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, Box<Response>> {
        if let Some(store) = self.users.app_access() {
            let single_use = self.auth.config().single_use();
            let read = single_use
                .user_with_app_access_unless_marked(store, &claims.sub, &claims.client_id, marks)
                .await;
            match read {
                Err(AdapterError::Unsupported(_)) => {}
                Ok(read) => return Ok(read),
                Err(e) => {
                    tracing::error!(error = %e, "oidc provider: revocations or the user unreadable");
                    return Err(unavailable("the user store failed"));
                }
            }
        }
        if self.marked(&marks).await? {
            return Ok(None);
        }
        self.user_with_app_access(&claims.sub, &claims.client_id)
            .await
    }

    /// Whether `user`, of a token, is still among its client's allowed users (always, for a
    /// client open to every user).
    async fn still_admitted(
        &self,
        claims: &AccessTokenClaims,
        user: &AdapterUser,
    ) -> Result<bool, Box<Response>> {
        // A client gone or disabled since: its tokens stand no longer.
        let client = match self.client(&claims.client_id).await {
            Ok(Some(client)) => client,
            Ok(None) => return Ok(false),
            Err(_) => return Err(unavailable("the client cannot be read")),
        };
        if !client.allowed_users().restricts() {
            return Ok(true);
        }
        self.admits(&client, user).await
    }
}

/// The access token named by `token` in a client's form (revocation, introspection): its
/// claims when it is active and the asking client's own (`None` for anyone else's: a client
/// learns nothing of other clients' tokens).
pub(crate) async fn own_token(
    s: &ProviderState,
    form: &ClientForm,
) -> Result<Option<Arc<AccessTokenClaims>>, Box<Response>> {
    let Some(token) = form.param("token") else {
        return Err(Box::new(token_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token is missing",
        )));
    };
    Ok(s.active_access_token(token)
        .await?
        .map(|active| active.claims)
        .filter(|c| c.client_id == form.client.id()))
}

/// `POST /oidc/revoke` (RFC 7009): a client revokes one of its access tokens, or one of its
/// refresh tokens and with it the whole grant (§2.1: the grant's access tokens too). The
/// answer is `200` whatever the token was (§2.2: nothing is learnt about other tokens); the
/// client must authenticate as at the token endpoint.
pub(crate) async fn revoke(
    State(s): State<ProviderState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    if let Some(refresh) = form
        .param("token")
        .and_then(|t| s.unseal::<RefreshGrant>(t, REFRESH_SALT))
        .filter(|r| r.grant.client_id == form.client.id())
    {
        s.revoke_grant(&refresh.grant_id).await;
        tracing::info!(client = %refresh.grant.client_id, user = %refresh.grant.sub, "oidc provider: grant revoked");
        s.auth
            .record_audit(
                authcore::audit::AuditEvent::new("oidc.grantRevoked")
                    .target(refresh.grant.sub.clone())
                    .with("clientId", refresh.grant.client_id.clone()),
            )
            .await;
        return no_store(StatusCode::OK.into_response());
    }
    let claims = match own_token(&s, &form).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    if let Some(claims) = claims {
        let left = claims.exp.saturating_sub(unix_time()).max(1).unsigned_abs();
        if let Err(e) = s
            .auth
            .config()
            .single_use()
            .mark(REVOKED, &claims.jti, std::time::Duration::from_secs(left))
            .await
        {
            tracing::error!(error = %e, "oidc provider: cannot revoke a token");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
        tracing::info!(client = %claims.client_id, user = %claims.sub, "oidc provider: token revoked");
        s.auth
            .record_audit(
                authcore::audit::AuditEvent::new("oidc.tokenRevoked")
                    .target(claims.sub.clone())
                    .with("clientId", claims.client_id.clone()),
            )
            .await;
    }
    no_store(StatusCode::OK.into_response())
}

/// `POST /oidc/introspect` (RFC 7662): what an access token of the asking client is, or
/// `{"active": false}` (for another client's token too).
pub(crate) async fn introspect(
    State(s): State<ProviderState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    let claims = match own_token(&s, &form).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    let body = match claims {
        Some(c) => {
            let mut body = json!({
                "active": true,
                "scope": c.scope,
                "client_id": c.client_id,
                "sub": c.sub,
                "token_type": dpop::token_type(c.cnf.as_ref()),
                "exp": c.exp,
                "iat": c.iat,
                "iss": c.iss,
                "aud": c.aud,
                "jti": c.jti,
            });
            // The key a bound token must be presented with (RFC 9449 §6.2).
            if let Some(cnf) = &c.cnf {
                body["cnf"] = json!(cnf);
            }
            body
        }
        None => json!({"active": false}),
    };
    no_store(json_response(StatusCode::OK, &body))
}
