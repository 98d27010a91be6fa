//! The seam between decoders and the core: the [`Transcript`] trait, and the bounded line reader
//! every decoder streams its files through.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::DecodeError;
use crate::location::{Origin, Resume};
use crate::model::{Event, SessionFile, SessionMeta};
use crate::resume::Snapshot;
use crate::time::Timestamp;

/// The largest transcript file accepted, encoded.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;
pub use history_raw::MAX_LINE_BYTES;

/// How many bytes a transcript is read by at a time. Small enough that the buffer stays in a
/// core's L2 cache while the kernel copies into it and the decoder reads it: on a 2-core AMD EPYC
/// (512 KiB of L2 a core), reading a 128 MiB transcript for one session's search spends 40 ms in
/// the kernel with 128 KiB and 90–105 ms with 256 KiB.
pub const READ_BUFFER: usize = 128 * 1024;

/// One harness's transcripts: where they are and how a file becomes events.
///
/// An embedder adds a source of its own by implementing this trait; nothing else changes.
pub trait Transcript: Send + Sync {
    /// The harness name used in qualified ids (`claude`, `codex`, `pi`…).
    fn harness(&self) -> &str;

    /// Every session under this source's root, with its file's stat. A missing root is empty.
    /// The same id may appear more than once; the corpus keeps the newest-modified file.
    fn discover(&self) -> Vec<SessionFile>;

    /// Streams one session's candidate events, in file order, into `sink`.
    ///
    /// Events of lines that turn out not to be on the selected branch may be emitted too; the
    /// returned [`Decoded::branch`] says which seqs are on it.
    ///
    /// With `lines` (a search), only raw lines for which the test holds can hold an event the
    /// caller wants, so the decoder may read the other lines for their structure alone
    /// (branches, tool names) and emit nothing for them. Every event it does emit must equal
    /// the one a decode without the test emits, and every wanted one must be emitted:
    /// [`crate::testing`] checks this for every source.
    fn decode(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
    ) -> Result<Decoded, DecodeError>;

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
    /// ([`crate::testing`] checks it); the default, [`LineTime::Unknown`], never rules anything
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
    /// overrides it. [`crate::testing`] checks that the two agree.
    fn cwd(&self, file: &SessionFile) -> Option<String> {
        let nothing: LineTest<'_> = &|_: &[u8]| false;
        self.decode(file, &mut |_| {}, Some(nothing)).ok()?.meta.cwd
    }

    /// Decodes one raw line alone, as line `seq`, for a search projection that stored
    /// everything of the line's events but their texts, so that a query reads only the lines
    /// its page needs. Among the events it emits, in order, must be events with the texts of
    /// every event a full decode gives the line, in the full decode's order; what a full decode
    /// takes from other lines (a result's tool name, whether a twin hides an event, the branch)
    /// may differ, and extra events are ignored. [`crate::testing`] checks it. `false`: this
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

    /// [`Transcript::decode`], also returning where it stopped (with `keep`), when a later
    /// decode can go on from there (not, say, for a session read from more than its own file,
    /// or a compressed one). Given the [`Snapshot`] an earlier decode of this session returned, for the same
    /// file grown by an append (its bytes up to the snapshot's offset unchanged: the caller
    /// makes sure), it reads only the lines after it and emits only the events of the lines
    /// after its settled one, while what it returns (branch, notices, metadata) is the whole
    /// file's, as a decode of all of it returns. [`crate::testing`] checks both. `None`, having
    /// emitted nothing, when it cannot go on from the snapshot given (another build's): the
    /// caller then decodes the whole session. The default never gives a snapshot.
    fn decode_resumable(
        &self,
        file: &SessionFile,
        sink: &mut dyn FnMut(Event),
        lines: Option<LineTest<'_>>,
        from: Option<&Snapshot>,
        keep: bool,
    ) -> Option<Result<(Decoded, Option<Snapshot>), DecodeError>> {
        let _ = keep;
        match from {
            Some(_) => None,
            None => Some(self.decode(file, sink, lines).map(|d| (d, None))),
        }
    }
}

/// Reads `len` bytes at `offset` of a file, without updating its access time.
pub fn read_at(path: &Path, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    if len > MAX_LINE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a line longer than the longest accepted",
        ));
    }
    let mut bytes = vec![0; len];
    open_untouched(path)?.read_exact_at(&mut bytes, offset)?;
    Ok(bytes)
}

