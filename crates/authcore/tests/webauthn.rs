//! WebAuthn and passkeys (Auth.js `providers/webauthn.ts`, `lib/actions/webauthn-options.ts`,
//! `lib/utils/webauthn-utils.ts`): `GET /webauthn-options/:id` and `POST /callback/:id`
//! driven in memory, with a software authenticator playing browser and device.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::soft_authenticator::SoftAuthenticator;
use authcore::adapter::SessionActivityStore;
use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::config::SessionStrategy;
use authcore::providers::{RelyingParty, WebAuthnProvider};
use authcore::{AuthConfig, ConfigError};
use serde_json::Value;

const CHALLENGE_COOKIE: &str = "__Secure-authjs.challenge";

/// A browser: its cookies for `authjs.test`.
#[derive(Default)]
struct Browser(Vec<(String, String)>);

impl Browser {
    fn keep(&mut self, r: &TestResponse) {
        for c in r.set_cookies() {
            let (nv, _) = c.split_once(';').unwrap_or((&c, ""));
            let (n, v) = nv.split_once('=').unwrap();
            self.0.retain(|(k, _)| k != n);
            if !v.is_empty() {
                self.0.push((n.to_owned(), v.to_owned()));
            }
        }
    }
    fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn setup(provider: WebAuthnProvider) -> (authcore::Auth, Recorder, MemoryAdapter) {
    let db = MemoryAdapter::new();
    let (auth, rec) = auth_with(builder().provider(provider).adapter(db.clone()));
    (auth, rec, db)
}

async fn options(
    auth: &authcore::Auth,
    browser: &mut Browser,
    id: &str,
    query: &str,
) -> TestResponse {
    let r = send(
        auth,
        get(&format!("/auth/webauthn-options/{id}{query}"))
            .header("cookie", browser.header())
            .body(empty())
            .unwrap(),
    )
    .await;
    browser.keep(&r);
    r
}

async fn submit(
    auth: &authcore::Auth,
    browser: &mut Browser,
    id: &str,
    action: &str,
    data: &Value,
) -> TestResponse {
    let r = send(
        auth,
        post(&format!("/auth/callback/{id}"))
            .header("cookie", browser.header())
            .body(form(&[("action", action), ("data", &data.to_string())]))
            .unwrap(),
    )
    .await;
    browser.keep(&r);
    r
}

/// Registers `key` for `email` in a fresh browser; returns the browser (signed in).
async fn register(
    auth: &authcore::Auth,
    key: &mut SoftAuthenticator,
    id: &str,
    email: &str,
) -> Browser {
    let mut browser = Browser::default();
    let r = options(auth, &mut browser, id, &format!("?email={email}")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let body = r.json();
    assert_eq!(body["action"], "register");
    assert!(browser.get(CHALLENGE_COOKIE).is_some());
    let data = key.register(&body["options"], ORIGIN);
    let r = submit(auth, &mut browser, id, "register", &data).await;
    assert_eq!(r.location(), Some(ORIGIN), "{:?}", r.headers);
    assert!(browser.get(CHALLENGE_COOKIE).is_none(), "challenge cleared");
    browser
}

async fn sign_in(
    auth: &authcore::Auth,
    key: &mut SoftAuthenticator,
    id: &str,
    query: &str,
) -> (TestResponse, Browser) {
    let mut browser = Browser::default();
    let r = options(auth, &mut browser, id, query).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let body = r.json();
    assert_eq!(body["action"], "authenticate");
    let data = key.authenticate(&body["options"], ORIGIN);
    let r = submit(auth, &mut browser, id, "authenticate", &data).await;
    (r, browser)
}

async fn session_email(auth: &authcore::Auth, browser: &Browser) -> Value {
    send(
        auth,
        get("/auth/session")
            .header("cookie", browser.header())
            .body(empty())
            .unwrap(),
    )
    .await
    .json()["user"]["email"]
        .clone()
}

const ORIGIN: &str = "https://authjs.test";

/// How many passkeys the user with `email` has.
async fn passkeys_of(db: &MemoryAdapter, email: &str) -> usize {
    let user = db.get_user_by_email(email).await.unwrap().unwrap();
    db.list_authenticators_by_user_id(&user.id)
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn register_a_passkey_then_sign_in_with_it() {
    let (auth, rec, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    let browser = register(&auth, &mut key, "passkey", "new@example.com").await;
    assert_eq!(session_email(&auth, &browser).await, "new@example.com");

    // Stored as Auth.js stores it.
    let user = db
        .get_user_by_email("new@example.com")
        .await
        .unwrap()
        .unwrap();
    assert!(
        user.email_verified.is_none(),
        "WebAuthn does not verify emails"
    );
    let rows = db.list_authenticators_by_user_id(&user.id).await.unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    use base64::Engine;
    let standard = base64::engine::general_purpose::STANDARD;
    assert_eq!(row.credential_id, standard.encode(key.credential_id()));
    assert_eq!(row.provider_account_id, row.credential_id);
    assert_eq!(row.counter, 1);
    assert_eq!(row.credential_device_type, "multiDevice");
    assert!(row.credential_backed_up);
    assert_eq!(row.transports.as_deref(), Some("internal"));
    let account = db
        .get_account(&row.provider_account_id, "passkey")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(account.user_id.as_deref(), Some(user.id.as_str()));
    let events = rec.event_names();
    for e in ["createUser", "signIn"] {
        assert!(events.contains(&e.to_owned()), "{events:?}");
    }

    // Signed out, in a new browser: the email picks authentication, offering that key.
    let mut fresh = Browser::default();
    let body = options(&auth, &mut fresh, "passkey", "?email=new@example.com")
        .await
        .json();
    assert_eq!(body["action"], "authenticate");
    assert_eq!(body["options"]["userVerification"], "required");
    assert_eq!(
        body["options"]["allowCredentials"][0]["id"],
        key.credential_id_b64url()
    );
    let (r, browser) = sign_in(&auth, &mut key, "passkey", "?email=new@example.com").await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert_eq!(session_email(&auth, &browser).await, "new@example.com");
    let row = db
        .get_authenticator(&row.credential_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.counter, 2, "the counter grows with every sign-in");

    // Discoverable (conditional UI): no email, no allowCredentials key at all (Auth.js).
    let body = options(&auth, &mut Browser::default(), "passkey", "")
        .await
        .json();
    let o = body["options"].as_object().unwrap();
    let mut keys: Vec<_> = o.keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["challenge", "rpId", "timeout", "userVerification"]);
    let (r, _) = sign_in(&auth, &mut key, "passkey", "").await;
    assert_eq!(r.location(), Some(ORIGIN));
}

/// Ed25519 credentials (offered first, as Auth.js does) register, sign in, and are refused
/// like the others when the response is forged, replayed, cloned or unverified.
#[tokio::test]
async fn ed25519_credentials_register_and_sign_in() {
    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::ed25519();
    let browser = register(&auth, &mut key, "passkey", "ed@example.com").await;
    assert_eq!(session_email(&auth, &browser).await, "ed@example.com");
    use base64::Engine;
    let id = base64::engine::general_purpose::STANDARD.encode(key.credential_id());
    let row = db.get_authenticator(&id).await.unwrap().unwrap();
    let cose = base64::engine::general_purpose::STANDARD
        .decode(&row.credential_public_key)
        .unwrap();
    assert_eq!(
        &cose[..5],
        &[0xa4, 0x01, 0x01, 0x03, 0x27],
        "OKP / EdDSA key stored"
    );
    assert_eq!(
        (row.counter, row.credential_device_type.as_str()),
        (1, "multiDevice")
    );

    let (r, browser) = sign_in(&auth, &mut key, "passkey", "").await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert_eq!(session_email(&auth, &browser).await, "ed@example.com");

    assert_forgeries_refused(&auth, &key).await;
    let mut clone = key.clone();
    clone.set_counter(0);
    let (r, _) = sign_in(&auth, &mut clone, "passkey", "").await;
    assert_eq!(r.location(), Some(VERIFY_ERROR), "counter regression");
    // A registration whose user was not verified is refused too.
    let mut unverified = SoftAuthenticator::ed25519();
    unverified.user_verified = false;
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "?email=uv@example.com")
        .await
        .json();
    let data = unverified.register(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
    // Only the accepted ceremonies moved the counter (registration 1, sign-in 2).
    assert_eq!(db.get_authenticator(&id).await.unwrap().unwrap().counter, 2);
}

/// Auth.js's `registrationOptions` / `authenticationOptions` / `verify*Options`
/// pass-through: algorithms, extensions, attestation and the verification's user
/// verification requirement are each the provider's to set.
#[tokio::test]
async fn ceremony_options_are_the_providers_to_set() {
    let mut ext = serde_json::Map::new();
    ext.insert("minPinLength".into(), serde_json::json!(true));
    let mut auth_ext = serde_json::Map::new();
    auth_ext.insert("appid".into(), serde_json::json!("https://authjs.test"));
    let provider = WebAuthnProvider::new()
        .supported_algorithms([-7, -257])
        .attestation(authcore::providers::Attestation::Direct)
        .registration_extensions(ext)
        .authentication_extensions(auth_ext)
        .require_user_verification(false);
    let (auth, _, _) = setup(provider);
    let body = options(
        &auth,
        &mut Browser::default(),
        "webauthn",
        "?email=o@example.com",
    )
    .await
    .json();
    let o = &body["options"];
    assert_eq!(
        o["pubKeyCredParams"],
        serde_json::json!([{"alg": -7, "type": "public-key"}, {"alg": -257, "type": "public-key"}])
    );
    assert_eq!(o["attestation"], "direct");
    assert_eq!(
        o["extensions"],
        serde_json::json!({"minPinLength": true, "credProps": true})
    );
    assert_eq!(
        o["authenticatorSelection"],
        serde_json::json!({"residentKey": "preferred", "userVerification": "preferred", "requireResidentKey": false})
    );
    // An Ed25519 key is not among the algorithms: refused.
    let mut ed = SoftAuthenticator::ed25519();
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "webauthn", "?email=ed@example.com")
        .await
        .json();
    let mut offered = body["options"].clone();
    offered["pubKeyCredParams"] = serde_json::json!([{"alg": -8, "type": "public-key"}]);
    let data = ed.register(&offered, ORIGIN);
    let r = submit(&auth, &mut browser, "webauthn", "register", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
    // User verification not required: a key without UV registers and signs in.
    let mut key = SoftAuthenticator::new();
    key.user_verified = false;
    register(&auth, &mut key, "webauthn", "nouv@example.com").await;
    let body = options(
        &auth,
        &mut Browser::default(),
        "webauthn",
        "?email=nouv@example.com",
    )
    .await
    .json();
    assert_eq!(
        body["options"]["extensions"],
        serde_json::json!({"appid": "https://authjs.test"})
    );
    let (r, _) = sign_in(&auth, &mut key, "webauthn", "?email=nouv@example.com").await;
    assert_eq!(r.location(), Some(ORIGIN));
    // With the default (required, as SimpleWebAuthn under Auth.js), the same key is refused.
    let (strict, _, _) = setup(WebAuthnProvider::new());
    let mut key = SoftAuthenticator::new();
    key.user_verified = false;
    let mut browser = Browser::default();
    let body = options(&strict, &mut browser, "webauthn", "?email=nouv@example.com")
        .await
        .json();
    assert_eq!(
        body["options"]["authenticatorSelection"]["userVerification"],
        "preferred"
    );
    let data = key.register(&body["options"], ORIGIN);
    let r = submit(&strict, &mut browser, "webauthn", "register", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
    // An algorithm authcore cannot verify fails the build, naming the provider.
    for algorithms in [vec![-7, 12345], vec![]] {
        let err = builder()
            .adapter(MemoryAdapter::new())
            .provider(WebAuthnProvider::new().supported_algorithms(algorithms.clone()))
            .build()
            .unwrap_err();
        assert!(
            err.to_string().contains("\"webauthn\""),
            "{algorithms:?}: {err}"
        );
    }
}

#[tokio::test]
async fn registration_options_follow_the_provider() {
    let (auth, _, _) = setup(WebAuthnProvider::passkey());
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "?email=a@example.com")
        .await
        .json();
    let o = &body["options"];
    assert_eq!(o["rp"]["id"], "authjs.test");
    assert_eq!(o["user"]["name"], "a@example.com");
    assert_eq!(o["authenticatorSelection"]["residentKey"], "required");
    assert_eq!(o["authenticatorSelection"]["userVerification"], "required");
    assert_eq!(o["authenticatorSelection"]["requireResidentKey"], true);
    assert_eq!(o["timeout"], 300_000);
    // SimpleWebAuthn's defaults under Auth.js: EdDSA, ES256, RS256 in this order, no
    // attestation, an empty exclusion list and credProps.
    assert_eq!(
        o["pubKeyCredParams"],
        serde_json::json!([
            {"alg": -8, "type": "public-key"},
            {"alg": -7, "type": "public-key"},
            {"alg": -257, "type": "public-key"},
        ])
    );
    assert_eq!(o["attestation"], "none");
    assert_eq!(o["excludeCredentials"], serde_json::json!([]));
    assert_eq!(o["extensions"], serde_json::json!({"credProps": true}));
    let mut keys: Vec<_> = o.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "attestation",
            "authenticatorSelection",
            "challenge",
            "excludeCredentials",
            "extensions",
            "pubKeyCredParams",
            "rp",
            "timeout",
            "user"
        ]
    );

    // Unknown action → 400; no decision possible → 400.
    let r = options(&auth, &mut browser, "passkey", "?action=delete").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "Invalid action");
    let r = options(&auth, &mut browser, "passkey", "?action=register").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "Invalid request");
    // Not a WebAuthn provider.
    let r = options(&auth, &mut browser, "credentials", "").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

