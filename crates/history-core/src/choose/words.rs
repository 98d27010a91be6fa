//! Words: what a ranked search (`find`) compares, the same for a question and for an event's
//! text.
//!
//! Text is cut into words by Unicode word segmentation (UAX #29), each case-folded
//! ([`history_raw::fold`]). Then:
//!
//! - a **code identifier** (`flakyLoginTest`, `login_test`, `main.rs`, `HTTPServer`) is kept
//!   whole and also split at `_`, `.`, `:` and case changes, its parts marked as parts, so that a
//!   question naming the identifier finds it first and one naming its words finds it too;
//! - an **English word** of four letters or more becomes its Snowball English stem, so that
//!   `tests`, `testing` and `tested` all become `test`; a question's stem also matches the same
//!   stem with its final `e` and `i` swapped ([`variant`]: `flaking` → `flake` finds `flaky` →
//!   `flaki`); every word whose term is a stem begins with the stem's [`literal`] (else the word
//!   stays whole), which lets a literal search find every text that holds the term;
//! - **CJK** text (Han, Hiragana, Katakana), written without spaces, becomes its pairs of
//!   neighbouring characters;
//! - **stop words** (`the`, `where`, `did`…) count towards an event's length but are no terms.
//!
//! A term's [`literal`] is therefore a substring of the folded text of every event that holds the
//! term: the literal matcher with it as its query finds every such event (and perhaps more),
//! which is how `find` gathers its candidates, through the index or a scan alike.

use std::borrow::Cow;
use std::cell::RefCell;

use aho_corasick::{packed, AhoCorasick};
use caseless::Caseless;
use history_raw::ASCII_FOLDING;
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::OnceLock;
use unicode_segmentation::UnicodeSegmentation;

/// One term of a text: where its word is, what it became, and whether it is a part of an
/// identifier (the identifier itself comes just before its parts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word<'t> {
    /// Where its word starts in the text, in bytes.
    pub start: usize,
    /// Where its word ends.
    pub end: usize,
    /// The term.
    pub term: &'t str,
    /// Whether it is a part of an identifier rather than a whole word.
    pub part: bool,
}

/// English function words: they say how a question is asked, not what it is about.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "done", "for", "from", "had", "has", "have", "having", "he", "her", "here", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "not",
    "of", "on", "once", "only", "or", "other", "our", "out", "over", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you",
    "your",
];

/// Whether `folded` is a stop word (none is longer than seven bytes).
pub fn is_stop_word(folded: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    folded.len() <= 7
        && SET
            .get_or_init(|| STOP_WORDS.iter().copied().collect())
            .contains(folded)
}

/// Whether `c` is written without spaces between words: Han, Hiragana, Katakana.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x2FA1F)
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// What a folded word becomes as a term (see the module's doc): an English word of four letters
/// or more its Snowball stem, when the stem's [`literal`] begins the word; any other word as it
/// is.
pub fn reduce(folded: &str) -> Cow<'_, str> {
    with_reduced(folded, |term| match term == folded {
        true => Cow::Borrowed(folded),
        false => Cow::Owned(term.to_string()),
    })
}

/// How many words [`with_reduced`] remembers the terms of, per thread: a text repeats its
/// words, and stemming one costs more than cutting and folding it.
const REMEMBERED: usize = 1 << 16;

/// Calls `f` with what `folded` becomes as a term ([`reduce`]), without allocating for a word
/// seen before on this thread.
fn with_reduced<R>(folded: &str, f: impl FnOnce(&str) -> R) -> R {
    if folded.len() < 4 || !folded.bytes().all(|b| b.is_ascii_lowercase()) {
        return f(folded);
    }
    thread_local! {
        /// Each word's stem, where it is one ([`reduce`]).
        static STEMS: RefCell<FxHashMap<Box<str>, Option<Box<str>>>> = RefCell::default();
    }
    let stem_of = |folded: &str| {
        let stem = stemmer().stem(folded);
        folded
            .starts_with(literal(&stem))
            .then(|| Box::from(&*stem))
    };
    STEMS.with(|stems| {
        // `f` may cut another text into terms: that one goes without the memory.
        let Ok(mut stems) = stems.try_borrow_mut() else {
            return f(stem_of(folded).as_deref().unwrap_or(folded));
        };
        if let Some(stem) = stems.get(folded) {
            return f(stem.as_deref().unwrap_or(folded));
        }
        let stem = stem_of(folded);
        if stems.len() >= REMEMBERED {
            stems.clear();
        }
        let out = f(stem.as_deref().unwrap_or(folded));
        stems.insert(folded.into(), stem);
        out
    })
}

