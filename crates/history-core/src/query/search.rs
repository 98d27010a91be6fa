//! The wildcard search: hits from every selected session, merged by event time.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::choose::Filter;
use crate::corpus::parallel::{map, ordered_map, workers};
use crate::corpus::{Corpus, Keep, Loaded, Texts};
use crate::error::HistoryError;
use crate::model::Timestamp;
use crate::model::{order_key, Bound, End, OrderKey};
use crate::model::{Event, SessionFile, SessionKey, SessionMeta};
use crate::query::{HitOrder, HitTexts, Known, Projection, SessionHits, Wanted};
use crate::source::Location;
use crate::source::{LineTest, LineTime, READ_BUFFER};
use history_raw::RawFilter;

/// An event together with the session it belongs to.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hit {
    /// The session.
    pub session: SessionKey,
    /// The session's transcript file.
    pub path: PathBuf,
    /// The event.
    pub event: Event,
    /// What the session's transcript says of it (working directory, branch, title).
    #[serde(default)]
    pub meta: SessionMeta,
    /// Where the event's line is in `path`, when the search already knows (a projection that
    /// read it by its byte range).
    #[serde(skip)]
    pub location: Option<Location>,
    /// For an overview's representative: how many events its session has that the overview's
    /// filter admits.
    #[serde(skip)]
    pub session_events: Option<usize>,
    /// For an overview's representative: the time of its session's latest event that the
    /// overview's filter admits.
    #[serde(skip)]
    pub last_activity: Option<Timestamp>,
}

impl Hit {
    /// The merge order: untimed first, then by time, qualified id, seq and part.
    pub fn order_key(&self) -> OrderKey<'_> {
        order_key(
            self.event.timestamp,
            &self.session,
            self.event.seq,
            self.event.part,
        )
    }
}

/// Hits from many sessions, oldest first.
#[derive(Debug, Default)]
pub struct Listing {
    /// The items, oldest first.
    pub items: Vec<Hit>,
    /// Whether more lies beyond the oldest item.
    pub has_older: bool,
    /// Whether more lies beyond the newest item.
    pub has_newer: bool,
    /// Sessions that could not be loaded and were skipped.
    pub skipped: Vec<HistoryError>,
    /// How many sessions could hold a hit, as far as the raw bytes tell.
    pub candidates: usize,
    /// How many of them were decoded.
    pub decoded: usize,
    /// How many sessions a search projection answered for without their files being read.
    pub from_index: usize,
    /// How many sessions were read to find out.
    pub scanned: usize,
    /// How many of those the projection cannot take in: updating it would not spare reading them.
    pub unindexable: usize,
    /// How many sessions it answered for had been appended to since it took them in: updating
    /// it would spare reading the appended lines.
    pub appended: usize,
    /// For an overview: how many sessions, in the order they were taken, it visited (the
    /// page's representatives came from them; the rest lie beyond it).
    pub visited: usize,
}

/// What a search asks for.
pub struct SearchRequest<'a> {
    /// Queries (an OR), roles and time window.
    pub filter: &'a Filter,
    /// How many hits at most, counted from `from`.
    pub limit: usize,
    /// The end `limit` counts from.
    pub from: End,
    /// Search every branch of branched sessions, not only the selected one.
    pub all_branches: bool,
    /// Skip sessions whose raw bytes cannot hold a hit, and let decoders skip such lines
    /// ([`Corpus::may_match`], [`crate::Transcript::decode`]).
    pub raw_prefilter: bool,
    /// A search projection: what it knows of each session spares reading it, and the hits of
    /// a session it knows are read from the lines it locates.
    pub projection: Option<&'a dyn Projection>,
    /// Only hits on one side of a place in the merge order: the page goes on from there.
    pub bound: Option<Bound<'a>>,
    /// The times of a session's earliest and latest events, where they are known without
    /// reading the session: they bound its hits', so that a page need not read a session whose
    /// hits cannot reach it ([`Search::beaten`]).
    pub activity: Option<&'a SessionActivity<'a>>,
}

