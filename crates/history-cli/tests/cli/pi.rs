//! pi through the CLI: the active branch, `--all-branches`, versions, forks, damage, roots.

use std::fs;

use crate::common::{every_role, fixtures, Roots, Run};
use insta::assert_snapshot;

fn pi(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("pi", args)
}

#[test]
fn the_active_branch_leaves_holes_and_all_branches_marks_them() {
    let r = Roots::new();
    let active = pi(&r, &every_role("pi:branched", &[]));
    let seqs: Vec<u64> = active.positions().iter().map(|p| p.0).collect();
    assert!(!seqs.iter().any(|s| (5..=8).contains(s)), "{seqs:?}");
    assert!(seqs.contains(&11) && seqs.contains(&12));

    let all = pi(&r, &every_role("pi:branched", &["--all-branches"])).json();
    for item in all["items"].as_array().unwrap() {
        let seq = item["seq"].as_u64().unwrap();
        assert_eq!(
            item["on_active_branch"],
            !(5..=8).contains(&seq),
            "seq {seq}"
        );
    }
    let hidden = pi(
        &r,
        &["list", "--session", "pi:*", "--query", "failed under load"],
    );
    assert_eq!(
        hidden.code, 0,
        "the branch summary on the active branch mentions it"
    );
    let only_off = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:*",
            "--query",
            "A fails under load",
            "--json",
        ],
    );
    assert_eq!(only_off.code, 1, "{}", only_off.stdout);
    let found = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:*",
            "--query",
            "A fails under load",
            "--all-branches",
            "--json",
        ],
    );
    assert_eq!(found.json()["items"][0]["on_active_branch"], false);
    // Recipes keep the flag, so that following them shows the same events.
    let page = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:branched",
            "--all-branches",
            "--limit",
            "2",
            "--json",
        ],
    )
    .json();
    assert_eq!(page["older"]["all_branches"], true);
}

#[test]
fn every_fixture_browses() {
    let r = Roots::new();
    let mut out = String::new();
    for id in [
        "branched",
        "compaction-split-turn",
        "v1-linear",
        "v2-hook-message",
        "fork-parent",
        "fork-child",
        "tool-result-before-call",
        "glued-lines",
        "empty-assistant-error",
        "metadata-entries",
        "missing-parent",
        "fork-bug-duplicates",
        "future-version",
        "lone-surrogate",
        "damaged-truncated-last-line",
        "damaged-not-json",
        "damaged-array-line",
        "damaged-invalid-utf8",
        "damaged-missing-header",
        "damaged-parent-cycle",
        "019f86d0",
    ] {
        let run = pi(
            &r,
            &["list", "--session", &format!("pi:{id}"), "--limit", "50"],
        );
        assert!(run.code <= 1, "{id}: {}", run.stderr);
        out.push_str(&format!("===== {id}\n{}", run.shown()));
    }
    assert_snapshot!("pi_browse_all", out);
}

#[test]
fn damaged_files_give_notices_not_failures() {
    let r = Roots::new();
    for id in [
        "damaged-truncated-last-line",
        "damaged-not-json",
        "damaged-array-line",
        "damaged-invalid-utf8",
        "damaged-missing-header",
        "damaged-parent-cycle",
    ] {
        let run = pi(&r, &every_role(&format!("pi:{id}"), &[]));
        assert_eq!(run.code, 0, "{id}: {}", run.stderr);
        assert!(run.json()["notice"].is_string(), "{id} has no notice");
    }
}

#[test]
fn roles_and_kinds_follow_the_event_model() {
    let r = Roots::new();
    let run = pi(&r, &every_role("pi:v2-hook-message", &[])).json();
    let kinds: Vec<String> = run["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{}:{}",
                i["role"].as_str().unwrap(),
                i["kind"].as_str().unwrap()
            )
        })
        .collect();
    assert!(kinds.contains(&"context:meta".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"tool:tool_error".to_string()), "{kinds:?}");
    let read = pi(
        &r,
        &["read", "--session", "pi:019f86d0", "--seq", "5", "--json"],
    )
    .json();
    assert_eq!(read["item"]["role"], "user");
    assert_eq!(read["session"], "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7");
}

