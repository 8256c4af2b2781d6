//! RP-initiated logout (RP-Initiated Logout 1.0, [`LOGOUT_PATH`](crate::LOGOUT_PATH)) and the
//! way back to the client after it ([`LOGGED_OUT_PATH`](crate::LOGGED_OUT_PATH)).

use authcore::Auth;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::params::{Params, pairs, request_params};
use crate::responses::{no_store, redirect, shown_error};
use crate::single_use::{LOGOUT_SALT, LOGOUT_TTL_SECS};
use crate::{LOGGED_OUT_PATH, ProviderState};

/// `GET` / `POST /oidc/logout` (RP-Initiated Logout 1.0 §2): the client asks authcore to
/// sign the user out. The user confirms on authcore's sign-out page (a CSRF-checked form:
/// no page of another site can sign the user out), then goes to the client's registered
/// `post_logout_redirect_uri` with `state`, or stays at authcore. A redirect URI that is not
/// exactly registered, an `id_token_hint` not signed here or for another client, is refused
/// on a page of authcore's, never redirected to.
pub(crate) async fn logout(
    State(s): State<ProviderState>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let Some(params) = Params::unique(request_params(&method, &uri, &body)) else {
        return shown_error("a parameter is given more than once");
    };
    let param = |name: &str| params.get(name);
    let p = &s.provider;
    // The client the hint was issued to (expired hints are fine: §2 "need not be concerned
    // with whether the ID Token is expired"); it must be ours and agree with client_id.
    let hinted = match param("id_token_hint") {
        None => None,
        Some(hint) => {
            let mut validation = p.keys.validation();
            validation.set_issuer(&[&p.issuer]);
            validation.validate_exp = false;
            validation.validate_aud = false;
            validation.set_required_spec_claims(&["iss", "aud", "sub"]);
            // An ID token signed under the name `Ed25519` (RFC 9864), which the validation
            // cannot read: its signature checked, then what the validation asks of it.
            let verified = p
                .keys
                .verify::<Value>(hint, "JWT", &validation)
                .or_else(|| {
                    p.keys
                        .verify_ed25519_named::<Value>(hint, "JWT")
                        .filter(|c| {
                            c.get("iss").and_then(Value::as_str) == Some(p.issuer.as_str())
                                && c.get("aud").is_some()
                                && c.get("sub").is_some()
                        })
                });
            match verified {
                Some(claims) => claims.get("aud").and_then(Value::as_str).map(str::to_owned),
                None => return shown_error("the id_token_hint was not issued here"),
            }
        }
    };
    let client_id = match (hinted.as_deref(), param("client_id")) {
        (Some(a), Some(b)) if a != b => {
            return shown_error("client_id is not the id_token_hint's audience");
        }
        (a, b) => a.or(b),
    };
    let back = match param("post_logout_redirect_uri") {
        None => None,
        Some(target) => {
            let registered = client_id
                .and_then(|id| p.clients.get(id))
                .is_some_and(|c| c.has_post_logout_redirect_uri(target));
            if !registered {
                return shown_error(
                    "the post_logout_redirect_uri is not one registered for the client (give id_token_hint or client_id; they are compared exactly)",
                );
            }
            let mut way = serde_json::Map::new();
            way.insert("uri".into(), target.into());
            if let Some(state) = param("state") {
                way.insert("state".into(), state.into());
            }
            match s
                .auth
                .config()
                .jwt()
                .encode(&way, LOGOUT_SALT, LOGOUT_TTL_SECS)
            {
                Ok(sealed) => Some(sealed),
                Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
    };
    let after = match back {
        Some(sealed) => format!(
            "{LOGGED_OUT_PATH}?d={}",
            url::form_urlencoded::byte_serialize(sealed.as_bytes()).collect::<String>()
        ),
        None => "/".to_owned(),
    };
    no_store(redirect(&sign_out_location(&s.auth, &after)))
}

/// authcore's sign-out page, with `callbackUrl` set to `target`.
pub(crate) fn sign_out_location(auth: &Auth, target: &str) -> String {
    let config = auth.config();
    let mut location = config
        .pages()
        .sign_out
        .clone()
        .unwrap_or_else(|| format!("{}/signout", config.base_path()));
    location.push(if location.contains('?') { '&' } else { '?' });
    location.push_str("callbackUrl=");
    location.extend(url::form_urlencoded::byte_serialize(target.as_bytes()));
    location
}

/// `GET /oidc/logout/done?d=…`: after the sign-out, on to the client's post-logout redirect
/// URI (sealed by [`logout`]: nothing else is redirected to from here).
pub(crate) async fn logged_out(State(s): State<ProviderState>, uri: Uri) -> Response {
    let params = pairs(uri.query().unwrap_or_default().as_bytes());
    let way = params
        .iter()
        .find(|(k, _)| k == "d")
        .and_then(|(_, v)| s.auth.config().jwt().decode(v, LOGOUT_SALT).ok().flatten());
    let Some(target) = way
        .as_ref()
        .and_then(|w| w.get("uri"))
        .and_then(Value::as_str)
        .and_then(|u| url::Url::parse(u).ok())
    else {
        return shown_error("this way back from the sign-out is unknown or expired");
    };
    let mut target = target;
    if let Some(state) = way
        .as_ref()
        .and_then(|w| w.get("state"))
        .and_then(Value::as_str)
    {
        target.query_pairs_mut().append_pair("state", state);
    }
    no_store(redirect(target.as_str()))
}