/// What every word whose term is `term` begins with, for a literal search to gather them: the
/// term less a final `e` or `i`, which the stemmer may have written in place of the word's own
/// ending (`flaky` → `flaki`, `flaking` → `flake`: both begin with `flak`).
pub fn literal(term: &str) -> &str {
    match term.len() > 3 && (term.ends_with('e') || term.ends_with('i')) {
        true => &term[..term.len() - 1],
        false => term,
    }
}

/// The other term a question's `term` matches: the same stem with its final `e` and `i`
/// swapped, which English spells for one word (`flake` and `flaki`: `flaking` and `flaky`).
pub fn variant(term: &str) -> Option<String> {
    let stem = literal(term);
    match (stem.len() < term.len(), term.ends_with('e')) {
        (false, _) => None,
        (true, true) => Some(format!("{stem}i")),
        (true, false) => Some(format!("{stem}e")),
    }
}

/// Where a word splits into the parts of an identifier: at `_`, `.`, `:` and other joiners, and
/// where case changes (`flakyLogin`, `HTTPServer`); the byte ranges of its parts, into `out`,
/// which they replace.
fn parts(word: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut chars = word.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let before = prev.replace(c);
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                out.push((s, at));
            }
            continue;
        }
        if let (Some(s), Some(prev)) = (start, before) {
            let next_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                out.push((s, at));
                start = Some(at);
            }
        }
        start.get_or_insert(at);
    }
    if let Some(s) = start {
        out.push((s, word.len()));
    }
}

/// `word` folded into `out`, which it replaces.
fn fold_into(word: &str, out: &mut String) {
    out.clear();
    for c in word.chars() {
        match c.is_ascii() {
            true => out.push(c.to_ascii_lowercase()),
            false => out.extend(std::iter::once(c).default_case_fold()),
        }
    }
}

