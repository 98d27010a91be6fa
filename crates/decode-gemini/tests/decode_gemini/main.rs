//! The integration tests of decode-gemini, as one binary.
#![forbid(unsafe_code)]

// The fixture home and decoding through the `Transcript` trait.
mod common;
// The `Transcript` rules of the conformance kit, over the fixtures, the samples and damaged copies.
mod conformance;
// One test per replay rule, each over the fixture written for it.
mod rules;
// Every fixture session and the real samples rendered one line per event, against its snapshot.
mod snapshots;
