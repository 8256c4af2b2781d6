//! The logger interface (Auth.js `lib/utils/logger.ts`) with a default on `tracing`.
//!
//! The default logger writes through the `tracing` facade, which prints nothing until the
//! application installs a subscriber: without one, every `[auth][error]` line is lost. One
//! line at start-up installs one (from the `tracing-subscriber` crate):
//!
//! ```ignore
//! tracing_subscriber::fmt::init(); // `RUST_LOG=authcore=debug` for the debug channel too
//! ```
//!
//! Or route the lines elsewhere with your own [`Logger`]
//! (`AuthConfig::builder().logger(..)`).
//! Log lines never carry secrets: errors are rendered from their type and message, and
//! no cookie value, token or secret is put into an error message by authcore.

mod debug_adapter;

pub(crate) use debug_adapter::DebugAdapter;

use std::error::Error as _;
use std::fmt::Write as _;

use serde_json::Value;

use crate::error::AuthError;

/// Warning codes (Auth.js `warnings.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningCode {
    /// `debug` is on.
    DebugEnabled,
    /// CSRF checks are disabled.
    CsrfDisabled,
    /// `AUTH_URL` has a path and a base path is configured too.
    EnvUrlBasepathRedundant,
    /// `AUTH_URL`'s path differs from the base path.
    EnvUrlBasepathMismatch,
    /// WebAuthn is experimental.
    ExperimentalWebauthn,
}

/// Serialised as the Auth.js code (`"debug-enabled"` …).
impl serde::Serialize for WarningCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl WarningCode {
    /// The Auth.js code.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::DebugEnabled => "debug-enabled",
            WarningCode::CsrfDisabled => "csrf-disabled",
            WarningCode::EnvUrlBasepathRedundant => "env-url-basepath-redundant",
            WarningCode::EnvUrlBasepathMismatch => "env-url-basepath-mismatch",
            WarningCode::ExperimentalWebauthn => "experimental-webauthn",
        }
    }
}

/// Receives authcore's errors, warnings and debug messages. Replace it to route them
/// elsewhere; each method has a default on `tracing` (which needs a subscriber installed
/// to print anything: see the [module docs](self)).
pub trait Logger: Send + Sync + 'static {
    /// An error (also for errors that were handled and turned into a response).
    fn error(&self, error: &AuthError) {
        log_error_with_tracing(error);
    }
    /// A configuration warning.
    fn warn(&self, code: WarningCode) {
        tracing::warn!(
            target: "authcore",
            code = code.as_str(),
            "[auth][warn][{}] Read more: https://warnings.authjs.dev",
            code.as_str()
        );
    }
    /// Whether this logger wants debug messages even without `debug(true)` (Auth.js calls
    /// a user-supplied `logger.debug` always). Off by default, so installing a logger adds
    /// no per-request debug work; read once, when the configuration is built.
    fn debug_enabled(&self) -> bool {
        false
    }
    /// A debug message; only called when `debug` is on or [`Logger::debug_enabled`] says so.
    fn debug(&self, message: &str, metadata: &Value) {
        tracing::debug!(target: "authcore", "[auth][debug]: {message} {metadata}");
    }
}

/// Where an error's log line points for its cause and fix: the section of the error code in
/// this repository's troubleshooting page (`#<code in lower case>`), in place of Auth.js's
/// `https://errors.authjs.dev#<code>`, which describes Auth.js.
pub(crate) const TROUBLESHOOTING: &str = "docs/manual/troubleshooting.md";

/// Formats an error like Auth.js: `[auth][error] <type>: <message>. Read more at
/// docs/manual/troubleshooting.md#<type>` and the cause chain, at `WARN` for client-caused
/// errors and `ERROR` otherwise.
pub fn log_error_with_tracing(error: &AuthError) {
    let mut causes = String::new();
    let message = error.to_string();
    if !message.contains(TROUBLESHOOTING) {
        let _ = write!(
            causes,
            ". Read more at {TROUBLESHOOTING}#{}",
            error.error_type().to_ascii_lowercase()
        );
    }
    let mut src = error.source();
    while let Some(e) = src {
        causes.push_str(" [auth][cause]: ");
        causes.push_str(&e.to_string());
        src = e.source();
    }
    // Errors the client caused and may see (wrong password, missing CSRF token, refused
    // sign-in) are warnings; everything else points at the server and is an error.
    if error.is_client_safe() {
        tracing::warn!(
            target: "authcore",
            error_type = error.error_type(),
            "[auth][error] {}: {}{}",
            error.error_type(),
            message,
            causes
        );
    } else {
        tracing::error!(
            target: "authcore",
            error_type = error.error_type(),
            "[auth][error] {}: {}{}",
            error.error_type(),
            message,
            causes
        );
    }
}

/// The default logger on `tracing`. Its lines reach nobody until a `tracing` subscriber is
/// installed (see the [module docs](self)).
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingLogger;

impl Logger for TracingLogger {}
