//! Pushed authorization requests (RFC 9126): the client posts its authorization request to
//! [`PAR_PATH`](crate::PAR_PATH), authenticated as at the token endpoint, and sends the
//! browser to the authorization endpoint with `client_id` and the `request_uri` it got.
//!
//! Nothing is stored: the `request_uri` is the validated request itself, sealed (a JWE under
//! the auth secret with a salt of its own, as codes are) for
//! [`PUSHED_REQUEST_TTL_SECS`](crate::PUSHED_REQUEST_TTL_SECS), so that any instance opens
//! it. Its `jti` is marked in the handler's single-use store when it is used (each
//! `request_uri` once, on every instance); the way back from the sign-in page carries a new
//! `request_uri` of the same request, good for the sign-in's time.
//!
//! The pure parts first ([`pushed_params`], [`reference`]), then the endpoint.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ProviderState;
use crate::client_auth::{ClientForm, authenticated_client};
use crate::config::PUSHED_REQUEST_TTL_SECS;
use crate::request::{self, PARAMETERS, Refusal};
use crate::responses::{json_response, no_randomness, no_signature, no_store, token_error};
use crate::single_use::{LOGIN_AFTER_TTL_SECS, PAR_SALT};
use crate::token::random_token;

/// What every `request_uri` of this provider begins with (RFC 9126 §2.2).
pub(crate) const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";

/// The most a pushed request may hold: the bytes of its parameters' names and values
/// (its `request_uri` carries them all, and so does the way back from the sign-in page).
pub(crate) const MAX_PUSHED_BYTES: usize = 8192;

/// A pushed authorization request, as sealed into its `request_uri`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PushedRequest {
    /// The client that pushed it: the only one that may use it.
    pub(crate) client_id: String,
    /// The authorization request's parameters, `client_id` first.
    pub(crate) params: Vec<(String, String)>,
    /// Names this `request_uri` in the single-use store.
    pub(crate) jti: String,
    /// The last moment (Unix seconds) any `request_uri` of this request is good: its first
    /// use, then a sign-in's time ([`PushedRequest::way_back`]). Each way back from the
    /// sign-in page is a new `request_uri`, and each ends by this moment, so that using
    /// them over and over cannot keep the request alive.
    #[serde(default)]
    pub(crate) until: Option<i64>,
}

impl PushedRequest {
    /// The last moment a request pushed at `now` may be used by: its `request_uri`'s
    /// lifetime, then a sign-in's time.
    pub(crate) fn deadline(now: i64) -> i64 {
        later(
            now,
            PUSHED_REQUEST_TTL_SECS.saturating_add(LOGIN_AFTER_TTL_SECS),
        )
    }

    /// Whether the request's deadline ([`until`](PushedRequest::until)) has come at `now`:
    /// then none of its `request_uri`s is good, whatever its seal's own expiry (a way back
    /// made at the deadline is still sealed for a second, which must not make another).
    pub(crate) fn expired(&self, now: i64) -> bool {
        self.until.is_some_and(|until| now >= until)
    }

    /// The request of the way back from the sign-in page made at `now` (a new
    /// `request_uri`, named `jti`), and for how many seconds it is good: a sign-in's time,
    /// cut at the request's [`until`](PushedRequest::until), and at least a second (a
    /// request used after its deadline is refused before, [`PushedRequest::expired`]). A
    /// request sealed without an `until` gets a sign-in's time from now, and keeps it.
    pub(crate) fn way_back(&self, jti: String, now: i64) -> (PushedRequest, u64) {
        let until = self
            .until
            .unwrap_or_else(|| later(now, LOGIN_AFTER_TTL_SECS));
        let left = u64::try_from(until.saturating_sub(now)).unwrap_or(0);
        let again = PushedRequest {
            jti,
            until: Some(until),
            ..self.clone()
        };
        (again, left.clamp(1, LOGIN_AFTER_TTL_SECS))
    }
}

