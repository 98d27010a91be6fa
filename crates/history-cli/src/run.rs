//! Wiring: from parsed arguments to a view, through history-core.

use std::path::PathBuf;

use history_cache::{cached_representative, Cache, DECODER_VERSION};
use history_core::corpus::Keep;
use history_core::overview::{overview, representative};
use history_core::paging::{browse, BrowseRequest, From};
use history_core::search::{search, Listing, SearchRequest};
use history_core::selector::{resolve, Selector};
use history_core::time::parse_bound;
use history_core::{Corpus, Event, Filter, HistoryError, Role, SessionFile, SessionKey, Timestamp};

use crate::args::{Common, ListArgs, ReadArgs};
use crate::print::{fit_list, fit_read, Printer};
use crate::view::{FoldView, ItemView, ListDoc, ReadDoc, Recipe, SCHEMA_VERSION};

/// Everything an invocation reads from, and who is asking.
pub struct Context {
    pub corpus: Corpus,
    pub roots: Vec<(&'static str, Option<PathBuf>)>,
    /// The session the caller works in, if known.
    pub current: Option<SessionKey>,
    /// The harness tried first for unqualified ids.
    pub host: Option<String>,
    /// The overview cache, where there is a place for it.
    pub cache: Option<Cache>,
}

type Env = dyn Fn(&str) -> Option<String>;

impl Context {
    pub fn new(common: &Common, env: &Env) -> Result<Context, HistoryError> {
        let claude = common
            .claude_root
            .clone()
            .or_else(|| decode_claude::HARNESS.root(None, env));
        let codex = common
            .codex_root
            .clone()
            .or_else(|| decode_codex::HARNESS.root(None, env));
        let pi = common
            .pi_root
            .clone()
            .or_else(|| decode_pi::HARNESS.root(None, env));
        let mut sources: Vec<Box<dyn history_core::Transcript>> = Vec::new();
        if let Some(r) = &claude {
            sources.push(Box::new(decode_claude::Claude::new(r.clone())));
        }
        if let Some(r) = &codex {
            sources.push(Box::new(decode_codex::Codex::new(r.clone())));
        }
        if let Some(r) = &pi {
            sources.push(Box::new(decode_pi::Pi::new(r.clone())));
        }
        let current = match common
            .current
            .clone()
            .or_else(|| env("NOTESOUP_CURRENT_SESSION").filter(|v| !v.is_empty()))
        {
            Some(text) => Some(parse_current(&text)?),
            None => env("CLAUDE_CODE_SESSION_ID")
                .filter(|v| !v.is_empty())
                .map(|id| SessionKey::new(decode_claude::HARNESS.name, id)),
        };
        let host = current
            .as_ref()
            .map(|k| k.harness.clone())
            .or_else(|| common.host.clone())
            .or_else(|| env("NOTESOUP_HOST").filter(|v| !v.is_empty()));
        Ok(Context {
            cache: history_cache::default_dir(env).map(|d| Cache::new(d, &cache_version())),
            corpus: Corpus::new(sources),
            roots: vec![("claude", claude), ("codex", codex), ("pi", pi)],
            current,
            host,
        })
    }
}

/// The cache's entry version: the decoders' declared version and this very build (the
/// executable's size and modification time), so that entries written by any other build of a
/// decoder are misses even when nobody remembered to bump the declared version.
fn cache_version() -> String {
    let build = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{modified}", m.len())
        })
        .unwrap_or_default();
    format!("{DECODER_VERSION} build {build}")
}

fn parse_current(text: &str) -> Result<SessionKey, HistoryError> {
    match text.split_once(':') {
        Some((h, id)) if !h.is_empty() && !id.is_empty() => Ok(SessionKey::new(h, id)),
        _ => Err(HistoryError::usage(format!(
            "the current session must be HARNESS:ID, not {text:?}"
        ))),
    }
}

/// What `list` is about, once the selector is known.
enum Target {
    One { file: SessionFile, implicit: bool },
    Many(Vec<SessionFile>),
}

