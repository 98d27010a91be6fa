//! Deciding from a file's raw bytes, before any JSON parsing, whether it can hold a hit.
//!
//! The decision is conservative: it may say yes wrongly (the decoder then finds nothing), never
//! no wrongly. A query is reduced to its *key*, the rarest of its *segments* (the maximal runs
//! of ASCII letters in its folded form), judged by length and letter frequency. A decoded match of the query contains the key, and each
//! letter of the key came from one of:
//! - the same letter in the file, in either case (found by an ASCII case-insensitive search);
//! - a JSON escape (`\u0061`), or a non-ASCII character whose full case folding yields ASCII
//!   letters (`K` Kelvin → `k`, `ſ` → `s`, `ß` → `ss`, `ﬁ` → `fi`, `İ` → `i̇`…): when any such
//!   *hatch* for a letter of the query appears in the file, the file is a candidate;
//! - a word the decoder generates (`[image]`): segments inside a generated word are not required.
//!
//! Digits, punctuation, spaces and non-ASCII characters are never required: decoders render
//! numbers and join fields in their own way. A query with no required segment passes every file.
//! Only the key is looked for: one search per chunk, and the other segments of a query are rarely
//! what rules a file out once its rarest one is there.

use std::io::Read;

use regex::bytes::{Regex, RegexBuilder};

/// Non-ASCII characters whose full case folding contains ASCII letters, with those letters
/// (Unicode `CaseFolding.txt`, statuses C and F; checked against the folding in use by a test).
pub const ASCII_FOLDING: &[(char, &str)] = &[
    ('\u{00DF}', "s"),
    ('\u{0130}', "i"),
    ('\u{0149}', "n"),
    ('\u{017F}', "s"),
    ('\u{01F0}', "j"),
    ('\u{1E96}', "h"),
    ('\u{1E97}', "t"),
    ('\u{1E98}', "w"),
    ('\u{1E99}', "y"),
    ('\u{1E9A}', "a"),
    ('\u{1E9E}', "s"),
    ('\u{212A}', "k"),
    ('\u{FB00}', "f"),
    ('\u{FB01}', "fi"),
    ('\u{FB02}', "fl"),
    ('\u{FB03}', "fi"),
    ('\u{FB04}', "fl"),
    ('\u{FB05}', "st"),
    ('\u{FB06}', "st"),
];

/// The chunk a file is read in: small enough to stay in cache across the passes over it.
const CHUNK: usize = 256 * 1024;

/// A compiled raw-bytes test for a set of folded queries.
#[derive(Debug)]
pub struct RawFilter {
    /// Every query's key, in one ASCII case-insensitive search.
    keys: Option<Regex>,
    /// What stands for the keys' letters otherwise: one occurrence makes a candidate.
    hatches: Hatches,
    /// Some query has no required segment: every file is a candidate.
    always: bool,
    /// The longest pattern, in bytes: reads overlap by this much less one.
    overlap: usize,
}

/// How rarely a segment of ASCII letters should occur in text: the sum of its letters'
/// surprisal (-log2 of the letter's frequency in English, in tenths of a bit), so that longer
/// segments and rarer letters score higher.
fn rarity(segment: &str) -> u32 {
    // a b c d e f g h i j k l m n o p q r s t u v w x y z
    const SURPRISAL: [u32; 26] = [
        36, 60, 52, 45, 30, 53, 56, 40, 37, 95, 76, 46, 53, 39, 37, 59, 103, 41, 40, 35, 52, 69,
        57, 94, 60, 109,
    ];
    segment
        .bytes()
        .map(|b| {
            SURPRISAL
                .get(usize::from(b.to_ascii_lowercase().wrapping_sub(b'a')))
                .copied()
                .unwrap_or(60)
        })
        .sum()
}

/// The required segments of one folded query.
pub fn segments(folded: &str, generated_words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for seg in folded.split(|c: char| !c.is_ascii_alphabetic()) {
        if seg.is_empty() {
            continue;
        }
        let generated = generated_words
            .iter()
            .any(|w| w.to_ascii_lowercase().contains(seg));
        if !generated && !out.iter().any(|s| s == seg) {
            out.push(seg.to_string());
        }
    }
    out
}

/// What can stand for a query's letters in a file other than the letters themselves: `\uXXXX`
/// escapes of the letters (either case) and of the non-ASCII characters that fold to them, and
/// those characters written out.
#[derive(Debug, Default)]
struct Hatches {
    /// Code points whose `\uXXXX` escape counts.
    escaped: Vec<u32>,
    /// The non-ASCII characters that count, written out (UTF-8), in one search.
    written: Option<Regex>,
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
                    written.push(regex::escape(&c.to_string()));
                }
            }
        }
        let written = (!written.is_empty())
            .then(|| RegexBuilder::new(&written.join("|")).build().ok())
            .flatten();
        Hatches { escaped, written }
    }

    /// Whether any hatch occurs in `chunk`.
    fn occur_in(&self, chunk: &[u8]) -> bool {
        if self.written.as_ref().is_some_and(|w| w.is_match(chunk)) {
            return true;
        }
        memchr::memmem::find_iter(chunk, b"\\u").any(|at| {
            let hex = chunk
                .get(at + 2..at + 6)
                .and_then(|h| std::str::from_utf8(h).ok());
            hex.and_then(|h| u32::from_str_radix(h, 16).ok())
                .is_some_and(|cp| self.escaped.contains(&cp))
        })
    }
}

/// The longest hatch (`\uXXXX`), in bytes.
const LONGEST_HATCH: usize = 6;

