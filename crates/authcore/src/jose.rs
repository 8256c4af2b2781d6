//! JOSE primitives behind every Auth.js token (Auth.js `jwt.ts`).
//!
//! Auth.js encrypts its session token and all "sealed" cookies as a compact JWE with
//! `alg: "dir"` and `enc: "A256CBC-HS512"`, keyed by HKDF-SHA256 of the configured secret.
//! No maintained pure-Rust JOSE crate supports that `enc`, so this module composes RFC 7518
//! §5.2 from well-kept crates — AES-256-CBC from `aws-lc-rs` (faster than `RustCrypto`'s
//! `cbc`) and HMAC-SHA-512 from `RustCrypto` (faster than `aws-lc-rs`'s), as
//! `benches/jwe_primitives.rs` compares them — and contains no cipher or MAC of its own.
//! Decryption also accepts `A256GCM` (`aws-lc-rs`), which Auth.js reads but never writes.
//!
//! [`KeyRing`] holds the secrets and caches the derived keys per `(salt, enc)`, so after the
//! first token of a given kind no HKDF or thumbprint work is done again.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::cipher::{
    AES_256, DecryptionContext, EncryptionContext, PaddedBlockDecryptingKey,
    PaddedBlockEncryptingKey, UnboundCipherKey,
};
use aws_lc_rs::iv::FixedLength;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};

/// Errors of the JOSE layer: parsing, algorithm checks, key selection and decryption.
///
/// Messages follow the `jose` library Auth.js uses where one exists. Strings taken from a
/// token (an unsupported `alg` or `enc`) are truncated to 64 bytes.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoseError {
    /// Not a well-formed compact JWE (segment count, base64url, header JSON, IV or tag length).
    #[error("invalid compact JWE: {reason}")]
    Malformed {
        /// What was wrong, for logs.
        reason: &'static str,
    },
    /// The `alg` header is not `dir` (`ERR_JOSE_ALG_NOT_ALLOWED` in Auth.js).
    #[error("\"alg\" (Algorithm) Header Parameter value not allowed: {alg:?}")]
    UnsupportedAlgorithm {
        /// The `alg` found in the header.
        alg: String,
    },
    /// The `enc` header is neither `A256CBC-HS512` nor `A256GCM`.
    #[error("\"enc\" (Encryption Algorithm) Header Parameter value not allowed: {enc:?}")]
    UnsupportedEncryption {
        /// The `enc` found in the header.
        enc: String,
    },
    /// The header uses a parameter this implementation (like `jose`) refuses: `crit` or `zip`.
    #[error("JWE header parameter {name:?} is not supported")]
    UnsupportedHeader {
        /// The header parameter name.
        name: &'static str,
    },
    /// The header names a `kid` that none of the secrets derives to.
    #[error("no matching decryption secret")]
    NoMatchingSecret,
    /// Authentication tag mismatch, or the content could not be decrypted.
    #[error("decryption operation failed")]
    DecryptionFailed,
    /// A [`KeyRing`] was built from an empty list of secrets.
    #[error("no secret configured")]
    NoSecret,
    /// One of the secrets is the empty string.
    #[error("secret at index {index} is empty")]
    EmptySecret {
        /// Position of the empty secret in the list.
        index: usize,
    },
    /// The operating system's random number generator failed.
    #[error("operating system random number generator failed")]
    Rng,
}

/// JWE content-encryption algorithms (`enc`) that Auth.js accepts.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enc {
    /// `A256CBC-HS512`: what Auth.js writes (64-byte key, RFC 7518 §5.2.5).
    A256CbcHs512,
    /// `A256GCM`: accepted on decode only (32-byte key).
    A256Gcm,
}

impl Enc {
    /// The registered `enc` header value.
    pub const fn name(self) -> &'static str {
        match self {
            Self::A256CbcHs512 => "A256CBC-HS512",
            Self::A256Gcm => "A256GCM",
        }
    }

    /// Key length in bytes: 64 for `A256CBC-HS512`, 32 for `A256GCM`.
    pub const fn key_len(self) -> usize {
        match self {
            Self::A256CbcHs512 => 64,
            Self::A256Gcm => 32,
        }
    }

    /// Parses an `enc` header value; `None` for anything Auth.js does not accept.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "A256CBC-HS512" => Some(Self::A256CbcHs512),
            "A256GCM" => Some(Self::A256Gcm),
            _ => None,
        }
    }
}

/// A content-encryption key derived from a secret and a salt, with its `kid`.
///
/// Its `Debug` output is `[redacted]`.
pub struct DerivedKey {
    enc: Enc,
    /// Only the first `enc.key_len()` bytes are used.
    bytes: [u8; 64],
    kid: Box<str>,
    /// base64url of `{"alg":"dir","enc":…,"kid":…}`, precomputed for encryption.
    header_b64: Box<str>,
    /// The cipher, keyed once (AES key schedules, the HMAC's inner and outer pads).
    cipher: Cipher,
}

/// A [`DerivedKey`]'s keyed cipher.
enum Cipher {
    CbcHs512(Box<CbcHs512>),
    Gcm(Box<LessSafeKey>),
}

impl DerivedKey {
    /// Derives the key Auth.js uses for `salt` and `enc` (`getDerivedEncryptionKey` in `jwt.ts`):
    /// HKDF-SHA256(ikm = `secret`, salt = `salt`,
    /// info = `Auth.js Generated Encryption Key (<salt>)`, length = [`Enc::key_len`]).
    pub fn derive(secret: &[u8], salt: &str, enc: Enc) -> Self {
        let mut info = String::with_capacity(salt.len() + 36);
        info.push_str("Auth.js Generated Encryption Key (");
        info.push_str(salt);
        info.push(')');

        Self::hkdf(secret, salt, &info, enc, true)
    }

