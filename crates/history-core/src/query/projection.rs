//! What the core asks of a search projection (the search index), the trait an embedder
//! implements to spare reading transcripts for a search, and what it answers.

use crate::choose::Filter;
use crate::corpus::Corpus;
use crate::error::HistoryError;
use crate::model::{End, Event, SessionFile, SessionMeta, Timestamp};
use crate::source::Location;

/// The hits of one session, each with where its line is when that is known, and what the
/// session is about.
pub type SessionHits = (Vec<(Event, Option<Location>)>, SessionMeta);

/// Events of a session as a projection gives them: some lines' ([`Projection::lines`]: every
/// event of the line on any branch, each marked, in part order, with its text) or the whole
/// session's ([`Projection::events`]); with what the session is about and the notices a decode
/// of the whole session gives.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionEvents {
    /// The line's events.
    pub events: Vec<Event>,
    /// What the session is about.
    pub meta: SessionMeta,
    /// What a decode of the session says of it (damaged lines skipped, say).
    pub notices: Vec<String>,
}

/// What a search projection knows of a session's hits without reading its files. It must never
/// rule out a hit wrongly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// Nothing: the session is read to find out.
    Unknown,
    /// Nothing, and updating the projection would not change that (it could not take the
    /// session in): the session is read.
    Unindexable,
    /// It holds no hit.
    NoHit,
    /// Its hits, if any, happen at or after `first` and at or before `last` (`None`: they may
    /// have no time; as a `last`, they all have none).
    Within {
        /// The earliest time a hit can have.
        first: Option<Timestamp>,
        /// The latest time a hit can have.
        last: Option<Timestamp>,
        /// Whether the session was appended to since the projection took it in (its appended
        /// lines are decoded for their hits).
        appended: bool,
    },
}

/// Which hits of one session a search wants ([`Projection::hits`]).
pub struct Wanted<'a> {
    /// Queries, roles and time window.
    pub filter: &'a Filter,
    /// What else an event must pass: the side of the page's bound it lies on.
    pub admit: &'a dyn Fn(&Event) -> bool,
    /// The end the hits are counted from.
    pub from: End,
    /// How many, at most, from that end.
    pub count: usize,
    /// Every branch, each event marked, rather than the selected one.
    pub all_branches: bool,
    /// What becomes of the hits' texts.
    pub texts: HitTexts<'a>,
    /// The order the hits are counted in.
    pub order: HitOrder,
}

/// The order a projection counts a session's hits in ([`Wanted::order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitOrder {
    /// The merge order: time first.
    Merge,
    /// The session's own order, by position (seq, then part), as a page of one session is.
    Position,
    /// Those of the shortest lines first, for a caller that counts hits up to `count` and
    /// relies on no order: it then reads the fewest bytes. A projection may count them in the
    /// merge order instead (where finding the shortest would cost more than it spares).
    Cheapest,
}

/// What becomes of the texts of the hits a projection gives ([`Wanted::texts`]).
#[derive(Clone, Copy)]
pub enum HitTexts<'a> {
    /// Each hit carries its text.
    Kept,
    /// Each hit is matched all the same but comes with an empty text: for a caller that counts
    /// them.
    Dropped,
    /// Each hit is matched all the same, and only the best of those given back keeps its text,
    /// as this tells whether one hit is better than another: for a caller that counts them and
    /// shows one (`--sessions`), which then holds one text at a time and reads no line twice.
    Best(&'a dyn Fn(&Event, &Event) -> bool),
    /// Each event of a line that may hold a hit, with its text, is shown to this as it is
    /// read, its text not matched, and not given back: for a caller that reads each text once
    /// and looks for its own words in it (`find` tallies them), which then holds a batch of
    /// texts at a time, not every hit's, and has no text matched twice. Every such event is
    /// shown, whatever `count`, in no set order; once this says `false`, no more are read. A
    /// projection that finds a session's hits at once shows the hits alone.
    Candidates(&'a dyn Fn(&Event) -> bool),
}

impl HitTexts<'_> {
    /// Whether the hits' texts are read at all.
    pub fn read(&self) -> bool {
        !matches!(self, HitTexts::Dropped)
    }

    /// Adds a hit found with its text to `hits` as these ask: kept, emptied, kept only while it
    /// is the best (`best`: where the best of `hits` is), or shown and not given back. Whether
    /// more are wanted.
    pub fn add(
        &self,
        hits: &mut Vec<(Event, Option<Location>)>,
        best: &mut Option<usize>,
        (mut event, location): (Event, Option<Location>),
    ) -> bool {
        match self {
            HitTexts::Kept => {}
            HitTexts::Dropped => event.text = String::new(),
            HitTexts::Best(better) => match *best {
                Some(b) if !better(&event, &hits[b].0) => event.text = String::new(),
                _ => {
                    if let Some(b) = best.replace(hits.len()) {
                        hits[b].0.text = String::new();
                    }
                }
            },
            HitTexts::Candidates(to) => return to(&event),
        }
        hits.push((event, location));
        true
    }

    /// Makes hits found with their texts what these ask for ([`HitTexts::add`]), shown one
    /// after another until one says no more. For a projection that finds a session's hits all
    /// at once.
    pub fn apply(&self, hits: &mut Vec<(Event, Option<Location>)>) {
        let (mut kept, mut best) = (Vec::with_capacity(hits.len()), None);
        for hit in hits.drain(..) {
            if !self.add(&mut kept, &mut best, hit) {
                break;
            }
        }
        *hits = kept;
    }
}

