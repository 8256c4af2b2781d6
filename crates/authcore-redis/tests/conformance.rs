//! The shared adapter conformance suite (`authcore-conformance`) against Redis.
#![allow(clippy::unwrap_used)]

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    common::with_db(|db| async move {
        authcore_conformance::run_all(db.adapter.clone()).await;
        // The keyspace is this test's own: pruning deletes no other run's records.
        authcore_conformance::admin::audit_prune(&db.adapter).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_twice_in_parallel_on_one_keyspace() {
    // The suite uses random names, so two runs sharing one prefix must not disturb each other.
    common::with_db(|db| async move {
        tokio::join!(
            authcore_conformance::run_all(db.adapter.clone()),
            authcore_conformance::run_all(db.adapter),
        );
    })
    .await;
}
