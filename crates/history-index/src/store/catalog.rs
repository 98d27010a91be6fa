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
use std::hash::BuildHasher;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use history_core::{SessionFile, SessionKey, Timestamp};
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
///
/// The sessions' rows stay in their encoded form ([`encode_rows`]), checked whole when read,
/// and each is decoded when it is asked for: a query compares only the rows of the sessions it
/// selects, and 20,000 decoded rows (their paths and witnesses) took twice the memory of the
/// encoded ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// The rows as [`encode_rows`] writes them, with the decoder versions before them.
    body: Vec<u8>,
    /// The decoder versions the rows name by number.
    versions: Vec<std::sync::Arc<str>>,
    /// Where in `body` each directory the rows' paths name by number is.
    dirs: Vec<std::ops::Range<usize>>,
    /// Each session's row id and where its row goes on after it in `body`, by id.
    sessions: Vec<(i64, usize)>,
    /// Each session's position in `sessions` by [`key_hash`] of its key, sorted.
    by_hash: Vec<(u64, usize)>,
    /// Each range with its session's row id, by first id.
    pub(super) ranges: Vec<(i64, IdRange)>,
}

/// The hash a [`Census`] finds a session's position by.
fn key_hash(harness: &str, id: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one((harness, id))
}

impl Census {
    /// The census of `sessions` (by row id) and `ranges` (by first id).
    pub(super) fn new(sessions: &[(i64, SessionRow)], ranges: Vec<(i64, IdRange)>) -> Census {
        let body = encode_rows(sessions);
        let census = decode_rows(body).expect("rows decode as they were encoded");
        Census { ranges, ..census }
    }

    /// The census of `sessions` (by row id) without ranges.
    #[cfg(test)]
    pub(crate) fn of_rows(sessions: &[(i64, SessionRow)]) -> Census {
        Census::new(sessions, Vec::new())
    }

