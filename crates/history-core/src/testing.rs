//! The conformance kit: the rules every [`crate::Transcript`] must keep, checked over a source's
//! own fixtures.
