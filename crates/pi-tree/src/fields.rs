//! The fields of one JSON object that shape a session's structure (header, tree, title), read
//! either from a parsed object or straight off the line with everything else skipped.
//!
//! The skipping read must accept exactly the objects a full [`Value`] parse accepts, or a line
//! a search rules out would be read differently from the same line decoded in full. So nothing
//! is skipped with serde's `IgnoredAny`, which serde_json implements with a scan that checks
//! neither nesting depth, number range, UTF-8 nor surrogates in strings: every value goes through
//! the same `deserialize_any` a [`Value`] does (the same string, number and depth checks), and is
//! only never stored. What the skip saves is the allocation of every string, array and map.
//!
//! serde_json's `raw_value` feature is on in this workspace (decode-codex reads raw values, and
//! the workspace turns it on for every crate so that each builds the same alone and in the
//! binary). With it a [`Value`] reads a map whose first key is [`RAW_VALUE_KEY`] as the JSON
//! text its value holds, and both reads here do the same, at the top and at every depth.
//! `arbitrary_precision`, which changes how a [`Value`] reads numbers and maps too, stays off.

use std::fmt;

use history_raw::json::{self, CheckedAny, RAW_VALUE_KEY};
use history_raw::scan::Scan;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What the structure of a session needs from one object; the rest is events.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    /// `type`, when a string.
    pub(crate) kind: Option<String>,
    /// `id`, when a string.
    pub(crate) id: Option<String>,
    /// Whether the object has a `parentId` key at all (whatever its value).
    pub(crate) has_parent_key: bool,
    /// `parentId`, when a string.
    pub(crate) parent_id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) parent_session: Option<String>,
    pub(crate) branched_from: Option<String>,
    /// `version`, when a non-negative integer.
    pub(crate) version: Option<u64>,
    pub(crate) first_kept_entry_id: Option<String>,
    /// `firstKeptEntryIndex`, when a non-negative integer.
    pub(crate) first_kept_entry_index: Option<u64>,
    /// `name` (a `session_info` entry's), when a string.
    pub(crate) name: Option<String>,
    /// `title` (Oh My Pi's title slot, `title_change` entries and header), when a string.
    pub(crate) title: Option<String>,
}

impl Fields {
    /// The fields of a parsed object.
    pub(crate) fn of(object: &Map<String, Value>) -> Fields {
        let string = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
        let number = |key: &str| object.get(key).and_then(Value::as_u64);
        Fields {
            kind: string("type"),
            id: string("id"),
            has_parent_key: object.contains_key("parentId"),
            parent_id: string("parentId"),
            cwd: string("cwd"),
            parent_session: string("parentSession"),
            branched_from: string("branchedFrom"),
            version: number("version"),
            first_kept_entry_id: string("firstKeptEntryId"),
            first_kept_entry_index: number("firstKeptEntryIndex"),
            name: string("name"),
            title: string("title"),
        }
    }
}

/// The keys [`Fields`] reads.
enum Key {
    Type,
    Id,
    ParentId,
    Cwd,
    ParentSession,
    BranchedFrom,
    Version,
    FirstKeptEntryId,
    FirstKeptEntryIndex,
    Name,
    Title,
    /// [`RAW_VALUE_KEY`]: a raw value's text, if it comes first.
    RawValue,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl Visitor<'_> for Visit {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "type" => Key::Type,
                    "id" => Key::Id,
                    "parentId" => Key::ParentId,
                    "cwd" => Key::Cwd,
                    "parentSession" => Key::ParentSession,
                    "branchedFrom" => Key::BranchedFrom,
                    "version" => Key::Version,
                    "firstKeptEntryId" => Key::FirstKeptEntryId,
                    "firstKeptEntryIndex" => Key::FirstKeptEntryIndex,
                    "name" => Key::Name,
                    "title" => Key::Title,
                    RAW_VALUE_KEY => Key::RawValue,
                    _ => Key::Other,
                })
            }
        }
        // A string, read as a `Value`'s keys are.
        d.deserialize_any(Visit)
    }
}

