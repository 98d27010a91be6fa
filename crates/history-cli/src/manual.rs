//! The manual: a roff page for the command and one for each subcommand
//! (`notesoup-history-list(1)`, …), each with the sections a manual page has (NAME, SYNOPSIS,
//! DESCRIPTION, OPTIONS, EXAMPLES, EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO). clap_mangen
//! renders what clap knows (the synopsis and the options); the rest is written here, from the
//! same help texts and the harnesses of the registry.

use std::path::{Path, PathBuf};

use history_core::{Harness, HistoryError};

use crate::command_line::PROGRAM;
use crate::epilogue::Epilogue;

/// The manual's section: user commands.
const SECTION: &str = "1";

/// One page: its name (`notesoup-history-list`) and its roff text.
pub struct Page {
    /// The page's name, which is also its file's name without `.1`.
    pub name: String,
    /// The page.
    pub roff: String,
}

/// Every page: the command's, then one per subcommand that help lists.
pub fn pages(registry: &[&Harness]) -> Vec<Page> {
    let mut cmd = crate::args::command(registry);
    // Built, the subcommands hold the global flags they show and know their full names.
    cmd.build();
    let names = page_names(&cmd);
    let subs = cmd.get_subcommands().filter(|s| listed(s));
    std::iter::once((PROGRAM.to_string(), &cmd))
        .chain(subs.map(|s| (format!("{PROGRAM}-{}", s.get_name()), s)))
        .map(|(name, cmd)| Page {
            roff: page(registry, cmd, &name, &names),
            name,
        })
        .collect()
}

/// Writes every page into `dir` (created if need be) as `NAME.1`; returns the files written.
pub fn write_pages(registry: &[&Harness], dir: &Path) -> Result<Vec<PathBuf>, HistoryError> {
    let refuse = |what: &str, path: &Path, e: std::io::Error| {
        HistoryError::usage(format!(
            "man --dir: cannot {what} {}: {}",
            path.display(),
            reason(&e)
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| refuse("create", dir, e))?;
    let mut written = Vec::new();
    for page in pages(registry) {
        let file = dir.join(format!("{}.{SECTION}", page.name));
        std::fs::write(&file, page.roff).map_err(|e| refuse("write", &file, e))?;
        written.push(file);
    }
    Ok(written)
}

/// An I/O error as a short reason, without the `(os error 13)` a person has no use for.
fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "no such directory".into(),
        std::io::ErrorKind::AlreadyExists => "a file is in the way".into(),
        _ => {
            let text = e.to_string();
            match text.split_once(" (os error") {
                Some((reason, _)) => reason.to_lowercase(),
                None => text,
            }
        }
    }
}

/// Whether a subcommand gets a page: those help lists (not `help`, nor hidden ones).
fn listed(sub: &clap::Command) -> bool {
    !sub.is_hide_set() && sub.get_name() != "help"
}

/// The names of every page, for SEE ALSO.
fn page_names(cmd: &clap::Command) -> Vec<String> {
    let subs = cmd.get_subcommands().filter(|s| listed(s));
    std::iter::once(PROGRAM.to_string())
        .chain(subs.map(|s| format!("{PROGRAM}-{}", s.get_name())))
        .collect()
}

