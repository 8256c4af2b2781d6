//! DPoP proofs (RFC 9449): the checks of §4.3 on a `DPoP` header, the key's thumbprint
//! (RFC 7638) that binds tokens (`cnf.jkt`, §6), and the access token hash (`ath`, §4.2)
//! of resource requests. Pure: the endpoints (`dpop_binding`) use each proof's `jti` once,
//! issue and check the nonces (§8), and answer.
//!
//! The signature is verified by jsonwebtoken with the public key of the proof's `jwk`
//! header; only the asymmetric algorithms of [`ALGS`] are taken (never `none` or an HMAC,
//! which a key in the header would make anyone's to forge), and a `jwk` that carries a
//! private or symmetric key is refused.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

/// The algorithms a proof may be signed with (`dpop_signing_alg_values_supported`): the
/// asymmetric ones jsonwebtoken verifies.
pub(crate) const ALGS: [&str; 9] = crate::clients::ASSERTION_ALGS;

/// The longest `DPoP` header taken (bytes): room for an RSA-4096 key and its signature.
pub(crate) const MAX_PROOF_LEN: usize = 8 * 1024;

/// How old a proof's `iat` may be (seconds, §11.1: proofs are made for one request).
pub(crate) const IAT_PAST_SECS: i64 = 60;

/// How far ahead of the server's clock a proof's `iat` may be (seconds).
pub(crate) const IAT_FUTURE_SECS: i64 = 10;

/// The longest `jti` and `nonce` taken (bytes): this server's nonces are sealed tokens of
/// a few hundred.
const MAX_VALUE_LEN: usize = 1024;

/// The members of a JWK that hold private or symmetric key material (RFC 7518 §6.2.2,
/// §6.3.2, §6.4; RFC 8037 §2).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// The confirmation claim of a bound token (RFC 7800 §3.1, RFC 9449 §6.1): the SHA-256
/// thumbprint of the key its proofs must be signed with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The JWK SHA-256 thumbprint (RFC 7638), base64url.
    pub jkt: String,
}

/// `Bearer`, or `DPoP` for a token bound to a key: the `token_type` of the token response
/// (§5) and of introspection (§6.2).
pub(crate) fn token_type(cnf: Option<&Confirmation>) -> &'static str {
    match cnf {
        Some(_) => "DPoP",
        None => "Bearer",
    }
}

/// What the request a proof came with is: the proof must name it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The HTTP method (`htm`).
    pub(crate) method: &'a str,
    /// The endpoint's URL (`htu`, compared without query and fragment, §4.3 item 9).
    pub(crate) url: &'a url::Url,
    /// The access token presented with it, at a resource endpoint: the proof's `ath` must
    /// be its hash (§4.3 item 11). `None` at the token endpoint.
    pub(crate) access_token: Option<&'a str>,
    /// The server's time (seconds since 1970).
    pub(crate) now: i64,
}

/// A proof that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proof {
    /// The thumbprint of its key: what tokens are bound to.
    pub(crate) jkt: String,
    /// Its id, to be used once.
    pub(crate) jti: String,
    /// The server-provided nonce it carries, if any (checked by the caller, §8).
    pub(crate) nonce: Option<String>,
}

/// Why a proof is refused (`invalid_dpop_proof`); the message is for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProofError {
    #[error("the DPoP header is too long")]
    TooLong,
    #[error("the proof is not a JWS in compact form with a JSON header")]
    Malformed,
    #[error("typ is not dpop+jwt")]
    Type,
    #[error("alg is not an asymmetric algorithm this server verifies")]
    Algorithm,
    #[error("jwk is missing or not a public key")]
    Key,
    #[error("jwk holds private or symmetric key material")]
    PrivateKey,
    #[error("the signature does not verify with jwk, or a claim is missing")]
    Signature,
    #[error("htm is not the request's method")]
    Method,
    #[error("htu is not the endpoint's URL")]
    Url,
    #[error("iat is too old or in the future")]
    Time,
    #[error("jti or nonce is empty or too long")]
    Value,
    #[error("ath is missing or not the access token's hash")]
    AccessTokenHash,
}

