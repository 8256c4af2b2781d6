//! Live interop with the real Auth.js: session tokens and CSRF cookies round-trip between
//! authcore and the pinned `@auth/core` (interop/package.json) in both directions; and with
//! next-auth 4's `next-auth/jwt` for `AuthConfigBuilder::next_auth_v4`.
//!
//! Each test spawns `node interop/jwt.mjs` once with a batch of operations (protocol in that
//! file). Needs Node.js ≥ 20 on PATH (or in `$NODE`) and `npm ci --prefix interop`; without
//! them the tests fail on purpose — a skipped interop test would hide a wire break.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use authcore::jose::Enc;
use authcore::jwt::{JwtClaims, JwtCodec};
use serde_json::{Value, json};

const SALT: &str = "authjs.session-token";
const SECURE_SALT: &str = "__Secure-authjs.session-token";
const SALTS: [&str; 2] = [SALT, SECURE_SALT];
const SECRET: &str = "interop-secret-2b9f0c6e51d84a7f-";
const NEW_SECRET: &str = "interop-rotated-secret-new-8c41d2";
const OLD_SECRET: &str = "interop-rotated-secret-old-3e07a9";
const MAX_AGE: u64 = 3600;

fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A batch of `interop/jwt.mjs` operations, answered by one `node` process.
#[derive(Default)]
struct NodeBatch {
    items: Vec<Value>,
}

impl NodeBatch {
    /// Queues an op and returns the index of its result.
    fn push(&mut self, op: Value) -> usize {
        self.items.push(op);
        self.items.len() - 1
    }

    fn encode(&mut self, secret: Value, salt: &str, token: &JwtClaims, max_age: u64) -> usize {
        self.push(json!({"op": "encode", "secret": secret, "salt": salt, "token": token, "maxAge": max_age}))
    }

    fn decode(&mut self, secret: Value, salt: &str, token: &str) -> usize {
        self.push(json!({"op": "decode", "secret": secret, "salt": salt, "token": token}))
    }

    fn run(self) -> Vec<Value> {
        let root = repo_root();
        let auth_core = root.join("interop/node_modules/@auth/core/package.json");
        assert!(
            auth_core.is_file(),
            "@auth/core is not installed ({} is missing).\n\
             The Auth.js interop tests need it: run `npm ci --prefix interop` from the repository root.",
            auth_core.display()
        );
        let script = root.join("interop/jwt.mjs");
        let node = std::env::var("NODE").unwrap_or_else(|_| "node".to_owned());
        let mut child = Command::new(&node)
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run `{node}` (Node.js >= 20 is required for the Auth.js interop tests): {e}")
            });
        let request = json!({"op": "batch", "items": self.items});
        child
            .stdin
            .take()
            .expect("child stdin is piped")
            .write_all(request.to_string().as_bytes())
            .expect("write the batch to node's stdin");
        let output = child.wait_with_output().expect("wait for node");
        assert!(
            output.status.success(),
            "{} failed with {}:\n{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let response: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "jwt.mjs printed something that is not JSON ({e}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        });
        let results = response["results"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("no results in {response}"));
        assert_eq!(
            results.len(),
            self.items.len(),
            "one result per op: {response}"
        );
        for (item, result) in self.items.iter().zip(&results) {
            assert!(
                result.get("error").is_none() || item["op"] == "decode" || item["op"] == "v4decode",
                "op {item} failed in node: {result}"
            );
        }
        results
    }
}

fn claims(value: Value) -> JwtClaims {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

/// Payloads that cover what real sessions carry; names are used in failure messages.
fn payloads() -> Vec<(&'static str, JwtClaims)> {
    let groups: Vec<Value> = (0..120)
        .map(|i| json!(format!("group-{i:04}-with-a-fairly-long-name")))
        .collect();
    vec![
        (
            "ascii",
            claims(json!({
                "name": "Demo User",
                "email": "demo@example.com",
                "picture": "https://example.com/demo.png",
                "sub": "1"
            })),
        ),
        (
            "unicode",
            claims(json!({
                "name": "Zoë Ærøskøbing 山田太郎 🦀",
                "email": "zoë@exämple.com",
                "sub": "ü-\u{1F600}-\u{0000}-\"quoted\"-\\-</script>"
            })),
        ),
        (
            "nested-and-extra-claims",
            claims(json!({
                "sub": "42",
                "name": null,
                "roles": ["admin", "editor"],
                "org": {"id": 7, "name": "Acme", "flags": {"beta": true, "ratio": 3.25, "neg": -17}},
                "accessToken": "ya29.a0Af-token",
                "empty": {},
                "list": [],
                "provider": "credentials"
            })),
        ),
        (
            "over-4kb",
            claims(json!({
                "sub": "big",
                "groups": groups,
                "blob": "x".repeat(1500)
            })),
        ),
    ]
}

fn now_secs() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_secs(),
    )
    .expect("seconds fit in i64")
}

