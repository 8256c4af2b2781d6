//! Discovery (OpenID Connect Discovery 1.0 §3, [`DISCOVERY_PATH`](crate::DISCOVERY_PATH)) and
//! the JWK Set of the signing keys ([`JWKS_PATH`](crate::JWKS_PATH)).

use authcore::AuthConfig;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::ProviderState;
use crate::clients::{self, AuthMethod};
use crate::config::OpenIdProvider;
use crate::dpop;
use crate::grant::{self};
use crate::responses::json_response;
use crate::{
    AUTHORIZE_PATH, DEVICE_AUTHORIZATION_PATH, INTROSPECTION_PATH, JWKS_PATH, LOGOUT_PATH,
    PAR_PATH, REVOCATION_PATH, TOKEN_PATH, USERINFO_PATH,
};

/// The claims the provider may put in ID tokens and userinfo, by scope and always.
const CLAIMS: [&str; 15] = [
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "amr",
    "acr",
    "sid",
    "name",
    "picture",
    "email",
    "email_verified",
    "groups",
];

impl OpenIdProvider {
    /// The provider metadata (OpenID Connect Discovery 1.0 §3) for a handler configured as
    /// `auth`: the `organizations` scope and claim when it has organizations on.
    pub fn metadata(&self, auth: &AuthConfig) -> Value {
        let organizations = auth.organization_roles().is_some();
        let scopes: Vec<&str> = clients::SCOPES
            .into_iter()
            .filter(|s| organizations || *s != "organizations")
            .collect();
        let mut claims = CLAIMS.to_vec();
        if organizations {
            claims.push("organizations");
        }
        let auth_methods = [
            AuthMethod::ClientSecretBasic.as_str(),
            AuthMethod::ClientSecretPost.as_str(),
            AuthMethod::PrivateKeyJwt.as_str(),
            AuthMethod::None.as_str(),
        ];
        json!({
            "issuer": self.issuer,
            "authorization_endpoint": self.url(AUTHORIZE_PATH),
            "token_endpoint": self.url(TOKEN_PATH),
            "device_authorization_endpoint": self.url(DEVICE_AUTHORIZATION_PATH),
            "userinfo_endpoint": self.url(USERINFO_PATH),
            "jwks_uri": self.url(JWKS_PATH),
            "end_session_endpoint": self.url(LOGOUT_PATH),
            "revocation_endpoint": self.url(REVOCATION_PATH),
            "introspection_endpoint": self.url(INTROSPECTION_PATH),
            "pushed_authorization_request_endpoint": self.url(PAR_PATH),
            "require_pushed_authorization_requests": self.require_pushed,
            "revocation_endpoint_auth_methods_supported": auth_methods,
            "introspection_endpoint_auth_methods_supported": auth_methods,
            "scopes_supported": scopes,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": clients::GRANT_TYPES,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": self.keys.algorithms(),
            "token_endpoint_auth_methods_supported": auth_methods,
            "token_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "revocation_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "introspection_endpoint_auth_signing_alg_values_supported": clients::ASSERTION_ALGS,
            "code_challenge_methods_supported": ["S256"],
            "dpop_signing_alg_values_supported": dpop::ALGS,
            "claims_supported": claims,
            "acr_values_supported": grant::ACR_VALUES,
            "backchannel_logout_supported": true,
            "backchannel_logout_session_supported": true,
            "prompt_values_supported": ["none", "login", "consent"],
            "authorization_response_iss_parameter_supported": true,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
        })
    }
}

/// `GET /oidc/.well-known/openid-configuration`.
pub(crate) async fn discovery(State(s): State<ProviderState>) -> Response {
    let mut r = json_response(StatusCode::OK, &s.provider.metadata(s.auth.config()));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=300"),
    );
    r
}

/// `GET /oidc/jwks`.
pub(crate) async fn jwks(State(s): State<ProviderState>) -> Response {
    let keys = &s.provider.keys;
    let jwks = match s.provider.ed25519_named {
        true => keys.jwks_for_both_ed25519_names(),
        false => keys.jwks(),
    };
    (
        [
            (header::CACHE_CONTROL, "max-age=300"),
            (header::CONTENT_TYPE, "application/jwk-set+json"),
        ],
        jwks.to_string(),
    )
        .into_response()
}
