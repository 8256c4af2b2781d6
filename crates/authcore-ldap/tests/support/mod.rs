//! Shared by the tests: a real OpenLDAP `slapd` on loopback ([`Slapd`]), the settings that
//! reach it, and a credentials sign-in through an authcore handler.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

pub mod slapd;

use std::sync::Arc;

use authcore::adapter::MemoryAdapter;
use authcore::providers::CredentialsProvider;
use authcore::{Auth, AuthConfig};
use authcore_ldap::{LdapSettings, LdapSource};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
pub use slapd::{BASE_DN, Slapd};

/// The handler's secret and its public URL.
pub const SECRET: &str = "secret-xxxxxxxxxxxxxxxxxxxxxxxxx";
const ORIGIN: &str = "https://authjs.test";
const CSRF_COOKIE: &str = "__Host-authjs.csrf-token";
/// The session cookie of a signed-in browser.
pub const SESSION_COOKIE: &str = "__Secure-authjs.session-token";

/// The passwords of the seeded entries.
pub const ALICE_PASSWORD: &str = "alice-password";
pub const BOB_PASSWORD: &str = "bob-password";
pub const STAR_PASSWORD: &str = "star-password";
pub const VICTIM_PASSWORD: &str = "victim-password";

/// Settings for `slapd` over plain LDAP, bound as its service account, groups from
/// `memberOf` when the overlay is there, else by a group search.
pub fn settings(slapd: &Slapd) -> LdapSettings {
    let mut settings = LdapSettings::new(
        slapd.ldap_url(),
        slapd::SERVICE_DN,
        slapd::SERVICE_PASSWORD,
        BASE_DN,
    );
    if !slapd.memberof {
        settings.group_base_dn = Some(slapd::GROUPS_DN.to_owned());
    }
    settings
}

/// `settings` with groups read by a group search.
pub fn group_search_settings(slapd: &Slapd) -> LdapSettings {
    let mut settings = settings(slapd);
    settings.group_base_dn = Some(slapd::GROUPS_DN.to_owned());
    settings
}

pub fn source(settings: LdapSettings) -> LdapSource {
    LdapSource::new(settings).expect("valid settings")
}

/// An authcore handler with `source`'s credentials provider over `adapter`.
pub fn auth(source: LdapSource, adapter: MemoryAdapter) -> Auth {
    let config = AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .adapter(adapter)
        // Database sessions for the source's users, as the server has them.
        .credentials_database_sessions(true)
        .provider(CredentialsProvider::from_source(Arc::new(source)))
        .build()
        .expect("config");
    Auth::new(config)
}

/// What the handler answered.
pub struct Answer {
    pub status: http::StatusCode,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
}

impl Answer {
    /// Whether a session cookie was set.
    pub fn signed_in(&self) -> bool {
        self.set_cookies
            .iter()
            .any(|c| c.starts_with(&format!("{SESSION_COOKIE}=")) && !c.contains("Max-Age=0"))
    }
}

/// `POST /auth/callback/ldap` with a valid CSRF pair, `username` and `password`.
pub async fn sign_in(auth: &Auth, username: &str, password: &str) -> Answer {
    let token = "a".repeat(64);
    let cookie = authcore::csrf::csrf_cookie_value(&token, SECRET).replace('|', "%7C");
    let body: String = [
        ("csrfToken", token.as_str()),
        ("username", username),
        ("password", password),
        ("callbackUrl", "/dashboard"),
    ]
    .iter()
    .map(|(k, v)| format!("{k}={}", percent_encode(v)))
    .collect::<Vec<_>>()
    .join("&");
    let request = http::Request::post(format!("{ORIGIN}/auth/callback/ldap"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", format!("{CSRF_COOKIE}={cookie}"))
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = auth.handle(request).await;
    let (parts, body) = response.into_parts();
    let _ = body.collect().await;
    Answer {
        status: parts.status,
        location: parts
            .headers
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned()),
        set_cookies: parts
            .headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect(),
    }
}

/// Form encoding: every byte but unreserved ones as `%XX`.
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
