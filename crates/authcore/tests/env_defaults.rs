//! Environment defaults (Auth.js `setEnvDefaults`, `lib/utils/env.ts`) end to end, from an
//! [`Env`] snapshot (the process environment is never touched): `AUTH_<ID>_ID/SECRET/ISSUER`
//! fill providers, `AUTH_SECRET_1..3` rotate, `AUTH_URL` sets the base path and origin.
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::env::Env;
use authcore::http_client::HttpClient;
use authcore::jwt::JwtCodec;
use authcore::logger::WarningCode;
use authcore::providers::{ClientAuthMethod, OAuthProvider};
use authcore::{Auth, AuthConfig, AuthConfigBuilder, BoxError, ConfigError};
use bytes::Bytes;
use serde_json::{Value, json};

const ISSUER: &str = "https://idp.example";

/// Stands in for the identity provider: serves discovery, refuses every code, and
/// records the requests it got.
#[derive(Clone, Default)]
struct FakeIdp {
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

#[authcore::async_trait]
impl HttpClient for FakeIdp {
    async fn send(&self, req: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        let uri = req.uri().to_string();
        self.requests.lock().unwrap().push((
            uri.clone(),
            String::from_utf8_lossy(req.body()).into_owned(),
        ));
        let (status, body) = match uri.as_str() {
            "https://idp.example/.well-known/openid-configuration" => (
                200,
                json!({
                    "issuer": ISSUER,
                    "authorization_endpoint": "https://idp.example/authorize",
                    "token_endpoint": "https://idp.example/token",
                    "userinfo_endpoint": "https://idp.example/userinfo",
                    "jwks_uri": "https://idp.example/jwks",
                }),
            ),
            "https://idp.example/token" => (400, json!({"error": "invalid_grant"})),
            _ => (404, json!({})),
        };
        Ok(http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Bytes::from(serde_json::to_vec(&body)?))?)
    }
}

fn bare_provider(idp: &FakeIdp) -> OAuthProvider {
    OAuthProvider::oidc("my-idp", "My IdP")
        .client_auth(ClientAuthMethod::ClientSecretPost)
        .http_client(idp.clone())
}

fn provider_env() -> Env {
    Env::from_pairs([
        ("AUTH_SECRET", SECRET),
        ("AUTH_MY_IDP_ID", "env-client"),
        ("AUTH_MY_IDP_SECRET", "env-client-secret"),
        ("AUTH_MY_IDP_ISSUER", ISSUER),
        // Other providers' variables are not picked up.
        ("AUTH_OTHER_ID", "wrong-client"),
    ])
}

fn env_builder(provider: OAuthProvider, env: &Env) -> AuthConfigBuilder {
    AuthConfig::builder()
        .trust_host(true)
        .provider(provider)
        .env_defaults(env)
}

/// `POST /signin/my-idp`, then the callback with a code: returns the authorization URL.
async fn round_trip(auth: &Auth) -> url::Url {
    let (csrf, token) = csrf_pair();
    let r = send(
        auth,
        post("/auth/signin/my-idp")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302, "{}", r.text());
    let authorization = url::Url::parse(r.location().unwrap()).unwrap();
    // Send back every check cookie the sign-in set.
    let mut jar = vec![csrf];
    for c in r.set_cookies() {
        let pair = c.split(';').next().unwrap().to_owned();
        if !c.contains("Max-Age=0") && !pair.starts_with(CALLBACK_COOKIE) {
            jar.push(pair);
        }
    }
    let state = authorization
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| format!("&state={v}"))
        .unwrap_or_default();
    let r = send(
        auth,
        get(&format!("/auth/callback/my-idp?code=c0de{state}"))
            .header("cookie", jar.join("; "))
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    authorization
}

