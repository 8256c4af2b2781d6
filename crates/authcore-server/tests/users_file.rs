//! The users file (Authelia's `users_database.yml` format) as the server's user source:
//! what loads and what is refused with its line, sign-in through the router with JWT and
//! SQLite sessions, the reload on change, the demo user turned off, the attacks on the
//! sign-in form, `hash-password`, and the manual's example as written.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use authcore::env::Env;
use authcore::passwords::{PasswordHashing, UserSource};
use authcore_server::{ServerConfig, USERS_FILE_ID, UsersFile};
use axum::http::{StatusCode, header};
use serde_json::Value;

use crate::support::binary::{self, ServerProcess};
use crate::support::in_memory::*;

/// argon2id of `authelia` with Authelia's default parameters (64 MiB, 3 passes, 4 lanes),
/// by argon2-cffi. Verifying it is slow in a debug build: one test verifies it once.
const ARGON2ID_OF_AUTHELIA: &str = "$argon2id$v=19$m=65536,t=3,p=4$iF30kWyQ17cK930Cytg7CA$CAMrdqO+xPG56DTwlowiht0mK8dL3rUBj/nFpe3BJBA";
/// bcrypt of `password` by pyca/bcrypt (as Authelia's older files hold).
const BCRYPT_OF_PASSWORD: &str = "$2b$04$b/LcjGM9OmyQFGwit63qlespAOcaiuwiMLDGW8bMk90qMLcChkMoW";
/// `password` as Authelia's `sha2crypt` (glibc's `crypt`) writes it.
const SHA512_CRYPT_OF_PASSWORD: &str = "$6$rounds=50000$c4U2sQGvWl2bS0dE$nspOuO0IW.9PM1vKIRWNLFgsbEgAl6XJANeqxg9LX2MSBIaXWCza1XEwntHJzm1nBujaOBWLDqZNe.7mHa57O.";
const SESSION_COOKIE: &str = "authjs.session-token";
const REFUSED: &str = "http://localhost:3000/auth/signin?error=CredentialsSignin&code=credentials";

/// A directory of its own for one test, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("authcore-users-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }

    /// Writes `text` to `name` in the directory; its path.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An argon2id hash of `password` with cheap parameters (the format is what matters here).
fn cheap_hash(password: &str) -> String {
    PasswordHashing::argon2id(64, 1, 1)
        .unwrap()
        .hash(password)
        .unwrap()
}

/// A users file: `alice` (argon2id, `alice-pw`), `bob` (bcrypt, `password`), `carol`
/// (disabled, `carol-pw`).
fn users_yaml() -> String {
    format!(
        r#"users:
  alice:
    displayname: "Alice Liddell"
    password: "{alice}"
    email: Alice@Example.com
    groups: [admins, dev]
  bob:
    displayname: Bob
    password: "{BCRYPT_OF_PASSWORD}"
    email: bob@example.com
    groups:
      - dev
  carol:
    disabled: true
    displayname: Carol
    password: "{carol}"
    email: carol@example.com
"#,
        alice = cheap_hash("alice-pw"),
        carol = cheap_hash("carol-pw"),
    )
}

/// The server of `vars` (a fixed secret, JWT sessions unless `AUTHCORE_DATABASE_URL` is
/// among them), as a router.
async fn app(vars: &[(&str, &str)]) -> axum::Router {
    let mut pairs = vec![
        (
            "AUTH_SECRET",
            "a users-file test secret, long and random enough",
        ),
        ("AUTHCORE_DATABASE_URL", "none"),
    ];
    pairs.extend_from_slice(vars);
    ServerConfig::from_env(Env::from_pairs(pairs))
        .unwrap()
        .build()
        .await
        .unwrap()
        .router()
}

async fn session(app: &axum::Router, jar: &mut CookieJar) -> Value {
    serde_json::from_str(&text(get(app, "/auth/session", jar).await).await).unwrap()
}

