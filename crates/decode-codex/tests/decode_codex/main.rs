//! The integration tests of decode-codex, as one binary.
#![forbid(unsafe_code)]

// Fixtures and helpers the other modules share.
mod common;
// The `Transcript` rules of the conformance kit, over the fixtures and damaged copies of them.
mod conformance;
// Where sessions are found: dated tree, flat layout, compressed twins, reverts, links, no root.
mod discovery;
// Inherited history: copied into a fork's file, or referenced through `history_base`.
mod lineage;
// A line test reads the lines a search cannot want for their structure alone, losing nothing.
mod matching;
// Where each seq comes from: inherited lines map to the ancestor's, the rest to their own.
mod origins;
// Bad input (damaged, compressed, headless, huge, random or cut short) never panics nor hangs.
mod robustness;
// A search of a session with a rollback gives the branch a full decode gives.
mod rollback;
// The decoding rules, one test each, over the hand-written fixtures and the real sample.
mod rules;
// Every fixture decoded and rendered one line per event, against its snapshot.
mod snapshots;
