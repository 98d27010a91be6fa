//! Every harness in one overview, one search, and one selector space.

use crate::common::Roots;

#[test]
fn one_overview_mixes_every_harness_sorted_by_last_activity() {
    let r = Roots::new();
    let run = r
        .run(&["list", "--limit", "400", "--budget", "10000000", "--json"])
        .json();
    let items = run["items"].as_array().unwrap();
    for h in ["claude:", "codex:", "pi:", "omp:", "gemini:", "copilot:"] {
        assert!(
            items
                .iter()
                .any(|i| i["session"].as_str().unwrap().starts_with(h)),
            "no {h}"
        );
    }
    assert_sorted_by_last_activity(items);
    // Skipped sessions (the Claude file without a leaf) are counted, not fatal.
    assert!(run["notice"]
        .as_str()
        .unwrap()
        .contains("could not be loaded"));
}

/// An overview's sessions come oldest activity first; a session's last activity is no earlier
/// than the event that stands for it.
fn assert_sorted_by_last_activity(items: &[serde_json::Value]) {
    let times: Vec<&str> = items
        .iter()
        .map(|i| i["last_activity"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);
    for i in items {
        let at = i["timestamp"].as_str().unwrap_or("");
        assert!(i["last_activity"].as_str().unwrap_or("") >= at, "{i}");
    }
}

#[test]
fn one_search_mixes_every_harness() {
    let r = Roots::new();
    let run = r
        .run(&[
            "list",
            "--session",
            "*",
            "--query",
            "test",
            "--limit",
            "500",
            "--json",
        ])
        .json();
    let items = run["items"].as_array().unwrap();
    for h in ["claude:", "codex:", "pi:"] {
        assert!(
            items
                .iter()
                .any(|i| i["session"].as_str().unwrap().starts_with(h)),
            "no {h} hit"
        );
    }
    let keys: Vec<(bool, String, String, u64)> = items
        .iter()
        .map(|i| {
            (
                !i["timestamp"].is_null(),
                i["timestamp"].as_str().unwrap_or("").to_string(),
                i["session"].as_str().unwrap().to_string(),
                i["seq"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "untimed first, then by time, session, seq");
}

#[test]
fn unqualified_ids_try_the_current_harness_first() {
    let r = Roots::new();
    // "019" prefixes sessions of codex and pi.
    let amb = r.run(&["list", "--session", "019", "--json"]).json();
    assert_eq!(amb["error"]["code"], "ambiguous_session");
    assert!(amb["error"]["candidates"].as_array().unwrap().len() <= 5);
    let pi = r
        .run(&["list", "--session", "019f86", "--host", "codex", "--json"])
        .json();
    assert_eq!(
        pi["session"], "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7",
        "falls back to other harnesses"
    );
    let host = r
        .run_with(
            &["list", "--session", "019", "--json"],
            &[("NOTESOUP_HOST", "pi")],
        )
        .json();
    assert_eq!(
        host["session"], "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7",
        "the host's harness first"
    );
    let current = r
        .run(&[
            "list",
            "--session",
            "019",
            "--current",
            "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7",
            "--json",
        ])
        .json();
    assert_eq!(
        current["session"],
        "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7"
    );
    let wild = r
        .run(&["list", "--session", "*:019f*", "--limit", "100", "--json"])
        .json();
    let harnesses: Vec<&str> = wild["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert!(harnesses.contains(&"codex") && harnesses.contains(&"pi"));
}

#[test]
fn the_overview_cache_gives_the_same_answer_and_survives_damage() {
    let r = Roots::new();
    let cold = r.run(&["list", "--limit", "200", "--json"]);
    let cache = r.dir.path().join("cache/notesoup/history");
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(entries.len() > 10);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let warm = r.run(&["list", "--limit", "200", "--json"]);
    assert_eq!(cold.stdout, warm.stdout);
    for e in &entries {
        std::fs::write(e, b"garbage").unwrap();
    }
    let damaged = r.run(&["list", "--limit", "200", "--json"]);
    assert_eq!(cold.stdout, damaged.stdout);
    assert!(
        std::fs::read(&entries[0]).unwrap().starts_with(b"{"),
        "the entry was rewritten"
    );
    // A filtered overview does not use the cache.
    let filtered = r.run(&["list", "--limit", "200", "--role", "user", "--json"]);
    assert_eq!(filtered.code, 0);
}

#[test]
fn notesoup_home_does_not_move_history() {
    let r = Roots::new();
    let plain = r.run(&["list", "--limit", "200", "--json"]);
    let elsewhere = r.dir.path().join("notes");
    let moved = r.run_with(
        &["list", "--limit", "200", "--json"],
        &[("NOTESOUP_HOME", elsewhere.to_str().unwrap())],
    );
    assert_eq!(plain.stdout, moved.stdout);
    assert!(!elsewhere.exists(), "nothing is written there");
}

#[test]
fn small_budgets_end_and_fit() {
    // A long hit cut to its share of the room and then again to the room left once kept
    // cutting at the match's old place, forever.
    let r = Roots::new();
    for budget in ["1024", "1200", "1546", "2000"] {
        let out = r
            .cmd()
            .args([
                "list",
                "--json",
                "--query=ailer",
                "--from",
                "oldest",
                "--budget",
                budget,
            ])
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "--budget {budget}");
        assert!(
            out.stdout.len() <= budget.parse().unwrap(),
            "--budget {budget}"
        );
    }
}

/// The fixture roots with the newest real samples copied in (Codex Desktop 0.142, pi of April
/// 2026), beside the fixtures of older versions (Codex 0.104 and the G1–G4 generations, pi v1
/// to v3 of 2025–2026, Claude Code 2.1.7).
#[test]
fn the_overview_and_a_search_over_old_and_new_versions() {
    let r = Roots::with_samples();
    let new = [
        "codex:019ef35b-2300-75e0-98d6-8e4dce14050f",
        "pi:019dbe19-ca83-74b3-b3ca-230160eb3875",
    ];
    let overview = r
        .run(&["list", "--limit", "500", "--budget", "10000000", "--json"])
        .json();
    let items = overview["items"].as_array().unwrap();
    for session in new {
        let item = items
            .iter()
            .find(|i| i["session"] == session)
            .unwrap_or_else(|| panic!("{session} is not in the overview"));
        assert_eq!(item["role"], "user", "{item}");
    }
    let codex = items.iter().find(|i| i["session"] == new[0]).unwrap();
    assert_eq!(codex["text"], "check out main and pull the latest\n");
    for old in [
        "codex:019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
        "codex:4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e01",
        "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7",
        "pi:v1-linear",
    ] {
        assert!(items.iter().any(|i| i["session"] == old), "{old}");
    }
    assert_sorted_by_last_activity(items);

    // One query with hits in old and new files of both harnesses.
    let run = r
        .run(&[
            "list",
            "--session",
            "*",
            "--query",
            "README",
            "--limit",
            "2000",
            "--budget",
            "10000000",
            "--json",
        ])
        .json();
    let hits = run["items"].as_array().unwrap();
    let sessions: std::collections::BTreeSet<&str> = hits
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect();
    for session in new.iter().chain(&[
        "codex:4f1c3a7e-2b8d-4c55-9e61-0a1b2c3d4e01",
        "pi:fork-parent",
    ]) {
        assert!(
            sessions.contains(session),
            "no hit in {session}: {sessions:?}"
        );
    }
    let times: Vec<&str> = hits
        .iter()
        .map(|i| i["timestamp"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "merged by time");
    // The copies of the Desktop sample's session_meta are no hits, though they hold its text.
    let copies = r.run(&[
        "list",
        "--session",
        new[0],
        "--query",
        "You are Codex, a coding agent",
        "--budget",
        "10000000",
        "--json",
    ]);
    assert_eq!(
        copies.positions(),
        [(1, 0), (285, 0)],
        "the header's instructions and a tool output that printed them; none of the 17 copies"
    );
}
