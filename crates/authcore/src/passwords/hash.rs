//! Password hashes: argon2id for every new hash, and the formats other systems export,
//! verified as they are so that their users keep their passwords.
//!
//! | format | example | from |
//! |---|---|---|
//! | argon2id, argon2i, argon2d (PHC) | `$argon2id$v=19$m=19456,t=2,p=1$…$…` | Authelia, Better Auth, `argon2` CLI |
//! | bcrypt | `$2b$12$…` (`$2a$`, `$2y$`, `$2x$`) | Authelia, Devise, Laravel, htpasswd `-B` |
//! | scrypt (PHC) | `$scrypt$ln=17,r=8,p=1$…$…` | RustCrypto `scrypt`, Firebase exports converted |
//! | SHA-512-crypt, SHA-256-crypt | `$6$rounds=50000$…$…` (`$5$`) | Authelia's `sha2crypt`, `/etc/shadow`, `openssl passwd -6` |
//! | PBKDF2-SHA256 (PHC) | `$pbkdf2-sha256$i=27500,l=64$…$…` | Keycloak's export, converted by [`from_keycloak`] |
//! | PBKDF2-SHA256 (passlib) | `$pbkdf2-sha256$29000$…$…` | passlib |
//! | PBKDF2-SHA256 (Django) | `pbkdf2_sha256$600000$…$…` | Django |
//!
//! New hashes use argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane: the
//! [Password Storage Cheat Sheet]); a verified hash of another format, or of other argon2id
//! parameters, answers [`Verification::Match`] with `rehash: true` so the caller stores
//! [`PasswordHashing::hash`] of the password in its place.
//!
//! Every verification costs work bounded by [`MAX_PASSWORD_BYTES`] and by the cost limits
//! of [`parse`] (a hash asking for more is refused as malformed), and a password with a NUL
//! byte never matches (C implementations of bcrypt stop at it).
//!
//! [Password Storage Cheat Sheet]: https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html

use std::num::NonZeroU32;

use argon2::{Algorithm, Argon2, Params, PasswordHasher as _, PasswordVerifier as _, Version};
use aws_lc_rs::pbkdf2;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use password_hash::phc::PasswordHash;

/// The longest password verified or hashed, in bytes (128 characters of up to four bytes):
/// longer ones never match, so the work of a sign-in stays bounded whatever is sent.
pub const MAX_PASSWORD_BYTES: usize = 512;

/// The most memory an imported argon2 hash may ask for, in KiB (256 MiB).
const MAX_ARGON2_MEMORY_KIB: u32 = 256 * 1024;
/// The most passes an imported argon2 hash may ask for.
const MAX_ARGON2_PASSES: u32 = 16;
/// The largest scrypt cost (log2 of N) an imported hash may ask for.
const MAX_SCRYPT_LOG_N: u8 = 20;
/// The most PBKDF2 iterations an imported hash may ask for.
const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;
/// The largest bcrypt cost an imported hash may ask for.
const MAX_BCRYPT_COST: u32 = 16;
/// The most SHA-crypt rounds an imported hash may ask for (glibc's default is 5,000,
/// Authelia's 50,000).
const MAX_SHA_CRYPT_ROUNDS: u32 = 1_000_000;

/// Why a hash could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HashError {
    /// The stored string is none of the supported formats, or asks for more work than the
    /// limits allow; the message says which.
    #[error("not a supported password hash: {0}")]
    Malformed(String),
    /// The argon2 parameters are out of range.
    #[error("argon2 parameters: {0}")]
    Parameters(String),
    /// The password is longer than [`MAX_PASSWORD_BYTES`] or holds a NUL byte.
    #[error("the password is longer than {MAX_PASSWORD_BYTES} bytes or holds a NUL byte")]
    Password,
    /// The hash function failed (the system's random source, say).
    #[error("hashing failed: {0}")]
    Hashing(String),
}

