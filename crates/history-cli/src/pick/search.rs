//! What answers the picker's searches: the core calls of `list`, `list --sessions` and `find`,
//! their pages made into rows. A search gives its first results as soon as the literal search
//! of the query's words has them, then the ranking; a later keystroke stops it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use history_core::{Filter, FindRequest, History, HistoryError, Item, ListRequest, Place};

use crate::index;
use crate::render::Json;
use crate::screen;

use super::state::{Answer, Ask, Mode, Row, Scope, Snippet};

/// How many sessions a list holds at most: more than a screen, few enough to stay instant.
pub const ROWS: usize = 100;

/// How many hits the first results of a query are gathered from.
const FIRST_HITS: usize = 60;

/// The budget of every page the picker asks for: it shows what fits the screen, not a budget.
const BUDGET: usize = 4 << 20;

/// How many hits of a session the preview shows.
const SNIPPETS: usize = 3;

/// Answers searches over the sessions `open` reads.
pub struct Searcher<'a> {
    /// A history over every source, as the command line's flags name them.
    pub open: &'a dyn Fn() -> Result<History, HistoryError>,
    /// Whether and where the search index is.
    pub index: &'a index::Settings,
    /// The recent sessions of the last empty query, with its scope: shown again while a query
    /// is too short to search, rather than read again for each first letter.
    pub recent: Mutex<Option<(Scope, Answer)>>,
}

/// A search's answers go to `send`; `latest` is the generation of the newest search asked,
/// so that one it superseded stops.
impl Searcher<'_> {
    /// Answers `ask`, first results then the whole answer, unless a newer search supersedes it
    /// first. Whether the index wants an update.
    pub fn answer(&self, ask: &Ask, latest: &AtomicU64, send: &mut dyn FnMut(Answer)) -> bool {
        let stop = || latest.load(Ordering::Relaxed) != ask.generation;
        let (more, mut stale) = self.first(ask, send);
        if !more || stop() {
            return stale;
        }
        match self.history(true) {
            Ok(history) => stale |= self.ranker().whole(history, ask, &stop, send),
            Err(e) => send(Answer {
                generation: ask.generation,
                rows: Vec::new(),
                done: true,
                status: format!("error: {e}"),
            }),
        }
        stale
    }

    /// What answers the whole of a search, on a thread of its own.
    pub fn ranker(&self) -> Ranker<'_> {
        Ranker { index: self.index }
    }

    /// Answers `ask` as far as it is quick: the recent sessions for an empty query (or one too
    /// short to search), else the first results. Whether the whole answer is still to come.
    pub fn first(&self, ask: &Ask, send: &mut dyn FnMut(Answer)) -> (bool, bool) {
        let mut stale = false;
        let said = |e: HistoryError| Answer {
            generation: ask.generation,
            rows: Vec::new(),
            done: true,
            status: format!("error: {e}"),
        };
        if ask.text.is_empty() {
            let answer = self.overview(ask);
            if let Ok(a) = &answer {
                *self.recent.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((ask.scope.clone(), a.clone()));
            }
            send(answer.unwrap_or_else(said));
            return (false, false);
        }
        // A word the index cannot locate (`ci`) would be a scan of every session for each
        // keystroke: the recent sessions stay until a word is long enough.
        if !ask.text.split_whitespace().any(searchable) {
            let recent = self
                .recent
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let mut answer = match recent {
                Some((scope, a)) if scope == ask.scope => Answer {
                    generation: ask.generation,
                    ..a
                },
                _ => self.overview(ask).unwrap_or_else(said),
            };
            answer.status = format!("{} · type a longer word to search", answer.status);
            send(answer);
            return (false, false);
        }
        let first_queries: Vec<String> = match ask.mode {
            Mode::Literal => vec![ask.text.clone()],
            // The literal search of each word is quick, through the index; the ranking waits
            // for every hit.
            Mode::Ranked => ask
                .text
                .split_whitespace()
                .filter(|w| searchable(w))
                .map(str::to_string)
                .collect(),
        };
        match self.first_results(ask, first_queries, &mut stale) {
            Ok(Some(a)) => send(a),
            Ok(None) => {}
            Err(e) => {
                send(said(e));
                return (false, stale);
            }
        }
        (true, stale)
    }

    /// A history over every source, with the index for a search.
    pub fn history(&self, search: bool) -> Result<History, HistoryError> {
        let projection = search.then(|| self.index.projection()).flatten();
        Ok((self.open)()?
            .with_locations(false)
            .with_resumes(true)
            .with_projection(projection))
    }

    /// The recent sessions, newest first.
    fn overview(&self, ask: &Ask) -> Result<Answer, HistoryError> {
        let page = self
            .history(false)?
            .list(&request(ask, vec![], ROWS), &Json)?;
        let rows: Vec<Row> = page.items.iter().rev().map(overview_row).collect();
        Ok(Answer {
            generation: ask.generation,
            status: format!("{} recent session{}", rows.len(), plural(rows.len())),
            rows,
            done: true,
        })
    }

    /// The sessions of the newest literal hits of `queries`, newest first; `None` when there
    /// are none (the ranking may still find some, as stems).
    fn first_results(
        &self,
        ask: &Ask,
        queries: Vec<String>,
        stale: &mut bool,
    ) -> Result<Option<Answer>, HistoryError> {
        let filter = Filter::new(&queries, Vec::new(), None, None);
        let req = request(ask, queries, FIRST_HITS);
        let page = self.history(true)?.list(&req, &Json)?;
        *stale |= page.coverage.is_some_and(|c| c.stale());
        if page.items.is_empty() {
            return Ok(None);
        }
        let mut rows: Vec<Row> = Vec::new();
        for item in page.items.iter().rev() {
            let snippet = literal_snippet(&filter, item);
            match rows.iter_mut().find(|r| r.session == item.session) {
                Some(row) => {
                    row.hits = row.hits.map(|n| n + 1);
                    row.first = item.event.timestamp.or(row.first);
                    if row.snippets.len() < SNIPPETS {
                        row.snippets.push(snippet);
                    }
                }
                None => rows.push(Row {
                    session: item.session.clone(),
                    cwd: item.cwd.clone(),
                    branch: item.git_branch.clone(),
                    about: item.title.clone().unwrap_or_else(|| snippet.text.clone()),
                    hits: Some(1),
                    events: None,
                    last: item.event.timestamp,
                    first: item.event.timestamp,
                    resume: item.resume.as_ref().map(crate::command_line::resume),
                    snippets: vec![snippet],
                    json: serde_json::to_value(item).unwrap_or_default(),
                }),
            }
        }
        let coverage = page.coverage.unwrap_or_default();
        Ok(Some(Answer {
            generation: ask.generation,
            status: format!(
                "{} session{} so far, {}…{}",
                rows.len(),
                plural(rows.len()),
                match ask.mode {
                    Mode::Ranked => "ranking",
                    Mode::Literal => "counting",
                },
                self.ranker().source(&coverage)
            ),
            rows,
            done: false,
        }))
    }
}

