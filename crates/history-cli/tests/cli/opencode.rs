//! OpenCode through the CLI: a session per rule of its format (`fixtures/opencode/data`, made by
//! `fixtures/opencode/make.py`), the newest turn only in the database's log, the legacy tree,
//! channel databases, resume, selection, and a database that is never written.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{every_role, fixtures, Roots, Run};

fn opencode(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("opencode", args)
}

/// Every event of a session, as `(seq, role, kind, text)`, on the selected branch (or on every
/// branch, marked, with `--all-branches` in `extra`).
fn events(roots: &Roots, session: &str, extra: &[&str]) -> Vec<(u64, String, String, String)> {
    let run = opencode(roots, &every_role(session, extra));
    assert!(run.code <= 1, "{}{}", run.stdout, run.stderr);
    if run.code == 1 {
        return Vec::new();
    }
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["seq"].as_u64().unwrap(),
                i["role"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
                i["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The role and kind of the one event whose text holds `needle`.
fn role_of(all: &[(u64, String, String, String)], needle: &str) -> (String, String) {
    let found: Vec<_> = all.iter().filter(|e| e.3.contains(needle)).collect();
    assert_eq!(found.len(), 1, "{needle}: {all:#?}");
    (found[0].1.clone(), found[0].2.clone())
}

fn is(all: &[(u64, String, String, String)], needle: &str, role: &str, kind: &str) {
    assert_eq!(role_of(all, needle), (role.into(), kind.into()), "{needle}");
}

#[test]
fn text_roles_user_assistant_and_reasoning() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_text_roles", &[]);
    is(&all, "text-roles-prompt", "user", "message");
    is(&all, "text-roles-thinking", "assistant", "reasoning");
    is(&all, "text-roles-answer", "assistant", "message");
    // One seq per message: the prompt is 1, the reply (its step parts give no event) 2.
    let seqs: Vec<u64> = all.iter().map(|e| e.0).collect();
    assert_eq!(seqs, [1, 2, 2]);
}

#[test]
fn tool_parts_are_a_call_and_its_result() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_tool_parts", &[]);
    is(&all, "bash: ls tool-parts-dir", "tool", "tool_call");
    is(&all, "tool-parts-listing", "tool", "tool_output");
    is(
        &all,
        "read: /home/me/src/app/tool-parts.md",
        "tool",
        "tool_call",
    );
    is(&all, "1: tool-parts-content", "tool", "tool_output");
    // A shell command that failed completes with its exit code: an error.
    is(&all, "tool-parts-exit-output", "tool", "tool_error");
    is(&all, "tool-parts-error: oldString", "tool", "tool_error");
    is(&all, r#"edit: {"filePath":"a.txt""#, "tool", "tool_call");
    // A call still running has no result yet.
    is(&all, "glob: *.rs", "tool", "tool_call");
    let tools: Vec<_> = all.iter().filter(|e| e.1 == "tool").collect();
    assert_eq!(tools.len(), 9, "{tools:#?}");
}

#[test]
fn synthetic_context_and_attachments() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_synthetic_context", &[]);
    is(&all, "synthetic-context-prompt", "user", "message");
    is(&all, "synthetic-context-expansion", "context", "meta");
    is(&all, "synthetic-context-ignored", "context", "meta");
    is(&all, "[file: notes.md]", "user", "message");
    is(&all, "[image: shot.png]", "user", "message");
}

#[test]
fn compaction_request_summary_and_continue_are_context() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_compaction", &[]);
    is(&all, "compaction-before-prompt", "user", "message");
    is(&all, "compaction (auto)", "context", "meta");
    is(&all, "compaction-summary", "context", "summary");
    is(&all, "compaction-continue", "context", "meta");
    is(&all, "compaction-after-answer", "assistant", "message");
    // Nothing before the compaction is dropped.
    is(&all, "compaction-before-answer", "assistant", "message");
}

#[test]
fn subagent_is_a_session_of_its_own_that_names_its_parent() {
    let r = Roots::new();
    let parent = events(&r, "opencode:ses_subagent_parent", &[]);
    is(&parent, "subagent-task-prompt", "tool", "tool_call");
    is(&parent, "subagent-result", "tool", "tool_output");
    let child = events(&r, "opencode:ses_subagent_child", &[]);
    is(&child, "subagent-task-prompt", "user", "message");
    is(&child, "subagent-child-answer", "assistant", "message");
    let run = opencode(
        &r,
        &["list", "--session", "opencode:ses_subagent_child", "--json"],
    );
    let item = &run.json()["items"][0];
    assert_eq!(item["title"], "Explore (@explore subagent)", "{item}");
}

#[test]
fn fork_holds_its_copy_of_the_history_and_its_own_turns() {
    let r = Roots::new();
    let fork = events(&r, "opencode:ses_fork", &[]);
    is(&fork, "text-roles-prompt", "user", "message");
    is(&fork, "fork-own-answer", "assistant", "message");
    let hits = opencode(
        &r,
        &[
            "list",
            "--session",
            "opencode:*",
            "--query",
            "text-roles-answer",
            "--json",
        ],
    );
    let sessions: Vec<String> = hits.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
}

