//! Two `authcore-server` instances sharing Redis (`AUTHCORE_REDIS_URL`) share the
//! brute-force counts: failures on either instance add up to one lock-out.
#![allow(clippy::unwrap_used)]

use crate::support::binary;

use binary::ServerProcess;

async fn sign_in(base: &str, username: &str) -> String {
    let client = binary::browser();
    let token = binary::csrf_token(&client, base).await;
    let res = client
        .post(format!("{base}/auth/callback/credentials"))
        .form(&[
            ("csrfToken", token.as_str()),
            ("username", username),
            ("password", "wrong"),
        ])
        .send()
        .await
        .unwrap();
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    location
        .split("error=")
        .nth(1)
        .unwrap_or_default()
        .split('&')
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_the_counts_in_redis() {
    let redis = std::env::var("AUTHCORE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let config = "[rate_limits]\ncredentials_per_identifier = { limit = 4, window = 60 }\n";
    let env = [("AUTHCORE_REDIS_URL", redis.as_str())];
    let mut a = ServerProcess::spawn(&env, Some(config));
    let mut b = ServerProcess::spawn(&env, Some(config));
    let (a, b) = (a.base_url(), b.base_url());
    // A name of this run only, so runs and other tests do not share its count.
    let user = format!("shared-{}-{}", std::process::id(), rand_suffix());
    let mut seen = Vec::new();
    for base in [&a, &b, &a, &b, &a, &b] {
        seen.push(sign_in(base, &user).await);
    }
    assert_eq!(
        seen,
        [
            "CredentialsSignin",
            "CredentialsSignin",
            "CredentialsSignin",
            "CredentialsSignin",
            "RateLimited",
            "RateLimited"
        ]
    );
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
