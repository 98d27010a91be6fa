//! GitHub Copilot CLI through the CLI: one test per rule of its format, each over the fixture
//! named after it (`fixtures/copilot/home`), and the real samples snapshotted.

use std::path::Path;

use assert_cmd::Command;
use insta::assert_snapshot;
use serde_json::Value;

use crate::common::{copy_tree, every_role, fixtures, Roots, Run};

fn copilot(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("copilot", args)
}

/// Every event of a session: `(seq, role, kind, text)`.
fn events(roots: &Roots, session: &str, extra: &[&str]) -> Vec<(u64, String, String, String)> {
    let page = copilot(roots, &every_role(session, extra)).json();
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{session}: {page}"))
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

/// The `(role, kind)` of every hit of a search of every Copilot session.
fn hits(roots: &Roots, query: &str) -> Vec<(String, String, String)> {
    let run = copilot(
        roots,
        &[
            "list",
            "--session",
            "copilot:*",
            "--query",
            query,
            "--limit",
            "100",
            "--json",
        ],
    );
    if run.code == 1 {
        return Vec::new();
    }
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["session"].as_str().unwrap().to_string(),
                i["role"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(all: &[(u64, String, String, String)]) -> Vec<(u64, &str, &str)> {
    all.iter()
        .map(|(s, r, k, _)| (*s, r.as_str(), k.as_str()))
        .collect()
}

#[test]
fn the_user_text_is_what_was_typed_not_the_transformed_content() {
    let r = Roots::new();
    let all = events(&r, "copilot:basic-turn", &[]);
    assert_eq!(
        all[0],
        (2, "user".into(), "message".into(), "list the files".into())
    );
    assert!(
        hits(&r, "current_datetime")
            .iter()
            .all(|(s, _, _)| s != "copilot:basic-turn"),
        "the injected datetime of transformedContent is not shown"
    );
}

#[test]
fn a_tool_start_that_repeats_a_requested_call_is_no_event() {
    let r = Roots::new();
    let all = events(&r, "copilot:basic-turn", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "user", "message"),
            (4, "tool", "tool_call"),
            (6, "tool", "tool_output"),
            (9, "assistant", "message"),
        ]
    );
    assert_eq!(all[1].3, "bash: ls -la\n{\"description\":\"List files\"}");
    let page = copilot(&r, &every_role("copilot:basic-turn", &[])).json();
    assert_eq!(
        page["items"][2]["tool"], "bash",
        "the output takes its call's name"
    );
}

#[test]
fn duplicated_tool_starts_are_no_events_and_a_start_alone_is_the_call() {
    let r = Roots::new();
    let all = events(&r, "copilot:duplicate-tool-start", &[]);
    let calls: Vec<(u64, &str)> = all
        .iter()
        .filter(|e| e.2 == "tool_call")
        .map(|e| (e.0, e.3.as_str()))
        .collect();
    assert_eq!(
        calls,
        vec![(3, "view: /work/demo/README.md"), (7, "glob: **/*.rs")],
        "the request's call, and the first start of a call no request named"
    );
}

#[test]
fn model_traces_that_repeat_the_conversation_are_never_events() {
    let r = Roots::new();
    let found = hits(&r, "quaggalens");
    assert_eq!(
        found,
        vec![
            (
                "copilot:model-traces-skipped".into(),
                "user".into(),
                "message".into()
            ),
            (
                "copilot:model-traces-skipped".into(),
                "assistant".into(),
                "message".into()
            ),
        ]
    );
}

#[test]
fn a_compaction_summary_is_context_and_the_events_before_it_stay() {
    let r = Roots::new();
    let all = events(&r, "copilot:compaction-summary", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "user", "message"),
            (3, "assistant", "message"),
            (6, "context", "summary"),
            (7, "user", "message"),
            (8, "assistant", "message"),
        ]
    );
    assert!(all[2].3.contains("three passes"));
}

