//! Where an item came from and how to get back to it: the line of a transcript file that an
//! event was decoded from (its file, line number and bytes), and the command that reopens its
//! session in its agent.
//!
//! [`crate::corpus::locate`] answers "where is this seq" with them; a search projection that
//! already knows line offsets answers the same question without reading.
//!
//! ```
//! use history_core::{line_spans, Location};
//! let text = b"{\"a\":1}\n\n{\"b\":22}\r\n";
//! let spans = line_spans(&text[..], &[3, 1, 9]).unwrap();
//! assert_eq!(spans[0], Some(Location { line: 3, byte_offset: 9, byte_len: 8 }));
//! assert_eq!(spans[1], Some(Location { line: 1, byte_offset: 0, byte_len: 7 }));
//! assert_eq!(spans[2], None); // past the end
//! ```

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use serde::Serialize;

/// One line of a transcript file: its 1-based number, and where its bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The 1-based line number in the file.
    pub line: u64,
    /// Where the line starts, in bytes from the start of the file (of its decompressed stream
    /// for a compressed file).
    pub byte_offset: u64,
    /// The line's length in bytes, without its line ending (`\n` or `\r\n`).
    pub byte_len: u64,
}

/// The file and line a seq comes from ([`crate::Transcript::origins`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file the line is in.
    pub path: PathBuf,
    /// Its 1-based line number there.
    pub line: u64,
}

/// How to reopen a session in its agent: the command line, and the directory to run it in
/// where the agent needs one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Resume {
    /// The program and its arguments (`["claude", "--resume", "<id>"]`).
    pub argv: Vec<String>,
    /// The directory to run it in; `None` where the agent finds the session from anywhere, or
    /// where the directory is not known.
    pub cwd: Option<String>,
}

/// A seq's file and its line there.
pub type Located = (PathBuf, Location);

/// The [`Location`] of each of `lines` (1-based) in `reader`, in the order asked; `None` for a
/// line past the end. Reads only up to the last line asked for, without holding a line whole.
pub fn line_spans(reader: impl Read, lines: &[u64]) -> std::io::Result<Vec<Option<Location>>> {
    let Some(&last) = lines.iter().max() else {
        return Ok(Vec::new());
    };
    let mut wanted: Vec<u64> = lines.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut wanted = wanted.into_iter().peekable();
    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    let mut spans: BTreeMap<u64, Location> = BTreeMap::new();
    let (mut line, mut offset) = (1u64, 0u64);
    // The line being read: where it started, its length so far, and whether its last byte was a
    // `\r` (which a `\n` next makes part of the line ending).
    let (mut len, mut cr) = (0u64, false);
    let mut finish = |line: u64, start: u64, len: u64, cr: bool| {
        let byte_len = if cr { len - 1 } else { len };
        spans.insert(
            line,
            Location {
                line,
                byte_offset: start,
                byte_len,
            },
        );
    };
    'read: while line <= last {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            // A last line without a newline still counts.
            if len > 0 && wanted.peek() == Some(&line) {
                finish(line, offset, len, false);
            }
            break;
        }
        let mut at = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[at..]) {
            let piece = i as u64;
            let ends_cr = if i > 0 { buf[at + i - 1] == b'\r' } else { cr };
            if wanted.peek() == Some(&line) {
                finish(line, offset, len + piece, ends_cr);
                wanted.next();
            }
            offset += len + piece + 1;
            (len, cr) = (0, false);
            line += 1;
            at += i + 1;
            if line > last {
                break 'read;
            }
        }
        let rest = buf.len() - at;
        if rest > 0 {
            len += rest as u64;
            cr = buf[buf.len() - 1] == b'\r';
        }
        let n = buf.len();
        reader.consume(n);
    }
    Ok(lines.iter().map(|l| spans.get(l).copied()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain way: split the whole text.
    fn naive(text: &[u8], line: u64) -> Option<Location> {
        let mut offset = 0u64;
        let mut parts: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        if text.ends_with(b"\n") {
            parts.pop();
        }
        for (i, part) in parts.iter().enumerate() {
            let n = i as u64 + 1;
            let len = part.strip_suffix(b"\r").unwrap_or(part).len() as u64;
            if n == line {
                return Some(Location {
                    line,
                    byte_offset: offset,
                    byte_len: if i + 1 == parts.len() && !text.ends_with(b"\n") {
                        part.len() as u64
                    } else {
                        len
                    },
                });
            }
            offset += part.len() as u64 + 1;
        }
        None
    }

    /// A reader that hands out at most `n` bytes at a time, so lines span buffer refills.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn spans_equal_splitting_the_whole_text() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..300 {
            let len = rng.usize(0..200);
            let text: Vec<u8> = (0..len)
                .map(|_| *rng.choice(b"ab\r\n\n{}").unwrap())
                .collect();
            let asked: Vec<u64> = (0..rng.usize(1..6)).map(|_| rng.u64(1..40)).collect();
            let expected: Vec<Option<Location>> = asked.iter().map(|&l| naive(&text, l)).collect();
            for chunk in [1, 2, 3, 7, 1024] {
                let got = line_spans(Trickle(&text, chunk), &asked).unwrap();
                assert_eq!(got, expected, "{:?} {asked:?} chunk {chunk}", text);
            }
        }
    }

    #[test]
    fn nothing_asked_reads_nothing() {
        assert_eq!(line_spans(&b"a\nb\n"[..], &[]).unwrap(), vec![]);
    }
}