/// What [`PasswordHashing::verify`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The password is right. `rehash`: the stored hash is of another format or of other
    /// parameters than [`PasswordHashing`]'s; store a new [`PasswordHashing::hash`].
    Match {
        /// Whether to store a new hash in its place.
        rehash: bool,
    },
    /// The password is wrong.
    Mismatch,
}

impl Verification {
    /// Whether the password is right.
    pub fn is_match(self) -> bool {
        matches!(self, Verification::Match { .. })
    }
}

/// The format of a stored hash, as [`parse`] recognised it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashKind {
    /// `$argon2id$`.
    Argon2id,
    /// `$argon2i$`.
    Argon2i,
    /// `$argon2d$`.
    Argon2d,
    /// `$2a$`, `$2b$`, `$2x$`, `$2y$`.
    Bcrypt,
    /// `$scrypt$`.
    Scrypt,
    /// `$pbkdf2-sha256$`.
    Pbkdf2Sha256,
    /// `$6$` (SHA-512-crypt) and `$5$` (SHA-256-crypt).
    ShaCrypt,
}

/// Checks that `stored` is a supported hash within the cost limits, and answers its format
/// (a users file is checked with it at start-up, before any sign-in).
pub fn parse(stored: &str) -> Result<HashKind, HashError> {
    Stored::parse(stored).map(|s| s.kind())
}