#[test]
fn a_subagents_inline_events_are_the_work_of_its_task_call() {
    let r = Roots::new();
    let all = events(&r, "copilot:subagent-inline", &[]);
    let dialogue: Vec<(u64, &str)> = all
        .iter()
        .filter(|e| e.1 == "user" || e.1 == "assistant")
        .map(|e| (e.0, e.1.as_str()))
        .collect();
    assert_eq!(dialogue, vec![(2, "user"), (17, "assistant")]);
    let sub: Vec<(u64, &str, &str)> = pairs(&all)
        .into_iter()
        .filter(|(s, _, _)| (6..=14).contains(s))
        .collect();
    assert_eq!(
        sub,
        vec![
            (8, "tool", "subagent_prompt"),
            (9, "context", "meta"),
            (11, "tool", "subagent_message"),
            (11, "tool", "tool_call"),
            (13, "tool", "tool_output"),
            (14, "tool", "subagent_message"),
        ]
    );
    assert_eq!(
        all[1].3,
        "task: Find config loading\nSearch the repo for where the config file is loaded\n\
         {\"agent_type\":\"explore\"}"
    );
}

#[test]
fn user_turns_the_harness_wrote_are_context() {
    let r = Roots::new();
    let all = events(&r, "copilot:injected-user-turns", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "user", "message"),
            (3, "assistant", "message"),
            (4, "context", "meta"),
            (5, "context", "meta"),
            (6, "assistant", "message"),
        ]
    );
    assert!(
        all[2].3.contains("task_complete tool"),
        "the continuation's transformedContent"
    );
}

#[test]
fn a_nonzero_exit_and_a_failed_tool_are_tool_errors() {
    let r = Roots::new();
    let all = events(&r, "copilot:failing-tools", &[]);
    let results: Vec<(u64, &str)> = all
        .iter()
        .filter(|e| e.2.starts_with("tool_") && e.2 != "tool_call")
        .map(|e| (e.0, e.2.as_str()))
        .collect();
    assert_eq!(results, vec![(6, "tool_error"), (7, "tool_error")]);
    assert!(all
        .iter()
        .any(|e| e.3 == "No match found for old_str in /work/demo/src/lib.rs"));
}

#[test]
fn a_resume_in_another_directory_moves_the_session_there() {
    let r = Roots::new();
    let page = copilot(&r, &every_role("copilot:resume-new-cwd", &[])).json();
    let item = &page["items"][0];
    assert_eq!(item["cwd"], "/work/new-place");
    assert_eq!(item["git_branch"], "feature");
    let run = copilot(&r, &["list", "--cwd", "/work/new-place", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["items"][0]["session"], "copilot:resume-new-cwd");
    let all = events(&r, "copilot:resume-new-cwd", &[]);
    assert_eq!(
        all.len(),
        4,
        "the turns before and after the resume: {all:?}"
    );
}

#[test]
fn ephemeral_events_in_the_log_are_no_events() {
    let r = Roots::new();
    let all = events(&r, "copilot:ephemeral-skipped", &[]);
    assert_eq!(
        pairs(&all),
        vec![(2, "user", "message"), (5, "assistant", "message")]
    );
    assert!(hits(&r, "streamed").is_empty());
}

#[test]
fn a_rewind_takes_the_events_it_names_off_the_branch() {
    let r = Roots::new();
    let active = events(&r, "copilot:snapshot-rewind", &[]);
    let seqs: Vec<u64> = active.iter().map(|e| e.0).collect();
    assert_eq!(seqs, vec![2, 3, 7, 8]);
    let all = copilot(
        &r,
        &every_role("copilot:snapshot-rewind", &["--all-branches"]),
    )
    .json();
    let marks: Vec<(u64, bool)> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["seq"].as_u64().unwrap(),
                i["on_active_branch"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        vec![
            (2, true),
            (3, true),
            (4, false),
            (5, false),
            (7, true),
            (8, true)
        ]
    );
}

#[test]
fn reasoning_is_the_assistants() {
    let r = Roots::new();
    let all = events(&r, "copilot:reasoning", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "user", "message"),
            (3, "assistant", "reasoning"),
            (4, "assistant", "reasoning"),
            (4, "assistant", "message"),
        ]
    );
}

