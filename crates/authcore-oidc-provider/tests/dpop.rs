//! DPoP (RFC 9449) at the provider, over HTTP on loopback. openid-client (npm) as a public
//! client with its own DPoP key (`testsupport/oidc-rp/openid-client-dpop.mjs`, the client
//! of `docs/identity-provider.md` as written) signs a user in: the server's nonce round
//! trip, tokens bound to its key, userinfo and refresh with proofs, and its bound tokens
//! refused as bearer tokens or with another key. Then the attacks, as raw requests with
//! proofs made here (jsonwebtoken): at the token endpoint each one issues no token (and
//! leaves the code unspent), at userinfo each one opens nothing. Opaque access tokens
//! (`access_token_format = "opaque"`, the client of `docs/identity-provider.md` as written)
//! are tested here too, with the same harness: they say nothing, open at userinfo,
//! introspection and revocation, and nothing sealed otherwise opens as one.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use authcore::Auth;
use authcore::adapter::MemoryAdapter;
use authcore::env::Env;
use authcore_oidc_provider::{ClientConfig, ClientSecret, OpenIdProvider, ProviderSection};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

use common::payload;

const AUTH_SECRET: &str = "a DPoP test secret, long enough for the handler";
const RP_SECRET: &str = "dpop-rp-secret-0123456789abcdef0123456";
const CB: &str = "http://127.0.0.1:9/callback";
/// RFC 7636 appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// Test keys (`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`): the
/// client's, and an attacker's.
const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnXZk3x7/8E6Tmi8T\nc6vcsDu9cepkptyD/TrOr2wPzxShRANCAARtPngLuopm/BmPt/Och6gZNBtsOuLt\ntWPi+TYayjRw3PxKJPxwPjZdFe+wVUZPrRDMmeMm1A/l1Z6bX5tavOxI\n-----END PRIVATE KEY-----\n";
const THIEF_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg3BJEmgELTd8V+hrv\nKS/VZuT3ZOOlLQJP2Opvkisw6mWhRANCAAS6Zm4Czy8QRGKI3Q5PH4FxhaMULA7X\nbbWSmElFo+VrW2z/iWj0JBW7Aw/NY9S5GUiCQd3e8v02BHBf97VnLtOn\n-----END PRIVATE KEY-----\n";

/// Instances of one provider (one secret, one key, one user store), each on a port.
struct Op {
    bases: Vec<String>,
    base: String,
    dir: std::path::PathBuf,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The TOML block after `<!-- oidc-provider-test: <name> -->` in
/// `docs/identity-provider.md`, and the first client it configures.
fn doc_client(name: &str) -> (String, ClientConfig) {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/identity-provider.md"),
    )
    .unwrap();
    let marker = format!("<!-- oidc-provider-test: {name} -->");
    let after = &doc[doc.find(&marker).unwrap() + marker.len()..];
    let block = after.split("```toml\n").nth(1).unwrap();
    let block = &block[..block.find("```").unwrap()];
    #[derive(serde::Deserialize)]
    struct File {
        oidc_provider: ProviderSection,
    }
    let file: File = toml::from_str(block).unwrap();
    let client = file.oidc_provider.clients.into_iter().next().unwrap();
    (block.to_owned(), client)
}

/// The client of the DPoP section of `docs/identity-provider.md`, as written (its
/// redirect URI the test's).
fn documented_client() -> ClientConfig {
    let (block, mut client) = doc_client("dpop");
    assert!(client.dpop_bound_access_tokens, "{block}");
    client.redirect_uris = vec![CB.into()];
    client
}

/// The client of the opaque tokens section of `docs/identity-provider.md`, as written (its
/// secret the test's).
fn documented_opaque_client() -> ClientConfig {
    let (block, mut client) = doc_client("opaque");
    assert_eq!(client.id, OPAQUE_SERVICE, "{block}");
    let format = client.access_token_format.as_deref();
    assert_eq!(format, Some("opaque"), "{block}");
    client.secret = Some(ClientSecret::new(RP_SECRET));
    client
}

/// The documented client with opaque tokens (a service).
const OPAQUE_SERVICE: &str = "reports-api";

/// The salt opaque access tokens are sealed with (what the provider's code names it).
const ACCESS_TOKEN_SALT: &str = "authcore.oidc-provider.access-token";

fn client(id: &str, f: impl FnOnce(&mut ClientConfig)) -> ClientConfig {
    let mut c = ClientConfig::default();
    c.id = id.into();
    c.redirect_uris = vec![CB.into()];
    c.grant_types = vec!["authorization_code".into(), "refresh_token".into()];
    f(&mut c);
    c
}

/// `instances` instances of the provider with the documented client, `rp` (a secret),
/// `spa` (public) and `service` (`client_credentials`), and the user ada.
async fn start(instances: usize) -> Op {
    let (dir, key) = common::key_dir("dpop");
    let mut listeners = Vec::new();
    for _ in 0..instances {
        listeners.push(common::loopback().await);
    }
    let base = listeners[0].1.clone();
    let env = Env::from_pairs([
        ("AUTH_SECRET", AUTH_SECRET.to_owned()),
        ("AUTH_URL", format!("{base}/auth")),
    ]);
    let mut section = ProviderSection::default();
    section.signing_keys = vec![key];
    section.clients = vec![
        documented_client(),
        client("rp", |c| c.secret = Some(ClientSecret::new(RP_SECRET))),
        client("spa", |_| {}),
        client("service", |c| {
            c.secret = Some(ClientSecret::new(RP_SECRET));
            c.grant_types = vec!["client_credentials".into()];
            c.redirect_uris.clear();
        }),
        documented_opaque_client(),
        client("rp-opaque", |c| {
            c.secret = Some(ClientSecret::new(RP_SECRET));
            c.access_token_format = Some("opaque".into());
        }),
        // Authenticates with assertions signed by the client's key (its DPoP key too).
        client("keyed", |c| {
            c.token_endpoint_auth_method = Some("private_key_jwt".into());
            c.jwks = Some(json!({"keys": [Prover::new(CLIENT_KEY).jwk]}).to_string());
            c.grant_types = vec!["client_credentials".into()];
            c.redirect_uris.clear();
        }),
    ];
    let provider = Arc::new(OpenIdProvider::new(&env, section).unwrap());
    let users = MemoryAdapter::new();
    common::add_user(&users, "ada").await;
    // The instances share the single-use store, as instances on one database or Redis do.
    let marks = authcore::ratelimit::MemoryRateLimitStore::default();
    let mut bases = Vec::new();
    for (listener, at) in listeners {
        let config = common::handler(&env, &users).single_use_store(marks.clone());
        let auth = Auth::new(config.build().unwrap());
        common::serve(listener, &provider, &auth, &users);
        bases.push(at);
    }
    Op { bases, base, dir }
}

