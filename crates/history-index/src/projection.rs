//! The projection as a search consults it ([`history_core::Projection`]): for each
//! session whose stored lines are its lines, or its lines before an append
//! ([`crate::freshness`]), whether any of its lines holds every token of a query, and when those
//! lines happen; an appended session's new lines are decoded for the query. Any other session
//! is unknown and is read.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use history_core::End;
use history_core::Location;
use history_core::Projection;
use history_core::{
    Corpus, Event, Filter, HistoryError, LineTime, SessionFile, SessionKey, SessionMeta, Timestamp,
    Transcript,
};
use history_core::{Counted, HitOrder, HitTexts, Known, SessionEvents, SessionHits, Wanted};
use history_core::{Resumed, Snapshot, WantSnapshot};
use history_raw::RawFilter;

use crate::events::{self, text_hash};
use crate::freshness::{Files, Freshness, Unread};
use crate::store::{
    term_hash, Candidate, Census, Located, SessionRow, Store, StoreError, StoredMeta,
};
use crate::tokens::{query_tokens, Token};

/// The most queries (an OR) whose hits are read from located lines; a search for more decodes
/// the sessions it cannot rule out.
const MAX_LOCATED_QUERIES: usize = 8;

/// The most bytes appended to a session since it was indexed that a query decodes for its hits
/// alone (they are held together); past it, the session is decoded as without the projection.
const MAX_APPENDED: u64 = 16 << 20;

/// A hit a page may take: a stored line's event (its text still to be read), or an event of
/// the appended lines; and whether it is on the selected branch.
enum Hit<'a> {
    Stored(events::Stored, &'a Candidate, bool),
    Appended(Event, bool),
}

/// A store, consulted for one decoder version.
pub struct Index {
    store: Mutex<Store>,
    version: String,
    /// The appended lines of each appended session the last [`Projection::known`] met, decoded
    /// for its filter while it consulted the tokens, for [`Projection::hits`] to take.
    appended: Mutex<HashMap<SessionKey, Appended>>,
    /// The candidate lines the last [`Projection::known`] found, for [`Projection::hits`] to
    /// take each session's from without reading the token lists again.
    located: Mutex<Option<Arc<Found>>>,
    /// The sessions [`Index::candidates`] located last, for the next look at one of them (a
    /// page may look at a session several times, from either end).
    recent: Mutex<Vec<Arc<SessionCandidates>>>,
    /// Whether a read met damage: the query answers by scanning, and the damage is noted for
    /// the next update when the index is dropped.
    damage: Seen,
}

/// How many sessions' candidates [`Index::recent`] keeps.
const RECENT: usize = 64;

/// Whether any store read gave [`StoreError::Corrupt`].
#[derive(Default)]
struct Seen(AtomicBool);

impl Seen {
    /// The value of a read, noting damage; `None` for any error (the query then reads the
    /// session as it would without the index).
    fn ok<T>(&self, read: Result<T, StoreError>) -> Option<T> {
        if let Err(StoreError::Corrupt) = read {
            self.0.store(true, Ordering::Relaxed);
        }
        read.ok()
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        if self.damage.0.load(Ordering::Relaxed) {
            if let Ok(store) = self.store.lock() {
                store.note_damage();
            }
        }
    }
}

impl Index {
    /// The projection in `store`, valid for sessions indexed with `version`, as the database is
    /// now: every answer reads this one state, whatever an update commits meanwhile.
    pub fn new(store: Store, version: impl Into<String>) -> Result<Index, StoreError> {
        store.begin_read()?;
        Ok(Index {
            store: Mutex::new(store),
            version: version.into(),
            appended: Mutex::new(HashMap::new()),
            located: Mutex::new(None),
            recent: Mutex::new(Vec::new()),
            damage: Seen::default(),
        })
    }
}

/// What a decode of an appended session's lines after its snapshot gives.
struct Appended {
    /// The snapshot's settled line: the stored lines after it are given again here.
    settled: u64,
    /// Their events whose texts hold a query (whatever the roles, times and page's bound).
    events: Vec<Event>,
    /// The whole session's branch (`None`: every line).
    branch: Option<Vec<u64>>,
    /// What the whole session is about.
    meta: SessionMeta,
}

/// The snapshot the decode of an appended session's new lines goes on from, read from `store`,
/// when no more than [`MAX_APPENDED`] follows it in its own file (`now`): past a few MiB, the
/// appended lines' hits would all be held at once. `None` when the decode cannot go on from one,
/// or when it is not where the session's stored row (`row`) has its checkpoint: read through
/// another connection, it may be of another state of the database.
fn snapshot_within(store: &Store, seen: &Seen, row: &SessionRow, now: &Files) -> Option<Snapshot> {
    let snapshot = seen.ok(store.resume(&row.key))??;
    if row.witnesses.first().map(|w| w.checkpoint) != Some(snapshot.offset) {
        return None;
    }
    let appended = now.first()?.1.size.saturating_sub(snapshot.offset);
    (appended <= MAX_APPENDED).then_some(snapshot)
}

/// A query's candidate lines as the store located them, and the range of their ids in each
/// session (by its index among the sessions looked up).
type QueryCandidates = (Located, Vec<Option<RangeInclusive<u64>>>);

/// Per session (by index): when it has candidates, the span of their times. A vector rather
/// than a map: a word in every one of 20,000 sessions filled maps of twice the size.
type Spans = Vec<Option<Option<Span>>>;

/// The candidate lines of a filter's queries, as [`Projection::known`] found them.
struct Found {
    queries: Vec<String>,
    per_query: Vec<QueryCandidates>,
    /// What the store held of each session: one the store took in again since has other lines
    /// (ids are never reused), and is looked up anew.
    census: Arc<Census>,
    /// Per session looked up, its row's position in `census`.
    rows: Vec<Option<usize>>,
    /// Per position in `census`, the first session looked up at it.
    slots: Vec<Option<usize>>,
}