/// The times of the events of a session's selected branch, where something knows them without
/// reading the session's files as they are now (the overview's cache): the earliest (`None`
/// when one has no time, or none has one) and the latest (`None` when none has a time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    /// The earliest event's time.
    pub earliest: Option<Timestamp>,
    /// The latest event's time.
    pub latest: Option<Timestamp>,
}

/// What tells a session's [`Activity`], where it is known.
pub type SessionActivity<'a> = dyn Fn(&SessionFile) -> Option<Activity> + Sync + 'a;

/// Searches `sessions` for events passing the request's filter, decoding them on every core.
///
/// With the raw prefilter, only the sessions that can hold one of the `limit` hits wanted are
/// decoded. The sessions listed first (last, `from` oldest) are decoded at once; every other
/// session's raw lines are scanned for the candidates, whose times ([`crate::Transcript::line_time`])
/// bound the times of its hits. Those sessions are then decoded from the most promising bound on,
/// until `limit` hits and one more are in hand and no bound left can beat them.
pub fn search(corpus: &Corpus, sessions: &[SessionFile], req: &SearchRequest<'_>) -> Listing {
    let raw =
        (req.raw_prefilter && req.filter.is_search()).then(|| RawFilter::new(req.filter.queries()));
    let search = Search {
        corpus,
        sessions,
        req,
        raw: raw.as_ref(),
        known: req
            .projection
            .map(|p| p.known(corpus, sessions, req.filter)),
        // A session can contribute at most `limit` hits, and one more tells there are others.
        want: req.limit.saturating_add(1),
        eager_ranks: Mutex::new(Vec::new()),
        reached: Mutex::new(None),
    };
    let mut found = HitsSoFar {
        limit: req.limit,
        from: req.from,
        hits: Vec::new(),
        total: 0,
        skipped: Vec::new(),
        candidates: 0,
        decoded: 0,
        from_index: 0,
        unindexable: 0,
        appended: 0,
        sessions: sessions.len(),
    };
    // The sessions modified last (first, from the oldest) most likely hold the hits wanted.
    let w = workers().min(sessions.len());
    let eager = match req.from {
        End::Newest => 0..w,
        End::Oldest => sessions.len() - w..sessions.len(),
    };
    // Where the sessions' activity may spare reading files the eager sessions' hits beat
    // ([`Search::beaten`]), the eager sessions go first and those files after the others, the
    // ones nearest the page's end last: by the time they come, the eager sessions have told. On
    // the 1 GiB bench corpus, with the overview's cache as its page leaves it, `git status` took
    // 246–260 ms, against 270 ms in the order of the sessions; a frequent word from the oldest
    // end 185–191 ms, against 207–210 ms with the newest (and largest) session last.
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    if search.bounded() {
        order.sort_by_key(|&i| {
            let big = sessions[i].size >= UNREAD_BYTES;
            let nearest_last = match (big, req.from) {
                (false, _) => 0,
                (true, End::Newest) => sessions.len() - i,
                (true, End::Oldest) => i,
            };
            (!eager.contains(&i), big, nearest_last)
        });
    }
    // What the projection answers alone takes no work: only the rest is shared out among the
    // cores, and none when there is none (a thread's start costs more than a rare term's page).
    let (answered, work): (Vec<usize>, Vec<usize>) =
        (order.iter()).partition(|&&i| search.answered(i, eager.contains(&i)));
    let first_pass = |&i: &usize| (i, search.first_pass(i, eager.contains(&i)));
    let mut scans: Vec<(usize, Scan)> = answered.iter().map(first_pass).collect();
    scans.extend(map(&work, first_pass));
    scans.sort_by_key(|&(i, _)| i);
    search.count_known(&mut found);
    let mut later: Vec<(Span, usize)> = Vec::new();
    for (i, scan) in scans {
        match scan {
            Scan::Decoded(result) => found.add(&sessions[i], *result),
            Scan::Later(span) => later.push((span, i)),
            Scan::Out => continue,
        }
        found.candidates += 1;
    }
    match req.from {
        End::Newest => later.sort_by_key(|(span, _)| std::cmp::Reverse(span.last)),
        End::Oldest => later.sort_by_key(|(span, _)| span.first),
    }
    let mut next = 1;
    ordered_map(
        &later,
        |&(_, i)| search.decode(i),
        |&(_, i), result| {
            found.add(&sessions[i], result);
            let done = later.get(next).is_none_or(|(span, _)| found.beats(span));
            next += 1;
            !done
        },
    );
    found.listing()
}

