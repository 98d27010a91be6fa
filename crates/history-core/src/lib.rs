//! The heart of notesoup-history: the model of sessions and events, the [`Transcript`] trait every
//! harness decoder implements and the [`harness::Harness`] descriptor each declares, selectors and
//! their resolution, query matching, and every page's policy: the browse page with its folding,
//! the cross-session overview and search, the output budget and the recipes. A front end hands
//! [`History`] a request and gets a finished [`page`] back.
//!
//! It does no harness-specific parsing and no rendering: decoders live in `decode-*` crates, and
//! front ends render pages through the small [`page::Render`] trait, which the core also uses to
//! measure the budget in the bytes of the output it will be.
//!
//! ```
//! use history_core::{Filter, Role};
//! let filter = Filter::new(&["STRASSE".to_string()], vec![Role::User], None, None);
//! assert!(filter.matches_text("die Straße"));
//! ```
#![deny(missing_docs)]

pub mod budget;
pub mod corpus;
pub mod error;
pub mod export;
pub mod fingerprint;
pub mod harness;
pub mod history;
pub mod location;
pub mod matching;
pub mod model;
pub mod overview;
pub mod page;
pub mod paging;
pub mod parallel;
pub mod place;
#[cfg(feature = "testing")]
pub mod properties;
pub mod resume;
pub mod search;
pub mod selector;
pub mod sessions;
pub mod source;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;

pub use corpus::{Corpus, Keep, Loaded, Texts};
pub use error::{DecodeError, HistoryError};
pub use history::{History, ListRequest, ReadRequest};
pub use matching::Filter;
pub use model::{Event, Role, SessionFile, SessionKey, SessionMeta};
pub use selector::Selector;
pub use source::{Decoded, Transcript};
pub use time::Timestamp;
