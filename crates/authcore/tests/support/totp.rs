//! TOTP codes as an authenticator app computes them (RFC 6238 defaults: SHA-1, 6 digits,
//! 30 s), for the second-factor tests of every crate (included by path elsewhere).
#![allow(dead_code, clippy::unwrap_used)]

/// Seconds since the UNIX epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The TOTP code of the base32 `secret` at `unix`.
pub fn totp_code_at(secret: &str, unix: u64) -> String {
    totp_rs::Builder::new()
        .with_secret(totp_rs::Secret::try_from_base32(secret).unwrap())
        .build()
        .unwrap()
        .generate(unix)
        .to_string()
}
