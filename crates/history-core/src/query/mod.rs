//! The queries: browsing one session, searching many, summing up hits per session, the
//! recent-sessions overview and a whole session's export, and what a search projection (the
//! search index) may answer for them.

mod browse;
mod export;
mod overview;
mod projection;
mod search;
pub(crate) mod sessions;

pub use browse::{browse, BrowseRequest, Browsed, BrowsedItem};
pub use export::{export, Document, ExportRequest, Head};
pub use overview::{overview, representative, Representative};
pub use projection::{Known, Projection, RepresentativeCache, SessionHits, Wanted};
pub(crate) use search::Span;
pub use search::{search, Hit, Listing, SearchRequest};
