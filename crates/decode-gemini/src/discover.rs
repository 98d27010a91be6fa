//! Finding recordings under Gemini CLI's home: `tmp/<project>/chats/session-*.jsonl` (and the
//! legacy `.json`), and sub-agents' `tmp/<project>/chats/<parent id>/*.jsonl`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use history_core::Lines;
use history_core::{Fingerprint, Kind, SessionFile, SessionKey, Walk};
use serde_json::Value;

use crate::legacy;
use crate::replay::{self, Layout};

/// Every recording under `home`, one file a session id, sorted by path. Symbolic links to
/// directories are not followed; a missing home is empty.
pub(crate) fn sessions(home: &Path, walk: &Walk) -> Vec<SessionFile> {
    let tmp = home.join("tmp");
    let mut paths = Vec::new();
    for project in dirs(walk, &tmp) {
        let chats = tmp.join(project).join("chats");
        let Some(entries) = walk.entries(&chats) else {
            continue;
        };
        for (name, kind) in entries {
            let path = chats.join(&name);
            match kind {
                Kind::Dir => {
                    let files = walk.entries(&path).unwrap_or_default();
                    paths.extend(
                        (files.into_iter())
                            .filter(|(n, _)| has_ext(n.as_ref(), "jsonl"))
                            .map(|(n, _)| path.join(n)),
                    );
                }
                _ if is_session_name(&name) => paths.push(path),
                _ => {}
            }
        }
    }
    let found = history_core::parallel::filter_map_quick(&paths, |p| session_file(p, walk));
    let mut by_id: BTreeMap<String, Vec<SessionFile>> = BTreeMap::new();
    for file in found {
        by_id.entry(file.key.id.clone()).or_default().push(file);
    }
    let mut chosen: Vec<SessionFile> = by_id.into_values().filter_map(choose).collect();
    chosen.sort_by_cached_key(|f| history_core::path_key(&f.path));
    chosen
}

fn dirs(walk: &Walk, dir: &Path) -> Vec<std::ffi::OsString> {
    (walk.entries(dir).unwrap_or_default().into_iter())
        .filter(|(_, kind)| *kind == Kind::Dir)
        .map(|(name, _)| name)
        .collect()
}

fn has_ext(name: &Path, ext: &str) -> bool {
    name.extension().and_then(|e| e.to_str()) == Some(ext)
}

/// `session-<minute>-<id8>.jsonl` or `.json`.
fn is_session_name(name: &std::ffi::OsStr) -> bool {
    let path = Path::new(name);
    name.to_str().is_some_and(|n| n.starts_with("session-"))
        && (has_ext(path, "jsonl") || has_ext(path, "json"))
}

fn session_file(path: &Path, walk: &Walk) -> Option<SessionFile> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let now = Fingerprint::of_metadata(&meta);
    let id = walk.id(path, &now, || read_id(path))?;
    Some(SessionFile::from_metadata(
        SessionKey::new("gemini", id),
        path.to_path_buf(),
        &meta,
    ))
}

/// The session id a recording names: its header's `sessionId` (the first line of a `.jsonl`,
/// the document of a `.json`).
pub(crate) fn read_id(path: &Path) -> Option<String> {
    let header = if legacy::is_legacy(path) {
        let bytes = legacy::read(path).ok()?;
        let repaired = history_raw::json::repair_surrogates(&bytes);
        match serde_json::from_slice(repaired.as_deref().unwrap_or(&bytes)).ok()? {
            Value::Object(doc) => doc,
            _ => return None,
        }
    } else {
        read_header(path)?
    };
    let id = header.get("sessionId")?.as_str()?.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// The first line of a `.jsonl` recording, as an object.
pub(crate) fn read_header(path: &Path) -> Option<serde_json::Map<String, Value>> {
    let mut lines = Lines::open_head(path).ok()?;
    let line = lines.next_line().ok()??;
    replay::parse(line.bytes.trim_ascii())
}

/// One file of those naming a session id: a `.jsonl` over a legacy `.json` (Gemini CLI migrates
/// the one into the other on resume), and over the stub a resume in a later minute leaves
/// (a header and the injected context, nothing to resume); then the newest-modified.
fn choose(mut files: Vec<SessionFile>) -> Option<SessionFile> {
    if files.len() > 1 && files.iter().any(|f| !legacy::is_legacy(&f.path)) {
        files.retain(|f| !legacy::is_legacy(&f.path));
    }
    if files.len() > 1 {
        let with_content: Vec<SessionFile> = files
            .iter()
            .filter(|f| resumable(&f.path))
            .cloned()
            .collect();
        if !with_content.is_empty() {
            files = with_content;
        }
    }
    files
        .into_iter()
        .max_by(|a, b| (a.modified, &b.path).cmp(&(b.modified, &a.path)))
}

fn resumable(path: &Path) -> bool {
    let Ok(mut lines) = Lines::open(path) else {
        return false;
    };
    let mut replay = replay::Replay::new(Layout::Records, false);
    while let Ok(Some(line)) = lines.next_line() {
        replay.line(&line, None);
    }
    replay.resumable()
}
