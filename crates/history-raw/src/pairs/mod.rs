//! A search for any of a few two-byte sequences in one pass, 32 positions at a time: how the raw
//! prefilter finds the starts of its hatches (`\u` escapes, and the first two bytes of the
//! non-ASCII characters that fold to ASCII letters) without a pass per sequence, and in the same
//! pass as its key ([`Pairs::find_with`]).
//!
//! Two twins answer with one signature: [`avx2::find`], the vectorised loop (all of this
//! module's `unsafe`), and [`plain::find`], a position at a time. [`Pairs`] picks the first when
//! the CPU has AVX2; a test holds the two equal on random input. So do [`avx2::find_keys`] and
//! [`plain::find_keys`], for several keys in the same pass (the OR of a search, the terms of
//! `find`), up to [`MAX_KEYS`] ([`Pairs::find_with_keys`]): each key's two rare letters are
//! compared as one key's are. A pass per key took `find` five passes and more over each text;
//! with one, five common words took 1.69–1.75 s instead of 1.78–1.81 s on the 1 GiB bench
//! corpus.
//!
//! Against the crates that do the same job, on the generated corpus (`cargo xtask corpus --mib
//! 256 --seed 1`: 252 MiB of transcripts with German text, ligatures and escapes), `cargo xtask
//! bench-raw` measures (best of 15 runs on a busy 2-core AVX2 machine):
//! - a key and its hatches in one pass ([`Pairs::find_with`], the prefilter's search; 2 to 7
//!   pairs): 2.4–4.3 GiB/s, 6.6–12.7× as fast as one `aho-corasick` automaton over the key
//!   (`ascii_case_insensitive`) and the pairs;
//! - pairs alone ([`Pairs::find_at`]; 2, 3 and the 9 of every letter): 3.9–7.3 GiB/s, 4.4–10.5×
//!   as fast as `aho-corasick`, 3.1–3.2× as fast as `memchr2`/`memchr3` on the first bytes with
//!   the second checked (backslashes are common in JSON), 2.5× as fast as a `memmem` pass per
//!   pair;
//! - one pair alone (`\u`, when no letter of a query has a non-ASCII folding) is left to
//!   `memchr::memmem`: the loop here was no faster (memmem took 0.82–1.27× its time over six
//!   runs, within their noise).

#[cfg(target_arch = "x86_64")]
mod avx2;
mod plain;

pub use plain::{Found, Keep, MAX_KEYS};

use memchr::memmem;

use crate::needle::AsciiNeedle;

/// A compiled search for any of a set of byte pairs.
#[derive(Clone, Debug)]
pub struct Pairs {
    pairs: Vec<[u8; 2]>,
    /// memchr's search for the pair when it is the only one: searched for without a key, one
    /// pair is found as fast by it as by the loops here (see the module doc).
    one: Option<memmem::Finder<'static>>,
    /// Whether the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    avx2: bool,
}

impl Pairs {
    /// A search for any of `pairs` (duplicates are dropped).
    pub fn new(mut pairs: Vec<[u8; 2]>) -> Pairs {
        pairs.sort_unstable();
        pairs.dedup();
        Pairs {
            one: match pairs.as_slice() {
                [pair] => Some(memmem::Finder::new(pair).into_owned()),
                _ => None,
            },
            pairs,
            #[cfg(target_arch = "x86_64")]
            avx2: std::is_x86_feature_detected!("avx2"),
        }
    }

