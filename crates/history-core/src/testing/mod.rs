//! The conformance kit: the rules of [`Transcript`] that a search relies on, checked for any
//! source over that source's own fixtures. A fast path a decoder takes (a line test, a time read
//! off raw bytes) must give what the slow path gives; each decoder's tests run this one kit
//! rather than keep private copies of the rules.
//!
//! For every session `discover()` finds under a root, [`check`] holds the source to these rules,
//! panicking with the session, the seq and the query of the first violation:
//!
//! 1. **A matching read equals a full read.** For many random queries (cut from the session's
//!    own texts, with case changes, across words, with non-ASCII characters, and some absent),
//!    [`Corpus::load`] with the search's raw line test ([`RawFilter::may_match_slice`]) gives
//!    exactly the matching events of a load without it, on every branch and on the selected one;
//!    the decoder reports the same branch, lineage and metadata. Under arbitrary line tests,
//!    every event emitted equals the full read's event at its position, and (for a session read
//!    from its own file alone) every event of a line the test passes is emitted. No two events
//!    of a session share a position (seq and part).
//! 2. **[`Transcript::line_time`] agrees with decoded times.** For a session read from its own
//!    file alone, line by line; for one that inherits history, the span of the line times of a
//!    query's candidate lines ([`RawFilter::candidate_lines`]) covers the time of the event the
//!    query was cut from.
//! 3. **Lineage** names only files that exist, starts with the session's own file, and equals
//!    [`Decoded::lineage`]; an ancestor it leaves out for not being read
//!    ([`Decoded::lineage_open`]) is told in a notice.
//! 4. **Any bytes in, no panic** ([`check_damage`]): damaged copies of every fixture file, in a
//!    temporary root, decode with and without line tests without a panic, every event's seq is a
//!    line of the session's lineage files (history inherited from other files takes seqs below
//!    the session's own, so their sum bounds them), and rules 1 and 3 still hold.
//! 5. **The raw filter never rules out a hit**: the raw line of an event passes a query cut from
//!    its text, and [`Corpus::may_match`] holds for a session with a matching event.
//! 6. **A line decoded alone gives its events' texts** ([`Transcript::replay`]): for a session
//!    read from its own file alone, damaged or not, the texts of each line's events are, in
//!    part order, among the texts its replay emits, in the same order.
//! 7. **[`Transcript::cwd`] names the working directory a decode does** ([`Decoded::meta`]),
//!    so that selecting sessions by place before decoding them selects what a decode would.
//! 8. **A resumed decode goes on as a whole one** ([`Transcript::decode_resumable`]): for a
//!    session read from its own file alone, in the temporary root of rule 4, a resumable decode
//!    equals a plain one, and from the snapshot of any prefix of the file (cut anywhere, even
//!    inside a line), a decode of the whole file emits exactly the plain decode's events after
//!    the snapshot's settled lines and returns the same branch, notices, metadata and lineage, and a
//!    snapshot where a decode of the whole file stops. Under a line test, every event it emits
//!    is the plain decode's.
//!
//! Every random choice comes from one seed, [`DEFAULT_SEED`] unless `NOTESOUP_KIT_SEED` names
//! another (decimal or `0x…`); a failure names it, so that it reproduces.
//!
//! A decoder's tests run it over its fixtures, in a `#[test]` function such as:
//!
//! ```no_run
//! # mod decode_claude {
//! #     pub static HARNESS: history_core::Harness = history_core::Harness {
//! #         name: "claude",
//! #         root_flag: "claude-root",
//! #         root_env: "NOTESOUP_HISTORY_CLAUDE_ROOT",
//! #         root_about: "",
//! #         default_root_about: "",
//! #         default_root: |_| None,
//! #         session_env: None,
//! #         open: |_| unimplemented!(),
//! #     };
//! # }
//! fn the_fixtures_keep_the_transcript_rules() {
//!     let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/claude/projects");
//!     history_core::testing::check(&decode_claude::HARNESS, root.as_ref());
//! }
//! # the_fixtures_keep_the_transcript_rules();
//! ```

pub mod properties;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::BufReader;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use fastrand::Rng;

use crate::choose::Filter;
use crate::corpus::{Corpus, Keep, Loaded};
use crate::error::DecodeError;
use crate::model::{Event, SessionFile};
use crate::query::Span;
use crate::source::snapshot::Snapshot;
use crate::source::Harness;
use crate::source::{
    Decoded, Layout, LineTest, LineTime, Lines, Resumed, Transcript, WantSnapshot,
};
use history_raw::RawFilter;

/// The seed of every random choice unless `NOTESOUP_KIT_SEED` names another.
pub const DEFAULT_SEED: u64 = 0x6e6f_7465_736f_7570;

/// Whether a decode under a line test reports the notices a full decode reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notices {
    /// The same notices, in the same order.
    Same,
    /// They may differ, as the source documents (a line read for its structure alone may not be
    /// found damaged). Events, branch, lineage and metadata are still compared strictly.
    MayDiffer,
}

/// How hard the kit looks, and with which seed.
#[derive(Clone, Debug)]
pub struct Options {
    /// The seed of every random choice; failures name it.
    pub seed: u64,
    /// What a decode under a line test must report of notices.
    pub notices: Notices,
    /// Random queries per session (rule 1).
    pub queries: usize,
    /// Random line tests per session (rule 1), besides "every line" and "no line".
    pub line_tests: usize,
    /// Events per session checked against a query cut from their text (rules 2 and 5).
    pub events: usize,
    /// Damaged copies made of each fixture file (rule 4).
    pub damage_rounds: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            seed: seed_from_env().unwrap_or(DEFAULT_SEED),
            notices: Notices::Same,
            queries: 40,
            line_tests: 8,
            events: 40,
            damage_rounds: 24,
        }
    }
}

impl Options {
    /// The defaults, with notices that may differ under a line test ([`Notices::MayDiffer`]).
    pub fn notices_may_differ() -> Options {
        Options {
            notices: Notices::MayDiffer,
            ..Options::default()
        }
    }
}

fn seed_from_env() -> Option<u64> {
    let text = std::env::var("NOTESOUP_KIT_SEED").ok()?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("NOTESOUP_KIT_SEED={text:?} is not a number")))
}

/// Every rule, with the default [`Options`], over the sessions under `root` and damaged copies
/// of its files.
pub fn check(harness: &Harness, root: &Path) {
    check_with(harness, root, &Options::default());
}

