//! The invariants of the parsers and scanners that take untrusted text, checked for any input:
//! the JSON scan against serde_json, the raw filter against the strings a line decodes to, and
//! the selector and time parsers. The fuzz targets in `fuzz/` and the seeded property tests of
//! the normal suite call these same functions, so that what one finds the other keeps checking.
//!
//! Each function panics, naming the input, at the first violation; an input that is not worth
//! looking at (not JSON, say) simply returns.
//!
//! ```
//! history_core::testing::properties::check_scan(r#"{"id":"a1","n":[1,2.5e3]}"#);
//! history_core::testing::properties::check_raw_filter("strasse", br#"{"text":"die Stra\u00dfe"}"#);
//! history_core::testing::properties::check_parsers("claude:4f2*");
//! ```

use serde::de::IgnoredAny;
use serde_json::Value;

use crate::choose::Filter;
use crate::choose::Selector;
use crate::model::SessionKey;
use crate::model::{parse_bound, Timestamp};
use history_raw::scan::{depth_change, Scan};
use history_raw::RawFilter;

/// The scan accepts only what serde_json accepts and reads it the same way:
/// - a skipped value with nothing after it is one serde reads with `IgnoredAny`, and a strict
///   scan's one serde reads as a `Value`;
/// - the plain strings of an object it reads field by field are the values serde finds under
///   those keys (the last of a repeated key, as serde keeps);
/// - a text serde reads as a `Value` nests back to depth 0, where the scan can tell.
pub fn check_scan(text: &str) {
    let serde_any = serde_json::from_str::<IgnoredAny>(text).is_ok();
    let serde_value = serde_json::from_str::<Value>(text).ok();
    let mut scan = Scan::new(text);
    if scan.skip().is_some() && scan.finish().is_some() {
        assert!(serde_any, "the scan skips what serde refuses: {text:?}");
    }
    let mut strict = Scan::strict(text);
    if strict.skip().is_some() && strict.finish().is_some() {
        assert!(
            serde_value.is_some(),
            "a strict scan skips what serde refuses as a Value: {text:?}"
        );
    }
    // Every field in order, with its value when it is a plain string.
    let mut fields: Vec<(&str, Option<&str>)> = Vec::new();
    let mut scan = Scan::strict(text);
    let read = scan
        .object(|scan, key| match scan.peek()? {
            b'"' => scan
                .plain_str()
                .map(|value| fields.push((key, Some(value)))),
            _ => scan.skip().map(|()| fields.push((key, None))),
        })
        .and_then(|()| scan.finish());
    if read.is_some() {
        let Some(Value::Object(map)) = &serde_value else {
            panic!("the scan reads an object serde refuses: {text:?}");
        };
        for (i, (key, value)) in fields.iter().enumerate() {
            // Serde keeps the last value of a repeated key, whatever its kind.
            let last = fields[i + 1..].iter().all(|(later, _)| later != key);
            if let (true, Some(value)) = (last, value) {
                assert_eq!(
                    map.get(*key).and_then(Value::as_str),
                    Some(*value),
                    "the scan reads {key:?} otherwise than serde: {text:?}"
                );
            }
        }
    }
    // `None` is the scan leaving a string to serde (a surrogate escape, say): no answer.
    if let (Some(_), Some(depth)) = (&serde_value, depth_change(text.as_bytes())) {
        assert_eq!(
            depth, 0,
            "a JSON value does not nest back to depth 0: {text:?}"
        );
    }
}