/// The time of a raw line's events ([`Transcript::line_time`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineTime {
    /// It cannot be told without decoding.
    Unknown,
    /// The line's events have no time.
    Untimed,
    /// The line's events happen at this instant.
    At(Timestamp),
    /// The line's events happen at this instant or before, or have no time.
    AtMost(Timestamp),
}

impl LineTime {
    /// The time a decoder would give the line's events.
    pub fn of(time: Option<Timestamp>) -> LineTime {
        time.map_or(LineTime::Untimed, LineTime::At)
    }

    /// The time of a line whose events take it from the line's top-level `key` (an RFC 3339
    /// string; anything else is no time), read off its bytes without parsing them: the time
    /// the last `key` at the top level is given (or none), found by following the nesting up
    /// to each `key` where the last one in the line is nested. `None` when the bytes could hide
    /// the key or its value in escapes, or a string in them is malformed: then the line must be
    /// parsed.
    pub fn under_key(line: &[u8], key: &str) -> Option<LineTime> {
        // Only the escape of an ASCII character can spell part of a key (or of a time).
        let escapes_ascii = |at: usize| {
            let hex = line
                .get(at + 2..at + 6)
                .and_then(|h| std::str::from_utf8(h).ok());
            hex.and_then(|h| u32::from_str_radix(h, 16).ok())
                .is_none_or(|c| c < 0x80)
        };
        if memchr::memmem::find_iter(line, b"\\u").any(escapes_ascii) {
            return None;
        }
        let keys = || memchr::memmem::find_iter(line, key.as_bytes());
        let mut last = None;
        for found in keys() {
            if let Some(place) = key_time(line, found, key)? {
                last = Some(place);
            }
        }
        let Some((at, time)) = last else {
            return Some(LineTime::Untimed);
        };
        // At the top level, the line up to it opens one object more than it closes (in one
        // object, the rest closes one more than it opens): whichever is shorter is read.
        let top = match at < line.len() / 2 {
            true => history_raw::scan::depth_change(&line[..at]) == Some(1),
            false => history_raw::scan::depth_change(&line[at..]) == Some(-1),
        };
        if top {
            return Some(LineTime::of(time));
        }
        let (mut depth, mut from, mut top) = (0, 0, None);
        for found in keys() {
            if let Some((at, time)) = key_time(line, found, key)? {
                depth += history_raw::scan::depth_change(&line[from..at])?;
                from = at;
                if depth == 1 {
                    top = time;
                }
            }
        }
        Some(LineTime::of(top))
    }
}

/// Where the `key` that [`LineTime::under_key`] found at byte `found` of `line` is a key (at
/// its opening quote), with the time its value gives; `Some(None)` where it is not a key, and
/// `None` where its value could hide a time in escapes.
fn key_time(line: &[u8], found: usize, key: &str) -> Option<Option<(usize, Option<Timestamp>)>> {
    // The key in quotes: `at` is its opening quote.
    let Some(at) = found.checked_sub(1).filter(|&q| line[q] == b'"') else {
        return Some(None);
    };
    let backslashes = line[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    if backslashes % 2 == 1 {
        return Some(None); // an escaped quote: the word ends a longer string
    }
    let Some(rest) = line[found + key.len()..].strip_prefix(b"\"") else {
        return Some(None);
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b":") else {
        return Some(None); // a string value, not a key
    };
    let time = match rest.trim_ascii_start().strip_prefix(b"\"") {
        Some(value) => {
            let end = memchr::memchr2(b'"', b'\\', value)?;
            if value[end] != b'"' {
                return None;
            }
            Timestamp::parse_rfc3339(std::str::from_utf8(&value[..end]).ok()?)
        }
        None => None, // not a string: no time
    };
    Some(Some((at, time)))
}

/// A field at the top level of a line that holds one JSON object ([`top_level`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopLevel<'a> {
    /// The object has no such field.
    Missing,
    /// It is `null`.
    Null,
    /// It is a string without escapes.
    Str(&'a str),
    /// It is some other value.
    Other,
}

/// The field `key` at the top level of `line`, read with a validating [`history_raw::scan::Scan`]
/// (which accepts what serde would parse as a `Value`, or gives up): `None` when the line is
/// not one object the scan reads, holds the field twice, or the field is a string with escapes.
/// A line's time off its bytes, when [`LineTime::under_key`] cannot tell (escapes elsewhere in
/// the line), without building the line's values.
pub fn top_level<'a>(line: &'a [u8], key: &str) -> Option<TopLevel<'a>> {
    let text = std::str::from_utf8(line).ok()?;
    let mut found = TopLevel::Missing;
    let mut scan = history_raw::scan::Scan::strict(text);
    scan.object(|scan, k| {
        if k != key {
            return scan.skip();
        }
        if found != TopLevel::Missing {
            return None;
        }
        found = match scan.peek()? {
            b'"' => TopLevel::Str(scan.plain_str()?),
            b'n' => scan.literal().map(|_| TopLevel::Null)?,
            _ => scan.skip().map(|()| TopLevel::Other)?,
        };
        Some(())
    })?;
    scan.finish()?;
    Some(found)
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

