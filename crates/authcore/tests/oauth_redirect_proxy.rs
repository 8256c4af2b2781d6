//! Redirect proxy (Auth.js `lib/utils/providers.ts` and `lib/init.ts` for `redirectProxyUrl`,
//! `lib/actions/signin/authorization-url.ts` for the `redirect_uri`, the proxy hop at the
//! start of `callback` in `lib/actions/callback/index.ts`, with the cases Auth.js's own tests
//! check). No network: the provider has explicit endpoints and the proxy hop happens before
//! any provider call.
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::providers::OAuthProvider;
use http::Request;
use serde_json::json;

fn github_like() -> OAuthProvider {
    OAuthProvider::oauth("github", "GitHub")
        .issuer("https://github.com/login/oauth")
        .authorization_url("https://github.com/login/oauth/authorize?scope=read:user+user:email")
        .token_url("https://github.com/login/oauth/access_token")
        .userinfo_url("https://api.github.com/user")
        .client_id("id")
        .client_secret("secret")
}

fn proxied() -> (authcore::Auth, Recorder) {
    auth_with(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .redirect_proxy_url("https://login.example.com/auth")
            .provider(github_like()),
    )
}

#[tokio::test]
async fn preview_deployment_signs_in_through_the_proxy() {
    let (auth, _) = proxied();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        Request::post("https://preview.example.com/auth/signin/github")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    let loc = url::Url::parse(r.location().unwrap()).unwrap();
    let get = |k: &str| {
        loc.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(
        get("redirect_uri").as_deref(),
        Some("https://login.example.com/auth/callback/github")
    );
    // state is forced on and carries this deployment's callback URL.
    let state = get("state").unwrap();
    let inner = auth
        .config()
        .jwt()
        .decode(&state, "encodedState")
        .unwrap()
        .unwrap();
    assert_eq!(
        inner["origin"],
        "https://preview.example.com/auth/callback/github"
    );
    assert!(r.cookie("__Secure-authjs.state").is_some());
}

#[tokio::test]
async fn state_without_cookie_off_the_proxy_is_refused() {
    let (auth, _) = proxied();
    let r = send(
        &auth,
        get("/auth/callback/github?state=random&code=x")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

#[tokio::test]
async fn proxy_relays_the_callback_to_the_origin_in_state() {
    let (auth, _) = proxied();
    let state = auth
        .config()
        .jwt()
        .encode(
            json!({"origin": "https://origin.example.com", "random": "r"})
                .as_object()
                .unwrap(),
            "encodedState",
            900,
        )
        .unwrap();
    let r = send(
        &auth,
        Request::get(format!(
            "https://login.example.com/auth/callback/github?state={state}&code=random"
        ))
        .body(empty())
        .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.location().unwrap(),
        format!("https://origin.example.com?state={state}&code=random")
    );
}

#[tokio::test]
async fn proxy_refuses_state_from_another_secret() {
    let (auth, rec) = proxied();
    let state = authcore::jwt::JwtCodec::new(&["another-secret"])
        .unwrap()
        .encode(
            json!({"origin": "https://origin.example.com"})
                .as_object()
                .unwrap(),
            "encodedState",
            900,
        )
        .unwrap();
    let r = send(
        &auth,
        Request::get(format!(
            "https://login.example.com/auth/callback/github?state={state}&code=random"
        ))
        .body(empty())
        .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://login.example.com/auth/error?error=Configuration")
    );
    assert!(
        rec.errors
            .lock()
            .unwrap()
            .iter()
            .any(|(t, m)| t == "InvalidCheck" && m == "State could not be decoded")
    );
}

#[tokio::test]
async fn env_sets_the_proxy() {
    let env = authcore::env::Env::from_pairs([
        ("AUTH_REDIRECT_PROXY_URL", "https://login.example.com/auth"),
        ("AUTH_SECRET", "s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ]);
    let config = authcore::AuthConfig::builder()
        .trust_host(true)
        .provider(github_like())
        .env_defaults(&env)
        .build()
        .unwrap();
    let auth = authcore::Auth::new(config);
    let state = auth
        .config()
        .jwt()
        .encode(
            json!({"origin": "https://o.example"}).as_object().unwrap(),
            "encodedState",
            900,
        )
        .unwrap();
    let r = send(
        &auth,
        Request::get(format!(
            "https://login.example.com/auth/callback/github?state={state}&code=c"
        ))
        .body(empty())
        .unwrap(),
    )
    .await;
    assert!(
        r.location()
            .unwrap()
            .starts_with("https://o.example?state=")
    );
}
