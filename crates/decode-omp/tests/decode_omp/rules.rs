//! One test per rule of Oh My Pi's format (formats/omp.md), each over the fixture written for it.

use history_core::{Role, Transcript};

use crate::common::{active, decode, file, files, omp, root};

#[test]
fn the_title_slot_is_no_entry_and_its_title_is_the_sessions() {
    let (events, decoded) = decode("title-slot");
    assert_eq!(decoded.meta.title.as_deref(), Some("Renamed by the user"));
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/tmp/omp-demo"));
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert!(
        events.iter().all(|e| e.seq > 2),
        "no event of the slot or the header"
    );
    // The header on line 2 is the header: the branch runs from line 3 to the last line.
    assert_eq!(decoded.branch, Some((3..=9).collect()));
}

#[test]
fn a_file_without_a_slot_reads_as_pi_with_the_header_title() {
    let (events, decoded) = decode("no-title-slot");
    assert_eq!(decoded.meta.title.as_deref(), Some("Header title"));
    assert_eq!(events[0].text, "An older file without a title slot.");
    assert_eq!(events[0].seq, 3);
}

#[test]
fn title_changes_are_context_and_the_slot_wins() {
    let (events, _) = decode("title-slot");
    let titles: Vec<_> = events
        .iter()
        .filter(|e| e.role == Role::Context)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(titles, ["Greeting the slot", "Renamed by the user"]);
}

#[test]
fn agent_written_user_messages_and_developer_ones_are_context() {
    let (events, _) = decode("agent-attribution");
    let users: Vec<_> = events
        .iter()
        .filter(|e| e.role == Role::User)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(users, ["Run the checks please.", "Thanks, that is all."]);
    for needle in ["async job finished", "incomplete todo", "2 todo items"] {
        let e = events.iter().find(|e| e.text.contains(needle)).unwrap();
        assert_eq!(
            (e.role, e.kind.as_str(), e.visible),
            (Role::Context, "meta", false)
        );
    }
}

#[test]
fn tool_calls_show_their_arguments_and_intent_once() {
    let (events, _) = decode("tool-intent");
    let calls: Vec<_> = events
        .iter()
        .filter(|e| e.kind == "tool_call")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        calls,
        [
            "bash: ls -la\nlist the repo",
            "read: notes.md\nread the notes",
            "bash: false\nfail on purpose",
            "edit: @@ notes.md\n-old\n+new\nedit the notes",
        ]
    );
    // `tool_execution_start` repeats each call (with `export GIT_TERMINAL_PROMPT=0`): never shown.
    assert!(!events
        .iter()
        .any(|e| e.text.contains("GIT_TERMINAL_PROMPT")));
    let failed = events.iter().find(|e| e.kind == "tool_error").unwrap();
    assert_eq!(failed.text, "Command exited with code 1");
    assert_eq!(failed.tool.as_deref(), Some("bash"));
    let unique = events
        .iter()
        .filter(|e| e.text.contains("qzo-intent-unique"))
        .count();
    assert_eq!(unique, 1);
}

#[test]
fn a_compaction_is_its_summary_then_its_short_summary() {
    let (events, decoded) = decode("compaction-short-summary");
    let summaries: Vec<_> = events.iter().filter(|e| e.kind == "summary").collect();
    assert_eq!(summaries.len(), 2);
    assert!(summaries[0].text.contains("Turn Context (split turn)"));
    assert_eq!(
        summaries[1].text,
        "Refactored step one; step two checks the build."
    );
    assert!(summaries.iter().all(|e| e.role == Role::Context));
    // The whole path stays: the entries before the kept one too.
    let on = active(events, &decoded);
    assert!(on.iter().any(|e| e.text == "Start the long refactor."));
}

#[test]
fn an_abandoned_branch_leaves_holes() {
    let (events, decoded) = decode("tree-branch");
    let on: Vec<_> = active(events, &decoded)
        .into_iter()
        .map(|e| e.text)
        .collect();
    assert!(on.contains(&"Plan B works.".to_string()));
    assert!(!on.contains(&"Plan A collapsed under load.".to_string()));
    assert!(on.iter().any(|t| t.contains("Plan A was abandoned")));
    assert_eq!(decoded.branch, Some(vec![3, 4, 7, 8, 9]));
}

#[test]
fn entry_types_of_oh_my_pi_are_nodes_without_events() {
    let (events, decoded) = decode("omp-entry-types");
    let texts: Vec<_> = events.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "Plan the release.");
    assert!(texts[1].contains("never force-push"));
    assert_eq!(texts[2], "Release planned without force-pushing.");
    // Every line is on the path: the leaf is the last entry, a `reset_boundary`.
    assert_eq!(decoded.branch, Some((3..=13).collect()));
}

