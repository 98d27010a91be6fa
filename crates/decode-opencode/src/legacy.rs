//! The JSON tree OpenCode kept before its database (`<data dir>/storage/`), one file per
//! object, every id taken from the path as OpenCode's own migration takes it:
//! `session/<project>/<session>.json`, `message/<session>/<message>.json`,
//! `part/<message>/<part>.json`.

use std::io::Read;
use std::path::{Path, PathBuf};

use history_core::{open_untouched, DecodeError, MAX_FILE_BYTES};
use serde_json::{Map, Value};

use crate::session::{millis, object, Message, Row};

/// Every `storage/session/<project>/<id>.json` under `root`, with its id, sorted by path.
pub(crate) fn sessions(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for project in dirs(&root.join("storage").join("session")) {
        for file in json_files(&project) {
            if let Some(id) = stem(&file) {
                found.push((id, file));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}

/// The storage directory a session file lies in (`…/storage/session/<project>/<id>.json`).
fn storage_of(session_file: &Path) -> Option<&Path> {
    session_file.parent()?.parent()?.parent()
}

/// The files a session is read from: its own, then its messages' and their parts', in the
/// order they are read.
pub(crate) fn files(session_file: &Path, id: &str) -> Vec<PathBuf> {
    let mut files = vec![session_file.to_path_buf()];
    let Some(storage) = storage_of(session_file) else {
        return files;
    };
    for message in json_files(&storage.join("message").join(id)) {
        let parts = stem(&message).map(|m| json_files(&storage.join("part").join(m)));
        files.push(message);
        files.extend(parts.into_iter().flatten());
    }
    files
}

/// The session's row and its messages, in OpenCode's order.
pub(crate) fn read(session_file: &Path, id: &str) -> Result<(Row, Vec<Message>), DecodeError> {
    let fields = object(&read_text(session_file)?).ok_or_else(|| {
        DecodeError::Invalid(format!("{}: not a JSON object", session_file.display()))
    })?;
    let mut fields = fields;
    // The id is the path's, whatever the body says.
    fields.insert("id".into(), Value::from(id));
    let row = Row::from_fields(&fields)
        .ok_or_else(|| DecodeError::Invalid(format!("{}: no session", session_file.display())))?;
    let storage = storage_of(session_file).unwrap_or(Path::new(""));
    let mut messages = Vec::new();
    for file in json_files(&storage.join("message").join(id)) {
        let Some(message_id) = stem(&file) else {
            continue;
        };
        let info = read_text(&file).ok().and_then(|t| object(&t));
        let parts = json_files(&storage.join("part").join(&message_id))
            .into_iter()
            .filter_map(|p| {
                let part_id = stem(&p)?;
                Some((part_id, read_text(&p).ok().and_then(|t| object(&t))))
            })
            .collect();
        messages.push(Message {
            id: message_id,
            info,
            parts,
        });
    }
    messages.sort_by_key(|m| (created(m.info.as_ref()), m.id.clone()));
    Ok((row, messages))
}

fn created(info: Option<&Map<String, Value>>) -> i64 {
    info.and_then(|i| i.get("time"))
        .and_then(|t| t.get("created"))
        .and_then(millis)
        .unwrap_or(0)
}

fn read_text(path: &Path) -> Result<String, DecodeError> {
    let io = |source| DecodeError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = open_untouched(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(DecodeError::TooLarge {
            what: path.display().to_string(),
            limit: "512 MiB",
        });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The directories in `dir` (not links to them), sorted.
fn dirs(dir: &Path) -> Vec<PathBuf> {
    entries(dir, |t| t.is_dir())
}

/// The `*.json` files in `dir`, sorted by name.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    entries(dir, |t| t.is_file())
        .into_iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
        .collect()
}

fn entries(dir: &Path, keep: impl Fn(&std::fs::FileType) -> bool) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| keep(&t)))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

fn stem(path: &Path) -> Option<String> {
    Some(path.file_stem()?.to_str()?.to_string())
}