/// Signs in at the users file's provider; asserts the redirect to `/protected` and a
/// session, and answers the session JSON.
async fn signed_in(app: &axum::Router, login: &str, password: &str) -> Value {
    let mut jar = CookieJar::default();
    let res = sign_in_with(app, &mut jar, USERS_FILE_ID, login, password).await;
    assert_eq!(res.status(), StatusCode::FOUND, "{login}");
    assert_eq!(
        res.headers()[header::LOCATION],
        "http://localhost:3000/protected",
        "{login}"
    );
    assert!(jar.has(SESSION_COOKIE), "{login}: {jar:?}");
    session(app, &mut jar).await
}

/// Signs in at `provider`; asserts the standard refusal and that no session was set.
async fn refused(app: &axum::Router, provider: &str, login: &str, password: &str) {
    let mut jar = CookieJar::default();
    let res = sign_in_with(app, &mut jar, provider, login, password).await;
    let shown = |s: &str| s.chars().take(40).collect::<String>();
    assert_eq!(res.status(), StatusCode::FOUND, "{}", shown(login));
    assert!(!jar.has(SESSION_COOKIE), "{}: {jar:?}", shown(login));
    assert_eq!(session(app, &mut jar).await, Value::Null);
    if provider == USERS_FILE_ID {
        assert_eq!(
            res.headers()[header::LOCATION],
            REFUSED,
            "{} / {}",
            shown(login),
            shown(password)
        );
    }
}

/// A file in the shape of Authelia's own example (`---`, comments, quoted values, a
/// yamllint comment, the profile fields authcore does not use, `...`), its argon2id hash
/// with Authelia's default parameters, loads as it is and signs its user in.
#[tokio::test]
async fn a_file_as_authelia_writes_it_loads() {
    let text = format!(
        r#"---
###############################################################
#                         Users Database                      #
###############################################################

# List of users
users:
  authelia:
    disabled: false
    displayname: 'Authelia User'
    # Password is authelia
    password: '{authelia}'  # yamllint disable-line rule:line-length
    email: 'authelia@authelia.com'
    given_name: 'Authelia'
    family_name: 'User'
    picture: 'https://example.com/authelia.png'
    locale: 'en-US'
    extra:
      employee_id: 42
    groups:
      - 'admins'
      - 'dev'
  legacy:
    displayname: "Legacy User"
    password: "{legacy}"
    email: legacy@example.com
    groups: []
  shadow:
    displayname: "Shadow User"
    password: "{sha512crypt}"
    email: shadow@example.com
...
"#,
        authelia = ARGON2ID_OF_AUTHELIA,
        legacy = BCRYPT_OF_PASSWORD.replacen("$2b$", "$2y$", 1),
        sha512crypt = SHA512_CRYPT_OF_PASSWORD,
    );
    let dir = TestDir::new("authelia");
    let file = UsersFile::load(dir.write("users_database.yml", &text)).unwrap();
    assert_eq!(file.len(), 3);
    assert_eq!(file.id(), "users-file");
    let user = file.authenticate("authelia", "authelia").await.unwrap();
    let user = user.expect("the right password");
    assert_eq!(user.id, "authelia");
    assert_eq!(user.name.as_deref(), Some("Authelia User"));
    assert_eq!(user.email.as_deref(), Some("authelia@authelia.com"));
    assert_eq!(user.groups, ["admins", "dev"]);
    // `$2y$` (PHP's bcrypt) as Authelia accepts it.
    let legacy = file
        .authenticate("legacy", "password")
        .await
        .unwrap()
        .unwrap();
    assert!(legacy.groups.is_empty());
    // SHA-512-crypt, as Authelia's `sha2crypt` writes it.
    let shadow = file.authenticate("shadow", "password").await.unwrap();
    assert_eq!(shadow.map(|u| u.id).as_deref(), Some("shadow"));
    assert!(
        file.authenticate("shadow", "Password")
            .await
            .unwrap()
            .is_none()
    );
}

