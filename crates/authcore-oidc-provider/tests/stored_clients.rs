//! Clients made at run time (the adapter's `OidcClientStore`) through the OpenID Provider,
//! over HTTP on loopback: a relying party signs a user in with a stored client (authorize
//! → token → userinfo → refresh); its secret replaced, the old one gets `invalid_client`
//! and the new one works; disabled, it gets `invalid_client` at the token endpoint, no
//! code at the authorization endpoint, and its access token stops working. While the store
//! cannot be read, a stored client hears `503`, never `invalid_client`. The attack: a
//! stored client with the id of a configured one changes nothing (the configured client
//! is found first).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use authcore::Auth;
use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, Capabilities, MemoryAdapter, NewUser,
    OidcClientStore, StoredClient, UserUpdate, VerificationToken, client_secret_hash,
};
use authcore::env::Env;
use authcore::types::{Account, Authenticator};
use authcore_axum::AuthRouterExt as _;
use authcore_oidc_provider::{ClientConfig, ClientSecret, OpenIdProvider, ProviderSection};
use serde_json::Value;

const CONFIGURED_SECRET: &str = "configured-secret-0123456789abcdef0123";
const FIRST: &str = "stored-secret-one-0123456789abcdef0123456";
const SECOND: &str = "stored-secret-two-0123456789abcdef0123456";
const EVIL: &str = "evil-secret-0123456789abcdef0123456789012";
const CB: &str = "http://127.0.0.1:9/callback";
const EVIL_CB: &str = "https://evil.example/callback";

struct Op {
    base: String,
    users: MemoryAdapter,
    dir: std::path::PathBuf,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A stored client `id` with the secret `secret`, the refresh grant and `redirect`.
fn stored(id: &str, secret: &str, redirect: &str) -> StoredClient {
    StoredClient {
        client_id: id.into(),
        name: format!("The {id} app"),
        redirect_uris: vec![redirect.into()],
        post_logout_redirect_uris: Vec::new(),
        grant_types: vec!["authorization_code".into(), "refresh_token".into()],
        scopes: Vec::new(),
        token_endpoint_auth_method: "client_secret_basic".into(),
        secret_hash: Some(client_secret_hash(secret)),
        dpop_bound_access_tokens: false,
        require_pushed_authorization_requests: false,
        access_token_format: None,
        created_at: time::OffsetDateTime::now_utc(),
        secret_rotated_at: None,
        disabled_at: None,
    }
}

/// The memory adapter whose [`OidcClientStore`] fails while `down` is set (a database
/// that went away): every other call goes through.
#[derive(Clone)]
struct ClientsDown {
    inner: MemoryAdapter,
    down: Arc<AtomicBool>,
}

impl ClientsDown {
    fn up(&self) -> Result<(), AdapterError> {
        match self.down.load(Ordering::SeqCst) {
            true => Err(AdapterError::Backend("the database is unavailable".into())),
            false => Ok(()),
        }
    }
}

#[authcore::async_trait]
impl OidcClientStore for ClientsDown {
    async fn create_oidc_client(&self, client: &StoredClient) -> Result<bool, AdapterError> {
        self.up()?;
        self.inner.create_oidc_client(client).await
    }
    async fn get_oidc_client(&self, client_id: &str) -> Result<Option<StoredClient>, AdapterError> {
        self.up()?;
        self.inner.get_oidc_client(client_id).await
    }
    async fn list_oidc_clients(&self) -> Result<Vec<StoredClient>, AdapterError> {
        self.up()?;
        self.inner.list_oidc_clients().await
    }
    async fn update_oidc_client(
        &self,
        before: &StoredClient,
        after: &StoredClient,
    ) -> Result<bool, AdapterError> {
        self.up()?;
        self.inner.update_oidc_client(before, after).await
    }
}

#[authcore::async_trait]
impl Adapter for ClientsDown {
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError> {
        self.inner.create_user(user).await
    }
    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.get_user(id).await
    }
    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.get_user_by_email(email).await
    }
    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner
            .get_user_by_account(provider, provider_account_id)
            .await
    }
    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError> {
        self.inner.update_user(update).await
    }
    async fn delete_user(&self, id: &str) -> Result<(), AdapterError> {
        self.inner.delete_user(id).await
    }
    async fn link_account(&self, account: Account) -> Result<(), AdapterError> {
        self.inner.link_account(account).await
    }
    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError> {
        self.inner
            .unlink_account(provider, provider_account_id)
            .await
    }
    async fn create_session(
        &self,
        session: AdapterSession,
    ) -> Result<AdapterSession, AdapterError> {
        self.inner.create_session(session).await
    }
    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError> {
        self.inner.get_session_and_user(session_token).await
    }
    async fn update_session(
        &self,
        session_token: &str,
        expires: time::OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.inner.update_session(session_token, expires).await
    }
    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError> {
        self.inner.delete_session(session_token).await
    }
    async fn create_verification_token(
        &self,
        token: VerificationToken,
    ) -> Result<(), AdapterError> {
        self.inner.create_verification_token(token).await
    }
    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError> {
        self.inner.use_verification_token(identifier, token).await
    }
    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError> {
        self.inner.get_account(provider_account_id, provider).await
    }
    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.inner.get_authenticator(credential_id).await
    }
    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError> {
        self.inner.create_authenticator(authenticator).await
    }
    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError> {
        self.inner.list_authenticators_by_user_id(user_id).await
    }
    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError> {
        self.inner
            .update_authenticator_counter(credential_id, counter)
            .await
    }
    fn capabilities(&self) -> Capabilities<'_> {
        self.inner.capabilities().oidc_clients(self)
    }
}

