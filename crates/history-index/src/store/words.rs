//! Word lists: what `find` ranks by, kept beside the trigram lists in the same segments, so
//! that a question is answered from them without reading a transcript but for the snippets its
//! page shows.
//!
//! A line's events are cut into terms as `find` cuts them ([`history_core::for_each_term`]);
//! each segment keeps, per term (known by a 64-bit hash of it, never its text), the events that
//! hold it with how often, and each such event's role, length in words, line and time.
//!
//! An event's id is its line's id × [`PARTS`] + its part. The rows of table `words` are keyed
//! `segment << 32 | slot`:
//!
//! - slot [`HEAD`]: how many buckets the segment has (a power of two) and how many terms, the
//!   first event id of each chunk, and the lines with an event whose part is past [`PARTS`]
//!   (whose words are listed nowhere: their sessions are read instead);
//! - slots `0..buckets`: a bucket, the terms whose hash's high half falls in it, in hash order,
//!   each with its events, each as how many lines on from the last it is and how often it holds
//!   the term ([`put_pair`]);
//! - slots [`CHUNK`] + c: the c-th run of [`CHUNK_EVENTS`] events that hold a term, in id order.
//!
//! Every row a head names exists, each sealed with its key: a missing row is damage, never an
//! absence.

use history_core::{for_each_term, Counted, CountedEvent, Role, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::FxHashMap;

use super::sum;
use crate::varint;

/// How many parts of a line an event id has room for.
pub const PARTS: u64 = 64;

/// The slot of a segment's head row.
const HEAD: i64 = 0xffff_ffff;

/// The first slot of a segment's chunks of events.
const CHUNK: i64 = 0x8000_0000;

/// How many events a chunk holds.
const CHUNK_EVENTS: usize = 4096;

/// How hard a row is compressed (zstd): the varints of the pairs take a sixth less.
const LEVEL: i32 = 3;

/// How many terms a bucket holds on average, at most.
const BUCKET_TERMS: usize = 16;

/// The hash a term is known by.
pub fn term_hash(term: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(term.as_bytes())
}

/// One event that holds a term, as its segment keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WordEvent {
    /// Its id: its line's id × [`PARTS`] + its part.
    pub id: u64,
    /// Its line's seq.
    pub seq: u64,
    /// Its role.
    pub role: Role,
    /// Its length in words ([`history_core::for_each_term`]).
    pub words: u32,
    /// When it happened.
    pub timestamp: Option<Timestamp>,
}

/// The session asked about that a line is of, if any, and the last line of the same answer
/// (its range of lines); an error when the line is of none.
pub(super) type SessionOf<'a> = dyn Fn(u64) -> rusqlite::Result<(Option<usize>, u64)> + Sync + 'a;

/// A chunk of events to count ([`count_chunk`]).
struct ToCount<'l> {
    /// Its first event's id.
    start: u64,
    /// Its segment's lists of the terms.
    lists: &'l [Vec<(u64, u32)>],
    /// Where each term's pairs of the chunk's events are in its list.
    pairs: Vec<std::ops::Range<usize>>,
    /// Its row's key, and the row as stored.
    key: i64,
    row: Vec<u8>,
}

