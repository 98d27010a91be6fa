//! The fixture home and decoding through the `Transcript` trait.

use std::path::PathBuf;

use decode_gemini::Gemini;
use history_core::{Decoded, Event, SessionFile, Transcript};

pub fn home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gemini/home")
}

pub fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/samples/gemini")
}

pub fn file(gemini: &Gemini, id: &str) -> SessionFile {
    gemini
        .discover()
        .into_iter()
        .find(|f| f.key.id == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

pub fn decode(gemini: &Gemini, id: &str) -> (Vec<Event>, Decoded) {
    decode_file(gemini, &file(gemini, id))
}

pub fn decode_file(gemini: &Gemini, file: &SessionFile) -> (Vec<Event>, Decoded) {
    let mut events = Vec::new();
    let decoded = gemini
        .decode(file, &mut |e| events.push(e), None)
        .unwrap_or_else(|e| panic!("{}: {e}", file.key));
    (events, decoded)
}

/// One line per event: `seq.part role/kind [tool] time | text` (text cut at 100 characters).
pub fn render(events: &[Event], decoded: &Decoded) -> String {
    let mut out = String::new();
    for e in events {
        let time = e.timestamp.map(|t| t.to_string()).unwrap_or_default();
        let tool = e
            .tool
            .as_deref()
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default();
        let text: String = e
            .text
            .chars()
            .take(100)
            .collect::<String>()
            .replace('\n', "⏎");
        out.push_str(&format!(
            "{}.{} {}/{}{tool} {time} | {text}\n",
            e.seq,
            e.part,
            e.role.as_str(),
            e.kind
        ));
    }
    for notice in &decoded.notices {
        out.push_str(&format!("notice: {notice}\n"));
    }
    out.push_str(&format!("meta: {:?}\n", decoded.meta));
    out
}
