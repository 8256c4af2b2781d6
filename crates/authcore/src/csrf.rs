//! CSRF double-submit cookie (Auth.js `lib/actions/callback/oauth/csrf-token.ts`).
//!
//! Cookie value = `token|sha256hex(token + secret)`; a POST is verified when the cookie's hash
//! checks out and the body's `csrfToken` equals the cookie's token. Comparisons are constant time.

use crate::random;

/// The cookie value Auth.js writes for `token`: `token|sha256hex(token + secret_string)`.
///
/// `secret_string` is the configured secret coerced to a JavaScript string: a list of
/// secrets is comma-joined, as in Auth.js `createCSRFToken`
/// (`lib/actions/callback/oauth/csrf-token.ts`), which keeps cookies interchangeable with it.
///
/// ```
/// let v = authcore::csrf::csrf_cookie_value("ab", "secret");
/// assert!(v.starts_with("ab|") && v.len() == 3 + 64);
/// ```
pub fn csrf_cookie_value(token: &str, secret_string: &str) -> String {
    let mut out = String::with_capacity(token.len() + 65);
    out.push_str(token);
    out.push('|');
    push_hash_hex(&mut out, token, secret_string);
    out
}

fn push_hash_hex(out: &mut String, token: &str, secret_string: &str) {
    let mut h = crate::crypto::Sha256::new();
    h.update(token.as_bytes());
    h.update(secret_string.as_bytes());
    crate::random::push_hex(out, &h.finish());
}

/// Outcome of the CSRF step of request initialisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CsrfState {
    /// The token forms must echo back.
    pub token: String,
    /// A new cookie value to set, when the request had no valid cookie.
    pub new_cookie: Option<String>,
    /// Whether this POST carried the matching token.
    pub verified: bool,
}

/// Validates the request's CSRF cookie or mints a new token (Auth.js `createCSRFToken`).
pub(crate) fn check_or_create(
    cookie_value: Option<&str>,
    secret_string: &str,
    is_post: bool,
    body_token: Option<&str>,
) -> CsrfState {
    // `split("|")` then the first two parts, as Auth.js: `token|hash|anything` is valid.
    let parts = cookie_value.map(|v| {
        let mut parts = v.split('|');
        (parts.next().unwrap_or_default(), parts.next())
    });
    if let Some((token, Some(hash))) = parts {
        let mut expected = String::with_capacity(64);
        push_hash_hex(&mut expected, token, secret_string);
        if crate::crypto::ct_eq(expected.as_bytes(), hash.as_bytes()) {
            let verified = is_post
                && body_token.is_some_and(|b| crate::crypto::ct_eq(b.as_bytes(), token.as_bytes()));
            return CsrfState {
                token: token.to_owned(),
                new_cookie: None,
                verified,
            };
        }
    }
    let token = random::hex_token::<32>();
    let cookie = csrf_cookie_value(&token, secret_string);
    CsrfState {
        token,
        new_cookie: Some(cookie),
        verified: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Vectors {
        csrf_cookies: Vec<CsrfVector>,
    }
    #[derive(serde::Deserialize)]
    struct CsrfVector {
        secret: String,
        token: String,
        cookie_value: String,
        set_cookie_value: String,
    }

    #[test]
    fn authjs_vectors() {
        let v: Vectors =
            serde_json::from_str(include_str!("../testdata/authjs-jwt-vectors.json")).unwrap();
        assert!(!v.csrf_cookies.is_empty());
        for c in v.csrf_cookies {
            let value = csrf_cookie_value(&c.token, &c.secret);
            assert_eq!(value, c.cookie_value);
            assert_eq!(
                crate::cookies::encode_uri_component(&value),
                c.set_cookie_value
            );
            let st = check_or_create(Some(&value), &c.secret, true, Some(&c.token));
            assert_eq!(st.token, c.token);
            assert!(st.verified && st.new_cookie.is_none());
        }
    }

    #[test]
    fn verification_rules() {
        let v = csrf_cookie_value("tok", "s");
        // GET never verifies, but reuses the token.
        let st = check_or_create(Some(&v), "s", false, Some("tok"));
        assert!(!st.verified && st.new_cookie.is_none() && st.token == "tok");
        // Wrong body token.
        assert!(!check_or_create(Some(&v), "s", true, Some("tok2")).verified);
        assert!(!check_or_create(Some(&v), "s", true, None).verified);
        // Tampered hash or other secret → new token, not verified.
        for bad in [
            "tok|0000",
            "tok",
            "",
            "|",
            "tok|",
            &csrf_cookie_value("tok", "other"),
        ] {
            let st = check_or_create(Some(bad), "s", true, Some("tok"));
            assert!(!st.verified, "{bad}");
            assert_eq!(st.token.len(), 64);
            assert!(
                st.token
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert_eq!(st.new_cookie, Some(csrf_cookie_value(&st.token, "s")));
        }
        // Auth.js takes the first two parts of `split("|")`: trailing parts are ignored.
        let st = check_or_create(Some(&format!("{v}|extra")), "s", true, Some("tok"));
        assert!(st.verified && st.new_cookie.is_none() && st.token == "tok");
        // A list of secrets hashes with the comma-joined string.
        assert!(
            check_or_create(Some(&csrf_cookie_value("t", "a,b")), "a,b", true, Some("t")).verified
        );
    }
}