/// Reads JSONL lines with a bounded buffer, numbering them from 1, refusing over-long lines and
/// files, and reporting whether the last line was cut short (no final newline). A line that lies
/// within the reader's buffer is handed out in place, without a copy.
pub struct Lines<R> {
    reader: R,
    /// A line that spans buffer refills is gathered here.
    buf: Vec<u8>,
    /// Bytes of the reader's buffer handed out as the previous line, consumed on the next call.
    pending: usize,
    seq: u64,
    read: u64,
    what: String,
}

/// One line of a transcript.
pub struct Line<'a> {
    /// 1-based line number.
    pub seq: u64,
    /// The line's bytes, without the newline (and without a `\r` before it).
    pub bytes: &'a [u8],
    /// Whether the line ended with a newline (only the last line of a file may not).
    pub terminated: bool,
    /// Where the line starts in the stream, in bytes.
    pub offset: u64,
}

/// Where the next line was found.
enum Found {
    /// In the reader's buffer, this many bytes long (the newline follows).
    InPlace(usize),
    /// Gathered in `buf`; whether a newline ended it.
    Gathered(bool),
    /// Nothing is left.
    End,
}

impl Lines<BufReader<File>> {
    /// Opens a file for reading, refusing files over [`MAX_FILE_BYTES`].
    pub fn open(path: &Path) -> Result<Self, DecodeError> {
        Self::open_with(path, READ_BUFFER)
    }

    /// Opens a file to read its first lines only (a header): a small buffer, so that discovery
    /// over many files does not read much of each.
    pub fn open_head(path: &Path) -> Result<Self, DecodeError> {
        Self::open_with(path, 16 * 1024)
    }

    fn open_with(path: &Path, capacity: usize) -> Result<Self, DecodeError> {
        Ok(Lines::new(
            BufReader::with_capacity(capacity, open_transcript(path)?),
            path.display().to_string(),
        ))
    }
}

