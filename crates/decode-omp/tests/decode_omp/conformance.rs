//! The `Transcript` rules every source keeps (`history_core::testing`), over the Oh My Pi
//! fixtures, the real sample and damaged copies of them.

use history_core::testing::{check_damage, check_sessions, Options};

use crate::common::{root, samples_root};

#[test]
fn the_fixture_sessions_keep_the_transcript_rules() {
    check_sessions(&decode_omp::HARNESS, &root(), &Options::default());
}

#[test]
fn damaged_fixtures_keep_the_transcript_rules() {
    check_damage(&decode_omp::HARNESS, &root(), &Options::default());
}

#[test]
fn the_real_sample_keeps_the_transcript_rules() {
    check_sessions(&decode_omp::HARNESS, &samples_root(), &Options::default());
    check_damage(&decode_omp::HARNESS, &samples_root(), &Options::default());
}
