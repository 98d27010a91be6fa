//! How one entry of a session file becomes events.

use history_core::{Event, Role, Timestamp};
use serde_json::{Map, Value};

use crate::Dialect;

// Every word this module adds to event text is in the raw bytes of the line it renders:
// `[image]` comes from a block or attachment of type `image`, `bash:` from a `bashExecution`
// message. So the decoder declares no generated words, and a raw prefilter can require them.

/// The events of one line, numbered by part as they are pushed.
pub(crate) struct Out<'a> {
    pub(crate) dialect: Dialect,
    pub(crate) seq: u64,
    pub(crate) part: u32,
    pub(crate) sink: &'a mut dyn FnMut(Event),
}

impl Out<'_> {
    fn push(
        &mut self,
        role: Role,
        kind: &str,
        timestamp: Option<Timestamp>,
        text: String,
        tool: Option<&str>,
    ) {
        (self.sink)(Event {
            seq: self.seq,
            part: self.part,
            role,
            kind: kind.to_string(),
            timestamp,
            text,
            visible: matches!(role, Role::User | Role::Assistant),
            tool: tool.map(str::to_string),
            on_active_branch: None,
        });
        self.part += 1;
    }
}

fn str_field<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// A non-blank string field.
fn text_field<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    str_field(map, key).filter(|s| !s.trim().is_empty())
}

/// The entry's ISO `timestamp`, else the message's numeric milliseconds.
pub(crate) fn timestamp(entry: &Map<String, Value>) -> Option<Timestamp> {
    let iso = |v: &Value| v.as_str().and_then(Timestamp::parse_rfc3339);
    let millis = |v: &Value| match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            .map(Timestamp::from_millis),
        Value::String(_) => iso(v),
        _ => None,
    };
    entry.get("timestamp").and_then(iso).or_else(|| {
        entry
            .get("message")
            .and_then(|m| m.get("timestamp"))
            .and_then(millis)
    })
}

/// Emits the events of one entry. Metadata entries (`model_change`, `thinking_level_change`,
/// `custom`) and unknown types yield none; they are still nodes of the tree.
pub(crate) fn render(entry: &Map<String, Value>, out: &mut Out<'_>) {
    let at = timestamp(entry);
    if out.dialect == Dialect::Omp && render_omp(entry, at, out) {
        return;
    }
    match str_field(entry, "type").unwrap_or("") {
        "message" => {
            if let Some(Value::Object(message)) = entry.get("message") {
                render_message(message, at, out);
            }
        }
        "compaction" | "branch_summary" => {
            if let Some(summary) = text_field(entry, "summary") {
                out.push(Role::Context, "summary", at, summary.to_string(), None);
            }
        }
        "custom_message" => render_content(entry.get("content"), Role::Context, "meta", at, out),
        "label" => {
            if let Some(label) = text_field(entry, "label") {
                out.push(Role::Context, "meta", at, label.to_string(), None);
            }
        }
        "session_info" => {
            if let Some(name) = text_field(entry, "name") {
                out.push(Role::Context, "meta", at, name.trim().to_string(), None);
            }
        }
        _ => {}
    }
}

/// The entries Oh My Pi adds or reads otherwise; `false` leaves the entry to pi's rules.
///
/// - `session_init`: the system prompt a sub-agent was started with (its task is its first
///   user message): context.
/// - `title_change`: the new title, as pi's `session_info` name is: context.
/// - `compaction`: its summary, then its `shortSummary`: context.
/// - `ttsr_injection`, `credential_pin`, `model_usage`, `service_tier_change`, `mode_change`,
///   `reset_boundary`: no event (the rules a `ttsr_injection` names are in the
///   `custom_message` before it).
fn render_omp(entry: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) -> bool {
    match str_field(entry, "type").unwrap_or("") {
        "session_init" => {
            if let Some(prompt) = text_field(entry, "systemPrompt") {
                out.push(Role::Context, "instructions", at, prompt.to_string(), None);
            }
        }
        "title_change" => {
            if let Some(title) = text_field(entry, "title") {
                out.push(Role::Context, "meta", at, title.trim().to_string(), None);
            }
        }
        "compaction" => {
            for key in ["summary", "shortSummary"] {
                if let Some(summary) = text_field(entry, key) {
                    out.push(Role::Context, "summary", at, summary.to_string(), None);
                }
            }
        }
        _ => return false,
    }
    true
}

