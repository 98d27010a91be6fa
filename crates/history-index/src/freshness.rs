//! Whether what the index holds of a session is what the session's files hold now: fresh,
//! appended to, failed or stale ([`Freshness`]). An update reads it to know what to index again
//! and from where; a query reads it to know which sessions the index answers for and which it
//! must leave to a decode. Both read this one decision, so they cannot disagree on whether a
//! session's stored lines are still its lines.
//!
//! The decision compares each stored witness (a file, its fingerprint before it was read, and
//! the hash of what was indexed of it) with the file now: the same fingerprints mean the same
//! bytes; the same file, longer, still holding what was indexed, means bytes were appended;
//! anything else means the stored lines may no longer be the session's.

use std::path::{Path, PathBuf};

use history_core::same_files;
use history_core::Snapshot;
use history_core::{Layout, SessionFile, Transcript};

use crate::store::{checkpoint_hash, Census, Fingerprint, SessionRow, SessionState, Witness};

/// A session's files with their fingerprints, its own file first.
pub type Files = Vec<(PathBuf, Fingerprint)>;

/// What the index holds of a session, against the session's files now.
///
/// `S` is what an appended session carries: the [`Snapshot`] its decode goes on from once it is
/// read ([`Freshness::with_snapshot`]), or [`Unread`] before. The decision itself reads no
/// snapshot: one can be megabytes, and a query reads it on the thread that decodes the appended
/// lines while its own looks up the stored ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness<S = Option<Snapshot>> {
    /// Indexed by this build from exactly these files: the stored lines are the session's.
    Fresh,
    /// Indexed by this build from these same files when they were shorter, each still holding
    /// what was indexed of it: the stored lines still hold, and a decode of the appended bytes
    /// goes on from the snapshot (`None`: the decode left none, and the session is decoded from
    /// its start again, its stored lines kept where it gives them unchanged).
    Appended(S),
    /// This build's last attempt to index exactly these files failed: another attempt would
    /// fail again, so the session is read without the index until its files change. So too,
    /// always, for a session of records rather than lines ([`Layout::Records`]): the index
    /// never holds one, and a search reads it whole.
    Failed,
    /// Never stored, stored by another build, or stored from files that were replaced,
    /// rewritten, truncated, or that are not the session's files now: it is indexed again from
    /// its start, and read without the index until then.
    Stale,
}

/// An appended session's snapshot, not read yet ([`Freshness::with_snapshot`] reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unread;

impl Freshness<Unread> {
    /// What the index holds of a session it stored as `row` (`None`: it holds nothing of it),
    /// for decoders of `version`, whose files are `now`.
    pub fn of(row: Option<&SessionRow>, version: &str, now: &[(PathBuf, Fingerprint)]) -> Self {
        let Some(row) = row.filter(|row| *row.decoder_version == *version) else {
            return Freshness::Stale;
        };
        let unchanged = same_files(row.witnesses.iter().map(|w| &w.file), now);
        match (row.state, unchanged) {
            (SessionState::Indexed, true) => Freshness::Fresh,
            (SessionState::Failed, true) => Freshness::Failed,
            (SessionState::Indexed, false) if only_appended(&row.witnesses, now) => {
                Freshness::Appended(Unread)
            }
            _ => Freshness::Stale,
        }
    }

    /// The session `file` of `source` as it is now: its files, with their fingerprints, and what
    /// the index holds of it ([`Freshness::of`]). `None` when a file cannot be stat'ed.
    pub fn of_session(
        source: &dyn Transcript,
        file: &SessionFile,
        row: Option<&SessionRow>,
        version: &str,
    ) -> Option<(Files, Self)> {
        if source.layout() == Layout::Records {
            return Some((Vec::new(), Freshness::Failed));
        }
        let now = current_files(source, file, row)?;
        let freshness = Freshness::of(row, version, &now);
        Some((now, freshness))
    }

    /// What [`Freshness::of_session`] answers, with the session's files now only for an
    /// appended session (its new lines are read from them): a search judges every session, and
    /// most are unchanged, their files the stored witnesses.
    pub fn judge(
        source: &dyn Transcript,
        file: &SessionFile,
        row: Option<&SessionRow>,
        version: &str,
    ) -> Option<(Option<Files>, Self)> {
        if source.layout() == Layout::Records {
            return Some((None, Freshness::Failed));
        }
        if let Some(row) = row.filter(|row| settled_and_unchanged(file, row)) {
            let current = *row.decoder_version == *version;
            return Some((None, Freshness::unchanged(current, row.state)));
        }
        let (now, freshness) = Freshness::of_session(source, file, row, version)?;
        Some((
            matches!(freshness, Freshness::Appended(_)).then_some(now),
            freshness,
        ))
    }

