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

/// The token endpoint's answer (RFC 6749 §5.1; OpenID Connect Core 1.0 §3.1.3.3 adds
/// `id_token`).
pub(crate) struct TokenAnswer<'a> {
    pub(crate) access_token: &'a str,
    /// `Bearer`, or `DPoP` for a bound access token (RFC 9449 §5).
    pub(crate) token_type: &'static str,
    pub(crate) expires_in: i64,
    pub(crate) refresh_token: Option<&'a str>,
    pub(crate) scope: Option<&'a str>,
    pub(crate) id_token: Option<&'a str>,
}

impl TokenAnswer<'_> {
    /// The answer as `application/json`. The tokens are compact JWS and JWE
    /// serialisations (RFC 7515 §7.1, RFC 7516 §7.1): base64url and dots, nothing a JSON
    /// string escapes, so they are copied as they are rather than scanned byte by byte by
    /// the JSON writer; any other text (and any token that is not compact) is written by
    /// `serde_json`.
    pub(crate) fn into_response(self) -> Response {
        let tokens = [Some(self.access_token), self.refresh_token, self.id_token];
        let length: usize = tokens.iter().flatten().map(|t| t.len()).sum();
        let mut body = Vec::with_capacity(length + 160);
        let written = (|| {
            body.extend_from_slice(b"{\"access_token\":");
            json_string(&mut body, self.access_token)?;
            body.extend_from_slice(b",\"token_type\":");
            json_string(&mut body, self.token_type)?;
            body.extend_from_slice(b",\"expires_in\":");
            serde_json::to_writer(&mut body, &self.expires_in)?;
            for (name, value) in [
                ("refresh_token", self.refresh_token),
                ("scope", self.scope),
                ("id_token", self.id_token),
            ] {
                if let Some(value) = value {
                    body.extend_from_slice(b",\"");
                    body.extend_from_slice(name.as_bytes());
                    body.extend_from_slice(b"\":");
                    json_string(&mut body, value)?;
                }
            }
            body.push(b'}');
            serde_json::Result::Ok(())
        })();
        match written {
            Ok(()) => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response(),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }
}

/// `text` as a JSON string: copied between quotes when it is all base64url and dots (the
/// check has no early exit, so the compiler can run it over many bytes at once),
/// escaped by `serde_json` otherwise.
fn json_string(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    let compact = text.bytes().fold(true, |ok, b| {
        ok & (b.is_ascii_alphanumeric() | (b == b'-') | (b == b'_') | (b == b'.'))
    });
    if compact {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(out, text)
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(answer: TokenAnswer<'_>) -> (StatusCode, Option<String>, serde_json::Value) {
        let r = answer.into_response();
        let status = r.status();
        let content_type = r
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (
            status,
            content_type,
            serde_json::from_slice(&bytes).unwrap(),
        )
    }

    #[tokio::test]
    async fn a_token_answer_is_the_json_of_its_fields_whatever_they_hold() {
        let tokens = [
            "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl",
            "eyJhbGciOiJkaXIifQ..aXY.Y2lwaGVy.dGFn",
            "",
            "-_.",
            "a\"b",
            "back\\slash",
            "line\nbreak\u{1}\u{7f}",
            "</script><script>x()</script>",
            "été ∑ 😀",
            "base64+/=",
            "tab\there",
        ];
        for token in tokens {
            for (refresh, scope, id) in [
                (None, None, None),
                (Some(token), Some("openid email"), Some(token)),
                (None, Some("a\"b c\\d"), Some("x.y.z")),
            ] {
                let answer = TokenAnswer {
                    access_token: token,
                    token_type: "DPoP",
                    expires_in: 3600,
                    refresh_token: refresh,
                    scope,
                    id_token: id,
                };
                let (status, content_type, body) = body_of(answer).await;
                assert_eq!(status, StatusCode::OK);
                assert_eq!(content_type.as_deref(), Some("application/json"));
                let mut expected = json!({
                    "access_token": token,
                    "token_type": "DPoP",
                    "expires_in": 3600,
                });
                for (name, value) in [
                    ("refresh_token", refresh),
                    ("scope", scope),
                    ("id_token", id),
                ] {
                    if let Some(value) = value {
                        expected[name] = value.into();
                    }
                }
                assert_eq!(body, expected, "{token:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_token_answer_writes_any_expiry() {
        for expires_in in [0, 1, -1, i64::MAX, i64::MIN] {
            let (_, _, body) = body_of(TokenAnswer {
                access_token: "a.b.c",
                token_type: "Bearer",
                expires_in,
                refresh_token: None,
                scope: None,
                id_token: None,
            })
            .await;
            assert_eq!(body["expires_in"], expires_in);
        }
    }
}