const VERIFY_ERROR: &str = "https://authjs.test/auth/error?error=WebAuthnVerificationError";

/// Forged or relayed assertions of `key` are refused without a session: a tampered
/// signature, another RP id, no user verification, another origin.
async fn assert_forgeries_refused(auth: &authcore::Auth, key: &SoftAuthenticator) {
    // Each misbehaviour on its own.
    type Tweak = fn(&mut SoftAuthenticator);
    let tweaks: [(&str, Tweak); 3] = [
        ("tampered signature", |k| k.tamper_signature = true),
        ("wrong RP id", |k| {
            k.rp_id_override = Some("evil.example".into())
        }),
        ("no user verification", |k| k.user_verified = false),
    ];
    for (what, tweak) in tweaks {
        let mut bad = key.clone();
        tweak(&mut bad);
        let (r, browser) = sign_in(auth, &mut bad, "passkey", "").await;
        assert_eq!(r.location(), Some(VERIFY_ERROR), "{what}");
        assert!(
            browser.get("__Secure-authjs.session-token").is_none(),
            "{what}"
        );
    }

    // Wrong origin (a phishing page relaying the ceremony).
    let mut browser = Browser::default();
    let body = options(auth, &mut browser, "passkey", "").await.json();
    let data = key
        .clone()
        .authenticate(&body["options"], "https://authjs.test.evil.example");
    let r = submit(auth, &mut browser, "passkey", "authenticate", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
}

/// One assertion (of a passkey whose counter stays 0, so only the single-use challenge can
/// tell) submitted 20 times at once with the same challenge cookie signs in once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_replays_of_one_assertion_sign_in_once() {
    let (auth, _, _) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    key.counter_step = 0;
    register(&auth, &mut key, "passkey", "race@example.com").await;
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "").await.json();
    let data = key.authenticate(&body["options"], ORIGIN);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (auth, data, mut browser) =
                (auth.clone(), data.clone(), Browser(browser.0.clone()));
            tokio::spawn(async move {
                submit(&auth, &mut browser, "passkey", "authenticate", &data).await;
                browser.get("__Secure-authjs.session-token").is_some()
            })
        })
        .collect();
    let mut signed_in = 0;
    for t in tasks {
        signed_in += usize::from(t.await.unwrap());
    }
    assert_eq!(signed_in, 1);
}

