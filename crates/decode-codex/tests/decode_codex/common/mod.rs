//! Helpers shared by the decode-codex tests.

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
    (
        "session-meta-every-turn",
        "019ef000-0000-7000-8000-000000000011.jsonl",
    ),
    (
        "multi-agent-parent",
        "019ef000-0000-7000-8000-000000000012.jsonl",
    ),
    (
        "multi-agent-child",
        "019ef000-0000-7000-8000-000000000013.jsonl",
    ),
    (
        "compacted-window-mid-turn",
        "019ef000-0000-7000-8000-000000000014.jsonl",
    ),
    (
        "rollback-after-abort",
        "019ef000-0000-7000-8000-000000000015.jsonl",
    ),
    (
        "mcp-tool-call-end",
        "019ef000-0000-7000-8000-000000000016.jsonl",
    ),
    ("tool-search", "019ef000-0000-7000-8000-000000000017.jsonl"),
    (
        "patch-apply-end",
        "019ef000-0000-7000-8000-000000000018.jsonl",
    ),
    (
        "image-in-tool-output",
        "019ef000-0000-7000-8000-000000000019.jsonl",
    ),
    (
        "last-line-without-newline",
        "019ef000-0000-7000-8000-00000000001a.jsonl",
    ),
];

/// The root of the newest real sample (Codex Desktop 0.142, `fixtures/samples/codex`): kept out
/// of the fixture root, whose every line the matching tests try against every word.
pub fn samples_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/samples/codex")
}

/// The 0.142 sample.
pub fn sample_0142() -> PathBuf {
    samples_root()
        .join("2026/06/23/rollout-2026-06-23T07-21-36-019ef35b-2300-75e0-98d6-8e4dce14050f.jsonl")
}

/// Decodes the 0.142 sample, which must succeed.
pub fn decode_sample() -> (Vec<Event>, Decoded) {
    let path = sample_0142();
    let (events, decoded) = try_decode(&Codex::new(samples_root()), &path);
    let decoded = decoded.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    check_order(&events);
    (events, decoded)
}

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
        fingerprint: None,
    }
}

/// Decodes `path` through the `Transcript` trait.
pub fn try_decode(codex: &Codex, path: &Path) -> (Vec<Event>, Result<Decoded, DecodeError>) {
    let mut events = Vec::new();
    let decoded = codex.decode(&file(path), &mut |e| events.push(e), None);
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

/// The lines of a rollout as the decoder reads them (a `.zst` decompressed): split at `\n`,
/// without a `\r` before it; `(bytes, terminated)`.
pub fn raw_lines(path: &Path) -> Vec<(Vec<u8>, bool)> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let bytes = if path.extension().is_some_and(|e| e == "zst") {
        let mut out = Vec::new();
        // A cut stream keeps what decoded.
        let _ = std::io::Read::read_to_end(
            &mut zstd::stream::read::Decoder::new(&bytes[..]).unwrap(),
            &mut out,
        );
        out
    } else {
        bytes
    };
    let mut lines = Vec::new();
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let (line, terminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                (line.strip_suffix(b"\r").unwrap_or(line), true)
            }
            None => (std::mem::take(&mut rest), false),
        };
        lines.push((line.to_vec(), terminated));
    }
    lines
}

/// The first line that parses as a JSON object (a rollout's header), with its 1-based number
/// and the bytes up to and including it.
fn header_line(lines: &[(Vec<u8>, bool)]) -> Option<(u64, u64, serde_json::Value)> {
    let mut end = 0;
    for (i, (line, terminated)) in lines.iter().enumerate() {
        end += line.len() as u64 + u64::from(*terminated);
        if line.trim_ascii().first() != Some(&b'{') {
            continue;
        }
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line.trim_ascii()) {
            return Some((i as u64 + 1, end, value));
        }
    }
    None
}

