//! The single-session browse page: which events a page shows, how runs of tool and context events
//! fold, and what lies beyond the page.

use crate::model::{End, Event};
use crate::page::Fold;

/// A request for one page of one session.
#[derive(Clone, Debug)]
pub struct BrowseRequest {
    /// Only events with a seq below this.
    pub before_seq: Option<u64>,
    /// Only events with a seq above this.
    pub after_seq: Option<u64>,
    /// The end the page starts from; `None`: oldest with `after_seq`, else newest.
    pub from: Option<End>,
    /// How many items at most.
    pub limit: usize,
    /// Whether runs of tool/context events fold (false with a query or a role filter).
    pub fold: bool,
}

impl BrowseRequest {
    /// The end the page starts from, after the defaults.
    pub fn from(&self) -> End {
        self.from.unwrap_or(if self.after_seq.is_some() {
            End::Oldest
        } else {
            End::Newest
        })
    }
}

/// One item of a page: an event, and the run folded just before it.
#[derive(Clone, Debug, PartialEq)]
pub struct BrowsedItem {
    /// The event.
    pub event: Event,
    /// The run of tool/context events between the previous item and this one.
    pub folded_before: Option<Fold>,
}

/// One page of one session.
#[derive(Clone, Debug, PartialEq)]
pub struct Browsed {
    /// Items, oldest first.
    pub items: Vec<BrowsedItem>,
    /// The run after the last item, at the end of the page.
    pub folded_after: Option<Fold>,
    /// Whether events lie before the page.
    pub has_older: bool,
    /// Whether events lie after the page.
    pub has_newer: bool,
}

/// Builds a page from a session's events (already filtered, in `(seq, part)` order).
pub fn browse(events: Vec<Event>, req: &BrowseRequest) -> Browsed {
    let newer_outside = req
        .before_seq
        .is_some_and(|b| events.last().is_some_and(|e| e.seq >= b));
    let older_outside = req
        .after_seq
        .is_some_and(|a| events.first().is_some_and(|e| e.seq <= a));
    let window: Vec<Event> = events
        .into_iter()
        .filter(|e| req.before_seq.is_none_or(|b| e.seq < b))
        .filter(|e| req.after_seq.is_none_or(|a| e.seq > a))
        .collect();
    let mut page = if req.fold {
        fold_page(window, req)
    } else {
        flat_page(window, req)
    };
    page.has_older |= older_outside;
    page.has_newer |= newer_outside;
    page
}

fn flat_page(mut window: Vec<Event>, req: &BrowseRequest) -> Browsed {
    let n = window.len();
    let take = req.limit.min(n);
    let (range, has_older, has_newer) = match req.from() {
        End::Newest => (n - take..n, n > take, false),
        End::Oldest => (0..take, false, n > take),
    };
    let items = window
        .drain(range)
        .map(|event| BrowsedItem {
            event,
            folded_before: None,
        })
        .collect();
    Browsed {
        items,
        folded_after: None,
        has_older,
        has_newer,
    }
}

fn fold_page(window: Vec<Event>, req: &BrowseRequest) -> Browsed {
    let visible: Vec<usize> = (0..window.len()).filter(|&i| window[i].visible).collect();
    let take = req.limit.min(visible.len());
    let chosen = match req.from() {
        End::Newest => &visible[visible.len() - take..],
        End::Oldest => &visible[..take],
    };
    // The page spans from just after the item before the first chosen one (so that the run it
    // folds comes along) to the last chosen item, or to the end of the window when no item
    // follows it.
    let start = match chosen.first() {
        Some(&first) => visible
            .iter()
            .rev()
            .find(|&&v| v < first)
            .map_or(0, |&v| v + 1),
        None => 0,
    };
    let end = match chosen.last() {
        Some(&last) if visible.last() != Some(&last) => last + 1,
        _ => window.len(),
    };
    let has_older = start > 0;
    let has_newer = end < window.len();
    let mut items = Vec::with_capacity(chosen.len());
    let mut run: Vec<Event> = Vec::new();
    for event in window.into_iter().take(end).skip(start) {
        if event.visible {
            items.push(BrowsedItem {
                folded_before: Fold::of(&run),
                event,
            });
            run.clear();
        } else {
            run.push(event);
        }
    }
    Browsed {
        items,
        folded_after: Fold::of(&run),
        has_older,
        has_newer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn ev(seq: u64, role: Role) -> Event {
        Event {
            seq,
            part: 0,
            role,
            kind: "message".into(),
            timestamp: None,
            text: format!("e{seq}"),
            visible: matches!(role, Role::User | Role::Assistant),
            tool: (role == Role::Tool).then(|| "Bash".to_string()),
            on_active_branch: None,
        }
    }

    fn session() -> Vec<Event> {
        use Role::*;
        [User, Tool, Tool, Assistant, Context, User, Assistant, Tool]
            .into_iter()
            .enumerate()
            .map(|(i, r)| ev(i as u64 + 1, r))
            .collect()
    }

    fn req(limit: usize) -> BrowseRequest {
        BrowseRequest {
            before_seq: None,
            after_seq: None,
            from: None,
            limit,
            fold: true,
        }
    }

    fn seqs(p: &Browsed) -> Vec<u64> {
        p.items.iter().map(|i| i.event.seq).collect()
    }

    #[test]
    fn newest_end_folds_runs() {
        let p = browse(session(), &req(2));
        assert_eq!(seqs(&p), vec![6, 7]);
        assert_eq!(p.items[0].folded_before.as_ref().unwrap().first_seq, 5);
        let after = p.folded_after.as_ref().unwrap();
        assert_eq!((after.first_seq, after.last_seq, after.count), (8, 8, 1));
        assert!(p.has_older && !p.has_newer);
    }

    #[test]
    fn paging_older_and_newer() {
        let older = browse(
            session(),
            &BrowseRequest {
                before_seq: Some(5),
                ..req(20)
            },
        );
        assert_eq!(seqs(&older), vec![1, 4]);
        let fold = older.items[1].folded_before.as_ref().unwrap();
        assert_eq!((fold.first_seq, fold.last_seq, fold.count), (2, 3, 2));
        assert_eq!(fold.tools, vec!["Bash".to_string()]);
        assert!(!older.has_older && older.has_newer);

        let newer = browse(
            session(),
            &BrowseRequest {
                after_seq: Some(1),
                ..req(1)
            },
        );
        assert_eq!(
            seqs(&newer),
            vec![4],
            "after_seq defaults to the oldest end"
        );
        assert!(newer.folded_after.is_none());
        assert!(
            newer.has_newer && newer.has_older,
            "seq 1 lies before the page"
        );
    }

    #[test]
    fn flat_pages_count_every_event() {
        let p = browse(
            session(),
            &BrowseRequest {
                fold: false,
                ..req(3)
            },
        );
        assert_eq!(seqs(&p), vec![6, 7, 8]);
        assert!(p.has_older);
    }
}
