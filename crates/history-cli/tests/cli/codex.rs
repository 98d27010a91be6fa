//! Codex through the CLI: generations, `.zst`, inherited history, rollbacks, context, damage.

use crate::common::{every_role, fixtures, Roots, Run};
use insta::assert_snapshot;

fn codex(roots: &Roots, args: &[&str]) -> Run {
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
        out.push_str(&format!("===== {id}\n{}", run.shown()));
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

// ----- Codex 0.125–0.142 -----------------------------------------------------------------------

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

fn seqs(run: &Run) -> Vec<u64> {
    run.positions().iter().map(|p| p.0).collect()
}

const REWRITTEN: &str = "codex:019ef000-0000-7000-8000-000000000011";
const PARENT: &str = "codex:019ef000-0000-7000-8000-000000000012";
const CHILD: &str = "codex:019ef000-0000-7000-8000-000000000013";

#[test]
fn a_session_meta_rewritten_every_turn_is_one_session_without_its_copies() {
    let r = Roots::new();
    let run = codex(&r, &every_role(REWRITTEN, &[]));
    assert_eq!(
        seqs(&run),
        [1, 3, 6, 8, 14, 16],
        "lines 7 and 15 are the copies"
    );
    let overview = codex(
        &r,
        &["list", "--session", "codex:*", "--limit", "100", "--json"],
    );
    let listed = overview.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["session"] == REWRITTEN)
        .count();
    assert_eq!(listed, 1, "one session, not a fork per copy");
    let browse = codex(&r, &["list", "--session", REWRITTEN, "--json"]);
    let roles: Vec<String> = items(&browse).into_iter().map(|i| i.2).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
}

#[test]
fn multi_agent_calls_and_their_end_events_are_tools_and_notifications_context() {
    let r = Roots::new();
    let all = items(&codex(&r, &every_role(PARENT, &[])));
    let tools: Vec<(u64, &str)> = all
        .iter()
        .filter(|i| i.2 == "tool")
        .map(|i| (i.0, i.3.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            (6, "tool_call"),
            (8, "tool_output"),
            (10, "tool_call"),
            (11, "tool_output"),
            (13, "tool_call"),
            (14, "tool_output"),
            (17, "tool_call"),
            (18, "tool_output"),
            (20, "tool_call"),
            (21, "tool_error"),
        ]
    );
    assert!(all
        .iter()
        .any(|i| i.0 == 6 && i.4.starts_with("spawn_agent: ")));
    let notice = all.iter().find(|i| i.0 == 16).unwrap();
    assert_eq!(notice.2, "context");
    let hit = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:*",
            "--query",
            "pending_init",
            "--json",
        ],
    );
    assert_eq!(
        items(&hit)
            .iter()
            .map(|i| (i.0, i.2.as_str()))
            .collect::<Vec<_>>(),
        [(8, "tool")]
    );
    // The browse page folds the tools: the dialogue is the prompt and the answer.
    let browse = codex(&r, &["list", "--session", PARENT, "--json"]);
    let roles: Vec<String> = items(&browse).into_iter().map(|i| i.2).collect();
    assert_eq!(roles, ["user", "assistant"]);
}

#[test]
fn a_spawned_child_s_prompts_are_what_its_parent_sent_it() {
    let r = Roots::new();
    let users = codex(
        &r,
        &["list", "--session", CHILD, "--role", "user", "--json"],
    );
    assert_eq!(
        users.texts(),
        [
            "Review src/lib.rs for overflow bugs.",
            "Also check src/main.rs."
        ]
    );
    // Each item names the thread that spawned it.
    for item in users.json()["items"].as_array().unwrap() {
        assert_eq!(item["parent"], PARENT, "{item}");
    }
    // Nothing of the parent is inherited: its prompt is not in the child.
    let hit = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:*",
            "--query",
            "review lib.rs with a helper agent",
            "--json",
        ],
    );
    let sessions: Vec<&str> = hit.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|s| if s == PARENT { "parent" } else { "other" })
        .collect();
    assert_eq!(sessions, ["parent"]);
    // The multi-agent v2 child's prompt, sent by inter_agent_communication, is its first.
    let overview = codex(&r, &["list", "--session", "codex:019c9b00*", "--json"]).json();
    assert_eq!(overview["items"][0]["role"], "user");
    assert_eq!(
        overview["items"][0]["text"],
        "Review src/lib.rs for overflow bugs."
    );
}

#[test]
fn a_mid_turn_compaction_is_a_marker_and_the_turn_goes_on() {
    let r = Roots::new();
    let hit = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:*",
            "--query",
            "compacted: window",
            "--json",
        ],
    );
    let found: Vec<(u64, String, String)> =
        items(&hit).into_iter().map(|i| (i.0, i.2, i.4)).collect();
    assert_eq!(
        found,
        [
            (9, "context".to_string(), "compacted: window 1".to_string()),
            (19, "context".to_string(), "compacted: window 2".to_string()),
        ]
    );
    let browse = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:019ef000-0000-7000-8000-000000000014",
            "--json",
        ],
    );
    assert_eq!(
        seqs(&browse),
        [5, 13, 18, 21],
        "what came before the compaction stays"
    );
}

