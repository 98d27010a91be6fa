//! Where each seq comes from: inherited history maps back to the ancestor's lines, the rest to
//! the session's own line `seq - K`.

use crate::common::{self, decode, rule};
use history_core::Origin;
use history_core::Transcript;

#[test]
fn a_referenced_fork_locates_inherited_seqs_in_its_parent() {
    let child = rule("fork-history-base");
    let parent = rule("g4-paginated");
    let origins = common::codex().origins(&common::file(&child), &[1, 8, 9, 11, 16, 0]);
    let at = |path: &std::path::Path, line| {
        Some(Origin {
            path: path.to_path_buf(),
            line,
        })
    };
    assert_eq!(
        origins,
        [
            at(&parent, 1),
            at(&parent, 8),
            at(&child, 1),
            at(&child, 3),
            at(&child, 8),
            None
        ]
    );
}

#[test]
fn a_chain_of_history_bases_locates_each_seq_in_its_own_file() {
    let revert = rule("revert-history-base-chain");
    let codex = common::codex();
    let file = common::file(&revert);
    let (events, decoded) = decode(&revert);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    let origins = codex.origins(&file, &seqs);
    let mut files = std::collections::BTreeSet::new();
    for (event, origin) in events.iter().zip(&origins) {
        let origin = origin.as_ref().expect("every decoded seq has an origin");
        files.insert(origin.path.clone());
        // The line there is the one the event came from: it carries the event's time.
        let text = std::fs::read_to_string(&origin.path).unwrap();
        let line = text.lines().nth(origin.line as usize - 1).unwrap();
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(t) = event.timestamp {
            let stamp = value["timestamp"]
                .as_str()
                .and_then(history_core::Timestamp::parse_rfc3339);
            assert_eq!(stamp, Some(t), "seq {} at {origin:?}", event.seq);
        }
    }
    assert_eq!(
        files.len(),
        decoded.lineage.len(),
        "every file of the lineage gives lines"
    );
}

#[test]
fn a_session_without_inherited_history_is_its_own_lines() {
    let path = rule("fork-copied");
    let origins = common::codex().origins(&common::file(&path), &[1, 5]);
    assert_eq!(
        origins,
        [
            Some(Origin {
                path: path.clone(),
                line: 1
            }),
            Some(Origin { path, line: 5 })
        ]
    );
}