/// `secs` seconds after `now` (Unix seconds), saturating.
fn later(now: i64, secs: u64) -> i64 {
    now.saturating_add(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// The authorization request in `form`, the form client `client_id` pushed (authenticated,
/// each parameter once): its authorization request parameters, the client's id as
/// `client_id`; the client's authentication and any parameter unknown here are left out.
/// `Err` says why it is refused: a `request_uri` inside (RFC 9126 §2.1), a request object
/// (not supported), or more than [`MAX_PUSHED_BYTES`].
pub(crate) fn pushed_params(
    form: &[(String, String)],
    client_id: &str,
) -> Result<Vec<(String, String)>, &'static str> {
    if form.iter().any(|(k, _)| k == "request_uri") {
        return Err("a pushed request has no request_uri (RFC 9126 §2.1)");
    }
    if form.iter().any(|(k, _)| k == "request") {
        return Err("request objects are not supported here (request_parameter_supported)");
    }
    let mut params = vec![("client_id".to_owned(), client_id.to_owned())];
    params.extend(
        form.iter()
            .filter(|(k, _)| k != "client_id" && PARAMETERS.contains(&k.as_str()))
            .cloned(),
    );
    let size: usize = params.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_PUSHED_BYTES {
        return Err("the pushed request is too large");
    }
    Ok(params)
}

/// The `client_id` and sealed request of the `request_uri` that an authorization
/// request's `params` give (RFC 9126 §4); `None` when they give none. `Err` (shown to the
/// user, never sent anywhere) for a `request_uri` without exactly one `client_id`, given
/// twice, or not of this provider's form.
pub(crate) fn reference(params: &[(String, String)]) -> Result<Option<(&str, &str)>, &'static str> {
    let uri = match request::one(params, "request_uri") {
        Ok(None) => return Ok(None),
        Ok(Some(uri)) => uri,
        Err(()) => return Err("request_uri is given more than once"),
    };
    let client_id = match request::one(params, "client_id") {
        Ok(Some(id)) if !id.is_empty() && id.len() <= request::MAX_PARAM_LEN => id,
        _ => return Err("a request_uri comes with the client_id that pushed it"),
    };
    match uri.strip_prefix(REQUEST_URI_PREFIX) {
        Some(sealed) if !sealed.is_empty() => Ok(Some((client_id, sealed))),
        _ => Err("the request_uri is not one this provider gave"),
    }
}

/// `POST /oidc/par` (RFC 9126 §2): the client authenticated as at the token endpoint, its
/// request validated as at the authorization endpoint ([`ProviderState::pushed`]). A DPoP
/// proof sent with it (RFC 9449 §10.1), checked as at the token endpoint, binds the code
/// to its key, as `dpop_jkt` does.
pub(crate) async fn push(
    headers: HeaderMap,
    State(s): State<ProviderState>,
    body: Bytes,
) -> Response {
    let proof = match s.endpoint_proof(&headers, crate::PAR_PATH) {
        Ok(proof) => proof,
        Err(answer) => return *answer,
    };
    let form = match authenticated_client(&s, &headers, &body).await {
        Ok(form) => form,
        Err(answer) => return *answer,
    };
    let jkt = match proof {
        Some(proof) => match s.first_use_of(proof, &form.client).await {
            Ok(jkt) => Some(jkt),
            Err(answer) => return *answer,
        },
        None => None,
    };
    s.pushed(&form, jkt)
}