#[test]
fn roots_come_from_flags_then_environment() {
    let r = Roots::new();
    // $PI_CODING_AGENT_DIR/sessions and $CLAUDE_CONFIG_DIR/projects.
    let agent = r.dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::os::unix::fs::symlink(r.root("pi"), agent.join("sessions")).unwrap();
    let config = r.dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::os::unix::fs::symlink(r.root("claude"), config.join("projects")).unwrap();
    let out = r
        .cmd()
        .env_remove("NOTESOUP_HISTORY_PI_ROOT")
        .env_remove("NOTESOUP_HISTORY_CLAUDE_ROOT")
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("CLAUDE_CONFIG_DIR", &config)
        .args([
            "list",
            "--session",
            "*",
            "--query",
            "write-through",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = r
        .cmd()
        .env_remove("NOTESOUP_HISTORY_CLAUDE_ROOT")
        .env("CLAUDE_CONFIG_DIR", &config)
        .args(["list", "--session", "claude:abandoned-branch", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // A flag beats the environment.
    let empty = r.dir.path().join("home");
    let flag = pi(
        &r,
        &[
            "--pi-root",
            empty.to_str().unwrap(),
            "list",
            "--session",
            "pi:*",
            "--json",
        ],
    );
    assert_eq!(flag.code, 1);
}

#[test]
fn a_root_named_by_the_environment_need_not_be_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let r = Roots::new();
    let odd = r
        .dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"sessions-\xff\xfe"));
    std::os::unix::fs::symlink(r.root("pi"), &odd).unwrap();
    let out = r
        .cmd()
        .env("NOTESOUP_HISTORY_PI_ROOT", &odd)
        .args(["list", "--session", "pi:019f86d0", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["session"], "pi:019f86d0-2b56-72c1-b90f-60a707fde7d7");
}

// ----- pi v3 of 2026 ---------------------------------------------------------------------------

/// `(seq, part, role, kind, text)` of every item of a run.
fn items(run: &Run) -> Vec<(u64, u64, String, String, String)> {
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["seq"].as_u64().unwrap(),
                i["part"].as_u64().unwrap(),
                i["role"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
                i["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_tree_branch_left_for_a_custom_entry_is_off_the_active_branch() {
    let r = Roots::new();
    let id = "pi:tree-branch-custom-leaf";
    let active = pi(&r, &every_role(id, &[]));
    let seqs: Vec<u64> = active.positions().iter().map(|p| p.0).collect();
    assert_eq!(seqs, [2, 3], "lines 4–8 are the abandoned branch");
    let off = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:*",
            "--query",
            "Write the changelog",
        ],
    );
    assert_eq!(off.code, 1, "{}", off.stdout);
    let all = pi(&r, &every_role(id, &["--all-branches"])).json();
    let abandoned: Vec<u64> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["on_active_branch"] == false)
        .map(|i| i["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(abandoned, [4, 5, 6, 7, 8]);
}

#[test]
fn a_fork_child_s_copied_entries_keep_their_earlier_times() {
    let r = Roots::new();
    let id = "pi:fork-child-earlier-timestamps";
    let all = pi(&r, &["list", "--session", id, "--json"]).json();
    let times: Vec<&str> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["timestamp"].as_str().unwrap())
        .collect();
    assert_eq!(
        times,
        [
            "2026-03-02T09:00:01.000Z",
            "2026-03-02T09:00:02.000Z",
            "2026-04-21T12:00:05.000Z",
            "2026-04-21T12:00:06.000Z"
        ]
    );
    let own = pi(
        &r,
        &["list", "--session", id, "--since", "2026-04-21", "--json"],
    );
    assert_eq!(
        own.texts(),
        ["Now add a contributing section.", "Added CONTRIBUTING.md."]
    );
}

#[test]
fn session_info_and_custom_messages_are_context() {
    let r = Roots::new();
    let name = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:*",
            "--query",
            "subagent: find flaky",
            "--json",
        ],
    );
    let found: Vec<(u64, String, String)> =
        items(&name).into_iter().map(|i| (i.0, i.2, i.3)).collect();
    assert_eq!(found, [(4, "context".to_string(), "meta".to_string())]);
    let custom = pi(&r, &every_role("pi:custom-message-display", &[]));
    let roles: Vec<(u64, String)> = items(&custom).into_iter().map(|i| (i.0, i.2)).collect();
    assert_eq!(
        roles,
        [
            (2, "user".to_string()),
            (3, "context".to_string()),
            (4, "context".to_string()),
            (5, "assistant".to_string())
        ]
    );
    let browse = pi(
        &r,
        &["list", "--session", "pi:custom-message-display", "--json"],
    );
    assert_eq!(
        browse.texts(),
        ["Summarize the open todos.", "Two todos are open."]
    );
}

