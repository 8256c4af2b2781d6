//! authcore as an OpenID Provider: the strict `openid-client` (npm) signs the demo user in
//! through it (discovery, PKCE, nonce, state, RFC 9207 `iss`, the EdDSA ID token, userinfo),
//! and is refused a replayed code and a `prompt=none` without a session
//! (`testsupport/oidc-rp/openid-client.mjs`). Then the attacks of RFC 9700 and OpenID
//! Connect Core, as raw requests, each checked to issue no code or token: redirect URIs not
//! exactly registered (never redirected to), PKCE missing, wrong or downgraded, a code for
//! another client or replayed, client authentication failures, forged access tokens at
//! userinfo, oversize and repeated parameters, framing of the form post, `prompt=login`
//! markers made up, replayed, in another browser or moved to another request.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use authcore_server::ServerConfig;
use base64::Engine as _;
use serde_json::Value;

use crate::support::binary;
use crate::support::browser;
use crate::support::pg;

const SECRET: &str = "an OpenID Provider test secret, long enough";
pub(crate) const RP_SECRET: &str = "rp-secret-0123456789abcdef0123456789";
const OTHER_SECRET: &str = "other-secret-0123456789abcdef01234567";
pub(crate) const CB: &str = "http://127.0.0.1:9/callback";
pub(crate) const LOGGED_OUT: &str = "http://127.0.0.1:9/logged-out";
/// RFC 7636 appendix B.
pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(crate) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// The provider on loopback: its base URL (`http://localhost:<port>`), its handler and a
/// client holding the demo user's session. Instances of one provider share the directory,
/// removed when the first is dropped.
pub(crate) struct Op {
    pub(crate) base: String,
    pub(crate) issuer: String,
    pub(crate) signed_in: reqwest::Client,
    pub(crate) cookie: String,
    /// The instance's handler: what the library's API acts on.
    pub(crate) auth: authcore::Auth,
    /// The database the handler keeps its users and organizations in.
    pub(crate) database: authcore_sqlx::SqlxAdapter,
    pub(crate) dir: PathBuf,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start() -> Op {
    start_with("").await
}

/// [`start`] with more `[[oidc_provider.clients]]` tables (and any other tables after them).
pub(crate) async fn start_with(more_clients: &str) -> Op {
    start_configured("", more_clients).await
}

/// [`start_with`] and more `[server]` settings.
async fn start_configured(server: &str, more_clients: &str) -> Op {
    start_on_configured(listener().await, server, more_clients).await
}

/// A listener on a free loopback port: where a provider will serve, its port known before.
pub(crate) async fn listener() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()
}

/// The base URL of the provider that will serve on `listener`.
fn base_of(listener: &tokio::net::TcpListener) -> String {
    format!("http://localhost:{}", listener.local_addr().unwrap().port())
}

/// [`start_with`] on `listener`, on a database of its own.
async fn start_on(listener: tokio::net::TcpListener, more_clients: &str) -> Op {
    start_on_configured(listener, "", more_clients).await
}

/// [`start_configured`] on `listener`.
async fn start_on_configured(
    listener: tokio::net::TcpListener,
    server: &str,
    more_clients: &str,
) -> Op {
    let dir = fresh_dir();
    let db = format!("sqlite://{}?mode=rwc", dir.join("op.db").display());
    start_instances(dir, &db, server, more_clients, vec![listener])
        .await
        .remove(0)
}

/// A new temporary directory (removed when its [`Op`] is dropped).
pub(crate) fn fresh_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "authcore-op-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `count` instances of one provider: one configuration (database `database_url`, one
/// signing key in `dir`, the issuer at the first instance's address, as behind one load
/// balancer), each on a port of its own. The demo user signs in at the first; the others
/// get its browser, whose cookies (for `localhost`, whatever the port) they share.
pub(crate) async fn start_instances(
    dir: PathBuf,
    database_url: &str,
    server: &str,
    more_clients: &str,
    listeners: Vec<tokio::net::TcpListener>,
) -> Vec<Op> {
    // An Ed25519 key signs by default; an RSA key for the clients that want RS256.
    let (key, rsa) = (dir.join("oidc.pem"), dir.join("oidc-rsa.pem"));
    for (algorithm, path) in [("ed25519", &key), ("rsa", &rsa)] {
        assert!(
            std::process::Command::new("openssl")
                .args(["genpkey", "-algorithm", algorithm, "-out"])
                .arg(path)
                .status()
                .unwrap()
                .success()
        );
    }
    let base = base_of(&listeners[0]);
    let config = format!(
        r#"
[server]
database_url = "{database_url}"
{server}
[auth]
secret = "{SECRET}"
url = "{base}/auth"
sign_up = "open"
[oidc_provider]
signing_keys = ["{key}", "{rsa}"]

[[oidc_provider.clients]]
id = "rp"
name = "A relying party"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
post_logout_redirect_uris = ["{LOGGED_OUT}"]
grant_types = ["authorization_code", "refresh_token"]

[[oidc_provider.clients]]
id = "other"
secret = "{OTHER_SECRET}"
token_endpoint_auth_method = "client_secret_post"
redirect_uris = ["{CB}"]

[[oidc_provider.clients]]
id = "spa"
redirect_uris = ["{CB}"]
{more_clients}
"#,
        key = key.display(),
        rsa = rsa.display(),
    );
    let path = dir.join("authcore.toml");
    std::fs::write(&path, config).unwrap();
    let mut instances = Vec::new();
    for listener in listeners {
        let server = ServerConfig::from_file(&path, authcore::env::Env::default())
            .unwrap()
            .build()
            .await
            .unwrap();
        instances.push((
            base_of(&listener),
            server.auth().clone(),
            server.database().unwrap().clone(),
        ));
        // With the peer address, as the binary serves: per-address limits apply.
        let app = server
            .router()
            .into_make_service_with_connect_info::<std::net::SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, app).await });
    }
    // The demo user signs in with the password, or with a users file its first user.
    let who = if more_clients.contains("[users_file]") {
        ("users-file", "alice", "alice-pw")
    } else {
        ("credentials", "demo", "authcore-demo")
    };
    let (signed_in, jar) = sign_in_at_as(&base, who).await;
    use reqwest::cookie::CookieStore;
    let cookie = jar
        .cookies(&base.parse().unwrap())
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(cookie.contains("authjs.session-token="), "{cookie}");
    instances
        .into_iter()
        .map(|(b, auth, database)| Op {
            issuer: format!("{base}/oidc"),
            base: b,
            signed_in: signed_in.clone(),
            cookie: cookie.clone(),
            auth,
            database,
            dir: dir.clone(),
        })
        .collect()
}

pub(crate) fn rand_suffix() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A key pair `name` of a relying party for `private_key_jwt`, made by jose
/// (`testsupport/oidc-rp/client-key.mjs`): the files' prefix and the public JWK Set.
fn relying_party_key(dir: &std::path::Path, name: &str, alg: &str) -> (PathBuf, String) {
    let prefix = dir.join(name);
    let out = std::process::Command::new("node")
        .current_dir(oidc_rp_dir())
        .arg("client-key.mjs")
        .arg(&prefix)
        .arg(alg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        prefix,
        String::from_utf8(out.stdout).unwrap().trim().to_owned(),
    )
}

pub(crate) fn oidc_rp_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/oidc-rp");
    assert!(
        dir.join("node_modules/openid-client").is_dir(),
        "run `npm ci --prefix testsupport/oidc-rp` first"
    );
    dir
}

/// openid-client (npm, strict) signs in, refreshes, meets refresh-token reuse, code replay,
/// `prompt=none` without a session and RP-initiated logout, then hears of the logout by
/// back-channel: as a client with a secret and EdDSA ID tokens, and as one authenticating
/// with `private_key_jwt` (an RS256 key of its own, RFC 7523) that asked for RS256 ID
/// tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openid_client_signs_in_through_authcore() {
    let keys = fresh_dir();
    let (prefix, jwks) = relying_party_key(&keys, "keyed", "RS256");
    let (receiver, mut logouts) = logout_receiver().await;
    let op = start_with(&format!(
        r#"{lib}
[[oidc_provider.clients]]
id = "keyed"
token_endpoint_auth_method = "private_key_jwt"
jwks = '{jwks}'
id_token_signed_response_alg = "RS256"
redirect_uris = ["{CB}"]
post_logout_redirect_uris = ["{LOGGED_OUT}"]
grant_types = ["authorization_code", "refresh_token"]
backchannel_logout_uri = "{receiver}/keyed"
"#,
        lib = library_client("lib", &receiver)
    ))
    .await;
    let prefix = prefix.to_str().unwrap();
    for (client, args, alg) in [
        ("lib", vec![RP_SECRET], "EdDSA"),
        ("keyed", vec!["-", prefix, "RS256"], "RS256"),
    ] {
        // A session of its own: the client's logout ends it.
        let (browser, cookie) = fresh_session(&op).await;
        let mut argv = vec![op.issuer.as_str(), client];
        argv.push(args[0]);
        argv.extend([CB, cookie.as_str(), LOGGED_OUT]);
        argv.extend(&args[1..]);
        let steps = browser::run_in(
            &oidc_rp_dir(),
            "node",
            "openid-client.mjs",
            &argv,
            Duration::from_secs(60),
        )
        .await;
        openid_client_steps_hold(&op, client, alg, &steps);
        // The user confirms the logout the library asked for; the client is told, and
        // jose (openid-client's JOSE library) accepts the logout token for that session.
        let end = step_of(&steps, "end-session")["location"].as_str().unwrap();
        let (back, token) =
            sign_out_through_authcore(&op, &browser, end, &mut logouts, client).await;
        assert_eq!(back, format!("{LOGGED_OUT}?state=bye"));
        let claims = verified_logout_token(&op, client, &token).await;
        assert_eq!(
            claims["sid"],
            step_of(&steps, "signed-in")["claims"]["sid"],
            "{claims}"
        );
    }
    let _ = std::fs::remove_dir_all(keys);
}

/// What each step of `openid-client.mjs` must show for `client`, whose ID tokens are
/// signed with `alg`.
pub(crate) fn openid_client_steps_hold(op: &Op, client: &str, alg: &str, steps: &[Value]) {
    let step = |name: &str| step_of(steps, name).clone();
    assert_eq!(step("discovery")["issuer"], op.issuer);
    let s = step("signed-in");
    assert_eq!(s["idTokenAlg"], alg, "{s}");
    let claims = &s["claims"];
    assert_eq!(claims["iss"], op.issuer, "{s}");
    assert_eq!(claims["aud"], client, "{s}");
    assert_eq!(claims["email"], "demo@example.com", "{s}");
    assert_eq!(claims["name"], "Demo User", "{s}");
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]), "{s}");
    // A password is no phishing-resistant sign-in: no `acr` is claimed.
    assert!(claims.get("acr").is_none(), "{s}");
    assert!(claims["auth_time"].as_i64().is_some(), "{s}");
    assert!(
        claims["sid"].as_str().is_some_and(|sid| sid.len() == 32),
        "{s}"
    );
    assert_eq!(s["userinfo"]["sub"], claims["sub"], "{s}");
    assert_eq!(s["userinfo"]["email"], "demo@example.com", "{s}");
    assert_eq!(s["userinfo"]["email_verified"], false, "{s}");
    assert_eq!(s["scope"], "openid profile email offline_access");
    assert_eq!(s["refresh"], true, "{s}");
    let r = step("refreshed");
    assert_eq!(r["claims"]["sub"], claims["sub"], "{r}");
    assert_eq!(r["claims"]["auth_time"], claims["auth_time"], "{r}");
    assert_eq!(r["claims"]["sid"], claims["sid"], "{r}");
    assert!(r["claims"].get("nonce").is_none(), "{r}");
    assert_eq!(r["userinfo"]["email"], "demo@example.com", "{r}");
    assert_eq!(r["rotated"], true, "{r}");
    for name in ["reuse", "after-reuse"] {
        let s = step(name);
        assert_eq!(s["accepted"], false, "{s}");
        assert_eq!(s["reason"], "invalid_grant", "{s}");
    }
    let revoked = step("revoked-access");
    assert_eq!(revoked["accepted"], false, "{revoked}");
    let replay = step("replay");
    assert_eq!(replay["accepted"], false, "{replay}");
    assert_eq!(replay["reason"], "invalid_grant", "{replay}");
    let silent = step("prompt-none");
    assert_eq!(silent["accepted"], false, "{silent}");
    assert_eq!(silent["reason"], "login_required", "{silent}");
    let end = step("end-session");
    assert_eq!(end["status"], 302, "{end}");
    assert!(
        end["location"]
            .as_str()
            .unwrap()
            .starts_with("/auth/signout?callbackUrl=%2Foidc%2Flogout%2Fdone"),
        "{end}"
    );
}

