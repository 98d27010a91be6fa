//! One transcript line: what it is in the graph, and the events it yields.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use history_core::{Event, Role, SessionMeta, Timestamp};

use crate::graph::{Graph, Kept, Link, NodeKind};

mod skim;
use crate::render::{self, ToolNames};

/// The fields of a line this decoder reads; everything else is skipped unparsed.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    logical_parent_uuid: Option<String>,
    is_sidechain: bool,
    is_meta: bool,
    is_compact_summary: bool,
    team_name: Option<Value>,
    timestamp: Option<String>,
    message: Option<Message>,
    subtype: Option<String>,
    content: Option<Value>,
    attachment: Option<Value>,
    summary: Option<Value>,
    custom_title: Option<Value>,
    ai_title: Option<Value>,
    cwd: Option<String>,
    git_branch: Option<String>,
    compact_metadata: Option<Value>,
    hook_additional_context: Option<Value>,
    origin: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Message {
    id: Option<String>,
    content: Option<Value>,
}

/// A line read for its place in the graph alone: the same structural fields as [`Line`], with
/// every text skipped by serde_json's fast scan. It accepts every line [`Line`] accepts, and a
/// few more (an out-of-range number or deep nesting inside a text field), which the decoder
/// then places in the graph without events whichever way it reads them.
#[derive(Deserialize, Default, Debug, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct GraphLine {
    #[serde(rename = "type")]
    kind: Option<String>,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    logical_parent_uuid: Option<String>,
    is_sidechain: bool,
    // Read only so that a line of the wrong shape here is refused as [`Line`] refuses it.
    #[serde(rename = "isMeta")]
    _is_meta: bool,
    #[serde(rename = "isCompactSummary")]
    _is_compact_summary: bool,
    team_name: Option<IgnoredAny>,
    #[serde(rename = "timestamp")]
    _timestamp: Option<String>,
    message: Option<GraphMessage>,
    #[serde(rename = "subtype")]
    _subtype: Option<String>,
    #[serde(rename = "content")]
    _content: Option<IgnoredAny>,
    #[serde(rename = "attachment")]
    _attachment: Option<IgnoredAny>,
    summary: Option<Value>,
    custom_title: Option<Value>,
    ai_title: Option<Value>,
    cwd: Option<String>,
    git_branch: Option<String>,
    compact_metadata: Option<Value>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
#[serde(default)]
struct GraphMessage {
    id: Option<String>,
    content: Blocks,
}

/// The tool ids and names of a message's content blocks; a string content has none.
#[derive(Default, Debug, PartialEq)]
struct Blocks(Vec<BlockIds>);

/// A content block's type, ids and tool name; every other field is checked and dropped, and a
/// repeated key counts with its last value, as in a `Value`.
#[derive(Default, Debug, PartialEq)]
struct BlockIds {
    kind: ValueAsStr,
    id: ValueAsStr,
    name: ValueAsStr,
    tool_use_id: ValueAsStr,
}

impl BlockIds {
    fn read<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<BlockIds, A::Error> {
        let mut ids = BlockIds::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => ids.kind = map.next_value()?,
                "id" => ids.id = map.next_value()?,
                "name" => ids.name = map.next_value()?,
                "tool_use_id" => ids.tool_use_id = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ids)
    }
}

/// A string, or nothing for any other JSON value (as `Value::as_str` reads it).
#[derive(Default, Debug, PartialEq)]
struct ValueAsStr(Option<String>);

impl<'de> Deserialize<'de> for ValueAsStr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ValueAsStr(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            _ => None,
        }))
    }
}

/// Visitor methods that take any scalar as the value `$empty`.
macro_rules! scalars_are {
    ($value:ty, $empty:expr) => {
        fn visit_str<E>(self, _: &str) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_bool<E>(self, _: bool) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_unit<E>(self) -> Result<$value, E> {
            Ok($empty)
        }
    };
}

