//! Bad input: damaged lines, compressed twins, missing headers, size limits, and random or
//! truncated bytes, none of which may panic or hang.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::common::{self, decode, rule, try_decode};
use fastrand::Rng;
use history_core::{DecodeError, Role};

#[test]
fn damaged_lines_are_skipped_with_notices() {
    let (events, decoded) = decode(&rule("damaged-lines"));
    let dialogue: Vec<(u64, Role, &str)> = events
        .iter()
        .map(|e| (e.seq, e.role, e.text.as_str()))
        .collect();
    assert_eq!(
        dialogue,
        [
            (3, Role::User, "hello"),
            (8, Role::Assistant, "still here after the damage")
        ]
    );
    assert_eq!(
        decoded.notices,
        [
            "skipped 4 unreadable lines (4, 5, 6, 7)",
            "the last line (10) is incomplete and was skipped"
        ]
    );
}

#[test]
fn the_zst_twin_is_the_same_bytes_and_the_same_events() {
    let plain = common::fixture("019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl");
    let zst = common::fixture("019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl.zst");
    let decompressed = zstd::stream::decode_all(fs::File::open(&zst).unwrap()).unwrap();
    assert_eq!(
        decompressed,
        fs::read(&plain).unwrap(),
        "the twin is up to date"
    );
    let (plain_events, plain_decoded) = decode(&plain);
    let (zst_events, zst_decoded) = decode(&zst);
    assert!(!plain_events.is_empty());
    assert_eq!(zst_events, plain_events);
    assert_eq!(zst_decoded.notices, plain_decoded.notices);
    assert_eq!(zst_decoded.meta, plain_decoded.meta);
    assert_eq!(zst_decoded.branch, plain_decoded.branch);

    // The raw prefilter reads the decompressed bytes.
    let corpus = history_core::Corpus::new(vec![Box::new(common::codex())]);
    let query = |q: &str| history_core::Filter::new(&[q.to_string()], vec![], None, None);
    let file = common::file(&zst);
    assert!(corpus.raw_prefilter(&query("Failing TEST"))(&file));
    assert!(!corpus.raw_prefilter(&query("zebra"))(&file));
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

const NAME: &str = "rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-000000000000.jsonl";

#[test]
fn a_file_without_a_header_is_refused() {
    let dir = common::temp_dir("no-header");
    let codex = common::codex();
    for (what, bytes) in [
        ("empty", &b""[..]),
        ("blank", b"\n\n"),
        ("damaged only", b"not json\n[1]\n"),
        ("items only", b"{\"type\":\"message\",\"role\":\"user\",\"content\":[]}\n"),
        ("an event first", b"{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"hi\"}}\n"),
    ] {
        let path = write(&dir, NAME, bytes);
        let (events, result) = try_decode(&codex, &path);
        assert!(matches!(result, Err(DecodeError::Invalid(_))), "{what}: {result:?}");
        assert!(events.is_empty(), "{what}");
    }
    let path = dir.join("rollout-missing.jsonl");
    assert!(matches!(
        try_decode(&codex, &path).1,
        Err(DecodeError::Io { .. })
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_header_after_damaged_lines_still_counts() {
    let dir = common::temp_dir("late-header");
    let meta = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"019c0000-0000-7000-8000-000000000000","cwd":"/x"}}"#;
    let said = r#"{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}"#;
    let path = write(&dir, NAME, format!("garbage\n{meta}\n{said}\n").as_bytes());
    let (events, result) = try_decode(&common::codex(), &path);
    let decoded = result.unwrap();
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [3]);
    assert_eq!(decoded.notices, ["skipped 1 unreadable line (1)"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_over_64_mib_is_refused() {
    let dir = common::temp_dir("long-line");
    let path = dir.join(NAME);
    let mut file = fs::File::create(&path).unwrap();
    writeln!(
        file,
        r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{{"id":"x"}}}}"#
    )
    .unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..65 {
        file.write_all(&chunk).unwrap();
    }
    drop(file);
    let result = try_decode(&common::codex(), &path).1;
    assert!(
        matches!(result, Err(DecodeError::TooLarge { limit, .. }) if limit == "64 MiB"),
        "{result:?}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Decodes `bytes` in full and through `decode` with a line test under a few line tests, which must
/// not panic and must agree.
fn decode_never_panics(dir: &Path, name: &str, bytes: &[u8]) {
    let path = write(dir, name, bytes);
    let codex = common::codex();
    let full = try_decode(&codex, &path);
    if full.1.is_ok() {
        common::check_order(&full.0);
    }
    let _ = history_core::Transcript::lineage(&codex, &common::file(&path));
    common::check_matching(&codex, &path, &full, &|_| false, "no line");
    common::check_matching(&codex, &path, &full, &|_| true, "all lines");
    for seed in 0..3u64 {
        let test = |line: &[u8]| {
            let mut h = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&(seed, line), &mut h);
            std::hash::Hasher::finish(&h) % 2 == 1
        };
        common::check_matching(&codex, &path, &full, &test, &format!("seed {seed}"));
    }
}

#[test]
fn random_bytes_never_panic() {
    let dir = common::temp_dir("random-bytes");
    let mut rng = Rng::with_seed(0x9e37_79b9_7f4a_7c15);
    let alphabet = b"{}[]\":,\n\\ tuypeimsoldarn0123456789\xff\xc3";
    for round in 0..300 {
        let len = rng.usize(..400);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match round % 2 {
                0 => rng.u8(..),
                _ => alphabet[rng.usize(..alphabet.len())],
            })
            .collect();
        decode_never_panics(&dir, NAME, &bytes);
        decode_never_panics(&dir, &format!("{NAME}.zst"), &bytes);
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncated_and_mangled_fixtures_never_panic() {
    let dir = common::temp_dir("mangled");
    let mut rng = Rng::with_seed(42);
    for (name, _) in common::FIXTURES {
        let bytes = fs::read(rule(name)).unwrap();
        let compressed = zstd::stream::encode_all(&bytes[..], 3).unwrap();
        for _ in 0..40 {
            let cut = rng.usize(..=bytes.len());
            decode_never_panics(&dir, NAME, &bytes[..cut]);
            let mut flipped = bytes.clone();
            for _ in 0..rng.usize(1..=8) {
                let at = rng.usize(..flipped.len());
                flipped[at] = rng.u8(..);
            }
            decode_never_panics(&dir, NAME, &flipped);
            let zcut = rng.usize(..=compressed.len());
            decode_never_panics(&dir, &format!("{NAME}.zst"), &compressed[..zcut]);
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_zst_keeps_what_it_could_read() {
    let dir = common::temp_dir("truncated-zst");
    // Large enough for several zstd blocks (128 KiB each), so that the first ones decode.
    let mut plain = String::from(
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}"#,
    );
    plain.push('\n');
    for i in 0..4000 {
        plain.push_str(&format!(
            r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{{"type":"agent_message","message":"answer number {i}"}}}}"#
        ));
        plain.push('\n');
    }
    let compressed = zstd::stream::encode_all(plain.as_bytes(), 3).unwrap();
    let path = write(
        &dir,
        &format!("{NAME}.zst"),
        &compressed[..compressed.len() - 8],
    );
    let (events, result) = try_decode(&common::codex(), &path);
    let decoded = result.unwrap();
    assert!(
        events.len() > 100 && events.len() < 4000,
        "{}",
        events.len()
    );
    assert!(
        decoded
            .notices
            .iter()
            .any(|n| n.contains("could not be read")),
        "{:?}",
        decoded.notices
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_zst_that_needs_a_huge_window_is_refused_not_allocated() {
    let dir = common::temp_dir("huge-window-zst");
    let plain = fs::read(common::fixture(
        "019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl.zst",
    ))
    .map(|z| zstd::stream::decode_all(&z[..]).unwrap())
    .unwrap();
    // What `zstd --long=27` writes: a frame whose decoder must hold a 128 MiB window.
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    encoder.window_log(27).unwrap();
    encoder.long_distance_matching(true).unwrap();
    encoder.write_all(&plain).unwrap();
    let huge = write(&dir, &format!("{NAME}.zst"), &encoder.finish().unwrap());
    let err = try_decode(&common::codex(), &huge)
        .1
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory"), "{err}");
    // Codex's own level 3 decodes.
    let usual = zstd::stream::encode_all(&plain[..], 3).unwrap();
    let usual = write(&dir, &format!("{NAME}.zst"), &usual);
    assert!(try_decode(&common::codex(), &usual).1.is_ok());
    fs::remove_dir_all(&dir).unwrap();
}