#[tokio::test]
async fn forged_and_replayed_responses_are_refused() {
    let (auth, rec, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    register(&auth, &mut key, "passkey", "user@example.com").await;

    assert_forgeries_refused(&auth, &key).await;

    // Replay: the same response and challenge cookie a second time.
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "").await.json();
    let saved = browser.header();
    let data = key.authenticate(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "authenticate", &data).await;
    assert_eq!(r.location(), Some(ORIGIN));
    let mut replay = Browser::default();
    for pair in saved.split("; ") {
        let (k, v) = pair.split_once('=').unwrap();
        replay.0.push((k.to_owned(), v.to_owned()));
    }
    let r = submit(&auth, &mut replay, "passkey", "authenticate", &data).await;
    assert_ne!(r.location(), Some(ORIGIN), "replayed");
    assert!(replay.get("__Secure-authjs.session-token").is_none());
    assert!(
        rec.errors()
            .iter()
            .any(|e| e.contains("challenge already used")),
        "refused as a replay, not only by the counter: {:?}",
        rec.errors()
    );
    // The same with a passkey whose counter stays 0 (no counter to catch it).
    let mut synced = SoftAuthenticator::new();
    synced.counter_step = 0;
    register(&auth, &mut synced, "passkey", "synced@example.com").await;
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "").await.json();
    let saved = browser.0.clone();
    let data = synced.authenticate(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "authenticate", &data).await;
    assert_eq!(r.location(), Some(ORIGIN));
    let r = submit(&auth, &mut Browser(saved), "passkey", "authenticate", &data).await;
    assert_eq!(
        r.location(),
        Some(VERIFY_ERROR),
        "replay of a zero-counter passkey: a refused assertion like the others"
    );

    // Counter regression (a cloned authenticator).
    let mut clone = key.clone();
    clone.set_counter(0);
    let (r, _) = sign_in(&auth, &mut clone, "passkey", "").await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));

    // No challenge cookie (Auth.js: InvalidCheck), or one made for another ceremony
    // (Auth.js: missing registration data; the other way round, a failed verification).
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "").await.json();
    let data = key.authenticate(&body["options"], ORIGIN);
    let r = submit(
        &auth,
        &mut Browser::default(),
        "passkey",
        "authenticate",
        &data,
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    let mut browser = Browser::default();
    let body = options(
        &auth,
        &mut browser,
        "passkey",
        "?action=register&email=new%40example.com",
    )
    .await
    .json();
    assert_eq!(body["action"], "register");
    let signed_challenge = serde_json::json!({
        "challenge": body["options"]["challenge"],
        "rpId": body["options"]["rp"]["id"],
    });
    let data = key.authenticate(&signed_challenge, ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "authenticate", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));

    // Unknown credential.
    let mut stranger = SoftAuthenticator::new();
    let (r, _) = sign_in(&auth, &mut stranger, "passkey", "").await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(
        rec.errors()
            .iter()
            .any(|e| e.contains("WebAuthn authenticator not found in database")),
        "{:?}",
        rec.errors()
    );
    // Bad bodies.
    let mut browser = Browser::default();
    options(&auth, &mut browser, "passkey", "").await;
    for (action, data) in [
        ("login", "{}"),
        ("authenticate", "not json"),
        ("register", "[]"),
    ] {
        let r = send(
            &auth,
            post("/auth/callback/passkey")
                .header("cookie", browser.header())
                .body(form(&[("action", action), ("data", data)]))
                .unwrap(),
        )
        .await;
        assert_eq!(
            r.location(),
            Some("https://authjs.test/auth/error?error=Configuration"),
            "{action} {data}"
        );
    }
    // Only the two accepted ceremonies moved the stored counter (registration: 1, the
    // first sign-in: 2); refused ones, the replay and the clone did not.
    use base64::Engine;
    let id = base64::engine::general_purpose::STANDARD.encode(key.credential_id());
    let row = db.get_authenticator(&id).await.unwrap().unwrap();
    assert_eq!(row.counter, 2);
}

