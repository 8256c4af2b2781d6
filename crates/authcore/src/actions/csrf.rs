//! `GET /csrf` (spec §2.2).

use http::StatusCode;
use serde_json::json;

use super::Ctx;
use crate::logger::WarningCode;
use crate::response::ResponseInternal;

pub(crate) fn csrf(ctx: &Ctx<'_>) -> ResponseInternal {
    if ctx.config.dangerous.skip_csrf_check {
        ctx.config.logger.warn(WarningCode::CsrfDisabled);
        return ResponseInternal {
            status: Some(StatusCode::NOT_FOUND),
            cookies: vec![ctx.cookies.csrf_token.clear()],
            ..Default::default()
        };
    }
    ResponseInternal::json(json!({ "csrfToken": ctx.csrf_token })).with_no_cache()
}
