//! Claude Code through the CLI: the overview and browse pages, what searches, pages and `read`
//! show of each decoding rule (a table of fixture sessions; the rules themselves are
//! decode-claude's), selectors, paging, budgets, errors.

use crate::common::{Roots, Run};
use insta::assert_snapshot;
use serde_json::Value;

fn claude(roots: &Roots, args: &[&str]) -> Run {
    roots.run_only("claude", args)
}

#[test]
fn overview_snapshot() {
    let r = Roots::new();
    let run = claude(&r, &["list"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("claude_overview", run.shown());
    let json = claude(&r, &["list", "--json", "--limit", "3"]);
    assert_snapshot!("claude_overview_json", json.stdout);
}

#[test]
fn browse_every_fixture() {
    let r = Roots::new();
    let mut all = String::new();
    for id in [
        "abandoned-branch",
        "compaction-across-boundary",
        "parallel-tool-results",
        "sidechain-lines",
        "attachment-leaf",
        "json-escapes-unicode",
        "truncated-last-line",
        "non-json-line",
        "unknown-line-types",
        "dangling-parent",
        "meta-and-context",
        "lone-surrogate-and-odd-values",
        "70fc6d83-147d-4fdf-b015-bd67eeb11883",
    ] {
        let run = claude(
            &r,
            &[
                "list",
                "--session",
                &format!("claude:{id}"),
                "--limit",
                "50",
            ],
        );
        assert_eq!(run.code, 0, "{id}: {}", run.stderr);
        all.push_str(&format!("===== {id}\n{}", run.shown()));
    }
    assert_snapshot!("claude_browse_all", all);
}

#[test]
fn browse_json_snapshot() {
    let r = Roots::new();
    let run = claude(&r, &["list", "--session", "meta-and-context", "--json"]);
    assert_snapshot!("claude_browse_json", run.stdout);
}

/// What the command shows of one fixture session's decoding rule (the rule itself is
/// decode-claude's `rules` test of the same name): a row of the tables here and in
/// `claude_2026`, checked by [`shows`].
pub struct Shown {
    /// The session, its id without `claude:`.
    pub session: &'static str,
    /// `seq role` of every item a browse of it shows (`list --session`, the default roles);
    /// empty: not checked.
    pub browse: &'static [&'static str],
    /// Why the browse shows these.
    pub why: &'static str,
    /// Searches for its words and what they find.
    pub searches: &'static [Search],
    /// What else the command shows of it.
    pub more: fn(&Roots),
}

/// A search of a [`Shown`] session's words.
pub struct Search {
    /// `--session`: every session, or the one of the row.
    pub everywhere: bool,
    /// `--query`.
    pub query: &'static str,
    /// `--role`, where it narrows the search.
    pub role: Option<&'static str>,
    /// `seq role` of every hit, oldest first, each in the row's session; empty: nothing is found
    /// (exit code 1).
    pub hits: &'static [&'static str],
    /// Why it finds these.
    pub why: &'static str,
}

/// A row that shows nothing in particular.
pub const SHOWN: Shown = Shown {
    session: "",
    browse: &[],
    why: "",
    searches: &[],
    more: |_| {},
};

/// A search of every session for `query`, with any role.
pub const SEARCH: Search = Search {
    everywhere: true,
    query: "",
    role: None,
    hits: &[],
    why: "",
};

/// Runs the row's browse and searches over `roots`, Claude's alone, and checks what they show.
pub fn shows(roots: &Roots, row: Shown) {
    let id = format!("claude:{}", row.session);
    let seen = |run: &Run| -> Vec<String> {
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let page = run.json();
        let items = page["items"].as_array().unwrap();
        for item in items {
            assert_eq!(item["session"], id.as_str(), "{item}");
        }
        items
            .iter()
            .map(|i| format!("{} {}", i["seq"], i["role"].as_str().unwrap()))
            .collect()
    };
    if !row.browse.is_empty() {
        let run = claude(roots, &["list", "--session", &id, "--json"]);
        assert_eq!(seen(&run), row.browse, "{}", row.why);
    }
    for search in row.searches {
        let mut args = vec!["list", "--session", "*", "--query", search.query, "--json"];
        if !search.everywhere {
            args[2] = &id;
        }
        if let Some(role) = search.role {
            args.extend(["--role", role]);
        }
        let run = claude(roots, &args);
        if search.hits.is_empty() {
            assert_eq!(
                run.code, 1,
                "{args:?} found ({}): {}",
                search.why, run.stdout
            );
        } else {
            assert_eq!(seen(&run), search.hits, "{args:?}: {}", search.why);
        }
    }
    (row.more)(roots);
}