#[test]
fn extension_tools_are_tools_and_extension_entries_show_nothing() {
    let r = Roots::new();
    let id = "pi:extension-entries-and-tools";
    let all = items(&pi(&r, &every_role(id, &[])));
    assert!(all.iter().all(|i| i.0 != 3 && i.0 != 11), "custom entries");
    let calls: Vec<&str> = all
        .iter()
        .filter(|i| i.3 == "tool_call")
        .map(|i| i.4.split(':').next().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "web_search",
            "fetch_content",
            "multi_grep",
            "spawn_pi",
            "subagent",
            "ask_user_question"
        ]
    );
    let outputs = all.iter().filter(|i| i.3 == "tool_output").count();
    assert_eq!(outputs, 6);
    let read = pi(
        &r,
        &[
            "read",
            "--session",
            id,
            "--seq",
            "4",
            "--part",
            "3",
            "--json",
        ],
    )
    .json();
    assert!(read.to_string().contains("spawn_pi"), "{read}");
}

#[test]
fn a_compaction_kept_from_an_assistant_entry_keeps_the_whole_path() {
    let r = Roots::new();
    let id = "pi:compaction-from-assistant";
    let all = items(&pi(&r, &every_role(id, &[])));
    let seqs: Vec<u64> = all.iter().map(|i| i.0).collect();
    assert_eq!(seqs, [2, 3, 4, 5, 6, 7, 8]);
    let summary = all.iter().find(|i| i.0 == 7).unwrap();
    assert_eq!(
        (summary.2.as_str(), summary.3.as_str()),
        ("context", "summary")
    );
    let browse = pi(&r, &["list", "--session", id, "--json"]);
    assert_eq!(
        browse.texts(),
        [
            "Refactor the parser into two passes.",
            "The parser now runs in two passes."
        ]
    );
}

#[test]
fn signatures_are_not_text_and_errors_and_aborts_are_context() {
    let r = Roots::new();
    let id = "pi:assistant-signatures-and-stop-reasons";
    for signature in ["msg_0a1b2c", "encrypted_content", "tool_calls"] {
        let run = pi(&r, &["list", "--session", id, "--query", signature]);
        assert_eq!(run.code, 1, "{signature}: {}", run.stdout);
    }
    let all = items(&pi(&r, &every_role(id, &[])));
    let errors: Vec<(u64, &str)> = all
        .iter()
        .filter(|i| i.3 == "error")
        .map(|i| (i.0, i.2.as_str()))
        .collect();
    assert_eq!(errors, [(5, "context"), (7, "context")]);
    assert!(
        all.iter().all(|i| i.0 != 4),
        "an empty tool result shows nothing"
    );
    let browse = pi(&r, &["list", "--session", id, "--json"]);
    assert_eq!(
        browse.texts(),
        [
            "Run the linter.",
            "**Running the linter**",
            "Running clippy.",
            "Try again.",
            "Once more, please.",
            "Clippy is clean."
        ]
    );
}