/// Checks the claims Auth.js adds on encode and returns the rest.
fn without_registered_claims(what: &str, mut decoded: JwtClaims, max_age: u64) -> JwtClaims {
    let iat = decoded
        .remove("iat")
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("{what}: integer iat missing"));
    let exp = decoded
        .remove("exp")
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("{what}: integer exp missing"));
    let jti = decoded
        .remove("jti")
        .unwrap_or_else(|| panic!("{what}: jti missing"));
    let now = now_secs();
    assert!(
        (iat - now).abs() <= 60,
        "{what}: iat {iat} is not close to now ({now})"
    );
    let max_age = i64::try_from(max_age).expect("max age fits in i64");
    // iat and exp are read from the clock separately upstream, so allow a second boundary.
    assert!(
        (exp - iat - max_age).abs() <= 1,
        "{what}: exp {exp} - iat {iat} != maxAge {max_age}"
    );
    let jti = jti
        .as_str()
        .unwrap_or_else(|| panic!("{what}: jti is not a string"));
    assert!(is_uuid_v4(jti), "{what}: jti {jti:?} is not a UUID v4");
    decoded
}

fn is_uuid_v4(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        })
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

fn codec(secrets: &[&str]) -> JwtCodec {
    JwtCodec::new(secrets).unwrap_or_else(|e| panic!("JwtCodec::new({secrets:?}): {e:?}"))
}

fn rust_encode(codec: &JwtCodec, what: &str, payload: &JwtClaims, salt: &str) -> String {
    codec
        .encode(payload, salt, MAX_AGE)
        .unwrap_or_else(|e| panic!("{what}: Rust encode failed: {e:?}"))
}

fn node_payload(what: &str, result: &Value) -> JwtClaims {
    assert_eq!(
        result["ok"],
        json!(true),
        "{what}: @auth/core could not decode the token: {result}"
    );
    claims(result["payload"].clone())
}

fn assert_node_rejected(what: &str, result: &Value) {
    assert_eq!(
        result["ok"],
        json!(false),
        "{what}: @auth/core accepted a token it must reject: {result}"
    );
}

fn rust_decoded(codec: &JwtCodec, what: &str, token: &str, salt: &str) -> JwtClaims {
    match codec.decode(token, salt) {
        Ok(Some(claims)) => claims,
        other => panic!("{what}: Rust could not decode an Auth.js token: {other:?}"),
    }
}

fn assert_rust_rejected(codec: &JwtCodec, what: &str, token: &str, salt: &str) {
    // Rejection may be an error or "no session"; only a decoded payload is wrong.
    if let Ok(Some(claims)) = codec.decode(token, salt) {
        panic!("{what}: Rust accepted a token it must reject: {claims:?}");
    }
}

