//! Ranked search in plain words (`find`): the sessions (or events) that best match a question,
//! best first, for a person or an agent who remembers what happened but not how it was said.
//!
//! **Terms.** The question becomes terms ([`crate::choose::for_each_term`]: words folded and
//! stemmed, identifiers whole and split, CJK pairs), stop words left out. Each term's
//! [`literal`] is a substring of the folded text of every event that holds it, so the literal
//! search for them (any of them) gathers every event that can score — through the search index
//! where it holds a session, by reading the session otherwise, with the same events either way.
//!
//! **An event's score** is BM25 over its words: for each term, its weight in the question
//! (1; [`PART`] for a part of an identifier) × its rarity × how often the event holds it,
//! saturated and normalised by the event's length; times its role's weight ([`role_weight`]:
//! what a person typed above replies, replies above tool output and injected context); plus,
//! when the event holds two of the terms or more, [`NEAR`] × the rarity of each it holds.
//! Rarity is counted over sessions, not events ([`idf`]): what tells sessions apart is how
//! few sessions say a word, and a marathon session that says it a thousand times is one.
//!
//! **A session's score** is its best event's, plus a bounded bonus: [`OTHERS`] × its next
//! [`MORE_EVENTS`] events' scores, each halved again, and [`COVERAGE`] × the rarity of the
//! question's terms it holds anywhere — so a session about the whole question beats one that
//! says one word often — that last bonus normalised by the session's size ([`coverage_norm`]),
//! so that a marathon session does not win for holding every word somewhere. A recency factor
//! of at most 1 + [`RECENCY`] breaks near ties; equal scores go by the latest hit, then by
//! qualified id.

use std::cell::RefCell;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::choose::{
    for_each_term, for_each_term_where, is_cjk, is_joiner, literal, variant, Filter, Literals,
    Place,
};
use crate::corpus::parallel::filter_map;
use crate::corpus::{Corpus, Keep};
use crate::error::HistoryError;
use crate::model::{Event, Role, SessionFile, SessionMeta, Timestamp};
use crate::page::budget::fit_find;
use crate::page::{
    notice, Coverage, Explain, FindPage, FoundHit, FoundSession, Item, Recipe, RenderFind,
    WordScore, SCHEMA_VERSION,
};
use crate::query::sessions::around;
use crate::query::{coverage, Counted, CountedEvent, HitOrder, HitTexts, Known, Scope, Wanted};
use crate::source::{LineTest, Location};
use history_raw::RawFilter;

/// BM25's saturation: how soon more occurrences of a term stop adding to an event's score.
const K1: f64 = 1.2;
/// BM25's length normalisation: how much a long event's occurrences count less.
const B: f64 = 0.75;
/// The event length that normalisation is relative to, in runs of non-space characters: a
/// typical message.
const TYPICAL_WORDS: f64 = 40.0;
/// The weight of a question's term that is a part of an identifier it names whole.
pub const PART: f64 = 0.5;
/// The weight of the terms that occur together in an event. Together in the event, not within
/// a few words of each other: on the recall questions the two score alike (hit@1 90.2% against
/// 89.6% with a window of 8 runs; MRR@10 0.932 against 0.929), and an event's counts then say
/// all that it scores by, without where its words are.
pub const NEAR: f64 = 0.5;
/// The weight of a session's next best events.
pub const OTHERS: f64 = 0.3;
/// How many next best events add to a session's score.
pub const MORE_EVENTS: usize = 4;
/// The weight of the question's terms a session holds anywhere.
pub const COVERAGE: f64 = 0.3;
/// How much a session's size, against the mean of the sessions in scope, scales its
/// [`COVERAGE`] ([`coverage_norm`]). A marathon session holds nearly every word somewhere, and
/// won paraphrased questions on that alone. On the recall questions, hit@1 and MRR@10 by this
/// value (the size taken exactly): 0 (none) 90.2% / 0.932, 0.15 and 0.2 90.8% / 0.935, 0.3
/// 92.5% / 0.944, 0.4 91.9% / 0.941, 0.5 90.8% / 0.934, 0.6 90.8% / 0.933, 0.9 82.7% / 0.880;
/// at 0.3 with the size in steps ([`coverage_norm`]), 91.9% / 0.941. Normalised by the number
/// of events that hold a term instead of the size, 91.3% / 0.939 at best.
pub const COVERAGE_B: f64 = 0.3;
/// The most a session's recency adds to its score, as a fraction of it.
pub const RECENCY: f64 = 0.01;
/// The half-life of recency, in nanoseconds: 30 days before the newest session in scope.
const HALF_LIFE_NS: f64 = 30.0 * 86_400e9;
/// How many hits a session shows.
const SHOWN: usize = 3;
/// The most terms a question may have (a session's terms are a bit set).
const MAX_TERMS: usize = 64;

/// How much an event's role counts: what a person typed says most of what a session was about.
pub fn role_weight(role: Role) -> f64 {
    match role {
        Role::User => 1.0,
        Role::Assistant => 0.6,
        Role::Tool => 0.3,
        Role::Context => 0.2,
    }
}

/// The rarity of a term that `holders` of `sessions` sessions hold (BM25's, never negative).
pub fn idf(sessions: usize, holders: usize) -> f64 {
    let (n, h) = (sessions as f64, holders as f64);
    (1.0 + (n - h + 0.5) / (h + 0.5)).ln()
}

/// What `find` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindRequest {
    /// The question, in plain words.
    pub text: String,
    /// The selector; `None`: every session.
    pub session: Option<String>,
    /// Only events of these roles (empty: every role).
    pub roles: Vec<Role>,
    /// Only events at or after this time.
    pub since: Option<Timestamp>,
    /// Only events before this time.
    pub until: Option<Timestamp>,
    /// Only sessions that ran in this directory or below it.
    pub cwd: Option<Place>,
    /// How many entries at most.
    pub limit: usize,
    /// How many bytes the rendered output may take.
    pub budget: usize,
    /// Rank events rather than sessions.
    pub events: bool,
    /// Say where each score comes from.
    pub explain: bool,
    /// Only the entries ranked after this one (the `more` recipe's cursor).
    pub after_rank: usize,
}

/// A question's terms.
#[derive(Clone, Debug)]
pub(crate) struct Question {
    /// Each term and its weight.
    terms: Vec<(String, f64)>,
    index: FxHashMap<String, usize>,
    /// Which bytes a term starts with.
    first: [bool; 256],
    /// The terms of words joined without a space.
    compounds: Vec<usize>,
    /// The literals of every term, short ones too, to cut into words the runs that hold one.
    literal_set: Literals,
    /// The terms that are short ([`locatable`]), when some are not: they count only in an event
    /// that holds a term that is not.
    short: u64,
}

/// Whether a literal is long enough for the search index to locate the texts that hold it: three
/// characters, or two CJK ones (the shortest its trigram and CJK pair tokens find). A question
/// with such terms gathers its events by them alone, through the index or a scan alike; a
/// shorter word (`ci`) counts only in the events they gather, and would otherwise make a scan
/// of every session that holds a `ci`. A shorter part of an identifier (the `1` of
/// `needle-1-a`) is no term: the identifier and its longer parts are, and counting it meant
/// cutting every text with a `1` into words (on the 1 GiB bench corpus, an identifier with four
/// common words 4.4 -> 2.4 s), for no change in the recall figures.
fn locatable(literal: &str) -> bool {
    let mut chars = literal.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(_), Some(_), Some(_)) => true,
        (Some(a), Some(b), None) => is_cjk(a) && is_cjk(b),
        _ => false,
    }
}

impl Question {
    /// The terms of `text`; a usage error when it has none.
    pub(crate) fn parse(text: &str) -> Result<Question, HistoryError> {
        let mut terms: Vec<(String, f64)> = Vec::new();
        for_each_term(text, |w| {
            if w.part && !locatable(literal(w.term)) {
                return; // See `locatable`.
            }
            let weight = if w.part { PART } else { 1.0 };
            match terms.iter_mut().find(|(t, _)| t == w.term) {
                Some((_, had)) => *had = had.max(weight),
                None => terms.push((w.term.to_string(), weight)),
            }
        });
        if terms.is_empty() {
            return Err(HistoryError::usage(
                "find needs words to look for (these are all too common to rank by)",
            ));
        }
        if terms.len() > MAX_TERMS {
            return Err(HistoryError::usage(format!(
                "find takes at most {MAX_TERMS} words; ask with fewer"
            )));
        }
        let mut index = FxHashMap::default();
        for (i, (t, _)) in terms.iter().enumerate() {
            index.entry(t.clone()).or_insert(i);
        }
        for (i, (t, _)) in terms.iter().enumerate() {
            if let Some(v) = variant(t) {
                index.entry(v).or_insert(i);
            }
        }
        let mut first = [false; 256];
        for (t, _) in &terms {
            first[usize::from(t.as_bytes()[0])] = true;
        }
        let compounds = (0..terms.len())
            .filter(|&i| terms[i].0.chars().any(is_joiner))
            .collect();
        let mut q = Question {
            terms,
            index,
            first,
            compounds,
            literal_set: Literals::default(),
            short: 0,
        };
        let short = (0..q.terms.len())
            .filter(|&i| !locatable(literal(&q.terms[i].0)))
            .fold(0u64, |m, i| m | 1 << i);
        if short.count_ones() < q.terms.len() as u32 {
            q.short = short;
        }
        q.literal_set = Literals::new(&q.literals_of(u64::MAX));
        Ok(q)
    }