#[test]
fn revert_hides_the_undone_message_and_what_follows() {
    let r = Roots::new();
    let active = events(&r, "opencode:ses_revert", &[]);
    let texts: Vec<&str> = active.iter().map(|e| e.3.as_str()).collect();
    assert_eq!(texts, ["revert-kept-prompt", "revert-kept-answer"]);
    let all = opencode(&r, &every_role("opencode:ses_revert", &["--all-branches"])).json();
    let marks: Vec<(String, bool)> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["text"].as_str().unwrap().into(),
                i["on_active_branch"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            ("revert-kept-prompt".into(), true),
            ("revert-kept-answer".into(), true),
            ("revert-undone-prompt".into(), false),
            ("revert-undone-answer".into(), false)
        ]
    );
}

#[test]
fn damaged_rows_are_skipped_with_a_notice() {
    let r = Roots::new();
    let run = opencode(&r, &every_role("opencode:ses_damaged_rows", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = run.json();
    let texts: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["damaged-rows-prompt", "damaged-rows-answer"]);
    let notice = page["notice"].to_string();
    assert!(
        notice.contains("msg_damaged") && notice.contains("damaged part"),
        "{notice}"
    );
}

#[test]
fn assistant_error_is_context() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_assistant_error", &[]);
    is(
        &all,
        "APIError: assistant-error-message",
        "context",
        "error",
    );
}

#[test]
fn quoted_prompt_keeps_its_quotes() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_quoted_prompt", &[]);
    is(&all, "\"quoted-prompt list the files\"", "user", "message");
}

#[test]
fn archived_sessions_are_still_read() {
    let r = Roots::new();
    is(
        &events(&r, "opencode:ses_archived", &[]),
        "archived-prompt",
        "user",
        "message",
    );
}

#[test]
fn channel_database_sessions_are_found() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_channel_database", &[]);
    is(&all, "channel-database-prompt", "user", "message");
}

#[test]
fn legacy_tree_is_read_and_the_database_wins_for_an_id_in_both() {
    let r = Roots::new();
    let all = events(&r, "opencode:ses_legacy_tree", &[]);
    let shown: Vec<(u64, &str, &str)> = all
        .iter()
        .map(|e| (e.0, e.1.as_str(), e.3.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (1, "user", "legacy-tree-prompt"),
            (2, "tool", "bash: legacy-tree-command"),
            (2, "tool", "legacy-tree-output"),
            (2, "assistant", "legacy-tree-answer"),
        ]
    );
    let both = events(&r, "opencode:ses_both_stores", &[]);
    let texts: Vec<&str> = both.iter().map(|e| e.3.as_str()).collect();
    assert_eq!(texts, ["both-stores-database-text"]);
}

#[test]
fn resume_is_opencode_session_in_the_session_s_directory() {
    let r = Roots::new();
    let run = opencode(
        &r,
        &["list", "--session", "opencode:ses_text_roles", "--json"],
    );
    let item = &run.json()["items"][0];
    assert_eq!(
        item["resume"],
        serde_json::json!({"argv": ["opencode", "--session", "ses_text_roles"], "cwd": "/home/me/src/app"}),
        "{item}"
    );
    let text = opencode(&r, &["list", "--session", "opencode:ses_text_roles"]);
    assert!(
        text.stdout
            .contains("cd /home/me/src/app && opencode --session ses_text_roles"),
        "{}",
        text.stdout
    );
}

#[test]
fn selectors_take_opencode_ids_and_prefixes() {
    let r = Roots::new();
    let run = opencode(&r, &["list", "--session", "opencode:ses_quot", "--json"]);
    assert_eq!(run.json()["session"], "opencode:ses_quoted_prompt");
    let all = opencode(
        &r,
        &[
            "list",
            "--session",
            "opencode:*",
            "--limit",
            "100",
            "--json",
        ],
    );
    assert_eq!(all.code, 0, "{}", all.stderr);
    let n = all.json()["items"].as_array().unwrap().len();
    // 13 in opencode.db, 1 in opencode-dev.db, 1 of the legacy tree alone.
    assert_eq!(n, 15, "{}", all.stdout);
}

/// The `wal` fixture in a root of its own, with modification times in the past.
fn wal_root(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("opencode-wal");
    std::fs::create_dir_all(&root).unwrap();
    for e in std::fs::read_dir(fixtures().join("opencode-wal/data")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), root.join(e.file_name())).unwrap();
    }
    root
}

/// Every file of `dir`: bytes, modification and access times.
fn state(dir: &Path) -> BTreeMap<String, (Vec<u8>, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut history_core::open_untouched(&e.path()).unwrap(),
                &mut bytes,
            )
            .unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (
                    bytes,
                    m.mtime_nsec() + m.mtime() * 1_000_000_000,
                    m.atime_nsec() + m.atime() * 1_000_000_000,
                ),
            )
        })
        .collect()
}

