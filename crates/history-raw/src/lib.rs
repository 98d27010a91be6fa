//! The raw-bytes engine of notesoup-history: what reads a transcript's bytes before, or instead
//! of, a JSON parser. Decoders skim big lines with its validating [`Scan`]; the search rules out
//! files and lines with its [`RawFilter`] before anything is decoded; every comparison of a query
//! with a text folds both with its [`fold`].
//!
//! This is the one crate of the workspace that holds `unsafe` code: the vectorised loops of the
//! JSON string scan ([`scan`]) and of the two-byte-pair search ([`pairs`]). Each sits beside a
//! plain twin with the same API, and a test holds the two equal on random input.
//!
//! It knows nothing of sessions, events or agents.
//!
//! ```
//! use history_raw::{fold, RawFilter};
//! let filter = RawFilter::new(&[fold("STRASSE")]);
//! // `ß` folds to `ss`: a line that writes it, or escapes it, may hold a match.
//! assert!(filter.may_match_slice(r#"{"text":"die Straße"}"#.as_bytes()));
//! assert!(filter.may_match_slice(br#"{"text":"die Stra\u00dfe"}"#));
//! assert!(!filter.may_match_slice(br#"{"text":"die Gasse"}"#));
//! ```
#![deny(missing_docs)]

mod fold;
pub mod json;
mod letters;
mod needle;
mod pairs;
mod prefilter;
pub mod scan;

pub use fold::{fold, fold_with_origins, ASCII_FOLDING};
pub use needle::AsciiNeedle;
pub use pairs::{Pairs, MAX_KEYS};
pub use prefilter::{segments, word_missing_from_line, RawFilter};
pub use scan::Scan;

/// The longest line a transcript may have: a longer one is an error, to a decoder and to the
/// prefilter alike, rather than a buffer without bound.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
