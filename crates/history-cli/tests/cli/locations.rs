//! Every `--json` item names the line it was decoded from (`path`, `line`, `byte_offset`,
//! `byte_len`) and how to reopen its session (`resume`); text output shows neither.

use crate::common::Roots;
use history_cli::HARNESSES;
use history_core::Timestamp;
use serde_json::Value;

/// The bytes of a transcript as its lines are written (a `.zst` file decompressed), read as its
/// harness reads it.
fn raw(r: &Roots, harness: &str, path: &str) -> Vec<u8> {
    let h = HARNESSES.iter().find(|h| h.name == harness).unwrap();
    let source = (h.open)(r.root(harness).to_path_buf());
    // Runs print the temporary directory as `[ROOT]`.
    let path = path.replace("[ROOT]", &r.dir.path().display().to_string());
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut source.open_raw(std::path::Path::new(&path)).unwrap(),
        &mut bytes,
    )
    .unwrap();
    bytes
}

/// Checks that the item's location names a whole line of its file, the `line`-th, whose time
/// is the item's; returns whether the line is in the session's own file (or may be).
fn check_location(r: &Roots, item: &Value) -> bool {
    let session = item["session"].as_str().unwrap();
    let (harness, id) = session.split_once(':').unwrap();
    let path = item["path"].as_str().unwrap();
    let bytes = raw(r, harness, path);
    let (line, offset, len) = (
        item["line"].as_u64().unwrap(),
        item["byte_offset"].as_u64().unwrap() as usize,
        item["byte_len"].as_u64().unwrap() as usize,
    );
    let what = format!("{session} seq {} at {path}:{line}", item["seq"]);
    assert!(
        offset == 0 || bytes[offset - 1] == b'\n',
        "{what}: starts a line"
    );
    let rest = &bytes[offset + len..];
    assert!(
        rest.is_empty() || rest.starts_with(b"\n") || rest.starts_with(b"\r\n"),
        "{what}: ends a line"
    );
    let before = bytes[..offset].iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(before + 1, line, "{what}: the line number");
    let line_bytes = &bytes[offset..offset + len];
    assert!(
        line_bytes.trim_ascii().starts_with(b"{"),
        "{what}: a JSON line"
    );
    // A line the decoder repairs (a lone surrogate escape) is not JSON to serde as it is.
    let text: Value = serde_json::from_slice(line_bytes).unwrap_or_default();
    if let Some(t) = item["timestamp"].as_str().filter(|_| !text.is_null()) {
        let stamp = text["timestamp"].as_str().map(Timestamp::parse_rfc3339);
        assert_eq!(stamp, Some(Timestamp::parse_rfc3339(t)), "{what}: its time");
    }
    if harness != "codex" {
        assert_eq!(item["seq"], item["line"], "{what}: seq is the line");
    }
    harness != "codex" || path.contains(id)
}

#[test]
fn every_item_names_its_line_in_its_file() {
    let r = Roots::new();
    let mut inherited = 0;
    let mut checked = 0;
    for harness in ["claude", "codex", "pi", "omp"] {
        let sessions = r.run(&[
            "list",
            "--session",
            &format!("{harness}:*"),
            "--limit",
            "500",
            "--json",
        ]);
        for session in sessions.json()["items"].as_array().unwrap() {
            let one = r.run(&[
                "list",
                "--session",
                session["session"].as_str().unwrap(),
                "--query",
                "e",
                "--limit",
                "500",
                "--budget",
                "4000000",
                "--json",
            ]);
            if one.code != 0 {
                continue;
            }
            for item in one.json()["items"].as_array().unwrap() {
                checked += 1;
                if !check_location(&r, item) {
                    inherited += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} items checked");
    assert!(
        inherited > 0,
        "a Codex fork's inherited history is located in its parent's file"
    );
}

#[test]
fn search_hits_and_reads_are_located_too() {
    let r = Roots::new();
    let hits = r.run(&["list", "--session", "*", "--query", "the", "--json"]);
    let items = hits.json()["items"].as_array().unwrap().clone();
    assert!(!items.is_empty());
    for item in &items {
        check_location(&r, item);
    }
    let first = &items[0];
    let read = r.run(&[
        "read",
        "--session",
        first["session"].as_str().unwrap(),
        "--seq",
        &first["seq"].to_string(),
        "--part",
        &first["part"].to_string(),
        "--json",
    ]);
    let item = &read.json()["item"];
    for field in ["path", "line", "byte_offset", "byte_len", "resume"] {
        assert_eq!(item[field], first[field], "{field}");
    }
}

#[test]
fn resume_reopens_the_session_in_its_agent() {
    let r = Roots::new();
    let resume = |session: &str| {
        let page = r.run(&["list", "--session", session, "--json"]).json();
        page["items"][0]["resume"].clone()
    };
    assert_eq!(
        resume("claude:70fc6d83"),
        serde_json::json!({
            "argv": ["claude", "--resume", "70fc6d83-147d-4fdf-b015-bd67eeb11883"],
            "cwd": "/Users/soph/Work/entire/devenv/cli"
        })
    );
    assert_eq!(
        resume("codex:019c8bfe"),
        serde_json::json!({
            "argv": ["codex", "resume", "019c8bfe-ec25-79e0-97d7-bda6a9c575ff"],
            "cwd": null
        })
    );
    let pi = r
        .run(&["list", "--session", "pi:019f86d0", "--json"])
        .json();
    let path = pi["items"][0]["path"].as_str().unwrap().to_string();
    assert_eq!(
        pi["items"][0]["resume"],
        serde_json::json!({"argv": ["pi", "--session", path], "cwd": null})
    );
}

#[test]
fn text_output_shows_no_locations() {
    let r = Roots::new();
    let text = r.run(&["list", "--session", "claude:70fc6d83"]);
    assert_eq!(text.code, 0);
    assert!(!text.stdout.contains("byte_offset") && !text.stdout.contains("\"line\""));
    // What a person needs of it is a command line: how to resume the session.
    assert!(text.stdout.contains("\n→ resume: cd "), "{}", text.stdout);
}
