//! The command line: the flags of `list` and `read`, and one root flag per harness of the
//! registry.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgMatches, Args, CommandFactory, Parser, Subcommand, ValueEnum, ValueHint};
use clap_complete::engine::ArgValueCompleter;
use history_core::{Harness, Role};

use crate::epilogue::Epilogue;

/// List, search and read the local session transcripts of Claude Code, Codex CLI and pi.
#[derive(Parser, Debug)]
#[command(name = "notesoup-history", version, long_about = None)]
#[command(after_help = ROOT_AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub common: Common,
}

/// What `notesoup-history --help` ends with: where to start.
const ROOT_AFTER_HELP: &str = "\
Examples:
  notesoup-history list                          the recent sessions, each by its first prompt
  notesoup-history find flaky login test         the sessions where it happened, best first
  notesoup-history list --session claude:4f2a    browse one session
  notesoup-history man --dir ~/.local/share/man/man1
                                                 install the manual: man notesoup-history-list
  source <(notesoup-history completions bash)    complete subcommands, flags and session ids";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Browse one session, search sessions, or show the recent-sessions overview.
    #[command(after_help = LIST_AFTER_HELP)]
    List(ListArgs),
    /// Find the sessions where something happened, in plain words, best first.
    #[command(after_help = FIND_AFTER_HELP)]
    Find(FindArgs),
    /// Show one event in full.
    #[command(after_help = READ_AFTER_HELP)]
    Read(ReadArgs),
    /// Write a whole session as a document (Markdown, or JSON Lines), with no budget.
    #[command(after_help = EXPORT_AFTER_HELP)]
    Export(ExportArgs),
    /// Bring the search index up to date (searches also start this in the background).
    #[command(after_help = INDEX_AFTER_HELP)]
    Index(IndexArgs),
    /// Say where the search index is and what it holds.
    #[command(after_help = DOCTOR_AFTER_HELP)]
    Doctor,
    /// Rebuild the search index, or only the sessions under the given directories.
    #[command(after_help = REINDEX_AFTER_HELP)]
    Reindex(ReindexArgs),
    /// Pick a session full-screen: type to search, Enter prints its resume command.
    #[command(after_help = PICK_AFTER_HELP)]
    Pick(PickArgs),
    /// Print a shell snippet that binds Ctrl-G to the picker (bash, zsh, fish).
    #[command(after_help = INIT_AFTER_HELP)]
    Init(InitArgs),
    /// Serve history_list, history_find and history_read to agents over MCP, on stdin and stdout.
    #[command(after_help = MCP_AFTER_HELP)]
    Mcp,
    /// Print a shell's completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = COMPLETIONS_AFTER_HELP)]
    Completions(CompletionsArgs),
    /// Print the manual: this page in roff, or with --dir every page, one file each.
    #[command(after_help = MAN_AFTER_HELP)]
    Man(ManArgs),
}

/// What `pick --help` ends with.
const PICK_AFTER_HELP: &str = "\
Examples:
  notesoup-history pick                          pick from the recent sessions, type to search
  notesoup-history pick --cwd . --query deploy   start with a search of the sessions that ran here
  $(notesoup-history pick)                       run the chosen session's resume command
  eval \"$(notesoup-history init bash)\"           Ctrl-G opens the picker at the prompt

Keys: type to search (ranked as find ranks; Ctrl-T: literal hits, newest first), Up/Down or
Ctrl-P/Ctrl-N move, PgUp/PgDn scroll the preview, Tab the scope (every session, this
directory, one agent), Enter choose, Ctrl-O read the session in the pager, Ctrl-Y copy the resume
command, Esc or Ctrl-C leave.

The screen is drawn on the terminal (/dev/tty): standard output gets only the chosen session's
resume command (or with --print json its JSON entry). Exit codes: 0 a session chosen, 1 none,
2 an error.";

/// What `init --help` ends with.
const INIT_AFTER_HELP: &str = "\
Examples:
  eval \"$(notesoup-history init bash)\"                    bash, in ~/.bashrc
  eval \"$(notesoup-history init zsh)\"                     zsh, in ~/.zshrc
  notesoup-history init fish | source                     fish, in ~/.config/fish/config.fish

