//! The manual's getting-started chapters (`docs/manual/getting-started.md`) as a reader
//! follows them. The binaries in `src/bin/` must be the page's code blocks character for
//! character, and this crate's dependencies the page's (with this repository's paths), so the
//! page cannot drift from what is built; then each binary is started and signed in through
//! over HTTP, as the page's "Check it" does with curl.
//!
//! `GETTING_STARTED_BLESS=1 cargo test -p example-getting-started` rewrites the binaries from
//! the page.
#![allow(clippy::unwrap_used)]

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const PAGE: &str = include_str!("../../../docs/manual/getting-started.md");
const MANIFEST: &str = include_str!("../Cargo.toml");
const SECRET: &str = "getting-started-test-secret-0123456789abcdef";
const PASSWORD: &str = "correct horse battery staple";
const NEW_PASSWORD: &str = "violet umbrella under nine moons";

/// Each chapter's program: the heading it is under and the binary it is.
const CHAPTERS: [(&str, &str); 3] = [
    ("3. The application", "app"),
    ("Add GitHub and SQLite", "github_sqlite"),
    ("Password accounts", "password_accounts"),
];

/// A fenced code block of the page and the heading it is under.
struct Block<'a> {
    heading: &'a str,
    lang: &'a str,
    code: String,
}

fn blocks(page: &str) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut heading = "";
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let mut code = String::new();
            for l in lines.by_ref() {
                if l == "```" {
                    break;
                }
                code.push_str(l);
                code.push('\n');
            }
            out.push(Block {
                heading,
                lang,
                code,
            });
        } else if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim();
        }
    }
    out
}

/// The one Rust block under `heading`.
fn program(heading: &str) -> String {
    let found: Vec<_> = blocks(PAGE)
        .into_iter()
        .filter(|b| b.heading == heading && b.lang.starts_with("rust"))
        .collect();
    assert_eq!(found.len(), 1, "one Rust block under \"{heading}\"");
    found.into_iter().next().unwrap().code
}

fn bin_path(bin: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("src/bin/{bin}.rs"))
}

#[test]
fn the_binaries_are_the_pages_code() {
    let bless = std::env::var_os("GETTING_STARTED_BLESS").is_some();
    for (heading, bin) in CHAPTERS {
        let code = program(heading);
        let path = bin_path(bin);
        if bless {
            std::fs::write(&path, &code).unwrap();
        }
        let built = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            built == code,
            "{} is not the code under \"{heading}\" in docs/manual/getting-started.md: \
             run GETTING_STARTED_BLESS=1 cargo test -p example-getting-started",
            path.display()
        );
    }
}

#[test]
fn the_dependencies_are_the_pages() {
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('['))
            .map(|l| l.replace("../../crates/", "../authcore/crates/"))
            .collect()
    };
    let page: Vec<String> = blocks(PAGE)
        .iter()
        .filter(|b| b.lang == "toml")
        .flat_map(|b| lines(&b.code))
        .collect();
    let start = MANIFEST.find("[dependencies]").unwrap();
    let end = MANIFEST.find("[dev-dependencies]").unwrap();
    assert_eq!(lines(&MANIFEST[start..end]), page);
}

/// A chapter's binary, running; killed when dropped.
struct Running {
    child: Child,
    base: String,
    /// What it printed to standard output, line by line.
    printed: Arc<Mutex<Vec<String>>>,
    _dir: TempDir,
}