#[test]
fn rust_encoded_tokens_decode_in_authjs() {
    let plain = codec(&[SECRET]);
    let rotated = codec(&[NEW_SECRET, OLD_SECRET]);
    let mut batch = NodeBatch::default();
    let mut checks = Vec::new();
    for (name, payload) in payloads() {
        for salt in SALTS {
            let what = format!("{name} / {salt}");
            let token = rust_encode(&plain, &what, &payload, salt);
            if name == "over-4kb" {
                assert!(
                    token.len() > 4096,
                    "{what}: token is only {} chars, the case needs > 4096",
                    token.len()
                );
            }
            checks.push((
                what.clone(),
                payload.clone(),
                batch.decode(json!(SECRET), salt, &token),
            ));

            // The cipher authcore seals its own tokens with (`A256GCM`), which Auth.js reads.
            let gcm = plain
                .encode_serializable(&payload, salt, MAX_AGE, Enc::A256Gcm)
                .unwrap_or_else(|e| panic!("{what}: A256GCM encode failed: {e}"));
            checks.push((
                format!("{what} / A256GCM"),
                payload.clone(),
                batch.decode(json!(SECRET), salt, &gcm),
            ));

            // Rotation: Rust encodes with the first (new) secret of [new, old].
            let token = rust_encode(&rotated, &what, &payload, salt);
            for secrets in [
                json!([NEW_SECRET, OLD_SECRET]),
                json!([OLD_SECRET, NEW_SECRET]),
                json!(NEW_SECRET),
            ] {
                let idx = batch.decode(secrets.clone(), salt, &token);
                checks.push((
                    format!("{what} / rotated, node secrets {secrets}"),
                    payload.clone(),
                    idx,
                ));
            }
        }
    }
    let results = batch.run();
    for (what, payload, idx) in checks {
        let decoded = without_registered_claims(&what, node_payload(&what, &results[idx]), MAX_AGE);
        assert_eq!(
            decoded, payload,
            "{what}: @auth/core decoded different claims"
        );
    }
}

#[test]
fn authjs_encoded_tokens_decode_in_rust() {
    let mut batch = NodeBatch::default();
    let mut cases = Vec::new();
    for (name, payload) in payloads() {
        for salt in SALTS {
            let plain = batch.encode(json!(SECRET), salt, &payload, MAX_AGE);
            let rotated = batch.encode(json!([NEW_SECRET, OLD_SECRET]), salt, &payload, MAX_AGE);
            let before_rotation = batch.encode(json!(OLD_SECRET), salt, &payload, MAX_AGE);
            cases.push((name, payload.clone(), salt, plain, rotated, before_rotation));
        }
    }
    let results = batch.run();
    let token = |idx: usize| -> String {
        results[idx]["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token from node: {}", results[idx]))
            .to_owned()
    };

    let plain = codec(&[SECRET]);
    let new_first = codec(&[NEW_SECRET, OLD_SECRET]);
    let old_first = codec(&[OLD_SECRET, NEW_SECRET]);
    let new_only = codec(&[NEW_SECRET]);
    for (name, payload, salt, plain_idx, rotated_idx, before_idx) in cases {
        let what = format!("{name} / {salt}");
        let t = token(plain_idx);
        if name == "over-4kb" {
            assert!(
                t.len() > 4096,
                "{what}: token is only {} chars, the case needs > 4096",
                t.len()
            );
        }
        let decoded =
            without_registered_claims(&what, rust_decoded(&plain, &what, &t, salt), MAX_AGE);
        assert_eq!(decoded, payload, "{what}: Rust decoded different claims");

        // Node encoded with [new, old] → signed with new; any Rust list holding new decodes it.
        let t = token(rotated_idx);
        for (label, c) in [
            ("[new, old]", &new_first),
            ("[old, new]", &old_first),
            ("[new]", &new_only),
        ] {
            let what = format!("{what} / rotated, rust secrets {label}");
            let decoded =
                without_registered_claims(&what, rust_decoded(c, &what, &t, salt), MAX_AGE);
            assert_eq!(decoded, payload, "{what}: Rust decoded different claims");
        }
        assert_rust_rejected(
            &codec(&[OLD_SECRET]),
            &format!("{what} / rotated, rust secrets [old]"),
            &t,
            salt,
        );

        // A session minted before the rotation keeps working after it.
        let t = token(before_idx);
        let what = format!("{what} / minted with old, rust secrets [new, old]");
        let decoded =
            without_registered_claims(&what, rust_decoded(&new_first, &what, &t, salt), MAX_AGE);
        assert_eq!(decoded, payload, "{what}: Rust decoded different claims");
        assert_rust_rejected(
            &new_only,
            &format!("{what} / minted with old, rust secrets [new]"),
            &t,
            salt,
        );
    }
}

