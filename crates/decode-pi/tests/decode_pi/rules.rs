//! One test per decoding rule, each over the fixture written for it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{self, at, decode, decode_file, file, pi, root};
use decode_pi::Pi;
use history_core::{Corpus, Keep, Role, SessionFile, SessionKey, Transcript};
use history_raw::word_missing_from_line;

/// Every word of an event is in the raw bytes of its line, generated text (`[image]`, `bash:`)
/// included: what lets the raw prefilter require every word of a query.
fn words_are_in_their_lines(path: &Path, events: &[history_core::Event]) {
    let raw = fs::read(path).unwrap();
    let lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').collect();
    for event in events {
        let line = lines[event.seq as usize - 1];
        let missing = word_missing_from_line(&event.text, line);
        assert_eq!(missing, None, "{:?}", event.text);
    }
}

fn kinds(events: &[&history_core::Event]) -> Vec<(Role, String)> {
    events.iter().map(|e| (e.role, e.kind.clone())).collect()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("decode-pi")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn session(path: &Path, id: &str) -> SessionFile {
    SessionFile {
        key: SessionKey::new("pi", id),
        path: path.to_path_buf(),
        modified: 0,
        size: 0,
        fingerprint: None,
    }
}

#[test]
fn active_branch_is_the_last_entrys_parent_chain() {
    let (events, decoded) = decode("branched");
    // Lines 5–8 (do A, its tool call, the failure, the verdict) are the abandoned branch.
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 9, 10, 11, 12]));
    // Every event is streamed, including the abandoned ones, with their own line numbers.
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![3, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    let tree = pi().tree(&file("branched").path).unwrap();
    let path: Vec<&str> = tree.active_path().map(|e| e.id.as_str()).collect();
    assert_eq!(path, ["m0c1a2b3", "u1", "a1", "bs", "lb", "u3", "a4"]);
}

#[test]
fn the_core_keeps_the_branch_and_leaves_holes() {
    let corpus = Corpus::new(vec![Box::new(pi())]);
    let loaded = corpus
        .load(&file("branched"), &|_| Keep::Full, false, None)
        .unwrap();
    let seqs: Vec<u64> = loaded.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![3, 4, 4, 9, 10, 11, 12]);
    let all = corpus
        .load(&file("branched"), &|_| Keep::Full, true, None)
        .unwrap();
    let off: Vec<u64> = all
        .events
        .iter()
        .filter(|e| e.on_active_branch == Some(false))
        .map(|e| e.seq)
        .collect();
    assert_eq!(off, vec![5, 6, 7, 8]);
}

#[test]
fn roles_and_kinds() {
    let (events, _) = decode("branched");
    assert_eq!(
        kinds(&at(&events, 4)),
        [
            (Role::Assistant, "reasoning".into()),
            (Role::Assistant, "message".into())
        ]
    );
    assert!(at(&events, 4).iter().all(|e| e.visible));
    let call = at(&events, 6)[0];
    assert_eq!((call.role, call.kind.as_str()), (Role::Tool, "tool_call"));
    assert_eq!(call.text, "bash: cargo test -p cache");
    assert_eq!(call.tool.as_deref(), Some("bash"));
    assert!(!call.visible);
    let result = at(&events, 7)[0];
    assert_eq!(
        (result.role, result.kind.as_str()),
        (Role::Tool, "tool_error")
    );
    assert_eq!(result.tool.as_deref(), Some("bash"));
    let summary = at(&events, 9)[0];
    assert_eq!(
        (summary.role, summary.kind.as_str(), summary.visible),
        (Role::Context, "summary", false)
    );
    let label = at(&events, 10)[0];
    assert_eq!(
        (label.role, label.text.as_str()),
        (Role::Context, "decision point")
    );
    let user = at(&events, 11)[0];
    assert_eq!(
        (user.role, user.kind.as_str(), user.visible),
        (Role::User, "message", true)
    );
    assert_eq!(
        user.timestamp.map(|t| t.to_string()).as_deref(),
        Some("2026-03-01T10:00:08.000Z")
    );
    // Model changes yield no event.
    assert!(at(&events, 2).is_empty());
}

