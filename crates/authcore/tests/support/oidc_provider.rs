//! Test harness: a real OpenID Provider (panva/oidc-provider, see
//! `testsupport/oidc/`) running in a child Node process on 127.0.0.1.
//!
//! Include it from an integration test with
//! `#[path = "support/oidc_provider.rs"] mod oidc_provider;`.
//! It needs `node` (20+) on `PATH` (or `NODE=/path/to/node`) and the npm
//! dependencies installed: `npm ci --prefix testsupport/oidc`.
//!
//! Every [`OidcProvider`] is its own process on its own OS-assigned port, so
//! tests may run in parallel. The process is killed when the value is
//! dropped, and it also exits by itself when its stdin closes (i.e. when the
//! test binary dies, however it dies).
//!
//! Set `OIDC_PROVIDER_LOG=1` to echo the provider's stderr while tests run;
//! it is always collected and available through [`OidcProvider::stderr_log`]
//! and included in this module's panic messages.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How long [`OidcProvider::start`] waits for the ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Per-request timeout of the HTTP clients used here.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Maximum number of redirects [`OidcProvider::authorize`] follows.
const MAX_HOPS: usize = 20;

/// The redirect URIs registered for every client when the test does not pass
/// its own (same as the Node side's default).
pub const DEFAULT_REDIRECT_URIS: &[&str] = &[
    "http://localhost:3000/auth/callback/oidc",
    "http://localhost:3000/auth/callback/oauth",
    "http://localhost:3000/auth/callback/formpost",
];

/// Client IDs and secrets registered in the provider.
pub mod clients {
    /// `client_secret_basic`.
    pub const BASIC: (&str, &str) = ("client-basic", "secret-basic");
    /// `client_secret_post`.
    pub const POST: (&str, &str) = ("client-post", "secret-post");
    /// Public client (`none`); PKCE (S256) is mandatory for it.
    pub const PUBLIC: &str = "client-public";
    /// `client_secret_basic`, given refresh tokens (rotated on every use).
    pub const REFRESH: (&str, &str) = ("client-refresh", "secret-refresh");
    /// `client_secret_basic`, allowed response modes `query` and `form_post`.
    pub const FORMPOST: (&str, &str) = ("client-formpost", "secret-formpost");
}

/// Modes accepted by [`OidcProvider::set_mode`].
pub const MODES: &[&str] = &[
    "normal",
    "wrong-key",
    "alg-none",
    "wrong-aud",
    "expired",
    "wrong-nonce",
    "no-nonce",
    "wrong-iss",
    "token-error",
    "token-500",
    "slow-token",
    "refresh-error",
];

/// Where the authorization response was delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callback {
    /// A redirect to the client's redirect URI; the full URL including the
    /// query (`code`, `state`, `iss`, or `error`...).
    Query(String),
    /// `response_mode=form_post`: the auto-submitting form's action and its
    /// (HTML-unescaped) hidden fields, in document order.
    FormPost {
        /// The form's `action` (the redirect URI).
        action: String,
        /// The hidden input fields.
        fields: Vec<(String, String)>,
    },
}

impl Callback {
    /// The response parameters: the query pairs of a [`Callback::Query`] or
    /// the fields of a [`Callback::FormPost`].
    pub fn params(&self) -> Vec<(String, String)> {
        match self {
            Callback::Query(u) => {
                let url = url::Url::parse(u).expect("callback URL is absolute");
                url.query_pairs()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            }
            Callback::FormPost { fields, .. } => fields.clone(),
        }
    }

    /// One response parameter (first occurrence).
    pub fn param(&self, name: &str) -> Option<String> {
        self.params()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The URL the browser would go to (the query URL or the form action).
    pub fn url(&self) -> &str {
        match self {
            Callback::Query(u) => u,
            Callback::FormPost { action, .. } => action,
        }
    }

    /// The form fields `application/x-www-form-urlencoded` (FormPost), or the
    /// query string (Query): ready to be sent as a callback request body.
    pub fn form_body(&self) -> String {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.params() {
            s.append_pair(&k, &v);
        }
        s.finish()
    }
}

/// A running oidc-provider process.
pub struct OidcProvider {
    /// `http://127.0.0.1:<port>` (no trailing slash).
    pub issuer: String,
    /// The port it listens on (127.0.0.1 only).
    pub port: u16,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<String>>,
    http: reqwest::Client,
}

impl std::fmt::Debug for OidcProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcProvider")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

fn repo_root() -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    root.canonicalize().unwrap_or(root)
}

fn http_client(cookies: bool) -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(cookies)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .no_proxy()
        .build()
        .expect("build reqwest client")
}

impl OidcProvider {
    /// Spawns `node testsupport/oidc/server.mjs` with the default redirect
    /// URIs ([`DEFAULT_REDIRECT_URIS`]) and waits (at most 20 s) until it is
    /// ready.
    pub async fn start() -> OidcProvider {
        Self::start_with_redirect_uris(DEFAULT_REDIRECT_URIS).await
    }

