//! A line read for its structure alone, for a search that cannot want its events: the same
//! object the full parse yields, with every value the projection only turns into event text
//! (tool outputs and inputs, encrypted reasoning, token counts, turn contexts…) skipped unparsed
//! and left `null`.
//!
//! What stays is what the projection carries across lines: line and item types, `ordinal`,
//! call ids and tool names, the texts an item and its event twin are paired by, turn starts,
//! rollbacks, thread names and the `<environment_context>` a working directory comes from.
//!
//! Of the values that only become event text, one fact is kept besides: whether they give the
//! line an event, for a line that shows none is not on the branch a rollback leaves. They are
//! read only as far as that takes (a string for whether it is blank, a wrapped tool output for
//! its `output`, parts for their types), into stand-ins that are blank exactly where the
//! values are, kept out of the structure; [`project::gives_text`] tells from them what the
//! projection would show.
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

use history_core::parse_object;
use history_raw::json::CheckedAny;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use crate::project::{self, Site};
use crate::render;

/// Parses a line (after the header) for its structure; `None` exactly where
/// [`parse_object`] gives `None`. With the structure comes whether the values left out give
/// the line an event ([`project::gives_text`]), which a line parsed in full never needs.
pub(crate) fn read(bytes: &[u8]) -> Option<(Map<String, Value>, bool)> {
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let trimmed = text.trim_ascii();
    if !trimmed.starts_with('{') {
        return None;
    }
    let doubt = Cell::new(false);
    let texts = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(trimmed);
    let value = Pruned {
        what: What::Line,
        depth: 0,
        doubt: &doubt,
        texts: &texts,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    if doubt.get() {
        return parse_object(bytes).map(|map| (map, false));
    }
    match value {
        Value::Object(map) => Some((map, texts.get())),
        _ => None,
    }
}

/// [`read`]'s structure.
#[cfg(test)]
pub(crate) fn parse(bytes: &[u8]) -> Option<Map<String, Value>> {
    read(bytes).map(|(map, _)| map)
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
    // The kinds below stand for values that only become event text: each is read down to
    // whether it gives any, into a stand-in that renders blank exactly when the value does
    // (`"x"` for text, `""` or `null` for none).
    /// A text (`""` when blank, else `"x"`); anything else is `null`.
    Text,
    /// What [`render::strings`] collects: `"x"` when it finds text, else `null`.
    Strings,
    /// An object [`render::strings`] reads whole or by one of its fields (`world_state`):
    /// each field as [`What::Strings`]; anything else as [`What::Strings`] too.
    Fields,
    /// A tool output ([`render::tool_output`]): a string as [`render::string_output_shows`]
    /// tells, parts as [`What::ShownParts`], an object's `content` as an output and its other
    /// fields as [`What::Strings`].
    Output,
    /// Content parts that only become event text: each as [`What::ShownPart`].
    ShownParts,
    /// One such part: its `type`, and its text as [`What::Text`].
    ShownPart,
    /// An object whose only fields that show are the texts named, as [`What::Text`].
    Texts(&'static [&'static str]),
    /// An `mcp_tool_call_end` `result`: `Err` as [`What::Strings`], the `content` parts of
    /// `Ok` or of the result itself as [`What::ShownParts`].
    McpResult,
    /// A result's `Ok`.
    McpOk,
    /// A `compacted` payload: its `message` as [`What::Text`], and its `replacement_history`.
    Compacted,
    /// A compaction's replacement history: items whose `content` parts show only summaries.
    History,
    /// One item of it.
    HistoryItem,
    /// Its content parts: each as [`What::SummaryPart`].
    SummaryParts,
    /// One such part: its `type`, and its text as [`What::Summary`].
    SummaryPart,
    /// A text that shows only when it is a compaction summary: [`render::SUMMARY_PREFIX`]
    /// then, else `null`.
    Summary,
}

impl What {
    /// Whether the value is read only for whether it gives event text.
    fn stands_in(self) -> bool {
        !matches!(
            self,
            What::All
                | What::Nothing
                | What::Line
                | What::Item
                | What::Event
                | What::TurnItem
                | What::Parts
                | What::Part
                | What::Count
        )
    }

