//! pi through the CLI: the active branch, `--all-branches`, versions, forks, damage, roots.

mod common;

use common::{every_role, Roots};
use insta::assert_snapshot;

fn pi(roots: &Roots, args: &[&str]) -> common::Run {
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
        out.push_str(&format!("===== {id}\n{}", run.stdout));
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
    let flag = pi(
        &r,
        &[
            "--pi-root",
            "/nonexistent",
            "list",
            "--session",
            "pi:*",
            "--json",
        ],
    );
    assert_eq!(flag.code, 1);
}
