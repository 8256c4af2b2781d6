//! Password accounts kept in the database: `authcore-server add-user` gives a user a
//! password (refused when the policy refuses it), and the server with
//! `AUTHCORE_PASSWORDS=on` signs that user in by address at `/auth/callback/password`, with
//! the demo user off; the attempts that must open no session.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::binary::{self, ServerProcess};

/// `authcore-server add-user <args>` on the database `url` with `password` on standard
/// input: whether it succeeded, and what it printed on both streams.
fn add_user(url: &str, args: &[&str], password: &str) -> (bool, String) {
    let mut command = vec!["add-user"];
    command.extend_from_slice(args);
    binary::run(
        &command,
        &[
            ("AUTHCORE_DATABASE_URL", url),
            (
                "AUTH_SECRET",
                "a password accounts test secret, long enough",
            ),
        ],
        password,
    )
}

/// Signs in at `base` with `fields` at the password accounts' callback: the redirect and
/// whether a session cookie came with it.
async fn sign_in(base: &str, username: &str, password: &str) -> (String, bool) {
    let client = binary::browser();
    let token = binary::csrf_token(&client, base).await;
    let res = client
        .post(format!("{base}/auth/callback/password"))
        .form(&[
            ("csrfToken", token.as_str()),
            ("username", username),
            ("password", password),
        ])
        .send()
        .await
        .unwrap();
    let session = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("authjs.session-token="));
    (
        res.headers()["location"].to_str().unwrap().to_owned(),
        session,
    )
}

#[tokio::test]
async fn an_operator_made_account_signs_in_and_nothing_else_does() {
    let dir = std::env::temp_dir().join(format!("authcore-passwords-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("accounts.db").display());
    let good = "a horse, a battery and a staple";
    for (args, password, accepted, says) in [
        (vec!["ada@example.com"], "Password1234", false, "too common"),
        (vec!["ada@example.com"], "tiny pw", false, "at least 12"),
        (
            vec!["ada@example.com"],
            "ada@example.com!!",
            false,
            "refused",
        ),
        (vec!["not an address"], good, false, "not an address"),
        (vec![], good, false, "needs the user's email"),
        (
            vec!["Ada@Example.com", "--name", "Ada"],
            good,
            true,
            "made, with a password",
        ),
        (
            vec!["ada@example.com"],
            "an even longer passphrase",
            true,
            "given a password",
        ),
    ] {
        let (ok, text) = add_user(&url, &args, password);
        assert_eq!(ok, accepted, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
        assert!(
            !text.contains(password),
            "the password is never printed: {text}"
        );
    }
    let mut server = ServerProcess::spawn(
        &[
            ("AUTHCORE_DATABASE_URL", &url),
            ("AUTHCORE_PASSWORDS", "on"),
        ],
        None,
    );
    let base = server.base_url();
    let providers = binary::get_json(&binary::browser(), &format!("{base}/auth/providers")).await;
    assert!(providers.get("password").is_some(), "{providers}");
    assert!(
        providers.get("credentials").is_none(),
        "the demo user is off: {providers}"
    );
    let (to, session) = sign_in(&base, "ADA@example.com", "an even longer passphrase").await;
    assert!(session, "{to}");
    let refused = format!("{base}/auth/signin?error=CredentialsSignin&code=credentials");
    for (username, password) in [
        ("ada@example.com", good),
        ("ada@example.com", ""),
        ("nobody@example.com", "an even longer passphrase"),
        ("ada@example.com\0", "an even longer passphrase"),
        ("demo", "authcore-demo"),
    ] {
        let (to, session) = sign_in(&base, username, password).await;
        assert!(!session, "{username:?}");
        assert!(to.starts_with(&refused), "{username:?}: {to}");
    }
    server.terminate();
    let _ = server.wait_for_exit(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn password_accounts_need_a_database() {
    let file = authcore_server::ConfigFile::parse(
        "[server]\ndatabase_url = \"none\"\n[passwords]\nenabled = true\n",
    )
    .unwrap();
    let err = authcore_server::ServerConfig::resolve(file, authcore::env::Env::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("AUTHCORE_DATABASE_URL"), "{err}");
}
