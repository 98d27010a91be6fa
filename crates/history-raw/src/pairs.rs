//! A search for any of a few two-byte sequences in one pass, 32 positions at a time: how the raw
//! prefilter finds the starts of its hatches (`\u` escapes, and the first two bytes of the
//! non-ASCII characters that fold to ASCII letters) without a pass per sequence, and in the same
//! pass as its key ([`Pairs::find_with`]).

use crate::needle::AsciiNeedle;

/// A compiled search for any of a set of byte pairs.
#[derive(Clone, Debug)]
pub struct Pairs {
    pairs: Vec<[u8; 2]>,
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
        self.find(None, haystack, start).map(|(i, _)| i)
    }

    /// The first place at or after `start` where a pair begins or `key` occurs, in one pass;
    /// `true` for a pair. A pair and the key at the same place count as the key.
    pub fn find_with(
        &self,
        key: &AsciiNeedle,
        haystack: &[u8],
        start: usize,
    ) -> Option<(usize, bool)> {
        self.find(Some(key), haystack, start)
    }

    fn find(
        &self,
        key: Option<&AsciiNeedle>,
        haystack: &[u8],
        start: usize,
    ) -> Option<(usize, bool)> {
        if key.is_none() && self.pairs.is_empty() {
            return None;
        }
        let mut at = start;
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `self.avx2` is `is_x86_feature_detected!("avx2")`, taken in `Pairs::new`,
            // so the CPU has AVX2; each arm passes `N == self.pairs.len()`, and `KEY` only
            // when there is a key.
            let scanned = unsafe {
                match (key.is_some(), self.pairs.len()) {
                    (true, 0) => self.scan_avx2::<0, true>(key, haystack, at),
                    (true, 1) => self.scan_avx2::<1, true>(key, haystack, at),
                    (true, 2) => self.scan_avx2::<2, true>(key, haystack, at),
                    (true, 3) => self.scan_avx2::<3, true>(key, haystack, at),
                    (true, 4) => self.scan_avx2::<4, true>(key, haystack, at),
                    (true, 5) => self.scan_avx2::<5, true>(key, haystack, at),
                    (true, 6) => self.scan_avx2::<6, true>(key, haystack, at),
                    (true, 7) => self.scan_avx2::<7, true>(key, haystack, at),
                    (true, 8) => self.scan_avx2::<8, true>(key, haystack, at),
                    (true, 9) => self.scan_avx2::<9, true>(key, haystack, at),
                    (false, 1) => self.scan_avx2::<1, false>(key, haystack, at),
                    (false, 2) => self.scan_avx2::<2, false>(key, haystack, at),
                    (false, 3) => self.scan_avx2::<3, false>(key, haystack, at),
                    (false, 4) => self.scan_avx2::<4, false>(key, haystack, at),
                    (false, 5) => self.scan_avx2::<5, false>(key, haystack, at),
                    (false, 6) => self.scan_avx2::<6, false>(key, haystack, at),
                    (false, 7) => self.scan_avx2::<7, false>(key, haystack, at),
                    (false, 8) => self.scan_avx2::<8, false>(key, haystack, at),
                    (false, 9) => self.scan_avx2::<9, false>(key, haystack, at),
                    _ => Err(at),
                }
            };
            match scanned {
                Ok(found) => return Some(found),
                Err(next) => at = next,
            }
        }
        (at..haystack.len()).find_map(|i| {
            let n = key.map_or(0, |k| k.needle().len());
            if key.is_some_and(|k| i + n <= haystack.len() && k.is_at(haystack, i)) {
                Some((i, false))
            } else {
                let pair = haystack.get(i..i + 2)?;
                self.pairs.iter().any(|p| p == pair).then_some((i, true))
            }
        })
    }

    /// [`Pairs::find`] for `N` pairs over whole blocks of 32 start positions: what was found, or
    /// where the blocks end. More than 9 pairs (the most hatches make: `\u` and eight character
    /// prefixes) are searched without it.
    ///
    /// # Safety
    /// The CPU must have AVX2, there must be `N` pairs, and a key if `KEY`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn scan_avx2<const N: usize, const KEY: bool>(
        &self,
        key: Option<&AsciiNeedle>,
        haystack: &[u8],
        start: usize,
    ) -> Result<(usize, bool), usize> {
        use std::arch::x86_64::*;
        const W: usize = 32;
        let firsts: [__m256i; N] =
            std::array::from_fn(|k| _mm256_set1_epi8(self.pairs[k][0] as i8));
        let seconds: [__m256i; N] =
            std::array::from_fn(|k| _mm256_set1_epi8(self.pairs[k][1] as i8));
        // The key's two rare letters, compared in both cases at once (`byte | 0x20`).
        let needle = key.map_or(&[][..], AsciiNeedle::needle);
        let (i1, i2) = key.map_or((0, 0), AsciiNeedle::rare);
        let k1 = _mm256_set1_epi8(needle.get(i1).map_or(0, |&b| b as i8));
        let k2 = _mm256_set1_epi8(needle.get(i2).map_or(0, |&b| b as i8));
        let lower = _mm256_set1_epi8(0x20);
        let ptr = haystack.as_ptr();
        // A block reads W bytes from s, s + 1, s + i1 and s + i2 (i1, i2 < the needle's length).
        let reach = needle.len().max(2) - 1;
        let mut s = start;
        while s + W + reach <= haystack.len() {
            // SAFETY: every load ends at most at s + W + reach <= haystack.len().
            let mut keys = 0;
            if KEY {
                let a = _mm256_loadu_si256(ptr.add(s + i1).cast());
                let b = _mm256_loadu_si256(ptr.add(s + i2).cast());
                let both = _mm256_and_si256(
                    _mm256_cmpeq_epi8(_mm256_or_si256(a, lower), k1),
                    _mm256_cmpeq_epi8(_mm256_or_si256(b, lower), k2),
                );
                keys = _mm256_movemask_epi8(both) as u32;
            }
            let mut pairs = _mm256_setzero_si256();
            if N > 0 {
                let x = _mm256_loadu_si256(ptr.add(s).cast());
                let y = _mm256_loadu_si256(ptr.add(s + 1).cast());
                for k in 0..N {
                    let both = _mm256_and_si256(
                        _mm256_cmpeq_epi8(x, firsts[k]),
                        _mm256_cmpeq_epi8(y, seconds[k]),
                    );
                    pairs = _mm256_or_si256(pairs, both);
                }
            }
            let pairs = _mm256_movemask_epi8(pairs) as u32;
            let mut marks = keys | pairs;
            while marks != 0 {
                let bit = marks.trailing_zeros();
                let i = s + bit as usize;
                if keys & (1 << bit) != 0 && key.is_some_and(|k| k.is_at(haystack, i)) {
                    return Ok((i, false));
                }
                if pairs & (1 << bit) != 0 {
                    return Ok((i, true));
                }
                marks &= marks - 1;
            }
            s += W;
        }
        Err(s)
    }
}

