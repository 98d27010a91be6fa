//! Decodes the session transcripts ("rollouts") that the OpenAI Codex CLI writes under
//! `$CODEX_HOME/sessions`, for notesoup-history: where they are, how one becomes a list of
//! [`Event`](history_core::Event)s, and which files a session is built from.
//!
//! It is for reading: it never writes, renames or locks a transcript, and it does no
//! selection, matching, paging or rendering (that is `history-core`'s and the CLI's work).
//!
//! ```
//! use decode_codex::{default_root, Codex};
//! use history_core::Transcript;
//!
//! let env = |name: &str| (name == "CODEX_HOME").then(|| "/nonexistent/codex".into());
//! let root = default_root(env).unwrap();
//! assert_eq!(root, std::path::Path::new("/nonexistent/codex/sessions"));
//! let codex = Codex::new(root);
//! assert_eq!(codex.harness(), "codex");
//! assert!(codex.discover().is_empty()); // a missing root is simply empty
//! ```
//!
//! # Files
//!
//! `<root>/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`, the same compressed as
//! `….jsonl.zst` (streamed through zstd; the plain file wins when both exist), files written
//! after a revert (`…-<thread id>_<rollout id>.jsonl`) and the older flat layout
//! (`<root>/rollout-….jsonl`). A session's id is its thread id, taken from the file name
//! (it equals `session_meta.payload.id`), never the root `session_id` of an agent tree.
//! Discovery never follows a symbolic link to a directory.
//!
//! # Generations
//!
//! Every generation of the format decodes: the early files whose first line is
//! `{id, timestamp, instructions}` followed by bare response items (and `record_type: state`
//! markers), the `{timestamp, type, payload}` envelope, and its paginated form with `ordinal`
//! and `history_base`. Unknown line, item and event types, unknown fields and unknown enum
//! values are ignored, never fatal. Damaged lines are skipped and reported in notices.
//!
//! # Events
//!
//! The dialogue is what Codex itself shows: `user_message`/`agent_message`/`agent_reasoning`
//! events (or `item_completed` items in paginated files, or the items themselves in early
//! files), each message shown once although Codex logs it both as an item and as an event.
//! Developer messages and injected blocks (`<environment_context>`, AGENTS.md, …) are
//! `context`; tool calls (`"<tool>: <command or input>"`) and outputs are `tool`, the
//! multi-agent `collab_*_end` events being the outputs of the `spawn_agent`, `send_input`,
//! `wait_agent` and `close_agent` calls they end. A `thread_rolled_back` takes the turns it
//! removes off the session's branch; a `compacted` line of the context windows of 0.125+ leaves
//! a `compacted: window N` marker. The `session_meta` lines after the first (re-written every
//! turn by Codex Desktop, or copied from a fork's parent) show nothing.
//!
//! # Sub-agents
//!
//! A spawned sub-agent (`source.subagent.thread_spawn`) is a session of its own: it inherits
//! nothing, its prompts are what its parent sent it (its `user_message`s, or in multi-agent v2
//! the `inter_agent_communication` addressed to it), and its
//! [`SessionMeta::parent`](history_core::SessionMeta::parent) names the parent thread.
//!
//! # Searches
//!
//! [`decode`](history_core::Transcript::decode) with a raw line test reads a line the test
//! rules out for its structure alone: tool outputs and inputs, encrypted reasoning, token
//! counts and turn contexts are skipped unparsed, while what ties lines together (turns and
//! rollbacks, call ids and tool names, the texts a message item and its event twin are paired
//! by, thread names) is kept. Such a line is projected like any other and its events are held
//! back, so the events of the other lines are exactly those of a full decode. Of a skipped value
//! it keeps whether it gives any text, so the branch a rollback leaves (the lines that show an
//! event) is the full decode's too, and the file is read once.
//!
//! # Seqs
//!
//! An event's `seq` is the 1-based line number in the session's file. A thread that inherits
//! history by reference (`session_meta.history_base`, paginated forks and reverts) shows that
//! history first: its K inherited lines take seqs `1..=K` in lineage order (the oldest
//! ancestor's inherited lines first, numbered by their position in that chain), and the
//! thread's own line `n` takes seq `K + n`. History that older forks copied into their own file
//! keeps its line numbers there.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use history_core::Harness;
use history_core::{parse_object, top_level, LineTest, LineTime, TopLevel};
use history_core::{snapshot, Resumed, Snapshot, WantSnapshot};
use history_core::{DecodeError, Event, SessionFile, Timestamp, Transcript, Walk};
use history_core::{Origin, Resume};
use serde_json::{Map, Value};

