//! Claude Code 2.1.78–2.1.207 through the CLI (formats/claude.md §13), over a root that mixes
//! the sessions of `fixtures/claude-2026` with the older ones of `fixtures/claude`: what searches,
//! pages and `read` show of each rule (a table of fixture sessions; the rules themselves are
//! decode-claude's), and an overview and a search over old and new versions together.

use crate::claude::{shows, Search, Shown, SEARCH, SHOWN};
use crate::common::{fixtures, Roots, Run};
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