    /// What a string read as `self` becomes.
    fn string(self, v: &str) -> Value {
        let shows = |shows: bool| Value::String(if shows { "x" } else { "" }.to_owned());
        match self {
            What::Text | What::ShownPart => shows(!v.trim().is_empty()),
            What::Output => shows(render::string_output_shows(v)),
            What::Strings | What::Fields => found(!v.trim().is_empty()),
            What::Summary | What::SummaryPart if render::is_summary(v) => {
                Value::String(render::SUMMARY_PREFIX.to_owned())
            }
            what if what.stands_in() => Value::Null,
            _ => Value::String(v.to_owned()),
        }
    }
}

/// The stand-in of a [`What::Strings`] value.
fn found(text: bool) -> Value {
    if text {
        Value::String("x".to_owned())
    } else {
        Value::Null
    }
}

/// The stand-in of a [`What::Strings`] array or object, from those of its elements.
fn found_in<'v>(mut values: impl Iterator<Item = &'v Value>) -> Value {
    found(values.any(Value::is_string))
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
                    Some("compacted") => What::Compacted,
                    Some("inter_agent_communication") => What::Texts(&["content"]),
                    Some("world_state") => What::Fields,
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
            What::ShownPart => match key {
                "type" => What::All,
                "text" => What::Text,
                _ => What::Nothing,
            },
            What::SummaryPart => match key {
                "type" => What::All,
                "text" => What::Summary,
                _ => What::Nothing,
            },
            What::Output => match key {
                "content" => What::Output,
                _ => What::Strings,
            },
            What::Strings if render::is_tag_key(key) => What::Nothing,
            What::Strings | What::Fields => What::Strings,
            What::Texts(texts) if texts.contains(&key) => What::Text,
            What::McpResult => match key {
                "Err" => What::Strings,
                "Ok" => What::McpOk,
                "content" => What::ShownParts,
                _ => What::Nothing,
            },
            What::McpOk => match key {
                "content" => What::ShownParts,
                _ => What::Nothing,
            },
            What::Compacted => match key {
                "message" => What::Text,
                "replacement_history" => What::History,
                "window_number" | "window_id" => What::All,
                _ => What::Nothing,
            },
            What::HistoryItem => match key {
                "content" => What::SummaryParts,
                _ => What::Nothing,
            },
            What::Texts(_)
            | What::Text
            | What::Summary
            | What::ShownParts
            | What::History
            | What::SummaryParts => What::Nothing,
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
                Some(role) if role != "user" && role != "assistant" => What::ShownParts,
                _ => What::Parts,
            },
            ("reasoning", "summary" | "content") => What::Parts,
            (kind, "call_id" | "name") if TOOL_ITEMS.contains(&kind) => What::All,
            ("function_call_output" | "custom_tool_call_output", "output") => What::Output,
            ("tool_search_output", "tools") => What::Strings,
            ("agent_message", "content") => What::ShownParts,
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
            ("thread_goal_updated", "goal") => What::Texts(&["objective"]),
            ("entered_review_mode" | "exited_review_mode" | "error", _) => What::Strings,
            (
                "exec_command_end",
                "aggregated_output" | "formatted_output" | "stdout" | "stderr",
            )
            | ("patch_apply_end", "stdout" | "stderr") => What::Text,
            ("mcp_tool_call_end", "result") => What::McpResult,
            (kind, "call_id") if project::is_collab_end(kind) => What::All,
            (kind, _) if project::is_collab_end(kind) => What::Strings,
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
            ("Plan", "text") => What::Text,
            ("HookPrompt" | "EnteredReviewMode" | "ExitedReviewMode", _) => What::Strings,
            _ => What::Nothing,
        }
    }

    /// Whether an object read by these rules is a tool call whose text its skipped input
    /// decides: one named by a blank string (any other name shows as the call's text).
    fn blank_call(&self, object: &Map<String, Value>) -> bool {
        matches!(self.what, What::Line | What::Item)
            && matches!(
                self.kind.str(),
                Some("function_call" | "custom_tool_call" | "tool_search_call")
            )
            && object
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| name.trim().is_empty())
    }

    /// Whether `key` is read before the type that decides how, so in full.
    fn blind(&self, key: &str) -> bool {
        let decided = match self.what {
            What::Line => matches!(key, "type" | "ordinal" | "record_type" | "timestamp"),
            What::Item | What::Event | What::TurnItem => key == "type",
            _ => true,
        };
        !decided && matches!(self.kind, Tag::Unseen)
    }

    /// Where the values of an object read by these rules that only become event text would show
    /// (an envelope line's are in its payload; a line without one may be an early file's item).
    fn site<'k>(&'k self, object: &Map<String, Value>) -> Option<Site<'k>> {
        let kind = self.kind.str()?;
        Some(match self.what {
            What::Line if object.contains_key("payload") => Site::Line(kind),
            What::Line | What::Item => Site::Item(kind),
            What::Event => Site::Event(kind),
            What::TurnItem => Site::TurnItem(kind),
            _ => return None,
        })
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

