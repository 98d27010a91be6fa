//! The integration tests of decode-copilot, as one binary.
#![forbid(unsafe_code)]

// The `Transcript` rules of the conformance kit, over the fixtures, the samples and damaged
// copies of them.
mod conformance;
// Decoding rules the CLI does not show directly: the raw stream of a legacy file, the root.
mod rules;
