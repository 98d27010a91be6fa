//! The end of a string 16 bytes at a time with SSE2 (part of every x86_64 CPU), a branch per
//! quote or backslash; the last bytes of a text, fewer than a block, are [`plain`]'s.

use super::plain::{self, escape_len};

/// [`plain::string_end`], the same answer for the same arguments.
pub fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut at = start;
    let mut escaped = false;
    // `at` is never inside an escape: the bytes of one are passed over.
    while at + 16 <= bytes.len() {
        // SAFETY: SSE2 is part of x86_64, and the block lies within `bytes`.
        let mut specials = unsafe { specials(bytes, at) };
        let mut skip_to = at;
        // Every quote, backslash and control character of the block, lowest first.
        while specials != 0 {
            let i = at + specials.trailing_zeros() as usize;
            specials &= specials - 1;
            if i < skip_to {
                continue;
            }
            match bytes[i] {
                b'"' => return Some((i, escaped)),
                b'\\' => {
                    escaped = true;
                    skip_to = i + escape_len(bytes, i)?;
                }
                _ => return None,
            }
        }
        at = skip_to.max(at + 16);
    }
    plain::string_end(bytes, at).map(|(end, more)| (end, escaped || more))
}

/// The positions of quotes, backslashes and control characters among the 16 bytes from `at`, a
/// bit per byte.
///
/// # Safety
/// The CPU must have SSE2 (every x86_64 CPU has), and `at + 16 <= bytes.len()`.
#[target_feature(enable = "sse2")]
unsafe fn specials(bytes: &[u8], at: usize) -> u32 {
    use std::arch::x86_64::*;
    let x = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
    let hits = _mm_or_si128(
        _mm_or_si128(
            _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8)),
            _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8)),
        ),
        // x <= 0x1f, unsigned: max(x, 0x1f) == 0x1f.
        _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f)),
    );
    _mm_movemask_epi8(hits) as u32
}
