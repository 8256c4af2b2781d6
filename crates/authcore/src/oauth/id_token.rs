//! OpenID Connect ID token verification (OpenID Connect Core §3.1.3.7).
//!
//! Auth.js (through oauth4webapi) checks the ID token's claims but trusts TLS for its
//! integrity and never verifies the signature. authcore keeps exactly those claim checks
//! and additionally verifies the JWS signature against the provider's JWK Set
//! (`jwks_uri`) — a deliberate deviation from Auth.js, to be listed with the others in
//! `docs/architecture.md`.
//!
//! The module is sans-I/O: the caller fetches the JWKS, parses it with
//! [`Jwks::from_json`] and calls [`verify_id_token`]. When verification fails with
//! [`IdTokenError::UnknownKey`] the caller may refetch the JWKS once (key rotation);
//! [`id_token_kid`] tells it which `kid` the token asked for.
//!
//! `jsonwebtoken` is used for the signature only; its claim validation has different
//! semantics (leeway, `aud` handling) from oauth4webapi's, so the claim checks live here.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE_NO_PAD, URL_SAFE_NO_PAD_INDIFFERENT};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

/// Largest token accepted, in bytes. ID tokens are a few KiB; the bound keeps the work
/// done on hostile input small.
const MAX_TOKEN_LEN: usize = 64 * 1024;

/// Keys kept from one JWK Set; later ones are ignored. Real sets hold a handful, and a
/// kid-less token is tried against every compatible key, so this bounds that work.
const MAX_JWKS_KEYS: usize = 100;

/// Largest RSA modulus accepted (8192 bits, plus a possible leading zero byte), matching
/// aws-lc's verification limit.
const MAX_RSA_MODULUS_LEN: usize = 8192 / 8 + 1;

/// Largest RSA public exponent accepted, in bytes (aws-lc allows at most 33 bits).
const MAX_RSA_EXPONENT_LEN: usize = 8;

/// An `alg` or `kid` copied into an error is cut to this many characters: they are
/// attacker-chosen strings that end up in logs.
const MAX_DIAGNOSTIC_CHARS: usize = 64;

/// Why an ID token (or a JWK Set) was rejected.
///
/// Messages never contain the token, its claims or key material; only an `alg` name or
/// a `kid` (both cut to 64 characters) may appear.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdTokenError {
    /// The token (or JWK Set) is not well-formed: wrong number of parts, bad base64url,
    /// a header or payload that is not a JSON object, an unsupported `crit` header, …
    #[error("malformed ID token or JWK Set: {reason}")]
    Malformed {
        /// What is wrong, as a fixed phrase.
        reason: &'static str,
    },
    /// The header `alg` is not in [`IdTokenChecks::allowed_algs`].
    #[error("ID token algorithm {alg:?} is not allowed for this client")]
    AlgorithmNotAllowed {
        /// The header `alg` (at most 64 characters).
        alg: String,
    },
    /// The header `alg` is allowed by the caller but never accepted here: `none`, every
    /// HMAC algorithm (a public key must never be used as an HMAC secret), or an
    /// algorithm this module has no verifier for.
    #[error("ID token algorithm {alg:?} is not supported")]
    UnsupportedAlgorithm {
        /// The header `alg` (at most 64 characters).
        alg: String,
    },
    /// No key of the JWK Set can verify this token: none has the header's `kid`, or
    /// none is compatible with the header's `alg`. Refetching the JWKS may help.
    #[error("no usable key in the JWK Set for kid {kid:?}")]
    UnknownKey {
        /// The header `kid`, if any (at most 64 characters; use [`id_token_kid`] for
        /// the full value).
        kid: Option<String>,
    },
    /// The signature does not verify with the selected key(s).
    #[error("ID token signature is invalid")]
    InvalidSignature,
    /// A required claim is absent.
    #[error("ID token is missing the {claim:?} claim")]
    MissingClaim {
        /// The claim name.
        claim: &'static str,
    },
    /// A claim has the wrong JSON type (e.g. `exp` not a number, `aud` not a string or
    /// an array of strings).
    #[error("ID token claim {claim:?} has an invalid type")]
    InvalidClaim {
        /// The claim name.
        claim: &'static str,
    },
    /// `iss` differs from the expected issuer.
    #[error("ID token issuer does not match")]
    IssuerMismatch,
    /// `aud` does not contain the client id.
    #[error("ID token audience does not contain the client id")]
    AudienceMismatch,
    /// `azp` differs from the client id.
    #[error("ID token authorized party (azp) does not match the client id")]
    AzpMismatch,
    /// `exp` is at or before `now - clock_tolerance`.
    #[error("ID token has expired")]
    Expired,
    /// `nbf` is after `now + clock_tolerance`.
    #[error("ID token is not yet valid (nbf)")]
    NotYetValid,
    /// `iat` is after `now + clock_tolerance`.
    #[error("ID token was issued in the future (iat)")]
    IssuedInFuture,
    /// `nonce` differs from the expected nonce.
    #[error("ID token nonce does not match")]
    NonceMismatch,
    /// The token has a `nonce` although none was sent in the authorization request.
    #[error("ID token has a nonce although none was expected")]
    UnexpectedNonce,
}

fn malformed(reason: &'static str) -> IdTokenError {
    IdTokenError::Malformed { reason }
}

/// Cuts an attacker-chosen string for use in an error.
fn for_diagnostics(s: &str) -> String {
    s.chars().take(MAX_DIAGNOSTIC_CHARS).collect()
}

/// The kind of public key a signature algorithm needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Rsa,
    EcP256,
    EcP384,
    Ed25519,
}

/// The supported JWS algorithms and the key kind each needs. `none` and `HS*` are
/// deliberately absent.
fn supported_alg(alg: &str) -> Option<(Algorithm, KeyKind)> {
    Some(match alg {
        "RS256" => (Algorithm::RS256, KeyKind::Rsa),
        "RS384" => (Algorithm::RS384, KeyKind::Rsa),
        "RS512" => (Algorithm::RS512, KeyKind::Rsa),
        "PS256" => (Algorithm::PS256, KeyKind::Rsa),
        "PS384" => (Algorithm::PS384, KeyKind::Rsa),
        "PS512" => (Algorithm::PS512, KeyKind::Rsa),
        "ES256" => (Algorithm::ES256, KeyKind::EcP256),
        "ES384" => (Algorithm::ES384, KeyKind::EcP384),
        "EdDSA" => (Algorithm::EdDSA, KeyKind::Ed25519),
        _ => return None,
    })
}

/// One usable signature-verification key from a JWK Set.
#[derive(Clone)]
struct VerificationKey {
    kid: Option<String>,
    /// The JWK's `alg`, if it names one; the token's `alg` must then equal it.
    alg: Option<String>,
    kind: KeyKind,
    key: DecodingKey,
}

/// A parsed JWK Set (from the provider's `jwks_uri`).
///
/// Only public signature keys this module can use are kept: RSA, EC P-256/P-384 and
/// OKP Ed25519. Everything else — symmetric (`oct`) keys, other curves, keys marked
/// `"use": "enc"`, keys whose `key_ops` exclude `verify`, entries with missing or
/// undecodable members, non-objects — is skipped, not an error. At most 100 keys are
/// kept.
#[derive(Clone, Default)]
pub struct Jwks {
    keys: Vec<VerificationKey>,
}

impl fmt::Debug for Jwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Kids and kinds only; key material stays out of logs.
        let mut list = f.debug_list();
        for key in &self.keys {
            list.entry(&(key.kind, key.kid.as_deref(), key.alg.as_deref()));
        }
        list.finish()
    }
}

impl Jwks {
    /// Parses a JWK Set document (`{"keys": [...]}`).
    ///
    /// Invalid JSON, or a document without a `keys` array, is
    /// [`IdTokenError::Malformed`]; unusable entries inside `keys` are skipped.
    pub fn from_json(bytes: &[u8]) -> Result<Jwks, IdTokenError> {
        let doc: Value =
            serde_json::from_slice(bytes).map_err(|_| malformed("JWK Set is not valid JSON"))?;
        let entries = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed("JWK Set has no \"keys\" array"))?;
        let keys = entries
            .iter()
            .filter_map(|entry| entry.as_object().and_then(parse_jwk))
            .take(MAX_JWKS_KEYS)
            .collect();
        Ok(Jwks { keys })
    }

    /// Number of usable keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no usable key was found.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether a usable key has this `kid`.
    pub fn contains_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }
}

/// Reads an optional string member; `Err` when present but not a string.
fn optional_str<'a>(jwk: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, ()> {
    match jwk.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(()),
    }
}

/// Decodes a base64url JWK member. Padding is tolerated: it is harmless here and a few
/// providers emit it.
fn jwk_bytes(jwk: &Map<String, Value>, name: &str) -> Option<Vec<u8>> {
    let text = jwk.get(name)?.as_str()?;
    URL_SAFE_NO_PAD_INDIFFERENT.decode(text).ok()
}

