//! The writes, each within a transaction the caller commits: dropping it uncommitted leaves
//! the store as it was.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use history_core::{SessionKey, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};

use super::postings::Accumulator;
use super::ranges::{self, IdRange};
use super::sum;
use super::{int, time_columns, uint, LineRecord, SessionRecord, StoreError, Witness};

/// Stores `record` as indexed with exactly `lines`.
pub(super) fn replace(
    tx: &Connection,
    acc: &mut Accumulator,
    record: &SessionRecord,
    lines: &[LineRecord<'_>],
) -> Result<(), StoreError> {
    let id = upsert(tx, record, None)?;
    clear(tx, id)?;
    put_witnesses(tx, id, &record.witnesses)?;
    let written = put_lines(tx, acc, id, record.witnesses.len(), None, lines)?;
    put_range(tx, id, written)
}

/// Records where the lines just written lie, if any were.
fn put_range(tx: &Connection, id: i64, written: Option<IdRange>) -> Result<(), StoreError> {
    if let Some(range) = written {
        ranges::put(tx, id, &range)?;
    }
    Ok(())
}

/// `a` and `b` as one range, either or both absent.
pub(super) fn joined(a: Option<IdRange>, b: Option<IdRange>) -> Option<IdRange> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.join(b)),
        (a, b) => a.or(b),
    }
}