#[test]
fn registered_claims_are_overwritten_like_authjs() {
    // Auth.js always replaces iat/exp/jti from the caller's token (`jwt.ts`, `encode`).
    let payload = claims(json!({"sub": "1", "iat": 1, "exp": 2, "jti": "caller-supplied"}));
    let mut expected = payload.clone();
    for k in ["iat", "exp", "jti"] {
        expected.remove(k);
    }
    let rust_token = rust_encode(&codec(&[SECRET]), "overwrite", &payload, SALT);
    let mut batch = NodeBatch::default();
    let node_decodes = batch.decode(json!(SECRET), SALT, &rust_token);
    let node_encodes = batch.encode(json!(SECRET), SALT, &payload, MAX_AGE);
    let results = batch.run();

    let what = "Rust-encoded token with caller iat/exp/jti, decoded by @auth/core";
    let decoded =
        without_registered_claims(what, node_payload(what, &results[node_decodes]), MAX_AGE);
    assert_eq!(decoded, expected, "{what}");

    let what = "@auth/core-encoded token with caller iat/exp/jti, decoded by Rust";
    let t = results[node_encodes]["token"]
        .as_str()
        .expect("node token")
        .to_owned();
    let decoded = without_registered_claims(
        what,
        rust_decoded(&codec(&[SECRET]), what, &t, SALT),
        MAX_AGE,
    );
    assert_eq!(decoded, expected, "{what}");
}

#[test]
fn wrong_salt_secret_or_expiry_is_rejected_both_ways() {
    let payload = claims(json!({"sub": "1", "name": "Demo User", "email": "demo@example.com"}));
    let other = "interop-some-other-secret-5d1f";
    let right = codec(&[SECRET]);

    // Rust → Node.
    let mut batch = NodeBatch::default();
    let mut node_rejects = Vec::new();
    for (salt, wrong_salt) in [(SALT, SECURE_SALT), (SECURE_SALT, SALT)] {
        let t = rust_encode(&right, "reject", &payload, salt);
        node_rejects.push((
            format!("Rust token for {salt} decoded with salt {wrong_salt}"),
            batch.decode(json!(SECRET), wrong_salt, &t),
        ));
        node_rejects.push((
            format!("Rust token for {salt} decoded with another secret"),
            batch.decode(json!(other), salt, &t),
        ));
        node_rejects.push((
            format!("Rust token for {salt} decoded with salt {salt}-invalid"),
            batch.decode(json!(SECRET), &format!("{salt}-invalid"), &t),
        ));
        // Sanity: the same token is accepted with the right inputs, so the rejections mean something.
        let ok = batch.decode(json!(SECRET), salt, &t);
        node_rejects.push((format!("control: Rust token for {salt}"), ok));
    }

    // Node → Rust (tokens minted in the same node run).
    let mut node_tokens = Vec::new();
    for salt in SALTS {
        node_tokens.push((
            salt,
            "right",
            batch.encode(json!(SECRET), salt, &payload, MAX_AGE),
        ));
        node_tokens.push((
            salt,
            "other-secret",
            batch.encode(json!(other), salt, &payload, MAX_AGE),
        ));
    }
    // Expired beyond the 15 s clock tolerance (negative maxAge → exp in the past).
    let expired = batch.push(
        json!({"op": "encode", "secret": SECRET, "salt": SALT, "token": payload, "maxAge": -120}),
    );

    let results = batch.run();
    for (what, idx) in node_rejects {
        if what.starts_with("control") {
            node_payload(&what, &results[idx]);
        } else {
            assert_node_rejected(&what, &results[idx]);
        }
    }
    for (salt, kind, idx) in node_tokens {
        let t = results[idx]["token"]
            .as_str()
            .expect("node token")
            .to_owned();
        let wrong_salt = if salt == SALT { SECURE_SALT } else { SALT };
        match kind {
            "right" => {
                rust_decoded(&right, &format!("control: node token for {salt}"), &t, salt);
                assert_rust_rejected(
                    &right,
                    &format!("node token for {salt} decoded with salt {wrong_salt}"),
                    &t,
                    wrong_salt,
                );
                assert_rust_rejected(
                    &codec(&[other]),
                    &format!("node token for {salt} decoded with another secret"),
                    &t,
                    salt,
                );
            }
            _ => assert_rust_rejected(
                &right,
                &format!("node token for {salt} made with another secret"),
                &t,
                salt,
            ),
        }
    }
    let t = results[expired]["token"]
        .as_str()
        .expect("node token")
        .to_owned();
    assert_rust_rejected(&right, "node token expired 120 s ago", &t, SALT);
}

