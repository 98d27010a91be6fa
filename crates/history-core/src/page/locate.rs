//! Filling in where a page's items come from: each item's line in its file and the command that
//! reopens its session, sessions located on every core.

use crate::corpus::{locate, Corpus};
use crate::model::SessionFile;
use crate::page::Item;

/// Fills in each item's session's [`crate::Resume`] and, with `lines`, its [`crate::Location`] (its `path`
/// becoming the file the line is in); `files[i]` is the session file of `items[i]`. Sessions are
/// located on every core, each file read once.
pub(crate) fn fill_locations(
    corpus: &Corpus,
    items: &mut [Item],
    files: &[&SessionFile],
    lines: bool,
) {
    let mut sessions: Vec<(&SessionFile, Vec<usize>)> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        match sessions.iter_mut().find(|(f, _)| f.key == file.key) {
            Some((_, at)) => at.push(i),
            None => sessions.push((file, vec![i])),
        }
    }
    let found = crate::corpus::parallel::map(&sessions, |(file, at)| {
        // What a search already located is not looked for again.
        let unknown: Vec<usize> = at
            .iter()
            .copied()
            .filter(|&i| lines && items[i].location.is_none())
            .collect();
        let seqs: Vec<u64> = unknown.iter().map(|&i| items[i].event.seq).collect();
        let resume = corpus
            .source(&file.key.harness)
            .and_then(|s| s.resume(file));
        let located = match seqs.is_empty() {
            true => Vec::new(),
            false => locate(corpus, file, &seqs),
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
