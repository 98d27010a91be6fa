//! Session-level search (`list --sessions`): every hit of a search gathered per session, so
//! that "which sessions mention it" is one answer rather than a page of events from whichever
//! session talked about it most.
//!
//! [`gather`] is exact where a page looks: every session the page shows yields one
//! [`SessionSummary`], its count of hits up to [`COUNTED`], its first, latest and best hit of all
//! its hits; sessions that cannot reach the page are not read. The page policy on top (order by the latest hit, the limit, the budget)
//! is [`crate::History::sessions`].

use crate::choose::Filter;
use crate::corpus::parallel::{filter_map, ordered_map};
use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::model::End;
use crate::model::Timestamp;
use crate::model::{Event, Role, SessionFile, SessionKey, SessionMeta};
use crate::page::budget::fit_sessions;
use crate::page::{
    notice, Coverage, Item, Recipe, RenderSessions, SessionMatch, SessionsPage, SCHEMA_VERSION,
};
use crate::query::search::{hit_span, Rank, Span};
#[cfg(test)]
use crate::query::Hit;
use crate::query::Projection;
use crate::query::{coverage, HitOrder, HitTexts, Known, Wanted};
use crate::query::{ListRequest, Scope};
use crate::source::LineTest;
use history_raw::RawFilter;

/// How many bytes of a best hit's text a snippet keeps before its match.
const LEAD: usize = 80;

/// How many bytes a snippet keeps in all.
pub const SNIPPET: usize = 320;

/// What stands for text left out of a snippet.
const ELLIPSIS: &str = "…";

/// How many hits of a session its summary counts: past this many it says only that there are
/// more, so that a session that mentions a word on every line costs a page no more than one
/// that mentions it a hundred times.
pub const COUNTED: usize = 100;

/// One session's hits, summed up.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSummary {
    /// The session.
    pub session: SessionKey,
    /// Its transcript file.
    pub path: std::path::PathBuf,
    /// What its transcript says of it.
    pub meta: SessionMeta,
    /// How many of its events matched, up to [`COUNTED`].
    pub hits: usize,
    /// Whether more than [`COUNTED`] matched.
    pub more: bool,
    /// The earliest time of a timed hit.
    pub first_hit: Option<Timestamp>,
    /// The latest time of a timed hit.
    pub last_hit: Option<Timestamp>,
    /// The best hit, its text whole.
    pub best: Event,
}

/// The roles of hits, the best to show first: what a person typed says most of what the
/// session was about, then what the model answered.
const BEST_FIRST: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::Context];

/// A hit's rank as the best of `session`'s: by its role ([`BEST_FIRST`]), then later beats
/// earlier.
fn rank<'a>(event: &'a Event, session: &'a SessionKey) -> (usize, crate::model::OrderKey<'a>) {
    let role = BEST_FIRST.iter().rev().position(|&r| r == event.role);
    let key = crate::model::order_key(event.timestamp, session, event.seq, event.part);
    (role.unwrap_or(0), key)
}

/// Whether hit `a` of `session` is a better one to show than `b` ([`rank`]).
fn better(a: &Event, b: &Event, session: &SessionKey) -> bool {
    rank(a, session) > rank(b, session)
}

/// Gathers `hits` (of any sessions, in any order) into one summary per session, ordered by the
/// latest hit (sessions with untimed hits only first), then by qualified id.
#[cfg(test)]
fn summarize(hits: Vec<Hit>) -> Vec<SessionSummary> {
    let mut by_session: std::collections::BTreeMap<SessionKey, Vec<Hit>> = Default::default();
    for hit in hits {
        by_session.entry(hit.session.clone()).or_default().push(hit);
    }
    let mut out: Vec<SessionSummary> = by_session
        .into_values()
        .filter_map(|hits| {
            let first = hits.first()?;
            let file = SessionFile {
                key: first.session.clone(),
                path: first.path.clone(),
                modified: 0,
                size: 0,
                fingerprint: None,
            };
            let meta = first.meta.clone();
            summary(&file, hits.into_iter().map(|h| h.event).collect(), meta)
        })
        .collect();
    sort(&mut out);
    out
}

/// A session's hits summed up: how many, their earliest and latest times, and the best of them.
#[derive(Debug, Default)]
struct Tally {
    /// How many hits.
    hits: usize,
    /// The earliest time of a timed hit.
    first: Option<Timestamp>,
    /// The latest time of a timed hit.
    last: Option<Timestamp>,
    /// The best hit.
    best: Option<Event>,
}