impl<'de> Deserialize<'de> for Blocks {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Blocks;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Blocks, A::Error> {
                let mut out = Vec::new();
                while let Some(block) = seq.next_element::<BlockOrOther>()? {
                    out.extend(block.0);
                }
                Ok(Blocks(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Blocks, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Blocks::default())
            }
            scalars_are!(Blocks, Blocks::default());
        }
        d.deserialize_any(Visit)
    }
}

/// A content block's ids if it is an object; nothing otherwise.
struct BlockOrOther(Option<BlockIds>);

impl<'de> Deserialize<'de> for BlockOrOther {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = BlockOrOther;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<BlockOrOther, A::Error> {
                BlockIds::read(map).map(|ids| BlockOrOther(Some(ids)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<BlockOrOther, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(BlockOrOther(None))
            }
            scalars_are!(BlockOrOther, BlockOrOther(None));
        }
        d.deserialize_any(Visit)
    }
}

/// Title, summary, working directory and git branch, as the file's lines leave them.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Titles {
    custom: Option<String>,
    ai: Option<String>,
    summary: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
}

/// What a line says of its session's place: its `cwd` and `gitBranch`.
pub(crate) struct Place<'a> {
    cwd: &'a Option<String>,
    git_branch: &'a Option<String>,
}

impl Titles {
    /// Takes what a line says of the session (a title line's title, the first working
    /// directory, the latest git branch); for a line of the graph, returns its type and uuid.
    fn take_in<'a>(
        &mut self,
        kind: Option<&'a str>,
        uuid: Option<&'a str>,
        place: Place<'_>,
        [summary, custom, ai]: [Option<Value>; 3],
    ) -> Option<(&'a str, &'a str)> {
        let kind = kind?;
        match kind {
            "summary" => set(&mut self.summary, summary),
            "custom-title" => set(&mut self.custom, custom),
            "ai-title" => set(&mut self.ai, ai),
            "user" | "assistant" | "system" | "attachment" | "progress" => {
                let uuid = uuid?;
                if self.cwd.is_none() {
                    self.cwd.clone_from(place.cwd);
                }
                // A session can move to another branch (to open a pull request, say): the
                // latest is the one its work ended on. `""` is written outside a repository.
                if let Some(branch) = place.git_branch.as_ref().filter(|b| !b.is_empty()) {
                    self.git_branch = Some(branch.clone());
                }
                return Some((kind, uuid));
            }
            _ => {}
        }
        None
    }

    pub(crate) fn into_meta(self) -> SessionMeta {
        SessionMeta {
            title: self.custom.or(self.ai),
            summary: self.summary,
            cwd: self.cwd,
            git_branch: self.git_branch,
            ..SessionMeta::default()
        }
    }
}

/// Emits one line's events and records it in the graph.
pub(crate) fn decode(
    seq: u64,
    mut line: Line,
    graph: &mut Graph,
    titles: &mut Titles,
    tools: &mut ToolNames,
    sink: &mut dyn FnMut(Event),
) {
    let Some((kind, uuid)) = titles.take_in(
        line.kind.as_deref(),
        line.uuid.as_deref(),
        Place {
            cwd: &line.cwd,
            git_branch: &line.git_branch,
        },
        [
            line.summary.take(),
            line.custom_title.take(),
            line.ai_title.take(),
        ],
    ) else {
        return;
    };
    let node_kind = node_kind(kind);
    // Sidechain lines (old inline subagents) and teammates' lines are not this session's dialogue.
    let foreign = line.is_sidechain || line.team_name.is_some();
    let mut out = Emitter {
        seq,
        part: 0,
        timestamp: line.timestamp.as_deref().and_then(Timestamp::parse_rfc3339),
        sink,
        tool_uses: Vec::new(),
        tool_results: Vec::new(),
    };
    if !foreign {
        match kind {
            "user" => user(&line, tools, &mut out),
            "assistant" => assistant(&line, tools, &mut out),
            "system" => system(&line, &mut out),
            "attachment" => attachment(&line, &mut out),
            _ => {}
        }
    }
    let response = match kind {
        "assistant" => line.message.as_ref().and_then(|m| m.id.clone()),
        _ => None,
    };
    graph.add(
        uuid,
        Link {
            seq,
            parent: line.parent_uuid.as_deref(),
            logical: line.logical_parent_uuid.as_deref(),
            kind: node_kind,
            foreign,
            response,
            tool_uses: out.tool_uses,
            tool_results: out.tool_results,
            kept: Kept::of(kind, line.compact_metadata.as_ref()),
        },
    );
}

