//! Decodes the sessions of [OpenCode] for notesoup-history: where they are (the SQLite
//! database `opencode.db` in OpenCode's data directory, with its write-ahead log, and the JSON
//! tree `storage/` of releases before it), how a session's rows become events, and how to
//! reopen one.
//!
//! It never opens OpenCode's database through SQLite: the database file and its `-wal` are read
//! as plain files and the log's committed frames applied in memory ([`image`](crate) module),
//! so that the newest turns, which OpenCode leaves in the log, are read without writing, creating
//! or locking anything beside the database. It is not for writing sessions, not for the `event`
//! table (a log of every change, each text many times over), and not for the context OpenCode
//! would send its model: it shows every message, a compaction's summary among them.
//!
//! A session is not a file of lines: its seqs number its messages, in OpenCode's order
//! (`time_created`, then id), 1 for the first; one event per part that says something
//! ([`history_core::Layout::Records`]). Its lineage is the database and its log, whose
//! fingerprints tell whether it changed.
//!
//! | part (`part.data.type`) | role | kind |
//! |---|---|---|
//! | `text` in a user message | user | `message` |
//! | `text` in an assistant message | assistant | `message` |
//! | `text` marked `synthetic` or `ignored` (injected by OpenCode, or not sent) | context | `meta` |
//! | `text` of a compaction's summary (`summary: true` assistant) | context | `summary` |
//! | `reasoning` | assistant | `reasoning` |
//! | `tool`: its call (`bash: ls`, `read: a.md`, else `name: {json}`), then its result | tool | `tool_call`, `tool_output` / `tool_error` (an error, or a non-zero `exit`) |
//! | `file` (`[file: name]`, `[image: name]`) | the message's | `message` |
//! | `compaction`, `agent` (`@name`), `subtask` | context | `meta` |
//! | an assistant message's `error` | context | `error` |
//! | `step-start`, `step-finish`, `patch`, `snapshot`, `retry`, unknown types | no event | |
//!
//! An undo (`session.revert`) hides its message and every one after it: they are off the
//! selected branch. A sub-agent's session names its parent; a fork is a session of its own.
//!
//! ```
//! use decode_opencode::OpenCode;
//! use history_core::Transcript;
//!
//! let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/opencode-wal/data");
//! let opencode = OpenCode::new(root);
//! let file = opencode.discover().into_iter().next().unwrap();
//! let mut texts = Vec::new();
//! opencode.decode(&file, &mut |e| texts.push(e.text), None).unwrap();
//! // The last turn is only in opencode.db-wal.
//! assert_eq!(texts.last().unwrap(), "The newest answer, only in the log.");
//! ```
//!
//! [OpenCode]: https://github.com/anomalyco/opencode
#![deny(missing_docs)]

mod database;
mod events;
mod image;
mod legacy;
mod session;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use history_core::{DecodeError, Decoded, Event, SessionFile, SessionKey, SessionMeta};
use history_core::{Harness, Layout, LineTest, Resume, Transcript};

use database::Database;
use session::{Message, Row};

/// OpenCode's sessions under one data directory.
pub struct OpenCode {
    root: PathBuf,
    /// The databases read so far, each kept while its files are unchanged.
    open: Mutex<HashMap<PathBuf, Arc<Mutex<Database>>>>,
}

/// OpenCode in the registry of harnesses.
pub const HARNESS: Harness = Harness {
    name: "opencode",
    root_flag: "opencode-root",
    root_env: "NOTESOUP_HISTORY_OPENCODE_ROOT",
    root_about: "OpenCode's data directory, holding opencode.db",
    default_root_about: "$XDG_DATA_HOME/opencode, ~/.local/share/opencode",
    default_root: |env| default_root(env),
    // OpenCode sets OPENCODE=1 and OPENCODE_PID for what it runs, but no session id.
    session_env: None,
    open: |root| Box::new(OpenCode::new(root)),
};

/// OpenCode's own data directory: `$XDG_DATA_HOME/opencode`, else
/// `$HOME/.local/share/opencode` (xdg-basedir's default, on macOS too). Empty variables count
/// as unset.
pub fn default_root(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    match var("XDG_DATA_HOME") {
        Some(data) => Some(data.join("opencode")),
        None => var("HOME").map(|h| h.join(".local").join("share").join("opencode")),
    }
}

impl OpenCode {
    /// The sessions under the data directory `root`; a root that does not exist is empty.
    pub fn new(root: impl Into<PathBuf>) -> OpenCode {
        OpenCode {
            root: root.into(),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The data directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The databases in the root: `opencode.db`, and `opencode-<channel>.db` of other release
    /// channels.
    fn databases(&self) -> Vec<PathBuf> {
        let Ok(read) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = read
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("opencode") && name.ends_with(".db")
            })
            .map(|e| e.path())
            .collect();
        found.sort();
        found
    }