impl Tally {
    /// The tally of `events`, [`Tally::add`]ed one by one.
    fn of(
        events: impl IntoIterator<Item = Event>,
        better: &dyn Fn(&Event, &Event) -> bool,
    ) -> Tally {
        let mut tally = Tally::default();
        for event in events {
            tally.add(event, better);
        }
        tally
    }

    /// Counts `event` in, keeping it as the best when `better(event, best)`.
    fn add(&mut self, event: Event, better: &dyn Fn(&Event, &Event) -> bool) {
        self.hits += 1;
        if let Some(t) = event.timestamp {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
        }
        if self.best.as_ref().is_none_or(|best| better(&event, best)) {
            self.best = Some(event);
        }
    }
}

/// The order of a session-level search: by the latest hit, then by qualified id.
fn sort(summaries: &mut [SessionSummary]) {
    summaries.sort_by(|a, b| (a.last_hit, &a.session).cmp(&(b.last_hit, &b.session)));
}

/// One session's hits summed up; `None` when it has none.
fn summary(file: &SessionFile, events: Vec<Event>, meta: SessionMeta) -> Option<SessionSummary> {
    summed(
        file,
        Tally::of(events, &|a, b| better(a, b, &file.key)),
        meta,
    )
}

/// A session's summary from its tally; `None` when it has no hit.
fn summed(file: &SessionFile, tally: Tally, meta: SessionMeta) -> Option<SessionSummary> {
    Some(SessionSummary {
        session: file.key.clone(),
        path: file.path.clone(),
        meta,
        hits: tally.hits.min(COUNTED),
        more: tally.hits > COUNTED,
        first_hit: tally.first,
        last_hit: tally.last,
        best: tally.best?,
    })
}

/// A session's summary from the lines `p` locates rather than a decode: its hits up to one
/// more than are counted, those of its shortest lines first ([`HitOrder::Cheapest`]); when
/// there are more, its latest and earliest timed hits and its best (the latest of the first
/// role in [`BEST_FIRST`] that has one), each looked up alone. Only the best hit keeps its
/// text. `None` when `p` cannot tell: the session is then decoded.
fn indexed(
    corpus: &Corpus,
    p: &dyn Projection,
    file: &SessionFile,
    filter: &Filter,
    all_branches: bool,
) -> Result<Option<Option<SessionSummary>>, HistoryError> {
    let look = |wanted: &Wanted<'_>| p.hits(corpus, file, wanted).transpose();
    // The one hit a look-up gives, if any; `None` when the projection cannot tell.
    let one = |wanted: &Wanted<'_>| -> Result<Option<Option<Event>>, HistoryError> {
        Ok(look(wanted)?.map(|(hits, _)| hits.into_iter().next().map(|(e, _)| e)))
    };
    let is_better = |a: &Event, b: &Event| better(a, b, &file.key);
    let counted = Wanted {
        filter,
        admit: &|_| true,
        from: End::Newest,
        count: COUNTED + 1,
        all_branches,
        texts: HitTexts::Best(&is_better),
        order: HitOrder::Cheapest,
    };
    let Some((hits, meta)) = look(&counted)? else {
        return Ok(None);
    };
    let mut tally = Tally::of(hits.into_iter().map(|(e, _)| e), &is_better);
    if tally.hits > COUNTED {
        let first = Wanted {
            count: 1,
            order: HitOrder::Merge,
            ..counted
        };
        // The first timed hit from each end of the merge order.
        let timed = |e: &Event| e.timestamp.is_some();
        for from in [End::Newest, End::Oldest] {
            let end = Wanted {
                admit: &timed,
                from,
                texts: HitTexts::Dropped,
                ..first
            };
            let Some(hit) = one(&end)? else {
                return Ok(None);
            };
            let time = hit.and_then(|e| e.timestamp);
            match from {
                End::Newest => tally.last = time,
                End::Oldest => tally.first = time,
            }
        }
        tally.best = None;
        let asked = |r: &Role| filter.roles.is_empty() || filter.roles.contains(r);
        for role in BEST_FIRST.into_iter().filter(asked) {
            let narrowed = filter.with_roles(vec![role]);
            let latest = Wanted {
                filter: &narrowed,
                texts: HitTexts::Kept,
                ..first
            };
            let Some(hit) = one(&latest)? else {
                return Ok(None);
            };
            if hit.is_some() {
                tally.best = hit;
                break;
            }
        }
    }
    // A role with hits among those counted that the projection then gives none of (the
    // session changed in between) sends the session to a decode.
    match tally.best.is_some() || tally.hits == 0 {
        true => Ok(Some(summed(file, tally, meta))),
        false => Ok(None),
    }
}

