//! What the database stores of a session and its lines, as values, and the stored form of the
//! quantities that need one (unsigned integers, line times).

use std::collections::BTreeMap;
use std::path::PathBuf;

use history_core::{LineTime, SessionKey, SessionMeta, Timestamp};

/// The earliest and latest time of some lines (`None` first: untimed).
pub type TimeSpan = (Option<Timestamp>, Option<Timestamp>);

/// One file a session's lines were decoded from, as it was when they were indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The file's path and its fingerprint, taken before it was read: what tells whether the
    /// file changed since ([`history_core::same_files`]).
    pub file: history_core::Witness,
    /// Where the last complete indexed line ends: an append is indexed from here.
    pub checkpoint: u64,
    /// [`checkpoint_hash`] of the file at `checkpoint`.
    pub checkpoint_hash: u64,
}

/// What the `meta` column holds: what a decode says the session is about, and what it says
/// of the session itself (damaged lines skipped, gaps in its ancestry), which a page read from
/// the index repeats as a decode would.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredMeta {
    /// Its title, directory, branch.
    #[serde(flatten)]
    pub meta: SessionMeta,
    /// What the decode said of it ([`history_core::Decoded::notices`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// What is known of a session besides its lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    /// The session.
    pub key: SessionKey,
    /// The canonical path of the session's own transcript.
    pub root_path: PathBuf,
    /// The version of the decoder (and tokens) the lines were indexed with.
    pub decoder_version: String,
    /// The files its lines come from, the session's own first (`Transcript::lineage`).
    pub witnesses: Vec<Witness>,
}

/// One line to index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRecord<'a> {
    /// The line's position in the session, increasing across its witnesses.
    pub seq: u64,
    /// The ordinal of the witness the line is in.
    pub file: u32,
    /// Where the line starts in that file.
    pub offset: u64,
    /// The line's length in bytes.
    pub len: u64,
    /// The time of its events.
    pub time: LineTime,
    /// Whether it is on the session's selected branch.
    pub branch: bool,
    /// Its events but their texts ([`crate::events::encode`]).
    pub events: &'a [u8],
    /// Its retrieval tokens, each once.
    pub tokens: &'a [crate::tokens::Token],
    /// The words of its events, as the build cuts them (each event's terms with their counts).
    pub words: &'a [u8],
}

/// A stored line: where to read it and when its events happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRow {
    /// The line's position in the session.
    pub seq: u64,
    /// The ordinal of the witness the line is in.
    pub file: u32,
    /// Where the line starts in that file.
    pub offset: u64,
    /// The line's length in bytes.
    pub len: u64,
    /// The time of its events.
    pub time: LineTime,
}

/// A line that may hold a query's hit, with what a page needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Where it is and when.
    pub line: LineRow,
    /// Whether it is on the session's selected branch.
    pub branch: bool,
    /// Its events but their texts ([`crate::events::decode`]).
    pub events: Vec<u8>,
}

/// Whether a session's lines are in the projection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// Its lines up to the witnesses' checkpoints are indexed.
    Indexed,
    /// It could not be indexed (see the reason); queries scan it.
    Failed,
}

/// A stored session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// The session.
    pub key: SessionKey,
    /// The canonical path of its own transcript.
    pub root_path: PathBuf,
    /// Indexed or failed.
    pub state: SessionState,
    /// The reason code of a failure (`too_large`, `unreadable`, `undecodable`…).
    pub reason: Option<String>,
    /// The decoder version it was indexed (or failed) with: one value shared by every row of
    /// a catalog ([`Census`](super::Census)), where nearly all rows have the same.
    pub decoder_version: std::sync::Arc<str>,
    /// When it was last written.
    pub indexed_at: Timestamp,
    /// The bytes its lines cover: the sum of the witnesses' checkpoints (0 when failed).
    pub bytes: u64,
    /// Its witnesses, in ordinal order.
    pub witnesses: Vec<Witness>,
    /// Whether its lineage may change while its witnesses do not
    /// ([`history_core::Decoded::lineage_open`]); so for every failed session.
    pub lineage_open: bool,
}

/// What `doctor` reports. Counts only: nothing stored is ever quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The database file.
    pub path: PathBuf,
    /// Bytes on disk: the database, its write-ahead log and shared-memory file.
    pub size_on_disk: u64,
    /// The file's schema version.
    pub schema_version: i64,
    /// `false` in degraded mode (a newer schema).
    pub writable: bool,
    /// Sessions indexed.
    pub sessions_indexed: u64,
    /// Sessions that failed.
    pub sessions_failed: u64,
    /// Failed sessions by reason code.
    pub failures: BTreeMap<String, u64>,
    /// Lines indexed.
    pub lines: u64,
    /// Transcript bytes the indexed sessions cover.
    pub bytes_covered: u64,
    /// When a session was last written.
    pub last_update: Option<Timestamp>,
    /// Quarantined databases kept beside this one.
    pub quarantined: usize,
}

/// A stored integer from an unsigned quantity (offsets, sizes, seqs: far below 2^63).
pub(super) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An unsigned quantity from a stored integer; a negative one (never written) reads as 0.
pub(super) fn uint(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The stored form of a line time: (kind, nanoseconds).
pub(super) fn time_columns(time: LineTime) -> (i64, Option<i64>) {
    match time {
        LineTime::Unknown => (0, None),
        LineTime::Untimed => (1, None),
        LineTime::At(t) => (2, Some(t.0)),
        LineTime::AtMost(t) => (3, Some(t.0)),
    }
}

/// A line time from its stored form; anything unexpected is [`LineTime::Unknown`], which never
/// rules a line out.
pub(super) fn line_time(kind: i64, ns: Option<i64>) -> LineTime {
    match (kind, ns) {
        (1, _) => LineTime::Untimed,
        (2, Some(ns)) => LineTime::At(Timestamp(ns)),
        (3, Some(ns)) => LineTime::AtMost(Timestamp(ns)),
        _ => LineTime::Unknown,
    }
}
