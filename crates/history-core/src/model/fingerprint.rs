//! What a source file looked like when it was read: its stat fingerprint, and the witness that
//! pairs it with the file's path. The overview cache and the search index both keep the
//! witnesses of what they derived from transcripts and compare them with the files now, with
//! [`same_files`]: one rule for both, so the two never disagree on whether a file changed.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A file's identity and version as `stat(2)` reports them.
///
/// Any write to the file changes its size, its modification time or at least its change time;
/// replacing it changes the device or inode. Two equal fingerprints therefore mean "the same
/// bytes, as far as the filesystem can tell without reading them".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The device the file lives on.
    pub dev: u64,
    /// The file's inode number.
    pub ino: u64,
    /// The file's size in bytes.
    pub size: u64,
    /// The last modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// The last status change time in nanoseconds since the epoch.
    pub ctime_ns: i64,
}

impl Fingerprint {
    /// The fingerprint of `path`, following symbolic links (a transcript may be reached
    /// through one; what matters is the file read).
    pub fn of(path: &Path) -> io::Result<Fingerprint> {
        Ok(Fingerprint::from_stat(&rustix::fs::stat(path)?))
    }

    /// The fingerprint of an open file: the one actually read, whatever its path names now.
    pub fn of_file(file: &File) -> io::Result<Fingerprint> {
        Ok(Fingerprint::from_stat(&rustix::fs::fstat(file)?))
    }

