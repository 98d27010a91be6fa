//! Decoding that goes on where an earlier decode of the same file stopped
//! ([`crate::Transcript::decode_resumable`]): a session that is being written grows by appends,
//! and a search projection that indexed it reads only the bytes appended since.
//!
//! A decoder keeps what it learned of the lines before a point (its graph, its tool names, its
//! titles, its damage) as a [`Snapshot`]'s state, in a form only the same build reads; given it
//! back with the grown file, it reads the file from the snapshot's offset on.

use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::DecodeError;
use crate::source::{open_transcript, Line, Lines};

/// Where a decode stopped, and what the decoder knew there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Where the lines it covers end: past the last complete line. A last line without its
    /// newline (a writer may still be finishing it) is not covered: a resumed decode reads it
    /// again.
    pub offset: u64,
    /// How many lines lie before `offset`: the next line's seq is one more.
    pub lines: u64,
    /// The decoder's state at `offset`.
    pub state: Vec<u8>,
}

/// A decoder's state in bytes ([`Snapshot::state`]).
pub fn save<T: Serialize>(state: &T) -> Vec<u8> {
    // Only types without a serializer of their own that can fail reach here.
    postcard::to_allocvec(state).unwrap_or_default()
}

/// The state [`save`] wrote; `None` for bytes it did not write (another build's, say).
pub fn load<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    postcard::from_bytes(bytes).ok()
}

/// The lines of `path` from a snapshot on (all of them without one), numbered as a read from
/// the start numbers them. The file's size is checked against the limit first, as
/// [`Lines::open`] checks it.
pub fn lines_from(
    path: &Path,
    from: Option<&Snapshot>,
) -> Result<Lines<BufReader<std::fs::File>>, DecodeError> {
    let Some(snapshot) = from else {
        return Lines::open(path);
    };
    let mut file = open_transcript(path)?;
    file.seek(SeekFrom::Start(snapshot.offset))
        .map_err(|source| DecodeError::Io {
            path: path.display().to_string(),
            source,
        })?;
    let mut lines = Lines::new(
        BufReader::with_capacity(256 * 1024, file),
        path.display().to_string(),
    );
    lines.start_at(snapshot.offset, snapshot.lines);
    Ok(lines)
}

/// Takes a decoder's snapshot where a later decode must go on from: before a last line without
/// its newline, else at the end.
#[derive(Default)]
pub struct Stop {
    keep: bool,
    before_last: Option<Snapshot>,
}

impl Stop {
    /// A stop that takes a snapshot only if `keep`.
    pub fn new(keep: bool) -> Stop {
        Stop {
            keep,
            before_last: None,
        }
    }

    /// Called with each line before the decoder takes it in, and its state until then.
    pub fn before<T: Serialize>(&mut self, line: &Line<'_>, state: &T) {
        if self.keep && !line.terminated {
            self.before_last = Some(Snapshot {
                offset: line.offset,
                lines: line.seq - 1,
                state: save(state),
            });
        }
    }

    /// The snapshot once every line is in: `end` is where the lines read end and how many
    /// there were.
    pub fn end<T: Serialize>(self, end: (u64, u64), state: &T) -> Option<Snapshot> {
        if !self.keep {
            return None;
        }
        Some(self.before_last.unwrap_or_else(|| Snapshot {
            offset: end.0,
            lines: end.1,
            state: save(state),
        }))
    }
}
