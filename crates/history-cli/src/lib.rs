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
mod candidates;
mod command_line;
pub mod completion;
mod demo;
mod epilogue;
mod export;
mod index;
mod manual;
pub mod mcp;
pub mod pick;
mod registry;
pub mod render;
mod request;
pub mod screen;

pub use screen::Terminal;

use std::ffi::OsString;
use std::io::{BufRead, Write};

use clap::FromArgMatches;
use history_cache::Cache;
use history_core::RepresentativeCache;
use history_core::{current_session, current_source, Env, Harness};
use history_core::{History, HistoryError};

use args::{Cli, ColorArg, Command, FormatArg, PickArgs};
use render::{Json, Layout, Printer, Text};
use request::{cache_version, find_request, list_request, read_request, Times};

pub use registry::HARNESSES;

/// What one run of the command prints and how it exits.
#[derive(Debug, Default)]
pub struct Output {
    /// What goes to standard output.
    pub stdout: String,
    /// What goes to standard error.
    pub stderr: String,
    /// 0: a result with items; 1: a valid request with none; 2: an error; 130: an index
    /// update stopped by Ctrl-C.
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
    // What a command streams (`export`) is printed like what it returns.
    let mut streamed = Vec::new();
    let io = Io {
        input: &mut std::io::empty(),
        output: &mut streamed,
        start_index: &|_| {},
    };
    let mut out = run_io(registry, argv, env, io);
    out.stdout
        .insert_str(0, &String::from_utf8_lossy(&streamed));
    out
}

/// What `completions` and `man` answer: documents of the command line itself, which need no
/// transcripts. `man --dir` writes the pages and prints the files it wrote.
fn documents(registry: &[&Harness], command: &Command, json: bool) -> Option<Output> {
    let stdout = match command {
        Command::Completions(a) => completion::script(a.shell),
        Command::Init(a) => pick::shell::snippet(a.shell),
        Command::Man(args::ManArgs { dir: None }) => manual::pages(registry)
            .into_iter()
            .next()
            .map(|page| page.roff)
            .unwrap_or_default(),
        Command::Man(args::ManArgs { dir: Some(dir) }) => {
            match manual::write_pages(registry, dir) {
                Ok(files) => files.iter().map(|f| format!("{}\n", f.display())).collect(),
                Err(e) => return Some(failed(json, &e)),
            }
        }
        _ => return None,
    };
    Some(Output {
        stdout,
        ..Output::default()
    })
}

/// The pager the output of `argv` goes through, as a shell command: for `read` and `export`
/// to a terminal, `$PAGER` (none when it is empty or `cat`), else `less -FRX` where it is on
/// `$PATH` (it quits at once when the text fits a screen); none with `--no-pager`.
pub fn pager<T>(
    registry: &[&Harness],
    argv: &[T],
    env: Env<'_>,
    terminal: &Terminal,
) -> Option<String>
where
    T: Into<OsString> + Clone,
{
    if !terminal.is_terminal {
        return None;
    }
    let matches = args::command_to_parse(registry, args::MAX_HELP_WIDTH)
        .try_get_matches_from(argv.iter().cloned())
        .ok()?;
    let cli = Cli::from_arg_matches(&matches).ok()?;
    let paged = match &cli.command {
        Command::Read(a) => !a.no_pager,
        Command::Export(a) => !a.no_pager,
        _ => false,
    };
    let pager = match env("PAGER") {
        Some(p) => p.into_string().ok()?,
        // Without less (a minimal image), the text goes to the terminal as it is.
        None => {
            let path = env("PATH")?;
            std::env::split_paths(&path)
                .any(|dir| dir.join("less").is_file())
                .then(|| "less -FRX".to_string())?
        }
    };
    (paged && !pager.trim().is_empty() && pager.trim() != "cat").then_some(pager)
}

/// [`run`], with the streams that `mcp` serves on.
pub fn run_io<I, T>(registry: &[&Harness], argv: I, env: Env<'_>, io: Io<'_>) -> Output
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_on(registry, argv, env, io, &Terminal::piped())
}

