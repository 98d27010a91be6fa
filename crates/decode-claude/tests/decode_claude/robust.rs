//! Every fixture: damaged copies of it, and made-up transcripts, decode to events whose seqs
//! are lines of the input, or to an error, never a panic; and every word of every event it
//! decodes to is in the raw bytes of the event's line.

use std::path::{Path, PathBuf};

use decode_claude::Claude;
use fastrand::Rng;
use history_core::{SessionFile, SessionKey, Transcript};

fn fixtures() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let roots = ["claude/projects", "claude-2026/projects"].map(|r| fixtures.join(r));
    let mut out = Vec::new();
    for project in roots
        .iter()
        .flat_map(|r| std::fs::read_dir(r).unwrap().flatten())
    {
        for f in std::fs::read_dir(project.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "jsonl") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

/// Decodes `path`, whose bytes are `bytes`, and checks what every decode keeps, whatever the
/// input: each event's seq is a line of the file and its position is unique, the branch is
/// sorted lines, and a decode that wants no line emits nothing and selects the same branch.
/// The number of events, or the error.
fn decode(path: &Path, bytes: &[u8]) -> Result<usize, String> {
    let file = SessionFile {
        key: SessionKey::new("claude", "x"),
        path: path.to_path_buf(),
        modified: 0,
        size: 0,
        fingerprint: None,
    };
    let claude = Claude::new(PathBuf::new());
    let mut events = Vec::new();
    let decoded = claude
        .decode(&file, &mut |e| events.push(e), None)
        .map_err(|e| e.to_string());
    let mut skeleton = Vec::new();
    let structure = claude
        .decode(&file, &mut |e| skeleton.push(e), Some(&|_: &[u8]| false))
        .map_err(|e| e.to_string());
    let lines = line_count(bytes);
    let mut seen = std::collections::HashSet::new();
    for e in &events {
        assert!(
            (1..=lines).contains(&e.seq),
            "seq {} of {} lines: {e:?}",
            e.seq,
            lines
        );
        assert!(
            seen.insert(e.position()),
            "two events at {:?}",
            e.position()
        );
    }
    assert!(
        skeleton.is_empty(),
        "a decode that wants no line emitted {skeleton:?}"
    );
    let decoded = decoded?;
    let branch = decoded.branch.unwrap_or_default();
    assert!(branch.windows(2).all(|w| w[0] < w[1]), "{branch:?}");
    assert!(branch.iter().all(|s| (1..=lines).contains(s)), "{branch:?}");
    let structure = structure.expect("the full decode succeeded, the structure read did not");
    assert_eq!(
        structure.branch.unwrap_or_default(),
        branch,
        "the structure read's branch"
    );
    Ok(events.len())
}

/// How many lines the decoder numbers in `bytes`: a last line needs no newline.
fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[test]
fn mutated_fixtures_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.jsonl");
    let mut rng = Rng::with_seed(7);
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        for round in 0..60 {
            let mut bytes = original.clone();
            match round % 4 {
                0 => bytes.truncate(rng.usize(..=bytes.len())),
                1 => {
                    for _ in 0..rng.usize(1..=8) {
                        let i = rng.usize(..bytes.len());
                        if let Some(b) = bytes.get_mut(i) {
                            *b = rng.u8(..);
                        }
                    }
                }
                2 => {
                    let i = rng.usize(..=bytes.len());
                    let junk: Vec<u8> = (0..rng.usize(..64)).map(|_| rng.u8(..)).collect();
                    bytes.splice(i..i, junk);
                }
                _ => {
                    // Swap two lines: parents after children, duplicated uuids.
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    let mut lines: Vec<&str> = text.lines().collect();
                    if lines.len() > 1 {
                        let (a, b) = (rng.usize(..lines.len()), rng.usize(..lines.len()));
                        lines.swap(a, b);
                        let dup = lines[rng.usize(..lines.len())];
                        lines.push(dup);
                    }
                    bytes = lines.join("\n").into_bytes();
                }
            }
            std::fs::write(&target, &bytes).unwrap();
            let _ = decode(&target, &bytes);
        }
    }
}