/// Every rule, with these options: [`check_sessions`], then [`check_damage`].
pub fn check_with(harness: &Harness, root: &Path, options: &Options) {
    check_sessions(harness, root, options);
    check_damage(harness, root, options);
}

/// Rules 1, 2, 3 and 5 for every session discovered under `root`, of which there must be one.
pub fn check_sessions(harness: &Harness, root: &Path, options: &Options) {
    let corpus = Corpus::new(vec![(harness.open)(root.to_path_buf())]);
    let names = corpus.harnesses();
    assert_eq!(
        names,
        [harness.name],
        "the source {} opens calls itself {names:?}",
        harness.name
    );
    let files = corpus
        .source(harness.name)
        .map_or_else(Vec::new, |s| s.discover());
    assert!(
        !files.is_empty(),
        "{}: no session under {}: the kit would check nothing",
        harness.name,
        root.display()
    );
    for file in &files {
        check_session(&corpus, file, options);
    }
}

/// Rules 1, 2, 3 and 5 for one session of a source of `corpus`.
pub fn check_session(corpus: &Corpus, file: &SessionFile, options: &Options) {
    let source = corpus
        .source(&file.key.harness)
        .unwrap_or_else(|| panic!("no source for {} in the corpus", file.key));
    let at = At {
        seed: options.seed,
        what: format!("session {} ({})", file.key, file.path.display()),
    };
    let mut rng = Rng::with_seed(options.seed ^ session_salt(file));
    let session = Session::read(corpus, source, file, options, at);
    session.check_lineage();
    session.check_cwd();
    session.check_line_times();
    if let Some(lines) = &session.lines {
        check_replay(&session.at, source, lines, &session.by_position);
    }
    session.check_events_are_found(&mut rng);
    for _ in 0..options.queries {
        let queries = random_queries(&mut rng, &session.texts());
        session.check_query(&queries);
    }
    session.check_line_test(&|_: &[u8]| true, "every line");
    session.check_line_test(&|_: &[u8]| false, "no line");
    for _ in 0..options.line_tests {
        let (test, what) = random_line_test(&mut rng);
        session.check_line_test(&test, &what);
    }
}

/// A seed per session that does not depend on where the fixtures are checked out.
fn session_salt(file: &SessionFile) -> u64 {
    let name = file.path.file_name().map(|n| n.as_encoded_bytes());
    line_hash(
        line_hash(0, file.key.to_string().as_bytes()),
        name.unwrap_or(b""),
    )
}

/// Where a failure happened, with the seed that reproduces it.
struct At {
    seed: u64,
    what: String,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conformance (seed {:#x}: NOTESOUP_KIT_SEED={:#x} reruns it), {}",
            self.seed, self.seed, self.what
        )
    }
}

/// What one session gives without any line test: the reference every fast read is held to.
struct Session<'a> {
    corpus: &'a Corpus,
    source: &'a dyn Transcript,
    file: &'a SessionFile,
    options: &'a Options,
    at: At,
    /// Every event the decoder emits, in the order it emits them.
    events: Vec<Event>,
    /// The events by position.
    by_position: BTreeMap<(u64, u32), Event>,
    decoded: Result<Decoded, String>,
    /// [`Corpus::load`] of everything, on every branch (marked) and on the selected one.
    all: Result<Loaded, String>,
    active: Result<Loaded, String>,
    /// The lineage [`Transcript::lineage`] gives.
    lineage: Vec<PathBuf>,
    /// The raw lines of the session's own file, when its lineage is that file alone.
    lines: Option<Vec<Vec<u8>>>,
}

