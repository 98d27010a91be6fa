//! The heart of notesoup-history: the model of sessions and events, the [`Transcript`] trait every
//! harness decoder implements, selectors and their resolution, query matching, the browse page
//! with its folding, the cross-session overview and search, and the output budget.
//!
//! It does no harness-specific parsing and no rendering: decoders live in `decode-*` crates and
//! the text and JSON printers in the CLI.
//!
//! ```
//! use history_core::{Filter, Role};
//! let filter = Filter::new(&["STRASSE".to_string()], vec![Role::User], None, None);
//! assert!(filter.matches_text("die Straße"));
//! ```
#![deny(missing_docs)]

pub(crate) mod ascii_search;
pub mod budget;
pub mod corpus;
pub mod error;
pub mod harness;
pub mod json;
pub mod matching;
pub mod model;
pub mod overview;
pub mod paging;
pub(crate) mod pairs;
pub(crate) mod parallel;
pub mod prefilter;
pub mod scan;
pub mod search;
pub mod selector;
pub mod source;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;

pub use corpus::{Corpus, Keep, Loaded};
pub use error::{DecodeError, HistoryError};
pub use matching::{fold, Filter};
pub use model::{Event, Role, SessionFile, SessionKey, SessionMeta};
pub use selector::Selector;
pub use source::{Decoded, Transcript};
pub use time::Timestamp;
