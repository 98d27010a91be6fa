//! The token index: for each retrieval token, the ids of the lines that hold it.
//!
//! Lines get increasing ids as they are written ([`Accumulator::line`]); the writer gathers
//! each token's ids in memory and stores them as one **segment** when the transaction commits
//! (an update commits when they take [`FLUSH_BYTES`]): a row per token and segment in
//! `postings`, whose `list` is the ids in increasing order. Segments are written in id order
//! and cover disjoint ranges of ids, so a token's ids are its segments' lists one after the
//! other; a few segments at a time are merged into one ([`plan_merge`]), dropping the ids of
//! lines since removed.
//!
//! A removed line leaves its id in the lists until then: the id names no line, so it is never a
//! candidate. Ids are never reused (the next one is above every id any segment holds), so a list
//! never names a line that did not hold the token, and a line's tokens are in the same
//! transaction as the line: the candidates of a query are a superset of its hits.
//!
//! This replaced an FTS5 table, which spent ~400 ns per (token, line) pair on its hash and its
//! merges (47 s of CPU for a GiB of transcripts, three times what decoding and tokenizing it
//! cost); gathering them here costs a few nanoseconds each.
//!
//! A list's bytes: `n`, the number of ids, and the last id, as varints; then `k` = `(n - 1) /`
//! [`BLOCK`] and whether the first block is a bitmap, as one varint (`k << 1 | bitmap`); then
//! `k` skip entries, one per block after the first: its first id, the id at index `j·BLOCK` (as
//! a delta from the previous entry's), and where the rest of the block starts (a delta from the
//! previous entry's offset, shifted left by one to hold whether the block is a bitmap). Then
//! the blocks of [`BLOCK`] ids, each its first id as a varint delta from the id before it (the
//! first from 0), then its other ids: as varint deltas, or as a **bitmap** — bit `b` (of byte
//! `b / 8`, lowest first) for the id `first + 1 + b`, up to the byte that holds its last id —
//! where that takes fewer bytes (its ids fewer than 8 apart on average: a token on most lines).
//! On the 1 GiB bench corpus the bitmaps took the lists from 141 to 111 MB.

use super::sum;
use crate::varint;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::vtab::array::Array;
use rusqlite::{params, Connection};

use crate::tokens::Token;

/// How many ids a skip entry spans: a seek decodes at most this many.
const BLOCK: usize = 128;

/// When the gathered ids take this much memory, an update commits at the next session's
/// boundary, which writes them as a segment (a session's own ids are gathered whole).
pub(crate) const FLUSH_BYTES: usize = 48 << 20;

/// The payload bytes of a slice at each level: a token's ids are gathered in a chain of slices
/// that grow with it, so that the many tokens seen once cost a few bytes each.
const SLICES: [u32; 8] = [4, 12, 28, 60, 124, 252, 508, 1020];

/// Each token's ids since the last segment, as varint deltas in chained slices of one arena.
pub(crate) struct Accumulator {
    /// Per token: where its next byte goes in `arena` (0: no ids yet), and its last id.
    pos: Vec<u32>,
    end: Vec<u32>,
    last: Vec<u64>,
    /// The tokens with ids, with where their first slice starts.
    heads: Vec<(Token, u32)>,
    /// The slices: a payload, then 4 bytes that hold the slice's level until the next slice's
    /// offset replaces it.
    arena: Vec<u8>,
    /// How many lines and pairs were gathered; the lines have the ids just below `next_id`.
    lines: u64,
    pairs: u64,
    /// The id the next line gets.
    next_id: u64,
    /// The words of the lines' events.
    pub(crate) words: super::words::Words,
}

impl Default for Accumulator {
    fn default() -> Accumulator {
        let tokens = 1usize << (crate::tokens::BITS + 1);
        Accumulator {
            // Zeroed allocations: the pages of tokens never seen are never touched.
            pos: vec![0; tokens],
            end: vec![0; tokens],
            last: vec![0; tokens],
            heads: Vec::new(),
            arena: vec![0],
            lines: 0,
            pairs: 0,
            next_id: 1,
            words: Default::default(),
        }
    }
}

impl Accumulator {
    /// Forgets what was gathered (a transaction rolled back), and makes the next id at least
    /// `floor`.
    pub(crate) fn reset(&mut self, floor: u64) {
        self.clear();
        self.next_id = self.next_id.max(floor);
    }

    fn clear(&mut self) {
        for &(t, _) in &self.heads {
            self.pos[t as usize] = 0;
        }
        self.heads.clear();
        self.arena.truncate(1);
        self.lines = 0;
        self.pairs = 0;
        self.words.clear();
    }