    /// [`Freshness::judge`] of the session stored at position `at` of `census`: of a settled
    /// session whose one file is unchanged (most sessions), from its row as the census holds
    /// it, without making the row; on 20,000 small sessions that halved the judging.
    pub fn judge_in(
        source: &dyn Transcript,
        file: &SessionFile,
        census: &Census,
        at: Option<usize>,
        version: &str,
    ) -> Option<(Option<Files>, Self)> {
        match Freshness::settled_in(source, file, census, at, version) {
            Some(freshness) => Some((None, freshness)),
            None => Freshness::judge(source, file, at.map(|at| census.row(at)).as_ref(), version),
        }
    }

    /// What the index holds of a session settled and unchanged since it was stored at position
    /// `at` of `census`, read from its row in place; `None` when only the row made can tell
    /// ([`Census::unchanged`]).
    pub fn settled_in(
        source: &dyn Transcript,
        file: &SessionFile,
        census: &Census,
        at: Option<usize>,
        version: &str,
    ) -> Option<Self> {
        if source.layout() == Layout::Records {
            return None;
        }
        let (stored, state) = census.unchanged(at?, file)?;
        Some(Freshness::unchanged(stored == version, state))
    }

    /// What the index holds of a session settled and unchanged since it was stored in `state`,
    /// by the current decoders or not.
    fn unchanged(current: bool, state: SessionState) -> Self {
        match (current, state) {
            (false, _) => Freshness::Stale,
            (true, SessionState::Indexed) => Freshness::Fresh,
            (true, SessionState::Failed) => Freshness::Failed,
        }
    }

    /// The same answer, an appended session's with the snapshot `read` gives (called for an
    /// appended session only).
    pub fn with_snapshot<E>(
        self,
        read: impl FnOnce() -> Result<Option<Snapshot>, E>,
    ) -> Result<Freshness, E> {
        Ok(match self {
            Freshness::Fresh => Freshness::Fresh,
            Freshness::Appended(Unread) => Freshness::Appended(read()?),
            Freshness::Failed => Freshness::Failed,
            Freshness::Stale => Freshness::Stale,
        })
    }
}

/// Whether the files `now` are the `stored` witnesses' files with bytes appended: the same
/// files, none shorter, each still holding what was indexed of it (its checkpoint's hash).
fn only_appended(stored: &[Witness], now: &[(PathBuf, Fingerprint)]) -> bool {
    stored.len() == now.len()
        && stored.iter().zip(now).all(|(w, (path, f))| {
            w.file.path == *path
                && f.may_extend(&w.file.fingerprint)
                && checkpoint_hash(path, w.checkpoint).ok() == Some(w.checkpoint_hash)
        })
}

/// The files of a session now, its lineage, with each one's fingerprint; `None` when a file
/// cannot be stat'ed.
fn fingerprints(source: &dyn Transcript, file: &SessionFile) -> Option<Files> {
    (source.lineage(file).into_iter())
        .map(|path| fingerprint_now(file, &path).map(|f| (path, f)))
        .collect()
}

/// The fingerprint of `path`: for the session's own file, the one its discovery took (before
/// anything was read, as a stat here would be), else a stat now.
fn fingerprint_now(file: &SessionFile, path: &Path) -> Option<Fingerprint> {
    match file.fingerprint {
        Some(f) if path == file.path => Some(f),
        _ => Fingerprint::of(path).ok(),
    }
}

/// The session's files with their fingerprints now, as [`fingerprints`] takes them; but when
/// the stored session read every file it inherits from (its lineage is not open) and each of its
/// witnesses still has its stored fingerprint, those are the files: unchanged files name the same
/// ancestors, so only their stats are taken and no header is read again.
fn current_files(
    source: &dyn Transcript,
    file: &SessionFile,
    row: Option<&SessionRow>,
) -> Option<Files> {
    match row.filter(|row| settled_and_unchanged(file, row)) {
        Some(row) => Some(
            (row.witnesses.iter())
                .map(|w| (w.file.path.clone(), w.file.fingerprint))
                .collect(),
        ),
        None => fingerprints(source, file),
    }
}