#[test]
fn a_rollback_after_an_aborted_turn_hides_that_turn() {
    let r = Roots::new();
    let gone = codex(
        &r,
        &["list", "--session", "codex:*", "--query", "before the edit"],
    );
    assert_eq!(gone.code, 1, "{}", gone.stdout);
    let browse = codex(
        &r,
        &[
            "list",
            "--session",
            "codex:019ef000-0000-7000-8000-000000000015",
            "--json",
        ],
    );
    assert_eq!(
        browse.texts(),
        [
            "first question",
            "first answer",
            "second question, edited",
            "edited answer"
        ]
    );
}

#[test]
fn mcp_tool_search_patch_and_image_outputs_are_tools() {
    let r = Roots::new();
    let find = |query: &str| {
        let run = codex(
            &r,
            &[
                "list",
                "--session",
                "codex:019ef000*",
                "--query",
                query,
                "--json",
            ],
        );
        items(&run)
            .into_iter()
            .map(|i| (i.0, i.1, i.2, i.3))
            .collect::<Vec<_>>()
    };
    let tool = |seq: u64, part: u64, kind: &str| (seq, part, "tool".to_string(), kind.to_string());
    assert_eq!(
        find("9999 does not exist"),
        [tool(9, 0, "tool_error")],
        "an MCP error, once"
    );
    assert_eq!(
        find("forgets deleted files"),
        [tool(6, 0, "tool_output")],
        "an MCP result, once"
    );
    assert_eq!(
        find("List the events of a calendar"),
        [tool(6, 0, "tool_output")]
    );
    assert_eq!(find("tool_search: calendar"), [tool(5, 0, "tool_call")]);
    assert_eq!(
        find("Failed to find src/gone.rs"),
        [tool(9, 0, "tool_error")],
        "a failed patch, once"
    );
    assert_eq!(find("shot.png, 640x480"), [tool(6, 0, "tool_output")]);
    let image = codex(
        &r,
        &every_role("codex:019ef000-0000-7000-8000-000000000019", &[]),
    );
    assert!(items(&image).contains(&(6, 1, "tool".into(), "tool_output".into(), "[image]".into())));
}