/// A stored hash, parsed.
enum Stored<'a> {
    Argon2(PasswordHash, Algorithm),
    Bcrypt(&'a str),
    ShaCrypt(&'a str),
    Scrypt(PasswordHash),
    Pbkdf2 {
        iterations: NonZeroU32,
        salt: Vec<u8>,
        derived: Vec<u8>,
    },
}

fn malformed(what: impl Into<String>) -> HashError {
    HashError::Malformed(what.into())
}

impl<'a> Stored<'a> {
    fn parse(stored: &'a str) -> Result<Self, HashError> {
        let stored = stored.trim();
        if stored.len() > 1024 {
            return Err(malformed("longer than 1024 characters"));
        }
        if let Some(rest) = ["$2a$", "$2b$", "$2x$", "$2y$"]
            .iter()
            .find_map(|p| stored.strip_prefix(p))
        {
            let cost: u32 = rest
                .get(..2)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| malformed("bcrypt: no cost"))?;
            if !(4..=MAX_BCRYPT_COST).contains(&cost) || stored.len() != 60 {
                return Err(malformed(format!(
                    "bcrypt: cost 4 to {MAX_BCRYPT_COST} and 60 characters expected"
                )));
            }
            return Ok(Stored::Bcrypt(stored));
        }
        if let Some(rest) = ["$5$", "$6$"].iter().find_map(|p| stored.strip_prefix(p)) {
            let (rounds, fields) = match rest.strip_prefix("rounds=") {
                Some(r) => {
                    let (n, fields) = r.split_once('$').unwrap_or((r, ""));
                    (n.parse::<u32>().ok(), fields)
                }
                None => (Some(5000), rest),
            };
            let well_formed =
                fields.split('$').count() == 2 && fields.split('$').all(|f| !f.is_empty());
            if !rounds.is_some_and(|n| (1000..=MAX_SHA_CRYPT_ROUNDS).contains(&n)) || !well_formed {
                return Err(malformed(format!(
                    "sha-crypt: rounds from 1000 to {MAX_SHA_CRYPT_ROUNDS}, a salt and a hash expected"
                )));
            }
            return Ok(Stored::ShaCrypt(stored));
        }
        if let Some(pbkdf2) = Stored::pbkdf2_other_forms(stored) {
            return pbkdf2;
        }
        let phc = PasswordHash::new(stored).map_err(|e| malformed(format!("{e}")))?;
        let param = |name: &str| -> Option<u64> {
            phc.params
                .iter()
                .find(|(k, _)| k.as_str() == name)
                .and_then(|(_, v)| v.as_str().parse().ok())
        };
        match phc.algorithm.as_str() {
            id @ ("argon2id" | "argon2i" | "argon2d") => {
                let algorithm = match id {
                    "argon2id" => Algorithm::Argon2id,
                    "argon2i" => Algorithm::Argon2i,
                    _ => Algorithm::Argon2d,
                };
                let m = param("m").ok_or_else(|| malformed("argon2: no m"))?;
                let t = param("t").ok_or_else(|| malformed("argon2: no t"))?;
                if m > u64::from(MAX_ARGON2_MEMORY_KIB) || t > u64::from(MAX_ARGON2_PASSES) {
                    return Err(malformed(format!(
                        "argon2: at most m={MAX_ARGON2_MEMORY_KIB} and t={MAX_ARGON2_PASSES}"
                    )));
                }
                if phc.hash.is_none() {
                    return Err(malformed("argon2: no hash"));
                }
                Ok(Stored::Argon2(phc, algorithm))
            }
            "scrypt" => {
                let ln = param("ln").ok_or_else(|| malformed("scrypt: no ln"))?;
                if ln > u64::from(MAX_SCRYPT_LOG_N) || param("r").unwrap_or(8) > 32 {
                    return Err(malformed(format!(
                        "scrypt: at most ln={MAX_SCRYPT_LOG_N} and r=32"
                    )));
                }
                if phc.hash.is_none() {
                    return Err(malformed("scrypt: no hash"));
                }
                Ok(Stored::Scrypt(phc))
            }
            "pbkdf2-sha256" => {
                let iterations = param("i")
                    .and_then(|i| u32::try_from(i).ok())
                    .filter(|i| *i <= MAX_PBKDF2_ITERATIONS)
                    .and_then(NonZeroU32::new)
                    .ok_or_else(|| {
                        malformed(format!(
                            "pbkdf2-sha256: i from 1 to {MAX_PBKDF2_ITERATIONS} expected"
                        ))
                    })?;
                let salt = phc
                    .salt
                    .as_ref()
                    .ok_or_else(|| malformed("pbkdf2-sha256: no salt"))?;
                let salt = salt.to_vec();
                let derived = phc
                    .hash
                    .as_ref()
                    .map(|h| h.as_bytes().to_vec())
                    .filter(|h| h.len() >= 16)
                    .ok_or_else(|| malformed("pbkdf2-sha256: no hash of 16 bytes or more"))?;
                Ok(Stored::Pbkdf2 {
                    iterations,
                    salt,
                    derived,
                })
            }
            other => Err(malformed(format!("unknown algorithm {other:?}"))),
        }
    }

    /// PBKDF2-SHA256 as passlib writes it (`$pbkdf2-sha256$<rounds>$<salt>$<hash>`, base64
    /// with `.` for `+`) and as Django stores it (`pbkdf2_sha256$<rounds>$<salt>$<hash>`,
    /// the salt used as text, the hash in padded base64); `None` for other strings.
    fn pbkdf2_other_forms(stored: &str) -> Option<Result<Self, HashError>> {
        let (rest, django) = match stored.strip_prefix("$pbkdf2-sha256$") {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => (rest, false),
            _ => (stored.strip_prefix("pbkdf2_sha256$")?, true),
        };
        let mut parts = rest.split('$');
        let (Some(rounds), Some(salt), Some(hash), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Some(Err(malformed(
                "pbkdf2-sha256: rounds, salt and hash expected",
            )));
        };
        let ab64 = |s: &str| STANDARD_NO_PAD.decode(s.replace('.', "+")).ok();
        let iterations = rounds
            .parse::<u32>()
            .ok()
            .filter(|i| *i <= MAX_PBKDF2_ITERATIONS)
            .and_then(NonZeroU32::new);
        let salt = if django {
            Some(salt.as_bytes().to_vec())
        } else {
            ab64(salt)
        };
        let derived = if django {
            STANDARD.decode(hash).ok()
        } else {
            ab64(hash)
        };
        Some(match (iterations, salt, derived) {
            (Some(iterations), Some(salt), Some(derived)) if derived.len() >= 16 => {
                Ok(Stored::Pbkdf2 {
                    iterations,
                    salt,
                    derived,
                })
            }
            _ => Err(malformed(format!(
                "pbkdf2-sha256: rounds from 1 to {MAX_PBKDF2_ITERATIONS}, a base64 salt and hash of 16 bytes or more expected"
            ))),
        })
    }

    fn kind(&self) -> HashKind {
        match self {
            Stored::Argon2(_, Algorithm::Argon2id) => HashKind::Argon2id,
            Stored::Argon2(_, Algorithm::Argon2i) => HashKind::Argon2i,
            Stored::Argon2(_, _) => HashKind::Argon2d,
            Stored::Bcrypt(_) => HashKind::Bcrypt,
            Stored::ShaCrypt(_) => HashKind::ShaCrypt,
            Stored::Scrypt(_) => HashKind::Scrypt,
            Stored::Pbkdf2 { .. } => HashKind::Pbkdf2Sha256,
        }
    }
}

