//! Auth.js `jwt.encode` / `jwt.decode` (`jwt.ts`): the session token and every
//! encrypted cookie is a JWE (`dir` + `A256CBC-HS512`) whose plaintext is a JSON claims set.
//!
//! [`JwtCodec`] is bound to the configured secrets and shares one key cache between clones,
//! so the per-request cost is one AES-CBC + HMAC pass and the JSON work.

use std::fmt;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::BoxError;
use crate::jose::{Enc, JoseError, KeyRing};

/// A JWT claims set. `serde_json`'s `preserve_order` keeps claims in insertion order, as
/// JavaScript objects do.
pub type JwtClaims = serde_json::Map<String, serde_json::Value>;

/// Clock skew allowed when checking `exp`, `nbf` and `iat` (Auth.js `clockTolerance: 15`).
pub const CLOCK_TOLERANCE_SECS: i64 = 15;

/// Default token lifetime: 30 days (Auth.js `session.maxAge`, set in `lib/init.ts`).
pub const DEFAULT_MAX_AGE_SECS: u64 = 30 * 24 * 60 * 60;

/// Errors from [`JwtCodec`].
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    /// The JWE layer rejected the token (malformed, wrong algorithm, no matching secret,
    /// failed authentication) or could not encrypt.
    #[error(transparent)]
    Jose(#[from] JoseError),
    /// `exp` is at or before now minus the clock tolerance (`ERR_JWT_EXPIRED`).
    #[error("\"exp\" claim timestamp check failed")]
    Expired,
    /// `nbf` is after now plus the clock tolerance.
    #[error("\"nbf\" claim timestamp check failed")]
    NotYetValid,
    /// A time claim is present but not a JSON number.
    #[error("\"{claim}\" claim must be a number")]
    InvalidClaim {
        /// The claim name: `exp`, `nbf` or `iat`.
        claim: &'static str,
    },
    /// The decrypted payload is not a JSON object (or the claims could not be serialised).
    #[error("JWT Claims Set must be a top-level JSON object")]
    InvalidPayload,
    /// [`JwtCodec::new`] got an empty list of secrets.
    #[error("no secret configured")]
    NoSecret,
    /// [`JwtCodec::new`] got an empty secret.
    #[error("secret at index {index} is empty")]
    EmptySecret {
        /// Position of the empty secret in the list.
        index: usize,
    },
}

/// Encoder/decoder bound to the configured secrets; cheap to clone (`Arc` inside);
/// `Send + Sync`. Its `Debug` output shows no secret.
#[derive(Clone)]
pub struct JwtCodec {
    keys: Arc<KeyRing>,
}

impl fmt::Debug for JwtCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtCodec")
            .field("keys", &self.keys)
            .finish()
    }
}

impl JwtCodec {
    /// Binds the codec to `secrets`: the first encodes, all decode (rotation, as Auth.js
    /// `jwt.ts`).
    ///
    /// # Errors
    /// [`JwtError::NoSecret`] if `secrets` is empty, [`JwtError::EmptySecret`] if one is `""`.
    pub fn new<S: AsRef<str>>(secrets: &[S]) -> Result<Self, JwtError> {
        let secrets: Vec<&[u8]> = secrets.iter().map(|s| s.as_ref().as_bytes()).collect();
        let keys = KeyRing::new(&secrets).map_err(|e| match e {
            JoseError::NoSecret => JwtError::NoSecret,
            JoseError::EmptySecret { index } => JwtError::EmptySecret { index },
            other => JwtError::Jose(other),
        })?;
        Ok(Self {
            keys: Arc::new(keys),
        })
    }

    /// Encodes `claims` as Auth.js `encode` does (`jwt.ts`): sets `iat` = now, `exp` = now +
    /// `max_age_secs` and `jti` = a fresh UUID v4, then encrypts with the first secret,
    /// using `salt` (the cookie name) as HKDF salt.
    ///
    /// Claims keep their order; `iat`, `exp`, `jti` are overwritten in place if present
    /// (as a JavaScript property assignment does) and appended in that order otherwise.
    ///
    /// # Errors
    /// Only if the OS random number generator fails.
    pub fn encode(
        &self,
        claims: &JwtClaims,
        salt: &str,
        max_age_secs: u64,
    ) -> Result<String, JwtError> {
        self.encode_at(claims, salt, max_age_secs, unix_now())
    }

    /// [`JwtCodec::encode`] with an explicit clock (seconds since the UNIX epoch).
    ///
    /// # Errors
    /// Only if the OS random number generator fails.
    pub fn encode_at(
        &self,
        claims: &JwtClaims,
        salt: &str,
        max_age_secs: u64,
        now_unix: i64,
    ) -> Result<String, JwtError> {
        self.encode_with(
            salt,
            max_age_secs,
            now_unix,
            Enc::A256CbcHs512,
            |iat, exp, jti| write_map_claims(claims, iat, exp, jti),
        )
    }

    /// [`JwtCodec::encode`] for claims of any type that serialises as a JSON object (a
    /// struct with named fields, say), encrypted with `enc`. The claims are written straight
    /// into the token: the same bytes as encoding the [`JwtClaims`] map `serde_json` would
    /// make of `claims`, without making it. [`JwtCodec::decode`] reads the token back as a
    /// map, and so does Auth.js's `decode` (`jwt.ts`) under either `enc`.
    ///
    /// [`Enc::A256CbcHs512`] is what Auth.js writes. [`Enc::A256Gcm`] costs a fraction of
    /// it (one AES-GCM pass where the other takes AES-CBC and an HMAC-SHA-512 over the
    /// header and ciphertext), for tokens only a reader of both needs to open: its nonces
    /// are random, so one secret and salt should seal fewer than 2³² tokens (NIST SP 800-38D
    /// §8.3); a secret rotated now and then stays far below.
    ///
    /// # Errors
    /// [`JwtError::InvalidPayload`] if `claims` does not serialise as a JSON object;
    /// otherwise only if the OS random number generator fails.
    pub fn encode_serializable<T: serde::Serialize + ?Sized>(
        &self,
        claims: &T,
        salt: &str,
        max_age_secs: u64,
        enc: Enc,
    ) -> Result<String, JwtError> {
        self.encode_with(salt, max_age_secs, unix_now(), enc, |iat, exp, jti| {
            write_claims(claims, iat, exp, jti)
        })
    }

