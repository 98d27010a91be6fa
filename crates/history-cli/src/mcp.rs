//! `notesoup-history mcp`: the two agent tools, `history_list` and `history_read`, served over
//! the Model Context Protocol on stdin/stdout (one JSON-RPC message per line).
//!
//! It is as thin as the rest of the command: a tool's arguments become the very
//! `ListRequest`/`ReadRequest` the flags would make, history-core answers with its page, and the
//! page is rendered once, inside the one result that the budget measures: as structured content
//! for the clients that show a model that part ([`Content::Structured`]: Claude Code, Codex),
//! else as text ([`Content::Text`]). Either way an item carries what a model goes on (session,
//! seq, part, role, time, text), what belongs to its session once per session, and recipes are
//! the tool calls to make next. Only protocol messages go to stdout; a request that fails, or a bug, is
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
use history_core::{History, HistoryError, RenderSessions, SessionMatch, SessionsPage};

use crate::args::{FindArgs, FromArg, ListArgs, ReadArgs};
use crate::render::{Json, Printer, Text};

/// The protocol revisions served through `initialize`, oldest first.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The revision from which a tool result may carry `structuredContent`.
const STRUCTURED_SINCE: &str = "2025-06-18";

/// How long a search waits, after it started a background index update, before it may start
/// another (the update's own lock keeps them to one at a time anyway).
const INDEX_EVERY: Duration = Duration::from_secs(60);

/// How a tool result carries its page, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// As the text content: the rendered page, its recipes tool calls. What every client shows
    /// a model when there is no structured content; the only form before 2025-06-18, and the
    /// one for clients that show the text first (pi's adapter) or are not known.
    Text,
    /// As the structured content, the text content one line that says so: for the clients that
    /// show a model only the structured content when there is one (Claude Code, Codex).
    Structured,
}

impl Content {
    /// The form `NOTESOUP_MCP_CONTENT` names: `text` or `structured`.
    pub fn named(name: &str) -> Option<Content> {
        match name.trim() {
            "text" => Some(Content::Text),
            "structured" => Some(Content::Structured),
            _ => None,
        }
    }

    /// The form for a client, by the name it gives itself in `initialize`: those whose source
    /// shows a model the structured content alone when a result has one (Claude Code's
    /// `claude-code`, Codex's `codex-mcp-client`) get it; every other client gets the text,
    /// which every client shows.
    pub fn for_client(name: Option<&str>) -> Content {
        match name {
            Some(n) if n == "claude-code" || n.starts_with("codex") => Content::Structured,
            _ => Content::Text,
        }
    }
}

/// How a request consults the search index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consult {
    /// A search.
    Search,
    /// A page of a large session or one of its events: opened only when one asks it.
    WhenAsked,
}

impl Consult {
    /// [`Consult::Search`] for a search, else [`Consult::WhenAsked`].
    pub fn searching(search: bool) -> Consult {
        match search {
            true => Consult::Search,
            false => Consult::WhenAsked,
        }
    }
}

/// What the server answers from.
pub struct Backend<'a> {
    /// A history to answer one request with: with the search index as the request consults
    /// it; and whether items say where their lines are (a verbose answer).
    pub history: &'a dyn Fn(Consult, bool) -> Result<History, HistoryError>,
    /// Whether a search that read sessions the index does not hold should update it.
    pub wants_index: &'a dyn Fn(Option<&history_core::Coverage>) -> bool,
    /// Starts the background index update.
    pub start_index: &'a dyn Fn(),
    /// The budget of one whole response, in bytes.
    pub budget: usize,
    /// The text printer answers start from (its recipes become tool calls).
    pub text: &'a Text,
    /// The form every answer takes, whatever the client (`NOTESOUP_MCP_CONTENT`); `None`: by
    /// the client ([`Content::for_client`]).
    pub content: Option<Content>,
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

