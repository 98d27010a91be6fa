//! A whole session for a document (`export`): every event of its selected branch (or of every
//! branch, marked), in order, with what the session is about first, and no budget.
//!
//! The events are streamed to a [`Document`] as they are decoded, so that a long session never
//! sits in memory whole. Which events belong is known only once the whole file is read (the
//! branch is chosen at its end), so the session is decoded twice: once keeping no text, to learn
//! its events, its times and its branch; then again, handing each event on as it comes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::model::Timestamp;
use crate::model::{Event, Role, SessionFile, SessionMeta};
use crate::source::Resume;

/// What `export` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportRequest {
    /// The selector of one session; `None`: the current session.
    pub session: Option<String>,
    /// Every branch of a branched session, each event marked.
    pub all_branches: bool,
}

/// What a document says of its session before the events.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    /// The canonical `harness:id`.
    pub session: String,
    /// The harness (`claude`).
    pub harness: String,
    /// The session's transcript file.
    pub path: PathBuf,
    /// Title, working directory, git branch.
    pub meta: SessionMeta,
    /// The time of its earliest timed event.
    pub first: Option<Timestamp>,
    /// The time of its latest timed event.
    pub last: Option<Timestamp>,
    /// How many events follow.
    pub events: usize,
    /// What decoding said (damaged lines skipped…).
    pub notices: Vec<String>,
    /// How to reopen the session in its agent, where it can be told.
    pub resume: Option<Resume>,
    /// The first prompt on the selected branch, where one is among the first few a person
    /// typed: what a document without a title is called by.
    pub first_prompt: Option<String>,
}

/// How many prompts the first decode keeps the text of, looking for the first on the branch
/// (the ones before it may lie on an abandoned one): a few, so that no long session's prompts
/// all sit in memory.
const PROMPTS_KEPT: usize = 8;

/// Where an export goes: the head once, then each event in `(seq, part)` order.
pub trait Document {
    /// What the session is about.
    fn head(&mut self, head: &Head);
    /// The next event.
    fn event(&mut self, event: &Event);
}

/// Streams the session in `file` into `doc`; returns how many events it got.
pub fn export(
    corpus: &Corpus,
    file: &SessionFile,
    all_branches: bool,
    doc: &mut dyn Document,
) -> Result<usize, HistoryError> {
    let prompts = std::cell::Cell::new(0);
    let keep = |e: &Event| {
        if e.visible && e.role == Role::User && prompts.get() < PROMPTS_KEPT {
            prompts.set(prompts.get() + 1);
            Keep::Full
        } else {
            Keep::Meta
        }
    };
    let outline = corpus.load(file, &keep, all_branches, None)?;
    let first_prompt = outline
        .events
        .iter()
        .find(|e| {
            e.visible
                && e.is_prompt()
                && !e.text.trim().is_empty()
                && e.on_active_branch != Some(false)
        })
        .map(|e| e.text.clone());
    let source =
        corpus
            .source(&file.key.harness)
            .ok_or_else(|| HistoryError::HistoryUnavailable {
                session: file.key.to_string(),
                reason: "no decoder for this harness".into(),
            })?;
    let times = || outline.events.iter().filter_map(|e| e.timestamp);
    doc.head(&Head {
        session: file.key.to_string(),
        harness: file.key.harness.clone(),
        path: file.path.clone(),
        meta: outline.meta.clone(),
        first: times().min(),
        last: times().max(),
        events: outline.events.len(),
        notices: outline.notices.clone(),
        resume: source.resume(file),
        first_prompt,
    });
    // The events that belong, in order, with their branch mark.
    let wanted: Vec<((u64, u32), Option<bool>)> = outline
        .events
        .iter()
        .map(|e| (e.position(), e.on_active_branch))
        .collect();
    drop(outline);
    let mut order = InOrder {
        wanted: &wanted,
        next: 0,
        early: BTreeMap::new(),
        doc,
    };
    source
        .decode(file, &mut |e| order.take(e), None)
        .map_err(|e| HistoryError::HistoryUnavailable {
            session: file.key.to_string(),
            reason: e.to_string(),
        })?;
    order.finish();
    Ok(wanted.len())
}

/// Hands the wanted events on in `(seq, part)` order. A decoder emits in file order, which is
/// that order for every harness so far; one that emits a line's event late only makes the
/// events after it wait here.
struct InOrder<'a, 'd> {
    wanted: &'a [((u64, u32), Option<bool>)],
    next: usize,
    early: BTreeMap<usize, Event>,
    doc: &'d mut dyn Document,
}

impl InOrder<'_, '_> {
    fn take(&mut self, mut event: Event) {
        let Ok(at) = self
            .wanted
            .binary_search_by_key(&event.position(), |(position, _)| *position)
        else {
            return; // off the branch, or not an event the first pass kept
        };
        if at < self.next || self.early.contains_key(&at) {
            return;
        }
        event.on_active_branch = self.wanted[at].1;
        if at > self.next {
            self.early.insert(at, event);
            return;
        }
        self.doc.event(&event);
        self.next += 1;
        while let Some(event) = self.early.remove(&self.next) {
            self.doc.event(&event);
            self.next += 1;
        }
    }

    /// Whatever still waits (a wanted event the second decode did not give again).
    fn finish(self) {
        for event in self.early.into_values() {
            self.doc.event(&event);
        }
    }
}
