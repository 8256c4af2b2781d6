//! A host's own session-token format (Auth.js `jwt: { encode, decode }`): an
//! EdDSA-signed JWS that another service verifies with the public key alone, used for
//! sign-in, the session action (read and update), `get_token`, `read_session` (what the
//! framework extractors call) and sign-out; JWEs and forged tokens are no session.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use authcore::BoxError;
use authcore::jwt::{JwtClaims, SessionTokenCodec};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Value, json};

/// Signs session claims as an EdDSA JWS (`iat`, `exp` from `max_age`).
struct JwsCodec {
    signing: EncodingKey,
    verifying: DecodingKey,
}

impl JwsCodec {
    /// From a 32-byte Ed25519 seed.
    fn new(seed: [u8; 32]) -> JwsCodec {
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        // PKCS#8 v1 of an Ed25519 private key: a fixed prefix and the seed (RFC 8410 §7).
        let mut pkcs8 = hex::decode("302e020100300506032b657004220420").unwrap();
        pkcs8.extend_from_slice(&seed);
        JwsCodec {
            signing: EncodingKey::from_ed_der(&pkcs8),
            verifying: DecodingKey::from_ed_der(key.verifying_key().as_bytes()),
        }
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl SessionTokenCodec for JwsCodec {
    fn encode(&self, claims: &JwtClaims, _salt: &str, max_age: u64) -> Result<String, BoxError> {
        let mut claims = claims.clone();
        claims.insert("iat".into(), json!(now()));
        claims.insert("exp".into(), json!(now() + max_age as i64));
        Ok(jsonwebtoken::encode(
            &Header::new(Algorithm::EdDSA),
            &claims,
            &self.signing,
        )?)
    }

    fn decode(&self, token: &str, _salt: &str) -> Result<Option<JwtClaims>, BoxError> {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_required_spec_claims(&["exp"]);
        Ok(Some(
            jsonwebtoken::decode::<JwtClaims>(token, &self.verifying, &validation)?.claims,
        ))
    }
}

/// Another service: verifies a session cookie with the public key only.
fn verify_elsewhere(token: &str, public: &DecodingKey) -> Value {
    let validation = Validation::new(Algorithm::EdDSA);
    Value::Object(
        jsonwebtoken::decode::<JwtClaims>(token, public, &validation)
            .unwrap()
            .claims,
    )
}

async fn sign_in(auth: &authcore::Auth) -> String {
    let (csrf, token) = csrf_pair();
    let r = send(
        auth,
        post("/auth/callback/credentials")
            .header("cookie", csrf)
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await;
    r.cookie(SESSION_COOKIE).expect("signed in")
}

#[tokio::test]
async fn a_signed_jws_session_token_end_to_end() {
    let seed = [7u8; 32];
    let (auth, _) = auth_with(builder().session_token_codec(JwsCodec::new(seed)));
    let public = JwsCodec::new(seed).verifying;

    // Sign-in writes a JWS another service can verify.
    let token = sign_in(&auth).await;
    assert_eq!(token.split('.').count(), 3, "a compact JWS, not a JWE");
    let claims = verify_elsewhere(&token, &public);
    assert_eq!(claims["email"], "demo@example.com");
    assert_eq!(claims["sub"], "1");

    // The session action reads it and refreshes it as a JWS.
    let cookie = format!("{SESSION_COOKIE}={token}");
    let r = get_session(&auth, &cookie).await;
    assert_eq!(r.json()["user"]["email"], "demo@example.com");
    let refreshed = r.cookie(SESSION_COOKIE).unwrap();
    assert_eq!(verify_elsewhere(&refreshed, &public)["sub"], "1");

    // get_token and read_session (the extractors' path) decode with it too.
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", cookie.parse().unwrap());
    let secure = authcore::GetTokenOptions::new().secure_cookie(true);
    assert_eq!(auth.get_token(&headers, &secure).unwrap()["sub"], "1");
    let lookup = auth
        .read_session(&url("/").parse().unwrap(), &headers, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        lookup.session.unwrap().json()["user"]["email"],
        "demo@example.com"
    );

    // An update goes into the JWS.
    let (csrf, csrf_token) = csrf_pair();
    let r = send(
        &auth,
        http::Request::post(url("/auth/session"))
            .header("content-type", "application/json")
            .header("cookie", format!("{cookie}; {csrf}"))
            .body(http_body_util::Full::new(
                json!({"csrfToken": csrf_token, "data": {}})
                    .to_string()
                    .into(),
            ))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(verify_elsewhere(&r.cookie(SESSION_COOKIE).unwrap(), &public)["exp"].is_i64());

    // A JWE (the default format), a JWS signed by another key and a tampered one: no session.
    let (plain, _) = crate::common::auth();
    let jwe = session_cookie(&plain, json!({"sub": "1", "email": "demo@example.com"}));
    let foreign = JwsCodec::new([9u8; 32])
        .encode(
            json!({"sub": "1", "email": "demo@example.com"})
                .as_object()
                .unwrap(),
            SESSION_COOKIE,
            60,
        )
        .unwrap();
    let mut tampered = token.clone();
    tampered.replace_range(tampered.len() - 4.., "AAAA");
    for bad in [
        jwe,
        format!("{SESSION_COOKIE}={foreign}"),
        format!("{SESSION_COOKIE}={tampered}"),
    ] {
        let r = get_session(&auth, &bad).await;
        assert_eq!(r.text(), "null", "{bad}");
        headers.insert("cookie", bad.parse().unwrap());
        assert!(auth.get_token(&headers, &secure).is_none());
    }

    // Sign-out decodes it for the event and clears the cookie.
    let (csrf, csrf_token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{cookie}; {csrf}"))
            .body(form(&[("csrfToken", &csrf_token)]))
            .unwrap(),
    )
    .await;
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
}
