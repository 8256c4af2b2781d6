//! SQLite reads on the calling thread, on connections of their own that only read (`query_only`).

use std::path::PathBuf;
use std::sync::{Mutex, TryLockError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::{Param, RETRY_AFTER, Read};
use crate::db::{Col, Val};

/// A few statements read on a few connections to the database file at `path`, each used
/// by one thread at a time.
pub(crate) struct SqliteReads {
    path: PathBuf,
    /// Each statement and the columns it reads, by the index the reads name it with.
    statements: Vec<(&'static str, &'static [Col])>,
    slots: Box<[Mutex<Slot>]>,
}

#[derive(Default)]
struct Slot {
    connection: Option<Connection>,
    /// After a connection failed: no new one before this.
    retry_at: Option<Instant>,
}

impl SqliteReads {
    /// Reads with `statements` from the database file at `path` on at most `connections`
    /// connections, opened when first needed.
    pub fn new(
        path: PathBuf,
        statements: Vec<(&'static str, &'static [Col])>,
        connections: usize,
    ) -> Self {
        SqliteReads {
            path,
            statements,
            slots: (0..connections.max(1)).map(|_| Mutex::default()).collect(),
        }
    }

    /// The first row of statement `statement` with `params`, on the first connection no
    /// other thread is using.
    pub fn fetch_optional(&self, statement: usize, params: &[Param<'_>]) -> Read {
        let Some(&(sql, cols)) = self.statements.get(statement) else {
            return Read::UsePool;
        };
        for slot in &self.slots {
            let mut slot = match slot.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::WouldBlock) => continue,
                // A panic while it was held (none is expected): start this slot afresh.
                Err(TryLockError::Poisoned(poisoned)) => {
                    slot.clear_poison();
                    let mut guard = poisoned.into_inner();
                    guard.connection = None;
                    guard
                }
            };
            return self.fetch_on(&mut slot, sql, cols, params);
        }
        Read::UsePool
    }

    /// Closes every connection (waiting for a read in progress on it).
    pub fn close(&self) {
        for slot in &self.slots {
            let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            slot.connection = None;
        }
    }

    fn fetch_on(&self, slot: &mut Slot, sql: &str, cols: &[Col], params: &[Param<'_>]) -> Read {
        let connection = match &mut slot.connection {
            Some(connection) => connection,
            None => {
                if slot.retry_at.is_some_and(|at| Instant::now() < at) {
                    return Read::UsePool;
                }
                match open(&self.path) {
                    Ok(connection) => slot.connection.insert(connection),
                    Err(e) => {
                        tracing::warn!(error = %e, "SQLite direct reads: cannot open a connection; reading through the pool");
                        slot.retry_at = Some(Instant::now() + RETRY_AFTER);
                        return Read::UsePool;
                    }
                }
            }
        };
        match query(connection, sql, params, cols) {
            Ok(row) => Read::Row(row),
            // Locked for a moment (a checkpoint, say): the pool waits for it, not this thread.
            Err(e) if is_busy(&e) => Read::UsePool,
            Err(e) => {
                tracing::warn!(error = %e, "SQLite direct read failed; reading through the pool");
                slot.connection = None;
                slot.retry_at = Some(Instant::now() + RETRY_AFTER);
                Read::UsePool
            }
        }
    }
}

/// A connection that never writes and never waits for a lock.
pub(super) fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    // Read-write (but `query_only`): a read-only connection cannot always use the WAL index.
    // Read-only where the file is (`mode=ro` on a read-only file system, say).
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .or_else(|_| {
        Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    })?;
    connection.busy_timeout(Duration::ZERO)?;
    connection.pragma_update(None, "query_only", true)?;
    Ok(connection)
}

