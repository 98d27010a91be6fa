//! A line's time and top-level fields read off its raw bytes, without parsing it: what lets a
//! search rank a big session's candidate lines before any of them is decoded.

use crate::model::Timestamp;

/// The time of a raw line's events ([`crate::Transcript::line_time`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineTime {
    /// It cannot be told without decoding.
    Unknown,
    /// The line's events have no time.
    Untimed,
    /// The line's events happen at this instant.
    At(Timestamp),
    /// The line's events happen at this instant or before, or have no time.
    AtMost(Timestamp),
}

impl LineTime {
    /// The time a decoder would give the line's events.
    pub fn of(time: Option<Timestamp>) -> LineTime {
        time.map_or(LineTime::Untimed, LineTime::At)
    }

    /// The time of a line whose events take it from the line's top-level `key` (an RFC 3339
    /// string; anything else is no time), read off its bytes without parsing them: the time
    /// the last `key` at the top level is given (or none), found by following the nesting up
    /// to each `key` where the last one in the line is nested. `None` when the bytes could hide
    /// the key or its value in escapes, or a string in them is malformed: then the line must be
    /// parsed.
    pub fn under_key(line: &[u8], key: &str) -> Option<LineTime> {
        // Only the escape of an ASCII character can spell part of a key (or of a time).
        let escapes_ascii = |at: usize| {
            let hex = line
                .get(at + 2..at + 6)
                .and_then(|h| std::str::from_utf8(h).ok());
            hex.and_then(|h| u32::from_str_radix(h, 16).ok())
                .is_none_or(|c| c < 0x80)
        };
        if memchr::memmem::find_iter(line, b"\\u").any(escapes_ascii) {
            return None;
        }
        let keys = || memchr::memmem::find_iter(line, key.as_bytes());
        let mut last = None;
        for found in keys() {
            match key_time(line, found, key) {
                KeyAt::Key(at, time) => last = Some((at, time)),
                KeyAt::NotAKey => {}
                KeyAt::Hidden => return None,
            }
        }
        let Some((at, time)) = last else {
            return Some(LineTime::Untimed);
        };
        // At the top level, the line up to it opens one object more than it closes (in one
        // object, the rest closes one more than it opens): whichever is shorter is read.
        let top = match at < line.len() / 2 {
            true => history_raw::scan::depth_change(&line[..at]) == Some(1),
            false => history_raw::scan::depth_change(&line[at..]) == Some(-1),
        };
        if top {
            return Some(LineTime::of(time));
        }
        let (mut depth, mut from, mut top) = (0, 0, None);
        for found in keys() {
            match key_time(line, found, key) {
                KeyAt::Key(at, time) => {
                    depth += history_raw::scan::depth_change(&line[from..at])?;
                    from = at;
                    if depth == 1 {
                        top = time;
                    }
                }
                KeyAt::NotAKey => {}
                KeyAt::Hidden => return None,
            }
        }
        Some(LineTime::of(top))
    }
}

/// What an occurrence of the key in a line is ([`key_time`]).
enum KeyAt {
    /// A key, at its opening quote, with the time its value gives.
    Key(usize, Option<Timestamp>),
    /// The word inside a string, or a string value: no key.
    NotAKey,
    /// A key whose value could hide a time in escapes: the line must be parsed.
    Hidden,
}