/// Authlib (PyPI) as the relying party: discovery, PKCE, nonce, state, `iss`, the EdDSA ID
/// token verified with the JWK Set, userinfo, refresh, RP-initiated logout, and the logout
/// token of the back-channel checked with joserfc, its JOSE library
/// (`testsupport/oidc-rp/authlib_rp.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authlib_signs_in_through_authcore() {
    let (receiver, mut logouts) = logout_receiver().await;
    let op = start_with(&library_client("lib", &receiver)).await;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/oidc-rp");
    let python = dir.join(".venv/bin/python");
    assert!(
        python.exists(),
        "run `python3 -m venv testsupport/oidc-rp/.venv && testsupport/oidc-rp/.venv/bin/pip install -r testsupport/oidc-rp/requirements.txt` first"
    );
    let python = python.to_str().unwrap();
    let (browser, cookie) = fresh_session(&op).await;
    let steps = browser::run_in(
        &dir,
        python,
        "authlib_rp.py",
        &[&op.issuer, "lib", RP_SECRET, CB, &cookie, LOGGED_OUT],
        Duration::from_secs(60),
    )
    .await;
    let s = step_of(&steps, "signed-in");
    assert_eq!(s["alg"], "EdDSA", "{s}");
    assert_eq!(s["claims"]["iss"], op.issuer, "{s}");
    assert_eq!(s["claims"]["email"], "demo@example.com", "{s}");
    assert_eq!(s["userinfo"]["sub"], s["claims"]["sub"], "{s}");
    assert_eq!(s["userinfo"]["name"], "Demo User", "{s}");
    let r = step_of(&steps, "refreshed");
    assert_eq!(r["sub"], s["claims"]["sub"], "{r}");
    assert_eq!(r["userinfo"]["email"], "demo@example.com", "{r}");
    assert_eq!(r["rotated"], true, "{r}");
    let end = step_of(&steps, "end-session");
    assert_eq!(end["status"], 302, "{end}");
    let location = end["location"].as_str().unwrap();
    let (back, token) =
        sign_out_through_authcore(&op, &browser, location, &mut logouts, "lib").await;
    assert_eq!(back, format!("{LOGGED_OUT}?state=bye"));
    let check = async |client: &str, token: &str| {
        browser::run_in(
            &dir,
            python,
            "authlib_rp.py",
            &["logout-token", &op.issuer, client, token],
            Duration::from_secs(30),
        )
        .await
    };
    let checked = check("lib", &token).await;
    let claims = checked
        .iter()
        .find_map(|s| s.get("claims"))
        .unwrap_or_else(|| panic!("refused: {checked:?}"));
    assert_eq!(claims["sid"], s["claims"]["sid"], "{checked:?}");
    assert_eq!(claims["sub"], s["claims"]["sub"], "{checked:?}");
    // For another client, or altered: refused by the same check.
    for (client, token) in [("rp", token.clone()), ("lib", altered_signature(&token))] {
        let checked = check(client, &token).await;
        assert!(
            checked.iter().any(|s| s.get("refused").is_some()),
            "{client}: {checked:?}"
        );
    }
}

/// `jws` with one character in the middle of its signature changed (the last one can
/// carry only padding bits a decoder ignores).
fn altered_signature(jws: &str) -> String {
    let dot = jws.rfind('.').unwrap();
    let at = dot + (jws.len() - dot) / 2;
    let mut bytes = jws.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

/// The step `name` of a relying party script's output.
pub(crate) fn step_of<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {steps:?}"))
}

/// The authorization request of `client` with `extra` parameters, by the signed-in user.
async fn authorize(op: &Op, params: &[(&str, &str)]) -> reqwest::Response {
    authorize_as(op, &op.signed_in, params).await
}

/// [`authorize`] in `browser`.
pub(crate) async fn authorize_as(
    op: &Op,
    browser: &reqwest::Client,
    params: &[(&str, &str)],
) -> reqwest::Response {
    let mut url = url::Url::parse(&format!("{}/oidc/authorize", op.base)).unwrap();
    url.query_pairs_mut().extend_pairs(params);
    browser.get(url).send().await.unwrap()
}

pub(crate) fn location(r: &reqwest::Response) -> Option<url::Url> {
    r.headers()
        .get("location")
        .map(|l| url::Url::parse(l.to_str().unwrap()).unwrap())
}

pub(crate) fn query(u: &url::Url, name: &str) -> Option<String> {
    u.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A code for `client` (PKCE S256 with [`CHALLENGE`] unless `pkce` is false).
pub(crate) async fn code(op: &Op, client: &str, pkce: bool) -> String {
    code_for(op, client, "openid email", pkce).await
}

/// [`code`] with `scope`.
async fn code_for(op: &Op, client: &str, scope: &str, pkce: bool) -> String {
    let mut p = vec![
        ("client_id", client),
        ("redirect_uri", CB),
        ("response_type", "code"),
        ("scope", scope),
        ("state", "st"),
    ];
    if pkce {
        p.extend([
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ]);
    }
    let r = authorize(op, &p).await;
    assert_eq!(r.status(), 302);
    let to = location(&r).unwrap();
    assert!(to.as_str().starts_with(CB), "{to}");
    assert_eq!(
        query(&to, "iss").as_deref(),
        Some(op.issuer.as_str()),
        "RFC 9207"
    );
    query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"))
}

/// `POST /oidc/token` with `form`, and HTTP Basic `basic` when given.
pub(crate) async fn token(
    op: &Op,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    post_form(op, "/oidc/token", basic, form).await
}

/// `POST <path>` with `form`, and HTTP Basic `basic` when given: the status and the JSON.
pub(crate) async fn post_form(
    op: &Op,
    path: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", op.base))
        .form(form);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

pub(crate) fn grant<'a>(code: &'a str, verifier: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut f = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CB),
    ];
    if let Some(v) = verifier {
        f.push(("code_verifier", v));
    }
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_issue_no_code_and_no_token() {
    let op = start().await;

    // 1. Redirect URIs not exactly registered, an unknown or repeated client: an error
    //    page, never a redirect.
    let refused_uris = [
        "http://127.0.0.1:9/callback/",
        "http://127.0.0.1:9/callback?x=1",
        "http://127.0.0.1:9/Callback",
        "http://127.0.0.1:90/callback",
        "http://127.0.0.1:9/callback#x",
        "http://evil@127.0.0.1:9/callback",
        "http://127.0.0.1:9/callback/../evil",
        "http://127.0.0.1:9/%63allback",
        "https://evil.example/callback",
        "",
    ];
    let mut cases: Vec<Vec<(&str, &str)>> = refused_uris
        .iter()
        .map(|uri| vec![("client_id", "rp"), ("redirect_uri", *uri)])
        .collect();
    cases.push(vec![("client_id", "nobody"), ("redirect_uri", CB)]);
    cases.push(vec![
        ("client_id", "rp"),
        ("client_id", "spa"),
        ("redirect_uri", CB),
    ]);
    for mut params in cases {
        params.extend([("response_type", "code"), ("scope", "openid")]);
        let r = authorize(&op, &params).await;
        assert_eq!(r.status(), 400, "{params:?}");
        assert!(r.headers().get("location").is_none(), "{params:?}");
    }

    // 2. Errors after that go back to the client, with state and iss, and no code.
    let long = "x".repeat(3000);
    for (params, error) in [
        (
            vec![("client_id", "spa"), ("scope", "openid")],
            "invalid_request",
        ),
        (
            vec![
                ("client_id", "rp"),
                ("scope", "openid"),
                ("code_challenge", CHALLENGE),
                ("code_challenge_method", "plain"),
            ],
            "invalid_request",
        ),
        (
            vec![("client_id", "rp"), ("scope", "profile")],
            "invalid_scope",
        ),
        (
            vec![
                ("client_id", "rp"),
                ("scope", "openid"),
                ("nonce", long.as_str()),
            ],
            "invalid_request",
        ),
    ] {
        let mut p = params.clone();
        p.extend([
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("state", "st"),
        ]);
        let r = authorize(&op, &p).await;
        let to = location(&r).unwrap();
        assert_eq!(
            query(&to, "error").as_deref(),
            Some(error),
            "{params:?}: {to}"
        );
        assert_eq!(query(&to, "state").as_deref(), Some("st"));
        assert_eq!(query(&to, "iss").as_deref(), Some(op.issuer.as_str()));
        assert!(query(&to, "code").is_none());
    }

    // 3. The token endpoint: client authentication.
    let c = code(&op, "rp", true).await;
    for (basic, extra, status, error) in [
        (
            Some(("rp", "wrong-secret-0123456789abcdef0123456")),
            vec![],
            401,
            "invalid_client",
        ),
        (Some(("nobody", RP_SECRET)), vec![], 401, "invalid_client"),
        (
            None,
            vec![("client_id", "rp"), ("client_secret", RP_SECRET)],
            401,
            "invalid_client",
        ),
        (
            Some(("rp", RP_SECRET)),
            vec![("client_secret", RP_SECRET)],
            400,
            "invalid_request",
        ),
        (
            Some(("rp", RP_SECRET)),
            vec![("client_id", "other")],
            400,
            "invalid_request",
        ),
        (None, vec![("client_id", "rp")], 401, "invalid_client"),
        (None, vec![], 401, "invalid_client"),
    ] {
        let mut form = grant(&c, Some(VERIFIER));
        form.extend(extra.iter().copied());
        let (s, body) = token(&op, basic, &form).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (status, Some(error)),
            "{basic:?} {extra:?}: {body}"
        );
        assert!(body.get("access_token").is_none());
    }
    // The code was never redeemed above: it still works, once.
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    assert_eq!(s, 200, "{body}");
    let access = body["access_token"].as_str().unwrap().to_owned();
    let r = reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "before the replay");
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "replay: {body}"
    );
    // The replay revoked the token of the first use (RFC 9700 §4.5.3.1).
    let r = reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the first use's token after the replay");

    // 4. PKCE: a wrong or missing verifier, a downgrade; a code for another client.
    for (pkce, verifier) in [
        (true, Some("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl")),
        (true, None),
        (true, Some(CHALLENGE)),
        (false, Some(VERIFIER)),
    ] {
        let c = code(&op, "rp", pkce).await;
        let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, verifier)).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "{pkce} {verifier:?}: {body}"
        );
    }
    let c = code(&op, "rp", true).await;
    let mut form = grant(&c, Some(VERIFIER));
    form.extend([("client_id", "other"), ("client_secret", OTHER_SECRET)]);
    let (s, body) = token(&op, None, &form).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "another client's code: {body}"
    );
    let mut form = grant(&c, Some(VERIFIER));
    form.retain(|(k, _)| *k != "redirect_uri");
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &form).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "no redirect_uri: {body}"
    );
    let (s, body) = token(
        &op,
        Some(("rp", RP_SECRET)),
        &grant("forged.code.value.x.y", Some(VERIFIER)),
    )
    .await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    // A public client redeems its own code with PKCE and no secret.
    let c = code(&op, "spa", true).await;
    let mut form = grant(&c, Some(VERIFIER));
    form.push(("client_id", "spa"));
    let (s, body) = token(&op, None, &form).await;
    assert_eq!(s, 200, "{body}");

    // 5. Userinfo: the access token, and nothing forged.
    let c = code(&op, "rp", true).await;
    let (_, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    let access = body["access_token"].as_str().unwrap().to_owned();
    let userinfo = |auth: String| {
        let base = op.base.clone();
        async move {
            reqwest::Client::new()
                .get(format!("{base}/oidc/userinfo"))
                .header("authorization", auth)
                .send()
                .await
                .unwrap()
        }
    };
    let r = userinfo(format!("Bearer {access}")).await;
    assert_eq!(r.status(), 200);
    let info: Value = r.json().await.unwrap();
    assert_eq!(info["email"], "demo@example.com");
    assert!(info.get("name").is_none(), "scope email only: {info}");
    let parts: Vec<&str> = access.split('.').collect();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut payload: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    payload["sub"] = "someone-else".into();
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64.encode(payload.to_string()),
        parts[2]
    );
    let none = format!(
        "{}.{}.",
        b64.encode(r#"{"alg":"none","typ":"at+jwt"}"#),
        parts[1]
    );
    for forged in [
        tampered,
        none,
        format!("{access}x"),
        "garbage".into(),
        String::new(),
    ] {
        let r = userinfo(format!("Bearer {forged}")).await;
        assert_eq!(r.status(), 401, "{forged}");
        assert!(
            r.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer error=")
        );
    }
    // An ID token is no access token.
    let c = code(&op, "rp", true).await;
    let (_, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    let r = userinfo(format!("Bearer {}", body["id_token"].as_str().unwrap())).await;
    assert_eq!(r.status(), 401);

    // 6. The form post answer: a page no one may frame, posting only to the client.
    let r = authorize(
        &op,
        &[
            ("client_id", "rp"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid"),
            ("response_mode", "form_post"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "<script>"),
        ],
    )
    .await;
    assert_eq!(r.status(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("form-action http://127.0.0.1:9"),
        "{csp}"
    );
    let page = r.text().await.unwrap();
    assert!(
        page.contains(&format!("action=\"{CB}\""))
            && page.contains("value=\"&#60;script&#62;\"")
            && page.matches("<script").count() == 1,
        "{page}"
    );

    // 7. Without a session: the sign-in page, and back here after.
    let anonymous = binary::browser();
    let mut url = url::Url::parse(&format!("{}/oidc/authorize", op.base)).unwrap();
    url.query_pairs_mut().extend_pairs([
        ("client_id", "rp"),
        ("redirect_uri", CB),
        ("response_type", "code"),
        ("scope", "openid"),
    ]);
    let r = anonymous.get(url).send().await.unwrap();
    let to = r.headers()["location"].to_str().unwrap();
    assert!(
        to.starts_with("/auth/signin?callbackUrl=%2Foidc%2Fauthorize%3F"),
        "{to}"
    );
}

/// Auth.js itself as the relying party: the Express app of `testsupport/authjs-express`
/// (`@auth/express`, its generic OIDC provider pointed at authcore, with PKCE, state and
/// nonce, the profile from userinfo) signs the demo user in, and its own session names them.
/// What the app adds around Auth.js with Auth.js's own libraries works too: the jwt
/// callback refreshes the access token when it expires (a client with 2-second access
/// tokens), the refreshed token opens userinfo, the app's federated sign-out goes through
/// authcore's sign-out page, and authcore's back-channel logout token ends the app's
/// session; forged logout tokens end nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authjs_app_signs_in_through_authcore() {
    const AUTHJS_SECRET: &str = "authjs-client-secret-0123456789abcdef";
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Another host than authcore's `localhost`: the two apps' cookies (the same names)
    // stay apart in the one browser.
    let rp = format!("http://127.0.0.1:{port}");
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "authjs"
secret = "{AUTHJS_SECRET}"
redirect_uris = ["{rp}/auth/callback/oidc"]
post_logout_redirect_uris = ["{rp}/logged-out"]
grant_types = ["authorization_code", "refresh_token"]
backchannel_logout_uri = "{rp}/backchannel-logout"
access_token_ttl = 2
"#
    ))
    .await;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/authjs-express");
    assert!(
        dir.join("node_modules/@auth/express").is_dir(),
        "run `npm ci --prefix testsupport/authjs-express` first"
    );
    let mut app = tokio::process::Command::new("node")
        .arg("app.mjs")
        .current_dir(&dir)
        .env("AUTH_SECRET", "the Auth.js app's own secret, long enough")
        .env("PORT", port.to_string())
        .env("OIDC_ISSUER", &op.issuer)
        .env("OIDC_ID", "authjs")
        .env("OIDC_SECRET", AUTHJS_SECRET)
        .env("OIDC_ID_TOKEN_ALG", "EdDSA")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(app.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(line.contains("listening"), "{line}");

    // The browser, signed in at authcore, starts the Auth.js sign-in.
    let browser = &op.signed_in;
    let csrf = binary::csrf_token(browser, &rp).await;
    let mut r = browser
        .post(format!("{rp}/auth/signin/oidc"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("callbackUrl", &format!("{rp}/whoami")),
        ])
        .send()
        .await
        .unwrap();
    // Auth.js → authcore's authorization endpoint → back to Auth.js's callback → its page.
    let mut trail = Vec::new();
    while r.status().is_redirection() && trail.len() < 6 {
        let to = r.headers()["location"].to_str().unwrap().to_owned();
        trail.push(to.clone());
        r = browser.get(&to).send().await.unwrap();
    }
    assert!(
        trail[0].starts_with(&format!("{}/oidc/authorize?", op.base)),
        "{trail:?}"
    );
    let authorize = url::Url::parse(&trail[0]).unwrap();
    for (name, value) in [
        ("code_challenge_method", Some("S256")),
        ("scope", Some("openid profile email offline_access")),
    ] {
        assert_eq!(query(&authorize, name).as_deref(), value, "{trail:?}");
    }
    for name in ["nonce", "state", "code_challenge"] {
        assert!(query(&authorize, name).is_some(), "{name}: {trail:?}");
    }
    assert!(
        trail[1].starts_with(&format!("{rp}/auth/callback/oidc?code=")),
        "{trail:?}"
    );
    assert_eq!(trail.last().unwrap(), &format!("{rp}/whoami"), "{trail:?}");
    let session: Value = r.json().await.unwrap();
    assert_eq!(session["user"]["email"], "demo@example.com", "{session}");
    assert_eq!(session["user"]["name"], "Demo User", "{session}");

    // Auth.js's session endpoint runs the jwt callback, which refreshes the access token
    // once it has expired and stores the new tokens in the session cookie.
    let app_session = async || binary::get_json(browser, &format!("{rp}/auth/session")).await;
    let first = app_session().await;
    let sid = first["oidc"]["sid"].as_str().unwrap().to_owned();
    let refreshes = first["oidc"]["refreshes"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let later = app_session().await;
    assert!(
        later["oidc"]["refreshes"].as_i64().unwrap() > refreshes,
        "{first} {later}"
    );
    assert!(later["oidc"].get("error").is_none(), "{later}");
    assert_eq!(later["oidc"]["sid"], sid.as_str(), "{later}");
    let userinfo = binary::get_json(browser, &format!("{rp}/userinfo")).await;
    assert_eq!(userinfo["email"], "demo@example.com", "{userinfo}");

    // Forged logout tokens, posted to the app: refused, and the session stays.
    let unsigned = format!(
        "{}.{}.",
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"alg":"none","typ":"logout+jwt"}"#),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            serde_json::json!({
                "iss": op.issuer, "aud": "authjs", "iat": 1, "exp": 4_000_000_000_i64,
                "jti": "forged", "sid": sid,
                "events": {"http://schemas.openid.net/event/backchannel-logout": {}},
            })
            .to_string()
        )
    );
    let plain = reqwest::Client::new();
    for forged in ["", "a.b.c", unsigned.as_str()] {
        let r = plain
            .post(format!("{rp}/backchannel-logout"))
            .form(&[("logout_token", forged)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{forged}");
    }
    assert_eq!(app_session().await["oidc"]["sid"], sid.as_str());

    // The app's federated sign-out: authcore's sign-out page, confirmed; back to the app.
    let r = browser.get(format!("{rp}/logout")).send().await.unwrap();
    let to = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(to.starts_with(&format!("{}/oidc/logout?", op.base)), "{to}");
    let r = browser.get(&to).send().await.unwrap();
    let page = r.headers()["location"].to_str().unwrap().to_owned();
    let back = confirm_sign_out(&op, browser, &page).await;
    assert_eq!(back, format!("{rp}/logged-out?state=bye"));
    // authcore's logout token reaches the app (after the sign-out answered): its session
    // ends.
    signed_out_within(browser, &format!("{rp}/auth/session")).await;
    drop(app);
}

/// RP-initiated logout: the client sends the user with its ID token as hint; authcore's
/// sign-out page (CSRF-checked) ends the session and the browser goes on to the registered
/// post-logout redirect URI with `state`. Unregistered URIs, a hint of another issuer, a
/// hint for another client, or a forged way back are refused on authcore's page, and sign
/// nobody out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rp_initiated_logout_signs_out_and_goes_back() {
    let op = start().await;
    let c = code(&op, "rp", true).await;
    let (_, tokens) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    let hint = tokens["id_token"].as_str().unwrap().to_owned();
    let session =
        async || binary::get_json(&op.signed_in, &format!("{}/auth/session", op.base)).await;
    let logout = async |params: &[(&str, &str)]| {
        let mut url = url::Url::parse(&format!("{}/oidc/logout", op.base)).unwrap();
        url.query_pairs_mut().extend_pairs(params);
        op.signed_in.get(url).send().await.unwrap()
    };
    // Refused, on authcore's page: nobody is signed out.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = hint.split('.').collect();
    let mut other_aud: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    other_aud["aud"] = "other".into();
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        b64.encode(other_aud.to_string()),
        parts[2]
    );
    for params in [
        vec![
            ("id_token_hint", hint.as_str()),
            ("post_logout_redirect_uri", "http://127.0.0.1:9/logged-out/"),
        ],
        vec![
            ("id_token_hint", hint.as_str()),
            ("post_logout_redirect_uri", CB),
        ],
        vec![("post_logout_redirect_uri", LOGGED_OUT)],
        vec![
            ("client_id", "other"),
            ("post_logout_redirect_uri", LOGGED_OUT),
        ],
        vec![
            ("id_token_hint", hint.as_str()),
            ("client_id", "other"),
            ("post_logout_redirect_uri", LOGGED_OUT),
        ],
        vec![
            ("id_token_hint", forged.as_str()),
            ("post_logout_redirect_uri", LOGGED_OUT),
        ],
        vec![
            ("id_token_hint", "a.b.c"),
            ("post_logout_redirect_uri", LOGGED_OUT),
        ],
    ] {
        let r = logout(&params).await;
        assert_eq!(r.status(), 400, "{params:?}");
        assert!(r.headers().get("location").is_none(), "{params:?}");
    }
    let r = op
        .signed_in
        .get(format!("{}/oidc/logout/done?d=forged", op.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(session().await["user"]["email"], "demo@example.com");

    // The real one: the sign-out page, its form, then back to the client with state.
    let r = logout(&[
        ("id_token_hint", hint.as_str()),
        ("post_logout_redirect_uri", LOGGED_OUT),
        ("state", "bye"),
    ])
    .await;
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        to.starts_with("/auth/signout?callbackUrl=%2Foidc%2Flogout%2Fdone%3Fd%3D"),
        "{to}"
    );
    let page = op
        .signed_in
        .get(format!("{}{to}", op.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(
        session().await["user"]["email"],
        "demo@example.com",
        "the page alone signs nobody out"
    );
    let r = sign_out(&op).await;
    let done = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(done.contains("/oidc/logout/done?d="), "{done}");
    let r = op.signed_in.get(&done).send().await.unwrap();
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        format!("{LOGGED_OUT}?state=bye")
    );
    assert_eq!(session().await, Value::Null, "signed out");
}

/// Revocation (RFC 7009) and introspection (RFC 7662): a client learns about and revokes
/// its own access tokens only; a revoked token opens userinfo no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocation_and_introspection() {
    let op = start().await;
    let c = code(&op, "rp", true).await;
    let (_, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    let access = body["access_token"].as_str().unwrap().to_owned();
    let post = async |path: &str, basic: Option<(&str, &str)>, form: &[(&str, &str)]| {
        post_form(&op, path, basic, form).await
    };
    let rp = Some(("rp", RP_SECRET));
    let (s, info) = post("/oidc/introspect", rp, &[("token", &access)]).await;
    assert_eq!(s, 200);
    assert_eq!(info["active"], true, "{info}");
    assert_eq!(
        (info["client_id"].as_str(), info["scope"].as_str()),
        (Some("rp"), Some("openid email"))
    );
    // Another client learns nothing, and cannot revoke it; no client at all is refused.
    let other = [
        ("token", access.as_str()),
        ("client_id", "other"),
        ("client_secret", OTHER_SECRET),
    ];
    let (_, info) = post("/oidc/introspect", None, &other).await;
    assert_eq!(info, serde_json::json!({"active": false}));
    let (s, _) = post("/oidc/revoke", None, &other).await;
    assert_eq!(s, 200);
    let (_, info) = post("/oidc/introspect", rp, &[("token", &access)]).await;
    assert_eq!(
        info["active"], true,
        "another client's revocation did nothing"
    );
    let (s, body) = post("/oidc/introspect", None, &[("token", &access)]).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("invalid_client")));
    let (s, body) = post(
        "/oidc/revoke",
        Some(("rp", "wrong-secret-0123456789abcdef0123456")),
        &[("token", &access)],
    )
    .await;
    assert_eq!((s, body["error"].as_str()), (401, Some("invalid_client")));
    // Garbage is answered as any token is.
    let (s, _) = post("/oidc/revoke", rp, &[("token", "garbage")]).await;
    assert_eq!(s, 200);
    let (_, info) = post("/oidc/introspect", rp, &[("token", "garbage")]).await;
    assert_eq!(info["active"], false);
    // The client revokes it: inactive, and userinfo refuses it.
    let (s, _) = post(
        "/oidc/revoke",
        rp,
        &[("token", &access), ("token_type_hint", "access_token")],
    )
    .await;
    assert_eq!(s, 200);
    let (_, info) = post("/oidc/introspect", rp, &[("token", &access)]).await;
    assert_eq!(info["active"], false);
    let r = reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