/// Calls `each` with the terms of a run of neighbouring CJK characters that ends at `end`: its
/// pairs, or the one character of a run of one; empties the run.
fn flush(cjk: &mut Vec<(usize, char)>, end: usize, each: &mut dyn FnMut(Word<'_>)) {
    let mut pair = String::new();
    if let [(start, c)] = cjk[..] {
        pair.push(c);
        each(Word {
            start,
            end,
            term: &pair,
            part: false,
        });
    }
    for (i, w) in cjk.windows(2).enumerate() {
        pair.clear();
        pair.push(w[0].1);
        pair.push(w[1].1);
        let stop = cjk.get(i + 2).map_or(end, |c| c.0);
        each(Word {
            start: w[0].0,
            end: stop,
            term: &pair,
            part: false,
        });
    }
    cjk.clear();
}

/// Calls `each` with every term of `text` in order; returns the text's length for ranking: its
/// runs of non-space characters, a CJK character one more each.
pub fn for_each_term(text: &str, each: impl FnMut(Word<'_>)) -> u32 {
    for_each_term_where(text, &Literals::default(), &|_| true, each)
}

/// The literals a tokenization looks for: only the runs of non-space characters that hold one
/// are cut into words ([`for_each_term_where`]).
#[derive(Clone, Debug, Default)]
pub struct Literals {
    /// `None`: every run.
    automaton: Option<AhoCorasick>,
    /// The same literals for Teddy, `aho-corasick`'s vectorised search for a few literals, where
    /// the CPU has it: an automaton runs a byte at a time. On the 1 GiB bench corpus, `find`
    /// with five common words spent 16% of its time in the automaton, then 3% in Teddy.
    packed: Option<packed::Searcher>,
    /// Whether every literal is ASCII: then a text whose ASCII letters fold to their lower case
    /// and nothing else folds to ASCII is searched with its ASCII letters lowered alone, a copy
    /// of its length (so that offsets stay), not folded.
    ascii: bool,
    /// The longest literal's length.
    longest: usize,
}

/// How much of a text is lowered or folded for the search at a time ([`Literals::starts`]): a
/// tool output of many megabytes is not copied whole.
const SEARCHED: usize = 64 << 10;

/// The character boundary of `text` at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// Whether `text` holds a character whose folding holds ASCII letters ([`ASCII_FOLDING`]); only
/// those start with one of these bytes.
fn folds_to_ascii(text: &str) -> bool {
    text.bytes().enumerate().any(|(i, b)| {
        matches!(b, 0xC3 | 0xC4 | 0xC5 | 0xC7 | 0xE1 | 0xE2 | 0xEF) && {
            let c = text[i..].chars().next();
            ASCII_FOLDING.iter().any(|&(f, _)| Some(f) == c)
        }
    })
}

impl Literals {
    /// The runs that hold one of `literals` (folded).
    pub fn new(literals: &[String]) -> Literals {
        let mut packed = packed::Config::new().builder();
        Literals {
            automaton: AhoCorasick::new(literals).ok(),
            packed: packed.extend(literals).build(),
            ascii: literals.iter().all(|l| l.is_ascii()),
            longest: literals.iter().map(String::len).max().unwrap_or(0),
        }
    }

    /// Where they start in the folded `text`, as offsets of `text`, in order, one in each run
    /// that holds one at least (literals hold no space); `None`: look everywhere. The text is
    /// lowered or folded [`SEARCHED`] bytes at a time, each piece with enough of the next for
    /// a literal that starts in it (a folded character comes of at most four bytes).
    fn starts(&self, text: &str) -> Option<Vec<usize>> {
        let a = self.automaton.as_ref()?;
        let find = |haystack: &[u8]| -> Vec<usize> {
            match &self.packed {
                Some(p) => p.find_iter(haystack).map(|m| m.start()).collect(),
                None => a.find_iter(haystack).map(|m| m.start()).collect(),
            }
        };
        let lowered = self.ascii && (text.is_ascii() || !folds_to_ascii(text));
        let (mut out, mut from, mut piece) = (Vec::new(), 0, Vec::new());
        while from < text.len() {
            let limit = match from + SEARCHED >= text.len() {
                true => text.len(),
                false => boundary(text, from + SEARCHED),
            };
            let window = &text[from..boundary(text, limit + 4 * self.longest)];
            let found = match lowered {
                true => {
                    piece.clear();
                    piece.extend(window.bytes().map(|b| b.to_ascii_lowercase()));
                    find(&piece)
                }
                false => {
                    let (folded, origins) = history_raw::fold_with_origins(window);
                    let found = find(folded.as_bytes());
                    found.into_iter().map(|at| origins[at]).collect()
                }
            };
            out.extend(
                found
                    .into_iter()
                    .map(|at| from + at)
                    .filter(|&at| at < limit),
            );
            from = limit;
        }
        Some(out)
    }
}

/// The runs of non-space characters of a text ([`char::is_whitespace`], as
/// [`str::split_whitespace`] cuts them), each as its byte range and how many CJK characters it
/// holds; ASCII bytes are taken one at a time, without decoding.
struct Runs<'t> {
    text: &'t str,
    at: usize,
}

impl Runs<'_> {
    /// The character at `at` (a boundary of a non-ASCII one), whether it is white space or
    /// CJK, and its length.
    fn wide(&self) -> (bool, bool, usize) {
        let c = self.text[self.at..].chars().next().unwrap_or(' ');
        (c.is_whitespace(), is_cjk(c), c.len_utf8())
    }
}

/// A run of non-space characters: its byte range, and how many CJK characters it holds.
type Run = (usize, usize, u32);

impl Iterator for Runs<'_> {
    type Item = Run;

    fn next(&mut self) -> Option<Run> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.at) {
            match b < 0x80 {
                true if is_ascii_space(b) => self.at += 1,
                true => break,
                false => match self.wide() {
                    (true, _, n) => self.at += n,
                    _ => break,
                },
            }
        }
        let start = self.at;
        let mut cjk = 0;
        while let Some(&b) = bytes.get(self.at) {
            match b < 0x80 {
                true if is_ascii_space(b) => break,
                true => self.at += 1,
                false => match self.wide() {
                    (true, _, _) => break,
                    (false, wide, n) => {
                        cjk += u32::from(wide);
                        self.at += n;
                    }
                },
            }
        }
        (self.at > start).then_some((start, self.at, cjk))
    }
}

