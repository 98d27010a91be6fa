//! Where each session's lines lie among the line ids, and when they happen: one row per write of
//! a session (the ids a write gives its new lines are consecutive), with the kinds and bounds
//! of its lines' times. A query maps its candidate line ids to sessions and times by merging
//! them against these rows, in Rust, rather than sending every candidate to SQL: a word on
//! most lines costs a read of this table, not of each candidate's row.
//!
//! A row outlives the lines of its range that a later write removes: its bounds still hold the
//! lines that remain (they can only be too wide), and the session's candidates are read by id
//! before any is shown.

use history_core::{LineTime, Timestamp};
use rusqlite::{params, Connection};

use super::record::TimeSpan;
use super::sum;

/// The columns of `ranges` its sum covers.
pub(super) const COLUMNS: &str = "first, last, session, kinds, min_at, max_time";

/// The bit of [`IdRange`]'s kinds that says its lines' times never go back from one id to the
/// next: each line is untimed or at a time, the untimed ones first, and the times do not
/// decrease. Then the order of the ids is the order of the lines' events in time, and a query
/// reads a session's lines from either end until its page is full.
const ORDERED: i64 = 16;

/// The ids one write of a session gave its lines, and their times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct IdRange {
    pub first: i64,
    pub last: i64,
    /// A bit per kind of line time among them: 1 untimed, 2 at, 4 at most, 8 unknown; and
    /// [`ORDERED`].
    kinds: i64,
    /// The earliest time of those at a time.
    min_at: Option<i64>,
    /// The latest time of those at or at most a time.
    max_time: Option<i64>,
}

impl IdRange {
    /// The range of the one line `id`, at `time`.
    pub(super) fn of(id: i64, time: LineTime) -> IdRange {
        let (kinds, min_at, max_time) = match time {
            LineTime::Untimed => (1 | ORDERED, None, None),
            LineTime::At(t) => (2 | ORDERED, Some(t.0), Some(t.0)),
            LineTime::AtMost(t) => (4, None, Some(t.0)),
            LineTime::Unknown => (8, None, None),
        };
        IdRange {
            first: id,
            last: id,
            kinds,
            min_at,
            max_time,
        }
    }

    /// Both ranges as one (a write's lines, one after another; or a session's writes).
    pub(super) fn join(self, other: IdRange) -> IdRange {
        let min = |a: Option<i64>, b: Option<i64>| a.into_iter().chain(b).min();
        let (before, after) = match self.first <= other.first {
            true => (self, other),
            false => (other, self),
        };
        let ordered = before.ordered() && after.ordered() && before.max_time <= after.earliest();
        IdRange {
            first: before.first,
            last: self.last.max(other.last),
            kinds: (self.kinds | other.kinds) & !ORDERED | if ordered { ORDERED } else { 0 },
            min_at: min(self.min_at, other.min_at),
            max_time: self.max_time.max(other.max_time),
        }
    }

    /// Whether its lines' times never go back from one id to the next ([`ORDERED`]).
    pub(super) fn ordered(&self) -> bool {
        self.kinds & ORDERED != 0
    }

    /// The time of its first line when it is [`ordered`](IdRange::ordered) (`None`: untimed,
    /// which comes first).
    fn earliest(&self) -> Option<i64> {
        if self.kinds & 1 != 0 {
            return None;
        }
        self.min_at
    }

    /// How many ids it spans.
    pub(super) fn len(&self) -> u64 {
        (self.last - self.first + 1).max(0) as u64
    }

    /// Its values as the catalog keeps them ([`super::catalog`]).
    pub(super) fn values(&self) -> [i64; 6] {
        let present = i64::from(self.min_at.is_some()) | i64::from(self.max_time.is_some()) << 1;
        [
            self.first,
            self.last,
            self.kinds,
            present,
            self.min_at.unwrap_or(0),
            self.max_time.unwrap_or(0),
        ]
    }

