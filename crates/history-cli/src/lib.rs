//! The `notesoup-history` command as a library: parse the arguments, make one call into
//! `history-core`, render the page. [`run`] is the whole command; the binary only prints what it
//! returns, and tests call it with harnesses of their own. [`run_io`] also serves `mcp`
//! ([`mcp`]), which answers requests read from a stream with the same calls and pages.
//!
//! ```
//! let env = |_: &str| None::<std::ffi::OsString>;
//! let out = history_cli::run(&history_cli::HARNESSES, ["notesoup-history", "read"], &env);
//! assert_eq!(out.code, 2);
//! assert!(out.stderr.contains("usage"));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod args;
mod index;
pub mod mcp;
pub mod render;

use std::ffi::OsString;
use std::io::{BufRead, Write};

use clap::FromArgMatches;
use history_cache::{Cache, DECODER_VERSION};
use history_core::harness::{current_session, Env, Harness};
use history_core::history::RepresentativeCache;
use history_core::search::Cursor;
use history_core::time::parse_bound;
use history_core::{History, HistoryError, ListRequest, ReadRequest, Role, Timestamp};

use args::{Cli, Command, ListArgs, ReadArgs};
use render::{Json, Printer, Text};

/// The harnesses the command reads, in the order they are tried.
pub const HARNESSES: [&Harness; 3] = [
    &decode_claude::HARNESS,
    &decode_codex::HARNESS,
    &decode_pi::HARNESS,
];

/// What one run of the command prints and how it exits.
#[derive(Debug, Default)]
pub struct Output {
    /// What goes to standard output.
    pub stdout: String,
    /// What goes to standard error.
    pub stderr: String,
    /// 0: a result with items; 1: a valid request with none; 2: an error.
    pub code: u8,
    /// When the search met sessions the index does not cover: the arguments of the background
    /// update the caller may start (`index --background` and the roots this run was given).
    pub wants_index: Option<Vec<OsString>>,
}

/// The streams of a command that serves requests (`mcp`), and how it starts a background index
/// update.
pub struct Io<'a> {
    /// Where requests come from; its end ends the command.
    pub input: &'a mut dyn BufRead,
    /// Where responses go.
    pub output: &'a mut dyn Write,
    /// Starts `notesoup-history` with these arguments in the background (the binary's detached
    /// `index --background`).
    pub start_index: &'a dyn Fn(&[OsString]),
}

/// Runs the command line `argv` (its first item the program's name) over `registry`, looking
/// environment variables up with `env`. `mcp` reads no requests here: see [`run_io`].
pub fn run<I, T>(registry: &[&Harness], argv: I, env: Env<'_>) -> Output
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let io = Io {
        input: &mut std::io::empty(),
        output: &mut std::io::sink(),
        start_index: &|_| {},
    };
    run_io(registry, argv, env, io)
}

/// What `completions` and `man` print: documents of the command line itself, which need no
/// transcripts.
fn documents(registry: &[&Harness], command: &Command) -> Option<String> {
    let mut out = Vec::new();
    let mut cmd = args::command(registry);
    match command {
        Command::Completions(a) => {
            clap_complete::generate(a.shell, &mut cmd, "notesoup-history", &mut out);
        }
        Command::Man => {
            let man = clap_mangen::Man::new(cmd.clone());
            man.render(&mut out).ok()?;
            // A section per subcommand, so that `man` says what each one takes.
            for sub in cmd.get_subcommands_mut() {
                let name = format!("notesoup-history-{}", sub.get_name());
                let sub = sub.clone().display_name(name);
                clap_mangen::Man::new(sub).render(&mut out).ok()?;
            }
        }
        _ => return None,
    }
    String::from_utf8(out).ok()
}

/// [`run`], with the streams that `mcp` serves on.
pub fn run_io<I, T>(registry: &[&Harness], argv: I, env: Env<'_>, io: Io<'_>) -> Output
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let json = argv.iter().any(|a| a == "--json");
    let printer: &dyn Printer = if json { &Json } else { &Text };
    let fail = |error: &HistoryError| {
        let text = printer.error(error);
        let (stdout, stderr) = if json {
            (text, String::new())
        } else {
            (String::new(), text)
        };
        Output {
            stdout,
            stderr,
            code: 2,
            ..Output::default()
        }
    };
    let matches = match args::command(registry).try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_error(e, &fail),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e, &fail),
    };
    if let Some(stdout) = documents(registry, &cli.command) {
        return Output {
            stdout,
            ..Output::default()
        };
    }
    let index = index::Settings::new(cli.common.no_index, env);
    if let Command::Mcp = cli.command {
        return match open(registry, &matches, &cli, env) {
            Ok(_) => {
                serve_mcp(registry, &matches, &cli, env, &index, io);
                Output::default()
            }
            Err(e) => fail(&e),
        };
    }
    let mut wants_index = None;
    let result = open(registry, &matches, &cli, env).and_then(|history| match &cli.command {
        Command::List(a) => list_request(a, cli.common.budget).and_then(|req| {
            // Only a search consults the index: other pages need not open it.
            let search = req.queries.iter().any(|q| !q.is_empty());
            let history = history.with_projection(search.then(|| index.projection()).flatten());
            let page = history.list(&req, printer)?;
            if index.updates_in_background()
                && page.coverage.is_some_and(|c| c.scanned > c.unindexable)
            {
                wants_index = Some(background_argv(registry, &matches));
            }
            Ok((printer.list(&page), !page.items.is_empty()))
        }),
        Command::Read(a) => {
            let page = history.read(&read_request(a, cli.common.budget), printer)?;
            Ok((printer.read(&page), page.item.is_some()))
        }
        Command::Index(a) => index.update(history.corpus(), a.background, json),
        Command::Doctor => index.doctor(json),
        Command::Reindex(a) => index.reindex(history.corpus(), &a.dirs, json),
        Command::Mcp | Command::Completions(_) | Command::Man => {
            unreachable!("answered above")
        }
    });
    match result {
        Ok((stdout, found)) => Output {
            stdout,
            stderr: String::new(),
            code: if found { 0 } else { 1 },
            wants_index,
        },
        Err(e) => fail(&e),
    }
}