/// One connection's state: the negotiated revision and the client's name.
pub struct Server<'a> {
    backend: &'a Backend<'a>,
    version: Option<&'static str>,
    client: Option<String>,
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
            client: None,
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
        self.client = params
            .get("clientInfo")
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
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

    /// The form this connection's answers take.
    fn content(&self) -> Content {
        if !self.structured() {
            return Content::Text;
        }
        self.backend
            .content
            .unwrap_or_else(|| Content::for_client(self.client.as_deref()))
    }

    fn call(&mut self, params: &Map<String, Value>, id: &Value) -> Result<String, RpcError> {
        let mut name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((INVALID_PARAMS, "tools/call needs the tool's name".into()))?;
        let mut arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return Err((INVALID_PARAMS, "arguments must be an object".into())),
        };
        // A structured recipe passed whole (`{"history_list": {…}}`) is that call.
        let whole = match arguments.iter().next() {
            Some((tool, Value::Object(inner))) if arguments.len() == 1 => TOOLS
                .iter()
                .copied()
                .find(|t| *t == tool.as_str())
                .map(|t| (t, inner.clone())),
            _ => None,
        };
        if let Some((tool, inner)) = whole {
            name = tool;
            arguments = inner;
        }
        // The page fits the budget that the response's frame leaves.
        let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":}}", compact(id));
        let content = self.content();
        let answer = match name {
            "history_list" => self.list(&arguments, frame.len(), content),
            "history_read" => self.read(&arguments, frame.len(), content),
            "history_find" => self.find(&arguments, frame.len(), content),
            _ => return Err((INVALID_PARAMS, format!("unknown tool: {name}"))),
        };
        Ok(answer.unwrap_or_else(|e| self.render(content, false, Map::new()).error(&e)))
    }

    /// The renderer of one answer: its form, whether it is verbose, and the arguments every
    /// recipe on it repeats (the budget and verbosity it was asked with).
    fn render(&self, content: Content, verbose: bool, extra: Map<String, Value>) -> Mcp {
        let mut text = self.backend.text.clone();
        text.show_path = verbose;
        text.calls = Some(extra.clone());
        Mcp {
            content,
            verbose,
            text,
            extra,
            hint: None,
        }
    }

    /// The page budget and the renderer of a call: `budget` (the whole answer's bytes, kept
    /// between [`history_core::MIN_BUDGET`] and the server's budget) less the response's frame,
    /// and `verbose`.
    fn setup(
        &self,
        args: &Arguments<'_>,
        frame: usize,
        content: Content,
    ) -> Result<(usize, Mcp), HistoryError> {
        let verbose = args.flag("verbose")?;
        let most = self.backend.budget.max(history_core::MIN_BUDGET);
        let asked = args.number("budget")?.map(|b| {
            usize::try_from(b)
                .unwrap_or(usize::MAX)
                .clamp(history_core::MIN_BUDGET, most)
        });
        let total = asked.unwrap_or(most);
        let budget = total.saturating_sub(frame).max(history_core::MIN_BUDGET);
        let mut extra = Map::new();
        if let Some(b) = asked {
            extra.insert("budget".into(), b.into());
        }
        if verbose {
            extra.insert("verbose".into(), true.into());
        }
        Ok((budget, self.render(content, verbose, extra)))
    }

    fn list(
        &mut self,
        arguments: &Map<String, Value>,
        frame: usize,
        content: Content,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, LIST_PARAMS)?;
        let (budget, mut render) = self.setup(&args, frame, content)?;
        let sessions = args.flag("sessions")?;
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
            sessions,
            format: None,
            context: None,
        };
        let req = crate::request::list_request(&list, budget, &crate::request::Times::utc())?;
        let search = req.is_search();
        let history = (self.backend.history)(Consult::searching(search), render.verbose)?;
        if sessions {
            let page = history.sessions(&req, &render)?;
            self.index_if_stale(Some(&page.coverage));
            return Ok(render.sessions(&page));
        }
        let mut page = history.list(&req, &render)?;
        self.index_if_stale(page.coverage.as_ref());
        // Nothing in the current session: what every session holds, and the call that lists it.
        if page.implicit && search && page.items.is_empty() && page.folded_after.is_none() {
            let here = page.session.clone().unwrap_or_default();
            let (said, hint) = elsewhere(&history, &req, arguments, &here);
            // It says which session that was: the notice that named it would only repeat it.
            page.notice = Some(match page.notice.take() {
                Some(n) if !n.starts_with("listing the current session") => format!("{n}; {said}"),
                _ => said,
            });
            page.resume = None;
            render.hint = hint;
        }
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
        frame: usize,
        content: Content,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, FIND_PARAMS)?;
        let (budget, render) = self.setup(&args, frame, content)?;
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
        let page = (self.backend.history)(Consult::Search, render.verbose)?.find(&req, &render)?;
        self.index_if_stale(Some(&page.coverage));
        Ok(render.find(&page))
    }

    fn read(
        &mut self,
        arguments: &Map<String, Value>,
        frame: usize,
        content: Content,
    ) -> Result<String, HistoryError> {
        let args = Arguments::new(arguments, READ_PARAMS)?;
        let (budget, render) = self.setup(&args, frame, content)?;
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
            no_pager: true,
        };
        let req = crate::request::read_request(&read, budget);
        let page =
            (self.backend.history)(Consult::WhenAsked, render.verbose)?.read(&req, &render)?;
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

