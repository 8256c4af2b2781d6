//! Clients made at run time (the adapter's `OidcClientStore`) through the OpenID Provider,
//! over HTTP on loopback: a relying party signs a user in with a stored client (authorize
//! → token → userinfo → refresh); its secret replaced, the old one gets `invalid_client`
//! and the new one works; disabled, it gets `invalid_client` at the token endpoint, no
//! code at the authorization endpoint, and its access token stops working. The attack: a
//! stored client with the id of a configured one changes nothing (the configured client
//! is found first).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use authcore::Auth;
use authcore::adapter::{MemoryAdapter, OidcClientStore, StoredClient, client_secret_hash};
use authcore::env::Env;
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
        created_at: time::OffsetDateTime::now_utc(),
        secret_rotated_at: None,
        disabled_at: None,
    }
}

/// The provider with the configured client `configured` and user `ada`.
async fn start() -> Op {
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
    common::serve(listener, &provider, &auth, &users);
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

    async fn userinfo(&self, access: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}/oidc/userinfo", self.base))
            .bearer_auth(access)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
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
    assert_eq!(op.userinfo(&access).await, 200);
    // A wrong secret is refused.
    let code = op.code(&browser, "wiki").await;
    let (status, body) = op.redeem("wiki", "not-the-secret", &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    // The secret replaced: the old one gets invalid_client, the new one works.
    let mut client = op.users.get_oidc_client("wiki").await.unwrap().unwrap();
    client.secret_hash = Some(client_secret_hash(SECOND));
    client.secret_rotated_at = Some(time::OffsetDateTime::now_utc());
    assert!(op.users.update_oidc_client(&client).await.unwrap());
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
    client.disabled_at = Some(time::OffsetDateTime::now_utc());
    assert!(op.users.update_oidc_client(&client).await.unwrap());
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
    assert_eq!(op.userinfo(&access).await, 401);

    // Enabled again: it works again.
    client.disabled_at = None;
    assert!(op.users.update_oidc_client(&client).await.unwrap());
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
