//! Helpers shared by the decode-claude tests: the fixture roots, and decoding a fixture session
//! through the `Transcript` trait.

use std::path::{Path, PathBuf};

use decode_claude::Claude;
use history_core::{Decoded, Event, SessionFile, Transcript};

/// The repository's `fixtures` directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The fixture roots, laid out as Claude Code's `projects` directory: the hand-written fixtures
/// with a real sample (`fixtures/claude`), and those of Claude Code 2.1.78–2.1.207 with a real
/// 2.1.207 transcript (`fixtures/claude-2026`).
pub fn roots() -> [PathBuf; 2] {
    ["claude/projects", "claude-2026/projects"].map(|r| fixtures().join(r))
}

/// Every session the decoder finds under both fixture roots.
pub fn discover() -> Vec<SessionFile> {
    roots()
        .into_iter()
        .flat_map(|root| Claude::new(root).discover())
        .collect()
}

/// The file of the fixture session whose id starts with `id` (exactly one must).
pub fn file(id: &str) -> SessionFile {
    let mut found: Vec<SessionFile> = discover()
        .into_iter()
        .filter(|f| f.key.id.starts_with(id))
        .collect();
    assert_eq!(found.len(), 1, "{id} names {found:?}");
    found.remove(0)
}

/// One fixture session decoded: every event it streams, those on its selected branch, and what
/// decoding returned.
pub struct Session {
    /// Every event streamed, off the selected branch too, in file order.
    pub all: Vec<Event>,
    /// The events on the selected branch, in file order.
    pub branch: Vec<Event>,
    /// What decoding returned.
    pub decoded: Decoded,
}

impl Session {
    /// `(seq, on the selected branch)` of every event streamed.
    pub fn marks(&self) -> Vec<(u64, bool)> {
        self.all
            .iter()
            .map(|e| (e.seq, on_branch(&self.decoded, e)))
            .collect()
    }

    /// The texts of the events on the selected branch.
    pub fn texts(&self) -> Vec<&str> {
        self.branch.iter().map(|e| e.text.as_str()).collect()
    }
}

/// Decodes the fixture session whose id starts with `id`, which must succeed.
pub fn decode(id: &str) -> Session {
    let file = file(id);
    let claude = Claude::new(file.path.parent().unwrap().parent().unwrap());
    let mut all = Vec::new();
    let decoded = claude
        .decode(&file, &mut |e| all.push(e), None)
        .unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
    let branch = all
        .iter()
        .filter(|e| on_branch(&decoded, e))
        .cloned()
        .collect();
    Session {
        all,
        branch,
        decoded,
    }
}

fn on_branch(decoded: &Decoded, event: &Event) -> bool {
    decoded
        .branch
        .as_ref()
        .is_none_or(|b| b.binary_search(&event.seq).is_ok())
}

/// `seq role:kind` of every event.
pub fn roles(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}:{}", e.seq, e.role, e.kind))
        .collect()
}
