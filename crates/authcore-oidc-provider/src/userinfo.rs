//! The userinfo endpoint ([`USERINFO_PATH`](crate::USERINFO_PATH)).

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;

use crate::dpop_binding::Scheme;
use crate::responses::{bearer_error, json_response, no_store};
use crate::revocation::ActiveToken;
use crate::{ProviderState, USERINFO_PATH};

/// `GET` / `POST /oidc/userinfo` with `Authorization: Bearer <access token>`, or
/// `Authorization: DPoP <access token>` and its proof (RFC 9449 §7).
pub(crate) async fn userinfo(
    State(s): State<ProviderState>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let token = match (values.next(), values.next()) {
        (Some(v), None) => v
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .and_then(|(scheme, t)| Some((Scheme::parse(scheme)?, t.trim().to_owned()))),
        _ => None,
    };
    let Some((scheme, token)) = token else {
        return bearer_error("invalid_request");
    };
    let Some(claims) = s.access_token_claims(&token) else {
        return scheme.refusal("invalid_token");
    };
    // The proof before the stores: a request sent again for a nonce reads nothing.
    if let Err(answer) = s
        .resource_proof(scheme, &method, &headers, USERINFO_PATH, &token, &claims)
        .await
    {
        return *answer;
    }
    // A client's own token (client_credentials) stands for no user.
    let (claims, user) = match s.still_active(claims).await {
        Ok(Some(ActiveToken {
            claims,
            user: Some(user),
        })) => (claims, user),
        Ok(_) => return scheme.refusal("invalid_token"),
        Err(answer) => return *answer,
    };
    let scopes: Vec<String> = claims.scope.split(' ').map(str::to_owned).collect();
    let user_claims = match s.user_claims(&user, &scopes).await {
        Ok(c) => c,
        Err(answer) => return *answer,
    };
    let mut r = json_response(StatusCode::OK, &user_claims);
    if scheme == Scheme::DPoP {
        // A fresh nonce for the client's next proofs (RFC 9449 §9).
        s.offer_nonce(&mut r);
    }
    no_store(r)
}
