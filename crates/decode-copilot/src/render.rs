//! How one event of the log (or one legacy timeline item) becomes notesoup events.

use history_core::{Event, Role, Timestamp};
use serde_json::{Map, Value};

// Every word this module adds to event text is in the raw bytes of the line it renders: a tool
// call's name comes from the line's `name`/`toolName`, so a raw prefilter can require it.

/// The events of one line, numbered by part as they are pushed.
pub(crate) struct Out<'a> {
    pub(crate) seq: u64,
    pub(crate) part: u32,
    pub(crate) timestamp: Option<Timestamp>,
    pub(crate) sink: &'a mut dyn FnMut(Event),
}

impl Out<'_> {
    pub(crate) fn push(&mut self, role: Role, kind: &str, text: String, tool: Option<&str>) {
        (self.sink)(Event {
            seq: self.seq,
            part: self.part,
            role,
            kind: kind.to_string(),
            timestamp: self.timestamp,
            text,
            visible: matches!(role, Role::User | Role::Assistant),
            tool: tool.map(str::to_string),
            on_active_branch: None,
        });
        self.part += 1;
    }
}

/// A string field.
pub(crate) fn str_field<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// A non-blank string field.
pub(crate) fn text_field<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    str_field(map, key).filter(|s| !s.trim().is_empty())
}

/// An object field.
pub(crate) fn object_field<'v>(
    map: &'v Map<String, Value>,
    key: &str,
) -> Option<&'v Map<String, Value>> {
    map.get(key).and_then(Value::as_object)
}

/// Who is speaking in an event: the main agent, or a sub-agent whose events are written inline
/// (they carry an `agentId`), which are the work of the `task` call that started it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaker {
    Main,
    Subagent,
}

/// `user.message`: what the person typed; what the harness injected as a user turn is context.
pub(crate) fn user_message(data: &Map<String, Value>, speaker: Speaker, out: &mut Out<'_>) {
    let source = str_field(data, "source").unwrap_or("");
    let content = text_field(data, "content");
    if speaker == Speaker::Subagent || source.starts_with("agent-") {
        if let Some(text) = content.or_else(|| text_field(data, "transformedContent")) {
            out.push(Role::Tool, "subagent_prompt", text.to_string(), None);
        }
        return;
    }
    let injected = data.get("isAutopilotContinuation") == Some(&Value::Bool(true))
        || source.starts_with("skill-")
        || content.is_none();
    if injected {
        let text = text_field(data, "transformedContent").or(content);
        if let Some(text) = text {
            out.push(Role::Context, "meta", text.to_string(), None);
        }
        return;
    }
    if let Some(text) = content {
        out.push(Role::User, "message", text.to_string(), None);
    }
}

/// `assistant.message`: its reasoning, its text, then each tool it calls.
pub(crate) fn assistant_message(data: &Map<String, Value>, speaker: Speaker, out: &mut Out<'_>) {
    let (reasoning, message) = match speaker {
        Speaker::Main => ((Role::Assistant, "reasoning"), (Role::Assistant, "message")),
        Speaker::Subagent => (
            (Role::Tool, "subagent_reasoning"),
            (Role::Tool, "subagent_message"),
        ),
    };
    if let Some(text) = text_field(data, "reasoningText") {
        out.push(reasoning.0, reasoning.1, text.to_string(), None);
    }
    if let Some(text) = text_field(data, "content") {
        out.push(message.0, message.1, text.to_string(), None);
    }
    for request in tool_requests(data) {
        let name = str_field(request, "name").unwrap_or("");
        let text = call_text(name, request.get("arguments"));
        out.push(
            Role::Tool,
            "tool_call",
            text,
            Some(name).filter(|n| !n.is_empty()),
        );
    }
}

