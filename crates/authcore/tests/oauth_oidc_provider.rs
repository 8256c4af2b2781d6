//! OAuth 2 / OIDC sign-in, end to end against a real OpenID provider (the npm package
//! `oidc-provider`, started on loopback per test by `support/oidc_provider.rs`).
#![allow(clippy::unwrap_used)]

use crate::oauth_flow::*;
use crate::oidc_provider::{Callback, OidcProvider};
use authcore::providers::{Checks, ClientAuthMethod, OAuthProvider};
use authcore::{Auth, AuthConfig};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::Value;

const SECRET: &str = "oauth-e2e-secret-xxxxxxxxxxxxxxx";

fn auth_for(provider: OAuthProvider) -> Auth {
    auth_logged(provider, ErrorLog::default())
}

/// Error messages with their cause chains, to check why a sign-in was refused.
#[derive(Clone, Default)]
struct ErrorLog(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl authcore::logger::Logger for ErrorLog {
    fn error(&self, e: &authcore::AuthError) {
        let mut line = format!("{}: {e}", e.error_type());
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            line.push_str(&format!(" <- {s}"));
            src = s.source();
        }
        self.0.lock().unwrap().push(line);
    }
}

impl ErrorLog {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn auth_logged(provider: OAuthProvider, log: ErrorLog) -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(provider)
            .logger(log)
            .build()
            .unwrap(),
    )
}

fn oidc(op: &OidcProvider, client: &str, secret: &str) -> OAuthProvider {
    OAuthProvider::oidc("oidc", "Test OIDC")
        .issuer(op.issuer.clone())
        .client_id(client)
        .client_secret(secret)
}

#[tokio::test]
async fn default_pkce_with_client_secret_basic() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic"));
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    assert!(url.starts_with(&op.issuer), "{url}");
    assert!(url.contains("code_challenge_method=S256") && !url.contains("nonce="));
    let cb = op
        .authorize(&url, &format!("{APP}/auth/callback/oidc"))
        .await;
    let r = deliver(&auth, &cb, &mut jar).await;
    assert_signed_in(&r, &jar);
    let s = session(&auth, &jar).await;
    assert_eq!(s["user"]["name"], "Test User");
    assert_eq!(s["user"]["email"], "user-1@example.com");
    let last = op.last_token_request().await;
    let text = last.to_string();
    assert!(text.contains("Basic "), "{text}");
    assert!(text.contains("code_verifier"), "{text}");
}

#[tokio::test]
async fn pkce_state_and_nonce() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic").checks(Checks {
        pkce: true,
        state: true,
        nonce: true,
    }));
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    assert!(url.contains("state=") && url.contains("nonce="));
    for c in ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"] {
        assert!(jar.0.contains_key(c), "{c}");
    }
    let cb = op
        .authorize(&url, &format!("{APP}/auth/callback/oidc"))
        .await;
    let r = deliver(&auth, &cb, &mut jar).await;
    assert_signed_in(&r, &jar);
}

#[tokio::test]
async fn form_post_response_mode() {
    let op = OidcProvider::start().await;
    let provider = oidc(&op, "client-formpost", "secret-formpost")
        .with_id("formpost")
        .authorization_param("response_mode", "form_post")
        .checks(Checks {
            pkce: true,
            state: true,
            nonce: true,
        });
    let auth = auth_for(provider);
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "formpost", &mut jar).await;
    assert_signed_in(&r, &jar);
}

#[tokio::test]
async fn userinfo_instead_of_id_token() {
    let op = OidcProvider::start().await;
    let auth = auth_for(
        oidc(&op, "client-basic", "secret-basic")
            .id_token(false)
            .well_known(format!("{}/.well-known/openid-configuration", op.issuer)),
    );
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_signed_in(&r, &jar);
    assert_eq!(session(&auth, &jar).await["user"]["name"], "Test User");
}

#[tokio::test]
async fn client_secret_post_jwt_and_public_client() {
    let op = OidcProvider::start().await;
    let auth = auth_for(
        oidc(&op, "client-post", "secret-post").client_auth(ClientAuthMethod::ClientSecretPost),
    );
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
    let text = op.last_token_request().await.to_string();
    assert!(
        text.contains("secret-post") && !text.contains("Basic "),
        "{text}"
    );

    let auth = auth_for(
        oidc(
            &op,
            "client-secret-jwt",
            "secret-jwt-0123456789abcdef0123456789abcdef",
        )
        .client_auth(ClientAuthMethod::ClientSecretJwt),
    );
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
    let text = op.last_token_request().await.to_string();
    assert!(
        text.contains("client_assertion") && !text.contains("secret-jwt-"),
        "{text}"
    );

    let auth = auth_for(
        OAuthProvider::oidc("oidc", "Public")
            .issuer(op.issuer.clone())
            .client_id("client-public")
            .client_auth(ClientAuthMethod::None),
    );
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
}

