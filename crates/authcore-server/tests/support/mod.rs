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
#[path = "../../../authcore/tests/support/webhook_receiver.rs"]
pub mod webhook_receiver;

/// The fenced block after the comment `<!-- <marker> -->` in `docs/<chapter>`: what the
/// documentation shows, as the tests read it.
pub fn documented(chapter: &str, marker: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(chapter);
    let doc = std::fs::read_to_string(&path).unwrap();
    let marker = format!("<!-- {marker} -->");
    let at = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("no {marker} in {}", path.display()));
    let after = &doc[at + marker.len()..];
    let body = &after[after.find("```").unwrap()..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_owned()
}
