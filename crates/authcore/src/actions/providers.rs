//! `GET /providers` (spec §2.1): every provider with its sign-in and callback URLs.

use serde_json::{Map, Value};

use super::Ctx;
use crate::response::ResponseInternal;
use crate::types::PublicProvider;

pub(crate) fn public_providers(ctx: &Ctx<'_>) -> Vec<PublicProvider> {
    ctx.config
        .providers
        .iter()
        .map(|p| PublicProvider {
            id: p.id().to_owned(),
            name: p.name().to_owned(),
            kind: p.kind(),
            signin_url: ctx.auth_url(&format!("/signin/{}", p.id())),
            callback_url: ctx.auth_url(&format!("/callback/{}", p.id())),
        })
        .collect()
}

pub(crate) fn providers(ctx: &Ctx<'_>) -> ResponseInternal {
    let mut map = Map::new();
    for p in public_providers(ctx) {
        let id = p.id.clone();
        map.insert(id, serde_json::to_value(p).unwrap_or(Value::Null));
    }
    ResponseInternal::json(Value::Object(map))
}