    /// Like [`OidcProvider::start`], registering `uris` as the redirect URIs
    /// of every client.
    pub async fn start_with_redirect_uris(uris: &[&str]) -> OidcProvider {
        Self::start_with(uris, &[]).await
    }

    /// Like [`OidcProvider::start_with_redirect_uris`], with more environment for the
    /// provider (`OIDC_ACCESS_TOKEN_TTL`: access-token lifetime in seconds).
    pub async fn start_with(uris: &[&str], env: &[(&str, &str)]) -> OidcProvider {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let dir = repo_root().join("testsupport").join("oidc");
        let script = dir.join("server.mjs");
        assert!(
            script.is_file(),
            "OIDC test provider script not found at {}",
            script.display()
        );
        for dep in ["oidc-provider", "jose"] {
            let pj = dir.join("node_modules").join(dep).join("package.json");
            assert!(
                pj.is_file(),
                "the OIDC test provider's npm dependencies are not installed ({} is missing): \
                 run `npm ci --prefix testsupport/oidc` from the repository root ({})",
                pj.display(),
                repo_root().display(),
            );
        }
        let uris = uris.join(",");
        // Spawning and waiting for the ready line block: keep that off the
        // async worker, but panic on the caller's thread (so the test's output
        // capture shows the message).
        let started =
            tokio::task::spawn_blocking(move || Self::spawn_and_wait(&dir, &script, &uris, &env))
                .await
                .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        match started {
            Ok((issuer, port, child, stdin, stderr)) => OidcProvider {
                issuer,
                port,
                child: Some(child),
                stdin,
                stderr,
                http: http_client(false),
            },
            Err(message) => panic!("{message}"),
        }
    }

