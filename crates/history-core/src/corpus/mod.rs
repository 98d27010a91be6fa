//! A set of sources: discovery across harnesses, and loading one session's events with the
//! selected branch applied.

mod locate;
pub mod parallel;

pub use locate::locate;

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::choose::Filter;
use crate::error::HistoryError;
use crate::model::End;
use crate::model::{Event, SessionFile, SessionMeta};
use crate::source::{Layout, LineTest, Transcript, Walk};
use history_raw::RawFilter;

/// What a load keeps of each candidate event, decided as the event streams past, so that a large
/// transcript never has to sit in memory whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Drop the event entirely.
    Drop,
    /// Keep everything but the text (enough to fold and page).
    Meta,
    /// Keep the whole event.
    Full,
}

/// How many of the events a load keeps whole may keep their text, and which: those that stream
/// past first (a page from the oldest end), or last (from the newest). The others lose it as
/// the session streams by, so that a load holds a page's worth of text whatever the session's
/// size; [`Corpus::refill`] gives the few that turn out to be wanted their text back.
#[derive(Clone, Copy, Debug)]
pub struct Texts {
    /// Which end's texts are kept.
    pub from: End,
    /// How many.
    pub count: usize,
}

impl Texts {
    /// Room for a page of `limit` items and the one after it. (Where some of them lie off the
    /// session's branch, the page's items before them are read again.)
    pub fn page(from: End, limit: usize) -> Texts {
        Texts {
            from,
            count: limit.saturating_add(1),
        }
    }
}

/// One session's events, on its selected branch (or every branch, marked).
#[derive(Debug)]
pub struct Loaded {
    /// The events kept, in `(seq, part)` order.
    pub events: Vec<Event>,
    /// The positions of the events kept whole whose text a [`Texts`] window took, sorted.
    pub textless: Vec<(u64, u32)>,
    /// Notices from decoding.
    pub notices: Vec<String>,
    /// Title, summary, working directory.
    pub meta: SessionMeta,
    /// The files read: the session's own first.
    pub lineage: Vec<std::path::PathBuf>,
}

/// Where discovery keeps what each source's walk saw ([`Walk`]) from one run to the next.
/// Keeping is best effort: a memo that cannot be read is none, one that cannot be saved is lost.
pub trait WalkMemos: Send + Sync {
    /// The memo a harness's last walk saved, if any.
    fn load(&self, harness: &str) -> Option<Vec<u8>>;
    /// Keeps `bytes` as the harness's memo, in place of the last.
    fn save(&self, harness: &str, bytes: &[u8]);
}

/// Every source an invocation reads from.
pub struct Corpus {
    sources: Vec<Box<dyn Transcript>>,
    memos: Option<Box<dyn WalkMemos>>,
}

impl Corpus {
    /// A corpus over these sources.
    pub fn new(sources: Vec<Box<dyn Transcript>>) -> Corpus {
        Corpus {
            sources,
            memos: None,
        }
    }

    /// The same corpus, its discovery going on from what the last one saw, kept in `memos`.
    pub fn with_walk_memos(mut self, memos: Option<Box<dyn WalkMemos>>) -> Corpus {
        self.memos = memos;
        self
    }

    /// The harness names, in source order.
    pub fn harnesses(&self) -> Vec<&str> {
        self.sources.iter().map(|s| s.harness()).collect()
    }

    /// The source of a harness.
    pub fn source(&self, harness: &str) -> Option<&dyn Transcript> {
        self.sources
            .iter()
            .find(|s| s.harness() == harness)
            .map(|s| s.as_ref())
    }

    /// Every session of every source, one file per qualified id (the newest-modified), newest
    /// first; ties by qualified id.
    pub fn discover(&self) -> Vec<SessionFile> {
        self.discover_in(None)
    }

    /// [`Corpus::discover`], limited to one harness when `harness` names one.
    pub fn discover_in(&self, harness: Option<&str>) -> Vec<SessionFile> {
        let sources: Vec<&dyn Transcript> = self
            .sources
            .iter()
            .map(|s| s.as_ref())
            .filter(|s| harness.is_none_or(|h| s.harness() == h))
            .collect();
        // One source after another, each stat'ing (and reading headers) on every core when it
        // has enough files to be worth it ([`crate::parallel::filter_map_quick`]): sources shared
        // out among the cores would each walk on one, so that the one holding most of the
        // sessions would leave the other cores idle.
        let found = sources.iter().map(|s| match &self.memos {
            None => s.discover(),
            Some(memos) => {
                let walk = (memos.load(s.harness()))
                    .map_or_else(Walk::none, |bytes| Walk::from_bytes(&bytes));
                let found = s.discover_with(&walk);
                if let Some(bytes) = walk.to_bytes() {
                    memos.save(s.harness(), &bytes);
                }
                found
            }
        });
        let mut found: Vec<Vec<SessionFile>> = found.filter(|f| !f.is_empty()).collect();
        if found.len() == 1 {
            return newest_first(found.remove(0));
        }
        // Room for every file at once: one vector grown by doubling would hold up to twice.
        let mut all = Vec::with_capacity(found.iter().map(Vec::len).sum());
        all.extend(found.into_iter().flatten());
        newest_first(all)
    }

