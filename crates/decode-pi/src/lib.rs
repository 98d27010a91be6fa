//! Decodes pi transcripts (work in progress).