#[test]
fn the_newest_turn_only_in_the_log_is_shown_and_no_file_is_touched() {
    let r = Roots::new();
    let root = wal_root(r.dir.path());
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    for e in std::fs::read_dir(&root).unwrap() {
        let f = std::fs::File::options()
            .write(true)
            .open(e.unwrap().path())
            .unwrap();
        f.set_times(
            std::fs::FileTimes::new()
                .set_accessed(old)
                .set_modified(old),
        )
        .unwrap();
    }
    let before = state(&root);
    let root_arg = root.display().to_string();
    for (args, newest) in [
        (
            vec!["list", "--session", "opencode:ses_wal_only_turn", "--json"],
            true,
        ),
        (
            vec![
                "list",
                "--session",
                "*",
                "--query",
                "only in the log",
                "--json",
            ],
            true,
        ),
        (
            vec!["export", "--session", "opencode:ses_wal_only_turn"],
            true,
        ),
        // The overview shows the first prompt.
        (vec!["list", "--session", "*"], false),
    ] {
        let mut all = vec!["--opencode-root", root_arg.as_str()];
        all.extend(args);
        let run = opencode(&r, &all);
        assert_eq!(run.code, 0, "{all:?}: {}", run.stderr);
        let shown = run.stdout.contains("The newest answer, only in the log.");
        assert_eq!(shown, newest, "{all:?}: {}", run.stdout);
        assert_eq!(
            state(&root),
            before,
            "{all:?}: a file of the database changed or appeared"
        );
    }
}

#[test]
fn a_turn_and_a_title_added_to_the_log_are_seen_by_the_cached_overview() {
    let r = Roots::new();
    let root = wal_root(r.dir.path());
    let root_arg = root.display().to_string();
    let title = |r: &Roots| {
        let run = opencode(
            r,
            &[
                "--opencode-root",
                &root_arg,
                "list",
                "--session",
                "opencode:*",
                "--json",
            ],
        );
        run.json()["items"][0]["title"].clone()
    };
    // Twice: the second answer is the overview cache's.
    assert_eq!(title(&r), Value::from("Newest turn in the log"));
    assert_eq!(title(&r), Value::from("Newest turn in the log"));
    // A writer that names the session and appends a turn, as OpenCode does, leaving both in
    // the log.
    let conn = rusqlite::Connection::open(root.join("opencode.db")).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch(
        "UPDATE session SET title = 'Renamed later' WHERE id = 'ses_wal_only_turn';
         INSERT INTO message VALUES ('msg_zz', 'ses_wal_only_turn', 1790000000000, 1790000000000,
           '{\"role\":\"user\",\"time\":{\"created\":1790000000000}}');
         INSERT INTO part VALUES ('prt_zz', 'msg_zz', 'ses_wal_only_turn', 1790000000000,
           1790000000000, '{\"type\":\"text\",\"text\":\"a turn added later\"}');",
    )
    .unwrap();
    assert_eq!(title(&r), Value::from("Renamed later"));
    let mut args = vec!["--opencode-root", root_arg.as_str()];
    args.extend(every_role("opencode:ses_wal_only_turn", &[]));
    let texts = opencode(&r, &args).texts();
    assert_eq!(texts.last().unwrap(), "a turn added later");
    drop(conn);
}

/// The recording of OpenCode 1.18.33 (`fixtures/recorded/opencode-1.18.33`): its overview, a
/// browse of the main session, one event read whole, a search and an export, as a person sees
/// them. Its newest turns are only in the database's log.
#[test]
fn the_recorded_release_in_snapshots() {
    const MAIN: &str = "opencode:ses_dc1d88de8ffeHK4z3T36wGzUMh";
    let r = Roots::new();
    let root = r.dir.path().join("recorded");
    std::fs::create_dir_all(&root).unwrap();
    let recorded = fixtures().join("recorded/opencode-1.18.33/opencode");
    for e in std::fs::read_dir(&recorded).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), root.join(e.file_name())).unwrap();
    }
    let root = root.display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--opencode-root", root.as_str()];
        all.extend(args);
        let run = opencode(&r, &all);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        run.shown()
    };
    insta::assert_snapshot!(
        "opencode_recorded_overview",
        run(&["list", "--session", "opencode:*"])
    );
    insta::assert_snapshot!(
        "opencode_recorded_browse",
        run(&["list", "--session", MAIN, "--limit", "50"])
    );
    insta::assert_snapshot!(
        "opencode_recorded_read",
        run(&["read", "--session", MAIN, "--seq", "12", "--part", "1"])
    );
    insta::assert_snapshot!(
        "opencode_recorded_search",
        run(&["list", "--session", "*", "--query", "qzo07"])
    );
    insta::assert_snapshot!(
        "opencode_recorded_export",
        run(&["export", "--session", MAIN])
    );
}