/// The page of `cmd`, named `name`.
fn page(registry: &[&Harness], cmd: &clap::Command, name: &str, all: &[String]) -> String {
    let man = clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .section(SECTION)
        .source(format!("{PROGRAM} {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    let text = cmd
        .get_after_help()
        .map(|t| t.to_string())
        .unwrap_or_default();
    let help = Epilogue::parse(&text);
    let mut out = rendered(|w| man.render_title(w), true);
    out += &format!(".SH NAME\n{} \\- {}\n", escape(name), escape(&about(cmd)));
    out += &rendered(|w| man.render_synopsis_section(w), false);
    out += &description(cmd, &help);
    out += &options(&man);
    if !help.examples.is_empty() {
        out += &examples(&help.examples);
    }
    out += EXIT_STATUS;
    out += &environment(registry);
    out += &files(registry);
    let others: Vec<String> = all
        .iter()
        .filter(|n| *n != name)
        .map(|n| format!("\\fB{}\\fR({SECTION})", escape(n)))
        .collect();
    out += &format!(".SH \"SEE ALSO\"\n{}\n", others.join(",\n"));
    // A terminal without a UTF-8 locale renders pages in ASCII, where groff has no ellipsis.
    out.replace('…', "...")
}

/// A section as clap_mangen renders it; `preamble`: with the string definitions that each
/// rendering starts with (kept once, in the page's first part).
fn rendered(render: impl Fn(&mut Vec<u8>) -> std::io::Result<()>, preamble: bool) -> String {
    let mut out = Vec::new();
    // Rendering into memory cannot fail.
    let _ = render(&mut out);
    String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| preamble || !(l.starts_with(".ie \\n(.g") || l.starts_with(".el .ds Aq")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// What the command does, in one line, as help says it.
fn about(cmd: &clap::Command) -> String {
    cmd.get_about().map(|a| a.to_string()).unwrap_or_default()
}

/// DESCRIPTION: what help says first, then what its epilogue explains besides examples and
/// exit codes.
fn description(cmd: &clap::Command, help: &Epilogue) -> String {
    let mut out = format!(".SH DESCRIPTION\n{}\n", escape(&sentence(&about(cmd))));
    if cmd.get_name() == PROGRAM {
        out += &subcommands(cmd);
    }
    // EXIT STATUS says what the exit codes are.
    let paragraphs = help
        .paragraphs
        .iter()
        .filter(|p| !p.starts_with("Exit codes:"));
    for paragraph in paragraphs {
        out += &format!(".PP\n{}\n", escape(paragraph));
    }
    out
}

/// The root page's list of subcommands, each with its own page.
fn subcommands(cmd: &clap::Command) -> String {
    let mut out = String::from(".PP\nEach command has a page of its own:\n");
    for sub in cmd.get_subcommands().filter(|s| listed(s)) {
        out += &format!(
            ".TP\n\\fB{}\\fR({SECTION})\n{}\n",
            escape(&format!("{PROGRAM}-{}", sub.get_name())),
            escape(&sentence(&about(sub)))
        );
    }
    out
}

/// `text` ended with a full stop, as a sentence of a page reads (help's lines have none).
fn sentence(text: &str) -> String {
    match text.ends_with(['.', '!', '?']) {
        true => text.to_string(),
        false => format!("{text}."),
    }
}

/// OPTIONS: clap_mangen's sections, one per help heading, as subsections of one OPTIONS
/// section.
fn options(man: &clap_mangen::Man) -> String {
    let mut out = String::from(".SH OPTIONS\n");
    for line in rendered(|w| man.render_options_section(w), false).lines() {
        match line.strip_prefix(".SH ") {
            Some("OPTIONS") => {}
            Some(heading) => out += &format!(".SS {}\n", title_case(heading.trim_matches('"'))),
            None => out += &format!("{line}\n"),
        }
    }
    out
}

/// `SELECTION` as `Selection`.
fn title_case(heading: &str) -> String {
    let lower = heading.to_lowercase();
    let mut chars = lower.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// EXAMPLES: each command line in bold, what it does below it.
fn examples(examples: &[(String, String)]) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    for (command, what) in examples {
        out += &format!(".TP\n\\fB{}\\fR\n", escape(command));
        if !what.is_empty() {
            out += &format!("{}\n", escape(&sentence(&capitalized(what))));
        }
    }
    out
}

/// `text` with its first letter a capital.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// EXIT STATUS, the same for every command.
const EXIT_STATUS: &str = "\
.SH \"EXIT STATUS\"
.TP
0
A result with items.
.TP
1
A valid request with none (as \\fBgrep\\fR(1) exits).
.TP
2
An error: one line on standard error (with \\fB\\-\\-json\\fR, an error object on standard output).
.TP
130
An index update stopped by Ctrl\\-C.
";

/// ENVIRONMENT: the variables the command reads, every harness's among them.
fn environment(registry: &[&Harness]) -> String {
    let mut vars: Vec<(String, String)> = vec![
        (
            "NOTESOUP_CURRENT_SESSION".into(),
            "The session you are working in, as HARNESS:ID (as \\-\\-current).".into(),
        ),
        (
            "NOTESOUP_HOST".into(),
            "The harness you are working in, tried first for unqualified ids (as \\-\\-host)."
                .into(),
        ),
        (
            "NOTESOUP_HISTORY_INDEX".into(),
            "off: neither read nor update the search index (as \\-\\-no\\-index); read: \
             consult it, but never start an update."
                .into(),
        ),
    ];
    for h in registry {
        vars.push((
            h.root_env.into(),
            format!(
                "{} (as \\-\\-{}); else {}.",
                escape(h.root_about),
                escape(h.root_flag),
                escape(h.default_root_about)
            ),
        ));
        if let Some(session) = h.session_env {
            vars.push((
                session.into(),
                format!(
                    "Set by the agent in the commands it runs: the current {} session, \
                     when NOTESOUP_CURRENT_SESSION is not set.",
                    escape(h.name)
                ),
            ));
        }
    }
    vars.extend([
        (
            "XDG_CACHE_HOME".into(),
            "Where the cache and the search index live (see FILES).".into(),
        ),
        (
            "HOME".into(),
            "The default roots and cache are under it.".into(),
        ),
        (
            "NO_COLOR".into(),
            "When set and not empty, no color with \\-\\-color auto.".into(),
        ),
        (
            "TERM".into(),
            "dumb: no color with \\-\\-color auto.".into(),
        ),
        (
            "COMPLETE".into(),
            "Set by a completion script (see \\fBnotesoup\\-history\\-completions\\fR(1)) \
             when it asks for completions."
                .into(),
        ),
    ]);
    let mut out = String::from(".SH ENVIRONMENT\n");
    for (var, what) in vars {
        out += &format!(".TP\n\\fB{}\\fR\n{what}\n", escape(&var));
    }
    out
}

/// FILES: where transcripts are read, and the cache and index written.
fn files(registry: &[&Harness]) -> String {
    let mut out = String::from(".SH FILES\n");
    for h in registry {
        out += &format!(
            ".TP\n{}\n{}: the transcripts read (unless {} or \\-\\-{} names another).\n",
            escape(h.default_root_about),
            escape(h.root_about),
            escape(h.root_env),
            escape(h.root_flag)
        );
    }
    out += "\
.TP
$XDG_CACHE_HOME/notesoup/history, else ~/.cache/notesoup/history
The overview cache: what each session is about, kept to list them quickly. Safe to delete.
.TP
$XDG_CACHE_HOME/notesoup/history\\-search/v1.sqlite, else ~/.cache/notesoup/history\\-search/v1.sqlite
The search index (on macOS under ~/Library/Caches/notesoup). Safe to delete; \\fBnotesoup\\-history\\-index\\fR(1) builds it again.
.TP
$XDG_CACHE_HOME/notesoup/history\\-walks, else ~/.cache/notesoup/history\\-walks
What the last walk of each root found, to walk it again quickly.
";
    out
}

/// `text` as roff text: backslashes and hyphens escaped, and a line that would start with a
/// control character kept as text.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    match escaped.starts_with(['.', '\'']) {
        true => format!("\\&{escaped}"),
        false => escaped,
    }
}
