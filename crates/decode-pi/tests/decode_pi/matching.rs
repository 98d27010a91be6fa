//! `decode` with a line test is `decode` restricted to the lines a search wants: for every fixture file
//! and many line tests, the events of exactly the lines the test passes (equal to what `decode`
//! emits for them), and the same branch, notices, meta and lineage.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{self, check_matching, check_matching_subsets};
use history_core::{SessionFile, SessionKey, Transcript};

/// Every file under the fixture root, discovered or not.
fn fixture_files() -> Vec<SessionFile> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&common::root(), &mut paths);
    paths.sort();
    let discovered = common::pi().discover();
    paths
        .into_iter()
        .map(|path| {
            discovered
                .iter()
                .find(|f| f.path == path)
                .cloned()
                .unwrap_or_else(|| SessionFile {
                    key: SessionKey::new("pi", "undiscovered"),
                    path,
                    modified: 0,
                    size: 0,
                    fingerprint: None,
                })
        })
        .collect()
}

#[test]
fn every_fixture_with_every_line_none_and_random_subsets() {
    let pi = common::pi();
    let files = fixture_files();
    assert!(files.len() >= 20, "{} fixture files", files.len());
    for file in &files {
        check_matching_subsets(&pi, file, 64);
    }
}

/// The words of a file: runs of letters, digits, `_` and `-` of three bytes or more.
fn words(bytes: &[u8]) -> BTreeSet<Vec<u8>> {
    bytes
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
        .filter(|w| w.len() >= 3)
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn every_fixture_with_lines_containing_each_of_its_words() {
    let pi = common::pi();
    let mut tests = 0;
    for file in fixture_files() {
        let bytes = fs::read(&file.path).unwrap();
        for word in words(&bytes) {
            let test = |line: &[u8]| line.windows(word.len()).any(|w| w == word.as_slice());
            let what = format!("lines containing {:?}", String::from_utf8_lossy(&word));
            check_matching(&pi, &file, &test, &what);
            let lower = word.to_ascii_lowercase();
            let test = |line: &[u8]| {
                line.windows(lower.len())
                    .any(|w| w.eq_ignore_ascii_case(&lower))
            };
            check_matching(&pi, &file, &test, &format!("{what}, any case"));
            tests += 2;
        }
    }
    assert!(tests > 1000, "{tests} word tests");
}

/// Lines that a light read could get wrong, in one file: entries without ids (with and without
/// a `parentId` key), v1 compaction indexes, repeated and escaped keys, values a full parse
/// refuses (a number out of range, nesting past serde_json's limit, a control character in a
/// string, invalid UTF-8, a lone surrogate to repair), glued objects with a bad tail, repeated
/// headers, session names of the wrong type.
#[test]
fn lines_a_light_read_could_get_wrong() {
    let deep = format!(
        r#"{{"type":"message","id":"deep","parentId":"u1","x":{}1{},"message":{{"role":"user","content":"deep"}}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let lines: Vec<Vec<u8>> = vec![
        br#"{"type":"session","version":1,"id":"edge","cwd":"/w","timestamp":"2026-01-01T00:00:00Z"}"#.to_vec(),
        br#"{"type":"message","message":{"role":"user","content":"v1 one","timestamp":1}}"#.to_vec(),
        br#"{"type":"message","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"root again"}]}}"#.to_vec(),
        br#"{"type":"compaction","summary":"sum","firstKeptEntryIndex":2,"tokensBefore":1e400}"#.to_vec(),
        br#"{"type":"compaction","summary":"sum2","firstKeptEntryIndex":-0,"x":1.5e3}"#.to_vec(),
        br#"{"type":"message","id":"u1","id":"u1b","parentId":"00000002","parentId":"00000001","message":{"role":"user","content":"dup keys"}}"#.to_vec(),
        br#"{"\u0074ype":"session_info","\u0069d":"si","parentId":"u1b","name":"  Escaped name  "}"#.to_vec(),
        br#"{"type":"session_info","id":"si2","parentId":"si","name":["not","a","string"]}"#.to_vec(),
        br#"{"type":"session","id":"again"}"#.to_vec(),
        deep.into_bytes(),
        b"{\"type\":\"message\",\"id\":\"ctl\",\"parentId\":\"si2\",\"message\":{\"role\":\"user\",\"content\":\"tab\there\"}}".to_vec(),
        b"{\"type\":\"message\",\"id\":\"utf\",\"parentId\":\"si2\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}".to_vec(),
        br#"{"type":"message","id":"sur","parentId":"si2","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"cut \ud83d"}]}}"#.to_vec(),
        br#"{"type":"label","id":"l1","parentId":"sur","label":"glued"}{"type":"message","id":"g2","parentId":"l1","message":{"role":"user","content":"second"}} {"type":"message","id":"g3","x":1e999}"#.to_vec(),
        br#"{"type":"label","id":"l2","parentId":"g2","label":"then a number"} 5"#.to_vec(),
        br#"[{"type":"message","id":"arr"}]"#.to_vec(),
        br#"{"type":"message","id":"last","parentId":"l2","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"errorMessage":"boom"}}"#.to_vec(),
        br#"{"type":"message","parentId":null,"message":{"role":"user","content":"orphan leaf"}}"#.to_vec(),
    ];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("decode-pi-matching");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("--w--")).unwrap();
    let path = dir
        .join("--w--")
        .join("2026-01-01T00-00-00-000Z_edge.jsonl");
    let pi = decode_pi::Pi::new(dir.clone());
    // With and without the last line (an id-less root), and cut inside its last line.
    for n in [lines.len(), lines.len() - 1] {
        let mut bytes = lines[..n].join(&b'\n');
        for cut in [bytes.len() + 1, bytes.len(), bytes.len() - 20] {
            let mut b = bytes.clone();
            if cut > b.len() {
                b.push(b'\n');
            } else {
                b.truncate(cut);
            }
            fs::write(&path, &b).unwrap();
            let file = pi.discover().remove(0);
            check_matching_subsets(&pi, &file, 64);
            for word in words(&b) {
                let test = |line: &[u8]| line.windows(word.len()).any(|w| w == word.as_slice());
                check_matching(&pi, &file, &test, &String::from_utf8_lossy(&word));
            }
        }
        bytes.clear();
    }
}