Ctrl-G opens the picker with what the command line holds as its query; the session chosen puts
its resume command on the command line, to run with Enter.";

/// What `read --help` ends with.
const READ_AFTER_HELP: &str = "\
Examples:
  notesoup-history read --session claude:4f2a --seq 31    one event in full
  notesoup-history read --seq 31 --part 1                 the second event at seq 31 of the current session
  notesoup-history read --session claude:4f2a --seq 31 --offset-chars 30000
                                                          the text where the page before cut it";

/// What `export --help` ends with.
const EXPORT_AFTER_HELP: &str = "\
Examples:
  notesoup-history export --session claude:4f2a > s.md          the session as Markdown
  notesoup-history export --session claude:4f2a --format json   the session, then an event a line";

/// What `index --help` ends with.
const INDEX_AFTER_HELP: &str = "\
Examples:
  notesoup-history index           bring the index up to date (Ctrl-C stops it, keeping what it stored)
  notesoup-history index --json    the same, saying what it did as one JSON object";

/// What `doctor --help` ends with.
const DOCTOR_AFTER_HELP: &str = "\
Examples:
  notesoup-history doctor          where the index is, how big, and what it holds
  notesoup-history doctor --json   the same as one JSON object";

/// What `reindex --help` ends with.
const REINDEX_AFTER_HELP: &str = "\
Examples:
  notesoup-history reindex                                   index every session again
  notesoup-history reindex --dir ~/.claude/projects/-w-app   only the sessions under this directory";

/// What `mcp --help` ends with: how agents start it.
const MCP_AFTER_HELP: &str = "\
Examples:
  claude mcp add -s user notesoup-history -- notesoup-history mcp    Claude Code
  codex mcp add notesoup-history -- notesoup-history mcp             Codex";

/// What `completions --help` ends with: how each shell loads the script.
const COMPLETIONS_AFTER_HELP: &str = "\
Examples:
  source <(notesoup-history completions bash)    bash, in ~/.bashrc
  source <(notesoup-history completions zsh)     zsh, in ~/.zshrc after compinit
  notesoup-history completions fish > ~/.config/fish/completions/notesoup-history.fish
                                                 fish

The script calls notesoup-history back for each completion, so that it offers what this version
takes, and the ids of your recent sessions after --session. It needs notesoup-history on $PATH.";

/// What `man --help` ends with.
const MAN_AFTER_HELP: &str = "\
Examples:
  notesoup-history man --dir ~/.local/share/man/man1    install every page: man notesoup-history-list
  notesoup-history man > notesoup-history.1              the main page only";

/// What `list --help` ends with: what a person does first, and what the exit code says.
const LIST_AFTER_HELP: &str = "\
Examples:
  notesoup-history list                                  the recent sessions, each by its first prompt
  notesoup-history list --cwd . --query deploy           search the sessions that ran here or below
  notesoup-history list --session '*' --query deploy     search every session
  notesoup-history list --session claude:4f2a            browse one session (an id or a unique prefix)
  notesoup-history list --session claude:4f2a --before-seq 27
                                                         page back, as the page's `older` recipe says
  notesoup-history read --session claude:4f2a --seq 31   one event in full
  notesoup-history export --session claude:4f2a > s.md   the whole session as Markdown