/// A DPoP key pair, as a client holds it: proofs signed with it.
struct Prover {
    key: EncodingKey,
    jwk: Value,
}

impl Prover {
    fn new(pem: &str) -> Self {
        let key = EncodingKey::from_ec_pem(pem.as_bytes()).unwrap();
        let jwk =
            serde_json::to_value(Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap()).unwrap();
        Prover { key, jwk }
    }

    /// The key's thumbprint (RFC 7638): what bound tokens name.
    fn jkt(&self) -> String {
        serde_json::from_value::<Jwk>(self.jwk.clone())
            .unwrap()
            .thumbprint(ThumbprintHash::SHA256)
            .unwrap()
    }

    /// The usual header: `dpop+jwt`, ES256, the public key.
    fn header(&self) -> Value {
        json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk})
    }

    /// A proof with `header` and `claims`, signed with this key.
    fn signed(&self, header: &Value, claims: &Value) -> String {
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature =
            jsonwebtoken::crypto::sign(message.as_bytes(), &self.key, Algorithm::ES256).unwrap();
        format!("{message}.{signature}")
    }

    /// A client assertion (`private_key_jwt`, RFC 7523) of `client` for the provider
    /// `issuer`, signed with this key.
    fn assertion(&self, client: &str, issuer: &str) -> String {
        let claims = json!({
            "iss": client, "sub": client, "aud": issuer, "jti": fresh_jti(),
            "iat": now(), "exp": now() + 60,
        });
        self.signed(&json!({"typ": "JWT", "alg": "ES256"}), &claims)
    }

    /// A proof for `htm` `htu` now, with a fresh `jti`, and `nonce` and the hash of
    /// `access` if given.
    fn proof(&self, htm: &str, htu: &str, nonce: Option<&str>, access: Option<&str>) -> String {
        self.signed(&self.header(), &claims(htm, htu, nonce, access))
    }
}

/// A `jti` never sent before.
fn fresh_jti() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "jti-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

