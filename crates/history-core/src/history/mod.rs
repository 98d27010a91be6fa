//! The one entry every front end calls: a [`ListRequest`] or [`ReadRequest`] in, a finished page
//! out — selector resolved, events chosen, runs folded, the budget applied, recipes written.
//! The CLI, an MCP server or an embedder differ only in how they parse requests and render pages.

use std::path::PathBuf;

use crate::choose::Filter;
use crate::choose::Place;
use crate::choose::{resolve, Selector};
use crate::corpus::{Corpus, Keep, Texts};
use crate::error::HistoryError;
use crate::model::End;
use crate::model::Timestamp;
use crate::model::{Bound, Cursor};
use crate::model::{Event, Role, SessionFile, SessionKey};
use crate::page::budget::{fit_list, fit_read, MIN_BUDGET};
use crate::page::{
    Coverage, FoldedRun, Item, ListPage, ReadPage, Recipe, Render, RenderSessions, SessionMatch,
    SessionsPage, SCHEMA_VERSION,
};
use crate::query::{browse, BrowseRequest};
use crate::query::{overview, representative};
use crate::query::{search, Listing, Projection, RepresentativeCache, SearchRequest};
use crate::query::{Document, ExportRequest};
use crate::source::LineTest;
use crate::source::{Env, Harness};
use history_raw::RawFilter;

/// How many items a page holds when the request does not say.
pub const DEFAULT_LIMIT: usize = 20;

/// What `list` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListRequest {
    /// The selector; `None`: the current session, else every session.
    pub session: Option<String>,
    /// Literal texts, any of which matches.
    pub queries: Vec<String>,
    /// Only these roles (empty: every role).
    pub roles: Vec<Role>,
    /// Only events at or after this time.
    pub since: Option<Timestamp>,
    /// Only events before this time.
    pub until: Option<Timestamp>,
    /// Only events with a smaller seq (one session only).
    pub before_seq: Option<u64>,
    /// Only events with a larger seq (one session only).
    pub after_seq: Option<u64>,
    /// The end the page starts from; `None`: the default for the request.
    pub from: Option<End>,
    /// How many items at most.
    pub limit: usize,
    /// How many bytes the rendered output may take.
    pub budget: usize,
    /// Every branch of a branched session, each event marked.
    pub all_branches: bool,
    /// Only hits before this place (a search of many sessions).
    pub before: Option<Cursor>,
    /// Only hits after this place (a search of many sessions); the page then starts at the
    /// oldest end.
    pub after: Option<Cursor>,
    /// Only sessions that ran in this directory or below it; with no selector, every such
    /// session rather than the current one.
    pub cwd: Option<Place>,
}

impl Default for ListRequest {
    fn default() -> ListRequest {
        ListRequest {
            session: None,
            queries: Vec::new(),
            roles: Vec::new(),
            since: None,
            until: None,
            before_seq: None,
            after_seq: None,
            from: None,
            limit: DEFAULT_LIMIT,
            budget: crate::page::budget::DEFAULT_BUDGET,
            all_branches: false,
            before: None,
            after: None,
            cwd: None,
        }
    }
}

/// What `read` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRequest {
    /// The selector of one session; `None`: the current session.
    pub session: Option<String>,
    /// The event's seq.
    pub seq: u64,
    /// The part of its line.
    pub part: u32,
    /// Where in its text to start, in characters.
    pub offset_chars: usize,
    /// How many bytes the rendered output may take.
    pub budget: usize,
}

/// Every source an invocation reads, who is asking, and what may be remembered.
pub struct History {
    corpus: Corpus,
    projection: Option<Box<dyn Projection>>,
    /// Each harness and the root it reads, for the notice when there is nothing to list.
    roots: Vec<(String, Option<PathBuf>)>,
    current: Option<SessionKey>,
    /// The variable that named `current`, when the environment named it.
    current_source: Option<String>,
    host: Option<String>,
    cache: Option<Box<dyn RepresentativeCache>>,
    empty_hint: Option<String>,
    locations: bool,
    resumes: bool,
}