/// The sessions of a session-level search a page shows, summed up, and how the search was
/// answered.
#[derive(Debug, Default)]
pub struct Gathered {
    /// One summary per session with a hit, ordered by the latest hit, then by qualified id: at
    /// least the page's `limit` and one more from its end when there are so many, and any
    /// others that were read on the way.
    pub summaries: Vec<SessionSummary>,
    /// Sessions that could not be loaded and were skipped.
    pub skipped: Vec<HistoryError>,
    /// How many sessions a search projection answered for, and how many were read.
    pub coverage: Coverage,
}

/// Sums up the sessions of `sessions` with a hit of `filter` that a page of `limit` from
/// `from`'s end of the order by latest hit shows, and the one after it, on every core.
///
/// It rules sessions out as a search does (what a projection knows, then the raw bytes), and
/// bounds each other session's hit times by what the projection knows or by its raw candidate
/// lines. Sessions are then summed up from the most promising bound on (the latest a last hit
/// can be, from the newest end; the earliest a hit can be, from the oldest), until `limit` + 1
/// are in hand and no bound left can reach past them. A session's summary is exact: its hits
/// are counted up to [`COUNTED`] (from the lines a projection locates, from the newest, or
/// decoded), and only its best hit keeps its text.
pub fn gather(
    corpus: &Corpus,
    sessions: &[SessionFile],
    filter: &Filter,
    all_branches: bool,
    projection: Option<&dyn Projection>,
    (from, limit): (End, usize),
) -> Gathered {
    let raw = RawFilter::new(filter.queries());
    let known: Option<Vec<Known>> = projection.map(|p| p.known(corpus, sessions, filter));
    let known = |i: usize| known.as_ref().and_then(|k| k.get(i)).copied();
    // A span the projection knows is taken as it is; only the other sessions are read, on
    // every core.
    let (mut order, mut unknown) = (Vec::new(), Vec::new());
    for i in 0..sessions.len() {
        match known(i) {
            Some(Known::NoHit) => {}
            Some(Known::Within { first, last, .. }) => {
                let (first, last) = (first.map(|t| t.0), last.map(|t| t.0));
                order.push((Span { first, last }, i));
            }
            Some(Known::Unknown | Known::Unindexable) | None => unknown.push(i),
        }
    }
    order.extend(filter_map(&unknown, |&i| {
        Some((hit_span(corpus, &sessions[i], &raw)?, i))
    }));
    // Sessions whose bounds tie are taken in their own order.
    match from {
        End::Newest => order.sort_unstable_by_key(|&(span, i)| (std::cmp::Reverse(span.last), i)),
        End::Oldest => order.sort_unstable_by_key(|&(span, i)| (span.first, i)),
    }
    let sum_up = |i: usize| -> Result<Option<SessionSummary>, HistoryError> {
        let file = &sessions[i];
        if let (Some(Known::Within { .. }), Some(p)) = (known(i), projection) {
            if let Some(summary) = indexed(corpus, p, file, filter, all_branches)? {
                return Ok(summary);
            }
        }
        let keep = |e: &Event| match filter.matches(e) {
            true => Keep::Full,
            false => Keep::Drop,
        };
        let test = |line: &[u8]| raw.may_match_slice(line);
        let line_test: Option<LineTest<'_>> =
            (!raw.passes_everything()).then_some(&test as LineTest<'_>);
        corpus
            .load(file, &keep, all_branches, line_test)
            .map(|loaded| summary(file, loaded.events, loaded.meta))
    };
    let mut gathered = Gathered {
        coverage: coverage(sessions.len(), known),
        ..Gathered::default()
    };
    let want = limit.saturating_add(1);
    let mut next = 1;
    ordered_map(
        &order,
        |&(_, i)| sum_up(i),
        |_, result| {
            match result {
                Ok(Some(s)) => gathered.summaries.push(s),
                Ok(None) => {}
                Err(e) => gathered.skipped.push(e),
            }
            let done = order
                .get(next)
                .is_none_or(|(span, _)| beyond(&mut gathered.summaries, from, want, span));
            next += 1;
            !done
        },
    );
    sort(&mut gathered.summaries);
    gathered
}

/// Whether `want` of `summaries` reach further towards `from`'s end than any latest hit of a
/// session whose hits lie within `span` can (ties go on: the qualified id would decide them).
fn beyond(summaries: &mut [SessionSummary], from: End, want: usize, span: &Span) -> bool {
    if summaries.len() < want {
        return false;
    }
    let mut ranks: Vec<Rank> = summaries.iter().map(|s| s.last_hit.map(|t| t.0)).collect();
    match from {
        End::Newest => {
            let at = ranks.len() - want;
            *ranks.select_nth_unstable(at).1 > span.last
        }
        // A session's latest hit is no earlier than the earliest any of its hits can be.
        End::Oldest => *ranks.select_nth_unstable(want - 1).1 < span.first,
    }
}

/// The part of `text` around the first match of `filter`, at most [`SNIPPET`] bytes of it
/// (markers aside), with `…` where text was left out; and where the match starts in it.
pub fn snippet(text: &str, filter: &Filter) -> (String, Option<usize>, bool) {
    let at = filter.first_match(text);
    let cut = around(text, at.unwrap_or(0));
    let focus = at.map(|at| cut.moved(at));
    (cut.text, focus, cut.cut)
}

/// A part of a text cut around a place in it ([`around`]).
pub(crate) struct Around {
    /// The part, with `…` where text was left out.
    pub text: String,
    /// Where it starts and ends in the text.
    pub start: usize,
    pub end: usize,
    /// Whether text was left out.
    pub cut: bool,
    /// Where the text's `start` lands in the part (after a leading `…`).
    shift: usize,
}

impl Around {
    /// Where byte `at` of the text (within the part) lands in the part.
    pub fn moved(&self, at: usize) -> usize {
        at - self.start + self.shift
    }
}

/// The part of `text` that keeps byte `at` in view: [`LEAD`] bytes before it, at most
/// [`SNIPPET`] bytes in all, on character boundaries.
pub(crate) fn around(text: &str, at: usize) -> Around {
    let mut start = at.saturating_sub(LEAD);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut end = (start + SNIPPET).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push_str(ELLIPSIS);
    }
    let shift = out.len();
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push_str(ELLIPSIS);
    }
    Around {
        text: out,
        start,
        end,
        cut: start > 0 || end < text.len(),
        shift,
    }
}

