//! The legacy sessions of Copilot CLI before 0.0.342: one JSON object per file in
//! `history-session-state/`, `{sessionId, startTime, chatMessages, timeline}`.
//!
//! Such a file has no lines to speak of (it may be laid out on one line or on thousands), so its
//! raw stream is made from it: line 1 `{"legacySession":{"sessionId":…,"startTime":…}}`, then
//! one `{"timelineItem":{…}}` line per item of `timeline`, in order, each as compact JSON. A seq
//! is a line of that stream, and each line decodes alone, as a log line does.

use std::io::{BufReader, Read};
use std::path::Path;

use history_core::DecodeError;
use serde_json::{Map, Value};

/// The directory legacy sessions are kept in, under Copilot's home.
pub(crate) const DIR: &str = "history-session-state";

/// The key of the first line of a legacy stream.
pub(crate) const SESSION_KEY: &str = "legacySession";
/// The key of each timeline item's line.
pub(crate) const ITEM_KEY: &str = "timelineItem";

/// Whether `path` is a legacy session file: a `.json` in `history-session-state/`.
pub(crate) fn is_legacy(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("json")
        && path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            == Some(DIR)
}

/// The stream of lines a legacy file is read as.
pub(crate) fn stream(path: &Path) -> Result<Vec<u8>, DecodeError> {
    let file = history_core::open_transcript(path)?;
    let object: Map<String, Value> =
        serde_json::from_reader(BufReader::new(file)).map_err(|e| {
            DecodeError::Invalid(format!(
                "{} is not a Copilot CLI session file: {e}",
                path.display()
            ))
        })?;
    let mut head = Map::new();
    for key in ["sessionId", "startTime"] {
        if let Some(value) = object.get(key) {
            head.insert(key.into(), value.clone());
        }
    }
    let mut out = Vec::new();
    push_line(&mut out, SESSION_KEY, Value::Object(head));
    match object.get("timeline") {
        Some(Value::Array(items)) => {
            for item in items {
                push_line(&mut out, ITEM_KEY, item.clone());
            }
        }
        Some(_) => {
            return Err(DecodeError::Invalid(format!(
                "{}: its timeline is not a list",
                path.display()
            )))
        }
        None => {}
    }
    Ok(out)
}

fn push_line(out: &mut Vec<u8>, key: &str, value: Value) {
    let mut line = Map::new();
    line.insert(key.into(), value);
    // A map of JSON values always serializes.
    if let Ok(text) = serde_json::to_vec(&Value::Object(line)) {
        out.extend(text);
        out.push(b'\n');
    }
}

/// The `sessionId` near the start of a legacy file, read from its first 64 KiB without parsing
/// the rest (Copilot writes it first).
pub(crate) fn session_id(path: &Path) -> Option<String> {
    let mut head = Vec::new();
    history_core::open_untouched(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let at = text.find("\"sessionId\"")? + "\"sessionId\"".len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<String>();
    let id = values.next()?.ok()?;
    (!id.is_empty()).then_some(id)
}
