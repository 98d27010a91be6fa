//! A transcript over the size limit is refused from its size, before it is read, the same way by
//! every command: named in the notice of a wildcard result, an error for a command about it.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use assert_cmd::Command;

const HUGE: &str = "0c0ffee0-0000-4000-8000-000000000513";

/// A Claude root with one small session and one sparse file of 513 MiB whose lines (a MiB of
/// zero bytes each) hold no query's letters: a raw read would find nothing in it and say
/// nothing of it.
fn roots(dir: &Path) {
    let project = dir.join("claude/-w-app");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/claude/projects/-w-app/abandoned-branch.jsonl"),
        project.join("abandoned-branch.jsonl"),
    )
    .unwrap();
    let mut huge = std::fs::File::create(project.join(format!("{HUGE}.jsonl"))).unwrap();
    for mib in 1..=513u64 {
        huge.seek(SeekFrom::Start(mib * 1024 * 1024 - 1)).unwrap();
        huge.write_all(b"\n").unwrap();
    }
    for other in ["codex", "pi", "cache"] {
        std::fs::create_dir_all(dir.join(other)).unwrap();
    }
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("notesoup-history")
        .unwrap()
        .arg("--claude-root")
        .arg(dir.join("claude"))
        .arg("--codex-root")
        .arg(dir.join("codex"))
        .arg("--pi-root")
        .arg(dir.join("pi"))
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("NOTESOUP_HISTORY_INDEX", "off")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("NOTESOUP_CURRENT_SESSION")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_file_over_the_limit_is_refused_and_named_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    roots(dir.path());
    let huge = format!("claude:{HUGE}");
    for args in [
        &["list"][..],
        &["list", "--session", "*", "--query", "zq-absent-zq"],
        &["list", "--session", "*", "--query", "login"],
        &[
            "list",
            "--session",
            "*",
            "--query",
            "login",
            "--from",
            "oldest",
        ],
        &[
            "list",
            "--session",
            "*",
            "--query",
            "zq-absent-zq",
            "--json",
        ],
    ] {
        let (code, text) = run(dir.path(), args);
        assert!(
            text.contains("1 session could not be loaded")
                && text.contains(HUGE)
                && text.contains("512 MiB"),
            "{args:?} (exit {code}): {text}"
        );
    }
    for args in [
        &["list", "--session", &huge][..],
        &["list", "--session", &huge, "--query", "zq-absent-zq"],
        &["read", "--session", &huge, "--seq", "1"],
    ] {
        let (code, text) = run(dir.path(), args);
        assert!(
            code == 2 && text.contains("512 MiB"),
            "{args:?} (exit {code}): {text}"
        );
    }
}
