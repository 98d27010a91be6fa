//! The page of one session (`list --session ID`): its dialogue with the runs of tool and context
//! events between folded, or every event a query or a role admits, fitted to the budget, with
//! the recipes that page on from either end.

use crate::choose::Filter;
use crate::corpus::{Keep, Texts};
use crate::error::HistoryError;
use crate::model::{End, Event, SessionFile};
use crate::page::budget::fit_list_widest;
use crate::page::{notice, FoldedRun, Item, ListPage, Recipe, Render, SCHEMA_VERSION};
use crate::query::{
    browse, BrowseRequest, Browsed, BrowsedItem, HitOrder, HitTexts, Known, ListRequest, Scope,
    Wanted,
};
use crate::source::LineTest;
use history_raw::RawFilter;

/// The session in `file` as a page: what `req` asks of it, fitted to its budget as `render`
/// renders it. `implicit`: the session is the caller's current one, named by nobody; `said`:
/// what to say of how it was chosen.
pub(crate) fn session_page(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    file: SessionFile,
    implicit: bool,
    said: Option<String>,
    render: &dyn Render,
) -> Result<ListPage, HistoryError> {
    let browse_req = BrowseRequest {
        before_seq: req.before_seq,
        after_seq: req.after_seq,
        from: req.from,
        limit: req.limit,
        fold: filter.queries().is_empty() && filter.roles.is_empty(),
    };
    let projected = match filter.is_search() {
        true => searched_in_projection(scope, req, filter, &file),
        false => browsed_in_projection(scope, req, filter, &file, &browse_req),
    };
    let (browsed, loaded_meta, notices) = match projected {
        Some(found) => found?,
        None => load(scope, req, filter, &file, &browse_req)?,
    };
    let canonical = file.key.to_string();
    // A page on repeats what shaped this one.
    let base = Recipe {
        session: (!implicit).then(|| canonical.clone()),
        all_branches: req.all_branches.then_some(true),
        queries: (!req.queries.is_empty()).then(|| req.queries.clone()),
        roles: (!req.roles.is_empty()).then(|| req.roles.clone()),
        since: req.since,
        until: req.until,
        limit: req.paged_limit(),
        ..Recipe::default()
    };
    let path = file.path.display().to_string();
    let mut page = ListPage {
        schema_version: SCHEMA_VERSION,
        session: Some(canonical.clone()),
        items: browsed
            .items
            .into_iter()
            .map(|item| {
                let mut view = Item::new(canonical.clone(), Some(path.clone()), item.event)
                    .about(&loaded_meta);
                if filter.is_search() {
                    view.focus = filter.first_match(&view.event.text);
                }
                view.folded_before = item.folded_before.map(|f| FoldedRun::new(f, &base));
                view
            })
            .collect(),
        folded_after: browsed.folded_after.map(|f| FoldedRun::new(f, &base)),
        has_older: browsed.has_older,
        has_newer: browsed.has_newer,
        older: None,
        newer: None,
        notice: notice::joined(&said.into_iter().chain(notices).collect::<Vec<_>>()),
        coverage: None,
        implicit,
        no_sessions: false,
        budget_cut: false,
        resume: (scope.resumes || scope.locations)
            .then(|| scope.corpus.source(&file.key.harness)?.resume(&file))
            .flatten(),
    };
    let files = vec![&file; page.items.len()];
    scope.fill(&mut page.items, &files);
    fit(&mut page, req, browse_req.from(), &base, render);
    Ok(page)
}

/// The size of a transcript whose search page comes from the lines a projection locates: a
/// smaller one is decoded in less time than the projection takes to look its lines up.
const LOCATED: u64 = 256 << 10;

/// A page of one session before the budget, what the session is about, and the notices.
type Page = (Browsed, crate::model::SessionMeta, Vec<String>);