fn claims(htm: &str, htu: &str, nonce: Option<&str>, access: Option<&str>) -> Value {
    let mut c = json!({"jti": fresh_jti(), "htm": htm, "htu": htu, "iat": now()});
    if let Some(nonce) = nonce {
        c["nonce"] = json!(nonce);
    }
    if let Some(access) = access {
        c["ath"] = json!(
            URL_SAFE_NO_PAD.encode(<sha2::Sha256 as sha2::Digest>::digest(access.as_bytes()))
        );
    }
    c
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

/// An answer: status, `WWW-Authenticate`, `DPoP-Nonce` and the body.
#[derive(Debug)]
struct Answer {
    status: u16,
    challenge: String,
    nonce: Option<String>,
    body: String,
}

impl Answer {
    async fn of(r: reqwest::Response) -> Self {
        let header = |name: &str| {
            r.headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let (challenge, nonce) = (header("www-authenticate"), header("dpop-nonce"));
        Answer {
            status: r.status().as_u16(),
            challenge: challenge.unwrap_or_default(),
            nonce,
            body: r.text().await.unwrap(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or_default().to_owned()
    }
}

impl Op {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A code for `client` in `browser` (with PKCE).
    async fn code(&self, browser: &reqwest::Client, client: &str) -> String {
        code_in(&self.authorize(browser, client, &[]).await)
    }

    /// `rp` redeems `code` with a proof of `prover`'s key carrying `nonce`.
    async fn redeem_with(&self, code: &str, prover: &Prover, nonce: &str) -> Answer {
        let proof = prover.proof("POST", &self.url("/oidc/token"), Some(nonce), None);
        self.token("rp", &redeem(code), &[&proof]).await
    }

    /// Where `/oidc/authorize` sends the signed-in `browser` for a request of `client`
    /// with `extra` parameters.
    async fn authorize(
        &self,
        browser: &reqwest::Client,
        client: &str,
        extra: &[(&str, &str)],
    ) -> url::Url {
        let mut url = url::Url::parse(&self.url("/oidc/authorize")).unwrap();
        url.query_pairs_mut().extend_pairs([
            ("client_id", client),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email offline_access"),
            ("state", "st"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ]);
        url.query_pairs_mut().extend_pairs(extra);
        let r = browser.get(url).send().await.unwrap();
        url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap()
    }

    /// `POST /oidc/token` at instance `at` as `client` (with its secret, if it has one),
    /// with `form` and the `DPoP` headers `proofs`.
    async fn token_at(
        &self,
        at: usize,
        client: &str,
        form: &[(&str, &str)],
        proofs: &[&str],
    ) -> Answer {
        let mut r = reqwest::Client::new().post(format!("{}/oidc/token", self.bases[at]));
        let mut form = form.to_vec();
        match client {
            "rp" | "service" | "rp-opaque" | OPAQUE_SERVICE => {
                r = r.basic_auth(client, Some(RP_SECRET));
            }
            _ => form.push(("client_id", client)),
        }
        for proof in proofs {
            r = r.header("DPoP", *proof);
        }
        Answer::of(r.form(&form).send().await.unwrap()).await
    }

    async fn token(&self, client: &str, form: &[(&str, &str)], proofs: &[&str]) -> Answer {
        self.token_at(0, client, form, proofs).await
    }

    /// `POST path` (introspection, revocation) by client `rp` about `token`.
    async fn rp_token_call(&self, path: &str, token: &str) -> reqwest::Response {
        self.token_call("rp", path, token).await
    }

    /// `POST path` (introspection, revocation) by `client` (a secret of [`RP_SECRET`])
    /// about `token`.
    async fn token_call(&self, client: &str, path: &str, token: &str) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url(path))
            .basic_auth(client, Some(RP_SECRET))
            .form(&[("token", token)])
            .send()
            .await
            .unwrap()
    }

    /// What introspection tells `client` of `token`.
    async fn introspect(&self, client: &str, token: &str) -> Value {
        let r = self.token_call(client, "/oidc/introspect", token).await;
        r.json().await.unwrap()
    }

    /// `GET /oidc/userinfo` with `authorization` and the `DPoP` headers `proofs`.
    async fn userinfo(&self, authorization: &str, proofs: &[&str]) -> Answer {
        let mut r = reqwest::Client::new()
            .get(self.url("/oidc/userinfo"))
            .header("Authorization", authorization);
        for proof in proofs {
            r = r.header("DPoP", *proof);
        }
        Answer::of(r.send().await.unwrap()).await
    }

    /// A nonce of the provider: the `use_dpop_nonce` answer to a proof without one.
    async fn nonce(&self, prover: &Prover) -> String {
        let form = [("grant_type", "client_credentials")];
        let proof = prover.proof("POST", &self.url("/oidc/token"), None, None);
        let a = self.token("service", &form, &[&proof]).await;
        assert_eq!(
            (a.status, a.error().as_str()),
            (400, "use_dpop_nonce"),
            "{a:?}"
        );
        a.nonce.unwrap()
    }
}

/// A client that authenticates with a signed assertion (`private_key_jwt`, whose `jti` is
/// used once) goes through the nonce round trip with one assertion, as a client library
/// sends the same request again with the nonce: `use_dpop_nonce` comes before the
/// assertion is used, so the second try gets the token, bound to the key; a third use of the
/// assertion is refused, and the proof is checked before the client either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_assertion_outlives_the_nonce_round_trip() {
    let op = start(1).await;
    let prover = Prover::new(CLIENT_KEY);
    let (issuer, url) = (op.url("/oidc"), op.url("/oidc/token"));
    let assertion = prover.assertion("keyed", &issuer);
    let form = [
        ("grant_type", "client_credentials"),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ),
        ("client_assertion", assertion.as_str()),
    ];
    let first = op
        .token("keyed", &form, &[&prover.proof("POST", &url, None, None)])
        .await;
    assert_eq!(
        (first.status, first.error().as_str()),
        (400, "use_dpop_nonce"),
        "{first:?}"
    );
    let nonce = first.nonce.clone().unwrap();
    let second = op
        .token(
            "keyed",
            &form,
            &[&prover.proof("POST", &url, Some(&nonce), None)],
        )
        .await;
    assert_eq!(second.status, 200, "{second:?}");
    assert_eq!(second.json()["token_type"], "DPoP", "{second:?}");
    let access = second.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(payload(&access)["cnf"]["jkt"], json!(prover.jkt()));
    let third = op
        .token(
            "keyed",
            &form,
            &[&prover.proof("POST", &url, Some(&nonce), None)],
        )
        .await;
    refused(&third, (401, "invalid_client"), "a spent assertion");
}

/// A code bound to a key (`dpop_jkt`, RFC 9449 §10) is redeemed only with a proof of that
/// key: without a proof or with another key's it gives no token and stays unspent, so the
/// client still redeems it; a malformed or repeated `dpop_jkt` gives no code at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_bound_to_a_key_is_redeemed_only_with_that_key() {
    let op = start(1).await;
    let (browser, _) = common::signed_in_browser(&op.base, "ada").await;
    let (client, thief) = (Prover::new(CLIENT_KEY), Prover::new(THIEF_KEY));
    let url = op.url("/oidc/token");
    let jkt = client.jkt();
    let to = op.authorize(&browser, "rp", &[("dpop_jkt", &jkt)]).await;
    let code = code_in(&to);
    let thief_nonce = op.nonce(&thief).await;
    for (case, proofs) in [
        ("no proof", Vec::new()),
        (
            "another key's proof",
            vec![thief.proof("POST", &url, Some(&thief_nonce), None)],
        ),
    ] {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let a = op.token("rp", &redeem(&code), &proofs).await;
        refused(&a, (400, "invalid_grant"), case);
    }
    let nonce = op.nonce(&client).await;
    let a = op.redeem_with(&code, &client, &nonce).await;
    bound_to(&a, &client);

    let short = &jkt[..42];
    let padded = format!("{jkt}=");
    let not_base64 = "!".repeat(43);
    for (case, extra) in [
        ("too short", vec![("dpop_jkt", short)]),
        ("padded", vec![("dpop_jkt", padded.as_str())]),
        ("not base64url", vec![("dpop_jkt", not_base64.as_str())]),
        (
            "repeated",
            vec![("dpop_jkt", jkt.as_str()), ("dpop_jkt", jkt.as_str())],
        ),
    ] {
        let to = op.authorize(&browser, "rp", &extra).await;
        let pairs: Vec<(String, String)> = to.query_pairs().into_owned().collect();
        assert!(
            pairs
                .iter()
                .any(|(k, v)| k == "error" && v == "invalid_request")
                && !pairs.iter().any(|(k, _)| k == "code"),
            "{case}: {to}"
        );
    }
}

