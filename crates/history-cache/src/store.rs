//! The cache directory and its entries: refused on any doubt when read, written atomically.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::fingerprint::{fingerprints, Fingerprint};
use crate::key::Key;

/// The largest entry file that is written or read, in bytes (8 MiB).
pub const MAX_ENTRY_BYTES: u64 = 8 * 1024 * 1024;

/// The entry format this crate writes and accepts; a change of the layout below bumps it.
pub const ENTRY_FORMAT: &str = "notesoup-history-cache/1";

/// A cache directory of entries for one decoder version.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    decoder_version: String,
}

/// One source file as it was when the value was decoded.
#[derive(Serialize, Deserialize, PartialEq)]
struct Witness {
    path: PathBuf,
    fingerprint: Fingerprint,
}

/// An entry file as written.
#[derive(Serialize)]
struct EntryOut<'a, T> {
    format: &'static str,
    decoder_version: &'a str,
    key: &'a Key,
    witnesses: Vec<Witness>,
    value: &'a T,
}

/// An entry file as read.
#[derive(Deserialize)]
struct EntryIn<T> {
    format: String,
    decoder_version: String,
    key: Key,
    witnesses: Vec<Witness>,
    value: T,
}

impl Cache {
    /// A cache in `dir` (created on the first [`put`](Cache::put)) whose entries are valid only
    /// for `decoder_version`: bump that string whenever decoding or the cached value's shape or
    /// selection changes, and every older entry becomes a miss and is overwritten on the next put.
    pub fn new(dir: impl Into<PathBuf>, decoder_version: &str) -> Cache {
        Cache {
            dir: dir.into(),
            decoder_version: decoder_version.to_string(),
        }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `key`'s entry (whether or not it exists).
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        self.dir.join(key.file_name())
    }

    /// The value stored for `key`, if it was decoded from exactly the sources `witnesses` as they
    /// are now: the same paths in the same order with the same fingerprints.
    ///
    /// For Codex, `witnesses` is the root transcript followed by the ancestors that lineage
    /// discovery finds *now*, so a source that appeared, vanished or became ambiguous is a miss
    /// even when the remaining files are unchanged.
    ///
    /// Every doubt is a miss (`None`): no entry, an unreadable, oversized or corrupt one, another
    /// entry format or decoder version, another key under the same hash, no witnesses at all, a
    /// witness that changed or cannot be stat'ed. A miss says nothing went wrong that the caller could act on; it
    /// simply decodes the sources, as it would without a cache.
    pub fn get<T: DeserializeOwned>(&self, key: &Key, witnesses: &[PathBuf]) -> Option<T> {
        if witnesses.is_empty() {
            return None;
        }
        let now = fingerprints(witnesses)?;
        let bytes = read_capped(&self.entry_path(key))?;
        let entry: EntryIn<T> = serde_json::from_slice(&bytes).ok()?;
        let valid = entry.format == ENTRY_FORMAT
            && entry.decoder_version == self.decoder_version
            && entry.key == *key
            && same_witnesses(&entry.witnesses, &now);
        valid.then_some(entry.value)
    }

    /// Stores `value` for `key` if the sources are still exactly as `before` describes them;
    /// `true` if the entry was written.
    ///
    /// `before` holds the fingerprints taken (with [`fingerprints`]) before the sources were
    /// read. They are taken again now: a decode that raced a write to a source is not stored
    /// (the caller still returns it). Nothing is written either when `before` is empty (an entry
    /// that no source could invalidate would live forever), when the entry would exceed
    /// [`MAX_ENTRY_BYTES`] or when a path is not valid UTF-8 (JSON cannot hold it).
    ///
    /// Only put values that decoded successfully: failures are never cached, so a broken or
    /// unsupported transcript is looked at again on every run.
    ///
    /// The entry is written to a temporary file in the cache directory (mode 0600; the directory
    /// and any missing parents are created with mode 0700) and renamed over the old entry, so a
    /// reader sees the old entry or the new one, never half of one. Any I/O failure leaves the
    /// cache as it was and returns `false`: the cache only ever saves work, so a failure to save
    /// some is no error worth reporting.
    pub fn put<T: Serialize>(
        &self,
        key: &Key,
        before: &[(PathBuf, Fingerprint)],
        value: &T,
    ) -> bool {
        let paths: Vec<PathBuf> = before.iter().map(|(p, _)| p.clone()).collect();
        if before.is_empty() || fingerprints(&paths).as_deref() != Some(before) {
            return false;
        }
        let entry = EntryOut {
            format: ENTRY_FORMAT,
            decoder_version: &self.decoder_version,
            key,
            witnesses: before
                .iter()
                .map(|(path, fingerprint)| Witness {
                    path: path.clone(),
                    fingerprint: *fingerprint,
                })
                .collect(),
            value,
        };
        let mut bytes = Capped::default();
        if serde_json::to_writer(&mut bytes, &entry).is_err() {
            return false;
        }
        self.write_atomically(&self.entry_path(key), &bytes.buf)
            .is_ok()
    }

    fn write_atomically(&self, target: &Path, bytes: &[u8]) -> io::Result<()> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let temp = self.dir.join(temp_name());
        let written = write_new(&temp, bytes).and_then(|()| std::fs::rename(&temp, target));
        if written.is_err() {
            // Best effort: a leftover temporary file is harmless, only untidy.
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

/// Whether the stored witnesses are exactly the fingerprints taken now.
fn same_witnesses(stored: &[Witness], now: &[(PathBuf, Fingerprint)]) -> bool {
    stored.len() == now.len()
        && stored
            .iter()
            .zip(now)
            .all(|(w, (path, fingerprint))| w.path == *path && w.fingerprint == *fingerprint)
}

/// The bytes of the regular file at `path`, unless it is larger than [`MAX_ENTRY_BYTES`].
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    // Non-blocking so that a FIFO planted at the entry's path cannot hang the open.
    let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nonblock)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    // The file may have grown since the check; never read more than the cap plus one byte.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    file.take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_ENTRY_BYTES).then_some(bytes)
}

/// Creates `path`, which must not exist, with mode 0600 and writes `bytes` to it.
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

/// A temporary file name no other writer (thread or process) uses at the same time.
fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // The clock tells apart processes that share a pid across containers or after a crash.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(".tmp-{}-{nanos}-{n}", std::process::id())
}

/// A serialization buffer that refuses to grow beyond [`MAX_ENTRY_BYTES`], so that an
/// oversized value is given up on without first being held in memory whole.
#[derive(Default)]
struct Capped {
    buf: Vec<u8>,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if (self.buf.len() + data.len()) as u64 > MAX_ENTRY_BYTES {
            return Err(io::Error::other("cache entry over the size cap"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
