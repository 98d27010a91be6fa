//! Decodes the session transcripts of [Oh My Pi] (`omp`, a fork of the pi coding agent) for
//! notesoup-history: where they are (`<sessions root>/<encoded-cwd>/<timestamp>_<id>.jsonl`, and
//! the sessions of its sub-agents in `<timestamp>_<id>/<name>.jsonl` beside it), how a file
//! becomes events, which branch of its entry tree is active, and which session a fork or a
//! sub-agent came from.
//!
//! Oh My Pi keeps pi's session format (version 3), read by `pi-tree` as `decode-pi` reads it,
//! with these differences:
//!
//! | what | how it is read |
//! |---|---|
//! | line 1: the title slot `{"type":"title",…,"pad":"   "}`, rewritten in place | no entry and no event; its `title` is the session's title (the latest `title_change`, then the header's `title`, when there is none) |
//! | the `session` header on line 2 | the session id, cwd and parent |
//! | `session_init` (a sub-agent's system prompt and task) | context, kind `instructions` (the task is also its first message) |
//! | `title_change` | context `meta`: the new title |
//! | `compaction` `summary`, then `shortSummary` | context `summary` |
//! | `user` message with `attribution:"agent"`; `developer` message | context `meta` |
//! | tool call `arguments` with the intent `i` | `name: input` as pi shows it, the intent on the next line; `partialArgs` is not read |
//! | `custom` (`tool_execution_start`, `session_exit`), `ttsr_injection`, `credential_pin`, `model_change`, `model_usage`, `mode_change`, `reset_boundary` | no event (still tree nodes) |
//!
//! A sub-agent's session is a session of its own, whose [`SessionMeta::parent`] names the
//! session that started it; the parent shows the `task` call and its result. A fork
//! (`parentSession` an id or a path) names the file it was forked from.
//!
//! ```
//! use decode_omp::Omp;
//! use history_core::Transcript;
//!
//! // In the CLI: `decode_omp::HARNESS.root(None, &|k| std::env::var_os(k))`.
//! let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/omp/sessions");
//! let omp = Omp::new(root);
//! let file = omp.discover().into_iter().find(|f| f.key.id == "title-slot").unwrap();
//! let mut texts = Vec::new();
//! let decoded = omp.decode(&file, &mut |event| texts.push(event.text), None).unwrap();
//! assert_eq!(decoded.meta.title.as_deref(), Some("Renamed by the user"));
//! assert_eq!(texts[0], "Say hello to the title slot.");
//! ```
//!
//! [Oh My Pi]: https://github.com/can1357/oh-my-pi
//! [`SessionMeta::parent`]: history_core::SessionMeta::parent
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod lineage;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use history_core::{snapshot, Resumed, Snapshot, WantSnapshot};
use history_core::{DecodeError, Decoded, Event, SessionFile, Transcript, Walk};
use history_core::{Harness, Resume};
use history_core::{LineTest, LineTime};
use pi_tree::Dialect;

pub use pi_tree::{Entry, Tree};

/// The Oh My Pi sessions under one root (the `sessions` directory of its agent directory).
#[derive(Clone, Debug)]
pub struct Omp {
    root: PathBuf,
}

/// Oh My Pi in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: "omp",
    root_flag: "omp-root",
    root_env: "NOTESOUP_HISTORY_OMP_ROOT",
    root_about: "Oh My Pi's sessions directory",
    default_root_about: "$PI_CODING_AGENT_DIR/sessions, ~/.omp/agent/sessions",
    default_root: |env| default_root(env),
    // Oh My Pi sets no variable naming the session for the commands it runs (its bash tool
    // adds only non-interactive defaults; `PI_SESSION_FILE` is set for its eval kernels alone).
    session_env: None,
    open: |root| Box::new(Omp::new(root)),
};