impl Found {
    /// The ids among which `key`'s candidates for query `q` are; `None` when this is not
    /// what was found for `filter` or the session's stored lines changed since.
    fn ids(
        &self,
        filter: &Filter,
        q: usize,
        key: &SessionKey,
        row: &SessionRow,
    ) -> Option<Cow<'_, [u64]>> {
        let slot = self.slot(filter, key, row)?;
        let (located, ranges) = self.per_query.get(q)?;
        let Some(range) = ranges.get(slot).and_then(Option::as_ref) else {
            return Some(Cow::Borrowed(&[]));
        };
        if let Some(lists) = &located.dense {
            return Some(Cow::Owned(lists.within(range.clone())));
        }
        let ids = &located.ids;
        let start = ids.partition_point(|id| id < range.start());
        let end = ids.partition_point(|id| id <= range.end());
        Some(Cow::Borrowed(&ids[start..end]))
    }

    /// Whether the times of `key`'s lines never go back from one id to the next
    /// ([`Census::time_ordered`]); `None` as for [`Found::ids`].
    fn time_ordered(&self, filter: &Filter, key: &SessionKey, row: &SessionRow) -> Option<bool> {
        let slot = self.slot(filter, key, row)?;
        Some(self.census.time_ordered(self.rows[slot]?))
    }

    /// The slot of `key` among the sessions looked up, when this is what was found for
    /// `filter` and the session's stored lines are the same since.
    fn slot(&self, filter: &Filter, key: &SessionKey, row: &SessionRow) -> Option<usize> {
        let at = self.census.position(key)?;
        let slot = (*self.slots.get(at)?)?;
        let then = self.census.row(at).witnesses;
        (self.queries == filter.queries() && then == row.witnesses).then_some(slot)
    }
}

/// Per session at `positions` in the census (by index among them) with candidate lines for
/// any of the queries (`per_query`, their tokens), the span of their times (`None` within: one
/// has no known time); and what [`Found`] keeps of them. `None` when the store cannot tell.
fn candidate_spans(
    store: &Store,
    seen: &Seen,
    census: &Census,
    positions: &[Option<usize>],
    per_query: &[Vec<Token>],
) -> Option<(Spans, Vec<QueryCandidates>)> {
    let mut spans: Spans = vec![None; positions.len()];
    let mut found = Vec::new();
    for tokens in per_query {
        let mut located = seen.ok(store.located(census, positions, tokens))?;
        let mut ranges: Vec<Option<RangeInclusive<u64>>> = vec![None; positions.len()];
        for this in std::mem::take(&mut located.spans) {
            let entry = spans.get_mut(this.session)?.get_or_insert(this.times);
            *entry = match (*entry, this.times) {
                (Some((f1, l1)), Some((f2, l2))) => Some((f1.min(f2), l1.max(l2))),
                _ => None,
            };
            let range = ranges
                .get_mut(this.session)?
                .get_or_insert(this.ids.clone());
            *range = *range.start().min(this.ids.start())..=*range.end().max(this.ids.end());
        }
        found.push((located, ranges));
    }
    Some((spans, found))
}

/// Decodes the lines of `file` after `snapshot` for the events that pass `filter`.
fn decode_appended(
    corpus: &Corpus,
    file: &SessionFile,
    filter: &Filter,
    snapshot: &Snapshot,
) -> Option<Appended> {
    let source = corpus.source(&file.key.harness)?;
    let raw = RawFilter::new(filter.queries());
    let test = |line: &[u8]| raw.may_match_slice(line);
    let mut events = Vec::new();
    let mut keep = |e: Event| {
        if filter.matches_text(&e.text) {
            events.push(e);
        }
    };
    let decoded = match source.decode_resumable(
        file,
        &mut keep,
        Some(&test),
        Some(snapshot),
        WantSnapshot::No,
    ) {
        Ok(Resumed::Done(decoded, _)) => decoded,
        Ok(Resumed::Declined) | Err(_) => return None,
    };
    Some(Appended {
        settled: snapshot.settled,
        events,
        branch: decoded.branch,
        meta: decoded.meta,
    })
}

/// The earliest and latest time of the candidate lines of a session (`None` first: untimed).
type Span = crate::store::TimeSpan;

/// What the index holds of each session, with an appended one's files now; `None` when a
/// file cannot be stat'ed.
type Judged = Vec<Option<(Option<Files>, Freshness<Unread>)>>;

/// What [`Projection::known`] found, for [`Found`]: the candidate spans of each looked-up
/// session and the candidate lines of each query.
type Candidates = (Spans, Vec<QueryCandidates>);

/// The candidate spans of the stored lines of the sessions `keys` for the queries' tokens
/// (`per_query`), and meanwhile, on another core, each appended session's new lines decoded for
/// `filter`: `(its index, its decode)` for each whose snapshot is within reach. `appended` are
/// those sessions: each one's index, file, stored row and files now. The snapshots are read
/// through a connection of the decoding thread's own (a connection is not shared between
/// threads).
#[allow(clippy::too_many_arguments)]
fn spans_and_appended(
    store: &Store,
    seen: &Seen,
    census: &Census,
    corpus: &Corpus,
    appended: &[(usize, &SessionFile, SessionRow, &Files)],
    filter: &Filter,
    positions: &[Option<usize>],
    per_query: &[Vec<Token>],
) -> (Option<Candidates>, Vec<(usize, Option<Appended>)>) {
    if appended.is_empty() {
        return (
            candidate_spans(store, seen, census, positions, per_query),
            Vec::new(),
        );
    }
    let reader = store.reader();
    std::thread::scope(|scope| {
        let decoding = scope.spawn(|| {
            let reader = seen.ok(reader.open())?;
            reader.begin_read().ok()?;
            let decoded = appended.iter().filter_map(|(i, file, row, now)| {
                let snapshot = snapshot_within(&reader, seen, row, now)?;
                Some((*i, decode_appended(corpus, file, filter, &snapshot)))
            });
            Some(decoded.collect::<Vec<_>>())
        });
        let spans = candidate_spans(store, seen, census, positions, per_query);
        (spans, decoding.join().ok().flatten().unwrap_or_default())
    })
}

/// What [`Index::candidates`] locates of a session for a filter's queries: its stored
/// candidates; and, of an appended session, the lines after its snapshot decoded for their
/// hits (of any role and time), with the branch and metadata of the whole session as that
/// decode gives them.
struct SessionCandidates {
    /// The file as it was located.
    file: SessionFile,
    /// The folded queries.
    queries: Vec<String>,
    /// Its stored candidates.
    stored: Stored,
    /// Its selected branch.
    branch: Branch,
    /// What it is about.
    meta: SessionMeta,
    /// Of an appended session, the events of its appended lines that hold a query.
    events: Vec<Event>,
}