/// Reads a value keeping what `what` says; sets `doubt` when the result cannot be trusted, and
/// `texts` when values left out of the structure give the line an event.
#[derive(Clone, Copy)]
struct Pruned<'a> {
    what: What,
    /// How many arrays and objects enclose the value.
    depth: usize,
    doubt: &'a Cell<bool>,
    texts: &'a Cell<bool>,
}

impl Pruned<'_> {
    fn child(self, what: What) -> Self {
        Pruned {
            what,
            depth: self.depth + 1,
            ..self
        }
    }

    /// A number or boolean read as `self`: as it is, or `null` where it stands in for text it
    /// cannot give.
    fn scalar(self, value: Value) -> Value {
        match self.what.stands_in() {
            true => Value::Null,
            false => value,
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
        Ok(self.scalar(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(self.scalar(Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(self.scalar(Value::Number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(self.scalar(Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(self.what.string(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(match self.what.stands_in() {
            true => self.what.string(&v),
            false => Value::String(v),
        })
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let what = match self.what {
            What::Parts => What::Part,
            What::Count => What::Nothing,
            What::ShownParts | What::Output => What::ShownPart,
            What::History => What::HistoryItem,
            What::SummaryParts => What::SummaryPart,
            What::Strings | What::Fields => What::Strings,
            what if what.stands_in() => What::Nothing,
            _ => What::All,
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self.child(what))? {
            out.push(v);
        }
        Ok(match self.what {
            What::Strings | What::Fields => found_in(out.iter()),
            What::ShownParts | What::Output | What::History | What::SummaryParts => {
                Value::Array(out)
            }
            what if what.stands_in() => Value::Null,
            _ => Value::Array(out),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut rules = Rules::new(self.what);
        let mut out = Map::new();
        // The stand-ins of the values of a structural object that only become event text: kept
        // out of its structure, they tell whether it gives an event.
        let mut texts = Map::new();
        let structural = !self.what.stands_in();
        let mut blind = false;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            blind |= rules.blind(&key);
            let what = rules.child(&key);
            let value = map.next_value_seed(self.child(what))?;
            if rules.observe(&key, &value) {
                self.doubt.set(true);
            }
            if structural && what.stands_in() {
                // A key given twice may have been read once as structure and once as text.
                if texts.contains_key(&*key) || out.contains_key(&*key) {
                    self.doubt.set(true);
                }
                if self.what == What::Line && key == "payload" {
                    out.insert(key.clone().into_owned(), Value::Null);
                }
                texts.insert(key.into_owned(), value);
                continue;
            }
            if structural && texts.contains_key(&*key) {
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
        // Texts read before the type was known are in the structure, in full, and would be
        // missing from the stand-ins.
        if rules.blank_call(&out) || (blind && !texts.is_empty()) {
            self.doubt.set(true);
        }
        if let Some(site) = rules.site(&out) {
            let texts = match site {
                Site::Line(_) => texts.remove("payload").unwrap_or(Value::Null),
                _ => Value::Object(texts),
            };
            if project::gives_text(site, &texts) {
                self.texts.set(true);
            }
        }
        Ok(match self.what {
            What::Strings => found_in(out.values()),
            What::Text | What::Summary | What::ShownParts | What::History | What::SummaryParts => {
                Value::Null
            }
            _ => Value::Object(out),
        })
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