#[test]
fn version_2_hook_messages_and_bash_executions() {
    let (events, decoded) = decode("v2-hook-message");
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5, 6]));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    let hook = at(&events, 3)[0];
    assert_eq!((hook.role, hook.kind.as_str()), (Role::Context, "meta"));
    let bash: Vec<(&str, &str, Option<&str>)> = at(&events, 4)
        .iter()
        .chain(at(&events, 5).iter())
        .map(|e| (e.kind.as_str(), e.text.as_str(), e.tool.as_deref()))
        .collect();
    assert_eq!(
        bash,
        [
            ("tool_call", "bash: git status --short", Some("bash")),
            ("tool_output", " M src/lib.rs\n", Some("bash")),
            ("tool_call", "bash: cargo build", Some("bash")),
            (
                "tool_error",
                "error[E0425]: cannot find value `x` in this scope",
                Some("bash")
            ),
        ]
    );
    words_are_in_their_lines(&file("v2-hook-message").path, &events);
}

#[test]
fn version_1_ids_come_from_order_and_compactions_keep_by_index() {
    let (events, decoded) = decode("v1-linear");
    assert_eq!(decoded.branch, Some((2..=10).collect()));
    let tree = pi().tree(&file("v1-linear").path).unwrap();
    let ids: Vec<&str> = tree.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "00000001", "00000002", "00000003", "00000004", "00000005", "00000006", "00000007",
            "00000008", "00000009"
        ]
    );
    let parents: Vec<Option<&str>> = tree
        .entries
        .iter()
        .map(|e| e.parent_id.as_deref())
        .collect();
    assert_eq!(parents[0], None);
    assert!(parents[1..]
        .iter()
        .zip(&ids)
        .all(|(parent, previous)| *parent == Some(*previous)));
    // `firstKeptEntryIndex: 6` (header = 0) is the user message on line 7.
    let compaction = tree.entry("00000008").unwrap();
    assert_eq!(compaction.entry_type, "compaction");
    assert_eq!(compaction.first_kept_id.as_deref(), Some("00000006"));
    assert_eq!(tree.seq_of("00000006"), Some(7));
    assert_eq!(at(&events, 7)[0].text, "Make it print hello.");
    // No entry time and no message time: no timestamp.
    assert_eq!(at(&events, 7)[0].timestamp, None);
    // Before pi 0.6.0 tool results had `output`.
    assert_eq!(at(&events, 4)[0].text, r#"fn main() { println!("hi"); }"#);
    assert_eq!(at(&events, 3)[0].text, "read: src/main.rs");
    // `branchedFrom` names a file that is gone: the lineage is the file alone.
    assert_eq!(decoded.lineage, vec![file("v1-linear").path]);
}

#[test]
fn compactions_keep_from_their_first_kept_entry_even_mid_turn() {
    let (events, decoded) = decode("compaction-split-turn");
    assert_eq!(decoded.branch, Some((2..=13).collect()));
    let tree = pi().tree(&file("compaction-split-turn").path).unwrap();
    let kept = |id: &str| {
        let c = tree.entry(id).unwrap();
        tree.seq_of(c.first_kept_id.as_deref().unwrap())
    };
    assert_eq!(kept("c1"), Some(4));
    // The split turn keeps from an assistant tool call, not a user message.
    assert_eq!(kept("c2"), Some(10));
    assert_eq!(at(&events, 10)[0].kind, "tool_call");
    let summary = at(&events, 12)[0];
    assert_eq!(
        (summary.role, summary.kind.as_str()),
        (Role::Context, "summary")
    );
    assert!(summary.text.contains("Turn Context (split turn)"));
    // The whole path is shown, including what the compactions summarized.
    assert_eq!(at(&events, 2)[0].text, "Refactor the parser into modules.");
}

#[test]
fn a_tool_result_written_before_its_call() {
    let (events, decoded) = decode("tool-result-before-call");
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5]));
    assert_eq!(
        kinds(&events.iter().collect::<Vec<_>>()),
        [
            (Role::User, "message".into()),
            (Role::Tool, "tool_output".into()),
            (Role::Tool, "tool_call".into()),
            (Role::Assistant, "message".into())
        ]
    );
}