/// One search under way: its request, and what the prefilter and the projection tell of each
/// session.
struct Search<'a> {
    corpus: &'a Corpus,
    sessions: &'a [SessionFile],
    req: &'a SearchRequest<'a>,
    raw: Option<&'a RawFilter>,
    known: Option<Vec<Known>>,
    /// How many hits a session can contribute, and one more.
    want: usize,
    /// The ranks of the eager sessions' hits ([`Search::noted`]).
    eager_ranks: Mutex<Vec<Rank>>,
    /// A rank that every hit on the page reaches from its end, once the eager sessions tell one.
    reached: Mutex<Option<Rank>>,
}

impl Search<'_> {
    /// What the projection knows of session `i`.
    fn known(&self, i: usize) -> Option<Known> {
        self.known.as_ref().and_then(|k| k.get(i)).copied()
    }

    /// Whether the projection's answer for session `i` is its first pass ([`Search::first_pass`]
    /// then reads nothing).
    fn answered(&self, i: usize, eager: bool) -> bool {
        match self.known(i) {
            Some(Known::NoHit) => true,
            Some(Known::Within { .. }) => !eager,
            Some(Known::Unknown | Known::Unindexable) | None => false,
        }
    }

    /// The first pass over session `i`: out, decoded now (`eager`, or known to the projection
    /// and eager), or left for later with the span its hits' times can have.
    fn first_pass(&self, i: usize, eager: bool) -> Scan {
        let file = &self.sessions[i];
        match self.known(i) {
            Some(Known::NoHit) => return Scan::Out,
            Some(Known::Within { first, last, .. }) if !eager => {
                return Scan::Later(Span {
                    first: first.map(|t| t.0),
                    last: last.map(|t| t.0),
                })
            }
            Some(Known::Within { .. }) => return Scan::Decoded(Box::new(self.decode(i))),
            Some(Known::Unknown | Known::Unindexable) | None => {}
        }
        let Some(raw) = self.raw else {
            return Scan::Decoded(Box::new(self.decode(i)));
        };
        if eager {
            return match self.corpus.may_match(file, raw) {
                true => Scan::Decoded(Box::new(self.noted(self.decode(i)))),
                false => Scan::Out,
            };
        }
        if self.beaten(file) {
            return Scan::Out;
        }
        match hit_span(self.corpus, file, raw) {
            Some(span) => Scan::Later(span),
            None => Scan::Out,
        }
    }

    /// Whether the sessions' activity can tell which cannot reach the page once the eager
    /// sessions found hits ([`Search::beaten`]): of the selected branches, which it is of.
    fn bounded(&self) -> bool {
        self.req.activity.is_some() && !self.req.all_branches
    }

    /// Notes the ranks of an eager session's hits; once there are more than `limit`, the
    /// `limit`-th of them from the page's end is a rank that every hit on the page reaches, and
    /// there is more beyond the page: a session whose hits all lie beyond it can add nothing
    /// ([`HitsSoFar::beats`]).
    fn noted(
        &self,
        result: Result<SessionHits, HistoryError>,
    ) -> Result<SessionHits, HistoryError> {
        let limit = self.req.limit;
        if let (Ok((events, _)), true) = (&result, self.bounded() && limit > 0) {
            let ranks = events.iter().map(|(e, _)| e.timestamp.map(|t| t.0));
            if let (Ok(mut page), Ok(mut reached)) = (self.eager_ranks.lock(), self.reached.lock())
            {
                page.extend(ranks);
                if page.len() > limit {
                    let (at, further): (usize, fn(Rank, Rank) -> Rank) = match self.req.from {
                        End::Newest => (page.len() - limit, std::cmp::max),
                        End::Oldest => (limit - 1, std::cmp::min),
                    };
                    let kth = *page.select_nth_unstable(at).1;
                    *reached = Some(reached.map_or(kth, |r| further(r, kth)));
                }
            }
        }
        result
    }

    /// Whether no hit of `file` can reach the page, as the hits of the eager sessions and
    /// [`SearchRequest::activity`] tell: its selected branch's latest event comes before the
    /// rank every hit on a page from the newest end reaches (its earliest, after it from the
    /// oldest). Only a file of [`UNREAD_BYTES`] or more is looked up.
    fn beaten(&self, file: &SessionFile) -> bool {
        let reached = self.reached.lock().ok().and_then(|r| *r);
        let activity = self
            .req
            .activity
            .filter(|_| self.bounded() && file.size >= UNREAD_BYTES);
        let (Some(reached), Some(activity)) = (reached, activity) else {
            return false;
        };
        let rank = |t: Option<Timestamp>| t.map(|t| t.0);
        activity(file).is_some_and(|a| match self.req.from {
            End::Newest => rank(a.latest) < reached,
            End::Oldest => rank(a.earliest) > reached,
        })
    }

    /// Counts the sessions the projection answered for, could not take in, and took in before
    /// an append.
    fn count_known(&self, found: &mut HitsSoFar) {
        let all = 0..self.sessions.len();
        let from_index = |k: Known| !matches!(k, Known::Unknown | Known::Unindexable);
        found.from_index = all
            .clone()
            .filter(|&i| self.known(i).is_some_and(from_index))
            .count();
        found.unindexable = all
            .clone()
            .filter(|&i| self.known(i) == Some(Known::Unindexable))
            .count();
        found.appended = all
            .filter(|&i| matches!(self.known(i), Some(Known::Within { appended: true, .. })))
            .count();
    }

    /// The hits of session `i` that can be on the page: from the projection's located lines
    /// when it can tell, else decoded (a large session from its candidates nearest the page's
    /// end first).
    fn decode(&self, i: usize) -> Result<SessionHits, HistoryError> {
        let SearchRequest {
            filter,
            from,
            all_branches,
            ..
        } = *self.req;
        let (corpus, file, raw, want) = (self.corpus, &self.sessions[i], self.raw, self.want);
        let admit = |e: &Event| self.req.bound.is_none_or(|b| b.admits(&file.key, e));
        if let (Some(Known::Within { .. }), Some(p)) = (self.known(i), self.req.projection) {
            let wanted = Wanted {
                filter,
                admit: &admit,
                from,
                count: want,
                all_branches,
                texts: HitTexts::Kept,
                order: HitOrder::Merge,
            };
            if let Some(hits) = p.hits(corpus, file, &wanted) {
                return hits;
            }
        }
        let keep = |e: &Event| match filter.matches(e) && admit(e) {
            true => Keep::Full,
            false => Keep::Drop,
        };
        let test = |line: &[u8]| raw.is_none_or(|r| r.may_match_slice(line));
        let line_test: Option<LineTest<'_>> = raw
            .filter(|r| !r.passes_everything())
            .map(|_| &test as LineTest<'_>);
        let texts = Texts::page(from, want);
        let hits = |mut loaded: Loaded| -> Result<SessionHits, HistoryError> {
            loaded.events.sort_by_key(merge_order);
            let wanted = share(loaded.events.len(), from, want);
            corpus.refill(file, &loaded.textless, &mut loaded.events[wanted])?;
            let events = loaded.events.into_iter().map(|e| (e, None)).collect();
            Ok((events, loaded.meta))
        };
        // A large session: only the candidate lines that can still be among the nearest to
        // `from`'s end as it streams by, every line still read for its structure.
        if let Some(nearest) = raw.and_then(|r| Nearest::of(corpus, file, r, from, want)) {
            let near = |line: &[u8]| test(line) && nearest.offer(line);
            let loaded = corpus.load_within(file, &keep, all_branches, Some(&near), Some(texts))?;
            if nearest.complete(&loaded.events, want) {
                return hits(loaded);
            }
        }
        hits(corpus.load_within(file, &keep, all_branches, line_test, Some(texts))?)
    }
}