impl RawFilter {
    /// Compiles the test for `folded` queries (an OR) of a source that generates
    /// `generated_words`.
    pub fn new(folded: &[String], generated_words: &[&str]) -> RawFilter {
        let keys: Option<Vec<String>> = folded
            .iter()
            .map(|q| {
                let segs = segments(q, generated_words);
                segs.into_iter()
                    .reduce(|a, b| if rarity(&b) > rarity(&a) { b } else { a })
            })
            .collect();
        let keys = keys.filter(|k| !k.is_empty()).unwrap_or_default();
        let mut letters: Vec<char> = keys.iter().flat_map(|k| k.chars()).collect();
        letters.sort_unstable();
        letters.dedup();
        let alternatives: Vec<String> = keys.iter().map(|k| regex::escape(k)).collect();
        let search = (!keys.is_empty())
            .then(|| {
                RegexBuilder::new(&alternatives.join("|"))
                    .unicode(false)
                    .case_insensitive(true)
                    .build()
                    .ok()
            })
            .flatten();
        RawFilter {
            always: search.is_none(),
            keys: search,
            hatches: Hatches::new(&letters),
            overlap: keys
                .iter()
                .map(String::len)
                .chain([LONGEST_HATCH])
                .max()
                .unwrap_or(1),
        }
    }

    /// Whether every file passes (nothing to test).
    pub fn passes_everything(&self) -> bool {
        self.always
    }

    /// Whether the bytes `reader` yields can hold a hit. Reads with a bounded buffer and stops
    /// as soon as the answer is yes; a read error answers yes (the decoder will report it).
    ///
    /// Each chunk is searched for the keys, then for hatches.
    pub fn may_match(&self, mut reader: impl Read) -> bool {
        if self.always {
            return true;
        }
        let mut buf = vec![0u8; CHUNK + self.overlap];
        let mut kept = 0;
        loop {
            let n = match reader.read(&mut buf[kept..]) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            };
            let end = kept + n;
            if self.scan(&buf[..end]) {
                return true;
            }
            // Keep the tail so that a pattern split across two reads is still seen.
            kept = (self.overlap - 1).min(end);
            buf.copy_within(end - kept..end, 0);
        }
    }

    /// Whether `bytes`, all there is, can hold a hit.
    pub fn may_match_slice(&self, bytes: &[u8]) -> bool {
        self.always || self.scan(bytes)
    }

    /// Whether a key or a hatch occurs in one chunk.
    fn scan(&self, chunk: &[u8]) -> bool {
        self.keys.as_ref().is_none_or(|k| k.is_match(chunk)) || self.hatches.occur_in(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::fold;

    fn passes(queries: &[&str], generated: &[&str], raw: &str) -> bool {
        let folded: Vec<String> = queries.iter().map(|q| fold(q)).collect();
        RawFilter::new(&folded, generated).may_match(raw.as_bytes())
    }

    #[test]
    fn the_folding_table_is_complete() {
        use caseless::Caseless;
        let mut computed = Vec::new();
        for cp in 0x80..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let f: String = std::iter::once(c).default_case_fold().collect();
            let mut ascii: Vec<char> = f.chars().filter(|x| x.is_ascii_alphabetic()).collect();
            ascii.sort_unstable();
            ascii.dedup();
            if !ascii.is_empty() {
                computed.push((c, ascii.into_iter().collect::<String>()));
            }
        }
        let table: Vec<(char, String)> = ASCII_FOLDING
            .iter()
            .map(|(c, s)| (*c, s.to_string()))
            .collect();
        assert_eq!(table, computed);
    }

    #[test]
    fn the_key_is_the_rarest_segment() {
        assert!(rarity("absent") > rarity("needle"));
        assert!(rarity("zygomorphic") > rarity("quokka"));
        assert!(rarity("deployment") > rarity("deploy"));
        assert!(!passes(&["needle-absent"], &[], "needle needle"));
    }

    #[test]
    fn plain_segments_decide() {
        assert!(passes(&["Deploy"], &[], "we DEPLOYED it"));
        assert!(!passes(&["deploy"], &[], "nothing here"));
        assert!(passes(&["zebra", "deploy"], &[], "a deploy"), "an OR");
        assert!(
            !passes(&["rolling deploy"], &[], "a deploy only"),
            "the rarest segment decides"
        );
        assert!(passes(
            &["Bash: ls"],
            &[],
            r#""name":"Bash","input":{"command":"ls"}"#
        ));
    }

    #[test]
    fn hatches_keep_escaped_and_folded_letters() {
        assert!(passes(&["abc"], &[], r#""\u0061bc""#));
        assert!(passes(&["kelvin"], &[], "5 \u{212A}elvin"));
        assert!(passes(&["strasse"], &[], "Stra\u{00DF}e"));
        assert!(passes(&["strasse"], &[], r#"Stra\u00dfe"#));
        assert!(passes(&["file"], &[], "\u{FB01}le"));
        assert!(!passes(&["strasse"], &[], "only strase and stras se"));
    }

    #[test]
    fn queries_without_letters_or_with_generated_words_pass_everything() {
        assert!(passes(&["😀"], &[], "{}"));
        assert!(passes(&["12345"], &[], "{}"));
        assert!(passes(&["[image]"], &["image"], "{}"));
        assert!(!passes(&["[image] cat"], &["image"], "{}"));
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
        let f = RawFilter::new(&["deployment".into()], &[]);
        assert!(f.may_match(Slow(b"xx deployment yy")));
        assert!(!f.may_match(Slow(b"xx deploymen yy")));
    }
}
