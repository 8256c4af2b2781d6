//! Token revocation (RFC 7009, [`REVOCATION_PATH`](crate::REVOCATION_PATH)) and introspection
//! (RFC 7662, [`INTROSPECTION_PATH`](crate::INTROSPECTION_PATH)).

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
use crate::responses::{json_response, no_store, token_error};
use crate::single_use::{REFRESH_SALT, REVOKED, REVOKED_GRANT};

impl ProviderState {
    /// The claims of `token` when it is an access token of this provider, unexpired and not
    /// revoked; the `503` answer when the revocation marks cannot be read (refused rather
    /// than served on a guess).
    pub(crate) async fn active_access_token(
        &self,
        token: &str,
    ) -> Result<Option<AccessTokenClaims>, Box<Response>> {
        let Some(claims) = self.provider.verified_access_token(token) else {
            return Ok(None);
        };
        let revoked = match &claims.grant {
            Some(grant) => {
                self.auth
                    .config()
                    .single_use()
                    .is_marked(REVOKED_GRANT, grant)
                    .await
            }
            None => Ok(false),
        };
        let revoked = match revoked {
            Ok(false) => {
                self.auth
                    .config()
                    .single_use()
                    .is_marked(REVOKED, &claims.jti)
                    .await
            }
            other => other,
        };
        match revoked {
            Ok(false) if claims.grant.is_some() => {
                // A user's token: void once the user revoked the client's access.
                let stands = self
                    .epoch_stands(&claims.sub, &claims.client_id, claims.epoch)
                    .await?;
                // And void once the user is no longer among the client's allowed users
                // (removed from the organization, the role or the group), for userinfo and
                // introspection alike, at once rather than at the token's expiry.
                Ok((stands && self.still_admitted(&claims).await?).then_some(claims))
            }
            Ok(false) => Ok(Some(claims)),
            Ok(true) => Ok(None),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: revocations unreadable");
                Err(Box::new(StatusCode::SERVICE_UNAVAILABLE.into_response()))
            }
        }
    }

    /// Whether the user of a token is still among its client's allowed users (always,
    /// for a client open to every user); a user gone is not.
    async fn still_admitted(&self, claims: &AccessTokenClaims) -> Result<bool, Box<Response>> {
        // A client gone or disabled since: its tokens stand no longer.
        let client = match self.client(&claims.client_id).await {
            Ok(Some(client)) => client,
            Ok(None) => return Ok(false),
            Err(_) => return Err(Box::new(StatusCode::SERVICE_UNAVAILABLE.into_response())),
        };
        if !client.allowed_users().restricts() {
            return Ok(true);
        }
        match self.users.get_user(&claims.sub).await {
            Ok(Some(user)) => self.admits(&client, &user).await,
            Ok(None) => Ok(false),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: user read failed");
                Err(Box::new(StatusCode::SERVICE_UNAVAILABLE.into_response()))
            }
        }
    }
}

/// The access token named by `token` in a client's form (revocation, introspection): its
/// claims when it is active and the asking client's own (`None` for anyone else's: a client
/// learns nothing of other clients' tokens).
pub(crate) async fn own_token(
    s: &ProviderState,
    form: &ClientForm,
) -> Result<Option<AccessTokenClaims>, Box<Response>> {
    let Some(token) = form.param("token") else {
        return Err(Box::new(token_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token is missing",
        )));
    };
    Ok(s.active_access_token(token)
        .await?
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
            if let Some(cnf) = c.cnf {
                body["cnf"] = json!(cnf);
            }
            body
        }
        None => json!({"active": false}),
    };
    no_store(json_response(StatusCode::OK, &body))
}