/// `@simplewebauthn/browser` v9 (Auth.js's client) sends `userHandle` as
/// `bufferToUTF8String(handle)`: for the random 32-byte handle of a credential registered
/// through authcore's page that is lossy UTF-8 text, no base64url. The assertion is still
/// accepted: the authenticator is found by credential id, as in Auth.js.
#[tokio::test]
async fn user_handle_as_utf8_text_from_the_authjs_client_is_accepted() {
    let (auth, _, _) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    register(&auth, &mut key, "passkey", "utf8@example.com").await;
    use base64::Engine;
    let handle = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(key.user_handle().unwrap())
        .unwrap();
    let as_text = String::from_utf8_lossy(&handle).into_owned();
    for user_handle in [as_text.as_str(), "not base64url: ü ✓ +/=", ""] {
        key.set_user_handle(user_handle);
        let (r, browser) = sign_in(&auth, &mut key, "passkey", "").await;
        assert_eq!(r.location(), Some(ORIGIN), "{user_handle:?}");
        assert!(browser.get("__Secure-authjs.session-token").is_some());
    }
}

#[tokio::test]
async fn challenge_cookie_of_another_provider_is_refused() {
    let db = MemoryAdapter::new();
    let (auth, _) = auth_with(
        builder()
            .adapter(db.clone())
            .provider(WebAuthnProvider::passkey())
            .provider(
                WebAuthnProvider::new()
                    .with_id("security-key")
                    .enable_conditional_ui(false),
            ),
    );
    let mut key = SoftAuthenticator::new();
    register(&auth, &mut key, "passkey", "user@example.com").await;
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "security-key", "")
        .await
        .json();
    let data = key.authenticate(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "authenticate", &data).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=WebAuthnVerificationError")
    );
}

