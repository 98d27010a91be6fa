//! The reads: sessions with their witnesses, candidate lines, statistics.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::ops::Range;

use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use history_core::Snapshot;
use history_core::{SessionKey, Timestamp};
use rusqlite::types::Value;
use rusqlite::{params, OptionalExtension, Row};

use super::postings::{self, candidates, TokenLists};
use super::words;
use super::{catalog, ranges, sum, Census};
use super::{
    int, line_time, place, uint, Candidate, Fingerprint, LineRow, SessionRow, SessionState, Stats,
    Store, StoreError, StoredMeta, TimeSpan, Witness,
};
use crate::tokens::Token;

/// The lines holding a query's tokens, as [`Store::located`] finds them.
#[derive(Debug, Default)]
pub struct Located {
    /// Every candidate line's id, ascending; none when `dense`.
    pub ids: Vec<u64>,
    /// Per session and kind of line time.
    pub spans: Vec<LocatedSpan>,
    /// For tokens that each lie on more than one line in [`DENSE`], their lists, to find one
    /// session's candidates when it is read: the spans are then each session's lines, whatever
    /// they hold, so that a page of a word on most lines reads the few sessions it shows rather
    /// than every candidate of every session.
    pub dense: Option<TokenLists>,
}

/// A query whose every token lies on more than one line in this many is [`Located::dense`].
pub const DENSE: u64 = 8;

/// Some of a session's candidate lines: their times and the range of their ids.
#[derive(Debug)]
pub struct LocatedSpan {
    /// The session's index among the keys asked for.
    pub session: usize,
    /// Their span of times (an earliest of `None`: untimed lines); `None`: one has no known
    /// time.
    pub times: Option<TimeSpan>,
    /// The least and greatest of their ids.
    pub ids: std::ops::RangeInclusive<u64>,
}

/// What a line read gives, then whether it is whole ([`sum::checked`]).
fn line_columns() -> String {
    format!(
        "l.seq, l.file, l.offset, l.len, l.time_kind, l.time_ns, l.branch, l.events, {}",
        sum::checked("l", sum::LINE)
    )
}

/// A line as read, with its branch mark and events; damage (SQLite's error for it) when its
/// sum does not match.
fn candidate(r: &Row<'_>) -> rusqlite::Result<Candidate> {
    sum::whole(r.get(8)?)?;
    Ok(Candidate {
        line: LineRow {
            seq: uint(r.get(0)?),
            file: u32::try_from(r.get::<_, i64>(1)?).unwrap_or(u32::MAX),
            offset: uint(r.get(2)?),
            len: uint(r.get(3)?),
            time: line_time(r.get(4)?, r.get(5)?),
        },
        branch: r.get::<_, i64>(6)? != 0,
        events: r.get(7)?,
    })
}

/// Line ids as the `rarray` parameter of a statement.
fn id_array(ids: &[u64]) -> rusqlite::vtab::array::Array {
    std::rc::Rc::new(ids.iter().map(|id| Value::Integer(int(*id))).collect())
}

fn path(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes))
}

impl Store {
    fn session_id(&self, key: &SessionKey) -> Result<Option<i64>, StoreError> {
        self.session_value(key, "id")
    }

