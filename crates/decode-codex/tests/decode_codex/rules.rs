//! The decoding rules, one test each, over the hand-written fixtures and the real sample.

use crate::common::{self, decode, rows, rule};
use history_core::{Corpus, Event, Keep, Role, Transcript};
use history_raw::word_missing_from_line;

fn at(events: &[Event], seq: u64) -> Vec<&Event> {
    events.iter().filter(|e| e.seq == seq).collect()
}

fn texts(events: &[Event], role: Role) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.role == role)
        .map(|e| e.text.as_str())
        .collect()
}

fn seqs(events: &[Event]) -> Vec<u64> {
    let mut s: Vec<u64> = events.iter().map(|e| e.seq).collect();
    s.dedup();
    s
}

#[test]
fn g1_items_are_the_dialogue_and_only_the_header_has_a_time() {
    let (events, decoded) = decode(&rule("g1-flat"));
    assert_eq!(texts(&events, Role::User), ["list the files", "[image]"]);
    assert_eq!(
        texts(&events, Role::Assistant),
        ["**Listing files**", "The directory holds README.md."]
    );
    let first = &events[0];
    assert_eq!(
        (first.seq, first.role, first.kind.as_str()),
        (1, Role::Context, "instructions")
    );
    assert!(first.timestamp.is_some());
    assert!(events[1..].iter().all(|e| e.timestamp.is_none()));
    assert_eq!(
        at(&events, 3).iter().map(|e| e.part).collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(
        decoded.meta.cwd.as_deref(),
        Some("/home/u/g1"),
        "from <environment_context>"
    );
    assert!(decoded.notices.is_empty());
}

#[test]
fn g2_state_lines_and_a_null_instructions_header_leave_holes() {
    let (events, decoded) = decode(&rule("g2-record-type-state"));
    assert_eq!(seqs(&events), [3, 4, 5, 7, 8, 9]);
    assert_eq!(texts(&events, Role::User), ["run the tests please"]);
    assert_eq!(at(&events, 3)[0].role, Role::Context, "<user_instructions>");
    let call = at(&events, 7)[0];
    assert_eq!(call.text, "local_shell: cargo test");
    assert_eq!(call.tool.as_deref(), Some("local_shell"));
    assert_eq!(
        at(&events, 8)[0].tool.as_deref(),
        Some("local_shell"),
        "by call_id"
    );
    assert!(decoded.notices.is_empty());
}

#[test]
fn g3_messages_logged_as_item_and_event_show_once() {
    let (events, _) = decode(&rule("g3-envelope"));
    let count = |text: &str| events.iter().filter(|e| e.text == text).count();
    assert_eq!(count("fix the failing test"), 1);
    assert_eq!(count("**Inspecting tests**"), 1);
    assert_eq!(count("Fixed the off-by-one in `add`."), 1);
    assert_eq!(count("u32::wrapping_add wraps around at the boundary"), 1);
    // The event is shown, its item twin is a hole, whichever comes first in the file.
    assert!(at(&events, 5).is_empty() && at(&events, 6)[0].role == Role::User);
    assert!(at(&events, 8).is_empty() && at(&events, 9)[0].kind == "reasoning");
    assert!(at(&events, 20).is_empty() && at(&events, 19)[0].role == Role::Assistant);
    assert!(
        at(&events, 18).is_empty(),
        "MCP output logged as event and item shows once"
    );
    assert!(events
        .iter()
        .filter(|e| e.role == Role::User || e.role == Role::Assistant)
        .all(|e| e.visible));
    assert!(events
        .iter()
        .filter(|e| e.role == Role::Tool || e.role == Role::Context)
        .all(|e| !e.visible));
}

#[test]
fn g3_tools_name_the_tool_and_its_command() {
    let (events, _) = decode(&rule("g3-envelope"));
    let tool = |seq| {
        let e = at(&events, seq)[0];
        (
            e.kind.clone(),
            e.tool.clone().unwrap_or_default(),
            e.text.clone(),
        )
    };
    assert_eq!(
        tool(10),
        (
            "tool_call".into(),
            "exec_command".into(),
            "exec_command: cargo test".into()
        )
    );
    assert_eq!(tool(12).0, "tool_error", "Exit code: 101");
    assert_eq!(tool(12).1, "exec_command");
    assert!(tool(13)
        .2
        .starts_with("apply_patch: *** Begin Patch\n*** Update File: src/lib.rs"));
    assert_eq!(
        tool(14),
        (
            "tool_output".into(),
            "apply_patch".into(),
            "Success. Updated the following files:\nM src/lib.rs\n".into()
        )
    );
    assert_eq!(tool(15).2, "web_search: rust integer overflow add");
    assert_eq!(tool(16).2, "mcp__docs__search: wrapping_add");
    assert_eq!(tool(17).1, "mcp__docs__search");
}

#[test]
fn g3_unknown_types_and_enum_values_are_tolerated() {
    let (events, decoded) = decode(&rule("g3-envelope"));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    for seq in [7, 11, 21, 22, 23, 24, 25, 26, 28] {
        assert!(at(&events, seq).is_empty(), "line {seq} shows nothing");
    }
    assert_eq!(
        decoded.meta.title.as_deref(),
        Some("Fix the failing add test")
    );
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/home/u/proj"));
    let summary = at(&events, 27)[0];
    assert_eq!(
        (summary.role, summary.kind.as_str()),
        (Role::Context, "summary")
    );
    assert_eq!(at(&events, 29)[0].kind, "plan");
    assert_eq!(
        rows(&events)
            .iter()
            .filter(|r| r.0 == 32)
            .map(|r| r.4.as_str())
            .collect::<Vec<_>>(),
        ["what about this screenshot?", "[image]"]
    );
    assert_eq!(at(&events, 33)[0].text, "turn_aborted: interrupted");
    assert_eq!(at(&events, 34)[0].role, Role::Context, "<turn_aborted>");
}

#[test]
fn g4_dialogue_comes_from_item_completed() {
    let (events, _) = decode(&rule("g4-paginated"));
    let dialogue: Vec<(u64, Role, &str)> = events
        .iter()
        .filter(|e| e.visible)
        .map(|e| (e.seq, e.role, e.text.as_str()))
        .collect();
    assert_eq!(
        dialogue,
        [
            (4, Role::User, "summarise the design doc"),
            (6, Role::Assistant, "**Reading the doc**"),
            (8, Role::Assistant, "The doc proposes a paginated history."),
            (10, Role::User, "and the risks?"),
            (12, Role::Assistant, "Migration rewrites files in place."),
        ]
    );
    assert_eq!(
        texts(&events, Role::Context),
        ["<collaboration_mode>default</collaboration_mode>"]
    );
}

#[test]
fn real_sample_shows_each_message_once_and_redacted_injections_as_context() {
    let (events, decoded) = decode(&rule("real-sample"));
    assert!(decoded.notices.is_empty());
    assert_eq!(
        decoded.meta.cwd.as_deref(),
        Some("/redacted/path/ea96e59ed9")
    );
    // Lines 2-7 are developer messages and user-role injections (AGENTS.md, environment)
    // whose markers the publisher redacted; no user_message event claims them.
    assert!((2..=7).all(|seq| at(&events, seq)[0].role == Role::Context));
    // Line 9 is the item twin of the user_message on line 10.
    assert!(at(&events, 9).is_empty());
    assert_eq!(
        texts(&events, Role::User),
        ["[REDACTED_MESSAGE len=98 sha=c002ff99]"]
    );
    let assistant: Vec<&Event> = events
        .iter()
        .filter(|e| e.role == Role::Assistant)
        .collect();
    assert_eq!(
        assistant.len(),
        12,
        "6 reasoning summaries and 6 messages, none doubled"
    );
    assert!(assistant
        .iter()
        .all(|e| [13, 15, 22, 24, 31, 33, 40, 42, 49, 51, 58, 60].contains(&e.seq)));
    let tools = events.iter().filter(|e| e.role == Role::Tool).count();
    assert_eq!(tools, 10, "5 calls and their outputs");
}

#[test]
fn injected_context_is_context_and_only_typed_text_is_user() {
    let (events, _) = decode(&rule("injected-context"));
    assert_eq!(texts(&events, Role::User), ["rename foo to bar"]);
    for seq in 2..=11 {
        let e = at(&events, seq)[0];
        assert_eq!(
            (e.role, e.visible),
            (Role::Context, false),
            "line {seq}: {}",
            e.text
        );
    }
    let ide = at(&events, 14);
    assert_eq!(ide.len(), 2);
    assert_eq!(ide[0].role, Role::Context);
    assert!(ide[0].text.ends_with("## My request for Codex:"));
    assert!(
        at(&events, 13).is_empty(),
        "the item twin of the IDE message"
    );
    assert_eq!(at(&events, 17)[0].role, Role::Context, "<turn_aborted>");
    assert!(
        at(&events, 18).is_empty(),
        "a user_message of kind environment_context"
    );
    assert_eq!(at(&events, 19)[0].kind, "summary");
}

#[test]
fn a_rollback_takes_the_undone_turn_off_the_branch() {
    let path = rule("rollback");
    let (events, decoded) = decode(&path);
    assert_eq!(decoded.branch.as_deref(), Some(&[4, 5, 14, 17, 18][..]));
    assert_eq!(at(&events, 14)[0].text, "thread_rolled_back: 1");
    let corpus = Corpus::new(vec![Box::new(common::codex())]);
    let loaded = corpus
        .load(&common::file(&path), &|_| Keep::Full, false, None)
        .unwrap();
    let kept: Vec<&str> = loaded
        .events
        .iter()
        .filter(|e| e.visible)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        kept,
        [
            "first question",
            "first answer",
            "second question, rephrased",
            "a better answer"
        ]
    );
}