/// What a query reads of one session from the store ([`Index::stored`]).
struct Stored {
    /// The session's own file, the one its lines are read from.
    path: PathBuf,
    /// The ids, ascending, of its stored lines that may hold a hit (with, it may be, removed
    /// lines' and other sessions' ids, which [`Store::lines_of_among`] leaves out).
    ids: Vec<u64>,
    /// Whether its lines' times never go back from one id to the next.
    ordered: bool,
    /// Of an appended session, its snapshot's settled line: the decode of its appended lines
    /// gives the stored lines after it again. Otherwise `u64::MAX`.
    settled: u64,
    /// What the session is about, as stored.
    meta: SessionMeta,
    /// Of an appended session, its appended lines as [`Projection::known`] decoded them, or the
    /// snapshot to decode them from.
    appended_to: Option<Result<Appended, Snapshot>>,
}

impl Index {
    /// Keeps the appended lines `known` decoded for `filter` (a search asks for hits right
    /// after), in place of those kept before; whether each session's were decoded.
    fn keep_appended(
        &self,
        sessions: &[SessionFile],
        decoded: Vec<(usize, Option<Appended>)>,
    ) -> Vec<bool> {
        let mut grown = vec![false; sessions.len()];
        if let Ok(mut kept) = self.appended.lock() {
            kept.clear();
            for (i, done) in decoded {
                grown[i] = true;
                if let Some(done) = done {
                    kept.insert(sessions[i].key.clone(), done);
                }
            }
        }
        grown
    }

    /// Keeps the candidate lines `known` found for `filter`'s queries in the sessions looked up
    /// (each one's row at its position in `census`), for [`Projection::hits`] to take.
    fn keep_found(
        &self,
        filter: &Filter,
        census: Arc<Census>,
        rows: Vec<Option<usize>>,
        per_query: Vec<QueryCandidates>,
    ) {
        if let Ok(mut located) = self.located.lock() {
            let mut slots = vec![None; census.len()];
            for (slot, at) in rows.iter().enumerate().rev() {
                if let Some(s) = at.and_then(|at| slots.get_mut(at)) {
                    *s = Some(slot);
                }
            }
            *located = Some(Arc::new(Found {
                queries: filter.queries().to_vec(),
                per_query,
                census,
                rows,
                slots,
            }));
        }
    }

    /// What the store holds of `file`'s session for `filter`: its stored lines that may hold a
    /// hit and, when it was appended to, its appended lines or where to decode them from.
    /// `None` when the index does not answer for the session: it is not fresh nor appended to,
    /// it inherits history from another file (not located yet), or the store cannot tell.
    fn stored(
        &self,
        source: &dyn Transcript,
        file: &SessionFile,
        filter: &Filter,
    ) -> Option<Stored> {
        let (row, meta, appended_to) = {
            let store = self.store.lock().ok()?;
            let row = self.damage.ok(store.session(&file.key))??;
            let meta = self.damage.ok(store.session_meta(&file.key))??.meta;
            let (now, freshness) = Freshness::of_session(source, file, Some(&row), &self.version)?;
            // An appended session: its appended lines as `known` decoded them, or the snapshot
            // to decode them from.
            let appended_to = match freshness {
                Freshness::Fresh => None,
                Freshness::Appended(Unread) => {
                    Some(match self.appended.lock().ok()?.remove(&file.key) {
                        Some(done) => Ok(done),
                        None => Err(snapshot_within(&store, &self.damage, &row, &now)?),
                    })
                }
                Freshness::Failed | Freshness::Stale => return None,
            };
            (row, meta, appended_to)
        };
        // Inherited history is not located yet: only a session's own file is.
        let [witness] = row.witnesses.as_slice() else {
            return None;
        };
        let settled = match &appended_to {
            None => u64::MAX,
            Some(Ok(done)) => done.settled,
            Some(Err(snapshot)) => snapshot.settled,
        };
        // The candidates are worked out with the store free for the other cores' sessions.
        let (ids, ordered) = self.candidate_ids(&file.key, filter, &row)?;
        Some(Stored {
            path: witness.file.path.clone(),
            ids,
            ordered,
            settled,
            meta,
            appended_to,
        })
    }

    /// The file a session's lines are read from and what it is about, when the index holds the
    /// session from that file alone, as it now is (not appended to since).
    fn fresh(
        &self,
        store: &Store,
        source: &dyn Transcript,
        file: &SessionFile,
    ) -> Option<(PathBuf, StoredMeta)> {
        let row = self.damage.ok(store.session(&file.key))??;
        let [witness] = row.witnesses.as_slice() else {
            return None;
        };
        let (_, freshness) = Freshness::of_session(source, file, Some(&row), &self.version)?;
        if !matches!(freshness, Freshness::Fresh) {
            return None;
        }
        let about = self.damage.ok(store.session_meta(&file.key))??;
        Some((witness.file.path.clone(), about))
    }

    /// The ids, ascending, of the stored lines of session `key` (stored as `row`) that may hold
    /// a hit of any of `filter`'s queries: among those the last [`Projection::known`] found for
    /// the filter, or looked up anew. With whether the session's lines are in time order by
    /// id, as far as what `known` found tells (a session looked up anew is taken not to be).
    fn candidate_ids(
        &self,
        key: &SessionKey,
        filter: &Filter,
        row: &SessionRow,
    ) -> Option<(Vec<u64>, bool)> {
        let found = self.located.lock().ok()?.clone();
        let found = found.as_deref();
        let mut all: Vec<u64> = Vec::new();
        for (q, query) in filter.queries().iter().enumerate() {
            let ids = match found.and_then(|f| f.ids(filter, q, key, row)) {
                Some(ids) => ids.into_owned(),
                None => {
                    let store = self.store.lock().ok()?;
                    (self.damage).ok(store.candidate_ids(key, &query_tokens(query)?))?
                }
            };
            if all.is_empty() {
                all = ids;
            } else {
                all.extend(ids);
                all.sort_unstable();
                all.dedup();
            }
        }
        let ordered = found.and_then(|f| f.time_ordered(filter, key, row));
        Some((all, ordered == Some(true)))
    }

