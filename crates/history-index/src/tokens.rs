//! Retrieval tokens: what the projection stores of a line's text instead of the text.
//!
//! A **token** is a [`BITS`]-bit hash of a short run of consecutive Unicode scalar values of the
//! *folded* text ([`history_raw::fold`], the same text [`history_core::Filter::matches_text`]
//! searches), with one more bit above the hash saying which kind of run it is:
//!
//! - a **trigram**, any three consecutive scalar values of one event's folded text;
//! - a **CJK bigram**, any two consecutive scalar values that are both [CJK](is_cjk).
//!
//! A line's row holds the union of its events' tokens; no token spans two events, because the
//! matcher never matches across them.
//!
//! **Why this is exact.** The matcher reports a hit when the folded query occurs in an event's
//! folded text. Both are valid UTF-8, so an occurrence starts and ends on scalar boundaries, and
//! every trigram (and CJK bigram) of the folded query is one of that event's. So the AND of
//! [`query_tokens`] is a necessary condition: a line without one of them cannot hold a hit, and a
//! line with all of them is only a *candidate*, checked afterwards by the matcher on the text
//! read from the transcript. Any subset of the query's tokens is a weaker but still exact
//! condition, which lets a caller drop the commonest ones.
//!
//! **Why trigrams, not words.** A query may start or end inside a word (`onfig` finds `config`);
//! word tokens would miss it. Three is the shortest length whose runs are selective in Latin text;
//! shorter queries ([`query_tokens`] says `None`) are answered by scanning.
//!
//! **Why CJK bigrams.** Chinese and Japanese write words of two characters without spaces, and a
//! two-character query is common there; a bigram token answers it without a scan. Only pairs of
//! CJK scalars are stored, so Latin text pays nothing for it.
//!
//! **Why hashing.** The distinct trigrams of a large history can number in the millions (code,
//! identifiers, base64, every script); hashing bounds the vocabulary of the index to
//! `2^(BITS+1)` terms, and a collision can only add candidates, never lose a hit. The width was
//! chosen by measurement (see [`BITS`]).
//!
//! **What is never stored.** The text: a row is an unordered set of many-to-one hashes of short
//! runs, with neither their order nor their count. It still tells which runs a line probably
//! holds, so the database is kept as private as the transcripts it is derived from.
//!
//! Token values are part of the database format: changing [`BITS`], the hash, the CJK ranges or
//! the rendering changes [`VERSION`], and a database built with another version is rebuilt.

/// One retrieval token: a [`BITS`]-bit hash plus the kind bit above it.
pub type Token = u32;

/// The version of the token scheme; a database built with another one must be rebuilt.
pub const VERSION: u32 = 1;

/// How many bits of hash a token keeps.
///
/// A collision adds a false candidate when a line lacks one of a query's runs but holds another
/// run in its bucket, so what matters is how many of the `2^BITS` buckets one line fills, not
/// the size of the history. Measured on the six real sample transcripts, 4.28 MB holding
/// 1.46 MB of decoded text in 1,317 lines, with queries that are words of the text, substrings
/// starting anywhere, words with one letter changed that occur nowhere, and CJK pairs, the false
/// candidate lines per 1,000 lines and query were (the last column is the size of the FTS5
/// table the token lists were kept in then):
///
/// | width | words | substrings | absent words | CJK pairs | FTS5 table, optimized |
/// |---|---|---|---|---|---|
/// | 16 | 5.58 | 11.20 | 3.16 | 0.175 | 0.168× the transcripts |
/// | 20 | 4.94 | 9.11 | 1.425 | 0.004 | 0.189× |
/// | 24 | 4.94 | 9.10 | 1.422 | 0.004 | 0.201× |
/// | unhashed | 4.94 | 9.10 | 1.422 | 0 | |
///
/// From 20 bits on, the candidates are those of unhashed runs (the rest are lines holding every
/// trigram of the query but not in order, mostly long tool output, which no width removes),
/// while every further bit adds distinct terms to the table. Either way a line costs about 317
/// tokens per KiB of its text (108 per KiB of transcript), one `(token, row)` pair each.
pub const BITS: u32 = 20;

/// Appends the tokens of one event's folded text to `out`, unsorted and possibly repeated.
pub fn text_tokens(folded: &str, out: &mut Vec<Token>) {
    tokens_with(folded, BITS, out)
}

/// Tokens a line must all hold for `folded_query` to occur in one of its events, sorted and
/// without repeats; `None` when the query is too short for any token (shorter than three scalar
/// values, unless it is two CJK ones), and only a scan can answer it.
///
/// Of a query of more than [`ALL_UP_TO`] trigrams, those that do not overlap (every third from
/// the first) and the last: together they hold every scalar value of the query, and a line that
/// holds them all but not the query is as rare as one that holds every trigram but not the
/// query (their order is what it lacks). Each token costs a query a lookup per segment, and a
/// long identifier has a dozen trigrams.
pub fn query_tokens(folded_query: &str) -> Option<Vec<Token>> {
    query_tokens_with(folded_query, BITS)
}

