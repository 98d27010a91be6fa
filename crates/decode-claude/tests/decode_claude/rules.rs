//! The decoding rules, decoded through the `Transcript` trait: a table of the hand-written
//! fixture sessions of `fixtures/claude` and `fixtures/claude-2026` (formats/claude.md, §13 for
//! Claude Code 2.1.78–2.1.207) and the two real samples, one test a row, each row what decoding
//! its session must give. What the command shows of the same sessions (pages, searches, `read`)
//! is tested in history-cli's `claude` and `claude_2026` modules, mostly under the same names.

use history_core::{Event, Role};
use serde_json::Value;

use crate::common::{decode, discover, fixtures, roles, Session};

/// What decoding one fixture session must give: a row of the table below, checked by [`check`].
struct Rule {
    /// The session: its id, or the start of it.
    session: &'static str,
    /// `seq role:kind` of every event on the selected branch, in order; empty: not checked.
    events: &'static [&'static str],
    /// Why the events are these, where that is not plain.
    why: &'static str,
    /// `(i, text)`: the text of the `i`th event on the branch.
    texts: &'static [(usize, &'static str)],
    /// Words of each notice decoding gives, one entry a notice; empty: decoding gives none.
    notices: &'static [&'static str],
    /// What else holds of the session.
    more: fn(&Session),
}

/// A row that checks nothing but that the session decodes without a notice.
const RULE: Rule = Rule {
    session: "",
    events: &[],
    why: "",
    texts: &[],
    notices: &[],
    more: |_| {},
};

/// Decodes the row's session and checks each of the row's fields.
fn check(rule: Rule) {
    let s = decode(rule.session);
    if !rule.events.is_empty() {
        assert_eq!(roles(&s.branch), rule.events, "{}", rule.why);
    }
    for &(i, text) in rule.texts {
        assert_eq!(s.branch[i].text, text, "event {i}: {:?}", s.branch[i]);
    }
    let notices = &s.decoded.notices;
    assert_eq!(notices.len(), rule.notices.len(), "{notices:?}");
    for (notice, words) in notices.iter().zip(rule.notices) {
        assert!(notice.contains(words), "{words:?} in {notice:?}");
    }
    (rule.more)(&s);
}

/// Every event streamed lies on the selected branch: nothing is abandoned.
fn all_on_branch(s: &Session) {
    for (seq, on) in s.marks() {
        assert!(on, "seq {seq} is off the branch");
    }
}

/// `(seq, role, kind, tool, text)` of an event.
fn ev(e: &Event) -> (u64, Role, &str, Option<&str>, &str) {
    (e.seq, e.role, &e.kind, e.tool.as_deref(), &e.text)
}

/// One line per event: `seq role:kind [tool] | text`, the text cut to 70 characters.
fn digest(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        let text: String = e.text.replace('\n', "⏎").chars().take(70).collect();
        let tool = e.tool.as_ref().map_or(String::new(), |t| format!(" [{t}]"));
        out.push_str(&format!("{} {}:{}{tool} | {text}\n", e.seq, e.role, e.kind));
    }
    out
}

/// The 2.1.207 sample's session id (its lines' `sessionId`), which its file is named after.
const SAMPLE: &str = "1dd4a314-7632-4908-9be1-1a43cdb074a2";

// ----- fixtures/claude -------------------------------------------------------------------------

#[test]
fn abandoned_branches_leave_holes() {
    check(Rule {
        session: "abandoned-branch",
        events: &[
            "2 user:message",
            "3 assistant:message",
            "6 user:message",
            "7 assistant:message",
        ],
        ..RULE
    });
}

#[test]
fn all_branches_shows_a_rewind_marked() {
    check(Rule {
        session: "abandoned-branch",
        more: |s| {
            assert_eq!(
                s.marks(),
                [
                    (2, true),
                    (3, true),
                    (4, false),
                    (5, false),
                    (6, true),
                    (7, true)
                ]
            );
        },
        ..RULE
    });
}

#[test]
fn compaction_boundary_is_crossed() {
    check(Rule {
        session: "compaction-across-boundary",
        events: &[
            "1 user:message",
            "2 assistant:message",
            "3 context:summary",
            "4 context:summary",
            "5 user:message",
            "6 assistant:message",
        ],
        more: |s| {
            let texts = s.texts();
            assert!(texts.iter().any(|t| t.contains("PRECOMPACT")));
            assert!(texts.iter().any(|t| t.contains("POSTCOMPACT")));
            assert!(texts
                .iter()
                .any(|t| t.starts_with("This session is being continued")));
        },
        ..RULE
    });
}

