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
