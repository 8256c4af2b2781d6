//! Microsoft Entra ID with the multi-tenant `common` issuer. Microsoft cannot run here, so a
//! stand-in `HttpClient` serves its discovery document (issuer with `{tenantid}`), a JWKS
//! and a token response with an ES256 ID token signed by a key generated in the test.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::BoxError;
use authcore::http_client::HttpClient;
use authcore::providers::catalog::{MicrosoftEntraIdOptions, microsoft_entra_id};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use serde_json::{Value, json};

const DISCOVERY: &str =
    "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration";
const TEMPLATE: &str = "https://login.microsoftonline.com/{tenantid}/v2.0";

struct FakeMicrosoft {
    pkcs8: Vec<u8>,
    jwk: Value,
    /// (iss, tid) to put into the next ID token.
    id_token_issuer: Mutex<(String, String)>,
    nonce: Mutex<Option<String>>,
}

impl FakeMicrosoft {
    fn new() -> Arc<Self> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = pair.public_key().as_ref().to_vec(); // 0x04 || x || y
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Arc::new(FakeMicrosoft {
            pkcs8: pkcs8.as_ref().to_vec(),
            jwk,
            id_token_issuer: Mutex::new((
                "https://login.microsoftonline.com/tenant-1/v2.0".into(),
                "tenant-1".into(),
            )),
            nonce: Mutex::new(None),
        })
    }

    fn id_token(&self) -> String {
        let (iss, tid) = self.id_token_issuer.lock().unwrap().clone();
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let mut claims = json!({
            "iss": iss, "tid": tid, "aud": "entra-client", "sub": "entra-user-1",
            "iat": now, "exp": now + 600, "name": "Entra User", "email": "Entra@Example.com",
        });
        if let Some(n) = self.nonce.lock().unwrap().clone() {
            claims["nonce"] = n.into();
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_ec_der(&self.pkcs8),
        )
        .unwrap()
    }
}

struct Client(Arc<FakeMicrosoft>);

#[authcore::async_trait]
impl HttpClient for Client {
    async fn send(&self, req: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        let url = req.uri().to_string();
        let body = match url.as_str() {
            DISCOVERY => json!({
                "issuer": TEMPLATE,
                "authorization_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
                "token_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
                "userinfo_endpoint": "https://graph.microsoft.com/oidc/userinfo",
                "jwks_uri": "https://login.microsoftonline.com/common/discovery/v2.0/keys",
                "id_token_signing_alg_values_supported": ["ES256"],
            }),
            "https://login.microsoftonline.com/common/discovery/v2.0/keys" => {
                json!({ "keys": [self.0.jwk] })
            }
            "https://login.microsoftonline.com/common/oauth2/v2.0/token" => json!({
                "access_token": "at", "token_type": "Bearer", "expires_in": 3600,
                "id_token": self.0.id_token(),
            }),
            other => return Err(format!("unexpected request to {other}").into()),
        };
        Ok(http::Response::new(Bytes::from(serde_json::to_vec(&body)?)))
    }
}

async fn sign_in(auth: &authcore::Auth) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let r = send(
        auth,
        post("/auth/signin/microsoft-entra-id")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302, "{:?}", r.text());
    let pkce = r.cookie("__Secure-authjs.pkce.code_verifier").unwrap();
    // A fresh code per sign-in: a used one is refused before the token request.
    static CODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let code = CODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    send(
        auth,
        get(&format!(
            "/auth/callback/microsoft-entra-id?code=c0de{code}"
        ))
        .header(
            "cookie",
            format!("{csrf}; __Secure-authjs.pkce.code_verifier={pkce}"),
        )
        .body(empty())
        .unwrap(),
    )
    .await
}

#[tokio::test]
async fn common_tenant_checks_the_issuer_per_tenant() {
    let fake = FakeMicrosoft::new();
    let provider = microsoft_entra_id(MicrosoftEntraIdOptions::default())
        .client_id("entra-client")
        .client_secret("entra-secret")
        .http_client(Client(fake.clone()));
    let (auth, rec) = auth_with(builder().provider(provider));

    let r = sign_in(&auth).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test"),
        "{:?}",
        rec.errors.lock().unwrap()
    );
    let claims = auth
        .config()
        .jwt()
        .decode(&r.cookie(SESSION_COOKIE).unwrap(), SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["name"], "Entra User");
    assert_eq!(
        claims["email"], "entra@example.com",
        "emails are lower-cased"
    );

    // `iss` of another tenant than the token's own `tid`: refused.
    *fake.id_token_issuer.lock().unwrap() = (
        "https://login.microsoftonline.com/tenant-2/v2.0".into(),
        "tenant-1".into(),
    );
    let r = sign_in(&auth).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());

    // A `tid` that would break out of the issuer template: refused.
    *fake.id_token_issuer.lock().unwrap() = (
        "https://login.microsoftonline.com/x/y/v2.0".into(),
        "x/y".into(),
    );
    let r = sign_in(&auth).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

#[tokio::test]
async fn templated_issuer_is_refused_without_the_opt_in() {
    let fake = FakeMicrosoft::new();
    let provider = microsoft_entra_id(MicrosoftEntraIdOptions::default())
        .tenant_templated_issuer(false)
        .client_id("entra-client")
        .client_secret("entra-secret")
        .http_client(Client(fake));
    let (auth, rec) = auth_with(builder().provider(provider));
    // Discovery fails at sign-in already: the document's issuer does not match.
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signin/microsoft-entra-id")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(
        rec.errors
            .lock()
            .unwrap()
            .iter()
            .any(|(_, m)| m.contains("Callback route error")),
        "{:?}",
        rec.errors.lock().unwrap()
    );
}

/// Serves a discovery document only at a non-standard URL.
struct CustomDiscovery;

#[authcore::async_trait]
impl HttpClient for CustomDiscovery {
    async fn send(&self, req: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        if req.uri() != "https://idp.example/custom/discovery" {
            return Ok(http::Response::builder().status(404).body(Bytes::new())?);
        }
        let doc = json!({
            "issuer": "https://idp.example",
            "authorization_endpoint": "https://idp.example/authz",
            "token_endpoint": "https://idp.example/token",
            "jwks_uri": "https://idp.example/jwks",
        });
        Ok(http::Response::new(Bytes::from(serde_json::to_vec(&doc)?)))
    }
}

#[tokio::test]
async fn well_known_overrides_the_discovery_url() {
    let provider = authcore::providers::OAuthProvider::oidc("wk", "Well-known")
        .issuer("https://idp.example")
        .well_known("https://idp.example/custom/discovery")
        .client_id("c")
        .client_secret("s")
        .http_client(CustomDiscovery);
    let (auth, _) = auth_with(builder().provider(provider));
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signin/wk")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert!(
        r.location()
            .unwrap()
            .starts_with("https://idp.example/authz?"),
        "{:?}",
        r.location()
    );
}
