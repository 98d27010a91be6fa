//! What discovery saw of a root the last time it walked it, so that a walk of an unchanged tree
//! stats what it must and reads nothing again: each directory's listing, kept with the
//! directory's own stat and taken again when that changes, and each id discovery read from a
//! file's first line, kept with the file's fingerprint and read again when that changes.
//!
//! A directory's modification and change times move whenever an entry is added, removed or
//! renamed in it, but only as finely as the filesystem's clock ticks: an entry added in the tick
//! of a listing can leave the times as they were. So a listing is kept only when the directory
//! last changed well before it was taken ([`SETTLED_NS`]); a directory written to just now is
//! listed again by the next walk, and by every one until it settles.
//!
//! The memo is a cache, not a record: [`Walk::to_bytes`] ends with a checksum, bytes that do not
//! decode or add up are an empty memo, and a walk without one lists and reads everything, as
//! discovery always did.

use std::ffi::OsString;
use std::hash::BuildHasher;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rustc_hash::{FxBuildHasher, FxHashMap};
use serde::{Deserialize, Serialize};

use crate::model::Fingerprint;

/// How long before a listing a directory must have last changed for the listing to be kept.
pub const SETTLED_NS: i64 = 2_000_000_000;

/// What a directory entry is, links not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Link,
    /// Anything else.
    Other,
}

/// A directory's identity and the times an entry added or removed would change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        let f = Fingerprint::of_metadata(meta);
        Stamp {
            dev: f.dev,
            ino: f.ino,
            mtime_ns: f.mtime_ns,
            ctime_ns: f.ctime_ns,
        }
    }
}

/// A directory as a walk listed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Listed {
    dir: Vec<u8>,
    /// The directory's stamp when it was listed.
    stamp: Stamp,
    /// Each entry's name and kind.
    entries: Vec<(Vec<u8>, Kind)>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Memo {
    /// Each directory listed.
    dirs: Vec<Listed>,
    /// Each file whose first line gave an id, with its fingerprint before it was read.
    ids: Vec<(Vec<u8>, Fingerprint, String)>,
}

/// One walk of a root: what the last walk kept, and what this one sees.
///
/// The memo is looked up where it lies, by a hash of each path's bytes, and a walk notes only
/// which of its entries it met again; an entry copied, or a path parsed into components to be
/// hashed, for every file of every walk cost more than the stat that tells the file unchanged.
#[derive(Debug, Default)]
pub struct Walk {
    /// What the last walk kept.
    kept: Memo,
    /// Where each kept directory and id is in `kept`, by the hash of its path's bytes (of two
    /// paths with one hash, the first: the other is listed or read again).
    dir_at: FxHashMap<u64, usize>,
    id_at: FxHashMap<u64, usize>,
    /// Which kept directories and ids this walk met again, unchanged (discoverers work on
    /// every core).
    met_dirs: Vec<AtomicBool>,
    met_ids: Vec<AtomicBool>,
    /// What this walk listed or read that the memo did not hold, to keep for the next one.
    added: Mutex<Memo>,
    /// Whether this walk listed or read anything the memo did not hold.
    fresh: AtomicBool,
}

/// The hash a memo's path is looked up by.
fn hash(path: &[u8]) -> u64 {
    FxBuildHasher.hash_one(path)
}

/// Where each item is, by the hash of its path (the first of a hash kept).
fn places<T>(items: &[T], path: impl Fn(&T) -> &[u8]) -> FxHashMap<u64, usize> {
    let mut at = FxHashMap::with_capacity_and_hasher(items.len(), FxBuildHasher);
    for (i, item) in items.iter().enumerate() {
        at.entry(hash(path(item))).or_insert(i);
    }
    at
}

/// The items whose flag in `met` is set.
fn met_again<'a, T>(items: &'a [T], met: &'a [AtomicBool]) -> impl Iterator<Item = &'a T> {
    (items.iter().zip(met)).filter_map(|(item, m)| m.load(Ordering::Relaxed).then_some(item))
}

impl Walk {
    /// A walk that remembers nothing: every directory is listed and every header read.
    pub fn none() -> Walk {
        Walk::default()
    }

    /// A walk that goes on from the memo `bytes` ([`Walk::to_bytes`]); from nothing when they
    /// are damaged or of another format.
    pub fn from_bytes(bytes: &[u8]) -> Walk {
        let kept = (bytes.len().checked_sub(4))
            .filter(|&n| bytes[n..] == crc32fast::hash(&bytes[..n]).to_le_bytes())
            .and_then(|n| bytes[..n].strip_prefix(MAGIC))
            .and_then(|body| postcard::from_bytes::<Memo>(body).ok())
            .unwrap_or_default();
        let met = |n: usize| (0..n).map(|_| AtomicBool::new(false)).collect();
        Walk {
            dir_at: places(&kept.dirs, |listed| &listed.dir),
            id_at: places(&kept.ids, |(file, _, _)| file),
            met_dirs: met(kept.dirs.len()),
            met_ids: met(kept.ids.len()),
            kept,
            ..Walk::default()
        }
    }