    /// The key NextAuth.js v4 uses for its session token: HKDF-SHA256(ikm = `secret`,
    /// salt = `""`, info = `NextAuth.js Generated Encryption Key`, 32 bytes), for
    /// `A256GCM`; its tokens carry no `kid`.
    pub fn derive_next_auth_v4(secret: &[u8]) -> Self {
        Self::hkdf(
            secret,
            "",
            "NextAuth.js Generated Encryption Key",
            Enc::A256Gcm,
            false,
        )
    }

    fn hkdf(secret: &[u8], salt: &str, info: &str, enc: Enc, kid_in_header: bool) -> Self {
        let mut bytes = [0u8; 64];
        let okm = &mut bytes[..enc.key_len()];
        crate::crypto::hkdf_sha256(secret, salt.as_bytes(), info.as_bytes(), okm);

        let kid = jwk_thumbprint(okm);
        let mut header = String::with_capacity(64 + kid.len());
        header.push_str(r#"{"alg":"dir","enc":""#);
        header.push_str(enc.name());
        if kid_in_header {
            header.push_str(r#"","kid":""#);
            header.push_str(&kid);
        }
        header.push_str(r#""}"#);

        let header_b64 = URL_SAFE_NO_PAD.encode(header).into_boxed_str();
        let cipher = match enc {
            Enc::A256CbcHs512 => {
                Cipher::CbcHs512(Box::new(CbcHs512::new(&bytes, header_b64.as_bytes())))
            }
            Enc::A256Gcm => Cipher::Gcm(Box::new(LessSafeKey::new(
                UnboundKey::new(&AES_256_GCM, &bytes[..32])
                    .expect("AES-256-GCM takes a 32-byte key"),
            ))),
        };
        Self {
            enc,
            bytes,
            cipher,
            kid: kid.into_boxed_str(),
            header_b64,
        }
    }

    /// Encrypts `plaintext` as a compact JWE under this key (either `enc`), with a fresh
    /// random IV.
    ///
    /// # Errors
    /// [`JoseError::Rng`] if the OS random number generator fails.
    pub fn encrypt(&self, plaintext: Vec<u8>) -> Result<String, JoseError> {
        let mut iv = [0u8; 16];
        crate::random::fill(&mut iv).map_err(|_| JoseError::Rng)?;
        self.encrypt_with_iv(plaintext, iv)
    }

    /// [`DerivedKey::encrypt`] with a caller-supplied IV, which must come from the OS
    /// CSPRNG: all 16 bytes for `A256CBC-HS512`, the first 12 for `A256GCM` (a random
    /// 96-bit nonce, RFC 7518 §5.3).
    fn encrypt_with_iv(&self, plaintext: Vec<u8>, iv: [u8; 16]) -> Result<String, JoseError> {
        let header = self.protected_header_b64();
        match &self.cipher {
            Cipher::CbcHs512(cbc) => Ok(cbc.compact(header, &iv, plaintext)),
            Cipher::Gcm(gcm) => {
                let mut nonce = [0u8; 12];
                nonce.copy_from_slice(&iv[..12]);
                let mut buf = plaintext;
                let tag = gcm
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(header.as_bytes()),
                        &mut buf,
                    )
                    .map_err(|_| JoseError::DecryptionFailed)?;
                Ok(compact(header, &nonce, &buf, tag.as_ref()))
            }
        }
    }

    /// Decrypts a compact JWE made with this key: `alg` `dir`, this key's `enc`, no `crit` or
    /// `zip`; a `kid` is not required (NextAuth.js v4 writes none) but must match when given.
    ///
    /// # Errors
    /// Any malformed or unauthentic input yields an error; this never panics.
    pub fn decrypt(&self, token: &str) -> Result<Vec<u8>, JoseError> {
        let segments = split_compact(token)?;
        if segments[0] == self.protected_header_b64() {
            return open_compact(self, &segments, Vec::new());
        }
        let buf = decode_header(segments[0])?;
        let header = ProtectedHeader::parse(&buf)?;
        let enc = header.checked_enc()?;
        if enc != self.enc {
            return Err(JoseError::NoMatchingSecret);
        }
        match &header.kid {
            None => {}
            Some(Kid::Str(kid)) if kid.as_ref() == self.kid() => {}
            Some(_) => return Err(JoseError::NoMatchingSecret),
        }
        open_compact(self, &segments, buf)
    }

    /// The content-encryption algorithm this key is for.
    pub fn enc(&self) -> Enc {
        self.enc
    }

    /// The RFC 7638 JWK thumbprint of the key, as written in the JWE `kid` header.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The raw key bytes (64 or 32).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.enc.key_len()]
    }

    /// The base64url protected header this key encrypts under (also the JWE AAD).
    pub fn protected_header_b64(&self) -> &str {
        &self.header_b64
    }
}

impl fmt::Debug for DerivedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// RFC 7638 thumbprint of `{"k":…,"kty":"oct"}` with SHA-(key bits), as Auth.js computes it
/// (`sha512` for the 64-byte key, `sha256` for the 32-byte key).
fn jwk_thumbprint(key: &[u8]) -> String {
    let mut jwk = String::with_capacity(24 + key.len() * 4 / 3);
    jwk.push_str(r#"{"k":""#);
    URL_SAFE_NO_PAD.encode_string(key, &mut jwk);
    jwk.push_str(r#"","kty":"oct"}"#);
    if key.len() == 64 {
        URL_SAFE_NO_PAD.encode(crate::crypto::sha512(jwk.as_bytes()))
    } else {
        URL_SAFE_NO_PAD.encode(crate::crypto::sha256(jwk.as_bytes()))
    }
}

/// A secret as configured. Its `Debug` output is `[redacted]`.
struct Secret(Box<[u8]>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Derived keys for one `(salt, enc)`, one per secret in configuration order.
struct CacheEntry {
    salt: Box<str>,
    enc: Enc,
    keys: Arc<[DerivedKey]>,
}

/// Salts are cookie names and fixed strings, a handful per deployment; past this many the
/// keys are derived per call instead of growing the cache without bound.
const MAX_CACHED_SALTS: usize = 64;

/// The configured secrets plus a thread-safe cache of the keys derived from them.
///
/// The first secret encrypts; all secrets are tried on decryption (rotation, as in Auth.js
/// `jwt.ts`).
/// Its `Debug` output shows no secret material.
pub struct KeyRing {
    secrets: Box<[Secret]>,
    cache: RwLock<Vec<CacheEntry>>,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field(
                "secrets",
                &format_args!("[redacted; {}]", self.secrets.len()),
            )
            .finish_non_exhaustive()
    }
}

impl KeyRing {
    /// Builds a key ring; `secrets[0]` encrypts, all decrypt.
    ///
    /// # Errors
    /// [`JoseError::NoSecret`] for an empty list, [`JoseError::EmptySecret`] for an empty secret.
    pub fn new<S: AsRef<[u8]>>(secrets: &[S]) -> Result<Self, JoseError> {
        if secrets.is_empty() {
            return Err(JoseError::NoSecret);
        }
        if let Some(index) = secrets.iter().position(|s| s.as_ref().is_empty()) {
            return Err(JoseError::EmptySecret { index });
        }
        Ok(Self {
            secrets: secrets.iter().map(|s| Secret(s.as_ref().into())).collect(),
            cache: RwLock::new(Vec::new()),
        })
    }

    /// The keys for `(salt, enc)`, one per secret in order; derived on first use, then cached.
    pub fn keys(&self, salt: &str, enc: Enc) -> Arc<[DerivedKey]> {
        let find = |entries: &[CacheEntry]| {
            entries
                .iter()
                .find(|e| e.enc == enc && *e.salt == *salt)
                .map(|e| Arc::clone(&e.keys))
        };
        // A poisoned lock only means another thread panicked mid-push; the Vec is still valid.
        if let Some(keys) = find(&self.cache.read().unwrap_or_else(PoisonError::into_inner)) {
            return keys;
        }
        let keys: Arc<[DerivedKey]> = self
            .secrets
            .iter()
            .map(|s| DerivedKey::derive(&s.0, salt, enc))
            .collect();
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(raced) = find(&cache) {
            return raced;
        }
        if cache.len() < MAX_CACHED_SALTS {
            cache.push(CacheEntry {
                salt: salt.into(),
                enc,
                keys: Arc::clone(&keys),
            });
        }
        keys
    }

    /// Encrypts `plaintext` as a compact JWE (`dir`, `A256CBC-HS512`, `kid`) under the key
    /// derived from the first secret and `salt`, with a fresh random IV (Auth.js `jwt.ts`).
    ///
    /// Takes the plaintext by value to encrypt it in place.
    ///
    /// # Errors
    /// [`JoseError::Rng`] if the OS random number generator fails.
    pub fn encrypt(&self, plaintext: Vec<u8>, salt: &str) -> Result<String, JoseError> {
        let keys = self.keys(salt, Enc::A256CbcHs512);
        keys.first().ok_or(JoseError::NoSecret)?.encrypt(plaintext)
    }

    /// [`KeyRing::encrypt`] under `enc`, with a caller-supplied IV, which must come from
    /// the OS CSPRNG (`A256GCM` takes its first 12 bytes).
    pub(crate) fn encrypt_with_iv(
        &self,
        plaintext: Vec<u8>,
        salt: &str,
        enc: Enc,
        iv: [u8; 16],
    ) -> Result<String, JoseError> {
        let keys = self.keys(salt, enc);
        keys.first()
            .ok_or(JoseError::NoSecret)?
            .encrypt_with_iv(plaintext, iv)
    }

    /// Decrypts a compact JWE written by Auth.js (or by [`KeyRing::encrypt`]) for `salt`.
    ///
    /// Only `alg: "dir"` with `enc` `A256CBC-HS512` or `A256GCM` is accepted. Without a `kid`
    /// header the first secret is used; with one, the secret whose key has that thumbprint.
    ///
    /// # Errors
    /// Any malformed or unauthentic input yields an error; this never panics.
    pub fn decrypt(&self, token: &str, salt: &str) -> Result<Vec<u8>, JoseError> {
        let segments = split_compact(token)?;
        // The usual token carries, byte for byte, the header one of these keys writes (Auth.js
        // writes the same bytes for `A256CBC-HS512`; `A256GCM` is what authcore seals its own
        // tokens with): that names the key without decoding and parsing the header.
        for enc in [Enc::A256CbcHs512, Enc::A256Gcm] {
            let own = self.keys(salt, enc);
            if let Some(key) = own.iter().find(|k| k.protected_header_b64() == segments[0]) {
                return open_compact(key, &segments, Vec::new());
            }
        }
        let buf = decode_header(segments[0])?;
        let header = ProtectedHeader::parse(&buf)?;
        let enc = header.checked_enc()?;
        let keys = self.keys(salt, enc);
        let key = match &header.kid {
            None => keys.first(),
            Some(Kid::Str(kid)) => keys.iter().find(|k| k.kid() == kid.as_ref()),
            // Auth.js compares `kid === thumbprint`: a non-string kid matches no secret.
            Some(Kid::Other(IgnoredAny)) => None,
        }
        .ok_or(JoseError::NoMatchingSecret)?;
        open_compact(key, &segments, buf)
    }
}

/// The five segments of a compact JWE.
fn split_compact(token: &str) -> Result<[&str; 5], JoseError> {
    let mut parts = token.split('.');
    let (Some(h), Some(k), Some(iv), Some(ct), Some(tag), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(malformed("expected 5 segments"));
    };
    Ok([h, k, iv, ct, tag])
}

/// The decoded protected header, in a buffer that [`open_compact`] reuses.
fn decode_header(header_b64: &str) -> Result<Vec<u8>, JoseError> {
    URL_SAFE_NO_PAD
        .decode(header_b64)
        .map_err(|_| malformed("protected header is not base64url"))
}

/// Authenticates and decrypts the segments under `key`: the plaintext, in `buf` (cleared
/// first).
fn open_compact(
    key: &DerivedKey,
    segments: &[&str; 5],
    mut buf: Vec<u8>,
) -> Result<Vec<u8>, JoseError> {
    let [header_b64, encrypted_key, iv_b64, ct_b64, tag_b64] = *segments;
    if !encrypted_key.is_empty() {
        return Err(malformed("unexpected JWE Encrypted Key for \"dir\""));
    }
    buf.clear();
    URL_SAFE_NO_PAD
        .decode_vec(ct_b64, &mut buf)
        .map_err(|_| malformed("ciphertext is not base64url"))?;
    let aad = header_b64.as_bytes();

    let plaintext_len = match &key.cipher {
        Cipher::CbcHs512(cbc) => {
            let iv = decode_fixed::<16>(iv_b64, "invalid IV length")?;
            let tag = decode_fixed::<32>(tag_b64, "invalid authentication tag length")?;
            cbc.open(&iv, aad, &mut buf, &tag)?
        }
        Cipher::Gcm(gcm) => {
            let iv = decode_fixed::<12>(iv_b64, "invalid IV length")?;
            let tag = decode_fixed::<16>(tag_b64, "invalid authentication tag length")?;
            // `aws-lc-rs` opens `ciphertext ‖ tag` in place.
            buf.extend_from_slice(&tag);
            gcm.open_in_place(Nonce::assume_unique_for_key(iv), Aad::from(aad), &mut buf)
                .map_err(|_| JoseError::DecryptionFailed)?
                .len()
        }
    };
    buf.truncate(plaintext_len);
    Ok(buf)
}

/// The header parameters that matter for decryption; the rest are ignored, as `jose` does.
#[derive(Deserialize)]
struct ProtectedHeader<'a> {
    #[serde(borrow, default)]
    alg: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    enc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    kid: Option<Kid<'a>>,
    #[serde(default, deserialize_with = "present")]
    crit: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    zip: Option<IgnoredAny>,
}

impl<'a> ProtectedHeader<'a> {
    /// The header checks, in the order `jose` makes them for Auth.js `decode` (`jwt.ts`): no
    /// `crit`, no `zip`, `alg` `dir`, a supported `enc` (returned).
    fn checked_enc(&self) -> Result<Enc, JoseError> {
        if self.crit.is_some() {
            return Err(JoseError::UnsupportedHeader { name: "crit" });
        }
        if self.zip.is_some() {
            return Err(JoseError::UnsupportedHeader { name: "zip" });
        }
        let alg = self.alg.as_deref().ok_or(malformed("missing \"alg\""))?;
        let enc_name = self.enc.as_deref().ok_or(malformed("missing \"enc\""))?;
        if alg != "dir" {
            return Err(JoseError::UnsupportedAlgorithm {
                alg: truncated(alg),
            });
        }
        Enc::from_name(enc_name).ok_or_else(|| JoseError::UnsupportedEncryption {
            enc: truncated(enc_name),
        })
    }

    fn parse(json: &'a [u8]) -> Result<Self, JoseError> {
        // serde would also accept a JSON array for a struct; JOSE headers must be objects.
        if json.trim_ascii_start().first() != Some(&b'{') {
            return Err(malformed("protected header is not a JSON object"));
        }
        // JSON text is UTF-8 (RFC 8259 §8.1); serde_json does not check the strings it skips,
        // so a header with invalid UTF-8 in an unknown member would pass without this (found
        // by fuzzing, `fuzz/regressions/jwt_decode/`).
        let json =
            std::str::from_utf8(json).map_err(|_| malformed("protected header is not UTF-8"))?;
        serde_json::from_str(json).map_err(|_| malformed("protected header is not valid JSON"))
    }
}

/// A `kid` header as found: a string, or anything else (which matches no key).
#[derive(Deserialize)]
#[serde(untagged)]
enum Kid<'a> {
    Str(#[serde(borrow)] Cow<'a, str>),
    Other(IgnoredAny),
}

/// Maps a present field (even `null`) to `Some`, so "absent" and "null" differ as in JS.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

fn malformed(reason: &'static str) -> JoseError {
    JoseError::Malformed { reason }
}

/// Keeps attacker-chosen header values in errors short.
fn truncated(s: &str) -> String {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default().to_owned()
}

/// Decodes a base64url segment that must hold exactly `N` bytes.
fn decode_fixed<const N: usize>(b64: &str, reason: &'static str) -> Result<[u8; N], JoseError> {
    let mut out = [0u8; N];
    match URL_SAFE_NO_PAD.decode_slice(b64, &mut out) {
        Ok(n) if n == N => Ok(out),
        _ => Err(malformed(reason)),
    }
}

/// Length of `len` bytes after PKCS#7 padding to the AES block size (always adds 1–16 bytes).
const fn cbc_padded_len(len: usize) -> usize {
    (len / 16 + 1) * 16
}

/// `header..iv.ciphertext.tag`, the compact serialization of a `dir` JWE.
fn compact(header_b64: &str, iv: &[u8], ciphertext: &[u8], tag: &[u8]) -> String {
    let mut token = String::with_capacity(
        header_b64.len() + 4 + (iv.len() + ciphertext.len() + tag.len()).div_ceil(3) * 4,
    );
    token.push_str(header_b64);
    token.push_str("..");
    URL_SAFE_NO_PAD.encode_string(iv, &mut token);
    token.push('.');
    URL_SAFE_NO_PAD.encode_string(ciphertext, &mut token);
    token.push('.');
    URL_SAFE_NO_PAD.encode_string(tag, &mut token);
    token
}

/// `AES_256_CBC_HMAC_SHA_512` (RFC 7518 §5.2.2) under one 64-byte key, keyed once:
/// `MAC_KEY` = the first 32 bytes (HMAC-SHA-512, cloned per token: keying costs two
/// SHA-512 compressions, a large part of a session token's tag), `ENC_KEY` = the last 32
/// (AES-256-CBC with PKCS#7, its key schedule expanded once).
///
/// The MAC input starts with the AAD, which for this key's own tokens is always the same
/// protected header (`own_aad`; with Auth.js's `kid` it is longer than a SHA-512 block).
/// `mac_after_own_aad` is the keyed HMAC that has already absorbed it, so each of those
/// tags hashes only the IV, ciphertext and length: one SHA-512 compression fewer per tag.
/// HMAC is a deterministic function of its input, so the tag is the same either way.
struct CbcHs512 {
    mac: Hmac<sha2::Sha512>,
    own_aad: Box<[u8]>,
    mac_after_own_aad: Hmac<sha2::Sha512>,
    encrypt: PaddedBlockEncryptingKey,
    decrypt: PaddedBlockDecryptingKey,
}

impl CbcHs512 {
    /// Keys the cipher; `own_aad` is the protected header this key's tokens carry.
    fn new(key: &[u8; 64], own_aad: &[u8]) -> Self {
        let (mac_key, enc_key) = key.split_at(32);
        let aes =
            || UnboundCipherKey::new(&AES_256, enc_key).expect("AES-256 takes this 32-byte key");
        let mac =
            Hmac::<sha2::Sha512>::new_from_slice(mac_key).expect("HMAC accepts keys of any length");
        let mut mac_after_own_aad = mac.clone();
        mac_after_own_aad.update(own_aad);
        CbcHs512 {
            mac,
            own_aad: own_aad.into(),
            mac_after_own_aad,
            encrypt: PaddedBlockEncryptingKey::cbc_pkcs7(aes()).expect("CBC with an AES key"),
            decrypt: PaddedBlockDecryptingKey::cbc_pkcs7(aes()).expect("CBC with an AES key"),
        }
    }

    /// Replaces the plaintext in `buf` by its padded ciphertext and returns the tag. Never
    /// reuse an IV with the same key; [`KeyRing::encrypt`] draws a fresh random one for
    /// every token.
    fn seal(&self, iv: &[u8; 16], aad: &[u8], buf: &mut Vec<u8>) -> [u8; 32] {
        buf.reserve(cbc_padded_len(buf.len()) - buf.len());
        self.encrypt
            .less_safe_encrypt(buf, EncryptionContext::Iv128(FixedLength::from(*iv)))
            .expect("an IV of the block size and a growable buffer");
        self.tag(aad, iv, buf)
    }

    /// The compact JWE `header..iv.ciphertext.tag` of `plaintext` under `header_b64`
    /// (also the AAD) and `iv`.
    fn compact(&self, header_b64: &str, iv: &[u8; 16], mut plaintext: Vec<u8>) -> String {
        let tag = self.seal(iv, header_b64.as_bytes(), &mut plaintext);
        compact(header_b64, iv, &plaintext, &tag)
    }

    /// Verifies `tag` in constant time *before* decrypting, then decrypts `ciphertext` in
    /// place and returns the plaintext length (the plaintext is `ciphertext[..len]`).
    fn open(
        &self,
        iv: &[u8; 16],
        aad: &[u8],
        ciphertext: &mut [u8],
        tag: &[u8],
    ) -> Result<usize, JoseError> {
        let expected = self.tag(aad, iv, ciphertext);
        // Slices of different lengths are unequal, without panicking.
        if !crate::crypto::ct_eq(&expected, tag) {
            return Err(JoseError::DecryptionFailed);
        }
        self.decrypt
            .decrypt(ciphertext, DecryptionContext::Iv128(FixedLength::from(*iv)))
            .map(|plaintext| plaintext.len())
            .map_err(|_| JoseError::DecryptionFailed)
    }

    /// First 32 bytes of HMAC-SHA-512(`MAC_KEY`, AAD ‖ IV ‖ CT ‖ AL), AL = AAD bits as u64 BE.
    fn tag(&self, aad: &[u8], iv: &[u8; 16], ciphertext: &[u8]) -> [u8; 32] {
        // The AAD is public (the token's first segment): comparing it need not be constant-time.
        let mut mac = if aad == &*self.own_aad {
            self.mac_after_own_aad.clone()
        } else {
            let mut mac = self.mac.clone();
            mac.update(aad);
            mac
        };
        mac.update(iv);
        mac.update(ciphertext);
        // No AAD in memory approaches 2^61 bytes, so the bit count cannot wrap.
        mac.update(&(aad.len() as u64).wrapping_mul(8).to_be_bytes());
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; 32];
        tag.copy_from_slice(&full[..32]);
        tag
    }
}

/// `AES_256_CBC_HMAC_SHA_512` encryption (RFC 7518 §5.2.2.1) with a caller-chosen IV: returns
/// `(ciphertext, tag)`. The token path uses the key cached in [`DerivedKey`]; this form
/// serves the RFC 7518 Appendix B.3 known-answer test.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn encrypt_cbc_hs512_with_iv(
    key: &[u8; 64],
    iv: &[u8; 16],
    aad: &[u8],
    plaintext: &[u8],
) -> (Vec<u8>, [u8; 32]) {
    let mut buf = Vec::with_capacity(cbc_padded_len(plaintext.len()));
    buf.extend_from_slice(plaintext);
    let tag = CbcHs512::new(key, aad).seal(iv, aad, &mut buf);
    (buf, tag)
}