Exit codes: 0 a result with items, 1 a valid request with none (as grep does), 2 an error (one
line on stderr; with --json, an {\"error\":…} object on stdout).";

/// What `find --help` ends with.
const FIND_AFTER_HELP: &str = "\
Examples:
  notesoup-history find ci stop flaking on the login test    the sessions about it, best first
  notesoup-history find --events paginate the api            the events, best first
  notesoup-history find --cwd . --since 30d flakyLoginTest    only sessions here, this month
  notesoup-history find --explain deploy rollback            each word's part of each score

Words are matched as words: case-folded, reduced to their stem (flaking finds flaky), code
identifiers whole and by their parts. Rare words count more than common ones; what a person typed
more than replies, and replies more than tool output. For an exact string, use list --query.

Exit codes: 0 a result with items, 1 a valid request with none, 2 an error.";

#[derive(Args, Debug)]
pub struct FindArgs {
    /// What happened, in plain words (any order).
    #[arg(required = true, value_name = "TEXT")]
    pub text: Vec<String>,
    /// Only these sessions: an id or prefix, a pattern with `*` (`pi:*`), or the path of one
    /// transcript file. Default: every session.
    #[arg(help_heading = "Selection")]
    #[arg(long, add = session_completer())]
    pub session: Option<String>,
    /// Only sessions that ran in this directory or below it (`.`: here).
    #[arg(help_heading = "Selection")]
    #[arg(long, value_name = "PATH", value_hint = ValueHint::DirPath)]
    pub cwd: Option<PathBuf>,
    /// Only events of this role; repeatable.
    #[arg(help_heading = "Filters")]
    #[arg(long = "role", value_name = "ROLE", value_parser = role_names())]
    pub roles: Vec<String>,
    /// Only events at or after this time (RFC 3339, a date, today, yesterday, or an age: 3h, 7d, 6mo).
    #[arg(help_heading = "Filters")]
    #[arg(long)]
    pub since: Option<String>,
    /// Only events before this time (RFC 3339, a date, today, yesterday, or an age: 3h, 7d, 6mo).
    #[arg(help_heading = "Filters")]
    #[arg(long)]
    pub until: Option<String>,
    /// Rank events rather than sessions.
    #[arg(help_heading = "Output")]
    #[arg(long)]
    pub events: bool,
    /// Show each word's part of each score.
    #[arg(help_heading = "Output")]
    #[arg(long)]
    pub explain: bool,
    /// How many entries at most.
    #[arg(help_heading = "Paging")]
    #[arg(allow_negative_numbers = true, value_parser = at_least_one)]
    #[arg(long, default_value_t = FIND_LIMIT)]
    pub limit: usize,
    /// Only the entries ranked after this one (a `more` recipe's).
    #[arg(help_heading = "Paging")]
    #[arg(long, default_value_t = 0, value_name = "RANK")]
    pub after_rank: usize,
    /// The text layout: a block per entry, or a line per entry. Default: lines on a terminal,
    /// blocks piped.
    #[arg(help_heading = "Output")]
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub format: Option<FormatArg>,
}

/// How many entries `find` shows when not told: a ranking's first page, read top down.
pub const FIND_LIMIT: usize = 10;

#[derive(Args, Debug)]
pub struct PickArgs {
    /// The first query (empty: the recent sessions).
    #[arg(long = "query", short = 'q', value_name = "TEXT", default_value = "")]
    pub query: String,
    /// Start in this scope: an id pattern (`claude:*`) or a prefix. Tab cycles the scopes.
    #[arg(long, add = session_completer())]
    pub session: Option<String>,
    /// Start with the sessions that ran in this directory or below it (`.`: here).
    #[arg(long, value_name = "PATH", value_hint = ValueHint::DirPath)]
    pub cwd: Option<PathBuf>,
    /// Start with literal hits, newest first (as `list --query`), rather than ranked.
    #[arg(long)]
    pub literal: bool,
    /// Run the chosen session's resume command rather than print it.
    #[arg(long)]
    pub exec: bool,
    /// What choosing prints: the resume command, or the session's JSON entry.
    #[arg(long, value_enum, default_value_t = PrintArg::Command, value_name = "WHAT")]
    pub print: PrintArg,
    /// Replay the keys of this file without a terminal and print how long each keystroke took
    /// to show results (for measuring).
    #[arg(long, hide = true, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

/// What choosing a session prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrintArg {
    /// Its resume command.
    Command,
    /// Its JSON entry, as the page's `--json` gives it.
    Json,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: InitShell,
}

/// The shells `init` binds the picker in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write every page (notesoup-history.1, notesoup-history-list.1, …) into this directory,
    /// creating it, rather than print the main page.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Run as the background update a search starts: quietly, at a low priority, and not at all
    /// when another update holds the lock.
    #[arg(long, hide = true)]
    pub background: bool,
}

#[derive(Args, Debug)]
pub struct ReindexArgs {
    /// Only the sessions whose files lie under this directory; repeatable.
    #[arg(long = "dir", value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dirs: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The session: an id or unique prefix, optionally `claude:`/`codex:`/`pi:`-qualified, or
    /// the path of its transcript file (anything with a `/`); anything else with `*` selects many
    /// (`*`, `pi:*`, `claude:4f2*`). Default: the current session, else `*`.
    #[arg(help_heading = "Selection")]
    #[arg(long, add = session_completer())]
    pub session: Option<String>,
    /// Literal, case-insensitive text to find; repeat for any of several.
    #[arg(help_heading = "Filters")]
    #[arg(long = "query", short = 'q')]
    pub queries: Vec<String>,
    /// Only events of this role; repeatable.
    #[arg(help_heading = "Filters")]
    #[arg(long = "role", value_name = "ROLE", value_parser = role_names())]
    pub roles: Vec<String>,
    /// Only events at or after this time (RFC 3339, a date, today, yesterday, or an age: 3h, 7d, 6mo).
    #[arg(help_heading = "Filters")]
    #[arg(long)]
    pub since: Option<String>,
    /// Only events before this time (RFC 3339, a date, today, yesterday, or an age: 3h, 7d, 6mo).
    #[arg(help_heading = "Filters")]
    #[arg(long)]
    pub until: Option<String>,
    /// Only events with a smaller seq (one session only).
    #[arg(help_heading = "Paging")]
    #[arg(long)]
    pub before_seq: Option<u64>,
    /// Only events with a larger seq (one session only); the page then starts at the oldest end.
    #[arg(help_heading = "Paging")]
    #[arg(long)]
    pub after_seq: Option<u64>,
    /// Only hits before this place of a search across sessions, `TIME,SESSION,SEQ,PART`, or
    /// without a query the sessions taken after it (an `older` recipe's `before`).
    #[arg(help_heading = "Paging")]
    #[arg(long, value_name = "PLACE")]
    pub before: Option<String>,
    /// Only hits after this place of a search across sessions, or without a query the sessions
    /// taken before it (a `newer` recipe's `after`); the page then starts at the oldest end.
    #[arg(help_heading = "Paging")]
    #[arg(long, value_name = "PLACE")]
    pub after: Option<String>,
    /// Which end the page or result starts from.
    #[arg(help_heading = "Paging")]
    #[arg(long, value_enum)]
    pub from: Option<FromArg>,
    /// How many items at most.
    #[arg(help_heading = "Paging")]
    // `-1` is a value here, so that it is refused for what it is rather than as an unknown flag.
    #[arg(allow_negative_numbers = true, value_parser = at_least_one)]
    #[arg(long, default_value_t = history_core::DEFAULT_LIMIT)]
    pub limit: usize,
    /// Every branch of a branched session, each event marked with whether it is on the active one.
    #[arg(help_heading = "Filters")]
    #[arg(long)]
    pub all_branches: bool,
    /// Only sessions that ran in this directory or below it (`.`: here); without --session,
    /// every such session rather than the current one.
    #[arg(help_heading = "Selection")]
    #[arg(long, value_name = "PATH", value_hint = ValueHint::DirPath)]
    pub cwd: Option<PathBuf>,
    /// One entry per session with a hit of --query: its hit count, first and last hit, best
    /// hit and resume command, by the latest hit; --limit counts sessions. Without --session it
    /// searches every session.
    #[arg(help_heading = "Output")]
    #[arg(long)]
    pub sessions: bool,
    /// The text layout: a block per item, or a line per item (per session in the overview).
    /// Default: on a terminal, lines for a search, the overview and --sessions, and blocks for
    /// browsing a session; piped, blocks.
    #[arg(help_heading = "Output")]
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub format: Option<FormatArg>,
    /// With each hit of a search, N lines of its text before and after the matching line
    /// (a line per hit otherwise).
    #[arg(help_heading = "Output")]
    #[arg(short = 'C', long = "context", value_name = "N")]
    pub context: Option<usize>,
}

/// The names `--role` takes, as clap offers them to a shell's completion and lists them in an
/// error.
fn role_names() -> PossibleValuesParser {
    PossibleValuesParser::new(Role::ALL.map(Role::as_str))
}

/// What completes a `--session` (and `--current`): the ids of the user's recent sessions.
fn session_completer() -> ArgValueCompleter {
    ArgValueCompleter::new(crate::candidates::sessions)
}

/// A count of items: a page of none would answer nothing.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) if text.starts_with('-') => Err("must be at least 1".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Lines,
    Blocks,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Args, Debug)]