    /// The terms.
    fn names(&self) -> Vec<String> {
        self.terms.iter().map(|(t, _)| t.clone()).collect()
    }

    /// What every text that holds a term holds literally, each once: the literal queries that
    /// gather the events to rank (not those of the [short](Question::short) terms).
    pub(crate) fn literals(&self) -> Vec<String> {
        self.literals_of(!self.short)
    }

    /// The literals of the terms of `mask`, each once.
    fn literals_of(&self, mask: u64) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let terms = (0..self.terms.len()).filter(|&i| mask & 1 << i != 0);
        for (t, _) in terms.map(|i| &self.terms[i]) {
            let l = literal(t);
            if !out.iter().any(|o| o == l) {
                out.push(l.to_string());
            }
        }
        out
    }

    /// How `text` holds the terms; `None` when it holds none but [short](Question::short) ones.
    fn tally(&self, text: &str) -> Option<Tally> {
        let mut tf = vec![0u16; self.terms.len()];
        let words =
            for_each_term_where(text, &self.literal_set, &|folded| self.could(folded), |w| {
                self.matches(w.term, |i| tf[i] = tf[i].saturating_add(1));
            });
        let held = terms_in(&tf);
        (held & !self.short != 0).then_some(Tally { tf, words, held })
    }

    /// Calls `hit` with each term that a text's `term` counts for: the same term, or a compound
    /// term of the question that it holds whole words of (`pi-herdr/pull/24` in
    /// `github.com/x/pi-herdr/pull/24`).
    fn matches(&self, term: &str, mut hit: impl FnMut(usize)) {
        if let Some(&i) = self.index.get(term) {
            return hit(i);
        }
        for &i in &self.compounds {
            let q = self.terms[i].0.as_str();
            let bounded = |&(at, _): &(usize, &str)| {
                let before = term[..at].chars().next_back();
                let after = term[at + q.len()..].chars().next();
                before.is_none_or(is_joiner) && after.is_none_or(is_joiner)
            };
            for _ in term.match_indices(q).filter(bounded) {
                hit(i);
            }
        }
    }

    /// Whether a folded word or part may become one of the terms: one of them begins it, or it
    /// holds one of the compound terms.
    fn could(&self, folded: &str) -> bool {
        if self
            .compounds
            .iter()
            .any(|&i| folded.contains(self.terms[i].0.as_str()))
        {
            return true;
        }
        let first = folded.as_bytes().first().copied().unwrap_or(0);
        self.first[usize::from(first)]
            && self
                .terms
                .iter()
                .any(|(t, _)| folded.starts_with(literal(t)))
    }

    /// The byte ranges of `text` whose words are terms of the question.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for_each_term_where(text, &self.literal_set, &|folded| self.could(folded), |w| {
            let mut found = false;
            self.matches(w.term, |_| found = true);
            if found && !out.contains(&(w.start, w.end)) {
                out.push((w.start, w.end));
            }
        });
        out
    }
}

impl Question {
    /// Calls `each` with every event of `counted` ([`crate::query::Projection::counted`], `of`
    /// naming each count's term) that passes `filter`'s roles and times and holds a term as
    /// [`Question::tally`] says, with its count of each term and which it holds.
    fn each_counted(
        &self,
        filter: &Filter,
        (counted, of): (&Counted, &[usize]),
        mut each: impl FnMut(&CountedEvent, &[u16], u64),
    ) {
        let mut tf = vec![0u16; self.terms.len()];
        // Each count its own term's, in order (no variants): the counts are the terms'.
        let same = of.len() == tf.len() && of.iter().enumerate().all(|(k, &t)| k == t);
        for (e, counts) in counted
            .events
            .iter()
            .zip(counted.counts.chunks(of.len().max(1)))
        {
            if !filter.takes_role(e.role) || !filter.at_time(e.timestamp) {
                continue;
            }
            let tf: &[u16] = match same {
                true => counts,
                false => {
                    tf.fill(0);
                    for (k, &n) in counts.iter().enumerate() {
                        tf[of[k]] = tf[of[k]].saturating_add(n);
                    }
                    &tf
                }
            };
            let held = terms_in(tf);
            if held & !self.short != 0 {
                each(e, tf, held);
            }
        }
    }

    /// The events of a session that hold a term ([`Question::each_counted`]), those `read`
    /// from their texts instead (which may hold a compound term, that word lists cannot tell):
    /// what a read of the session would find, in the order of their places.
    fn scored_of(
        &self,
        filter: &Filter,
        counted: (&Counted, &[usize]),
        read: Vec<Scored>,
    ) -> Vec<Scored> {
        let mut scored: Vec<Scored> = Vec::new();
        self.each_counted(filter, counted, |e, tf, held| {
            scored.push(Scored::counted(e, tf, held))
        });
        if !read.is_empty() {
            let places: FxHashSet<(u64, u32)> = read.iter().map(|e| (e.seq, e.part)).collect();
            scored.retain(|e| !places.contains(&(e.seq, e.part)));
            scored.extend(read);
            scored.sort_unstable_by_key(|e| (e.seq, e.part));
        }
        scored
    }

    /// What session `index` holds of the question, from its events that hold a term
    /// ([`Question::scored_of`]): down to those that can be among its `depth` best
    /// ([`frontier`]).
    fn held_of(
        &self,
        scored: Vec<Scored>,
        depth: usize,
        (index, file, known): (usize, &SessionFile, Option<Known>),
    ) -> Option<Held> {
        if scored.is_empty() {
            return None;
        }
        let terms = scored.iter().fold(0u64, |m, e| m | e.tally.held);
        let last = scored.iter().filter_map(|e| e.timestamp).max();
        let hits = scored.len();
        let events = frontier(self, scored, depth);
        Some(Held::counted(
            (index, file, known),
            (hits, terms, last),
            events,
        ))
    }

    /// What session `index` holds of the question, from the counts of its events
    /// ([`Question::each_counted`]) and those `read` from their texts instead (as
    /// [`Question::scored_of`] takes them), when the terms' rarities are known already: its
    /// `depth` best events alone, as [`rank_session`] ranks them, each event scored as it comes.
    fn best_held(
        &self,
        filter: &Filter,
        counted: (&Counted, &[usize]),
        read: Vec<Scored>,
        (rarity, depth): (&Rarity, usize),
        (index, file, known): (usize, &SessionFile, Option<Known>),
    ) -> Option<Held> {
        // Best first, then the later in the session.
        let mut best: Vec<(f64, Scored)> = Vec::with_capacity(depth + 1);
        let (mut hits, mut terms, mut last) = (0, 0u64, None);
        // Takes an event of that score: `make` makes it, when it is among the best so far.
        let mut offer =
            |total: f64, (held, timestamp, place): (u64, _, _), make: &dyn Fn() -> Scored| {
                (hits, terms, last) = (hits + 1, terms | held, last.max(timestamp));
                // Below the last of a full set: not among them.
                if best.len() == depth && best.last().is_some_and(|b| b.0 > total) {
                    return;
                }
                let above = |b: &(f64, Scored)| {
                    b.0.total_cmp(&total)
                        .then((b.1.seq, b.1.part).cmp(&place))
                        .is_gt()
                };
                let at = best.partition_point(above);
                if at < depth {
                    best.insert(at, (total, make()));
                    best.truncate(depth);
                }
            };
        let places: FxHashSet<(u64, u32)> = read.iter().map(|e| (e.seq, e.part)).collect();
        self.each_counted(filter, counted, |e, tf, held| {
            if places.contains(&(e.seq, e.part)) {
                return;
            }
            let total = self.total_of(rarity, (tf, held, e.role, e.words));
            let make = || Scored::counted(e, tf, held);
            offer(total, (held, e.timestamp, (e.seq, e.part)), &make);
        });
        for e in &read {
            let total = self.total(rarity, e);
            offer(total, (e.tally.held, e.timestamp, (e.seq, e.part)), &|| {
                e.clone()
            });
        }
        if hits == 0 {
            return None;
        }
        let mut events: Vec<Scored> = best.into_iter().map(|(_, e)| e).collect();
        events.sort_unstable_by_key(|e| (e.seq, e.part));
        Some(Held::counted(
            (index, file, known),
            (hits, terms, last),
            events,
        ))
    }
}