    /// The token, under `enc`, of the claims `write` writes given `iat`, `exp` and `jti`.
    fn encode_with(
        &self,
        salt: &str,
        max_age_secs: u64,
        now_unix: i64,
        enc: Enc,
        write: impl FnOnce(i64, i64, uuid::Uuid) -> Result<Vec<u8>, JwtError>,
    ) -> Result<String, JwtError> {
        let exp = now_unix.saturating_add(i64::try_from(max_age_secs).unwrap_or(i64::MAX));
        // One OS CSPRNG call gives both the `jti` (UUID v4) and the IV.
        let mut random = [0u8; 32];
        crate::random::fill(&mut random).map_err(|_| JoseError::Rng)?;
        let (jti, iv) = random.split_at(16);
        let jti = uuid::Builder::from_random_bytes(jti.try_into().unwrap_or_default()).into_uuid();
        let payload = write(now_unix, exp, jti)?;
        Ok(self
            .keys
            .encrypt_with_iv(payload, salt, enc, iv.try_into().unwrap_or_default())?)
    }

    /// Encrypts `plaintext` as a JWE under the first secret and `salt` (no claims, no
    /// expiry): data authcore keeps sealed at rest, such as TOTP secrets.
    pub(crate) fn seal_bytes(&self, plaintext: Vec<u8>, salt: &str) -> Result<String, JwtError> {
        Ok(self.keys.encrypt(plaintext, salt)?)
    }

    /// Decrypts what [`JwtCodec::seal_bytes`] sealed, under any secret of the list.
    pub(crate) fn open_bytes(&self, sealed: &str, salt: &str) -> Result<Vec<u8>, JwtError> {
        Ok(self.keys.decrypt(sealed, salt)?)
    }

    /// Decodes a token as Auth.js `decode` does (`jwt.ts`). An empty token is `Ok(None)`.
    ///
    /// The key is chosen by the `kid` header (or is the first secret's without one); the
    /// payload must be a JSON object; `exp`, `nbf` and `iat` are checked with a 15 s tolerance.
    ///
    /// # Errors
    /// [`JwtError::Expired`] for an expired token, [`JwtError::Jose`] for anything that does
    /// not decrypt, and the other variants for invalid claims. Callers typically map any
    /// error to "no session".
    pub fn decode(&self, token: &str, salt: &str) -> Result<Option<JwtClaims>, JwtError> {
        self.decode_at(token, salt, unix_now())
    }

    /// [`JwtCodec::decode`] with an explicit clock (seconds since the UNIX epoch).
    ///
    /// # Errors
    /// As [`JwtCodec::decode`].
    pub fn decode_at(
        &self,
        token: &str,
        salt: &str,
        now_unix: i64,
    ) -> Result<Option<JwtClaims>, JwtError> {
        if token.is_empty() {
            return Ok(None);
        }
        let plaintext = self.keys.decrypt(token, salt)?;
        let claims = parse_claims(&plaintext)?;
        validate_times(&claims, now_unix)?;
        Ok(Some(claims))
    }

    /// [`JwtCodec::decode`] read straight into `T` rather than into a [`JwtClaims`] map:
    /// the counterpart of [`JwtCodec::encode_serializable`]. The same token checks (key,
    /// `exp`, `nbf`, `iat`, a JSON object and nothing after it); a payload `T` does not
    /// deserialise from, or that names a time claim twice, is [`JwtError::InvalidPayload`].
    ///
    /// # Errors
    /// As [`JwtCodec::decode`].
    pub fn decode_deserializable<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        salt: &str,
    ) -> Result<Option<T>, JwtError> {
        self.decode_deserializable_at(token, salt, unix_now())
    }

    /// [`JwtCodec::decode_deserializable`] with an explicit clock (seconds since the UNIX
    /// epoch).
    ///
    /// # Errors
    /// As [`JwtCodec::decode`].
    pub fn decode_deserializable_at<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        salt: &str,
        now_unix: i64,
    ) -> Result<Option<T>, JwtError> {
        if token.is_empty() {
            return Ok(None);
        }
        let plaintext = self.keys.decrypt(token, salt)?;
        // A struct deserialises from a JSON array too: the claims set must be an object.
        if plaintext.trim_ascii_start().first() != Some(&b'{') {
            return Err(JwtError::InvalidPayload);
        }
        // Two passes over the payload: the time claims first (the rest skipped), checked
        // before anything is read into `T`, which need not hold them; together cheaper than
        // the claims map `decode` builds.
        let times: PayloadTimes =
            serde_json::from_slice(&plaintext).map_err(|_| JwtError::InvalidPayload)?;
        check_times(
            times.iat.as_ref(),
            times.nbf.as_ref(),
            times.exp.as_ref(),
            now_unix,
        )?;
        serde_json::from_slice(&plaintext)
            .map(Some)
            .map_err(|_| JwtError::InvalidPayload)
    }
}

/// The session token's format (Auth.js `jwt: { encode, decode }`): replaces the JWE of
/// [`JwtCodec`] for the session cookie only — the session action, sign-in, sign-out,
/// [`Auth::get_token`](crate::Auth::get_token) and the framework extractors use it; the
/// OAuth check and WebAuthn challenge cookies stay JWEs, as in Auth.js. Set it with
/// [`AuthConfigBuilder::session_token_codec`](crate::AuthConfigBuilder::session_token_codec).
///
/// Synchronous, so that `get_token` stays a plain function; `encode` must set the expiry
/// (`exp`) from `max_age_secs` as it sees fit, and `decode` must refuse what it did not
/// make and what has expired (`Ok(None)` or an error both mean "no session").
///
/// ```
/// use authcore::BoxError;
/// use authcore::jwt::{JwtClaims, SessionTokenCodec};
///
/// /// Claims as plain JSON: for illustration only, never for production.
/// struct PlainJson;
///
/// impl SessionTokenCodec for PlainJson {
///     fn encode(&self, claims: &JwtClaims, _salt: &str, _max_age: u64) -> Result<String, BoxError> {
///         Ok(authcore::serde_json::to_string(claims)?)
///     }
///     fn decode(&self, token: &str, _salt: &str) -> Result<Option<JwtClaims>, BoxError> {
///         Ok(Some(authcore::serde_json::from_str(token)?))
///     }
/// }
/// ```
pub trait SessionTokenCodec: Send + Sync + 'static {
    /// The session token for `claims`, in a cookie named (and salted by) `salt`, valid for
    /// `max_age_secs` (`jwt.maxAge`).
    ///
    /// # Errors
    /// Whatever stops encoding; the request fails as Auth.js's `encode` throwing would.
    fn encode(&self, claims: &JwtClaims, salt: &str, max_age_secs: u64)
    -> Result<String, BoxError>;

    /// The claims of `token` (from the cookie named `salt`), or `Ok(None)` for no session.
    ///
    /// # Errors
    /// A token that is malformed, forged or expired; treated as no session.
    fn decode(&self, token: &str, salt: &str) -> Result<Option<JwtClaims>, BoxError>;
}

