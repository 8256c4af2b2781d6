//! The signing keys of authcore's tokens, shared by the gateway's signed identity and the
//! OpenID Provider's ID, access and logout tokens: PKCS#8 PEM private keys (Ed25519 → EdDSA,
//! P-256 → ES256, RSA → RS256), each named by its RFC 7638 thumbprint (`kid`), published as
//! a JWK Set, signing with the first key (or the first of an algorithm a client asks for)
//! and verifying what one of them signed.
//!
//! Each key is parsed once, when loaded: a signature is the key pair's own (aws-lc-rs),
//! where `jsonwebtoken::encode` would parse the PKCS#8 key and derive its public half again
//! for every token. The token is the JWS Compact Serialization (RFC 7515 §7.1) of the JSON
//! header and claims, byte for byte what `jsonwebtoken::encode` makes of them.
//!
//! ```
//! use std::path::Path;
//! use authcore_keys::{KeyError, SigningKeys};
//!
//! // No key, or a text that is not a PKCS#8 key: an error naming the file.
//! assert!(matches!(SigningKeys::from_pems(&[]), Err(KeyError::Empty)));
//! let err = SigningKeys::from_pems(&[(Path::new("bad.pem"), b"nope".to_vec())]).unwrap_err();
//! assert!(err.to_string().starts_with("signing key bad.pem"));
//! ```
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RSA_PKCS1_SHA256,
    RsaKeyPair,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Seconds since 1970 (0 before it, `i64::MAX` past it): the clock of the tokens' `iat`
/// and `exp`.
pub fn unix_time() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Why the signing keys cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A file cannot be read.
    #[error("signing key {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not a PKCS#8 Ed25519, P-256 or RSA (2048 to 8192 bits) private key.
    #[error(
        "signing key {path}: not a PKCS#8 PEM Ed25519, P-256 or RSA private key (make one with `openssl genpkey -algorithm ed25519 -out key.pem`)"
    )]
    Unusable {
        /// The file.
        path: PathBuf,
    },
    /// No key was given.
    #[error("[gateway] signing_keys is empty")]
    Empty,
}

/// One key: its `kid` (RFC 7638 thumbprint), algorithm, key pair, public JWK and the key
/// that verifies its signatures.
struct SigningKey {
    kid: String,
    alg: jsonwebtoken::Algorithm,
    pair: KeyPair,
    decoding: jsonwebtoken::DecodingKey,
    jwk: Value,
}

/// A private key, parsed once.
enum KeyPair {
    /// EdDSA (RFC 8037 §3.1).
    Ed25519(Ed25519KeyPair),
    /// ES256: the fixed-length `r || s` signature of RFC 7518 §3.4.
    P256(EcdsaKeyPair),
    /// RS256: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
    Rsa(RsaKeyPair),
}

impl KeyPair {
    /// The signature of `message`; `None` when the library refuses to make one.
    fn sign(&self, message: &[u8]) -> Option<Vec<u8>> {
        match self {
            KeyPair::Ed25519(pair) => Some(pair.sign(message).as_ref().to_vec()),
            KeyPair::P256(pair) => pair
                .sign(&SystemRandom::new(), message)
                .ok()
                .map(|s| s.as_ref().to_vec()),
            KeyPair::Rsa(pair) => {
                let mut signature = vec![0; pair.public_modulus_len()];
                pair.sign(
                    &RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    message,
                    &mut signature,
                )
                .ok()?;
                Some(signature)
            }
        }
    }
}

/// The signing keys: the first signs, all are published (rotation: put the new key first
/// and keep the old one listed until tokens signed with it have expired).
pub struct SigningKeys {
    keys: Vec<SigningKey>,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|k| k.kid.as_str()).collect();
        f.debug_struct("SigningKeys").field("kids", &kids).finish()
    }
}

/// The JWS names of a signing key's algorithm, the one jsonwebtoken signs under first: an
/// Ed25519 key signs as `EdDSA` and as `Ed25519`, its fully specified name (RFC 9864 §2.2).
fn alg_names(alg: jsonwebtoken::Algorithm) -> &'static [&'static str] {
    match alg {
        jsonwebtoken::Algorithm::EdDSA => &["EdDSA", ED25519],
        jsonwebtoken::Algorithm::RS256 => &["RS256"],
        _ => &["ES256"],
    }
}

/// The fully specified JWS algorithm name of Ed25519 signatures (RFC 9864 §2.2).
pub const ED25519: &str = "Ed25519";

