//! The fixture root, decoding a fixture session through the `Transcript` trait, and a compact
//! rendering for snapshots.

use std::path::{Path, PathBuf};

use decode_omp::Omp;
use history_core::{Decoded, Event, SessionFile, Transcript};

/// The fixture sessions root (laid out like `~/.omp/agent/sessions`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/omp/sessions")
}

/// The root of the real sample (`fixtures/samples/omp`).
pub fn samples_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/samples/omp")
}

pub fn omp() -> Omp {
    Omp::new(root())
}

/// The discovered files of a fixture session, by its id (a sub-agent copied by a fork is there
/// twice).
pub fn files(id: &str) -> Vec<SessionFile> {
    omp()
        .discover()
        .into_iter()
        .filter(|f| f.key.id == id)
        .collect()
}

/// The discovered file of a fixture session, by its id.
pub fn file(id: &str) -> SessionFile {
    files(id)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("fixture session {id} not discovered"))
}

/// Every event a fixture streams (all branches), and what decoding returned.
pub fn decode(id: &str) -> (Vec<Event>, Decoded) {
    decode_file(&omp(), &file(id))
}

pub fn decode_file(omp: &Omp, file: &SessionFile) -> (Vec<Event>, Decoded) {
    let mut events = Vec::new();
    let decoded = omp
        .decode(file, &mut |e| events.push(e), None)
        .unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
    (events, decoded)
}

/// The events of the active branch.
pub fn active(events: Vec<Event>, decoded: &Decoded) -> Vec<Event> {
    let branch = decoded.branch.clone().unwrap_or_default();
    events
        .into_iter()
        .filter(|e| branch.binary_search(&e.seq).is_ok())
        .collect()
}

/// A path shown relative to the fixture root, for snapshots.
pub fn shown(path: &Path) -> String {
    [root(), samples_root()]
        .iter()
        .find_map(|root| {
            path.strip_prefix(root)
                .ok()
                .map(|p| p.display().to_string())
        })
        .unwrap_or_else(|| path.display().to_string())
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
        "title {:?}\ncwd {:?}\nparent {:?}\n",
        decoded.meta.title, decoded.meta.cwd, decoded.meta.parent
    ));
    out.push_str(&format!("branch {:?}\n", decoded.branch));
    if let Some(parent) = &decoded.meta.forked_from {
        out.push_str(&format!("forked from {}\n", shown(parent)));
    }
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
