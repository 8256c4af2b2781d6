//! JWE / JWT decoding (`authcore::jwt::JwtCodec`, `authcore::jose::KeyRing`) with fixed
//! secrets and salts.
//!
//! The first input byte picks a mode; the rest is its payload:
//! - 0: the payload is a token string: `JwtCodec::decode_at`, `KeyRing::decrypt`, and
//!   `Auth::get_token` with it as a (percent-encoded) `Authorization: Bearer` value;
//! - 1: the payload is a plaintext: encrypted with `KeyRing::encrypt` (so it passes the AEAD),
//!   then decoded: the claim-set parsing and time checks see arbitrary JSON;
//! - 2: `header 0xFF plaintext`: the harness builds an `A256GCM` JWE with that protected
//!   header under the real derived key, so header parsing, `kid` selection and `enc`
//!   dispatch run on tokens that authenticate;
//! - 3: the payload is a JSON claims set: `encode_at` then `decode_at` must give it back.
//!
//! Properties: decryption of an encrypted plaintext gives it back; a token accepted in mode 2
//! had `alg: dir`, `enc: A256GCM`, no `crit` / `zip`, and no `kid` or the key's; encode →
//! decode round-trips (`iat`, `exp`, `jti` set by the encoder).

use std::sync::OnceLock;

use crate::{NOW, SECRET, SESSION_COOKIE, request_auth, split_ff};
use aes_gcm::Aes256Gcm;
use aes_gcm::aead::{Aead as _, KeyInit as _, Payload};
use authcore::http;
use authcore::jose::{DerivedKey, Enc, KeyRing};
use authcore::jwt::{JwtClaims, JwtCodec, JwtError};
use authcore::serde_json::Value;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A second, older secret: tokens under it must still decode (rotation).
const OLD_SECRET: &str = "an-older-fuzz-secret-that-still-decodes";

struct Fixture {
    codec: JwtCodec,
    ring: KeyRing,
    gcm_key: DerivedKey,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| Fixture {
        codec: JwtCodec::new(&[SECRET, OLD_SECRET]).expect("valid secrets"),
        ring: KeyRing::new(&[SECRET.as_bytes(), OLD_SECRET.as_bytes()]).expect("valid secrets"),
        gcm_key: DerivedKey::derive(SECRET.as_bytes(), SESSION_COOKIE, Enc::A256Gcm),
    })
}

fn time_claims_ok(claims: &JwtClaims) -> bool {
    let num = |k: &str| claims.get(k).map(Value::as_f64);
    // `iat` must be a number when present; `nbf`/`exp` must be numbers and in range.
    !matches!(num("iat"), Some(None))
        && match num("nbf") {
            None => true,
            Some(None) => false,
            Some(Some(nbf)) => nbf <= (NOW + 15) as f64,
        }
        && match num("exp") {
            None => true,
            Some(None) => false,
            Some(Some(exp)) => exp > (NOW - 15) as f64,
        }
}

/// Claims as sorted `name → JSON text` (independent of map order and number representation).
fn canonical(claims: &JwtClaims) -> std::collections::BTreeMap<&str, String> {
    claims
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_string()))
        .collect()
}

