//! A line read for its structure alone, for a search that cannot want its events: the same
//! object the full parse yields, with every value the projection only turns into event text
//! (tool outputs and inputs, encrypted reasoning, token counts, turn contexts…) skipped unparsed
//! and left `null`.
//!
//! What stays is what the projection carries across lines: line and item types, `ordinal`,
//! call ids and tool names, the texts an item and its event twin are paired by, turn starts,
//! rollbacks, thread names and the `<environment_context>` a working directory comes from.
//!
//! It accepts exactly the lines the full parse accepts. Invalid UTF-8 is refused up front (the
//! full parse refuses it in any string). A skipped value is read as a raw slice, which checks
//! its grammar, escapes and control characters but not what [`Value`] checks besides: lone
//! `\u` surrogates, numbers out of `f64` range and nesting depth. A skipped string holding a
//! `\u` escape, and a skipped number, array or object that could hold a number out of range
//! or a `\u` escape, is read again as [`Value`] would read it ([`CheckedAny`]); one nested deep
//! enough to come near the depth limit, and a line whose pruning could depend on a repeated
//! `type` or `role`, make the line parsed in full.

use std::cell::Cell;
use std::fmt;

use history_core::json::CheckedAny;
use history_core::source::parse_object;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

/// Parses a line (after the header) for its structure; `None` exactly where
/// [`parse_object`] gives `None`.
pub(crate) fn parse(bytes: &[u8]) -> Option<Map<String, Value>> {
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let trimmed = text.trim_ascii();
    if !trimmed.starts_with('{') {
        return None;
    }
    let doubt = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(trimmed);
    let value = Pruned {
        what: What::Line,
        depth: 0,
        doubt: &doubt,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    if doubt.get() {
        return parse_object(bytes);
    }
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// How much of a value to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    /// All of it, as [`Value`] reads it.
    All,
    /// None of it: checked, then `null`.
    Nothing,
    /// A whole line: an envelope, or a bare response item (early files).
    Line,
    /// A `response_item` payload.
    Item,
    /// An `event_msg` payload.
    Event,
    /// An `item_completed` turn item.
    TurnItem,
    /// An array of content parts.
    Parts,
    /// One content part: its `type` and `text`.
    Part,
    /// An array only counted (attached images): its elements become `null`.
    Count,
}

/// A string that decides what else of its object is kept (`type`, `role`).
#[derive(Debug)]
enum Tag {
    Unseen,
    Str(String),
    /// Present, not a string.
    Other,
}

impl Tag {
    fn str(&self) -> Option<&str> {
        match self {
            Tag::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// What an object keeps of each of its keys, given the tags read so far.
struct Rules {
    what: What,
    kind: Tag,
    role: Tag,
}

const TOOL_ITEMS: &[&str] = &[
    "function_call",
    "custom_tool_call",
    "tool_search_call",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_output",
];

impl Rules {
    fn new(what: What) -> Rules {
        Rules {
            what,
            kind: Tag::Unseen,
            role: Tag::Unseen,
        }
    }

    fn tagged(&self) -> bool {
        matches!(
            self.what,
            What::Line | What::Item | What::Event | What::TurnItem
        )
    }

    fn child(&self, key: &str) -> What {
        match self.what {
            What::Line => match key {
                "type" | "ordinal" | "record_type" => What::All,
                // Only events carry the time.
                "timestamp" => What::Nothing,
                "payload" => match self.kind.str() {
                    Some("response_item") => What::Item,
                    Some("event_msg") => What::Event,
                    Some(_) => What::Nothing,
                    None => What::All,
                },
                // An early file's line is itself the item.
                _ => self.item_field(key),
            },
            What::Item => self.item_field(key),
            What::Event => self.event_field(key),
            What::TurnItem => self.turn_item_field(key),
            What::Part => match key {
                "type" | "text" => What::All,
                _ => What::Nothing,
            },
            What::All | What::Nothing | What::Parts | What::Count => What::All,
        }
    }

    fn item_field(&self, key: &str) -> What {
        let Some(kind) = self.kind.str() else {
            return What::All;
        };
        match (kind, key) {
            (_, "type") => What::All,
            ("message", "role") => What::All,
            ("message", "content") => match self.role.str() {
                Some(role) if role != "user" && role != "assistant" => What::Nothing,
                _ => What::Parts,
            },
            ("reasoning", "summary" | "content") => What::Parts,
            (kind, "call_id" | "name") if TOOL_ITEMS.contains(&kind) => What::All,
            _ => What::Nothing,
        }
    }

    fn event_field(&self, key: &str) -> What {
        let Some(kind) = self.kind.str() else {
            return What::All;
        };
        match (kind, key) {
            (_, "type") => What::All,
            ("user_message", "kind" | "message") => What::All,
            ("user_message", "images" | "local_images") => What::Count,
            ("agent_message", "message") => What::All,
            ("agent_reasoning" | "agent_reasoning_raw_content", "text") => What::All,
            ("thread_rolled_back", "num_turns") => What::All,
            ("thread_name_updated", "thread_name") => What::All,
            (
                "exec_command_end"
                | "patch_apply_end"
                | "mcp_tool_call_end"
                | "view_image_tool_call",
                "call_id",
            ) => What::All,
            ("item_completed", "item") => What::TurnItem,
            _ => What::Nothing,
        }
    }

    fn turn_item_field(&self, key: &str) -> What {
        let Some(kind) = self.kind.str() else {
            return What::All;
        };
        match (kind, key) {
            (_, "type") => What::All,
            ("UserMessage" | "AgentMessage", "content") => What::Parts,
            ("Reasoning", "summary_text" | "raw_content") => What::All,
            _ => What::Nothing,
        }
    }

    /// Records a tag; `true` when it was seen before (what was kept may then be wrong).
    fn observe(&mut self, key: &str, value: &Value) -> bool {
        if !self.tagged() {
            return false;
        }
        let slot = match key {
            "type" => &mut self.kind,
            "role" if matches!(self.what, What::Line | What::Item) => &mut self.role,
            _ => return false,
        };
        let again = !matches!(slot, Tag::Unseen);
        *slot = match value {
            Value::String(s) => Tag::Str(s.clone()),
            _ => Tag::Other,
        };
        again
    }
}

/// Reads a value keeping what `what` says; sets `doubt` when the result cannot be trusted.
#[derive(Clone, Copy)]
struct Pruned<'a> {
    what: What,
    /// How many arrays and objects enclose the value.
    depth: usize,
    doubt: &'a Cell<bool>,
}

impl Pruned<'_> {
    fn child(self, what: What) -> Self {
        Pruned {
            what,
            depth: self.depth + 1,
            ..self
        }
    }
}

/// Nesting this close to `serde_json`'s limit (128) makes a line parsed in full.
const DEEP: usize = 100;

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.what {
            What::All => Value::deserialize(d),
            What::Nothing => {
                let raw = <&RawValue>::deserialize(d)?;
                check_skipped(raw.get(), self.depth, self.doubt)?;
                Ok(Value::Null)
            }
            _ => d.deserialize_any(self),
        }
    }
}

