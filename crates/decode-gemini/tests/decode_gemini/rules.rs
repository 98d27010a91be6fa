//! One test per replay rule of the Gemini CLI format, each over the fixture written for it.

use decode_gemini::Gemini;
use history_core::{Role, Transcript};

use crate::common;

fn gemini() -> Gemini {
    Gemini::new(common::home())
}

fn texts(id: &str) -> Vec<(u64, u32, Role, String)> {
    let (events, _) = common::decode(&gemini(), id);
    events
        .into_iter()
        .map(|e| (e.seq, e.part, e.role, e.text))
        .collect()
}

fn count(events: &[(u64, u32, Role, String)], text: &str) -> usize {
    events.iter().filter(|e| e.3 == text).count()
}

#[test]
fn a_message_written_twice_is_shown_once_from_its_last_write() {
    let events = texts("replayed-upserts");
    assert_eq!(count(&events, "Listing the files now."), 1);
    // The second write (line 8) carries the tool calls: every event of the reply is read there.
    let reply: Vec<_> = events.iter().filter(|e| e.0 == 8).collect();
    assert!(reply.iter().any(|e| e.3.starts_with("run_shell_command: ")));
    assert!(reply
        .iter()
        .any(|e| e.3.starts_with("Planning the listing: ")));
}

#[test]
fn tool_results_sent_back_as_a_user_turn_are_not_shown_twice() {
    let events = texts("replayed-upserts");
    let outputs = events
        .iter()
        .filter(|e| e.3.contains("Output: Cargo.toml"))
        .count();
    assert_eq!(outputs, 1);
    assert_eq!(count(&events, "File not found: missing.txt"), 1);
    // The functionResponse-only user record (line 9) yields nothing.
    assert!(events.iter().all(|e| e.0 != 9));
}

#[test]
fn roles_of_the_session_context_prompts_replies_tools_and_notices() {
    let (events, _) = common::decode(&gemini(), "replayed-upserts");
    let role_of = |text: &str| {
        events
            .iter()
            .find(|e| e.text.starts_with(text))
            .map(|e| (e.role, e.kind.as_str()))
            .unwrap_or_else(|| panic!("no event {text:?}"))
    };
    assert_eq!(role_of("<session_context>"), (Role::Context, "meta"));
    assert_eq!(role_of("What files"), (Role::User, "message"));
    assert_eq!(
        role_of("Planning the listing"),
        (Role::Assistant, "reasoning")
    );
    assert_eq!(role_of("Listing the files"), (Role::Assistant, "message"));
    assert_eq!(role_of("run_shell_command: "), (Role::Tool, "tool_call"));
    assert_eq!(role_of("<untrusted_context>"), (Role::Tool, "tool_output"));
    assert_eq!(role_of("File not found"), (Role::Tool, "tool_error"));
    assert_eq!(role_of("Request cancelled."), (Role::Context, "info"));
    assert_eq!(role_of("Approaching"), (Role::Context, "warning"));
    assert_eq!(role_of("API error"), (Role::Context, "error"));
}

#[test]
fn a_resume_repeating_the_history_keeps_the_lines_of_unchanged_messages() {
    let events = texts("resumed-same-file");
    let seq_of = |text: &str| events.iter().find(|e| e.3.starts_with(text)).map(|e| e.0);
    assert_eq!(seq_of("Summarise the README."), Some(3));
    // Changed by the full-history `$set` on line 9: read from there.
    assert_eq!(
        seq_of("The README describes a history reader (masked"),
        Some(9)
    );
    assert_eq!(count(&events, "The README describes a history reader."), 0);
    assert_eq!(seq_of("And the licence?"), Some(10));
    // The stub's context (line 7) is replaced by the history's, unchanged since line 2.
    let contexts: Vec<_> = events.iter().filter(|e| e.2 == Role::Context).collect();
    assert_eq!(contexts.len(), 1);
    assert_eq!(contexts[0].0, 2);
    // In the list's order, which is the order of the lines.
    let seqs: Vec<_> = events.iter().map(|e| e.0).collect();
    assert_eq!(seqs, [2, 3, 9, 10, 11]);
}

#[test]
fn a_rewind_drops_the_message_and_all_after_it() {
    let events = texts("rewound-to-first");
    assert_eq!(count(&events, "Make it about the language instead."), 0);
    assert_eq!(count(&events, "Borrowed, never owned."), 0);
    assert_eq!(count(&events, "Iron flakes to red."), 1);
    assert_eq!(count(&events, "Crates in the hold sail."), 1);
}

#[test]
fn a_rewind_to_an_unknown_id_clears_the_list_with_a_notice() {
    let (events, decoded) = common::decode(&gemini(), "rewind-unknown-clears");
    let texts: Vec<_> = events.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["Kept prompt after the clear."]);
    assert!(decoded.notices.iter().any(|n| n.contains("line 4 rewinds")));
}

