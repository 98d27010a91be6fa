//! The page of many sessions (`list` with a wildcard, a place, or no current session): a
//! search's hits merged by time, or with no query the recent-sessions overview of one
//! representative event per session, fitted to the budget, with the recipes that page on.

use std::cmp::Reverse;

use crate::choose::Filter;
use crate::model::{Bound, Cursor, End, SessionFile, SessionKey, Timestamp};
use crate::page::budget::{fit_list_widest, FRAME_SLACK};
use crate::page::{notice, Coverage, Item, ListPage, Recipe, Render, SCHEMA_VERSION};
use crate::query::{
    overview, representative, search, ListRequest, Listing, Scope, SearchRequest, SessionActivity,
};

/// Hits from `sessions` (a query), or their overview (none).
pub(crate) fn listing(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    sessions: &[SessionFile],
) -> Listing {
    let from = req.many_from();
    if filter.is_search() {
        let activity = scope.cache.map(|cache| {
            move |file: &SessionFile| Some(cache.cached(scope.corpus, file)?.activity())
        });
        return search(
            scope.corpus,
            sessions,
            &SearchRequest {
                filter,
                limit: req.limit,
                from,
                all_branches: req.all_branches,
                raw_prefilter: true,
                projection: scope.projection,
                bound: match (&req.before, &req.after) {
                    (Some(c), _) => Some(Bound::Before(c)),
                    (None, Some(c)) => Some(Bound::After(c)),
                    (None, None) => None,
                },
                activity: activity.as_ref().map(|f| f as &SessionActivity<'_>),
            },
        );
    }
    let sessions = beyond_place(sessions, req);
    match (scope.cache, filter.is_empty()) {
        (Some(cache), true) => {
            let choose = |file: &SessionFile| cache.representative(scope.corpus, file);
            overview(sessions, req.limit, from, &choose)
        }
        _ => {
            let choose = |file: &SessionFile| representative(scope.corpus, file, filter);
            overview(sessions, req.limit, from, &choose)
        }
    }
}

/// The sessions an overview asked for from a place (`--before`/`--after`, an overview's
/// recipe) goes on with: those after it in the order sessions are taken (newest modified first,
/// then by id), or before it. A place is a session's modification time and id.
fn beyond_place<'s>(sessions: &'s [SessionFile], req: &ListRequest) -> &'s [SessionFile] {
    let order = |f: &SessionFile, c: &Cursor| {
        let time = c.time.map_or(i64::MIN, |t| t.0);
        (Reverse(f.modified), &f.key).cmp(&(Reverse(time), &c.session))
    };
    match (&req.before, &req.after) {
        (Some(c), _) => &sessions[sessions.partition_point(|f| order(f, c).is_le())..],
        (None, Some(c)) => &sessions[..sessions.partition_point(|f| order(f, c).is_lt())],
        (None, None) => sessions,
    }
}

/// An overview's place: where `file` lies in the order sessions are taken.
fn session_place(file: &SessionFile) -> Cursor {
    Cursor {
        time: Some(Timestamp(file.modified)),
        session: file.key.clone(),
        seq: 0,
        part: 0,
    }
}

/// The page of `listing`, taken from `files`, fitted to the budget as `render` renders it.
/// `no_sessions`: the notice that there are no sessions at all, when there are none; `said`: what
/// to say of how the sessions were chosen.
pub(crate) fn across_page(
    scope: &Scope<'_>,
    (listing, files): (Listing, &[SessionFile]),
    filter: &Filter,
    req: &ListRequest,
    render: &dyn Render,
    no_sessions: Option<String>,
    said: Option<String>,
) -> ListPage {
    let from = req.many_from();
    let mut notices: Vec<String> = said.into_iter().collect();
    notices.extend(notice::skipped(&listing.skipped));
    let is_empty = no_sessions.is_some();
    notices.extend(no_sessions);
    let coverage = filter.is_search().then_some(Coverage {
        from_index: listing.from_index,
        scanned: listing.scanned,
        unindexable: listing.unindexable,
        appended: listing.appended,
    });
    // What the index adds (its notice, the digits of its coverage) must not change which
    // items fit: the budget is measured with the most it could add, with the index or not.
    let sessions = listing.from_index + listing.scanned;
    let mut widest = notices.clone();
    let mut shown = notices;
    if filter.is_search() {
        widest.push(notice::unindexed(sessions));
        let unindexed = listing.scanned.saturating_sub(listing.unindexable);
        if scope.projection.is_some() && unindexed > 0 {
            shown.push(notice::unindexed(unindexed));
        }
    }
    let visited = listing.visited;
    let mut page = unfitted(scope, listing, filter, is_empty);
    let representatives: Vec<String> = page.items.iter().map(|i| i.session.clone()).collect();
    page.notice = notice::joined(&widest);
    page.coverage = coverage.map(|_| Coverage {
        from_index: sessions,
        scanned: sessions,
        unindexable: 0,
        appended: 0,
    });
    let recipes = match filter.is_search() {
        true => widest_recipes(&page, req, from, false),
        false => widest_recipes(&page, req, from, true),
    };
    fit_list_widest(
        &mut page,
        render,
        req.budget,
        from,
        true,
        FRAME_SLACK,
        Some(recipes),
    );
    match filter.is_search() {
        true => page_on(&mut page, req),
        false => {
            page_on_sessions(
                &mut page,
                req,
                beyond_place(files, req),
                visited,
                &representatives,
            );
            // A session's place on the page is its last activity.
            let activity = |i: &Item| i.last_activity.or(i.event.timestamp);
            page.items
                .sort_by(|a, b| (activity(a), &a.session).cmp(&(activity(b), &b.session)));
        }
    }
    page.notice = notice::joined(&shown);
    page.coverage = coverage;
    page
}

