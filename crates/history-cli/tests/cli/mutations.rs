//! The fuzz targets' invariants (see `fuzz/README.md`) on the stable toolchain: a seeded,
//! bounded property test over mutated fixtures. Each decoder gets fixture files with bytes
//! flipped, inserted, cut and moved, and must keep the conformance kit's rules on them (no
//! panic, file order, seqs that are lines, a selective read equal to the full read); the JSON
//! scan, the raw filter and the parsers get mutated fixture lines and texts.
//!
//! The seed is fixed, so a failure reproduces; proptest shrinks it to a small mutation first.

use std::path::{Path, PathBuf};

use history_core::testing::properties::{check_parsers, check_raw_filter, check_scan};
use history_core::testing::{Bench, Notices};
use history_core::Harness;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const SEED: [u8; 32] = *b"notesoup-history mutated fixture";

fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED))
}

fn fixtures(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

/// One change to a file's bytes; positions are taken modulo the length.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    /// A piece of the file copied elsewhere (a line's neighbour, a duplicated id).
    Copy(usize, usize, usize),
}

/// What JSON and transcripts are made of, so that insertions break structure, not only text.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\n",
    b"null",
    b"-1e999",
    b"\xff",
    b"\xc3",
    b"\"parentId\":",
    b"\"type\":\"message\"",
    b"\xc3\x9f",
    b"\\u017f",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Flip(at, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
        (any::<usize>(), prop::sample::select(TOKENS))
            .prop_map(|(at, token)| Edit::Insert(at, token.to_vec())),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Edit::Delete(at, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 1usize..200, any::<usize>()).prop_map(|(a, n, b)| Edit::Copy(a, n, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for edit in edits {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match edit {
            Edit::Flip(i, b) => {
                if !bytes.is_empty() {
                    let i = i % bytes.len();
                    bytes[i] ^= b | 1;
                }
            }
            Edit::Insert(i, new) => {
                let i = at(*i, bytes.len());
                bytes.splice(i..i, new.iter().copied());
            }
            Edit::Delete(i, n) => {
                let i = at(*i, bytes.len());
                let end = (i + n).min(bytes.len());
                bytes.drain(i..end);
            }
            Edit::Truncate(i) => bytes.truncate(at(*i, bytes.len())),
            Edit::Copy(from, n, to) => {
                let from = at(*from, bytes.len());
                let piece = bytes[from..(from + n).min(bytes.len())].to_vec();
                let to = at(*to, bytes.len());
                bytes.splice(to..to, piece);
            }
        }
    }
}

/// Mutated copies of the fixture files under `root`, each held to the kit's rules.
fn decoder_keeps_its_rules(harness: &Harness, root: &Path, cases: u32) {
    let bench = Bench::new(harness, root, Notices::MayDiffer);
    let files = bench.files().to_vec();
    let originals: Vec<Vec<u8>> = files
        .iter()
        .map(|rel| std::fs::read(root.join(rel)).unwrap())
        .collect();
    let case = (
        0..files.len(),
        prop::collection::vec(edit(), 1..6),
        any::<u64>(),
    );
    runner(cases)
        .run(&case, |(index, edits, seed)| {
            let mut bytes = originals[index].clone();
            apply(&mut bytes, &edits);
            bench.check(index, Some(&bytes), seed);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_claude_transcripts_keep_the_rules() {
    decoder_keeps_its_rules(&decode_claude::HARNESS, &fixtures("claude/projects"), 256);
}

#[test]
fn mutated_codex_rollouts_keep_the_rules() {
    decoder_keeps_its_rules(&decode_codex::HARNESS, &fixtures("codex/sessions"), 256);
}

#[test]
fn mutated_pi_sessions_keep_the_rules() {
    decoder_keeps_its_rules(&decode_pi::HARNESS, &fixtures("pi/sessions"), 256);
}

#[test]
fn mutated_omp_sessions_keep_the_rules() {
    decoder_keeps_its_rules(&decode_omp::HARNESS, &fixtures("omp/sessions"), 256);
}

#[test]
fn mutated_opencode_databases_and_logs_keep_the_rules() {
    decoder_keeps_its_rules(&decode_opencode::HARNESS, &fixtures("opencode/data"), 64);
    decoder_keeps_its_rules(
        &decode_opencode::HARNESS,
        &fixtures("opencode-wal/data"),
        64,
    );
}

#[test]
fn mutated_gemini_recordings_keep_the_rules() {
    decoder_keeps_its_rules(&decode_gemini::HARNESS, &fixtures("gemini/home"), 256);
}

/// Every line of every fixture file of the three harnesses.
fn fixture_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for root in ["claude/projects", "codex/sessions", "pi/sessions"] {
        let mut stack = vec![fixtures(root)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    let bytes = std::fs::read(&path).unwrap();
                    lines.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
                }
            }
        }
    }
    lines.retain(|l| !l.is_empty());
    lines.sort();
    lines
}

#[test]
fn mutated_lines_keep_the_scan_and_the_raw_filter_honest() {
    let lines = fixture_lines();
    let case = (
        0..lines.len(),
        prop::collection::vec(edit(), 0..4),
        any::<usize>(),
        1usize..24,
    );
    runner(4096)
        .run(&case, |(index, edits, start, len)| {
            let mut line = lines[index].clone();
            apply(&mut line, &edits);
            let text = String::from_utf8_lossy(&line);
            check_scan(&text);
            // A query cut from the line's own text, as a user would search for what they saw.
            let chars: Vec<char> = text.chars().collect();
            let start = start % chars.len().max(1);
            let query: String = chars.iter().skip(start).take(len).collect();
            check_raw_filter(&query, &line);
            check_raw_filter(&query.to_uppercase(), &line);
            Ok(())
        })
        .unwrap();
}

#[test]
fn selectors_and_times_parse_without_surprises() {
    let text = "[0-9a-zT:Z.+* -]{0,32}|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,14}[Z+-][0-9:]{0,5}";
    runner(4096)
        .run(&text, |text| {
            check_parsers(&text);
            Ok(())
        })
        .unwrap();
    for text in [
        "9999-12-31T23:59:59.999999999-99:99",
        "0000-01-01T00:00:00+99:59",
        "9223372036854775807w",
        "-0d",
        "ẞ",
        "*:*:*",
    ] {
        check_parsers(text);
    }
}

#[test]
fn what_the_fuzzers_found_stays_fixed() {
    // json_scan: a key repeated with a string, then an object; serde keeps the object.
    check_scan(
        r#"{"timestamp":"2620-020Z","type":"fZ","typamp":"2620-020Z","type":{"anything":[1,2,3]}}"#,
    );
    // parsers: a date whose nanoseconds overflow an i64 (a panic, or a wrapped time).
    check_parsers("4052-01-22");
    // A surrogate pair, valid JSON whose strings the scan leaves to serde.
    check_scan(r#"{"text":"\ud83d\ude00","n":[1]}"#);
}
