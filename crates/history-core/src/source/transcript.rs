//! The seam between decoders and the core: the [`Transcript`] trait every harness decoder
//! implements, and what a decode yields besides its events.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::DecodeError;
use crate::model::{Event, SessionFile, SessionMeta};
use crate::source::lines::{over_limit, Capped};
use crate::source::Walk;
use crate::source::{open_untouched, read_at, LineTime, Origin, Resume, Snapshot, MAX_FILE_BYTES};

/// One harness's transcripts: where they are and how a file becomes events.
///
/// An embedder adds a source of its own by implementing this trait; nothing else changes.
pub trait Transcript: Send + Sync {
    /// The harness name used in qualified ids (`claude`, `codex`, `pi`…).
    fn harness(&self) -> &str;

    /// What a session's seqs number: lines of its files (the default), or records of a store
    /// that no line of a file holds ([`Layout`]).
    fn layout(&self) -> Layout {
        Layout::Lines
    }

    /// Every session under this source's root, with its file's stat. A missing root is empty.
    /// The same id may appear more than once; the corpus keeps the newest-modified file.
    fn discover(&self) -> Vec<SessionFile>;

    /// [`Transcript::discover`], listing directories and reading ids from files' first lines
    /// through `walk`, which remembers what an earlier walk saw ([`Walk`]). A source that lists
    /// few directories and reads no file need not: by default this is `discover`.
    fn discover_with(&self, walk: &Walk) -> Vec<SessionFile> {
        let _ = walk;
        self.discover()
    }

    /// Streams one session's candidate events, in file order, into `sink`.
    ///
    /// Events of lines that turn out not to be on the selected branch may be emitted too; the
    /// returned [`Decoded::branch`] says which seqs are on it.
    ///
    /// With `lines` (a search), only raw lines for which the test holds can hold an event the
    /// caller wants, so the decoder may read the other lines for their structure alone
    /// (branches, tool names) and emit nothing for them. Every event it does emit must equal
    /// the one a decode without the test emits, and every wanted one must be emitted:
    /// `crate::testing` checks this for every source.
    ///
    /// A source implements this or [`Transcript::decode_resumable`]: each one's default calls
    /// the other.
    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError> {
        match self.decode_resumable(file, sink, lines, None, WantSnapshot::No)? {
            Resumed::Done(decoded, _) => Ok(decoded),
            Resumed::Declined => Err(DecodeError::Invalid(format!(
                "{}: a decode with no snapshot to go on from was declined",
                file.path.display()
            ))),
        }
    }

    /// The files a session's events are decoded from: its own file first, then every file it
    /// inherits history from, exactly the list [`Decoded::lineage`] reports. Cheap: it must not
    /// decode the whole session. A file a session only names (the one it was forked from, whose
    /// entries it copied) is not among them; that is [`SessionMeta::forked_from`].
    fn lineage(&self, file: &SessionFile) -> Vec<PathBuf> {
        vec![file.path.clone()]
    }