#[test]
fn a_resume_stub_is_not_a_session_of_its_own() {
    let files: Vec<_> = gemini()
        .discover()
        .into_iter()
        .filter(|f| f.key.id == "stubbed-resume")
        .collect();
    assert_eq!(files.len(), 1);
    assert!(files[0]
        .path
        .ends_with("session-2026-05-01T13-00-stubbed-.jsonl"));
}

#[test]
fn a_legacy_json_is_read_and_a_migrated_jsonl_wins_over_it() {
    let g = gemini();
    let legacy = common::file(&g, "legacy-only");
    let (events, decoded) = common::decode_file(&g, &legacy);
    assert_eq!(
        events.first().map(|e| (e.seq, e.text.as_str())),
        Some((2, "Rename the crate."))
    );
    assert!(events.iter().any(|e| e.text.starts_with("replace: ")));
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/work/old-project"));
    let migrated = common::file(&g, "migrated-legacy");
    assert_eq!(migrated.path.extension().unwrap(), "jsonl");
    let (events, _) = common::decode_file(&g, &migrated);
    assert_eq!(events.last().unwrap().text, "A prompt after the migration.");
}

#[test]
fn a_subagent_names_its_parent_and_cannot_be_resumed() {
    let g = gemini();
    let child = common::file(&g, "sub-generalist-1");
    let (events, decoded) = common::decode_file(&g, &child);
    assert_eq!(decoded.meta.parent.as_deref(), Some("gemini:with-subagent"));
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/work/demo"));
    assert!(events
        .iter()
        .any(|e| e.text.contains("There are 3 TODO comments.")));
    assert_eq!(g.resume(&child), None);
    let parent = common::file(&g, "with-subagent");
    let resume = g.resume(&parent).unwrap();
    assert_eq!(resume.argv, ["gemini", "--resume", "with-subagent"]);
    assert_eq!(resume.cwd.as_deref(), Some("/work/demo"));
}

#[test]
fn damaged_lines_are_skipped_with_notices() {
    let (events, decoded) = common::decode(&gemini(), "damaged-lines");
    let texts: Vec<_> = events.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(
        texts,
        ["A prompt before the damage.", "A reply after the damage."]
    );
    assert!(decoded
        .notices
        .iter()
        .any(|n| n.contains("skipped 2 unreadable lines (3, 4)")));
    assert!(decoded
        .notices
        .iter()
        .any(|n| n.contains("last line (6) is incomplete")));
}

#[test]
fn display_content_is_what_was_typed() {
    let (events, _) = common::decode(&gemini(), "display-content");
    let find = |text: &str| {
        events
            .iter()
            .find(|e| e.text.starts_with(text))
            .map(|e| (e.role, e.kind.as_str()))
    };
    assert_eq!(find("Explain @notes.md"), Some((Role::User, "message")));
    // The prompt as sent, with the file's contents, is injected context.
    let expanded = events
        .iter()
        .find(|e| e.text.contains("remember the milk"))
        .unwrap();
    assert_eq!(expanded.role, Role::Context);
    // A tool's answer shown in place of the words the CLI sent.
    assert_eq!(find("Strategic Intent"), Some((Role::Tool, "tool_output")));
    assert_eq!(
        find("System: Please continue."),
        Some((Role::Context, "meta"))
    );
    // A slash command typed is the person's.
    assert_eq!(find("/compress"), Some((Role::User, "message")));
}

#[test]
fn files_that_are_not_recordings_are_not_sessions() {
    let ids: Vec<_> = gemini().discover().into_iter().map(|f| f.key.id).collect();
    assert_eq!(ids.len(), 12, "{ids:?}");
}

#[test]
fn the_default_home() {
    let env = |k: &str| match k {
        "HOME" => Some("/home/me".into()),
        _ => None,
    };
    assert_eq!(
        decode_gemini::default_root(env),
        Some("/home/me/.gemini".into())
    );
    let env = |k: &str| match k {
        "HOME" => Some("/home/me".into()),
        "GEMINI_CLI_HOME" => Some("/srv/g".into()),
        _ => None,
    };
    assert_eq!(
        decode_gemini::default_root(env),
        Some("/srv/g/.gemini".into())
    );
}

#[test]
fn a_history_written_again_in_the_model_s_form_shows_each_result_once() {
    let (events, _) = common::decode(&gemini(), "resumed-model-form");
    let shown: Vec<_> = events
        .iter()
        .map(|e| (e.seq, e.role, e.kind.as_str(), e.text.as_str()))
        .collect();
    let outputs = shown
        .iter()
        .filter(|e| e.3 == "Output: hi from the shell")
        .count();
    assert_eq!(outputs, 1, "{shown:?}");
    assert!(shown.contains(&(
        11,
        Role::Assistant,
        "reasoning",
        "Greeting through the shell."
    )));
    assert!(shown.contains(&(11, Role::Tool, "tool_call", "run_shell_command: echo hi")));
    assert_eq!(shown.last().map(|e| e.3), Some("And again?"));
}