    /// Gives the next line its id and gathers its tokens, which must be distinct.
    pub(crate) fn line(&mut self, tokens: &[Token]) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.lines += 1;
        self.pairs += tokens.len() as u64;
        for &t in tokens {
            let t = t as usize;
            let delta = if self.pos[t] == 0 {
                let at = self.slice(0);
                self.heads.push((t as Token, at));
                self.pos[t] = at;
                self.end[t] = at + SLICES[0];
                id
            } else {
                id - self.last[t]
            };
            self.last[t] = id;
            varint::write_with(delta, |b| self.push(t, b));
        }
        id
    }

    /// Allocates a slice of `level`; where its payload starts.
    fn slice(&mut self, level: u32) -> u32 {
        let at = self.arena.len();
        let size = SLICES[level as usize] as usize;
        self.arena.resize(at + size + 4, 0);
        self.arena[at + size..at + size + 4].copy_from_slice(&level.to_le_bytes());
        at as u32
    }

    fn push(&mut self, t: usize, byte: u8) {
        if self.pos[t] == self.end[t] {
            let slot = self.end[t] as usize;
            let level = u32::from_le_bytes(self.arena[slot..slot + 4].try_into().unwrap_or([0; 4]));
            let level = (level + 1).min(SLICES.len() as u32 - 1);
            let at = self.slice(level);
            self.arena[slot..slot + 4].copy_from_slice(&at.to_le_bytes());
            self.pos[t] = at;
            self.end[t] = at + SLICES[level as usize];
        }
        self.arena[self.pos[t] as usize] = byte;
        self.pos[t] += 1;
    }

    /// The memory the gathered ids take.
    pub(crate) fn bytes(&self) -> usize {
        self.arena.len() + self.heads.len() * 8 + self.words.bytes()
    }

    /// Whether anything was gathered since the last segment.
    pub(crate) fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The segment of what was gathered: `(first id, last id, lines, pairs)`, then each token
    /// with its list, in token order; and forgets it.
    pub(crate) fn drain(
        &mut self,
        mut each: impl FnMut(Token, u64, &mut Vec<u8>) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<(u64, u64, u64, u64)> {
        self.heads.sort_unstable_by_key(|&(t, _)| t);
        let mut ids = Vec::new();
        let mut list = Vec::new();
        for &(t, head) in &self.heads {
            ids.clear();
            self.ids_of(t as usize, head, &mut ids);
            encode(&ids, &mut list);
            each(t, ids.len() as u64, &mut list)?;
        }
        let segment = (
            self.next_id - self.lines,
            self.next_id - 1,
            self.lines,
            self.pairs,
        );
        self.clear();
        Ok(segment)
    }

    /// Decodes the ids gathered for `t`, whose first slice is at `head`.
    fn ids_of(&self, t: usize, head: u32, ids: &mut Vec<u64>) {
        let (end, arena) = (self.pos[t] as usize, &self.arena);
        let (mut at, mut level) = (head as usize, 0usize);
        let (mut value, mut shift, mut prev) = (0u64, 0u32, 0u64);
        loop {
            let size = SLICES[level] as usize;
            let last = at <= end && end <= at + size;
            let stop = if last { end } else { at + size };
            for &b in &arena[at..stop] {
                value |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    prev += value;
                    ids.push(prev);
                    (value, shift) = (0, 0);
                }
            }
            if last {
                return;
            }
            let slot = at + size;
            at = u32::from_le_bytes(arena[slot..slot + 4].try_into().unwrap_or([0; 4])) as usize;
            level = (level + 1).min(SLICES.len() - 1);
        }
    }
}

/// The bytes of the list of `ids` (increasing, not empty) into `out`.
pub(crate) fn encode(ids: &[u64], out: &mut Vec<u8>) {
    out.clear();
    let mut payload = Vec::with_capacity(ids.len() * 2);
    // Per block after the first: its first id, where its other ids start, and whether they
    // are a bitmap.
    let mut skips = Vec::new();
    let mut first_bitmap = false;
    let mut prev = 0;
    for (j, block) in ids.chunks(BLOCK).enumerate() {
        let (first, last) = (block[0], block[block.len() - 1]);
        varint::put(&mut payload, first - prev);
        let deltas: u64 = block.windows(2).map(|w| varint::len(w[1] - w[0])).sum();
        let bitmap = (last - first).div_ceil(8) < deltas;
        match j {
            0 => first_bitmap = bitmap,
            _ => skips.push((first, payload.len(), bitmap)),
        }
        if bitmap {
            let at = payload.len();
            payload.resize(at + (last - first).div_ceil(8) as usize, 0);
            for &id in &block[1..] {
                let b = (id - first - 1) as usize;
                payload[at + b / 8] |= 1 << (b % 8);
            }
        } else {
            for w in block.windows(2) {
                varint::put(&mut payload, w[1] - w[0]);
            }
        }
        prev = last;
    }
    varint::put(out, ids.len() as u64);
    varint::put(out, prev);
    varint::put(out, (skips.len() as u64) << 1 | u64::from(first_bitmap));
    let (mut last_id, mut last_at) = (0, 0);
    for (id, at, bitmap) in skips {
        varint::put(out, id - last_id);
        varint::put(out, ((at - last_at) as u64) << 1 | u64::from(bitmap));
        (last_id, last_at) = (id, at);
    }
    out.extend_from_slice(&payload);
}

/// The ids of one stored list, in order, with seeks that use its skip entries. A damaged list
/// ends early. A clone shares the bytes and skip entries, read once.
#[derive(Clone, Debug)]
pub(crate) struct List {
    bytes: Arc<[u8]>,
    payload: usize,
    /// Per block after the first: its first id, where its other ids start, and whether they
    /// are a bitmap.
    skips: Arc<[(u64, usize, bool)]>,
    n: u64,
    last: u64,
    /// The current id (`u64::MAX` past the end), its index, where the next delta (in a bitmap
    /// block: the bitmap) starts, and the first skip entry not behind it.
    id: u64,
    index: u64,
    at: usize,
    skip: usize,
    /// The first id of the current block when it is a bitmap.
    bitmap: Option<u64>,
}

