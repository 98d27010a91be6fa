//! Claude Code 2.1.78–2.1.207 through the CLI (formats/claude.md §13): one test per rule over
//! `fixtures/claude-2026`, the real 2.1.207 sample, and a root that mixes those sessions with
//! the older ones of `fixtures/claude`.

use crate::common::{every_role, fixtures, Roots, Run};
use insta::assert_snapshot;
use serde_json::Value;

/// The sample's session id (its lines' `sessionId`), which its copy is named after.
const SAMPLE: &str = "1dd4a314-7632-4908-9be1-1a43cdb074a2";

fn roots() -> Roots {
    Roots::with_extra("claude", &fixtures().join("claude-2026/projects"))
}

fn claude(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("claude", args)
}

/// One event as `list --json` shows it.
#[derive(Debug, PartialEq)]
struct Ev {
    seq: u64,
    role: String,
    kind: String,
    tool: Option<String>,
    text: String,
}

fn items(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.json()["items"].as_array().unwrap().clone()
}

fn ev(item: &Value) -> Ev {
    let s = |k: &str| item[k].as_str().map(str::to_owned);
    Ev {
        seq: item["seq"].as_u64().unwrap(),
        role: s("role").unwrap(),
        kind: s("kind").unwrap(),
        tool: s("tool"),
        text: s("text").unwrap(),
    }
}

/// Every event of a session's branch, every role, in order.
fn events(r: &Roots, id: &str) -> Vec<Ev> {
    let run = claude(r, &every_role(id, &["--budget", "4000000"]));
    assert!(run.json()["notice"].is_null(), "{id}: {}", run.stdout);
    items(&run).iter().map(ev).collect()
}

/// `seq role:kind` of every event.
fn roles(events: &[Ev]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {}:{}", e.seq, e.role, e.kind))
        .collect()
}

#[test]
fn queued_commands_typed_in_prompt_mode_are_user() {
    let r = roots();
    let all = events(&r, "queued-command-prompt");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 tool:tool_call",
            "4 tool:tool_output",
            "6 user:message",
            "7 user:message",
            "8 assistant:message"
        ],
        "the queue-operation lines (3, 5) are no events"
    );
    assert_eq!(all[3].text, "also run the QUEUEPROMPT tests");
    assert_eq!(all[4].text, "and lint, QUEUEPROMPT blocks");
    let browse = claude(
        &r,
        &["list", "--session", "queued-command-prompt", "--json"],
    );
    let shown: Vec<u64> = items(&browse).iter().map(|i| ev(i).seq).collect();
    assert_eq!(shown, [1, 6, 7, 8], "queued prompts are dialogue");
    let hits = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "QUEUEPROMPT",
            "--role",
            "user",
            "--json",
        ],
    );
    let hits: Vec<u64> = items(&hits).iter().map(|i| ev(i).seq).collect();
    assert_eq!(hits, [1, 6, 7]);
}

#[test]
fn task_notifications_and_other_queued_modes_are_context() {
    let r = roots();
    let all = events(&r, "queued-command-task-notification");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 tool:tool_call",
            "3 tool:tool_output",
            "4 assistant:message",
            "5 context:meta",
            "6 context:meta",
            "7 context:meta",
            "8 context:meta",
            "9 assistant:message"
        ]
    );
    assert!(all[4].text.starts_with("<task-notification>"));
    assert_eq!(
        all[7].text, "TASKNOTE posted by another process",
        "a prompt-mode command from a peer process is not typed text"
    );
    assert!(all[4].text.contains("npm run TASKNOTE"));
    let typed = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "TASKNOTE",
            "--role",
            "user",
            "--json",
        ],
    );
    let typed: Vec<u64> = items(&typed).iter().map(|i| ev(i).seq).collect();
    assert_eq!(typed, [1], "only the person's own prompt is user");
    let browse = claude(
        &r,
        &[
            "list",
            "--session",
            "queued-command-task-notification",
            "--json",
        ],
    );
    let page = browse.json();
    let last = page["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["seq"], 9);
    assert_eq!(
        last["folded_before"]["first_seq"], 5,
        "the notifications fold as context: {last}"
    );
}

#[test]
fn metadata_lines_before_and_between_turns_are_no_events_and_name_the_session() {
    let r = roots();
    let all = events(&r, "metadata-lines-first");
    assert_eq!(
        roles(&all),
        [
            "8 user:message",
            "9 assistant:message",
            "15 user:message",
            "16 assistant:message"
        ]
    );
    let run = claude(&r, &every_role("metadata-lines-first", &[]));
    for item in items(&run) {
        assert_eq!(item["title"], "METAFIRST custom title", "{item}");
        assert_eq!(item["cwd"], "/w/new");
        assert_eq!(
            item["git_branch"], "feature/metafirst",
            "the branch the session last wrote on"
        );
    }
    let hits = claude(
        &r,
        &["list", "--session", "*", "--query", "METAFIRST", "--json"],
    );
    let hits: Vec<u64> = items(&hits).iter().map(|i| ev(i).seq).collect();
    assert_eq!(hits, [8, 15], "titles and last prompts are not events");
    let read = claude(
        &r,
        &[
            "read",
            "--session",
            "metadata-lines-first",
            "--seq",
            "8",
            "--json",
        ],
    )
    .json();
    assert_eq!(read["item"]["title"], "METAFIRST custom title");
}