    /// What [`Projection::hits`] reads of a session for `filter`'s queries
    /// ([`SessionCandidates`]), as the last look at the same file located them if it is one of
    /// the [`RECENT`]. `None` past [`MAX_LOCATED_QUERIES`] queries: each is a statement per
    /// session, and past a few, a decode costs less.
    fn candidates(
        &self,
        corpus: &Corpus,
        source: &dyn Transcript,
        file: &SessionFile,
        filter: &Filter,
    ) -> Option<Arc<SessionCandidates>> {
        if filter.queries().len() > MAX_LOCATED_QUERIES {
            return None;
        }
        let same = |c: &&Arc<SessionCandidates>| {
            (c.file.key == file.key && c.file.path == file.path)
                && (c.file.size, c.file.modified) == (file.size, file.modified)
                && c.queries == filter.queries()
        };
        if let Some(found) = self.recent.lock().ok()?.iter().find(same) {
            return Some(found.clone());
        }
        let mut stored = self.stored(source, file, filter)?;
        let appended = match stored.appended_to.take() {
            None => None,
            Some(Ok(done)) => Some(done),
            Some(Err(snapshot)) => Some(decode_appended(corpus, file, filter, &snapshot)?),
        };
        let (branch, meta, events) = match appended {
            Some(done) => (Branch(Some(done.branch)), done.meta, done.events),
            None => (Branch(None), std::mem::take(&mut stored.meta), Vec::new()),
        };
        let located = Arc::new(SessionCandidates {
            file: file.clone(),
            queries: filter.queries().to_vec(),
            stored,
            branch,
            meta,
            events,
        });
        let mut recent = self.recent.lock().ok()?;
        if recent.len() == RECENT {
            recent.remove(0);
        }
        recent.push(located.clone());
        Some(located)
    }

    /// The stored lines of session `key` among `ids` up to `settled`, by seq.
    fn lines(&self, key: &SessionKey, ids: &[u64], settled: u64) -> Option<Lines> {
        let store = self.store.lock().ok()?;
        let read = self.damage.ok(store.lines_of_among(key, ids))?;
        Some(
            (read.into_iter())
                .filter(|c| c.line.seq <= settled)
                .map(|c| (c.line.seq, c))
                .collect(),
        )
    }

    /// The hits of a session whose lines are in time order by id ([`Stored::ordered`]), read
    /// from its candidate lines a chunk at a time from `wanted.from`'s end, until the page has
    /// what it wants: the lines past a chunk hold no event that comes before that chunk's
    /// own. An appended event joins the hits once the lines read reach its place. `None` when
    /// a line cannot be read or decoded; `Some(None)` when an event's time is not its line's
    /// stored time (the order of the ids is then not the events'): the hits are then read as
    /// without the order.
    fn walk(
        &self,
        source: &dyn Transcript,
        key: &SessionKey,
        stored: &Stored,
        appended: &[(Rank, Event, bool)],
        wanted: &Wanted<'_>,
        branch: &Branch,
    ) -> Option<Option<Vec<HitAt>>> {
        let from = wanted.from;
        let mut rest = stored.ids.as_slice();
        let (mut hits, mut next) = (Vec::new(), 0);
        let mut chunk = wanted.count.saturating_mul(2).max(WALK_CHUNK);
        while hits.len() < wanted.count {
            let n = chunk.min(rest.len());
            let ids = match from {
                End::Newest => {
                    let (before, last) = rest.split_at(rest.len() - n);
                    rest = before;
                    last
                }
                End::Oldest => {
                    let (first, after) = rest.split_at(n);
                    rest = after;
                    first
                }
            };
            let lines = self.lines(key, ids, stored.settled)?;
            let mut order = Vec::new();
            if !stored_hits(lines.values(), branch, wanted, &mut order)? {
                return Some(None);
            }
            // The appended events that come before every line not read yet: all of them once
            // every line is read.
            let reached = match from {
                End::Newest => lines.values().next(),
                End::Oldest => lines.values().next_back(),
            };
            let reached = reached.map(|c| line_rank(c, from));
            while let Some((rank, event, on)) = appended.get(next) {
                let now = match reached {
                    _ if rest.is_empty() => true,
                    None => false,
                    Some(line) => comes_first(*rank, line, from),
                };
                if !now {
                    break;
                }
                order.push((*rank, Hit::Appended(event.clone(), *on)));
                next += 1;
            }
            sort_from(&mut order, from);
            let want = wanted.count - hits.len();
            hits.extend(read_hits(source, &stored.path, order, wanted, want)?);
            if rest.is_empty() {
                break;
            }
            chunk = chunk.saturating_mul(2);
        }
        Some(Some(hits))
    }
}

/// A hit and where its line is (none for an appended line's).
type HitAt = (Event, Option<Location>);

/// The stored lines a query reads, by seq.
type Lines = BTreeMap<u64, Candidate>;

/// Where an event stands in a session's merge order: time, line, part.
type Rank = (Option<Timestamp>, u64, u32);

/// The fewest candidate lines a walk reads at a time ([`Index::walk`]); a session with no more
/// than twice as many is read whole.
const WALK_CHUNK: usize = 64;

/// The rank that every line not yet read comes after (from the newest end: before), when the
/// walk from `from` has read line `c`: they are further from `from` in seq and no nearer in
/// time.
fn line_rank(c: &Candidate, from: End) -> Rank {
    let time = match c.line.time {
        LineTime::At(t) => Some(t),
        _ => None,
    };
    let part = match from {
        End::Newest => 0,
        End::Oldest => u32::MAX,
    };
    (time, c.line.seq, part)
}

/// Whether `rank` comes before `other` walking from `from` (an appended event's rank is never
/// a stored line's: its seq is past them).
fn comes_first(rank: Rank, other: Rank, from: End) -> bool {
    match from {
        End::Newest => rank > other,
        End::Oldest => rank < other,
    }
}

/// Which lines are on the selected branch: as each stored line is marked, or, after an
/// appended decode, as that decode found the whole session's branch (`None`: every line).
struct Branch(Option<Option<Vec<u64>>>);

impl Branch {
    fn on(&self, seq: u64, stored: bool) -> bool {
        match &self.0 {
            None => stored,
            Some(None) => true,
            Some(Some(b)) => b.binary_search(&seq).is_ok(),
        }
    }
}

/// What the index knows of a session's hits, from what it holds of the session (`judged`),
/// whether the session's appended lines were decoded (`grown`), and its index among the
/// sessions whose candidate `spans` were looked up (`slot`).
fn known_of(
    judged: Option<&(Option<Files>, Freshness<Unread>)>,
    grown: bool,
    slot: Option<usize>,
    spans: &Spans,
) -> Known {
    match judged {
        Some((_, Freshness::Failed)) => return Known::Unindexable,
        _ if grown => {
            return Known::Within {
                first: None,
                last: Some(Timestamp(i64::MAX)),
                appended: true,
            }
        }
        // Appended, but its new lines were not decoded (too many of them, or no snapshot to go
        // on from): its stored lines alone would miss their hits.
        Some((_, Freshness::Appended(Unread))) => return Known::Unknown,
        _ => {}
    }
    let Some(slot) = slot else {
        return Known::Unknown;
    };
    match spans.get(slot).copied().flatten() {
        None => Known::NoHit,
        Some(None) => Known::Unknown,
        Some(Some((first, last))) => Known::Within {
            first,
            last,
            appended: false,
        },
    }
}

