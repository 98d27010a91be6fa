//! What can go wrong with the projection, as stable reason codes.

use std::io;

/// Why the projection could not be opened, read or written.
///
/// Every variant has a stable [`code`](StoreError::code) for `doctor` and `--json`. The texts
/// never carry SQLite's own messages: those can quote a statement, and no diagnostic may show
/// one. Any of these means "answer by scanning"; none of them is a user-facing failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory could not be created or used.
    #[error("the search projection's directory is unusable ({code})")]
    Directory {
        /// `not_creatable`, `not_a_directory`, `read_only` or `permission_denied`.
        code: &'static str,
    },
    /// The directory is on a filesystem SQLite's locking and shared memory cannot be trusted on.
    #[error("the search projection's directory is on a network filesystem")]
    NetworkFilesystem,
    /// A symbolic link stands where the directory or one of the database files should be.
    #[error("a symbolic link stands where the search projection should be")]
    Symlink,
    /// Something other than a regular file stands where a database file should be.
    #[error("something other than a file stands where the search projection should be")]
    NotAFile,
    /// The database could not be opened or locked in time.
    #[error("the search projection is busy")]
    Busy,
    /// A write was asked of a store opened read-only because its schema is newer than this build.
    #[error("the search projection has a newer schema and is read-only here")]
    Degraded,
    /// The database is damaged; [`Store::open`](crate::store::Store::open) would quarantine it.
    #[error("the search projection is damaged")]
    Corrupt,
    /// The database file was deleted or replaced while a store had it open.
    #[error("the search projection's file was deleted or replaced")]
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
    #[error("the search projection's files could not be used ({kind})")]
    Io {
        /// The kind of I/O error.
        kind: io::ErrorKind,
    },
    /// SQLite failed; only its numeric result codes are kept.
    #[error("SQLite failed (code {code}, extended {extended})")]
    Sqlite {
        /// The primary result code.
        code: i32,
        /// The extended result code.
        extended: i32,
    },
}

impl StoreError {
    /// The stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Directory { code } => code,
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
            StoreError::Io { .. } => "io",
            StoreError::Sqlite { .. } => "sqlite",
        }
    }
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> StoreError {
        StoreError::Io { kind: e.kind() }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode as C;
        match e {
            rusqlite::Error::SqliteFailure(f, _) => match f.code {
                C::DatabaseBusy | C::DatabaseLocked => StoreError::Busy,
                C::NotADatabase | C::DatabaseCorrupt => StoreError::Corrupt,
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