/// What answers the whole of a search (the ranking, or every literal hit counted): given a
/// history, it needs nothing that stays on the searching thread.
pub struct Ranker<'a> {
    /// Whether and where the search index is.
    pub index: &'a index::Settings,
}

impl Ranker<'_> {
    /// Answers the whole of `ask` over `history`, unless `stop` says a newer search superseded
    /// it. Whether the index wants an update.
    pub fn whole(
        &self,
        history: History,
        ask: &Ask,
        stop: &(dyn Fn() -> bool + Sync),
        send: &mut dyn FnMut(Answer),
    ) -> bool {
        let mut stale = false;
        let whole = match ask.mode {
            Mode::Ranked => self.ranked(history, ask, stop, &mut stale),
            Mode::Literal => self.literal(history, ask, &mut stale).map(Some),
        };
        match whole {
            Ok(Some(a)) if !stop() => send(a),
            Ok(_) => {}
            Err(e) => send(Answer {
                generation: ask.generation,
                rows: Vec::new(),
                done: true,
                status: format!("error: {e}"),
            }),
        }
        stale
    }

    /// Every session that holds some of the words, ranked as `find` ranks them.
    fn ranked(
        &self,
        history: History,
        ask: &Ask,
        stop: &(dyn Fn() -> bool + Sync),
        stale: &mut bool,
    ) -> Result<Option<Answer>, HistoryError> {
        let req = FindRequest {
            text: ask.text.clone(),
            session: Some(ask.scope.session.clone()),
            roles: Vec::new(),
            since: None,
            until: None,
            cwd: place(ask),
            limit: ROWS,
            budget: BUDGET,
            events: false,
            explain: false,
            after_rank: 0,
        };
        let page = match history.find_unless(&req, &Json, stop) {
            Ok(Some(page)) => page,
            Ok(None) => return Ok(None),
            // A question of stop words alone ranks nothing: nothing matches it.
            Err(HistoryError::Usage { .. }) => {
                return Ok(Some(Answer {
                    generation: ask.generation,
                    rows: Vec::new(),
                    done: true,
                    status: "no words to rank: type more".into(),
                }))
            }
            Err(e) => return Err(e),
        };
        *stale |= page.coverage.stale();
        let rows: Vec<Row> = page
            .sessions
            .iter()
            .flatten()
            .map(|s| Row {
                session: s.session.clone(),
                cwd: s.cwd.clone(),
                branch: s.git_branch.clone(),
                about: s
                    .title
                    .clone()
                    .or_else(|| s.prompt.clone())
                    .unwrap_or_default(),
                hits: Some(s.hits),
                events: None,
                last: s.last_hit,
                first: None,
                resume: s.resume.as_ref().map(crate::command_line::resume),
                snippets: s
                    .best
                    .iter()
                    .map(|h| Snippet {
                        seq: h.item.event.seq,
                        role: h.item.event.role,
                        time: h.item.event.timestamp,
                        text: h.item.event.text.clone(),
                        spans: h.spans.clone(),
                    })
                    .collect(),
                json: serde_json::to_value(s).unwrap_or_default(),
            })
            .collect();
        let shown = match page.matched > rows.len() {
            true => format!("{} of {} sessions", rows.len(), page.matched),
            false => format!("{} session{}", rows.len(), plural(rows.len())),
        };
        Ok(Some(Answer {
            generation: ask.generation,
            status: format!("{shown}, ranked{}", self.source(&page.coverage)),
            rows,
            done: true,
        }))
    }

    /// Every session with a literal hit, newest hit first, each hit counted.
    fn literal(
        &self,
        history: History,
        ask: &Ask,
        stale: &mut bool,
    ) -> Result<Answer, HistoryError> {
        let filter = Filter::new(std::slice::from_ref(&ask.text), Vec::new(), None, None);
        let req = request(ask, vec![ask.text.clone()], ROWS);
        let page = history.sessions(&req, &Json)?;
        *stale |= page.coverage.stale();
        let rows: Vec<Row> = page
            .sessions
            .iter()
            .rev()
            .map(|s| {
                let best = literal_snippet(&filter, &s.best);
                Row {
                    session: s.session.clone(),
                    cwd: s.cwd.clone(),
                    branch: s.git_branch.clone(),
                    about: s.title.clone().unwrap_or_else(|| best.text.clone()),
                    hits: Some(s.hits),
                    events: None,
                    last: s.last_hit,
                    first: s.first_hit,
                    resume: s.resume.as_ref().map(crate::command_line::resume),
                    snippets: vec![best],
                    json: serde_json::to_value(s).unwrap_or_default(),
                }
            })
            .collect();
        Ok(Answer {
            generation: ask.generation,
            status: format!(
                "{} session{} with a literal hit, newest first{}",
                rows.len(),
                plural(rows.len()),
                self.source(&page.coverage)
            ),
            rows,
            done: true,
        })
    }

    /// Where a search's answer came from, as the status line says it.
    pub(crate) fn source(&self, coverage: &history_core::Coverage) -> String {
        if !self.index.is_on() {
            return " · scanning (index off)".into();
        }
        match (coverage.from_index, coverage.scanned) {
            (_, 0) => " · from the index".into(),
            (0, _) => " · scanning: no index yet (notesoup-history index)".into(),
            (_, n) => format!(" · {n} session{} scanned, not yet indexed", plural(n)),
        }
    }
}