/// Adds `lines` to an indexed session and moves its witnesses' checkpoints.
pub(super) fn append(
    tx: &Connection,
    acc: &mut Accumulator,
    key: &SessionKey,
    witnesses: &[Witness],
    lines: &[LineRecord<'_>],
) -> Result<(), StoreError> {
    let found: Option<(i64, String)> = tx
        .prepare_cached("SELECT id, state FROM sessions WHERE harness = ?1 AND session_id = ?2")?
        .query_row(params![key.harness, key.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((id, _)) = found.filter(|(_, state)| state == "indexed") else {
        return Err(StoreError::NotIndexed);
    };
    let stored: Vec<Vec<u8>> = tx
        .prepare_cached("SELECT path FROM witnesses WHERE session = ?1 ORDER BY ordinal")?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let same = stored.len() == witnesses.len()
        && stored
            .iter()
            .zip(witnesses)
            .all(|(s, w)| s.as_slice() == w.file.path.as_os_str().as_bytes());
    if !same {
        return Err(StoreError::WitnessMismatch);
    }
    let last: Option<i64> = tx
        .prepare_cached("SELECT max(seq) FROM lines WHERE session = ?1")?
        .query_row([id], |r| r.get(0))?;
    tx.prepare_cached("DELETE FROM witnesses WHERE session = ?1")?
        .execute([id])?;
    put_witnesses(tx, id, witnesses)?;
    let written = put_lines(tx, acc, id, witnesses.len(), last, lines)?;
    put_range(tx, id, written)?;
    tx.prepare_cached("UPDATE sessions SET indexed_at = ?2, bytes = ?3 WHERE id = ?1")?
        .execute(params![id, Timestamp::now().0, covered(witnesses)])?;
    reseal_session(tx, id)
}

/// Records the session as failed for `reason`, without lines.
pub(super) fn failure(
    tx: &Connection,
    record: &SessionRecord,
    reason: &str,
) -> Result<(), StoreError> {
    let is_code = (1..=32).contains(&reason.len())
        && reason
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !is_code {
        return Err(StoreError::InvalidReason);
    }
    let id = upsert(tx, record, Some(reason))?;
    clear(tx, id)?;
    put_witnesses(tx, id, &record.witnesses)
}

/// Removes the session; `true` if it was stored.
pub(super) fn remove(tx: &Connection, key: &SessionKey) -> Result<bool, StoreError> {
    // The cascade removes its witnesses and lines; their ids go from the token lists when
    // those are merged.
    let n = tx
        .prepare_cached("DELETE FROM sessions WHERE harness = ?1 AND session_id = ?2")?
        .execute(params![key.harness, key.id])?;
    Ok(n > 0)
}

/// Removes the sessions `keep` rejects; how many.
pub(super) fn retain(
    tx: &Connection,
    mut keep: impl FnMut(&SessionKey, &Path) -> bool,
) -> Result<usize, StoreError> {
    let all: Vec<(i64, SessionKey, PathBuf)> = tx
        .prepare(&format!(
            "SELECT id, harness, session_id, root_path, {} FROM sessions s",
            sum::checked("s", sum::SESSION)
        ))?
        .query_map([], |r| {
            sum::whole(r.get(4)?)?;
            Ok((
                r.get(0)?,
                SessionKey::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                PathBuf::from(std::ffi::OsString::from_vec(r.get(3)?)),
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut delete = tx.prepare_cached("DELETE FROM sessions WHERE id = ?1")?;
    let mut removed = 0;
    for (id, key, root) in &all {
        if !keep(key, root) {
            removed += delete.execute([id])?;
        }
    }
    Ok(removed)
}

/// Inserts or updates the session's row; its id.
pub(super) fn upsert(
    tx: &Connection,
    record: &SessionRecord,
    reason: Option<&str>,
) -> Result<i64, StoreError> {
    let (state, bytes) = match reason {
        None => ("indexed", covered(&record.witnesses)),
        Some(_) => ("failed", 0),
    };
    let id = tx
        .prepare_cached(
            "INSERT INTO sessions
                 (harness, session_id, root_path, state, reason, decoder_version, indexed_at, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (harness, session_id) DO UPDATE SET
                 root_path = excluded.root_path, state = excluded.state,
                 reason = excluded.reason, decoder_version = excluded.decoder_version,
                 indexed_at = excluded.indexed_at, bytes = excluded.bytes, lineage_open = 1
             RETURNING id",
        )?
        .query_row(
            params![
                record.key.harness,
                record.key.id,
                record.root_path.as_os_str().as_bytes(),
                state,
                reason,
                record.decoder_version,
                Timestamp::now().0,
                bytes,
            ],
            |r| r.get(0),
        )?;
    reseal_session(tx, id)?;
    Ok(id)
}

/// Deletes the session's witnesses and lines.
pub(super) fn clear(tx: &Connection, id: i64) -> Result<(), StoreError> {
    tx.prepare_cached("DELETE FROM lines WHERE session = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM witnesses WHERE session = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM resumes WHERE session = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM ranges WHERE session = ?1")?
        .execute([id])?;
    Ok(())
}

pub(super) fn put_witnesses(
    tx: &Connection,
    id: i64,
    witnesses: &[Witness],
) -> Result<(), StoreError> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO witnesses
             (session, ordinal, path, dev, ino, size, mtime_ns, ctime_ns, checkpoint, checkpoint_hash,
              sum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                 row_sum(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10))",
    )?;
    for (ordinal, w) in witnesses.iter().enumerate() {
        let f = &w.file.fingerprint;
        // Device and inode numbers and the hash use all 64 bits: stored as their bit patterns.
        insert.execute(params![
            id,
            ordinal as i64,
            w.file.path.as_os_str().as_bytes(),
            f.dev as i64,
            f.ino as i64,
            int(f.size),
            f.mtime_ns,
            f.ctime_ns,
            int(w.checkpoint),
            w.checkpoint_hash as i64,
        ])?;
    }
    Ok(())
}

/// Inserts the lines, giving their tokens to `acc`; every seq must exceed `after`, and
/// increase. The ids and times of the lines inserted, if any.
pub(super) fn put_lines(
    tx: &Connection,
    acc: &mut Accumulator,
    id: i64,
    files: usize,
    after: Option<i64>,
    lines: &[LineRecord<'_>],
) -> Result<Option<IdRange>, StoreError> {
    let mut line = tx.prepare_cached(
        "INSERT INTO lines
             (id, session, seq, file, offset, len, time_kind, time_ns, branch, events, sum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                 row_sum(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10))",
    )?;
    let (mut last, mut written) = (after, None);
    for l in lines {
        let seq = int(l.seq);
        if l.file as usize >= files || last.is_some_and(|last| seq <= last) {
            return Err(StoreError::InvalidLine);
        }
        last = Some(seq);
        let (kind, ns) = time_columns(l.time);
        let line_id = int(acc.line(l.tokens));
        acc.words.line(uint(line_id), l.seq, l.words);
        written = joined(written, Some(IdRange::of(line_id, l.time)));
        line.execute(params![
            line_id,
            id,
            seq,
            l.file,
            int(l.offset),
            int(l.len),
            kind,
            ns,
            l.branch,
            l.events
        ])?;
    }
    Ok(written)
}

/// Writes the sum of session `id`'s row, after any statement that changed it.
pub(super) fn reseal_session(tx: &Connection, id: i64) -> Result<(), StoreError> {
    tx.prepare_cached(&sum::reseal("sessions", sum::SESSION, "WHERE id = ?1"))?
        .execute([id])?;
    Ok(())
}

/// The bytes the witnesses' checkpoints cover.
fn covered(witnesses: &[Witness]) -> i64 {
    int(witnesses.iter().map(|w| w.checkpoint).sum())
}