#[test]
fn two_objects_on_one_line_are_both_read() {
    let (events, decoded) = decode("glued-lines");
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(decoded.branch, Some(vec![2, 3, 4]));
    let line: Vec<(u32, Role, &str)> = at(&events, 3)
        .iter()
        .map(|e| (e.part, e.role, e.kind.as_str()))
        .collect();
    assert_eq!(
        line,
        [
            (0, Role::Assistant, "message"),
            (1, Role::Context, "summary")
        ]
    );
    let tree = pi().tree(&file("glued-lines").path).unwrap();
    assert_eq!(tree.seq_of("g0000002"), tree.seq_of("g0000003"));
}

#[test]
fn empty_assistant_content() {
    let (events, decoded) = decode("empty-assistant-error");
    assert_eq!(decoded.branch, Some((2..=7).collect()));
    let error = at(&events, 3);
    assert_eq!(error.len(), 1);
    assert_eq!(
        (error[0].role, error[0].kind.as_str(), error[0].visible),
        (Role::Context, "error", false)
    );
    assert!(error[0].text.contains("429 rate_limit_error"));
    // Aborted with nothing said: no event, a hole.
    assert!(at(&events, 5).is_empty());
    // Blank text blocks are skipped; parts count what is emitted.
    let reply = at(&events, 7);
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0].part, 0);
}

#[test]
fn a_parent_cycle_terminates() {
    let (events, decoded) = decode("damaged-parent-cycle");
    assert_eq!(decoded.branch, Some(vec![3, 4, 5]));
    assert_eq!(events.len(), 4);
    assert!(
        decoded.notices.iter().any(|n| n.contains("loop")),
        "{:?}",
        decoded.notices
    );
}

#[test]
fn a_missing_parent_starts_the_branch() {
    let (_, decoded) = decode("missing-parent");
    assert_eq!(decoded.branch, Some(vec![4, 5]));
    assert!(decoded.notices.iter().any(|n| n.contains("gone1234")));
}

#[test]
fn damaged_lines_are_skipped_with_a_notice() {
    let cases: [(&str, &[u64], &str); 4] = [
        // A damaged entry that still names its id and parent is a node without events: the
        // branch runs through it instead of stopping after it.
        (
            "damaged-truncated-last-line",
            &[2, 3, 4, 5],
            "last line (5) is incomplete",
        ),
        (
            "damaged-not-json",
            &[2, 4, 6, 7],
            "skipped 1 unreadable line (3)",
        ),
        (
            "damaged-array-line",
            &[2, 4, 5, 6],
            "skipped 1 unreadable line (3)",
        ),
        (
            "damaged-invalid-utf8",
            &[2, 3, 4, 5],
            "skipped 1 unreadable line (4)",
        ),
    ];
    for (id, branch, notice) in cases {
        let (events, decoded) = decode(id);
        assert_eq!(decoded.branch.as_deref(), Some(branch), "{id}");
        assert!(
            decoded.notices.iter().any(|n| n.contains(notice)),
            "{id}: {:?}",
            decoded.notices
        );
        assert!(!events.is_empty(), "{id}");
    }
    // The line after the invalid one names a parent that was on it, and still reaches it.
    let (events, decoded) = decode("damaged-invalid-utf8");
    assert_eq!(decoded.notices.len(), 1, "{:?}", decoded.notices);
    assert!(at(&events, 4).is_empty());
    let tree = pi().tree(&file("damaged-invalid-utf8").path).unwrap();
    assert_eq!(tree.seq_of("h0000003"), Some(4));
}

#[test]
fn lone_surrogates_are_replaced_not_dropped() {
    let (events, decoded) = decode("lone-surrogate");
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5]));
    assert_eq!(at(&events, 4)[0].text, "Welcome \u{fffd}");
    assert!(at(&events, 5)[0].text.contains('\u{1f600}'));
}