/// The parameters of a `prompt=login` request of `client` (PKCE, `state` and `nonce`).
fn prompt_login(client: &str) -> Vec<(&str, &str)> {
    vec![
        ("client_id", client),
        ("redirect_uri", CB),
        ("response_type", "code"),
        ("scope", "openid"),
        ("state", "st"),
        ("nonce", "n"),
        ("prompt", "login"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

/// Asserts that `r` sends the browser to sign in: no code reached the redirect URI.
fn asked_to_sign_in(r: &reqwest::Response, case: &str) {
    assert_eq!(r.status(), 302, "{case}");
    let to = r.headers()["location"].to_str().unwrap();
    assert!(
        to.starts_with("/auth/signin?callbackUrl=") && !to.contains("code="),
        "{case}: {to}"
    );
}

/// The way back of the sign-in page `r` sends to (its `callbackUrl`: the authorization
/// request with its `authcore_login_after` marker), and that marker.
fn way_back(op: &Op, r: &reqwest::Response) -> (String, String) {
    asked_to_sign_in(r, "the way back");
    let to = r.headers()["location"].to_str().unwrap();
    let back = url::Url::parse(&format!("{}{to}", op.base))
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "callbackUrl")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    let marker = url::Url::parse(&op.base)
        .unwrap()
        .join(&back)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "authcore_login_after")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no marker: {back}"));
    (back, marker)
}

/// `browser` signs the demo user in again on the sign-in page, which sends it to `back`:
/// that absolute URL, not yet followed.
async fn sign_in_again(op: &Op, browser: &reqwest::Client, back: &str) -> String {
    let csrf = binary::csrf_token(browser, &op.base).await;
    let r = browser
        .post(format!("{}/auth/callback/credentials", op.base))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("username", "demo"),
            ("password", "authcore-demo"),
            ("callbackUrl", back),
        ])
        .send()
        .await
        .unwrap();
    let to = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(to.contains("/oidc/authorize?"), "{to}");
    url::Url::parse(&op.base)
        .unwrap()
        .join(&to)
        .unwrap()
        .to_string()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

/// `prompt=login`: a session is not enough, the user signs in again and only then gets a
/// code, whose ID token has the new sign-in's `auth_time`. The way back's marker does not
/// pass an old sign-in off as fresh: a made-up one, the marker in another browser whose
/// session signed in before it, and the marker a second time are all sent to sign in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_login_asks_for_a_fresh_sign_in() {
    let op = start().await;
    // `op.signed_in` is another browser, whose session is older than the marker.
    let browser = sign_in(&op).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let asked_at = unix_now();
    let params = prompt_login("rp");
    let r = authorize_as(&op, &browser, &params).await;
    let (back, _) = way_back(&op, &r);
    let mut forged = params.clone();
    forged.push(("authcore_login_after", "0"));
    asked_to_sign_in(&authorize_as(&op, &browser, &forged).await, "forged marker");
    // Signing in again, the browser is sent back to the request with its marker.
    let back = sign_in_again(&op, &browser, &back).await;
    asked_to_sign_in(
        &op.signed_in.get(&back).send().await.unwrap(),
        "the marker in another browser, signed in before it",
    );
    let r = browser.get(&back).send().await.unwrap();
    let to = location(&r).unwrap();
    assert!(to.as_str().starts_with(CB), "{to}");
    let code = query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"));
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
    assert_eq!(s, 200, "{body}");
    let id_token = payload(body["id_token"].as_str().unwrap());
    let auth_time = id_token["auth_time"].as_i64().unwrap();
    assert!(
        (asked_at..=unix_now()).contains(&auth_time),
        "the new sign-in's auth_time: {id_token}"
    );
    assert_eq!(id_token["nonce"], "n");
    asked_to_sign_in(
        &browser.get(&back).send().await.unwrap(),
        "the marker a second time",
    );
}

