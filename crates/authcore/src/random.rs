//! Randomness from the OS CSPRNG.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// `N` random bytes. The OS CSPRNG failing is unrecoverable for an auth server.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut buf).expect("the OS random number generator failed");
    buf
}

/// `N` random bytes as lowercase hex (`2N` chars).
pub(crate) fn hex_token<const N: usize>() -> String {
    hex::encode(bytes::<N>())
}

/// `N` random bytes as unpadded base64url.
#[allow(dead_code)]
pub(crate) fn b64url_token<const N: usize>() -> String {
    URL_SAFE_NO_PAD.encode(bytes::<N>())
}

/// A random UUID v4 string.
pub(crate) fn uuid_v4() -> String {
    uuid::Builder::from_random_bytes(bytes::<16>())
        .into_uuid()
        .hyphenated()
        .to_string()
}