/// The provider with the configured client `configured` and user `ada`.
async fn start() -> Op {
    start_with(None).await
}

/// [`start`], the provider reading its stored clients through a store that fails while
/// `down` is set.
async fn start_with(down: Option<Arc<AtomicBool>>) -> Op {
    let (dir, key) = common::key_dir("stored");
    let (listener, base) = common::loopback().await;
    let env = Env::from_pairs([
        (
            "AUTH_SECRET",
            "a stored clients test secret, long enough".to_owned(),
        ),
        ("AUTH_URL", format!("{base}/auth")),
    ]);
    let mut configured = ClientConfig::default();
    configured.id = "configured".into();
    configured.secret = Some(ClientSecret::new(CONFIGURED_SECRET));
    configured.redirect_uris = vec![CB.into()];
    let mut section = ProviderSection::default();
    section.signing_keys = vec![key];
    section.clients = vec![configured];
    let provider = Arc::new(OpenIdProvider::new(&env, section).unwrap());
    let users = MemoryAdapter::new();
    common::add_user(&users, "ada").await;
    let auth = Auth::new(common::handler(&env, &users).build().unwrap());
    match down {
        None => common::serve(listener, &provider, &auth, &users),
        Some(down) => {
            let through: Arc<dyn Adapter> = Arc::new(ClientsDown {
                inner: users.clone(),
                down,
            });
            let app = axum::Router::new()
                .auth_routes(auth.clone())
                .with_state(auth.clone())
                .merge(provider.router(auth.clone(), through));
            tokio::spawn(async move { axum::serve(listener, app).await });
        }
    }
    Op { base, users, dir }
}

impl Op {
    /// A browser in which ada signed in with the password.
    async fn browser(&self) -> reqwest::Client {
        common::signed_in_browser(&self.base, "ada").await.0
    }

    /// The authorization request of `client` to `redirect`: the answer.
    async fn authorize(
        &self,
        browser: &reqwest::Client,
        client: &str,
        redirect: &str,
    ) -> reqwest::Response {
        let mut url = url::Url::parse(&format!("{}/oidc/authorize", self.base)).unwrap();
        url.query_pairs_mut().extend_pairs([
            ("client_id", client),
            ("redirect_uri", redirect),
            ("response_type", "code"),
            ("scope", "openid email offline_access"),
            ("state", "st"),
        ]);
        browser.get(url).send().await.unwrap()
    }

