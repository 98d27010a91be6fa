//! The search projection of notesoup-history (CONTRACT §11): a disposable SQLite FTS5 catalog
//! of retrieval tokens and line locations that lets a `--query` skip every line that cannot
//! match, without ever storing message text. Transcripts stay the only authority: deleting the
//! database loses nothing, and a query answered with it equals the query answered without it.
//!
//! This crate holds the pieces the projection is built from: [`tokens`], the retrieval tokens
//! of a line's folded text and of a query, and [`store`], the database itself with its
//! lifecycle policy.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod store;
pub mod tokens;
