//! Refresh-token rotation across instances (issue 19): two authcore instances sharing Redis
//! as their single-use store read one JWT session at the same moment, with a refresh due;
//! the real OpenID provider (rotating refresh tokens) sees one refresh, so the rotating
//! refresh token is never used twice. The instance that lost the claim answers with the
//! tokens it had, without an error.
#![allow(clippy::unwrap_used)]

#[path = "../../authcore/tests/support/oauth_flow.rs"]
mod oauth_flow;
#[path = "../../authcore/tests/support/oidc_provider.rs"]
mod oidc_provider;

use std::time::Duration;

use authcore::providers::OAuthProvider;
use authcore::{Auth, AuthConfig};
use oauth_flow::*;
use oidc_provider::{OidcProvider, clients};
use serde_json::Value;

const SECRET: &str = "refresh-instances-secret";

/// An instance with the `oidc` provider refreshing always (access tokens of one second, an
/// hour's margin) and Redis under `prefix` as its rate-limit (and single-use) store.
async fn instance(op: &OidcProvider, prefix: &str) -> Auth {
    let url = std::env::var("AUTHCORE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let redis = authcore_redis::RedisAdapter::connect(&url)
        .await
        .unwrap()
        .with_prefix(prefix);
    let (id, secret) = clients::REFRESH;
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(
                OAuthProvider::oidc("oidc", "Test OIDC")
                    .issuer(op.issuer.clone())
                    .client_id(id)
                    .client_secret(secret)
                    .refresh_access_token(Duration::from_secs(3600)),
            )
            .rate_limit_store(redis.rate_limit_store())
            .build()
            .unwrap(),
    )
}

fn access_token(auth: &Auth, set_cookies: &[String]) -> Option<String> {
    let cookie = set_cookies
        .iter()
        .find_map(|c| c.strip_prefix("authjs.session-token="))?;
    let token = cookie.split(';').next()?;
    let claims = auth
        .config()
        .jwt()
        .decode(token, "authjs.session-token")
        .unwrap()?;
    claims["access_token"].as_str().map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_refresh_one_rotating_token_once() {
    let op = OidcProvider::start_with(
        oidc_provider::DEFAULT_REDIRECT_URIS,
        &[("OIDC_ACCESS_TOKEN_TTL", "1")],
    )
    .await;
    let prefix = format!("authcore-refresh-test-{}:", std::process::id());
    let a = instance(&op, &prefix).await;
    let b = instance(&op, &prefix).await;
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&a, &op, "oidc", &mut jar).await, &jar);
    let before = {
        let claims = a
            .config()
            .jwt()
            .decode(&jar.0["authjs.session-token"], "authjs.session-token")
            .unwrap()
            .unwrap();
        claims["access_token"].as_str().unwrap().to_owned()
    };

    let reads: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|auth| {
            let jar = jar.clone();
            tokio::spawn(async move {
                let r = send(
                    &auth,
                    http::Request::get(format!("{APP}/auth/session"))
                        .header("cookie", jar.header())
                        .body(Default::default())
                        .unwrap(),
                )
                .await;
                let session: Value = serde_json::from_slice(&r.body).unwrap();
                (session, access_token(&auth, &r.set_cookies))
            })
        })
        .collect();
    let mut refreshed = 0;
    for read in reads {
        let (session, token) = read.await.unwrap();
        assert_eq!(session["user"]["email"], "user-1@example.com", "{session}");
        assert!(session.get("error").is_none(), "{session}");
        refreshed += usize::from(token.unwrap() != before);
    }
    assert_eq!(
        op.refresh_count().await,
        1,
        "one token request for both instances"
    );
    assert_eq!(
        refreshed, 1,
        "one instance has the new tokens, the other kept its own"
    );
}
