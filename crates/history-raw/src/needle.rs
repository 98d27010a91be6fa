//! An ASCII case-insensitive search for a run of ASCII letters, the search the raw prefilter runs
//! over every byte of every transcript.
//!
//! A general regex engine handles case-insensitivity by searching for the case variants of a
//! prefix, which is several times slower than an exact search. Here two letters of the needle
//! (the rarest in English text) are compared at once over 32 haystack positions, both cases in
//! one comparison (`byte | 0x20` is the lowercase of a letter, and no other byte maps to a
//! lowercase letter that way but its uppercase), and only positions where both agree are checked
//! in full. The vectorised loop is [`Pairs`]'s, which can look for hatches in the same pass.
//!
//! It stays hand-written because it is faster than the crates that do the same job. On the
//! generated corpus (`cargo xtask corpus --mib 256 --seed 1`, 252 MiB of transcripts with German
//! text, ligatures and escapes), `cargo xtask bench-raw` finds every place of a needle at
//! 3.5–6.4 GiB/s ("request" and "session", on most lines; "zebra", in a few files; "deploy", in
//! none), 1.4–1.9× as fast as `memchr::memmem` over a lowercased copy of each file, and 1.7–7.9×
//! as fast as `aho-corasick` with `ascii_case_insensitive(true)`, which gives up its vectorised
//! prefilter for it (best of 15 runs on a busy 2-core AVX2 machine). A case-sensitive `memmem`,
//! which finds only the lowercase needle, is 1.1–1.5× as fast: what the cases cost.

/// A compiled search for one needle of ASCII letters, in either case.
#[derive(Clone, Debug)]
pub struct AsciiNeedle {
    /// The needle, lowercase.
    needle: Box<[u8]>,
    /// The two positions compared first (equal for a one-letter needle).
    rare: (usize, usize),
}

/// How surprising a letter is in English text: -log2 of its frequency, in tenths of a bit
/// (6 bits for anything but a letter).
pub fn surprisal(letter: u8) -> u32 {
    // a b c d e f g h i j k l m n o p q r s t u v w x y z
    const SURPRISAL: [u32; 26] = [
        36, 60, 52, 45, 30, 53, 56, 40, 37, 95, 76, 46, 53, 39, 37, 59, 103, 41, 40, 35, 52, 69,
        57, 94, 60, 109,
    ];
    SURPRISAL
        .get(usize::from(letter.to_ascii_lowercase().wrapping_sub(b'a')))
        .copied()
        .unwrap_or(60)
}

impl AsciiNeedle {
    /// A search for `needle`, which must be non-empty ASCII letters; anything else is `None`.
    pub fn new(needle: &str) -> Option<AsciiNeedle> {
        if !needle.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        AsciiNeedle::ascii(needle)
    }

    /// A search for `needle`, any non-empty ASCII, its letters in either case; `None` for
    /// another needle, or one without a byte that `byte | 0x20` keeps (a letter, a digit, most
    /// punctuation): the two compared first must be such, so that the comparison in both cases
    /// at once holds wherever the needle does.
    pub fn ascii(needle: &str) -> Option<AsciiNeedle> {
        if needle.is_empty() || !needle.is_ascii() {
            return None;
        }
        let needle: Box<[u8]> = needle.to_ascii_lowercase().into_bytes().into();
        let mut order: Vec<usize> = (0..needle.len())
            .filter(|&i| needle[i] & 0x20 != 0)
            .collect();
        // Letters first: digits and punctuation fill a transcript's times, ids and JSON.
        order.sort_by_key(|&i| {
            let letter = needle[i].is_ascii_alphabetic();
            (!letter, std::cmp::Reverse(surprisal(needle[i])), i)
        });
        let first = *order.first()?;
        let rare = (first, *order.get(1).unwrap_or(&first));
        Some(AsciiNeedle { needle, rare })
    }

    /// Whether `haystack` holds the needle, its letters in either case.
    pub fn is_in(&self, haystack: &[u8]) -> bool {
        self.find_at(haystack, 0).is_some()
    }

    /// The needle, lowercase.
    pub fn needle(&self) -> &[u8] {
        &self.needle
    }