    /// The database at `path`, read again when its files changed since it was last read.
    fn database(&self, path: &Path) -> Result<Arc<Mutex<Database>>, DecodeError> {
        let now = image::Files::of(path).map_err(|source| DecodeError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(db) = open.get(path) {
            let same = db.lock().map(|d| d.files == now).unwrap_or(false);
            if same {
                return Ok(db.clone());
            }
        }
        let db = Arc::new(Mutex::new(Database::open(path)?));
        open.insert(path.to_path_buf(), db.clone());
        Ok(db)
    }

    /// A session's row and messages, and the files they were read from.
    fn read(&self, file: &SessionFile) -> Result<(Row, Vec<Message>, Vec<PathBuf>), DecodeError> {
        let id = &file.key.id;
        if is_legacy(file) {
            let (row, messages) = legacy::read(&file.path, id)?;
            return Ok((row, messages, legacy::files(&file.path, id)));
        }
        let db = self.database(&file.path)?;
        let db = db.lock().unwrap_or_else(|e| e.into_inner());
        let invalid =
            |e: rusqlite::Error| DecodeError::Invalid(format!("{}: {e}", file.path.display()));
        let row = db.session(id).map_err(invalid)?.ok_or_else(|| {
            DecodeError::Invalid(format!("{}: no session {id}", file.path.display()))
        })?;
        let messages = db.messages(id).map_err(invalid)?;
        Ok((row, messages, db.files.paths()))
    }

    /// A session's row alone.
    fn row(&self, file: &SessionFile) -> Option<Row> {
        if is_legacy(file) {
            return legacy::read(&file.path, &file.key.id)
                .ok()
                .map(|(row, _)| row);
        }
        let db = self.database(&file.path).ok()?;
        let db = db.lock().ok()?;
        db.session(&file.key.id).ok()?
    }
}

/// Whether the session is one of the legacy tree's (its file a `.json`).
fn is_legacy(file: &SessionFile) -> bool {
    file.path.extension().and_then(|e| e.to_str()) == Some("json")
}

fn meta(row: &Row) -> SessionMeta {
    SessionMeta {
        title: row.title.clone(),
        cwd: row.directory.clone(),
        parent: row.parent.as_ref().map(|p| format!("{}:{p}", HARNESS.name)),
        ..SessionMeta::default()
    }
}

impl Transcript for OpenCode {
    fn harness(&self) -> &str {
        HARNESS.name
    }

    fn layout(&self) -> Layout {
        Layout::Records
    }

    /// Every session of every database, then those of the legacy tree no database holds. A
    /// database that cannot be read yields none (a decode of it says why).
    fn discover(&self) -> Vec<SessionFile> {
        let mut found = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for path in self.databases() {
            let Ok(db) = self.database(&path) else {
                continue;
            };
            let db = db.lock().unwrap_or_else(|e| e.into_inner());
            let Ok(rows) = db.sessions() else {
                continue;
            };
            let (_, fingerprint) = db.files.db.clone();
            for row in rows {
                seen.insert(row.id.clone());
                let modified = row
                    .updated
                    .map(|ms| ms.saturating_mul(1_000_000))
                    .unwrap_or(fingerprint.mtime_ns)
                    .max(0);
                found.push(SessionFile {
                    key: SessionKey::new(HARNESS.name, row.id),
                    path: path.clone(),
                    modified,
                    size: fingerprint.size,
                    fingerprint: Some(fingerprint),
                });
            }
        }
        for (id, path) in legacy::sessions(&self.root) {
            if seen.contains(&id) {
                continue;
            }
            if let Ok(meta) = std::fs::metadata(&path) {
                let key = SessionKey::new(HARNESS.name, id);
                found.push(SessionFile::from_metadata(key, path, &meta));
            }
        }
        found
    }

    /// Every message's events, whatever `lines` says: a session's records are not lines a raw
    /// test could rule out.
    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        let _ = lines;
        let (row, messages, lineage) = self.read(file)?;
        let outcome = events::decode(&row, &messages, sink);
        Ok(Decoded {
            branch: outcome.branch,
            notices: outcome.notices,
            meta: meta(&row),
            lineage,
            lineage_open: false,
        })
    }

    /// The database and its log, or the legacy session's files.
    fn lineage(&self, file: &SessionFile) -> Vec<PathBuf> {
        if is_legacy(file) {
            return legacy::files(&file.path, &file.key.id);
        }
        match image::Files::of(&file.path) {
            Ok(files) => files.paths(),
            Err(_) => vec![file.path.clone()],
        }
    }

    /// A database's bytes are pages, not lines of events.
    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn std::io::Read + '_>> {
        let _ = path;
        Err(std::io::ErrorKind::Unsupported.into())
    }

    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        let _ = (path, offset, len);
        None
    }

    fn cwd(&self, file: &SessionFile) -> Option<String> {
        self.row(file)?.directory
    }

    /// `opencode --session <id>`, run in the session's directory: OpenCode finds a session by
    /// id in the project of the directory it starts in.
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        let row = self.row(file)?;
        Some(Resume {
            argv: vec!["opencode".into(), "--session".into(), row.id],
            cwd: row.directory,
        })
    }
}
