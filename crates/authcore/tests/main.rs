//! authcore's integration tests, in one binary (one link instead of one per file): a module
//! per action or feature, the shared helpers in `common/` and `support/`.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

mod common;
#[path = "support/interop_node.rs"]
mod interop_node;
#[path = "support/oauth_flow.rs"]
mod oauth_flow;
#[path = "support/oidc_provider.rs"]
mod oidc_provider;
#[path = "support/soft_authenticator.rs"]
mod soft_authenticator;
#[path = "support/totp.rs"]
mod totp;
#[path = "support/webhook_receiver.rs"]
mod webhook_receiver;

mod account_management;
mod account_page;
mod action_callback_credentials;
mod action_csrf;
mod action_error;
mod action_providers;
mod action_session;
mod action_signin;
mod action_signout;
mod action_verify_request;
mod admin;
mod admin_page;
mod assert_config;
mod audit_sinks;
mod authorize_request;
mod bad_input_logging;
mod callbacks_events;
mod catalog_presets;
mod cookie_overrides;
mod database_sessions;
mod debug_logging;
mod email_services;
mod email_signin;
mod env_defaults;
mod get_token;
mod host_trust;
mod hostile_redirects;
mod interop_authjs;
mod jwt_revocation;
mod mail_only_email;
mod module_graph;
mod oauth_adapter_linking;
mod oauth_entra_multitenant;
mod oauth_oidc_provider;
mod oauth_redirect_proxy;
mod oauth_refresh;
mod organization_routes;
mod organizations;
mod pages;
mod password_breaches;
mod password_self_service;
mod password_sign_in;
mod rate_limits;
mod routing_and_bad_input;
mod secret_rotation;
mod security_notices;
mod sensitive_changes;
mod session_token_codec;
mod sessions_only;
mod sign_up_policy;
mod soft_authenticator_selftest;
mod troubleshooting;
mod two_factor;
mod webauthn;
