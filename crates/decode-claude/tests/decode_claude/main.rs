//! The Claude Code decoder through the `Transcript` trait, over `fixtures/claude` and
//! `fixtures/claude-2026`: one test binary for the crate, one module a concern.

// history-core's conformance kit over every fixture session and damaged copies of them.
mod conformance;
// Damaged fixtures and made-up transcripts: never a panic; every word of an event in its line.
mod robust;