/// Turns one JWK into a verification key, or `None` when it is unusable.
fn parse_jwk(jwk: &Map<String, Value>) -> Option<VerificationKey> {
    let kid = optional_str(jwk, "kid").ok()?.map(str::to_owned);
    let alg = optional_str(jwk, "alg").ok()?.map(str::to_owned);
    if optional_str(jwk, "use").ok()? == Some("enc") {
        return None;
    }
    if let Some(ops) = jwk.get("key_ops") {
        let ops = ops.as_array()?;
        if !ops.iter().any(|op| op.as_str() == Some("verify")) {
            return None;
        }
    }
    let (kind, key) = match jwk.get("kty")?.as_str()? {
        "RSA" => {
            let n = jwk_bytes(jwk, "n")?;
            let e = jwk_bytes(jwk, "e")?;
            if n.is_empty() || n.len() > MAX_RSA_MODULUS_LEN {
                return None;
            }
            if e.is_empty() || e.len() > MAX_RSA_EXPONENT_LEN {
                return None;
            }
            (KeyKind::Rsa, DecodingKey::from_rsa_raw_components(&n, &e))
        }
        "EC" => {
            let (kind, coordinate_len) = match jwk.get("crv")?.as_str()? {
                "P-256" => (KeyKind::EcP256, 32),
                "P-384" => (KeyKind::EcP384, 48),
                _ => return None,
            };
            let x = jwk_bytes(jwk, "x")?;
            let y = jwk_bytes(jwk, "y")?;
            if x.len() != coordinate_len || y.len() != coordinate_len {
                return None;
            }
            // The uncompressed SEC1 point, which is what `from_ec_components` builds
            // and what the aws-lc ECDSA verifier expects.
            let mut point = Vec::with_capacity(1 + 2 * coordinate_len);
            point.push(0x04);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            (kind, DecodingKey::from_ec_der(&point))
        }
        "OKP" => {
            if jwk.get("crv")?.as_str()? != "Ed25519" {
                return None;
            }
            let x = jwk_bytes(jwk, "x")?;
            if x.len() != 32 {
                return None;
            }
            (KeyKind::Ed25519, DecodingKey::from_ed_der(&x))
        }
        _ => return None,
    };
    Some(VerificationKey {
        kid,
        alg,
        kind,
        key,
    })
}

/// What the ID token must satisfy (oauth4webapi's checks, OpenID Connect Core §3.1.3.7).
///
/// `Debug` redacts the expected nonce.
#[derive(Clone, Copy)]
pub struct IdTokenChecks<'a> {
    /// Expected issuer; `iss` must equal it exactly.
    pub issuer: &'a str,
    /// The client id: `aud` must contain it; when `aud` is an array of more than one
    /// entry `azp` must be present and equal it; when `azp` is present it must equal it.
    pub client_id: &'a str,
    /// `Some`: the `nonce` claim must be present and equal it (constant-time compare).
    /// `None`: the token must not contain a `nonce` claim.
    pub expected_nonce: Option<&'a str>,
    /// Acceptable header `alg` values: `client.id_token_signed_response_alg`, else the
    /// metadata's `id_token_signing_alg_values_supported`, else `["RS256"]` (the caller
    /// decides). `none` and `HS*` are rejected even when listed.
    pub allowed_algs: &'a [String],
    /// Current time, Unix seconds.
    pub now: i64,
    /// Allowed clock skew in seconds (oauth4webapi uses 30): `exp > now - tolerance`,
    /// `iat <= now + tolerance`, `nbf <= now + tolerance`. Negative values count as 0.
    pub clock_tolerance: i64,
}

impl fmt::Debug for IdTokenChecks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdTokenChecks")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("expected_nonce", &self.expected_nonce.map(|_| "[redacted]"))
            .field("allowed_algs", &self.allowed_algs)
            .field("now", &self.now)
            .field("clock_tolerance", &self.clock_tolerance)
            .finish()
    }
}

/// A compact JWS split and decoded, signature not yet checked.
struct CompactJws<'a> {
    header: Map<String, Value>,
    claims: Map<String, Value>,
    /// `base64url(header) "." base64url(payload)`, the signed bytes.
    signing_input: &'a str,
    signature: Vec<u8>,
}

/// Splits a compact token into its three segments.
fn split_compact(token: &str) -> Result<(&str, &str, &str), IdTokenError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(malformed("token is too large"));
    }
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(header), Some(payload), Some(signature), None) => Ok((header, payload, signature)),
        _ if token.split('.').count() == 5 => {
            Err(malformed("encrypted (JWE) ID tokens are not supported"))
        }
        _ => Err(malformed("token does not have three dot-separated parts")),
    }
}

/// Decodes a base64url segment holding a JSON object.
fn decode_json_object(
    segment: &str,
    not_base64: &'static str,
    not_object: &'static str,
) -> Result<Map<String, Value>, IdTokenError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(segment)
        .map_err(|_| malformed(not_base64))?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(malformed(not_object)),
    }
}

fn decode_header(segment: &str) -> Result<Map<String, Value>, IdTokenError> {
    decode_json_object(
        segment,
        "header is not base64url",
        "header is not a JSON object",
    )
}

fn parse_compact(token: &str) -> Result<CompactJws<'_>, IdTokenError> {
    let (header_b64, payload_b64, signature_b64) = split_compact(token)?;
    let header = decode_header(header_b64)?;
    let claims = decode_json_object(
        payload_b64,
        "payload is not base64url",
        "payload is not a JSON object",
    )?;
    let signature = URL_SAFE_NO_PAD
        .decode(signature_b64)
        .map_err(|_| malformed("signature is not base64url"))?;
    // `header.payload` is a prefix of the token: the signature segment and its dot follow.
    let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
    Ok(CompactJws {
        header,
        claims,
        signing_input,
        signature,
    })
}

/// The header `kid`: `Ok(None)` when absent, `Malformed` when not a string.
fn header_kid(header: &Map<String, Value>) -> Result<Option<&str>, IdTokenError> {
    match header.get("kid") {
        None => Ok(None),
        Some(Value::String(kid)) => Ok(Some(kid)),
        Some(_) => Err(malformed("header kid is not a string")),
    }
}

/// Verifies `token`'s signature against `jwks` and checks its claims against `checks`;
/// returns the claims.
///
/// Key selection: with a header `kid`, only keys with that `kid` are considered; without
/// one, every key is. A key is used only if its kind matches the algorithm (RSA for
/// `RS*`/`PS*`, P-256 for `ES256`, P-384 for `ES384`, Ed25519 for `EdDSA`) and its
/// `alg`, when present, equals the header `alg`. No usable key gives
/// [`IdTokenError::UnknownKey`]; usable keys that all fail give
/// [`IdTokenError::InvalidSignature`].
///
/// The signature is checked before any claim, so claim errors are only reported for
/// tokens the provider really signed.
pub fn verify_id_token(
    token: &str,
    jwks: &Jwks,
    checks: &IdTokenChecks<'_>,
) -> Result<Map<String, Value>, IdTokenError> {
    let jws = verified_jws(token, jwks, checks.allowed_algs)?;
    check_claims(&jws.claims, checks)?;
    Ok(jws.claims)
}

/// A compact JWS without `crit` headers whose `alg` is one of `allowed_algs`, and that
/// `alg`; nothing verified yet.
fn parse_with_allowed_alg<'a>(
    token: &'a str,
    allowed_algs: &[String],
) -> Result<(CompactJws<'a>, String), IdTokenError> {
    let jws = parse_compact(token)?;
    if jws.header.contains_key("crit") {
        // RFC 7515 §4.1.11: extensions we do not understand must make the token invalid.
        return Err(malformed("crit header parameters are not supported"));
    }
    let alg = match jws.header.get("alg") {
        Some(Value::String(alg)) => alg.clone(),
        _ => return Err(malformed("header alg is missing or not a string")),
    };
    if !allowed_algs.contains(&alg) {
        return Err(IdTokenError::AlgorithmNotAllowed {
            alg: for_diagnostics(&alg),
        });
    }
    Ok((jws, alg))
}