    /// How many sessions are stored.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is stored.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Every stored session, by row id.
    pub fn rows(&self) -> impl Iterator<Item = SessionRow> + '_ {
        (0..self.sessions.len()).map(|i| self.row(i))
    }

    /// The `i`-th stored session of [`Census::rows`].
    pub fn row(&self, i: usize) -> SessionRow {
        let mut r = self.reader(self.sessions[i].1);
        r.row(&self.versions).expect("rows were checked when read")
    }

    /// Every stored session with its row id.
    #[cfg(test)]
    pub(super) fn entries(&self) -> Vec<(i64, SessionRow)> {
        (self.sessions.iter().zip(self.rows()))
            .map(|(&(id, _), row)| (id, row))
            .collect()
    }

    /// The decoder versions the stored sessions were indexed with, each once.
    pub fn versions(&self) -> impl Iterator<Item = &str> {
        self.versions.iter().map(|v| &**v)
    }

    /// Every stored session's key, by row id.
    pub fn keys(&self) -> impl Iterator<Item = SessionKey> + '_ {
        self.sessions.iter().map(|&(_, at)| {
            let mut r = self.reader(at);
            let (harness, id) = (r.text(), r.text());
            SessionKey::new(
                harness.expect("rows were checked when read"),
                id.expect("rows were checked when read"),
            )
        })
    }

    /// Every stored session, taken out.
    pub fn into_rows(self) -> Vec<SessionRow> {
        self.rows().collect()
    }

    /// The position of session `key` among [`Census::rows`], if it is stored.
    pub fn position(&self, key: &SessionKey) -> Option<usize> {
        let hash = key_hash(&key.harness, &key.id);
        let from = self.by_hash.partition_point(|&(h, _)| h < hash);
        (self.by_hash[from..].iter())
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, i)| i)
            .find(|&i| {
                let mut r = self.reader(self.sessions[i].1);
                r.bytes() == Some(key.harness.as_bytes()) && r.bytes() == Some(key.id.as_bytes())
            })
    }

    /// A reader of the rows from `at` in the body.
    fn reader(&self, at: usize) -> Reader<'_> {
        Reader {
            body: &self.body,
            at,
            dirs: &self.dirs,
        }
    }

    /// The decoder version and state of the `i`-th stored session ([`Census::rows`]), read in
    /// place, when its row is settled (its lineage not open) and its one witness is `file`
    /// with the fingerprint discovery took: a session unchanged since it was stored. `None`
    /// when it is not, or when only the row made can tell (another file among its witnesses).
    pub fn unchanged(&self, i: usize, file: &SessionFile) -> Option<(&str, SessionState)> {
        let mut r = self.reader(self.sessions.get(i)?.1);
        let head = r.head(self.versions.len())?;
        if head.flags & 2 != 0 || head.witnesses != 1 {
            return None;
        }
        let w = r.witness()?;
        let path = file.path.as_os_str().as_bytes();
        let same = w
            .path
            .map_or_else(|| head.root_path.is(path), |p| p == path)
            && file.fingerprint == Some(w.fingerprint);
        same.then(|| (&*self.versions[head.version], state(head.flags)))
    }

    /// The position among [`Census::rows`] of each of `keys`, `None` for one not stored.
    pub fn positions(&self, keys: &[SessionKey]) -> Vec<Option<usize>> {
        keys.iter().map(|k| self.position(k)).collect()
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

    /// The ids every write of the `i`-th stored session gave its lines, ascending (a line a
    /// later write removed is gone; the lines of a session are all among these).
    pub fn line_ids(&self, i: usize) -> Vec<u64> {
        let Some(&(id, _)) = self.sessions.get(i) else {
            return Vec::new();
        };
        (self.ranges.iter())
            .filter(|(session, _)| *session == id)
            .flat_map(|(_, range)| range.first as u64..=range.last as u64)
            .collect()
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
    if !conn.is_autocommit() {
        return read_within(conn);
    }
    // Its count and its bytes from one snapshot of the database.
    conn.execute_batch("BEGIN")?;
    let read = read_within(conn);
    let ended = conn.execute_batch("COMMIT");
    let read = read?;
    ended?;
    Ok(read)
}

/// [`read`] inside a transaction.
fn read_within(conn: &Connection) -> rusqlite::Result<Option<Census>> {
    let found: Option<(i64, i64)> = conn
        .prepare_cached("SELECT n, length(body) FROM catalog WHERE id = 0")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((n, len)) = found else {
        return Ok(None);
    };
    // Read straight into one buffer: a row's value would be put together in SQLite's memory
    // first, and copied. A length past the file's is damage, not a size to allocate.
    let file: i64 = conn.query_row(
        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
        [],
        |r| r.get(0),
    )?;
    sum::whole((0..=file).contains(&len))?;
    let mut body = vec![0; usize::try_from(len).map_err(|_| sum::corrupt())?];
    conn.blob_open(rusqlite::MAIN_DB, "catalog", "body", 0, true)?
        .read_at_exact(&mut body, 0)?;
    let body = sum::unseal(0, n.max(1), body)?;
    let census = decode(body).ok_or_else(sum::corrupt)?;
    sum::whole(census.sessions.len() as i64 == n)?;
    Ok(Some(census))
}

/// Writes `census` as the catalog, in place of any.
pub(super) fn write(conn: &Connection, census: &Census) -> rusqlite::Result<()> {
    let n = census.sessions.len() as i64;
    let mut body = census.body.clone();
    put_ranges(&mut body, &census.ranges);
    sum::seal(0, n.max(1), &mut body);
    conn.prepare_cached("INSERT OR REPLACE INTO catalog (id, n, body) VALUES (0, ?1, ?2)")?
        .execute(params![n, body])?;
    Ok(())
}

/// Whether a catalog, if there is one, holds what the tables do (`tables`).
pub(super) fn agrees(conn: &Connection, tables: &Census) -> rusqlite::Result<bool> {
    Ok(read(conn)?.is_none_or(|c| c == *tables))
}

/// The rows of `sessions` (by row id) as the catalog holds them, the decoder versions they
/// name first.
fn encode_rows(sessions: &[(i64, SessionRow)]) -> Vec<u8> {
    let mut out = Vec::new();
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        varint::put(out, b.len() as u64);
        out.extend_from_slice(b);
    };
    // The few decoder versions, once each.
    let mut versions: Vec<&str> = sessions.iter().map(|(_, r)| &*r.decoder_version).collect();
    versions.sort_unstable();
    versions.dedup();
    put(&mut out, versions.len() as u64);
    for v in &versions {
        bytes(&mut out, v.as_bytes());
    }
    // The directories of the root paths, once each: a path is its directory's number and its
    // file's name, the session id in it named once.
    let mut dirs: FxHashMap<&[u8], usize> = FxHashMap::default();
    let mut listed: Vec<&[u8]> = Vec::new();
    for (_, row) in sessions {
        let dir = split(&row.root_path).0;
        dirs.entry(dir).or_insert_with(|| {
            listed.push(dir);
            listed.len() - 1
        });
    }
    put(&mut out, listed.len() as u64);
    for dir in listed {
        bytes(&mut out, dir);
    }
    put(&mut out, sessions.len() as u64);
    for (id, row) in sessions {
        put(&mut out, *id as u64);
        bytes(&mut out, row.key.harness.as_bytes());
        bytes(&mut out, row.key.id.as_bytes());
        let (dir, name) = split(&row.root_path);
        put(&mut out, dirs[dir] as u64);
        let id = row.key.id.as_bytes();
        let named = (!id.is_empty())
            .then(|| name.windows(id.len()).position(|w| w == id))
            .flatten();
        match named {
            Some(at) => {
                put(&mut out, 1);
                bytes(&mut out, &name[..at]);
                bytes(&mut out, &name[at + id.len()..]);
            }
            None => {
                put(&mut out, 0);
                bytes(&mut out, name);
            }
        }
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
    out
}

/// A path's directory, with its last `/`, and its file's name.
fn split(path: &Path) -> (&[u8], &[u8]) {
    let path = path.as_os_str().as_bytes();
    let at = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    path.split_at(at)
}

/// The ranges as the catalog holds them after the rows.
fn put_ranges(out: &mut Vec<u8>, ranges: &[(i64, IdRange)]) {
    put(out, ranges.len() as u64);
    for (session, r) in ranges {
        for v in r.values() {
            put(out, v as u64);
        }
        put(out, *session as u64);
    }
}

/// The census of a catalog's bytes, its rows checked as they are found and kept encoded;
/// `None` when the bytes are not what [`encode_rows`] and [`put_ranges`] write.
fn decode(mut body: Vec<u8>) -> Option<Census> {
    let (census, end) = rows_in(&body)?;
    let mut r = Reader {
        body: &body,
        at: end,
        dirs: &[],
    };
    let n = r.num()?;
    let mut ranges = Vec::with_capacity(n.min(1 << 20) as usize);
    for _ in 0..n {
        let mut values = [0i64; 6];
        for v in &mut values {
            *v = r.num()? as i64;
        }
        ranges.push((r.num()? as i64, IdRange::from_values(values)));
    }
    if r.at != body.len() {
        return None;
    }
    body.truncate(end);
    Some(Census {
        body,
        ranges,
        ..census
    })
}

/// [`decode`] of bytes holding the rows alone.
fn decode_rows(body: Vec<u8>) -> Option<Census> {
    let (census, end) = rows_in(&body)?;
    (end == body.len()).then_some(Census { body, ..census })
}

/// The census of the rows at the start of `body` (without the body itself), each row checked
/// where it lies, and where they end.
fn rows_in(body: &[u8]) -> Option<(Census, usize)> {
    let mut r = Reader {
        body,
        at: 0,
        dirs: &[],
    };
    let versions: Vec<std::sync::Arc<str>> = (0..r.num()?)
        .map(|_| r.text().map(Into::into))
        .collect::<Option<_>>()?;
    let dirs: Vec<std::ops::Range<usize>> = (0..r.num()?)
        .map(|_| {
            let len = r.bytes()?.len();
            Some(r.at - len..r.at)
        })
        .collect::<Option<_>>()?;
    r.dirs = &dirs;
    let n = r.num()?;
    let mut sessions = Vec::with_capacity(n.min(1 << 20) as usize);
    let mut by_hash = Vec::with_capacity(n.min(1 << 20) as usize);
    for i in 0..n as usize {
        let id = r.num()? as i64;
        let at = r.at;
        // Checked as `Reader::row` reads it, without making it: 20,000 rows made to be checked
        // and dropped took a query 3 ms.
        let head = r.head(versions.len())?;
        for _ in 0..head.witnesses {
            r.witness()?;
        }
        sessions.push((id, at));
        by_hash.push((key_hash(head.harness, head.id), i));
    }
    by_hash.sort_unstable();
    let end = r.at;
    let census = Census {
        body: Vec::new(),
        versions,
        dirs,
        sessions,
        by_hash,
        ranges: Vec::new(),
    };
    Some((census, end))
}

/// Reads the values [`encode_rows`] and [`put_ranges`] wrote, in turn.
struct Reader<'a> {
    body: &'a [u8],
    at: usize,
    /// The directories the rows name by number.
    dirs: &'a [std::ops::Range<usize>],
}