/// The raw line behind every seq of a session whose files (own first, then ancestors nearest
/// first) are `lineage`: the inherited lines of the oldest ancestor first, numbered by their
/// position in the chain, then the session's own lines.
pub fn lines_by_seq(lineage: &[PathBuf]) -> std::collections::BTreeMap<u64, Vec<u8>> {
    use serde_json::Value;
    let files: Vec<Vec<(Vec<u8>, bool)>> = lineage.iter().map(|p| raw_lines(p)).collect();
    let headers: Vec<_> = files.iter().map(|f| header_line(f)).collect();
    let base_of = |i: usize| -> Option<(Option<u64>, Option<u64>)> {
        let (_, _, head) = headers[i].as_ref()?;
        let base = head.get("payload")?.get("history_base")?;
        Some((
            base.get("end_ordinal_exclusive").and_then(Value::as_u64),
            base.get("end_byte_offset").and_then(Value::as_u64),
        ))
    };
    let mut map = std::collections::BTreeMap::new();
    let mut offset = 0;
    for i in (1..files.len()).rev() {
        let (end_ordinal, end_byte) = base_of(i - 1).expect("an ancestor has a child's base");
        let (head_seq, head_end, head) = headers[i].as_ref().expect("an ancestor has a header");
        let ordinal = head.get("ordinal").and_then(Value::as_u64);
        if let (Some(o), Some(limit)) = (ordinal, end_ordinal) {
            if o >= limit {
                continue;
            }
        }
        let mut kept = *head_seq;
        let mut end = *head_end;
        for (n, (line, terminated)) in files[i].iter().enumerate().skip(*head_seq as usize) {
            let n = n as u64 + 1;
            let start = end;
            end += line.len() as u64 + u64::from(*terminated);
            let ordinal = serde_json::from_slice::<Value>(line.trim_ascii())
                .ok()
                .and_then(|v| v.get("ordinal").and_then(Value::as_u64));
            let past = match (ordinal, end_ordinal) {
                (Some(o), Some(limit)) => o >= limit,
                _ => end_byte.is_some_and(|limit| start >= limit),
            };
            if past {
                break;
            }
            kept = n;
            map.insert(offset + n, line.clone());
        }
        offset += kept;
    }
    for (n, (line, _)) in files[0].iter().enumerate() {
        map.insert(offset + n as u64 + 1, line.clone());
    }
    map
}

/// Checks that `decode` with a line test under `test` delivers exactly the events `decode` delivers for
/// the lines passing `test`, and the same `Decoded`. `what` names the case in failures.
pub fn check_matching(
    codex: &Codex,
    path: &Path,
    full: &(Vec<Event>, Result<Decoded, DecodeError>),
    test: &(dyn Fn(&[u8]) -> bool + Sync),
    what: &str,
) {
    let mut got = Vec::new();
    let decoded = codex.decode(&file(path), &mut |e| got.push(e), Some(test));
    let (events, expected) = full;
    let lineage = match expected {
        Ok(expected) => expected.lineage.clone(),
        Err(_) => codex.lineage(&file(path)),
    };
    let lines = lines_by_seq(&lineage);
    let wanted: Vec<Event> = events
        .iter()
        .filter(|e| {
            let line = lines
                .get(&e.seq)
                .unwrap_or_else(|| panic!("{what}: {}: no line for seq {}", path.display(), e.seq));
            test(line)
        })
        .cloned()
        .collect();
    let at = format!("{what}: {}", path.display());
    assert_eq!(got, wanted, "{at}: events");
    match (expected, &decoded) {
        (Ok(expected), Ok(decoded)) => {
            assert_eq!(decoded.branch, expected.branch, "{at}: branch");
            assert_eq!(decoded.notices, expected.notices, "{at}: notices");
            assert_eq!(decoded.meta, expected.meta, "{at}: meta");
            assert_eq!(decoded.lineage, expected.lineage, "{at}: lineage");
        }
        (Err(expected), Err(decoded)) => {
            assert_eq!(decoded.to_string(), expected.to_string(), "{at}: error");
        }
        (expected, decoded) => {
            panic!("{at}: decode gave {expected:?}, decode with a line test {decoded:?}")
        }
    }
}