/// A compact JWS whose signature verifies with a key of `jwks` under one of
/// `allowed_algs` (never `none` or `HS*`), claims not yet checked.
fn verified_jws<'a>(
    token: &'a str,
    jwks: &Jwks,
    allowed_algs: &[String],
) -> Result<CompactJws<'a>, IdTokenError> {
    let (jws, alg) = parse_with_allowed_alg(token, allowed_algs)?;
    let alg = alg.as_str();
    let (algorithm, kind) =
        supported_alg(alg).ok_or_else(|| IdTokenError::UnsupportedAlgorithm {
            alg: for_diagnostics(alg),
        })?;
    let kid = header_kid(&jws.header)?;

    let mut candidates = jwks.keys.iter().filter(|key| {
        key.kind == kind
            && key.alg.as_deref().is_none_or(|key_alg| key_alg == alg)
            && kid.is_none_or(|kid| key.kid.as_deref() == Some(kid))
    });
    let mut any_candidate = false;
    let verified = candidates.any(|key| {
        any_candidate = true;
        signature_verifies(algorithm, &key.key, jws.signing_input, &jws.signature)
    });
    if !any_candidate {
        return Err(IdTokenError::UnknownKey {
            kid: kid.map(for_diagnostics),
        });
    }
    if !verified {
        return Err(IdTokenError::InvalidSignature);
    }

    Ok(jws)
}

/// Verifies a signed userinfo response (`application/jwt`, OpenID Connect Core §5.3.2)
/// with the provider's JWK Set: the signature as for an ID token, `sub` present, and
/// `iss` / `aud`, when present, the issuer and the client.
pub fn verify_signed_userinfo(
    token: &str,
    jwks: &Jwks,
    issuer: &str,
    client_id: &str,
    allowed_algs: &[String],
) -> Result<Map<String, Value>, IdTokenError> {
    let jws = verified_jws(token, jwks, allowed_algs)?;
    let claims = jws.claims;
    if string_claim(&claims, "sub")?.is_none() {
        return Err(IdTokenError::MissingClaim { claim: "sub" });
    }
    if string_claim(&claims, "iss")?.is_some_and(|iss| iss != issuer) {
        return Err(IdTokenError::InvalidClaim { claim: "iss" });
    }
    let audience_ok = match claims.get("aud") {
        None => true,
        Some(Value::String(aud)) => aud == client_id,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(client_id)),
        Some(_) => false,
    };
    if !audience_ok {
        return Err(IdTokenError::InvalidClaim { claim: "aud" });
    }
    Ok(claims)
}

/// Verifies an ID token signed with the client secret (`HS256`, `HS384`, `HS512`; OpenID
/// Connect Core §10.1), for a client configured with such an
/// `id_token_signed_response_alg` (LINE): the key is the secret, never a JWK, so a token
/// "signed" with a provider's public key cannot pass. `checks.allowed_algs` must name the
/// algorithm.
pub fn verify_id_token_with_secret(
    token: &str,
    client_secret: &str,
    checks: &IdTokenChecks<'_>,
) -> Result<Map<String, Value>, IdTokenError> {
    let (jws, alg) = parse_with_allowed_alg(token, checks.allowed_algs)?;
    let alg = alg.as_str();
    let algorithm = match alg {
        "HS256" => Algorithm::HS256,
        "HS384" => Algorithm::HS384,
        "HS512" => Algorithm::HS512,
        _ => {
            return Err(IdTokenError::UnsupportedAlgorithm {
                alg: for_diagnostics(alg),
            });
        }
    };
    if client_secret.is_empty() {
        return Err(IdTokenError::InvalidSignature);
    }
    let key = DecodingKey::from_secret(client_secret.as_bytes());
    if !signature_verifies(algorithm, &key, jws.signing_input, &jws.signature) {
        return Err(IdTokenError::InvalidSignature);
    }
    check_claims(&jws.claims, checks)?;
    Ok(jws.claims)
}

/// Signature check only. The aws-lc provider is named explicitly rather than taken from
/// jsonwebtoken's process default, which panics when feature unification enables both
/// of its crypto backends.
fn signature_verifies(
    algorithm: Algorithm,
    key: &DecodingKey,
    signing_input: &str,
    signature: &[u8],
) -> bool {
    let provider = &jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER;
    match (provider.verifier_factory)(&algorithm, key) {
        Ok(verifier) => verifier
            .verify(signing_input.as_bytes(), &signature.to_vec())
            .is_ok(),
        Err(_) => false,
    }
}

/// The numeric value of a claim that must be a JSON number when present.
fn number_claim(
    claims: &Map<String, Value>,
    claim: &'static str,
) -> Result<Option<f64>, IdTokenError> {
    match claims.get(claim) {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .map(Some)
            .ok_or(IdTokenError::InvalidClaim { claim }),
    }
}

/// The value of a claim that must be a string when present.
fn string_claim<'a>(
    claims: &'a Map<String, Value>,
    claim: &'static str,
) -> Result<Option<&'a str>, IdTokenError> {
    match claims.get(claim) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(IdTokenError::InvalidClaim { claim }),
    }
}

/// oauth4webapi's ID token claim checks (OpenID Connect Core §3.1.3.7).
fn check_claims(
    claims: &Map<String, Value>,
    checks: &IdTokenChecks<'_>,
) -> Result<(), IdTokenError> {
    check_envelope(claims, checks, &["iss", "sub", "aud", "exp", "iat"])?;
    match (checks.expected_nonce, claims.get("nonce")) {
        (None, None) => {}
        (None, Some(_)) => return Err(IdTokenError::UnexpectedNonce),
        (Some(_), None) => return Err(IdTokenError::MissingClaim { claim: "nonce" }),
        (Some(expected), Some(actual)) => {
            let actual = actual
                .as_str()
                .ok_or(IdTokenError::InvalidClaim { claim: "nonce" })?;
            if !crate::crypto::ct_eq(actual.as_bytes(), expected.as_bytes()) {
                return Err(IdTokenError::NonceMismatch);
            }
        }
    }
    Ok(())
}

/// The checks an ID token and a logout token share: the `required` claims present, `iss`,
/// `aud` and `azp` for this client, the times (`exp`, `nbf`, `iat`) within the tolerance.
fn check_envelope(
    claims: &Map<String, Value>,
    checks: &IdTokenChecks<'_>,
    required: &[&'static str],
) -> Result<(), IdTokenError> {
    for &claim in required {
        if !claims.contains_key(claim) {
            return Err(IdTokenError::MissingClaim { claim });
        }
    }
    let iss = string_claim(claims, "iss")?;
    string_claim(claims, "sub")?;
    let azp = string_claim(claims, "azp")?;
    let exp = number_claim(claims, "exp")?;
    let iat = number_claim(claims, "iat")?;
    let nbf = number_claim(claims, "nbf")?;
    number_claim(claims, "auth_time")?;
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(list)) => list
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or(IdTokenError::InvalidClaim { claim: "aud" })?,
        _ => return Err(IdTokenError::InvalidClaim { claim: "aud" }),
    };

    // JavaScript compares these as doubles; so do we. i64 → f64 is exact for any
    // realistic timestamp.
    let tolerance = checks.clock_tolerance.max(0);
    let earliest = checks.now.saturating_sub(tolerance) as f64;
    let latest = checks.now.saturating_add(tolerance) as f64;
    if exp.is_some_and(|exp| exp <= earliest) {
        return Err(IdTokenError::Expired);
    }
    if nbf.is_some_and(|nbf| nbf > latest) {
        return Err(IdTokenError::NotYetValid);
    }
    if iat.is_some_and(|iat| iat > latest) {
        return Err(IdTokenError::IssuedInFuture);
    }

    if iss != Some(checks.issuer) {
        return Err(IdTokenError::IssuerMismatch);
    }
    if !audiences.contains(&checks.client_id) {
        return Err(IdTokenError::AudienceMismatch);
    }
    if audiences.len() > 1 && azp.is_none() {
        return Err(IdTokenError::MissingClaim { claim: "azp" });
    }
    if azp.is_some_and(|azp| azp != checks.client_id) {
        return Err(IdTokenError::AzpMismatch);
    }
    Ok(())
}

/// The `events` member of a logout token (OpenID Connect Back-Channel Logout 1.0 §2.4).
pub const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// What a verified logout token names: the user at the provider (`sub`), the provider's
/// session (`sid`), or both; and its id and expiry, for taking it once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutToken {
    /// The user's `sub` at the provider.
    pub sub: Option<String>,
    /// The provider's session id.
    pub sid: Option<String>,
    /// The token's id (`jti`).
    pub jti: String,
    /// Its expiry (Unix seconds).
    pub exp: i64,
}