/// A DPoP proof sent with a pushed request (RFC 9449 §10.1) binds the code to its key:
/// another key's proof redeems nothing (and the code stays unspent), the key's redeems it.
/// Proofs at the PAR endpoint are checked as at the token endpoint: one for another URL, a
/// replay, one without the nonce, and one beside a `dpop_jkt` of another key push nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proof_sent_with_a_pushed_request_binds_the_code() {
    let op = start(1).await;
    let (browser, _) = common::signed_in_browser(&op.base, "ada").await;
    let (client, thief) = (Prover::new(CLIENT_KEY), Prover::new(THIEF_KEY));
    let (par, token) = (op.url("/oidc/par"), op.url("/oidc/token"));
    let nonce = op.nonce(&client).await;
    let params = [
        ("redirect_uri", CB),
        ("response_type", "code"),
        ("scope", "openid email"),
        ("state", "st"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let push = |extra: Vec<(&'static str, String)>, proofs: Vec<String>| {
        let mut r = reqwest::Client::new()
            .post(&par)
            .basic_auth("rp", Some(RP_SECRET));
        for proof in &proofs {
            r = r.header("DPoP", proof.as_str());
        }
        let mut form: Vec<(&str, String)> =
            params.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        form.extend(extra);
        async move { Answer::of(r.form(&form).send().await.unwrap()).await }
    };

    let proof = client.proof("POST", &par, Some(&nonce), None);
    let pushed = push(Vec::new(), vec![proof.clone()]).await;
    assert_eq!(pushed.status, 201, "{pushed:?}");
    let request_uri = pushed.json()["request_uri"].as_str().unwrap().to_owned();
    for (case, extra, proofs) in [
        ("the same proof again", Vec::new(), vec![proof]),
        (
            "a proof for the token endpoint",
            Vec::new(),
            vec![client.proof("POST", &token, Some(&nonce), None)],
        ),
        (
            "a proof without the nonce",
            Vec::new(),
            vec![client.proof("POST", &par, None, None)],
        ),
        (
            "dpop_jkt of another key beside the proof",
            vec![("dpop_jkt", thief.jkt())],
            vec![client.proof("POST", &par, Some(&nonce), None)],
        ),
    ] {
        let a = push(extra, proofs).await;
        assert_eq!(a.status, 400, "{case}: {a:?}");
        assert!(
            ["invalid_dpop_proof", "use_dpop_nonce"].contains(&a.error().as_str()),
            "{case}: {a:?}"
        );
        assert!(!a.body.contains("request_uri"), "{case}: {a:?}");
    }

    let mut url = url::Url::parse(&op.url("/oidc/authorize")).unwrap();
    url.query_pairs_mut()
        .extend_pairs([("client_id", "rp"), ("request_uri", request_uri.as_str())]);
    let r = browser.get(url).send().await.unwrap();
    let to = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
    let code = code_in(&to);
    let thief_nonce = op.nonce(&thief).await;
    let stolen = op.redeem_with(&code, &thief, &thief_nonce).await;
    refused(&stolen, (400, "invalid_grant"), "another key's proof");
    let a = op.redeem_with(&code, &client, &nonce).await;
    bound_to(&a, &client);
}

/// The code a redirect to the client carries.
fn code_in(to: &url::Url) -> String {
    to.query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no code: {to}"))
}

fn redeem(code: &str) -> [(&str, &str); 4] {
    [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CB),
        ("code_verifier", VERIFIER),
    ]
}

fn refresh(token: &str) -> [(&str, &str); 2] {
    [("grant_type", "refresh_token"), ("refresh_token", token)]
}

/// A token request refused with `status` and `error`, and no token in it.
fn refused(a: &Answer, (status, error): (u16, &str), case: &str) {
    assert_eq!(
        (a.status, a.error().as_str()),
        (status, error),
        "{case}: {a:?}"
    );
    no_token(a, case);
}

/// A token request answered with an access token bound to `prover`'s key.
fn bound_to(a: &Answer, prover: &Prover) {
    assert_eq!(a.status, 200, "{a:?}");
    let access = a.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(payload(&access)["cnf"]["jkt"], json!(prover.jkt()), "{a:?}");
}

/// A refused token request: a `4xx` and no token in it.
fn no_token(a: &Answer, case: &str) {
    assert!((400..500).contains(&a.status), "{case}: {a:?}");
    assert!(!a.body.contains("access_token"), "{case}: {a:?}");
    assert!(!a.body.contains("refresh_token"), "{case}: {a:?}");
}

/// A refused userinfo request: `401`, a `DPoP` challenge, and nothing of the user.
fn nothing_open(a: &Answer, case: &str) {
    assert_eq!(a.status, 401, "{case}: {a:?}");
    assert!(a.challenge.starts_with("DPoP error="), "{case}: {a:?}");
    assert!(!a.body.contains("ada"), "{case}: {a:?}");
}

/// The lines a Node script printed, as JSON; fails when it failed.
async fn node_steps(script: &str, args: &[&str]) -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/oidc-rp");
    assert!(
        dir.join("node_modules/openid-client").is_dir(),
        "run `npm ci --prefix testsupport/oidc-rp` first"
    );
    let run = tokio::process::Command::new("node")
        .current_dir(&dir)
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the relying party finishes within a minute")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        out.status.success() && steps.last().is_some_and(|s| s["done"] == true),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    steps
}

/// openid-client, as the documented public client with a DPoP key of its own: the nonce
/// round trip, bound tokens (`token_type: DPoP`, `cnf.jkt` its key's thumbprint), userinfo
/// and a refresh with proofs; the bound access token refused without its proof or with
/// another key, the bound refresh token refused with another key and still the client's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openid_client_binds_its_tokens_to_its_key() {
    let op = start(1).await;
    let issuer = op.url("/oidc");
    // Its authorization request sent directly, then pushed with a proof (RFC 9126, RFC 9449
    // §10.1): the nonce round trip happens at the first endpoint that takes a proof.
    for (mode, first) in [("direct", "/oidc/token"), ("par", "/oidc/par")] {
        let (_browser, cookie) = common::signed_in_browser(&op.base, "ada").await;
        let steps = node_steps(
            "openid-client-dpop.mjs",
            &[&issuer, "mobile", CB, cookie.as_str(), mode],
        )
        .await;
        openid_client_steps_hold(&steps, first, mode);
    }
}

