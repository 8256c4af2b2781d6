//! The `authcore-server` binary as a child process: a clean environment (free port, no
//! database, a fixed secret) plus the test's variables and optional TOML file; its stdout
//! and stderr read line by line. Killed when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running (or ended) server process.
pub struct ServerProcess {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Everything it printed so far, both streams interleaved.
    pub output: String,
    dir: PathBuf,
}

impl ServerProcess {
    /// Starts the server with `env` over the defaults and `config` as its `--config` file.
    pub fn spawn(env: &[(&str, &str)], config: Option<&str>) -> Self {
        Self::spawn_wrapped(&[], env, config)
    }

    /// [`spawn`](Self::spawn) with `files` (name, text) written beside the config file, in
    /// the working directory (a users file named by a relative path).
    pub fn spawn_with_files(
        env: &[(&str, &str)],
        config: Option<&str>,
        files: &[(&str, &str)],
    ) -> Self {
        Self::spawn_in(&[], env, config, files)
    }

    /// [`spawn`](Self::spawn) under a wrapper command (`["prlimit", "--nofile=1024", "--"]`).
    pub fn spawn_wrapped(wrapper: &[&str], env: &[(&str, &str)], config: Option<&str>) -> Self {
        Self::spawn_in(wrapper, env, config, &[])
    }

    fn spawn_in(
        wrapper: &[&str],
        env: &[(&str, &str)],
        config: Option<&str>,
        files: &[(&str, &str)],
    ) -> Self {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "authcore-bin-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let binary = env!("CARGO_BIN_EXE_authcore-server");
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(binary);
                c
            }
            None => Command::new(binary),
        };
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AUTHCORE_ADDR", "127.0.0.1:0")
            .env("AUTHCORE_DATABASE_URL", "none")
            .env("AUTH_SECRET", "a cli test secret, long and random enough")
            // The tests sign new users up; the default (closed) is tested on its own.
            .env("AUTHCORE_SIGN_UP", "open")
            .current_dir(&dir)
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
        ServerProcess {
            child,
            lines: rx,
            output: String::new(),
            dir,
        }
    }

    /// What the process printed so far (read by [`wait_for_line`](Self::wait_for_line)).
    pub fn output(&self) -> &str {
        &self.output
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads output until a line satisfies `wanted` (returned), or the process closes both
    /// streams (`None`). Panics after `limit` with what was printed.
    pub fn wait_for_line(
        &mut self,
        wanted: impl Fn(&str) -> bool,
        limit: Duration,
    ) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    self.output.push_str(&line);
                    self.output.push('\n');
                    if wanted(&line) {
                        return Some(line);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    assert!(
                        Instant::now() < deadline,
                        "no such line in {limit:?}:\n{}",
                        self.output
                    );
                }
            }
        }
    }

    /// Waits (at most 20 s) for the `listening on http://…/` line and returns that base URL
    /// (`http://127.0.0.1:port`).
    pub fn base_url(&mut self) -> String {
        let line = self
            .wait_for_line(
                |l| l.contains("listening on http://"),
                Duration::from_secs(20),
            )
            .expect("the server exited instead of listening");
        let addr = line.split("http://").nth(1).unwrap_or_default();
        format!("http://{}", addr.trim_end_matches('/'))
    }

    /// Reads the rest of the output and waits for the exit (at most `limit`).
    pub fn wait_for_exit(&mut self, limit: Duration) -> ExitStatus {
        let _ = self.wait_for_line(|_| false, limit);
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "still running:\n{}", self.output);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM (as a service manager or Kubernetes does).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM failed");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `authcore-server <args>` to its end with only `env` in its environment and `stdin`
/// (a line) on its standard input: whether it succeeded, and what it printed on both streams.
pub fn run(args: &[&str], env: &[(&str, &str)], stdin: &str) -> (bool, String) {
    let (code, text) = run_for_code(args, env, stdin);
    (code == Some(0), text)
}

/// [`run`], with the exit code (none: ended by a signal).
pub fn run_for_code(args: &[&str], env: &[(&str, &str)], stdin: &str) -> (Option<i32>, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_authcore-server"))
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that ends before it reads (a refused argument): a closed pipe is no failure.
    let _ = writeln!(child.stdin.take().unwrap(), "{stdin}");
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// An HTTP client as a browser: cookies kept, redirects not followed, a 15 s timeout.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap()
}

/// `GET <base>/auth/csrf`: the token (its cookie stays in `client`).
pub async fn csrf_token(client: &reqwest::Client, base: &str) -> String {
    let csrf = get_json(client, &format!("{base}/auth/csrf")).await;
    csrf["csrfToken"].as_str().unwrap().to_owned()
}

/// The JSON `client` gets at `url`.
pub async fn get_json(client: &reqwest::Client, url: &str) -> serde_json::Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}