/// The claims of a proof (§4.2).
#[derive(Debug, Deserialize)]
struct Claims {
    jti: String,
    htm: String,
    htu: String,
    iat: i64,
    #[serde(default)]
    ath: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
}

/// base64url(SHA-256(`token`)): a proof's `ath` for an access token (§4.2).
pub(crate) fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// Checks `proof`, the value of the one `DPoP` header of `request` (§4.3 items 2 to 11;
/// the caller checks that there was one header, the nonce and the `jti`'s single use).
pub(crate) fn verify(proof: &str, request: &Request<'_>) -> Result<Proof, ProofError> {
    if proof.len() > MAX_PROOF_LEN {
        return Err(ProofError::TooLong);
    }
    let mut parts = proof.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ProofError::Malformed);
    };
    let header: Value = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(ProofError::Malformed)?;
    let text = |name: &str| header.get(name).and_then(Value::as_str);
    if !text("typ").is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt")) {
        return Err(ProofError::Type);
    }
    let alg = text("alg")
        .filter(|alg| ALGS.contains(alg))
        .and_then(|alg| alg.parse::<Algorithm>().ok())
        .ok_or(ProofError::Algorithm)?;
    let Some(Value::Object(jwk)) = header.get("jwk") else {
        return Err(ProofError::Key);
    };
    if PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)) {
        return Err(ProofError::PrivateKey);
    }
    if !matches!(
        jwk.get("kty").and_then(Value::as_str),
        Some("EC" | "RSA" | "OKP")
    ) {
        return Err(ProofError::Key);
    }
    let jwk: Jwk =
        serde_json::from_value(Value::Object(jwk.clone())).map_err(|_| ProofError::Key)?;
    let jkt = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .map_err(|_| ProofError::Key)?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| ProofError::Key)?;
    let mut validation = Validation::new(alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Claims>(proof, &key, &validation)
        .map_err(|_| ProofError::Signature)?
        .claims;
    if claims.htm != request.method {
        return Err(ProofError::Method);
    }
    if !same_endpoint(&claims.htu, request.url) {
        return Err(ProofError::Url);
    }
    if claims.iat < request.now - IAT_PAST_SECS || claims.iat > request.now + IAT_FUTURE_SECS {
        return Err(ProofError::Time);
    }
    let fits = |v: &str| !v.is_empty() && v.len() <= MAX_VALUE_LEN;
    if !fits(claims.jti.as_str()) || !claims.nonce.as_deref().is_none_or(fits) {
        return Err(ProofError::Value);
    }
    if let Some(token) = request.access_token {
        let expected = access_token_hash(token);
        let matches = claims
            .ath
            .as_deref()
            .is_some_and(|ath| bool::from(ath.as_bytes().ct_eq(expected.as_bytes())));
        if !matches {
            return Err(ProofError::AccessTokenHash);
        }
    }
    Ok(Proof {
        jkt,
        jti: claims.jti,
        nonce: claims.nonce,
    })
}