#[test]
fn parallel_tool_results_stay_on_the_branch() {
    check(Rule {
        session: "parallel-tool-results",
        events: &[
            "1 user:message",
            "2 tool:tool_call",
            "3 tool:tool_call",
            "4 tool:tool_output",
            "5 tool:tool_output",
            "7 assistant:message",
        ],
        ..RULE
    });
    // The real sample: two Task calls of one response, the conversation going on from the first
    // call's result; the second call and its result still belong.
    check(Rule {
        session: "70fc6d83",
        more: |s| {
            let seqs: Vec<u64> = s.branch.iter().map(|e| e.seq).collect();
            for seq in [11, 12, 13, 14, 15, 16] {
                assert!(seqs.contains(&seq), "seq {seq} missing from {seqs:?}");
            }
        },
        ..RULE
    });
}

#[test]
fn attachment_and_progress_leaves_are_not_preferred() {
    check(Rule {
        session: "attachment-leaf",
        more: |s| {
            let texts = s.texts();
            assert!(texts.contains(&"Tests pass."), "{texts:?}");
            assert!(!texts.iter().any(|t| t.contains("HOOKCONTEXT")));
        },
        ..RULE
    });
}

#[test]
fn a_cut_last_line_is_skipped_with_a_notice() {
    check(Rule {
        session: "truncated-last-line",
        events: &["1 user:message", "2 assistant:message"],
        texts: &[(0, "Write the report"), (1, "Report written.")],
        notices: &["last line (3) is incomplete"],
        ..RULE
    });
}

#[test]
fn unreadable_lines_are_skipped_with_a_notice() {
    check(Rule {
        session: "non-json-line",
        events: &["1 user:message", "5 assistant:message", "7 user:message"],
        texts: &[
            (0, "First question"),
            (1, "First answer."),
            (2, "Second question"),
        ],
        notices: &["skipped 4 unreadable lines"],
        ..RULE
    });
}

#[test]
fn lone_surrogates_are_repaired_and_out_of_range_numbers_refused() {
    check(Rule {
        session: "lone-surrogate-and-odd-values",
        events: &["1 user:message", "2 assistant:message"],
        texts: &[
            (0, "Show the banner"),
            (1, "Banner: CUTEMOJI \u{FFFD} then the rest"),
        ],
        notices: &["skipped 1 unreadable line (3)"],
        ..RULE
    });
}

#[test]
fn unknown_types_are_tolerated_and_titles_kept() {
    check(Rule {
        session: "unknown-line-types",
        more: |s| assert!(s.texts().contains(&"Known text after an unknown block.")),
        ..RULE
    });
}

#[test]
fn a_missing_parent_is_a_notice() {
    check(Rule {
        session: "dangling-parent",
        events: &["1 user:message", "2 assistant:message"],
        notices: &["not in this file"],
        ..RULE
    });
}

#[test]
fn subagent_stores_and_legacy_agent_files_are_not_sessions() {
    let ids: Vec<String> = discover().into_iter().map(|f| f.key.id).collect();
    assert!(ids.contains(&"sidechain-lines".to_string()), "{ids:?}");
    assert!(!ids.iter().any(|i| i.contains("agent-")), "{ids:?}");
}

// ----- fixtures/claude-2026: Claude Code 2.1.78–2.1.207 ----------------------------------------

#[test]
fn queued_commands_typed_in_prompt_mode_are_user() {
    check(Rule {
        session: "queued-command-prompt",
        events: &[
            "1 user:message",
            "2 tool:tool_call",
            "4 tool:tool_output",
            "6 user:message",
            "7 user:message",
            "8 assistant:message",
        ],
        why: "the queue-operation lines (3, 5) are no events",
        texts: &[
            (3, "also run the QUEUEPROMPT tests"),
            (4, "and lint, QUEUEPROMPT blocks"),
        ],
        ..RULE
    });
}

#[test]
fn task_notifications_and_other_queued_modes_are_context() {
    check(Rule {
        session: "queued-command-task-notification",
        events: &[
            "1 user:message",
            "2 tool:tool_call",
            "3 tool:tool_output",
            "4 assistant:message",
            "5 context:meta",
            "6 context:meta",
            "7 context:meta",
            "8 context:meta",
            "9 assistant:message",
        ],
        more: |s| {
            let all = &s.branch;
            assert!(all[4].text.starts_with("<task-notification>"));
            assert_eq!(
                all[7].text, "TASKNOTE posted by another process",
                "a prompt-mode command from a peer process is not typed text"
            );
            assert!(all[4].text.contains("npm run TASKNOTE"));
        },
        ..RULE
    });
}

