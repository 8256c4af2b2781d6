//! authcore-redis's integration tests against a real Redis, in one binary: the shared
//! conformance suite, outages, the rate-limit store and the adapter's own behaviour; the
//! helpers in `common/`.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../authcore/tests/support/totp.rs"]
mod totp;

mod conformance;
mod fault;
mod organizations;
mod rate_limit;
mod redis_adapter;
mod two_factor;
