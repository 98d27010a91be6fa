//! Every fixture: damaged copies of it decode to events or an error, never a panic; and every
//! word of every event it decodes to is in the raw bytes of the event's line.

use std::path::{Path, PathBuf};

use decode_claude::Claude;
use history_core::{SessionFile, SessionKey, Transcript};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude/projects");
    let mut out = Vec::new();
    for project in std::fs::read_dir(root).unwrap().flatten() {
        for f in std::fs::read_dir(project.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "jsonl") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

/// splitmix64: a small deterministic generator, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn decode(path: &Path) -> Result<usize, String> {
    let file = SessionFile {
        key: SessionKey::new("claude", "x"),
        path: path.to_path_buf(),
        modified: 0,
        size: 0,
    };
    let mut n = 0;
    Claude::new(PathBuf::new())
        .decode(&file, &mut |_| n += 1, None)
        .map(|_| n)
        .map_err(|e| e.to_string())
}

#[test]
fn mutated_fixtures_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.jsonl");
    let mut rng = Rng(7);
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        for round in 0..60 {
            let mut bytes = original.clone();
            match round % 4 {
                0 => bytes.truncate(rng.below(bytes.len())),
                1 => {
                    for _ in 0..1 + rng.below(8) {
                        let i = rng.below(bytes.len());
                        if let Some(b) = bytes.get_mut(i) {
                            *b = rng.next() as u8;
                        }
                    }
                }
                2 => {
                    let i = rng.below(bytes.len());
                    let junk: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
                    bytes.splice(i..i, junk);
                }
                _ => {
                    // Swap two lines: parents after children, duplicated uuids.
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    let mut lines: Vec<&str> = text.lines().collect();
                    if lines.len() > 1 {
                        let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                        lines.swap(a, b);
                        let dup = lines[rng.below(lines.len())];
                        lines.push(dup);
                    }
                    bytes = lines.join("\n").into_bytes();
                }
            }
            std::fs::write(&target, &bytes).unwrap();
            let _ = decode(&target);
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.jsonl");
    let mut rng = Rng(11);
    for _ in 0..200 {
        let len = rng.below(4096);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(4) {
                0 => b'\n',
                1 => b"{}[]\":,"[rng.below(7)],
                _ => rng.next() as u8,
            })
            .collect();
        std::fs::write(&target, bytes).unwrap();
        let _ = decode(&target);
    }
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
    let err = decode(&huge).unwrap_err();
    assert!(err.contains("512 MiB"), "{err}");

    let long = dir.path().join("long.jsonl");
    let mut line = b"{\"type\":\"user\",\"x\":\"".to_vec();
    line.resize(65 * 1024 * 1024, b'a');
    line.extend_from_slice(b"\"}\n");
    std::fs::write(&long, line).unwrap();
    let err = decode(&long).unwrap_err();
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
    let mut rng = Rng(3);
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        for round in 0..40 {
            let mut bytes = original.clone();
            if round > 0 {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(bytes.len());
                    if let Some(b) = bytes.get_mut(i) {
                        *b = b"{}[]\":,0e9\\u"[rng.below(12)];
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
    };
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let mut full = Vec::new();
    let reference = claude.decode(&file, &mut |e| full.push(e), None);
    for variant in 0..4u64 {
        let wanted = |line: &[u8]| {
            let h = line
                .iter()
                .fold(seed ^ variant, |h, b| h.wrapping_mul(31) ^ u64::from(*b));
            variant > 0 && Rng(h).below(3) == 0
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
                "{}: decode {:?} vs decode_matching {:?}",
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
        };
        let mut events = Vec::new();
        if claude.decode(&file, &mut |e| events.push(e), None).is_err() {
            continue;
        }
        let raw = std::fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
        for event in &events {
            let line = lines[event.seq as usize - 1];
            let missing = history_core::prefilter::word_missing_from_line(&event.text, line);
            assert_eq!(missing, None, "{:?} in {}", event.text, path.display());
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}