/// `AES_256_CBC_HMAC_SHA_512` decryption (RFC 7518 §5.2.2.2), see [`CbcHs512::open`]; for
/// the known-answer tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn decrypt_cbc_hs512(
    key: &[u8; 64],
    iv: &[u8; 16],
    aad: &[u8],
    ciphertext: &mut [u8],
    tag: &[u8],
) -> Result<usize, JoseError> {
    CbcHs512::new(key, aad).open(iv, aad, ciphertext, tag)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::Value;

    const VECTORS: &str = include_str!("../testdata/authjs-jwt-vectors.json");
    const SECRET: &str = "interop-vector-secret-for-developers-7f3a9c";
    const SALT: &str = "authjs.session-token";

    fn vectors() -> Value {
        serde_json::from_str(VECTORS).unwrap()
    }

    fn session_vector(name: &str) -> Value {
        vectors()["session_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    }

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    #[test]
    fn protected_headers_must_be_utf8_json_objects() {
        assert!(ProtectedHeader::parse(br#"{"alg":"dir","enc":"A256GCM","x":"ok"}"#).is_ok());
        for bad in [
            &b"{\"alg\":\"dir\",\"enc\":\"A256GCM\",\"x\":\"\x97\"}"[..],
            b"{\"alg\":\"d\xffr\"}",
            b"[\"alg\"]",
            b"{\"alg\":",
        ] {
            assert!(ProtectedHeader::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn derived_keys_match_authjs_vectors() {
        let vectors = vectors();
        let entries = vectors["derived_keys"].as_array().unwrap();
        assert!(entries.len() >= 14);
        for entry in entries {
            let salt = entry["salt"].as_str().unwrap();
            let enc = Enc::from_name(entry["enc"].as_str().unwrap()).unwrap();
            let expected_info = format!("Auth.js Generated Encryption Key ({salt})");
            assert_eq!(entry["info"], expected_info.as_str());
            let key = DerivedKey::derive(entry["secret"].as_str().unwrap().as_bytes(), salt, enc);
            assert_eq!(
                hex::encode(key.as_bytes()),
                entry["key_hex"].as_str().unwrap(),
                "{entry}"
            );
            assert_eq!(key.kid(), entry["kid"].as_str().unwrap(), "{entry}");
            assert_eq!(key.enc(), enc);
        }
    }

    // RFC 7518 Appendix B.3, AES_256_CBC_HMAC_SHA_512.
    const B3_IV: &str = "1af38c2dc2b96ffdd86694092341bc04";
    const B3_P: &[u8] = b"A cipher system must not be required to be secret, and it must be able to fall into the hands of the enemy without inconvenience";
    const B3_A: &[u8] = b"The second principle of Auguste Kerckhoffs";
    const B3_E: &str = concat!(
        "4affaaadb78c31c5da4b1b590d10ffbd3dd8d5d302423526912da037ecbcc7bd",
        "822c301dd67c373bccb584ad3e9279c2e6d12a1374b77f077553df829410446b",
        "36ebd97066296ae6427ea75c2e0846a11a09ccf5370dc80bfecbad28c73f09b3",
        "a3b75e662a2594410ae496b2e2e6609e31e6e02cc837f053d21f37ff4f51950b",
        "be2638d09dd7a4930930806d0703b1f6",
    );
    const B3_T: &str = "4dd3b4c088a7f45c216839645b2012bf2e6269a8c56a816dbc1b267761955bc5";

    fn b3_key() -> [u8; 64] {
        // K = 00 01 02 … 3f
        std::array::from_fn(|i| u8::try_from(i).unwrap())
    }

    fn b3_iv() -> [u8; 16] {
        hex::decode(B3_IV).unwrap().try_into().unwrap()
    }

    #[test]
    fn rfc7518_b3_inputs_are_as_published() {
        assert_eq!(
            hex::encode(B3_P),
            concat!(
                "41206369706865722073797374656d206d757374206e6f742062652072657175",
                "6972656420746f206265207365637265742c20616e64206974206d7573742062",
                "652061626c6520746f2066616c6c20696e746f207468652068616e6473206f66",
                "2074686520656e656d7920776974686f757420696e636f6e76656e69656e6365",
            )
        );
        assert_eq!(
            hex::encode(B3_A),
            "546865207365636f6e64207072696e6369706c65206f662041756775737465204b6572636b686f666673"
        );
        // AL = 42 bytes * 8 = 336 bits = 0x150.
        assert_eq!(
            (B3_A.len() as u64 * 8).to_be_bytes(),
            [0, 0, 0, 0, 0, 0, 0x01, 0x50]
        );
    }

    #[test]
    fn rfc7518_b3_encrypt_gives_exact_ciphertext_and_tag() {
        let (ct, tag) = encrypt_cbc_hs512_with_iv(&b3_key(), &b3_iv(), B3_A, B3_P);
        assert_eq!(hex::encode(&ct), B3_E);
        assert_eq!(hex::encode(tag), B3_T);
    }

    #[test]
    fn rfc7518_b3_decrypt_reverses_and_rejects_tampering() {
        let mut ct = hex::decode(B3_E).unwrap();
        let tag = hex::decode(B3_T).unwrap();
        let n = decrypt_cbc_hs512(&b3_key(), &b3_iv(), B3_A, &mut ct, &tag).unwrap();
        assert_eq!(&ct[..n], B3_P);

        let mut ct = hex::decode(B3_E).unwrap();
        let mut bad_tag = tag.clone();
        bad_tag[31] ^= 1;
        let err = decrypt_cbc_hs512(&b3_key(), &b3_iv(), B3_A, &mut ct, &bad_tag);
        assert_eq!(err, Err(JoseError::DecryptionFailed));
        // The ciphertext is left untouched: the tag is checked before decrypting.
        assert_eq!(hex::encode(&ct), B3_E);

        let mut ct = hex::decode(B3_E).unwrap();
        let err = decrypt_cbc_hs512(&b3_key(), &b3_iv(), b"other aad", &mut ct, &tag);
        assert_eq!(err, Err(JoseError::DecryptionFailed));
        let err = decrypt_cbc_hs512(&b3_key(), &b3_iv(), B3_A, &mut ct, &tag[..31]);
        assert_eq!(err, Err(JoseError::DecryptionFailed));
    }

    #[test]
    fn tags_from_the_kept_header_state_equal_tags_hashed_whole() {
        let key = b3_key();
        let iv = b3_iv();
        let ct = hex::decode(B3_E).unwrap();
        let other = CbcHs512::new(&key, b"not any AAD below");
        // The RFC's tag, with the AAD hashed as part of the input.
        assert_eq!(hex::encode(other.tag(B3_A, &iv, &ct)), B3_T);
        // Around SHA-512's 128-byte blocks, and Auth.js's 174-byte header.
        for len in [0, 42, 127, 128, 129, 174, 255, 256, 300] {
            let aad: Vec<u8> = (0..len).map(|i| u8::try_from(i % 251).unwrap()).collect();
            let own = CbcHs512::new(&key, &aad);
            assert_eq!(own.tag(&aad, &iv, &ct), other.tag(&aad, &iv, &ct), "{len}");
        }
    }

    #[test]
    fn cbc_round_trip_for_all_padding_lengths() {
        let key: [u8; 64] = std::array::from_fn(|i| u8::try_from(i * 7 % 256).unwrap());
        let iv = [9u8; 16];
        for len in 0..=48 {
            let pt: Vec<u8> = (0..len).map(|i| u8::try_from(i).unwrap()).collect();
            let (mut ct, tag) = encrypt_cbc_hs512_with_iv(&key, &iv, b"aad", &pt);
            assert_eq!(ct.len(), cbc_padded_len(len));
            let n = decrypt_cbc_hs512(&key, &iv, b"aad", &mut ct, &tag).unwrap();
            assert_eq!(&ct[..n], &pt[..]);
        }
    }

    #[test]
    fn encrypt_writes_authjs_header_and_round_trips() {
        let ring = KeyRing::new(&[SECRET]).unwrap();
        let token = ring.encrypt(b"{\"a\":1}".to_vec(), SALT).unwrap();
        let segments: Vec<&str> = token.split('.').collect();
        assert_eq!(segments.len(), 5);
        let header = URL_SAFE_NO_PAD.decode(segments[0]).unwrap();
        let kid = session_vector("basic")["header"]["kid"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            String::from_utf8(header).unwrap(),
            format!(r#"{{"alg":"dir","enc":"A256CBC-HS512","kid":"{kid}"}}"#)
        );
        assert_eq!(segments[1], "");
        assert_eq!(segments[2].len(), 22);
        assert_eq!(segments[4].len(), 43);
        assert_eq!(ring.decrypt(&token, SALT).unwrap(), b"{\"a\":1}");
        // A fresh IV each time.
        assert_ne!(
            ring.encrypt(b"x".to_vec(), SALT).unwrap(),
            ring.encrypt(b"x".to_vec(), SALT).unwrap()
        );
    }

    #[test]
    fn decrypts_authjs_cbc_and_gcm_vectors() {
        let ring = KeyRing::new(&[SECRET]).unwrap();
        for name in ["basic", "a256gcm", "no-kid", "unicode"] {
            let v = session_vector(name);
            let pt = ring.decrypt(v["token"].as_str().unwrap(), SALT).unwrap();
            let claims: Value = serde_json::from_slice(&pt).unwrap();
            assert_eq!(claims, v["decoded"], "{name}");
        }
    }

    #[test]
    fn kid_selects_the_secret_and_unknown_kid_is_rejected() {
        let token = session_vector("basic")["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let rotated = KeyRing::new(&["newer-secret", SECRET]).unwrap();
        assert!(rotated.decrypt(&token, SALT).is_ok());
        // Auth.js writes the very header bytes the matching key writes, so `decrypt` finds
        // the key by comparing them, without parsing the header.
        let header = token.split('.').next().unwrap();
        let keys = rotated.keys(SALT, Enc::A256CbcHs512);
        let own: Vec<_> = keys.iter().map(DerivedKey::protected_header_b64).collect();
        assert_eq!(own.iter().position(|h| *h == header), Some(1));
        assert!(keys[1].decrypt(&token).is_ok());
        assert_eq!(keys[0].decrypt(&token), Err(JoseError::NoMatchingSecret));
        let other = KeyRing::new(&["newer-secret"]).unwrap();
        assert_eq!(
            other.decrypt(&token, SALT),
            Err(JoseError::NoMatchingSecret)
        );
        assert_eq!(
            KeyRing::new(&[SECRET])
                .unwrap()
                .decrypt(&token, "authjs.csrf-token"),
            Err(JoseError::NoMatchingSecret)
        );
    }

    /// Builds `header.ek.iv.ct.tag` with a custom JSON header and a real CBC body for it.
    fn token_with_header(ring: &KeyRing, header_json: &str, encrypted_key: &str) -> String {
        let header_b64 = b64(header_json.as_bytes());
        let keys = ring.keys(SALT, Enc::A256CbcHs512);
        let key = &keys[0];
        let iv = [3u8; 16];
        let (ct, tag) = encrypt_cbc_hs512_with_iv(&key.bytes, &iv, header_b64.as_bytes(), b"{}");
        format!(
            "{header_b64}.{encrypted_key}.{}.{}.{}",
            b64(&iv),
            b64(&ct),
            b64(&tag)
        )
    }

    #[test]
    fn header_checks_give_structured_errors() {
        let ring = KeyRing::new(&[SECRET]).unwrap();
        let ok = token_with_header(&ring, r#"{"alg":"dir","enc":"A256CBC-HS512"}"#, "");
        assert_eq!(ring.decrypt(&ok, SALT).unwrap(), b"{}");
        // JSON escapes in header values are honoured, as JSON.parse does.
        let escaped = token_with_header(&ring, r#"{"alg":"\u0064ir","enc":"A256CBC-HS512"}"#, "");
        assert_eq!(ring.decrypt(&escaped, SALT).unwrap(), b"{}");

        let cases: [(&str, &str, JoseError); 10] = [
            (
                r#"{"alg":"A256KW","enc":"A256CBC-HS512"}"#,
                "",
                JoseError::UnsupportedAlgorithm {
                    alg: "A256KW".into(),
                },
            ),
            (
                r#"{"alg":"dir","enc":"A128GCM"}"#,
                "",
                JoseError::UnsupportedEncryption {
                    enc: "A128GCM".into(),
                },
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512","crit":["b64"]}"#,
                "",
                JoseError::UnsupportedHeader { name: "crit" },
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512","zip":"DEF"}"#,
                "",
                JoseError::UnsupportedHeader { name: "zip" },
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512","kid":7}"#,
                "",
                JoseError::NoMatchingSecret,
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512","kid":null}"#,
                "",
                JoseError::NoMatchingSecret,
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512"}"#,
                "AAAA",
                malformed("unexpected JWE Encrypted Key for \"dir\""),
            ),
            (
                r#"{"enc":"A256CBC-HS512"}"#,
                "",
                malformed("missing \"alg\""),
            ),
            (
                r#"["dir","A256CBC-HS512"]"#,
                "",
                malformed("protected header is not a JSON object"),
            ),
            (
                r#"{"alg":"dir","enc":"A256CBC-HS512"} x"#,
                "",
                malformed("protected header is not valid JSON"),
            ),
        ];
        for (header, ek, expected) in cases {
            let token = token_with_header(&ring, header, ek);
            assert_eq!(ring.decrypt(&token, SALT), Err(expected), "{header}");
        }
        let long_alg = format!(r#"{{"alg":"{}","enc":"A256GCM"}}"#, "é".repeat(100));
        match ring.decrypt(&token_with_header(&ring, &long_alg, ""), SALT) {
            Err(JoseError::UnsupportedAlgorithm { alg }) => assert!(alg.len() <= 64),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_segments_are_rejected() {
        let ring = KeyRing::new(&[SECRET]).unwrap();
        let token = session_vector("basic")["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let parts: Vec<&str> = token.split('.').collect();
        let with = |i: usize, s: &str| {
            let mut p = parts.clone();
            p[i] = s;
            p.join(".")
        };
        for bad in [
            String::new(),
            "....".to_owned(),
            parts[..4].join("."),
            format!("{token}."),
            with(0, &format!("{}=", parts[0])),
            with(0, "!!!"),
            with(2, &parts[2][..21]),
            with(2, &format!("{}A", parts[2])),
            with(2, &format!("{}==", parts[2])),
            with(3, "*"),
            with(4, &parts[4][..42]),
            with(4, ""),
        ] {
            match ring.decrypt(&bad, SALT) {
                Err(JoseError::Malformed { .. }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
        // A ciphertext that is not a whole number of blocks fails authentication first.
        assert_eq!(
            ring.decrypt(&with(3, "AAAA"), SALT),
            Err(JoseError::DecryptionFailed)
        );
    }

    #[test]
    fn keys_are_derived_once_per_salt_and_enc() {
        let ring = KeyRing::new(&[SECRET, "second"]).unwrap();
        let a = ring.keys(SALT, Enc::A256CbcHs512);
        let b = ring.keys(SALT, Enc::A256CbcHs512);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.len(), 2);
        let gcm = ring.keys(SALT, Enc::A256Gcm);
        assert!(!Arc::ptr_eq(&a, &gcm));
        ring.keys("other", Enc::A256CbcHs512);
        assert_eq!(ring.cache.read().unwrap().len(), 3);
        for i in 0..MAX_CACHED_SALTS * 2 {
            ring.keys(&format!("salt-{i}"), Enc::A256CbcHs512);
        }
        assert_eq!(ring.cache.read().unwrap().len(), MAX_CACHED_SALTS);
    }

    #[test]
    fn key_ring_is_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<KeyRing>();
        let ring = Arc::new(KeyRing::new(&[SECRET]).unwrap());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let ring = Arc::clone(&ring);
                std::thread::spawn(move || {
                    let t = ring.encrypt(b"hi".to_vec(), SALT).unwrap();
                    ring.decrypt(&t, SALT).unwrap()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), b"hi");
        }
    }

    #[test]
    fn secrets_never_print() {
        let ring = KeyRing::new(&[SECRET]).unwrap();
        let keys = ring.keys(SALT, Enc::A256CbcHs512);
        assert_eq!(format!("{:?}", keys[0]), "[redacted]");
        let dbg = format!("{ring:?}");
        assert!(!dbg.contains(SECRET) && dbg.contains("redacted"), "{dbg}");
        assert_eq!(KeyRing::new::<&str>(&[]).unwrap_err(), JoseError::NoSecret);
        assert_eq!(
            KeyRing::new(&["a", ""]).unwrap_err(),
            JoseError::EmptySecret { index: 1 }
        );
    }
}
