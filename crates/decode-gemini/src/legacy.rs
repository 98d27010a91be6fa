//! The single-JSON recordings Gemini CLI wrote before April 2026 (`session-<ts>-<id8>.json`, one
//! `ConversationRecord` rewritten whole on every change, indented over many lines).
//!
//! Such a file is read as the lines of its *view*: the document's metadata on line 1, then each
//! element of `messages` compact on a line of its own. Seqs are the view's lines, and the raw
//! bytes a search tests are the view's ([`crate::Gemini`]'s `open_raw`), so that every event's
//! text is on its own line whatever the document's indentation.

use std::io::Read;
use std::path::Path;

use history_core::{open_untouched, MAX_FILE_BYTES};
use serde_json::Value;

/// Whether a file is a legacy single-JSON recording, by its name.
pub(crate) fn is_legacy(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("json")
}

/// The file's bytes, refused past [`MAX_FILE_BYTES`].
pub(crate) fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = open_untouched(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("over the limit of {MAX_FILE_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// The view of a document: its metadata, then one message a line. `None` when the bytes are
/// not one JSON object.
pub(crate) fn view(bytes: &[u8]) -> Option<Vec<u8>> {
    let repaired = history_raw::json::repair_surrogates(bytes);
    let bytes = repaired.as_deref().unwrap_or(bytes);
    let Value::Object(mut document) = serde_json::from_slice(bytes).ok()? else {
        return None;
    };
    let messages = document.shift_remove("messages");
    let mut out = serde_json::to_vec(&document).ok()?;
    out.push(b'\n');
    if let Some(Value::Array(messages)) = messages {
        for message in messages {
            out.extend(serde_json::to_vec(&message).ok()?);
            out.push(b'\n');
        }
    }
    Some(out)
}

/// The bytes a legacy file is read as: its view, or (a document that does not parse) the file
/// as it is, which then decodes to an error.
pub(crate) fn bytes_of(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = read(path)?;
    Ok(view(&bytes).unwrap_or(bytes))
}