/// A text's length for ranking: its runs of non-space characters, a CJK character one more
/// each. Its ASCII stretches are counted without branches or lookups, many bytes at once, each
/// other character decoded: on the 1 GiB bench corpus, counting a character at a time took
/// 13% of `find`'s time, then 2.5%.
fn length(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let (mut n, mut after_space, mut i) = (0usize, true, 0);
    while i < bytes.len() {
        let end = ascii_end(bytes, i);
        if let (Some(&first), Some(&last)) = (bytes.get(i), bytes[i..end].last()) {
            n += usize::from(after_space & !is_ascii_space(first));
            n += space_ends(&bytes[i..end]);
            after_space = is_ascii_space(last);
        }
        // The other character there (the first byte that is not ASCII begins one).
        let c = text.get(end..).and_then(|t| t.chars().next());
        i = end + c.map_or(1, char::len_utf8);
        if let Some(c) = c {
            let white = c.is_whitespace();
            n += usize::from(!white) * (usize::from(after_space) + usize::from(is_cjk(c)));
            after_space = white;
        }
    }
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// U+0009 to U+000D and U+0020: what [`char::is_whitespace`] says of ASCII.
fn is_ascii_space(b: u8) -> bool {
    (b == b' ') | (b.wrapping_sub(9) < 5)
}

/// Where the ASCII bytes that begin `bytes[from..]` end: 8 bytes at a time.
fn ascii_end(bytes: &[u8], from: usize) -> usize {
    let mut words = bytes[from..].chunks_exact(8);
    let whole = words
        .by_ref()
        .take_while(|w| {
            u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
                & 0x8080_8080_8080_8080
                == 0
        })
        .count();
    let at = from + 8 * whole;
    at + bytes[at..]
        .iter()
        .position(|&b| b >= 0x80)
        .unwrap_or(bytes.len() - at)
}

/// How many of `ascii`'s bytes after its first end a run of white space (a space and then
/// not), counted in blocks of 255 pairs whose sums fit a byte, so that the compiler compares
/// many bytes at once.
fn space_ends(ascii: &[u8]) -> usize {
    let pairs = ascii.len().saturating_sub(1);
    (0..pairs)
        .step_by(255)
        .map(|at| {
            let end = (at + 255).min(pairs);
            let (a, b) = (&ascii[at..end], &ascii[at + 1..end + 1]);
            let ends = a.iter().zip(b).fold(0u8, |n, (&a, &b)| {
                n + u8::from(is_ascii_space(a) & !is_ascii_space(b))
            });
            usize::from(ends)
        })
        .sum()
}

/// The run of non-space characters that holds the character at `at`, as [`Runs`] gives it.
fn run_around(text: &str, at: usize) -> Run {
    let start = (text[..at].char_indices().rev())
        .find(|&(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = (text[at..].char_indices())
        .find(|&(_, c)| c.is_whitespace())
        .map_or(text.len(), |(i, _)| at + i);
    let cjk = text[start..end].chars().filter(|&c| is_cjk(c)).count();
    (start, end, u32::try_from(cjk).unwrap_or(u32::MAX))
}

/// [`for_each_term`], for the terms only that may come of a run of non-space characters that
/// holds one of `literals`, and of a folded word or part that `could` passes (a stem's
/// [`literal`] begins its word): the other runs are neither cut into words nor reduced, which
/// spares segmenting and stemming text no question asks for. The length counts every run.
pub fn for_each_term_where(
    text: &str,
    literals: &Literals,
    could: &dyn Fn(&str) -> bool,
    mut each: impl FnMut(Word<'_>),
) -> u32 {
    let mut state = State::default();
    let mut words: Vec<(usize, &str)> = Vec::new();
    // Where the literals start in the folded text, as offsets of the text, found in one pass;
    // only the runs around them are looked at, and the length is counted apart.
    let runs: Box<dyn Iterator<Item = Run>> = match literals.starts(text) {
        None => Box::new(Runs { text, at: 0 }),
        Some(starts) => {
            let mut done = 0;
            Box::new(starts.into_iter().filter_map(move |s| {
                if s < done {
                    return None;
                }
                let run = run_around(text, s);
                done = run.1;
                Some(run)
            }))
        }
    };
    for (at, end, cjk) in runs {
        let run = &text[at..end];
        words.clear();
        words.extend(run.unicode_word_indices().map(|(i, w)| (at + i, w)));
        // Words joined by `-`, `/`, `.`, `:`… with no space (`add-session-review-skill`,
        // `claude.ai/settings`, `a.b::c`) are also one term, their words its parts.
        let compound = words.len() >= 2
            && words.windows(2).all(|w| {
                let gap = &text[w[0].0 + w[0].1.len()..w[1].0];
                !gap.is_empty() && gap.chars().all(is_joiner)
            })
            && cjk == 0;
        if compound {
            let (last, w) = words[words.len() - 1];
            let (start, end) = (words[0].0, last + w.len());
            fold_into(&text[start..end], &mut state.folded);
            if could(&state.folded) {
                each(Word {
                    start,
                    end,
                    term: &state.folded,
                    part: false,
                });
            }
        }
        for &(start, word) in &words {
            state.word(start, word, compound, could, &mut each);
        }
        // No run of CJK characters goes on across a space.
        state.flush(&mut each);
    }
    length(text)
}

/// What joins the words of a compound term.
const JOINERS: &str = "-/.:@#~+";

/// Whether `c` joins the words of a compound term (`-`, `/`, `.`, `:`…).
pub fn is_joiner(c: char) -> bool {
    JOINERS.contains(c)
}

/// Where [`for_each_term_where`] is in a text.
#[derive(Default)]
struct State {
    /// A run of neighbouring CJK characters with their offsets, and where it ends.
    cjk: Vec<(usize, char)>,
    cjk_end: usize,
    /// Buffers for a folded word and part.
    folded: String,
    piece: String,
    /// A buffer for the parts of an identifier.
    pieces: Vec<(usize, usize)>,
}

impl State {
    /// Calls `each` with the terms of the run of CJK characters, and empties it.
    fn flush(&mut self, each: &mut dyn FnMut(Word<'_>)) {
        flush(&mut self.cjk, self.cjk_end, each);
    }

    /// Calls `each` with the terms of one word at `start`, or adds it to the run of CJK
    /// characters; `in_compound`: the word is a part of a compound.
    fn word(
        &mut self,
        start: usize,
        word: &str,
        in_compound: bool,
        could: &dyn Fn(&str) -> bool,
        each: &mut dyn FnMut(Word<'_>),
    ) {
        let end = start + word.len();
        if word.chars().next().is_some_and(is_cjk) && word.chars().all(is_cjk) {
            if !self.cjk.is_empty() && self.cjk_end != start {
                self.flush(each);
            }
            self.cjk
                .extend(word.char_indices().map(|(i, c)| (start + i, c)));
            self.cjk_end = end;
            return;
        }
        self.flush(each);
        // A contraction is its first word: `don't` is `don`, `we'll` is `we`.
        let word = match word.find(['\'', '\u{2019}']) {
            Some(at) if at > 0 => &word[..at],
            _ => word,
        };
        let folded = &mut self.folded;
        fold_into(word, folded);
        // A word with no capital, `_`, `.` or `:` after its first letter is no identifier: no
        // parts to look for (`The` is one word).
        let plain = word
            .chars()
            .skip(1)
            .all(|c| c.is_lowercase() || c.is_numeric());
        let pieces = &mut self.pieces;
        match plain {
            true => pieces.clear(),
            false => parts(word, pieces),
        }
        if pieces.len() < 2 {
            if could(folded) && !is_stop_word(folded) {
                with_reduced(folded, |term| {
                    each(Word {
                        start,
                        end,
                        term,
                        part: in_compound,
                    })
                });
            }
            return;
        }
        if could(folded) {
            each(Word {
                start,
                end,
                term: folded,
                part: in_compound,
            });
        }
        let piece = &mut self.piece;
        for &(a, b) in pieces.iter() {
            fold_into(&word[a..b], piece);
            if could(piece) && !is_stop_word(piece) {
                with_reduced(piece, |term| {
                    each(Word {
                        start: start + a,
                        end: start + b,
                        term,
                        part: true,
                    })
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for_each_term(text, |w| out.push((w.term.to_string(), w.part)));
        out
    }

    fn words(text: &str) -> Vec<String> {
        all(text).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn stop_words_are_sorted_for_the_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn inflections_of_a_word_meet() {
        assert_eq!(words("flaky flakiness"), ["flaki"; 2]);
        assert_eq!(words("flaking flakes flake"), ["flake"; 3]);
        assert_eq!(variant("flake").as_deref(), Some("flaki"));
        assert_eq!(variant("flaki").as_deref(), Some("flake"));
        assert_eq!(literal("flaki"), "flak");
        assert_eq!(words("paginate pagination paginated"), ["pagin"; 3]);
        assert_eq!(words("tests testing tested"), ["test"; 3]);
        assert_eq!(words("deploy deployment deploying"), ["deploy"; 3]);
        // Ready is not read.
        assert_eq!(words("readiness ready read"), ["readi", "readi", "read"]);
        // Short words and words with other letters stay as they are.
        assert_eq!(words("bug CI Straße übel"), ["bug", "ci", "strass", "übel"]);
    }

    #[test]
    fn every_word_begins_with_its_terms_literal() {
        for w in [
            "dying",
            "sensibility",
            "organization",
            "happy",
            "copied",
            "uses",
            "ran",
            "flaky",
            "skies",
            "generously",
        ] {
            let t = reduce(w);
            assert!(w.starts_with(literal(&t)), "{w} → {t}");
        }
    }

    #[test]
    fn a_remembered_term_is_the_one_the_stemmer_gives() {
        // More distinct words than are remembered, twice over: each term as first reduced, as
        // remembered, and after the memory was cleared, against the stemmer's own.
        let words: Vec<String> = (0..REMEMBERED + 10)
            .map(|i| {
                format!(
                    "{}ing",
                    ["flak", "pagin", "deploy", "test"][i % 4].repeat(1 + i % 3)
                )
            })
            .chain(["readiness", "ready", "uses"].map(String::from))
            .collect();
        for _ in 0..2 {
            for w in &words {
                let stem = stemmer().stem(w);
                let want = match w.starts_with(literal(&stem)) {
                    true => stem.to_string(),
                    false => w.clone(),
                };
                assert_eq!(reduce(w), want, "{w}");
            }
        }
        // A text cut while another is (from its callback) gets the same terms.
        let mut inner = Vec::new();
        for_each_term("testing flaky", |_| {
            for_each_term("deployments", |w| inner.push(w.term.to_string()));
        });
        assert_eq!(inner, ["deploy", "deploy"]);
        assert!(is_stop_word("through") && is_stop_word("a") && !is_stop_word("throughout"));
        assert!(STOP_WORDS.iter().all(|w| w.len() <= 7 && is_stop_word(w)));
    }

    #[test]
    fn identifiers_are_kept_whole_and_split() {
        assert_eq!(
            all("the flakyLoginTest"),
            [
                ("flakylogintest".into(), false),
                ("flaki".into(), true),
                ("login".into(), true),
                ("test".into(), true)
            ]
        );
        assert_eq!(words("login_test"), ["login_test", "login", "test"]);
        assert_eq!(
            words("history_core::Walk"),
            [
                "history_core::walk",
                "history_core",
                "histori",
                "core",
                "walk"
            ]
        );
        assert_eq!(words("main.rs"), ["main.rs", "main", "rs"]);
        assert_eq!(words("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(words("don't break it"), ["don", "break"]);
        // Words joined without a space are one term too, their words parts of it.
        assert_eq!(
            all("(add-session-review-skill)"),
            [
                ("add-session-review-skill".into(), false),
                ("add".into(), true),
                ("session".into(), true),
                ("review".into(), true),
                ("skill".into(), true)
            ]
        );
        assert_eq!(
            words("claude.ai/settings, ok"),
            [
                "claude.ai/settings",
                "claude.ai",
                "claud",
                "ai",
                "set",
                "ok"
            ]
        );
        assert_eq!(words("x, y"), ["x", "y"]);
    }

    #[test]
    fn cjk_text_becomes_pairs() {
        assert_eq!(words("数据库迁移"), ["数据", "据库", "库迁", "迁移"]);
        assert_eq!(words("库 x"), ["库", "x"]);
        let mut spans = Vec::new();
        let n = for_each_term("ab 数据库", |w| spans.push((w.start, w.end)));
        assert_eq!(spans, [(0, 2), (3, 9), (6, 12)]);
        assert_eq!(n, 5);
    }

    #[test]
    fn length_counts_words_not_parts() {
        assert_eq!(for_each_term("where is flakyLoginTest now", |_| {}), 4);
        assert_eq!(for_each_term("", |_| {}), 0);
    }

    #[test]
    fn looking_only_where_a_literal_is_finds_the_same_terms_at_the_same_places() {
        let mut texts: Vec<String> = [
            "The flaky LoginTest kept flaking; see src/login_test.rs and a.b::c (CI)",
            "Die STRASSE war flaky — Übergrößenträger flaked, 数据库迁移 flakes",
            "Über flaky Login: ünïcödé flakes, die Straße",
            "ﬂaky ǰ Kelvin-login flake",
        ]
        .map(String::from)
        .to_vec();
        // Texts searched a piece at a time: the words on every side of where a piece ends,
        // in ASCII, and folded.
        for shift in 0..12 {
            for (pad, words) in [
                ("x", " FLAKY LoginTest flaked "),
                ("ß", " ﬂaky Login STRASSE "),
            ] {
                let pad = pad.repeat((SEARCHED - shift) / pad.len());
                texts.push(format!("{pad}{words}{pad}{words}"));
            }
        }
        // With a literal that is not ASCII, and with ASCII ones only.
        let sets = [
            &["flaki", "flake", "login", "strass", "数据"][..],
            &["flaki", "flake", "login", "strass"],
        ];
        for (wanted, text) in sets.iter().flat_map(|w| texts.iter().map(move |t| (w, t))) {
            let text = text.as_str();
            let literals: Vec<String> = wanted.iter().map(|t| literal(t).to_string()).collect();
            let keep = |w: &Word<'_>| wanted.contains(&w.term);
            let mut all = Vec::new();
            let n = for_each_term(text, |w| {
                if keep(&w) {
                    all.push((w.start, w.term.to_string()));
                }
            });
            let mut some = Vec::new();
            let m = for_each_term_where(text, &Literals::new(&literals), &|_| true, |w| {
                if keep(&w) {
                    some.push((w.start, w.term.to_string()));
                }
            });
            assert_eq!(
                (some, m),
                (all.clone(), n),
                "{}",
                &text[..text.len().min(200)]
            );
            assert!(all.len() >= 3, "{all:?}");
        }
    }

    #[test]
    fn every_term_occurs_in_the_folded_text() {
        let text = "Die STRASSE war flaky; fixed HTTPServer::new() in src/main.rs — 数据库 ünïcödé";
        let folded = history_raw::fold(text);
        for_each_term(text, |w| {
            assert!(folded.contains(literal(w.term)), "{}", w.term)
        });
    }

    #[test]
    fn runs_are_those_of_split_whitespace() {
        let mut texts: Vec<String> = (0u8..128)
            .map(|b| format!("a{}b {}c", b as char, b as char))
            .collect();
        texts.extend((0u8..128).map(|b| format!("{}a  b{}", b as char, b as char)));
        // Long texts: ASCII stretches of every length around the blocks counted at once, with
        // other characters and white space between them.
        let pieces = [
            "word",
            " ",
            "\t",
            "\n\r",
            "x",
            "ü",
            "数据",
            "\u{3000}",
            "\u{a0}",
            "  ",
            "ab\u{b}cd",
        ];
        let mut seed = 26u64;
        for _ in 0..40 {
            let mut text = String::new();
            while text.len() < 2000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let piece = pieces[(seed >> 33) as usize % pieces.len()];
                let times = 1 + (seed >> 20) as usize % 90;
                text.push_str(&piece.repeat(if piece.is_ascii() { times } else { 1 }));
            }
            texts.push(text);
        }
        texts.extend(
            [
                "\u{85}x\u{a0}y\u{1680}z\u{2000}\u{200a}w\u{2028}\u{2029}v\u{202f}u\u{205f}t\u{3000}s",
                "  数据库 の テスト  ünï\u{200b}cödé \u{feff}end ",
                "",
                " \t\n ",
            ]
            .map(String::from),
        );
        for text in &texts {
            let runs: Vec<(&str, u32)> = Runs { text, at: 0 }
                .map(|(a, b, cjk)| (&text[a..b], cjk))
                .collect();
            let split: Vec<(&str, u32)> = text
                .split_whitespace()
                .map(|r| (r, r.chars().filter(|&c| is_cjk(c)).count() as u32))
                .collect();
            assert_eq!(runs, split, "{text:?}");
            let length = split.iter().map(|(_, cjk)| 1 + cjk).sum::<u32>();
            assert_eq!(super::length(text), length, "{text:?}");
            for (i, _) in text.char_indices() {
                let around = text.split_whitespace().find(|r| {
                    let at = r.as_ptr() as usize - text.as_ptr() as usize;
                    (at..at + r.len()).contains(&i)
                });
                if let Some(r) = around {
                    let (a, b, cjk) = run_around(text, i);
                    assert_eq!(
                        (&text[a..b], cjk),
                        (r, split.iter().find(|s| s.0 == r).unwrap().1)
                    );
                }
            }
        }
    }
}
