//! The checksums the database keeps of its own rows, so that damage SQLite cannot see (a byte
//! changed inside a row, where no page structure notices) is found when the row is read, as a
//! [`StoreError::Corrupt`](super::StoreError::Corrupt), rather than answered from.
//!
//! Every row carries `sum`, the CRC-32 of its other columns as SQLite holds them, which the
//! SQL function `row_sum(...)` computes: a statement that writes a row writes its sum in the
//! same step (`row_sum(?1, ?2, …)` among its values, or [`reseal`] after it), and one that
//! reads it compares the two ([`checked`]). A token list,
//! read whole and large, ends with its own sum instead ([`seal`]).

use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// A CRC-32 over values, each with its type.
#[derive(Default)]
struct Sum(crc32fast::Hasher);

impl Sum {
    fn value(&mut self, v: ValueRef<'_>) {
        let mut tagged = |tag: u8, bytes: &[u8]| {
            self.0.update(&[tag]);
            self.0.update(&(bytes.len() as u64).to_le_bytes());
            self.0.update(bytes);
        };
        match v {
            ValueRef::Null => tagged(0, &[]),
            ValueRef::Integer(n) => tagged(1, &n.to_le_bytes()),
            ValueRef::Real(f) => tagged(2, &f.to_le_bytes()),
            ValueRef::Text(t) => tagged(3, t),
            ValueRef::Blob(b) => tagged(4, b),
        }
    }

    fn finish(self) -> i64 {
        i64::from(self.0.finalize())
    }
}

/// Makes `row_sum(value, ...)` known to the connection.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "row_sum",
        -1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let mut sum = Sum::default();
            for i in 0..ctx.len() {
                sum.value(ctx.get_raw(i));
            }
            Ok(sum.finish())
        },
    )
}

/// The columns each table's `sum` covers, in order.
pub(super) const SESSION: &str = "id, harness, session_id, root_path, state, reason, \
                                  decoder_version, indexed_at, bytes, meta, lineage_open";
pub(super) const WITNESS: &str = "session, ordinal, path, dev, ino, size, mtime_ns, ctime_ns, \
                                  checkpoint, checkpoint_hash";
pub(super) const LINE: &str =
    "id, session, seq, file, offset, len, time_kind, time_ns, branch, events";
pub(super) const RESUME: &str = "session, offset, lines, settled, state";
pub(super) const SEGMENT: &str = "id, head, first, last, lines, pairs";

/// `UPDATE <table> SET sum = row_sum(<columns>)`: what follows every write of a row whose
/// columns another statement changed, with the `WHERE` that names those rows.
pub(super) fn reseal(table: &str, columns: &str, filter: &str) -> String {
    format!("UPDATE {table} SET sum = row_sum({columns}) {filter}")
}

/// `sum = row_sum(<columns>)` for a SELECT: whether the row read is whole. `alias` prefixes
/// each column.
pub(super) fn checked(alias: &str, columns: &str) -> String {
    let prefixed: Vec<String> = columns
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect();
    format!("{alias}.sum = row_sum({})", prefixed.join(", "))
}

/// The error a row whose sum does not match gives: SQLite's own for damage, which reads as a
/// [`StoreError::Corrupt`](super::StoreError::Corrupt).
pub(super) fn corrupt() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        None,
    )
}

/// `Ok` when a row's [`checked`] column says it is whole.
pub(super) fn whole(ok: bool) -> rusqlite::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(corrupt())
    }
}

/// Appends to a token list's bytes the sum of its key, count and bytes.
pub(super) fn seal(key: i64, n: i64, list: &mut Vec<u8>) {
    let sum = list_sum(key, n, list) as u32;
    list.extend_from_slice(&sum.to_le_bytes());
}

/// A token list's bytes without their sum, if it matches its key and count.
pub(super) fn unseal(key: i64, n: i64, mut list: Vec<u8>) -> rusqlite::Result<Vec<u8>> {
    let at = unsealed(key, n, &list)?.len();
    list.truncate(at);
    Ok(list)
}

/// [`unseal`], of a list that is borrowed.
pub(super) fn unsealed(key: i64, n: i64, list: &[u8]) -> rusqlite::Result<&[u8]> {
    let at = list.len().checked_sub(4).ok_or_else(corrupt)?;
    let stored = u32::from_le_bytes(list[at..].try_into().map_err(|_| corrupt())?);
    let list = &list[..at];
    whole(list_sum(key, n, list) as u32 == stored && n > 0)?;
    Ok(list)
}

fn list_sum(key: i64, n: i64, list: &[u8]) -> i64 {
    let mut sum = Sum::default();
    sum.value(ValueRef::Integer(key));
    sum.value(ValueRef::Integer(n));
    sum.value(ValueRef::Blob(list));
    sum.finish()
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
    fn a_row_sum_tells_every_value_and_type_apart() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let sum = |sql: &str| -> i64 {
            conn.query_row(&format!("SELECT row_sum({sql})"), [], |r| r.get(0))
                .unwrap()
        };
        let all = [
            "1, 'a', x'00'",
            "1, 'a', x'01'",
            "2, 'a', x'00'",
            "1, 'b', x'00'",
            "1, x'61', x'00'",
            "'1', 'a', x'00'",
            "1, NULL, x'00'",
            "1, 'a'",
            "1, 'a', x'00', NULL",
        ];
        let sums: std::collections::HashSet<i64> = all.iter().map(|s| sum(s)).collect();
        assert_eq!(sums.len(), all.len());
        assert_eq!(sum("1, 'a', x'00'"), sum("1, 'a', x'00'"));
    }
}
