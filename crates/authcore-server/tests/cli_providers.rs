//! The `authcore-server` binary with catalogue providers from the environment and from its
//! TOML file: a preset with all its settings is offered; an unknown id, a missing secret,
//! a missing required setting or an unknown key stop it with a non-zero exit and a message
//! naming what to fix, never printing a secret.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs the server with `env` (on a free port, without a database) and `config` as its
/// TOML file, until it exits or says it is listening (at most 20 s): (`Some(success)` when
/// it exited, `None` when it is serving), with everything it printed.
fn run(env: &[(&str, &str)], config: Option<&str>) -> (Option<bool>, String) {
    let dir = std::env::temp_dir().join(format!(
        "authcore-cli-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_authcore-server"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AUTHCORE_ADDR", "127.0.0.1:0")
        .env("AUTHCORE_DATABASE_URL", "none")
        .env("AUTH_SECRET", "a cli test secret, long and random enough")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(text) = config {
        let path = dir.join("authcore.toml");
        std::fs::write(&path, text).unwrap();
        cmd.arg("--config").arg(&path);
    }
    let mut child = cmd.spawn().unwrap();
    // Both streams, line by line, into one channel.
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    for stream in [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut out = String::new();
    let status = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                let serving = line.contains("listening on");
                out.push_str(&line);
                out.push('\n');
                if serving {
                    break None;
                }
            }
            // Both streams closed: the process is ending.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Some(child.wait().unwrap().success());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                assert!(Instant::now() < deadline, "no answer in 20 s: {out}");
            }
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    (status, out)
}

/// Environment, config file, what the message must name.
type Case = (
    &'static [(&'static str, &'static str)],
    Option<&'static str>,
    &'static str,
);

#[test]
fn misconfigured_providers_stop_the_server_with_a_clear_message() {
    let cases: [Case; 6] = [
        // Env: a missing secret, a missing issuer, a missing account id.
        (&[("AUTH_DISCORD_ID", "1234")], None, "AUTH_DISCORD_SECRET"),
        (
            &[
                ("AUTH_ZITADEL_ID", "z"),
                ("AUTH_ZITADEL_SECRET", "top-secret-1"),
            ],
            None,
            "AUTH_ZITADEL_ISSUER",
        ),
        (
            &[
                ("AUTH_NETSUITE_ID", "n"),
                ("AUTH_NETSUITE_SECRET", "top-secret-2"),
            ],
            None,
            "AUTH_NETSUITE_ACCOUNT_ID",
        ),
        // File: an unknown id, an unknown key, a missing issuer.
        (
            &[],
            Some("[providers.myspace]\nid = \"x\"\nsecret = \"top-secret-3\"\n"),
            "unknown provider [providers.myspace]",
        ),
        (
            &[],
            Some("[providers.netsuite]\nid = \"x\"\nsecret = \"top-secret-4\"\naccount = \"1\"\n"),
            "takes `id`, `secret`, `account_id`, `userinfo_url`",
        ),
        (
            &[],
            Some("[providers.mastodon]\nid = \"x\"\nsecret = \"top-secret-5\"\n"),
            "AUTH_MASTODON_ISSUER",
        ),
    ];
    for (env, config, expected) in cases {
        let (status, out) = run(env, config);
        assert_eq!(
            status,
            Some(false),
            "{expected}: should exit non-zero: {out}"
        );
        assert!(out.contains(expected), "{expected}: {out}");
        assert!(!out.contains("top-secret"), "secret printed: {out}");
    }
}

#[test]
fn providers_from_env_and_file_start_the_server() {
    // A preset with its settings from the environment, another from the file.
    let (status, out) = run(
        &[
            ("AUTH_NETSUITE_ID", "n"),
            ("AUTH_NETSUITE_SECRET", "top-secret"),
            ("AUTH_NETSUITE_ACCOUNT_ID", "1234567"),
            (
                "AUTH_NETSUITE_USERINFO_URL",
                "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=1&deploy=1",
            ),
        ],
        Some(
            "[providers.mastodon]\nid = \"m\"\nsecret = \"top-secret\"\nissuer = \"https://mastodon.social\"\n",
        ),
    );
    assert_eq!(status, None, "the server should be running: {out}");
    assert!(out.contains("listening on"), "{out}");
    assert!(!out.contains("top-secret"), "{out}");
}