#[test]
fn metadata_lines_before_and_between_turns_are_no_events_and_name_the_session() {
    check(Rule {
        session: "metadata-lines-first",
        events: &[
            "8 user:message",
            "9 assistant:message",
            "15 user:message",
            "16 assistant:message",
        ],
        more: |s| {
            let meta = &s.decoded.meta;
            assert_eq!(meta.title.as_deref(), Some("METAFIRST custom title"));
            assert_eq!(meta.cwd.as_deref(), Some("/w/new"));
            assert_eq!(
                meta.git_branch.as_deref(),
                Some("feature/metafirst"),
                "the branch the session last wrote on"
            );
        },
        ..RULE
    });
}

#[test]
fn snake_case_session_ids_origin_and_prompt_fields_are_tolerated() {
    check(Rule {
        session: "session-id-snake-case",
        events: &[
            "1 user:message",
            "2 assistant:message",
            "3 user:message",
            "4 assistant:message",
        ],
        texts: &[(2, "SNAKECASE follow-up")],
        ..RULE
    });
}

#[test]
fn a_compaction_that_kept_messages_holds_them_once_with_its_boundary_and_summary() {
    check(Rule {
        session: "compaction-preserved-segment",
        events: &[
            "1 user:message",
            "2 assistant:message",
            "3 user:message",
            "4 assistant:message",
            "5 context:summary",
            "6 context:summary",
            "7 user:message",
            "8 assistant:message",
        ],
        more: all_on_branch,
        ..RULE
    });
}

#[test]
fn a_compaction_whose_logical_parent_is_an_away_summary_keeps_the_history_before_it() {
    check(Rule {
        session: "compaction-away-summary",
        events: &[
            "1 user:message",
            "2 assistant:message",
            "4 context:meta",
            "5 context:summary",
            "6 context:summary",
            "7 user:command",
            "8 context:meta",
            "9 user:message",
            "10 assistant:message",
        ],
        why: "the turn_duration line (3) has no text; the /compact the person typed is a command, its output context",
        more: |s| {
            assert!(s.branch[2].text.starts_with("Goal: pick an AWAYSUM option"));
            all_on_branch(s);
        },
        ..RULE
    });
}