/// How new password hashes are made (argon2id, OWASP's parameters by default), and the
/// check of a password against a stored hash of any supported format.
#[derive(Clone)]
pub struct PasswordHashing {
    argon2: Argon2<'static>,
    /// A hash of a random password with these parameters, verified for an unknown user so
    /// that the answer takes as long as for a known one.
    dummy: String,
}

impl std::fmt::Debug for PasswordHashing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.argon2.params();
        f.debug_struct("PasswordHashing")
            .field("algorithm", &"argon2id")
            .field("memory_kib", &p.m_cost())
            .field("passes", &p.t_cost())
            .field("lanes", &p.p_cost())
            .finish()
    }
}

impl Default for PasswordHashing {
    fn default() -> Self {
        Self::owasp()
    }
}

impl PasswordHashing {
    /// argon2id with 19 MiB, 2 passes and 1 lane: OWASP's recommendation.
    pub fn owasp() -> Self {
        Self::build(Params::default())
    }

    /// argon2id with `memory_kib` KiB, `passes` and `lanes`; the message says what is out
    /// of range (memory from 8 KiB per lane to 256 MiB, passes 1 to 16, lanes 1 to 16).
    pub fn argon2id(memory_kib: u32, passes: u32, lanes: u32) -> Result<Self, HashError> {
        if memory_kib > MAX_ARGON2_MEMORY_KIB
            || !(1..=MAX_ARGON2_PASSES).contains(&passes)
            || !(1..=16).contains(&lanes)
        {
            return Err(HashError::Parameters(format!(
                "memory at most {MAX_ARGON2_MEMORY_KIB} KiB, passes 1 to {MAX_ARGON2_PASSES}, lanes 1 to 16"
            )));
        }
        let params = Params::new(memory_kib, passes, lanes, None)
            .map_err(|e| HashError::Parameters(e.to_string()))?;
        Ok(Self::build(params))
    }

    fn build(params: Params) -> Self {
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let mut random = [0u8; 32];
        // A failing random source leaves a zero password: the dummy only spends time.
        let _ = getrandom::fill(&mut random);
        let dummy = argon2
            .hash_password(hex::encode(random).as_bytes())
            .map(|h| h.to_string())
            .unwrap_or_default();
        PasswordHashing { argon2, dummy }
    }

    /// A new argon2id hash of `password` in Unicode normalisation form NFKC (a PHC string
    /// with a random salt), so that a password typed with a composed or a decomposed
    /// accent is the same password ([NIST SP 800-63B §5.1.1.2]).
    ///
    /// [NIST SP 800-63B §5.1.1.2]: https://pages.nist.gov/800-63-3/sp800-63b.html#memsecretver
    pub fn hash(&self, password: &str) -> Result<String, HashError> {
        if !acceptable(password) {
            return Err(HashError::Password);
        }
        self.argon2
            .hash_password(nfkc(password).as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| HashError::Hashing(e.to_string()))
    }

