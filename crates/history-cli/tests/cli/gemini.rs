//! Gemini CLI through the CLI: a recording replayed (upserts, `$set`, `$rewindTo`), resume stubs
//! and legacy `.json`, sub-agents, the project's root, resume commands, the real samples
//! snapshotted, and the search index equal to a scan as recordings grow and are rewritten.

use insta::assert_snapshot;
use serde_json::Value;

use crate::common::{every_role, Roots, Run};
use crate::index::{append, same_both_ways, Guard};

fn gemini(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("gemini", args)
}

fn items(run: &Run) -> Vec<Value> {
    run.json()["items"].as_array().cloned().unwrap_or_default()
}

/// `(seq, role, text)` of every event of a session.
fn events(roots: &Roots, session: &str) -> Vec<(u64, String, String)> {
    let run = gemini(
        roots,
        &every_role(session, &["--from", "oldest", "--budget", "100000000"]),
    );
    assert_eq!(run.code, 0, "{run:?}");
    items(&run)
        .iter()
        .map(|i| {
            (
                i["seq"].as_u64().unwrap(),
                i["role"].as_str().unwrap().to_string(),
                i["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn count(events: &[(u64, String, String)], text: &str) -> usize {
    events.iter().filter(|e| e.2 == text).count()
}

#[test]
fn a_reply_written_twice_and_its_results_sent_back_are_shown_once() {
    let r = Roots::new();
    let all = events(&r, "gemini:replayed-upserts");
    assert_eq!(count(&all, "Listing the files now."), 1);
    let outputs = all
        .iter()
        .filter(|e| e.2.contains("Output: Cargo.toml"))
        .count();
    assert_eq!(outputs, 1, "{all:?}");
    let role = |text: &str| {
        all.iter()
            .find(|e| e.2.starts_with(text))
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(role("<session_context>"), "context");
    assert_eq!(role("What files"), "user");
    assert_eq!(role("Planning the listing"), "assistant");
    assert_eq!(role("run_shell_command: "), "tool");
    assert_eq!(role("File not found"), "tool");
    assert_eq!(role("Request cancelled."), "context");
    // A search sees each once too.
    let hits = gemini(
        &r,
        &[
            "list",
            "--session",
            "gemini:*",
            "--query",
            "listing the files",
            "--json",
        ],
    );
    assert_eq!(items(&hits).len(), 1, "{}", hits.stdout);
}

#[test]
fn a_resume_writing_the_history_again_shows_it_once_in_its_order() {
    let r = Roots::new();
    let all = events(&r, "gemini:resumed-same-file");
    let seqs: Vec<u64> = all.iter().map(|e| e.0).collect();
    assert_eq!(seqs, [2, 3, 9, 10, 11], "{all:?}");
    assert_eq!(count(&all, "The README describes a history reader."), 0);
}

#[test]
fn a_rewind_drops_what_it_rewound() {
    let r = Roots::new();
    let all = events(&r, "gemini:rewound-to-first");
    assert_eq!(count(&all, "Borrowed, never owned."), 0);
    assert_eq!(count(&all, "Crates in the hold sail."), 1);
    let hidden = gemini(
        &r,
        &["list", "--session", "gemini:*", "--query", "never owned"],
    );
    assert_eq!(hidden.code, 1, "{hidden:?}");
    let cleared = gemini(&r, &every_role("gemini:rewind-unknown-clears", &[]));
    assert_eq!(items(&cleared).len(), 1);
    let notice = cleared.json()["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        notice.contains("rewinds to a message that is not in the list"),
        "{cleared:?}"
    );
}

#[test]
fn a_resume_stub_and_a_migrated_legacy_file_are_not_sessions_of_their_own() {
    let r = Roots::new();
    let run = gemini(
        &r,
        &["list", "--session", "gemini:*", "--json", "--limit", "100"],
    );
    let ids: Vec<String> = items(&run)
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        ids.iter().filter(|i| *i == "gemini:stubbed-resume").count(),
        1,
        "{ids:?}"
    );
    assert_eq!(
        ids.iter()
            .filter(|i| *i == "gemini:migrated-legacy")
            .count(),
        1,
        "{ids:?}"
    );
    assert_eq!(ids.len(), 12, "{ids:?}");
    let stubbed = events(&r, "gemini:stubbed-resume");
    assert_eq!(count(&stubbed, "Answered in the original file."), 1);
    let migrated = events(&r, "gemini:migrated-legacy");
    assert_eq!(migrated.last().unwrap().2, "A prompt after the migration.");
}

#[test]
fn a_legacy_json_is_browsed_read_and_searched_by_the_lines_of_its_messages() {
    let r = Roots::new();
    let all = events(&r, "gemini:legacy-only");
    assert_eq!(all[0], (2, "user".into(), "Rename the crate.".into()));
    let read = gemini(
        &r,
        &[
            "read",
            "--session",
            "gemini:legacy-only",
            "--seq",
            "3",
            "--part",
            "2",
            "--json",
        ],
    );
    assert_eq!(read.code, 0, "{read:?}");
    assert!(read.stdout.contains("replace: "), "{}", read.stdout);
    let hit = gemini(
        &r,
        &[
            "list",
            "--session",
            "gemini:*",
            "--query",
            "holds the name",
            "--json",
        ],
    );
    let found = items(&hit);
    assert_eq!(found.len(), 1, "{}", hit.stdout);
    assert_eq!(found[0]["seq"], 3);
}

#[test]
fn a_subagent_is_a_session_naming_its_parent() {
    let r = Roots::new();
    let run = gemini(
        &r,
        &["list", "--session", "gemini:sub-generalist-1", "--json"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let item = &items(&run)[0];
    assert_eq!(item["session"], "gemini:sub-generalist-1");
    assert_eq!(item["cwd"], "/work/demo");
    let hits = gemini(
        &r,
        &[
            "list",
            "--session",
            "gemini:*",
            "--query",
            "3 TODO comments",
            "--json",
        ],
    );
    let sessions: Vec<String> = items(&hits)
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_string())
        .collect();
    assert!(
        sessions.contains(&"gemini:sub-generalist-1".to_string()),
        "{sessions:?}"
    );
    assert!(
        sessions.contains(&"gemini:with-subagent".to_string()),
        "{sessions:?}"
    );
}

#[test]
fn every_item_names_the_project_and_how_to_resume_in_it() {
    let r = Roots::new();
    let run = gemini(&r, &["list", "--session", "gemini:with-subagent", "--json"]);
    let item = &items(&run)[0];
    assert_eq!(item["cwd"], "/work/demo");
    assert_eq!(
        item["resume"]["argv"],
        serde_json::json!(["gemini", "--resume", "with-subagent"])
    );
    assert_eq!(item["resume"]["cwd"], "/work/demo");
    let old = gemini(&r, &["list", "--session", "gemini:legacy-only", "--json"]);
    assert_eq!(items(&old)[0]["cwd"], "/work/old-project");
    // A legacy file's lines are its view's: one message a line.
    assert_eq!(items(&old)[0]["line"], 2, "{}", old.stdout);
    let by_place = gemini(
        &r,
        &[
            "list",
            "--session",
            "gemini:*",
            "--cwd",
            "/work/old-project",
            "--json",
        ],
    );
    assert_eq!(items(&by_place).len(), 2, "{}", by_place.stdout);
}

#[test]
fn damaged_lines_are_skipped_with_a_notice() {
    let r = Roots::new();
    let run = gemini(&r, &every_role("gemini:damaged-lines", &[]));
    assert_eq!(run.code, 0);
    assert_eq!(items(&run).len(), 2);
    let notice = run.json()["notice"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        notice.contains("skipped 2 unreadable lines (3, 4)"),
        "{run:?}"
    );
}

#[test]
fn the_session_selector_finds_and_pick_lists_gemini_sessions() {
    let r = Roots::new();
    let one = gemini(&r, &["list", "--session", "gemini:display*", "--json"]);
    assert_eq!(one.code, 0, "{one:?}");
    let unqualified = r.run(&["list", "--session", "rewound-to", "--json"]);
    assert_eq!(
        unqualified.json()["session"],
        "gemini:rewound-to-first",
        "{unqualified:?}"
    );
    let found = gemini(&r, &["find", "haiku", "rust", "--json"]);
    assert_eq!(found.code, 0, "{found:?}");
    assert_eq!(
        found.json()["sessions"][0]["session"],
        "gemini:rewound-to-first",
        "{found:?}"
    );
    let summed = gemini(
        &r,
        &[
            "list",
            "--sessions",
            "--session",
            "gemini:*",
            "--query",
            "TODO",
            "--json",
        ],
    );
    assert_eq!(summed.code, 0, "{summed:?}");
    assert!(
        summed.stdout.contains("gemini:sub-generalist-1"),
        "{summed:?}"
    );
    let mixed = r.run(&["list", "--query", "Explain @notes.md", "--json"]);
    assert!(mixed.stdout.contains("gemini:display-content"), "{mixed:?}");
}

fn samples(args: &[&str]) -> Run {
    let r = Roots::with_samples();
    gemini(&r, args)
}

#[test]
fn the_real_samples_overview_browse_search_and_export() {
    let only = crate::common::fixtures().join("samples/gemini");
    let only = only.to_str().unwrap();
    let overview = samples(&["--gemini-root", only, "list", "--session", "gemini:*"]);
    assert_snapshot!("gemini_samples_overview", overview.shown());
    let browse = samples(&[
        "list",
        "--session",
        "gemini:0ab84937-9fe7-4284-986a-33c832af0b6a",
        "--limit",
        "6",
    ]);
    assert_snapshot!("gemini_sample_browse", browse.shown());
    let search = samples(&[
        "list",
        "--session",
        "gemini:*",
        "--query",
        "README",
        "--limit",
        "4",
    ]);
    assert_snapshot!("gemini_samples_search", search.shown());
    let read = samples(&["read", "--session", "gemini:8a20078e", "--seq", "2"]);
    assert_snapshot!("gemini_legacy_sample_read", read.shown());
    let export = samples(&["export", "--session", "gemini:0ab84937"]);
    assert_eq!(export.code, 0, "{export:?}");
    let outline: String = export
        .stdout
        .lines()
        .enumerate()
        .filter(|(i, l)| {
            *i == 0
                || ((l.starts_with("## ") || l.starts_with("<summary>")) && l.contains(" · seq "))
        })
        .map(|(_, l)| l)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_snapshot!("gemini_sample_export_outline", outline);
}

#[test]
fn every_sample_event_once_in_its_role() {
    let r = Roots::with_samples();
    let all = events(&r, "gemini:0ab84937-9fe7-4284-986a-33c832af0b6a");
    let mut seen = std::collections::HashSet::new();
    for e in &all {
        assert!(seen.insert((e.0, e.2.clone())), "twice: {e:?}");
    }
    let users: Vec<&str> = all
        .iter()
        .filter(|e| e.1 == "user")
        .map(|e| e.2.as_str())
        .collect();
    assert_eq!(users.len(), 2, "{users:?}");
    assert_eq!(users[0], "/init");
}

const REPLAYED: &str = "gemini/tmp/demo/chats/session-2026-05-01T10-00-replayed.jsonl";

#[test]
fn the_index_equals_a_scan_as_a_recording_is_replayed_further() {
    let r = crate::index::roots();
    let _guard = Guard(&r);
    let searches: [&[&str]; 3] = [
        &["list", "--query", "gemini marker", "--json"],
        &[
            "list",
            "--query",
            "Listing the files",
            "--json",
            "--from",
            "oldest",
        ],
        &[
            "list",
            "--session",
            "gemini:*",
            "--query",
            "marker",
            "--role",
            "user",
            "--json",
        ],
    ];
    let agree = || {
        for args in searches {
            same_both_ways(&r, args);
        }
    };
    agree();
    // A new turn, the reply written twice, then a rewind of the new turn and a rewrite of an
    // old message: the index must follow the replay, not the lines.
    let t = "2026-05-01T10:01:00.000Z";
    append(&r, REPLAYED, &format!(
        "{{\"id\":\"u9\",\"timestamp\":\"{t}\",\"type\":\"user\",\"content\":[{{\"text\":\"first gemini marker\"}}]}}\n"
    ));
    agree();
    append(&r, REPLAYED, &format!(
        "{{\"id\":\"a9\",\"timestamp\":\"{t}\",\"type\":\"gemini\",\"content\":\"reply gemini marker\"}}\n\
         {{\"id\":\"a9\",\"timestamp\":\"{t}\",\"type\":\"gemini\",\"content\":\"reply gemini marker, rewritten\"}}\n"
    ));
    agree();
    append(&r, REPLAYED, "{\"$rewindTo\":\"u9\"}\n");
    agree();
    let gone = r.run_indexed(&["list", "--query", "gemini marker", "--json"]);
    assert_eq!(gone.code, 1, "{gone:?}");
    append(&r, REPLAYED, &format!(
        "{{\"id\":\"a1\",\"timestamp\":\"{t}\",\"type\":\"gemini\",\"content\":\"Listing the files, second gemini marker.\"}}\n"
    ));
    agree();
    let hits = r.run_indexed(&["list", "--query", "Listing the files", "--json"]);
    let texts: Vec<String> = items(&hits)
        .iter()
        .map(|i| i["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        texts,
        ["Listing the files, second gemini marker."],
        "{hits:?}"
    );
    // A legacy document rewritten whole.
    let legacy = r.dir.path().join(
        "gemini/tmp/abababababababababababababababababababababababababababababababab/chats/session-2026-03-01T09-00-legacy-o.json",
    );
    let text = std::fs::read_to_string(&legacy)
        .unwrap()
        .replace("Rename the crate.", "Rename the gemini marker crate.");
    std::fs::write(&legacy, text).unwrap();
    agree();
    let legacy_hit = r.run_indexed(&["list", "--query", "marker crate", "--json"]);
    assert_eq!(items(&legacy_hit).len(), 1, "{legacy_hit:?}");
}