    /// A column of the stored session `key`'s row, checked whole and found under its own key
    /// (a damaged index entry may lead to another row).
    fn session_value<T: rusqlite::types::FromSql>(
        &self,
        key: &SessionKey,
        column: &str,
    ) -> Result<Option<T>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {column}, {}, s.harness = ?1 AND s.session_id = ?2 FROM sessions s
                 WHERE harness = ?1 AND session_id = ?2",
                sum::checked("s", sum::SESSION)
            ))?
            .query_row(params![key.harness, key.id], |r| {
                sum::whole(r.get::<_, bool>(1)? && r.get::<_, bool>(2)?)?;
                r.get(0)
            })
            .optional()?)
    }

    /// The stored session `key`, with its witnesses.
    pub fn session(&self, key: &SessionKey) -> Result<Option<SessionRow>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(None);
        };
        let mut rows = self.sessions_where("WHERE s.id = ?1", [id])?;
        Ok(rows.pop().map(|(_, row)| row))
    }

    /// Every stored session, with its witnesses: what a query compares with the files' stat
    /// fingerprints to tell fresh sources from grown and stale ones. Two statements, whatever
    /// the number of sessions.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        Ok(self.census()?.into_rows())
    }

    /// Every stored session with its row id, and every id range: from the catalog, or the
    /// tables when there is none ([`super::catalog`]).
    pub fn census(&self) -> Result<Census, StoreError> {
        match catalog::read(&self.conn)? {
            Some(census) => Ok(census),
            None => self.census_of_tables(),
        }
    }

    /// [`Store::census`], read again only when the database changed since it was last read:
    /// by another connection (its data version) or by this one (its count of changes).
    pub fn census_shared(&self) -> Result<std::sync::Arc<Census>, StoreError> {
        let version: i64 = (self.conn).query_row("PRAGMA data_version", [], |r| r.get(0))?;
        let changes = self.conn.total_changes();
        let mut cached = self.census.borrow_mut();
        if let Some((v, c, census)) = cached.as_ref() {
            if (*v, *c) == (version, changes) {
                return Ok(census.clone());
            }
        }
        let census = std::sync::Arc::new(self.census()?);
        *cached = Some((version, changes, census.clone()));
        Ok(census)
    }

    /// [`Store::census`] from the tables.
    pub(super) fn census_of_tables(&self) -> Result<Census, StoreError> {
        Ok(Census::new(
            &self.sessions_where("", [])?,
            ranges::all(&self.conn)?,
        ))
    }

    /// The sessions a `WHERE` on `sessions s` selects, each with its row id, by id.
    fn sessions_where(
        &self,
        filter: &str,
        args: impl rusqlite::Params + Clone,
    ) -> Result<Vec<(i64, SessionRow)>, StoreError> {
        let mut by_id: HashMap<i64, usize> = HashMap::new();
        let mut rows: Vec<(i64, SessionRow)> = Vec::new();
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.id, s.harness, s.session_id, s.root_path, s.state, s.reason,
                    s.decoder_version, s.indexed_at, s.bytes, s.lineage_open, {}
             FROM sessions s {filter} ORDER BY s.id",
            sum::checked("s", sum::SESSION)
        ))?;
        let mut q = stmt.query(args.clone())?;
        while let Some(r) = q.next()? {
            sum::whole(r.get(10)?)?;
            let id = r.get(0)?;
            by_id.insert(id, rows.len());
            rows.push((
                id,
                SessionRow {
                    key: SessionKey::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                    root_path: path(r.get(3)?),
                    state: match r.get::<_, String>(4)?.as_str() {
                        "indexed" => SessionState::Indexed,
                        _ => SessionState::Failed,
                    },
                    reason: r.get(5)?,
                    decoder_version: r.get::<_, String>(6)?.into(),
                    indexed_at: Timestamp(r.get(7)?),
                    bytes: uint(r.get(8)?),
                    lineage_open: r.get(9)?,
                    witnesses: Vec::new(),
                },
            ));
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT w.session, w.path, w.dev, w.ino, w.size, w.mtime_ns, w.ctime_ns,
                    w.checkpoint, w.checkpoint_hash, {}
             FROM witnesses w JOIN sessions s ON s.id = w.session {filter}
             ORDER BY w.session, w.ordinal",
            sum::checked("w", sum::WITNESS)
        ))?;
        let mut q = stmt.query(args)?;
        while let Some(r) = q.next()? {
            sum::whole(r.get(9)?)?;
            let Some(&at) = by_id.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            rows[at].1.witnesses.push(Witness {
                file: history_core::Witness {
                    path: path(r.get(1)?),
                    fingerprint: Fingerprint {
                        dev: r.get::<_, i64>(2)? as u64,
                        ino: r.get::<_, i64>(3)? as u64,
                        size: uint(r.get(4)?),
                        mtime_ns: r.get(5)?,
                        ctime_ns: r.get(6)?,
                    },
                },
                checkpoint: uint(r.get(7)?),
                checkpoint_hash: r.get::<_, i64>(8)? as u64,
            });
        }
        Ok(rows)
    }

    /// The session's lines that hold every one of `tokens`, by seq: the candidates, which the
    /// caller reads by byte range and verifies.
    pub fn matching_lines(
        &self,
        key: &SessionKey,
        tokens: &[Token],
    ) -> Result<Vec<Candidate>, StoreError> {
        let ids = self.candidate_ids(key, tokens)?;
        self.lines_of_among(key, &ids)
    }

    /// The ids, ascending, of the lines that may be the session's and hold every one of
    /// `tokens`: [`Store::lines_of_among`] reads those that are.
    pub fn candidate_ids(
        &self,
        key: &SessionKey,
        tokens: &[Token],
    ) -> Result<Vec<u64>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(Vec::new());
        };
        // A session's lines are written together, so their ids lie close: only the stretch of
        // each token's list that can be this session's is read.
        let (first, last): (Option<i64>, Option<i64>) = self
            .conn
            .prepare_cached("SELECT min(id), max(id) FROM lines WHERE session = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(Vec::new());
        };
        Ok(candidates(&self.conn, tokens, uint(first)..=uint(last))?)
    }

    /// The lines of session `key` among `ids` (candidates the caller already has, as
    /// [`Store::located`] gives them), by seq.
    pub fn lines_of_among(
        &self,
        key: &SessionKey,
        ids: &[u64],
    ) -> Result<Vec<Candidate>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        match self.session_id(key)? {
            Some(id) => self.lines_among(id, ids),
            None => Ok(Vec::new()),
        }
    }

    /// Every line of the session `key`, by seq, which are `ids` (every id its writes gave
    /// its lines, ascending): each of them found, or gone.
    pub fn lines_of_session(
        &self,
        key: &SessionKey,
        ids: &[u64],
    ) -> Result<Vec<Candidate>, StoreError> {
        let mut lines = Vec::new();
        self.each_line_of_session(key, ids, &mut |c| {
            lines.push(c);
            true
        })?;
        Ok(lines)
    }

    /// [`Store::lines_of_session`], each line given to `each` as it is read rather than held,
    /// until `each` says to stop: what was given is to be forgotten if this then fails.
    pub fn each_line_of_session(
        &self,
        key: &SessionKey,
        ids: &[u64],
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), StoreError> {
        let Some(session) = self.session_id(key)? else {
            return Ok(());
        };
        // By the session's own index, in seq order: no sort of the ids.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {}, l.session, l.id FROM lines l WHERE l.session = ?1 ORDER BY l.seq",
            line_columns()
        ))?;
        let rows = stmt.query([session])?;
        self.accounted(session, ids, rows, each)
    }

    fn lines_among(&self, session: i64, ids: &[u64]) -> Result<Vec<Candidate>, StoreError> {
        // Every line among them, whatever its session, so that each id is accounted for.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {}, l.session, l.id FROM lines l WHERE l.id IN rarray(?1) ORDER BY l.seq",
            line_columns()
        ))?;
        let rows = stmt.query([id_array(ids)])?;
        let mut lines = Vec::new();
        self.accounted(session, ids, rows, &mut |c| {
            lines.push(c);
            true
        })?;
        Ok(lines)
    }

    /// Gives `each` the lines of `session` among `rows` (lines with their session and id, in
    /// seq order) until it says to stop, and then checks that every one of `ids` (ascending)
    /// is accounted for: found among them (or, after a stop, among the session's later lines,
    /// by their ids alone), or gone; a line of the session not among them is damage.
    fn accounted(
        &self,
        session: i64,
        ids: &[u64],
        mut rows: rusqlite::Rows<'_>,
        each: &mut dyn FnMut(Candidate) -> bool,
    ) -> Result<(), StoreError> {
        let mut found = Vec::with_capacity(ids.len());
        let mut stop = None;
        while let Some(r) = rows.next()? {
            let line = candidate(r)?;
            let id = uint(r.get(10)?);
            found.push(id);
            if r.get::<_, i64>(9)? == session {
                if ids.binary_search(&id).is_err() {
                    return Err(StoreError::Corrupt);
                }
                let seq = line.line.seq;
                if !each(line) {
                    stop = Some(seq);
                    break;
                }
            }
        }
        if let Some(seq) = stop {
            // From the index on (session, seq), not the rows.
            let mut stmt = (self.conn)
                .prepare_cached("SELECT id FROM lines WHERE session = ?1 AND seq > ?2")?;
            let mut rest = stmt.query(params![session, int(seq)])?;
            while let Some(r) = rest.next()? {
                let id = uint(r.get(0)?);
                if ids.binary_search(&id).is_err() {
                    return Err(StoreError::Corrupt);
                }
                found.push(id);
            }
        }
        found.sort_unstable();
        let missing: Vec<u64> = (ids.iter())
            .filter(|id| found.binary_search(id).is_err())
            .copied()
            .collect();
        self.all_gone(&missing)
    }

    /// Checks that each of `ids` (ascending), which are no line's, is a removed line's: any
    /// other is a line whose row damage hid.
    fn all_gone(&self, ids: &[u64]) -> Result<(), StoreError> {
        let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
            return Ok(());
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM gone WHERE id BETWEEN ?1 AND ?2")?;
        let mut rows = stmt.query(params![int(first), int(last)])?;
        let mut gone = 0;
        while let Some(r) = rows.next()? {
            gone += usize::from(ids.binary_search(&uint(r.get(0)?)).is_ok());
        }
        if gone != ids.len() {
            return Err(StoreError::Corrupt);
        }
        Ok(())
    }

    /// Where a decode of the session stopped, if it can go on from there.
    pub fn resume(&self, key: &SessionKey) -> Result<Option<Snapshot>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT offset, lines, settled, state, {} FROM resumes r WHERE session = ?1",
                sum::checked("r", sum::RESUME)
            ))?
            .query_row([id], |r| {
                sum::whole(r.get(4)?)?;
                Ok(Snapshot {
                    offset: uint(r.get(0)?),
                    lines: uint(r.get(1)?),
                    settled: uint(r.get(2)?),
                    state: r.get(3)?,
                })
            })
            .optional()?)
    }

    /// Each stored line's seq and whether it is on the selected branch, by seq.
    pub fn branch_marks(&self, key: &SessionKey) -> Result<Vec<(u64, bool)>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(Vec::new());
        };
        // Unchecked, for an update's speed (a long session's every line): a mark it moves is
        // checked as it is moved ([`SessionWriter::mark_branch`](super::SessionWriter)).
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, branch FROM lines WHERE session = ?1 ORDER BY seq")?;
        let rows = stmt
            .query_map([id], |r| Ok((uint(r.get(0)?), r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What the stored session is about; `None` when it is not stored or says nothing.
    pub fn session_meta(&self, key: &SessionKey) -> Result<Option<StoredMeta>, StoreError> {
        let json: Option<Option<String>> = self.session_value(key, "meta")?;
        Ok(json.flatten().and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// The stored line at `seq` of the session, with its branch mark and events; `None` when
    /// there is none.
    pub fn line_at(&self, key: &SessionKey, seq: u64) -> Result<Option<Candidate>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(None);
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM lines l WHERE l.session = ?1 AND l.seq = ?2",
            line_columns()
        ))?;
        Ok(stmt
            .query_row(params![id, int(seq)], candidate)
            .optional()?)
    }

    /// Every stored line of the session, by seq, with its branch mark and events.
    pub fn stored_lines(&self, key: &SessionKey) -> Result<Vec<Candidate>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM lines l
             WHERE l.session = ?1 ORDER BY l.seq",
            line_columns()
        ))?;
        let rows = stmt.query_map([id], candidate)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Every line holding every one of `tokens`; and for each session at `positions` among the
    /// census's rows ([`Census::positions`]) with such lines, by its index there, the
    /// times of the lines of each write of the session that holds some ([`super::ranges`]:
    /// a frequent term's lines never cross into SQL one by one), with the range of the
    /// candidates' ids among them. A caller that keeps both finds a session's candidates
    /// ([`Store::lines_of_among`]) without reading the token lists again. A candidate in no
    /// session's range must be a removed line, or the database is damaged.
    pub fn located(
        &self,
        census: &Census,
        positions: &[Option<usize>],
        tokens: &[Token],
    ) -> Result<Located, StoreError> {
        let wanted = census.ids_at(positions);
        if wanted.is_empty() {
            return Ok(Located::default());
        }
        let ranges = &census.ranges;
        let lists = postings::lists(&self.conn, tokens)?;
        let lines: u64 = ranges.iter().map(|(_, r)| r.len()).sum();
        if !tokens.is_empty() && lists.rarest.saturating_mul(DENSE) > lines {
            let mut spans = Vec::with_capacity(ranges.len().min(wanted.len()));
            spans.extend(ranges.iter().filter_map(|(session, range)| {
                Some(LocatedSpan {
                    session: *wanted.get(session)?,
                    times: range.times(),
                    ids: uint(range.first)..=uint(range.last),
                })
            }));
            return Ok(Located {
                ids: Vec::new(),
                spans,
                dense: Some(lists),
            });
        }
        let ids = match tokens.is_empty() {
            true => candidates(&self.conn, tokens, 1..=i64::MAX as u64)?,
            false => lists.within(1..=i64::MAX as u64),
        };
        let (mut spans, mut unplaced) = (Vec::new(), Vec::new());
        let (mut at, mut r) = (0, 0);
        // Both in id order, the ranges apart from one another: one pass over each.
        while let Some(&id) = ids.get(at) {
            let id_ = int(id);
            r += ranges[r..].partition_point(|(_, range)| range.last < id_);
            match ranges.get(r) {
                Some((session, range)) if range.first <= id_ => {
                    let end = at + ids[at..].partition_point(|&i| int(i) <= range.last);
                    if let Some(&k) = wanted.get(session) {
                        spans.push(LocatedSpan {
                            session: k,
                            times: range.times(),
                            ids: id..=ids[end - 1],
                        });
                    }
                    at = end;
                }
                _ => {
                    unplaced.push(id);
                    at += 1;
                }
            }
        }
        self.all_gone(&unplaced)?;
        Ok(Located {
            ids,
            spans,
            dense: None,
        })
    }

    /// The session's lines with seqs in `seqs`, by seq: what a page around a hit needs.
    pub fn lines(&self, key: &SessionKey, seqs: Range<u64>) -> Result<Vec<LineRow>, StoreError> {
        let Some(id) = self.session_id(key)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM lines l
             WHERE l.session = ?1 AND l.seq >= ?2 AND l.seq < ?3 ORDER BY l.seq",
            line_columns()
        ))?;
        let rows = stmt
            .query_map(params![id, int(seqs.start), int(seqs.end)], |r| {
                candidate(r).map(|c| c.line)
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What `doctor` shows. Counts only; in degraded mode the counts a newer schema no longer
    /// answers are zero.
    pub fn stats(&self) -> Result<Stats, StoreError> {
        let mut stats = Stats {
            path: self.path.clone(),
            size_on_disk: self.size_on_disk(),
            schema_version: self.schema_version,
            writable: self.writable,
            sessions_indexed: 0,
            sessions_failed: 0,
            failures: BTreeMap::new(),
            lines: 0,
            bytes_covered: 0,
            last_update: None,
            quarantined: place::quarantines(&self.path).len(),
        };
        // One state for every count, whatever an update commits meanwhile.
        let counted = (self.begin_read())
            .and_then(|()| self.count_into(&mut stats))
            .and_then(|()| self.end_read());
        if self.writable {
            counted?;
        }
        Ok(stats)
    }

    /// The bytes the database and its companion files take, without counting what it holds.
    pub fn size_on_disk(&self) -> u64 {
        std::iter::once("")
            .chain(place::COMPANIONS)
            .filter_map(|s| std::fs::metadata(place::with_suffix(&self.path, s)).ok())
            .map(|m| m.len())
            .sum()
    }

    fn count_into(&self, stats: &mut Stats) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT state, coalesce(reason, ''), count(*), sum(bytes), max(indexed_at)
             FROM sessions GROUP BY state, reason",
        )?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            let n = uint(r.get(2)?);
            let last: Option<i64> = r.get(4)?;
            stats.last_update = stats.last_update.max(last.map(Timestamp));
            if r.get::<_, String>(0)? == "indexed" {
                stats.sessions_indexed += n;
                stats.bytes_covered += uint(r.get::<_, Option<i64>>(3)?.unwrap_or(0));
            } else {
                stats.sessions_failed += n;
                *stats.failures.entry(r.get(1)?).or_default() += n;
            }
        }
        stats.lines = uint(
            self.conn
                .query_row("SELECT count(*) FROM lines", [], |r| r.get(0))?,
        );
        Ok(())
    }
}