impl<'a> Session<'a> {
    fn read(
        corpus: &'a Corpus,
        source: &'a dyn Transcript,
        file: &'a SessionFile,
        options: &'a Options,
        at: At,
    ) -> Session<'a> {
        let (events, decoded) = decode(source, file, None);
        let load = |all| {
            corpus
                .load(file, &|_| Keep::Full, all, None)
                .map_err(|e| e.to_string())
        };
        let lineage = source.lineage(file);
        let lines = own_lines(source, file, &lineage);
        let by_position = unique_positions(&at, &events);
        Session {
            corpus,
            source,
            file,
            options,
            events,
            by_position,
            decoded: decoded.map_err(|e| e.to_string()),
            all: load(true),
            active: load(false),
            lineage,
            lines,
            at,
        }
    }

    fn texts(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e.text.as_str())
            .filter(|t| !t.is_empty())
            .collect()
    }

    /// The raw line an event of a single-file session comes from.
    fn line(&self, event: &Event) -> Option<&[u8]> {
        let lines = self.lines.as_ref()?;
        let line = event
            .seq
            .checked_sub(1)
            .and_then(|i| lines.get(i as usize))
            .unwrap_or_else(|| {
                panic!(
                    "{}: seq {} part {} is not a line of the file, which has {} lines",
                    self.at,
                    event.seq,
                    event.part,
                    lines.len()
                )
            });
        Some(line)
    }

    /// Rule 3.
    fn check_lineage(&self) {
        check_lineage(&self.at, self.file, &self.lineage);
        if let Ok(decoded) = &self.decoded {
            assert_eq!(
                decoded.lineage, self.lineage,
                "{}: Decoded::lineage differs from Transcript::lineage",
                self.at
            );
            assert!(
                !decoded.lineage_open || !decoded.notices.is_empty(),
                "{}: an ancestor that was not read is not told in a notice",
                self.at
            );
        }
        for loaded in [&self.all, &self.active].into_iter().flatten() {
            assert_eq!(
                loaded.lineage, self.lineage,
                "{}: the lineage of a load differs from Transcript::lineage",
                self.at
            );
        }
    }

    /// Rule 7.
    fn check_cwd(&self) {
        if let Ok(decoded) = &self.decoded {
            assert_eq!(
                self.source.cwd(self.file),
                decoded.meta.cwd,
                "{}: Transcript::cwd differs from Decoded::meta's",
                self.at
            );
        }
    }

    /// Rule 2, line by line, for a session read from its own file alone.
    fn check_line_times(&self) {
        for event in &self.events {
            let Some(line) = self.line(event) else {
                return;
            };
            let time = self.source.line_time(line);
            let agrees = match time {
                LineTime::Unknown => true,
                LineTime::Untimed => event.timestamp.is_none(),
                LineTime::At(t) => event.timestamp == Some(t),
                LineTime::AtMost(t) => event.timestamp.is_none_or(|e| e <= t),
            };
            assert!(
                agrees,
                "{}: seq {} part {}: line_time says {time:?}, but the event's time is {:?}\n  line: {}",
                self.at,
                event.seq,
                event.part,
                event.timestamp,
                shown(line)
            );
        }
    }

    /// Rules 2 (the span a search ranks a session by) and 5, for a query cut from each of some
    /// events' text.
    fn check_events_are_found(&self, rng: &mut Rng) {
        if self.events.is_empty() {
            return;
        }
        for _ in 0..self.options.events {
            let event = &self.events[below(rng, self.events.len())];
            let Some(query) = query_in(rng, &event.text) else {
                continue;
            };
            let filter = Filter::new(std::slice::from_ref(&query), vec![], None, None);
            assert!(
                filter.matches_text(&event.text),
                "{}: the kit cut {query:?} from {:?} but it does not match it",
                self.at,
                event.text
            );
            let raw = RawFilter::new(filter.queries());
            if raw.passes_everything() {
                continue;
            }
            let here = || {
                format!(
                    "{}: seq {} part {}, query {query:?}",
                    self.at, event.seq, event.part
                )
            };
            if let Some(line) = self.line(event) {
                assert!(
                    raw.may_match_slice(line),
                    "{}: the raw filter rules out the event's own line\n  text: {:?}\n  line: {}",
                    here(),
                    event.text,
                    shown(line)
                );
            }
            assert!(
                self.corpus.may_match(self.file, &raw),
                "{}: Corpus::may_match rules out a session that holds a hit",
                here()
            );
            match hit_span(self.source, &self.lineage, &raw) {
                Ok(Some(span)) => assert!(
                    span.covers(event.timestamp.map(|t| t.0)),
                    "{}: the line times of the query's candidate lines span {span:?}, which \
                     misses the event's time {:?}",
                    here(),
                    event.timestamp
                ),
                Ok(None) => panic!(
                    "{}: no raw line of the lineage {:?} can hold the hit",
                    here(),
                    self.lineage
                ),
                Err(_) => {} // an unreadable file spans every time
            }
        }
    }

    /// Rule 1 for one list of queries (an OR), and rule 5 for the session as a whole.
    fn check_query(&self, queries: &[String]) {
        let filter = Filter::new(queries, vec![], None, None);
        let raw = RawFilter::new(filter.queries());
        let test = |line: &[u8]| raw.may_match_slice(line);
        let line_test: Option<LineTest<'_>> =
            (!raw.passes_everything()).then_some(&test as LineTest<'_>);
        let keep = |e: &Event| {
            if filter.matches(e) {
                Keep::Full
            } else {
                Keep::Drop
            }
        };
        let what = format!("query {queries:?}");
        for (all_branches, reference) in [(true, &self.all), (false, &self.active)] {
            let what = format!("{what} (all branches: {all_branches})");
            let got = self
                .corpus
                .load(self.file, &keep, all_branches, line_test)
                .map_err(|e| e.to_string());
            let (reference, got) = match self.outcomes(&what, reference, got) {
                Some(pair) => pair,
                None => continue,
            };
            let expected: Vec<&Event> = reference
                .events
                .iter()
                .filter(|e| filter.matches(e))
                .collect();
            same_events(&self.at, &what, &expected, &got.events);
            if self.options.notices == Notices::Same {
                assert_eq!(
                    got.notices, reference.notices,
                    "{}: {what}: notices",
                    self.at
                );
            }
            assert_eq!(got.meta, reference.meta, "{}: {what}: meta", self.at);
            assert_eq!(
                got.lineage, reference.lineage,
                "{}: {what}: lineage",
                self.at
            );
        }
        let Some(line_test) = line_test else {
            return;
        };
        self.check_line_test(line_test, &format!("the raw test of {what}"));
        let matching: Vec<&Event> = self.events.iter().filter(|e| filter.matches(e)).collect();
        if !matching.is_empty() {
            assert!(
                self.corpus.may_match(self.file, &raw),
                "{}: {what}: Corpus::may_match rules out a session with {} matching events \
                 (the first at seq {})",
                self.at,
                matching.len(),
                matching[0].seq
            );
        }
        for event in matching {
            if let Some(line) = self.line(event) {
                assert!(
                    raw.may_match_slice(line),
                    "{}: {what}: seq {} part {} matches, but the raw filter rules out its \
                     line\n  text: {:?}\n  line: {}",
                    self.at,
                    event.seq,
                    event.part,
                    event.text,
                    shown(line)
                );
            }
        }
    }

    /// Both loads succeeded (the pair), or both failed alike (`None`); anything else fails.
    fn outcomes<'r>(
        &self,
        what: &str,
        reference: &'r Result<Loaded, String>,
        got: Result<Loaded, String>,
    ) -> Option<(&'r Loaded, Loaded)> {
        match (reference, got) {
            (Ok(reference), Ok(got)) => Some((reference, got)),
            (Err(reference), Err(got)) => {
                assert_eq!(&got, reference, "{}: {what}: the error", self.at);
                None
            }
            (reference, got) => panic!(
                "{}: {what}: a full load gives {}, a load under the line test {}",
                self.at,
                outcome(reference),
                outcome(&got)
            ),
        }
    }

    /// Rule 1 for a decode under one line test.
    fn check_line_test(&self, test: LineTest<'_>, what: &str) {
        let (events, decoded) = decode(self.source, self.file, Some(test));
        let decoded = decoded.map_err(|e| e.to_string());
        let fast = Fast {
            events: &events,
            decoded: &decoded,
            test,
            what,
        };
        fast.compare(
            &self.at,
            &self.by_position,
            &self.decoded,
            self.lines.as_deref(),
            self.options.notices,
        );
    }
}

/// One decode under a line test, to compare with the full decode.
struct Fast<'a> {
    events: &'a [Event],
    decoded: &'a Result<Decoded, String>,
    test: LineTest<'a>,
    what: &'a str,
}

