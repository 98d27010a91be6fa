//! Deciding from a file's raw bytes, before any JSON parsing, whether it can hold a hit.
//!
//! The decision is conservative: it may say yes wrongly (the decoder then finds nothing), never
//! no wrongly. A query is reduced to its *key*, the rarest of its *segments* (the maximal runs
//! of ASCII letters in its folded form), judged by length and letter frequency. A decoded match
//! of the query contains the key, and each letter of the key came from one of:
//! - the same letter in the file, in either case (found by an ASCII case-insensitive search);
//! - a JSON escape (`\u0061`), or a non-ASCII character whose full case folding yields ASCII
//!   letters (`K` Kelvin → `k`, `ſ` → `s`, `ß` → `ss`, `ﬁ` → `fi`, `İ` → `i̇`…), a *hatch*:
//!   where one occurs, the letters of the run through it are read in place ([`crate::letters`])
//!   and the key looked for among them, so that German text or ligatures cost what plain text
//!   costs.
//!
//! Digits, punctuation, spaces and non-ASCII characters are never required: decoders render
//! numbers and join fields in their own way. A query with no required segment passes every file.
//! A first read looks for the key and the hatches in one pass per chunk; only a file that holds
//! the key is read again for the query's other segments. The same test applies to single lines
//! ([`RawFilter::may_match_slice`], [`RawFilter::candidate_lines`]), for decoders and for the
//! search's ranking of sessions.

use std::io::Read;

use crate::fold::ASCII_FOLDING;
use crate::letters;
use crate::needle::{surprisal, AsciiNeedle};
use crate::pairs::{Found, Pairs, MAX_KEYS};
use crate::MAX_LINE_BYTES;

/// The chunk a file is read in: small enough to stay in cache across the passes over it.
const CHUNK: usize = 256 * 1024;

/// A read buffer, handed back to its thread when dropped: a search over many small files
/// zeroes and maps one buffer per thread rather than one per file.
struct Spare(Vec<u8>);

