//! The search projection of notesoup-history: a disposable SQLite catalog of retrieval tokens
//! and line locations that lets a `--query` skip every line that cannot match, without ever
//! storing message text. Transcripts stay the only authority: deleting the database loses
//! nothing, and a query answered with it equals the query answered without it.
//!
//! [`tokens`] are the retrieval tokens of a line's folded text and of a query; [`store`] is the
//! database with its lifecycle policy; [`freshness`] decides, for each session, whether what the
//! database holds of it is what its files hold now; [`build`] brings it up to date from the
//! transcripts; and [`projection::Index`] is what a search consults
//! ([`history_core::Projection`]): for every session indexed by this build from files
//! that have not changed since, or have only grown, whether any line can hold a hit, and when
//! those lines happen, and, for `find`, which of its events hold a question's words and how
//! often ([`store`]'s word lists). Any other session is read as it would be without the
//! projection.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod build;
pub mod events;
pub mod freshness;
pub mod projection;
pub mod store;
pub mod tokens;
mod varint;