/// What the first pass over a session found.
enum Scan {
    /// It cannot hold a hit.
    Out,
    /// It was decoded (boxed: on 20,000 sessions the rest, a few bytes each, are most).
    Decoded(Box<Result<SessionHits, HistoryError>>),
    /// Its hits, if any, lie within this span: decode it if that can matter.
    Later(Span),
}

/// The size from which a session is left unread when its activity tells that it cannot reach the
/// page ([`Search::beaten`]): below it, reading the overview cache's entry costs about what
/// scanning the file does.
const UNREAD_BYTES: u64 = 128 << 10;

/// An event's rank in the merge order by time alone: untimed events (`None`) first.
pub(crate) type Rank = Option<i64>;

/// The earliest and the latest rank a session's hits can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) first: Rank,
    pub(crate) last: Rank,
}

impl Span {
    /// Any rank at all.
    pub(crate) const ANY: Span = Span {
        first: None,
        last: Some(i64::MAX),
    };

    pub(crate) fn of(time: LineTime) -> Span {
        match time {
            LineTime::Unknown => Span::ANY,
            LineTime::Untimed => Span {
                first: None,
                last: None,
            },
            LineTime::At(t) => Span {
                first: Some(t.0),
                last: Some(t.0),
            },
            LineTime::AtMost(t) => Span {
                first: None,
                last: Some(t.0),
            },
        }
    }