thread_local! {
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Spare {
    /// This thread's spare buffer (another when it is in use), at least `len` bytes long.
    fn take(len: usize) -> Spare {
        let mut buf = SPARE.take();
        if buf.len() < len {
            buf.resize(len, 0);
        }
        Spare(buf)
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        // One grown for a long line is let go.
        if self.0.len() <= 2 * CHUNK {
            SPARE.set(std::mem::take(&mut self.0));
        }
    }
}

impl std::ops::Deref for Spare {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl std::ops::DerefMut for Spare {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

/// A compiled raw-bytes test for a set of folded queries.
#[derive(Debug)]
pub struct RawFilter {
    /// Every query's key (ASCII case-insensitive searches).
    keys: Vec<AsciiNeedle>,
    /// Per query, a search for each of its segments.
    segments: Vec<Vec<AsciiNeedle>>,
    /// Per query, per segment, the hatches of its letters alone.
    hatches_of: Vec<Vec<Hatches>>,
    /// Whether every query has one segment only (its key): then a key found decides.
    single: bool,
    /// What stands for the keys' letters otherwise: one occurrence makes a candidate.
    hatches: Hatches,
    /// Some query has no required segment: every file is a candidate.
    always: bool,
    /// The most bytes a match can take: reads overlap by this much less one.
    overlap: usize,
    /// The longest segment, in letters: how far the letters around a hatch are read.
    reach: usize,
}

/// How rarely a segment of ASCII letters should occur in text: the sum of its letters'
/// [`surprisal`], so that longer segments and rarer letters score higher.
fn rarity(segment: &str) -> u32 {
    segment.bytes().map(surprisal).sum()
}

/// The required segments of one folded query.
pub fn segments(folded: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for seg in folded.split(|c: char| !c.is_ascii_alphabetic()) {
        if !seg.is_empty() && !out.iter().any(|s| s == seg) {
            out.push(seg.to_string());
        }
    }
    out
}

/// What can stand for a query's letters in a file other than the letters themselves: `\uXXXX`
/// escapes of the letters (either case) and of the non-ASCII characters that fold to them, and
/// those characters written out.
#[derive(Debug)]
struct Hatches {
    /// Code points whose `\uXXXX` escape counts.
    escaped: Vec<u32>,
    /// The non-ASCII characters that count, written out (UTF-8).
    written: Vec<Vec<u8>>,
    /// Where a hatch may start: `\u`, or the first two bytes of a written character.
    starts: Pairs,
}

impl Hatches {
    fn new(letters: &[char]) -> Hatches {
        let mut escaped = Vec::new();
        let mut written = Vec::new();
        for &letter in letters {
            escaped.push(letter.to_ascii_lowercase() as u32);
            escaped.push(letter.to_ascii_uppercase() as u32);
            for (c, folded) in ASCII_FOLDING {
                if folded.contains(letter) && !escaped.contains(&(*c as u32)) {
                    escaped.push(*c as u32);
                    written.push(c.to_string().into_bytes());
                }
            }
        }
        let mut starts = vec![*b"\\u"];
        starts.extend(written.iter().map(|w| [w[0], w[1]]));
        Hatches {
            escaped,
            written,
            starts: Pairs::new(starts),
        }
    }

    /// Whether a hatch starts `bytes` (whose first two bytes start one, or an escape).
    fn at(&self, bytes: &[u8]) -> bool {
        if bytes.first() == Some(&b'\\') {
            return self.escapes_letter(bytes);
        }
        // The two bytes compared first spare most candidates a call to compare the rest.
        self.written
            .iter()
            .any(|w| bytes.get(..2) == w.get(..2) && bytes.starts_with(w))
    }

    /// Whether `bytes` start with the `\uXXXX` escape of a character that counts.
    fn escapes_letter(&self, bytes: &[u8]) -> bool {
        let hex = bytes.get(2..6).filter(|_| bytes.starts_with(b"\\u"));
        hex.and_then(crate::json::hex4)
            .is_some_and(|cp| self.escaped.contains(&cp))
    }
}

/// The longest hatch (`\uXXXX`), in bytes, and the most bytes that one letter of a match can
/// take in a file.
const LONGEST_HATCH: usize = 6;

impl RawFilter {
    /// Compiles the test for `folded` queries (an OR).
    pub fn new(folded: &[String]) -> RawFilter {
        let per_query: Vec<Vec<String>> = folded.iter().map(|q| segments(q)).collect();
        let mut keys: Vec<AsciiNeedle> = per_query
            .iter()
            .filter_map(|segs| segs.iter().max_by_key(|s| rarity(s)))
            .filter_map(|key| AsciiNeedle::new(key))
            .collect();
        keys.dedup_by(|a, b| a.needle() == b.needle());
        // Rarest first: a search for all of them stops at the first one missing.
        let segments: Vec<Vec<AsciiNeedle>> = per_query
            .iter()
            .map(|segs| {
                let mut segs: Vec<&String> = segs.iter().collect();
                segs.sort_by_key(|s| std::cmp::Reverse(rarity(s)));
                segs.into_iter()
                    .filter_map(|s| AsciiNeedle::new(s))
                    .collect()
            })
            .collect();
        let compiled = segments
            .iter()
            .zip(&per_query)
            .all(|(r, s)| r.len() == s.len());
        // The first read looks for the keys alone: the hatches of their letters (the second
        // read has each segment's own).
        let mut letters: Vec<char> = (keys.iter())
            .flat_map(|k| k.needle().iter().map(|&b| char::from(b)))
            .collect();
        letters.sort_unstable();
        letters.dedup();
        let reach = per_query
            .iter()
            .flatten()
            .map(String::len)
            .max()
            .unwrap_or(1);
        RawFilter {
            always: per_query.is_empty() || per_query.iter().any(Vec::is_empty) || !compiled,
            single: per_query.iter().all(|s| s.len() == 1),
            hatches_of: segments
                .iter()
                .map(|query| {
                    let letters = |s: &AsciiNeedle| -> Vec<char> {
                        s.needle().iter().map(|&b| char::from(b)).collect()
                    };
                    query.iter().map(|s| Hatches::new(&letters(s))).collect()
                })
                .collect(),
            keys,
            segments,
            hatches: Hatches::new(&letters),
            // A match, each of its letters written out or escaped, fits in one read.
            overlap: LONGEST_HATCH * reach,
            reach,
        }
    }

    /// Whether every file passes (nothing to test).
    pub fn passes_everything(&self) -> bool {
        self.always
    }

    /// Whether the bytes `open` yields can hold a hit. Reads with a bounded buffer and stops as
    /// soon as the answer is known; an error answers yes (the decoder will report it).
    ///
    /// A first read looks for the keys, written out or running through a hatch, in one pass
    /// per chunk: a file without any is out. When a key turns up and its query has other
    /// segments, `open` is called again and the file read for every segment of every query.
    pub fn may_match<R: Read>(&self, mut open: impl FnMut() -> std::io::Result<R>) -> bool {
        if self.always {
            return true;
        }
        let first = self.read(open(), |chunk| self.first_key(chunk, 0, false).is_some());
        if !first || self.single {
            return first;
        }
        let mut found = self.nothing_found();
        self.read(open(), |chunk| self.seen(chunk, false, &mut found))
    }

    /// Whether `bytes`, one or more whole lines, can hold a hit.
    pub fn may_match_slice(&self, bytes: &[u8]) -> bool {
        self.always
            || (self.first_key(bytes, 0, true)).is_some_and(|(_, key)| self.key_line(bytes, key))
    }

    /// Whether `line`, known to hold a key (written out: `key`, its index), can hold a hit: every
    /// segment of a query is there.
    fn key_line(&self, line: &[u8], key: Option<usize>) -> bool {
        self.single || self.has_segments(line, true, key)
    }

    /// Whether some query has all of its segments in `bytes`, which hold `key` (its index)
    /// written out.
    fn has_segments(&self, bytes: &[u8], start_known: bool, key: Option<usize>) -> bool {
        let mut found = self.nothing_found();
        if let Some(key) = key.map(|k| self.keys[k].needle()) {
            let segments = self.segments.iter().zip(found.iter_mut());
            for (s, f) in segments.flat_map(|(query, found)| query.iter().zip(found.iter_mut())) {
                *f |= s.needle() == key;
            }
        }
        self.seen(bytes, start_known, &mut found)
    }

    /// Looks at `bytes` for every segment not `found` yet, remembering which were seen: written
    /// out, or running through a hatch of its own letters, in one pass a segment. True once a
    /// query has all of its segments. `start_known`: `bytes` starts at a line's start.
    fn seen(&self, bytes: &[u8], start_known: bool, found: &mut [Vec<bool>]) -> bool {
        let mut run = Vec::new();
        let queries = self.segments.iter().zip(&self.hatches_of);
        for ((query, hatches), found) in queries.zip(found.iter_mut()) {
            for ((p, hatches), f) in query.iter().zip(hatches).zip(found.iter_mut()) {
                if !*f {
                    // Letters that cannot be known may be the segment's.
                    let mut keep = |i: usize| {
                        hatches.at(&bytes[i..])
                            && self.runs_through(
                                bytes,
                                i,
                                start_known,
                                std::slice::from_ref(p),
                                &mut run,
                            )
                    };
                    *f = hatches.starts.find_with(p, bytes, 0, &mut keep).is_some();
                }
            }
            if found.iter().all(|f| *f) {
                return true;
            }
        }
        false
    }

    /// Whether one of `needles` is in the run of letters through the hatch at `at`, or that run
    /// cannot be known from `bytes`.
    fn runs_through(
        &self,
        bytes: &[u8],
        at: usize,
        start_known: bool,
        needles: &[AsciiNeedle],
        run: &mut Vec<u8>,
    ) -> bool {
        let through =
            |n: &AsciiNeedle| letters::may_run_through(bytes, at, start_known, n.needle());
        needles.iter().any(through)
            && (!letters::run_through(bytes, at, self.reach, start_known, run)
                || needles
                    .iter()
                    .any(|n| memchr::memmem::find(run, n.needle()).is_some()))
    }

    /// Streams `reader` chunk by chunk (overlapping, so that no match is split) until `look`
    /// says yes; false at the end. An error opening or reading answers yes.
    fn read<R: Read>(
        &self,
        reader: std::io::Result<R>,
        mut look: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        let Ok(mut reader) = reader else {
            return true;
        };
        let mut buf = Spare::take(CHUNK + self.overlap);
        let mut kept = 0;
        loop {
            let n = match reader.read(&mut buf[kept..]) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            };
            let end = kept + n;
            if look(&buf[..end]) {
                return true;
            }
            kept = (self.overlap - 1).min(end);
            buf.copy_within(end - kept..end, 0);
        }
    }

    /// Streams `reader` and hands `found` every line (without its newline) that can hold a hit,
    /// as [`RawFilter::may_match_slice`] judges it, in file order. The buffer grows only to hold
    /// one line; a line over [`MAX_LINE_BYTES`] is an error, as it is to a decoder.
    pub fn candidate_lines<R: Read>(
        &self,
        mut reader: R,
        mut found: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let mut buf = Spare::take(CHUNK);
        // buf[start..end] is read but not yet looked at: the lines after the last newline seen.
        let (mut start, mut end) = (0, 0);
        loop {
            if end == buf.len() {
                if start > 0 {
                    buf.copy_within(start..end, 0);
                    (start, end) = (0, end - start);
                } else if buf.len() > MAX_LINE_BYTES {
                    return Err(std::io::Error::other("a line over 64 MiB"));
                } else {
                    let grown = buf.len() * 2;
                    buf.resize(grown, 0);
                }
            }
            let n = match reader.read(&mut buf[end..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.lines_in(&buf[start..end], &mut found);
                return Ok(());
            }
            if let Some(i) = memchr::memrchr(b'\n', &buf[end..end + n]) {
                let cut = end + i + 1;
                self.lines_in(&buf[start..cut], &mut found);
                start = cut;
            }
            end += n;
        }
    }

    /// [`RawFilter::candidate_lines`] over whole lines in memory: only the lines that hold a key
    /// are looked at, and none once it shows that no query has every segment somewhere in
    /// `lines`.
    fn lines_in(&self, lines: &[u8], found: &mut impl FnMut(&[u8])) {
        if self.always {
            for line in lines.split(|&b| b == b'\n') {
                let line = trim_cr(line);
                if !line.is_empty() {
                    found(line);
                }
            }
            return;
        }
        let mut segments_here = self.single.then_some(true);
        let mut at = 0;
        let mut ahead = Ahead::default();
        while let Some((m, key)) = self.next_key(lines, at, true, &mut ahead) {
            if !*segments_here.get_or_insert_with(|| self.has_segments(lines, true, key)) {
                return;
            }
            let start = memchr::memrchr(b'\n', &lines[..m]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &lines[m..]).map_or(lines.len(), |i| m + i);
            let line = trim_cr(&lines[start..end]);
            if self.key_line(line, key) {
                found(line);
            }
            at = end + 1;
        }
    }

    /// The first place at or after `at` where a key is written out (with its index) or runs
    /// through a hatch.
    fn first_key(&self, haystack: &[u8], at: usize, start_known: bool) -> Option<Found> {
        self.next_key(haystack, at, start_known, &mut Ahead::default())
    }

    /// [`RawFilter::first_key`], for one of several calls over the same `haystack` with `at`
    /// never going back: with several keys, each is searched for once per place it occurs, not
    /// again at every hatch or line before it ([`Ahead`]).
    fn next_key(
        &self,
        haystack: &[u8],
        at: usize,
        start_known: bool,
        ahead: &mut Ahead,
    ) -> Option<Found> {
        let mut run = Vec::new();
        let groups = self.keys.chunks(MAX_KEYS);
        ahead
            .more
            .resize(groups.len().saturating_sub(1), Next::default());
        // A hatch counts where a key's letters may run through it.
        let mut keep = |i: usize| {
            self.hatches.at(&haystack[i..])
                && self.runs_through(haystack, i, start_known, &self.keys, &mut run)
        };
        let mut search = |((g, group), next): ((usize, &[AsciiNeedle]), &mut Next)| {
            let found = next.find(at, |from| {
                (self.hatches.starts).find_with_keys(group, haystack, from, &mut keep)
            });
            found.map(|(i, key)| (i, key.map(|k| g * MAX_KEYS + k)))
        };
        // The first place of any group's, a key before a hatch at the same place.
        let nexts = std::iter::once(&mut ahead.first).chain(&mut ahead.more);
        (groups.enumerate().zip(nexts))
            .filter_map(&mut search)
            .min_by_key(|&(i, key)| (i, key.is_none()))
    }

    fn nothing_found(&self) -> Vec<Vec<bool>> {
        self.segments.iter().map(|s| vec![false; s.len()]).collect()
    }
}

/// Where the keys, each group of [`MAX_KEYS`] searched for in one pass with the hatches, occur
/// next in one haystack ([`RawFilter::next_key`]). Searched for again from every hatch and every
/// line before it, a key found far ahead, or nowhere, cost a pass over the rest of a chunk of
/// lines each time (`--query function --query zygomorphic` over the 1 GiB bench corpus took
/// 2.2 s, and takes 0.25 s).
/// The first group's is held apart: a test of one line with a few keys allocates nothing.
#[derive(Default)]
struct Ahead {
    first: Next,
    more: Vec<Next>,
}

/// What a search found from a place on: `None` before any search.
#[derive(Clone, Copy, Default)]
struct Next(Option<(usize, Option<Found>)>);

impl Next {
    /// The first place at or after `at` (which never goes back), from the last search when it
    /// still tells, else from `search(at)`.
    fn find(&mut self, at: usize, search: impl FnOnce(usize) -> Option<Found>) -> Option<Found> {
        match self.0 {
            // Nothing from `from` on, where `at` is.
            Some((from, None)) if from <= at => None,
            Some((_, Some(found))) if found.0 >= at => Some(found),
            _ => {
                let found = search(at);
                self.0 = Some((at, found));
                found
            }
        }
    }
}

/// The first word of an event's `text` that the raw test of a query for that word would not
/// find in `line`, the raw line the event comes from; `None` when it would find them all. A
/// decoder's tests check with it that every word it writes is in the line it renders, which is
/// what lets a search require every word of a query.
pub fn word_missing_from_line(text: &str, line: &[u8]) -> Option<String> {
    let folded = crate::fold(text);
    folded
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| !word.is_empty())
        .find(|word| !RawFilter::new(&[word.to_string()]).may_match_slice(line))
        .map(str::to_owned)
}

/// A line without the `\r` before its newline.
fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    #[test]
    fn a_line_needs_every_segment_besides_its_key() {
        let lines = |queries: &[&str], text: &str| -> Vec<String> {
            let folded: Vec<String> = queries.iter().map(|q| fold(q)).collect();
            let filter = RawFilter::new(&folded);
            let mut found = Vec::new();
            (filter.candidate_lines(text.as_bytes(), |l| {
                assert!(filter.may_match_slice(l));
                found.push(String::from_utf8_lossy(l).into_owned());
            }))
            .unwrap();
            found
        };
        // `rolling` is the key: a line with it alone is no candidate, in a chunk that holds
        // `deploy` elsewhere or not at all.
        let text = "rolling only\na deploy\ndeploy, then rolling\nROLLING DEPLOY\n";
        assert_eq!(
            lines(&["rolling deploy"], text),
            ["deploy, then rolling", "ROLLING DEPLOY"]
        );
        assert!(lines(&["rolling deploy"], "rolling only\nrolling on\n").is_empty());
        // The key's own segment in another query of an OR.
        assert_eq!(
            lines(&["deploy zq", "deploy"], "a deploy\nzq\n"),
            ["a deploy"]
        );
        assert_eq!(
            lines(&["rolling deploy", "rolling zq"], "rolling zq\nrolling\n"),
            ["rolling zq"]
        );
    }

    fn passes(queries: &[&str], raw: &str) -> bool {
        let folded: Vec<String> = queries.iter().map(|q| fold(q)).collect();
        RawFilter::new(&folded).may_match(|| Ok(raw.as_bytes()))
    }

    #[test]
    fn every_hatch_start_is_searched_in_the_vectorised_pass() {
        let every_letter: Vec<char> = ('a'..='z').collect();
        assert!(Hatches::new(&every_letter).starts.count() <= 9);
    }

    #[test]
    fn the_key_is_the_rarest_segment() {
        assert!(rarity("absent") > rarity("needle"));
        assert!(rarity("zygomorphic") > rarity("quokka"));
        assert!(rarity("deployment") > rarity("deploy"));
        assert!(!passes(&["needle-absent"], "needle needle"));
        assert!(
            !passes(&["zq written"], "written, but no z q"),
            "every segment counts"
        );
        assert!(passes(&["zq written"], "written ... ZQ"));
        assert!(
            passes(&["zq kelvin"], r#"kelvin ... \u007aq"#),
            "a hatch of a segment other than the key"
        );
    }

    #[test]
    fn plain_segments_decide() {
        assert!(passes(&["Deploy"], "we DEPLOYED it"));
        assert!(!passes(&["deploy"], "nothing here"));
        assert!(passes(&["zebra", "deploy"], "a deploy"), "an OR");
        assert!(
            !passes(&["rolling deploy"], "a deploy only"),
            "every segment counts"
        );
        assert!(passes(
            &["Bash: ls"],
            r#""name":"Bash","input":{"command":"ls"}"#
        ));
    }

    #[test]
    fn hatches_keep_escaped_and_folded_letters() {
        assert!(passes(&["abc"], r#""\u0061bc""#));
        assert!(passes(&["kelvin"], "5 \u{212A}elvin"));
        assert!(passes(&["strasse"], "Stra\u{00DF}e"));
        assert!(passes(&["strasse"], r#"Stra\u00dfe"#));
        assert!(passes(&["file"], "\u{FB01}le"));
        assert!(!passes(&["strasse"], "only strase and stras se"));
        assert!(passes(&["asse"], r#"gro\u00dfe Stra\u00DFe"#));
        assert!(
            passes(&["fish"], "a \u{FB01}sh"),
            "a ligature inside the key"
        );
    }

    #[test]
    fn a_hatch_the_key_does_not_run_through_rules_nothing_in() {
        let german =
            "Die Gr\u{00F6}\u{00DF}e der Stra\u{00DF}e, \u{FB01}nde die Datei bei 3 \u{212A}.";
        let escaped = r#"Die Gr\u00f6\u00dfe der Stra\u00dfe, \ufb01nde die Datei bei 3 \u212a."#;
        for text in [german, escaped] {
            assert!(!passes(&["zq-never-written-zq"], text), "{text}");
            assert!(!passes(&["strassen"], text), "{text}");
            assert!(!passes(&["findet datei"], text), "{text}");
            assert!(passes(&["grösse"], text), "{text}");
            assert!(passes(&["strasse datei"], text), "{text}");
            assert!(passes(&["finde"], text), "{text}");
            assert!(passes(&["3 k."], text), "{text}");
        }
    }

    /// Hands out its bytes a few at a time.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_match_through_a_hatch_is_never_ruled_out() {
        // Random words of letters and hatches, written out or escaped, in lines, read in
        // chunks of any size: every substring of a word's folding passes.
        let mut rng = fastrand::Rng::with_seed(0xfeed);
        let pieces: Vec<String> = ["a", "s", "t", "K", "i"]
            .into_iter()
            .map(String::from)
            .chain(ASCII_FOLDING.iter().map(|(c, _)| c.to_string()))
            .collect();
        for round in 0..300 {
            let mut raw = String::new();
            let mut words = Vec::new();
            for _ in 0..rng.usize(1..40) {
                let mut word = String::new();
                for _ in 0..rng.usize(1..6) {
                    let p = &pieces[rng.usize(..pieces.len())];
                    word.push_str(p);
                    if rng.bool() {
                        raw.push_str(p);
                    } else {
                        for u in p.encode_utf16() {
                            raw.push_str(&format!("\\u{u:04x}"));
                        }
                    }
                }
                words.push(fold(&word));
                raw.push_str([" ", "\\n", "\n", "\\\\", "\"", "x1 "][rng.usize(..6)]);
            }
            for word in &words {
                for run in word.split(|c: char| !c.is_ascii_alphabetic()) {
                    if run.is_empty() {
                        continue;
                    }
                    let from = rng.usize(..run.len());
                    let to = rng.usize(from + 1..=run.len());
                    let key = &run[from..to];
                    let f = RawFilter::new(&[key.to_string()]);
                    assert!(
                        f.may_match_slice(raw.as_bytes()),
                        "round {round}: {key} in {raw}"
                    );
                    assert!(passes(&[key], &raw), "round {round}: {key} in {raw}");
                    // Read a few bytes at a time: the chunks start anywhere.
                    let step = rng.usize(1..9);
                    assert!(
                        f.may_match(|| Ok(Trickle(raw.as_bytes(), step))),
                        "round {round}: {key} in {raw}, {step} bytes a read"
                    );
                    // With a segment of another word: the first read looks for the rarer
                    // through its own letters' hatches, the second for both.
                    let other = &words[rng.usize(..words.len())];
                    let other = other.split(|c: char| !c.is_ascii_alphabetic()).next();
                    if let Some(other) = other.filter(|o| !o.is_empty()) {
                        let phrase = format!("{key} {other}");
                        let f = RawFilter::new(std::slice::from_ref(&phrase));
                        assert!(
                            f.may_match(|| Ok(Trickle(raw.as_bytes(), step))),
                            "round {round}: {phrase} in {raw}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn queries_without_letters_pass_everything() {
        assert!(passes(&["😀"], "{}"));
        assert!(passes(&["12345"], "{}"));
        assert!(!passes(&["[image]"], "{}"));
    }

    #[test]
    fn candidate_lines_are_the_lines_that_may_match() {
        /// Hands out its bytes in reads of varying sizes.
        struct Uneven<'a>(&'a [u8], usize);
        impl Read for Uneven<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1 = (self.1 * 7 + 13) % 70_000;
                let n = (1 + self.1).min(self.0.len()).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        let words = [
            "deploy",
            "Deployment",
            "zq",
            "the",
            "\\u0064eploy",
            "\r",
            " ",
            "\n",
            "ﬁle",
        ];
        let mut total = 0;
        for round in 0..40 {
            // Some lines longer than the first buffer, so that it has to grow.
            let long = if round % 5 == 0 { 300_000 } else { 60 };
            let mut text = String::new();
            while text.len() < 600_000 {
                text.push_str(words[rng.usize(..words.len())]);
                if rng.usize(..long) == 0 {
                    text.push('\n');
                }
            }
            // One query, and several: their keys in one pass, and in two (more than eight).
            let queries: &[&str] = [
                &["deploy zq"][..],
                &["file"],
                &["deploy"],
                &["zq", "file"],
                &[
                    "file",
                    "deploy zq",
                    "absent",
                    "void",
                    "none",
                    "gone",
                    "nil",
                    "lost",
                    "the",
                ],
            ][round % 5];
            let filter = RawFilter::new(&queries.iter().map(|q| fold(q)).collect::<Vec<_>>());
            let mut found = Vec::new();
            filter
                .candidate_lines(Uneven(text.as_bytes(), round), |l| found.push(l.to_vec()))
                .unwrap();
            let expected: Vec<Vec<u8>> = text
                .as_bytes()
                .split(|&b| b == b'\n')
                .map(trim_cr)
                .filter(|l| !l.is_empty() && filter.may_match_slice(l))
                .map(<[u8]>::to_vec)
                .collect();
            assert_eq!(found, expected, "round {round}");
            total += found.len();
        }
        assert!(total > 1000, "{total}");
    }

    #[test]
    fn patterns_across_read_boundaries_are_found() {
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = 3.min(self.0.len()).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let f = RawFilter::new(&["deployment".into()]);
        assert!(f.may_match(|| Ok(Slow(b"xx deployment yy"))));
        assert!(!f.may_match(|| Ok(Slow(b"xx deploymen yy"))));
        // A segment longer than the key, split across reads on the second pass.
        let g = RawFilter::new(&["zq deploymentsx".into()]);
        assert!(g.may_match(|| Ok(Slow(b"zq .. deploymentsx"))));
        // A query's segments in reads of their own, in either order, written out or through a
        // hatch: each read remembers what it saw.
        let h = RawFilter::new(&["kelvin zqx".into()]);
        let gap = ".".repeat(3 * h.overlap);
        for (a, b) in [
            ("kelvin", "zqx"),
            ("zqx", "kelvin"),
            ("zqx", r"\u212Aelvin"),
            (r"\u212Aelvin", "zqx"),
        ] {
            let file = format!("{a}{gap}{b}");
            assert!(h.may_match(|| Ok(Slow(file.as_bytes()))), "{a} {b}");
        }
        let file = format!("kelvin{gap}zq x");
        assert!(!h.may_match(|| Ok(Slow(file.as_bytes()))));
    }
}