/// Up to how many trigrams a query needs them all ([`query_tokens`]): a short word's few
/// lookups cost little, and each of its trigrams rules out lines.
const ALL_UP_TO: usize = 8;

/// Removes repeated tokens from a line's, keeping each one's first place: a bit per possible
/// token, cleared again after each line, so that a long line costs no sort.
pub struct Distinct {
    seen: Vec<u64>,
}

impl Default for Distinct {
    fn default() -> Distinct {
        Distinct {
            seen: vec![0; (1usize << (BITS + 1)) / 64],
        }
    }
}

impl Distinct {
    /// Keeps the first of each token in `tokens`.
    pub fn retain(&mut self, tokens: &mut Vec<Token>) {
        let seen = &mut self.seen;
        tokens.retain(|&t| {
            let (word, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
            let new = seen[word] & bit == 0;
            seen[word] |= bit;
            new
        });
        for &t in tokens.iter() {
            seen[(t >> 6) as usize] = 0;
        }
    }
}

/// Whether a scalar value belongs to the scripts that are written without spaces between words
/// and so get bigrams: Han (unified ideographs with every extension, compatibility ideographs,
/// radicals, strokes, ideographic description), Hiragana, Katakana (with phonetic extensions and
/// the kana supplements), Bopomofo, Hangul (syllables and every jamo block), and the punctuation
/// and forms used with them (CJK symbols and punctuation, enclosed CJK letters, CJK
/// compatibility, vertical and compatibility forms, halfwidth and fullwidth forms).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF       // Hangul Jamo
        | 0x2E80..=0x2FDF     // CJK Radicals Supplement, Kangxi Radicals
        | 0x2FF0..=0x2FFF     // Ideographic Description Characters
        | 0x3000..=0x303F     // CJK Symbols and Punctuation
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3100..=0x33FF     // Bopomofo, Hangul Compatibility Jamo, Kanbun, strokes,
                              // Katakana Phonetic Extensions, enclosed letters, compatibility
        | 0x3400..=0x4DBF     // CJK Unified Ideographs Extension A
        | 0x4E00..=0x9FFF     // CJK Unified Ideographs
        | 0xA960..=0xA97F     // Hangul Jamo Extended-A
        | 0xAC00..=0xD7FF     // Hangul Syllables, Hangul Jamo Extended-B
        | 0xF900..=0xFAFF     // CJK Compatibility Ideographs
        | 0xFE10..=0xFE1F     // Vertical Forms
        | 0xFE30..=0xFE4F     // CJK Compatibility Forms
        | 0xFF00..=0xFFEF     // Halfwidth and Fullwidth Forms
        | 0x1AFF0..=0x1B16F   // Kana Extended-B, Kana Supplement, Kana Extended-A, Small Kana
        | 0x20000..=0x2FA1F   // CJK Extensions B–F, Compatibility Ideographs Supplement
        | 0x30000..=0x323AF // CJK Extensions G, H
    )
}

fn tokens_with(folded: &str, bits: u32, out: &mut Vec<Token>) {
    let mut chars = folded.chars();
    let (Some(mut a), Some(mut b)) = (chars.next(), chars.next()) else {
        return;
    };
    bigram(a, b, bits, out);
    for c in chars {
        out.push(trigram(a, b, c, bits));
        bigram(b, c, bits, out);
        (a, b) = (b, c);
    }
}

fn query_tokens_with(folded_query: &str, bits: u32) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = folded_query.chars();
    let (a, b) = (chars.next()?, chars.next()?);
    if chars.next().is_some() {
        // The trigrams alone are as exact as trigrams and bigrams together, and each term costs
        // the query a doclist to read.
        tokens_with(folded_query, bits, &mut out);
        out.retain(|&t| t & (1 << bits) == 0);
        if out.len() > ALL_UP_TO {
            let last = out.len() - 1;
            out = (out.iter().enumerate())
                .filter(|&(i, _)| i % 3 == 0 || i == last)
                .map(|(_, &t)| t)
                .collect();
        }
    } else if is_cjk(a) && is_cjk(b) {
        bigram(a, b, bits, &mut out);
    } else {
        return None;
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn trigram(a: char, b: char, c: char, bits: u32) -> Token {
    // Scalar values fit in 21 bits, so three of them pack into a u64 without loss.
    hash(((a as u64) << 42) | ((b as u64) << 21) | c as u64, bits)
}

fn bigram(a: char, b: char, bits: u32, out: &mut Vec<Token>) {
    // Below the first CJK block (Hangul Jamo) lies most text: one comparison rules it out.
    if (a as u32) < 0x1100 || (b as u32) < 0x1100 {
        return;
    }
    if is_cjk(a) && is_cjk(b) {
        // The top bit keeps the packed bigram apart from every packed trigram before hashing,
        // and the kind bit keeps the hashes apart.
        let key = (1 << 63) | ((a as u64) << 21) | b as u64;
        out.push((1 << bits) | hash(key, bits));
    }
}

/// The splitmix64 finaliser: fixed, so that token values are stable across builds (unlike the
/// standard library's hashers), and well mixed in its top bits, which are the ones kept.
fn hash(key: u64, bits: u32) -> Token {
    let mut z = key;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> (64 - bits)) as Token
}

