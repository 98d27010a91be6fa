//! The projection as a search consults it ([`history_core::Projection`]): for each
//! session whose stored lines are its lines, or its lines before an append
//! ([`crate::freshness`]), whether any of its lines holds every token of a query, and when those
//! lines happen; an appended session's new lines are decoded for the query. Any other session
//! is unknown and is read.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use history_core::End;
use history_core::Location;
use history_core::Projection;
use history_core::{
    Corpus, Event, Filter, HistoryError, SessionFile, SessionKey, SessionMeta, Timestamp,
    Transcript,
};
use history_core::{Known, SessionHits, Wanted};
use history_core::{Resumed, Snapshot, WantSnapshot};
use history_raw::RawFilter;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::events::{self, text_hash};
use crate::freshness::{Files, Freshness, Unread};
use crate::store::{Candidate, Census, Located, SessionRow, Store, StoreError};
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
    located: Mutex<Option<Found>>,
    /// Whether a read met damage: the query answers by scanning, and the damage is noted for
    /// the next update when the index is dropped.
    damage: Seen,
}

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
            damage: Seen::default(),
        })
    }
}

/// What a decode of an appended session's lines after its snapshot gives.
struct Appended {
    /// The snapshot's settled line: the stored lines after it are given again here.
    settled: u64,
    /// Their events that pass the filter (whatever the page's bound).
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
type QueryCandidates = (Located, FxHashMap<usize, RangeInclusive<u64>>);

/// Per session (by index) with candidates, the span of their times.
type Spans = FxHashMap<usize, Option<Span>>;

/// The candidate lines of a filter's queries, as [`Projection::known`] found them.
struct Found {
    queries: Vec<String>,
    per_query: Vec<QueryCandidates>,
    /// What the store held of each session: one the store took in again since has other lines
    /// (ids are never reused), and is looked up anew.
    census: Census,
    /// Per session looked up, its row's position in `census`.
    rows: Vec<Option<usize>>,
    /// The sessions looked up, by the hash of their keys.
    by_hash: Vec<(u64, usize)>,
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
        let row_of = |slot: usize| Some(self.census.row(self.rows[slot]?));
        let hash = FxBuildHasher.hash_one(key);
        let from = self.by_hash.partition_point(|&(h, _)| h < hash);
        let slot = (self.by_hash[from..].iter())
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, slot)| slot)
            .find(|&slot| row_of(slot).is_some_and(|r| r.key == *key));
        let then = slot.and_then(row_of).map(|r| &r.witnesses);
        if self.queries != filter.queries() || then != Some(&row.witnesses) {
            return None;
        }
        let (located, ranges) = self.per_query.get(q)?;
        let Some(range) = slot.and_then(|slot| ranges.get(&slot)) else {
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
    let mut spans = Spans::default();
    let mut found = Vec::new();
    for tokens in per_query {
        let mut located = seen.ok(store.located(census, positions, tokens))?;
        let mut ranges: FxHashMap<usize, RangeInclusive<u64>> = FxHashMap::default();
        for this in std::mem::take(&mut located.spans) {
            let entry = spans.entry(this.session).or_insert(this.times);
            *entry = match (*entry, this.times) {
                (Some((f1, l1)), Some((f2, l2))) => Some((f1.min(f2), l1.max(l2))),
                _ => None,
            };
            let range = ranges.entry(this.session).or_insert(this.ids.clone());
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
        if filter.matches(&e) {
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

/// Each session's files now and what the index holds of it; `None` when a file cannot be
/// stat'ed.
type Judged = Vec<Option<(Files, Freshness<Unread>)>>;

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
    appended: &[(usize, &SessionFile, &SessionRow, &Files)],
    filter: &Filter,
    positions: &[Option<usize>],
    per_query: &[Vec<Token>],
) -> (Option<Candidates>, Vec<(usize, Option<Appended>)>) {
    let reader = store.reader();
    std::thread::scope(|scope| {
        let decoding = scope.spawn(|| {
            let reader = seen.ok(reader.open())?;
            reader.begin_read().ok()?;
            let decoded = appended.iter().filter_map(|&(i, file, row, now)| {
                let snapshot = snapshot_within(&reader, seen, row, now)?;
                Some((i, decode_appended(corpus, file, filter, &snapshot)))
            });
            Some(decoded.collect::<Vec<_>>())
        });
        let spans = candidate_spans(store, seen, census, positions, per_query);
        (spans, decoding.join().ok().flatten().unwrap_or_default())
    })
}

/// What a query reads of one session from the store ([`Index::stored`]).
struct Stored {
    /// The session's own file, the one its lines are read from.
    path: PathBuf,
    /// The stored lines that may hold a hit, by seq: of an appended session, those up to its
    /// snapshot's settled line.
    lines: BTreeMap<u64, Candidate>,
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
        census: Census,
        rows: Vec<Option<usize>>,
        per_query: Vec<QueryCandidates>,
    ) {
        if let Ok(mut located) = self.located.lock() {
            let mut by_hash: Vec<(u64, usize)> = (rows.iter().enumerate())
                .filter_map(|(slot, at)| {
                    Some((FxBuildHasher.hash_one(&census.row((*at)?).key), slot))
                })
                .collect();
            by_hash.sort_unstable();
            *located = Some(Found {
                queries: filter.queries().to_vec(),
                per_query,
                census,
                rows,
                by_hash,
            });
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
        let store = self.store.lock().ok()?;
        let row = self.damage.ok(store.session(&file.key))??;
        let meta = self.damage.ok(store.session_meta(&file.key))??;
        // Inherited history is not located yet: only a session's own file is.
        let [witness] = row.witnesses.as_slice() else {
            return None;
        };
        let (now, freshness) = Freshness::of_session(source, file, Some(&row), &self.version)?;
        // An appended session: its appended lines as `known` decoded them, or the snapshot to
        // decode them from.
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
        let settled = match &appended_to {
            None => u64::MAX,
            Some(Ok(done)) => done.settled,
            Some(Err(snapshot)) => snapshot.settled,
        };
        Some(Stored {
            path: witness.file.path.clone(),
            lines: self.candidate_lines(&store, &file.key, filter, &row, settled)?,
            meta,
            appended_to,
        })
    }

    /// The stored lines of session `key` (stored as `row`) up to `settled` that may hold a hit
    /// of any of `filter`'s queries, by seq: among those the last [`Projection::known`] found
    /// for the filter, or looked up anew.
    fn candidate_lines(
        &self,
        store: &Store,
        key: &SessionKey,
        filter: &Filter,
        row: &SessionRow,
        settled: u64,
    ) -> Option<BTreeMap<u64, Candidate>> {
        let found = self.located.lock().ok()?;
        let mut lines: BTreeMap<u64, Candidate> = BTreeMap::new();
        for (q, query) in filter.queries().iter().enumerate() {
            let candidates = match found.as_ref().and_then(|f| f.ids(filter, q, key, row)) {
                Some(ids) => store.lines_of_among(key, &ids),
                None => store.matching_lines(key, &query_tokens(query)?),
            };
            for c in self.damage.ok(candidates)? {
                if c.line.seq <= settled {
                    lines.insert(c.line.seq, c);
                }
            }
        }
        Some(lines)
    }
}

/// What the index knows of a session's hits, from what it holds of the session (`judged`),
/// whether the session's appended lines were decoded (`grown`), and its index among the
/// sessions whose candidate `spans` were looked up (`slot`).
fn known_of(
    judged: Option<&(Files, Freshness<Unread>)>,
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
    match spans.get(&slot) {
        None => Known::NoHit,
        Some(None) => Known::Unknown,
        Some(Some((first, last))) => Known::Within {
            first: *first,
            last: *last,
            appended: false,
        },
    }
}

/// The hits a page may take of a session, in the order `wanted.from` counts them: the events of
/// its stored `lines` that pass the filter's roles and times and `wanted.admit`, and the
/// appended lines' events it admits (those were decoded for the filter). Each is marked on the
/// selected branch or off it, by the appended decode's branch when there is one (it is the
/// whole session's), and those off it are left out unless every branch is wanted. With what the
/// session is about: the appended decode's `meta` when there is one. `None` when a stored line's
/// events do not decode.
fn in_order<'a>(
    lines: &'a BTreeMap<u64, Candidate>,
    meta: SessionMeta,
    appended: Option<Appended>,
    wanted: &Wanted<'_>,
) -> Option<(Vec<Hit<'a>>, SessionMeta)> {
    let Wanted {
        filter,
        admit,
        from,
        all_branches,
        ..
    } = *wanted;
    let resumed = appended.is_some();
    let (events, branch, meta) = match appended {
        Some(done) => (done.events, done.branch, done.meta),
        None => (Vec::new(), None, meta),
    };
    let on_branch = |seq: u64, stored: bool| match (resumed, &branch) {
        (false, _) => stored,
        (true, None) => true,
        (true, Some(b)) => b.binary_search(&seq).is_ok(),
    };
    let mut order = Vec::new();
    for c in lines.values() {
        let on = on_branch(c.line.seq, c.branch);
        if !(all_branches || on) {
            continue;
        }
        for stored in events::decode(&c.events)? {
            let event = stored.event(c.line.seq, String::new());
            if filter.in_time(&event) && filter.has_role(&event) && admit(&event) {
                let rank = (stored.timestamp, c.line.seq, stored.part);
                order.push((rank, Hit::Stored(stored, c, on)));
            }
        }
    }
    for e in events.into_iter().filter(|e| admit(e)) {
        let on = on_branch(e.seq, true);
        if all_branches || on {
            order.push(((e.timestamp, e.seq, e.part), Hit::Appended(e, on)));
        }
    }
    order.sort_by_key(|(rank, _)| *rank);
    if from == End::Newest {
        order.reverse();
    }
    Some((order.into_iter().map(|(_, hit)| hit).collect(), meta))
}

/// The texts of a stored line's events, read from its byte range in `path` and decoded alone:
/// each one's [`text_hash`], and where `filter` finds a match in it the text itself (an empty
/// one unless `keep_texts`); `None` when the line cannot be read or decoded.
fn replay(
    source: &dyn Transcript,
    path: &Path,
    c: &Candidate,
    filter: &Filter,
    keep_texts: bool,
) -> Option<Vec<(u64, Option<String>)>> {
    let len = usize::try_from(c.line.len).ok()?;
    let bytes = source.read_at(path, c.line.offset, len)?.ok()?;
    let mut texts = Vec::new();
    let mut keep = |e: Event| {
        let hash = text_hash(&e.text);
        let matched = filter.matches_text(&e.text);
        texts.push((
            hash,
            matched.then(|| if keep_texts { e.text } else { String::new() }),
        ));
    };
    source
        .replay(c.line.seq, &bytes, &mut keep)
        .then_some(texts)
}

/// The first `wanted.count` hits of `order` whose texts match: an appended event as it is, a
/// stored one with its text, read from its line in `path` (each line read and replayed once).
/// `None` when a line cannot be read or no longer gives a text it was indexed with.
fn read_hits(
    source: &dyn Transcript,
    path: &Path,
    order: Vec<Hit<'_>>,
    wanted: &Wanted<'_>,
) -> Option<Vec<(Event, Option<Location>)>> {
    let (filter, all_branches, keep_texts) = (wanted.filter, wanted.all_branches, wanted.texts);
    // Every hit wanted (a session summed up whole): each line is read and replayed on every
    // core first.
    let mut replayed: HashMap<u64, Vec<(u64, Option<String>)>> = HashMap::new();
    if wanted.count >= order.len() {
        let mut lines: Vec<&Candidate> = (order.iter())
            .filter_map(|hit| match hit {
                Hit::Stored(_, c, _) => Some(*c),
                Hit::Appended(..) => None,
            })
            .collect();
        lines.sort_unstable_by_key(|c| c.line.seq);
        lines.dedup_by_key(|c| c.line.seq);
        let replays =
            history_core::parallel::map(&lines, |c| replay(source, path, c, filter, keep_texts));
        for (c, texts) in lines.iter().zip(replays) {
            replayed.insert(c.line.seq, texts?);
        }
    }
    let mut hits = Vec::new();
    for hit in order {
        if hits.len() >= wanted.count {
            break;
        }
        let (stored, c, on) = match hit {
            Hit::Appended(mut event, on) => {
                if all_branches {
                    event.on_active_branch = Some(on);
                }
                if !keep_texts {
                    event.text = String::new();
                }
                hits.push((event, None));
                continue;
            }
            Hit::Stored(stored, c, on) => (stored, c, on),
        };
        let seq = c.line.seq;
        let texts = match replayed.entry(seq) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(replay(source, path, c, filter, keep_texts)?),
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
            hits.push((event, Some(location)));
        }
    }
    Some(hits)
}

impl Projection for Index {
    fn known(&self, corpus: &Corpus, sessions: &[SessionFile], filter: &Filter) -> Vec<Known> {
        let unknown = || vec![Known::Unknown; sessions.len()];
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
        let Some(census) = self.damage.ok(store.census()) else {
            return unknown();
        };
        // Each stored session's position in the census.
        let rows = census.by_key();
        let row = |key: &SessionKey| rows.get(key).map(|&i| census.row(i));
        // The freshness check compares each file's fingerprint (discovery's, or a stat of an
        // inherited file) and reads the headers of changed ones again: on every core.
        let judged: Judged = history_core::parallel::map(sessions, |file| {
            let source = corpus.source(&file.key.harness)?;
            Freshness::of_session(source, file, row(&file.key), &self.version)
        });
        // The stored lines of fresh sessions are looked up, and of appended ones too, for their
        // hits: their positions in the census, and each session's slot among them.
        let mut looked_up = Vec::new();
        let slots: Vec<Option<usize>> = (sessions.iter().zip(&judged))
            .map(|(file, judged)| {
                let wanted = matches!(
                    judged,
                    Some((_, Freshness::Fresh | Freshness::Appended(Unread)))
                );
                let at = rows.get(&file.key).filter(|_| wanted)?;
                looked_up.push(Some(*at));
                Some(looked_up.len() - 1)
            })
            .collect();
        let appended: Vec<_> = (sessions.iter().zip(&judged).enumerate())
            .filter_map(|(i, (file, judged))| match judged {
                Some((now, Freshness::Appended(Unread))) => Some((i, file, row(&file.key)?, now)),
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
        // Each query is a statement per session: past a few, a decode costs less.
        if wanted.filter.queries().len() > MAX_LOCATED_QUERIES {
            return None;
        }
        let source = corpus.source(&file.key.harness)?;
        let stored = self.stored(source, file, wanted.filter)?;
        // An appended session: the lines after its snapshot decoded for their hits, and the
        // branch and metadata of the whole session as that decode gives them.
        let appended = match stored.appended_to {
            None => None,
            Some(Ok(done)) => Some(done),
            Some(Err(snapshot)) => Some(decode_appended(corpus, file, wanted.filter, &snapshot)?),
        };
        let (order, meta) = in_order(&stored.lines, stored.meta, appended, wanted)?;
        let hits = read_hits(source, &stored.path, order, wanted)?;
        Some(Ok((hits, meta)))
    }
}
