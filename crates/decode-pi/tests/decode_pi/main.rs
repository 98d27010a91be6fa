//! The integration tests of decode-pi, as one binary.
#![forbid(unsafe_code)]

// The fixture root, decoding through the `Transcript` trait, and the snapshots' rendering.
mod common;
// The `Transcript` rules of the conformance kit, over the fixtures and damaged copies of them.
mod conformance;
// A line test restricts `decode` to the lines it passes, with the same branch, meta and lineage.
mod matching;
// Random, cut short or mangled bytes never panic, and a line test still agrees with `decode`.
mod robustness;
// One test per decoding rule, each over the fixture written for it.
mod rules;
// Every fixture session decoded and rendered one line per event, against its snapshot.
mod snapshots;