/// Verifies a logout token (OpenID Connect Back-Channel Logout 1.0 §2.6): the signature as
/// for an ID token (`checks.allowed_algs`, never `none` or `HS*`), `iss`, `aud` (and
/// `azp`), `iat` and `exp` as for an ID token, a `jti`, the back-channel logout event in
/// `events`, no `nonce` (so an ID token cannot pass for one), and a `sub` or a `sid`.
/// `checks.expected_nonce` is not used.
pub fn verify_logout_token(
    token: &str,
    jwks: &Jwks,
    checks: &IdTokenChecks<'_>,
) -> Result<LogoutToken, IdTokenError> {
    let claims = verified_jws(token, jwks, checks.allowed_algs)?.claims;
    check_envelope(&claims, checks, &["iss", "aud", "iat", "exp", "jti"])?;
    if claims.contains_key("nonce") {
        return Err(IdTokenError::UnexpectedNonce);
    }
    match claims.get("events") {
        None => return Err(IdTokenError::MissingClaim { claim: "events" }),
        Some(Value::Object(events))
            if events
                .get(BACKCHANNEL_LOGOUT_EVENT)
                .is_some_and(Value::is_object) => {}
        Some(_) => return Err(IdTokenError::InvalidClaim { claim: "events" }),
    }
    let sub = string_claim(&claims, "sub")?.map(str::to_owned);
    let sid = string_claim(&claims, "sid")?.map(str::to_owned);
    if sub.is_none() && sid.is_none() {
        return Err(IdTokenError::MissingClaim { claim: "sub" });
    }
    let jti = string_claim(&claims, "jti")?
        .filter(|j| !j.is_empty())
        .ok_or(IdTokenError::InvalidClaim { claim: "jti" })?
        .to_owned();
    let exp = number_claim(&claims, "exp")?.ok_or(IdTokenError::MissingClaim { claim: "exp" })?;
    Ok(LogoutToken {
        sub,
        sid,
        jti,
        exp: exp as i64,
    })
}

/// The `kid` of a token's header, if the token's header decodes and has a string `kid`.
///
/// Lets the caller refetch the JWKS once when [`verify_id_token`] reports
/// [`IdTokenError::UnknownKey`] for a `kid` it has not seen.
pub fn id_token_kid(token: &str) -> Option<String> {
    let (header_b64, _, _) = split_compact(token).ok()?;
    let header = decode_header(header_b64).ok()?;
    header_kid(&header).ok().flatten().map(str::to_owned)
}