/// The tools, by name.
const TOOLS: [&str; 3] = ["history_list", "history_find", "history_read"];

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
    "sessions",
    "budget",
    "verbose",
];
const READ_PARAMS: &[&str] = &[
    "session",
    "seq",
    "part",
    "offset_chars",
    "budget",
    "verbose",
];

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
    "budget",
    "verbose",
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

/// The MCP rendering of a page: one tool result that carries the page once, in the form of
/// [`Content`]. What it measures is what it sends, so the core fits the whole result to the
/// budget.
pub struct Mcp {
    /// The form of the result.
    content: Content,
    /// Every field of every item, as the CLI's `--json` has them.
    verbose: bool,
    /// The text printer, its recipes tool calls.
    text: Text,
    /// The arguments every recipe repeats (budget, verbose).
    extra: Map<String, Value>,
    /// A next step the page ends with besides its recipes: its name and arguments (the call
    /// that searches every session when the current one had nothing).
    hint: Option<Step>,
}

/// A next step a page ends with: its name and the arguments of its call.
type Step = (&'static str, Map<String, Value>);

/// A string's bytes inside a JSON string literal.
fn escaped(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

/// The keys under which pages hold recipes.
const RECIPES: [&str; 9] = [
    "older",
    "newer",
    "expand",
    "next",
    "neighborhood",
    "read",
    "list",
    "more",
    "everywhere",
];

/// What an item says only once per session in a compact answer.
const PER_SESSION: [&str; 8] = [
    "cwd",
    "git_branch",
    "title",
    "parent",
    "prompt",
    "resume",
    "session_events",
    "last_activity",
];

/// What a compact answer leaves out of an item: where its bytes are (`verbose` gives them).
const LOCATION: [&str; 4] = ["path", "line", "byte_offset", "byte_len"];

/// `{key: value}`.
fn one(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.into(), value);
    Value::Object(map)
}

/// The tool a recipe's arguments are a call of.
fn tool_for(arguments: &Map<String, Value>) -> &'static str {
    match (
        arguments.contains_key("seq"),
        arguments.contains_key("text"),
    ) {
        (true, _) => "history_read",
        (false, true) => "history_find",
        (false, false) => "history_list",
    }
}

/// A page's JSON made compact: recipes as `{tool: arguments}`, items cut to what a model goes
/// on, and what they said of their sessions gathered once per session into `sessions` (unless
/// `inline`: the page's entries are sessions already and say it themselves).
struct Slim<'a> {
    verbose: bool,
    extra: &'a Map<String, Value>,
    inline: bool,
    sessions: Map<String, Value>,
}

