//! `notesoup-history mcp`: the two agent tools, `history_list` and `history_read`, served over
//! the Model Context Protocol on stdin/stdout (one JSON-RPC message per line).
//!
//! It is as thin as the rest of the command: a tool's arguments become the very
//! `ListRequest`/`ReadRequest` the flags would make, history-core answers with its page, and the
//! page is rendered twice, as the CLI's text and as its JSON, both inside the one result that the
//! budget measures. Only protocol messages go to stdout; a request that fails, or a bug, is
//! answered with an error and the server reads on; the end of stdin ends it.
//!
//! A small synchronous loop over serde_json rather than the Rust SDK: a request is one core call
//! on one thread, so an async runtime would only add start-up time and dependencies to a binary
//! that is otherwise one cold process.

use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use history_core::{FindPage, FoundHit, FoundSession, ListPage, ReadPage, Render, RenderFind};
use history_core::{History, HistoryError};

use crate::args::{FindArgs, FromArg, ListArgs, ReadArgs};
use crate::render::{Json, Printer, Text};

/// The protocol revisions served through `initialize`, oldest first.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The revision from which a tool result may carry `structuredContent`.
const STRUCTURED_SINCE: &str = "2025-06-18";

/// How long a search waits, after it started a background index update, before it may start
/// another (the update's own lock keeps them to one at a time anyway).
const INDEX_EVERY: Duration = Duration::from_secs(60);

/// What the server answers from.
pub struct Backend<'a> {
    /// A history to answer one request with; `true`: for a search, with the search index.
    pub history: &'a dyn Fn(bool) -> Result<History, HistoryError>,
    /// Whether a search that read sessions the index does not hold should update it.
    pub wants_index: &'a dyn Fn(Option<&history_core::Coverage>) -> bool,
    /// Starts the background index update.
    pub start_index: &'a dyn Fn(),
    /// The budget of one whole response, in bytes.
    pub budget: usize,
    /// The text that answers carry: the CLI's plain text, its recipes command lines that repeat
    /// the roots the server was given.
    pub text: &'a Text,
}

/// Serves requests from `input` until it ends, writing responses to `output`.
pub fn serve(backend: &Backend<'_>, input: &mut dyn BufRead, output: &mut dyn Write) {
    let mut server = Server::new(backend);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Some(reply) = server.handle(&line) {
            let sent = output
                .write_all(reply.as_bytes())
                .and_then(|_| output.write_all(b"\n"))
                .and_then(|_| output.flush());
            if sent.is_err() {
                return;
            }
        }
    }
}

/// One connection's state: the negotiated revision.
pub struct Server<'a> {
    backend: &'a Backend<'a>,
    version: Option<&'static str>,
    indexed_at: Option<Instant>,
}

/// A JSON-RPC error: code and message.
type RpcError = (i64, String);

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