#[test]
fn a_subagent_is_its_own_thread_not_its_root_session() {
    let (events, decoded) = decode(&rule("subagent"));
    assert_eq!(
        at(&events, 3)[0].text,
        "Review src/lib.rs for overflow bugs."
    );
    assert_eq!(
        at(&events, 3)[0].role,
        Role::User,
        "what the parent sends a sub-agent is its prompt"
    );
    assert_eq!(
        texts(&events, Role::Assistant),
        ["No overflow: the inputs are u8 widened to u32."]
    );
    assert_eq!(
        at(&events, 7)[0].kind,
        "tool_output",
        "Process exited with code 0"
    );
    assert_eq!(decoded.lineage, [rule("subagent")]);
    let ids: Vec<String> = common::codex()
        .discover()
        .into_iter()
        .map(|f| f.key.id)
        .collect();
    assert!(ids.contains(&"019c9b00-2222-7000-8000-000000000002".to_string()));
}

#[test]
fn every_word_of_an_event_is_in_its_line_raw_bytes() {
    // What lets the raw prefilter require every word of a query, generated text included
    // (`[image]`, `local_shell: …`, `exec_command` outputs, `apply_patch`…).
    use std::io::BufRead;
    let codex = common::codex();
    let mut checked = 0;
    for file in codex.discover() {
        let (events, decoded) = common::try_decode(&codex, &file.path);
        let Ok(decoded) = decoded else { continue };
        if decoded.lineage.len() != 1 {
            continue; // inherited lines are numbered after the ancestor's
        }
        let raw = codex.open_raw(&file.path).unwrap();
        let lines: Vec<Vec<u8>> = std::io::BufReader::new(raw)
            .split(b'\n')
            .map(Result::unwrap)
            .collect();
        for event in &events {
            let line = &lines[event.seq as usize - 1];
            let missing = word_missing_from_line(&event.text, line);
            assert_eq!(
                missing,
                None,
                "{:?}, line {} of {}",
                event.text,
                event.seq,
                file.path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn successive_rollbacks_remove_the_turns_still_in_force() {
    let dir = common::temp_dir("rollbacks");
    let line = |payload: &str| {
        format!(r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{payload}}}"#)
    };
    let turn = |text: &str| {
        [
            line(r#"{"type":"task_started","turn_id":"t"}"#),
            line(&format!(r#"{{"type":"user_message","message":"{text}"}}"#)),
            line(&format!(
                r#"{{"type":"agent_message","message":"re {text}"}}"#
            )),
        ]
    };
    let mut lines = vec![
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}"#
            .to_string(),
    ];
    lines.extend(turn("A"));
    lines.extend(turn("B"));
    lines.extend(turn("C"));
    lines.push(line(r#"{"type":"thread_rolled_back","num_turns":1}"#));
    lines.extend(turn("D"));
    lines.push(line(r#"{"type":"thread_rolled_back","num_turns":2}"#));
    let corpus = Corpus::new(vec![Box::new(common::codex())]);
    let path = dir.join("rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-000000000000.jsonl");
    let kept = |lines: &[String]| -> Vec<String> {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let loaded = corpus
            .load(&common::file(&path), &|_| Keep::Full, false, None)
            .unwrap();
        loaded.events.into_iter().map(|e| e.text).collect()
    };
    // The second rollback takes D and then B (C is gone already), with the first marker.
    assert_eq!(kept(&lines), ["A", "re A", "thread_rolled_back: 2"]);
    lines.extend(turn("E"));
    lines.push(line(r#"{"type":"thread_rolled_back","num_turns":99}"#));
    lines.extend(turn("F"));
    assert_eq!(kept(&lines), ["thread_rolled_back: 99", "F", "re F"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ----- Codex 0.125–0.142 -----------------------------------------------------------------------

const PARENT: &str = "019ef000-0000-7000-8000-000000000012";

#[test]
fn session_meta_rewritten_every_turn_is_one_session_and_no_dialogue() {
    let path = rule("session-meta-every-turn");
    let (events, decoded) = decode(&path);
    for copy in [7, 15] {
        assert!(at(&events, copy).is_empty(), "the copy on line {copy}");
    }
    let instructions: Vec<_> = events.iter().filter(|e| e.kind == "instructions").collect();
    assert_eq!(instructions.len(), 1, "the header's instructions only");
    assert_eq!(instructions[0].seq, 1);
    assert_eq!(
        texts(&events, Role::User),
        [
            "why does the parser read one line at a time?",
            "and the copies of session_meta?"
        ]
    );
    assert_eq!(decoded.lineage, [path]);
    assert_eq!(decoded.branch, None);
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    let found = common::codex()
        .discover()
        .into_iter()
        .filter(|f| f.key.id == "019ef000-0000-7000-8000-000000000011")
        .count();
    assert_eq!(found, 1);
}

#[test]
fn multi_agent_tools_and_their_end_events_are_tools() {
    let (events, decoded) = decode(&rule("multi-agent-parent"));
    let tools: Vec<(u64, &str, &str)> = events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .map(|e| (e.seq, e.kind.as_str(), e.tool.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        tools,
        [
            (6, "tool_call", "spawn_agent"),
            (8, "tool_output", "spawn_agent"),
            (10, "tool_call", "send_input"),
            (11, "tool_output", "send_input"),
            (13, "tool_call", "wait_agent"),
            (14, "tool_output", "wait_agent"),
            (17, "tool_call", "close_agent"),
            (18, "tool_output", "close_agent"),
            (20, "tool_call", "close_agent"),
            (21, "tool_error", "close_agent"),
        ],
        "an end event shows the call's output once: the output items after them are holes"
    );
    let spawned = at(&events, 8)[0];
    assert_eq!(
        spawned.text,
        "Ada\nreviewer\nReview src/lib.rs for overflow bugs.\npending_init"
    );
    assert_eq!(
        at(&events, 14)[0].text,
        "Ada\nreviewer\nNo overflow: the inputs are widened first.",
        "each agent once, by name"
    );
    let notice = at(&events, 16)[0];
    assert_eq!((notice.role, notice.visible), (Role::Context, false));
    assert!(notice.text.starts_with("<subagent_notification>"));
    assert_eq!(
        texts(&events, Role::User),
        ["review lib.rs with a helper agent"]
    );
    assert!(at(&events, 7).is_empty(), "begin events show nothing");
    assert_eq!(decoded.meta.parent, None);
}

#[test]
fn a_spawned_child_is_prompted_by_its_parent_and_names_it() {
    let path = rule("multi-agent-child");
    let (events, decoded) = decode(&path);
    let prompts: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e.role == Role::User)
        .map(|e| (e.seq, e.text.as_str()))
        .collect();
    assert_eq!(
        prompts,
        [
            (6, "Review src/lib.rs for overflow bugs."),
            (15, "Also check src/main.rs.")
        ]
    );
    assert!(prompts.iter().all(|(seq, _)| at(&events, *seq)[0].visible));
    assert_eq!(
        decoded.meta.parent.as_deref(),
        Some(&*format!("codex:{PARENT}"))
    );
    assert_eq!(decoded.lineage, [path], "nothing inherited from the parent");
    assert_eq!(events[0].seq, 3, "its own developer message comes first");
    let v2 = decode(&rule("subagent")).1;
    assert_eq!(
        v2.meta.parent.as_deref(),
        Some("codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a")
    );
}

#[test]
fn a_mid_turn_compaction_leaves_a_marker_and_the_turn_goes_on() {
    let (events, decoded) = decode(&rule("compacted-window-mid-turn"));
    let marker = at(&events, 9);
    assert_eq!(
        rows(&marker.iter().map(|e| (*e).clone()).collect::<Vec<_>>()),
        [(
            9,
            0,
            "context".to_string(),
            "meta".to_string(),
            "compacted: window 1".to_string()
        )]
    );
    assert_eq!(
        at(&events, 19)[0].text,
        "compacted: window 2",
        "a number under window_id"
    );
    let count = |text: &str| events.iter().filter(|e| e.text == text).count();
    assert_eq!(
        count("summarize the design doc"),
        1,
        "the replacement history is no dialogue"
    );
    assert_eq!(
        texts(&events, Role::Assistant),
        [
            "The design doc describes a two-pass reader.",
            "The second pass resolves references."
        ]
    );
    assert_eq!(
        decoded.branch, None,
        "what came before the compaction stays"
    );
}

#[test]
fn a_rollback_after_an_aborted_turn_removes_that_turn() {
    let (events, decoded) = decode(&rule("rollback-after-abort"));
    let branch = decoded.branch.expect("a rollback");
    let on: Vec<&str> = events
        .iter()
        .filter(|e| branch.binary_search(&e.seq).is_ok())
        .filter(|e| e.visible)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        on,
        [
            "first question",
            "first answer",
            "second question, edited",
            "edited answer"
        ]
    );
    for gone in 8..=13 {
        assert!(branch.binary_search(&gone).is_err(), "line {gone}");
    }
    assert!(
        branch.binary_search(&14).is_ok(),
        "the rollback itself stays"
    );
}

#[test]
fn an_mcp_end_event_shows_the_result_once_and_errors_as_errors() {
    let (events, _) = decode(&rule("mcp-tool-call-end"));
    let tools: Vec<(u64, &str, &str, &str)> = events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .map(|e| {
            let tool = e.tool.as_deref().unwrap_or("");
            (e.seq, e.kind.as_str(), tool, e.text.as_str())
        })
        .collect();
    assert_eq!(
        tools,
        [
            (
                5,
                "tool_call",
                "mcp__github__get_issue",
                "mcp__github__get_issue: number=42"
            ),
            (
                6,
                "tool_output",
                "mcp__github__get_issue",
                "Issue 42: the cache forgets deleted files"
            ),
            (
                8,
                "tool_call",
                "mcp__github__get_issue",
                "mcp__github__get_issue: number=9999"
            ),
            (
                9,
                "tool_error",
                "mcp__github__get_issue",
                "tool call failed: issue 9999 does not exist"
            ),
        ]
    );
}

#[test]
fn tool_search_calls_and_outputs_are_tools() {
    let (events, _) = decode(&rule("tool-search"));
    let call = at(&events, 5)[0];
    assert_eq!((call.role, call.kind.as_str()), (Role::Tool, "tool_call"));
    assert_eq!(call.tool.as_deref(), Some("tool_search"));
    assert_eq!(call.text, "tool_search: calendar events");
    let output = at(&events, 6)[0];
    assert_eq!(
        (output.role, output.kind.as_str()),
        (Role::Tool, "tool_output")
    );
    assert_eq!(output.tool.as_deref(), Some("tool_search"));
    assert!(
        output.text.contains("calendar_list_events"),
        "{}",
        output.text
    );
}

#[test]
fn a_patch_end_event_is_the_patch_output_and_a_failure_an_error() {
    let (events, _) = decode(&rule("patch-apply-end"));
    let tools: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .map(|e| (e.seq, e.kind.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            (5, "tool_call"),
            (6, "tool_output"),
            (8, "tool_call"),
            (9, "tool_error"),
        ]
    );
    assert_eq!(
        at(&events, 6)[0].text,
        "Success. Updated the following files:\nM src/lib.rs\n"
    );
    assert!(events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .all(|e| e.tool.as_deref() == Some("apply_patch")));
}

#[test]
fn an_image_in_a_tool_output_is_a_placeholder() {
    let (events, _) = decode(&rule("image-in-tool-output"));
    let output: Vec<(u32, &str, &str)> = at(&events, 6)
        .iter()
        .map(|e| (e.part, e.kind.as_str(), e.text.as_str()))
        .collect();
    assert_eq!(
        output,
        [
            (0, "tool_output", "shot.png, 640x480"),
            (1, "tool_output", "[image]")
        ]
    );
    assert!(at(&events, 6)
        .iter()
        .all(|e| e.tool.as_deref() == Some("view_image")));
}

#[test]
fn a_last_line_without_its_newline_is_read_while_codex_writes() {
    let path = rule("last-line-without-newline");
    assert!(!std::fs::read(&path).unwrap().ends_with(b"\n"));
    let (events, decoded) = decode(&path);
    let last = events.last().unwrap();
    assert_eq!(
        (last.seq, last.role, last.text.as_str()),
        (
            6,
            Role::Assistant,
            "Still running: the last line has no newline yet."
        )
    );
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
}

#[test]
fn real_0142_sample_shows_typed_text_as_user_and_the_rest_in_its_place() {
    let (events, decoded) = common::decode_sample();
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    let users: Vec<&Event> = events.iter().filter(|e| e.role == Role::User).collect();
    assert_eq!(users.len(), 17, "one per user_message");
    for e in &users {
        assert!(!e.text.trim_start().starts_with('<'), "{}", e.text);
        assert!(!e.text.contains("AGENTS.md instructions"), "{}", e.text);
    }
    let copies = [
        35, 45, 140, 173, 189, 199, 211, 216, 225, 234, 243, 253, 262, 881, 928, 1004, 1305,
    ];
    for seq in copies {
        assert!(
            at(&events, seq).is_empty(),
            "session_meta copy on line {seq}"
        );
    }
    assert_eq!(at(&events, 1318)[0].text, "compacted: window 1");
    assert_eq!(at(&events, 1318).len(), 1);
    assert!(events.iter().all(|e| e.seq <= 1326));
    assert_eq!(
        events.iter().filter(|e| e.kind == "instructions").count(),
        1
    );
    assert_eq!(decoded.meta.parent, None);
}

#[test]
fn an_automatic_compaction_shows_the_summarizer_s_reply_once_as_its_summary() {
    let dir = common::temp_dir("auto-compaction");
    let day = dir.join("2026/12/01");
    std::fs::create_dir_all(&day).unwrap();
    let id = "019f9000-0000-7000-8000-0000000000aa";
    let path = day.join(format!("rollout-2026-12-01T10-00-00-{id}.jsonl"));
    let prefix = "Another language model started to solve this problem and produced a summary of its thinking process. Here is the summary produced by the other language model:";
    let reply = "SUMMARYMARK: the parser is split into lexer and reader; tests remain.";
    let line = |n: u32, kind: &str, payload: serde_json::Value| {
        serde_json::json!({
            "timestamp": format!("2026-12-01T10:00:{n:02}.000Z"),
            "ordinal": n,
            "type": kind,
            "payload": payload,
        })
        .to_string()
    };
    let message = |role: &str, kind: &str, text: &str| serde_json::json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]});
    let completed = |item: serde_json::Value| serde_json::json!({"type": "item_completed", "thread_id": id, "turn_id": "t", "item": item});
    let lines = [
        line(
            0,
            "session_meta",
            serde_json::json!({"id": id, "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w/p", "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec", "history_mode": "paginated"}),
        ),
        line(
            1,
            "response_item",
            message("user", "input_text", "refactor the parser"),
        ),
        line(
            2,
            "event_msg",
            completed(
                serde_json::json!({"type": "UserMessage", "id": "u", "content": [{"type": "text", "text": "refactor the parser"}]}),
            ),
        ),
        line(
            3,
            "response_item",
            message("assistant", "output_text", "Splitting it now."),
        ),
        line(
            4,
            "event_msg",
            completed(
                serde_json::json!({"type": "AgentMessage", "id": "a", "content": [{"type": "Text", "text": "Splitting it now."}]}),
            ),
        ),
        // The context fills up: Codex asks for a summary, and writes the reply as an item.
        line(
            5,
            "response_item",
            message("assistant", "output_text", reply),
        ),
        line(
            6,
            "compacted",
            serde_json::json!({"message": format!("{prefix}\n{reply}"), "replacement_history": [message("user", "input_text", "refactor the parser")], "window_number": 2}),
        ),
        line(
            7,
            "event_msg",
            serde_json::json!({"type": "context_compacted"}),
        ),
        line(
            8,
            "response_item",
            message("assistant", "output_text", "Done: lexer.rs and reader.rs."),
        ),
        line(
            9,
            "event_msg",
            completed(
                serde_json::json!({"type": "AgentMessage", "id": "b", "content": [{"type": "Text", "text": "Done: lexer.rs and reader.rs."}]}),
            ),
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let codex = decode_codex::Codex::new(dir.clone());
    let (events, decoded) = common::try_decode(&codex, &path);
    decoded.unwrap();
    let marked: Vec<&Event> = events
        .iter()
        .filter(|e| e.text.contains("SUMMARYMARK"))
        .collect();
    assert_eq!(marked.len(), 1, "{events:#?}");
    assert_eq!(
        (marked[0].role, marked[0].kind.as_str()),
        (Role::Context, "summary")
    );
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e.role == Role::Assistant)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(said, ["Splitting it now.", "Done: lexer.rs and reader.rs."]);
    // A search that reads only some lines whole gets the same events of those lines.
    let full = (events.clone(), Ok(decoded_again(&codex, &path)));
    for word in ["SUMMARYMARK", "lexer", "compacted", "parser", "Done"] {
        let test = |line: &[u8]| line.windows(word.len()).any(|w| w == word.as_bytes());
        common::check_matching(&codex, &path, &full, &test, word);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn decoded_again(codex: &decode_codex::Codex, path: &std::path::Path) -> history_core::Decoded {
    common::try_decode(codex, path).1.unwrap()
}
