//! Decodes Claude Code transcripts (work in progress).
