//! The text of events whose words are generated: tool calls, tool results, placeholders.

use serde_json::Value;

use crate::graph::FastMap;

// Every word this rendering adds to event text is in the raw bytes of the line it renders: a
// placeholder names its block's type (`[image]` from `"type":"image"`), `[redacted thinking]`
// comes from a `redacted_thinking` block and a call without a name is a `tool_use`. So unlike
// the other decoders, this one declares no generated words, and a raw prefilter can require
// them (searching for `thinking` or `tool` skips the files without them).

/// Tool names by tool-use id, to name the tool of a result.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ToolNames(FastMap<String, String>);

impl ToolNames {
    pub(crate) fn insert(&mut self, id: &str, name: &str) {
        self.0.insert(id.to_string(), name.to_string());
    }

    pub(crate) fn name(&self, id: &str) -> Option<String> {
        self.0.get(id).cloned()
    }
}

/// The input fields that say best what a call does, in order of preference.
const PRIMARY: &[&str] = &[
    "command",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
];

/// `Bash: ls -la`, then the other input fields one per line as `key: value`.
pub(crate) fn tool_call(name: &str, input: Option<&Value>) -> String {
    let parsed;
    let input = match input {
        // Some versions wrote the input as a JSON-encoded string.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => {
                parsed = v;
                &parsed
            }
            _ => return format!("{name}: {s}"),
        },
        Some(v) => v,
        None => return name.to_string(),
    };
    let Value::Object(fields) = input else {
        return format!("{name}: {}", scalar(input));
    };
    let primary = PRIMARY
        .iter()
        .find(|k| fields.get(**k).is_some_and(Value::is_string));
    let mut text = match primary.and_then(|k| fields.get(*k)) {
        Some(v) => format!("{name}: {}", scalar(v)),
        None => name.to_string(),
    };
    for (key, value) in fields {
        if Some(&key.as_str()) == primary.copied().as_ref() {
            continue;
        }
        text.push('\n');
        text.push_str(key);
        text.push_str(": ");
        text.push_str(&scalar(value));
    }
    text
}

/// A string as itself; anything else as compact JSON.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text of a tool result, an attachment or a prompt: strings as they are, blocks by kind,
/// objects by their string leaves, one per line.
pub(crate) fn result_text(content: Option<&Value>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = content {
        collect(v, &mut parts);
    }
    parts.join("\n")
}

fn collect(v: &Value, parts: &mut Vec<String>) {
    match v {
        Value::Null => {}
        Value::String(s) => parts.push(s.clone()),
        Value::Bool(_) | Value::Number(_) => parts.push(v.to_string()),
        Value::Array(items) => items.iter().for_each(|i| collect(i, parts)),
        Value::Object(fields) => match fields.get("type").and_then(Value::as_str) {
            Some("text") => collect(fields.get("text").unwrap_or(&Value::Null), parts),
            Some("tool_reference") => {
                collect(fields.get("tool_name").unwrap_or(&Value::Null), parts)
            }
            Some(kind @ ("image" | "document")) => parts.push(placeholder(kind)),
            _ => fields
                .iter()
                .filter(|(k, _)| k.as_str() != "type")
                .for_each(|(_, v)| collect(v, parts)),
        },
    }
}

/// `[image]`, `[document]`, or the block's type in brackets.
pub(crate) fn placeholder(kind: &str) -> String {
    format!("[{kind}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_calls_read_like_commands() {
        let input = json!({"command": "ls -la", "description": "List files"});
        assert_eq!(
            tool_call("Bash", Some(&input)),
            "Bash: ls -la\ndescription: List files"
        );
        let stringly = json!("{\"file_path\":\"/a.rs\"}");
        assert_eq!(tool_call("Read", Some(&stringly)), "Read: /a.rs");
        assert_eq!(tool_call("Odd", Some(&json!("plain"))), "Odd: plain");
        assert_eq!(
            tool_call("TodoWrite", Some(&json!({"todos": []}))),
            "TodoWrite\ntodos: []"
        );
    }

    #[test]
    fn results_flatten_blocks() {
        let content = json!([
            {"type": "text", "text": "first"},
            {"type": "image", "source": {"data": "AAAA"}},
            {"type": "tool_reference", "tool_name": "Grep"}
        ]);
        assert_eq!(result_text(Some(&content)), "first\n[image]\nGrep");
    }
}
