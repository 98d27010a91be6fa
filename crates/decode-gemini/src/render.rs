//! How one replayed message becomes events.

use std::collections::HashSet;

use history_core::{Event, Role, Timestamp};
use serde_json::{Map, Value};

// Every word this module adds to event text is in the raw bytes of the line the message comes
// from (a tool's `name`, a part's `mimeType`), so a raw prefilter can require them.

/// The id Gemini CLI gives the environment context it injects as the first user turn.
const CONTEXT_ID: &str = "d04923d38bb0f6017037e74183378ef4";

/// How older versions opened the same context, before it was tagged `<session_context>`.
const UNTAGGED_CONTEXT: &str = "This is the Gemini CLI. We are setting up the context";

/// One event of a message, before its line and part are known.
pub(crate) struct Piece {
    pub(crate) role: Role,
    pub(crate) kind: &'static str,
    pub(crate) text: String,
    pub(crate) tool: Option<String>,
}

impl Piece {
    pub(crate) fn event(self, seq: u64, part: u32, timestamp: Option<Timestamp>) -> Event {
        Event {
            seq,
            part,
            role: self.role,
            kind: self.kind.to_string(),
            timestamp,
            text: self.text,
            visible: matches!(self.role, Role::User | Role::Assistant),
            tool: self.tool,
            on_active_branch: None,
        }
    }
}

fn piece(role: Role, kind: &'static str, text: String, tool: Option<&str>) -> Piece {
    Piece {
        role,
        kind,
        text,
        tool: tool.map(str::to_string),
    }
}

/// The message's `timestamp`.
pub(crate) fn timestamp(message: &Map<String, Value>) -> Option<Timestamp> {
    message
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse_rfc3339)
}

/// The ids of every tool result a `gemini` message's `toolCalls` carry: the same results sent
/// back as `functionResponse` parts of a `user` message are not shown twice.
pub(crate) fn tool_result_ids(message: &Map<String, Value>, ids: &mut HashSet<String>) {
    if message.get("type").and_then(Value::as_str) != Some("gemini") {
        return;
    }
    let Some(Value::Array(calls)) = message.get("toolCalls") else {
        return;
    };
    for call in calls.iter().filter_map(Value::as_object) {
        if call.get("result").is_some_and(|r| !r.is_null()) {
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                ids.insert(id.to_string());
            }
        }
    }
}

/// The events of one message, in order. `shown` holds the ids of the tool results shown so far
/// (and of every tool call's result): a `functionResponse` among them is not shown again, and one
/// shown here is added.
pub(crate) fn render(message: &Map<String, Value>, shown: &mut HashSet<String>) -> Vec<Piece> {
    let mut out = Vec::new();
    match message.get("type").and_then(Value::as_str).unwrap_or("") {
        "user" => user(message, shown, &mut out),
        "gemini" => gemini(message, &mut out),
        kind @ ("info" | "warning" | "error") => {
            if let Some(text) = message.get("content").map(plain_text).filter(|t| !blank(t)) {
                let kind = match kind {
                    "info" => "info",
                    "warning" => "warning",
                    _ => "error",
                };
                out.push(piece(Role::Context, kind, text, None));
            }
        }
        _ => {
            if let Some(text) = message.get("content").map(plain_text).filter(|t| !blank(t)) {
                out.push(piece(Role::Context, "meta", text, None));
            }
        }
    }
    out
}

fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Whether a user text is what Gemini CLI injects rather than what a person typed.
fn injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<session_context>")
        || t.starts_with("<hook_context>")
        || t.starts_with(UNTAGGED_CONTEXT)
}

fn user(message: &Map<String, Value>, shown: &mut HashSet<String>, out: &mut Vec<Piece>) {
    let content = message.get("content");
    let display = message.get("displayContent").filter(|d| !d.is_null());
    let text = content.map(plain_text).unwrap_or_default();
    let is_context =
        message.get("id").and_then(Value::as_str) == Some(CONTEXT_ID) || injected(&text);
    // What the person saw: `displayContent` when it is there (the typed text of a prompt whose
    // `content` was expanded), else the content.
    let display_text = display.map(plain_text).unwrap_or_default();
    let display_responses = display.is_some_and(|d| !responses(d).is_empty());
    if is_context {
        if !blank(&text) {
            out.push(piece(Role::Context, "meta", text, None));
        }
    } else if display_responses && blank(&display_text) {
        // A tool's answer shown as such, sent to the model as words of the CLI's own.
        if !blank(&text) {
            out.push(piece(Role::Context, "meta", text, None));
        }
    } else if !blank(&display_text) {
        out.push(piece(Role::User, "message", display_text.clone(), None));
        if !blank(&text) && text.trim() != display_text.trim() {
            out.push(piece(Role::Context, "meta", text, None));
        }
    } else if !blank(&text) {
        out.push(piece(Role::User, "message", text, None));
    }
    for part in content.map(parts).unwrap_or_default() {
        non_text_part(part, Role::User, true, out);
    }
    // A resume writes the history again as the model saw it: a reply's results once more as a
    // user turn of their own (`<id>_response`) beside the one that sent them.
    for source in [content, display].into_iter().flatten() {
        for response in responses(source) {
            let id = response.get("id").and_then(Value::as_str);
            if id.is_some_and(|id| !shown.insert(id.to_string())) {
                continue;
            }
            function_response(response, None, out);
        }
    }
}

