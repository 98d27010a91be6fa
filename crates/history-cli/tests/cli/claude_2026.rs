//! Claude Code 2.1.78–2.1.207 through the CLI (formats/claude.md §13), over a root that mixes
//! the sessions of `fixtures/claude-2026` with the older ones of `fixtures/claude`: what searches,
//! pages and `read` show of each rule (a table of fixture sessions; the rules themselves are
//! decode-claude's), and an overview and a search over old and new versions together.

use crate::claude::{shows, Search, Shown, SEARCH, SHOWN};
use crate::common::{every_role, fixtures, Roots, Run};
use insta::assert_snapshot;

/// The 2.1.207 sample's session id (its lines' `sessionId`), which its copy is named after.
const SAMPLE: &str = "1dd4a314-7632-4908-9be1-1a43cdb074a2";

fn roots() -> Roots {
    Roots::with_extra("claude", &fixtures().join("claude-2026/projects"))
}

fn claude(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("claude", args)
}

#[test]
fn queued_commands_typed_in_prompt_mode_are_user() {
    shows(
        &roots(),
        Shown {
            session: "queued-command-prompt",
            browse: &["1 user", "6 user", "7 user", "8 assistant"],
            why: "queued prompts are dialogue",
            searches: &[Search {
                query: "QUEUEPROMPT",
                role: Some("user"),
                hits: &["1 user", "6 user", "7 user"],
                ..SEARCH
            }],
            ..SHOWN
        },
    );
}