    #[allow(clippy::type_complexity)]
    fn spawn_and_wait(
        dir: &Path,
        script: &Path,
        uris: &str,
        env: &[(String, String)],
    ) -> Result<(String, u16, Child, Option<ChildStdin>, Arc<Mutex<String>>), String> {
        let node = std::env::var_os("NODE").unwrap_or_else(|| "node".into());
        let mut child = Command::new(&node)
            .arg(script)
            .current_dir(dir)
            .env("OIDC_REDIRECT_URIS", uris)
            .env_remove("OIDC_IGNORE_STDIN")
            .env_remove("OIDC_MODE")
            .env_remove("NODE_OPTIONS")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {} for the OIDC test provider: {e} (Node.js 20+ must be on \
                     PATH, or set NODE=/path/to/node)",
                    Path::new(&node).display()
                )
            })?;

        let stdin = child.stdin.take();
        let (Some(stdout), Some(stderr_pipe)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("OIDC test provider: child stdout/stderr not piped".to_owned());
        };

        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = Arc::clone(&stderr);
            let echo = std::env::var_os("OIDC_PROVIDER_LOG").is_some_and(|v| !v.is_empty());
            std::thread::spawn(move || {
                for line in BufReader::new(stderr_pipe).lines() {
                    let Ok(line) = line else { break };
                    if echo {
                        eprintln!("[oidc-provider] {line}");
                    }
                    if let Ok(mut s) = stderr.lock() {
                        s.push_str(&line);
                        s.push('\n');
                    }
                }
            });
        }

        let (tx, rx) = mpsc::channel::<Result<String, String>>();
        {
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut ready_sent = false;
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if !ready_sent
                        && line.trim_start().starts_with('{')
                        && line.contains("\"issuer\"")
                    {
                        ready_sent = true;
                        let _ = tx.send(Ok(line));
                    } else if let Ok(mut s) = stderr.lock() {
                        // Anything else on stdout is unexpected; keep it for diagnostics.
                        s.push_str("[stdout] ");
                        s.push_str(&line);
                        s.push('\n');
                    }
                }
                if !ready_sent {
                    let _ = tx.send(Err("stdout closed before the ready line".to_owned()));
                }
            });
        }

        let log =
            |stderr: &Arc<Mutex<String>>| stderr.lock().map(|s| s.clone()).unwrap_or_default();
        let fail = |child: &mut Child, why: String| {
            let _ = child.kill();
            let status = child.wait().ok();
            // Give the stderr reader a moment to drain.
            std::thread::sleep(Duration::from_millis(200));
            Err(format!(
                "OIDC test provider failed to start: {why} (exit status {status:?}; if npm \
                 modules are missing run `npm ci --prefix testsupport/oidc`)\n\
                 --- provider stderr ---\n{}",
                log(&stderr)
            ))
        };

        let line = match rx.recv_timeout(READY_TIMEOUT) {
            Ok(Ok(line)) => line,
            Ok(Err(why)) => return fail(&mut child, why),
            Err(_) => {
                return fail(
                    &mut child,
                    format!("no ready line within {READY_TIMEOUT:?}"),
                );
            }
        };
        let ready: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => return fail(&mut child, format!("unparsable ready line {line:?}: {e}")),
        };
        let issuer = ready["issuer"].as_str().map(str::to_owned);
        let port = ready["port"].as_u64().and_then(|p| u16::try_from(p).ok());
        let (Some(issuer), Some(port)) = (issuer, port) else {
            return fail(&mut child, format!("ready line lacks issuer/port: {line}"));
        };
        Ok((issuer, port, child, stdin, stderr))
    }

    /// Everything the provider process wrote to stderr so far.
    pub fn stderr_log(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The OS process id of the provider (for diagnostics).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `<issuer>/.well-known/openid-configuration`.
    pub fn discovery_url(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.issuer)
    }

    /// The discovery document.
    pub async fn discovery(&self) -> serde_json::Value {
        self.get_json(&self.discovery_url()).await
    }

    /// Switches the provider's behaviour; see [`MODES`] and
    /// `testsupport/oidc/README.md`. Panics on an unknown mode.
    pub async fn set_mode(&self, mode: &str) {
        let body = serde_json::json!({ "mode": mode }).to_string();
        let url = format!("{}/__test/mode", self.issuer);
        let resp = self
            .http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {url}: {e}\n{}", self.stderr_log()));
        let status = resp.status();
        let bytes = resp.bytes().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "set_mode({mode:?}) failed: HTTP {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }

    /// The current mode.
    pub async fn mode(&self) -> String {
        let v = self.get_json(&format!("{}/__test/mode", self.issuer)).await;
        v["mode"].as_str().unwrap_or_default().to_owned()
    }

    /// The last request to the token endpoint, as JSON:
    /// `{"method", "path", "headers": {lower-case name: value}, "raw_body",
    /// "body": {form field: value}, "mode", "response_status"}`, or `null`
    /// when no token request was made yet.
    /// The private key (PKCS#8 PEM) and `kid` of the `client-private-key-jwt` client.
    #[allow(dead_code)]
    pub async fn client_key(&self) -> (String, String) {
        let v = self
            .get_json(&format!("{}/__test/client-key", self.issuer))
            .await;
        (
            v["pem"].as_str().unwrap_or_default().to_owned(),
            v["kid"].as_str().unwrap_or_default().to_owned(),
        )
    }

    /// Ends `browser`'s session at the provider (RP-initiated logout: the end-session page,
    /// its form confirmed); the provider posts its logout tokens before it answers.
    pub async fn end_session(&self, browser: &reqwest::Client) {
        let url = format!("{}/session/end", self.issuer);
        let page = browser.get(&url).send().await.unwrap();
        let status = page.status();
        let body = page.text().await.unwrap_or_default();
        let (action, mut fields) = parse_form(&body).unwrap_or_else(|| {
            panic!("end_session: GET {url} answered HTTP {status} with no form:\n{body}")
        });
        fields.push(("logout".to_owned(), "yes".to_owned()));
        let action = url::Url::parse(&url).unwrap().join(&action).unwrap();
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&fields)
            .finish();
        let r = browser
            .post(action)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_redirection() || r.status().is_success(),
            "end_session: HTTP {}\n{}",
            r.status(),
            self.stderr_log()
        );
    }

    /// `payload` signed as the provider signs (RS256, its key's `kid`, `typ` `logout+jwt`),
    /// or with another key under that `kid` (`wrong_key`).
    pub async fn sign(&self, payload: &serde_json::Value, wrong_key: bool) -> String {
        let body = serde_json::json!({
            "payload": payload,
            "key": if wrong_key { "wrong" } else { "real" },
        });
        let r = self
            .http
            .post(format!("{}/__test/sign", self.issuer))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        v["jws"].as_str().unwrap().to_owned()
    }

    /// How many refresh-token grants the token endpoint has seen.
    pub async fn refresh_count(&self) -> u64 {
        self.get_json(&format!("{}/__test/refresh-count", self.issuer))
            .await["count"]
            .as_u64()
            .unwrap_or_default()
    }

    pub async fn last_token_request(&self) -> serde_json::Value {
        self.get_json(&format!("{}/__test/last-token-request", self.issuer))
            .await
    }

    async fn get_json(&self, url: &str) -> serde_json::Value {
        let resp = self
            .http
            .get(url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {url}: {e}\n{}", self.stderr_log()));
        let status = resp.status();
        let bytes = resp
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("GET {url}: reading body: {e}"));
        assert!(
            status.is_success(),
            "GET {url}: HTTP {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "GET {url}: invalid JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        })
    }

    /// Follows `authorization_url` like a browser with a fresh cookie jar
    /// (manual redirects, at most 20 hops, 10 s per request) until a redirect
    /// points at a URL starting with `redirect_uri_prefix` (that URL is not
    /// requested) and returns it. A `form_post` response page whose form
    /// action starts with the prefix is returned as [`Callback::FormPost`].
    /// Panics on anything else (e.g. an error page of the provider).
    pub async fn authorize(&self, authorization_url: &str, redirect_uri_prefix: &str) -> Callback {
        self.authorize_in(&http_client(true), authorization_url, redirect_uri_prefix)
            .await
    }

    /// A browser of its own for [`OidcProvider::authorize_in`]: a cookie jar, no automatic
    /// redirects, the harness's time limit.
    pub fn browser() -> reqwest::Client {
        http_client(true)
    }

    /// [`OidcProvider::authorize`] in `browser`, which keeps the provider's session
    /// cookies (for [`OidcProvider::end_session`]).
    pub async fn authorize_in(
        &self,
        browser: &reqwest::Client,
        authorization_url: &str,
        redirect_uri_prefix: &str,
    ) -> Callback {
        let mut current = url::Url::parse(authorization_url)
            .unwrap_or_else(|e| panic!("invalid authorization URL {authorization_url:?}: {e}"));
        let mut trail: Vec<String> = Vec::new();
        for _ in 0..MAX_HOPS {
            if current.as_str().starts_with(redirect_uri_prefix) {
                return Callback::Query(current.into());
            }
            trail.push(current.to_string());
            let resp = browser
                .get(current.clone())
                .send()
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "authorize: GET {current}: {e}\ntrail: {trail:#?}\n{}",
                        self.stderr_log()
                    )
                });
            let status = resp.status();
            if status.is_redirection() {
                let location = resp
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_else(|| {
                        panic!("authorize: HTTP {status} without Location from {current}")
                    })
                    .to_owned();
                current = current.join(&location).unwrap_or_else(|e| {
                    panic!("authorize: bad Location {location:?} from {current}: {e}")
                });
                continue;
            }
            let body = resp.text().await.unwrap_or_default();
            if let Some((action, fields)) = parse_form(&body) {
                let action = current.join(&action).map(String::from).unwrap_or(action);
                if action.starts_with(redirect_uri_prefix) {
                    return Callback::FormPost { action, fields };
                }
            }
            panic!(
                "authorize: GET {current} answered HTTP {status} (no redirect to {redirect_uri_prefix:?})\n\
                 trail: {trail:#?}\n--- body ---\n{body}\n--- provider stderr ---\n{}",
                self.stderr_log()
            );
        }
        panic!("authorize: more than {MAX_HOPS} redirects; trail: {trail:#?}");
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        // Closing stdin alone makes the server exit; kill to be certain and
        // reap it so no zombie/orphan is left behind.
        drop(self.stdin.take());
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ---------------------------------------------------------------------------
// Minimal HTML form parsing (for oidc-provider's form_post page)
// ---------------------------------------------------------------------------