#[tokio::test]
async fn provider_id_secret_and_issuer_come_from_env() {
    let idp = FakeIdp::default();
    let (auth, _) = auth_with(env_builder(bare_provider(&idp), &provider_env()));
    let authorization = round_trip(&auth).await;

    // The issuer from AUTH_MY_IDP_ISSUER was used for discovery …
    assert_eq!(
        authorization.as_str().split('?').next().unwrap(),
        "https://idp.example/authorize"
    );
    let requests = idp.requests.lock().unwrap().clone();
    assert_eq!(
        requests[0].0,
        "https://idp.example/.well-known/openid-configuration"
    );
    // … the client id from AUTH_MY_IDP_ID in the authorization request …
    let param = |k: &str| {
        authorization
            .query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(param("client_id").as_deref(), Some("env-client"));
    // … and id plus secret from AUTH_MY_IDP_SECRET at the token endpoint.
    let (_, token_body) = requests
        .iter()
        .find(|(u, _)| u == "https://idp.example/token")
        .expect("the code was exchanged");
    let form: Vec<(String, String)> = form_urlencoded::parse(token_body.as_bytes())
        .into_owned()
        .collect();
    assert!(
        form.contains(&("client_id".into(), "env-client".into())),
        "{form:?}"
    );
    assert!(
        form.contains(&("client_secret".into(), "env-client-secret".into())),
        "{form:?}"
    );
}

#[tokio::test]
async fn explicit_provider_options_win_over_env() {
    let idp = FakeIdp::default();
    let provider = bare_provider(&idp)
        .client_id("explicit-client")
        .client_secret("explicit-secret");
    let (auth, _) = auth_with(env_builder(provider, &provider_env()));
    let authorization = round_trip(&auth).await;
    assert!(
        authorization
            .query_pairs()
            .any(|(k, v)| k == "client_id" && v == "explicit-client")
    );
    let requests = idp.requests.lock().unwrap().clone();
    let (_, token_body) = requests
        .iter()
        .find(|(u, _)| u == "https://idp.example/token")
        .unwrap();
    assert!(
        token_body.contains("client_secret=explicit-secret"),
        "{token_body}"
    );
    assert!(!token_body.contains("env-client"), "{token_body}");
}

#[test]
fn without_env_the_bare_provider_does_not_build() {
    let idp = FakeIdp::default();
    let e = env_builder(
        bare_provider(&idp),
        &Env::from_pairs([("AUTH_SECRET", SECRET)]),
    )
    .build()
    .unwrap_err();
    assert!(matches!(e, ConfigError::InvalidEndpoints { .. }), "{e:?}");
    let e = env_builder(
        bare_provider(&idp),
        &Env::from_pairs([("AUTH_SECRET", SECRET), ("AUTH_MY_IDP_ISSUER", ISSUER)]),
    )
    .build()
    .unwrap_err();
    assert!(matches!(e, ConfigError::MissingClientId { .. }), "{e:?}");
}

fn token_for(secret: &str, name: &str) -> String {
    JwtCodec::new(&[secret])
        .unwrap()
        .encode(
            json!({"sub": "1", "name": name}).as_object().unwrap(),
            SESSION_COOKIE,
            3600,
        )
        .unwrap()
}

async fn session_with(auth: &Auth, token: &str) -> TestResponse {
    send(
        auth,
        get("/auth/session")
            .header("cookie", format!("{SESSION_COOKIE}={token}"))
            .body(empty())
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn auth_secret_1_to_3_rotate_newest_first() {
    let env = Env::from_pairs([
        ("AUTH_SECRET", "s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_SECRET_1", "s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_SECRET_2", "s2-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_SECRET_3", "s3-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ]);
    let (auth, _) = auth_with(
        AuthConfig::builder()
            .trust_host(true)
            .provider(credentials())
            .env_defaults(&env),
    );
    // Every secret still decrypts …
    for s in [
        "s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "s2-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "s3-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ] {
        let r = session_with(&auth, &token_for(s, s)).await;
        assert_eq!(r.json()["user"]["name"], s, "token from {s}");
        // … and the refreshed cookie is encrypted with AUTH_SECRET_3 only.
        let fresh = r.cookie(SESSION_COOKIE).unwrap();
        assert!(
            JwtCodec::new(&["s3-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"])
                .unwrap()
                .decode(&fresh, SESSION_COOKIE)
                .unwrap()
                .is_some()
        );
        for old in [
            "s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "s2-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ] {
            assert!(
                JwtCodec::new(&[old])
                    .unwrap()
                    .decode(&fresh, SESSION_COOKIE)
                    .is_err(),
                "re-encrypted with {old}"
            );
        }
    }
    let r = session_with(&auth, &token_for("s4", "stranger")).await;
    assert_eq!(r.json(), Value::Null);

    // The CSRF hash uses the list as a JavaScript string, `s3…,s2…,s1…,s0…` (Auth.js
    // `lib/actions/callback/oauth/csrf-token.ts`, `createCSRFToken`).
    let token = "d".repeat(64);
    let cookie = authcore::csrf::csrf_cookie_value(
        &token,
        "s3-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx,s2-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx,s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx,s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    );
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header(
                "cookie",
                format!("{CSRF_COOKIE}={}", cookie.replace('|', "%7C")),
            )
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some(ORIGIN));

    // Only two set: AUTH_SECRET_1 first.
    let env = Env::from_pairs([
        ("AUTH_SECRET", "s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_SECRET_1", "s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ]);
    let (auth, _) = auth_with(
        AuthConfig::builder()
            .trust_host(true)
            .provider(credentials())
            .env_defaults(&env),
    );
    let r = session_with(
        &auth,
        &token_for("s0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "zero"),
    )
    .await;
    let fresh = r.cookie(SESSION_COOKIE).unwrap();
    assert!(
        JwtCodec::new(&["s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"])
            .unwrap()
            .decode(&fresh, SESSION_COOKIE)
            .unwrap()
            .is_some()
    );

    // A configured secret wins entirely: the env secrets are not even accepted.
    let (auth, _) = auth_with(
        AuthConfig::builder()
            .secret("configured-xxxxxxxxxxxxxxxxxxxxx")
            .trust_host(true)
            .provider(credentials())
            .env_defaults(&env),
    );
    let r = session_with(&auth, &token_for("s1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "one")).await;
    assert_eq!(r.json(), Value::Null);
    let r = session_with(
        &auth,
        &token_for("configured-xxxxxxxxxxxxxxxxxxxxx", "conf"),
    )
    .await;
    assert_eq!(r.json()["user"]["name"], "conf");
}

async fn providers_at(auth: &Auth, url: &str) -> TestResponse {
    send(auth, http::Request::get(url).body(empty()).unwrap()).await
}

#[tokio::test]
async fn auth_url_sets_base_path_origin_and_trust() {
    for auth_url in [
        "https://app.example/api/auth",
        "https://app.example/api/auth/",
    ] {
        let env = Env::from_pairs([("AUTH_SECRET", SECRET), ("AUTH_URL", auth_url)]);
        // No trust_host: AUTH_URL implies it.
        let (auth, rec) = auth_with(
            AuthConfig::builder()
                .provider(credentials())
                .env_defaults(&env),
        );
        assert_eq!(auth.config().base_path(), "/api/auth", "{auth_url}");
        // The origin is AUTH_URL's, whatever host the request came in on.
        let r = providers_at(&auth, "http://internal:3000/api/auth/providers").await;
        assert_eq!(r.status, 200, "{auth_url}");
        assert_eq!(
            r.json()["credentials"]["signinUrl"],
            "https://app.example/api/auth/signin/credentials"
        );
        let r = providers_at(&auth, "http://internal:3000/auth/providers").await;
        assert_eq!(r.status, 400, "the default base path is not mounted");
        assert!(rec.warnings.lock().unwrap().is_empty());
    }

    // Without a path the handler sits at the root.
    let env = Env::from_pairs([("AUTH_SECRET", SECRET), ("AUTH_URL", "https://app.example")]);
    let (auth, _) = auth_with(
        AuthConfig::builder()
            .provider(credentials())
            .env_defaults(&env),
    );
    let r = providers_at(&auth, "https://app.example/providers").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["credentials"]["signinUrl"],
        "https://app.example/signin/credentials"
    );

    // An explicit base path wins, with the `env-url-basepath-redundant` warning.
    let env = Env::from_pairs([
        ("AUTH_SECRET", SECRET),
        ("AUTH_URL", "https://app.example/api/auth"),
    ]);
    let (auth, rec) = auth_with(
        AuthConfig::builder()
            .provider(credentials())
            .base_path("/custom")
            .env_defaults(&env),
    );
    assert_eq!(auth.config().base_path(), "/custom");
    assert_eq!(
        *rec.warnings.lock().unwrap(),
        [WarningCode::EnvUrlBasepathRedundant]
    );
    let r = providers_at(&auth, "https://app.example/custom/providers").await;
    assert_eq!(r.status, 200);
}

/// `env_defaults` is applied at build time: its place in the chain does not matter.
#[tokio::test]
async fn env_defaults_apply_at_build_whatever_their_place_in_the_chain() {
    let env = Env::from_pairs([
        ("AUTH_SECRET", "env-secret-xxxxxxxxxxxxxxxxxxxxx"),
        ("AUTH_GH_ID", "id-from-env"),
        ("AUTH_GH_SECRET", "secret-from-env"),
    ]);
    let provider = || {
        OAuthProvider::oauth("gh", "GH")
            .authorization_url("https://gh.example/authorize")
            .token_url("https://gh.example/token")
            .userinfo_url("https://gh.example/user")
    };
    // env_defaults first, then an explicit secret and the provider.
    let (auth, _) = auth_with(
        AuthConfig::builder()
            .env_defaults(&env)
            .trust_host(true)
            .secret(SECRET)
            .provider(provider()),
    );
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signin/gh")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    let location = url::Url::parse(r.location().unwrap()).unwrap();
    let client_id = location
        .query_pairs()
        .find(|(k, _)| k == "client_id")
        .map(|(_, v)| v.into_owned());
    assert_eq!(client_id.as_deref(), Some("id-from-env"));
    // The explicit secret won over AUTH_SECRET: the CSRF pair made with it verified.
    assert!(!r.location().unwrap().contains("error="));
}
