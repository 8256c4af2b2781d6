//! Error types: [`Error`] for setting up, and the mapping of sqlx errors to
//! [`AdapterError`] for adapter calls.

use std::fmt;

use authcore::adapter::AdapterError;

/// Why connecting or migrating failed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL or path could not be parsed into connection options.
    #[error("invalid database URL or path")]
    InvalidUrl(#[source] sqlx::Error),
    /// The database could not be reached or opened.
    #[error("could not connect to the database")]
    Connect(#[source] sqlx::Error),
    /// Running the embedded migrations failed.
    #[error("database migration failed")]
    Migrate(#[source] sqlx::migrate::MigrateError),
}

/// The error inside [`AdapterError::Backend`]: which adapter operation failed and why.
///
/// Its messages never contain SQL or bound values: queries only use bind parameters, and
/// database errors are reported by code, constraint and the server's message.
pub(crate) struct BackendError {
    op: &'static str,
    summary: String,
    source: Option<sqlx::Error>,
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.summary)
    }
}

impl fmt::Debug for BackendError {
    // Deliberately not the sqlx error's Debug: a PostgreSQL error's `detail` repeats the
    // offending values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendError")
            .field("op", &self.op)
            .field("summary", &self.summary)
            .finish()
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Maps a sqlx error of operation `op`: unique violations become
/// [`AdapterError::Conflict`], everything else [`AdapterError::Backend`].
pub(crate) fn map_sqlx(op: &'static str) -> impl FnOnce(sqlx::Error) -> AdapterError {
    move |e| {
        if let sqlx::Error::Database(db) = &e {
            let which = db.constraint().unwrap_or_else(|| db.message());
            if db.is_unique_violation() {
                return AdapterError::Conflict(format!("{op}: already exists ({which})"));
            }
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let summary = format!("database error {code}: {}", db.message());
            return AdapterError::Backend(Box::new(BackendError {
                op,
                summary,
                source: Some(e),
            }));
        }
        // The other variants' messages are sqlx's own and carry no bound values.
        let summary = e.to_string();
        AdapterError::Backend(Box::new(BackendError {
            op,
            summary,
            source: Some(e),
        }))
    }
}

/// A backend error that is not a sqlx error (bad stored data, an id of the wrong shape).
pub(crate) fn data_error(op: &'static str, what: &str) -> AdapterError {
    AdapterError::Backend(Box::new(BackendError {
        op,
        summary: what.to_owned(),
        source: None,
    }))
}

/// An operation that did not finish within the adapter's timeout (the database is down,
/// silent or overloaded).
pub(crate) fn timed_out(op: &'static str, after: std::time::Duration) -> AdapterError {
    AdapterError::Backend(Box::new(BackendError {
        op,
        summary: format!(
            "no answer from the database within {} ms",
            after.as_millis()
        ),
        source: None,
    }))
}
