//! The newest real samples (`fixtures/samples`: Claude Code 2.1.232, Codex 0.153.4 with its
//! paginated history, beside Codex 0.142 and pi of April 2026), in a copy of their own: the overview, a
//! browse and a search of each snapshotted, and what they show checked role by role: nothing in
//! the wrong role, nothing twice.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use assert_cmd::Command;
use insta::assert_snapshot;
use serde_json::Value;

use crate::common::fixtures;

/// The 2.1.232 sample's session id (its lines' `sessionId`), which its copy is named after.
const CLAUDE: &str = "claude:da81b1d5-eb50-45b5-b9c2-a57df460d77b";
/// The 0.153.4 sample's thread id.
const CODEX: &str = "codex:01a07c89-2b87-7df3-8a5d-cc8ad4b79b64";

/// A copy of the sample roots whose files get modification times in path order (the overview
/// orders sessions by them), and the binary over it: its standard output with the copy's path
/// replaced, and its exit code.
fn run(args: &[&str]) -> (String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    copy(&fixtures().join("samples"), dir.path(), &mut files);
    files.sort();
    for (i, file) in files.iter().enumerate() {
        let at = UNIX_EPOCH + Duration::from_secs(1_772_000_000 + 60 * i as u64);
        let f = std::fs::File::options().write(true).open(file).unwrap();
        f.set_modified(at).unwrap();
    }
    let mut cmd = Command::cargo_bin("notesoup-history").unwrap();
    cmd.env_clear()
        .env("HOME", dir.path().join("home"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("NOTESOUP_HISTORY_INDEX", "off");
    for harness in ["claude", "codex", "pi"] {
        cmd.arg(format!("--{harness}-root"))
            .arg(dir.path().join(harness));
    }
    let out = cmd.args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).replace(&dir.path().display().to_string(), "[ROOT]");
    (text, out.status.code().unwrap_or(-1))
}

/// Copies `from` into `to`, collecting the files copied.
fn copy(from: &Path, to: &Path, files: &mut Vec<PathBuf>) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target, files);
        } else if entry.path().extension().is_some_and(|e| e == "jsonl") {
            std::fs::copy(entry.path(), &target).unwrap();
            files.push(target);
        }
    }
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (out, code) = run(&all);
    assert_eq!(code, 0, "{out}");
    serde_json::from_str(&out).unwrap()
}