/// [`run_io`] for output that goes where `terminal` says: on a terminal (or with `--color
/// always`) text gets color, local times and lines; piped, it stays plain. Kept whole as the one
/// table of what each command answers; each answer is a call or two.
pub fn run_on<I, T>(
    registry: &[&Harness],
    argv: I,
    env: Env<'_>,
    io: Io<'_>,
    terminal: &Terminal,
) -> Output
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let json = argv.iter().any(|a| a == "--json");
    let fail = |error: &HistoryError| failed(json, error);
    // Help wraps to the terminal's width; piped, to the widest it takes.
    let width = terminal.width.unwrap_or(args::MAX_HELP_WIDTH);
    let parse = |argv: &[OsString]| {
        (args::command_to_parse(registry, width).try_get_matches_from(argv)).map_err(|e| {
            match e.kind() {
                // Help is shown with its text laid out: the command is built again with it.
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let full = args::command_for_width(registry, width);
                    full.try_get_matches_from(argv).err().unwrap_or(e)
                }
                _ => e,
            }
        })
    };
    let matches = match parse(&argv) {
        Ok(m) => m,
        // No subcommand, for a person at a terminal: the picker.
        Err(e)
            if terminal.is_terminal
                && matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                        | clap::error::ErrorKind::MissingSubcommand
                ) =>
        {
            let mut argv = argv.clone();
            argv.push("pick".into());
            match parse(&argv) {
                Ok(m) => m,
                Err(_) => return clap_error(e, &fail),
            }
        }
        Err(e) => return clap_error(e, &fail),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e, &fail),
    };
    if let Some(out) = documents(registry, &cli.command, json) {
        return out;
    }
    let index = index::Settings::new(cli.common.no_index || cli.common.demo, env);
    if let Command::Mcp = cli.command {
        return match open(registry, &matches, &cli, env) {
            Ok(_) => {
                let prefix = recipe_prefix(registry, &matches, &cli);
                serve_mcp(
                    registry,
                    &matches,
                    &cli,
                    env,
                    &index,
                    io,
                    &Text {
                        prefix,
                        ..Text::default()
                    },
                );
                Output::default()
            }
            Err(e) => fail(&e),
        };
    }
    if let Command::Pick(a) = &cli.command {
        return pick_answer(registry, &matches, &cli, a, env, terminal);
    }
    if let Command::Export(a) = &cli.command {
        return match open(registry, &matches, &cli, env) {
            Ok(history) => export(&history, a, json, io.output),
            Err(e) => fail(&e),
        };
    }
    let text = text_printer(registry, &matches, &cli, env, terminal);
    // Times are taken in the zone they are shown in: local on a terminal, else UTC.
    let times = Times {
        now: terminal.now,
        zone: match terminal.is_terminal && !json {
            true => terminal.zone.clone(),
            false => jiff::tz::TimeZone::UTC,
        },
    };
    // A person is told which zone a time was read in; a script reads UTC, as documented.
    let zone_said = match &cli.command {
        Command::List(a) if terminal.is_terminal => times.said(&a.since, &a.until),
        Command::Find(a) if terminal.is_terminal => times.said(&a.since, &a.until),
        _ => String::new(),
    };
    let printer: &dyn Printer = if json { &Json } else { &text };
    let mut stale = false;
    let budget = cli.common.budget;
    let result = open(registry, &matches, &cli, env).and_then(|history| match &cli.command {
        Command::List(a) if a.sessions => {
            let req = list_request(a, budget, &times)?;
            let render: &dyn history_core::RenderSessions = if json { &Json } else { &text };
            sessions_answer(
                history.with_projection(index.projection()),
                &req,
                json,
                render,
                &index,
                &mut stale,
            )
        }
        Command::List(a) => {
            let req = list_request(a, budget, &times)?;
            // Only a search, or a page of a large session, consults the index: other pages
            // need not open it.
            let search = req.is_search();
            let history = history.with_projection(match search {
                true => index.projection(),
                false => index.projection_when_asked(),
            });
            let page = history.list(&req, printer)?;
            stale = index.updates_in_background() && page.coverage.is_some_and(|c| c.stale());
            let (results, mut said) = printer.list_streams(&page);
            if page.items.is_empty() && !json {
                said.push_str(&phrase_hint(&req.queries));
            }
            Ok((results, said, found(!page.items.is_empty())))
        }
        Command::Find(a) => {
            let req = find_request(a, budget, &times)?;
            let render: &dyn history_core::RenderFind = if json { &Json } else { &text };
            find_answer(
                history.with_projection(index.projection()),
                &req,
                json,
                render,
                &index,
                &mut stale,
            )
        }
        Command::Read(a) => {
            let history = history.with_projection(index.projection_when_asked());
            let page = history.read(&read_request(a, budget), printer)?;
            let (results, said) = printer.read_streams(&page);
            Ok((results, said, found(page.item.is_some())))
        }
        Command::Index(a) => index.update(history.corpus(), a.background, json),
        Command::Doctor => index.doctor(json),
        Command::Reindex(a) => index.reindex(history.corpus(), &a.dirs, json),
        Command::Mcp
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Export(_)
        | Command::Pick(_)
        | Command::Init(_) => {
            unreachable!("answered above")
        }
    });
    let wants_index = stale.then(|| background_argv(registry, &matches));
    match result {
        Ok((stdout, stderr, code)) => Output {
            stdout,
            stderr: zone_said + &stderr,
            code,
            wants_index,
        },
        Err(e) => fail(&e),
    }
}