impl SessionTokenCodec for JwtCodec {
    fn encode(
        &self,
        claims: &JwtClaims,
        salt: &str,
        max_age_secs: u64,
    ) -> Result<String, BoxError> {
        Ok(JwtCodec::encode(self, claims, salt, max_age_secs)?)
    }

    fn decode(&self, token: &str, salt: &str) -> Result<Option<JwtClaims>, BoxError> {
        Ok(JwtCodec::decode(self, token, salt)?)
    }
}

/// NextAuth.js v4's session token (`next-auth/jwt` `encode` / `decode` of 4.24): a JWE
/// `dir` + `A256GCM` under HKDF-SHA256(secret, salt `""`, info `NextAuth.js Generated
/// Encryption Key`), no `kid`; `iat`, `exp` and `jti` set on encoding; 15 s of clock
/// tolerance on decoding. [`AuthConfigBuilder::next_auth_v4`](crate::AuthConfigBuilder::next_auth_v4)
/// sets it up with v4's cookie names and base path.
///
/// ```
/// use authcore::jwt::{NextAuthV4Codec, SessionTokenCodec};
/// let codec = NextAuthV4Codec::new("the NEXTAUTH_SECRET");
/// let claims = authcore::serde_json::json!({"sub": "1", "name": "Ada"});
/// let token = codec.encode(claims.as_object().unwrap(), "", 60).unwrap();
/// assert_eq!(codec.decode(&token, "").unwrap().unwrap()["name"], "Ada");
/// ```
pub struct NextAuthV4Codec {
    key: crate::jose::DerivedKey,
}

impl fmt::Debug for NextAuthV4Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NextAuthV4Codec([redacted])")
    }
}

impl NextAuthV4Codec {
    /// The codec of `NEXTAUTH_SECRET` (v4 takes one secret).
    pub fn new(secret: impl AsRef<str>) -> Self {
        NextAuthV4Codec {
            key: crate::jose::DerivedKey::derive_next_auth_v4(secret.as_ref().as_bytes()),
        }
    }
}

impl SessionTokenCodec for NextAuthV4Codec {
    fn encode(
        &self,
        claims: &JwtClaims,
        _salt: &str,
        max_age_secs: u64,
    ) -> Result<String, BoxError> {
        let now = unix_now();
        let exp = now.saturating_add(i64::try_from(max_age_secs).unwrap_or(i64::MAX));
        let mut random = [0u8; 16];
        crate::random::fill(&mut random).map_err(|_| JoseError::Rng)?;
        let jti = uuid::Builder::from_random_bytes(random).into_uuid();
        let payload = write_map_claims(claims, now, exp, jti)?;
        Ok(self.key.encrypt(payload)?)
    }

    fn decode(&self, token: &str, _salt: &str) -> Result<Option<JwtClaims>, BoxError> {
        if token.is_empty() {
            return Ok(None);
        }
        let plaintext = self.key.decrypt(token)?;
        let claims = parse_claims(&plaintext)?;
        validate_times(&claims, unix_now())?;
        Ok(Some(claims))
    }
}

/// Room for the claims of a signed-in user (`name`, `email`, `picture`, `sub`, `iat`,
/// `exp`, `jti` and a few of the application's) before the map grows.
const CLAIMS_CAPACITY: usize = 8;

