//! `RedisRateLimitStore` against a real Redis: counts, lock-out, reset, expiry, and two
//! instances counting one key concurrently never let more than the limit through.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use authcore::ratelimit::{RateLimit, RateLimitStore};
use common::with_db;
use redis::AsyncCommands;

#[tokio::test]
async fn counts_lock_and_reset() {
    with_db(|db| async move {
        let store = db.adapter.rate_limit_store();
        let limit = RateLimit::new(3, Duration::from_secs(60)).lockout(Duration::from_secs(120));
        for _ in 0..3 {
            assert_eq!(store.count("k", &limit).await.unwrap(), None);
        }
        assert_eq!(store.locked("k").await.unwrap(), None);
        assert_eq!(
            store.count("k", &limit).await.unwrap(),
            Some(Duration::from_secs(120))
        );
        let left = store.locked("k").await.unwrap().unwrap();
        assert!(left > Duration::from_secs(118) && left <= Duration::from_secs(120));
        // Locked: further events are refused without counting.
        assert!(store.count("k", &limit).await.unwrap().is_some());
        // Every key it wrote expires by itself.
        let mut raw = db.raw.clone();
        for key in db.keys().await {
            let ttl: i64 = raw.pttl(db.key(&key)).await.unwrap();
            assert!(ttl > 0, "{key} has no expiry");
        }
        store.reset("k").await.unwrap();
        assert_eq!(store.locked("k").await.unwrap(), None);
        assert_eq!(store.count("k", &limit).await.unwrap(), None);
        assert_eq!(store.locked("other").await.unwrap(), None);
    })
    .await;
}

#[tokio::test]
async fn two_instances_never_let_more_than_the_limit_through() {
    with_db(|db| async move {
        let a = db.adapter.rate_limit_store();
        let b = db.adapter.clone().rate_limit_store();
        let limit = RateLimit::new(10, Duration::from_secs(60));
        let mut tasks = Vec::new();
        for i in 0..50 {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            tasks.push(tokio::spawn(async move {
                store.count("shared", &limit).await.unwrap().is_none()
            }));
        }
        let mut allowed = 0;
        for t in tasks {
            allowed += usize::from(t.await.unwrap());
        }
        assert_eq!(allowed, 10);
    })
    .await;
}
