//! `export`: a whole session as a document. Small sessions of each harness are snapshotted
//! whole; the real samples by their outline (the head, and one line per section), which shows
//! which events a document holds, in which order and how each is marked, without megabytes of
//! their text.

use std::path::{Path, PathBuf};

use crate::common::{every_role, fixtures, Roots};
use assert_cmd::Command;

/// The binary over fixture roots of the repository (read in place: nothing is ever written).
fn export(roots: [PathBuf; 3], args: &[&str]) -> (String, String, i32) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("notesoup-history").unwrap();
    cmd.env_clear()
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("NOTESOUP_HISTORY_INDEX", "off");
    for (flag, root) in ["--claude-root", "--codex-root", "--pi-root"]
        .iter()
        .zip(&roots)
    {
        cmd.arg(flag).arg(root);
    }
    let out = cmd.arg("export").args(args).output().unwrap();
    let real = std::fs::canonicalize(fixtures()).unwrap();
    let clean = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .replace(&real.display().to_string(), "[FIXTURES]")
            .replace(&fixtures().display().to_string(), "[FIXTURES]")
    };
    (
        clean(&out.stdout),
        clean(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

fn demo() -> [PathBuf; 3] {
    let demo = fixtures().join("demo");
    [demo.join("claude"), demo.join("codex"), demo.join("pi")]
}

fn samples() -> [PathBuf; 3] {
    let samples = fixtures().join("samples");
    [
        fixtures().join("claude-2026/projects"),
        samples.join("codex"),
        samples.join("pi"),
    ]
}

/// The head, then each section's heading or summary line (not the headings of the texts).
pub(crate) fn outline(doc: &str) -> String {
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
fn a_claude_session_with_parallel_tool_calls() {
    let (doc, err, code) = export(demo(), &["--session", "claude:parallel"]);
    assert_eq!((code, err.as_str()), (0, ""));
    insta::assert_snapshot!("claude_parallel_tool_results", doc);
}

#[test]
fn a_claude_session_across_a_compaction_marks_its_context() {
    let (doc, _, code) = export(demo(), &["--session", "compaction-across-boundary"]);
    assert_eq!(code, 0);
    assert!(doc.contains("<summary>Context ("), "{doc}");
    insta::assert_snapshot!("claude_compaction_across_boundary", doc);
}

#[test]
fn every_branch_is_marked_with_all_branches() {
    let (doc, _, code) = export(demo(), &["--session", "abandoned-branch", "--all-branches"]);
    assert_eq!(code, 0);
    let (active, _, _) = export(demo(), &["--session", "abandoned-branch"]);
    assert!(doc.contains("off the active branch"), "{doc}");
    assert!(!active.contains("off the active branch"), "{active}");
    insta::assert_snapshot!("claude_abandoned_branch_all_branches", doc);
}

#[test]
fn a_codex_session() {
    let (doc, err, code) = export(demo(), &["--session", "codex:019c8bfe"]);
    assert_eq!((code, err.as_str()), (0, ""));
    insta::assert_snapshot!("codex_demo", doc);
}

#[test]
fn a_pi_session() {
    let (doc, err, code) = export(demo(), &["--session", "pi:019f86d0"]);
    assert_eq!((code, err.as_str()), (0, ""));
    insta::assert_snapshot!("pi_demo", doc);
}

#[test]
fn the_real_samples_outlined() {
    for (name, session) in [
        ("claude_sample", "claude:1dd4a314"),
        ("codex_sample", "codex:019ef35b"),
        ("pi_sample", "pi:019dbe19"),
    ] {
        let (doc, _, code) = export(samples(), &["--session", session]);
        assert_eq!(code, 0, "{session}");
        insta::assert_snapshot!(name, outline(&doc));
    }
}

/// The newest real samples (Claude Code 2.1.232, Codex 0.153.4) in their roots of
/// `fixtures/samples`.
fn newest() -> [PathBuf; 3] {
    let samples = fixtures().join("samples");
    ["claude", "codex", "pi"].map(|h| samples.join(h))
}

#[test]
fn the_newest_real_samples_outlined() {
    for (name, session) in [
        ("claude_sample_2_1_232", "claude:da81b1d5"),
        ("codex_sample_0_153", "codex:01a07c89"),
    ] {
        let (doc, err, code) = export(newest(), &["--session", session]);
        assert_eq!((code, err.as_str()), (0, ""), "{session}");
        insta::assert_snapshot!(name, outline(&doc));
    }
}

#[test]
fn json_lines_hold_the_events_list_gives_in_its_order() {
    let r = Roots::with_samples();
    for session in [
        "claude:abandoned-branch",
        "codex:019ef35b",
        "pi:019dbe19",
        "pi:019f86d0",
    ] {
        let run = r.run(&["export", "--session", session, "--format", "json"]);
        assert_eq!(run.code, 0, "{run:?}");
        let mut lines = run.stdout.lines();
        let head: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        let items: Vec<serde_json::Value> =
            lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(head["events"].as_u64(), Some(items.len() as u64));
        let mut every = every_role(session, &["--budget", "100000000"]);
        let limit = every.iter().position(|a| *a == "--limit").unwrap();
        every[limit + 1] = "100000";
        let listed = r.run(&every);
        let fields = |i: &serde_json::Value| {
            (
                i["seq"].clone(),
                i["part"].clone(),
                i["role"].clone(),
                i["kind"].clone(),
                i["text"].clone(),
                i["session"].clone(),
            )
        };
        let exported: Vec<_> = items.iter().map(fields).collect();
        let expected: Vec<_> = listed.json()["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{session}: {listed:?}"))
            .iter()
            .map(fields)
            .collect();
        assert_eq!(exported, expected, "{session}");
        assert_eq!(head["session"], items[0]["session"]);
    }
}

#[test]
fn export_needs_one_session() {
    let (out, err, code) = export(demo(), &["--session", "*"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.ends_with("(invalid_session)\n"), "{err}");
    let (_, err, code) = export(demo(), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("export needs --session"), "{err}");
    let (out, _, code) = export(demo(), &["--session", "nothing-like-it", "--json"]);
    assert_eq!(code, 2);
    assert!(out.contains("\"unknown_session\""), "{out}");
}

#[test]
fn a_document_survives_a_closed_pipe() {
    let root: &Path = &fixtures().join("samples/codex");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("notesoup-history"))
        .env_clear()
        .env("NOTESOUP_HISTORY_INDEX", "off")
        .args(["--codex-root", root.to_str().unwrap(), "--claude-root"])
        .arg(fixtures().join("demo/claude"))
        .args(["--pi-root"])
        .arg(fixtures().join("demo/pi"))
        .args(["export", "--session", "codex:019ef35b"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read a little, then close the pipe: the writer must end quietly, not panic.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(
        first.starts_with(b"# "),
        "{:?}",
        String::from_utf8_lossy(&first)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panic"),
        "{:?}",
        out.stderr
    );
    assert_ne!(out.status.code(), Some(101));
}
