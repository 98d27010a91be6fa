//! Helpers shared by the decode-codex tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use decode_codex::Codex;
use history_core::{DecodeError, Decoded, Event, SessionFile, SessionKey, Transcript};

/// Fixture file name endings, by the rule each exercises.
pub const FIXTURES: &[(&str, &str)] = &[
    ("g1-flat", "4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e01.jsonl"),
    (
        "g2-record-type-state",
        "5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
    ),
    ("g3-envelope", "019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"),
    ("real-sample", "019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"),
    ("fork-copied", "019c9a00-1111-7000-8000-000000000001.jsonl"),
    ("subagent", "019c9b00-2222-7000-8000-000000000002.jsonl"),
    (
        "injected-context",
        "019c9c00-3333-7000-8000-000000000003.jsonl",
    ),
    ("rollback", "019c9d00-4444-7000-8000-000000000004.jsonl"),
    (
        "damaged-lines",
        "019c9e00-5555-7000-8000-000000000005.jsonl",
    ),
    ("g4-paginated", "019f2a10-0000-7000-8000-00000000000a.jsonl"),
    (
        "fork-history-base",
        "019f2a10-0000-7000-8000-00000000000b.jsonl",
    ),
    (
        "revert-history-base-chain",
        "00000000000b_019f2a10-0000-7000-8000-00000000000c.jsonl",
    ),
    (
        "history-base-cycle",
        "019f2a10-0000-7000-8000-00000000000d.jsonl",
    ),
    (
        "history-base-missing",
        "019f2a10-0000-7000-8000-000000000010.jsonl",
    ),
];

/// The fixture of a rule named in [`FIXTURES`].
pub fn rule(name: &str) -> PathBuf {
    let (_, end) = FIXTURES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no fixture named {name}"));
    fixture(end)
}

/// The fixture sessions root (`fixtures/codex/sessions`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/codex/sessions")
}

/// The Codex source over the fixture root.
pub fn codex() -> Codex {
    Codex::new(root())
}

/// The fixture file whose name ends with `needle` (exactly one must).
pub fn fixture(needle: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = walk(&root())
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_str().unwrap().ends_with(needle))
        .collect();
    assert_eq!(found.len(), 1, "{needle} matches {found:?}");
    found.remove(0)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A session file for `path`, keyed by the id in its name.
pub fn file(path: &Path) -> SessionFile {
    let name = path.file_name().unwrap().to_str().unwrap();
    let stem = name.trim_end_matches(".zst").trim_end_matches(".jsonl");
    let id = stem.split('_').next().unwrap();
    let id = &id[id.len().saturating_sub(36)..];
    SessionFile {
        key: SessionKey::new("codex", id),
        path: path.to_path_buf(),
        modified: 0,
        size: 0,
    }
}

/// Decodes `path` through the `Transcript` trait.
pub fn try_decode(codex: &Codex, path: &Path) -> (Vec<Event>, Result<Decoded, DecodeError>) {
    let mut events = Vec::new();
    let decoded = codex.decode(&file(path), &mut |e| events.push(e));
    (events, decoded)
}

/// Decodes `path`, which must succeed, checking the invariants every decode keeps.
pub fn decode(path: &Path) -> (Vec<Event>, Decoded) {
    let (events, decoded) = try_decode(&codex(), path);
    let decoded = decoded.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    check_order(&events);
    (events, decoded)
}

/// Events come in file order, parts numbered 0, 1, 2… within a line.
pub fn check_order(events: &[Event]) {
    for pair in events.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.seq == b.seq {
            assert_eq!(b.part, a.part + 1, "parts of {a:?} / {b:?}");
        } else {
            assert!(b.seq > a.seq, "order of {a:?} / {b:?}");
            assert_eq!(b.part, 0, "first part of {b:?}");
        }
    }
    if let Some(first) = events.first() {
        assert_eq!(first.part, 0);
    }
}

/// One line per event: `seq.part role kind [tool] time | text`, text cut to 120 chars.
pub fn render(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        let text: String = e.text.replace('\n', "⏎");
        let cut: String = text.chars().take(120).collect();
        let more = if text.chars().count() > 120 {
            "…"
        } else {
            ""
        };
        let tool = e
            .tool
            .as_deref()
            .map(|t| format!(" [{t}]"))
            .unwrap_or_default();
        let time = e
            .timestamp
            .map(|t| t.to_string())
            .unwrap_or_else(|| "-".into());
        let vis = if e.visible { "" } else { " (hidden)" };
        out.push_str(&format!(
            "{}.{} {} {}{tool}{vis} {time} | {cut}{more}\n",
            e.seq, e.part, e.role, e.kind
        ));
    }
    out
}

/// The events' `(seq, part, role, kind, text)` for compact assertions.
pub fn rows(events: &[Event]) -> Vec<(u64, u32, String, String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e.seq,
                e.part,
                e.role.to_string(),
                e.kind.clone(),
                e.text.clone(),
            )
        })
        .collect()
}

/// A fresh empty directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("decode-codex-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
