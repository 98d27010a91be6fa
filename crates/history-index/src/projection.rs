//! The projection as a search consults it ([`history_core::history::Projection`]): for each
//! session indexed by this build whose files are unchanged, whether any of its lines holds every
//! token of a query, and when those lines happen. Any other session is unknown and is read.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use history_core::history::Projection;
use history_core::location::Location;
use history_core::paging::From;
use history_core::search::{Known, SessionHits, Wanted};
use history_core::{Corpus, Event, Filter, HistoryError, SessionFile, SessionKey, Timestamp};

use crate::events::{self, text_hash};
use crate::store::Candidate;

use crate::build::{fingerprints, indexed, same_files};
use crate::store::{SessionRow, SessionState, Store};
use crate::tokens::{query_tokens, tokens_text};

/// The most queries (an OR) whose hits are read from located lines; a search for more decodes
/// the sessions it cannot rule out.
const MAX_LOCATED_QUERIES: usize = 8;

/// A store, consulted for one decoder version.
pub struct Index {
    store: Mutex<Store>,
    version: String,
}

impl Index {
    /// The projection in `store`, valid for sessions indexed with `version`.
    pub fn new(store: Store, version: impl Into<String>) -> Index {
        Index {
            store: Mutex::new(store),
            version: version.into(),
        }
    }
}

/// The earliest and latest time of the candidate lines of a session (`None` first: untimed).
type Span = (Option<Timestamp>, Option<Timestamp>);

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
        // The sessions indexed by this build from the files they have now.
        // Failed sessions that this build recorded from the files they have now: an update
        // would fail them again.
        let mut failed = vec![false; sessions.len()];
        // The freshness check stats every file and reads the headers that name ancestors: on
        // every core.
        let nows = history_core::parallel::map(sessions, |file| {
            corpus
                .source(&file.key.harness)
                .and_then(|source| fingerprints(source, file))
        });
        let fresh: Vec<bool> = sessions
            .iter()
            .zip(nows)
            .enumerate()
            .map(|(i, (file, now))| {
                let Some(now) = now else {
                    return false;
                };
                let row = rows.get(&file.key).copied();
                failed[i] = row.is_some_and(|row| {
                    row.state == SessionState::Failed
                        && row.decoder_version == self.version
                        && same_files(&row.witnesses, &now)
                });
                indexed(row, &self.version, &now)
            })
            .collect();
        let keys: Vec<SessionKey> = sessions
            .iter()
            .zip(&fresh)
            .filter(|(_, fresh)| **fresh)
            .map(|(f, _)| f.key.clone())
            .collect();
        // Per fresh session, the span of its candidate lines; `None`: one has no known time.
        let mut spans: HashMap<usize, Option<Span>> = HashMap::new();
        for tokens in &per_query {
            let mut fts = String::new();
            tokens_text(tokens, &mut fts);
            let Ok(found) = store.matching_spans_in(&keys, &fts) else {
                return unknown();
            };
            for (i, this) in found {
                let entry = spans.entry(i).or_insert(this);
                *entry = match (*entry, this) {
                    (Some((f1, l1)), Some((f2, l2))) => Some((f1.min(f2), l1.max(l2))),
                    _ => None,
                };
            }
        }
        let mut next = 0;
        fresh
            .iter()
            .zip(failed)
            .map(|(fresh, failed)| {
                if failed {
                    return Known::Unindexable;
                }
                if !fresh {
                    return Known::Unknown;
                }
                let i = next;
                next += 1;
                match spans.get(&i) {
                    None => Known::NoHit,
                    Some(None) => Known::Unknown,
                    Some(Some((first, last))) => Known::Within {
                        first: *first,
                        last: *last,
                    },
                }
            })
            .collect()
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
        let (path, lines, meta) = {
            let store = self.store.lock().ok()?;
            let row = store.session(&file.key).ok()??;
            let meta = store.session_meta(&file.key).ok()??;
            // Inherited history is not located yet: only a session's own file is.
            let [witness] = row.witnesses.as_slice() else {
                return None;
            };
            let mut lines: BTreeMap<u64, Candidate> = BTreeMap::new();
            for query in filter.queries() {
                let mut fts = String::new();
                tokens_text(&query_tokens(query)?, &mut fts);
                for c in store.matching_lines(&file.key, &fts).ok()? {
                    lines.insert(c.line.seq, c);
                }
            }
            (witness.path.clone(), lines, meta)
        };
        let mut order = Vec::new();
        for c in lines.values().filter(|c| all_branches || c.branch) {
            for stored in events::decode(&c.events)? {
                let event = stored.event(c.line.seq, String::new());
                if filter.in_time(&event) && filter.has_role(&event) && admit(&event) {
                    order.push((stored, c));
                }
            }
        }
        order.sort_by_key(|(s, c)| (s.timestamp, c.line.seq, s.part));
        if from == From::Newest {
            order.reverse();
        }
        let mut replayed: HashMap<u64, Vec<Event>> = HashMap::new();
        let mut hits = Vec::new();
        for (stored, c) in order {
            if hits.len() >= want {
                break;
            }
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
                    event.on_active_branch = Some(c.branch);
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