#[test]
fn task_notifications_and_other_queued_modes_are_context() {
    shows(
        &roots(),
        Shown {
            session: "queued-command-task-notification",
            searches: &[Search {
                query: "TASKNOTE",
                role: Some("user"),
                hits: &["1 user"],
                why: "only the person's own prompt is user",
                ..SEARCH
            }],
            more: |r| {
                let browse = claude(
                    r,
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
            },
            ..SHOWN
        },
    );
}

#[test]
fn metadata_lines_before_and_between_turns_are_no_events_and_name_the_session() {
    shows(
        &roots(),
        Shown {
            session: "metadata-lines-first",
            searches: &[Search {
                query: "METAFIRST",
                hits: &["8 user", "15 user"],
                why: "titles and last prompts are not events",
                ..SEARCH
            }],
            more: |r| {
                let read = claude(
                    r,
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
            },
            ..SHOWN
        },
    );
}

#[test]
fn a_compaction_that_kept_messages_holds_them_once_with_its_boundary_and_summary() {
    shows(
        &roots(),
        Shown {
            session: "compaction-preserved-segment",
            searches: &[Search {
                query: "Keep this KEPTSEG",
                hits: &["3 user"],
                why: "a kept message is shown once",
                ..SEARCH
            }],
            ..SHOWN
        },
    );
}

#[test]
fn thinking_blocks_without_their_text_are_no_events() {
    shows(
        &roots(),
        Shown {
            session: "thinking-omitted",
            browse: &["1 user", "3 assistant"],
            ..SHOWN
        },
    );
}

#[test]
fn mcp_tool_calls_and_results_render_like_other_tools() {
    shows(
        &roots(),
        Shown {
            session: "mcp-tools",
            more: |r| {
                let read = claude(r, &["read", "--session", "mcp-tools", "--seq", "2"]);
                assert!(
                    read.stdout
                        .contains("tool_call · mcp__context7__query-docs"),
                    "{}",
                    read.stdout
                );
            },
            ..SHOWN
        },
    );
}

#[test]
fn images_in_tool_results_are_placeholders() {
    shows(
        &roots(),
        Shown {
            session: "tool-result-image",
            searches: &[Search {
                everywhere: false,
                query: "[image]",
                hits: &["3 tool"],
                ..SEARCH
            }],
            ..SHOWN
        },
    );
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

// ----- Claude Code 2.1.232–2.1.332 (formats/claude.md §14), fixtures under `-w-232/` -----------

/// `(seq, role, kind, text)` of every item of a run.
fn items(run: &Run) -> Vec<(u64, String, String, String)> {
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["seq"].as_u64().unwrap(),
                i["role"].as_str().unwrap().to_string(),
                i["kind"].as_str().unwrap().to_string(),
                i["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every event of a session, whatever its role.
fn every_event(r: &Roots, session: &str) -> Vec<(u64, String, String, String)> {
    items(&claude(r, &every_role(session, &[])))
}

/// `seq role:kind` of each event.
fn roles_of(events: &[(u64, String, String, String)]) -> Vec<String> {
    events
        .iter()
        .map(|(seq, role, kind, _)| format!("{seq} {role}:{kind}"))
        .collect()
}

#[test]
fn a_message_another_agent_or_a_task_sent_is_context_not_typed() {
    shows(
        &roots(),
        Shown {
            session: "origin-peer-message",
            searches: &[
                Search {
                    query: "PEERMSG",
                    role: Some("user"),
                    hits: &["1 user"],
                    why: "only the person's own prompt is typed",
                    ..SEARCH
                },
                Search {
                    query: "PEERMSG changelog misses",
                    hits: &["3 context"],
                    why: "a peer's message (origin.kind peer) is context",
                    ..SEARCH
                },
                Search {
                    query: "PEERMSG background build",
                    hits: &["5 context"],
                    why: "a task notification (origin.kind task-notification) is context",
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn a_slash_command_the_person_typed_is_user_of_its_own_kind_and_its_output_context() {
    let r = roots();
    assert_eq!(
        roles_of(&every_event(&r, "slash-command-typed")),
        [
            "1 context:meta",
            "2 user:command",
            "3 context:meta",
            "4 user:command",
            "5 context:meta",
            "6 user:command",
            "7 context:meta",
            "8 assistant:message",
            "9 user:message",
            "10 assistant:message",
        ],
        "the caveat, a command's output and a skill's body are the harness's"
    );
    let typed: Vec<String> = every_event(&r, "slash-command-typed")
        .into_iter()
        .filter(|e| e.2 == "command")
        .map(|e| e.3)
        .collect();
    assert_eq!(
        typed,
        ["/model opus SLASHCMD", "/mcp", "/lore-commit"],
        "a command reads as typed, from a user line or a local_command system line"
    );
    let overview = claude(&r, &["list", "--limit", "60", "--json"]).json();
    let row = overview["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["session"] == "claude:slash-command-typed")
        .unwrap()
        .clone();
    assert_eq!(
        row["text"], "Now tag the SLASHCMD release",
        "a session is described by its first prompt, not a command: {row}"
    );
}

#[test]
fn copies_of_the_request_and_other_metadata_lines_are_no_events() {
    shows(
        &roots(),
        Shown {
            session: "api-request-copies",
            browse: &["2 user", "8 assistant"],
            searches: &[
                Search {
                    query: "APIBLOB",
                    hits: &["2 user", "8 assistant"],
                    why: "api-request-blob copies the prompt: it is shown once",
                    ..SEARCH
                },
                Search {
                    query: "APIBLOB system",
                    why: "the request's system prompt is a copy too",
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn an_encrypted_advisor_result_is_a_tool_event_that_says_so() {
    shows(
        &roots(),
        Shown {
            session: "advisor-encrypted-result",
            searches: &[
                Search {
                    query: "advisor_redacted_result",
                    hits: &["2 tool"],
                    ..SEARCH
                },
                Search {
                    query: "Sl2IM",
                    why: "the ciphertext is no text",
                    ..SEARCH
                },
            ],
            more: |r| {
                let events = every_event(r, "advisor-encrypted-result");
                assert_eq!(
                    roles_of(&events),
                    [
                        "1 user:message",
                        "2 tool:tool_call",
                        "2 tool:tool_output",
                        "2 assistant:message"
                    ]
                );
                assert_eq!(events[2].3, "[advisor_redacted_result: encrypted content]");
            },
            ..SHOWN
        },
    );
}

#[test]
fn attachments_of_2_1_232_are_context_or_nothing() {
    shows(
        &roots(),
        Shown {
            session: "attachments-2-1-232",
            searches: &[
                Search {
                    query: "Plan the ATTACH232 migration",
                    hits: &["1 user"],
                    why: "a prompt_snapshot copies the prompt: shown once",
                    ..SEARCH
                },
                Search {
                    query: "ATTACH232",
                    role: Some("context"),
                    hits: &["2 context", "6 context", "7 context", "8 context", "9 context", "12 context"],
                    why: "a reminder's text, memory, an edited file, skills and rendered text are injected",
                    ..SEARCH
                },
            ],
            more: |r| {
                let seqs: Vec<u64> = every_event(r, "attachments-2-1-232")
                    .iter()
                    .map(|e| e.0)
                    .collect();
                assert_eq!(
                    seqs,
                    [1, 2, 6, 7, 8, 9, 12, 14],
                    "auto_mode, date, model and remote_session_change carry no text"
                );
            },
            ..SHOWN
        },
    );
}

#[test]
fn the_agent_tool_is_a_tool_and_its_sub_agent_store_no_session() {
    shows(
        &roots(),
        Shown {
            session: "tool-named-agent",
            searches: &[
                Search {
                    query: "AGENTTOOL",
                    hits: &["1 user", "2 tool", "3 tool", "4 assistant"],
                    why: "the sub-agent's own file (and its meta.json) is no session",
                    ..SEARCH
                },
                Search {
                    query: "Agent: Review AGENTTOOL",
                    hits: &["2 tool"],
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn an_sdk_cli_file_shows_its_prompt_once_past_its_queue_and_hook_roots() {
    shows(
        &roots(),
        Shown {
            session: "sdk-cli-queue-roots",
            browse: &["5 user", "6 assistant"],
            searches: &[
                Search {
                    query: "SDKCLI checks",
                    hits: &["5 user", "6 assistant"],
                    why: "the queue operations are no events",
                    ..SEARCH
                },
                Search {
                    query: "SDKCLI hook",
                    why:
                        "a hook attachment that is a root of its own is not an ancestor of the leaf",
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn two_manual_compactions_keep_each_segment_once() {
    shows(
        &roots(),
        Shown {
            session: "compaction-two-manual",
            searches: &[
                Search {
                    query: "TWOCOMPACT task",
                    hits: &["1 user", "3 user", "10 user", "17 user"],
                    why: "a kept segment is shown once",
                    ..SEARCH
                },
                Search {
                    query: "TWOCOMPACT summary",
                    hits: &["6 context", "13 context"],
                    ..SEARCH
                },
            ],
            more: |r| {
                let commands: Vec<u64> = every_event(r, "compaction-two-manual")
                    .iter()
                    .filter(|e| e.2 == "command")
                    .map(|e| e.0)
                    .collect();
                assert_eq!(commands, [8, 15], "each /compact the person typed");
            },
            ..SHOWN
        },
    );
}
