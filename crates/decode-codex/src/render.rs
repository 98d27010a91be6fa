//! Turning payload values into event text: content parts, tool inputs and outputs, and the
//! markers that tell injected context from what a person typed.

use std::fmt;

use history_raw::json::CheckedAny;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The text an image part becomes.
pub(crate) const IMAGE: &str = "[image]";
/// The text an audio part becomes.
pub(crate) const AUDIO: &str = "[audio]";

// Every word this crate adds to event text is in the raw bytes of the line it renders: `[image]`
// and `[audio]` come from `input_image`/`images`/… parts, and a call's fallback name from the
// item's or event's type (`local_shell_call`, `web_search_call`, `exec_command_end`,
// `patch_apply_end`, `view_image_tool_call`…). So it declares no generated words, and a raw
// prefilter can require them.

/// The heading Codex IDE extensions put between their context and the user's request.
const REQUEST_HEADING: &str = "## My request for Codex:";

/// Starts (compared ASCII-case-insensitively on trimmed text) of user-role messages that
/// Codex injects (the markers Codex itself recognises when it replays a rollout).
const INJECTED: &[&str] = &[
    "<user_instructions>",
    "# agents.md instructions for",
    "<environment_context>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<skill>",
    "<hook_prompt",
    "<codex_internal_context",
    "<goal_context>",
    "<external_",
    "<recommended_plugins>",
    "<app-context>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "warning: apply_patch was requested via",
    "warning: the maximum number of unified exec processes",
    "warning: your account was flagged for potentially high-risk cyber activity",
];

/// The start of the summary message a compaction puts into the new context.
pub(crate) const SUMMARY_PREFIX: &str = "another language model started to solve this problem";

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether a user-role text is something Codex injected rather than what a person typed.
pub(crate) fn is_injected(text: &str) -> bool {
    let text = text.trim_start();
    INJECTED.iter().any(|p| starts_with_ignore_case(text, p))
}

/// Whether a user-role text is a compaction summary.
pub(crate) fn is_summary(text: &str) -> bool {
    starts_with_ignore_case(text.trim_start(), SUMMARY_PREFIX)
}

/// Splits an IDE message into the context before the request heading (heading included) and
/// the request itself; plain messages are all request.
pub(crate) fn split_request(text: &str) -> (Option<&str>, &str) {
    match text.find(REQUEST_HEADING) {
        Some(i) => {
            let (context, request) = text.split_at(i + REQUEST_HEADING.len());
            (Some(context.trim()), request.trim())
        }
        None => (None, text),
    }
}

/// The `<cwd>` an `<environment_context>` block names.
pub(crate) fn environment_cwd(text: &str) -> Option<&str> {
    if !starts_with_ignore_case(text.trim_start(), "<environment_context>") {
        return None;
    }
    let start = text.find("<cwd>")? + "<cwd>".len();
    let len = text.get(start..)?.find("</cwd>")?;
    text.get(start..start + len).map(str::trim)
}

/// The text of one content part: text as is, images and audio as placeholders, anything else
/// (encrypted content, unknown parts) as nothing.
pub(crate) fn content_part(part: &Value) -> Option<&str> {
    if let Some(text) = part.as_str() {
        return Some(text);
    }
    match part.get("type")?.as_str()? {
        "input_image" | "image" | "local_image" => Some(IMAGE),
        "input_audio" | "audio" | "local_audio" => Some(AUDIO),
        _ => part.get("text")?.as_str(),
    }
}

/// A command given as a string, or as an argument vector (`["bash", "-lc", script]` shows the
/// script).
fn command(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(args) => {
            let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
            match args.as_slice() {
                [.., flag, script] if matches!(*flag, "-lc" | "-c") => Some((*script).to_owned()),
                _ => Some(args.join(" ")),
            }
        }
        _ => None,
    }
}

/// A tool's input, compactly: its command for shell-like tools, the lone value of a one-field
/// object, else `key=value` pairs.
pub(crate) fn tool_input(input: &Value) -> String {
    match input {
        Value::String(s) => {
            let t = s.trim_start();
            if t.starts_with('{') || t.starts_with('[') {
                if let Ok(parsed) = serde_json::from_str::<Value>(t) {
                    return tool_input(&parsed);
                }
            }
            s.clone()
        }
        Value::Object(map) => {
            if let Some(cmd) = ["command", "cmd"]
                .iter()
                .find_map(|k| map.get(*k).and_then(command))
            {
                return cmd;
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            if let [only] = keys.as_slice() {
                if let Some(s) = map.get(*only).and_then(Value::as_str) {
                    return s.to_owned();
                }
            }
            keys.iter()
                .map(|k| format!("{k}={}", scalar(&map[k.as_str()])))
                .collect::<Vec<_>>()
                .join(" ")
        }
        other => canonical_json(other),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => canonical_json(other),
    }
}

/// Compact JSON with object keys sorted, so the text never depends on serde_json's features.
pub(crate) fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        canonical_json(&map[k.as_str()])
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Every string inside a value, in order, joined by newlines; ids and type tags are left out.
pub(crate) fn strings(value: &Value) -> String {
    let mut out = Vec::new();
    collect_strings(value, &mut out);
    out.join("\n")
}

/// Whether [`strings`] leaves a key's value out (an id or a type tag).
pub(crate) fn is_tag_key(key: &str) -> bool {
    key == "id" || key == "type" || key.ends_with("_id") || key.ends_with("Id")
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) if !s.trim().is_empty() => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                if !is_tag_key(k) {
                    collect_strings(&map[k.as_str()], out);
                }
            }
        }
        _ => {}
    }
}