/// Runs the picker for `notesoup-history pick` (or no subcommand on a terminal): what the
/// chosen session's command is, or what replayed keys measured.
fn pick_answer(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    args: &PickArgs,
    env: Env<'_>,
    terminal: &Terminal,
) -> Output {
    let index = index::Settings::new(cli.common.no_index || cli.common.demo, env);
    let open = || open(registry, matches, cli, env);
    let searcher = pick::search::Searcher {
        open: &open,
        index: &index,
        recent: Default::default(),
    };
    let mode = match args.literal {
        true => pick::state::Mode::Literal,
        false => pick::state::Mode::Ranked,
    };
    let picker = pick::state::Picker::new(&args.query, mode, pick::scopes(registry, args));
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = env("TERM").is_some_and(|t| t == "dumb");
    let look = pick::view::Look {
        color: cli.common.color != ColorArg::Never && !no_color && !dumb,
        clock: screen::Clock {
            now: terminal.now,
            zone: terminal.zone.clone(),
        },
        home: env("HOME")
            .and_then(|h| h.into_string().ok())
            .filter(|h| h.len() > 1),
    };
    let pager = |session: &str| page(registry, matches, cli, env, session);
    let script = args.script.as_deref();
    match pick::run(&searcher, picker, look, script, &pager) {
        Err(e) => failed(false, &HistoryError::usage(e)),
        Ok(pick::Ended::Measured(report)) => Output {
            stdout: report,
            ..Output::default()
        },
        Ok(pick::Ended::Picked(outcome, stale)) => {
            let mut out = chosen(outcome, args);
            if stale && index.updates_in_background() {
                out.wants_index = Some(background_argv(registry, matches));
            }
            out
        }
    }
}

/// What the run prints for `outcome`, or runs (`--exec`).
fn chosen(outcome: pick::Outcome, args: &args::PickArgs) -> Output {
    let row = match outcome {
        pick::Outcome::Left => {
            return Output {
                code: 1,
                ..Output::default()
            }
        }
        // As a shell reports a process a signal ended, with nothing printed.
        pick::Outcome::Ended(signal) => {
            return Output {
                code: u8::try_from(128 + signal).unwrap_or(1),
                ..Output::default()
            }
        }
        pick::Outcome::Chose(row) => row,
    };
    if args.print == args::PrintArg::Json {
        return Output {
            stdout: format!("{}\n", serde_json::to_string(&row.json).unwrap_or_default()),
            ..Output::default()
        };
    }
    let Some(command) = row.resume.clone() else {
        return Output {
            stderr: format!(
                "{} cannot be resumed: its agent names no command\n",
                row.session
            ),
            code: 1,
            ..Output::default()
        };
    };
    if args.exec {
        let status = std::process::Command::new("sh")
            .args(["-c", &command])
            .status();
        return match status {
            Ok(s) => Output {
                code: s.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1),
                ..Output::default()
            },
            Err(e) => Output {
                stderr: format!("error: could not run {command}: {e}\n"),
                code: 2,
                ..Output::default()
            },
        };
    }
    Output {
        stdout: format!("{command}\n"),
        ..Output::default()
    }
}