impl<R: BufRead> Lines<R> {
    /// Wraps a reader; `what` names it in errors.
    pub fn new(reader: R, what: String) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            pending: 0,
            seq: 0,
            read: 0,
            what,
        }
    }

    /// Numbers the lines as if `lines` lines and `offset` bytes had been read already: the
    /// reader starts there ([`crate::resume::lines_from`]).
    pub fn start_at(&mut self, offset: u64, lines: u64) {
        self.read = offset;
        self.seq = lines;
    }

    /// Where the lines read so far end, and how many there were.
    pub fn end(&self) -> (u64, u64) {
        (self.read, self.seq)
    }

    fn io(&self, source: std::io::Error) -> DecodeError {
        DecodeError::Io {
            path: self.what.clone(),
            source,
        }
    }

    /// The next line, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, DecodeError> {
        self.reader.consume(std::mem::take(&mut self.pending));
        self.buf.clear();
        let found = loop {
            let available = match self.reader.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(e)),
            };
            if available.is_empty() {
                break if self.buf.is_empty() {
                    Found::End
                } else {
                    Found::Gathered(false)
                };
            }
            match memchr::memchr(b'\n', available) {
                Some(i) if self.buf.is_empty() => break Found::InPlace(i),
                Some(i) => {
                    self.buf.extend_from_slice(&available[..i]);
                    self.reader.consume(i + 1);
                    break Found::Gathered(true);
                }
                None => {
                    let n = available.len();
                    self.buf.extend_from_slice(available);
                    self.reader.consume(n);
                    if self.buf.len() > MAX_LINE_BYTES {
                        break Found::Gathered(false);
                    }
                }
            }
        };
        let (len, terminated) = match found {
            Found::End => return Ok(None),
            Found::InPlace(i) => (i, true),
            Found::Gathered(t) => (self.buf.len(), t),
        };
        self.seq += 1;
        let offset = self.read;
        self.read += (len + usize::from(terminated)) as u64;
        if self.read > MAX_FILE_BYTES {
            return Err(DecodeError::TooLarge {
                what: "the file".into(),
                limit: "512 MiB",
            });
        }
        if len > MAX_LINE_BYTES {
            return Err(DecodeError::TooLarge {
                what: format!("line {}", self.seq),
                limit: "64 MiB",
            });
        }
        let mut bytes: &[u8] = match found {
            Found::InPlace(i) => {
                self.pending = i + 1;
                let what = &self.what;
                match self.reader.fill_buf() {
                    Ok(a) => &a[..i],
                    Err(source) => {
                        return Err(DecodeError::Io {
                            path: what.clone(),
                            source,
                        })
                    }
                }
            }
            _ => &self.buf,
        };
        if terminated && bytes.last() == Some(&b'\r') {
            bytes = &bytes[..bytes.len() - 1];
        }
        Ok(Some(Line {
            seq: self.seq,
            bytes,
            terminated,
            offset,
        }))
    }
}

/// Opens a transcript for reading ([`open_untouched`]), refusing files over [`MAX_FILE_BYTES`].
pub fn open_transcript(path: &Path) -> Result<File, DecodeError> {
    let io = |source| DecodeError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = open_untouched(path).map_err(io)?;
    if file.metadata().map_err(io)?.len() > MAX_FILE_BYTES {
        return Err(DecodeError::TooLarge {
            what: "the file".into(),
            limit: "512 MiB",
        });
    }
    Ok(file)
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
    Ok(Box::new(Capped {
        inner: source.open_raw(path)?,
        left: MAX_FILE_BYTES,
    }))
}

fn over_limit() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        "the file is over the 512 MiB limit",
    )
}

/// A stream that fails once it has yielded more than `left` bytes.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(over_limit)?;
        Ok(n)
    }
}

/// Opens a file for reading without updating its access time where the system allows it
/// (`O_NOATIME` needs the file's owner); elsewhere, a plain read-only open.
pub fn open_untouched(path: &Path) -> std::io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let noatime = rustix::fs::OFlags::NOATIME.bits() as i32;
        if let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(noatime)
            .open(path)
        {
            return Ok(file);
        }
    }
    File::open(path)
}

/// Counts damaged lines while decoding and turns them into one notice.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Damage {
    skipped: Vec<u64>,
    truncated_last: Option<u64>,
}

impl Damage {
    /// Records a line that could not be decoded.
    pub fn skip(&mut self, line: &Line<'_>) {
        if line.terminated {
            self.skipped.push(line.seq);
        } else {
            self.truncated_last = Some(line.seq);
        }
    }

    /// Adds the notices, if any, to `notices`.
    pub fn report(self, notices: &mut Vec<String>) {
        if !self.skipped.is_empty() {
            let shown: Vec<String> = self.skipped.iter().take(5).map(u64::to_string).collect();
            let more = if self.skipped.len() > 5 { ", …" } else { "" };
            notices.push(format!(
                "skipped {} unreadable line{} ({}{more})",
                self.skipped.len(),
                if self.skipped.len() == 1 { "" } else { "s" },
                shown.join(", ")
            ));
        }
        if let Some(seq) = self.truncated_last {
            notices.push(format!(
                "the last line ({seq}) is incomplete and was skipped"
            ));
        }
    }
}

/// Parses a line as a JSON object; `None` for blank lines, non-JSON and non-objects.
pub fn parse_object<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    let trimmed = bytes.trim_ascii();
    if trimmed.first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(trimmed).ok()
}

