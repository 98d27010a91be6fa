//! The queries: browsing one session, searching many, summing up hits per session, the
//! recent-sessions overview and a whole session's export, and what a search projection (the
//! search index) may answer for them. Each page kind is built in its own module: one session
//! ([`session_page`]), many sessions ([`across`]), hits per session ([`sessions`]), one event
//! ([`read`]).

mod across;
mod browse;
mod export;
mod find;
mod overview;
mod projection;
mod read;
mod request;
mod scope;
mod search;
mod session_page;
mod sessions;

pub(crate) use across::{across_page, listing};
pub(crate) use read::read_page;
pub(crate) use request::{check_budget, check_window};
pub use request::{ListRequest, ReadRequest, DEFAULT_LIMIT};
pub(crate) use scope::Scope;
pub(crate) use session_page::session_page;
pub(crate) use sessions::sessions_page;

pub use browse::{browse, BrowseRequest, Browsed, BrowsedItem};
pub use export::{export, Document, ExportRequest, Head};
pub(crate) use find::find_page;
pub use find::{FindRequest, Stop};
pub use overview::{overview, representative, Choice, Representative, RepresentativeCache};
pub(crate) use projection::coverage;
pub use projection::{
    Counted, CountedEvent, HitOrder, HitTexts, Known, Projection, SessionEvents, SessionHits,
    Wanted,
};
#[cfg(feature = "testing")]
pub(crate) use search::Span;
pub use search::{search, Activity, Hit, Listing, SearchRequest, SessionActivity};