/// A decrypted payload as claims: a JSON object, and nothing after it. The same as
/// `serde_json::from_slice::<JwtClaims>` (a repeated name keeps its first place and its
/// last value), but the map is made with room for [`CLAIMS_CAPACITY`] claims instead of
/// growing (and reallocating) while it is read; room for more would cost more to allocate
/// than it saves.
fn parse_claims(payload: &[u8]) -> Result<JwtClaims, JwtError> {
    struct Claims;
    impl<'de> serde::de::Visitor<'de> for Claims {
        type Value = JwtClaims;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<JwtClaims, A::Error> {
            let mut claims = JwtClaims::with_capacity(CLAIMS_CAPACITY);
            while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                claims.insert(name, value);
            }
            Ok(claims)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(payload);
    let claims = serde::Deserializer::deserialize_map(&mut de, Claims)
        .and_then(|claims| de.end().map(|()| claims));
    claims.map_err(|_| JwtError::InvalidPayload)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Serialises `claims` with `iat`/`exp`/`jti` set, without cloning the map: equivalent to
/// inserting the three claims into a copy and serialising that. [`write_claims`] writes the
/// same for any value; this is the session token's, shorter for a map.
fn write_map_claims(
    claims: &JwtClaims,
    iat: i64,
    exp: i64,
    jti: uuid::Uuid,
) -> Result<Vec<u8>, JwtError> {
    fn write(
        buf: &mut Vec<u8>,
        claims: &JwtClaims,
        iat: i64,
        exp: i64,
        jti: &[u8],
    ) -> std::io::Result<()> {
        let (mut has_iat, mut has_exp, mut has_jti) = (false, false, false);
        let mut first = true;
        let mut separator = |buf: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                buf.push(b',');
            }
        };
        buf.push(b'{');
        for (name, value) in claims {
            separator(buf);
            serde_json::to_writer(&mut *buf, name)?;
            buf.push(b':');
            match name.as_str() {
                "iat" => {
                    has_iat = true;
                    write!(buf, "{iat}")?;
                }
                "exp" => {
                    has_exp = true;
                    write!(buf, "{exp}")?;
                }
                "jti" => {
                    has_jti = true;
                    buf.extend_from_slice(jti);
                }
                _ => serde_json::to_writer(&mut *buf, value)?,
            }
        }
        if !has_iat {
            separator(buf);
            write!(buf, r#""iat":{iat}"#)?;
        }
        if !has_exp {
            separator(buf);
            write!(buf, r#""exp":{exp}"#)?;
        }
        if !has_jti {
            separator(buf);
            buf.extend_from_slice(br#""jti":"#);
            buf.extend_from_slice(jti);
        }
        buf.push(b'}');
        Ok(())
    }

    // Room for the JSON plus the PKCS#7 padding added in place by the encryption.
    let mut buf = Vec::with_capacity(256);
    write(&mut buf, claims, iat, exp, &quoted(jti)).map_err(|_| JwtError::InvalidPayload)?;
    buf.reserve_exact(16);
    Ok(buf)
}

/// Serialises `claims` (anything that serialises as a JSON object) with `iat`, `exp` and
/// `jti` set, in one pass and without an intermediate map: the same bytes as inserting the
/// three claims into a [`JwtClaims`] copy of `claims` and serialising that (a claim present
/// keeps its place and takes the new value; a missing one is appended in that order). A
/// value that writes a name twice (a flattened map can) has it twice here, where the copy
/// would have it once; decoding keeps one, as [`parse_claims`] says.
fn write_claims<T: serde::Serialize + ?Sized>(
    claims: &T,
    iat: i64,
    exp: i64,
    jti: uuid::Uuid,
) -> Result<Vec<u8>, JwtError> {
    // Room for the JSON plus the PKCS#7 padding added in place by the encryption.
    let mut buf = Vec::with_capacity(256);
    let muted = std::cell::Cell::new(false);
    let writer = Muted {
        out: &mut buf,
        muted: &muted,
    };
    let formatter = TimeClaims {
        times: [iat, exp],
        jti,
        muted: &muted,
        depth: 0,
        in_key: false,
        key: None,
        written: [false; 3],
        any: false,
    };
    let mut ser = serde_json::Serializer::with_formatter(writer, formatter);
    claims
        .serialize(&mut ser)
        .map_err(|_| JwtError::InvalidPayload)?;
    if buf.first() != Some(&b'{') {
        return Err(JwtError::InvalidPayload);
    }
    buf.reserve_exact(16);
    Ok(buf)
}

/// A writer into `out` that drops what is written while `muted` is set: the value of a
/// claim [`TimeClaims`] replaces.
struct Muted<'a> {
    out: &'a mut Vec<u8>,
    muted: &'a std::cell::Cell<bool>,
}

impl std::io::Write for Muted<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if !self.muted.get() {
            self.out.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `jti` as a JSON string: a hyphenated UUID needs no escaping.
fn quoted(jti: uuid::Uuid) -> [u8; uuid::fmt::Hyphenated::LENGTH + 2] {
    let mut quoted = [b'"'; uuid::fmt::Hyphenated::LENGTH + 2];
    jti.hyphenated()
        .encode_lower(&mut quoted[1..=uuid::fmt::Hyphenated::LENGTH]);
    quoted
}

/// The claims [`write_claims`] sets, in the order it appends those missing.
const SET_CLAIMS: [&str; 3] = ["iat", "exp", "jti"];

/// serde_json's compact output, with the top-level object's `iat`, `exp` and `jti` given
/// their new values (the serialised ones muted) and those it lacks appended at its end.
struct TimeClaims<'a> {
    /// `iat` and `exp`.
    times: [i64; 2],
    jti: uuid::Uuid,
    muted: &'a std::cell::Cell<bool>,
    /// Objects and arrays open: 1 inside the top-level object.
    depth: usize,
    /// Whether a top-level key is being written and has not been looked at yet.
    in_key: bool,
    /// The [`SET_CLAIMS`] index the top-level key being written names.
    key: Option<usize>,
    /// Which of [`SET_CLAIMS`] the object had.
    written: [bool; 3],
    /// Whether the top-level object had any claim.
    any: bool,
}

impl TimeClaims<'_> {
    /// The new value of `SET_CLAIMS[i]`.
    #[inline]
    fn write_claim<W: ?Sized + std::io::Write>(&self, w: &mut W, i: usize) -> std::io::Result<()> {
        match self.times.get(i) {
            Some(time) => {
                use serde_json::ser::Formatter as _;
                serde_json::ser::CompactFormatter.write_i64(w, *time)
            }
            None => w.write_all(&quoted(self.jti)),
        }
    }
}

impl serde_json::ser::Formatter for TimeClaims<'_> {
    #[inline]
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        w.write_all(b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        if self.depth == 1 {
            for (i, name) in SET_CLAIMS.iter().enumerate() {
                if !self.written[i] {
                    if std::mem::replace(&mut self.any, true) {
                        w.write_all(b",")?;
                    }
                    for part in [&b"\""[..], name.as_bytes(), b"\":"] {
                        w.write_all(part)?;
                    }
                    self.write_claim(w, i)?;
                }
            }
        }
        self.depth = self.depth.saturating_sub(1);
        w.write_all(b"}")
    }

    #[inline]
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        w.write_all(b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        w.write_all(b"]")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if self.depth == 1 {
            self.any = true;
            self.in_key = true;
            self.key = None;
        }
        if first { Ok(()) } else { w.write_all(b",") }
    }

    #[inline]
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if std::mem::take(&mut self.in_key) {
            // serde_json writes a key without escapes as one fragment: a key in pieces is
            // none of the three.
            self.key = SET_CLAIMS.iter().position(|name| *name == fragment);
        }
        w.write_all(fragment.as_bytes())
    }

    #[inline]
    fn write_char_escape<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        char_escape: serde_json::ser::CharEscape,
    ) -> std::io::Result<()> {
        self.in_key = false;
        self.key = None;
        serde_json::ser::CompactFormatter.write_char_escape(w, char_escape)
    }

    #[inline]
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.in_key = false;
        Ok(())
    }

    #[inline]
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b":")?;
        if self.depth == 1
            && let Some(i) = self.key.take()
        {
            self.written[i] = true;
            self.write_claim(w, i)?;
            self.muted.set(true);
        }
        Ok(())
    }

    #[inline]
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        if self.depth == 1 {
            self.muted.set(false);
        }
        Ok(())
    }
}

/// `jose`'s claim-set time checks with `clockTolerance: 15`, plus a future-`iat` check.
fn validate_times(claims: &JwtClaims, now: i64) -> Result<(), JwtError> {
    check_times(claims.get("iat"), claims.get("nbf"), claims.get("exp"), now)
}

/// The time claims of a payload, each as found (`None` when absent; a `null` is found),
/// the payload's other claims skipped.
#[derive(serde::Deserialize)]
struct PayloadTimes {
    #[serde(default, deserialize_with = "found")]
    iat: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "found")]
    nbf: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "found")]
    exp: Option<serde_json::Value>,
}