/// Oh My Pi's own sessions root, as its agent directory is chosen (`gQ` in its `dist/cli.js`):
/// with a profile (`OMP_PROFILE`, else `PI_PROFILE`; `default` is none),
/// `~/<config>/profiles/<name>/agent/sessions`; else `$PI_CODING_AGENT_DIR/sessions`; else
/// `$XDG_DATA_HOME/omp/sessions` when `$XDG_DATA_HOME/omp` exists (Linux and macOS); else
/// `~/<config>/agent/sessions`, where `<config>` is `$PI_CONFIG_DIR` or `.omp`. With a profile,
/// `$XDG_DATA_HOME/omp/profiles/<name>/sessions` when that exists. Empty variables count as
/// unset. [`HARNESS`]'s root is `NOTESOUP_HISTORY_OMP_ROOT` before all of these.
pub fn default_root(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |key: &str| env(key).filter(|v| !v.is_empty());
    let xdg = |tail: &Path| {
        let dir = Path::new(&var("XDG_DATA_HOME")?).join("omp").join(tail);
        (cfg!(any(target_os = "linux", target_os = "macos")) && dir.is_dir()).then_some(dir)
    };
    let profile = (var("OMP_PROFILE").or_else(|| var("PI_PROFILE")))
        .and_then(|p| p.into_string().ok())
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p != "default");
    let home = var("HOME").map(PathBuf::from);
    let config = || {
        let name = var("PI_CONFIG_DIR").unwrap_or_else(|| ".omp".into());
        Some(home.as_ref()?.join(name))
    };
    if let Some(profile) = profile {
        let tail = Path::new("profiles").join(&profile);
        if let Some(dir) = xdg(&tail) {
            return Some(dir.join("sessions"));
        }
        return Some(config()?.join(tail).join("agent").join("sessions"));
    }
    if let Some(dir) = var("PI_CODING_AGENT_DIR") {
        return Some(PathBuf::from(dir).join("sessions"));
    }
    if let Some(dir) = xdg(Path::new("")) {
        return Some(dir.join("sessions"));
    }
    Some(config()?.join("agent").join("sessions"))
}

impl Omp {
    /// The sessions under `root`; a root that does not exist is empty.
    pub fn new(root: impl Into<PathBuf>) -> Omp {
        Omp { root: root.into() }
    }

    /// The sessions root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The entry tree of a session file and its active branch (reads the file once, for its
    /// structure alone).
    pub fn tree(&self, path: &Path) -> Result<Tree, DecodeError> {
        let nothing: LineTest<'_> = &|_: &[u8]| false;
        pi_tree::read(Dialect::Omp, path, &mut |_| {}, Some(nothing)).map(|pass| pass.tree)
    }

    /// [`Transcript::decode`] from a snapshot on; with `keep`, also where it stopped.
    fn decode_from(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        wanted: Option<LineTest<'_>>,
        from: Option<(&Snapshot, pi_tree::Reader)>,
        keep: bool,
    ) -> Result<(Decoded, Option<Snapshot>), DecodeError> {
        let (pass, snapshot) =
            pi_tree::read_from(Dialect::Omp, &file.path, sink, wanted, from, keep)?;
        let mut meta = pass.meta;
        match lineage::spawned_by(&file.path) {
            Some(parent) => meta.parent = parent.id.map(|id| format!("{}:{id}", HARNESS.name)),
            None => {
                meta.forked_from = pass
                    .header
                    .as_ref()
                    .and_then(|h| h.parent.as_deref())
                    .and_then(|named| lineage::forked_from(&self.root, &file.path, named));
            }
        }
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

impl Transcript for Omp {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    /// Reads only the first lines of each file (the title slot and the header): the session id
    /// is the header's `id`, or the id in the file name when the header is missing or damaged.
    fn discover(&self) -> Vec<SessionFile> {
        pi_tree::sessions(&self.root, &Walk::none(), Dialect::Omp)
    }

    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        pi_tree::sessions(&self.root, walk, Dialect::Omp)
    }

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

    /// The header after the title slot names it; a file without one is decoded for it.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        match pi_tree::read_header(&file.path, Dialect::Omp) {
            Some(header) => header.cwd,
            None => {
                let nothing: LineTest<'_> = &|_: &[u8]| false;
                self.decode(file, &mut |_| {}, Some(nothing)).ok()?.meta.cwd
            }
        }
    }

    fn line_time(&self, line: &[u8]) -> LineTime {
        pi_tree::line_time(line)
    }

    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        pi_tree::replay(Dialect::Omp, seq, line, sink);
        true
    }

    /// `omp --resume <id>`: Oh My Pi looks the id up among the sessions of the directory it
    /// runs in, then of every directory, and moves into the session's own directory. A
    /// sub-agent's session is in no such list: it is opened by its path, which
    /// `omp --resume` takes too (an argument with a `/` or ending in `.jsonl`).
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        let session = match lineage::spawned_by(&file.path) {
            Some(_) => std::path::absolute(&file.path)
                .unwrap_or_else(|_| file.path.clone())
                .display()
                .to_string(),
            None => file.key.id.clone(),
        };
        Some(Resume {
            argv: vec!["omp".into(), "--resume".into(), session],
            cwd: None,
        })
    }
}