impl<'a> Server<'a> {
    /// A connection that has not been initialized yet.
    pub fn new(backend: &'a Backend<'a>) -> Server<'a> {
        Server {
            backend,
            version: None,
            indexed_at: None,
        }
    }

    /// The response to one line of input (a message or a batch), if it needs one.
    pub fn handle(&mut self, line: &[u8]) -> Option<String> {
        let message: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                return Some(error(
                    &Value::Null,
                    (PARSE_ERROR, format!("parse error: {e}")),
                ))
            }
        };
        match message {
            Value::Array(batch) if batch.is_empty() => Some(error(
                &Value::Null,
                (INVALID_REQUEST, "an empty batch".into()),
            )),
            Value::Array(batch) => {
                let replies: Vec<String> = batch.iter().filter_map(|m| self.message(m)).collect();
                (!replies.is_empty()).then(|| format!("[{}]", replies.join(",")))
            }
            message => self.message(&message),
        }
    }

    /// The response to one message: `None` for notifications and for responses (the server
    /// sends no requests, so there are none to match).
    fn message(&mut self, message: &Value) -> Option<String> {
        let Some(object) = message.as_object() else {
            return Some(error(
                &Value::Null,
                (INVALID_REQUEST, "a message must be a JSON object".into()),
            ));
        };
        let id = object.get("id");
        let method = object.get("method");
        if method.is_none() && (object.contains_key("result") || object.contains_key("error")) {
            return None;
        }
        let Some(id) = id else {
            // A notification (`notifications/initialized`, `notifications/cancelled`, …): each
            // request is answered before the next is read, so there is nothing to act on.
            return None;
        };
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Some(error(
                &Value::Null,
                (
                    INVALID_REQUEST,
                    "the id must be a string or an integer".into(),
                ),
            ));
        }
        let Some(method) = method.and_then(Value::as_str) else {
            return Some(error(
                id,
                (INVALID_REQUEST, "the method must be a string".into()),
            ));
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error(
                id,
                (INVALID_REQUEST, "jsonrpc must be \"2.0\"".into()),
            ));
        }
        let params = match object.get("params") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                return Some(error(
                    id,
                    (INVALID_PARAMS, "params must be an object".into()),
                ))
            }
        };
        let answer = catch_unwind(AssertUnwindSafe(|| self.request(method, &params, id)))
            .unwrap_or_else(|_| Err((INTERNAL_ERROR, "internal error, please report it".into())));
        Some(match answer {
            Ok(result) => format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{result}}}",
                compact(id)
            ),
            Err(e) => error(id, e),
        })
    }

    /// The result of one request, as JSON text.
    fn request(
        &mut self,
        method: &str,
        params: &Map<String, Value>,
        id: &Value,
    ) -> Result<String, RpcError> {
        match method {
            "initialize" => Ok(compact(&self.initialize(params))),
            "ping" => Ok("{}".into()),
            "tools/list" => Ok(compact(&json!({ "tools": tools() }))),
            "tools/call" => self.call(params, id),
            _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    fn initialize(&mut self, params: &Map<String, Value>) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        // The client's revision when it is one of ours, else our newest: the client decides
        // whether it can speak that.
        let version = PROTOCOL_VERSIONS
            .into_iter()
            .find(|v| Some(*v) == asked)
            .unwrap_or(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]);
        self.version = Some(version);
        json!({
            "protocolVersion": version,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": {
                "name": "notesoup-history",
                "title": "notesoup-history",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": INSTRUCTIONS,
        })
    }

    fn structured(&self) -> bool {
        self.version.is_none_or(|v| v >= STRUCTURED_SINCE)
    }

    fn call(&mut self, params: &Map<String, Value>, id: &Value) -> Result<String, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((INVALID_PARAMS, "tools/call needs the tool's name".into()))?;
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return Err((INVALID_PARAMS, "arguments must be an object".into())),
        };
        let render = Mcp {
            structured: self.structured(),
            text: self.backend.text,
        };
        // The page fits the budget that the response's frame leaves, its text sent twice.
        let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":}}", compact(id));
        let budget = history_core::budget::within_envelope(self.backend.budget, frame.len());
        let answer = match name {
            "history_list" => self.list(&arguments, budget, &render),
            "history_read" => self.read(&arguments, budget, &render),
            "history_find" => self.find(&arguments, budget, &render),
            _ => return Err((INVALID_PARAMS, format!("unknown tool: {name}"))),
        };
        Ok(answer.unwrap_or_else(|e| render.error(&e)))
    }

    fn list(
        &mut self,
        arguments: &Map<String, Value>,
        budget: usize,
        render: &Mcp<'_>,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, LIST_PARAMS)?;
        let list = ListArgs {
            session: args.string("session")?,
            queries: args.strings("query")?,
            roles: args.strings("roles")?,
            since: args.string("since")?,
            until: args.string("until")?,
            before_seq: args.number("before_seq")?,
            after_seq: args.number("after_seq")?,
            before: args.place("before")?,
            after: args.place("after")?,
            from: match args.string("from")?.as_deref() {
                None => None,
                Some("newest") => Some(FromArg::Newest),
                Some("oldest") => Some(FromArg::Oldest),
                Some(other) => {
                    return Err(HistoryError::usage(format!(
                        "from must be \"newest\" or \"oldest\", not {other:?}"
                    )))
                }
            },
            limit: args
                .number("limit")?
                .map_or(Ok(history_core::DEFAULT_LIMIT), usize::try_from)
                .map_err(|_| HistoryError::usage("limit is too large"))?,
            all_branches: false,
            cwd: args.string("cwd")?.map(Into::into),
            sessions: false,
            format: None,
            context: None,
        };
        let req = crate::request::list_request(&list, budget, &crate::request::Times::utc())?;
        let search = req.is_search();
        let page = (self.backend.history)(search)?.list(&req, render)?;
        self.index_if_stale(page.coverage.as_ref());
        Ok(render.list(&page))
    }

    /// Starts the background index update when a search read sessions the index lacks, at
    /// most once every [`INDEX_EVERY`].
    fn index_if_stale(&mut self, coverage: Option<&history_core::Coverage>) {
        if (self.backend.wants_index)(coverage)
            && self.indexed_at.is_none_or(|t| t.elapsed() >= INDEX_EVERY)
        {
            self.indexed_at = Some(Instant::now());
            (self.backend.start_index)();
        }
    }

    fn find(
        &mut self,
        arguments: &Map<String, Value>,
        budget: usize,
        render: &Mcp<'_>,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, FIND_PARAMS)?;
        let count = |name: &str, default: usize| -> Result<usize, HistoryError> {
            args.number(name)?
                .map_or(Ok(default), usize::try_from)
                .map_err(|_| HistoryError::usage(format!("{name} is too large")))
        };
        let find = FindArgs {
            text: vec![args
                .string("text")?
                .ok_or_else(|| HistoryError::usage("history_find needs text"))?],
            session: args.string("session")?,
            cwd: args.string("cwd")?.map(Into::into),
            roles: args.strings("roles")?,
            since: args.string("since")?,
            until: args.string("until")?,
            events: args.flag("events")?,
            explain: args.flag("explain")?,
            limit: count("limit", crate::args::FIND_LIMIT)?,
            after_rank: count("after_rank", 0)?,
            format: None,
        };
        if find.limit == 0 {
            return Err(HistoryError::usage("limit must be at least 1"));
        }
        let req = crate::request::find_request(&find, budget, &crate::request::Times::utc())?;
        let page = (self.backend.history)(true)?.find(&req, render)?;
        self.index_if_stale(Some(&page.coverage));
        Ok(render.find(&page))
    }

    fn read(
        &mut self,
        arguments: &Map<String, Value>,
        budget: usize,
        render: &Mcp<'_>,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, READ_PARAMS)?;
        let read = ReadArgs {
            session: args.string("session")?,
            seq: args
                .number("seq")?
                .ok_or_else(|| HistoryError::usage("history_read needs seq"))?,
            part: args
                .number("part")?
                .map_or(Ok(0), u32::try_from)
                .map_err(|_| HistoryError::usage("part is too large"))?,
            offset_chars: args
                .number("offset_chars")?
                .map_or(Ok(0), usize::try_from)
                .map_err(|_| HistoryError::usage("offset_chars is too large"))?,
        };
        let req = crate::request::read_request(&read, budget);
        let page = (self.backend.history)(false)?.read(&req, render)?;
        Ok(render.read(&page))
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn error(id: &Value, (code, message): RpcError) -> String {
    compact(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
}

/// A tool's arguments, checked against its parameter names.
struct Arguments<'a>(&'a Map<String, Value>);

const LIST_PARAMS: &[&str] = &[
    "session",
    "query",
    "roles",
    "since",
    "until",
    "before_seq",
    "after_seq",
    "before",
    "after",
    "from",
    "limit",
    "cwd",
];
const READ_PARAMS: &[&str] = &["session", "seq", "part", "offset_chars"];

const FIND_PARAMS: &[&str] = &[
    "text",
    "session",
    "roles",
    "since",
    "until",
    "cwd",
    "limit",
    "after_rank",
    "events",
    "explain",
];

impl<'a> Arguments<'a> {
    /// Refuses parameters the tool does not have, so that a misspelt one is not ignored.
    fn new(map: &'a Map<String, Value>, known: &[&str]) -> Result<Self, HistoryError> {
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(HistoryError::usage(format!(
                "unknown parameter {unknown:?} (the parameters are {})",
                known.join(", ")
            )));
        }
        Ok(Arguments(map))
    }

    /// A parameter's value; `null` counts as omitted.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    fn string(&self, name: &str) -> Result<Option<String>, HistoryError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(HistoryError::usage(format!(
                "{name} must be a string, not {other}"
            ))),
        }
    }

    /// A place of a search across sessions, as a recipe gives it (an object) or as the CLI
    /// writes it (a string), in the CLI's form.
    fn place(&self, name: &str) -> Result<Option<String>, HistoryError> {
        let Some(place @ Value::Object(_)) = self.get(name) else {
            return self.string(name);
        };
        match history_core::Cursor::from_json(place) {
            Some(cursor) => Ok(Some(cursor.to_string())),
            None => Err(HistoryError::usage(format!(
                "{name} must be a place as a recipe gives it: {{time, session, seq, part}}"
            ))),
        }
    }

    /// A string or a list of strings.
    fn strings(&self, name: &str) -> Result<Vec<String>, HistoryError> {
        let bad = |v: &Value| {
            HistoryError::usage(format!(
                "{name} must be a string or a list of strings, not {v}"
            ))
        };
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| bad(v)))
                .collect(),
            Some(other) => Err(bad(other)),
        }
    }

    /// A whole number of zero or more; also sent as a float with no fraction (`5.0`) or as a
    /// string of one (`"5"`), as some clients do.
    fn number(&self, name: &str) -> Result<Option<u64>, HistoryError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        whole(value).map(Some).ok_or_else(|| {
            HistoryError::usage(format!(
                "{name} must be a whole number of zero or more, not {value}"
            ))
        })
    }

    /// A yes or no; absent, no. Also sent as the string `"true"` or `"false"`, as some clients
    /// do.
    fn flag(&self, name: &str) -> Result<bool, HistoryError> {
        match self.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(value) => Err(HistoryError::usage(format!(
                "{name} must be true or false, not {value}"
            ))),
        }
    }
}