    /// What this walk saw, for the next one; `None` when that is what the memo held already.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        let added = self.added.lock().ok()?;
        let all = |met: &[AtomicBool]| met.iter().all(|m| m.load(Ordering::Relaxed));
        if !self.fresh.load(Ordering::Relaxed) && all(&self.met_dirs) && all(&self.met_ids) {
            return None;
        }
        let mut memo = Memo {
            dirs: met_again(&self.kept.dirs, &self.met_dirs)
                .chain(&added.dirs)
                .cloned()
                .collect(),
            ids: met_again(&self.kept.ids, &self.met_ids)
                .chain(&added.ids)
                .cloned()
                .collect(),
        };
        // Walks on every core see things in any order; the bytes do not depend on it.
        memo.dirs.sort_by(|a, b| a.dir.cmp(&b.dir));
        memo.dirs.dedup_by(|a, b| a.dir == b.dir);
        memo.ids.sort_by(|a, b| a.0.cmp(&b.0));
        memo.ids.dedup_by(|a, b| a.0 == b.0);
        let mut bytes = MAGIC.to_vec();
        bytes.extend(postcard::to_allocvec(&memo).ok()?);
        bytes.extend(crc32fast::hash(&bytes).to_le_bytes());
        Some(bytes)
    }

    /// The entries of directory `dir` (`None` when it is none or cannot be read), by name and
    /// kind: as the last walk listed them when the directory has not changed since, else listed
    /// now. A link to a directory is followed: pass a root, or an entry listed as a directory.
    pub fn entries(&self, dir: &Path) -> Option<Vec<(OsString, Kind)>> {
        let meta = std::fs::metadata(dir).ok()?;
        if !meta.is_dir() {
            return None;
        }
        let stamp = Stamp::of(&meta);
        let key = dir.as_os_str().as_bytes();
        let kept = (self.dir_at.get(&hash(key)))
            .filter(|&&i| self.kept.dirs[i].dir == key && self.kept.dirs[i].stamp == stamp);
        if let Some(&i) = kept {
            self.met_dirs[i].store(true, Ordering::Relaxed);
            let entries = (self.kept.dirs[i].entries.iter())
                .map(|(name, kind)| (OsString::from_vec(name.clone()), *kind));
            return Some(entries.collect());
        }
        let started = unix_nanos(SystemTime::now());
        let entries: Vec<(OsString, Kind)> = (std::fs::read_dir(dir).ok()?.flatten())
            .map(|e| (e.file_name(), e.file_type().map_or(Kind::Other, kind)))
            .collect();
        self.fresh.store(true, Ordering::Relaxed);
        let settled = started.saturating_sub(stamp.mtime_ns.max(stamp.ctime_ns)) >= SETTLED_NS;
        if let Some(mut added) = self.added.lock().ok().filter(|_| settled) {
            added.dirs.push(Listed {
                dir: key.to_vec(),
                stamp,
                entries: (entries.iter())
                    .map(|(name, kind)| (name.as_bytes().to_vec(), *kind))
                    .collect(),
            });
        }
        Some(entries)
    }

    /// The id `read` finds on the first line of `path`, whose fingerprint `now` was taken
    /// before: the one the last walk read when the file is as it was then.
    pub fn id(
        &self,
        path: &Path,
        now: &Fingerprint,
        read: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        let key = path.as_os_str().as_bytes();
        let kept = (self.id_at.get(&hash(key)))
            .filter(|&&i| self.kept.ids[i].0 == key && self.kept.ids[i].1 == *now);
        if let Some(&i) = kept {
            self.met_ids[i].store(true, Ordering::Relaxed);
            return Some(self.kept.ids[i].2.clone());
        }
        self.fresh.store(true, Ordering::Relaxed);
        let id = read()?;
        if let Ok(mut added) = self.added.lock() {
            added.ids.push((key.to_vec(), *now, id.clone()));
        }
        Some(id)
    }
}

/// A key whose byte order is `Path`'s own order (component by component) for the paths
/// discovery makes: the path's bytes with each separator made the lowest byte, which a path
/// never holds otherwise, as the end of a component sorts before more of it. `Path::cmp`
/// parses both paths into components for every comparison, which made sorting a few thousand
/// of them cost more than stat'ing them.
pub fn path_key(path: &Path) -> Vec<u8> {
    let mut key = path.as_os_str().as_bytes().to_vec();
    for b in &mut key {
        if *b == b'/' {
            *b = 0;
        }
    }
    key
}

/// The first bytes of a memo: its format.
const MAGIC: &[u8] = b"notesoup-walk-1\n";