#[tokio::test]
async fn signed_in_users_add_a_second_key_and_emails_are_not_taken_over() {
    let (auth, rec, db) = setup(WebAuthnProvider::passkey());
    let mut first = SoftAuthenticator::new();
    let mut browser = register(&auth, &mut first, "passkey", "owner@example.com").await;
    // Signed in: options without email register another key for the same user.
    let r = options(&auth, &mut browser, "passkey", "?action=register").await;
    let body = r.json();
    assert_eq!(body["action"], "register");
    assert_eq!(
        body["options"]["excludeCredentials"][0]["id"],
        first.credential_id_b64url()
    );
    let mut second = SoftAuthenticator::new();
    let data = second.register(&body["options"], ORIGIN);
    assert_eq!(rec.event("securityChange"), None, "a sign-up is no change");
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert_eq!(passkeys_of(&db, "owner@example.com").await, 2);
    // The user hears of the new key.
    let owner = db
        .get_user_by_email("owner@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        rec.event("securityChange"),
        Some(serde_json::json!({ "userId": owner.id, "change": "passkeyAdded" }))
    );
    let (r, _) = sign_in(&auth, &mut second, "passkey", "").await;
    assert_eq!(r.location(), Some(ORIGIN));

    // Someone else registering a key for that email while signed out: refused.
    let mut browser = Browser::default();
    let r = options(
        &auth,
        &mut browser,
        "passkey",
        "?email=owner@example.com&action=register",
    )
    .await;
    assert_eq!(r.status, 400, "an existing user must sign in first");
}

#[tokio::test]
async fn a_stale_session_adds_no_passkey() {
    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let mut first = SoftAuthenticator::new();
    let mut browser = register(&auth, &mut first, "passkey", "owner@example.com").await;
    let owner = db
        .get_user_by_email("owner@example.com")
        .await
        .unwrap()
        .unwrap();
    // Options asked while the sign-in was recent; the registration posted from a session
    // of that user whose sign-in is two hours old (a stolen cookie swapped in).
    let r = options(&auth, &mut browser, "passkey", "?action=register").await;
    assert_eq!(r.json()["action"], "register");
    let mut second = SoftAuthenticator::new();
    let data = second.register(&r.json()["options"], ORIGIN);
    let (stale, _) = session_of(
        &auth,
        &db,
        &owner.id,
        std::time::Duration::from_secs(7200),
        &["hwk", "user", "mfa"],
    )
    .await;
    let (name, value) = stale.split_once('=').unwrap();
    browser.0.retain(|(k, _)| k != name);
    browser.0.push((name.to_owned(), value.to_owned()));
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert!(
        r.location()
            .is_some_and(|l| l.contains("error=ReauthenticationRequired")),
        "{:?}",
        r.location()
    );
    assert_eq!(passkeys_of(&db, "owner@example.com").await, 1);
    // And the options themselves are refused to the stale session: no challenge.
    let r = options(&auth, &mut browser, "passkey", "?action=register").await;
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(r.json()["error"], "ReauthenticationRequired");
    assert!(
        r.json()["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://authjs.test/auth/signin?callbackUrl="))
    );
    assert!(r.set_cookies().iter().all(|c| !c.contains("challenge")));
    // The new key signs nobody in.
    let (r, _) = sign_in(&auth, &mut second, "passkey", "").await;
    assert_ne!(r.location(), Some(ORIGIN));
}

/// Email + passkey over a memory adapter (database sessions), mails kept in `outbox`.
fn email_and_passkey(
    outbox: &Outbox,
    dangerous: bool,
) -> (authcore::Auth, Recorder, MemoryAdapter) {
    let db = MemoryAdapter::new();
    let (auth, rec) = auth_with(
        builder()
            .provider(outbox_provider(outbox))
            .provider(WebAuthnProvider::passkey())
            .adapter(db.clone())
            .dangerous(authcore::config::DangerousOptions {
                passkey_sign_up_without_email_proof: dangerous,
                ..Default::default()
            }),
    );
    (auth, rec, db)
}

/// Signs in by magic link in `browser`.
async fn sign_in_by_email(
    auth: &authcore::Auth,
    outbox: &Outbox,
    browser: &mut Browser,
    email: &str,
) {
    let url = magic_link_url(auth, outbox, email).await;
    let r = send(
        auth,
        http::Request::get(&url)
            .header("cookie", browser.header())
            .body(empty())
            .unwrap(),
    )
    .await;
    browser.keep(&r);
    assert!(r.cookie(SESSION_COOKIE).is_some(), "{:?}", r.headers);
}

