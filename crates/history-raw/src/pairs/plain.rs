//! The search a position at a time: the twin every other one is held equal to, and the one
//! that runs where no vectorised loop applies (no AVX2, more than 9 pairs, the last positions of
//! a haystack).

use crate::needle::AsciiNeedle;

/// The most keys searched for in one pass ([`super::Pairs::find_with_keys`]).
pub const MAX_KEYS: usize = 8;

/// A place found by a search for keys and pairs: where, and which key is there (`None`: a
/// pair).
pub type Found = (usize, Option<usize>);

/// What tells whether a pair found at a place counts: one that does not is passed over.
pub type Keep<'a> = &'a mut dyn FnMut(usize) -> bool;

/// The first place at or after `start` where one of `pairs` begins (and `keep` keeps it) or `key`
/// occurs; `true` for a pair. A pair and the key at the same place count as the key.
pub fn find(
    pairs: &[[u8; 2]],
    key: Option<&AsciiNeedle>,
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Option<(usize, bool)> {
    let n = key.map_or(0, |k| k.needle().len());
    (start..haystack.len()).find_map(|i| {
        if key.is_some_and(|k| i + n <= haystack.len() && k.is_at(haystack, i)) {
            Some((i, false))
        } else {
            let pair = haystack.get(i..i + 2)?;
            (pairs.iter().any(|p| p == pair) && keep(i)).then_some((i, true))
        }
    })
}

/// The first place at or after `start` where one of `pairs` begins (and `keep` keeps it) or one
/// of `keys` occurs, with the index of the key (the first of those there), `None` for a pair. A
/// pair and a key at the same place count as the key.
pub fn find_keys(
    pairs: &[[u8; 2]],
    keys: &[AsciiNeedle],
    haystack: &[u8],
    start: usize,
    keep: Keep<'_>,
) -> Option<Found> {
    (start..haystack.len()).find_map(|i| {
        let key = keys
            .iter()
            .position(|k| i + k.needle().len() <= haystack.len() && k.is_at(haystack, i));
        if key.is_some() {
            return Some((i, key));
        }
        let pair = haystack.get(i..i + 2)?;
        (pairs.iter().any(|p| p == pair) && keep(i)).then_some((i, None))
    })
}