#[tokio::test]
async fn oauth_only_provider_shape() {
    let op = OidcProvider::start().await;
    // A plain OAuth provider gets no default scope (only OIDC ones do, as in Auth.js).
    let provider = OAuthProvider::oauth("oauth", "Plain OAuth")
        .authorization_url(format!("{}/auth", op.issuer))
        .authorization_param("scope", "openid email")
        .token_url(format!("{}/token", op.issuer))
        .userinfo_url(format!("{}/me", op.issuer))
        .client_id("client-basic")
        .client_secret("secret-basic")
        .checks(Checks {
            pkce: true,
            state: true,
            nonce: false,
        });
    let auth = auth_for(provider);
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oauth", &mut jar).await;
    assert_signed_in(&r, &jar);
    assert_eq!(
        session(&auth, &jar).await["user"]["email"],
        "user-1@example.com"
    );
}

fn with_param(url: &str, name: &str, value: Option<&str>) -> String {
    let mut u = url::Url::parse(url).unwrap();
    let pairs: Vec<(String, String)> = u
        .query_pairs()
        .into_owned()
        .filter(|(n, _)| n != name)
        .collect();
    let mut q = u.query_pairs_mut();
    q.clear().extend_pairs(&pairs);
    if let Some(v) = value {
        q.append_pair(name, v);
    }
    drop(q);
    u.to_string()
}

fn query_callback(cb: Callback) -> String {
    match cb {
        Callback::Query(u) => u,
        Callback::FormPost { .. } => panic!("expected a query callback"),
    }
}

#[tokio::test]
async fn state_attacks() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic").checks(Checks {
        pkce: true,
        state: true,
        nonce: true,
    }));
    let prefix = format!("{APP}/auth/callback/oidc");
    // Missing and mismatched state.
    for value in [None, Some("forged")] {
        let mut jar = Jar::default();
        let url = start(&auth, "oidc", &mut jar).await;
        let cb = query_callback(op.authorize(&url, &prefix).await);
        let r = deliver(
            &auth,
            &Callback::Query(with_param(&cb, "state", value)),
            &mut jar,
        )
        .await;
        assert_refused(&r, &jar, "Configuration");
    }
    // State from another attempt: the callback of attempt A with the cookies of attempt B.
    let mut jar_a = Jar::default();
    let url_a = start(&auth, "oidc", &mut jar_a).await;
    let cb_a = op.authorize(&url_a, &prefix).await;
    let mut jar_b = Jar::default();
    let _ = start(&auth, "oidc", &mut jar_b).await;
    let r = deliver(&auth, &cb_a, &mut jar_b).await;
    assert_refused(&r, &jar_b, "Configuration");
}

#[tokio::test]
async fn pkce_and_nonce_cookie_attacks() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic").checks(Checks {
        pkce: true,
        state: false,
        nonce: true,
    }));
    let prefix = format!("{APP}/auth/callback/oidc");
    for cookie in ["authjs.pkce.code_verifier", "authjs.nonce"] {
        // Missing cookie.
        let mut jar = Jar::default();
        let url = start(&auth, "oidc", &mut jar).await;
        let cb = op.authorize(&url, &prefix).await;
        jar.0.remove(cookie);
        assert_refused(&deliver(&auth, &cb, &mut jar).await, &jar, "Configuration");
        // Tampered cookie.
        let mut jar = Jar::default();
        let url = start(&auth, "oidc", &mut jar).await;
        let cb = op.authorize(&url, &prefix).await;
        let v = jar.0.get_mut(cookie).unwrap();
        v.replace_range(40..41, if &v[40..41] == "A" { "B" } else { "A" });
        assert_refused(&deliver(&auth, &cb, &mut jar).await, &jar, "Configuration");
    }
    // Verifier (and nonce) of another attempt: the provider refuses the code.
    let mut jar_a = Jar::default();
    let url_a = start(&auth, "oidc", &mut jar_a).await;
    let cb_a = op.authorize(&url_a, &prefix).await;
    let mut jar_b = Jar::default();
    let _ = start(&auth, "oidc", &mut jar_b).await;
    let r = deliver(&auth, &cb_a, &mut jar_b).await;
    assert!(r.location.as_deref().unwrap().contains("error="), "{r:?}");
    assert!(!jar_b.0.contains_key("authjs.session-token"));
}