/// The pre-registered takeover: an attacker registers a passkey for an address before its
/// owner signs up, then waits for the owner's magic-link sign-in to land in that account.
#[tokio::test]
async fn a_passkey_cannot_prepare_the_account_of_an_unproven_address() {
    let outbox = Outbox::default();
    let (auth, _, db) = email_and_passkey(&outbox, false);
    // A known address, to compare answers with.
    sign_in_by_email(&auth, &outbox, &mut Browser::default(), "known@example.com").await;

    let mut attacker = SoftAuthenticator::new();
    let mut answers = Vec::new();
    for email in [
        "carol@example.com",
        "known@example.com",
        "Carol@Example.com",
    ] {
        for query in [
            format!("?action=register&email={email}"),
            format!("?email={email}&action=register"),
        ] {
            let r = options(&auth, &mut Browser::default(), "passkey", &query).await;
            assert_eq!(r.status, 403, "{query}: {}", r.text());
            assert!(r.cookie(CHALLENGE_COOKIE).is_none(), "{query}: no ceremony");
            answers.push(r.text());
        }
    }
    // Known or not, the answer is the same.
    answers.dedup();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&answers[0]).unwrap()["error"],
        "EmailProofRequired"
    );
    // Without an action, an unknown address gets an authentication, not a registration.
    let mut browser = Browser::default();
    let r = options(&auth, &mut browser, "passkey", "?email=carol@example.com").await;
    assert_eq!(r.json()["action"], "authenticate", "{}", r.text());
    // A registration sent with that challenge cookie is refused too.
    let data = attacker.authenticate(&r.json()["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(
        db.get_user_by_email("carol@example.com")
            .await
            .unwrap()
            .is_none()
    );

    // Carol proves her address, then adds her own passkey; the attacker's cannot sign in.
    let mut carol = Browser::default();
    sign_in_by_email(&auth, &outbox, &mut carol, "carol@example.com").await;
    assert_eq!(passkeys_of(&db, "carol@example.com").await, 0);
    let r = options(&auth, &mut carol, "passkey", "?action=register").await;
    assert_eq!(r.json()["action"], "register");
    let mut own = SoftAuthenticator::new();
    let data = own.register(&r.json()["options"], ORIGIN);
    let r = submit(&auth, &mut carol, "passkey", "register", &data).await;
    assert_eq!(r.location(), Some(ORIGIN), "{:?}", r.headers);
    let (r, _) = sign_in(&auth, &mut own, "passkey", "").await;
    assert_eq!(r.location(), Some(ORIGIN));
    let (r, browser) = sign_in(&auth, &mut attacker, "passkey", "").await;
    assert!(r.cookie(SESSION_COOKIE).is_none(), "{:?}", r.headers);
    assert_eq!(session_email(&auth, &browser).await, Value::Null);
}

/// Auth.js's behaviour is there only behind the dangerous option, and shows why.
#[tokio::test]
async fn the_authjs_passkey_sign_up_is_a_dangerous_option() {
    let outbox = Outbox::default();
    let (auth, _, db) = email_and_passkey(&outbox, true);
    let mut attacker = SoftAuthenticator::new();
    register(&auth, &mut attacker, "passkey", "dave@example.com").await;
    let mut dave = Browser::default();
    sign_in_by_email(&auth, &outbox, &mut dave, "dave@example.com").await;
    // The owner's account carries the attacker's passkey: the takeover the default stops.
    assert_eq!(passkeys_of(&db, "dave@example.com").await, 1);
    let (r, browser) = sign_in(&auth, &mut attacker, "passkey", "").await;
    assert_eq!(r.location(), Some(ORIGIN));
    assert_eq!(session_email(&auth, &browser).await, "dave@example.com");
}

/// Registering a new address with a credential that belongs to someone else fails before
/// anything is written: no user, account or session, nothing planted in the owner's list.
#[tokio::test]
async fn a_registration_with_a_taken_credential_leaves_no_row() {
    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    register(&auth, &mut key, "passkey", "owner@example.com").await;
    let owner = db
        .get_user_by_email("owner@example.com")
        .await
        .unwrap()
        .unwrap();
    let sessions_before = db.list_sessions_by_user_id(&owner.id).await.unwrap().len();

    let mut browser = Browser::default();
    let r = options(
        &auth,
        &mut browser,
        "passkey",
        "?email=intruder@example.com",
    )
    .await;
    assert_eq!(r.json()["action"], "register");
    let data = key.register(&r.json()["options"], ORIGIN);
    let r = send(
        &auth,
        post("/auth/callback/passkey")
            .header("cookie", browser.header())
            .header("user-agent", "planted-session")
            .body(form(&[("action", "register"), ("data", &data.to_string())]))
            .unwrap(),
    )
    .await;
    assert!(r.cookie(SESSION_COOKIE).is_none(), "{:?}", r.headers);
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=AccountNotLinked")
    );
    assert!(
        db.get_user_by_email("intruder@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let sessions = db.list_sessions_by_user_id(&owner.id).await.unwrap();
    assert_eq!(sessions.len(), sessions_before, "{sessions:?}");
    assert_eq!(passkeys_of(&db, "owner@example.com").await, 1);
}

/// `hide_accounts`: the options for a known address list no credential ids, as for an
/// unknown one; without it they do (Auth.js).
#[tokio::test]
async fn hidden_accounts_get_the_same_options_as_unknown_addresses() {
    let outbox = Outbox::default();
    for hide in [false, true] {
        let db = MemoryAdapter::new();
        let (auth, _) = auth_with(
            builder()
                .provider(outbox_provider(&outbox))
                .provider(WebAuthnProvider::passkey().hide_accounts(hide))
                .adapter(db.clone()),
        );
        let mut owner = Browser::default();
        sign_in_by_email(&auth, &outbox, &mut owner, "known@example.com").await;
        let r = options(&auth, &mut owner, "passkey", "?action=register").await;
        let data = SoftAuthenticator::new().register(&r.json()["options"], ORIGIN);
        let r = submit(&auth, &mut owner, "passkey", "register", &data).await;
        assert_eq!(r.location(), Some(ORIGIN));

        let listed = |email: &'static str| {
            let auth = auth.clone();
            async move {
                let r = options(
                    &auth,
                    &mut Browser::default(),
                    "passkey",
                    &format!("?email={email}"),
                )
                .await;
                let body = r.json();
                assert_eq!(body["action"], "authenticate", "{body}");
                body["options"].get("allowCredentials").cloned()
            }
        };
        let known = listed("known@example.com").await;
        let unknown = listed("nobody@example.com").await;
        assert_eq!(unknown, None);
        if hide {
            assert_eq!(known, None);
        } else {
            assert_eq!(known.unwrap().as_array().unwrap().len(), 1);
        }
    }
}