/// **UNVERIFIED** claims of a token: no signature check, no claim check.
///
/// **Never trust the result for authentication.** It exists only to compare the
/// userinfo `sub` with the ID token `sub` when a provider is configured with
/// `idToken: false` — after the token came straight from the token endpoint over TLS —
/// and for diagnostics. Anything else must use [`verify_id_token`].
pub fn unverified_claims(token: &str) -> Result<Map<String, Value>, IdTokenError> {
    parse_compact(token).map(|jws| jws.claims)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::OnceLock;

    use aws_lc_rs::encoding::AsDer as _;
    use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize, PublicKeyComponents};
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair,
        Ed25519KeyPair, KeyPair as _,
    };
    use jsonwebtoken::{EncodingKey, Header};
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    const NOW: i64 = 1_700_000_000;
    const ISSUER: &str = "https://issuer.example";
    const CLIENT_ID: &str = "client-123";

    /// A private key for signing and its public JWK (without `kid`).
    struct TestKey {
        encoding: EncodingKey,
        jwk: Value,
        /// RSA only: the SubjectPublicKeyInfo DER, for the HMAC-confusion tests.
        spki_der: Vec<u8>,
    }

    struct TestKeys {
        rsa: TestKey,
        rsa_other: TestKey,
        ec256: TestKey,
        ec384: TestKey,
        ed25519: TestKey,
    }

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads one DER TLV, returning (tag, contents, rest).
    fn der_tlv(input: &[u8]) -> (u8, &[u8], &[u8]) {
        let tag = input[0];
        let (len, header) = match input[1] {
            n if n < 0x80 => (n as usize, 2),
            0x81 => (input[2] as usize, 3),
            0x82 => (((input[2] as usize) << 8) | input[3] as usize, 4),
            _ => panic!("unsupported DER length"),
        };
        (tag, &input[header..header + len], &input[header + len..])
    }

    /// The PKCS#1 `RSAPrivateKey` inside a PKCS#8 document (jsonwebtoken's
    /// `EncodingKey::from_rsa_der` wants PKCS#1; aws-lc only exports PKCS#8).
    fn pkcs8_to_pkcs1(pkcs8: &[u8]) -> Vec<u8> {
        let (tag, seq, _) = der_tlv(pkcs8);
        assert_eq!(tag, 0x30);
        let (_, _version, rest) = der_tlv(seq);
        let (_, _algorithm, rest) = der_tlv(rest);
        let (tag, private_key, _) = der_tlv(rest);
        assert_eq!(tag, 0x04);
        private_key.to_vec()
    }

    fn rsa_key() -> TestKey {
        let pair = RsaKeyPair::generate(KeySize::Rsa2048).unwrap();
        let pkcs8 = pair.as_der().unwrap();
        let public = PublicKeyComponents::<Vec<u8>>::from(pair.public_key());
        TestKey {
            encoding: EncodingKey::from_rsa_der(&pkcs8_to_pkcs1(pkcs8.as_ref())),
            jwk: json!({"kty": "RSA", "n": b64(&public.n), "e": b64(&public.e)}),
            spki_der: pair.public_key().as_der().unwrap().as_ref().to_vec(),
        }
    }

    fn ec_key(alg: &'static aws_lc_rs::signature::EcdsaSigningAlgorithm, crv: &str) -> TestKey {
        let pair = EcdsaKeyPair::generate(alg).unwrap();
        let point = pair.public_key().as_ref().to_vec();
        let coordinate_len = (point.len() - 1) / 2;
        TestKey {
            encoding: EncodingKey::from_ec_der(pair.to_pkcs8v1().unwrap().as_ref()),
            jwk: json!({
                "kty": "EC",
                "crv": crv,
                "x": b64(&point[1..1 + coordinate_len]),
                "y": b64(&point[1 + coordinate_len..]),
            }),
            spki_der: Vec::new(),
        }
    }

    fn ed_key() -> TestKey {
        let pair = Ed25519KeyPair::generate().unwrap();
        TestKey {
            encoding: EncodingKey::from_ed_der(pair.to_pkcs8().unwrap().as_ref()),
            jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref())}),
            spki_der: Vec::new(),
        }
    }

    fn keys() -> &'static TestKeys {
        static KEYS: OnceLock<TestKeys> = OnceLock::new();
        KEYS.get_or_init(|| TestKeys {
            rsa: rsa_key(),
            rsa_other: rsa_key(),
            ec256: ec_key(&ECDSA_P256_SHA256_FIXED_SIGNING, "P-256"),
            ec384: ec_key(&ECDSA_P384_SHA384_FIXED_SIGNING, "P-384"),
            ed25519: ed_key(),
        })
    }

    /// `key.jwk` with extra members merged in.
    fn jwk(key: &TestKey, extra: Value) -> Value {
        let mut jwk = key.jwk.clone();
        let (Value::Object(map), Value::Object(extra)) = (&mut jwk, extra) else {
            panic!("objects expected");
        };
        map.extend(extra);
        jwk
    }

    fn jwks(keys: Vec<Value>) -> Jwks {
        Jwks::from_json(json!({ "keys": keys }).to_string().as_bytes()).unwrap()
    }

    /// The standard JWKS: every test key, each with a kid.
    fn all_keys() -> Jwks {
        let k = keys();
        jwks(vec![
            jwk(&k.rsa, json!({"kid": "rsa", "use": "sig"})),
            jwk(&k.ec256, json!({"kid": "ec256"})),
            jwk(&k.ec384, json!({"kid": "ec384"})),
            jwk(&k.ed25519, json!({"kid": "ed"})),
        ])
    }

    fn claims() -> Value {
        json!({
            "iss": ISSUER,
            "sub": "user-1",
            "aud": CLIENT_ID,
            "exp": NOW + 3600,
            "iat": NOW - 10,
            "email": "a@example.com",
        })
    }

    /// `claims()` with members replaced (a `null` value removes the member).
    fn claims_with(changes: Value) -> Value {
        merged(claims(), changes)
    }

    /// `claims` with members replaced (a `null` value removes the member).
    fn merged(mut claims: Value, changes: Value) -> Value {
        let (Value::Object(map), Value::Object(changes)) = (&mut claims, changes) else {
            panic!("objects expected");
        };
        for (name, value) in changes {
            if value.is_null() {
                map.remove(&name);
            } else {
                map.insert(name, value);
            }
        }
        claims
    }

    fn sign(alg: Algorithm, kid: Option<&str>, claims: &Value, key: &EncodingKey) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, key).unwrap()
    }

    fn rs256(claims: &Value) -> String {
        sign(Algorithm::RS256, Some("rsa"), claims, &keys().rsa.encoding)
    }

    /// A token with an arbitrary header and payload and a junk signature.
    fn hand_built(header: &Value, payload: &Value, signature: &str) -> String {
        format!(
            "{}.{}.{signature}",
            b64(header.to_string().as_bytes()),
            b64(payload.to_string().as_bytes())
        )
    }

    fn all_algs() -> Vec<String> {
        [
            "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
        ]
        .map(String::from)
        .to_vec()
    }

    fn verify_with(
        token: &str,
        jwks: &Jwks,
        nonce: Option<&str>,
        algs: &[String],
    ) -> Result<Map<String, Value>, IdTokenError> {
        let checks = IdTokenChecks {
            issuer: ISSUER,
            client_id: CLIENT_ID,
            expected_nonce: nonce,
            allowed_algs: algs,
            now: NOW,
            clock_tolerance: 30,
        };
        verify_id_token(token, jwks, &checks)
    }

    fn verify(token: &str) -> Result<Map<String, Value>, IdTokenError> {
        verify_with(token, &all_keys(), None, &all_algs())
    }

    /// A logout token's claims (Back-Channel Logout 1.0 §2.4), with members replaced (a
    /// `null` value removes the member).
    fn logout_claims(changes: Value) -> Value {
        let claims = json!({
            "iss": ISSUER,
            "aud": CLIENT_ID,
            "iat": NOW - 5,
            "exp": NOW + 120,
            "jti": "logout-1",
            "sub": "user-1",
            "sid": "op-session-1",
            "events": { BACKCHANNEL_LOGOUT_EVENT: {} },
        });
        merged(claims, changes)
    }

    fn verify_logout(token: &str) -> Result<LogoutToken, IdTokenError> {
        let checks = IdTokenChecks {
            issuer: ISSUER,
            client_id: CLIENT_ID,
            expected_nonce: None,
            allowed_algs: &all_algs(),
            now: NOW,
            clock_tolerance: 30,
        };
        verify_logout_token(token, &all_keys(), &checks)
    }

    #[test]
    fn logout_tokens_name_a_user_or_a_session_and_nothing_else_passes() {
        let ok = verify_logout(&rs256(&logout_claims(json!({})))).unwrap();
        assert_eq!(
            ok,
            LogoutToken {
                sub: Some("user-1".into()),
                sid: Some("op-session-1".into()),
                jti: "logout-1".into(),
                exp: NOW + 120,
            }
        );
        for (changes, sub, sid) in [
            (json!({"sid": null}), Some("user-1"), None),
            (json!({"sub": null}), None, Some("op-session-1")),
        ] {
            let t = verify_logout(&rs256(&logout_claims(changes))).unwrap();
            assert_eq!((t.sub.as_deref(), t.sid.as_deref()), (sub, sid));
        }
        let ed = sign(
            Algorithm::EdDSA,
            Some("ed"),
            &logout_claims(json!({})),
            &keys().ed25519.encoding,
        );
        assert!(verify_logout(&ed).is_ok());

        let other_key = sign(
            Algorithm::RS256,
            Some("rsa"),
            &logout_claims(json!({})),
            &keys().rsa_other.encoding,
        );
        let header = json!({"alg": "none"});
        let unsigned = hand_built(&header, &logout_claims(json!({})), "");
        let id_token = rs256(&claims());
        for (token, want) in [
            (other_key, IdTokenError::InvalidSignature),
            (
                unsigned,
                IdTokenError::AlgorithmNotAllowed { alg: "none".into() },
            ),
            // An ID token is not a logout token.
            (id_token, IdTokenError::MissingClaim { claim: "jti" }),
            (
                rs256(&logout_claims(json!({"nonce": "n"}))),
                IdTokenError::UnexpectedNonce,
            ),
            (
                rs256(&logout_claims(json!({"events": null}))),
                IdTokenError::MissingClaim { claim: "events" },
            ),
            (
                rs256(&logout_claims(
                    json!({"events": {"http://example.com/other": {}}}),
                )),
                IdTokenError::InvalidClaim { claim: "events" },
            ),
            (
                rs256(&logout_claims(
                    json!({"events": {BACKCHANNEL_LOGOUT_EVENT: "yes"}}),
                )),
                IdTokenError::InvalidClaim { claim: "events" },
            ),
            (
                rs256(&logout_claims(json!({"sub": null, "sid": null}))),
                IdTokenError::MissingClaim { claim: "sub" },
            ),
            (
                rs256(&logout_claims(json!({"sid": 7}))),
                IdTokenError::InvalidClaim { claim: "sid" },
            ),
            (
                rs256(&logout_claims(json!({"jti": null}))),
                IdTokenError::MissingClaim { claim: "jti" },
            ),
            (
                rs256(&logout_claims(json!({"jti": ""}))),
                IdTokenError::InvalidClaim { claim: "jti" },
            ),
            (
                rs256(&logout_claims(json!({"exp": null}))),
                IdTokenError::MissingClaim { claim: "exp" },
            ),
            (
                rs256(&logout_claims(json!({"exp": NOW - 60}))),
                IdTokenError::Expired,
            ),
            (
                rs256(&logout_claims(json!({"iat": NOW + 600}))),
                IdTokenError::IssuedInFuture,
            ),
            (
                rs256(&logout_claims(json!({"iss": "https://evil.example"}))),
                IdTokenError::IssuerMismatch,
            ),
            (
                rs256(&logout_claims(json!({"aud": "another-client"}))),
                IdTokenError::AudienceMismatch,
            ),
            (
                rs256(&logout_claims(
                    json!({"aud": [CLIENT_ID, "another-client"]}),
                )),
                IdTokenError::MissingClaim { claim: "azp" },
            ),
        ] {
            assert_eq!(verify_logout(&token), Err(want.clone()), "{want}");
        }
    }

    #[test]
    fn valid_token_for_each_algorithm_with_and_without_kid() {
        let k = keys();
        let cases = [
            (Algorithm::RS256, "rsa", &k.rsa),
            (Algorithm::RS384, "rsa", &k.rsa),
            (Algorithm::RS512, "rsa", &k.rsa),
            (Algorithm::PS256, "rsa", &k.rsa),
            (Algorithm::PS384, "rsa", &k.rsa),
            (Algorithm::PS512, "rsa", &k.rsa),
            (Algorithm::ES256, "ec256", &k.ec256),
            (Algorithm::ES384, "ec384", &k.ec384),
            (Algorithm::EdDSA, "ed", &k.ed25519),
        ];
        for (alg, kid, key) in cases {
            for kid in [Some(kid), None] {
                let token = sign(alg, kid, &claims(), &key.encoding);
                let verified = verify(&token);
                assert!(verified.is_ok(), "{alg:?} kid={kid:?}: {verified:?}");
                assert_eq!(Value::Object(verified.unwrap()), claims());
            }
        }
    }

    #[test]
    fn returns_all_claims() {
        let claims = verify(&rs256(&claims())).unwrap();
        assert_eq!(claims["email"], "a@example.com");
        assert_eq!(claims["sub"], "user-1");
    }

    #[test]
    fn kidless_token_tries_every_compatible_key() {
        let k = keys();
        let set = jwks(vec![
            k.ec256.jwk.clone(),
            k.rsa_other.jwk.clone(),
            k.rsa.jwk.clone(),
        ]);
        let token = sign(Algorithm::RS256, None, &claims(), &k.rsa.encoding);
        assert!(verify_with(&token, &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn kidless_token_signed_by_unknown_key_is_invalid_signature() {
        let k = keys();
        let set = jwks(vec![k.rsa.jwk.clone(), k.ec256.jwk.clone()]);
        let token = sign(Algorithm::RS256, None, &claims(), &k.rsa_other.encoding);
        assert_eq!(
            verify_with(&token, &set, None, &all_algs()),
            Err(IdTokenError::InvalidSignature)
        );
    }

    #[test]
    fn kidless_token_without_compatible_key_is_unknown_key() {
        let k = keys();
        let set = jwks(vec![k.ec256.jwk.clone(), k.ed25519.jwk.clone()]);
        let token = sign(Algorithm::RS256, None, &claims(), &k.rsa.encoding);
        assert_eq!(
            verify_with(&token, &set, None, &all_algs()),
            Err(IdTokenError::UnknownKey { kid: None })
        );
        // ES384 needs a P-384 key; a P-256 key is not compatible.
        let token = sign(Algorithm::ES384, None, &claims(), &k.ec384.encoding);
        assert_eq!(
            verify_with(&token, &set, None, &all_algs()),
            Err(IdTokenError::UnknownKey { kid: None })
        );
    }

    #[test]
    fn unknown_kid_is_unknown_key() {
        let token = sign(
            Algorithm::RS256,
            Some("rotated"),
            &claims(),
            &keys().rsa.encoding,
        );
        assert_eq!(
            verify(&token),
            Err(IdTokenError::UnknownKey {
                kid: Some("rotated".into())
            })
        );
        assert_eq!(id_token_kid(&token).as_deref(), Some("rotated"));
    }

    #[test]
    fn kid_selects_only_that_key() {
        // A kid'd token is not tried against other keys, even ones that would verify.
        let k = keys();
        let set = jwks(vec![
            jwk(&k.rsa_other, json!({"kid": "a"})),
            jwk(&k.rsa, json!({"kid": "b"})),
        ]);
        let token = sign(Algorithm::RS256, Some("a"), &claims(), &k.rsa.encoding);
        assert_eq!(
            verify_with(&token, &set, None, &all_algs()),
            Err(IdTokenError::InvalidSignature)
        );
        let token = sign(Algorithm::RS256, Some("b"), &claims(), &k.rsa.encoding);
        assert!(verify_with(&token, &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn same_kid_different_key_is_invalid_signature() {
        let token = sign(
            Algorithm::RS256,
            Some("rsa"),
            &claims(),
            &keys().rsa_other.encoding,
        );
        assert_eq!(verify(&token), Err(IdTokenError::InvalidSignature));
    }

    #[test]
    fn kid_of_incompatible_key_is_unknown_key() {
        // kid names the P-256 key but the token says RS256.
        let token = sign(
            Algorithm::RS256,
            Some("ec256"),
            &claims(),
            &keys().rsa.encoding,
        );
        assert_eq!(
            verify(&token),
            Err(IdTokenError::UnknownKey {
                kid: Some("ec256".into())
            })
        );
    }

    #[test]
    fn jwk_alg_must_equal_header_alg() {
        let k = keys();
        let set = jwks(vec![jwk(&k.rsa, json!({"kid": "rsa", "alg": "RS512"}))]);
        let token = rs256(&claims());
        assert_eq!(
            verify_with(&token, &set, None, &all_algs()),
            Err(IdTokenError::UnknownKey {
                kid: Some("rsa".into())
            })
        );
        let set = jwks(vec![jwk(&k.rsa, json!({"kid": "rsa", "alg": "RS256"}))]);
        assert!(verify_with(&token, &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn encryption_keys_and_non_verify_key_ops_are_skipped() {
        let k = keys();
        let set = jwks(vec![
            jwk(&k.rsa, json!({"kid": "rsa", "use": "enc"})),
            jwk(&k.rsa, json!({"kid": "rsa", "key_ops": ["encrypt"]})),
        ]);
        assert!(set.is_empty());
        let set = jwks(vec![jwk(
            &k.rsa,
            json!({"kid": "rsa", "key_ops": ["verify"]}),
        )]);
        assert_eq!(set.len(), 1);
        assert!(verify_with(&rs256(&claims()), &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn alg_none_is_always_rejected() {
        let header = json!({"alg": "none", "kid": "rsa"});
        let token = hand_built(&header, &claims(), "");
        assert!(token.ends_with('.'));
        assert_eq!(
            verify(&token),
            Err(IdTokenError::AlgorithmNotAllowed { alg: "none".into() })
        );
        let allow_none = vec!["none".to_owned(), "RS256".to_owned()];
        assert_eq!(
            verify_with(&token, &all_keys(), None, &allow_none),
            Err(IdTokenError::UnsupportedAlgorithm { alg: "none".into() })
        );
        let header = json!({"alg": "none"});
        let token = hand_built(&header, &claims(), "");
        assert_eq!(
            verify_with(&token, &all_keys(), None, &allow_none),
            Err(IdTokenError::UnsupportedAlgorithm { alg: "none".into() })
        );
    }

    #[test]
    fn hmac_with_public_key_as_secret_is_always_rejected() {
        let k = keys();
        let n = URL_SAFE_NO_PAD
            .decode(k.rsa.jwk["n"].as_str().unwrap())
            .unwrap();
        let secrets = [
            n.clone(),
            k.rsa.jwk["n"].as_str().unwrap().as_bytes().to_vec(),
            k.rsa.spki_der.clone(),
            k.rsa.jwk.to_string().into_bytes(),
        ];
        let mut allow_hmac = all_algs();
        allow_hmac.extend(["HS256", "HS384", "HS512"].map(String::from));
        for secret in &secrets {
            for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
                let hs_key = EncodingKey::from_secret(secret);
                for kid in [Some("rsa"), None] {
                    let token = sign(alg, kid, &claims(), &hs_key);
                    let name = format!("{alg:?}");
                    assert_eq!(
                        verify(&token),
                        Err(IdTokenError::AlgorithmNotAllowed { alg: name.clone() })
                    );
                    assert_eq!(
                        verify_with(&token, &all_keys(), None, &allow_hmac),
                        Err(IdTokenError::UnsupportedAlgorithm { alg: name })
                    );
                }
            }
        }
        // A symmetric key published in the JWKS is ignored as well.
        let set = jwks(vec![json!({"kty": "oct", "k": b64(&n), "kid": "rsa"})]);
        assert!(set.is_empty());
    }

    #[test]
    fn signed_userinfo() {
        let algs = ["RS256".to_owned()];
        let check = |claims: Value| {
            verify_signed_userinfo(&rs256(&claims), &all_keys(), ISSUER, CLIENT_ID, &algs)
        };
        let ok = json!({"sub": "u1", "name": "Ada", "iss": ISSUER, "aud": CLIENT_ID});
        assert_eq!(check(ok.clone()).unwrap()["name"], "Ada");
        // iss and aud are optional, but must match when present.
        assert!(check(json!({"sub": "u1"})).is_ok());
        assert!(check(json!({"sub": "u1", "aud": ["other", CLIENT_ID]})).is_ok());
        let mut wrong_iss = ok.clone();
        wrong_iss["iss"] = json!("https://evil.example");
        assert_eq!(
            check(wrong_iss),
            Err(IdTokenError::InvalidClaim { claim: "iss" })
        );
        let mut wrong_aud = ok.clone();
        wrong_aud["aud"] = json!("other");
        assert_eq!(
            check(wrong_aud),
            Err(IdTokenError::InvalidClaim { claim: "aud" })
        );
        assert_eq!(
            check(json!({"name": "no sub"})),
            Err(IdTokenError::MissingClaim { claim: "sub" })
        );
        // Signed by another key, or with another algorithm: refused before any claim.
        let forged = sign(
            Algorithm::RS256,
            Some("rsa"),
            &ok,
            &keys().rsa_other.encoding,
        );
        assert!(verify_signed_userinfo(&forged, &all_keys(), ISSUER, CLIENT_ID, &algs).is_err());
        let es = sign(Algorithm::ES256, Some("ec256"), &ok, &keys().ec256.encoding);
        assert!(matches!(
            verify_signed_userinfo(&es, &all_keys(), ISSUER, CLIENT_ID, &algs),
            Err(IdTokenError::AlgorithmNotAllowed { .. })
        ));
    }

    #[test]
    fn tokens_signed_with_the_client_secret() {
        let verify = |token: &str, secret: &str, alg: &str| {
            let algs = [alg.to_owned()];
            let checks = IdTokenChecks {
                issuer: ISSUER,
                client_id: CLIENT_ID,
                expected_nonce: None,
                allowed_algs: &algs,
                now: NOW,
                clock_tolerance: 30,
            };
            verify_id_token_with_secret(token, secret, &checks)
        };
        let secret = "channel-secret";
        let hs_key = EncodingKey::from_secret(secret.as_bytes());
        let token = sign(Algorithm::HS256, None, &claims(), &hs_key);
        assert!(verify(&token, secret, "HS256").is_ok());
        assert_eq!(
            verify(&token, "another secret", "HS256"),
            Err(IdTokenError::InvalidSignature)
        );
        assert_eq!(
            verify(&token, "", "HS256"),
            Err(IdTokenError::InvalidSignature)
        );
        assert_eq!(
            verify(&token, secret, "HS512"),
            Err(IdTokenError::AlgorithmNotAllowed {
                alg: "HS256".into()
            })
        );
        // An asymmetric token is not checked against the secret.
        let es = sign(
            Algorithm::ES256,
            Some("ec256"),
            &claims(),
            &keys().ec256.encoding,
        );
        assert_eq!(
            verify(&es, secret, "ES256"),
            Err(IdTokenError::UnsupportedAlgorithm {
                alg: "ES256".into()
            })
        );
        // The claims are checked as for any ID token.
        let mut late = claims();
        late["exp"] = json!(NOW - 3600);
        let token = sign(Algorithm::HS256, None, &late, &hs_key);
        assert!(verify(&token, secret, "HS256").is_err());
    }

    #[test]
    fn alg_not_in_allowed_list() {
        let token = sign(
            Algorithm::ES256,
            Some("ec256"),
            &claims(),
            &keys().ec256.encoding,
        );
        let rs256_only = vec!["RS256".to_owned()];
        assert_eq!(
            verify_with(&token, &all_keys(), None, &rs256_only),
            Err(IdTokenError::AlgorithmNotAllowed {
                alg: "ES256".into()
            })
        );
        assert_eq!(
            verify_with(&token, &all_keys(), None, &[]),
            Err(IdTokenError::AlgorithmNotAllowed {
                alg: "ES256".into()
            })
        );
    }

    #[test]
    fn unsupported_but_allowed_alg() {
        let header = json!({"alg": "ES512", "kid": "ec256"});
        let token = hand_built(&header, &claims(), "AAAA");
        let algs = vec!["ES512".to_owned()];
        assert_eq!(
            verify_with(&token, &all_keys(), None, &algs),
            Err(IdTokenError::UnsupportedAlgorithm {
                alg: "ES512".into()
            })
        );
    }

    #[test]
    fn long_alg_and_kid_are_cut_in_errors() {
        let long = "x".repeat(1000);
        let token = hand_built(&json!({"alg": long}), &claims(), "");
        let Err(IdTokenError::AlgorithmNotAllowed { alg }) = verify(&token) else {
            panic!("expected AlgorithmNotAllowed");
        };
        assert_eq!(alg.len(), MAX_DIAGNOSTIC_CHARS);
        let token = sign(
            Algorithm::RS256,
            Some(&long),
            &claims(),
            &keys().rsa.encoding,
        );
        let Err(IdTokenError::UnknownKey { kid: Some(kid) }) = verify(&token) else {
            panic!("expected UnknownKey");
        };
        assert_eq!(kid.len(), MAX_DIAGNOSTIC_CHARS);
        assert_eq!(id_token_kid(&token), Some(long));
    }

    #[test]
    fn wrong_issuer() {
        let token = rs256(&claims_with(json!({"iss": "https://evil.example"})));
        assert_eq!(verify(&token), Err(IdTokenError::IssuerMismatch));
        // Exact match: no trailing-slash normalisation.
        let token = rs256(&claims_with(json!({"iss": format!("{ISSUER}/")})));
        assert_eq!(verify(&token), Err(IdTokenError::IssuerMismatch));
    }

    #[test]
    fn wrong_audience() {
        let token = rs256(&claims_with(json!({"aud": "someone-else"})));
        assert_eq!(verify(&token), Err(IdTokenError::AudienceMismatch));
        let token = rs256(&claims_with(json!({"aud": ["a", "b"], "azp": CLIENT_ID})));
        assert_eq!(verify(&token), Err(IdTokenError::AudienceMismatch));
        let token = rs256(&claims_with(json!({"aud": []})));
        assert_eq!(verify(&token), Err(IdTokenError::AudienceMismatch));
    }

    #[test]
    fn audience_arrays_and_azp() {
        // One-element array: no azp needed.
        let token = rs256(&claims_with(json!({"aud": [CLIENT_ID]})));
        assert!(verify(&token).is_ok());
        // Several audiences without azp.
        let token = rs256(&claims_with(json!({"aud": [CLIENT_ID, "other"]})));
        assert_eq!(
            verify(&token),
            Err(IdTokenError::MissingClaim { claim: "azp" })
        );
        // Several audiences, wrong azp.
        let token = rs256(&claims_with(
            json!({"aud": [CLIENT_ID, "other"], "azp": "other"}),
        ));
        assert_eq!(verify(&token), Err(IdTokenError::AzpMismatch));
        // Several audiences, right azp.
        let token = rs256(&claims_with(
            json!({"aud": ["other", CLIENT_ID], "azp": CLIENT_ID}),
        ));
        assert!(verify(&token).is_ok());
        // Single audience with a wrong azp.
        let token = rs256(&claims_with(json!({"azp": "other"})));
        assert_eq!(verify(&token), Err(IdTokenError::AzpMismatch));
        // Single audience with the right azp.
        let token = rs256(&claims_with(json!({"azp": CLIENT_ID})));
        assert!(verify(&token).is_ok());
    }

    #[test]
    fn expiry_with_clock_tolerance() {
        for (exp, ok) in [
            (json!(NOW - 31), false),
            (json!(NOW - 30), false),
            (json!(NOW - 29), true),
            (json!(NOW as f64 - 29.5), true),
            (json!(NOW as f64 - 30.5), false),
            (json!(NOW), true),
        ] {
            let token = rs256(&claims_with(json!({"exp": exp, "iat": NOW - 100})));
            let result = verify(&token);
            if ok {
                assert!(result.is_ok(), "exp={exp}: {result:?}");
            } else {
                assert_eq!(result, Err(IdTokenError::Expired), "exp={exp}");
            }
        }
    }

    #[test]
    fn zero_and_negative_tolerance() {
        let token = rs256(&claims_with(json!({"exp": NOW - 1})));
        let algs = all_algs();
        for tolerance in [0, -100] {
            let checks = IdTokenChecks {
                issuer: ISSUER,
                client_id: CLIENT_ID,
                expected_nonce: None,
                allowed_algs: &algs,
                now: NOW,
                clock_tolerance: tolerance,
            };
            assert_eq!(
                verify_id_token(&token, &all_keys(), &checks),
                Err(IdTokenError::Expired)
            );
        }
    }

    #[test]
    fn issued_in_future_beyond_tolerance() {
        let token = rs256(&claims_with(json!({"iat": NOW + 31})));
        assert_eq!(verify(&token), Err(IdTokenError::IssuedInFuture));
        let token = rs256(&claims_with(json!({"iat": NOW + 30})));
        assert!(verify(&token).is_ok());
    }

    #[test]
    fn not_before_with_tolerance() {
        let token = rs256(&claims_with(json!({"nbf": NOW + 31})));
        assert_eq!(verify(&token), Err(IdTokenError::NotYetValid));
        let token = rs256(&claims_with(json!({"nbf": NOW + 30})));
        assert!(verify(&token).is_ok());
    }

    #[test]
    fn nonce_checks() {
        let set = all_keys();
        let algs = all_algs();
        let with_nonce = rs256(&claims_with(json!({"nonce": "n-0S6_WzA2Mj"})));
        let without_nonce = rs256(&claims());

        assert!(verify_with(&with_nonce, &set, Some("n-0S6_WzA2Mj"), &algs).is_ok());
        assert_eq!(
            verify_with(&with_nonce, &set, Some("n-0S6_WzA2Mk"), &algs),
            Err(IdTokenError::NonceMismatch)
        );
        assert_eq!(
            verify_with(&with_nonce, &set, Some("n-0S6"), &algs),
            Err(IdTokenError::NonceMismatch)
        );
        assert_eq!(
            verify_with(&without_nonce, &set, Some("n-0S6_WzA2Mj"), &algs),
            Err(IdTokenError::MissingClaim { claim: "nonce" })
        );
        assert_eq!(
            verify_with(&with_nonce, &set, None, &algs),
            Err(IdTokenError::UnexpectedNonce)
        );
        let numeric_nonce = rs256(&claims_with(json!({"nonce": 5})));
        assert_eq!(
            verify_with(&numeric_nonce, &set, Some("5"), &algs),
            Err(IdTokenError::InvalidClaim { claim: "nonce" })
        );
        assert_eq!(
            verify_with(&numeric_nonce, &set, None, &algs),
            Err(IdTokenError::UnexpectedNonce)
        );
    }

    #[test]
    fn each_required_claim_is_required() {
        for claim in ["iss", "sub", "aud", "exp", "iat"] {
            let token = rs256(&claims_with(json!({ claim: null })));
            assert_eq!(
                verify(&token),
                Err(IdTokenError::MissingClaim { claim }),
                "{claim}"
            );
        }
    }

    #[test]
    fn claims_of_the_wrong_type() {
        for (claim, value) in [
            ("iss", json!(1)),
            ("sub", json!(42)),
            ("aud", json!(7)),
            ("aud", json!([CLIENT_ID, 7])),
            ("exp", json!("9999999999")),
            ("iat", json!(null)),
            ("nbf", json!("0")),
            ("azp", json!(["x"])),
            ("auth_time", json!("yesterday")),
        ] {
            let mut claims = claims();
            claims[claim] = value;
            let token = rs256(&claims);
            assert_eq!(
                verify(&token),
                Err(IdTokenError::InvalidClaim { claim }),
                "{claim}"
            );
        }
    }

    #[test]
    fn malformed_tokens() {
        let good = rs256(&claims());
        let parts: Vec<&str> = good.split('.').collect();
        let cases = [
            String::new(),
            "abc".to_owned(),
            format!("{}.{}", parts[0], parts[1]),
            format!("{good}.extra"),
            "a.b.c.d.e".to_owned(),
            format!("{}!.{}.{}", parts[0], parts[1], parts[2]),
            format!("{}.{}*.{}", parts[0], parts[1], parts[2]),
            format!("{}.{}.{}$", parts[0], parts[1], parts[2]),
            format!("{}=.{}.{}", parts[0], parts[1], parts[2]),
            format!("{}.{}.{}", b64(b"not json"), parts[1], parts[2]),
            format!("{}.{}.{}", b64(b"[\"alg\"]"), parts[1], parts[2]),
            format!("{}.{}.{}", b64(b"\"RS256\""), parts[1], parts[2]),
            format!("{}.{}.{}", parts[0], b64(b"[1,2]"), parts[2]),
            format!("{}.{}.{}", parts[0], b64(b"not json"), parts[2]),
            hand_built(&json!({"kid": "rsa"}), &claims(), parts[2]),
            hand_built(&json!({"alg": 256}), &claims(), parts[2]),
            hand_built(&json!({"alg": "RS256", "kid": 1}), &claims(), parts[2]),
            hand_built(
                &json!({"alg": "RS256", "crit": ["exp"]}),
                &claims(),
                parts[2],
            ),
            format!("{}.{}.{}", parts[0], "A".repeat(MAX_TOKEN_LEN), parts[2]),
        ];
        for token in &cases {
            let result = verify(token);
            assert!(
                matches!(result, Err(IdTokenError::Malformed { .. })),
                "{token:.80}: {result:?}"
            );
        }
        assert!(matches!(
            verify("a.b.c.d.e"),
            Err(IdTokenError::Malformed {
                reason: "encrypted (JWE) ID tokens are not supported"
            })
        ));
    }

    #[test]
    fn errors_do_not_leak_token_or_key_material() {
        let token = sign(
            Algorithm::RS256,
            Some("rsa"),
            &claims(),
            &keys().rsa_other.encoding,
        );
        let signature = token.rsplit('.').next().unwrap();
        for error in [
            verify(&token).unwrap_err(),
            verify(&token[..token.len() - 1]).unwrap_err(),
            verify(&rs256(&claims_with(json!({"nonce": "secret-nonce"})))).unwrap_err(),
        ] {
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains(signature), "{shown}");
            assert!(!shown.contains("secret-nonce"), "{shown}");
            assert!(!shown.contains(keys().rsa.jwk["n"].as_str().unwrap()));
        }
        let algs = all_algs();
        let checks = IdTokenChecks {
            issuer: ISSUER,
            client_id: CLIENT_ID,
            expected_nonce: Some("secret-nonce"),
            allowed_algs: &algs,
            now: NOW,
            clock_tolerance: 30,
        };
        let debug = format!("{checks:?}");
        assert!(!debug.contains("secret-nonce"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
        let debug = format!("{:?}", all_keys());
        assert!(!debug.contains(keys().rsa.jwk["n"].as_str().unwrap()));
        assert!(debug.contains("\"rsa\""));
    }

    #[test]
    fn jwks_with_garbage_entries() {
        let k = keys();
        let n = k.rsa.jwk["n"].as_str().unwrap();
        let doc = json!({"keys": [
            1,
            "string",
            null,
            [],
            {},
            {"kty": "RSA"},
            {"kty": "RSA", "n": n},
            {"kty": "RSA", "n": "!!!", "e": "AQAB"},
            {"kty": "RSA", "n": n, "e": "AQAB", "kid": 7},
            {"kty": "RSA", "n": n, "e": "AQAB", "alg": ["RS256"]},
            {"kty": "RSA", "n": n, "e": "AQAB", "key_ops": "verify"},
            {"kty": "RSA", "n": b64(&[0xff; 2000]), "e": "AQAB"},
            {"kty": "EC", "crv": "P-521", "x": "AAAA", "y": "AAAA"},
            {"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"},
            {"kty": "OKP", "crv": "Ed448", "x": "AAAA"},
            {"kty": "OKP", "crv": "X25519", "x": b64(&[1; 32])},
            {"kty": "oct", "k": "c2VjcmV0"},
            {"kty": "weird"},
            {"kty": 3},
            jwk(&k.rsa, json!({"kid": "rsa", "x5c": ["MIIB..."], "unknown": {"nested": true}})),
        ]});
        let set = Jwks::from_json(doc.to_string().as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        assert!(set.contains_kid("rsa"));
        assert!(!set.contains_kid("other"));
        assert!(verify_with(&rs256(&claims()), &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn jwks_components_with_padding_are_accepted() {
        let k = keys();
        let mut padded = jwk(&k.rsa, json!({"kid": "rsa"}));
        let n = padded["n"].as_str().unwrap().to_owned();
        // 256-byte modulus → 342 base64 characters; canonical padding adds "==".
        padded["n"] = json!(format!("{n}=="));
        let set = jwks(vec![padded]);
        assert_eq!(set.len(), 1);
        assert!(verify_with(&rs256(&claims()), &set, None, &all_algs()).is_ok());
    }

    #[test]
    fn jwks_document_errors() {
        for doc in [
            &b"not json"[..],
            b"",
            b"[]",
            b"{}",
            b"{\"keys\": {}}",
            b"{\"keys\": null}",
        ] {
            assert!(
                matches!(Jwks::from_json(doc), Err(IdTokenError::Malformed { .. })),
                "{}",
                String::from_utf8_lossy(doc)
            );
        }
        let empty = Jwks::from_json(b"{\"keys\": []}").unwrap();
        assert!(empty.is_empty());
        assert_eq!(
            verify_with(&rs256(&claims()), &empty, None, &all_algs()),
            Err(IdTokenError::UnknownKey {
                kid: Some("rsa".into())
            })
        );
    }

    #[test]
    fn jwks_keeps_at_most_max_keys() {
        let k = keys();
        let many: Vec<Value> = (0..MAX_JWKS_KEYS + 20)
            .map(|i| jwk(&k.ec256, json!({ "kid": format!("k{i}") })))
            .collect();
        let set = jwks(many);
        assert_eq!(set.len(), MAX_JWKS_KEYS);
    }

    #[test]
    fn kid_helper() {
        assert_eq!(id_token_kid(&rs256(&claims())).as_deref(), Some("rsa"));
        let kidless = sign(Algorithm::RS256, None, &claims(), &keys().rsa.encoding);
        assert_eq!(id_token_kid(&kidless), None);
        assert_eq!(id_token_kid("garbage"), None);
        assert_eq!(
            id_token_kid(&hand_built(&json!({"kid": 5}), &claims(), "")),
            None
        );
    }

    #[test]
    fn unverified_claims_reads_without_verifying() {
        // Signed by a key nobody knows, expired, wrong issuer: still readable.
        let token = sign(
            Algorithm::RS256,
            None,
            &claims_with(json!({"exp": 1, "iss": "x"})),
            &keys().rsa_other.encoding,
        );
        let claims = unverified_claims(&token).unwrap();
        assert_eq!(claims["sub"], "user-1");
        let none = hand_built(&json!({"alg": "none"}), &json!({"sub": "s"}), "");
        assert_eq!(unverified_claims(&none).unwrap()["sub"], "s");
        assert!(matches!(
            unverified_claims("a.b"),
            Err(IdTokenError::Malformed { .. })
        ));
        assert!(matches!(
            unverified_claims(&format!("{}.{}.", b64(b"{}"), b64(b"[]"))),
            Err(IdTokenError::Malformed { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_strings_never_panic_or_verify(token in ".{0,400}") {
            let _ = id_token_kid(&token);
            let _ = unverified_claims(&token);
            prop_assert!(verify(&token).is_err());
        }

        #[test]
        fn arbitrary_jws_shaped_strings_never_verify(
            header in "[A-Za-z0-9_-]{0,60}",
            payload in "[A-Za-z0-9_-]{0,200}",
            signature in "[A-Za-z0-9_-]{0,400}",
        ) {
            let token = format!("{header}.{payload}.{signature}");
            let _ = id_token_kid(&token);
            let _ = unverified_claims(&token);
            prop_assert!(verify(&token).is_err());
        }

        #[test]
        fn single_byte_corruption_never_verifies(
            alg_index in 0usize..4,
            position in any::<prop::sample::Index>(),
            replacement in any::<u8>(),
        ) {
            let k = keys();
            let (alg, kid, key) = [
                (Algorithm::RS256, "rsa", &k.rsa),
                (Algorithm::PS256, "rsa", &k.rsa),
                (Algorithm::ES256, "ec256", &k.ec256),
                (Algorithm::EdDSA, "ed", &k.ed25519),
            ][alg_index];
            let token = sign(alg, Some(kid), &claims(), &key.encoding);
            let mut bytes = token.clone().into_bytes();
            let at = position.index(bytes.len());
            prop_assume!(bytes[at] != replacement);
            bytes[at] = replacement;
            // Non-UTF-8 corruption cannot reach a `&str` API; test it lossily.
            let corrupted = String::from_utf8_lossy(&bytes).into_owned();
            prop_assert!(verify(&corrupted).is_err());
            let _ = id_token_kid(&corrupted);
            let _ = unverified_claims(&corrupted);
        }

        #[test]
        fn arbitrary_jwks_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = Jwks::from_json(&bytes);
        }
    }
}