impl Fast<'_> {
    /// Every event emitted is the full decode's event at its position; with the raw lines of a
    /// single-file session, every event of a line the test passes is emitted; the decoder
    /// reports what the full decode reports.
    fn compare(
        &self,
        at: &At,
        reference: &BTreeMap<(u64, u32), Event>,
        decoded: &Result<Decoded, String>,
        lines: Option<&[Vec<u8>]>,
        notices: Notices,
    ) {
        let what = self.what;
        for event in self.events {
            match reference.get(&event.position()) {
                Some(full) => assert_eq!(
                    event, full,
                    "{at}: under the line test {what}, seq {} part {} differs from the full read's",
                    event.seq, event.part
                ),
                None => panic!(
                    "{at}: under the line test {what}, seq {} part {} is emitted, but a full read \
                     has no event there: {event:?}",
                    event.seq, event.part
                ),
            }
        }
        if let Some(lines) = lines {
            let emitted: HashSet<(u64, u32)> = self.events.iter().map(Event::position).collect();
            for (position, full) in reference {
                let passes = full
                    .seq
                    .checked_sub(1)
                    .and_then(|i| lines.get(i as usize))
                    .is_some_and(|line| (self.test)(line));
                assert!(
                    !passes || emitted.contains(position),
                    "{at}: under the line test {what}, the line of seq {} passes but its part {} \
                     is not emitted: {full:?}",
                    full.seq,
                    full.part
                );
            }
        }
        match (decoded, self.decoded) {
            (Ok(full), Ok(fast)) => {
                assert_eq!(fast.branch, full.branch, "{at}: {what}: the branch");
                assert_eq!(
                    (&fast.lineage, fast.lineage_open),
                    (&full.lineage, full.lineage_open),
                    "{at}: {what}: the lineage"
                );
                assert_eq!(fast.meta, full.meta, "{at}: {what}: the metadata");
                if notices == Notices::Same {
                    assert_eq!(fast.notices, full.notices, "{at}: {what}: the notices");
                }
            }
            (Err(full), Err(fast)) => assert_eq!(fast, full, "{at}: {what}: the error"),
            (full, fast) => panic!(
                "{at}: a full decode gives {}, a decode under the line test {what} {}",
                outcome(full),
                outcome(fast)
            ),
        }
    }
}

fn outcome<T>(result: &Result<T, String>) -> String {
    match result {
        Ok(_) => "a session".into(),
        Err(e) => format!("the error {e:?}"),
    }
}

/// Decodes one session, gathering what it emits.
fn decode(
    source: &dyn Transcript,
    file: &SessionFile,
    lines: Option<LineTest<'_>>,
) -> (Vec<Event>, Result<Decoded, DecodeError>) {
    let mut events = Vec::new();
    let decoded = source.decode(file, &mut |e| events.push(e), lines);
    (events, decoded)
}

/// Events come in file order, as [`Transcript::decode`] promises: each one's position (seq,
/// part) after the previous one's.
fn in_file_order(at: &At, events: &[Event], what: &str) {
    for pair in events.windows(2) {
        assert!(
            pair[0].position() < pair[1].position(),
            "{at}: {what}: seq {} part {} is emitted after seq {} part {}",
            pair[1].seq,
            pair[1].part,
            pair[0].seq,
            pair[0].part
        );
    }
}

/// The events by position, each position once.
fn unique_positions(at: &At, events: &[Event]) -> BTreeMap<(u64, u32), Event> {
    let mut by_position = BTreeMap::new();
    for event in events {
        if let Some(first) = by_position.insert(event.position(), event.clone()) {
            panic!(
                "{at}: two events at seq {} part {}: {first:?} and {event:?}",
                event.seq, event.part
            );
        }
    }
    by_position
}

/// Two lists of events in position order are equal, or the first difference is named.
fn same_events(at: &At, what: &str, expected: &[&Event], got: &[Event]) {
    let (mut i, mut j) = (0, 0);
    while i < expected.len() || j < got.len() {
        match (expected.get(i), got.get(j)) {
            (Some(e), Some(g)) if e.position() == g.position() => {
                assert_eq!(
                    g, *e,
                    "{at}: {what}: seq {} part {} differs from the full read's",
                    e.seq, e.part
                );
                i += 1;
                j += 1;
            }
            (Some(e), g) if g.is_none_or(|g| e.position() < g.position()) => panic!(
                "{at}: {what}: seq {} part {} matches in a full read but is missing: {e:?}",
                e.seq, e.part
            ),
            (_, Some(g)) => panic!(
                "{at}: {what}: seq {} part {} is kept, but a full read keeps no matching event \
                 there: {g:?}",
                g.seq, g.part
            ),
            (None, None) | (Some(_), None) => unreachable!(),
        }
    }
}

/// Rule 3: the session's own file first, and only files that exist.
fn check_lineage(at: &At, file: &SessionFile, lineage: &[PathBuf]) {
    assert_eq!(
        lineage.first(),
        Some(&file.path),
        "{at}: the lineage {lineage:?} does not start with the session's own file"
    );
    for path in lineage {
        assert!(
            path.is_file(),
            "{at}: the lineage names {}, which is not a file",
            path.display()
        );
    }
}

/// The raw lines of a session read from its own file alone, as decoders number them; `None`
/// for a session read from more files, or whose seqs are records, not lines
/// ([`Layout::Records`]): the rules of lines do not apply to it.
fn own_lines(
    source: &dyn Transcript,
    file: &SessionFile,
    lineage: &[PathBuf],
) -> Option<Vec<Vec<u8>>> {
    let alone = lineage == [file.path.clone()] && source.layout() == Layout::Lines;
    alone.then(|| raw_lines(source, &file.path).ok()).flatten()
}

/// The raw lines of a file as decoders number them.
fn raw_lines(source: &dyn Transcript, path: &Path) -> Result<Vec<Vec<u8>>, DecodeError> {
    let reader = source.open_raw(path).map_err(|source| DecodeError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut lines = Lines::new(BufReader::new(reader), path.display().to_string());
    let mut out = Vec::new();
    while let Some(line) = lines.next_line()? {
        out.push(line.bytes.to_vec());
    }
    Ok(out)
}

/// How many lines of a file can be read (up to the first error).
fn line_count(source: &dyn Transcript, path: &Path) -> u64 {
    let Ok(reader) = source.open_raw(path) else {
        return 0;
    };
    let mut lines = Lines::new(BufReader::new(reader), String::new());
    let mut n = 0;
    while let Ok(Some(_)) = lines.next_line() {
        n += 1;
    }
    n
}

/// A line for a failure message: lossy, and cut when long.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut cut: String = text.chars().take(400).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// The span of the line times of every candidate line of `raw` in the lineage's files; `None`
/// when no line is a candidate.
fn hit_span(
    source: &dyn Transcript,
    lineage: &[PathBuf],
    raw: &RawFilter,
) -> std::io::Result<Option<Span>> {
    // A search reads a session of records whole, at any time ([`crate::query::search`]).
    if source.layout() == Layout::Records {
        return Ok(Some(Span::ANY));
    }
    let mut span: Option<Span> = None;
    for path in lineage {
        let reader = source.open_raw(path)?;
        raw.candidate_lines(reader, |line| {
            let s = Span::of(source.line_time(line));
            span = Some(span.map_or(s, |span| span.cover(s)));
        })?;
    }
    Ok(span)
}

/// `0..n`, or 0 when `n` is 0.
fn below(rng: &mut Rng, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        rng.usize(..n)
    }
}