#[test]
fn a_missing_header_is_read_with_a_notice_and_named_by_the_file() {
    let (events, decoded) = decode("damaged-missing-header");
    assert_eq!(decoded.branch, Some(vec![1, 2, 3, 4]));
    assert_eq!(events.len(), 4);
    assert!(decoded
        .notices
        .iter()
        .any(|n| n.contains("no session header")));
    assert_eq!(decoded.meta.cwd, None);
}

#[test]
fn a_buggy_fork_writes_entries_twice() {
    let (events, decoded) = decode("fork-bug-duplicates");
    // The copy on line 4 is the same entry as line 2; only the first is on the branch.
    assert_eq!(decoded.branch, Some(vec![2, 5]));
    assert_eq!(events.len(), 3);
    assert!(decoded
        .notices
        .iter()
        .any(|n| n.contains("repeated session header")));
}

#[test]
fn unknown_types_are_tree_nodes_and_newer_versions_warn() {
    let (events, decoded) = decode("future-version");
    // The leaf is the unknown `usage` entry; the `context_edit` beside it is off the branch.
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 6]));
    assert!(decoded.notices.iter().any(|n| n.contains("version 4")));
    assert_eq!(
        (at(&events, 2)[0].role, at(&events, 2)[0].kind.as_str()),
        (Role::Context, "meta")
    );
    // Unknown content blocks are ignored, known ones still read.
    assert_eq!(at(&events, 4).len(), 1);
    assert!(at(&events, 5).is_empty() && at(&events, 6).is_empty());
}

#[test]
fn metadata_entries_title_images_and_custom_messages() {
    let (events, decoded) = decode("metadata-entries");
    assert_eq!(decoded.meta.title.as_deref(), Some("Refactor auth"));
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/work/demo"));
    assert_eq!(decoded.branch, Some((2..=13).collect()));
    let user: Vec<&str> = at(&events, 4).iter().map(|e| e.text.as_str()).collect();
    assert_eq!(user, ["What is in this screenshot?", "[image]"]);
    assert!(at(&events, 4).iter().all(|e| e.role == Role::User));
    words_are_in_their_lines(&file("metadata-entries").path, &events);
    // `custom` is extension state: no event. `custom_message` is injected context.
    assert!(at(&events, 6).is_empty());
    for seq in [7, 8, 9] {
        assert!(at(&events, seq)
            .iter()
            .all(|e| (e.role, e.kind.as_str()) == (Role::Context, "meta")));
    }
    // A label that clears, and an empty name, say nothing.
    assert!(at(&events, 11).is_empty() && at(&events, 13).is_empty());
}

#[test]
fn a_fork_names_its_parent_file_without_merging_it() {
    let child = file("fork-child");
    let (events, decoded) = decode("fork-child");
    let parent = file("fork-parent").path;
    assert_eq!(decoded.meta.forked_from, Some(parent));
    assert_eq!(decoded.lineage, vec![child.path.clone()]);
    assert_eq!(pi().lineage(&child), vec![child.path.clone()]);
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5, 6]));
    assert!(events.iter().all(|e| e.seq <= 6));
    assert_eq!(pi().lineage(&file("branched")), vec![file("branched").path]);
}

#[test]
fn the_real_sample() {
    let id = "019f86d0-2b56-72c1-b90f-60a707fde7d7";
    let (events, decoded) = decode(id);
    assert_eq!(decoded.branch, Some((2..=16).collect()));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(
        decoded.meta.cwd.as_deref(),
        Some("/Users/ben/.claude/jobs/37c36311/tmp/tui-pi")
    );
    assert_eq!(at(&events, 6)[0].kind, "error");
    assert!(at(&events, 9)
        .iter()
        .any(|e| e.kind == "tool_call" && e.text.starts_with("write: {")));
    assert_eq!(at(&events, 11)[0].text, "read: notes.md");
    let tree = pi().tree(&file(id).path).unwrap();
    let compaction = tree.entry("116cd832").unwrap();
    assert_eq!(
        tree.seq_of(compaction.first_kept_id.as_deref().unwrap()),
        Some(2)
    );
}

