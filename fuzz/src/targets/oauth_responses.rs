//! OAuth / OIDC responses: JWK Sets, ID tokens and token / userinfo / discovery responses.
//!
//! The public parsers (`authcore::oauth::id_token::{Jwks::from_json, verify_id_token,
//! verify_id_token_with_secret, verify_signed_userinfo, id_token_kid, unverified_claims}`)
//! are called directly; the token-response parser is crate-private, so token, userinfo,
//! discovery and JWKS responses are fed through a whole OAuth callback
//! (`GET /auth/callback/p?code=…` via `Auth::handle`) with an in-memory HTTP client.
//!
//! Input: the first byte picks the mode, the rest is split at `0xFF` bytes (never valid
//! UTF-8, so never inside a JSON text):
//! - 0: `jwks 0xFF token`: parse the JWK Set, verify the token against it;
//! - 1: `token`: the unverified helpers and every verifier with fixed keys;
//! - 2: `header 0xFF claims`: the harness signs the token itself (HS256 with the client
//!   secret, EdDSA with a fixed key), so the claim checks run on authentic tokens;
//! - 3: `flags status_hi status_lo token 0xFF userinfo 0xFF jwks 0xFF claims 0xFF discovery
//!   0xFF query`: a callback; flags pick the provider (OAuth 2 / OIDC with an HS256 ID token /
//!   OIDC with EdDSA and a JWKS / OIDC by discovery), whether the harness adds a signed
//!   `id_token` made of `claims` to the token response (bit 2), a failing userinfo (bit 3),
//!   PKCE + state + nonce with check cookies sealed like authcore's (bit 4), bound to
//!   another provider (bit 5).
//!
//! Properties: `none` and `HS*` never verify through a JWK Set, an EdDSA token never verifies
//! as HS*; an accepted ID token has the expected `iss`, contains the client in `aud`, a
//! string `sub`, an unexpired numeric `exp`, a numeric `iat`, and `nonce` exactly as
//! required; a callback that signs the user in had a valid token response (JSON object,
//! non-empty string `access_token`, `token_type` bearer/DPoP) and, for OIDC, a valid ID
//! token; with checks on, only with the sealed state (last `state` parameter) and nonce,
//! and never with check cookies bound to another provider; every redirect of the callback
//! stays on `http://localhost:3000`.

use std::sync::OnceLock;

use crate::{
    NOW, ORIGIN, SECRET, SESSION_COOKIE, ScriptedClient, SinkLogger, block_on, location_texts,
    split_ff,
};
use authcore::bytes::Bytes;
use authcore::http;
use authcore::http_body_util::Full;
use authcore::oauth::id_token::{
    IdTokenChecks, Jwks, id_token_kid, unverified_claims, verify_id_token,
    verify_id_token_with_secret, verify_signed_userinfo,
};
use authcore::providers::{Checks, OAuthProvider};
use authcore::serde_json::{self, Map, Value, json};
use authcore::{Auth, AuthConfig};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer as _, SigningKey};
use hmac::{KeyInit as _, Mac as _};

const ISSUER: &str = "https://idp.example";
const CLIENT_ID: &str = "client-123";
const CLIENT_SECRET: &str = "client-secret-for-fuzzing-0123456789";
const NONCE: &str = "n-0S6_WzA2Mj";
const KID: &str = "ed-1";
/// The values sealed in the check cookies when a callback input turns checks on.
const CHECK_STATE: &str = "fuzz-state-value";
const CHECK_NONCE: &str = "fuzz-nonce-value";

struct Keys {
    ed: SigningKey,
    jwks_json: String,
    jwks: Jwks,
}

fn keys() -> &'static Keys {
    static K: OnceLock<Keys> = OnceLock::new();
    K.get_or_init(|| {
        let ed = SigningKey::from_bytes(&[0x42; 32]);
        let x = URL_SAFE_NO_PAD.encode(ed.verifying_key().to_bytes());
        let jwks_json = json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": KID, "alg": "EdDSA", "use": "sig"},
            // A key that must never verify anything: a symmetric key (skipped by the parser).
            {"kty": "oct", "k": URL_SAFE_NO_PAD.encode(CLIENT_SECRET), "kid": "hs", "alg": "HS256"}
        ]})
        .to_string();
        let jwks = Jwks::from_json(jwks_json.as_bytes()).expect("fixed JWKS parses");
        assert_eq!(jwks.len(), 1);
        Keys {
            ed,
            jwks_json,
            jwks,
        }
    })
}

fn sign_hs256(header: &[u8], claims: &[u8], secret: &str) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(input.as_bytes());
    format!(
        "{input}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

fn sign_ed(header: &[u8], claims: &[u8]) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let sig = keys().ed.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
}