fn gemini(message: &Map<String, Value>, out: &mut Vec<Piece>) {
    if let Some(Value::Array(thoughts)) = message.get("thoughts") {
        for thought in thoughts.iter().filter_map(Value::as_object) {
            let subject = thought.get("subject").and_then(Value::as_str).unwrap_or("");
            let description = thought
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let text = match (blank(subject), blank(description)) {
                (true, true) => continue,
                (false, true) => subject.to_string(),
                (true, false) => description.to_string(),
                (false, false) => format!("{subject}: {description}"),
            };
            out.push(piece(Role::Assistant, "reasoning", text, None));
        }
    }
    let has_calls = matches!(message.get("toolCalls"), Some(Value::Array(c)) if !c.is_empty());
    if let Some(content) = message.get("content") {
        // A resume writes `thoughts` back as parts marked `thought`.
        for part in parts(content) {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            match part.get("text").and_then(Value::as_str) {
                Some(text) if thought && !blank(text) => {
                    out.push(piece(Role::Assistant, "reasoning", text.to_string(), None));
                }
                _ => {}
            }
        }
        let text = plain_text(content);
        if !blank(&text) {
            out.push(piece(Role::Assistant, "message", text, None));
        }
        for part in parts(content) {
            non_text_part(part, Role::Assistant, !has_calls, out);
        }
    }
    if let Some(Value::Array(calls)) = message.get("toolCalls") {
        for call in calls.iter().filter_map(Value::as_object) {
            tool_call(call, out);
        }
    }
}

fn tool_call(call: &Map<String, Value>, out: &mut Vec<Piece>) {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
    out.push(piece(
        Role::Tool,
        "tool_call",
        call_text(name, call.get("args")),
        Some(name),
    ));
    let failed = matches!(
        call.get("status").and_then(Value::as_str),
        Some("error" | "cancelled")
    );
    match call.get("result") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if !blank(s) {
                let kind = if failed { "tool_error" } else { "tool_output" };
                out.push(piece(Role::Tool, kind, s.clone(), Some(name)));
            }
        }
        Some(result) => {
            let found = responses(result);
            if found.is_empty() {
                let text = plain_text(result);
                if !blank(&text) {
                    let kind = if failed { "tool_error" } else { "tool_output" };
                    out.push(piece(Role::Tool, kind, text, Some(name)));
                }
            }
            for response in found {
                function_response(response, Some((name, failed)), out);
            }
        }
    }
}

/// `name: <args>`: a single string argument as it is, anything else as compact JSON.
fn call_text(name: &str, args: Option<&Value>) -> String {
    match args {
        None | Some(Value::Null) => name.to_string(),
        Some(Value::Object(map)) if map.is_empty() => name.to_string(),
        Some(Value::Object(map)) if map.len() == 1 => match map.values().next() {
            Some(Value::String(s)) => format!("{name}: {s}"),
            _ => format!("{name}: {}", Value::Object(map.clone())),
        },
        Some(args) => format!("{name}: {args}"),
    }
}

/// A `functionResponse`: its `output`, else its `error`, else the whole response.
fn function_response(
    response: &Map<String, Value>,
    call: Option<(&str, bool)>,
    out: &mut Vec<Piece>,
) {
    let name = call
        .map(|(n, _)| n)
        .or_else(|| response.get("name").and_then(Value::as_str));
    let body = response.get("response");
    let field = |key: &str| body.and_then(|b| b.get(key)).filter(|v| !v.is_null());
    let (text, error) = match (field("output"), field("error")) {
        (Some(output), _) => (shown_value(output), false),
        (None, Some(error)) => (shown_value(error), true),
        (None, None) => (body.map(shown_value).unwrap_or_default(), false),
    };
    if blank(&text) {
        return;
    }
    let failed = error || call.is_some_and(|(_, f)| f);
    let kind = if failed { "tool_error" } else { "tool_output" };
    out.push(piece(Role::Tool, kind, text, name));
}

fn shown_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A content's parts: an array's objects, or the one object it is.
fn parts(content: &Value) -> Vec<&Map<String, Value>> {
    match content {
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        Value::Object(map) => vec![map],
        _ => Vec::new(),
    }
}

/// The `functionResponse` objects among a content's parts.
fn responses(content: &Value) -> Vec<&Map<String, Value>> {
    parts(content)
        .into_iter()
        .filter_map(|p| p.get("functionResponse").and_then(Value::as_object))
        .collect()
}

/// The text of a content: a string, or its text parts joined (as Gemini CLI joins them).
pub(crate) fn plain_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(part) => part_text(part),
                _ => None,
            })
            .collect(),
        Value::Object(part) => part_text(part).unwrap_or("").to_string(),
        _ => String::new(),
    }
}

/// A part's text, unless it is the model's hidden thinking (`thought: true`), shown as
/// `thoughts` instead.
fn part_text(part: &Map<String, Value>) -> Option<&str> {
    if part.get("thought").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    part.get("text").and_then(Value::as_str)
}

/// Function calls written into a content (unless `toolCalls` has them), and attachments, which
/// have no text.
fn non_text_part(part: &Map<String, Value>, role: Role, calls: bool, out: &mut Vec<Piece>) {
    if let Some(call) = part
        .get("functionCall")
        .and_then(Value::as_object)
        .filter(|_| calls)
    {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
        out.push(piece(
            Role::Tool,
            "tool_call",
            call_text(name, call.get("args")),
            Some(name),
        ));
    }
    for key in ["inlineData", "fileData"] {
        if let Some(data) = part.get(key).and_then(Value::as_object) {
            let mime = data.get("mimeType").and_then(Value::as_str).unwrap_or(key);
            let uri = data.get("fileUri").and_then(Value::as_str);
            let text = match uri {
                Some(uri) => format!("[{mime}] {uri}"),
                None => format!("[{mime}]"),
            };
            out.push(piece(role, "message", text, None));
        }
    }
}