    pub(crate) fn cover(self, other: Span) -> Span {
        Span {
            first: self.first.min(other.first),
            last: self.last.max(other.last),
        }
    }

    /// Whether an event of this rank lies within the span.
    #[cfg(feature = "testing")]
    pub(crate) fn covers(&self, rank: Rank) -> bool {
        self.first <= rank && rank <= self.last
    }
}

/// The span of a session's hits, from the raw lines of its file and ancestors that can hold
/// one; `None` when no line can. Anything unreadable spans every time (decoding will report it).
pub(crate) fn hit_span(corpus: &Corpus, file: &SessionFile, raw: &RawFilter) -> Option<Span> {
    let Some(source) = corpus.source(&file.key.harness) else {
        return Some(Span::ANY);
    };
    if raw.passes_everything() || source.layout() == crate::source::Layout::Records {
        return Some(Span::ANY);
    }
    let mut span: Option<Span> = None;
    for path in source.lineage(file) {
        let mut add = |line: &[u8]| {
            let s = Span::of(source.line_time(line));
            span = Some(span.map_or(s, |span| span.cover(s)));
        };
        let scanned = crate::source::open_raw(source, &path)
            .and_then(|reader| raw.candidate_lines(reader, &mut add));
        if scanned.is_err() {
            return Some(Span::ANY);
        }
    }
    span
}

/// The size from which a session's candidate lines are decoded only while they can be among
/// the nearest to the page's end: below it, a second decode costs little.
const CUTOFF_BYTES: u64 = 16 << 20;

/// A line test for a session of [`CUTOFF_BYTES`] or more read from its own file, keeping, as its
/// lines stream by, the ranks of the `2 × want` candidate lines that reach furthest towards
/// `from`'s end: a line is decoded only if it is among them when it comes. The furthest rank
/// left out only grows, so every line that reaches past the last one left out was decoded, and
/// when `want` of the events decoded lie there, no other line can hold a better one.
///
/// From the newest end, lines come mostly in the order of their times, each nearer than those
/// before: the candidate lines of the file's last [`TAIL_SHARE`] are first ranked alone, and a
/// line that cannot reach as far as `2 × want` of them is left out from the start.
struct Nearest<'a> {
    source: &'a dyn crate::source::Transcript,
    from: End,
    keep: usize,
    /// The reach below which a line is left out whatever comes before it.
    floor: Option<i128>,
    /// The kept lines' [`Nearest::reach`] (the nearest on top), and whether one was left out.
    best: std::sync::Mutex<(std::collections::BinaryHeap<std::cmp::Reverse<i128>>, bool)>,
}