/// How an event holds a question's terms, as it is scored: how often it holds each, which it
/// holds, its role and its length in words.
type Holds<'a> = (&'a [u16], u64, Role, u32);

/// How an event's length (in words) damps its counts.
fn norm(words: u32) -> f64 {
    K1 * (1.0 - B + B * f64::from(words) / TYPICAL_WORDS)
}

/// Which terms counts `tf` say an event holds.
fn terms_in(tf: &[u16]) -> u64 {
    (0..tf.len())
        .filter(|&i| tf[i] > 0)
        .fold(0u64, |m, i| m | 1 << i)
}

/// How an event holds a question's terms.
#[derive(Clone, Debug)]
struct Tally {
    /// How often it holds each.
    tf: Vec<u16>,
    /// How many words it has.
    words: u32,
    /// Which terms it holds.
    held: u64,
}

/// An event that holds some of the terms, without its text.
#[derive(Clone, Debug)]
struct Scored {
    seq: u64,
    part: u32,
    role: Role,
    timestamp: Option<Timestamp>,
    tally: Tally,
}

impl Scored {
    /// `e`, holding the terms as `tally` says.
    fn of(e: &Event, tally: Tally) -> Scored {
        Scored {
            seq: e.seq,
            part: e.part,
            role: e.role,
            timestamp: e.timestamp,
            tally,
        }
    }

    /// `e` of word lists, holding the terms `tf` times (`held`: which it holds).
    fn counted(e: &CountedEvent, tf: &[u16], held: u64) -> Scored {
        Scored {
            seq: e.seq,
            part: e.part,
            role: e.role,
            timestamp: e.timestamp,
            tally: Tally {
                tf: tf.to_vec(),
                words: e.words,
                held,
            },
        }
    }
}

/// What one session holds of a question.
struct Held {
    /// Its place among the sessions in scope.
    index: usize,
    /// What it is about; `None` when it was not read, but counted from word lists (its hits are
    /// read for the page, and say it).
    meta: Option<SessionMeta>,
    /// Those of its events that hold a term and can rank among its best ([`frontier`]).
    events: Vec<Scored>,
    /// How many of its events hold a term.
    hits: usize,
    /// The snippets of its likely best events ([`Likely`]).
    kept: Vec<Shot>,
    /// Which terms it holds.
    terms: u64,
    /// The time of its latest timed hit, else its transcript's modification time.
    last: i64,
    /// What the projection knew of it.
    known: Option<Known>,
}

impl Held {
    /// Session `index` (`file`), from word lists: its `hits` events that hold a term, which
    /// hold `terms`, the latest at `last`, of which it keeps `events`.
    fn counted(
        (index, file, known): (usize, &SessionFile, Option<Known>),
        (hits, terms, last): (usize, u64, Option<Timestamp>),
        events: Vec<Scored>,
    ) -> Held {
        Held {
            index,
            meta: None,
            hits,
            events,
            kept: Vec::new(),
            terms,
            last: last.map_or(file.modified, |t| t.0),
            known,
        }
    }
}

/// The rarity of each term in scope.
struct Rarity {
    holders: Vec<usize>,
    idf: Vec<f64>,
}

impl Rarity {
    /// The rarity of `terms` terms in `sessions` sessions, of which those that hold any hold
    /// the terms of `held` (each a mask of the terms).
    fn of(terms: usize, held: impl IntoIterator<Item = u64>, sessions: usize) -> Rarity {
        let mut holders = vec![0usize; terms];
        for held in held {
            for (t, n) in holders.iter_mut().enumerate() {
                *n += usize::from(held & 1 << t != 0);
            }
        }
        Rarity {
            idf: holders.iter().map(|&h| idf(sessions, h)).collect(),
            holders,
        }
    }
}

impl Question {
    /// An event's score.
    fn total(&self, rarity: &Rarity, e: &Scored) -> f64 {
        self.total_of(rarity, (&e.tally.tf, e.tally.held, e.role, e.tally.words))
    }

    /// [`Question::total`] of an event that holds the terms `tf` times (`held` the terms it
    /// holds), of `role`, `words` long.
    fn total_of(&self, rarity: &Rarity, e: Holds<'_>) -> f64 {
        let norm = norm(e.3);
        // A term the event does not hold adds 0.
        (0..self.terms.len())
            .filter(|&i| e.0[i] > 0)
            .map(|i| rarity.idf[i] * self.component_at(e, i, norm))
            .sum()
    }

    /// What term `i` adds to an event's score before its rarity: its weight in the question ×
    /// the event's role × its saturated, length-normalised count, and its nearness to others.
    fn component(&self, e: &Scored, i: usize) -> f64 {
        let e = (&e.tally.tf[..], e.tally.held, e.role, e.tally.words);
        self.component_at(e, i, norm(e.3))
    }

    /// [`Question::component`] of an event as [`Question::total_of`] takes it, its [`norm`]
    /// given.
    fn component_at(&self, (tf, held, role, _): Holds<'_>, i: usize, norm: f64) -> f64 {
        let tf = f64::from(tf[i]);
        let near = match held.count_ones() >= 2 && held & 1 << i != 0 {
            true => NEAR,
            false => 0.0,
        };
        self.terms[i].1 * role_weight(role) * (tf * (K1 + 1.0) / (tf + norm) + near)
    }
}

/// Of a session's events that hold a term, those that can be among its `depth` best whatever
/// the terms' rarities (all above 0): an event that `depth` others dominate is never among them
/// and is left out. One dominates another when it holds every term at least as much
/// ([`Question::component`]) and one of them more (it scores more), or every term as much and
/// comes later both in time and in place (it ranks first in each order that ties go by). The
/// events are taken by their sum of components, best first, so that an event meets those that
/// may dominate it before it; those kept stay in the order they came. On the 1 GiB bench corpus,
/// five common words are in 144,483 events, of which 25,858 stay.
fn frontier(q: &Question, events: Vec<Scored>, depth: usize) -> Vec<Scored> {
    if events.len() <= depth {
        return events;
    }
    let n = q.terms.len();
    let parts: Vec<f64> = (events.iter())
        .flat_map(|e| (0..n).map(move |i| q.component(e, i)))
        .collect();
    let of = |k: usize| &parts[k * n..(k + 1) * n];
    let sums: Vec<f64> = (0..events.len()).map(|k| of(k).iter().sum()).collect();
    let later = |k: usize| (events[k].timestamp, events[k].seq, events[k].part);
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|&a, &b| sums[b].total_cmp(&sums[a]).then(later(b).cmp(&later(a))));
    let dominates = |a: usize, b: usize| {
        let (x, y) = (of(a), of(b));
        if x.iter().zip(y).any(|(x, y)| x < y) {
            return false;
        }
        let (ea, eb) = (&events[a], &events[b]);
        x.iter().zip(y).any(|(x, y)| x > y)
            || (ea.timestamp >= eb.timestamp && (ea.seq, ea.part) > (eb.seq, eb.part))
    };
    let mut keep = vec![false; events.len()];
    let mut kept: Vec<usize> = Vec::new();
    for k in order {
        let beaten = kept
            .iter()
            .filter(|&&j| dominates(j, k))
            .take(depth)
            .count()
            == depth;
        if !beaten {
            kept.push(k);
            keep[k] = true;
        }
    }
    let mut kept: Vec<Scored> = (events.into_iter().zip(keep))
        .filter_map(|(e, keep)| keep.then_some(e))
        .collect();
    // Collected where every event was, the room of the rest is given back: held for every
    // session until the page, it took find's peak from 28 to 40 MiB on the 1 GiB bench corpus.
    kept.shrink_to_fit();
    kept
}

/// An event as a hit shows it: its text cut to a snippet around the first of the words, where
/// that starts in it, the words' byte ranges in it, and whether it was cut.
#[derive(Clone, Debug)]
struct Shot {
    event: Event,
    focus: Option<usize>,
    spans: Vec<(usize, usize)>,
    cut: bool,
    /// Where its line is, when the projection that read it knew.
    location: Option<Location>,
}