impl ProviderState {
    /// The answer to the authorization request `form` pushes: `201` with the `request_uri`,
    /// or the error as JSON (§2.3), never a redirect.
    fn pushed(&self, form: &ClientForm, proof_jkt: Option<String>) -> Response {
        let client = &form.client;
        let mut params = match pushed_params(form.params.pairs(), client.id()) {
            Ok(p) => p,
            Err(why) => return token_error(StatusCode::BAD_REQUEST, "invalid_request", why),
        };
        // The proof's key binds the code; a `dpop_jkt` beside it must name that key
        // (RFC 9449 §10.1).
        if let Some(jkt) = proof_jkt {
            match params.iter().find(|(k, _)| k == "dpop_jkt") {
                Some((_, named)) if *named != jkt => {
                    return *crate::dpop_binding::invalid_proof(
                        "dpop_jkt names another key than the DPoP proof's",
                    );
                }
                Some(_) => {}
                None => params.push(("dpop_jkt".to_owned(), jkt)),
            }
        }
        match self.request_for(&params, Some(Arc::clone(client)), true) {
            Ok(_) => {}
            Err(Refusal::Shown(why)) => {
                return token_error(StatusCode::BAD_REQUEST, "invalid_request", &why);
            }
            Err(Refusal::Redirected {
                error, description, ..
            }) => return token_error(StatusCode::BAD_REQUEST, error, &description),
        }
        let Some(jti) = random_token() else {
            return *no_randomness();
        };
        let pushed = PushedRequest {
            client_id: client.id().to_owned(),
            params,
            jti,
            until: Some(PushedRequest::deadline(authcore_keys::unix_time())),
        };
        let Some(sealed) = self.seal(&pushed, PAR_SALT, PUSHED_REQUEST_TTL_SECS) else {
            return *no_signature();
        };
        tracing::info!(client = %client.id(), "oidc provider: authorization request pushed");
        no_store(json_response(
            StatusCode::CREATED,
            &json!({
                "request_uri": format!("{REQUEST_URI_PREFIX}{sealed}"),
                "expires_in": PUSHED_REQUEST_TTL_SECS,
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// The request's own parameters are kept, the client's authentication and unknown
    /// parameters left out, and `client_id` is the authenticated client's.
    #[test]
    fn a_pushed_request_keeps_the_authorization_parameters() {
        let form = pairs(&[
            ("client_secret", "s3cret"),
            ("client_assertion_type", "x"),
            ("client_assertion", "y"),
            ("response_type", "code"),
            ("scope", "openid"),
            ("ui_locales", "fr"),
            ("state", "st"),
        ]);
        assert_eq!(
            pushed_params(&form, "app").unwrap(),
            pairs(&[
                ("client_id", "app"),
                ("response_type", "code"),
                ("scope", "openid"),
                ("state", "st"),
            ])
        );
        let form = pairs(&[("client_id", "app"), ("scope", "openid")]);
        assert_eq!(
            pushed_params(&form, "app").unwrap(),
            pairs(&[("client_id", "app"), ("scope", "openid")])
        );
    }

    #[test]
    fn a_request_uri_a_request_object_or_too_much_is_refused() {
        let big = "x".repeat(2048);
        for form in [
            pairs(&[("request_uri", "urn:ietf:params:oauth:request_uri:abc")]),
            pairs(&[("request", "eyJ...")]),
            pairs(&[
                ("state", &big),
                ("nonce", &big),
                ("login_hint", &big),
                ("prompt", &big),
            ]),
        ] {
            assert!(pushed_params(&form, "app").is_err(), "{form:?}");
        }
    }

    #[test]
    fn a_reference_needs_its_client_and_this_providers_form() {
        let uri = format!("{REQUEST_URI_PREFIX}sealed");
        assert_eq!(reference(&pairs(&[("client_id", "app")])), Ok(None));
        assert_eq!(
            reference(&pairs(&[("client_id", "app"), ("request_uri", &uri)])),
            Ok(Some(("app", "sealed")))
        );
        for p in [
            pairs(&[("request_uri", &uri)]),
            pairs(&[("client_id", ""), ("request_uri", &uri)]),
            pairs(&[
                ("client_id", "a"),
                ("client_id", "b"),
                ("request_uri", &uri),
            ]),
            pairs(&[
                ("client_id", "app"),
                ("request_uri", &uri),
                ("request_uri", &uri),
            ]),
            pairs(&[
                ("client_id", "app"),
                ("request_uri", "https://evil.example/r"),
            ]),
            pairs(&[("client_id", "app"), ("request_uri", REQUEST_URI_PREFIX)]),
            pairs(&[("client_id", "app"), ("request_uri", "")]),
            // A client id no client has, of any length, never reaches a log line whole.
            pairs(&[
                ("client_id", &"a\n".repeat(request::MAX_PARAM_LEN)),
                ("request_uri", &uri),
            ]),
        ] {
            assert!(reference(&p).is_err(), "{p:?}");
        }
        let longest = "a".repeat(request::MAX_PARAM_LEN);
        let p = pairs(&[("client_id", &longest), ("request_uri", &uri)]);
        assert_eq!(reference(&p), Ok(Some((longest.as_str(), "sealed"))));
    }

    /// The ways back from the sign-in page, each a new `request_uri`, end by the pushed
    /// request's deadline however often one is used for another: a sign-in's time from
    /// the first, then less and less, never past the deadline.
    #[test]
    fn ways_back_end_by_the_pushed_requests_deadline() {
        let pushed_at = 1_800_000_000;
        let first = PushedRequest {
            client_id: "app".to_owned(),
            params: pairs(&[("client_id", "app"), ("scope", "openid")]),
            jti: "j0".to_owned(),
            until: Some(PushedRequest::deadline(pushed_at)),
        };
        let deadline = pushed_at + 90 + 3600;
        assert_eq!(first.until, Some(deadline));
        // Used at once, and then each way back used just before it ends.
        let (mut request, mut ttl) = first.way_back("j1".to_owned(), pushed_at + 10);
        assert_eq!(ttl, 3600);
        let mut now = pushed_at + 10;
        for i in 2..10 {
            assert_eq!(request.until, Some(deadline), "kept");
            assert_eq!(request.params, first.params);
            now += i64::try_from(ttl).unwrap() - 1;
            (request, ttl) = request.way_back(format!("j{i}"), now);
            assert!(now + i64::try_from(ttl).unwrap() <= deadline.max(now + 1));
            assert_eq!(request.jti, format!("j{i}"));
        }
        assert!(now >= deadline - 1, "the chain reached the deadline: {now}");
        assert_eq!(ttl, 1);
        // Good until the deadline, refused from it on, however fresh its seal.
        assert!(!request.expired(deadline - 1));
        assert!(request.expired(deadline) && request.expired(deadline + 100));
        // Past the deadline a way back is a second's (its seal then expires at once).
        assert_eq!(request.way_back("late".to_owned(), deadline + 100).1, 1);
        // A request sealed before deadlines gets a sign-in's time from its first way back,
        // and keeps that deadline.
        let old = PushedRequest {
            until: None,
            ..first.clone()
        };
        assert!(!old.expired(i64::MAX), "no deadline of its own");
        let (again, ttl) = old.way_back("j".to_owned(), pushed_at);
        assert_eq!((again.until, ttl), (Some(pushed_at + 3600), 3600));
        assert!(again.expired(pushed_at + 3600));
        let (_, ttl) = again.way_back("k".to_owned(), pushed_at + 3000);
        assert_eq!(ttl, 600);
        // One sealed before the field existed opens without it.
        let json = r#"{"client_id":"app","params":[["client_id","app"]],"jti":"j"}"#;
        let old: PushedRequest = serde_json::from_str(json).unwrap();
        assert_eq!(old.until, None);
    }
}
