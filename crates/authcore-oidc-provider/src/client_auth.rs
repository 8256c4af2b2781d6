//! Client authentication at the token, revocation and introspection endpoints:
//! `client_secret_basic`, `client_secret_post`, `private_key_jwt` (RFC 7523 §2.2, each
//! assertion used once) and public clients.

use authcore_keys::unix_time;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use serde_json::Value;

use crate::ProviderState;
use crate::clients::{self, AuthMethod};
use crate::config::OpenIdProvider;
use crate::params::{Params, pairs};
use crate::responses::token_error;
use crate::single_use::{client_key, secs};

/// The client id and secret of an `Authorization: Basic` header (RFC 6749 §2.3.1: each
/// form-urlencoded before base64).
pub(crate) fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, ()> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    let value = value.to_str().map_err(|_| ())?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| ())?;
    let text = String::from_utf8(decoded).map_err(|_| ())?;
    let (id, secret) = text.split_once(':').ok_or(())?;
    let unescape = |s: &str| -> Result<String, ()> {
        let plus = s.replace('+', " ");
        percent_encoding::percent_decode_str(&plus)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| ())
    };
    Ok(Some((unescape(id)?, unescape(secret)?)))
}

/// A form posted by an authenticated client: the token, revocation and introspection
/// endpoints' common first step.
pub(crate) struct ClientForm {
    pub(crate) client: std::sync::Arc<clients::Client>,
    pub(crate) params: Params,
    /// The `jti` and `exp` of a verified `private_key_jwt` assertion, to be used once.
    pub(crate) assertion: Option<(String, i64)>,
    /// The thumbprint of the key of the request's DPoP proof (RFC 9449), once the token
    /// endpoint checked it: the key its tokens are bound to.
    pub(crate) dpop_jkt: Option<String>,
}

/// The media type of a JWT client assertion (RFC 7523 §2.2).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The kind of the single-use marks of client assertions (by client and `jti`).
pub(crate) const USED_ASSERTION: &str = "oidc-provider-client-assertion";

/// [`client_form`], with a client assertion's `jti` used once (RFC 7523 §3 item 7): a
/// replayed assertion is refused, and so is any while the single-use store cannot answer.
pub(crate) async fn authenticated_client(
    s: &ProviderState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<ClientForm, Box<Response>> {
    let form = client_form(s, headers, body).await?;
    if let Some((jti, exp)) = &form.assertion {
        let ttl = secs(exp.saturating_sub(unix_time()).max(0) + 60);
        let key = client_key(jti, form.client.id());
        if !s.first_use(USED_ASSERTION, &key, ttl).await? {
            tracing::warn!(client = %form.client.id(), "oidc provider: a client assertion was replayed");
            return Err(Box::new(token_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication failed",
            )));
        }
    }
    Ok(form)
}

impl ClientForm {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name)
    }
}

/// The form of a client request and the client it authenticates (RFC 6749 §2.3: one
/// method, the client's own); the error answer otherwise.
/// The client is read once ([`ProviderState::client`]).
pub(crate) async fn client_form(
    s: &ProviderState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<ClientForm, Box<Response>> {
    let provider = &*s.provider;
    use StatusCode as S;
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
    if !form {
        return Err(Box::new(token_error(
            S::BAD_REQUEST,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        )));
    }
    let Some(params) = Params::unique(pairs(body)) else {
        return Err(Box::new(token_error(
            S::BAD_REQUEST,
            "invalid_request",
            "a parameter is given more than once",
        )));
    };
    let param = |name: &str| params.get(name);
    let basic = basic_credentials(headers).map_err(|()| {
        Box::new(token_error(
            S::UNAUTHORIZED,
            "invalid_client",
            "the Authorization header is not HTTP Basic client credentials",
        ))
    })?;
    let assertion = match (param("client_assertion_type"), param("client_assertion")) {
        (None, None) => None,
        (Some(JWT_BEARER), Some(a)) => Some(a.to_owned()),
        _ => {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "a client assertion needs client_assertion_type urn:ietf:params:oauth:client-assertion-type:jwt-bearer and client_assertion",
            )));
        }
    };
    if let Some(assertion) = assertion {
        if basic.is_some() || param("client_secret").is_some() {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            )));
        }
        return assertion_form(provider, params, &assertion);
    }
    let (client_id, presented, method) = match (&basic, param("client_secret")) {
        (Some(_), Some(_)) => {
            return Err(Box::new(token_error(
                S::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            )));
        }
        (Some((id, secret)), None) => {
            if param("client_id").is_some_and(|c| c != id) {
                return Err(Box::new(token_error(
                    S::BAD_REQUEST,
                    "invalid_request",
                    "client_id differs from the Authorization header's",
                )));
            }
            (
                id.as_str(),
                Some(secret.as_str()),
                AuthMethod::ClientSecretBasic,
            )
        }
        (None, Some(secret)) => match param("client_id") {
            Some(id) => (id, Some(secret), AuthMethod::ClientSecretPost),
            None => {
                return Err(Box::new(token_error(
                    S::UNAUTHORIZED,
                    "invalid_client",
                    "client_secret without client_id",
                )));
            }
        },
        (None, None) => match param("client_id") {
            Some(id) => (id, None, AuthMethod::None),
            None => {
                return Err(Box::new(token_error(
                    S::UNAUTHORIZED,
                    "invalid_client",
                    "no client authentication",
                )));
            }
        },
    };
    let client = match s.client(client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => {
            return Err(Box::new(token_error(
                S::UNAUTHORIZED,
                "invalid_client",
                "unknown client",
            )));
        }
        // The credentials may be right: said to be unavailable, not wrong.
        Err(_) => return Err(crate::responses::unavailable("the clients cannot be read")),
    };
    let authenticated = client.auth_method() == method
        && match presented {
            Some(secret) => client.secret_matches(secret),
            None => client.is_public(),
        };
    if !authenticated {
        return Err(client_authentication_failed());
    }
    Ok(ClientForm {
        client,
        params,
        assertion: None,
        dpop_jkt: None,
    })
}

pub(crate) fn client_authentication_failed() -> Box<Response> {
    Box::new(token_error(
        StatusCode::UNAUTHORIZED,
        "invalid_client",
        "client authentication failed",
    ))
}

/// The form of a client authenticating with a `private_key_jwt` assertion: the client is
/// the assertion's `sub` (and `client_id`, when given, must name it), whose keys must have
/// signed it; the assertion's `aud` is the issuer.
pub(crate) fn assertion_form(
    provider: &OpenIdProvider,
    params: Params,
    assertion: &str,
) -> Result<ClientForm, Box<Response>> {
    let named = authcore::oauth::id_token::unverified_claims(assertion)
        .ok()
        .and_then(|c| c.get("sub").and_then(Value::as_str).map(str::to_owned));
    let client_id = match (params.get("client_id"), named.as_deref()) {
        (Some(id), Some(sub)) if id == sub => id,
        (None, Some(sub)) => sub,
        _ => return Err(client_authentication_failed()),
    };
    let Some(client) = provider
        .clients
        .shared(client_id)
        .filter(|c| c.auth_method() == AuthMethod::PrivateKeyJwt)
    else {
        return Err(client_authentication_failed());
    };
    match client.verify_assertion(assertion, &provider.issuer, unix_time()) {
        Ok(used) => Ok(ClientForm {
            client,
            params,
            assertion: Some(used),
            dpop_jkt: None,
        }),
        Err(why) => {
            tracing::warn!(client = %client.id(), why, "oidc provider: a client assertion was refused");
            Err(client_authentication_failed())
        }
    }
}