/// Refuses a value skipped as a raw slice where [`Value`] would refuse it (see the module
/// comment), or sets `doubt` when that cannot be told cheaply.
fn check_skipped<E: de::Error>(raw: &str, depth: usize, doubt: &Cell<bool>) -> Result<(), E> {
    let bytes = raw.as_bytes();
    let risky = if bytes.first() == Some(&b'"') {
        raw.contains("\\u")
    } else {
        let (risky, open) = scan(bytes);
        if depth + open >= DEEP {
            doubt.set(true);
            return Ok(());
        }
        risky
    };
    if risky {
        serde_json::from_str::<CheckedAny>(raw).map_err(E::custom)?;
    }
    Ok(())
}

impl<'de> Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let what = match self.what {
            What::Parts => What::Part,
            What::Count => What::Nothing,
            _ => What::All,
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self.child(what))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut rules = Rules::new(self.what);
        let mut out = Map::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let what = rules.child(&key);
            let value = map.next_value_seed(self.child(what))?;
            if rules.observe(&key, &value) {
                self.doubt.set(true);
            }
            // A skipped value reads as a missing one (`get` gives nothing either way), except
            // where the key's presence is what counts (an envelope's `payload`), or where it
            // must hide a value given before under the same key.
            if what != What::Nothing
                || (self.what == What::Line && key == "payload")
                || out.contains_key(&*key)
            {
                out.insert(key.into_owned(), value);
            }
        }
        Ok(Value::Object(out))
    }
}