pub struct ReadArgs {
    /// The session: an id or unique prefix, optionally qualified, or the path of its transcript
    /// file. Default: the current session.
    #[arg(long, add = session_completer())]
    pub session: Option<String>,
    /// The event's seq.
    #[arg(long)]
    pub seq: u64,
    /// The part of the line (several events can share a seq).
    #[arg(long, default_value_t = 0)]
    pub part: u32,
    /// Start the text this many characters in (to continue a cut text).
    #[arg(long, default_value_t = 0)]
    pub offset_chars: usize,
    /// Print to the terminal directly rather than through $PAGER (else `less -FRX`).
    #[arg(long)]
    pub no_pager: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The session: an id or unique prefix, optionally qualified, or the path of its transcript
    /// file. Default: the current session.
    #[arg(long, add = session_completer())]
    pub session: Option<String>,
    /// The document: Markdown to read, or JSON Lines (the session, then one item per event).
    #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
    pub format: ExportFormat,
    /// Every branch of a branched session, each event marked with whether it is on the active one.
    #[arg(long)]
    pub all_branches: bool,
    /// Print to the terminal directly rather than through $PAGER (else `less -FRX`).
    #[arg(long)]
    pub no_pager: bool,
}

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A Markdown document.
    Markdown,
    /// JSON Lines.
    Json,
}

