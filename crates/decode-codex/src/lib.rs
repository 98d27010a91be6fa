//! Decodes codex transcripts (work in progress).
