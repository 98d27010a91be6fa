//! The overview's representative, answered from the cache when the session's files are unchanged.

use history_core::history::RepresentativeCache;
use history_core::overview::{representative, Representative};
use history_core::{Corpus, Filter, HistoryError, SessionFile};

use crate::{fingerprints, Cache, Key};

/// The version of what an entry holds: bump it whenever a decoder, the event model or the choice
/// of representative changes, so that entries written by an older build are misses.
pub const DECODER_VERSION: &str = concat!("notesoup-history ", env!("CARGO_PKG_VERSION"), " rep/3");

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
    let witnesses = source.lineage(file);
    let root = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
    let key = Key::new(root, file.key.harness.clone(), file.key.id.clone());
    if let Some(hit) = cache.get::<Representative>(&key, &witnesses) {
        return Ok(hit);
    }
    let before = fingerprints(&witnesses);
    let rep = representative(corpus, file, &unfiltered)?;
    if let Some(before) = before {
        if rep.lineage == witnesses {
            cache.put(&key, &before, &rep);
        }
    }
    Ok(rep)
}

impl RepresentativeCache for Cache {
    fn representative(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
    ) -> Result<Representative, HistoryError> {
        cached_representative(self, corpus, file)
    }
}