#[tokio::test]
async fn jwt_strategy_and_new_user_page() {
    let db = MemoryAdapter::new();
    let (auth, _) = auth_with(
        builder()
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Jwt)
            .pages(authcore::types::PagesOptions {
                new_user: Some("/welcome".into()),
                ..Default::default()
            })
            .provider(WebAuthnProvider::new()),
    );
    let mut key = SoftAuthenticator::new();
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "webauthn", "?email=j@example.com")
        .await
        .json();
    assert_eq!(
        body["options"]["authenticatorSelection"]["residentKey"],
        "preferred"
    );
    let data = key.register(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "webauthn", "register", &data).await;
    assert_eq!(
        r.location(),
        Some("/welcome?callbackUrl=https%3A%2F%2Fauthjs.test")
    );
    assert!(browser.get("__Secure-authjs.session-token").unwrap().len() > 100);
    assert_eq!(session_email(&auth, &browser).await, "j@example.com");
    // WebAuthn (not passkey): the options only prefer user verification, but Auth.js's
    // verifier (SimpleWebAuthn's default `requireUserVerification: true`) still insists.
    key.user_verified = false;
    let (r, _) = sign_in(&auth, &mut key, "webauthn", "?email=j@example.com").await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
}

#[tokio::test]
async fn relying_party_from_config() {
    let (auth, _, _) = setup(WebAuthnProvider::passkey().relying_party(RelyingParty::new(
        "authjs.test",
        "Auth.js test",
        "https://login.authjs.test",
    )));
    let mut key = SoftAuthenticator::new();
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "?email=rp@example.com")
        .await
        .json();
    assert_eq!(body["options"]["rp"]["name"], "Auth.js test");
    // The browser reports the page's origin: the request URL's is not the configured one.
    let data = key.register(&body["options"], ORIGIN);
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert_eq!(r.location(), Some(VERIFY_ERROR));
    let body = options(&auth, &mut browser, "passkey", "?email=rp@example.com")
        .await
        .json();
    let data = key.register(&body["options"], "https://login.authjs.test");
    let r = submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert_eq!(r.location(), Some(ORIGIN));
}