/// Serves MCP until `io.input` ends: each call gets a history of its own (with the search index
/// for a search), exactly as one run of `list` or `read` would.
fn serve_mcp(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
    index: &index::Settings,
    io: Io<'_>,
) {
    let history = |search: bool| {
        open(registry, matches, cli, env).map(|h| {
            h.with_locations(true)
                .with_projection(search.then(|| index.projection()).flatten())
        })
    };
    let wants_index = |page: &history_core::page::ListPage| {
        index.updates_in_background() && page.coverage.is_some_and(|c| c.scanned > c.unindexable)
    };
    let argv = background_argv(registry, matches);
    let start_index = || (io.start_index)(&argv);
    let backend = mcp::Backend {
        history: &history,
        wants_index: &wants_index,
        start_index: &start_index,
        budget: cli.common.budget,
    };
    mcp::serve(&backend, io.input, io.output);
}

/// `index --background` with the root flags this run was given.
fn background_argv(registry: &[&Harness], matches: &clap::ArgMatches) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec!["index".into(), "--background".into()];
    for h in registry {
        if let Some(root) = args::root_flag(matches, h) {
            argv.push(format!("--{}", h.root_flag).into());
            argv.push(root.into());
        }
    }
    argv
}

/// Help and the version are printed as clap renders them; any other error is a `usage` error.
fn clap_error(e: clap::Error, fail: &dyn Fn(&HistoryError) -> Output) -> Output {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Output {
            stdout: e.render().to_string(),
            ..Output::default()
        },
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Output {
            stderr: e.render().to_string(),
            code: 2,
            ..Output::default()
        },
        _ => {
            let message = e
                .render()
                .to_string()
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ")
                .to_string();
            fail(&HistoryError::usage(message))
        }
    }
}

/// Every harness's source, who is asking, and the overview cache.
fn open(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
) -> Result<History, HistoryError> {
    let current = current_session(cli.common.current.as_deref(), registry, env)?;
    let host = cli
        .common
        .host
        .clone()
        .or_else(|| history_core::harness::text(env, "NOTESOUP_HOST"));
    let cache = history_cache::default_dir(env)
        .map(|dir| Box::new(Cache::new(dir, &cache_version())) as Box<dyn RepresentativeCache>);
    let demo: Vec<String> = registry
        .iter()
        .map(|h| format!("--{} fixtures/demo/{}", h.root_flag, h.name))
        .collect();
    Ok(
        History::from_registry(registry, &|h| args::root_flag(matches, h), env)
            .with_current(current, host)
            .with_cache(cache)
            // Only JSON shows where items are and how to reopen their sessions.
            .with_locations(cli.common.json)
            .with_empty_hint(format!(
                "To try the bundled demo, from the repository: cargo run --release -- list {}",
                demo.join(" ")
            )),
    )
}

/// The cache's and the index's entry version: the decoders' declared version and this very
/// build (the executable's size and modification time), so that entries written by any other
/// build of a decoder are misses even when nobody remembered to bump the declared version.
pub(crate) fn cache_version() -> String {
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

pub(crate) fn list_request(args: &ListArgs, budget: usize) -> Result<ListRequest, HistoryError> {
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
    let roles = args
        .roles
        .iter()
        .map(|r| {
            Role::parse(r).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--role {r:?} is not a role (user, assistant, tool, context)"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(ListRequest {
        session: args.session.clone(),
        queries: args.queries.clone(),
        roles,
        since: bound("since", &args.since)?,
        until: bound("until", &args.until)?,
        before_seq: args.before_seq,
        after_seq: args.after_seq,
        from: args.from.map(Into::into),
        limit: args.limit,
        budget,
        all_branches: args.all_branches,
        before: place("before", &args.before)?,
        after: place("after", &args.after)?,
    })
}

/// A place of a search across sessions, as a recipe gives it.
fn place(flag: &str, text: &Option<String>) -> Result<Option<Cursor>, HistoryError> {
    text.as_deref()
        .map(|t| {
            Cursor::parse(t).ok_or_else(|| {
                HistoryError::usage(format!(
                    "--{flag} {t:?} is not a place: TIME,SESSION,SEQ,PART as a recipe gives it"
                ))
            })
        })
        .transpose()
}

pub(crate) fn read_request(args: &ReadArgs, budget: usize) -> ReadRequest {
    ReadRequest {
        session: args.session.clone(),
        seq: args.seq,
        part: args.part,
        offset_chars: args.offset_chars,
        budget,
    }
}