/// FNV-1a of a line's bytes under a salt, with a final mix so that nearby salts choose unrelated
/// subsets: a line test's deterministic pseudo-random choice of lines, stable for equal lines.
pub fn line_hash(salt: u64, bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h =
        fnv::FnvHasher::with_key(0xcbf2_9ce4_8422_2325 ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    h.write(bytes);
    let h = h.finish();
    let h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// An arbitrary subset of lines, and its name for failures.
fn random_line_test(rng: &mut Rng) -> (impl Fn(&[u8]) -> bool + Sync, String) {
    let salt = rng.u64(..);
    let one_in = rng.u64(2..=6);
    let class = rng.u64(..one_in);
    let kept = rng.bool();
    let what = format!(
        "{} 1 line in {one_in} (salt {salt:#x}, class {class})",
        if kept { "only" } else { "all but" }
    );
    (
        move |line: &[u8]| (line_hash(salt, line) % one_in == class) == kept,
        what,
    )
}

/// Queries that are mostly absent, or that stress folding and the raw filter's escapes.
const ODD_QUERIES: &[&str] = &[
    "STRASSE",
    "\u{212A}elvin",
    "\u{FB01}le",
    "\u{0130}stanbul",
    "[image]",
    "\"",
    "\\",
    ", ",
    "\u{1F600}",
    "caf\u{e9}",
    "\u{3a3}\u{3c3}\u{3c2}",
    "zqxjv",
    "Bash: ",
];

/// One to three queries (an OR).
fn random_queries(rng: &mut Rng, texts: &[&str]) -> Vec<String> {
    let n = if rng.usize(..4) == 0 {
        rng.usize(2..=3)
    } else {
        1
    };
    (0..n).map(|_| random_query(rng, texts)).collect()
}

/// A query cut from one of `texts`, its case changed or something added, or an odd one.
fn random_query(rng: &mut Rng, texts: &[&str]) -> String {
    if texts.is_empty() || rng.usize(..6) == 0 {
        return match rng.usize(..3) {
            0 => (0..rng.usize(3..10)).map(|_| rng.lowercase()).collect(),
            _ => ODD_QUERIES[below(rng, ODD_QUERIES.len())].to_string(),
        };
    }
    let text = texts[below(rng, texts.len())];
    let cut = window(rng, text);
    match rng.usize(..7) {
        0 => cut.to_uppercase(),
        1 => cut.to_lowercase(),
        2 => cut
            .chars()
            .map(|c| match rng.bool() {
                true => c.to_uppercase().collect::<String>(),
                false => c.to_lowercase().collect(),
            })
            .collect(),
        3 => format!("{cut}zq"),
        4 => format!("{} {cut}", ODD_QUERIES[below(rng, ODD_QUERIES.len())]),
        _ => cut,
    }
}

/// A random run of `text`'s characters, often across words, often around a non-ASCII one.
fn window(rng: &mut Rng, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let longest = [4, 12, 40][rng.usize(..3)];
    let len = 1 + below(rng, longest);
    let wide: Vec<usize> = (0..chars.len()).filter(|&i| !chars[i].is_ascii()).collect();
    let start = if !wide.is_empty() && rng.bool() {
        wide[below(rng, wide.len())].saturating_sub(below(rng, len))
    } else {
        below(rng, chars.len())
    };
    chars[start..(start + len).min(chars.len())]
        .iter()
        .collect()
}

/// A run of `text` that holds an ASCII letter (so that the raw filter has something to test),
/// unchanged; `None` when a few tries find none.
fn query_in(rng: &mut Rng, text: &str) -> Option<String> {
    (0..8)
        .map(|_| window(rng, text))
        .find(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
}

/// Rule 4: damaged copies of every file under `root`, in a temporary root with the same
/// layout, one file at a time. Every session the damage can reach is decoded in full and under
/// line tests, inside a guard that turns a panic into a failure naming the damage.
pub fn check_damage(harness: &Harness, root: &Path, options: &Options) {
    let bench = Bench::new(harness, root, options.notices);
    for (index, rel) in bench.files().iter().enumerate() {
        let original = std::fs::read(root.join(rel)).unwrap_or_default();
        let mut rng =
            Rng::with_seed(options.seed ^ line_hash(1, rel.as_os_str().as_encoded_bytes()));
        bench.check_at(index, Some(&original), &mut rng, options.seed, "undamaged");
        for round in 0..options.damage_rounds {
            let (damaged, how) = damage(&mut rng, &original, &bench.pool);
            bench.check_at(
                index,
                damaged.as_deref(),
                &mut rng,
                options.seed,
                &format!("round {round}: {how}"),
            );
        }
    }
}

/// A temporary copy of a fixture root in which one file at a time is replaced by other bytes
/// (damaged ones, or a fuzzer's), and every session that reads that file is held to rules 4, 3
/// and 1 and to file order: events are emitted in strictly increasing (seq, part) order.
///
/// The copy is made once, so that a fuzzer or a property test can try many inputs cheaply; each
/// check puts the original file back afterwards.
pub struct Bench {
    harness: Harness,
    tmp: tempfile::TempDir,
    root: PathBuf,
    copy: PathBuf,
    files: Vec<PathBuf>,
    /// Which sessions a file can reach: those whose lineage reads it.
    readers: HashMap<PathBuf, Vec<PathBuf>>,
    known: HashSet<PathBuf>,
    /// Lines of every file, for damage that splices them into others.
    pool: Vec<Vec<u8>>,
    notices: Notices,
}

impl Bench {
    /// A copy of every regular file under `root` (which must hold some) for `harness`.
    pub fn new(harness: &Harness, root: &Path, notices: Notices) -> Bench {
        let files = walk(root);
        assert!(
            !files.is_empty(),
            "{}: no file under {}: the kit would check nothing",
            harness.name,
            root.display()
        );
        let tmp = tempfile::Builder::new()
            .prefix("notesoup-kit-")
            .tempdir()
            .unwrap_or_else(|e| panic!("a temporary root: {e}"));
        let copy = tmp.path().join("root");
        for rel in &files {
            restore(root, &copy, rel);
        }
        let pool = line_pool(root, &files);
        let at = At {
            seed: 0,
            what: format!("{}, the undamaged copy", harness.name),
        };
        let source = (harness.open)(copy.clone());
        let undamaged = guarded(&at, "discover", || source.discover());
        let mut readers: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
        for file in &undamaged {
            for path in source.lineage(file) {
                readers.entry(path).or_default().push(file.path.clone());
            }
        }
        let known = undamaged.iter().map(|f| f.path.clone()).collect();
        Bench {
            harness: *harness,
            tmp,
            root: root.to_path_buf(),
            copy,
            files,
            readers,
            known,
            pool,
            notices,
        }
    }

    /// The files of the root, relative to it, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Replaces file `index` (modulo the number of files) by `bytes` (`None`: removes it), and
    /// checks every session that reads it; `seed` chooses the random line test.
    pub fn check(&self, index: usize, bytes: Option<&[u8]>, seed: u64) {
        let mut rng = Rng::with_seed(seed);
        self.check_at(index, bytes, &mut rng, seed, "bytes given");
    }

    fn check_at(&self, index: usize, bytes: Option<&[u8]>, rng: &mut Rng, seed: u64, how: &str) {
        let rel = &self.files[index % self.files.len()];
        // A file no session reads (a compressed twin that loses to its plain file, say) is
        // replaced alone in a root of its own, where discovery may take it up.
        let alone = !self.readers.contains_key(&self.copy.join(rel));
        let lonely = self.tmp.path().join("alone");
        let dir = if alone { &lonely } else { &self.copy };
        let target = dir.join(rel);
        if alone {
            let _ = std::fs::remove_dir_all(&lonely);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
            }
        }
        match bytes {
            Some(bytes) => std::fs::write(&target, bytes),
            None if alone => Ok(()),
            None => std::fs::remove_file(&target),
        }
        .unwrap_or_else(|e| panic!("replacing {}: {e}", target.display()));
        let at = At {
            seed,
            what: format!(
                "{}, {} replaced{} ({how})",
                self.harness.name,
                rel.display(),
                if alone { " alone" } else { "" }
            ),
        };
        let source = (self.harness.open)(dir.clone());
        let found = guarded(&at, "discover", || source.discover());
        let reach = self.readers.get(&target);
        for file in &found {
            let reached = alone
                || file.path == target
                || !self.known.contains(&file.path)
                || reach.is_some_and(|r| r.contains(&file.path));
            if reached {
                let at = At {
                    seed: at.seed,
                    what: format!("{}, session {}", at.what, file.key),
                };
                check_damaged(&at, source.as_ref(), file, rng, self.notices);
            }
        }
        if !alone {
            restore(&self.root, &self.copy, rel);
        }
    }
}

/// Rules 4, 3 and 1 for one session of a damaged root.
fn check_damaged(
    at: &At,
    source: &dyn Transcript,
    file: &SessionFile,
    rng: &mut Rng,
    notices: Notices,
) {
    let lineage = guarded(at, "lineage", || source.lineage(file));
    check_lineage(at, file, &lineage);
    let (events, decoded) = guarded(at, "decode", || decode(source, file, None));
    let decoded = decoded.map_err(|e| e.to_string());
    if let Ok(decoded) = &decoded {
        assert_eq!(
            decoded.lineage, lineage,
            "{at}: Decoded::lineage differs from Transcript::lineage"
        );
    }
    let lines: u64 = lineage.iter().map(|p| line_count(source, p)).sum();
    let records = source.layout() == Layout::Records;
    let in_range = |events: &[Event], what: &str| {
        for e in events.iter().filter(|_| !records) {
            assert!(
                (1..=lines).contains(&e.seq),
                "{at}: {what}: seq {} part {} is not a line: the lineage has {lines} lines",
                e.seq,
                e.part
            );
        }
    };
    in_range(&events, "a full decode");
    in_file_order(at, &events, "a full decode");
    let by_position = unique_positions(at, &events);
    let own = own_lines(source, file, &lineage);
    if let Some(lines) = &own {
        guarded(at, "replay", || {
            check_replay(at, source, lines, &by_position)
        });
        check_resume(at, source, file, (&events, &decoded), rng);
    }
    let (random, what) = random_line_test(rng);
    let tests: [(LineTest<'_>, &str); 3] = [
        (&|_: &[u8]| false, "no line"),
        (&|_: &[u8]| true, "every line"),
        (&random, &what),
    ];
    for (test, what) in tests {
        let (fast_events, fast_decoded) = guarded(at, "decode under a line test", || {
            decode(source, file, Some(test))
        });
        in_range(&fast_events, what);
        in_file_order(at, &fast_events, what);
        let fast = Fast {
            events: &fast_events,
            decoded: &fast_decoded.map_err(|e| e.to_string()),
            test,
            what,
        };
        fast.compare(at, &by_position, &decoded, own.as_deref(), notices);
    }
}

/// Rule 8 for a single-file session whose plain decode gave `plain`.
/// One function because each check reads the snapshots and events of the ones before it, in
/// the order the rule states them.
fn check_resume(
    at: &At,
    source: &dyn Transcript,
    file: &SessionFile,
    plain: (&[Event], &Result<Decoded, String>),
    rng: &mut Rng,
) {
    let resumable = |from: Option<&Snapshot>, lines: Option<LineTest<'_>>| {
        let mut events = Vec::new();
        let want = match lines {
            None => WantSnapshot::Yes,
            Some(_) => WantSnapshot::No,
        };
        let done = guarded(at, "resumable decode", || {
            match source.decode_resumable(file, &mut |e| events.push(e), lines, from, want) {
                Ok(Resumed::Done(decoded, snapshot)) => Some(Ok((decoded, snapshot))),
                Ok(Resumed::Declined) => None,
                Err(e) => Some(Err(e)),
            }
        });
        done.map(|d| (events, d.map_err(|e| e.to_string())))
    };
    let same = |what: &str, decoded: &Decoded, settled: u64, events: &[Event]| {
        let Ok(whole) = plain.1 else {
            panic!("{at}: {what} succeeds where a plain decode fails");
        };
        let after: Vec<&Event> = plain.0.iter().filter(|e| e.seq > settled).collect();
        let events: Vec<&Event> = events.iter().collect();
        assert_eq!(
            events, after,
            "{at}: {what}: the events after line {settled}"
        );
        assert_eq!(decoded.branch, whole.branch, "{at}: {what}: the branch");
        assert_eq!(decoded.notices, whole.notices, "{at}: {what}: the notices");
        assert_eq!(decoded.meta, whole.meta, "{at}: {what}: the metadata");
        assert_eq!(
            (&decoded.lineage, decoded.lineage_open),
            (&whole.lineage, whole.lineage_open),
            "{at}: {what}: the lineage"
        );
    };
    let Some((events, done)) = resumable(None, None) else {
        panic!("{at}: a resumable decode from the start declines");
    };
    let end = match done {
        Ok((decoded, snapshot)) => {
            same("a resumable decode", &decoded, 0, &events);
            match snapshot {
                Some(snapshot) => snapshot,
                None => return, // the session cannot be gone on from
            }
        }
        Err(_) => {
            assert!(
                plain.1.is_err(),
                "{at}: a resumable decode fails, a plain one does not"
            );
            return;
        }
    };
    let bytes = std::fs::read(&file.path).unwrap_or_else(|e| panic!("{at}: reading: {e}"));
    let write = |b: &[u8]| {
        std::fs::write(&file.path, b).unwrap_or_else(|e| panic!("{at}: writing: {e}"));
    };
    // Anywhere, at line ends, and at the end: each cut costs three decodes.
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1).collect();
    let mut cuts: Vec<usize> = (0..3).map(|_| rng.usize(0..=bytes.len())).collect();
    if !ends.is_empty() {
        cuts.extend((0..3).map(|_| ends[rng.usize(..ends.len())]));
    }
    cuts.push(bytes.len());
    for cut in cuts {
        write(&bytes[..cut]);
        let prefix = resumable(None, None);
        write(&bytes);
        let Some((_, Ok((_, Some(snapshot))))) = prefix else {
            continue; // a prefix may not be a session yet
        };
        let what = format!(
            "resumed at line {} (byte {})",
            snapshot.lines, snapshot.offset
        );
        let offset = usize::try_from(snapshot.offset).unwrap_or(usize::MAX);
        assert!(
            offset <= cut && (offset == 0 || bytes[offset - 1] == b'\n'),
            "{at}: the snapshot of the first {cut} bytes ends at byte {offset}, not after a line"
        );
        assert!(
            snapshot.settled <= snapshot.lines,
            "{at}: the snapshot settles lines it has not read"
        );
        let Some((events, done)) = resumable(Some(&snapshot), None) else {
            panic!("{at}: {what}: the source refuses a snapshot it wrote");
        };
        match done {
            Ok((decoded, again)) => {
                same(&what, &decoded, snapshot.settled, &events);
                let again = again.map(|s| (s.offset, s.lines));
                assert_eq!(
                    again,
                    Some((end.offset, end.lines)),
                    "{at}: {what}: the snapshot it returns"
                );
            }
            Err(e) => assert!(plain.1.is_err(), "{at}: {what} fails: {e}"),
        }
        let (test, how) = random_line_test(rng);
        if let Some((events, Ok(_))) = resumable(Some(&snapshot), Some(&test)) {
            for e in &events {
                assert!(
                    plain.0.contains(e),
                    "{at}: {what}, under {how}: seq {} part {} is not the plain decode's",
                    e.seq,
                    e.part
                );
            }
        }
    }
}

/// Rule 6: each line of a single-file session, decoded alone, gives its events' texts in order.
fn check_replay(
    at: &At,
    source: &dyn Transcript,
    lines: &[Vec<u8>],
    by_position: &BTreeMap<(u64, u32), Event>,
) {
    let mut seqs: Vec<u64> = by_position.keys().map(|(seq, _)| *seq).collect();
    seqs.dedup();
    for seq in seqs {
        let Some(line) = seq.checked_sub(1).and_then(|i| lines.get(i as usize)) else {
            continue; // rule 4 names a seq that is not a line
        };
        let mut replayed = Vec::new();
        if !source.replay(seq, line, &mut |e| replayed.push(e)) {
            return;
        }
        let mut texts = replayed.iter().map(|e| e.text.as_str());
        for ((_, part), event) in by_position.range((seq, 0)..=(seq, u32::MAX)) {
            assert!(
                texts.any(|t| t == event.text),
                "{at}: seq {seq} part {part}: decoded alone, the line does not give the text \
                 {:?} (in order); it gives {:?}\n  line: {}",
                event.text,
                replayed.iter().map(|e| &e.text).collect::<Vec<_>>(),
                shown(line)
            );
        }
    }
}

/// Runs a call into the source, turning its panic into a failure that says where.
fn guarded<T>(at: &At, call: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            panic!("{at}: {call} panicked: {message}")
        }
    }
}