fn query(
    connection: &Connection,
    sql: &str,
    params: &[Param<'_>],
    cols: &[Col],
) -> rusqlite::Result<Option<Vec<Val>>> {
    // User ids are text on SQLite, as authcore's schema makes them.
    let params = rusqlite::params_from_iter(params.iter().map(|p| p.as_str()));
    connection
        .prepare_cached(sql)?
        .query_row(params, |row| read_row(row, cols))
        .optional()
}

/// Reads `row` as `cols` say, as `crate::sqlite::read_column` and `crate::db` do for sqlx
/// rows.
fn read_row(row: &rusqlite::Row<'_>, cols: &[Col]) -> rusqlite::Result<Vec<Val>> {
    let mut values = Vec::with_capacity(cols.len());
    for (i, &col) in cols.iter().enumerate() {
        let value = match col {
            Col::Text | Col::UserId => row.get::<_, Option<String>>(i)?.map(Val::Text),
            Col::Int => row.get::<_, Option<i64>>(i)?.map(Val::Int),
            Col::Bool => row.get::<_, Option<bool>>(i)?.map(Val::Bool),
            Col::Time => match row.get_ref(i)?.as_str_or_null()? {
                None => None,
                Some(text) => Some(Val::Time(crate::sqlite::ts_from_db(text).ok_or_else(
                    || {
                        rusqlite::Error::FromSqlConversionFailure(
                            i,
                            rusqlite::types::Type::Text,
                            "unreadable timestamp stored".into(),
                        )
                    },
                )?)),
            },
        };
        values.push(value.unwrap_or(Val::Null));
    }
    Ok(values)
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const SQL: &str = "SELECT k, at, n, ok FROM t WHERE k = ?";
    const SQL_BY_N: &str = "SELECT k, at, n, ok FROM t WHERE k = ? AND n = ?";
    const COLS: &[Col] = &[Col::Text, Col::Time, Col::Int, Col::Bool];

    /// A database file of its own, removed afterwards.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str) -> Self {
            let path = std::env::temp_dir()
                .join(format!("authcore-direct-{}-{name}.db", std::process::id()));
            let _ = std::fs::remove_file(&path);
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                let mut path = self.0.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
    }

    #[test]
    fn reads_rows_and_leaves_the_rest_to_the_pool() {
        let file = TempFile::new("rows");
        let writer = Connection::open(&file.0).expect("create");
        writer
            .execute_batch(
                "CREATE TABLE t (k TEXT, at TEXT, n INTEGER, ok INTEGER);
                 INSERT INTO t VALUES ('a', '2025-01-31T12:00:00.000Z', 7, 1),
                                      ('b', NULL, NULL, NULL),
                                      ('bad', 'not a time', 1, 0);",
            )
            .expect("fill");
        let reads = SqliteReads::new(file.0.clone(), vec![(SQL, COLS), (SQL_BY_N, COLS)], 2);
        let read = |k: &str| reads.fetch_optional(0, &[Param::Text(k)]);
        let a = Read::Row(Some(vec![
            Val::Text("a".into()),
            Val::Time(datetime!(2025-01-31 12:00 UTC)),
            Val::Int(7),
            Val::Bool(true),
        ]));
        assert_eq!(read("a"), a);
        // A statement of two parameters; an index that names none is left to the pool.
        assert_eq!(
            reads.fetch_optional(1, &[Param::Text("a"), Param::UserId("7")]),
            a
        );
        assert_eq!(reads.fetch_optional(2, &[Param::Text("a")]), Read::UsePool);
        assert_eq!(
            read("b"),
            Read::Row(Some(vec![
                Val::Text("b".into()),
                Val::Null,
                Val::Null,
                Val::Null
            ]))
        );
        assert_eq!(read("none"), Read::Row(None));

        // Locked (rollback journal, exclusive lock): the pool waits, this thread does not;
        // the connection stays open.
        writer.execute_batch("BEGIN EXCLUSIVE").expect("lock");
        assert_eq!(read("a"), Read::UsePool);
        writer.execute_batch("COMMIT").expect("unlock");
        assert_eq!(read("a"), a);

        // A value it cannot read: the pool reads it (and reports it); the connection is
        // dropped and, for a second, not reopened.
        assert_eq!(read("bad"), Read::UsePool);
        let slot = reads.slots[0].lock().expect("not poisoned");
        assert!(slot.connection.is_none() && slot.retry_at.is_some());
        drop(slot);

        reads.close();
        assert!(
            reads
                .slots
                .iter()
                .all(|slot| slot.lock().expect("not poisoned").connection.is_none())
        );
    }

    #[test]
    fn a_missing_file_is_left_to_the_pool() {
        let file = TempFile::new("missing");
        let reads = SqliteReads::new(file.0.clone(), vec![(SQL, COLS)], 1);
        assert_eq!(reads.fetch_optional(0, &[Param::Text("a")]), Read::UsePool);
        assert!(!file.0.exists(), "the reads never create the database");
        assert!(
            reads.slots[0]
                .lock()
                .expect("not poisoned")
                .retry_at
                .is_some()
        );
    }
}
