//! The search 32 start positions at a time with AVX2: each pair's two bytes are compared over a
//! block at once, and so are the key's two rarest letters (both cases in one comparison, see
//! [`AsciiNeedle`]); only where a block marks a position is it looked at. The positions left
//! after the last whole block are [`plain`]'s.
//!
//! A pair whose first byte is 0x80 or more (the first two bytes of a non-ASCII character: all the
//! hatches but `\u`) is compared only in a block that has such a byte, which one movemask tells:
//! one block in twenty of the bench corpus's transcripts, German text and all. Without the
//! index, on the 1 GiB bench corpus, `git status` (a key and five pairs) took 271 ms instead of
//! 302, an absent word 155 ms instead of 167.

use super::plain::{self, Found, Keep, MAX_KEYS};
use crate::needle::AsciiNeedle;

/// [`plain::find`], the same answer for the same arguments.
///
/// # Safety
/// The CPU must have AVX2.
pub unsafe fn find(
    pairs: &[[u8; 2]],
    key: Option<&AsciiNeedle>,
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Option<(usize, bool)> {
    // SAFETY: the CPU has AVX2 (this function's own contract); each arm passes
    // `N == pairs.len()`, and `KEY` only when there is a key.
    let scanned = unsafe {
        match (key.is_some(), pairs.len()) {
            (true, 0) => split::<0, true>(pairs, key, haystack, start, keep),
            (true, 1) => split::<1, true>(pairs, key, haystack, start, keep),
            (true, 2) => split::<2, true>(pairs, key, haystack, start, keep),
            (true, 3) => split::<3, true>(pairs, key, haystack, start, keep),
            (true, 4) => split::<4, true>(pairs, key, haystack, start, keep),
            (true, 5) => split::<5, true>(pairs, key, haystack, start, keep),
            (true, 6) => split::<6, true>(pairs, key, haystack, start, keep),
            (true, 7) => split::<7, true>(pairs, key, haystack, start, keep),
            (true, 8) => split::<8, true>(pairs, key, haystack, start, keep),
            (true, 9) => split::<9, true>(pairs, key, haystack, start, keep),
            (false, 1) => split::<1, false>(pairs, key, haystack, start, keep),
            (false, 2) => split::<2, false>(pairs, key, haystack, start, keep),
            (false, 3) => split::<3, false>(pairs, key, haystack, start, keep),
            (false, 4) => split::<4, false>(pairs, key, haystack, start, keep),
            (false, 5) => split::<5, false>(pairs, key, haystack, start, keep),
            (false, 6) => split::<6, false>(pairs, key, haystack, start, keep),
            (false, 7) => split::<7, false>(pairs, key, haystack, start, keep),
            (false, 8) => split::<8, false>(pairs, key, haystack, start, keep),
            (false, 9) => split::<9, false>(pairs, key, haystack, start, keep),
            _ => Err(start),
        }
    };
    match scanned {
        Ok(found) => Some(found),
        Err(rest) => plain::find(pairs, key, haystack, rest, keep),
    }
}

/// [`blocks`] with `ASCII` its number of pairs compared in every block: none or one (`\u`)
/// when every other pair starts with a byte of 0x80 or more, else all of them.
///
/// # Safety
/// As [`blocks`].
unsafe fn split<const N: usize, const KEY: bool>(
    pairs: &[[u8; 2]],
    key: Option<&AsciiNeedle>,
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Result<(usize, bool), usize> {
    // SAFETY: as this function's own; `ASCII` is 0 or 1 only where `ascii_first` says so.
    unsafe {
        match ascii_first(pairs) {
            Some(0) => blocks::<N, KEY, 0>(pairs, key, haystack, start, keep),
            Some(1) => blocks::<N, KEY, 1>(pairs, key, haystack, start, keep),
            _ => blocks::<N, KEY, N>(pairs, key, haystack, start, keep),
        }
    }
}

/// How many of `pairs` (0 or 1) are to be compared in every block, when every other one starts
/// with a byte of 0x80 or more; `None` otherwise.
fn ascii_first(pairs: &[[u8; 2]]) -> Option<usize> {
    let ascii = pairs.iter().filter(|p| p[0] < 0x80).count();
    let high_after = pairs.iter().skip(ascii).all(|p| p[0] >= 0x80);
    (ascii <= 1 && high_after).then_some(ascii)
}

/// Which of the 32 positions from `at` start one of the pairs (their first and second bytes
/// broadcast in `firsts` and `seconds`), a bit each; those from `ASCII` on are compared only
/// where the block has a byte of 0x80 or more.
///
/// # Safety
/// The CPU must have AVX2, and 33 bytes from `at` must be readable; every pair from `ASCII` on
/// must start with a byte of 0x80 or more.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn pairs_at<const N: usize, const ASCII: usize>(
    at: *const u8,
    firsts: &[std::arch::x86_64::__m256i; N],
    seconds: &[std::arch::x86_64::__m256i; N],
) -> u32 {
    use std::arch::x86_64::*;
    if N == 0 {
        return 0;
    }
    // SAFETY: 33 bytes from `at` are readable (this function's contract).
    let (x, y) = unsafe {
        (
            _mm256_loadu_si256(at.cast()),
            _mm256_loadu_si256(at.add(1).cast()),
        )
    };
    let pair = |k: usize| {
        _mm256_and_si256(
            _mm256_cmpeq_epi8(x, firsts[k]),
            _mm256_cmpeq_epi8(y, seconds[k]),
        )
    };
    let mut found = _mm256_setzero_si256();
    for k in 0..ASCII.min(N) {
        found = _mm256_or_si256(found, pair(k));
    }
    if ASCII < N && _mm256_movemask_epi8(x) != 0 {
        for k in ASCII..N {
            found = _mm256_or_si256(found, pair(k));
        }
    }
    _mm256_movemask_epi8(found) as u32
}

/// [`plain::find`] for `N` pairs over whole blocks of 32 start positions: what was found, or
/// where the blocks end. More than 9 pairs (the most hatches make: `\u` and eight character
/// prefixes) are searched without it.
///
/// The pairs from `ASCII` on are compared only in a block with a byte of 0x80 or more.
///
/// # Safety
/// The CPU must have AVX2, there must be `N` pairs, and a key if `KEY`; every pair from `ASCII`
/// on must start with a byte of 0x80 or more.
#[target_feature(enable = "avx2")]
unsafe fn blocks<const N: usize, const KEY: bool, const ASCII: usize>(
    pairs: &[[u8; 2]],
    key: Option<&AsciiNeedle>,
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Result<(usize, bool), usize> {
    use std::arch::x86_64::*;
    const W: usize = 32;
    let firsts: [__m256i; N] = std::array::from_fn(|k| _mm256_set1_epi8(pairs[k][0] as i8));
    let seconds: [__m256i; N] = std::array::from_fn(|k| _mm256_set1_epi8(pairs[k][1] as i8));
    // The key's two rare letters, compared in both cases at once (`byte | 0x20`).
    let needle = key.map_or(&[][..], AsciiNeedle::needle);
    let rare = key.map_or((0, 0), AsciiNeedle::rare);
    let letters = (
        _mm256_set1_epi8(needle.get(rare.0).map_or(0, |&b| b as i8)),
        _mm256_set1_epi8(needle.get(rare.1).map_or(0, |&b| b as i8)),
    );
    // A block reads W bytes from s, s + 1 and the rare letters' places (below the needle's
    // length): the blocks end where the last of them would read past the haystack.
    let Some(end) = haystack.len().checked_sub(W + needle.len().max(2) - 1) else {
        return Err(start);
    };
    let mut s = start;
    loop {
        // SAFETY: the CPU has AVX2; every block `marked` looks at starts at or before `end`.
        let (keys, found);
        (s, keys, found) = unsafe {
            marked::<N, KEY, ASCII>(haystack.as_ptr(), s, end, rare, letters, &firsts, &seconds)
        }?;
        let mut marks = keys | found;
        while marks != 0 {
            let bit = marks.trailing_zeros();
            let i = s + bit as usize;
            if keys & (1 << bit) != 0 && key.is_some_and(|k| k.is_at(haystack, i)) {
                return Ok((i, false));
            }
            if found & (1 << bit) != 0 && keep(i) {
                return Ok((i, true));
            }
            marks &= marks - 1;
        }
        s += W;
    }
}

/// The first block of 32 start positions from `s` on (the last one starting at `end`) where
/// [`blocks`]'s key or pairs mark a position: where it starts, with the key's marks and the
/// pairs'; `Err` with where the blocks end when none does. A loop of its own, that no look at a
/// mark shares: with the look in the same loop, the place and the broadcast letters went
/// through the stack on every block (without the index, on the 1 GiB bench corpus, `git status`
/// took 204 ms instead of 213).
///
/// # Safety
/// The CPU must have AVX2, and each block up to `end` must be readable from `ptr` as [`blocks`]
/// reads it: 32 bytes from `s`, `s + 1`, `s + rare.0` and `s + rare.1`.
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn marked<const N: usize, const KEY: bool, const ASCII: usize>(
    ptr: *const u8,
    mut s: usize,
    end: usize,
    rare: (usize, usize),
    letters: (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i),
    firsts: &[std::arch::x86_64::__m256i; N],
    seconds: &[std::arch::x86_64::__m256i; N],
) -> Result<(usize, u32, u32), usize> {
    use std::arch::x86_64::*;
    let lower = _mm256_set1_epi8(0x20);
    while s <= end {
        // SAFETY: the block at `s <= end` is readable (this function's contract).
        let mut keys = 0;
        if KEY {
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(ptr.add(s + rare.0).cast()),
                    _mm256_loadu_si256(ptr.add(s + rare.1).cast()),
                )
            };
            let both = _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_or_si256(a, lower), letters.0),
                _mm256_cmpeq_epi8(_mm256_or_si256(b, lower), letters.1),
            );
            keys = _mm256_movemask_epi8(both) as u32;
        }
        // SAFETY: as above.
        let found = unsafe { pairs_at::<N, ASCII>(ptr.add(s), firsts, seconds) };
        if keys | found != 0 {
            return Ok((s, keys, found));
        }
        s += 32;
    }
    Err(s)
}