impl List {
    pub(crate) fn new(bytes: impl Into<Arc<[u8]>>) -> List {
        let bytes: Arc<[u8]> = bytes.into();
        let mut at = 0;
        let header = (|| {
            let n = varint::read(&bytes, &mut at)?;
            let last = varint::read(&bytes, &mut at)?;
            let k = varint::read(&bytes, &mut at)?;
            let mut skips = Vec::with_capacity((k >> 1).min(n / BLOCK as u64) as usize);
            let (mut id, mut off) = (0u64, 0usize);
            for _ in 0..k >> 1 {
                id = id.checked_add(varint::read(&bytes, &mut at)?)?;
                let o = varint::read(&bytes, &mut at)?;
                off = off.checked_add(usize::try_from(o >> 1).ok()?)?;
                skips.push((id, off, o & 1 == 1));
            }
            Some((n, last, k & 1 == 1, skips))
        })();
        let (n, last, first_bitmap, skips) = header.unwrap_or((0, 0, false, Vec::new()));
        let mut list = List {
            bytes,
            payload: at,
            skips: skips.into(),
            n,
            last,
            id: 0,
            index: 0,
            at,
            skip: 0,
            bitmap: None,
        };
        list.id = match n {
            0 => u64::MAX,
            _ => varint::read(&list.bytes, &mut list.at).unwrap_or(u64::MAX),
        };
        list.bitmap = first_bitmap.then_some(list.id);
        list
    }

    /// The current id; `u64::MAX` once past the end.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Moves to the next id.
    pub(crate) fn step(&mut self) {
        if self.id == u64::MAX || self.index + 1 >= self.n {
            self.id = u64::MAX;
            return;
        }
        self.index += 1;
        self.id = if self.index.is_multiple_of(BLOCK as u64) {
            // A new block: past the last one's bitmap, its first id, and its kind.
            if let Some(first) = self.bitmap {
                let bits = usize::try_from(self.id - first).unwrap_or(usize::MAX);
                self.at = self.at.saturating_add(bits.div_ceil(8));
            }
            let id = self.next_delta();
            let block = (self.index / BLOCK as u64) as usize;
            let bitmap = self.skips.get(block - 1).is_some_and(|s| s.2);
            self.bitmap = bitmap.then_some(id);
            id
        } else {
            match self.bitmap {
                Some(first) => self.next_bit(first),
                None => self.next_delta(),
            }
        };
    }

    /// The id a delta from the current one, read where it starts (`u64::MAX` if it cannot be).
    fn next_delta(&mut self) -> u64 {
        match varint::read(&self.bytes, &mut self.at) {
            Some(d) if d > 0 => self.id.saturating_add(d),
            _ => u64::MAX,
        }
    }

    /// The id after the current one in a bitmap block that starts at `first`.
    fn next_bit(&self, first: u64) -> u64 {
        self.bit_from(first, self.id - first)
    }

    /// The id of the first bit set at or after bit `from` of a bitmap block that starts at
    /// `first` (`u64::MAX` past the bytes).
    fn bit_from(&self, first: u64, from: u64) -> u64 {
        let Some(mut byte) = usize::try_from(from / 8)
            .ok()
            .and_then(|b| b.checked_add(self.at))
        else {
            return u64::MAX;
        };
        let mut bits = self.bytes.get(byte).map_or(0, |b| b & (0xff << (from % 8)));
        while bits == 0 {
            byte += 1;
            match self.bytes.get(byte) {
                Some(&b) => bits = b,
                None => return u64::MAX,
            }
        }
        let b = (byte - self.at) as u64 * 8 + u64::from(bits.trailing_zeros());
        first.saturating_add(1 + b)
    }

    /// In a bitmap block that starts at `first`, moves to the first id at or after `target`
    /// without stepping through the ids before it: the bits set before the target's are
    /// counted, and never past the block's last (whose byte ends the bitmap). When the block
    /// holds none, moves to the next block's first id.
    fn seek_bits(&mut self, first: u64, target: u64) {
        let block = self.index / BLOCK as u64;
        let end = ((block + 1) * BLOCK as u64).min(self.n);
        // The ids after the current one in the block, and those before the target.
        let left = end.saturating_sub(self.index + 1);
        let (from, to) = (self.id - first, target - first - 1);
        let mut before = 0u64;
        let mut bit = from;
        while bit < to && before < left {
            let at = usize::try_from(bit / 8).map_or(usize::MAX, |b| b.saturating_add(self.at));
            let Some(&byte) = self.bytes.get(at) else {
                self.id = u64::MAX;
                return;
            };
            let upto = (to - bit + bit % 8).min(8);
            let mask = (0xffu16 << (bit % 8) & !(0xffu16 << upto)) as u8;
            before += u64::from((byte & mask).count_ones());
            bit = (bit / 8 + 1) * 8;
        }
        if before < left {
            self.index += before + 1;
            self.id = self.bit_from(first, to);
            return;
        }
        match self.skips.get(block as usize) {
            Some(&(id, off, bitmap)) if end < self.n => {
                self.skip = self.skip.max(block as usize + 1);
                self.index = end;
                self.id = id;
                self.at = self.payload.saturating_add(off);
                self.bitmap = bitmap.then_some(id);
            }
            _ => self.id = u64::MAX,
        }
    }

    /// Moves to the first id at or after `target`.
    pub(crate) fn seek(&mut self, target: u64) {
        if self.id >= target {
            return;
        }
        if target > self.last {
            self.id = u64::MAX;
            return;
        }
        // The last skip entry at or before the target, when it is ahead of the current id.
        let ahead = self.skips[self.skip..].partition_point(|&(id, _, _)| id <= target);
        if ahead > 0 {
            let m = self.skip + ahead - 1;
            let (id, off, bitmap) = self.skips[m];
            if id > self.id {
                self.skip = m + 1;
                self.id = id;
                self.index = ((m + 1) * BLOCK) as u64;
                self.at = self.payload.saturating_add(off);
                self.bitmap = bitmap.then_some(id);
            }
        }
        while self.id < target {
            match self.bitmap {
                Some(first) => self.seek_bits(first, target),
                None => self.step(),
            }
        }
    }
}