fn target(ctx: &Context, selector: Option<&str>) -> Result<Target, HistoryError> {
    let harnesses = ctx.corpus.harnesses();
    let (text, implicit) = match (selector, &ctx.current) {
        (Some(s), _) => (s.to_string(), false),
        (None, Some(cur)) => (cur.to_string(), true),
        (None, None) => ("*".to_string(), false),
    };
    match Selector::parse(&text, &harnesses)? {
        Selector::Many(pattern) => Ok(Target::Many(
            ctx.corpus
                .discover_in(pattern.harness())
                .into_iter()
                .filter(|s| pattern.matches(&s.key))
                .collect(),
        )),
        Selector::One { harness, id } => {
            let sessions = ctx.corpus.discover_in(harness.as_deref());
            let file = resolve(
                harness.as_deref(),
                &id,
                &sessions,
                ctx.host.as_deref(),
                &text,
            )?;
            Ok(Target::One {
                file: file.clone(),
                implicit,
            })
        }
    }
}

fn filter(args: &ListArgs) -> Result<Filter, HistoryError> {
    let now = Timestamp::now();
    let bound = |flag: &str, v: &Option<String>| -> Result<Option<Timestamp>, HistoryError> {
        v.as_deref()
            .map(|s| {
                parse_bound(s, now).ok_or_else(|| {
                    HistoryError::usage(format!(
                        "--{flag} {s:?} is not a time (use RFC 3339, YYYY-MM-DD, or an age like 7d, 3h, 30m)"
                    ))
                })
            })
            .transpose()
    };
    let mut roles = Vec::new();
    for r in &args.roles {
        let role = Role::parse(r).ok_or_else(|| {
            HistoryError::usage(format!(
                "--role {r:?} is not a role (user, assistant, tool, context)"
            ))
        })?;
        if !roles.contains(&role) {
            roles.push(role);
        }
    }
    Ok(Filter::new(
        &args.queries,
        roles,
        bound("since", &args.since)?,
        bound("until", &args.until)?,
    ))
}

fn notice_of(notices: &[String]) -> Option<String> {
    (!notices.is_empty()).then(|| notices.join("; "))
}