/// Shows `session` as Markdown in the pager (`$PAGER`, else `less -R`), on the terminal; where
/// there is no pager, on the terminal until Enter.
fn page(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
    session: &str,
) -> std::io::Result<()> {
    use std::process::{Command, Stdio};
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let argv = [command_line::PROGRAM, "export", "--session", session];
    let terminal = Terminal {
        is_terminal: true,
        ..Terminal::piped()
    };
    let history = open(registry, matches, cli, env).map_err(std::io::Error::other)?;
    let args = args::ExportArgs {
        session: Some(session.to_string()),
        format: args::ExportFormat::Markdown,
        all_branches: false,
        no_pager: false,
    };
    match pager(registry, &argv, env, &terminal) {
        Some(pager) => {
            let mut child = Command::new("sh")
                .args(["-c", &pager])
                .stdin(Stdio::piped())
                .stdout(Stdio::from(tty.try_clone()?))
                .stderr(Stdio::from(tty.try_clone()?))
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                export(&history, &args, false, &mut stdin);
            }
            child.wait()?;
        }
        None => {
            let mut out = tty.try_clone()?;
            export(&history, &args, false, &mut out);
            out.write_all(b"\n(Enter to go back)")?;
            out.flush()?;
            let mut line = String::new();
            std::io::BufRead::read_line(&mut std::io::BufReader::new(tty), &mut line)?;
        }
    }
    Ok(())
}

/// The output of a command that failed with `error`: on standard output as JSON, else on
/// standard error, with exit code 2.
fn failed(json: bool, error: &HistoryError) -> Output {
    let printer: &dyn Printer = if json { &Json } else { &Text::default() };
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
}

/// What a search that found nothing adds when a query holds several words: that each is one
/// literal phrase, how to ask for any of them, and `find`, which ranks sessions by the words.
fn phrase_hint(queries: &[String]) -> String {
    let Some(phrase) = queries
        .iter()
        .find(|q| q.split_whitespace().nth(1).is_some())
    else {
        return String::new();
    };
    let words: Vec<String> = phrase.split_whitespace().map(command_line::quote).collect();
    format!(
        "hint: --query {} is one literal phrase; repeat --query for any of several words, or \
         rank sessions by the words: {} find {}\n",
        command_line::quote(phrase),
        command_line::PROGRAM,
        words.join(" ")
    )
}

/// The exit code of a request that found items (0) or none (1).
fn found(any: bool) -> u8 {
    if any {
        0
    } else {
        1
    }
}

/// Answers `list --sessions`: the page on standard output; in text, what it says of the results
/// on standard error, as a list page does. `stale`: the index wants a background update.
fn sessions_answer(
    history: History,
    req: &history_core::ListRequest,
    json: bool,
    render: &dyn history_core::RenderSessions,
    index: &index::Settings,
    stale: &mut bool,
) -> Result<(String, String, u8), HistoryError> {
    let mut page = history.sessions(req, render)?;
    *stale = index.updates_in_background() && page.coverage.stale();
    let said = notice_aside(json, &mut page.notice);
    let found = !page.sessions.is_empty();
    let said = match json || found || page.no_sessions {
        true => said,
        false => said + "no matching sessions\n" + &phrase_hint(&req.queries),
    };
    Ok((render.sessions(&page), said, self::found(found)))
}

/// What a page's notice becomes: in text, a line for standard error, taken off the page; in
/// JSON, it stays in the page.
fn notice_aside(json: bool, notice: &mut Option<String>) -> String {
    match json {
        true => String::new(),
        false => notice
            .take()
            .map_or_else(String::new, |n| format!("notice: {n}\n")),
    }
}

/// Answers `find`: the page on standard output; in text, what it says of the results on
/// standard error. `stale`: the index wants a background update.
fn find_answer(
    history: History,
    req: &history_core::FindRequest,
    json: bool,
    render: &dyn history_core::RenderFind,
    index: &index::Settings,
    stale: &mut bool,
) -> Result<(String, String, u8), HistoryError> {
    let mut page = history.find(req, render)?;
    *stale = index.updates_in_background() && page.coverage.stale();
    let mut said = notice_aside(json, &mut page.notice);
    let any = page.matched > 0;
    if !json && !any && !page.no_sessions {
        said.push_str("nothing matched: no session holds these words (try other words, or list --query for an exact string)\n");
    }
    Ok((render.find(&page), said, found(any)))
}

