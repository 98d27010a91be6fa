//! Where discovery keeps what each harness's walk of its root saw ([`history_core::Walk`]):
//! one file per harness, in a directory of its own beside the overview's, each written whole
//! and renamed into place, never through a link, as the overview's entries are.

use std::ffi::OsString;
use std::path::PathBuf;

use history_core::WalkMemos;

use crate::store::{create_dir, open_dir, read_capped, write_atomically};

/// The most a memo may hold (a root of some 200,000 transcripts); a larger one is not kept.
pub const MAX_MEMO_BYTES: u64 = 64 * 1024 * 1024;

/// The memos of one directory, `<cache root>/history-walks` by default.
#[derive(Clone, Debug)]
pub struct WalkMemoDir {
    dir: PathBuf,
}

impl WalkMemoDir {
    /// The memos kept in `dir` (created, 0700, when the first is saved).
    pub fn new(dir: impl Into<PathBuf>) -> WalkMemoDir {
        WalkMemoDir { dir: dir.into() }
    }

    /// The file of `harness`'s memo: its name, when it is a plain one.
    fn name(harness: &str) -> Option<OsString> {
        let plain = !harness.is_empty()
            && (harness.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| format!("{harness}.walk").into())
    }
}

impl WalkMemos for WalkMemoDir {
    fn load(&self, harness: &str) -> Option<Vec<u8>> {
        let dir = open_dir(&self.dir).ok()?;
        read_capped(&dir, &Self::name(harness)?, MAX_MEMO_BYTES)
    }

    fn save(&self, harness: &str, bytes: &[u8]) {
        let Some(name) = Self::name(harness) else {
            return;
        };
        if bytes.len() as u64 > MAX_MEMO_BYTES {
            return;
        }
        if let Ok(dir) = create_dir(&self.dir) {
            // Best effort: a memo not saved only costs the next walk a listing.
            let _ = write_atomically(&dir, &name, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_is_kept_per_harness_and_never_written_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let memos = WalkMemoDir::new(tmp.path().join("a/history-walks"));
        assert_eq!(memos.load("pi"), None);
        memos.save("pi", b"one");
        memos.save("codex", b"two");
        memos.save("../x", b"three");
        assert_eq!(memos.load("pi").as_deref(), Some(&b"one"[..]));
        assert_eq!(memos.load("codex").as_deref(), Some(&b"two"[..]));
        assert_eq!(memos.load("../x"), None);
        memos.save("pi", b"again");
        assert_eq!(memos.load("pi").as_deref(), Some(&b"again"[..]));
        let mut names: Vec<_> = std::fs::read_dir(tmp.path().join("a/history-walks"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["codex.walk", "pi.walk"]);
        // A link planted at a memo's name is replaced, not written through.
        let target = tmp.path().join("target");
        std::fs::write(&target, "theirs").unwrap();
        let at = tmp.path().join("a/history-walks/pi.walk");
        std::fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink(&target, &at).unwrap();
        assert_eq!(memos.load("pi"), None, "a link is not read");
        memos.save("pi", b"mine");
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
        assert_eq!(memos.load("pi").as_deref(), Some(&b"mine"[..]));
    }
}