/// Every event of a session, whatever its role: `(seq, role, kind, text)`.
fn events(session: &str) -> Vec<(u64, String, String, String)> {
    let mut args = vec!["list", "--session", session, "--limit", "2000"];
    args.extend(["--budget", "100000000", "--from", "oldest"]);
    for role in ["user", "assistant", "tool", "context"] {
        args.extend(["--role", role]);
    }
    json(&args)["items"]
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

#[test]
fn the_overview_of_the_newest_samples() {
    let (out, code) = run(&["list", "--limit", "10"]);
    assert_eq!(code, 0, "{out}");
    assert_snapshot!("newest_overview", out);
    let overview = json(&["list", "--limit", "10"]);
    let row = |session: &str| {
        overview["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["session"] == session)
            .unwrap_or_else(|| panic!("{session} is not in the overview"))
            .clone()
    };
    assert_eq!(
        row(CLAUDE)["text"],
        "다음에 해야할 작업은 무엇일까요?",
        "its first prompt, not the /clear before it"
    );
    assert_eq!(row(CODEX)["role"], "user");
}

#[test]
fn browsing_the_newest_samples() {
    let mut out = String::new();
    for session in [CLAUDE, CODEX] {
        let (page, code) = run(&["list", "--session", session, "--limit", "30"]);
        assert_eq!(code, 0, "{page}");
        out.push_str(&format!("===== {session}\n{page}"));
    }
    assert_snapshot!("newest_browse", out);
}

#[test]
fn searching_the_newest_samples() {
    let mut out = String::new();
    for (query, role) in [("compact", "user"), ("advisor", "tool"), ("12924", "user")] {
        let args = ["list", "--session", "*", "--query", query, "--role", role];
        let (page, code) = run(&args);
        assert_eq!(code, 0, "{query}: {page}");
        out.push_str(&format!("===== {query} --role {role}\n{page}"));
    }
    assert_snapshot!("newest_search", out);
}

#[test]
fn the_2_1_232_sample_shows_typed_text_and_commands_as_user_and_nothing_twice() {
    let all = events(CLAUDE);
    // Each one's first line, up to 50 characters.
    let users: Vec<(u64, &str, String)> = all
        .iter()
        .filter(|e| e.1 == "user")
        .map(|e| {
            let first = e.3.lines().next().unwrap_or_default();
            (e.0, e.2.as_str(), first.chars().take(50).collect())
        })
        .collect();
    assert_eq!(
        users,
        [
            (9, "command", "/clear"),
            (12, "message", "다음에 해야할 작업은 무엇일까요?"),
            (115, "message", "v0.16.0의 남은 2개 항목 완료 후 릴리스"),
            (409, "command", "/compact"),
            (426, "message", "proceed"),
            (817, "command", "/lore-commit"),
            (878, "command", "/compact"),
            // Shell commands the person ran with `!` (bash mode).
            (
                896,
                "shell",
                "git commit -m \"feat(decisions): add verify-docs ga"
            ),
            (
                1083,
                "shell",
                "git commit -m \"chore(release): v0.16.0\" \\"
            ),
            (1105, "shell", "git tag v0.16.0"),
            (1112, "shell", "git push origin main --tags"),
            (1122, "shell", "git pull --rebase origin main"),
            (
                1134,
                "shell",
                "git tag -d v0.16.0 && git push origin :refs/tags/v"
            ),
            (
                1146,
                "shell",
                "git checkout -b release/v0.16.0 && git push origin"
            ),
            (1154, "message", "리뷰 스레드 확인해주세요"),
        ]
        .map(|(seq, kind, text)| (seq, kind, text.to_string()))
    );
    let advisor: Vec<&str> = all
        .iter()
        .filter(|e| e.3.contains("advisor_redacted_result"))
        .map(|e| e.1.as_str())
        .collect();
    assert_eq!(advisor, ["tool", "tool", "tool"], "encrypted, and a tool's");
    assert_twice_nowhere(&all);
}

#[test]
fn the_0_153_sample_shows_its_paginated_history_once() {
    let all = events(CODEX);
    let dialogue: Vec<(&str, &str)> = all
        .iter()
        .filter(|e| e.1 == "user" || e.1 == "assistant")
        .map(|e| (e.1.as_str(), e.3.as_str()))
        .collect();
    assert_eq!(
        dialogue,
        [
            ("user", "investigate [https://github.com/jdx/mise/discussions/12924](https://github.com/jdx/mise/discussions/12924)\n\n"),
            ("assistant", "I’ll read the discussion and trace the relevant code to identify what’s happening.\n"),
        ],
        "the item_completed copies are not shown again"
    );
    let world: Vec<&str> = all
        .iter()
        .filter(|e| e.3.starts_with("/Users/jdx/src/mise\n# Global preferences"))
        .map(|e| e.1.as_str())
        .collect();
    assert_eq!(world, ["context"], "world_state is injected");
    assert_twice_nowhere(&all);
}

/// No user or assistant text is shown at two places of the branch.
fn assert_twice_nowhere(all: &[(u64, String, String, String)]) {
    let mut seen = std::collections::BTreeMap::new();
    for e in all.iter().filter(|e| e.1 == "user" || e.1 == "assistant") {
        if e.3.len() > 40 {
            if let Some(first) = seen.insert(e.3.clone(), e.0) {
                panic!("seq {first} and {} both show {:?}", e.0, e.3);
            }
        }
    }
}
