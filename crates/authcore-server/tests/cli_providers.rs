//! The `authcore-server` binary with catalogue providers from the environment and from its
//! TOML file: a preset with all its settings is offered; an unknown id, a missing secret,
//! a missing required setting or an unknown key stop it with a non-zero exit and a message
//! naming what to fix, never printing a secret.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::binary;
use binary::ServerProcess;

/// Runs the server with `env` (on a free port, without a database) and `config` as its
/// TOML file, until it exits or says it is listening (at most 20 s): (`Some(success)` when
/// it exited, `None` when it is serving), with everything it printed.
fn run(env: &[(&str, &str)], config: Option<&str>) -> (Option<bool>, String) {
    let mut server = ServerProcess::spawn(env, config);
    let limit = Duration::from_secs(20);
    let status = match server.wait_for_line(|l| l.contains("listening on"), limit) {
        Some(_) => None,
        None => Some(server.wait_for_exit(limit).success()),
    };
    (status, std::mem::take(&mut server.output))
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
