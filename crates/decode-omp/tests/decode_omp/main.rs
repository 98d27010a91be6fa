//! The integration tests of decode-omp, as one binary.
#![forbid(unsafe_code)]

// The fixture root, decoding through the `Transcript` trait, and the snapshots' rendering.
mod common;
// The `Transcript` rules of the conformance kit, over the fixtures, the real sample and damaged
// copies of them.
mod conformance;
// One test per rule of the format, each over the fixture written for it.
mod rules;
// Every fixture session and the real sample, rendered one line per event, against its snapshot.
mod snapshots;
