//! Decodes Claude Code session transcripts (`~/.claude/projects/<project>/<session-id>.jsonl`)
//! into notesoup-history events.
//!
//! It owns where Claude's files are ([`default_root`], [`Claude::discover`](history_core::Transcript::discover))
//! and how one file becomes events: the conversation graph of `parentUuid` links, the choice of
//! the live leaf, compaction boundaries crossed through `logicalParentUuid`, parallel tool
//! results, and which lines are dialogue, tool traffic or injected context. It does not page,
//! match or render; that is `history-core`'s and the CLI's work.
//!
//! ```no_run
//! use history_core::{Corpus, Transcript};
//! let claude = decode_claude::Claude::new("/home/me/.claude/projects");
//! let corpus = Corpus::new(vec![Box::new(claude)]);
//! for session in corpus.discover() {
//!     println!("{} {}", session.key, session.path.display());
//! }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod discover;
mod graph;
mod line;
mod render;
mod table;

use std::path::PathBuf;

use history_core::Harness;
use history_core::Resume;
use history_core::{parse_object_str, top_level, Damage, LineTest, LineTime, Lines, TopLevel};
use history_core::{snapshot, Resumed, Snapshot, WantSnapshot};
use history_core::{DecodeError, Decoded, Event, SessionFile, Timestamp, Transcript, Walk};
use history_raw::json::repair_surrogates;

pub use discover::default_root;

/// Claude Code in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: discover::NAME,
    root_flag: "claude-root",
    root_env: "NOTESOUP_HISTORY_CLAUDE_ROOT",
    root_about: "Claude Code's projects directory",
    default_root_about: "$CLAUDE_CONFIG_DIR/projects, ~/.claude/projects",
    default_root: |env| default_root(env),
    session_env: Some("CLAUDE_CODE_SESSION_ID"),
    open: |root| Box::new(Claude::new(root)),
};

/// Claude Code transcripts under one `projects` directory.
#[derive(Clone, Debug)]
pub struct Claude {
    root: PathBuf,
}

impl Claude {
    /// Transcripts under `root`, the `projects` directory.
    pub fn new(root: impl Into<PathBuf>) -> Claude {
        Claude { root: root.into() }
    }
}

impl Transcript for Claude {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    fn discover(&self) -> Vec<SessionFile> {
        discover::sessions(&self.root, &Walk::none())
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        discover::sessions(&self.root, walk)
    }

    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        want: WantSnapshot,
    ) -> Result<Resumed, DecodeError> {
        let Some(from): Option<Option<(&Snapshot, State)>> = snapshot::with_state(from) else {
            return Ok(Resumed::Declined);
        };
        // A snapshot that names nodes or ids it does not hold (a damaged store) is declined,
        // as one that does not load is.
        if from
            .as_ref()
            .is_some_and(|(_, state)| !state.graph.is_whole())
        {
            return Ok(Resumed::Declined);
        }
        let (decoded, snapshot) = decode(file, sink, lines, from, want == WantSnapshot::Yes)?;
        Ok(Resumed::Done(decoded, snapshot))
    }

    /// `claude --resume <id>`, run in the session's directory: Claude looks a session up in the
    /// project of the directory it runs in.
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        Some(Resume {
            argv: vec!["claude".into(), "--resume".into(), file.key.id.clone()],
            cwd: first_cwd(&file.path),
        })
    }

    /// The first lines of the conversation graph carry it; a session whose first lines do not
    /// is decoded for it.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        match graph_cwd(&file.path) {
            Some(found) => found,
            None => {
                let nothing: LineTest<'_> = &|_: &[u8]| false;
                decode(file, &mut |_| {}, Some(nothing), None, false)
                    .ok()?
                    .0
                    .meta
                    .cwd
            }
        }
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        if let Some(time) = LineTime::under_key(line, "timestamp") {
            return time;
        }
        // As serde reads `Stamp`: a string (a time or not), null or nothing; else no parse.
        match top_level(line, "timestamp") {
            Some(TopLevel::Str(s)) => return LineTime::of(Timestamp::parse_rfc3339(s)),
            Some(TopLevel::Missing | TopLevel::Null) => return LineTime::Untimed,
            Some(TopLevel::Other) => return LineTime::Unknown,
            None => {}
        }
        /// A line's `timestamp`, read as [`line::Line`] reads it.
        #[derive(serde::Deserialize)]
        struct Stamp {
            #[serde(default)]
            timestamp: Option<String>,
        }
        let stamp = std::str::from_utf8(line).ok().and_then(parse::<Stamp>);
        stamp.map_or(LineTime::Unknown, |s| {
            LineTime::of(s.timestamp.as_deref().and_then(Timestamp::parse_rfc3339))
        })
    }

    /// The line through [`line::decode`], as [`decode`] reads it, with no other line known: a
    /// result then names no tool, which is all that differs.
    fn replay(&self, seq: u64, bytes: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        let parsed = simdutf8::basic::from_utf8(bytes)
            .ok()
            .and_then(parse::<line::Line>);
        if let Some(parsed) = parsed {
            let mut graph = graph::Graph::with_capacity(1);
            let mut titles = line::Titles::default();
            let mut tools = render::ToolNames::default();
            line::decode(seq, parsed, &mut graph, &mut titles, &mut tools, sink);
        }
        true
    }
}

