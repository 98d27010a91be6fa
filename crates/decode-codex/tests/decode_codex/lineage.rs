//! Inherited history: copied into a fork's file, or referenced through `history_base`.

use crate::common::{self, decode, rule};
use history_core::{Corpus, Event, Filter, Keep, Role, Transcript};

fn dialogue(events: &[Event]) -> Vec<(u64, &str)> {
    events
        .iter()
        .filter(|e| e.visible)
        .map(|e| (e.seq, e.text.as_str()))
        .collect()
}

#[test]
fn a_copied_fork_keeps_its_own_line_numbers_and_reads_one_file() {
    let path = rule("fork-copied");
    let (events, decoded) = decode(&path);
    assert_eq!(
        dialogue(&events),
        [
            (5, "fix the failing test"),
            (6, "Fixed the off-by-one in `add`."),
            (11, "now add a regression test"),
            (12, "Added `add_handles_zero`."),
        ]
    );
    let instructions: Vec<&Event> = events.iter().filter(|e| e.kind == "instructions").collect();
    assert_eq!(
        instructions.len(),
        1,
        "the copied parent session_meta adds nothing"
    );
    assert_eq!(decoded.lineage, std::slice::from_ref(&path));
    assert_eq!(common::codex().lineage(&common::file(&path)), [path]);
}

#[test]
fn a_referenced_fork_numbers_inherited_lines_first() {
    let child = rule("fork-history-base");
    let parent = rule("g4-paginated");
    let (events, decoded) = decode(&child);
    let (parent_events, _) = decode(&parent);
    // The parent's first 8 lines (ordinals 0..8) are inherited with their own numbers...
    let inherited: Vec<&Event> = events.iter().filter(|e| e.seq <= 8).collect();
    let expected: Vec<&Event> = parent_events.iter().filter(|e| e.seq <= 8).collect();
    assert_eq!(inherited, expected);
    // ...and the child's line n is seq 8 + n.
    assert_eq!(
        dialogue(&events)[3..],
        [(11, "now write the tests"), (16, "Tests written.")]
    );
    assert!(
        !events.iter().any(|e| e.text == "and the risks?"),
        "after the cut"
    );
    assert_eq!(decoded.lineage, [child.clone(), parent.clone()]);
    assert_eq!(
        common::codex().lineage(&common::file(&child)),
        [child, parent]
    );
    assert!(decoded.notices.is_empty());
    assert!(!decoded.lineage_open);
}

#[test]
fn a_revert_inherits_through_a_chain_of_history_bases() {
    let revert = rule("revert-history-base-chain");
    let (events, decoded) = decode(&revert);
    assert_eq!(
        dialogue(&events),
        [
            (4, "summarise the design doc"),
            (6, "**Reading the doc**"),
            (8, "The doc proposes a paginated history."),
            (11, "now write the tests"),
            (17, "use a table-driven test instead"),
            (19, "Rewrote them as a table."),
        ]
    );
    // The fork's lines 1..=6 take seqs 9..=14: its tool call and output are kept, its
    // answer (line 7, after the cut) is not.
    let tools: Vec<u64> = events
        .iter()
        .filter(|e| e.role == Role::Tool)
        .map(|e| e.seq)
        .collect();
    assert_eq!(tools, [12, 13]);
    assert!(!events.iter().any(|e| e.text == "Tests written."));
    let expected = [
        revert.clone(),
        rule("fork-history-base"),
        rule("g4-paginated"),
    ];
    assert_eq!(decoded.lineage, expected);
    assert_eq!(common::codex().lineage(&common::file(&revert)), expected);
}

#[test]
fn a_query_hit_in_inherited_history_counts_for_the_child() {
    let corpus = Corpus::new(vec![Box::new(common::codex())]);
    let filter = Filter::new(&["DESIGN DOC".to_string()], vec![], None, None);
    for name in ["fork-history-base", "revert-history-base-chain"] {
        let file = common::file(&rule(name));
        assert!(
            corpus.raw_prefilter(&filter)(&file),
            "{name}: the prefilter reads ancestors"
        );
        let loaded = corpus
            .load(
                &file,
                &|e| {
                    if filter.matches(e) {
                        Keep::Full
                    } else {
                        Keep::Drop
                    }
                },
                false,
                None,
            )
            .unwrap();
        let hits: Vec<(u64, Role)> = loaded.events.iter().map(|e| (e.seq, e.role)).collect();
        assert_eq!(hits, [(4, Role::User)], "{name}");
    }
}

#[test]
fn a_cycle_of_history_bases_is_read_once() {
    let a = rule("history-base-cycle");
    let (events, decoded) = decode(&a);
    assert_eq!(dialogue(&events), [(3, "hello from 0d")]);
    assert_eq!(decoded.lineage.len(), 2);
    assert!(
        decoded.notices[0].contains("cycle"),
        "{:?}",
        decoded.notices
    );
    assert_eq!(common::codex().lineage(&common::file(&a)), decoded.lineage);
}

#[test]
fn a_missing_ancestor_is_a_notice() {
    let path = rule("history-base-missing");
    let (events, decoded) = decode(&path);
    assert_eq!(dialogue(&events), [(3, "where did my history go?")]);
    assert_eq!(
        decoded.notices,
        ["inherited history from rollout 019f2a10-dead-7000-8000-000000000000 was not found"]
    );
    assert_eq!(decoded.lineage, [path]);
    assert!(
        decoded.lineage_open,
        "the lineage would grow if the ancestor appeared"
    );
}
