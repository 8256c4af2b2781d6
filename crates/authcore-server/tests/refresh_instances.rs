//! Refresh-token rotation across instances: two authcore instances sharing Redis
//! as their single-use store read one JWT session at the same moment, with a refresh due;
//! the real OpenID provider (rotating refresh tokens) sees one refresh, so the rotating
//! refresh token is never used twice. The instance that lost the claim answers with the
//! tokens it had, without an error.
#![allow(clippy::unwrap_used)]

use crate::support::oauth_flow;
use crate::support::oidc_provider;
use crate::support::pg;

use std::time::Duration;

use authcore::providers::OAuthProvider;
use authcore::{Auth, AuthConfig};
use oauth_flow::*;
use oidc_provider::{OidcProvider, clients};
use serde_json::Value;

const SECRET: &str = "refresh-instances-secret-xxxxxxx";

/// An instance with the `oidc` provider refreshing always (access tokens of one second, an
/// hour's margin) and Redis under `prefix` as its rate-limit (and single-use) store; JWT
/// sessions, or database sessions in `db`.
async fn instance(op: &OidcProvider, prefix: &str) -> Auth {
    instance_with(op, prefix, None).await
}

async fn instance_with(
    op: &OidcProvider,
    prefix: &str,
    db: Option<authcore_sqlx::SqlxAdapter>,
) -> Auth {
    let url = std::env::var("AUTHCORE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let redis = authcore_redis::RedisAdapter::connect(&url)
        .await
        .unwrap()
        .with_prefix(prefix);
    let (id, secret) = clients::REFRESH;
    let mut config = AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .provider(
            OAuthProvider::oidc("oidc", "Test OIDC")
                .issuer(op.issuer.clone())
                .client_id(id)
                .client_secret(secret)
                .refresh_access_token(Duration::from_secs(3600)),
        )
        .rate_limit_store(redis.rate_limit_store());
    if let Some(db) = db {
        config = config.adapter(db);
    }
    Auth::new(config.build().unwrap())
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

/// Database sessions on one PostgreSQL schema: both instances read the session at once, one
/// token request is made, and the `accounts` row holds the new tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_postgres_refresh_the_accounts_row_once() {
    use authcore::adapter::Adapter as _;
    // Slow token answers: both reads find the row before the refresh stores new tokens.
    let op = OidcProvider::start_with(
        oidc_provider::DEFAULT_REDIRECT_URIS,
        &[
            ("OIDC_ACCESS_TOKEN_TTL", "1"),
            ("OIDC_SLOW_TOKEN_MS", "500"),
        ],
    )
    .await;
    let schema = format!("authcore_refresh_{}", std::process::id());
    pg::admin_sql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .await;
    let url = format!("{}?options=-c%20search_path%3D{schema}", pg::postgres_url());
    let db = authcore_sqlx::SqlxAdapter::postgres(&url).await.unwrap();
    db.migrate().await.unwrap();
    let prefix = format!("authcore-refresh-db-test-{}:", std::process::id());
    let a = instance_with(&op, &prefix, Some(db.clone())).await;
    let b = instance_with(&op, &prefix, Some(db.clone())).await;
    let mut jar = Jar::default();
    assert_signed_in(&sign_in(&a, &op, "oidc", &mut jar).await, &jar);
    let before = db.get_account("user-1", "oidc").await.unwrap().unwrap();

    op.set_mode("slow-token").await;
    let reads: Vec<_> = [a, b]
        .into_iter()
        .map(|auth| {
            let jar = jar.clone();
            tokio::spawn(async move { session(&auth, &jar).await })
        })
        .collect();
    for read in reads {
        let s = read.await.unwrap();
        assert_eq!(s["user"]["email"], "user-1@example.com", "{s}");
        assert!(s.get("error").is_none(), "{s}");
    }
    assert_eq!(op.refresh_count().await, 1);
    let after = db.get_account("user-1", "oidc").await.unwrap().unwrap();
    assert_ne!(after.access_token, before.access_token);
    assert_ne!(after.refresh_token, before.refresh_token);
    db.close().await;
    pg::admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}