/// Returns the first `<form>`'s action and its `<input name=... value=...>`
/// fields.
fn parse_form(html: &str) -> Option<(String, Vec<(String, String)>)> {
    let lower = html.to_ascii_lowercase();
    let form_start = lower.find("<form")?;
    let form_tag_end = form_start + lower[form_start..].find('>')?;
    let action = attr(&html[form_start..form_tag_end], "action").unwrap_or_default();
    let form_end = lower[form_tag_end..]
        .find("</form")
        .map_or(html.len(), |i| form_tag_end + i);

    let mut fields = Vec::new();
    let mut pos = form_tag_end;
    while let Some(i) = lower[pos..form_end].find("<input") {
        let start = pos + i;
        let Some(j) = lower[start..form_end].find('>') else {
            break;
        };
        let tag = &html[start..start + j];
        if let Some(name) = attr(tag, "name") {
            fields.push((name, attr(tag, "value").unwrap_or_default()));
        }
        pos = start + j;
    }
    Some((action, fields))
}

/// The (unescaped) value of attribute `name` in the start tag `tag`.
fn attr(tag: &str, name: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    let mut i = 0;
    // Skip the element name.
    while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let key_start = i;
        while i < bytes.len()
            && !bytes[i].is_ascii_whitespace()
            && bytes[i] != b'='
            && bytes[i] != b'/'
        {
            i += 1;
        }
        let key = &tag[key_start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = None;
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let q = bytes[i];
                let start = i + 1;
                let end = tag[start..]
                    .find(q as char)
                    .map_or(tag.len(), |e| start + e);
                value = Some(&tag[start..end]);
                i = (end + 1).min(tag.len());
            } else {
                let start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = Some(&tag[start..i]);
            }
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(html_unescape(value.unwrap_or("")));
        }
        if key.is_empty() {
            i += 1;
        }
    }
    None
}

fn html_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.find(';').filter(|&i| i <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}