/// The page of a session-level search: `sessions`' hits gathered per session, ordered by the
/// latest hit, `limit` of them counted from `from`'s end (the newest by default), fitted to the
/// budget as `render` renders them. `no_sessions`: the notice that there are no sessions at all,
/// when there are none.
pub(crate) fn sessions_page(
    scope: &Scope<'_>,
    req: &ListRequest,
    filter: &Filter,
    sessions: &[SessionFile],
    no_sessions: Option<String>,
    render: &dyn RenderSessions,
) -> SessionsPage {
    // The sessions on the page and one more, each with every hit, so that the counts are
    // exact.
    let from = req.from.unwrap_or(End::Newest);
    let listing = gather(
        scope.corpus,
        sessions,
        filter,
        req.all_branches,
        scope.projection,
        (from, req.limit),
    );
    let mut notices: Vec<String> = notice::skipped(&listing.skipped).into_iter().collect();
    let is_empty = no_sessions.is_some();
    notices.extend(no_sessions);
    let coverage = listing.coverage;
    if scope.projection.is_some() && coverage.unindexed() > 0 {
        notices.push(notice::unindexed(coverage.unindexed()));
    }
    let mut summaries = listing.summaries;
    let matched = summaries.len();
    let kept = req.limit.min(matched);
    match from {
        End::Newest => drop(summaries.drain(..matched - kept)),
        End::Oldest => summaries.truncate(kept),
    }
    let base = req.recipe();
    let entries: Vec<SessionMatch> = summaries
        .into_iter()
        .map(|s| session_match(scope, s, filter, &base))
        .collect();
    let mut page = SessionsPage {
        schema_version: SCHEMA_VERSION,
        sessions: Vec::new(),
        has_older: from == End::Newest && kept < matched,
        has_newer: from == End::Oldest && kept < matched,
        notice: notice::joined(&notices),
        coverage,
        budget_cut: false,
        no_sessions: is_empty,
    };
    fit_sessions(&mut page, entries, render, req.budget, from);
    page
}