impl History {
    /// The sources of `corpus`, with nobody's current session and no cache.
    pub fn new(corpus: Corpus) -> History {
        History {
            roots: Vec::new(),
            corpus,
            projection: None,
            current: None,
            current_source: None,
            host: None,
            cache: None,
            empty_hint: None,
            locations: true,
            resumes: true,
        }
    }

    /// A source for every harness of `registry` whose root is known: `flag` gives a root the
    /// caller named, else each harness's own rule finds it ([`Harness::root`]).
    pub fn from_registry(
        registry: &[&Harness],
        flag: &dyn Fn(&Harness) -> Option<PathBuf>,
        env: Env<'_>,
    ) -> History {
        let roots: Vec<(&Harness, Option<PathBuf>)> = registry
            .iter()
            .map(|h| (*h, h.root(flag(h), env)))
            .collect();
        let sources = roots
            .iter()
            .filter_map(|(h, root)| Some((h.open)(root.clone()?)))
            .collect();
        History {
            roots: roots
                .into_iter()
                .map(|(h, root)| (h.name.to_string(), root))
                .collect(),
            ..History::new(Corpus::new(sources))
        }
    }

    /// The session the caller works in, and the harness tried first for unqualified ids
    /// (the current session's, else `host`).
    pub fn with_current(mut self, current: Option<SessionKey>, host: Option<String>) -> History {
        self.host = current.as_ref().map(|k| k.harness.clone()).or(host);
        self.current = current;
        self
    }

    /// The environment variable that named the current session
    /// ([`crate::source::current_source`]): a list of that session then says so, and when the
    /// session no longer exists lists every session instead of failing on an id nobody typed.
    pub fn with_current_source(mut self, variable: Option<String>) -> History {
        self.current_source = variable;
        self
    }

    /// A cache for the unfiltered overview.
    pub fn with_cache(mut self, cache: Option<Box<dyn RepresentativeCache>>) -> History {
        self.cache = cache;
        self
    }

    /// A search projection that wildcard searches consult before reading files.
    pub fn with_projection(mut self, projection: Option<Box<dyn Projection>>) -> History {
        self.projection = projection;
        self
    }

    /// What to add to the notice when there are no sessions at all (how to try a demo, say).
    pub fn with_empty_hint(mut self, hint: impl Into<String>) -> History {
        self.empty_hint = Some(hint.into());
        self
    }

    /// Whether items say where their lines are and how to reopen their sessions (the default);
    /// a front end that shows neither can spare the reads that takes.
    pub fn with_locations(mut self, locations: bool) -> History {
        self.locations = locations;
        self
    }

    /// Whether items say how to reopen their sessions even where they do not say where their
    /// lines are ([`History::with_locations`] off): that takes no more than a look at each
    /// session's file, not a read up to its lines.
    pub fn with_resumes(mut self, resumes: bool) -> History {
        self.resumes = resumes;
        self
    }

    /// Fills in the items' locations and resume commands, as far as asked for.
    fn fill(&self, items: &mut [Item], files: &[&SessionFile]) {
        if self.locations || self.resumes {
            crate::page::fill_locations(&self.corpus, items, files, self.locations);
        }
    }

    /// The sources.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The caller's current session, if known.
    pub fn current(&self) -> Option<&SessionKey> {
        self.current.as_ref()
    }

