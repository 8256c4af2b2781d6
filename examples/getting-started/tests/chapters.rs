//! The manual's getting-started chapters (`docs/manual/getting-started.md`) as a reader
//! follows them. The binaries in `src/bin/` must be the page's code blocks character for
//! character, and this crate's dependencies the page's (with this repository's paths), so the
//! page cannot drift from what is built; then each binary is started and signed in through
//! over HTTP, as the page's "Check it" does with curl.
//!
//! `GETTING_STARTED_BLESS=1 cargo test -p example-getting-started` rewrites the binaries from
//! the page.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const PAGE: &str = include_str!("../../../docs/manual/getting-started.md");
const MANIFEST: &str = include_str!("../Cargo.toml");
const SECRET: &str = "getting-started-test-secret-0123456789abcdef";
const PASSWORD: &str = "correct horse battery staple";

/// Each chapter's program: the heading it is under and the binary it is.
const CHAPTERS: [(&str, &str); 3] = [
    ("3. The application", "app"),
    ("Add GitHub and SQLite", "github_sqlite"),
    ("Database sessions with credentials", "database_sessions"),
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
    _dir: TempDir,
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
        .env("APP_PASSWORD", PASSWORD)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
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
        _dir: TempDir(dir),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
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

/// The page's curl sign-in: the CSRF token, then the form with `X-Auth-Return-Redirect`;
/// the URL the answer names.
async fn sign_in(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> String {
    let token = csrf_token(http, base).await;
    let mut form = vec![("csrfToken", token.as_str())];
    form.extend_from_slice(fields);
    let answer = http
        .post(format!("{base}{path}"))
        .header("X-Auth-Return-Redirect", "1")
        .form(&form)
        .send()
        .await
        .unwrap();
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

#[tokio::test]
async fn credentials_get_a_database_session_for_the_stored_user() {
    let app = start(env!("CARGO_BIN_EXE_database_sessions"), "database_sessions");
    let (base, http) = (&app.base, client());
    let email = "grace@example.com";
    let url = sign_in(
        &http,
        base,
        "/auth/callback/credentials",
        &[("email", email), ("password", "wrong")],
    )
    .await;
    assert!(url.contains("error=CredentialsSignin"), "{url}");
    let grace = [("email", email), ("password", PASSWORD)];
    sign_in(&http, base, "/auth/callback/credentials", &grace).await;
    let (_, session, _) = text(&http, format!("{base}/auth/session")).await;
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["user"]["email"], email);
    let (status, me, _) = text(&http, format!("{base}/me")).await;
    assert_eq!(status, 200);
    let id = me.strip_prefix(&format!("{email} is user ")).unwrap();
    assert!(!id.is_empty(), "{me}");
    // A second sign-in finds the same stored user.
    let again = client();
    sign_in(&again, base, "/auth/callback/credentials", &grace).await;
    assert_eq!(text(&again, format!("{base}/me")).await.1, me);
}