#[test]
fn abandoned_branches_leave_holes() {
    shows(
        &Roots::new(),
        Shown {
            session: "abandoned-branch",
            searches: &[Search {
                query: "abandoned",
                why: "the abandoned branch is not searched",
                ..SEARCH
            }],
            ..SHOWN
        },
    );
}

#[test]
fn all_branches_shows_a_rewind_marked() {
    shows(
        &Roots::new(),
        Shown {
            session: "abandoned-branch",
            more: |r| {
                let read = claude(
                    r,
                    &[
                        "read",
                        "--session",
                        "abandoned-branch",
                        "--seq",
                        "4",
                        "--json",
                    ],
                )
                .json();
                assert_eq!(
                    read["item"]["on_active_branch"], false,
                    "an abandoned line can still be read by seq"
                );
            },
            ..SHOWN
        },
    );
}

#[test]
fn parallel_tool_results_stay_on_the_branch() {
    shows(
        &Roots::new(),
        Shown {
            session: "parallel-tool-results",
            searches: &[Search {
                query: "SIBLINGRESULT",
                hits: &["5 tool"],
                ..SEARCH
            }],
            ..SHOWN
        },
    );
}

#[test]
fn sidechains_subagent_stores_and_legacy_agents_are_not_dialogue() {
    shows(
        &Roots::new(),
        Shown {
            session: "sidechain-lines",
            searches: &[
                Search {
                    query: "SIDECHAIN",
                    ..SEARCH
                },
                Search {
                    query: "SUBAGENTSTORE",
                    ..SEARCH
                },
                Search {
                    query: "LEGACYAGENT",
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn queries_see_decoded_json_escapes_and_fold_case() {
    let r = Roots::new();
    for q in [
        "CAFÉ",
        "line one\nline two",
        "say \"hi\"",
        "path a/b",
        "😀",
        "STRASSE",
        "5 k IS COLD",
        "οδοσ",
        "ΟΔΟΣ",
    ] {
        let run = claude(&r, &["list", "--session", "*", "--query", q, "--json"]);
        assert_eq!(run.code, 0, "query {q:?} missed");
        assert_eq!(
            run.json()["items"][0]["session"],
            "claude:json-escapes-unicode"
        );
    }
}

#[test]
fn damaged_lines_give_events_and_a_notice() {
    shows(
        &Roots::new(),
        Shown {
            session: "non-json-line",
            more: |r| {
                let text = claude(r, &["list", "--session", "non-json-line"]);
                assert!(
                    text.stderr
                        .starts_with("notice: skipped 4 unreadable lines"),
                    "{}",
                    text.stderr
                );
                assert!(!text.stdout.contains("notice"), "{}", text.stdout);
            },
            ..SHOWN
        },
    );
}

#[test]
fn lone_surrogates_are_repaired_and_out_of_range_numbers_refused() {
    shows(
        &Roots::new(),
        Shown {
            session: "lone-surrogate-and-odd-values",
            searches: &[
                Search {
                    query: "cutemoji",
                    hits: &["2 assistant"],
                    ..SEARCH
                },
                Search {
                    query: "ODDNUMBER",
                    ..SEARCH
                },
            ],
            ..SHOWN
        },
    );
}

#[test]
fn a_file_without_a_leaf_is_unavailable() {
    let r = Roots::new();
    let run = claude(&r, &["list", "--session", "no-leaf"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(run.stderr.contains("history_unavailable") && run.stderr.contains("claude:no-leaf"));
    let json = claude(
        &r,
        &["read", "--session", "no-leaf", "--seq", "1", "--json"],
    );
    assert_eq!(json.code, 2);
    assert_eq!(json.json()["error"]["code"], "history_unavailable");
    assert_eq!(json.json()["error"]["session"], "claude:no-leaf");
    // In a wildcard it is skipped and counted.
    let all = claude(&r, &["list", "--json", "--limit", "100"]);
    assert!(all.json()["notice"]
        .as_str()
        .unwrap()
        .starts_with("1 session could not be loaded"));
}

#[test]
fn selectors_resolve_and_refuse() {
    let r = Roots::new();
    let amb = claude(&r, &["list", "--session", "4f2a", "--json"]);
    assert_eq!(amb.code, 2);
    assert_eq!(amb.json()["error"]["code"], "ambiguous_session");
    assert_eq!(
        amb.json()["error"]["candidates"].as_array().unwrap().len(),
        2
    );
    let unique = claude(&r, &["list", "--session", "claude:4f2a0c1e-1111", "--json"]);
    assert_eq!(
        unique.json()["session"],
        "claude:4f2a0c1e-1111-4000-8000-000000000001"
    );
    let unknown = claude(&r, &["list", "--session", "zzz"]);
    assert_eq!((unknown.code, unknown.stderr.lines().count()), (2, 1));
    assert!(unknown.stderr.contains("unknown_session"));
    let dsh = claude(&r, &["list", "--session", "dsh:abc", "--json"]);
    assert_eq!(dsh.json()["error"]["code"], "unknown_session");
    assert!(dsh.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("only inside their host"));
    let bad = claude(&r, &["list", "--session", "nope:abc", "--json"]);
    assert_eq!(bad.json()["error"]["code"], "invalid_session");
    let wild_read = claude(
        &r,
        &["read", "--session", "claude:*", "--seq", "1", "--json"],
    );
    assert_eq!(wild_read.json()["error"]["code"], "invalid_session");
    let glob = claude(&r, &["list", "--session", "claude:4f2a*", "--json"]);
    assert_eq!(glob.json()["items"].as_array().unwrap().len(), 2);
    let glob2 = claude(&r, &["list", "--session", "*:*-2222-*", "--json"]);
    assert_eq!(glob2.json()["items"].as_array().unwrap().len(), 1);
}

#[test]
fn bounds_and_usage_errors() {
    let r = Roots::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["list", "--session", "*", "--before-seq", "3"],
            "invalid_bounds",
        ),
        (
            &[
                "list",
                "--session",
                "abandoned-branch",
                "--before-seq",
                "3",
                "--after-seq",
                "1",
            ],
            "invalid_bounds",
        ),
        (&["list", "--since", "last tuesday"], "usage"),
        (&["list", "--limit", "-1"], "usage"),
        (&["list", "--role", "robot"], "usage"),
        (&["list", "--from", "middle"], "usage"),
        (&["list", "--bogus"], "usage"),
        (&["list", "--current", "nocolon"], "usage"),
        (
            &["list", "--since", "2026-03-02", "--until", "2026-03-01"],
            "usage",
        ),
        (
            &["list", "--since", "2026-03-01", "--until", "2026-03-01"],
            "usage",
        ),
        (
            &[
                "read",
                "--session",
                "abandoned-branch",
                "--seq",
                "2",
                "--offset-chars",
                "1000",
            ],
            "usage",
        ),
    ];
    for (args, code) in cases {
        let text = claude(&r, args);
        assert_eq!(text.code, 2, "{args:?}");
        assert_eq!(text.stderr.lines().count(), 1, "{args:?}: {}", text.stderr);
        assert!(text.stderr.contains(code), "{args:?}: {}", text.stderr);
        assert!(!text.stderr.contains("panicked"));
        let mut with_json = args.to_vec();
        with_json.push("--json");
        let json = claude(&r, &with_json);
        assert_eq!(json.code, 2);
        assert_eq!(json.json()["error"]["code"], *code, "{args:?}");
        assert!(json.stderr.is_empty());
    }
}

#[test]
fn the_current_session_is_implicit() {
    let r = Roots::new();
    let flag = claude(&r, &["list", "--current", "claude:abandoned-branch"]);
    assert!(flag.stdout.starts_with("seq 2 | user\n"), "{}", flag.stdout);
    let env = r.run_with(
        &["list", "--limit", "1"],
        &[("CLAUDE_CODE_SESSION_ID", "abandoned-branch")],
    );
    assert!(
        env.stdout.starts_with("seq 7 | assistant"),
        "{}",
        env.stdout
    );
    assert!(
        env.stdout
            .contains("→ older: notesoup-history list --before-seq 7 --limit 1\n"),
        "{}",
        env.stdout
    );
    let notesoup = r.run_with(
        &["list", "--json"],
        &[("NOTESOUP_CURRENT_SESSION", "claude:abandoned-branch")],
    );
    assert_eq!(notesoup.json()["session"], "claude:abandoned-branch");
    // Explicit targeting names the canonical session even for the current one.
    let explicit = r.run_with(
        &["list", "--session", "abandoned", "--limit", "1"],
        &[("CLAUDE_CODE_SESSION_ID", "abandoned-branch")],
    );
    assert!(explicit
        .stdout
        .starts_with("session claude:abandoned-branch | seq 7"));
}

#[test]
fn browse_pages_and_recipes_round_trip() {
    let r = Roots::new();
    let newest = claude(
        &r,
        &[
            "list",
            "--session",
            "meta-and-context",
            "--limit",
            "2",
            "--json",
        ],
    )
    .json();
    assert_eq!(newest["has_older"], true);
    assert_eq!(newest["has_newer"], false);
    let before = newest["older"]["before_seq"].as_u64().unwrap();
    let older = claude(
        &r,
        &[
            "list",
            "--session",
            "meta-and-context",
            "--limit",
            "2",
            "--before-seq",
            &before.to_string(),
            "--json",
        ],
    )
    .json();
    let newer_after = older["newer"]["after_seq"].as_u64().unwrap();
    assert!(newer_after < before);
    // after_seq defaults to the oldest end.
    let after = claude(
        &r,
        &[
            "list",
            "--session",
            "meta-and-context",
            "--limit",
            "1",
            "--after-seq",
            "0",
            "--json",
        ],
    );
    // The oldest visible event is the /model the person typed (a slash command is typed).
    assert_eq!(after.positions(), vec![(4, 0)]);
    let explicit = claude(
        &r,
        &[
            "list",
            "--session",
            "meta-and-context",
            "--limit",
            "1",
            "--after-seq",
            "0",
            "--from",
            "newest",
            "--json",
        ],
    );
    // The newest is the /mcp the person typed.
    assert_eq!(explicit.positions(), vec![(12, 0)]);
    // An expand recipe lists exactly its run (the tool calls before seq 10).
    let fold = &newest["items"][0]["folded_before"];
    let expand = &fold["expand"];
    let mut args = vec![
        "list".to_string(),
        "--session".into(),
        expand["session"].as_str().unwrap().into(),
        "--after-seq".into(),
        expand["after_seq"].to_string(),
        "--limit".into(),
        expand["limit"].to_string(),
        "--json".into(),
    ];
    for role in expand["roles"].as_array().unwrap() {
        args.push("--role".into());
        args.push(role.as_str().unwrap().into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = claude(&r, &args);
    let seqs: Vec<u64> = run.positions().iter().map(|p| p.0).collect();
    assert_eq!(seqs.len() as u64, fold["count"].as_u64().unwrap());
    assert_eq!(seqs.first(), fold["first_seq"].as_u64().as_ref());
    assert_eq!(seqs.last(), fold["last_seq"].as_u64().as_ref());
}

#[test]
fn searches_merge_by_time_and_limit_from_either_end() {
    let r = Roots::new();
    let all = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--limit",
            "100",
            "--json",
        ],
    )
    .json();
    let items = all["items"].as_array().unwrap();
    let keys: Vec<(String, String, u64)> = items
        .iter()
        .map(|i| {
            (
                i["timestamp"].as_str().unwrap_or("").to_string(),
                i["session"].as_str().unwrap().to_string(),
                i["seq"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        keys, sorted,
        "merged oldest first, ties by session then seq"
    );
    assert!(
        items.iter().any(|i| i["role"] == "tool"),
        "tool events are searched"
    );
    let newest = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--limit",
            "2",
            "--json",
        ],
    )
    .json();
    assert_eq!(
        newest["items"].as_array().unwrap()[..],
        items[items.len() - 2..]
    );
    assert_eq!(newest["has_older"], true);
    let oldest = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--limit",
            "2",
            "--from",
            "oldest",
            "--json",
        ],
    )
    .json();
    assert_eq!(oldest["items"].as_array().unwrap()[..], items[..2]);
    assert_eq!(oldest["has_newer"], true);
    let roles = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--role",
            "tool",
            "--limit",
            "100",
            "--json",
        ],
    )
    .json();
    assert!(roles["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["role"] == "tool"));
}

#[test]
fn time_bounds_are_inclusive_then_exclusive() {
    let r = Roots::new();
    let run = claude(
        &r,
        &[
            "list",
            "--session",
            "abandoned-branch",
            "--since",
            "2026-03-01T09:00:05Z",
            "--until",
            "2026-03-01T09:02:05Z",
            "--role",
            "user",
            "--role",
            "assistant",
            "--json",
        ],
    );
    assert_eq!(run.positions(), vec![(3, 0), (6, 0)]);
    let old = claude(
        &r,
        &[
            "list",
            "--session",
            "*",
            "--query",
            "the",
            "--until",
            "2000-01-01",
        ],
    );
    assert_eq!(old.code, 1);
}

#[test]
fn overview_stops_at_the_limit_and_picks_representatives() {
    let r = Roots::new();
    let two = claude(&r, &["list", "--limit", "2", "--json"]).json();
    assert_eq!(two["items"].as_array().unwrap().len(), 2);
    assert_eq!(two["has_older"], true);
    let oldest = claude(&r, &["list", "--limit", "1", "--from", "oldest", "--json"]).json();
    assert_eq!(oldest["has_newer"], true);
    // With a role, the latest event of that role represents the session.
    let tools = claude(
        &r,
        &[
            "list",
            "--session",
            "claude:meta-and-context",
            "--role",
            "assistant",
            "--json",
        ],
    );
    assert_eq!(
        tools.json()["items"].as_array().unwrap().last().unwrap()["seq"],
        10
    );
    let rep = claude(
        &r,
        &[
            "list",
            "--session",
            "claude:meta*",
            "--role",
            "tool",
            "--json",
        ],
    )
    .json();
    assert_eq!(rep["items"][0]["seq"], 9);
    assert_eq!(rep["items"][0]["kind"], "tool_error");
}

#[test]
fn the_budget_bounds_the_whole_output() {
    let r = Roots::new();
    for json in [false, true] {
        let mut args = vec![
            "list",
            "--session",
            "70fc6d83",
            "--budget",
            "1500",
            "--limit",
            "50",
        ];
        if json {
            args.push("--json");
        }
        let run = claude(&r, &args);
        assert!(run.stdout.len() <= 1500, "{} bytes", run.stdout.len());
        assert_eq!(run.code, 0);
    }
    let j = claude(
        &r,
        &[
            "list",
            "--session",
            "70fc6d83",
            "--budget",
            "1500",
            "--json",
        ],
    )
    .json();
    assert_eq!(j["items"][0]["truncated"], true);
    assert_eq!(j["has_older"], true);
    let small = claude(&r, &["list", "--budget", "100"]);
    assert_eq!(small.code, 2);
}

#[test]
fn a_cut_hit_keeps_its_match_in_view() {
    let r = Roots::new();
    for session in ["*", "claude:70fc6d83"] {
        let run = claude(
            &r,
            &[
                "list",
                "--session",
                session,
                "--query",
                "Gemini CLI\" string",
                "--budget",
                "1400",
                "--json",
            ],
        );
        let item = &run.json()["items"][0];
        assert_eq!(item["truncated"], true);
        let text = item["text"].as_str().unwrap();
        assert!(
            text.starts_with('…') && text.contains("\"Gemini CLI\" string"),
            "{text}"
        );
    }
}

#[test]
fn a_budget_cut_page_from_the_oldest_end_continues_where_it_stopped() {
    let r = Roots::new();
    // Seqs 2–10 hold five dialogue events and 11–14 a run of tool calls; from the oldest end, a
    // small budget admits only the first two events (each item names the session's cwd and
    // branch as well).
    let page = claude(
        &r,
        &[
            "list",
            "--session",
            "70fc6d83",
            "--before-seq",
            "15",
            "--from",
            "oldest",
            "--budget",
            "1600",
            "--json",
        ],
    )
    .json();
    let seqs: Vec<u64> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![2, 3]);
    assert_eq!(page["has_newer"], true);
    assert!(
        page["folded_after"].is_null(),
        "the run after the dropped events is not on the page"
    );
    assert_eq!(
        page["newer"]["after_seq"], 3,
        "the next page starts after the last event shown"
    );
}

#[test]
fn read_shows_one_event_and_continues_by_offset() {
    let r = Roots::new();
    let full = claude(
        &r,
        &["read", "--session", "70fc6d83", "--seq", "16", "--json"],
    )
    .json();
    let text = full["item"]["text"].as_str().unwrap().to_string();
    assert_eq!(full["next_offset_chars"], Value::Null);
    let mut got = String::new();
    let mut offset = 0u64;
    loop {
        let run = claude(
            &r,
            &[
                "read",
                "--session",
                "70fc6d83",
                "--seq",
                "16",
                "--budget",
                "1100",
                "--offset-chars",
                &offset.to_string(),
                "--json",
            ],
        );
        assert!(run.stdout.len() <= 1100);
        let j = run.json();
        got.push_str(j["item"]["text"].as_str().unwrap());
        match j["next_offset_chars"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(got, text);
    let tool = claude(&r, &["read", "--session", "meta-and-context", "--seq", "8"]);
    assert_snapshot!("claude_read_tool_call", tool.stdout);
    let missing = claude(
        &r,
        &["read", "--session", "meta-and-context", "--seq", "4000"],
    );
    assert_eq!(missing.code, 1);
}

#[test]
fn the_same_session_found_twice_is_one_session_from_the_newest_file() {
    let r = Roots::new();
    let copy_dir = r.root("claude").join("-w-copy");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let original =
        std::fs::read_to_string(r.root("claude").join("-w-app/abandoned-branch.jsonl")).unwrap();
    std::fs::write(
        copy_dir.join("abandoned-branch.jsonl"),
        original.replace(
            "Done: the clock now resets",
            "NEWERCOPY: the clock now resets",
        ),
    )
    .unwrap();
    r.set_mtime(
        std::path::Path::new("claude/-w-copy/abandoned-branch.jsonl"),
        100_000,
    );
    let run = claude(
        &r,
        &["list", "--session", "claude:abandoned-branch", "--json"],
    )
    .json();
    assert!(run["items"][0]["path"]
        .as_str()
        .unwrap()
        .contains("-w-copy"));
    assert!(run["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["text"].as_str().unwrap().contains("NEWERCOPY")));
    let all = claude(&r, &["list", "--session", "claude:abandoned*", "--json"]).json();
    assert_eq!(
        all["items"].as_array().unwrap().len(),
        1,
        "one session, not two"
    );
}

/// Discovery keeps what it saw of Claude Code's root for the next run
/// (`history-walks/claude.walk` in the cache): a settled project directory is not listed again
/// until an entry is added to it or removed.
#[test]
fn discovery_lists_again_only_the_project_directories_that_changed() {
    let r = Roots::new();
    let ids = |r: &Roots| r.session_ids("claude");
    let first = ids(&r);
    let memo = r
        .dir
        .path()
        .join("cache/notesoup/history-walks/claude.walk");
    assert!(memo.is_file());
    std::thread::sleep(std::time::Duration::from_nanos(
        history_core::SETTLED_NS as u64 + 200_000_000,
    ));
    assert_eq!(ids(&r), first);
    let kept = std::fs::read(&memo).unwrap();
    assert_eq!(ids(&r), first);
    assert_eq!(
        std::fs::read(&memo).unwrap(),
        kept,
        "a walk with nothing new rewrote the memo"
    );
    let line = "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"message\":{\"content\":\"hi\"}}\n";
    let with = |added: &[&str]| {
        let mut want = first.clone();
        want.extend(added.iter().map(|id| format!("claude:{id}")));
        want.sort();
        want
    };
    // A session added to a project whose listing was kept, and a project added to the root.
    let project = std::fs::read_dir(r.root("claude"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(project.join("added-session.jsonl"), line).unwrap();
    assert_eq!(ids(&r), with(&["added-session"]));
    let new_project = r.root("claude").join("-new-project");
    std::fs::create_dir(&new_project).unwrap();
    std::fs::write(new_project.join("new-session.jsonl"), line).unwrap();
    assert_eq!(ids(&r), with(&["added-session", "new-session"]));
    // A session removed from a project whose listing was kept.
    std::thread::sleep(std::time::Duration::from_nanos(
        history_core::SETTLED_NS as u64 + 200_000_000,
    ));
    assert_eq!(ids(&r), with(&["added-session", "new-session"]));
    std::fs::remove_file(project.join("added-session.jsonl")).unwrap();
    assert_eq!(ids(&r), with(&["new-session"]));
}

#[test]
fn symlinked_directories_are_not_followed() {
    let r = Roots::new();
    let elsewhere = r.dir.path().join("elsewhere/proj");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("linked-session.jsonl"),
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"message\":{\"content\":\"LINKEDAWAY\"}}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, r.root("claude").join("-linked")).unwrap();
    let run = claude(&r, &["list", "--session", "*", "--query", "LINKEDAWAY"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
}

#[test]
fn no_sessions_names_the_roots_and_points_at_the_demo_the_binary_carries() {
    let empty = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("notesoup-history")
            .unwrap()
            .env_clear()
            .env("HOME", empty.path())
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, stdout, stderr) = run(&["list"]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty(), "{stdout}");
    let home = empty.path().display();
    assert!(
        stderr.contains(&format!(
            "no sessions found (claude: {home}/.claude/projects"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("notesoup-history list --demo"), "{stderr}");
    // The demo: sessions of every agent, from any directory, with recipes that stay in it.
    let (code, stdout, stderr) = run(&["list", "--demo", "--limit", "4", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let page: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 4, "{page}");
    let (_, text, _) = run(&["list", "--demo", "--limit", "4"]);
    let older = text
        .lines()
        .find_map(|l| l.strip_prefix("→ older: "))
        .unwrap();
    assert!(
        older.starts_with("notesoup-history list --demo "),
        "{older}"
    );
    let (code, found, _) = run(&["list", "--demo", "--session", "*", "--query", "git diff"]);
    assert_eq!(code, Some(0), "{found}");
    for harness in ["claude", "codex", "pi"] {
        let (code, _, stderr) = run(&["list", "--demo", "--session", &format!("{harness}:*")]);
        assert_eq!(code, Some(0), "{harness}: {stderr}");
    }
}

#[test]
fn generated_text_is_found_by_the_words_of_its_raw_line() {
    let r = Roots::new();
    let found = |query: &str| {
        claude(
            &r,
            &["list", "--session", "claude:*", "--query", query, "--json"],
        )
        .json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["session"] == "claude:generated-text")
            .map(|i| {
                (
                    i["seq"].as_u64().unwrap(),
                    i["text"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        found("REDACTED thinking"),
        [(2, "[redacted thinking]".into())]
    );
    assert_eq!(found("tool: cat"), [(2, "tool: cat figures.csv".into())]);
    assert_eq!(found("[document]"), [(3, "[document]".into())]);
    assert_eq!(
        found("container_upload"),
        [(4, "[container_upload]".into())]
    );
}