    /// A code for `client` in `browser`.
    async fn code(&self, browser: &reqwest::Client, client: &str) -> String {
        let r = self.authorize(browser, client, CB).await;
        assert_eq!(r.status(), 302, "{r:?}");
        let to = r.headers()["location"].to_str().unwrap();
        assert!(to.starts_with(CB), "{to}");
        let p: BTreeMap<String, String> = url::Url::parse(to)
            .unwrap()
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        p.get("code")
            .cloned()
            .unwrap_or_else(|| panic!("no code: {p:?}"))
    }

    /// `POST /oidc/token` as `client` with `secret` and `form`: the status and the JSON.
    async fn token(&self, client: &str, secret: &str, form: &[(&str, &str)]) -> (u16, Value) {
        let r = reqwest::Client::new()
            .post(format!("{}/oidc/token", self.base))
            .basic_auth(client, Some(secret))
            .form(form)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn redeem(&self, client: &str, secret: &str, code: &str) -> (u16, Value) {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CB),
        ];
        self.token(client, secret, &form).await
    }

    async fn refresh(&self, client: &str, secret: &str, refresh: &str) -> (u16, Value) {
        let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
        self.token(client, secret, &form).await
    }

    /// `GET /oidc/userinfo` with `access`: the status and the JSON (`null` if none).
    async fn userinfo(&self, access: &str) -> (u16, Value) {
        let r = reqwest::Client::new()
            .get(format!("{}/oidc/userinfo", self.base))
            .bearer_auth(access)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_client_signs_in_its_secret_rotates_and_it_is_disabled() {
    let op = start().await;
    assert!(
        op.users
            .create_oidc_client(&stored("wiki", FIRST, CB))
            .await
            .unwrap()
    );
    let browser = op.browser().await;

    // Signed in with the stored client: tokens, userinfo.
    let code = op.code(&browser, "wiki").await;
    let (status, tokens) = op.redeem("wiki", FIRST, &code).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    assert!(tokens["id_token"].is_string());
    assert_eq!(op.userinfo(&access).await.0, 200);
    // A wrong secret is refused.
    let code = op.code(&browser, "wiki").await;
    let (status, body) = op.redeem("wiki", "not-the-secret", &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    // The secret replaced: the old one gets invalid_client, the new one works.
    let before = op.users.get_oidc_client("wiki").await.unwrap().unwrap();
    let mut client = before.clone();
    client.secret_hash = Some(client_secret_hash(SECOND));
    client.secret_rotated_at = Some(time::OffsetDateTime::now_utc());
    assert!(op.users.update_oidc_client(&before, &client).await.unwrap());
    let (status, body) = op.refresh("wiki", FIRST, &refresh).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = op.refresh("wiki", SECOND, &refresh).await;
    assert_eq!(status, 200, "{body}");
    let refresh = body["refresh_token"].as_str().unwrap().to_owned();
    let access = body["access_token"].as_str().unwrap().to_owned();
    let code = op.code(&browser, "wiki").await;
    let (status, body) = op.redeem("wiki", FIRST, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    // Disabled: no token, no code, and its access token stops working.
    let code = op.code(&browser, "wiki").await;
    let before = client.clone();
    client.disabled_at = Some(time::OffsetDateTime::now_utc());
    assert!(op.users.update_oidc_client(&before, &client).await.unwrap());
    let (status, body) = op.redeem("wiki", SECOND, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = op.refresh("wiki", SECOND, &refresh).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let r = op.authorize(&browser, "wiki", CB).await;
    assert_eq!(r.status(), 400, "no redirect to the client: {r:?}");
    assert_eq!(op.userinfo(&access).await.0, 401);

    // Enabled again: it works again.
    let before = client.clone();
    client.disabled_at = None;
    assert!(op.users.update_oidc_client(&before, &client).await.unwrap());
    let code = op.code(&browser, "wiki").await;
    assert_eq!(op.redeem("wiki", SECOND, &code).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_a_stored_client_cannot_shadow_a_configured_one() {
    let op = start().await;
    // Written straight to the store: the administrators' operations refuse the id.
    assert!(
        op.users
            .create_oidc_client(&stored("configured", EVIL, EVIL_CB))
            .await
            .unwrap()
    );
    let browser = op.browser().await;
    let r = op.authorize(&browser, "configured", EVIL_CB).await;
    assert_eq!(r.status(), 400, "no code to the stored redirect URI: {r:?}");
    let code = op.code(&browser, "configured").await;
    let (status, body) = op.redeem("configured", EVIL, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = op.redeem("configured", CONFIGURED_SECRET, &code).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_store_cannot_be_read_a_stored_client_hears_503_not_invalid_client() {
    let down = Arc::new(AtomicBool::new(false));
    let op = start_with(Some(down.clone())).await;
    assert!(
        op.users
            .create_oidc_client(&stored("wiki", FIRST, CB))
            .await
            .unwrap()
    );
    let browser = op.browser().await;
    let code = op.code(&browser, "wiki").await;
    down.store(true, Ordering::SeqCst);
    // The token endpoint: unavailable, for the right secret and a wrong one alike — the
    // client is not told its credentials are wrong.
    for secret in [FIRST, "not-the-secret"] {
        let (status, body) = op.redeem("wiki", secret, &code).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (503, Some("temporarily_unavailable")),
            "{body}"
        );
    }
    // The authorization endpoint: a page, no redirect to an unchecked redirect URI.
    let r = op.authorize(&browser, "wiki", CB).await;
    assert_eq!(r.status(), 503, "{r:?}");
    assert!(r.headers().get("location").is_none());
    // An unknown id is no different while the store is down: it cannot be told apart.
    let (status, _) = op.redeem("nobody", FIRST, &code).await;
    assert_eq!(status, 503);
    // A configured client is not read from the store: it works meanwhile.
    let configured = op.code(&browser, "configured").await;
    let (status, body) = op
        .redeem("configured", CONFIGURED_SECRET, &configured)
        .await;
    assert_eq!(status, 200, "{body}");
    // Back: the code, never consumed by the refused requests, is redeemed.
    down.store(false, Ordering::SeqCst);
    let (status, body) = op.redeem("wiki", FIRST, &code).await;
    assert_eq!(status, 200, "{body}");
    // And an unknown client is unknown again.
    let (status, body) = op.redeem("nobody", FIRST, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
}

#[test]
fn the_provider_s_check_refuses_what_it_would_not_use() {
    let ok = stored("app", FIRST, CB);
    let with = |f: fn(&mut StoredClient)| {
        let mut c = ok.clone();
        f(&mut c);
        c
    };
    let cases: Vec<(&str, StoredClient, bool)> = vec![
        ("valid", ok.clone(), true),
        (
            "refresh without code",
            with(|c| c.grant_types = vec!["refresh_token".into()]),
            false,
        ),
        (
            "an unknown scope",
            with(|c| c.scopes = vec!["openid".into(), "admin".into()]),
            false,
        ),
        (
            "code without openid",
            with(|c| c.scopes = vec!["email".into()]),
            false,
        ),
        (
            "offline_access without refresh",
            with(|c| {
                c.grant_types = vec!["authorization_code".into()];
                c.scopes = vec!["openid".into(), "offline_access".into()];
            }),
            false,
        ),
        (
            "confidential without a secret",
            with(|c| c.secret_hash = None),
            false,
        ),
        (
            "a public client with the method none",
            with(|c| {
                c.token_endpoint_auth_method = "none".into();
                c.secret_hash = None;
            }),
            true,
        ),
        (
            "a service",
            with(|c| {
                c.grant_types = vec!["client_credentials".into()];
                c.redirect_uris.clear();
                c.scopes = vec!["email".into()];
            }),
            true,
        ),
        (
            "opaque access tokens",
            with(|c| c.access_token_format = Some("opaque".into())),
            true,
        ),
        (
            "an unknown access token format",
            with(|c| c.access_token_format = Some("paseto".into())),
            false,
        ),
    ];
    for (name, client, accepted) in cases {
        assert_eq!(
            authcore_oidc_provider::check_stored_client(&client).is_ok(),
            accepted,
            "{name}: {:?}",
            authcore_oidc_provider::check_stored_client(&client)
        );
    }
}

/// A stored client's requirements hold as a configured client's: one whose tokens must be
/// DPoP-bound gets none without a proof, one whose requests must be pushed gets no code
/// for a plain authorization request, only for a pushed one.
#[tokio::test]
async fn a_stored_client_s_dpop_and_par_requirements_hold() {
    let op = start().await;
    let mut bound = stored("bound", FIRST, CB);
    bound.dpop_bound_access_tokens = true;
    let mut pushed = stored("pushed", FIRST, CB);
    pushed.require_pushed_authorization_requests = true;
    for client in [&bound, &pushed] {
        assert!(op.users.create_oidc_client(client).await.unwrap());
    }
    let browser = op.browser().await;

    let code = op.code(&browser, "bound").await;
    let (status, body) = op.redeem("bound", FIRST, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_dpop_proof")),
        "{body}"
    );
    assert!(body.get("access_token").is_none(), "{body}");

    let r = op.authorize(&browser, "pushed", CB).await;
    let to = r
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(
        !to.contains("code="),
        "a plain request of a PAR-only client: {to}"
    );
    let pushed_request: Value = reqwest::Client::new()
        .post(format!("{}/oidc/par", op.base))
        .basic_auth("pushed", Some(FIRST))
        .form(&[
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email"),
            ("state", "st"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let request_uri = pushed_request["request_uri"].as_str().unwrap();
    let mut url = url::Url::parse(&format!("{}/oidc/authorize", op.base)).unwrap();
    url.query_pairs_mut()
        .extend_pairs([("client_id", "pushed"), ("request_uri", request_uri)]);
    let r = browser.get(url).send().await.unwrap();
    let to = r.headers()["location"].to_str().unwrap();
    assert!(to.starts_with(CB) && to.contains("code="), "{to}");
}

/// A stored client with opaque access tokens gets tokens that say nothing of the user, the
/// client or the scope; userinfo and the client's own introspection read them, another
/// client's introspection does not, and a signed client beside it still gets a JWT.
#[tokio::test]
async fn a_stored_client_s_opaque_access_tokens_say_nothing_and_open_here() {
    use base64::Engine as _;
    let op = start().await;
    let mut opaque = stored("opaque", FIRST, CB);
    opaque.access_token_format = Some("opaque".into());
    let signed = stored("signed", SECOND, CB);
    for client in [&opaque, &signed] {
        assert!(op.users.create_oidc_client(client).await.unwrap());
    }
    let browser = op.browser().await;
    let mut access = Vec::new();
    for (id, secret) in [("opaque", FIRST), ("signed", SECOND)] {
        let code = op.code(&browser, id).await;
        let (status, body) = op.redeem(id, secret, &code).await;
        assert_eq!(status, 200, "{id}: {body}");
        access.push(body["access_token"].as_str().unwrap().to_owned());
    }
    let (sealed, jwt) = (&access[0], &access[1]);
    assert_eq!(jwt.split('.').count(), 3, "a signed client's token: {jwt}");
    let segments: Vec<&str> = sealed.split('.').collect();
    assert_eq!(
        (segments.len(), segments[1]),
        (5, ""),
        "a compact JWE with direct encryption: {sealed}"
    );

    let (status, info) = op.userinfo(sealed).await;
    assert_eq!(status, 200, "{info}");
    let sub = info["sub"].as_str().unwrap_or_else(|| panic!("{info}"));
    assert_eq!(info["email"], "ada@example.com", "{info}");
    for segment in segments {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(segment)
            .unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [sub, "ada", "opaque", "openid", "email"] {
            assert!(!text.contains(secret), "{secret:?} in {text:?}");
        }
    }

    let introspect = |client: &'static str, secret: &'static str| {
        let base = op.base.clone();
        let token = sealed.clone();
        async move {
            reqwest::Client::new()
                .post(format!("{base}/oidc/introspect"))
                .basic_auth(client, Some(secret))
                .form(&[("token", token.as_str())])
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let own = introspect("opaque", FIRST).await;
    assert_eq!(
        (&own["active"], &own["client_id"], &own["sub"]),
        (
            &Value::Bool(true),
            &Value::from("opaque"),
            &Value::from(sub)
        ),
        "{own}"
    );
    let other = introspect("signed", SECOND).await;
    assert_eq!(other, serde_json::json!({ "active": false }));
}
