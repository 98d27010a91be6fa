//! Damage a query met, noted beside the database: `<name>.damaged` holds the device and inode of
//! the damaged file, so that the next update moves that file aside and rebuilds, and a note
//! about a database since replaced is ignored. A query never moves the database itself: an
//! update may be writing it.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::place::{with_suffix, Place};

fn marker(db: &Path) -> PathBuf {
    with_suffix(db, ".damaged")
}

fn identity_text(place: &Place) -> Option<String> {
    place.identity().map(|(dev, ino)| format!("{dev} {ino}\n"))
}

/// Notes that the database `db`, the file `place` describes, is damaged. Best effort: without
/// the note, the damage is met again by the next query, which scans as this one did.
pub(super) fn note(db: &Path, place: &Place) {
    let Some(text) = identity_text(place) else {
        return;
    };
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(marker(db));
    if let Ok(mut file) = file {
        let _ = file.write_all(text.as_bytes());
    }
}

/// Whether a note names the database file at `db` now; a note about another file is removed.
pub(super) fn noted(db: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(marker(db)) else {
        return false;
    };
    let now = identity_text(&Place::of(db));
    if now.as_deref() != Some(text.as_str()) {
        let _ = std::fs::remove_file(marker(db));
        return false;
    }
    true
}

/// Forgets the note: the file it named was moved aside.
pub(super) fn clear(db: &Path) {
    let _ = std::fs::remove_file(marker(db));
}
