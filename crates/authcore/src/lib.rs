//! # authcore
//!
//! The authentication core for Rust web services: a wire-compatible implementation of the
//! Auth.js core (`@auth/core`). Hand [`Auth`] an `http::Request` and it runs the action the
//! URL names (`/auth/session`, `/auth/signin`, `/auth/callback/:provider` …) and returns the
//! `http::Response`, with the same paths, cookies, JSON shapes, error codes and session-token
//! format as Auth.js, so an Auth.js front end and an authcore back end share one session.
//!
//! ```
//! use authcore::{Auth, AuthConfig, User};
//! use authcore::providers::{CredentialField, CredentialsProvider};
//!
//! let config = AuthConfig::builder()
//!     .secret("use AUTH_SECRET or a long random value")
//!     .trust_host(true)
//!     .provider(
//!         CredentialsProvider::new()
//!             .field("username", CredentialField::new("Username"))
//!             .authorize(|credentials, _request| async move {
//!                 let name = credentials.get("username").and_then(|v| v.as_str());
//!                 Ok((name == Some("ada")).then(|| User::with_id("1").name("Ada")))
//!             }),
//!     )
//!     .build()
//!     .expect("valid configuration");
//! let auth = Auth::new(config);
//!
//! // Everything a host needs is re-exported: `authcore::http`, `authcore::http_body_util` …
//! use authcore::http_body_util::{BodyExt, Full};
//! # async fn run(auth: Auth) {
//! let request = authcore::http::Request::get("http://localhost:3000/auth/providers")
//!     .body(Full::new(authcore::bytes::Bytes::new()))
//!     .expect("a valid request");
//! let response = auth.handle(request).await;
//! assert_eq!(response.status(), 200);
//! let body = response.into_body().collect().await.expect("in memory").to_bytes();
//! let providers: authcore::serde_json::Value = authcore::serde_json::from_slice(&body).unwrap();
//! assert_eq!(providers["credentials"]["type"], "credentials");
//! # }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(run(auth));
//! ```
#![forbid(unsafe_code)]
// What the optional provider types share (the sign-in steps, single-use marks, cookies of
// the OAuth checks …) lies unused in a build that leaves them out; the full build is held
// to every lint.
#![cfg_attr(
    not(all(
        feature = "oauth",
        feature = "email",
        feature = "webauthn",
        feature = "pages",
        feature = "rate-limit",
        feature = "metrics"
    )),
    allow(dead_code, unused_imports, unused_mut, unused_variables)
)]

pub mod account;
mod actions;
pub mod adapter;
pub mod admin;
pub mod audit;
mod box_error;
#[cfg(feature = "pages")]
mod brand_icons;
pub mod breaker;
mod byte_class;
pub mod callbacks;
mod checks;
pub mod config;
pub mod cookies;
mod crypto;
// `csrf`, `hosts`, `jose`, `request` and `response` are internals that the workspace's other
// crates, the fuzz targets and the benchmarks reach: hidden from the documentation and not
// part of the API (what hosts need of them is re-exported below).
#[doc(hidden)]
pub mod csrf;
mod email_address;
pub mod env;
pub mod error;
#[cfg(test)]
mod feature_tests;
mod handler;
#[doc(hidden)]
pub mod hosts;
pub mod http_client;
#[doc(hidden)]
pub mod jose;
pub mod jwt;
pub mod logger;
#[cfg(feature = "oauth")]
pub mod oauth;
pub mod organizations;
#[cfg(feature = "passwords")]
pub mod passwords;
pub mod providers;
pub mod random;
pub mod ratelimit;
#[doc(hidden)]
pub mod request;
#[doc(hidden)]
pub mod response;
mod session_json;
mod session_read;
mod sign_up;
mod site;
#[cfg(feature = "pages")]
mod spliced;
pub mod telemetry;
mod theme;
#[cfg(feature = "two-factor")]
pub mod two_factor;
pub mod types;
#[cfg(feature = "webauthn")]
mod webauthn;

pub use async_trait::async_trait;
pub use config::{AuthConfig, AuthConfigBuilder, DangerousOptions, SessionStrategy};
pub use error::{AuthError, BoxError, ConfigError, ErrorKind};
pub use handler::{Auth, RawResult, WeakAuth};
pub use request::ClientAddr;
pub use response::{RawBody, RawResponse, ResponseBody};
pub use session_json::{SessionJson, SignInInfo, StepUp};
pub use session_read::{GetTokenOptions, ReadOptions, SessionRead, SessionSlot};
pub use sign_up::SignUpPolicy;
pub use types::{
    Account, Authenticator, ColorScheme, JsonObject, PagesOptions, Profile, ProviderType, Session,
    SessionUser, Theme, TokenSet, User,
};
/// The crates in authcore's public API, re-exported so a host needs nothing but `authcore`
/// to build requests, read responses and write callbacks (versions always match).
pub use {bytes, http, http_body, http_body_util, serde_json, time, url};

/// The README's examples, compiled as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The manual's provider examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/manual/providers.md")]
pub struct ManualDoctests;