/// RFC 7638 thumbprint of a public JWK with these required members (in lexicographic
/// order, as the RFC's canonical form wants).
fn thumbprint(members: &[(&str, &str)]) -> String {
    let canonical: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{}", json!(k), json!(v)))
        .collect();
    URL_SAFE_NO_PAD.encode(Sha256::digest(format!("{{{}}}", canonical.join(","))))
}

impl SigningKeys {
    /// Reads PKCS#8 PEM private keys (Ed25519 → EdDSA, P-256 → ES256, RSA → RS256) from
    /// files.
    pub fn load(paths: &[PathBuf]) -> Result<Self, KeyError> {
        let pems = paths
            .iter()
            .map(|p| {
                std::fs::read(p)
                    .map(|pem| (p.as_path(), pem))
                    .map_err(|source| KeyError::Read {
                        path: p.clone(),
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_pems(&pems)
    }

    /// The keys of PEM texts (each with the path to name in errors).
    pub fn from_pems(pems: &[(&Path, Vec<u8>)]) -> Result<Self, KeyError> {
        if pems.is_empty() {
            return Err(KeyError::Empty);
        }
        let keys = pems
            .iter()
            .map(|(path, pem)| {
                Self::key(pem).ok_or_else(|| KeyError::Unusable {
                    path: path.to_path_buf(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(SigningKeys { keys })
    }

    fn key(pem: &[u8]) -> Option<SigningKey> {
        let (kid, alg, pair, jwk) = Self::private_key(pem)?;
        let public: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk.clone()).ok()?;
        Some(SigningKey {
            kid,
            alg,
            pair,
            decoding: jsonwebtoken::DecodingKey::from_jwk(&public).ok()?,
            jwk,
        })
    }

    /// The `kid`, algorithm, key pair and public JWK of a PEM text.
    fn private_key(pem: &[u8]) -> Option<(String, jsonwebtoken::Algorithm, KeyPair, Value)> {
        let PrivateKeyDer::Pkcs8(der) = PrivateKeyDer::from_pem_slice(pem).ok()? else {
            return None;
        };
        let der = der.secret_pkcs8_der();
        if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
            let kid = thumbprint(&[("crv", "Ed25519"), ("kty", "OKP"), ("x", &x)]);
            let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"});
            return Some((
                kid,
                jsonwebtoken::Algorithm::EdDSA,
                KeyPair::Ed25519(pair),
                jwk,
            ));
        }
        if let Ok(pair) = RsaKeyPair::from_pkcs8(der) {
            let public = pair.public_key();
            let n = URL_SAFE_NO_PAD.encode(public.modulus().big_endian_without_leading_zero());
            let e = URL_SAFE_NO_PAD.encode(public.exponent().big_endian_without_leading_zero());
            let kid = thumbprint(&[("e", &e), ("kty", "RSA"), ("n", &n)]);
            let jwk =
                json!({"kty": "RSA", "n": n, "e": e, "kid": kid, "alg": "RS256", "use": "sig"});
            return Some((kid, jsonwebtoken::Algorithm::RS256, KeyPair::Rsa(pair), jwk));
        }
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der).ok()?;
        let point = pair.public_key().as_ref();
        let (x, y) = point.get(1..)?.split_at(32);
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        let kid = thumbprint(&[("crv", "P-256"), ("kty", "EC"), ("x", &x), ("y", &y)]);
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "alg": "ES256", "use": "sig"});
        Some((
            kid,
            jsonwebtoken::Algorithm::ES256,
            KeyPair::P256(pair),
            jwk,
        ))
    }

    /// The JWK Set of every key.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
    }

    /// The JWK Set of every key, its Ed25519 keys without `alg`: for a provider that signs
    /// with them under both names, `EdDSA` and `Ed25519` (RFC 9864 §2.2). A JWK's `alg`
    /// names the one algorithm the key is for (RFC 7517 §4.4), and libraries that read it
    /// (jose) pick no key whose `alg` is not the token's.
    pub fn jwks_for_both_ed25519_names(&self) -> Value {
        let keys: Vec<Value> = self
            .keys
            .iter()
            .map(|k| {
                let mut jwk = k.jwk.clone();
                if k.alg == jsonwebtoken::Algorithm::EdDSA
                    && let Some(members) = jwk.as_object_mut()
                {
                    members.remove("alg");
                }
                jwk
            })
            .collect();
        json!({ "keys": keys })
    }

    /// The JWS algorithms of the keys (`EdDSA` and `Ed25519`, `ES256`, `RS256`), the signing
    /// one first.
    pub fn algorithms(&self) -> Vec<&'static str> {
        let mut algs: Vec<&'static str> = Vec::new();
        for k in &self.keys {
            for alg in alg_names(k.alg) {
                if !algs.contains(alg) {
                    algs.push(alg);
                }
            }
        }
        algs
    }

    /// `claims` signed with the first key (its `kid` in the header), with header `typ`
    /// (`JWT` when `None`).
    pub fn sign_claims<T: serde::Serialize>(
        &self,
        typ: Option<&str>,
        claims: &T,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        self.sign_claims_as(None, typ, claims)
    }

    /// [`SigningKeys::sign_claims`] with the first key of algorithm `alg` (`RS256`,
    /// `Ed25519`, …; the first key when `None` or when no key has it).
    pub fn sign_claims_as<T: serde::Serialize>(
        &self,
        alg: Option<&str>,
        typ: Option<&str>,
        claims: &T,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let key = alg
            .and_then(|alg| self.keys.iter().find(|k| alg_names(k.alg).contains(&alg)))
            .unwrap_or(&self.keys[0]);
        let header = if alg == Some(ED25519) && key.alg == jsonwebtoken::Algorithm::EdDSA {
            // The fully specified name (RFC 9864 §2.2), which jsonwebtoken's `Header`
            // cannot hold; the same EdDSA signature.
            serde_json::to_vec(
                &json!({"typ": typ.unwrap_or("JWT"), "alg": ED25519, "kid": key.kid}),
            )?
        } else {
            let mut header = jsonwebtoken::Header::new(key.alg);
            header.kid = Some(key.kid.clone());
            if let Some(typ) = typ {
                header.typ = Some(typ.to_owned());
            }
            serde_json::to_vec(&header)?
        };
        // RFC 7515 §7.1: BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature).
        let claims = serde_json::to_vec(claims)?;
        let mut token = String::with_capacity((header.len() + claims.len()) * 4 / 3 + 360);
        URL_SAFE_NO_PAD.encode_string(&header, &mut token);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&claims, &mut token);
        let signature =
            key.pair
                .sign(token.as_bytes())
                .ok_or(jsonwebtoken::errors::ErrorKind::Signing(String::from(
                    "the key refused to sign",
                )))?;
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&signature, &mut token);
        Ok(token)
    }