/// What the `key` that [`LineTime::under_key`] found at byte `found` of `line` is.
fn key_time(line: &[u8], found: usize, key: &str) -> KeyAt {
    // The key in quotes: `at` is its opening quote.
    let Some(at) = found.checked_sub(1).filter(|&q| line[q] == b'"') else {
        return KeyAt::NotAKey;
    };
    let backslashes = line[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    if backslashes % 2 == 1 {
        return KeyAt::NotAKey; // an escaped quote: the word ends a longer string
    }
    let Some(rest) = line[found + key.len()..].strip_prefix(b"\"") else {
        return KeyAt::NotAKey;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b":") else {
        return KeyAt::NotAKey; // a string value, not a key
    };
    let time = match rest.trim_ascii_start().strip_prefix(b"\"") {
        Some(value) => {
            let end = memchr::memchr2(b'"', b'\\', value);
            let Some(end) = end.filter(|&end| value[end] == b'"') else {
                return KeyAt::Hidden;
            };
            let Ok(value) = std::str::from_utf8(&value[..end]) else {
                return KeyAt::Hidden;
            };
            Timestamp::parse_rfc3339(value)
        }
        None => None, // not a string: no time
    };
    KeyAt::Key(at, time)
}

/// A field at the top level of a line that holds one JSON object ([`top_level`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopLevel<'a> {
    /// The object has no such field.
    Missing,
    /// It is `null`.
    Null,
    /// It is a string without escapes.
    Str(&'a str),
    /// It is some other value.
    Other,
}

/// The field `key` at the top level of `line`, read with a validating [`history_raw::scan::Scan`]
/// (which accepts what serde would parse as a `Value`, or gives up): `None` when the line is
/// not one object the scan reads, holds the field twice, or the field is a string with escapes.
/// A line's time off its bytes, when [`LineTime::under_key`] cannot tell (escapes elsewhere in
/// the line), without building the line's values.
pub fn top_level<'a>(line: &'a [u8], key: &str) -> Option<TopLevel<'a>> {
    let text = std::str::from_utf8(line).ok()?;
    let mut found = TopLevel::Missing;
    let mut scan = history_raw::scan::Scan::strict(text);
    scan.object(|scan, k| {
        if k != key {
            return scan.skip();
        }
        if found != TopLevel::Missing {
            return None;
        }
        found = match scan.peek()? {
            b'"' => TopLevel::Str(scan.plain_str()?),
            b'n' => scan.literal().map(|_| TopLevel::Null)?,
            _ => scan.skip().map(|()| TopLevel::Other)?,
        };
        Some(())
    })?;
    scan.finish()?;
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_under_a_key_is_read_off_the_bytes() {
        let t = |s: &str| Timestamp::parse_rfc3339(s).unwrap();
        let read = |line: &str| LineTime::under_key(line.as_bytes(), "timestamp");
        assert_eq!(
            read(
                r#"{"timestamp" : "2026-01-02T03:04:05Z","x":{"timestamp":"2026-01-01T00:00:00Z"}}"#
            ),
            Some(LineTime::At(t("2026-01-02T03:04:05Z"))),
            "a nested key after the top-level one"
        );
        assert_eq!(
            read(concat!(
                r#"{"timestamp":"2026-01-01T00:00:00Z","x":{"timestamp":"2027-01-01T00:00:00Z"},"#,
                r#""timestamp":"2026-01-03T00:00:00Z","y":[{"timestamp":"2028-01-01T00:00:00Z"}]}"#
            )),
            Some(LineTime::At(t("2026-01-03T00:00:00Z"))),
            "the last top-level key of several, as a parse keeps it"
        );
        assert_eq!(
            read(
                r#"{"x":{"timestamp":"2027-01-01T00:00:00Z"},"timestamp":"2026-01-01T00:00:00Z"}"#
            ),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "the last key is the top-level one"
        );
        assert_eq!(
            read(r#"{"a":"}{","timestamp":"2026-01-01T00:00:00Z","b":["]",{"c":"\"}"}]}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "brackets in strings do not count"
        );
        assert_eq!(
            read(r#"{"y":{"timestamp":"2025-01-01T00:00:00Z"}}"#),
            Some(LineTime::Untimed),
            "a nested key only: the line has no time"
        );
        assert_eq!(
            read(r#"{"k":"timestamp","note":"the \"timestamp\":\"2030\""}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(
            read(r#"{"timestamp":1767225600000}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(
            read(r#"{"timestamp":"yesterday"}"#),
            Some(LineTime::Untimed)
        );
        assert_eq!(read(r#"{"time\u0073tamp":"2026-01-01T00:00:00Z"}"#), None);
        assert_eq!(
            read(r#"{"a":"\u0041","timestamp":"2026-01-01T00:00:00Z"}"#),
            None,
            "an escaped ASCII letter anywhere: the line is parsed"
        );
        assert_eq!(
            read(r#"{"a":"Stra\u00dfe \ufb01le","timestamp":"2026-01-01T00:00:00Z"}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "escapes of other characters cannot hide a key"
        );
        assert_eq!(
            read(r#"{"timestamp":"2026-01-01T00:00:00Z","p":{"q":"{{[","r":[[[1]]],"s":"]]}}"}}"#),
            Some(LineTime::At(t("2026-01-01T00:00:00Z"))),
            "a first key, read from the line's start"
        );
        assert_eq!(
            read(r#"{"p":{"timestamp":"2026-01-01T00:00:00Z","q":"a long nested value"}}"#),
            Some(LineTime::Untimed),
            "a nested key early in the line"
        );
        assert_eq!(
            read(r#"{"timestamp":"2020-01-01T00:00:00Z","a\"timestamp":"2030-01-01T00:00:00Z"}"#),
            Some(LineTime::At(t("2020-01-01T00:00:00Z"))),
            "a key that only ends in the word"
        );
        assert_eq!(read(r#"{"timestamp":"2026-01-01T00:00:00\/Z"}"#), None);
    }
}