    /// The bytes of a transcript file as its lines are written, for a raw prefilter: the file
    /// itself, or its decompressed stream where the harness compresses files.
    fn open_raw(&self, path: &Path) -> std::io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(open_untouched(path)?))
    }

    /// When the events decoded from this raw line happen: every event a decoder emits carries the
    /// time of the line it comes from, so a search can rank a file's candidate lines before
    /// decoding it. It must agree with [`Transcript::decode`] for every line that yields events
    /// (`crate::testing` checks it); the default, [`LineTime::Unknown`], never rules anything
    /// out.
    fn line_time(&self, line: &[u8]) -> LineTime {
        let _ = line;
        LineTime::Unknown
    }

    /// The file and line each of `seqs` of the session in `file` was decoded from, in the order
    /// asked; `None` where it cannot be told. The default, where a seq is the line number in the
    /// session's own file, suits every source whose seqs are that; a source whose sessions
    /// inherit lines from other files maps those seqs back to them.
    fn origins(&self, file: &SessionFile, seqs: &[u64]) -> Vec<Option<Origin>> {
        seqs.iter()
            .map(|&line| {
                Some(Origin {
                    path: file.path.clone(),
                    line,
                })
            })
            .collect()
    }

    /// How to reopen the session in its agent, where the agent can (cheap: it may read the
    /// file's first lines, never the whole file). The default: it cannot be told.
    fn resume(&self, file: &SessionFile) -> Option<Resume> {
        let _ = file;
        None
    }

    /// The session's working directory, exactly as [`Decoded::meta`] gives it, for selecting
    /// sessions by place before any is decoded. The default decodes the session for its
    /// structure alone (no line is wanted); a source that can read it off the file's first lines
    /// overrides it. `crate::testing` checks that the two agree.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        let nothing: LineTest<'_> = &|_: &[u8]| false;
        self.decode(file, &mut |_| {}, Some(nothing)).ok()?.meta.cwd
    }

    /// Decodes one raw line alone, as line `seq`, for a search projection that stored
    /// everything of the line's events but their texts, so that a query reads only the lines
    /// its page needs. Among the events it emits, in order, must be events with the texts of
    /// every event a full decode gives the line, in the full decode's order; what a full decode
    /// takes from other lines (a result's tool name, whether a twin hides an event, the branch)
    /// may differ, and extra events are ignored. `crate::testing` checks it. `false`: this
    /// source cannot decode a line alone, and its sessions are decoded whole.
    fn replay(&self, seq: u64, line: &[u8], sink: &mut dyn FnMut(Event)) -> bool {
        let _ = (seq, line, sink);
        false
    }

    /// Reads `len` bytes at `offset` of the stream [`Transcript::open_raw`] gives of `path`:
    /// the lines a projection located. `None` when that means reading everything before them
    /// (a compressed file): the session is then decoded whole.
    fn read_at(&self, path: &Path, offset: u64, len: usize) -> Option<std::io::Result<Vec<u8>>> {
        Some(read_at(path, offset, len))
    }

    /// [`Transcript::decode`], also returning where it stopped (when `want` says so), when a
    /// later decode can go on from there (not, say, for a session read from more than its own
    /// file, or a compressed one). Given the [`Snapshot`] an earlier decode of this session
    /// returned, for the same file grown by an append (its bytes up to the snapshot's offset
    /// unchanged: the caller makes sure), it reads only the lines after it and emits only the
    /// events of the lines after its settled one, while what it returns (branch, notices,
    /// metadata) is the whole file's, as a decode of all of it returns. `crate::testing`
    /// checks both. [`Resumed::Declined`], having emitted nothing, when it cannot go on from the
    /// snapshot given (another build's): the caller then decodes the whole session. The default
    /// never gives a snapshot.
    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        want: WantSnapshot,
    ) -> Result<Resumed, DecodeError> {
        let _ = want;
        match from {
            Some(_) => Ok(Resumed::Declined),
            None => Ok(Resumed::Done(self.decode(file, sink, lines)?, None)),
        }
    }
}

/// What a source's seqs number ([`Transcript::layout`]), and so what may be read of its files
/// besides a decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A seq is a line of the session's files: a raw prefilter, a line's time, a line read by
    /// its byte range and a search projection of lines all apply.
    Lines,
    /// A seq numbers a record of a store (a row of a database) that no line of a file holds:
    /// the raw bytes of its files are not lines of events, so nothing is read of them but by a
    /// decode. Its [`Transcript::lineage`] names the files whose fingerprints tell whether the
    /// session changed; a search projection does not index it, and a search reads it whole.
    Records,
}

/// Whether a resumable decode says where it stopped ([`Transcript::decode_resumable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WantSnapshot {
    /// Return a snapshot to go on from later, where the source can.
    Yes,
    /// Return none: the caller will not go on from this decode.
    No,
}

/// What a resumable decode came to ([`Transcript::decode_resumable`]).
// Returned once per decode and taken apart at once: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Resumed {
    /// It read the session (from the snapshot on, when given one): what the whole file yields,
    /// and where it stopped, when that was wanted and can be gone on from.
    Done(Decoded, Option<Snapshot>),
    /// It cannot go on from the snapshot given: it emitted nothing, and the caller decodes the
    /// whole session.
    Declined,
}

/// A test of one raw line: can it hold an event a search wants?
pub type LineTest<'a> = &'a (dyn Fn(&[u8]) -> bool + Sync);

/// What decoding one session yields besides its events.
#[derive(Debug, Default)]
pub struct Decoded {
    /// The sorted seqs on the selected branch, when the harness has branches; `None`: every line.
    pub branch: Option<Vec<u64>>,
    /// Things the reader should know: damaged lines skipped, gaps in ancestry.
    pub notices: Vec<String>,
    /// Title, summary, working directory.
    pub meta: SessionMeta,
    /// Every file that was read: the session's own first, then its ancestors
    /// ([`Transcript::lineage`]).
    pub lineage: Vec<PathBuf>,
    /// Whether the session names a file to inherit from that was not read (missing, unreadable,
    /// a cycle, past the depth limit). Only then can its lineage change while every file of it
    /// keeps its bytes: say, when the missing file appears.
    pub lineage_open: bool,
}

/// Opens the bytes of a transcript file for a raw read, through its harness's
/// [`Transcript::open_raw`], refusing what a decoder refuses before reading it: a file over
/// [`MAX_FILE_BYTES`] is not read at all, and a stream (decompressed bytes included) ends in an
/// error past that many bytes. Both errors are of the kind [`std::io::ErrorKind::FileTooLarge`].
pub fn open_raw<'a>(
    source: &'a dyn Transcript,
    path: &Path,
) -> std::io::Result<Box<dyn Read + 'a>> {
    if std::fs::metadata(path)?.len() > MAX_FILE_BYTES {
        return Err(over_limit());
    }
    Ok(Box::new(Capped::new(source.open_raw(path)?)))
}