/// Read straight off a line: a JSON object (any other value is an error, as it is no entry),
/// with every value it does not keep checked and dropped. Like a [`Map`], a repeated key
/// counts once, with its last value.
impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut f = Fields::default();
                let mut first = true;
                while let Some(key) = map.next_key::<Key>()? {
                    if std::mem::take(&mut first) && matches!(key, Key::RawValue) {
                        return json::raw_value_text(&mut map);
                    }
                    let string = |map: &mut A| map.next_value::<ValueAs<String>>().map(|v| v.0);
                    let number = |map: &mut A| map.next_value::<ValueAs<u64>>().map(|v| v.0);
                    match key {
                        Key::Type => f.kind = string(&mut map)?,
                        Key::Id => f.id = string(&mut map)?,
                        Key::ParentId => {
                            f.has_parent_key = true;
                            f.parent_id = string(&mut map)?;
                        }
                        Key::Cwd => f.cwd = string(&mut map)?,
                        Key::ParentSession => f.parent_session = string(&mut map)?,
                        Key::BranchedFrom => f.branched_from = string(&mut map)?,
                        Key::Version => f.version = number(&mut map)?,
                        Key::FirstKeptEntryId => f.first_kept_entry_id = string(&mut map)?,
                        Key::FirstKeptEntryIndex => f.first_kept_entry_index = number(&mut map)?,
                        Key::Name => f.name = string(&mut map)?,
                        Key::Title => f.title = string(&mut map)?,
                        Key::RawValue | Key::Other => map.next_value::<CheckedAny>().map(|_| ())?,
                    }
                }
                Ok(f)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The fields of every object on a line, read by serde as far as they are objects (a lone
/// surrogate escape repaired first), and whether that is the whole line.
pub(crate) fn read(bytes: &[u8]) -> (Vec<Fields>, bool) {
    let repaired = crate::salvage::repair_surrogates(bytes);
    let bytes = repaired.as_deref().unwrap_or(bytes);
    let mut objects = Vec::new();
    for fields in serde_json::Deserializer::from_slice(bytes).into_iter::<Fields>() {
        match fields {
            Ok(fields) => objects.push(fields),
            Err(_) => return (objects, false),
        }
    }
    (objects, true)
}

/// The fields of every object on a line (pi writes one; real files have two glued together),
/// read with a strict [`Scan`] rather than serde: the same fields for every line it accepts,
/// which must be objects only. `None` leaves the line to serde: anything unusual (an escape in
/// a field kept, a number whose range a `Value` checks, a surrogate escape) or damaged.
pub(crate) fn skim(text: &str) -> Option<Vec<Fields>> {
    let mut scan = Scan::strict(text);
    let mut all = Vec::new();
    while scan.peek().is_some() {
        let mut f = Fields::default();
        scan.object(|scan, key| {
            match key {
                "type" => f.kind = string(scan)?,
                "id" => f.id = string(scan)?,
                "parentId" => {
                    f.has_parent_key = true;
                    f.parent_id = string(scan)?;
                }
                "cwd" => f.cwd = string(scan)?,
                "parentSession" => f.parent_session = string(scan)?,
                "branchedFrom" => f.branched_from = string(scan)?,
                "version" => f.version = number(scan)?,
                "firstKeptEntryId" => f.first_kept_entry_id = string(scan)?,
                "firstKeptEntryIndex" => f.first_kept_entry_index = number(scan)?,
                "name" => f.name = string(scan)?,
                "title" => f.title = string(scan)?,
                _ => scan.skip()?,
            }
            Some(())
        })?;
        all.push(f);
    }
    (!all.is_empty()).then_some(all)
}

/// A value as [`Value::as_str`] reads it: a string without escapes, or nothing for any other
/// value (checked and dropped).
fn string(scan: &mut Scan<'_>) -> Option<Option<String>> {
    match scan.peek()? {
        b'"' => scan.plain_str().map(|s| Some(s.to_owned())),
        _ => scan.skip().map(|()| None),
    }
}

/// A value as [`Value::as_u64`] reads it: an integer that fits, or nothing for any other
/// value (checked and dropped).
fn number(scan: &mut Scan<'_>) -> Option<Option<u64>> {
    match scan.peek()? {
        b'0'..=b'9' => scan.number().map(|n| n.parse().ok()),
        // `-0` is a `u64` to a `Value`: negative numbers are left to serde.
        b'-' => None,
        _ => scan.skip().map(|()| None),
    }
}

/// A value of type `T` as [`Value::as_str`] / [`Value::as_u64`] read it, `None` for any other
/// JSON value (which is checked and dropped).
struct ValueAs<T>(Option<T>);

impl<'de, T: Kept> Deserialize<'de> for ValueAs<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueAsVisitor::<T>::default())
            .map(ValueAs)
    }
}

