//! Decodes the session transcripts of [GitHub Copilot CLI] for notesoup-history: where they are
//! (`<copilot home>/session-state/<id>/events.jsonl`, the flat `session-state/<id>.jsonl` and the
//! legacy single-JSON `history-session-state/*.json`), and how a file becomes events.
//!
//! An `events.jsonl` is an append-only log of typed events, one per line; the session is every
//! line in file order (a resume appends to the same file). It is not for the derived
//! `session-store.db`, the `checkpoints/` markdown or `workspace.yaml`, which repeat what the log
//! holds.
//!
//! How events become notesoup events (`seq` is the line; one event per part of a line):
//!
//! | line | role | kind |
//! |---|---|---|
//! | `user.message` `content` (what was typed, not `transformedContent`) | user | `message` |
//! | `user.message` injected by the harness (an autopilot continuation, an empty `content`, a `skill-*` source): its `transformedContent` or `content` | context | `meta` |
//! | `assistant.message` `reasoningText`, `assistant.reasoning` | assistant | `reasoning` |
//! | `assistant.message` `content` | assistant | `message` |
//! | `assistant.message` `toolRequests[]` (`bash: ls`, `view: /p`, else `name: {json}`) | tool | `tool_call` |
//! | `tool.execution_start` of a call no `toolRequests` named, `tool.user_requested` | tool | `tool_call` |
//! | `tool.execution_complete` (`result.content`; `error.message` on failure) | tool | `tool_output` / `tool_error` (also on a non-zero `shellExecution.exitCode`) |
//! | `session.compaction_complete` `summaryContent` | context | `summary` |
//! | `system.message`, `system.notification`, `session.info`, `session.warning`, `abort` | context | `meta` |
//! | `session.error` | context | `error` |
//! | an event with an `agentId` (a sub-agent's, written inline) | tool (its `system.message`: context) | `subagent_prompt`, `subagent_message`, `subagent_reasoning`, `tool_call`, `tool_output`, `tool_error` |
//! | `model.*` traces, `ephemeral` events, a `tool.execution_start` that repeats a requested call, `session.task_complete` (repeats the `task_complete` call), and every other type | no event | |
//!
//! A `session.snapshot_rewind` takes the events it names (or those from `upToEventId` on) off
//! the selected branch: [`history_core::Decoded::branch`] then leaves their lines out.
//!
//! A legacy `history-session-state` file is one JSON object; its raw stream
//! ([`Transcript::open_raw`]) is that object laid out one line per item: the session first, then
//! each `timeline` item, so that its seqs, and the lines and byte offsets an item names, are
//! those of that stream.
//!
//! ```
//! use decode_copilot::Copilot;
//! use history_core::Transcript;
//!
//! // In the CLI: `decode_copilot::HARNESS.root(None, &|k| std::env::var_os(k))`.
//! let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/copilot/home");
//! let copilot = Copilot::new(root);
//! let file = copilot
//!     .discover()
//!     .into_iter()
//!     .find(|f| f.key.id == "basic-turn")
//!     .unwrap();
//! let mut texts = Vec::new();
//! copilot.decode(&file, &mut |e| texts.push((e.seq, e.text)), None).unwrap();
//! assert_eq!(texts[0], (2, "list the files".to_string()));
//! ```
//!
//! [GitHub Copilot CLI]: https://github.com/github/copilot-cli
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod decode;
mod discover;
mod legacy;
mod render;

use std::io::Read;
use std::path::{Path, PathBuf};

use history_core::{snapshot, Resumed, Snapshot, WantSnapshot};
use history_core::{DecodeError, Event, SessionFile, Transcript, Walk};
use history_core::{Harness, Resume};
use history_core::{LineTest, LineTime};

/// The Copilot CLI sessions under one root (Copilot's home, which holds `session-state/`).
#[derive(Clone, Debug)]
pub struct Copilot {
    root: PathBuf,
}

/// Copilot CLI in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: "copilot",
    root_flag: "copilot-root",
    root_env: "NOTESOUP_HISTORY_COPILOT_ROOT",
    root_about: "Copilot CLI's home directory, holding session-state/",
    default_root_about: "$COPILOT_HOME, ~/.copilot",
    default_root: |env| default_root(env),
    // Copilot sets it, with `COPILOT_CLI=1`, for the commands its shell tool runs (seen in the
    // environment of a recording of 1.0.102).
    session_env: Some("COPILOT_AGENT_SESSION_ID"),
    open: |root| Box::new(Copilot::new(root)),
};

/// Copilot's own home: `$COPILOT_HOME`, else `$HOME/.copilot` (as Copilot resolves it when no
/// `--config-dir` is given). Empty variables count as unset. [`HARNESS`]'s root is
/// `NOTESOUP_HISTORY_COPILOT_ROOT` before either.
pub fn default_root(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(home) = var("COPILOT_HOME") {
        return Some(home);
    }
    var("HOME").map(|h| h.join(".copilot"))
}

impl Copilot {
    /// The sessions under `root`; a root that does not exist is empty.
    pub fn new(root: impl Into<PathBuf>) -> Copilot {
        Copilot { root: root.into() }
    }

    /// Copilot's home directory this source reads.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Transcript for Copilot {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    /// A session directory's name is its id; a flat log's id is in its `session.start`, a
    /// legacy file's in its `sessionId`.
    fn discover(&self) -> Vec<SessionFile> {
        discover::sessions(&self.root, &Walk::none())
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        discover::sessions(&self.root, walk)
    }

    /// Lines `lines` rules out are read for what later lines need (tool names, event ids, the
    /// working directory), and yield no events.
    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        want: WantSnapshot,
    ) -> Result<Resumed, DecodeError> {
        if legacy::is_legacy(&file.path) {
            if from.is_some() {
                return Ok(Resumed::Declined);
            }
            let decoded = decode::read_legacy(&file.path, sink, lines)?;
            return Ok(Resumed::Done(decoded, None));
        }
        let Some(from) = snapshot::with_state(from) else {
            return Ok(Resumed::Declined);
        };
        let (decoded, snapshot) =
            decode::read_log(&file.path, sink, lines, from, want == WantSnapshot::Yes)?;
        Ok(Resumed::Done(decoded, snapshot))
    }

    /// A legacy file is laid out one line per item ([`legacy`]); a log is itself.
    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        if legacy::is_legacy(path) {
            let bytes = legacy::stream(path).map_err(invalid)?;
            return Ok(Box::new(std::io::Cursor::new(bytes)));
        }
        Ok(Box::new(history_core::open_untouched(path)?))
    }

    /// A legacy file's lines are those of the stream made from it ([`Transcript::open_raw`]):
    /// the stream is made again (such files are small) and the lines cut from it.
    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        if legacy::is_legacy(path) {
            return Some(legacy::stream(path).map_err(invalid).and_then(|bytes| {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                (bytes
                    .get(start..start.saturating_add(len))
                    .map(<[u8]>::to_vec))
                .ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "past the stream's end")
                })
            }));
        }
        Some(history_core::read_at(path, offset, len))
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        decode::line_time(line)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        decode::replay(seq, line, sink);
        true
    }

    /// `copilot --resume <id>`: Copilot finds the session from any directory, and moves to the
    /// session's own directory itself (unless `COPILOT_DISABLE_RESUME_AUTO_CD` is set).
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        Some(Resume {
            argv: vec!["copilot".into(), "--resume".into(), file.key.id.clone()],
            cwd: None,
        })
    }
}

/// A decode error as the I/O error a raw read reports.
fn invalid(e: DecodeError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}