/// The events of stored `lines` that pass the filter's roles and times and `wanted.admit`,
/// each with its rank, into `order`: each marked on the selected branch or off it (`branch`),
/// those off it left out unless every branch is wanted. Whether every event's time is its
/// line's stored time; `None` when a line's events do not decode.
fn stored_hits<'a>(
    lines: impl IntoIterator<Item = &'a Candidate>,
    branch: &Branch,
    wanted: &Wanted<'_>,
    order: &mut Vec<(Rank, Hit<'a>)>,
) -> Option<bool> {
    let mut agree = true;
    for c in lines {
        let on = branch.on(c.line.seq, c.branch);
        if !(wanted.all_branches || on) {
            continue;
        }
        let time = match c.line.time {
            LineTime::At(t) => Some(Some(t)),
            LineTime::Untimed => Some(None),
            LineTime::AtMost(_) | LineTime::Unknown => None,
        };
        for stored in events::decode(&c.events)? {
            agree &= time == Some(stored.timestamp);
            let event = stored.event(c.line.seq, String::new());
            if wanted.filter.in_time(&event)
                && wanted.filter.has_role(&event)
                && (wanted.admit)(&event)
            {
                let rank = rank(wanted, stored.timestamp, c.line.seq, stored.part);
                order.push((rank, Hit::Stored(stored, c, on)));
            }
        }
    }
    Some(agree)
}

/// The appended events `wanted.admit` takes, each with its rank and whether it is on the
/// selected branch (`branch`), those off it left out unless every branch is wanted; in the
/// order `wanted.from` counts them.
fn appended_hits(
    events: &[Event],
    branch: &Branch,
    wanted: &Wanted<'_>,
) -> Vec<(Rank, Event, bool)> {
    let filter = wanted.filter;
    let mut hits: Vec<_> = (events.iter())
        .filter(|e| filter.in_time(e) && filter.has_role(e) && (wanted.admit)(e))
        .filter_map(|e| {
            let on = branch.on(e.seq, true);
            let rank = rank(wanted, e.timestamp, e.seq, e.part);
            (wanted.all_branches || on).then(|| (rank, e.clone(), on))
        })
        .collect();
    hits.sort_by_key(|(rank, ..)| *rank);
    if wanted.from == End::Newest {
        hits.reverse();
    }
    hits
}

/// The events of a stored `line` of the file at `path`, its bytes read from where it was and
/// decoded alone, on every branch, marked: each stored event takes the replayed text of its
/// hash. `None` when the line cannot be read or no longer gives the texts it was stored with.
fn read_line(source: &dyn Transcript, path: &Path, line: &Candidate) -> Option<Vec<Event>> {
    let seq = line.line.seq;
    let len = usize::try_from(line.line.len).ok()?;
    let bytes = source.read_at(path, line.line.offset, len)?.ok()?;
    let mut texts: Vec<(u64, String)> = Vec::new();
    let replayed = source.replay(seq, &bytes, &mut |e: Event| {
        texts.push((text_hash(&e.text), e.text));
    });
    if !replayed {
        return None;
    }
    let mut events = Vec::new();
    for stored in events::decode(&line.events)? {
        let i = texts.iter().position(|(hash, _)| *hash == stored.text)?;
        let mut event = stored.event(seq, texts.remove(i).1);
        event.on_active_branch = Some(line.branch);
        events.push(event);
    }
    events.sort_by_key(Event::position);
    Some(events)
}

/// An event's rank in the order `wanted` counts hits in: by time, else by position.
fn rank(wanted: &Wanted<'_>, time: Option<Timestamp>, seq: u64, part: u32) -> Rank {
    match wanted.order {
        HitOrder::Position => (None, seq, part),
        HitOrder::Merge | HitOrder::Cheapest => (time, seq, part),
    }
}

/// The most candidate lines whose hits are counted shortest line first ([`HitOrder::Cheapest`]):
/// past them, looking up every line's length costs more than the walk from the newest end
/// spares. Looked up for the 5,765 of the 128 MiB bench transcript, `--sessions` for a word on
/// most lines took 24.8 ms instead of 16.8 (its walk takes 4 ms; a session's 271 looked up
/// took its count from 2.6 to 2.1 ms).
const CHEAPEST_LINES: usize = 2048;

/// Puts hits in the order `from` counts them.
fn sort_from<T>(order: &mut [(Rank, T)], from: End) {
    order.sort_by_key(|(rank, _)| *rank);
    if from == End::Newest {
        order.reverse();
    }
}

/// What [`replay`] gave of a stored line.
type Replayed = Option<Vec<(u64, Option<String>)>>;

/// The longest text [`replay`] gives unmatched ([`Replay::matched`]).
const UNMATCHED: usize = 64 << 10;

/// What [`replay`] gives of a line's events.
#[derive(Clone, Copy)]
struct Replay<'f> {
    /// The filter whose matches are given.
    filter: &'f Filter,
    /// Whether their texts are kept (else each is empty).
    keep_texts: bool,
    /// Whether each text is matched: else every event of a line that may hold a match whose
    /// text may hold one too is given ([`HitTexts::Candidates`]), if not longer than
    /// [`UNMATCHED`].
    matched: bool,
}

/// The texts of a stored line's events, decoded alone from its bytes `line`: each one's
/// [`text_hash`], and where the filter finds a match in it the text itself (as `what` says);
/// `Some(None)` when the bytes cannot hold a match, as a scan rules lines out before decoding
/// them; `None` when the line cannot be decoded.
fn replay(source: &dyn Transcript, seq: u64, line: &[u8], what: Replay<'_>) -> Option<Replayed> {
    if !what.filter.may_match_line(line) {
        return Some(None);
    }
    let mut texts = Vec::new();
    let mut keep = |e: Event| {
        let hash = text_hash(&e.text);
        // Unmatched, a text is still put to the test a raw line is (a text without the query's
        // bytes or a character that may stand for them holds no match), and a long one matched
        // all the same: a line's other events, a tool output of megabytes with a character that
        // may stand for a letter of the query say, are then not held with the batch's texts.
        let matched = match what.matched || e.text.len() > UNMATCHED {
            true => what.filter.matches_text(&e.text),
            false => what.filter.may_match_line(e.text.as_bytes()),
        };
        let text = matched.then(|| {
            if what.keep_texts {
                e.text
            } else {
                String::new()
            }
        });
        texts.push((hash, text));
    };
    source.replay(seq, line, &mut keep).then_some(Some(texts))
}

