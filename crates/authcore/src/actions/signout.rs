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
                let ended = deleted.as_ref().map(|s| {
                    (
                        s.user_id.clone(),
                        super::account::session_id(&s.session_token),
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
    let mut resp = RawResponse::redirect(ctx.callback_url.clone());
    resp.cookies = store.clean();
    Ok(resp)
}
