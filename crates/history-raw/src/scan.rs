//! A validating forward scan over one JSON line, for decoders that read a few fields of every line
//! of a big transcript (its place in a conversation graph) and skip the rest.
//!
//! It checks what serde_json checks when it skips a value with `IgnoredAny`: string escapes and
//! control characters, number syntax, structure. The bytes inside strings, most of a transcript,
//! are passed over 64 at a time with AVX2 (16 with SSE2 alone). Anything out of the ordinary (an
//! escape inside a string the caller wants, a surrogate escape, deep nesting) ends the scan with
//! `None`, and the caller parses the line with serde instead: a scan accepts a subset of what
//! serde accepts, and reads it the same way.
//!
//! ```
//! use history_raw::Scan;
//! let mut id = None;
//! let mut scan = Scan::new(r#"{"id":"a1","text":"long \"quoted\" text","n":[1,2.5e3]}"#);
//! scan.object(|scan, key| match key {
//!     "id" => scan.plain_str().map(|s| id = Some(s)),
//!     _ => scan.skip(),
//! })
//! .and_then(|()| scan.finish())
//! .unwrap();
//! assert_eq!(id, Some("a1"));
//! ```

/// How deep a skipped value may nest before the scan gives up (serde_json allows 128).
const MAX_DEPTH: u32 = 64;

/// A scan over one JSON text; see the [module](self).
pub struct Scan<'a> {
    text: &'a str,
    at: usize,
    /// Leave to serde every number whose range a `Value` would check.
    strict: bool,
}

/// A JSON literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
}

impl<'a> Scan<'a> {
    /// A scan from the start of `text`.
    pub fn new(text: &'a str) -> Scan<'a> {
        Scan {
            text,
            at: 0,
            strict: false,
        }
    }

    /// A scan that accepts a subset of what a `serde_json::Value` accepts (not only what
    /// `IgnoredAny` does): a number with an exponent, or too long to be sure of its range, is
    /// left to serde, and so is a map with the [raw-value key](crate::json::RAW_VALUE_KEY),
    /// which a `Value` reads as the text it holds.
    pub fn strict(text: &'a str) -> Scan<'a> {
        Scan {
            strict: true,
            ..Scan::new(text)
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips whitespace and returns the next byte, without taking it.
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Only whitespace is left.
    pub fn finish(mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// A string without escapes: its contents.
    pub fn plain_str(&mut self) -> Option<&'a str> {
        let start = self.at_string()?;
        let (end, escaped) = string_end(self.bytes(), start)?;
        self.at = end + 1;
        (!escaped).then(|| &self.text[start..end])
    }

    /// `null`, `true` or `false`.
    pub fn literal(&mut self) -> Option<Literal> {
        let rest = &self.bytes()[self.at..];
        let (literal, len) = match self.peek()? {
            b'n' if rest.starts_with(b"null") => (Literal::Null, 4),
            b't' if rest.starts_with(b"true") => (Literal::Bool(true), 4),
            b'f' if rest.starts_with(b"false") => (Literal::Bool(false), 5),
            _ => return None,
        };
        self.at += len;
        Some(literal)
    }

    /// Skips one value of any kind, checking it.
    pub fn skip(&mut self) -> Option<()> {
        self.skip_nested(0)
    }

    fn skip_nested(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => {
                let start = self.at + 1;
                self.at = string_end(self.bytes(), start)?.0 + 1;
                Some(())
            }
            b'{' if depth < MAX_DEPTH => self.object(|scan, _| scan.skip_nested(depth + 1)),
            b'[' if depth < MAX_DEPTH => self.array(|scan| scan.skip_nested(depth + 1)),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            _ => self.literal().map(|_| ()),
        }
    }

    /// An object: `field` is called with each key (without escapes) and must take its value.
    /// Keys may repeat; a caller that cares checks.
    pub fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.plain_str()?;
            // Only a first key makes a raw value; refusing it anywhere is simpler and as rare.
            if self.strict && key == crate::json::RAW_VALUE_KEY {
                return None;
            }
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array: `item` is called at each element and must take it.
    pub fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Where a string's contents start, the scan past its opening quote.
    fn at_string(&mut self) -> Option<usize> {
        self.eat(b'"')?;
        Some(self.at)
    }

    /// A number (`-`, an integer part without leading zeros, a fraction, an exponent): its text.
    pub fn number(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.at;
        let bytes = self.bytes();
        let digits = |at: &mut usize| {
            let start = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > start
        };
        let mut at = self.at;
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => {
                digits(&mut at);
            }
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            digits(&mut at).then_some(())?;
        }
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            if self.strict {
                return None;
            }
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            digits(&mut at).then_some(())?;
        }
        // Below 300 digits a number is within f64's range.
        if self.strict && at - start > 300 {
            return None;
        }
        self.at = at;
        Some(&self.text[start..at])
    }
}

/// How much deeper (negative: shallower) JSON nesting is at the end of `bytes` than at their
/// start, which must lie outside any string; `None` if a string in them is malformed.
pub fn depth_change(bytes: &[u8]) -> Option<i64> {
    let (mut depth, mut at) = (0i64, 0);
    while let Some(&b) = bytes.get(at) {
        match b {
            b'"' => {
                at = string_end(bytes, at + 1)?.0;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        at += 1;
    }
    Some(depth)
}

/// The closing quote of a string whose contents start at `start`, and whether it holds escapes;
/// `None` at a control character, a bad escape, a surrogate escape or the end of the text.
fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let (mut at, mut escaped) = (start, false);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: `is_x86_feature_detected!("avx2")` just said the CPU has AVX2.
        match unsafe { string_end_wide(bytes, start) } {
            Wide::End(end, escaped) => return Some((end, escaped)),
            Wide::Refused => return None,
            // The rest is left to the narrow scan, from the backslash that escapes its first
            // byte if one does.
            Wide::Rest(rest, backslash, seen) => {
                (at, escaped) = (rest - usize::from(backslash), seen)
            }
        }
    }
    string_end_narrow(bytes, at).map(|(end, more)| (end, escaped || more))
}

/// How far [`string_end_wide`] got.
#[cfg(target_arch = "x86_64")]
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

/// [`string_end`] 64 bytes at a time, without a branch per escape: the escaped bytes of a block
/// are found at once from its backslashes (the method of simdjson's stage 1), and only the
/// escapes themselves are then checked one by one.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn string_end_wide(bytes: &[u8], start: usize) -> Wide {
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
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
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

/// [`string_end`] 16 bytes at a time, a branch per quote or backslash.
fn string_end_narrow(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut at = start;
    let mut escaped = false;
    loop {
        // Every quote, backslash and control character of a block, lowest first; the bytes of
        // an escape are passed over.
        let (block, mut specials) = specials(bytes, at)?;
        let mut skip_to = at;
        while specials != 0 {
            let i = block + specials.trailing_zeros() as usize;
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
        at = skip_to.max(block + 16);
    }
}

/// The length of the escape at `at` (a backslash); `None` if it is not one serde reads to a
/// character (a surrogate escape is left to serde).
fn escape_len(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let hex = bytes.get(at + 2..at + 6)?;
            let mut unit = 0u32;
            for &h in hex {
                unit = unit * 16 + char::from(h).to_digit(16)?;
            }
            (!(0xD800..=0xDFFF).contains(&unit)).then_some(6)
        }
        _ => None,
    }
}

