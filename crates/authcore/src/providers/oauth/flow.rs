//! The protocol steps of the authorization code flow (Auth.js
//! `lib/actions/signin/authorization-url.ts` and `lib/actions/callback/oauth/callback.ts`):
//! endpoint resolution, the authorization URL, the token request and response, userinfo.
//! They sit with the provider they run for, above the protocol pieces of [`crate::oauth`]
//! (HTTP client, discovery, JWKS, check cookies, ID tokens).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use serde_json::Value;

use super::{ClientAuthMethod, OAuthProvider};
use crate::http_client::HttpClient;
use crate::oauth::{Metadata, OAuthError, discover, form_encode, get_json};
use crate::types::{JsonObject, ProviderType, TokenSet};

/// Endpoints and issuer facts for one flow.
#[derive(Debug, Clone)]
pub(crate) struct Endpoints {
    pub issuer: Option<String>,
    pub authorization: Option<String>,
    pub token: Option<String>,
    pub userinfo: Option<String>,
    pub jwks_uri: Option<String>,
    pub id_token_algs: Option<Vec<String>>,
    pub iss_param_supported: bool,
}

/// Configured endpoints, completed by discovery when something needed is missing.
pub(crate) async fn resolve_endpoints(
    p: &OAuthProvider,
    client: &dyn HttpClient,
) -> Result<Endpoints, OAuthError> {
    let mut e = Endpoints {
        issuer: p.issuer.clone(),
        authorization: p.authorization.url.clone(),
        token: p.token.url.clone(),
        userinfo: p.userinfo.url.clone(),
        jwks_uri: p.jwks_uri.clone(),
        id_token_algs: None,
        iss_param_supported: false,
    };
    let needs_jwks = p.kind == ProviderType::Oidc && e.jwks_uri.is_none();
    let needs_userinfo = e.userinfo.is_none()
        && p.userinfo_request.is_none()
        && (p.kind == ProviderType::Oauth || !p.id_token);
    let missing = e.authorization.is_none() || e.token.is_none() || needs_jwks || needs_userinfo;
    if let (true, Some(issuer)) = (missing, &p.issuer) {
        let m: Arc<Metadata> = discover(
            client,
            &p.caches,
            issuer,
            p.well_known.as_deref(),
            p.tenant_issuer,
        )
        .await?;
        e.issuer = Some(m.issuer.clone());
        e.authorization = e.authorization.or_else(|| m.authorization_endpoint.clone());
        e.token = e.token.or_else(|| m.token_endpoint.clone());
        e.userinfo = e.userinfo.or_else(|| m.userinfo_endpoint.clone());
        e.jwks_uri = e.jwks_uri.or_else(|| m.jwks_uri.clone());
        e.id_token_algs = m.id_token_signing_alg_values_supported.clone();
        e.iss_param_supported = m.authorization_response_iss_parameter_supported;
    }
    Ok(e)
}

/// Where the provider sends the user back, with a redirect proxy in mind (Auth.js
/// `lib/utils/providers.ts` and `lib/actions/signin/authorization-url.ts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RedirectPlan {
    /// `redirect_uri` for the authorization and token requests.
    pub redirect_uri: String,
    /// A proxy is configured.
    pub proxied: bool,
    /// This request is served by the proxy deployment itself.
    pub on_proxy: bool,
}

/// `own_callback` is `<origin><basePath>/callback/<id>` of this deployment.
pub(crate) fn redirect_plan(
    p: &OAuthProvider,
    config_proxy: Option<&str>,
    request_origin: &str,
    own_callback: String,
) -> RedirectPlan {
    let Some(proxy) = p.effective_redirect_proxy(config_proxy) else {
        return RedirectPlan {
            redirect_uri: own_callback,
            proxied: false,
            on_proxy: false,
        };
    };
    let on_proxy =
        url::Url::parse(proxy).is_ok_and(|u| u.origin().ascii_serialization() == request_origin);
    RedirectPlan {
        redirect_uri: if on_proxy {
            own_callback
        } else {
            format!("{proxy}/callback/{}", p.id)
        },
        proxied: true,
        on_proxy,
    }
}

