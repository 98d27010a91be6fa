//! The `Transcript` rules every source keeps (`history_core::testing`), over the Gemini CLI
//! fixtures, the real samples and damaged copies of them.

use history_core::testing::{check_damage, check_sessions, Options};

use crate::common;

#[test]
fn the_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(
        &decode_gemini::HARNESS,
        &common::home(),
        &Options::default(),
    );
}

#[test]
fn damaged_fixtures_keep_the_transcript_rules() {
    check_damage(
        &decode_gemini::HARNESS,
        &common::home(),
        &Options::default(),
    );
}

#[test]
fn the_samples_keep_the_transcript_rules() {
    check_sessions(
        &decode_gemini::HARNESS,
        &common::samples(),
        &Options::default(),
    );
    check_damage(
        &decode_gemini::HARNESS,
        &common::samples(),
        &Options::default(),
    );
}