#[test]
fn snake_case_session_ids_origin_and_prompt_fields_are_tolerated() {
    let r = roots();
    let all = events(&r, "session-id-snake-case");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 assistant:message",
            "3 user:message",
            "4 assistant:message"
        ]
    );
    assert_eq!(all[2].text, "SNAKECASE follow-up");
}

#[test]
fn a_compaction_that_kept_messages_holds_them_once_with_its_boundary_and_summary() {
    let r = roots();
    let all = events(&r, "compaction-preserved-segment");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 assistant:message",
            "3 user:message",
            "4 assistant:message",
            "5 context:summary",
            "6 context:summary",
            "7 user:message",
            "8 assistant:message"
        ]
    );
    let marks = claude(
        &r,
        &every_role("compaction-preserved-segment", &["--all-branches"]),
    );
    for item in items(&marks) {
        assert_eq!(item["on_active_branch"], true, "{item}");
    }
    let kept = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "Keep this KEPTSEG",
            "--json",
        ],
    );
    assert_eq!(items(&kept).len(), 1, "a kept message is shown once");
}

#[test]
fn a_compaction_whose_logical_parent_is_an_away_summary_keeps_the_history_before_it() {
    let r = roots();
    let all = events(&r, "compaction-away-summary");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 assistant:message",
            "4 context:meta",
            "5 context:summary",
            "6 context:summary",
            "7 context:meta",
            "8 context:meta",
            "9 user:message",
            "10 assistant:message"
        ],
        "the turn_duration line (3) has no text; the /compact wrapper is context"
    );
    assert!(all[2].text.starts_with("Goal: pick an AWAYSUM option"));
    let marks = claude(
        &r,
        &every_role("compaction-away-summary", &["--all-branches"]),
    );
    for item in items(&marks) {
        assert_eq!(item["on_active_branch"], true, "{item}");
    }
}

#[test]
fn new_attachment_types_are_context_or_nothing() {
    let r = roots();
    let all = events(&r, "new-attachment-types");
    let (first, last) = (&all[0], &all[all.len() - 1]);
    assert_eq!((first.seq, first.role.as_str()), (1, "user"));
    assert_eq!((last.seq, last.role.as_str()), (20, "assistant"));
    let middle = &all[1..all.len() - 1];
    assert!(
        middle.iter().all(|e| e.role == "context"),
        "{:?}",
        roles(middle)
    );
    let texts: Vec<&str> = middle.iter().map(|e| e.text.as_str()).collect();
    for expected in [
        "- NEWATT-skill: does a thing",
        "NEWATT hook says hello",
        "NEWATT todo\npending\nDoing NEWATT",
        "1\tNEWATT edited",
        "NEWATT-skill\n/s/SKILL.md\nNEWATT skill body",
        "NEWATT file body",
    ] {
        assert!(texts.contains(&expected), "{expected:?} in {texts:?}");
    }
}

#[test]
fn new_system_subtypes_are_context() {
    let r = roots();
    let all = events(&r, "new-system-subtypes");
    assert_eq!(
        roles(&all),
        [
            "1 user:message",
            "2 assistant:message",
            "3 context:meta",
            "5 context:meta",
            "6 context:meta",
            "7 context:meta",
            "8 context:meta",
            "9 user:message",
            "10 assistant:message"
        ],
        "turn_duration (4) carries no text"
    );
    assert_eq!(all[2].text, "NEWSYS stop hook context");
    assert_eq!(all[3].text, "NEWSYS informational notice");
    assert_eq!(all[6].text, "NEWSYS future subtype");
}

#[test]
fn thinking_blocks_without_their_text_are_no_events() {
    let r = roots();
    let all = events(&r, "thinking-omitted");
    assert_eq!(roles(&all), ["1 user:message", "3 assistant:message"]);
    let browse = claude(&r, &["list", "--session", "thinking-omitted", "--json"]);
    let shown: Vec<u64> = items(&browse).iter().map(|i| ev(i).seq).collect();
    assert_eq!(shown, [1, 3]);
}

