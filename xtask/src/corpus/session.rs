//! What every harness's session writer shares: the file, the clock, the filler and the needles.

use std::io;
use std::path::Path;

use super::json::{self, Sink};
use super::needle::{Hit, Needle, Planter, Slot};
use super::rng::Rng;
use super::text::{Pools, Style};

/// What a generator is asked to write.
pub struct Spec {
    /// Where this session's randomness comes from.
    pub rng: Rng,
    /// About how many bytes to write (more if needles are still waiting).
    pub target: u64,
    /// The time of the first line, in ms since the epoch.
    pub start_ms: i64,
    /// The working directory the agent ran in.
    pub cwd: &'static str,
    pub needles: Vec<Needle>,
}

/// One written session file.
pub struct Written {
    /// The session id (the part after `<harness>:`).
    pub id: String,
    /// The file, relative to the harness root.
    pub rel: String,
    pub bytes: u64,
    pub hits: Vec<Hit>,
    /// Needles planted on abandoned branches.
    pub trapped: Vec<Hit>,
}

/// A session file being written.
pub struct Writer<'a> {
    pub rng: Rng,
    pub pools: &'a Pools,
    pub out: Sink,
    pub planter: Planter,
    /// The clock: the time of the line being written.
    pub now: i64,
    target: u64,
    /// A buffer for text that is written more than once or escaped twice.
    pub scratch: Vec<u8>,
}

impl<'a> Writer<'a> {
    pub fn create(spec: Spec, pools: &'a Pools, path: &Path) -> io::Result<Writer<'a>> {
        Ok(Writer {
            rng: spec.rng,
            pools,
            out: Sink::create(path)?,
            planter: Planter::new(spec.needles, spec.target),
            now: spec.start_ms,
            target: spec.target,
            scratch: Vec::with_capacity(1 << 16),
        })
    }

    /// Moves the clock on by a log-uniform number of milliseconds.
    pub fn advance(&mut self, lo_ms: u64, hi_ms: u64) -> i64 {
        self.now += self.rng.log_uniform(lo_ms, hi_ms) as i64;
        self.now
    }

    /// Whether, after `turns` turns, the session should stop: all its needles are planted and
    /// another turn (of the average size so far) would overshoot the target by more than it
    /// would fall short.
    pub fn full(&self, turns: u64) -> bool {
        let bytes = self.out.bytes();
        turns > 0 && self.planter.done() && bytes + bytes / turns / 2 >= self.target
    }

    pub fn wants(&self, slot: Slot) -> bool {
        self.planter.wants(slot, self.out.bytes())
    }

    pub fn take(&mut self, slot: Slot) -> Option<Needle> {
        self.planter.take(slot, self.out.bytes())
    }

    /// Records a planted needle on line `seq`; `nested` when it sits in a JSON-encoded string.
    pub fn record(&mut self, needle: Needle, seq: u64, mirror_seq: Option<u64>, nested: bool) {
        let raw = if nested {
            let mut v = Vec::new();
            json::esc(&mut v, needle.raw.as_bytes());
            String::from_utf8(v).expect("escaping keeps UTF-8")
        } else {
            needle.raw.clone()
        };
        self.planter.record(needle, seq, mirror_seq, raw);
    }

    /// Appends about `len` bytes of escaped filler to the current line, with the needle (if any)
    /// somewhere inside, surrounded by spaces.
    pub fn text(&mut self, style: Style, len: usize, needle: Option<&Needle>) {
        fill(
            self.pools,
            &mut self.rng,
            style,
            len,
            needle,
            &mut self.out.line,
        );
    }

    /// [`Writer::text`] into the scratch buffer, for text written more than once.
    pub fn scratch_text(&mut self, style: Style, len: usize, needle: Option<&Needle>) {
        fill(
            self.pools,
            &mut self.rng,
            style,
            len,
            needle,
            &mut self.scratch,
        );
    }

    /// How many more steps (tool rounds) a turn may take: long turns in long sessions, short
    /// ones where the session is nearly at its size (a small session stays small).
    pub fn max_steps(&self) -> u32 {
        let room = self.target.saturating_sub(self.out.bytes());
        (room / (12 << 10)).clamp(1, 14) as u32
    }

    /// A tool output length: mostly short, a long tail up to `cap` (and to half the room left).
    pub fn output_len(&mut self, cap: usize) -> usize {
        let room = self.target.saturating_sub(self.out.bytes()) as usize;
        let cap = cap.min((room / 2).max(1_500));
        let u = self.rng.unit();
        let n = if u < 0.62 {
            self.rng.log_uniform(40, 2_500)
        } else if u < 0.93 {
            self.rng.log_uniform(2_500, 20_000)
        } else {
            self.rng.log_uniform(20_000, 200_000)
        };
        (n as usize).min(cap)
    }

    /// A prose length: mostly a few hundred bytes.
    pub fn prose_len(&mut self, lo: u64, hi: u64) -> usize {
        self.rng.log_uniform(lo, hi) as usize
    }

    /// Ends the current line.
    pub fn end(&mut self) -> io::Result<()> {
        self.out.end()
    }

    /// Closes the file (mtime = the clock) and reports it.
    pub fn finish(self, id: String, rel: String) -> io::Result<Written> {
        let bytes = self.out.finish(self.now)?;
        Ok(Written {
            id,
            rel,
            bytes,
            hits: self.planter.hits,
            trapped: self.planter.trapped,
        })
    }
}

/// Appends about `len` bytes of escaped filler to `out` with the needle (if any) inside.
pub fn fill(
    pools: &Pools,
    rng: &mut Rng,
    style: Style,
    len: usize,
    needle: Option<&Needle>,
    out: &mut Vec<u8>,
) {
    let Some(needle) = needle else {
        pools.fill(rng, style, len, out);
        return;
    };
    let before = match rng.below(3) {
        0 => 0,
        1 => len / 2,
        _ => len.saturating_sub(40),
    };
    if before > 0 {
        pools.fill(rng, style, before, out);
        out.push(b' ');
    }
    out.extend_from_slice(needle.raw.as_bytes());
    let after = len.saturating_sub(before);
    if after > 0 {
        out.push(b' ');
        pools.fill(rng, style, after, out);
    }
}
