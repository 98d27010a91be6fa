//! Codex through the CLI: generations, `.zst`, inherited history, rollbacks, context, damage.

mod common;

use common::{every_role, Roots};
use insta::assert_snapshot;

fn codex(roots: &Roots, args: &[&str]) -> common::Run {
    roots.run_only("codex", args)
}

#[test]
fn every_fixture_browses() {
    let r = Roots::new();
    let ids = codex(
        &r,
        &["list", "--session", "codex:*", "--limit", "100", "--json"],
    )
    .json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(ids.len() >= 13, "{ids:?}");
    let mut sorted = ids.clone();
    sorted.sort();
    let mut out = String::new();
    for id in sorted {
        let run = codex(&r, &["list", "--session", &id, "--limit", "50"]);
        assert!(run.code <= 1, "{id}: {}", run.stderr);
        out.push_str(&format!("===== {id}\n{}", run.stdout));
    }
    assert_snapshot!("codex_browse_all", out);
}

#[test]
fn the_thread_id_names_the_session_and_plain_beats_zst() {
    let r = Roots::new();
    let sub = codex(&r, &["list", "--session", "codex:019c9b00", "--json"]).json();
    assert_eq!(sub["session"], "codex:019c9b00-2222-7000-8000-000000000002");
    let twin = codex(&r, &["list", "--session", "codex:019c8a4c", "--json"]).json();
    let path = twin["items"][0]["path"].as_str().unwrap().to_string();
    assert!(path.ends_with(".jsonl"), "{path}");
    // Without the plain file, the .zst twin gives the same events.
    let plain = codex(&r, &every_role("codex:019c8a4c", &[]));
    let plain_file = r.dir.path().join(path.trim_start_matches("[ROOT]/"));
    std::fs::remove_file(plain_file).unwrap();
    let zst = codex(&r, &every_role("codex:019c8a4c", &[]));
    assert!(zst.json()["items"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with(".jsonl.zst"));
    assert_eq!(zst.positions(), plain.positions());
    assert_eq!(zst.texts(), plain.texts());
}

#[test]
fn inherited_history_is_searched_and_attributed() {
    let r = Roots::new();
    let run = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:*",
            "--query",
            "paginated history",
            "--json",
        ],
    );
    let sessions: Vec<String> = run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{}#{}", i["session"].as_str().unwrap(), i["seq"]))
        .collect();
    assert!(
        sessions.contains(&"codex:019f2a10-0000-7000-8000-00000000000a#8".to_string()),
        "{sessions:?}"
    );
    assert!(
        sessions.contains(&"codex:019f2a10-0000-7000-8000-00000000000b#8".to_string()),
        "{sessions:?}"
    );
    // The fork's own lines come after the inherited ones.
    let fork = codex(
        &r,
        &every_role("codex:019f2a10-0000-7000-8000-00000000000b", &[]),
    );
    let seqs: Vec<u64> = fork.positions().iter().map(|p| p.0).collect();
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted);
}

#[test]
fn a_rollback_removes_the_turn() {
    let r = Roots::new();
    let run = codex(
        &r,
        &["list", "--session", "codex:*", "--query", "to be undone"],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    let texts = codex(&r, &every_role("codex:019c9d00", &[])).texts();
    assert!(texts.contains(&"second question, rephrased".to_string()));
}

#[test]
fn injected_messages_are_context() {
    let r = Roots::new();
    let run = codex(&r, &every_role("codex:019c9c00", &[])).json();
    for item in run["items"].as_array().unwrap() {
        let text = item["text"].as_str().unwrap();
        if text.contains("<environment_context>")
            || text.contains("AGENTS.md")
            || text.contains("<turn_aborted>")
        {
            assert_eq!(item["role"], "context", "{text}");
        }
    }
    let users = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:019c9c00",
            "--role",
            "user",
            "--json",
        ],
    )
    .json();
    for item in users["items"].as_array().unwrap() {
        assert!(!item["text"].as_str().unwrap().starts_with('<'), "{item}");
    }
}

#[test]
fn damaged_lines_give_a_notice() {
    let r = Roots::new();
    let run = codex(&r, &every_role("codex:019c9e00", &[]));
    assert_eq!(run.code, 0);
    assert!(
        run.json()["notice"].as_str().unwrap().contains("skipped"),
        "{}",
        run.stdout
    );
}

#[test]
fn codex_home_names_the_root() {
    let r = Roots::new();
    let home = r.dir.path().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(r.root("codex"), home.join("sessions")).unwrap();
    let out = r
        .cmd()
        .env_remove("NOTESOUP_HISTORY_CODEX_ROOT")
        .env("CODEX_HOME", &home)
        .args(["list", "--session", "codex:019c9d00", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn untimed_hits_are_the_oldest_even_after_timed_ones_in_the_file() {
    // A G1 rollout: its header (instructions, seq 1) has a time, its items (seq 2 on) do not.
    let r = Roots::new();
    let page = |from: &str| {
        codex(
            &r,
            &[
                "list",
                "--session",
                "codex:4f1c*",
                "--query",
                "sandbox",
                "--from",
                from,
                "--limit",
                "1",
                "--json",
            ],
        )
        .json()
    };
    let oldest = page("oldest");
    assert_eq!(oldest["items"][0]["seq"], 2, "{oldest}");
    assert_eq!(oldest["items"][0]["timestamp"], serde_json::Value::Null);
    assert_eq!(oldest["has_newer"], true);
    let newest = page("newest");
    assert_eq!(newest["items"][0]["seq"], 1, "{newest}");
    assert_eq!(newest["has_older"], true);
}