/// A search's page of a large session from the lines a projection locates, without decoding the
/// session: where the projection holds the session as it now is, and a decode of it gives no
/// notice (a decode that reads only the lines that can hold a hit then gives none either; one
/// that does may give fewer than a whole decode, so such a session is decoded). `None` when
/// the session is to be decoded.
fn searched_in_projection(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    file: &SessionFile,
) -> Option<Result<Page, HistoryError>> {
    let p = scope.projection.filter(|_| file.size >= LOCATED)?;
    let (meta, notices) = p.about(scope.corpus, file)?;
    if !notices.is_empty() {
        return None;
    }
    let empty = Browsed {
        items: Vec::new(),
        folded_after: None,
        has_older: false,
        has_newer: false,
    };
    match p
        .known(scope.corpus, std::slice::from_ref(file), filter)
        .first()?
    {
        Known::NoHit => return Some(Ok((empty, meta, Vec::new()))),
        Known::Within {
            appended: false, ..
        } => {}
        _ => return None,
    }
    let from = BrowseRequest {
        before_seq: req.before_seq,
        after_seq: req.after_seq,
        from: req.from,
        limit: req.limit,
        fold: false,
    }
    .from();
    // The hits that `admit` takes, `count` of them from `from`'s end, in the session's order.
    let hits = |admit: &dyn Fn(&Event) -> bool, from: End, count: usize| {
        let wanted = Wanted {
            filter,
            admit,
            from,
            count,
            all_branches: req.all_branches,
            texts: HitTexts::Kept,
            order: HitOrder::Position,
        };
        let found = p.hits(scope.corpus, file, &wanted)?;
        Some(found.map(|(hits, _)| {
            let mut events: Vec<Event> = hits.into_iter().map(|(e, _)| e).collect();
            events.sort_by_key(Event::position);
            events
        }))
    };
    let within = |e: &Event| {
        req.before_seq.is_none_or(|b| e.seq < b) && req.after_seq.is_none_or(|a| e.seq > a)
    };
    let mut page = match hits(&within, from, req.limit + 1)? {
        Ok(page) => page,
        Err(e) => return Some(Err(e)),
    };
    let more = page.len() > req.limit;
    match from {
        End::Newest => drop(page.drain(..page.len() - req.limit.min(page.len()))),
        End::Oldest => page.truncate(req.limit),
    }
    // A hit beyond the bounds, as a page on would find it.
    let beyond = |admit: &dyn Fn(&Event) -> bool| {
        hits(admit, End::Oldest, 1).map(|found| found.map(|f| !f.is_empty()))
    };
    let newer = match req.before_seq {
        Some(b) => beyond(&|e: &Event| e.seq >= b)?,
        None => Ok(false),
    };
    let older = match req.after_seq {
        Some(a) => beyond(&|e: &Event| e.seq <= a)?,
        None => Ok(false),
    };
    let (newer, older) = match (newer, older) {
        (Ok(n), Ok(o)) => (n, o),
        (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
    };
    let browsed = Browsed {
        items: (page.into_iter())
            .map(|event| BrowsedItem {
                event,
                folded_before: None,
            })
            .collect(),
        folded_after: None,
        has_older: (from == End::Newest && more) || older,
        has_newer: (from == End::Oldest && more) || newer,
    };
    Some(Ok((browsed, meta, Vec::new())))
}

/// A page of a large session that is no search, from the events a projection holds of it
/// (their roles, times, kinds and branches, which are what a page chooses its items by) and
/// the texts of its items alone, each read from its line: where the projection holds the
/// session as it now is. `None` when the session is to be decoded.
fn browsed_in_projection(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    file: &SessionFile,
    browse_req: &BrowseRequest,
) -> Option<Result<Page, HistoryError>> {
    let p = scope.projection.filter(|_| file.size >= LOCATED)?;
    let held = p.events(scope.corpus, file, req.all_branches)?;
    let events = (held.events.into_iter())
        .filter(|e| filter.matches(e))
        .collect();
    let mut browsed = browse(events, browse_req);
    let mut items: Vec<Event> = browsed.items.iter().map(|i| i.event.clone()).collect();
    if !p.texts(scope.corpus, file, &mut items) {
        return None;
    }
    for (item, read) in browsed.items.iter_mut().zip(items) {
        item.event.text = read.text;
    }
    Some(Ok((browsed, held.meta, held.notices)))
}

/// The session's page of events, before the budget: only an item within the seq bounds can be on
/// it, and only a page's worth of them keeps its text while the session streams by.
fn load(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    file: &SessionFile,
    browse_req: &BrowseRequest,
) -> Result<(Browsed, crate::model::SessionMeta, Vec<String>), HistoryError> {
    let within = |e: &Event| {
        req.before_seq.is_none_or(|b| e.seq < b) && req.after_seq.is_none_or(|a| e.seq > a)
    };
    let keep = |e: &Event| match (
        filter.matches(e),
        browse_req.fold && !e.visible || !within(e),
    ) {
        (false, _) => Keep::Drop,
        (true, true) => Keep::Meta,
        (true, false) => Keep::Full,
    };
    let texts = Texts::page(browse_req.from(), req.limit);
    // A search decodes only the lines that can hold a hit; the rest are read for structure.
    let raw = filter.is_search().then(|| RawFilter::new(filter.queries()));
    let test = |line: &[u8]| raw.as_ref().is_none_or(|r| r.may_match_slice(line));
    let line_test = raw
        .as_ref()
        .filter(|r| !r.passes_everything())
        .map(|_| &test as LineTest<'_>);
    let loaded = scope
        .corpus
        .load_within(file, &keep, req.all_branches, line_test, Some(texts))?;
    let mut browsed = browse(loaded.events, browse_req);
    let items = browsed.items.iter_mut().map(|i| &mut i.event);
    scope.corpus.refill(file, &loaded.textless, items)?;
    Ok((browsed, loaded.meta, loaded.notices))
}

/// Fits the page to the budget and writes its recipes. The recipes, as wide as they can come
/// out, are measured with the frame: a renderer may write them at length (a command line), and
/// which items fit must not depend on them. Only the end the budget can cut, or that lies
/// beyond already, gets one; no recipe seq is wider than the widest seq on the page.
fn fit(page: &mut ListPage, req: &ListRequest, from: End, base: &Recipe, render: &dyn Render) {
    let widest = page
        .items
        .iter()
        .map(|i| i.event.seq)
        .chain(page.folded_after.as_ref().map(|f| f.run.last_seq))
        .chain(req.after_seq)
        .max()
        .unwrap_or(0);
    let older = (page.has_older || from == End::Newest).then(|| Recipe {
        before_seq: Some(widest),
        ..base.clone()
    });
    let newer = (page.has_newer || from == End::Oldest).then(|| Recipe {
        after_seq: Some(widest),
        ..base.clone()
    });
    let admitted = fit_list_widest(
        page,
        render,
        req.budget,
        from,
        false,
        0,
        Some((older, newer)),
    );
    // When the budget dropped the newest items, the run after them is no longer on the page.
    if admitted.dropped_newer {
        page.folded_after = None;
    }
    let first = page.items.first().map(|i| {
        i.folded_before
            .as_ref()
            .map_or(i.event.seq, |f| f.run.first_seq)
    });
    let last = page
        .folded_after
        .as_ref()
        .map(|f| f.run.last_seq)
        .or(page.items.last().map(|i| i.event.seq));
    if page.has_older {
        page.older = first.map(|seq| Recipe {
            before_seq: Some(seq),
            ..base.clone()
        });
    }
    if page.has_newer {
        page.newer = last.or(req.after_seq).map(|seq| Recipe {
            after_seq: Some(seq),
            ..base.clone()
        });
    }
}