/// The share of a large session's file (one part in this many) whose candidate lines are ranked
/// before it is decoded from the newest end.
const TAIL_SHARE: u64 = 8;

impl<'a> Nearest<'a> {
    fn of(
        corpus: &'a Corpus,
        file: &SessionFile,
        raw: &RawFilter,
        from: End,
        want: usize,
    ) -> Option<Nearest<'a>> {
        if file.size < CUTOFF_BYTES || raw.passes_everything() {
            return None;
        }
        let source = corpus.source(&file.key.harness)?;
        if source.layout() == crate::source::Layout::Records {
            return None;
        }
        let [path] = &source.lineage(file)[..] else {
            return None;
        };
        // A page of thousands gains little: most lines are decoded anyway.
        let keep = want.checked_mul(2).filter(|&k| k <= 4096)?;
        let nearest = |floor| Nearest {
            source,
            from,
            keep,
            floor,
            best: std::sync::Mutex::new(Default::default()),
        };
        if from == End::Oldest {
            return Some(nearest(None));
        }
        let tail = nearest(None);
        let start = file.size - file.size / TAIL_SHARE;
        let lines = Tail {
            source,
            path,
            at: start,
            end: file.size,
            started: false,
        };
        let ranked = raw.candidate_lines(lines, |line| {
            tail.offer(line);
        });
        let (heap, _) = tail.best.into_inner().unwrap_or_else(|e| e.into_inner());
        let floor = heap.peek().filter(|_| ranked.is_ok() && heap.len() == keep);
        Some(nearest(floor.map(|r| r.0)))
    }

    /// How far towards `from`'s end events within `span` can reach: greater is further.
    fn reach(&self, span: Span) -> i128 {
        let rank = |r: Rank| r.map_or(i128::from(i64::MIN) - 1, i128::from);
        match self.from {
            End::Newest => rank(span.last),
            End::Oldest => -rank(span.first),
        }
    }

    /// Whether a candidate line is among the nearest so far, taking it in if so.
    fn offer(&self, line: &[u8]) -> bool {
        let reach = self.reach(Span::of(self.source.line_time(line)));
        let mut best = self.best.lock().unwrap_or_else(|e| e.into_inner());
        let (heap, left_out) = &mut *best;
        let nearest = heap.peek().filter(|_| heap.len() == self.keep).map(|r| r.0);
        if self.floor.max(nearest).is_some_and(|cut| reach < cut) {
            *left_out = true;
            return false;
        }
        if nearest.is_some() {
            heap.pop();
        }
        heap.push(std::cmp::Reverse(reach));
        true
    }

    /// Whether `events`, decoded from the lines offered, hold the session's `want` nearest hits:
    /// no candidate line was left out, or `want` of them reach as far as the nearest kept.
    fn complete(&self, events: &[Event], want: usize) -> bool {
        let best = self.best.lock().unwrap_or_else(|e| e.into_inner());
        let (heap, left_out) = &*best;
        if !left_out {
            return true;
        }
        let nearest = heap.peek().filter(|_| heap.len() == self.keep).map(|r| r.0);
        let cut = self.floor.max(nearest);
        let at = |e: &Event| Span::of(LineTime::of(e.timestamp));
        events
            .iter()
            .filter(|e| cut.is_none_or(|c| self.reach(at(e)) >= c))
            .count()
            >= want
    }
}

/// The lines of a file from the first that starts after `at` up to `end`, read through
/// [`crate::source::Transcript::read_at`]; an error where the source cannot read them so.
struct Tail<'a> {
    source: &'a dyn crate::source::Transcript,
    path: &'a std::path::Path,
    at: u64,
    end: u64,
    /// Whether the line `at` was in when it began is behind.
    started: bool,
}

