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
    /// The last line whose events are final: a resumed decode emits the events of the lines
    /// after it. Mostly `lines`; a decoder that holds events back until a later line says what
    /// they are (a twin that hides them) has not settled the lines of those it holds.
    pub settled: u64,
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

/// A snapshot with the state [`save`] wrote into it, as a decoder goes on from it: `Some(None)`
/// without a snapshot, `None` for one whose state it cannot read.
pub fn with_state<T: DeserializeOwned>(from: Option<&Snapshot>) -> Option<Option<(&Snapshot, T)>> {
    match from {
        Some(snapshot) => Some(Some((snapshot, load(&snapshot.state)?))),
        None => Some(None),
    }
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
    let mut lines = Lines::new(
        BufReader::with_capacity(crate::source::READ_BUFFER, open_at(path, snapshot.offset)?),
        path.display().to_string(),
    );
    lines.start_at(snapshot.offset, snapshot.lines);
    Ok(lines)
}

/// The file at `path`, checked as [`open_transcript`] checks it, to be read from `offset` on.
pub fn open_at(path: &Path, offset: u64) -> Result<std::fs::File, DecodeError> {
    let mut file = open_transcript(path)?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|source| DecodeError::Io {
            path: path.display().to_string(),
            source,
        })?;
    Ok(file)
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

    /// Called with each line before the decoder takes it in, its state until then, and the
    /// first line whose events it holds back, if any.
    pub fn before<T: Serialize>(&mut self, line: &Line<'_>, state: &T, waiting: Option<u64>) {
        if self.keep && !line.terminated {
            self.before_last = Some(snapshot((line.offset, line.seq - 1), state, waiting));
        }
    }

    /// The snapshot once every line is in: `end` is where the lines read end and how many
    /// there were.
    pub fn end<T: Serialize>(
        self,
        end: (u64, u64),
        state: &T,
        waiting: Option<u64>,
    ) -> Option<Snapshot> {
        if !self.keep {
            return None;
        }
        Some(
            self.before_last
                .unwrap_or_else(|| snapshot(end, state, waiting)),
        )
    }
}

fn snapshot<T: Serialize>(
    (offset, lines): (u64, u64),
    state: &T,
    waiting: Option<u64>,
) -> Snapshot {
    Snapshot {
        offset,
        lines,
        settled: waiting.map_or(lines, |w| w.saturating_sub(1).min(lines)),
        state: save(state),
    }
}

/// A decoder state's [`crate::Event`] (`#[serde(with = "history_core::snapshot::event")]`): as its
/// JSON, which is how the model defines it.
pub mod event {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::Event;

    /// The event as its JSON text.
    pub fn serialize<S: Serializer>(event: &Event, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&serde_json::to_string(event).map_err(S::Error::custom)?)
    }

    /// The event [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(D::Error::custom)
    }
}