/// Values of the checks sent with the authorization request.
#[derive(Debug, Default)]
pub(crate) struct CheckValues<'a> {
    pub state: Option<&'a str>,
    pub code_challenge: Option<String>,
    pub nonce: Option<&'a str>,
}

/// PKCE: a 43-char verifier and its S256 challenge.
pub(crate) fn pkce_pair() -> (String, String) {
    let verifier = crate::random::b64url_token::<32>();
    let challenge = URL_SAFE_NO_PAD.encode(crate::crypto::sha256(verifier.as_bytes()));
    (verifier, challenge)
}

/// Sets `name` like `URLSearchParams.set`: replaces the first value (dropping others) or appends.
fn set_param(pairs: &mut Vec<(String, String)>, name: &str, value: &str) {
    if let Some(i) = pairs.iter().position(|(n, _)| n == name) {
        pairs[i].1 = value.to_owned();
        let mut seen = false;
        pairs.retain(|(n, _)| {
            if n != name {
                return true;
            }
            let keep = !seen;
            seen = true;
            keep
        });
    } else {
        pairs.push((name.to_owned(), value.to_owned()));
    }
}

/// The authorization URL (Auth.js `lib/actions/signin/authorization-url.ts`):
/// `response_type`, `client_id`, `redirect_uri`, the configured params, then every query
/// param of the sign-in request (which may override anything), then the checks; `scope`
/// defaults to `openid profile email`.
pub(crate) fn authorization_url(
    p: &OAuthProvider,
    endpoint: &str,
    redirect_uri: &str,
    request_query: &[(String, String)],
    checks: &CheckValues<'_>,
) -> Result<url::Url, OAuthError> {
    let mut url = url::Url::parse(endpoint).map_err(|e| OAuthError::InvalidResponse {
        step: "authorization",
        reason: format!("invalid authorization endpoint: {e}"),
    })?;
    let mut pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let url_params = pairs.clone();
    // Auth.js writes a configured endpoint's params into its URL when it normalises the
    // provider, so there they come first; a discovered endpoint gets them after these.
    if p.authorization.url.as_deref() == Some(endpoint) {
        for (k, v) in &p.authorization.params {
            set_param(&mut pairs, k, v);
        }
        // Auth.js `normalizeOAuth`: a configured endpoint without a scope asks for
        // `openid profile email`, whatever the provider's type.
        if p.default_scope && !pairs.iter().any(|(n, _)| n == "scope") {
            set_param(&mut pairs, "scope", "openid profile email");
        }
    }
    set_param(&mut pairs, "response_type", "code");
    set_param(&mut pairs, "client_id", &p.client_id);
    set_param(&mut pairs, "redirect_uri", redirect_uri);
    for (k, v) in &p.authorization_client_params {
        set_param(&mut pairs, k, p.client_value(v));
    }
    for (k, v) in p
        .authorization
        .params
        .iter()
        .chain(&url_params)
        .chain(request_query)
    {
        set_param(&mut pairs, k, v);
    }
    if let Some(s) = checks.state {
        set_param(&mut pairs, "state", s);
    }
    if let Some(c) = &checks.code_challenge {
        set_param(&mut pairs, "code_challenge", c);
        set_param(&mut pairs, "code_challenge_method", "S256");
    }
    if let Some(n) = checks.nonce {
        set_param(&mut pairs, "nonce", n);
    }
    if p.kind == ProviderType::Oidc && !pairs.iter().any(|(n, _)| n == "scope") {
        set_param(&mut pairs, "scope", "openid profile email");
    }
    url.query_pairs_mut().clear().extend_pairs(&pairs);
    Ok(url)
}