/// Discovery keeps what it saw of pi's root for the next run (`history-walks/pi.walk` in the
/// cache): a settled directory is not listed again, nor a header read again, until they change.
#[test]
fn discovery_reads_again_only_what_changed_since_the_last_walk() {
    let r = Roots::new();
    let ids = |r: &Roots| r.session_ids("pi");
    let old = "019f86d0-2b56-72c1-b90f-60a707fde7d7";
    let first = ids(&r);
    assert!(first.contains(&format!("pi:{old}")));
    let memo = r.dir.path().join("cache/notesoup/history-walks/pi.walk");
    assert!(memo.is_file());
    // Once the copied directories have settled, a walk keeps their listings; the next one finds
    // nothing new and leaves the memo as it was.
    std::thread::sleep(std::time::Duration::from_nanos(
        history_core::SETTLED_NS as u64 + 200_000_000,
    ));
    assert_eq!(ids(&r), first);
    let kept = fs::read(&memo).unwrap();
    assert_eq!(ids(&r), first);
    assert_eq!(
        fs::read(&memo).unwrap(),
        kept,
        "a walk with nothing new rewrote the memo"
    );
    // A header rewritten in place (its directory unchanged): read again.
    let dir = r
        .root("pi")
        .join("--Users-ben-.claude-jobs-37c36311-tmp-tui-pi--");
    let file = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replacen(old, "rewritten", 1)).unwrap();
    let renamed = |added: &[&str]| {
        let mut want: Vec<String> = (first.iter())
            .filter(|id| **id != format!("pi:{old}"))
            .cloned()
            .chain(added.iter().map(|id| format!("pi:{id}")))
            .collect();
        want.sort();
        want
    };
    assert_eq!(ids(&r), renamed(&["rewritten"]));
    // A session added to a directory whose listing was kept: listed again.
    let added = dir.join("2026-07-22T00-00-00-000Z_added.jsonl");
    fs::write(added, text.replacen(old, "added", 1)).unwrap();
    assert_eq!(ids(&r), renamed(&["added", "rewritten"]));
}

// ----- pi 0.73 (formats/pi.md §14), fixtures under `fixtures/pi-2026` --------------------------

/// The fixture roots with `fixtures/pi-2026` copied into pi's.
fn roots_073() -> Roots {
    Roots::with_extra("pi", &fixtures().join("pi-2026/sessions"))
}

#[test]
fn an_assistant_s_diagnostics_are_no_text_and_a_compaction_s_usage_changes_nothing() {
    let r = roots_073();
    let id = "pi:assistant-diagnostics";
    let all = items(&pi(&r, &every_role(id, &[])));
    let shown: Vec<(u64, &str, &str)> = all
        .iter()
        .map(|i| (i.0, i.2.as_str(), i.3.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (2, "user", "message"),
            (3, "assistant", "message"),
            (4, "context", "summary"),
            (5, "user", "message"),
            (6, "assistant", "message")
        ]
    );
    assert_eq!(all[1].4, "The DIAG073 log shows two restarts.");
    let diagnosed = pi(&r, &["list", "--session", "pi:*", "--query", "DIAGNOSED"]);
    assert_eq!(diagnosed.code, 1, "{}", diagnosed.stdout);
    assert!(
        all[2].4.contains("Turn Context (split turn)"),
        "{}",
        all[2].4
    );
}

#[test]
fn a_fork_that_copies_the_whole_tree_keeps_the_parent_chain_of_its_last_entry() {
    let r = roots_073();
    let child = "pi:fork-copies-whole-tree";
    let seqs: Vec<u64> = pi(&r, &every_role(child, &[]))
        .positions()
        .iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(
        seqs,
        [2, 3, 6, 7, 8, 9],
        "lines 4–5, the copied abandoned branch, are holes"
    );
    let abandoned = pi(
        &r,
        &["list", "--session", "pi:*", "--query", "FORK073 abandoned"],
    );
    assert_eq!(abandoned.code, 1, "{}", abandoned.stdout);
    let kept = pi(
        &r,
        &[
            "list",
            "--session",
            "pi:*",
            "--query",
            "FORK073 kept question",
            "--json",
        ],
    )
    .json();
    let sessions: Vec<&str> = kept["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect();
    assert_eq!(
        sessions.len(),
        2,
        "the parent's and the fork's copy, each in its session: {sessions:?}"
    );
    let all = pi(&r, &every_role(child, &["--all-branches"])).json();
    let off: Vec<u64> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["on_active_branch"] == false)
        .map(|i| i["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(off, [4, 5]);
}