#[test]
fn mcp_tool_calls_and_results_render_like_other_tools() {
    let r = roots();
    let all = events(&r, "mcp-tools");
    let query = Some("mcp__context7__query-docs".to_string());
    assert_eq!(
        all[1],
        Ev {
            seq: 2,
            role: "tool".into(),
            kind: "tool_call".into(),
            tool: query.clone(),
            text: "mcp__context7__query-docs: MCPDOC hooks\nlibraryId: /anthropics/claude-code"
                .into(),
        }
    );
    assert_eq!(
        all[2],
        Ev {
            seq: 3,
            role: "tool".into(),
            kind: "tool_output".into(),
            tool: query,
            text: r#"{"result":"MCPDOC hooks run on events"}"#.into(),
        },
        "the result's content once; its mcpMeta.structuredContent repeats it"
    );
    assert_eq!(
        (all[4].kind.as_str(), all[4].tool.as_deref()),
        ("tool_error", Some("mcp__deepwiki__ask_question"))
    );
    assert_eq!(all[5].text, "Hooks run on events.");
    let read = claude(&r, &["read", "--session", "mcp-tools", "--seq", "2"]);
    assert!(
        read.stdout
            .contains("tool_call · mcp__context7__query-docs"),
        "{}",
        read.stdout
    );
}

#[test]
fn images_in_tool_results_are_placeholders() {
    let r = roots();
    let all = events(&r, "tool-result-image");
    assert_eq!(all[2].text, "TOOLIMG screenshot taken\n[image]");
    assert_eq!(
        all[2].tool.as_deref(),
        Some("mcp__claude-in-chrome__computer")
    );
    let hits = claude(
        &r,
        &[
            "list",
            "--session",
            "tool-result-image",
            "--query",
            "[image]",
            "--json",
        ],
    );
    let hits: Vec<u64> = items(&hits).iter().map(|i| ev(i).seq).collect();
    assert_eq!(hits, [3]);
}

/// One line per event: `seq role:kind [tool] | text`, the text cut to 70 characters.
fn digest(events: &[Ev]) -> String {
    let mut out = String::new();
    for e in events {
        let text: String = e.text.replace('\n', "⏎").chars().take(70).collect();
        let tool = e.tool.as_ref().map_or(String::new(), |t| format!(" [{t}]"));
        out.push_str(&format!("{} {}:{}{tool} | {text}\n", e.seq, e.role, e.kind));
    }
    out
}

#[test]
fn the_2_1_207_sample_decodes_with_every_event_in_its_role() {
    let r = roots();
    let all = events(&r, SAMPLE);
    let raw = std::fs::read_to_string(fixtures().join(format!(
        "claude-2026/projects/-sample-2-1-207/{SAMPLE}.jsonl"
    )))
    .unwrap();
    let lines: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for e in &all {
        let line = &lines[e.seq as usize - 1];
        let attachment = line["attachment"]["type"].as_str();
        let typed = match line["type"].as_str() {
            Some("user") => line["origin"]["kind"] == "human",
            Some("attachment") => line["attachment"]["commandMode"] == "prompt",
            _ => false,
        };
        assert_eq!(e.role == "user", typed, "{e:?}");
        if attachment.is_some_and(|a| a != "queued_command") {
            assert_eq!(e.role, "context", "{e:?}");
        }
        if line["type"] == "system" {
            assert_eq!(e.role, "context", "{e:?}");
        }
    }
    let queued = all
        .iter()
        .filter(|e| lines[e.seq as usize - 1]["attachment"]["type"] == "queued_command");
    assert_eq!(queued.count(), 8);
    let run = claude(&r, &["list", "--session", SAMPLE, "--json", "--limit", "1"]);
    let item = &items(&run)[0];
    assert_eq!(
        item["cwd"],
        "/Users/ta93abe/Developer/github.com/ta93abe/me"
    );
    assert_eq!(item["git_branch"], "feature/404-playground-agent-docs");
    assert_eq!(item["title"], "emdash でコンテンツ Git 管理を検討");
    assert_snapshot!("claude_2026_sample", digest(&all));
}

#[test]
fn overview_and_search_over_old_and_new_versions() {
    let r = roots();
    let overview = claude(&r, &["list", "--limit", "40"]);
    assert_eq!(overview.code, 0, "{}", overview.stderr);
    assert_snapshot!("claude_2026_mixed_overview", overview.shown());
    let json = claude(&r, &["list", "--limit", "40", "--json"]).json();
    let sessions: Vec<&str> = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect();
    for id in [
        "claude:compaction-across-boundary",
        "claude:70fc6d83-147d-4fdf-b015-bd67eeb11883",
        "claude:queued-command-task-notification",
        &format!("claude:{SAMPLE}"),
    ] {
        assert!(sessions.contains(&id), "{id} in {sessions:?}");
    }
    let search = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "Conversation compacted",
            "--limit",
            "40",
        ],
    );
    assert_eq!(search.code, 0, "{}", search.stderr);
    assert_snapshot!("claude_2026_mixed_search", search.stdout);
    let hits = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "Conversation compacted",
            "--json",
        ],
    )
    .json();
    let versions: Vec<&str> = hits["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["session"].as_str().unwrap())
        .collect();
    assert!(versions.contains(&"claude:compaction-across-boundary"));
    assert!(versions.contains(&"claude:compaction-preserved-segment"));
}
