//! A real SMTP server for tests: nodemailer's `smtp-server`, started from
//! `testsupport/smtp/server.mjs`, which prints each message it accepts as one JSON line.
//! Shared by authcore-smtp's tests and authcore-server's.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use authcore_smtp::SmtpSender;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};
use tokio::time::timeout;

/// The server, its port, and the messages it has printed.
pub struct SmtpServer {
    pub port: u16,
    lines: Lines<BufReader<ChildStdout>>,
    _child: Child,
}

impl SmtpServer {
    /// A plain-text server without authentication.
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// With `SMTP_TLS` / `SMTP_AUTH` settings (see testsupport/smtp/server.mjs).
    pub async fn start_with(env: &[(&str, &str)]) -> Self {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testsupport/smtp");
        assert!(
            dir.join("node_modules/smtp-server").is_dir()
                && dir.join("node_modules/mailparser").is_dir(),
            "testsupport/smtp/node_modules is missing: run `npm ci --prefix testsupport/smtp` \
             from the workspace root first"
        );
        let mut child = Command::new("node")
            .arg("server.mjs")
            .current_dir(&dir)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("cannot start `node` (is Node.js installed?)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("SMTP test server not ready within 20 s")
            .unwrap()
            .expect("SMTP test server exited before its ready line");
        let ready: Value = serde_json::from_str(&ready).unwrap();
        SmtpServer {
            port: u16::try_from(ready["port"].as_u64().unwrap()).unwrap(),
            lines,
            _child: child,
        }
    }

    /// A sender to it.
    pub fn sender(&self) -> SmtpSender {
        SmtpSender::plain_localhost(self.port).with_timeout(Duration::from_secs(10))
    }

    /// The next message it received (within 10 s).
    pub async fn next_message(&mut self) -> Value {
        let line = timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("no message received within 10 s")
            .unwrap()
            .expect("SMTP test server exited");
        serde_json::from_str(&line).unwrap()
    }
}
