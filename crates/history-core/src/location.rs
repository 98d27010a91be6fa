//! Where an item came from and how to get back to it: the line of a transcript file that an
//! event was decoded from (its file, line number and bytes), and the command that reopens its
//! session in its agent.
//!
//! [`locate`] is the one place that answers "where is this seq": today it asks the session's
//! source which file and line each seq comes from ([`Transcript::origins`]) and reads those
//! files once each, up to the last line asked for; a search projection that already knows line
//! offsets can answer the same question without reading.
//!
//! ```
//! use history_core::location::{line_spans, Location};
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

use crate::corpus::Corpus;
use crate::model::SessionFile;
use crate::page::Item;
use crate::source::Transcript;

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

/// The file and line a seq comes from ([`Transcript::origins`]).
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

/// Where each of `seqs` of the session in `file` is, in the order asked; `None` for a seq the
/// source cannot place or whose line is not (or no longer) in its file. Each file is read once,
/// up to the last line asked of it.
pub fn locate(corpus: &Corpus, file: &SessionFile, seqs: &[u64]) -> Vec<Option<Located>> {
    let Some(source) = corpus.source(&file.key.harness) else {
        return vec![None; seqs.len()];
    };
    let origins = source.origins(file, seqs);
    let mut by_file: BTreeMap<&PathBuf, Vec<u64>> = BTreeMap::new();
    for origin in origins.iter().flatten() {
        by_file.entry(&origin.path).or_default().push(origin.line);
    }
    let mut found: BTreeMap<(&PathBuf, u64), Location> = BTreeMap::new();
    for (path, lines) in by_file {
        let Ok(spans) = read_spans(source, path, &lines) else {
            continue;
        };
        for span in spans.into_iter().flatten() {
            found.insert((path, span.line), span);
        }
    }
    origins
        .iter()
        .map(|o| {
            let o = o.as_ref()?;
            Some((o.path.clone(), *found.get(&(&o.path, o.line))?))
        })
        .collect()
}

/// Fills in each item's session's [`Resume`] and, with `locate`, its [`Location`] (its `path`
/// becoming the file the line is in); `files[i]` is the session file of `items[i]`. Sessions are
/// located on every core, each file read once.
pub(crate) fn fill(corpus: &Corpus, items: &mut [Item], files: &[&SessionFile], locate: bool) {
    let mut sessions: Vec<(&SessionFile, Vec<usize>)> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        match sessions.iter_mut().find(|(f, _)| f.key == file.key) {
            Some((_, at)) => at.push(i),
            None => sessions.push((file, vec![i])),
        }
    }
    let found = crate::parallel::map(&sessions, |(file, at)| {
        // What a search already located is not looked for again.
        let unknown: Vec<usize> = at
            .iter()
            .copied()
            .filter(|&i| locate && items[i].location.is_none())
            .collect();
        let seqs: Vec<u64> = unknown.iter().map(|&i| items[i].event.seq).collect();
        let resume = corpus
            .source(&file.key.harness)
            .and_then(|s| s.resume(file));
        let located = match seqs.is_empty() {
            true => Vec::new(),
            false => self::locate(corpus, file, &seqs),
        };
        (unknown, located, resume)
    });
    for ((_, at), (unknown, located, resume)) in sessions.iter().zip(found) {
        for (&i, place) in unknown.iter().zip(located) {
            if let Some((path, location)) = place {
                items[i].path = Some(path.display().to_string());
                items[i].location = Some(location);
            }
        }
        for &i in at {
            items[i].resume.clone_from(&resume);
        }
    }
}

fn read_spans(
    source: &dyn Transcript,
    path: &std::path::Path,
    lines: &[u64],
) -> std::io::Result<Vec<Option<Location>>> {
    line_spans(crate::source::open_raw(source, path)?, lines)
}

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
