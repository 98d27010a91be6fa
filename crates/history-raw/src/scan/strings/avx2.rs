//! The end of a string 64 bytes at a time with AVX2, without a branch per escape: the escaped
//! bytes of a block are found at once from its backslashes (the method of simdjson's stage 1),
//! and only the escapes themselves are then checked one by one. The last bytes of a text, fewer
//! than a block, are [`sse2`]'s.

use super::plain::escape_len;
use super::sse2;

/// How far [`blocks`] got.
enum Wide {
    /// The closing quote, and whether the string holds escapes.
    End(usize, bool),
    /// Something serde refuses, or an escape left to serde.
    Refused,
    /// Fewer than 64 bytes are left, from here; whether a backslash before here escapes the
    /// byte here; whether an escape was seen.
    Rest(usize, bool, bool),
}

/// Bit patterns of the positions in a 64-byte block.
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// [`super::plain::string_end`], the same answer for the same arguments.
///
/// # Safety
/// The CPU must have AVX2.
pub unsafe fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    // SAFETY: the CPU has AVX2 (this function's own contract).
    match unsafe { blocks(bytes, start) } {
        Wide::End(end, escaped) => Some((end, escaped)),
        Wide::Refused => None,
        // The rest is left to the narrow scan, from the backslash that escapes its first byte
        // if one does.
        Wide::Rest(rest, backslash, seen) => sse2::string_end(bytes, rest - usize::from(backslash))
            .map(|(end, more)| (end, seen || more)),
    }
}

/// [`string_end`] over whole blocks of 64 bytes.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn blocks(bytes: &[u8], start: usize) -> Wide {
    let mut at = start;
    // Whether the first byte of the block is escaped by a backslash run ending the last one.
    let mut carry = 0u64;
    let mut seen = false;
    while at + 64 <= bytes.len() {
        // SAFETY: the CPU has AVX2 (this function's own contract) and the block lies within
        // `bytes`.
        let (backslash, quote, control) = unsafe { block_masks(bytes, at) };
        // Which bytes are escaped: those after an odd run of backslashes.
        let backslash_here = backslash & !carry;
        let follows_escape = (backslash_here << 1) | carry;
        let odd_starts = backslash_here & !EVEN_BITS & !follows_escape;
        let (even_sequences, overflow) = odd_starts.overflowing_add(backslash_here);
        let escaped = (EVEN_BITS ^ (even_sequences << 1)) & follows_escape;
        let ends = quote & !escaped;
        let within = match ends {
            0 => u64::MAX,
            ends => (1u64 << ends.trailing_zeros()) - 1,
        };
        if control & within != 0 {
            return Wide::Refused;
        }
        let escapes = escaped & within;
        seen |= escapes != 0 || backslash & within != 0;
        if escapes != 0 {
            // SAFETY: as above.
            let (simple, unicode) = unsafe { escape_masks(bytes, at) };
            if escapes & !(simple | unicode) != 0 {
                return Wide::Refused;
            }
            let mut unicode = escapes & unicode;
            while unicode != 0 {
                let i = at + unicode.trailing_zeros() as usize;
                unicode &= unicode - 1;
                if escape_len(bytes, i - 1).is_none() {
                    return Wide::Refused;
                }
            }
        }
        if ends != 0 {
            return Wide::End(at + ends.trailing_zeros() as usize, seen);
        }
        carry = u64::from(overflow);
        at += 64;
    }
    Wide::Rest(at, carry != 0, seen)
}

/// The backslashes, quotes and control characters of the 64 bytes from `at`, a bit per byte.
///
/// # Safety
/// The CPU must have AVX2, and `at + 64 <= bytes.len()`.
#[target_feature(enable = "avx2")]
unsafe fn block_masks(bytes: &[u8], at: usize) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let quote = _mm256_set1_epi8(b'"' as i8);
    let control = _mm256_set1_epi8(0x1f);
    let half = |offset: usize| {
        let x = _mm256_loadu_si256(bytes.as_ptr().add(at + offset).cast());
        (
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, backslash)) as u32 as u64,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, quote)) as u32 as u64,
            // x <= 0x1f, unsigned: max(x, 0x1f) == 0x1f.
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(x, control), control)) as u32
                as u64,
        )
    };
    let (b0, q0, c0) = half(0);
    let (b1, q1, c1) = half(32);
    (b0 | b1 << 32, q0 | q1 << 32, c0 | c1 << 32)
}

/// The bytes of the 64 from `at` that may follow a backslash: those of a two-byte escape
/// (`"\\/bfnrt`), and `u`.
///
/// # Safety
/// The CPU must have AVX2, and `at + 64 <= bytes.len()`.
#[target_feature(enable = "avx2")]
unsafe fn escape_masks(bytes: &[u8], at: usize) -> (u64, u64) {
    use std::arch::x86_64::*;
    let half = |offset: usize| {
        let x = _mm256_loadu_si256(bytes.as_ptr().add(at + offset).cast());
        let is = |b: u8| _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b as i8));
        let simple = b"\"\\/bfnrt"
            .iter()
            .fold(_mm256_setzero_si256(), |acc, &b| {
                _mm256_or_si256(acc, is(b))
            });
        (
            _mm256_movemask_epi8(simple) as u32 as u64,
            _mm256_movemask_epi8(is(b'u')) as u32 as u64,
        )
    };
    let (s0, u0) = half(0);
    let (s1, u1) = half(32);
    (s0 | s1 << 32, u0 | u1 << 32)
}
