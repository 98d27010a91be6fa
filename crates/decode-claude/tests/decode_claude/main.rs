//! The Claude Code decoder through the `Transcript` trait, over `fixtures/claude` and
//! `fixtures/claude-2026`: one test binary for the crate, one module a concern.

// The fixture roots, and decoding a fixture session through the `Transcript` trait.
mod common;
// history-core's conformance kit over every fixture session and damaged copies of them.
mod conformance;
// Damaged fixtures and made-up transcripts: never a panic; every word of an event in its line.
mod robust;
// The decoding rules: a table of fixture sessions and what each decodes to.
mod rules;
