//! Finding session files under a pi sessions root, and the files a fork names as its parent.

use std::fs;
use std::path::{Path, PathBuf};

use history_core::Lines;
use history_core::{Fingerprint, Kind, SessionFile, SessionKey, Walk};

use crate::decode::Header;

/// Every `<root>/<encoded-cwd>/*.jsonl` that holds a session, sorted by path. Symbolic links to
/// directories are not followed; a missing or unreadable root is empty.
/// Directories are listed, and headers read, through `walk`: those unchanged since it last saw
/// them are not.
pub(crate) fn sessions(root: &Path, walk: &Walk) -> Vec<SessionFile> {
    let Some(dirs) = walk.entries(root) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    // Entries' kinds do not follow links: a linked directory is not a directory here.
    for (name, _) in dirs.into_iter().filter(|(_, kind)| *kind == Kind::Dir) {
        let dir = root.join(name);
        let Some(files) = walk.entries(&dir) else {
            continue;
        };
        paths.extend(files.into_iter().map(|(name, _)| dir.join(name)));
    }
    // Each file's stat and header, on every core.
    let mut found = history_core::parallel::filter_map(&paths, |p| session_file(p, walk));
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn session_file(path: &Path, walk: &Walk) -> Option<SessionFile> {
    if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
        return None;
    }
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let now = Fingerprint::of_metadata(&meta);
    let id = walk
        .id(path, &now, || read_header(path).and_then(|h| h.id))
        .or_else(|| id_from_name(path))?;
    let key = SessionKey::new("pi", id);
    Some(SessionFile::from_metadata(key, path.to_path_buf(), &meta))
}

/// The header on the file's first line, reading nothing else.
pub(crate) fn read_header(path: &Path) -> Option<Header> {
    let mut lines = Lines::open_head(path).ok()?;
    let line = lines.next_line().ok()??;
    Header::from_line(line.bytes)
}

/// The id in a `<timestamp>_<id>.jsonl` name, for files whose header cannot be read. Files not
/// named that way and without a header are not sessions (extensions keep other files there).
fn id_from_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let (_, id) = stem.split_once('_')?;
    (!id.is_empty()).then(|| id.to_string())
}

/// The parent session file a fork names, if it exists: as written, else (a root moved or
/// copied elsewhere) by its project folder and name under `root`, else beside the fork.
pub(crate) fn parent_file(root: &Path, own: &Path, named: &str) -> Option<PathBuf> {
    let named = Path::new(named);
    let name = named.file_name()?;
    let mut candidates = Vec::new();
    if named.is_absolute() {
        candidates.push(named.to_path_buf());
    }
    if let Some(project) = named.parent().and_then(Path::file_name) {
        candidates.push(root.join(project).join(name));
    }
    if let Some(dir) = own.parent() {
        candidates.push(dir.join(name));
    }
    candidates
        .into_iter()
        .find(|c| c.as_path() != own && c.is_file())
}
