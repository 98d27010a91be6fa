//! Real transcripts that the agents themselves wrote (`cargo xtask record`), checked marker by
//! marker through the CLI: every prompt, reply, tool input and output of the recording carries a
//! marker, and `expected.json` beside it says in which sessions each must be found, with which
//! role (CONTRACT §4), how many times, and whether only with `--all-branches`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::fixtures;

/// Markers that the decoders do not yet show as CONTRACT §4 says: `(recording, marker, why)`.
/// Each is still checked and reported; it does not fail the test until the decoder changes, and
/// then it must come off the list.
const KNOWN_FAILURES: &[(&str, &str, &str)] = &[];

fn recordings(agent: &str) -> Vec<PathBuf> {
    let dir = fixtures().join("recorded");
    let mut found: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{agent}-"))
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no recording of {agent} in {}",
        dir.display()
    );
    found
}

/// One hit of a search: the session, role, and whether it is on the active branch.
#[derive(Debug)]
struct Hit {
    session: String,
    role: String,
    active: bool,
    seq: u64,
}

struct Recording {
    dir: PathBuf,
    expected: Value,
    home: tempfile::TempDir,
}

impl Recording {
    fn open(dir: &Path) -> Recording {
        let text = fs::read_to_string(dir.join("expected.json")).unwrap();
        Recording {
            dir: dir.to_owned(),
            expected: serde_json::from_str(&text).unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn name(&self) -> String {
        self.dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    fn agent(&self) -> &str {
        self.expected["agent"].as_str().unwrap()
    }

    fn qualified(&self, label: &str) -> String {
        let id = self.expected["sessions"][label]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no session {label}", self.name()));
        format!("{}:{id}", self.agent())
    }

    /// `list --session '*' --query MARKER` over this recording alone.
    fn search(&self, marker: &str, all_branches: bool) -> Vec<Hit> {
        let empty = self.home.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        let root = self.dir.join(self.expected["root"].as_str().unwrap());
        let mut cmd = Command::cargo_bin("notesoup-history").unwrap();
        cmd.env_clear()
            .env("HOME", self.home.path())
            .env("XDG_CACHE_HOME", self.home.path().join("cache"))
            .env("NOTESOUP_HISTORY_INDEX", "off");
        for harness in history_cli::HARNESSES {
            let to = if harness.name == self.agent() {
                &root
            } else {
                &empty
            };
            cmd.arg(format!("--{}", harness.root_flag)).arg(to);
        }
        cmd.args(["list", "--session", "*", "--query", marker])
            .args(["--limit", "1000", "--budget", "10000000", "--json"]);
        if all_branches {
            cmd.arg("--all-branches");
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            Some(1) => return Vec::new(),
            Some(0) => {}
            other => panic!(
                "{marker}: exit {other:?}: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
        let page: Value = serde_json::from_str(&stdout).unwrap();
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| Hit {
                session: i["session"].as_str().unwrap().to_owned(),
                role: i["role"].as_str().unwrap().to_owned(),
                active: i["on_active_branch"].as_bool().unwrap_or(true),
                seq: i["seq"].as_u64().unwrap(),
            })
            .collect()
    }

    /// What is wrong with one marker, if anything: `entries` are its rows of `expected.json`
    /// (more than one where it is shown with another role in another session).
    fn check(&self, entries: &[&Value]) -> Option<String> {
        let text = entries[0]["marker"].as_str().unwrap();
        let inactive = entries[0]["branch"] == "inactive";
        // Per session, how many times each role (a harness may show a marker again as
        // context, as Claude Code's attachments after a compaction do).
        let mut wanted: BTreeMap<String, BTreeMap<&str, usize>> = BTreeMap::new();
        for entry in entries {
            let role = entry["role"].as_str().unwrap();
            let count = entry["count"].as_u64().unwrap() as usize;
            for session in entry["sessions"].as_array().unwrap() {
                let session = self.qualified(session.as_str().unwrap());
                *wanted.entry(session).or_default().entry(role).or_default() += count;
            }
        }
        let hits = self.search(text, inactive);
        let mut problems = Vec::new();
        let mut seen: BTreeMap<String, Vec<&Hit>> = BTreeMap::new();
        for hit in &hits {
            seen.entry(hit.session.clone()).or_default().push(hit);
        }
        for (session, hits) in &seen {
            let want = wanted.remove(session).unwrap_or_default();
            let shown: Vec<String> = hits
                .iter()
                .map(|h| format!("{}@{}", h.role, h.seq))
                .collect();
            let mut roles: BTreeMap<&str, usize> = BTreeMap::new();
            for h in hits {
                *roles.entry(h.role.as_str()).or_default() += 1;
            }
            if roles != want {
                problems.push(format!(
                    "{session}: shown as {}, expected {want:?}",
                    shown.join(", ")
                ));
            }
            if hits.iter().any(|h| h.active == inactive) {
                problems.push(format!(
                    "{session}: expected {} the active branch",
                    if inactive { "off" } else { "on" }
                ));
            }
        }
        for (session, want) in wanted {
            if want.values().any(|&n| n > 0) {
                problems.push(format!("{session}: not found, expected {want:?}"));
            }
        }
        if inactive && !self.search(text, false).is_empty() {
            problems.push("shown without --all-branches".into());
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }
}

fn check_agent(agent: &str) {
    let mut failures = Vec::new();
    for dir in recordings(agent) {
        let recording = Recording::open(&dir);
        let name = recording.name();
        let markers = recording.expected["markers"].as_array().unwrap();
        assert!(
            markers.len() >= 10,
            "{name}: only {} markers",
            markers.len()
        );
        let mut by_marker: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for marker in markers {
            by_marker
                .entry(marker["marker"].as_str().unwrap())
                .or_default()
                .push(marker);
        }
        for (text, entries) in by_marker {
            let marker = entries[0];
            let problem = recording.check(&entries);
            let known = KNOWN_FAILURES
                .iter()
                .find(|(r, m, _)| *r == name && *m == text);
            match (problem, known) {
                (Some(problem), None) => failures.push(format!(
                    "{name} {text} ({}): {problem}",
                    marker["what"].as_str().unwrap_or_default()
                )),
                (Some(problem), Some((_, _, why))) => {
                    eprintln!("known failure {name} {text}: {problem} ({why})")
                }
                (None, Some(_)) => failures.push(format!(
                    "{name} {text} now passes: take it off KNOWN_FAILURES"
                )),
                (None, None) => {}
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn claude_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("claude");
}

#[test]
fn codex_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("codex");
}

#[test]
fn copilot_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("copilot");
}

#[test]
fn pi_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("pi");
}

#[test]
fn omp_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("omp");
}

#[test]
fn opencode_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("opencode");
}

#[test]
fn gemini_recordings_show_every_marker_in_its_session_with_its_role_once() {
    check_agent("gemini");
}