impl std::io::Read for Tail<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let len = (self.end - self.at).min(buf.len().min(READ_BUFFER) as u64) as usize;
            if len == 0 {
                return Ok(0);
            }
            let bytes = self
                .source
                .read_at(self.path, self.at, len)
                .ok_or(std::io::ErrorKind::Unsupported)??;
            self.at += len as u64;
            let skip = match self.started {
                true => 0,
                false => match memchr::memchr(b'\n', &bytes) {
                    Some(i) => i + 1,
                    None => continue,
                },
            };
            self.started = true;
            buf[..len - skip].copy_from_slice(&bytes[skip..]);
            if len > skip {
                return Ok(len - skip);
            }
        }
    }
}

/// A session's events in the merge order, as far as one session can tell it.
fn merge_order(e: &Event) -> (Option<Timestamp>, u64, u32) {
    (e.timestamp, e.seq, e.part)
}

/// The range of `count` items at the `from` end of `n` in merge order.
fn share(n: usize, from: End, count: usize) -> std::ops::Range<usize> {
    match from {
        End::Newest => n.saturating_sub(count)..n,
        End::Oldest => 0..count.min(n),
    }
}

/// The hits gathered so far.
struct HitsSoFar {
    limit: usize,
    from: End,
    hits: Vec<Hit>,
    /// Every hit decoded, including those a session had beyond `limit`.
    total: usize,
    skipped: Vec<HistoryError>,
    candidates: usize,
    decoded: usize,
    from_index: usize,
    unindexable: usize,
    appended: usize,
    sessions: usize,
}

impl HitsSoFar {
    fn add(&mut self, file: &SessionFile, result: Result<SessionHits, HistoryError>) {
        self.decoded += 1;
        match result {
            Ok((mut events, meta)) => {
                self.total += events.len();
                // A session can contribute at most `limit` items from the chosen end of the
                // merge order (which its seq order need not follow: untimed events go first).
                events.sort_by_key(|(e, _)| merge_order(e));
                let range = share(events.len(), self.from, self.limit);
                self.hits
                    .extend(events.drain(range).map(|(event, location)| Hit {
                        session: file.key.clone(),
                        path: file.path.clone(),
                        event,
                        meta: meta.clone(),
                        location,
                        session_events: None,
                        last_activity: None,
                    }));
                // Only the best `limit` + 1 can matter (the page, and whether there is more):
                // the others go, so that what is held does not grow with the sessions read.
                let best = self.limit.saturating_add(1);
                if self.hits.len() > best.saturating_mul(4) {
                    self.hits.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
                    let keep = share(self.hits.len(), self.from, best);
                    self.hits.drain(keep.end..);
                    self.hits.drain(..keep.start);
                }
            }
            Err(e) => self.skipped.push(e),
        }
    }

    /// Whether the result is settled before a session whose hits lie within `span`: more than
    /// `limit` hits are in hand (so there is more beyond the page whatever else is found) and
    /// every hit of that session would fall beyond the page.
    fn beats(&self, span: &Span) -> bool {
        if self.hits.len() <= self.limit {
            return false;
        }
        if self.limit == 0 {
            return true;
        }
        let mut ranks: Vec<Rank> = self
            .hits
            .iter()
            .map(|h| h.event.timestamp.map(|t| t.0))
            .collect();
        match self.from {
            End::Newest => {
                let at = ranks.len() - self.limit;
                let (_, kth, _) = ranks.select_nth_unstable(at);
                span.last < *kth
            }
            End::Oldest => {
                let (_, kth, _) = ranks.select_nth_unstable(self.limit - 1);
                span.first > *kth
            }
        }
    }