/// Streams `export`'s document to `output`; what decoding said goes to standard error.
fn export(
    history: &History,
    args: &args::ExportArgs,
    json: bool,
    output: &mut dyn Write,
) -> Output {
    let req = history_core::ExportRequest {
        session: args.session.clone(),
        all_branches: args.all_branches,
    };
    let json = json || args.format == args::ExportFormat::Json;
    // A line-buffered terminal or pipe would make each line of a long document a write.
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, output);
    let output: &mut dyn Write = &mut output;
    // A closed pipe (`| head`) ends the document early, as it ends any command's output.
    let (answer, notices) = if json {
        let mut doc = export::JsonLines::new(output);
        let answer = history.export(&req, &mut doc);
        let _ = doc.finish();
        (answer, Vec::new())
    } else {
        let mut doc = export::Markdown::new(output);
        let answer = history.export(&req, &mut doc);
        (answer, doc.finish().unwrap_or_default())
    };
    match answer {
        Ok(events) => Output {
            stderr: notices.iter().map(|n| format!("notice: {n}\n")).collect(),
            code: if events > 0 { 0 } else { 1 },
            ..Output::default()
        },
        Err(e) => failed(json, &e),
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
    text: &Text,
) {
    // Where items' lines are takes a read up to them: only a verbose answer shows it.
    let history = |consult: mcp::Consult, locations: bool| {
        open(registry, matches, cli, env).map(|h| {
            let projection = match consult {
                mcp::Consult::Search => index.projection(),
                mcp::Consult::WhenAsked => index.projection_when_asked(),
            };
            h.with_locations(locations)
                .with_resumes(true)
                .with_projection(projection)
        })
    };
    let wants_index = |coverage: Option<&history_core::Coverage>| {
        index.updates_in_background() && coverage.is_some_and(|c| c.stale())
    };
    let argv = background_argv(registry, matches);
    let start_index = || (io.start_index)(&argv);
    let backend = mcp::Backend {
        history: &history,
        wants_index: &wants_index,
        start_index: &start_index,
        budget: cli.common.budget,
        text,
        content: env("NOTESOUP_MCP_CONTENT")
            .and_then(|v| mcp::Content::named(&v.to_string_lossy())),
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
            // Help that ends with text of its own (`after_help`) has no newline to end on.
            stdout: format!("{}\n", e.render().to_string().trim_end()),
            ..Output::default()
        },
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Output {
            stderr: e.render().to_string(),
            code: 2,
            ..Output::default()
        },
        _ => fail(&HistoryError::usage(one_line(&e.render().to_string()))),
    }
}

/// clap's error as one line: its message, what it lists below it (the arguments that are
/// missing) and its tip (`to pass '-1' as a value, use '-- -1'`), without the usage and the
/// pointer to `--help` that follow.
fn one_line(rendered: &str) -> String {
    let mut line = String::new();
    let mut listing = false;
    for part in rendered.lines().map(str::trim) {
        if part.starts_with("Usage:") || part.starts_with("For more information") {
            break;
        }
        if part.is_empty() {
            listing = false;
            continue;
        }
        let part = part.trim_start_matches("error: ");
        if line.is_empty() {
            line.push_str(part);
            listing = part.ends_with(':');
        } else if listing {
            line.push_str(if line.ends_with(':') { " " } else { ", " });
            line.push_str(part);
        } else {
            line.push_str("; ");
            line.push_str(part);
        }
    }
    if line.is_empty() {
        line.push_str("bad arguments");
    }
    line
}

