//! Every session's row and witnesses and every id range ([`super::ranges`]), kept again in one
//! sealed value, so that a query reads what it compares with the files and maps its candidates
//! by in one read, not by a row per session: on 20,000 small sessions, three scans of the
//! tables (sessions with witnesses, their ids, the ranges) cost a query about 0.2 s.
//!
//! The tables stay the truth; the catalog is what they held when an update last ended. Every
//! write of a session's row, witnesses or ranges deletes it in the same transaction (triggers),
//! so that one present always agrees with the tables beside it: a query finds the catalog, or
//! reads the tables. An update writes it anew when it ends ([`super::Store::seal_catalog`]).
//! Its bytes end with a sum of their own ([`super::sum::seal`]); `doctor` also compares it with
//! the tables ([`agrees`]).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use history_core::{SessionKey, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::FxHashMap;

use super::ranges::IdRange;
use super::{sum, Fingerprint, SessionRow, SessionState, Witness};
use crate::varint::{self, put};

/// The SQL that keeps the catalog from outliving a change of the tables it repeats.
pub(super) const TRIGGERS: &str = "
CREATE TRIGGER sessions_in AFTER INSERT ON sessions BEGIN DELETE FROM catalog; END;
CREATE TRIGGER sessions_up AFTER UPDATE ON sessions BEGIN DELETE FROM catalog; END;
CREATE TRIGGER sessions_out AFTER DELETE ON sessions BEGIN DELETE FROM catalog; END;
CREATE TRIGGER witnesses_in AFTER INSERT ON witnesses BEGIN DELETE FROM catalog; END;
CREATE TRIGGER witnesses_up AFTER UPDATE ON witnesses BEGIN DELETE FROM catalog; END;
CREATE TRIGGER witnesses_out AFTER DELETE ON witnesses BEGIN DELETE FROM catalog; END;
CREATE TRIGGER ranges_in AFTER INSERT ON ranges BEGIN DELETE FROM catalog; END;
CREATE TRIGGER ranges_up AFTER UPDATE ON ranges BEGIN DELETE FROM catalog; END;
CREATE TRIGGER ranges_out AFTER DELETE ON ranges BEGIN DELETE FROM catalog; END;
";

/// Every stored session with its row id, and every id range: from the catalog, or from the
/// tables when there is none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Each session's row id and row, by id.
    pub(super) sessions: Vec<(i64, SessionRow)>,
    /// Each range with its session's row id, by first id.
    pub(super) ranges: Vec<(i64, IdRange)>,
}

impl Census {
    /// Every stored session, by row id.
    pub fn rows(&self) -> impl Iterator<Item = &SessionRow> {
        self.sessions.iter().map(|(_, row)| row)
    }

    /// The `i`-th stored session of [`Census::rows`].
    pub fn row(&self, i: usize) -> &SessionRow {
        &self.sessions[i].1
    }

    /// Every stored session, taken out.
    pub fn into_rows(self) -> Vec<SessionRow> {
        self.sessions.into_iter().map(|(_, row)| row).collect()
    }

    /// Each stored session's position among [`Census::rows`], by its key.
    pub fn by_key(&self) -> FxHashMap<&SessionKey, usize> {
        self.rows().enumerate().map(|(i, r)| (&r.key, i)).collect()
    }

    /// The position among [`Census::rows`] of each of `keys`, `None` for one not stored.
    pub fn positions(&self, keys: &[SessionKey]) -> Vec<Option<usize>> {
        let at = self.by_key();
        keys.iter().map(|k| at.get(k).copied()).collect()
    }

    /// Whether the times of the `i`-th stored session's lines ([`Census::rows`]) never go back
    /// from one line id to the next, across all its writes: then a query reads its candidate
    /// lines from either end of their ids, in the order of their events, until its page is full.
    pub fn time_ordered(&self, i: usize) -> bool {
        let Some(&(id, _)) = self.sessions.get(i) else {
            return false;
        };
        (self.ranges.iter())
            .filter(|(session, _)| *session == id)
            .map(|(_, range)| *range)
            .reduce(IdRange::join)
            .is_some_and(|r| r.ordered())
    }

    /// The row id of the session at each of `positions` ([`Census::positions`]), with the
    /// index of its first mention there.
    pub(super) fn ids_at(&self, positions: &[Option<usize>]) -> FxHashMap<i64, usize> {
        (positions.iter().enumerate().rev())
            .filter_map(|(i, at)| Some((self.sessions.get((*at)?)?.0, i)))
            .collect()
    }
}

/// The catalog, when there is one, checked against its sum.
pub(super) fn read(conn: &Connection) -> rusqlite::Result<Option<Census>> {
    let found: Option<(i64, Vec<u8>)> = conn
        .prepare_cached("SELECT n, body FROM catalog WHERE id = 0")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((n, body)) = found else {
        return Ok(None);
    };
    let body = sum::unseal(0, n.max(1), body)?;
    let census = decode(&body).ok_or_else(sum::corrupt)?;
    sum::whole(census.sessions.len() as i64 == n)?;
    Ok(Some(census))
}

/// Writes `census` as the catalog, in place of any.
pub(super) fn write(conn: &Connection, census: &Census) -> rusqlite::Result<()> {
    let n = census.sessions.len() as i64;
    let mut body = encode(census);
    sum::seal(0, n.max(1), &mut body);
    conn.prepare_cached("INSERT OR REPLACE INTO catalog (id, n, body) VALUES (0, ?1, ?2)")?
        .execute(params![n, body])?;
    Ok(())
}