/// What a token request asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Grant<'a> {
    /// `authorization_code` (RFC 6749 §4.1.3).
    Code {
        code: &'a str,
        redirect_uri: &'a str,
        code_verifier: Option<&'a str>,
    },
    /// `refresh_token` (RFC 6749 §6): new tokens for a refresh token.
    Refresh { refresh_token: &'a str },
}

/// The token request for `grant`, with the provider's client authentication.
pub(crate) fn token_request(
    p: &OAuthProvider,
    issuer: Option<&str>,
    token_endpoint: &str,
    grant: Grant<'_>,
) -> Result<http::Request<Bytes>, OAuthError> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    match grant {
        Grant::Code {
            code,
            redirect_uri,
            code_verifier,
        } => {
            form.append_pair("redirect_uri", redirect_uri);
            form.append_pair("code", code);
            if let Some(v) = code_verifier {
                form.append_pair("code_verifier", v);
            }
            form.append_pair("grant_type", "authorization_code");
        }
        Grant::Refresh { refresh_token } => {
            form.append_pair("grant_type", "refresh_token");
            form.append_pair("refresh_token", refresh_token);
        }
    }
    for (k, v) in &p.token_client_params {
        form.append_pair(k, p.client_value(v));
    }
    let secret = p.client_secret.as_deref().unwrap_or("");
    // Auth.js writes a token endpoint's `params` into its URL.
    let with_query;
    let url = if p.token_url_client_params.is_empty() {
        token_endpoint
    } else {
        let mut u = url::Url::parse(token_endpoint).map_err(|e| OAuthError::InvalidResponse {
            step: "token",
            reason: format!("invalid token endpoint: {e}"),
        })?;
        for (k, v) in &p.token_url_client_params {
            u.query_pairs_mut().append_pair(k, p.client_value(v));
        }
        with_query = u.to_string();
        &with_query
    };
    let mut builder = http::Request::post(url)
        .header(http::header::ACCEPT, "application/json")
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded;charset=UTF-8",
        );
    match p.client_auth {
        ClientAuthMethod::ClientSecretBasic => {
            let credentials = format!("{}:{}", form_encode(&p.client_id), form_encode(secret));
            builder = builder.header(
                http::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(credentials)),
            );
        }
        ClientAuthMethod::ClientSecretPost => {
            form.append_pair("client_id", &p.client_id);
            form.append_pair("client_secret", secret);
        }
        ClientAuthMethod::None => {
            form.append_pair("client_id", &p.client_id);
        }
        ClientAuthMethod::ClientSecretJwt | ClientAuthMethod::PrivateKeyJwt => {
            let assertion = client_assertion(p, issuer, token_endpoint, secret)?;
            form.append_pair("client_id", &p.client_id);
            form.append_pair(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            );
            form.append_pair("client_assertion", &assertion);
        }
    }
    builder
        .body(Bytes::from(form.finish()))
        .map_err(|e| OAuthError::InvalidResponse {
            step: "token",
            reason: e.to_string(),
        })
}

/// RFC 7523 client assertion: `{iss, sub: client_id, aud: [issuer, token_endpoint], jti,
/// iat, exp: iat + 60}`, signed HS256 with the client secret (`client_secret_jwt`) or with
/// the client's private key (`private_key_jwt`).
fn client_assertion(
    p: &OAuthProvider,
    issuer: Option<&str>,
    token_endpoint: &str,
    secret: &str,
) -> Result<String, OAuthError> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let aud: Vec<&str> = issuer.into_iter().chain([token_endpoint]).collect();
    let claims = serde_json::json!({
        "iss": p.client_id, "sub": p.client_id, "aud": aud,
        "jti": crate::random::uuid_v4(), "iat": now, "exp": now + 60,
    });
    let signed = match (&p.client_auth, &p.client_private_key) {
        (ClientAuthMethod::PrivateKeyJwt, Some(k)) => {
            let mut header = jsonwebtoken::Header::new(k.alg);
            header.kid.clone_from(&k.kid);
            jsonwebtoken::encode(&header, &claims, &k.key)
        }
        (ClientAuthMethod::PrivateKeyJwt, None) => {
            return Err(OAuthError::InvalidResponse {
                step: "token",
                reason: "private_key_jwt without a client key".into(),
            });
        }
        _ => jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        ),
    };
    signed.map_err(|e| OAuthError::InvalidResponse {
        step: "token",
        reason: format!("could not sign the client assertion: {e}"),
    })
}