/// How many lines [`Transcript::resume`] reads looking for the session's directory: the first
/// lines that are not snapshots or summaries carry it.
const CWD_LINES: usize = 64;

/// The working directory the session's first lines name (every dialogue line carries `cwd`).
fn first_cwd(path: &std::path::Path) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Cwd {
        #[serde(default)]
        cwd: Option<String>,
    }
    let mut lines = Lines::open_head(path).ok()?;
    for _ in 0..CWD_LINES {
        let line = lines.next_line().ok()??;
        let cwd = std::str::from_utf8(line.bytes)
            .ok()
            .and_then(parse::<Cwd>)
            .and_then(|c| c.cwd)
            .filter(|c| !c.is_empty());
        if cwd.is_some() {
            return cwd;
        }
    }
    None
}

/// The session's working directory as a decode records it ([`line::Titles`]: the first `cwd`
/// of a line of the conversation graph), from the file's first lines: `Some(cwd)` when they
/// tell, `None` when the answer lies further in (or the file cannot be read here).
fn graph_cwd(path: &std::path::Path) -> Option<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Place {
        #[serde(default, rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        uuid: Option<String>,
        #[serde(default)]
        cwd: Option<String>,
    }
    let mut lines = Lines::open_head(path).ok()?;
    for _ in 0..CWD_LINES {
        let Some(line) = lines.next_line().ok()? else {
            // The whole file is read: no line of it says.
            return Some(None);
        };
        if line.bytes.trim_ascii().is_empty() {
            continue;
        }
        let Some(place) = simdutf8::basic::from_utf8(line.bytes)
            .ok()
            .and_then(parse::<Place>)
        else {
            // A damaged line: whether a decode would take anything from it is its business.
            return None;
        };
        let in_graph = matches!(
            place.kind.as_deref(),
            Some("user" | "assistant" | "system" | "attachment" | "progress")
        ) && place.uuid.is_some();
        if in_graph && place.cwd.is_some() {
            return Some(place.cwd);
        }
    }
    None
}

/// Parses a line as an object, repairing lone surrogate escapes (an emoji cut in half) first
/// when they are what stops it.
fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    parse_object_str(text).or_else(|| {
        let fixed = repair_surrogates(text.as_bytes())?;
        parse_object_str(std::str::from_utf8(&fixed).ok()?)
    })
}

/// What a decode knows of the lines read so far: all a resumed decode needs of them.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct State {
    graph: graph::Graph,
    damage: Damage,
    meta: line::Titles,
    tools: render::ToolNames,
    any_line: bool,
}

/// Streams the file once (from a snapshot on, with the state it holds). Lines
/// that `wanted` rules out are read for the graph alone, as are lines whose content cannot be
/// decoded (an out-of-range number, say) but whose structure can: the [`line::GraphLine`] read
/// is the more lenient one, so that both reads place the same lines in the graph, and only the
/// notices can differ (a line never decoded is never found wanting). With `keep`, it also
/// returns where it stopped.
fn decode(
    file: &SessionFile,
    sink: &mut dyn FnMut(Event),
    wanted: Option<LineTest<'_>>,
    from: Option<(&Snapshot, State)>,
    keep: bool,
) -> Result<(Decoded, Option<Snapshot>), DecodeError> {
    let mut lines = snapshot::lines_from(&file.path, from.as_ref().map(|f| f.0))?;
    let mut state = match from {
        Some((_, state)) => state,
        // Lines run to a few kilobytes: room for a line per 8 KiB saves most of the graph's
        // regrowing without reserving much that a file of long lines never fills.
        None => State {
            graph: graph::Graph::with_capacity((file.size / 8192).min(1 << 20) as usize),
            ..State::default()
        },
    };
    let mut stop = snapshot::Stop::new(keep);
    while let Some(l) = lines.next_line()? {
        // A last line without its newline may be written on, blank so far or not.
        stop.before(&l, &state, None);
        if l.bytes.trim_ascii().is_empty() {
            continue;
        }
        let State {
            graph,
            damage,
            meta,
            tools,
            any_line,
        } = &mut state;
        *any_line = true;
        // Invalid UTF-8 anywhere makes a line unreadable, whichever fields are parsed.
        let Ok(text) = simdutf8::basic::from_utf8(l.bytes) else {
            damage.skip(&l);
            continue;
        };
        let full = wanted.is_none_or(|w| w(l.bytes));
        if full {
            if let Some(parsed) = parse::<line::Line>(text) {
                line::decode(l.seq, parsed, graph, meta, tools, sink);
                continue;
            }
            // Its events are lost; its place in the graph may still be read.
            damage.skip(&l);
        }
        match line::GraphLine::skim(text).or_else(|| parse::<line::GraphLine>(text)) {
            Some(parsed) => line::place_in_graph(l.seq, parsed, graph, meta, tools),
            None if !full => damage.skip(&l),
            None => {}
        }
    }
    let snapshot = stop.end(lines.end(), &state, None);
    let mut notices = Vec::new();
    state.damage.report(&mut notices);
    let branch = if state.any_line {
        let chosen = state.graph.select().map_err(DecodeError::Invalid)?;
        notices.extend(chosen.notices);
        Some(chosen.seqs)
    } else {
        Some(Vec::new())
    };
    let decoded = Decoded {
        branch,
        notices,
        meta: state.meta.into_meta(),
        lineage: vec![file.path.clone()],
        lineage_open: false,
    };
    Ok((decoded, snapshot))
}
