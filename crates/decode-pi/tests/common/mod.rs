//! Helpers shared by the integration tests: the fixture root, decoding a fixture session through
//! the `Transcript` trait, and a compact rendering for snapshots.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use decode_pi::Pi;
use history_core::{Decoded, Event, SessionFile, Transcript};

/// The fixture sessions root (laid out like `~/.pi/agent/sessions`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/sessions")
}

pub fn pi() -> Pi {
    Pi::new(root())
}

/// The discovered file of a fixture session, by its id.
pub fn file(id: &str) -> SessionFile {
    pi().discover()
        .into_iter()
        .find(|f| f.key.id == id)
        .unwrap_or_else(|| panic!("fixture session {id} not discovered"))
}

/// Every event a fixture streams (all branches), and what decoding returned.
pub fn decode(id: &str) -> (Vec<Event>, Decoded) {
    decode_file(&pi(), &file(id))
}

pub fn decode_file(pi: &Pi, file: &SessionFile) -> (Vec<Event>, Decoded) {
    let mut events = Vec::new();
    let decoded = pi
        .decode(file, &mut |e| events.push(e))
        .unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
    (events, decoded)
}

/// The events of one line.
pub fn at(events: &[Event], seq: u64) -> Vec<&Event> {
    events.iter().filter(|e| e.seq == seq).collect()
}

/// A path shown relative to the fixture root, for snapshots.
pub fn shown(path: &Path) -> String {
    let root = root().canonicalize().unwrap_or_else(|_| root());
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// One line per event, `seq.part mark role kind [tool] time | text`, where the mark is `*` on
/// the active branch and `-` off it; text is cut to 120 characters, newlines shown as `⏎`.
pub fn render(file: &SessionFile, events: &[Event], decoded: &Decoded) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "session {}\nfile {}\n",
        file.key,
        shown(&file.path)
    ));
    out.push_str(&format!(
        "title {:?}\ncwd {:?}\n",
        decoded.meta.title, decoded.meta.cwd
    ));
    out.push_str(&format!("branch {:?}\n", decoded.branch));
    let lineage: Vec<String> = decoded.lineage.iter().map(|p| shown(p)).collect();
    out.push_str(&format!("lineage {lineage:?}\n"));
    for notice in &decoded.notices {
        out.push_str(&format!("notice {notice}\n"));
    }
    out.push_str("events\n");
    for e in events {
        let on = match &decoded.branch {
            Some(branch) => branch.binary_search(&e.seq).is_ok(),
            None => true,
        };
        let tool = e
            .tool
            .as_deref()
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default();
        let time = e.timestamp.map_or("-".to_string(), |t| t.to_string());
        let mut text: String = e.text.chars().take(120).collect();
        if e.text.chars().count() > 120 {
            text.push('…');
        }
        out.push_str(&format!(
            "{}.{} {} {} {}{}{} {} | {}\n",
            e.seq,
            e.part,
            if on { '*' } else { '-' },
            e.role,
            e.kind,
            tool,
            if e.visible { "" } else { " (hidden)" },
            time,
            text.replace('\n', "⏎")
        ));
    }
    out
}