    /// Answers `list`: the page, fitted to the budget as `render` renders it.
    pub fn list(&self, req: &ListRequest, render: &dyn Render) -> Result<ListPage, HistoryError> {
        check_budget(req.budget)?;
        if req.limit == 0 {
            return Err(HistoryError::usage(
                "--limit must be at least 1: a page of no items answers nothing",
            ));
        }
        let mut roles = Vec::new();
        for role in &req.roles {
            if !roles.contains(role) {
                roles.push(*role);
            }
        }
        if let (Some(since), Some(until)) = (req.since, req.until) {
            if since >= until {
                return Err(HistoryError::usage(format!(
                    "--since ({since}) must be before --until ({until}): nothing lies between"
                )));
            }
        }
        let filter = Filter::new(&req.queries, roles, req.since, req.until);
        let cursors = req.before.is_some() || req.after.is_some();
        if req.before.is_some() && req.after.is_some() {
            return Err(HistoryError::InvalidBounds {
                message: "--before and --after cannot be used together".into(),
            });
        }
        let (target, said) = self.target(req.session.as_deref(), req.cwd.as_ref())?;
        match target {
            Target::One { .. } if cursors => Err(HistoryError::InvalidBounds {
                message: "--before/--after continue a search of many sessions; within one session use --before-seq/--after-seq".into(),
            }),
            Target::Many(_) if cursors && !filter.is_search() => Err(HistoryError::InvalidBounds {
                message: "--before/--after continue a search (--query); the overview of sessions has no such places".into(),
            }),
            Target::One { file, implicit } => {
                if req.before_seq.is_some() && req.after_seq.is_some() {
                    return Err(HistoryError::InvalidBounds {
                        message: "--before-seq and --after-seq cannot be used together".into(),
                    });
                }
                self.one_session(req, &filter, file, implicit, said, render)
            }
            Target::Many(sessions) => {
                if req.before_seq.is_some() || req.after_seq.is_some() {
                    return Err(HistoryError::InvalidBounds {
                        message: "--before-seq/--after-seq need one session: seqs from different sessions cannot define a common range".into(),
                    });
                }
                let from = many_from(req);
                let listing = self.many_sessions(req, &filter, &sessions, from);
                let no_sessions = sessions.is_empty() && req.session.is_none() && req.cwd.is_none();
                Ok(self.fit_many(listing, &filter, req, render, no_sessions, said))
            }
        }
    }

    /// Answers a session-level search (`list --sessions`): one entry per session with a hit,
    /// ordered by its latest hit, `limit` of them counted from `from`'s end (the newest by
    /// default), fitted to the budget as `render` renders them. Every session with a hit is
    /// counted, and so is every hit of each. Without a selector it searches every session: a
    /// session-level search of the one session the caller works in would say little.
    pub fn sessions(
        &self,
        req: &ListRequest,
        render: &dyn RenderSessions,
    ) -> Result<SessionsPage, HistoryError> {
        check_budget(req.budget)?;
        let filter = Filter::new(&req.queries, req.roles.clone(), req.since, req.until);
        if !filter.is_search() {
            return Err(HistoryError::usage(
                "--sessions needs --query: it sums up each session's hits",
            ));
        }
        if req.before_seq.is_some() || req.after_seq.is_some() {
            return Err(HistoryError::InvalidBounds {
                message: "--sessions sums up whole sessions: --before-seq/--after-seq do not apply"
                    .into(),
            });
        }
        if req.before.is_some() || req.after.is_some() {
            return Err(HistoryError::InvalidBounds {
                message: "--sessions sums up whole sessions: --before/--after do not apply".into(),
            });
        }
        if let (Some(since), Some(until)) = (req.since, req.until) {
            if since >= until {
                return Err(HistoryError::usage(format!(
                    "--since ({since}) must be before --until ({until}): nothing lies between"
                )));
            }
        }
        let selector = req.session.as_deref().unwrap_or("*");
        let sessions = match self.target(Some(selector), req.cwd.as_ref())?.0 {
            Target::Many(sessions) => sessions,
            Target::One { file, .. } => vec![file],
        };
        // Every session and every hit of each, so that the set of sessions and the counts are
        // exact.
        let listing = crate::query::sessions::gather(
            &self.corpus,
            &sessions,
            &filter,
            req.all_branches,
            self.projection.as_deref(),
        );
        let from = req.from.unwrap_or(End::Newest);
        let mut notices: Vec<String> = skipped_notice(&listing.skipped).into_iter().collect();
        let no_sessions = sessions.is_empty() && req.session.is_none();
        if no_sessions {
            notices.push(self.no_sessions_notice());
        }
        if self.projection.is_some() && listing.scanned > 0 {
            notices.push(unindexed_notice(listing.scanned));
        }
        let coverage = Coverage {
            from_index: listing.from_index,
            scanned: listing.scanned,
            unindexable: listing.unindexable,
            appended: listing.appended,
        };
        let mut summaries = listing.summaries;
        let matched = summaries.len();
        let kept = req.limit.min(matched);
        match from {
            End::Newest => drop(summaries.drain(..matched - kept)),
            End::Oldest => summaries.truncate(kept),
        }
        let base = recipe_base(req);
        let mut entries: Vec<SessionMatch> = summaries
            .into_iter()
            .map(|s| self.session_match(s, &filter, &base))
            .collect();
        let mut page = SessionsPage {
            schema_version: SCHEMA_VERSION,
            sessions: Vec::new(),
            has_older: from == End::Newest && kept < matched,
            has_newer: from == End::Oldest && kept < matched,
            notice: notice_of(&notices),
            coverage,
            budget_cut: true,
            no_sessions,
        };
        // The frame is measured with the footer a cut page gets, whether it is cut or not.
        let frame = render.sessions(&page).len() + crate::page::budget::FRAME_SLACK;
        let room = req.budget.saturating_sub(frame);
        let admitted = crate::page::budget::admit(
            &mut entries,
            from,
            room,
            |s| render.session(s).len(),
            |_, _| false,
        );
        page.sessions = entries;
        page.has_older |= admitted.dropped_older;
        page.has_newer |= admitted.dropped_newer;
        page.budget_cut = admitted.dropped_older || admitted.dropped_newer;
        Ok(page)
    }