/// Adds to `out` (by session, `None` for one not asked about) the events of every segment
/// (`segments`, in id order) that hold one of the terms of `hashes` ([`term_hash`]), each with
/// how often it holds each term, in id order: those of the lines `skip` does not leave out (two
/// ascending lists), of the session `session_of` names. A session one of whose lines has an
/// event whose words are listed nowhere ([`PARTS`]) becomes `None`. Read a segment at a time:
/// its lists of those terms, then the rows of the chunks that hold their events, decoded on
/// every core.
pub(super) fn counted(
    conn: &Connection,
    segments: &[i64],
    hashes: &[u64],
    (skip, session_of): ([&[u64]; 2], &SessionOf<'_>),
    out: &mut [Option<Counted>],
) -> rusqlite::Result<()> {
    let terms = hashes.len();
    let mut overflowed = Vec::new();
    for &segment in segments {
        let head = read_head(conn, segment)?;
        for &line in &head.overflow {
            overflowed.extend(session_of(line)?.0);
        }
        // Each term's (event, count) pairs in the segment, in event order: the rows of their
        // buckets read, then each term's decoded on every core.
        let mut rows: FxHashMap<i64, Vec<u8>> = FxHashMap::default();
        for &hash in hashes {
            let key = segment << 32 | bucket(hash, head.buckets) as i64;
            if let std::collections::hash_map::Entry::Vacant(row) = rows.entry(key) {
                row.insert(sealed_row(conn, key)?);
            }
        }
        let list = |hash: &u64| -> rusqlite::Result<Vec<(u64, u32)>> {
            let key = segment << 32 | bucket(*hash, head.buckets) as i64;
            let (count, bytes) = unpack(key, &rows[&key])?;
            let mut list = Vec::new();
            for e in entries(&bytes, count)?.iter().filter(|e| e.hash == *hash) {
                list.reserve(e.n as usize);
                self::pairs(e, |id, n| list.push((id, n)))?;
            }
            Ok(list)
        };
        let lists = (history_core::parallel::map(hashes, list).into_iter())
            .collect::<rusqlite::Result<Vec<_>>>()?;
        drop(rows);
        // A pair before the first chunk is among none: damage.
        let first = head.chunks.first().copied().unwrap_or(u64::MAX);
        sum::whole(lists.iter().all(|l| l.first().is_none_or(|p| p.0 >= first)))?;
        let mut chunks = Vec::new();
        for (c, &start) in head.chunks.iter().enumerate() {
            let end = head.chunks.get(c + 1).copied().unwrap_or(u64::MAX);
            let within = |l: &Vec<(u64, u32)>| {
                l.partition_point(|p| p.0 < start)..l.partition_point(|p| p.0 < end)
            };
            let pairs: Vec<_> = lists.iter().map(within).collect();
            if pairs.iter().all(|p| p.is_empty()) {
                continue;
            }
            let key = segment << 32 | (CHUNK + c as i64);
            chunks.push(ToCount {
                start,
                lists: &lists,
                pairs,
                key,
                row: sealed_row(conn, key)?,
            });
        }
        let counted =
            history_core::parallel::map(&chunks, |chunk| count_chunk(chunk, (skip, session_of)));
        let counted = counted.into_iter().collect::<rusqlite::Result<Vec<_>>>()?;
        // Room for each session's events at once.
        let mut more = vec![0usize; out.len()];
        for (session, _) in counted.iter().flat_map(|c| &c.0) {
            more[*session] += 1;
        }
        for (c, &n) in out.iter_mut().zip(&more) {
            if let Some(c) = c.as_mut().filter(|_| n > 0) {
                c.events.reserve(n);
                c.counts.reserve(n * terms);
            }
        }
        for (events, counts) in counted {
            for ((session, event), counts) in events.into_iter().zip(counts.chunks(terms)) {
                if let Some(c) = out[session].as_mut() {
                    c.events.push(event);
                    c.counts.extend_from_slice(counts);
                }
            }
        }
    }
    for i in overflowed {
        out[i] = None;
    }
    Ok(())
}

/// The events of a chunk that hold a term, with their sessions and, flat, how often each holds
/// each term.
type ChunkCounts = (Vec<(usize, CountedEvent)>, Vec<u16>);

/// Counts a chunk's events ([`counted`]): every pair of its lists must be an event of it.
fn count_chunk(
    chunk: &ToCount<'_>,
    (skip, session_of): ([&[u64]; 2], &SessionOf<'_>),
) -> rusqlite::Result<ChunkCounts> {
    let (count, bytes) = unpack(chunk.key, &chunk.row)?;
    let terms = chunk.lists.len();
    let mut at: Vec<usize> = chunk.pairs.iter().map(|p| p.start).collect();
    let mut row = vec![0u16; terms];
    let (mut events, mut counts) = (Vec::new(), Vec::new());
    // The last answer of `session_of`, and the last line it holds for; where the lines to
    // skip are: lines come in order.
    let mut known: Option<(Option<usize>, u64)> = None;
    let mut skipping = skip.map(|list| (list, list.partition_point(|&l| l < chunk.start / PARTS)));
    let mut skips = |line: u64| {
        skipping.iter_mut().any(|(list, at)| {
            while list.get(*at).is_some_and(|&l| l < line) {
                *at += 1;
            }
            list.get(*at) == Some(&line)
        })
    };
    // Each term's next pair's event (none: past every id), and the first of them: the events
    // before it hold no term.
    let pair = |t: usize, at: usize| {
        let end = chunk.pairs[t].end;
        (at < end).then(|| chunk.lists[t][at])
    };
    let mut heads: Vec<u64> = (0..terms)
        .map(|t| pair(t, at[t]).map_or(u64::MAX, |p| p.0))
        .collect();
    let mut first = heads.iter().copied().min().unwrap_or(u64::MAX);
    chunk_events(&bytes, count, |e| {
        if e.id < first {
            return Ok(());
        }
        // A pair whose event is not among the chunk's is damage.
        sum::whole(first == e.id)?;
        for t in 0..terms {
            row[t] = 0;
            if heads[t] == e.id {
                let n = pair(t, at[t]).map_or(0, |p| p.1);
                row[t] = u16::try_from(n).unwrap_or(u16::MAX);
                at[t] += 1;
                heads[t] = pair(t, at[t]).map_or(u64::MAX, |p| p.0);
            }
        }
        first = heads.iter().copied().min().unwrap_or(u64::MAX);
        let line = e.id / PARTS;
        if skips(line) {
            return Ok(());
        }
        let session = match known.filter(|k| line <= k.1) {
            Some((session, _)) => session,
            None => {
                let answer = session_of(line)?;
                known = Some(answer);
                answer.0
            }
        };
        if let Some(session) = session {
            let event = CountedEvent {
                seq: e.seq,
                part: (e.id % PARTS) as u32,
                role: e.role,
                timestamp: e.timestamp,
                words: e.words,
            };
            events.push((session, event));
            counts.extend_from_slice(&row);
        }
        Ok(())
    })?;
    sum::whole(at.iter().zip(&chunk.pairs).all(|(a, p)| *a == p.end))?;
    Ok((events, counts))
}

fn role_code(role: Role) -> u64 {
    Role::ALL.iter().position(|r| *r == role).unwrap_or(0) as u64
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends the words of a line's events (part, role, time, text) to `out`, as a decoding thread
/// hands them to the writer ([`Words::line`]): per event that holds a term, its part, role,
/// time and length, then each term's hash and count.
pub(crate) fn encode_line<'t>(
    events: impl IntoIterator<Item = (u32, Role, Option<Timestamp>, &'t str)>,
    out: &mut Vec<u8>,
) {
    let mut counts: FxHashMap<u64, u32> = FxHashMap::default();
    for (part, role, timestamp, text) in events {
        counts.clear();
        let words = for_each_term(text, |w| *counts.entry(term_hash(w.term)).or_default() += 1);
        if counts.is_empty() {
            continue;
        }
        varint::put(out, u64::from(part));
        varint::put(
            out,
            u64::from(words) << 3 | u64::from(timestamp.is_some()) << 2 | role_code(role),
        );
        if let Some(t) = timestamp {
            out.extend_from_slice(&t.0.to_le_bytes());
        }
        varint::put(out, counts.len() as u64);
        for (&hash, &n) in &counts {
            out.extend_from_slice(&hash.to_le_bytes());
            varint::put(out, u64::from(n));
        }
    }
}

/// One term's events since the last segment, as (id delta, count) pairs.
struct Gathered {
    hash: u64,
    pairs: Vec<u8>,
    last: u64,
    n: u64,
}

/// Puts an event's pair after the one before it (`last`): how many lines on from that one's
/// its line is, and how often it holds the term (1, 2, 3 or more, then how many more than 4);
/// an event that is not its line's first (rare) escapes with 0 lines, then says the lines and
/// its part. One byte for an event that holds the term up to three times, within 31 lines of
/// the last (ids apart by [`PARTS`] and a flag each took two bytes where this takes one).
fn put_pair(out: &mut Vec<u8>, last: &mut u64, id: u64, n: u32) {
    let (line, part) = (id / PARTS, id % PARTS);
    let lines = line - *last / PARTS;
    let times = u64::from(n.clamp(1, 4) - 1);
    match part == 0 && lines > 0 {
        true => varint::put(out, lines << 2 | times),
        false => {
            varint::put(out, times);
            varint::put(out, lines);
            varint::put(out, part);
        }
    }
    if n >= 4 {
        varint::put(out, u64::from(n - 4));
    }
    *last = id;
}

/// The words of the lines since the last segment ([`Words::write`] stores them).
#[derive(Default)]
pub(crate) struct Words {
    slots: FxHashMap<u64, usize>,
    terms: Vec<Gathered>,
    events: Vec<WordEvent>,
    /// Lines with an event past [`PARTS`].
    overflow: Vec<u64>,
    bytes: usize,
}

impl Words {
    pub(crate) fn clear(&mut self) {
        *self = Words::default();
    }

    /// The memory the gathered words take: a term's slot, entry and first allocation each.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
            + self.terms.len() * (std::mem::size_of::<Gathered>() + 32)
            + self.events.len() * std::mem::size_of::<WordEvent>()
    }

    /// Gathers the words of line `id` at `seq` ([`encode_line`]); bytes that do not decode
    /// add nothing after them.
    pub(crate) fn line(&mut self, id: u64, seq: u64, mut words: &[u8]) {
        while !words.is_empty() {
            let Some(read) = read_event(&mut words) else {
                return;
            };
            let (part, role, timestamp, len, terms) = read;
            if u64::from(part) >= PARTS {
                if self.overflow.last() != Some(&id) {
                    self.overflow.push(id);
                }
                continue;
            }
            let event = id * PARTS + u64::from(part);
            self.events.push(WordEvent {
                id: event,
                seq,
                role,
                words: len,
                timestamp,
            });
            for (hash, n) in terms {
                let slot = *self.slots.entry(hash).or_insert_with(|| {
                    self.terms.push(Gathered {
                        hash,
                        pairs: Vec::new(),
                        last: 0,
                        n: 0,
                    });
                    self.terms.len() - 1
                });
                let t = &mut self.terms[slot];
                let before = t.pairs.len();
                put_pair(&mut t.pairs, &mut t.last, event, n);
                t.n += 1;
                self.bytes += t.pairs.len() - before;
            }
        }
    }

    /// Stores what was gathered as the word rows of `segment`, and forgets it.
    pub(crate) fn write(&mut self, conn: &Connection, segment: i64) -> rusqlite::Result<()> {
        let mut terms = std::mem::take(&mut self.terms);
        let buckets = bucket_count(terms.len());
        terms.sort_unstable_by_key(|t| (bucket(t.hash, buckets), t.hash));
        let mut rows = Rows::new(conn, segment)?;
        let mut at = 0;
        for b in 0..buckets {
            let mut row = Row::default();
            while let Some(t) = terms.get(at).filter(|t| bucket(t.hash, buckets) == b) {
                row.push(t.hash, t.n, &t.pairs);
                at += 1;
            }
            rows.put(b as i64, row)?;
        }
        let mut events = std::mem::take(&mut self.events);
        events.sort_unstable_by_key(|e| e.id);
        let mut chunks = Vec::new();
        for chunk in events.chunks(CHUNK_EVENTS) {
            chunks.push(chunk[0].id);
            rows.put(CHUNK + chunks.len() as i64 - 1, Row::of_events(chunk))?;
        }
        let overflow = std::mem::take(&mut self.overflow);
        rows.head(buckets, terms.len() as u64, &chunks, &overflow)?;
        self.clear();
        Ok(())
    }
}

/// How many buckets a segment of `terms` terms has.
fn bucket_count(terms: usize) -> u64 {
    (terms / BUCKET_TERMS).max(1).next_power_of_two() as u64
}

/// The bucket of `hash` among `buckets`.
fn bucket(hash: u64, buckets: u64) -> u64 {
    (hash >> 32) & (buckets - 1)
}

/// One event of a line's words ([`encode_line`]): its part, role, time, length, and each
/// term's hash with its count.
type LineEvent = (u32, Role, Option<Timestamp>, u32, Vec<(u64, u32)>);

fn read_event(words: &mut &[u8]) -> Option<LineEvent> {
    let mut at = 0;
    let part = u32::try_from(varint::read(words, &mut at)?).ok()?;
    let code = varint::read(words, &mut at)?;
    let role = *Role::ALL.get((code & 3) as usize)?;
    let timestamp = match code & 4 {
        0 => None,
        _ => {
            let b = words.get(at..at + 8)?;
            at += 8;
            Some(Timestamp(i64::from_le_bytes(b.try_into().ok()?)))
        }
    };
    let len = u32::try_from(code >> 3).ok()?;
    let k = varint::read(words, &mut at)?;
    let mut terms = Vec::with_capacity(k.min(1 << 16) as usize);
    for _ in 0..k {
        let b = words.get(at..at + 8)?;
        at += 8;
        let hash = u64::from_le_bytes(b.try_into().ok()?);
        let n = u32::try_from(varint::read(words, &mut at)?).ok()?;
        terms.push((hash, n));
    }
    *words = &words[at..];
    Some((part, role, timestamp, len, terms))
}

/// The bytes of one row as they are built.
#[derive(Default)]
struct Row {
    entries: u64,
    bytes: Vec<u8>,
}

impl Row {
    /// Adds a term's entry (in hash order): its hash, how many events, and their pairs.
    fn push(&mut self, hash: u64, n: u64, pairs: &[u8]) {
        self.entries += 1;
        self.bytes.extend_from_slice(&hash.to_le_bytes());
        varint::put(&mut self.bytes, n);
        varint::put(&mut self.bytes, pairs.len() as u64);
        self.bytes.extend_from_slice(pairs);
    }

    /// A chunk of events (in id order), each after the one before it.
    fn of_events(events: &[WordEvent]) -> Row {
        let mut bytes = Vec::with_capacity(events.len() * 6);
        let (mut id, mut seq, mut time) = (0u64, 0u64, 0i64);
        for e in events {
            varint::put(&mut bytes, e.id - id);
            let code = u64::from(e.words) << 3 | u64::from(e.timestamp.is_some()) << 2;
            varint::put(&mut bytes, code | role_code(e.role));
            varint::put(&mut bytes, zigzag(e.seq as i64 - seq as i64));
            if let Some(t) = e.timestamp {
                varint::put(&mut bytes, zigzag(t.0.wrapping_sub(time)));
                time = t.0;
            }
            (id, seq) = (e.id, e.seq);
        }
        Row {
            entries: events.len() as u64,
            bytes,
        }
    }
}

/// Gives `each` the events of a chunk's row of `entries` events, in order, as they are read:
/// a chunk is not held whole.
fn chunk_events(
    mut bytes: &[u8],
    entries: u64,
    mut each: impl FnMut(WordEvent) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let (mut id, mut seq, mut time) = (0u64, 0u64, 0i64);
    let mut read = || -> Option<WordEvent> {
        let mut at = 0;
        id = id.checked_add(varint::read(bytes, &mut at)?)?;
        let code = varint::read(bytes, &mut at)?;
        seq = (seq as i64).checked_add(unzigzag(varint::read(bytes, &mut at)?))? as u64;
        let timestamp = match code & 4 {
            0 => None,
            _ => {
                time = time.wrapping_add(unzigzag(varint::read(bytes, &mut at)?));
                Some(Timestamp(time))
            }
        };
        bytes = &bytes[at..];
        Some(WordEvent {
            id,
            seq,
            role: *Role::ALL.get((code & 3) as usize)?,
            words: u32::try_from(code >> 3).ok()?,
            timestamp,
        })
    };
    for _ in 0..entries {
        each(read().ok_or_else(sum::corrupt)?)?;
    }
    sum::whole(bytes.is_empty())
}

/// A term's entry in a bucket: its hash, how many events, and their pairs.
struct Entry<'r> {
    hash: u64,
    n: u64,
    pairs: &'r [u8],
}

/// A bucket's entries, in order.
fn entries(bytes: &[u8], count: u64) -> rusqlite::Result<Vec<Entry<'_>>> {
    let mut out = Vec::with_capacity(count as usize);
    let mut at = 0;
    for _ in 0..count {
        let entry = (|| {
            let hash = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
            at += 8;
            let n = varint::read(bytes, &mut at)?;
            let len = usize::try_from(varint::read(bytes, &mut at)?).ok()?;
            let pairs = bytes.get(at..at.checked_add(len)?)?;
            at += len;
            Some(Entry { hash, n, pairs })
        })();
        out.push(entry.ok_or_else(sum::corrupt)?);
    }
    sum::whole(at == bytes.len())?;
    Ok(out)
}

