//! Where Claude Code keeps transcripts, and finding them.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use history_core::{entry_metadata, SessionFile, SessionKey};

/// The harness name in qualified ids (`claude:…`).
pub(crate) const NAME: &str = "claude";

/// Claude Code's own `projects` directory: `$CLAUDE_CONFIG_DIR/projects`, else
/// `$HOME/.claude/projects` (empty variables count as unset). [`crate::HARNESS`]'s root is
/// `NOTESOUP_HISTORY_CLAUDE_ROOT` before either.
pub fn default_root(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(config) = set("CLAUDE_CONFIG_DIR") {
        return Some(Path::new(&config).join("projects"));
    }
    set("HOME").map(|home| Path::new(&home).join(".claude").join("projects"))
}

/// `<root>/<project>/<session-id>.jsonl`: one level of project directories (never followed
/// through a symbolic link), session files directly inside them. Subagent stores
/// (`<project>/<session-id>/subagents/…`) and legacy `agent-*.jsonl` files are not sessions.
pub(crate) fn sessions(root: &Path) -> Vec<SessionFile> {
    let Ok(projects) = fs::read_dir(root) else {
        return Vec::new();
    };
    let projects: Vec<PathBuf> = (projects.flatten())
        .filter(|p| p.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|p| p.path())
        .collect();
    // The project directories are listed, and then each file stat'ed once, on every core when
    // there are enough of them to be worth it.
    let listed = history_core::parallel::map_quick(&projects, |project| {
        let Ok(entries) = fs::read_dir(project) else {
            return Vec::new();
        };
        (entries.flatten())
            .filter_map(|entry| Some((session_id(Path::new(&entry.file_name()))?, entry)))
            .collect()
    });
    let named: Vec<(String, fs::DirEntry)> = listed.into_iter().flatten().collect();
    history_core::parallel::filter_map_quick(&named, |(id, entry)| {
        // A symlinked file is followed (its target is the transcript); a directory never is.
        let meta = entry_metadata(entry).ok().filter(|m| m.is_file())?;
        let key = SessionKey::new(NAME, id.clone());
        Some(SessionFile::from_metadata(key, entry.path(), &meta))
    })
}

fn session_id(path: &Path) -> Option<String> {
    if path.extension()? != "jsonl" {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    if stem.is_empty() || stem.starts_with("agent-") {
        return None;
    }
    Some(stem.to_string())
}
