//! Opening a rollout, plain or zstd-compressed, as a bounded line stream.

use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use history_core::DecodeError;
use history_core::Snapshot;
use history_core::{open_transcript, open_untouched, Lines};

/// A rollout's lines, whatever its encoding.
pub(crate) type LineReader = Lines<Box<dyn BufRead>>;

const BUFFER: usize = 256 * 1024;
/// The buffer for reading a file's header alone: a whole-file buffer would copy far more of the
/// file than its first lines.
const HEAD_BUFFER: usize = 16 * 1024;

/// The largest window a compressed rollout may need, as a power of two (16 MiB): decompressing
/// holds a window's worth of bytes, and Codex compresses at level 3, whose window is 2 MiB. A
/// file that needs more is refused with zstd's reason rather than allowed 128 MiB, zstd's own
/// limit.
const WINDOW_LOG_MAX: u32 = 24;

/// A decompressing reader of `file` with a bounded window.
fn decompress<R: io::Read>(
    file: R,
) -> io::Result<zstd::stream::read::Decoder<'static, BufReader<R>>> {
    let mut decoder = zstd::stream::read::Decoder::new(file)?;
    decoder.window_log_max(WINDOW_LOG_MAX)?;
    Ok(decoder)
}

/// Whether a path names a compressed rollout (`….jsonl.zst`).
pub(crate) fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Opens a rollout for streaming. A `.zst` file is decompressed on the fly, never to disk and
/// never into one buffer; the 512 MiB limit applies to its encoded size here and to its decoded
/// bytes in [`Lines`].
pub(crate) fn open(path: &Path) -> Result<LineReader, DecodeError> {
    open_buffered(path, BUFFER)
}

/// [`open`] for reading no more than the first lines (the header).
pub(crate) fn open_head(path: &Path) -> Result<LineReader, DecodeError> {
    open_buffered(path, HEAD_BUFFER)
}

#[cfg(test)]
thread_local! {
    /// How many rollouts this thread opened for their lines: a test can tell a file read twice.
    pub(crate) static OPENED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn open_buffered(path: &Path, buffer: usize) -> Result<LineReader, DecodeError> {
    #[cfg(test)]
    OPENED.with(|n| n.set(n.get() + 1));
    let io = |source| DecodeError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = open_transcript(path)?;
    let reader: Box<dyn BufRead> = if is_compressed(path) {
        let decoder = decompress(file).map_err(io)?;
        Box::new(BufReader::with_capacity(buffer, decoder))
    } else {
        Box::new(BufReader::with_capacity(buffer, file))
    };
    Ok(Lines::new(reader, path.display().to_string()))
}

/// The lines of a plain rollout from a snapshot on, numbered as from the start.
pub(crate) fn open_at(path: &Path, snapshot: &Snapshot) -> Result<LineReader, DecodeError> {
    let file = history_core::snapshot::open_at(path, snapshot.offset)?;
    let mut lines = Lines::new(
        Box::new(BufReader::with_capacity(BUFFER, file)) as Box<dyn BufRead>,
        path.display().to_string(),
    );
    lines.start_at(snapshot.offset, snapshot.lines);
    Ok(lines)
}

/// The bytes of a rollout as Codex wrote its lines: a `.zst` file decompressed on the fly.
pub(crate) fn open_raw(path: &Path) -> io::Result<Box<dyn Read>> {
    let file = open_untouched(path)?;
    Ok(if is_compressed(path) {
        Box::new(decompress(file)?)
    } else {
        Box::new(file)
    })
}
