//! Which session a sub-agent's session was started by, and which file a fork was made from.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pi_tree::{Dialect, Header};

/// The session whose artifact directory holds `path` (`<stem>/<name>.jsonl` beside
/// `<stem>.jsonl`): the one that started it as a sub-agent. Where the file is decides, not the
/// header's `parentSession`, which still names the original parent in a fork's copy of the
/// artifact directory.
pub(crate) fn spawned_by(path: &Path) -> Option<Header> {
    let dir = path.parent()?;
    let mut name = dir.file_name()?.to_os_string();
    name.push(".jsonl");
    let parent = dir.parent()?.join(name);
    if !parent.is_file() {
        return None;
    }
    let id_from_name = || {
        let stem = dir.file_name()?.to_str()?;
        stem.split_once('_').map(|(_, id)| id.to_string())
    };
    let mut header = pi_tree::read_header(&parent, Dialect::Omp).unwrap_or_default();
    header.id = header.id.or_else(id_from_name);
    Some(header)
}

/// The file a fork's `parentSession` names, if it exists: a path (as pi writes it), or, as
/// `omp --fork` writes it, a session id, whose file is looked for beside the fork, then in every
/// project directory of `root`.
pub(crate) fn forked_from(root: &Path, own: &Path, named: &str) -> Option<PathBuf> {
    if named.contains('/') || named.contains('\\') || named.ends_with(".jsonl") {
        return pi_tree::parent_file(root, own, named);
    }
    let suffix = format!("_{named}.jsonl");
    let holds = |dir: &Path| -> Option<PathBuf> {
        let mut names: Vec<OsString> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_str().is_some_and(|n| n.ends_with(&suffix)))
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| dir.join(n))
            .find(|p| p.as_path() != own && p.is_file())
    };
    if let Some(found) = own.parent().and_then(holds) {
        return Some(found);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.iter().find_map(|d| holds(d))
}
