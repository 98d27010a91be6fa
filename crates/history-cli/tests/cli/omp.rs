//! Oh My Pi through the CLI: a rule of formats/omp.md per test, each over the fixture written
//! for it (`fixtures/omp/sessions`), the real sample (`fixtures/samples/omp`) snapshotted
//! (overview, browse, search, export), roots, resume, and the search index over both.

use std::fs;
use std::path::Path;

use crate::common::{fixtures, Roots, Run};
use crate::index::{append, index, same_both_ways, update, Guard};
use insta::assert_snapshot;

/// The real sample's session id (its header's).
const SAMPLE: &str = "omp:01a025c5-21b8-7000-b3f3-437e2c17a372";

fn omp(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("omp", args)
}

/// The items of a `--json` run as `(session, seq, role, kind, text)`.
fn items(run: &Run) -> Vec<(String, u64, String, String, String)> {
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["session"].as_str().unwrap().to_owned(),
                i["seq"].as_u64().unwrap(),
                i["role"].as_str().unwrap().to_owned(),
                i["kind"].as_str().unwrap().to_owned(),
                i["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Every hit of a search over all Oh My Pi sessions, whatever its role.
fn search(roots: &Roots, query: &str, extra: &[&str]) -> Run {
    let mut args = vec!["list", "--session", "omp:*", "--query", query, "--json"];
    args.extend(["--limit", "100"]);
    args.extend(extra);
    omp(roots, &args)
}

#[test]
fn every_fixture_browses() {
    let r = Roots::new();
    let mut out = String::new();
    for id in [
        "title-slot",
        "no-title-slot",
        "agent-attribution",
        "tool-intent",
        "compaction-short-summary",
        "tree-branch",
        "omp-entry-types",
        "subagent-parent",
        "subagent-scout",
        "fork-by-id",
        "hashed-dir",
        "damaged-title-slot",
    ] {
        let run = omp(
            &r,
            &["list", "--session", &format!("omp:{id}"), "--limit", "50"],
        );
        assert!(run.code <= 1, "{id}: {}", run.stderr);
        out.push_str(&format!("===== {id}\n{}", run.shown()));
    }
    assert_snapshot!("omp_browse_all", out);
}

#[test]
fn the_session_is_named_by_the_header_after_the_title_slot_not_the_file() {
    let r = Roots::new();
    let run = omp(&r, &["list", "--session", "omp:title-slot", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let page = run.json();
    assert_eq!(page["session"], "omp:title-slot");
    let first = &page["items"][0];
    assert_eq!(first["title"], "Renamed by the user");
    assert_eq!(first["cwd"], "/tmp/omp-demo");
    // The file is named `…_named-otherwise.jsonl`: that is no session id.
    let by_name = omp(&r, &["list", "--session", "omp:named-otherwise"]);
    assert_eq!(by_name.code, 2);
    assert!(by_name.stderr.contains("unknown_session") || by_name.stderr.contains("no session"));
}

#[test]
fn a_title_slot_rewritten_in_place_is_read_again() {
    let r = Roots::new();
    let _guard = Guard(&r);
    let rel = "omp/-tmp-omp-demo/2026-08-20T10-00-00-000Z_named-otherwise.jsonl";
    let path = r.dir.path().join(rel);
    let title = |r: &Roots| {
        let run = r.run_indexed(&["list", "--session", "omp:*", "--json", "--limit", "100"]);
        run.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["session"] == "omp:title-slot")
            .map(|i| i["title"].as_str().unwrap_or_default().to_owned())
            .unwrap()
    };
    index(&r);
    assert_eq!(title(&r), "Renamed by the user");
    // Oh My Pi rewrites the 256-byte slot without growing the file.
    let bytes = fs::read(&path).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let renamed = text.replacen("Renamed by the user", "Retitled in place!!", 1);
    assert_eq!(renamed.len(), bytes.len());
    fs::write(&path, renamed).unwrap();
    assert_eq!(title(&r), "Retitled in place!!");
    same_both_ways(&r, &["list", "--query", "Retitled", "--json"]);
}

#[test]
fn a_file_without_a_title_slot_is_read_from_its_first_line() {
    let r = Roots::new();
    let run = omp(&r, &["list", "--session", "omp:no-title-slot", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let first = &run.json()["items"][0];
    assert_eq!(first["seq"], 3);
    assert_eq!(first["title"], "Header title");
}

#[test]
fn agent_written_messages_are_context_not_the_persons() {
    let r = Roots::new();
    let users = omp(
        &r,
        &[
            "list",
            "--session",
            "omp:agent-attribution",
            "--role",
            "user",
            "--json",
        ],
    );
    let texts: Vec<String> = items(&users).into_iter().map(|i| i.4).collect();
    assert_eq!(texts, ["Run the checks please.", "Thanks, that is all."]);
    for injected in ["async job finished", "incomplete todo item", "2 todo items"] {
        let hits = items(&search(&r, injected, &[]));
        assert_eq!(hits.len(), 1, "{injected}");
        assert_eq!(
            (hits[0].2.as_str(), hits[0].3.as_str()),
            ("context", "meta")
        );
    }
}

#[test]
fn a_tool_call_is_shown_once_with_its_intent() {
    let r = Roots::new();
    // `tool_execution_start` repeats each call's arguments (with `export GIT_TERMINAL_PROMPT=0`
    // here); `partialArgs` repeats them as a string: neither is an event.
    assert_eq!(search(&r, "GIT_TERMINAL_PROMPT", &[]).code, 1);
    let hits = items(&search(&r, "list the repo", &[]));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        (hits[0].2.as_str(), hits[0].3.as_str()),
        ("tool", "tool_call")
    );
    assert_eq!(hits[0].4, "bash: ls -la\nlist the repo");
    let failed = items(&search(&r, "exited with code 1", &[]));
    assert_eq!(failed[0].3, "tool_error");
    assert_eq!(items(&search(&r, "qzo-intent-unique", &[])).len(), 1);
}

#[test]
fn a_compaction_shows_its_summary_and_its_short_summary_as_context() {
    let r = Roots::new();
    let hits = items(&search(&r, "step two", &["--role", "context"]));
    let kinds: Vec<&str> = hits.iter().map(|h| h.3.as_str()).collect();
    assert_eq!(kinds, ["summary", "summary"], "{hits:?}");
    assert!(hits[0].4.contains("Turn Context (split turn)"));
    assert_eq!(hits[1].4, "Refactored step one; step two checks the build.");
    // The entries before the first kept one stay on the branch.
    assert_eq!(items(&search(&r, "Start the long refactor", &[])).len(), 1);
}

#[test]
fn an_abandoned_branch_is_shown_only_with_all_branches() {
    let r = Roots::new();
    assert_eq!(search(&r, "Plan A collapsed", &[]).code, 1);
    let all = search(&r, "Plan A collapsed", &["--all-branches"]).json();
    assert_eq!(all["items"][0]["on_active_branch"], false);
    assert_eq!(items(&search(&r, "Plan A was abandoned", &[])).len(), 1);
}

#[test]
fn oh_my_pis_own_entries_show_nothing_of_their_own() {
    let r = Roots::new();
    // A credential pin's hash, a mode's data, a model's usage: no event.
    for query in ["c0ffee", "plan.md", "end_turn"] {
        assert_eq!(search(&r, query, &[]).code, 1, "{query}");
    }
    // The rule a `ttsr_injection` names is shown once, by the message that injected it.
    let hits = items(&search(&r, "no-force-push", &[]));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].2, "context");
    let run = omp(
        &r,
        &[
            "list",
            "--session",
            "omp:omp-entry-types",
            "--json",
            "--limit",
            "10",
        ],
    );
    let shown: Vec<String> = items(&run).into_iter().map(|i| i.4).collect();
    assert_eq!(
        shown,
        [
            "Plan the release.",
            "Release planned without force-pushing."
        ]
    );
}

#[test]
fn a_sub_agent_is_its_own_session_with_its_parent_and_path_to_resume() {
    let r = Roots::new();
    let sessions = omp(
        &r,
        &["list", "--session", "omp:*", "--json", "--limit", "100"],
    );
    let ids: Vec<String> = sessions.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap().to_owned())
        .collect();
    // Copied into a fork's artifact directory, it is still one session.
    let scouts = ids.iter().filter(|i| *i == "omp:subagent-scout").count();
    assert_eq!(scouts, 1, "{ids:?}");
    assert!(!ids.iter().any(|i| i.contains("Scout")), "{ids:?}");

    let answer = search(&r, "report the files", &[]).json();
    let item = &answer["items"][0];
    assert_eq!(item["session"], "omp:subagent-scout");
    assert_eq!(item["role"], "tool");
    let argv = item["resume"]["argv"].as_array().unwrap();
    assert_eq!(argv[..2], ["omp", "--resume"]);
    assert!(
        argv[2].as_str().unwrap().ends_with("/Scout.jsonl"),
        "{argv:?}"
    );
    let prompt = search(&r, "read-only sub-agent", &[]).json();
    assert_eq!(prompt["items"][0]["role"], "context");
    assert_eq!(prompt["items"][0]["kind"], "instructions");
    // The parent holds the call and the result; the `.md` output beside the session is no session.
    let result = items(&search(&r, "task-result", &[]));
    let in_parent: Vec<_> = result
        .iter()
        .filter(|h| h.0 == "omp:subagent-parent")
        .collect();
    assert_eq!(in_parent.len(), 1, "{result:?}");
}

#[test]
fn a_fork_holds_the_copied_entries_and_resumes_by_id() {
    let r = Roots::new();
    let hits = items(&search(&r, "The scout found README.md", &[]));
    let mut sessions: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
    sessions.sort_unstable();
    assert_eq!(sessions, ["omp:fork-by-id", "omp:subagent-parent"]);
    let run = omp(
        &r,
        &[
            "list",
            "--session",
            "omp:fork-by-id",
            "--json",
            "--limit",
            "1",
        ],
    );
    let item = &run.json()["items"][0];
    assert_eq!(
        item["resume"]["argv"],
        serde_json::json!(["omp", "--resume", "fork-by-id"])
    );
}

#[test]
fn every_folder_scheme_holds_sessions_whose_cwd_is_the_headers() {
    let r = Roots::new();
    for (id, cwd) in [
        ("title-slot", "/tmp/omp-demo"),
        ("no-title-slot", "/home/dev/old"),
        ("hashed-dir", "/home/dev/proj"),
    ] {
        let run = omp(&r, &["list", "--session", &format!("omp:{id}"), "--json"]);
        assert_eq!(run.json()["items"][0]["cwd"], cwd, "{id}");
    }
    let here = omp(
        &r,
        &[
            "list",
            "--session",
            "omp:*",
            "--cwd",
            "/home/dev/old",
            "--json",
        ],
    );
    let ids: Vec<String> = items(&here).into_iter().map(|i| i.0).collect();
    assert_eq!(ids, ["omp:no-title-slot"]);
}

#[test]
fn a_damaged_title_slot_gives_a_notice_and_the_rest() {
    let r = Roots::new();
    let run = omp(
        &r,
        &["list", "--session", "omp:damaged-title-slot", "--json"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(items(&run).len(), 2);
    assert!(run.json()["notice"].is_string(), "{}", run.stdout);
}

#[test]
fn the_root_comes_from_the_flag_the_variable_or_oh_my_pis_home() {
    let r = Roots::new();
    let root = r.root("omp").display().to_string();
    let empty = r.dir.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let others: Vec<String> = ["claude", "codex", "pi"]
        .iter()
        .flat_map(|h| [format!("--{h}-root"), empty.display().to_string()])
        .collect();
    let run_with = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = assert_cmd::Command::cargo_bin("notesoup-history").unwrap();
        cmd.env_clear()
            .env("HOME", r.dir.path().join("home"))
            .env("XDG_CACHE_HOME", r.dir.path().join("cache"))
            .env("NOTESOUP_HISTORY_INDEX", "off")
            .args(&others)
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let list = ["list", "--session", "omp:title-slot"];
    assert_eq!(
        run_with(&[&["--omp-root", &root][..], &list].concat(), &[]).0,
        0
    );
    assert_eq!(
        run_with(&list, &[("NOTESOUP_HISTORY_OMP_ROOT", &root)]).0,
        0
    );
    // Oh My Pi's own directory: `$PI_CODING_AGENT_DIR/sessions`, else `~/.omp/agent/sessions`.
    let agent = r.dir.path().join("agent");
    fs::create_dir_all(&agent).unwrap();
    std::os::unix::fs::symlink(r.root("omp"), agent.join("sessions")).unwrap();
    let agent = agent.display().to_string();
    assert_eq!(run_with(&list, &[("PI_CODING_AGENT_DIR", &agent)]).0, 0);
    assert_eq!(run_with(&list, &[]).0, 2, "no ~/.omp in the test's home");
    let (code, _) = run_with(&["--omp-root", "/nonexistent/omp", "list"], &[]);
    assert_eq!(code, 2, "a named root that does not exist is a usage error");
}

/// The real sample in a root of its own, with modification times fixed.
fn sample_roots() -> Roots {
    let r = Roots::new();
    for (_, root) in r.roots() {
        fs::remove_dir_all(root).unwrap();
        fs::create_dir_all(root).unwrap();
    }
    let to = r.root("omp").to_path_buf();
    copy_dir(&fixtures().join("samples/omp"), &to);
    for (i, file) in r.files().keys().enumerate() {
        r.set_mtime(file, i as u64 * 60);
    }
    r
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What a run printed, the temporary root replaced.
fn shown(r: &Roots, run: &Run) -> String {
    run.shown()
        .replace(&r.dir.path().display().to_string(), "[ROOT]")
}

#[test]
fn the_real_sample_overview_browse_search_and_export() {
    let r = sample_roots();
    let overview = r.run(&["list", "--session", "*"]);
    assert_eq!(overview.code, 0, "{overview:?}");
    assert_snapshot!("omp_sample_overview", shown(&r, &overview));
    let browse = r.run(&["list", "--session", SAMPLE, "--limit", "30"]);
    assert_eq!(browse.code, 0, "{browse:?}");
    assert_snapshot!("omp_sample_browse", shown(&r, &browse));
    let found = r.run(&[
        "list",
        "--session",
        "*",
        "--query",
        "pullfrog",
        "--limit",
        "8",
    ]);
    assert_eq!(found.code, 0, "{found:?}");
    assert_snapshot!("omp_sample_search", shown(&r, &found));
    let export = r.run(&["export", "--session", SAMPLE]);
    assert_eq!(export.code, 0, "{export:?}");
    assert_snapshot!(
        "omp_sample_export",
        crate::export::outline(&shown(&r, &export))
    );
}

#[test]
fn the_real_sample_shows_each_event_once_in_its_role() {
    let r = sample_roots();
    let mut args = vec!["list", "--session", SAMPLE, "--json", "--limit", "2000"];
    args.extend(["--budget", "100000000", "--from", "oldest"]);
    for role in ["user", "assistant", "tool", "context"] {
        args.extend(["--role", role]);
    }
    let all = items(&r.run(&args));
    let users: Vec<&str> = all
        .iter()
        .filter(|i| i.2 == "user")
        .map(|i| i.4.as_str())
        .collect();
    assert_eq!(users.len(), 7, "{users:?}");
    assert!(users[0].starts_with("now that we’ve set up"));
    assert!(!users.iter().any(|u| u.contains("system-reminder")));
    // The agent's nudge (257), the rules injected (283, 390), the developer reminder (311):
    // context.
    for seq in [257, 283, 311, 390] {
        let at: Vec<_> = all.iter().filter(|i| i.1 == seq).collect();
        assert_eq!(at.len(), 1, "{seq}");
        assert_eq!(
            (at[0].2.as_str(), at[0].3.as_str()),
            ("context", "meta"),
            "{seq}"
        );
    }
    assert!(all
        .iter()
        .any(|i| i.1 == 311 && i.4.contains("You stopped with 3 incomplete")));
    // 132 tool calls, each once (not again from `tool_execution_start`), each with its output.
    let calls = all.iter().filter(|i| i.3 == "tool_call").count();
    assert_eq!(calls, 132);
    assert!(!all
        .iter()
        .any(|i| i.4.contains("export GIT_TERMINAL_PROMPT=0")));
    let titles: Vec<_> = all
        .iter()
        .filter(|i| i.4 == "Use pullfrog not bullfrog")
        .collect();
    assert_eq!(titles.len(), 1, "the later title_change");
    let seqs: Vec<u64> = all.iter().map(|i| i.1).collect();
    assert!(
        seqs.iter().all(|&s| s >= 3),
        "nothing from the slot or the header"
    );
}

#[test]
fn the_index_answers_oh_my_pi_searches_as_a_scan_does_and_follows_appends() {
    let r = Roots::new();
    let _guard = Guard(&r);
    index(&r);
    for args in [
        &["list", "--session", "omp:*", "--query", "plan", "--json"][..],
        &["list", "--query", "scout", "--json", "--all-branches"],
        &[
            "list",
            "--session",
            "omp:*",
            "--query",
            "step",
            "--role",
            "context",
            "--json",
        ],
        &[
            "list",
            "--session",
            "omp:*",
            "--query",
            "GIT_TERMINAL_PROMPT",
            "--json",
        ],
    ] {
        same_both_ways(&r, args);
    }
    let rel = "omp/-home-dev-proj/2026-08-20T10-05-00-000Z_tree-branch.jsonl";
    let entry = concat!(
        r#"{"type":"message","id":"0009aa09","parentId":"0007aa07","timestamp":"2026-08-20T10:05:09.000Z","#,
        r#""message":{"role":"user","content":[{"type":"text","text":"omp appended marker"}],"attribution":"user","timestamp":0}}"#,
        "\n"
    );
    append(&r, rel, entry);
    let search = ["list", "--query", "omp appended marker", "--json"];
    same_both_ways(&r, &search);
    update(&r);
    let (from_index, _) = same_both_ways(&r, &search);
    assert!(from_index > 0);
    let hits = r.run_indexed(&search);
    assert_eq!(hits.json()["items"][0]["session"], "omp:tree-branch");
}