    /// How many pairs are searched for.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.pairs.len()
    }

    /// Where the first pair at or after `start` begins.
    pub fn find_at(&self, haystack: &[u8], start: usize) -> Option<usize> {
        self.find(None, haystack, start, &mut |_| true)
            .map(|(i, _)| i)
    }

    /// The first place at or after `start` where a pair begins and `keep` keeps it, or `key`
    /// occurs, in one pass; `true` for a pair. A pair and the key at the same place count as the
    /// key. A pair `keep` leaves out is passed over in the same pass: the caller's test of what
    /// a pair starts (most of them nothing that counts) costs no new start of the search.
    pub fn find_with(
        &self,
        key: &AsciiNeedle,
        haystack: &[u8],
        start: usize,
        keep: Keep<'_>,
    ) -> Option<(usize, bool)> {
        self.find(Some(key), haystack, start, keep)
    }

    /// The first place at or after `start` where a pair begins and `keep` keeps it, or one of
    /// `keys` occurs, in one pass for up to [`MAX_KEYS`] keys (more are searched for in groups
    /// of as many): the index of the key (the first of those there), `None` for a pair. A pair
    /// and a key at the same place count as the key.
    pub fn find_with_keys(
        &self,
        keys: &[AsciiNeedle],
        haystack: &[u8],
        start: usize,
        keep: Keep<'_>,
    ) -> Option<Found> {
        match keys {
            [] => (self.find(None, haystack, start, keep)).map(|(i, _)| (i, None)),
            [key] => (self.find(Some(key), haystack, start, keep))
                .map(|(i, pair)| (i, (!pair).then_some(0))),
            _ if keys.len() > MAX_KEYS => {
                // The first of each group's first, the earlier group's at the same place.
                let groups = keys.chunks(MAX_KEYS).enumerate();
                (groups.filter_map(|(g, group)| {
                    let (i, key) = self.find_with_keys(group, haystack, start, keep)?;
                    Some((i, key.map(|j| g * MAX_KEYS + j)))
                }))
                .min_by_key(|&(i, key)| (i, key.is_none(), key))
            }
            _ => {
                #[cfg(target_arch = "x86_64")]
                if self.avx2 {
                    // SAFETY: `self.avx2` is `is_x86_feature_detected!("avx2")`, taken in
                    // `Pairs::new`, so the CPU has AVX2.
                    return unsafe { avx2::find_keys(&self.pairs, keys, haystack, start, keep) };
                }
                plain::find_keys(&self.pairs, keys, haystack, start, keep)
            }
        }
    }

    fn find(
        &self,
        key: Option<&AsciiNeedle>,
        haystack: &[u8],
        mut start: usize,
        keep: Keep<'_>,
    ) -> Option<(usize, bool)> {
        if key.is_none() {
            if let Some(one) = &self.one {
                loop {
                    let found = start + one.find(haystack.get(start..)?)?;
                    if keep(found) {
                        return Some((found, true));
                    }
                    start = found + 1;
                }
            }
            if self.pairs.is_empty() {
                return None;
            }
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `self.avx2` is `is_x86_feature_detected!("avx2")`, taken in `Pairs::new`,
            // so the CPU has AVX2.
            return unsafe { avx2::find(&self.pairs, key, haystack, start, keep) };
        }
        plain::find(&self.pairs, key, haystack, start, keep)
    }
}

impl AsciiNeedle {
    /// Where the needle first occurs in `haystack` at or after `start`.
    pub fn find_at(&self, haystack: &[u8], start: usize) -> Option<usize> {
        Pairs::new(Vec::new())
            .find_with(self, haystack, start, &mut |_| true)
            .map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_naive_search_finds() {
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15u64);
        let alphabet = b"\\uxC\xc5\x89\xef\xac";
        for round in 0..3000 {
            let pairs: Vec<[u8; 2]> = (0..1 + round % 14)
                .map(|_| {
                    let a = alphabet[rng.usize(..7)];
                    let b = alphabet[rng.usize(..7)];
                    [a, b]
                })
                .collect();
            let len = rng.usize(..150);
            let hay: Vec<u8> = (0..len).map(|_| alphabet[rng.usize(..7)]).collect();
            let search = Pairs::new(pairs.clone());
            for start in [0, 1, rng.usize(..60)] {
                let naive =
                    (start..len.saturating_sub(1)).find(|&i| pairs.contains(&[hay[i], hay[i + 1]]));
                assert_eq!(search.find_at(&hay, start), naive, "{pairs:?} in {hay:?}");
            }
        }
        assert_eq!(Pairs::new(Vec::new()).find_at(b"abc", 0), None);
    }

    /// A few random pairs of `alphabet`'s bytes.
    fn some_pairs(rng: &mut fastrand::Rng, alphabet: &[u8], most: usize) -> Vec<[u8; 2]> {
        let n = rng.usize(..=most);
        let mut byte = || alphabet[rng.usize(..alphabet.len())];
        (0..n).map(|_| [byte(), byte()]).collect()
    }