    /// One session's entry of a session-level search: its best hit cut to a snippet, the
    /// recipes that list its hits and read that one, and how to resume it.
    fn session_match(
        &self,
        s: crate::query::sessions::SessionSummary,
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
        let (text, focus, cut) = crate::query::sessions::snippet(&s.best.text, filter);
        let (seq, part) = s.best.position();
        let mut best = Item::new(qualified.clone(), Some(path.clone()), s.best).about(&s.meta);
        best.event.text = text;
        best.focus = focus;
        best.truncated = cut;
        let resume = self
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

    /// Answers `read`: one event from `offset_chars` on, cut to the budget as `render` renders
    /// it, with where to continue.
    pub fn read(&self, req: &ReadRequest, render: &dyn Render) -> Result<ReadPage, HistoryError> {
        check_budget(req.budget)?;
        let selector = req.session.as_deref();
        if selector.is_some_and(|s| s.contains('*')) {
            return Err(HistoryError::InvalidSession {
                message: "read needs one session; take a session and seq from a search hit instead of a wildcard".into(),
            });
        }
        if selector.is_none() && self.current.is_none() {
            return Err(HistoryError::usage(
                "read needs --session (no current session is known)",
            ));
        }
        let (text, implicit) = match (selector, &self.current) {
            (Some(s), _) => (s.to_string(), false),
            (None, Some(cur)) => (cur.to_string(), true),
            (None, None) => ("*".to_string(), false),
        };
        let target = self
            .select(&text, implicit, None)
            .map_err(|e| self.explain_current(e, implicit))?;
        let Target::One { file, implicit } = target else {
            return Err(HistoryError::InvalidSession {
                message: "read needs one session".into(),
            });
        };
        let seq = req.seq;
        let keep = |e: &Event| {
            if e.seq == seq {
                Keep::Full
            } else {
                Keep::Drop
            }
        };
        let loaded = self.corpus.load(&file, &keep, true, None)?;
        let parts = loaded.events.len() as u32;
        let event = loaded.events.into_iter().find(|e| e.part == req.part);
        let canonical = file.key.to_string();
        let session = (!implicit).then(|| canonical.clone());
        let mut item = event.map(|e| {
            Item::new(canonical.clone(), Some(file.path.display().to_string()), e)
                .about(&loaded.meta)
        });
        if let Some(item) = item.as_mut() {
            self.fill(std::slice::from_mut(item), &[&file]);
        }
        let total_chars = item.as_ref().map_or(0, |i| i.event.text.chars().count());
        if item.is_some() && req.offset_chars > total_chars {
            return Err(HistoryError::usage(format!(
                "--offset-chars {} is past the end of the event's text ({total_chars} characters)",
                req.offset_chars
            )));
        }
        if let Some(item) = item.as_mut() {
            item.event.text = item.event.text.chars().skip(req.offset_chars).collect();
        }
        let mut page = ReadPage {
            schema_version: SCHEMA_VERSION,
            session: canonical,
            item,
            parts,
            offset_chars: req.offset_chars,
            next_offset_chars: None,
            next: None,
            neighborhood: Recipe {
                session: session.clone(),
                after_seq: Some(seq.saturating_sub(10)),
                ..Recipe::default()
            },
            notice: notice_of(&loaded.notices),
            implicit,
        };
        if let Some(shown) = fit_read(&mut page, render, req.budget) {
            let next = req.offset_chars + shown;
            page.next = None;
            if next < total_chars {
                page.next_offset_chars = Some(next);
                page.next = Some(Recipe {
                    session,
                    seq: Some(seq),
                    part: Some(req.part),
                    offset_chars: Some(next),
                    ..Recipe::default()
                });
            }
        }
        Ok(page)
    }

    /// Answers `export`: the whole session, streamed into `doc` with no budget
    /// ([`crate::export`]); how many events it held.
    pub fn export(
        &self,
        req: &ExportRequest,
        doc: &mut dyn Document,
    ) -> Result<usize, HistoryError> {
        let selector = req.session.as_deref();
        if selector.is_some_and(|s| s.contains('*')) {
            return Err(HistoryError::InvalidSession {
                message:
                    "export writes one session; take a session from a list instead of a wildcard"
                        .into(),
            });
        }
        let text = match (selector, &self.current) {
            (Some(s), _) => s.to_string(),
            (None, Some(current)) => current.to_string(),
            (None, None) => {
                return Err(HistoryError::usage(
                    "export needs --session (no current session is known)",
                ))
            }
        };
        let target = self
            .select(&text, selector.is_none(), None)
            .map_err(|e| self.explain_current(e, selector.is_none()))?;
        let Target::One { file, .. } = target else {
            return Err(HistoryError::InvalidSession {
                message: "export writes one session".into(),
            });
        };
        crate::query::export(&self.corpus, &file, req.all_branches, doc)
    }

    /// An unknown current session that the environment named, said with its variable: the
    /// person never typed that id.
    fn explain_current(&self, e: HistoryError, implicit: bool) -> HistoryError {
        match (e, &self.current_source) {
            (HistoryError::UnknownSession { selector }, Some(var)) if implicit => {
                HistoryError::UnknownSession {
                    selector: format!(
                        "{selector} (the current session, named by {var}; name one with --session)"
                    ),
                }
            }
            (e, _) => e,
        }
    }

    /// What `list` is about, and what to say of it: a current session the environment named is
    /// named back with its variable, and one that no longer exists gives way to every session.
    fn target(
        &self,
        selector: Option<&str>,
        place: Option<&Place>,
    ) -> Result<(Target, Option<String>), HistoryError> {
        let current = match (selector, &self.current, place) {
            (Some(s), _, _) => return Ok((self.select(s, false, place)?, None)),
            // Sessions asked for by place are every session there, not the caller's own.
            (None, None, _) | (None, Some(_), Some(_)) => {
                return Ok((self.select("*", false, place)?, None))
            }
            (None, Some(current), None) => current.to_string(),
        };
        let Some(var) = &self.current_source else {
            return Ok((self.select(&current, true, None)?, None));
        };
        match self.select(&current, true, None) {
            Ok(target) => Ok((
                target,
                Some(format!(
                    "listing the current session {current} (named by {var}); --session '*' lists every session"
                )),
            )),
            Err(HistoryError::UnknownSession { .. }) => Ok((
                self.select("*", false, None)?,
                Some(format!(
                    "the current session {current} (named by {var}) was not found: listing every session (--session '*')"
                )),
            )),
            Err(e) => Err(e),
        }
    }

    /// What a selector is about: one session, or many; with `place`, only sessions there.
    fn select(
        &self,
        text: &str,
        implicit: bool,
        place: Option<&Place>,
    ) -> Result<Target, HistoryError> {
        let harnesses = self.corpus.harnesses();
        let there = |file: &SessionFile| {
            place.is_none_or(|place| {
                self.corpus
                    .source(&file.key.harness)
                    .and_then(|source| source.cwd(file))
                    .is_some_and(|cwd| place.contains(&cwd))
            })
        };
        match Selector::parse(text, &harnesses)? {
            Selector::Many(pattern) => {
                let matching: Vec<SessionFile> = self
                    .corpus
                    .discover_in(pattern.harness())
                    .into_iter()
                    .filter(|s| pattern.matches(&s.key))
                    .collect();
                // Each test may read a file's first lines: on every core.
                let keep = crate::corpus::parallel::map(&matching, there);
                Ok(Target::Many(
                    matching
                        .into_iter()
                        .zip(keep)
                        .filter_map(|(file, keep)| keep.then_some(file))
                        .collect(),
                ))
            }
            Selector::One { harness, id } => {
                let sessions = self.corpus.discover_in(harness.as_deref());
                let file = resolve(
                    harness.as_deref(),
                    &id,
                    &sessions,
                    self.host.as_deref(),
                    text,
                )?;
                if let Some(place) = place.filter(|_| !there(file)) {
                    return Err(HistoryError::UnknownSession {
                        selector: format!("{text} under {}", place.path().display()),
                    });
                }
                Ok(Target::One {
                    file: file.clone(),
                    implicit,
                })
            }
        }
    }

    /// A browse page of one session: dialogue items with the runs between them folded, or, with
    /// a query or a role, every matching event.
    fn one_session(
        &self,
        req: &ListRequest,
        filter: &Filter,
        file: SessionFile,
        implicit: bool,
        said: Option<String>,
        render: &dyn Render,
    ) -> Result<ListPage, HistoryError> {
        let fold = filter.queries().is_empty() && filter.roles.is_empty();
        let browse_req = BrowseRequest {
            before_seq: req.before_seq,
            after_seq: req.after_seq,
            from: req.from,
            limit: req.limit,
            fold,
        };
        // Only an item within the seq bounds can be on the page, and only a page's worth of
        // them keeps its text while the session streams by.
        let within = |e: &Event| {
            req.before_seq.is_none_or(|b| e.seq < b) && req.after_seq.is_none_or(|a| e.seq > a)
        };
        let keep = |e: &Event| match (filter.matches(e), fold && !e.visible || !within(e)) {
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
        let loaded =
            self.corpus
                .load_within(&file, &keep, req.all_branches, line_test, Some(texts))?;
        let mut browsed = browse(loaded.events, &browse_req);
        let items = browsed.items.iter_mut().map(|i| &mut i.event);
        self.corpus.refill(&file, &loaded.textless, items)?;
        let canonical = file.key.to_string();
        let base = Recipe {
            session: (!implicit).then(|| canonical.clone()),
            all_branches: req.all_branches.then_some(true),
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
                        .about(&loaded.meta);
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
            notice: notice_of(&said.into_iter().chain(loaded.notices).collect::<Vec<_>>()),
            coverage: None,
            implicit,
            no_sessions: false,
            budget_cut: false,
            resume: (self.resumes || self.locations)
                .then(|| self.corpus.source(&file.key.harness)?.resume(&file))
                .flatten(),
        };
        // The footer a cut page gets is measured with the frame, whether the page is cut or not.
        page.budget_cut = true;
        let files = vec![&file; page.items.len()];
        self.fill(&mut page.items, &files);
        // The recipes, as wide as they can come out, are measured with the frame: a renderer may
        // write them at length (a command line), and which items fit must not depend on them.
        // Only the end the budget can cut, or that lies beyond already, gets one; no recipe seq
        // is wider than the widest seq on the page.
        let widest = page
            .items
            .iter()
            .map(|i| i.event.seq)
            .chain(page.folded_after.as_ref().map(|f| f.run.last_seq))
            .chain(req.after_seq)
            .max()
            .unwrap_or(0);
        let from = browse_req.from();
        page.older = (page.has_older || from == End::Newest).then(|| Recipe {
            before_seq: Some(widest),
            ..base.clone()
        });
        page.newer = (page.has_newer || from == End::Oldest).then(|| Recipe {
            after_seq: Some(widest),
            ..base.clone()
        });
        let admitted = crate::page::budget::fit_list_framed(
            &mut page,
            render,
            req.budget,
            browse_req.from(),
            false,
            0,
        );
        page.older = None;
        page.newer = None;
        page.has_older |= admitted.dropped_older;
        page.has_newer |= admitted.dropped_newer;
        page.budget_cut = admitted.dropped_older || admitted.dropped_newer;
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
        Ok(page)
    }

    /// Hits from many sessions (a query), or their overview (none).
    fn many_sessions(
        &self,
        req: &ListRequest,
        filter: &Filter,
        sessions: &[SessionFile],
        from: End,
    ) -> Listing {
        if filter.is_search() {
            return search(
                &self.corpus,
                sessions,
                &SearchRequest {
                    filter,
                    limit: req.limit,
                    from,
                    all_branches: req.all_branches,
                    raw_prefilter: true,
                    projection: self.projection.as_deref(),
                    bound: match (&req.before, &req.after) {
                        (Some(c), _) => Some(Bound::Before(c)),
                        (None, Some(c)) => Some(Bound::After(c)),
                        (None, None) => None,
                    },
                },
            );
        }
        match (&self.cache, filter.is_empty()) {
            (Some(cache), true) => {
                let choose = |file: &SessionFile| cache.representative(&self.corpus, file);
                overview(sessions, req.limit, from, &choose)
            }
            _ => {
                let choose = |file: &SessionFile| representative(&self.corpus, file, filter);
                overview(sessions, req.limit, from, &choose)
            }
        }
    }

    fn fit_many(
        &self,
        listing: Listing,
        filter: &Filter,
        req: &ListRequest,
        render: &dyn Render,
        no_sessions: bool,
        said: Option<String>,
    ) -> ListPage {
        let from = many_from(req);
        let budget = req.budget;
        let mut notices: Vec<String> = said.into_iter().collect();
        notices.extend(skipped_notice(&listing.skipped));
        if no_sessions {
            notices.push(self.no_sessions_notice());
        }
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
            widest.push(unindexed_notice(sessions));
            if self.projection.is_some() && listing.scanned > 0 {
                shown.push(unindexed_notice(listing.scanned));
            }
        }
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
            notice: notice_of(&widest),
            coverage: coverage.map(|_| Coverage {
                from_index: sessions,
                scanned: sessions,
                unindexable: 0,
                appended: 0,
            }),
            implicit: false,
            no_sessions,
            budget_cut: false,
            resume: None,
        };
        let files: Vec<&SessionFile> = files.iter().collect();
        self.fill(&mut page.items, &files);
        if filter.is_search() {
            // The recipes and the footer, as wide as they can come out, are measured with the
            // frame: which items fit must not depend on where the page ends.
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
                ..recipe_base(req)
            };
            // The budget can only cut the end away from `from`: elsewhere a recipe comes from
            // the limit or from the bound the page was asked from.
            let older = page.has_older || req.after.is_some() || from == End::Newest;
            let newer = page.has_newer || req.before.is_some() || from == End::Oldest;
            page.older = older.then(|| recipe.clone());
            page.newer = newer.then_some(recipe);
            page.budget_cut = true;
        }
        let admitted = fit_list(&mut page, render, budget, from, true);
        page.has_older |= admitted.dropped_older;
        page.has_newer |= admitted.dropped_newer;
        page.budget_cut = admitted.dropped_older || admitted.dropped_newer;
        page.older = None;
        page.newer = None;
        if filter.is_search() {
            page_on(&mut page, req);
        }
        page.notice = notice_of(&shown);
        page.coverage = coverage;
        page
    }

    fn no_sessions_notice(&self) -> String {
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|(h, r)| match r {
                Some(r) => format!("{h}: {}", r.display()),
                None => format!("{h}: (no root: HOME is not set)"),
            })
            .collect();
        let mut notice = format!("no sessions found ({})", roots.join(", "));
        if let Some(hint) = &self.empty_hint {
            notice.push_str(". ");
            notice.push_str(hint);
        }
        notice
    }
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
    let base = recipe_base(req);
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