fn algs(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn checks<'a>(allowed: &'a [String], nonce: Option<&'a str>) -> IdTokenChecks<'a> {
    IdTokenChecks {
        issuer: ISSUER,
        client_id: CLIENT_ID,
        expected_nonce: nonce,
        allowed_algs: allowed,
        now: NOW,
        clock_tolerance: 30,
    }
}

/// The claim checks an accepted ID token must have passed.
fn assert_valid_id_claims(c: &Map<String, Value>, issuer: &str, nonce: Option<&str>) {
    assert_eq!(
        c.get("iss").and_then(Value::as_str),
        Some(issuer),
        "iss {c:?}"
    );
    assert!(c.get("sub").is_some_and(Value::is_string), "sub {c:?}");
    let aud_ok = match c.get("aud") {
        Some(Value::String(a)) => a == CLIENT_ID,
        Some(Value::Array(l)) => {
            l.iter().all(Value::is_string)
                && l.iter().any(|a| a.as_str() == Some(CLIENT_ID))
                && (l.len() == 1 || c.get("azp").and_then(Value::as_str) == Some(CLIENT_ID))
        }
        _ => false,
    };
    assert!(aud_ok, "aud/azp {c:?}");
    if let Some(azp) = c.get("azp") {
        assert_eq!(azp.as_str(), Some(CLIENT_ID), "azp {c:?}");
    }
    let exp = c.get("exp").and_then(Value::as_f64).expect("numeric exp");
    assert!(exp > (NOW - 30) as f64, "expired token accepted {c:?}");
    let iat = c.get("iat").and_then(Value::as_f64).expect("numeric iat");
    assert!(iat <= (NOW + 30) as f64, "future iat accepted {c:?}");
    if let Some(nbf) = c.get("nbf") {
        assert!(
            nbf.as_f64().is_some_and(|n| n <= (NOW + 30) as f64),
            "nbf {c:?}"
        );
    }
    match nonce {
        None => assert!(!c.contains_key("nonce"), "unexpected nonce accepted {c:?}"),
        Some(n) => assert_eq!(
            c.get("nonce").and_then(Value::as_str),
            Some(n),
            "nonce {c:?}"
        ),
    }
}

fn header_alg(header: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(header).ok()?;
    v.get("alg")?.as_str().map(str::to_owned)
}

fn mode_jwks(rest: &[u8]) {
    let (jwks, token) = split_ff(rest);
    let Ok(set) = Jwks::from_json(jwks) else {
        return;
    };
    assert!(set.len() <= 100);
    let Ok(token) = std::str::from_utf8(token) else {
        return;
    };
    if let Some(kid) = id_token_kid(token) {
        std::hint::black_box(set.contains_kid(&kid));
    }
    let weak = algs(&["none", "HS256", "HS384", "HS512"]);
    assert!(
        verify_id_token(token, &set, &checks(&weak, None)).is_err(),
        "none/HS* verified through a JWKS"
    );
    let all = algs(&[
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
    ]);
    if let Ok(c) = verify_id_token(token, &set, &checks(&all, None)) {
        // Only reachable with a real signature: still, the claims must be valid.
        assert_valid_id_claims(&c, ISSUER, None);
    }
}

fn mode_token(rest: &[u8]) {
    let Ok(token) = std::str::from_utf8(rest) else {
        return;
    };
    let k = keys();
    std::hint::black_box((id_token_kid(token), unverified_claims(token).ok()));
    let all = algs(&["RS256", "ES256", "ES384", "PS256", "EdDSA", "HS256", "none"]);
    for nonce in [None, Some(NONCE)] {
        if let Ok(c) = verify_id_token(token, &k.jwks, &checks(&all, nonce)) {
            assert_valid_id_claims(&c, ISSUER, nonce);
        }
        if let Ok(c) = verify_id_token_with_secret(token, CLIENT_SECRET, &checks(&all, nonce)) {
            assert_valid_id_claims(&c, ISSUER, nonce);
        }
    }
    std::hint::black_box(verify_signed_userinfo(token, &k.jwks, ISSUER, CLIENT_ID, &all).ok());
}

fn mode_signed(rest: &[u8]) {
    let (header, claims) = split_ff(rest);
    let k = keys();
    let nonce = rest.len().is_multiple_of(2).then_some(NONCE);
    let hs_algs = algs(&["HS256"]);
    let ed_algs = algs(&["EdDSA", "RS256"]);
    let both = algs(&["HS256", "EdDSA"]);

    let hs = sign_hs256(header, claims, CLIENT_SECRET);
    if let Ok(c) = verify_id_token_with_secret(&hs, CLIENT_SECRET, &checks(&hs_algs, nonce)) {
        assert_eq!(header_alg(header).as_deref(), Some("HS256"));
        assert_valid_id_claims(&c, ISSUER, nonce);
    }
    assert!(
        verify_id_token(&hs, &k.jwks, &checks(&both, nonce)).is_err(),
        "HS256 token verified with a JWKS"
    );
    assert!(
        verify_id_token_with_secret(&hs, "another-secret", &checks(&hs_algs, nonce)).is_err(),
        "HS256 token verified with the wrong secret"
    );

    let ed = sign_ed(header, claims);
    if let Ok(c) = verify_id_token(&ed, &k.jwks, &checks(&ed_algs, nonce)) {
        assert_eq!(header_alg(header).as_deref(), Some("EdDSA"));
        let h: Value = serde_json::from_slice(header).expect("header JSON");
        assert!(
            h.get("kid").is_none_or(|kid| kid.as_str() == Some(KID)),
            "kid {h}"
        );
        assert_valid_id_claims(&c, ISSUER, nonce);
    }
    let public_key = URL_SAFE_NO_PAD.encode(k.ed.verifying_key().to_bytes());
    assert!(
        verify_id_token_with_secret(&ed, &public_key, &checks(&both, nonce)).is_err(),
        "EdDSA token verified as HS* with the public key"
    );
    if let Ok(c) = verify_signed_userinfo(&ed, &k.jwks, ISSUER, CLIENT_ID, &ed_algs) {
        assert!(c.get("sub").is_some_and(Value::is_string));
        assert!(c.get("iss").is_none_or(|i| i.as_str() == Some(ISSUER)));
    }
}

fn mode_callback(rest: &[u8]) {
    let [flags, hi, lo, rest @ ..] = rest else {
        return;
    };
    let mut parts = rest.split(|&b| b == 0xFF);
    let mut next = || parts.next().unwrap_or_default();
    let (token_body, userinfo, jwks, claims, discovery, query) =
        (next(), next(), next(), next(), next(), next());
    // What the in-memory client answers: a status `http` cannot carry becomes 200.
    let status = match u16::from_be_bytes([*hi, *lo]) % 600 {
        s @ 100..=599 => s,
        _ => 200,
    };
    let kind = flags % 4;
    let add_id_token = flags & 4 != 0;
    let userinfo_status = if flags & 8 != 0 { 500 } else { 200 };
    // PKCE + state (+ nonce for OIDC) with check cookies sealed as authcore seals them,
    // bound to this provider or (bit 5) to another one.
    let checks_on = flags & 16 != 0;
    let wrong_provider = flags & 32 != 0;
    let Ok(query) = std::str::from_utf8(query) else {
        return;
    };

    // The claims of the harness's ID token carry the sealed nonce unless they have one.
    let mut claims = claims.to_vec();
    if checks_on
        && kind != 0
        && let Ok(Value::Object(mut m)) = serde_json::from_slice::<Value>(&claims)
        && !m.contains_key("nonce")
    {
        m.insert("nonce".into(), CHECK_NONCE.into());
        claims = serde_json::to_vec(&m).expect("JSON");
    }
    // The token response, with a harness-signed ID token added when asked.
    let mut token_body = token_body.to_vec();
    if add_id_token && let Ok(Value::Object(mut m)) = serde_json::from_slice::<Value>(&token_body) {
        let id_token = match kind {
            1 => sign_hs256(br#"{"alg":"HS256","typ":"JWT"}"#, &claims, CLIENT_SECRET),
            _ => sign_ed(br#"{"alg":"EdDSA","kid":"ed-1"}"#, &claims),
        };
        m.insert("id_token".into(), id_token.into());
        token_body = serde_json::to_vec(&m).expect("JSON");
    }
    let client = ScriptedClient {
        token: (status, Bytes::from(token_body.clone())),
        userinfo: (userinfo_status, Bytes::copy_from_slice(userinfo)),
        jwks: (
            200,
            if jwks.is_empty() {
                Bytes::from(keys().jwks_json.clone())
            } else {
                Bytes::copy_from_slice(jwks)
            },
        ),
        discovery: (200, Bytes::copy_from_slice(discovery)),
    };
    let endpoints = |p: OAuthProvider| {
        p.authorization_url("https://idp.example/authorize")
            .token_url("https://idp.example/token")
            .userinfo_url("https://idp.example/userinfo")
    };
    let provider = match kind {
        0 => endpoints(OAuthProvider::oauth("p", "P")),
        1 => endpoints(OAuthProvider::oidc("p", "P"))
            .issuer(ISSUER)
            .jwks_uri("https://idp.example/jwks")
            .id_token_signed_response_alg("HS256"),
        2 => endpoints(OAuthProvider::oidc("p", "P"))
            .issuer(ISSUER)
            .jwks_uri("https://idp.example/jwks")
            .id_token_signed_response_alg("EdDSA"),
        _ => OAuthProvider::oidc("p", "P").issuer(ISSUER),
    }
    .client_id(CLIENT_ID)
    .client_secret(CLIENT_SECRET)
    .checks(if checks_on {
        Checks {
            pkce: true,
            state: true,
            nonce: kind != 0,
        }
    } else {
        Checks::none()
    })
    .http_client(client);
    // A fresh configuration per input: the provider's discovery / JWKS caches start empty.
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .logger(SinkLogger)
            .provider(provider)
            .build()
            .expect("valid configuration"),
    );
    let mut uri = format!("{ORIGIN}/auth/callback/p?code=fuzz-code");
    let mut builder = http::Request::builder();
    if checks_on {
        uri.push_str("&state=");
        uri.push_str(CHECK_STATE);
        let jwt = auth.config().jwt();
        let bound_to = if wrong_provider { "other" } else { "p" };
        let seal = |name: &str, value: &str| {
            let claims = json!({"value": value, "provider": bound_to});
            let claims = claims.as_object().cloned().unwrap_or_default();
            format!(
                "{name}={}",
                jwt.encode(&claims, name, 900).expect("RNG works")
            )
        };
        let cookies = [
            seal(
                "authjs.pkce.code_verifier",
                "fuzz-pkce-verifier-0123456789abcdefghijklmno",
            ),
            seal("authjs.state", CHECK_STATE),
            seal("authjs.nonce", CHECK_NONCE),
        ];
        builder = builder.header(http::header::COOKIE, cookies.join("; "));
    }
    if !query.is_empty() {
        uri.push('&');
        uri.push_str(query);
    }
    let Ok(req) = builder.uri(uri).body(Full::new(Bytes::new())) else {
        return;
    };
    let last_state = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .filter(|(k, _)| k == "state")
            .last()
            .map(|(_, v)| v.into_owned())
    });
    let resp = block_on(auth.handle(req));

    let origin = authcore::url::Url::parse(ORIGIN).expect("origin");
    if let Some(loc) = resp.headers().get(http::header::LOCATION) {
        for loc in location_texts(loc) {
            let target = origin.join(&loc).map(|u| u.origin().ascii_serialization());
            assert_eq!(
                target.ok().as_deref(),
                Some(ORIGIN),
                "callback redirected to {loc:?}"
            );
        }
    }
    let signed_in = resp
        .headers()
        .get_all(http::header::SET_COOKIE)
        .iter()
        .any(|v| {
            v.to_str()
                .ok()
                .and_then(|s| s.strip_prefix(SESSION_COOKIE))
                .is_some_and(|s| s.starts_with('=') && !s.starts_with("=;"))
        });
    if !signed_in {
        return;
    }
    // Check cookies are bound to their provider, and the state must match.
    assert!(
        !(checks_on && wrong_provider),
        "signed in with another provider's check cookies"
    );
    if checks_on {
        assert_eq!(
            last_state.as_deref(),
            Some(CHECK_STATE),
            "signed in with a wrong state"
        );
    }
    // A sign-in needs a valid token response…
    let tokens: Value = serde_json::from_slice(&token_body).expect("token response was JSON");
    assert_eq!(status, 200, "signed in on HTTP {status}");
    assert!(
        tokens.get("error").and_then(Value::as_str).is_none(),
        "signed in despite an error"
    );
    assert!(
        tokens
            .get("access_token")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty()),
        "signed in without an access token: {tokens}"
    );
    let tt = tokens
        .get("token_type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    assert!(
        matches!(tt.as_deref(), Some("bearer" | "dpop")),
        "token_type {tt:?}"
    );
    // …and, for OIDC, a valid ID token (the providers here all use it for the profile).
    if kind != 0 {
        let id_token = tokens
            .get("id_token")
            .and_then(Value::as_str)
            .expect("an OIDC sign-in has an ID token");
        let c = unverified_claims(id_token).expect("the ID token parses");
        let issuer = c
            .get("iss")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if kind != 3 {
            assert_eq!(issuer, ISSUER);
        }
        // Real time here: the callback checks against the clock, not NOW.
        assert!(c.get("sub").is_some_and(Value::is_string), "sub {c:?}");
        if checks_on {
            assert_eq!(
                c.get("nonce").and_then(Value::as_str),
                Some(CHECK_NONCE),
                "nonce {c:?}"
            );
        } else {
            assert!(
                !c.contains_key("nonce"),
                "nonce accepted without a nonce check {c:?}"
            );
        }
    } else {
        assert_eq!(userinfo_status, 200);
        assert!(matches!(
            serde_json::from_slice::<Value>(userinfo),
            Ok(Value::Object(_))
        ));
    }
}

/// One fuzz input (the `fuzz_targets/oauth_responses.rs` target and the regression test).
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => mode_jwks(rest),
        1 => mode_token(rest),
        2 => mode_signed(rest),
        _ => mode_callback(rest),
    }
}
