//! A validating forward scan over one JSON line, for decoders that read a few fields of every line
//! of a big transcript (its place in a conversation graph) and skip the rest.
//!
//! It checks what serde_json checks when it skips a value with `IgnoredAny`: string escapes and
//! control characters, number syntax, structure. The bytes inside strings, most of a transcript,
//! are passed over 64 at a time with AVX2 (16 with SSE2 alone; see `strings`). Anything out of
//! the ordinary (an escape inside a string the caller wants, a surrogate escape, deep nesting)
//! ends the scan with `None`, and the caller parses the line with serde instead: a scan accepts
//! a subset of what serde accepts, and reads it the same way.
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

mod strings;

use strings::string_end;

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
}