/// `value` as a whole number of zero or more, where it unambiguously is one.
fn whole(value: &Value) -> Option<u64> {
    let float = |f: f64| f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 2f64.powi(53);
    match value {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| float(*f)).map(|f| f as u64)),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<u64>().ok().or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .filter(|f| float(*f) && !s.contains(['e', 'E', 'n', 'N', 'i', 'I']))
                    .map(|f| f as u64)
            })
        }
        _ => None,
    }
}

/// The MCP rendering of a page: one tool result whose text content is the CLI's text and whose
/// structured content (from 2025-06-18 on) is the CLI's JSON with that text in a `text` field.
/// What it measures is what it sends, so the core fits the whole result to the budget.
pub struct Mcp<'a> {
    /// Whether the result carries `structuredContent`.
    pub structured: bool,
    /// The text printer.
    pub text: &'a Text,
}

/// A string's bytes inside a JSON string literal.
fn escaped(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

impl Mcp<'_> {
    fn result(&self, text: String, structured: Value, is_error: bool) -> String {
        let mut result = Map::new();
        result.insert("content".into(), json!([{ "type": "text", "text": text }]));
        if self.structured {
            let mut structured = structured;
            if let Some(object) = structured.as_object_mut() {
                object.insert("text".into(), Value::String(text));
            }
            result.insert("structuredContent".into(), structured);
        }
        result.insert("isError".into(), Value::Bool(is_error));
        compact(&Value::Object(result))
    }

    /// An error as a tool result: the CLI's line of text, and its JSON error object.
    pub fn error(&self, error: &HistoryError) -> String {
        let text = self.text.error(error).trim_end().to_string();
        let structured = serde_json::from_str(&Json.error(error)).unwrap_or(Value::Null);
        self.result(text, structured, true)
    }
}