/// Calls `each` with every (event id, count) pair of an entry.
fn pairs(entry: &Entry<'_>, mut each: impl FnMut(u64, u32)) -> rusqlite::Result<()> {
    let (bytes, mut at, mut id) = (entry.pairs, 0, 0u64);
    for _ in 0..entry.n {
        let pair = (|| {
            let v = varint::read(bytes, &mut at)?;
            let (lines, part) = match v >> 2 {
                0 => (
                    varint::read(bytes, &mut at)?,
                    varint::read(bytes, &mut at).filter(|&p| p < PARTS)?,
                ),
                lines => (lines, 0),
            };
            id = (id / PARTS)
                .checked_add(lines)?
                .checked_mul(PARTS)?
                .checked_add(part)?;
            let n = match v & 3 {
                3 => u32::try_from(varint::read(bytes, &mut at)?)
                    .ok()?
                    .checked_add(4)?,
                times => times as u32 + 1,
            };
            Some(n)
        })();
        each(id, pair.ok_or_else(sum::corrupt)?);
    }
    sum::whole(at == bytes.len())
}

/// The rows of a segment as they are written.
struct Rows<'c> {
    insert: rusqlite::CachedStatement<'c>,
    segment: i64,
    compressor: zstd::bulk::Compressor<'static>,
}

