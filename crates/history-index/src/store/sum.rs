//! The checksums the database keeps of its own rows, so that damage SQLite cannot see (a byte
//! changed inside a row, where no page structure notices) is found when the row is read, as a
//! [`StoreError::Corrupt`], rather than answered from.
//!
//! Each line, token list, segment and snapshot row carries the CRC-32 of its columns. A line's
//! sum is also an SQL function, `line_sum(...)`, so that a statement that changes a column
//! writes the new sum in the same step, and `doctor` and `reindex` verify every row in one
//! statement.

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;


/// A CRC-32 over a row's columns: integers as 8 bytes, blobs with their length first.
#[derive(Default)]
pub(super) struct Sum(crc32fast::Hasher);

impl Sum {
    pub(super) fn int(mut self, n: i64) -> Sum {
        self.0.update(&n.to_le_bytes());
        self
    }

    pub(super) fn opt(self, n: Option<i64>) -> Sum {
        match n {
            Some(n) => self.int(1).int(n),
            None => self.int(0),
        }
    }

    pub(super) fn bytes(mut self, b: &[u8]) -> Sum {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    pub(super) fn value(self) -> i64 {
        i64::from(self.0.finalize())
    }
}

/// The error a row whose sum does not match gives: SQLite's own for damage, which reads as a
/// [`StoreError::Corrupt`].
pub(super) fn corrupt_sqlite() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        None,
    )
}

/// A line's columns, as stored.
pub(super) struct LineColumns<'a> {
    pub id: i64,
    pub session: i64,
    pub seq: i64,
    pub file: i64,
    pub offset: i64,
    pub len: i64,
    pub time_kind: i64,
    pub time_ns: Option<i64>,
    pub branch: i64,
    pub events: &'a [u8],
}

impl LineColumns<'_> {
    /// The line's sum.
    pub(super) fn sum(&self) -> i64 {
        Sum::default()
            .int(self.id)
            .int(self.session)
            .int(self.seq)
            .int(self.file)
            .int(self.offset)
            .int(self.len)
            .int(self.time_kind)
            .opt(self.time_ns)
            .int(self.branch)
            .bytes(self.events)
            .value()
    }
}

/// The columns of `lines` in the order `line_sum` takes them.
pub(super) const LINE_SUM_ARGS: &str =
    "id, session, seq, file, offset, len, time_kind, time_ns, branch, events";

/// Makes `line_sum(id, session, seq, file, offset, len, time_kind, time_ns, branch, events)`
/// known to the connection.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "line_sum",
        10,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let events: Vec<u8> = ctx.get::<Option<Vec<u8>>>(9)?.unwrap_or_default();
            Ok(LineColumns {
                id: ctx.get(0)?,
                session: ctx.get(1)?,
                seq: ctx.get(2)?,
                file: ctx.get(3)?,
                offset: ctx.get(4)?,
                len: ctx.get(5)?,
                time_kind: ctx.get(6)?,
                time_ns: ctx.get(7)?,
                branch: ctx.get(8)?,
                events: &events,
            }
            .sum())
        },
    )
}

/// A snapshot row's sum, for the session with row id `session`.
pub(super) fn snapshot_sum(session: i64, offset: i64, lines: i64, settled: i64, state: &[u8]) -> i64 {
    Sum::default()
        .int(session)
        .int(offset)
        .int(lines)
        .int(settled)
        .bytes(state)
        .value()
}

/// A segment row's sum.
pub(super) fn segment_sum(id: i64, first: i64, last: i64, lines: i64, pairs: i64) -> i64 {
    Sum::default()
        .int(id)
        .int(first)
        .int(last)
        .int(lines)
        .int(pairs)
        .value()
}

/// Appends to a token list's bytes the sum of its key, count and bytes.
pub(super) fn seal(key: i64, n: i64, list: &mut Vec<u8>) {
    let sum = Sum::default().int(key).int(n).bytes(list).value() as u32;
    list.extend_from_slice(&sum.to_le_bytes());
}

/// A token list's bytes without their sum, if it matches its key and count.
pub(super) fn unseal(key: i64, n: i64, mut list: Vec<u8>) -> rusqlite::Result<Vec<u8>> {
    let at = list.len().checked_sub(4).ok_or_else(corrupt_sqlite)?;
    let stored = u32::from_le_bytes(list[at..].try_into().map_err(|_| corrupt_sqlite())?);
    list.truncate(at);
    let sum = Sum::default().int(key).int(n).bytes(&list).value() as u32;
    if sum != stored || n <= 0 {
        return Err(corrupt_sqlite());
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_list_opens_only_unchanged_under_its_key_and_count() {
        let mut list = vec![1, 2, 3, 200];
        seal(7, 4, &mut list);
        assert_eq!(unseal(7, 4, list.clone()).unwrap(), [1, 2, 3, 200]);
        assert!(unseal(8, 4, list.clone()).is_err());
        assert!(unseal(7, 5, list.clone()).is_err());
        for i in 0..list.len() {
            let mut changed = list.clone();
            changed[i] ^= 0x10;
            assert!(unseal(7, 4, changed).is_err(), "{i}");
        }
        assert!(unseal(7, 4, vec![1, 2]).is_err());
    }

    #[test]
    fn the_sql_line_sum_is_the_rust_one() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let line = LineColumns {
            id: 3,
            session: 1,
            seq: 9,
            file: 0,
            offset: 100,
            len: 20,
            time_kind: 2,
            time_ns: Some(5),
            branch: 1,
            events: b"ev",
        };
        let sql: i64 = conn
            .query_row(
                "SELECT line_sum(3, 1, 9, 0, 100, 20, 2, 5, 1, x'6576')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(sql, line.sum());
        let untimed = LineColumns { time_ns: None, ..line };
        assert_ne!(untimed.sum(), sql);
    }
}