impl Question {
    /// `event` as a hit shows it.
    fn shot(&self, event: &Event) -> Shot {
        let (text, focus, spans, cut) = snippet(&event.text, &self.spans(&event.text));
        Shot {
            event: Event {
                text,
                kind: event.kind.clone(),
                tool: event.tool.clone(),
                ..*event
            },
            focus,
            spans,
            cut,
            location: None,
        }
    }
}

/// One session's ranking.
struct Ranked {
    held: Box<Held>,
    /// Its events' scores, best first, with their places in `held.events`.
    events: Vec<(f64, usize)>,
    score: f64,
    explain: Explain,
}

/// How much of [`COVERAGE`] a transcript of `size` bytes gets, where those in scope take
/// `mean` on average: BM25's length normalisation, at [`COVERAGE_B`], for the terms a session
/// holds anywhere, which a long one holds for being long. The size is taken against the mean
/// in steps of an eighth of an octave (9%): sessions that differ by less, as copies of one
/// session made at different times do, tie, and go by their recency.
fn coverage_norm(size: u64, mean: f64) -> f64 {
    let octaves = (size.max(1) as f64 / mean.max(1.0)).log2();
    let ratio = ((octaves * 8.0).round() / 8.0).exp2();
    1.0 / (1.0 - COVERAGE_B + COVERAGE_B * ratio)
}

/// Ranks the sessions that hold some of `q`'s terms: with the terms' rarities, the time of the
/// latest hit of all (`newest`, for each one's recency) and the mean size of `sessions`.
struct Ranking<'a> {
    q: &'a Question,
    rarity: Rarity,
    newest: i64,
    mean_size: f64,
    sessions: &'a [SessionFile],
    explain: bool,
}

impl Ranking<'_> {
    fn rank(&self, held: Box<Held>) -> Ranked {
        let recency =
            0.5f64.powf(self.newest.saturating_sub(held.last).max(0) as f64 / HALF_LIFE_NS);
        let norm = coverage_norm(self.sessions[held.index].size, self.mean_size);
        rank_session(self.q, &self.rarity, held, recency, norm, self.explain)
    }
}

impl Ranked {
    /// Where it ranks: its score, its latest hit and its place among the sessions in scope.
    fn place(&self) -> (f64, i64, usize) {
        (self.score, self.held.last, self.held.index)
    }
}

/// The order of sessions of `sessions` at places `a` and `b` ([`Ranked::place`]): best first;
/// then the latest hit, then the qualified id.
fn rank_order(
    sessions: &[SessionFile],
    a: (f64, i64, usize),
    b: (f64, i64, usize),
) -> std::cmp::Ordering {
    let (fa, fb) = (&sessions[a.2], &sessions[b.2]);
    b.0.total_cmp(&a.0)
        .then(b.1.cmp(&a.1))
        .then(fa.key.cmp(&fb.key))
}

/// The mean size of `sessions`' transcripts.
fn mean_size(sessions: &[SessionFile]) -> f64 {
    sessions.iter().map(|f| f.size as f64).sum::<f64>() / sessions.len().max(1) as f64
}

/// The session's score from its events' (best first) and the terms it holds (its coverage
/// bonus scaled by `size_norm`, [`coverage_norm`]); with `words`, each term's part of it too.
fn rank_session(
    q: &Question,
    rarity: &Rarity,
    held: Box<Held>,
    recency: f64,
    size_norm: f64,
    words: bool,
) -> Ranked {
    let mut events: Vec<(f64, usize)> = held
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| (q.total(rarity, e), i))
        .collect();
    // Best first; of equal ones, the later in the session (the order the events came in
    // differs between the index and a decode).
    let place = |i: usize| (held.events[i].seq, held.events[i].part);
    events.sort_by(|a, b| b.0.total_cmp(&a.0).then(place(b.1).cmp(&place(a.1))));
    let best = events.first().map_or(0.0, |e| e.0);
    let mut halves = 0.5;
    let mut others = 0.0;
    for (s, _) in events.iter().skip(1).take(MORE_EVENTS) {
        others += s * halves;
        halves /= 2.0;
    }
    others *= OTHERS;
    let coverage = COVERAGE
        * size_norm
        * (0..q.terms.len())
            .filter(|&i| held.terms & 1 << i != 0)
            .map(|i| q.terms[i].1 * rarity.idf[i])
            .sum::<f64>();
    let factor = 1.0 + RECENCY * recency;
    let best_event = events.first().map(|&(_, i)| &held.events[i]);
    let words = (0..q.terms.len())
        .filter(|_| words)
        .map(|i| WordScore {
            term: q.terms[i].0.clone(),
            weight: q.terms[i].1,
            sessions: rarity.holders[i],
            idf: rarity.idf[i],
            best: best_event.map_or(0.0, |e| rarity.idf[i] * q.component(e, i)),
            present: held.terms & 1 << i != 0,
        })
        .collect();
    Ranked {
        score: (best + others + coverage) * factor,
        explain: Explain {
            best,
            others,
            coverage,
            size: size_norm,
            recency: factor,
            words,
        },
        held,
        events,
    }
}

/// Every session of `sessions` that holds some of the question's terms, with the events that
/// do; and how the search was answered. Each session's is boxed: ranked, it moves on without
/// the room of every session's being taken twice (on 20,000 small sessions, 7 MB).
struct Gathered {
    #[allow(clippy::vec_box)]
    held: Vec<Box<Held>>,
    /// Every session that holds a term, ranked already where the rarities were known first
    /// (`held` is then empty): only those that could reach the page keep their events.
    ranked: Option<Vec<Ranked>>,
    skipped: Vec<HistoryError>,
    coverage: Coverage,
}

/// What [`gather`] found of one session: ranked already, or held to be ranked.
enum Found {
    Ranked(Ranked),
    Held(Box<Held>),
}

/// The positions of a session's events on its selected branch, and what the session is about.
type OnBranch = (Vec<(u64, u32)>, SessionMeta);

