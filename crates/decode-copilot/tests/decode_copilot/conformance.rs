//! The `Transcript` rules every source keeps (`history_core::testing`), over the Copilot
//! fixtures, the real samples and damaged copies of them.

use std::path::PathBuf;

use history_core::testing::{check_damage, check_sessions, Options};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

#[test]
fn the_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(
        &decode_copilot::HARNESS,
        &fixtures().join("copilot/home"),
        &Options::default(),
    );
}

#[test]
fn damaged_fixtures_keep_the_transcript_rules() {
    check_damage(
        &decode_copilot::HARNESS,
        &fixtures().join("copilot/home"),
        &Options::default(),
    );
}

#[test]
fn the_samples_keep_the_transcript_rules() {
    let samples = fixtures().join("samples/copilot");
    check_sessions(&decode_copilot::HARNESS, &samples, &Options::default());
    check_damage(&decode_copilot::HARNESS, &samples, &Options::default());
}

#[test]
fn the_recordings_keep_the_transcript_rules() {
    let Ok(entries) = std::fs::read_dir(fixtures().join("recorded")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("copilot-") {
            let home = entry.path().join("home");
            check_sessions(&decode_copilot::HARNESS, &home, &Options::default());
            check_damage(&decode_copilot::HARNESS, &home, &Options::default());
        }
    }
}