/// Records a line in the graph (and its tool names and titles) without emitting its events:
/// what [`decode`] does, minus the events.
pub(crate) fn place_in_graph(
    seq: u64,
    mut line: GraphLine,
    graph: &mut Graph,
    titles: &mut Titles,
    tools: &mut ToolNames,
) {
    let Some((kind, uuid)) = titles.take_in(
        line.kind.as_deref(),
        line.uuid.as_deref(),
        Place {
            cwd: &line.cwd,
            git_branch: &line.git_branch,
        },
        [
            line.summary.take(),
            line.custom_title.take(),
            line.ai_title.take(),
        ],
    ) else {
        return;
    };
    let foreign = line.is_sidechain || line.team_name.is_some();
    let mut tool_uses = Vec::new();
    let mut tool_results = Vec::new();
    let (response, blocks) = match line.message {
        Some(m) => (m.id, m.content.0),
        None => (None, Vec::new()),
    };
    if !foreign {
        for b in blocks {
            match (kind, b.kind.0.as_deref()) {
                ("user", Some("tool_result")) => tool_results.extend(b.tool_use_id.0),
                ("assistant", Some("tool_use" | "server_tool_use" | "mcp_tool_use")) => {
                    if let Some(id) = b.id.0 {
                        tools.insert(&id, b.name.0.as_deref().unwrap_or("tool"));
                        tool_uses.push(id);
                    }
                }
                _ => {}
            }
        }
    }
    graph.add(
        uuid,
        Link {
            seq,
            parent: line.parent_uuid.as_deref(),
            logical: line.logical_parent_uuid.as_deref(),
            kind: node_kind(kind),
            foreign,
            response: (kind == "assistant").then_some(response).flatten(),
            tool_uses,
            tool_results,
            kept: Kept::of(kind, line.compact_metadata.as_ref()),
        },
    );
}

fn node_kind(kind: &str) -> NodeKind {
    match kind {
        "attachment" | "progress" => NodeKind::Aside,
        "user" | "assistant" => NodeKind::Message,
        _ => NodeKind::Other,
    }
}

fn set(slot: &mut Option<String>, value: Option<Value>) {
    if let Some(Value::String(s)) = value {
        if !s.is_empty() {
            *slot = Some(s);
        }
    }
}

struct Emitter<'a> {
    seq: u64,
    part: u32,
    timestamp: Option<Timestamp>,
    sink: &'a mut dyn FnMut(Event),
    tool_uses: Vec<String>,
    tool_results: Vec<String>,
}

impl Emitter<'_> {
    fn emit(&mut self, role: Role, kind: &str, text: String, tool: Option<String>) {
        let visible = matches!(role, Role::User | Role::Assistant);
        (self.sink)(Event {
            seq: self.seq,
            part: self.part,
            role,
            kind: kind.to_string(),
            timestamp: self.timestamp,
            text,
            visible,
            tool,
            on_active_branch: None,
        });
        self.part += 1;
    }
}

/// Strings a user line carries that no person typed: command envelopes, caveats, reminders.
const INJECTED_PREFIXES: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<session-start-hook>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated",
];

fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// What a user line's text is: who put it there, its kind, and its text as shown.
fn said(line: &Line, text: &str) -> (Role, &'static str, String) {
    match typed(line, text) {
        (Role::User, _) if is_injected(text) => match typed_command(text) {
            Some((kind, command)) => (Role::User, kind, command),
            None => (Role::Context, "meta", text.to_string()),
        },
        (role, kind) => (role, kind, text.to_string()),
    }
}