#[test]
fn discovery_reads_the_header_id() {
    let files = pi().discover();
    let ids: Vec<&str> = files.iter().map(|f| f.key.id.as_str()).collect();
    assert!(ids.contains(&"019f86d0-2b56-72c1-b90f-60a707fde7d7"));
    assert!(ids.contains(&"damaged-missing-header"));
    // Not a session: no header and not named `<ts>_<id>.jsonl`.
    assert!(files
        .iter()
        .all(|f| !f.path.ends_with("todo-ext-state.jsonl")));
    assert!(files.iter().all(|f| f.key.harness == "pi"));
    assert_eq!(files.len(), 28);

    let dir = scratch("header-id").join("--p--");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("2026-01-01T00-00-00-000Z_name-id.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"header-id\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    )
    .unwrap();
    fs::write(
        dir.join("2026-01-01T00-00-00-000Z_broken-id.jsonl"),
        "{\"type\":\"sess",
    )
    .unwrap();
    let found = Pi::new(dir.parent().unwrap().to_path_buf()).discover();
    let ids: Vec<&str> = found.iter().map(|f| f.key.id.as_str()).collect();
    assert_eq!(ids, ["broken-id", "header-id"]);
}

#[cfg(unix)]
#[test]
fn discovery_does_not_follow_symlinked_directories() {
    let root = scratch("symlinks");
    fs::create_dir_all(root.join("--real--")).unwrap();
    fs::copy(
        file("branched").path,
        root.join("--real--")
            .join("2026-03-01T10-00-00-000Z_branched.jsonl"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        common::root().join("--work-demo--"),
        root.join("--demo-link--"),
    )
    .unwrap();
    let found = Pi::new(root).discover();
    let ids: Vec<&str> = found.iter().map(|f| f.key.id.as_str()).collect();
    assert_eq!(ids, ["branched"]);
}

#[test]
fn a_missing_root_is_empty() {
    assert!(Pi::new(root().join("no-such-dir")).discover().is_empty());
}

#[test]
fn files_with_nothing_usable_are_refused_and_a_header_alone_is_empty() {
    let dir = scratch("unusable");
    let pi = Pi::new(dir.clone());
    let cases = [
        ("empty.jsonl", &b""[..]),
        ("garbage.jsonl", &b"not json\n[1,2]\n\xff\xfe\n"[..]),
    ];
    for (name, bytes) in cases {
        let path = dir.join(name);
        fs::write(&path, bytes).unwrap();
        assert!(
            pi.decode(&session(&path, name), &mut |_| {}, None).is_err(),
            "{name}"
        );
    }
    let path = dir.join("header.jsonl");
    fs::write(
        &path,
        "{\"type\":\"session\",\"version\":3,\"id\":\"h\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    )
    .unwrap();
    let (events, decoded) = decode_file(&pi, &session(&path, "h"));
    assert!(events.is_empty());
    assert_eq!(decoded.branch, Some(vec![]));
    assert!(decoded.notices.iter().any(|n| n.contains("no entries")));
    assert!(pi
        .decode(&session(&dir.join("absent.jsonl"), "x"), &mut |_| {}, None)
        .is_err());
}

#[test]
fn the_default_root() {
    fn env<'a>(
        pairs: &'a [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
        move |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.into())
    }
    let all = [
        ("NOTESOUP_HISTORY_PI_ROOT", "/x/sessions"),
        ("PI_CODING_AGENT_DIR", "/agent"),
        ("HOME", "/home/me"),
    ];
    assert_eq!(
        decode_pi::HARNESS.root(None, &env(&all)),
        Some(PathBuf::from("/x/sessions"))
    );
    assert_eq!(
        decode_pi::HARNESS.root(None, &env(&all[1..])),
        Some(PathBuf::from("/agent/sessions"))
    );
    assert_eq!(
        decode_pi::HARNESS.root(
            None,
            &env(&[("PI_CODING_AGENT_DIR", "~/pi"), ("HOME", "/home/me")])
        ),
        Some(PathBuf::from("/home/me/pi/sessions"))
    );
    assert_eq!(
        decode_pi::HARNESS.root(
            None,
            &env(&[("NOTESOUP_HISTORY_PI_ROOT", ""), ("HOME", "/home/me")])
        ),
        Some(PathBuf::from("/home/me/.pi/agent/sessions"))
    );
    assert_eq!(decode_pi::HARNESS.root(None, &env(&[])), None);
}