#[cfg(test)]
mod tests {
    use history_core::Filter;
    use history_raw::fold;

    use super::*;

    /// Pieces that random texts are made of: each is a case-folding trap or a script the tokens
    /// treat apart (`ß`→`ss`, `ẞ`, ligatures, Kelvin, final sigma, Turkish dotted and dotless i,
    /// combining marks, CJK with its punctuation and fullwidth forms, emoji with a modifier).
    const PIECES: &[&str] = &[
        "a",
        "b",
        "c",
        "e",
        "i",
        "s",
        "t",
        "x",
        "config",
        "Config",
        "CONFIG",
        "the ",
        "onfig",
        "ß",
        "ẞ",
        "SS",
        "ss",
        "Straße",
        "STRASSE",
        "ﬁ",
        "fi",
        "FI",
        "ﬂ",
        "ﬀ",
        "ff",
        "\u{212A}",
        "k",
        "K",
        "Kelvin",
        "ς",
        "σ",
        "Σ",
        "οδος",
        "ΟΔΟΣ",
        "İ",
        "I",
        "ı",
        "i\u{307}",
        "İstanbul",
        "日",
        "本",
        "語",
        "日本語",
        "の",
        "を",
        "カタカナ",
        "ｶﾀｶﾅ",
        "한국어",
        "。",
        "、",
        "「",
        "」",
        "，",
        "Ａ",
        "ａ",
        "😀",
        "👍🏽",
        "\u{301}",
        "e\u{301}",
        "é",
        "\u{308}",
        "ü",
        " ",
        "\n",
        "-",
        "_",
        "\"",
        "{",
        "}",
    ];

    fn random_text(rng: &mut fastrand::Rng, max_pieces: usize) -> String {
        (0..rng.usize(1..=max_pieces))
            .map(|_| PIECES[rng.usize(..PIECES.len())])
            .collect()
    }

