//! The decoding rules, one test each, over the hand-written fixtures and the real sample.

mod common;

use common::{decode, rows, rule};
use history_core::prefilter::word_missing_from_line;
use history_core::{Corpus, Event, Keep, Role, Transcript};

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
    assert_eq!(at(&events, 3)[0].role, Role::Context);
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
