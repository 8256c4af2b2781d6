//! `authcore::providers::email::normalize_email` on arbitrary strings.
//!
//! Properties checked on every accepted address: the documented shape (one `@`, non-empty
//! parts, local part ≤ 64, total ≤ 254, no `"` `<` `>`, controls or whitespace, no `,` in
//! the domain), that the output is accepted again, and idempotence (normalising the output
//! again gives the same output; fuzzing once found it broken, `regressions/email_normalise/`).

use authcore::providers::email::{InvalidEmail, MAX_EMAIL_LEN, normalize_email};

/// One fuzz input (the `fuzz_targets/email_normalise.rs` target and the regression test); not UTF-8: skipped, as libFuzzer does for a `&str` target.
pub fn run(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let out = match normalize_email(input) {
        Ok(out) => out,
        Err(InvalidEmail::Missing) => {
            // Only for an input that is empty, or blank once normalised.
            assert!(!input.contains('@'), "{input:?} reported as missing");
            return;
        }
        Err(_) => return,
    };
    assert!(out.len() <= MAX_EMAIL_LEN, "too long: {out:?}");
    let (local, domain) = out.split_once('@').expect("an @");
    assert!(!domain.contains('@'), "two @ in {out:?}");
    assert!(
        !local.is_empty() && local.len() <= 64,
        "bad local part in {out:?}"
    );
    assert!(
        !domain.is_empty() && !domain.contains(','),
        "bad domain in {out:?}"
    );
    assert!(
        !out.chars()
            .any(|c| matches!(c, '"' | '<' | '>') || c.is_control() || c.is_whitespace()),
        "forbidden character in {out:?}"
    );
    let again = normalize_email(&out).expect("a normalised address is valid");
    assert_eq!(again, out, "not idempotent for input {input:?}");
}
