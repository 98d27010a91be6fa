//! Decodes the session transcripts of the [pi coding agent] for notesoup-history: where they are
//! (`<sessions root>/<encoded-cwd>/<timestamp>_<id>.jsonl`), how a file becomes events, which
//! branch of its entry tree is active, and which file a fork came from.
//!
//! It reads session versions 1, 2 and 3 (and later ones leniently, with a notice), streaming
//! each file once, line by line. It is not for writing or migrating sessions, not for pi's HTML
//! exports, and not for the LLM context pi would rebuild: it shows the whole active branch, a
//! compaction being one summary event among the entries it summarized.
//!
//! How entries become events (one event per content block; `seq` is the line, header = 1):
//!
//! | entry | role | kind |
//! |---|---|---|
//! | `message` user text / image (`[image]`) / legacy attachment | user | `message` |
//! | `message` assistant text / thinking | assistant | `message` / `reasoning` |
//! | assistant `toolCall` (`read: notes.md`, `bash: ls`, else `name: {compact json}`) | tool | `tool_call` |
//! | assistant `errorMessage` (an errored or aborted turn) | context | `error` |
//! | `message` toolResult | tool | `tool_output` / `tool_error` |
//! | `message` bashExecution (`!cmd`): `bash: <command>`, then its output | tool | `tool_call`, `tool_output` (`tool_error` on a non-zero exit) |
//! | `message` custom, hookMessage, system, unknown roles | context | `meta` |
//! | `compaction`, `branch_summary` | context | `summary` |
//! | `custom_message` | context | `meta` |
//! | `label` (its text), `session_info` (the name) | context | `meta` |
//! | `model_change`, `thinking_level_change`, `custom`, unknown types | no event (still tree nodes) | |
//!
//! Every event of the file is streamed; [`Decoded::branch`] names the seqs of the active branch:
//! the last entry and its chain of `parentId`s. Two JSON objects glued on one line are both read
//! and share the line's seq, so they are on the branch together.
//!
//! ```
//! use decode_pi::Pi;
//! use history_core::Transcript;
//!
//! // In the CLI: `decode_pi::HARNESS.root(None, &|k| std::env::var_os(k))`.
//! let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/pi/sessions");
//! let pi = Pi::new(root);
//! let file = pi.discover().into_iter().find(|f| f.key.id == "branched").unwrap();
//! let mut texts = Vec::new();
//! let decoded = pi.decode(&file, &mut |event| texts.push((event.seq, event.text)), None).unwrap();
//! // Lines 5–8 are an abandoned branch: streamed, but not on the active branch.
//! assert_eq!(decoded.branch, Some(vec![2, 3, 4, 9, 10, 11, 12]));
//! assert_eq!(texts.last().unwrap(), &(12, "B: a write-through cache. Done.".to_string()));
//! ```
//!
//! [pi coding agent]: https://github.com/badlogic/pi-mono
//!
//! The format itself (the tree, the branch, how an entry becomes events) is read by `pi-tree`,
//! which Oh My Pi's decoder shares.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use history_core::Harness;
use history_core::Resume;
use history_core::{snapshot, Resumed, Snapshot, WantSnapshot};
use history_core::{DecodeError, Decoded, Event, SessionFile, Transcript, Walk};
use history_core::{LineTest, LineTime};

use pi_tree::Dialect;
pub use pi_tree::{Entry, Tree};

/// The pi sessions under one root (the `sessions` directory of pi's agent directory).
#[derive(Clone, Debug)]
pub struct Pi {
    root: PathBuf,
}

/// pi in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: "pi",
    root_flag: "pi-root",
    root_env: "NOTESOUP_HISTORY_PI_ROOT",
    root_about: "pi's sessions directory",
    default_root_about: "$PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions",
    default_root: |env| default_root(env),
    // pi sets it for the commands its bash tool runs.
    session_env: Some("PI_SESSION_ID"),
    open: |root| Box::new(Pi::new(root)),
};