impl<'c> Rows<'c> {
    fn new(conn: &'c Connection, segment: i64) -> rusqlite::Result<Rows<'c>> {
        Ok(Rows {
            insert: conn.prepare_cached("INSERT INTO words (key, list) VALUES (?1, ?2)")?,
            segment,
            compressor: zstd::bulk::Compressor::new(LEVEL).map_err(|_| sum::corrupt())?,
        })
    }

    fn put(&mut self, slot: i64, row: Row) -> rusqlite::Result<()> {
        let key = self.segment << 32 | slot;
        let mut plain = Vec::with_capacity(row.bytes.len() + 10);
        varint::put(&mut plain, row.entries);
        plain.extend_from_slice(&row.bytes);
        let mut list = (self.compressor.compress(&plain)).map_err(|_| sum::corrupt())?;
        sum::seal(key, 1, &mut list);
        self.insert.execute(params![key, list])?;
        Ok(())
    }

    fn head(
        &mut self,
        buckets: u64,
        terms: u64,
        chunks: &[u64],
        overflow: &[u64],
    ) -> rusqlite::Result<()> {
        let mut bytes = Vec::new();
        varint::put(&mut bytes, buckets);
        varint::put(&mut bytes, terms);
        put_ascending(&mut bytes, chunks);
        put_ascending(&mut bytes, overflow);
        self.put(HEAD, Row { entries: 0, bytes })
    }
}

/// Appends `values` (ascending): how many, then each as its step from the one before.
fn put_ascending(out: &mut Vec<u8>, values: &[u64]) {
    varint::put(out, values.len() as u64);
    let mut last = 0;
    for &v in values {
        varint::put(out, v - last);
        last = v;
    }
}

/// What [`put_ascending`] wrote at `*at`, moving `*at` past it.
fn read_ascending(bytes: &[u8], at: &mut usize) -> Option<Vec<u64>> {
    let n = varint::read(bytes, at)?;
    let mut last = 0u64;
    (0..n)
        .map(|_| {
            last = last.checked_add(varint::read(bytes, at)?)?;
            Some(last)
        })
        .collect()
}

/// A row's entries count and bytes, checked; damage when the row is missing.
fn read_row(conn: &Connection, key: i64) -> rusqlite::Result<(u64, Vec<u8>)> {
    unpack(key, &sealed_row(conn, key)?)
}

/// A row as stored; damage when it is missing.
fn sealed_row(conn: &Connection, key: i64) -> rusqlite::Result<Vec<u8>> {
    let list: Option<Vec<u8>> = conn
        .prepare_cached("SELECT list FROM words WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()?;
    list.ok_or_else(sum::corrupt)
}

/// The entries count and bytes of row `key` as stored, checked.
fn unpack(key: i64, row: &[u8]) -> rusqlite::Result<(u64, Vec<u8>)> {
    let mut list = decompress(sum::unsealed(key, 1, row)?).ok_or_else(sum::corrupt)?;
    let mut at = 0;
    let entries = varint::read(&list, &mut at).ok_or_else(sum::corrupt)?;
    list.drain(..at);
    Ok((entries, list))
}

/// The bytes a row's compressed ones stand for, read by one decompressor per thread; `None`
/// for bytes that do not decompress, or would take more than [`MAX_ROW`].
fn decompress(bytes: &[u8]) -> Option<Vec<u8>> {
    thread_local! {
        static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let size = zstd::zstd_safe::get_frame_content_size(bytes).ok()??;
    let size = usize::try_from(size).ok().filter(|&n| n <= MAX_ROW)?;
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = zstd::bulk::Decompressor::new().ok();
        }
        d.as_mut()?.decompress(bytes, size).ok()
    })
}