/// A root path as a row holds it: its directory, then its file's name, which may hold the
/// session id (`id` empty when it does not).
struct RootPath<'a> {
    dir: &'a [u8],
    before: &'a [u8],
    id: &'a [u8],
    after: &'a [u8],
}

impl RootPath<'_> {
    fn parts(&self) -> [&[u8]; 4] {
        [self.dir, self.before, self.id, self.after]
    }

    /// Whether this is `path`, compared in place.
    fn is(&self, mut path: &[u8]) -> bool {
        self.parts()
            .iter()
            .all(|part| match path.strip_prefix(*part) {
                Some(rest) => {
                    path = rest;
                    true
                }
                None => false,
            })
            && path.is_empty()
    }

    fn to_path(&self) -> PathBuf {
        path(&self.parts().concat())
    }
}

/// A row's values before its witnesses, as its bytes hold them.
struct Head<'a> {
    harness: &'a str,
    id: &'a str,
    root_path: RootPath<'a>,
    flags: u8,
    reason: Option<&'a str>,
    /// Its decoder version's number, one of those the rows name.
    version: usize,
    indexed_at: i64,
    bytes: u64,
    witnesses: u64,
}

/// A witness as its bytes hold it: its path when it is not its session's root path.
struct WitnessBytes<'a> {
    path: Option<&'a [u8]>,
    fingerprint: Fingerprint,
    checkpoint: u64,
    checkpoint_hash: u64,
}

