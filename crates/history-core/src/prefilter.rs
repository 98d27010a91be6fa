//! Deciding from a file's raw bytes, before any JSON parsing, whether it can hold a hit.
//!
//! The decision is conservative: it may say yes wrongly (the decoder then finds nothing), never
//! no wrongly. A query is reduced to its *segments*, the maximal runs of ASCII letters in its
//! folded form. A decoded match of the query contains each segment, and each letter of a
//! segment came from one of:
//! - the same letter in the file, in either case (found by an ASCII case-insensitive search);
//! - a JSON escape (`\u0061`), or a non-ASCII character whose full case folding yields ASCII
//!   letters (`K` Kelvin → `k`, `ſ` → `s`, `ß` → `ss`, `ﬁ` → `fi`, `İ` → `i̇`…): when any such
//!   *hatch* for a letter of the query appears in the file, the file is a candidate;
//! - a word the decoder generates (`[image]`): segments inside a generated word are not required.
//!
//! Digits, punctuation, spaces and non-ASCII characters are never required: decoders render
//! numbers and join fields in their own way. A query with no required segment passes every file.

use std::io::Read;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

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

#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Segment `index` of query `query`.
    Segment { query: usize, index: usize },
    /// Any occurrence makes the file a candidate.
    Hatch,
}

/// A compiled raw-bytes test for a set of folded queries.
#[derive(Debug)]
pub struct RawFilter {
    automaton: Option<AhoCorasick>,
    patterns: Vec<Pattern>,
    /// Required segments per query.
    required: Vec<usize>,
    /// Some query has no required segment: every file is a candidate.
    always: bool,
    overlap: usize,
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

fn hatches(letter: char, out: &mut Vec<Vec<u8>>) {
    for c in [letter.to_ascii_lowercase(), letter.to_ascii_uppercase()] {
        out.push(format!("\\u{:04x}", c as u32).into_bytes());
    }
    for (c, letters) in ASCII_FOLDING {
        if letters.contains(letter) {
            let mut buf = [0u8; 4];
            out.push(c.encode_utf8(&mut buf).as_bytes().to_vec());
            out.push(format!("\\u{:04x}", *c as u32).into_bytes());
        }
    }
}

impl RawFilter {
    /// Compiles the test for `folded` queries (an OR) of a source that generates
    /// `generated_words`.
    pub fn new(folded: &[String], generated_words: &[&str]) -> RawFilter {
        let mut bytes: Vec<Vec<u8>> = Vec::new();
        let mut patterns = Vec::new();
        let mut required = Vec::new();
        let mut letters: Vec<char> = Vec::new();
        let mut always = folded.is_empty();
        for (query, q) in folded.iter().enumerate() {
            let segs = segments(q, generated_words);
            always |= segs.is_empty();
            required.push(segs.len());
            for (index, seg) in segs.into_iter().enumerate() {
                letters.extend(seg.chars());
                bytes.push(seg.into_bytes());
                patterns.push(Pattern::Segment { query, index });
            }
        }
        letters.sort_unstable();
        letters.dedup();
        let mut hatch = Vec::new();
        for l in letters {
            hatches(l, &mut hatch);
        }
        hatch.sort();
        hatch.dedup();
        for h in hatch {
            bytes.push(h);
            patterns.push(Pattern::Hatch);
        }
        let overlap = bytes.iter().map(Vec::len).max().unwrap_or(1);
        let automaton = if always {
            None
        } else {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&bytes)
                .ok()
        };
        // Without an automaton (it failed to build), pass everything.
        let always = always || automaton.is_none();
        RawFilter {
            automaton,
            patterns,
            required,
            always,
            overlap,
        }
    }

    /// Whether every file passes (nothing to test).
    pub fn passes_everything(&self) -> bool {
        self.always
    }

    /// Whether the bytes `reader` yields can hold a hit. Reads with a bounded buffer and stops
    /// as soon as the answer is yes; a read error answers yes (the decoder will report it).
    pub fn may_match(&self, mut reader: impl Read) -> bool {
        let Some(ac) = &self.automaton else {
            return true;
        };
        if self.always {
            return true;
        }
        let mut found: Vec<Vec<bool>> = self.required.iter().map(|n| vec![false; *n]).collect();
        let mut left: Vec<usize> = self.required.clone();
        let mut buf = vec![0u8; 1 << 20];
        let mut kept = 0;
        loop {
            let n = match reader.read(&mut buf[kept..]) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            };
            let end = kept + n;
            for m in ac.find_overlapping_iter(&buf[..end]) {
                match self.patterns[m.pattern().as_usize()] {
                    Pattern::Hatch => return true,
                    Pattern::Segment { query, index } => {
                        if !found[query][index] {
                            found[query][index] = true;
                            left[query] -= 1;
                            if left[query] == 0 {
                                return true;
                            }
                        }
                    }
                }
            }
            // Keep the tail so that a pattern split across two reads is still seen.
            kept = (self.overlap - 1).min(end);
            buf.copy_within(end - kept..end, 0);
        }
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
    fn plain_segments_decide() {
        assert!(passes(&["Deploy"], &[], "we DEPLOYED it"));
        assert!(!passes(&["deploy"], &[], "nothing here"));
        assert!(passes(&["zebra", "deploy"], &[], "a deploy"), "an OR");
        assert!(
            !passes(&["rolling deploy"], &[], "rolling only"),
            "every segment"
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
