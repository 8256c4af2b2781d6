//! The hash, HKDF and comparison primitives authcore uses, behind a few plain functions so
//! that no other module names a crypto library: SHA-2 from `RustCrypto`'s `sha2` (whose AVX2
//! SHA-512 is the fastest measured for the session token's HMAC, see [`crate::jose`]), HKDF
//! and constant-time comparison from `aws-lc-rs` (the library rustls, `jsonwebtoken` and
//! the JWE's AES already use). docs/architecture.md records the choice.

use aws_lc_rs::{constant_time, hkdf};
use sha2::Digest as _;

/// SHA-256 of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

/// SHA-512 of `data`.
pub(crate) fn sha512(data: &[u8]) -> [u8; 64] {
    sha2::Sha512::digest(data).into()
}

/// Lowercase hex of the SHA-256 of `data`: how authcore stores hashed tokens and keys.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    crate::random::push_hex(&mut out, &sha256(data));
    out
}

/// `sha256hex(token + secret)`: how a single-use token sent to a user is stored — a magic
/// link's as Auth.js stores it (`lib/actions/signin/send-token.ts`), and, with a prefix of
/// their own before the token, password accounts' links and invitations.
pub(crate) fn hash_token(token: &str, secret: &str) -> String {
    let mut h = Sha256::new();
    h.update(token.as_bytes());
    h.update(secret.as_bytes());
    hex::encode(h.finish())
}

/// A SHA-256 over several parts, fed one after another.
pub(crate) struct Sha256(sha2::Sha256);

impl Sha256 {
    /// An empty hash.
    pub(crate) fn new() -> Self {
        Sha256(sha2::Sha256::new())
    }

    /// Feeds `data`.
    pub(crate) fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The hash of everything fed.
    pub(crate) fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// Whether `a` and `b` are equal, in time independent of where they differ (slices of
/// different lengths are unequal).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    constant_time::verify_slices_are_equal(a, b).is_ok()
}

/// An HKDF output length (`aws-lc-rs` asks for it as a type).
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-SHA256 (RFC 5869) of `ikm` with `salt` and `info`, filling `out`.
///
/// # Panics
/// When `out` is longer than 255 × 32 bytes (RFC 5869 §2.3); authcore asks for 32 or 64.
pub(crate) fn hkdf_sha256(ikm: &[u8], salt: &[u8], info: &[u8], out: &mut [u8]) {
    let info = [info];
    hkdf::Salt::new(hkdf::HKDF_SHA256, salt)
        .extract(ikm)
        .expand(&info, Len(out.len()))
        .and_then(|okm| okm.fill(out))
        .expect("authcore asks HKDF-SHA256 for at most 64 bytes");
}

/// The [`SessionInfo::id`](crate::account::SessionInfo::id) of session token `token` (as
/// stored): the first half of its SHA-256, in hex, which names a session without being
/// able to sign in.
pub(crate) fn session_id(token: &str) -> String {
    hex::encode(&sha256(token.as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5869 Appendix A.1 (HKDF-SHA256, basic test case).
    #[test]
    fn hkdf_sha256_matches_rfc_5869() {
        let ikm = [0x0bu8; 22];
        let salt = hex::decode("000102030405060708090a0b0c").expect("hex");
        let info = hex::decode("f0f1f2f3f4f5f6f7f8f9").expect("hex");
        let mut okm = [0u8; 42];
        hkdf_sha256(&ikm, &salt, &info, &mut okm);
        assert_eq!(
            hex::encode(okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
    }

    /// FIPS 180-4 examples ("abc"), and the incremental form agrees with the one-shot one.
    #[test]
    fn sha2_known_answers() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex::encode(sha512(b"abc")),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        let mut h = Sha256::new();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.finish(), sha256(b"abc"));
    }

    #[test]
    fn ct_eq_compares_contents_and_lengths() {
        assert!(ct_eq(b"same", b"same"));
        assert!(!ct_eq(b"same", b"sane"));
        assert!(!ct_eq(b"same", b"same!"));
        assert!(ct_eq(b"", b""));
    }
}