/// One fuzz input (the `fuzz_targets/jwt_decode.rs` target and the regression test).
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    match mode % 4 {
        0 => {
            let Ok(token) = std::str::from_utf8(rest) else {
                return;
            };
            let decoded = f.codec.decode_at(token, SESSION_COOKIE, NOW);
            let decrypted = f.ring.decrypt(token, SESSION_COOKIE);
            // The codec is the ring plus JSON and time checks: it cannot accept more.
            if let Ok(Some(_)) = decoded {
                assert!(
                    decrypted.is_ok(),
                    "codec accepted what the key ring refused"
                );
            }
            if decrypted.is_err() && !token.is_empty() {
                assert!(matches!(decoded, Err(JwtError::Jose(_))), "{decoded:?}");
            }
            let enc = authcore::cookies::encode_uri_component(token);
            let mut headers = http::HeaderMap::new();
            if let Ok(v) = http::HeaderValue::from_str(&format!("Bearer {enc}")) {
                headers.insert(http::header::AUTHORIZATION, v);
                let auth = request_auth();
                // The raw token is the percent-decoded Bearer value.
                let options = authcore::GetTokenOptions::new();
                assert_eq!(
                    auth.get_raw_token(&headers, &options).as_deref(),
                    Some(token)
                );
                std::hint::black_box(auth.get_token(&headers, &options));
            }
        }
        1 => {
            let token = f
                .ring
                .encrypt(rest.to_vec(), SESSION_COOKIE)
                .expect("RNG works");
            let back = f
                .ring
                .decrypt(&token, SESSION_COOKIE)
                .expect("own token decrypts");
            assert_eq!(back, rest, "decrypt(encrypt(p)) != p");
            let decoded = f.codec.decode_at(&token, SESSION_COOKIE, NOW);
            match authcore::serde_json::from_slice::<Value>(rest) {
                Ok(Value::Object(claims)) => {
                    if time_claims_ok(&claims) {
                        let got = decoded
                            .expect("a valid claims set decodes")
                            .expect("non-empty");
                        assert_eq!(got, claims);
                    } else {
                        assert!(decoded.is_err(), "bad time claims accepted: {claims:?}");
                    }
                }
                _ => assert!(
                    matches!(decoded, Err(JwtError::InvalidPayload)),
                    "non-object payload: {decoded:?}"
                ),
            }
        }
        2 => {
            let (header, plaintext) = split_ff(rest);
            let header_b64 = URL_SAFE_NO_PAD.encode(header);
            let iv = [7u8; 12];
            let cipher = Aes256Gcm::new_from_slice(f.gcm_key.as_bytes()).expect("32-byte key");
            let sealed = cipher
                .encrypt(
                    (&iv).into(),
                    Payload {
                        msg: plaintext,
                        aad: header_b64.as_bytes(),
                    },
                )
                .expect("GCM encrypts");
            let (ct, tag) = sealed.split_at(sealed.len() - 16);
            let token = format!(
                "{header_b64}..{}.{}.{}",
                URL_SAFE_NO_PAD.encode(iv),
                URL_SAFE_NO_PAD.encode(ct),
                URL_SAFE_NO_PAD.encode(tag)
            );
            if let Ok(pt) = f.ring.decrypt(&token, SESSION_COOKIE) {
                assert_eq!(pt, plaintext);
                let h: Value =
                    authcore::serde_json::from_slice(header).expect("accepted header is JSON");
                let h = h.as_object().expect("accepted header is an object");
                assert_eq!(h.get("alg").and_then(Value::as_str), Some("dir"));
                assert_eq!(h.get("enc").and_then(Value::as_str), Some("A256GCM"));
                assert!(!h.contains_key("crit") && !h.contains_key("zip"), "{h:?}");
                match h.get("kid") {
                    None => {}
                    Some(kid) => {
                        assert_eq!(kid.as_str(), Some(f.gcm_key.kid()), "wrong kid accepted")
                    }
                }
            }
            std::hint::black_box(f.codec.decode_at(&token, SESSION_COOKIE, NOW).ok());
        }
        _ => {
            let (max_age, json) = match rest.split_first() {
                Some((&b, json)) => (u64::from(b) * 97, json),
                None => return,
            };
            let Ok(Value::Object(claims)) = authcore::serde_json::from_slice::<Value>(json) else {
                return;
            };
            let token = f
                .codec
                .encode_at(&claims, SESSION_COOKIE, max_age, NOW)
                .expect("RNG works");
            // What a JSON reader makes of the claims as written (serde_json's float parsing
            // is not exactly round-trip for every literal, e.g. 100-digit integers).
            let Ok(Value::Object(mut expected)) =
                authcore::serde_json::from_str::<Value>(&Value::Object(claims.clone()).to_string())
            else {
                panic!("claims do not serialise to a JSON object");
            };
            expected.insert("iat".into(), NOW.into());
            expected.insert("exp".into(), (NOW + max_age as i64).into());
            let nbf_ok = match claims.get("nbf") {
                None => true,
                Some(v) => v.as_f64().is_some_and(|n| n <= (NOW + 15) as f64),
            };
            match f.codec.decode_at(&token, SESSION_COOKIE, NOW) {
                Ok(Some(mut got)) => {
                    assert!(nbf_ok, "bad nbf accepted");
                    let jti = got.get("jti").and_then(Value::as_str).map(str::to_owned);
                    assert!(jti.is_some_and(|j| j.len() == 36), "jti is not a UUID");
                    got.remove("jti");
                    expected.remove("jti");
                    assert_eq!(
                        canonical(&got),
                        canonical(&expected),
                        "encode/decode round trip"
                    );
                }
                other => assert!(!nbf_ok, "valid claims refused: {other:?}"),
            }
        }
    }
}
