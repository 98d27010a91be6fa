//! The persistent overview cache of notesoup-history: one small JSON entry per session that
//! remembers a value decoded from its transcript (the overview's representative), valid only as
//! long as every source file it was decoded from still has the same stat [`Fingerprint`].
//!
//! It is for skipping the full decode of unchanged transcripts when the unfiltered overview is
//! built again. It is not an index, not a search catalog and not a place for failures: it never
//! reads a transcript, knows nothing about harnesses or events (the cached value is any
//! `Serialize + Deserialize` type), and only stores what the caller decoded successfully.
//!
//! The rules: an entry is keyed by the canonical root transcript path, the
//! harness and the session id; it is valid for one decoder version; it lists its witnesses, the
//! source files and their fingerprints taken before reading, and a hit needs exactly the same
//! list now. Entries over [`MAX_ENTRY_BYTES`] are neither written nor read. The directory is
//! private (0700, files 0600) and written by temporary file and atomic rename, never through a
//! symbolic link; a directory that is not the user's is not used. A run that writes also sweeps:
//! entries of transcripts that no longer exist go (a bounded number of reads per run), and the
//! oldest go while the total is over [`MAX_CACHE_BYTES`].
//!
//! The store is generic; [`cached_representative`] composes it with `history-core`'s overview,
//! which is the one place a cache may answer (only the unfiltered overview). A search only
//! takes bounds from it: the times of an unchanged session's earliest and latest events, between
//! which all of its hits lie, so that a page leaves unread the sessions whose hits cannot reach
//! it.
//!
//! [`Cache::get`] and [`Cache::put`] have no error type by design: a missing, corrupt,
//! unreadable or unwritable cache must behave exactly like no cache at all, so every failure is
//! a miss or a skipped write, and there is nothing a caller could do with the reason.
//!
//! ```
//! use history_cache::{fingerprints, Cache, Key};
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let transcript = dir.path().join("session.jsonl");
//! std::fs::write(&transcript, "{\"type\":\"message\"}\n")?;
//!
//! let cache = Cache::new(dir.path().join("cache"), "pi-decoder-1");
//! let key = Key::new(std::fs::canonicalize(&transcript)?, "pi", "session");
//! let witnesses = vec![transcript.clone()];
//!
//! let cached: Option<String> = cache.get(&key, &witnesses);
//! assert_eq!(cached, None);
//! // A miss: fingerprint the sources, then decode them, then offer the result.
//! if let Some(before) = fingerprints(&witnesses) {
//!     let decoded = "the representative".to_string();
//!     assert!(cache.put(&key, &before, &decoded));
//! }
//! assert_eq!(cache.get::<String>(&key, &witnesses).as_deref(), Some("the representative"));
//!
//! // Appending to the transcript invalidates the entry.
//! std::fs::write(&transcript, "{\"type\":\"message\"}\n{\"type\":\"message\"}\n")?;
//! assert_eq!(cache.get::<String>(&key, &witnesses), None);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod fingerprint;
mod key;
mod location;
mod overview;
mod store;
mod walks;

pub use fingerprint::{fingerprint, fingerprints, Fingerprint};
pub use key::Key;
pub use location::{cache_root, default_dir};
pub use overview::{cached_representative, DECODER_VERSION};
pub use store::{Cache, Swept, ENTRY_FORMAT, MAX_CACHE_BYTES, MAX_ENTRY_BYTES, SWEEP_READS};
pub use walks::{WalkMemoDir, MAX_MEMO_BYTES};
