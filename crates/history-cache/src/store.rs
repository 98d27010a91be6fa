//! The cache directory and its entries: refused on any doubt when read, written atomically,
//! never through a symbolic link, and kept tidy: entries of transcripts that are gone are
//! removed, and the whole stays under a size cap.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::fingerprint::{fingerprints, same_files, Fingerprint, Witness};
use crate::key::Key;

/// The largest entry file that is written or read, in bytes (8 MiB).
pub const MAX_ENTRY_BYTES: u64 = 8 * 1024 * 1024;

/// The default cap on the entries' total size, in bytes (64 MiB): past it, the oldest go.
pub const MAX_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// How many entries one [`Cache::sweep`] reads to learn whether their transcript still exists:
/// the work a run spends on tidying stays bounded however many entries there are, and the
/// next runs carry on where it stopped.
pub const SWEEP_READS: usize = 256;

/// The entry format this crate writes and accepts; a change of the layout below bumps it.
pub const ENTRY_FORMAT: &str = "notesoup-history-cache/1";

/// A leftover temporary file older than this (a writer that died between its write and its
/// rename) is removed by a sweep; a younger one may still be renamed by its writer.
const STALE_TEMP_SECS: i64 = 3600;

/// A cache directory of entries for one decoder version.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    decoder_version: String,
    max_bytes: u64,
    /// Whether this cache (or a clone of it) swept already: once per run is enough.
    swept: Arc<AtomicBool>,
}

/// What a [`Cache::sweep`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Entries whose session's transcript no longer exists.
    pub gone: usize,
    /// The oldest entries, removed to bring the total under the size cap.
    pub over_cap: usize,
    /// Temporary files left by writers that died.
    pub stale: usize,
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

/// What a sweep needs of an entry, of any decoder version: whose it is.
#[derive(Deserialize)]
struct EntryKey {
    format: String,
    key: Key,
}

impl Cache {
    /// A cache in `dir` (created on the first [`put`](Cache::put)) whose entries are valid only
    /// for `decoder_version`: bump that string whenever decoding or the cached value's shape or
    /// selection changes, and every older entry becomes a miss and is overwritten on the next put.
    ///
    /// The directory must be the user's: a directory owned by another user, or a symbolic link
    /// owned by another user in its place, is not used at all (every get a miss, every put
    /// skipped), so that nobody can plant entries or redirect writes. A link of the user's own
    /// is followed, to a directory of the user's own.
    pub fn new(dir: impl Into<PathBuf>, decoder_version: &str) -> Cache {
        Cache {
            dir: dir.into(),
            decoder_version: decoder_version.to_string(),
            max_bytes: MAX_CACHE_BYTES,
            swept: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The same cache with another cap on its entries' total size ([`MAX_CACHE_BYTES`] unless
    /// set).
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Cache {
        self.max_bytes = max_bytes;
        self
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
    /// witness that changed or cannot be stat'ed, an entry that is a symbolic link, a directory
    /// that is not the user's. A miss says nothing went wrong that the caller could act on; it
    /// simply decodes the sources, as it would without a cache.
    pub fn get<T: DeserializeOwned>(&self, key: &Key, witnesses: &[PathBuf]) -> Option<T> {
        if witnesses.is_empty() {
            return None;
        }
        let now = fingerprints(witnesses)?;
        let dir = open_dir(&self.dir).ok()?;
        let bytes = read_capped(&dir, key.file_name().as_ref(), MAX_ENTRY_BYTES)?;
        let entry: EntryIn<T> = serde_json::from_slice(&bytes).ok()?;
        let valid = entry.format == ENTRY_FORMAT
            && entry.decoder_version == self.decoder_version
            && entry.key == *key
            && same_files(&entry.witnesses, &now);
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
    /// reader sees the old entry or the new one, never half of one. Neither the directory (when
    /// it is a link not the user's) nor an entry is written through a symbolic link: the
    /// temporary file is opened with `O_NOFOLLOW` and `O_EXCL` in the opened directory, and the
    /// rename replaces whatever is at the entry's name. Any I/O failure leaves the cache as it
    /// was and returns `false`: the cache only ever saves work, so a failure to save some is no
    /// error worth reporting.
    ///
    /// The first put of a cache (and its clones) also [sweeps](Cache::sweep) the directory.
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
        let Ok(dir) = create_dir(&self.dir) else {
            return false;
        };
        let written = write_atomically(&dir, key.file_name().as_ref(), &bytes.buf).is_ok();
        if written && !self.swept.swap(true, Ordering::Relaxed) {
            self.sweep_in(&dir);
        }
        written
    }

    /// Tidies the directory: removes the entries of sessions whose transcript no longer exists
    /// (reading at most [`SWEEP_READS`] entries, from a place that changes from run to run, so
    /// that every entry is looked at in turn), temporary files that writers left behind, and
    /// then, oldest first by modification time, entries until their total size is under the
    /// cap. Nothing else is touched; a failure to remove something is left for a later sweep.
    pub fn sweep(&self) -> Swept {
        match open_dir(&self.dir) {
            Ok(dir) => self.sweep_in(&dir),
            Err(_) => Swept::default(),
        }
    }

    fn sweep_in(&self, dir: &OwnedFd) -> Swept {
        let mut swept = Swept::default();
        let Some(mut entries) = list(dir) else {
            return swept;
        };
        let now = unix_now();
        entries.retain(|entry| {
            let stale = entry.temp && now - entry.modified.0 > STALE_TEMP_SECS;
            if stale && remove(dir, &entry.name) {
                swept.stale += 1;
            }
            !entry.temp
        });
        if !entries.is_empty() {
            // The clock's nanoseconds: runs a moment apart start far apart.
            let start = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos() as usize)
                % entries.len();
            let reads = entries.len().min(SWEEP_READS);
            let mut gone = vec![false; entries.len()];
            for i in (0..reads).map(|k| (start + k) % entries.len()) {
                if transcript_is_gone(dir, &entries[i].name) && remove(dir, &entries[i].name) {
                    gone[i] = true;
                    swept.gone += 1;
                }
            }
            let mut kept = gone.iter();
            entries.retain(|_| kept.next() == Some(&false));
        }
        let mut total: u64 = entries.iter().map(|e| e.size).sum();
        entries.sort_by_key(|e| e.modified);
        for entry in &entries {
            if total <= self.max_bytes {
                break;
            }
            if remove(dir, &entry.name) {
                total -= entry.size;
                swept.over_cap += 1;
            }
        }
        swept
    }
}

/// Opens the directory at `path` ([`open_dir`]), creating it (0700, with its missing parents)
/// if need be.
pub(crate) fn create_dir(path: &Path) -> io::Result<OwnedFd> {
    match open_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)?;
            open_dir(path)
        }
        opened => opened,
    }
}