impl Running {
    /// The link of the last `<purpose> mail to <to>: <link>` line printed, waiting for it
    /// (at most 10 s): the chapter's development mailer.
    fn mailed(&self, purpose: &str, to: &str) -> String {
        let prefix = format!("{purpose} mail to {to}: ");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found = self
                .printed
                .lock()
                .unwrap()
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix(&prefix).map(str::to_owned));
            if let Some(link) = found {
                return link;
            }
            assert!(
                Instant::now() < deadline,
                "no {purpose} mail to {to} printed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory of its own for a binary's working files (its SQLite database), removed
/// afterwards.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts `exe` on a free loopback port in a directory of its own, with the environment
/// the page's steps set, and waits (at most 60 s) until it answers.
fn start(exe: &str, name: &str) -> Running {
    let dir = std::env::temp_dir().join(format!(
        "authcore-getting-started-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(exe)
        .current_dir(&dir)
        .env("ADDR", &addr)
        .env("AUTH_SECRET", SECRET)
        .env("AUTH_GITHUB_ID", "getting-started-client")
        .env("AUTH_GITHUB_SECRET", "getting-started-secret")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let printed = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.stdout.take().unwrap();
    let lines = Arc::clone(&printed);
    // Ends when the binary does (its standard output closes).
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            lines.lock().unwrap().push(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(&addr).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{name} exited before it listened: {status}");
        }
        assert!(Instant::now() < deadline, "{name} did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Running {
        child,
        base: format!("http://localhost:{port}"),
        printed,
        _dir: TempDir(dir),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        // A bound, not a measure: an unoptimised build is slow to hash a password with
        // OWASP's argon2id parameters, the more so on a loaded machine.
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// `GET <base>/auth/csrf`'s token (its cookie stays in the client).
async fn csrf_token(http: &reqwest::Client, base: &str) -> String {
    let json: Value = http
        .get(format!("{base}/auth/csrf"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    json["csrfToken"].as_str().unwrap().to_owned()
}

/// A form post to `<base><path>` with a CSRF token and the header `(name, value)`, as the
/// page's curl steps send it.
async fn post_form(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    (name, value): (&str, &str),
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let token = csrf_token(http, base).await;
    let mut form = vec![("csrfToken", token.as_str())];
    form.extend_from_slice(fields);
    http.post(format!("{base}{path}"))
        .header(name, value)
        .form(&form)
        .send()
        .await
        .unwrap()
}

/// The page's curl sign-in: the CSRF token, then the form with `X-Auth-Return-Redirect`;
/// the URL the answer names.
async fn sign_in(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> String {
    let header = ("X-Auth-Return-Redirect", "1");
    let answer = post_form(http, base, path, header, fields).await;
    assert_eq!(answer.status(), 200, "{path}");
    let json: Value = answer.json().await.unwrap();
    json["url"].as_str().unwrap().to_owned()
}

async fn text(http: &reqwest::Client, url: String) -> (u16, String, Option<String>) {
    let r = http.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let location = r
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, r.text().await.unwrap(), location)
}

#[tokio::test]
async fn the_application_signs_in_as_the_page_says() {
    let app = start(env!("CARGO_BIN_EXE_app"), "app");
    let (base, http) = (&app.base, client());
    let (status, _, location) = text(&http, format!("{base}/dashboard")).await;
    assert_eq!(
        status, 302,
        "signed out, /dashboard sends to the sign-in page"
    );
    assert!(location.unwrap().contains("/auth/signin?callbackUrl="));
    let url = sign_in(
        &http,
        base,
        "/auth/callback/credentials",
        &[("username", "bob")],
    )
    .await;
    assert!(url.contains("error=CredentialsSignin"), "{url}");
    sign_in(
        &http,
        base,
        "/auth/callback/credentials",
        &[("username", "ada")],
    )
    .await;
    let (_, session, _) = text(&http, format!("{base}/auth/session")).await;
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["user"]["name"], "Ada");
    let (status, page, _) = text(&http, format!("{base}/dashboard")).await;
    assert_eq!(
        (status, page.as_str()),
        (200, "The dashboard of Ada (user 1)")
    );
}

#[tokio::test]
async fn github_and_sqlite_send_to_github_and_keep_a_database() {
    let app = start(env!("CARGO_BIN_EXE_github_sqlite"), "github_sqlite");
    let (base, http) = (&app.base, client());
    let (status, _, _) = text(&http, format!("{base}/me")).await;
    assert_eq!(status, 302);
    let url = sign_in(
        &http,
        base,
        "/auth/signin/github",
        &[("callbackUrl", &format!("{base}/me"))],
    )
    .await;
    assert!(
        url.starts_with("https://github.com/login/oauth/authorize?")
            && url.contains("client_id=getting-started-client"),
        "{url}"
    );
    assert!(app._dir.0.join("app.db").is_file(), "the SQLite file");
    let (status, body, _) = text(&http, format!("{base}/account")).await;
    assert_eq!(
        (status, body.as_str()),
        (401, r#"{"error":"SessionRequired"}"#)
    );
}

/// A form post of the page's curl steps under `/auth/password/`, asking for JSON: the
/// status and the JSON answer.
async fn password_step(
    http: &reqwest::Client,
    base: &str,
    step: &str,
    fields: &[(&str, &str)],
) -> (u16, Value) {
    let path = format!("/auth/password/{step}");
    let header = ("Accept", "application/json");
    let answer = post_form(http, base, &path, header, fields).await;
    (answer.status().as_u16(), answer.json().await.unwrap())
}

/// A query parameter of a printed link.
fn param(link: &str, name: &str) -> String {
    let query = link.split_once('?').unwrap().1;
    query
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{name}=")))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn password_accounts_sign_up_confirm_sign_in_and_reset() {
    let app = start(env!("CARGO_BIN_EXE_password_accounts"), "password_accounts");
    let (base, http) = (&app.base, client());
    let email = "grace@example.com";
    let (status, page, _) = text(&http, format!("{base}/auth/signin")).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("/auth/password/signup") && page.contains("/auth/password/forgot"),
        "the sign-in page links to sign-up and the forgotten password"
    );

    // Sign-up: the policy first, then "sent" and a confirmation link.
    let (status, weak) = password_step(
        &http,
        base,
        "signup",
        &[("email", email), ("password", "short")],
    )
    .await;
    assert_eq!((status, &weak["code"]), (400, &Value::from("too_short")));
    let grace = [("email", email), ("password", PASSWORD)];
    let (status, sent) = password_step(&http, base, "signup", &grace).await;
    assert_eq!((status, sent), (200, serde_json::json!({"status": "sent"})));

    // Not yet confirmed: no session, and the code says why.
    let login = [("username", email), ("password", PASSWORD)];
    let url = sign_in(&http, base, "/auth/callback/password", &login).await;
    assert!(url.contains("code=email_not_verified"), "{url}");

    let link = app.mailed("VerifyAddress", email);
    assert!(
        link.starts_with(&format!("{base}/auth/password/verify?")),
        "{link}"
    );
    let (status, done, _) = text(&http, link).await;
    assert_eq!(status, 200);
    assert!(done.contains("Address confirmed"), "{done}");

    let wrong = [("username", email), ("password", "not the password")];
    let url = sign_in(&http, base, "/auth/callback/password", &wrong).await;
    assert!(url.contains("error=CredentialsSignin"), "{url}");
    sign_in(&http, base, "/auth/callback/password", &login).await;
    let (status, me, _) = text(&http, format!("{base}/me")).await;
    assert_eq!(status, 200);
    let id = me.strip_prefix(&format!("{email} is user ")).unwrap();
    assert!(!id.is_empty(), "{me}");

    // A sign-up with the same address answers as a new one, and mails its owner.
    let other = [("email", email), ("password", NEW_PASSWORD)];
    let (status, again) = password_step(&http, base, "signup", &other).await;
    assert_eq!(
        (status, again),
        (200, serde_json::json!({"status": "sent"}))
    );
    app.mailed("AccountExists", email);

    // A forgotten password: a reset link, used once; the old session ends.
    let (status, sent) = password_step(&http, base, "forgot", &[("email", email)]).await;
    assert_eq!((status, sent), (200, serde_json::json!({"status": "sent"})));
    let link = app.mailed("ResetPassword", email);
    let (token, user) = (param(&link, "token"), param(&link, "user"));
    assert_eq!(user, id);
    let reset = [
        ("token", token.as_str()),
        ("user", user.as_str()),
        ("password", NEW_PASSWORD),
    ];
    let (status, done) = password_step(&http, base, "reset", &reset).await;
    assert_eq!(
        (status, done),
        (200, serde_json::json!({"status": "reset"}))
    );
    let (status, _, _) = text(&http, format!("{base}/me")).await;
    assert_eq!(status, 302, "the session of before the reset ended");
    let (status, _) = password_step(&http, base, "reset", &reset).await;
    assert_eq!(status, 400, "a reset link works once");
    let url = sign_in(&http, base, "/auth/callback/password", &login).await;
    assert!(url.contains("error=CredentialsSignin"), "{url}");
    let renewed = [("username", email), ("password", NEW_PASSWORD)];
    sign_in(&http, base, "/auth/callback/password", &renewed).await;
    assert_eq!(text(&http, format!("{base}/me")).await.1, me);
}