/// Whether the stored session read every file it inherits from (its lineage is not open) and
/// each of its witnesses, its own file first, still has its stored fingerprint.
fn settled_and_unchanged(file: &SessionFile, row: &SessionRow) -> bool {
    !row.lineage_open
        && (row.witnesses.first()).is_some_and(|w| w.file.path == file.path)
        && (row.witnesses.iter())
            .all(|w| fingerprint_now(file, &w.file.path) == Some(w.file.fingerprint))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::{checkpoint_blocks, CHECKPOINT_WINDOW};
    use history_core::{SessionKey, Timestamp};

    const VERSION: &str = "d1";

    /// A session file with `body`, and the row of the session indexed from it as it is.
    fn indexed(dir: &Path, body: &[u8]) -> (PathBuf, SessionRow) {
        let path = dir.join("s.jsonl");
        std::fs::write(&path, body).unwrap();
        let row = row_of(&[&path], SessionState::Indexed);
        (path, row)
    }

    /// The row of a session stored from `paths` as they are now.
    fn row_of(paths: &[&Path], state: SessionState) -> SessionRow {
        let witnesses: Vec<Witness> = (paths.iter())
            .map(|path| {
                let fingerprint = Fingerprint::of(path).unwrap();
                Witness {
                    file: history_core::Witness {
                        path: path.to_path_buf(),
                        fingerprint,
                    },
                    checkpoint: fingerprint.size,
                    checkpoint_hash: checkpoint_hash(path, fingerprint.size).unwrap(),
                }
            })
            .collect();
        SessionRow {
            key: SessionKey::new("claude", "s"),
            root_path: paths[0].to_path_buf(),
            state,
            reason: None,
            decoder_version: VERSION.into(),
            indexed_at: Timestamp(0),
            bytes: witnesses.iter().map(|w| w.checkpoint).sum(),
            witnesses,
            lineage_open: false,
        }
    }

    /// The files `paths` with their fingerprints now.
    fn now(paths: &[&Path]) -> Files {
        (paths.iter())
            .map(|p| (p.to_path_buf(), Fingerprint::of(p).unwrap()))
            .collect()
    }

    fn freshness(row: Option<&SessionRow>, paths: &[&Path]) -> Freshness<Unread> {
        Freshness::of(row, VERSION, &now(paths))
    }

    #[test]
    fn a_session_indexed_from_its_files_as_they_are_is_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let (path, row) = indexed(dir.path(), b"one\ntwo\n");
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Fresh);
        let other = dir.path().join("parent.jsonl");
        std::fs::write(&other, b"zero\n").unwrap();
        let both = row_of(&[&path, &other], SessionState::Indexed);
        assert_eq!(freshness(Some(&both), &[&path, &other]), Freshness::Fresh);
    }

    /// What the census reads of a row in place is what the row made says: a session it calls
    /// unchanged is settled and unchanged, with the row's version and state; one it leaves to
    /// the row made is not, or has another file among its witnesses, or was not stat'ed by
    /// discovery.
    #[test]
    fn the_census_judges_an_unchanged_session_as_its_row_made_does() {
        let dir = tempfile::tempdir().unwrap();
        let (path, row) = indexed(dir.path(), b"one\ntwo\n");
        let parent = dir.path().join("parent.jsonl");
        std::fs::write(&parent, b"zero\n").unwrap();
        let file = |path: &Path| {
            let meta = std::fs::metadata(path).unwrap();
            SessionFile::from_metadata(SessionKey::new("claude", "s"), path.to_path_buf(), &meta)
        };
        let open = SessionRow {
            lineage_open: true,
            ..row.clone()
        };
        let failed = row_of(&[&path], SessionState::Failed);
        let other = SessionRow {
            decoder_version: "d0".into(),
            ..row.clone()
        };
        let inherits = row_of(&[&path, &parent], SessionState::Indexed);
        let unstatted = SessionFile {
            fingerprint: None,
            ..file(&path)
        };
        let cases = [
            (&row, file(&path), true),
            (&failed, file(&path), true),
            (&other, file(&path), true),
            (&open, file(&path), false),
            (&inherits, file(&path), false),
            (&row, file(&parent), false),
            (&row, unstatted, false),
        ];
        for (i, (row, file, in_place)) in cases.into_iter().enumerate() {
            let census = Census::of_rows(&[(1, row.clone())]);
            match census.unchanged(0, &file) {
                Some((version, state)) => {
                    assert!(in_place, "case {i}");
                    assert!(settled_and_unchanged(&file, row), "case {i}");
                    assert_eq!((version, state), (&*row.decoder_version, row.state));
                }
                None => {
                    assert!(!in_place, "case {i}");
                    let unseen = row.witnesses.len() > 1 || file.fingerprint.is_none();
                    assert!(!settled_and_unchanged(&file, row) || unseen, "case {i}");
                }
            }
        }
    }

    #[test]
    fn a_session_whose_file_only_grew_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let (path, row) = indexed(dir.path(), &vec![b'a'; 10_000]);
        let mut longer = vec![b'a'; 10_000];
        longer.extend_from_slice(b"more\n");
        std::fs::write(&path, &longer).unwrap();
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Appended(Unread));
    }

    #[test]
    fn a_session_whose_last_attempt_failed_on_these_files_has_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"not a transcript\n").unwrap();
        let row = row_of(&[&path], SessionState::Failed);
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Failed);
        // Once its file changes, it is tried again, even if it only grew.
        std::fs::write(&path, b"not a transcript\nstill not\n").unwrap();
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Stale);
    }

    #[test]
    fn a_session_stored_otherwise_or_not_at_all_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (path, row) = indexed(dir.path(), &vec![b'a'; 10_000]);
        assert_eq!(freshness(None, &[&path]), Freshness::Stale);
        // Another build's.
        let now = now(&[&path]);
        assert_eq!(Freshness::of(Some(&row), "d2", &now), Freshness::Stale);
        // Another lineage: a file more, or another file.
        let other = dir.path().join("parent.jsonl");
        std::fs::write(&other, b"zero\n").unwrap();
        assert_eq!(freshness(Some(&row), &[&path, &other]), Freshness::Stale);
        assert_eq!(freshness(Some(&row), &[&other]), Freshness::Stale);
        // Longer, but rewritten at its start.
        let mut rewritten = vec![b'b'; 10_000];
        rewritten.extend_from_slice(b"more\n");
        std::fs::write(&path, &rewritten).unwrap();
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Stale);
        // The same size, rewritten between the blocks the checkpoint hash reads, its
        // modification time put back: only its change time tells.
        let len = 1 << 20;
        let at = (checkpoint_blocks(len).nth(7).unwrap() + CHECKPOINT_WINDOW + 1000) as usize;
        assert!(
            checkpoint_blocks(len).all(|b| (at as u64) < b || (at as u64) >= b + CHECKPOINT_WINDOW)
        );
        let (path, row) = indexed(dir.path(), &vec![b'a'; len as usize]);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut middle = vec![b'a'; len as usize];
        middle[at] = b'b';
        std::fs::write(&path, &middle).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(
            checkpoint_hash(&path, len).unwrap(),
            row.witnesses[0].checkpoint_hash
        );
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Stale);
        // Shorter.
        std::fs::write(&path, vec![b'a'; 9_000]).unwrap();
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Stale);
        // Replaced by another file of the same bytes and more.
        let (path, row) = indexed(dir.path(), b"one\n");
        let replacement = dir.path().join("new.jsonl");
        std::fs::write(&replacement, b"one\ntwo\n").unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        assert_eq!(freshness(Some(&row), &[&path]), Freshness::Stale);
    }

    #[test]
    fn only_an_appended_session_reads_its_snapshot() {
        let snapshot = Snapshot {
            offset: 4,
            lines: 1,
            settled: 1,
            state: vec![7],
        };
        let read = || Ok::<_, ()>(Some(snapshot.clone()));
        assert_eq!(
            Freshness::Appended(Unread).with_snapshot(read),
            Ok(Freshness::Appended(Some(snapshot.clone())))
        );
        let unread = || -> Result<Option<Snapshot>, ()> { panic!("read a snapshot") };
        assert_eq!(Freshness::Fresh.with_snapshot(unread), Ok(Freshness::Fresh));
        assert_eq!(
            Freshness::Failed.with_snapshot(unread),
            Ok(Freshness::Failed)
        );
        assert_eq!(Freshness::Stale.with_snapshot(unread), Ok(Freshness::Stale));
        let failing = || Err::<Option<Snapshot>, _>("unreadable");
        assert_eq!(
            Freshness::Appended(Unread).with_snapshot(failing),
            Err("unreadable")
        );
    }
}