impl Store {
    /// For each of `positions` (in the census, `None` for a session not asked about), the
    /// events of that session on its selected branch that hold one of the terms of `hashes`
    /// ([`super::term_hash`]), each with how often it holds each term, in id order; `None` for a
    /// session one of whose lines has an event whose words are listed nowhere
    /// ([`super::PARTS`]).
    pub fn counted(
        &self,
        census: &Census,
        positions: &[Option<usize>],
        hashes: &[u64],
    ) -> Result<Vec<Option<history_core::Counted>>, StoreError> {
        let ids = |sql: &str| -> rusqlite::Result<Vec<u64>> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let rows = stmt.query_map([], |r| r.get::<_, i64>(0))?;
            rows.map(|r| r.map(uint)).collect()
        };
        let off =
            ids("SELECT id FROM lines INDEXED BY lines_off_branch WHERE branch = 0 ORDER BY id")?;
        let gone = ids("SELECT id FROM gone ORDER BY id")?;
        let wanted = census.ids_at(positions);
        let ranges = &census.ranges;
        // The session asked about that line `line` is of, if any, and the last line of its
        // range; damage for a line of no session that is not gone.
        let session_of = |line: u64| -> rusqlite::Result<(Option<usize>, u64)> {
            let id = int(line);
            let r = ranges.partition_point(|(_, range)| range.last < id);
            match ranges.get(r) {
                Some((session, range)) if range.first <= id => {
                    Ok((wanted.get(session).copied(), uint(range.last)))
                }
                _ if gone.binary_search(&line).is_ok() => Ok((None, line)),
                _ => Err(sum::corrupt()),
            }
        };
        let mut out: Vec<Option<history_core::Counted>> = (positions.iter())
            .map(|p| p.map(|_| history_core::Counted::default()))
            .collect();
        let segments = postings::segment_ids(&self.conn)?;
        words::counted(
            &self.conn,
            &segments,
            hashes,
            ([&gone, &off], &session_of),
            &mut out,
        )?;
        Ok(out)
    }
}