/// Shows `visit` the events of `file` that pass `filter`'s roles and times and `admit`, with
/// their texts (only those whose text matches `filter` too, from a projection), as they come:
/// from the lines a projection locates where it knows the session and it is not small
/// ([`LOCATED`]), else decoded (a decode may show events off the session's selected branch
/// too). Returns the positions of the events on the branch, and what the session is about;
/// `None` when it has none, or when `stop` said the search is no longer wanted (then it stops
/// reading at the next hit or line, and what it showed `visit` is to be forgotten).
#[allow(clippy::too_many_arguments)]
fn events_of(
    corpus: &Corpus,
    projection: Option<&dyn crate::query::Projection>,
    known: Option<Known>,
    file: &SessionFile,
    (filter, raw): (&Filter, &RawFilter),
    admit: &dyn Fn(&Event) -> bool,
    visit: &dyn Fn(&Event),
    stop: Stop<'_>,
) -> Result<Option<OnBranch>, HistoryError> {
    match (known, projection) {
        (Some(Known::NoHit), _) => return Ok(None),
        (Some(Known::Within { .. }), Some(p)) if file.size >= LOCATED => {
            // Each text of a line that may hold a hit is seen as it is read, and not kept: a
            // session of any size holds a batch of texts at a time. `visit` looks for the
            // literals itself, as in a decode. Every event shown is on the branch.
            let on_branch = RefCell::new(Vec::new());
            let shown = |e: &Event| {
                visit(e);
                on_branch.borrow_mut().push(e.position());
                !stop()
            };
            let wanted = Wanted {
                filter,
                admit,
                from: crate::model::End::Oldest,
                count: usize::MAX,
                all_branches: false,
                texts: HitTexts::Candidates(&shown),
                order: HitOrder::Merge,
            };
            // Declined, even after some hits: the session is read instead (what was seen is
            // seen again, by the same positions).
            if let Some(answer) = p.hits(corpus, file, &wanted) {
                let (_, meta) = answer?;
                return Ok((!stop()).then(|| (on_branch.into_inner(), meta)));
            }
        }
        _ => {}
    }
    // Each event is seen as it is decoded and kept without its text: a session of any size
    // holds one text at a time. Its text is not matched here: `visit` looks for the literals
    // itself, and an event without one holds no term.
    let keep = |e: &Event| match filter.in_time(e) && filter.has_role(e) && admit(e) {
        true => {
            visit(e);
            Keep::Meta
        }
        false => Keep::Drop,
    };
    // Once stopped, no line holds a wanted event: the rest of the file is read for its
    // structure alone, and nothing is shown.
    let test = |line: &[u8]| !stop() && raw.may_match_slice(line);
    let loaded = corpus.load(file, &keep, false, Some(&test as LineTest<'_>))?;
    if stop() {
        return Ok(None);
    }
    let on_branch = loaded.events.iter().map(Event::position).collect();
    Ok(Some((on_branch, loaded.meta)))
}

/// The size of a transcript from which its likely best events keep their snippets as they are
/// read ([`Likely`]).
const LARGE: u64 = 1 << 20;

/// The size of a transcript from which its events are read from the lines a projection locates:
/// a smaller one is decoded whole in less time than the projection takes to look its lines up
/// (on 20,000 sessions of a few KiB holding a word, 0.6 s against 7 s).
const LOCATED: u64 = 256 << 10;

/// The snippets of a large session's likely best events, kept as its events come by: the best
/// for each term alone and the best [`SHOWN`] for all of them equally, so far. A small session
/// is read again for the page instead, which costs less than holding snippets for thousands.
struct Likely {
    /// Per term, then for all of them: the best so far, best first.
    tops: Vec<Vec<(f64, (u64, u32))>>,
    shots: FxHashMap<(u64, u32), Shot>,
}

impl Likely {
    /// For a session of `bytes`: no snippets below [`LARGE`].
    fn new(q: &Question, bytes: u64) -> Likely {
        let keys = if bytes >= LARGE { q.terms.len() + 1 } else { 0 };
        Likely {
            tops: vec![Vec::new(); keys],
            shots: FxHashMap::default(),
        }
    }

    /// Takes `event` (scored as `scored`) among the likely best where it is so far.
    fn offer(&mut self, q: &Question, scored: &Scored, event: &Event) {
        let at = event.position();
        let terms = q.terms.len();
        let score = |k: usize| match k < terms {
            true => q.component(scored, k),
            false => (0..terms).map(|t| q.component(scored, t)).sum(),
        };
        let mut entered = false;
        let mut evicted = Vec::new();
        // Nothing for a small session (no tops).
        for (k, top) in self.tops.iter_mut().enumerate() {
            let s = score(k);
            // The best for each term alone, and the best few for all of them.
            let room = if k < terms { 1 } else { SHOWN };
            // Of equal scores the later event, as a session's events are ranked.
            let above = |x: &(f64, (u64, u32))| x.0 > s || (x.0 == s && x.1 > at);
            if top.len() < room || top.last().is_some_and(|l| !above(l)) {
                let i = top.partition_point(above);
                top.insert(i, (s, at));
                evicted.extend(top.drain(room.min(top.len())..).map(|x| x.1));
                entered = true;
            }
        }
        if entered {
            self.shots.insert(at, q.shot(event));
        }
        for p in evicted {
            if !self.tops.iter().flatten().any(|x| x.1 == p) {
                self.shots.remove(&p);
            }
        }
    }
}

/// Whether a search that is under way is no longer wanted (a picker's query that the next
/// keystroke replaced): asked before each session is read and after each of its hits or lines,
/// so that a superseded search frees the cores within a batch of lines' time.
pub type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// The literal search for a question's compound terms, in the sessions word lists answer for.
struct Compound {
    filter: Filter,
    raw: RawFilter,
    known: Option<Vec<Known>>,
}

impl Compound {
    fn new(scope: &Scope<'_>, q: &Question, filter: &Filter, sessions: &[SessionFile]) -> Compound {
        let literals: Vec<String> = q
            .compounds
            .iter()
            .map(|&i| literal(&q.terms[i].0).to_string())
            .collect();
        let filter = Filter::new(&literals, filter.roles.clone(), filter.since, filter.until);
        Compound {
            raw: RawFilter::new(filter.queries()),
            known: scope
                .projection
                .map(|p| p.known(scope.corpus, sessions, &filter)),
            filter,
        }
    }

    /// The events of session `i` (`file`) that may hold a compound term, each tallied from its
    /// text.
    fn read(
        &self,
        scope: &Scope<'_>,
        q: &Question,
        file: &SessionFile,
        i: usize,
        stop: Stop<'_>,
    ) -> Result<Vec<Scored>, HistoryError> {
        let known = self.known.as_ref().and_then(|k| k.get(i)).copied();
        let read = RefCell::new(Vec::new());
        let visit = |e: &Event| {
            if let Some(tally) = q.tally(&e.text) {
                read.borrow_mut().push(Scored::of(e, tally));
            }
        };
        let filters = (&self.filter, &self.raw);
        let found = events_of(
            scope.corpus,
            scope.projection,
            known,
            file,
            filters,
            &|_| true,
            &visit,
            stop,
        )?;
        let Some((on_branch, _)) = found else {
            return Ok(Vec::new());
        };
        // A decode shows the events off the branch too.
        let on: FxHashSet<(u64, u32)> = on_branch.into_iter().collect();
        let mut read = read.into_inner();
        read.retain(|e| on.contains(&(e.seq, e.part)));
        Ok(read)
    }
}

/// Gathers what every session of `sessions` holds of `q`, on every core, each session's events
/// down to those that can be among its `depth` best ([`frontier`]); the sessions not yet read
/// when `stop` says so are left out.
fn gather(
    scope: &Scope<'_>,
    q: &Question,
    filter: &Filter,
    sessions: &[SessionFile],
    (depth, events, (page, explain)): (usize, bool, (usize, bool)),
    stop: Stop<'_>,
) -> Gathered {
    let raw = RawFilter::new(filter.queries());
    let known: Option<Vec<Known>> = scope
        .projection
        .map(|p| p.known(scope.corpus, sessions, filter));
    // The sessions the projection's word lists answer for: their events' counts, without
    // reading them.
    // A compound term (`pi-herdr/pull/24`) counts in longer words that hold it, which word
    // lists cannot look up: the events that may hold one are read for their texts.
    let compound = (!q.compounds.is_empty()).then(|| Compound::new(scope, q, filter, sessions));
    // Each session's is taken as it is used, and its room given back.
    let counted = match (scope.projection, &known) {
        (Some(p), Some(known)) => {
            let (keys, of): (Vec<String>, Vec<usize>) =
                q.index.iter().map(|(k, &i)| (k.clone(), i)).unzip();
            let counted = p.counted(scope.corpus, sessions, known, &keys);
            let counted: Vec<std::sync::Mutex<Option<Counted>>> =
                counted.into_iter().map(std::sync::Mutex::new).collect();
            Some((counted, of))
        }
        _ => None,
    };
    let known = |i: usize| known.as_ref().and_then(|k| k.get(i)).copied();
    let indices: Vec<usize> = (0..sessions.len()).collect();
    // When word lists answer for every session that may hold a term, which terms each holds,
    // and so their rarities, are known before any is ranked: each session then keeps its best
    // events alone. The events that may hold a compound term are read first for it.
    type Read = std::sync::Mutex<Option<Result<Vec<Scored>, HistoryError>>>;
    let mut reads: Vec<Read> = Vec::new();
    let rarity = match &counted {
        Some((counted, of)) if !events => {
            let every = (0..sessions.len()).all(|i| {
                matches!(known(i), Some(Known::NoHit))
                    || counted[i].lock().is_ok_and(|c| c.is_some())
            });
            if let Some(compound) = compound.as_ref().filter(|_| every) {
                reads = crate::corpus::parallel::map(&indices, |&i| {
                    let held = counted[i].lock().is_ok_and(|c| c.is_some());
                    let read = held.then(|| compound.read(scope, q, &sessions[i], i, stop));
                    std::sync::Mutex::new(read)
                });
            }
            // A session whose read failed is left out of the rarities the ranking ends with.
            let failed =
                (reads.iter()).any(|r| r.lock().map_or(true, |r| matches!(*r, Some(Err(_)))));
            // Each session's terms, and its latest hit (as [`Held::counted`] takes it).
            (every && !failed).then(|| {
                let held = crate::corpus::parallel::map(&indices, |&i| {
                    let c = counted[i].lock().ok()?;
                    let (mut held, mut hits, mut latest) = (0u64, 0, None);
                    q.each_counted(filter, (c.as_ref()?, of), |e, _, h| {
                        (held, hits, latest) = (held | h, hits + 1, latest.max(e.timestamp));
                    });
                    if let Some(read) = reads.get(i).and_then(|r| r.lock().ok()) {
                        for e in read.iter().flat_map(|r| r.as_ref().ok()).flatten() {
                            (held, hits) = (held | e.tally.held, hits + 1);
                            latest = latest.max(e.timestamp);
                        }
                    }
                    let last = latest.map_or(sessions[i].modified, |t: Timestamp| t.0);
                    (hits > 0).then_some((held, last))
                });
                let held: Vec<(u64, i64)> = held.into_iter().flatten().collect();
                let rarity = Rarity::of(q.terms.len(), held.iter().map(|h| h.0), sessions.len());
                let newest = held.iter().map(|h| h.1).max().unwrap_or(0);
                (rarity, newest)
            })
        }
        _ => None,
    };
    let ranking = rarity.map(|(rarity, newest)| Ranking {
        q,
        rarity,
        newest,
        mean_size: mean_size(sessions),
        sessions,
        explain,
    });
    // What session `i` holds of the question.
    let one = |i: usize| -> Option<Result<Box<Held>, HistoryError>> {
        let file = &sessions[i];
        if stop() {
            return None;
        }
        if let Some((counted, of)) = &counted {
            let taken = counted.get(i).and_then(|c| c.lock().ok()?.take());
            if let Some(events) = taken {
                let read = match reads.get(i).and_then(|r| r.lock().ok()?.take()) {
                    Some(read) => read,
                    None => match &compound {
                        Some(compound) => compound.read(scope, q, file, i, stop),
                        None => Ok(Vec::new()),
                    },
                };
                let read = match read {
                    Ok(read) => read,
                    Err(e) => return Some(Err(e)),
                };
                let place = (i, file, known(i));
                let held = match &ranking {
                    Some(r) => q.best_held(filter, (&events, of), read, (&r.rarity, depth), place),
                    None => q.held_of(q.scored_of(filter, (&events, of), read), depth, place),
                };
                return held.map(|h| Ok(Box::new(h)));
            }
        }
        if known(i).is_none() && !scope.corpus.may_match(file, &raw) {
            return None;
        }
        let tallied: RefCell<FxHashMap<(u64, u32), Scored>> = RefCell::default();
        let likely = RefCell::new(Likely::new(q, file.size));
        let visit = |e: &Event| {
            if stop() {
                return;
            }
            if let Some(tally) = q.tally(&e.text) {
                let scored = Scored::of(e, tally);
                likely.borrow_mut().offer(q, &scored, e);
                tallied.borrow_mut().insert(e.position(), scored);
            }
        };
        let events = events_of(
            scope.corpus,
            scope.projection,
            known(i),
            file,
            (filter, &raw),
            &|_| true,
            &visit,
            stop,
        );
        match events {
            Ok(None) => None,
            Err(e) => Some(Err(e)),
            Ok(Some((on_branch, meta))) => {
                let mut tallied = tallied.into_inner();
                let scored: Vec<Scored> = on_branch
                    .iter()
                    .filter_map(|at| tallied.remove(at))
                    .collect();
                let terms = scored.iter().fold(0u64, |m, e| m | e.tally.held);
                let kept = likely.into_inner().shots.into_values().collect();
                let last = scored.iter().filter_map(|e| e.timestamp).max();
                let hits = scored.len();
                // Boxed: every session's result is held until all are in.
                (!scored.is_empty()).then_some(Ok(Box::new(Held {
                    index: i,
                    meta: Some(meta),
                    events: frontier(q, scored, depth),
                    hits,
                    kept,
                    terms,
                    last: last.map_or(file.modified, |t| t.0),
                    known: known(i),
                })))
            }
        }
    };
    // With the rarities known first, each session is ranked as it comes, and keeps its events
    // only while it is among the page's sessions so far (by score, latest hit and place).
    let page_so_far: std::sync::Mutex<Vec<(f64, i64, usize)>> = std::sync::Mutex::default();
    let thinned = |mut ranked: Ranked| {
        let at = ranked.place();
        let Ok(mut so_far) = page_so_far.lock() else {
            return ranked;
        };
        let place = so_far.partition_point(|&b| rank_order(sessions, b, at).is_lt());
        if place < page {
            so_far.insert(place, at);
            so_far.truncate(page);
        } else {
            ranked.events = Vec::new();
            ranked.held.events = Vec::new();
            ranked.held.kept = Vec::new();
        }
        ranked
    };
    let results = filter_map(&indices, |&i| {
        let held = one(i)?;
        Some(held.map(|h| match &ranking {
            Some(r) => Found::Ranked(thinned(r.rank(h))),
            None => Found::Held(h),
        }))
    });
    let mut gathered = Gathered {
        held: Vec::new(),
        ranked: ranking.as_ref().map(|_| Vec::new()),
        skipped: Vec::new(),
        coverage: Coverage::default(),
    };
    for r in results {
        match r {
            Ok(Found::Ranked(ranked)) => gathered.ranked.get_or_insert_with(Vec::new).push(ranked),
            Ok(Found::Held(h)) => gathered.held.push(h),
            Err(e) => gathered.skipped.push(e),
        }
    }
    gathered.coverage = coverage(sessions.len(), known);
    gathered
}

/// The page of a ranked search over `sessions`, fitted to the budget as `render` renders it;
/// `None` when `stop` said the search is no longer wanted.
pub(crate) fn find_page(
    scope: &Scope<'_>,
    req: &FindRequest,
    sessions: &[SessionFile],
    no_sessions: Option<String>,
    render: &dyn RenderFind,
    stop: Stop<'_>,
) -> Result<Option<FindPage>, HistoryError> {
    let q = Question::parse(&req.text)?;
    let filter = Filter::new(&q.literals(), req.roles.clone(), req.since, req.until);
    // A session's score takes its best events; a page of events, each session's best up to
    // the page's last.
    let depth = match req.events {
        true => (req.after_rank + req.limit).max(1 + MORE_EVENTS),
        false => 1 + MORE_EVENTS,
    };
    let page = (req.after_rank + req.limit, req.explain);
    let mut gathered = gather(
        scope,
        &q,
        &filter,
        sessions,
        (depth, req.events, page),
        stop,
    );
    if stop() {
        return Ok(None);
    }
    let mut ranked: Vec<Ranked> = match gathered.ranked.take() {
        Some(ranked) => ranked,
        None => {
            let held = gathered.held.iter().map(|h| h.terms);
            let ranking = Ranking {
                q: &q,
                rarity: Rarity::of(q.terms.len(), held, sessions.len()),
                newest: gathered.held.iter().map(|h| h.last).max().unwrap_or(0),
                mean_size: mean_size(sessions),
                sessions,
                explain: req.explain,
            };
            let held = std::mem::take(&mut gathered.held);
            held.into_iter().map(|h| ranking.rank(h)).collect()
        }
    };
    ranked.sort_by(|a, b| rank_order(sessions, a.place(), b.place()));

    let mut notices: Vec<String> = notice::skipped(&gathered.skipped).into_iter().collect();
    let is_empty = no_sessions.is_some();
    notices.extend(no_sessions);
    if scope.projection.is_some() && gathered.coverage.unindexed() > 0 {
        notices.push(notice::unindexed(gathered.coverage.unindexed()));
    }
    let mut page = FindPage {
        schema_version: SCHEMA_VERSION,
        terms: q.names(),
        sessions: None,
        events: None,
        matched: 0,
        has_more: false,
        more: None,
        notice: notice::joined(&notices),
        coverage: gathered.coverage,
        budget_cut: false,
        no_sessions: is_empty,
    };
    let shown = Shown {
        scope,
        q: &q,
        filter: &filter,
        sessions,
        stop,
    };
    if req.events {
        let mut events: Vec<(f64, usize, usize)> = ranked
            .iter()
            .enumerate()
            .flat_map(|(s, r)| r.events.iter().map(move |&(score, e)| (score, s, e)))
            .collect();
        // Best first; then the latest, then the session's rank, then the later in it.
        events.sort_by(|a, b| {
            let time = |x: &(f64, usize, usize)| ranked[x.1].held.events[x.2].timestamp;
            let place = |x: &(f64, usize, usize)| {
                let e = &ranked[x.1].held.events[x.2];
                (e.seq, e.part)
            };
            b.0.total_cmp(&a.0)
                .then(time(b).cmp(&time(a)))
                .then(a.1.cmp(&b.1))
                .then(place(b).cmp(&place(a)))
        });
        page.matched = ranked.iter().map(|r| r.held.hits).sum();
        let window: Vec<&(f64, usize, usize)> =
            events.iter().skip(req.after_rank).take(req.limit).collect();
        page.has_more = req.after_rank + window.len() < page.matched;
        let hits: Vec<FoundHit> = window
            .iter()
            .filter_map(|&&(score, s, e)| shown.hits(&ranked[s], &[(score, e)]).0.pop())
            .collect();
        let admitted = fit_find(&mut page, None, Some(hits), render, req.budget);
        page.more = page
            .has_more
            .then(|| more_recipe(req, req.after_rank + admitted));
        return Ok((!stop()).then_some(page));
    }
    page.matched = ranked.len();
    // The sessions after the page are let go first: reading the page's (a session's first
    // prompt may mean decoding it whole) then takes the memory they held.
    ranked.truncate(req.after_rank + req.limit);
    let window: Vec<&Ranked> = ranked.iter().skip(req.after_rank).collect();
    page.has_more = req.after_rank + window.len() < page.matched;
    // Each read on every core.
    let numbered: Vec<(usize, &Ranked)> = window.into_iter().enumerate().collect();
    let entries: Vec<FoundSession> = crate::corpus::parallel::map(&numbered, |&(n, r)| {
        shown.session(r, req.after_rank + n + 1, req)
    });
    let admitted = fit_find(&mut page, Some(entries), None, render, req.budget);
    page.more = page
        .has_more
        .then(|| more_recipe(req, req.after_rank + admitted));
    Ok((!stop()).then_some(page))
}

/// The recipe that asks for the entries after `rank`.
fn more_recipe(req: &FindRequest, rank: usize) -> Recipe {
    Recipe {
        text: Some(req.text.clone()),
        after_rank: Some(rank),
        events: req.events.then_some(true),
        limit: Some(req.limit),
        ..base_recipe(req)
    }
}

/// What every recipe of a ranked search repeats: its scope.
fn base_recipe(req: &FindRequest) -> Recipe {
    Recipe {
        session: req.session.clone(),
        roles: (!req.roles.is_empty()).then(|| req.roles.clone()),
        since: req.since,
        until: req.until,
        cwd: req.cwd.as_ref().map(|p| p.path().display().to_string()),
        ..Recipe::default()
    }
}

/// What the page shows of its sessions: their best hits read again, with their texts.
struct Shown<'a> {
    scope: &'a Scope<'a>,
    q: &'a Question,
    filter: &'a Filter,
    sessions: &'a [SessionFile],
    stop: Stop<'a>,
}

impl Shown<'_> {
    /// The hits of `r` at `events` (scores and places in its events), best first, each a
    /// snippet with the words in view; and what the session is about.
    fn hits(&self, r: &Ranked, events: &[(f64, usize)]) -> (Vec<FoundHit>, SessionMeta) {
        let file = &self.sessions[r.held.index];
        let want: Vec<(u64, u32)> = events
            .iter()
            .map(|&(_, i)| (r.held.events[i].seq, r.held.events[i].part))
            .collect();
        let admit = |e: &Event| want.contains(&(e.seq, e.part));
        let kept = want
            .iter()
            .all(|at| r.held.kept.iter().any(|k| k.event.position() == *at));
        // Counted from word lists: each line read alone.
        let lines = match kept || r.held.meta.is_some() {
            true => None,
            false => self.lines(r, &want),
        };
        let (shots, meta) = match (kept, lines) {
            (true, _) => (r.held.kept.clone(), r.held.meta.clone().unwrap_or_default()),
            (false, Some(read)) => read,
            // Not kept from the first read: read again.
            (false, None) => {
                let raw = RawFilter::new(self.filter.queries());
                let read = RefCell::new(Vec::new());
                let visit = |e: &Event| read.borrow_mut().push(self.q.shot(e));
                let Ok(Some((_, meta))) = events_of(
                    self.scope.corpus,
                    self.scope.projection,
                    r.held.known,
                    file,
                    (self.filter, &raw),
                    &admit,
                    &visit,
                    self.stop,
                ) else {
                    return (Vec::new(), r.held.meta.clone().unwrap_or_default());
                };
                (read.into_inner(), meta)
            }
        };
        let qualified = file.key.to_string();
        let path = file.path.display().to_string();
        let mut items = Vec::new();
        let mut found = Vec::new();
        for (&(score, _), at) in events.iter().zip(&want) {
            let Some(shot) = shots.iter().find(|k| k.event.position() == *at) else {
                continue;
            };
            let mut matched: Vec<String> = Vec::new();
            for &(a, b) in &shot.spans {
                let w = shot.event.text[a..b].to_string();
                if !matched.contains(&w) {
                    matched.push(w);
                }
            }
            let mut item = Item::new(qualified.clone(), Some(path.clone()), shot.event.clone());
            item = item.about(&meta);
            item.focus = shot.focus;
            item.truncated = shot.cut;
            if self.scope.locations {
                item.location = shot.location;
            }
            items.push(item);
            found.push((score, matched, shot.spans.clone()));
        }
        let files = vec![file; items.len()];
        self.scope.fill(&mut items, &files);
        let hits = items
            .into_iter()
            .zip(found)
            .map(|(item, (score, matched, spans))| FoundHit {
                read: Recipe {
                    session: Some(qualified.clone()),
                    seq: Some(item.event.seq),
                    part: Some(item.event.part),
                    ..Recipe::default()
                },
                item,
                score,
                matched,
                spans,
            })
            .collect();
        (hits, meta)
    }

    /// The events of `r` at `want`, as hits show them, each read from its line alone through
    /// the projection, and what the session is about; `None` when one cannot be.
    fn lines(&self, r: &Ranked, want: &[(u64, u32)]) -> Option<(Vec<Shot>, SessionMeta)> {
        let (p, file) = (self.scope.projection?, &self.sessions[r.held.index]);
        let mut seqs: Vec<u64> = want.iter().map(|w| w.0).collect();
        seqs.sort_unstable();
        seqs.dedup();
        let (lines, locations) = p.lines(self.scope.corpus, file, &seqs)?;
        let mut shots = Vec::new();
        for mut e in (lines.events.into_iter()).filter(|e| want.contains(&e.position())) {
            // Marked as a read of one line marks it; a hit of a search is not.
            e.on_active_branch = None;
            let at = seqs.binary_search(&e.seq).ok();
            shots.push(Shot {
                location: at.and_then(|at| locations[at]),
                ..self.q.shot(&e)
            });
        }
        Some((shots, lines.meta))
    }

    /// The entry of session `r`, at `rank`.
    fn session(&self, r: &Ranked, rank: usize, req: &FindRequest) -> FoundSession {
        let file = &self.sessions[r.held.index];
        let best: Vec<(f64, usize)> = r.events.iter().take(SHOWN).copied().collect();
        let (hits, meta) = self.hits(r, &best);
        let meta = &meta;
        let prompt = match meta.title {
            Some(_) => None,
            None => self.prompt(file),
        };
        let qualified = file.key.to_string();
        let mut words: Vec<String> = Vec::new();
        for w in hits.iter().flat_map(|h| &h.matched) {
            let w = history_raw::fold(w);
            if !words.contains(&w) {
                words.push(w);
            }
        }
        if words.is_empty() {
            words = self.q.literals();
        }
        let resume = self
            .scope
            .corpus
            .source(&file.key.harness)
            .and_then(|source| source.resume(file));
        FoundSession {
            rank,
            session: qualified.clone(),
            score: r.score,
            path: Some(file.path.display().to_string()),
            cwd: meta.cwd.clone(),
            git_branch: meta.git_branch.clone(),
            title: meta.title.clone(),
            prompt,
            last_hit: Some(Timestamp(r.held.last)),
            hits: r.held.hits,
            best: hits,
            list: Recipe {
                session: Some(qualified),
                queries: Some(words),
                ..base_recipe(req)
            },
            resume,
            explain: req.explain.then(|| r.explain.clone()),
        }
    }

    /// The session's first prompt, cut to a line: from the overview's cache, else from the
    /// lines the projection holds (a large session is not decoded whole for it), else from a
    /// decode.
    fn prompt(&self, file: &SessionFile) -> Option<String> {
        let corpus = self.scope.corpus;
        let cached = self.scope.cache.and_then(|c| c.cached(corpus, file));
        let stored = || self.scope.projection?.representative(corpus, file);
        let event = match cached.map(|r| r.event).or_else(stored) {
            Some(event) => event?,
            None => {
                match self.scope.cache {
                    Some(cache) => cache.representative(corpus, file),
                    None => crate::query::representative(corpus, file, &Filter::default()),
                }
                .ok()?
                .event?
            }
        };
        let mut text: String = event.text.split_whitespace().collect::<Vec<_>>().join(" ");
        crate::page::budget::cut(&mut text, PROMPT);
        Some(text)
    }
}

