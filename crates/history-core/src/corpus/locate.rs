//! Where a seq of a session is: which file and line its source says it comes from
//! ([`crate::Transcript::origins`]), and where that line's bytes are, each file read once up to
//! the last line asked of it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::corpus::Corpus;
use crate::model::SessionFile;
use crate::source::{line_spans, Located, Location, Transcript};

/// Where each of `seqs` of the session in `file` is, in the order asked; `None` for a seq the
/// source cannot place (a record of a store, [`crate::source::Layout::Records`]) or whose line is not (or no longer) in its file. Each file is read once,
/// up to the last line asked of it.
pub fn locate(corpus: &Corpus, file: &SessionFile, seqs: &[u64]) -> Vec<Option<Located>> {
    let Some(source) = corpus.source(&file.key.harness) else {
        return vec![None; seqs.len()];
    };
    // A record of a store is no line of a file.
    if source.layout() == crate::source::Layout::Records {
        return vec![None; seqs.len()];
    }
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

fn read_spans(
    source: &dyn Transcript,
    path: &std::path::Path,
    lines: &[u64],
) -> std::io::Result<Vec<Option<Location>>> {
    line_spans(crate::source::open_raw(source, path)?, lines)
}
