//! `POST /signin[/:provider]` (spec §2.5).

use super::Ctx;
use crate::error::AuthError;
use crate::providers::Provider;
use crate::response::ResponseInternal;

pub(crate) async fn signin(ctx: &Ctx<'_>) -> Result<ResponseInternal, AuthError> {
    ctx.require_csrf("signin")?;
    match ctx.provider {
        // Credentials (and WebAuthn) sign in through their callback; go to the built-in page.
        None | Some(Provider::Credentials(_)) => {
            Ok(ResponseInternal::redirect(ctx.auth_url("/signin")))
        }
    }
}