/// What openid-client's run in `mode` shows: the nonce round trip at `first`, bound tokens,
/// userinfo only with the key's proof, refresh only with the key.
fn openid_client_steps_hold(steps: &[Value], first: &str, mode: &str) {
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("{mode}: no {name}: {steps:?}"))
            .clone()
    };
    let requests = |path: &str| -> Vec<Value> {
        steps
            .iter()
            .filter(|s| s["step"] == "request" && s["path"] == path)
            .cloned()
            .collect()
    };
    let algs = step("discovery")["algs"].clone();
    assert!(algs.as_array().unwrap().contains(&json!("ES256")), "{algs}");
    for weak in ["none", "HS256"] {
        assert!(!algs.as_array().unwrap().contains(&json!(weak)), "{algs}");
    }
    // The nonce round trip: the first request with a proof, without a nonce, is answered
    // with use_dpop_nonce and one; the library tries again with it.
    let round_trip = requests(first);
    assert_eq!(round_trip[0]["status"], 400, "{mode}: {round_trip:?}");
    assert!(
        round_trip[0]["error"]
            .as_str()
            .unwrap()
            .contains("use_dpop_nonce"),
        "{mode}: {round_trip:?}"
    );
    assert_eq!(round_trip[0]["nonce"], true);
    assert!(
        round_trip[1]["status"] == 200 || round_trip[1]["status"] == 201,
        "{mode}: {round_trip:?}"
    );
    let token_requests = requests("/oidc/token");
    assert!(token_requests.iter().all(|r| r["proof"] == true), "{mode}");
    if mode == "par" {
        // The nonce the push got serves the token request at once.
        assert!(requests("/oidc/par").iter().all(|r| r["proof"] == true));
        assert_eq!(
            token_requests[0]["status"], 200,
            "{mode}: {token_requests:?}"
        );
    }
    let signed_in = step("signed-in");
    let jkt = signed_in["jkt"].as_str().unwrap();
    for s in [&signed_in, &step("refreshed")] {
        assert!(
            s["tokenType"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("dpop"),
            "{mode}: {s}"
        );
        let access = payload(s["access"].as_str().unwrap());
        assert_eq!(access["cnf"]["jkt"], jkt, "{mode}: {access}");
        assert_eq!(s["userinfo"]["email"], "ada@example.com", "{mode}: {s}");
    }
    let userinfo_requests = requests("/oidc/userinfo");
    assert_eq!(
        (
            userinfo_requests[0]["scheme"].as_str(),
            userinfo_requests[0]["proof"].as_bool()
        ),
        (Some("DPoP"), Some(true))
    );
    for name in ["as-bearer", "thief-userinfo", "thief-refresh"] {
        assert_eq!(step(name)["accepted"], false, "{mode}: {name}: {steps:?}");
    }
    assert_eq!(step("thief-refresh")["reason"], "invalid_grant");
    assert!(
        step("refreshed-again")["tokenType"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case("dpop")
    );
}

/// Proofs an attacker makes at the token endpoint, each refused with no token and the code
/// left unspent (the right proof redeems it afterwards); then at userinfo, with the bound
/// access token, each refused with nothing of the user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_with_proofs_get_no_token_and_no_userinfo() {
    let op = start(1).await;
    let (browser, _) = common::signed_in_browser(&op.base, "ada").await;
    let client = Prover::new(CLIENT_KEY);
    let thief = Prover::new(THIEF_KEY);
    let token_url = op.url("/oidc/token");
    let userinfo_url = op.url("/oidc/userinfo");
    let nonce = op.nonce(&client).await;
    let n = Some(nonce.as_str());
    let code = op.code(&browser, "rp").await;

    // Discovery names the algorithms: asymmetric ones only.
    let metadata: Value = reqwest::get(op.url("/oidc/.well-known/openid-configuration"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let algs = metadata["dpop_signing_alg_values_supported"].clone();
    assert!(algs.as_array().unwrap().contains(&json!("ES256")), "{algs}");
    assert!(
        !algs
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "none" || a.as_str().unwrap().starts_with("HS")),
        "{algs}"
    );

    let at = |htm: &str, htu: &str, iat: i64| {
        let mut c = claims(htm, htu, n, None);
        c["iat"] = json!(iat);
        client.signed(&client.header(), &c)
    };
    let unsigned = |header: &Value, claims: &Value| {
        format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        )
    };
    let mut private = client.jwk.clone();
    private["d"] = json!("nXZk3x7_8E6Tmi8Tc6vcsDu9cepkptyD_TrOr2wPzxQ");
    let hmac_secret = b"a secret the attacker chose, 32b";
    let hs256 = {
        let header = json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": {"kty": "oct", "k": URL_SAFE_NO_PAD.encode(hmac_secret)}});
        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims("POST", &token_url, n, None).to_string())
        );
        let key = EncodingKey::from_secret(hmac_secret);
        let signature =
            jsonwebtoken::crypto::sign(message.as_bytes(), &key, Algorithm::HS256).unwrap();
        format!("{message}.{signature}")
    };
    let good = client.proof("POST", &token_url, n, None);
    let post = |htu: &str| claims("POST", htu, n, None);
    let token_attacks: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "a proof for GET",
            vec![at("GET", &token_url, now())],
            "invalid_dpop_proof",
        ),
        (
            "a proof for userinfo",
            vec![at("POST", &userinfo_url, now())],
            "invalid_dpop_proof",
        ),
        (
            "a proof for another server",
            vec![at("POST", "https://evil.example/oidc/token", now())],
            "invalid_dpop_proof",
        ),
        (
            "a proof two minutes old",
            vec![at("POST", &token_url, now() - 120)],
            "invalid_dpop_proof",
        ),
        (
            "a proof from the future",
            vec![at("POST", &token_url, now() + 120)],
            "invalid_dpop_proof",
        ),
        (
            "alg none",
            vec![unsigned(
                &json!({"typ": "dpop+jwt", "alg": "none", "jwk": client.jwk}),
                &post(&token_url),
            )],
            "invalid_dpop_proof",
        ),
        (
            "HS256 with its key in jwk",
            vec![hs256],
            "invalid_dpop_proof",
        ),
        (
            "a private key in jwk",
            vec![client.signed(
                &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private}),
                &post(&token_url),
            )],
            "invalid_dpop_proof",
        ),
        (
            "typ JWT",
            vec![client.signed(
                &json!({"typ": "JWT", "alg": "ES256", "jwk": client.jwk}),
                &post(&token_url),
            )],
            "invalid_dpop_proof",
        ),
        (
            "signed with another key than its jwk",
            vec![thief.signed(&client.header(), &post(&token_url))],
            "invalid_dpop_proof",
        ),
        (
            "malformed",
            vec!["not.a.proof".into()],
            "invalid_dpop_proof",
        ),
        ("oversize", vec!["e".repeat(9000)], "invalid_dpop_proof"),
        (
            "two proofs",
            vec![good.clone(), client.proof("POST", &token_url, n, None)],
            "invalid_dpop_proof",
        ),
        (
            "no nonce",
            vec![client.proof("POST", &token_url, None, None)],
            "use_dpop_nonce",
        ),
        (
            "a made-up nonce",
            vec![client.proof("POST", &token_url, Some("made-up"), None)],
            "use_dpop_nonce",
        ),
        // Sealed under the same secret, for another purpose.
        (
            "the code as a nonce",
            vec![client.proof("POST", &token_url, Some(&code), None)],
            "use_dpop_nonce",
        ),
        (
            "a nonce cut short",
            vec![client.proof("POST", &token_url, Some(&nonce[..nonce.len() - 2]), None)],
            "use_dpop_nonce",
        ),
    ];
    for (case, proofs, error) in &token_attacks {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let a = op.token("rp", &redeem(&code), &proofs).await;
        no_token(&a, case);
        assert_eq!(a.error(), *error, "{case}: {a:?}");
    }

    // The code was not spent: the right proof redeems it, bound to the client's key.
    let a = op.token("rp", &redeem(&code), &[&good]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let tokens = a.json();
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    assert!(a.nonce.is_some(), "a fresh nonce with the tokens");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(payload(&access)["cnf"]["jkt"], client.jkt());
    // The same proof again (a replay, here for a refresh): refused.
    let rt = tokens["refresh_token"].as_str().unwrap();
    let a = op.token("rp", &refresh(rt), &[&good]).await;
    no_token(&a, "a replayed proof");
    assert_eq!(a.error(), "invalid_dpop_proof");
    // Introspection tells the binding (RFC 9449 §6.2).
    let r = op.rp_token_call("/oidc/introspect", &access).await;
    let seen: Value = r.json().await.unwrap();
    assert_eq!(
        (&seen["active"], &seen["token_type"], &seen["cnf"]["jkt"]),
        (&json!(true), &json!("DPoP"), &json!(client.jkt())),
        "{seen}"
    );

    // Userinfo with the bound access token. A proof without a nonce of the provider, or
    // with one it did not make, opens nothing and is answered with a nonce (§9).
    let dpop = format!("DPoP {access}");
    let bearer = format!("Bearer {access}");
    let at = Some(access.as_str());
    let mut offered = None;
    for (case, nonce) in [
        ("a proof without a nonce", None),
        ("a nonce not of the provider", Some("forged.nonce")),
        (
            "a token endpoint's nonce tampered with",
            Some(&*format!("{nonce}x")),
        ),
    ] {
        let a = op
            .userinfo(&dpop, &[&client.proof("GET", &userinfo_url, nonce, at)])
            .await;
        nothing_open(&a, case);
        assert!(a.challenge.contains("use_dpop_nonce"), "{case}: {a:?}");
        offered = a.nonce;
        assert!(offered.is_some(), "{case}: a nonce offered");
    }
    let nonce = offered.unwrap();
    let n = Some(nonce.as_str());
    let get = |c: &Prover, htm: &str, htu: &str, token: Option<&str>| c.proof(htm, htu, n, token);
    let old = {
        let mut c = claims("GET", &userinfo_url, n, at);
        c["iat"] = json!(now() - 120);
        client.signed(&client.header(), &c)
    };
    let future = {
        let mut c = claims("GET", &userinfo_url, n, at);
        c["iat"] = json!(now() + 120);
        client.signed(&client.header(), &c)
    };
    let userinfo_attacks: Vec<(&str, &str, Vec<String>)> = vec![
        ("as a bearer token", &bearer, vec![]),
        (
            "as a bearer token with a proof",
            &bearer,
            vec![get(&client, "GET", &userinfo_url, at)],
        ),
        ("DPoP without a proof", &dpop, vec![]),
        (
            "a proof without ath",
            &dpop,
            vec![get(&client, "GET", &userinfo_url, None)],
        ),
        (
            "ath of another token",
            &dpop,
            vec![get(&client, "GET", &userinfo_url, Some("another-token"))],
        ),
        (
            "a proof of another key",
            &dpop,
            vec![get(&thief, "GET", &userinfo_url, at)],
        ),
        (
            "a proof for POST",
            &dpop,
            vec![get(&client, "POST", &userinfo_url, at)],
        ),
        (
            "a proof for the token endpoint",
            &dpop,
            vec![get(&client, "GET", &token_url, at)],
        ),
        ("a proof two minutes old", &dpop, vec![old]),
        ("a proof from the future", &dpop, vec![future]),
        (
            "alg none",
            &dpop,
            vec![unsigned(
                &json!({"typ": "dpop+jwt", "alg": "none", "jwk": client.jwk}),
                &claims("GET", &userinfo_url, n, at),
            )],
        ),
        (
            "a private key in jwk",
            &dpop,
            vec![client.signed(
                &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private}),
                &claims("GET", &userinfo_url, n, at),
            )],
        ),
        (
            "signed with another key than its jwk",
            &dpop,
            vec![thief.signed(&client.header(), &claims("GET", &userinfo_url, n, at))],
        ),
        (
            "two proofs",
            &dpop,
            vec![
                get(&client, "GET", &userinfo_url, at),
                get(&client, "GET", &userinfo_url, at),
            ],
        ),
        ("oversize", &dpop, vec!["e".repeat(9000)]),
        ("malformed", &dpop, vec!["not.a.proof".into()]),
    ];
    for (case, authorization, proofs) in &userinfo_attacks {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        nothing_open(&op.userinfo(authorization, &proofs).await, case);
    }
    // The token named twice (as DPoP and as Bearer) beside a right proof: refused, the
    // proof unspent.
    let twice = get(&client, "GET", &userinfo_url, at);
    let r = reqwest::Client::new()
        .get(&userinfo_url)
        .header("Authorization", &dpop)
        .header("Authorization", &bearer)
        .header("DPoP", &twice)
        .send()
        .await
        .unwrap();
    let a = Answer::of(r).await;
    assert!(
        matches!(a.status, 400 | 401),
        "two Authorization headers: {a:?}"
    );
    assert!(!a.body.contains("ada"), "two Authorization headers: {a:?}");
    // HEAD with a proof made for GET: a proof's htm is the request's own method.
    let r = reqwest::Client::new()
        .head(&userinfo_url)
        .header("Authorization", &dpop)
        .header("DPoP", get(&client, "GET", &userinfo_url, at))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "HEAD with a GET proof");
    let challenge = r.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("invalid_dpop_proof"), "{challenge}");
    // The right proof opens it, once.
    let right = get(&client, "GET", &userinfo_url, at);
    let a = op.userinfo(&dpop, &[&right]).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["email"], "ada@example.com");
    assert!(a.nonce.is_some(), "a fresh nonce for the next proofs");
    let a = op.userinfo(&dpop, &[&right]).await;
    nothing_open(&a, "a replayed proof");
    assert!(a.challenge.contains("invalid_dpop_proof"), "{a:?}");
    // Revoked (RFC 7009), the token opens nothing even with a fresh, right proof and the
    // provider's nonce: the proof is checked before the stores, the revocation still holds.
    let r = op.rp_token_call("/oidc/revoke", &access).await;
    assert_eq!(r.status(), 200);
    let a = op
        .userinfo(&dpop, &[&get(&client, "GET", &userinfo_url, at)])
        .await;
    nothing_open(&a, "a revoked token with a right proof");
    assert!(a.challenge.contains("invalid_token"), "{a:?}");
}

