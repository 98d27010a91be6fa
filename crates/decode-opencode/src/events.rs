//! How a session's messages become events: one seq per message, in OpenCode's order, one event
//! per part that says something (a tool part two: its call and its result).

use history_core::{Event, Role, Timestamp};
use serde_json::{Map, Value};

use crate::session::{millis, Message, Row};

/// What decoding the messages found besides events.
pub(crate) struct Outcome {
    /// The seqs on the selected branch: `None` unless an undo hid messages.
    pub(crate) branch: Option<Vec<u64>>,
    pub(crate) notices: Vec<String>,
}

/// Emits the events of `messages` (seq = 1-based position) into `sink`. Messages an undo hid
/// (`revert`: that message and every one after it) are emitted too, off the branch.
pub(crate) fn decode(row: &Row, messages: &[Message], sink: &mut dyn FnMut(Event)) -> Outcome {
    let mut notices = Vec::new();
    let hidden_from = row.reverted_from.as_ref().and_then(|id| {
        let at = messages.iter().position(|m| &m.id == id);
        if at.is_none() {
            notices.push(format!("the undone message {id} is not in the session"));
        }
        at
    });
    for (i, message) in messages.iter().enumerate() {
        let seq = i as u64 + 1;
        let Some(info) = &message.info else {
            notices.push(format!("message {} is damaged: skipped", message.id));
            continue;
        };
        let mut out = Out {
            seq,
            part: 0,
            sink: &mut *sink,
        };
        let damaged = message_events(info, &message.parts, &mut out);
        if damaged > 0 {
            notices.push(format!(
                "message {}: {damaged} damaged part(s) skipped",
                message.id
            ));
        }
    }
    let branch = hidden_from.map(|end| (1..=end as u64).collect());
    Outcome { branch, notices }
}

/// The events of one message, numbered by part as they are pushed.
struct Out<'a> {
    seq: u64,
    part: u32,
    sink: &'a mut dyn FnMut(Event),
}

impl Out<'_> {
    fn push(
        &mut self,
        role: Role,
        kind: &str,
        at: Option<Timestamp>,
        text: String,
        tool: Option<&str>,
    ) {
        (self.sink)(Event {
            seq: self.seq,
            part: self.part,
            role,
            kind: kind.to_string(),
            timestamp: at,
            text,
            visible: matches!(role, Role::User | Role::Assistant),
            tool: tool.map(str::to_string),
            on_active_branch: None,
        });
        self.part += 1;
    }
}

fn text<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// A non-blank string field.
fn words<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    text(map, key).filter(|s| !s.trim().is_empty())
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool) == Some(true)
}

/// `map.time.<key>` in milliseconds, as a time.
fn time_of(map: &Map<String, Value>, key: &str) -> Option<Timestamp> {
    map.get("time")?
        .get(key)
        .and_then(millis)
        .map(Timestamp::from_millis)
}

