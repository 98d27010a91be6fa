//! The page of many sessions (`list` with a wildcard, a place, or no current session): a
//! search's hits merged by time, or with no query the recent-sessions overview of one
//! representative event per session, fitted to the budget, with the recipes that page on.

use crate::choose::Filter;
use crate::model::{Bound, Cursor, End, SessionFile, SessionKey, Timestamp};
use crate::page::budget::{fit_list_widest, FRAME_SLACK};
use crate::page::{notice, Coverage, Item, ListPage, Recipe, Render, SCHEMA_VERSION};
use crate::query::{overview, representative, search, ListRequest, Listing, Scope, SearchRequest};

/// Hits from `sessions` (a query), or their overview (none).
pub(crate) fn listing(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    sessions: &[SessionFile],
) -> Listing {
    let from = req.many_from();
    if filter.is_search() {
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
            },
        );
    }
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

/// The page of `listing`, fitted to the budget as `render` renders it. `no_sessions`: the notice
/// that there are no sessions at all, when there are none; `said`: what to say of how the
/// sessions were chosen.
pub(crate) fn across_page(
    scope: &Scope<'_>,
    listing: Listing,
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
        if scope.projection.is_some() && listing.scanned > 0 {
            shown.push(notice::unindexed(listing.scanned));
        }
    }
    let mut page = unfitted(scope, listing, filter, is_empty);
    page.notice = notice::joined(&widest);
    page.coverage = coverage.map(|_| Coverage {
        from_index: sessions,
        scanned: sessions,
        unindexable: 0,
        appended: 0,
    });
    let recipes = filter.is_search().then(|| widest_recipes(&page, req, from));
    fit_list_widest(
        &mut page,
        render,
        req.budget,
        from,
        true,
        FRAME_SLACK,
        recipes,
    );
    if filter.is_search() {
        page_on(&mut page, req);
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
) -> (Option<Recipe>, Option<Recipe>) {
    let longest = page
        .items
        .iter()
        .map(item_key)
        .max_by_key(|k| k.to_string().len());
    let widest = Cursor {
        time: Some(Timestamp(0)),
        session: longest.unwrap_or_else(|| SessionKey::new("", "")),
        seq: u64::MAX,
        part: u32::MAX,
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

/// The session an item of a page across sessions names.
fn item_key(item: &Item) -> SessionKey {
    let (harness, id) = item.session.split_once(':').unwrap_or(("", &item.session));
    SessionKey::new(harness, id)
}