impl AsciiNeedle {
    /// Where the needle first occurs in `haystack` at or after `start`.
    pub fn find_at(&self, haystack: &[u8], start: usize) -> Option<usize> {
        Pairs::new(Vec::new())
            .find_with(self, haystack, start)
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

    #[test]
    fn finds_keys_and_pairs_in_one_pass() {
        let mut rng = fastrand::Rng::with_seed(0x0123_4567_89ab_cdefu64);
        let alphabet = b"\\uAbBz\xc5\x89";
        for round in 0..3000 {
            let pairs: Vec<[u8; 2]> = (0..round % 8)
                .map(|_| [alphabet[rng.usize(..7)], alphabet[rng.usize(..7)]])
                .collect();
            let needle: String = (0..1 + rng.usize(..4))
                .map(|_| b"abz"[rng.usize(..3)] as char)
                .collect();
            let key = AsciiNeedle::new(&needle).unwrap();
            let len = rng.usize(..150);
            let hay: Vec<u8> = (0..len).map(|_| alphabet[rng.usize(..7)]).collect();
            let search = Pairs::new(pairs.clone());
            for start in [0, 1, rng.usize(..60)] {
                let naive = (start..len).find_map(|i| {
                    if i + needle.len() <= len
                        && hay[i..i + needle.len()].eq_ignore_ascii_case(needle.as_bytes())
                    {
                        Some((i, false))
                    } else {
                        (i + 1 < len && pairs.contains(&[hay[i], hay[i + 1]])).then_some((i, true))
                    }
                });
                assert_eq!(
                    search.find_with(&key, &hay, start),
                    naive,
                    "{needle} {pairs:?} in {hay:?}"
                );
            }
        }
    }
}