fn render_message(message: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    match str_field(message, "role").unwrap_or("") {
        // Oh My Pi: a user message the agent wrote (an async result, a reminder) is injected.
        "user"
            if out.dialect == Dialect::Omp
                && str_field(message, "attribution") == Some("agent") =>
        {
            render_content(message.get("content"), Role::Context, "meta", at, out);
        }
        "user" => {
            render_content(message.get("content"), Role::User, "message", at, out);
            render_attachments(message.get("attachments"), at, out);
        }
        "assistant" => render_assistant(message, at, out),
        "toolResult" => render_tool_result(message, at, out),
        "bashExecution" => render_bash(message, at, out),
        "branchSummary" | "compactionSummary" => {
            if let Some(summary) = text_field(message, "summary") {
                out.push(Role::Context, "summary", at, summary.to_string(), None);
            }
        }
        // `custom`, its v2 name `hookMessage`, `system`, and roles newer than this decoder.
        _ => render_content(message.get("content"), Role::Context, "meta", at, out),
    }
}

/// Text and image content, one event per block: a plain string is one text block.
fn render_content(
    content: Option<&Value>,
    role: Role,
    kind: &str,
    at: Option<Timestamp>,
    out: &mut Out<'_>,
) {
    match content {
        Some(Value::String(text)) if !text.trim().is_empty() => {
            out.push(role, kind, at, text.clone(), None);
        }
        Some(Value::Array(blocks)) => {
            for block in blocks.iter().filter_map(Value::as_object) {
                if let Some(text) = block_text(block) {
                    out.push(role, kind, at, text, None);
                }
            }
        }
        _ => {}
    }
}

/// The text of a text or image block (`[image]`); `None` for blank or unknown blocks.
fn block_text(block: &Map<String, Value>) -> Option<String> {
    match str_field(block, "type") {
        Some("image") => Some("[image]".to_string()),
        _ => text_field(block, "text").map(str::to_string),
    }
}

/// Legacy user attachments: images show as `[image]`, documents as their extracted text.
fn render_attachments(attachments: Option<&Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    let Some(Value::Array(items)) = attachments else {
        return;
    };
    for item in items.iter().filter_map(Value::as_object) {
        let text = match str_field(item, "type") {
            Some("image") => Some("[image]".to_string()),
            _ => text_field(item, "extractedText")
                .or_else(|| text_field(item, "fileName"))
                .map(str::to_string),
        };
        if let Some(text) = text {
            out.push(Role::User, "message", at, text, None);
        }
    }
}

fn render_assistant(message: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    if let Some(Value::Array(blocks)) = message.get("content") {
        for block in blocks.iter().filter_map(Value::as_object) {
            match str_field(block, "type") {
                Some("thinking") => {
                    if let Some(thinking) = text_field(block, "thinking") {
                        out.push(Role::Assistant, "reasoning", at, thinking.to_string(), None);
                    }
                }
                Some("toolCall") => {
                    let name = str_field(block, "name").filter(|n| !n.is_empty());
                    let text = match out.dialect {
                        Dialect::Pi => tool_call_text(name.unwrap_or(""), block.get("arguments")),
                        Dialect::Omp => {
                            omp_tool_call_text(name.unwrap_or(""), block.get("arguments"))
                        }
                    };
                    out.push(Role::Tool, "tool_call", at, text, name);
                }
                _ => {
                    if let Some(text) = block_text(block) {
                        out.push(Role::Assistant, "message", at, text, None);
                    }
                }
            }
        }
    } else if let Some(text) = text_field(message, "content") {
        out.push(Role::Assistant, "message", at, text.to_string(), None);
    }
    // An errored or aborted turn: what pi shows in place of the reply. It is not dialogue.
    if let Some(error) = text_field(message, "errorMessage") {
        out.push(Role::Context, "error", at, error.to_string(), None);
    }
}

