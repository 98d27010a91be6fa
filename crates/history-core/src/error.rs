//! Errors as values: each maps 1:1 onto a documented error code.

use thiserror::Error;

/// Why a request could not be answered.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HistoryError {
    /// No session matches the selector.
    #[error("no session matches {selector:?}{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    UnknownSession {
        /// The selector as given.
        selector: String,
        /// Why, where more can be said than that nothing matched (a path that names no file).
        detail: Option<String>,
    },
    /// Several sessions match the selector.
    #[error("{selector:?} matches several sessions: {}", candidates.join(", "))]
    AmbiguousSession {
        /// The selector as given.
        selector: String,
        /// Up to five qualified candidates.
        candidates: Vec<String>,
    },
    /// A wildcard where one session is needed, or a malformed selector.
    #[error("{message}")]
    InvalidSession {
        /// What was wrong.
        message: String,
    },
    /// Seq bounds that cannot be honoured.
    #[error("{message}")]
    InvalidBounds {
        /// What was wrong.
        message: String,
    },
    /// The selected session's file cannot be read or decoded.
    #[error("history of {session} is unavailable: {reason}")]
    HistoryUnavailable {
        /// The qualified session id.
        session: String,
        /// Why.
        reason: String,
    },
    /// Bad flags or values.
    #[error("{message}")]
    Usage {
        /// What was wrong.
        message: String,
    },
    /// The search index cannot be opened, read or updated (`index`, `reindex`, `doctor`).
    #[error("{message}")]
    IndexUnavailable {
        /// What failed and why, naming the index's path.
        message: String,
        /// Why, as a stable reason code (`disk_full`, `permission_denied`, …).
        reason: String,
    },
    /// Another process is updating the search index.
    #[error("another index is running{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    IndexBusy {
        /// The process that holds the update lock, when it wrote its id.
        pid: Option<u32>,
    },
}

impl HistoryError {
    /// The stable error code (`unknown_session`, …) printed to users and scripts.
    pub fn code(&self) -> &'static str {
        match self {
            HistoryError::UnknownSession { .. } => "unknown_session",
            HistoryError::AmbiguousSession { .. } => "ambiguous_session",
            HistoryError::InvalidSession { .. } => "invalid_session",
            HistoryError::InvalidBounds { .. } => "invalid_bounds",
            HistoryError::HistoryUnavailable { .. } => "history_unavailable",
            HistoryError::Usage { .. } => "usage",
            HistoryError::IndexUnavailable { .. } => "index_unavailable",
            HistoryError::IndexBusy { .. } => "index_busy",
        }
    }

    /// Shorthand for a usage error.
    pub fn usage(message: impl Into<String>) -> HistoryError {
        HistoryError::Usage {
            message: message.into(),
        }
    }
}

/// Why one transcript could not be decoded.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is over a size limit.
    #[error("{what} is over the {limit} limit")]
    TooLarge {
        /// What is too large (`the file`, `line 12`).
        what: String,
        /// The limit, human-readable.
        limit: &'static str,
    },
    /// The content cannot be made into a session.
    #[error("{0}")]
    Invalid(String),
}