/// [`plain::find_keys`], the same answer for the same arguments, for two to [`MAX_KEYS`] keys:
/// each key's two rare letters compared over a block as [`blocks`] compares one key's.
///
/// # Safety
/// The CPU must have AVX2.
pub unsafe fn find_keys(
    pairs: &[[u8; 2]],
    keys: &[AsciiNeedle],
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Option<Found> {
    let ascii = ascii_first(pairs);
    macro_rules! split {
        ($n:literal) => {
            match ascii {
                Some(0) => keyed::<$n, 0>(pairs, keys, haystack, start, keep),
                Some(1) => keyed::<$n, 1>(pairs, keys, haystack, start, keep),
                _ => keyed::<$n, $n>(pairs, keys, haystack, start, keep),
            }
        };
    }
    // SAFETY: the CPU has AVX2 (this function's own contract); each arm passes
    // `N == pairs.len()`, and `ASCII` is 0 or 1 only where `ascii_first` says so.
    let scanned = match (keys.len(), pairs.len()) {
        (2..=MAX_KEYS, 0) => unsafe { split!(0) },
        (2..=MAX_KEYS, 1) => unsafe { split!(1) },
        (2..=MAX_KEYS, 2) => unsafe { split!(2) },
        (2..=MAX_KEYS, 3) => unsafe { split!(3) },
        (2..=MAX_KEYS, 4) => unsafe { split!(4) },
        (2..=MAX_KEYS, 5) => unsafe { split!(5) },
        (2..=MAX_KEYS, 6) => unsafe { split!(6) },
        (2..=MAX_KEYS, 7) => unsafe { split!(7) },
        (2..=MAX_KEYS, 8) => unsafe { split!(8) },
        (2..=MAX_KEYS, 9) => unsafe { split!(9) },
        _ => Err(start),
    };
    match scanned {
        Ok(found) => Some(found),
        Err(rest) => plain::find_keys(pairs, keys, haystack, rest, keep),
    }
}

/// [`plain::find_keys`] for `N` pairs and two to [`MAX_KEYS`] keys over whole blocks of 32
/// start positions: what was found, or where the blocks end. The pairs from `ASCII` on are
/// compared only in a block with a byte of 0x80 or more.
///
/// # Safety
/// The CPU must have AVX2, there must be `N` pairs and at most [`MAX_KEYS`] keys; every pair
/// from `ASCII` on must start with a byte of 0x80 or more.
#[target_feature(enable = "avx2")]
unsafe fn keyed<const N: usize, const ASCII: usize>(
    pairs: &[[u8; 2]],
    keys: &[AsciiNeedle],
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Result<Found, usize> {
    use std::arch::x86_64::*;
    const W: usize = 32;
    let firsts: [__m256i; N] = std::array::from_fn(|k| _mm256_set1_epi8(pairs[k][0] as i8));
    let seconds: [__m256i; N] = std::array::from_fn(|k| _mm256_set1_epi8(pairs[k][1] as i8));
    let count = keys.len();
    // Each key's two rare letters, compared in both cases at once (`byte | 0x20`), and where
    // they are in it.
    let mut rare = [(0usize, 0usize); MAX_KEYS];
    let mut k1 = [_mm256_setzero_si256(); MAX_KEYS];
    let mut k2 = [_mm256_setzero_si256(); MAX_KEYS];
    for (j, key) in keys.iter().enumerate() {
        let (i1, i2) = key.rare();
        rare[j] = (i1, i2);
        k1[j] = _mm256_set1_epi8(key.needle()[i1] as i8);
        k2[j] = _mm256_set1_epi8(key.needle()[i2] as i8);
    }
    // A block reads W bytes from s, s + 1 and each key's s + i1 and s + i2 (below its length).
    let reach = keys
        .iter()
        .map(|k| k.needle().len())
        .max()
        .unwrap_or(0)
        .max(2)
        - 1;
    let Some(end) = haystack.len().checked_sub(W + reach) else {
        return Err(start);
    };
    let letters = (&k1, &k2);
    let mut s = start;
    loop {
        // SAFETY: the CPU has AVX2; every block `keys_marked` looks at starts at or before
        // `end`.
        let found;
        (s, found) = unsafe {
            let ptr = haystack.as_ptr();
            keys_marked::<N, ASCII>(ptr, s, end, (count, &rare), letters, (&firsts, &seconds))
        }?;
        let mut all = found.any | found.pairs;
        while all != 0 {
            let bit = all.trailing_zeros();
            let i = s + bit as usize;
            // The first key there, as the plain twin has it: each key's length fits, i + its
            // length <= s + W + reach.
            let key = (0..count)
                .find(|&j| found.marks[j] & (1 << bit) != 0 && keys[j].is_at(haystack, i));
            if key.is_some() {
                return Ok((i, key));
            }
            if found.pairs & (1 << bit) != 0 && keep(i) {
                return Ok((i, None));
            }
            all &= all - 1;
        }
        s += W;
    }
}

/// What [`keys_marked`] found in a block: each key's marks, all of them, and the pairs'.
struct KeyMarks {
    marks: [u32; MAX_KEYS],
    any: u32,
    pairs: u32,
}

/// [`marked`] for [`keyed`]'s `count` keys (their rare letters at `rare`, broadcast in
/// `letters`): the first block from `s` on where one of them or a pair marks a position, or
/// `Err` with where the blocks end when none does up to `end`.
///
/// # Safety
/// As [`marked`], with each key's rare letters' places.
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn keys_marked<const N: usize, const ASCII: usize>(
    ptr: *const u8,
    mut s: usize,
    end: usize,
    (count, rare): (usize, &[(usize, usize); MAX_KEYS]),
    letters: (
        &[std::arch::x86_64::__m256i; MAX_KEYS],
        &[std::arch::x86_64::__m256i; MAX_KEYS],
    ),
    (firsts, seconds): (
        &[std::arch::x86_64::__m256i; N],
        &[std::arch::x86_64::__m256i; N],
    ),
) -> Result<(usize, KeyMarks), usize> {
    use std::arch::x86_64::*;
    let lower = _mm256_set1_epi8(0x20);
    while s <= end {
        let mut marks = [0u32; MAX_KEYS];
        let mut any = 0;
        for j in 0..count {
            // SAFETY: the block at `s <= end` is readable (this function's contract).
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(ptr.add(s + rare[j].0).cast()),
                    _mm256_loadu_si256(ptr.add(s + rare[j].1).cast()),
                )
            };
            let both = _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_or_si256(a, lower), letters.0[j]),
                _mm256_cmpeq_epi8(_mm256_or_si256(b, lower), letters.1[j]),
            );
            marks[j] = _mm256_movemask_epi8(both) as u32;
            any |= marks[j];
        }
        // SAFETY: as above.
        let pairs = unsafe { pairs_at::<N, ASCII>(ptr.add(s), firsts, seconds) };
        if any | pairs != 0 {
            return Ok((s, KeyMarks { marks, any, pairs }));
        }
        s += 32;
    }
    Err(s)
}
