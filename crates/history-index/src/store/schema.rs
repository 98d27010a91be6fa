//! The schema and the connection's settings.

/// The schema version this build reads and writes, kept in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = 12;

/// Marks the file as this projection's (`PRAGMA application_id`, "NSHX"), so that a database
/// of anything else found at the path is moved aside rather than written into.
pub(super) const APPLICATION_ID: i64 = 0x4e53_4858;

/// Bounds what the write-ahead log keeps on disk after a checkpoint; without it the log stays
/// as large as the largest transaction ever written, the size of a whole session's lines.
pub(super) const JOURNAL_SIZE_LIMIT: i64 = 32 * 1024 * 1024;

/// How long a statement waits for another process's lock. Short: a query never waits for
/// indexing, it scans instead; and the indexer's transactions are one session each.
pub(super) const BUSY_TIMEOUT_MS: u64 = 200;

/// Pages of 16 KiB: a session's snapshot (MBs for a long transcript) and a frequent token's
/// list span a quarter of the pages they would at 4 KiB, each page one write to the log and one
/// read. On the 1 GiB bench corpus: `index` after a 1 MiB append 118 -> 98 ms (median), a build
/// from nothing 14.8 -> 13.2 s, 189 -> 198 MiB on disk, queries unchanged. Free pages go back to
/// the file system when asked (`PRAGMA incremental_vacuum`, after a merge of token lists). Both
/// are set before the first table: they cannot change afterwards but by a `VACUUM` (and the page
/// size not even by that in WAL mode).
pub(super) const PAGES: &str = "PRAGMA page_size = 16384; PRAGMA auto_vacuum = INCREMENTAL;";

/// The tables every database of this version has.
pub(super) const TABLES: [&str; 10] = [
    "sessions",
    "witnesses",
    "lines",
    "resumes",
    "segments",
    "postings",
    "gone",
    "ranges",
    "catalog",
    "words",
];

/// Schema v12 (v11 had no `words`; v1 had no `branch` and `events`: what a page needs without decoding the session;
/// v2 had no `resumes`; v3 no `lineage_open`; v4 kept the tokens in an FTS5 table; v5 had no
/// checksums; v6 no `ranges`; v7 no `catalog`; v8 no notices in `meta`; v9 kept each path
/// whole in `catalog`; v10 kept every token list as deltas, without bitmaps).
///
/// Paths are BLOBs of their bytes (a path need not be UTF-8). `lines.id` is given by the writer
/// ([`super::postings`]): `postings` holds, per segment and token (`key` is `segment << 32 |
/// token`: a segment's lists are one range of the table, in token order, as a merge reads them),
/// how many lines hold the token and their ids, and `segments` each segment's range of ids with how
/// many lines and (token, line) pairs it was written with; a removed line's id stays in its lists
/// until they are merged. `lines.file` is the witness ordinal the offset is in: a Codex session's
/// lines come from several files. Times are nanoseconds since the epoch; `time_kind` is 0 unknown,
/// 1 untimed, 2 at, 3 at most. `sessions.meta` is what a decode says the session is about (its
/// directory, branch and title, as JSON), which a hit names, with the decode's notices
/// ([`super::StoredMeta`]); `lineage_open` is 0 once a decode has
/// read every file the session inherits from ([`history_core::Decoded::lineage_open`]), so that its
/// witnesses alone tell whether it is fresh. `branch` is 1 for a line on the session's selected
/// branch; `events` holds what the line's events are but their texts ([`crate::events`]). `resumes`
/// holds, for a session whose decoder can go on from where it stopped, its
/// [`history_core::Snapshot`]: an append is then decoded from there, and a query reads only
/// the appended lines. `words` holds each segment's word lists for `find` ([`super::words`]),
/// and `lines_off_branch` finds the lines off their session's branch, which those lists do not
/// know of. `sum` is each row's checksum, and a token list ends with its own
/// ([`super::sum`]); each token list names the key of the next in its segment (`next`, with
/// `link` their sum) from the segment's first (`head`), and `gone` holds the ids of removed
/// lines until their token lists are merged: a line or list missing from a lookup is then
/// either proven absent or damage. `ranges` holds where each write of a session put its lines
/// among the ids, and when they happen ([`super::ranges`]). `catalog` holds, in one row when an
/// update has ended since any of them changed, the sessions, witnesses and ranges again
/// ([`super::catalog`]).
pub(super) const SCHEMA: &str = "
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    harness TEXT NOT NULL,
    session_id TEXT NOT NULL,
    root_path BLOB NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('indexed', 'failed')),
    reason TEXT,
    decoder_version TEXT NOT NULL,
    indexed_at INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    meta TEXT,
    lineage_open INTEGER NOT NULL DEFAULT 1,
    sum INTEGER NOT NULL DEFAULT 0,
    UNIQUE (harness, session_id)
) STRICT;
CREATE TABLE witnesses (
    session INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    path BLOB NOT NULL,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    checkpoint INTEGER NOT NULL,
    checkpoint_hash INTEGER NOT NULL,
    sum INTEGER NOT NULL,
    PRIMARY KEY (session, ordinal)
) STRICT, WITHOUT ROWID;
CREATE TABLE lines (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    file INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    len INTEGER NOT NULL,
    time_kind INTEGER NOT NULL,
    time_ns INTEGER,
    branch INTEGER NOT NULL,
    events BLOB NOT NULL,
    sum INTEGER NOT NULL,
    UNIQUE (session, seq)
) STRICT;
CREATE TABLE resumes (
    session INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    offset INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    settled INTEGER NOT NULL,
    state BLOB NOT NULL,
    sum INTEGER NOT NULL
) STRICT;
CREATE TABLE segments (
    id INTEGER PRIMARY KEY,
    head INTEGER NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    pairs INTEGER NOT NULL,
    sum INTEGER NOT NULL
) STRICT;
CREATE TABLE ranges (
    first INTEGER PRIMARY KEY,
    last INTEGER NOT NULL,
    session INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kinds INTEGER NOT NULL,
    min_at INTEGER,
    max_time INTEGER,
    sum INTEGER NOT NULL
) STRICT;
CREATE INDEX ranges_session ON ranges (session);
CREATE TABLE gone (
    id INTEGER PRIMARY KEY
) STRICT;
CREATE TRIGGER lines_gone AFTER DELETE ON lines BEGIN
    INSERT OR IGNORE INTO gone (id) VALUES (OLD.id);
END;
CREATE TABLE postings (
    key INTEGER PRIMARY KEY,
    n INTEGER NOT NULL,
    next INTEGER NOT NULL,
    link INTEGER NOT NULL,
    list BLOB NOT NULL
) STRICT;
CREATE TABLE words (
    key INTEGER PRIMARY KEY,
    list BLOB NOT NULL
) STRICT;
CREATE INDEX lines_off_branch ON lines (id) WHERE branch = 0;
CREATE TABLE catalog (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    n INTEGER NOT NULL,
    body BLOB NOT NULL
) STRICT;
";
