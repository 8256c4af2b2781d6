//! The error carried inside [`AdapterError::Backend`] by this adapter.
//!
//! Messages name the operation and the failure class only: never a key, a stored value, a
//! token or the connection URL (which may hold a password). That is why neither the
//! `redis` error nor the `serde_json` error is kept as a source: both can quote the data
//! they choked on.

use std::fmt;

use authcore::adapter::AdapterError;

/// What went wrong, coarsely.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendErrorKind {
    /// The URL or the connection settings were rejected.
    Config,
    /// Redis could not be reached, the connection dropped or a call timed out.
    Connection,
    /// Redis answered with an error (e.g. `WRONGTYPE`, a script error).
    Server,
    /// A stored record is not the JSON this adapter expects.
    Data,
    /// A record changed under us too many times in a row (optimistic update gave up).
    Contention,
}

/// A failure of the Redis backend; found behind [`AdapterError::Backend`] (downcast the
/// source to read [`RedisBackendError::kind`]).
#[derive(Debug, Clone)]
pub struct RedisBackendError {
    kind: BackendErrorKind,
    operation: &'static str,
    detail: String,
}

impl RedisBackendError {
    /// The failure class.
    pub fn kind(&self) -> BackendErrorKind {
        self.kind
    }

    /// The adapter method (Auth.js name) or step that failed, e.g. `getSessionAndUser`.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    pub(crate) fn new(kind: BackendErrorKind, operation: &'static str, detail: String) -> Self {
        RedisBackendError {
            kind,
            operation,
            detail,
        }
    }

    /// A Redis client or server error, reduced to its class and server error code.
    pub(crate) fn from_redis(operation: &'static str, e: &redis::RedisError) -> Self {
        if crate::conn::is_breaker_open(e) {
            return RedisBackendError::new(
                BackendErrorKind::Connection,
                operation,
                "Redis unavailable (circuit breaker open until a background probe reaches it)"
                    .to_owned(),
            );
        }
        let kind = if crate::conn::is_connection_failure(e) {
            BackendErrorKind::Connection
        } else if matches!(e.kind(), redis::ErrorKind::InvalidClientConfig) {
            BackendErrorKind::Config
        } else if matches!(e.kind(), redis::ErrorKind::UnexpectedReturnType) {
            // e.g. a stored value that is not UTF-8 text.
            BackendErrorKind::Data
        } else {
            BackendErrorKind::Server
        };
        // `category()` is a fixed description of the error kind and `code()` a server error
        // code such as `WRONGTYPE`; `detail()` and `Display` may quote data, so are left out.
        let detail = match e.code() {
            Some(code) => format!("{} ({})", e.category(), code),
            None => e.category().to_owned(),
        };
        let detail = if e.is_timeout() {
            format!("{detail}, timed out")
        } else {
            detail
        };
        RedisBackendError::new(kind, operation, detail)
    }

    /// A stored record that does not decode; only the position and class are kept.
    pub(crate) fn from_json(operation: &'static str, e: &serde_json::Error) -> Self {
        let class = match e.classify() {
            serde_json::error::Category::Io => "i/o error",
            serde_json::error::Category::Syntax => "invalid JSON",
            serde_json::error::Category::Data => "unexpected JSON shape",
            serde_json::error::Category::Eof => "truncated JSON",
        };
        RedisBackendError::new(
            BackendErrorKind::Data,
            operation,
            format!(
                "stored record: {class} at line {} column {}",
                e.line(),
                e.column()
            ),
        )
    }
}

impl fmt::Display for RedisBackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "redis {}: {}", self.operation, self.detail)
    }
}

impl std::error::Error for RedisBackendError {}

impl From<RedisBackendError> for AdapterError {
    fn from(e: RedisBackendError) -> Self {
        AdapterError::Backend(Box::new(e))
    }
}

pub(crate) fn redis_err(operation: &'static str) -> impl Fn(redis::RedisError) -> AdapterError {
    move |e| RedisBackendError::from_redis(operation, &e).into()
}

pub(crate) fn data_err(operation: &'static str, detail: &str) -> AdapterError {
    RedisBackendError::new(BackendErrorKind::Data, operation, detail.to_owned()).into()
}
