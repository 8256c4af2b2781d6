//! Who the user is, as the gateway tells an upstream: the identity read from the session,
//! plain identity headers, and optionally a short-lived signed JWT (JWS, EdDSA or ES256)
//! whose public keys the server publishes as a JWK Set, so an upstream can verify it
//! without the session secret.

use std::path::{Path, PathBuf};

use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair,
};
use axum::http::{HeaderName, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use authcore::SignInInfo;

use super::rules::Identity;

/// The identity of a session JSON (`user.id`, `user.email`, `user.name`,
/// `user.provider`, `user.groups`, as the gateway's callbacks put them there) and how its
/// user signed in, where the session records it.
pub fn identity_of(session: &Value, sign_in: Option<&SignInInfo>) -> Identity {
    let user = session.get("user");
    let text = |k: &str| {
        user.and_then(|u| u.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let groups = user
        .and_then(|u| u.get("groups"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Identity {
        id: text("id"),
        email: text("email"),
        name: text("name"),
        provider: text("provider"),
        groups,
        sign_in: sign_in.cloned(),
    }
}

/// Names of the identity headers sent to the upstream (`[gateway.headers]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct HeaderNames {
    /// The user id (default `X-Auth-Request-User`).
    pub user: String,
    /// The email (default `X-Auth-Request-Email`).
    pub email: String,
    /// The display name (default `X-Auth-Request-Name`).
    pub name: String,
    /// Groups or roles, comma-separated (default `X-Auth-Request-Groups`).
    pub groups: String,
    /// The sign-in provider (default `X-Auth-Request-Provider`).
    pub provider: String,
    /// How the user signed in: RFC 8176 methods, comma-separated, `mfa` among them when two
    /// factors were proven (default `X-Auth-Request-Amr`; empty where not recorded).
    pub amr: String,
    /// When the user signed in, seconds since 1970 (default `X-Auth-Request-Auth-Time`).
    pub auth_time: String,
    /// The signed identity JWT, when signing keys are configured (default
    /// `X-Auth-Request-Jwt`).
    pub jwt: String,
}

impl Default for HeaderNames {
    fn default() -> Self {
        HeaderNames {
            user: "X-Auth-Request-User".into(),
            email: "X-Auth-Request-Email".into(),
            name: "X-Auth-Request-Name".into(),
            groups: "X-Auth-Request-Groups".into(),
            provider: "X-Auth-Request-Provider".into(),
            amr: "X-Auth-Request-Amr".into(),
            auth_time: "X-Auth-Request-Auth-Time".into(),
            jwt: "X-Auth-Request-Jwt".into(),
        }
    }
}

impl HeaderNames {
    /// Checks every name is a valid header name; the error names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        for (key, name) in self.all() {
            HeaderName::try_from(name)
                .map_err(|_| format!("[gateway.headers] {key} = {name:?} is not a header name"))?;
        }
        Ok(())
    }

    fn all(&self) -> [(&'static str, &str); 8] {
        [
            ("user", &self.user),
            ("email", &self.email),
            ("name", &self.name),
            ("groups", &self.groups),
            ("provider", &self.provider),
            ("amr", &self.amr),
            ("auth_time", &self.auth_time),
            ("jwt", &self.jwt),
        ]
    }

    /// Every configured name (lower case), for stripping from the client's request.
    pub fn lowercase(&self) -> Vec<String> {
        self.all()
            .iter()
            .map(|(_, n)| n.to_ascii_lowercase())
            .collect()
    }

    /// The identity headers for `who` (`None`: nobody signed in): every one, empty where
    /// there is no value (or the value cannot be a header value), so that a proxy copying
    /// them replaces whatever a client sent (Caddy 2.6 would otherwise pass its placeholder
    /// text on). The JWT header is added separately.
    pub fn headers_for(&self, who: Option<&Identity>) -> Vec<(HeaderName, HeaderValue)> {
        let groups = who.map(|w| w.groups.join(","));
        let sign_in = who.and_then(|w| w.sign_in.as_ref());
        let amr = sign_in.map(|s| s.amr.join(","));
        let auth_time = sign_in.and_then(|s| s.auth_time).map(|t| t.to_string());
        [
            (&self.user, who.and_then(|w| w.id.as_deref())),
            (&self.email, who.and_then(|w| w.email.as_deref())),
            (&self.name, who.and_then(|w| w.name.as_deref())),
            (&self.provider, who.and_then(|w| w.provider.as_deref())),
            (&self.groups, groups.as_deref()),
            (&self.amr, amr.as_deref()),
            (&self.auth_time, auth_time.as_deref()),
        ]
        .into_iter()
        .filter_map(|(name, value)| {
            let value = value
                .and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
                .unwrap_or_else(|| HeaderValue::from_static(""));
            Some((HeaderName::try_from(name.as_str()).ok()?, value))
        })
        .collect()
    }
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

/// One key: its `kid` (RFC 7638 thumbprint), algorithm, signing key, public JWK and the
/// key that verifies its signatures.
struct SigningKey {
    kid: String,
    alg: jsonwebtoken::Algorithm,
    encoding: jsonwebtoken::EncodingKey,
    decoding: jsonwebtoken::DecodingKey,
    jwk: Value,
}

/// The signing keys: the first signs, all are published (rotation: put the new key first
/// and keep the old one listed until tokens signed with it have expired).
pub struct SigningKeys {
    keys: Vec<SigningKey>,
    /// Identity JWTs made recently, by their claims other than `iat` / `exp`: reused while
    /// young (see [`SigningKeys::sign`]). At most [`MAX_CACHED_JWTS`]; starts over when full.
    recent: std::sync::Mutex<std::collections::HashMap<String, (i64, String)>>,
}

/// Identity JWTs kept for reuse at most (one per signed-in user and upstream origin).
pub const MAX_CACHED_JWTS: usize = 4096;

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|k| k.kid.as_str()).collect();
        f.debug_struct("SigningKeys").field("kids", &kids).finish()
    }
}

/// The JWS name of a signing key's algorithm.
fn alg_name(alg: jsonwebtoken::Algorithm) -> &'static str {
    match alg {
        jsonwebtoken::Algorithm::EdDSA => "EdDSA",
        jsonwebtoken::Algorithm::RS256 => "RS256",
        _ => "ES256",
    }
}

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
        Ok(SigningKeys {
            keys,
            recent: Default::default(),
        })
    }

    fn key(pem: &[u8]) -> Option<SigningKey> {
        let (kid, alg, encoding, jwk) = Self::private_key(pem)?;
        let public: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk.clone()).ok()?;
        Some(SigningKey {
            kid,
            alg,
            encoding,
            decoding: jsonwebtoken::DecodingKey::from_jwk(&public).ok()?,
            jwk,
        })
    }

    /// The `kid`, algorithm, signing key and public JWK of a PEM text.
    fn private_key(
        pem: &[u8],
    ) -> Option<(
        String,
        jsonwebtoken::Algorithm,
        jsonwebtoken::EncodingKey,
        Value,
    )> {
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
                jsonwebtoken::EncodingKey::from_ed_der(der),
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
            return Some((
                kid,
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::EncodingKey::from_rsa_pem(pem).ok()?,
                jwk,
            ));
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
            jsonwebtoken::EncodingKey::from_ec_der(der),
            jwk,
        ))
    }

    /// The JWK Set of every key.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
    }

    /// The JWS algorithms of the keys (`EdDSA`, `ES256`, `RS256`), the signing one first.
    pub fn algorithms(&self) -> Vec<&'static str> {
        let mut algs: Vec<&'static str> = Vec::new();
        for k in &self.keys {
            let alg = alg_name(k.alg);
            if !algs.contains(&alg) {
                algs.push(alg);
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

    /// [`SigningKeys::sign_claims`] with the first key of algorithm `alg` (`RS256`, …;
    /// the first key when `None` or when no key has it).
    pub fn sign_claims_as<T: serde::Serialize>(
        &self,
        alg: Option<&str>,
        typ: Option<&str>,
        claims: &T,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let key = alg
            .and_then(|alg| self.keys.iter().find(|k| alg_name(k.alg) == alg))
            .unwrap_or(&self.keys[0]);
        let mut header = jsonwebtoken::Header::new(key.alg);
        header.kid = Some(key.kid.clone());
        if let Some(typ) = typ {
            header.typ = Some(typ.to_owned());
        }
        jsonwebtoken::encode(&header, claims, &key.encoding)
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
        // key found decides, its own algorithm only.
        let mut validation = validation.clone();
        validation.algorithms = vec![key.alg];
        jsonwebtoken::decode::<T>(token, &key.decoding, &validation)
            .ok()
            .map(|d| d.claims)
    }

    /// A JWT for `who`, valid `ttl_secs` from its `iat`: `iss` the gateway, `aud` the origin
    /// of the upstream (`https://app.example.com`), `sub`, `email`, `name`, `groups`,
    /// `provider`, `amr` and `auth_time` (where the session records them), `iat`, `exp`,
    /// with the signing key's `kid`.
    ///
    /// Signing costs more than the rest of a forward-auth check (`jsonwebtoken` parses the
    /// PKCS#8 key again for every signature), so a JWT with the same claims made less than a
    /// tenth of `ttl_secs` ago is returned again: every JWT an upstream receives still has at
    /// least 90 % of its lifetime ahead of it.
    pub fn sign(
        &self,
        who: &Identity,
        issuer: &str,
        audience: &str,
        now: i64,
        ttl_secs: i64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let key = &self.keys[0];
        let identity_claims = IdentityClaims {
            iss: issuer,
            aud: audience,
            sub: who.id.as_deref(),
            email: who.email.as_deref(),
            name: who.name.as_deref(),
            groups: &who.groups,
            provider: who.provider.as_deref(),
            amr: who.sign_in.as_ref().map(|s| s.amr.as_slice()),
            auth_time: who.sign_in.as_ref().and_then(|s| s.auth_time),
        };
        // The claims' JSON is also the cache key. Serialising strings cannot fail; were it to,
        // nothing is cached rather than every identity sharing one empty key.
        let identity = serde_json::to_string(&identity_claims).ok();
        let reuse_for = ttl_secs / 10;
        if let Some(identity) = &identity {
            let recent = self
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((iat, jwt)) = recent.get(identity)
                && (0..reuse_for).contains(&(now - iat))
            {
                return Ok(jwt.clone());
            }
        }
        let claims = SignedClaims {
            identity: identity_claims,
            iat: now,
            exp: now + ttl_secs,
        };
        let mut header = jsonwebtoken::Header::new(key.alg);
        header.kid = Some(key.kid.clone());
        let jwt = jsonwebtoken::encode(&header, &claims, &key.encoding)?;
        if let Some(identity) = identity
            && reuse_for > 0
        {
            let mut recent = self
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if recent.len() >= MAX_CACHED_JWTS {
                recent.clear();
            }
            recent.insert(identity, (now, jwt.clone()));
        }
        Ok(jwt)
    }
}

/// The identity JWT's claims but its times, in the order they are written (`null` for an
/// unknown id, email, name or provider, as the upstreams read them).
#[derive(serde::Serialize)]
struct IdentityClaims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: Option<&'a str>,
    email: Option<&'a str>,
    name: Option<&'a str>,
    groups: &'a [String],
    provider: Option<&'a str>,
    /// How the user signed in (OIDC Core §2), where the session records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    amr: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_time: Option<i64>,
}