impl<'a> Reader<'a> {
    /// The row starting here, after its row id, naming decoder versions among `versions`.
    fn row(&mut self, versions: &[std::sync::Arc<str>]) -> Option<SessionRow> {
        let head = self.head(versions.len())?;
        let root_path = head.root_path.to_path();
        let mut witnesses = Vec::with_capacity(head.witnesses.min(1 << 10) as usize);
        for _ in 0..head.witnesses {
            let w = self.witness()?;
            witnesses.push(Witness {
                file: history_core::Witness {
                    path: w.path.map_or_else(|| root_path.clone(), path),
                    fingerprint: w.fingerprint,
                },
                checkpoint: w.checkpoint,
                checkpoint_hash: w.checkpoint_hash,
            });
        }
        Some(SessionRow {
            key: SessionKey::new(head.harness, head.id),
            root_path,
            state: state(head.flags),
            reason: head.reason.map(str::to_string),
            decoder_version: versions[head.version].clone(),
            indexed_at: Timestamp(head.indexed_at),
            bytes: head.bytes,
            witnesses,
            lineage_open: head.flags & 2 != 0,
        })
    }

    /// The values of the row starting here before its witnesses, of `versions` decoder versions.
    fn head(&mut self, versions: usize) -> Option<Head<'a>> {
        let (harness, id) = (self.text()?, self.text()?);
        let dir = self.dirs.get(usize::try_from(self.num()?).ok()?)?.clone();
        let (before, id_in_name, after) = match self.num()? {
            0 => (self.bytes()?, &[][..], &[][..]),
            1 => (self.bytes()?, id.as_bytes(), self.bytes()?),
            _ => return None,
        };
        let root_path = RootPath {
            dir: &self.body[dir],
            before,
            id: id_in_name,
            after,
        };
        let flags = self.byte()?;
        let reason = match self.num()? {
            0 => None,
            _ => Some(self.text()?),
        };
        let version = usize::try_from(self.num()?)
            .ok()
            .filter(|&v| v < versions)?;
        Some(Head {
            harness,
            id,
            root_path,
            flags,
            reason,
            version,
            indexed_at: self.num()? as i64,
            bytes: self.num()?,
            witnesses: self.num()?,
        })
    }

    /// The witness starting here.
    fn witness(&mut self) -> Option<WitnessBytes<'a>> {
        let path = match self.num()? {
            0 => None,
            _ => Some(self.bytes()?),
        };
        Some(WitnessBytes {
            path,
            fingerprint: Fingerprint {
                dev: self.num()?,
                ino: self.num()?,
                size: self.num()?,
                mtime_ns: self.num()? as i64,
                ctime_ns: self.num()? as i64,
            },
            checkpoint: self.num()?,
            checkpoint_hash: self.num()?,
        })
    }

    fn num(&mut self) -> Option<u64> {
        varint::read(self.body, &mut self.at)
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.body.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.num()?).ok()?;
        let end = self.at.checked_add(len)?;
        let b = self.body.get(self.at..end)?;
        self.at = end;
        Some(b)
    }

    fn text(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
}

