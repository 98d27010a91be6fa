//! A validating forward scan over one JSON line, for decoders that read a few fields of every line
//! of a big transcript (its place in a conversation graph) and skip the rest.
//!
//! It checks what serde_json checks when it skips a value with `IgnoredAny`: string escapes and
//! control characters, number syntax, structure. The bytes inside strings, most of a transcript,
//! are passed over 16 at a time. Anything out of the ordinary (an escape inside a string the
//! caller wants, a surrogate escape, deep nesting, a repeated field) ends the scan with `None`, and
//! the caller parses the line with serde instead: a scan accepts a subset of what serde accepts,
//! and reads it the same way.
//!
//! ```
//! use history_core::scan::Scan;
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
        Scan { text, at: 0 }
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
            b'-' | b'0'..=b'9' => self.number(),
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

    /// A number: `-`, an integer part without leading zeros, a fraction, an exponent.
    fn number(&mut self) -> Option<()> {
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
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            digits(&mut at).then_some(())?;
        }
        self.at = at;
        Some(())
    }
}

/// The closing quote of a string whose contents start at `start`, and whether it holds escapes;
/// `None` at a control character, a bad escape, a surrogate escape or the end of the text.
fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut at = start;
    let mut escaped = false;
    loop {
        at = next_special(bytes, at)?;
        match bytes[at] {
            b'"' => return Some((at, escaped)),
            b'\\' => {
                escaped = true;
                at += match *bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' => {
                        let hex = std::str::from_utf8(bytes.get(at + 2..at + 6)?).ok()?;
                        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            return None;
                        }
                        let unit = u32::from_str_radix(hex, 16).ok()?;
                        if (0xD800..=0xDFFF).contains(&unit) {
                            return None;
                        }
                        6
                    }
                    _ => return None,
                };
            }
            // A control character.
            _ => return None,
        }
    }
}

/// The first quote, backslash or control character at or after `at`.
fn next_special(bytes: &[u8], mut at: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86_64; every load lies within `bytes`.
        match unsafe { next_special_sse2(bytes, at) } {
            Ok(found) => return Some(found),
            Err(next) => at = next,
        }
    }
    let special = |b: &u8| matches!(b, b'"' | b'\\') || *b < 0x20;
    bytes[at..].iter().position(special).map(|i| at + i)
}

/// [`next_special`] over whole blocks of 16 bytes: the position found, or where the blocks end.
///
/// # Safety
/// The CPU must have SSE2 (every x86_64 CPU has).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn next_special_sse2(bytes: &[u8], mut at: usize) -> Result<usize, usize> {
    use std::arch::x86_64::*;
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let control = _mm_set1_epi8(0x1f);
    while at + 16 <= bytes.len() {
        // SAFETY: at + 16 <= bytes.len().
        let x = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
        let hits = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
            // x <= 0x1f, unsigned: max(x, 0x1f) == 0x1f.
            _mm_cmpeq_epi8(_mm_max_epu8(x, control), control),
        );
        let mask = _mm_movemask_epi8(hits) as u32;
        if mask != 0 {
            return Ok(at + mask.trailing_zeros() as usize);
        }
        at += 16;
    }
    Err(at)
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
    fn strings_are_read_plain_or_not_at_all() {
        let mut scan = Scan::new(r#"["plain","esc\"aped"]"#);
        let mut seen = Vec::new();
        scan.array(|scan| {
            seen.push(scan.plain_str());
            Some(())
        });
        assert_eq!(seen, [Some("plain"), None]);
    }

    #[test]
    fn finds_specials_in_every_position() {
        for len in 0..70 {
            for at in 0..len {
                for special in [b'"', b'\\', 0x00, 0x1f] {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = special;
                    assert_eq!(next_special(&bytes, 0), Some(at));
                    assert_eq!(next_special(&bytes, at + 1), None);
                }
                let mut bytes = vec![0x80u8; len];
                bytes[at] = 0x20;
                assert_eq!(next_special(&bytes, 0), None);
            }
        }
    }
}
