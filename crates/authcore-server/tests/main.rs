//! authcore-server's integration tests, in one binary (one link instead of one per file): a
//! module per feature, the shared helpers in `support/`. The tests that drive a browser,
//! the Node server of the differential suite, connection floods or load with faults run
//! one at a time beside the others (the `heavy` group of `.config/nextest.toml`, which runs
//! every test in a process of its own).
#![allow(clippy::unwrap_used)]

mod support;

mod account_routes;
mod admin;
mod attempt_accounting;
mod audit;
mod backchannel_logout;
mod browser_admin;
mod browser_organizations;
mod browser_pages;
mod browser_passwords;
mod browser_shared_session;
mod browser_two_factor;
mod browser_webauthn;
mod cli_providers;
mod demo;
mod device_flow;
mod differential;
mod gateway;
mod gateway_proxies;
mod hygiene;
mod ldap_sso;
mod load_faults;
mod manual;
mod oidc_ed25519;
mod oidc_organizations;
mod oidc_pushed_requests;
mod openid_provider;
mod ops;
mod organizations;
mod password_accounts;
mod password_self_service;
mod rate_limits;
mod refresh_instances;
mod request_log;
mod sensitive_changes;
mod sign_in_methods;
mod sign_up;
mod store_outages;
mod users_file;