    /// Each scalar kept, upper-cased or lower-cased: the ways a user may type what they saw.
    fn vary_case(rng: &mut fastrand::Rng, s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            match rng.u8(..3) {
                0 => out.push(c),
                1 => out.extend(c.to_uppercase()),
                _ => out.extend(c.to_lowercase()),
            }
        }
        out
    }

    fn random_substring(rng: &mut fastrand::Rng, s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        let start = rng.usize(..chars.len());
        let end = rng.usize(start..=chars.len().min(start + 8));
        chars[start..end].iter().collect()
    }

    fn random_query(rng: &mut fastrand::Rng, events: &[String]) -> String {
        let event = &events[rng.usize(..events.len())];
        match rng.u8(..10) {
            0..=4 => {
                let sub = random_substring(rng, event);
                vary_case(rng, &sub)
            }
            5..=6 => {
                let sub = random_substring(rng, &fold(event));
                vary_case(rng, &sub)
            }
            _ => random_text(rng, 3),
        }
    }

    fn line_tokens(events: &[String]) -> Vec<Token> {
        let mut tokens = Vec::new();
        for e in events {
            text_tokens(&fold(e), &mut tokens);
        }
        tokens.sort_unstable();
        tokens.dedup();
        tokens
    }

    fn holds_all(line: &[Token], query: &[Token]) -> bool {
        query.iter().all(|t| line.binary_search(t).is_ok())
    }

    #[test]
    fn no_hit_of_the_matcher_is_ever_missed() {
        let mut rng = fastrand::Rng::with_seed(0x70_6b_65_6e);
        let (mut hits, mut answered) = (0, 0);
        for _ in 0..50_000 {
            let events: Vec<String> = (0..rng.usize(1..=3))
                .map(|_| random_text(&mut rng, 12))
                .collect();
            let line = line_tokens(&events);
            let query = random_query(&mut rng, &events);
            let filter = Filter::new(std::slice::from_ref(&query), vec![], None, None);
            if !events.iter().any(|e| filter.matches_text(e)) {
                continue;
            }
            hits += 1;
            if let Some(required) = query_tokens(&fold(&query)) {
                answered += 1;
                assert!(
                    holds_all(&line, &required),
                    "query {query:?} matches {events:?} but its tokens are not all in the line's"
                );
            }
        }
        // The property must not hold vacuously.
        assert!(
            hits > 8_000 && answered > 4_000,
            "{hits} hits, {answered} answered"
        );
    }

    #[test]
    fn tokens_never_span_two_events() {
        let mut tokens = Vec::new();
        text_tokens("ab", &mut tokens);
        text_tokens("cd", &mut tokens);
        assert!(tokens.is_empty());
        assert!(!holds_all(
            &line_tokens(&["xab".into(), "cdx".into()]),
            &query_tokens("abc").unwrap()
        ));
    }

    #[test]
    fn a_long_query_needs_the_trigrams_that_cover_it() {
        let tokens = |grams: &[&str]| {
            let mut out: Vec<Token> = grams
                .iter()
                .flat_map(|g| line_tokens(&[g.to_string()]))
                .collect();
            out.sort_unstable();
            out
        };
        // Up to eight trigrams, all of them; from nine, every third and the last.
        let all = ["abc", "bcd", "cde", "def", "efg", "fgh", "ghi", "hij"];
        assert_eq!(query_tokens("abcdefghij").unwrap(), tokens(&all));
        let covering = ["abc", "def", "ghi", "ijk"];
        assert_eq!(query_tokens("abcdefghijk").unwrap(), tokens(&covering));
        let covering = ["abc", "def", "ghi", "jkl"];
        assert_eq!(query_tokens("abcdefghijkl").unwrap(), tokens(&covering));
        assert_eq!(query_tokens("abcd").unwrap(), tokens(&["abc", "bcd"]));
        assert_eq!(query_tokens("abc").unwrap(), tokens(&["abc"]));
    }

    #[test]
    fn short_queries_are_scanned_except_two_cjk_scalars() {
        for q in ["", "a", "ab", "ss", "日", "日a", "a日", "😀😀"] {
            assert_eq!(query_tokens(&fold(q)), None, "{q:?}");
        }
        let bigram = query_tokens("日本").unwrap();
        assert_eq!(bigram.len(), 1);
        assert_ne!(bigram[0] & (1 << BITS), 0, "a bigram carries the kind bit");
        assert!(holds_all(&line_tokens(&["東京と日本語".into()]), &bigram));
        assert!(!holds_all(&line_tokens(&["日 本".into()]), &bigram));
        // `ß` folds to two scalar values, so `ßx` needs a token although it is two characters.
        assert!(query_tokens(&fold("ßx")).is_some());
    }

    #[test]
    fn trigrams_and_bigrams_never_collide() {
        let mut tokens = Vec::new();
        text_tokens("日本語のテキスト、한국어 and latin", &mut tokens);
        let (bigrams, trigrams): (Vec<Token>, Vec<Token>) =
            tokens.iter().partition(|&&t| t & (1 << BITS) != 0);
        assert!(!bigrams.is_empty() && !trigrams.is_empty());
        assert!(tokens.iter().all(|&t| t < 1 << (BITS + 1)));
        // The same pair of scalars as a bigram and inside a trigram never gives the same token.
        let mut pair = Vec::new();
        text_tokens("日本", &mut pair);
        let mut triple = Vec::new();
        text_tokens("日本x", &mut triple);
        assert_eq!(triple.len(), 2);
        assert!(triple.contains(&pair[0]) && triple.iter().filter(|&&t| t != pair[0]).count() == 1);
    }

    #[test]
    fn the_cjk_ranges_hold_their_scripts_and_nothing_else_nearby() {
        for c in "漢字ひらがなカタカナｶﾀｶﾅ한글ᄀㄱ。、「」，！ㄅ㐀𠀀丽".chars()
        {
            assert!(is_cjk(c), "{c:?} U+{:04X}", c as u32);
        }
        for c in "azAZ09 éßσςі‐—…€😀\u{301}\u{2DFF}\u{A4D0}\u{FFF0}".chars() {
            assert!(!is_cjk(c), "{c:?} U+{:04X}", c as u32);
        }
    }

    #[test]
    fn distinct_keeps_the_first_of_each_token_line_after_line() {
        let mut distinct = Distinct::default();
        let top = (2 << BITS) - 1;
        let mut line = vec![5, 3, 5, top, 3, 64, 0, top, 0];
        distinct.retain(&mut line);
        assert_eq!(line, [5, 3, top, 64, 0]);
        // Nothing of the line before is remembered.
        let mut next = vec![0, 0, 5, 6];
        distinct.retain(&mut next);
        assert_eq!(next, [0, 5, 6]);
    }
}