/// The events of a session that hold some of a question's terms, as a projection's word lists
/// know them ([`Projection::counted`]), with how often each holds each term.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// The events, in the order of their places.
    pub events: Vec<CountedEvent>,
    /// How often each holds each term (at most `u16::MAX`, as a read counts): the `k`-th
    /// term's count in the `i`-th event at `i × terms + k`.
    pub counts: Vec<u16>,
}

/// An event of [`Counted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountedEvent {
    /// Its line.
    pub seq: u64,
    /// Its part of the line.
    pub part: u32,
    /// Its role.
    pub role: crate::model::Role,
    /// When it happened.
    pub timestamp: Option<Timestamp>,
    /// Its length in words ([`crate::for_each_term`]).
    pub words: u32,
}

/// A search projection: what it knows of sessions' hits without reading their files.
pub trait Projection: Send + Sync {
    /// What it knows of each of `sessions` (in their order) for `filter`'s queries; it must
    /// never rule out a hit wrongly.
    fn known(&self, corpus: &Corpus, sessions: &[SessionFile], filter: &Filter) -> Vec<Known>;

    /// The hits of a session it knows ([`Known::Within`]) and what the session is about, from
    /// the lines it locates rather than a decode of the session: of its events that pass the
    /// filter and `admit`, on the selected branch (or on every branch, marked, with
    /// `all_branches`), the first `count` from `from`'s end in [`Wanted::order`], or all of
    /// them when fewer, their texts as `texts` asks
    /// ([`HitTexts::apply`]). `None` when it cannot tell: the session is decoded instead. The
    /// default always declines.
    fn hits(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        wanted: &Wanted<'_>,
    ) -> Option<Result<SessionHits, HistoryError>> {
        let _ = (corpus, file, wanted);
        None
    }

    /// For each of `sessions`, of which `known` says what [`Projection::known`] said: the
    /// events on its selected branch that hold one of `terms` (as [`crate::for_each_term`] cuts
    /// text), each with how often it holds each term, from word lists rather than the session's
    /// lines. `None` for a session it cannot answer for whole (not known as it is now, say),
    /// which is read instead. The default always declines.
    fn counted(
        &self,
        corpus: &Corpus,
        sessions: &[SessionFile],
        known: &[Known],
        terms: &[String],
    ) -> Vec<Option<Counted>> {
        let _ = (corpus, known, terms);
        vec![None; sessions.len()]
    }

    /// What a session it holds as the session is now (not appended to since) is about, and
    /// the notices a decode of the whole session gives. `None` when it cannot tell. The
    /// default always declines.
    fn about(&self, corpus: &Corpus, file: &SessionFile) -> Option<(SessionMeta, Vec<String>)> {
        let _ = (corpus, file);
        None
    }

    /// Every event of a session it holds as the session is now, without their texts, on the
    /// selected branch (on every branch, marked, with `all_branches`), in the session's order;
    /// with what the session is about and the notices a decode of it gives. `None` when it
    /// cannot tell. The default always declines.
    fn events(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        all_branches: bool,
    ) -> Option<SessionEvents> {
        let _ = (corpus, file, all_branches);
        None
    }

    /// The event that represents a session it holds as the session is now, under no filter
    /// ([`crate::query::Choice`]), with its text read from its line alone; `Some(None)` when the
    /// session has no event. `None` when it cannot tell (the session is then decoded). The
    /// default always declines.
    fn representative(&self, corpus: &Corpus, file: &SessionFile) -> Option<Option<Event>> {
        let _ = (corpus, file);
        None
    }

    /// Gives `events` (of a session [`Projection::events`] answered for) their texts, each read
    /// from its line alone. Whether it could; if not, the session is decoded.
    fn texts(&self, corpus: &Corpus, file: &SessionFile, events: &mut [Event]) -> bool {
        let _ = (corpus, file, events);
        false
    }

    /// The events of lines `seqs` (ascending) of a session it holds as the session is now,
    /// each read from that line alone: a page of a few events without decoding the session;
    /// with, for each of `seqs`, where the line is in the session's own file when the
    /// projection knows it as [`crate::locate`] would find it. `None` when it cannot tell (the
    /// session is then decoded). The default always declines.
    fn lines(
        &self,
        corpus: &Corpus,
        file: &SessionFile,
        seqs: &[u64],
    ) -> Option<(SessionEvents, Vec<Option<Location>>)> {
        let _ = (corpus, file, seqs);
        None
    }
}

/// How a search of `n` sessions was answered, from what a projection knew of each
/// (`known(i)`: `None` without one): how many it answered for, how many were read, how many of
/// those it cannot take in, and how many it answered for had been appended to since.
pub(crate) fn coverage(n: usize, known: impl Fn(usize) -> Option<Known>) -> crate::page::Coverage {
    let count =
        |test: &dyn Fn(Known) -> bool| (0..n).filter(|&i| known(i).is_some_and(test)).count();
    let from_index = count(&|k| !matches!(k, Known::Unknown | Known::Unindexable));
    crate::page::Coverage {
        from_index,
        scanned: n - from_index,
        unindexable: count(&|k| k == Known::Unindexable),
        appended: count(&|k| matches!(k, Known::Within { appended: true, .. })),
    }
}