fn invalid(reason: &str) -> OAuthError {
    OAuthError::InvalidResponse {
        step: "token",
        reason: reason.to_owned(),
    }
}

/// Validates the token response (RFC 6749 §5.1, Auth.js `lib/actions/callback/oauth/callback.ts`)
/// into a [`TokenSet`].
pub(crate) fn process_token_response(
    p: &OAuthProvider,
    status: u16,
    body: &[u8],
    now: i64,
) -> Result<TokenSet, OAuthError> {
    let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let (status, parsed) = match &p.conform {
        Some(f) => f(status, parsed),
        None => (status, parsed),
    };
    let Value::Object(mut obj) = parsed else {
        return Err(if status == 200 {
            invalid("not a JSON object")
        } else {
            invalid(&format!("HTTP {status}"))
        });
    };
    // An OAuth error, with any status (GitHub answers 200 with an `error`).
    if let Some(e) = obj.get("error").and_then(Value::as_str) {
        return Err(OAuthError::Provider {
            error: e.to_owned(),
        });
    }
    if status != 200 {
        return Err(invalid(&format!("HTTP {status}")));
    }
    let take_str = |obj: &mut JsonObject, k: &str| -> Result<Option<String>, OAuthError> {
        match obj.remove(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(&format!("\"{k}\" must be a string"))),
        }
    };
    let access_token = take_str(&mut obj, "access_token")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("\"access_token\" missing"))?;
    let token_type = take_str(&mut obj, "token_type")?
        .map(|t| t.to_ascii_lowercase())
        .filter(|t| t == "bearer" || t == "dpop")
        .ok_or_else(|| invalid("\"token_type\" missing or not bearer/dpop"))?;
    let expires_in = match obj.remove("expires_in") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    if expires_in.is_some_and(|e| e < 0) {
        return Err(invalid("\"expires_in\" is negative"));
    }
    let id_token = take_str(&mut obj, "id_token")?;
    if p.kind == ProviderType::Oidc && id_token.is_none() {
        return Err(invalid(
            "\"id_token\" missing from an OpenID Connect response",
        ));
    }
    let authorization_details = match obj.remove("authorization_details") {
        Some(Value::Array(a)) => Some(a),
        _ => None,
    };
    Ok(TokenSet {
        access_token: Some(access_token),
        token_type: Some(token_type),
        id_token,
        refresh_token: take_str(&mut obj, "refresh_token")?,
        scope: take_str(&mut obj, "scope")?,
        expires_in,
        // `expires_at` only when `expires_in` is truthy (0 gives none), as Auth.js
        // `lib/actions/callback/oauth/callback.ts` computes it.
        expires_at: expires_in.filter(|e| *e > 0).map(|e| now + e),
        authorization_details,
        extra: obj,
    })
}

/// `GET userinfo` with the access token, asking for `accept`: the successful answer.
async fn get_userinfo(
    client: &dyn HttpClient,
    endpoint: &str,
    access_token: &str,
    accept: &str,
) -> Result<http::Response<Bytes>, OAuthError> {
    let req = http::Request::get(endpoint)
        .header(http::header::ACCEPT, accept)
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {access_token}"),
        )
        .body(Bytes::new())
        .map_err(|e| OAuthError::InvalidResponse {
            step: "userinfo",
            reason: e.to_string(),
        })?;
    let resp = client.send(req).await.map_err(|e| OAuthError::Http {
        step: "userinfo",
        reason: e.to_string(),
    })?;
    if !resp.status().is_success() {
        return Err(OAuthError::InvalidResponse {
            step: "userinfo",
            reason: format!("HTTP {}", resp.status().as_u16()),
        });
    }
    Ok(resp)
}