#[tokio::test]
async fn code_replay_iss_mismatch_and_provider_error() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic"));
    let prefix = format!("{APP}/auth/callback/oidc");
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    let cb = op.authorize(&url, &prefix).await;
    let saved = jar.clone();
    assert_signed_in(&deliver(&auth, &cb, &mut jar).await, &jar);
    // Replaying the same code with the same cookies is refused by the provider.
    let mut replay = saved;
    let r = deliver(&auth, &cb, &mut replay).await;
    assert!(r.location.as_deref().unwrap().contains("error="), "{r:?}");
    assert!(!replay.0.contains_key("authjs.session-token"));

    // `iss` that is not the provider's.
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    let cb = query_callback(op.authorize(&url, &prefix).await);
    let forged = with_param(&cb, "iss", Some("https://evil.example"));
    assert_refused(
        &deliver(&auth, &Callback::Query(forged), &mut jar).await,
        &jar,
        "Configuration",
    );

    // The provider reports an error: shown on the sign-in page.
    let mut jar = Jar::default();
    let _ = start(&auth, "oidc", &mut jar).await;
    let r = deliver(
        &auth,
        &Callback::Query(format!("{prefix}?error=access_denied&iss={}", op.issuer)),
        &mut jar,
    )
    .await;
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/auth/signin?error=OAuthCallbackError")
    );
}

/// Counts the token requests (POSTs to the token endpoint) it forwards.
#[derive(Clone, Default)]
struct CountingClient(std::sync::Arc<std::sync::atomic::AtomicUsize>);

#[authcore::async_trait]
impl authcore::http_client::HttpClient for CountingClient {
    async fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, authcore::BoxError> {
        if request.method() == http::Method::POST && request.uri().path().ends_with("/token") {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        authcore::http_client::ReqwestClient::shared()
            .send(request)
            .await
    }
}

/// A callback delivered 20 times at once with the same cookies (a replay race, on two
/// handlers sharing one store as two instances would) exchanges the code once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_callback_replays_exchange_the_code_once() {
    let op = OidcProvider::start().await;
    let counter = CountingClient::default();
    let store = authcore::ratelimit::MemoryRateLimitStore::default();
    let instance = || {
        Auth::new(
            AuthConfig::builder()
                .secret(SECRET)
                .trust_host(true)
                .provider(oidc(&op, "client-basic", "secret-basic").http_client(counter.clone()))
                .rate_limit_store(store.clone())
                .build()
                .unwrap(),
        )
    };
    let (a, b) = (instance(), instance());
    let prefix = format!("{APP}/auth/callback/oidc");
    let mut jar = Jar::default();
    let url = start(&a, "oidc", &mut jar).await;
    let cb = op.authorize(&url, &prefix).await;
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (auth, cb, mut jar) = (
                if i % 2 == 0 { a.clone() } else { b.clone() },
                cb.clone(),
                jar.clone(),
            );
            tokio::spawn(async move {
                let _ = deliver(&auth, &cb, &mut jar).await;
                jar.0.contains_key("authjs.session-token")
            })
        })
        .collect();
    let mut signed_in = 0;
    for t in tasks {
        signed_in += usize::from(t.await.unwrap());
    }
    assert_eq!(signed_in, 1, "exactly one replay signs in");
    assert_eq!(
        counter.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one token request"
    );
}

#[tokio::test]
async fn check_cookie_from_another_provider_is_refused() {
    let op = OidcProvider::start_with_redirect_uris(&[
        "http://localhost:3000/auth/callback/oidc",
        "http://localhost:3000/auth/callback/other",
    ])
    .await;
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(oidc(&op, "client-basic", "secret-basic"))
            .provider(oidc(&op, "client-basic", "secret-basic").with_id("other"))
            .build()
            .unwrap(),
    );
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    let cb = query_callback(
        op.authorize(&url, &format!("{APP}/auth/callback/oidc"))
            .await,
    );
    let other = cb.replace("/auth/callback/oidc", "/auth/callback/other");
    let r = deliver(&auth, &Callback::Query(other), &mut jar).await;
    assert_refused(&r, &jar, "Configuration");
}