// ----- pi v3 of 2026 ---------------------------------------------------------------------------

#[test]
fn a_tree_branch_abandoned_for_a_later_custom_entry_leaves_a_hole() {
    let id = "tree-branch-custom-leaf";
    let (events, decoded) = decode(id);
    assert_eq!(
        decoded.branch,
        Some(vec![2, 3, 9]),
        "lines 4–8 are the abandoned branch"
    );
    assert!(
        at(&events, 9).is_empty(),
        "an extension's custom entry shows nothing"
    );
    assert!(
        at(&events, 4)[0].text == "Write the changelog.",
        "the abandoned branch is still streamed"
    );
    let tree = pi().tree(&file(id).path).unwrap();
    let leaf = tree.active_path().last().unwrap();
    assert_eq!((leaf.seq, leaf.entry_type.as_str()), (9, "custom"));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    words_are_in_their_lines(&file(id).path, &events);
}

#[test]
fn a_fork_child_keeps_the_earlier_times_of_the_entries_it_copied() {
    let id = "fork-child-earlier-timestamps";
    let (events, decoded) = decode(id);
    assert_eq!(decoded.meta.forked_from, Some(file("fork-parent").path));
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5]));
    let time = |seq: u64| at(&events, seq)[0].timestamp.unwrap().to_string();
    assert_eq!(
        time(2),
        "2026-03-02T09:00:01.000Z",
        "before the header's 2026-04-21"
    );
    assert_eq!(time(4), "2026-04-21T12:00:05.000Z");
    assert_eq!(at(&events, 2)[0].role, Role::User);
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
}

#[test]
fn session_info_names_the_session() {
    let id = "session-info-name";
    let (events, decoded) = decode(id);
    assert_eq!(
        decoded.meta.title.as_deref(),
        Some("subagent: find flaky test")
    );
    assert!(at(&events, 2).is_empty(), "a blank name shows nothing");
    assert_eq!(
        kinds(&at(&events, 4)),
        [(Role::Context, "meta".to_string())]
    );
    assert_eq!(decoded.branch, Some(vec![2, 3, 4, 5]));
}

#[test]
fn custom_messages_are_context_whether_displayed_or_not() {
    let id = "custom-message-display";
    let (events, _) = decode(id);
    for seq in [3, 4] {
        let e = at(&events, seq);
        assert_eq!(
            kinds(&e),
            [(Role::Context, "meta".to_string())],
            "line {seq}"
        );
        assert!(!e[0].visible);
    }
    assert_eq!(at(&events, 3)[0].text, "Reminder: 2 open todos");
    let users: Vec<&str> = events
        .iter()
        .filter(|e| e.role == Role::User)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(users, ["Summarize the open todos."]);
}

#[test]
fn extension_entries_are_tree_nodes_and_extension_tools_are_tools() {
    let id = "extension-entries-and-tools";
    let (events, decoded) = decode(id);
    assert!(at(&events, 3).is_empty() && at(&events, 11).is_empty());
    assert_eq!(decoded.branch, Some((2..=12).collect()));
    let calls: Vec<(&str, &str)> = at(&events, 4)
        .iter()
        .map(|e| (e.tool.as_deref().unwrap(), e.text.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("web_search", "web_search: pi coding agent extensions"),
            ("fetch_content", "fetch_content: https://example.com/pi"),
            (
                "multi_grep",
                r#"multi_grep: {"patterns":["spawn_pi","subagent"],"path":"src"}"#
            ),
            (
                "spawn_pi",
                r#"spawn_pi: {"task":"review src/ext.ts","name":"reviewer"}"#
            ),
            (
                "subagent",
                r#"subagent: {"agent":"scout","task":"list extension hooks"}"#
            ),
            (
                "ask_user_question",
                r#"ask_user_question: {"question":"Keep the old hooks?","options":["yes","no"]}"#
            ),
        ]
    );
    let outputs: Vec<&str> = (5..=10)
        .map(|seq| at(&events, seq)[0].tool.as_deref().unwrap())
        .collect();
    assert_eq!(
        outputs,
        [
            "web_search",
            "fetch_content",
            "multi_grep",
            "spawn_pi",
            "subagent",
            "ask_user_question"
        ]
    );
    assert!(events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .all(|e| !e.visible));
    words_are_in_their_lines(&file(id).path, &events);
}