/// `GET userinfo` with the access token: its JSON object.
pub(crate) async fn userinfo(
    client: &dyn HttpClient,
    endpoint: &str,
    access_token: &str,
) -> Result<JsonObject, OAuthError> {
    let resp = get_userinfo(client, endpoint, access_token, "application/json").await?;
    match serde_json::from_slice::<Value>(resp.body()) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(OAuthError::InvalidResponse {
            step: "userinfo",
            reason: "not a JSON object".into(),
        }),
    }
}

/// `GET userinfo` for a client registered for signed userinfo: the compact JWT it answers
/// (`application/jwt`), signature not yet checked.
pub(crate) async fn signed_userinfo(
    client: &dyn HttpClient,
    endpoint: &str,
    access_token: &str,
) -> Result<String, OAuthError> {
    let resp = get_userinfo(client, endpoint, access_token, "application/jwt").await?;
    std::str::from_utf8(resp.body())
        .map(str::trim)
        .ok()
        .filter(|t| t.split('.').count() == 3)
        .map(str::to_owned)
        .ok_or_else(|| OAuthError::InvalidResponse {
            step: "userinfo",
            reason: "not a signed JWT (application/jwt) as registered".into(),
        })
}

#[allow(dead_code)]
pub(crate) async fn discovery_document(
    client: &dyn HttpClient,
    url: &str,
) -> Result<JsonObject, OAuthError> {
    get_json(client, "discovery", url).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider() -> OAuthProvider {
        OAuthProvider::oidc("oidc", "OIDC")
            .client_id("my client")
            .client_secret("s3cr:et")
            .authorization_param("prompt", "login")
    }

    #[test]
    fn authorization_url_precedence() {
        let p = provider();
        let q = vec![
            ("prompt".to_owned(), "consent".to_owned()),
            ("login_hint".to_owned(), "a@b".to_owned()),
        ];
        let u = authorization_url(
            &p,
            "https://idp.example/auth?scope=openid&foo=1",
            "https://app/auth/callback/oidc",
            &q,
            &CheckValues {
                state: Some("st"),
                code_challenge: Some("ch".into()),
                nonce: Some("n"),
            },
        )
        .unwrap();
        let pairs: Vec<(String, String)> = u.query_pairs().into_owned().collect();
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("response_type"), Some("code"));
        assert_eq!(get("client_id"), Some("my client"));
        assert_eq!(get("redirect_uri"), Some("https://app/auth/callback/oidc"));
        assert_eq!(get("scope"), Some("openid"));
        assert_eq!(get("foo"), Some("1"));
        assert_eq!(
            get("prompt"),
            Some("consent"),
            "request query overrides config"
        );
        assert_eq!(get("login_hint"), Some("a@b"));
        assert_eq!(get("state"), Some("st"));
        assert_eq!(get("code_challenge_method"), Some("S256"));
        assert_eq!(get("nonce"), Some("n"));
        let u = authorization_url(
            &p,
            "https://idp.example/auth",
            "r",
            &[],
            &CheckValues::default(),
        )
        .unwrap();
        assert!(u.as_str().contains("scope=openid+profile+email"));
    }

    #[test]
    fn pkce_challenge_is_s256_of_verifier() {
        let (v, c) = pkce_pair();
        assert_eq!(v.len(), 43);
        assert_eq!(
            c,
            URL_SAFE_NO_PAD.encode(crate::crypto::sha256(v.as_bytes()))
        );
    }

    #[test]
    fn token_request_client_authentication() {
        let p = provider();
        let code = |code, redirect_uri, code_verifier| Grant::Code {
            code,
            redirect_uri,
            code_verifier,
        };
        let r = token_request(
            &p,
            None,
            "https://idp/token",
            code("c0de", "https://app/cb", Some("ver")),
        )
        .unwrap();
        let auth = r.headers()["authorization"].to_str().unwrap().to_owned();
        let decoded = String::from_utf8(
            STANDARD
                .decode(auth.strip_prefix("Basic ").unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(decoded, "my+client:s3cr%3Aet");
        let body = String::from_utf8(r.body().to_vec()).unwrap();
        assert_eq!(
            body,
            "redirect_uri=https%3A%2F%2Fapp%2Fcb&code=c0de&code_verifier=ver&grant_type=authorization_code"
        );
        let p = provider().client_auth(ClientAuthMethod::ClientSecretPost);
        let r = token_request(&p, None, "https://idp/token", code("c", "r", None)).unwrap();
        assert!(r.headers().get("authorization").is_none());
        let body = String::from_utf8(r.body().to_vec()).unwrap();
        assert!(
            body.ends_with("client_id=my+client&client_secret=s3cr%3Aet")
                && !body.contains("code_verifier")
        );
        let p = provider().client_auth(ClientAuthMethod::None);
        let body = String::from_utf8(
            token_request(&p, None, "https://idp/token", code("c", "r", None))
                .unwrap()
                .body()
                .to_vec(),
        )
        .unwrap();
        assert!(body.ends_with("client_id=my+client") && !body.contains("secret"));
        // A refresh grant: the same client authentication, no redirect URI or code.
        let p = provider().client_auth(ClientAuthMethod::ClientSecretPost);
        let refresh = Grant::Refresh {
            refresh_token: "rt/1",
        };
        let r = token_request(&p, None, "https://idp/token", refresh).unwrap();
        assert_eq!(
            String::from_utf8(r.body().to_vec()).unwrap(),
            "grant_type=refresh_token&refresh_token=rt%2F1&client_id=my+client&client_secret=s3cr%3Aet"
        );
    }

    #[test]
    fn token_response_validation() {
        let p = OAuthProvider::oauth("o", "O");
        let ok = br#"{"access_token":"at","token_type":"Bearer","expires_in":"3600","scope":"a b","custom":1}"#;
        let t = process_token_response(&p, 200, ok, 1000).unwrap();
        assert_eq!(t.token_type.as_deref(), Some("bearer"));
        assert_eq!(t.expires_at, Some(4600));
        assert_eq!(t.extra["custom"], 1);
        let t = process_token_response(
            &p,
            200,
            br#"{"access_token":"at","token_type":"bearer","expires_in":0}"#,
            1,
        )
        .unwrap();
        assert_eq!(t.expires_at, None);
        for (status, body) in [
            (200, &br#"{"error":"invalid_grant"}"#[..]),
            (400, br#"{"error":"invalid_grant","error_description":"x"}"#),
        ] {
            assert!(matches!(
                process_token_response(&p, status, body, 0),
                Err(OAuthError::Provider { .. })
            ));
        }
        for (status, body) in [
            (500, &b"<html>oops</html>"[..]),
            (200, b"not json"),
            (200, b"[1]"),
            (200, br#"{"token_type":"bearer"}"#),
            (200, br#"{"access_token":"","token_type":"bearer"}"#),
            (200, br#"{"access_token":"a","token_type":"mac"}"#),
            (
                200,
                br#"{"access_token":"a","token_type":"bearer","expires_in":-1}"#,
            ),
            (200, br#"{"access_token":1,"token_type":"bearer"}"#),
        ] {
            assert!(
                matches!(
                    process_token_response(&p, status, body, 0),
                    Err(OAuthError::InvalidResponse { .. })
                ),
                "{status} {}",
                String::from_utf8_lossy(body)
            );
        }
        let oidc = OAuthProvider::oidc("o", "O");
        assert!(
            process_token_response(
                &oidc,
                200,
                br#"{"access_token":"a","token_type":"bearer"}"#,
                0
            )
            .is_err()
        );
        let conformed = OAuthProvider::oauth("o", "O").conform(|_, mut v| {
            v["token_type"] = "bearer".into();
            (200, v)
        });
        assert!(process_token_response(&conformed, 200, br#"{"access_token":"a"}"#, 0).is_ok());
    }
}