impl Render for Mcp<'_> {
    fn item(&self, item: &history_core::Item, implicit: bool) -> String {
        let text = escaped(&self.text.item(item, implicit));
        if !self.structured {
            return text;
        }
        format!("{text}{text}{}", Json.item(item, implicit))
    }

    fn list(&self, page: &ListPage) -> String {
        let structured = serde_json::to_value(page).unwrap_or(Value::Null);
        self.result(self.text.list(page), structured, false)
    }

    fn read(&self, page: &ReadPage) -> String {
        let structured = serde_json::to_value(page).unwrap_or(Value::Null);
        self.result(self.text.read(page), structured, false)
    }
}

impl RenderFind for Mcp<'_> {
    fn found_session(&self, session: &FoundSession) -> String {
        let text = escaped(&self.text.found_session(session));
        if !self.structured {
            return text;
        }
        format!("{text}{text}{}", Json.found_session(session))
    }

    fn found_event(&self, hit: &FoundHit) -> String {
        let text = escaped(&self.text.found_event(hit));
        if !self.structured {
            return text;
        }
        format!("{text}{text}{}", Json.found_event(hit))
    }

    fn find(&self, page: &FindPage) -> String {
        let structured = serde_json::to_value(page).unwrap_or(Value::Null);
        self.result(self.text.find(page), structured, false)
    }
}

