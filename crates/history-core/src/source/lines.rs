//! The seam between decoders and the core: the [`Transcript`] trait, and the bounded line reader
//! every decoder streams its files through.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::DecodeError;

/// The largest transcript file accepted, encoded.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;
pub use history_raw::MAX_LINE_BYTES;

/// How many bytes a transcript is read by at a time. Small enough that the buffer stays in a
/// core's L2 cache while the kernel copies into it and the decoder reads it: on a 2-core AMD EPYC
/// (512 KiB of L2 a core), reading a 128 MiB transcript for one session's search spends 40 ms in
/// the kernel with 128 KiB and 90–105 ms with 256 KiB.
pub const READ_BUFFER: usize = 128 * 1024;

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
enum NextLine {
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
    /// reader starts there ([`crate::source::snapshot::lines_from`]).
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
                    NextLine::End
                } else {
                    NextLine::Gathered(false)
                };
            }
            match memchr::memchr(b'\n', available) {
                Some(i) if self.buf.is_empty() => break NextLine::InPlace(i),
                Some(i) => {
                    self.buf.extend_from_slice(&available[..i]);
                    self.reader.consume(i + 1);
                    break NextLine::Gathered(true);
                }
                None => {
                    let n = available.len();
                    self.buf.extend_from_slice(available);
                    self.reader.consume(n);
                    if self.buf.len() > MAX_LINE_BYTES {
                        break NextLine::Gathered(false);
                    }
                }
            }
        };
        let (len, terminated) = match found {
            NextLine::End => return Ok(None),
            NextLine::InPlace(i) => (i, true),
            NextLine::Gathered(t) => (self.buf.len(), t),
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
            NextLine::InPlace(i) => {
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

pub(crate) fn over_limit() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        "the file is over the 512 MiB limit",
    )
}

/// A stream that fails once it has yielded more than `left` bytes.
pub(crate) struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R> Capped<R> {
    /// `inner`, ending in an error past [`MAX_FILE_BYTES`].
    pub(crate) fn new(inner: R) -> Capped<R> {
        Capped {
            inner,
            left: MAX_FILE_BYTES,
        }
    }
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
