//! Any bytes in, no panic out: random bytes, and fixtures cut short or mangled, are decoded
//! through the whole `Transcript` surface, and the events still obey the event conventions.
//! `decode` with a line test reads them too, and must agree with `decode` line for line.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common;
use decode_pi::Pi;
use fastrand::Rng;
use history_core::{Event, Transcript};

const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\n",
    "\\",
    "null",
    "\"type\":\"message\"",
    "\"type\":\"session\"",
    "\"id\":\"a\"",
    "\"id\":\"b\"",
    "\"parentId\":\"a\"",
    "\"parentId\":\"b\"",
    "\"parentId\":null",
    "\"role\":\"assistant\"",
    "\"role\":\"user\"",
    "\"content\":[",
    "{\"type\":\"text\",\"text\":\"hi\"}",
    "{\"type\":\"toolCall\"",
    "\"firstKeptEntryIndex\":1",
    "\\ud83d",
    "\\udc00",
    "\u{e9}",
    "\"timestamp\":1e400",
    "\"timestamp\":\"2026-13-99T99:99:99Z\"",
    "\"version\":1",
];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("decode-pi-robustness")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("--p--")).unwrap();
    dir
}

/// Decodes `bytes` as a session file every way the trait allows, checking the conventions.
fn exercise(root: &Path, bytes: &[u8]) {
    let path = root
        .join("--p--")
        .join("2026-01-01T00-00-00-000Z_case.jsonl");
    fs::write(&path, bytes).unwrap();
    let pi = Pi::new(root.to_path_buf());
    let files = pi.discover();
    assert_eq!(files.len(), 1, "the file name alone makes it a session");
    for file in &files {
        let _ = pi.lineage(file);
        let _ = pi.tree(&file.path);
        common::check_matching_subsets(&pi, file, 4);
        let mut events: Vec<Event> = Vec::new();
        if let Ok(decoded) = pi.decode(file, &mut |e| events.push(e), None) {
            let lines = bytes.split(|&b| b == b'\n').count() as u64;
            let branch = decoded.branch.unwrap_or_default();
            assert!(branch.windows(2).all(|w| w[0] < w[1]), "branch sorted");
            assert!(branch.iter().all(|&s| (1..=lines).contains(&s)));
            let mut last: Option<(u64, u32)> = None;
            for e in &events {
                assert!((1..=lines).contains(&e.seq));
                let expected_part = match last {
                    Some((seq, part)) if seq == e.seq => part + 1,
                    Some((seq, _)) => {
                        assert!(seq < e.seq, "events in file order");
                        0
                    }
                    None => 0,
                };
                assert_eq!(e.part, expected_part);
                last = Some((e.seq, e.part));
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let root = scratch("random");
    let mut rng = Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    for _ in 0..400 {
        let mut bytes = Vec::new();
        for _ in 0..rng.usize(..60) {
            if rng.usize(..4) == 0 {
                bytes.push(rng.u8(..));
            } else {
                bytes.extend_from_slice(PIECES[rng.usize(..PIECES.len())].as_bytes());
            }
        }
        exercise(&root, &bytes);
    }
}

fn fixtures() -> Vec<Vec<u8>> {
    let pi = common::pi();
    pi.discover()
        .iter()
        .map(|f| fs::read(&f.path).unwrap())
        .collect()
}

#[test]
fn truncated_fixtures_never_panic() {
    let root = scratch("truncated");
    let mut rng = Rng::with_seed(42);
    for bytes in fixtures() {
        let mut cuts: Vec<usize> = (0..bytes.len()).step_by(bytes.len() / 40 + 1).collect();
        cuts.extend((0..20).map(|_| rng.usize(..=bytes.len())));
        for cut in cuts {
            exercise(&root, &bytes[..cut]);
        }
    }
}

#[test]
fn mangled_fixtures_never_panic() {
    let root = scratch("mangled");
    let mut rng = Rng::with_seed(7);
    for bytes in fixtures() {
        for _ in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..=rng.usize(..3) {
                mangle(&mut b, &mut rng);
            }
            exercise(&root, &b);
        }
    }
}

fn mangle(b: &mut Vec<u8>, rng: &mut Rng) {
    if b.is_empty() {
        b.extend_from_slice(PIECES[rng.usize(..PIECES.len())].as_bytes());
        return;
    }
    let at = rng.usize(..b.len());
    match rng.usize(..5) {
        0 => b[at] = rng.u8(..),
        1 => {
            let end = (at + rng.usize(..200)).min(b.len());
            b.drain(at..end);
        }
        2 => {
            let piece = PIECES[rng.usize(..PIECES.len())].as_bytes();
            b.splice(at..at, piece.iter().copied());
        }
        3 => {
            // Duplicate a stretch, such as a whole line (a fork bug, a glued line).
            let end = (at + rng.usize(..400)).min(b.len());
            let copy = b[at..end].to_vec();
            b.splice(at..at, copy);
        }
        _ => {
            // Point an id somewhere else: cycles, orphans, duplicates.
            if let Some(pos) = b.windows(4).skip(at).position(|w| w == b"Id\":") {
                let i = at + pos + 5;
                if i < b.len() {
                    b[i] = b"ab0xu"[rng.usize(..5)];
                }
            }
        }
    }
}