#[tokio::test]
async fn forged_id_tokens_are_refused() {
    let op = OidcProvider::start().await;
    let log = ErrorLog::default();
    let auth = auth_logged(
        oidc(&op, "client-basic", "secret-basic").checks(Checks {
            pkce: true,
            state: true,
            nonce: true,
        }),
        log.clone(),
    );
    for (mode, reason) in [
        ("wrong-key", "signature"),
        ("alg-none", "none"),
        ("wrong-aud", "aud"),
        ("expired", "xpired"),
        ("wrong-nonce", "nonce"),
        ("no-nonce", "nonce"),
        ("wrong-iss", "ssuer"),
    ] {
        op.set_mode(mode).await;
        let mut jar = Jar::default();
        let r = sign_in(&auth, &op, "oidc", &mut jar).await;
        assert_refused(&r, &jar, "Configuration");
        let errors = log.take();
        assert!(
            errors.iter().any(|e| e.contains("ID token rejected")
                && e.to_lowercase().contains(&reason.to_lowercase())),
            "{mode}: {errors:?}"
        );
    }
    op.set_mode("normal").await;
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
}

#[tokio::test]
async fn misbehaving_token_endpoints() {
    let op = OidcProvider::start().await;
    let auth = auth_for(oidc(&op, "client-basic", "secret-basic"));
    op.set_mode("token-error").await;
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_refused(&r, &jar, "OAuthCallbackError");
    op.set_mode("token-500").await;
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_refused(&r, &jar, "Configuration");
}

/// A profile the provider's mapping refuses: logged as `OAuthProfileParseError`, no session.
#[tokio::test]
async fn a_profile_the_mapping_refuses_signs_nobody_in() {
    let op = OidcProvider::start().await;
    let log = ErrorLog::default();
    let auth = auth_logged(
        oidc(&op, "client-basic", "secret-basic").profile(|_, _| Err("no usable id".into())),
        log.clone(),
    );
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    // Back to the sign-in page without an error code (as Auth.js), and no session.
    assert_eq!(r.status, 302);
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/auth/signin")
    );
    assert!(!jar.0.contains_key("authjs.session-token"), "{jar:?}");
    let lines = log.take();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("OAuthProfileParseError") && l.contains("no usable id")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn unreachable_provider_is_a_configuration_error() {
    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let auth = auth_for(
        OAuthProvider::oidc("oidc", "Down")
            .issuer(format!("http://127.0.0.1:{port}"))
            .client_id("c")
            .client_secret("s"),
    );
    let mut jar = Jar::default();
    // The provider cannot be used: the sign-in ends on the error page.
    let location = start(&auth, "oidc", &mut jar).await;
    assert_eq!(
        location,
        "http://localhost:3000/auth/error?error=Configuration"
    );
}

#[derive(Clone, Default)]
struct JwtSpy(std::sync::Arc<std::sync::Mutex<Vec<Value>>>);

#[authcore::async_trait]
impl authcore::callbacks::Callbacks for JwtSpy {
    async fn jwt(
        &self,
        p: authcore::callbacks::JwtParams<'_>,
    ) -> Result<Option<authcore::jwt::JwtClaims>, authcore::BoxError> {
        if p.user.is_some() {
            self.0.lock().unwrap().push(serde_json::json!({
                "user": p.user, "account": p.account, "profile": p.profile,
                "trigger": format!("{:?}", p.trigger),
            }));
        }
        Ok(Some(p.token))
    }
}