/// The events of a message's parts; how many parts were damaged.
fn message_events(
    info: &Map<String, Value>,
    parts: &[(String, Option<Map<String, Value>>)],
    out: &mut Out<'_>,
) -> usize {
    let assistant = text(info, "role") == Some("assistant");
    // The summary a compaction wrote is context, not the model's reply.
    let summary = assistant && flag(info, "summary");
    let created = time_of(info, "created");
    let mut damaged = 0;
    for (_, part) in parts {
        let Some(part) = part else {
            damaged += 1;
            continue;
        };
        let at = time_of(part, "start").or(created);
        match text(part, "type") {
            Some("text") => {
                let Some(body) = words(part, "text") else {
                    continue;
                };
                let (role, kind) = if summary {
                    (Role::Context, "summary")
                } else if flag(part, "synthetic") || flag(part, "ignored") {
                    // Injected by OpenCode (a file's expansion, the prompt to go on after a
                    // compaction), or not sent at all.
                    (Role::Context, "meta")
                } else if assistant {
                    (Role::Assistant, "message")
                } else {
                    (Role::User, "message")
                };
                out.push(role, kind, at, body.to_string(), None);
            }
            Some("reasoning") => {
                if let Some(body) = words(part, "text") {
                    out.push(Role::Assistant, "reasoning", at, body.to_string(), None);
                }
            }
            Some("tool") => tool_events(part, at, out),
            Some("file") => {
                let role = if assistant {
                    Role::Assistant
                } else {
                    Role::User
                };
                out.push(role, "message", at, file_text(part), None);
            }
            Some("compaction") => {
                let how = if flag(part, "auto") { " (auto)" } else { "" };
                out.push(Role::Context, "meta", at, format!("compaction{how}"), None);
            }
            Some("agent") => {
                if let Some(name) = words(part, "name") {
                    out.push(Role::Context, "meta", at, format!("@{name}"), None);
                }
            }
            Some("subtask") => {
                let what = [words(part, "agent"), words(part, "description")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(": ");
                let prompt = words(part, "prompt").unwrap_or("");
                out.push(
                    Role::Context,
                    "meta",
                    at,
                    format!("subtask {what}\n{prompt}").trim_end().to_string(),
                    None,
                );
            }
            // step-start, step-finish, patch, snapshot, retry, and types yet unknown: bookkeeping.
            _ => {}
        }
    }
    if let Some(error) = info.get("error").and_then(error_text) {
        let at = time_of(info, "completed").or(created);
        out.push(Role::Context, "error", at, error, None);
    }
    damaged
}

/// A tool part: its call, then its result once it has one.
fn tool_events(part: &Map<String, Value>, at: Option<Timestamp>, out: &mut Out<'_>) {
    let name = words(part, "tool");
    let state = part.get("state").and_then(Value::as_object);
    let input = state.and_then(|s| s.get("input"));
    let start = state.and_then(|s| time_of(s, "start")).or(at);
    out.push(
        Role::Tool,
        "tool_call",
        start,
        call_text(name.unwrap_or(""), input),
        name,
    );
    let Some(state) = state else {
        return;
    };
    let end = time_of(state, "end").or(start);
    match text(state, "status") {
        Some("completed") => {
            let output = text(state, "output").unwrap_or("").to_string();
            // A shell command that failed still completes, with its exit code.
            let exit = state
                .get("metadata")
                .and_then(|m| m.get("exit"))
                .and_then(Value::as_i64);
            let kind = match exit {
                Some(code) if code != 0 => "tool_error",
                _ => "tool_output",
            };
            out.push(Role::Tool, kind, end, output, name);
        }
        Some("error") => {
            let error = text(state, "error").unwrap_or("").to_string();
            out.push(Role::Tool, "tool_error", end, error, name);
        }
        // pending, running: no result yet.
        _ => {}
    }
}

/// `<tool>: <input>`: a shell command, a lone string argument, else the input as compact JSON.
fn call_text(name: &str, input: Option<&Value>) -> String {
    let input = match input {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(args)) if args.is_empty() => String::new(),
        Some(Value::Object(args)) => match (text(args, "command"), args.len()) {
            (Some(command), _) => command.to_string(),
            (None, 1) => match args.values().next() {
                Some(Value::String(only)) => only.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
            _ => Value::Object(args.clone()).to_string(),
        },
        Some(other) => other.to_string(),
    };
    match (name.is_empty(), input.is_empty()) {
        (false, false) => format!("{name}: {input}"),
        (false, true) => name.to_string(),
        (true, _) => input,
    }
}

/// `[file: <name>]`, `[image: <name>]`: an attachment, by its name or, when it has none and is
/// not inline data, its URL.
fn file_text(part: &Map<String, Value>) -> String {
    let image = text(part, "mime").is_some_and(|m| m.starts_with("image/"));
    let what = if image { "image" } else { "file" };
    let name =
        words(part, "filename").or_else(|| words(part, "url").filter(|u| !u.starts_with("data:")));
    match name {
        Some(name) => format!("[{what}: {name}]"),
        None => format!("[{what}]"),
    }
}

/// An assistant message's error: its `data.message`, else its name.
fn error_text(error: &Value) -> Option<String> {
    let message = error
        .get("data")
        .and_then(|d| d.get("message"))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let name = error.get("name").and_then(Value::as_str);
    match (name, message) {
        (Some(name), Some(message)) => Some(format!("{name}: {message}")),
        (None, Some(message)) => Some(message.to_string()),
        (Some(name), None) => Some(name.to_string()),
        (None, None) => None,
    }
}