fn kind(t: std::fs::FileType) -> Kind {
    if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else if t.is_symlink() {
        Kind::Link
    } else {
        Kind::Other
    }
}

fn unix_nanos(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn names(entries: Option<Vec<(OsString, Kind)>>) -> Vec<String> {
        let mut names: Vec<String> = (entries.unwrap().into_iter())
            .map(|(n, k)| format!("{}:{k:?}", n.to_string_lossy()))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn paths_are_ordered_as_path_orders_them() {
        // Components that are prefixes of one another, and bytes on either side of '/'.
        let parts = ["a", "a-b", "a.b", "ab", "a0", "-", "b", "a b", "é", "a/b"];
        let mut paths: Vec<PathBuf> = vec![PathBuf::from("/")];
        for x in parts {
            paths.push(Path::new("/r").join(x));
            for y in parts {
                paths.push(Path::new("/r").join(x).join(y));
                paths.push(Path::new("r").join(x).join(y));
            }
        }
        for a in &paths {
            for b in &paths {
                assert_eq!(path_key(a).cmp(&path_key(b)), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_settled_directory_is_listed_once_and_a_changed_one_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.jsonl"), "x").unwrap();
        std::os::unix::fs::symlink("a.jsonl", root.join("link")).unwrap();
        // Just written: listed, but its listing is not kept.
        let first = Walk::none();
        let all = ["a.jsonl:File", "link:Link", "sub:Dir"];
        assert_eq!(names(first.entries(&root)), all);
        assert!(Walk::from_bytes(&first.to_bytes().unwrap())
            .kept
            .dirs
            .is_empty());
        // Settled: kept, and the next walk lists nothing.
        std::thread::sleep(std::time::Duration::from_nanos(
            SETTLED_NS as u64 + 100_000_000,
        ));
        let second = Walk::none();
        assert_eq!(names(second.entries(&root)), all);
        let kept = second.to_bytes().unwrap();
        let third = Walk::from_bytes(&kept);
        assert_eq!(names(third.entries(&root)), all);
        assert_eq!(
            third.to_bytes(),
            None,
            "nothing listed that the memo did not hold"
        );
        // An entry added changes the directory: listed again.
        std::fs::write(root.join("b.jsonl"), "y").unwrap();
        let fourth = Walk::from_bytes(&kept);
        assert_eq!(names(fourth.entries(&root)).len(), 4);
        assert!(fourth.to_bytes().is_some());
        // A root reached through a link is listed; a file is not a directory.
        std::os::unix::fs::symlink(&root, dir.path().join("linked")).unwrap();
        assert_eq!(
            names(Walk::none().entries(&dir.path().join("linked"))).len(),
            4
        );
        assert_eq!(Walk::none().entries(&root.join("a.jsonl")), None);
    }

    #[test]
    fn an_id_is_read_again_only_when_its_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one").unwrap();
        let f = Fingerprint::of(&path).unwrap();
        let walk = Walk::none();
        assert_eq!(
            walk.id(&path, &f, || Some("id-1".into())),
            Some("id-1".into())
        );
        let bytes = walk.to_bytes().unwrap();
        let again = Walk::from_bytes(&bytes);
        let unread = again.id(&path, &f, || panic!("read again"));
        assert_eq!(unread, Some("id-1".into()));
        assert_eq!(again.to_bytes(), None, "nothing new to keep");
        std::fs::write(&path, "two, longer").unwrap();
        let f2 = Fingerprint::of(&path).unwrap();
        assert_eq!(
            again.id(&path, &f2, || Some("id-2".into())),
            Some("id-2".into())
        );
        // What a walk did not meet again is not kept: a file gone, a directory not walked.
        let gone = Walk::from_bytes(&bytes);
        assert!(Walk::from_bytes(&gone.to_bytes().unwrap())
            .kept
            .ids
            .is_empty());
        // A file that gives no id is not kept.
        let none = Walk::from_bytes(&bytes);
        assert_eq!(none.id(&path, &f2, || None), None);
        assert!(Walk::from_bytes(&none.to_bytes().unwrap())
            .kept
            .ids
            .is_empty());
    }

    #[test]
    fn damaged_or_foreign_bytes_are_an_empty_memo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one").unwrap();
        let f = Fingerprint::of(&path).unwrap();
        let walk = Walk::none();
        walk.id(&path, &f, || Some("id".into()));
        let bytes = walk.to_bytes().unwrap();
        assert_eq!(Walk::from_bytes(&bytes).kept.ids.len(), 1);
        for at in [0, MAGIC.len(), bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            assert!(
                Walk::from_bytes(&damaged).kept.ids.is_empty(),
                "byte {at} flipped"
            );
        }
        assert!(Walk::from_bytes(&bytes[..bytes.len() - 1])
            .kept
            .ids
            .is_empty());
        assert!(Walk::from_bytes(b"").kept.ids.is_empty());
    }
}