/// Opens the cache directory, if it is the user's: a directory of the user's own, reached
/// directly or through a symbolic link of the user's own. Anything else is refused.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let me = rustix::process::geteuid().as_raw();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let link = rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW)?;
    let dir = if FileType::from_raw_mode(link.st_mode) == FileType::Symlink {
        if link.st_uid != me {
            return Err(io::Error::other(
                "the cache directory is another user's link",
            ));
        }
        rustix::fs::openat(CWD, path, flags, Mode::empty())?
    } else {
        // Without following: a link put there since the check is refused, not followed.
        rustix::fs::openat(CWD, path, flags | OFlags::NOFOLLOW, Mode::empty())?
    };
    if rustix::fs::fstat(&dir)?.st_uid != me {
        return Err(io::Error::other("the cache directory is another user's"));
    }
    Ok(dir)
}

/// Writes `bytes` to a new temporary file in `dir` and renames it to `name`.
pub(crate) fn write_atomically(dir: &OwnedFd, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_name();
    let written = write_new(dir, temp.as_ref(), bytes)
        .and_then(|()| Ok(rustix::fs::renameat(dir, &temp, dir, name)?));
    if written.is_err() {
        // Best effort: a leftover temporary file is harmless, only untidy (a sweep removes it).
        let _ = rustix::fs::unlinkat(dir, &temp, AtFlags::empty());
    }
    written
}

/// One file of the cache directory, as a sweep sees it.
struct Listed {
    name: Vec<u8>,
    size: u64,
    /// Seconds and nanoseconds since the epoch.
    modified: (i64, i128),
    /// A writer's temporary file rather than an entry.
    temp: bool,
}

/// The regular files of `dir` that are entries or temporary files, with their size and time.
fn list(dir: &OwnedFd) -> Option<Vec<Listed>> {
    let mut out = Vec::new();
    for item in rustix::fs::Dir::read_from(dir).ok()? {
        let Ok(item) = item else {
            break;
        };
        let name = item.file_name().to_bytes();
        let temp = name.starts_with(b".tmp-");
        if !temp && !name.ends_with(b".json") {
            continue;
        }
        let Ok(stat) = rustix::fs::statat(dir, item.file_name(), AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            continue;
        }
        out.push(Listed {
            name: name.to_vec(),
            size: u64::try_from(stat.st_size).unwrap_or(0),
            modified: (
                stat.st_mtime,
                // Unsigned on some targets, signed on others.
                i128::from(stat.st_mtime_nsec),
            ),
            temp,
        });
    }
    Some(out)
}

/// Whether the entry `name` is of a session whose transcript no longer exists; `false` on any
/// doubt (an entry that cannot be read, of a format this build does not know).
fn transcript_is_gone(dir: &OwnedFd, name: &[u8]) -> bool {
    let Some(bytes) = read_capped(dir, OsStr::from_bytes(name), MAX_ENTRY_BYTES) else {
        return false;
    };
    let Ok(entry) = serde_json::from_slice::<EntryKey>(&bytes) else {
        return false;
    };
    entry.format == ENTRY_FORMAT
        && matches!(
            std::fs::symlink_metadata(&entry.key.root_path),
            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
        )
}

/// Removes the file `name` of `dir`; whether it was removed.
fn remove(dir: &OwnedFd, name: &[u8]) -> bool {
    rustix::fs::unlinkat(dir, OsStr::from_bytes(name), AtFlags::empty()).is_ok()
}

/// Seconds since the epoch, now.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The bytes of the regular file `name` of `dir`, unless it is a symbolic link or larger than
/// [`MAX_ENTRY_BYTES`].
pub(crate) fn read_capped(dir: &OwnedFd, name: &OsStr, cap: u64) -> Option<Vec<u8>> {
    // Non-blocking so that a FIFO planted at the entry's path cannot hang the open.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    // The file may have grown since the check; never read more than the cap plus one byte.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

/// Creates `name` in `dir`, which must not exist (not even as a link), with mode 0600, and
/// writes `bytes` to it.
fn write_new(dir: &OwnedFd, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = Mode::RUSR | Mode::WUSR;
    let mut file = File::from(rustix::fs::openat(dir, name, flags, mode)?);
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
