//! `RedisRateLimitStore` against a real Redis: counts, lock-out, reset, expiry, and two
//! instances counting one key concurrently never let more than the limit through.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::time::Duration;

use authcore::ratelimit::{RateLimit, RateLimitStore};
use common::with_db;
use redis::AsyncCommands;

/// The shared rate-limit store conformance suite, twice at once on one keyspace (as two
/// instances would share it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    with_db(|db| async move {
        let (a, b) = (
            db.adapter.rate_limit_store(),
            db.adapter.clone().rate_limit_store(),
        );
        tokio::join!(
            authcore_conformance::rate_limit::run_all(&a),
            authcore_conformance::rate_limit::run_all(&b)
        );
    })
    .await;
}

#[tokio::test]
async fn counts_lock_and_reset() {
    with_db(|db| async move {
        let store = db.adapter.rate_limit_store();
        let limit = RateLimit::new(3, Duration::from_secs(60)).lockout(Duration::from_secs(120));
        for _ in 0..3 {
            assert_eq!(store.count("k", &limit).await.unwrap(), None);
        }
        assert_eq!(store.lockout_left("k").await.unwrap(), None);
        assert_eq!(
            store.count("k", &limit).await.unwrap(),
            Some(Duration::from_secs(120))
        );
        let left = store.lockout_left("k").await.unwrap().unwrap();
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
        assert_eq!(store.lockout_left("k").await.unwrap(), None);
        assert_eq!(store.count("k", &limit).await.unwrap(), None);
        assert_eq!(store.lockout_left("other").await.unwrap(), None);
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

#[tokio::test]
async fn give_back_returns_one_event_and_counts_and_locks_have_separate_namespaces() {
    with_db(|db| async move {
        let store = db.adapter.rate_limit_store();
        let limit = RateLimit::new(2, Duration::from_secs(60));
        assert_eq!(store.count("k", &limit).await.unwrap(), None);
        assert_eq!(store.count("k", &limit).await.unwrap(), None);
        store.give_back("k").await.unwrap();
        assert_eq!(store.count("k", &limit).await.unwrap(), None);
        assert!(store.count("k", &limit).await.unwrap().is_some());
        // A lock is not lifted by giving back, and never goes below zero elsewhere.
        store.give_back("k").await.unwrap();
        assert!(store.lockout_left("k").await.unwrap().is_some());
        for _ in 0..3 {
            store.give_back("fresh").await.unwrap();
        }
        let one = RateLimit::new(1, Duration::from_secs(60));
        assert_eq!(store.count("fresh", &one).await.unwrap(), None);
        assert!(store.count("fresh", &one).await.unwrap().is_some());
        // Keys named like another key's lock or count stay their own.
        for steer in ["k:lock", "lock:k", "count:k", "k:count"] {
            assert_eq!(store.lockout_left(steer).await.unwrap(), None, "{steer}");
            assert_eq!(store.count(steer, &limit).await.unwrap(), None, "{steer}");
            store.reset(steer).await.unwrap();
        }
        assert!(store.lockout_left("k").await.unwrap().is_some());
        let mut keys = db.keys().await;
        keys.sort();
        assert!(
            keys.iter()
                .all(|k| k.starts_with("ratelimit:count:") || k.starts_with("ratelimit:lock:")),
            "{keys:?}"
        );
    })
    .await;
}