/// The positions of quotes, backslashes and control characters among the 16 bytes from `at`
/// (fewer at the end of `bytes`): where the block starts, and a bit per byte. `None` when `at`
/// is at the end.
fn specials(bytes: &[u8], at: usize) -> Option<(usize, u32)> {
    if at >= bytes.len() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if at + 16 <= bytes.len() {
        // SAFETY: SSE2 is part of x86_64, and the block lies within `bytes`.
        return Some((at, unsafe { specials_sse2(bytes, at) }));
    }
    let special = |b: &u8| matches!(b, b'"' | b'\\') || *b < 0x20;
    let mask = bytes[at..]
        .iter()
        .take(16)
        .enumerate()
        .filter(|(_, b)| special(b))
        .fold(0u32, |mask, (i, _)| mask | 1 << i);
    Some((at, mask))
}

/// [`specials`] over a whole block.
///
/// # Safety
/// The CPU must have SSE2 (every x86_64 CPU has), and `at + 16 <= bytes.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn specials_sse2(bytes: &[u8], at: usize) -> u32 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IgnoredAny;

    fn skims(text: &str) -> bool {
        let mut scan = Scan::new(text);
        scan.skip().is_some() && scan.finish().is_some()
    }

    #[test]
    fn accepts_only_what_serde_accepts() {
        let padding = "p".repeat(40);
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#"  {"a" : -0.5e+10 , "b":"\"\\\/\b\f\n\r\t\u00e9"}  "#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\ud83d"}"#,
            r#"{"a":"\q"}"#,
            r#"{"a":"\u12"}"#,
            "{\"a\":\"tab\tinside\"}",
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":tru}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":1} x"#,
            r#"[1,2"#,
            r#"{"a":"unterminated"#,
            &format!(r#"{{"a":"{padding}\"{padding}","b":"{padding}\u0001"}}"#),
            &format!("{}1{}", "[".repeat(80), "]".repeat(80)),
        ] {
            let serde = serde_json::from_str::<IgnoredAny>(text).is_ok();
            if skims(text) {
                assert!(serde, "the scan accepted what serde refuses: {text}");
            }
        }
        assert!(skims(r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#));
        assert!(skims(
            r#"  {"a" : -0.5e+10 , "b":"\"\\\/\b\f\n\r\t\u00e9"}  "#
        ));
        assert!(skims(&format!(r#"{{"a":"{padding}\"{padding}"}}"#)));
    }

    #[test]
    fn a_strict_scan_leaves_raw_value_maps_to_serde() {
        for text in [
            r#"{"$serde_json::private::RawValue":"[1]"}"#,
            r#"{"a":[{"$serde_json::private::RawValue":1}]}"#,
            r#"{"a":1,"$serde_json::private::RawValue":1}"#,
        ] {
            let mut scan = Scan::strict(text);
            assert_eq!(scan.skip(), None, "{text}");
            assert!(skims(text), "{text}");
        }
    }

    #[test]
    fn strings_are_read_plain_or_not_at_all() {
        let mut scan = Scan::new(r#"["plain","esc\"aped"]"#);
        let mut seen = Vec::new();
        scan.array(|scan| {
            seen.push(scan.plain_str());
            Some(())
        });
        assert_eq!(seen, [Some("plain"), None]);
    }

    /// [`string_end`] a byte at a time.
    fn string_end_slowly(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
        let (mut i, mut escaped) = (start, false);
        loop {
            match *bytes.get(i)? {
                b'"' => return Some((i, escaped)),
                b'\\' => {
                    escaped = true;
                    i += escape_len(bytes, i)?;
                }
                b if b < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    #[test]
    fn strings_end_where_a_byte_by_byte_reading_ends_them() {
        let mut rng = fastrand::Rng::with_seed(0x6a09_e667_f3bc_c908u64);
        let pieces: [&[u8]; 12] = [
            b"\\",
            b"\"",
            b"\\\\",
            b"\\n",
            b"\\\"",
            b"\\u00e9",
            b"\\ud800",
            b"\\x",
            b"\x01",
            b"abc",
            b"\xc3\xa9",
            b"\\u12",
        ];
        for round in 0..20_000 {
            let mut text = Vec::new();
            while text.len() < rng.usize(..400) {
                if rng.usize(..4) == 0 {
                    let piece = pieces[rng.usize(..pieces.len())];
                    // Most strings run long: a closing quote comes rarely.
                    if piece != b"\"" || rng.usize(..8) == 0 {
                        text.extend_from_slice(piece);
                    }
                } else {
                    let run = rng.usize(..80);
                    text.extend(std::iter::repeat_n(b'x', run));
                }
            }
            if round % 3 == 0 {
                // Mostly valid strings: drop the pieces serde refuses.
                text.retain(|&b| b >= 0x20);
            }
            text.push(b'"');
            let start = rng.usize(..text.len().min(70) + 1);
            assert_eq!(
                string_end(&text, start),
                string_end_slowly(&text, start),
                "{:?} from {start}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn strings_end_at_their_closing_quote_wherever_it_falls() {
        for len in 0..70 {
            for at in 0..len {
                let mut text = vec![b'x'; len];
                text[at] = b'"';
                assert_eq!(string_end(&text, 0), Some((at, false)), "{len} {at}");
                if at >= 2 {
                    // An escaped quote before it, possibly across a block boundary.
                    text[at - 2] = b'\\';
                    text[at - 1] = b'"';
                    assert_eq!(string_end(&text, 0), Some((at, true)), "{len} {at}");
                    text[at - 1] = 0x01;
                    assert_eq!(string_end(&text, 0), None, "{len} {at}");
                }
                if at >= 6 {
                    let mut text = vec![b'x'; len];
                    text[at] = b'"';
                    text[at - 6..at].copy_from_slice(b"\\u0022");
                    assert_eq!(string_end(&text, 0), Some((at, true)));
                    text[at - 6..at].copy_from_slice(b"\\ud800");
                    assert_eq!(string_end(&text, 0), None);
                }
            }
            assert_eq!(string_end(&vec![0x80; len], 0), None);
        }
    }
}