/// An object key, borrowed from the line where it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(v.to_owned().into()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// What a number, array or object read as a raw slice may hide, eight bytes at a time:
/// whether it may hold a number out of range (such a number has an exponent, a digit then `e`
/// or `E`, or 200 digits in a row) or a `\u` escape; and how many arrays and objects it opens.
fn scan(bytes: &[u8]) -> (bool, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    const LOW: u64 = ONES * 0x7f;
    /// The high bit of each byte of `w` equal to `c`.
    fn eq(w: u64, c: u8) -> u64 {
        let x = w ^ (ONES * u64::from(c));
        !(((x & LOW) + LOW) | x) & HIGH
    }
    /// The high bit of each ASCII digit of `w`.
    fn digits(w: u64) -> u64 {
        let low = w & LOW;
        (low + ONES * (0x80 - u64::from(b'0')))
            & !(low + ONES * (0x80 - u64::from(b':')))
            & !w
            & HIGH
    }
    let (mut risky, mut open, mut run) = (0u64, 0usize, 0usize);
    // The last byte of the previous word, moved to the first byte's place.
    let (mut digit_before, mut backslash_before) = (0u64, 0u64);
    let mut word = |w: u64| {
        let digit = digits(w);
        let backslash = eq(w, b'\\');
        // `E` and `[` are `e` and `{` with the 0x20 bit clear.
        let folded = w | (ONES * 0x20);
        open += eq(folded, b'{').count_ones() as usize;
        risky |= ((digit << 8) | digit_before) & eq(folded, b'e');
        risky |= ((backslash << 8) | backslash_before) & eq(w, b'u');
        digit_before = digit >> 56;
        backslash_before = backslash >> 56;
        // 200 digits in a row fill at least 24 whole words.
        run = if digit == HIGH { run + 1 } else { 0 };
        risky |= u64::from(run >= 24);
    };
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        word(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
    }
    let mut last = [b' '; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    word(u64::from_le_bytes(last));
    (risky != 0, open)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pruned parse accepts a line exactly when the full parse does.
    fn same_verdict(line: &str) {
        let full = parse_object::<Map<String, Value>>(line.as_bytes()).is_some();
        assert_eq!(parse(line.as_bytes()).is_some(), full, "{line}");
    }

    fn output(value: &str) -> String {
        format!(
            r#"{{"type":"response_item","payload":{{"type":"function_call_output","call_id":"c","output":{value}}}}}"#
        )
    }

    #[test]
    fn skipped_values_are_refused_where_the_full_parse_refuses_them() {
        for value in [
            r#""plain""#,
            r#""\ud800""#,
            r#""\udc00 x""#,
            r#""\ud83d\ude00""#,
            r#""\u00e9\n\t\"""#,
            r#""\x""#,
            "\"\u{1}\"",
            "1e308",
            "1e309",
            "-1.7976931348623157e308",
            "1.8e308",
            "123456789012345678901234567890",
            "0.0000000000000000000000000000001e-400",
            "1E+400",
            "01",
            "1.",
            "[1,2,{\"a\":1e999}]",
            "[1,2,{\"a\":\"\\udfff\"}]",
            "{\"a\":[true,false,null]}",
            "{\"a\" 1}",
            "nul",
        ] {
            same_verdict(&output(value));
        }
        let long = format!("1{}", "0".repeat(320));
        same_verdict(&output(&long));
        same_verdict(&output(&format!("{long}.5")));
        same_verdict(&output(&"9".repeat(250)));
    }

    #[test]
    fn the_scan_finds_what_a_byte_at_a_time_scan_finds() {
        fn slow(bytes: &[u8]) -> (bool, usize) {
            let (mut open, mut run, mut risky) = (0, 0, false);
            for (i, &b) in bytes.iter().enumerate() {
                let prev = i.checked_sub(1).map(|p| bytes[p]);
                run = if b.is_ascii_digit() { run + 1 } else { 0 };
                risky |= run >= 200;
                risky |= matches!(b, b'e' | b'E') && prev.is_some_and(|p| p.is_ascii_digit());
                risky |= b == b'u' && prev == Some(b'\\');
                open += usize::from(matches!(b, b'[' | b'{'));
            }
            (risky, open)
        }
        let samples: Vec<Vec<u8>> = vec![
            b"{}".to_vec(),
            b"[1,2,{\"a\":3}]".to_vec(),
            b"1e5".to_vec(),
            b"[1.5E-3]".to_vec(),
            b"{\"a\":\"\\u00e9\"}".to_vec(),
            b"{\"ea\":\"x\\\"u\"}".to_vec(),
            b"0123456e".to_vec(),
            b"01234567e".to_vec(),
            b"0123456\\u".to_vec(),
            b"01234567\\u".to_vec(),
            "\u{e9}\u{ff}\u{c0}[{e".bytes().collect(),
            vec![b'7'; 300],
            [b"[".to_vec(), vec![b'1'; 207], b"]".to_vec()].concat(),
        ];
        for sample in &samples {
            let (risky, open) = scan(sample);
            let (slow_risky, slow_open) = slow(sample);
            assert_eq!(open, slow_open, "{:?}", String::from_utf8_lossy(sample));
            // The word scan may flag a run of 192+ digits; never less than the slow one.
            assert!(risky >= slow_risky, "{:?}", String::from_utf8_lossy(sample));
            if !sample.iter().all(u8::is_ascii_digit) || sample.len() < 192 {
                assert_eq!(risky, slow_risky, "{:?}", String::from_utf8_lossy(sample));
            }
        }
        // Every byte pair at every offset.
        for a in 0..=255u8 {
            for b in [
                b'e', b'E', b'u', b'0', b'9', b'[', b'{', b'/', b':', b'd', b'U', 0x80, 0xe5,
            ] {
                for at in 0..10 {
                    let mut bytes = vec![b' '; 18];
                    bytes[at] = a;
                    bytes[at + 1] = b;
                    assert_eq!(scan(&bytes), slow(&bytes), "{a:#x} {b:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn nesting_is_refused_at_the_same_depth() {
        for n in 90..140 {
            let nested = format!("{}1{}", "[".repeat(n), "]".repeat(n));
            same_verdict(&output(&nested));
            // Kept in full, and inside kept parts.
            same_verdict(&format!(
                r#"{{"type":"event_msg","payload":{{"type":"agent_message","message":{nested}}}}}"#
            ));
            same_verdict(&format!(
                r#"{{"type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"x","extra":{nested}}}]}}}}"#
            ));
            same_verdict(&format!(r#"{{"type":"turn_context","payload":{nested}}}"#));
        }
    }

    #[test]
    fn skipped_fields_are_left_out_and_kept_fields_whole() {
        let line = r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"long text","success":true}}"#;
        let map = parse(line.as_bytes()).unwrap();
        let payload = &map["payload"];
        assert_eq!(payload["call_id"], "c1");
        assert_eq!(payload.get("output"), None);
        assert_eq!(payload.get("success"), None);
        assert_eq!(map.get("timestamp"), None);
        let line = r#"{"type":"turn_context","payload":{"cwd":"/x"}}"#;
        assert_eq!(parse(line.as_bytes()).unwrap()["payload"], Value::Null);
        let line = r#"{"type":"event_msg","payload":{"type":"user_message","message":"hi","images":["data:a","data:b"]}}"#;
        let map = parse(line.as_bytes()).unwrap();
        assert_eq!(map["payload"]["message"], "hi");
        assert_eq!(map["payload"]["images"], serde_json::json!([null, null]));
    }

    #[test]
    fn a_repeated_tag_reads_the_line_in_full() {
        let line = r#"{"type":"response_item","payload":{"type":"function_call","content":[{"type":"output_text","text":"x"}],"type":"message"}}"#;
        let map = parse(line.as_bytes()).unwrap();
        assert_eq!(
            map,
            parse_object::<Map<String, Value>>(line.as_bytes()).unwrap()
        );
    }
}