/// A token's ids in every segment: its lists one after the other.
pub(crate) struct Term {
    lists: Vec<List>,
    at: usize,
}

impl Term {
    /// The term of `lists`, in segment order.
    pub(crate) fn new(lists: Vec<List>) -> Term {
        let mut term = Term { lists, at: 0 };
        term.settle();
        term
    }

    fn settle(&mut self) {
        while self.at < self.lists.len() && self.lists[self.at].id() == u64::MAX {
            self.at += 1;
        }
    }

    fn id(&self) -> u64 {
        self.lists.get(self.at).map_or(u64::MAX, List::id)
    }

    fn seek(&mut self, target: u64) {
        while self.at < self.lists.len() && self.lists[self.at].last < target {
            self.at += 1;
        }
        if let Some(list) = self.lists.get_mut(self.at) {
            list.seek(target);
        }
        self.settle();
    }
}

/// The ids in `range` that every one of `terms` holds, in order.
pub(crate) fn intersect(mut terms: Vec<Term>, range: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    let mut out = Vec::new();
    if terms.is_empty() {
        return out;
    }
    let mut x = *range.start();
    'outer: while x <= *range.end() {
        for t in terms.iter_mut() {
            t.seek(x);
            let id = t.id();
            if id > *range.end() {
                break 'outer;
            }
            if id > x {
                x = id;
                continue 'outer;
            }
        }
        out.push(x);
        x += 1;
    }
    out
}

/// The key of a token's list in a segment: a segment's lists are one range of keys, in token
/// order.
fn key(token: Token, segment: i64) -> i64 {
    (segment << 32) | i64::from(token)
}

/// The range of keys of a segment's lists.
fn keys_of(segment: i64) -> (i64, i64) {
    (key(0, segment), key(u32::MAX, segment))
}

/// The id above every id the projection holds or held: where the next line's id may start.
pub(crate) fn id_floor(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row(
        "SELECT max(coalesce((SELECT max(id) FROM lines), 0),
                    coalesce((SELECT max(last) FROM segments), 0)) + 1",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(1) as u64)
}

/// Writes what `acc` gathered as a new segment, within the caller's transaction.
pub(crate) fn flush(conn: &Connection, acc: &mut Accumulator) -> rusqlite::Result<()> {
    if acc.is_empty() {
        return Ok(());
    }
    let segment: i64 =
        conn.query_row("SELECT coalesce(max(id), 0) + 1 FROM segments", [], |r| {
            r.get(0)
        })?;
    acc.words.write(conn, segment)?;
    let mut lists = Lists::new(conn, segment)?;
    let (first, last, lines, pairs) =
        acc.drain(|token, n, list| lists.put(key(token, segment), n, list))?;
    let head = lists.finish()?;
    put_segment(
        conn,
        &Segment {
            id: segment,
            head,
            first,
            last,
            lines,
            pairs,
        },
    )
}

/// A segment's token lists as they are written, in key order: each row names the key of the
/// row after it in its segment (`next`, the segment's end after the last), with the sum of the
/// two (`link`), so that a key missing from a lookup is proven absent by the row before it
/// ([`lists`]): a row whose key changed is missed by the lookup, but not by its chain.
struct Lists<'c> {
    insert: rusqlite::CachedStatement<'c>,
    /// The row waiting for the key after it.
    pending: Option<(i64, u64, Vec<u8>)>,
    head: Option<i64>,
    end: i64,
}

impl<'c> Lists<'c> {
    fn new(conn: &'c Connection, segment: i64) -> rusqlite::Result<Lists<'c>> {
        Ok(Lists {
            insert: conn.prepare_cached(
                "INSERT INTO postings (key, n, next, link, list)
                 VALUES (?1, ?2, ?3, row_sum(?1, ?3), ?4)",
            )?,
            pending: None,
            head: None,
            end: keys_of(segment).1 + 1,
        })
    }

    /// Adds a token list (its key above the last one's), with its sum ([`sum::seal`]).
    fn put(&mut self, key: i64, n: u64, list: &[u8]) -> rusqlite::Result<()> {
        self.head.get_or_insert(key);
        let mut sealed = list.to_vec();
        sum::seal(key, n as i64, &mut sealed);
        if let Some(before) = self.pending.replace((key, n, sealed)) {
            self.write(before, key)?;
        }
        Ok(())
    }

    fn write(&mut self, (key, n, list): (i64, u64, Vec<u8>), next: i64) -> rusqlite::Result<()> {
        self.insert.execute(params![key, n as i64, next, list])?;
        Ok(())
    }

    /// Writes the last row; the segment's first key.
    fn finish(mut self) -> rusqlite::Result<i64> {
        if let Some(last) = self.pending.take() {
            let end = self.end;
            self.write(last, end)?;
        }
        Ok(self.head.unwrap_or(self.end))
    }
}

/// A token list's bytes as stored, checked and without their sum.
fn get_list(r: &rusqlite::Row<'_>, key: usize, n: usize, list: usize) -> rusqlite::Result<Vec<u8>> {
    sum::unseal(r.get(key)?, r.get(n)?, r.get(list)?)
}

/// Stores a segment's row with its sum.
fn put_segment(conn: &Connection, s: &Segment) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO segments (id, head, first, last, lines, pairs, sum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, row_sum(?1, ?2, ?3, ?4, ?5, ?6))",
    )?
    .execute(params![
        s.id,
        s.head,
        s.first as i64,
        s.last as i64,
        s.lines as i64,
        s.pairs as i64
    ])?;
    Ok(())
}

