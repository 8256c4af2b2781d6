//! authcore-server as a single sign-on server: built in this process from a configuration
//! file (an SQLite database, the gateway, the OpenID Provider with one app), served on a
//! loopback port, and driven over HTTP as a browser, a proxy asking the gateway and an app
//! of the OpenID Provider would.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

/// The OpenID Provider's app: its id, secret and redirect URI (nothing listens there: the
/// code is read from the redirect).
pub const APP: &str = "app";
pub const APP_SECRET: &str = "app-secret-0123456789abcdef0123456789";
pub const APP_CALLBACK: &str = "http://127.0.0.1:9/callback";
/// RFC 7636 appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// The session cookie over plain HTTP.
const SESSION_COOKIE: &str = "authjs.session-token";

/// A running server; stopped, and its directory removed, when dropped.
pub struct SsoServer {
    /// `http://localhost:<port>`.
    pub base: String,
    dir: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SsoServer {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the test adds to the configuration: keys of `[auth]`, and more sections
/// (`[passwords]`, `[ldap]`, `[[gateway.rules]]` …).
#[derive(Default, Clone, Copy)]
pub struct Sections<'a> {
    pub auth: &'a str,
    pub more: &'a str,
}

impl SsoServer {
    /// [`SsoServer::try_start`], which must succeed.
    pub async fn start(sections: Sections<'_>, vars: &[(&str, &str)]) -> SsoServer {
        Self::try_start(sections, vars).await.unwrap()
    }

    /// The server of the configuration with `sections`, and `vars` as its environment; the
    /// configuration's error when it is refused.
    pub async fn try_start(
        sections: Sections<'_>,
        vars: &[(&str, &str)],
    ) -> Result<SsoServer, authcore_server::ServerConfigError> {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "authcore-sso-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("oidc.pem");
        let made = std::process::Command::new("openssl")
            .args(["genpkey", "-algorithm", "ed25519", "-out"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success(), "openssl genpkey");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
        let text = format!(
            r#"
[server]
database_url = "sqlite://{db}?mode=rwc"

[auth]
secret = "a single sign-on test secret, long enough"
url = "{base}/auth"
{auth}

[gateway]
default = "signed_in"

[oidc_provider]
signing_keys = ["{key}"]

[[oidc_provider.clients]]
id = "{APP}"
secret = "{APP_SECRET}"
redirect_uris = ["{APP_CALLBACK}"]

{more}
"#,
            db = dir.join("sso.db").display(),
            key = key.display(),
            auth = sections.auth,
            more = sections.more,
        );
        let path = dir.join("authcore.toml");
        std::fs::write(&path, text).unwrap();
        let config = match authcore_server::ServerConfig::from_file(
            &path,
            authcore::env::Env::from_pairs(vars.iter().copied()),
        ) {
            Ok(config) => config,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let app = config.build().await.unwrap().router();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(SsoServer { base, dir, task })
    }

    /// A new browser (no cookies yet).
    pub fn browser(&self) -> Browser {
        Browser {
            client: super::binary::browser(),
            base: self.base.clone(),
        }
    }

    /// The user of `access` at the OpenID Provider's userinfo endpoint.
    pub async fn userinfo(&self, access: &str) -> Value {
        ok_json(
            reqwest::Client::new()
                .get(format!("{}/oidc/userinfo", self.base))
                .bearer_auth(access),
        )
        .await
    }
}

/// A browser at the server: cookies kept, redirects not followed.
pub struct Browser {
    pub client: reqwest::Client,
    base: String,
}

impl Browser {
    /// `GET <base><path>`, or the absolute `path` (a mailed link).
    pub async fn get(&self, path: &str) -> reqwest::Response {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        };
        self.client.get(url).send().await.unwrap()
    }

    /// A form post to `<base><path>` with `fields` and the CSRF token.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let token = super::binary::csrf_token(&self.client, &self.base).await;
        let mut form = vec![("csrfToken", token.as_str())];
        form.extend_from_slice(fields);
        self.client
            .post(format!("{}{path}", self.base))
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// Signs in at `/auth/callback/<provider>`: whether a session began.
    pub async fn sign_in(&self, provider: &str, username: &str, password: &str) -> bool {
        let r = self
            .post_form(
                &format!("/auth/callback/{provider}"),
                &[("username", username), ("password", password)],
            )
            .await;
        r.headers().get_all("set-cookie").iter().any(|c| {
            let c = c.to_str().unwrap();
            c.starts_with(&format!("{SESSION_COOKIE}=")) && !c.contains("Max-Age=0")
        })
    }

    /// The session's JSON (`null` without one).
    pub async fn session(&self) -> Value {
        super::binary::get_json(&self.client, &format!("{}/auth/session", self.base)).await
    }

    /// The gateway's decision on this browser's request for `url`, as nginx's
    /// `auth_request` asks it: the status and the identity headers.
    pub async fn through_gateway(&self, url: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{}", self.base, authcore_gateway::NGINX_PATH))
            .header("x-original-url", url)
            .header("x-original-method", "GET")
            .send()
            .await
            .unwrap()
    }

    /// The app's authorization request for `scope` (PKCE S256), answered with a code for
    /// this browser's user, exchanged for the tokens.
    pub async fn app_tokens(&self, scope: &str) -> Value {
        let mut url = url::Url::parse(&format!("{}/oidc/authorize", self.base)).unwrap();
        url.query_pairs_mut().extend_pairs([
            ("client_id", APP),
            ("redirect_uri", APP_CALLBACK),
            ("response_type", "code"),
            ("scope", scope),
            ("state", "st"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ]);
        let r = self.client.get(url).send().await.unwrap();
        assert_eq!(r.status(), 302);
        let to = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        assert!(to.as_str().starts_with(APP_CALLBACK), "{to}");
        let code = to
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("no code: {to}"));
        ok_json(
            reqwest::Client::new()
                .post(format!("{}/oidc/token", self.base))
                .basic_auth(APP, Some(APP_SECRET))
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("redirect_uri", APP_CALLBACK),
                    ("code_verifier", VERIFIER),
                ]),
        )
        .await
    }
}

/// The JSON of an answer that must be `200 OK` (a request of an app to the server).
async fn ok_json(request: reqwest::RequestBuilder) -> Value {
    let r = request
        .timeout(Duration::from_secs(15))
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

/// The claims of a JWS (an ID token the server just issued), unverified.
pub fn claims(jws: &str) -> Value {
    let part = jws.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The link to `<base><path>` (with its query, if any) in the text of a mail the SMTP
/// server received.
pub fn link_in(message: &Value, path: &str) -> String {
    let text = message["text"].as_str().unwrap();
    text.split_whitespace()
        .find(|w| w.starts_with("http") && w.split('?').next().is_some_and(|p| p.ends_with(path)))
        .unwrap_or_else(|| panic!("no link to {path} in {message}"))
        .to_owned()
}

/// A header of a response, as text.
pub fn header<'a>(r: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}
