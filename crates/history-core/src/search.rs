//! The wildcard search: hits from every selected session, merged by event time.

use std::path::PathBuf;

use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::matching::Filter;
use crate::model::{Event, SessionFile, SessionKey};
use crate::paging::From;
use crate::parallel::ordered_map;
use crate::source::LineTest;

/// An event together with the session it belongs to.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hit {
    /// The session.
    pub session: SessionKey,
    /// The session's transcript file.
    pub path: PathBuf,
    /// The event.
    pub event: Event,
}

impl Hit {
    /// The merge order: untimed first, then by time, qualified id, seq and part.
    pub fn order_key(&self) -> (bool, Option<i64>, &SessionKey, u64, u32) {
        (
            self.event.timestamp.is_some(),
            self.event.timestamp.map(|t| t.0),
            &self.session,
            self.event.seq,
            self.event.part,
        )
    }
}

/// Hits from many sessions, oldest first.
#[derive(Debug, Default)]
pub struct Listing {
    /// The items, oldest first.
    pub items: Vec<Hit>,
    /// Whether more lies beyond the oldest item.
    pub has_older: bool,
    /// Whether more lies beyond the newest item.
    pub has_newer: bool,
    /// Sessions that could not be loaded and were skipped.
    pub skipped: Vec<HistoryError>,
}

/// Decides, before decoding, whether a session can hold a hit; it must never say no wrongly.
pub type Prefilter<'a> = &'a (dyn Fn(&SessionFile) -> bool + Sync);

/// What a search asks for.
pub struct SearchRequest<'a> {
    /// Queries (an OR), roles and time window.
    pub filter: &'a Filter,
    /// How many hits at most, counted from `from`.
    pub limit: usize,
    /// The end `limit` counts from.
    pub from: From,
    /// Search every branch of branched sessions, not only the selected one.
    pub all_branches: bool,
    /// Skip sessions whose raw bytes cannot hold a hit, and let decoders skip such lines
    /// ([`Corpus::may_match`], [`crate::Transcript::decode_matching`]).
    pub raw_prefilter: bool,
    /// A further candidate filter in front of decoding (a search index, say).
    pub candidates: Option<Prefilter<'a>>,
}

/// Searches `sessions` for events passing the request's filter, decoding them on every core.
pub fn search(corpus: &Corpus, sessions: &[SessionFile], req: &SearchRequest<'_>) -> Listing {
    let SearchRequest {
        filter,
        limit,
        from,
        all_branches,
        ..
    } = *req;
    let raw = (req.raw_prefilter && filter.is_search()).then(|| corpus.raw_filters(filter));
    let keep = |e: &Event| {
        if filter.matches(e) {
            Keep::Full
        } else {
            Keep::Drop
        }
    };
    let mut listing = Listing::default();
    let mut hits: Vec<Hit> = Vec::new();
    let mut total = 0usize;
    ordered_map(
        sessions,
        |file| {
            let raw = raw.as_ref().and_then(|r| r.get(&file.key.harness));
            let candidate = req.candidates.is_none_or(|c| c(file))
                && raw.is_none_or(|r| corpus.may_match(file, r));
            if !candidate {
                return Ok(Vec::new());
            }
            let test = |line: &[u8]| raw.is_none_or(|r| r.may_match_slice(line));
            let line_test: Option<LineTest<'_>> = raw
                .filter(|r| !r.passes_everything())
                .map(|_| &test as LineTest<'_>);
            corpus
                .load_matching(file, &keep, all_branches, line_test)
                .map(|loaded| loaded.events)
        },
        |file, result| {
            match result {
                Ok(mut events) => {
                    total += events.len();
                    // A session can contribute at most `limit` items from the chosen end.
                    let n = events.len();
                    let range = match from {
                        From::Newest => n.saturating_sub(limit)..n,
                        From::Oldest => 0..limit.min(n),
                    };
                    hits.extend(events.drain(range).map(|event| Hit {
                        session: file.key.clone(),
                        path: file.path.clone(),
                        event,
                    }));
                }
                Err(e) => listing.skipped.push(e),
            }
            true
        },
    );
    hits.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
    let n = hits.len();
    let take = limit.min(n);
    match from {
        From::Newest => {
            hits.drain(..n - take);
            listing.has_older = total > take;
        }
        From::Oldest => {
            hits.truncate(take);
            listing.has_newer = total > take;
        }
    }
    listing.items = hits;
    listing
}