impl Slim<'_> {
    fn value(&mut self, v: &mut Value) {
        match v {
            Value::Object(o) => self.object(o),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            _ => {}
        }
    }

    fn object(&mut self, o: &mut Map<String, Value>) {
        for key in RECIPES {
            if let Some(Value::Object(arguments)) = o.get_mut(key) {
                let mut arguments = std::mem::take(arguments);
                for (k, v) in self.extra {
                    arguments.entry(k.clone()).or_insert_with(|| v.clone());
                }
                let tool = tool_for(&arguments);
                o.insert(key.into(), one(tool, Value::Object(arguments)));
            }
        }
        let item = o.contains_key("seq") && o.contains_key("role") && o.contains_key("text");
        let entry = !item && o.contains_key("session") && o.contains_key("hits");
        for (k, child) in o.iter_mut() {
            if !RECIPES.contains(&k.as_str()) {
                self.value(child);
            }
        }
        if self.verbose {
            return;
        }
        if entry {
            o.shift_remove("path");
        }
        if item {
            *o = self.item(std::mem::take(o));
        }
    }

    /// An item with what a model goes on first (session, seq, part, role, tool, time, text),
    /// `truncated` and `on_active_branch` only where they say something, and without where its
    /// bytes are and what its session says.
    fn item(&mut self, mut o: Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for key in ["session", "seq", "part", "role", "tool"] {
            if let Some(v) = o.shift_remove(key).filter(|v| !v.is_null()) {
                out.insert(key.into(), v);
            }
        }
        out.insert(
            "time".into(),
            o.shift_remove("timestamp").unwrap_or(Value::Null),
        );
        if let Some(text) = o.shift_remove("text") {
            out.insert("text".into(), text);
        }
        if o.shift_remove("truncated") == Some(Value::Bool(true)) {
            out.insert("truncated".into(), true.into());
        }
        if o.shift_remove("on_active_branch") == Some(Value::Bool(false)) {
            out.insert("on_active_branch".into(), false.into());
        }
        for key in LOCATION.iter().chain(&["kind", "visible"]) {
            o.shift_remove(*key);
        }
        let mut about = Map::new();
        for key in PER_SESSION {
            if let Some(v) = o.shift_remove(key).filter(|v| !v.is_null()) {
                about.insert(key.into(), v);
            }
        }
        if !self.inline && !about.is_empty() {
            if let Some(session) = out.get("session").and_then(Value::as_str) {
                let known = self
                    .sessions
                    .entry(session.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(known) = known {
                    for (k, v) in about {
                        known.entry(k).or_insert(v);
                    }
                }
            }
        }
        out.extend(o);
        out
    }
}

impl Mcp {
    /// `value` made compact (unless verbose), its sessions gathered: the page, and what its
    /// sessions say (each once).
    fn slim(&self, value: &mut Value, inline: bool) -> Map<String, Value> {
        let mut slim = Slim {
            verbose: self.verbose,
            extra: &self.extra,
            inline,
            sessions: Map::new(),
        };
        slim.value(value);
        slim.sessions
    }

    /// A page's structured content: compact, its sessions said once, after the fields that
    /// name the page and before its items.
    fn page<T: serde::Serialize>(&self, page: &T, inline: bool) -> Value {
        let mut value = serde_json::to_value(page).unwrap_or(Value::Null);
        let sessions = self.slim(&mut value, inline);
        let Value::Object(fields) = value else {
            return value;
        };
        let mut out = Map::new();
        let mut sessions = (!sessions.is_empty()).then_some(sessions);
        for (k, v) in fields {
            if matches!(k.as_str(), "items" | "item" | "events") {
                if let Some(s) = sessions.take() {
                    out.insert("sessions".into(), Value::Object(s));
                }
            }
            out.insert(k, v);
        }
        if let Some(s) = sessions {
            out.insert("sessions".into(), Value::Object(s));
        }
        if let Some((name, arguments)) = &self.hint {
            let mut arguments = arguments.clone();
            for (k, v) in &self.extra {
                arguments.entry(k.clone()).or_insert_with(|| v.clone());
            }
            let tool = tool_for(&arguments);
            out.insert((*name).into(), one(tool, Value::Object(arguments)));
        }
        Value::Object(out)
    }