/// A `prompt=login` marker belongs to its request: taken to another client, or to the
/// request with any parameter changed, added or left out, it lets nothing through (the
/// browser is sent to sign in); with its own request it still gets the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_login_marker_is_bound_to_its_request() {
    const CB2: &str = "http://127.0.0.1:9/other-callback";
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "two"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}", "{CB2}"]
"#
    ))
    .await;
    let browser = sign_in(&op).await;
    let params = prompt_login("two");
    let r = authorize_as(&op, &browser, &params).await;
    let (back, marker) = way_back(&op, &r);
    let back = sign_in_again(&op, &browser, &back).await;
    let changed = |name: &str, value: &str| -> Vec<(String, String)> {
        params
            .iter()
            .map(|&(k, v)| {
                let v = if k == name { value } else { v };
                (k.to_owned(), v.to_owned())
            })
            .collect()
    };
    let as_sent = changed("", "");
    let mut added = as_sent.clone();
    added.push(("max_age".into(), "3600".into()));
    let mut left_out = as_sent;
    left_out.retain(|(k, _)| k != "nonce");
    let cases = [
        ("another client", changed("client_id", "rp")),
        ("another redirect_uri", changed("redirect_uri", CB2)),
        ("another scope", changed("scope", "openid email")),
        ("another state", changed("state", "st2")),
        ("another nonce", changed("nonce", "n2")),
        ("a parameter added", added),
        ("a parameter left out", left_out),
    ];
    for (case, mut moved) in cases {
        moved.push(("authcore_login_after".into(), marker.clone()));
        let mut url = url::Url::parse(&format!("{}/oidc/authorize", op.base)).unwrap();
        url.query_pairs_mut().extend_pairs(&moved);
        asked_to_sign_in(&browser.get(url).send().await.unwrap(), case);
    }
    let r = browser.get(&back).send().await.unwrap();
    let to = location(&r).unwrap();
    assert!(
        to.as_str().starts_with(CB) && query(&to, "code").is_some(),
        "its own request: {to}"
    );
}

/// `login_hint` goes on to the sign-in page as its `email` (the address field's value),
/// encoded: a hint cannot add parameters of its own to the page's URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_hint_reaches_the_sign_in_page() {
    let op = start().await;
    let nobody = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let hint = "Demo@Example.com&callbackUrl=https://evil.example";
    for (hint, offered) in [
        (
            hint,
            Some("demo@example.com&callbackurl=https://evil.example"),
        ),
        ("\"><svg onload=alert(1)>@example.com", None),
        ("not an address", None),
    ] {
        let r = authorize_as(
            &op,
            &nobody,
            &[
                ("client_id", "rp"),
                ("redirect_uri", CB),
                ("response_type", "code"),
                ("scope", "openid"),
                ("login_hint", hint),
            ],
        )
        .await;
        let to = url::Url::parse(&format!(
            "{}{}",
            op.base,
            r.headers()["location"].to_str().unwrap()
        ))
        .unwrap();
        assert_eq!(to.path(), "/auth/signin", "{to}");
        let pairs: Vec<(String, String)> = to.query_pairs().into_owned().collect();
        let named = |n: &str| pairs.iter().filter(|(k, _)| k == n).count();
        assert_eq!(named("callbackUrl"), 1, "{to}");
        assert!(
            query(&to, "callbackUrl")
                .unwrap()
                .starts_with("/oidc/authorize?"),
            "{to}"
        );
        assert_eq!(query(&to, "email").as_deref(), offered, "{to}");
        let page = nobody.get(to.as_str()).send().await.unwrap();
        assert_eq!(page.status(), 200, "{to}");
    }
}

/// The configuration `docs/identity-provider.md` shows, as written (its placeholders
/// filled in: key files, secrets, the `private_key_jwt` client's key), is a provider.
#[test]
fn the_documented_configuration_is_a_provider() {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/identity-provider.md"),
    )
    .unwrap();
    let from = doc.find("## Configuration").unwrap();
    let block = doc[from..]
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    let dir = fresh_dir();
    let key = |algorithm: &str, name: &str| {
        let path = dir.join(name);
        assert!(
            std::process::Command::new("openssl")
                .args(["genpkey", "-algorithm", algorithm, "-out"])
                .arg(&path)
                .status()
                .unwrap()
                .success()
        );
        path.display().to_string()
    };
    let (_, jwks) = relying_party_key(&dir, "billing", "RS256");
    let filled: String = block
        .replace("/etc/authcore/oidc.pem", &key("ed25519", "oidc.pem"))
        .replace("/etc/authcore/oidc-rsa.pem", &key("rsa", "oidc-rsa.pem"))
        .replace("\"…\"", "\"a-client-secret-0123456789abcdef0123\"")
        .lines()
        .map(|l| match l.starts_with("jwks = ") {
            true => format!("jwks = '{jwks}'\n"),
            false => format!("{l}\n"),
        })
        .collect();
    let path = dir.join("documented.toml");
    std::fs::write(&path, filled).unwrap();
    let file = authcore_server::ConfigFile::load(&path).unwrap();
    let section = file.oidc_provider.expect("an [oidc_provider] section");
    assert_eq!(section.groups.len(), 2);
    let env = authcore::env::Env::from_pairs([("AUTH_URL", "https://auth.example.com/auth")]);
    let provider = authcore_oidc_provider::OpenIdProvider::new(&env, section).unwrap();
    assert_eq!(provider.issuer(), "https://auth.example.com/oidc");
    let _ = std::fs::remove_dir_all(dir);
}

/// The handler and the back-channel logout events configured into it do not keep each
/// other alive: once the server and its router are dropped, the handler is gone (and
/// with it the database pool).
#[tokio::test]
async fn a_dropped_provider_is_gone() {
    let dir = fresh_dir();
    let key = dir.join("oidc.pem");
    assert!(
        std::process::Command::new("openssl")
            .args(["genpkey", "-algorithm", "ed25519", "-out"])
            .arg(&key)
            .status()
            .unwrap()
            .success()
    );
    let path = dir.join("authcore.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[server]
database_url = "sqlite://{db}?mode=rwc"
[auth]
secret = "{SECRET}"
url = "http://localhost:1/auth"
[oidc_provider]
signing_keys = ["{key}"]
{lib}"#,
            db = dir.join("op.db").display(),
            key = key.display(),
            lib = library_client("lib", "http://127.0.0.1:9/bcl"),
        ),
    )
    .unwrap();
    let server = ServerConfig::from_file(&path, authcore::env::Env::default())
        .unwrap()
        .build()
        .await
        .unwrap();
    let router = server.router();
    let weak = server.auth().downgrade();
    assert!(weak.upgrade().is_some());
    drop((router, server));
    assert!(weak.upgrade().is_none(), "the handler outlived its server");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn discovery_and_keys() {
    let op = start().await;
    let meta: Value = reqwest::get(format!("{}/oidc/.well-known/openid-configuration", op.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["issuer"], op.issuer);
    assert_eq!(
        meta["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
    assert_eq!(meta["acr_values_supported"], serde_json::json!(["phr"]));
    // Organizations are off here: their scope is neither offered nor granted.
    for field in ["scopes_supported", "claims_supported"] {
        let listed = meta[field].as_array().unwrap();
        assert!(listed.contains(&"groups".into()), "{field}: {meta}");
        assert!(!listed.contains(&"organizations".into()), "{field}: {meta}");
    }
    let c = code_for(&op, "rp", "openid organizations", true).await;
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, Some(VERIFIER))).await;
    assert_eq!((s, body["scope"].as_str()), (200, Some("openid")), "{body}");
    let jwks: Value = reqwest::get(meta["jwks_uri"].as_str().unwrap())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jwks["keys"][0]["alg"], "EdDSA");
    assert!(jwks["keys"][0].get("d").is_none(), "no private part");
}

/// The claims of a JWS, unverified (what the test itself issued and compares).
pub(crate) fn payload(jws: &str) -> Value {
    use base64::Engine as _;
    let part = jws.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// `POST /oidc/userinfo` with `access`: the status.
pub(crate) async fn userinfo_status(op: &Op, access: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Refresh tokens: only with `offline_access` for a client with the grant; rotated at each
/// use; bound to their client; never wider than the grant; one used twice revokes its grant
/// (every refresh and access token of it); revoking one revokes the grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_tokens_rotate_and_a_reused_one_revokes_the_grant() {
    let op = start().await;
    let rp = Some(("rp", RP_SECRET));
    let refresh = |token: &str, scope: Option<&str>| {
        let mut f = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", token.to_owned()),
        ];
        f.extend(scope.map(|s| ("scope", s.to_owned())));
        f
    };
    let send = async |basic: Option<(&str, &str)>, form: Vec<(&'static str, String)>| {
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        token(&op, basic, &form).await
    };
    // A refresh token refused as no grant (any more).
    let refused = async |token: &str| {
        let (s, body) = send(rp, refresh(token, None)).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "{body}"
        );
    };

    // No offline_access, or a client without the grant (the scope is not granted): no
    // refresh token.
    let c = code_for(&op, "rp", "openid email", false).await;
    let (s, body) = token(&op, rp, &grant(&c, None)).await;
    assert_eq!(s, 200, "{body}");
    assert!(body.get("refresh_token").is_none(), "{body}");
    let c = code_for(&op, "other", "openid offline_access", false).await;
    let mut f = grant(&c, None);
    f.extend([("client_id", "other"), ("client_secret", OTHER_SECRET)]);
    let (s, body) = token(&op, None, &f).await;
    assert_eq!((s, body["scope"].as_str()), (200, Some("openid")), "{body}");
    assert!(body.get("refresh_token").is_none(), "{body}");

    let c = code_for(&op, "rp", "openid email offline_access", false).await;
    let (s, first) = token(&op, rp, &grant(&c, None)).await;
    assert_eq!(s, 200, "{first}");
    let r1 = first["refresh_token"].as_str().unwrap().to_owned();
    let a1 = first["access_token"].as_str().unwrap().to_owned();

    // Refused, and r1 left unspent: another client, a wider scope, a made-up token, a
    // client's own grant type it does not have.
    let mut as_other = refresh(&r1, None);
    as_other.extend([
        ("client_id", "other".to_owned()),
        ("client_secret", OTHER_SECRET.to_owned()),
    ]);
    let (s, body) = send(None, as_other).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("unauthorized_client")),
        "{body}"
    );
    for (form, error) in [
        (refresh(&r1, Some("openid profile")), "invalid_scope"),
        (refresh("garbage", None), "invalid_grant"),
        (refresh(&a1, None), "invalid_grant"),
        (refresh(&c, None), "invalid_grant"),
    ] {
        let (s, body) = send(rp, form.clone()).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (400, Some(error)),
            "{form:?} {body}"
        );
    }

    // A narrower access token; a new refresh token; an ID token for the same user.
    let (s, second) = send(rp, refresh(&r1, Some("openid"))).await;
    assert_eq!(
        (s, second["scope"].as_str()),
        (200, Some("openid")),
        "{second}"
    );
    let r2 = second["refresh_token"].as_str().unwrap().to_owned();
    let a2 = second["access_token"].as_str().unwrap().to_owned();
    assert_ne!(r1, r2);
    let id1 = payload(first["id_token"].as_str().unwrap());
    let id2 = payload(second["id_token"].as_str().unwrap());
    assert_eq!(
        (&id2["sub"], &id2["auth_time"], &id2["sid"]),
        (&id1["sub"], &id1["auth_time"], &id1["sid"])
    );
    assert_eq!(userinfo_status(&op, &a2).await, 200);

    // r1 again: refused, and the grant with it: r2, a1 and a2 no longer work.
    refused(&r1).await;
    refused(&r2).await;
    assert_eq!(userinfo_status(&op, &a1).await, 401);
    assert_eq!(userinfo_status(&op, &a2).await, 401);

    // Two uses of one token at once: at most one answer carries tokens, and the grant ends.
    let c = code_for(&op, "rp", "openid offline_access", false).await;
    let (_, body) = token(&op, rp, &grant(&c, None)).await;
    let r = body["refresh_token"].as_str().unwrap().to_owned();
    let (x, y) = tokio::join!(send(rp, refresh(&r, None)), send(rp, refresh(&r, None)));
    let winners: Vec<&Value> = [&x, &y]
        .into_iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(winners.len(), 1, "{x:?} {y:?}");
    let next = winners[0]["refresh_token"].as_str().unwrap().to_owned();
    let (s, _) = send(rp, refresh(&next, None)).await;
    assert_eq!(s, 400, "the race revoked the grant");

    // Revoking a refresh token (RFC 7009 §2.1) revokes the grant: its access token too.
    let c = code_for(&op, "rp", "openid offline_access", false).await;
    let (_, body) = token(&op, rp, &grant(&c, None)).await;
    let r = body["refresh_token"].as_str().unwrap().to_owned();
    let a = body["access_token"].as_str().unwrap().to_owned();
    // Another client's revocation does nothing.
    let (s, _) = post_form(
        &op,
        "/oidc/revoke",
        None,
        &[
            ("token", &r),
            ("client_id", "other"),
            ("client_secret", OTHER_SECRET),
        ],
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(userinfo_status(&op, &a).await, 200);
    let (s, _) = post_form(
        &op,
        "/oidc/revoke",
        rp,
        &[("token", &r), ("token_type_hint", "refresh_token")],
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(userinfo_status(&op, &a).await, 401);
    refused(&r).await;
}

const SERVICE_SECRET: &str = "service-secret-0123456789abcdef012345";

/// `client_credentials`: a service client's own token, for no user: no ID token, no
/// refresh token, no scope; userinfo refuses it; introspection tells the client it is its.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_client_gets_a_token_of_its_own() {
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "service"
secret = "{SERVICE_SECRET}"
grant_types = ["client_credentials"]
"#
    ))
    .await;
    let service = Some(("service", SERVICE_SECRET));
    let cc = [("grant_type", "client_credentials")];
    let (s, body) = token(&op, service, &cc).await;
    assert_eq!(s, 200, "{body}");
    assert!(
        body.get("id_token").is_none() && body.get("refresh_token").is_none(),
        "{body}"
    );
    let access = body["access_token"].as_str().unwrap();
    let claims = payload(access);
    assert_eq!(
        (claims["sub"].as_str(), claims["client_id"].as_str()),
        (Some("service"), Some("service"))
    );
    assert_eq!(userinfo_status(&op, access).await, 401, "no user behind it");
    let (_, info) = post_form(&op, "/oidc/introspect", service, &[("token", access)]).await;
    assert_eq!(
        (info["active"].as_bool(), info["sub"].as_str()),
        (Some(true), Some("service")),
        "{info}"
    );

    // Refused: a scope, a wrong secret, a client without the grant, a public client, and
    // the service signing users in.
    let (s, body) = token(
        &op,
        service,
        &[("grant_type", "client_credentials"), ("scope", "openid")],
    )
    .await;
    assert_eq!((s, body["error"].as_str()), (400, Some("invalid_scope")));
    let (s, body) = token(
        &op,
        Some(("service", "wrong-secret-0123456789abcdef0123456")),
        &cc,
    )
    .await;
    assert_eq!((s, body["error"].as_str()), (401, Some("invalid_client")));
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &cc).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("unauthorized_client"))
    );
    let (s, body) = token(
        &op,
        None,
        &[("grant_type", "client_credentials"), ("client_id", "spa")],
    )
    .await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("unauthorized_client"))
    );
    let r = authorize(
        &op,
        &[
            ("client_id", "service"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid"),
        ],
    )
    .await;
    assert_eq!(r.status(), 400, "shown, not redirected");
    let (s, body) = token(
        &op,
        service,
        &[
            ("grant_type", "password"),
            ("username", "demo"),
            ("password", "authcore-demo"),
        ],
    )
    .await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
}

