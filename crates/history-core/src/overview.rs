//! The recent-sessions overview: one representative event per session.

use std::cell::{Cell, RefCell};

use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::matching::Filter;
use crate::model::{Event, SessionFile};
use crate::paging::From;
use crate::parallel::ordered_map;
use crate::search::{Hit, Listing};

/// How much text of tool and context events a representative's decode keeps in case no dialogue
/// is found on the session's branch.
const KEPT_TEXT: usize = 4 << 20;

/// A session's representative and what decoding it said.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Representative {
    /// The chosen event, if the session has one.
    pub event: Option<Event>,
    /// Notices from decoding.
    pub notices: Vec<String>,
    /// The files decoding read (the session's own first), to compare with a cache's witnesses.
    #[serde(skip)]
    pub lineage: Vec<std::path::PathBuf>,
}

/// Chooses a session's representative under `filter` (roles and time; queries are ignored).
///
/// Without roles: the first visible user event, else the latest visible event, else the latest
/// event of any role. With roles: the latest matching visible event, else the latest matching
/// event (a role such as `tool` has no visible events, and an empty answer would help no one).
pub fn representative(
    corpus: &Corpus,
    file: &SessionFile,
    filter: &Filter,
) -> Result<Representative, HistoryError> {
    let admits = |e: &Event| filter.in_time(e) && filter.has_role(e);
    // Only a session with no visible event on its branch shows a tool or context event, its
    // latest: the texts of those that stream before any visible event are kept for that case
    // (a few megabytes at most), so that the session is decoded once.
    let seen_visible = Cell::new(false);
    let kept = Cell::new(0);
    let stripped = RefCell::new(Vec::new());
    let keep = |e: &Event| match (admits(e), e.visible) {
        (false, _) => Keep::Drop,
        (true, true) => {
            seen_visible.set(true);
            Keep::Full
        }
        (true, false) => {
            kept.set(kept.get() + e.text.len());
            if !seen_visible.get() && kept.get() <= KEPT_TEXT {
                Keep::Full
            } else {
                stripped.borrow_mut().push(e.position());
                Keep::Meta
            }
        }
    };
    let loaded = corpus.load(file, &keep, false, None)?;
    let visible = || loaded.events.iter().filter(|e| e.visible);
    let chosen = if filter.roles.is_empty() {
        visible()
            .find(|e| e.role == crate::Role::User)
            .or_else(|| visible().next_back())
    } else {
        visible().next_back()
    };
    let event = match chosen.or(loaded.events.last()) {
        Some(e) if !stripped.borrow().contains(&e.position()) => Some(e.clone()),
        None => None,
        // Its text was not kept (the session's visible events all lie off its branch, or many
        // megabytes of tool output came first): read it again, keeping just that one.
        Some(last) => {
            let at = last.position();
            let only = |e: &Event| {
                if e.position() == at {
                    Keep::Full
                } else {
                    Keep::Drop
                }
            };
            corpus.load(file, &only, false, None)?.events.pop()
        }
    };
    Ok(Representative {
        event,
        notices: loaded.notices,
        lineage: loaded.lineage,
    })
}

/// Builds the overview: sessions are visited in `from` order of modification until `limit` of
/// them produced a representative; the representatives are returned sorted by event time.
pub fn overview(
    sessions: &[SessionFile],
    limit: usize,
    from: From,
    choose: &(dyn Fn(&SessionFile) -> Result<Representative, HistoryError> + Sync),
) -> Listing {
    let mut ordered: Vec<&SessionFile> = sessions.iter().collect();
    if from == From::Oldest {
        ordered.reverse();
    }
    let mut listing = Listing::default();
    let mut visited = 0;
    if limit > 0 {
        ordered_map(
            &ordered,
            |file| choose(file),
            |file, result| {
                visited += 1;
                match result {
                    Ok(Representative {
                        event: Some(event), ..
                    }) => listing.items.push(Hit {
                        session: file.key.clone(),
                        path: file.path.clone(),
                        event,
                    }),
                    Ok(_) => {}
                    Err(e) => listing.skipped.push(e),
                }
                listing.items.len() < limit
            },
        );
    }
    let more = visited < ordered.len();
    match from {
        From::Newest => listing.has_older = more,
        From::Oldest => listing.has_newer = more,
    }
    listing
        .items
        .sort_by(|a, b| a.order_key().cmp(&b.order_key()));
    listing
}
