//! What can go wrong with the projection, as stable reason codes.

use std::io;
use std::path::PathBuf;

/// Why the projection could not be opened, read or written.
///
/// Every variant has a stable [`code`](StoreError::code) for `doctor` and `--json`, and says
/// what is wrong with the projection as the end of a sentence that names it ("the search index
/// at … could not be updated: the disk that holds it is full"). The texts never carry SQLite's
/// own messages: those can quote a statement, and no diagnostic may show one. Any of these
/// means "answer by scanning"; none of them is a user-facing failure of a search.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory could not be created or used.
    #[error("{}", directory_cause(code))]
    Directory {
        /// `not_creatable`, `not_a_directory`, `read_only` or `permission_denied`.
        code: &'static str,
    },
    /// The directory, the database or one of its companion files belongs to another user: this
    /// user cannot write it, or (as root) would leave files there that their owner cannot.
    #[error("{} belongs to another user (uid {uid})", path.display())]
    NotOwned {
        /// What belongs to that user: the database's directory, one of its files, or the
        /// nearest existing directory above them where this user may not create one.
        path: PathBuf,
        /// The owner.
        uid: u32,
    },
    /// The filesystem that holds the database is full (or the user is over quota).
    #[error("the disk that holds it is full")]
    DiskFull,
    /// The directory is on a filesystem SQLite's locking and shared memory cannot be trusted on.
    #[error("its directory is on a network filesystem, whose locks SQLite cannot trust")]
    NetworkFilesystem,
    /// A symbolic link stands where the directory or one of the database files should be.
    #[error("a symbolic link stands where it or its directory should be")]
    Symlink,
    /// Something other than a regular file stands where a database file should be.
    #[error("something other than a file stands where it should be")]
    NotAFile,
    /// The database could not be opened or locked in time.
    #[error("another process holds its database locked")]
    Busy,
    /// A write was asked of a store opened read-only because its schema is newer than this build.
    #[error("it was written by a newer build, which this one only reads")]
    Degraded,
    /// The database is damaged; [`Store::open`](crate::store::Store::open) would quarantine it.
    #[error("it is damaged")]
    Corrupt,
    /// The database file was deleted or replaced while a store had it open.
    #[error("it was deleted or replaced while the update ran")]
    Replaced,
    /// An append was asked for a session that is not indexed.
    #[error("the session is not indexed")]
    NotIndexed,
    /// An append named other witness files than the session's.
    #[error("the witnesses are not the session's")]
    WitnessMismatch,
    /// A failure reason that is not a reason code (`[a-z0-9_]`, 1 to 32 characters).
    #[error("invalid failure reason code")]
    InvalidReason,
    /// A lines record names a witness the session does not have, or a line's seq repeats.
    #[error("invalid line record")]
    InvalidLine,
    /// A filesystem operation failed.
    #[error("its files could not be used ({kind})")]
    Io {
        /// The kind of I/O error.
        kind: io::ErrorKind,
    },
    /// SQLite refused to write a database it could only open for reading (its file or
    /// directory is not writable, or the filesystem is read-only).
    #[error("its database can only be read")]
    ReadOnly,
    /// SQLite failed; only its numeric result codes are kept.
    #[error("SQLite failed (code {code}, extended {extended})")]
    Sqlite {
        /// The primary result code.
        code: i32,
        /// The extended result code.
        extended: i32,
    },
}

fn directory_cause(code: &str) -> &'static str {
    match code {
        "not_a_directory" => {
            "something other than a directory stands where its directory should be"
        }
        "read_only" => "its directory is on a read-only filesystem",
        "permission_denied" => "this user may not write in its directory",
        _ => "its directory cannot be created",
    }
}

impl StoreError {
    /// Whether the store refused what a session's decode gave (a line out of seq order, say),
    /// rather than failing itself: the session is then scanned, and the update goes on.
    pub fn refuses_the_session(&self) -> bool {
        matches!(
            self,
            StoreError::InvalidLine
                | StoreError::InvalidReason
                | StoreError::WitnessMismatch
                | StoreError::NotIndexed
        )
    }

    /// The stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Directory { code } => code,
            StoreError::NotOwned { .. } => "permission_denied",
            StoreError::DiskFull => "disk_full",
            StoreError::NetworkFilesystem => "network_filesystem",
            StoreError::Symlink => "symlink",
            StoreError::NotAFile => "not_a_file",
            StoreError::Busy => "busy",
            StoreError::Degraded => "degraded",
            StoreError::Corrupt => "corrupt",
            StoreError::Replaced => "replaced",
            StoreError::NotIndexed => "not_indexed",
            StoreError::WitnessMismatch => "witness_mismatch",
            StoreError::InvalidReason => "invalid_reason",
            StoreError::InvalidLine => "invalid_line",
            StoreError::Io { kind } => match kind {
                io::ErrorKind::PermissionDenied => "permission_denied",
                io::ErrorKind::ReadOnlyFilesystem => "read_only",
                _ => "io",
            },
            StoreError::ReadOnly => "read_only",
            StoreError::Sqlite { .. } => "sqlite",
        }
    }
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> StoreError {
        match e.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => StoreError::DiskFull,
            kind => StoreError::Io { kind },
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode as C;
        match e {
            rusqlite::Error::SqliteFailure(f, _) => match f.code {
                C::DatabaseBusy | C::DatabaseLocked => StoreError::Busy,
                C::NotADatabase | C::DatabaseCorrupt => StoreError::Corrupt,
                // A page the database says it has, past the end of a file cut short.
                C::SystemIoFailure if f.extended_code == rusqlite::ffi::SQLITE_IOERR_SHORT_READ => {
                    StoreError::Corrupt
                }
                C::DiskFull => StoreError::DiskFull,
                C::ReadOnly => StoreError::ReadOnly,
                _ => StoreError::Sqlite {
                    code: f.extended_code & 0xff,
                    extended: f.extended_code,
                },
            },
            // A value of another type than the (strict) table holds, or text that is not
            // UTF-8: damage.
            rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::Utf8Error(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..) => StoreError::Corrupt,
            _ => StoreError::Sqlite {
                code: 0,
                extended: 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_past_the_end_of_a_cut_file_is_damage_and_other_io_errors_are_not() {
        let failure = |code| {
            StoreError::from(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        assert_eq!(
            failure(rusqlite::ffi::SQLITE_IOERR_SHORT_READ).code(),
            StoreError::Corrupt.code()
        );
        assert_ne!(
            failure(rusqlite::ffi::SQLITE_IOERR_READ).code(),
            StoreError::Corrupt.code()
        );
    }

    #[test]
    fn a_full_disk_is_named_whoever_meets_it() {
        let sqlite = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(13), None);
        assert_eq!(StoreError::from(sqlite).code(), "disk_full");
        for kind in [io::ErrorKind::StorageFull, io::ErrorKind::QuotaExceeded] {
            assert_eq!(StoreError::from(io::Error::from(kind)).code(), "disk_full");
        }
        let read_only = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(8), None);
        assert_eq!(StoreError::from(read_only).code(), "read_only");
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(StoreError::from(denied).code(), "permission_denied");
    }
}