/// `<tool>: <input>`: a bash-like tool's command, a lone string argument (`read: notes.md`), or
/// the arguments as compact JSON.
fn tool_call_text(name: &str, arguments: Option<&Value>) -> String {
    let input = match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(args)) => match (str_field(args, "command"), args.len()) {
            (Some(command), _) => command.to_string(),
            (None, 1) => match args.values().next() {
                Some(Value::String(only)) => only.clone(),
                _ => compact(args),
            },
            _ => compact(args),
        },
        Some(other) => other.to_string(),
    };
    if input.is_empty() || name.is_empty() {
        format!("{name}{input}")
    } else {
        format!("{name}: {input}")
    }
}

/// Oh My Pi's tools take an extra `i` argument, the call's intent: the call is shown as pi
/// shows it without it, the intent on a line of its own after it. (`partialArgs`, a string copy
/// of the arguments, is not read.)
fn omp_tool_call_text(name: &str, arguments: Option<&Value>) -> String {
    let Some(Value::Object(args)) = arguments else {
        return tool_call_text(name, arguments);
    };
    let intent = text_field(args, "i");
    let Some(intent) = intent else {
        return tool_call_text(name, arguments);
    };
    let mut rest = args.clone();
    rest.remove("i");
    let call = tool_call_text(name, Some(&Value::Object(rest)));
    format!("{call}\n{intent}")
}

/// Compact JSON, in the file's key order when serde_json preserves it (the workspace enables
/// `preserve_order`), else sorted.
fn compact(args: &Map<String, Value>) -> String {
    serde_json::to_string(args).unwrap_or_default()
}

fn render_tool_result(message: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    let name = str_field(message, "toolName").filter(|n| !n.is_empty());
    let kind = if message.get("isError").and_then(Value::as_bool) == Some(true) {
        "tool_error"
    } else {
        "tool_output"
    };
    match message.get("content") {
        Some(Value::Array(blocks)) => {
            for block in blocks.iter().filter_map(Value::as_object) {
                if let Some(text) = block_text(block) {
                    out.push(Role::Tool, kind, at, text, name);
                }
            }
        }
        Some(Value::String(text)) if !text.trim().is_empty() => {
            out.push(Role::Tool, kind, at, text.clone(), name);
        }
        // Before pi 0.6.0 a tool result's text was in `output`.
        _ => {
            if let Some(output) = text_field(message, "output") {
                out.push(Role::Tool, kind, at, output.to_string(), name);
            }
        }
    }
}

/// A command the user ran with `!cmd`: its command line, then its output.
fn render_bash(message: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    if let Some(command) = text_field(message, "command") {
        out.push(
            Role::Tool,
            "tool_call",
            at,
            format!("bash: {command}"),
            Some("bash"),
        );
    }
    let failed = message
        .get("exitCode")
        .and_then(Value::as_i64)
        .is_some_and(|code| code != 0);
    if let Some(output) = text_field(message, "output") {
        let kind = if failed { "tool_error" } else { "tool_output" };
        out.push(Role::Tool, kind, at, output.to_string(), Some("bash"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_call_text_forms() {
        let t = |name, v: Value| tool_call_text(name, Some(&v));
        assert_eq!(
            t("bash", json!({"command": "ls -la", "timeout": 5})),
            "bash: ls -la"
        );
        assert_eq!(t("read", json!({"path": "/etc/hosts"})), "read: /etc/hosts");
        assert_eq!(
            t("write", json!({"content": "x", "path": "a"})),
            r#"write: {"content":"x","path":"a"}"#
        );
        assert_eq!(t("ls", json!({})), "ls: {}");
        assert_eq!(tool_call_text("ls", None), "ls");
        assert_eq!(t("", json!({"command": "ls"})), "ls");
    }

    #[test]
    fn omp_tool_calls_show_their_intent_apart() {
        let t = |name, v: Value| omp_tool_call_text(name, Some(&v));
        assert_eq!(
            t("read", json!({"path": "a.rs", "i": "look at a"})),
            "read: a.rs\nlook at a"
        );
        assert_eq!(t("bash", json!({"command": "ls"})), "bash: ls");
        assert_eq!(t("todo", json!({"i": "plan"})), "todo: {}\nplan");
    }
}