/// Whether `htu` names `endpoint`, both parsed and normalised by the url crate (scheme and
/// host case, default port, dot segments, percent-encoding), ignoring the query and
/// fragment of `htu` (§4.3 item 9; RFC 3986 §6.2.2, §6.2.3).
fn same_endpoint(htu: &str, endpoint: &url::Url) -> bool {
    let Ok(mut htu) = url::Url::parse(htu) else {
        return false;
    };
    htu.set_query(None);
    htu.set_fragment(None);
    htu == *endpoint
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use jsonwebtoken::EncodingKey;
    use serde_json::json;

    /// Test keys (`openssl genpkey`), nothing signs with them elsewhere.
    const P256: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNlKXwmpDvfQuHSko\nsuJaJuyGsOQ9UNMC10ktppRugGehRANCAARUhFiAF8Br02H9/7p8JVME4Xc55VqJ\nP4nZ7XdomDLHOi2CLvYvfNPg2NiOha0Ei4X7pd9qkNJV/sulNwybpWwS\n-----END PRIVATE KEY-----\n";
    const OTHER_P256: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgW5Uibk+wlfSM3PxP\n9giljFe/j3G+vWa8m3IvBoATpiqhRANCAAS1qKoU7r1nOIGesgpmfT8+0ImWvby+\nxVu4t0HNsV9MUl85W2fMrmXl60xsMZcUCYgH/JAr/llXjfHY8tpuT6if\n-----END PRIVATE KEY-----\n";
    const ED25519: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIP5ZkxKXIqsdbJ/bF81COsN7Jg61JR5qDkrzea4H5qgb\n-----END PRIVATE KEY-----\n";

    const NOW: i64 = 1_800_000_000;
    const TOKEN_URL: &str = "https://auth.example.com/oidc/token";

    fn key(pem: &str, alg: Algorithm) -> (EncodingKey, Value) {
        let key = match alg {
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()).unwrap(),
            _ => EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
        };
        let jwk = serde_json::to_value(Jwk::from_encoding_key(&key, alg).unwrap()).unwrap();
        (key, jwk)
    }

    /// A proof with `header` and `claims`, signed with `key` as `alg` (any header, as an
    /// attacker writes it).
    fn signed(header: &Value, claims: &Value, key: &EncodingKey, alg: Algorithm) -> String {
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, alg).unwrap();
        format!("{message}.{signature}")
    }

    fn claims() -> Value {
        json!({"jti": "j1", "htm": "POST", "htu": TOKEN_URL, "iat": NOW})
    }

    fn header(alg: &str, jwk: &Value) -> Value {
        json!({"typ": "dpop+jwt", "alg": alg, "jwk": jwk})
    }

    fn at_token_endpoint(url: &url::Url) -> Request<'_> {
        Request {
            method: "POST",
            url,
            access_token: None,
            now: NOW,
        }
    }

    #[test]
    fn a_proof_holds_with_its_key_and_gives_its_thumbprint() {
        let url = url::Url::parse(TOKEN_URL).unwrap();
        for (pem, alg, name) in [
            (P256, Algorithm::ES256, "ES256"),
            (ED25519, Algorithm::EdDSA, "EdDSA"),
        ] {
            let (key, jwk) = key(pem, alg);
            let mut c = claims();
            c["nonce"] = json!("n1");
            let proof = signed(&header(name, &jwk), &c, &key, alg);
            let p = verify(&proof, &at_token_endpoint(&url)).unwrap();
            let expected = serde_json::from_value::<Jwk>(jwk)
                .unwrap()
                .thumbprint(ThumbprintHash::SHA256)
                .unwrap();
            assert_eq!(p.jkt, expected);
            assert_eq!((p.jti.as_str(), p.nonce.as_deref()), ("j1", Some("n1")));
        }
    }

    /// RFC 7638 §3.1: the thumbprint of the example RSA key.
    #[test]
    fn thumbprints_are_those_of_rfc_7638() {
        let jwk: Jwk = serde_json::from_value(json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29"
        }))
        .unwrap();
        assert_eq!(
            jwk.thumbprint(ThumbprintHash::SHA256).unwrap(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    /// RFC 9449 §4.3 item 9 (and §4.2: htu without query and fragment), as a table.
    #[test]
    fn htu_matches_the_endpoint_after_normalisation_only() {
        let endpoint = url::Url::parse(TOKEN_URL).unwrap();
        for (htu, same) in [
            (TOKEN_URL, true),
            ("HTTPS://Auth.Example.COM/oidc/token", true),
            ("https://auth.example.com:443/oidc/token", true),
            ("https://auth.example.com/oidc/./token", true),
            ("https://auth.example.com/oidc/token?x=1#f", true),
            ("https://auth.example.com/oidc/token/", false),
            ("https://auth.example.com/oidc/userinfo", false),
            ("http://auth.example.com/oidc/token", false),
            ("https://auth.example.com:8443/oidc/token", false),
            ("https://auth.example.com.evil.example/oidc/token", false),
            ("https://evil.example/oidc/token", false),
            ("/oidc/token", false),
            ("", false),
        ] {
            assert_eq!(same_endpoint(htu, &endpoint), same, "{htu}");
        }
    }

    /// What an attacker may send as a proof, each refused with its reason.
    #[test]
    fn proofs_that_do_not_hold_are_refused() {
        let url = url::Url::parse(TOKEN_URL).unwrap();
        let (key, jwk) = key(P256, Algorithm::ES256);
        let (other, other_jwk) = self::key(OTHER_P256, Algorithm::ES256);
        let good = header("ES256", &jwk);
        let with = |name: &str, value: Value| {
            let mut c = claims();
            c[name] = value;
            c
        };
        let without = |name: &str| {
            let mut c = claims();
            c.as_object_mut().unwrap().remove(name);
            c
        };
        let mut private = jwk.clone();
        private["d"] = json!("NlKXwmpDvfQuHSkosuJaJuyGsOQ9UNMC10ktppRugGc");
        let hmac = EncodingKey::from_secret(b"a shared secret a shared secret!");
        let es = |h: &Value, c: &Value| signed(h, c, &key, Algorithm::ES256);
        let cases: Vec<(&str, String, ProofError)> = vec![
            (
                "oversize",
                "a".repeat(MAX_PROOF_LEN + 1),
                ProofError::TooLong,
            ),
            ("not a JWS", "garbage".into(), ProofError::Malformed),
            (
                "four parts",
                format!("{}.x", es(&good, &claims())),
                ProofError::Malformed,
            ),
            (
                "a header that is no JSON",
                format!(
                    "bm90IGpzb24.{}",
                    es(&good, &claims()).split_once('.').unwrap().1
                ),
                ProofError::Malformed,
            ),
            (
                "typ JWT",
                es(
                    &json!({"typ": "JWT", "alg": "ES256", "jwk": jwk}),
                    &claims(),
                ),
                ProofError::Type,
            ),
            (
                "no typ",
                es(&json!({"alg": "ES256", "jwk": jwk}), &claims()),
                ProofError::Type,
            ),
            (
                "alg none",
                format!(
                    "{}.{}.",
                    URL_SAFE_NO_PAD.encode(header("none", &jwk).to_string()),
                    URL_SAFE_NO_PAD.encode(claims().to_string())
                ),
                ProofError::Algorithm,
            ),
            (
                "HS256 with the key in the header",
                signed(
                    &header(
                        "HS256",
                        &json!({"kty": "oct", "k": URL_SAFE_NO_PAD.encode(b"a shared secret a shared secret!")}),
                    ),
                    &claims(),
                    &hmac,
                    Algorithm::HS256,
                ),
                ProofError::Algorithm,
            ),
            (
                "no jwk",
                es(&json!({"typ": "dpop+jwt", "alg": "ES256"}), &claims()),
                ProofError::Key,
            ),
            (
                "a kid instead of a jwk",
                es(
                    &json!({"typ": "dpop+jwt", "alg": "ES256", "kid": "k1"}),
                    &claims(),
                ),
                ProofError::Key,
            ),
            (
                "a private key in jwk",
                es(&header("ES256", &private), &claims()),
                ProofError::PrivateKey,
            ),
            (
                "a symmetric jwk",
                es(
                    &header("ES256", &json!({"kty": "oct", "k": "c2VjcmV0"})),
                    &claims(),
                ),
                ProofError::PrivateKey,
            ),
            (
                "a jwk of no known type",
                es(
                    &header("ES256", &json!({"kty": "XYZ", "x": "a"})),
                    &claims(),
                ),
                ProofError::Key,
            ),
            (
                "signed by another key than jwk",
                signed(&good, &claims(), &other, Algorithm::ES256),
                ProofError::Signature,
            ),
            (
                "jwk of one key, alg of another kind",
                signed(
                    &header("EdDSA", &other_jwk),
                    &claims(),
                    &other,
                    Algorithm::ES256,
                ),
                ProofError::Signature,
            ),
            ("no jti", es(&good, &without("jti")), ProofError::Signature),
            ("no iat", es(&good, &without("iat")), ProofError::Signature),
            ("no htm", es(&good, &without("htm")), ProofError::Signature),
            ("no htu", es(&good, &without("htu")), ProofError::Signature),
            (
                "another method",
                es(&good, &with("htm", json!("GET"))),
                ProofError::Method,
            ),
            (
                "a method in lower case",
                es(&good, &with("htm", json!("post"))),
                ProofError::Method,
            ),
            (
                "another URL",
                es(
                    &good,
                    &with("htu", json!("https://auth.example.com/oidc/userinfo")),
                ),
                ProofError::Url,
            ),
            (
                "another server",
                es(
                    &good,
                    &with("htu", json!("https://evil.example/oidc/token")),
                ),
                ProofError::Url,
            ),
            (
                "too old",
                es(&good, &with("iat", json!(NOW - IAT_PAST_SECS - 1))),
                ProofError::Time,
            ),
            (
                "from the future",
                es(&good, &with("iat", json!(NOW + IAT_FUTURE_SECS + 1))),
                ProofError::Time,
            ),
            (
                "an empty jti",
                es(&good, &with("jti", json!(""))),
                ProofError::Value,
            ),
            (
                "an overlong jti",
                es(&good, &with("jti", json!("j".repeat(MAX_VALUE_LEN + 1)))),
                ProofError::Value,
            ),
            (
                "an overlong nonce",
                es(&good, &with("nonce", json!("n".repeat(MAX_VALUE_LEN + 1)))),
                ProofError::Value,
            ),
        ];
        for (case, proof, why) in cases {
            assert_eq!(verify(&proof, &at_token_endpoint(&url)), Err(why), "{case}");
        }
        // The edges of the window hold.
        for iat in [NOW - IAT_PAST_SECS, NOW + IAT_FUTURE_SECS] {
            assert!(
                verify(
                    &es(&good, &with("iat", json!(iat))),
                    &at_token_endpoint(&url)
                )
                .is_ok()
            );
        }
    }

    /// At a resource: `ath` must be the hash of the token presented (§4.3 item 11).
    #[test]
    fn at_a_resource_ath_must_be_the_access_tokens_hash() {
        let url = url::Url::parse("https://auth.example.com/oidc/userinfo").unwrap();
        let (key, jwk) = key(P256, Algorithm::ES256);
        let h = header("ES256", &jwk);
        let request = Request {
            method: "GET",
            url: &url,
            access_token: Some("the-access-token"),
            now: NOW,
        };
        let with_ath = |ath: Option<&str>| {
            let mut c = json!({"jti": "j1", "htm": "GET", "htu": url.as_str(), "iat": NOW});
            if let Some(ath) = ath {
                c["ath"] = json!(ath);
            }
            signed(&h, &c, &key, Algorithm::ES256)
        };
        let right = access_token_hash("the-access-token");
        assert!(verify(&with_ath(Some(&right)), &request).is_ok());
        for (case, ath) in [
            ("no ath", None),
            ("another token's", Some(access_token_hash("another-token"))),
            ("the token itself", Some("the-access-token".to_owned())),
            ("padded", Some(format!("{right}="))),
        ] {
            assert_eq!(
                verify(&with_ath(ath.as_deref()), &request),
                Err(ProofError::AccessTokenHash),
                "{case}"
            );
        }
    }
}