/// A stored segment.
#[derive(Clone, Copy, Debug)]
struct Segment {
    id: i64,
    /// The key of its first token list.
    head: i64,
    first: u64,
    last: u64,
    lines: u64,
    pairs: u64,
}

/// The ids of every segment, in order, each checked against its sum.
pub(super) fn segment_ids(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    Ok(segments(conn)?.into_iter().map(|s| s.id).collect())
}

/// Every segment, in id order, each checked against its sum.
fn segments(conn: &Connection) -> rusqlite::Result<Vec<Segment>> {
    conn.prepare_cached(&format!(
        "SELECT id, head, first, last, lines, pairs, {} FROM segments s ORDER BY id",
        sum::checked("s", sum::SEGMENT)
    ))?
    .query_map([], |r| {
        sum::whole(r.get(6)?)?;
        Ok(Segment {
            id: r.get(0)?,
            head: r.get(1)?,
            first: r.get::<_, i64>(2)? as u64,
            last: r.get::<_, i64>(3)? as u64,
            lines: r.get::<_, i64>(4)? as u64,
            pairs: r.get::<_, i64>(5)? as u64,
        })
    })?
    .collect()
}

/// How many segments a token's ids may lie in before the newest are merged: a query reads one
/// row per token and segment.
pub(crate) const MAX_SEGMENTS: usize = 12;

/// Which of `segments` (in id order) to merge: always the newest ones, so that segments stay in
/// id order; `None` when they may stay as they are.
///
/// - When removed lines account for a quarter of the lines the segments were written with, all
///   of them, which drops the removed lines' ids.
/// - Past [`MAX_SEGMENTS`], the longest run of newest segments that together hold at most
///   half the pairs of the segment before them (small updates merge among themselves, and the large
///   segments a build wrote are not rewritten for them); when there is none such of two or
///   more, the newer half.
fn plan_merge(segments: &[Segment], live_lines: u64) -> Option<usize> {
    let written: u64 = segments.iter().map(|s| s.lines).sum();
    if segments.len() >= 2 && live_lines.saturating_mul(4) < written.saturating_mul(3)
        || segments.len() == 1 && live_lines.saturating_mul(2) < written
    {
        return Some(0);
    }
    if segments.len() <= MAX_SEGMENTS {
        return None;
    }
    let mut run = 0u64;
    let mut best = None;
    for i in (1..segments.len()).rev() {
        run += segments[i].pairs;
        if run.saturating_mul(2) <= segments[i - 1].pairs && segments.len() - i >= 2 {
            best = Some(i);
        }
    }
    Some(best.unwrap_or(segments.len() / 2))
}

/// Merges segments as [`plan_merge`] says, within the caller's transaction; whether it did.
pub(crate) fn compact(conn: &Connection) -> rusqlite::Result<bool> {
    let all = segments(conn)?;
    let live: i64 = conn.query_row("SELECT count(*) FROM lines", [], |r| r.get(0))?;
    let Some(from) = plan_merge(&all, live as u64) else {
        return Ok(false);
    };
    merge(conn, &all[from..])?;
    Ok(true)
}

/// Merges every segment into one, dropping the ids of removed lines.
#[cfg(test)]
pub(crate) fn merge_all(conn: &Connection) -> rusqlite::Result<()> {
    merge(conn, &segments(conn)?)
}

