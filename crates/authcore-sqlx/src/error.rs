//! Error types: [`Error`] for setting up, and the mapping of sqlx errors to
//! [`AdapterError`] for adapter calls.

use std::fmt;

use authcore::adapter::AdapterError;
use authcore::breaker::Outage;

/// Why connecting or migrating failed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL or path could not be parsed into connection options.
    #[error("invalid database URL or path")]
    InvalidUrl(#[source] sqlx::Error),
    /// The URL names a database this build does not support (its scheme is given).
    #[error("unsupported database URL scheme {0:?} (this build reads: {urls})", urls = enabled_urls())]
    UnsupportedUrl(String),
    /// The database could not be reached or opened.
    #[error("could not connect to the database")]
    Connect(#[source] sqlx::Error),
    /// Running the embedded migrations failed.
    #[error("database migration failed")]
    Migrate(#[source] sqlx::migrate::MigrateError),
}

/// The URL forms [`crate::SqlxAdapter::connect`] accepts in this build.
fn enabled_urls() -> String {
    [
        (cfg!(feature = "sqlite"), "sqlite: or a file path"),
        (cfg!(feature = "postgres"), "postgres://"),
        (cfg!(feature = "mysql"), "mysql:// or mariadb://"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, urls)| *urls)
    .collect::<Vec<_>>()
    .join(", ")
}

/// The error inside [`AdapterError::Backend`]: which adapter operation failed and why.
///
/// Its messages never contain SQL or bound values: queries only use bind parameters, and
/// database errors are reported by code, constraint and the server's message.
pub(crate) struct BackendError {
    op: &'static str,
    summary: String,
    source: Option<sqlx::Error>,
    /// How the failure says the database is unreachable ([`outage`]), if it does: what
    /// the circuit breaker is told.
    outage: Option<Outage>,
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
            if db.is_unique_violation() {
                let which = db
                    .constraint()
                    .map_or_else(|| without_values(db.message()), str::to_owned);
                return AdapterError::Conflict(format!("{op}: already exists ({which})"));
            }
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let summary = format!("database error {code}: {}", without_values(db.message()));
            return AdapterError::Backend(Box::new(BackendError {
                op,
                summary,
                outage: outage(&e),
                source: Some(e),
            }));
        }
        // The other variants' messages are sqlx's own and carry no bound values.
        let summary = e.to_string();
        AdapterError::Backend(Box::new(BackendError {
            op,
            summary,
            outage: outage(&e),
            source: Some(e),
        }))
    }
}

/// How `e` says the database is unreachable, if it does rather than that a statement
/// failed: no connection within the bound (sqlx retries a refused connection until then) is
/// an [`Outage::Timeout`]; a connection that broke or could not be opened, and a server
/// shutting down or refusing connections (SQLSTATE class `08`, PostgreSQL's
/// `57P01`–`57P03`), an [`Outage::Connection`]. A closed pool is the host's doing, not an
/// outage.
pub(crate) fn outage(e: &sqlx::Error) -> Option<Outage> {
    match e {
        sqlx::Error::PoolTimedOut => Some(Outage::Timeout),
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::WorkerCrashed => {
            Some(Outage::Connection)
        }
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| {
                code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03")
            })
            .then_some(Outage::Connection),
        _ => None,
    }
}

/// How an adapter call's error says the database is unreachable, if it does (see
/// [`outage`]; [`timed_out`] is an [`Outage::Timeout`]).
pub(crate) fn outage_of(e: &AdapterError) -> Option<Outage> {
    match e {
        AdapterError::Backend(source) => {
            source.downcast_ref::<BackendError>().and_then(|b| b.outage)
        }
        _ => None,
    }
}

/// A database's message without the values it quotes. MySQL writes the offending value into
/// some messages (`Duplicate entry 'ada@example.com' for key 'email'`), PostgreSQL into
/// some too (`invalid input syntax for type integer: "abc"`): quoted text stays only where
/// it names a column, key, table, constraint, relation, database or schema, else it becomes
/// `'…'`.
pub(crate) fn without_values(message: &str) -> String {
    const NAMES: [&str; 8] = [
        "column",
        "key",
        "table",
        "constraint",
        "relation",
        "database",
        "schema",
        "index",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find(['\'', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('\'');
        let before = &rest[..open];
        let Some(len) = rest[open + 1..].find(quote) else {
            break;
        };
        let quoted = &rest[open..open + 1 + len + 1];
        let names_something = before
            .trim_end()
            .rsplit(|c: char| !c.is_ascii_alphabetic())
            .next()
            .is_some_and(|word| NAMES.iter().any(|n| word.eq_ignore_ascii_case(n)));
        out.push_str(before);
        if names_something {
            out.push_str(quoted);
        } else {
            out.push(quote);
            out.push('…');
            out.push(quote);
        }
        rest = &rest[open + quoted.len()..];
    }
    out.push_str(rest);
    out
}

/// A backend error that is not a sqlx error (bad stored data, an id of the wrong shape).
pub(crate) fn data_error(op: &'static str, what: &str) -> AdapterError {
    AdapterError::Backend(Box::new(BackendError {
        op,
        summary: what.to_owned(),
        source: None,
        outage: None,
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
        outage: Some(Outage::Timeout),
    }))
}

/// An operation refused at once because the circuit breaker is open: an earlier call found
/// the database unreachable, and a probe in the background has not reached it since.
pub(crate) fn unavailable(op: &'static str) -> AdapterError {
    AdapterError::Backend(Box::new(BackendError {
        op,
        summary:
            "the database is unavailable (circuit breaker open until a background probe reaches it)"
                .to_owned(),
        source: None,
        outage: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::without_values;

    #[test]
    fn quoted_values_are_dropped_and_quoted_names_kept() {
        for (message, want) in [
            (
                "Duplicate entry 'github-race-0' for key 'PRIMARY'",
                "Duplicate entry '…' for key 'PRIMARY'",
            ),
            (
                "Column 'expires' cannot be null",
                "Column 'expires' cannot be null",
            ),
            (
                "Incorrect datetime value: '2100-01-01' for column `x`.`expires` at row 1",
                "Incorrect datetime value: '…' for column `x`.`expires` at row 1",
            ),
            (
                r#"invalid input syntax for type integer: "abc""#,
                r#"invalid input syntax for type integer: "…""#,
            ),
            (
                r#"duplicate key value violates unique constraint "users_email_key""#,
                r#"duplicate key value violates unique constraint "users_email_key""#,
            ),
            (
                r#"relation "users" does not exist"#,
                r#"relation "users" does not exist"#,
            ),
            ("an unclosed 'quote", "an unclosed 'quote"),
            ("", ""),
        ] {
            assert_eq!(without_values(message), want, "{message}");
        }
    }
}