/// RFC 9449 §5: a public client's refresh token is bound to its key (refused without a
/// proof of it; an unbound one is followed by a bound one at a refresh with a proof), a
/// confidential client's is not (its authentication binds it); a client
/// with `dpop_bound_access_tokens` gets no token without a proof; an unbound token is no
/// DPoP token; a nonce of one instance holds at another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_tokens_clients_and_instances() {
    let op = start(2).await;
    let (browser, _) = common::signed_in_browser(&op.base, "ada").await;
    let client = Prover::new(CLIENT_KEY);
    let thief = Prover::new(THIEF_KEY);
    let token_url = op.url("/oidc/token");
    let nonce = op.nonce(&client).await;
    let n = Some(nonce.as_str());
    let proof = |p: &Prover| p.proof("POST", &token_url, n, None);

    // spa (public): its refresh token is bound.
    let code = op.code(&browser, "spa").await;
    let a = op.token("spa", &redeem(&code), &[&proof(&client)]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let rt = a.json()["refresh_token"].as_str().unwrap().to_owned();
    for (case, proofs) in [
        ("without a proof", vec![]),
        ("with a proof of another key", vec![proof(&thief)]),
    ] {
        let proofs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let a = op.token("spa", &refresh(&rt), &proofs).await;
        no_token(&a, case);
        assert_eq!(a.error(), "invalid_grant", "{case}");
    }
    let a = op.token("spa", &refresh(&rt), &[&proof(&client)]).await;
    assert_eq!(a.status, 200, "the client's own key refreshes it: {a:?}");
    let next = a.json();
    assert_eq!(next["token_type"], "DPoP");
    let a = op
        .token(
            "spa",
            &refresh(next["refresh_token"].as_str().unwrap()),
            &[],
        )
        .await;
    no_token(&a, "the next refresh token is bound too");
    // Signed in without a proof: unbound; the first refresh with a proof binds the next.
    let code = op.code(&browser, "spa").await;
    let a = op.token("spa", &redeem(&code), &[]).await;
    assert_eq!(a.json()["token_type"], "Bearer", "{a:?}");
    let rt = a.json()["refresh_token"].as_str().unwrap().to_owned();
    let a = op.token("spa", &refresh(&rt), &[&proof(&client)]).await;
    assert_eq!(a.json()["token_type"], "DPoP", "{a:?}");
    let rt = a.json()["refresh_token"].as_str().unwrap().to_owned();
    let a = op.token("spa", &refresh(&rt), &[&proof(&thief)]).await;
    no_token(&a, "a refresh token bound at a refresh, with another key");

    // rp (confidential): its refresh token is not bound; without a proof, a bearer token.
    let code = op.code(&browser, "rp").await;
    let a = op.token("rp", &redeem(&code), &[&proof(&client)]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let rt = a.json()["refresh_token"].as_str().unwrap().to_owned();
    let a = op.token("rp", &refresh(&rt), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let tokens = a.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert!(a.nonce.is_none(), "no nonce without DPoP");
    let access = tokens["access_token"].as_str().unwrap();
    assert!(payload(access).get("cnf").is_none());
    // A bearer token presented as a DPoP token, even with a proof: refused.
    let userinfo_url = op.url("/oidc/userinfo");
    let p = client.proof("GET", &userinfo_url, None, Some(access));
    nothing_open(
        &op.userinfo(&format!("DPoP {access}"), &[&p]).await,
        "an unbound token as DPoP",
    );
    let a = op.userinfo(&format!("Bearer {access}"), &[]).await;
    assert_eq!(a.status, 200, "as a bearer token it works: {a:?}");

    // mobile (dpop_bound_access_tokens): no proof, no token; the code stays unspent.
    let code = op.code(&browser, "mobile").await;
    let a = op.token("mobile", &redeem(&code), &[]).await;
    no_token(&a, "a client that must bind, without a proof");
    assert_eq!(a.error(), "invalid_dpop_proof");
    let a = op.token("mobile", &redeem(&code), &[&proof(&client)]).await;
    assert_eq!(a.status, 200, "{a:?}");

    // The nonce of the first instance holds at the second; the proof's jti is used once
    // across them.
    let form = [("grant_type", "client_credentials")];
    let p = proof(&client);
    let a = op.token_at(1, "service", &form, &[&p]).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["token_type"], "DPoP");
    let a = op.token_at(0, "service", &form, &[&p]).await;
    no_token(&a, "a proof replayed at another instance");
}

/// An opaque token: a compact JWE (`dir`, five segments) whose parts say nothing of `what`.
fn says_nothing(token: &str, what: &[&str]) {
    let segments: Vec<&str> = token.split('.').collect();
    assert_eq!(segments.len(), 5, "{token}");
    let header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(segments[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "dir", "{header}");
    for segment in &segments[1..] {
        let bytes = URL_SAFE_NO_PAD.decode(segment).unwrap();
        for w in what {
            let found = bytes.windows(w.len()).any(|b| b == w.as_bytes());
            assert!(!found, "{w} in {token}");
        }
    }
}

/// A refused bearer token at userinfo: `401`, a `Bearer` challenge, nothing of the user.
fn bearer_refused(a: &Answer, case: &str) {
    assert_eq!(a.status, 401, "{case}: {a:?}");
    assert!(a.challenge.starts_with("Bearer"), "{case}: {a:?}");
    assert!(!a.body.contains("ada"), "{case}: {a:?}");
}

/// Opaque access tokens: a service's and a user's say nothing; introspection (at another
/// instance too) and userinfo open them, a refresh gives another, revocation voids one.
/// Nothing else opens as one: the code and the refresh token, a token altered in any
/// segment, the same claims sealed under another secret or another purpose's salt, expired,
/// or naming another issuer or audience. A signed client's tokens stay JWTs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_access_tokens_say_nothing_and_open_only_here() {
    let op = start(2).await;
    let bearer = |t: &str| format!("Bearer {t}");

    // A service's own token, issued at the second instance, introspected at the first.
    let form = [("grant_type", "client_credentials")];
    let a = op.token_at(1, OPAQUE_SERVICE, &form, &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let service = a.json()["access_token"].as_str().unwrap().to_owned();
    says_nothing(&service, &[OPAQUE_SERVICE, "sub"]);
    let i = op.introspect(OPAQUE_SERVICE, &service).await;
    assert_eq!(i["active"], true, "{i}");
    assert_eq!(i["client_id"], OPAQUE_SERVICE, "{i}");
    bearer_refused(
        &op.userinfo(&bearer(&service), &[]).await,
        "a service's token stands for no user",
    );
    // Another client's introspection learns nothing of it.
    let i = op.introspect("rp", &service).await;
    assert_eq!(i, json!({"active": false}));
    // A service with signed tokens still gets a JWT.
    let a = op.token("service", &form, &[]).await;
    let signed = a.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(payload(&signed)["client_id"], "service", "{a:?}");

    // A user's: the code flow, userinfo, introspection, refresh.
    let (browser, _) = common::signed_in_browser(&op.base, "ada").await;
    let code = op.code(&browser, "rp-opaque").await;
    let a = op.token("rp-opaque", &redeem(&code), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let tokens = a.json();
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    says_nothing(&access, &["ada", "rp-opaque", "openid"]);
    let ada = payload(tokens["id_token"].as_str().unwrap())["sub"].clone();
    let a = op.userinfo(&bearer(&access), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["sub"], ada, "{a:?}");
    assert_eq!(a.json()["email"], "ada@example.com", "{a:?}");
    let i = op.introspect("rp-opaque", &access).await;
    assert_eq!((&i["active"], &i["sub"]), (&json!(true), &ada), "{i}");
    let a = op.token("rp-opaque", &refresh(&refresh_token), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");
    let refreshed = a.json()["access_token"].as_str().unwrap().to_owned();
    says_nothing(&refreshed, &["ada"]);
    assert_eq!(op.userinfo(&bearer(&refreshed), &[]).await.status, 200);

    // What opens as nothing.
    let codec = authcore::jwt::JwtCodec::new(&[AUTH_SECRET]).unwrap();
    let claims = codec.decode(&access, ACCESS_TOKEN_SALT).unwrap().unwrap();
    let again = codec.encode(&claims, ACCESS_TOKEN_SALT, 600).unwrap();
    let a = op.userinfo(&bearer(&again), &[]).await;
    assert_eq!(
        a.status, 200,
        "the control: the same claims sealed again open: {a:?}"
    );
    let with = |name: &str, value: &str| {
        let mut c = claims.clone();
        c.insert(name.into(), value.into());
        codec.encode(&c, ACCESS_TOKEN_SALT, 600).unwrap()
    };
    let altered = |segment: usize| {
        let mut parts: Vec<String> = access.split('.').map(str::to_owned).collect();
        // The first character: six bits of data (a last one may hold unused bits).
        let s = &mut parts[segment];
        let first = if s.starts_with('A') { "B" } else { "A" };
        s.replace_range(..1, first);
        parts.join(".")
    };
    let other_secret =
        authcore::jwt::JwtCodec::new(&["another secret, as long as the real one is"])
            .unwrap()
            .encode(&claims, ACCESS_TOKEN_SALT, 600)
            .unwrap();
    let fresh_code = op.code(&browser, "rp-opaque").await;
    for (case, token) in [
        ("the authorization code", fresh_code.clone()),
        ("the refresh token", refresh_token.clone()),
        ("the header altered", altered(0)),
        ("the IV altered", altered(2)),
        ("the ciphertext altered", altered(3)),
        ("the tag altered", altered(4)),
        ("another secret", other_secret),
        (
            "another purpose's salt",
            codec
                .encode(&claims, "authcore.oidc-provider.code", 600)
                .unwrap(),
        ),
        (
            "expired",
            codec
                .encode_at(&claims, ACCESS_TOKEN_SALT, 60, now() - 3600)
                .unwrap(),
        ),
        ("another issuer", with("iss", "http://localhost:1/oidc")),
        (
            "another audience",
            with("aud", "http://localhost:1/oidc/userinfo"),
        ),
        ("a sixth segment", format!("{access}.AAAA")),
    ] {
        bearer_refused(&op.userinfo(&bearer(&token), &[]).await, case);
        let i = op.introspect("rp-opaque", &token).await;
        assert_eq!(i, json!({"active": false}), "{case}");
    }
    // The code was left unspent by being shown to userinfo.
    let a = op.token("rp-opaque", &redeem(&fresh_code), &[]).await;
    assert_eq!(a.status, 200, "{a:?}");

    // Revocation (RFC 7009) voids it at userinfo and introspection.
    let r = op.token_call("rp-opaque", "/oidc/revoke", &access).await;
    assert_eq!(r.status(), 200);
    bearer_refused(&op.userinfo(&bearer(&access), &[]).await, "revoked");
    let i = op.introspect("rp-opaque", &access).await;
    assert_eq!(i, json!({"active": false}));
    // Each opaque token has its own `jti`, the one its revocation names: the service's
    // token is still active.
    let jti = |token: &str| {
        let claims = codec.decode(token, ACCESS_TOKEN_SALT).unwrap().unwrap();
        claims
            .get("jti")
            .and_then(|j| j.as_str())
            .unwrap()
            .to_owned()
    };
    let jtis = [jti(&access), jti(&refreshed), jti(&service)];
    assert!(jtis.iter().all(|j| j.len() >= 32), "{jtis:?}");
    assert!(
        jtis[0] != jtis[1] && jtis[1] != jtis[2] && jtis[0] != jtis[2],
        "{jtis:?}"
    );
    let i = op.introspect(OPAQUE_SERVICE, &service).await;
    assert_eq!(i["active"], true, "{i}");
}
