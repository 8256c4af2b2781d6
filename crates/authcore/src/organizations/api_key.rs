//! The form of API keys: `ak_<id>_<secret>`, the id 24 hex digits (the visible part,
//! stored as it is), the secret 32 random bytes in base64url (stored as its SHA-256: a
//! secret of that entropy needs no slow hash, as for GitHub's tokens).

use std::fmt;

/// What every API key starts with (so that secret scanners and people recognise one).
pub const API_KEY_PREFIX: &str = "ak_";

/// The longest string taken for a key: anything longer is not one.
const MAX_KEY: usize = 128;

/// A new API key, to be shown once: its full text never comes back.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeySecret(String);

impl ApiKeySecret {
    /// The key's text, to hand to the user once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKeySecret([redacted])")
    }
}

/// A new key: its id, its full text, and the hash to store.
pub(crate) fn new_key() -> (String, ApiKeySecret, String) {
    let id = crate::random::hex_token::<12>();
    let secret = crate::random::b64url_token::<32>();
    let hash = hash_secret(&secret);
    (
        id.clone(),
        ApiKeySecret(format!("{API_KEY_PREFIX}{id}_{secret}")),
        hash,
    )
}

/// The stored form of a key's secret part.
pub(crate) fn hash_secret(secret: &str) -> String {
    crate::crypto::sha256_hex(format!("authcore-api-key:{secret}").as_bytes())
}

/// Whether an `Authorization` value is a bearer API key of this form; its text if so.
pub(crate) fn bearer_key(authorization: &str) -> Option<&str> {
    let (scheme, rest) = authorization.trim().split_once(' ')?;
    let rest = rest.trim();
    (scheme.eq_ignore_ascii_case("bearer") && rest.starts_with(API_KEY_PREFIX)).then_some(rest)
}

/// A key's id and secret part, if `text` has the form of a key.
pub(crate) fn parse_key(text: &str) -> Option<(&str, &str)> {
    if text.len() > MAX_KEY {
        return None;
    }
    let (id, secret) = text.strip_prefix(API_KEY_PREFIX)?.split_once('_')?;
    let id_ok = id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit());
    let secret_ok = (32..=64).contains(&secret.len())
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (id_ok && secret_ok).then_some((id, secret))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_new_key_parses_back_to_its_id_and_hash() {
        let (id, key, hash) = new_key();
        let (parsed, secret) = parse_key(key.expose()).unwrap();
        assert_eq!(parsed, id);
        assert_eq!(hash_secret(secret), hash);
        assert!(!format!("{key:?}").contains(secret));
        assert_ne!(new_key().1, key);
    }

    #[test]
    fn bearer_keys_are_recognised_in_any_case_of_the_scheme() {
        for (header, want) in [
            ("Bearer ak_x", Some("ak_x")),
            ("bearer   ak_x ", Some("ak_x")),
            ("BEARER ak_x", Some("ak_x")),
            ("Bearer eyJhbGciOi", None),
            ("Basic ak_x", None),
            ("ak_x", None),
            ("", None),
        ] {
            assert_eq!(bearer_key(header), want, "{header:?}");
        }
    }

    #[test]
    fn what_is_not_a_key() {
        let (_, key, _) = new_key();
        let text = key.expose();
        for bad in [
            "",
            "ak_",
            "Bearer x",
            &text[3..],
            &text.replacen("ak_", "AK_", 1),
            &format!("{text}{}", "a".repeat(100)),
            "ak_0123456789abcdef01234567_short",
            "ak_0123456789abcdef0123456z_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "ak_0123456789abcdef01234567_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%",
            "ak_0123456789abcdef01234567_aaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(parse_key(bad), None, "{bad}");
        }
    }
}