    /// The range of [`IdRange::values`].
    pub(super) fn from_values(
        [first, last, kinds, present, min_at, max_time]: [i64; 6],
    ) -> IdRange {
        IdRange {
            first,
            last,
            kinds,
            min_at: (present & 1 != 0).then_some(min_at),
            max_time: (present & 2 != 0).then_some(max_time),
        }
    }

    /// The span of its lines' times, as [`super::Located`] gives it: `None` when one has no
    /// known time; an earliest of `None` when one is untimed or only bounded from above.
    pub(super) fn times(&self) -> Option<TimeSpan> {
        if self.kinds & 8 != 0 {
            return None;
        }
        let first = match self.kinds & (1 | 4) {
            0 => self.min_at.map(Timestamp),
            _ => None,
        };
        Some((first, self.max_time.map(Timestamp)))
    }
}

/// Records that session `session` wrote the lines `range`.
pub(super) fn put(conn: &Connection, session: i64, range: &IdRange) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO ranges (first, last, session, kinds, min_at, max_time, sum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, row_sum(?1, ?2, ?3, ?4, ?5, ?6))",
    )?
    .execute(params![
        range.first,
        range.last,
        session,
        range.kinds,
        range.min_at,
        range.max_time
    ])?;
    Ok(())
}

/// Every range with its session's row id, by first id, each checked against its sum.
pub(super) fn all(conn: &Connection) -> rusqlite::Result<Vec<(i64, IdRange)>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, {} FROM ranges r ORDER BY first",
        sum::checked("r", COLUMNS)
    ))?
    .query_map([], |r| {
        sum::whole(r.get(6)?)?;
        Ok((
            r.get(2)?,
            IdRange {
                first: r.get(0)?,
                last: r.get(1)?,
                kinds: r.get(3)?,
                min_at: r.get(4)?,
                max_time: r.get(5)?,
            },
        ))
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_spans_its_lines_times_as_the_lines_would() {
        let at = |ns| LineTime::At(Timestamp(ns));
        let r = IdRange::of(5, at(30)).join(IdRange::of(6, at(10)));
        assert_eq!((r.first, r.last), (5, 6));
        assert_eq!(r.times(), Some((Some(Timestamp(10)), Some(Timestamp(30)))));
        let most = r.join(IdRange::of(7, LineTime::AtMost(Timestamp(40))));
        assert_eq!(most.times(), Some((None, Some(Timestamp(40)))));
        let untimed = IdRange::of(8, LineTime::Untimed);
        assert_eq!(untimed.times(), Some((None, None)));
        assert_eq!(r.join(untimed).times(), Some((None, Some(Timestamp(30)))));
        assert_eq!(r.join(IdRange::of(9, LineTime::Unknown)).times(), None);
    }

    #[test]
    fn a_range_is_ordered_while_its_times_never_go_back() {
        let at = |id, ns| IdRange::of(id, LineTime::At(Timestamp(ns)));
        let untimed = |id| IdRange::of(id, LineTime::Untimed);
        let joined = |ranges: &[IdRange]| ranges.iter().copied().reduce(IdRange::join).unwrap();
        assert!(joined(&[untimed(1), untimed(2), at(3, 10), at(4, 10), at(5, 11)]).ordered());
        // Either way round: a range joins the lines before it or after it.
        assert!(at(7, 20).join(at(6, 10)).ordered());
        assert!(!joined(&[at(1, 10), at(2, 9)]).ordered());
        assert!(!at(2, 10).join(at(1, 11)).ordered());
        assert!(!joined(&[at(1, 10), untimed(2)]).ordered());
        assert!(!joined(&[untimed(1), IdRange::of(2, LineTime::AtMost(Timestamp(5)))]).ordered());
        assert!(!joined(&[at(1, 1), IdRange::of(2, LineTime::Unknown)]).ordered());
        // Two writes of a session: in order when the second starts no earlier than the first
        // ends.
        let first = joined(&[at(1, 10), at(2, 20)]);
        assert!(first.join(joined(&[at(8, 20), at(9, 30)])).ordered());
        assert!(!first.join(joined(&[at(8, 19), at(9, 30)])).ordered());
        assert!(!first.join(joined(&[untimed(8), at(9, 30)])).ordered());
    }
}