#[tokio::test]
async fn jwt_callback_gets_user_account_profile_and_account_hook_applies() {
    let op = OidcProvider::start().await;
    let spy = JwtSpy::default();
    let provider = oidc(&op, "client-basic", "secret-basic").account(|t| authcore::TokenSet {
        access_token: t.access_token.clone(),
        token_type: t.token_type.clone(),
        ..Default::default()
    });
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(provider)
            .callbacks(spy.clone())
            .build()
            .unwrap(),
    );
    // The built-in sign-in page offers the provider as a button posting to its sign-in URL.
    let page = send(
        &auth,
        Request::get(format!("{APP}/auth/signin"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(
        html.contains(r#"action="http://localhost:3000/auth/signin/oidc""#),
        "{html}"
    );
    assert!(html.contains("Sign in with Test OIDC"));
    assert!(html.contains(r#"name="callbackUrl""#));

    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
    let calls = spy.0.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!(c["trigger"], "Some(SignIn)");
    assert_eq!(c["user"]["name"], "Test User");
    assert_eq!(c["user"]["email"], "user-1@example.com");
    assert_ne!(
        c["user"]["id"], "user-1",
        "user ids are random without an adapter"
    );
    assert_eq!(c["account"]["provider"], "oidc");
    assert_eq!(c["account"]["type"], "oidc");
    assert_eq!(c["account"]["providerAccountId"], "user-1");
    assert_eq!(c["account"]["token_type"], "bearer");
    assert!(c["account"]["access_token"].is_string());
    assert!(
        c["account"].get("id_token").is_none(),
        "the account hook dropped it"
    );
    assert_eq!(c["profile"]["sub"], "user-1");
    assert_eq!(c["profile"]["email_verified"], true);
}

#[tokio::test]
async fn slow_token_endpoint_times_out_and_logs_no_secrets() {
    let op = OidcProvider::start().await;
    let log = ErrorLog::default();
    let auth = auth_logged(oidc(&op, "client-basic", "secret-basic"), log.clone());
    op.set_mode("slow-token").await;
    let mut jar = Jar::default();
    let url = start(&auth, "oidc", &mut jar).await;
    let cb = query_callback(
        op.authorize(&url, &format!("{APP}/auth/callback/oidc"))
            .await,
    );
    let code = url::Url::parse(&cb)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let began = std::time::Instant::now();
    let r = deliver(&auth, &Callback::Query(cb), &mut jar).await;
    assert_refused(&r, &jar, "Configuration");
    assert!(began.elapsed() < std::time::Duration::from_secs(15));
    let errors = log.take();
    assert!(
        errors.iter().any(|e| e.contains("token request")),
        "{errors:?}"
    );
    for e in &errors {
        assert!(
            !e.contains("secret-basic") && !e.contains(&code),
            "secret in log: {e}"
        );
        assert!(!e.contains(SECRET));
    }
}

#[tokio::test]
async fn oversized_provider_responses_are_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A "provider" whose discovery document is 2 MiB.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let body = format!("{{\"issuer\":\"{}\"}}", "x".repeat(2 * 1024 * 1024));
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
            });
        }
    });
    let log = ErrorLog::default();
    let auth = auth_logged(
        OAuthProvider::oidc("oidc", "Huge")
            .issuer(format!("http://127.0.0.1:{port}"))
            .client_id("c")
            .client_secret("s"),
        log.clone(),
    );
    let mut jar = Jar::default();
    // The provider cannot be used: the sign-in ends on the error page.
    let location = start(&auth, "oidc", &mut jar).await;
    assert_eq!(
        location,
        "http://localhost:3000/auth/error?error=Configuration"
    );
    let errors = log.take();
    assert!(
        errors.iter().any(|e| e.contains("larger than")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn custom_token_request_and_authorization_handler() {
    use base64::Engine as _;
    let op = OidcProvider::start().await;
    let provider = oidc(&op, "client-basic", "secret-basic")
        .authorization(|url| format!("{url}&login_hint=alice"))
        .token_request(|params, client| async move {
            let body = form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", "authorization_code")
                .append_pair("code", &params.code)
                .append_pair("redirect_uri", &params.redirect_uri)
                .append_pair(
                    "code_verifier",
                    params.code_verifier.as_deref().unwrap_or(""),
                )
                .finish();
            let basic =
                base64::engine::general_purpose::STANDARD.encode("client-basic:secret-basic");
            let req = http::Request::post(params.token_endpoint.unwrap())
                .header("content-type", "application/x-www-form-urlencoded")
                .header("authorization", format!("Basic {basic}"))
                .body(Bytes::from(body))?;
            let resp = client.send(req).await?;
            Ok((resp.status().as_u16(), serde_json::from_slice(resp.body())?))
        });
    let auth = auth_for(provider);
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    assert_signed_in(&r, &jar);
    assert_eq!(
        session(&auth, &jar).await["user"]["email"],
        "alice@example.com"
    );
}

#[tokio::test]
async fn private_key_jwt_client_authentication() {
    let op = OidcProvider::start().await;
    let (pem, kid) = op.client_key().await;
    let provider = OAuthProvider::oidc("oidc", "Key")
        .issuer(op.issuer.clone())
        .client_id("client-private-key-jwt")
        .client_private_key_pem(&pem, Some(&kid))
        .unwrap();
    let auth = auth_for(provider);
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&auth, &op, "oidc", &mut jar).await, &jar);
    let text = op.last_token_request().await.to_string();
    assert!(
        text.contains("client_assertion") && !text.contains("PRIVATE KEY"),
        "{text}"
    );
    // A key that is not a key, and private_key_jwt without one, are configuration errors.
    assert!(
        OAuthProvider::oidc("oidc", "K")
            .client_private_key_pem("nope", None)
            .is_err()
    );
    let e = AuthConfig::builder()
        .secret(SECRET)
        .provider(
            OAuthProvider::oidc("oidc", "K")
                .issuer("https://i.example")
                .client_id("c")
                .client_auth(ClientAuthMethod::PrivateKeyJwt),
        )
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("private_key_jwt"), "{e}");
}