/// Merges `run`, the newest segments, into one with a new id, keeping only the ids of lines
/// that still exist.
/// Kept whole: every list of the run is filtered by the bitmap of live ids built first.
fn merge(conn: &Connection, run: &[Segment]) -> rusqlite::Result<()> {
    let (Some(oldest), Some(newest)) = (run.first(), run.last()) else {
        return Ok(());
    };
    let (lo, hi) = (oldest.first, run.iter().map(|s| s.last).max().unwrap_or(0));
    // The lines that still exist in the run's range of ids, as a bit per id.
    let mut live = vec![0u64; ((hi - lo) / 64 + 1) as usize];
    let mut lines = 0u64;
    {
        let mut stmt = conn.prepare(&format!(
            "SELECT id, {} FROM lines l WHERE id BETWEEN ?1 AND ?2",
            sum::checked("l", sum::LINE)
        ))?;
        let mut rows = stmt.query(params![lo as i64, hi as i64])?;
        while let Some(r) = rows.next()? {
            sum::whole(r.get(1)?)?;
            let at = r.get::<_, i64>(0)? as u64 - lo;
            live[(at / 64) as usize] |= 1 << (at % 64);
            lines += 1;
        }
    }
    let is_live = |id: u64| {
        id >= lo && id <= hi && {
            let at = id - lo;
            live[(at / 64) as usize] & (1 << (at % 64)) != 0
        }
    };
    let segment = newest.id + 1;
    let mut lists = Lists::new(conn, segment)?;
    let mut pairs = 0u64;
    {
        // Each segment's lists in token order, merged: a token's lists meet in segment order.
        let mut stmts = Vec::with_capacity(run.len());
        for _ in run {
            stmts.push(
                conn.prepare("SELECT key, n, list FROM postings WHERE key BETWEEN ?1 AND ?2")?,
            );
        }
        let mut streams = Vec::with_capacity(run.len());
        for (stmt, s) in stmts.iter_mut().zip(run) {
            let (a, b) = keys_of(s.id);
            streams.push(stmt.query(params![a, b])?);
        }
        let mut heads: Vec<Option<(Token, Vec<u8>)>> = Vec::with_capacity(run.len());
        let next = |rows: &mut rusqlite::Rows<'_>| -> rusqlite::Result<Option<(Token, Vec<u8>)>> {
            Ok(match rows.next()? {
                Some(r) => Some((
                    (r.get::<_, i64>(0)? & 0xffff_ffff) as Token,
                    get_list(r, 0, 1, 2)?,
                )),
                None => None,
            })
        };
        for rows in streams.iter_mut() {
            heads.push(next(rows)?);
        }
        let (mut ids, mut bytes) = (Vec::new(), Vec::new());
        while let Some(t) = heads.iter().flatten().map(|(t, _)| *t).min() {
            ids.clear();
            for (head, rows) in heads.iter_mut().zip(streams.iter_mut()) {
                if head.as_ref().is_some_and(|(h, _)| *h == t) {
                    if let Some((_, list)) = head.take() {
                        let mut list = List::new(list);
                        while list.id() != u64::MAX {
                            if is_live(list.id()) {
                                ids.push(list.id());
                            }
                            list.step();
                        }
                    }
                    *head = next(rows)?;
                }
            }
            if !ids.is_empty() {
                encode(&ids, &mut bytes);
                lists.put(key(t, segment), ids.len() as u64, &bytes)?;
                pairs += ids.len() as u64;
            }
        }
    }
    if pairs > 0 {
        let ids: Vec<i64> = run.iter().map(|s| s.id).collect();
        super::words::merge(conn, &ids, segment, &is_live)?;
    }
    super::words::delete(conn, oldest.id, newest.id)?;
    let (a, _) = keys_of(oldest.id);
    let (_, b) = keys_of(newest.id);
    conn.execute(
        "DELETE FROM postings WHERE key BETWEEN ?1 AND ?2",
        params![a, b],
    )?;
    conn.execute(
        "DELETE FROM segments WHERE id BETWEEN ?1 AND ?2",
        params![oldest.id, newest.id],
    )?;
    // The removed lines' ids are in no list now.
    conn.execute(
        "DELETE FROM gone WHERE id BETWEEN ?1 AND ?2",
        params![lo as i64, hi as i64],
    )?;
    let head = lists.finish()?;
    if pairs > 0 {
        let merged = Segment {
            id: segment,
            head,
            first: lo,
            last: hi,
            lines,
            pairs,
        };
        put_segment(conn, &merged)?;
    }
    Ok(())
}

/// Reads every segment and token list, each checked against its sum and its segment's chain:
/// the error of the first that fails.
pub(crate) fn verify(conn: &Connection) -> rusqlite::Result<()> {
    let all = segments(conn)?;
    let ids: Vec<i64> = all.iter().map(|s| s.id).collect();
    super::words::verify(conn, &ids)?;
    for segment in all {
        let (first, last) = keys_of(segment.id);
        let mut stmt = conn.prepare_cached(
            "SELECT key, n, list, next, link = row_sum(key, next) FROM postings
             WHERE key BETWEEN ?1 AND ?2 ORDER BY key",
        )?;
        let mut rows = stmt.query(params![first, last])?;
        // Each row is where the one before says the next is.
        let mut expected = segment.head;
        while let Some(r) = rows.next()? {
            get_list(r, 0, 1, 2)?;
            sum::whole(r.get::<_, i64>(0)? == expected && r.get(4)?)?;
            expected = r.get(3)?;
        }
        sum::whole(expected == last + 1)?;
    }
    let strays: i64 = conn.query_row(
        "SELECT count(*) FROM postings WHERE key >> 32 NOT IN (SELECT id FROM segments)",
        [],
        |r| r.get(0),
    )?;
    sum::whole(strays == 0)
}

/// How many of the tokens a query's candidates are intersected over, the rarest first: any
/// subset of a query's tokens is exact ([`crate::tokens`]), and beyond a few more only cost
/// reading their lists.
const MAX_TERMS: usize = 8;

/// The ids in `range` of the lines holding every one of `tokens` (or of the rarest
/// [`MAX_TERMS`] of them), in order.
pub(crate) fn candidates(
    conn: &Connection,
    tokens: &[Token],
    range: std::ops::RangeInclusive<u64>,
) -> rusqlite::Result<Vec<u64>> {
    if !tokens.is_empty() {
        return Ok(lists(conn, tokens)?.within(range));
    }
    // No token to require: every line in the range.
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, {} FROM lines l WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
        sum::checked("l", sum::LINE)
    ))?;
    let ids = stmt
        .query_map(
            params![
                *range.start() as i64,
                (*range.end()).min(i64::MAX as u64) as i64
            ],
            |r| {
                sum::whole(r.get(1)?)?;
                r.get::<_, i64>(0)
            },
        )?
        .map(|id| id.map(|id| id as u64))
        .collect();
    ids
}

/// A query's token lists, read (and checked) once: the ids that every one of them holds, over
/// any range of ids, on demand.
#[derive(Clone, Debug, Default)]
pub struct TokenLists {
    /// Per token, its lists in segment order, each at its start.
    terms: Vec<Vec<List>>,
    /// How many ids the token with the fewest holds; 0 when one holds none (no line holds
    /// them all).
    pub(crate) rarest: u64,
}

impl TokenLists {
    /// The ids in `range` that every token's lists hold, in order.
    pub fn within(&self, range: std::ops::RangeInclusive<u64>) -> Vec<u64> {
        if self.rarest == 0 {
            return Vec::new();
        }
        let terms = (self.terms.iter())
            .map(|lists| Term::new(lists.clone()))
            .collect();
        intersect(terms, range)
    }
}

