//! The one entry every front end calls: a [`ListRequest`] or [`ReadRequest`] in, a finished page
//! out. The façade resolves who is asking and which sessions a request is about, then hands the
//! request to the query that builds its page ([`crate::query`]). The CLI, an MCP server or an
//! embedder differ only in how they parse requests and render pages.

use std::path::{Path, PathBuf};

use crate::choose::{is_path, resolve, resolve_path, transcript_path, PathMiss, Place, Selector};
use crate::corpus::Corpus;
use crate::error::HistoryError;
use crate::model::{SessionFile, SessionKey};
use crate::page::{FindPage, ListPage, ReadPage, Render, RenderFind, RenderSessions, SessionsPage};
use crate::query::{
    across_page, check_budget, check_window, export, find_page, listing, read_page, session_page,
    sessions_page, Document, ExportRequest, FindRequest, ListRequest, Projection, ReadRequest,
    RepresentativeCache, Scope,
};
use crate::source::{Env, Harness};

/// Every source an invocation reads, who is asking, and what may be remembered.
pub struct History {
    corpus: Corpus,
    projection: Option<Box<dyn Projection>>,
    /// Each harness, the root it reads and the option that names it, for the notice when there
    /// is nothing to list and for a path that is no session's transcript.
    roots: Vec<Root>,
    /// The home directory a transcript path's `~` stands for.
    home: Option<PathBuf>,
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
            home: None,
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
                .map(|(h, path)| Root {
                    harness: h.name.to_string(),
                    flag: h.root_flag.to_string(),
                    path,
                })
                .collect(),
            home: env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from),
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

    /// Where discovery keeps what it saw of each root for the next run ([`crate::Walk`]).
    pub fn with_walk_memos(mut self, memos: Option<Box<dyn crate::WalkMemos>>) -> History {
        self.corpus = self.corpus.with_walk_memos(memos);
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

    /// The sources.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The caller's current session, if known.
    pub fn current(&self) -> Option<&SessionKey> {
        self.current.as_ref()
    }

    /// What pages are built from besides their requests.
    fn scope(&self) -> Scope<'_> {
        Scope {
            corpus: &self.corpus,
            projection: self.projection.as_deref(),
            cache: self.cache.as_deref(),
            locations: self.locations,
            resumes: self.resumes,
        }
    }

    /// Answers `list`: the page, fitted to the budget as `render` renders it.
    pub fn list(&self, req: &ListRequest, render: &dyn Render) -> Result<ListPage, HistoryError> {
        check_budget(req.budget)?;
        if req.limit == 0 {
            return Err(HistoryError::usage(
                "--limit must be at least 1: a page of no items answers nothing",
            ));
        }
        check_window(req.since, req.until)?;
        let filter = req.filter();
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
            Target::One { file, implicit } => {
                if req.before_seq.is_some() && req.after_seq.is_some() {
                    return Err(HistoryError::InvalidBounds {
                        message: "--before-seq and --after-seq cannot be used together".into(),
                    });
                }
                session_page(&self.scope(), req, &filter, file, implicit, said, render)
            }
            Target::Many(sessions) => {
                if req.before_seq.is_some() || req.after_seq.is_some() {
                    return Err(HistoryError::InvalidBounds {
                        message: "--before-seq/--after-seq need one session: seqs from different sessions cannot define a common range".into(),
                    });
                }
                let scope = self.scope();
                let listing = listing(&scope, req, &filter, &sessions);
                let none = sessions.is_empty() && req.session.is_none() && req.cwd.is_none();
                let no_sessions = none.then(|| self.no_sessions_notice());
                Ok(across_page(
                    &scope,
                    (listing, &sessions),
                    &filter,
                    req,
                    render,
                    no_sessions,
                    said,
                ))
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
        if !req.is_search() {
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
        check_window(req.since, req.until)?;
        let Searched {
            sessions,
            notice: no_sessions,
            session,
        } = self.searched(req.session.as_deref(), req.cwd.as_ref())?;
        let req = &ListRequest {
            session,
            ..req.clone()
        };
        let filter = req.filter();
        Ok(sessions_page(
            &self.scope(),
            req,
            &filter,
            &sessions,
            no_sessions,
            render,
        ))
    }

    /// Answers a ranked search (`find`): the sessions (or events) that best match the question's
    /// words, best first, `limit` of them after `after_rank`, fitted to the budget as `render`
    /// renders them. Without a selector it searches every session.
    pub fn find(
        &self,
        req: &FindRequest,
        render: &dyn RenderFind,
    ) -> Result<FindPage, HistoryError> {
        let page = self.find_unless(req, render, &|| false)?;
        page.ok_or_else(|| HistoryError::usage("the search was stopped"))
    }

    /// [`History::find`] for a search that may stop being wanted while it runs (a picker's
    /// query that the next keystroke replaced): `stop` is asked before each session, chunk of
    /// hits and line is read, and once it says so the search ends with `None`, its cores free
    /// for the next one.
    pub fn find_unless(
        &self,
        req: &FindRequest,
        render: &dyn RenderFind,
        stop: crate::query::Stop<'_>,
    ) -> Result<Option<FindPage>, HistoryError> {
        check_budget(req.budget)?;
        if req.limit == 0 {
            return Err(HistoryError::usage(
                "--limit must be at least 1: a page of no items answers nothing",
            ));
        }
        check_window(req.since, req.until)?;
        let Searched {
            sessions,
            notice: no_sessions,
            session,
        } = self.searched(req.session.as_deref(), req.cwd.as_ref())?;
        let req = &FindRequest {
            session,
            ..req.clone()
        };
        find_page(&self.scope(), req, &sessions, no_sessions, render, stop)
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
        read_page(&self.scope(), req, &file, implicit, render)
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
        export(&self.corpus, &file, req.all_branches, doc)
    }

    /// An unknown current session that the environment named, said with its variable: the
    /// person never typed that id.
    fn explain_current(&self, e: HistoryError, implicit: bool) -> HistoryError {
        match (e, &self.current_source) {
            (HistoryError::UnknownSession { selector, detail }, Some(var)) if implicit => {
                HistoryError::UnknownSession {
                    selector: format!(
                        "{selector} (the current session, named by {var}; name one with --session)"
                    ),
                    detail,
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
            (Some(s), _, _) => return self.select_said(s, place),
            // Sessions asked for by place are every session there, not the caller's own.
            (None, None, _) | (None, Some(_), Some(_)) => return self.select_said("*", place),
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

    /// The sessions a search of many sessions reads (`list --sessions`, `find`): those
    /// `selector` names, every session without one, at `place`; and what to say when there are
    /// none (that there are no sessions at all, or where sessions did run).
    /// The selector comes back as its page's recipes repeat it: a path that selected one
    /// session as that session's qualified id (a path may be relative; a key reads alike from
    /// any directory).
    fn searched(
        &self,
        selector: Option<&str>,
        place: Option<&Place>,
    ) -> Result<Searched, HistoryError> {
        let (target, said) = self.select_said(selector.unwrap_or("*"), place)?;
        let sessions = match target {
            Target::Many(sessions) => sessions,
            Target::One { file, .. } => vec![file],
        };
        let none = sessions.is_empty() && selector.is_none() && place.is_none();
        let session = match (selector, sessions.as_slice()) {
            (Some(s), [file]) if is_path(s, &self.corpus.harnesses()) => Some(file.key.to_string()),
            _ => selector.map(str::to_owned),
        };
        Ok(Searched {
            notice: none.then(|| self.no_sessions_notice()).or(said),
            sessions,
            session,
        })
    }

    /// [`History::select`], saying where sessions did run when none ran at `place`.
    fn select_said(
        &self,
        text: &str,
        place: Option<&Place>,
    ) -> Result<(Target, Option<String>), HistoryError> {
        let target = self.select(text, false, place)?;
        let said = match (&target, place) {
            (Target::Many(none), Some(place)) if none.is_empty() => Some(self.nowhere(place)),
            _ => None,
        };
        Ok((target, said))
    }

    /// What to say when no session ran at `place`: the directory it was taken as, and the
    /// directories sessions ran in, those whose name is closest to its own first.
    fn nowhere(&self, place: &Place) -> String {
        let sessions = self.corpus.discover_in(None);
        let cwds = crate::corpus::parallel::map(&sessions, |file| {
            self.corpus
                .source(&file.key.harness)
                .and_then(|source| source.cwd(file))
        });
        let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
        for cwd in cwds.into_iter().flatten() {
            *counts.entry(cwd).or_default() += 1;
        }
        let asked = place.path();
        let name = |p: &str| {
            let p = Path::new(p);
            p.file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default()
        };
        let wanted = name(&asked.to_string_lossy());
        let mut dirs: Vec<(String, usize)> = counts.into_iter().collect();
        dirs.sort_by_key(|(dir, n)| {
            let here = name(dir);
            let distance = strsim::levenshtein(&here, &wanted);
            (!here.contains(&wanted), distance, std::cmp::Reverse(*n))
        });
        let shown: Vec<String> = dirs
            .iter()
            .take(5)
            .map(|(dir, n)| format!("{dir} ({n})"))
            .collect();
        let mut said = format!("no session ran in {} or below", asked.display());
        match shown.is_empty() {
            true => said.push_str("; no session records a directory"),
            false => {
                said.push_str("; sessions ran in ");
                said.push_str(&shown.join(", "));
                if dirs.len() > shown.len() {
                    said.push_str(&format!(" and {} more", dirs.len() - shown.len()));
                }
                said.push_str(" (closest first; --cwd takes a path, relative to here)");
            }
        }
        said
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
                if place.is_none() {
                    return Ok(Target::Many(matching));
                }
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
                )
                .map_err(|e| match e {
                    // A file's name is taken for an id: a path is told by its `/`.
                    HistoryError::UnknownSession { selector, .. }
                        if harness.is_none()
                            && (id.ends_with(".jsonl") || id.ends_with(".jsonl.zst")) =>
                    {
                        HistoryError::UnknownSession {
                            detail: Some(format!("a file is named by its path, as ./{selector}")),
                            selector,
                        }
                    }
                    e => e,
                })?;
                if let Some(place) = place.filter(|_| !there(file)) {
                    return Err(HistoryError::UnknownSession {
                        selector: format!("{text} under {}", place.path().display()),
                        detail: None,
                    });
                }
                Ok(Target::One {
                    file: file.clone(),
                    implicit,
                })
            }
            Selector::Path(path) => {
                let file = self.session_at(text, &path)?;
                if let Some(place) = place.filter(|_| !there(&file)) {
                    return Err(HistoryError::UnknownSession {
                        selector: format!("{text} under {}", place.path().display()),
                        detail: Some(format!(
                            "{} ran in {}",
                            file.key,
                            (self.corpus.source(&file.key.harness))
                                .and_then(|source| source.cwd(&file))
                                .unwrap_or_else(|| "a directory it does not record".into())
                        )),
                    });
                }
                Ok(Target::One { file, implicit })
            }
        }
    }

    /// The session whose own transcript is the file at `path` (as given in `text`): taken
    /// from the working directory, compared with the files discovery lists, never opened.
    fn session_at(&self, text: &str, path: &Path) -> Result<SessionFile, HistoryError> {
        let unknown = |detail: String| HistoryError::UnknownSession {
            selector: text.into(),
            detail: Some(detail),
        };
        let base = match std::env::current_dir() {
            Ok(here) => here,
            Err(_) if path.is_absolute() => PathBuf::from("/"),
            Err(e) => {
                return Err(unknown(format!(
                    "the current directory cannot be told ({e})"
                )))
            }
        };
        let named = transcript_path(path, &base, self.home.as_deref());
        // As named, if that differs from the text.
        let shown = match named.as_os_str() == text {
            true => String::new(),
            false => format!(" ({})", named.display()),
        };
        let sessions = self.corpus.discover_in(None);
        match resolve_path(&named, &sessions) {
            Ok(file) => Ok(file.clone()),
            Err(PathMiss::Missing) => Err(unknown(format!("no such file{shown}"))),
            Err(PathMiss::Unreadable(why)) => {
                Err(unknown(format!("cannot look at it{shown}: {why}")))
            }
            Err(PathMiss::Directory) => Err(unknown(match self.roots.is_empty() {
                true => format!("it is a directory{shown}, not a transcript file"),
                false => format!(
                    "it is a directory{shown}, not a transcript file; the roots searched are {}",
                    self.roots_said()
                ),
            })),
            Err(PathMiss::NotTranscript) => Err(unknown(self.not_transcript(&named, &shown))),
        }
    }

    /// Why the file at `path` is no session's: it lies outside every root, or under one but
    /// discovery reads no session from it.
    fn not_transcript(&self, path: &Path, shown: &str) -> String {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let under = self.roots.iter().find(|root| {
            root.path.as_ref().is_some_and(|dir| {
                let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                path.starts_with(dir) || real.starts_with(&canonical)
            })
        });
        match under {
            Some(root) => format!(
                "the file{shown} lies under the {} root ({}) but is not a session's own \
                 transcript (a sub-agent's file, or a copy another file of its session \
                 supersedes)",
                root.harness,
                root.path.as_deref().unwrap_or(Path::new("")).display()
            ),
            None if self.roots.is_empty() => {
                format!("the file{shown} is not the transcript of a session found")
            }
            None => {
                let flags: Vec<String> =
                    self.roots.iter().map(|r| format!("--{}", r.flag)).collect();
                let mut said = format!(
                    "the file{shown} is not a transcript under the roots searched ({})",
                    self.roots_said()
                );
                if let Some((last, rest)) = flags.split_last() {
                    match rest.is_empty() {
                        true => said.push_str(&format!("; pass its root with {last}")),
                        false => said.push_str(&format!(
                            "; pass its root with {} or {last}",
                            rest.join(", ")
                        )),
                    }
                }
                said
            }
        }
    }

    /// Each harness's root, as the notices name them.
    fn roots_said(&self) -> String {
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|root| match &root.path {
                Some(path) => format!("{}: {}", root.harness, path.display()),
                None => format!("{}: (no root: HOME is not set)", root.harness),
            })
            .collect();
        roots.join(", ")
    }

    fn no_sessions_notice(&self) -> String {
        let mut notice = format!("no sessions found ({})", self.roots_said());
        if let Some(hint) = &self.empty_hint {
            notice.push_str(". ");
            notice.push_str(hint);
        }
        notice
    }
}

/// A harness's root, as the caller's notices name it.
struct Root {
    harness: String,
    /// The long option that names it, without its dashes.
    flag: String,
    path: Option<PathBuf>,
}

/// The sessions a search of many sessions reads, what to say when there are none, and the
/// selector its recipes repeat.
struct Searched {
    sessions: Vec<SessionFile>,
    notice: Option<String>,
    session: Option<String>,
}

/// What `list` is about, once the selector is known.
enum Target {
    One { file: SessionFile, implicit: bool },
    Many(Vec<SessionFile>),
}
