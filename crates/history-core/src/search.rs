//! The wildcard search: hits from every selected session, merged by event time.

use std::path::PathBuf;

use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::matching::Filter;
use crate::model::{Event, SessionFile, SessionKey};
use crate::paging::From;
use crate::parallel::ordered_map;

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

/// Searches `sessions` for events passing `filter`; `limit` counts from the end `from` names.
pub fn search(
    corpus: &Corpus,
    sessions: &[SessionFile],
    filter: &Filter,
    limit: usize,
    from: From,
    all_branches: bool,
    prefilter: Option<Prefilter<'_>>,
) -> Listing {
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
            if prefilter.is_some_and(|p| !p(file)) {
                return Ok(Vec::new());
            }
            corpus
                .load(file, &keep, all_branches)
                .map(|loaded| loaded.events)
        },
        |file, result| {
            match result {
                Ok(events) => {
                    total += events.len();
                    // A session can contribute at most `limit` items from the chosen end.
                    let n = events.len();
                    let range = match from {
                        From::Newest => n.saturating_sub(limit)..n,
                        From::Oldest => 0..limit.min(n),
                    };
                    hits.extend(events[range].iter().cloned().map(|event| Hit {
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