    /// The fingerprint in a `stat` the standard library took.
    pub fn of_metadata(meta: &std::fs::Metadata) -> Fingerprint {
        use std::os::unix::fs::MetadataExt;
        Fingerprint {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the file described by `self` may be `before` with bytes appended: unchanged, or
    /// the same file, longer. A file changed but no longer was rewritten in place (its change
    /// time moves even when its modification time is put back); only a hash of what was read
    /// can tell an append from a rewrite that also made it longer.
    pub fn may_extend(&self, before: &Fingerprint) -> bool {
        self == before
            || (self.dev == before.dev && self.ino == before.ino && self.size > before.size)
    }

    fn from_stat(st: &rustix::fs::Stat) -> Fingerprint {
        // The stat fields' integer types differ between architectures; the casts widen them all
        // to one portable shape (a negative size cannot occur and would read as a huge one).
        #[allow(clippy::unnecessary_cast)]
        Fingerprint {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as u64,
            mtime_ns: nanos(st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime_ns: nanos(st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }
}

/// A directory held open so that the files in it are stat'ed by their names: a stat by a
/// transcript's whole path walks every directory above it again (about 1.1 µs a file here,
/// against 0.45 µs by its name).
struct OpenDir(rustix::fd::OwnedFd);

impl OpenDir {
    /// `path`, opened only to name the files in it; `None` when it cannot be.
    fn open(path: &Path) -> Option<OpenDir> {
        use rustix::fs::{Mode, OFlags};
        // Only to name files in it: on Linux without read permission, as a path's stat needs.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let how = OFlags::PATH;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let how = OFlags::RDONLY;
        let flags = how | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty())
            .ok()
            .map(OpenDir)
    }

    /// The fingerprint of the regular file `name` in it, following a symbolic link as the stat
    /// of its path does; `None` for anything else, or when it cannot be stat'ed.
    fn file(&self, name: &std::ffi::OsStr) -> Option<Fingerprint> {
        let st = rustix::fs::statat(&self.0, name, rustix::fs::AtFlags::empty()).ok()?;
        let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
        kind.is_file().then(|| Fingerprint::from_stat(&st))
    }
}

/// Files stat'ed by their names in their directories: discovery's list of files, which come a
/// directory at a time. Each thread holds open the directory of the file it stat'ed last, and
/// no other: a history of thousands of directories (Codex's one a day) never holds thousands
/// of descriptors.
pub struct DirStats<'a> {
    paths: &'a [PathBuf],
    /// Per file, the number of its directory, and where its name starts in its path.
    places: Vec<(usize, usize)>,
    /// Which list this is, among those of the process: a thread's open directory is one of
    /// this list's only when it was opened for it.
    list: u64,
}

thread_local! {
    /// The directory this thread stat'ed in last: its list, its number there, and the directory
    /// itself (`None` when it could not be opened).
    static OPEN_DIR: std::cell::RefCell<Option<(u64, usize, Option<OpenDir>)>> =
        const { std::cell::RefCell::new(None) };
}

impl<'a> DirStats<'a> {
    /// The stats of `paths`, the files of a directory next to each other.
    pub fn new(paths: &'a [PathBuf]) -> DirStats<'a> {
        use std::os::unix::ffi::OsStrExt;
        static LISTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut places = Vec::with_capacity(paths.len());
        let mut dirs = 0;
        let mut last: &[u8] = &[];
        for (i, path) in paths.iter().enumerate() {
            let bytes = path.as_os_str().as_bytes();
            let name = memchr::memrchr(b'/', bytes).map_or(0, |k| k + 1);
            if i > 0 && bytes[..name] != *last {
                dirs += 1;
            }
            last = &bytes[..name];
            places.push((dirs, name));
        }
        DirStats {
            paths,
            places,
            list: LISTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The fingerprint of the file at `paths[i]` if it is a regular file, a symbolic link
    /// followed as the stat of its path follows it; `None` for anything else, or when it cannot
    /// be stat'ed.
    pub fn file(&self, i: usize) -> Option<Fingerprint> {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let path = &self.paths[i];
        let (dir, name) = self.places[i];
        let bytes = path.as_os_str().as_bytes();
        let by_name = (0 < name && name < bytes.len()).then(|| {
            OPEN_DIR.with_borrow_mut(|open| {
                if !matches!(open, Some((list, d, _)) if *list == self.list && *d == dir) {
                    // The one held before is closed.
                    let at = Path::new(OsStr::from_bytes(&bytes[..name]));
                    *open = Some((self.list, dir, OpenDir::open(at)));
                }
                let held = open.as_ref().and_then(|(_, _, held)| held.as_ref())?;
                Some(held.file(OsStr::from_bytes(&bytes[name..])))
            })
        });
        match by_name.flatten() {
            Some(fingerprint) => fingerprint,
            // A directory that could not be opened: the path's own stat.
            None => Some(Fingerprint::of_metadata(
                &std::fs::metadata(path).ok().filter(|m| m.is_file())?,
            )),
        }
    }
}

impl Drop for DirStats<'_> {
    /// Closes the directory this thread holds for the list (the workers' went with them).
    fn drop(&mut self) {
        OPEN_DIR.with_borrow_mut(|open| {
            if matches!(open, Some((list, ..)) if *list == self.list) {
                *open = None;
            }
        });
    }
}

/// One file a stored value was derived from, as it was before it was read. Its serialized form
/// (`{"path": …, "fingerprint": {…}}`) is what the overview cache's entries hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// The file's path.
    pub path: PathBuf,
    /// Its fingerprint, taken before it was read.
    pub fingerprint: Fingerprint,
}

/// Whether `stored` witnesses are exactly the files `now`, as [`fingerprints`] takes them: the
/// same paths in the same order, none added or missing, each with the same fingerprint.
pub fn same_files<'a>(
    stored: impl IntoIterator<Item = &'a Witness>,
    now: &[(PathBuf, Fingerprint)],
) -> bool {
    let mut now = now.iter();
    let all_same = stored.into_iter().all(|w| {
        now.next()
            .is_some_and(|(path, f)| w.path == *path && w.fingerprint == *f)
    });
    all_same && now.next().is_none()
}

/// The fingerprints of `paths`, in order; `None` if any of them cannot be taken. Take them
/// before reading the files.
pub fn fingerprints(paths: &[PathBuf]) -> Option<Vec<(PathBuf, Fingerprint)>> {
    paths
        .iter()
        .map(|p| Fingerprint::of(p).ok().map(|f| (p.clone(), f)))
        .collect()
}

/// Seconds and nanoseconds as nanoseconds; times beyond the year 2262 saturate rather than wrap.
fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a stat of the whole path says of a file, where it is a regular one.
    fn by_path(path: &Path) -> Option<Fingerprint> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(Fingerprint::of_metadata(&meta))
    }

    /// The descriptors this process holds.
    #[cfg(target_os = "linux")]
    fn descriptors() -> usize {
        std::fs::read_dir("/proc/self/fd").unwrap().count()
    }

    #[test]
    fn a_file_stat_by_its_name_is_the_stat_of_its_path() {
        let root = std::env::temp_dir().join(format!("nh-dirstats-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut paths = Vec::new();
        for d in 0..40 {
            let dir = root.join(format!("d{d}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..3 {
                let path = dir.join(format!("{f}.jsonl"));
                std::fs::write(&path, "x".repeat(d * 3 + f)).unwrap();
                paths.push(path);
            }
        }
        let d0 = root.join("d0");
        std::os::unix::fs::symlink(d0.join("1.jsonl"), d0.join("to-file")).unwrap();
        std::os::unix::fs::symlink(root.join("d1"), d0.join("to-dir")).unwrap();
        std::fs::create_dir(d0.join("sub")).unwrap();
        paths.extend(["to-file", "to-dir", "sub", "missing"].map(|n| d0.join(n)));
        // A directory's files apart, a directory missing, a path with no directory, and one
        // ending in a separator.
        paths.push(root.join("d3/0.jsonl"));
        paths.push(root.join("gone/0.jsonl"));
        paths.push(PathBuf::from("no-such-file-here"));
        paths.push(PathBuf::from(format!("{}/", d0.join("0.jsonl").display())));
        #[cfg(target_os = "linux")]
        let before = descriptors();
        let stats = DirStats::new(&paths);
        let found: Vec<Option<Fingerprint>> = (0..paths.len()).map(|i| stats.file(i)).collect();
        // One directory held at a time, whatever their number.
        #[cfg(target_os = "linux")]
        assert!(descriptors() <= before + 1);
        for (path, found) in paths.iter().zip(&found) {
            assert_eq!(*found, by_path(path), "{}", path.display());
        }
        assert!(found[..120].iter().all(Option::is_some));
        assert_eq!(
            found[120],
            by_path(&d0.join("1.jsonl")),
            "a link to a file is followed"
        );
        assert!(found[121..124].iter().all(Option::is_none));
        assert_eq!(found[124], found[9]);
        // On every core, in any order.
        let each: Vec<usize> = (0..paths.len()).rev().collect();
        let again = crate::parallel::map(&each, |&i| (i, stats.file(i)));
        assert!(again.iter().all(|(i, f)| *f == found[*i]));
        drop(stats);
        #[cfg(target_os = "linux")]
        assert_eq!(descriptors(), before, "nothing stays open");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_append_changes_the_fingerprint() {
        let dir = std::env::temp_dir().join(format!("nh-fingerprint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        std::fs::write(&path, "a\n").unwrap();
        let before = Fingerprint::of(&path).unwrap();
        assert_eq!(before, Fingerprint::of(&path).unwrap());
        assert_eq!(
            before,
            Fingerprint::of_metadata(&std::fs::metadata(&path).unwrap())
        );
        assert_eq!(before.size, 2);
        std::fs::write(&path, "a\nb\n").unwrap();
        let after = Fingerprint::of(&path).unwrap();
        assert_ne!(before, after);
        assert!(after.may_extend(&before));
        assert_eq!(
            Fingerprint::of_file(&File::open(&path).unwrap()).unwrap(),
            after
        );
        let paths = vec![dir.clone(), dir.join("missing")];
        assert!(Fingerprint::of(&paths[1]).is_err());
        assert!(fingerprints(&paths).is_none());
        assert_eq!(fingerprints(&paths[..1]).map(|v| v.len()), Some(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn fingerprint(ino: u64, size: u64) -> Fingerprint {
        Fingerprint {
            dev: 1,
            ino,
            size,
            mtime_ns: 2,
            ctime_ns: 3,
        }
    }

    #[test]
    fn only_an_unchanged_or_longer_same_file_may_extend() {
        let before = fingerprint(10, 5);
        assert!(before.may_extend(&before));
        assert!(fingerprint(10, 6).may_extend(&before));
        // The same size with another change time: rewritten in place.
        let touched = Fingerprint {
            ctime_ns: 4,
            ..before
        };
        assert!(!touched.may_extend(&before));
        assert!(!fingerprint(10, 4).may_extend(&before));
        assert!(!fingerprint(11, 6).may_extend(&before));
    }

    fn witness(path: &str, f: Fingerprint) -> Witness {
        Witness {
            path: PathBuf::from(path),
            fingerprint: f,
        }
    }

    #[test]
    fn witnesses_are_the_same_files_only_when_every_path_and_fingerprint_is() {
        let (a, b) = (fingerprint(10, 5), fingerprint(11, 7));
        let stored = [witness("/a", a), witness("/b", b)];
        let now = |files: &[(&str, Fingerprint)]| -> Vec<(PathBuf, Fingerprint)> {
            files.iter().map(|(p, f)| (PathBuf::from(p), *f)).collect()
        };
        assert!(same_files(&stored, &now(&[("/a", a), ("/b", b)])));
        assert!(same_files(&[], &now(&[])));
        // A file that changed, one added, one missing, another path, another order.
        assert!(!same_files(
            &stored,
            &now(&[("/a", a), ("/b", fingerprint(11, 8))])
        ));
        assert!(!same_files(
            &stored,
            &now(&[("/a", a), ("/b", b), ("/c", b)])
        ));
        assert!(!same_files(&stored, &now(&[("/a", a)])));
        assert!(!same_files(&stored[..1], &now(&[("/a", a), ("/b", b)])));
        assert!(!same_files(&stored, &now(&[("/a", a), ("/c", b)])));
        assert!(!same_files(&stored, &now(&[("/b", b), ("/a", a)])));
    }

    #[test]
    fn a_witness_serializes_as_the_cache_entries_hold_it() {
        let w = witness("/t.jsonl", fingerprint(4, 9));
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(
            json,
            r#"{"path":"/t.jsonl","fingerprint":{"dev":1,"ino":4,"size":9,"mtime_ns":2,"ctime_ns":3}}"#
        );
        assert_eq!(serde_json::from_str::<Witness>(&json).unwrap(), w);
    }

    #[test]
    fn nanos_saturate_instead_of_overflowing() {
        assert_eq!(nanos(1, 5), 1_000_000_005);
        assert_eq!(nanos(i64::MAX, 1), i64::MAX);
        assert_eq!(nanos(i64::MIN, -1), i64::MIN);
    }
}