#[derive(Args, Debug)]
pub struct Common {
    /// The output budget in bytes; the whole output fits in it.
    #[arg(help_heading = "Output")]
    #[arg(long, global = true, default_value_t = history_core::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Print one JSON object instead of text.
    #[arg(help_heading = "Output")]
    #[arg(long, global = true)]
    pub json: bool,
    /// The session you are working in, as HARNESS:ID (default: $NOTESOUP_CURRENT_SESSION, or
    /// what the agent sets, such as $CLAUDE_CODE_SESSION_ID for Claude Code).
    #[arg(help_heading = "Selection")]
    #[arg(long, global = true, value_name = "HARNESS:ID", add = session_completer())]
    pub current: Option<String>,
    /// The harness you are working in, tried first for unqualified ids (default: $NOTESOUP_HOST).
    #[arg(help_heading = "Selection")]
    #[arg(long, global = true)]
    pub host: Option<String>,
    /// Neither read nor update the search index: scan the transcripts (also
    /// NOTESOUP_HISTORY_INDEX=off).
    #[arg(help_heading = "Sources")]
    #[arg(long, global = true)]
    pub no_index: bool,
    /// Read the demo sessions the binary carries (a few real ones of each agent) instead of
    /// yours, without the search index.
    #[arg(help_heading = "Sources")]
    #[arg(long, global = true)]
    pub demo: bool,
    /// Color, highlighted matches, local times with their age and one line per session: on a
    /// terminal (auto, unless NO_COLOR is set), always, or never.
    #[arg(help_heading = "Output")]
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
    /// End each item and session with its transcript file (and line, where known).
    #[arg(help_heading = "Output")]
    #[arg(long, global = true)]
    pub show_path: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FromArg {
    Newest,
    Oldest,
}

impl From<FromArg> for history_core::End {
    fn from(f: FromArg) -> Self {
        match f {
            FromArg::Newest => history_core::End::Newest,
            FromArg::Oldest => history_core::End::Oldest,
        }
    }
}

/// The widest help clap wraps to, however wide the terminal: longer lines are hard to read.
pub const MAX_HELP_WIDTH: usize = 100;

/// The global flags each subcommand has no use for: accepted there as everywhere, so that no
/// command line breaks, but left out of its help, its manual page and its completions (as a
/// hidden flag of its own). `ROOTS` stands for every harness's root flag.
const UNUSED_GLOBALS: &[(&str, &[&str])] = &[
    ("json", &["mcp", "completions", "man", "pick", "init"]),
    (
        "budget",
        &[
            "export",
            "index",
            "doctor",
            "reindex",
            "completions",
            "man",
            "pick",
            "init",
        ],
    ),
    (
        "color",
        &[
            "export",
            "index",
            "doctor",
            "reindex",
            "mcp",
            "completions",
            "man",
            "init",
        ],
    ),
    (
        "show_path",
        &[
            "export",
            "index",
            "doctor",
            "reindex",
            "mcp",
            "completions",
            "man",
            "pick",
            "init",
        ],
    ),
    (
        "current",
        &["index", "doctor", "reindex", "completions", "man", "init"],
    ),
    (
        "host",
        &["index", "doctor", "reindex", "completions", "man", "init"],
    ),
    (
        "no_index",
        &["read", "export", "completions", "man", "init"],
    ),
    (
        "demo",
        &["doctor", "index", "reindex", "completions", "man", "init"],
    ),
    (ROOTS, &["doctor", "completions", "man", "init"]),
];

/// What [`UNUSED_GLOBALS`] names every root flag by.
const ROOTS: &str = "ROOTS";

/// The command with a root flag for every harness of `registry`, each subcommand's help showing
/// the global flags it uses, wrapped to [`MAX_HELP_WIDTH`].
pub fn command(registry: &[&Harness]) -> clap::Command {
    command_for_width(registry, MAX_HELP_WIDTH)
}

/// [`command`], its help wrapped to `width` columns (at most [`MAX_HELP_WIDTH`]).
pub fn command_for_width(registry: &[&Harness], width: usize) -> clap::Command {
    let width = width.min(MAX_HELP_WIDTH);
    fit_epilogues(command_to_parse(registry, width), width)
}

/// [`command_for_width`] as parsing needs it: without the text each help ends with laid out,
/// which was half of what a query spent before its first file (1.5 ms of `--version`'s 1.7),
/// and which only help shows.
pub fn command_to_parse(registry: &[&Harness], width: usize) -> clap::Command {
    let width = width.min(MAX_HELP_WIDTH);
    let mut cmd = with_roots(registry).term_width(width);
    let globals: Vec<Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    for (id, unused) in UNUSED_GLOBALS {
        let ids: Vec<&str> = match *id {
            ROOTS => registry.iter().map(|h| h.root_flag).collect(),
            id => vec![id],
        };
        for arg in globals
            .iter()
            .filter(|a| ids.contains(&a.get_id().as_str()))
        {
            // A subcommand's own flag of the same id is not overridden by the global one when
            // the command is built, and its value still reaches the global one's.
            let hidden = arg.clone().global(false).hide(true);
            for name in *unused {
                cmd = cmd.mut_subcommand(name, |sub| sub.arg(hidden.clone()));
            }
        }
    }
    cmd
}

/// `cmd` with the text each help ends with laid out for `width` columns: clap would wrap an
/// example's explanation under its command.
fn fit_epilogues(cmd: clap::Command, width: usize) -> clap::Command {
    let fit = |c: clap::Command| match c.get_after_help().map(|t| t.to_string()) {
        Some(text) => c.after_help(Epilogue::parse(&text).layout(width)),
        None => c,
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(fit(cmd), |cmd, name| cmd.mut_subcommand(name, fit))
}

/// The command with a root flag for every harness of `registry`.
fn with_roots(registry: &[&Harness]) -> clap::Command {
    registry.iter().fold(Cli::command(), |cmd, h| {
        cmd.arg(
            Arg::new(h.root_flag)
                .long(h.root_flag)
                .global(true)
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .value_hint(ValueHint::DirPath)
                .help_heading("Sources")
                .help(format!(
                    "{} (default: ${}, {})",
                    h.root_about, h.root_env, h.default_root_about
                )),
        )
    })
}

/// The root a harness's flag names, wherever on the command line it was given.
pub fn root_flag(matches: &ArgMatches, harness: &Harness) -> Option<PathBuf> {
    let mut m = Some(matches);
    while let Some(here) = m {
        if let Some(root) = here.get_one::<PathBuf>(harness.root_flag) {
            return Some(root.clone());
        }
        m = here.subcommand().map(|(_, sub)| sub);
    }
    None
}