/// The state a row's flags say.
fn state(flags: u8) -> SessionState {
    match flags & 1 {
        0 => SessionState::Indexed,
        _ => SessionState::Failed,
    }
}

/// The path of a path's bytes.
fn path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, witnesses: &[&str], reason: Option<&str>, version: &str) -> SessionRow {
        let root_path = PathBuf::from(format!("/r/{id}.jsonl"));
        let witness = |path: &str| Witness {
            file: history_core::Witness {
                path: match path {
                    "" => root_path.clone(),
                    p => PathBuf::from(p),
                },
                fingerprint: Fingerprint {
                    dev: 1,
                    ino: 300,
                    size: 70_000,
                    mtime_ns: 1 << 40,
                    ctime_ns: 1 << 41,
                },
            },
            checkpoint: 65_000,
            checkpoint_hash: 1 << 50,
        };
        SessionRow {
            key: SessionKey::new("codex", id),
            root_path: root_path.clone(),
            state: match reason {
                None => SessionState::Indexed,
                Some(_) => SessionState::Failed,
            },
            reason: reason.map(str::to_string),
            decoder_version: version.into(),
            indexed_at: Timestamp(1 << 45),
            bytes: 65_000,
            witnesses: witnesses.iter().map(|p| witness(p)).collect(),
            lineage_open: reason.is_some(),
        }
    }

    /// The rows are checked as they are found, without being made: whatever their bytes, the
    /// census of them either is refused or gives every row back whole (a row it accepted and
    /// could not read would end a query).
    #[test]
    fn rows_checked_unmade_are_rows_that_read() {
        let mut rows = vec![
            (1, row("a", &[""], None, "d1")),
            (
                4,
                row("bé", &["/p/parent.jsonl", ""], Some("too_large"), "d2"),
            ),
            (9, row("c", &[], None, "d1")),
            (10, row("ab", &[], None, "d1")),
        ];
        // A path without a directory, and one whose name does not hold the id.
        rows[2].1.root_path = PathBuf::from("c");
        rows[3].1.root_path = PathBuf::from("/r/other.jsonl");
        let body = encode_rows(&rows);
        let census = decode_rows(body.clone()).unwrap();
        assert_eq!(census.entries(), rows);
        let mut accepted = 0;
        for i in 0..body.len() {
            for change in (0..8).map(|b| 1u8 << b).chain([0xff]) {
                let mut changed = body.clone();
                changed[i] ^= change;
                if let Some(census) = decode_rows(changed) {
                    accepted += 1;
                    let _ = census.entries();
                }
            }
            if let Some(census) = decode_rows(body[..i].to_vec()) {
                let _ = census.entries();
            }
        }
        // Changed ids, sizes and times are still rows: the sum, not the structure, finds those.
        assert!(accepted > 0);
    }
}
