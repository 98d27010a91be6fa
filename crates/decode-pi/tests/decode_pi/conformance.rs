//! The `Transcript` rules every source keeps (`history_core::testing`), over the pi fixtures
//! and damaged copies of them.

use std::path::PathBuf;

use history_core::testing::{check_damage, check_sessions, Options};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi/sessions")
}

#[test]
fn the_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(&decode_pi::HARNESS, &root(), &Options::default());
}

#[test]
fn the_newest_sample_keeps_the_transcript_rules() {
    let samples = root().join("../../samples/pi");
    check_sessions(&decode_pi::HARNESS, &samples, &Options::default());
    check_damage(&decode_pi::HARNESS, &samples, &Options::default());
}

#[test]
fn damaged_fixtures_keep_the_transcript_rules() {
    check_damage(&decode_pi::HARNESS, &root(), &Options::default());
}

#[test]
fn the_0_73_fixtures_keep_the_transcript_rules() {
    let newer = root().join("../../pi-2026/sessions");
    check_sessions(&decode_pi::HARNESS, &newer, &Options::default());
    check_damage(&decode_pi::HARNESS, &newer, &Options::default());
}
