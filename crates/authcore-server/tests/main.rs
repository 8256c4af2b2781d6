//! authcore-server's integration tests, in one binary (one link instead of one per file): a
//! module per feature, the shared helpers in `support/`. The tests that drive a browser,
//! the Node server of the differential suite, connection floods or load with faults are
//! binaries of their own (see `Cargo.toml`).
#![allow(clippy::unwrap_used)]

mod support;

mod account_routes;
mod attempt_accounting;
mod cli_providers;
mod demo;
mod gateway;
mod gateway_proxies;
mod manual;
mod openid_provider;
mod ops;
mod rate_limits;
mod refresh_instances;
mod request_log;