/// The raw filter never rules out a hit: when any string of the JSON `line` (a key or a value,
/// at any depth) matches `query` as a search matches text, the line passes
/// [`RawFilter::may_match_slice`], [`RawFilter::may_match`] (read in small pieces) and
/// [`RawFilter::candidate_lines`] (among other lines).
pub fn check_raw_filter(query: &str, line: &[u8]) {
    if line.contains(&b'\n') {
        return;
    }
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let filter = Filter::new(&[query.to_string()], vec![], None, None);
    let mut strings = Vec::new();
    strings_of(&value, &mut strings);
    let Some(hit) = strings.iter().find(|s| filter.matches_text(s)) else {
        return;
    };
    let raw = RawFilter::new(filter.queries());
    let here = || format!("query {query:?}, hit in {hit:?}, line {:?}", shown(line));
    assert!(
        raw.may_match_slice(line),
        "the raw filter rules out a line with a hit: {}",
        here()
    );
    assert!(
        raw.may_match(|| Ok(Trickle(line))),
        "the raw filter rules out a file with a hit, read a few bytes at a time: {}",
        here()
    );
    let mut file = b"{\"other\":\"line\"}\n".to_vec();
    file.extend_from_slice(line);
    file.extend_from_slice(b"\n{}\n");
    let mut found = false;
    let read = raw.candidate_lines(Trickle(&file), |candidate| found |= candidate == line);
    assert!(
        read.is_ok() && found,
        "the raw filter's candidate lines leave out a line with a hit: {}",
        here()
    );
}

/// Every string of a JSON value, keys included.
fn strings_of<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k);
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// A reader that hands out at most 7 bytes a call, so that patterns fall across reads.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len()).min(7);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// The selector and time parsers take any text without a panic, and what they give holds:
/// - a wildcard selector keeps its text and selects the session its own text names once every
///   `*` is filled in; a single one has a non-empty id without `*`; a path has no `*`;
/// - a time that parses prints (as RFC 3339) as text that parses back to the same instant, and a
///   relative bound lies at or before now.
pub fn check_parsers(text: &str) {
    match Selector::parse(text, &["claude", "codex", "pi"]) {
        Ok(Selector::Many(pattern)) => {
            assert_eq!(pattern.as_str(), text.trim(), "the pattern of {text:?}");
            for fill in ["", "x", "a:b*", ":"] {
                let named = pattern.as_str().replace('*', fill);
                let key = match named.split_once(':') {
                    Some((harness, id)) if pattern.as_str().contains(':') => {
                        SessionKey::new(harness, id)
                    }
                    _ => SessionKey::new("claude", named.clone()),
                };
                assert!(
                    pattern.matches(&key),
                    "the pattern {text:?} does not select {key}, its own text filled with {fill:?}"
                );
            }
        }
        Ok(Selector::One { id, .. }) => {
            assert!(
                !id.is_empty() && !id.contains('*'),
                "the selector {text:?} names the id {id:?}"
            );
        }
        Ok(Selector::Path(path)) => {
            let path = path.to_string_lossy();
            assert!(
                !path.contains('*') && (path.contains('/') || path.starts_with(['.', '~'])),
                "the selector {text:?} names the path {path:?}"
            );
        }
        Err(_) => {}
    }
    for time in [
        Timestamp::parse_rfc3339(text),
        Timestamp::parse_date(text),
        parse_bound(text, Timestamp(0)),
    ]
    .into_iter()
    .flatten()
    {
        let shown = time.to_string();
        // Only a four-digit year prints as RFC 3339 can say it.
        if shown.len() >= 24 && shown.as_bytes()[4] == b'-' && !shown.starts_with('-') {
            assert_eq!(
                Timestamp::parse_rfc3339(&shown),
                Some(time),
                "{text:?} parses to {shown}, which parses to another instant"
            );
        }
    }
    for now in [
        Timestamp(0),
        Timestamp::now(),
        Timestamp(i64::MIN),
        Timestamp(i64::MAX),
    ] {
        let plain =
            Timestamp::parse_rfc3339(text.trim()).or_else(|| Timestamp::parse_date(text.trim()));
        if let (Some(bound), None) = (parse_bound(text, now), plain) {
            assert!(
                bound <= now,
                "the relative bound {text:?} lies after now ({} > {})",
                bound.0,
                now.0
            );
        }
    }
}

/// A line for a failure message: lossy, and cut when long.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    text.chars().take(400).collect()
}