/// How many bytes of a first prompt an entry shows.
const PROMPT: usize = 200;

/// The part of `text` around the first of `spans` (sorted or not), as a list's snippet of it
/// ([`around`]); where that match starts in it, the spans that lie in it (moved to its
/// offsets), and whether it was cut.
fn snippet(
    text: &str,
    spans: &[(usize, usize)],
) -> (String, Option<usize>, Vec<(usize, usize)>, bool) {
    let at = spans.iter().map(|s| s.0).min();
    let part = around(text, at.unwrap_or(0));
    let mut inside: Vec<(usize, usize)> = spans
        .iter()
        .filter(|&&(a, b)| a >= part.start && b <= part.end)
        .map(|&(a, b)| (part.moved(a), part.moved(b)))
        .collect();
    inside.sort_unstable();
    let focus = at.map(|at| part.moved(at));
    (part.text, focus, inside, part.cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(role: Role, text: &str) -> Scored {
        let q = Question::parse("flaky login test").unwrap();
        Scored {
            seq: 1,
            part: 0,
            role,
            timestamp: None,
            tally: q.tally(text).unwrap(),
        }
    }

    #[test]
    fn a_question_is_its_terms_without_stop_words() {
        let q = Question::parse("Where did we fix the flakyLoginTest?").unwrap();
        let terms: Vec<(&str, f64)> = q.terms.iter().map(|(t, w)| (t.as_str(), *w)).collect();
        assert_eq!(
            terms,
            [
                ("fix", 1.0),
                ("flakylogintest", 1.0),
                ("flaki", PART),
                ("login", PART),
                ("test", PART)
            ]
        );
        assert!(Question::parse("where did we").is_err());
    }

    #[test]
    fn a_short_term_counts_beside_a_long_one_only() {
        let q = Question::parse("CI flaking on needle-1-a").unwrap();
        assert_eq!(q.names(), ["ci", "flake", "needle-1-a", "needl"]);
        assert_eq!(q.literals(), ["flak", "needle-1-a", "needl"]);
        assert!(q.tally("the CI job at 1 o'clock").is_none());
        let both = q.tally("the CI job is flaky").unwrap();
        assert_eq!(both.tf.iter().filter(|&&n| n > 0).count(), 2, "{both:?}");
        // A question of short words alone gathers by them.
        let short = Question::parse("CI db").unwrap();
        assert_eq!(short.literals(), ["ci", "db"]);
        assert!(short.tally("our CI").is_some());
        assert!(locatable("数据") && !locatable("数") && !locatable("ab") && locatable("abc"));
    }

    #[test]
    fn a_prompt_outranks_a_reply_and_a_reply_outranks_tool_output() {
        let q = Question::parse("flaky login test").unwrap();
        let rarity = Rarity {
            holders: vec![1; 3],
            idf: vec![1.0; 3],
        };
        let text = "the flaky login test again";
        let score = |role| q.total(&rarity, &event(role, text));
        assert!(score(Role::User) > score(Role::Assistant));
        assert!(score(Role::Assistant) > score(Role::Tool));
        assert!(score(Role::Tool) > score(Role::Context));
    }

    #[test]
    fn words_together_in_an_event_score_above_the_same_words_in_several() {
        let q = Question::parse("flaky login test").unwrap();
        let rarity = Rarity {
            holders: vec![1; 3],
            idf: vec![1.0; 3],
        };
        let filler = "x ".repeat(30);
        let together = event(Role::User, &format!("flaky login test {filler}"));
        let apart = event(Role::User, &format!("flaky {filler} login test"));
        let alone: f64 = ["flaky x x", "login x x", "test x x"]
            .iter()
            .map(|w| q.total(&rarity, &event(Role::User, &format!("{w} {filler}"))))
            .sum();
        assert!(q.total(&rarity, &together) > alone + 1.0);
        // Anywhere in the event.
        assert_eq!(q.total(&rarity, &together), q.total(&rarity, &apart));
    }

    #[test]
    fn a_long_session_gets_less_for_holding_the_words_somewhere() {
        let q = Question::parse("flaky login test").unwrap();
        let rarity = Rarity {
            holders: vec![1; 3],
            idf: vec![1.0; 3],
        };
        // The same three events, each with one of the words, in a session of the mean size
        // and in one twenty times as long.
        let score = |size: u64| {
            let held = Held {
                index: 0,
                meta: None,
                events: ["flaky x", "login x", "test x"]
                    .iter()
                    .map(|t| event(Role::User, t))
                    .collect(),
                hits: 3,
                kept: Vec::new(),
                terms: 0b111,
                last: 0,
                known: None,
            };
            rank_session(
                &q,
                &rarity,
                Box::new(held),
                0.0,
                coverage_norm(size, 1000.0),
                true,
            )
        };
        let (typical, long) = (score(1000), score(20_000));
        assert_eq!(typical.explain.coverage, COVERAGE * 3.0);
        assert_eq!(typical.explain.best, long.explain.best);
        assert!(long.explain.coverage < typical.explain.coverage / 4.0);
        // The explanation says by how much.
        let said = COVERAGE * 3.0 * long.explain.size;
        assert!((long.explain.coverage - said).abs() < 1e-12, "{said}");
        assert!(long.score < typical.score);
        // A short one gets more, never more than 1 / (1 - COVERAGE_B) times.
        assert!(coverage_norm(10, 1000.0) > 1.0);
        assert!(coverage_norm(0, 1000.0) <= 1.0 / (1.0 - COVERAGE_B));
    }

    #[test]
    fn the_frontier_keeps_every_event_that_can_rank_among_a_sessions_best() {
        let q = Question::parse("flaky login retry budget").unwrap();
        let words = [
            "flaky",
            "login",
            "retry",
            "budget",
            "x",
            "x x x",
            "flaky flaky",
        ];
        let roles = [Role::User, Role::Assistant, Role::Tool, Role::Context];
        let mut rng = fastrand::Rng::with_seed(5);
        for round in 0..40 {
            let events: Vec<Scored> = (0..200 + round * 10)
                .filter_map(|n| {
                    // Few distinct texts, roles and times: many events score alike.
                    let text: Vec<&str> = (0..rng.usize(1..6))
                        .map(|_| words[rng.usize(..words.len())])
                        .collect();
                    Some(Scored {
                        seq: n as u64 / 2,
                        part: n as u32 % 2,
                        role: roles[rng.usize(..roles.len())],
                        timestamp: rng.bool().then(|| Timestamp(rng.i64(0..4))),
                        tally: q.tally(&text.join(" "))?,
                    })
                })
                .collect();
            let depth = 1 + rng.usize(..8);
            let kept = frontier(&q, events.clone(), depth);
            assert!(
                kept.len() < events.len() / 2,
                "{} of {}",
                kept.len(),
                events.len()
            );
            for _ in 0..50 {
                let idf: Vec<f64> = (0..q.terms.len())
                    .map(|_| [1e-3, 0.1, 1.0, 7.0][rng.usize(..4)] * rng.f64().max(0.01))
                    .collect();
                let rarity = Rarity {
                    holders: vec![1; idf.len()],
                    idf,
                };
                // The best `depth` in a session's order, and in the order of a page of events.
                let best = |events: &[Scored], by_time: bool| {
                    let mut all: Vec<(f64, Option<Timestamp>, u64, u32)> = (events.iter())
                        .map(|e| (q.total(&rarity, e), e.timestamp, e.seq, e.part))
                        .map(|(s, t, seq, part)| (s, t.filter(|_| by_time), seq, part))
                        .collect();
                    all.sort_by(|a, b| {
                        (b.0.total_cmp(&a.0)).then((b.1, b.2, b.3).cmp(&(a.1, a.2, a.3)))
                    });
                    all.truncate(depth);
                    all
                };
                for by_time in [false, true] {
                    assert_eq!(best(&kept, by_time), best(&events, by_time), "{depth}");
                }
            }
        }
    }

    #[test]
    fn a_rare_word_counts_more_than_a_common_one() {
        assert!(idf(100, 1) > idf(100, 50));
        assert!(idf(100, 100) > 0.0);
    }

    #[test]
    fn a_snippet_keeps_its_first_match_in_view_and_moves_the_spans() {
        let text = format!("{}flaky{}", "é".repeat(300), "x".repeat(1000));
        let at = 600;
        let (s, focus, spans, cut) = snippet(&text, &[(at, at + 5)]);
        assert!(cut && s.starts_with('…') && s.ends_with('…'));
        let f = focus.unwrap();
        assert_eq!(&s[f..f + 5], "flaky");
        assert_eq!(spans, [(f, f + 5)]);
        let (s, focus, spans, cut) = snippet("a flaky test", &[(8, 12), (2, 7)]);
        assert_eq!((s.as_str(), focus, cut), ("a flaky test", Some(2), false));
        assert_eq!(spans, [(2, 7), (8, 12)]);
    }
}