#[test]
fn a_compaction_kept_from_an_assistant_entry_with_details_and_usage() {
    let id = "compaction-from-assistant";
    let (events, decoded) = decode(id);
    assert_eq!(
        decoded.branch,
        Some((2..=8).collect()),
        "the whole path stays visible"
    );
    let summary = at(&events, 7);
    assert_eq!(kinds(&summary), [(Role::Context, "summary".to_string())]);
    assert!(summary[0].text.contains("**Turn Context (split turn):**"));
    let tree = pi().tree(&file(id).path).unwrap();
    let kept = tree
        .entry("b0000006")
        .unwrap()
        .first_kept_id
        .clone()
        .unwrap();
    let kept = tree.entry(&kept).unwrap();
    assert_eq!((kept.seq, kept.entry_type.as_str()), (5, "message"));
    assert_eq!(
        at(&events, 5)[0].kind,
        "tool_call",
        "an assistant's tool call"
    );
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
}

#[test]
fn signatures_raw_stop_reasons_errors_aborts_and_empty_results() {
    let id = "assistant-signatures-and-stop-reasons";
    let (events, decoded) = decode(id);
    assert_eq!(
        kinds(&at(&events, 3)),
        [
            (Role::Assistant, "reasoning".to_string()),
            (Role::Assistant, "message".to_string()),
            (Role::Tool, "tool_call".to_string())
        ]
    );
    assert_eq!(
        at(&events, 3)[0].text,
        "**Running the linter**",
        "not its signature"
    );
    assert!(events
        .iter()
        .all(|e| !e.text.contains("REDACTED") && !e.text.contains("msg_")));
    assert!(
        at(&events, 4).is_empty(),
        "an empty tool result shows nothing"
    );
    let error = at(&events, 5);
    assert_eq!(kinds(&error), [(Role::Context, "error".to_string())]);
    assert_eq!(error[0].text, "Provider error: 502 Bad Gateway");
    assert_eq!(
        kinds(&at(&events, 7)),
        [(Role::Context, "error".to_string())]
    );
    assert_eq!(at(&events, 9)[0].text, "Clippy is clean.");
    assert_eq!(decoded.branch, Some((2..=9).collect()));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
}

#[test]
fn the_april_2026_sample() {
    let id = "019dbe19-ca83-74b3-b3ca-230160eb3875";
    let samples = Pi::new(common::samples_root());
    let sample = samples
        .discover()
        .into_iter()
        .find(|f| f.key.id == id)
        .unwrap();
    let (events, decoded) = decode_file(&samples, &sample);
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(
        decoded.meta.cwd.as_deref(),
        Some("/Users/raquezha/Developer/pi.dev")
    );
    let users = events.iter().filter(|e| e.role == Role::User).count();
    assert_eq!(users, 35);
    let branch = decoded.branch.clone().unwrap();
    assert_eq!(
        branch,
        (2..=238).collect::<Vec<u64>>(),
        "one linear path: every entry"
    );
    let summary = at(&events, 217);
    assert_eq!(kinds(&summary), [(Role::Context, "summary".to_string())]);
    let tree = samples.tree(&sample.path).unwrap();
    let kept = tree
        .entry("8ea269ec")
        .unwrap()
        .first_kept_id
        .clone()
        .unwrap();
    let kept_seq = tree.seq_of(&kept).unwrap();
    assert!(
        at(&events, kept_seq).iter().all(|e| e.role != Role::User),
        "a split turn keeps from an assistant entry"
    );
    assert!(
        events.iter().all(|e| !e.text.contains("REDACTED")),
        "signatures are not text"
    );
    let tools: Vec<&str> = events.iter().filter_map(|e| e.tool.as_deref()).collect();
    for tool in ["read", "bash", "edit", "write", "multi_grep"] {
        assert!(tools.contains(&tool), "{tool}");
    }
}
