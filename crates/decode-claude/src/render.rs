//! The text of events whose words are generated: tool calls, tool results, placeholders.

use serde_json::Value;

use crate::graph::FastMap;
use crate::table::Table;

// Every word this rendering adds to event text is in the raw bytes of the line it renders: a
// placeholder names its block's type (`[image]` from `"type":"image"`), `[redacted thinking]`
// comes from a `redacted_thinking` block and a call without a name is a `tool_use`. So unlike
// the other decoders, this one declares no generated words, and a raw prefilter can require
// them (searching for `thinking` or `tool` skips the files without them).

/// Tool names by tool-use id, to name the tool of a result. Those a snapshot held stay in its
/// [`Table`] (the index of each one's name in `frozen_names`); the map holds those seen after.
#[derive(Default)]
pub(crate) struct ToolNames {
    added: FastMap<String, String>,
    frozen: Table,
    frozen_names: Vec<String>,
}

/// What a snapshot keeps of [`ToolNames`]: each distinct name once, and every id in a table.
#[derive(serde::Serialize, serde::Deserialize)]
struct FrozenTools {
    ids: Table,
    names: Vec<String>,
}

impl ToolNames {
    pub(crate) fn insert(&mut self, id: &str, name: &str) {
        self.added.insert(id.to_string(), name.to_string());
    }

    pub(crate) fn name(&self, id: &str) -> Option<String> {
        match self.added.get(id) {
            Some(name) => Some(name.clone()),
            None => (self.frozen.get(id.as_bytes()))
                .and_then(|i| self.frozen_names.get(i as usize).cloned()),
        }
    }
}

impl serde::Serialize for ToolNames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut names = self.frozen_names.clone();
        let mut number: FastMap<&str, u32> = FastMap::default();
        for (i, name) in names.iter().enumerate() {
            number.entry(name).or_insert(i as u32);
        }
        let mut ids = Vec::with_capacity(self.added.len());
        let mut added_names = Vec::new();
        for (id, name) in &self.added {
            let n = *number.entry(name).or_insert_with(|| {
                added_names.push(name.clone());
                (self.frozen_names.len() + added_names.len() - 1) as u32
            });
            ids.push((id.as_bytes(), n));
        }
        names.extend(added_names);
        FrozenTools {
            ids: self.frozen.merged(ids),
            names,
        }
        .serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for ToolNames {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ToolNames, D::Error> {
        let frozen = FrozenTools::deserialize(d)?;
        Ok(ToolNames {
            added: FastMap::default(),
            frozen: frozen.ids,
            frozen_names: frozen.names,
        })
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
            // A server tool's result the API sends encrypted (the advisor's): nothing to read.
            // Its words are the line's own (`encrypted_content`), as a raw prefilter needs.
            Some(kind) if kind.ends_with("_redacted_result") => {
                parts.push(format!("[{kind}: encrypted content]"))
            }
            // Encrypted content beside readable fields (a web search result's page) is not text.
            _ => fields
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "type" | "encrypted_content"))
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
    fn encrypted_results_say_so_and_show_no_ciphertext() {
        let advisor =
            json!({"type": "advisor_redacted_result", "encrypted_content": "Sl2IM/ku+9y0Uap"});
        assert_eq!(
            result_text(Some(&advisor)),
            "[advisor_redacted_result: encrypted content]"
        );
        let search = json!([{"type": "web_search_result", "title": "Docs", "url": "https://x.test", "encrypted_content": "EqwBCkYI"}]);
        assert_eq!(result_text(Some(&search)), "Docs\nhttps://x.test");
    }

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