mod decode;
mod discover;
mod header;
mod lineage;
mod project;
mod prune;
mod reader;
mod render;

/// The Codex CLI in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: discover::NAME,
    root_flag: "codex-root",
    root_env: "NOTESOUP_HISTORY_CODEX_ROOT",
    root_about: "Codex's sessions directory",
    default_root_about: "$CODEX_HOME/sessions, ~/.codex/sessions",
    default_root: |env| default_root(env),
    // Codex sets it for the commands its shell tool runs (openai/codex#10096).
    session_env: Some("CODEX_THREAD_ID"),
    open: |root| Box::new(Codex::new(root)),
};

/// The Codex CLI's transcripts under one sessions root.
#[derive(Clone, Debug)]
pub struct Codex {
    root: PathBuf,
}

impl Codex {
    /// Transcripts under `root`, the sessions directory (`~/.codex/sessions`).
    pub fn new(root: impl Into<PathBuf>) -> Codex {
        Codex { root: root.into() }
    }

    /// The sessions directory this source reads.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// Codex's own sessions root: `$CODEX_HOME/sessions`, else `$HOME/.codex/sessions`; `None` when
/// neither is set. `env` looks a variable up. [`HARNESS`]'s root is `NOTESOUP_HISTORY_CODEX_ROOT`
/// before either.
pub fn default_root(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CODEX_HOME")
        .map(|home| home.join("sessions"))
        .or_else(|| var("HOME").map(|home| home.join(".codex").join("sessions")))
}

impl Transcript for Codex {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    fn discover(&self) -> Vec<SessionFile> {
        discover::sessions(HARNESS.name, &self.root, &Walk::none())
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        discover::sessions(HARNESS.name, &self.root, walk)
    }

    /// A plain rollout that inherits nothing goes on from its snapshot.
    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        want: WantSnapshot,
    ) -> Result<Resumed, DecodeError> {
        let Some(from) = snapshot::with_state(from) else {
            return Ok(Resumed::Declined);
        };
        let keep = want == WantSnapshot::Yes;
        Ok(
            match decode::session_from(&self.root, &file.path, sink, lines, from, keep)? {
                Some((decoded, snapshot)) => Resumed::Done(decoded, snapshot),
                None => Resumed::Declined,
            },
        )
    }

    fn lineage(&self, file: &SessionFile) -> Vec<PathBuf> {
        decode::files(&self.root, &file.path)
    }

    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        reader::open_raw(path)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        decode::replay(seq, line, sink);
        true
    }

    /// A compressed file is read from its start.
    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        (!reader::is_compressed(path)).then(|| history_core::read_at(path, offset, len))
    }

    /// Inherited history maps back to the ancestors' lines ([the seqs](crate#seqs)).
    fn origins(&self, file: &SessionFile, seqs: &[u64]) -> Vec<Option<Origin>> {
        decode::origins(&self.root, &file.path, seqs)
    }

    /// The header's `cwd`; a rollout whose header names none (the earliest generations) is
    /// decoded for the `<cwd>` of its environment context.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        let head = reader::open_head(&file.path)
            .and_then(|mut lines| header::read(&mut lines, &mut Vec::new()));
        if let Ok(Some(head)) = &head {
            if let Some(cwd) = head.cwd() {
                return Some(cwd.to_owned());
            }
        }
        let nothing: LineTest<'_> = &|_: &[u8]| false;
        decode::session(&self.root, &file.path, &mut |_| {}, Some(nothing))
            .ok()?
            .meta
            .cwd
    }

    /// `codex resume <thread id>`: Codex finds the rollout by its id from any directory.
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        Some(Resume {
            argv: vec!["codex".into(), "resume".into(), file.key.id.clone()],
            cwd: None,
        })
    }

    /// Every event carries its line's `timestamp`; a header's instructions, the header's.
    fn line_time(&self, line: &[u8]) -> LineTime {
        if let Some(time) = LineTime::under_key(line, "timestamp") {
            return time;
        }
        match top_level(line, "timestamp") {
            Some(TopLevel::Str(s)) => return LineTime::of(Timestamp::parse_rfc3339(s)),
            Some(_) => return LineTime::Untimed,
            None => {}
        }
        parse_object::<Map<String, Value>>(line).map_or(LineTime::Unknown, |line| {
            LineTime::of(
                line.get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(Timestamp::parse_rfc3339),
            )
        })
    }
}
