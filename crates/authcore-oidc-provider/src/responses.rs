//! The answers the endpoints share: JSON, redirects, the error page, and the OAuth error
//! bodies of the token, userinfo and revocation endpoints (RFC 6749 §5.2, RFC 6750 §3).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// `value` as an `application/json` answer (serialized as it is: no `Value` made first).
pub(crate) fn json_response<T: serde::Serialize + ?Sized>(
    status: StatusCode,
    value: &T,
) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

pub(crate) fn no_store(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

pub(crate) fn redirect(location: &str) -> Response {
    match HeaderValue::try_from(location) {
        Ok(v) => (StatusCode::FOUND, [(header::LOCATION, v)]).into_response(),
        Err(_) => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// The error page of a request that cannot be sent back to its client (an authorization or
/// logout request naming a client or redirect URI not registered here).
pub(crate) fn shown_error(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("This request cannot be answered: {message}.\n"),
    )
        .into_response()
}

/// The answer while the clients cannot be read: a page, as for a request that is not
/// sent back to a client (no redirect URI can be trusted without its client).
pub(crate) fn clients_unavailable() -> Response {
    tracing::warn!("oidc provider: authorization request not answered: the clients cannot be read");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "This request cannot be answered now: try again in a moment.\n",
    )
        .into_response()
}

/// A token endpoint error (RFC 6749 §5.2).
pub(crate) fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    tracing::info!(error, description, "oidc provider: token request refused");
    let mut r = json_response(
        status,
        &json!({"error": error, "error_description": description}),
    );
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"oidc\""),
        );
    }
    no_store(r)
}

pub(crate) fn refused(status: StatusCode, error: &str, description: &str) -> Box<Response> {
    Box::new(token_error(status, error, description))
}

pub(crate) fn invalid_grant(description: &str) -> Box<Response> {
    refused(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

pub(crate) fn unavailable(what: &str) -> Box<Response> {
    refused(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        what,
    )
}

pub(crate) fn no_randomness() -> Box<Response> {
    tracing::error!("oidc provider: no randomness");
    Box::new(StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

pub(crate) fn no_signature() -> Box<Response> {
    tracing::error!("oidc provider: cannot sign or seal a token");
    Box::new(StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A userinfo error (RFC 6750 §3).
pub(crate) fn bearer_error(error: &str) -> Response {
    let mut r = StatusCode::UNAUTHORIZED.into_response();
    if let Ok(v) = HeaderValue::try_from(format!("Bearer error=\"{error}\"")) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    no_store(r)
}