/// pi's own sessions root: `$PI_CODING_AGENT_DIR/sessions` (with pi's `~` expansion), else
/// `$HOME/.pi/agent/sessions`. Empty variables count as unset. [`HARNESS`]'s root is
/// `NOTESOUP_HISTORY_PI_ROOT` before either.
pub fn default_root(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    if let Some(dir) = var("PI_CODING_AGENT_DIR") {
        let dir = match (dir.strip_prefix("~"), &home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => dir,
        };
        return Some(dir.join("sessions"));
    }
    home.map(|h| Path::new(&h).join(".pi").join("agent").join("sessions"))
}

impl Pi {
    /// The sessions under `root`; a root that does not exist is empty.
    pub fn new(root: impl Into<PathBuf>) -> Pi {
        Pi { root: root.into() }
    }

    /// The sessions root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The entry tree of a session file and its active branch, for callers that want the
    /// structure behind [`Decoded::branch`] (reads the file once, for its structure alone).
    pub fn tree(&self, path: &Path) -> Result<Tree, DecodeError> {
        pi_tree::read(Dialect::Pi, path, &mut |_| {}, Some(&|_: &[u8]| false)).map(|pass| pass.tree)
    }

    fn decode_lines(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        wanted: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        Ok(self.decode_from(file, sink, wanted, None, false)?.0)
    }

    /// [`Pi::decode_lines`] from a snapshot on; with `keep`, also where it stopped.
    fn decode_from(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        wanted: Option<LineTest<'_>>,
        from: Option<(&Snapshot, pi_tree::Reader)>,
        keep: bool,
    ) -> Result<(Decoded, Option<Snapshot>), DecodeError> {
        let (pass, snapshot) =
            pi_tree::read_from(Dialect::Pi, &file.path, sink, wanted, from, keep)?;
        let mut meta = pass.meta;
        meta.forked_from = pass
            .header
            .as_ref()
            .and_then(|h| h.parent.as_deref())
            .and_then(|named| pi_tree::parent_file(&self.root, &file.path, named));
        let decoded = Decoded {
            branch: Some(pass.tree.branch),
            notices: pass.notices,
            meta,
            lineage: vec![file.path.clone()],
            lineage_open: false,
        };
        Ok((decoded, snapshot))
    }
}

impl Transcript for Pi {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    /// Reads only the first line of each file: the session id is the header's `id`, or the id
    /// in the file name when the header is missing or damaged (decoding then says why).
    fn discover(&self) -> Vec<SessionFile> {
        pi_tree::sessions(&self.root, &Walk::none(), Dialect::Pi)
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        pi_tree::sessions(&self.root, walk, Dialect::Pi)
    }

    /// Lines `lines` rules out are read for their structure alone: ids and parent links, the
    /// header, `session_info` names, compaction anchors; their text is checked as JSON but never
    /// built into values or events.
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
        let (decoded, snapshot) =
            self.decode_from(file, sink, lines, from, want == WantSnapshot::Yes)?;
        Ok(Resumed::Done(decoded, snapshot))
    }

    /// The header on the first line names it; a file that opens without one is decoded for it.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        match pi_tree::read_header(&file.path, Dialect::Pi) {
            Some(header) => header.cwd,
            None => {
                let nothing: LineTest<'_> = &|_: &[u8]| false;
                self.decode_lines(file, &mut |_| {}, Some(nothing))
                    .ok()?
                    .meta
                    .cwd
            }
        }
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        pi_tree::line_time(line)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        pi_tree::replay(Dialect::Pi, seq, line, sink);
        true
    }

    /// `pi --session <file>`: pi opens a session file from any directory (so the path is
    /// absolute, whatever root it was found under).
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        let path = std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone());
        Some(Resume {
            argv: vec!["pi".into(), "--session".into(), path.display().to_string()],
            cwd: None,
        })
    }
}
