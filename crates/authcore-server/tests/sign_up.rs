//! Who may become a user of the standalone server: closed unless configured (only the
//! existing users get a magic link, and a stranger gets the same answer without one), open
//! or a list of domains when the configuration says so, and a setting that is neither
//! refused at start-up with the setting named.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use authcore::SignUpPolicy;
use authcore::env::Env;
use authcore_server::ServerConfig;

use crate::support::binary::{self, ServerProcess};

/// Asks the server at `base` for a magic link to `email`: where it redirects.
async fn ask_for_link(base: &str, email: &str) -> String {
    let client = binary::browser();
    let token = binary::csrf_token(&client, base).await;
    let res = client
        .post(format!("{base}/auth/signin/email"))
        .form(&[("csrfToken", token.as_str()), ("email", email)])
        .send()
        .await
        .unwrap();
    res.headers()["location"].to_str().unwrap().to_owned()
}

/// The binary with its own defaults (an empty `AUTHCORE_SIGN_UP` is the default) and an
/// SQLite database, whose demo user is the one existing user.
#[tokio::test]
async fn the_default_is_closed_and_a_stranger_gets_the_same_answer_without_a_link() {
    let mut server = ServerProcess::spawn(
        &[
            ("AUTHCORE_SIGN_UP", ""),
            ("AUTHCORE_DATABASE_URL", "sqlite://signup.db?mode=rwc"),
        ],
        None,
    );
    let base = server.base_url();
    server
        .wait_for_line(|l| l.contains("sign-up: closed"), Duration::from_secs(10))
        .unwrap();
    let stranger = ask_for_link(&base, "stranger@evil.test").await;
    let member = ask_for_link(&base, "demo@example.com").await;
    assert_eq!(stranger, member);
    assert!(
        stranger.ends_with("/auth/verify-request?provider=email&type=email"),
        "{stranger}"
    );
    let link = server
        .wait_for_line(|l| l.starts_with("magic link for"), Duration::from_secs(10))
        .unwrap();
    assert!(link.contains("demo@example.com"), "{link}");
    server.terminate();
    let _ = server.wait_for_exit(Duration::from_secs(10));
    let printed = server.output();
    assert!(!printed.contains("stranger@evil.test"), "{printed}");
}

#[test]
fn the_setting_from_the_file_and_the_environment() {
    let read = |file: &str, vars: &[(&str, &str)]| {
        let file = authcore_server::ConfigFile::parse(file).unwrap();
        ServerConfig::resolve(file, Env::from_pairs(vars.iter().copied())).map(|c| c.sign_up)
    };
    let domains = SignUpPolicy::domains(["example.com", "corp.example"]).unwrap();
    for (file, vars, want) in [
        ("", vec![], SignUpPolicy::Closed),
        ("[auth]\nsign_up = \"open\"\n", vec![], SignUpPolicy::Open),
        (
            "[auth]\nsign_up = [\"example.com\", \"corp.example\"]\n",
            vec![],
            domains.clone(),
        ),
        (
            "[auth]\nsign_up = \"open\"\n",
            vec![("AUTHCORE_SIGN_UP", "closed")],
            SignUpPolicy::Closed,
        ),
        (
            "",
            vec![("AUTHCORE_SIGN_UP", "example.com, corp.example")],
            domains,
        ),
        (
            "[auth]\nsign_up = \"open\"\n",
            vec![("AUTHCORE_SIGN_UP", "")],
            SignUpPolicy::Closed,
        ),
    ] {
        assert_eq!(read(file, &vars).unwrap(), want, "{file} {vars:?}");
    }
    for (file, vars, named) in [
        ("[auth]\nsign_up = \"everyone\"\n", vec![], "sign_up"),
        ("[auth]\nsign_up = [\"not a domain\"]\n", vec![], "sign_up"),
        ("", vec![("AUTHCORE_SIGN_UP", "yes")], "AUTHCORE_SIGN_UP"),
    ] {
        let err = read(file, &vars).unwrap_err().to_string();
        assert!(err.contains(named), "{file} {vars:?}: {err}");
    }
}
