//! TOTP (RFC 6238) over `totp-rs`: 160-bit secrets (RFC 4226 §4), 6 digits, 30-second
//! steps, one step of tolerance either way (RFC 6238 §5.2), and the enrolment a user's
//! authenticator app reads: the `otpauth://` URI (Google Authenticator's key URI format) as
//! text and as a QR code drawn here as SVG. Pure functions: the caller keeps the secret
//! sealed at rest and refuses a step used before (RFC 6238 §5.2: "the verifier MUST NOT
//! accept the second attempt of the OTP after the successful validation").

use totp_rs::{Algorithm, Builder, Secret, Totp, TotpError};

/// Bytes of a TOTP secret: 160 bits, as RFC 4226 §4 recommends.
pub(crate) const SECRET_BYTES: usize = 20;

/// Seconds of a step.
pub(crate) const STEP_SECS: u64 = 30;

/// A fresh secret from the OS CSPRNG.
pub(crate) fn new_secret() -> [u8; SECRET_BYTES] {
    crate::random::bytes::<SECRET_BYTES>()
}

/// The `Totp` of `secret`, labelled for an authenticator app when `label` is given
/// (issuer, account name; `:` is not allowed in either and is replaced).
fn totp(secret: &[u8], label: Option<(&str, &str)>) -> Result<Totp, TotpError> {
    let mut b = Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_skew(1)
        .with_step_duration(STEP_SECS)
        .with_secret(secret.to_vec());
    if let Some((issuer, account)) = label {
        b = b
            .with_issuer(Some(issuer.replace(':', " ")))
            .with_account_name(account.replace(':', " "));
    }
    b.build()
}

/// The step a code of `secret` is valid for at `now_unix` (one step of tolerance either
/// way), or `None`: a wrong, malformed or out-of-window code. Spaces in the code are
/// ignored (apps show `123 456`). Compared in constant time by `totp-rs`.
pub(crate) fn check(secret: &[u8], code: &str, now_unix: u64) -> Option<u64> {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    totp(secret, None).ok()?.check(&code, now_unix)
}

/// The code of `secret` at `unix` (tests, and the demo's enrolment check).
#[cfg(test)]
pub(crate) fn code_at(secret: &[u8], unix: u64) -> String {
    totp(secret, None)
        .map(|t| t.generate(unix).to_string())
        .unwrap_or_default()
}

/// What a user needs to add the secret to an authenticator app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpEnrolment {
    /// The secret in base32, for typing into the app.
    pub secret: String,
    /// The `otpauth://totp/…` URI (issuer, account, secret).
    pub uri: String,
    /// The URI as a QR code: an inline SVG element (no XML declaration), drawn here.
    pub qr_svg: String,
}

/// The enrolment of `secret` for `account` at `issuer`.
pub(crate) fn enrolment(
    secret: &[u8],
    issuer: &str,
    account: &str,
) -> Result<TotpEnrolment, TotpError> {
    let t = totp(secret, Some((issuer, account)))?;
    let uri = t.to_url()?;
    Ok(TotpEnrolment {
        secret: Secret::from(secret.to_vec()).to_base32(),
        qr_svg: qr_svg(&uri),
        uri,
    })
}

/// `text` as a QR code, an `<svg>` element (empty if the text is too long for one).
fn qr_svg(text: &str) -> String {
    let Ok(code) = qrcode::QrCode::with_error_correction_level(text, qrcode::EcLevel::M) else {
        return String::new();
    };
    let svg = code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build();
    // Inline in HTML: without the XML declaration.
    match svg.find("<svg") {
        Some(at) => svg[at..].to_owned(),
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// RFC 6238 Appendix B, SHA-1 rows (the 8-digit values' last 6 digits).
    #[test]
    fn rfc_6238_test_vectors() {
        let secret = b"12345678901234567890";
        for (time, code) in [
            (59, "287082"),
            (1_111_111_109, "081804"),
            (1_111_111_111, "050471"),
            (1_234_567_890, "005924"),
            (2_000_000_000, "279037"),
        ] {
            assert_eq!(code_at(secret, time), code, "T = {time}");
            assert_eq!(check(secret, code, time), Some(time / 30), "T = {time}");
        }
    }

    #[test]
    fn one_step_of_tolerance_either_way() {
        let secret = new_secret();
        let now = 1_800_000_015;
        let step = now / STEP_SECS;
        for (offset, accepted) in [
            (-60i64, false),
            (-30, true),
            (0, true),
            (30, true),
            (60, false),
        ] {
            let at = now.checked_add_signed(offset).unwrap();
            let code = code_at(&secret, at);
            let got = check(&secret, &code, now);
            if accepted {
                assert_eq!(got, Some(at / STEP_SECS), "offset {offset}");
            } else if got.is_some() {
                // A code of a step outside the window can collide with one inside it.
                assert_ne!(got, Some(at / STEP_SECS), "offset {offset}");
            }
        }
        assert_eq!(check(&secret, &code_at(&secret, now), now), Some(step));
    }

    #[test]
    fn malformed_codes_are_refused() {
        let secret = new_secret();
        let now = 1_800_000_000;
        let code = code_at(&secret, now);
        let spaced = format!("{} {}", &code[..3], &code[3..]);
        assert!(check(&secret, &spaced, now).is_some());
        for bad in [
            "",
            "12345",
            "1234567",
            "12345a",
            "１２３４５６",
            "-12345",
            &format!("{code}0"),
        ] {
            assert_eq!(check(&secret, bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn enrolment_uri_and_qr_code() {
        let secret = [7u8; SECRET_BYTES];
        let e = enrolment(&secret, "Example: App", "ada@example.com").unwrap();
        assert_eq!(e.secret, "A4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYH");
        assert!(e.uri.starts_with("otpauth://totp/"), "{}", e.uri);
        assert!(
            e.uri.contains("secret=A4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYH"),
            "{}",
            e.uri
        );
        assert!(e.uri.contains("issuer=Example"), "{}", e.uri);
        assert!(e.qr_svg.starts_with("<svg"), "{}", &e.qr_svg[..40]);
        assert!(e.qr_svg.ends_with("</svg>"));
        assert!(!e.qr_svg.contains("<?xml"));
    }
}
