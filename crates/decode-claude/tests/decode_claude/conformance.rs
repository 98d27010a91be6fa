//! The `Transcript` rules every source keeps (`history_core::testing`), over the Claude fixtures
//! and damaged copies of them.

use std::path::PathBuf;

use history_core::testing::{check_damage, check_sessions, Options};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude/projects")
}

/// The fixtures of Claude Code 2.1.78–2.1.207 and a real 2.1.207 transcript.
fn root_2026() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude-2026/projects")
}

/// Lines a search rules out are read for their structure alone, and such a line is never found
/// damaged: only the notices may differ (`decode`'s own documentation).
fn options() -> Options {
    Options::notices_may_differ()
}

#[test]
fn the_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(&decode_claude::HARNESS, &root(), &options());
}

#[test]
fn damaged_fixtures_keep_the_transcript_rules() {
    check_damage(&decode_claude::HARNESS, &root(), &options());
}

#[test]
fn the_2026_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(&decode_claude::HARNESS, &root_2026(), &options());
}

#[test]
fn damaged_2026_fixtures_keep_the_transcript_rules() {
    check_damage(&decode_claude::HARNESS, &root_2026(), &options());
}

/// The newest real sample (Claude Code 2.1.232), a root of its own.
#[test]
fn the_newest_sample_keeps_the_transcript_rules() {
    let samples = root().join("../../samples/claude");
    check_sessions(&decode_claude::HARNESS, &samples, &options());
    check_damage(&decode_claude::HARNESS, &samples, &options());
}