/// [`parse_object`] for a line already known to be UTF-8: its strings are not checked again.
pub fn parse_object_str<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    let trimmed = text.trim_ascii();
    if !trimmed.starts_with('{') {
        return None;
    }
    serde_json::from_str(trimmed).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_under_a_key_is_read_off_the_bytes() {
        let t = |s: &str| Timestamp::parse_rfc3339(s).unwrap();
        let read = |line: &str| LineTime::under_key(line.as_bytes(), "timestamp");
        assert_eq!(
            read(
                r#"{"timestamp" : "2026-01-02T03:04:05Z","x":{"timestamp":"2026-01-01T00:00:00Z"}}"#
            ),
            Some(LineTime::At(t("2026-01-02T03:04:05Z"))),
            "a nested key after the top-level one"
        );
        assert_eq!(
            read(concat!(
                r#"{"timestamp":"2026-01-01T00:00:00Z","x":{"timestamp":"2027-01-01T00:00:00Z"},"#,
                r#""timestamp":"2026-01-03T00:00:00Z","y":[{"timestamp":"2028-01-01T00:00:00Z"}]}"#
            )),
            Some(LineTime::At(t("2026-01-03T00:00:00Z"))),
            "the last top-level key of several, as a parse keeps it"
        );
        assert_eq!(
            read(
                r#"{"x":{"timestamp":"2027-01-01T00:00:00Z"},"timestamp":"2026-01-01T00:00:00Z"}"#
            ),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "the last key is the top-level one"
        );
        assert_eq!(
            read(r#"{"a":"}{","timestamp":"2026-01-01T00:00:00Z","b":["]",{"c":"\"}"}]}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "brackets in strings do not count"
        );
        assert_eq!(
            read(r#"{"y":{"timestamp":"2025-01-01T00:00:00Z"}}"#),
            Some(LineTime::Untimed),
            "a nested key only: the line has no time"
        );
        assert_eq!(
            read(r#"{"k":"timestamp","note":"the \"timestamp\":\"2030\""}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(
            read(r#"{"timestamp":1767225600000}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(
            read(r#"{"timestamp":"yesterday"}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(read(r#"{"time\u0073tamp":"2026-01-01T00:00:00Z"}"#), None);
        assert_eq!(
            read(r#"{"a":"\u0041","timestamp":"2026-01-01T00:00:00Z"}"#),
            None,
            "an escaped ASCII letter anywhere: the line is parsed"
        );
        assert_eq!(
            read(r#"{"a":"Stra\u00dfe \ufb01le","timestamp":"2026-01-01T00:00:00Z"}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "escapes of other characters cannot hide a key"
        );
        assert_eq!(
            read(r#"{"timestamp":"2026-01-01T00:00:00Z","p":{"q":"{{[","r":[[[1]]],"s":"]]}}"}}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "a first key, read from the line's start"
        );
        assert_eq!(
            read(r#"{"p":{"timestamp":"2026-01-01T00:00:00Z","q":"a long nested value"}}"#),
            Some(LineTime::Untimed),
            "a nested key early in the line"
        );
        assert_eq!(
            read(r#"{"timestamp":"2020-01-01T00:00:00Z","a\"timestamp":"2030-01-01T00:00:00Z"}"#),
            Some(LineTime::At(t("2020-01-01T00:00:00Z"))),
            "a key that only ends in the word"
        );
        assert_eq!(read(r#"{"timestamp":"2026-01-01T00:00:00\/Z"}"#), None);
    }

    #[test]
    fn lines_across_buffer_refills() {
        let text = format!("{}\n{}\nend", "a".repeat(10), "b".repeat(50));
        let reader = std::io::BufReader::with_capacity(8, text.as_bytes());
        let mut l = Lines::new(reader, "t".into());
        let mut got = vec![];
        while let Some(line) = l.next_line().unwrap() {
            got.push((line.bytes.len(), line.terminated));
        }
        assert_eq!(got, vec![(10, true), (50, true), (3, false)]);
    }

    #[test]
    fn lines_number_and_flag_truncation() {
        let mut l = Lines::new(&b"a\r\n\nb"[..], "t".into());
        let mut got = vec![];
        while let Some(line) = l.next_line().unwrap() {
            got.push((line.seq, line.bytes.to_vec(), line.terminated, line.offset));
        }
        assert_eq!(
            got,
            vec![
                (1, b"a".to_vec(), true, 0),
                (2, b"".to_vec(), true, 3),
                (3, b"b".to_vec(), false, 4)
            ]
        );
    }
}
