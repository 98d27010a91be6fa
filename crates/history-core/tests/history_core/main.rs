//! The integration tests of history-core, as one binary. The heap measurement is a binary of
//! its own (`tests/bounded.rs`): it counts every allocation of the process.
#![forbid(unsafe_code)]

// An embedder's own source, listed, searched and paged like a harness, and held to the kit.
mod embedder;