/// The most bytes a row may stand for: a term's pairs in a segment of `FLUSH_BYTES` of them.
const MAX_ROW: usize = 1 << 30;

/// What a segment's head says.
struct Head {
    buckets: u64,
    terms: u64,
    chunks: Vec<u64>,
    overflow: Vec<u64>,
}

fn read_head(conn: &Connection, segment: i64) -> rusqlite::Result<Head> {
    let (_, bytes) = read_row(conn, segment << 32 | HEAD)?;
    let head = (|| {
        let mut at = 0;
        let buckets = varint::read(&bytes, &mut at)?;
        let terms = varint::read(&bytes, &mut at)?;
        let chunks = read_ascending(&bytes, &mut at)?;
        let overflow = read_ascending(&bytes, &mut at)?;
        (buckets.is_power_of_two() && at == bytes.len()).then_some(Head {
            buckets,
            terms,
            chunks,
            overflow,
        })
    })();
    head.ok_or_else(sum::corrupt)
}

/// Merges the word rows of `run` (segment ids, oldest first) into those of `segment`, keeping
/// only the events of lines that `live` says still exist.
pub(crate) fn merge(
    conn: &Connection,
    run: &[i64],
    segment: i64,
    live: &dyn Fn(u64) -> bool,
) -> rusqlite::Result<()> {
    let heads: Vec<Head> = run
        .iter()
        .map(|&s| read_head(conn, s))
        .collect::<rusqlite::Result<_>>()?;
    let most = heads.iter().map(|h| h.buckets).max().unwrap_or(1);
    let terms: u64 = heads.iter().map(|h| h.terms).sum();
    let buckets = bucket_count(terms as usize).max(most);
    let mut rows = Rows::new(conn, segment)?;
    let mut loaded: Vec<Option<(u64, u64, Vec<u8>)>> = vec![None; run.len()];
    let mut terms_out = 0u64;
    for b in 0..buckets {
        // Each segment's bucket that holds the terms of this one.
        let mut found: Vec<(u64, usize, u64, Vec<u8>)> = Vec::new();
        for (s, head) in heads.iter().enumerate() {
            let r = b & (head.buckets - 1);
            if loaded[s].as_ref().is_none_or(|l| l.0 != r) {
                let (count, bytes) = read_row(conn, run[s] << 32 | r as i64)?;
                loaded[s] = Some((r, count, bytes));
            }
            if let Some((_, count, bytes)) = &loaded[s] {
                for e in entries(bytes, *count)? {
                    if bucket(e.hash, buckets) == b {
                        found.push((e.hash, s, e.n, e.pairs.to_vec()));
                    }
                }
            }
        }
        found.sort_by_key(|f| (f.0, f.1));
        let mut row = Row::default();
        let mut i = 0;
        while i < found.len() {
            let hash = found[i].0;
            let (mut bytes, mut last, mut n) = (Vec::new(), 0u64, 0u64);
            while let Some((_, _, count, pairs_of)) = found.get(i).filter(|f| f.0 == hash) {
                let entry = Entry {
                    hash,
                    n: *count,
                    pairs: pairs_of,
                };
                pairs(&entry, |id, k| {
                    if live(id / PARTS) {
                        put_pair(&mut bytes, &mut last, id, k);
                        n += 1;
                    }
                })?;
                i += 1;
            }
            if n > 0 {
                row.push(hash, n, &bytes);
                terms_out += 1;
            }
        }
        rows.put(b as i64, row)?;
    }
    let mut chunks = Vec::new();
    let mut pending: Vec<WordEvent> = Vec::new();
    let mut overflow = Vec::new();
    for (s, head) in heads.iter().enumerate() {
        overflow.extend(head.overflow.iter().copied().filter(|&l| live(l)));
        for c in 0..head.chunks.len() {
            let (count, bytes) = read_row(conn, run[s] << 32 | (CHUNK + c as i64))?;
            chunk_events(&bytes, count, |e| {
                if live(e.id / PARTS) {
                    pending.push(e);
                }
                Ok(())
            })?;
            while pending.len() >= CHUNK_EVENTS {
                let chunk: Vec<WordEvent> = pending.drain(..CHUNK_EVENTS).collect();
                chunks.push(chunk[0].id);
                rows.put(CHUNK + chunks.len() as i64 - 1, Row::of_events(&chunk))?;
            }
        }
    }
    if !pending.is_empty() {
        chunks.push(pending[0].id);
        rows.put(CHUNK + chunks.len() as i64 - 1, Row::of_events(&pending))?;
    }
    rows.head(buckets, terms_out, &chunks, &overflow)
}