    /// The claims of `token` when one of the Ed25519 keys (found by `kid`) signed it under
    /// the name `Ed25519` (RFC 9864 §2.2), which jsonwebtoken's `Header` cannot hold, with
    /// header `typ` `typ`: the signature is checked by jsonwebtoken's crypto, the claims are
    /// not validated (the caller checks what must hold of them).
    pub fn verify_ed25519_named<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        typ: &str,
    ) -> Option<T> {
        let (message, signature) = token.rsplit_once('.')?;
        let (header, _) = message.split_once('.')?;
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        let field = |name: &str| header.get(name).and_then(Value::as_str);
        if field("alg") != Some(ED25519) || field("typ") != Some(typ) {
            return None;
        }
        let kid = field("kid")?;
        let key = self
            .keys
            .iter()
            .find(|k| k.kid == kid && k.alg == jsonwebtoken::Algorithm::EdDSA)?;
        let valid =
            jsonwebtoken::crypto::verify(signature, message.as_bytes(), &key.decoding, key.alg)
                .ok()?;
        if !valid {
            return None;
        }
        jsonwebtoken::dangerous::insecure_decode_claims(token).ok()
    }

    /// A validation accepting the keys' own algorithms, for [`SigningKeys::verify`]: the
    /// caller adds what else must hold (issuer, audience, expiry).
    pub fn validation(&self) -> jsonwebtoken::Validation {
        let mut v = jsonwebtoken::Validation::new(self.keys[0].alg);
        v.algorithms = self.keys.iter().map(|k| k.alg).collect();
        v.algorithms.dedup();
        v
    }

    /// The claims of `token` when one of the keys signed it (found by `kid`, its own
    /// algorithm only) and `validation` (made by [`SigningKeys::validation`]) holds; the
    /// header's `typ` must be `typ`.
    pub fn verify<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        typ: &str,
        validation: &jsonwebtoken::Validation,
    ) -> Option<T> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        if header.typ.as_deref() != Some(typ) {
            return None;
        }
        let kid = header.kid?;
        let key = self.keys.iter().find(|k| k.kid == kid)?;
        if header.alg != key.alg {
            return None;
        }
        // jsonwebtoken wants every algorithm of the validation in the key's family: the
        // key found decides, its own algorithm only (the validation as given when that is
        // all it lists, as it is for keys of one algorithm).
        let own;
        let validation = if validation.algorithms == [key.alg] {
            validation
        } else {
            let mut v = validation.clone();
            v.algorithms = vec![key.alg];
            own = v;
            &own
        };
        jsonwebtoken::decode::<T>(token, &key.decoding, validation)
            .ok()
            .map(|d| d.claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key made with `openssl genpkey -algorithm ed25519` (a test key, nothing signs with
    /// it elsewhere); P-256 keys are made per test.
    const ED25519: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDVxnv4w4wgPqJ158P31oPHcIhs3jJ0M3H9yYO2Z5T+g\n-----END PRIVATE KEY-----\n";

    fn p256_pem() -> Vec<u8> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        pem(doc.as_ref())
    }

    fn rsa_pem() -> Vec<u8> {
        use aws_lc_rs::encoding::AsDer as _;
        let pair = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        pem(pair.as_der().unwrap().as_ref())
    }

    fn pem(der: &[u8]) -> Vec<u8> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
        .into_bytes()
    }

    #[test]
    fn tokens_are_signed_with_the_key_of_the_algorithm_asked_for() {
        let p = Path::new("k.pem");
        let pems = [
            (p, ED25519.as_bytes().to_vec()),
            (p, rsa_pem()),
            (p, p256_pem()),
        ];
        let keys = SigningKeys::from_pems(&pems).unwrap();
        assert_eq!(keys.algorithms(), ["EdDSA", "Ed25519", "RS256", "ES256"]);
        let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(keys.jwks()).unwrap();
        for (asked, signed) in [
            (None, jsonwebtoken::Algorithm::EdDSA),
            (Some("RS256"), jsonwebtoken::Algorithm::RS256),
            (Some("ES256"), jsonwebtoken::Algorithm::ES256),
            (Some("PS512"), jsonwebtoken::Algorithm::EdDSA),
        ] {
            let token = keys
                .sign_claims_as(asked, Some("at+jwt"), &json!({"sub": "u1"}))
                .unwrap();
            let header = jsonwebtoken::decode_header(&token).unwrap();
            assert_eq!(header.alg, signed, "{asked:?}");
            let jwk = jwks.find(header.kid.as_deref().unwrap()).unwrap();
            let mut v = jsonwebtoken::Validation::new(signed);
            v.required_spec_claims.clear();
            v.validate_exp = false;
            v.validate_aud = false;
            let key = jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap();
            assert_eq!(
                jsonwebtoken::decode::<Value>(&token, &key, &v)
                    .unwrap()
                    .claims["sub"],
                "u1"
            );
            // And through the keys' own check, whichever key signed.
            let mut v = keys.validation();
            v.required_spec_claims.clear();
            v.validate_exp = false;
            v.validate_aud = false;
            assert!(
                keys.verify::<Value>(&token, "at+jwt", &v).is_some(),
                "{asked:?}"
            );
        }
    }

    /// Asked for `Ed25519` (RFC 9864), the Ed25519 key signs with that name in the header:
    /// the same EdDSA signature, which the published key verifies; the JWK Set for both
    /// names leaves out the Ed25519 key's `alg`, and only its.
    #[test]
    fn ed25519_signs_under_its_fully_specified_name() {
        let p = Path::new("k.pem");
        let keys =
            SigningKeys::from_pems(&[(p, ED25519.as_bytes().to_vec()), (p, p256_pem())]).unwrap();
        let token = keys
            .sign_claims_as(Some("Ed25519"), None, &json!({"sub": "u1"}))
            .unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let kid = header["kid"].as_str().unwrap();
        assert_eq!(
            (header["alg"].as_str(), header["typ"].as_str()),
            (Some("Ed25519"), Some("JWT"))
        );
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["sub"], "u1");
        let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(keys.jwks()).unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(jwks.find(kid).unwrap()).unwrap();
        let message = format!("{}.{}", parts[0], parts[1]);
        let verified = |message: &str| {
            jsonwebtoken::crypto::verify(
                parts[2],
                message.as_bytes(),
                &key,
                jsonwebtoken::Algorithm::EdDSA,
            )
            .unwrap()
        };
        assert!(verified(&message));
        // The header is signed: with `EdDSA` in its place, the signature fails.
        let other = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&json!({"typ": "JWT", "alg": "EdDSA", "kid": kid})).unwrap(),
        );
        assert!(!verified(&format!("{other}.{}", parts[1])));
        let both = keys.jwks_for_both_ed25519_names();
        assert_eq!(both["keys"][0]["kid"], kid);
        assert!(both["keys"][0].get("alg").is_none(), "{both}");
        assert_eq!(both["keys"][1]["alg"], "ES256", "{both}");
        assert_eq!(keys.jwks()["keys"][0]["alg"], "EdDSA");
        // The keys' own check of that name: the signature holds, and fails once altered.
        let claims: Value = keys.verify_ed25519_named(&token, "JWT").unwrap();
        assert_eq!(claims["sub"], "u1");
        assert!(
            keys.verify_ed25519_named::<Value>(&token, "logout+jwt")
                .is_none()
        );
        let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"u2"}"#);
        let altered = format!("{}.{payload}.{}", parts[0], parts[2]);
        assert!(
            keys.verify_ed25519_named::<Value>(&altered, "JWT")
                .is_none()
        );
        let eddsa = keys.sign_claims(None, &json!({"sub": "u1"})).unwrap();
        assert!(keys.verify_ed25519_named::<Value>(&eddsa, "JWT").is_none());
    }

    #[test]
    fn tokens_are_what_jsonwebtoken_encodes() {
        // EdDSA and RSASSA-PKCS1-v1_5 are deterministic: the same bytes as
        // jsonwebtoken::encode with the same key, header and claims.
        let p = Path::new("k.pem");
        let rsa = rsa_pem();
        let claims = json!({"sub": "u1", "aud": "c1", "exp": 2_000_000_000, "name": "Zoë \"Z\""});
        for (pem, alg, key) in [
            (
                ED25519.as_bytes().to_vec(),
                jsonwebtoken::Algorithm::EdDSA,
                jsonwebtoken::EncodingKey::from_ed_pem(ED25519.as_bytes()).unwrap(),
            ),
            (
                rsa.clone(),
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::EncodingKey::from_rsa_pem(&rsa).unwrap(),
            ),
        ] {
            let keys = SigningKeys::from_pems(&[(p, pem)]).unwrap();
            for typ in [None, Some("at+jwt")] {
                let ours = keys.sign_claims(typ, &claims).unwrap();
                let mut header = jsonwebtoken::Header::new(alg);
                header.kid = Some(keys.keys[0].kid.clone());
                if let Some(typ) = typ {
                    header.typ = Some(typ.to_owned());
                }
                let theirs = jsonwebtoken::encode(&header, &claims, &key).unwrap();
                assert_eq!(ours, theirs, "{alg:?} {typ:?}");
            }
        }
    }

    #[test]
    fn a_token_altered_anywhere_is_refused() {
        let p = Path::new("k.pem");
        let keys =
            SigningKeys::from_pems(&[(p, ED25519.as_bytes().to_vec()), (p, p256_pem())]).unwrap();
        let mut v = keys.validation();
        v.required_spec_claims.clear();
        v.validate_exp = false;
        v.validate_aud = false;
        for alg in ["EdDSA", "ES256"] {
            let token = keys
                .sign_claims_as(Some(alg), Some("at+jwt"), &json!({"sub": "u1"}))
                .unwrap();
            assert!(
                keys.verify::<Value>(&token, "at+jwt", &v).is_some(),
                "{alg}"
            );
            assert!(
                keys.verify::<Value>(&token, "JWT", &v).is_none(),
                "{alg}: typ"
            );
            for i in 0..token.len() {
                let mut bytes = token.clone().into_bytes();
                bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
                let altered = String::from_utf8(bytes).unwrap();
                if altered != token {
                    assert!(
                        keys.verify::<Value>(&altered, "at+jwt", &v).is_none(),
                        "{alg}: byte {i} altered"
                    );
                }
            }
        }
    }

    #[test]
    fn unusable_keys_are_named() {
        let err = SigningKeys::from_pems(&[(Path::new("bad.pem"), b"nope".to_vec())]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("signing key bad.pem: not a PKCS#8"),
            "{err}"
        );
        assert!(matches!(SigningKeys::from_pems(&[]), Err(KeyError::Empty)));
    }

    #[test]
    fn kid_is_the_rfc7638_thumbprint() {
        // RFC 8037 appendix A.3: the Ed25519 example key's thumbprint.
        assert_eq!(
            thumbprint(&[
                ("crv", "Ed25519"),
                ("kty", "OKP"),
                ("x", "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
            ]),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }
}