    /// Whether a session can hold a hit, from the raw bytes of its file and of every ancestor it
    /// inherits history from. It never says no wrongly.
    pub fn may_match(&self, file: &SessionFile, raw: &RawFilter) -> bool {
        let Some(source) = self.source(&file.key.harness) else {
            return true;
        };
        raw.passes_everything()
            || source.layout() == Layout::Records
            || source
                .lineage(file)
                .iter()
                .any(|path| raw.may_match(|| crate::source::open_raw(source, path)))
    }

    /// [`Corpus::may_match`] for `filter`'s queries, as one test of a session.
    pub fn raw_prefilter(&self, filter: &Filter) -> impl Fn(&SessionFile) -> bool + Sync + '_ {
        let raw = RawFilter::new(filter.queries());
        move |file: &SessionFile| self.may_match(file, &raw)
    }

    /// Decodes one session, keeping of each event what `keep` says. With `all_branches`, events
    /// off the selected branch are kept and marked; otherwise they are dropped. `lines` tells the
    /// decoder which raw lines can hold a wanted event ([`Transcript::decode`]).
    pub fn load(
        &self,
        file: &SessionFile,
        keep: &dyn Fn(&Event) -> Keep,
        all_branches: bool,
        lines: Option<LineTest<'_>>,
    ) -> Result<Loaded, HistoryError> {
        self.load_within(file, keep, all_branches, lines, None)
    }

    /// [`Corpus::load`], keeping the text of no more events than `texts` says.
    pub fn load_within(
        &self,
        file: &SessionFile,
        keep: &dyn Fn(&Event) -> Keep,
        all_branches: bool,
        lines: Option<LineTest<'_>>,
        texts: Option<Texts>,
    ) -> Result<Loaded, HistoryError> {
        let unavailable = |reason: String| HistoryError::HistoryUnavailable {
            session: file.key.to_string(),
            reason,
        };
        let source = self
            .source(&file.key.harness)
            .ok_or_else(|| unavailable("no decoder for this harness".into()))?;
        let mut events: Vec<Event> = Vec::new();
        let mut textless = Vec::new();
        // The events that still have their text, oldest first.
        let mut whole = std::collections::VecDeque::new();
        let mut sink = |mut event: Event| match keep(&event) {
            Keep::Drop => {}
            Keep::Meta => {
                event.text = String::new();
                events.push(event);
            }
            Keep::Full => {
                match texts {
                    Some(t) if t.from == End::Oldest && whole.len() >= t.count => {
                        event.text = String::new();
                        textless.push(event.position());
                    }
                    Some(_) => whole.push_back(events.len()),
                    None => {}
                }
                events.push(event);
                if texts.is_some_and(|t| t.from == End::Newest && whole.len() > t.count) {
                    if let Some(i) = whole.pop_front() {
                        let e: &mut Event = &mut events[i];
                        e.text = String::new();
                        textless.push(e.position());
                    }
                }
            }
        };
        let decoded = source
            .decode(file, &mut sink, lines)
            .map_err(|e| unavailable(e.to_string()))?;
        textless.sort_unstable();
        if let Some(branch) = &decoded.branch {
            let on = |e: &Event| branch.binary_search(&e.seq).is_ok();
            if all_branches {
                for e in &mut events {
                    e.on_active_branch = Some(on(e));
                }
            } else {
                events.retain(on);
            }
        } else if all_branches {
            for e in &mut events {
                e.on_active_branch = Some(true);
            }
        }
        events.sort_by_key(Event::position);
        Ok(Loaded {
            events,
            textless,
            notices: decoded.notices,
            meta: decoded.meta,
            lineage: decoded.lineage,
        })
    }

    /// Gives those of `events` (of `loaded`'s session, `file`) whose text a [`Texts`] window
    /// took their text back, decoding the session again for them alone.
    pub fn refill<'e>(
        &self,
        file: &SessionFile,
        textless: &[(u64, u32)],
        events: impl IntoIterator<Item = &'e mut Event>,
    ) -> Result<(), HistoryError> {
        let mut wanted: Vec<&mut Event> = events
            .into_iter()
            .filter(|e| textless.binary_search(&e.position()).is_ok())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        wanted.sort_by_key(|e| e.position());
        let positions: Vec<(u64, u32)> = wanted.iter().map(|e| e.position()).collect();
        let keep = |e: &Event| match positions.binary_search(&e.position()) {
            Ok(_) => Keep::Full,
            Err(_) => Keep::Drop,
        };
        let again = self.load(file, &keep, true, None)?;
        for full in again.events {
            if let Ok(i) = positions.binary_search(&full.position()) {
                wanted[i].text = full.text;
            }
        }
        Ok(())
    }
}