/// A tool's output: its parts' texts and whether it reports a failure.
pub(crate) struct Output {
    /// One text per content part.
    pub parts: Vec<String>,
    /// Whether the tool failed.
    pub failed: bool,
}

/// Reads a `function_call_output`/`custom_tool_call_output` `output`: a string (old shell
/// outputs are a JSON string `{"output", "metadata": {"exit_code"}}`), an array of content parts,
/// or an object with `content` and `success`.
pub(crate) fn tool_output(output: &Value) -> Output {
    match output {
        Value::String(s) => string_output(s),
        Value::Array(items) => Output {
            parts: items
                .iter()
                .filter_map(content_part)
                .map(str::to_owned)
                .collect(),
            failed: false,
        },
        Value::Object(map) => {
            let mut out = map.get("content").map_or_else(
                || Output {
                    parts: vec![strings(output)],
                    failed: false,
                },
                tool_output,
            );
            out.failed |= map.get("success").and_then(Value::as_bool) == Some(false);
            out
        }
        _ => Output {
            parts: Vec::new(),
            failed: false,
        },
    }
}

fn string_output(s: &str) -> Output {
    if s.trim_start().starts_with('{') {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(s) {
            if let Some(text) = map.get("output").and_then(Value::as_str) {
                let code = map
                    .get("metadata")
                    .and_then(|m| m.get("exit_code"))
                    .and_then(Value::as_i64);
                return Output {
                    parts: vec![text.to_owned()],
                    failed: code.is_some_and(|c| c != 0),
                };
            }
        }
    }
    Output {
        parts: vec![s.to_owned()],
        failed: exit_code(s).is_some_and(|c| c != 0),
    }
}

/// Whether [`tool_output`] of the string `s` gives a text that is not blank, told without
/// building the value a wrapped output (`{"output", "metadata"}`) parses to.
pub(crate) fn string_output_shows(s: &str) -> bool {
    if s.trim_start().starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(s);
        if let Ok(Some(shows)) = Wrapped.deserialize(&mut de) {
            if de.end().is_ok() {
                return shows;
            }
        }
    }
    !s.trim().is_empty()
}

/// A wrapped output read as [`string_output`] reads it (as a [`Value`] would be, so a value
/// refuses it exactly when [`Value`] does): whether its last `output` is a string that is not
/// blank; `None` when that `output` is not a string or missing.
struct Wrapped;

impl<'de> DeserializeSeed<'de> for Wrapped {
    type Value = Option<bool>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<bool>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Wrapped {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<bool>, A::Error> {
        let mut output = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "output" {
                output = map.next_value_seed(TextShows)?;
            } else {
                map.next_value::<CheckedAny>()?;
            }
        }
        Ok(output)
    }
}

/// Any value, checked as [`Value`] checks it: for a string, whether it is not blank.
struct TextShows;

impl<'de> DeserializeSeed<'de> for TextShows {
    type Value = Option<bool>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<bool>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TextShows {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<Option<bool>, E> {
        Ok(Some(!v.trim().is_empty()))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<bool>, A::Error> {
        while seq.next_element::<CheckedAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<bool>, A::Error> {
        while map.next_entry::<CheckedAny, CheckedAny>()?.is_some() {}
        Ok(None)
    }
}

/// The exit code a shell output reports in its first lines (`Exit code: N`, or
/// `Process exited with code N` from unified exec).
fn exit_code(text: &str) -> Option<i64> {
    text.lines().take(6).find_map(|line| {
        let line = line.trim();
        let n = line
            .strip_prefix("Exit code:")
            .or_else(|| line.strip_prefix("Process exited with code"))?;
        n.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs() {
        assert_eq!(
            tool_input(&json!(r#"{"command":["bash","-lc","ls -la"]}"#)),
            "ls -la"
        );
        assert_eq!(
            tool_input(&json!(r#"{"command":["ls","-la"],"workdir":"/x"}"#)),
            "ls -la"
        );
        assert_eq!(tool_input(&json!(r#"{"cmd":"cargo test"}"#)), "cargo test");
        assert_eq!(tool_input(&json!(r#"{"input":"*** Begin"}"#)), "*** Begin");
        assert_eq!(tool_input(&json!(r#"{"b":2,"a":"x"}"#)), "a=x b=2");
        assert_eq!(tool_input(&json!("[REDACTED")), "[REDACTED");
    }

    #[test]
    fn outputs() {
        let old = tool_output(&json!(r#"{"output":"boom","metadata":{"exit_code":2}}"#));
        assert_eq!((old.parts, old.failed), (vec!["boom".to_owned()], true));
        let new = tool_output(&json!("Exit code: 0\nWall time: 1s\nOutput:\nok"));
        assert!(!new.failed);
        let unified = tool_output(&json!("Chunk ID: 1\nProcess exited with code 1\nOutput:\n"));
        assert!(unified.failed);
        let parts = tool_output(
            &json!([{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:"}]),
        );
        assert_eq!(parts.parts, vec!["a", "[image]"]);
    }

    #[test]
    fn markers() {
        assert!(is_injected("  <ENVIRONMENT_CONTEXT>\n<cwd>/x</cwd>"));
        assert!(is_injected(
            "# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>"
        ));
        assert!(!is_injected("please read <environment_context>"));
        assert_eq!(
            environment_cwd("<environment_context>\n  <cwd>/home/u</cwd>"),
            Some("/home/u")
        );
        assert_eq!(
            split_request("ctx\n## My request for Codex:\nfix it"),
            (Some("ctx\n## My request for Codex:"), "fix it")
        );
    }
}