    fn listing(mut self) -> Listing {
        let mut hits = std::mem::take(&mut self.hits);
        hits.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
        let n = hits.len();
        let take = self.limit.min(n);
        let mut listing = Listing {
            skipped: self.skipped,
            candidates: self.candidates,
            decoded: self.decoded,
            from_index: self.from_index,
            scanned: self.sessions - self.from_index,
            unindexable: self.unindexable,
            appended: self.appended,
            ..Listing::default()
        };
        match self.from {
            End::Newest => {
                hits.drain(..n - take);
                listing.has_older = self.total > take;
            }
            End::Oldest => {
                hits.truncate(take);
                listing.has_newer = self.total > take;
            }
        }
        listing.items = hits;
        listing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines `at N` and `by N` (at or before N seconds), for [`Nearest`].
    struct Timed;

    impl crate::source::Transcript for Timed {
        fn harness(&self) -> &str {
            "timed"
        }
        fn discover(&self) -> Vec<SessionFile> {
            Vec::new()
        }
        fn decode(
            &self,
            _: &SessionFile,
            _: &mut dyn FnMut(Event),
            _: Option<LineTest<'_>>,
        ) -> Result<crate::Decoded, crate::DecodeError> {
            Ok(crate::Decoded::default())
        }
        fn line_time(&self, line: &[u8]) -> LineTime {
            let text = std::str::from_utf8(line).unwrap();
            let (how, n) = text.split_once(' ').unwrap();
            let t = Timestamp(n.parse::<i64>().unwrap() * 1_000_000_000);
            match how {
                "at" => LineTime::At(t),
                _ => LineTime::AtMost(t),
            }
        }
    }

    #[test]
    fn the_nearest_lines_are_decoded_and_tell_when_they_hold_the_page() {
        let event = |secs: i64| Event {
            seq: 1,
            part: 0,
            role: crate::Role::User,
            kind: "message".into(),
            timestamp: Some(Timestamp(secs * 1_000_000_000)),
            text: String::new(),
            visible: true,
            tool: None,
            on_active_branch: None,
        };
        let nearest = |from, floor: Option<i64>| Nearest {
            source: &Timed,
            from,
            keep: 2,
            floor: floor.map(|f| i128::from(f * 1_000_000_000)),
            best: std::sync::Mutex::new(Default::default()),
        };
        let offered = |n: &Nearest<'_>, lines: &[&str]| -> Vec<bool> {
            lines.iter().map(|l| n.offer(l.as_bytes())).collect()
        };
        // From the newest end: each line nearer than those before it is decoded.
        let n = nearest(End::Newest, None);
        assert_eq!(
            offered(&n, &["at 1", "at 3", "at 4", "at 2", "at 1"]),
            [true, true, true, false, false]
        );
        assert!(
            n.complete(&[event(3), event(4)], 1),
            "1 and 2 cannot beat 3 and 4"
        );
        assert!(!n.complete(&[event(4)], 2), "the line at 3 yielded nothing");
        // From the oldest end, the same the other way.
        let o = nearest(End::Oldest, None);
        assert_eq!(
            offered(&o, &["at 3", "at 4", "at 5", "at 1", "at 6"]),
            [true, true, false, true, false]
        );
        assert!(o.complete(&[event(1), event(3)], 2));
        // Nothing left out: whatever was decoded is all there is.
        let all = nearest(End::Newest, None);
        assert_eq!(offered(&all, &["at 1", "at 2"]), [true, true]);
        assert!(all.complete(&[], 1));
        // A floor from the file's tail leaves out the lines below it at once, and what was
        // decoded above it holds the page only where its events lie above it too: the line
        // left out (at 50) beats events a line above the floor gave at 10 and 20.
        let f = nearest(End::Newest, Some(100));
        assert!(f.offer(b"by 200"));
        assert!(!f.offer(b"at 50"));
        assert!(!f.complete(&[event(10), event(20)], 2));
        assert!(f.complete(&[event(150), event(120)], 2));
    }

    #[test]
    fn a_tail_begins_at_the_first_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "at 1\nat 2\nat 3\n").unwrap();
        let read = |at: u64, end: u64| {
            let mut tail = Tail {
                source: &Timed,
                path: &path,
                at,
                end,
                started: false,
            };
            let mut text = String::new();
            std::io::Read::read_to_string(&mut tail, &mut text).map(|_| text)
        };
        assert_eq!(
            read(0, 15).unwrap(),
            "at 2\nat 3\n",
            "the first line may be cut"
        );
        assert_eq!(read(6, 15).unwrap(), "at 3\n");
        assert_eq!(
            read(4, 10).unwrap(),
            "at 2\n",
            "up to the size discovery saw"
        );
        assert_eq!(read(11, 15).unwrap(), "");
        assert!(read(0, 99).is_err(), "a file shorter than its size");
    }
}
