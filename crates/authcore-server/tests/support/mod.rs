//! Helpers shared by the test modules (`crate::support::…`): each binary that includes
//! this module uses some of them only.
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
#[path = "../../../authcore/tests/support/totp.rs"]
pub mod totp;
