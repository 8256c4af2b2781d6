//! `Auth::get_token` / `get_raw_token` (Auth.js `getToken`, `jwt.ts`), including the cases
//! Auth.js's own tests check: malformed Bearer percent-encoding gives `None`.
#![allow(clippy::unwrap_used)]

use authcore::http::{HeaderMap, HeaderValue};
use authcore::providers::CredentialsProvider;
use authcore::serde_json::json;
use authcore::{Auth, AuthConfig, GetTokenOptions};

/// The options that read the `__Secure-` cookie or not (Auth.js `secureCookie`).
fn secure_cookie(secure: bool) -> GetTokenOptions {
    GetTokenOptions::new().secure_cookie(secure)
}

const SECRET: &str = "get-token-secret-xxxxxxxxxxxxxxx";
const SALT: &str = "authjs.session-token";

fn auth() -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .build()
            .unwrap(),
    )
}

fn token(auth: &Auth, salt: &str) -> String {
    let claims = json!({"sub": "42", "name": "Ada Lovelace", "email": "ada@example.com"});
    auth.config()
        .jwt()
        .encode(claims.as_object().unwrap(), salt, 3600)
        .unwrap()
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (name, value) in pairs {
        h.append(
            authcore::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    h
}

#[test]
fn malformed_bearer_percent_encoding_is_none_even_raw() {
    let auth = auth();
    for bad in ["%", "%A", "%ZZ"] {
        let h = headers(&[("authorization", &format!("Bearer {bad}"))]);
        assert_eq!(auth.get_token(&h, &secure_cookie(false)), None, "{bad}");
        assert_eq!(
            auth.get_raw_token(&h, &secure_cookie(false)),
            None,
            "raw {bad}"
        );
    }
}

#[test]
fn percent_encoded_bearer_token_decodes() {
    let auth = auth();
    let token = token(&auth, SALT);
    // Encode every character, as a client might: `encodeURIComponent` of a JWE is a no-op,
    // so force escapes to prove the value is decoded.
    let encoded: String = token.bytes().map(|b| format!("%{b:02X}")).collect();
    let h = headers(&[("authorization", &format!("Bearer {encoded}"))]);
    assert_eq!(
        auth.get_raw_token(&h, &secure_cookie(false)).as_deref(),
        Some(token.as_str())
    );
    let claims = auth.get_token(&h, &secure_cookie(false)).expect("decodes");
    assert_eq!(claims["sub"], "42");
    assert_eq!(claims["name"], "Ada Lovelace");
}

#[test]
fn no_token_or_other_schemes_are_none() {
    let auth = auth();
    assert_eq!(
        auth.get_token(&HeaderMap::new(), &secure_cookie(false)),
        None
    );
    let basic = headers(&[("authorization", "Basic dXNlcjpwYXNz")]);
    assert_eq!(auth.get_raw_token(&basic, &secure_cookie(false)), None);
    let other_cookie = headers(&[("cookie", "unrelated=1")]);
    assert_eq!(
        auth.get_raw_token(&other_cookie, &secure_cookie(false)),
        None
    );
}

#[test]
fn session_cookie_wins_over_bearer_and_secure_picks_the_prefixed_name() {
    let auth = auth();
    let plain = token(&auth, SALT);
    let secure = token(&auth, "__Secure-authjs.session-token");
    let h = headers(&[
        (
            "cookie",
            &format!("authjs.session-token={plain}; __Secure-authjs.session-token={secure}"),
        ),
        ("authorization", "Bearer not-this-one"),
    ]);
    assert_eq!(
        auth.get_raw_token(&h, &secure_cookie(false)).as_deref(),
        Some(plain.as_str())
    );
    assert_eq!(
        auth.get_raw_token(&h, &secure_cookie(true)).as_deref(),
        Some(secure.as_str())
    );
    assert!(auth.get_token(&h, &secure_cookie(false)).is_some());
    assert!(auth.get_token(&h, &secure_cookie(true)).is_some());
    // Each token is salted with its own cookie name.
    let swapped = headers(&[("cookie", &format!("__Secure-authjs.session-token={plain}"))]);
    assert_eq!(auth.get_token(&swapped, &secure_cookie(true)), None);
}

#[test]
fn chunked_session_cookie_is_reassembled() {
    let auth = auth();
    let token = token(&auth, SALT);
    let (a, b) = token.split_at(token.len() / 2);
    // Chunks arrive in any order; reassembly goes by index.
    let h = headers(&[(
        "cookie",
        &format!("authjs.session-token.1={b}; authjs.session-token.0={a}"),
    )]);
    assert_eq!(
        auth.get_raw_token(&h, &secure_cookie(false)).as_deref(),
        Some(token.as_str())
    );
    assert_eq!(
        auth.get_token(&h, &secure_cookie(false)).unwrap()["sub"],
        "42"
    );
}

#[test]
fn cookie_name_and_salt_options() {
    let auth = auth();
    let custom = token(&auth, "my-token");
    let h = headers(&[("cookie", &format!("my-token={custom}"))]);
    // Not found under the default name.
    assert_eq!(auth.get_token(&h, &secure_cookie(false)), None);
    // The salt follows the cookie name.
    let by_name = GetTokenOptions::new().cookie_name("my-token");
    assert_eq!(auth.get_token(&h, &by_name).unwrap()["sub"], "42");
    // An explicit salt overrides it.
    let salted = token(&auth, "another-salt");
    let h = headers(&[("cookie", &format!("my-token={salted}"))]);
    assert_eq!(auth.get_token(&h, &by_name), None);
    let with_salt = by_name.clone().salt("another-salt");
    assert_eq!(auth.get_token(&h, &with_salt).unwrap()["sub"], "42");
    assert_eq!(
        auth.get_raw_token(&h, &with_salt).as_deref(),
        Some(salted.as_str())
    );
}

#[test]
fn tampered_foreign_and_expired_tokens_are_none() {
    let auth = auth();
    let token = token(&auth, SALT);
    // Flip one character of the ciphertext (segment 4).
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let c = parts[3].pop().unwrap();
    parts[3].push(if c == 'A' { 'B' } else { 'A' });
    let tampered = parts.join(".");
    let h = headers(&[("authorization", &format!("Bearer {tampered}"))]);
    assert_eq!(auth.get_token(&h, &secure_cookie(false)), None);

    let foreign = Auth::new(
        AuthConfig::builder()
            .secret("some-other-secret-xxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .build()
            .unwrap(),
    );
    let h = headers(&[(
        "authorization",
        &format!("Bearer {}", self::token(&foreign, SALT)),
    )]);
    assert_eq!(auth.get_token(&h, &secure_cookie(false)), None);

    let expired = auth
        .config()
        .jwt()
        .encode_at(
            json!({"sub": "42"}).as_object().unwrap(),
            SALT,
            60,
            1_000_000_000,
        )
        .unwrap();
    let h = headers(&[("authorization", &format!("Bearer {expired}"))]);
    assert_eq!(auth.get_token(&h, &secure_cookie(false)), None);
    // Raw mode does not decode, so it returns the string as Auth.js does.
    assert_eq!(
        auth.get_raw_token(&h, &secure_cookie(false)).as_deref(),
        Some(expired.as_str())
    );
}
