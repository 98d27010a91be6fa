//! The model: sessions and their qualified ids, events and roles, times, the stat fingerprint of
//! a file, and the order of a page. Everything else is built on these; they depend on nothing
//! else of the crate.

mod fingerprint;
mod order;
mod session;
mod time;

pub use fingerprint::{fingerprints, same_files, DirStats, Fingerprint, Witness};
pub(crate) use order::order_key;
pub use order::{Bound, Cursor, End, OrderKey};
pub use session::{Event, Role, SessionFile, SessionKey, SessionMeta};
pub use time::{parse_bound, Timestamp};