#[test]
fn a_sub_agent_is_a_session_of_its_own_named_by_its_parent() {
    let parent = file("subagent-parent");
    let (events, decoded) = decode("subagent-scout");
    assert_eq!(decoded.meta.parent.as_deref(), Some("omp:subagent-parent"));
    assert_eq!(decoded.meta.forked_from, None);
    let init = events.iter().find(|e| e.kind == "instructions").unwrap();
    assert_eq!(init.role, Role::Context);
    assert!(init.text.starts_with("You are Scout"));
    // Its assignment is the parent agent's message (`attribution: "agent"`), not a person's.
    let assignment = events
        .iter()
        .find(|e| e.text.starts_with("Complete assignment"))
        .unwrap();
    assert_eq!(assignment.role, Role::Context);
    let answer = events
        .iter()
        .find(|e| e.tool.as_deref() == Some("yield"))
        .unwrap();
    assert_eq!(answer.role, Role::Tool);
    assert!(answer.text.contains("README.md"));
    // Its `.md` output beside it is no session; the parent shows the call and the result.
    assert!(omp()
        .discover()
        .iter()
        .all(|f| f.path.extension().unwrap() == "jsonl"));
    let (parent_events, parent_decoded) = crate::common::decode_file(&omp(), &parent);
    assert_eq!(parent_decoded.meta.parent, None);
    assert!(parent_events
        .iter()
        .any(|e| e.kind == "tool_output" && e.text.contains("task-result")));
}

#[test]
fn a_fork_names_its_parent_by_id_and_copies_the_sub_agent() {
    let (_, decoded) = decode("fork-by-id");
    let forked = decoded.meta.forked_from.unwrap();
    assert!(forked.ends_with("-home-dev-proj/2026-08-20T10-07-00-000Z_subagent-parent.jsonl"));
    // The fork's copy of the artifact directory holds the same sub-agent session: one id, two
    // files, which the corpus keeps as one session.
    assert_eq!(files("subagent-scout").len(), 2);
}

#[test]
fn every_folder_scheme_is_read_and_the_cwd_comes_from_the_header() {
    for (id, dir) in [
        ("title-slot", "-tmp-omp-demo"),
        ("no-title-slot", "--home-dev-old--"),
        ("hashed-dir", "home-proj-3f2a9c0e1b7d4a6f"),
    ] {
        let f = file(id);
        assert!(f.path.starts_with(root().join(dir)), "{id}");
    }
    assert_eq!(
        omp().cwd(&file("hashed-dir")).as_deref(),
        Some("/home/dev/proj")
    );
}

#[test]
fn a_damaged_title_slot_is_skipped_with_a_notice() {
    let (events, decoded) = decode("damaged-title-slot");
    assert_eq!(decoded.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(decoded.notices.len(), 1, "{:?}", decoded.notices);
    assert_eq!(events.len(), 2);
}

#[test]
fn resume_is_by_id_and_a_sub_agent_by_its_path() {
    let top = omp().resume(&file("title-slot")).unwrap();
    assert_eq!(top.argv, ["omp", "--resume", "title-slot"]);
    let sub = omp().resume(&file("subagent-scout")).unwrap();
    assert_eq!(sub.argv[..2], ["omp", "--resume"]);
    assert!(sub.argv[2].ends_with("/Scout.jsonl"));
}

#[test]
fn the_default_root_follows_oh_my_pis_agent_directory() {
    use std::ffi::OsString;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| OsString::from(v))
        }
    };
    let root = |pairs| decode_omp::default_root(env(pairs)).unwrap();
    assert_eq!(
        root(&[("HOME", "/h")]),
        std::path::Path::new("/h/.omp/agent/sessions")
    );
    assert_eq!(
        root(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "/a")]),
        std::path::Path::new("/a/sessions")
    );
    assert_eq!(
        root(&[("HOME", "/h"), ("PI_CONFIG_DIR", ".pio")]),
        std::path::Path::new("/h/.pio/agent/sessions")
    );
    assert_eq!(
        root(&[
            ("HOME", "/h"),
            ("OMP_PROFILE", "work"),
            ("PI_CODING_AGENT_DIR", "/a")
        ]),
        std::path::Path::new("/h/.omp/profiles/work/agent/sessions")
    );
    assert_eq!(
        root(&[("HOME", "/h"), ("PI_PROFILE", "default")]),
        std::path::Path::new("/h/.omp/agent/sessions")
    );
}