/// A mistake stops the load with the file, the line of the user or value, and what to fix.
#[test]
fn mistakes_name_the_file_and_line() {
    let good = cheap_hash("pw");
    // (file text, line, words of the message)
    let cases: &[(String, usize, &[&str])] = &[
        (
            format!(
                "users:\n  ok:\n    password: \"{good}\"\n  john:\n    displayname: John\n    password: \"$argon2id$v=19$nonsense\"\n"
            ),
            6,
            &["\"john\"", "password", "hash-password"],
        ),
        (
            "users:\n  john:\n    password: \"$6$rounds=999999999$salt$hash\"\n".to_owned(),
            3,
            &["password", "rounds"],
        ),
        (
            format!("users:\n  john:\n    password: \"{good}\"\n    email: not-an-address\n"),
            4,
            &["email", "well-formed"],
        ),
        (
            format!("users:\n  \"jo\\u0001hn\":\n    password: \"{good}\"\n"),
            2,
            &["control character"],
        ),
        (
            format!("users:\n  \" \":\n    password: \"{good}\"\n"),
            2,
            &["username is empty"],
        ),
        (
            format!(
                "users:\n  a:\n    password: \"{good}\"\n    email: x@example.com\n  b:\n    password: \"{good}\"\n    email: X@example.com\n"
            ),
            7,
            &["\"b\"", "also user \"a\""],
        ),
        (
            format!("users:\n  john:\n    password: \"{good}\"\n    groups: [\"admins,root\"]\n"),
            4,
            &["group", "comma"],
        ),
        (
            format!("users:\n  john:\n    password: \"{good}\"\n    displayname: \"John\\nDoe\"\n"),
            4,
            &["displayname", "control character"],
        ),
        (
            "users:\n  john:\n    displayname: John\n".to_owned(),
            3,
            &["password"],
        ),
        (
            "users:\n  john:\n   - nope\n".to_owned(),
            3,
            &["not a users file"],
        ),
        (
            "users:\n  john: {password: \"x\"\n  bad: [\n".to_owned(),
            3,
            &["not a users file"],
        ),
        (
            format!(
                "users:\n  john:\n    password: \"{good}\"\n  john:\n    password: \"{good}\"\n"
            ),
            4,
            &["duplicate"],
        ),
    ];
    let dir = TestDir::new("mistakes");
    for (i, (text, line, words)) in cases.iter().enumerate() {
        let path = dir.write(&format!("users-{i}.yml"), text);
        let err = UsersFile::load(&path).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(&format!("line {line}")), "{i}: {message}");
        assert_eq!(err.line(), Some(*line), "{i}: {message}");
        for word in *words {
            assert!(message.contains(word), "{i}: {word} in {message}");
        }
        assert!(!message.contains(&good), "a hash in {message}");
    }
    // No `users:` at all, and a file that is not there.
    for text in ["", "# nothing\n", "people: {}\n"] {
        let err = UsersFile::load(dir.write("none.yml", text)).unwrap_err();
        assert!(err.to_string().contains("users:"), "{err}");
    }
    let err = UsersFile::load(dir.0.join("missing.yml")).unwrap_err();
    assert!(err.to_string().contains("missing.yml"), "{err}");
}

/// A disabled user never signs in, and is answered as an unknown user is.
#[tokio::test]
async fn disabled_users_and_unknown_keys() {
    let dir = TestDir::new("disabled");
    let file = UsersFile::load(dir.write("users.yml", &users_yaml())).unwrap();
    assert_eq!(file.len(), 3);
    assert!(
        file.authenticate("carol", "carol-pw")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        file.authenticate("nobody", "carol-pw")
            .await
            .unwrap()
            .is_none()
    );
    // Email sign-in: any case of the address; the username is case-sensitive.
    let alice = file
        .authenticate("ALICE@example.COM", "alice-pw")
        .await
        .unwrap();
    assert_eq!(alice.unwrap().id, "alice");
    assert!(
        file.authenticate("Alice", "alice-pw")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        file.authenticate("carol@example.com", "carol-pw")
            .await
            .unwrap()
            .is_none()
    );
}