/// Runs `list`; returns the output and whether it holds any item.
pub fn list(
    ctx: &Context,
    args: &ListArgs,
    common: &Common,
    printer: &dyn Printer,
) -> Result<(String, bool), HistoryError> {
    let filter = filter(args)?;
    if common.budget < 1024 {
        return Err(HistoryError::usage("--budget must be at least 1024 bytes"));
    }
    let from = args.from.map(From::from);
    match target(ctx, args.session.as_deref())? {
        Target::One { file, implicit } => {
            if args.before_seq.is_some() && args.after_seq.is_some() {
                return Err(HistoryError::InvalidBounds {
                    message: "--before-seq and --after-seq cannot be used together".into(),
                });
            }
            one_session(
                ctx,
                args,
                common.budget,
                &filter,
                from,
                file,
                implicit,
                printer,
            )
        }
        Target::Many(sessions) => {
            if args.before_seq.is_some() || args.after_seq.is_some() {
                return Err(HistoryError::InvalidBounds {
                    message: "--before-seq/--after-seq need one session: seqs from different sessions cannot define a common range".into(),
                });
            }
            let from = from.unwrap_or(From::Newest);
            let listing = if filter.is_search() {
                search(
                    &ctx.corpus,
                    &sessions,
                    &SearchRequest {
                        filter: &filter,
                        limit: args.limit,
                        from,
                        all_branches: args.all_branches,
                        raw_prefilter: true,
                        candidates: None,
                    },
                )
            } else if let (true, Some(cache)) = (filter.is_empty(), &ctx.cache) {
                let choose = |file: &SessionFile| cached_representative(cache, &ctx.corpus, file);
                overview(&sessions, args.limit, from, &choose)
            } else {
                let choose = |file: &SessionFile| representative(&ctx.corpus, file, &filter);
                overview(&sessions, args.limit, from, &choose)
            };
            let hint =
                (sessions.is_empty() && args.session.is_none()).then(|| no_sessions_hint(ctx));
            Ok(many_sessions(
                listing,
                &filter,
                common.budget,
                from,
                printer,
                hint,
            ))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn one_session(
    ctx: &Context,
    args: &ListArgs,
    budget: usize,
    filter: &Filter,
    from: Option<From>,
    file: SessionFile,
    implicit: bool,
    printer: &dyn Printer,
) -> Result<(String, bool), HistoryError> {
    let fold = filter.queries().is_empty() && filter.roles.is_empty();
    let keep = |e: &Event| match (filter.matches(e), fold && !e.visible) {
        (false, _) => Keep::Drop,
        (true, true) => Keep::Meta,
        (true, false) => Keep::Full,
    };
    let loaded = ctx.corpus.load(&file, &keep, args.all_branches, None)?;
    let req = BrowseRequest {
        before_seq: args.before_seq,
        after_seq: args.after_seq,
        from,
        limit: args.limit,
        fold,
    };
    let page = browse(loaded.events, &req);
    let canonical = file.key.to_string();
    let base = Recipe {
        session: (!implicit).then(|| canonical.clone()),
        all_branches: args.all_branches.then_some(true),
        ..Recipe::default()
    };
    let path = file.path.display().to_string();
    let mut doc = ListDoc {
        schema_version: SCHEMA_VERSION,
        session: Some(canonical.clone()),
        items: page
            .items
            .into_iter()
            .map(|item| {
                let mut view = ItemView::new(canonical.clone(), Some(path.clone()), item.event);
                if filter.is_search() {
                    view.focus = filter.first_match(&view.event.text);
                }
                view.folded_before = item.folded_before.map(|f| FoldView::new(f, &base));
                view
            })
            .collect(),
        folded_after: page.folded_after.map(|f| FoldView::new(f, &base)),
        has_older: page.has_older,
        has_newer: page.has_newer,
        older: None,
        newer: None,
        notice: notice_of(&loaded.notices),
        implicit,
        no_sessions: false,
    };
    let (dropped_older, dropped_newer) = fit_list(&mut doc, printer, budget, req.from(), false);
    doc.has_older |= dropped_older;
    doc.has_newer |= dropped_newer;
    // When the budget dropped the newest items, the run after them is no longer on the page.
    if dropped_newer {
        doc.folded_after = None;
    }
    let first = doc.items.first().map(|i| {
        i.folded_before
            .as_ref()
            .map_or(i.event.seq, |f| f.first_seq)
    });
    let last = doc
        .folded_after
        .as_ref()
        .map(|f| f.last_seq)
        .or(doc.items.last().map(|i| i.event.seq));
    if doc.has_older {
        doc.older = first.map(|seq| Recipe {
            before_seq: Some(seq),
            ..base.clone()
        });
    }
    if doc.has_newer {
        doc.newer = last.or(args.after_seq).map(|seq| Recipe {
            after_seq: Some(seq),
            ..base.clone()
        });
    }
    let has_items = !doc.items.is_empty();
    Ok((printer.list(&doc), has_items))
}

fn many_sessions(
    listing: Listing,
    filter: &Filter,
    budget: usize,
    from: From,
    printer: &dyn Printer,
    hint: Option<String>,
) -> (String, bool) {
    let mut notices = Vec::new();
    if !listing.skipped.is_empty() {
        let names: Vec<String> = listing
            .skipped
            .iter()
            .take(3)
            .map(|e| match e {
                HistoryError::HistoryUnavailable { session, reason } => {
                    format!("{session}: {reason}")
                }
                other => other.to_string(),
            })
            .collect();
        notices.push(format!(
            "{} session{} could not be loaded and {} skipped ({}{})",
            listing.skipped.len(),
            if listing.skipped.len() == 1 { "" } else { "s" },
            if listing.skipped.len() == 1 {
                "was"
            } else {
                "were"
            },
            names.join("; "),
            if listing.skipped.len() > 3 {
                "; …"
            } else {
                ""
            }
        ));
    }
    let no_sessions = hint.is_some();
    notices.extend(hint);
    let mut doc = ListDoc {
        schema_version: SCHEMA_VERSION,
        session: None,
        items: listing
            .items
            .into_iter()
            .map(|hit| {
                let mut item = ItemView::from_hit(hit);
                if filter.is_search() {
                    item.focus = filter.first_match(&item.event.text);
                }
                item
            })
            .collect(),
        folded_after: None,
        has_older: listing.has_older,
        has_newer: listing.has_newer,
        older: None,
        newer: None,
        notice: notice_of(&notices),
        implicit: false,
        no_sessions,
    };
    let (dropped_older, dropped_newer) = fit_list(&mut doc, printer, budget, from, true);
    doc.has_older |= dropped_older;
    doc.has_newer |= dropped_newer;
    let has_items = !doc.items.is_empty();
    (printer.list(&doc), has_items)
}

fn no_sessions_hint(ctx: &Context) -> String {
    let roots: Vec<String> = ctx
        .roots
        .iter()
        .map(|(h, r)| match r {
            Some(r) => format!("{h}: {}", r.display()),
            None => format!("{h}: (no root: HOME is not set)"),
        })
        .collect();
    format!(
        "no sessions found ({}). To try the bundled demo, from the repository: cargo run --release -- list --claude-root fixtures/demo/claude --codex-root fixtures/demo/codex --pi-root fixtures/demo/pi",
        roots.join(", ")
    )
}

/// Runs `read`; returns the output and whether it holds the event.
pub fn read(
    ctx: &Context,
    args: &ReadArgs,
    common: &Common,
    printer: &dyn Printer,
) -> Result<(String, bool), HistoryError> {
    if common.budget < 1024 {
        return Err(HistoryError::usage("--budget must be at least 1024 bytes"));
    }
    let selector = args.session.as_deref();
    if selector.is_some_and(|s| s.contains('*')) {
        return Err(HistoryError::InvalidSession {
            message: "read needs one session; take a session and seq from a search hit instead of a wildcard".into(),
        });
    }
    if selector.is_none() && ctx.current.is_none() {
        return Err(HistoryError::usage(
            "read needs --session (no current session is known)",
        ));
    }
    let Target::One { file, implicit } = target(ctx, selector)? else {
        return Err(HistoryError::InvalidSession {
            message: "read needs one session".into(),
        });
    };
    let seq = args.seq;
    let keep = |e: &Event| {
        if e.seq == seq {
            Keep::Full
        } else {
            Keep::Drop
        }
    };
    let loaded = ctx.corpus.load(&file, &keep, true, None)?;
    let parts = loaded.events.len() as u32;
    let event = loaded.events.into_iter().find(|e| e.part == args.part);
    let canonical = file.key.to_string();
    let session = (!implicit).then(|| canonical.clone());
    let mut item =
        event.map(|e| ItemView::new(canonical.clone(), Some(file.path.display().to_string()), e));
    let total_chars = item.as_ref().map_or(0, |i| i.event.text.chars().count());
    if let Some(item) = item.as_mut() {
        item.event.text = item.event.text.chars().skip(args.offset_chars).collect();
    }
    let mut doc = ReadDoc {
        schema_version: SCHEMA_VERSION,
        session: canonical,
        item,
        parts,
        offset_chars: args.offset_chars,
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
    match fit_read(&mut doc, printer, common.budget) {
        Some(shown) => {
            let next = args.offset_chars + shown;
            if next < total_chars {
                doc.next_offset_chars = Some(next);
                doc.next = Some(Recipe {
                    session,
                    seq: Some(seq),
                    part: Some(args.part),
                    offset_chars: Some(next),
                    ..Recipe::default()
                });
            } else {
                doc.next = None;
            }
        }
        None => doc.next = None,
    }
    let found = doc.item.is_some();
    Ok((printer.read(&doc), found))
}