#[test]
fn notices_are_context_the_title_is_named_and_task_complete_is_no_event() {
    let r = Roots::new();
    let all = events(&r, "copilot:notices-and-title", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "context", "meta"),
            (4, "user", "message"),
            (5, "context", "meta"),
            (6, "context", "error"),
            (7, "context", "meta"),
        ]
    );
    let page = copilot(&r, &every_role("copilot:notices-and-title", &[])).json();
    assert_eq!(page["items"][0]["title"], "Fix the flaky upload");
    assert!(
        hits(&r, "Nothing was changed").is_empty(),
        "it repeats the task_complete call"
    );
}

#[test]
fn a_flat_log_is_named_by_its_session_start() {
    let r = Roots::new();
    let all = events(&r, "copilot:flat-layout", &[]);
    assert_eq!(
        pairs(&all),
        vec![(2, "user", "message"), (3, "assistant", "message")]
    );
}

#[test]
fn damaged_lines_give_a_notice_and_the_rest_is_read() {
    let r = Roots::new();
    let run = copilot(&r, &every_role("copilot:damaged-lines", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = run.json();
    let notice = page["notice"].as_str().unwrap_or_default().to_string() + &run.stderr;
    assert!(notice.contains("no session.start"), "{notice}");
    assert!(notice.contains("skipped 2 unreadable lines"), "{notice}");
    assert!(notice.contains("last line (5) is incomplete"), "{notice}");
    let all = events(&r, "copilot:damaged-lines", &[]);
    assert_eq!(
        pairs(&all),
        vec![(1, "user", "message"), (4, "assistant", "message")]
    );
}

#[test]
fn a_line_separator_inside_a_string_does_not_break_the_line() {
    let r = Roots::new();
    let all = events(&r, "copilot:unicode-line-separator", &[]);
    assert_eq!(all[0].3, "split\u{2028}here and\u{2029}there");
    assert_eq!(
        pairs(&all),
        vec![(2, "user", "message"), (3, "assistant", "message")]
    );
}

#[test]
fn a_legacy_session_reads_its_timeline() {
    let r = Roots::new();
    let all = events(&r, "copilot:legacy-timeline", &[]);
    assert_eq!(
        pairs(&all),
        vec![
            (2, "context", "meta"),
            (3, "user", "message"),
            (4, "assistant", "message"),
            (5, "tool", "tool_call"),
            (5, "tool", "tool_output"),
            (6, "tool", "tool_call"),
            (6, "tool", "tool_error"),
            (7, "context", "error"),
            (8, "assistant", "message"),
        ]
    );
    assert_eq!(
        all[3].3,
        "str_replace_editor: str_replace /work/demo/Cargo.toml\n\
         {\"old_str\":\"name = \\\"demo\\\"\",\"new_str\":\"name = \\\"driftwood\\\"\"}",
        "the edit's strings are searchable"
    );
    assert_eq!(
        all[5].3,
        "bash: cargo build\n{\"sessionId\":\"main\",\"async\":false}"
    );
}

#[test]
fn the_resume_command_is_copilot_resume() {
    let r = Roots::new();
    let page = copilot(&r, &every_role("copilot:basic-turn", &[])).json();
    assert_eq!(
        page["items"][0]["resume"],
        serde_json::json!({"argv": ["copilot", "--resume", "basic-turn"], "cwd": null}),
        "Copilot finds the session from any directory"
    );
}

#[test]
fn the_selector_names_every_copilot_session() {
    let r = Roots::new();
    let run = copilot(
        &r,
        &["list", "--session", "copilot:*", "--limit", "100", "--json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout;
    for id in [
        "basic-turn",
        "model-traces-skipped",
        "duplicate-tool-start",
        "compaction-summary",
        "subagent-inline",
        "injected-user-turns",
        "failing-tools",
        "resume-new-cwd",
        "ephemeral-skipped",
        "snapshot-rewind",
        "reasoning",
        "notices-and-title",
        "flat-layout",
        "damaged-lines",
        "unicode-line-separator",
        "legacy-timeline",
    ] {
        assert!(
            text.contains(&format!("copilot:{id}")),
            "{id} missing: {text}"
        );
    }
}

/// The binary over the real samples alone (read in place).
fn samples(args: &[&str]) -> (String, i32) {
    let home = tempfile::tempdir().unwrap();
    let empty = home.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    // A copy at a path as long on every machine: a cut page's recipes repeat the roots, so
    // where the checkout lies must not move the cut.
    let root = home.path().join("copilot");
    copy_tree(&fixtures().join("samples/copilot"), &root);
    let mut cmd = Command::cargo_bin("notesoup-history").unwrap();
    cmd.env_clear()
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("NOTESOUP_HISTORY_INDEX", "off");
    for harness in history_cli::HARNESSES {
        let to: &Path = if harness.name == "copilot" {
            &root
        } else {
            &empty
        };
        cmd.arg(format!("--{}", harness.root_flag)).arg(to);
    }
    let out = cmd.args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout)
        .replace(&empty.display().to_string(), "[EMPTY]")
        .replace(&root.display().to_string(), "[FIXTURES]/samples/copilot");
    (text, out.status.code().unwrap_or(-1))
}

const SAMPLE: &str = "copilot:96ef38f0-9d09-45c3-8124-6448c36090ed";
const LEGACY: &str = "copilot:0b2a81da-02cf-4cbb-ae14-07c597b84f4e";

#[test]
fn the_overview_of_the_samples() {
    let (out, code) = samples(&["list", "--session", "copilot:*"]);
    assert_eq!(code, 0);
    assert_snapshot!("copilot_samples_overview", out);
}

#[test]
fn browsing_the_samples() {
    let mut out = String::new();
    for session in [SAMPLE, LEGACY] {
        let (page, code) = samples(&["list", "--session", session, "--limit", "100"]);
        assert_eq!(code, 0, "{page}");
        out.push_str(&format!("===== {session}\n{page}"));
    }
    let (read, code) = samples(&["read", "--session", SAMPLE, "--seq", "9", "--part", "1"]);
    assert_eq!(code, 0, "{read}");
    out.push_str(&format!("===== read seq 9 part 1\n{read}"));
    assert_snapshot!("copilot_samples_browse", out);
}

#[test]
fn searching_the_samples() {
    let (out, code) = samples(&[
        "list",
        "--session",
        "copilot:*",
        "--query",
        "Cargo.toml",
        "--limit",
        "12",
    ]);
    assert_eq!(code, 0);
    assert_snapshot!("copilot_samples_search", out);
}

/// A document's head and one line per section (as `export.rs` outlines the other samples).
fn outline(doc: &str) -> String {
    let section = |line: &str| {
        (line.starts_with("## ") || line.starts_with("<summary>")) && line.contains(" · seq ")
    };
    let mut out = String::new();
    let mut in_head = true;
    for line in doc.lines() {
        in_head &= !(section(line) || line == "<details>");
        if in_head && !line.is_empty() || section(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn exporting_the_samples() {
    let mut out = String::new();
    for session in [SAMPLE, LEGACY] {
        let (doc, code) = samples(&["export", "--session", session]);
        assert_eq!(code, 0, "{doc}");
        out.push_str(&format!("===== {session}\n{}", outline(&doc)));
    }
    assert_snapshot!("copilot_samples_export", out);
}

#[test]
fn the_1_0_34_sample_shows_every_event_once_in_its_role() {
    let (out, code) = samples(&[
        "list",
        "--session",
        SAMPLE,
        "--role",
        "user",
        "--role",
        "assistant",
        "--role",
        "tool",
        "--role",
        "context",
        "--limit",
        "1000",
        "--budget",
        "100000000",
        "--json",
    ]);
    assert_eq!(code, 0);
    let page: Value = serde_json::from_str(&out).unwrap();
    let items = page["items"].as_array().unwrap();
    let count = |role: &str, kind: &str| {
        items
            .iter()
            .filter(|i| i["role"] == role && i["kind"] == kind)
            .count()
    };
    assert_eq!(count("user", "message"), 1, "one typed prompt");
    assert_eq!(
        count("context", "meta"),
        4,
        "two system prompts, the continuation, an info"
    );
    assert_eq!(
        count("tool", "tool_call"),
        13,
        "every call once, starts that repeat one dropped"
    );
    assert_eq!(count("tool", "tool_output"), 13);
    assert_eq!(count("assistant", "message"), 1);
}
