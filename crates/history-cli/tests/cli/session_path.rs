//! `--session` takes a transcript's path: absolute, relative to the directory the command runs
//! in, or through a symbolic link, it names the session whose own file it is, and every command
//! and recipe goes on naming that session by its key.

use std::path::{Path, PathBuf};

use crate::common::{Roots, Run};

/// One fixture session of each harness: its file under the roots' directory, and its key.
const SESSIONS: &[(&str, &str)] = &[
    (
        "claude/-w-app/abandoned-branch.jsonl",
        "claude:abandoned-branch",
    ),
    (
        "codex/2026/03/02/rollout-2026-03-02T11-00-00-019c9a00-1111-7000-8000-000000000001.jsonl",
        "codex:019c9a00-1111-7000-8000-000000000001",
    ),
    (
        "pi/--work-demo--/2026-03-01T10-00-00-000Z_branched.jsonl",
        "pi:branched",
    ),
];

/// Every event of a session, as JSON.
fn listed(r: &Roots, session: &str) -> Run {
    r.run(&crate::common::every_role(session, &[]))
}

fn abs(r: &Roots, rel: &str) -> String {
    r.dir.path().join(rel).display().to_string()
}

/// Runs the binary in `dir`.
fn run_in(r: &Roots, dir: &Path, args: &[&str]) -> Run {
    let out = r.cmd().current_dir(dir).args(args).output().unwrap();
    let root = r.dir.path().display().to_string();
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&root, "[ROOT]");
    Run {
        stdout: clean(&out.stdout),
        stderr: clean(&out.stderr),
        code: out.status.code().unwrap_or(-1),
    }
}

#[test]
fn an_absolute_path_lists_the_session_of_each_harness() {
    let r = Roots::new();
    for (rel, key) in SESSIONS {
        let by_key = listed(&r, key);
        assert_eq!(by_key.code, 0, "{by_key:?}");
        assert_eq!(by_key.json()["session"], *key);
        let by_path = listed(&r, &abs(&r, rel));
        assert_eq!(by_path.code, 0, "{rel}: {by_path:?}");
        assert_eq!(by_path.json(), by_key.json(), "{rel}");
        // Paths are compared by their components, `.` and `..` resolved.
        let winding = format!("{}//./x/../{rel}", r.dir.path().display());
        let winding = listed(&r, &winding);
        assert_eq!(
            winding.json(),
            by_key.json(),
            "{rel} written with ./ and //"
        );
        // As `--show-path` writes it, with the line after the file.
        let with_line = listed(&r, &format!("{}:3", abs(&r, rel)));
        assert_eq!(with_line.json(), by_key.json(), "{rel}:3");
    }
}

#[test]
fn a_compressed_codex_transcript_is_named_by_its_path() {
    let r = Roots::new();
    let dir = r.root("codex").join("2026/02/23");
    let stem = "rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a";
    let zst = dir.join(format!("{stem}.jsonl.zst"));
    let zst = zst.to_str().unwrap();
    // Beside its plain copy, the compressed one is not what the session is read from.
    let shadowed = r.run(&["list", "--session", zst]);
    assert_eq!(shadowed.code, 2, "{shadowed:?}");
    assert!(
        shadowed
            .stderr
            .contains("is not a session's own transcript")
            && shadowed.stderr.contains("(unknown_session)"),
        "{}",
        shadowed.stderr
    );
    std::fs::remove_file(dir.join(format!("{stem}.jsonl"))).unwrap();
    let key = "codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a";
    let by_key = listed(&r, key);
    assert_eq!(by_key.json()["session"], key);
    assert_eq!(listed(&r, zst).json(), by_key.json());
}

