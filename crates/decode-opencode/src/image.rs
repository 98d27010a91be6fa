//! A database as SQLite would read it, taken without SQLite touching OpenCode's files: the main
//! file's bytes with every committed frame of its write-ahead log (`-wal`) applied, as one
//! image in memory.
//!
//! OpenCode keeps its database in WAL mode and does not checkpoint it on exit, so its newest
//! turns are often only in the `-wal`. SQLite itself cannot read that without writing or
//! missing something: a read-only connection (`mode=ro`) still maps the `-shm` index
//! read-write, writing it (and creating it, when it is missing) and taking locks on it, while an
//! immutable one (`immutable=1`) ignores the `-wal` and so the newest turns. Both files are read
//! here instead, as plain files, without touching their access times; the log is replayed the
//! way SQLite's recovery replays it (frames whose salts match the header and whose running
//! checksums hold, up to the last commit); and the image is handed to SQLite in memory. Nothing
//! is written, created or locked beside OpenCode's database.

use std::io::Read;
use std::path::{Path, PathBuf};

use history_core::{open_untouched, DecodeError, Fingerprint, MAX_FILE_BYTES};

/// The database's files now: the main file and its log, when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Files {
    pub(crate) db: (PathBuf, Fingerprint),
    pub(crate) wal: Option<(PathBuf, Fingerprint)>,
}

impl Files {
    /// The files of the database at `db`, by a stat of each.
    pub(crate) fn of(db: &Path) -> std::io::Result<Files> {
        let wal_path = wal_of(db);
        let wal = match Fingerprint::of(&wal_path) {
            Ok(f) => Some((wal_path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        Ok(Files {
            db: (db.to_path_buf(), Fingerprint::of(db)?),
            wal,
        })
    }

    /// The paths, the main file first.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.db.0.clone()];
        paths.extend(self.wal.as_ref().map(|(p, _)| p.clone()));
        paths
    }
}

/// The log beside the database at `db` (`opencode.db-wal`).
pub(crate) fn wal_of(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// How many times a read that met the files changing is tried again.
const TRIES: usize = 4;

/// The image of the database at `db`, and its files as they were when it was read: read again
/// while a writer changed them in between (a checkpoint copies the log into the main file).
pub(crate) fn read(db: &Path) -> Result<(Vec<u8>, Files), DecodeError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| DecodeError::Io { path, source }
    };
    let mut last = None;
    for _ in 0..TRIES {
        let before = Files::of(db).map_err(io(db))?;
        let main = read_whole(&before.db.0)?;
        let wal = match &before.wal {
            Some((path, _)) => Some(read_whole(path)?),
            None => None,
        };
        let image = apply(main, wal.as_deref());
        let after = Files::of(db).map_err(io(db))?;
        if after == before {
            return Ok((image, before));
        }
        last = Some((image, before));
    }
    // Still changing: what was read is consistent as far as the log's checksums tell.
    last.ok_or_else(|| DecodeError::Invalid(format!("{}: cannot be read", db.display())))
}

/// A file's bytes, without touching its access time, refused over [`MAX_FILE_BYTES`].
fn read_whole(path: &Path) -> Result<Vec<u8>, DecodeError> {
    let io = |source| DecodeError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = open_untouched(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(DecodeError::TooLarge {
            what: path.display().to_string(),
            limit: "512 MiB",
        });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(DecodeError::TooLarge {
            what: path.display().to_string(),
            limit: "512 MiB",
        });
    }
    Ok(bytes)
}

const WAL_HEADER: usize = 32;
const FRAME_HEADER: usize = 24;

/// `main` with the committed frames of `wal` applied, its header marked as not in WAL mode (an
/// image in memory has no log of its own).
pub(crate) fn apply(mut main: Vec<u8>, wal: Option<&[u8]>) -> Vec<u8> {
    if let Some(log) = wal.and_then(Log::parse) {
        for (page, bytes) in log.pages {
            let at = (page as usize - 1) * log.page_size;
            if main.len() < at + log.page_size {
                main.resize(at + log.page_size, 0);
            }
            main[at..at + log.page_size].copy_from_slice(bytes);
        }
        main.truncate(log.pages_after as usize * log.page_size);
    }
    // Bytes 18 and 19: the file format's write and read versions, 2 for WAL, 1 for a rollback
    // journal, which is what a database in memory keeps.
    if main.len() >= 100 && main[18] == 2 && main[19] == 2 {
        main[18] = 1;
        main[19] = 1;
    }
    main
}

/// The committed content of a write-ahead log.
struct Log<'a> {
    page_size: usize,
    /// Each page's last committed bytes, in the order they were last written.
    pages: Vec<(u32, &'a [u8])>,
    /// The database's size in pages after the last commit.
    pages_after: u32,
}

impl<'a> Log<'a> {
    /// The log's committed frames; `None` for a log without a valid header or commit.
    fn parse(wal: &'a [u8]) -> Option<Log<'a>> {
        let header = wal.get(..WAL_HEADER)?;
        let magic = be(header, 0);
        if magic & !1 != 0x377f_0682 {
            return None;
        }
        let big_endian = magic & 1 == 1;
        let page_size = be(header, 8) as usize;
        if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
            return None;
        }
        let salt = (be(header, 16), be(header, 20));
        let mut sum = checksum((0, 0), &header[..24], big_endian);
        if sum != (be(header, 24), be(header, 28)) {
            return None;
        }
        let mut latest: std::collections::HashMap<u32, &'a [u8]> = Default::default();
        let mut pending: Vec<(u32, &'a [u8])> = Vec::new();
        let mut committed: Option<u32> = None;
        let mut at = WAL_HEADER;
        while let Some(frame) = wal.get(at..at + FRAME_HEADER + page_size) {
            let (page, commit) = (be(frame, 0), be(frame, 4));
            if page == 0 || (be(frame, 8), be(frame, 12)) != salt {
                break;
            }
            sum = checksum(sum, &frame[..8], big_endian);
            sum = checksum(sum, &frame[FRAME_HEADER..], big_endian);
            if sum != (be(frame, 16), be(frame, 20)) {
                break;
            }
            pending.push((page, &frame[FRAME_HEADER..]));
            if commit != 0 {
                latest.extend(pending.drain(..));
                committed = Some(commit);
            }
            at += FRAME_HEADER + page_size;
        }
        let pages_after = committed?;
        let mut pages: Vec<(u32, &'a [u8])> = latest
            .into_iter()
            .filter(|(page, _)| *page <= pages_after)
            .collect();
        pages.sort_by_key(|(page, _)| *page);
        Some(Log {
            page_size,
            pages,
            pages_after,
        })
    }
}

fn be(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// SQLite's WAL checksum of `data` (a multiple of 8 bytes), going on from `(s0, s1)`.
fn checksum((mut s0, mut s1): (u32, u32), data: &[u8], big_endian: bool) -> (u32, u32) {
    let word = |b: &[u8]| {
        let b = [b[0], b[1], b[2], b[3]];
        if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    for pair in data.chunks_exact(8) {
        s0 = s0.wrapping_add(word(&pair[..4])).wrapping_add(s1);
        s1 = s1.wrapping_add(word(&pair[4..])).wrapping_add(s0);
    }
    (s0, s1)
}
