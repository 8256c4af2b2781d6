//! Email addresses as authcore accepts them: one normaliser for magic-link addresses,
//! passkey registrations and OAuth profiles (public as `providers::email::normalize_email`).

use unicode_normalization::UnicodeNormalization;

/// Why an email address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidEmail {
    /// No address given.
    #[error("Missing email from request body.")]
    Missing,
    /// Not `local@domain`.
    #[error("Invalid email address format.")]
    Format,
}

/// Longest address accepted (RFC 5321 path limit, 256 octets including `<` `>`).
pub const MAX_EMAIL_LEN: usize = 254;

/// Auth.js default normaliser (`defaultNormalizer` in `lib/actions/signin/send-token.ts`):
/// NFKC, lower case, trimmed; exactly one `@` with non-empty parts and no `"`; the domain is
/// cut at the first `,`.
///
/// Stricter than Auth.js: control characters (CR/LF header injection), format characters
/// (Unicode category Cf: zero-width spaces and joiners, bidi controls — invisible, they
/// would make a second account look like the first), inner whitespace, `<`/`>`, and
/// addresses longer than [`MAX_EMAIL_LEN`] (or a local part over 64) are refused. The same
/// normaliser applies to magic-link addresses, passkey registrations and OAuth profiles.
///
/// ```
/// use authcore::providers::email::normalize_email;
/// assert_eq!(normalize_email(" Foo@Example.com ").unwrap(), "foo@example.com");
/// assert_eq!(normalize_email("foo@example.com,evil.com").unwrap(), "foo@example.com");
/// assert!(normalize_email("foo@evil.com@example.com").is_err());
/// ```
pub fn normalize_email(input: &str) -> Result<String, InvalidEmail> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};
    if input.is_empty() {
        return Err(InvalidEmail::Missing);
    }
    // NFKC can grow a string up to 18×; bound the work before normalising.
    if input.len() > 4 * MAX_EMAIL_LEN {
        return Err(InvalidEmail::Format);
    }
    let s = fold_case(input);
    let s = s.trim();
    if s.is_empty() {
        return Err(InvalidEmail::Missing);
    }
    if s.len() > MAX_EMAIL_LEN
        || s.chars().any(|c| {
            matches!(c, '"' | '<' | '>')
                || c.is_control()
                || c.is_whitespace()
                || c.general_category() == GeneralCategory::Format
        })
    {
        return Err(InvalidEmail::Format);
    }
    let parts: Vec<&str> = s.split('@').collect();
    let [local, domain] = parts.as_slice() else {
        return Err(InvalidEmail::Format);
    };
    let domain = domain.split(',').next().unwrap_or_default();
    if local.is_empty() || local.len() > 64 || domain.is_empty() {
        return Err(InvalidEmail::Format);
    }
    let out = format!("{local}@{domain}");
    // Normalising an accepted address again must give it back, so that every spelling of
    // one address finds the same user; the few strings whose folding is not yet stable
    // after one round are refused rather than stored in a form that changes later.
    if fold_case(&out) != out {
        return Err(InvalidEmail::Format);
    }
    Ok(out)
}

/// NFKC, lower case, NFKC again: lower-casing can leave a sequence that NFKC composes
/// (`"Y\u{30a}"` → `"y\u{30a}"` → `"\u{1e99}"`), so one NFKC before it is not enough.
fn fold_case(s: &str) -> String {
    s.nfkc().collect::<String>().to_lowercase().nfkc().collect()
}

/// An address for log lines and `Debug`: the first character of the local part and the
/// domain (`j***@example.com`), so a log reader cannot collect whole addresses.
#[cfg_attr(not(feature = "email"), allow(dead_code))]
pub(crate) fn masked(address: &str) -> String {
    match address.rsplit_once('@') {
        Some((local, domain)) => {
            let first = local.chars().next().map(String::from).unwrap_or_default();
            format!("{first}***@{domain}")
        }
        None => "***".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normaliser_cases_from_authjs() {
        assert_eq!(
            normalize_email("Foo@Example.com").unwrap(),
            "foo@example.com"
        );
        assert_eq!(
            normalize_email("  foo@example.com  ").unwrap(),
            "foo@example.com"
        );
        assert_eq!(
            normalize_email("foo@example.com,evil.com").unwrap(),
            "foo@example.com"
        );
        assert_eq!(normalize_email(""), Err(InvalidEmail::Missing));
        assert_eq!(normalize_email("   "), Err(InvalidEmail::Missing));
        // Invisible format characters (Cf) would make a look-alike second account.
        for bad in [
            "demo@example.com\u{200b}",
            "de\u{200d}mo@example.com",
            "demo@exa\u{2060}mple.com",
            "\u{feff}demo@example.com",
            "demo@example.com\u{202e}",
            "demo\u{ad}@example.com",
        ] {
            assert_eq!(normalize_email(bad), Err(InvalidEmail::Format), "{bad:?}");
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        let long_total = format!("a@{}.com", "b".repeat(250));
        let huge = "x".repeat(1 << 20);
        for bad in [long_local.as_str(), long_total.as_str(), huge.as_str()] {
            assert_eq!(normalize_email(bad), Err(InvalidEmail::Format));
        }
        assert!(normalize_email(&format!("{}@example.com", "a".repeat(64))).is_ok());
        // Found by fuzzing (fuzz/regressions/email_normalise): both spellings of one
        // address normalise to one string, which normalises to itself.
        for (input, want) in [
            ("Y\u{30a}@A", "\u{1e99}@a"),
            ("y\u{30a}@a", "\u{1e99}@a"),
            ("\u{1e99}@a", "\u{1e99}@a"),
            (
                "\u{212b}ngstr\u{f6}m@EXAMPLE.com",
                "\u{e5}ngstr\u{f6}m@example.com",
            ),
        ] {
            let out = normalize_email(input).unwrap();
            assert_eq!(out, want, "{input:?}");
            assert_eq!(normalize_email(&out).unwrap(), out);
        }
        for bad in [
            "\"foo@evil.com\"@example.com",
            "foo@evil.com@example.com",
            "foo\u{FF20}evil.com@example.com",
            "foo\u{FE6B}evil.com@example.com",
            "nodomain@",
            "@nolocal",
            "plain",
            "foo@example.com\r\nBcc: victim@example.com",
            "foo\n@example.com",
            "foo bar@example.com",
            "<foo@example.com>",
            "foo\u{0}@example.com",
        ] {
            assert_eq!(normalize_email(bad), Err(InvalidEmail::Format), "{bad}");
        }
    }
}
