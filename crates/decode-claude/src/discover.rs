//! Where Claude Code keeps transcripts, and finding them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use history_core::{DirStats, Kind, SessionFile, SessionKey, Walk};

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
/// A directory unchanged since `walk`'s memo listed it is not listed again.
pub(crate) fn sessions(root: &Path, walk: &Walk) -> Vec<SessionFile> {
    let Some(projects) = walk.entries(root) else {
        return Vec::new();
    };
    let projects: Vec<PathBuf> = (projects.into_iter())
        .filter(|(_, kind)| *kind == Kind::Dir)
        .map(|(name, _)| root.join(name))
        .collect();
    // The project directories are listed, and then each file stat'ed once, on every core when
    // there are enough of them to be worth it.
    let listed = history_core::parallel::map_quick(&projects, |project| {
        let entries = walk.entries(project).unwrap_or_default();
        (entries.into_iter())
            .filter(|(_, kind)| matches!(kind, Kind::File | Kind::Link))
            .filter_map(|(name, _)| Some((session_id(Path::new(&name))?, project.join(name))))
            .collect::<Vec<_>>()
    });
    let (ids, paths): (Vec<String>, Vec<PathBuf>) = listed.into_iter().flatten().unzip();
    let stats = DirStats::new(&paths);
    let each: Vec<usize> = (0..paths.len()).collect();
    history_core::parallel::filter_map_quick(&each, |&i| {
        // A symlinked file is followed (its target is the transcript).
        let key = SessionKey::new(NAME, ids[i].clone());
        Some(SessionFile::from_fingerprint(
            key,
            paths[i].clone(),
            stats.file(i)?,
        ))
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