/// The end a page of many sessions starts from: the one asked for, else the oldest when it
/// goes on after a place, else the newest.
fn many_from(req: &ListRequest) -> End {
    let default = match req.after {
        Some(_) => End::Oldest,
        None => End::Newest,
    };
    req.from.unwrap_or(default)
}

/// A search across sessions as a recipe repeats it.
fn recipe_base(req: &ListRequest) -> Recipe {
    Recipe {
        session: Some(req.session.clone().unwrap_or_else(|| "*".into())),
        queries: Some(req.queries.clone()),
        roles: (!req.roles.is_empty()).then(|| req.roles.clone()),
        since: req.since,
        until: req.until,
        all_branches: req.all_branches.then_some(true),
        cwd: req.cwd.as_ref().map(|p| p.path().display().to_string()),
        ..Recipe::default()
    }
}

/// The session an item of a page across sessions names.
fn item_key(item: &Item) -> SessionKey {
    let (harness, id) = item.session.split_once(':').unwrap_or(("", &item.session));
    SessionKey::new(harness, id)
}

/// What `list` is about, once the selector is known.
enum Target {
    One { file: SessionFile, implicit: bool },
    Many(Vec<SessionFile>),
}

fn check_budget(budget: usize) -> Result<(), HistoryError> {
    if budget < MIN_BUDGET {
        return Err(HistoryError::usage(format!(
            "--budget must be at least {MIN_BUDGET} bytes"
        )));
    }
    Ok(())
}

/// The notice that `n` sessions were read because the search index does not hold them.
fn unindexed_notice(n: usize) -> String {
    format!(
        "{n} session{} not in the search index {} read in full",
        if n == 1 { "" } else { "s" },
        if n == 1 { "was" } else { "were" },
    )
}

fn notice_of(notices: &[String]) -> Option<String> {
    (!notices.is_empty()).then(|| notices.join("; "))
}

/// The notice that counts the sessions a wildcard result skipped, naming the first three.
fn skipped_notice(skipped: &[HistoryError]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let names: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|e| match e {
            HistoryError::HistoryUnavailable { session, reason } => format!("{session}: {reason}"),
            other => other.to_string(),
        })
        .collect();
    let one = skipped.len() == 1;
    Some(format!(
        "{} session{} could not be loaded and {} skipped ({}{})",
        skipped.len(),
        if one { "" } else { "s" },
        if one { "was" } else { "were" },
        names.join("; "),
        if skipped.len() > 3 { "; …" } else { "" }
    ))
}
