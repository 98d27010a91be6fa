//! Finding session files under a sessions root, and the files a fork names as its parent.

use std::path::{Path, PathBuf};

use history_core::Lines;
use history_core::{DirStats, Fingerprint, Kind, SessionFile, SessionKey, Walk};

use crate::decode::Header;
use crate::Dialect;

/// Every `<root>/<encoded-cwd>/*.jsonl` that holds a session, sorted by path. Symbolic links to
/// directories are not followed; a missing or unreadable root is empty.
/// Directories are listed, and headers read, through `walk`: those unchanged since it last saw
/// them are not.
///
/// Oh My Pi also keeps the sessions of a session's sub-agents in its artifact directory,
/// `<encoded-cwd>/<stem>/<name>.jsonl` beside `<stem>.jsonl` (theirs in turn in theirs): with
/// [`Dialect::Omp`] those are sessions too.
pub fn sessions(root: &Path, walk: &Walk, dialect: Dialect) -> Vec<SessionFile> {
    let Some(dirs) = walk.entries(root) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    // Entries' kinds do not follow links: a linked directory is not a directory here.
    for (name, _) in dirs.into_iter().filter(|(_, kind)| *kind == Kind::Dir) {
        let dir = root.join(name);
        let depth = match dialect {
            Dialect::Pi => 0,
            Dialect::Omp => MAX_NESTING,
        };
        files_in(&dir, walk, depth, &mut paths);
    }
    // Each file's stat and header, on every core when there are enough to be worth it.
    let stats = DirStats::new(&paths);
    let each: Vec<usize> = (0..paths.len()).collect();
    let mut found = history_core::parallel::filter_map_quick(&each, |&i| {
        session_file(&paths[i], || stats.file(i), walk, dialect)
    });
    found.sort_by_cached_key(|f| history_core::path_key(&f.path));
    found
}

/// How deep sub-agents of sub-agents are looked for.
const MAX_NESTING: usize = 4;

/// The files of `dir`, and down to `depth` levels, those of each directory `<stem>` that sits
/// beside a `<stem>.jsonl`.
fn files_in(dir: &Path, walk: &Walk, depth: usize, paths: &mut Vec<PathBuf>) {
    let Some(entries) = walk.entries(dir) else {
        return;
    };
    let names: std::collections::HashSet<_> = entries
        .iter()
        .filter(|(_, kind)| *kind != Kind::Dir)
        .map(|(name, _)| name.clone())
        .collect();
    for (name, kind) in &entries {
        if *kind != Kind::Dir {
            paths.push(dir.join(name));
            continue;
        }
        let mut beside = name.clone();
        beside.push(".jsonl");
        if depth > 0 && names.contains(&beside) {
            files_in(&dir.join(name), walk, depth - 1, paths);
        }
    }
}

/// The session in `path`, if it is a session file: `*.jsonl`, a regular file (as `stat` tells),
/// its id the header's, else the one in its name.
fn session_file(
    path: &Path,
    stat: impl FnOnce() -> Option<Fingerprint>,
    walk: &Walk,
    dialect: Dialect,
) -> Option<SessionFile> {
    if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
        return None;
    }
    let now = stat()?;
    let id = walk
        .id(path, &now, || read_header(path, dialect).and_then(|h| h.id))
        .or_else(|| id_from_name(path))?;
    let key = SessionKey::new(dialect.harness(), id);
    Some(SessionFile::from_fingerprint(key, path.to_path_buf(), now))
}

/// The header on the file's first line (with [`Dialect::Omp`], on the line after a title slot),
/// reading nothing else.
pub fn read_header(path: &Path, dialect: Dialect) -> Option<Header> {
    let mut lines = Lines::open_head(path).ok()?;
    let line = lines.next_line().ok()??;
    if let Some(header) = Header::from_line(line.bytes) {
        return Some(header);
    }
    if dialect == Dialect::Omp && is_title_slot(line.bytes) {
        let line = lines.next_line().ok()??;
        return Header::from_line(line.bytes);
    }
    None
}

/// Whether a line is Oh My Pi's title slot, `{"type":"title",…}`.
fn is_title_slot(bytes: &[u8]) -> bool {
    matches!(
        history_core::top_level(bytes, "type"),
        Some(history_core::TopLevel::Str("title"))
    )
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
pub fn parent_file(root: &Path, own: &Path, named: &str) -> Option<PathBuf> {
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