/// Whether a catalog, if there is one, holds what the tables do (`tables`).
pub(super) fn agrees(conn: &Connection, tables: &Census) -> rusqlite::Result<bool> {
    Ok(read(conn)?.is_none_or(|c| c == *tables))
}

fn encode(census: &Census) -> Vec<u8> {
    let mut out = Vec::new();
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        varint::put(out, b.len() as u64);
        out.extend_from_slice(b);
    };
    // The few decoder versions, once each.
    let mut versions: Vec<&str> = census.rows().map(|r| &*r.decoder_version).collect();
    versions.sort_unstable();
    versions.dedup();
    put(&mut out, versions.len() as u64);
    for v in &versions {
        bytes(&mut out, v.as_bytes());
    }
    put(&mut out, census.sessions.len() as u64);
    for (id, row) in &census.sessions {
        put(&mut out, *id as u64);
        bytes(&mut out, row.key.harness.as_bytes());
        bytes(&mut out, row.key.id.as_bytes());
        bytes(&mut out, row.root_path.as_os_str().as_bytes());
        out.push(u8::from(row.state == SessionState::Failed) | u8::from(row.lineage_open) << 1);
        match &row.reason {
            None => put(&mut out, 0),
            Some(r) => {
                put(&mut out, 1);
                bytes(&mut out, r.as_bytes());
            }
        }
        let version = versions.binary_search(&&*row.decoder_version);
        put(&mut out, version.unwrap_or(0) as u64);
        put(&mut out, row.indexed_at.0 as u64);
        put(&mut out, row.bytes);
        put(&mut out, row.witnesses.len() as u64);
        for w in &row.witnesses {
            // Most witnesses are the session's own file, at its root path.
            match w.file.path == row.root_path {
                true => put(&mut out, 0),
                false => {
                    put(&mut out, 1);
                    bytes(&mut out, w.file.path.as_os_str().as_bytes());
                }
            }
            let f = &w.file.fingerprint;
            for v in [f.dev, f.ino, f.size, f.mtime_ns as u64, f.ctime_ns as u64] {
                put(&mut out, v);
            }
            put(&mut out, w.checkpoint);
            put(&mut out, w.checkpoint_hash);
        }
    }
    put(&mut out, census.ranges.len() as u64);
    for (session, r) in &census.ranges {
        for v in r.values() {
            put(&mut out, v as u64);
        }
        put(&mut out, *session as u64);
    }
    out
}

fn decode(body: &[u8]) -> Option<Census> {
    let mut r = Reader { body, at: 0 };
    let versions: Vec<std::sync::Arc<str>> = (0..r.num()?)
        .map(|_| r.text().map(Into::into))
        .collect::<Option<_>>()?;
    let n = r.num()?;
    let mut sessions = Vec::with_capacity(n.min(1 << 20) as usize);
    for _ in 0..n {
        let id = r.num()? as i64;
        let key = SessionKey::new(r.text()?, r.text()?);
        let root_path = r.path()?;
        let flags = r.byte()?;
        let reason = match r.num()? {
            0 => None,
            _ => Some(r.text()?),
        };
        let decoder_version = versions.get(r.num()? as usize)?.clone();
        let indexed_at = Timestamp(r.num()? as i64);
        let bytes = r.num()?;
        let count = r.num()?;
        let mut witnesses = Vec::with_capacity(count.min(1 << 10) as usize);
        for _ in 0..count {
            let path = match r.num()? {
                0 => root_path.clone(),
                _ => r.path()?,
            };
            let fingerprint = Fingerprint {
                dev: r.num()?,
                ino: r.num()?,
                size: r.num()?,
                mtime_ns: r.num()? as i64,
                ctime_ns: r.num()? as i64,
            };
            witnesses.push(Witness {
                file: history_core::Witness { path, fingerprint },
                checkpoint: r.num()?,
                checkpoint_hash: r.num()?,
            });
        }
        let state = match flags & 1 {
            0 => SessionState::Indexed,
            _ => SessionState::Failed,
        };
        let row = SessionRow {
            key,
            root_path,
            state,
            reason,
            decoder_version,
            indexed_at,
            bytes,
            witnesses,
            lineage_open: flags & 2 != 0,
        };
        sessions.push((id, row));
    }
    let n = r.num()?;
    let mut ranges = Vec::with_capacity(n.min(1 << 20) as usize);
    for _ in 0..n {
        let mut values = [0i64; 6];
        for v in &mut values {
            *v = r.num()? as i64;
        }
        ranges.push((r.num()? as i64, IdRange::from_values(values)));
    }
    (r.at == body.len()).then_some(Census { sessions, ranges })
}

/// Reads the values [`encode`] wrote, in turn.
struct Reader<'a> {
    body: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn num(&mut self) -> Option<u64> {
        varint::read(self.body, &mut self.at)
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.body.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn bytes(&mut self) -> Option<&[u8]> {
        let len = usize::try_from(self.num()?).ok()?;
        let end = self.at.checked_add(len)?;
        let b = self.body.get(self.at..end)?;
        self.at = end;
        Some(b)
    }

    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    fn path(&mut self) -> Option<PathBuf> {
        Some(PathBuf::from(OsString::from_vec(self.bytes()?.to_vec())))
    }
}
