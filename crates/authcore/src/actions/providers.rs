//! `GET /providers` (Auth.js `renderPage` in `lib/pages/index.ts`): every provider with its
//! sign-in and callback URLs.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::Ctx;
use crate::response::{RawBody, RawResponse};
use crate::types::PublicProvider;

pub(crate) fn public_providers(ctx: &Ctx<'_>) -> Vec<PublicProvider> {
    ctx.config
        .sign_in_providers()
        .map(|p| PublicProvider {
            id: p.id().to_owned(),
            name: p.name().to_owned(),
            kind: p.kind(),
            signin_url: ctx.auth_url(&format!("/signin/{}", p.id())),
            callback_url: ctx.auth_url(&format!("/callback/{}", p.id())),
        })
        .collect()
}

/// The body depends on the origin and the configuration alone: it is rendered once per
/// origin and kept with the origin's [`Site`](crate::site::Site).
pub(crate) fn providers(ctx: &Ctx<'_>) -> RawResponse {
    let body = ctx.req.url.site.providers_json.get_or_init(|| {
        let mut map = Map::new();
        for p in public_providers(ctx) {
            let id = p.id.clone();
            map.insert(id, serde_json::to_value(p).unwrap_or(Value::Null));
        }
        serde_json::to_vec(&map).map_or_else(|_| Bytes::from_static(b"{}"), Bytes::from)
    });
    RawResponse {
        body: Some(RawBody::JsonBytes(body.clone())),
        ..Default::default()
    }
}