#[test]
fn a_last_line_without_its_newline_is_read_and_the_file_left_alone() {
    let r = Roots::new();
    let id = "codex:019ef000-0000-7000-8000-00000000001a";
    let run = codex(&r, &["list", "--session", id, "--json"]);
    assert_eq!(run.code, 0);
    let json = run.json();
    assert_eq!(json["notice"], serde_json::Value::Null, "{}", run.stdout);
    assert_eq!(
        run.texts().last().unwrap(),
        "Still running: the last line has no newline yet."
    );
    let read = codex(&r, &["read", "--session", id, "--seq", "6"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
}

// ----- Codex 0.144–0.171 (formats/codex.md §12), fixtures under `fixtures/codex-2026` ---------

/// The fixture roots with `fixtures/codex-2026` copied into Codex's, old and new versions mixed.
fn roots_2026() -> Roots {
    Roots::with_extra("codex", &fixtures().join("codex-2026/sessions"))
}

const PAGED: &str = "codex:01a0a000-0000-7000-8000-000000000001";
const MAV2_PARENT: &str = "codex:01a0a000-0000-7000-8000-000000000002";
const MAV2_CHILD: &str = "codex:01a0a000-0000-7000-8000-000000000003";
const AUTOCOMPACT: &str = "codex:01a0a000-0000-7000-8000-000000000004";

/// `(session, role, kind)` of every hit of `query` in every session, with `--role` where given.
fn found(r: &Roots, query: &str, role: Option<&str>) -> Vec<(String, String, String)> {
    let mut args = vec!["list", "--session", "codex:*", "--query", query, "--json"];
    if let Some(role) = role {
        args.extend(["--role", role]);
    }
    let run = codex(r, &args);
    if run.code == 1 {
        return Vec::new();
    }
    assert_eq!(run.code, 0, "{}", run.stderr);
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

fn hit(session: &str, role: &str, kind: &str) -> (String, String, String) {
    (session.to_string(), role.to_string(), kind.to_string())
}

#[test]
fn paginated_history_shows_each_message_once_beside_the_item_completed_copies() {
    let r = roots_2026();
    assert_eq!(
        found(&r, "Find the PAGED flaky test", None),
        [hit(PAGED, "user", "message")],
        "the UserMessage item repeats the prompt"
    );
    assert_eq!(
        found(&r, "Looking for the PAGED flaky test", None),
        [hit(PAGED, "assistant", "message")],
        "the AgentMessage item repeats the reply (same msg_ id)"
    );
    assert_eq!(
        found(&r, "PAGED retry", None),
        [hit(PAGED, "tool", "tool_output")],
        "the CommandExecution item repeats what the exec call's output holds"
    );
    assert_eq!(
        found(&r, "rg PAGED tests", None),
        [hit(PAGED, "tool", "tool_call")],
        "a code-mode exec call is a tool call"
    );
    let users = codex(
        &r,
        &["list", "--session", PAGED, "--role", "user", "--json"],
    );
    assert_eq!(users.texts(), ["Find the PAGED flaky test"]);
    let assistant = codex(
        &r,
        &["list", "--session", PAGED, "--role", "assistant", "--json"],
    );
    assert_eq!(
        assistant.texts(),
        [
            "Looking for the PAGED flaky test.",
            "The PAGED flaky test is tests/net.rs."
        ]
    );
}

#[test]
fn world_state_and_labelled_injections_are_context_and_usage_records_nothing() {
    let r = roots_2026();
    assert_eq!(
        found(&r, "PAGED world agents text", None),
        [hit(PAGED, "context", "meta")]
    );
    assert_eq!(
        found(&r, "PAGED agents rules", None),
        [hit(PAGED, "context", "message")],
        "content_item_kinds agents_md.instructions"
    );
    for record in [
        "cache_write_input_tokens",
        "trigger_turn",
        "permission_profile",
    ] {
        assert_eq!(found(&r, record, None), [], "{record} shows nothing");
    }
    let overview = codex(
        &r,
        &["list", "--session", "codex:*", "--limit", "100", "--json"],
    );
    let listed = overview.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["session"] == PAGED)
        .count();
    assert_eq!(
        listed, 1,
        "a session_meta written again mid-file is the same session"
    );
}

#[test]
fn a_sub_agent_s_messages_to_its_parent_are_context_and_its_tools_tools() {
    let r = roots_2026();
    let mut reviewer = found(&r, "MAV2 reviewer: two bugs", None);
    reviewer.sort();
    assert_eq!(
        reviewer,
        [
            hit(MAV2_PARENT, "context", "message"),
            hit(MAV2_CHILD, "assistant", "message")
        ],
        "in the parent, an agent_message from /root/reviewer is another agent's; in the child, its own reply"
    );
    for call in ["spawn_agent", "wait_agent", "send_message"] {
        let calls: Vec<_> = found(&r, &format!("{call}:"), None)
            .into_iter()
            .filter(|h| h.0 == MAV2_PARENT)
            .collect();
        assert_eq!(
            calls,
            [hit(MAV2_PARENT, "tool", "tool_call")],
            "{call}, under a namespace or not, is a tool call"
        );
    }
    assert_eq!(
        found(&r, "MAV2 wait done", None),
        [hit(MAV2_PARENT, "tool", "tool_output")]
    );
    let users = codex(
        &r,
        &["list", "--session", MAV2_PARENT, "--role", "user", "--json"],
    );
    assert_eq!(users.texts(), ["Review the MAV2 branch with a helper"]);
}

#[test]
fn a_sub_agent_whose_source_is_a_string_names_its_parent() {
    let r = roots_2026();
    let child = codex(&r, &["list", "--session", MAV2_CHILD, "--json"]);
    assert_eq!(
        child.json()["session"],
        MAV2_CHILD,
        "its own id, not the root's session_id"
    );
    for item in child.json()["items"].as_array().unwrap() {
        assert_eq!(item["parent"], MAV2_PARENT, "{item}");
    }
    let users = codex(
        &r,
        &["list", "--session", MAV2_CHILD, "--role", "user", "--json"],
    );
    assert_eq!(
        users.texts(),
        ["Review MAV2 for bugs"],
        "what its parent sent it"
    );
}

#[test]
fn an_automatic_compaction_with_its_window_fields_shows_its_summary_once() {
    let r = roots_2026();
    assert_eq!(
        found(&r, "AUTOCOMPACT summary", None),
        [hit(AUTOCOMPACT, "context", "summary")],
        "the summarizer's reply is the compaction's summary, not a message"
    );
    assert_eq!(
        found(&r, "gAAAAB-AUTOCOMPACT", None),
        [],
        "the compaction item of the replacement history is encrypted"
    );
    let assistant = codex(
        &r,
        &[
            "list",
            "--session",
            AUTOCOMPACT,
            "--role",
            "assistant",
            "--json",
        ],
    );
    assert_eq!(
        assistant.texts(),
        [
            "Splitting the AUTOCOMPACT parser now.",
            "AUTOCOMPACT done: lexer.rs and reader.rs."
        ]
    );
}