/// One line of a made-up transcript: a few uuids linked every which way (cycles, dangling
/// parents, compaction boundaries), or junk.
fn random_line(rng: &mut Rng) -> Vec<u8> {
    let id = |rng: &mut Rng| ["a", "b", "c", "d", "e"][rng.usize(..5)];
    let parent = |rng: &mut Rng| match rng.usize(..4) {
        0 => "null".to_string(),
        _ => format!("\"{}\"", id(rng)),
    };
    let head = |rng: &mut Rng, kind: &str| {
        format!(
            r#""type":"{kind}","uuid":"{}","parentUuid":{},"timestamp":"2026-01-01T00:00:{:02}Z""#,
            id(rng),
            parent(rng),
            rng.usize(..60)
        )
    };
    let line = match rng.usize(..8) {
        0 | 1 => format!(
            r#"{{{},"message":{{"role":"user","content":"hello {}"}}}}"#,
            head(rng, "user"),
            rng.usize(..100)
        ),
        2 | 3 => format!(
            r#"{{{},"message":{{"role":"assistant","content":[{{"type":"text","text":"reply"}},{{"type":"tool_use","id":"t{}","name":"Bash","input":{{"command":"ls"}}}}]}}}}"#,
            head(rng, "assistant"),
            rng.usize(..3)
        ),
        4 => format!(
            r#"{{{},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{}","content":"out"}}]}}}}"#,
            head(rng, "user"),
            rng.usize(..3)
        ),
        5 => format!(
            r#"{{{},"subtype":"compact_boundary","logicalParentUuid":{}}}"#,
            head(rng, "system"),
            parent(rng)
        ),
        6 => format!(r#"{{{},"data":{{}}}}"#, head(rng, "progress")),
        _ => {
            let junk: Vec<u8> = (0..rng.usize(..80))
                .map(|_| match rng.usize(..3) {
                    0 => b"{}[]\":,"[rng.usize(..7)],
                    _ => rng.u8(..),
                })
                .collect();
            return junk;
        }
    };
    line.into_bytes()
}

#[test]
fn random_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.jsonl");
    let mut rng = Rng::with_seed(11);
    let mut with_events = 0;
    for _ in 0..300 {
        let mut bytes = Vec::new();
        for _ in 0..rng.usize(..24) {
            bytes.extend(random_line(&mut rng));
            bytes.push(b'\n');
        }
        // Damage at byte level too: a cut line, a stray byte.
        if !bytes.is_empty() && rng.bool() {
            let at = rng.usize(..bytes.len());
            match rng.usize(..3) {
                0 => bytes.truncate(at),
                1 => bytes[at] = rng.u8(..),
                _ => bytes.insert(at, b'\n'),
            }
        }
        std::fs::write(&target, &bytes).unwrap();
        if decode(&target, &bytes).is_ok_and(|n| n > 0) {
            with_events += 1;
        }
    }
    assert!(
        with_events > 50,
        "only {with_events} inputs gave events: the test proves little"
    );
}

#[test]
fn size_limits_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.jsonl");
    // Sparse: takes no disk.
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(513 * 1024 * 1024)
        .unwrap();
    let err = decode(&huge, &[]).unwrap_err();
    assert!(err.contains("512 MiB"), "{err}");

    let long = dir.path().join("long.jsonl");
    let mut line = b"{\"type\":\"user\",\"x\":\"".to_vec();
    line.resize(65 * 1024 * 1024, b'a');
    line.extend_from_slice(b"\"}\n");
    std::fs::write(&long, &line).unwrap();
    let err = decode(&long, &line).unwrap_err();
    assert!(err.contains("line 1") && err.contains("64 MiB"), "{err}");
}

/// Reading lines a search cannot want for their structure alone changes nothing else: the
/// events of the wanted lines, the branch and the metadata are exactly those of a full decode,
/// for every fixture and for damaged copies of them.
#[test]
fn skeleton_lines_change_nothing_but_which_events_are_emitted() {
    let claude = Claude::new(PathBuf::new());
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.jsonl");
    let mut rng = Rng::with_seed(3);
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        for round in 0..40 {
            let mut bytes = original.clone();
            if round > 0 {
                for _ in 0..rng.usize(1..=4) {
                    let i = rng.usize(..bytes.len());
                    if let Some(b) = bytes.get_mut(i) {
                        *b = b"{}[]\":,0e9\\u"[rng.usize(..12)];
                    }
                }
            }
            std::fs::write(&target, &bytes).unwrap();
            compare(&claude, &target, &bytes, round as u64);
        }
    }
}

fn compare(claude: &Claude, path: &Path, bytes: &[u8], seed: u64) {
    let file = SessionFile {
        key: SessionKey::new("claude", "x"),
        path: path.to_path_buf(),
        modified: 0,
        size: 0,
        fingerprint: None,
    };
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let mut full = Vec::new();
    let reference = claude.decode(&file, &mut |e| full.push(e), None);
    for variant in 0..4u64 {
        let wanted = |line: &[u8]| {
            let h = line
                .iter()
                .fold(seed ^ variant, |h, b| h.wrapping_mul(31) ^ u64::from(*b));
            variant > 0 && Rng::with_seed(h).usize(..3) == 0
        };
        let mut got = Vec::new();
        let decoded = claude.decode(&file, &mut |e| got.push(e), Some(&wanted));
        match (&reference, decoded) {
            (Ok(reference), Ok(decoded)) => {
                let expected: Vec<_> = full
                    .iter()
                    .filter(|e| {
                        let line = lines[e.seq as usize - 1];
                        wanted(line.strip_suffix(b"\r").unwrap_or(line))
                    })
                    .cloned()
                    .collect();
                assert_eq!(got, expected, "{} variant {variant}", path.display());
                assert_eq!(decoded.branch, reference.branch, "{}", path.display());
                assert_eq!(decoded.meta, reference.meta, "{}", path.display());
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!(
                "{}: decode {:?} vs decode with a line test {:?}",
                path.display(),
                a.is_ok(),
                b.is_ok()
            ),
        }
    }
}

#[test]
fn every_word_of_an_event_is_in_its_line_raw_bytes() {
    // What lets the raw prefilter require every word of a query, the text the decoder writes
    // (`[image]`, `[redacted thinking]`, a nameless `tool`) included.
    let claude = Claude::new("/nonexistent");
    let mut checked = 0;
    for path in fixtures() {
        let file = SessionFile {
            key: SessionKey::new("claude", "x"),
            path: path.clone(),
            modified: 0,
            size: 0,
            fingerprint: None,
        };
        let mut events = Vec::new();
        if claude.decode(&file, &mut |e| events.push(e), None).is_err() {
            continue;
        }
        let raw = std::fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
        for event in &events {
            let line = lines[event.seq as usize - 1];
            let missing = history_raw::word_missing_from_line(&event.text, line);
            assert_eq!(missing, None, "{:?} in {}", event.text, path.display());
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}