/// `files` newest first, of one key found twice the newer file only (the first in `files` of
/// the same time); files of the same time by key. Keys are read once each, in the order of
/// `files` (where they lie in memory): the sort and the search for twins compare their first
/// bytes and hashes, and the keys themselves only where those are equal.
fn newest_first(files: Vec<SessionFile>) -> Vec<SessionFile> {
    let prefix = |s: &str| {
        let mut first = [0u8; 8];
        let n = s.len().min(8);
        first[..n].copy_from_slice(&s.as_bytes()[..n]);
        u64::from_be_bytes(first)
    };
    let mut order: Vec<(Reverse<i64>, u64, u64, usize)> = (files.iter().enumerate())
        .map(|(i, f)| {
            (
                Reverse(f.modified),
                prefix(&f.key.harness),
                prefix(&f.key.id),
                i,
            )
        })
        .collect();
    // Padded with zeros, first bytes that differ order two strings as the strings do.
    order.sort_unstable_by(|a, b| {
        (a.0, a.1, a.2)
            .cmp(&(b.0, b.1, b.2))
            .then_with(|| files[a.3].key.cmp(&files[b.3].key))
            .then(a.3.cmp(&b.3))
    });
    let hashes: Vec<u64> = files
        .iter()
        .map(|f| FxBuildHasher.hash_one(&f.key))
        .collect();
    let mut first: FxHashMap<u64, usize> = FxHashMap::default();
    first.reserve(files.len());
    // Kept files whose key's hash is another kept key's: almost never any.
    let mut collided: Vec<usize> = Vec::new();
    order.retain(|&(.., i)| match first.entry(hashes[i]) {
        Entry::Vacant(e) => {
            e.insert(i);
            true
        }
        Entry::Occupied(e) => {
            let key = &files[i].key;
            let twin =
                files[*e.get()].key == *key || collided.iter().any(|&k| files[k].key == *key);
            if !twin {
                collided.push(i);
            }
            !twin
        }
    });
    // Each file moved to its place where it lies, twins after the rest: never held twice.
    let mut place = vec![usize::MAX; files.len()];
    for (k, &(.., i)) in order.iter().enumerate() {
        place[i] = k;
    }
    let twins = place.iter_mut().filter(|p| **p == usize::MAX);
    for (p, k) in twins.zip(order.len()..) {
        *p = k;
    }
    let mut files = files;
    for i in 0..files.len() {
        while place[i] != i {
            let j = place[i];
            files.swap(i, j);
            place.swap(i, j);
        }
    }
    files.truncate(order.len());
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SessionKey;

    fn file(harness: &str, id: &str, modified: i64, path: &str) -> SessionFile {
        SessionFile {
            key: SessionKey::new(harness, id),
            path: path.into(),
            modified,
            size: 0,
            fingerprint: None,
        }
    }

    #[test]
    fn newest_first_keeps_the_newer_twin_and_orders_ties_by_key() {
        // Ids alike in their first eight bytes, or short, or prefixes of one another: only the
        // keys themselves tell them apart.
        let files = vec![
            file("pi", "sessionA-2", 5, "a"),
            file("claude", "sessionA-9", 5, "i"),
            file("claude", "sessionA-10", 5, "b"),
            file("claude", "sessionA-1", 5, "c"),
            file("claude", "x", 9, "d"),
            file("claude", "sessionA-1", 7, "e"),
            file("codex", "sessionA", 5, "f"),
            file("claude", "x", 9, "g"),
            file("claude", "sessionA", 1, "h"),
        ];
        let got: Vec<String> = (newest_first(files).iter())
            .map(|f| format!("{} {}", f.key, f.path.display()))
            .collect();
        let want = [
            "claude:x d",
            "claude:sessionA-1 e",
            "claude:sessionA-10 b",
            "claude:sessionA-9 i",
            "codex:sessionA f",
            "pi:sessionA-2 a",
            "claude:sessionA h",
        ];
        assert_eq!(got, want);
    }
}