/// Lines read in one go when the bytes between them are no more than this: copying them costs
/// less than a call to read each.
const READ_GAP: u64 = 64 * 1024;

/// The most bytes read in one go for several lines.
const READ_SPAN: u64 = 1024 * 1024;

/// Reads stored `lines` from their byte ranges in `path` and [`replay`]s each into `replayed`,
/// by seq: lines near each other in the file in one read, the reads on every core. `None` when
/// a line cannot be read or decoded.
fn replay_lines(
    source: &dyn Transcript,
    path: &Path,
    mut lines: Vec<&Candidate>,
    what: Replay<'_>,
    replayed: &mut HashMap<u64, Replayed>,
) -> Option<()> {
    lines.sort_unstable_by_key(|c| c.line.offset);
    lines.dedup_by_key(|c| c.line.seq);
    let mut runs: Vec<&[&Candidate]> = Vec::new();
    let mut start = 0;
    for i in 1..=lines.len() {
        let apart = |first: &Candidate, prev: &Candidate, next: &Candidate| {
            let end = next.line.offset.saturating_add(next.line.len);
            next.line
                .offset
                .saturating_sub(prev.line.offset + prev.line.len)
                > READ_GAP
                || end - first.line.offset > READ_SPAN
        };
        if i == lines.len() || apart(lines[start], lines[i - 1], lines[i]) {
            runs.push(&lines[start..i]);
            start = i;
        }
    }
    let read = history_core::parallel::map(&runs, |run| {
        let at = run.first()?.line.offset;
        let last = run.last()?.line;
        let span = usize::try_from(last.offset + last.len - at).ok()?;
        let bytes = source.read_at(path, at, span)?.ok()?;
        (run.iter())
            .map(|c| {
                let from = usize::try_from(c.line.offset - at).ok()?;
                let line = bytes.get(from..from + usize::try_from(c.line.len).ok()?)?;
                let texts = replay(source, c.line.seq, line, what)?;
                Some((c.line.seq, texts))
            })
            .collect::<Option<Vec<_>>>()
    });
    for run in read {
        replayed.extend(run?);
    }
    Some(())
}

/// The fewest lines [`read_hits`] reads at a time; each read takes twice as many as the last.
/// A look-up of one hit (a session summary's latest, earliest or best) mostly finds it in the
/// first line: with sixteen at a time, `--sessions` for a frequent word read tool outputs of
/// hundreds of kilobytes for nothing (17.2 → 16.4 ms on the 1 GiB bench corpus).
const READ_BATCH: usize = 2;

/// The lines [`read_hits`] reads at a time when it shows the texts as they are read
/// ([`HitTexts::Candidates`]): it then holds no more than theirs.
const SHOWN_BATCH: usize = 256;

/// The stored lines whose rows are read at a time when their events are shown as they are read
/// ([`HitTexts::Candidates`]).
const SHOWN_LINES: usize = 4096;