/// What `initialize` tells the client the server is for.
const INSTRUCTIONS: &str = "Read-only access to the local session transcripts of Claude Code, \
Codex and pi: history_list browses one session, searches many or shows the recent sessions; \
history_read shows one event in full; history_find ranks sessions by how well they match a \
description in plain words. Answers end with recipes: pass one back as the arguments \
of the next call to page, expand or continue.";

const LIST_DESCRIPTION: &str = "\
List, search or browse local AI coding-agent session transcripts (Claude Code, Codex, pi). \
Read-only.

session selects: omit it for your current session (or every session when none is known); an id \
or unique prefix, optionally qualified (claude:, codex:, pi:) for one session; anything with * \
for many (*, codex:*, claude:4f2*). Ambiguous prefixes fail with ambiguous_session and up to five \
candidates: pick one, never guess.

One session: a page of its dialogue, newest end first (oldest with after_seq); runs of tool and \
context events fold into one line whose expand recipe lists them. query or roles list matching \
events of every role instead.
Many sessions, no query: one representative event per recent session. With query: hits from \
every role (tool input/output and context too), merged by time; limit counts from the newest.

query is literal and case-insensitive; a list matches any. roles: user, assistant, tool, context. \
since (inclusive) and until (exclusive): RFC 3339, YYYY-MM-DD, today, yesterday or an age like 3h, 7d, 6mo, 1y.

seqs are per session: keep the session with its seq. To page, copy a returned recipe \
(→ older: {...}, → newer: {...}, expand: {...}) as the next call's arguments; before_seq and \
after_seq need one session, before and after continue a search of many. The whole answer fits 32 KiB: long texts are cut; read the event \
with history_read for all of it. Each item names its path, line, byte_offset, byte_len and the \
resume command of its session.";

const READ_DESCRIPTION: &str = "\
Read one event of a local AI coding-agent session (Claude Code, Codex, pi) in full: its role, \
kind, time, text, and for a tool call the tool and its input. Read-only.

session: an id or unique prefix, optionally qualified (claude:, codex:, pi:); omitted, your \
current session. A wildcard (*) is refused with invalid_session: take session and seq from a \
history_list item. seq is the event's number within that session (seqs of different sessions \
are unrelated); part picks one of several events on the same line (default 0).

A text too long for the 32 KiB answer is cut and next_offset_chars says where it stops: call \
again with the → continue: recipe (offset_chars set to it) for the rest. The → neighborhood: \
recipe is the history_list call that shows the events around it.";

const FIND_DESCRIPTION: &str = "\
Find the local AI coding-agent sessions (Claude Code, Codex, pi) where something happened, from \
a description in plain words, best first. Read-only.

Use it when you remember what happened but not the exact words: \"where we made CI stop \
flaking on the login test\", \"deciding how to paginate the API\". Words match as words: \
case-folded, stemmed (flaking finds flaky), code identifiers whole and by their parts \
(flakyLoginTest, login_test, a/b/c); rare words count more, what the user typed more than \
replies and replies more than tool output, words together more than apart. Use history_list \
instead for an exact string (query), a time range or browsing.