/// The `toolRequests` of an `assistant.message` that are objects.
pub(crate) fn tool_requests(
    data: &Map<String, Value>,
) -> impl Iterator<Item = &Map<String, Value>> {
    data.get("toolRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// `assistant.reasoning`.
pub(crate) fn reasoning(data: &Map<String, Value>, speaker: Speaker, out: &mut Out<'_>) {
    if let Some(text) = text_field(data, "content") {
        match speaker {
            Speaker::Main => out.push(Role::Assistant, "reasoning", text.to_string(), None),
            Speaker::Subagent => out.push(Role::Tool, "subagent_reasoning", text.to_string(), None),
        }
    }
}

/// A tool call that only a `tool.execution_start` or `tool.user_requested` records.
pub(crate) fn started_call(data: &Map<String, Value>, out: &mut Out<'_>) {
    let name = str_field(data, "toolName").unwrap_or("");
    let text = call_text(name, data.get("arguments"));
    out.push(
        Role::Tool,
        "tool_call",
        text,
        Some(name).filter(|n| !n.is_empty()),
    );
}

/// `tool.execution_complete`: the result, or the error; a shell command that exited non-zero
/// is an error too.
pub(crate) fn tool_result(data: &Map<String, Value>, tool: Option<&str>, out: &mut Out<'_>) {
    let result = object_field(data, "result");
    let error = data.get("error");
    let exit = object_field(data, "shellExecution")
        .and_then(|s| s.get("exitCode"))
        .and_then(Value::as_i64);
    let failed = data.get("success") == Some(&Value::Bool(false))
        || error.is_some_and(|e| !e.is_null())
        || exit.is_some_and(|code| code != 0);
    let kind = if failed { "tool_error" } else { "tool_output" };
    let mut texts = Vec::new();
    if let Some(result) = result {
        if let Some(text) =
            text_field(result, "content").or_else(|| text_field(result, "detailedContent"))
        {
            texts.push(text.to_string());
        }
    }
    match error {
        Some(Value::Object(e)) => {
            if let Some(message) = text_field(e, "message") {
                texts.push(message.to_string());
            }
        }
        Some(Value::String(message)) if !message.trim().is_empty() => texts.push(message.clone()),
        _ => {}
    }
    if !texts.is_empty() {
        out.push(Role::Tool, kind, texts.join("\n"), tool);
    }
}

/// A tool call as text: its name and its main argument (`bash: ls`, `view: /src/lib.rs`),
/// then the other arguments as compact JSON on a line of their own (an edit's strings, a new
/// file's text), so that every input is searchable; arguments without a main one are all JSON.
pub(crate) fn call_text(name: &str, arguments: Option<&Value>) -> String {
    let parsed;
    let arguments = match arguments {
        // Some providers hand arguments over as a JSON string.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => {
                parsed = v;
                Some(&parsed)
            }
            _ => arguments,
        },
        other => other,
    };
    let detail = match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(args)) => match main_argument(args) {
            Some((main, used)) => {
                let rest: Map<String, Value> = args
                    .iter()
                    .filter(|(k, _)| !used.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if rest.is_empty() {
                    main
                } else {
                    format!("{main}\n{}", Value::Object(rest))
                }
            }
            None => Value::Object(args.clone()).to_string(),
        },
        Some(other) => other.to_string(),
    };
    match (name.is_empty(), detail.is_empty()) {
        (_, true) => name.to_string(),
        (true, false) => detail,
        (false, false) => format!("{name}: {detail}"),
    }
}

/// The one argument that says what a call does, when it has one, and the keys it was made of:
/// a command (with the path it works on, as `str_replace_editor` has them), a path, a pattern,
/// a query, a URL, an intent, a task's description and prompt.
fn main_argument(args: &Map<String, Value>) -> Option<(String, Vec<&'static str>)> {
    let get = |key: &str| text_field(args, key);
    if let Some(command) = get("command") {
        return Some(match get("path") {
            Some(path) => (format!("{command} {path}"), vec!["command", "path"]),
            None => (command.to_string(), vec!["command"]),
        });
    }
    for key in ["path", "pattern", "query", "url", "intent"] {
        if let Some(value) = get(key) {
            return Some((value.to_string(), vec![key]));
        }
    }
    if let Some(prompt) = get("prompt") {
        return Some(match get("description") {
            Some(description) => (
                format!("{description}\n{prompt}"),
                vec!["description", "prompt"],
            ),
            None => (prompt.to_string(), vec!["prompt"]),
        });
    }
    None
}

/// A legacy timeline item: `user`, `copilot`, `info`, `error`/`warning`, `tool_call_completed`.
pub(crate) fn timeline_item(item: &Map<String, Value>, out: &mut Out<'_>) {
    let text = text_field(item, "text");
    match str_field(item, "type").unwrap_or("") {
        "user" => {
            if let Some(text) = text {
                out.push(Role::User, "message", text.to_string(), None);
            }
        }
        "copilot" => {
            if let Some(text) = text {
                out.push(Role::Assistant, "message", text.to_string(), None);
            }
        }
        "error" => {
            if let Some(text) = text {
                out.push(Role::Context, "error", text.to_string(), None);
            }
        }
        "tool_call_completed" | "tool_call_requested" => legacy_call(item, out),
        _ => {
            if let Some(text) = text {
                out.push(Role::Context, "meta", text.to_string(), None);
            }
        }
    }
}

/// A legacy tool call item: the call, then its result (`result.log`; an error unless
/// `result.type` is `success`).
fn legacy_call(item: &Map<String, Value>, out: &mut Out<'_>) {
    let name = str_field(item, "name").unwrap_or("");
    let tool = Some(name).filter(|n| !n.is_empty());
    out.push(
        Role::Tool,
        "tool_call",
        call_text(name, item.get("arguments")),
        tool,
    );
    let Some(result) = item.get("result") else {
        return;
    };
    let (text, failed) = match result {
        Value::Object(r) => {
            let failed = str_field(r, "type").is_some_and(|t| t != "success");
            let text = text_field(r, "log")
                .map(str::to_string)
                .or_else(|| text_field(r, "error").map(str::to_string))
                .or_else(|| {
                    object_field(r, "error")
                        .and_then(|e| text_field(e, "message"))
                        .map(str::to_string)
                });
            (text, failed)
        }
        Value::String(s) if !s.trim().is_empty() => (Some(s.clone()), false),
        _ => (None, false),
    };
    if let Some(text) = text {
        let kind = if failed { "tool_error" } else { "tool_output" };
        out.push(Role::Tool, kind, text, tool);
    }
}