fn request(ask: &Ask, queries: Vec<String>, limit: usize) -> ListRequest {
    ListRequest {
        session: Some(ask.scope.session.clone()),
        queries,
        roles: Vec::new(),
        since: None,
        until: None,
        before_seq: None,
        after_seq: None,
        from: None,
        limit,
        budget: BUDGET,
        all_branches: false,
        before: None,
        after: None,
        cwd: place(ask),
    }
}

/// Whether a word is long enough for the index to locate: three characters, or two of a
/// script written without spaces (CJK).
fn searchable(word: &str) -> bool {
    let n = word.chars().count();
    n >= 3 || (n == 2 && word.chars().all(|c| c >= '\u{2E80}'))
}

/// The scope's directory, as `--cwd` takes it.
fn place(ask: &Ask) -> Option<Place> {
    let dir = ask.scope.cwd.as_deref()?;
    let base = std::env::current_dir().unwrap_or_else(|_| "/".into());
    Some(Place::new(dir, &base))
}

/// A row of the overview: the session's representative event.
fn overview_row(item: &Item) -> Row {
    let text = one_line(&item.event.text);
    Row {
        session: item.session.clone(),
        cwd: item.cwd.clone(),
        branch: item.git_branch.clone(),
        about: item.title.clone().unwrap_or_else(|| text.clone()),
        hits: None,
        events: item.session_events,
        last: item.last_activity.or(item.event.timestamp),
        first: item.event.timestamp,
        resume: item.resume.as_ref().map(crate::command_line::resume),
        snippets: vec![Snippet {
            seq: item.event.seq,
            role: item.event.role,
            time: item.event.timestamp,
            text: item.event.text.clone(),
            spans: Vec::new(),
        }],
        json: serde_json::to_value(item).unwrap_or_default(),
    }
}

/// A literal hit as the preview shows it, its matches highlighted.
fn literal_snippet(filter: &Filter, item: &Item) -> Snippet {
    let spans = screen::matches(filter, &item.event.text)
        .into_iter()
        .map(|r| (r.start, r.end))
        .collect();
    Snippet {
        seq: item.event.seq,
        role: item.event.role,
        time: item.event.timestamp,
        text: item.event.text.clone(),
        spans,
    }
}

/// `text` on one line, runs of white space as one space.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    for word in text.split_whitespace() {
        if out.len() > 400 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn plural(n: usize) -> &'static str {
    match n {
        1 => "",
        _ => "s",
    }
}
