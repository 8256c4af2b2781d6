//! Recovery codes: ten single-use codes of 80 random bits each, shown once as
//! `XXXX-XXXX-XXXX-XXXX` (base32, RFC 4648 alphabet), stored as the SHA-256 of their
//! normalised form. 80 bits make a stored hash useless to whoever reads the database (no
//! search over the codes is feasible), so no slow hash is needed.

/// How many codes a set has.
pub(crate) const CODES: usize = 10;

/// The RFC 4648 base32 alphabet.
const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// A fresh set: the codes to show and their hashes to store.
pub(crate) fn generate() -> (Vec<String>, Vec<String>) {
    let codes: Vec<String> = (0..CODES).map(|_| one_code()).collect();
    let hashes = codes.iter().map(|c| hash(c)).collect();
    (codes, hashes)
}

/// 16 base32 characters (80 bits) in four groups.
fn one_code() -> String {
    let bytes = crate::random::bytes::<16>();
    let mut out = String::with_capacity(19);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            out.push('-');
        }
        // 256 is a multiple of 32: each byte gives one unbiased character.
        out.push(char::from(ALPHABET[usize::from(b % 32)]));
    }
    out
}

/// The stored form of a code as a user types it: upper case, without spaces or dashes,
/// hashed (hex SHA-256). `None` for what cannot be a code.
pub(crate) fn hash_input(input: &str) -> Option<String> {
    let normal: String = input
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '\t'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (normal.len() == 16 && normal.bytes().all(|b| ALPHABET.contains(&b))).then(|| hash(&normal))
}

fn hash(code: &str) -> String {
    let normal: String = code.chars().filter(|c| *c != '-').collect();
    crate::crypto::sha256_hex(normal.as_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_set_is_ten_distinct_codes_with_their_hashes() {
        let (codes, hashes) = generate();
        assert_eq!(codes.len(), CODES);
        let distinct: std::collections::BTreeSet<_> = codes.iter().collect();
        assert_eq!(distinct.len(), CODES);
        for (code, h) in codes.iter().zip(&hashes) {
            assert_eq!(code.len(), 19, "{code}");
            assert_eq!(code.matches('-').count(), 3, "{code}");
            assert_eq!(hash_input(code).as_ref(), Some(h));
            assert_eq!(h.len(), 64);
            assert!(!h.contains(&code.replace('-', "")));
        }
    }

    #[test]
    fn typed_forms_of_one_code_hash_alike() {
        let (codes, hashes) = generate();
        let code = &codes[0];
        let bare = code.replace('-', "");
        for typed in [
            code.clone(),
            bare.clone(),
            bare.to_lowercase(),
            format!(" {} ", code.replace('-', " ")),
        ] {
            assert_eq!(hash_input(&typed).as_ref(), Some(&hashes[0]), "{typed:?}");
        }
        for bad in [
            "",
            "ABCD",
            &format!("{bare}A"),
            &bare.replace(&bare[..1], "1"),
            "ÄBCDEFGHIJKLMNOP",
        ] {
            if bad != bare {
                assert_ne!(hash_input(bad).as_ref(), Some(&hashes[0]), "{bad:?}");
            }
        }
        assert_eq!(hash_input("0000-0000-0000-0000"), None, "0 is not base32");
    }
}
