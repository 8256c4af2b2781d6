//! Helpers shared by the test modules (`crate::support::…`).
#![allow(dead_code)]

pub mod binary;
pub mod browser;
pub mod fault_proxy;
pub mod in_memory;
pub mod mysql;
#[path = "../../../authcore/tests/support/oauth_flow.rs"]
pub mod oauth_flow;
#[path = "../../../authcore/tests/support/oidc_provider.rs"]
pub mod oidc_provider;
pub mod pg;
#[path = "../../../authcore-ldap/tests/support/slapd.rs"]
pub mod slapd;
#[path = "../../../authcore-smtp/tests/support/smtp.rs"]
pub mod smtp;
#[path = "../../../authcore/tests/support/soft_authenticator.rs"]
pub mod soft_authenticator;
pub mod sso;
#[path = "../../../authcore/tests/support/totp.rs"]
pub mod totp;