/// The identity JWT's claims.
#[derive(serde::Serialize)]
struct SignedClaims<'a> {
    #[serde(flatten)]
    identity: IdentityClaims<'a>,
    iat: i64,
    exp: i64,
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

    fn who() -> Identity {
        Identity {
            id: Some("u1".into()),
            email: Some("ada@example.com".into()),
            groups: vec!["admins".into()],
            sign_in: Some(SignInInfo::new(
                vec!["pwd".into(), "otp".into(), "mfa".into()],
                Some(1_699_999_990),
            )),
            ..Identity::default()
        }
    }

    #[test]
    fn identity_jwts_are_reused_for_a_tenth_of_their_lifetime() {
        let p = Path::new("k.pem");
        let keys = SigningKeys::from_pems(&[(p, ED25519.as_bytes().to_vec())]).unwrap();
        let (iss, aud) = ("https://auth.example.com", "https://app.example.com");
        let t0 = 1_700_000_000;
        let first = keys.sign(&who(), iss, aud, t0, 60).unwrap();
        assert_eq!(keys.sign(&who(), iss, aud, t0 + 5, 60).unwrap(), first);
        // Six seconds is a tenth of 60: a new JWT, with its own iat.
        let later = keys.sign(&who(), iss, aud, t0 + 6, 60).unwrap();
        assert_ne!(later, first);
        let payload = |jwt: &str| -> Value {
            let part = jwt.split('.').nth(1).unwrap();
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        assert_eq!(payload(&later)["iat"], t0 + 6);
        assert_eq!(payload(&later)["exp"], t0 + 66);
        // Another upstream, another user, a clock that went back, a short lifetime: signed anew.
        assert_ne!(
            keys.sign(&who(), iss, "https://b.example.com", t0 + 7, 60)
                .unwrap(),
            later
        );
        let other = Identity {
            email: Some("other@example.com".into()),
            ..who()
        };
        assert_eq!(
            payload(&keys.sign(&other, iss, aud, t0 + 7, 60).unwrap())["email"],
            "other@example.com"
        );
        assert_eq!(
            payload(&keys.sign(&who(), iss, aud, t0 + 1, 60).unwrap())["iat"],
            t0 + 1
        );
        keys.sign(&who(), iss, aud, t0 + 100, 9).unwrap();
        let short = keys.sign(&who(), iss, aud, t0 + 101, 9).unwrap();
        assert_eq!(payload(&short)["iat"], t0 + 101);
    }

    #[test]
    fn signed_identity_verifies_with_the_published_keys() {
        let p = Path::new("k.pem");
        for pems in [
            vec![(p, ED25519.as_bytes().to_vec()), (p, p256_pem())],
            vec![(p, p256_pem()), (p, ED25519.as_bytes().to_vec())],
            vec![(p, rsa_pem()), (p, ED25519.as_bytes().to_vec())],
        ] {
            let keys = SigningKeys::from_pems(&pems).unwrap();
            let token = keys
                .sign(
                    &who(),
                    "https://auth.example.com",
                    "https://app.example.com",
                    1_700_000_000,
                    60,
                )
                .unwrap();
            let header = jsonwebtoken::decode_header(&token).unwrap();
            let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(keys.jwks()).unwrap();
            assert_eq!(jwks.keys.len(), 2);
            let jwk = jwks.find(header.kid.as_deref().unwrap()).unwrap();
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_audience(&["https://app.example.com"]);
            validation.set_issuer(&["https://auth.example.com"]);
            validation.validate_exp = false;
            let data = jsonwebtoken::decode::<Value>(
                &token,
                &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
                &validation,
            )
            .unwrap();
            assert_eq!(data.claims["sub"], "u1");
            assert_eq!(data.claims["groups"], json!(["admins"]));
            assert_eq!(data.claims["amr"], json!(["pwd", "otp", "mfa"]));
            assert_eq!(data.claims["auth_time"], 1_699_999_990);
            assert_eq!(data.claims["exp"], 1_700_000_060);
        }
    }

    /// A token signed as an algorithm says which key signs it; the JWK Set publishes each.
    #[test]
    fn tokens_are_signed_with_the_key_of_the_algorithm_asked_for() {
        let p = Path::new("k.pem");
        let pems = [
            (p, ED25519.as_bytes().to_vec()),
            (p, rsa_pem()),
            (p, p256_pem()),
        ];
        let keys = SigningKeys::from_pems(&pems).unwrap();
        assert_eq!(keys.algorithms(), ["EdDSA", "RS256", "ES256"]);
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

    #[test]
    fn identity_headers() {
        let names = HeaderNames::default();
        let mut w = who();
        w.name = Some("bad\r\nname".into());
        w.sign_in = None;
        let get = |w: &Identity, n: &str| {
            names
                .headers_for(Some(w))
                .into_iter()
                .find(|(k, _)| k.as_str() == n)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(get(&w, "x-auth-request-user").as_deref(), Some("u1"));
        assert_eq!(get(&w, "x-auth-request-groups").as_deref(), Some("admins"));
        assert_eq!(get(&w, "x-auth-request-name").as_deref(), Some(""));
        assert_eq!(get(&w, "x-auth-request-amr").as_deref(), Some(""));
        w.sign_in = Some(SignInInfo::new(
            vec!["pwd".into(), "otp".into(), "mfa".into()],
            Some(1_700_000_000),
        ));
        assert_eq!(
            get(&w, "x-auth-request-amr").as_deref(),
            Some("pwd,otp,mfa")
        );
        assert_eq!(
            get(&w, "x-auth-request-auth-time").as_deref(),
            Some("1700000000")
        );
        let anonymous = names.headers_for(None);
        assert_eq!(anonymous.len(), 7);
        assert!(anonymous.iter().all(|(_, v)| v.is_empty()));
        assert!(names.validate().is_ok());
        let bad = HeaderNames {
            email: "bad header".into(),
            ..HeaderNames::default()
        };
        assert!(bad.validate().unwrap_err().contains("email"));
        let session =
            json!({"user": {"id": "u1", "email": "a@b.c", "groups": ["g"], "provider": "oidc"}});
        let id = identity_of(&session, None);
        assert_eq!(
            (id.id.as_deref(), id.provider.as_deref()),
            (Some("u1"), Some("oidc"))
        );
        assert_eq!(id.groups, ["g"]);
    }
}