/// Deletes the word rows of segments `first..=last`.
pub(crate) fn delete(conn: &Connection, first: i64, last: i64) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM words WHERE key BETWEEN ?1 AND ?2",
        params![first << 32, (last << 32) | HEAD],
    )?;
    Ok(())
}

/// Reads every word row of `segments`, each checked, and that there are no others: the error
/// of the first that fails.
pub(crate) fn verify(conn: &Connection, segments: &[i64]) -> rusqlite::Result<()> {
    let mut rows = 0i64;
    for &segment in segments {
        let head = read_head(conn, segment)?;
        for b in 0..head.buckets {
            let (count, bytes) = read_row(conn, segment << 32 | b as i64)?;
            for e in entries(&bytes, count)? {
                sum::whole(bucket(e.hash, head.buckets) == b)?;
                pairs(&e, |_, _| {})?;
            }
        }
        for c in 0..head.chunks.len() {
            let (count, bytes) = read_row(conn, segment << 32 | (CHUNK + c as i64))?;
            chunk_events(&bytes, count, |_| Ok(()))?;
        }
        rows += 1 + head.buckets as i64 + head.chunks.len() as i64;
    }
    let all: i64 = conn.query_row("SELECT count(*) FROM words", [], |r| r.get(0))?;
    sum::whole(all == rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_s_words_read_back_as_they_were_cut() {
        let mut bytes = Vec::new();
        let t = Some(Timestamp(1_700_000_000_000_000_000));
        let events = [
            (0, Role::User, t, "Deploying the deploy script, deployed"),
            (1, Role::Assistant, None, ""),
            (2, Role::Tool, t, "flakyLoginTest"),
        ];
        encode_line(events, &mut bytes);
        let mut input = bytes.as_slice();
        let (part, role, time, len, mut terms) = read_event(&mut input).unwrap();
        assert_eq!((part, role, time, len), (0, Role::User, t, 5));
        terms.sort_unstable();
        let mut want = vec![(term_hash("deploy"), 3), (term_hash("script"), 1)];
        want.sort_unstable();
        assert_eq!(terms, want);
        // The event without a term is left out.
        let (part, role, _, _, terms) = read_event(&mut input).unwrap();
        assert_eq!((part, role), (2, Role::Tool));
        assert!(terms.contains(&(term_hash("flakylogintest"), 1)));
        assert!(terms.contains(&(term_hash("login"), 1)));
        assert!(input.is_empty());
    }

    #[test]
    fn pairs_and_chunks_read_back() {
        let mut bytes = Vec::new();
        let mut last = 0;
        let want = [
            (0, 1),
            (64, 3),
            (65, 2),
            (700, 4),
            (64 * 40, 1),
            (1 << 40, 300),
        ];
        for &(id, n) in &want {
            put_pair(&mut bytes, &mut last, id, n);
        }
        let entry = Entry {
            hash: 1,
            n: want.len() as u64,
            pairs: &bytes,
        };
        let mut got = Vec::new();
        pairs(&entry, |id, n| got.push((id, n))).unwrap();
        assert_eq!(got, want);
        let events: Vec<WordEvent> = (0..5u64)
            .map(|i| WordEvent {
                id: 64 + i * 3,
                seq: 10 - i,
                role: Role::ALL[i as usize % 4],
                words: i as u32 * 1000,
                timestamp: (i % 2 == 0).then_some(Timestamp(-5 + i as i64 * 1_000_000_007)),
            })
            .collect();
        let row = Row::of_events(&events);
        let read = |bytes: &[u8], entries: u64| {
            let mut out = Vec::new();
            chunk_events(bytes, entries, |e| {
                out.push(e);
                Ok(())
            })
            .map(|()| out)
        };
        assert_eq!(read(&row.bytes, row.entries).unwrap(), events);
        let short = &row.bytes[..row.bytes.len() - 1];
        assert!(read(short, row.entries).is_err());
        assert!(read(&row.bytes, row.entries + 1).is_err());
    }
}
