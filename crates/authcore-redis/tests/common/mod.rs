//! Test helpers: a Redis adapter under a random key prefix that is wiped afterwards, so
//! parallel test runs never see each other's keys.
#![allow(dead_code, clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

use authcore_redis::{ConnectOptions, RedisAdapter};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

/// How to start the Redis these tests need.
pub const START_HINT: &str = "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 \
     --save \"\" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log";

/// The Redis under test: `AUTHCORE_TEST_REDIS_URL`, default `redis://127.0.0.1:6379/`.
pub fn redis_url() -> String {
    std::env::var("AUTHCORE_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

fn unreachable(url: &str, why: &dyn std::fmt::Display) -> ! {
    panic!(
        "these tests need a running Redis at {url} (set AUTHCORE_TEST_REDIS_URL to use another); \
         it is not reachable ({why}). Start it with:\n    {START_HINT}"
    )
}

/// Options that fail fast when Redis is down.
pub fn fast_options() -> ConnectOptions {
    ConnectOptions::default()
        .connection_timeout(Duration::from_secs(2))
        .response_timeout(Duration::from_secs(5))
        .reconnect_attempts(1)
}

/// A plain connection for looking at keys directly.
pub async fn raw_connection() -> MultiplexedConnection {
    let url = redis_url();
    let client = redis::Client::open(url.as_str()).unwrap_or_else(|e| unreachable(&url, &e));
    match tokio::time::timeout(
        Duration::from_secs(5),
        client.get_multiplexed_async_connection(),
    )
    .await
    {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => unreachable(&url, &e),
        Err(_) => unreachable(&url, &"timed out"),
    }
}

/// An adapter under its own prefix, plus a raw connection.
#[derive(Clone)]
pub struct TestDb {
    pub adapter: RedisAdapter,
    pub raw: MultiplexedConnection,
    pub prefix: String,
}

impl TestDb {
    /// `prefix + rest`.
    pub fn key(&self, rest: &str) -> String {
        format!("{}{rest}", self.prefix)
    }

    /// All keys under the prefix (without it), sorted, each once.
    pub async fn keys(&self) -> Vec<String> {
        let mut conn = self.raw.clone();
        let mut found: Vec<String> = Vec::new();
        {
            let mut iter = conn
                .scan_match::<_, String>(format!("{}*", self.prefix))
                .await
                .unwrap();
            while let Some(key) = iter.next_item().await {
                found.push(key.unwrap());
            }
        }
        let mut keys: Vec<String> = found
            .into_iter()
            .map(|k| k[self.prefix.len()..].to_owned())
            .collect();
        // SCAN may return a key more than once (while the keyspace is rehashed).
        keys.sort();
        keys.dedup();
        keys
    }

    /// Raw string value of `prefix + rest`.
    pub async fn get(&self, rest: &str) -> Option<String> {
        self.raw.clone().get(self.key(rest)).await.unwrap()
    }

    /// Raw JSON value of `prefix + rest`.
    pub async fn get_json(&self, rest: &str) -> serde_json::Value {
        let raw = self
            .get(rest)
            .await
            .unwrap_or_else(|| panic!("key {rest} is missing"));
        serde_json::from_str(&raw).unwrap()
    }

    /// Members of the set `prefix + rest`, without the prefix, sorted.
    pub async fn members(&self, rest: &str) -> Vec<String> {
        let members: Vec<String> = self.raw.clone().smembers(self.key(rest)).await.unwrap();
        let mut members: Vec<String> = members
            .into_iter()
            .map(|m| m.strip_prefix(&self.prefix).unwrap_or(&m).to_owned())
            .collect();
        members.sort();
        members
    }

    /// Remaining time to live of `prefix + rest` in milliseconds (`PTTL`: -1 none, -2 gone).
    pub async fn pttl(&self, rest: &str) -> i64 {
        self.raw.clone().pttl(self.key(rest)).await.unwrap()
    }

    /// Writes a raw string at `prefix + rest`.
    pub async fn set_raw(&self, rest: &str, value: &str) {
        let _: () = self.raw.clone().set(self.key(rest), value).await.unwrap();
    }

    /// Deletes every key under the prefix (SCAN + DEL).
    pub async fn wipe(&self) {
        let keys = self.keys().await;
        if !keys.is_empty() {
            let full: Vec<String> = keys.iter().map(|k| self.key(k)).collect();
            let _: i64 = self.raw.clone().del(full).await.unwrap();
        }
    }
}

/// A fresh [`TestDb`]; panics with a how-to-start message when Redis is down.
pub async fn test_db() -> TestDb {
    let url = redis_url();
    let raw = raw_connection().await;
    let prefix = format!("authcore-test:{}:", uuid::Uuid::new_v4());
    let adapter = RedisAdapter::connect_with(&url, fast_options())
        .await
        .unwrap_or_else(|e| unreachable(&url, &e))
        .with_prefix(&prefix);
    TestDb {
        adapter,
        raw,
        prefix,
    }
}

/// Runs `body` against a fresh [`TestDb`] and deletes its keys afterwards, also when the
/// body panics (the panic is then resumed).
pub async fn with_db<F, Fut>(body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let db = test_db().await;
    let outcome = tokio::spawn(body(db.clone())).await;
    db.wipe().await;
    if let Err(e) = outcome {
        match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("test task failed: {e}"),
        }
    }
}
