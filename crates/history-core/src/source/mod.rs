//! The source seam: what a harness decoder implements ([`Transcript`]) and declares
//! ([`Harness`]), and what every decoder reads its files with — the bounded line reader, a line's
//! time off its bytes, snapshots to resume a decode from, and where a seq came from and how to
//! reopen its session.

mod harness;
mod line_time;
mod lines;
mod origin;
pub mod snapshot;
mod transcript;
mod walk;

pub use harness::{current_session, current_source, env_text, Env, Harness};
pub use line_time::{top_level, LineTime, TopLevel};
pub use lines::{
    open_transcript, open_untouched, parse_object, parse_object_str, read_at, Damage, Line, Lines,
    MAX_FILE_BYTES, MAX_LINE_BYTES, READ_BUFFER,
};
pub use origin::{line_spans, Located, Location, Origin, Resume};
pub use snapshot::Snapshot;
pub use transcript::{open_raw, Decoded, Layout, LineTest, Resumed, Transcript, WantSnapshot};
pub use walk::{path_key, Kind, Walk, SETTLED_NS};