    /// The two positions of the needle compared first.
    pub(crate) fn rare(&self) -> (usize, usize) {
        self.rare
    }

    /// Whether the needle starts at `i` (which leaves room for it).
    #[inline]
    pub(crate) fn is_at(&self, haystack: &[u8], i: usize) -> bool {
        haystack[i..i + self.needle.len()].eq_ignore_ascii_case(&self.needle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(needle: &str, haystack: &[u8], start: usize) -> Option<usize> {
        let last = haystack.len().checked_sub(needle.len())?;
        (start..=last)
            .find(|&i| haystack[i..i + needle.len()].eq_ignore_ascii_case(needle.as_bytes()))
    }

    #[test]
    fn finds_what_a_naive_search_finds() {
        let mut rng = fastrand::Rng::with_seed(0x1234_5678_9abc_def0u64);
        // A small alphabet makes near misses common; every byte value turns up.
        let alphabet = b"aAbBzZ@`[{\x00\xff\n ";
        for round in 0..3000 {
            let len = rng.usize(..200);
            let haystack: Vec<u8> = (0..len)
                .map(|_| {
                    if round % 7 == 0 {
                        rng.u8(..)
                    } else {
                        alphabet[rng.usize(..alphabet.len())]
                    }
                })
                .collect();
            let needle: String = (0..1 + rng.usize(..5))
                .map(|_| b"abzAZ"[rng.usize(..5)] as char)
                .collect();
            let finder = AsciiNeedle::new(&needle).unwrap();
            for start in [0, 1, rng.usize(..40)] {
                assert_eq!(
                    finder.find_at(&haystack, start),
                    naive(&needle, &haystack, start),
                    "{needle:?} in {haystack:?} from {start}"
                );
            }
        }
    }

    #[test]
    fn any_ascii_needle_finds_what_a_naive_search_finds() {
        let mut rng = fastrand::Rng::with_seed(0x0fed_cba9_8765_4321u64);
        // Bytes with and without the 0x20 bit, letters of both cases, and bytes that `| 0x20`
        // maps onto the needle's (`_` and DEL, `@` and a backtick, CR and `-`).
        let alphabet = b"aAzZ09_-@`[{\x7f\r\n .\x00\xff";
        let needles = b"aZ09_-@`{ .";
        for round in 0..4000 {
            let len = rng.usize(..200);
            let haystack: Vec<u8> = (0..len)
                .map(|_| match round % 7 {
                    0 => rng.u8(..),
                    _ => alphabet[rng.usize(..alphabet.len())],
                })
                .collect();
            let needle: String = (0..1 + rng.usize(..6))
                .map(|_| needles[rng.usize(..needles.len())] as char)
                .collect();
            let Some(finder) = AsciiNeedle::ascii(&needle) else {
                assert!(needle.bytes().all(|b| b & 0x20 == 0), "{needle:?}");
                continue;
            };
            for start in [0, 1, rng.usize(..40)] {
                assert_eq!(
                    finder.find_at(&haystack, start),
                    naive(&needle, &haystack, start),
                    "{needle:?} in {haystack:?} from {start}"
                );
            }
        }
        assert!(AsciiNeedle::ascii("needle-1-00267").is_some());
        assert!(AsciiNeedle::ascii("_@").is_none());
        assert!(AsciiNeedle::ascii("é").is_none());
    }

    #[test]
    fn only_letters_are_accepted() {
        assert!(AsciiNeedle::new("").is_none());
        assert!(AsciiNeedle::new("a-b").is_none());
        assert!(AsciiNeedle::new("é").is_none());
        assert_eq!(AsciiNeedle::new("DeploY").unwrap().needle(), b"deploy");
    }

    #[test]
    fn near_the_end_and_across_blocks() {
        let finder = AsciiNeedle::new("quokka").unwrap();
        for len in 0..100 {
            for at in 0..=len {
                let mut hay = vec![b'x'; len + 6];
                hay[at..at + 6].copy_from_slice(b"QuOkKa");
                assert_eq!(finder.find_at(&hay, 0), Some(at));
                assert_eq!(finder.find_at(&hay, at + 1), None);
            }
        }
    }
}