    /// What one element of a page costs in structured content: itself made compact, and what
    /// it says of its session (counted with every element, which can only overstate it).
    fn element<T: serde::Serialize>(&self, element: &T, inline: bool) -> String {
        let mut value = serde_json::to_value(element).unwrap_or(Value::Null);
        let sessions = self.slim(&mut value, inline);
        let mut cost = compact(&value) + ",";
        for (k, v) in sessions {
            cost.push_str(&compact(&one(&k, v)));
        }
        cost
    }

    /// The hint as a line of text.
    fn hint_line(&self) -> String {
        match &self.hint {
            Some((name, arguments)) => {
                let mut arguments = arguments.clone();
                for (k, v) in &self.extra {
                    arguments.entry(k.clone()).or_insert_with(|| v.clone());
                }
                format!(
                    "→ {}: {}({})\n",
                    name.replace('_', " "),
                    tool_for(&arguments),
                    compact(&Value::Object(arguments))
                )
            }
            None => String::new(),
        }
    }

    /// The result: in text, `text` (the rendered page); structured, `structured` with a line
    /// that says so, `what` the page holds.
    fn result(
        &self,
        text: impl FnOnce() -> String,
        structured: impl FnOnce() -> Value,
        what: String,
    ) -> String {
        let mut result = Map::new();
        match self.content {
            Content::Text => {
                result.insert(
                    "content".into(),
                    json!([{ "type": "text", "text": text() }]),
                );
            }
            Content::Structured => {
                let said = format!("{what} (the page is in structuredContent)");
                result.insert("content".into(), json!([{ "type": "text", "text": said }]));
                result.insert("structuredContent".into(), structured());
            }
        }
        result.insert("isError".into(), Value::Bool(false));
        compact(&Value::Object(result))
    }

    /// An error as a tool result: its line of text in the tools' terms (what Claude Code shows
    /// of an error), and in structured form its JSON error object.
    pub fn error(&self, error: &HistoryError) -> String {
        let text = tool_terms(self.text.error(error).trim_end());
        let mut result = Map::new();
        result.insert("content".into(), json!([{ "type": "text", "text": text }]));
        if self.content == Content::Structured {
            let mut structured: Value =
                serde_json::from_str(&Json.error(error)).unwrap_or(Value::Null);
            if let Some(Value::String(m)) = structured.pointer_mut("/error/message") {
                *m = tool_terms(m);
            }
            result.insert("structuredContent".into(), structured);
        }
        result.insert("isError".into(), Value::Bool(true));
        compact(&Value::Object(result))
    }
}

/// A notice or an error message in the tools' terms rather than the command line's.
fn tool_terms(said: &str) -> String {
    let mut out = said.to_string();
    for (cli, tools) in [
        ("--session '*'", "session: \"*\""),
        ("--sessions", "sessions: true"),
        ("--before-seq", "before_seq"),
        ("--after-seq", "after_seq"),
        ("--offset-chars", "offset_chars"),
        ("--after-rank", "after_rank"),
        ("--session", "session"),
        ("--query", "query"),
        ("--role", "roles"),
        ("--since", "since"),
        ("--until", "until"),
        ("--before", "before"),
        ("--after", "after"),
        ("--limit", "limit"),
        ("--budget", "budget"),
        ("--seq", "seq"),
        ("--from", "from"),
        ("--cwd", "cwd"),
    ] {
        out = out.replace(cli, tools);
    }
    out
}