/// Sign-in through the router for an argon2id and a bcrypt user, by username and by
/// address, with JWT sessions and with SQLite database sessions; the session shows the user.
#[tokio::test]
async fn users_sign_in_with_jwt_and_database_sessions() {
    let dir = TestDir::new("sign-in");
    let users = dir.write("users.yml", &users_yaml());
    let users = users.to_str().unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.0.join("server.db").display());
    for database in ["none", db.as_str()] {
        let app = app(&[
            ("AUTHCORE_USERS_FILE", users),
            ("AUTHCORE_DATABASE_URL", database),
        ])
        .await;
        let providers: Value = serde_json::from_str(
            &text(get(&app, "/auth/providers", &mut CookieJar::default()).await).await,
        )
        .unwrap();
        assert_eq!(
            providers[USERS_FILE_ID]["type"], "credentials",
            "{providers}"
        );
        assert!(
            providers.get("credentials").is_none(),
            "the demo is off: {providers}"
        );

        let s = signed_in(&app, "alice", "alice-pw").await;
        assert_eq!(s["user"]["name"], "Alice Liddell", "{database}: {s}");
        assert_eq!(s["user"]["email"], "alice@example.com", "{database}: {s}");
        let s = signed_in(&app, "bob", "password").await;
        assert_eq!(s["user"]["name"], "Bob", "{database}: {s}");
        assert_eq!(s["user"]["email"], "bob@example.com", "{database}: {s}");
        let s = signed_in(&app, "BOB@example.com", "password").await;
        assert_eq!(s["user"]["name"], "Bob", "{database}: {s}");
    }
    // The database recorded each user once, linked to the file's account.
    let adapter = authcore_sqlx::SqlxAdapter::sqlite(&db).await.unwrap();
    use authcore::adapter::Adapter as _;
    let bob = adapter
        .get_user_by_account(USERS_FILE_ID, "bob")
        .await
        .unwrap();
    assert_eq!(bob.unwrap().email.as_deref(), Some("bob@example.com"));
    assert!(
        adapter
            .get_user_by_email("demo@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

/// A changed file is read again: the new password works and the old one does not; a
/// broken new file keeps the users loaded before.
#[tokio::test]
async fn a_changed_file_is_read_again() {
    let dir = TestDir::new("reload");
    let path = dir.write("users.yml", &users_yaml());
    let app = app(&[("AUTHCORE_USERS_FILE", path.to_str().unwrap())]).await;
    signed_in(&app, "alice", "alice-pw").await;

    // A comment changes the size too: a file system whose times have a coarse resolution
    // could give the new file the old one's modification time.
    let changed = replace_password(&users_yaml(), "alice", "new-alice-pw") + "# changed\n";
    std::fs::write(&path, changed).unwrap();
    // The file is looked at once a second at most.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    refused(&app, USERS_FILE_ID, "alice", "alice-pw").await;
    signed_in(&app, "alice", "new-alice-pw").await;

    // A broken file: logged, and the users of the last good one stay.
    std::fs::write(&path, "users:\n  alice:\n    password: \"not a hash\"\n").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    signed_in(&app, "alice", "new-alice-pw").await;
    refused(&app, USERS_FILE_ID, "alice", "not a hash").await;
}

/// `text` with `user`'s password line holding a new hash of `password`.
fn replace_password(text: &str, user: &str, password: &str) -> String {
    let mut in_user = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("  ") && !line.starts_with("   ") {
            in_user = line.trim() == format!("{user}:");
        }
        if in_user && line.trim_start().starts_with("password:") {
            out.push_str(&format!("    password: \"{}\"\n", cheap_hash(password)));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Once a users file is configured, the demo user and its provider are gone.
#[tokio::test]
async fn the_demo_user_is_off_with_a_users_file() {
    let dir = TestDir::new("no-demo");
    let path = dir.write("users.yml", &users_yaml());
    let app = app(&[("AUTHCORE_USERS_FILE", path.to_str().unwrap())]).await;
    refused(
        &app,
        "credentials",
        "demo",
        authcore_server::DEFAULT_DEMO_PASSWORD,
    )
    .await;
    refused(
        &app,
        USERS_FILE_ID,
        "demo",
        authcore_server::DEFAULT_DEMO_PASSWORD,
    )
    .await;
}

/// What an attacker may send to the sign-in form: every attempt answers the standard
/// `CredentialsSignin` redirect and sets no session.
#[tokio::test]
async fn attacks_on_the_sign_in_form_get_nothing() {
    let dir = TestDir::new("attacks");
    let path = dir.write("users.yml", &users_yaml());
    // The rate limits would answer the later attempts differently: they are tested elsewhere.
    let app = app(&[
        ("AUTHCORE_USERS_FILE", path.to_str().unwrap()),
        ("AUTHCORE_RATE_LIMITS", "off"),
    ])
    .await;
    // Longer than a password may be, and within the body limit.
    let long_password = "a".repeat(60_000);
    let long_name = "a".repeat(10_000);
    let cases: &[(&str, &str)] = &[
        ("alice", "wrong"),
        ("alice", "ALICE-PW"),
        ("nobody", "alice-pw"),
        ("carol", "carol-pw"),
        ("alice", ""),
        ("", "alice-pw"),
        ("alice", "alice-pw\0"),
        ("alice\0", "alice-pw"),
        ("alice", &long_password),
        ("*", "alice-pw"),
        ("../alice", "alice-pw"),
        ("alice/../alice", "alice-pw"),
        ("ALICE", "alice-pw"),
        (" alice", "alice-pw"),
        (&long_name, "alice-pw"),
        ("@example.com", "alice-pw"),
        ("%", "alice-pw"),
    ];
    for (login, password) in cases {
        refused(&app, USERS_FILE_ID, login, password).await;
    }
    // A 1 MB password: the body limit refuses the request before any sign-in.
    let mut jar = CookieJar::default();
    let megabyte = "a".repeat(1 << 20);
    let res = sign_in_with(&app, &mut jar, USERS_FILE_ID, "alice", &megabyte).await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(!jar.has(SESSION_COOKIE), "{jar:?}");
    // The right password still works afterwards.
    signed_in(&app, "alice", "alice-pw").await;
}

/// The binary: the banner names the users file and no demo user; a broken file stops the
/// start with its line; the demo user with the default password refuses a non-loopback
/// address.
#[test]
fn the_binary_starts_only_with_a_sound_configuration() {
    let yaml = users_yaml();
    let mut server = ServerProcess::spawn_with_files(
        &[("AUTHCORE_USERS_FILE", "users.yml")],
        None,
        &[("users.yml", &yaml)],
    );
    server.base_url();
    server.wait_for_line(|l| l.contains("users file:"), Duration::from_secs(5));
    assert!(
        server.output.contains("users file: users.yml (3 users)"),
        "{}",
        server.output
    );
    assert!(!server.output.contains("demo user"), "{}", server.output);
    drop(server);

    let mut server = ServerProcess::spawn_with_files(
        &[("AUTHCORE_USERS_FILE", "users.yml")],
        None,
        &[(
            "users.yml",
            "users:\n  john:\n    password: \"plain text\"\n",
        )],
    );
    assert!(!server.wait_for_exit(Duration::from_secs(20)).success());
    assert!(
        server.output.contains("users.yml, line 3"),
        "{}",
        server.output
    );
    assert!(!server.output.contains("listening"), "{}", server.output);

    let mut server = ServerProcess::spawn(&[("AUTHCORE_ADDR", "0.0.0.0:0")], None);
    assert!(!server.wait_for_exit(Duration::from_secs(20)).success());
    assert!(
        server.output.contains("AUTHCORE_DEMO_PASSWORD"),
        "{}",
        server.output
    );
    assert!(!server.output.contains("listening"), "{}", server.output);

    let mut server = ServerProcess::spawn(&[], None);
    server.base_url();
    server.wait_for_line(|l| l.contains("demo user:"), Duration::from_secs(5));
}

/// `hash-password` prints an argon2id hash of the line it reads; an empty one is refused.
#[test]
fn hash_password_prints_a_usable_hash() {
    use std::io::Write as _;
    let run = |input: &[u8]| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_authcore-server"))
            .arg("hash-password")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    for (input, password) in [
        (
            &b"correct horse battery staple\n"[..],
            "correct horse battery staple",
        ),
        (b"crlf-ended\r\n", "crlf-ended"),
        (b"no line end", "no line end"),
    ] {
        let out = run(input);
        assert!(out.status.success(), "{out:?}");
        let hash = String::from_utf8(out.stdout).unwrap();
        let hash = hash.trim_end();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        let hashing = PasswordHashing::owasp();
        assert!(hashing.verify(hash, password).unwrap().is_match());
        assert!(!hashing.verify(hash, "other").unwrap().is_match());
    }
    for input in [&b"\n"[..], b"", b"a\0b\n"] {
        let out = run(input);
        assert!(!out.status.success(), "{input:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
    }
}

/// The chapter's configuration, as written: its TOML and its users file start the server,
/// and the user it documents signs in with the password it gives.
#[tokio::test]
async fn the_manual_example_works_as_written() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/manual/users-file.md"),
    )
    .unwrap();
    let block = |lang: &str| {
        doc.split(&format!("```{lang}\n"))
            .nth(1)
            .and_then(|b| b.split("\n```").next())
            .unwrap_or_else(|| panic!("no {lang} block"))
            .to_owned()
    };
    let (toml, yaml) = (block("toml"), block("yaml"));
    let password = doc
        .split("the password of `john` is `")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .expect("the chapter gives john's password")
        .to_owned();
    let users_path = toml
        .lines()
        .find_map(|l| l.trim().strip_prefix("path = \""))
        .and_then(|p| p.split('"').next())
        .unwrap()
        .to_owned();
    let mut server = ServerProcess::spawn_with_files(&[], Some(&toml), &[(&users_path, &yaml)]);
    let base = server.base_url();
    server.wait_for_line(|l| l.contains("users file:"), Duration::from_secs(5));

    let client = binary::browser();
    let csrf = binary::csrf_token(&client, &base).await;
    let res = client
        .post(format!("{base}/auth/callback/{USERS_FILE_ID}"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("username", "john"),
            ("password", password.as_str()),
            ("callbackUrl", "/protected"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 302);
    let session = binary::get_json(&client, &format!("{base}/auth/session")).await;
    assert_eq!(session["user"]["name"], "John Doe", "{session}");
    assert_eq!(
        session["user"]["email"], "john.doe@example.com",
        "{session}"
    );
}

/// The file's groups reach the gateway, with JWT sessions (in the token) and with database
/// sessions (kept with the stored user): an `allow_groups` rule lets a member through with
/// the groups in the identity header, and refuses a user outside the group.
#[tokio::test]
async fn groups_reach_the_gateway_rules_and_headers() {
    let dir = TestDir::new("gateway");
    let users = dir.write("users.yml", &users_yaml());
    let sqlite = format!("sqlite://{}?mode=rwc", dir.0.join("gateway.db").display());
    for database_url in ["none", sqlite.as_str()] {
        let text = format!(
            r#"
[server]
database_url = "{database_url}"
[auth]
secret = "a users-file gateway secret, long and random enough"
url = "http://localhost:3000/auth"
[users_file]
path = "{}"
[gateway]
[[gateway.rules]]
name = "admins"
hosts = ["admin.example.test"]
allow_groups = ["admins"]
"#,
            users.display()
        );
        let file = authcore_server::ConfigFile::parse(&text).unwrap();
        let app = ServerConfig::resolve(file, Env::default())
            .unwrap()
            .build()
            .await
            .unwrap()
            .router();
        for (user, password, status, groups) in [
            ("alice", "alice-pw", StatusCode::OK, Some("admins,dev")),
            ("bob", "password", StatusCode::FORBIDDEN, None),
        ] {
            let mut jar = CookieJar::default();
            let res = sign_in_with(&app, &mut jar, USERS_FILE_ID, user, password).await;
            assert_eq!(res.status(), StatusCode::FOUND, "{user} {database_url}");
            let req = axum::http::Request::get(format!("{ORIGIN}{}", authcore_gateway::NGINX_PATH))
                .header(header::COOKIE, jar.header())
                .header("x-original-url", "https://admin.example.test/")
                .header("x-original-method", "GET")
                .body(axum::body::Body::empty())
                .unwrap();
            let res = send(&app, req, &mut jar).await;
            assert_eq!(res.status(), status, "{user} {database_url}");
            let header = res
                .headers()
                .get("x-auth-request-groups")
                .map(|v| v.to_str().unwrap());
            assert_eq!(header, groups, "{user} {database_url}");
        }
    }
}
