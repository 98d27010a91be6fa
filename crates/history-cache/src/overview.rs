//! The overview's representative, answered from the cache when the session's files are unchanged.

use std::path::PathBuf;

use history_core::RepresentativeCache;
use history_core::{representative, Representative};
use history_core::{Corpus, Filter, HistoryError, SessionFile};

use crate::{fingerprints, Cache, Key};

/// The version of what an entry holds: bump it whenever a decoder, the event model or the choice
/// of representative changes, so that entries written by an older build are misses.
pub const DECODER_VERSION: &str = concat!("notesoup-history ", env!("CARGO_PKG_VERSION"), " rep/5");

/// The session's representative for the unfiltered overview. A hit needs the entry's witness
/// list (the session's own file and every ancestor, as the source's lineage discovery finds them
/// now) to match exactly; a miss decodes strictly and stores the result only when the files did
/// not change while they were read and decoding read exactly those files. Failures are returned,
/// never stored.
pub fn cached_representative(
    cache: &Cache,
    corpus: &Corpus,
    file: &SessionFile,
) -> Result<Representative, HistoryError> {
    let unfiltered = Filter::default();
    let Some(source) = corpus.source(&file.key.harness) else {
        return representative(corpus, file, &unfiltered);
    };
    let (key, witnesses) = entry(source, file);
    if let Some(hit) = cache.get::<Representative>(&key, &witnesses) {
        return Ok(hit);
    }
    let before = fingerprints(&witnesses);
    let rep = representative(corpus, file, &unfiltered)?;
    if let Some(before) = before {
        let whole = before
            .iter()
            .all(|(path, fingerprint)| ends_a_line(source, path, fingerprint.size));
        if rep.lineage == witnesses && whole {
            cache.put(&key, &before, &rep);
        }
    }
    Ok(rep)
}

/// The key of `file`'s entry, and the files it is decoded from (the session's own first).
fn entry(source: &dyn history_core::Transcript, file: &SessionFile) -> (Key, Vec<PathBuf>) {
    let witnesses = source.lineage(file);
    let root = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
    let key = Key::new(root, file.key.harness.clone(), file.key.id.clone());
    (key, witnesses)
}

/// Whether the first `size` bytes of the transcript at `path` end at the end of a line. An
/// agent may write a line in more than one call: a decode that met the first half has a damaged
/// last line that the next write repairs, and is not worth keeping even for as long as the file
/// stays that way. A compressed file, which the source cannot read at an offset, is written
/// whole; a file that cannot be read is left to the fingerprints.
fn ends_a_line(source: &dyn history_core::Transcript, path: &std::path::Path, size: u64) -> bool {
    let Some(last) = size.checked_sub(1) else {
        return true;
    };
    match source.read_at(path, last, 1) {
        Some(Ok(byte)) => byte == b"\n",
        Some(Err(_)) => false,
        None => true,
    }
}

impl RepresentativeCache for Cache {
    fn representative(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
    ) -> Result<Representative, HistoryError> {
        cached_representative(self, corpus, file)
    }

    fn cached(&self, corpus: &Corpus, file: &SessionFile) -> Option<Representative> {
        let (key, witnesses) = entry(corpus.source(&file.key.harness)?, file);
        self.get(&key, &witnesses)
    }
}