/// The text printer for this run: plain when piped, the text scripts rely on; for a person at a
/// terminal (or `--color always`), local times with ages, one line per session, and color unless
/// `--color never` or `NO_COLOR` says otherwise.
fn text_printer(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
    terminal: &Terminal,
) -> Text {
    let color = cli.common.color;
    let people = terminal.is_terminal || color == ColorArg::Always;
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = env("TERM").is_some_and(|t| t == "dumb");
    let (format, queries, context) = match &cli.command {
        // Lines around a match are a line per hit with more of it.
        Command::List(a) => (
            a.format.or(a.context.map(|_| FormatArg::Lines)),
            a.queries.as_slice(),
            a.context,
        ),
        // A ranking is read top down, its hits with it: blocks unless asked.
        Command::Find(a) => (a.format.or(Some(FormatArg::Blocks)), &[][..], None),
        _ => (None, &[][..], None),
    };
    let (layout, sessions_layout) = match format {
        Some(FormatArg::Lines) => (Layout::Lines, Layout::Lines),
        Some(FormatArg::Blocks) => (Layout::Blocks, Layout::Blocks),
        // Hits are skimmed, a hit at a time, and so is what stands for a session; the events
        // of a session being browsed are read whole.
        None if people && !queries.is_empty() => (Layout::Lines, Layout::Lines),
        None if people => (Layout::Blocks, Layout::Lines),
        None => (Layout::Blocks, Layout::Blocks),
    };
    Text {
        prefix: recipe_prefix(registry, matches, cli),
        layout,
        sessions_layout,
        color: match color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => terminal.is_terminal && !no_color && !dumb,
        },
        // Colored text sent down a pipe (`--color always`) is for a person too.
        clock: people.then(|| screen::Clock {
            now: terminal.now,
            zone: match terminal.is_terminal {
                true => terminal.zone.clone(),
                false => jiff::tz::TimeZone::system(),
            },
        }),
        width: terminal.width,
        // A block on a terminal takes one screen at most; `read` shows an event whole.
        height: terminal.is_terminal.then_some(terminal.height).flatten(),
        context,
        show_path: cli.common.show_path,
        filter: Some(history_core::Filter::new(queries, Vec::new(), None, None)),
        home: env("HOME")
            .and_then(|h| h.into_string().ok())
            .filter(|h| h.len() > 1),
        calls: None,
    }
}

/// What a pasted recipe must repeat to mean the same: the program, and the roots, the current
/// session and the budget this run was given.
fn recipe_prefix(registry: &[&Harness], matches: &clap::ArgMatches, cli: &Cli) -> Vec<String> {
    let mut prefix = vec![command_line::PROGRAM.to_string()];
    if cli.common.demo {
        prefix.push("--demo".into());
    }
    for h in registry.iter().filter(|_| !cli.common.demo) {
        if let Some(root) = args::root_flag(matches, h) {
            prefix.push(format!("--{}", h.root_flag));
            prefix.push(root.display().to_string());
        }
    }
    if let Some(current) = &cli.common.current {
        prefix.extend(["--current".to_string(), current.clone()]);
    }
    if let Some(host) = &cli.common.host {
        prefix.extend(["--host".to_string(), host.clone()]);
    }
    // The next page is as long as this one.
    if cli.common.budget != history_core::DEFAULT_BUDGET {
        prefix.extend(["--budget".to_string(), cli.common.budget.to_string()]);
    }
    prefix
}

/// Every harness's source, who is asking, and the overview cache.
fn open(
    registry: &[&Harness],
    matches: &clap::ArgMatches,
    cli: &Cli,
    env: Env<'_>,
) -> Result<History, HistoryError> {
    let demo = match cli.common.demo {
        true => {
            let base = history_cache::cache_root(env)
                .unwrap_or_else(|| std::env::temp_dir().join("notesoup"));
            Some(demo::written(&base, registry)?)
        }
        false => None,
    };
    let root = |h: &Harness| match &demo {
        Some(dir) => Some(dir.join(h.name)),
        None => args::root_flag(matches, h),
    };
    for h in registry {
        h.check_named_root(root(h).as_deref(), env)?;
    }
    let current = current_session(cli.common.current.as_deref(), registry, env)?;
    let source = current_source(cli.common.current.as_deref(), registry, env);
    let host = cli
        .common
        .host
        .clone()
        .or_else(|| history_core::env_text(env, "NOTESOUP_HOST"));
    let cache = history_cache::default_dir(env)
        .map(|dir| Box::new(Cache::new(dir, &cache_version())) as Box<dyn RepresentativeCache>);
    let walks = history_cache::cache_root(env).map(|root| {
        Box::new(history_cache::WalkMemoDir::new(root.join("history-walks")))
            as Box<dyn history_core::WalkMemos>
    });
    Ok(History::from_registry(registry, &root, env)
        .with_current(current, host)
        .with_current_source(source.map(str::to_owned))
        .with_cache(cache)
        .with_walk_memos(walks)
        // Only JSON and --show-path show where items' lines are; text shows how to reopen
        // sessions, which takes no such read.
        .with_locations(cli.common.json || cli.common.show_path)
        .with_empty_hint(format!(
            "To try the demo sessions this program carries: {} list --demo",
            command_line::PROGRAM
        )))
}