Each session comes with its score, title or first prompt, directory, branch, its best hits as \
snippets, and recipes: read (history_read arguments for a hit), list (history_list arguments for \
the session's hits), resume (the command that reopens it). events: true ranks events instead. \
session, cwd, roles, since, until narrow the scope as in history_list. For the next page, pass \
the more recipe back as the arguments (it carries after_rank). explain: true adds each word's \
part of each score.";

/// The tools, as `tools/list` describes them.
pub fn tools() -> Value {
    let read_only = json!({
        "readOnlyHint": true,
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
    });
    let session = |what: &str| json!({ "type": "string", "description": what });
    let seq = |what: &str| json!({ "type": "integer", "minimum": 0, "description": what });
    json!([
        {
            "name": "history_list",
            "title": "List, search or browse agent sessions",
            "description": LIST_DESCRIPTION,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "session": session("Selector: omitted = current session (else *); id or unique prefix, optionally claude:/codex:/pi:-qualified, or a transcript file's path; * patterns select many."),
                    "query": {
                        "description": "Literal, case-insensitive text; a list matches any of them.",
                        "anyOf": [
                            { "type": "string" },
                            { "type": "array", "items": { "type": "string" } }
                        ]
                    },
                    "roles": {
                        "type": "array",
                        "description": "Only events of these roles.",
                        "items": { "type": "string", "enum": ["user", "assistant", "tool", "context"] }
                    },
                    "since": { "type": "string", "description": "Only events at or after: RFC 3339, YYYY-MM-DD, or an age (7d, 3h, 30m)." },
                    "until": { "type": "string", "description": "Only events before: RFC 3339, YYYY-MM-DD, or an age." },
                    "before_seq": seq("One session: only events with a smaller seq (from an older recipe)."),
                    "after_seq": seq("One session: only events with a larger seq (from a newer or expand recipe)."),
                    "before": { "type": "object", "description": "Many sessions: only hits before this place (from an older recipe)." },
                    "after": { "type": "object", "description": "Many sessions: only hits after this place (from a newer recipe)." },
                    "from": { "type": "string", "enum": ["newest", "oldest"], "description": "The end the page starts from." },
                    "limit": { "type": "integer", "minimum": 1, "default": history_core::DEFAULT_LIMIT, "description": "Items at most; folded runs do not count." },
                    "cwd": { "type": "string", "description": "Only sessions that ran in this directory or below it." }
                },
                "additionalProperties": false
            },
            "annotations": read_only,
        },
        {
            "name": "history_find",
            "title": "Find sessions by what happened, in plain words",
            "description": FIND_DESCRIPTION,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": { "type": "string", "description": "What happened, in plain words (any order)." },
                    "session": session("Only these sessions: id, prefix, * pattern (claude:*) or a transcript file's path. Default: every session."),
                    "roles": {
                        "type": "array",
                        "description": "Only events of these roles.",
                        "items": { "type": "string", "enum": ["user", "assistant", "tool", "context"] }
                    },
                    "since": { "type": "string", "description": "Only events at or after: RFC 3339, YYYY-MM-DD, or an age (7d, 3h, 30m)." },
                    "until": { "type": "string", "description": "Only events before: RFC 3339, YYYY-MM-DD, or an age." },
                    "cwd": { "type": "string", "description": "Only sessions that ran in this directory or below it." },
                    "limit": { "type": "integer", "minimum": 1, "default": crate::args::FIND_LIMIT, "description": "Entries at most." },
                    "after_rank": { "type": "integer", "minimum": 0, "default": 0, "description": "Only entries ranked after this one (from a more recipe)." },
                    "events": { "type": "boolean", "default": false, "description": "Rank events rather than sessions." },
                    "explain": { "type": "boolean", "default": false, "description": "Add each word's part of each score." }
                },
                "required": ["text"],
                "additionalProperties": false
            },
            "annotations": read_only,
        },
        {
            "name": "history_read",
            "title": "Read one session event in full",
            "description": READ_DESCRIPTION,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "session": session("One session: id or unique prefix, optionally claude:/codex:/pi:-qualified, or a transcript file's path; omitted = current session. No wildcards."),
                    "seq": seq("The event's seq within that session."),
                    "part": { "type": "integer", "minimum": 0, "default": 0, "description": "Which event of the line (several can share a seq)." },
                    "offset_chars": { "type": "integer", "minimum": 0, "default": 0, "description": "Start this many characters in (next_offset_chars of a cut read)." }
                },
                "required": ["seq"],
                "additionalProperties": false
            },
            "annotations": read_only,
        }
    ])
}
