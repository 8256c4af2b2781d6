//! `POST /signout` (Auth.js `lib/actions/signout.ts`).

use super::Ctx;
use crate::callbacks::SignOutEvent;
use crate::cookies::SessionCookieStore;
use crate::error::AuthError;
use crate::response::RawResponse;

pub(crate) async fn signout(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    ctx.require_csrf("signout")?;
    let store = SessionCookieStore::new(&ctx.cookies.session_token, &ctx.req.cookies);
    let Some(token) = store.value() else {
        return Ok(RawResponse::redirect(ctx.callback_url.clone()));
    };
    // Where the user goes on to instead of the callback URL: the provider's sign-out.
    #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
    let mut at_provider: Option<String> = None;
    // The `signOut` event's result, unless the session could not be read or deleted (then
    // a `SignOutError` is logged); the cookie is cleared in every case.
    let event = if ctx.config.session_strategy == crate::config::SessionStrategy::Database
        && let Some(adapter) = &ctx.config.adapter
    {
        match adapter
            .delete_session(&ctx.config.stored_session_token(&token))
            .await
        {
            Ok(deleted) => {
                #[cfg(feature = "oauth")]
                if let Some(s) = &deleted {
                    at_provider = end_session_location(ctx, &**adapter, &s.user_id).await;
                }
                let ended = deleted.as_ref().map(|s| {
                    (
                        s.user_id.clone(),
                        crate::crypto::session_id(&s.session_token),
                    )
                });
                let deleted = deleted.and_then(|s| serde_json::to_value(s).ok());
                let events = &ctx.config.events;
                let result = events
                    .sign_out(SignOutEvent::Session(deleted.as_ref()))
                    .await;
                if let Some((user, id)) = ended {
                    super::account::sessions_ended(ctx.config, &user, &[id], false).await;
                }
                Ok(result)
            }
            Err(e) => Err(AuthError::SignOutError {
                source: Box::new(e),
            }),
        }
    } else {
        match ctx
            .config
            .decode_session(&token, &ctx.cookies.session_token.name)
        {
            Ok(claims) => {
                let events = &ctx.config.events;
                let result = events.sign_out(SignOutEvent::Token(claims.as_ref())).await;
                let str_claim = |k: &str| {
                    claims
                        .as_ref()
                        .and_then(|c| c.get(k))
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                };
                if let (Some(user), Some(sid)) = (str_claim("sub"), str_claim("sid")) {
                    super::account::sessions_ended(ctx.config, &user, &[sid], false).await;
                }
                Ok(result)
            }
            Err(source) => Err(AuthError::SignOutError { source }),
        }
    };
    match event {
        Ok(r) => ctx.event_result("signOut", r),
        Err(e) => ctx.log_error(&e),
    }
    let mut resp = RawResponse::redirect(at_provider.unwrap_or_else(|| ctx.callback_url.clone()));
    resp.cookies = store.clean();
    Ok(resp)
}

/// The end-session request of a provider set to
/// [`sign_out_at_provider`](crate::providers::OAuthProvider::sign_out_at_provider) at which
/// user `user_id` holds an ID token (OpenID Connect RP-Initiated Logout 1.0 §2: the token
/// as `id_token_hint`, the client id, the callback URL as `post_logout_redirect_uri`);
/// `None` when there is none, or it cannot be made (logged): the sign-out here stands.
#[cfg(feature = "oauth")]
async fn end_session_location(
    ctx: &Ctx<'_>,
    adapter: &dyn crate::adapter::Adapter,
    user_id: &str,
) -> Option<String> {
    use crate::providers::Provider;
    let providers: Vec<&crate::providers::OAuthProvider> = ctx
        .config
        .providers
        .iter()
        .filter_map(|p| match p {
            Provider::OAuth(o) if o.sign_out_at_provider && o.issuer.is_some() => Some(&**o),
            _ => None,
        })
        .collect();
    if providers.is_empty() {
        return None;
    }
    let listed = match crate::adapter::capability(adapter.linked_accounts(), "LinkedAccountStore") {
        Ok(store) => store.list_accounts_by_user_id(user_id).await,
        Err(e) => Err(e),
    };
    let accounts = match listed {
        Ok(a) => a,
        Err(e) => {
            ctx.log_error(&AuthError::SignOutError {
                source: Box::new(e),
            });
            return None;
        }
    };
    for p in providers {
        let (Some(id_token), Some(issuer)) = (
            accounts
                .iter()
                .find(|a| a.provider == p.id)
                .and_then(|a| a.id_token.as_deref()),
            p.issuer.as_deref(),
        ) else {
            continue;
        };
        let client = p.client();
        let discovered = crate::oauth::discover(
            &*client,
            &p.caches,
            issuer,
            p.well_known.as_deref(),
            p.tenant_issuer,
        )
        .await;
        let end = match discovered {
            Ok(m) => m.end_session_endpoint.clone(),
            Err(e) => {
                tracing::warn!(provider = %p.id, error = %e, "sign-out: the provider's metadata is unreadable; signed out here only");
                None
            }
        };
        let Some(mut url) = end.and_then(|e| url::Url::parse(&e).ok()) else {
            continue;
        };
        url.query_pairs_mut()
            .append_pair("id_token_hint", id_token)
            .append_pair("client_id", &p.client_id)
            .append_pair("post_logout_redirect_uri", &ctx.callback_url);
        return Some(url.into());
    }
    None
}