/// A command the person typed, its kind and its text: a slash command (`command`), or a shell
/// command run with `!` in bash mode (`shell`, its text as the envelope holds it, without the
/// `!`, so that every word of it is in the line).
fn typed_command(text: &str) -> Option<(&'static str, String)> {
    if let Some(command) = slash_command(text) {
        return Some(("command", command));
    }
    let t = text.trim();
    let command = t
        .strip_prefix("<bash-input>")?
        .strip_suffix("</bash-input>")?;
    (!command.trim().is_empty()).then(|| ("shell", command.to_string()))
}

/// The slash command a command envelope holds, as the person typed it (`/model opus`): the
/// envelope is `<command-name>`, `<command-message>` and `<command-args>` in any order.
fn slash_command(text: &str) -> Option<String> {
    let inner = |tag: &str| {
        let open = format!("<{tag}>");
        let start = text.find(&open)? + open.len();
        let end = start + text[start..].find(&format!("</{tag}>"))?;
        Some(text[start..end].trim())
    };
    let t = text.trim_start();
    if !(t.starts_with("<command-name>") || t.starts_with("<command-message>")) {
        return None;
    }
    let name = inner("command-name").filter(|n| !n.is_empty())?;
    Some(match inner("command-args").filter(|a| !a.is_empty()) {
        Some(args) => format!("{name} {args}"),
        None => name.to_string(),
    })
}

/// Whether text on a line is what a person typed, and its kind; a command envelope counts as
/// typed here, [`said`] tells it apart.
fn typed(line: &Line, text: &str) -> (Role, &'static str) {
    // A user line another agent or a task sent (2.1.232+): the harness put it in the
    // conversation, the person did not type it.
    let sent = line
        .origin
        .as_ref()
        .and_then(|o| o.get("kind")?.as_str())
        .is_some_and(|kind| matches!(kind, "peer" | "task-notification"));
    if line.is_compact_summary {
        (Role::Context, "summary")
    } else if line.is_meta || (is_injected(text) && typed_command(text).is_none()) {
        (Role::Context, "meta")
    } else if sent {
        (Role::Context, "message")
    } else {
        (Role::User, "message")
    }
}

fn user(line: &Line, tools: &mut ToolNames, out: &mut Emitter<'_>) {
    let Some(content) = line.message.as_ref().and_then(|m| m.content.as_ref()) else {
        return;
    };
    match content {
        Value::String(text) => {
            let (role, kind, text) = said(line, text);
            out.emit(role, kind, text, None);
        }
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => {
                        let id = block.get("tool_use_id").and_then(Value::as_str);
                        let name = id.and_then(|id| tools.name(id));
                        let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                        let text = render::result_text(block.get("content"));
                        if let Some(id) = id {
                            out.tool_results.push(id.to_string());
                        }
                        let kind = if failed { "tool_error" } else { "tool_output" };
                        out.emit(Role::Tool, kind, text, name);
                    }
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        let (role, kind, text) = said(line, text);
                        out.emit(role, kind, text, None);
                    }
                    Some(other) => {
                        let (role, kind) = typed(line, "");
                        out.emit(role, kind, render::placeholder(other), None);
                    }
                    None => {}
                }
            }
        }
        _ => {}
    }
}