/// What a [`ValueAs`] keeps of the values it reads.
trait Kept: Sized {
    fn string(_: &str) -> Option<Self> {
        None
    }
    fn number(_: u64) -> Option<Self> {
        None
    }
}

impl Kept for () {}

impl Kept for String {
    fn string(s: &str) -> Option<String> {
        Some(s.to_string())
    }
}

impl Kept for u64 {
    fn number(n: u64) -> Option<u64> {
        Some(n)
    }
}

/// Visits any value, keeping it when `T` keeps its kind; arrays and maps are walked through
/// with [`CheckedAny`] (a raw-value map is read as its text is).
struct ValueAsVisitor<T>(std::marker::PhantomData<T>);

impl<T> Default for ValueAsVisitor<T> {
    fn default() -> Self {
        ValueAsVisitor(std::marker::PhantomData)
    }
}

impl<'de, T: Kept> Visitor<'de> for ValueAsVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<T>, E> {
        Ok(None)
    }
    /// As `Value` stores it: a non-negative `i64` is the same number as a `u64`.
    fn visit_i64<E>(self, n: i64) -> Result<Option<T>, E> {
        Ok(u64::try_from(n).ok().and_then(T::number))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Option<T>, E> {
        Ok(T::number(n))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, s: &str) -> Result<Option<T>, E> {
        Ok(T::string(s))
    }
    fn visit_unit<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<T>, A::Error> {
        while seq.next_element::<CheckedAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        Ok(json::checked_map::<A, ValueAs<T>>(map)?.and_then(|v| v.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both reads of a line's objects, as far as they go.
    fn both(line: &str) -> (Vec<Fields>, bool, Vec<Fields>, bool) {
        let full: Vec<_> = serde_json::Deserializer::from_str(line)
            .into_iter::<Value>()
            .collect();
        let light: Vec<_> = serde_json::Deserializer::from_str(line)
            .into_iter::<Fields>()
            .collect();
        let mut a = Vec::new();
        let mut a_clean = true;
        for v in full {
            match v {
                Ok(Value::Object(o)) => a.push(Fields::of(&o)),
                _ => {
                    a_clean = false;
                    break;
                }
            }
        }
        let mut b = Vec::new();
        let mut b_clean = true;
        for v in light {
            match v {
                Ok(f) => b.push(f),
                Err(_) => {
                    b_clean = false;
                    break;
                }
            }
        }
        (a, a_clean, b, b_clean)
    }

    #[test]
    fn the_light_read_accepts_what_a_value_accepts() {
        let deep = format!(
            r#"{{"id":"a","x":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let lines = [
            r#"{"type":"message","id":"a","parentId":null,"message":{"content":[{"type":"text","text":"hi\n"}]}}"#,
            r#"{"id":"a","id":"b","parentId":"x","parentId":7}"#,
            r#"{"\u0069d":"esc","version":-0,"firstKeptEntryIndex":3.0}"#,
            r#"{"version":3,"firstKeptEntryIndex":-2,"name":["n"]}"#,
            r#"{"timestamp":1e400,"id":"a"}"#,
            r#"{"id":"a","t":"\ud83d\ude00"}"#,
            r#"{"id":"a","t":"\ud83d"}"#,
            r#"{"id":"a","t":"tab	raw"}"#,
            r#"{"id":"a"}{"id":"b"} 5"#,
            r#"{"id":"a"} [1]"#,
            r#"{"id":"a",}"#,
            r#"{"id":"a","x":[1,]}"#,
            r#"{"id":"a","x":01}"#,
            r#"[{"id":"a"}]"#,
            r#""id""#,
            &deep,
        ];
        for line in lines.iter().copied().chain(raw_value_lines()) {
            let (a, a_clean, b, b_clean) = both(line);
            assert_eq!((&a, a_clean), (&b, b_clean), "{line}");
        }
    }

    /// Lines with maps whose first key is serde_json's raw-value token, which a `Value` reads
    /// as the JSON text its value holds.
    fn raw_value_lines() -> [&'static str; 10] {
        [
            r#"{"$serde_json::private::RawValue":"{\"id\":\"inner\",\"type\":\"message\"}"}"#,
            r#"{"$serde_json::private::RawValue":"[1]"}"#,
            r#"{"$serde_json::private::RawValue":"{\"id\":\"a\"} x"}"#,
            r#"{"$serde_json::private::RawValue":"{\"id\":\"a\"}","id":"b"}"#,
            r#"{"$serde_json::private::RawValue":5}"#,
            r#"{"id":"a","$serde_json::private::RawValue":5}"#,
            r#"{"id":{"$serde_json::private::RawValue":"\"x\""},"version":{"$serde_json::private::RawValue":"3"}}"#,
            r#"{"id":"a","x":{"$serde_json::private::RawValue":"{\"$serde_json::private::RawValue\":1}"}}"#,
            r#"{"id":"a","x":[{"$serde_json::private::RawValue":"[1,{}]"}]}"#,
            r#"{"\u0024serde_json::private::RawValue":"{\"id\":\"esc\"}"}"#,
        ]
    }

    #[test]
    fn a_value_reads_raw_value_maps_as_their_text() {
        // serde_json's `raw_value` is on in this workspace; these reads are what the light
        // read and the skim are held to.
        let read = |line: &str| serde_json::from_str::<Value>(line).ok();
        let [inner, array, _, _, number, later, ..] = raw_value_lines();
        assert_eq!(read(inner), read(r#"{"id":"inner","type":"message"}"#));
        assert_eq!(read(array), read("[1]"));
        assert_eq!(read(number), None);
        assert!(read(later).is_some());
    }

    /// A line the skim reads is read the same by a full parse, every object of it.
    fn skims_as_values_do(line: &str) -> bool {
        let Some(skimmed) = skim(line) else {
            return false;
        };
        let (full, clean, _, _) = both(line);
        assert!(clean, "the skim read a line a Value refuses: {line}");
        assert_eq!(skimmed, full, "{line}");
        true
    }

    #[test]
    fn the_skim_reads_what_a_value_reads() {
        for line in [
            r#"{"type":"message","id":"a","parentId":null,"message":{"content":[{"type":"text","text":"hi\n"}]}}"#,
            r#"{"id":"a","id":"b","parentId":"x","parentId":7}"#,
            r#"{"version":3,"firstKeptEntryIndex":2.5,"name":["n"],"x":-12.25}"#,
            r#"{"version":18446744073709551616,"id":"big"}"#,
            r#"{"id":"a"}{"id":"b"}"#,
        ] {
            assert!(skims_as_values_do(line), "{line}");
        }
        for line in [
            r#"{"\u0069d":"esc"}"#,
            r#"{"version":-0}"#,
            r#"{"timestamp":1e400,"id":"a"}"#,
            r#"{"id":"a","t":"\ud83d"}"#,
            r#"{"id":"a"} [1]"#,
            r#"[{"id":"a"}]"#,
        ] {
            assert!(skim(line).is_none(), "{line}");
        }
        for line in raw_value_lines() {
            skims_as_values_do(line);
        }
    }

    #[test]
    fn the_skim_reads_fixture_lines_and_damaged_copies_as_values_do() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut dirs = vec![fixtures.join("pi"), fixtures.join("omp")];
        let mut lines = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    let bytes = std::fs::read(&path).unwrap();
                    lines.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_owned));
                }
            }
        }
        let skimmed = lines.iter().filter(|l| skims_as_values_do(l)).count();
        assert!(
            skimmed * 10 > lines.len() * 7,
            "{skimmed} of {}",
            lines.len()
        );
        let mut rng = fastrand::Rng::with_seed(0x0dd_ba11);
        let bits = [
            "\"", "\\", "\u{1}", "{", "}", "[", "]", ",", ":", "1e400", "-0", "nul", "\\ud800", " ",
        ];
        for line in &lines {
            for _ in 0..20 {
                let mut bytes = line.clone().into_bytes();
                let at = rng.usize(..bytes.len() + 1);
                match rng.usize(..3) {
                    0 => bytes.truncate(at),
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {
                        let bit = bits[rng.usize(..bits.len())].as_bytes();
                        bytes.splice(at..at, bit.iter().copied());
                    }
                }
                if let Ok(text) = String::from_utf8(bytes) {
                    skims_as_values_do(&text);
                }
            }
        }
    }
}