    /// Checks `password` against `stored`, a hash of any supported format. A password
    /// longer than [`MAX_PASSWORD_BYTES`] or with a NUL byte is a
    /// [`Verification::Mismatch`]; a stored string that is no supported hash is an error.
    pub fn verify(&self, stored: &str, password: &str) -> Result<Verification, HashError> {
        let parsed = Stored::parse(stored)?;
        if !acceptable(password) {
            return Ok(Verification::Mismatch);
        }
        let normalized = nfkc(password);
        if parsed.verifies(normalized.as_bytes())? {
            return Ok(Verification::Match {
                rehash: !self.is_current(&parsed),
            });
        }
        // A hash made elsewhere of the password as typed: right, and to be made again of
        // its normal form.
        if normalized != password && parsed.verifies(password.as_bytes())? {
            return Ok(Verification::Match { rehash: true });
        }
        Ok(Verification::Mismatch)
    }

    /// Spends the work of a [`verify`](Self::verify) against a hash of these parameters and
    /// answers nothing: called for an unknown user, so that the answer comes as late as for
    /// a known one with a wrong password.
    pub fn verify_unknown(&self, password: &str) {
        let _ = self.verify(&self.dummy, password);
    }

    /// Whether `stored` is argon2id with exactly these parameters.
    fn is_current(&self, stored: &Stored<'_>) -> bool {
        let Stored::Argon2(phc, Algorithm::Argon2id) = stored else {
            return false;
        };
        let ours = self.argon2.params();
        Params::try_from(phc).is_ok_and(|p| {
            p.m_cost() == ours.m_cost()
                && p.t_cost() == ours.t_cost()
                && p.p_cost() == ours.p_cost()
        }) && phc.version == Some(Version::V0x13.into())
    }
}

/// `password` in Unicode normalisation form NFKC.
fn nfkc(password: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    password.nfkc().collect()
}

impl Stored<'_> {
    /// Whether `pw` is the password of this hash.
    fn verifies(&self, pw: &[u8]) -> Result<bool, HashError> {
        Ok(match self {
            Stored::Argon2(phc, algorithm) => {
                let params =
                    Params::try_from(phc).map_err(|e| malformed(format!("argon2: {e}")))?;
                Argon2::new(*algorithm, Version::V0x13, params)
                    .verify_password(pw, phc)
                    .is_ok()
            }
            Stored::Bcrypt(h) => bcrypt::verify(pw, h).unwrap_or(false),
            Stored::ShaCrypt(h) => {
                use sha_crypt::PasswordVerifier as _;
                sha_crypt::ShaCrypt::default()
                    .verify_password(pw, *h)
                    .is_ok()
            }
            Stored::Scrypt(phc) => {
                use password_hash::PasswordVerifier as _;
                scrypt::Scrypt::default().verify_password(pw, phc).is_ok()
            }
            Stored::Pbkdf2 {
                iterations,
                salt,
                derived,
            } => pbkdf2::verify(pbkdf2::PBKDF2_HMAC_SHA256, *iterations, salt, pw, derived).is_ok(),
        })
    }
}

/// Whether a password may be hashed or verified: at most [`MAX_PASSWORD_BYTES`], no NUL.
fn acceptable(password: &str) -> bool {
    password.len() <= MAX_PASSWORD_BYTES && !password.as_bytes().contains(&0)
}