#[test]
fn csrf_cookie_values_agree() {
    let tokens = [
        "14afbe439d78f14cefa14360f034883e3a5ca54d02ae51b939fbd8ac19d4b07f",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    ];
    // (secret as configured, the same secret as Auth.js stringifies it)
    let secrets = [
        (json!(SECRET), SECRET.to_owned()),
        (json!("sécret-🔑-ünïcode"), "sécret-🔑-ünïcode".to_owned()),
        // A secret list is joined with "," when concatenated as a JS string (Auth.js
        // `lib/actions/callback/oauth/csrf-token.ts`, `createCSRFToken`).
        (
            json!([NEW_SECRET, OLD_SECRET]),
            format!("{NEW_SECRET},{OLD_SECRET}"),
        ),
    ];
    let mut batch = NodeBatch::default();
    let mut cases = Vec::new();
    for token in tokens {
        for (secret, secret_string) in &secrets {
            let idx = batch.push(json!({"op": "csrf", "secret": secret, "token": token}));
            cases.push((token, secret_string.clone(), idx));
        }
    }
    let results = batch.run();
    for (token, secret_string, idx) in cases {
        let node = &results[idx];
        assert_eq!(
            node["verified"],
            json!(true),
            "@auth/core does not accept its own cookie: {node}"
        );
        let rust = authcore::csrf::csrf_cookie_value(token, &secret_string);
        assert_eq!(
            json!(rust),
            node["cookie"],
            "CSRF cookie for token {token}, secret {secret_string:?}"
        );
    }
}

/// One request to `auth`: status, the session cookie it sets (`None` when not set), the body.
async fn v4_request(
    auth: &authcore::Auth,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> (u16, Option<String>, Value) {
    use http_body_util::BodyExt as _;
    let r = auth.handle(req).await;
    let status = r.status().as_u16();
    let cookie = r.headers().get_all("set-cookie").iter().find_map(|v| {
        let v = v.to_str().unwrap();
        v.strip_prefix("next-auth.session-token=")
            .map(|rest| rest.split(';').next().unwrap().to_owned())
    });
    let body = r.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        cookie,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

/// next-auth 4: a token from `next-auth/jwt` is a session of authcore configured with
/// `next_auth_v4()` (its cookie name and base path `/api/auth`), and the tokens authcore
/// writes — refreshed, or from its own sign-in — decode in next-auth; other secrets and
/// Auth.js v5 tokens are refused both ways.
#[tokio::test]
async fn next_auth_v4_sessions_cross_both_ways() {
    use authcore::providers::{CredentialField, CredentialsProvider};
    let auth = authcore::Auth::new(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .next_auth_v4()
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .authorize(|_, _| async {
                        Ok(Some(
                            authcore::User::with_id("8")
                                .name("Grace")
                                .email("grace@example.com"),
                        ))
                    }),
            )
            .build()
            .unwrap(),
    );
    let mut batch = NodeBatch::default();
    let from_v4 = batch.push(json!({"op": "v4encode", "secret": SECRET, "maxAge": 3600,
        "token": {"sub": "7", "name": "Ada", "email": "ada@example.com"}}));
    let v5 = batch.encode(json!(SECRET), SALT, &claims(json!({"sub": "7"})), 3600);
    let results = batch.run();
    let v4_token = results[from_v4]["token"].as_str().unwrap().to_owned();

    // next-auth → authcore, under v4's base path and cookie name.
    let session = |token: &str| {
        http::Request::get("http://localhost:3000/api/auth/session")
            .header("cookie", format!("next-auth.session-token={token}"))
            .body(http_body_util::Full::default())
            .unwrap()
    };
    let (status, refreshed, body) = v4_request(&auth, session(&v4_token)).await;
    assert_eq!(status, 200);
    assert_eq!(body["user"]["email"], "ada@example.com");
    let refreshed = refreshed.expect("the session cookie is refreshed");
    // An Auth.js v5 token is no session here; without a session, v4 answers `{}` (v5:
    // `null`), as next-auth 4.24's own session route does for the same cookies.
    let v5_token = results[v5]["token"].as_str().unwrap().to_owned();
    let (_, _, body) = v4_request(&auth, session(&v5_token)).await;
    assert_eq!(body, json!({}));
    let (_, _, no_cookie) = v4_request(
        &auth,
        http::Request::get("http://localhost:3000/api/auth/session")
            .body(http_body_util::Full::default())
            .unwrap(),
    )
    .await;
    let mut batch = NodeBatch::default();
    let v4_none = batch.push(json!({"op": "v4session", "secret": SECRET, "token": null}));
    let v4_foreign = batch.push(json!({"op": "v4session", "secret": SECRET, "token": v5_token}));
    let answers = batch.run();
    assert_eq!(no_cookie, answers[v4_none]["body"]);
    assert_eq!(body, answers[v4_foreign]["body"]);
    assert_eq!(no_cookie, json!({}));

    // authcore's own sign-in writes a v4 token too.
    let csrf = "b".repeat(64);
    let csrf_cookie = authcore::csrf::csrf_cookie_value(&csrf, SECRET).replace('|', "%7C");
    let sign_in = |extra: &str| {
        http::Request::post("http://localhost:3000/api/auth/callback/credentials")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", format!("next-auth.csrf-token={csrf_cookie}"))
            .body(http_body_util::Full::new(bytes::Bytes::from(format!(
                "csrfToken={csrf}&username=grace{extra}"
            ))))
            .unwrap()
    };
    let (status, signed_in, _) = v4_request(&auth, sign_in("")).await;
    assert_eq!(status, 302);
    // next-auth 4's `signIn` posts `json=true` and reads `{url}` instead of a redirect.
    let (status, by_json, body) = v4_request(&auth, sign_in("&json=true")).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"url": "http://localhost:3000"}));
    assert!(by_json.is_some());
    let signed_in = signed_in.expect("signed in");

    // authcore → next-auth; another secret fails there.
    let mut batch = NodeBatch::default();
    let a = batch.push(json!({"op": "v4decode", "secret": SECRET, "token": refreshed}));
    let b = batch.push(json!({"op": "v4decode", "secret": SECRET, "token": signed_in}));
    let c = batch.push(json!({"op": "v4decode", "secret": NEW_SECRET, "token": signed_in}));
    let results = batch.run();
    assert_eq!(results[a]["ok"], true, "{}", results[a]);
    assert_eq!(results[a]["payload"]["email"], "ada@example.com");
    assert_eq!(results[b]["ok"], true, "{}", results[b]);
    assert_eq!(results[b]["payload"]["email"], "grace@example.com");
    assert_eq!(results[b]["payload"]["sub"], "8");
    assert!(
        results[b]["payload"]["jti"]
            .as_str()
            .is_some_and(is_uuid_v4)
    );
    assert!(results[b]["payload"]["exp"].as_i64().unwrap() > now_secs());
    assert_eq!(results[c]["ok"], false);
}

