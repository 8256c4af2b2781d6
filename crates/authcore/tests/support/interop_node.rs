//! Runs a script of `interop/` (the pinned Auth.js packages) with JSON on stdin and returns
//! its standard output. Needs Node.js on `PATH` (or in `$NODE`) and `npm ci --prefix interop`.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write as _;
use std::path::PathBuf;

/// The repository's `interop/` directory, after checking that `package` is installed there.
pub fn interop_dir(package: &str) -> PathBuf {
    let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    assert!(
        interop.join("node_modules").join(package).exists(),
        "run `npm ci --prefix interop` first"
    );
    interop
}

/// `node <script>` in `interop/` with `input` on stdin; its stdout, or `None` when it
/// exited with an error.
pub fn run(script: &str, input: &serde_json::Value) -> Option<Vec<u8>> {
    let mut node = std::process::Command::new(std::env::var("NODE").unwrap_or("node".into()))
        .arg(script)
        .current_dir(interop_dir(""))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cannot start node");
    node.stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = node.wait_with_output().unwrap();
    out.status.success().then_some(out.stdout)
}