/// Every regular file under `root`, relative to it, in order; symbolic links are left alone.
fn walk(root: &Path) -> Vec<PathBuf> {
    fn visit(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => visit(root, &path, out),
                Ok(t) if t.is_file() => {
                    if let Ok(rel) = path.strip_prefix(root) {
                        out.push(rel.to_path_buf());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    visit(root, root, &mut out);
    out.sort();
    out
}

/// Puts a file of `root` back into `copy`, with its modification time.
fn restore(root: &Path, copy: &Path, rel: &Path) {
    let (from, to) = (root.join(rel), copy.join(rel));
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copying {}: {e}", from.display()));
    if let Ok(modified) = std::fs::metadata(&from).and_then(|m| m.modified()) {
        let _ = std::fs::File::options()
            .write(true)
            .open(&to)
            .and_then(|f| f.set_modified(modified));
    }
}

/// Lines of every file, to splice into others: other sessions' ids, headers and links.
fn line_pool(root: &Path, files: &[PathBuf]) -> Vec<Vec<u8>> {
    let mut pool = Vec::new();
    for rel in files {
        let bytes = std::fs::read(root.join(rel)).unwrap_or_default();
        pool.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    pool
}

/// Lines that are not what a transcript holds.
const ODD_LINES: &[&[u8]] = &[
    b"not json",
    b"[1,2,3]",
    b"\"a string\"",
    b"{",
    b"}",
    b"null",
    b"42",
    b"",
    b"   ",
    b"{}",
    b"{\"type\":null}",
    b"{\"unterminated\":",
    b"\xef\xbb\xbf{}",
    b"{\"a\":1}{\"b\":2}",
];

/// Bytes that are not UTF-8: a lone continuation, a cut sequence, a surrogate, an invalid byte.
const NOT_UTF8: &[&[u8]] = &[
    b"\x80",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xf0\x9f",
    b"\xff",
    b"\xc0\xaf",
];

/// What JSON is made of, to break its structure.
const TOKENS: &[&[u8]] = &[
    b"{", b"}", b"[", b"]", b"\"", b":", b",", b"\\", b"\\u", b"\\ud800", b"null", b"0", b"-1e999",
];

/// A damaged copy of `original` (`None`: the file is gone), and what was done to it.
fn damage(rng: &mut Rng, original: &[u8], pool: &[Vec<u8>]) -> (Option<Vec<u8>>, String) {
    if rng.usize(..20) == 0 {
        return (None, "removed".into());
    }
    let mut bytes = original.to_vec();
    let mut done = Vec::new();
    for _ in 0..rng.usize(1..=3) {
        done.push(damage_once(rng, &mut bytes, pool));
    }
    (Some(bytes), done.join(", "))
}

/// One kind of damage to `bytes`, chosen at random, and its name: one arm per kind, read as a
/// list rather than split.
fn damage_once(rng: &mut Rng, bytes: &mut Vec<u8>, pool: &[Vec<u8>]) -> String {
    let at = below(rng, bytes.len() + 1);
    match rng.usize(..15) {
        0 => {
            bytes.truncate(at);
            format!("cut at byte {at}")
        }
        1 => {
            let n = rng.usize(1..=8);
            for _ in 0..n {
                let i = below(rng, bytes.len());
                if let Some(b) = bytes.get_mut(i) {
                    *b = rng.u8(..);
                }
            }
            format!("{n} bytes flipped")
        }
        2 => {
            let junk: Vec<u8> = (0..rng.usize(1..64)).map(|_| rng.u8(..)).collect();
            let n = junk.len();
            bytes.splice(at..at, junk);
            format!("{n} random bytes at {at}")
        }
        3 => edit_lines(rng, bytes, |rng, lines| {
            let i = below(rng, lines.len());
            let line = lines[i].clone();
            lines.insert(below(rng, lines.len() + 1), line);
            format!("line {} duplicated", i + 1)
        }),
        4 => edit_lines(rng, bytes, |rng, lines| {
            let i = below(rng, lines.len());
            lines.remove(i);
            format!("line {} dropped", i + 1)
        }),
        5 => edit_lines(rng, bytes, |rng, lines| {
            let (i, j) = (below(rng, lines.len()), below(rng, lines.len()));
            lines.swap(i, j);
            format!("lines {} and {} swapped", i + 1, j + 1)
        }),
        6 => edit_lines(rng, bytes, |rng, lines| {
            let i = below(rng, lines.len() + 1);
            lines.insert(i, ODD_LINES[below(rng, ODD_LINES.len())].to_vec());
            format!("an odd line at {}", i + 1)
        }),
        7 => {
            let bad = NOT_UTF8[below(rng, NOT_UTF8.len())];
            bytes.splice(at..at, bad.iter().copied());
            format!("invalid UTF-8 at byte {at}")
        }
        8 => repeat(rng, bytes),
        9 => {
            bytes.clear();
            "emptied".into()
        }
        10 => {
            let n = rng.usize(1..=6);
            for _ in 0..n {
                let i = below(rng, bytes.len() + 1);
                bytes.splice(i..i, TOKENS[below(rng, TOKENS.len())].iter().copied());
            }
            format!("{n} JSON tokens inserted")
        }
        11 => match rng.usize(..3) {
            0 => {
                let crlf: Vec<u8> = bytes
                    .iter()
                    .flat_map(|&b| {
                        if b == b'\n' {
                            vec![b'\r', b'\n']
                        } else {
                            vec![b]
                        }
                    })
                    .collect();
                *bytes = crlf;
                "CRLF line ends".into()
            }
            1 => {
                while bytes.last() == Some(&b'\n') {
                    bytes.pop();
                }
                "no final newline".into()
            }
            _ => {
                bytes.splice(at..at, *b"\n\n");
                format!("blank lines at byte {at}")
            }
        },
        12 => {
            // Ids and links: a character of a name or a value changed.
            let n = rng.usize(1..=4);
            for _ in 0..n {
                let spots: usize = bytes.iter().filter(|b| b.is_ascii_alphanumeric()).count();
                let k = below(rng, spots);
                if let Some(b) = bytes
                    .iter_mut()
                    .filter(|b| b.is_ascii_alphanumeric())
                    .nth(k)
                {
                    *b = rng.alphanumeric() as u8;
                }
            }
            format!("{n} letters or digits changed")
        }
        13 if !pool.is_empty() => edit_lines(rng, bytes, |rng, lines| {
            let i = below(rng, lines.len() + 1);
            lines.insert(i, pool[below(rng, pool.len())].clone());
            format!("a line of another file at {}", i + 1)
        }),
        _ => edit_lines(rng, bytes, |rng, lines| {
            let i = below(rng, lines.len());
            let cut = below(rng, lines[i].len() + 1);
            lines[i].truncate(cut);
            format!("line {} cut at byte {cut}", i + 1)
        }),
    }
}

/// Edits the file's lines (split at `\n`; the last one may be empty).
fn edit_lines(
    rng: &mut Rng,
    bytes: &mut Vec<u8>,
    edit: impl FnOnce(&mut Rng, &mut Vec<Vec<u8>>) -> String,
) -> String {
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let what = edit(rng, &mut lines);
    *bytes = lines.join(&b'\n');
    what
}

/// Huge repetition, bounded: a line repeated many times, or a piece of a line repeated until
/// the line outgrows a reader's buffer.
fn repeat(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    const BUDGET: usize = 320 * 1024;
    edit_lines(rng, bytes, |rng, lines| {
        let i = below(rng, lines.len());
        if rng.bool() {
            let times = (BUDGET / (lines[i].len() + 1)).clamp(1, 2000);
            let line = lines[i].clone();
            for _ in 0..times {
                lines.insert(i, line.clone());
            }
            format!("line {} repeated {times} times", i + 1)
        } else {
            let line = &mut lines[i];
            let start = below(rng, line.len());
            let end = (start + rng.usize(1..=64)).min(line.len());
            let piece = line[start..end].to_vec();
            if piece.is_empty() {
                line.resize(BUDGET, b'a');
            } else {
                let times = BUDGET / piece.len();
                let grown: Vec<u8> = piece.repeat(times);
                line.splice(end..end, grown);
            }
            format!("line {} grown to {} bytes", i + 1, line.len())
        }
    })
}

/// Runs `f` with every parallel map in it on the calling thread, its items in order: where what
/// a search spares depends on which session finished first, a test of it is then the same on
/// every run.
pub fn on_one_core<R>(f: impl FnOnce() -> R) -> R {
    crate::corpus::parallel::working(f)
}