/// One session's entry of a session-level search: its best hit cut to a snippet, the
/// recipes that list its hits and read that one, and how to resume it.
fn session_match(
    scope: &Scope<'_>,
    s: SessionSummary,
    filter: &Filter,
    base: &Recipe,
) -> SessionMatch {
    let file = SessionFile {
        key: s.session.clone(),
        path: s.path.clone(),
        modified: 0,
        size: 0,
        fingerprint: None,
    };
    let qualified = s.session.to_string();
    let path = s.path.display().to_string();
    let (text, focus, cut) = snippet(&s.best.text, filter);
    let (seq, part) = s.best.position();
    let mut best = Item::new(qualified.clone(), Some(path.clone()), s.best).about(&s.meta);
    best.event.text = text;
    best.focus = focus;
    best.truncated = cut;
    let resume = scope
        .corpus
        .source(&file.key.harness)
        .and_then(|source| source.resume(&file));
    SessionMatch {
        session: qualified.clone(),
        path: Some(path),
        cwd: s.meta.cwd.clone(),
        git_branch: s.meta.git_branch.clone(),
        title: s.meta.title.clone(),
        hits: s.hits,
        more_hits: s.more,
        first_hit: s.first_hit,
        last_hit: s.last_hit,
        best,
        list: Recipe {
            session: Some(qualified.clone()),
            ..base.clone()
        },
        read: Recipe {
            session: Some(qualified),
            seq: Some(seq),
            part: Some(part),
            ..Recipe::default()
        },
        resume,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(session: &str, seq: u64, role: Role, time: Option<i64>) -> Hit {
        Hit {
            session: SessionKey::new("claude", session),
            path: format!("/{session}.jsonl").into(),
            event: Event {
                seq,
                part: 0,
                role,
                kind: "message".into(),
                timestamp: time.map(Timestamp),
                text: format!("{session} {seq}"),
                visible: matches!(role, Role::User | Role::Assistant),
                tool: None,
                on_active_branch: None,
            },
            meta: SessionMeta::default(),
            location: None,
            session_events: None,
            last_activity: None,
        }
    }

    #[test]
    fn every_session_once_with_all_its_hits_ordered_by_its_latest() {
        let hits = vec![
            hit("b", 1, Role::Tool, Some(50)),
            hit("a", 3, Role::Tool, Some(10)),
            hit("b", 2, Role::User, Some(20)),
            hit("a", 5, Role::Assistant, Some(90)),
            hit("c", 1, Role::Context, None),
            hit("b", 4, Role::User, Some(30)),
        ];
        let got = summarize(hits);
        let ids: Vec<&str> = got.iter().map(|s| s.session.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a"]);
        let b = &got[1];
        assert_eq!(
            (b.hits, b.first_hit, b.last_hit),
            (3, Some(Timestamp(20)), Some(Timestamp(50)))
        );
        assert_eq!(b.best.seq, 4, "the latest prompt beats a later tool hit");
        assert_eq!(got[2].best.seq, 5);
        assert_eq!((got[0].first_hit, got[0].last_hit), (None, None));
    }

    #[test]
    fn a_page_of_sessions_is_settled_only_when_no_bound_left_can_reach_it() {
        let hits = vec![
            hit("a", 1, Role::User, Some(10)),
            hit("b", 1, Role::User, Some(20)),
            hit("c", 1, Role::User, Some(30)),
        ];
        let mut summaries = summarize(hits);
        let span = |first, last| Span { first, last };
        let settled = |s: &mut [SessionSummary], from, span| beyond(s, from, 2, &span);
        // From the newest end, two latest hits at 30 and 20: a session whose hits are all at 19 or
        // before cannot reach the page; one with a hit at 20 might, by its id.
        assert!(settled(
            &mut summaries,
            End::Newest,
            span(Some(1), Some(19))
        ));
        assert!(!settled(
            &mut summaries,
            End::Newest,
            span(Some(1), Some(20))
        ));
        assert!(settled(&mut summaries, End::Newest, span(None, None)));
        // From the oldest end, latest hits at 10 and 20: a session whose hits start at 15 may
        // have its latest there, however late its candidates go.
        assert!(!settled(
            &mut summaries,
            End::Oldest,
            span(Some(15), Some(40))
        ));
        assert!(settled(
            &mut summaries,
            End::Oldest,
            span(Some(21), Some(40))
        ));
        // Untimed hits come first: a session that may have only those can always reach the
        // oldest end's page.
        assert!(!settled(&mut summaries, End::Oldest, span(None, Some(40))));
        assert!(
            !settled(&mut summaries[..1], End::Newest, span(Some(1), Some(2))),
            "too few"
        );
    }

    #[test]
    fn a_snippet_keeps_the_match_in_view() {
        let filter = Filter::new(&["NEEDLE".into()], vec![], None, None);
        let text = format!("{}needle{}", "é".repeat(300), "x".repeat(1000));
        let (s, focus, cut) = snippet(&text, &filter);
        assert!(cut && s.starts_with(ELLIPSIS) && s.ends_with(ELLIPSIS));
        assert!(s.len() <= SNIPPET + 2 * ELLIPSIS.len());
        assert_eq!(&s[focus.unwrap()..focus.unwrap() + 6], "needle");
        let (short, focus, cut) = snippet("a needle", &filter);
        assert_eq!((short.as_str(), focus, cut), ("a needle", Some(2), false));
    }
}
