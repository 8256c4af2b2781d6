//! Writes the seed corpora under `fuzz/corpus/<target>/` (a few valid inputs per target;
//! session cookies and tokens made with authcore's own encoder, ID tokens signed with the
//! fuzz targets' fixed keys).
//!
//! ```sh
//! cd fuzz && cargo run --release --example gen_seeds
//! ```
//!
//! (An ordinary build, not instrumented; it shares no artefacts with the fuzz build.)
//! Tokens carry the real clock (valid for ten years) and a random IV, so the files differ on
//! every run: run it only to refresh or extend the seeds.

use std::fs;
use std::path::{Path, PathBuf};

use authcore::jose::{DerivedKey, Enc};
use authcore::serde_json::json;
use authcore_fuzz::{SECRET, SESSION_COOKIE, request_auth, valid_csrf_cookie};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer as _, SigningKey};

const TEN_YEARS: u64 = 10 * 365 * 24 * 3600;

fn corpus(target: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    fs::create_dir_all(&dir).expect("create corpus dir");
    dir
}

fn write(target: &str, name: &str, bytes: impl AsRef<[u8]>) {
    fs::write(corpus(target).join(name), bytes).expect("write seed");
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn sign_ed(header: &str, claims: &str) -> String {
    let key = SigningKey::from_bytes(&[0x42; 32]);
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let sig = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
}

fn main() {
    let auth = request_auth();
    let claims = json!({"name": "Ada Lovelace", "email": "ada@example.com", "sub": "1"});
    let claims = claims.as_object().cloned().unwrap_or_default();
    let jwt = auth.config().jwt();
    let session = jwt
        .encode(&claims, SESSION_COOKIE, TEN_YEARS)
        .expect("encode");
    let csrf = valid_csrf_cookie();

    // request: one flag byte + an HTTP/1.1 request.
    let req = |flags: u8, text: &str| cat(&[&[flags], text.as_bytes()]);
    write(
        "request",
        "providers",
        req(0, "GET /auth/providers HTTP/1.1\r\n\r\n"),
    );
    write(
        "request",
        "csrf",
        req(
            0,
            "GET /auth/csrf HTTP/1.1\r\nHost: localhost:3000\r\nAccept: application/json\r\n\r\n",
        ),
    );
    write(
        "request",
        "session_cookie",
        req(
            0,
            &format!(
                "GET /auth/session HTTP/1.1\r\nHost: localhost:3000\r\nCookie: authjs.session-token={session}; authjs.csrf-token={csrf}\r\n\r\n"
            ),
        ),
    );
    write(
        "request",
        "session_chunked_flag",
        req(4 | 8, "GET /auth/session HTTP/1.1\r\n\r\n"),
    );
    write(
        "request",
        "credentials_callback",
        req(
            1 | 2,
            "POST /auth/callback/credentials HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/x-www-form-urlencoded\r\nOrigin: http://localhost:3000\r\n\r\ncallbackUrl=%2Fdashboard&json=true",
        ),
    );
    write(
        "request",
        "signin_oidc_json",
        req(
            1 | 16,
            "POST /auth/signin/oidc HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/json\r\n\r\n{\"callbackUrl\":\"http://localhost:3000/after\"}",
        ),
    );
    write(
        "request",
        "signout",
        req(
            1 | 4,
            "POST /auth/signout HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\ncallbackUrl=%2Fbye",
        ),
    );
    write(
        "request",
        "signin_page_forwarded",
        req(
            0,
            "GET https://localhost:3000/auth/signin?callbackUrl=%2Fdashboard&error=CredentialsSignin HTTP/1.1\r\nX-Forwarded-Host: auth.example.com\r\nX-Forwarded-Proto: https\r\n\r\n",
        ),
    );
    write(
        "request",
        "oidc_callback",
        req(
            0,
            "GET /auth/callback/oidc?code=abc&state=xyz&iss=https%3A%2F%2Fissuer.example HTTP/1.1\r\nCookie: authjs.pkce.code_verifier=v; authjs.state=s; authjs.nonce=n\r\n\r\n",
        ),
    );
    write(
        "request",
        "error_page",
        req(0, "GET /auth/error?error=AccessDenied HTTP/1.1\r\n\r\n"),
    );
    write(
        "request",
        "verify_request",
        req(
            0,
            "GET /auth/verify-request?provider=email&type=email HTTP/1.1\r\n\r\n",
        ),
    );

    // cookies: 16 parameter bytes + Cookie header lines.
    let params = |flags: u8, order: u8, per: u8, cuts: [u8; 8], gaps: [u8; 4], junk: u8| {
        let mut p = vec![flags, order, per];
        p.extend_from_slice(&cuts);
        p.extend_from_slice(&gaps);
        p.push(junk);
        p
    };
    write(
        "cookies",
        "real_session",
        cat(&[
            &params(0, 0, 0, [0; 8], [0; 4], 0),
            format!("authjs.session-token={session}; authjs.csrf-token={csrf}; authjs.callback-url=http%3A%2F%2Flocalhost%3A3000%2F").as_bytes(),
        ]),
    );
    let (a, b) = session.split_at(session.len() / 2);
    write(
        "cookies",
        "real_session_chunked",
        cat(&[
            &params(0, 0, 0, [0; 8], [0; 4], 0),
            format!("authjs.session-token.1={b}\nauthjs.session-token.0={a}; theme=dark")
                .as_bytes(),
        ]),
    );
    write(
        "cookies",
        "chunk_small",
        params(1, 7, 1, [64, 128, 0, 0, 0, 0, 0, 0], [0; 4], 2),
    );
    write(
        "cookies",
        "chunk_big_refresh",
        params(
            1 | 2 | 8,
            3,
            2,
            [10, 90, 170, 250, 0, 0, 0, 0],
            [1, 2, 3, 1],
            3,
        ),
    );
    write(
        "cookies",
        "chunk_secure_refresh",
        params(
            1 | 4 | 8,
            200,
            3,
            [33, 99, 0, 0, 0, 0, 0, 0],
            [5, 0, 0, 0],
            0,
        ),
    );
    write(
        "cookies",
        "encoded_values",
        cat(&[
            &params(0, 0, 0, [0; 8], [0; 4], 0),
            b"a=%E2%9C%93; b=\"quoted\"; c=%zz; =empty; d\n e = spaced ; a=dup",
        ]),
    );

    // jwt_decode: mode byte + payload.
    let old =
        authcore::jwt::JwtCodec::new(&["an-older-fuzz-secret-that-still-decodes"]).expect("codec");
    let old_token = old
        .encode(&claims, SESSION_COOKIE, TEN_YEARS)
        .expect("encode");
    write(
        "jwt_decode",
        "session_token",
        cat(&[&[0], session.as_bytes()]),
    );
    write(
        "jwt_decode",
        "rotated_secret_token",
        cat(&[&[0], old_token.as_bytes()]),
    );
    write(
        "jwt_decode",
        "plaintext_claims",
        cat(&[
            &[1],
            br#"{"name":"Ada","sub":"1","exp":1800000100,"nbf":1799999990}"#,
        ]),
    );
    let kid = DerivedKey::derive(SECRET.as_bytes(), SESSION_COOKIE, Enc::A256Gcm)
        .kid()
        .to_owned();
    write(
        "jwt_decode",
        "gcm_header_kid",
        cat(&[
            &[2],
            format!(r#"{{"alg":"dir","enc":"A256GCM","kid":"{kid}"}}"#).as_bytes(),
            &[0xFF],
            br#"{"sub":"1"}"#,
        ]),
    );
    write(
        "jwt_decode",
        "gcm_header_plain",
        cat(&[
            &[2],
            br#"{"alg":"dir","enc":"A256GCM"}"#,
            &[0xFF],
            br#"{"sub":"1"}"#,
        ]),
    );
    write(
        "jwt_decode",
        "roundtrip_claims",
        cat(&[
            &[3, 37],
            br#"{"name":"Ada","email":"ada@example.com","picture":null,"n":1.5,"list":[1,"a"]}"#,
        ]),
    );

    // callback_url: [scenario] [flags] [base] url.
    let cb = |scenario: u8, flags: u8, base: u8, url: &str| {
        cat(&[&[scenario, flags, base], url.as_bytes()])
    };
    write(
        "callback_url",
        "credentials_relative",
        cb(2, 2 | 16, 0, "/dashboard"),
    );
    write(
        "callback_url",
        "signout_absolute",
        cb(3, 2 | 8 | 16, 0, "http://localhost:3000/bye?x=1#top"),
    );
    write(
        "callback_url",
        "signin_page_evil",
        cb(0, 1, 1, "https://evil.example/phish"),
    );
    write(
        "callback_url",
        "oidc_signin",
        cb(6, 2 | 16, 0, "/after-oidc"),
    );
    write(
        "callback_url",
        "cookie_protocol_relative",
        cb(5, 4, 0, "//evil.example/"),
    );
    write(
        "callback_url",
        "backslash",
        cb(1, 2 | 16, 0, "http://localhost:3000\\@evil.example/"),
    );
    write(
        "callback_url",
        "javascript",
        cb(7, 1, 2, "javascript:alert(document.cookie)"),
    );

    // oauth_responses: mode byte + 0xFF-separated parts.
    let x = URL_SAFE_NO_PAD.encode(
        SigningKey::from_bytes(&[0x42; 32])
            .verifying_key()
            .to_bytes(),
    );
    let jwks = json!({"keys": [
        {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "ed-1", "alg": "EdDSA", "use": "sig"},
        {"kty": "EC", "crv": "P-256", "kid": "ec-1",
         "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
        {"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "e": "AQAB",
         "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"},
        {"kty": "oct", "k": "c2VjcmV0", "kid": "sym"}
    ]})
    .to_string();
    let claims_ok = r#"{"iss":"https://idp.example","sub":"user-1","aud":"client-123","exp":4102444800,"iat":1700000000,"name":"Ada Lovelace","email":"Ada@Example.com"}"#;
    let id_token = sign_ed(r#"{"alg":"EdDSA","kid":"ed-1"}"#, claims_ok);
    write(
        "oauth_responses",
        "jwks_and_token",
        cat(&[&[0], jwks.as_bytes(), &[0xFF], id_token.as_bytes()]),
    );
    write(
        "oauth_responses",
        "signed_id_token",
        cat(&[&[1], id_token.as_bytes()]),
    );
    let claims_now = r#"{"iss":"https://idp.example","sub":"user-1","aud":["client-123","other"],"azp":"client-123","exp":1800000600,"iat":1800000000,"nonce":"n-0S6_WzA2Mj"}"#;
    write(
        "oauth_responses",
        "sign_eddsa",
        cat(&[
            &[2],
            br#"{"alg":"EdDSA","kid":"ed-1"}"#,
            &[0xFF],
            claims_now.as_bytes(),
        ]),
    );
    write(
        "oauth_responses",
        "sign_hs256",
        cat(&[
            &[2],
            br#"{"alg":"HS256","typ":"JWT"}"#,
            &[0xFF],
            claims_now.as_bytes(),
            b" ",
        ]),
    );
    let token_resp = br#"{"access_token":"at-123","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"openid email"}"#;
    let userinfo = br#"{"id":"42","sub":"user-1","name":"Ada Lovelace","email":"ada@example.com","picture":"https://idp.example/a.png"}"#;
    let discovery = br#"{"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/authorize","token_endpoint":"https://idp.example/token","userinfo_endpoint":"https://idp.example/userinfo","jwks_uri":"https://idp.example/jwks","id_token_signing_alg_values_supported":["EdDSA"]}"#;
    let callback = |flags: u8, jwks: &[u8], query: &[u8]| {
        cat(&[
            &[3, flags, 0, 200],
            token_resp,
            &[0xFF],
            userinfo,
            &[0xFF],
            jwks,
            &[0xFF],
            claims_ok.as_bytes(),
            &[0xFF],
            discovery,
            &[0xFF],
            query,
        ])
    };
    write("oauth_responses", "callback_oauth2", callback(0, b"", b""));
    write(
        "oauth_responses",
        "callback_oidc_hs256",
        callback(1 | 4, b"", b""),
    );
    write(
        "oauth_responses",
        "callback_oidc_eddsa",
        callback(2 | 4, jwks.as_bytes(), b""),
    );
    write(
        "oauth_responses",
        "callback_oidc_discovery",
        callback(3 | 4, b"", b"iss=https%3A%2F%2Fidp.example"),
    );
    write(
        "oauth_responses",
        "callback_oauth2_checks",
        callback(16, b"", b""),
    );
    write(
        "oauth_responses",
        "callback_oidc_hs256_checks",
        callback(1 | 4 | 16, b"", b""),
    );
    write(
        "oauth_responses",
        "callback_oidc_eddsa_checks_wrong_provider",
        callback(2 | 4 | 16 | 32, b"", b""),
    );
    write(
        "oauth_responses",
        "callback_oidc_discovery_checks_state_twice",
        callback(3 | 4 | 16, b"", b"state=other"),
    );
    write(
        "oauth_responses",
        "callback_token_error",
        cat(&[
            &[3, 0, 0, 200],
            br#"{"error":"invalid_grant","error_description":"expired code"}"#,
        ]),
    );

    // email_normalise.
    for (name, email) in [
        ("plain", "Ada.Lovelace@Example.COM"),
        ("spaces_comma", "  foo@example.com,evil.com "),
        (
            "fullwidth",
            "\u{ff46}\u{ff4f}\u{ff4f}\u{ff20}\u{ff45}\u{ff58}\u{ff41}\u{ff4d}\u{ff50}\u{ff4c}\u{ff45}.com",
        ),
        ("dotted_capital_i", "\u{130}stanbul@example.com"),
        ("quoted", "\"foo@evil.com\"@example.com"),
    ] {
        write("email_normalise", name, email);
    }

    // config_toml.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let example = fs::read(root.join("authcore.example.toml")).expect("authcore.example.toml");
    write("config_toml", "authcore_example", example);
    write(
        "config_toml",
        "providers",
        r##"[server]
addr = "127.0.0.1:3000"
database_url = "none"
log_format = "json"

[auth]
secret = "a long random string"
url = "https://auth.example.com/auth"
trust_host = true

[email]
smtp_url = "smtps://user:pass@smtp.example.com"
from = "Example <no-reply@example.com>"

[providers.github]
id = "Iv1.0123456789abcdef"
secret = "s"

[providers.keycloak]
id = "kc"
secret = "s"
issuer = "https://kc.example.com/realms/main"

[providers.oidc]
issuer = "https://login.example.com"
id = "x"
secret = "y"
name = "Example SSO"

[theme]
color_scheme = "dark"
brand_color = "#0b5ed7"
"##,
    );
    write(
        "config_toml",
        "unknown_key",
        "[auth]\ntrust_host = true\nsecrett = \"typo\"\n",
    );
    println!("seeds written under {}", corpus("").display());
}
