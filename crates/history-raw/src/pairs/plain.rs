//! The search a position at a time: the twin every other one is held equal to, and the one
//! that runs where no vectorised loop applies (no AVX2, more than 9 pairs, the last positions of
//! a haystack).

use crate::needle::AsciiNeedle;

/// The first place at or after `start` where one of `pairs` begins or `key` occurs; `true` for
/// a pair. A pair and the key at the same place count as the key.
pub fn find(
    pairs: &[[u8; 2]],
    key: Option<&AsciiNeedle>,
    haystack: &[u8],
    start: usize,
) -> Option<(usize, bool)> {
    let n = key.map_or(0, |k| k.needle().len());
    (start..haystack.len()).find_map(|i| {
        if key.is_some_and(|k| i + n <= haystack.len() && k.is_at(haystack, i)) {
            Some((i, false))
        } else {
            let pair = haystack.get(i..i + 2)?;
            pairs.iter().any(|p| p == pair).then_some((i, true))
        }
    })
}
