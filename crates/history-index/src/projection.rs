//! The projection as a search consults it ([`history_core::history::Projection`]): for each
//! session whose stored lines are its lines, or its lines before an append
//! ([`crate::freshness`]), whether any of its lines holds every token of a query, and when those
//! lines happen; an appended session's new lines are decoded for the query. Any other session
//! is unknown and is read.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::ops::RangeInclusive;
use std::sync::Mutex;

use history_core::history::Projection;
use history_core::location::Location;
use history_core::paging::From;
use history_core::prefilter::RawFilter;
use history_core::resume::Snapshot;
use history_core::search::{Known, SessionHits, Wanted};
use history_core::{
    Corpus, Event, Filter, HistoryError, SessionFile, SessionKey, SessionMeta, Timestamp,
};

use crate::events::{self, text_hash};
use crate::freshness::{Files, Freshness, Unread};
use crate::store::{Candidate, SessionRow, Store, Witness};
use crate::tokens::query_tokens;

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
}

impl Index {
    /// The projection in `store`, valid for sessions indexed with `version`.
    pub fn new(store: Store, version: impl Into<String>) -> Index {
        Index {
            store: Mutex::new(store),
            version: version.into(),
            appended: Mutex::new(HashMap::new()),
            located: Mutex::new(None),
        }
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

/// The snapshot the decode of an appended session's new lines goes on from (`freshness` is
/// [`Freshness::Appended`]), read from `store`, when no more than [`MAX_APPENDED`] follows it in
/// its own file (`now`): past a few MiB, the appended lines' hits would all be held at once.
/// `None` for any other session.
fn snapshot_within(
    store: &Store,
    key: &SessionKey,
    freshness: Freshness<Unread>,
    now: &Files,
) -> Option<Snapshot> {
    let Ok(Freshness::Appended(Some(snapshot))) = freshness.with_snapshot(|| store.resume(key))
    else {
        return None;
    };
    let appended = now.first()?.1.size.saturating_sub(snapshot.offset);
    (appended <= MAX_APPENDED).then_some(snapshot)
}

/// A query's candidate lines: every one's id, ascending, and the range of them in each session.
type QueryCandidates = (Vec<u64>, HashMap<SessionKey, RangeInclusive<u64>>);

/// Per session (by index) with candidates, the span of their times.
type Spans = HashMap<usize, Option<Span>>;

/// The candidate lines of a filter's queries, as [`Projection::known`] found them.
struct Found {
    queries: Vec<String>,
    per_query: Vec<QueryCandidates>,
    /// Each session's stored files when they were found: a session the store took in again
    /// since has other lines (ids are never reused), and is looked up anew.
    witnesses: HashMap<SessionKey, Vec<Witness>>,
}

impl Found {
    /// The ids among which `key`'s candidates for query `q` are; `None` when this is not
    /// what was found for `filter` or the session's stored lines changed since.
    fn ids(&self, filter: &Filter, q: usize, key: &SessionKey, row: &SessionRow) -> Option<&[u64]> {
        if self.queries != filter.queries() || self.witnesses.get(key) != Some(&row.witnesses) {
            return None;
        }
        let (ids, ranges) = self.per_query.get(q)?;
        let Some(range) = ranges.get(key) else {
            return Some(&[]);
        };
        let start = ids.partition_point(|id| id < range.start());
        let end = ids.partition_point(|id| id <= range.end());
        Some(&ids[start..end])
    }
}

/// Per session of `keys` (by index) with candidate lines for any of the queries (`per_query`,
/// their tokens), the span of their times (`None` within: one has no known time); and what
/// [`Found`] keeps of them. `None` when the store cannot tell.
fn candidate_spans(
    store: &Store,
    keys: &[SessionKey],
    per_query: &[Vec<crate::tokens::Token>],
) -> Option<(Spans, Vec<QueryCandidates>)> {
    let mut spans = Spans::new();
    let mut found = Vec::new();
    for tokens in per_query {
        let located = store.located(keys, tokens).ok()?;
        let mut ranges: HashMap<SessionKey, RangeInclusive<u64>> = HashMap::new();
        for this in located.spans {
            let entry = spans.entry(this.session).or_insert(this.times);
            *entry = match (*entry, this.times) {
                (Some((f1, l1)), Some((f2, l2))) => Some((f1.min(f2), l1.max(l2))),
                _ => None,
            };
            let range = ranges
                .entry(keys[this.session].clone())
                .or_insert(this.ids.clone());
            *range = *range.start().min(this.ids.start())..=*range.end().max(this.ids.end());
        }
        found.push((located.ids, ranges));
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
    let (decoded, _) = source
        .decode_resumable(file, &mut keep, Some(&test), Some(snapshot), false)?
        .ok()?;
    Some(Appended {
        settled: snapshot.settled,
        events,
        branch: decoded.branch,
        meta: decoded.meta,
    })
}

/// The earliest and latest time of the candidate lines of a session (`None` first: untimed).
type Span = crate::store::TimeSpan;

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
        let Ok(rows) = store.sessions() else {
            return unknown();
        };
        let rows: HashMap<&SessionKey, &SessionRow> = rows.iter().map(|r| (&r.key, r)).collect();
        // The freshness check compares each file's fingerprint (discovery's, or a stat of an
        // inherited file) and reads the headers of changed ones again: on every core.
        let judged: Vec<Option<(Files, Freshness<Unread>)>> =
            history_core::parallel::map(sessions, |file| {
                let source = corpus.source(&file.key.harness)?;
                let row = rows.get(&file.key).copied();
                Freshness::of_session(source, file, row, &self.version)
            });
        // The stored lines of fresh sessions are looked up, and of appended ones too, for their
        // hits (which may be anywhere); each looked-up session's index among the keys.
        let mut keys: Vec<SessionKey> = Vec::new();
        let slots: Vec<Option<usize>> = (sessions.iter().zip(&judged))
            .map(|(file, judged)| {
                let looked_up = matches!(
                    judged,
                    Some((_, Freshness::Fresh | Freshness::Appended(Unread)))
                );
                looked_up.then(|| {
                    keys.push(file.key.clone());
                    keys.len() - 1
                })
            })
            .collect();
        // The appended sessions' snapshots are read (through a connection of their own) and
        // their new lines decoded on another core meanwhile.
        let reader = store.reader();
        let (spans, decoded) = std::thread::scope(|scope| {
            let decoding = scope.spawn(|| {
                let reader = reader.open().ok()?;
                let decoded = judged.iter().enumerate().filter_map(|(i, judged)| {
                    let (now, freshness) = judged.as_ref()?;
                    let file = &sessions[i];
                    let snapshot = snapshot_within(&reader, &file.key, *freshness, now)?;
                    Some((i, decode_appended(corpus, file, filter, &snapshot)))
                });
                Some(decoded.collect::<Vec<_>>())
            });
            let spans = candidate_spans(&store, &keys, &per_query);
            (spans, decoding.join().ok().flatten().unwrap_or_default())
        });
        // Those with a snapshot to go on from; their decodes are for this filter, and a search
        // asks for hits right after.
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
        let Some((spans, per_query)) = spans else {
            return unknown();
        };
        if let Ok(mut located) = self.located.lock() {
            let witnesses = (keys.iter())
                .filter_map(|k| Some((k.clone(), rows.get(k)?.witnesses.clone())))
                .collect();
            *located = Some(Found {
                queries: filter.queries().to_vec(),
                per_query,
                witnesses,
            });
        }
        let known = (0..sessions.len()).map(|i| {
            if let Some((_, Freshness::Failed)) = judged[i] {
                return Known::Unindexable;
            }
            if grown[i] {
                return Known::Within {
                    first: None,
                    last: Some(Timestamp(i64::MAX)),
                    appended: true,
                };
            }
            let Some(slot) = slots[i] else {
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
        });
        known.collect()
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
        let Wanted {
            filter,
            admit,
            from,
            count: want,
            all_branches,
        } = *wanted;
        // Each query is a statement per session: past a few, a decode costs less.
        if filter.queries().len() > MAX_LOCATED_QUERIES {
            return None;
        }
        let source = corpus.source(&file.key.harness)?;
        let (path, lines, meta, appended_to) = {
            let store = self.store.lock().ok()?;
            let row = store.session(&file.key).ok()??;
            let meta = store.session_meta(&file.key).ok()??;
            // Inherited history is not located yet: only a session's own file is.
            let [witness] = row.witnesses.as_slice() else {
                return None;
            };
            let (now, freshness) = Freshness::of_session(source, file, Some(&row), &self.version)?;
            // An appended session: its appended lines as `known` decoded them, or the snapshot
            // to decode them from. The index does not answer for a session that is neither fresh
            // nor appended to.
            let appended_to = match freshness {
                Freshness::Fresh => None,
                Freshness::Appended(Unread) => {
                    Some(match self.appended.lock().ok()?.remove(&file.key) {
                        Some(done) => Ok(done),
                        None => Err(snapshot_within(&store, &file.key, freshness, &now)?),
                    })
                }
                Freshness::Failed | Freshness::Stale => return None,
            };
            let settled = match &appended_to {
                None => u64::MAX,
                Some(Ok(done)) => done.settled,
                Some(Err(snapshot)) => snapshot.settled,
            };
            let found = self.located.lock().ok()?;
            let mut lines: BTreeMap<u64, Candidate> = BTreeMap::new();
            for (q, query) in filter.queries().iter().enumerate() {
                let candidates = match found
                    .as_ref()
                    .and_then(|f| f.ids(filter, q, &file.key, &row))
                {
                    Some(ids) => store.lines_of_among(&file.key, ids),
                    None => store.matching_lines(&file.key, &query_tokens(query)?),
                };
                for c in candidates.ok()? {
                    if c.line.seq <= settled {
                        lines.insert(c.line.seq, c);
                    }
                }
            }
            (witness.file.path.clone(), lines, meta, appended_to)
        };
        // An appended session: the lines after its snapshot decoded for their hits, and the
        // branch and metadata of the whole session as that decode gives them.
        let done = match appended_to {
            None => None,
            Some(Ok(done)) => Some(done),
            Some(Err(snapshot)) => Some(decode_appended(corpus, file, filter, &snapshot)?),
        };
        let mut appended = Vec::new();
        let mut branch = None;
        let mut meta = meta;
        let resumed = done.is_some();
        if let Some(done) = done {
            appended = done.events.into_iter().filter(|e| admit(e)).collect();
            branch = done.branch;
            meta = done.meta;
        }
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
        for e in appended {
            let on = on_branch(e.seq, true);
            if all_branches || on {
                order.push(((e.timestamp, e.seq, e.part), Hit::Appended(e, on)));
            }
        }
        order.sort_by_key(|(rank, _)| *rank);
        if from == From::Newest {
            order.reverse();
        }
        let mut replayed: HashMap<u64, Vec<Event>> = HashMap::new();
        let mut hits = Vec::new();
        for (_, hit) in order {
            if hits.len() >= want {
                break;
            }
            let (stored, c, on) = match hit {
                Hit::Appended(mut event, on) => {
                    if all_branches {
                        event.on_active_branch = Some(on);
                    }
                    hits.push((event, None));
                    continue;
                }
                Hit::Stored(stored, c, on) => (stored, c, on),
            };
            let seq = c.line.seq;
            let texts = match replayed.entry(seq) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let len = usize::try_from(c.line.len).ok()?;
                    let bytes = source.read_at(&path, c.line.offset, len)?.ok()?;
                    let mut events = Vec::new();
                    if !source.replay(seq, &bytes, &mut |e| events.push(e)) {
                        return None;
                    }
                    e.insert(events)
                }
            };
            let i = texts
                .iter()
                .position(|e| text_hash(&e.text) == stored.text)?;
            let mut event = stored.event(seq, std::mem::take(&mut texts[i].text));
            texts.remove(i);
            if filter.matches_text(&event.text) {
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
        Some(Ok((hits, meta)))
    }
}