    /// A few random keys of one to `longest` of `letters`.
    fn some_keys(
        rng: &mut fastrand::Rng,
        letters: &[u8],
        (fewest, most): (usize, usize),
        longest: usize,
    ) -> Vec<AsciiNeedle> {
        let n = fewest + rng.usize(..=most - fewest);
        (0..n)
            .map(|_| {
                let needle: String = (0..1 + rng.usize(..longest))
                    .map(|_| letters[rng.usize(..letters.len())] as char)
                    .collect();
                AsciiNeedle::new(&needle).unwrap()
            })
            .collect()
    }

    #[test]
    fn finds_any_of_several_keys_and_pairs_in_one_pass() {
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1du64);
        let alphabet = b"\\uAbBzZ \xc5\x89";
        for _ in 0..4000 {
            let pairs = some_pairs(&mut rng, alphabet, 4);
            // None, one, and up to twelve: more than one pass's worth too.
            let keys = some_keys(&mut rng, b"abz", (0, 12), 4);
            let len = rng.usize(..200);
            let hay: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            let search = Pairs::new(pairs.clone());
            // Every pair kept, or those at some places only.
            let every = rng.bool();
            let kept = move |i: usize| every || !(i * 7 + len).is_multiple_of(3);
            for start in [0, 1, rng.usize(..60)] {
                let naive = (start..len).find_map(|i| {
                    let key = keys.iter().position(|k| {
                        let n = k.needle().len();
                        i + n <= len && hay[i..i + n].eq_ignore_ascii_case(k.needle())
                    });
                    match key {
                        Some(j) => Some((i, Some(j))),
                        None => (i + 1 < len && pairs.contains(&[hay[i], hay[i + 1]]) && kept(i))
                            .then_some((i, None)),
                    }
                });
                assert_eq!(
                    search.find_with_keys(&keys, &hay, start, &mut { kept }),
                    naive,
                    "{keys:?} {pairs:?} in {hay:?}"
                );
                if let [key] = keys.as_slice() {
                    let one = naive.map(|(i, key)| (i, key.is_none()));
                    assert_eq!(search.find_with(key, &hay, start, &mut { kept }), one);
                }
            }
        }
    }

    /// The vectorised twins against the plain ones, directly (not through [`Pairs`], which picks
    /// one of them): any number of pairs, no key, one, or up to [`MAX_KEYS`] of different
    /// lengths, from any start, across block boundaries and up to the haystack's end.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vectorised_searches_find_what_the_plain_ones_find() {
        if !std::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: its twin cannot run here");
            return;
        }
        let mut rng = fastrand::Rng::with_seed(0x3c6e_f372_fe94_f82bu64);
        let alphabet = b"\\uUaAbBzZ\xc5\x89\xef\xac x";
        for _ in 0..40_000 {
            let mut pairs = some_pairs(&mut rng, alphabet, 12);
            pairs.sort_unstable();
            pairs.dedup();
            let keys = some_keys(&mut rng, b"abzAZ", (0, MAX_KEYS), 6);
            let len = rng.usize(..300);
            // Mostly filler, so that blocks pass without a mark and the tail is reached.
            let hay: Vec<u8> = (0..len)
                .map(|_| match rng.usize(..8) {
                    0 => rng.u8(..),
                    1 | 2 => alphabet[rng.usize(..alphabet.len())],
                    _ => b'x',
                })
                .collect();
            // Every pair kept, or those at some places only.
            let every = rng.bool();
            let mut kept = move |i: usize| every || !(i * 5 + len).is_multiple_of(4);
            for start in [0, 1, rng.usize(..len + 2), len, len + 1] {
                // SAFETY: the CPU has AVX2, checked above.
                let (wide, plain) = unsafe {
                    match keys.as_slice() {
                        [] | [_] => (
                            avx2::find(&pairs, keys.first(), &hay, start, &mut kept)
                                .map(|(i, p)| (i, (!p).then_some(0))),
                            plain::find(&pairs, keys.first(), &hay, start, &mut kept)
                                .map(|(i, p)| (i, (!p).then_some(0))),
                        ),
                        _ => (
                            avx2::find_keys(&pairs, &keys, &hay, start, &mut kept),
                            plain::find_keys(&pairs, &keys, &hay, start, &mut kept),
                        ),
                    }
                };
                assert_eq!(wide, plain, "{keys:?} {pairs:?} in {hay:?} from {start}");
            }
        }
    }
}
