//! The shared adapter conformance suite (`authcore::adapter::conformance`) against Redis.
#![allow(clippy::unwrap_used)]

mod common;

use authcore::adapter::conformance::{Options, run_all_with};

/// Unused magic-link tokens are left to their Redis expiry when a user is deleted (they are
/// keyed by address and token, without an index to find them by).
fn options() -> Options {
    Options::default().deletes_user_tokens(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    common::with_db(|db| async move {
        run_all_with(db.adapter, options()).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_twice_in_parallel_on_one_keyspace() {
    // The suite uses random names, so two runs sharing one prefix must not disturb each other.
    common::with_db(|db| async move {
        tokio::join!(
            run_all_with(db.adapter.clone(), options()),
            run_all_with(db.adapter, options()),
        );
    })
    .await;
}