fn assistant(line: &Line, tools: &mut ToolNames, out: &mut Emitter<'_>) {
    let Some(content) = line.message.as_ref().and_then(|m| m.content.as_ref()) else {
        return;
    };
    let blocks = match content {
        Value::String(text) => {
            out.emit(Role::Assistant, "message", text.clone(), None);
            return;
        }
        Value::Array(blocks) => blocks,
        _ => return,
    };
    for block in blocks {
        let str_field = |k: &str| block.get(k).and_then(Value::as_str);
        match str_field("type") {
            Some("text") => out.emit(
                Role::Assistant,
                "message",
                str_field("text").unwrap_or("").into(),
                None,
            ),
            // Newer versions write a thinking block's signature and leave its text out: an
            // empty reasoning item would only stand in the dialogue's way.
            Some("thinking") => match str_field("thinking") {
                Some("") => {}
                text => out.emit(
                    Role::Assistant,
                    "reasoning",
                    text.unwrap_or("").into(),
                    None,
                ),
            },
            Some("redacted_thinking") => out.emit(
                Role::Assistant,
                "reasoning",
                "[redacted thinking]".into(),
                None,
            ),
            Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
                let name = str_field("name").unwrap_or("tool").to_string();
                if let Some(id) = str_field("id") {
                    tools.insert(id, &name);
                    out.tool_uses.push(id.to_string());
                }
                let text = render::tool_call(&name, block.get("input"));
                out.emit(Role::Tool, "tool_call", text, Some(name));
            }
            Some(other) if other.ends_with("_tool_result") => {
                let name = str_field("tool_use_id").and_then(|id| tools.name(id));
                let text = render::result_text(block.get("content"));
                out.emit(Role::Tool, "tool_output", text, name);
            }
            Some(other) => out.emit(Role::Assistant, "message", render::placeholder(other), None),
            None => {}
        }
    }
}

fn system(line: &Line, out: &mut Emitter<'_>) {
    // What hooks added to the conversation (`stop_hook_summary`'s `hookAdditionalContext`).
    let added = render::result_text(line.hook_additional_context.as_ref());
    let text = match &line.content {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ if !added.is_empty() => added,
        _ => return,
    };
    let kind = match line.subtype.as_deref() {
        Some("compact_boundary" | "microcompact_boundary") => "summary",
        // A slash command the person typed (2.1.x writes it here rather than as a user line);
        // its output is what the command printed, context.
        Some("local_command") if !line.is_meta => match slash_command(&text) {
            Some(command) => return out.emit(Role::User, "command", command, None),
            None => "meta",
        },
        _ => "meta",
    };
    out.emit(Role::Context, kind, text, None);
}

/// A queued prompt is typed text only in `prompt` mode: in `task-notification` mode (and any
/// other, or none) the harness queued it itself, as when a background task ends. A prompt
/// that says it came from elsewhere (an `origin` that is not a person, such as a message
/// another process posted, or `isMeta`) is not typed either.
fn queued(line: &Line, att: &Value, out: &mut Emitter<'_>) {
    let text = render::result_text(att.get("prompt"));
    let origin = att.pointer("/origin/kind").and_then(Value::as_str);
    let injected = origin.is_some_and(|o| o != "human")
        || att.get("isMeta").and_then(Value::as_bool) == Some(true);
    let (role, kind, text) = match att.get("commandMode").and_then(Value::as_str) {
        Some("prompt") if !injected => said(line, &text),
        _ => (Role::Context, "meta", text),
    };
    out.emit(role, kind, text, None);
}

fn attachment(line: &Line, out: &mut Emitter<'_>) {
    let Some(att) = &line.attachment else {
        return;
    };
    let field = |k: &str| att.get(k);
    match field("type").and_then(Value::as_str) {
        Some("queued_command") => queued(line, att, out),
        Some(kind) => {
            // What the harness put before the model: hook output, an edited file's snippet,
            // the bodies of invoked skills, a mentioned file's body one level down, a
            // reminder's text, and the text 2.1.232+ renders for an attachment (whatever role
            // it is rendered in, the harness wrote it).
            let file = att
                .pointer("/content/file/content")
                .filter(|_| kind == "file");
            let fields = [
                "content",
                "stdout",
                "stderr",
                "blockingError",
                "snippet",
                "skills",
                "text",
                "rendered",
            ];
            let text = file
                .into_iter()
                .chain(fields.iter().filter_map(|k| field(k)))
                .map(|v| render::result_text(Some(v)))
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            if !text.is_empty() {
                out.emit(Role::Context, "meta", text, None);
            }
        }
        None => {}
    }
}
