//! The gateway behind the real proxies: Debian's `nginx` and `caddy`, each started on
//! loopback with the configuration of `docs/gateway.md` (example.com → example.test, ports
//! → free ones) in front of authcore and an application that echoes the headers it gets and
//! records every request it receives. A client resolving the test host names to 127.0.0.1
//! walks through sign-in, single sign-on across subdomains, the rules, public paths and
//! sign-out; then the attack suite sends raw requests (byte for byte, so no client library
//! normalises the path or the header names) and checks what the application received.
//! Each proxy is stopped as a service manager stops it (SIGTERM), and nothing it started may
//! outlive it.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
use crate::support;
use crate::support::binary;
use crate::support::oidc_provider;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use authcore_server::ServerConfig;
use axum::http::{HeaderMap, Uri};
use serde_json::{Value, json};

const HOSTS: [&str; 4] = ["auth", "app1", "app2", "admin"];

/// A proxy process: nginx's master (which starts the workers), or caddy. Dropped, it is
/// stopped (see [`Running::stop`]), so that nothing outlives a test that failed.
struct Running {
    child: Child,
    stopped: bool,
}

/// What stopping a proxy found.
#[derive(Debug)]
struct Stopped {
    /// How many processes the proxy had started (nginx's workers).
    started: usize,
    /// What did not end by itself: the proxy, or a process it started (each then killed).
    left: Vec<String>,
}

impl Running {
    fn new(child: Child) -> Running {
        Running {
            child,
            stopped: false,
        }
    }

    /// Stops the proxy as a service manager does, with SIGTERM: nginx's master ends its
    /// workers, waits for them and exits; caddy closes its servers and exits. The proxy gets
    /// 10 s to exit and what it started 5 s more to be gone; whatever is still there is then
    /// killed (by process id) and reported. Killing nginx's master instead would leave its
    /// workers running, listening on the port, with init as their parent.
    fn stop(&mut self) -> Stopped {
        if self.stopped {
            return Stopped {
                started: 0,
                left: Vec::new(),
            };
        }
        self.stopped = true;
        let pid = self.child.id();
        let started = descendants(pid);
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status();
        let mut left = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    left.push(format!(
                        "{pid} ({}) did not exit on SIGTERM",
                        command_line(pid)
                    ));
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut alive = started.clone();
        loop {
            alive.retain(Process::is_running);
            if alive.is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for process in alive {
            left.push(format!(
                "{} ({}) outlived the proxy",
                process.pid,
                command_line(process.pid)
            ));
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(process.pid.to_string())
                .status();
        }
        Stopped {
            started: started.len(),
            left,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
        // A test failing while the proxy ran: what the proxy said (its errors, an upstream
        // it could not reach, a port it could not take) goes to the test's output. Stopped
        // with everything it started, it holds no end of the pipe any more.
        if std::thread::panicking()
            && let Some(mut stderr) = self.child.stderr.take()
        {
            use std::io::Read;
            let mut said = String::new();
            let _ = stderr.read_to_string(&mut said);
            eprintln!("--- the proxy's standard error ---\n{said}");
        }
    }
}

/// A process as `/proc` shows it; its start time tells it apart from a later process given
/// the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Process {
    pid: u32,
    start: u64,
}

impl Process {
    /// Whether it still runs (not ended, nor ended and waiting for its parent to reap it).
    fn is_running(&self) -> bool {
        proc_stat(self.pid)
            .is_some_and(|(_, state, start)| start == self.start && state != 'Z' && state != 'X')
    }
}

/// The parent, the state and the start time of process `pid` (`/proc/<pid>/stat`).
fn proc_stat(pid: u32) -> Option<(u32, char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some((
        fields.get(1)?.parse().ok()?,
        fields.first()?.chars().next()?,
        fields.get(19)?.parse().ok()?,
    ))
}

/// Every process `pid` started, and theirs in turn.
fn descendants(pid: u32) -> Vec<Process> {
    let all: Vec<(u32, u32, u64)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(|p| proc_stat(p).map(|(parent, _, start)| (p, parent, start)))
        .collect();
    let mut found: Vec<Process> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for &(p, _, start) in all.iter().filter(|(_, pp, _)| *pp == parent) {
            found.push(Process { pid: p, start });
            parents.push(p);
        }
    }
    found
}

fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| {
            String::from_utf8_lossy(&c)
                .replace('\0', " ")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("authcore-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The fenced block after `<!-- gateway-test: <name> -->` in docs/gateway.md.
fn documented_config(name: &str) -> String {
    crate::support::documented("gateway.md", &format!("gateway-test: {name}"))
}

/// The ports of one run: the proxy, authcore, the echo application.
#[derive(Clone, Copy, Debug)]
struct Ports {
    proxy: u16,
    authcore: u16,
    app: u16,
}

/// One request the application received: its target as sent, and every header (names lower
/// case, repeated ones each).
#[derive(Clone, Debug)]
struct Received {
    target: String,
    headers: Vec<(String, String)>,
}

/// What the application received, in order.
type Log = Arc<Mutex<Vec<Received>>>;

/// Serves the application: it answers every request with the request headers as JSON and
/// records it in the returned log.
async fn start_echo_app() -> (u16, Log) {
    let log: Log = Arc::default();
    let record = Arc::clone(&log);
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let record = Arc::clone(&record);
        async move {
            record.lock().unwrap().push(Received {
                target: uri.to_string(),
                headers: headers
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().to_owned(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
            });
            let seen: serde_json::Map<String, Value> = headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        json!(v.to_str().unwrap_or("<binary>")),
                    )
                })
                .collect();
            (
                [("content-type", "application/json")],
                Value::Object(seen).to_string(),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, log)
}

/// How authcore runs behind the proxy.
#[derive(Clone, Copy, Debug)]
enum Setup<'a> {
    /// JWT sessions (the admin rule reads groups), with the real OpenID provider (id `oidc`)
    /// when given.
    Jwt(Option<&'a str>),
    /// SQLite with second factors on, and docs/gateway.md's rule asking two factors
    /// (`factors = 2`) of a sign-in at most an hour old on admin.example.test.
    StepUp,
}

/// Serves authcore with the gateway, reachable by the browser as
/// `http://auth.example.test:<proxy>`, with the credentials demo user; returns its port and
/// handler.
async fn start_authcore(dir: &Path, proxy: u16, setup: Setup<'_>) -> (u16, authcore::Auth) {
    let key = dir.join("identity.pem");
    assert!(
        Command::new("openssl")
            .args(["genpkey", "-algorithm", "ed25519", "-out"])
            .arg(&key)
            .status()
            .unwrap()
            .success()
    );
    let common = format!(
        r#"
[auth]
secret = "a proxy test secret, long and random enough"
url = "http://auth.example.test:{proxy}/auth"
[gateway]
cookie_domain = ".example.test"
allowed_redirect_hosts = ["*.example.test"]
signing_keys = ["{key}"]
[[gateway.rules]]
name = "public assets"
path = "/public/"
policy = "bypass"
"#,
        key = key.display()
    );
    let (config, env) = match setup {
        Setup::Jwt(idp) => (
            format!(
                r#"
[server]
database_url = "none"
{common}
[[gateway.rules]]
name = "admin panel"
hosts = ["admin.example.test"]
allow_emails = ["root@example.test"]
allow_groups = ["admins"]
"#
            ),
            match idp {
                Some(issuer) => authcore::env::Env::from_pairs([
                    ("AUTH_OIDC_ISSUER", issuer),
                    ("AUTH_OIDC_ID", "client-basic"),
                    ("AUTH_OIDC_SECRET", "secret-basic"),
                ]),
                None => authcore::env::Env::default(),
            },
        ),
        Setup::StepUp => (
            format!(
                r#"
[server]
database_url = "sqlite://{db}?mode=rwc"
[two_factor]
policy = "optional"
{common}
{rule}"#,
                db = dir.join("gateway.db").display(),
                rule = documented_config("step-up-rule").replace("example.com", "example.test"),
            ),
            authcore::env::Env::default(),
        ),
    };
    let path = dir.join("authcore.toml");
    std::fs::write(&path, config).unwrap();
    let server = ServerConfig::from_file(&path, env)
        .unwrap()
        .build()
        .await
        .unwrap();
    let auth = server.auth().clone();
    let app = server.router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, auth)
}

fn substitute(text: &str, ports: Ports) -> String {
    text.replace("example.com", "example.test")
        .replace("127.0.0.1:3000", &format!("127.0.0.1:{}", ports.authcore))
        .replace("127.0.0.1:8080", &format!("127.0.0.1:{}", ports.app))
}

fn start_nginx(dir: &Path, ports: Ports) -> Running {
    for t in ["body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        std::fs::create_dir_all(dir.join("tmp").join(t)).unwrap();
    }
    let site = substitute(&documented_config("nginx"), ports)
        .replace("listen 80;", &format!("listen 127.0.0.1:{};", ports.proxy));
    let d = dir.display();
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n\
         fastcgi_temp_path {d}/tmp/fastcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n  scgi_temp_path {d}/tmp/scgi;\n\
         {site}\n}}\n"
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    // Debian puts it in /usr/sbin, which not every PATH has.
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("nginx");
    let child = Command::new(nginx)
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nginx (apt-get install nginx)");
    Running::new(child)
}

fn start_caddy(dir: &Path, ports: Ports) -> Running {
    let mut site = substitute(&documented_config("caddy"), ports);
    for h in HOSTS {
        site = site.replace(
            &format!("{h}.example.test"),
            &format!("http://{h}.example.test:{}", ports.proxy),
        );
    }
    let conf = format!(
        "{{\n\tadmin off\n\tauto_https off\n\tdefault_bind 127.0.0.1\n\thttp_port {}\n\tstorage file_system {}\n}}\n\n{site}",
        ports.proxy,
        dir.join("data").display()
    );
    let path = dir.join("Caddyfile");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new("caddy")
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(&path)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("caddy (apt-get install caddy)");
    Running::new(child)
}

