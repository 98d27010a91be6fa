//! The harnesses the command reads.

use history_core::Harness;

/// The harnesses the command reads, in the order they are tried.
pub const HARNESSES: [&Harness; 7] = [
    &decode_claude::HARNESS,
    &decode_codex::HARNESS,
    &decode_pi::HARNESS,
    &decode_omp::HARNESS,
    &decode_opencode::HARNESS,
    &decode_gemini::HARNESS,
    &decode_copilot::HARNESS,
];
