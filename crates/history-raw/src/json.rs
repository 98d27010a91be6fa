//! JSON helpers every decoder needs: skipping a value with exactly the checks a full parse makes,
//! and repairing the lone surrogate escapes real agents write.

use std::fmt;

use memchr::memmem;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};

/// Any JSON value, checked as a `serde_json::Value` would be (string escapes and surrogates,
/// number range, nesting depth, [raw-value maps](RAW_VALUE_KEY)) and not kept. serde's
/// `IgnoredAny` is no substitute: serde_json skips it with a scan that checks none of these, so
/// a line read with `IgnoredAny` in one place and `Value` in another could be accepted by one
/// read and refused by the other.
pub struct CheckedAny;

/// The key of the one entry of the map that stands for a `serde_json::value::RawValue`.
///
/// serde_json's `raw_value` feature, which the workspace turns on for every crate, teaches a
/// `Value` to read a map whose *first* key is this as the JSON text that its value, a string,
/// holds: `{"$serde_json::private::RawValue":"[1]"}` is the array `[1]`, and the map is refused
/// when the value is no string, the text is no JSON, or a second entry follows. (Later keys are
/// ordinary.) A read that claims to accept what a `Value` accepts must do the same.
pub const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// The rest of a map whose first key was [`RAW_VALUE_KEY`], as a `Value` reads it: the JSON text
/// of the entry's value, read as `T`. The caller returns at once, so that the deserializer
/// refuses a second entry as it does for a `Value`.
pub fn raw_value_text<'de, A: MapAccess<'de>, T: DeserializeOwned>(
    map: &mut A,
) -> Result<T, A::Error> {
    let text = map.next_value::<String>()?;
    serde_json::from_str(&text).map_err(de::Error::custom)
}

/// A map checked and dropped as a `Value` would read it: `None` for an ordinary map, and for a
/// raw-value map (see [`RAW_VALUE_KEY`]) its text read as `T`.
pub fn checked_map<'de, A: MapAccess<'de>, T: DeserializeOwned>(
    mut map: A,
) -> Result<Option<T>, A::Error> {
    match map.next_key::<FirstKey>()? {
        None => return Ok(None),
        Some(FirstKey::RawValue) => return raw_value_text(&mut map).map(Some),
        Some(FirstKey::Other) => map.next_value::<CheckedAny>().map(|_| ())?,
    }
    while map.next_entry::<CheckedAny, CheckedAny>()?.is_some() {}
    Ok(None)
}

/// A map's first key, as far as a `Value` tells keys apart.
enum FirstKey {
    RawValue,
    Other,
}

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl Visitor<'_> for Visit {
            type Value = FirstKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E>(self, key: &str) -> Result<FirstKey, E> {
                Ok(match key {
                    RAW_VALUE_KEY => FirstKey::RawValue,
                    _ => FirstKey::Other,
                })
            }
        }
        // As a `Value` reads its keys.
        d.deserialize_str(Visit)
    }
}

impl<'de> Deserialize<'de> for CheckedAny {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CheckedAnyVisitor)
    }
}

struct CheckedAnyVisitor;

impl<'de> Visitor<'de> for CheckedAnyVisitor {
    type Value = CheckedAny;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_i64<E>(self, _: i64) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_u64<E>(self, _: u64) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_f64<E>(self, _: f64) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_str<E>(self, _: &str) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_unit<E>(self) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_none<E>(self) -> Result<CheckedAny, E> {
        Ok(CheckedAny)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<CheckedAny, D::Error> {
        CheckedAny::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CheckedAny, A::Error> {
        while seq.next_element::<CheckedAny>()?.is_some() {}
        Ok(CheckedAny)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CheckedAny, A::Error> {
        checked_map::<A, CheckedAny>(map).map(|_| CheckedAny)
    }
}

/// The line with every lone UTF-16 surrogate escape (`\ud83d` not followed by a low surrogate,
/// or a low one alone) replaced by `\ufffd`, same length; `None` when it has none. Agents cut
/// tool output in the middle of an emoji and write such escapes, which JSON allows and a strict
/// parser refuses.
pub fn repair_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    if memmem::find(bytes, b"\\ud").is_none() && memmem::find(bytes, b"\\uD").is_none() {
        return None;
    }
    let mut out = bytes.to_vec();
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match escape_unit(bytes, i) {
            Some(0xD800..=0xDBFF) if matches!(escape_unit(bytes, i + 6), Some(0xDC00..=0xDFFF)) => {
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out[i..i + 6].copy_from_slice(b"\\ufffd");
                changed = true;
                i += 6;
            }
            Some(_) => i += 6,
            // Any other escape is two bytes (`\\`, `\"`, `\n`…).
            None => i += 2,
        }
    }
    changed.then_some(out)
}

/// The code unit of a `\uXXXX` escape starting at `at`.
fn escape_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    hex4(&escape[2..])
}

/// The value of four hex digits (either case); `None` for anything else.
#[inline]
pub(crate) fn hex4(hex: &[u8]) -> Option<u32> {
    let [a, b, c, d] = *hex else {
        return None;
    };
    let digit = |h: u8| char::from(h).to_digit(16);
    Some(digit(a)? << 12 | digit(b)? << 8 | digit(c)? << 4 | digit(d)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_hex_digits_and_nothing_else() {
        assert_eq!(hex4(b"00dF"), Some(0xdf));
        assert_eq!(hex4(b"FFFF"), Some(0xffff));
        for bad in [&b"+0df"[..], b"00dg", b"0df", b"00df0", b" 0df", b"-0df"] {
            assert_eq!(hex4(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn skip_refuses_what_value_refuses() {
        for line in [
            r#"{"a":1e400}"#,
            r#"{"a":"\ud83d"}"#,
            r#"{"a":"\q"}"#,
            &format!("{}1{}", "[".repeat(200), "]".repeat(200)),
            r#"{"$serde_json::private::RawValue":"[1,{\"b\":null}]"}"#,
            r#"{"$serde_json::private::RawValue":"[1e400]"}"#,
            r#"{"$serde_json::private::RawValue":"1 2"}"#,
            r#"{"$serde_json::private::RawValue":1}"#,
            r#"{"$serde_json::private::RawValue":"1","a":2}"#,
            r#"{"a":2,"$serde_json::private::RawValue":1}"#,
            r#"[{"\u0024serde_json::private::RawValue":"{\"$serde_json::private::RawValue\":[]}"}]"#,
        ] {
            let value = serde_json::from_str::<serde_json::Value>(line).is_ok();
            let skip = serde_json::from_str::<CheckedAny>(line).is_ok();
            assert_eq!(skip, value, "{line}");
        }
        assert!(
            serde_json::from_str::<CheckedAny>(r#"{"a":[1,{"b":null}],"c":"\ud83d\ude00"}"#)
                .is_ok()
        );
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = br#"{"a":"x\ud83d y \ud83d\ude00 \\ud800 \udc00"}"#;
        let fixed = repair_surrogates(line).unwrap();
        assert_eq!(
            fixed,
            br#"{"a":"x\ufffd y \ud83d\ude00 \\ud800 \ufffd"}"#.to_vec()
        );
        assert_eq!(repair_surrogates(br#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(repair_surrogates(b"{}"), None);
    }
}