async fn wait_for_port(port: u16, proxy: &mut Running, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        if let Some(status) = proxy.child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = proxy.child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("{name} exited ({status}): {err}");
        }
        assert!(Instant::now() < deadline, "{name} did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A browser-like client: the test host names resolve to the proxy on 127.0.0.1, cookies
/// are kept, redirects are not followed (each step is checked).
fn client(proxy: u16) -> reqwest::Client {
    client_with(proxy, Arc::new(reqwest::cookie::Jar::default()))
}

/// [`client`] keeping its cookies in `jar`.
fn client_with(proxy: u16, jar: Arc<reqwest::cookie::Jar>) -> reqwest::Client {
    let mut accept = reqwest::header::HeaderMap::new();
    accept.insert(
        reqwest::header::ACCEPT,
        reqwest::header::HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
    );
    let mut b = reqwest::Client::builder()
        .default_headers(accept)
        .redirect(reqwest::redirect::Policy::none())
        .cookie_provider(jar)
        .timeout(Duration::from_secs(10));
    for h in HOSTS {
        b = b.resolve(
            &format!("{h}.example.test"),
            SocketAddr::from(([127, 0, 0, 1], proxy)),
        );
    }
    b.build().unwrap()
}

fn location(r: &reqwest::Response) -> String {
    r.headers()["location"].to_str().unwrap().to_owned()
}

/// CSRF + credentials sign-in through the proxy, with `callback`.
async fn sign_in(c: &reqwest::Client, auth: &str, callback: &str) -> reqwest::Response {
    let csrf = binary::csrf_token(c, auth).await;
    c.post(format!("{auth}/auth/callback/credentials"))
        .form(&[
            ("csrfToken", csrf.as_str()),
            ("username", "demo"),
            ("password", "authcore-demo"),
            ("callbackUrl", callback),
        ])
        .send()
        .await
        .unwrap()
}

/// The headers the echo application got for `request`.
async fn echoed(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// An identity header the application did not get, or got empty (nginx drops empty
/// headers, Caddy passes them on empty).
fn blank(seen: &Value, header: &str) -> bool {
    seen.get(header).is_none_or(|v| v == "")
}

/// The whole walk through one proxy.
async fn walk(name: &str, ports: Ports) {
    let p = ports.proxy;
    let auth = format!("http://auth.example.test:{p}");
    let app1 = format!("http://app1.example.test:{p}");
    let app2 = format!("http://app2.example.test:{p}");
    let admin = format!("http://admin.example.test:{p}");
    let c = client(p);

    // A protected page sends the browser to the sign-in page, back to the original URL after.
    let r = c
        .get(format!("{app1}/dashboard?tab=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "{name}: {:?}", r.text().await);
    let target = format!("{app1}/dashboard?tab=1");
    let signin = format!(
        "{auth}/auth/signin?callbackUrl={}",
        url::form_urlencoded::byte_serialize(target.as_bytes()).collect::<String>()
    );
    assert_eq!(location(&r), signin, "{name}");
    let r = c.get(&signin).send().await.unwrap();
    assert_eq!(r.status(), 200, "{name}");
    assert!(r.text().await.unwrap().contains("Sign in"), "{name}");
    let r = sign_in(&c, &auth, &target).await;
    assert_eq!(r.status(), 302, "{name}");
    assert_eq!(location(&r), target, "{name}: back on the original URL");

    // The application sees who it is, and nothing a client made up.
    let seen: Value = c
        .get(&target)
        .header("x-auth-request-email", "root@example.test")
        .header("x-auth-request-groups", "admins")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        seen["x-auth-request-email"], "demo@example.com",
        "{name}: {seen}"
    );
    assert_eq!(seen["x-auth-request-name"], "Demo User", "{name}: {seen}");
    assert_eq!(
        seen["x-auth-request-provider"], "credentials",
        "{name}: {seen}"
    );
    assert!(blank(&seen, "x-auth-request-groups"), "{name}: {seen}");
    assert!(
        seen["x-auth-request-jwt"]
            .as_str()
            .is_some_and(|j| j.split('.').count() == 3),
        "{name}: {seen}"
    );

    // Single sign-on: the second subdomain is signed in too.
    let r = c.get(format!("{app2}/")).send().await.unwrap();
    assert_eq!(r.status(), 200, "{name}");
    let seen: Value = r.json().await.unwrap();
    assert_eq!(seen["x-auth-request-email"], "demo@example.com", "{name}");

    // Outside the rules: the 403 page, with a way out.
    let r = c.get(format!("{admin}/")).send().await.unwrap();
    assert_eq!(r.status(), 403, "{name}");
    let page = r.text().await.unwrap();
    assert!(
        page.contains("Access denied") && page.contains("/auth/signout"),
        "{name}: {page}"
    );

    // A public path needs no session, and forged identity headers do not pass.
    let anonymous = client(p);
    let seen: Value = anonymous
        .get(format!("{app1}/public/app.css"))
        .header("x-auth-request-email", "root@example.test")
        .header("x-auth-request-user", "1")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(blank(&seen, "x-auth-request-email"), "{name}: {seen}");
    assert!(blank(&seen, "x-auth-request-user"), "{name}: {seen}");
    // Forged cookies are no session.
    let r = anonymous
        .get(format!("{app1}/dashboard"))
        .header(
            "cookie",
            "authjs.session-token=forged.forged.forged.forged.forged",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "{name}");

    // callbackUrl to a host outside the allow-list goes home instead.
    let other = client(p);
    let r = sign_in(&other, &auth, "http://evil.example.org/steal").await;
    assert_eq!(location(&r), auth, "{name}");

    // Sign-out ends access on both subdomains.
    let csrf: Value = c
        .get(format!("{auth}/auth/csrf"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = c
        .post(format!("{auth}/auth/signout"))
        .form(&[("csrfToken", csrf["csrfToken"].as_str().unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "{name}");
    for host in [&app1, &app2] {
        let r = c.get(format!("{host}/")).send().await.unwrap();
        assert_eq!(r.status(), 302, "{name}: {host} after sign-out");
    }
}

/// Which proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proxy {
    Nginx,
    Caddy,
}

/// Starts authcore (with the OpenID provider when given), the application and `proxy` on
/// `port`; runs `check` with the ports; stops everything.
async fn behind<F, Fut>(proxy: Proxy, port: u16, setup: Setup<'_>, check: F)
where
    F: FnOnce(Ports, Log, authcore::Auth) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let name = format!("{proxy:?}").to_lowercase();
    let label = match setup {
        Setup::Jwt(None) => "jwt",
        Setup::Jwt(Some(_)) => "oidc",
        Setup::StepUp => "step-up",
    };
    let dir = temp_dir(&format!("gateway-{name}-{label}"));
    let (app, log) = start_echo_app().await;
    let (authcore, auth) = start_authcore(&dir, port, setup).await;
    let ports = Ports {
        proxy: port,
        authcore,
        app,
    };
    let mut running = match proxy {
        Proxy::Nginx => start_nginx(&dir, ports),
        Proxy::Caddy => start_caddy(&dir, ports),
    };
    wait_for_port(port, &mut running, &name).await;
    check(ports, log, auth).await;
    // Nothing the proxy started outlives it (nginx runs one worker).
    let stopped = running.stop();
    assert!(stopped.left.is_empty(), "{name}: {stopped:?}");
    if proxy == Proxy::Nginx {
        assert_eq!(stopped.started, 1, "{name}: {stopped:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_auth_request() {
    behind(
        Proxy::Nginx,
        free_port(),
        Setup::Jwt(None),
        |ports, log, _| async move {
            walk("nginx", ports).await;
            attacks(Proxy::Nginx, ports, &log).await;
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caddy_forward_auth() {
    behind(
        Proxy::Caddy,
        free_port(),
        Setup::Jwt(None),
        |ports, log, _| async move {
            walk("caddy", ports).await;
            attacks(Proxy::Caddy, ports, &log).await;
        },
    )
    .await;
}

/// A rule asking two factors (`factors = 2`), behind the proxy: a user without a second
/// factor gets the page that says to set one up; once enrolled, a one-factor session is sent
/// to sign in again and comes back to the original URL after the code, with `amr` and
/// `auth_time` in the identity headers and the signed identity. Neither the one-factor
/// session, nor a client's own `X-Auth-Request-Amr`, nor the earlier session after the
/// step-up reaches the application.
async fn step_up_walk(proxy: Proxy) {
    behind(
        proxy,
        free_port(),
        Setup::StepUp,
        |ports, log, auth| async move {
            let p = ports.proxy;
            let authn = format!("http://auth.example.test:{p}");
            let app1 = format!("http://app1.example.test:{p}");
            let admin = format!("http://admin.example.test:{p}/reports?month=11");
            let jar = Arc::new(reqwest::cookie::Jar::default());
            let c = client_with(p, Arc::clone(&jar));
            let reached = || log.lock().unwrap().len();

            // One factor: app1 lets the user through and says so.
            let r = sign_in(&c, &authn, &format!("{app1}/")).await;
            assert_eq!(location(&r), format!("{app1}/"), "{proxy:?}");
            let seen = echoed(c.get(format!("{app1}/"))).await;
            assert_eq!(seen["x-auth-request-amr"], "pwd", "{proxy:?}: {seen}");
            let auth_time: i64 = seen["x-auth-request-auth-time"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                (auth_time - support::totp::unix_now() as i64).abs() < 60,
                "{seen}"
            );
            let user_id = seen["x-auth-request-user"].as_str().unwrap().to_owned();

            // No second factor yet: the page that says to set one up, the application untouched.
            let before = reached();
            let r = c.get(&admin).send().await.unwrap();
            assert_eq!(r.status(), 403, "{proxy:?}");
            let page = r.text().await.unwrap();
            assert!(
                page.contains("Two-factor authentication needed")
                    && page.contains(&format!("href=\"{authn}/auth/account\"")),
                "{proxy:?}: {page}"
            );
            assert_eq!(reached(), before, "{proxy:?}");

            // Enrolled (by an operator); the one-factor session, even with a client's
            // own claim of two factors, is sent to sign in again and back.
            let (enrolment, _) = auth.enrol_totp_for_user(&user_id).await.unwrap();
            let secret = enrolment.secret.clone();
            let one_factor_cookie = {
                use reqwest::cookie::CookieStore;
                jar.cookies(&app1.parse().unwrap())
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned()
            };
            let callback =
                url::form_urlencoded::byte_serialize(admin.as_bytes()).collect::<String>();
            for forged in [None, Some("pwd,otp,mfa"), Some("mfa")] {
                let mut req = c.get(&admin);
                if let Some(amr) = forged {
                    req = req.header("X-Auth-Request-Amr", amr).header(
                        "X-Auth-Request-Auth-Time",
                        support::totp::unix_now().to_string(),
                    );
                }
                let r = req.send().await.unwrap();
                assert_eq!(r.status(), 302, "{proxy:?} {forged:?}");
                assert_eq!(
                    location(&r),
                    format!("{authn}/auth/signin?callbackUrl={callback}"),
                    "{proxy:?}"
                );
            }
            let r = c
                .get(&admin)
                .header("Accept", "application/json")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401, "{proxy:?}");
            assert_eq!(r.json::<Value>().await.unwrap()["error"], "StepUpRequired");
            assert_eq!(
                reached(),
                before,
                "{proxy:?}: the one-factor session got through"
            );

            // The password, then the code: back on the original URL, with two factors.
            let r = sign_in(&c, &authn, &admin).await;
            assert_eq!(
                location(&r),
                format!("{authn}/auth/two-factor"),
                "{proxy:?}"
            );
            let csrf = binary::csrf_token(&c, &authn).await;
            let code = support::totp::totp_code_at(&secret, support::totp::unix_now());
            let r = c
                .post(format!("{authn}/auth/two-factor"))
                .form(&[("csrfToken", csrf.as_str()), ("code", code.as_str())])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 302, "{proxy:?}: {:?}", r.text().await);
            assert_eq!(location(&r), admin, "{proxy:?}");
            let seen = echoed(c.get(&admin).header("X-Auth-Request-Amr", "forged")).await;
            assert_eq!(
                seen["x-auth-request-amr"], "pwd,otp,mfa",
                "{proxy:?}: {seen}"
            );
            let stepped_up: i64 = seen["x-auth-request-auth-time"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(stepped_up >= auth_time, "{seen}");
            let jwt = seen["x-auth-request-jwt"].as_str().unwrap();
            let claims: Value = serde_json::from_slice(
                &base64::Engine::decode(
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                    jwt.split('.').nth(1).unwrap(),
                )
                .unwrap(),
            )
            .unwrap();
            assert_eq!(claims["amr"], json!(["pwd", "otp", "mfa"]), "{claims}");
            assert_eq!(claims["auth_time"], stepped_up, "{claims}");

            // The session the step-up replaced is gone: its cookie opens nothing, anywhere.
            let before = reached();
            let a = raw(
                p,
                "GET / HTTP/1.1",
                &[
                    ("Host", &format!("app1.example.test:{p}")),
                    ("Accept", "text/html"),
                    ("Cookie", &one_factor_cookie),
                ],
            )
            .await;
            assert_eq!(a.status, 302, "{proxy:?}: {a:?}");
            assert_eq!(reached(), before, "{proxy:?}");
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_step_up() {
    step_up_walk(Proxy::Nginx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caddy_step_up() {
    step_up_walk(Proxy::Caddy).await;
}

/// The walk in headless Chromium (`testsupport/browser/gateway.mjs`), with credentials and
/// the real OpenID provider, whose redirect URI has the proxy's port.
async fn browser_walk(proxy: Proxy) {
    let port = free_port();
    let redirect = format!("http://auth.example.test:{port}/auth/callback/oidc");
    let idp = oidc_provider::OidcProvider::start_with_redirect_uris(&[&redirect]).await;
    behind(
        proxy,
        port,
        Setup::Jwt(Some(&idp.issuer)),
        |ports, _log, _| async move {
            let p = ports.proxy;
            let urls = json!({
                "auth": format!("http://auth.example.test:{p}"),
                "app1": format!("http://app1.example.test:{p}"),
                "app2": format!("http://app2.example.test:{p}"),
                "admin": format!("http://admin.example.test:{p}"),
            });
            let steps = support::browser::run(
                "gateway.mjs",
                &[&urls.to_string()],
                Duration::from_secs(120),
            )
            .await;
            let step =
                |name: &str| support::browser::step(&steps, name, &format!("{proxy:?}")).clone();
            let app1 = &urls["app1"].as_str().unwrap();
            let s = step("credentials");
            assert_eq!(s["url"], format!("{app1}/dashboard?tab=1"), "{proxy:?}");
            assert_eq!(s["seen"]["email"], "demo@example.com", "{proxy:?}");
            assert_eq!(
                step("second subdomain")["seen"]["email"],
                "demo@example.com"
            );
            let s = step("forbidden");
            assert_eq!(
                (s["status"].as_u64(), s["text"].as_str()),
                (Some(403), Some("Access denied"))
            );
            assert_eq!(
                s["signOut"],
                format!("{}/auth/signout", urls["auth"].as_str().unwrap())
            );
            let s = step("public");
            assert_eq!(s["status"], 200);
            assert_eq!(s["seen"]["email"], Value::Null);
            assert_eq!(step("signed out")["signInAgain"], json!([true, true]));
            let s = step("oidc");
            assert_eq!(s["url"], format!("{app1}/dashboard?tab=1"));
            assert_eq!(
                (s["seen"]["email"].as_str(), s["seen"]["provider"].as_str()),
                (Some("user-1@example.com"), Some("oidc")),
                "{proxy:?}"
            );
            assert_eq!(step("oidc not admin")["status"], 403);
            let s = step("oidc admin");
            assert_eq!(s["seen"]["email"], "admin-1@example.com");
            assert_eq!(s["seen"]["groups"], "admins");
            // A returning user has the same id (`oidc:<sub>`) at every sign-in.
            let first = step("oidc")["seen"]["user"].clone();
            assert!(
                first.as_str().is_some_and(|u| u.starts_with("oidc:")),
                "{first}"
            );
            assert_eq!(step("oidc again")["seen"]["user"], first, "{proxy:?}");
            assert_ne!(s["seen"]["user"], first);
        },
    )
    .await;
    drop(idp);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_in_chromium() {
    browser_walk(Proxy::Nginx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caddy_in_chromium() {
    browser_walk(Proxy::Caddy).await;
}

/// The answer to a raw request.
#[derive(Debug)]
struct RawAnswer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl RawAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `request_line` and `headers` byte for byte to the proxy (`Connection: close`) and
/// reads the whole answer.
async fn raw(port: u16, request_line: &str, headers: &[(&str, &str)]) -> RawAnswer {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = format!("{request_line}\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf))
        .await
        .expect("the proxy answers within 10 s")
        .unwrap();
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut slots);
    let httparse::Status::Complete(head) = parsed.parse(&buf).unwrap() else {
        panic!("incomplete answer: {}", String::from_utf8_lossy(&buf));
    };
    RawAnswer {
        status: parsed.code.unwrap(),
        headers: parsed
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&buf[head..]).into_owned(),
    }
}

/// The demo user's session cookie (`Cookie` header value), signed in through the proxy.
async fn session_cookie(p: u16) -> String {
    let jar = Arc::new(reqwest::cookie::Jar::default());
    let c = client_with(p, Arc::clone(&jar));
    let auth = format!("http://auth.example.test:{p}");
    let r = sign_in(&c, &auth, &format!("http://app1.example.test:{p}/")).await;
    assert_eq!(r.status(), 302);
    use reqwest::cookie::CookieStore;
    let url = format!("http://app1.example.test:{p}/").parse().unwrap();
    let cookies = jar.cookies(&url).unwrap();
    let cookies = cookies.to_str().unwrap().to_owned();
    assert!(cookies.contains("authjs.session-token="), "{cookies}");
    cookies
}

/// What the application may get under a header authcore sets or reads.
#[derive(Clone, Copy, Debug)]
enum Own {
    /// authcore's value for the demo user on app1 (empty: none), and nothing without a
    /// session.
    Demo(&'static str),
    /// The signed identity JWT for the demo user, and nothing without a session.
    Jwt,
    /// The session's sign-in time (seconds since the epoch, within the last hour), and
    /// nothing without a session.
    SignInTime,
    /// Nothing.
    Nothing,
    /// The proxy's own or none (Caddy sets it; nginx passes a client's all-`-` one on, which
    /// is why only the spellings with `_` are sent).
    Proxy,
}

/// The headers authcore sets (identity) or reads (original request), and what the
/// application may get under any spelling of each.
const SPELLED: [(&str, Own); 16] = [
    ("X-Auth-Request-User", Own::Demo("credentials:1")),
    ("X-Auth-Request-Email", Own::Demo("demo@example.com")),
    ("X-Auth-Request-Name", Own::Demo("Demo User")),
    ("X-Auth-Request-Groups", Own::Demo("")),
    ("X-Auth-Request-Organizations", Own::Demo("")),
    ("X-Auth-Request-Provider", Own::Demo("credentials")),
    ("X-Auth-Request-Amr", Own::Demo("pwd")),
    ("X-Auth-Request-Auth-Time", Own::SignInTime),
    ("X-Auth-Request-Impersonator", Own::Demo("")),
    ("X-Auth-Request-Jwt", Own::Jwt),
    ("X-Original-URL", Own::Nothing),
    ("X-Original-Method", Own::Nothing),
    ("X-Forwarded-Uri", Own::Nothing),
    ("X-Forwarded-Method", Own::Nothing),
    ("X-Forwarded-Host", Own::Proxy),
    ("X-Forwarded-Proto", Own::Proxy),
];

/// Every spelling of `name` that a CGI, WSGI, Rack or PHP application reads as `name`: each
/// `-` as `-` or `_`, each mix as written, in lower case and in upper case.
fn spellings(name: &str) -> Vec<String> {
    let separators = name.matches('-').count();
    (0..1u32 << separators)
        .flat_map(|mix| {
            // Separator n is `_` where bit n of `mix` is set.
            let mut bit = 1;
            let spelled: String = name
                .chars()
                .map(|c| match c {
                    '-' => {
                        let underscore = mix & bit != 0;
                        bit <<= 1;
                        if underscore { '_' } else { '-' }
                    }
                    c => c,
                })
                .collect();
            [spelled.to_lowercase(), spelled.to_uppercase(), spelled]
        })
        .collect()
}

/// A header name as such an application reads it.
fn as_cgi_reads(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// The attacks of docs/gateway.md's "What the gateway trusts", as raw requests through the
/// proxy: each is answered without the application being reached (or, where it is allowed
/// through, with nothing the client made up).
async fn attacks(proxy: Proxy, ports: Ports, log: &Log) {
    let p = ports.proxy;
    let app1 = format!("app1.example.test:{p}");
    let admin = format!("admin.example.test:{p}");
    let page = ("Accept", "text/html,application/xhtml+xml");
    let reached = || log.lock().unwrap().len();
    // Sends the request and checks the application was not reached; the answer comes back.
    let not_reached = |what: String, line: String, headers: Vec<(&'static str, String)>| async move {
        let before = reached();
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer = raw(p, &line, &pairs).await;
        let got: Vec<String> = log.lock().unwrap()[before..]
            .iter()
            .map(|r| r.target.clone())
            .collect();
        assert!(
            got.is_empty(),
            "{proxy:?}, {what}: the application got {got:?} ({answer:?})"
        );
        assert!(
            !(200..300).contains(&answer.status),
            "{proxy:?}, {what}: {answer:?}"
        );
        answer
    };
    let host = |h: &str| ("Host", h.to_owned());
    let accept = || (page.0, page.1.to_owned());

    // 1. A client's header naming a public URL does not make a protected one public, in any
    //    spelling, alone or repeated, in either proxy's convention.
    let public_url = format!("http://{app1}/public/x");
    let steering: Vec<Vec<(&'static str, String)>> = vec![
        vec![("X-Original-URL", public_url.clone())],
        vec![("x-original-url", public_url.clone())],
        vec![("X-ORIGINAL-URL", public_url.clone())],
        vec![("X_Original_URL", public_url.clone())],
        vec![
            ("X-Original-URL", public_url.clone()),
            ("X-Original-URL", public_url.clone()),
        ],
        vec![
            ("X-Forwarded-Uri", "/public/x".into()),
            ("X-Forwarded-Host", app1.clone()),
            ("X-Forwarded-Proto", "http".into()),
            ("X-Forwarded-Method", "GET".into()),
        ],
        vec![
            ("X-Forwarded-Uri", "/public/x".into()),
            ("X-Forwarded-Uri", "/public/y".into()),
        ],
        vec![("X_Forwarded_Uri", "/public/x".into())],
        vec![("Forwarded", format!("host={app1};proto=http"))],
        vec![("X-Rewrite-URL", "/public/x".into())],
    ];
    for extra in &steering {
        let mut headers = vec![host(&app1), accept()];
        headers.extend(extra.iter().cloned());
        let a = not_reached(
            format!("steering {extra:?}"),
            "GET /secret HTTP/1.1".into(),
            headers,
        )
        .await;
        assert_eq!(a.status, 302, "{proxy:?} {extra:?}");
        assert!(
            a.header("location")
                .unwrap()
                .contains("/auth/signin?callbackUrl=")
        );
    }

    // Signed in as demo, who may not use admin.example.test.
    let cookie = session_cookie(p).await;
    for extra in &steering {
        let mut headers = vec![host(&admin), accept(), ("Cookie", cookie.clone())];
        // The header names app1, which demo may use.
        headers.extend(extra.iter().cloned());
        let a = not_reached(
            format!("admin, steering {extra:?}"),
            "GET / HTTP/1.1".into(),
            headers,
        )
        .await;
        assert_eq!(a.status, 403, "{proxy:?} {extra:?}");
    }
    // Host confusion: the request line names admin, Host names app1; X-Forwarded-Host too.
    let a = not_reached(
        "absolute-form request line".into(),
        format!("GET http://{admin}/ HTTP/1.1"),
        vec![host(&app1), accept(), ("Cookie", cookie.clone())],
    )
    .await;
    assert!(matches!(a.status, 400 | 403), "{proxy:?}: {a:?}");
    let a = not_reached(
        "X-Forwarded-Host".into(),
        "GET / HTTP/1.1".into(),
        vec![
            host(&admin),
            accept(),
            ("Cookie", cookie.clone()),
            ("X-Forwarded-Host", app1.clone()),
        ],
    )
    .await;
    assert_eq!(a.status, 403, "{proxy:?}");

    // 2. Each header authcore sets or reads, in every spelling at once, on an allowed
    //    request and on a public one without a session: the application gets none of the
    //    client's values under any spelling, only authcore's (or the proxy's) own, once.
    let cookie_header = ("Cookie", cookie.clone());
    let situations = [
        ("signed in", "/dashboard", Some(&cookie_header)),
        ("public", "/public/app.css", None),
    ];
    for (situation, path, session) in situations {
        for (name, own) in SPELLED {
            let sent: Vec<(String, String)> = spellings(name)
                .into_iter()
                .filter(|spelled| !matches!(own, Own::Proxy) || spelled.contains('_'))
                .enumerate()
                .map(|(i, spelled)| (spelled, format!("forged-{i}")))
                .collect();
            let mut headers: Vec<(&str, &str)> = vec![("Host", &app1), page];
            headers.extend(session.map(|(k, v)| (*k, v.as_str())));
            headers.extend(sent.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let before = reached();
            let a = raw(p, &format!("GET {path} HTTP/1.1"), &headers).await;
            assert_eq!(a.status, 200, "{proxy:?} {situation} {name}: {a:?}");
            let received = log.lock().unwrap()[before].clone();
            let values: Vec<&(String, String)> = received
                .headers
                .iter()
                .filter(|(k, _)| as_cgi_reads(k) == as_cgi_reads(name))
                .collect();
            let forged: Vec<_> = values
                .iter()
                .filter(|(_, v)| v.contains("forged-"))
                .collect();
            assert!(
                forged.is_empty(),
                "{proxy:?} {situation}: the client's {name} reached the application: {forged:?}"
            );
            assert!(
                values.len() <= 1,
                "{proxy:?} {situation} {name}: {values:?}"
            );
            let value = values.first().map_or("", |(_, v)| v.as_str());
            match (own, session.is_some()) {
                (Own::Demo(want), true) => assert_eq!(value, want, "{proxy:?} {name}"),
                (Own::Jwt, true) => assert_eq!(value.split('.').count(), 3, "{proxy:?}: {value}"),
                (Own::SignInTime, true) => {
                    let now = time::OffsetDateTime::now_utc().unix_timestamp();
                    let at: i64 = value.parse().unwrap_or(0);
                    assert!(now - at < 3600 && at <= now + 60, "{proxy:?}: {value}");
                }
                (Own::Demo(_) | Own::Jwt | Own::SignInTime, false) | (Own::Nothing, _) => {
                    // nginx drops a header set to an empty value, Caddy passes it on empty.
                    assert_eq!(value, "", "{proxy:?} {situation} {name}");
                }
                (Own::Proxy, _) => {}
            }
        }
    }
    // authcore's own request headers, sent by the client, do not reach the application.
    for extra in &steering {
        let before = reached();
        let mut headers: Vec<(&str, &str)> = vec![("Host", &app1), page, ("Cookie", &cookie)];
        headers.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(
            raw(p, "GET /dashboard HTTP/1.1", &headers).await.status,
            200
        );
        let received = log.lock().unwrap()[before].clone();
        let leaked: Vec<_> = received
            .headers
            .iter()
            .filter(|(k, _)| {
                let k = k.replace('_', "-");
                k == "x-original-url" || k == "x-forwarded-uri" || k == "x-forwarded-method"
            })
            .collect();
        assert!(leaked.is_empty(), "{proxy:?} {extra:?}: {leaked:?}");
    }

    // 3. Path confusion: encoded dot segments and friends do not escape the public rule.
    for target in [
        "/public/..%2fsecret",
        "/public/..%2Fsecret",
        "/public/%2E%2E%2Fsecret",
        "/public/%2e%2e/secret",
        "/public/.%2e/secret",
        "/public//../secret",
        "/public/../secret",
        "/public/..;/secret",
        "/public/%252e%252e/secret",
        "/public/%252E%252E%252Fsecret",
        "/public/..%5csecret",
        "/public\\..\\secret",
        "/public/%00/../secret",
        "/public/..%c0%afsecret",
    ] {
        let a = not_reached(
            format!("path {target}"),
            format!("GET {target} HTTP/1.1"),
            vec![host(&app1), accept()],
        )
        .await;
        assert!((400..500).contains(&a.status), "{proxy:?} {target}: {a:?}");
    }

    // 4. Method overrides from the client change nothing.
    let a = not_reached(
        "method override".into(),
        "POST /secret HTTP/1.1".into(),
        vec![
            host(&app1),
            accept(),
            ("Content-Length", "0".into()),
            ("X-HTTP-Method-Override", "GET".into()),
            ("X-HTTP-Method", "GET".into()),
            ("X-Original-Method", "GET".into()),
            ("X-Forwarded-Method", "GET".into()),
        ],
    )
    .await;
    assert_eq!(a.status, 302, "{proxy:?}");

    // 5. A 16 KiB URL (a Grafana Explore link): the redirect to sign in, and the sign-in page.
    let long = format!(
        "/explore?left={}",
        "%7B%22datasource%22%3A%22x%22%7D".repeat(520)
    );
    assert!(long.len() > 16_000);
    let a = not_reached(
        "long URL".into(),
        format!("GET {long} HTTP/1.1"),
        vec![host(&app1), accept()],
    )
    .await;
    assert_eq!(a.status, 302, "{proxy:?}: {}", a.body);
    let location = a.header("location").unwrap().to_owned();
    let sign_in_target = location
        .strip_prefix(&format!("http://auth.example.test:{p}"))
        .unwrap_or_else(|| panic!("{location}"));
    let a = raw(
        p,
        &format!("GET {sign_in_target} HTTP/1.1"),
        &[("Host", &format!("auth.example.test:{p}")), page],
    )
    .await;
    assert_eq!(
        a.status, 200,
        "{proxy:?}: the sign-in page for a long URL: {}",
        a.body
    );

    // 6. An oversize Cookie header: a 4xx (authcore's 431, or nginx's own 400), never a 500.
    let big = format!("filler={}", "x".repeat(70 * 1024));
    let a = not_reached(
        "oversize cookie".into(),
        "GET /secret HTTP/1.1".into(),
        vec![host(&app1), accept(), ("Cookie", big)],
    )
    .await;
    assert!(matches!(a.status, 400 | 431), "{proxy:?}: {a:?}");

    // 7. API calls get 401 with the sign-in URL, not a redirect they cannot follow.
    for extra in [
        vec![("Accept", "application/json".to_owned())],
        vec![
            ("Accept", "*/*".to_owned()),
            ("Sec-Fetch-Mode", "cors".to_owned()),
        ],
        vec![accept(), ("X-Requested-With", "XMLHttpRequest".to_owned())],
    ] {
        let mut headers = vec![host(&app1)];
        headers.extend(extra.clone());
        let a = not_reached(
            format!("API {extra:?}"),
            "GET /api/data HTTP/1.1".into(),
            headers,
        )
        .await;
        assert_eq!(a.status, 401, "{proxy:?} {extra:?}: {a:?}");
        assert!(
            a.body.contains("\"error\":\"SessionRequired\"")
                && a.body.contains(&format!(
                    "http://auth.example.test:{p}/auth/signin?callbackUrl="
                )),
            "{proxy:?}: {}",
            a.body
        );
    }
}