/// A claim that is present, whatever its value (`null` included).
fn found<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// The checks of Auth.js `decode` (jose's `jwtVerify` with `clockTolerance: 15`) on the
/// `iat`, `nbf` and `exp` claims as found.
fn check_times(
    iat: Option<&serde_json::Value>,
    nbf: Option<&serde_json::Value>,
    exp: Option<&serde_json::Value>,
    now: i64,
) -> Result<(), JwtError> {
    let time = |claim: &'static str, found: Option<&serde_json::Value>| {
        found
            .map(|v| v.as_f64().ok_or(JwtError::InvalidClaim { claim }))
            .transpose()
    };
    // Timestamps are far below 2^53, so the conversions to f64 are exact.
    let latest = now.saturating_add(CLOCK_TOLERANCE_SECS) as f64;
    let earliest = now.saturating_sub(CLOCK_TOLERANCE_SECS) as f64;
    let iat = time("iat", iat)?;
    if let Some(nbf) = time("nbf", nbf)?
        && nbf > latest
    {
        return Err(JwtError::NotYetValid);
    }
    if let Some(exp) = time("exp", exp)?
        && exp <= earliest
    {
        return Err(JwtError::Expired);
    }
    // A future `iat` is accepted, as jose does without `maxTokenAge`: a peer Auth.js server
    // whose clock runs ahead must not lose its sessions here.
    let _ = iat;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    #[test]
    fn claims_parse_as_serde_json_parses_a_map() {
        for payload in [
            &br#"{"name":"A","email":"a@example.com","iat":1,"exp":2,"jti":"x"}"#[..],
            br#"{"a":1,"b":2,"a":3}"#,
            br#" {"nested":{"k":[1,2,{"z":null}]},"s":"\u00e9\n"} "#,
            br#"{}"#,
            br#"{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14}"#,
        ] {
            let expected: JwtClaims = serde_json::from_slice(payload).unwrap();
            let parsed = parse_claims(payload).unwrap();
            assert_eq!(parsed, expected);
            assert!(parsed.keys().eq(expected.keys()), "order of {payload:?}");
        }
        for bad in [
            &b"[1,2]"[..],
            b"\"claims\"",
            b"null",
            b"{\"a\":1} {}",
            b"{\"a\":1",
            b"{\"a\":\"\xff\"}",
            b"",
        ] {
            assert!(serde_json::from_slice::<JwtClaims>(bad).is_err(), "{bad:?}");
            assert!(
                matches!(parse_claims(bad), Err(JwtError::InvalidPayload)),
                "{bad:?}"
            );
        }
    }

    const VECTORS: &str = include_str!("../testdata/authjs-jwt-vectors.json");
    const SALT: &str = "authjs.session-token";
    const S1: &str = "first-secret-for-rotation-tests";
    const S2: &str = "second-secret-for-rotation-tests";
    const S3: &str = "third-secret-for-rotation-tests";
    /// A day after the vectors were generated: valid ones expire in 2100, `expired` a day
    /// before generation.
    const VECTOR_NOW: i64 = 1_795_400_000;
    const NOW: i64 = 1_800_000_000;

    fn claims(value: Value) -> JwtClaims {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn codec(secrets: &[&str]) -> JwtCodec {
        JwtCodec::new(secrets).unwrap()
    }

    fn vector_secrets(v: &Value) -> Vec<String> {
        match &v["secret"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(list) => list
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect(),
            other => panic!("bad secret {other}"),
        }
    }

    fn sample() -> JwtClaims {
        claims(json!({"name": "Alice", "email": "alice@example.com", "sub": "1"}))
    }

    #[test]
    fn session_token_vectors() {
        let vectors: Value = serde_json::from_str(VECTORS).unwrap();
        let tokens = vectors["session_tokens"].as_array().unwrap();
        assert_eq!(tokens.len(), 16);
        for v in tokens {
            let name = v["name"].as_str().unwrap();
            let codec = JwtCodec::new(&vector_secrets(v)).unwrap();
            let result = codec.decode_at(
                v["token"].as_str().unwrap(),
                v["salt"].as_str().unwrap(),
                VECTOR_NOW,
            );
            if v["valid"] == true {
                let decoded = result.unwrap_or_else(|e| panic!("{name}: {e}")).unwrap();
                let expected = v["decoded"].as_object().unwrap();
                assert_eq!(&decoded, expected, "{name}");
                assert!(decoded.keys().eq(expected.keys()), "{name}: claim order");
                continue;
            }
            let err = result.expect_err(name);
            let kind_ok = match name {
                "expired" => matches!(err, JwtError::Expired),
                "wrong-secret" | "wrong-salt" => {
                    matches!(err, JwtError::Jose(JoseError::NoMatchingSecret))
                }
                "tampered-ciphertext" | "tampered-tag" => {
                    matches!(err, JwtError::Jose(JoseError::DecryptionFailed))
                }
                "key-wrap-alg" => {
                    matches!(err, JwtError::Jose(JoseError::UnsupportedAlgorithm { ref alg }) if alg == "A256KW")
                }
                "unsecured-jws" => matches!(err, JwtError::Jose(JoseError::Malformed { .. })),
                other => panic!("unexpected invalid vector {other}"),
            };
            assert!(kind_ok, "{name}: {err:?}");
        }
    }

    #[test]
    fn encoded_header_is_byte_exact() {
        let token = codec(&[S1])
            .encode(&sample(), SALT, DEFAULT_MAX_AGE_SECS)
            .unwrap();
        let header = URL_SAFE_NO_PAD
            .decode(token.split('.').next().unwrap())
            .unwrap();
        let header = String::from_utf8(header).unwrap();
        let kid =
            crate::jose::DerivedKey::derive(S1.as_bytes(), SALT, crate::jose::Enc::A256CbcHs512);
        assert_eq!(
            header,
            format!(
                r#"{{"alg":"dir","enc":"A256CBC-HS512","kid":"{}"}}"#,
                kid.kid()
            )
        );
    }

    #[test]
    fn round_trip_adds_iat_exp_jti_after_existing_claims() {
        let codec = codec(&[S1]);
        let token = codec.encode_at(&sample(), SALT, 3600, NOW).unwrap();
        let decoded = codec.decode_at(&token, SALT, NOW).unwrap().unwrap();
        let keys: Vec<&str> = decoded.keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "email", "sub", "iat", "exp", "jti"]);
        assert_eq!(decoded["iat"], NOW);
        assert_eq!(decoded["exp"], NOW + 3600);
        let jti = uuid::Uuid::parse_str(decoded["jti"].as_str().unwrap()).unwrap();
        assert_eq!(jti.get_version_num(), 4);
        for (k, v) in &sample() {
            assert_eq!(&decoded[k], v);
        }
        // Encoding the same claims twice gives different tokens and jtis.
        let again = codec.decode_at(
            &codec.encode_at(&sample(), SALT, 3600, NOW).unwrap(),
            SALT,
            NOW,
        );
        assert_ne!(again.unwrap().unwrap()["jti"], decoded["jti"]);
    }

    #[test]
    fn existing_time_claims_are_overwritten_in_place() {
        let codec = codec(&[S1]);
        let input = claims(json!({"exp": 1, "name": "A", "jti": "old", "iat": "x", "z": null}));
        let token = codec.encode_at(&input, SALT, 60, NOW).unwrap();
        let decoded = codec.decode_at(&token, SALT, NOW).unwrap().unwrap();
        let keys: Vec<&str> = decoded.keys().map(String::as_str).collect();
        assert_eq!(keys, ["exp", "name", "jti", "iat", "z"]);
        assert_eq!(decoded["exp"], NOW + 60);
        assert_eq!(decoded["iat"], NOW);
        assert_ne!(decoded["jti"], "old");
        assert_eq!(decoded["z"], Value::Null);
    }

    const JTI: uuid::Uuid = uuid::Uuid::from_u128(0x0123_4567_89ab_4def_8123_4567_89ab_cdef);

    /// What [`write_claims`] must write for `value`: its map with the three claims
    /// inserted, as Auth.js's property assignments do.
    fn inserted(value: Value) -> String {
        let mut expected = claims(value);
        expected.insert("iat".into(), json!(10));
        expected.insert("exp".into(), json!(20));
        expected.insert("jti".into(), json!(JTI.to_string()));
        serde_json::to_string(&expected).unwrap()
    }

    #[test]
    fn claims_writer_matches_map_insert_semantics() {
        let cases = [
            json!({}),
            json!({"a": 1}),
            json!({"iat": 5, "a": "é\"\\\n<", "nested": {"exp": 1, "l": [1, 2.5, null, true]}}),
            json!({"jti": 1, "exp": 2, "iat": 3}),
            json!({"a": 1, "jti": 1}),
            // Replaced values of any shape; the same names below the top level are kept.
            json!({"jti": {"iat": 1, "jti": [{"exp": 2}]}, "exp": [[], {}], "x": {"jti": "kept"}}),
            json!({"l": [{"iat": 1}, [{"exp": 2}]], "iat": null}),
            // Names that only look like the three, written in pieces or escaped.
            json!({"iat\n": 1, "\niat": 2, "i\"at": 3, "jtix": 4, "ia": 5, "": 6, "EXP": 7}),
            json!({"\u{0}": {"\u{1}": "\u{2}"}, "iat": "\\"}),
        ];
        for case in cases {
            let map = claims(case.clone());
            let expected = inserted(case);
            for written in [
                write_map_claims(&map, 10, 20, JTI),
                write_claims(&map, 10, 20, JTI),
            ] {
                assert_eq!(String::from_utf8(written.unwrap()).unwrap(), expected);
            }
        }
    }

    #[test]
    fn claims_writer_takes_any_value_that_serialises_as_an_object() {
        #[derive(serde::Serialize)]
        struct Access<'a> {
            sub: &'a str,
            iat: i64,
            jti: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            grant: Option<&'a str>,
            exp: u64,
            nested: Nested,
            #[serde(flatten)]
            more: JwtClaims,
        }
        #[derive(serde::Serialize)]
        struct Nested {
            iat: u8,
            list: Vec<(u8, &'static str)>,
        }
        #[derive(serde::Serialize)]
        struct Empty {}
        #[derive(serde::Serialize)]
        enum Kind {
            Struct { iat: i8 },
        }
        let access = Access {
            sub: "u\"1",
            iat: 1,
            jti: "old".into(),
            grant: None,
            exp: 2,
            nested: Nested {
                iat: 3,
                list: vec![(4, "jti")],
            },
            more: claims(json!({"cnf": {"jkt": "k", "iat": 1}, "z": 1})),
        };
        let mut by_name = std::collections::BTreeMap::new();
        by_name.insert("exp", 1);
        by_name.insert("a", 2);
        let mut by_number = std::collections::BTreeMap::new();
        by_number.insert(7, "iat");
        let values = [
            serde_json::to_value(&access).unwrap(),
            serde_json::to_value(Empty {}).unwrap(),
            serde_json::to_value(&by_name).unwrap(),
            serde_json::to_value(&by_number).unwrap(),
            serde_json::to_value(Kind::Struct { iat: 1 }).unwrap(),
        ];
        let written = [
            write_claims(&access, 10, 20, JTI),
            write_claims(&Empty {}, 10, 20, JTI),
            write_claims(&by_name, 10, 20, JTI),
            write_claims(&by_number, 10, 20, JTI),
            write_claims(&Kind::Struct { iat: 1 }, 10, 20, JTI),
        ];
        for (value, written) in values.into_iter().zip(written) {
            assert_eq!(
                String::from_utf8(written.unwrap()).unwrap(),
                inserted(value)
            );
        }
        // What is not an object is refused, whatever it holds.
        for refused in [
            write_claims("claims", 10, 20, JTI),
            write_claims(&[json!({"iat": 1})], 10, 20, JTI),
            write_claims(&Value::Null, 10, 20, JTI),
            write_claims(&7, 10, 20, JTI),
            write_claims(&(), 10, 20, JTI),
            write_claims(&Some("x"), 10, 20, JTI),
        ] {
            assert!(matches!(refused, Err(JwtError::InvalidPayload)));
        }
        // A map whose keys serde_json cannot write is refused, not written in part.
        let mut unkeyed = std::collections::BTreeMap::new();
        unkeyed.insert(vec![1], 1);
        assert!(matches!(
            write_claims(&unkeyed, 10, 20, JTI),
            Err(JwtError::InvalidPayload)
        ));
    }

    #[test]
    fn a_struct_round_trips_as_its_map_does() {
        #[derive(serde::Serialize)]
        struct Grant<'a> {
            sub: &'a str,
            scope: &'a str,
            exp: i64,
        }
        let codec = codec(&[S1]);
        let grant = Grant {
            sub: "1",
            scope: "openid email",
            exp: 0,
        };
        for enc in [Enc::A256CbcHs512, Enc::A256Gcm] {
            let token = codec.encode_serializable(&grant, SALT, 60, enc).unwrap();
            let header = URL_SAFE_NO_PAD
                .decode(token.split('.').next().unwrap())
                .unwrap();
            let kid = crate::jose::DerivedKey::derive(S1.as_bytes(), SALT, enc);
            assert_eq!(
                String::from_utf8(header).unwrap(),
                format!(
                    r#"{{"alg":"dir","enc":"{}","kid":"{}"}}"#,
                    enc.name(),
                    kid.kid()
                )
            );
            let decoded = codec.decode(&token, SALT).unwrap().unwrap();
            let keys: Vec<&str> = decoded.keys().map(String::as_str).collect();
            assert_eq!(keys, ["sub", "scope", "exp", "iat", "jti"]);
            let iat = decoded["iat"].as_i64().unwrap();
            assert!((unix_now() - iat).abs() < 60, "{iat}");
            assert_eq!(decoded["exp"], iat + 60);
            assert_eq!(decoded["scope"], "openid email");
            let jti = uuid::Uuid::parse_str(decoded["jti"].as_str().unwrap()).unwrap();
            assert_eq!(jti.get_version_num(), 4);
            // Bound to its salt and secret, whatever the cipher.
            assert!(codec.decode(&token, "another-salt").is_err());
            assert!(JwtCodec::new(&[S2]).unwrap().decode(&token, SALT).is_err());
            assert!(
                JwtCodec::new(&[S2, S1])
                    .unwrap()
                    .decode(&token, SALT)
                    .unwrap()
                    .is_some()
            );
            assert!(matches!(
                codec.encode_serializable("not an object", SALT, 60, enc),
                Err(JwtError::InvalidPayload)
            ));
        }
    }

    #[test]
    fn rotation_first_secret_encodes_all_decode() {
        let token = codec(&[S1, S2])
            .encode_at(&sample(), SALT, 60, NOW)
            .unwrap();
        assert!(codec(&[S1]).decode_at(&token, SALT, NOW).unwrap().is_some());
        assert!(
            codec(&[S2, S1])
                .decode_at(&token, SALT, NOW)
                .unwrap()
                .is_some()
        );
        assert!(matches!(
            codec(&[S2]).decode_at(&token, SALT, NOW),
            Err(JwtError::Jose(JoseError::NoMatchingSecret))
        ));
        let from_s3 = codec(&[S3]).encode_at(&sample(), SALT, 60, NOW).unwrap();
        assert!(matches!(
            codec(&[S1, S2]).decode_at(&from_s3, SALT, NOW),
            Err(JwtError::Jose(JoseError::NoMatchingSecret))
        ));
    }

    #[test]
    fn salt_binds_the_token_to_its_cookie() {
        let codec = codec(&[S1]);
        let token = codec
            .encode_at(&sample(), "authjs.session-token", 60, NOW)
            .unwrap();
        assert!(matches!(
            codec.decode_at(&token, "__Secure-authjs.session-token", NOW),
            Err(JwtError::Jose(JoseError::NoMatchingSecret))
        ));
        assert!(
            codec
                .decode_at(&token, "authjs.session-token", NOW)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn clock_tolerance_is_15_seconds() {
        let codec = codec(&[S1]);
        // exp = NOW - 10 and NOW - 20 at decode time NOW.
        let ten_ago = codec.encode_at(&sample(), SALT, 50, NOW - 60).unwrap();
        let twenty_ago = codec.encode_at(&sample(), SALT, 40, NOW - 60).unwrap();
        assert!(codec.decode_at(&ten_ago, SALT, NOW).unwrap().is_some());
        assert!(matches!(
            codec.decode_at(&twenty_ago, SALT, NOW),
            Err(JwtError::Expired)
        ));
        // Boundary: exp == now - 15 is expired, exp == now - 14 is not (jose: exp <= now - tol).
        let at = |max_age| {
            codec
                .encode_at(&sample(), SALT, max_age, NOW - 100)
                .unwrap()
        };
        assert!(matches!(
            codec.decode_at(&at(85), SALT, NOW),
            Err(JwtError::Expired)
        ));
        assert!(codec.decode_at(&at(86), SALT, NOW).is_ok());
        // iat up to 15 s in the future is tolerated, beyond that rejected.
        assert!(
            codec
                .decode_at(
                    &codec.encode_at(&sample(), SALT, 60, NOW + 15).unwrap(),
                    SALT,
                    NOW
                )
                .is_ok()
        );
        // Like Auth.js (jose without maxTokenAge), a future `iat` alone is not an error.
        assert!(
            codec
                .decode_at(
                    &codec.encode_at(&sample(), SALT, 60, NOW + 16).unwrap(),
                    SALT,
                    NOW
                )
                .is_ok()
        );
    }

    #[test]
    fn nbf_and_claim_types_are_checked() {
        let codec = codec(&[S1]);
        let enc = |extra: Value| codec.encode_at(&claims(extra), SALT, 60, NOW).unwrap();
        assert!(
            codec
                .decode_at(&enc(json!({"nbf": NOW + 15})), SALT, NOW)
                .is_ok()
        );
        assert!(matches!(
            codec.decode_at(&enc(json!({"nbf": NOW + 16})), SALT, NOW),
            Err(JwtError::NotYetValid)
        ));
        assert!(matches!(
            codec.decode_at(&enc(json!({"nbf": "soon"})), SALT, NOW),
            Err(JwtError::InvalidClaim { claim: "nbf" })
        ));
        // A token whose payload has a non-numeric exp, or is not an object.
        let ring = KeyRing::new(&[S1]).unwrap();
        let raw = |payload: &str| ring.encrypt(payload.as_bytes().to_vec(), SALT).unwrap();
        assert!(matches!(
            codec.decode_at(&raw(r#"{"exp":"never"}"#), SALT, NOW),
            Err(JwtError::InvalidClaim { claim: "exp" })
        ));
        assert!(matches!(
            codec.decode_at(&raw(r#"{"iat":null}"#), SALT, NOW),
            Err(JwtError::InvalidClaim { claim: "iat" })
        ));
        assert!(
            codec
                .decode_at(&raw(r#"{"a":1}"#), SALT, NOW)
                .unwrap()
                .is_some()
        );
        assert!(codec.decode_at(&raw(r#"{"exp":1.8e9}"#), SALT, NOW).is_ok());
        for bad in ["[1]", "null", "\"s\"", "", "{", "\u{ff}"] {
            assert!(
                matches!(
                    codec.decode_at(&raw(bad), SALT, NOW),
                    Err(JwtError::InvalidPayload)
                ),
                "{bad}"
            );
        }
    }

    /// What `decode` says of a payload, as comparable text: the claims, or the error.
    fn verdict<T: fmt::Debug>(r: Result<Option<T>, JwtError>) -> String {
        match r {
            Ok(v) => format!("{v:?}"),
            Err(JwtError::Jose(_)) => "jose".into(),
            Err(e) => e.to_string(),
        }
    }

    #[derive(Debug, serde::Deserialize)]
    struct Sub {
        sub: String,
        #[serde(default)]
        iat: i64,
        #[serde(default)]
        exp: i64,
    }

    #[test]
    fn a_payload_read_into_a_type_passes_the_checks_decode_makes() {
        let codec = codec(&[S1]);
        let ring = KeyRing::new(&[S1]).unwrap();
        let raw = |payload: &str| ring.encrypt(payload.as_bytes().to_vec(), SALT).unwrap();
        let (now, soon, past) = (NOW, NOW + 60, NOW - 16);
        let payloads = [
            format!(r#"{{"sub":"1","iat":{now},"exp":{soon},"jti":"j"}}"#),
            format!(r#"  {{"sub":"1","exp":{soon}.5}}"#),
            r#"{"sub":"1"}"#.into(),
            format!(r#"{{"sub":"1","exp":{past}}}"#),
            format!(r#"{{"sub":"1","nbf":{}}}"#, NOW + 16),
            format!(r#"{{"sub":"1","nbf":{}}}"#, NOW + 15),
            r#"{"sub":"1","exp":"never"}"#.into(),
            r#"{"sub":"1","iat":null}"#.into(),
            r#"{"sub":"1","nbf":[1]}"#.into(),
            r#"{"sub":1}"#.into(),
            r#"{"sub":"1"} x"#.into(),
            r#"["1"]"#.into(),
            "null".into(),
            "".into(),
            "{".into(),
            "\u{ff}".into(),
        ];
        for payload in &payloads {
            let token = raw(payload);
            // Read as a map, both ways alike.
            let map = verdict(codec.decode_at(&token, SALT, NOW));
            let typed = verdict(codec.decode_deserializable_at::<JwtClaims>(&token, SALT, NOW));
            assert_eq!(typed, map, "{payload}");
            // Read into a struct: a map's verdict, or the struct's own refusal.
            let sub = verdict(codec.decode_deserializable_at::<Sub>(&token, SALT, NOW));
            if map.starts_with("Some(") {
                let expected = serde_json::from_str::<Sub>(payload).map_or_else(
                    |_| JwtError::InvalidPayload.to_string(),
                    |s| format!("Some({s:?})"),
                );
                assert_eq!(sub, expected, "{payload}");
            } else {
                assert_eq!(sub, map, "{payload}");
            }
        }
        // A time claim named twice is refused, not read either way.
        let twice = raw(&format!(r#"{{"sub":"1","exp":{past},"exp":{soon}}}"#));
        assert!(matches!(
            codec.decode_deserializable_at::<JwtClaims>(&twice, SALT, NOW),
            Err(JwtError::InvalidPayload)
        ));
        // Another salt's or secret's token, and the empty token.
        let other = codec
            .encode_serializable(&json!({"sub": "1"}), "other", 60, Enc::A256Gcm)
            .unwrap();
        assert_eq!(
            verdict(codec.decode_deserializable::<JwtClaims>(&other, SALT)),
            "jose"
        );
        assert!(
            codec
                .decode_deserializable::<JwtClaims>("", SALT)
                .unwrap()
                .is_none()
        );
        // And what encode_serializable wrote reads back as the type it came from.
        let token = codec
            .encode_serializable(&json!({"sub": "7"}), SALT, 60, Enc::A256Gcm)
            .unwrap();
        let back: Sub = codec.decode_deserializable(&token, SALT).unwrap().unwrap();
        assert_eq!(back.sub, "7");
        assert!(back.exp > back.iat);
    }

    #[test]
    fn empty_token_is_none_and_secrets_are_validated() {
        assert!(codec(&[S1]).decode("", SALT).unwrap().is_none());
        assert!(matches!(
            JwtCodec::new::<&str>(&[]),
            Err(JwtError::NoSecret)
        ));
        assert!(matches!(
            JwtCodec::new(&[S1, ""]),
            Err(JwtError::EmptySecret { index: 1 })
        ));
        assert!(JwtCodec::new(&[String::from(S1)]).is_ok());
    }

    #[test]
    fn real_clock_round_trip() {
        let codec = codec(&[S1]);
        let token = codec.encode(&sample(), SALT, DEFAULT_MAX_AGE_SECS).unwrap();
        let decoded = codec.clone().decode(&token, SALT).unwrap().unwrap();
        assert_eq!(
            decoded["exp"].as_i64().unwrap() - decoded["iat"].as_i64().unwrap(),
            2_592_000
        );
    }

    #[test]
    fn codec_is_send_sync_and_never_prints_secrets() {
        fn assert_send_sync<T: Send + Sync + Clone + fmt::Debug>() {}
        assert_send_sync::<JwtCodec>();
        let dbg = format!("{:?}", codec(&[S1, S2]));
        assert!(
            !dbg.contains(S1) && !dbg.contains(S2) && dbg.contains("redacted"),
            "{dbg}"
        );
    }

    fn valid_token() -> (JwtCodec, String) {
        let codec = codec(&[S1]);
        let token = codec.encode_at(&sample(), SALT, 3600, NOW).unwrap();
        (codec, token)
    }

    /// Any JSON value, nested a few levels, with names that are often the three claims.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((claim_name(), inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn claim_name() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec!["iat", "exp", "jti", "sub", "ia", "iat\n", "\"exp"])
                .prop_map(str::to_owned),
            ".{0,5}",
        ]
    }

    proptest! {
        #[test]
        fn claims_writer_matches_map_insert_semantics_for_any_map(
            entries in prop::collection::vec((claim_name(), json_value()), 0..6),
        ) {
            let value = Value::Object(entries.into_iter().collect());
            let map = claims(value.clone());
            let expected = inserted(value);
            let by_map = write_map_claims(&map, 10, 20, JTI).unwrap();
            prop_assert_eq!(&String::from_utf8(by_map).unwrap(), &expected);
            let by_value = write_claims(&map, 10, 20, JTI).unwrap();
            prop_assert_eq!(String::from_utf8(by_value).unwrap(), expected);
        }

        #[test]
        fn decode_never_panics_on_arbitrary_strings(s in ".{0,400}") {
            let (codec, _) = valid_token();
            let _ = codec.decode_at(&s, SALT, NOW);
        }

        #[test]
        fn decode_never_panics_on_five_part_base64ish(
            parts in proptest::collection::vec("[A-Za-z0-9_=+/-]{0,120}", 5)
        ) {
            let (codec, _) = valid_token();
            let token = parts.join(".");
            prop_assert!(codec.decode_at(&token, SALT, NOW).is_err());
        }

        #[test]
        fn decode_never_panics_on_header_variants(
            header in r#"\{("(alg|enc|kid|zip|crit)":("dir"|"A256CBC-HS512"|"A256GCM"|null|1|\[\]|\{\}),?){0,5}\}"#,
            rest in proptest::collection::vec("[A-Za-z0-9_-]{0,60}", 4)
        ) {
            let (codec, _) = valid_token();
            let token = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), rest.join("."));
            prop_assert!(codec.decode_at(&token, SALT, NOW).is_err());
        }

        #[test]
        fn single_byte_corruption_is_always_rejected(
            index in any::<prop::sample::Index>(),
            replacement in prop::sample::select(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ~".to_vec()
            ),
            gcm in any::<bool>(),
        ) {
            let (codec, token) = valid_token();
            // Or an A256GCM token, valid now (the other is valid at NOW).
            let (token, at) = if gcm {
                (codec.encode_serializable(&sample(), SALT, 3600, Enc::A256Gcm).unwrap(), unix_now())
            } else {
                (token, NOW)
            };
            prop_assert!(codec.decode_at(&token, SALT, at).is_ok());
            let mut bytes = token.into_bytes();
            let i = index.index(bytes.len());
            prop_assume!(bytes[i] != replacement);
            bytes[i] = replacement;
            let corrupted = String::from_utf8(bytes).unwrap();
            prop_assert!(codec.decode_at(&corrupted, SALT, at).is_err(), "accepted {}", corrupted);
        }
    }
}