/// The PHC string of a password credential in Keycloak's export (a user's `credentials`
/// entry of a realm export, or its `secretData` and `credentialData` fields), for
/// `pbkdf2-sha256` (Keycloak's default before argon2) and `pbkdf2-sha512` refused as
/// unsupported. Keycloak stores the salt and the derived key in standard base64 and the
/// iteration count in `credentialData.hashIterations`.
pub fn from_keycloak(credential: &serde_json::Value) -> Result<String, HashError> {
    use serde_json::Value;
    // `secretData` and `credentialData` are JSON documents inside strings.
    let field = |name: &str| -> Result<Value, HashError> {
        match credential.get(name) {
            Some(Value::String(s)) => {
                serde_json::from_str(s).map_err(|_| malformed(format!("keycloak: {name}")))
            }
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            _ => Err(malformed(format!("keycloak: no {name}"))),
        }
    };
    let secret = field("secretData")?;
    let data = field("credentialData")?;
    let algorithm = data.get("algorithm").and_then(Value::as_str).unwrap_or("");
    if algorithm != "pbkdf2-sha256" {
        return Err(malformed(format!(
            "keycloak: algorithm {algorithm:?} (pbkdf2-sha256 is supported)"
        )));
    }
    let iterations = data
        .get("hashIterations")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("keycloak: no hashIterations"))?;
    let decode = |name: &str| -> Result<Vec<u8>, HashError> {
        secret
            .get(name)
            .and_then(Value::as_str)
            .and_then(|s| STANDARD.decode(s).ok())
            .ok_or_else(|| malformed(format!("keycloak: secretData.{name} is not base64")))
    };
    let (value, salt) = (decode("value")?, decode("salt")?);
    let phc = format!(
        "$pbkdf2-sha256$i={iterations},l={}${}${}",
        value.len(),
        STANDARD_NO_PAD.encode(salt),
        STANDARD_NO_PAD.encode(value)
    );
    parse(&phc)?;
    Ok(phc)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Cheap parameters, so the tests run fast; the formats are what matters here.
    fn hashing() -> PasswordHashing {
        PasswordHashing::argon2id(64, 1, 1).unwrap()
    }

    /// Hashes of the password `password` made by other implementations: argon2-cffi and
    /// pyca/bcrypt (what Authelia's and passlib's users have), passlib, OpenSSL
    /// (`openssl passwd -6` / `-5`) and glibc's `crypt` (through Python's `crypt`).
    const IMPORTED: &[(&str, HashKind)] = &[
        (
            "$6$Zr8yQd2vBf1x$.LgQWU3zyYmA2H6pHiV.sBv4ShUf.h1DQ8v7FfbYMUX9Ji0pMZeQ7s76ha4yIJT0x9fnXOOG5TykwR59GrHuu.",
            HashKind::ShaCrypt,
        ),
        (
            "$5$Zr8yQd2vBf1x$U8tZAkCKaKSEVFifBSarBLcgmJjPqO4g8RNlBRsCGH6",
            HashKind::ShaCrypt,
        ),
        (
            "$6$rounds=50000$c4U2sQGvWl2bS0dE$nspOuO0IW.9PM1vKIRWNLFgsbEgAl6XJANeqxg9LX2MSBIaXWCza1XEwntHJzm1nBujaOBWLDqZNe.7mHa57O.",
            HashKind::ShaCrypt,
        ),
        (
            "$argon2id$v=19$m=64,t=1,p=1$kCAHVdkOyp/L1OneQJnPLg$kmqcQjrZmcRczrT/afaReeBX5D6hQP/lljH54SQQvCY",
            HashKind::Argon2id,
        ),
        (
            "$argon2i$v=19$m=64,t=1,p=1$uNbSLggWNJfsp/hZ0kdM4w$xqn8nTgnZwI6ARotGigeNPHOll+slYdder8zdgw6wZs",
            HashKind::Argon2i,
        ),
        (
            "$2b$04$b/LcjGM9OmyQFGwit63qlespAOcaiuwiMLDGW8bMk90qMLcChkMoW",
            HashKind::Bcrypt,
        ),
        (
            "$2a$04$2NleOAkP2r/X0evryH8B6e/0T.c7DMuKxlhWrbJuAb39PBAAEQck6",
            HashKind::Bcrypt,
        ),
        (
            "$pbkdf2-sha256$1000$hnDOGSPk3FuLMQZAKGUMIQ$eNt8BT/RtD60roj.eQFuo9FkG3wukUdwgRJZEa/sF4c",
            HashKind::Pbkdf2Sha256,
        ),
        (
            "pbkdf2_sha256$1000$xdxR8mHF9GH3$icWQlOTCTiIjViN9Fs8ZWzIMglj9dDvaR6xOeJ209aY=",
            HashKind::Pbkdf2Sha256,
        ),
        (
            "$scrypt$ln=4,r=8,p=1$Y4yRMsa4l1KqFWLMWQuBcA$Tnk5yFIC2ARIc8+kZyoZDzjSz2VERN0KYAxVjP2e7wA",
            HashKind::Scrypt,
        ),
    ];

    #[test]
    fn new_hashes_are_argon2id_and_verify() {
        let h = hashing();
        let stored = h.hash("correct horse battery staple").unwrap();
        assert!(
            stored.starts_with("$argon2id$v=19$m=64,t=1,p=1$"),
            "{stored}"
        );
        assert_eq!(parse(&stored), Ok(HashKind::Argon2id));
        assert_eq!(
            h.verify(&stored, "correct horse battery staple"),
            Ok(Verification::Match { rehash: false })
        );
        assert_eq!(
            h.verify(&stored, "correct horse battery stapl"),
            Ok(Verification::Mismatch)
        );
        // Another cost: right, and to be rehashed.
        let other = PasswordHashing::argon2id(128, 1, 1).unwrap();
        assert_eq!(
            other.verify(&stored, "correct horse battery staple"),
            Ok(Verification::Match { rehash: true })
        );
    }

    /// A composed and a decomposed accent are one password; a hash made elsewhere of the
    /// decomposed form still verifies, and is made again.
    #[test]
    fn passwords_are_hashed_in_their_normal_form() {
        let h = hashing();
        let (composed, decomposed) = ("caf\u{e9} au lait!", "cafe\u{301} au lait!");
        let stored = h.hash(decomposed).unwrap();
        assert_eq!(
            h.verify(&stored, composed),
            Ok(Verification::Match { rehash: false })
        );
        let elsewhere = bcrypt::hash(decomposed, 4).unwrap();
        assert_eq!(
            h.verify(&elsewhere, decomposed),
            Ok(Verification::Match { rehash: true })
        );
        assert_eq!(
            h.verify(&stored, "cafe au lait!"),
            Ok(Verification::Mismatch)
        );
    }

    #[test]
    fn owasp_parameters() {
        let d = format!("{:?}", PasswordHashing::owasp());
        assert!(
            d.contains("memory_kib: 19456") && d.contains("passes: 2") && d.contains("lanes: 1"),
            "{d}"
        );
    }

    #[test]
    fn bounded_and_nul_passwords_never_match() {
        let h = hashing();
        let long = "a".repeat(MAX_PASSWORD_BYTES + 1);
        let stored = h.hash("a").unwrap();
        assert_eq!(h.hash(&long), Err(HashError::Password));
        assert_eq!(h.hash("a\0b"), Err(HashError::Password));
        assert_eq!(h.verify(&stored, &long), Ok(Verification::Mismatch));
        assert_eq!(h.verify(&stored, "a\0"), Ok(Verification::Mismatch));
        h.verify_unknown(&"x".repeat(1 << 20));
    }

    #[test]
    fn malformed_and_costly_hashes_are_refused() {
        for bad in [
            "",
            "password",
            "$argon2id$v=19$m=1048576,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
            "$argon2id$v=19$m=65536,t=99,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
            "$2b$31$EGdrhbKUv8Oc9vGiXX0HQOxSg445d458Muh7DAHskb6QbtCvdxcie",
            "$2b$04$short",
            "$scrypt$ln=30,r=8,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA",
            "$pbkdf2-sha256$i=0,l=32$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA",
            "$pbkdf2-sha256$i=99999999,l=32$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA",
            "$6$rounds=999999999$c4U2sQGvWl2bS0dE$nspOuO0IW.9PM1vKIRWNLFgsbEgAl6XJANeqxg9LX2MSBIaXWCza1XEwntHJzm1nBujaOBWLDqZNe.7mHa57O.",
            "$6$rounds=10$salt$hash",
            "$6$rounds=x$salt$hash",
            "$6$saltonly",
            "$5$salt$hash$extra",
            "$md5$whatever",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
            assert!(hashing().verify(bad, "password").is_err(), "{bad}");
        }
    }

    #[test]
    fn imported_hashes_verify_and_ask_for_a_rehash() {
        // Other parameters than the imported argon2 hashes', so every one is rehashed.
        let h = PasswordHashing::argon2id(128, 1, 1).unwrap();
        for (stored, kind) in IMPORTED {
            assert_eq!(parse(stored), Ok(*kind), "{stored}");
            assert_eq!(
                h.verify(stored, "password"),
                Ok(Verification::Match { rehash: true }),
                "{stored}"
            );
            assert_eq!(
                h.verify(stored, "Password"),
                Ok(Verification::Mismatch),
                "{stored}"
            );
        }
    }

    /// Hashes this test makes with the other crates' own hashers, one per format.
    #[test]
    fn every_format_made_by_its_own_implementation_verifies() {
        use password_hash::PasswordHasher as _;
        let h = hashing();
        let salt = b"saltsaltsaltsalt";
        let mut made = vec![
            bcrypt::hash_with_salt("password", 4, *salt)
                .unwrap()
                .format_for_version(bcrypt::Version::TwoY),
            scrypt::Scrypt::from(scrypt::Params::new(4, 8, 1).unwrap())
                .hash_password_with_salt(b"password", salt)
                .unwrap()
                .to_string(),
        ];
        for algorithm in [Algorithm::Argon2i, Algorithm::Argon2d] {
            let a = Argon2::new(
                algorithm,
                Version::V0x13,
                Params::new(64, 1, 1, None).unwrap(),
            );
            made.push(a.hash_password(b"password").unwrap().to_string());
        }
        let mut derived = [0u8; 32];
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            NonZeroU32::new(1000).unwrap(),
            salt,
            b"password",
            &mut derived,
        );
        made.push(format!(
            "$pbkdf2-sha256$i=1000,l=32${}${}",
            STANDARD_NO_PAD.encode(salt),
            STANDARD_NO_PAD.encode(derived)
        ));
        for stored in made {
            assert_eq!(
                h.verify(&stored, "password"),
                Ok(Verification::Match { rehash: true }),
                "{stored}"
            );
            assert_eq!(
                h.verify(&stored, "passwore"),
                Ok(Verification::Mismatch),
                "{stored}"
            );
        }
    }

    /// A credential as Keycloak exports it (`kc.sh export`), of the password `password`.
    #[test]
    fn keycloak_export() {
        let salt = b"0123456789abcdef";
        let mut derived = [0u8; 64];
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            NonZeroU32::new(27500).unwrap(),
            salt,
            b"password",
            &mut derived,
        );
        let credential = serde_json::json!({
            "type": "password",
            "secretData": serde_json::json!({
                "value": STANDARD.encode(derived),
                "salt": STANDARD.encode(salt),
                "additionalParameters": {}
            }).to_string(),
            "credentialData": "{\"hashIterations\":27500,\"algorithm\":\"pbkdf2-sha256\",\"additionalParameters\":{}}"
        });
        let phc = from_keycloak(&credential).unwrap();
        assert!(phc.starts_with("$pbkdf2-sha256$i=27500,l=64$"), "{phc}");
        assert_eq!(
            hashing().verify(&phc, "password"),
            Ok(Verification::Match { rehash: true })
        );
        let mut sha512 = credential.clone();
        sha512["credentialData"] =
            "{\"hashIterations\":210000,\"algorithm\":\"pbkdf2-sha512\"}".into();
        assert!(from_keycloak(&sha512).is_err());
        assert!(from_keycloak(&serde_json::json!({})).is_err());
    }
}
