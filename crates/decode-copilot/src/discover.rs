//! Finding session files under Copilot's home: `session-state/<id>/events.jsonl`, the flat
//! `session-state/<id>.jsonl` of some 2025 releases, and legacy `history-session-state/*.json`.

use std::fs;
use std::path::{Path, PathBuf};

use history_core::Lines;
use history_core::{Fingerprint, Kind, SessionFile, SessionKey, Walk};

use crate::legacy;

/// Every session file under `root`, sorted by path. Symbolic links to directories are not
/// followed; a missing or unreadable root is empty. Directories are listed, and ids read,
/// through `walk`.
pub(crate) fn sessions(root: &Path, walk: &Walk) -> Vec<SessionFile> {
    let mut candidates: Vec<(PathBuf, Source)> = Vec::new();
    let state = root.join("session-state");
    for (name, kind) in walk.entries(&state).unwrap_or_default() {
        let path = state.join(&name);
        match kind {
            // Entries' kinds do not follow links: a linked directory is not a directory here.
            Kind::Dir => {
                if let Some(id) = name.to_str().filter(|id| !id.is_empty()) {
                    candidates.push((path.join("events.jsonl"), Source::Directory(id.into())));
                }
            }
            Kind::File if has_extension(&path, "jsonl") => candidates.push((path, Source::Flat)),
            _ => {}
        }
    }
    let history = root.join(legacy::DIR);
    for (name, kind) in walk.entries(&history).unwrap_or_default() {
        let path = history.join(&name);
        if kind == Kind::File && has_extension(&path, "json") {
            candidates.push((path, Source::Legacy));
        }
    }
    let mut found =
        history_core::parallel::filter_map_quick(&candidates, |(p, s)| session_file(p, s, walk));
    found.sort_by_cached_key(|f| history_core::path_key(&f.path));
    found
}

/// Where a session's id comes from.
enum Source {
    /// The directory's name.
    Directory(String),
    /// The `sessionId` of the file's `session.start`, else its stem.
    Flat,
    /// The legacy file's `sessionId`, else its stem without `session_`.
    Legacy,
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some(ext)
}

fn session_file(path: &Path, source: &Source, walk: &Walk) -> Option<SessionFile> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let id = match source {
        Source::Directory(id) => id.clone(),
        Source::Flat => {
            let now = Fingerprint::of_metadata(&meta);
            walk.id(path, &now, || start_id(path))
                .or_else(|| stem(path, ""))?
        }
        Source::Legacy => {
            let now = Fingerprint::of_metadata(&meta);
            walk.id(path, &now, || legacy::session_id(path))
                .or_else(|| stem(path, "session_"))?
        }
    };
    let key = SessionKey::new("copilot", id);
    Some(SessionFile::from_metadata(key, path.to_path_buf(), &meta))
}

fn stem(path: &Path, prefix: &str) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let id = stem.strip_prefix(prefix).unwrap_or(stem);
    (!id.is_empty()).then(|| id.to_string())
}

/// The `sessionId` of a `session.start` on the file's first line, reading nothing else.
fn start_id(path: &Path) -> Option<String> {
    let mut lines = Lines::open_head(path).ok()?;
    let line = lines.next_line().ok()??;
    let start: Start = history_core::parse_object(line.bytes)?;
    (start.kind.as_deref() == Some("session.start"))
        .then_some(start.data?.session_id)
        .flatten()
        .filter(|id| !id.is_empty())
}

#[derive(serde::Deserialize)]
struct Start {
    #[serde(rename = "type")]
    kind: Option<String>,
    data: Option<StartData>,
}

#[derive(serde::Deserialize)]
struct StartData {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}
