//! `GET /csrf` (Auth.js `renderPage` in `lib/pages/index.ts`).

use http::StatusCode;

use super::Ctx;
use crate::logger::WarningCode;
use crate::response::{RawBody, RawResponse};

/// The body, `{"csrfToken":"…"}`, serialised without building a `serde_json::Value`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct CsrfBody<'a> {
    csrf_token: &'a str,
}

pub(crate) fn csrf(ctx: &Ctx<'_>) -> RawResponse {
    if ctx.config.dangerous.skip_csrf_check {
        ctx.config.logger.warn(WarningCode::CsrfDisabled);
        return RawResponse {
            status: Some(StatusCode::NOT_FOUND),
            cookies: vec![ctx.cookies.csrf_token.clear()],
            ..Default::default()
        };
    }
    let body = serde_json::to_vec(&CsrfBody {
        csrf_token: &ctx.csrf_token,
    })
    // Serialising a struct of one string cannot fail.
    .unwrap_or_default();
    RawResponse {
        body: Some(RawBody::JsonBytes(body.into())),
        ..Default::default()
    }
    .with_no_cache()
}