/// The lists of `tokens` (not empty), the rarest [`MAX_TERMS`] of them.
pub(crate) fn lists(conn: &Connection, tokens: &[Token]) -> rusqlite::Result<TokenLists> {
    // Three statements whatever the number of tokens and segments: each statement is a read
    // transaction of its own, with its locks.
    let segments = segments(conn)?;
    let keys = |tokens: &mut dyn Iterator<Item = Token>| -> Vec<i64> {
        tokens
            .flat_map(|t| segments.iter().map(move |s| key(t, s.id)))
            .collect()
    };
    let array =
        |keys: &[i64]| -> Array { Rc::new(keys.iter().map(|&k| Value::Integer(k)).collect()) };
    let mut counts: HashMap<Token, i64> = tokens.iter().map(|&t| (t, 0)).collect();
    // Each key's row, or the row before it in its segment: a key not found is absent only if
    // its segment's chain says so (the row before names a later key as its next, or there is
    // none and the segment's first key is later), for damage to a key hides a list from the
    // lookup, not from the chain. One statement for every key, found or not.
    let asked = keys(&mut tokens.iter().copied());
    let mut unmet: std::collections::HashSet<i64> = asked.iter().copied().collect();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT a.value, p.key, p.n, p.next, p.link = row_sum(p.key, p.next)
             FROM rarray(?1) a JOIN postings p ON p.key = (
                 SELECT max(key) FROM postings WHERE key <= a.value AND key >= a.value >> 32 << 32
             )",
        )?;
        let mut rows = stmt.query([array(&asked)])?;
        while let Some(r) = rows.next()? {
            let (sought, k) = (r.get::<_, i64>(0)?, r.get::<_, i64>(1)?);
            unmet.remove(&sought);
            if k < sought {
                let (next, whole) = (r.get::<_, i64>(3)?, r.get::<_, bool>(4)?);
                if !(whole && next > sought) {
                    return Err(sum::corrupt());
                }
                continue;
            }
            // A stored list is never empty: a count that says so is damage, not an absence.
            let n = r.get::<_, i64>(2)?;
            if n <= 0 {
                return Err(sum::corrupt());
            }
            *counts.entry((k & 0xffff_ffff) as Token).or_default() += n;
        }
    }
    // No row at or before a key in its segment: absent if the segment starts after it.
    for k in unmet {
        let head = segments.iter().find(|s| s.id == k >> 32).map(|s| s.head);
        if head.is_none_or(|head| head <= k) {
            return Err(sum::corrupt());
        }
    }
    if counts.values().any(|&n| n == 0) {
        return Ok(TokenLists::default());
    }
    let mut rarest: Vec<(i64, Token)> = counts.into_iter().map(|(t, n)| (n, t)).collect();
    rarest.sort_unstable();
    rarest.truncate(MAX_TERMS);
    let mut lists: Vec<(Token, i64, Vec<u8>)> = Vec::new();
    {
        let mut stmt =
            conn.prepare_cached("SELECT key, n, list FROM postings WHERE key IN rarray(?1)")?;
        let mut rows = stmt.query([array(&keys(&mut rarest.iter().map(|&(_, t)| t)))])?;
        while let Some(r) = rows.next()? {
            let k = r.get::<_, i64>(0)?;
            lists.push(((k & 0xffff_ffff) as Token, k >> 32, get_list(r, 0, 1, 2)?));
        }
    }
    // Each token's lists in segment order.
    lists.sort_unstable_by_key(|&(t, segment, _)| (t, segment));
    let mut terms = Vec::new();
    let mut lists = lists.into_iter().peekable();
    while let Some((t, _, bytes)) = lists.next() {
        let mut found = vec![List::new(bytes)];
        while let Some((_, _, bytes)) = lists.next_if(|(next, _, _)| *next == t) {
            found.push(List::new(bytes));
        }
        terms.push(found);
    }
    Ok(TokenLists {
        terms,
        rarest: rarest.first().map_or(0, |&(n, _)| n as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &mut List) -> Vec<u64> {
        let mut out = Vec::new();
        while list.id() != u64::MAX {
            out.push(list.id());
            list.step();
        }
        out
    }

    #[test]
    fn a_list_gives_back_its_ids_and_seeks_to_each() {
        for n in [1usize, 2, 127, 128, 129, 300, 1000] {
            let want: Vec<u64> = (0..n as u64).map(|i| 5 + i * 3 + (i * i) % 3).collect();
            let mut bytes = Vec::new();
            encode(&want, &mut bytes);
            assert_eq!(ids(&mut List::new(bytes.clone())), want, "{n}");
            for (i, &target) in want.iter().enumerate() {
                let mut list = List::new(bytes.clone());
                list.seek(target);
                assert_eq!(list.id(), target);
                let mut list = List::new(bytes.clone());
                list.seek(target - 1);
                assert_eq!(
                    list.id(),
                    if i > 0 && want[i - 1] == target - 1 {
                        target - 1
                    } else {
                        target
                    }
                );
            }
            let mut list = List::new(bytes.clone());
            list.seek(want[n - 1] + 1);
            assert_eq!(list.id(), u64::MAX);
        }
    }

    /// Ids whose gaps change from block to block: dense runs (bitmaps), sparse ones (deltas),
    /// and gaps of millions, from a seeded generator.
    fn mixed(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut id = next() % 1000;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let gap = match (i / 100) % 4 {
                0 => 1 + next() % 2,
                1 => 1 + next() % 40,
                2 => 1 + next() % 9,
                _ => 1 + next() % 3_000_000,
            };
            id += gap;
            out.push(id);
        }
        out
    }

    #[test]
    fn bitmap_and_delta_blocks_give_back_their_ids_through_steps_and_seeks() {
        for (n, seed) in [(1, 1), (2, 2), (129, 3), (1000, 4), (5000, 5), (20_000, 6)] {
            let want = mixed(n, seed);
            let mut bytes = Vec::new();
            encode(&want, &mut bytes);
            assert_eq!(ids(&mut List::new(bytes.clone())), want, "{n}");
            // Steps and seeks in turn, to targets on, before and between ids.
            let mut list = List::new(bytes.clone());
            let mut x = seed;
            let mut target = want[0].saturating_sub(3);
            while target <= want[n - 1] + 1 {
                list.seek(target);
                let at = want.partition_point(|&id| id < target);
                assert_eq!(
                    list.id(),
                    want.get(at).copied().unwrap_or(u64::MAX),
                    "{n} {target}"
                );
                if at + 1 < n && x % 3 == 0 {
                    list.step();
                    assert_eq!(list.id(), want[at + 1]);
                }
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Mostly a few ids ahead, now and then a few blocks.
                let ahead = match x >> 62 {
                    0 => (x >> 20) % 5_000,
                    _ => (x >> 56) & 7,
                };
                target = list.id().saturating_add(ahead);
            }
        }
        // Dense lists take their bitmaps' size, sparse ones their deltas'.
        let mut bytes = Vec::new();
        encode(
            &(1..=100_000).map(|i| i * 2).collect::<Vec<_>>(),
            &mut bytes,
        );
        assert!(bytes.len() < 30_000, "{} (100,000 as deltas)", bytes.len());
        encode(
            &(1..=10_000).map(|i| i * 1000).collect::<Vec<_>>(),
            &mut bytes,
        );
        assert!(bytes.len() > 10_000 * 2, "{}", bytes.len());
    }

    #[test]
    fn damaged_lists_end_without_a_panic() {
        let mut x = 7u64;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..2_000 {
            let mut bytes = Vec::new();
            encode(&mixed(1 + round % 700, round as u64 + 1), &mut bytes);
            for _ in 0..1 + next() % 4 {
                let at = next() as usize % bytes.len();
                bytes[at] = next() as u8;
            }
            bytes.truncate(bytes.len() - next() as usize % 3);
            let mut list = List::new(bytes);
            for _ in 0..2_000 {
                match next() % 3 {
                    0 => list.seek(list.id().saturating_add(next() % 3_000)),
                    _ => list.step(),
                }
                if list.id() == u64::MAX {
                    break;
                }
            }
        }
    }

    #[test]
    fn the_accumulator_gives_each_token_its_lines() {
        let mut acc = Accumulator::default();
        acc.reset(10);
        let mut want: std::collections::BTreeMap<Token, Vec<u64>> = Default::default();
        for line in 0..2000u32 {
            let tokens: Vec<Token> = (0..(line % 13))
                .map(|k| (line * 7 + k * 1031) % 97)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let id = acc.line(&tokens);
            assert_eq!(id, 10 + u64::from(line));
            for t in tokens {
                want.entry(t).or_default().push(id);
            }
        }
        let mut got: std::collections::BTreeMap<Token, Vec<u64>> = Default::default();
        let segment = acc
            .drain(|t, n, bytes| {
                let v = ids(&mut List::new(bytes.to_vec()));
                assert_eq!(v.len() as u64, n);
                got.insert(t, v);
                Ok(())
            })
            .unwrap();
        assert_eq!(got, want);
        assert_eq!((segment.0, segment.1, segment.2), (10, 2009, 2000));
        assert!(acc.is_empty());
    }

    #[test]
    fn intersect_finds_what_every_term_holds() {
        let list = |v: &[u64]| {
            let mut b = Vec::new();
            encode(v, &mut b);
            List::new(b)
        };
        let a: Vec<u64> = (1..5000).filter(|i| i % 3 == 0).collect();
        let b: Vec<u64> = (1..5000).filter(|i| i % 5 == 0).collect();
        let (a1, a2) = a.split_at(700);
        let terms = vec![
            Term::new(vec![list(a1), list(a2)]),
            Term::new(vec![list(&b)]),
        ];
        let want: Vec<u64> = (1..5000)
            .filter(|i| i % 15 == 0 && (100..=4000).contains(i))
            .collect();
        assert_eq!(intersect(terms, 100..=4000), want);
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    fn segs(pairs: &[u64]) -> Vec<Segment> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, &p)| Segment {
                id: i as i64 + 1,
                head: key(0, i as i64 + 1),
                first: i as u64 * 10 + 1,
                last: i as u64 * 10 + 10,
                lines: 10,
                pairs: p,
            })
            .collect()
    }

    #[test]
    fn few_segments_stay_and_small_new_ones_merge_among_themselves() {
        assert_eq!(plan_merge(&segs(&[900, 800, 5, 5]), 40), None);
        let mut many = vec![1000, 900, 800];
        many.extend([10; 10]);
        // The ten small ones, not the large ones before them.
        assert_eq!(plan_merge(&segs(&many), 130), Some(3));
        // As large as one another: the newer half.
        assert_eq!(plan_merge(&segs(&[100; 13]), 130), Some(6));
    }

    #[test]
    fn many_removed_lines_merge_everything() {
        assert_eq!(plan_merge(&segs(&[900, 800]), 14), Some(0));
        assert_eq!(plan_merge(&segs(&[900, 800]), 16), None);
        assert_eq!(plan_merge(&segs(&[900]), 4), Some(0));
        assert_eq!(plan_merge(&segs(&[900]), 6), None);
        assert_eq!(plan_merge(&[], 0), None);
    }
}