/// A Rust API beside an Auth.js app (`sessions_only()`, no providers) reads the session
/// token @auth/core made, and refuses one made with another secret.
#[tokio::test]
async fn a_sessions_only_reader_reads_what_authjs_issued() {
    let claims = claims(json!({"name": "Ada", "email": "ada@example.com", "sub": "user-7"}));
    let mut batch = NodeBatch::default();
    let ours = batch.encode(json!(SECRET), SECURE_SALT, &claims, MAX_AGE);
    let foreign = batch.encode(json!(OLD_SECRET), SECURE_SALT, &claims, MAX_AGE);
    let results = batch.run();
    let reader = authcore::Auth::new(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .sessions_only()
            .build()
            .unwrap(),
    );
    let token = |idx: usize| results[idx]["token"].as_str().unwrap().to_owned();
    let read = |token: String| {
        let reader = reader.clone();
        async move {
            let mut headers = http::HeaderMap::new();
            let cookie = format!("{SECURE_SALT}={token}");
            headers.insert(http::header::COOKIE, cookie.parse().unwrap());
            let uri: http::Uri = "https://api.example.com/api/me".parse().unwrap();
            reader
                .read_session(&uri, &headers, &authcore::ReadOptions::default())
                .await
                .unwrap()
        }
    };
    let lookup = read(token(ours)).await;
    let session = lookup.session.unwrap();
    assert_eq!(session.user_id(), Some("user-7"));
    assert_eq!(session.json()["user"]["email"], "ada@example.com");
    assert!(read(token(foreign)).await.session.is_none());
}