#[test]
fn a_relative_path_is_taken_from_the_directory_the_command_runs_in() {
    let r = Roots::new();
    let by_key = listed(&r, "claude:abandoned-branch").json();
    let app = r.root("claude").join("-w-app");
    for (dir, rel) in [
        (app.clone(), "./abandoned-branch.jsonl"),
        (
            app.join("parallel-tool-results"),
            "../abandoned-branch.jsonl",
        ),
        (
            r.dir.path().to_path_buf(),
            "claude/-w-app/abandoned-branch.jsonl",
        ),
    ] {
        let run = run_in(&r, &dir, &crate::common::every_role(rel, &[]));
        assert_eq!(run.code, 0, "{rel} in {}: {run:?}", dir.display());
        assert_eq!(run.json(), by_key, "{rel} in {}", dir.display());
    }
    // A file's bare name is an id; what to write instead is said.
    let bare = run_in(&r, &app, &["list", "--session", "abandoned-branch.jsonl"]);
    assert_eq!(
        bare.stderr,
        "error: no session matches \"abandoned-branch.jsonl\": a file is named by its path, as \
         ./abandoned-branch.jsonl (unknown_session)\n"
    );
}

#[test]
fn a_path_through_a_symbolic_link_names_the_file_linked_to() {
    let r = Roots::new();
    let by_key = listed(&r, "pi:branched").json();
    let file = r.dir.path().join(SESSIONS[2].0);
    let link = r.dir.path().join("home/resume-me.jsonl");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let linked_root = r.dir.path().join("home/sessions");
    std::os::unix::fs::symlink(r.root("pi"), &linked_root).unwrap();
    let through_dir = linked_root.join("--work-demo--/2026-03-01T10-00-00-000Z_branched.jsonl");
    for path in [link, through_dir] {
        let run = listed(&r, path.to_str().unwrap());
        assert_eq!(run.code, 0, "{}: {run:?}", path.display());
        assert_eq!(run.json(), by_key, "{}", path.display());
    }
}