/// The listing's items as a page, with where they come from filled in, before the budget.
fn unfitted(scope: &Scope<'_>, listing: Listing, filter: &Filter, no_sessions: bool) -> ListPage {
    let files: Vec<SessionFile> = listing
        .items
        .iter()
        .map(|hit| SessionFile {
            key: hit.session.clone(),
            path: hit.path.clone(),
            modified: 0,
            size: 0,
            fingerprint: None,
        })
        .collect();
    let mut page = ListPage {
        schema_version: SCHEMA_VERSION,
        session: None,
        items: listing
            .items
            .into_iter()
            .map(|hit| {
                let mut item = Item::new(
                    hit.session.to_string(),
                    Some(hit.path.display().to_string()),
                    hit.event,
                )
                .about(&hit.meta);
                item.location = hit.location;
                item.session_events = hit.session_events;
                item.last_activity = hit.last_activity;
                if filter.is_search() {
                    item.focus = filter.first_match(&item.event.text);
                } else {
                    item.representative = true;
                }
                item
            })
            .collect(),
        folded_after: None,
        has_older: listing.has_older,
        has_newer: listing.has_newer,
        older: None,
        newer: None,
        notice: None,
        coverage: None,
        implicit: false,
        no_sessions,
        budget_cut: false,
        resume: None,
    };
    let files: Vec<&SessionFile> = files.iter().collect();
    scope.fill(&mut page.items, &files);
    page
}

/// The recipes a search page can end with, as wide as they can come out: which items fit must
/// not depend on where the page ends. The budget can only cut the end away from `from`:
/// elsewhere a recipe comes from the limit or from the bound the page was asked from.
fn widest_recipes(
    page: &ListPage,
    req: &ListRequest,
    from: End,
    overview: bool,
) -> (Option<Recipe>, Option<Recipe>) {
    let longest = page
        .items
        .iter()
        .map(item_key)
        .max_by_key(|k| k.to_string().len());
    // An event's place, or an overview's (a modification time to the nanosecond).
    let widest = Cursor {
        time: Some(Timestamp(if overview { 1 } else { 0 })),
        session: longest.unwrap_or_else(|| SessionKey::new("", "")),
        seq: if overview { 0 } else { u64::MAX },
        part: if overview { 0 } else { u32::MAX },
    };
    let recipe = Recipe {
        before: Some(widest),
        limit: req.paged_limit(),
        ..req.recipe()
    };
    let older = page.has_older || req.after.is_some() || from == End::Newest;
    let newer = page.has_newer || req.before.is_some() || from == End::Oldest;
    (older.then(|| recipe.clone()), newer.then_some(recipe))
}

/// The recipes of a search page across sessions: the same search from the page's oldest item
/// back, or from its newest on. A page that an earlier page's recipe asked for keeps the
/// bound it came from on its other side: beyond it lies what that page showed.
fn page_on(page: &mut ListPage, req: &ListRequest) {
    let place = |item: &Item| Cursor {
        time: item.event.timestamp,
        session: item_key(item),
        seq: item.event.seq,
        part: item.event.part,
    };
    let base = Recipe {
        limit: req.paged_limit(),
        ..req.recipe()
    };
    let oldest = page.items.first().map(place).or_else(|| req.after.clone());
    let newest = page.items.last().map(place).or_else(|| req.before.clone());
    page.has_newer |= req.before.is_some();
    page.has_older |= req.after.is_some();
    if page.has_older {
        page.older = oldest.map(|c| Recipe {
            before: Some(c),
            ..base.clone()
        });
    }
    if page.has_newer {
        page.newer = newest.map(|c| Recipe {
            after: Some(c),
            ..base
        });
    }
}

/// The recipes of an overview: the sessions taken after the last one whose representative is
/// on the page (or that had none), or before the first; `sessions` are those the page was
/// taken from, in the order they were taken, `visited` of them looked at, `representatives`
/// the sessions that gave one before the budget left some out.
fn page_on_sessions(
    page: &mut ListPage,
    req: &ListRequest,
    sessions: &[SessionFile],
    visited: usize,
    representatives: &[String],
) {
    let from = req.many_from();
    let ordered: Vec<&SessionFile> = match from {
        End::Newest => sessions.iter().collect(),
        End::Oldest => sessions.iter().rev().collect(),
    };
    let shown: Vec<&str> = page.items.iter().map(|i| i.session.as_str()).collect();
    let left_out = |f: &SessionFile| {
        let key = f.key.to_string();
        representatives.contains(&key) && !shown.contains(&key.as_str())
    };
    // The page goes up to the first session whose representative the budget left out.
    let last = ordered[..visited.min(ordered.len())]
        .iter()
        .take_while(|f| !left_out(f))
        .last()
        .map(|f| session_place(f));
    let first = ordered.first().map(|f| session_place(f));
    let base = Recipe {
        limit: req.paged_limit(),
        ..req.recipe()
    };
    let (onward, back) = match from {
        End::Newest => (page.has_older, req.before.is_some()),
        End::Oldest => (page.has_newer, req.after.is_some()),
    };
    let onward = last.filter(|_| onward);
    let back = first.filter(|_| back);
    let (older, newer) = match from {
        End::Newest => (onward, back),
        End::Oldest => (back, onward),
    };
    page.has_older |= older.is_some();
    page.has_newer |= newer.is_some();
    page.older = older.map(|c| Recipe {
        before: Some(c),
        ..base.clone()
    });
    page.newer = newer.map(|c| Recipe {
        after: Some(c),
        ..base
    });
}

/// The session an item of a page across sessions names.
fn item_key(item: &Item) -> SessionKey {
    let (harness, id) = item.session.split_once(':').unwrap_or(("", &item.session));
    SessionKey::new(harness, id)
}