/// A receiver of logout tokens on loopback: its URL, and the tokens posted to it.
async fn logout_receiver() -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/bcl/{client}",
        axum::routing::post(
            move |axum::extract::Path(client): axum::extract::Path<String>, body: String| {
                let tx = tx.clone();
                async move {
                    let token = form_urlencoded::parse(body.as_bytes())
                        .find(|(k, _)| k == "logout_token")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    let _ = tx.send((client, token));
                    "ok"
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/bcl"), rx)
}

/// The next logout token [`logout_receiver`] received: the client it was posted to, and
/// the token.
async fn next_logout(
    logouts: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) -> (String, String) {
    tokio::time::timeout(Duration::from_secs(10), logouts.recv())
        .await
        .expect("a logout token within 10 s")
        .unwrap()
}

/// The logout token's claims as jose (npm) verifies them as a relying party does; what the
/// script printed when it refuses the token.
async fn logout_token_check(op: &Op, client: &str, token: &str) -> Result<Value, Vec<Value>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/oidc-rp");
    let steps = browser::run_in(
        &dir,
        "node",
        "verify-logout-token.mjs",
        &[&format!("{}/jwks", op.issuer), &op.issuer, client, token],
        Duration::from_secs(30),
    )
    .await;
    match steps.iter().find_map(|s| s.get("claims")) {
        Some(claims) => Ok(claims.clone()),
        None => Err(steps),
    }
}

/// [`logout_token_check`] that must pass.
async fn verified_logout_token(op: &Op, client: &str, token: &str) -> Value {
    logout_token_check(op, client, token)
        .await
        .unwrap_or_else(|steps| panic!("refused: {steps:?}"))
}

/// A fresh session of the demo user at `base`, in a client of its own: the client and its
/// cookie jar.
async fn sign_in_at(base: &str) -> (reqwest::Client, Arc<reqwest::cookie::Jar>) {
    sign_in_at_as(base, ("credentials", "demo", "authcore-demo")).await
}

/// A browser signed in at `base` by `(provider, username, password)`, and its cookie jar.
pub(crate) async fn sign_in_at_as(
    base: &str,
    (provider, username, password): (&str, &str, &str),
) -> (reqwest::Client, Arc<reqwest::cookie::Jar>) {
    let jar = Arc::new(reqwest::cookie::Jar::default());
    let client = reqwest::Client::builder()
        .cookie_provider(Arc::clone(&jar))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let csrf = binary::csrf_token(&client, base).await;
    let r = client
        .post(format!("{base}/auth/callback/{provider}"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("username", username),
            ("password", password),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    (client, jar)
}

/// `browser` signs the demo user in at `base` with the password.
async fn sign_in_with_password(browser: &reqwest::Client, base: &str) {
    let csrf = binary::csrf_token(browser, base).await;
    let r = browser
        .post(format!("{base}/auth/callback/credentials"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("username", "demo"),
            ("password", "authcore-demo"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
}

/// Waits (at most 10 s) until `browser`'s session at `session_url` (an app's session
/// endpoint) is null: a back-channel logout is posted after the sign-out answered.
async fn signed_out_within(browser: &reqwest::Client, session_url: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let session = binary::get_json(browser, session_url).await;
        if session.is_null() {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{session}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The sign-out form of authcore's sign-out page, posted by the demo user's client.
async fn sign_out(op: &Op) -> reqwest::Response {
    sign_out_as(op, &op.signed_in).await
}

/// The sign-out form of authcore's sign-out page, posted by `browser`.
async fn sign_out_as(op: &Op, browser: &reqwest::Client) -> reqwest::Response {
    let csrf = binary::csrf_token(browser, &op.base).await;
    browser
        .post(format!("{}/auth/signout", op.base))
        .form(&[("csrfToken", csrf.as_str())])
        .send()
        .await
        .unwrap()
}

/// A new session of the demo user at the provider: its browser, and the `Cookie` header a
/// relying party's script sends as that browser.
pub(crate) async fn fresh_session(op: &Op) -> (reqwest::Client, String) {
    use reqwest::cookie::CookieStore as _;
    let (browser, jar) = sign_in_at(&op.base).await;
    let cookie = jar
        .cookies(&op.base.parse().unwrap())
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    (browser, cookie)
}

/// A client with a secret for a relying-party library: sign-in with refresh, RP-initiated
/// logout back to [`LOGGED_OUT`], and logout tokens posted to `<receiver>/<id>`.
fn library_client(id: &str, receiver: &str) -> String {
    format!(
        r#"
[[oidc_provider.clients]]
id = "{id}"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
post_logout_redirect_uris = ["{LOGGED_OUT}"]
grant_types = ["authorization_code", "refresh_token"]
backchannel_logout_uri = "{receiver}/{id}"
"#
    )
}

/// The end of an RP-initiated logout: `browser` was sent to `location` (authcore's
/// sign-out page) by a relying party's end-session request; the user confirms there.
/// Returns where the browser is sent back to.
async fn confirm_sign_out(op: &Op, browser: &reqwest::Client, location: &str) -> String {
    assert!(location.starts_with("/auth/signout?"), "{location}");
    let page = browser
        .get(format!("{}{location}", op.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let r = sign_out_as(op, browser).await;
    assert_eq!(r.status(), 302);
    let done = r.headers()["location"].to_str().unwrap().to_owned();
    let r = browser.get(&done).send().await.unwrap();
    r.headers()["location"].to_str().unwrap().to_owned()
}

/// [`confirm_sign_out`], and the logout token `client` was posted: the next one
/// [`logout_receiver`] got, which must be for `client`.
async fn sign_out_through_authcore(
    op: &Op,
    browser: &reqwest::Client,
    location: &str,
    logouts: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
    client: &str,
) -> (String, String) {
    let back = confirm_sign_out(op, browser, location).await;
    let (to, token) = next_logout(logouts).await;
    assert_eq!(to, client);
    (back, token)
}

/// [`sign_in_at`] the provider.
async fn sign_in(op: &Op) -> reqwest::Client {
    sign_in_at(&op.base).await.0
}

/// The `sid` of a sign-in of `browser` to `client` (its code redeemed).
async fn signed_in_to(op: &Op, browser: &reqwest::Client, client: &str) -> String {
    let r = authorize_as(
        op,
        browser,
        &[
            ("client_id", client),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid"),
        ],
    )
    .await;
    let to = location(&r).unwrap();
    let c = query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"));
    let (s, body) = token(op, Some((client, RP_SECRET)), &grant(&c, None)).await;
    assert_eq!(s, 200, "{body}");
    payload(body["id_token"].as_str().unwrap())["sid"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Back-Channel Logout 1.0: when a session ends at authcore — signed out, ended from the
/// account page, the user deleted — each client it signed in to is posted a logout token
/// that a relying party's JOSE library accepts; clients it did not sign in to hear nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_channel_logout_tells_the_clients_a_session_signed_in_to() {
    let (uri, mut logouts) = logout_receiver().await;
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "bcl"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
backchannel_logout_uri = "{uri}/bcl"

[[oidc_provider.clients]]
id = "bcl-unused"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
backchannel_logout_uri = "{uri}/bcl-unused"
"#
    ))
    .await;

    // Sign-out.
    let sid = signed_in_to(&op, &op.signed_in, "bcl").await;
    let r = sign_out(&op).await;
    assert_eq!(r.status(), 302);
    let (client, token) = next_logout(&mut logouts).await;
    assert_eq!(client, "bcl");
    let claims = verified_logout_token(&op, "bcl", &token).await;
    assert_eq!(claims["sid"], sid.as_str(), "{claims}");
    assert!(claims["sub"].as_str().is_some(), "{claims}");
    // A token for another client, or altered, is refused by the relying party's check.
    let forged = altered_signature(&token);
    for (aud, t) in [("bcl-unused", token.as_str()), ("bcl", forged.as_str())] {
        let checked = logout_token_check(&op, aud, t).await;
        assert!(checked.is_err(), "{aud}: {checked:?}");
    }

    // An account change (CSRF-checked JSON POST) by `browser`, and the logout token it
    // makes `bcl` receive, verified.
    let mut account_change = async |browser: &reqwest::Client, path: &str| {
        let csrf = binary::csrf_token(browser, &op.base).await;
        let r = browser
            .post(format!("{}{path}", op.base))
            .json(&serde_json::json!({"csrfToken": csrf}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}: {}", r.text().await.unwrap());
        let (client, token) = next_logout(&mut logouts).await;
        assert_eq!(client, "bcl");
        verified_logout_token(&op, "bcl", &token).await
    };

    // "Sign out everywhere else" from another session: the ended session's clients hear.
    let a = sign_in(&op).await;
    let b = sign_in(&op).await;
    let sid_b = signed_in_to(&op, &b, "bcl").await;
    let claims = account_change(&a, "/account/sessions/revoke-others").await;
    assert_eq!(claims["sid"], sid_b.as_str(), "{claims}");

    // The user deleted: every session, so the token names the user alone.
    let _ = signed_in_to(&op, &a, "bcl").await;
    let claims = account_change(&a, "/account/delete").await;
    assert!(claims.get("sid").is_none(), "{claims}");
    assert!(claims["sub"].as_str().is_some(), "{claims}");

    // The unused client heard nothing at all.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok((client, _)) = logouts.try_recv() {
        assert_ne!(client, "bcl-unused");
    }
}

/// The tokens `client` (with [`RP_SECRET`], PKCE with [`VERIFIER`]) gets for the code
/// `browser` is sent back with, following authcore's redirects from `from` (the end of a
/// sign-in on the way to an authorization request).
async fn tokens_at_the_end_of(
    op: &Op,
    browser: &reqwest::Client,
    from: url::Url,
    client: &str,
) -> Value {
    let mut to = from;
    for _ in 0..4 {
        let r = browser.get(to.as_str()).send().await.unwrap();
        let location = r.headers()["location"].to_str().unwrap();
        to = to.join(location).unwrap();
        if to.as_str().starts_with(CB) {
            let code = query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"));
            let (status, tokens) =
                token(op, Some((client, RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
            assert_eq!(status, 200, "{tokens}");
            return tokens;
        }
    }
    panic!("not back at the app: {to}");
}

/// authcore as the broker between an app and an upstream OpenID provider: the app's
/// authorization request finds nobody signed in, so authcore's sign-in page sends the
/// browser on to the upstream provider (`oidc-provider`); back at authcore, the app gets
/// its code and an ID token for the upstream user, with the group its upstream account is
/// named in (and not the one its unverified address would match). When the user then signs out at the
/// upstream provider, its back-channel logout ends that authcore session, and authcore's
/// own logout token tells the app: one sign-out, all the way down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_sign_in_reaches_the_app_and_an_upstream_sign_out_ends_it() {
    use crate::support::oidc_provider::{Callback, OidcProvider};
    let listener = listener().await;
    let base = base_of(&listener);
    let upstream = OidcProvider::start_with(
        &[&format!("{base}/auth/callback/oidc")],
        &[(
            "OIDC_BACKCHANNEL_LOGOUT_URI",
            &format!("{base}/auth/backchannel-logout/oidc"),
        )],
    )
    .await;
    let (receiver, mut logouts) = logout_receiver().await;
    let op = start_on(
        listener,
        &format!(
            r#"{lib}
[providers.oidc]
id = "client-basic"
secret = "secret-basic"
issuer = "{issuer}"
name = "Upstream"

[oidc_provider.groups]
admins = ["oidc:user-1"]
# The upstream's address is not verified here: no member by it.
staff = ["@example.com"]
"#,
            lib = library_client("lib", &receiver),
            issuer = upstream.issuer
        ),
    )
    .await;

    // The app sends a browser that is signed in nowhere.
    let browser = OidcProvider::browser();
    let r = authorize_as(
        &op,
        &browser,
        &[
            ("client_id", "lib"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email groups"),
            ("nonce", "n-1"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    // Where a redirect of authcore's goes (its own redirects are relative).
    let next = |r: &reqwest::Response| -> url::Url {
        let to = r.headers()["location"].to_str().unwrap();
        url::Url::parse(&op.base).unwrap().join(to).unwrap()
    };
    let to_sign_in = next(&r);
    assert_eq!(to_sign_in.path(), "/auth/signin", "{to_sign_in}");
    let back_to_authorize = query(&to_sign_in, "callbackUrl").unwrap();
    // authcore's sign-in page, its upstream button: on to the upstream provider.
    let csrf = binary::csrf_token(&browser, &op.base).await;
    let r = browser
        .post(format!("{}/auth/signin/oidc", op.base))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("callbackUrl", back_to_authorize.as_str()),
        ])
        .send()
        .await
        .unwrap();
    let to_upstream = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(to_upstream.starts_with(&upstream.issuer), "{to_upstream}");
    let callback = format!("{}/auth/callback/oidc", op.base);
    let Callback::Query(back) = upstream
        .authorize_in(&browser, &to_upstream, &callback)
        .await
    else {
        panic!("a query callback expected");
    };
    // authcore's callback signs the user in and goes back to the authorization request,
    // which now answers the app with a code.
    let tokens = tokens_at_the_end_of(&op, &browser, url::Url::parse(&back).unwrap(), "lib").await;
    let claims = payload(tokens["id_token"].as_str().unwrap());
    assert_eq!(claims["email"], "user-1@example.com", "{claims}");
    assert_eq!(claims["nonce"], "n-1", "{claims}");
    // The group its upstream account is a member of, in the ID token and at userinfo.
    assert_eq!(claims["groups"], serde_json::json!(["admins"]), "{claims}");
    let info = reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(tokens["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(info["groups"], serde_json::json!(["admins"]), "{info}");
    let sid = claims["sid"].as_str().unwrap().to_owned();

    // The user signs out at the upstream provider: its logout token ends the authcore
    // session, whose end authcore tells the app.
    upstream.end_session(&browser).await;
    let (client, logout_token) = next_logout(&mut logouts).await;
    assert_eq!(client, "lib");
    let logout = verified_logout_token(&op, "lib", &logout_token).await;
    assert_eq!(logout["sid"], sid.as_str(), "{logout}");
    let session = binary::get_json(&browser, &format!("{}/auth/session", op.base)).await;
    assert_eq!(session, Value::Null, "signed out of authcore");
}

/// A magic link signs the user in to authcore on the way to the app: the app's
/// authorization request goes to authcore's sign-in page, the address gets its link by
/// mail (a real SMTP server), the link signs the user in and goes back to the request, and
/// the app gets an ID token for the verified address (`amr` `otp`), in the group its
/// domain names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_link_sign_in_reaches_the_app() {
    use crate::support::oidc_provider::OidcProvider;
    use crate::support::smtp::SmtpServer;
    let mut mail = SmtpServer::start().await;
    let op = start_with(&format!(
        r#"
[email]
smtp_url = "smtp://127.0.0.1:{port}"

[oidc_provider.groups]
staff = ["@example.com"]
"#,
        port = mail.port
    ))
    .await;
    let browser = OidcProvider::browser();
    let r = authorize_as(
        &op,
        &browser,
        &[
            ("client_id", "rp"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email groups"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("login_hint", "ml@example.com"),
        ],
    )
    .await;
    let base = url::Url::parse(&op.base).unwrap();
    let to_sign_in = base
        .join(r.headers()["location"].to_str().unwrap())
        .unwrap();
    assert_eq!(
        query(&to_sign_in, "email").as_deref(),
        Some("ml@example.com")
    );
    let back_to_authorize = query(&to_sign_in, "callbackUrl").unwrap();
    let csrf = binary::csrf_token(&browser, &op.base).await;
    let r = browser
        .post(format!("{}/auth/signin/email", op.base))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("email", "ml@example.com"),
            ("callbackUrl", back_to_authorize.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    let message = mail.next_message().await;
    assert_eq!(message["envelope"]["to"][0], "ml@example.com", "{message}");
    let text = message["text"].as_str().unwrap();
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/auth/callback/email?"))
        .unwrap_or_else(|| panic!("no link in {text}"));
    // The link signs the user in and goes back to the authorization request, which
    // answers the app.
    let tokens = tokens_at_the_end_of(&op, &browser, url::Url::parse(link).unwrap(), "rp").await;
    let claims = payload(tokens["id_token"].as_str().unwrap());
    assert_eq!(claims["email"], "ml@example.com", "{claims}");
    assert_eq!(claims["email_verified"], true, "{claims}");
    assert_eq!(claims["amr"], serde_json::json!(["otp"]), "{claims}");
    assert_eq!(claims["groups"], serde_json::json!(["staff"]), "{claims}");
}

/// A user who signs in to authcore with a passkey reaches the app as such: the ID token's
/// `amr` names the hardware key and its `acr` is `phr` (phishing-resistant), which a
/// password sign-in never gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_sign_in_reaches_the_app_as_phishing_resistant() {
    use crate::support::soft_authenticator::SoftAuthenticator;
    let op = start().await;
    // The demo user adds a passkey while signed in (with the password), signs out, and
    // signs in with the passkey alone.
    let (browser, _) = fresh_session(&op).await;
    let mut key = SoftAuthenticator::new();
    let options_url = format!("{}/auth/webauthn-options/passkey", op.base);
    let passkey = async |action: &str, data: Value| {
        let r = browser
            .post(format!("{}/auth/callback/passkey", op.base))
            .form(&[("action", action), ("data", data.to_string().as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 302, "{action}");
    };
    let options = binary::get_json(&browser, &format!("{options_url}?action=register")).await;
    assert_eq!(options["action"], "register", "{options}");
    passkey("register", key.register(&options["options"], &op.base)).await;
    assert_eq!(sign_out_as(&op, &browser).await.status(), 302);
    let options = binary::get_json(&browser, &format!("{options_url}?action=authenticate")).await;
    passkey(
        "authenticate",
        key.authenticate(&options["options"], &op.base),
    )
    .await;
    let session = binary::get_json(&browser, &format!("{}/auth/session", op.base)).await;
    assert_eq!(session["user"]["email"], "demo@example.com", "{session}");

    let r = authorize_as(
        &op,
        &browser,
        &[
            ("client_id", "rp"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    let code = query(&location(&r).unwrap(), "code").expect("a code");
    let (status, tokens) = token(&op, Some(("rp", RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
    assert_eq!(status, 200, "{tokens}");
    let claims = payload(tokens["id_token"].as_str().unwrap());
    assert_eq!(claims["email"], "demo@example.com", "{claims}");
    assert!(
        claims["amr"].as_array().unwrap().iter().any(|m| m == "hwk"),
        "{claims}"
    );
    assert_eq!(claims["acr"], "phr", "{claims}");
}

/// authcore as the relying party of authcore as the OpenID Provider: an app built on
/// authcore's generic OIDC provider (discovery, PKCE, state, nonce, `iss`, the EdDSA ID
/// token checked against the JWK Set, the profile from userinfo) signs the provider's user
/// in; its session names them; its access token is refreshed when it expires; signed out
/// at the provider, the user is signed out of the app by the provider's back-channel
/// logout; signed out of the app, the user is sent on to sign out at the provider too
/// (RP-initiated logout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authcore_app_signs_in_through_authcore() {
    use authcore::providers::{Checks, OAuthProvider};
    use authcore_axum::AuthRouterExt as _;
    // The app on 127.0.0.1, the provider on localhost: each host keeps its own cookies.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let app_base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let callback = format!("{app_base}/auth/callback/authcore");
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "authcore-app"
secret = "{RP_SECRET}"
redirect_uris = ["{callback}"]
backchannel_logout_uri = "{app_base}/auth/backchannel-logout/authcore"
grant_types = ["authorization_code", "refresh_token"]
access_token_ttl = 2
post_logout_redirect_uris = ["{app_base}/bye"]
"#
    ))
    .await;
    // The profile from userinfo (the ID token checked, then userinfo for its `sub`).
    let provider = OAuthProvider::oidc("authcore", "authcore")
        .issuer(op.issuer.clone())
        .client_id("authcore-app")
        .client_secret(RP_SECRET)
        .id_token(false)
        .authorization_param("scope", "openid profile email offline_access")
        .refresh_access_token(Duration::ZERO)
        .sign_out_at_provider(true)
        .checks(Checks {
            pkce: true,
            state: true,
            nonce: true,
        });
    // Database sessions (in memory), which the provider's back-channel logout ends.
    let accounts = authcore::adapter::MemoryAdapter::new();
    let auth = authcore::Auth::new(
        authcore::AuthConfig::builder()
            .secret("the relying party's own secret, long enough")
            .url(format!("{app_base}/auth"))
            .provider(provider)
            .adapter(accounts.clone())
            .session_strategy(authcore::SessionStrategy::Database)
            .build()
            .unwrap(),
    );
    let app = axum::Router::new().auth_routes(auth);
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The demo user's browser (signed in at the provider) starts the app's sign-in.
    let browser = &op.signed_in;
    // The app's sign-in, through the provider (where the browser is signed in).
    let app_sign_in = async || {
        let csrf = binary::csrf_token(browser, &app_base).await;
        let r = browser
            .post(format!("{app_base}/auth/signin/authcore"))
            .form(&[("csrfToken", csrf.as_str()), ("callbackUrl", "/home")])
            .send()
            .await
            .unwrap();
        let to_op = location(&r).unwrap();
        assert!(
            to_op
                .as_str()
                .starts_with(&format!("{}/authorize", op.issuer)),
            "{to_op}"
        );
        for p in ["code_challenge", "state", "nonce"] {
            assert!(query(&to_op, p).is_some(), "{p}: {to_op}");
        }
        let r = browser.get(to_op).send().await.unwrap();
        let back = location(&r).unwrap();
        assert!(back.as_str().starts_with(&callback), "{back}");
        let r = browser.get(back).send().await.unwrap();
        assert_eq!(r.status(), 302);
        assert_eq!(r.headers()["location"], format!("{app_base}/home").as_str());
    };
    app_sign_in().await;
    let session: Value = browser
        .get(format!("{app_base}/auth/session"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(session["user"]["email"], "demo@example.com", "{session}");
    assert_eq!(session["user"]["name"], "Demo User", "{session}");

    // The 2-second access token expires; the next session read refreshes it (the refresh
    // token rotated), and the new one opens the provider's userinfo.
    use authcore::adapter::{Adapter as _, LinkedAccountStore as _};
    let account = async || {
        let user = accounts
            .get_user_by_email("demo@example.com")
            .await
            .unwrap()
            .unwrap();
        accounts
            .list_accounts_by_user_id(&user.id)
            .await
            .unwrap()
            .remove(0)
    };
    let first = account().await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let _ = binary::get_json(browser, &format!("{app_base}/auth/session")).await;
    let refreshed = account().await;
    assert_ne!(refreshed.access_token, first.access_token);
    assert_ne!(refreshed.refresh_token, first.refresh_token);
    assert_eq!(
        userinfo_status(&op, refreshed.access_token.as_deref().unwrap()).await,
        200
    );

    // Signed out at the provider: its logout token ends the app's session.
    assert_eq!(sign_out(&op).await.status(), 302);
    signed_out_within(browser, &format!("{app_base}/auth/session")).await;

    // RP-initiated logout: signed in again at both, the user signs out of the app, which
    // sends them on to the provider's end-session endpoint with the ID token as hint; the
    // provider's sign-out page, confirmed, ends the provider session and goes back to the
    // app's page.
    sign_in_with_password(browser, &op.base).await;
    app_sign_in().await;
    let csrf = binary::csrf_token(browser, &app_base).await;
    let r = browser
        .post(format!("{app_base}/auth/signout"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("callbackUrl", &format!("{app_base}/bye")),
        ])
        .send()
        .await
        .unwrap();
    let to_op = location(&r).unwrap();
    assert!(
        to_op
            .as_str()
            .starts_with(&format!("{}/logout?", op.issuer)),
        "{to_op}"
    );
    assert!(query(&to_op, "id_token_hint").is_some(), "{to_op}");
    let r = browser.get(to_op.as_str()).send().await.unwrap();
    let page = r.headers()["location"].to_str().unwrap().to_owned();
    let back = confirm_sign_out(&op, browser, &page).await;
    assert_eq!(back, format!("{app_base}/bye"));
    for base in [&app_base, &op.base] {
        let session = binary::get_json(browser, &format!("{base}/auth/session")).await;
        assert!(session.is_null(), "{base}: {session}");
    }

    // A sign-out form posted with another site as its callback URL: the provider is not
    // asked to send the user there (the app's redirect rules hold for the way back too).
    sign_in_with_password(browser, &op.base).await;
    app_sign_in().await;
    let csrf = binary::csrf_token(browser, &app_base).await;
    let r = browser
        .post(format!("{app_base}/auth/signout"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("callbackUrl", "https://evil.example/phish"),
        ])
        .send()
        .await
        .unwrap();
    let to_op = location(&r).unwrap();
    let back = query(&to_op, "post_logout_redirect_uri").unwrap_or_default();
    assert!(back.starts_with(&app_base), "{to_op}");
    assert!(!to_op.as_str().contains("evil.example"), "{to_op}");
}

/// The hidden `ticket` of a consent page.
fn consent_ticket(page: &str) -> String {
    let start = page.find("name=\"ticket\" value=\"").unwrap() + "name=\"ticket\" value=\"".len();
    let end = start + page[start..].find('"').unwrap();
    page[start..end].to_owned()
}

/// [`start_with`] a third-party client, `third`, whose users are asked for consent.
async fn start_with_third_party_client() -> Op {
    start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "third"
name = "A Third-Party App"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
consent = true
"#
    ))
    .await
}

/// Consent for a third-party client: asked once per user and scope, remembered; `deny`
/// sends `access_denied` back; `prompt=none` without consent gets `consent_required`,
/// `prompt=consent` asks again; the page cannot be framed; an answer from another session,
/// from nobody, or with a made-up ticket is refused on authcore's page and issues no code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn third_party_clients_ask_for_consent_once() {
    let op = start_with_third_party_client().await;
    let ask = async |browser: &reqwest::Client, scope: &str, prompt: Option<&str>| {
        let mut p = vec![
            ("client_id", "third"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", scope),
            ("state", "st"),
        ];
        p.extend(prompt.map(|v| ("prompt", v)));
        authorize_as(&op, browser, &p).await
    };
    let answer = async |browser: &reqwest::Client, ticket: &str, decision: &str| {
        browser
            .post(format!("{}/oidc/consent", op.base))
            .form(&[("ticket", ticket), ("decision", decision)])
            .send()
            .await
            .unwrap()
    };

    // The page: who asks, what it will see; not framable, not cached.
    let r = ask(&op.signed_in, "openid email", None).await;
    assert_eq!(r.status(), 200);
    let headers = r.headers().clone();
    let page = r.text().await.unwrap();
    assert!(page.contains("Allow A Third-Party App?"), "{page}");
    assert!(page.contains("your email address"), "{page}");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(
        csp.contains("form-action 'self' http://127.0.0.1:9"),
        "{csp}"
    );
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["cache-control"], "no-store");
    let ticket = consent_ticket(&page);

    // prompt=none before any consent: consent_required, back at the client.
    let r = ask(&op.signed_in, "openid email", Some("none")).await;
    let to = location(&r).unwrap();
    assert_eq!(
        query(&to, "error").as_deref(),
        Some("consent_required"),
        "{to}"
    );

    // Refused answers: another session of the same user, no session, a made-up or altered
    // ticket, an unknown decision. None of them is redirected to the client.
    let other = sign_in(&op).await;
    let nobody = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut altered = ticket.clone().into_bytes();
    let at = altered.len() / 2;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for (browser, t, decision) in [
        (&other, ticket.as_str(), "allow"),
        (&nobody, ticket.as_str(), "allow"),
        (&op.signed_in, "made-up", "allow"),
        (&op.signed_in, altered.as_str(), "allow"),
        (&op.signed_in, ticket.as_str(), "maybe"),
    ] {
        let r = answer(browser, t, decision).await;
        assert_eq!(r.status(), 400, "{t} {decision}");
        assert!(r.headers().get("location").is_none());
    }

    // Deny: access_denied with state and iss; nothing remembered.
    let r = answer(&op.signed_in, &ticket, "deny").await;
    let to = location(&r).unwrap();
    assert_eq!(
        query(&to, "error").as_deref(),
        Some("access_denied"),
        "{to}"
    );
    assert_eq!(query(&to, "state").as_deref(), Some("st"));
    assert_eq!(query(&to, "iss").as_deref(), Some(op.issuer.as_str()));
    assert_eq!(ask(&op.signed_in, "openid email", None).await.status(), 200);

    // Allow: a code that redeems; then no more asking for the same scopes, even with
    // prompt=none; asked again for a new scope, and with prompt=consent.
    let r = answer(&op.signed_in, &ticket, "allow").await;
    let to = location(&r).unwrap();
    let c = query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"));
    let (s, body) = token(&op, Some(("third", RP_SECRET)), &grant(&c, None)).await;
    assert_eq!(s, 200, "{body}");
    for prompt in [None, Some("none")] {
        let r = ask(&op.signed_in, "openid email", prompt).await;
        let to = location(&r).unwrap();
        assert!(query(&to, "code").is_some(), "{prompt:?}: {to}");
    }
    assert_eq!(
        ask(&op.signed_in, "openid email profile", None)
            .await
            .status(),
        200
    );
    assert_eq!(
        ask(&op.signed_in, "openid email", Some("consent"))
            .await
            .status(),
        200
    );
    // A first-party client is never asked.
    let r = authorize(
        &op,
        &[
            ("client_id", "rp"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid"),
            ("prompt", "consent"),
        ],
    )
    .await;
    assert_eq!(r.status(), 302);
}

/// "Apps with access": each client the user signed in to is listed on the account page
/// (the JSON route and the HTML page), with its scopes. Removing one's access voids what it
/// holds for the user — its refresh token, its access token at userinfo and introspection,
/// a code not yet redeemed — tells it by back-channel logout (a logout token naming the
/// user, no session), and makes a third-party client ask for consent again; tokens after a
/// new consent work while the old ones stay void. Another client's tokens are untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_an_apps_access_voids_its_tokens_and_signs_it_out() {
    let (uri, mut logouts) = logout_receiver().await;
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "third"
name = "A Third-Party App"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
consent = true
grant_types = ["authorization_code", "refresh_token"]
backchannel_logout_uri = "{uri}/third"
"#
    ))
    .await;
    let browser = &op.signed_in;
    let third = Some(("third", RP_SECRET));
    let ask = async |prompt: Option<&str>| {
        let mut p = vec![
            ("client_id", "third"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email offline_access"),
            ("state", "st"),
        ];
        p.extend(prompt.map(|v| ("prompt", v)));
        authorize_as(&op, browser, &p).await
    };
    let consented_code = async || {
        let r = ask(None).await;
        assert_eq!(r.status(), 200, "the consent page");
        let ticket = consent_ticket(&r.text().await.unwrap());
        let r = browser
            .post(format!("{}/oidc/consent", op.base))
            .form(&[("ticket", ticket.as_str()), ("decision", "allow")])
            .send()
            .await
            .unwrap();
        let to = location(&r).unwrap();
        query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"))
    };
    let refresh = async |t: &str| {
        token(
            &op,
            third,
            &[("grant_type", "refresh_token"), ("refresh_token", t)],
        )
        .await
    };
    let introspected = async |t: &str| {
        let (s, body) = post_form(&op, "/oidc/introspect", third, &[("token", t)]).await;
        assert_eq!(s, 200, "{body}");
        body["active"].as_bool().unwrap()
    };

    // Signed in to the third-party client (consent, offline access) and to `rp`.
    let c = consented_code().await;
    let (s, first) = token(&op, third, &grant(&c, None)).await;
    assert_eq!(s, 200, "{first}");
    let (r1, a1) = (
        first["refresh_token"].as_str().unwrap().to_owned(),
        first["access_token"].as_str().unwrap().to_owned(),
    );
    let pending = query(&location(&ask(Some("none")).await).unwrap(), "code").unwrap();
    let c = code_for(&op, "rp", "openid email", false).await;
    let (s, rp_tokens) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, None)).await;
    assert_eq!(s, 200, "{rp_tokens}");
    let rp_access = rp_tokens["access_token"].as_str().unwrap().to_owned();

    // Listed, by client id, with names and scopes.
    let listed: Value = browser
        .get(format!("{}/account/apps", op.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let apps: Vec<(&str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["clientId"].as_str().unwrap(), a["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        apps,
        [("rp", "A relying party"), ("third", "A Third-Party App")],
        "{listed}"
    );
    assert_eq!(
        listed[1]["scopes"],
        serde_json::json!(["email", "offline_access", "openid"])
    );
    let page = browser
        .get(format!("{}/auth/account", op.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Apps with access"), "{page}");
    assert!(page.contains("A Third-Party App"), "{page}");
    assert!(page.contains(r#"name="clientId" value="third""#), "{page}");

    // Removed from the account page's form.
    let csrf = binary::csrf_token(browser, &op.base).await;
    let r = browser
        .post(format!("{}/auth/account", op.base))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("op", "app-revoke"),
            ("clientId", "third"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap();
    assert!(to.ends_with("/auth/account?notice=app-revoked"), "{to}");

    // Told by back-channel logout: the user, every session.
    let (client, logout) = next_logout(&mut logouts).await;
    assert_eq!(client, "third");
    let claims = verified_logout_token(&op, "third", &logout).await;
    assert!(claims.get("sid").is_none(), "{claims}");
    assert!(claims["sub"].as_str().is_some(), "{claims}");

    // Everything the client held is void; rp's token is not.
    let (s, body) = refresh(&r1).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert_eq!(userinfo_status(&op, &a1).await, 401);
    assert!(!introspected(&a1).await);
    let (s, body) = token(&op, third, &grant(&pending, None)).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert_eq!(userinfo_status(&op, &rp_access).await, 200);

    // Consent again: asked (prompt=none cannot skip it), then new tokens that work; the old
    // refresh token stays void.
    let r = ask(Some("none")).await;
    let to = location(&r).unwrap();
    assert_eq!(
        query(&to, "error").as_deref(),
        Some("consent_required"),
        "{to}"
    );
    let c = consented_code().await;
    let (s, again) = token(&op, third, &grant(&c, None)).await;
    assert_eq!(s, 200, "{again}");
    let a2 = again["access_token"].as_str().unwrap();
    assert_eq!(userinfo_status(&op, a2).await, 200);
    assert!(introspected(a2).await);
    let (s, body) = refresh(again["refresh_token"].as_str().unwrap()).await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = refresh(&r1).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
}

/// The HTTP client of the `openidconnect` crate as a relying party: reqwest, no redirects
/// followed.
pub(crate) async fn relying_party_http(
    request: openidconnect::HttpRequest,
) -> Result<openidconnect::HttpResponse, reqwest::Error> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let (parts, body) = request.into_parts();
    let r = client
        .request(parts.method, parts.uri.to_string())
        .headers(parts.headers)
        .body(body)
        .send()
        .await?;
    let mut out = openidconnect::http::Response::builder().status(r.status());
    for (k, v) in r.headers() {
        out = out.header(k, v);
    }
    let body = r.bytes().await?.to_vec();
    Ok(out.body(body).unwrap())
}

/// The Rust `openidconnect` crate as the relying party: discovery (with the logout
/// metadata), PKCE, state, nonce, the EdDSA ID token verified against the JWK Set, userinfo,
/// a refresh with a new ID token, RP-initiated logout through the end-session URL it
/// builds, and the back-channel logout token checked with its ID token verifier.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openidconnect_crate_signs_in_through_authcore() {
    use openidconnect::core::{
        CoreAuthenticationFlow, CoreClient, CoreJwsSigningAlgorithm, CoreUserInfoClaims,
    };
    use openidconnect::{
        AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, LogoutRequest, Nonce,
        OAuth2TokenResponse as _, PkceCodeChallenge, PostLogoutRedirectUrl,
        ProviderMetadataWithLogout, RedirectUrl, Scope, TokenResponse as _,
    };
    let (receiver, mut logouts) = logout_receiver().await;
    let op = start_with(&library_client("lib", &receiver)).await;
    let (browser, _) = fresh_session(&op).await;
    let http = relying_party_http;
    let metadata = ProviderMetadataWithLogout::discover_async(
        IssuerUrl::new(op.issuer.clone()).unwrap(),
        &http,
    )
    .await
    .unwrap();
    let end_session = metadata
        .additional_metadata()
        .end_session_endpoint
        .clone()
        .expect("end_session_endpoint");
    let client = CoreClient::from_provider_metadata(
        metadata,
        ClientId::new("lib".into()),
        Some(ClientSecret::new(RP_SECRET.into())),
    )
    .set_redirect_uri(RedirectUrl::new(CB.into()).unwrap());
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("email".into()))
        .add_scope(Scope::new("profile".into()))
        .add_scope(Scope::new("offline_access".into()))
        .set_pkce_challenge(challenge)
        .url();
    let r = browser.get(url.as_str()).send().await.unwrap();
    let back = location(&r).unwrap();
    assert_eq!(
        query(&back, "state").as_deref(),
        Some(state.secret().as_str())
    );
    assert_eq!(query(&back, "iss").as_deref(), Some(op.issuer.as_str()));
    let code = query(&back, "code").unwrap();
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .unwrap()
        .set_pkce_verifier(verifier)
        .request_async(&http)
        .await
        .unwrap();
    let verifier = client
        .id_token_verifier()
        .set_allowed_algs(vec![CoreJwsSigningAlgorithm::EdDsa]);
    let id_token = tokens.id_token().expect("an ID token");
    let claims = id_token.claims(&verifier, &nonce).unwrap();
    assert_eq!(claims.email().map(|e| e.as_str()), Some("demo@example.com"));
    let subject = claims.subject().clone();
    let info: CoreUserInfoClaims = client
        .user_info(tokens.access_token().clone(), Some(subject.clone()))
        .unwrap()
        .request_async(&http)
        .await
        .unwrap();
    assert_eq!(info.email().map(|e| e.as_str()), Some("demo@example.com"));

    // Refresh: a new access token and ID token for the same user, a new refresh token.
    let refresh = tokens.refresh_token().expect("a refresh token");
    let refreshed = client
        .exchange_refresh_token(refresh)
        .unwrap()
        .request_async(&http)
        .await
        .unwrap();
    let new_id = refreshed.id_token().expect("a new ID token");
    let new_claims = new_id
        .claims(&verifier, |_: Option<&Nonce>| Ok(()))
        .unwrap();
    assert_eq!(new_claims.subject(), &subject);
    assert_ne!(
        refreshed.refresh_token().map(|t| t.secret()),
        Some(refresh.secret())
    );

    // RP-initiated logout: the URL it builds leads to authcore's sign-out page, where the
    // user confirms.
    let logout = LogoutRequest::from(end_session)
        .set_id_token_hint(id_token)
        .set_post_logout_redirect_uri(PostLogoutRedirectUrl::new(LOGGED_OUT.into()).unwrap())
        .set_state(CsrfToken::new("bye".into()))
        .http_get_url();
    let r = browser.get(logout.as_str()).send().await.unwrap();
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        to.starts_with("/auth/signout?callbackUrl=%2Foidc%2Flogout%2Fdone"),
        "{to}"
    );
    let (back, token) = sign_out_through_authcore(&op, &browser, &to, &mut logouts, "lib").await;
    assert_eq!(back, format!("{LOGGED_OUT}?state=bye"));

    // The logout token, checked with the crate's own ID token verifier as §2.6 allows
    // ("in the same way they are validated in ID Tokens"): the signature against the JWK
    // Set, `typ` logout+jwt, `iss`, `aud`, `exp`; then the event, and no `nonce`.
    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    struct LogoutClaims {
        events: serde_json::Map<String, Value>,
        jti: String,
        sid: Option<String>,
    }
    impl openidconnect::AdditionalClaims for LogoutClaims {}
    type LogoutToken = openidconnect::IdToken<
        LogoutClaims,
        openidconnect::core::CoreGenderClaim,
        openidconnect::core::CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >;
    let logout_verifier = client
        .id_token_verifier()
        .set_allowed_algs(vec![CoreJwsSigningAlgorithm::EdDsa])
        .set_allowed_jose_types([openidconnect::JsonWebTokenType::new("logout+jwt".into())
            .normalize()
            .unwrap()]);
    let no_nonce = |n: Option<&Nonce>| match n {
        None => Ok(()),
        Some(_) => Err("a logout token has no nonce".to_owned()),
    };
    let verify = |token: &str| -> Result<LogoutClaims, String> {
        let parsed: LogoutToken = token.parse().map_err(|e| format!("{e:?}"))?;
        let claims = parsed
            .claims(&logout_verifier, no_nonce)
            .map_err(|e| e.to_string())?;
        assert_eq!(claims.subject(), &subject);
        Ok(claims.additional_claims().clone())
    };
    let claims = verify(&token).unwrap();
    assert!(
        claims
            .events
            .contains_key("http://schemas.openid.net/event/backchannel-logout"),
        "{claims:?}"
    );
    assert_eq!(
        claims.sid.as_deref(),
        payload(id_token.to_string().as_str())["sid"].as_str()
    );
    // Altered, or an ID token passed off as a logout token: refused.
    assert!(verify(&altered_signature(&token)).is_err());
    assert!(verify(&id_token.to_string()).is_err());
}

/// While the single-use store cannot answer (a shared Redis that is down), a code is not
/// exchanged: a replay could not be told from a first use. The answer is
/// `temporarily_unavailable`, and no token is issued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_code_is_exchanged_while_the_single_use_store_is_down() {
    // Nothing listens on port 1: every count fails (rate limits then fail open, so the
    // sign-in itself goes through).
    let op = start_configured("redis_url = \"redis://127.0.0.1:1\"", "").await;
    let c = code(&op, "rp", false).await;
    let (s, body) = token(&op, Some(("rp", RP_SECRET)), &grant(&c, None)).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (503, Some("temporarily_unavailable")),
        "{body}"
    );
    assert!(body.get("access_token").is_none(), "{body}");
}

/// Two instances sharing one PostgreSQL database serve one provider (the single-use and
/// revocation marks live in the database): a code issued by one is exchanged at the other
/// once, and a replay at the first is refused and revokes what the first use got; a
/// refresh token rotated at one and reused at the other revokes the grant at both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgresql_database_are_one_provider() {
    let schema = format!("op_pair_{}_{}", std::process::id(), rand_suffix());
    pg::admin_sql(&format!("CREATE SCHEMA {schema}")).await;
    let url = format!("{}?options=-c%20search_path%3D{schema}", pg::postgres_url());
    let ops = start_instances(
        fresh_dir(),
        &url,
        "",
        "",
        vec![listener().await, listener().await],
    )
    .await;
    let (a, b) = (&ops[0], &ops[1]);
    let rp = Some(("rp", RP_SECRET));

    // Issued at A, exchanged at B; replayed at A: refused, and B's tokens revoked.
    let c = code_for(a, "rp", "openid offline_access", false).await;
    let (s, first) = token(b, rp, &grant(&c, None)).await;
    assert_eq!(s, 200, "{first}");
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(userinfo_status(a, access).await, 200);
    let (s, replay) = token(a, rp, &grant(&c, None)).await;
    assert_eq!(
        (s, replay["error"].as_str()),
        (400, Some("invalid_grant")),
        "{replay}"
    );
    assert!(replay.get("access_token").is_none(), "{replay}");
    assert_eq!(
        userinfo_status(b, access).await,
        401,
        "the first use's token is revoked"
    );

    // Rotated at B, the spent token reused at A: the grant ends at both.
    let c = code_for(b, "rp", "openid offline_access", false).await;
    let (_, body) = token(a, rp, &grant(&c, None)).await;
    let r1 = body["refresh_token"].as_str().unwrap().to_owned();
    let refresh = |r: &str| {
        vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", r.to_owned()),
        ]
    };
    let send = async |op: &Op, form: Vec<(&'static str, String)>| {
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        token(op, rp, &form).await
    };
    let (s, second) = send(b, refresh(&r1)).await;
    assert_eq!(s, 200, "{second}");
    let r2 = second["refresh_token"].as_str().unwrap().to_owned();
    let a2 = second["access_token"].as_str().unwrap().to_owned();
    let (s, reuse) = send(a, refresh(&r1)).await;
    assert_eq!(
        (s, reuse["error"].as_str()),
        (400, Some("invalid_grant")),
        "{reuse}"
    );
    for op in [a, b] {
        assert_eq!(userinfo_status(op, &a2).await, 401);
        let (s, _) = send(op, refresh(&r2)).await;
        assert_eq!(s, 400, "the grant is revoked at {}", op.base);
    }
    drop(ops);
    pg::admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}

/// `private_key_jwt` as an attacker meets it: one good assertion gets a token; every
/// assertion that does not hold, and every mix of methods, gets `invalid_client` (or
/// `invalid_request`) and no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_assertions_that_do_not_hold_authenticate_no_one() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let keys = fresh_dir();
    let (prefix, jwks) = relying_party_key(&keys, "svc", "EdDSA");
    let (other_prefix, _) = relying_party_key(&keys, "attacker", "EdDSA");
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "svc"
jwks = '{jwks}'
grant_types = ["client_credentials"]
scopes = ["openid"]
"#
    ))
    .await;
    let kid = serde_json::from_str::<Value>(&jwks).unwrap()["keys"][0]["kid"]
        .as_str()
        .unwrap()
        .to_owned();
    let pem = |p: &PathBuf| std::fs::read(p.with_extension("pem")).unwrap();
    let key = EncodingKey::from_ed_pem(&pem(&prefix)).unwrap();
    let other_key = EncodingKey::from_ed_pem(&pem(&other_prefix)).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = || {
        serde_json::json!({
            "iss": "svc", "sub": "svc", "aud": op.issuer, "exp": now + 60, "iat": now,
            "jti": format!("jti-{}", rand_suffix()),
        })
    };
    let header = || {
        let mut h = Header::new(Algorithm::EdDSA);
        h.kid = Some(kid.clone());
        h
    };
    let sign = |claims: &Value| jsonwebtoken::encode(&header(), claims, &key).unwrap();
    let with = |change: &dyn Fn(&mut Value)| {
        let mut c = claims();
        change(&mut c);
        sign(&c)
    };
    let send = async |extra: &[(&str, &str)], assertion: &str| {
        let mut form = vec![
            ("grant_type", "client_credentials"),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ),
            ("client_assertion", assertion),
        ];
        form.extend_from_slice(extra);
        token(&op, None, &form).await
    };

    // One good assertion: a token, once.
    let good = sign(&claims());
    let (s, body) = send(&[], &good).await;
    assert_eq!(s, 200, "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    let (s, body) = send(&[], &good).await;
    assert_eq!(
        (s, body["error"].as_str()),
        (401, Some("invalid_client")),
        "replay: {body}"
    );

    // Unsigned, or "signed" with the public key as an HMAC secret.
    let b64 = |v: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
    };
    let unsigned = format!(
        "{}.{}.",
        b64(&serde_json::json!({"alg": "none", "kid": kid})),
        b64(&claims())
    );
    let x = serde_json::from_str::<Value>(&jwks).unwrap()["keys"][0]["x"]
        .as_str()
        .unwrap()
        .to_owned();
    let hmac = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(x.as_bytes()),
    )
    .unwrap();
    let forged = jsonwebtoken::encode(&header(), &claims(), &other_key).unwrap();
    let huge = "a".repeat(100_000);
    let refused: Vec<(&str, String)> = vec![
        ("another key", forged),
        ("alg none", unsigned),
        ("HS256 with the public key", hmac),
        (
            "the token endpoint as aud",
            with(&|c| c["aud"] = format!("{}/oidc/token", op.base).into()),
        ),
        (
            "the issuer and another in aud",
            with(&|c| c["aud"] = serde_json::json!([op.issuer, "https://evil.example"])),
        ),
        (
            "a look-alike issuer",
            with(&|c| c["aud"] = format!("{}/", op.issuer).into()),
        ),
        ("expired", with(&|c| c["exp"] = (now - 1).into())),
        (
            "valid for an hour",
            with(&|c| c["exp"] = (now + 3600).into()),
        ),
        (
            "issued in the future",
            with(&|c| c["iat"] = (now + 600).into()),
        ),
        ("iss another client", with(&|c| c["iss"] = "rp".into())),
        ("sub another client", with(&|c| c["sub"] = "rp".into())),
        (
            "no jti",
            with(&|c| {
                c.as_object_mut().unwrap().remove("jti");
            }),
        ),
        (
            "no exp",
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
        ),
        ("not a JWT", "not.a.jwt".into()),
        ("oversize within the body limit", "a".repeat(12_000)),
    ];
    for (what, assertion) in &refused {
        let (s, body) = send(&[], assertion).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (401, Some("invalid_client")),
            "{what}: {body}"
        );
        assert!(body.get("access_token").is_none(), "{what}: {body}");
    }
    // Past the body limit: refused before anything is read.
    let (s, body) = send(&[], &huge).await;
    assert_eq!(s, 413, "{body}");
    // Other clients, methods mixed, the wrong assertion type, no authentication at all.
    const JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
    let cc = ("grant_type", "client_credentials".to_owned());
    let with_assertion = |extra: &[(&'static str, &str)], type_: &str, a: String| {
        let mut form = vec![
            cc.clone(),
            ("client_assertion_type", type_.to_owned()),
            ("client_assertion", a),
        ];
        form.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        form
    };
    let as_rp = with(&|c| {
        c["iss"] = "rp".into();
        c["sub"] = "rp".into();
    });
    /// What is tried, HTTP Basic, the form, the status and error expected.
    type Case<'a> = (
        &'a str,
        Option<(&'a str, &'a str)>,
        Vec<(&'a str, String)>,
        u16,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "a secret client's id",
            None,
            with_assertion(&[], JWT, as_rp),
            401,
            "invalid_client",
        ),
        (
            "client_id of another client",
            None,
            with_assertion(&[("client_id", "rp")], JWT, sign(&claims())),
            401,
            "invalid_client",
        ),
        (
            "with client_secret too",
            None,
            with_assertion(&[("client_secret", RP_SECRET)], JWT, sign(&claims())),
            400,
            "invalid_request",
        ),
        (
            "with HTTP Basic too",
            Some(("svc", "x")),
            with_assertion(&[], JWT, sign(&claims())),
            400,
            "invalid_request",
        ),
        (
            "a SAML assertion type",
            None,
            with_assertion(
                &[],
                "urn:ietf:params:oauth:client-assertion-type:saml2-bearer",
                sign(&claims()),
            ),
            400,
            "invalid_request",
        ),
        (
            "HTTP Basic with no secret",
            Some(("svc", "")),
            vec![cc.clone()],
            401,
            "invalid_client",
        ),
        (
            "client_id alone",
            None,
            vec![cc.clone(), ("client_id", "svc".to_owned())],
            401,
            "invalid_client",
        ),
    ];
    for (what, basic, form, status, error) in cases {
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (s, body) = token(&op, basic, &form).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (status, Some(error)),
            "{what}: {body}"
        );
        assert!(body.get("access_token").is_none(), "{what}: {body}");
    }
    // A good assertion still works after all that, at revocation too (one use each).
    let (s, body) = send(&[("client_id", "svc")], &sign(&claims())).await;
    assert_eq!(s, 200, "{body}");
    let access = body["access_token"].as_str().unwrap().to_owned();
    let (s, _) = post_form(
        &op,
        "/oidc/revoke",
        None,
        &[
            ("token", &access),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ),
            ("client_assertion", &sign(&claims())),
        ],
    )
    .await;
    assert_eq!(s, 200);
    let _ = std::fs::remove_dir_all(keys);
}

/// The consent page in headless Chromium (`testsupport/browser/consent.mjs`): legible in
/// light and dark (WCAG AA: 4.5:1 for text, 3:1 for input borders), usable at 320 px, no
/// CSP violation, and not shown inside another origin's frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_consent_page_is_legible_and_cannot_be_framed() {
    let op = start_with_third_party_client().await;
    let mut url = url::Url::parse(&format!("{}/oidc/authorize", op.base)).unwrap();
    url.query_pairs_mut().extend_pairs([
        ("client_id", "third"),
        ("redirect_uri", CB),
        ("response_type", "code"),
        ("scope", "openid profile email"),
        ("state", "st"),
    ]);
    let shots = op.dir.join("screenshots");
    let steps = browser::run(
        "consent.mjs",
        &[url.as_str(), &op.cookie, shots.to_str().unwrap()],
        Duration::from_secs(120),
    )
    .await;
    let renders: Vec<&Value> = steps.iter().filter(|s| s["step"] == "render").collect();
    assert_eq!(renders.len(), 2, "{steps:?}");
    for r in renders {
        assert!(
            r["heading"]
                .as_str()
                .unwrap()
                .contains("Allow A Third-Party App"),
            "{r}"
        );
        assert_eq!(r["overflow"], 0, "{r}");
        browser::assert_wcag_aa(&r["contrast"], &r.to_string());
        assert_eq!(r["cspViolations"], serde_json::json!([]), "{r}");
    }
    // An error page in the frame, not authcore's consent or sign-in page.
    let framed = step_of(&steps, "framed");
    let text = framed["text"].as_str().unwrap_or_default();
    assert!(
        framed["frameUrl"]
            .as_str()
            .is_some_and(|u| u.starts_with("chrome-error:")),
        "{framed}"
    );
    assert!(
        !text.contains("Allow") && !text.contains("Sign in"),
        "{framed}"
    );
}

/// A users file's groups reach the app in the `groups` claim with database sessions, beside
/// the configured groups (here none matches: the file's address is not a verified one), and
/// decide who may use a client with `allowed_groups`: alice, in `admins`, gets a code from
/// the client for `admins`, and `access_denied` without a code from the one for `ops`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_file_s_groups_reach_the_app() {
    let files = fresh_dir();
    let hash = authcore::passwords::PasswordHashing::argon2id(64, 1, 1)
        .unwrap()
        .hash("alice-pw")
        .unwrap();
    let users = files.join("users.yml");
    std::fs::write(
        &users,
        format!(
            "users:\n  alice:\n    displayname: Alice\n    password: \"{hash}\"\n    email: alice@example.com\n    groups: [admins, dev]\n"
        ),
    )
    .unwrap();
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "for-admins"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
allowed_groups = ["admins"]

[[oidc_provider.clients]]
id = "for-ops"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
allowed_groups = ["ops"]
allowed_roles = ["ops"]

[users_file]
path = "{}"
[oidc_provider.groups]
staff = ["@example.com"]
"#,
        users.display()
    ))
    .await;
    let code = code_for(&op, "rp", "openid email groups", true).await;
    let (status, tokens) = token(&op, Some(("rp", RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
    assert_eq!(status, 200, "{tokens}");
    let claims = payload(tokens["id_token"].as_str().unwrap());
    assert_eq!(
        claims["groups"],
        serde_json::json!(["admins", "dev"]),
        "{claims}"
    );
    assert_eq!(claims["email"], "alice@example.com", "{claims}");
    code_for(&op, "for-admins", "openid", true).await;
    let r = authorize(
        &op,
        &[
            ("client_id", "for-ops"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid"),
            ("state", "st"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    let to = location(&r).unwrap();
    assert!(to.as_str().starts_with(CB), "{to}");
    assert_eq!(
        query(&to, "error").as_deref(),
        Some("access_denied"),
        "{to}"
    );
    assert_eq!(query(&to, "state").as_deref(), Some("st"));
    assert!(query(&to, "code").is_none(), "{to}");
    let _ = std::fs::remove_dir_all(files);
}