#[test]
fn a_path_to_a_root_that_is_a_link_is_found_by_its_real_name() {
    // Discovery reads the root through a link; the path names the real file.
    let r = Roots::new();
    let real_root = r.root("claude").to_path_buf();
    let link: PathBuf = r.dir.path().join("home/claude-link");
    std::os::unix::fs::symlink(&real_root, &link).unwrap();
    let file = real_root.join("-w-app/abandoned-branch.jsonl");
    let file = file.to_str().unwrap();
    let args = |session: &str| -> Vec<String> {
        let mut args = vec!["--claude-root".to_string(), link.display().to_string()];
        args.extend(
            crate::common::every_role(session, &[])
                .iter()
                .map(|a| a.to_string()),
        );
        args
    };
    let run = |session: &str| {
        let args = args(session);
        r.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let by_path = run(file);
    assert_eq!(by_path.code, 0, "{by_path:?}");
    assert_eq!(by_path.json(), run("claude:abandoned-branch").json());
}

#[test]
fn a_file_that_is_no_transcript_is_an_unknown_session_saying_the_roots() {
    let r = Roots::new();
    let notes = r.dir.path().join("home/notes.jsonl");
    std::fs::write(&notes, "{}\n").unwrap();
    let outside = r.run(&["list", "--session", notes.to_str().unwrap()]);
    assert_eq!(outside.code, 2);
    assert_eq!(
        outside.stderr,
        "error: no session matches \"[ROOT]/home/notes.jsonl\": the file is not a transcript \
         under the roots searched (claude: [ROOT]/claude, codex: [ROOT]/codex, pi: [ROOT]/pi, \
         omp: [ROOT]/omp, opencode: [ROOT]/opencode, gemini: [ROOT]/gemini, copilot: [ROOT]/copilot); \
         pass its root with --claude-root, --codex-root, --pi-root, --omp-root, --opencode-root, \
         --gemini-root or --copilot-root (unknown_session)\n"
    );
    let json = r.run(&["list", "--session", notes.to_str().unwrap(), "--json"]);
    assert_eq!(json.json()["error"]["code"], "unknown_session");
    // Under a root, a file discovery does not list as a session's own: a sub-agent's.
    let sub = r
        .root("claude")
        .join("-w-app/parallel-tool-results/subagents/agent-a1b2c3d.jsonl");
    let sub = r.run(&["list", "--session", sub.to_str().unwrap()]);
    assert_eq!(sub.code, 2);
    assert!(
        sub.stderr
            .contains("lies under the claude root ([ROOT]/claude)")
            && sub.stderr.contains("a sub-agent's file")
            && sub.stderr.ends_with("(unknown_session)\n"),
        "{}",
        sub.stderr
    );
    // A directory.
    let dir = r.root("claude").join("-w-app");
    let dir = r.run(&["list", "--session", dir.to_str().unwrap()]);
    assert_eq!(dir.code, 2);
    assert!(
        dir.stderr.contains(
            "it is a directory, not a transcript file; the roots searched are \
             claude: [ROOT]/claude"
        ) && dir.stderr.ends_with("(unknown_session)\n"),
        "{}",
        dir.stderr
    );
    // Nothing there; relative, it is said as taken.
    let gone = r.run(&["list", "--session", &abs(&r, "claude/-w-app/gone.jsonl")]);
    assert_eq!(
        gone.stderr,
        "error: no session matches \"[ROOT]/claude/-w-app/gone.jsonl\": no such file \
         (unknown_session)\n"
    );
    let here = run_in(
        &r,
        r.dir.path(),
        &["read", "--session", "./gone.jsonl", "--seq", "1"],
    );
    assert_eq!(
        here.stderr,
        "error: no session matches \"./gone.jsonl\": no such file ([ROOT]/gone.jsonl) \
         (unknown_session)\n"
    );
    // A path names one file: no wildcard.
    let star = r.run(&["list", "--session", &abs(&r, "claude/-w-app/*.jsonl")]);
    assert_eq!(star.code, 2);
    assert!(star.stderr.contains("(invalid_session)"), "{}", star.stderr);
}

#[test]
fn read_and_export_take_a_path() {
    let r = Roots::new();
    for (rel, key) in SESSIONS {
        let path = abs(&r, rel);
        let seq = listed(&r, key).positions()[0].0.to_string();
        let by_key = r.run(&["read", "--session", key, "--seq", &seq, "--json"]);
        assert_eq!(by_key.code, 0, "{by_key:?}");
        assert!(by_key.json()["item"].is_object(), "{by_key:?}");
        let by_path = r.run(&["read", "--session", &path, "--seq", &seq, "--json"]);
        assert_eq!(by_path.json(), by_key.json(), "{rel}");
        let by_key = r.run(&["export", "--session", key]);
        let by_path = r.run(&["export", "--session", &path]);
        assert_eq!(by_path.code, 0, "{by_path:?}");
        assert_eq!(by_path.stdout, by_key.stdout, "{rel}");
    }
}

#[test]
fn recipes_name_the_session_by_its_key() {
    let r = Roots::new();
    let app = r.root("claude").join("-w-app");
    let rel = "./abandoned-branch.jsonl";
    let key = "claude:abandoned-branch";
    let page = run_in(&r, &app, &["list", "--session", rel, "--limit", "1"]);
    assert!(
        page.stdout.contains(&format!(
            "→ older: notesoup-history list --session {key} --before-seq"
        )),
        "{}",
        page.stdout
    );
    // A search of the one session: its next page and its hits.
    let found = run_in(
        &r,
        &app,
        &[
            "find",
            "clock",
            "--events",
            "--limit",
            "1",
            "--session",
            rel,
            "--json",
        ],
    );
    assert_eq!(found.code, 0, "{found:?}");
    assert_eq!(found.json()["more"]["session"], key, "{}", found.stdout);
    let sessions = run_in(
        &r,
        &app,
        &["list", "--sessions", "--query", "clock", "--session", rel],
    );
    assert_eq!(sessions.code, 0, "{sessions:?}");
    assert!(
        sessions.stdout.contains(&format!(
            "→ hits: notesoup-history list --session {key} --query clock"
        )),
        "{}",
        sessions.stdout
    );
    assert!(!sessions.stdout.contains(rel) && !found.stdout.contains(rel));
}

#[test]
fn a_path_and_a_place_must_agree() {
    let r = Roots::new();
    let path = abs(&r, SESSIONS[0].0);
    let there = r.run(&["list", "--session", &path, "--cwd", "/w/app"]);
    assert_eq!(there.code, 0, "{there:?}");
    let elsewhere = r.run(&["list", "--session", &path, "--cwd", "/home/u/pag"]);
    assert_eq!(elsewhere.code, 2);
    assert_eq!(
        elsewhere.stderr,
        "error: no session matches \"[ROOT]/claude/-w-app/abandoned-branch.jsonl under \
         /home/u/pag\": claude:abandoned-branch ran in /w/app (unknown_session)\n"
    );
}