/// The first `count` hits of `order` whose texts match (every one of them, unmatched, for
/// [`HitTexts::Candidates`]): an appended event as it is, a stored one with its text, read from
/// its line in `path` (each line read and replayed once, a batch of the lines next in `order`
/// at a time), their texts as `wanted.texts` asks (those shown as they are read are not given
/// back). `None` when a line cannot be read or no
/// longer gives a text it was indexed with.
fn read_hits(
    source: &dyn Transcript,
    path: &Path,
    order: Vec<(Rank, Hit<'_>)>,
    wanted: &Wanted<'_>,
    count: usize,
) -> Option<Vec<HitAt>> {
    let all_branches = wanted.all_branches;
    let mut replayed: HashMap<u64, Replayed> = HashMap::new();
    // Every hit wanted (a session summed up whole): every line in the first batch; texts
    // shown as they are read, a batch of lines at a time.
    let candidates = matches!(wanted.texts, HitTexts::Candidates(_));
    let mut batch = match candidates {
        true => SHOWN_BATCH,
        false => count.max(READ_BATCH),
    };
    let (mut hits, mut best) = (Vec::new(), None);
    // Keeps the hit as `texts` asks: whether more are wanted.
    let mut keep = |event: Event, location: Option<Location>| {
        wanted.texts.add(&mut hits, &mut best, (event, location))
    };
    let mut kept = 0;
    for (at, (_, hit)) in order.iter().enumerate() {
        if kept >= count {
            break;
        }
        let (stored, c, on) = match hit {
            Hit::Appended(event, on) => {
                let mut event = event.clone();
                if all_branches {
                    event.on_active_branch = Some(*on);
                }
                kept += 1;
                match keep(event, None) {
                    true => continue,
                    false => break,
                }
            }
            Hit::Stored(stored, c, on) => (stored, *c, *on),
        };
        let seq = c.line.seq;
        if !replayed.contains_key(&seq) {
            let mut next: Vec<&Candidate> = Vec::new();
            for (_, hit) in &order[at..] {
                if let Hit::Stored(_, c, _) = hit {
                    if !replayed.contains_key(&c.line.seq)
                        && next.last().is_none_or(|l| l.line.seq != c.line.seq)
                    {
                        next.push(c);
                    }
                }
                if next.len() >= batch {
                    break;
                }
            }
            let what = Replay {
                filter: wanted.filter,
                keep_texts: wanted.texts.read(),
                matched: !candidates,
            };
            replay_lines(source, path, next, what, &mut replayed)?;
            if !candidates {
                batch = batch.saturating_mul(2);
            }
        }
        let Some(texts) = replayed.get_mut(&seq)? else {
            continue;
        };
        let i = texts.iter().position(|(hash, _)| *hash == stored.text)?;
        let (_, text) = texts.remove(i);
        if let Some(text) = text {
            let mut event = stored.event(seq, text);
            if all_branches {
                event.on_active_branch = Some(on);
            }
            // A seq is the line of the session's own file, the only one it is read from.
            let location = Location {
                line: seq,
                byte_offset: c.line.offset,
                byte_len: c.line.len,
            };
            kept += 1;
            if !keep(event, Some(location)) {
                break;
            }
        }
    }
    Some(hits)
}

impl Projection for Index {
    fn counted(
        &self,
        _corpus: &Corpus,
        sessions: &[SessionFile],
        known: &[Known],
        terms: &[String],
    ) -> Vec<Option<Counted>> {
        let none = || vec![None; sessions.len()];
        let Ok(store) = self.store.lock() else {
            return none();
        };
        let Some(census) = self.damage.ok(store.census_shared()) else {
            return none();
        };
        // Only a session as the index holds it, not appended to since.
        let positions: Vec<Option<usize>> = (sessions.iter().zip(known))
            .map(|(file, known)| match known {
                Known::Within {
                    appended: false, ..
                } => census.position(&file.key),
                _ => None,
            })
            .collect();
        let hashes: Vec<u64> = terms.iter().map(|t| term_hash(t)).collect();
        (self.damage.ok(store.counted(&census, &positions, &hashes))).unwrap_or_else(none)
    }

    fn known(&self, corpus: &Corpus, sessions: &[SessionFile], filter: &Filter) -> Vec<Known> {
        let unknown = || vec![Known::Unknown; sessions.len()];
        if sessions.is_empty() {
            return Vec::new();
        }
        // A query too short to need any token could match any line.
        let Some(per_query) = filter
            .queries()
            .iter()
            .map(|q| query_tokens(q))
            .collect::<Option<Vec<_>>>()
        else {
            return unknown();
        };
        let Ok(store) = self.store.lock() else {
            return unknown();
        };
        let Some(census) = self.damage.ok(store.census_shared()) else {
            return unknown();
        };
        // Each session's position in the census, if it is stored.
        let rows: Vec<Option<usize>> = sessions.iter().map(|f| census.position(&f.key)).collect();
        let row = |i: usize| rows[i].map(|at| census.row(at));
        // The freshness check compares each file's fingerprint (discovery's, or a stat of an
        // inherited file) and reads the headers of changed ones again: on every core when there
        // are enough to be worth it.
        let each: Vec<usize> = (0..sessions.len()).collect();
        let judged: Judged = history_core::parallel::map_quick(&each, |&i| {
            let file = &sessions[i];
            let source = corpus.source(&file.key.harness)?;
            Freshness::judge_in(source, file, &census, rows[i], &self.version)
        });
        // The stored lines of fresh sessions are looked up, and of appended ones too, for their
        // hits: their positions in the census, and each session's slot among them.
        let mut looked_up = Vec::new();
        let slots: Vec<Option<usize>> = (rows.iter().zip(&judged))
            .map(|(at, judged)| {
                let wanted = matches!(
                    judged,
                    Some((_, Freshness::Fresh | Freshness::Appended(Unread)))
                );
                looked_up.push(Some(at.filter(|_| wanted)?));
                Some(looked_up.len() - 1)
            })
            .collect();
        let appended: Vec<_> = (sessions.iter().zip(&judged).enumerate())
            .filter_map(|(i, (file, judged))| match judged {
                Some((Some(now), Freshness::Appended(Unread))) => Some((i, file, row(i)?, now)),
                _ => None,
            })
            .collect();
        let (spans, decoded) = spans_and_appended(
            &store,
            &self.damage,
            &census,
            corpus,
            &appended,
            filter,
            &looked_up,
            &per_query,
        );
        // Those with a snapshot to go on from; their decodes are for this filter.
        let grown = self.keep_appended(sessions, decoded);
        let Some((spans, per_query)) = spans else {
            return unknown();
        };
        let known = (0..sessions.len())
            .map(|i| known_of(judged[i].as_ref(), grown[i], slots[i], &spans))
            .collect();
        self.keep_found(filter, census, looked_up, per_query);
        known
    }

    /// Every stored line of a session fresh in the index, by the ids its writes gave its lines:
    /// each of them found or gone, so that a row damage hid is noticed, not missed.
    fn events(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        all_branches: bool,
    ) -> Option<SessionEvents> {
        let source = corpus.source(&file.key.harness)?;
        let (about, lines) = {
            let store = self.store.lock().ok()?;
            let (_, about) = self.fresh(&store, source, file)?;
            let census = self.damage.ok(store.census_shared())?;
            let ids = census.line_ids(census.position(&file.key)?);
            (
                about,
                self.damage.ok(store.lines_of_session(&file.key, &ids))?,
            )
        };
        let mut events = Vec::new();
        for c in lines.iter().filter(|c| all_branches || c.branch) {
            for stored in events::decode(&c.events)? {
                let mut event = stored.event(c.line.seq, String::new());
                if all_branches {
                    event.on_active_branch = Some(c.branch);
                }
                events.push(event);
            }
        }
        events.sort_by_key(Event::position);
        Some(SessionEvents {
            events,
            meta: about.meta,
            notices: about.notices,
        })
    }

    /// The stored events of the session's branch offered in order as its rows are read, and the
    /// chosen one's line read alone ([`Index::texts`]): a session of any size holds one row at a
    /// time, not its events, nor its rows.
    fn representative(&self, corpus: &Corpus, file: &SessionFile) -> Option<Option<Event>> {
        let source = corpus.source(&file.key.harness)?;
        let mut choice = history_core::Choice::new(true);
        // The chosen line's events, as the choice moves on.
        let mut chosen: Option<(u64, Vec<events::Stored>)> = None;
        let mut undecodable = false;
        {
            let store = self.store.lock().ok()?;
            self.fresh(&store, source, file)?;
            let census = self.damage.ok(store.census_shared())?;
            let ids = census.line_ids(census.position(&file.key)?);
            // Read until the choice is settled (the rest of the lines only accounted for).
            let mut each = |c: Candidate| {
                let Some(mut stored) = (c.branch).then(|| events::decode(&c.events)).flatten()
                else {
                    undecodable |= c.branch;
                    return true;
                };
                stored.sort_by_key(|e| e.part);
                for e in &stored {
                    choice.offer(&e.event(c.line.seq, String::new()));
                }
                if choice.chosen().is_some_and(|(seq, _)| seq == c.line.seq) {
                    chosen = Some((c.line.seq, stored));
                }
                !choice.settled()
            };
            self.damage
                .ok(store.each_line_of_session(&file.key, &ids, &mut each))?;
        }
        if undecodable {
            return None;
        }
        let Some((seq, part)) = choice.chosen() else {
            return Some(None);
        };
        let (_, stored) = chosen.filter(|(at, _)| *at == seq)?;
        let mut event = [stored
            .iter()
            .find(|e| e.part == part)?
            .event(seq, String::new())];
        if !self.texts(corpus, file, &mut event) {
            return None;
        }
        let [event] = event;
        Some(Some(event))
    }

    /// Each line of `wanted` read alone ([`read_line`]), the session checked fresh once.
    fn texts(&self, corpus: &Corpus, file: &SessionFile, wanted: &mut [Event]) -> bool {
        let mut seqs: Vec<u64> = wanted.iter().map(|e| e.seq).collect();
        seqs.sort_unstable();
        seqs.dedup();
        let mut read = || -> Option<()> {
            let source = corpus.source(&file.key.harness)?;
            let (path, lines) = {
                let store = self.store.lock().ok()?;
                let (path, _) = self.fresh(&store, source, file)?;
                let lines = (seqs.iter())
                    .map(|&seq| self.damage.ok(store.line_at(&file.key, seq)).flatten())
                    .collect::<Option<Vec<Candidate>>>()?;
                (path, lines)
            };
            for line in &lines {
                let events = read_line(source, &path, line)?;
                for event in wanted.iter_mut().filter(|e| e.seq == line.line.seq) {
                    event.text = events.iter().find(|e| e.part == event.part)?.text.clone();
                }
            }
            Some(())
        };
        read().is_some()
    }

    fn about(&self, corpus: &Corpus, file: &SessionFile) -> Option<(SessionMeta, Vec<String>)> {
        let source = corpus.source(&file.key.harness)?;
        let store = self.store.lock().ok()?;
        let (_, about) = self.fresh(&store, source, file)?;
        Some((about.meta, about.notices))
    }

    /// The stored line at `seq` of a session fresh in the index, its bytes read from where it
    /// was and decoded alone; each stored event takes the replayed text of its hash. A session
    /// appended to or changed since, a line not stored (damage could hide its row, so a decode
    /// tells), or a line that no longer gives the texts it was stored with leaves the session to
    /// a decode.
    fn lines(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        seqs: &[u64],
    ) -> Option<(SessionEvents, Vec<Option<Location>>)> {
        let source = corpus.source(&file.key.harness)?;
        let (path, about, lines) = {
            let store = self.store.lock().ok()?;
            let (path, about) = self.fresh(&store, source, file)?;
            let lines = (seqs.iter())
                .map(|&seq| self.damage.ok(store.line_at(&file.key, seq)).flatten())
                .collect::<Option<Vec<_>>>()?;
            (path, about, lines)
        };
        let origins = source.origins(file, seqs);
        let (mut events, mut locations) = (Vec::new(), Vec::new());
        for (line, origin) in lines.iter().zip(&origins) {
            events.extend(read_line(source, &path, line)?);
            // The stored place is that of line `seq` of the session's own file, where a line
            // of any length but none has one: it is where the line is when the source says so.
            let seq = line.line.seq;
            let own = origin
                .as_ref()
                .is_some_and(|o| o.path == path && o.line == seq);
            locations.push((own && line.line.len > 0).then_some(Location {
                line: seq,
                byte_offset: line.line.offset,
                byte_len: line.line.len,
            }));
        }
        let events = SessionEvents {
            events,
            meta: about.meta,
            notices: about.notices,
        };
        Some((events, locations))
    }

    /// The candidate lines' stored events, filtered by role, time and branch and walked in the
    /// merge order from `from`; each line read by byte range and decoded alone for the texts,
    /// until `want` events match. A text the line no longer gives (it was rewritten since it
    /// was stat'ed) or a line that cannot be read leaves the session to a decode.
    fn hits(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        wanted: &Wanted<'_>,
    ) -> Option<Result<SessionHits, HistoryError>> {
        let source = corpus.source(&file.key.harness)?;
        let located = self.candidates(corpus, source, file, wanted.filter)?;
        let (stored, branch) = (&located.stored, &located.branch);
        let appended = appended_hits(&located.events, branch, wanted);
        if let HitTexts::Candidates(to) = wanted.texts {
            // Every candidate, shown as it is read: the stored lines a slice at a time, each
            // slice's rows dropped before the next are read, then the appended hits.
            let more = std::cell::Cell::new(true);
            let to = |e: &Event| {
                more.set(to(e));
                more.get()
            };
            let wanted = Wanted {
                texts: HitTexts::Candidates(&to),
                ..*wanted
            };
            for ids in stored.ids.chunks(SHOWN_LINES) {
                let lines = self.lines(&file.key, ids, stored.settled)?;
                let mut order = Vec::new();
                stored_hits(lines.values(), branch, &wanted, &mut order)?;
                read_hits(source, &stored.path, order, &wanted, usize::MAX)?;
                if !more.get() {
                    return Some(Ok((Vec::new(), located.meta.clone())));
                }
            }
            let order = (appended.into_iter())
                .map(|(rank, e, on)| (rank, Hit::Appended(e, on)))
                .collect();
            read_hits(source, &stored.path, order, &wanted, usize::MAX)?;
            return Some(Ok((Vec::new(), located.meta.clone())));
        }
        // The walk goes by time; the cheapest hits are those of the shortest of every
        // candidate line, unless there are so many that the walk costs less.
        let cheapest = wanted.order == HitOrder::Cheapest && stored.ids.len() <= CHEAPEST_LINES;
        let walk = stored.ordered && wanted.order != HitOrder::Position && !cheapest;
        let walked = match walk && stored.ids.len() / 2 > WALK_CHUNK.max(wanted.count) {
            true => self.walk(source, &file.key, stored, &appended, wanted, branch)?,
            false => None,
        };
        let hits = match walked {
            Some(hits) => hits,
            None => {
                let lines = self.lines(&file.key, &stored.ids, stored.settled)?;
                let mut order = Vec::new();
                stored_hits(lines.values(), branch, wanted, &mut order)?;
                order.extend(
                    appended
                        .into_iter()
                        .map(|(rank, e, on)| (rank, Hit::Appended(e, on))),
                );
                match cheapest {
                    // An appended hit is in hand already.
                    true => order.sort_by_key(|(rank, hit)| match hit {
                        Hit::Stored(_, c, _) => (c.line.len, *rank),
                        Hit::Appended(..) => (0, *rank),
                    }),
                    false => sort_from(&mut order, wanted.from),
                }
                read_hits(source, &stored.path, order, wanted, wanted.count)?
            }
        };
        Some(Ok((hits, located.meta.clone())))
    }
}
