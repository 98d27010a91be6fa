//! The heart of notesoup-history: the model of sessions and events, the [`Transcript`] trait every
//! harness decoder implements and the [`Harness`] descriptor each declares, selectors and their
//! resolution, the queries, and every page's policy: the browse page with its folding, the
//! cross-session overview and search, the output budget and the recipes. A front end hands
//! [`History`] a request and gets a finished page back.
//!
//! It does no harness-specific parsing and no rendering: decoders live in `decode-*` crates, the
//! raw-bytes engine (folding, the JSON scan, the prefilter) in `history-raw`, and front ends
//! render pages through the small [`Render`] trait, which the core also uses to measure the
//! budget in the bytes of the output it will be.
//!
//! The modules are layers, each importing only from those listed before it: `model`, `choose`,
//! `source`, `corpus`, `page`, `query`, and the `history` façade on top.
//!
//! ```
//! use history_core::{Filter, Role};
//! let filter = Filter::new(&["STRASSE".to_string()], vec![Role::User], None, None);
//! assert!(filter.matches_text("die Straße"));
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod choose;
mod corpus;
mod error;
mod history;
mod model;
mod page;
mod query;
mod source;
#[cfg(feature = "testing")]
pub mod testing;

pub use choose::{
    for_each_term, is_path, literal, reduce, resolve, resolve_path, transcript_path, Filter,
    PathMiss, Pattern, Place, Selector, HOST_ONLY_HARNESS,
};
pub use corpus::{locate, parallel, Corpus, Keep, Loaded, Texts, WalkMemos};
pub use error::{DecodeError, HistoryError};
pub use history::History;
pub use model::{
    fingerprints, parse_bound, same_files, Bound, Cursor, DirStats, End, Event, Fingerprint,
    OrderKey, Role, SessionFile, SessionKey, SessionMeta, Timestamp, Witness,
};
pub use page::budget::{self, CUT_MARKER, DEFAULT_BUDGET, MIN_BUDGET};
pub use page::{
    Coverage, Explain, FindPage, FoldedRun, FoundHit, FoundSession, Item, ListPage, ReadPage,
    Recipe, Render, RenderFind, RenderSessions, SessionMatch, SessionsPage, WordScore,
    SCHEMA_VERSION,
};
pub use query::{
    browse, export, overview, representative, search, Activity, BrowseRequest, Browsed,
    BrowsedItem, Choice, Counted, CountedEvent, Document, ExportRequest, FindRequest, Head, Hit,
    HitOrder, HitTexts, Known, ListRequest, Listing, Projection, ReadRequest, Representative,
    RepresentativeCache, SearchRequest, SessionActivity, SessionEvents, SessionHits, Stop, Wanted,
    DEFAULT_LIMIT,
};
pub use source::{
    current_session, current_source, env_text, line_spans, open_raw, open_transcript,
    open_untouched, parse_object, parse_object_str, read_at, snapshot, top_level, Damage, Decoded,
    Env, Harness, Layout, Line, LineTest, LineTime, Lines, Located, Location, Origin, Resume,
    Resumed, Snapshot, TopLevel, Transcript, WantSnapshot, MAX_FILE_BYTES, MAX_LINE_BYTES,
    READ_BUFFER,
};
pub use source::{path_key, Kind, Walk, SETTLED_NS};