#[test]
fn configuration_checks() {
    let base = || {
        AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(WebAuthnProvider::passkey())
    };
    assert!(matches!(
        base().build().unwrap_err(),
        ConfigError::WebAuthnMissingAdapter
    ));
    let e = base()
        .adapter(MemoryAdapter::new())
        .provider(WebAuthnProvider::new())
        .build()
        .unwrap_err();
    assert!(
        matches!(e, ConfigError::DuplicateConditionalUI { .. }),
        "{e}"
    );
    let e = AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .adapter(MemoryAdapter::new())
        .provider(WebAuthnProvider::passkey().form_fields(vec![]))
        .build()
        .unwrap_err();
    assert!(
        matches!(e, ConfigError::MissingWebAuthnAutocomplete { .. }),
        "{e}"
    );
    assert!(base().adapter(MemoryAdapter::new()).build().is_ok());
    // A timeout too large for the options is capped, not a panic at sign-in time.
    let (auth, _, _) =
        setup(WebAuthnProvider::passkey().timeout(std::time::Duration::from_secs(u64::MAX / 2)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let body = rt.block_on(async {
        options(
            &auth,
            &mut Browser::default(),
            "passkey",
            "?email=t@example.com",
        )
        .await
        .json()
    });
    assert_eq!(body["options"]["timeout"], u64::from(u32::MAX));
    // Auth.js's flag is accepted (deprecated: it changes nothing), not required.
    #[allow(deprecated)]
    let with_flag = base()
        .adapter(MemoryAdapter::new())
        .experimental_enable_webauthn(true)
        .build();
    assert!(with_flag.is_ok());
}

/// An authenticator registered by an Auth.js app — the row `@simplewebauthn/server` 9.0.3
/// (the verifier @auth/core uses) produced, stored as Auth.js stores it — signs in here,
/// for an ES256 key and for an Ed25519 one (Auth.js offers EdDSA first).
#[tokio::test]
async fn authenticator_row_made_by_simplewebauthn_signs_in() {
    for key in [SoftAuthenticator::new(), SoftAuthenticator::ed25519()] {
        authjs_row_signs_in(key).await;
    }
}

async fn authjs_row_signs_in(mut key: SoftAuthenticator) {
    use authcore::adapter::NewUser;
    use authcore::types::{Account, Authenticator, ProviderType};

    let alg = key.algorithm();
    crate::interop_node::interop_dir("@simplewebauthn/server");
    let challenge = "YXV0aGpzLXJlZ2lzdHJhdGlvbi1jaGFsbGVuZ2U";
    let options = serde_json::json!({
        "challenge": challenge,
        "rp": { "id": "authjs.test", "name": "authjs.test" },
        "user": { "id": "YXV0aGpzLXVzZXI", "name": "authjs@example.com", "displayName": "" },
        "pubKeyCredParams": [
            { "type": "public-key", "alg": -8 },
            { "type": "public-key", "alg": -7 },
            { "type": "public-key", "alg": -257 },
        ],
    });
    let response = key.register(&options, ORIGIN);
    let input = serde_json::json!({
        "response": response,
        "expectedChallenge": challenge,
        "expectedOrigin": ORIGIN,
        "expectedRPID": "authjs.test",
    });
    let out = crate::interop_node::run("webauthn-register.mjs", &input).unwrap_or_else(|| {
        panic!("@simplewebauthn/server refused the registration of a {alg} key")
    });
    let row: Authenticator = serde_json::from_slice(&out).unwrap();
    assert_eq!(row.credential_device_type, "multiDevice");

    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let user = db
        .create_user(NewUser {
            email: Some("authjs@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut account = Account::new(
        ProviderType::Webauthn,
        "passkey".to_owned(),
        row.provider_account_id.clone(),
    );
    account.user_id = Some(user.id.clone());
    db.link_account(account).await.unwrap();
    let credential_id = row.credential_id.clone();
    db.create_authenticator(Authenticator {
        user_id: Some(user.id.clone()),
        ..row
    })
    .await
    .unwrap();

    let (r, browser) = sign_in(&auth, &mut key, "passkey", "?email=authjs@example.com").await;
    assert_eq!(r.location(), Some(ORIGIN), "{alg}");
    assert_eq!(session_email(&auth, &browser).await, "authjs@example.com");
    let stored = db.get_authenticator(&credential_id).await.unwrap().unwrap();
    assert_eq!(stored.counter, 2, "{alg}");
    // A forged signature of the same key is refused.
    let mut forged = key.clone();
    forged.tamper_signature = true;
    let (r, _) = sign_in(&auth, &mut forged, "passkey", "").await;
    assert_eq!(r.location(), Some(VERIFY_ERROR), "{alg}");
}

/// The stored public key is the COSE key exactly as the authenticator sent it (as Auth.js
/// stores it), not a re-encoding.
#[tokio::test]
async fn stored_public_key_is_the_authenticators_bytes() {
    use base64::Engine;
    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "?email=bytes@example.com")
        .await
        .json();
    let data = key.register(&body["options"], ORIGIN);
    let attestation = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data["response"]["attestationObject"].as_str().unwrap())
        .unwrap();
    submit(&auth, &mut browser, "passkey", "register", &data).await;
    let id = base64::engine::general_purpose::STANDARD.encode(key.credential_id());
    let row = db.get_authenticator(&id).await.unwrap().unwrap();
    let stored = base64::engine::general_purpose::STANDARD
        .decode(&row.credential_public_key)
        .unwrap();
    assert!(
        attestation.windows(stored.len()).any(|w| w == stored),
        "the stored key bytes appear verbatim in the attestation object"
    );
}

/// The email of the options request is normalised as everywhere else (NFKC, trimmed,
/// lower-case): a differently cased address finds the existing user instead of creating a
/// second account, and a malformed one is refused.
#[tokio::test]
async fn option_emails_are_normalised() {
    let (auth, _, db) = setup(WebAuthnProvider::passkey());
    let mut key = SoftAuthenticator::new();
    register(&auth, &mut key, "passkey", "case@example.com").await;
    let mut browser = Browser::default();
    let body = options(
        &auth,
        &mut browser,
        "passkey",
        "?email=%20Case%40Example.COM%20",
    )
    .await
    .json();
    assert_eq!(body["action"], "authenticate", "{body}");
    assert_eq!(
        body["options"]["allowCredentials"][0]["id"],
        key.credential_id_b64url()
    );
    // A new address is registered in its normalised form.
    let mut other = SoftAuthenticator::new();
    let mut browser = Browser::default();
    let body = options(&auth, &mut browser, "passkey", "?email=New%40Example.com")
        .await
        .json();
    assert_eq!(body["options"]["user"]["name"], "new@example.com");
    let data = other.register(&body["options"], ORIGIN);
    submit(&auth, &mut browser, "passkey", "register", &data).await;
    assert!(
        db.get_user_by_email("new@example.com")
            .await
            .unwrap()
            .is_some()
    );
    let r = options(
        &auth,
        &mut Browser::default(),
        "passkey",
        "?email=a%0D%0Ab%40example.com",
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "Invalid email");
}