#[test]
fn new_attachment_types_are_context_or_nothing() {
    check(Rule {
        session: "new-attachment-types",
        more: |s| {
            let all = &s.branch;
            let (first, last) = (&all[0], &all[all.len() - 1]);
            assert_eq!((first.seq, first.role), (1, Role::User));
            assert_eq!((last.seq, last.role), (20, Role::Assistant));
            let middle = &all[1..all.len() - 1];
            assert!(
                middle.iter().all(|e| e.role == Role::Context),
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
        },
        ..RULE
    });
}

#[test]
fn new_system_subtypes_are_context() {
    check(Rule {
        session: "new-system-subtypes",
        events: &[
            "1 user:message",
            "2 assistant:message",
            "3 context:meta",
            "5 context:meta",
            "6 context:meta",
            "7 context:meta",
            "8 context:meta",
            "9 user:message",
            "10 assistant:message",
        ],
        why: "turn_duration (4) carries no text",
        texts: &[
            (2, "NEWSYS stop hook context"),
            (3, "NEWSYS informational notice"),
            (6, "NEWSYS future subtype"),
        ],
        ..RULE
    });
}

#[test]
fn thinking_blocks_without_their_text_are_no_events() {
    check(Rule {
        session: "thinking-omitted",
        events: &["1 user:message", "3 assistant:message"],
        ..RULE
    });
}

#[test]
fn mcp_tool_calls_and_results_render_like_other_tools() {
    check(Rule {
        session: "mcp-tools",
        more: |s| {
            let all = &s.branch;
            let query = Some("mcp__context7__query-docs");
            assert_eq!(
                ev(&all[1]),
                (
                    2,
                    Role::Tool,
                    "tool_call",
                    query,
                    "mcp__context7__query-docs: MCPDOC hooks\nlibraryId: /anthropics/claude-code"
                )
            );
            assert_eq!(
                ev(&all[2]),
                (
                    3,
                    Role::Tool,
                    "tool_output",
                    query,
                    r#"{"result":"MCPDOC hooks run on events"}"#
                ),
                "the result's content once; its mcpMeta.structuredContent repeats it"
            );
            assert_eq!(
                (all[4].kind.as_str(), all[4].tool.as_deref()),
                ("tool_error", Some("mcp__deepwiki__ask_question"))
            );
            assert_eq!(all[5].text, "Hooks run on events.");
        },
        ..RULE
    });
}

#[test]
fn images_in_tool_results_are_placeholders() {
    check(Rule {
        session: "tool-result-image",
        texts: &[(2, "TOOLIMG screenshot taken\n[image]")],
        more: |s| {
            assert_eq!(
                s.branch[2].tool.as_deref(),
                Some("mcp__claude-in-chrome__computer")
            );
        },
        ..RULE
    });
}

#[test]
fn the_2_1_207_sample_decodes_with_every_event_in_its_role() {
    check(Rule {
        session: SAMPLE,
        more: |s| {
            let raw = std::fs::read_to_string(fixtures().join(format!(
                "claude-2026/projects/-sample-2-1-207/{SAMPLE}.jsonl"
            )))
            .unwrap();
            let lines: Vec<Value> = raw
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            for e in &s.branch {
                let line = &lines[e.seq as usize - 1];
                let attachment = line["attachment"]["type"].as_str();
                let typed = match line["type"].as_str() {
                    Some("user") => line["origin"]["kind"] == "human",
                    Some("attachment") => line["attachment"]["commandMode"] == "prompt",
                    _ => false,
                };
                assert_eq!(e.role == Role::User, typed, "{e:?}");
                if attachment.is_some_and(|a| a != "queued_command") {
                    assert_eq!(e.role, Role::Context, "{e:?}");
                }
                if line["type"] == "system" {
                    assert_eq!(e.role, Role::Context, "{e:?}");
                }
            }
            let queued = s
                .branch
                .iter()
                .filter(|e| lines[e.seq as usize - 1]["attachment"]["type"] == "queued_command");
            assert_eq!(queued.count(), 8);
            let meta = &s.decoded.meta;
            assert_eq!(
                meta.cwd.as_deref(),
                Some("/Users/ta93abe/Developer/github.com/ta93abe/me")
            );
            assert_eq!(
                meta.git_branch.as_deref(),
                Some("feature/404-playground-agent-docs")
            );
            assert_eq!(
                meta.title.as_deref(),
                Some("emdash でコンテンツ Git 管理を検討")
            );
            insta::assert_snapshot!("claude_2026_sample", digest(&s.branch));
        },
        ..RULE
    });
}

#[test]
fn a_message_another_agent_or_a_task_sent_is_context_not_typed() {
    use history_core::Transcript;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("-w-peer");
    std::fs::create_dir_all(&project).unwrap();
    let line = |uuid: &str,
                parent: Option<&str>,
                kind: &str,
                content: Value,
                origin: Option<Value>| {
        let mut l = serde_json::json!({
            "type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
            "sessionId": "peer-origin", "cwd": "/w/peer", "timestamp": "2026-10-01T10:00:00.000Z",
            "message": {"role": kind, "content": content},
        });
        if let Some(origin) = origin {
            l["origin"] = origin;
        }
        l.to_string()
    };
    let text = |t: &str| serde_json::json!([{"type": "text", "text": t}]);
    let lines = [
        line(
            "u1",
            None,
            "user",
            Value::from("Ship the release notes"),
            Some(serde_json::json!({"kind": "human"})),
        ),
        line("a1", Some("u1"), "assistant", text("Drafting them."), None),
        line(
            "u2",
            Some("a1"),
            "user",
            Value::from("reviewer: the changelog misses 2.3"),
            Some(
                serde_json::json!({"kind": "peer", "from": "reviewer", "name": "reviewer", "senderTaskId": "t9", "body": "the changelog misses 2.3"}),
            ),
        ),
        line("a2", Some("u2"), "assistant", text("Adding 2.3."), None),
        line(
            "u3",
            Some("a2"),
            "user",
            Value::from("Background task finished"),
            Some(serde_json::json!({"kind": "task-notification"})),
        ),
        line("a3", Some("u3"), "assistant", text("Noted."), None),
    ];
    std::fs::write(project.join("peer-origin.jsonl"), lines.join("\n") + "\n").unwrap();
    let claude = decode_claude::Claude::new(dir.path());
    let file = claude.discover().pop().unwrap();
    let mut events = Vec::new();
    claude.decode(&file, &mut |e| events.push(e), None).unwrap();
    let of = |t: &str| {
        let e = events.iter().find(|e| e.text.contains(t)).unwrap();
        (e.role, e.kind.as_str())
    };
    assert_eq!(of("Ship the release"), (Role::User, "message"));
    assert_eq!(of("changelog misses"), (Role::Context, "message"));
    assert_eq!(of("Background task"), (Role::Context, "message"));
}