/// `notice` in the tools' terms.
fn said(notice: &Option<String>) -> Option<String> {
    notice.as_deref().map(tool_terms)
}

/// How many of `n` things: `1 hit`, `2 hits`.
fn count(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// What every session holds for a search that found nothing in the current one, counted as the
/// sessions view counts (from the index where it is fresh; three sessions summed up at most),
/// and the call that lists it; or, when no session has a match, the ranked search to try.
fn elsewhere(
    history: &History,
    req: &history_core::ListRequest,
    arguments: &Map<String, Value>,
    here: &str,
) -> (String, Option<Step>) {
    const SUMMED: usize = 3;
    let everywhere = history_core::ListRequest {
        session: Some("*".into()),
        limit: SUMMED,
        budget: history_core::DEFAULT_BUDGET,
        before: None,
        after: None,
        before_seq: None,
        after_seq: None,
        ..req.clone()
    };
    let mut call = arguments.clone();
    for key in [
        "before_seq",
        "after_seq",
        "before",
        "after",
        "budget",
        "verbose",
    ] {
        call.remove(key);
    }
    call.insert("session".into(), "*".into());
    let found = match history.sessions(&everywhere, &Json) {
        Ok(page) => page,
        Err(_) => {
            let said = format!("no match in the current session {here}; pass session: \"*\" to search every session");
            return (said, Some(("every_session", call)));
        }
    };
    let hits: usize = found.sessions.iter().map(|s| s.hits).sum();
    let hits = match found.sessions.iter().any(|s| s.more_hits) {
        true => format!("{hits}+ hits"),
        false => count(hits, "hit"),
    };
    if found.sessions.is_empty() {
        let words = req.queries.join(" ");
        let said = format!("no match in the current session {here}, nor in any other (session: \"*\"); for what happened rather than the exact words, try history_find");
        let mut find = Map::new();
        find.insert("text".into(), words.into());
        return (said, Some(("find", find)));
    }
    let latest = found
        .sessions
        .last()
        .map(|s| s.session.clone())
        .unwrap_or_default();
    let said = match found.has_older {
        false => format!(
            "no match in the current session {here}; session: \"*\" has {hits} in {} (the latest in {latest})",
            count(found.sessions.len(), "session"),
        ),
        true => format!(
            "no match in the current session {here}; session: \"*\" has {hits} in the {SUMMED} sessions with the latest hits (the latest in {latest}) and more in others; sessions: true lists them",
        ),
    };
    (said, Some(("every_session", call)))
}

impl Render for Mcp {
    fn item(&self, item: &history_core::Item, implicit: bool) -> String {
        match self.content {
            Content::Text => escaped(&self.text.item(item, implicit)),
            Content::Structured => self.element(item, false),
        }
    }

    fn list(&self, page: &ListPage) -> String {
        let mut page = page.clone();
        page.notice = said(&page.notice);
        let what = format!(
            "{}{}{}",
            count(page.items.len(), "item"),
            if page.has_older { ", more older" } else { "" },
            if page.has_newer { ", more newer" } else { "" },
        );
        self.result(
            || self.text.list(&page) + &self.hint_line(),
            || self.page(&page, false),
            what,
        )
    }

    fn read(&self, page: &ReadPage) -> String {
        let mut page = page.clone();
        page.notice = said(&page.notice);
        let what = match &page.item {
            Some(item) => format!(
                "{} seq {} part {}",
                page.session, item.event.seq, item.event.part
            ),
            None => "no event there".to_string(),
        };
        self.result(|| self.text.read(&page), || self.page(&page, false), what)
    }
}

impl RenderSessions for Mcp {
    fn session(&self, session: &SessionMatch) -> String {
        match self.content {
            Content::Text => escaped(&RenderSessions::session(&self.text, session)),
            Content::Structured => self.element(session, true),
        }
    }

    fn sessions(&self, page: &SessionsPage) -> String {
        let mut page = page.clone();
        page.notice = said(&page.notice);
        let mut what = count(page.sessions.len(), "session");
        if page.has_older {
            what.push_str(", more with older hits");
        }
        self.result(
            || {
                let mut s = self.text.sessions(&page);
                if page.sessions.is_empty() && !page.no_sessions {
                    s.push_str("no matching sessions\n");
                }
                s
            },
            || self.page(&page, true),
            what,
        )
    }
}

impl RenderFind for Mcp {
    fn found_session(&self, session: &FoundSession) -> String {
        match self.content {
            Content::Text => escaped(&self.text.found_session(session)),
            Content::Structured => self.element(session, true),
        }
    }

    fn found_event(&self, hit: &FoundHit) -> String {
        match self.content {
            Content::Text => escaped(&self.text.found_event(hit)),
            Content::Structured => self.element(hit, false),
        }
    }

    fn find(&self, page: &FindPage) -> String {
        let mut page = page.clone();
        page.notice = said(&page.notice);
        let shown =
            page.sessions.as_ref().map_or(0, Vec::len) + page.events.as_ref().map_or(0, Vec::len);
        let what = match page.sessions.is_some() {
            true => count(shown, "session"),
            false => count(shown, "event"),
        };
        let inline = page.sessions.is_some();
        self.result(
            || {
                let mut s = String::new();
                if let Some(n) = &page.notice {
                    s.push_str(&format!("notice: {n}\n\n"));
                }
                s.push_str(&self.text.find(&page));
                if page.matched == 0 && !page.no_sessions {
                    s.push_str("nothing matched: no session holds these words (try other words, or history_list with query for an exact string)\n");
                }
                s
            },
            || self.page(&page, inline),
            what,
        )
    }
}

/// What `initialize` tells the client the server is for.
const INSTRUCTIONS: &str = "Read-only access to the local session transcripts of Claude Code, \
Codex and pi: history_list browses one session, searches many (session: \"*\") or shows the \
recent sessions; history_read shows one event in full; history_find ranks sessions by how well \
they match a description in plain words. An omitted session is your current one: to recall an \
earlier session, pass session: \"*\". Answers end with recipes, each the tool call to make \
next: history_list({...}) or, in structured answers, {\"history_list\": {...}}.";

const LIST_DESCRIPTION: &str = "\
List, search or browse local AI coding-agent session transcripts (Claude Code, Codex, pi). \
Read-only.

session: omitted, your current session only (every session when none is known). To find \
something from an earlier session, pass session: \"*\" (or claude:*, codex:*, pi:*). An id or \
unique prefix, optionally qualified (claude:…), names one session; ambiguous prefixes fail with \
ambiguous_session and up to five candidates: pick one, never guess.

One session: a page of its dialogue, newest end first (oldest with after_seq); runs of tool and \
context events fold into one line with an expand recipe. query or roles list matching events of \
every role instead. Many sessions, no query: one event per recent session. With query: hits \
from every role, merged by time, limit counted from the newest. sessions: true (with query) \
gives one entry per matching session instead (hit count, first and last hit, best hit and the \
history_read call for it): the cheapest way to learn which session to open.

query is literal, case-insensitive; a list matches any. roles: user, assistant, tool, \
context. since (inclusive), until (exclusive): RFC 3339, YYYY-MM-DD, today, yesterday or an age \
(3h, 7d, 6mo). seqs are per session: keep the session with its seq.

Answers end with recipes, each the call to make next, with every argument that shaped the page: \
text shows → older: history_list({\"session\": …, \"before_seq\": 40}); structured content \
{\"history_list\": {…}}. The answer fits budget bytes (default and most 32 KiB): long texts are \
cut; history_read gives all of one. Items carry session, seq, part, role, time and text; each \
session's directory, branch, title and resume command come once; verbose: true adds every \
field (file paths, byte spans).";

const READ_DESCRIPTION: &str = "\
Read one event of a local AI coding-agent session (Claude Code, Codex, pi) in full: its role, \
time, text, and for a tool call the tool and its input. Read-only.

session: an id or unique prefix, optionally qualified (claude:, codex:, pi:); omitted, your \
current session. A wildcard (*) is refused with invalid_session: take session and seq from a \
history_list or history_find hit (its read recipe is this call). seq is the event's number \
within that session; part picks one of several events on the same line (default 0).

A text too long for the answer's budget (default and most 32 KiB) is cut and next_offset_chars \
says where it stops: make the → continue recipe's call (offset_chars set to it) for the rest. \
The → neighborhood recipe is the history_list call that shows the events around it. verbose: \
true adds the file path and byte span.";

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
the session's hits), resume (the command that reopens it): recipes are the calls to make. \
events: true ranks events instead. session, cwd, roles, since, until narrow the scope as in \
history_list. For the next page make the more recipe's call (it carries after_rank). explain: \
true adds each word's part of each score; budget and verbose as in history_list.";

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
    // A place of a search across sessions, as an older or newer recipe gives it.
    let place = |what: &str| {
        json!({
            "type": "object",
            "description": what,
            "properties": {
                "time": { "type": ["string", "null"], "description": "The hit's time, RFC 3339 (null: untimed)." },
                "session": { "type": "string", "description": "Its session, qualified (claude:…)." },
                "seq": { "type": "integer", "minimum": 0, "description": "Its seq." },
                "part": { "type": "integer", "minimum": 0, "description": "Its part." }
            },
            "required": ["session", "seq", "part"],
            "additionalProperties": false
        })
    };
    let budget = json!({
        "type": "integer",
        "minimum": history_core::MIN_BUDGET,
        "maximum": history_core::DEFAULT_BUDGET,
        "default": history_core::DEFAULT_BUDGET,
        "description": format!(
            "Bytes the whole answer may take, {} to {} (values outside are clamped to them).",
            history_core::MIN_BUDGET,
            history_core::DEFAULT_BUDGET
        ),
    });
    let verbose = json!({
        "type": "boolean",
        "default": false,
        "description": "Every field of every item: file path, line, byte span, kind; per-session fields on each item."
    });
    json!([
        {
            "name": "history_list",
            "title": "List, search or browse agent sessions",
            "description": LIST_DESCRIPTION,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "session": session("Omitted: your current session only (else *). \"*\": every session (pass it to recall an earlier session); claude:*, codex:*, pi:* one agent's; an id or unique prefix, optionally claude:/codex:/pi:-qualified, or a transcript file's path, one session."),
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
                    "before": place("Many sessions: only hits before this place, or with no query the sessions taken after it (from an older recipe)."),
                    "after": place("Many sessions: only hits after this place, or with no query the sessions taken before it (from a newer recipe)."),
                    "from": { "type": "string", "enum": ["newest", "oldest"], "description": "The end the page starts from." },
                    "limit": { "type": "integer", "minimum": 1, "default": history_core::DEFAULT_LIMIT, "description": "Items at most; folded runs do not count." },
                    "cwd": { "type": "string", "description": "Only sessions that ran in this directory or below it." },
                    "sessions": { "type": "boolean", "default": false, "description": "With query: one entry per matching session (hits counted up to 100, first/last hit, best hit and its history_read call) instead of the hits; an omitted session means every session here." },
                    "budget": budget,
                    "verbose": verbose
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
                    "explain": { "type": "boolean", "default": false, "description": "Add each word's part of each score." },
                    "budget": budget,
                    "verbose": verbose
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
                    "offset_chars": { "type": "integer", "minimum": 0, "default": 0, "description": "Start this many characters in (next_offset_chars of a cut read)." },
                    "budget": budget,
                    "verbose": verbose
                },
                "required": ["seq"],
                "additionalProperties": false
            },
            "annotations": read_only,
        }
    ])
}
